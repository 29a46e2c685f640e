/* The result document of `trainpath plan FILE`: its "config" is the
 * effective plan (every default applied, every measured input with the
 * file and figure it came from), its "results" the decision: the candidates
 * in rank order with every term of their step, checkpoint and cost, the
 * words, the sweep and the break-even scales. docs/schema/result-v1.json
 * (plan_results) is the contract. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "plan_int.h"
#include "tp/result.h"

json_t *tp__plan_spec_json(const struct tp_plan_spec *s, double gpus)
{
    json_t *cands = json_array();
    for (int i = 0; i < s->ncand; i++) {
        const struct tp_plan_candidate *c = &s->cand[i];
        json_array_append_new(cands, json_pack(
            "{s:s, s:{s:s, s:f, s:f, s:f, s:f, s:f, s:s, s:f, s:s, s:f},"
            " s:{s:s, s:f, s:f, s:f, s:f, s:b, s:f}}",
            "name", c->name,
            "network", "kind", c->net_kind, "link_bps", c->link_bps, "nics_per_node",
            c->nics_per_node, "efficiency", c->efficiency, "latency_s", c->net_lat_s,
            "bandwidth_Bps", c->net_bw_Bps > 0 ? c->net_bw_Bps
                                               : c->link_bps / 8 * c->nics_per_node * c->efficiency,
            "topology", tp_plan_topo_name(c->topology), "oversubscription", c->oversubscription,
            "algorithm", tp_plan_algo_name(c->algo), "node_cost", c->node_cost,
            "storage", "kind", c->storage_kind, "write_Bps", c->write_Bps, "read_Bps", c->read_Bps,
            "commit_latency_s", c->commit_lat_s, "tb_month", c->tb_month, "async_checkpoint",
            c->async_ckpt, "snapshot_Bps", c->snapshot_Bps));
    }
    json_t *inputs = json_array();
    for (size_t i = 0; i < s->nrefs; i++)
        json_array_append_new(inputs, json_pack("{s:s, s:s, s:s, s:s, s:f}", "where",
                                                s->refs[i].where, "file", s->refs[i].file,
                                                "command", s->refs[i].command, "source",
                                                s->refs[i].source, "value", s->refs[i].value));
    json_t *sweep = json_array();
    for (int i = 0; i < s->nsweep; i++)
        json_array_append_new(sweep, json_real(s->sweep_gpus[i]));
    json_t *cfg = json_pack(
        "{s:s, s:f, s:{s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f},"
        " s:{s:f, s:f, s:f, s:f, s:f, s:f, s:f}, s:{s:f, s:f, s:f}, s:o, s:o, s:i, s:I, s:o}",
        "plan_file", s->file, "gpus", gpus,
        "workload", "name", s->w.name, "unit", s->w.unit, "parameters", s->w.params,
        "gradient_bytes_per_parameter", s->w.grad_bytes_per_param, "samples_per_gpu",
        s->w.samples_per_gpu, "compute_s", s->w.compute_s, "compute_cv", s->w.compute_cv,
        "dataset_bytes_per_sample", s->w.dataset_bytes_per_sample, "checkpoint_bytes",
        s->w.checkpoint_bytes, "train_samples", s->w.train_samples, "overlap", s->w.overlap,
        "spike_s", s->w.spike_s, "spike_probability", s->w.spike_p,
        "cluster", "nodes", s->c.nodes, "gpus_per_node", s->c.gpus_per_node, "intra_latency_s",
        s->c.intra_lat_s, "intra_bandwidth_Bps", s->c.intra_bw_Bps, "mtbf_per_node_s",
        s->c.mtbf_node_s, "mtbf_job_s", s->c.mtbf_job_s, "restart_s", s->c.restart_s,
        "prices", "gpu_hour", s->p.gpu_hour, "amortization_s", s->p.amortization_s,
        "checkpoints_kept", s->p.checkpoints_kept,
        "candidates", cands, "sweep_gpus", sweep, "simulate_steps", (int)s->sim_steps, "seed",
        (json_int_t)s->seed, "inputs", inputs);
    if (cfg && s->w.from[0]) /* the recording the workload came from */
        json_object_set_new(json_object_get(cfg, "workload"), "from",
                            json_pack("{s:s, s:b}", "file", s->w.from, "compute_distribution",
                                      s->w.compute_samples != NULL));
    return cfg;
}

/* A figure, or NULL (the key left out: "o*") when it is not finite: JSON
 * has no inf or NaN, and jansson would refuse the whole object. */
static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : NULL;
}

static json_t *metric(double v, const char *unit)
{
    return isfinite(v) ? tp_metric(v, unit) : NULL;
}

/* One candidate at the scale decided at, with its simulated run. A
 * candidate that cannot be evaluated keeps its place, with its reason and
 * without the figures that are not finite. */
#define PLAN_SERIES_KEPT 10000 /* simulated steps a candidate's series keeps */

