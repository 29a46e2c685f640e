/* The scale model: one candidate design at N GPUs, from the gradient
 * allreduce to the cost of a training run.
 *
 * A step is the slowest rank's compute (the maximum of N draws, sampled
 * through F^N), then the part of the allreduce the compute did not hide,
 * the rare stall that hits some rank, and any dataset read the prefetch
 * could not hide. Checkpoints cost a stall delta each; Daly's interval sets
 * how often, and his wall-time formula the share lost to checkpoints,
 * rework and restarts. Time to train follows, and the cost: GPU-hours,
 * the network's price spread over its amortization, storage by the
 * TB-month. docs/plan.md derives each term. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "tp/pattern.h"
#include "tp/plan.h"
#include "tp/units.h"

/* The sampled mean of the maximum: enough strata for 0.1 % on a normal. */
#define STRATA 4096

struct levels {
    double G, M;         /* GPUs per node in use, nodes */
    double lat_i, bw_i;  /* intra-node hop latency, bandwidth per GPU */
    double lat_n, bw_n;  /* inter-node hop latency, bandwidth per node (all NICs) */
};

static void levels(const struct tp_plan_spec *s, const struct tp_plan_candidate *c, double gpus,
                   struct levels *l)
{
    double g = s->c.gpus_per_node;
    l->M = ceil(gpus / g);
    if (l->M < 1)
        l->M = 1;
    l->G = gpus / l->M;
    l->lat_i = s->c.intra_lat_s;
    l->bw_i = s->c.intra_bw_Bps;
    l->lat_n = c->net_lat_s;
    l->bw_n = c->net_bw_Bps > 0 ? c->net_bw_Bps : c->link_bps / 8 * c->nics_per_node * c->efficiency;
    /* a fat tree's oversubscribed uplinks slow traffic between leaves; a
     * rail-optimised fabric keeps a collective's traffic on its rails */
    if (c->topology == TP_PLAN_FAT_TREE && c->oversubscription > 1)
        l->bw_n /= c->oversubscription;
}

/* Hops of each level per algorithm, and the bandwidth term; the latency of a
 * hop that crosses nodes is the network's, else the intra-node one. */
static double ring(const struct levels *l, double S)
{
    double n = l->G * l->M;
    if (n <= 1)
        return 0;
    /* lockstep: every one of the 2(n-1) steps waits for its slowest hop */
    double hop = l->M > 1 ? l->lat_n : l->lat_i;
    double bw = l->M > 1 ? fmin(l->bw_i, l->bw_n) : l->bw_i;
    return 2 * (n - 1) * hop + 2 * (n - 1) / n * S / bw;
}

static double tree(const struct levels *l, double S)
{
    double n = l->G * l->M;
    if (n <= 1)
        return 0;
    /* NCCL's: a double binary tree between nodes, a chain inside each; a
     * reduce up and a broadcast down, pipelined: each carries S */
    double lat = 2 * (ceil(log2(l->M)) * l->lat_n + (l->G - 1) * l->lat_i);
    double bw = l->M > 1 ? fmin(l->bw_i, l->bw_n) : l->bw_i;
    return lat + 2 * S / bw;
}

static double hier(const struct levels *l, double S)
{
    double n = l->G * l->M;
    if (n <= 1)
        return 0;
    /* reduce-scatter in the node, allreduce of S/G between nodes on each
     * GPU's share of the NICs, allgather in the node */
    double t = 0;
    if (l->G > 1)
        t += 2 * (l->G - 1) * l->lat_i + 2 * (l->G - 1) / l->G * S / l->bw_i;
    if (l->M > 1)
        t += 2 * (l->M - 1) * l->lat_n + 2 * (l->M - 1) / l->M * (S / l->G) / (l->bw_n / l->G);
    return t;
}

static double (*const algos[TP_PLAN_ALGOS])(const struct levels *, double) = {
    [TP_PLAN_RING] = ring, [TP_PLAN_TREE] = tree, [TP_PLAN_HIER] = hier};

/* Hops per level, for the jitter of the sum of their latencies. */
static void hops(const struct levels *l, enum tp_plan_algo a, double *hi, double *hn)
{
    double n = l->G * l->M;
    *hi = *hn = 0;
    if (n <= 1)
        return;
    switch (a) {
    case TP_PLAN_RING:
        *(l->M > 1 ? hn : hi) = 2 * (n - 1);
        break;
    case TP_PLAN_TREE:
        *hn = 2 * ceil(log2(l->M));
        *hi = 2 * (l->G - 1);
        break;
    default:
        *hi = 2 * (l->G - 1);
        *hn = 2 * (l->M - 1);
    }
}

