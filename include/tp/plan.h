/* The scale model behind `trainpath plan`: pure computation, no measuring.
 * Five parts: the checkpoint interval (how often to checkpoint, given what
 * one checkpoint costs and how often the job fails); the jitter at scale
 * (the step waits for the slowest of N ranks); the plan file (a workload, a
 * cluster, prices and candidate designs, each figure nominal or measured);
 * the model that turns a plan into step time, checkpoint waste, time to
 * train and cost per candidate and scale; and the decision: the candidates
 * ranked, swept over scales, their break-even scales and the words that
 * explain them, with the result documents of both subcommands. */
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


/* ---- jitter: the step is the maximum over N ranks ---- */

#include <stddef.h>
#include <stdint.h>

/* A per-rank step-time distribution: a normal, or an empirical one given by
 * its sorted samples (measured step times). */
struct tp_plan_dist {
    int kind; /* TP_PLAN_NORMAL or TP_PLAN_EMPIRICAL */
    double mu, sigma;      /* normal */
    const double *sorted;  /* empirical: n ascending samples */
    size_t n;
};
#define TP_PLAN_NORMAL 0
#define TP_PLAN_EMPIRICAL 1

/* The standard normal's inverse CDF (Acklam's rational approximation, one
 * Halley step on erfc: about 1e-15 relative), for 0 < p < 1. */
double tp_plan_norm_quantile(double p);

/* Quantile q (0..1) of d: mu + sigma z(q), or the empirical quantile
 * interpolated between order statistics. */
double tp_plan_dist_quantile(const struct tp_plan_dist *d, double q);

/* The u-quantile (0 < u < 1) of the maximum of N independent draws from d:
 * F^-1(u^(1/N)), computed through the tail 1 - u^(1/N) so that it stays
 * finite and exact for any N (a billion ranks). */
double tp_plan_max_quantile(const struct tp_plan_dist *d, double u, double n_ranks);

/* The maximum of N independent draws from d, sampled directly: its CDF is
 * F^N, so its quantile u is F^-1(u^(1/N)); the mean is the integral of that
 * over u, by the midpoint rule on k strata (k = 4096 is plenty). Cost O(k),
 * whatever N. Fills the mean and the p99 of the maximum. */
void tp_plan_max_stats(const struct tp_plan_dist *d, double n_ranks, unsigned k, double *mean,
                       double *p99);

/* The probability that at least one of N ranks sees an event of per-rank
 * probability p in a step: 1 - (1 - p)^N, accurate for tiny p. */
double tp_plan_rare_event(double p, double n_ranks);



/* ---- the plan file ---- */

#include <stdbool.h>
#include "tp/error.h"

#define TP_PLAN_MAX_CAND 16
#define TP_PLAN_MAX_SWEEP 64
#define TP_PLAN_NAME 64
/* The largest cluster a plan may describe (docs/plan.md, "Limits"); --gpus
 * and the sweep take at most TP_PLAN_MAX_GPUS. */
#define TP_PLAN_MAX_NODES 1000000
#define TP_PLAN_MAX_GPUS_PER_NODE 1024
#define TP_PLAN_MAX_GPUS (TP_PLAN_MAX_NODES * TP_PLAN_MAX_GPUS_PER_NODE)

enum tp_plan_algo { TP_PLAN_AUTO, TP_PLAN_RING, TP_PLAN_TREE, TP_PLAN_HIER, TP_PLAN_ALGOS };
enum tp_plan_topo { TP_PLAN_FAT_TREE, TP_PLAN_RAIL };

/* "auto", "ring", "tree", "hierarchical"; "fat-tree", "rail-optimised". */
const char *tp_plan_algo_name(enum tp_plan_algo a);
const char *tp_plan_topo_name(enum tp_plan_topo t);

/* The figures a plan file may take from a measured result document
 * (`KEY: {measured: FILE}`), and the kinds of result each accepts. */
enum tp_plan_fig {
    TP_FIG_COMPUTE,      /* workload.compute_time: step */
    TP_FIG_INTRA_LAT,    /* cluster.intra_node.latency: net lat, coll */
    TP_FIG_INTRA_BW,     /* cluster.intra_node.bandwidth: net bw, coll */
    TP_FIG_NET_LAT,      /* candidates[i].network.latency: net lat, coll */
    TP_FIG_NET_BW,       /* candidates[i].network.bandwidth: net bw, coll */
    TP_FIG_WRITE_BW,     /* candidates[i].storage.write_bandwidth: io checkpoint */
    TP_FIG_READ_BW,      /* candidates[i].storage.read_bandwidth: io dataset */
    TP_FIG_COMMIT_LAT,   /* candidates[i].storage.commit_latency: io commit, io checkpoint */
    TP_FIG_COUNT
};

