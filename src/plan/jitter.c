/* Jitter at scale: a synchronous step waits for the slowest of N ranks, so
 * its distribution is the maximum of N per-rank draws. Rather than drawing N
 * values per simulated step (a million ranks would cost a million draws),
 * the maximum is sampled directly through the inverse of its CDF F^N: its
 * u-quantile is F^-1(u^(1/N)). The per-rank F is a normal or, better, the
 * empirical distribution of measured step times. */
#include <math.h>

#include "tp/plan.h"

double tp_plan_norm_quantile(double p)
{
    /* Acklam's coefficients */
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                               -2.759285104469687e+02, 1.383577518672690e+02,
                               -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                               -1.556989798598866e+02, 6.680131188771972e+01,
                               -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                               -2.400758277161838e+00, -2.549732539343734e+00,
                               4.374664141464968e+00,  2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                               2.445134137142996e+00, 3.754408661907416e+00};
    if (p <= 0)
        return -INFINITY;
    if (p >= 1)
        return INFINITY;
    double q, x;
    if (p < 0.02425) {
        q = sqrt(-2 * log(p));
        x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    } else if (p > 1 - 0.02425) {
        q = sqrt(-2 * log1p(-p));
        x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    } else {
        q = p - 0.5;
        double r = q * q;
        x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
            (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
    }
    /* one Halley step on the exact CDF (erfc keeps the tails accurate) */
    double e = 0.5 * erfc(-x / sqrt(2)) - p;
    double u = e * sqrt(2 * M_PI) * exp(x * x / 2);
    return x - u / (1 + x * u / 2);
}

double tp_plan_dist_quantile(const struct tp_plan_dist *d, double q)
{
    if (d->kind == TP_PLAN_NORMAL)
        return d->mu + d->sigma * tp_plan_norm_quantile(q);
    if (d->n == 0)
        return 0;
    double pos = q * (double)(d->n - 1);
    size_t i = (size_t)pos;
    if (i >= d->n - 1)
        return d->sorted[d->n - 1];
    double f = pos - (double)i;
    return d->sorted[i] + f * (d->sorted[i + 1] - d->sorted[i]);
}

double tp_plan_max_quantile(const struct tp_plan_dist *d, double u, double n_ranks)
{
    /* u^(1/N) rounds to 1 for N beyond about 1e8 (and a normal's quantile
     * there is infinite): work with the tail 1 - u^(1/N) instead, which
     * expm1 keeps to full precision, and a normal's symmetry */
    double tail = -expm1(log(u) / n_ranks);
    if (d->kind == TP_PLAN_NORMAL)
        return d->mu - d->sigma * tp_plan_norm_quantile(tail);
    return tp_plan_dist_quantile(d, 1 - tail);
}

void tp_plan_max_stats(const struct tp_plan_dist *d, double n_ranks, unsigned k, double *mean,
                       double *p99)
{
    if (k == 0)
        k = 4096;
    /* E = integral over u in (0,1) of Q(u^(1/N)); with u = 1 - (1-w)^2 the
     * strata crowd towards u = 1, where a normal's quantile grows without
     * bound, and the weight 2(1-w) takes that growth to 0 */
    double sum = 0;
    for (unsigned i = 0; i < k; i++) {
        double w = (i + 0.5) / k, v = 1 - w;
        sum += 2 * v * tp_plan_max_quantile(d, 1 - v * v, n_ranks);
    }
    *mean = sum / k;
    *p99 = tp_plan_max_quantile(d, 0.99, n_ranks);
}

double tp_plan_rare_event(double p, double n_ranks)
{
    if (p <= 0)
        return 0;
    if (p >= 1)
        return 1;
    return -expm1(n_ranks * log1p(-p));
}
