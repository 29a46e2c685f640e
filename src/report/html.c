/* The HTML report: result documents into one self-contained page.
 *
 * One function per section that picks its documents, draws its plots (with
 * the plotter of svg.c) and tables, and is skipped when nothing feeds it.
 * Every string from a document goes through tp__svg_esc(): the page is data,
 * and a candidate named "<script>" must show as text. Nothing here reads a
 * clock or the network, so the same documents give the same page. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp/atomicfile.h"
#include "tp/hist.h"
#include "tp/html.h"
#include "tp/json.h"
#include "tp/units.h"

#include "svg.h"

/* ---- reading documents ---- */

static const json_t *get(const json_t *o, const char *key)
{
    return json_object_get(o, key);
}

static bool doc_ok(const json_t *d)
{
    return json_is_true(get(get(d, "status"), "ok"));
}

static const char *command(const json_t *d)
{
    const char *c = tp_json_str(d, "command");
    return c ? c : "?";
}

static bool is_cmd(const json_t *d, const char *c)
{
    return doc_ok(d) && strcmp(command(d), c) == 0;
}

/* ---- number formatting ---- */

static const char *fmt_ns(double ns, char *buf, size_t cap)
{
    if (!isfinite(ns))
        return snprintf(buf, cap, "-"), buf;
    return tp_fmt_ns(ns, buf, cap);
}

static const char *fmt_rate(double Bps, char *buf, size_t cap)
{
    if (!isfinite(Bps))
        return snprintf(buf, cap, "-"), buf;
    return tp_fmt_rate(Bps, buf, cap);
}

static const char *fmt_bytes(double bytes, char *buf, size_t cap)
{
    if (!isfinite(bytes) || bytes < 0)
        return snprintf(buf, cap, "-"), buf;
    if (bytes >= 0x1p63)
        return snprintf(buf, cap, "%.3g B", bytes), buf;
    size_t k = strlen(tp_fmt_size((uint64_t)llround(bytes), buf, cap));
    snprintf(buf + k, cap - k, " B");
    return buf;
}

static const char *fmt_pct(double frac, char *buf, size_t cap)
{
    if (!isfinite(frac))
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "%.1f %%", frac * 100);
    return buf;
}

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
    "table{border-collapse:collapse;width:100%;background:#fff;font-size:13px;margin:6px 0 4px}\n"
    "th,td{border:1px solid #e0e2e6;padding:3px 7px;text-align:left;vertical-align:top}\n"
    "th{background:#eef0f3;font-weight:600}\n"
    "td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    "tr.FAIL td{background:#fdf0f0}tr.WARN td{background:#fdf6e9}\n"
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
    "code{font-size:12.5px;overflow-wrap:anywhere}\n";

static void th(struct svg_buf *b, const char *const *cols)
{
    tp__svg_emit(b, "<tr>");
    for (size_t i = 0; cols[i]; i++) {
        /* a leading '#' marks a numeric (right-aligned) column */
        bool n = cols[i][0] == '#';
        tp__svg_printf(b, "<th%s>", n ? " class=\"n\"" : "");
        tp__svg_esc(b, cols[i] + n);
        tp__svg_emit(b, "</th>");
    }
    tp__svg_emit(b, "</tr>\n");
}

static void td(struct svg_buf *b, const char *s)
{
    tp__svg_emit(b, "<td>");
    tp__svg_esc(b, s);
    tp__svg_emit(b, "</td>");
}

static void tdn(struct svg_buf *b, const char *s)
{
    tp__svg_emit(b, "<td class=\"n\">");
    tp__svg_esc(b, s);
    tp__svg_emit(b, "</td>");
}

/* A heading that names the document: command, a detail, the host. */
static void doc_heading(struct svg_buf *b, const json_t *d, const char *detail)
{
    tp__svg_emit(b, "<h3>");
    tp__svg_esc(b, command(d));
    if (detail && *detail) {
        tp__svg_emit(b, " &middot; ");
        tp__svg_esc(b, detail);
    }
    const char *host = tp_json_str(get(d, "provenance"), "host");
    if (host) {
        tp__svg_emit(b, " <span class=\"small\">on ");
        tp__svg_esc(b, host);
        tp__svg_emit(b, "</span>");
    }
    tp__svg_emit(b, "</h3>\n");
}

/* net documents: "tcp", "ofi tcp;ofi_rxm" */
static void transport_name(const json_t *d, char *buf, size_t cap)
{
    const json_t *cfg = get(d, "config");
    const char *tr_ = tp_json_str(cfg, "transport"), *prov = tp_json_str(cfg, "provider");
    snprintf(buf, cap, "%s%s%s", tr_ ? tr_ : "tcp", prov ? " " : "", prov ? prov : "");
}

/* ---- key figures (one line a document) ---- */

/* The backend of a coll size entry ("trainpath" when the document predates
 * the field). */
static const char *entry_backend(const json_t *e)
{
    return tp_json_str(e, "backend") ?: "trainpath";
}

/* backend NULL: every entry */
static const json_t *peak_busbw_of(const json_t *res, const char *backend, double *bw)
{
    const json_t *best = NULL, *e;
    size_t i;
    *bw = NAN;
    json_array_foreach(get(res, "sizes"), i, e) {
        if (backend && strcmp(entry_backend(e), backend) != 0)
            continue;
        double v = tp_json_num(e, "busbw");
        if (isfinite(v) && (!best || v > *bw)) {
            best = e;
            *bw = v;
        }
    }
    return best;
}

static const json_t *peak_busbw(const json_t *res, double *bw)
{
    return peak_busbw_of(res, NULL, bw);
}

static void key_figure(const json_t *d, char *out, size_t cap)
{
    const json_t *res = get(d, "results"), *cfg = get(d, "config");
    const char *c = command(d);
    char a[40], b2[40], s[40];
    out[0] = '\0';
    if (!doc_ok(d)) {
        const char *m = tp_json_str(get(d, "status"), "message");
        snprintf(out, cap, "run failed%s%s", m && *m ? ": " : "", m ? m : "");
    } else if (strcmp(c, "net lat") == 0) {
        const json_t *e = json_array_get(get(res, "sizes"), 0), *l = get(e, "latency");
        snprintf(out, cap, "one-way p50 %s, p99 %s at %s", fmt_ns(tp_json_num(l, "p50"), a, sizeof a),
                 fmt_ns(tp_json_num(l, "p99"), b2, sizeof b2),
                 fmt_bytes(tp_json_num(e, "size_bytes"), s, sizeof s));
    } else if (strcmp(c, "net loaded") == 0) {
        const json_t *iso = get(json_array_get(get(res, "isolated"), 0), "latency");
        const json_t *ld = get(json_array_get(get(res, "loaded"), 0), "latency");
        snprintf(out, cap, "p99 %s idle, %s under load", fmt_ns(tp_json_num(iso, "p99"), a, sizeof a),
                 fmt_ns(tp_json_num(ld, "p99"), b2, sizeof b2));
    } else if (strcmp(c, "net bw") == 0 || strcmp(c, "net bibw") == 0) {
        const char *k = strcmp(c, "net bw") == 0 ? "bw" : "bibw";
        double best = NAN, at = NAN;
        const json_t *e;
        size_t i;
        json_array_foreach(get(res, "sizes"), i, e) {
            if (isfinite(tp_json_num(e, k)) && !(tp_json_num(e, k) <= best)) {
                best = tp_json_num(e, k);
                at = tp_json_num(e, "size_bytes");
            }
        }
        snprintf(out, cap, "%s %s at %s", k, fmt_rate(best, a, sizeof a),
                 fmt_bytes(at, s, sizeof s));
    } else if (strcmp(c, "coll") == 0) {
        double bw;
        const json_t *e = peak_busbw(res, &bw);
        snprintf(out, cap, "%s, %.0f ranks: busbw %s at %s", tp_json_str(cfg, "op") ? tp_json_str(cfg, "op") : "?",
                 tp_json_num(cfg, "ranks"), fmt_rate(bw, a, sizeof a),
                 fmt_bytes(tp_json_num(e, "size_bytes"), s, sizeof s));
    } else if (strcmp(c, "io commit") == 0) {
        snprintf(out, cap, "commit p99 %s, %.0f commits/s",
                 fmt_ns(tp_json_num(get(res, "latency"), "p99"), a, sizeof a), tp_json_num(res, "commits_per_s"));
    } else if (strcmp(c, "io dataset") == 0) {
        snprintf(out, cap, "read p99 %s, %.0f samples/s",
                 fmt_ns(tp_json_num(get(res, "latency"), "p99"), a, sizeof a), tp_json_num(res, "samples_per_s"));
    } else if (strcmp(c, "io checkpoint") == 0) {
        snprintf(out, cap, "commit p50 %s, %s", fmt_ns(tp_json_num(get(res, "commit"), "p50"), a, sizeof a),
                 fmt_rate(tp_json_num(res, "throughput"), b2, sizeof b2));
    } else if (strcmp(c, "step") == 0) {
        const json_t *run = json_array_get(get(res, "runs"), 0), *st = get(run, "step_time");
        snprintf(out, cap, "step p50 %s, p99 %s; %s exposed comm",
                 fmt_ns(tp_json_num(st, "p50"), a, sizeof a), fmt_ns(tp_json_num(st, "p99"), b2, sizeof b2),
                 fmt_pct(tp_json_num(get(run, "summary"), "exposed_comm_fraction"), s, sizeof s));
    } else if (strcmp(c, "plan") == 0) {
        const json_t *best = json_array_get(get(res, "candidates"), 0);
        snprintf(out, cap, "cheapest at %.0f GPUs: %s, %s per run", tp_json_num(res, "gpus"),
                 tp_json_str(best, "name") ? tp_json_str(best, "name") : "?",
                 tp_fmt_money(tp_json_num(get(best, "cost"), "total"), a, sizeof a));
    } else if (strcmp(c, "check") == 0) {
        const json_t *sm = get(res, "summary");
        snprintf(out, cap, "%.0f fail, %.0f warn, %.0f pass, %.0f skip", tp_json_num(sm, "fail"),
                 tp_json_num(sm, "warn"), tp_json_num(sm, "pass"), tp_json_num(sm, "skip"));
    } else if (strcmp(c, "fleet") == 0) {
        const json_t *j = get(res, "judgement");
        snprintf(out, cap, "%.0f nodes: %.0f slow nodes, %.0f slow links, %.0f failed tests",
                 tp_json_num(res, "node_count"), tp_json_num(j, "slow_nodes"), tp_json_num(j, "slow_links"),
                 tp_json_num(res, "failed_tests"));
    }
}

/* ---- verdicts ---- */

static void box(struct svg_buf *b, const char *status, const char *name, const char *summary,
                const char *figure, double seconds)
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
    if (isfinite(seconds))
        tp__svg_printf(b, "<div class=\"small\">%.1f s</div>", seconds);
    tp__svg_emit(b, "</div>\n");
}

