/* Summary statistics of one distribution, as every result reports them:
 * min, mean, stdev, p50, p90, p99, p99.9, p99.99, max (nearest rank),
 * coefficient of variation, median absolute deviation and the 95 %
 * confidence interval of the mean (Student's t; samples treated as
 * independent, which back-to-back timings only approximate). */
#ifndef TP_STATS_H
#define TP_STATS_H

#include <jansson.h>
#include <stdint.h>

#include "tp/hist.h"

typedef struct tp_stats {
    uint64_t count;
    double min, max, mean, stdev;
    double p50, p90, p99, p999, p9999;
    double cv;               /* stdev / mean; 0 when mean is 0 */
    double mad;              /* median of |x - median| */
    double ci95_lo, ci95_hi; /* 95 % confidence interval of the mean */
} tp_stats;

/* Summarise histogram h. Percentiles carry the histogram's <= 0.4 % error.
 * MAD counts each bucket's samples as spread evenly over its width: exact
 * where buckets hold one value (below 256), otherwise typically within 1 %
 * (its error is a fraction of a bucket width, not of the MAD). count, min,
 * max, mean and stdev are exact. All zero when empty. */
void tp_stats_from_hist(const tp_hist *h, tp_stats *out);

/* Exact statistics of n raw samples (sorted in place), for tests and for
 * small sample sets. Same definitions as tp_stats_from_hist. */
void tp_stats_from_samples(uint64_t *v, uint64_t n, tp_stats *out);

/* Two-sided 97.5 % quantile of Student's t with df degrees of freedom
 * (1.96 for large df). */
double tp_t975(uint64_t df);

/* JSON object of the statistics, values scaled by 1/scale (pass 1 to keep
 * nanoseconds; 1000 for microseconds), with "unit" set to unit. */
json_t *tp_stats_to_json(const tp_stats *s, double scale, const char *unit);

#endif