/* Where a `measured:` reference stands in the plan file, for the error if
 * the file it names cannot serve. */
struct tp_plan_ref {
    enum tp_plan_fig fig;
    int cand;             /* candidate index, -1 for workload and cluster */
    char file[4096];      /* as resolved: relative to the plan file's folder */
    char where[256];      /* "plan.yaml:12:18: candidates[1].network.latency" */
    /* filled by tp_plan_resolve: */
    char command[32];     /* the result's command ("coll", "io checkpoint") */
    char source[192];     /* what was taken, in words */
    double value;         /* the figure, in seconds or bytes per second */
};

/* A figure's spread, when it came from a measurement (0 when nominal). */
struct tp_plan_spread {
    double sd_s;           /* standard deviation of one hop's latency */
    double p99_s;          /* its 99th percentile */
};

struct tp_plan_workload {
    char from[1024];               /* workload.from: a recorded workload file
                                      (docs/workload.md), as given; "" none */
    char name[TP_PLAN_NAME];
    char unit[16];                 /* "samples" (default) or "tokens": a label */
    double params;                 /* model parameters */
    double grad_bytes_per_param;   /* default 2 (bf16) */
    double samples_per_gpu;        /* per step; the global batch grows with N */
    double compute_s;              /* per step and GPU: the mean */
    double compute_cv;             /* rank-to-rank spread when nominal (default 0.02) */
    double *compute_samples;       /* measured: per-rank compute times, sorted (s) */
    size_t ncompute;
    double dataset_bytes_per_sample; /* read from storage per sample (default 0) */
    double checkpoint_bytes;       /* default 14 bytes per parameter */
    double train_samples;          /* to train once */
    double overlap;                /* share of the comm the compute can hide, 0..1 */
    double spike_s, spike_p;       /* rare event: a stall of spike_s with per-rank,
                                      per-step probability spike_p */
};

struct tp_plan_cluster {
    double nodes, gpus_per_node;
    double intra_lat_s;            /* one hop between GPUs of a node (default 3 us) */
    double intra_bw_Bps;           /* per GPU (default 150 GB/s) */
    struct tp_plan_spread intra_spread;
    double mtbf_node_s;            /* mean time between failures of one node */
    double mtbf_job_s;             /* or of the whole job (then not scaled with N) */
    double restart_s;              /* after a failure (default 10 min) */
};

struct tp_plan_prices {
    double gpu_hour;               /* $ per GPU-hour (the node with it) */
    double amortization_s;         /* network cost spread over (default 3 years) */
    double checkpoints_kept;       /* storage holds this many (default 2) */
};

struct tp_plan_candidate {
    char name[TP_PLAN_NAME];
    char net_kind[32];             /* a label: tcp, roce, infiniband, ... */
    double link_bps;               /* bits/s of one NIC */
    double nics_per_node;          /* default 1 */
    double efficiency;             /* share of the link a collective gets (default 0.8) */
    double net_lat_s;              /* one hop between nodes */
    double net_bw_Bps;             /* per node, all NICs; 0: link x nics x efficiency */
    struct tp_plan_spread net_spread;
    enum tp_plan_topo topology;
    double oversubscription;       /* default 1 */
    enum tp_plan_algo algo;
    double node_cost;              /* $ per node for this network option */
    char storage_kind[32];         /* a label: nfs, nvme-of/tcp, ... */
    double write_Bps;              /* aggregate checkpoint write bandwidth */
    double read_Bps;               /* aggregate dataset read bandwidth (0: unlimited) */
    double commit_lat_s;           /* fixed cost of one checkpoint commit */
    double tb_month;               /* $ per TB-month of storage */
    bool async_ckpt;               /* stall only for the snapshot */
    double snapshot_Bps;           /* per GPU, device to host (default 25 GB/s) */
};

struct tp_plan_spec {
    char file[4096];
    struct tp_plan_workload w;
    struct tp_plan_cluster c;
    struct tp_plan_prices p;
    struct tp_plan_candidate cand[TP_PLAN_MAX_CAND];
    int ncand;
    double sweep_gpus[TP_PLAN_MAX_SWEEP]; /* empty: powers of two up to the cluster */
    int nsweep;
    unsigned sim_steps;            /* simulate this many steps (default 1000) */
    uint64_t seed;
    struct tp_plan_ref *refs;      /* the `measured:` references, in file order */
    size_t nrefs;
};

