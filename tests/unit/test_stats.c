/* Unit tests of the summary statistics: small samples with hand-computed
 * results, the Student's t table and interval, agreement of the histogram
 * path with the exact path on random data, degenerate inputs and the JSON
 * form. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp/stats.h"
#include "tp_test.h"

/* Both paths over the same small sample: below 256 the histogram is exact,
 * so every field must agree exactly. */
static void both(const uint64_t *v, uint64_t n, tp_stats *exact, tp_stats *fromh)
{
    uint64_t *copy = malloc((n ? n : 1) * sizeof *copy);
    tp_hist *h = tp_hist_new();
    assert_true(copy && h);
    if (n)
        memcpy(copy, v, n * sizeof *v);
    for (uint64_t i = 0; i < n; i++)
        tp_hist_record(h, v[i]);
    tp_stats_from_samples(copy, n, exact);
    tp_stats_from_hist(h, fromh);
    tp_hist_free(h);
    free(copy);
}

static void same_stats(const tp_stats *a, const tp_stats *b, double tol)
{
    TP_EQ_U64(a->count, b->count);
    TP_NEAR_REL(a->min, b->min, tol);
    TP_NEAR_REL(a->max, b->max, tol);
    TP_NEAR_REL(a->mean, b->mean, 1e-12);
    TP_NEAR_REL(a->stdev, b->stdev, 1e-9);
    TP_NEAR_REL(a->p50, b->p50, tol);
    TP_NEAR_REL(a->p90, b->p90, tol);
    TP_NEAR_REL(a->p99, b->p99, tol);
    TP_NEAR_REL(a->p999, b->p999, tol);
    TP_NEAR_REL(a->p9999, b->p9999, tol);
    TP_NEAR_REL(a->mad, b->mad, tol);
    TP_NEAR_REL(a->cv, b->cv, 1e-9);
    TP_NEAR_REL(a->ci95_lo, b->ci95_lo, 1e-9);
    TP_NEAR_REL(a->ci95_hi, b->ci95_hi, 1e-9);
}

static void test_one_to_ten(void **state)
{
    (void)state;
    const uint64_t v[] = {7, 3, 10, 1, 9, 2, 8, 4, 6, 5}; /* unsorted on purpose */
    tp_stats s, h;
    both(v, 10, &s, &h);
    TP_EQ_U64(s.count, 10);
    TP_NEAR(s.min, 1, 0);
    TP_NEAR(s.max, 10, 0);
    TP_NEAR(s.mean, 5.5, 1e-15);
    TP_NEAR_REL(s.stdev, 3.0276503540974917, 1e-15); /* sqrt(82.5 / 9) */
    TP_NEAR(s.p50, 5, 0);                     /* nearest rank: ceil(5) = 5th value */
    TP_NEAR(s.p90, 9, 0);                     /* ceil(9) = 9th */
    TP_NEAR(s.p99, 10, 0);
    TP_NEAR(s.p999, 10, 0);
    TP_NEAR(s.p9999, 10, 0);
    /* |x - 5| sorted: 0 1 1 2 2 3 3 4 4 5; 5th is 2 */
    TP_NEAR(s.mad, 2, 0);
    TP_NEAR_REL(s.cv, 3.0276503540974917 / 5.5, 1e-15);
    double half = 2.2622 * 3.0276503540974917 / sqrt(10);
    TP_NEAR(s.ci95_lo, 5.5 - half, 1e-3);
    TP_NEAR(s.ci95_hi, 5.5 + half, 1e-3);
    same_stats(&h, &s, 0);
}

