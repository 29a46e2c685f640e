/* Unit tests of the log-linear histogram: bucket layout over the whole uint64
 * range, percentiles against exact nearest-rank percentiles of a million
 * samples from several distributions (fixed seed), merge against the
 * histogram of the whole, JSON round trip and rejection of malformed JSON. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp/hist.h"
#include "tp_test.h"

#define NSAMPLES 1000000
#define HOUR_NS UINT64_C(3600000000000)

static uint64_t clamp_ns(double x)
{
    if (x < 1)
        return 1;
    if (x > (double)HOUR_NS)
        return HOUR_NS;
    return (uint64_t)x;
}

static uint64_t lognormal(void)
{
    return clamp_ns(exp(log(1e6) + 3.0 * tp_test_normal())); /* spans ns to tens of seconds */
}

static uint64_t exponential(void)
{
    return clamp_ns(-1e5 * log(tp_test_unif()));
}

static uint64_t uniform(void)
{
    return 1 + tp_test_rnd() % HOUR_NS;
}

static uint64_t loguniform(void)
{
    return clamp_ns(exp(tp_test_unif() * log((double)HOUR_NS)));
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Percentiles in units of 1e-4 %, so exact ranks come from integer
 * arithmetic, independently of the library's floating-point rank. */
static const uint64_t pcts_e4[] = {1,      10000,  100000, 250000, 500000, 750000,
                                   900000, 990000, 999000, 999900, 999990};

static uint64_t exact_pct(const uint64_t *sorted, uint64_t n, uint64_t p_e4)
{
    uint64_t rank = (p_e4 * n + 999999) / 1000000;
    if (rank < 1)
        rank = 1;
    return sorted[rank - 1];
}

static void check_distribution(const char *name, uint64_t (*gen)(void))
{
    uint64_t *v = malloc(NSAMPLES * sizeof *v);
    tp_hist *h = tp_hist_new();
    assert_non_null(v);
    assert_non_null(h);
    tp_test_rng = 42;
    long double sum = 0;
    for (size_t i = 0; i < NSAMPLES; i++) {
        v[i] = gen();
        sum += (long double)v[i];
        tp_hist_record(h, v[i]);
    }
    qsort(v, NSAMPLES, sizeof *v, cmp_u64);
    print_message("%s: min %llu p50 %llu max %llu\n", name, (unsigned long long)v[0],
                  (unsigned long long)v[NSAMPLES / 2], (unsigned long long)v[NSAMPLES - 1]);
    TP_EQ_U64(h->count, NSAMPLES);
    TP_EQ_U64(h->min, v[0]);
    TP_EQ_U64(h->max, v[NSAMPLES - 1]);
    TP_NEAR_REL(h->mean, (double)(sum / NSAMPLES), 1e-9);
    TP_EQ_U64(tp_hist_percentile(h, 0), v[0]);
    TP_EQ_U64(tp_hist_percentile(h, 100), v[NSAMPLES - 1]);
    for (size_t k = 0; k < sizeof pcts_e4 / sizeof pcts_e4[0]; k++) {
        double p = (double)pcts_e4[k] / 1e4;
        double got = (double)tp_hist_percentile(h, p);
        double want = (double)exact_pct(v, NSAMPLES, pcts_e4[k]);
        if (!(fabs(got - want) <= 0.01 * want))
            fail_msg("%s p%g: histogram %.0f, exact %.0f", name, p, got, want);
        /* the documented bound is tighter: half a bucket, 1/256 */
        TP_NEAR_REL(got, want, 1.0 / 256);
    }
    tp_hist_free(h);
    free(v);
}

static void test_percentiles_lognormal(void **state)
{
    (void)state;
    check_distribution("lognormal", lognormal);
}

static void test_percentiles_exponential(void **state)
{
    (void)state;
    check_distribution("exponential", exponential);
}

static void test_percentiles_uniform(void **state)
{
    (void)state;
    check_distribution("uniform", uniform);
}

static void test_percentiles_loguniform(void **state)
{
    (void)state;
    check_distribution("loguniform", loguniform);
}

/* Below 256 every value has its own bucket, so percentiles are exact; the
 * nearest-rank definition shows: p90 of 1..10 is 9, p91 is 10. */
static void test_percentiles_small_exact(void **state)
{
    (void)state;
    tp_hist *h = tp_hist_new();
    assert_non_null(h);
    TP_EQ_U64(tp_hist_percentile(h, 50), 0);
    for (uint64_t v = 1; v <= 10; v++)
        tp_hist_record(h, v);
    TP_EQ_U64(tp_hist_percentile(h, 90), 9);
    TP_EQ_U64(tp_hist_percentile(h, 91), 10);
    TP_EQ_U64(tp_hist_percentile(h, 50), 5);
    TP_EQ_U64(tp_hist_percentile(h, 10), 1);
    TP_EQ_U64(tp_hist_percentile(h, 10.0001), 2);
    TP_EQ_U64(tp_hist_percentile(h, 0), 1);
    TP_EQ_U64(tp_hist_percentile(h, 100), 10);
    TP_NEAR_REL(h->mean, 5.5, 1e-15);
    TP_NEAR_REL(tp_hist_stdev(h), sqrt(82.5 / 9), 1e-12);
    /* with one value per bucket, every rank is exact: p = k/100 % of 0..199 */
    tp_hist_reset(h);
    uint64_t vals[200];
    for (uint64_t v = 0; v < 200; v++) {
        vals[v] = v;
        tp_hist_record(h, 199 - v);
    }
    for (uint64_t k = 1; k <= 10000; k++) {
        uint64_t want = exact_pct(vals, 200, k * 100), got = tp_hist_percentile(h, (double)k / 100);
        if (got != want)
            fail_msg("p%g of 0..199: %llu, expected %llu", (double)k / 100, (unsigned long long)got,
                     (unsigned long long)want);
    }
    tp_hist_reset(h);
    TP_EQ_U64(h->count, 0);
    TP_EQ_U64(h->min, 0);
    TP_EQ_U64(h->max, 0);
    TP_EQ_U64(tp_hist_percentile(h, 99), 0);
    TP_NEAR_REL(tp_hist_stdev(h), 0, 0);
    tp_hist_record(h, 200);
    TP_EQ_U64(h->min, 200);
    TP_EQ_U64(tp_hist_percentile(h, 1), 200);
    TP_NEAR_REL(tp_hist_stdev(h), 0, 0);
    tp_hist_free(h);
}

static void check_bucket(unsigned i)
{
    uint64_t lo = tp_hist_bucket_lo(i), w = tp_hist_bucket_width(i);
    uint64_t hi = lo + (w - 1);
    if (w == 0 || hi < lo)
        fail_msg("bucket %u: lo %llu width %llu", i, (unsigned long long)lo, (unsigned long long)w);
    TP_EQ_U64(tp_hist_index(lo), i);
    TP_EQ_U64(tp_hist_index(hi), i);
    TP_EQ_U64(tp_hist_index(lo + w / 2), i);
    if (i > 0)
        TP_EQ_U64(tp_hist_index(lo - 1), i - 1);
    if (i + 1 < TP_HIST_BUCKETS)
        TP_EQ_U64(tp_hist_bucket_lo(i + 1), hi + 1);
    if (lo < 128)
        TP_EQ_U64(w, 1);
    else if (w > 1 && (double)w / (double)lo > 1.0 / 128)
        fail_msg("bucket %u: width %llu / lo %llu exceeds 1/128", i, (unsigned long long)w,
                 (unsigned long long)lo);
}

static void test_layout(void **state)
{
    (void)state;
    TP_EQ_U64(TP_HIST_BUCKETS, 7424);
    for (unsigned i = 0; i < TP_HIST_BUCKETS; i++)
        check_bucket(i);
    TP_EQ_U64(tp_hist_bucket_lo(0), 0);
    TP_EQ_U64(tp_hist_index(0), 0);
    TP_EQ_U64(tp_hist_index(127), 127);
    TP_EQ_U64(tp_hist_index(128), 128);
    TP_EQ_U64(tp_hist_index(255), 255);
    TP_EQ_U64(tp_hist_index(256), 256);
    TP_EQ_U64(tp_hist_index(257), 256);
    TP_EQ_U64(tp_hist_index(UINT64_MAX), TP_HIST_BUCKETS - 1);
    TP_EQ_U64(tp_hist_index(UINT64_MAX - 1), TP_HIST_BUCKETS - 1);
    TP_EQ_U64(tp_hist_bucket_lo(TP_HIST_BUCKETS - 1) + (tp_hist_bucket_width(TP_HIST_BUCKETS - 1) - 1),
           UINT64_MAX);
    TP_EQ_U64(tp_hist_index(UINT64_C(1) << 63), TP_HIST_BUCKETS - 128);
    /* one hour: the bucket holds it and is at most 1/128 wide */
    unsigned ih = tp_hist_index(HOUR_NS);
    uint64_t lo = tp_hist_bucket_lo(ih), w = tp_hist_bucket_width(ih);
    assert_true(lo <= HOUR_NS && HOUR_NS - lo < w);
    TP_NEAR_REL((double)w / (double)lo, 1.0 / 128, 1.0);
    /* random values of every magnitude land in the bucket that holds them */
    tp_test_rng = 7;
    for (int k = 0; k < 1000000; k++) {
        uint64_t v = tp_test_rnd() >> (tp_test_rnd() % 64);
        unsigned i = tp_hist_index(v);
        uint64_t b = tp_hist_bucket_lo(i);
        if (!(b <= v && v - b < tp_hist_bucket_width(i)))
            fail_msg("value %llu: bucket %u [%llu, +%llu)", (unsigned long long)v, i,
                     (unsigned long long)b, (unsigned long long)tp_hist_bucket_width(i));
    }
}

/* Extremes near UINT64_MAX record, report and clamp without overflow. */
static void test_extremes(void **state)
{
    (void)state;
    tp_hist *h = tp_hist_new();
    assert_non_null(h);
    tp_hist_record(h, UINT64_MAX);
    tp_hist_record(h, UINT64_MAX - 5);
    tp_hist_record(h, 0);
    TP_EQ_U64(h->min, 0);
    TP_EQ_U64(h->max, UINT64_MAX);
    TP_EQ_U64(tp_hist_percentile(h, 100), UINT64_MAX);
    uint64_t p50 = tp_hist_percentile(h, 50);
    assert_true(p50 >= tp_hist_bucket_lo(TP_HIST_BUCKETS - 1));
    TP_EQ_U64(tp_hist_percentile(h, 30), 0);
    tp_hist_free(h);
}

static void check_same(const tp_hist *a, const tp_hist *b, double tol)
{
    TP_EQ_U64(a->count, b->count);
    TP_EQ_U64(a->min, b->min);
    TP_EQ_U64(a->max, b->max);
    TP_NEAR_REL(a->mean, b->mean, tol);
    TP_NEAR_REL(tp_hist_stdev(a), tp_hist_stdev(b), tol);
    for (unsigned i = 0; i < TP_HIST_BUCKETS; i++)
        if (a->counts[i] != b->counts[i])
            fail_msg("bucket %u: %llu vs %llu", i, (unsigned long long)a->counts[i],
                     (unsigned long long)b->counts[i]);
}

static void test_merge(void **state)
{
    (void)state;
    tp_hist *whole = tp_hist_new(), *a = tp_hist_new(), *b = tp_hist_new(), *m = tp_hist_new();
    assert_true(whole && a && b && m);
    tp_test_rng = 3;
    for (int i = 0; i < 200000; i++) {
        /* halves with different shapes, so the cross term of Chan's formula matters */
        uint64_t v = i < 100000 ? lognormal() : exponential() + 5000000;
        tp_hist_record(whole, v);
        tp_hist_record(i < 100000 ? a : b, v);
    }
    tp_hist_merge(m, a); /* into empty */
    tp_hist_merge(m, b);
    check_same(m, whole, 1e-9);
    tp_hist_free(m);

    /* merging an empty histogram changes nothing; then a += b is the whole */
    tp_hist *e = tp_hist_new();
    assert_non_null(e);
    tp_hist_merge(a, e);
    TP_EQ_U64(a->count, 100000);
    tp_hist_merge(e, b);
    check_same(e, b, 0);
    tp_hist_merge(a, b);
    check_same(a, whole, 1e-9);

    /* a histogram merged into itself doubles: same mean, twice the m2 */
    double mean = b->mean, m2 = b->m2;
    uint64_t c0 = b->counts[tp_hist_index(b->min)];
    tp_hist_merge(b, b);
    TP_EQ_U64(b->count, 200000);
    TP_EQ_U64(b->counts[tp_hist_index(b->min)], 2 * c0);
    TP_NEAR_REL(b->mean, mean, 1e-12);
    TP_NEAR_REL(b->m2, 2 * m2, 1e-12);
    tp_hist_free(e);
    tp_hist_free(whole);
    tp_hist_free(a);
    tp_hist_free(b);
}

static void test_record_n(void **state)
{
    (void)state;
    tp_hist *a = tp_hist_new(), *b = tp_hist_new();
    assert_true(a && b);
    const uint64_t vals[] = {5, 1000, 77777, 5, 123456789, 3};
    const uint64_t reps[] = {3, 0, 10, 1, 2, 7};
    for (size_t k = 0; k < 6; k++) {
        tp_hist_record_n(a, vals[k], reps[k]);
        for (uint64_t r = 0; r < reps[k]; r++)
            tp_hist_record(b, vals[k]);
    }
    check_same(a, b, 1e-12);
    TP_EQ_U64(a->min, 3);
    tp_hist_free(a);
    tp_hist_free(b);
}

static void check_roundtrip(const tp_hist *h)
{
    json_t *j = tp_hist_to_json(h);
    assert_non_null(j);
    char *text = json_dumps(j, JSON_COMPACT);
    assert_non_null(text);
    json_error_t je;
    json_t *back = json_loads(text, 0, &je);
    assert_non_null(back);
    tp_error err = {0};
    tp_hist *g = tp_hist_from_json(back, &err);
    if (!g)
        fail_msg("round trip rejected: %s\n%s", err.msg, text);
    check_same(g, h, 0);
    assert_memory_equal(&g->mean, &h->mean, sizeof h->mean);
    assert_memory_equal(&g->m2, &h->m2, sizeof h->m2);
    tp_hist_free(g);
    free(text);
    json_decref(back);
    json_decref(j);
}

static void test_json_roundtrip(void **state)
{
    (void)state;
    tp_hist *h = tp_hist_new();
    assert_non_null(h);
    check_roundtrip(h); /* empty */
    tp_test_rng = 11;
    for (int i = 0; i < 100000; i++)
        tp_hist_record(h, lognormal());
    check_roundtrip(h);
    json_t *j = tp_hist_to_json(h);
    assert_non_null(j);
    TP_EQ_U64(json_integer_value(json_object_get(j, "sub_bits")), TP_HIST_SUB_BITS);
    TP_EQ_U64(json_integer_value(json_object_get(j, "count")), 100000);
    json_decref(j);
    /* values beyond INT64_MAX survive (as decimal strings) */
    tp_hist_record(h, UINT64_MAX);
    tp_hist_record_n(h, UINT64_C(1) << 63, 3);
    check_roundtrip(h);
    tp_hist_free(h);
}

/* from_json must reject text and name the field in the message */
static void expect_reject(const char *text, const char *field)
{
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);
    if (!j)
        fail_msg("test input is not JSON: %s", text);
    tp_error err = {0};
    tp_hist *h = tp_hist_from_json(j, &err);
    if (h)
        fail_msg("accepted malformed histogram %s", text);
    if (err.code != TP_EUSAGE)
        fail_msg("code %d, expected TP_EUSAGE for %s", err.code, text);
    if (!strstr(err.msg, field))
        fail_msg("message '%s' does not name '%s'", err.msg, field);
    json_decref(j);
}

