/* The HTML report's counters section (docs/counters.md): per document that
 * read its node's NIC, RDMA, TCP and PCIe counters around the run, a block
 * with the window, each cause flagged with its sentence and evidence, the
 * counters that point at a cause, the PCIe links below their maximum or
 * changed, what reset and which devices went or came, the path's traffic
 * (folded away), and for net each connection's own TCP counters; and the
 * marker a document's key figure carries when its counters name a cause.
 * Counters never change a document's status: they say why a figure may be
 * low. Every string from a document is escaped. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "tp/json.h"

#include "html_int.h"

/* items of a list shown inline (a cause's evidence, resets, devices) and
 * rows of a table before "+N more" */
#define INLINE_MAX 4
#define ROWS_MAX 16

static const json_t *counters_of(const struct html_doc *x)
{
    const json_t *c = get(get(x->d, "results"), "counters");
    return json_is_object(c) ? c : NULL;
}

/* results.connections (net's), NULL when there are none */
static const json_t *connections_of(const struct html_doc *x)
{
    const json_t *c = get(get(x->d, "results"), "connections");
    return json_array_size(c) ? c : NULL;
}

/* An integer of a document as text ("-" when absent): counters are
 * integers, a real is shown as one. */
static const char *int_text(const json_t *v, char *buf, size_t cap)
{
    if (json_is_integer(v))
        snprintf(buf, cap, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, cap, "%.6g", json_real_value(v));
    else
        snprintf(buf, cap, "-");
    return buf;
}

/* bytes in decimal units, as the page's GB/s: "1.91 GB" */
static const char *bytes_text(double v, char *buf, size_t cap)
{
    static const char *const u[] = {"B", "kB", "MB", "GB", "TB", "PB"};
    int k = 0;
    while (k < 5 && fabs(v) >= 1000) {
        v /= 1000;
        k++;
    }
    snprintf(buf, cap, k ? "%.3g %s" : "%.0f %s", v, u[k]);
    return buf;
}

/* a PCIe speed in MT/s as "16 GT/s", "-" when absent */
static const char *gts_text(const json_t *mts, char *buf, size_t cap)
{
    if (json_is_number(mts))
        snprintf(buf, cap, "%g GT/s", json_number_value(mts) / 1000);
    else
        snprintf(buf, cap, "-");
    return buf;
}

static const char *width_text(const json_t *w, char *buf, size_t cap)
{
    char n[32];
    if (json_is_number(w))
        snprintf(buf, cap, "x%s", int_text(w, n, sizeof n));
    else
        snprintf(buf, cap, "-");
    return buf;
}

/* Up to INLINE_MAX entries of {dev, name} with what each has: "+delta",
 * "before -> after" or a PCIe link's "speed xwidth"; then "+N more". */
static void items(struct svg_buf *b, const json_t *list)
{
    size_t i;
    const json_t *e;
    char s[64];
    json_array_foreach(list, i, e) {
        if (i == INLINE_MAX) {
            tp__svg_printf(b, ", +%zu more", json_array_size(list) - i);
            break;
        }
        if (i)
            tp__svg_emit(b, ", ");
        tp__svg_emit(b, "<code>");
        tp__svg_esc(b, json_is_string(e) ? json_string_value(e) : tp_json_str(e, "dev"));
        if (tp_json_str(e, "name")) {
            tp__svg_emit(b, " ");
            tp__svg_esc(b, tp_json_str(e, "name"));
        }
        if (get(e, "delta")) {
            tp__svg_printf(b, " +%s", int_text(get(e, "delta"), s, sizeof s));
        } else if (get(e, "before")) {
            tp__svg_printf(b, " %s", int_text(get(e, "before"), s, sizeof s));
            tp__svg_printf(b, " &rarr; %s", int_text(get(e, "after"), s, sizeof s));
        }
        if (get(e, "speed_mts") || get(e, "width")) {
            tp__svg_emit(b, " ");
            tp__svg_esc(b, gts_text(get(e, "speed_mts"), s, sizeof s));
            tp__svg_emit(b, " ");
            tp__svg_esc(b, width_text(get(e, "width"), s, sizeof s));
        }
        tp__svg_emit(b, "</code>");
    }
}

/* a cause's name, "?" when it has none */
static const char *cause_name(const json_t *e)
{
    const char *c = tp_json_str(e, "cause");
    return c ? c : "?";
}

/* ---- the block's parts ---- */

static void causes(struct svg_buf *b, const json_t *c)
{
    size_t i;
    const json_t *e;
    json_array_foreach(get(c, "causes"), i, e) {
        tp__svg_emit(b, "<div class=\"cause\"><span class=\"st WARN\">");
        tp__svg_esc(b, cause_name(e));
        tp__svg_emit(b, "</span> ");
        tp__svg_esc(b, tp_json_str(e, "text"));
        tp__svg_emit(b, "<div class=\"small\">evidence: ");
        items(b, get(e, "evidence"));
        tp__svg_emit(b, "</div></div>\n");
    }
    if (!json_array_size(get(c, "causes")))
        tp__svg_emit(b, "<p class=\"small\">No cause found: no counter that can slow a link "
                        "moved.</p>\n");
}

