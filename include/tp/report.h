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

/* Read a result document; TP_EUSAGE naming the file when it is missing,
 * not JSON or not a trainpath result. */
int tp_report_load(const char *path, json_t **doc, tp_error *err);

#endif