/* Read a plan file (YAML) into spec, defaults applied. Every error names the
 * file, line, column and key path; unknown keys and impossible values
 * (negative, zero nodes, an overlap above 1) are errors. `measured:`
 * references are recorded in spec->refs, not read: tp_plan_resolve does
 * that. TP_EUSAGE on any error; spec is then to be freed all the same. */
int tp_plan_parse(const char *path, struct tp_plan_spec *spec, tp_error *err);

/* Free what parse and resolve allocated; spec may be zeroed or partial. */
void tp_plan_spec_free(struct tp_plan_spec *spec);

/* Read each `measured:` file and put its figure into spec. A file that is
 * missing, not a trainpath result, a failed run or the wrong kind of result
 * for its key is a TP_EUSAGE error naming both the plan location and the
 * file. */
int tp_plan_resolve(struct tp_plan_spec *spec, tp_error *err);

/* ---- the model ---- */

/* Allreduce of bytes over gpus ranks of nodes nodes, by algorithm, on this
 * candidate: the latency term (hops times the hop latency of each level) plus
 * the bandwidth term, whose busbw relations are those of nccl-tests (ring
 * 2(n-1)/n on the slowest link a rank's traffic crosses). TP_PLAN_AUTO picks
 * the fastest and reports it in *used. Seconds. */
double tp_plan_allreduce_s(const struct tp_plan_spec *s, const struct tp_plan_candidate *c,
                           double gpus, double bytes, enum tp_plan_algo algo,
                           enum tp_plan_algo *used);

/* One candidate at one scale. */
struct tp_plan_point {
    double gpus, nodes;
    enum tp_plan_algo algo;
    double comm_s;          /* the gradient allreduce */
    double exposed_s;       /* what the compute did not hide */
    double compute_s;       /* expected slowest rank's compute */
    double jitter_s;        /* compute_s minus the mean rank's compute */
    double rare_s;          /* expected stall from the rare event */
    double data_stall_s;    /* storage reads the prefetch could not hide */
    double step_s;          /* expected step time */
    double step_p99_s;
    double ckpt_s;          /* delta: the stall of one checkpoint */
    double mtbf_s;          /* the job's */
    double interval_s;      /* Daly's optimum */
    double waste;           /* share of wall time lost to checkpoints and failures */
    double goodput;         /* samples (or tokens) per second, waste deducted */
    double train_s;         /* time to train */
    double cost_gpu, cost_network, cost_storage, cost; /* $ per run */
    /* Empty when every figure above is finite; else why this candidate
     * cannot be evaluated at this scale ("the job fails every 3.6 ms ...").
     * Such a point is kept (never dropped), ranked after those that can
     * be, and its figures that are not finite are left out of documents. */
    char why[192];
};

/* The share of pt's step that is exposed communication: exposed_s / step_s. */
double tp_plan_exposed_fraction(const struct tp_plan_point *pt);

/* Evaluate candidate c at gpus GPUs: on ceil(gpus / gpus_per_node) nodes,
 * the GPUs spread evenly over them (11 GPUs of 8 per node: 2 nodes of 5.5).
 * A run that cannot complete (failures faster than restarts and
 * checkpoints allow) or any figure that is not finite fills pt->why. */
void tp_plan_eval(const struct tp_plan_spec *s, const struct tp_plan_candidate *c, double gpus,
                  struct tp_plan_point *pt);

/* The smallest GPU count in [lo, hi] (whole nodes) from which candidate b
 * costs less per run than a, where a costs less at lo; 0 if b never does in
 * the range. Bisection: b's advantage is taken to change sign once. */
double tp_plan_break_even(const struct tp_plan_spec *s, const struct tp_plan_candidate *a,
                          const struct tp_plan_candidate *b, double lo, double hi);

/* Simulate steps training steps of candidate c at gpus GPUs: each step's
 * slowest rank drawn directly from F^N (one uniform, not N draws), plus the
 * communication with its hop jitter and the rare event. Fills out[steps]
 * (seconds). Deterministic for a seed. */
void tp_plan_simulate(const struct tp_plan_spec *s, const struct tp_plan_candidate *c,
                      double gpus, unsigned steps, uint64_t seed, double *out);

