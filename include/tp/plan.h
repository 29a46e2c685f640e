/* The scale model behind `trainpath plan`: pure computation, no measuring.
 * This first part is the checkpoint interval: how often to checkpoint, given
 * what one checkpoint costs and how often the job fails. */
#ifndef TP_PLAN_H
#define TP_PLAN_H

/* Young (1974): the interval between checkpoints that minimises waste to
 * first order, tau = sqrt(2 delta M), for a checkpoint costing delta
 * seconds and a mean time between failures of M seconds. */
double tp_plan_young(double delta_s, double mtbf_s);

/* Daly (2006), the higher-order optimum: for delta < 2M,
 * tau = sqrt(2 delta M) [1 + (1/3) sqrt(delta / 2M) + (1/9) (delta / 2M)] - delta,
 * else tau = M. */
double tp_plan_daly(double delta_s, double mtbf_s);

/* Daly's expected wall time to complete work_s seconds of solve time when
 * checkpointing every tau seconds of work, each checkpoint costing delta,
 * each failure (exponential, mean M) costing a restart of restart_s plus the
 * work since the last checkpoint:
 *   T = M e^(R/M) (e^((tau + delta)/M) - 1) work / tau. */
double tp_plan_wall_time(double work_s, double tau_s, double delta_s, double restart_s,
                         double mtbf_s);

/* The fraction of wall time not spent on useful work at interval tau:
 * 1 - work / T (independent of work). */
double tp_plan_waste(double tau_s, double delta_s, double restart_s, double mtbf_s);


/* ---- jitter: the step is the maximum over N ranks ---- */

#include <stddef.h>
#include <stdint.h>

/* A per-rank step-time distribution: a normal, or an empirical one given by
 * its sorted samples (measured step times). */
struct tp_plan_dist {
    int kind; /* TP_PLAN_NORMAL or TP_PLAN_EMPIRICAL */
    double mu, sigma;      /* normal */
    const double *sorted;  /* empirical: n ascending samples */
    size_t n;
};
#define TP_PLAN_NORMAL 0
#define TP_PLAN_EMPIRICAL 1

/* The standard normal's inverse CDF (Acklam's rational approximation, one
 * Halley step on erfc: about 1e-15 relative), for 0 < p < 1. */
double tp_plan_norm_quantile(double p);

/* Quantile q (0..1) of d: mu + sigma z(q), or the empirical quantile
 * interpolated between order statistics. */
double tp_plan_dist_quantile(const struct tp_plan_dist *d, double q);

/* The maximum of N independent draws from d, sampled directly: its CDF is
 * F^N, so its quantile u is F^-1(u^(1/N)); the mean is the integral of that
 * over u, by the midpoint rule on k strata (k = 4096 is plenty). Cost O(k),
 * whatever N. Fills the mean and the p99 of the maximum. */
void tp_plan_max_stats(const struct tp_plan_dist *d, double n_ranks, unsigned k, double *mean,
                       double *p99);

/* The probability that at least one of N ranks sees an event of per-rank
 * probability p in a step: 1 - (1 - p)^N, accurate for tiny p. */
double tp_plan_rare_event(double p, double n_ranks);

#endif
