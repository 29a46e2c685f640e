/* trainpath report: judgements on metric rows (tp/report.h).
 *
 *   gate   thresholds from a YAML file, PASS/FAIL per matching row, a
 *          threshold that matches nothing fails as "missing", Nagios codes
 *   diff   baseline A against candidate B, key by key: the change and
 *          whether it is significant (Mann-Whitney U on histograms, Welch's
 *          t on means), regressions named with how much and how sure
 *   fleet  the same metric across hosts: robust z (median, MAD); and the
 *          pairwise matrix between nodes: a slow node versus a slow link
 *   prom   rows as a node_exporter textfile, written atomically
 *
 * Rows are those of tp_report_metrics. A row may also carry "host" (a
 * string): the host whose document it came from. tp_fleet_add_doc sets it;
 * every function here reads it where rows from several hosts meet (the
 * gate and the diff name it, the fleet groups by it, prom makes it the
 * "host" label). docs/report.md is the user's side of this file. */
#ifndef TP_JUDGE_H
#define TP_JUDGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "tp/error.h"
#include "tp/hist.h"

/* "41.6 us", "8.1 GB/s", "0.125", "12 $": value in its row unit, in words,
 * with sig significant digits (3 when 0; at most 17). ns and s print as
 * ns/us/ms/s, B/s as GB/s (1e9), anything else as the number then the unit.
 * Returns buf. Used for every value the gate, the diff and the fleet print. */
const char *tp_gate_fmt(double value, const char *unit, int sig, char *buf, size_t cap);

/* ---- threshold gates ---- */

/* Nagios codes, as `check` uses them. */
enum tp_gate_code {
    TP_GATE_OK = 0,
    TP_GATE_WARNING = 1,
    TP_GATE_CRITICAL = 2,
    TP_GATE_UNKNOWN = 3
};

typedef struct tp_gate tp_gate; /* the thresholds of one file */

/* Read a thresholds file (docs/report.md, "Threshold gates"):
 *     thresholds:
 *       - {metric: coll.busbw, labels: {op: allreduce}, min: 10GB/s, severity: warning}
 * Every error reads "FILE:LINE:COL: KEY.PATH: message" (tp_yaml); unknown
 * keys are refused. On success *out is a new gate for tp_gate_free; on error
 * returns TP_EUSAGE (TP_ENOMEM) and *out is NULL. */
int tp_gate_load(const char *path, tp_gate **out, tp_error *err);

/* Free g (NULL is fine). */
void tp_gate_free(tp_gate *g);

/* How many thresholds g holds (at least 1). */
size_t tp_gate_size(const tp_gate *g);

/* Judge rows (an array of rows, from one document or many) by g. Returns a
 * new report:
 *   {"code": 0..3, "status": "OK" | "WARNING" | "CRITICAL" | "UNKNOWN",
 *    "thresholds": n, "pass": n, "fail": n, "missing": n, "unusable": n,
 *    "results": [{"threshold": i, "line": L, "metric", "labels", "severity",
 *                 "status": "PASS" | "FAIL" | "MISSING" | "UNUSABLE",
 *                 "key", "host"?, "value", "unit", "min"?, "max"? (the
 *                 limits in the row's unit), "says": "coll.busbw{...} 8.1
 *                 GB/s < 10 GB/s (min)"}, ...]}
 * one result per (threshold, matching row), or one MISSING result for a
 * threshold that matches no row. The code: 2 when a critical threshold
 * fails or is missing, else 1 when a warning one does, else 0; 3 overrides
 * them when a limit cannot be compared with a row (a duration against a
 * row in B/s): the file does not fit the data. NULL (TP_ENOMEM) only when
 * out of memory. */
json_t *tp_gate_eval(const tp_gate *g, const json_t *rows, tp_error *err);

/* Print report to f: a Nagios-style first line ("GATE CRITICAL: 2 of 5
 * thresholds fail (1 missing)"), then a line per FAIL, MISSING and UNUSABLE
 * result, and per PASS too when all is true. */
void tp_gate_print(FILE *f, const json_t *report, bool all);

/* ---- diff ---- */

#define TP_DIFF_ALPHA 0.01      /* significance level */
#define TP_DIFF_MIN_EFFECT 0.02 /* smallest relative change that counts */

struct tp_diff_opts {
    double alpha;      /* 0: TP_DIFF_ALPHA */
    double min_effect; /* relative, 0.02 = 2 %; 0: TP_DIFF_MIN_EFFECT; < 0: none */
};

/* A test's outcome. */
struct tp_diff_stat {
    double p;      /* two-sided p-value */
    double stat;   /* z (Mann-Whitney, continuity-corrected) or t (Welch) */
    double df;     /* Welch's degrees of freedom; 0 for Mann-Whitney */
    double p_b_gt; /* Mann-Whitney: P(B > A) + P(B = A) / 2, 0.5 = no shift; Welch: NAN */
};