static const char *derived_status(const json_t *d)
{
    if (!doc_ok(d))
        return "FAIL";
    if (strcmp(command(d), "check") == 0) {
        double code = tp_json_num(get(get(d, "results"), "nagios"), "code");
        return code == 0 ? "PASS" : code == 2 ? "FAIL" : "WARN";
    }
    return "INFO";
}

static void section_verdicts(struct svg_buf *b, const json_t *const *docs, size_t n,
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
            box(b, tp_json_str(v, "status"), tp_json_str(v, "name"), tp_json_str(v, "summary"), tp_json_str(v, "figure"),
                tp_json_num(v, "seconds"));
        }
        tp__svg_emit(b, "</div>\n");
        if (n) {
            tp__svg_emit(b, "<h3>Key figures</h3>\n<table>\n");
            th(b, (const char *const[]){"command", "host", "key figure", NULL});
            for (size_t k = 0; k < n; k++) {
                key_figure(docs[k], fig, sizeof fig);
                tp__svg_printf(b, "<tr class=\"%s\">", doc_ok(docs[k]) ? "ok" : "FAIL");
                td(b, command(docs[k]));
                td(b, tp_json_str(get(docs[k], "provenance"), "host"));
                td(b, fig);
                tp__svg_emit(b, "</tr>\n");
            }
            tp__svg_emit(b, "</table>\n");
        }
    } else {
        for (size_t k = 0; k < n; k++) {
            key_figure(docs[k], fig, sizeof fig);
            box(b, derived_status(docs[k]), command(docs[k]), fig, NULL, NAN);
        }
        tp__svg_emit(
            b, "</div>\n<p class=\"small\">Derived from the documents: FAIL marks a failed run; "
               "check shows its Nagios status; INFO is a measurement without a threshold.</p>\n");
    }
    tp__svg_emit(b, "</section>\n");
}

/* ---- fleet (validate across an allocation) ---- */

/* A value's colour against the median: green at the median or better, amber
 * 20 % worse, red 50 % worse or more. */
static void heat(double v, double med, const char *better, char *buf, size_t cap)
{
    double worse = 0;
    if (med > 0 && v > 0 && better)
        worse = strcmp(better, "higher") == 0 ? (med - v) / med : (v - med) / med;
    double t = worse <= 0 ? 0 : worse >= 0.5 ? 1 : worse / 0.5;
    /* #2e7d32 -> #f0b400 -> #c62828 */
    static const double c[3][3] = {{46, 125, 50}, {240, 180, 0}, {198, 40, 40}};
    int k = t < 0.4 ? 0 : 1;
    double u = k == 0 ? t / 0.4 : (t - 0.4) / 0.6;
    snprintf(buf, cap, "#%02x%02x%02x", (int)(c[k][0] + u * (c[k + 1][0] - c[k][0])),
             (int)(c[k][1] + u * (c[k + 1][1] - c[k][1])),
             (int)(c[k][2] + u * (c[k + 1][2] - c[k][2])));
}