double tp_plan_allreduce_s(const struct tp_plan_spec *s, const struct tp_plan_candidate *c,
                           double gpus, double bytes, enum tp_plan_algo algo,
                           enum tp_plan_algo *used)
{
    struct levels l;
    levels(s, c, gpus, &l);
    if (algo != TP_PLAN_AUTO) {
        if (used)
            *used = algo;
        return algos[algo](&l, bytes);
    }
    enum tp_plan_algo best = TP_PLAN_RING;
    double t = INFINITY;
    for (int a = TP_PLAN_RING; a < TP_PLAN_ALGOS; a++) {
        double x = algos[a](&l, bytes);
        if (x < t) {
            t = x;
            best = (enum tp_plan_algo)a;
        }
    }
    if (used)
        *used = best;
    return t;
}

static void compute_dist(const struct tp_plan_spec *s, struct tp_plan_dist *d)
{
    if (s->w.compute_samples && s->w.ncompute) {
        *d = (struct tp_plan_dist){.kind = TP_PLAN_EMPIRICAL, .sorted = s->w.compute_samples,
                                   .n = s->w.ncompute};
    } else {
        *d = (struct tp_plan_dist){.kind = TP_PLAN_NORMAL, .mu = s->w.compute_s,
                                   .sigma = s->w.compute_cv * s->w.compute_s};
    }
}

/* The spread of one allreduce: its hops' latencies add up. */
static double comm_sd(const struct tp_plan_spec *s, const struct tp_plan_candidate *c,
                      const struct levels *l, enum tp_plan_algo a)
{
    double hi, hn;
    hops(l, a, &hi, &hn);
    double si = s->c.intra_spread.sd_s, sn = c->net_spread.sd_s;
    return sqrt(hi * si * si + hn * sn * sn);
}

/* The checkpoint stall delta, and the interval it allows. */
static void checkpoint(const struct tp_plan_spec *s, const struct tp_plan_candidate *c,
                       double gpus, double mtbf, struct tp_plan_point *pt)
{
    double C = s->w.checkpoint_bytes;
    double write_s = c->commit_lat_s + C / c->write_Bps;
    if (!c->async_ckpt) {
        pt->ckpt_s = write_s;
        pt->interval_s = tp_plan_daly(pt->ckpt_s, mtbf);
        return;
    }
    /* async: each GPU snapshots its share to host memory and goes on; the
     * write must finish before the next checkpoint can start */
    pt->ckpt_s = C / gpus / c->snapshot_Bps;
    pt->interval_s = tp_plan_daly(pt->ckpt_s, mtbf);
    if (pt->interval_s < write_s)
        pt->interval_s = write_s;
}

/* Say why pt cannot stand as a result, if it cannot: the figures of sense
 * a plan takes keep every term finite except where the run never ends. */
static void judge(const struct tp_plan_spec *s, struct tp_plan_point *pt)
{
    const double f[] = {pt->comm_s,     pt->exposed_s,  pt->compute_s,  pt->jitter_s,
                        pt->rare_s,     pt->data_stall_s, pt->step_s,   pt->step_p99_s,
                        pt->ckpt_s,     pt->mtbf_s,     pt->interval_s, pt->waste,
                        pt->goodput,    pt->train_s,    pt->cost_gpu,   pt->cost_network,
                        pt->cost_storage, pt->cost};
    bool finite = true;
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        finite = finite && isfinite(f[i]);
    char a[48], b[48], c[48];
    if (!(pt->waste < 1) || !(pt->goodput > 0))
        snprintf(pt->why, sizeof pt->why,
                 "the job fails every %s on %.0f nodes, a restart takes %s and a checkpoint "
                 "stalls %s: the run never completes",
                 tp_fmt_duration_s(pt->mtbf_s, a, sizeof a), pt->nodes,
                 tp_fmt_duration_s(s->c.restart_s, b, sizeof b),
                 tp_fmt_duration_s(pt->ckpt_s, c, sizeof c));
    else if (!finite)
        snprintf(pt->why, sizeof pt->why, "a term of the model is not finite at %.0f GPUs",
                 pt->gpus);
}

void tp_plan_eval(const struct tp_plan_spec *s, const struct tp_plan_candidate *c, double gpus,
                  struct tp_plan_point *pt)
{
    struct levels l;
    levels(s, c, gpus, &l);
    *pt = (struct tp_plan_point){0};
    pt->nodes = l.M;
    pt->gpus = gpus = l.G * l.M;

    double S = s->w.params * s->w.grad_bytes_per_param;
    pt->comm_s = tp_plan_allreduce_s(s, c, gpus, S, c->algo, &pt->algo);
    double hidden = fmin(s->w.overlap * pt->comm_s, s->w.compute_s);
    pt->exposed_s = pt->comm_s - hidden;

