/* The HTML report's step section: per step document, the slowest rank's
 * step split into compute, exposed communication, data wait and checkpoint
 * stall as stacked bars with the job's step over them, and the summary. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "tp/json.h"

#include "html_int.h"

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

static void step_doc(struct svg_buf *b, const struct html_doc *x)
{
    const json_t *d = x->d, *run = json_array_get(get(get(d, "results"), "runs"), 0);
    const json_t *series = get(run, "series");
    size_t steps = json_array_size(get(series, "step"));
    size_t ranks = json_array_size(json_array_get(get(series, "step"), 0));
    char detail[128];
    snprintf(detail, sizeof detail, "%s, %zu ranks, %zu steps",
             tp_json_str(get(d, "config"), "preset") ?: "custom", ranks, steps);
    tp__html_heading(b, x, detail);
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
    tp__svg_emit(b, "</figure>\n");
    tp__html_timeline(b, get(get(d, "results"), "timeline"));
    tp__svg_emit(b, "<table>\n");
    tp__html_th(b, (const char *const[]){"#step p50", "#step p99", "#max", "#compute",
                                         "#exposed comm", "#data wait", "#checkpoint",
                                         "#amplification", "#goodput", NULL});
    /* the summary from the rows; the compute and data wait fractions have
     * none, they are the document's */
    const json_t *sm = get(run, "summary"), *gp = tp__html_row(x, "step.goodput", NULL);
    const char *unit = tp_json_str(gp, "unit");
    char s[48];
    tp__svg_emit(b, "<tr>");
    tp__html_tdn(b, tp__html_fmt_ns(tp__html_val(x, "step.time.p50", NULL), s, sizeof s));
    tp__html_tdn(b, tp__html_fmt_ns(tp__html_val(x, "step.time.p99", NULL), s, sizeof s));
    tp__html_tdn(b, tp__html_fmt_ns(tp__html_val(x, "step.time.max", NULL), s, sizeof s));
    tp__html_tdn(b, tp__html_fmt_pct(tp_json_num(sm, "compute_fraction"), s, sizeof s));
    tp__html_tdn(
        b, tp__html_fmt_pct(tp__html_val(x, "step.exposed_comm_fraction", NULL), s, sizeof s));
    tp__html_tdn(b, tp__html_fmt_pct(tp_json_num(sm, "data_wait_fraction"), s, sizeof s));
    tp__html_tdn(
        b, tp__html_fmt_pct(tp__html_val(x, "step.ckpt_overhead_fraction", NULL), s, sizeof s));
    snprintf(s, sizeof s, "%.3f", tp__html_val(x, "step.amplification", NULL));
    tp__html_tdn(b, s);
    snprintf(s, sizeof s, "%.0f %s", tp_json_num(gp, "value"), unit && *unit ? unit : "samples/s");
    tp__html_tdn(b, s);
    tp__svg_emit(b, "</tr>\n</table>\n");
out:
    for (int k = 0; k < 4; k++)
        free(v[k]);
    free(job);
    free(xs);
}

void tp__html_step(struct svg_buf *b, const struct html_doc *docs, size_t n)
{
    bool open = false;
    for (size_t i = 0; i < n; i++) {
        if (!tp__html_is(&docs[i], "step"))
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
        step_doc(b, &docs[i]);
    }
    if (open)
        tp__svg_emit(b, "</section>\n");
}
