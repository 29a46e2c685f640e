/* Tests for the scale model: Young's checkpoint interval against the
 * closed form, Daly's against a brute-force minimisation of Daly's own
 * expected wall time, and the waste around the optimum; the maximum of N
 * ranks against integration and Monte Carlo; the collective model's busbw
 * relations; a candidate's step, waste and cost; the break-even scale
 * against a scan; the direct simulation against brute force. The decision
 * (src/plan/decide.c): the ranking and its ties, the break-evens it finds
 * and those it does not, the dominant term, the words, and the result
 * documents of both subcommands. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp/coll.h"
#include "tp/pattern.h"
#include "tp/plan.h"
#include "tp/result.h"
#include "tp/units.h"
#include "tp_test.h"

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

/* Daly (2006), figures 3 to 5: delta = 5 min, R = 10 min, and M = 24 h, 6 h
 * and 15 min give optimum intervals of 117 min, 57 min and 9.1 min (as
 * printed, rounded). */
static void daly_published(void **state)
{
    (void)state;
    static const struct {
        double mtbf_min, tau_min, rounding_min;
    } fig[] = {{24 * 60, 117, 0.5}, {6 * 60, 57, 0.5}, {15, 9.1, 0.05}};
    for (size_t i = 0; i < sizeof fig / sizeof fig[0]; i++) {
        double tau = tp_plan_daly(300, fig[i].mtbf_min * 60) / 60;
        if (fabs(tau - fig[i].tau_min) > fig[i].rounding_min)
            fail_msg("M = %g min: Daly's interval %.3f min, published %g", fig[i].mtbf_min, tau,
                     fig[i].tau_min);
    }
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

/* A plan as the parser would leave it, built by hand. */
static void base_spec(struct tp_plan_spec *s)
{
    memset(s, 0, sizeof *s);
    s->w = (struct tp_plan_workload){.params = 1e9, .grad_bytes_per_param = 2,
                                     .samples_per_gpu = 8, .compute_s = 0.5, .compute_cv = 0.02,
                                     .checkpoint_bytes = 14e9, .train_samples = 1e9,
                                     .overlap = 0};
    snprintf(s->w.unit, sizeof s->w.unit, "samples");
    s->c = (struct tp_plan_cluster){.nodes = 16, .gpus_per_node = 8, .intra_lat_s = 2e-6,
                                    .intra_bw_Bps = 200e9, .mtbf_node_s = 5e6,
                                    .restart_s = 600};
    s->p = (struct tp_plan_prices){.gpu_hour = 2, .amortization_s = 3 * 365 * 86400.0,
                                   .checkpoints_kept = 2};
    s->cand[0] = (struct tp_plan_candidate){.link_bps = 400e9, .nics_per_node = 8,
                                            .efficiency = 1, .net_lat_s = 5e-6,
                                            .oversubscription = 1, .write_Bps = 50e9,
                                            .commit_lat_s = 0.01, .snapshot_Bps = 25e9};
    s->ncand = 1;
    s->sim_steps = 1000;
    s->seed = 1;
}

/* With no latency, algbw times nccl-tests' busbw factor is the bandwidth of
 * the slowest link each rank's traffic crosses. */
static void busbw_relations(void **state)
{
    (void)state;
    struct tp_plan_spec *s = calloc(1, sizeof *s);
    base_spec(s);
    s->c.intra_lat_s = 0;
    s->cand[0].net_lat_s = 0;
    double S = 1e9;
    enum tp_plan_algo used;
    for (int n = 2; n <= 8; n++) {
        /* one node: the intra-node bandwidth */
        double t = tp_plan_allreduce_s(s, &s->cand[0], n, S, TP_PLAN_RING, &used);
        double busbw = S / t * tp_coll_busbw_factor(TP_ALLREDUCE, n);
        assert_true(fabs(busbw / s->c.intra_bw_Bps - 1) < 1e-12);
        assert_int_equal(used, TP_PLAN_RING);
    }
    /* across nodes: the node's NICs (8 x 400 Gb/s = 400 GB/s) bound the ring */
    s->c.intra_bw_Bps = 900e9;
    double t = tp_plan_allreduce_s(s, &s->cand[0], 128, S, TP_PLAN_RING, NULL);
    double busbw = S / t * tp_coll_busbw_factor(TP_ALLREDUCE, 128);
    assert_true(fabs(busbw / 400e9 - 1) < 1e-12);
    /* oversubscription halves it on a fat tree, not on rails */
    s->cand[0].oversubscription = 2;
    t = tp_plan_allreduce_s(s, &s->cand[0], 128, S, TP_PLAN_RING, NULL);
    assert_true(fabs(S / t * tp_coll_busbw_factor(TP_ALLREDUCE, 128) / 200e9 - 1) < 1e-12);
    s->cand[0].topology = TP_PLAN_RAIL;
    t = tp_plan_allreduce_s(s, &s->cand[0], 128, S, TP_PLAN_RING, NULL);
    assert_true(fabs(S / t * tp_coll_busbw_factor(TP_ALLREDUCE, 128) / 400e9 - 1) < 1e-12);
    /* hierarchical: the intra-node and inter-node bandwidth terms in turn */
    double th = tp_plan_allreduce_s(s, &s->cand[0], 128, S, TP_PLAN_HIER, NULL);
    double want = 2 * 7.0 / 8 * S / 900e9 + 2 * 15.0 / 16 * S / 400e9;
    assert_true(fabs(th / want - 1) < 1e-12);
    /* the tree: 2 S over the slowest link */
    double tt = tp_plan_allreduce_s(s, &s->cand[0], 128, S, TP_PLAN_TREE, NULL);
    assert_true(fabs(tt / (2 * S / 400e9) - 1) < 1e-12);
    free(s);
}

/* Latency terms: 2(n-1) hops for the ring, 2 log2(nodes) + 2(G-1) for the
 * tree; auto takes the tree for small messages at scale and a bandwidth-
 * optimal one for large. */
static void algorithm_choice(void **state)
{
    (void)state;
    struct tp_plan_spec *s = calloc(1, sizeof *s);
    base_spec(s);
    s->c.nodes = 1024;
    double n = 8192, S = 8;
    double tr = tp_plan_allreduce_s(s, &s->cand[0], n, S, TP_PLAN_RING, NULL);
    double ring_lat = 2 * (n - 1) * 5e-6;
    assert_true(fabs(tr - ring_lat) / ring_lat < 1e-6);
    double tt = tp_plan_allreduce_s(s, &s->cand[0], n, S, TP_PLAN_TREE, NULL);
    double tree_lat = 2 * (10 * 5e-6 + 7 * 2e-6);
    assert_true(fabs(tt - tree_lat) / tree_lat < 1e-6);
    enum tp_plan_algo used;
    tp_plan_allreduce_s(s, &s->cand[0], n, S, TP_PLAN_AUTO, &used);
    assert_int_equal(used, TP_PLAN_TREE);
    double t = tp_plan_allreduce_s(s, &s->cand[0], 16, 4e9, TP_PLAN_AUTO, &used);
    assert_int_not_equal(used, TP_PLAN_TREE);
    assert_true(t <= tp_plan_allreduce_s(s, &s->cand[0], 16, 4e9, TP_PLAN_TREE, NULL));
    /* one rank: nothing to reduce */
    assert_true(tp_plan_allreduce_s(s, &s->cand[0], 1, 4e9, TP_PLAN_AUTO, NULL) == 0);
    free(s);
}

/* A candidate's step, checkpoint and cost, term by term. */
static void candidate_terms(void **state)
{
    (void)state;
    struct tp_plan_spec *s = calloc(1, sizeof *s);
    base_spec(s);
    s->w.overlap = 0.5;
    s->cand[0].node_cost = 30000;
    s->cand[0].tb_month = 50;
    struct tp_plan_point p;
    tp_plan_eval(s, &s->cand[0], 128, &p);
    assert_true(p.nodes == 16 && p.gpus == 128);
    assert_true(fabs(p.exposed_s - 0.5 * p.comm_s) < 1e-15);
    struct tp_plan_dist d = {.kind = TP_PLAN_NORMAL, .mu = 0.5, .sigma = 0.01};
    double m, p99;
    tp_plan_max_stats(&d, 128, 4096, &m, &p99);
    assert_true(fabs(p.compute_s - m) < 1e-12);
    assert_true(fabs(p.step_s - (m + p.exposed_s)) < 1e-12);
    /* delta: commit plus bytes over the write bandwidth; MTBF of 16 nodes */
    assert_true(fabs(p.ckpt_s - (0.01 + 14e9 / 50e9)) < 1e-12);
    assert_true(fabs(p.mtbf_s - 5e6 / 16) < 1e-6);
    assert_true(fabs(p.interval_s - tp_plan_daly(p.ckpt_s, p.mtbf_s)) < 1e-9);
    assert_true(fabs(p.waste - tp_plan_waste(p.interval_s, p.ckpt_s, 600, p.mtbf_s)) < 1e-12);
    double steps = 1e9 / (8 * 128.0);
    double wall = steps * p.step_s / (1 - p.waste);
    assert_true(fabs(p.train_s / wall - 1) < 1e-9);
    assert_true(fabs(p.cost_gpu / (128 * 2 * wall / 3600) - 1) < 1e-9);
    assert_true(fabs(p.cost_network / (16 * 30000 * wall / s->p.amortization_s) - 1) < 1e-9);
    assert_true(fabs(p.cost_storage / (28e9 / 1e12 * 50 * wall / (365.0 / 12 * 86400)) - 1) <
                1e-9);
    /* full overlap hides all of a comm shorter than the compute */
    s->w.overlap = 1;
    tp_plan_eval(s, &s->cand[0], 128, &p);
    assert_true(p.exposed_s == 0);
    /* async checkpoints stall for the snapshot of each GPU's share */
    s->cand[0].async_ckpt = true;
    tp_plan_eval(s, &s->cand[0], 128, &p);
    assert_true(fabs(p.ckpt_s - 14e9 / 128 / 25e9) < 1e-12);
    assert_true(p.interval_s >= 0.01 + 14e9 / 50e9);
    /* a dataset the storage cannot keep up with stalls the step */
    s->w.dataset_bytes_per_sample = 100e6;
    s->cand[0].read_Bps = 10e9;
    tp_plan_eval(s, &s->cand[0], 128, &p);
    double read_s = 8 * 128 * 100e6 / 10e9;
    assert_true(fabs(p.step_s - read_s) < 1e-9);
    free(s);
}

/* The break-even scale found by bisection is the first whole node count,
 * scanning up, at which the second design costs less. */
static void break_even(void **state)
{
    (void)state;
    struct tp_plan_spec *s = calloc(1, sizeof *s);
    base_spec(s);
    s->w.params = 1e8;
    /* a cheap slow network and a dear fast one: the slow one's latency
     * and bandwidth terms grow with the node count */
    s->cand[0].link_bps = 100e9;
    s->cand[0].nics_per_node = 1;
    s->cand[0].net_lat_s = 30e-6;
    s->cand[1] = s->cand[0];
    s->cand[1].link_bps = 400e9;
    s->cand[1].nics_per_node = 8;
    s->cand[1].node_cost = 20000;
    s->ncand = 2;
    double at = tp_plan_break_even(s, &s->cand[0], &s->cand[1], 8, 8192);
    assert_true(at > 8);
    double first = 0;
    for (double m = 1; m <= 1024 && first == 0; m++) {
        struct tp_plan_point a, b;
        tp_plan_eval(s, &s->cand[0], m * 8, &a);
        tp_plan_eval(s, &s->cand[1], m * 8, &b);
        if (b.cost < a.cost)
            first = m * 8;
    }
    if (at != first)
        fail_msg("break-even by bisection %g GPUs, by scan %g", at, first);
    print_message("break-even at %g GPUs\n", at);
    /* never cheaper in the range: 0 */
    s->cand[1].node_cost = 1e12;
    assert_true(tp_plan_break_even(s, &s->cand[0], &s->cand[1], 8, 8192) == 0);
    free(s);
}

/* The simulated steps (one draw of the maximum per step) agree with brute
 * force (N draws per step) and with the model's expected step. */
static void simulation(void **state)
{
    (void)state;
    struct tp_plan_spec *s = calloc(1, sizeof *s);
    base_spec(s);
    s->w.compute_cv = 0.05;
    unsigned steps = 20000;
    double *out = malloc(steps * sizeof *out);
    double n = 64;
    tp_plan_simulate(s, &s->cand[0], n, steps, 7, out);
    struct tp_plan_point p;
    tp_plan_eval(s, &s->cand[0], n, &p);
    double sum = 0;
    for (unsigned i = 0; i < steps; i++)
        sum += out[i];
    double sim = sum / steps;
    /* brute force: N normal draws per step, the maximum, plus the comm */
    uint64_t st = 99;
    double bf = 0;
    for (unsigned i = 0; i < steps; i++) {
        double mx = -INFINITY;
        for (int r = 0; r < (int)n; r++) {
            st += 0x9e3779b97f4a7c15ull;
            double u = ((double)(tp_splitmix64(st) >> 11) + 0.5) * 0x1p-53;
            double x = 0.5 + 0.025 * tp_plan_norm_quantile(u);
            mx = x > mx ? x : mx;
        }
        bf += mx + p.exposed_s;
    }
    bf /= steps;
    if (fabs(sim / bf - 1) > 0.002 || fabs(sim / p.step_s - 1) > 0.002)
        fail_msg("simulated %.6f s, brute force %.6f s, model %.6f s", sim, bf, p.step_s);
    /* the same seed, the same steps */
    double *again = malloc(steps * sizeof *again);
    tp_plan_simulate(s, &s->cand[0], n, steps, 7, again);
    assert_memory_equal(out, again, steps * sizeof *out);
    free(again);
    free(out);
    free(s);
}

/* ---- the decision ---- */

/* Two designs: a cheap slow network ("slow") and a dear fast one ("fast"),
 * the break_even test's pair, at 100 simulated steps. */
static void two_designs(struct tp_plan_spec *s)
{
    base_spec(s);
    s->w.params = 1e8;
    s->sim_steps = 100;
    snprintf(s->cand[0].name, sizeof s->cand[0].name, "slow");
    s->cand[0].link_bps = 100e9;
    s->cand[0].nics_per_node = 1;
    s->cand[0].net_lat_s = 30e-6;
    s->cand[1] = s->cand[0];
    snprintf(s->cand[1].name, sizeof s->cand[1].name, "fast");
    s->cand[1].link_bps = 400e9;
    s->cand[1].nics_per_node = 8;
    s->cand[1].node_cost = 20000;
    s->ncand = 2;
}

static const char *word(const struct tp_plan_decision *d, size_t i)
{
    return json_string_value(json_array_get(d->words, i));
}

/* Cheapest first by cost per run; equal costs keep the plan's order, and
 * the ranks follow the order. */
static void decide_ranking(void **state)
{
    (void)state;
    struct tp_plan_spec *s = calloc(1, sizeof *s);
    struct tp_plan_decision d;
    tp_error err = {0};
    base_spec(s);
    s->sim_steps = 10;
    /* two alike that cost more (a dearer network), then the cheapest */
    s->cand[0].node_cost = 50000;
    snprintf(s->cand[0].name, sizeof s->cand[0].name, "dear");
    s->cand[1] = s->cand[0];
    snprintf(s->cand[1].name, sizeof s->cand[1].name, "dear-too");
    s->cand[2] = s->cand[0];
    s->cand[2].node_cost = 0;
    snprintf(s->cand[2].name, sizeof s->cand[2].name, "cheap");
    s->ncand = 3;
    TP_EQ_INT(tp_plan_decide(s, 128, &d, &err), 0);
    TP_EQ_INT(d.order[0], 2);
    TP_EQ_INT(d.order[1], 0);
    TP_EQ_INT(d.order[2], 1);
    TP_EQ_INT(d.ev[2].rank, 1);
    TP_EQ_INT(d.ev[0].rank, 2);
    TP_EQ_INT(d.ev[1].rank, 3);
    assert_true(d.ev[2].pt.cost < d.ev[0].pt.cost);
    assert_true(d.ev[0].pt.cost == d.ev[1].pt.cost);
    /* each at the scale decided at, with its simulated run */
    struct tp_plan_point p;
    tp_plan_eval(s, &s->cand[1], 128, &p);
    assert_memory_equal(&p, &d.ev[1].pt, sizeof p);
    TP_NEAR_REL(d.ev[1].sim_mean_s, p.step_s, 0.01);
    assert_true(d.ev[1].sim_p99_s >= d.ev[1].sim_mean_s);
    tp_plan_decision_free(&d);
    /* the order of the plan decides ties, not the names: swapped, swapped */
    struct tp_plan_candidate x = s->cand[0];
    s->cand[0] = s->cand[1];
    s->cand[1] = x;
    TP_EQ_INT(tp_plan_decide(s, 128, &d, &err), 0);
    TP_EQ_STR(s->cand[d.order[1]].name, "dear-too");
    TP_EQ_STR(s->cand[d.order[2]].name, "dear");
    tp_plan_decision_free(&d);
    free(s);
}

/* A billion ranks: u^(1/N) rounds to 1 there, the tail does not; the mean
 * of the maximum stays finite and keeps growing with N (class 6 of issue
 * 19: at 1e9 GPUs the step used to be infinite). */
static void max_of_a_billion(void **state)
{
    (void)state;
    struct tp_plan_dist d = {TP_PLAN_NORMAL, 1, 0.02, NULL, 0};
    double prev = 0;
    for (double n = 1e6; n <= 1e15; n *= 1000) {
        double mean, p99;
        tp_plan_max_stats(&d, n, 4096, &mean, &p99);
        if (!(isfinite(mean) && isfinite(p99) && mean > prev && p99 > mean))
            fail_msg("N = %g: mean %g, p99 %g (previous mean %g)", n, mean, p99, prev);
        prev = mean;
    }
    /* the u-quantile at N = 1e9 against the asymptote of the maximum */
    double q = tp_plan_max_quantile(&d, 0.5, 1e9);
    assert_true(q > 1 + 0.02 * 5.9 && q < 1 + 0.02 * 6.3);
}

/* A candidate whose run never completes (its checkpoint stall is longer
 * than the job's MTBF allows) stays in the decision, ranked last, with its
 * reason said in words; the others are ranked as ever. */
static void never_completes(void **state)
{
    (void)state;
    struct tp_plan_spec *s = calloc(1, sizeof *s);
    struct tp_plan_decision d;
    tp_error err = {0};
    base_spec(s);
    s->sim_steps = 10;
    s->c.mtbf_node_s = 3600 * 16; /* the job: one failure an hour */
    snprintf(s->cand[0].name, sizeof s->cand[0].name, "stuck");
    s->cand[0].write_Bps = 1; /* 14e9 s per checkpoint */
    s->cand[1] = s->cand[0];
    snprintf(s->cand[1].name, sizeof s->cand[1].name, "fine");
    s->cand[1].write_Bps = 50e9;
    s->ncand = 2;
    TP_EQ_INT(tp_plan_decide(s, 128, &d, &err), 0);
    TP_EQ_INT(d.order[0], 1);
    TP_EQ_INT(d.order[1], 0);
    TP_EQ_INT(d.ev[0].rank, 2);
    assert_true(d.ev[0].pt.why[0] != 0);
    assert_non_null(strstr(d.ev[0].pt.why, "never completes"));
    TP_EQ_STR(d.ev[1].pt.why, "");
    assert_true(isfinite(d.ev[1].pt.cost) && d.ev[1].pt.cost > 0);
    bool said = false;
    for (size_t i = 0; i < d.nexplain; i++)
        said = said || strstr(word(&d, i), "stuck cannot be evaluated at 128 GPUs") != NULL;
    assert_true(said);
    for (int k = 0; k < d.nscales; k++)
        assert_true(d.sweep[k][0].why[0] != 0 && d.sweep[k][1].why[0] == 0);
    tp_plan_decision_free(&d);
    /* none completes: all kept, and said so */
    s->cand[1].write_Bps = 1;
    TP_EQ_INT(tp_plan_decide(s, 128, &d, &err), 0);
    TP_EQ_INT(d.order[0], 0);
    TP_EQ_INT(d.order[1], 1);
    said = false;
    for (size_t i = 0; i < d.nexplain; i++)
        said = said || strstr(word(&d, i), "no candidate completes") != NULL;
    assert_true(said);
    tp_plan_decision_free(&d);
    free(s);
}

/* The sweep's scales (one node's GPUs doubling up to the scale decided at,
 * then that scale, unless the plan names them), and the break-even of a
 * pair that crosses: where the scan finds it, and said in words after the
 * explanation. */
static void decide_break_even(void **state)
{
    (void)state;
    struct tp_plan_spec *s = calloc(1, sizeof *s);
    struct tp_plan_decision d;
    tp_error err = {0};
    two_designs(s);
    TP_EQ_INT(tp_plan_decide(s, 1000, &d, &err), 0);
    static const double want[] = {8, 16, 32, 64, 128, 256, 512, 1000};
    TP_EQ_INT(d.nscales, 8);
    for (int k = 0; k < d.nscales; k++)
        TP_NEAR(d.scales[k], want[k], 0);
    struct tp_plan_point p;
    tp_plan_eval(s, &s->cand[1], 64, &p);
    assert_memory_equal(&p, &d.sweep[3][1], sizeof p);
    /* slow costs less at 8 GPUs, fast from some scale on: one crossing */
    assert_true(d.sweep[0][0].cost < d.sweep[0][1].cost);
    TP_EQ_INT(d.ncross, 1);
    TP_EQ_INT(d.cross[0].cheaper, 1);
    TP_EQ_INT(d.cross[0].than, 0);
    TP_NEAR(d.cross[0].from_gpus, tp_plan_break_even(s, &s->cand[0], &s->cand[1], 8, 1000), 0);
    assert_true(d.cross[0].from_gpus > 8 && d.cross[0].from_gpus <= 1000);
    TP_EQ_INT(json_array_size(d.words), d.nexplain + 1);
    char line[128];
    snprintf(line, sizeof line, "fast becomes cheaper per run than slow from %.0f GPUs",
             d.cross[0].from_gpus);
    TP_EQ_STR(word(&d, d.nexplain), line);
    tp_plan_decision_free(&d);
    /* the plan's own sweep: its scales, and the break-even searched up to
     * the larger of its last and the scale decided at */
    s->sweep_gpus[0] = 16;
    s->sweep_gpus[1] = 64;
    s->nsweep = 2;
    TP_EQ_INT(tp_plan_decide(s, 1000, &d, &err), 0);
    TP_EQ_INT(d.nscales, 2);
    TP_NEAR(d.scales[1], 64, 0);
    TP_EQ_INT(d.ncross, 1);
    TP_NEAR(d.cross[0].from_gpus, tp_plan_break_even(s, &s->cand[0], &s->cand[1], 16, 1000), 0);
    tp_plan_decision_free(&d);
    free(s);
}

/* A pair that never crosses in the range: no break-even, no words for it. */
static void decide_no_break_even(void **state)
{
    (void)state;
    struct tp_plan_spec *s = calloc(1, sizeof *s);
    struct tp_plan_decision d;
    tp_error err = {0};
    two_designs(s);
    s->cand[1].node_cost = 1e12;
    TP_EQ_INT(tp_plan_decide(s, 1000, &d, &err), 0);
    TP_EQ_INT(d.ncross, 0);
    TP_EQ_INT(json_array_size(d.words), d.nexplain);
    TP_EQ_INT(d.order[0], 0);
    tp_plan_decision_free(&d);
    /* no candidates: refused, not a crash */
    s->ncand = 0;
    TP_EQ_INT(tp_plan_decide(s, 1000, &d, &err), TP_EUSAGE);
    TP_HAS(err.msg, "0 candidates");
    tp_plan_decision_free(&d);
    free(s);
}

/* The terms of the wall time, largest first, equal shares in their fixed
 * order, adding up to 1; on a slow network, exposed communication leads. */
static void dominant_term(void **state)
{
    (void)state;
    struct tp_plan_spec *s = calloc(1, sizeof *s);
    base_spec(s);
    /* by hand: 1 s steps, no waste, 0.5 s compute, 0.25 s each exposed
     * and waiting */
    struct tp_plan_point p = {.step_s = 1, .exposed_s = 0.25, .jitter_s = 0.2, .rare_s = 0.05};
    struct tp_plan_term t[TP_PLAN_TERMS];
    tp_plan_terms(s, &p, t);
    static const char *const order[TP_PLAN_TERMS] = {
        "compute", "exposed communication", "waiting for the slowest rank", "dataset reads",
        "checkpoints, rework and restarts"};
    static const double share[TP_PLAN_TERMS] = {0.5, 0.25, 0.25, 0, 0};
    for (int i = 0; i < TP_PLAN_TERMS; i++) {
        TP_EQ_STR(t[i].what, order[i]);
        TP_NEAR(t[i].share, share[i], 1e-15);
    }
    /* a real point: the shares add up to 1 and descend */
    s->cand[0].link_bps = 1e9;
    tp_plan_eval(s, &s->cand[0], 128, &p);
    tp_plan_terms(s, &p, t);
    TP_EQ_STR(t[0].what, "exposed communication");
    TP_NEAR_REL(t[0].share, p.exposed_s * (1 - p.waste) / p.step_s, 1e-12);
    double sum = 0;
    for (int i = 0; i < TP_PLAN_TERMS; i++) {
        sum += t[i].share;
        if (i > 0)
            assert_true(t[i].share <= t[i - 1].share);
    }
    TP_NEAR(sum, 1, 1e-12);
    free(s);
}

/* The words for two designs at 1000 GPUs: the worst's exposed communication
 * against the best, what the best costs and what its wall time is, the
 * slowest rank, the rare stall when there is one, the checkpoints. */
static void explanation(void **state)
{
    (void)state;
    struct tp_plan_spec *s = calloc(1, sizeof *s);
    struct tp_plan_decision d;
    tp_error err = {0};
    char a[48], b[48], line[512];
    two_designs(s);
    TP_EQ_INT(tp_plan_decide(s, 1000, &d, &err), 0);
    TP_EQ_INT(d.order[0], 1); /* fast wins at this scale */
    TP_EQ_INT(d.nexplain, 4);
    const struct tp_plan_point *best = &d.ev[1].pt, *worst = &d.ev[0].pt;
    snprintf(line, sizeof line,
             "at 1000 GPUs the step of slow is %.0f %% exposed communication; fast cuts it to "
             "%.0f %% and saves %s per run (%s sooner)",
             100 * tp_plan_exposed_fraction(worst), 100 * tp_plan_exposed_fraction(best),
             tp_fmt_money(worst->cost - best->cost, a, sizeof a),
             tp_fmt_duration_s(worst->train_s - best->train_s, b, sizeof b));
    TP_EQ_STR(word(&d, 0), line);
    struct tp_plan_term t[TP_PLAN_TERMS];
    tp_plan_terms(s, best, t);
    snprintf(line, sizeof line,
             "fast costs least: %s per run, %s to train; its wall time is %.1f %% %s",
             tp_fmt_money(best->cost, a, sizeof a), tp_fmt_duration_s(best->train_s, b, sizeof b),
             100 * t[0].share, t[0].what);
    if (strncmp(word(&d, 1), line, strlen(line)) != 0)
        fail_msg("\"%s\" does not start \"%s\"", word(&d, 1), line);
    TP_HAS(word(&d, 2), "the slowest of 1000 ranks adds ");
    TP_HAS(word(&d, 2), " of compute (a normal)");
    TP_HAS(word(&d, 3), "fast: checkpoint every ");
    tp_plan_decision_free(&d);
    /* a rare stall adds a sentence; one design alone is not said to cost
     * least, nor compared */
    s->w.spike_s = 0.05;
    s->w.spike_p = 1e-5;
    s->ncand = 1;
    TP_EQ_INT(tp_plan_decide(s, 1000, &d, &err), 0);
    TP_EQ_INT(d.nexplain, 4);
    TP_HAS(word(&d, 0), "slow: ");
    TP_HAS(word(&d, 0), " per run, ");
    assert_null(strstr(word(&d, 0), "costs least"));
    snprintf(line, sizeof line,
             "a 50.0 ms stall at per-rank probability 1e-05 hits %.1f %% of steps",
             100 * tp_plan_rare_event(1e-5, 1000));
    TP_HAS(word(&d, 2), line);
    tp_plan_decision_free(&d);
    free(s);
}

/* tp_plan_run on the commented example: the document's config and results
 * are the decision's; a plan that cannot be read leaves only its name. */
static void run_document(void **state)
{
    (void)state;
    struct tp_plan_spec *s = calloc(1, sizeof *s);
    struct tp_plan_decision d;
    tp_error err = {0};
    const char *ex = TP_SOURCE_ROOT "/docs/examples/plan.yaml";
    json_t *doc = tp_result_new("plan", NULL);
    TP_EQ_INT(tp_plan_run(ex, 64, s, &d, doc, &err), 0);
    json_t *cfg = json_object_get(doc, "config"), *r = json_object_get(doc, "results");
    TP_EQ_STR(json_string_value(json_object_get(cfg, "plan_file")), ex);
    TP_NEAR(json_real_value(json_object_get(cfg, "gpus")), 64, 0);
    TP_NEAR(json_real_value(json_object_get(r, "nodes")), 8, 0);
    json_t *ranking = json_object_get(r, "ranking"), *cands = json_object_get(r, "candidates");
    TP_EQ_INT(json_array_size(ranking), 3);
    for (int i = 0; i < 3; i++) {
        const char *name = s->cand[d.order[i]].name;
        TP_EQ_STR(json_string_value(json_array_get(ranking, (size_t)i)), name);
        json_t *c = json_array_get(cands, (size_t)i);
        TP_EQ_STR(json_string_value(json_object_get(c, "name")), name);
        TP_EQ_INT(json_integer_value(json_object_get(c, "rank")), i + 1);
        TP_EQ_INT(json_array_size(json_object_get(json_object_get(c, "simulation"), "series")),
                  1000);
    }
    assert_true(json_equal(json_object_get(r, "words"), d.words));
    TP_EQ_INT(json_array_size(json_object_get(r, "sweep")), 6);
    TP_EQ_INT(json_array_size(json_object_get(r, "break_even")), d.ncross);
    tp_plan_decision_free(&d);
    tp_plan_spec_free(s);
    json_decref(doc);
    /* a plan that does not exist: its name alone, no results */
    memset(s, 0, sizeof *s);
    doc = tp_result_new("plan", NULL);
    TP_EQ_INT(tp_plan_run("/nonexistent/plan.yaml", 0, s, &d, doc, &err), TP_EUSAGE);
    cfg = json_object_get(doc, "config");
    TP_EQ_INT(json_object_size(cfg), 1);
    TP_EQ_STR(json_string_value(json_object_get(cfg, "plan_file")), "/nonexistent/plan.yaml");
    TP_EQ_INT(json_object_size(json_object_get(doc, "results")), 0);
    tp_plan_decision_free(&d);
    tp_plan_spec_free(s);
    json_decref(doc);
    free(s);
}

/* plan interval: both intervals, their waste, and the document. */
static void interval_document(void **state)
{
    (void)state;
    struct tp_plan_interval iv = {.ckpt_s = 300, .mtbf_s = 86400, .restart_s = 600};
    json_t *doc = tp_result_new("plan interval", NULL);
    tp_plan_interval_run(&iv, doc);
    TP_NEAR_REL(iv.young_s, 7200, 1e-12);
    TP_NEAR_REL(iv.daly_s, tp_plan_daly(300, 86400), 1e-15);
    TP_NEAR_REL(iv.daly_waste, tp_plan_waste(iv.daly_s, 300, 600, 86400), 1e-15);
    assert_true(iv.daly_waste <= iv.young_waste);
    json_t *cfg = json_object_get(doc, "config"), *r = json_object_get(doc, "results");
    TP_NEAR(json_real_value(json_object_get(cfg, "restart_s")), 600, 0);
    json_t *young = json_object_get(r, "young");
    TP_NEAR(json_real_value(json_object_get(json_object_get(young, "interval"), "value")),
            iv.young_s, 0);
    TP_NEAR(json_real_value(json_object_get(young, "waste_fraction")), iv.young_waste, 0);
    json_decref(doc);
    /* no document: the figures alone */
    struct tp_plan_interval bare = {.ckpt_s = 300, .mtbf_s = 86400, .restart_s = 600};
    tp_plan_interval_run(&bare, NULL);
    TP_NEAR(bare.daly_s, iv.daly_s, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(young),
        cmocka_unit_test(daly_matches_the_optimum),
        cmocka_unit_test(daly_published),
        cmocka_unit_test(waste),
        cmocka_unit_test(max_of_normals),
        cmocka_unit_test(max_against_monte_carlo),
        cmocka_unit_test(rare_event),
        cmocka_unit_test(busbw_relations),
        cmocka_unit_test(algorithm_choice),
        cmocka_unit_test(candidate_terms),
        cmocka_unit_test(break_even),
        cmocka_unit_test(simulation),
        cmocka_unit_test(decide_ranking),
        cmocka_unit_test(max_of_a_billion),
        cmocka_unit_test(never_completes),
        cmocka_unit_test(decide_break_even),
        cmocka_unit_test(decide_no_break_even),
        cmocka_unit_test(dominant_term),
        cmocka_unit_test(explanation),
        cmocka_unit_test(run_document),
        cmocka_unit_test(interval_document),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
