/* The pieces every section of the HTML report uses (html_int.h): what a
 * document is and the rows its figures come from, figures in the page's
 * words ("-" for one that is not there), table cells and headings. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp/json.h"
#include "tp/units.h"

#include "html_int.h"
#include "report_int.h"

/* ---- reading documents ---- */

bool tp__html_ok(const struct html_doc *x)
{
    return tp__html_val(x, "run.ok", NULL) == 1;
}

const char *tp__html_command(const struct html_doc *x)
{
    const char *c = tp_json_str(x->d, "command");
    return c ? c : "?";
}

bool tp__html_is(const struct html_doc *x, const char *c)
{
    /* ok, or a fleet that failed on its verdict: its figures stand */
    return tp__report_figures_kept(x->d) && strcmp(tp__html_command(x), c) == 0;
}

const json_t *tp__html_row(const struct html_doc *x, const char *metric, const json_t *like)
{
    size_t i;
    const json_t *row;
    json_array_foreach(x->rows, i, row) {
        const char *m = tp_json_str(row, "metric");
        if (m && strcmp(m, metric) == 0 &&
            (!like || json_equal(get(row, "labels"), get(like, "labels"))))
            return row;
    }
    return NULL;
}

double tp__html_val(const struct html_doc *x, const char *metric, const json_t *like)
{
    return tp_json_num(tp__html_row(x, metric, like), "value");
}

const char *tp__html_label(const json_t *row, const char *key)
{
    return tp_json_str(get(row, "labels"), key);
}

double tp__html_label_num(const json_t *row, const char *key)
{
    const char *s = tp__html_label(row, key);
    return s ? strtod(s, NULL) : NAN;
}

/* ---- number formatting ---- */

const char *tp__html_fmt_ns(double ns, char *buf, size_t cap)
{
    if (!isfinite(ns))
        return snprintf(buf, cap, "-"), buf;
    return tp_fmt_ns(ns, buf, cap);
}

const char *tp__html_fmt_rate(double Bps, char *buf, size_t cap)
{
    if (!isfinite(Bps))
        return snprintf(buf, cap, "-"), buf;
    return tp_fmt_rate(Bps, buf, cap);
}

const char *tp__html_fmt_bytes(double bytes, char *buf, size_t cap)
{
    if (!isfinite(bytes) || bytes < 0)
        return snprintf(buf, cap, "-"), buf;
    if (bytes >= 0x1p63)
        return snprintf(buf, cap, "%.3g B", bytes), buf;
    size_t k = strlen(tp_fmt_size((uint64_t)llround(bytes), buf, cap));
    snprintf(buf + k, cap - k, " B");
    return buf;
}

const char *tp__html_fmt_pct(double frac, char *buf, size_t cap)
{
    if (!isfinite(frac))
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "%.1f %%", frac * 100);
    return buf;
}

void tp__html_th(struct svg_buf *b, const char *const *cols)
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

void tp__html_td(struct svg_buf *b, const char *s)
{
    tp__svg_emit(b, "<td>");
    tp__svg_esc(b, s);
    tp__svg_emit(b, "</td>");
}

void tp__html_tdn(struct svg_buf *b, const char *s)
{
    tp__svg_emit(b, "<td class=\"n\">");
    tp__svg_esc(b, s);
    tp__svg_emit(b, "</td>");
}

void tp__html_heading(struct svg_buf *b, const struct html_doc *x, const char *detail)
{
    tp__svg_emit(b, "<h3>");
    tp__svg_esc(b, tp__html_command(x));
    if (detail && *detail) {
        tp__svg_emit(b, " &middot; ");
        tp__svg_esc(b, detail);
    }
    const char *host = tp_json_str(get(x->d, "provenance"), "host");
    if (host) {
        tp__svg_emit(b, " <span class=\"small\">on ");
        tp__svg_esc(b, host);
        tp__svg_emit(b, "</span>");
    }
    tp__svg_emit(b, "</h3>\n");
}

int tp__html_status_order(const char *s)
{
    static const char *const order[TP__HTML_NSTATUS] = {"FAIL", "UNKNOWN", "WARN", "PASS",
                                                         "SKIP"};
    for (int i = 0; i < TP__HTML_NSTATUS; i++)
        if (s && strcmp(s, order[i]) == 0)
            return i;
    return TP__HTML_NSTATUS;
}
