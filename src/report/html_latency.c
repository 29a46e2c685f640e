/* The HTML report's latency section: every latency histogram of the
 * documents (net lat and loaded, one-way; io commit, dataset, checkpoint)
 * as a CDF and a histogram on a log axis, with its percentiles, all read
 * from the histogram itself so that the table and the curves agree. The
 * histograms are those the metric rows carry, each with the scale to the
 * row's values (net's hold round trips; its rows are one-way). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp/hist.h"
#include "tp/json.h"

#include "html_int.h"

/* net documents: "tcp", "ofi tcp;ofi_rxm" */
static void transport_name(const json_t *d, char *buf, size_t cap)
{
    const json_t *cfg = get(d, "config");
    const char *tr_ = tp_json_str(cfg, "transport"), *prov = tp_json_str(cfg, "provider");
    snprintf(buf, cap, "%s%s%s", tr_ ? tr_ : "tcp", prov ? " " : "", prov ? prov : "");
}

/* The rows that carry a latency histogram (one a family and label set: the
 * p50's), what the axis says, and the series' name: before the message
 * size for net, whose rows are one a size; NULL for io commit's sync mode. */
static const struct family {
    const char *metric, *what, *name;
    bool net;
} families[] = {
    {"net.lat.latency.p50", "one-way latency (RTT/2)", "", true},
    {"net.loaded.isolated.latency.p50", "one-way latency (RTT/2)", "isolated ", true},
    {"net.loaded.latency.p50", "one-way latency (RTT/2)", "loaded ", true},
    {"io.commit.latency.p50", "commit latency (write + sync)", NULL, false},
    {"io.dataset.read.p50", "read latency", "record read", false},
    {"io.checkpoint.commit.p50", "checkpoint commit latency", "checkpoint commit", false},
};

static const struct family *family_of(const json_t *row)
{
    const char *m = tp_json_str(row, "metric");
    for (size_t i = 0; m && i < sizeof families / sizeof families[0]; i++)
        if (strcmp(m, families[i].metric) == 0)
            return &families[i];
    return NULL;
}

struct curve {
    tp_hist *h;
    double scale; /* value shown = recorded value x scale (RTT -> one-way: 0.5) */
    char label[64];
};

#define MAX_CURVES 12

/* The histograms x's rows carry, in the rows' order, with the scale from
 * what the histogram holds to what the row reports (net: round trips to
 * one-way). *fam: the family of the first. Returns how many. */
static size_t doc_curves(const struct html_doc *x, struct curve *cv, const struct family **fam)
{
    size_t n = 0, i;
    const json_t *row;
    *fam = NULL;
    json_array_foreach(x->rows, i, row) {
        const struct family *f = family_of(row);
        if (n >= MAX_CURVES || !f || !json_is_object(get(row, "histogram")))
            continue;
        tp_hist *h = tp_hist_from_json(get(row, "histogram"), NULL);
        if (!h || h->count == 0) {
            tp_hist_free(h);
            continue;
        }
        char sz[32] = "";
        if (f->net)
            tp__html_fmt_bytes(tp__html_label_num(row, "size"), sz, sizeof sz);
        cv[n].h = h;
        cv[n].scale = tp_json_num_or(row, "histogram_scale", 1);
        snprintf(cv[n].label, sizeof cv[n].label, "%s%s",
                 f->name ?: tp_json_str(get(x->d, "results"), "sync") ?: "commit", sz);
        *fam = *fam ? *fam : f;
        n++;
    }
    return n;
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
    tp__html_th(b, (const char *const[]){"series", "#samples", "#mean", "#p50", "#p99", "#p99.9",
                                         "#max", NULL});
    char s[40];
    for (size_t k = 0; k < nc; k++) {
        const tp_hist *h = cv[k].h;
        tp__svg_emit(b, "<tr>");
        tp__html_td(b, cv[k].label);
        snprintf(s, sizeof s, "%llu", (unsigned long long)h->count);
        tp__html_tdn(b, s);
        tp__html_tdn(b, tp__html_fmt_ns(h->mean * cv[k].scale, s, sizeof s));
        static const double q[] = {50, 99, 99.9, 100};
        for (size_t i = 0; i < 4; i++)
            tp__html_tdn(
                b, tp__html_fmt_ns((double)tp_hist_percentile(h, q[i]) * cv[k].scale, s, sizeof s));
        tp__svg_emit(b, "</tr>\n");
    }
    tp__svg_emit(b, "</table>\n");
}

void tp__html_latency(struct svg_buf *b, const struct html_doc *docs, size_t n)
{
    bool open = false;
    for (size_t i = 0; i < n; i++) {
        if (!tp__html_ok(&docs[i]))
            continue;
        struct curve cv[MAX_CURVES];
        const struct family *fam;
        size_t nc = doc_curves(&docs[i], cv, &fam);
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
        if (fam->net)
            transport_name(docs[i].d, detail, sizeof detail);
        else
            snprintf(detail, sizeof detail, "%s",
                     tp_json_str(get(get(get(docs[i].d, "results"), "storage"), "fs"), "type")
                         ?: "");
        tp__html_heading(b, &docs[i], detail);
        latency_plots(b, cv, nc, fam->what);
        latency_table(b, cv, nc);
        for (size_t k = 0; k < nc; k++)
            tp_hist_free(cv[k].h);
    }
    if (open)
        tp__svg_emit(b, "</section>\n");
}
