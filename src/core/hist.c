/* Log-linear histogram (HdrHistogram's layout with 7 sub-bucket bits). The
 * bucket of v comes from the position of its highest set bit (one clz) and
 * the next 7 bits below it, so recording is a handful of integer operations
 * plus the Welford update; percentiles walk the cumulative counts. Exact
 * count, min, max, mean and m2 ride beside the buckets and merge with Chan
 * et al.'s parallel formula, so merged histograms report the same moments as
 * one histogram fed every sample. */
#include "tp/hist.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

tp_hist *tp_hist_new(void)
{
    tp_hist *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->counts = calloc(TP_HIST_BUCKETS, sizeof *h->counts);
    if (!h->counts) {
        free(h);
        return NULL;
    }
    return h;
}

void tp_hist_free(tp_hist *h)
{
    if (h) {
        free(h->counts);
        free(h);
    }
}

void tp_hist_reset(tp_hist *h)
{
    h->count = 0;
    h->min = h->max = 0;
    h->mean = h->m2 = 0;
    memset(h->counts, 0, TP_HIST_BUCKETS * sizeof *h->counts);
}

/* Values 0..127 map to themselves. For v >= 128 with highest bit e (7..63),
 * the bucket is 128 * (e - 6) plus the 7 bits below the highest one. */
static inline unsigned index_of(uint64_t v)
{
    if (v < TP_HIST_SUB)
        return (unsigned)v;
    unsigned e = 63u - (unsigned)__builtin_clzll(v);
    unsigned shift = e - TP_HIST_SUB_BITS;
    return ((e - (TP_HIST_SUB_BITS - 1)) << TP_HIST_SUB_BITS) |
           (unsigned)((v >> shift) & (TP_HIST_SUB - 1));
}

unsigned tp_hist_index(uint64_t v)
{
    return index_of(v);
}

/* log2 of the width of bucket i (i >= 128). */
static unsigned shift_of(unsigned i)
{
    return (i >> TP_HIST_SUB_BITS) - 1;
}

uint64_t tp_hist_bucket_lo(unsigned i)
{
    if (i < TP_HIST_SUB)
        return i;
    if (i >= TP_HIST_BUCKETS)
        return UINT64_MAX;
    uint64_t mant = TP_HIST_SUB | (i & (TP_HIST_SUB - 1));
    return mant << shift_of(i);
}

uint64_t tp_hist_bucket_width(unsigned i)
{
    if (i < TP_HIST_SUB)
        return 1;
    if (i >= TP_HIST_BUCKETS)
        return 0;
    return UINT64_C(1) << shift_of(i);
}

/* The value reported for bucket i: its midpoint (lo + (width-1)/2 never
 * overflows, even in the last bucket), clamped to the exact extremes. */
static uint64_t report(const tp_hist *h, unsigned i)
{
    uint64_t v = tp_hist_bucket_lo(i) + (tp_hist_bucket_width(i) - 1) / 2;
    if (v < h->min)
        v = h->min;
    if (v > h->max)
        v = h->max;
    return v;
}

void tp_hist_record(tp_hist *h, uint64_t v)
{
    uint64_t n = ++h->count;
    h->counts[index_of(v)]++;
    if (v < h->min || n == 1)
        h->min = v;
    if (v > h->max)
        h->max = v;
    double x = (double)v;
    double d = x - h->mean;
    h->mean += d / (double)n;
    h->m2 += d * (x - h->mean);
}

/* Fold a group of n samples with mean b_mean and squared deviations b_m2
 * into h's moments (Chan, Golub and LeVeque). */
static void combine(tp_hist *h, uint64_t n, double b_mean, double b_m2)
{
    double na = (double)h->count, nb = (double)n, nt = na + nb;
    double d = b_mean - h->mean;
    h->mean += d * (nb / nt);
    h->m2 += b_m2 + d * d * (na * nb / nt);
    h->count += n;
}

void tp_hist_record_n(tp_hist *h, uint64_t v, uint64_t n)
{
    if (n == 0)
        return;
    h->counts[index_of(v)] += n;
    if (v < h->min || h->count == 0)
        h->min = v;
    if (v > h->max)
        h->max = v;
    combine(h, n, (double)v, 0);
}

void tp_hist_merge(tp_hist *dst, const tp_hist *src)
{
    if (src->count == 0)
        return;
    /* copy first: src may be dst */
    uint64_t n = src->count, lo = src->min, hi = src->max;
    double mean = src->mean, m2 = src->m2;
    for (unsigned i = 0; i < TP_HIST_BUCKETS; i++)
        dst->counts[i] += src->counts[i];
    if (lo < dst->min || dst->count == 0)
        dst->min = lo;
    if (hi > dst->max)
        dst->max = hi;
    combine(dst, n, mean, m2);
}