static void test_small_samples(void **state)
{
    (void)state;
    tp_stats s, h;
    /* mean 5, sum of squares 32; median (4th of 8) 4; |x-4|: 0 0 0 1 1 2 3 5 -> 1 */
    const uint64_t a[] = {2, 4, 4, 4, 5, 5, 7, 9};
    both(a, 8, &s, &h);
    TP_NEAR(s.mean, 5, 1e-15);
    TP_NEAR_REL(s.stdev, sqrt(32.0 / 7), 1e-15);
    TP_NEAR(s.p50, 4, 0);
    TP_NEAR(s.mad, 1, 0);
    TP_NEAR(s.p90, 9, 0);
    same_stats(&h, &s, 0);

    /* outlier: median 3, |x-3|: 0 1 1 2 997 -> 1; the mean moves, the MAD does not */
    const uint64_t b[] = {1, 2, 3, 4, 1000};
    both(b, 5, &s, &h);
    TP_NEAR(s.mean, 202, 1e-15);
    TP_NEAR(s.p50, 3, 0);
    TP_NEAR(s.mad, 1, 0);
    TP_NEAR(s.p90, 1000, 0);
    TP_NEAR(h.mad, 1, 0);
    TP_NEAR(h.p50, 3, 0);

    /* all equal: no spread at all */
    const uint64_t c[] = {42, 42, 42, 42};
    both(c, 4, &s, &h);
    TP_NEAR(s.stdev, 0, 0);
    TP_NEAR(s.mad, 0, 0);
    TP_NEAR(s.cv, 0, 0);
    TP_NEAR(s.ci95_lo, 42, 0);
    TP_NEAR(s.ci95_hi, 42, 0);
    same_stats(&h, &s, 0);

    /* zeros: mean 0 gives cv 0, not NaN */
    const uint64_t z[] = {0, 0, 0};
    both(z, 3, &s, &h);
    TP_NEAR(s.cv, 0, 0);
    TP_NEAR(h.cv, 0, 0);
}

static void test_empty_and_single(void **state)
{
    (void)state;
    tp_stats s, h;
    memset(&s, 0xff, sizeof s);
    memset(&h, 0xff, sizeof h);
    both(NULL, 0, &s, &h);
    tp_stats zero;
    memset(&zero, 0, sizeof zero);
    assert_memory_equal(&s, &zero, sizeof zero);
    assert_memory_equal(&h, &zero, sizeof zero);

    const uint64_t one[] = {1234};
    both(one, 1, &s, &h);
    TP_EQ_U64(s.count, 1);
    TP_NEAR(s.mean, 1234, 0);
    TP_NEAR(s.min, 1234, 0);
    TP_NEAR(s.max, 1234, 0);
    TP_NEAR(s.p50, 1234, 0);
    TP_NEAR(s.p9999, 1234, 0);
    TP_NEAR(s.stdev, 0, 0);
    TP_NEAR(s.mad, 0, 0);
    TP_NEAR(s.ci95_lo, 1234, 0);
    TP_NEAR(s.ci95_hi, 1234, 0);
    same_stats(&h, &s, 0); /* min and max clamp the bucket midpoint */
}

static void test_t_table(void **state)
{
    (void)state;
    TP_NEAR(tp_t975(1), 12.706, 1e-3);
    TP_NEAR(tp_t975(2), 4.303, 1e-3);
    TP_NEAR(tp_t975(5), 2.571, 1e-3);
    TP_NEAR(tp_t975(10), 2.228, 1e-3);
    TP_NEAR(tp_t975(30), 2.042, 1e-3);
    TP_NEAR(tp_t975(40), 2.021, 1e-3);
    TP_NEAR(tp_t975(50), 2.0086, 1e-3); /* interpolated */
    TP_NEAR(tp_t975(60), 2.000, 1e-3);
    TP_NEAR(tp_t975(100), 1.9840, 1e-3);
    TP_NEAR(tp_t975(120), 1.980, 1e-3);
    TP_NEAR(tp_t975(200), 1.9719, 1e-3);
    TP_NEAR(tp_t975(1000), 1.9623, 1e-3);
    TP_NEAR(tp_t975(UINT64_MAX), 1.960, 1e-3);
    assert_true(isinf(tp_t975(0)));
    for (uint64_t df = 1; df < 2000; df++)
        if (!(tp_t975(df + 1) <= tp_t975(df)))
            fail_msg("t975 not decreasing: t(%llu) = %g, t(%llu) = %g", (unsigned long long)df,
                     tp_t975(df), (unsigned long long)df + 1, tp_t975(df + 1));
}

/* the interval follows mean +- t * s / sqrt(n) */
static void test_ci(void **state)
{
    (void)state;
    uint64_t v[100];
    tp_test_rng = 5;
    for (int i = 0; i < 100; i++)
        v[i] = 1000 + tp_test_rnd() % 100;
    tp_stats s;
    tp_stats_from_samples(v, 100, &s);
    double half = tp_t975(99) * s.stdev / 10;
    TP_NEAR_REL(s.ci95_lo, s.mean - half, 1e-12);
    TP_NEAR_REL(s.ci95_hi, s.mean + half, 1e-12);
    TP_NEAR(tp_t975(99), 1.9842, 1e-3);
    assert_true(s.ci95_lo < s.mean && s.mean < s.ci95_hi);
}

