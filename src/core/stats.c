/* Summary statistics, from a histogram (what measurements keep) or from raw
 * samples (exact; for tests and small sets), under one set of definitions:
 * nearest-rank percentiles, sample standard deviation, MAD as the
 * nearest-rank median of |x - median|, and a Student's t interval of the
 * mean. The exact MAD walks outward from the median of the sorted samples,
 * taking the nearer side each step, so it needs no second sort or buffer;
 * the histogram MAD bisects on the distance, spreading each bucket's samples
 * over its width. */
#include "tp/stats.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Student's t 97.5 % quantiles for df 1..30, then anchors at 40, 60, 120 and
 * infinity between which t is linear in 1/df (the usual table interpolation,
 * good to about 1e-3 here). */
static const double t_small[31] = {
    0,      12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
    2.2010, 2.1788,  2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860, 2.0796,
    2.0739, 2.0687,  2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
};
static const struct {
    double df, t;
} t_large[] = {{30, 2.0423}, {40, 2.0211}, {60, 2.0003}, {120, 1.9799}, {INFINITY, 1.95996}};

double tp_t975(uint64_t df)
{
    if (df == 0)
        return INFINITY; /* no interval from one sample */
    if (df <= 30)
        return t_small[df];
    double x = 1.0 / (double)df;
    for (size_t k = 1; k < sizeof t_large / sizeof t_large[0]; k++) {
        if ((double)df <= t_large[k].df) {
            double x0 = 1.0 / t_large[k - 1].df, x1 = 1.0 / t_large[k].df;
            double f = (x0 - x) / (x0 - x1);
            return t_large[k - 1].t + f * (t_large[k].t - t_large[k - 1].t);
        }
    }
    return 1.95996;
}

/* Fill the moment-derived fields from count, mean and stdev. */
static void finish(tp_stats *s)
{
    s->cv = s->mean != 0 ? s->stdev / s->mean : 0;
    if (s->count < 2) {
        s->ci95_lo = s->ci95_hi = s->mean;
        return;
    }
    double half = tp_t975(s->count - 1) * s->stdev / sqrt((double)s->count);
    s->ci95_lo = s->mean - half;
    s->ci95_hi = s->mean + half;
}

/* Samples of h within [a, b], counting each bucket's samples as spread
 * evenly over the integers it holds (clipped to [min, max]); exact where a
 * bucket holds one value. */
static double mass_within(const tp_hist *h, uint64_t a, uint64_t b)
{
    if (a < h->min)
        a = h->min;
    if (b > h->max)
        b = h->max;
    double m = 0;
    for (unsigned i = tp_hist_index(a), end = tp_hist_index(b); i <= end; i++) {
        if (!h->counts[i])
            continue;
        uint64_t lo = tp_hist_bucket_lo(i), hi = lo + (tp_hist_bucket_width(i) - 1);
        if (lo < h->min)
            lo = h->min;
        if (hi > h->max)
            hi = h->max;
        uint64_t from = lo > a ? lo : a, to = hi < b ? hi : b;
        if (from <= to)
            m += (double)h->counts[i] * ((double)(to - from) + 1) / ((double)(hi - lo) + 1);
    }
    return m;
}

/* Median of |x - median|: the smallest distance d such that half the samples
 * (nearest rank) lie within median +- d, found by bisection over d. Walking
 * bucket midpoints instead would quantise d to bucket widths, which can be
 * large against the MAD of a narrow peak; spreading samples within buckets
 * keeps it close to the exact MAD. */
static double hist_mad(const tp_hist *h)
{
    uint64_t med = tp_hist_percentile(h, 50);
    double half = (double)tp_nearest_rank(50, h->count) * (1 - 1e-12);
    uint64_t lo = 0, hi = med - h->min > h->max - med ? med - h->min : h->max - med;
    while (lo < hi) {
        uint64_t d = lo + (hi - lo) / 2;
        uint64_t a = d > med ? 0 : med - d, b = d > UINT64_MAX - med ? UINT64_MAX : med + d;
        if (mass_within(h, a, b) >= half)
            hi = d;
        else
            lo = d + 1;
    }
    return (double)lo;
}

