/* The HTML report's collectives section: bus bandwidth against message
 * size, one series per coll document and backend (a --backend
 * trainpath,nccl run is two), and per series the peak, the time there, the
 * wrong results and the alpha-beta fits of that backend. The figures are
 * the coll rows' (busbw, time, wrong, each labelled with its size and,
 * but for trainpath, its backend). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp/json.h"

#include "html_int.h"

/* A coll.busbw row's backend: trainpath has no label (its rows keep the
 * keys they had before there were backends). */
static const char *row_backend(const json_t *row)
{
    return tp__html_label(row, "backend") ?: "trainpath";
}

static bool is_busbw(const json_t *row)
{
    const char *m = tp_json_str(row, "metric");
    return m && strcmp(m, "coll.busbw") == 0;
}

const json_t *tp__html_coll_peak(const struct html_doc *x, const char *backend)
{
    const json_t *best = NULL, *row;
    size_t i;
    json_array_foreach(x->rows, i, row) {
        if (!is_busbw(row) || (backend && strcmp(row_backend(row), backend) != 0))
            continue;
        if (!best || tp_json_num(row, "value") > tp_json_num(best, "value"))
            best = row;
    }
    return best;
}

/* One series of the busbw plot: a document's rows of one backend (a run
 * with --backend trainpath,nccl has two). */
static void coll_label(const json_t *d, const char *backend, bool cuda, char *buf, size_t cap)
{
    const json_t *cfg = get(d, "config");
    bool nccl = strcmp(backend, "nccl") == 0;
    snprintf(buf, cap, "%s, %.0f ranks, %s%s%s", tp_json_str(cfg, "op") ?: "?",
             tp_json_num(cfg, "ranks"), nccl ? "NCCL" : tp_json_str(cfg, "transport") ?: "tcp",
             strcmp(backend, "mpi") == 0 ? ", MPI" : "",
             cuda && !nccl ? ", GPU memory staged" : "");
}

/* The fits of the series' backend, from the document: a fit's rows
 * (coll.fit.alpha, .beta) name it by its algorithm alone and its largest
 * error has none. */
static void fits(struct svg_buf *b, const json_t *d, const char *backend)
{
    bool first = true;
    size_t i;
    const json_t *e;
    json_array_foreach(get(get(d, "results"), "fit"), i, e) {
        char al[32], be[32];
        /* a fit belongs to its backend: nccl's algo is "nccl", mpi's "mpi" */
        const char *fa = tp_json_str(e, "algo") ?: "?";
        bool own = strcmp(backend, "trainpath") == 0
                       ? strcmp(fa, "nccl") != 0 && strcmp(fa, "mpi") != 0
                       : strcmp(fa, backend) == 0;
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
}

void tp__html_busbw(struct svg_buf *b, const struct html_doc *docs, size_t n)
{
    size_t nd = 0, k, i;
    const json_t *row;
    double xlo = INFINITY, xhi = 0, yhi = 0;
    for (i = 0; i < n; i++) {
        if (!tp__html_is(&docs[i], "coll"))
            continue;
        json_array_foreach(docs[i].rows, k, row) {
            double s = tp__html_label_num(row, "size");
            if (is_busbw(row) && s > 0) {
                xlo = fmin(xlo, s);
                xhi = fmax(xhi, s);
                yhi = fmax(yhi, tp_json_num(row, "value"));
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
    const struct html_doc *which[SVG_MAX_SERIES];
    const char *backend[SVG_MAX_SERIES];
    for (i = 0; i < n && lg.n < SVG_MAX_SERIES; i++) {
        if (!tp__html_is(&docs[i], "coll"))
            continue;
        json_array_foreach(docs[i].rows, k, row) {
            if (!is_busbw(row))
                continue;
            const char *be = row_backend(row), *mem = tp__html_label(row, "mem");
            bool seen = false;
            for (size_t j = 0; j < lg.n; j++)
                seen |= which[j] == &docs[i] && strcmp(backend[j], be) == 0;
            if (seen || lg.n >= SVG_MAX_SERIES)
                continue;
            which[lg.n] = &docs[i];
            backend[lg.n] = be;
            coll_label(docs[i].d, be, mem && strcmp(mem, "cuda") == 0, labels[lg.n],
                       sizeof labels[0]);
            tp__svg_legend_add(&lg, labels[lg.n], tp__svg_color(lg.n), false);
        }
    }
    tp__svg_emit(b, "<figure><figcaption>Bus bandwidth against message size</figcaption>\n");
    tp__svg_plot_begin(&p, b, "busbw", "collective bus bandwidth", 960, 400, &lg);
    for (k = 0; k < lg.n; k++) {
        size_t m = json_array_size(which[k]->rows), used = 0;
        double *xs = calloc(m + 1, sizeof *xs), *ys = calloc(m + 1, sizeof *ys);
        if (xs && ys) {
            json_array_foreach(which[k]->rows, i, row) {
                if (!is_busbw(row) || strcmp(row_backend(row), backend[k]) != 0)
                    continue;
                xs[used] = tp__html_label_num(row, "size");
                ys[used++] = tp_json_num(row, "value");
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
    for (k = 0; k < lg.n; k++) {
        /* the peak's time: the coll.time.p50 row of the same labels (size) */
        const json_t *best = tp__html_coll_peak(which[k], backend[k]);
        double wrong = 0;
        json_array_foreach(which[k]->rows, i, row) {
            const char *m = tp_json_str(row, "metric");
            if (m && strcmp(m, "coll.wrong") == 0 && strcmp(row_backend(row), backend[k]) == 0)
                wrong += tp_json_num(row, "value");
        }
        char s[64];
        tp__svg_emit(b, "<tr>");
        tp__html_td(b, lg.name[k]);
        tp__html_tdn(b, tp__html_fmt_rate(tp_json_num(best, "value"), s, sizeof s));
        tp__html_tdn(b, tp__html_fmt_bytes(tp__html_label_num(best, "size"), s, sizeof s));
        tp__html_tdn(b, tp__html_fmt_ns(best ? tp__html_val(which[k], "coll.time.p50", best) : NAN,
                                        s, sizeof s));
        snprintf(s, sizeof s, "%.0f", wrong);
        tp__html_tdn(b, s);
        tp__svg_emit(b, "<td>");
        fits(b, which[k]->d, backend[k]);
        tp__svg_emit(b, "</td></tr>\n");
    }
    tp__svg_emit(b, "</table>\n</section>\n");
}
