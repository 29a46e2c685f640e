/* Checkpoint interval: Young's first-order optimum, Daly's higher-order one,
 * and Daly's expected wall time, from which the waste at any interval
 * follows. Pure functions; the tests check them against a brute-force
 * minimisation of the wall time. */
#include <math.h>

#include "tp/plan.h"

double tp_plan_young(double delta_s, double mtbf_s)
{
    return sqrt(2 * delta_s * mtbf_s);
}

double tp_plan_daly(double delta_s, double mtbf_s)
{
    if (delta_s >= 2 * mtbf_s)
        return mtbf_s;
    double x = delta_s / (2 * mtbf_s);
    return sqrt(2 * delta_s * mtbf_s) * (1 + sqrt(x) / 3 + x / 9) - delta_s;
}

double tp_plan_wall_time(double work_s, double tau_s, double delta_s, double restart_s,
                         double mtbf_s)
{
    return mtbf_s * exp(restart_s / mtbf_s) * expm1((tau_s + delta_s) / mtbf_s) * work_s / tau_s;
}

double tp_plan_waste(double tau_s, double delta_s, double restart_s, double mtbf_s)
{
    return 1 - 1 / tp_plan_wall_time(1, tau_s, delta_s, restart_s, mtbf_s);
}