static const char *fmt_unit(double v, const char *unit, char *buf, size_t cap)
{
    if (unit && strcmp(unit, "ns") == 0)
        return fmt_ns(v, buf, cap);
    if (unit && strcmp(unit, "B/s") == 0)
        return fmt_rate(v, buf, cap);
    snprintf(buf, cap, "%.3g %s", v, unit ? unit : "");
    return buf;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define MATRIX_MAX 48 /* nodes drawn in a matrix; the JSON has them all */

/* The pairwise matrix of one metric: row = the node that measured (client),
 * column = the node measured against (server). */
static void fleet_matrix(struct svg_buf *b, const char *metric, const json_t *m,
                         const json_t *nodes)
{
    size_t n = json_array_size(nodes), nv = json_array_size(get(m, "values"));
    if (!n || !nv)
        return;
    size_t shown = n < MATRIX_MAX ? n : MATRIX_MAX;
    const char *unit = tp_json_str(m, "unit"), *better = tp_json_str(m, "better");
    double *vals = calloc(nv, sizeof *vals);
    if (!vals) {
        b->oom = true;
        return;
    }
    size_t i;
    const json_t *e;
    json_array_foreach(get(m, "values"), i, e)
        vals[i] = json_number_value(json_array_get(e, 2));
    qsort(vals, nv, sizeof *vals, cmp_dbl);
    double med = nv % 2 ? vals[nv / 2] : (vals[nv / 2 - 1] + vals[nv / 2]) / 2;
    double lo = vals[0], hi = vals[nv - 1];
    free(vals);
    char size[32], ms[48], los[48], his[48];
    fmt_bytes(tp_json_num(m, "size"), size, sizeof size);
    int cell = shown <= 8 ? 56 : shown <= 16 ? 34 : 14, left = 150, top = 110;
    int W = left + (int)shown * cell + 20, H = top + (int)shown * cell + 56;
    tp__svg_printf(b, "<figure><figcaption>");
    tp__svg_esc(b, metric);
    /* the unit is the document's word: escaped here and in every value
     * written with it (it went into the page raw; caught with
     * fuzz/fuzz_report) */
    tp__svg_printf(b, " at %s between every two nodes (", size);
    tp__svg_esc(b, unit && *unit ? unit : "no unit");
    tp__svg_emit(b, "; green at the median ");
    tp__svg_esc(b, fmt_unit(med, unit, ms, sizeof ms));
    tp__svg_emit(b, " or better, amber 20 % worse, red 50 % worse)</figcaption>\n");
    /* drawn at its own size: a small matrix is not blown up to the page */
    tp__svg_printf(b,
                   "<svg class=\"plot\" data-kind=\"matrix\" viewBox=\"0 0 %d %d\" role=\"img\" "
                   "style=\"max-width:%dpx\">\n",
                   W, H, W);
    tp__svg_printf(
        b,
        "<text class=\"at\" x=\"%d\" y=\"14\" text-anchor=\"middle\">server (measured against)"
        "</text>\n",
        left + (int)shown * cell / 2);
    tp__svg_printf(b,
                   "<text class=\"at\" x=\"12\" y=\"%d\" transform=\"rotate(-90 12 %d)\" "
                   "text-anchor=\"middle\">client (measured from)</text>\n",
                   top + (int)shown * cell / 2, top + (int)shown * cell / 2);
    for (size_t k = 0; k < shown; k++) {
        const char *label = tp_json_str(json_array_get(nodes, k), "label");
        tp__svg_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", left - 4,
                       top + (int)k * cell + cell / 2 + 4);
        tp__svg_esc(b, label);
        tp__svg_printf(b, "</text>\n<text x=\"%d\" y=\"%d\" transform=\"rotate(-50 %d %d)\">",
                       left + (int)k * cell + cell / 2, top - 4, left + (int)k * cell + cell / 2,
                       top - 4);
        tp__svg_esc(b, label);
        tp__svg_emit(b, "</text>\n");
    }
    /* a latency is a round trip, measured once per pair: both cells */
    bool both = strstr(metric, ".lat") != NULL;
    for (size_t q = 0; q < (both ? 2 * nv : nv); q++) {
        e = json_array_get(get(m, "values"), q % nv);
        json_int_t a = json_integer_value(json_array_get(e, q < nv ? 0 : 1));
        json_int_t c = json_integer_value(json_array_get(e, q < nv ? 1 : 0));
        double v = json_number_value(json_array_get(e, 2));
        if (a < 0 || c < 0 || (size_t)a >= shown || (size_t)c >= shown)
            continue;
        char col[16], vs[48];
        heat(v, med, better, col, sizeof col);
        fmt_unit(v, unit, vs, sizeof vs);
        tp__svg_printf(
            b,
            "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" stroke=\"#fff\">"
            "<title>",
            left + (int)c * cell, top + (int)a * cell, cell, cell, col);
        tp__svg_esc(b, tp_json_str(json_array_get(nodes, (size_t)a), "label"));
        tp__svg_emit(b, " &#8594; ");
        tp__svg_esc(b, tp_json_str(json_array_get(nodes, (size_t)c), "label"));
        tp__svg_emit(b, ": ");
        tp__svg_esc(b, vs);
        tp__svg_emit(b, "</title></rect>\n");
        if (cell >= 34) {
            /* the number in the cell, without its unit (the caption has it) */
            char num_only[48];
            snprintf(num_only, sizeof num_only, "%s", vs);
            num_only[strcspn(num_only, " ")] = 0;
            tp__svg_printf(b,
                           "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" style=\"fill:#fff;"
                           "font-size:10.5px\">%s</text>\n",
                           left + (int)c * cell + cell / 2, top + (int)a * cell + cell / 2 + 4,
                           num_only);
        }
    }
    for (size_t k = 0; k < shown; k++)
        tp__svg_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#e3e5e9\"/>\n",
                       left + (int)k * cell, top + (int)k * cell, cell, cell);
    tp__svg_printf(b, "<text x=\"%d\" y=\"%d\">lowest ", left, top + (int)shown * cell + 22);
    tp__svg_esc(b, fmt_unit(lo, unit, los, sizeof los));
    tp__svg_emit(b, ", median ");
    tp__svg_esc(b, ms);
    tp__svg_emit(b, ", highest ");
    tp__svg_esc(b, fmt_unit(hi, unit, his, sizeof his));
    if (shown < n)
        tp__svg_printf(b, "; the first %zu of %zu nodes", shown, n);
    tp__svg_emit(b, "</text>\n</svg></figure>\n");
}

static int status_order(const char *s);

static void fleet_doc(struct svg_buf *b, const json_t *d)
{
    const json_t *res = get(d, "results"), *j = get(res, "judgement");
    const json_t *nodes = get(res, "nodes");
    tp__svg_printf(
        b,
        "<p class=\"small\">%.0f nodes; %.0f rounds of pairs (the circle method: each node in "
        "one pair per round, bandwidth both ways); %.0f outliers (%.0f the worse way), "
        "%.0f slow nodes, %.0f slow links.</p>\n",
        tp_json_num(res, "node_count"), tp_json_num(res, "rounds"), tp_json_num(j, "outliers"),
        tp_json_num(j, "worse"), tp_json_num(j, "slow_nodes"), tp_json_num(j, "slow_links"));
    /* what the judgement says: slow nodes and links first */
    json_t *words = json_array();
    size_t i, k;
    const json_t *e, *o;
    json_array_foreach(get(j, "pairs"), i, e) {
        json_array_foreach(get(e, "slow_nodes"), k, o)
            json_array_append(words, (json_t *)get(o, "says"));
        json_array_foreach(get(e, "slow_links"), k, o)
            json_array_append(words, (json_t *)get(o, "says"));
    }
    json_array_foreach(get(j, "metrics"), i, e) {
        json_array_foreach(get(e, "outliers"), k, o)
            if (json_is_true(get(o, "worse")))
                json_array_append(words, (json_t *)get(o, "says"));
    }
    if (json_array_size(words)) {
        tp__svg_emit(b, "<ul class=\"words\">\n");
        json_array_foreach(words, i, e) {
            if (i == 40) {
                tp__svg_printf(b, "<li>... and %zu more (fleet.json)</li>\n",
                               json_array_size(words) - 40);
                break;
            }
            tp__svg_emit(b, "<li>");
            tp__svg_esc(b, json_string_value(e));
            tp__svg_emit(b, "</li>\n");
        }
        tp__svg_emit(b, "</ul>\n");
    }
    json_decref(words);
    /* each node's tests */
    const json_t *first = get(json_array_get(nodes, 0), "tests");
    if (json_array_size(first)) {
        tp__svg_emit(b, "<table>\n<tr><th>node</th>");
        json_array_foreach(first, i, e) {
            tp__svg_emit(b, "<th>");
            tp__svg_esc(b, tp_json_str(e, "test"));
            tp__svg_emit(b, "</th>");
        }
        tp__svg_emit(b, "</tr>\n");
        json_array_foreach(nodes, i, o) {
            tp__svg_emit(b, "<tr><td>");
            tp__svg_esc(b, tp_json_str(o, "label"));
            tp__svg_emit(b, "</td>");
            json_array_foreach(get(o, "tests"), k, e) {
                const char *st = tp_json_str(e, "status") ?: "?";
                /* the class only when it is one of ours: the document's word
                 * went into the attribute unescaped, a way to put markup into
                 * the page (caught with fuzz/fuzz_report) */
                tp__svg_printf(b, "<td><span class=\"st %s\">", status_order(st) < 4 ? st : "");
                tp__svg_esc(b, st);
                tp__svg_emit(b, "</span><span class=\"small\">");
                if (strcmp(st, "PASS") != 0)
                    tp__svg_esc(b, tp_json_str(e, "summary"));
                tp__svg_emit(b, "</span></td>");
            }
            tp__svg_emit(b, "</tr>\n");
        }
        tp__svg_emit(b, "</table>\n");
    }
    const char *metric;
    const json_t *m;
    json_object_foreach((json_t *)get(res, "matrix"), metric, m)
        fleet_matrix(b, metric, m, nodes);
}