    struct tp_plan_dist d;
    compute_dist(s, &d);
    double cmax, cp99;
    tp_plan_max_stats(&d, gpus, STRATA, &cmax, &cp99);
    pt->compute_s = cmax;
    pt->jitter_s = cmax - s->w.compute_s;
    double p_any = tp_plan_rare_event(s->w.spike_p, gpus);
    pt->rare_s = s->w.spike_s * p_any;

    double busy = cmax + pt->exposed_s + pt->rare_s;
    if (c->read_Bps > 0 && s->w.dataset_bytes_per_sample > 0) {
        double read_s = s->w.samples_per_gpu * gpus * s->w.dataset_bytes_per_sample / c->read_Bps;
        pt->data_stall_s = fmax(0, read_s - busy); /* the prefetch hides the rest */
    }
    pt->step_s = busy + pt->data_stall_s;
    /* the p99: the slowest rank's and the comm's deviations are independent,
     * so they add in quadrature; the rare stall is in the p99 once more
     * than 1 % of steps see it */
    double dc = cp99 - cmax, dn = 2.326 * comm_sd(s, c, &l, pt->algo);
    pt->step_p99_s = pt->step_s - pt->rare_s + sqrt(dc * dc + dn * dn) +
                     (p_any > 0.01 ? s->w.spike_s : 0);

    pt->mtbf_s = s->c.mtbf_job_s > 0 ? s->c.mtbf_job_s : s->c.mtbf_node_s / l.M;
    checkpoint(s, c, gpus, pt->mtbf_s, pt);
    pt->waste = tp_plan_waste(pt->interval_s, pt->ckpt_s, s->c.restart_s, pt->mtbf_s);
    double per_step = s->w.samples_per_gpu * gpus;
    pt->goodput = per_step / pt->step_s * (1 - pt->waste);
    pt->train_s = s->w.train_samples / pt->goodput;

    double hours = pt->train_s / 3600;
    pt->cost_gpu = gpus * s->p.gpu_hour * hours;
    pt->cost_network = l.M * c->node_cost * pt->train_s / s->p.amortization_s;
    double tb = s->w.checkpoint_bytes * s->p.checkpoints_kept / 1e12;
    pt->cost_storage = tb * c->tb_month * pt->train_s / (365.0 / 12 * 86400);
    pt->cost = pt->cost_gpu + pt->cost_network + pt->cost_storage;
    judge(s, pt);
}

double tp_plan_exposed_fraction(const struct tp_plan_point *pt)
{
    return pt->exposed_s / pt->step_s;
}

double tp_plan_break_even(const struct tp_plan_spec *s, const struct tp_plan_candidate *a,
                          const struct tp_plan_candidate *b, double lo, double hi)
{
    double g = s->c.gpus_per_node;
    double m0 = ceil(lo / g), m1 = ceil(hi / g);
    struct tp_plan_point pa, pb;
    tp_plan_eval(s, a, m1 * g, &pa);
    tp_plan_eval(s, b, m1 * g, &pb);
    if (!(pb.cost < pa.cost))
        return 0;
    /* a is cheaper at m0, b at m1: bisect on whole nodes */
    while (m1 - m0 > 1) {
        double mid = floor((m0 + m1) / 2);
        tp_plan_eval(s, a, mid * g, &pa);
        tp_plan_eval(s, b, mid * g, &pb);
        if (pb.cost < pa.cost)
            m1 = mid;
        else
            m0 = mid;
    }
    return m1 * g;
}

/* A uniform in (0, 1) from a splitmix64 stream. */
static double uniform(uint64_t *st)
{
    *st += 0x9e3779b97f4a7c15ull;
    return ((double)(tp_splitmix64(*st) >> 11) + 0.5) * 0x1p-53;
}

void tp_plan_simulate(const struct tp_plan_spec *s, const struct tp_plan_candidate *c,
                      double gpus, unsigned steps, uint64_t seed, double *out)
{
    struct tp_plan_point pt;
    tp_plan_eval(s, c, gpus, &pt);
    struct levels l;
    levels(s, c, pt.gpus, &l);
    struct tp_plan_dist d;
    compute_dist(s, &d);
    double sd = comm_sd(s, c, &l, pt.algo);
    double hidden = pt.comm_s - pt.exposed_s;
    double p_any = tp_plan_rare_event(s->w.spike_p, pt.gpus);
    double n = pt.gpus;
    uint64_t st = seed;
    for (unsigned i = 0; i < steps; i++) {
        /* the slowest rank: F^-1(u^(1/N)), one draw for all N ranks */
        double slow = tp_plan_max_quantile(&d, uniform(&st), n);
        double comm = pt.comm_s + (sd > 0 ? sd * tp_plan_norm_quantile(uniform(&st)) : 0);
        double t = slow + fmax(0, comm - hidden);
        if (p_any > 0 && uniform(&st) < p_any)
            t += s->w.spike_s;
        out[i] = t + pt.data_stall_s;
    }
}
