/* The HTML report: result documents into one self-contained page.
 *
 * This file is the page: its style, the header, the verdicts with each
 * document's key figure (and the marker of its counters' causes), the checks
 * and the list of documents; the other sections each have a file
 * (html_int.h), and each picks its documents, draws its plots (with the
 * plotter of svg.c) and tables, and is skipped when nothing feeds it.
 * Every string from a document goes through tp__svg_esc(): the page is
 * data, and a candidate named "<script>" must show as text. Nothing here
 * reads a clock or the network, so the same documents give the same page. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp/atomicfile.h"
#include "tp/html.h"
#include "tp/json.h"
#include "tp/report.h"
#include "tp/units.h"

#include "html_int.h"

/* ---- page parts ---- */

static const char css[] =
    "body{margin:0;background:#f5f6f8;color:#1d1f23;"
    "font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif}\n"
    "main{max-width:1040px;margin:0 auto;padding:12px 24px 48px}\n"
    "h1{font-size:22px;margin:10px 0 2px}\n"
    "h2{font-size:18px;margin:30px 0 8px;padding-bottom:4px;border-bottom:1px solid #d5d8de}\n"
    "h3{font-size:15px;margin:18px 0 6px}\n"
    ".meta,.small{color:#5a5f69;font-size:12.5px}\n"
    ".boxes{display:grid;grid-template-columns:repeat(auto-fill,minmax(230px,1fr));gap:10px}\n"
    ".box{background:#fff;border:1px solid #d5d8de;border-left:7px solid #8a8f98;"
    "border-radius:4px;padding:7px 10px}\n"
    ".box .name{font-weight:600;overflow-wrap:anywhere}\n"
    ".box .sum{font-size:13px;color:#33363c;overflow-wrap:anywhere}\n"
    ".st{display:inline-block;min-width:34px;text-align:center;font-size:11px;font-weight:700;"
    "padding:0 5px;border-radius:3px;color:#fff;background:#8a8f98;margin-right:6px}\n"
    ".box.PASS{border-left-color:#2e7d32}.st.PASS{background:#2e7d32}\n"
    ".box.WARN{border-left-color:#c77700}.st.WARN{background:#c77700}\n"
    ".box.FAIL{border-left-color:#c62828}.st.FAIL{background:#c62828}\n"
    ".box.INFO{border-left-color:#1f6fb2}.st.INFO{background:#1f6fb2}\n"
    ".box.UNKNOWN{border-left-color:#6a1b9a}.st.UNKNOWN{background:#6a1b9a}\n"
    "table{border-collapse:collapse;width:100%;background:#fff;font-size:13px;margin:6px 0 4px}\n"
    "th,td{border:1px solid #e0e2e6;padding:3px 7px;text-align:left;vertical-align:top}\n"
    "th{background:#eef0f3;font-weight:600}\n"
    "td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    "tr.FAIL td{background:#fdf0f0}tr.WARN td{background:#fdf6e9}"
    "tr.UNKNOWN td{background:#f6effa}\n"
    "figure{margin:8px 0;background:#fff;border:1px solid #e0e2e6;border-radius:4px;"
    "padding:6px 8px}\n"
    "figcaption{font-size:13px;color:#33363c;margin-bottom:2px}\n"
    ".pair{display:grid;grid-template-columns:1fr 1fr;gap:10px}\n"
    "@media (max-width:900px){.pair{grid-template-columns:1fr}}\n"
    "svg.plot{display:block;width:100%;height:auto}\n"
    "svg.plot text{font-size:12px;fill:#33363c;font-family:system-ui,sans-serif}\n"
    "svg.plot .at{font-size:12.5px;fill:#1d1f23}\n"
    "svg.plot .area{fill:#fff;stroke:none}\n"
    "svg.plot .g{stroke:#e3e5e9;fill:none}svg.plot .gm{stroke:#f2f3f5;fill:none}\n"
    "svg.plot .ax{stroke:#5a5f69;fill:none}\n"
    "ul.words{background:#fff;border:1px solid #e0e2e6;border-radius:4px;margin:6px 0;"
    "padding:8px 12px 8px 28px}\n"
    "ul.words li{margin:2px 0}\n"
    "code{font-size:12.5px;overflow-wrap:anywhere}\n"
    ".flag{display:inline-block;margin-top:3px;padding:0 6px;border-radius:3px;font-size:12px;"
    "font-weight:600;background:#c77700}\n"
    ".flag a{color:#fff;text-decoration:none}\n"
    ".ctr{background:#fff;border:1px solid #e0e2e6;border-radius:4px;margin:8px 0;"
    "padding:0 10px 6px}\n"
    ".cause{background:#fdf6e9;border-left:5px solid #c77700;margin:4px 0;padding:3px 8px}\n"
    "details summary{cursor:pointer;font-size:13px;color:#33363c}\n";

/* ---- key figures (one line a document) ---- */

/* Figures come from the document's rows; what a figure is about (the
 * operation, the GPUs planned for) from the document. */

/* fail, warn, pass and skip of a check document; pass and skip have no row */
static void check_counts(const struct html_doc *x, char *out, size_t cap)
{
    const json_t *sm = get(get(x->d, "results"), "summary");
    snprintf(out, cap, "%.0f fail, %.0f warn, %.0f pass, %.0f skip",
             tp__html_val(x, "check.fail", NULL), tp__html_val(x, "check.warn", NULL),
             tp_json_num(sm, "pass"), tp_json_num(sm, "skip"));
}

/* p50 and p99 at the first message size */
static void fig_net_lat(const struct html_doc *x, char *out, size_t cap)
{
    const json_t *p50 = tp__html_row(x, "net.lat.latency.p50", NULL);
    char a[40], b[40], s[40];
    snprintf(out, cap, "one-way p50 %s, p99 %s at %s",
             tp__html_fmt_ns(tp_json_num(p50, "value"), a, sizeof a),
             tp__html_fmt_ns(tp__html_val(x, "net.lat.latency.p99", p50), b, sizeof b),
             tp__html_fmt_bytes(tp__html_label_num(p50, "size"), s, sizeof s));
}

static void fig_net_loaded(const struct html_doc *x, char *out, size_t cap)
{
    char a[40], b[40];
    snprintf(out, cap, "p99 %s idle, %s under load",
             tp__html_fmt_ns(tp__html_val(x, "net.loaded.isolated.latency.p99", NULL), a, sizeof a),
             tp__html_fmt_ns(tp__html_val(x, "net.loaded.latency.p99", NULL), b, sizeof b));
}

/* the highest bandwidth (net.bw or net.bibw) and its message size */
static void net_peak(const struct html_doc *x, const char *k, char *out, size_t cap)
{
    char metric[16], a[40], s[40];
    snprintf(metric, sizeof metric, "net.%s", k);
    const json_t *best = NULL, *row;
    size_t i;
    json_array_foreach(x->rows, i, row) {
        const char *m = tp_json_str(row, "metric");
        if (m && strcmp(m, metric) == 0 &&
            (!best || tp_json_num(row, "value") > tp_json_num(best, "value")))
            best = row;
    }
    snprintf(out, cap, "%s %s at %s", k, tp__html_fmt_rate(tp_json_num(best, "value"), a, sizeof a),
             tp__html_fmt_bytes(tp__html_label_num(best, "size"), s, sizeof s));
}

static void fig_net_bw(const struct html_doc *x, char *out, size_t cap)
{
    net_peak(x, "bw", out, cap);
}

static void fig_net_bibw(const struct html_doc *x, char *out, size_t cap)
{
    net_peak(x, "bibw", out, cap);
}

static void fig_coll(const struct html_doc *x, char *out, size_t cap)
{
    const json_t *cfg = get(x->d, "config"), *peak = tp__html_coll_peak(x, NULL);
    char a[40], s[40];
    snprintf(out, cap, "%s, %.0f ranks: busbw %s at %s", tp_json_str(cfg, "op") ?: "?",
             tp_json_num(cfg, "ranks"), tp__html_fmt_rate(tp_json_num(peak, "value"), a, sizeof a),
             tp__html_fmt_bytes(tp__html_label_num(peak, "size"), s, sizeof s));
}

static void fig_io_commit(const struct html_doc *x, char *out, size_t cap)
{
    char a[40];
    snprintf(out, cap, "commit p99 %s, %.0f commits/s",
             tp__html_fmt_ns(tp__html_val(x, "io.commit.latency.p99", NULL), a, sizeof a),
             tp__html_val(x, "io.commit.per_s", NULL));
}

/* samples/s over the whole run, from the document: the row
 * io.dataset.samples_per_s is the mean of the epochs' rates, another figure */
static void fig_io_dataset(const struct html_doc *x, char *out, size_t cap)
{
    char a[40];
    snprintf(out, cap, "read p99 %s, %.0f samples/s",
             tp__html_fmt_ns(tp__html_val(x, "io.dataset.read.p99", NULL), a, sizeof a),
             tp_json_num(get(x->d, "results"), "samples_per_s"));
}

static void fig_io_checkpoint(const struct html_doc *x, char *out, size_t cap)
{
    char a[40], b[40];
    snprintf(out, cap, "commit p50 %s, %s",
             tp__html_fmt_ns(tp__html_val(x, "io.checkpoint.commit.p50", NULL), a, sizeof a),
             tp__html_fmt_rate(tp__html_val(x, "io.checkpoint.throughput", NULL), b, sizeof b));
}

static void fig_step(const struct html_doc *x, char *out, size_t cap)
{
    char a[40], b[40], s[40];
    snprintf(out, cap, "step p50 %s, p99 %s; %s exposed comm",
             tp__html_fmt_ns(tp__html_val(x, "step.time.p50", NULL), a, sizeof a),
             tp__html_fmt_ns(tp__html_val(x, "step.time.p99", NULL), b, sizeof b),
             tp__html_fmt_pct(tp__html_val(x, "step.exposed_comm_fraction", NULL), s, sizeof s));
}

/* From the document: a candidate is its name, and the rows carry the name
 * cut to fit a label (plan.cost{candidate=...}); the GPUs planned for have
 * no row. */
static void fig_plan(const struct html_doc *x, char *out, size_t cap)
{
    const json_t *res = get(x->d, "results"), *best = json_array_get(get(res, "candidates"), 0);
    char a[40];
    snprintf(out, cap, "cheapest at %.0f GPUs: %s, %s per run", tp_json_num(res, "gpus"),
             tp_json_str(best, "name") ?: "?",
             tp_fmt_money(tp_json_num(get(best, "cost"), "total"), a, sizeof a));
}

static void fig_check(const struct html_doc *x, char *out, size_t cap)
{
    check_counts(x, out, cap);
}

static void fig_sdc(const struct html_doc *x, char *out, size_t cap)
{
    char a[40];
    snprintf(out, cap, "every thread the same chain, %s a step",
             tp__html_fmt_ns(tp__html_val(x, "sdc.step_time", NULL), a, sizeof a));
}

static void fig_fleet(const struct html_doc *x, char *out, size_t cap)
{
    snprintf(out, cap, "%.0f nodes: %.0f slow nodes, %.0f slow links, %.0f failed tests",
             tp__html_val(x, "fleet.nodes", NULL), tp__html_val(x, "fleet.slow_nodes", NULL),
             tp__html_val(x, "fleet.slow_links", NULL),
             tp__html_val(x, "fleet.failed_tests", NULL));
}

/* the key figure of each command's document; a command without one has an
 * empty figure */
static const struct figure {
    const char *command;
    void (*fn)(const struct html_doc *x, char *out, size_t cap);
} figures[] = {
    {"net lat", fig_net_lat},
    {"net loaded", fig_net_loaded},
    {"net bw", fig_net_bw},
    {"net bibw", fig_net_bibw},
    {"coll", fig_coll},
    {"io commit", fig_io_commit},
    {"io dataset", fig_io_dataset},
    {"io checkpoint", fig_io_checkpoint},
    {"step", fig_step},
    {"plan", fig_plan},
    {"check", fig_check},
    {"sdc", fig_sdc},
    {"fleet", fig_fleet},
};

static void key_figure(const struct html_doc *x, char *out, size_t cap)
{
    out[0] = '\0';
    if (!tp__html_ok(x)) {
        const char *m = tp_json_str(get(x->d, "status"), "message");
        snprintf(out, cap, "run failed%s%s", m && *m ? ": " : "", m ? m : "");
        return;
    }
    for (size_t i = 0; i < sizeof figures / sizeof figures[0]; i++)
        if (strcmp(tp__html_command(x), figures[i].command) == 0)
            figures[i].fn(x, out, cap);
}

/* ---- verdicts ---- */

/* x (NULL: a caller's verdict) is the document the box stands for, the k-th:
 * the marker of its counters' causes goes under its figures */
static void box(struct svg_buf *b, const char *status, const char *name, const char *summary,
                const char *figure, double seconds, const struct html_doc *x, size_t k)
{
    tp__svg_printf(b, "<div class=\"box %s\"><div class=\"name\"><span class=\"st %s\">%s</span>",
                   status, status, status);
    tp__svg_esc(b, name);
    tp__svg_emit(b, "</div>");
    if (summary && *summary) {
        tp__svg_emit(b, "<div class=\"sum\">");
        tp__svg_esc(b, summary);
        tp__svg_emit(b, "</div>");
    }
    if (figure && *figure) {
        tp__svg_emit(b, "<div class=\"sum\">");
        tp__svg_esc(b, figure);
        tp__svg_emit(b, "</div>");
    }
    if (x)
        tp__html_cause_flag(b, x, k, "div");
    if (isfinite(seconds))
        tp__svg_printf(b, "<div class=\"small\">%.1f s</div>", seconds);
    tp__svg_emit(b, "</div>\n");
}

static const char *derived_status(const struct html_doc *x)
{
    if (!tp__html_ok(x))
        return "FAIL";
    if (strcmp(tp__html_command(x), "check") == 0) {
        double code = tp__html_val(x, "check.nagios", NULL);
        return code == 0 ? "PASS" : code == 2 ? "FAIL" : code == 3 ? "UNKNOWN" : "WARN";
    }
    return "INFO";
}

static void section_verdicts(struct svg_buf *b, const struct html_doc *docs, size_t n,
                             const json_t *verdicts)
{
    size_t i;
    const json_t *v;
    char fig[512];
    if (!verdicts && n == 0)
        return;
    tp__svg_emit(b, "<section id=\"verdicts\">\n<h2>Verdicts</h2>\n<div class=\"boxes\">\n");
    if (verdicts) {
        json_array_foreach(verdicts, i, v) {
            box(b, tp_json_str(v, "status"), tp_json_str(v, "name"), tp_json_str(v, "summary"),
                tp_json_str(v, "figure"), tp_json_num(v, "seconds"), NULL, 0);
        }
        tp__svg_emit(b, "</div>\n");
        if (n) {
            tp__svg_emit(b, "<h3>Key figures</h3>\n<table>\n");
            tp__html_th(b, (const char *const[]){"command", "host", "key figure", NULL});
            for (size_t k = 0; k < n; k++) {
                key_figure(&docs[k], fig, sizeof fig);
                tp__svg_printf(b, "<tr class=\"%s\">", tp__html_ok(&docs[k]) ? "ok" : "FAIL");
                tp__html_td(b, tp__html_command(&docs[k]));
                tp__html_td(b, tp_json_str(get(docs[k].d, "provenance"), "host"));
                tp__svg_emit(b, "<td>");
                tp__svg_esc(b, fig);
                tp__html_cause_flag(b, &docs[k], k, "span");
                tp__svg_emit(b, "</td></tr>\n");
            }
            tp__svg_emit(b, "</table>\n");
        }
    } else {
        for (size_t k = 0; k < n; k++) {
            key_figure(&docs[k], fig, sizeof fig);
            box(b, derived_status(&docs[k]), tp__html_command(&docs[k]), fig, NULL, NAN, &docs[k],
                k);
        }
        tp__svg_emit(
            b, "</div>\n<p class=\"small\">Derived from the documents: FAIL marks a failed run; "
               "check shows its Nagios status; INFO is a measurement without a threshold.</p>\n");
    }
    tp__svg_emit(b, "</section>\n");
}

/* ---- check ---- */

/* The findings are the document's: the rows (check.rule.pass) say only
 * whether a rule passed, not its status word, evidence or remedy. */
static void check_doc(struct svg_buf *b, const struct html_doc *x)
{
    const json_t *res = get(x->d, "results"), *f;
    char counts[128], detail[160];
    check_counts(x, counts, sizeof counts);
    snprintf(detail, sizeof detail, "%s: %s", tp_json_str(get(res, "nagios"), "word") ?: "?",
             counts);
    tp__html_heading(b, x, detail);
    tp__svg_emit(b, "<table>\n");
    tp__html_th(b, (const char *const[]){"status", "id", "plane", "severity", "evidence", NULL});
    const json_t *findings = get(res, "findings");
    /* FAIL first, then UNKNOWN, WARN, PASS, SKIP; the rules' order within each */
    for (int o = 0; o <= TP__HTML_NSTATUS; o++) {
        size_t i;
        json_array_foreach(findings, i, f) {
            const char *st = tp_json_str(f, "status");
            if (tp__html_status_order(st) != o)
                continue;
            bool bad = o < 3;
            tp__svg_printf(b, "<tr class=\"%s\"><td><span class=\"st %s\">", bad ? st : "",
                           o < TP__HTML_NSTATUS ? st : "");
            tp__svg_esc(b, st ? st : "?");
            tp__svg_emit(b, "</span></td>");
            tp__svg_emit(b, "<td><code>");
            tp__svg_esc(b, tp_json_str(f, "id"));
            tp__svg_emit(b, "</code></td>");
            tp__html_td(b, tp_json_str(f, "plane"));
            tp__html_td(b, tp_json_str(f, "severity"));
            tp__svg_emit(b, "<td>");
            tp__svg_esc(b, tp_json_str(f, "evidence"));
            if (bad && tp_json_str(f, "remediation")) {
                tp__svg_emit(b, "<div class=\"small\">Fix: ");
                tp__svg_esc(b, tp_json_str(f, "remediation"));
                tp__svg_emit(b, "</div>");
            }
            tp__svg_emit(b, "</td></tr>\n");
        }
    }
    tp__svg_emit(b, "</table>\n");
}

static void section_check(struct svg_buf *b, const struct html_doc *docs, size_t n)
{
    bool open = false;
    for (size_t i = 0; i < n; i++) {
        if (!tp__html_is(&docs[i], "check"))
            continue;
        if (!open) {
            tp__svg_emit(b, "<section id=\"check\">\n<h2>Checks</h2>\n");
            open = true;
        }
        check_doc(b, &docs[i]);
    }
    if (open)
        tp__svg_emit(b, "</section>\n");
}

/* ---- the documents ---- */

static void section_documents(struct svg_buf *b, const struct html_doc *docs, size_t n)
{
    if (!n)
        return;
    tp__svg_emit(b, "<section id=\"documents\">\n<h2>Documents</h2>\n<table>\n");
    tp__html_th(b, (const char *const[]){"#", "command", "host", "started (UTC)", "trainpath",
                                         "status", NULL});
    for (size_t i = 0; i < n; i++) {
        const json_t *d = docs[i].d, *stj = get(d, "status");
        char s[32];
        snprintf(s, sizeof s, "%zu", i + 1);
        tp__svg_printf(b, "<tr class=\"%s\">", tp__html_ok(&docs[i]) ? "ok" : "FAIL");
        tp__html_tdn(b, s);
        tp__html_td(b, tp__html_command(&docs[i]));
        tp__html_td(b, tp_json_str(get(d, "provenance"), "host"));
        tp__html_td(b, tp_json_str(d, "started_utc"));
        tp__html_td(b, tp_json_str(get(d, "tool"), "version"));
        tp__svg_emit(b, "<td>");
        if (tp__html_ok(&docs[i])) {
            tp__svg_emit(b, "ok");
        } else {
            tp__svg_esc(b, tp_json_str(stj, "code") ?: "failed");
            if (tp_json_str(stj, "message") && *tp_json_str(stj, "message")) {
                tp__svg_emit(b, ": ");
                tp__svg_esc(b, tp_json_str(stj, "message"));
            }
        }
        tp__svg_emit(b, "</td></tr>\n");
    }
    tp__svg_emit(b, "</table>\n</section>\n");
}

/* ---- the page ---- */

static int check_inputs(const json_t *const *docs, size_t n, const json_t *verdicts, tp_error *err)
{
    if (n && !docs)
        return tp_error_set(err, TP_EUSAGE, "html report: %zu documents but no array", n);
    for (size_t i = 0; i < n; i++)
        if (!json_is_object(docs[i]))
            return tp_error_set(err, TP_EUSAGE, "html report: document %zu is not an object",
                                i + 1);
    if (!verdicts)
        return 0;
    if (!json_is_array(verdicts))
        return tp_error_set(err, TP_EUSAGE, "html report: verdicts: not an array");
    size_t i;
    const json_t *v;
    json_array_foreach(verdicts, i, v) {
        const char *st = tp_json_str(v, "status");
        if (!json_is_object(v) || !tp_json_str(v, "name"))
            return tp_error_set(err, TP_EUSAGE, "html report: verdicts[%zu]: needs a name", i);
        if (!st || tp__html_status_order(st) >= TP__HTML_NSTATUS)
            return tp_error_set(err, TP_EUSAGE,
                                "html report: verdicts[%zu] (%s): status must be PASS, WARN, "
                                "FAIL, UNKNOWN or SKIP, not %s",
                                i, tp_json_str(v, "name"), st ? st : "missing");
        if (get(v, "summary") && !json_is_string(get(v, "summary")))
            return tp_error_set(err, TP_EUSAGE, "html report: verdicts[%zu]: summary: not a string",
                                i);
    }
    return 0;
}

static void page(struct svg_buf *b, const struct html_doc *docs, size_t n, const json_t *verdicts)
{
    tp__svg_emit(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                    "<title>trainpath report</title>\n<style>\n");
    tp__svg_emit(b, css);
    tp__svg_emit(b, "</style>\n</head>\n<body>\n<main>\n<header>\n<h1>trainpath report</h1>\n"
                    "<p class=\"meta\">");
    /* what the page covers: the documents' hosts and the span of their start times */
    const char *first = NULL, *last = NULL;
    size_t failed = 0;
    for (size_t i = 0; i < n; i++) {
        const char *t = tp_json_str(docs[i].d, "started_utc");
        if (t && (!first || strcmp(t, first) < 0))
            first = t;
        if (t && (!last || strcmp(t, last) > 0))
            last = t;
        failed += !tp__html_ok(&docs[i]);
    }
    tp__svg_printf(b, "%zu result document%s", n, n == 1 ? "" : "s");
    if (failed)
        tp__svg_printf(b, " (%zu failed)", failed);
    for (size_t i = 0, shown = 0; i < n && shown < 4; i++) {
        const char *h = tp_json_str(get(docs[i].d, "provenance"), "host");
        bool seen = false;
        for (size_t k = 0; k < i && h && !seen; k++) {
            const char *o = tp_json_str(get(docs[k].d, "provenance"), "host");
            seen = o && strcmp(o, h) == 0;
        }
        if (!h || seen)
            continue;
        tp__svg_emit(b, shown++ ? ", " : " from ");
        tp__svg_esc(b, h);
    }
    if (first) {
        tp__svg_emit(b, "; started ");
        tp__svg_esc(b, first);
        if (last && strcmp(last, first) != 0) {
            tp__svg_emit(b, " to ");
            tp__svg_esc(b, last);
        }
    }
    tp__svg_emit(b, "</p>\n</header>\n");
    section_verdicts(b, docs, n, verdicts);
    tp__html_fleet(b, docs, n);
    tp__html_latency(b, docs, n);
    tp__html_busbw(b, docs, n);
    tp__html_step(b, docs, n);
    tp__html_plan(b, docs, n);
    section_check(b, docs, n);
    tp__html_counters(b, docs, n);
    section_documents(b, docs, n);
    if (!n)
        tp__svg_emit(b, "<p>No result documents.</p>\n");
    tp__svg_emit(b, "</main>\n</body>\n</html>\n");
}

int tp_html_render(const json_t *const *docs, size_t n, const json_t *verdicts, char **out,
                   size_t *len, tp_error *err)
{
    int rc = check_inputs(docs, n, verdicts, err);
    if (rc)
        return rc;
    /* every document's rows, once */
    struct html_doc *x = calloc(n ? n : 1, sizeof *x);
    bool oom = !x;
    for (size_t i = 0; !oom && i < n; i++) {
        tp_error ignored;
        x[i].d = docs[i];
        oom = !(x[i].rows = tp_report_metrics(docs[i], &ignored));
    }
    struct svg_buf b = {0};
    if (!oom)
        page(&b, x, n, verdicts);
    for (size_t i = 0; x && i < n; i++)
        json_decref(x[i].rows);
    free(x);
    if (oom || b.oom) {
        free(b.p);
        return tp_error_set(err, TP_ENOMEM, "html report: out of memory");
    }
    *out = b.p;
    *len = b.len;
    return 0;
}

int tp_html_report(const json_t *const *docs, size_t n, const json_t *verdicts, const char *path,
                   tp_error *err)
{
    char *page = NULL;
    size_t len = 0;
    int rc = tp_html_render(docs, n, verdicts, &page, &len, err);
    if (rc)
        return rc;
    rc = tp_write_atomic(path, page, len, err);
    free(page);
    return rc;
}