static void section_fleet(struct svg_buf *b, const json_t *const *docs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!is_cmd(docs[i], "fleet") || !doc_ok(docs[i]))
            continue;
        tp__svg_emit(b, "<section id=\"fleet\">\n<h2>Fleet</h2>\n");
        fleet_doc(b, docs[i]);
        tp__svg_emit(b, "</section>\n");
        return;
    }
}

/* ---- latency ---- */

struct curve {
    tp_hist *h;
    double scale; /* value shown = recorded value x scale (RTT -> one-way: 0.5) */
    char label[64];
};

#define MAX_CURVES 12

/* The histograms a document offers, with what they are. Returns how many. */
static size_t doc_curves(const json_t *d, struct curve *cv, const char **what)
{
    const json_t *res = get(d, "results");
    const char *c = command(d);
    size_t n = 0;
    *what = NULL;
    if (strcmp(c, "net lat") == 0 || strcmp(c, "net loaded") == 0) {
        static const char *const secs[] = {"sizes", "isolated", "loaded"};
        *what = "one-way latency (RTT/2)";
        for (int s = 0; s < 3; s++) {
            size_t i;
            const json_t *e;
            json_array_foreach(get(res, secs[s]), i, e) {
                if (n >= MAX_CURVES || !json_is_object(get(e, "rtt_histogram")))
                    continue;
                tp_hist *h = tp_hist_from_json(get(e, "rtt_histogram"), NULL);
                if (!h || h->count == 0) {
                    tp_hist_free(h);
                    continue;
                }
                char sz[32];
                fmt_bytes(tp_json_num(e, "size_bytes"), sz, sizeof sz);
                cv[n].h = h;
                cv[n].scale = 0.5;
                snprintf(cv[n].label, sizeof cv[n].label, "%s%s%s", s ? secs[s] : "", s ? " " : "",
                         sz);
                n++;
            }
        }
        return n;
    }
    const char *key = NULL, *label = NULL;
    if (strcmp(c, "io commit") == 0) {
        key = "latency_histogram";
        label = tp_json_str(res, "sync") ? tp_json_str(res, "sync") : "commit";
        *what = "commit latency (write + sync)";
    } else if (strcmp(c, "io dataset") == 0) {
        key = "latency_histogram";
        label = "record read";
        *what = "read latency";
    } else if (strcmp(c, "io checkpoint") == 0) {
        key = "commit_histogram";
        label = "checkpoint commit";
        *what = "checkpoint commit latency";
    }
    if (!key || !json_is_object(get(res, key)))
        return 0;
    tp_hist *h = tp_hist_from_json(get(res, key), NULL);
    if (!h || h->count == 0) {
        tp_hist_free(h);
        return 0;
    }
    cv[0].h = h;
    cv[0].scale = 1;
    snprintf(cv[0].label, sizeof cv[0].label, "%s", label);
    return 1;
}

/* The non-empty buckets of h as (value, count): the bucket's midpoint clamped
 * to [min, max], the value percentiles report. */
static double bucket_value(const tp_hist *h, unsigned i)
{
    double v = (double)tp_hist_bucket_lo(i) + (double)(tp_hist_bucket_width(i) - 1) / 2;
    return fmin(fmax(v, (double)h->min), (double)h->max);
}

#define BINS_PER_DECADE 20

static void latency_plots(struct svg_buf *b, struct curve *cv, size_t nc, const char *what)
{
    double lo = INFINITY, hi = 0;
    for (size_t k = 0; k < nc; k++) {
        lo = fmin(lo, fmax((double)cv[k].h->min * cv[k].scale, 1));
        hi = fmax(hi, fmax((double)cv[k].h->max * cv[k].scale, 1));
    }
    struct svg_axis x = {.scale = SVG_LOG10};
    tp__svg_axis_fit(&x, lo, hi, false);
    const char *unit;
    tp__svg_time_unit(sqrt(x.lo * x.hi), &x.div, &unit);
    snprintf(x.title, sizeof x.title, "%s (%s, log scale)", what, unit);
    struct svg_legend lg = {0};
    for (size_t k = 0; k < nc; k++)
        tp__svg_legend_add(&lg, cv[k].label, tp__svg_color(k), false);

    /* CDF: a staircase through (value, fraction of samples <= value) */
    tp__svg_emit(b,
                 "<div class=\"pair\">\n<figure><figcaption>CDF: fraction of samples at or below a "
                 "latency</figcaption>\n");
    struct svg_plot p;
    p.x = x;
    p.y = (struct svg_axis){.scale = SVG_LIN, .div = 1};
    tp__svg_axis_fit(&p.y, 0, 1, true);
    snprintf(p.y.title, sizeof p.y.title, "cumulative fraction (0-1)");
    tp__svg_plot_begin(&p, b, "cdf", "latency CDF", 500, 330, &lg);
    size_t cap = 2 * TP_HIST_BUCKETS + 2;
    double *xs = malloc(cap * sizeof *xs), *ys = malloc(cap * sizeof *ys);
    size_t nbins = 0;
    double *bins = NULL;
    if (!xs || !ys) {
        b->oom = true;
        goto out;
    }
    for (size_t k = 0; k < nc; k++) {
        const tp_hist *h = cv[k].h;
        size_t m = 0;
        uint64_t cum = 0;
        xs[m] = (double)h->min * cv[k].scale;
        ys[m++] = 0;
        for (unsigned i = 0; i < TP_HIST_BUCKETS; i++) {
            if (!h->counts[i])
                continue;
            cum += h->counts[i];
            xs[m] = bucket_value(h, i) * cv[k].scale;
            ys[m++] = (double)cum / (double)h->count;
        }
        tp__svg_plot_line(&p, xs, ys, m, tp__svg_color(k), SVG_STEP);
    }
    tp__svg_plot_end(&p);
    tp__svg_emit(b, "</figure>\n");

    /* histogram: share of samples in log-spaced bins, drawn as steps */
    int b0 = (int)floor(log10(x.lo) * BINS_PER_DECADE + 1e-9);
    int b1 = (int)ceil(log10(x.hi) * BINS_PER_DECADE - 1e-9);
    nbins = (size_t)(b1 > b0 ? b1 - b0 : 1);
    bins = calloc(nc * nbins, sizeof *bins);
    if (!bins) {
        b->oom = true;
        goto out;
    }
    double top = 0;
    for (size_t k = 0; k < nc; k++) {
        const tp_hist *h = cv[k].h;
        for (unsigned i = 0; i < TP_HIST_BUCKETS; i++) {
            if (!h->counts[i])
                continue;
            double v = fmax(bucket_value(h, i) * cv[k].scale, x.lo);
            long j = lround(floor(log10(v) * BINS_PER_DECADE + 1e-9)) - b0;
            size_t jj = j < 0 ? 0 : (size_t)j >= nbins ? nbins - 1 : (size_t)j;
            bins[k * nbins + jj] += 100.0 * (double)h->counts[i] / (double)h->count;
        }
        for (size_t j = 0; j < nbins; j++)
            top = fmax(top, bins[k * nbins + j]);
    }
    tp__svg_emit(b, "<figure><figcaption>Histogram: share of samples per bin (20 bins a "
                    "decade)</figcaption>\n");
    p.x = x;
    p.y = (struct svg_axis){.scale = SVG_LIN, .div = 1};
    tp__svg_axis_fit(&p.y, 0, top, true);
    snprintf(p.y.title, sizeof p.y.title, "samples per bin (%%)");
    tp__svg_plot_begin(&p, b, "hist", "latency histogram", 500, 330, &lg);
    for (size_t k = 0; k < nc; k++) {
        size_t m = 0;
        for (size_t j = 0; j < nbins && m + 2 < cap; j++) {
            double e0 = pow(10, (double)(b0 + (int)j) / BINS_PER_DECADE);
            if (j == 0) {
                xs[m] = e0;
                ys[m++] = 0;
            }
            xs[m] = e0;
            ys[m++] = bins[k * nbins + j];
        }
        xs[m] = pow(10, (double)(b0 + (int)nbins) / BINS_PER_DECADE);
        ys[m++] = 0;
        tp__svg_plot_line(&p, xs, ys, m, tp__svg_color(k), SVG_STEP);
    }
    tp__svg_plot_end(&p);
    tp__svg_emit(b, "</figure>\n");
out:
    tp__svg_emit(b, "</div>\n");
    free(xs);
    free(ys);
    free(bins);
}

