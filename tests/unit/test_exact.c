/* Exact summation: known hard cases (cancellation, ties, overflow, inf and
 * NaN), correct rounding against integer references, bitwise independence
 * from order and grouping, and the 16-bit formats. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tp/dtype.h"
#include "tp/exact.h"
#include "tp_test.h"

static double sum_of(const double *x, size_t n)
{
    tp_exact a;
    tp_exact_zero(&a);
    tp_exact_add_f64(&a, x, n);
    return tp_exact_f64(&a);
}

#define SAME(got, want)                                                                            \
    do {                                                                                           \
        double g_ = (got), w_ = (want);                                                            \
        if (memcmp(&g_, &w_, sizeof g_) != 0 && !(isnan(g_) && isnan(w_)))                         \
            fail_msg("%s = %a, expected %a", #got, g_, w_);                                        \
    } while (0)

static void hard_cases(void **state)
{
    (void)state;
    double p53 = ldexp(1, 53);
    SAME(sum_of((double[]){1e308, 1.0, -1e308}, 3), 1.0);
    SAME(sum_of((double[]){p53, 1.0, 1.0}, 3), p53 + 2);             /* naive order gives 2^53 */
    SAME(sum_of((double[]){p53, 1.0}, 2), p53);                      /* tie: to even */
    SAME(sum_of((double[]){p53, 1.0, ldexp(1, -1000)}, 3), p53 + 2); /* sticky breaks the tie */
    SAME(sum_of((double[]){p53 + 2, 1.0}, 2), p53 + 4);              /* tie: to even, upwards */
    double tenth[10];
    for (int i = 0; i < 10; i++)
        tenth[i] = 0.1;
    SAME(sum_of(tenth, 10), 1.0); /* as Python's math.fsum */
    SAME(sum_of((double[]){DBL_MAX, DBL_MAX}, 2), INFINITY);
    SAME(sum_of((double[]){DBL_MAX, DBL_MAX, -DBL_MAX}, 3), DBL_MAX); /* no overflow midway */
    SAME(sum_of((double[]){-DBL_MAX, -DBL_MAX}, 2), -INFINITY);
    SAME(sum_of((double[]){5e-324, 5e-324}, 2), 1e-323);
    SAME(sum_of((double[]){5e-324, -5e-324}, 2), 0.0);
    SAME(sum_of((double[]){INFINITY, 1.0}, 2), INFINITY);
    SAME(sum_of((double[]){INFINITY, -INFINITY}, 2), NAN);
    SAME(sum_of((double[]){NAN, 1.0}, 2), NAN);
    SAME(sum_of(NULL, 0), 0.0);
    SAME(sum_of((double[]){-1.5, -2.25}, 2), -3.75);
    SAME(sum_of((double[]){ldexp(1, 1023), ldexp(1, 1023), -ldexp(1, 1023)}, 3), ldexp(1, 1023));
}

static uint64_t rng(void)
{
    return tp_test_rnd();
}

/* A double with a random sign, mantissa and exponent in [lo, hi]. */
static double wide(int lo, int hi)
{
    double m = 1.0 + (double)(rng() >> 12) / 4503599627370496.0;
    int e = lo + (int)(rng() % (uint64_t)(hi - lo + 1));
    return (rng() & 1 ? -1 : 1) * ldexp(m, e);
}

static void order_and_grouping_do_not_matter(void **state)
{
    (void)state;
    enum { N = 100000 };
    static double x[N];
    tp_test_rng = 42;
    for (int i = 0; i < N; i++)
        x[i] = wide(-1000, 1000);
    tp_exact ref;
    tp_exact_zero(&ref);
    tp_exact_add_f64(&ref, x, N);
    tp_exact_normalize(&ref);
    double want = tp_exact_f64(&ref);
    for (int trial = 0; trial < 5; trial++) {
        for (int i = N - 1; i > 0; i--) { /* shuffle */
            int j = (int)(rng() % (uint64_t)(i + 1));
            double t = x[i];
            x[i] = x[j];
            x[j] = t;
        }
        /* split into 2..9 "ranks", merge in a random order */
        int parts = 2 + (int)(rng() % 8);
        tp_exact part[9];
        for (int p = 0; p < parts; p++)
            tp_exact_zero(&part[p]);
        for (int i = 0; i < N; i++)
            tp_exact_add(&part[rng() % (uint64_t)parts], x[i]);
        while (parts > 1) {
            int a = (int)(rng() % (uint64_t)parts), b = (a + 1) % parts;
            tp_exact_merge(&part[a], &part[b]);
            part[b] = part[--parts]; /* the last part takes b's place */
        }
        tp_exact_normalize(&part[0]);
        if (memcmp(part[0].d, ref.d, sizeof ref.d) != 0)
            fail_msg("trial %d: accumulator differs after reordering", trial);
        SAME(tp_exact_f64(&part[0]), want);
    }
}

