/* Reading a plan file: tables of keys for the generic YAML walk (tp/yaml.h),
 * one per mapping (name, kind of value, where it goes, its range, whether
 * required or measurable, its default), and what the tables cannot say: a
 * figure given as `{measured: FILE}`, the candidates, the sweep, and the
 * checks across keys. Every error names file:line:col and the key path, and
 * the accepted format is read off the tables below rather than from code. */
#include "tp/plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_int.h"
#include "tp/step.h"
#include "tp/yaml.h"

typedef struct tp_yaml_node node;
typedef struct tp_yaml_key key;
typedef struct tp_yaml_table table;

/* What the walk's callbacks reach through y->user. */
struct ctx {
    char dir[4096]; /* the plan file's folder with a trailing '/', or "" */
    struct tp_plan_spec *spec;
};

#define MEAS TP_YAML_FLAG_USER /* may be {measured: FILE}; tag: which figure */
#define REQ TP_YAML_REQUIRED
#define STR(s, f) TP_YAML_STR_FIELD(s, f)

/* The range of physical sense of every number a plan takes (docs/plan.md,
 * "Limits"): wide enough for any cluster one could plan, narrow enough
 * that no term of the model can overflow a double or divide by a
 * vanishing figure. A value outside is refused naming the key, the value
 * as typed and the range. */
#define RANGE(id, lo, hi, says) static const struct tp_yaml_range id = {lo, hi, false, says}
#define RANGE_OPEN(id, lo, hi, says) static const struct tp_yaml_range id = {lo, hi, true, says}
RANGE(steps_range, 1, 1e7, "must be between 1 and 10000000");
RANGE(params_range, 1, 1e15, "must be between 1 and 1e15 (1000T) parameters");
RANGE_OPEN(grad_range, 0, 16, "must be above 0 and at most 16 bytes per parameter");
RANGE_OPEN(samples_range, 0, 1e9, "must be above 0 and at most 1e9 per GPU and step");
RANGE(compute_range, 1e-9, 86400, "must be between 1 ns and 1 d");
RANGE(cv_range, 0, 1, "must be between 0 and 1 (0% to 100%)");
RANGE(sample_bytes_range, 0, 0x1p40, "must be between 0 and 1T bytes per sample");
RANGE(ckpt_bytes_range, 1, 0x1p60, "must be between 1 byte and 1048576T (1 EiB)");
RANGE(train_range, 1, 1e18, "must be between 1 and 1e18");
RANGE_OPEN(spike_range, 0, 86400, "must be above 0 and at most 1 d");
RANGE(nodes_range, 1, TP_PLAN_MAX_NODES, "must be at least 1 and at most 1000000 nodes");
RANGE(gpn_range, 1, TP_PLAN_MAX_GPUS_PER_NODE, "must be at least 1 and at most 1024 GPUs per node");
RANGE(lat_range, 1e-9, 10, "must be between 1 ns and 10 s");
RANGE(bw_range, 1, 1e15, "must be between 1B/s and 1PB/s");
RANGE(read_range, 0, 1e15, "must be 0 (unlimited) or between 1B/s and 1PB/s");
RANGE(link_range, 1e3, 1e13, "must be between 1Kb/s and 10Tb/s");
RANGE(mtbf_range, 60, 1000 * 31536000.0, "must be between 1 min and 1000 y");
RANGE(restart_range, 0, 7 * 86400, "must be between 0 and 1 w");
RANGE(commit_range, 0, 3600, "must be between 0 and 1 h");
RANGE(gpu_hour_range, 0, 1e4, "must be between $0 and $10,000 per GPU-hour");
RANGE(amort_range, 86400, 100 * 31536000.0, "must be between 1 d and 100 y");
RANGE(kept_range, 1, 1e6, "must be between 1 and 1000000");
RANGE(nics_range, 1, 64, "must be between 1 and 64");
RANGE(oversub_range, 1, 1000, "must be between 1 and 1000");
RANGE(node_cost_range, 0, 1e9, "must be between $0 and $1,000,000,000 per node");
RANGE(tb_month_range, 0, 1e6, "must be between $0 and $1,000,000 per TB-month");

