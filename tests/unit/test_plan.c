/* Tests for the checkpoint-interval model: Young's optimum against the
 * closed form, Daly's against a brute-force minimisation of Daly's own
 * expected wall time, and the waste around the optimum. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>

#include "tp/pattern.h"
#include "tp/plan.h"

/* The interval minimising the wall time, by golden-section search. */
static double numeric_optimum(double delta, double restart, double mtbf)
{
    double lo = 1e-3, hi = 10 * mtbf, g = (sqrt(5) - 1) / 2;
    double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
    for (int i = 0; i < 300; i++) {
        if (tp_plan_wall_time(1, a, delta, restart, mtbf) < tp_plan_wall_time(1, b, delta, restart, mtbf)) {
            hi = b;
            b = a;
            a = hi - g * (hi - lo);
        } else {
            lo = a;
            a = b;
            b = lo + g * (hi - lo);
        }
    }
    return (lo + hi) / 2;
}

static void young(void **state)
{
    (void)state;
    /* a 5-minute checkpoint and a day between failures: sqrt(2 * 300 * 86400) = 7200 s */
    assert_true(fabs(tp_plan_young(300, 86400) - 7200) < 1e-9);
    assert_true(fabs(tp_plan_young(60, 3600) - sqrt(432000)) < 1e-9);
}

static void daly_matches_the_optimum(void **state)
{
    (void)state;
    const double cases[][2] = {{300, 86400}, {60, 3600}, {600, 7200}, {1800, 14400}, {5, 1e6}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double d = cases[i][0], m = cases[i][1];
        double opt = numeric_optimum(d, 0, m), daly = tp_plan_daly(d, m), young = tp_plan_young(d, m);
        print_message("delta %g M %g: optimum %.2f, Daly %.2f, Young %.2f\n", d, m, opt, daly, young);
        /* Daly's higher-order formula is within 1 % of the optimum ... */
        assert_true(fabs(daly - opt) / opt < 0.01);
        /* ... and closer to it than Young's first-order one */
        assert_true(fabs(daly - opt) <= fabs(young - opt) + 1e-9);
    }
    /* a checkpoint costing more than two MTBFs: checkpoint every MTBF */
    assert_true(tp_plan_daly(10000, 3000) == 3000);
}

static void waste(void **state)
{
    (void)state;
    double d = 300, m = 86400, tau = tp_plan_daly(d, m);
    double w = tp_plan_waste(tau, d, 0, m);
    /* at the optimum, about sqrt(2 delta / M) = 8.3 % is lost */
    print_message("waste at Daly's interval: %.4f\n", w);
    assert_true(w > 0.07 && w < 0.09);
    assert_true(tp_plan_waste(tau / 2, d, 0, m) > w);
    assert_true(tp_plan_waste(tau * 2, d, 0, m) > w);
    /* a restart cost only adds waste */
    assert_true(tp_plan_waste(tau, d, 600, m) > w);
    /* wall time scales with the work */
    assert_true(fabs(tp_plan_wall_time(10, tau, d, 0, m) - 10 * tp_plan_wall_time(1, tau, d, 0, m)) < 1e-9);
}


/* E[max of N standard normals] by integrating x N phi(x) Phi(x)^(N-1) dx */
static double integral_max(double n)
{
    double s = 0, h = 2e-4;
    for (double x = -10; x < 12; x += h) {
        double ph = exp(-x * x / 2) / sqrt(2 * M_PI), cdf = 0.5 * erfc(-x / sqrt(2));
        s += x * n * ph * pow(cdf, n - 1) * h;
    }
    return s;
}