static void correctly_rounded_against_integers(void **state)
{
    (void)state;
    tp_test_rng = 7;
    for (int trial = 0; trial < 2000; trial++) {
        int n = 1 + (int)(rng() % 50);
        double x[50];
        __int128 s = 0;
        for (int i = 0; i < n; i++) {
            int64_t v = (int64_t)(rng() >> 2) - (int64_t)(1ull << 61); /* ~62-bit integers */
            x[i] = (double)v;    /* rounded to 53 bits on the way in */
            s += (__int128)x[i]; /* exact: each double is an integer */
        }
        SAME(sum_of(x, (size_t)n), (double)s); /* int128 -> double rounds to nearest even */
    }
}

static void floats_round_once(void **state)
{
    (void)state;
    tp_test_rng = 9;
    for (int trial = 0; trial < 2000; trial++) {
        int n = 2 + (int)(rng() % 30);
        float x[32];
        double exact = 0; /* exact: values span < 53 bits in all */
        for (int i = 0; i < n; i++) {
            x[i] = (float)wide(-3, 20);
            exact += (double)x[i];
        }
        tp_exact a;
        tp_exact_zero(&a);
        tp_exact_add_f32(&a, x, (size_t)n);
        float got = tp_exact_f32(&a), want = (float)exact;
        if (memcmp(&got, &want, sizeof got) != 0)
            fail_msg("trial %d: %a, expected %a", trial, (double)got, (double)want);
    }
    tp_exact a;
    tp_exact_zero(&a);
    tp_exact_add(&a, (double)FLT_MAX);
    tp_exact_add(&a, (double)FLT_MAX);
    assert_true(isinf(tp_exact_f32(&a)));
    tp_exact_zero(&a);
    tp_exact_add(&a, ldexp(1, -150)); /* half the smallest float subnormal: tie to 0 */
    assert_true(tp_exact_f32(&a) == 0.0f);
    tp_exact_add(&a, ldexp(1, -200));
    assert_true(tp_exact_f32(&a) == ldexpf(1, -149));
}

static uint16_t h16(const double *x, size_t n, bool bf)
{
    tp_exact a;
    tp_exact_zero(&a);
    tp_exact_add_f64(&a, x, n);
    return bf ? tp_exact_bf16(&a) : tp_exact_f16(&a);
}

static void half_formats(void **state)
{
    (void)state;
    assert_int_equal(h16((double[]){1.0, ldexp(1, -11)}, 2, false), 0x3c00); /* tie: even */
    assert_int_equal(h16((double[]){1.0, ldexp(1, -11), ldexp(1, -20)}, 3, false), 0x3c01);
    assert_int_equal(h16((double[]){65504.0, 16.0}, 2, false), 0x7c00); /* tie to 2^16: inf */
    assert_int_equal(h16((double[]){65504.0, 15.0}, 2, false), 0x7bff);
    assert_int_equal(h16((double[]){ldexp(1, -25), ldexp(1, -25)}, 2, false), 0x0001);
    assert_int_equal(h16((double[]){ldexp(1, -25)}, 1, false), 0x0000);
    assert_int_equal(h16((double[]){-2.5}, 1, false), 0xc100);
    assert_int_equal(h16((double[]){1.0, ldexp(1, -8)}, 2, true), 0x3f80);
    assert_int_equal(h16((double[]){1.0, ldexp(1, -8), ldexp(1, -30)}, 3, true), 0x3f81);
    assert_int_equal(h16((double[]){-3.0}, 1, true), 0xc040);
    /* every 16-bit value converts to float exactly and back unchanged */
    for (uint32_t u = 0; u < 0x10000; u++) {
        float f = tp_f16_to_f32((uint16_t)u), b = tp_bf16_to_f32((uint16_t)u);
        if ((u & 0x7c00) != 0x7c00 && h16((double[]){(double)f}, 1, false) != (u == 0x8000 ? 0 : u))
            fail_msg("f16 0x%04x -> %a -> 0x%04x", u, (double)f,
                     h16((double[]){(double)f}, 1, false));
        if ((u & 0x7f80) != 0x7f80 && h16((double[]){(double)b}, 1, true) != (u == 0x8000 ? 0 : u))
            fail_msg("bf16 0x%04x -> %a -> 0x%04x", u, (double)b,
                     h16((double[]){(double)b}, 1, true));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hard_cases),
        cmocka_unit_test(order_and_grouping_do_not_matter),
        cmocka_unit_test(correctly_rounded_against_integers),
        cmocka_unit_test(floats_round_once),
        cmocka_unit_test(half_formats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