static const struct tp_yaml_choice algos[] = {{"auto", TP_PLAN_AUTO},
                                              {"ring", TP_PLAN_RING},
                                              {"tree", TP_PLAN_TREE},
                                              {"hierarchical", TP_PLAN_HIER},
                                              {NULL, 0}};
static const struct tp_yaml_choice topos[] = {
    {"fat-tree", TP_PLAN_FAT_TREE},
    {"rail-optimised", TP_PLAN_RAIL},
    {"rail-optimized", TP_PLAN_RAIL}, /* accepted, not listed */
    {NULL, 0}};
static const struct tp_yaml_choice unit_names[] = {{"samples", 0}, {"tokens", 1}, {NULL, 0}};

_Static_assert(sizeof(enum tp_plan_algo) == sizeof(int) && sizeof(enum tp_plan_topo) == sizeof(int),
               "TP_YAML_ENUM stores an int");

typedef struct tp_plan_workload W;
typedef struct tp_plan_cluster C;
typedef struct tp_plan_prices P;
typedef struct tp_plan_candidate D;
typedef struct tp_plan_spec S;

static int workload_check(struct tp_yaml *y, const node *map, const node *at, const char *path,
                          void *base, uint64_t seen);
static int cluster_check(struct tp_yaml *y, const node *map, const node *at, const char *path,
                         void *base, uint64_t seen);
static int network_check(struct tp_yaml *y, const node *map, const node *at, const char *path,
                         void *base, uint64_t seen);
static int storage_check(struct tp_yaml *y, const node *map, const node *at, const char *path,
                         void *base, uint64_t seen);
static int candidates(struct tp_yaml *y, const key *k, const node *v, const char *path, void *base);
static int sweep(struct tp_yaml *y, const key *k, const node *v, const char *path, void *base);

/* The tables: one per mapping, the keys in the order the errors list them.
 * Offsets are from the struct the mapping fills; a TP_YAML_MAP's off moves
 * that base for its sub-table. */

/* clang-format off */
static const key spike_keys[] = {
    {.name = "duration", .kind = TP_YAML_DUR, .off = offsetof(W, spike_s),
     .range = &spike_range, .flags = REQ},
    {.name = "probability", .kind = TP_YAML_FRAC, .off = offsetof(W, spike_p),
     .range = &tp_yaml_unit, .flags = REQ},
};
static const table spike_tbl = {spike_keys, TP_YAML_NKEYS(spike_keys), NULL, NULL};

static const key workload_keys[] = {
    {.name = "name", .kind = TP_YAML_STR, STR(W, name), .sdef = "workload", .eg = "llm-7b"},
    {.name = "unit", .kind = TP_YAML_STR, STR(W, unit), .sdef = "samples", .choices = unit_names},
    /* the three below: required unless `from` gives them (workload_check) */
    {.name = "parameters", .kind = TP_YAML_COUNT, .off = offsetof(W, params),
     .range = &params_range},
    {.name = "gradient_bytes_per_parameter", .kind = TP_YAML_NUM,
     .off = offsetof(W, grad_bytes_per_param), .range = &grad_range, .def = 2},
    {.name = "samples_per_gpu", .kind = TP_YAML_COUNT, .off = offsetof(W, samples_per_gpu),
     .range = &samples_range},
    {.name = "compute_time", .kind = TP_YAML_DUR, .off = offsetof(W, compute_s),
     .range = &compute_range, .flags = MEAS, .tag = TP_FIG_COMPUTE},
    {.name = "compute_cv", .kind = TP_YAML_FRAC, .off = offsetof(W, compute_cv),
     .range = &cv_range, .def = 0.02},
    {.name = "dataset_bytes_per_sample", .kind = TP_YAML_SIZE,
     .off = offsetof(W, dataset_bytes_per_sample), .range = &sample_bytes_range},
    /* absent: 14 bytes per parameter, set by workload_check */
    {.name = "checkpoint_bytes", .kind = TP_YAML_SIZE, .off = offsetof(W, checkpoint_bytes),
     .range = &ckpt_bytes_range},
    {.name = "train_samples", .kind = TP_YAML_COUNT, .off = offsetof(W, train_samples),
     .range = &train_range, .flags = REQ},
    {.name = "overlap", .kind = TP_YAML_FRAC, .off = offsetof(W, overlap), .range = &tp_yaml_unit},
    {.name = "spike", .kind = TP_YAML_MAP, .sub = &spike_tbl},
    /* a recorded workload file (docs/workload.md) for the keys not given */
    {.name = "from", .kind = TP_YAML_STR, STR(W, from), .eg = "workload.json"},
};
static const table workload_tbl = {workload_keys, TP_YAML_NKEYS(workload_keys), workload_check,
                                   NULL};

