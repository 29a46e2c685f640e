/* The HTML report's fleet section: validate across an allocation. The
 * judgement in words (slow nodes and links first), each node's tests, and
 * a matrix per pairwise metric coloured against its median, drawn here
 * cell by cell (it has no axes for the plotter). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp/json.h"

#include "html_int.h"

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
        return tp__html_fmt_ns(v, buf, cap);
    if (unit && strcmp(unit, "B/s") == 0)
        return tp__html_fmt_rate(v, buf, cap);
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
    tp__html_fmt_bytes(tp_json_num(m, "size"), size, sizeof size);
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

/* The counts from the rows (fleet.*; the rounds have none); the words, the
 * tests and the matrices from the document, which no row carries. */
static void fleet_doc(struct svg_buf *b, const struct html_doc *x)
{
    const json_t *res = get(x->d, "results"), *j = get(res, "judgement");
    const json_t *nodes = get(res, "nodes");
    tp__svg_printf(
        b,
        "<p class=\"small\">%.0f nodes; %.0f rounds of pairs (the circle method: each node in "
        "one pair per round, bandwidth both ways); %.0f outliers (%.0f the worse way), "
        "%.0f slow nodes, %.0f slow links.</p>\n",
        tp__html_val(x, "fleet.nodes", NULL), tp_json_num(res, "rounds"),
        tp__html_val(x, "fleet.outliers", NULL), tp__html_val(x, "fleet.worse", NULL),
        tp__html_val(x, "fleet.slow_nodes", NULL), tp__html_val(x, "fleet.slow_links", NULL));
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
                tp__svg_printf(b, "<td><span class=\"st %s\">",
                               tp__html_status_order(st) < TP__HTML_NSTATUS ? st : "");
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

void tp__html_fleet(struct svg_buf *b, const struct html_doc *docs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!tp__html_is(&docs[i], "fleet"))
            continue;
        tp__svg_emit(b, "<section id=\"fleet\">\n<h2>Fleet</h2>\n");
        fleet_doc(b, &docs[i]);
        tp__svg_emit(b, "</section>\n");
        return;
    }
}