static void test_json_malformed(void **state)
{
    (void)state;
    const char *ok = "{\"count\":3,\"min\":5,\"max\":300,\"mean\":105,\"m2\":1,\"sub_bits\":7,"
                     "\"buckets\":[[5,2],[278,1]]}";
    json_error_t je;
    json_t *j = json_loads(ok, 0, &je);
    tp_error err = {0};
    tp_hist *h = tp_hist_from_json(j, &err);
    if (!h)
        fail_msg("valid histogram rejected: %s", err.msg);
    TP_EQ_U64(tp_hist_percentile(h, 100), 300);
    TP_EQ_U64(tp_hist_percentile(h, 50), 5);
    tp_hist_free(h);
    json_decref(j);

    expect_reject("[]", "histogram");
    expect_reject("{\"min\":5,\"max\":300,\"mean\":105,\"m2\":1,\"sub_bits\":7,"
                  "\"buckets\":[[5,2],[278,1]]}",
                  "'count'");
    expect_reject("{\"count\":3,\"min\":5,\"max\":300,\"mean\":105,\"m2\":1,\"sub_bits\":7}",
                  "'buckets'");
    expect_reject("{\"count\":3,\"min\":5,\"max\":300,\"mean\":105,\"m2\":1,"
                  "\"buckets\":[[5,2],[278,1]]}",
                  "'sub_bits'");
    expect_reject("{\"count\":3,\"min\":5,\"max\":300,\"m2\":1,\"sub_bits\":7,"
                  "\"buckets\":[[5,2],[278,1]]}",
                  "'mean'");
    expect_reject("{\"count\":-3,\"min\":5,\"max\":300,\"mean\":105,\"m2\":1,\"sub_bits\":7,"
                  "\"buckets\":[[5,2],[278,1]]}",
                  "'count'");
    expect_reject("{\"count\":3,\"min\":5,\"max\":300,\"mean\":105,\"m2\":1,\"sub_bits\":7,"
                  "\"buckets\":[[5,2],[278,-1]]}",
                  "buckets[1]");
    expect_reject("{\"count\":3,\"min\":5,\"max\":300,\"mean\":105,\"m2\":1,\"sub_bits\":7,"
                  "\"buckets\":[[5,2],[7424,1]]}",
                  "buckets[1]");
    expect_reject("{\"count\":3,\"min\":5,\"max\":300,\"mean\":105,\"m2\":1,\"sub_bits\":7,"
                  "\"buckets\":[[-1,2],[278,1]]}",
                  "buckets[0]");
    expect_reject("{\"count\":3,\"min\":5,\"max\":300,\"mean\":105,\"m2\":1,\"sub_bits\":8,"
                  "\"buckets\":[[5,2],[278,1]]}",
                  "'sub_bits'");
    expect_reject("{\"count\":4,\"min\":5,\"max\":300,\"mean\":105,\"m2\":1,\"sub_bits\":7,"
                  "\"buckets\":[[5,2],[278,1]]}",
                  "'count'");
    expect_reject("{\"count\":3,\"min\":5,\"max\":300,\"mean\":105,\"m2\":1,\"sub_bits\":7,"
                  "\"buckets\":[[278,1],[5,2]]}",
                  "buckets[1]");
    expect_reject("{\"count\":3,\"min\":5,\"max\":300,\"mean\":105,\"m2\":1,\"sub_bits\":7,"
                  "\"buckets\":[[5,2,1],[278,1]]}",
                  "buckets[0]");
    expect_reject("{\"count\":3,\"min\":6,\"max\":300,\"mean\":105,\"m2\":1,\"sub_bits\":7,"
                  "\"buckets\":[[5,2],[278,1]]}",
                  "'min'");
    expect_reject("{\"count\":3,\"min\":5,\"max\":300,\"mean\":\"x\",\"m2\":1,\"sub_bits\":7,"
                  "\"buckets\":[[5,2],[278,1]]}",
                  "'mean'");
    expect_reject("{\"count\":3,\"min\":5,\"max\":\"12a\",\"mean\":105,\"m2\":1,\"sub_bits\":7,"
                  "\"buckets\":[[5,2],[278,1]]}",
                  "'max'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_extremes),
        cmocka_unit_test(test_percentiles_small_exact),
        cmocka_unit_test(test_percentiles_lognormal),
        cmocka_unit_test(test_percentiles_exponential),
        cmocka_unit_test(test_percentiles_uniform),
        cmocka_unit_test(test_percentiles_loguniform),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_record_n),
        cmocka_unit_test(test_json_roundtrip),
        cmocka_unit_test(test_json_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
