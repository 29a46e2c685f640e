/* The scale model behind `trainpath plan`: pure computation, no measuring.
 * This first part is the checkpoint interval: how often to checkpoint, given
 * what one checkpoint costs and how often the job fails. */
#ifndef TP_PLAN_H
#define TP_PLAN_H

/* Young (1974): the interval between checkpoints that minimises waste to
 * first order, tau = sqrt(2 delta M), for a checkpoint costing delta
 * seconds and a mean time between failures of M seconds. */
double tp_plan_young(double delta_s, double mtbf_s);

/* Daly (2006), the higher-order optimum: for delta < 2M,
 * tau = sqrt(2 delta M) [1 + (1/3) sqrt(delta / 2M) + (1/9) (delta / 2M)] - delta,
 * else tau = M. */
double tp_plan_daly(double delta_s, double mtbf_s);

/* Daly's expected wall time to complete work_s seconds of solve time when
 * checkpointing every tau seconds of work, each checkpoint costing delta,
 * each failure (exponential, mean M) costing a restart of restart_s plus the
 * work since the last checkpoint:
 *   T = M e^(R/M) (e^((tau + delta)/M) - 1) work / tau. */
double tp_plan_wall_time(double work_s, double tau_s, double delta_s, double restart_s,
                         double mtbf_s);

/* The fraction of wall time not spent on useful work at interval tau:
 * 1 - work / T (independent of work). */
double tp_plan_waste(double tau_s, double delta_s, double restart_s, double mtbf_s);

#endif