/* ---- the decision: src/plan/decide.c, explain.c, doc.c ---- */

#include <jansson.h>

/* One term of a candidate's wall time (the step over 1 - waste) and its
 * share of it. */
struct tp_plan_term {
    const char *what;  /* "compute", "exposed communication", ... */
    double share;      /* 0..1 */
};
#define TP_PLAN_TERMS 5

/* Split pt's wall time into its terms: compute (the mean rank's), exposed
 * communication, waiting for the slowest rank (jitter and the rare stall),
 * dataset reads, and checkpoints, rework and restarts. Fills t largest
 * first, equal shares in that order; the shares add up to 1. */
void tp_plan_terms(const struct tp_plan_spec *s, const struct tp_plan_point *pt,
                   struct tp_plan_term t[TP_PLAN_TERMS]);

/* One candidate at the scale of the decision, with its simulated run. */
struct tp_plan_outcome {
    struct tp_plan_point pt;
    double sim_mean_s, sim_p99_s;  /* of the simulated steps (p99: nearest rank) */
    double *series;                /* the spec's sim_steps simulated steps (s) */
    int rank;                      /* 1: costs least per run */
};

/* From from_gpus on, candidate cheaper costs less per run than candidate
 * than, which cost less at the sweep's smallest scale. */
struct tp_plan_crossing {
    int cheaper, than;             /* candidate indices */
    double from_gpus;
};

struct tp_plan_decision {
    double gpus;                          /* the scale decided at */
    struct tp_plan_outcome ev[TP_PLAN_MAX_CAND]; /* by candidate index */
    int order[TP_PLAN_MAX_CAND];          /* candidate indices, cheapest first */
    double scales[TP_PLAN_MAX_SWEEP + 1]; /* the sweep's GPU counts */
    int nscales;
    struct tp_plan_point (*sweep)[TP_PLAN_MAX_CAND]; /* [k][i]: candidate i at scales[k] */
    struct tp_plan_crossing cross[TP_PLAN_MAX_CAND * (TP_PLAN_MAX_CAND - 1)];
    int ncross;
    /* the explanation, one string per sentence: first the words about the
     * scale decided at (nexplain of them), then one per crossing */
    json_t *words;
    size_t nexplain;
};

/* Decide between the candidates of s at gpus GPUs: evaluate each there and
 * simulate its run (s->sim_steps steps from s->seed), rank them by cost per
 * run (equal costs keep the plan file's order), evaluate each over the
 * sweep's scales (the plan's, else gpus_per_node doubled up to gpus, and
 * gpus), find the break-even scale of every pair in which one costs less at
 * the smallest scale, and say in words what matters. d is overwritten.
 * Returns 0. On error (TP_EUSAGE for a spec without candidates, TP_ENOMEM)
 * err says why and d holds what was allocated. Either way d is to be freed
 * with tp_plan_decision_free. */
int tp_plan_decide(const struct tp_plan_spec *s, double gpus, struct tp_plan_decision *d,
                   tp_error *err);

/* Free what tp_plan_decide allocated; d may be zeroed or partial. */
void tp_plan_decision_free(struct tp_plan_decision *d);

/* `trainpath plan FILE`: read the plan file at path into s (tp_plan_parse,
 * tp_plan_resolve), decide at gpus GPUs (0: the cluster's nodes times
 * gpus_per_node) into d, and fill doc's "config" (the effective plan) and
 * "results" (the candidates ranked, the words, the sweep and the
 * break-evens). On error the error of the step that failed is returned with
 * err set, doc's config names only the plan file when the plan could not be
 * read, and its results stay as they were. s and d are to be freed
 * (tp_plan_spec_free, tp_plan_decision_free) either way. */
int tp_plan_run(const char *path, double gpus, struct tp_plan_spec *s,
                struct tp_plan_decision *d, json_t *doc, tp_error *err);

/* `trainpath plan interval`: the checkpoint interval alone. */
struct tp_plan_interval {
    double ckpt_s, mtbf_s, restart_s;  /* given: delta, M and R, delta and M > 0 */
    double young_s, daly_s;            /* the intervals */
    double young_waste, daly_waste;    /* the share of wall time lost at each */
};

/* Fill iv's intervals and the waste at each from its ckpt_s, mtbf_s and
 * restart_s, and, unless doc is NULL, doc's "config" and "results". Cannot
 * fail. */
void tp_plan_interval_run(struct tp_plan_interval *iv, json_t *doc);

#endif