/* a changed counter of the traffic table (of the path's device, or every
 * device's without a path) or of the table of those that matter (neither
 * traffic nor other) */
static bool wanted(const json_t *e, bool traffic, const char *path)
{
    const char *cls = tp_json_str(e, "class"), *dev = tp_json_str(e, "dev");
    if (!cls)
        return false;
    if (traffic)
        return strcmp(cls, "traffic") == 0 && (!path || (dev && strcmp(dev, path) == 0));
    return strcmp(cls, "traffic") != 0 && strcmp(cls, "other") != 0;
}

static size_t count_wanted(const json_t *changed, bool traffic, const char *path)
{
    size_t i, k = 0;
    const json_t *e;
    json_array_foreach(changed, i, e) {
        k += wanted(e, traffic, path);
    }
    return k;
}

static void changed_table(struct svg_buf *b, const json_t *changed, bool traffic, const char *path)
{
    size_t i, shown = 0, total = count_wanted(changed, traffic, path);
    const json_t *e;
    char s[64], h[32];
    tp__svg_emit(b, "<table>\n");
    tp__html_th(b, (const char *const[]){traffic ? "class" : "points at", "source", "device",
                                         "counter", "#delta", "unit", NULL});
    json_array_foreach(changed, i, e) {
        if (!wanted(e, traffic, path))
            continue;
        if (shown++ == ROWS_MAX) {
            tp__svg_printf(b, "<tr><td colspan=\"6\" class=\"small\">+%zu more</td></tr>\n",
                           total - ROWS_MAX);
            break;
        }
        const char *unit = tp_json_str(e, "unit");
        int_text(get(e, "delta"), s, sizeof s);
        if (unit && strcmp(unit, "bytes") == 0 && json_is_number(get(e, "delta"))) {
            size_t k = strlen(s);
            snprintf(s + k, sizeof s - k, " (%s)",
                     bytes_text(json_number_value(get(e, "delta")), h, sizeof h));
        }
        tp__svg_emit(b, "<tr>");
        tp__html_td(b, tp_json_str(e, "class"));
        tp__html_td(b, tp_json_str(e, "source"));
        tp__html_td(b, tp_json_str(e, "dev"));
        tp__html_td(b, tp_json_str(e, "name"));
        tp__html_tdn(b, s);
        tp__html_td(b, unit);
        tp__svg_emit(b, "</tr>\n");
    }
    tp__svg_emit(b, "</table>\n");
}

/* the PCIe links below their maximum or changed during the run */
static void links(struct svg_buf *b, const json_t *c)
{
    size_t i;
    const json_t *l;
    bool open = false;
    char s[48], m[48], cell[112];
    json_array_foreach(get(c, "links"), i, l) {
        bool down = json_is_true(get(l, "downtrained")), moved = json_is_true(get(l, "changed"));
        if (!down && !moved)
            continue;
        if (!open) {
            tp__svg_emit(b, "<table>\n");
            tp__html_th(b, (const char *const[]){"PCIe link", "#speed", "#width", "state", NULL});
            open = true;
        }
        tp__svg_emit(b, "<tr class=\"WARN\">");
        tp__html_td(b, tp_json_str(l, "dev"));
        snprintf(cell, sizeof cell, "%s of %s", gts_text(get(l, "speed_mts"), s, sizeof s),
                 gts_text(get(l, "max_speed_mts"), m, sizeof m));
        tp__html_tdn(b, cell);
        snprintf(cell, sizeof cell, "%s of %s", width_text(get(l, "width"), s, sizeof s),
                 width_text(get(l, "max_width"), m, sizeof m));
        tp__html_tdn(b, cell);
        tp__html_td(b, down && moved ? "downtrained, changed during the run"
                       : down        ? "downtrained"
                                     : "changed during the run");
        tp__svg_emit(b, "</tr>\n");
    }
    if (open)
        tp__svg_emit(b, "</table>\n");
}

/* resets, and the devices that went or came during the run */
static void notes(struct svg_buf *b, const json_t *c)
{
    static const char *const keys[] = {"reset", "gone", "new"};
    static const char *const words[] = {
        "wrapped or reset, no delta claimed: ", "devices gone during the run: ",
        "devices new during the run: "};
    for (int k = 0; k < 3; k++) {
        const json_t *l = get(c, keys[k]);
        if (!json_array_size(l))
            continue;
        tp__svg_printf(b, "<p class=\"small\">%s", words[k]);
        items(b, l);
        tp__svg_emit(b, "</p>\n");
    }
}