static void latency_table(struct svg_buf *b, const struct curve *cv, size_t nc)
{
    tp__svg_emit(b, "<table>\n");
    th(b, (const char *const[]){"series", "#samples", "#mean", "#p50", "#p99", "#p99.9", "#max",
                                NULL});
    char s[40];
    for (size_t k = 0; k < nc; k++) {
        const tp_hist *h = cv[k].h;
        tp__svg_emit(b, "<tr>");
        td(b, cv[k].label);
        snprintf(s, sizeof s, "%llu", (unsigned long long)h->count);
        tdn(b, s);
        tdn(b, fmt_ns(h->mean * cv[k].scale, s, sizeof s));
        static const double q[] = {50, 99, 99.9, 100};
        for (size_t i = 0; i < 4; i++)
            tdn(b, fmt_ns((double)tp_hist_percentile(h, q[i]) * cv[k].scale, s, sizeof s));
        tp__svg_emit(b, "</tr>\n");
    }
    tp__svg_emit(b, "</table>\n");
}

static void section_latency(struct svg_buf *b, const json_t *const *docs, size_t n)
{
    bool open = false;
    for (size_t i = 0; i < n; i++) {
        if (!doc_ok(docs[i]))
            continue;
        struct curve cv[MAX_CURVES];
        const char *what;
        size_t nc = doc_curves(docs[i], cv, &what);
        if (!nc)
            continue;
        if (!open) {
            tp__svg_emit(b,
                         "<section id=\"latency\">\n<h2>Latency</h2>\n<p class=\"small\">From the "
                         "documents' histograms (percentiles nearest-rank, within 0.4 %). Network "
                         "latency is one-way: the round trip halved.</p>\n");
            open = true;
        }
        char detail[96] = "";
        if (strncmp(command(docs[i]), "net ", 4) == 0)
            transport_name(docs[i], detail, sizeof detail);
        else
            snprintf(detail, sizeof detail, "%s",
                     tp_json_str(get(get(get(docs[i], "results"), "storage"), "fs"), "type") ?: "");
        doc_heading(b, docs[i], detail);
        latency_plots(b, cv, nc, what);
        latency_table(b, cv, nc);
        for (size_t k = 0; k < nc; k++)
            tp_hist_free(cv[k].h);
    }
    if (open)
        tp__svg_emit(b, "</section>\n");
}

/* ---- collectives ---- */

/* One series of the busbw plot: a document's entries of one backend (a run
 * with --backend trainpath,nccl has two). */
static void coll_label(const json_t *d, const char *backend, bool cuda, char *buf, size_t cap)
{
    const json_t *cfg = get(d, "config");
    bool nccl = strcmp(backend, "nccl") == 0;
    snprintf(buf, cap, "%s, %.0f ranks, %s%s%s", tp_json_str(cfg, "op") ?: "?", tp_json_num(cfg, "ranks"),
             nccl ? "NCCL" : tp_json_str(cfg, "transport") ?: "tcp",
             strcmp(backend, "mpi") == 0 ? ", MPI" : "",
             cuda && !nccl ? ", GPU memory staged" : "");
}