/* Nearest rank of percentile p among n samples: ceil(p/100 * n), at least 1.
 * p * n is formed first so that whole results (90 % of 10) stay exact. */
uint64_t tp_nearest_rank(double p, uint64_t n)
{
    double r = ceil(p * (double)n / 100.0);
    if (r < 1)
        return 1;
    if (r >= (double)n)
        return n;
    return (uint64_t)r;
}

uint64_t tp_hist_percentile(const tp_hist *h, double p)
{
    if (h->count == 0)
        return 0;
    if (!(p > 0))
        return h->min;
    if (p >= 100)
        return h->max;
    uint64_t rank = tp_nearest_rank(p, h->count), seen = 0;
    for (unsigned i = index_of(h->min); i < TP_HIST_BUCKETS; i++) {
        seen += h->counts[i];
        if (seen >= rank)
            return report(h, i);
    }
    return h->max; /* counts disagree with count; only after a bad merge */
}

double tp_hist_stdev(const tp_hist *h)
{
    if (h->count < 2)
        return 0;
    return sqrt(h->m2 / (double)(h->count - 1));
}

/* uint64 values above INT64_MAX do not fit json_int_t; they travel as a
 * decimal string, which u64_from accepts beside plain integers. */
static json_t *u64_json(uint64_t v)
{
    if (v <= INT64_MAX)
        return json_integer((json_int_t)v);
    char s[24];
    snprintf(s, sizeof s, "%llu", (unsigned long long)v);
    return json_string(s);
}

json_t *tp_hist_to_json(const tp_hist *h)
{
    json_t *b = json_array();
    json_t *j = json_object();
    if (!b || !j)
        goto fail;
    if (json_object_set_new(j, "count", u64_json(h->count)) ||
        json_object_set_new(j, "min", u64_json(h->min)) ||
        json_object_set_new(j, "max", u64_json(h->max)) ||
        json_object_set_new(j, "mean", json_real(h->mean)) ||
        json_object_set_new(j, "m2", json_real(h->m2)) ||
        json_object_set_new(j, "sub_bits", json_integer(TP_HIST_SUB_BITS)))
        goto fail;
    for (unsigned i = 0; i < TP_HIST_BUCKETS; i++) {
        if (!h->counts[i])
            continue;
        if (json_array_append_new(b, json_pack("[Io]", (json_int_t)i, u64_json(h->counts[i]))))
            goto fail;
    }
    if (json_object_set_new(j, "buckets", b))
        goto fail_j; /* set_new already released b */
    return j;
fail:
    json_decref(b);
fail_j:
    json_decref(j);
    return NULL;
}

/* Read a non-negative integer (or the decimal string u64_json writes) named
 * name. Returns 0 or TP_EUSAGE with a message naming the field. */
static int u64_from(const json_t *v, const char *name, uint64_t *out, tp_error *err)
{
    if (!v)
        return tp_error_set(err, TP_EUSAGE, "histogram: missing field '%s'", name);
    if (json_is_integer(v)) {
        json_int_t x = json_integer_value(v);
        if (x < 0)
            return tp_error_set(err, TP_EUSAGE, "histogram: field '%s' is negative (%lld)", name,
                                (long long)x);
        *out = (uint64_t)x;
        return 0;
    }
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        char *end;
        if (*s >= '0' && *s <= '9') {
            errno = 0;
            unsigned long long x = strtoull(s, &end, 10);
            if (!*end && errno == 0) {
                *out = x;
                return 0;
            }
        }
    }
    return tp_error_set(err, TP_EUSAGE, "histogram: field '%s' is not a non-negative integer",
                        name);
}

static int real_from(const json_t *v, const char *name, double *out, tp_error *err)
{
    if (!v)
        return tp_error_set(err, TP_EUSAGE, "histogram: missing field '%s'", name);
    if (!json_is_number(v) || !isfinite(json_number_value(v)))
        return tp_error_set(err, TP_EUSAGE, "histogram: field '%s' is not a finite number", name);
    *out = json_number_value(v);
    return 0;
}

/* Fill h's buckets from the "buckets" array: [[index, count], ...] with
 * strictly ascending indexes, counts summing to h->count. */
