/* The HTML report: result documents rendered into one self-contained page.
 *
 * One file, no network: inline CSS, plots as inline SVG drawn here, no
 * JavaScript, no fonts or images fetched. Every string taken from a document
 * or a verdict is escaped (& < > " '). The page reads top-down, each part a
 * <section> with a fixed id so tools and tests can find it, and left out when
 * no document feeds it:
 *
 *   verdicts  a box per test (PASS / WARN / FAIL / SKIP colour) and each
 *             document's key figure;
 *   latency   CDF and histogram per latency histogram: net lat/loaded (one-way
 *             = RTT/2, one line per size), io commit, io dataset, io checkpoint;
 *   busbw     coll: bus bandwidth (GB/s) against message size, log-x, and the
 *             alpha-beta fits;
 *   step      step: the slowest rank's per-step breakdown as stacked bars
 *             (compute, exposed comm, data wait, checkpoint stall; ms) with the
 *             job's step over it, and the summary fractions;
 *   plan      plan: the ranked candidates, the words, step time and cost per
 *             run against GPUs from the sweep;
 *   check     check: the findings, FAIL and WARN first.
 *
 * Figures are read from each document's metric rows (tp_report_metrics), as
 * the gates, diffs and history read them; the document gives what no row
 * carries (tp/report.h lists it).
 *
 * Each plot is <svg class="plot" data-kind="cdf|hist|busbw|step|plan">, with
 * a unit on every axis. The output depends only on the inputs (no clock), so
 * the same documents give the same bytes. docs/report.md ("HTML report") describes the page. */
#ifndef TP_HTML_H
#define TP_HTML_H

#include <stddef.h>

#include <jansson.h>

#include "tp/error.h"

/* Render the page into a new NUL-terminated string (*out, malloc'd; *len its
 * length without the NUL).
 *
 * docs: n result documents (tp_report_load's); a failed run shows as a FAIL
 * box and feeds no plot; a command the report does not draw is listed only.
 * verdicts: NULL, or an array of {"name": string, "status": "PASS" | "WARN" |
 * "FAIL" | "SKIP", "summary": string} (optional "figure": string, "seconds":
 * number), one box each, in order. With NULL, the boxes are derived from the
 * documents: FAIL for a failed run, the Nagios word for check, and a neutral
 * "INFO" box with the key figure otherwise (a document alone has no
 * threshold to pass).
 *
 * Returns 0; TP_EUSAGE naming the document or verdict index when a document
 * is not an object or a verdict is malformed (nothing is allocated then);
 * TP_ENOMEM. */
int tp_html_render(const json_t *const *docs, size_t n, const json_t *verdicts, char **out,
                   size_t *len, tp_error *err);

/* tp_html_render, written to path atomically (tp_write_atomic): path is the
 * old file or the whole new page, never a torn one. Returns 0 or the error of
 * either step (err names path for a write error). */
int tp_html_report(const json_t *const *docs, size_t n, const json_t *verdicts, const char *path,
                   tp_error *err);

#endif