static void max_of_normals(void **state)
{
    (void)state;
    struct tp_plan_dist d = {TP_PLAN_NORMAL, 0, 1, NULL, 0};
    for (double n = 8; n <= 65536; n *= 2) {
        double mean, p99, want = integral_max(n);
        tp_plan_max_stats(&d, n, 4096, &mean, &p99);
        assert_true(fabs(mean - want) / want < 0.01);
        /* the p99 of the maximum: F^N(p99) = 0.99 */
        assert_true(fabs(pow(0.5 * erfc(-p99 / sqrt(2)), n) - 0.99) < 1e-6);
    }
    /* shifted and scaled: E[max] = mu + sigma E[max of standard normals] */
    struct tp_plan_dist d2 = {TP_PLAN_NORMAL, 100, 5, NULL, 0};
    double m1, m2, p;
    tp_plan_max_stats(&d, 1000, 4096, &m1, &p);
    tp_plan_max_stats(&d2, 1000, 4096, &m2, &p);
    assert_true(fabs(m2 - (100 + 5 * m1)) < 1e-9);
    /* known quantiles */
    assert_true(fabs(tp_plan_norm_quantile(0.975) - 1.959963984540054) < 1e-12);
    assert_true(fabs(tp_plan_norm_quantile(1e-10) + 6.361340902404056) < 1e-9);
}

static double gauss(uint64_t *s)
{
    *s = tp_splitmix64(*s);
    double u1 = ((double)(*s >> 11) + 0.5) * 0x1.0p-53;
    *s = tp_splitmix64(*s);
    double u2 = (double)(*s >> 11) * 0x1.0p-53;
    return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Against brute force: draw N values, keep the largest, many times. */
static void max_against_monte_carlo(void **state)
{
    (void)state;
    uint64_t s = 42;
    /* an empirical distribution: a skewed step time, 2000 samples */
    double samples[2000];
    for (int i = 0; i < 2000; i++) {
        double g = gauss(&s);
        samples[i] = 10 + exp(0.5 * g);
    }
    qsort(samples, 2000, sizeof samples[0], cmp);
    struct tp_plan_dist emp = {TP_PLAN_EMPIRICAL, 0, 0, samples, 2000};
    struct tp_plan_dist nor = {TP_PLAN_NORMAL, 10, 2, NULL, 0};
    const int ns[] = {2, 4, 16};
    for (int t = 0; t < 2; t++) {
        const struct tp_plan_dist *d = t ? &emp : &nor;
        for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
            enum { TRIALS = 200000 };
            double sum = 0;
            for (int tr = 0; tr < TRIALS; tr++) {
                double mx = -INFINITY;
                for (int r = 0; r < ns[k]; r++) {
                    double v;
                    if (t) {
                        s = tp_splitmix64(s);
                        v = samples[s % 2000];
                    } else
                        v = 10 + 2 * gauss(&s);
                    mx = v > mx ? v : mx;
                }
                sum += mx;
            }
            double mc = sum / TRIALS, mean, p99;
            tp_plan_max_stats(d, ns[k], 4096, &mean, &p99);
            print_message("%s N=%d: inverse-F^N %.4f, Monte Carlo %.4f\n", t ? "empirical" : "normal",
                          ns[k], mean, mc);
            assert_true(fabs(mean - mc) / mc < 0.005);
        }
    }
}

static void rare_event(void **state)
{
    (void)state;
    assert_true(fabs(tp_plan_rare_event(0.01, 1) - 0.01) < 1e-15);
    assert_true(fabs(tp_plan_rare_event(0.01, 100) - (1 - pow(0.99, 100))) < 1e-12);
    /* tiny p at scale: 1 - (1 - 1e-9)^1e6 = 1e-3 - 5e-7 + ..., where the
     * naive formula loses most digits */
    assert_true(fabs(tp_plan_rare_event(1e-9, 1e6) - 9.995001666e-4) < 1e-12);
    assert_true(tp_plan_rare_event(0, 1e6) == 0 && tp_plan_rare_event(1, 5) == 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(young),
        cmocka_unit_test(daly_matches_the_optimum),
        cmocka_unit_test(waste),
        cmocka_unit_test(max_of_normals),
        cmocka_unit_test(max_against_monte_carlo),
        cmocka_unit_test(rare_event),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