/* Mann-Whitney U test of two histograms, from their bucket counts: the
 * samples of a bucket are ties (mid-ranks, tie-corrected variance), so the
 * test is as fine as the buckets (0.8 %) and conservative below that; the
 * normal approximation with continuity correction (as R's wilcox.test and
 * SciPy's default), which needs more than a handful of samples a side.
 * Returns 0, or TP_EUSAGE when a histogram is empty. */
int tp_diff_mann_whitney(const tp_hist *a, const tp_hist *b, struct tp_diff_stat *out,
                         tp_error *err);

/* Welch's t test of two means from (count, mean, stdev) each. Returns 0, or
 * TP_EUSAGE when a count is below 2 or a value not finite. Two constant
 * samples (stdev 0) give p = 1 when the means agree, else 0. */
int tp_diff_welch(double n_a, double mean_a, double sd_a, double n_b, double mean_b, double sd_b,
                  struct tp_diff_stat *out, tp_error *err);

/* Compare the rows of baseline a with those of candidate b, key by key (a
 * row's "host", when it has one, is part of its identity). Returns a new
 *   {"alpha", "min_effect", "compared": n (rows in both), "regressions": n,
 *    "improvements": n, "changed": n, "untested": n, "incomparable": n,
 *    "rows": [{"key", "metric", "host"?, "unit", "better", "a", "b",
 *              "change": b - a, "relative": (b - a) / |a| | null,
 *              "test": "mann-whitney" | "welch" | "none", "p"?, "stat"?, "df"?,
 *              "p_b_gt"?, "n_a"?, "n_b"?,
 *              "verdict": "regression" | "improvement" | "changed" |
 *                         "unchanged" | "no samples" | "incomparable",
 *              "why": "...", "says": "net.lat.latency.p99{size=8} +18.3 %
 *                                     (41.6 us → 49.2 us), p = 3e-12"}, ...],
 *    "only_a": [ids], "only_b": [ids]}   (an id: the key, "@host" when one)
 * The test of a row: the mean by Welch on its stats; a percentile (p50 ..
 * p99_99) by Mann-Whitney on the histogram of its family (the row of the
 * same metric stem and labels that carries one), else by Welch when the row
 * has stats; the maximum (one sample) and plain numbers by none. A
 * regression is significant (p < alpha), in the worse direction by
 * "better", and at least min_effect relative; an improvement the same the
 * other way; "changed" when "better" is null. opts NULL: the defaults.
 * NULL (TP_EUSAGE when a or b is not an array; TP_ENOMEM) on error. */
json_t *tp_diff_rows(const json_t *a, const json_t *b, const struct tp_diff_opts *opts,
                     tp_error *err);

/* tp_diff_rows on the rows of two result documents. */
json_t *tp_diff_docs(const json_t *doc_a, const json_t *doc_b, const struct tp_diff_opts *opts,
                     tp_error *err);

/* Print diff to f: a summary line, then the regressions, improvements and
 * changes; every compared row too when all is true. */
void tp_diff_print(FILE *f, const json_t *diff, bool all);

/* ---- fleet outliers ---- */

#define TP_FLEET_Z 3.5       /* |robust z| above this is an outlier (Iglewicz and Hoaglin) */
#define TP_FLEET_REL 0.10    /* MAD = 0: a value this far from the median, relatively */
#define TP_FLEET_MIN_HOSTS 3 /* fewer hosts (pairs) for a metric: not judged */
#define TP_FLEET_PAIR_REL 0.20 /* a slow pair is also this far off the median */

struct tp_fleet_opts {
    double z;        /* 0: TP_FLEET_Z */
    double rel;      /* 0: TP_FLEET_REL */
    double pair_rel; /* 0: TP_FLEET_PAIR_REL */
};

/* An empty fleet data set: {"rows": [], "pairs": []}. NULL when out of
 * memory. */
json_t *tp_fleet_new(void);

/* Add the rows of result document doc, each with "host": host, or the
 * document's provenance.host when host is NULL. TP_EUSAGE when neither
 * names one, or when tp_report_check refuses doc (why, without a place:
 * the caller names the line); TP_ENOMEM. */
int tp_fleet_add_doc(json_t *data, const json_t *doc, const char *host, tp_error *err);

