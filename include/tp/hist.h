/* Log-linear histogram of non-negative integer samples (nanoseconds, bytes).
 * Values below 128 get a bucket each; above, every power of two is split into
 * 128 equal sub-buckets, so a bucket's width is at most 1/128 of its lower
 * bound and the reported value (the bucket midpoint, clamped to the exact
 * min/max) is within 0.4 % of any sample in it. The full uint64 range is
 * covered (1 ns to 584 years). Exact count, min, max, mean and variance
 * (Welford) are kept beside the buckets. Histograms merge by adding counts,
 * so per-rank or per-run histograms combine without losing tails. */
#ifndef TP_HIST_H
#define TP_HIST_H

#include <jansson.h>
#include <stdint.h>

#include "tp/error.h"

#define TP_HIST_SUB_BITS 7
#define TP_HIST_SUB (1u << TP_HIST_SUB_BITS)                                  /* 128 */
#define TP_HIST_BUCKETS (TP_HIST_SUB + (64 - TP_HIST_SUB_BITS) * TP_HIST_SUB) /* 7424 */

typedef struct tp_hist {
    uint64_t count;
    uint64_t min, max;
    double mean, m2;  /* Welford running mean and sum of squared deviations */
    uint64_t *counts; /* TP_HIST_BUCKETS entries */
} tp_hist;

/* Allocate an empty histogram. Returns NULL when out of memory. */
tp_hist *tp_hist_new(void);

/* Free h (NULL is fine). */
void tp_hist_free(tp_hist *h);

/* Forget all samples. */
void tp_hist_reset(tp_hist *h);

/* Bucket index of value v (0 .. TP_HIST_BUCKETS-1). */
unsigned tp_hist_index(uint64_t v);

/* Lowest value that falls in bucket i, and the bucket's width. */
uint64_t tp_hist_bucket_lo(unsigned i);
uint64_t tp_hist_bucket_width(unsigned i);

/* Record one sample. Cheap: a few instructions plus the Welford update. */
void tp_hist_record(tp_hist *h, uint64_t v);

/* Record n samples of value v. */
void tp_hist_record_n(tp_hist *h, uint64_t v, uint64_t n);

/* Add every sample of src into dst. */
void tp_hist_merge(tp_hist *dst, const tp_hist *src);

/* Nearest rank of percentile p (0..100) among n samples: ceil(p/100 * n),
 * clamped to 1..n. The definition every percentile in trainpath uses. */
uint64_t tp_nearest_rank(double p, uint64_t n);

/* Nearest-rank percentile, p in [0, 100]: the smallest recorded value v such
 * that at least p % of samples are <= v, reported as its bucket's midpoint
 * clamped to [min, max]. p = 0 gives min, p = 100 gives max. 0 when empty. */
uint64_t tp_hist_percentile(const tp_hist *h, double p);

/* Standard deviation (sample, n-1); 0 with fewer than 2 samples. */
double tp_hist_stdev(const tp_hist *h);

/* Serialise as {"count","min","max","mean","m2","sub_bits","buckets":[[index,count],...]}
 * with only non-empty buckets. Returns a new reference or NULL. */
json_t *tp_hist_to_json(const tp_hist *h);

/* Parse what tp_hist_to_json wrote. Returns NULL and fills err (TP_EUSAGE,
 * naming the bad field) on malformed input. */
tp_hist *tp_hist_from_json(const json_t *j, tp_error *err);

#endif