static void section_busbw(struct svg_buf *b, const json_t *const *docs, size_t n)
{
    size_t nd = 0;
    double xlo = INFINITY, xhi = 0, yhi = 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_cmd(docs[i], "coll"))
            continue;
        const json_t *e;
        size_t k;
        json_array_foreach(get(get(docs[i], "results"), "sizes"), k, e) {
            double s = tp_json_num(e, "size_bytes"), v = tp_json_num(e, "busbw");
            if (s > 0 && isfinite(v)) {
                xlo = fmin(xlo, s);
                xhi = fmax(xhi, s);
                yhi = fmax(yhi, v);
                nd++;
            }
        }
    }
    if (!nd)
        return;
    tp__svg_emit(
        b, "<section id=\"busbw\">\n<h2>Collective bus bandwidth</h2>\n<p class=\"small\">busbw "
           "= size / time x the nccl-tests factor (allreduce 2(n-1)/n); time is the slowest "
           "rank's, mean over iterations. GB/s = 1e9 B/s.</p>\n");
    struct svg_plot p;
    p.x = (struct svg_axis){.scale = SVG_LOG2, .fmt = SVG_SIZE};
    tp__svg_axis_fit(&p.x, xlo, xhi, false);
    snprintf(p.x.title, sizeof p.x.title, "message size (bytes, log scale)");
    p.y = (struct svg_axis){.scale = SVG_LIN, .div = 1e9};
    tp__svg_axis_fit(&p.y, 0, yhi, true);
    snprintf(p.y.title, sizeof p.y.title, "bus bandwidth (GB/s)");
    struct svg_legend lg = {0};
    char labels[SVG_MAX_SERIES][96];
    const json_t *which[SVG_MAX_SERIES];
    const char *backend[SVG_MAX_SERIES];
    for (size_t i = 0; i < n && lg.n < SVG_MAX_SERIES; i++) {
        if (!is_cmd(docs[i], "coll"))
            continue;
        const json_t *e;
        size_t k;
        json_array_foreach(get(get(docs[i], "results"), "sizes"), k, e) {
            const char *be = entry_backend(e);
            bool seen = false;
            for (size_t j = 0; j < lg.n; j++)
                seen |= which[j] == docs[i] && strcmp(backend[j], be) == 0;
            if (seen || lg.n >= SVG_MAX_SERIES)
                continue;
            which[lg.n] = docs[i];
            backend[lg.n] = be;
            coll_label(docs[i], be, tp_json_str(e, "mem") && strcmp(tp_json_str(e, "mem"), "cuda") == 0,
                       labels[lg.n], sizeof labels[0]);
            tp__svg_legend_add(&lg, labels[lg.n], tp__svg_color(lg.n), false);
        }
    }
    tp__svg_emit(b, "<figure><figcaption>Bus bandwidth against message size</figcaption>\n");
    tp__svg_plot_begin(&p, b, "busbw", "collective bus bandwidth", 960, 400, &lg);
    for (size_t k = 0; k < lg.n; k++) {
        const json_t *sizes = get(get(which[k], "results"), "sizes"), *e;
        size_t m = json_array_size(sizes), i;
        double *xs = calloc(m + 1, sizeof *xs), *ys = calloc(m + 1, sizeof *ys);
        if (xs && ys) {
            size_t used = 0;
            json_array_foreach(sizes, i, e) {
                if (strcmp(entry_backend(e), backend[k]) != 0)
                    continue;
                xs[used] = tp_json_num(e, "size_bytes");
                ys[used++] = tp_json_num(e, "busbw");
            }
            tp__svg_plot_line(&p, xs, ys, used, lg.color[k], SVG_MARKS);
        } else {
            b->oom = true;
        }
        free(xs);
        free(ys);
    }
    tp__svg_plot_end(&p);
    tp__svg_emit(b, "</figure>\n<table>\n");
    th(b, (const char *const[]){"collective", "#peak busbw", "#at size", "#p50 time there",
                                "#wrong results", "alpha-beta fits (time = alpha + beta x bytes)",
                                NULL});
    for (size_t k = 0; k < lg.n; k++) {
        const json_t *res = get(which[k], "results"), *e;
        double bw, wrong = 0;
        const json_t *best = peak_busbw_of(res, backend[k], &bw);
        size_t i;
        json_array_foreach(get(res, "sizes"), i, e) {
            if (strcmp(entry_backend(e), backend[k]) == 0 && isfinite(tp_json_num(e, "wrong")))
                wrong += tp_json_num(e, "wrong");
        }
        char s[64];
        tp__svg_emit(b, "<tr>");
        td(b, lg.name[k]);
        tdn(b, fmt_rate(bw, s, sizeof s));
        tdn(b, fmt_bytes(tp_json_num(best, "size_bytes"), s, sizeof s));
        tdn(b, fmt_ns(tp_json_num(get(best, "time"), "p50"), s, sizeof s));
        snprintf(s, sizeof s, "%.0f", wrong);
        tdn(b, s);
        tp__svg_emit(b, "<td>");
        bool first = true;
        json_array_foreach(get(res, "fit"), i, e) {
            char al[32], be[32];
            /* a fit belongs to its backend: nccl's algo is "nccl", mpi's "mpi" */
            const char *fa = tp_json_str(e, "algo") ?: "?";
            bool own = strcmp(backend[k], "trainpath") == 0
                           ? strcmp(fa, "nccl") != 0 && strcmp(fa, "mpi") != 0
                           : strcmp(fa, backend[k]) == 0;
            if (!own)
                continue;
            /* beta in ns/B is 1/bandwidth: shown as the bandwidth it means */
            double beta = tp_json_num(e, "beta");
            tp__svg_printf(b, "%s", first ? "" : "<br>");
            first = false;
            tp__svg_esc(b, tp_json_str(e, "algo") ?: "?");
            tp__svg_printf(b, ": alpha %s, 1/beta %s (%.0f%% max error)",
                           fmt_ns(tp_json_num(e, "alpha"), al, sizeof al),
                           fmt_rate(beta > 0 ? 1e9 / beta : NAN, be, sizeof be),
                           100 * tp_json_num(e, "max_rel_error"));
        }
        tp__svg_emit(b, "</td></tr>\n");
    }
    tp__svg_emit(b, "</table>\n</section>\n");
}

/* ---- step ---- */

static double cell(const json_t *series, const char *key, size_t step, size_t rank)
{
    return json_number_value(json_array_get(json_array_get(get(series, key), step), rank));
}

/* The slowest rank is the one the others wait for: least straggler_wait in
 * total (without that series, the largest total step). */
static size_t slowest_rank(const json_t *series, size_t steps, size_t ranks)
{
    bool have = json_array_size(get(series, "straggler_wait")) == steps;
    size_t best = 0;
    double best_v = 0;
    for (size_t r = 0; r < ranks; r++) {
        double v = 0;
        for (size_t s = 0; s < steps; s++)
            v += have ? -cell(series, "straggler_wait", s, r) : cell(series, "step", s, r);
        if (r == 0 || v > best_v) {
            best = r;
            best_v = v;
        }
    }
    return best;
}

static void step_doc(struct svg_buf *b, const json_t *d)
{
    const json_t *run = json_array_get(get(get(d, "results"), "runs"), 0);
    const json_t *series = get(run, "series");
    size_t steps = json_array_size(get(series, "step"));
    size_t ranks = json_array_size(json_array_get(get(series, "step"), 0));
    char detail[128];
    snprintf(detail, sizeof detail, "%s, %zu ranks, %zu steps",
             tp_json_str(get(d, "config"), "preset") ?: "custom", ranks, steps);
    doc_heading(b, d, detail);
    if (!steps || !ranks) {
        tp__svg_emit(b, "<p class=\"small\">No per-step series in this document.</p>\n");
        return;
    }
    static const char *const keys[] = {"compute", "comm_exposed", "data_wait", "ckpt_stall"};
    static const char *const names[] = {"compute", "exposed comm", "data wait", "checkpoint stall"};
    static const char *const colors[] = {"#4e79a7", "#e15759", "#f28e2b", "#59a14f"};
    size_t r = slowest_rank(series, steps, ranks);
    double *v[4] = {0}, *job = calloc(steps + 1, sizeof *job), *xs = calloc(steps + 1, sizeof *xs);
    bool oom = !job || !xs;
    for (int k = 0; k < 4 && !oom; k++)
        oom = !(v[k] = calloc(steps, sizeof *v[k]));
    if (oom) {
        b->oom = true;
        goto out;
    }
    double top = 0;
    for (size_t s = 0; s < steps; s++) {
        double sum = 0;
        for (int k = 0; k < 4; k++) {
            v[k][s] = cell(series, keys[k], s, r);
            sum += v[k][s];
        }
        for (size_t q = 0; q < ranks; q++)
            job[s] = fmax(job[s], cell(series, "step", s, q));
        top = fmax(top, fmax(sum, job[s]));
        xs[s] = (double)s;
    }
    job[steps] = job[steps - 1];
    xs[steps] = (double)steps;
    struct svg_plot p;
    p.x = (struct svg_axis){.scale = SVG_LIN, .div = 1};
    tp__svg_axis_fit(&p.x, 0, (double)steps, true);
    p.x.hi = (double)steps; /* bars fill the width */
    snprintf(p.x.title, sizeof p.x.title, "step (index, 0-based)");
    p.y = (struct svg_axis){.scale = SVG_LIN, .div = 1e6};
    tp__svg_axis_fit(&p.y, 0, top, true);
    snprintf(p.y.title, sizeof p.y.title, "time per step (ms)");
    struct svg_legend lg = {0};
    for (int k = 0; k < 4; k++)
        tp__svg_legend_add(&lg, names[k], colors[k], true);
    tp__svg_legend_add(&lg, "job step (slowest of all ranks)", "#222", false);
    tp__svg_printf(
        b,
        "<figure><figcaption>Where the step goes, rank %zu (the slowest: the others wait for "
        "it)</figcaption>\n",
        r);
    tp__svg_plot_begin(&p, b, "step", "step breakdown", 960, 380, &lg);
    tp__svg_plot_stack(&p, (const double *const *)v, 4, steps, colors);
    tp__svg_plot_line(&p, xs, job, steps + 1, "#222", SVG_STEP);
    tp__svg_plot_end(&p);
    tp__svg_emit(b, "</figure>\n<table>\n");
    th(b, (const char *const[]){"#step p50", "#step p99", "#max", "#compute", "#exposed comm",
                                "#data wait", "#checkpoint", "#amplification", "#goodput", NULL});
    const json_t *st = get(run, "step_time"), *sm = get(run, "summary");
    char s[48];
    tp__svg_emit(b, "<tr>");
    tdn(b, fmt_ns(tp_json_num(st, "p50"), s, sizeof s));
    tdn(b, fmt_ns(tp_json_num(st, "p99"), s, sizeof s));
    tdn(b, fmt_ns(tp_json_num(st, "max"), s, sizeof s));
    tdn(b, fmt_pct(tp_json_num(sm, "compute_fraction"), s, sizeof s));
    tdn(b, fmt_pct(tp_json_num(sm, "exposed_comm_fraction"), s, sizeof s));
    tdn(b, fmt_pct(tp_json_num(sm, "data_wait_fraction"), s, sizeof s));
    tdn(b, fmt_pct(tp_json_num(sm, "ckpt_overhead_fraction"), s, sizeof s));
    snprintf(s, sizeof s, "%.3f", tp_json_num(sm, "amplification"));
    tdn(b, s);
    snprintf(s, sizeof s, "%.0f %s", tp_json_num(sm, "goodput"),
             tp_json_str(get(sm, "goodput"), "unit") ?: "samples/s");
    tdn(b, s);
    tp__svg_emit(b, "</tr>\n</table>\n");
out:
    for (int k = 0; k < 4; k++)
        free(v[k]);
    free(job);
    free(xs);
}