/* Add one JSON Lines line (blank lines are skipped). Accepted:
 *   {"host": H, "metric": KEY, "value": V, "unit"?: U, "better"?: "lower"|"higher"}
 *       KEY is a row key, labels and all: "net.lat.latency.p99{size=8}"
 *   a result document (its provenance.host is the host, or "host" beside)
 *   {"host": H, "doc": DOCUMENT}
 *   {"host": H, "rows": [ROW, ...]}
 *   {"a": H1, "b": H2, "metric": M, "value": V, "unit"?, "better"?}: a pair
 * source and lineno name the line in errors ("fleet.jsonl:7: ..."):
 * TP_EUSAGE for a line that is not JSON or none of the above. */
int tp_fleet_add_line(json_t *data, const char *line, const char *source, size_t lineno,
                      tp_error *err);

/* Add every line of the JSON Lines file at path ("-": standard input). */
int tp_fleet_load(json_t *data, const char *path, tp_error *err);

/* Judge data. Per row key across hosts (a host with several values counts
 * once, with their median): robust z = 0.6745 (x - median) / MAD, an
 * outlier when |z| > opts->z; when MAD is 0 (over half the hosts agree
 * exactly) the rule is relative instead: |x - median| > rel * |median| (any
 * difference when the median is 0), and the result says so. Per pair
 * metric: a pair is slow when it is such an outlier in the worse direction
 * (either, when "better" is unknown); a node is slow when at least two of
 * its pairs, and more than half, are slow (a pair counts as slow only when
 * also more than opts->pair_rel, 20 %, off the median: in a tight fleet a
 * pair 5 % off can be many MADs off, and is not a defect); a slow pair
 * between two nodes
 * that are not slow is a slow link. Returns a new
 *   {"outliers": n, "worse": n, "slow_nodes": n, "slow_links": n (distinct
 *    nodes and links, whichever metrics name them),
 *    "too_few_hosts": n (keys and pair metrics seen on fewer than
 *                        TP_FLEET_MIN_HOSTS hosts or pairs: not judged),
 *    "metrics": [{"key", "metric", "unit", "better", "hosts", "median",
 *                 "mad", "rule": "robust z" | "relative",
 *                 "note"?, "outliers": [{"host", "value", "z" | null,
 *                 "relative", "direction": "high" | "low", "worse": bool |
 *                 null, "says"}]}],
 *    "pairs": [{"metric", "unit", "better", "pairs", "median", "mad", "rule",
 *               "note"?, "direction"?, "slow_nodes": [{"node", "slow", "of",
 *               "median", "says"}],
 *               "slow_links": [{"a", "b", "value", "z" | null, "says"}]}]}
 * metrics and pairs list only what has an outlier; "better" of a pair
 * metric is the lines' own, else that of rows of the same metric name.
 * opts NULL: the defaults. NULL on error (TP_ENOMEM). */
json_t *tp_fleet_judge(const json_t *data, const struct tp_fleet_opts *opts, tp_error *err);

/* The pairs of n nodes by the circle method (round-robin): every pair once
 * in tp_fleet_rounds(n) rounds (n - 1; n for an odd n, each node sitting
 * out one), each node in at most one pair per round, so a round's
 * measurements do not share a node. tp_fleet_partner: node's partner in
 * round (0-based), or -1 when it sits out or an argument is out of range. */
int tp_fleet_rounds(int n);
int tp_fleet_partner(int n, int round, int node);

/* Print a judgement to f: a summary line, then what each outlier says. */
void tp_fleet_print(FILE *f, const json_t *judgement);

/* ---- Prometheus ---- */

/* Render rows in the Prometheus text exposition format, as node_exporter's
 * textfile collector reads it: per metric a "# HELP" and "# TYPE ... gauge"
 * line, then its samples
 *   trainpath_net_lat_latency_p99_seconds{size="8",transport="tcp",host="node1"} 4.15995e-05
 * The name is "trainpath_" + the metric with every character outside
 * [a-zA-Z0-9_] made '_', + a suffix for the unit, the value converted to
 * it: ns and s -> _seconds; B/s -> _bytes_per_second; B -> _bytes; 1/s ->
 * _per_second; ns/B -> _seconds_per_byte; $ -> _dollars; no unit (ratios,
 * counts) -> none. Labels: the row's, then host (the row's "host", else
 * host when not NULL) unless the row has a label of that name; values
 * escaped (\\, \", \n). No timestamps (the collector refuses them). A series
 * written twice (same name and labels) keeps the last row. *text is
 * malloc'd, NUL-terminated, *len its length. TP_ENOMEM; TP_EUSAGE when rows
 * is not an array. */
int tp_prom_render(const json_t *rows, const char *host, char **text, size_t *len, tp_error *err);

/* Render and write to path atomically (tp_write_atomic): the collector
 * never reads half a file. node_exporter reads only names ending in .prom.
 * Errors as tp_prom_render and tp_write_atomic. */
int tp_prom_write(const char *path, const json_t *rows, const char *host, tp_error *err);

#endif
