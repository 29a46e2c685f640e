/* The HTML report's plan section: per plan document the candidates in
 * their ranking, the planner's words, and step time and cost per run
 * against GPUs from the sweep, all read from the document (plan_doc says
 * why not from its rows). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp/json.h"
#include "tp/units.h"

#include "html_int.h"

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

/* The table from the document: a candidate is its name, which its rows
 * (plan.step{candidate=...}) carry cut to fit a label, and half the columns
 * (rank, algorithm, step p99, checkpoint interval) have no row. */
static void plan_doc(struct svg_buf *b, const struct html_doc *x)
{
    const json_t *d = x->d, *res = get(d, "results"), *c, *w;
    char detail[128];
    snprintf(detail, sizeof detail, "%s at %.0f GPUs on %.0f nodes",
             tp_json_str(get(get(d, "config"), "workload"), "name") ?: "workload",
             tp_json_num(res, "gpus"), tp_json_num(res, "nodes"));
    tp__html_heading(b, x, detail);
    tp__svg_emit(b, "<table>\n");
    tp__html_th(b, (const char *const[]){"#rank", "candidate", "algorithm", "#step", "#step p99",
                                         "#exposed comm", "#checkpoint every", "#time to train",
                                         "#cost per run", NULL});
    size_t i;
    char s[64];
    json_array_foreach(get(res, "candidates"), i, c) {
        tp__svg_emit(b, "<tr>");
        snprintf(s, sizeof s, "%.0f", tp_json_num(c, "rank"));
        tp__html_tdn(b, s);
        tp__html_td(b, tp_json_str(c, "name"));
        tp__html_td(b, tp_json_str(c, "algorithm"));
        tp__html_tdn(b, tp__html_fmt_ns(tp_json_num(c, "step") * 1e9, s, sizeof s));
        tp__html_tdn(b, tp__html_fmt_ns(tp_json_num(c, "step_p99") * 1e9, s, sizeof s));
        tp__html_tdn(b, tp__html_fmt_pct(tp_json_num(c, "exposed_fraction"), s, sizeof s));
        tp__html_tdn(b,
                     tp_fmt_duration_s(tp_json_num(get(c, "checkpoint"), "interval"), s, sizeof s));
        tp__html_tdn(b, tp_fmt_duration_s(tp_json_num(c, "time_to_train"), s, sizeof s));
        tp__html_tdn(b, tp_fmt_money(tp_json_num(get(c, "cost"), "total"), s, sizeof s));
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

void tp__html_plan(struct svg_buf *b, const struct html_doc *docs, size_t n)
{
    bool open = false;
    for (size_t i = 0; i < n; i++) {
        if (!tp__html_is(&docs[i], "plan") ||
            !json_is_array(get(get(docs[i].d, "results"), "candidates")))
            continue;
        if (!open) {
            tp__svg_emit(
                b, "<section id=\"plan\">\n<h2>Plan</h2>\n<p class=\"small\">Candidates ranked by "
                   "cost per run at the planned scale; step times are model means with the "
                   "slowest rank, exposed communication, rare stalls and data stalls.</p>\n");
            open = true;
        }
        plan_doc(b, &docs[i]);
    }
    if (open)
        tp__svg_emit(b, "</section>\n");
}