static const key intra_keys[] = {
    {.name = "latency", .kind = TP_YAML_DUR, .off = offsetof(C, intra_lat_s),
     .range = &lat_range, .flags = MEAS, .tag = TP_FIG_INTRA_LAT, .def = 3e-6},
    {.name = "bandwidth", .kind = TP_YAML_RATE, .off = offsetof(C, intra_bw_Bps),
     .range = &bw_range, .flags = MEAS, .tag = TP_FIG_INTRA_BW, .def = 150e9},
};
static const table intra_tbl = {intra_keys, TP_YAML_NKEYS(intra_keys), NULL, NULL};

static const key cluster_keys[] = {
    {.name = "nodes", .kind = TP_YAML_INT, .off = offsetof(C, nodes), .range = &nodes_range,
     .flags = REQ},
    {.name = "gpus_per_node", .kind = TP_YAML_INT, .off = offsetof(C, gpus_per_node),
     .range = &gpn_range, .flags = REQ},
    {.name = "intra_node", .kind = TP_YAML_MAP, .sub = &intra_tbl},
    /* exactly one of the two: cluster_check */
    {.name = "mtbf_per_node", .kind = TP_YAML_DUR, .off = offsetof(C, mtbf_node_s),
     .range = &mtbf_range},
    {.name = "mtbf_job", .kind = TP_YAML_DUR, .off = offsetof(C, mtbf_job_s),
     .range = &mtbf_range},
    {.name = "restart", .kind = TP_YAML_DUR, .off = offsetof(C, restart_s),
     .range = &restart_range, .def = 600},
};
static const table cluster_tbl = {cluster_keys, TP_YAML_NKEYS(cluster_keys), cluster_check, NULL};

static const key prices_keys[] = {
    {.name = "gpu_hour", .kind = TP_YAML_MONEY, .off = offsetof(P, gpu_hour),
     .range = &gpu_hour_range, .flags = REQ},
    {.name = "amortization", .kind = TP_YAML_DUR, .off = offsetof(P, amortization_s),
     .range = &amort_range, .def = 3 * 365 * 86400.0},
    {.name = "checkpoints_kept", .kind = TP_YAML_INT, .off = offsetof(P, checkpoints_kept),
     .range = &kept_range, .def = 2},
};
static const table prices_tbl = {prices_keys, TP_YAML_NKEYS(prices_keys), NULL, NULL};

static const key network_keys[] = {
    {.name = "kind", .kind = TP_YAML_STR, STR(D, net_kind), .eg = "tcp, ib, roce"},
    /* link or bandwidth, at least one: network_check */
    {.name = "link", .kind = TP_YAML_LINK, .off = offsetof(D, link_bps),
     .range = &link_range},
    {.name = "nics_per_node", .kind = TP_YAML_INT, .off = offsetof(D, nics_per_node),
     .range = &nics_range, .def = 1},
    {.name = "efficiency", .kind = TP_YAML_FRAC, .off = offsetof(D, efficiency),
     .range = &tp_yaml_unit_pos, .def = 0.8},
    {.name = "latency", .kind = TP_YAML_DUR, .off = offsetof(D, net_lat_s),
     .range = &lat_range, .flags = REQ | MEAS, .tag = TP_FIG_NET_LAT},
    {.name = "bandwidth", .kind = TP_YAML_RATE, .off = offsetof(D, net_bw_Bps),
     .range = &bw_range, .flags = MEAS, .tag = TP_FIG_NET_BW},
    {.name = "topology", .kind = TP_YAML_ENUM, .off = offsetof(D, topology), .choices = topos,
     .def = TP_PLAN_FAT_TREE},
    {.name = "oversubscription", .kind = TP_YAML_NUM, .off = offsetof(D, oversubscription),
     .range = &oversub_range, .def = 1},
    {.name = "algorithm", .kind = TP_YAML_ENUM, .off = offsetof(D, algo), .choices = algos,
     .def = TP_PLAN_AUTO},
    {.name = "node_cost", .kind = TP_YAML_MONEY, .off = offsetof(D, node_cost),
     .range = &node_cost_range},
};
static const table network_tbl = {network_keys, TP_YAML_NKEYS(network_keys), network_check, NULL};