static int buckets_from(tp_hist *h, const json_t *b, tp_error *err)
{
    if (!b)
        return tp_error_set(err, TP_EUSAGE, "histogram: missing field 'buckets'");
    if (!json_is_array(b))
        return tp_error_set(err, TP_EUSAGE, "histogram: field 'buckets' is not an array");
    uint64_t sum = 0;
    long long prev = -1;
    for (size_t k = 0; k < json_array_size(b); k++) {
        const json_t *e = json_array_get(b, k);
        char name[48];
        snprintf(name, sizeof name, "buckets[%zu]", k);
        if (!json_is_array(e) || json_array_size(e) != 2)
            return tp_error_set(err, TP_EUSAGE, "histogram: field '%s' is not [index, count]",
                                name);
        const json_t *ji = json_array_get(e, 0);
        if (!json_is_integer(ji) || json_integer_value(ji) < 0 ||
            json_integer_value(ji) >= TP_HIST_BUCKETS)
            return tp_error_set(err, TP_EUSAGE,
                                "histogram: field '%s' has an index out of range 0..%u", name,
                                TP_HIST_BUCKETS - 1);
        long long i = (long long)json_integer_value(ji);
        if (i <= prev)
            return tp_error_set(err, TP_EUSAGE,
                                "histogram: field '%s' has index %lld, not above the previous %lld",
                                name, i, prev);
        prev = i;
        uint64_t c;
        int rc = u64_from(json_array_get(e, 1), name, &c, err);
        if (rc)
            return rc;
        if (c > UINT64_MAX - sum)
            return tp_error_set(err, TP_EUSAGE, "histogram: field '%s' overflows the count", name);
        sum += c;
        h->counts[i] = c;
    }
    if (sum != h->count)
        return tp_error_set(err, TP_EUSAGE,
                            "histogram: field 'buckets' holds %llu samples but 'count' is %llu",
                            (unsigned long long)sum, (unsigned long long)h->count);
    return 0;
}

/* Moments and extremes must agree with each other and with the buckets. */
static int check_consistent(const tp_hist *h, tp_error *err)
{
    if (h->count == 0)
        return 0;
    if (h->min > h->max)
        return tp_error_set(err, TP_EUSAGE, "histogram: field 'min' exceeds 'max'");
    if (h->m2 < 0)
        return tp_error_set(err, TP_EUSAGE, "histogram: field 'm2' is negative");
    unsigned lo = index_of(h->min), hi = index_of(h->max);
    if (!h->counts[lo])
        return tp_error_set(err, TP_EUSAGE, "histogram: field 'min' lies in an empty bucket");
    if (!h->counts[hi])
        return tp_error_set(err, TP_EUSAGE, "histogram: field 'max' lies in an empty bucket");
    for (unsigned i = 0; i < TP_HIST_BUCKETS; i++)
        if (h->counts[i] && (i < lo || i > hi))
            return tp_error_set(err, TP_EUSAGE,
                                "histogram: field 'buckets' has samples outside [min, max]");
    return 0;
}

tp_hist *tp_hist_from_json(const json_t *j, tp_error *err)
{
    if (!json_is_object(j)) {
        tp_error_set(err, TP_EUSAGE, "histogram: not a JSON object");
        return NULL;
    }
    tp_hist *h = tp_hist_new();
    if (!h) {
        tp_error_set(err, TP_ENOMEM, "histogram: out of memory");
        return NULL;
    }
    uint64_t sub_bits = 0;
    int rc = u64_from(json_object_get(j, "sub_bits"), "sub_bits", &sub_bits, err);
    if (!rc && sub_bits != TP_HIST_SUB_BITS)
        rc = tp_error_set(err, TP_EUSAGE, "histogram: field 'sub_bits' is %llu, expected %u",
                          (unsigned long long)sub_bits, TP_HIST_SUB_BITS);
    if (!rc)
        rc = u64_from(json_object_get(j, "count"), "count", &h->count, err);
    if (!rc)
        rc = u64_from(json_object_get(j, "min"), "min", &h->min, err);
    if (!rc)
        rc = u64_from(json_object_get(j, "max"), "max", &h->max, err);
    if (!rc)
        rc = real_from(json_object_get(j, "mean"), "mean", &h->mean, err);
    if (!rc)
        rc = real_from(json_object_get(j, "m2"), "m2", &h->m2, err);
    if (!rc)
        rc = buckets_from(h, json_object_get(j, "buckets"), err);
    if (!rc)
        rc = check_consistent(h, err);
    if (rc) {
        tp_hist_free(h);
        return NULL;
    }
    return h;
}
