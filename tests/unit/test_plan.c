/* Tests for the checkpoint-interval model: Young's optimum against the
 * closed form, Daly's against a brute-force minimisation of Daly's own
 * expected wall time, and the waste around the optimum. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(young),
        cmocka_unit_test(daly_matches_the_optimum),
        cmocka_unit_test(waste),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