static const key storage_keys[] = {
    {.name = "kind", .kind = TP_YAML_STR, STR(D, storage_kind), .eg = "nfs, nvme-tcp, lustre"},
    {.name = "write_bandwidth", .kind = TP_YAML_RATE, .off = offsetof(D, write_Bps),
     .range = &bw_range, .flags = REQ | MEAS, .tag = TP_FIG_WRITE_BW},
    {.name = "read_bandwidth", .kind = TP_YAML_RATE, .off = offsetof(D, read_Bps),
     .range = &read_range, .flags = MEAS, .tag = TP_FIG_READ_BW},
    {.name = "commit_latency", .kind = TP_YAML_DUR, .off = offsetof(D, commit_lat_s),
     .range = &commit_range, .flags = MEAS, .tag = TP_FIG_COMMIT_LAT},
    {.name = "tb_month", .kind = TP_YAML_MONEY, .off = offsetof(D, tb_month),
     .range = &tb_month_range},
    {.name = "async_checkpoint", .kind = TP_YAML_BOOL, .off = offsetof(D, async_ckpt)},
    {.name = "snapshot_bandwidth", .kind = TP_YAML_RATE, .off = offsetof(D, snapshot_Bps),
     .range = &bw_range, .def = 25e9},
};
static const table storage_tbl = {storage_keys, TP_YAML_NKEYS(storage_keys), storage_check,
                                  NULL};

static const key cand_keys[] = {
    {.name = "name", .kind = TP_YAML_STR, STR(D, name), .flags = REQ,
     .eg = "tcp-100g-nfs"}, /* unique: candidates() */
    {.name = "network", .kind = TP_YAML_MAP, .flags = REQ, .sub = &network_tbl},
    {.name = "storage", .kind = TP_YAML_MAP, .flags = REQ, .sub = &storage_tbl},
};
static const table cand_tbl = {cand_keys, TP_YAML_NKEYS(cand_keys), NULL, NULL};

static const key sweep_keys[] = {
    {.name = "gpus", .kind = TP_YAML_CUSTOM, .read = sweep},
};
static const table sweep_tbl = {sweep_keys, TP_YAML_NKEYS(sweep_keys), NULL, NULL};

static const key sim_keys[] = {
    {.name = "steps", .kind = TP_YAML_UINT, .off = offsetof(S, sim_steps), .range = &steps_range,
     .def = 1000},
    {.name = "seed", .kind = TP_YAML_U64, .off = offsetof(S, seed), .def = 1},
};
static const table sim_tbl = {sim_keys, TP_YAML_NKEYS(sim_keys), NULL, NULL};

static const key top_keys[] = {
    {.name = "workload", .kind = TP_YAML_MAP, .off = offsetof(S, w), .flags = REQ,
     .sub = &workload_tbl},
    {.name = "cluster", .kind = TP_YAML_MAP, .off = offsetof(S, c), .flags = REQ,
     .sub = &cluster_tbl},
    {.name = "prices", .kind = TP_YAML_MAP, .off = offsetof(S, p), .flags = REQ,
     .sub = &prices_tbl},
    {.name = "candidates", .kind = TP_YAML_CUSTOM, .flags = REQ, .read = candidates},
    {.name = "sweep", .kind = TP_YAML_MAP, .sub = &sweep_tbl},
    {.name = "simulate", .kind = TP_YAML_MAP, .sub = &sim_tbl},
};
static const table top_tbl = {top_keys, TP_YAML_NKEYS(top_keys), NULL, NULL};
/* clang-format on */