void tp_stats_from_hist(const tp_hist *h, tp_stats *out)
{
    memset(out, 0, sizeof *out);
    if (h->count == 0)
        return;
    out->count = h->count;
    out->min = (double)h->min;
    out->max = (double)h->max;
    out->mean = h->mean;
    out->stdev = tp_hist_stdev(h);
    out->p50 = (double)tp_hist_percentile(h, 50);
    out->p90 = (double)tp_hist_percentile(h, 90);
    out->p99 = (double)tp_hist_percentile(h, 99);
    out->p999 = (double)tp_hist_percentile(h, 99.9);
    out->p9999 = (double)tp_hist_percentile(h, 99.99);
    out->mad = hist_mad(h);
    finish(out);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static double pct(const uint64_t *v, uint64_t n, double p)
{
    return (double)v[tp_nearest_rank(p, n) - 1];
}

/* Exact MAD of sorted v, by the same outward walk as hist_mad. */
static double samples_mad(const uint64_t *v, uint64_t n)
{
    uint64_t half = tp_nearest_rank(50, n);
    uint64_t med = v[half - 1];
    uint64_t l = half, r = half; /* next candidates: v[l-1] on the left, v[r] on the right */
    for (uint64_t seen = 1;; seen++) {
        uint64_t dl = l > 0 ? med - v[l - 1] : UINT64_MAX;
        uint64_t dr = r < n ? v[r] - med : UINT64_MAX;
        uint64_t d = dl <= dr ? dl : dr;
        if (dl <= dr)
            l--;
        else
            r++;
        if (seen >= half)
            return (double)d;
    }
}

void tp_stats_from_samples(uint64_t *v, uint64_t n, tp_stats *out)
{
    memset(out, 0, sizeof *out);
    if (n == 0)
        return;
    qsort(v, n, sizeof *v, cmp_u64);
    long double sum = 0;
    for (uint64_t i = 0; i < n; i++)
        sum += (long double)v[i];
    double mean = (double)(sum / (long double)n);
    long double m2 = 0;
    for (uint64_t i = 0; i < n; i++) {
        long double d = (long double)v[i] - (long double)mean;
        m2 += d * d;
    }
    out->count = n;
    out->min = (double)v[0];
    out->max = (double)v[n - 1];
    out->mean = mean;
    out->stdev = n > 1 ? sqrt((double)(m2 / (long double)(n - 1))) : 0;
    out->p50 = pct(v, n, 50);
    out->p90 = pct(v, n, 90);
    out->p99 = pct(v, n, 99);
    out->p999 = pct(v, n, 99.9);
    out->p9999 = pct(v, n, 99.99);
    out->mad = samples_mad(v, n);
    finish(out);
}

json_t *tp_stats_to_json(const tp_stats *s, double scale, const char *unit)
{
    if (!(scale > 0) || !isfinite(scale))
        return NULL;
    json_t *j = json_object();
    if (!j)
        return NULL;
    const struct {
        const char *name;
        double v;
    } f[] = {
        {"min", s->min / scale},         {"mean", s->mean / scale},
        {"stdev", s->stdev / scale},     {"p50", s->p50 / scale},
        {"p90", s->p90 / scale},         {"p99", s->p99 / scale},
        {"p99_9", s->p999 / scale},      {"p99_99", s->p9999 / scale},
        {"max", s->max / scale},         {"cv", s->cv},
        {"mad", s->mad / scale},         {"ci95_lo", s->ci95_lo / scale},
        {"ci95_hi", s->ci95_hi / scale},
    };
    int bad = json_object_set_new(j, "count", json_integer((json_int_t)s->count));
    for (size_t k = 0; k < sizeof f / sizeof f[0]; k++)
        bad |= json_object_set_new(j, f[k].name, json_real(f[k].v));
    bad |= json_object_set_new(j, "unit", json_string(unit ? unit : ""));
    if (bad) {
        json_decref(j);
        return NULL;
    }
    return j;
}