/* From a histogram, percentiles and MAD within 1 % of the exact values;
 * the moments are exact. */
static void check_agree(const char *name, double (*gen)(void))
{
    enum { N = 200000 };
    uint64_t *v = malloc(N * sizeof *v);
    tp_hist *h = tp_hist_new();
    assert_true(v && h);
    for (int i = 0; i < N; i++) {
        double x = gen();
        v[i] = x < 1 ? 1 : (uint64_t)x;
        tp_hist_record(h, v[i]);
    }
    tp_stats e, s;
    tp_stats_from_samples(v, N, &e);
    tp_stats_from_hist(h, &s);
    print_message("%s: p50 %.0f/%.0f mad %.0f/%.0f p99.99 %.0f/%.0f\n", name, s.p50, e.p50, s.mad,
                  e.mad, s.p9999, e.p9999);
    same_stats(&s, &e, 0.01);
    tp_hist_free(h);
    free(v);
}

static double gen_lognormal(void)
{
    return exp(log(50000) + tp_test_normal());
}

static double gen_exponential(void)
{
    return -2e6 * log(tp_test_unif());
}

static double gen_bimodal(void)
{
    return tp_test_unif() < 0.8 ? 10000 + 500 * tp_test_normal() : 1e6 + 1e5 * tp_test_normal();
}

static void test_hist_vs_samples(void **state)
{
    (void)state;
    tp_test_rng = 17;
    check_agree("lognormal", gen_lognormal);
    check_agree("exponential", gen_exponential);
    check_agree("bimodal", gen_bimodal);
}

static double field(const json_t *j, const char *key)
{
    const json_t *v = json_object_get(j, key);
    if (!json_is_number(v))
        fail_msg("field '%s' missing or not a number", key);
    return json_number_value(v);
}

static void test_json(void **state)
{
    (void)state;
    const uint64_t v[] = {7000, 3000, 10000, 1000, 9000, 2000, 8000, 4000, 6000, 5000};
    uint64_t copy[10];
    memcpy(copy, v, sizeof v);
    tp_stats s;
    tp_stats_from_samples(copy, 10, &s);
    json_t *j = tp_stats_to_json(&s, 1000, "us");
    assert_non_null(j);
    static const char *const keys[] = {"count", "min", "mean",    "stdev",   "p50",
                                       "p90",   "p99", "p99_9",   "p99_99",  "max",
                                       "cv",    "mad", "ci95_lo", "ci95_hi", "unit"};
    TP_EQ_U64(json_object_size(j), sizeof keys / sizeof keys[0]);
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        if (!json_object_get(j, keys[k]))
            fail_msg("field '%s' missing", keys[k]);
    assert_true(json_is_integer(json_object_get(j, "count")));
    TP_EQ_U64(json_integer_value(json_object_get(j, "count")), 10);
    assert_string_equal(json_string_value(json_object_get(j, "unit")), "us");
    TP_NEAR(field(j, "min"), 1, 1e-12);
    TP_NEAR(field(j, "max"), 10, 1e-12);
    TP_NEAR(field(j, "mean"), 5.5, 1e-12);
    TP_NEAR(field(j, "stdev"), 3.0276503540974917, 1e-12);
    TP_NEAR(field(j, "p50"), 5, 1e-12);
    TP_NEAR(field(j, "p90"), 9, 1e-12);
    TP_NEAR(field(j, "p99"), 10, 1e-12);
    TP_NEAR(field(j, "p99_9"), 10, 1e-12);
    TP_NEAR(field(j, "p99_99"), 10, 1e-12);
    TP_NEAR(field(j, "mad"), 2, 1e-12);
    TP_NEAR(field(j, "cv"), s.cv, 0); /* unitless: not scaled */
    TP_NEAR(field(j, "ci95_lo"), s.ci95_lo / 1000, 1e-12);
    TP_NEAR(field(j, "ci95_hi"), s.ci95_hi / 1000, 1e-12);
    json_decref(j);

    j = tp_stats_to_json(&s, 1, "ns");
    assert_non_null(j);
    TP_NEAR(field(j, "mean"), 5500, 1e-9);
    json_decref(j);

    assert_null(tp_stats_to_json(&s, 0, "ns"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_to_ten),
        cmocka_unit_test(test_small_samples),
        cmocka_unit_test(test_empty_and_single),
        cmocka_unit_test(test_t_table),
        cmocka_unit_test(test_ci),
        cmocka_unit_test(test_hist_vs_samples),
        cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