static json_t *point_json(const struct tp_plan_spec *s, const struct tp_plan_candidate *c,
                          const struct tp_plan_outcome *e)
{
    const struct tp_plan_point *p = &e->pt;
    double young = tp_plan_young(p->ckpt_s, p->mtbf_s);
    /* the series' first steps only: its mean and p99 are of every step,
     * and 10 M steps a candidate would be a document of 100 MB */
    unsigned kept = s->sim_steps < PLAN_SERIES_KEPT ? s->sim_steps : PLAN_SERIES_KEPT;
    json_t *series = json_array();
    for (unsigned i = 0; e->series && i < kept; i++)
        if (isfinite(e->series[i]))
            json_array_append_new(series, json_real(e->series[i]));
    char gunit[32];
    snprintf(gunit, sizeof gunit, "%s/s", s->w.unit);
    json_t *ckpt = json_pack("{s:o*, s:o*, s:o*, s:o*, s:o*, s:o*}", "stall",
                             metric(p->ckpt_s, "s"), "interval", metric(p->interval_s, "s"),
                             "interval_young", metric(young, "s"), "mtbf",
                             metric(p->mtbf_s, "s"), "interval_steps",
                             metric(ceil(p->interval_s / p->step_s), "steps"), "waste_fraction",
                             num(p->waste));
    json_t *cost = p->why[0] ? NULL
                             : json_pack("{s:o*, s:o*, s:o*, s:o*}", "gpu",
                                         metric(p->cost_gpu, "$"), "network",
                                         metric(p->cost_network, "$"), "storage",
                                         metric(p->cost_storage, "$"), "total",
                                         metric(p->cost, "$"));
    return json_pack(
        "{s:s, s:i, s:o*, s:o*, s:s, s:o*, s:o*, s:o*, s:o*, s:o*, s:o*, s:o*, s:o*, s:o*, s:o*,"
        " s:o*, s:o*, s:o*, s:o*, s:{s:i, s:o*, s:o*, s:o, s:i}, s:s*}",
        "name", c->name, "rank", e->rank, "gpus", num(p->gpus), "nodes", num(p->nodes), "algorithm",
        tp_plan_algo_name(p->algo), "step", metric(p->step_s, "s"), "step_p99",
        metric(p->step_p99_s, "s"), "comm", metric(p->comm_s, "s"), "comm_exposed",
        metric(p->exposed_s, "s"), "exposed_fraction", num(tp_plan_exposed_fraction(p)),
        "compute_slowest", metric(p->compute_s, "s"), "jitter", metric(p->jitter_s, "s"),
        "rare_event", metric(p->rare_s, "s"), "data_stall", metric(p->data_stall_s, "s"),
        "samples_per_step", metric(s->w.samples_per_gpu * p->gpus, s->w.unit), "checkpoint", ckpt,
        "goodput", p->why[0] ? NULL : metric(p->goodput, gunit), "time_to_train",
        p->why[0] ? NULL : metric(p->train_s, "s"), "cost", cost, "simulation", "steps",
        (int)s->sim_steps, "mean", metric(e->sim_mean_s, "s"), "p99", metric(e->sim_p99_s, "s"),
        "series", series, "series_steps", (int)kept, "reason", p->why[0] ? p->why : NULL);
}

json_t *tp__plan_results_json(const struct tp_plan_spec *s, const struct tp_plan_decision *d)
{
    json_t *cands = json_array(), *ranking = json_array();
    for (int i = 0; i < s->ncand; i++) {
        int c = d->order[i];
        json_array_append_new(cands, point_json(s, &s->cand[c], &d->ev[c]));
        json_array_append_new(ranking, json_string(s->cand[c].name));
    }
    json_t *sweep = json_array();
    for (int k = 0; k < d->nscales; k++) {
        json_t *row = json_array();
        for (int i = 0; i < s->ncand; i++) {
            const struct tp_plan_point *p = &d->sweep[k][i];
            bool why = p->why[0] != 0;
            json_array_append_new(
                row, json_pack("{s:s, s:s, s:o*, s:o*, s:o*, s:o*, s:o*, s:o*, s:s*}", "name",
                               s->cand[i].name, "algorithm", tp_plan_algo_name(p->algo),
                               "step_s", num(p->step_s), "step_p99_s", num(p->step_p99_s),
                               "exposed_fraction", num(tp_plan_exposed_fraction(p)),
                               "waste_fraction", num(p->waste), "time_to_train_s",
                               why ? NULL : num(p->train_s), "cost", why ? NULL : num(p->cost),
                               "reason", why ? p->why : NULL));
        }
        /* every candidate has the same GPUs and nodes at a scale */
        const struct tp_plan_point *p = &d->sweep[k][s->ncand - 1];
        json_array_append_new(sweep, json_pack("{s:f, s:f, s:o}", "gpus", p->gpus, "nodes",
                                               p->nodes, "candidates", row));
    }
    json_t *be = json_array();
    for (int k = 0; k < d->ncross; k++)
        json_array_append_new(be, json_pack("{s:s, s:s, s:f}", "cheaper",
                                            s->cand[d->cross[k].cheaper].name, "than",
                                            s->cand[d->cross[k].than].name, "from_gpus",
                                            d->cross[k].from_gpus));
    json_t *results = json_object();
    json_object_set_new(results, "gpus", json_real(d->gpus));
    json_object_set_new(results, "nodes", json_real(d->ev[0].pt.nodes));
    json_object_set_new(results, "ranking", ranking);
    json_object_set_new(results, "candidates", cands);
    json_object_set(results, "words", d->words);
    json_object_set_new(results, "sweep", sweep);
    json_object_set_new(results, "break_even", be);
    return results;
}