/* The keys that take {measured: FILE}, for the error when another does. */
static const char measurable[] = "compute_time, intra_node.latency, intra_node.bandwidth, "
                                 "network.latency, network.bandwidth, storage.write_bandwidth, "
                                 "storage.read_bandwidth, storage.commit_latency";

/* ---- checks across keys ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* workload.from: what the recording gives for the keys not written */
static int from_file(struct tp_yaml *y, const node *map, const char *path, W *w, uint64_t seen)
{
    const struct ctx *x = y->user;
    const node *fn = tp_yaml_lookup(map, "from", false);
    char p[TP_YAML_PATH_LEN], file[sizeof x->dir + sizeof w->from];
    tp_yaml_join(p, path, "from");
    snprintf(file, sizeof file, "%s%s", w->from[0] == '/' ? "" : x->dir, w->from);
    struct tp_step_workload *r;
    tp_error e = {0};
    if (tp_step_workload_load(file, &r, &e))
        return tp_yaml_fail(y, fn, p, "%s", e.msg);
    if (!tp_yaml_seen(&workload_tbl, seen, "parameters") && r->params)
        w->params = (double)r->params;
    /* the gradient a step synchronises: its allreduces and reduce-scatters */
    uint64_t grad = tp_step_workload_grad_bytes(r);
    if (!tp_yaml_seen(&workload_tbl, seen, "gradient_bytes_per_parameter") && r->params)
        w->grad_bytes_per_param = (double)grad / (double)r->params;
    if (!tp_yaml_seen(&workload_tbl, seen, "samples_per_gpu"))
        w->samples_per_gpu = (double)r->samples_per_rank;
    if (!tp_yaml_seen(&workload_tbl, seen, "dataset_bytes_per_sample"))
        w->dataset_bytes_per_sample = (double)r->sample_bytes;
    if (!tp_yaml_seen(&workload_tbl, seen, "checkpoint_bytes") && r->ckpt_bytes)
        w->checkpoint_bytes = (double)r->ckpt_bytes;
    double ov = tp_step_workload_overlap(r);
    if (!tp_yaml_seen(&workload_tbl, seen, "overlap") && isfinite(ov))
        w->overlap = ov;
    int rc = 0;
    if (!tp_yaml_seen(&workload_tbl, seen, "compute_time")) {
        /* a step's compute: forward, backward and optimizer, as the first
         * rank in the file recorded them */
        const struct tp_step_wl_rank *q = &r->ranks[0];
        double *v = malloc(r->nsteps * sizeof *v), sum = 0;
        if (!v) {
            rc = tp_error_set(y->err, TP_ENOMEM, "%s: out of memory", y->file);
        } else {
            for (size_t s = 0; s < r->nsteps; s++)
                sum += v[s] =
                    (double)(q->forward_ns[s] + q->backward_ns[s] + q->optimizer_ns[s]) / 1e9;
            qsort(v, r->nsteps, sizeof *v, cmp_double);
            w->compute_s = sum / (double)r->nsteps;
            free(w->compute_samples);
            w->compute_samples = v;
            w->ncompute = r->nsteps;
        }
    }
    tp_step_workload_free(r);
    return rc;
}

static int workload_check(struct tp_yaml *y, const node *map, const node *at, const char *path,
                          void *base, uint64_t seen)
{
    W *w = base;
    bool from = tp_yaml_seen(&workload_tbl, seen, "from");
    if (from) {
        int rc = from_file(y, map, path, w, seen);
        if (rc)
            return rc;
    }
    static const char *const need[] = {"parameters", "samples_per_gpu", "compute_time"};
    for (size_t i = 0; i < sizeof need / sizeof *need; i++) {
        bool got = tp_yaml_seen(&workload_tbl, seen, need[i]) ||
                   (from && (i != 0 || w->params > 0));
        if (!got) {
            char p[TP_YAML_PATH_LEN];
            tp_yaml_join(p, path, need[i]);
            return tp_yaml_fail(y, at, p, "%s", from ? "required (the workload file lists no "
                                                       "parameters)" : "required");
        }
    }
    if (!tp_yaml_seen(&workload_tbl, seen, "checkpoint_bytes") && !(from && w->checkpoint_bytes > 0))
        w->checkpoint_bytes = 14 * w->params; /* bf16 weights + fp32 master and Adam moments */
    return 0;
}

