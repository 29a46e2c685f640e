/* trainpath report: reads result documents, never measures.
 *
 * The keystone is the metric row: every result document (net, coll, io,
 * step, plan, check) flattens into rows, each a metric name, its labels, a
 * value in a unit and, where the document has them, the statistics and the
 * histogram behind it. The history database, the baselines, the threshold
 * gate, the statistical diff, the fleet outliers and the Prometheus textfile
 * work on rows alone, so a metric is named once, here. The HTML report
 * (tp/html.h) reads its figures and latency histograms from the rows too,
 * and from the document what no row carries: what a run is (command, host,
 * configuration), per-step series, the plan's candidates and sweep, the
 * fits, the check findings, the fleet's matrices. docs/report.md lists every
 * metric. */
#ifndef TP_REPORT_H
#define TP_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "tp/error.h"
#include "tp/history.h"
#include "tp/judge.h"

/* ---- metric rows ---- */

/* Flatten one result document into a new array of rows:
 *   {"metric": "net.lat.p99",               dotted name, [a-z0-9_.]
 *    "labels": {"size": "8", "transport": "tcp"},   strings, sorted keys
 *    "key": "net.lat.p99{size=8,transport=tcp}",    metric + labels: unique
 *                                                   within a document
 *    "value": 41599.5, "unit": "ns",
 *    "better": "lower" | "higher" | null,           which way is good
 *    "stats": {"count": 5754, "mean": .., "stdev": ..} | absent,
 *    "histogram": <the document's histogram object> | absent,
 *    "histogram_scale": 0.5 | absent}   the histogram's values times this are
 *                                       the row's (net keeps round trips;
 *                                       its rows are one-way)
 * A failed run yields no rows but "run.ok" = 0. Unknown commands yield
 * "run.ok" only. Returns NULL (TP_ENOMEM) only when out of memory. */
json_t *tp_report_metrics(const json_t *doc, tp_error *err);

/* The provenance of a document as the history stores it:
 * {"command", "host", "started_utc", "tool_version", "kernel", "config_id"}: config_id
 * is a hash (FNV-1a, 64 bits) of the configuration, to tell comparable runs
 * apart. */
json_t *tp_report_provenance(const json_t *doc);

/* ---- result documents read back (src/report/docs.c) ---- */

/* Whether doc is a result document report can trust, as every reader
 * checks it before use (docs/report.md, "Documents refused"):
 *   - "schema" is exactly TP_RESULT_SCHEMA (another version is refused,
 *     saying which it claims);
 *   - "command" is one trainpath runs; "status" an object with "ok" true or
 *     false (and "code", "exit_code", "message", when there, a string, an
 *     integer, a string); "results" an object; "config" and "provenance",
 *     when there, objects;
 *   - what the command's metric reader reads has the type it reads (a
 *     number, not a string that spells one; an array where a list goes; a
 *     histogram that is one);
 *   - every row is in a unit trainpath writes, not negative, and under its
 *     unit's bound (1e10 s for a duration, 1 PB/s for a rate, ...).
 * Returns 0, or TP_EUSAGE with the first reason (no file name: the caller
 * says which document); TP_ENOMEM. */
int tp_report_check(const json_t *doc, tp_error *err);

/* Read a result document and check it (tp_report_check); TP_EUSAGE naming
 * the file and why when it is missing, not JSON, or not a sound trainpath
 * result document. */
int tp_report_load(const char *path, json_t **doc, tp_error *err);

/* the most documents one call reads */
#define TP_REPORT_MAX_DOCS 512

/* Read the result documents names[0..nnames) name: a file must be one
 * (tp_report_load); a folder gives every *.json regular file in it, in
 * name order, each of which must be a sound result document too, except
 * that a file that is JSON but does not claim to be one (no "schema"
 * "trainpath.result/...", not a "command" with "results": a facts
 * snapshot, report's own --json outputs) is passed over; files not named
 * *.json are not read. Each document gets "_file": the path it was read
 * from. On success *docs is a new array of *n >= 1 documents for
 * tp_report_docs_free. On error *docs is NULL and *n 0, and nothing is
 * kept: TP_EUSAGE naming every file refused and why ("N documents
 * refused: A: why; B: why", as many as 512 bytes hold), a folder that
 * cannot be read, more than TP_REPORT_MAX_DOCS documents, "no result
 * documents in NAME" when none was found; TP_ENOMEM. */
int tp_report_docs_load(const char *const *names, size_t nnames, json_t ***docs, size_t *n,
                        tp_error *err);

/* Free tp_report_docs_load's array and its n documents (NULL is fine). */
void tp_report_docs_free(json_t **docs, size_t n);

/* The metric rows of n documents in one new array, in order, each row with
 * "host": host when it is not NULL, else its document's provenance.host
 * (no "host" when the document names none). NULL (TP_ENOMEM) only when out
 * of memory. */
json_t *tp_report_rows(json_t *const *docs, size_t n, const char *host, tp_error *err);

/* ---- the report subcommands' work (src/report/run.c) ----
 *
 * Each starts from file names as `trainpath report` has them, reads them
 * with tp_report_docs_load and leaves the printing to the caller; errors
 * are those of the steps (reading, the history, the thresholds), each
 * naming its file. */

/* Add the documents named to the history at db (created when missing),
 * under batch (NULL: none), stopping at the first error. *added: how many
 * were not there already; *read: how many were read. */
int tp_report_add(const char *db, const char *const *names, size_t n, const char *batch,
                  size_t *added, size_t *read, tp_error *err);

/* The points of one metric or key in the history at db (opened read-only:
 * a missing file is TP_EUSAGE); *points as tp_history_series gives them. */
int tp_report_history(const char *db, const struct tp_history_filter *f, json_t **points,
                      tp_error *err);

/* The baseline of every key in the history at db (read-only); *baselines
 * as tp_history_baselines gives them. */
int tp_report_baselines(const char *db, const struct tp_history_scope *scope, json_t **baselines,
                        tp_error *err);

/* The gate of the thresholds file on the rows of the documents named (the
 * file is read first): tp_gate_eval's report, or NULL on error. */
json_t *tp_report_gate(const char *thresholds, const char *const *names, size_t n, tp_error *err);

/* The outcome of a gate that could not judge (a document or the
 * thresholds file refused): tp_gate_eval's report with code 3, status
 * "UNKNOWN", no results and "error": why. NULL only when out of memory. */
json_t *tp_report_gate_unknown(const char *why);

/* The diff of the documents at paths a (baseline) and b: tp_diff_docs's,
 * or NULL on error: TP_EUSAGE naming the file for a document refused
 * (tp_report_load), naming both when they are results of two commands,
 * naming the one that is the result of a failed run, and when the diff
 * compared no row but run.ok (the runs measured different sizes,
 * transports, ...). opts NULL: the defaults. */
json_t *tp_report_diff(const char *a, const char *b, const struct tp_diff_opts *opts,
                       tp_error *err);

/* The fleet judgement of the JSON Lines files named ("-": stdin):
 * tp_fleet_judge's, or NULL on error. */
json_t *tp_report_fleet(const char *const *files, size_t n, tp_error *err);

/* The HTML report of the documents named, written to out (tp_html_report);
 * *ndocs: how many documents it shows. */
int tp_report_html(const char *const *names, size_t n, const char *out, size_t *ndocs,
                   tp_error *err);

/* The Prometheus textfile of the documents' rows, written to out
 * (tp_prom_write), every row's host label host when not NULL, else its
 * document's. */
int tp_report_prometheus(const char *const *names, size_t n, const char *out, const char *host,
                         tp_error *err);

#endif
