/* Checkpoint interval: Young's first-order optimum, Daly's higher-order one,
 * and Daly's expected wall time, from which the waste at any interval
 * follows. Pure functions (the tests check them against a brute-force
 * minimisation of the wall time), and `plan interval`, which is both
 * intervals and their waste with its result document. */
#include <math.h>

#include "tp/plan.h"
#include "tp/result.h"

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

void tp_plan_interval_run(struct tp_plan_interval *iv, json_t *doc)
{
    double d = iv->ckpt_s, m = iv->mtbf_s, r = iv->restart_s;
    iv->young_s = tp_plan_young(d, m);
    iv->daly_s = tp_plan_daly(d, m);
    iv->young_waste = tp_plan_waste(iv->young_s, d, r, m);
    iv->daly_waste = tp_plan_waste(iv->daly_s, d, r, m);
    if (!doc)
        return;
    json_object_set_new(
        doc, "config",
        json_pack("{s:f, s:f, s:f}", "checkpoint_cost_s", d, "mtbf_s", m, "restart_s", r));
    json_object_set_new(doc, "results",
                        json_pack("{s:{s:o, s:f}, s:{s:o, s:f}}", "daly", "interval",
                                  tp_metric(iv->daly_s, "s"), "waste_fraction", iv->daly_waste,
                                  "young", "interval", tp_metric(iv->young_s, "s"),
                                  "waste_fraction", iv->young_waste));
}
