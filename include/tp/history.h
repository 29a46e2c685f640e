/* trainpath history: every result document, flattened into metric rows
 * (tp_report_metrics), kept in one SQLite file so that a run can be set
 * against the runs before it: the history of one metric over time, and the
 * baseline of every metric of a configuration on a host.
 *
 * The file is a plain SQLite database marked as ours (PRAGMA application_id
 * = TP_HISTORY_APP_ID) with its schema version in PRAGMA user_version. The
 * tables, the duplicate rule and the baseline rule are in docs/report.md,
 * "History and baselines".
 *
 * A handle is used by one thread at a time; several processes may share a
 * file (writers wait up to TP_HISTORY_BUSY_MS for each other). */
#ifndef TP_HISTORY_H
#define TP_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "tp/error.h"

/* "tphi": what PRAGMA application_id says in a trainpath history file */
#define TP_HISTORY_APP_ID 0x74706869
/* the schema this code writes, in PRAGMA user_version */
#define TP_HISTORY_SCHEMA 1
/* how long a writer waits for another process's transaction */
#define TP_HISTORY_BUSY_MS 10000
/* baselines are taken over this many most recent runs unless told */
#define TP_HISTORY_BASELINE_RUNS 20

typedef struct tp_history tp_history;

/* ---- open and close ---- */

/* Open the history at path for reading and writing, creating the file and
 * its schema when the file is missing or empty. On success *h is a new
 * handle for tp_history_close. Errors, each naming path and carrying
 * SQLite's message: TP_EUSAGE when the file is not SQLite, is the database
 * of another application, or has a schema newer than this code knows;
 * TP_ESYS when it cannot be created, read or written; TP_ETIMEOUT when
 * another process held it locked past TP_HISTORY_BUSY_MS. On error *h is
 * NULL and an existing file is left as it was. */
int tp_history_open(const char *path, tp_history **h, tp_error *err);

/* As tp_history_open, but read-only and never creating anything: a missing
 * file is TP_EUSAGE naming it (the report commands, where a mistyped path
 * must not leave an empty database behind). Adding through such a handle
 * fails with TP_EUSAGE. */
int tp_history_open_readonly(const char *path, tp_history **h, tp_error *err);

/* Close h (NULL is allowed). Everything added is already committed. */
void tp_history_close(tp_history *h);

/* The path h was opened with. */
const char *tp_history_path(const tp_history *h);

/* ---- adding ---- */

struct tp_history_added {
    int64_t run_id; /* the run's id: the new one, or the one already there */
    bool added;     /* false: the document was there already, nothing changed */
    size_t metrics; /* metric rows stored (0 for a duplicate) */
};

/* Add one result document: one row in `runs` (its provenance, file — the
 * path it was read from, may be NULL — and batch — a caller-chosen string
 * grouping the documents of one `validate` run, may be NULL) and one row in
 * `metrics` per tp_report_metrics row, in one transaction: all or nothing.
 *
 * Duplicates are ignored, not refused: a document whose command, host,
 * started_utc and config_id are already in the history adds nothing and
 * returns 0 with out->added false and out->run_id the existing run, so
 * re-importing a results folder is harmless. out may be NULL.
 *
 * Errors: TP_EUSAGE naming file (or "result document") when doc has no
 * command or no parseable started_utc, or h is read-only; TP_ESYS or
 * TP_ETIMEOUT, naming the database, when SQLite fails; TP_ENOMEM. On error
 * the history is unchanged. */
int tp_history_add_run(tp_history *h, const json_t *doc, const char *file, const char *batch,
                       struct tp_history_added *out, tp_error *err);

/* tp_history_add_run without the outcome. */
int tp_history_add(tp_history *h, const json_t *doc, const char *file, const char *batch,
                   tp_error *err);

/* ---- reading ---- */