static void section_step(struct svg_buf *b, const json_t *const *docs, size_t n)
{
    bool open = false;
    for (size_t i = 0; i < n; i++) {
        if (!is_cmd(docs[i], "step"))
            continue;
        if (!open) {
            tp__svg_emit(
                b, "<section id=\"step\">\n<h2>Training step</h2>\n<p class=\"small\">Per step, "
                   "the slowest rank's data wait, compute, exposed communication and checkpoint "
                   "stall (stacked; their sum is the step but for the update); the line is the "
                   "job's step, the slowest rank's. Fractions are over all ranks and "
                   "steps.</p>\n");
            open = true;
        }
        step_doc(b, docs[i]);
    }
    if (open)
        tp__svg_emit(b, "</section>\n");
}

/* ---- plan ---- */

/* step time (or cost) per candidate against GPUs, from the sweep */
static void sweep_plot(struct svg_buf *b, const json_t *res, bool cost)
{
    const json_t *sweep = get(res, "sweep");
    size_t ns = json_array_size(sweep);
    const json_t *first = get(json_array_get(sweep, 0), "candidates");
    size_t nc = json_array_size(first);
    if (ns == 0 || nc == 0)
        return;
    if (nc > SVG_MAX_SERIES)
        nc = SVG_MAX_SERIES;
    double *xs = calloc(ns, sizeof *xs), *ys = calloc(ns * nc, sizeof *ys);
    if (!xs || !ys) {
        b->oom = true;
        goto out;
    }
    double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
    struct svg_legend lg = {0};
    for (size_t c = 0; c < nc; c++)
        tp__svg_legend_add(&lg, tp_json_str(json_array_get(first, c), "name") ?: "?",
                           tp__svg_color(c), false);
    for (size_t s = 0; s < ns; s++) {
        const json_t *e = json_array_get(sweep, s), *cand;
        xs[s] = tp_json_num(e, "gpus");
        if (xs[s] > 0) {
            xlo = fmin(xlo, xs[s]);
            xhi = fmax(xhi, xs[s]);
        }
        for (size_t c = 0; c < nc; c++)
            ys[c * ns + s] = NAN;
        size_t k;
        json_array_foreach(get(e, "candidates"), k, cand) {
            for (size_t c = 0; c < nc; c++) {
                const char *nm = tp_json_str(cand, "name");
                if (!nm || strcmp(nm, lg.name[c]) != 0)
                    continue;
                double y = cost ? tp_json_num(cand, "cost") : tp_json_num(cand, "step_s") * 1e9;
                ys[c * ns + s] = y;
                if (isfinite(y) && y > 0) {
                    ylo = fmin(ylo, y);
                    yhi = fmax(yhi, y);
                }
            }
        }
    }
    struct svg_plot p;
    p.x = (struct svg_axis){.scale = SVG_LOG2, .div = 1};
    tp__svg_axis_fit(&p.x, xlo, xhi, false);
    snprintf(p.x.title, sizeof p.x.title, "GPUs (count, log scale)");
    /* a wide range reads on a log axis; a narrow one on a linear axis that
     * does not start at zero, so candidates a few percent apart separate */
    bool log_y = yhi > 10 * ylo;
    p.y = (struct svg_axis){.scale = log_y ? SVG_LOG10 : SVG_LIN, .div = 1};
    const char *unit = "$";
    if (!cost)
        tp__svg_time_unit(log_y ? sqrt(ylo * yhi) : yhi, &p.y.div, &unit);
    tp__svg_axis_fit(&p.y, ylo, yhi, false);
    snprintf(p.y.title, sizeof p.y.title, "%s (%s%s)", cost ? "cost per run" : "step time", unit,
             log_y ? ", log scale" : "");
    tp__svg_printf(b, "<figure><figcaption>%s against scale, from the sweep</figcaption>\n",
                   cost ? "Cost per run" : "Step time");
    tp__svg_plot_begin(&p, b, "plan", cost ? "cost per run against GPUs" : "step time against GPUs",
                       500, 330, &lg);
    for (size_t c = 0; c < nc; c++)
        tp__svg_plot_line(&p, xs, ys + c * ns, ns, lg.color[c], SVG_MARKS);
    tp__svg_plot_end(&p);
    tp__svg_emit(b, "</figure>\n");
out:
    free(xs);
    free(ys);
}

static void plan_doc(struct svg_buf *b, const json_t *d)
{
    const json_t *res = get(d, "results"), *c, *w;
    char detail[128];
    snprintf(detail, sizeof detail, "%s at %.0f GPUs on %.0f nodes",
             tp_json_str(get(get(d, "config"), "workload"), "name") ?: "workload", tp_json_num(res, "gpus"),
             tp_json_num(res, "nodes"));
    doc_heading(b, d, detail);
    tp__svg_emit(b, "<table>\n");
    th(b, (const char *const[]){"#rank", "candidate", "algorithm", "#step", "#step p99",
                                "#exposed comm", "#checkpoint every", "#time to train",
                                "#cost per run", NULL});
    size_t i;
    char s[64];
    json_array_foreach(get(res, "candidates"), i, c) {
        tp__svg_emit(b, "<tr>");
        snprintf(s, sizeof s, "%.0f", tp_json_num(c, "rank"));
        tdn(b, s);
        td(b, tp_json_str(c, "name"));
        td(b, tp_json_str(c, "algorithm"));
        tdn(b, fmt_ns(tp_json_num(c, "step") * 1e9, s, sizeof s));
        tdn(b, fmt_ns(tp_json_num(c, "step_p99") * 1e9, s, sizeof s));
        tdn(b, fmt_pct(tp_json_num(c, "exposed_fraction"), s, sizeof s));
        tdn(b, tp_fmt_duration_s(tp_json_num(get(c, "checkpoint"), "interval"), s, sizeof s));
        tdn(b, tp_fmt_duration_s(tp_json_num(c, "time_to_train"), s, sizeof s));
        tdn(b, tp_fmt_money(tp_json_num(get(c, "cost"), "total"), s, sizeof s));
        tp__svg_emit(b, "</tr>\n");
    }
    tp__svg_emit(b, "</table>\n");
    if (json_array_size(get(res, "words"))) {
        tp__svg_emit(b, "<ul class=\"words\">\n");
        json_array_foreach(get(res, "words"), i, w) {
            tp__svg_emit(b, "<li>");
            tp__svg_esc(b, json_string_value(w));
            tp__svg_emit(b, "</li>\n");
        }
        tp__svg_emit(b, "</ul>\n");
    }
    if (json_array_size(get(res, "sweep"))) {
        tp__svg_emit(b, "<div class=\"pair\">\n");
        sweep_plot(b, res, false);
        sweep_plot(b, res, true);
        tp__svg_emit(b, "</div>\n");
    }
}

