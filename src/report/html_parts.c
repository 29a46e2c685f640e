/* The pieces every section of the HTML report uses (html_int.h): what a
 * document is, figures in the page's words, table cells and headings. A
 * figure that is not there prints as "-", never as "nan". */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tp/json.h"
#include "tp/units.h"

#include "html_int.h"

/* ---- reading documents ---- */

bool tp__html_ok(const json_t *d)
{
    return json_is_true(get(get(d, "status"), "ok"));
}

const char *tp__html_command(const json_t *d)
{
    const char *c = tp_json_str(d, "command");
    return c ? c : "?";
}

bool tp__html_is(const json_t *d, const char *c)
{
    return tp__html_ok(d) && strcmp(tp__html_command(d), c) == 0;
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

/* A heading that names the document: command, a detail, the host. */
void tp__html_heading(struct svg_buf *b, const json_t *d, const char *detail)
{
    tp__svg_emit(b, "<h3>");
    tp__svg_esc(b, tp__html_command(d));
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

int tp__html_status_order(const char *s)
{
    static const char *const order[] = {"FAIL", "WARN", "PASS", "SKIP"};
    for (int i = 0; i < 4; i++)
        if (s && strcmp(s, order[i]) == 0)
            return i;
    return 4;
}
