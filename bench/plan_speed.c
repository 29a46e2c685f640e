/* The speed of the plan's jitter model at a million ranks: 1,000 training
 * steps simulated by sampling the slowest rank directly through the inverse
 * of F^N (one uniform per step), against brute force (N draws per step, the
 * way a simulator that models every rank works), on one core.
 *
 * usage: plan_speed PLAN.yaml [GPUS] [STEPS] [BRUTE_STEPS]
 * Prints the time of each, their ratio, and both methods' mean step. The
 * brute force runs BRUTE_STEPS steps (default 5) and its per-step time is
 * extrapolated to STEPS, as the line says. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tp/pattern.h"
#include "tp/plan.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: plan_speed PLAN.yaml [GPUS] [STEPS] [BRUTE_STEPS]\n");
        return 2;
    }
    double gpus = argc > 2 ? atof(argv[2]) : 1e6;
    unsigned steps = argc > 3 ? (unsigned)atoi(argv[3]) : 1000;
    unsigned brute = argc > 4 ? (unsigned)atoi(argv[4]) : 5;
    struct tp_plan_spec *s = calloc(1, sizeof *s);
    tp_error err;
    if (!s || tp_plan_parse(argv[1], s, &err) || tp_plan_resolve(s, &err)) {
        fprintf(stderr, "plan_speed: %s\n", s ? err.msg : "out of memory");
        return 2;
    }
    const struct tp_plan_candidate *c = &s->cand[0];
    double *out = malloc(steps * sizeof *out);
    if (!out)
        return 1;

    /* the model: one candidate evaluated and STEPS steps simulated */
    double t0 = now();
    struct tp_plan_point pt;
    tp_plan_eval(s, c, gpus, &pt);
    tp_plan_simulate(s, c, gpus, steps, 1, out);
    double direct = now() - t0, mean = 0;
    for (unsigned i = 0; i < steps; i++)
        mean += out[i] / steps;

    /* brute force: N normal draws per step, the slowest taken, and the rare
     * stall if any rank draws it */
    double mu = s->w.compute_s, sd = s->w.compute_cv * s->w.compute_s, bmean = 0;
    uint64_t st = 12345;
    t0 = now();
    for (unsigned i = 0; i < brute; i++) {
        double mx = -INFINITY;
        bool spike = false;
        for (double r = 0; r < pt.gpus; r++) {
            st += 0x9e3779b97f4a7c15ull;
            double u = ((double)(tp_splitmix64(st) >> 11) + 0.5) * 0x1p-53;
            double x = mu + sd * tp_plan_norm_quantile(u);
            mx = x > mx ? x : mx;
            st += 0x9e3779b97f4a7c15ull;
            spike |= ((double)(tp_splitmix64(st) >> 11) + 0.5) * 0x1p-53 < s->w.spike_p;
        }
        bmean += (mx + pt.exposed_s + pt.data_stall_s + (spike ? s->w.spike_s : 0)) / brute;
    }
    double bf = (now() - t0) / brute * steps;
    printf("plan-speed: %s, %.0f GPUs, %u steps, candidate %s\n", s->w.name, pt.gpus, steps,
           c->name);
    printf("  direct (F^N inverse)  %10.4f s  mean step %.4f s (model %.4f s)\n", direct, mean,
           pt.step_s);
    printf("  brute force (N draws) %10.1f s  mean step %.4f s over %u steps (time extrapolated "
           "from %u to %u steps)\n", bf, bmean, brute, brute, steps);
    printf("  ratio brute/direct    %10.0fx   under 1 s: %s\n", bf / direct,
           direct < 1 ? "yes" : "NO");
    free(out);
    tp_plan_spec_free(s);
    free(s);
    return 0;
}
