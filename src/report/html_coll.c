/* The HTML report's collectives section: bus bandwidth against message
 * size, one series per coll document and backend (a --backend
 * trainpath,nccl run is two), and per series the peak, the time there, the
 * wrong results and the alpha-beta fits of that backend. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp/json.h"

#include "html_int.h"

/* The backend of a coll size entry ("trainpath" when the document predates
 * the field). */
const char *tp__html_coll_backend(const json_t *e)
{
    return tp_json_str(e, "backend") ?: "trainpath";
}

/* backend NULL: every entry */
const json_t *tp__html_coll_peak(const json_t *res, const char *backend, double *bw)
{
    const json_t *best = NULL, *e;
    size_t i;
    *bw = NAN;
    json_array_foreach(get(res, "sizes"), i, e) {
        if (backend && strcmp(tp__html_coll_backend(e), backend) != 0)
            continue;
        double v = tp_json_num(e, "busbw");
        if (isfinite(v) && (!best || v > *bw)) {
            best = e;
            *bw = v;
        }
    }
    return best;
}

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

void tp__html_busbw(struct svg_buf *b, const json_t *const *docs, size_t n)
{
    size_t nd = 0;
    double xlo = INFINITY, xhi = 0, yhi = 0;
    for (size_t i = 0; i < n; i++) {
        if (!tp__html_is(docs[i], "coll"))
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
        if (!tp__html_is(docs[i], "coll"))
            continue;
        const json_t *e;
        size_t k;
        json_array_foreach(get(get(docs[i], "results"), "sizes"), k, e) {
            const char *be = tp__html_coll_backend(e);
            bool seen = false;
            for (size_t j = 0; j < lg.n; j++)
                seen |= which[j] == docs[i] && strcmp(backend[j], be) == 0;
            if (seen || lg.n >= SVG_MAX_SERIES)
                continue;
            which[lg.n] = docs[i];
            backend[lg.n] = be;
            coll_label(docs[i], be,
                       tp_json_str(e, "mem") && strcmp(tp_json_str(e, "mem"), "cuda") == 0,
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
                if (strcmp(tp__html_coll_backend(e), backend[k]) != 0)
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
    tp__html_th(b, (const char *const[]){"collective", "#peak busbw", "#at size", "#p50 time there",
                                         "#wrong results",
                                         "alpha-beta fits (time = alpha + beta x bytes)", NULL});
    for (size_t k = 0; k < lg.n; k++) {
        const json_t *res = get(which[k], "results"), *e;
        double bw, wrong = 0;
        const json_t *best = tp__html_coll_peak(res, backend[k], &bw);
        size_t i;
        json_array_foreach(get(res, "sizes"), i, e) {
            if (strcmp(tp__html_coll_backend(e), backend[k]) == 0 &&
                isfinite(tp_json_num(e, "wrong")))
                wrong += tp_json_num(e, "wrong");
        }
        char s[64];
        tp__svg_emit(b, "<tr>");
        tp__html_td(b, lg.name[k]);
        tp__html_tdn(b, tp__html_fmt_rate(bw, s, sizeof s));
        tp__html_tdn(b, tp__html_fmt_bytes(tp_json_num(best, "size_bytes"), s, sizeof s));
        tp__html_tdn(b, tp__html_fmt_ns(tp_json_num(get(best, "time"), "p50"), s, sizeof s));
        snprintf(s, sizeof s, "%.0f", wrong);
        tp__html_tdn(b, s);
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
                           tp__html_fmt_ns(tp_json_num(e, "alpha"), al, sizeof al),
                           tp__html_fmt_rate(beta > 0 ? 1e9 / beta : NAN, be, sizeof be),
                           100 * tp_json_num(e, "max_rel_error"));
        }
        tp__svg_emit(b, "</td></tr>\n");
    }
    tp__svg_emit(b, "</table>\n</section>\n");
}