static void section_plan(struct svg_buf *b, const json_t *const *docs, size_t n)
{
    bool open = false;
    for (size_t i = 0; i < n; i++) {
        if (!is_cmd(docs[i], "plan") || !json_is_array(get(get(docs[i], "results"), "candidates")))
            continue;
        if (!open) {
            tp__svg_emit(
                b, "<section id=\"plan\">\n<h2>Plan</h2>\n<p class=\"small\">Candidates ranked by "
                   "cost per run at the planned scale; step times are model means with the "
                   "slowest rank, exposed communication, rare stalls and data stalls.</p>\n");
            open = true;
        }
        plan_doc(b, docs[i]);
    }
    if (open)
        tp__svg_emit(b, "</section>\n");
}

/* ---- check ---- */

static int status_order(const char *s)
{
    static const char *const order[] = {"FAIL", "WARN", "PASS", "SKIP"};
    for (int i = 0; i < 4; i++)
        if (s && strcmp(s, order[i]) == 0)
            return i;
    return 4;
}

static void check_doc(struct svg_buf *b, const json_t *d)
{
    const json_t *res = get(d, "results"), *sm = get(res, "summary"), *f;
    char detail[160];
    snprintf(detail, sizeof detail, "%s: %.0f fail, %.0f warn, %.0f pass, %.0f skip",
             tp_json_str(get(res, "nagios"), "word") ?: "?", tp_json_num(sm, "fail"), tp_json_num(sm, "warn"),
             tp_json_num(sm, "pass"), tp_json_num(sm, "skip"));
    doc_heading(b, d, detail);
    tp__svg_emit(b, "<table>\n");
    th(b, (const char *const[]){"status", "id", "plane", "severity", "evidence", NULL});
    const json_t *findings = get(res, "findings");
    /* FAIL first, then WARN, PASS, SKIP; the rules' order within each */
    for (int o = 0; o <= 4; o++) {
        size_t i;
        json_array_foreach(findings, i, f) {
            const char *st = tp_json_str(f, "status");
            if (status_order(st) != o)
                continue;
            bool bad = o < 2;
            tp__svg_printf(b, "<tr class=\"%s\"><td><span class=\"st %s\">", bad ? st : "",
                           o < 4 ? st : "");
            tp__svg_esc(b, st ? st : "?");
            tp__svg_emit(b, "</span></td>");
            tp__svg_emit(b, "<td><code>");
            tp__svg_esc(b, tp_json_str(f, "id"));
            tp__svg_emit(b, "</code></td>");
            td(b, tp_json_str(f, "plane"));
            td(b, tp_json_str(f, "severity"));
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

static void section_check(struct svg_buf *b, const json_t *const *docs, size_t n)
{
    bool open = false;
    for (size_t i = 0; i < n; i++) {
        if (!is_cmd(docs[i], "check"))
            continue;
        if (!open) {
            tp__svg_emit(b, "<section id=\"check\">\n<h2>Checks</h2>\n");
            open = true;
        }
        check_doc(b, docs[i]);
    }
    if (open)
        tp__svg_emit(b, "</section>\n");
}

/* ---- the documents ---- */

static void section_documents(struct svg_buf *b, const json_t *const *docs, size_t n)
{
    if (!n)
        return;
    tp__svg_emit(b, "<section id=\"documents\">\n<h2>Documents</h2>\n<table>\n");
    th(b,
       (const char *const[]){"#", "command", "host", "started (UTC)", "trainpath", "status", NULL});
    for (size_t i = 0; i < n; i++) {
        const json_t *d = docs[i], *stj = get(d, "status");
        char s[32];
        snprintf(s, sizeof s, "%zu", i + 1);
        tp__svg_printf(b, "<tr class=\"%s\">", doc_ok(d) ? "ok" : "FAIL");
        tdn(b, s);
        td(b, command(d));
        td(b, tp_json_str(get(d, "provenance"), "host"));
        td(b, tp_json_str(d, "started_utc"));
        td(b, tp_json_str(get(d, "tool"), "version"));
        tp__svg_emit(b, "<td>");
        if (doc_ok(d)) {
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
        if (!st || status_order(st) > 3)
            return tp_error_set(err, TP_EUSAGE,
                                "html report: verdicts[%zu] (%s): status must be PASS, WARN, "
                                "FAIL or SKIP, not %s",
                                i, tp_json_str(v, "name"), st ? st : "missing");
        if (get(v, "summary") && !json_is_string(get(v, "summary")))
            return tp_error_set(err, TP_EUSAGE, "html report: verdicts[%zu]: summary: not a string",
                                i);
    }
    return 0;
}

int tp_html_render(const json_t *const *docs, size_t n, const json_t *verdicts, char **out,
                   size_t *len, tp_error *err)
{
    int rc = check_inputs(docs, n, verdicts, err);
    if (rc)
        return rc;
    struct svg_buf b = {0};
    tp__svg_emit(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                     "<title>trainpath report</title>\n<style>\n");
    tp__svg_emit(&b, css);
    tp__svg_emit(&b, "</style>\n</head>\n<body>\n<main>\n<header>\n<h1>trainpath report</h1>\n"
                     "<p class=\"meta\">");
    /* what the page covers: the documents' hosts and the span of their start times */
    const char *first = NULL, *last = NULL;
    size_t failed = 0;
    for (size_t i = 0; i < n; i++) {
        const char *t = tp_json_str(docs[i], "started_utc");
        if (t && (!first || strcmp(t, first) < 0))
            first = t;
        if (t && (!last || strcmp(t, last) > 0))
            last = t;
        failed += !doc_ok(docs[i]);
    }
    tp__svg_printf(&b, "%zu result document%s", n, n == 1 ? "" : "s");
    if (failed)
        tp__svg_printf(&b, " (%zu failed)", failed);
    for (size_t i = 0, shown = 0; i < n && shown < 4; i++) {
        const char *h = tp_json_str(get(docs[i], "provenance"), "host");
        bool seen = false;
        for (size_t k = 0; k < i && h && !seen; k++) {
            const char *o = tp_json_str(get(docs[k], "provenance"), "host");
            seen = o && strcmp(o, h) == 0;
        }
        if (!h || seen)
            continue;
        tp__svg_emit(&b, shown++ ? ", " : " from ");
        tp__svg_esc(&b, h);
    }
    if (first) {
        tp__svg_emit(&b, "; started ");
        tp__svg_esc(&b, first);
        if (last && strcmp(last, first) != 0) {
            tp__svg_emit(&b, " to ");
            tp__svg_esc(&b, last);
        }
    }
    tp__svg_emit(&b, "</p>\n</header>\n");
    section_verdicts(&b, docs, n, verdicts);
    section_fleet(&b, docs, n);
    section_latency(&b, docs, n);
    section_busbw(&b, docs, n);
    section_step(&b, docs, n);
    section_plan(&b, docs, n);
    section_check(&b, docs, n);
    section_documents(&b, docs, n);
    if (!n)
        tp__svg_emit(&b, "<p>No result documents.</p>\n");
    tp__svg_emit(&b, "</main>\n</body>\n</html>\n");
    if (b.oom) {
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