static int cluster_check(struct tp_yaml *y, const node *map, const node *at, const char *path,
                         void *base, uint64_t seen)
{
    (void)base;
    bool per_node = tp_yaml_seen(&cluster_tbl, seen, "mtbf_per_node"),
         job = tp_yaml_seen(&cluster_tbl, seen, "mtbf_job");
    char p[TP_YAML_PATH_LEN];
    if (per_node && job) {
        const node *a = tp_yaml_lookup(map, "mtbf_per_node", false),
                   *b = tp_yaml_lookup(map, "mtbf_job", false);
        const node *second = a->line > b->line || (a->line == b->line && a->col > b->col) ? a : b;
        tp_yaml_join(p, path, second->text);
        return tp_yaml_fail(
            y, second, p, "give mtbf_per_node (scaled with the node count) or mtbf_job, not both");
    }
    if (!per_node && !job) {
        tp_yaml_join(p, path, "mtbf_per_node");
        return tp_yaml_fail(y, at, p, "required (or mtbf_job: one of the two)");
    }
    return 0;
}

static int network_check(struct tp_yaml *y, const node *map, const node *at, const char *path,
                         void *base, uint64_t seen)
{
    (void)map, (void)base;
    if (tp_yaml_seen(&network_tbl, seen, "link") || tp_yaml_seen(&network_tbl, seen, "bandwidth"))
        return 0;
    char p[TP_YAML_PATH_LEN];
    tp_yaml_join(p, path, "link");
    return tp_yaml_fail(y, at, p, "required (or bandwidth: one of the two)");
}

/* read_bandwidth: 0 is "unlimited", a rate must be one of sense (a
 * measured one is NaN here, and checked when it is read). */
static int storage_check(struct tp_yaml *y, const node *map, const node *at, const char *path,
                         void *base, uint64_t seen)
{
    (void)at, (void)seen;
    const D *c = base;
    if (!(c->read_Bps > 0 && c->read_Bps < bw_range.lo))
        return 0;
    const node *v = tp_yaml_lookup(map, "read_bandwidth", true);
    char p[TP_YAML_PATH_LEN];
    tp_yaml_join(p, path, "read_bandwidth");
    return tp_yaml_fail(y, v, p, "'%s' %s", v ? v->text : "", read_range.says);
}

const struct tp_yaml_range *tp__plan_fig_range(enum tp_plan_fig fig)
{
    static const struct tp_yaml_range *const r[TP_FIG_COUNT] = {
        [TP_FIG_COMPUTE] = &compute_range, [TP_FIG_INTRA_LAT] = &lat_range,
        [TP_FIG_INTRA_BW] = &bw_range,     [TP_FIG_NET_LAT] = &lat_range,
        [TP_FIG_NET_BW] = &bw_range,       [TP_FIG_WRITE_BW] = &bw_range,
        [TP_FIG_READ_BW] = &bw_range,      [TP_FIG_COMMIT_LAT] = &commit_range,
    };
    return (unsigned)fig < TP_FIG_COUNT ? r[fig] : NULL;
}

/* ---- what the tables cannot say ---- */

/* `KEY: {measured: FILE}` on a key k that allows it: record the reference,
 * leave the figure NaN. The walk's hook for a mapping given to a scalar. */