/* Which points of the history to read. Zero-initialise and set what you need. */
struct tp_history_filter {
    const char *key;       /* exact key "net.lat.latency.p99{size=8,transport=tcp}";
                              when set, metric and labels are not used */
    const char *metric;    /* or a metric name "net.lat.latency.p99" ... */
    const json_t *labels;  /* ... whose labels include all of these
                              {"name": "string value"}; NULL: any labels */
    const char *host;      /* NULL: any host */
    const char *config_id; /* NULL: any configuration */
    size_t last;           /* 0: every point; n: only the n most recent */
};

/* The history of one metric: a new array, oldest first (by started_utc,
 * then by the order added), of
 *   {"run_id", "started_utc", "host", "config_id", "key", "value", "unit"}
 * One of f->key or f->metric must be set. A metric name matches every key
 * of that name, so several series may interleave; "key" tells them apart.
 * No match is an empty array, not an error. Errors: TP_EUSAGE when neither
 * key nor metric is given or labels is not an object of strings, and when
 * a damaged file's index hands back a row of another key or metric (the
 * message says how to rebuild it); TP_ESYS, TP_ETIMEOUT naming the
 * database; TP_ENOMEM. */
int tp_history_series(tp_history *h, const struct tp_history_filter *f, json_t **points,
                      tp_error *err);

/* The runs of one batch (batch NULL: every run), oldest first:
 *   {"run_id", "batch", "command", "host", "started_utc", "tool_version",
 *    "kernel", "config_id", "ok", "file", "metrics"} (metrics: rows stored).
 * Errors as tp_history_series. */
int tp_history_runs(tp_history *h, const char *batch, json_t **runs, tp_error *err);

/* ---- baselines ---- */

/* Which runs a baseline is taken over. */
struct tp_history_scope {
    const char *host;      /* NULL: every host */
    const char *config_id; /* NULL: every configuration, each its own baseline */
    size_t runs;           /* the most recent runs carrying the key;
                              0: TP_HISTORY_BASELINE_RUNS */
};

struct tp_baseline {
    double value;   /* the (trimmed) mean; NAN when samples == 0 */
    size_t samples; /* values found (at most scope->runs) */
    size_t kept;    /* values the mean is over */
    double min;     /* smallest and largest value kept */
    double max;
    char rule[64]; /* "trimmed mean 10 %, 14 of 18 samples", "mean, 3 samples" */
};

/* The baseline rule, on its own: sorts values[0..n) in place and fills out.
 * From 5 samples on, drop the lowest and highest k = max(1, round(n/10))
 * and average the rest; below 5, the plain mean of all. n == 0 gives
 * value NAN and samples 0. */
void tp_history_trim(double *values, size_t n, struct tp_baseline *out);

/* The baseline of one key over the scope's most recent runs (by
 * started_utc) that carry it. A key never seen is not an error: out gets
 * samples 0 and value NAN. scope NULL: every host and configuration, the
 * default number of runs. Errors: TP_ESYS, TP_ETIMEOUT naming the
 * database; TP_ENOMEM. */
int tp_history_baseline(tp_history *h, const char *key, const struct tp_history_scope *scope,
                        struct tp_baseline *out, tp_error *err);

/* Every baseline in scope, as a new array sorted by config_id then key:
 *   {"key", "metric", "labels", "unit", "better", "value", "samples", "kept",
 *    "min", "max", "rule", "config_id"}
 * metric, labels, unit and better are those of the most recent run. Errors
 * as tp_history_baseline. */
int tp_history_baselines(tp_history *h, const struct tp_history_scope *scope, json_t **out,
                         tp_error *err);

/* ---- printing ---- */

/* Print points (tp_history_series's) to f: "# WHAT in DB: N points", then
 * a line a point: its start time, host, value in its unit, the change from
 * the first point in percent, its key. */
void tp_history_print_series(FILE *f, const char *what, const char *db, const json_t *points);

/* Print baselines (tp_history_baselines's) to f, a line each: key, value in
 * its unit, the rule it was taken by. */
void tp_history_print_baselines(FILE *f, const json_t *baselines);

#endif