static void connections(struct svg_buf *b, const json_t *conns)
{
    size_t i;
    const json_t *e;
    char s[64];
    tp__svg_emit(b, "<table>\n");
    tp__html_th(b, (const char *const[]){"#connection", "kind", "#retransmits",
                                         "#bytes retransmitted", "#lost", "#rtt", "#rttvar",
                                         "#delivery rate", "#reordering", NULL});
    json_array_foreach(conns, i, e) {
        tp__svg_emit(b, "<tr>");
        tp__html_tdn(b, int_text(get(e, "flow"), s, sizeof s));
        tp__html_td(b, tp_json_str(e, "kind"));
        tp__html_tdn(b, int_text(get(e, "total_retrans"), s, sizeof s));
        tp__html_tdn(b, int_text(get(e, "bytes_retrans"), s, sizeof s));
        tp__html_tdn(b, int_text(get(e, "lost"), s, sizeof s));
        tp__html_tdn(b, tp__html_fmt_ns(tp_json_num(e, "rtt_us") * 1e3, s, sizeof s));
        tp__html_tdn(b, tp__html_fmt_ns(tp_json_num(e, "rttvar_us") * 1e3, s, sizeof s));
        tp__html_tdn(b, tp__html_fmt_rate(tp_json_num(e, "delivery_rate_Bps"), s, sizeof s));
        tp__html_tdn(b, int_text(get(e, "reordering"), s, sizeof s));
        tp__svg_emit(b, "</tr>\n");
    }
    tp__svg_emit(b, "</table>\n");
}

/* ---- a document's block ---- */

static void counters_doc(struct svg_buf *b, const struct html_doc *x, size_t k)
{
    const json_t *c = counters_of(x), *conns = connections_of(x);
    char detail[48], s[64];
    snprintf(detail, sizeof detail, "document %zu", k + 1);
    tp__svg_printf(b, "<div class=\"ctr\" id=\"counters-%zu\">\n", k + 1);
    tp__html_heading(b, x, detail);
    const char *why = tp_json_str(c, "error"), *path = tp_json_str(c, "path");
    if (why) {
        tp__svg_emit(b, "<p class=\"small\">counters not read: ");
        tp__svg_esc(b, why);
        tp__svg_emit(b, "</p>\n");
    } else if (c) {
        tp__svg_printf(b, "<p class=\"small\">%s counters read over %.2f s",
                       int_text(get(c, "counters_read"), s, sizeof s), tp_json_num(c, "window_s"));
        if (path) {
            tp__svg_emit(b, ", path <code>");
            tp__svg_esc(b, path);
            tp__svg_emit(b, "</code>");
        }
        if (json_is_number(get(c, "samples")))
            tp__svg_printf(b, "; %s sample%s of the PCIe links",
                           int_text(get(c, "samples"), s, sizeof s),
                           json_number_value(get(c, "samples")) == 1 ? "" : "s");
        if (isfinite(tp_json_num(c, "cost_ms")))
            tp__svg_printf(b, "; reading them took %.1f ms", tp_json_num(c, "cost_ms"));
        tp__svg_emit(b, "</p>\n");
        causes(b, c);
        const json_t *changed = get(c, "changed");
        if (count_wanted(changed, false, NULL))
            changed_table(b, changed, false, NULL);
        links(b, c);
        notes(b, c);
        size_t nt = count_wanted(changed, true, path);
        if (nt) {
            tp__svg_printf(b, "<details><summary>traffic counters of %s (%zu)</summary>\n",
                           path ? "the path" : "every device", nt);
            changed_table(b, changed, true, path);
            tp__svg_emit(b, "</details>\n");
        }
    }
    if (conns) {
        tp__svg_emit(b, "<p class=\"small\">Each connection's own TCP counters (TCP_INFO) at "
                        "the end of the run:</p>\n");
        connections(b, conns);
    }
    tp__svg_emit(b, "</div>\n");
}

void tp__html_counters(struct svg_buf *b, const struct html_doc *docs, size_t n)
{
    bool open = false;
    for (size_t i = 0; i < n; i++) {
        if (!counters_of(&docs[i]) && !connections_of(&docs[i]))
            continue;
        if (!open) {
            tp__svg_emit(
                b, "<section id=\"counters\">\n<h2>Counters</h2>\n<p class=\"small\">The node's "
                   "NIC, RDMA, TCP and PCIe counters before and after each run: a flagged cause "
                   "names counters that moved and may explain a slow figure. Counters never "
                   "change a status.</p>\n");
            open = true;
        }
        counters_doc(b, &docs[i], i);
    }
    if (open)
        tp__svg_emit(b, "</section>\n");
}

void tp__html_cause_flag(struct svg_buf *b, const struct html_doc *x, size_t k, const char *tag)
{
    const json_t *c = counters_of(x), *list = get(c, "causes"), *e;
    if (tp_json_str(c, "error") || !json_array_size(list))
        return;
    tp__svg_printf(b, "<%s class=\"flag\"><a href=\"#counters-%zu\">counters: ", tag, k + 1);
    size_t i, shown = 0;
    json_array_foreach(list, i, e) {
        const char *name = cause_name(e);
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++) {
            const char *o = cause_name(json_array_get(list, j));
            seen = strcmp(o, name) == 0;
        }
        if (seen)
            continue;
        tp__svg_emit(b, shown++ ? ", " : "");
        tp__svg_esc(b, name);
    }
    tp__svg_printf(b, "</a></%s>", tag);
}