static int measured(struct tp_yaml *y, const key *k, const node *v, const char *path, void *base)
{
    struct ctx *x = y->user;
    if (!(k->flags & MEAS)) {
        if (tp_yaml_lookup(v, "measured", false))
            return tp_yaml_fail(y, v, path, "cannot be {measured: FILE} (only %s can)", measurable);
        return TP_YAML_DECLINE;
    }
    const node *file = NULL;
    char p[TP_YAML_PATH_LEN];
    for (size_t i = 0; i + 1 < v->n; i += 2) {
        const node *kk = v->kid[i];
        tp_yaml_join(p, path, kk->type == TP_YAML_N_SCALAR ? kk->text : "?");
        if (kk->type != TP_YAML_N_SCALAR || strcmp(kk->text, "measured") != 0)
            return tp_yaml_fail(y, kk, p,
                                "unknown key in a measured reference (write {measured: FILE})");
        int rc = tp_yaml_duplicate(y, v, i, p);
        if (rc)
            return rc;
        file = v->kid[i + 1];
    }
    if (!file)
        return tp_yaml_fail(y, v, path, "expected {measured: FILE}, found an empty mapping");
    tp_yaml_join(p, path, "measured");
    if (file->type != TP_YAML_N_SCALAR || file->null || !*file->text)
        return tp_yaml_fail(y, file, p, "expected the path of a result file, found %s",
                            tp_yaml_type_name(y, file));
    struct tp_plan_spec *s = x->spec;
    struct tp_plan_ref *refs = realloc(s->refs, (s->nrefs + 1) * sizeof *refs);
    if (!refs)
        return tp_error_set(y->err, TP_ENOMEM, "%s: out of memory", y->file);
    s->refs = refs;
    struct tp_plan_ref *r = memset(&refs[s->nrefs], 0, sizeof *r);
    r->fig = (enum tp_plan_fig)k->tag;
    /* a candidate's figures are read with base at its struct */
    const char *b = base, *c0 = (const char *)s->cand;
    r->cand = b >= c0 && b < c0 + sizeof s->cand ? (int)((size_t)(b - c0) / sizeof s->cand[0]) : -1;
    const char *dir = file->text[0] == '/' ? "" : x->dir;
    if ((size_t)snprintf(r->file, sizeof r->file, "%s%s", dir, file->text) >= sizeof r->file)
        return tp_yaml_fail(y, file, p, "path too long");
    /* cut short if long: it is for messages */
    snprintf(r->where, sizeof r->where, "%s:%d:%d: %s", y->file, v->line, v->col, path);
    s->nrefs++;
    double nan = NAN;
    memcpy((char *)base + k->off, &nan, sizeof nan);
    return 0;
}

static int sweep(struct tp_yaml *y, const key *k, const node *v, const char *path, void *base)
{
    (void)k, (void)base;
    struct tp_plan_spec *s = ((struct ctx *)y->user)->spec;
    if (v->type != TP_YAML_N_SEQ)
        return tp_yaml_fail(y, v, path,
                            "expected a sequence of GPU counts, e.g. [8, 64, 512], "
                            "found %s",
                            tp_yaml_type_name(y, v));
    if (v->n == 0)
        return tp_yaml_fail(y, v, path,
                            "needs at least one GPU count (leave sweep out for powers of two)");
    for (size_t i = 0; i < v->n; i++) {
        const node *e = v->kid[i];
        char p[TP_YAML_PATH_LEN];
        tp_yaml_join_index(p, path, i);
        if (i == TP_PLAN_MAX_SWEEP)
            return tp_yaml_fail(y, e, p, "too many GPU counts (at most %d)", TP_PLAN_MAX_SWEEP);
        double g;
        if (e->type != TP_YAML_N_SCALAR || e->null)
            return tp_yaml_fail(y, e, p, "expected a whole number, found %s",
                                tp_yaml_type_name(y, e));
        if (!tp_yaml_parse_value(TP_YAML_COUNT, e->text, &g))
            return tp_yaml_fail(y, e, p, "cannot parse '%s' as a GPU count (use e.g. 8, 64, 512)",
                                e->text);
        if (g != floor(g))
            return tp_yaml_fail(y, e, p, "'%s' is not a whole number", e->text);
        if (g < 1 || g > TP_PLAN_MAX_GPUS)
            return tp_yaml_fail(y, e, p, "'%s' must be between 1 and %d GPUs", e->text,
                                TP_PLAN_MAX_GPUS);
        if (i > 0 && g <= s->sweep_gpus[i - 1])
            return tp_yaml_fail(y, e, p, "%s does not come after %s: the sweep must ascend",
                                e->text, v->kid[i - 1]->text);
        s->sweep_gpus[i] = g;
        s->nsweep = (int)i + 1;
    }
    return 0;
}

