/* Internal to src/report: the HTML report's files and what they share.
 *
 * html.c is the page (its style, the header, the verdicts with each
 * document's key figure, the checks, the list of documents) and calls one
 * function per section that has a file of its own: html_fleet.c,
 * html_latency.c, html_coll.c, html_step.c, html_plan.c, html_counters.c
 * (and the busbw peak of html_coll.c for the coll key figure, the causes'
 * marker of html_counters.c beside every key figure). Those call only
 * html_parts.c (rows, table cells, headings, number formats) and the
 * plotter (svg.h), never html.c or each other, so no two files call each
 * other. */
#ifndef TP_REPORT_HTML_INT_H
#define TP_REPORT_HTML_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "svg.h"

/* o[key]: the sections read nested documents, get(get(d, "results"), ...) */
static inline const json_t *get(const json_t *o, const char *key)
{
    return json_object_get(o, key);
}

/* A document as the page reads it: its figures from its metric rows
 * (tp_report_metrics, where every metric is named once), and from the
 * document itself what it is (command, host, configuration) and what no row
 * carries (per-step series, the sweep, the fits, the findings). */
struct html_doc {
    const json_t *d;
    json_t *rows;
};

/* ---- html_parts.c ---- */

/* Whether x is a run that succeeded (its run.ok row). */
bool tp__html_ok(const struct html_doc *x);

/* x's command ("coll", "net lat"), "?" when it has none. */
const char *tp__html_command(const struct html_doc *x);

/* Whether x is a run of command c whose figures stand: a successful one,
 * or a fleet that failed on its verdict (tp__report_figures_kept). */
bool tp__html_is(const struct html_doc *x, const char *c);

/* The first of x's rows named metric with the same labels as the row like
 * (like NULL: any labels), or NULL. */
const json_t *tp__html_row(const struct html_doc *x, const char *metric, const json_t *like);

/* The value of that row; NAN when there is none. */
double tp__html_val(const struct html_doc *x, const char *metric, const json_t *like);

/* A label of a row (row may be NULL): its string, or NULL. */
const char *tp__html_label(const json_t *row, const char *key);

/* A number a label holds (size=4096): the number, NAN when it has none. */
double tp__html_label_num(const json_t *row, const char *key);

/* Figures as the page writes them, into buf; "-" when not finite (a size
 * also when negative): "41.6 us", "8.12 GB/s", "4K B", "12.5 %". Return buf. */
const char *tp__html_fmt_ns(double ns, char *buf, size_t cap);
const char *tp__html_fmt_rate(double Bps, char *buf, size_t cap);
const char *tp__html_fmt_bytes(double bytes, char *buf, size_t cap);
const char *tp__html_fmt_pct(double frac, char *buf, size_t cap);

/* A table's header row; a leading '#' in a column's name marks it numeric
 * (right-aligned). cols ends with NULL. */
void tp__html_th(struct svg_buf *b, const char *const *cols);

/* A table cell of text (escaped; NULL: empty), tdn a numeric one. */
void tp__html_td(struct svg_buf *b, const char *s);
void tp__html_tdn(struct svg_buf *b, const char *s);

/* A heading that names the document: command, a detail, the host. */
void tp__html_heading(struct svg_buf *b, const struct html_doc *x, const char *detail);

/* The statuses in the order a page shows them, the Nagios order of check
 * (critical, unknown, warning, ok) then SKIP: FAIL 0, UNKNOWN 1, WARN 2,
 * PASS 3, SKIP 4, anything else (NULL too) TP__HTML_NSTATUS. */
#define TP__HTML_NSTATUS 5
int tp__html_status_order(const char *s);

/* ---- the sections: each writes nothing when no document feeds it ---- */

/* html_fleet.c: the first fleet document (validate across an allocation):
 * the judgement's words, each node's tests, a matrix per pairwise metric. */
void tp__html_fleet(struct svg_buf *b, const struct html_doc *docs, size_t n);

/* html_latency.c: CDF, histogram and percentiles of every latency
 * histogram (net lat and loaded one-way, io commit, dataset, checkpoint). */
void tp__html_latency(struct svg_buf *b, const struct html_doc *docs, size_t n);

/* html_coll.c: bus bandwidth against size, a series per coll document and
 * backend, and a table with the peaks and the alpha-beta fits. */
void tp__html_busbw(struct svg_buf *b, const struct html_doc *docs, size_t n);

/* The coll.busbw row of x with the highest value, of the given backend
 * (NULL: any; "trainpath" is the row without a backend label); NULL when
 * there is none. */
const json_t *tp__html_coll_peak(const struct html_doc *x, const char *backend);

/* html_step.c: the slowest rank's step breakdown per step document. */
void tp__html_step(struct svg_buf *b, const struct html_doc *docs, size_t n);

/* html_timeline.c: a step document's results.timeline (the first steps of
 * every rank's threads) as bars on a time axis; nothing when it has no
 * events. */
void tp__html_timeline(struct svg_buf *b, const json_t *timeline);

/* html_plan.c: the ranked candidates, the words and the sweep per plan
 * document. */
void tp__html_plan(struct svg_buf *b, const struct html_doc *docs, size_t n);

/* html_counters.c: per document with results.counters (or a net document's
 * results.connections), a block with id "counters-K" (K: the document's
 * number, from 1): "counters not read: WHY" when counters.error is set;
 * else the window, each cause flagged with its sentence and evidence, the
 * changed counters that point at a cause, the PCIe links downtrained or
 * changed, resets, devices gone or new, the traffic counters of the path
 * (in a closed <details>); and a net document's connections. */
void tp__html_counters(struct svg_buf *b, const struct html_doc *docs, size_t n);

/* The marker of docs[k]'s key figure: <tag class="flag"> (tag "div" or
 * "span") linking to its block, "counters: loss, downtrained" with each
 * cause named once, in the document's order; nothing when its counters name
 * no cause or were not read. Never a status: counters do not change one. */
void tp__html_cause_flag(struct svg_buf *b, const struct html_doc *x, size_t k, const char *tag);

#endif