static int candidates(struct tp_yaml *y, const key *k, const node *v, const char *path, void *base)
{
    (void)k, (void)base;
    struct tp_plan_spec *s = ((struct ctx *)y->user)->spec;
    if (v->type != TP_YAML_N_SEQ)
        return tp_yaml_fail(y, v, path, "expected a sequence of candidates (- name: ...), found %s",
                            tp_yaml_type_name(y, v));
    if (v->n == 0)
        return tp_yaml_fail(y, v, path, "needs at least one candidate");
    for (size_t i = 0; i < v->n; i++) {
        const node *c = v->kid[i];
        char p[TP_YAML_PATH_LEN];
        tp_yaml_join_index(p, path, i);
        if (i == TP_PLAN_MAX_CAND)
            return tp_yaml_fail(y, c, p, "too many candidates (at most %d)", TP_PLAN_MAX_CAND);
        s->ncand = (int)i + 1;
        int rc = tp_yaml_walk(y, c, c, p, &cand_tbl, &s->cand[i]);
        if (rc)
            return rc;
        for (size_t j = 0; j < i; j++) {
            if (strcmp(s->cand[j].name, s->cand[i].name) == 0) {
                char np[TP_YAML_PATH_LEN];
                tp_yaml_join(np, p, "name");
                return tp_yaml_fail(y, tp_yaml_lookup(c, "name", true), np,
                                    "duplicate candidate name '%s' (also candidates[%zu])",
                                    s->cand[i].name, j);
            }
        }
    }
    return 0;
}

int tp_plan_parse(const char *path, struct tp_plan_spec *spec, tp_error *err)
{
    memset(spec, 0, sizeof *spec);
    if (!path || !*path)
        return tp_error_set(err, TP_EUSAGE, "plan file: no path given");
    if (strlen(path) >= sizeof spec->file)
        return tp_error_set(err, TP_EUSAGE, "%.64s...: path too long", path);
    strcpy(spec->file, path);
    struct ctx x = {.spec = spec};
    const char *slash = strrchr(path, '/');
    if (slash)
        snprintf(x.dir, sizeof x.dir, "%.*s/", (int)(slash - path), path);
    struct tp_yaml y;
    int rc = tp_yaml_open(&y, path, "plan", err);
    y.user = &x;
    y.map_value = measured;
    if (rc == 0 && !y.root)
        rc = tp_error_set(err, TP_EUSAGE,
                          "%s:1:1: empty document: a plan needs workload, cluster, prices and "
                          "candidates",
                          path);
    else if (rc == 0 && y.root->type != TP_YAML_N_MAP)
        rc =
            tp_yaml_fail(&y, y.root, "",
                         "expected a mapping (workload:, cluster:, prices:, candidates:), found %s",
                         tp_yaml_type_name(&y, y.root));
    if (rc == 0)
        rc = tp_yaml_walk(&y, y.root, y.root, "", &top_tbl, spec);
    tp_yaml_close(&y);
    return rc;
}

void tp_plan_spec_free(struct tp_plan_spec *spec)
{
    if (!spec)
        return;
    free(spec->refs);
    spec->refs = NULL;
    spec->nrefs = 0;
    free(spec->w.compute_samples);
    spec->w.compute_samples = NULL;
    spec->w.ncompute = 0;
}

const char *tp_plan_algo_name(enum tp_plan_algo a)
{
    for (const struct tp_yaml_choice *c = algos; c->name; c++)
        if (c->value == (int)a)
            return c->name;
    return "?";
}

const char *tp_plan_topo_name(enum tp_plan_topo t)
{
    for (const struct tp_yaml_choice *c = topos; c->name; c++)
        if (c->value == (int)t)
            return c->name;
    return "?";
}
