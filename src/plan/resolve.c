/* Measured inputs: `KEY: {measured: FILE}` in a plan takes the figure from
 * a trainpath result document. A table says which kinds of result each
 * figure accepts and how the figure is read from each; a file of another
 * kind, a failed run or a document that is not a result is refused with
 * both the plan location and the file named. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "plan_int.h"
#include "tp/json.h"
#include "tp/plan.h"
#include "tp/result.h"
#include "tp/yaml.h"

/* Hops of an allreduce algorithm over n ranks: its fitted alpha is that many
 * hop latencies (docs/plan.md). */
static double alg_hops(const char *algo, double n)
{
    if (strcmp(algo, "ring") == 0)
        return 2 * (n - 1);
    if (strcmp(algo, "recdoubling") == 0)
        return ceil(log2(n));
    if (strcmp(algo, "rabenseifner") == 0 || strcmp(algo, "tree") == 0)
        return 2 * ceil(log2(n));
    return 0;
}

struct out {
    double value;
    struct tp_plan_spread spread;
    double *samples;
    size_t nsamples;
    char source[192];
};

static int failf(tp_error *err, const struct tp_plan_ref *r, const char *fmt, const char *a)
{
    char msg[256];
    snprintf(msg, sizeof msg, fmt, a);
    return tp_error_set(err, TP_EUSAGE, "%s: measured file %s: %s", r->where, r->file, msg);
}

/* net lat: the smallest size's one-way latency, its spread the hop jitter. */
static int net_lat(const json_t *doc, const struct tp_plan_ref *r, struct out *o,
                   tp_error *err)
{
    const json_t *res = json_object_get(doc, "results");
    const json_t *sz = json_array_get(json_object_get(res, "sizes"), 0);
    const json_t *lat = json_object_get(sz, "latency");
    o->value = tp_json_num(lat, "mean") * 1e-9;
    if (!(o->value > 0))
        return failf(err, r, "%s", "has no latency at its first size");
    o->spread.sd_s = tp_json_num(lat, "stdev") * 1e-9;
    o->spread.p99_s = tp_json_num(lat, "p99") * 1e-9;
    if (!isfinite(o->spread.sd_s))
        o->spread.sd_s = 0;
    snprintf(o->source, sizeof o->source, "one-way latency at %.0f B: mean %.3g us, sd %.3g us",
             tp_json_num(sz, "size_bytes"), o->value * 1e6, o->spread.sd_s * 1e6);
    return 0;
}

/* net bw: the best bandwidth over the sizes measured. */
static int net_bw(const json_t *doc, const struct tp_plan_ref *r, struct out *o,
                  tp_error *err)
{
    const json_t *res = json_object_get(doc, "results");
    size_t i;
    const json_t *sz;
    json_array_foreach(json_object_get(res, "sizes"), i, sz) {
        double bw = tp_json_num(sz, "bw");
        if (bw > o->value) {
            o->value = bw;
            snprintf(o->source, sizeof o->source, "bandwidth at %.0f B: %.3g GB/s",
                     tp_json_num(sz, "size_bytes"), bw / 1e9);
        }
    }
    return o->value > 0 ? 0 : failf(err, r, "%s", "has no bandwidth");
}

/* coll: the latency is the smallest fitted allreduce alpha per hop; the
 * bandwidth is the busbw at the largest size measured (nccl-tests' plateau
 * figure: an asymptotic fit extrapolates beyond what was measured). */
static int coll(const json_t *doc, const struct tp_plan_ref *r, bool lat, struct out *o,
                tp_error *err)
{
    const json_t *res = json_object_get(doc, "results");
    size_t i;
    const json_t *f;
    if (!lat) {
        const json_t *sizes = json_object_get(res, "sizes");
        const json_t *last = json_array_get(sizes, json_array_size(sizes) - 1);
        o->value = tp_json_num(last, "busbw");
        const char *op = json_string_value(json_object_get(json_object_get(doc, "config"), "op"));
        if (!op || strcmp(op, "allreduce") != 0 || !(o->value > 0))
            return failf(err, r, "%s", "has no allreduce bus bandwidth (run coll --op allreduce)");
        snprintf(o->source, sizeof o->source, "allreduce busbw at %.0f B (%s): %.3g GB/s",
                 tp_json_num(last, "size_bytes"), json_string_value(json_object_get(last, "algo")),
                 o->value / 1e9);
        return 0;
    }
    o->value = INFINITY;
    json_array_foreach(json_object_get(res, "fit"), i, f) {
        const char *c = json_string_value(json_object_get(f, "collective"));
        const char *a = json_string_value(json_object_get(f, "algo"));
        double n = tp_json_num(f, "ranks");
        if (!c || !a || strcmp(c, "allreduce") != 0)
            continue;
        double h = alg_hops(a, n), al = tp_json_num(f, "alpha") * 1e-9;
        if (h > 0 && al > 0 && al / h < o->value) {
            o->value = al / h;
            snprintf(o->source, sizeof o->source,
                     "allreduce fit, %s over %.0f ranks: alpha %.3g us = %.0f hops of %.3g us", a,
                     n, al * 1e6, h, o->value * 1e6);
        }
    }
    if (isinf(o->value))
        return failf(err, r, "%s", "has no allreduce alpha-beta fit (run coll --op allreduce "
                                   "over a range of sizes)");
    return 0;
}

static int coll_lat(const json_t *doc, const struct tp_plan_ref *r, struct out *o,
                    tp_error *err)
{
    return coll(doc, r, true, o, err);
}

static int coll_bw(const json_t *doc, const struct tp_plan_ref *r, struct out *o,
                   tp_error *err)
{
    return coll(doc, r, false, o, err);
}

/* io checkpoint: the mean throughput of the committed checkpoints (writes
 * and syncs); for the commit latency, the part that does not grow with the
 * bytes: the mean metadata phase (write, fsync, rename, folder fsync) plus
 * the mean time to retire the previous checkpoint, which a synchronous
 * checkpointer keeping the last one pays inside its stall. */
static int ckpt(const json_t *doc, const struct tp_plan_ref *r, bool bw, struct out *o,
                tp_error *err)
{
    const json_t *res = json_object_get(doc, "results");
    size_t i, n = 0, nr = 0;
    const json_t *c;
    double sum = 0, retire = 0;
    json_array_foreach(json_object_get(res, "checkpoints"), i, c) {
        if (!json_is_true(json_object_get(c, "committed")))
            continue;
        double v = bw ? tp_json_num(c, "throughput") : tp_json_num(c, "metadata") * 1e-9;
        if (v > 0) {
            sum += v;
            n++;
        }
        double rt = tp_json_num(c, "retire") * 1e-9;
        if (rt >= 0) {
            retire += rt;
            nr++;
        }
    }
    if (!n)
        return failf(err, r, "%s", "has no committed checkpoint");
    o->value = sum / (double)n;
    if (bw) {
        snprintf(o->source, sizeof o->source,
                 "checkpoint throughput, mean of %zu commits of %.3g MB: %.3g GB/s", n,
                 tp_json_num(json_array_get(json_object_get(res, "checkpoints"), 0), "bytes") / 1e6,
                 o->value / 1e9);
        return 0;
    }
    double meta = o->value;
    if (nr)
        o->value += retire / (double)nr;
    snprintf(o->source, sizeof o->source,
             "checkpoint metadata commit %.3g ms (mean of %zu) + retiring the previous one %.3g ms "
             "(mean of %zu)",
             meta * 1e3, n, (o->value - meta) * 1e3, nr);
    return 0;
}

static int ckpt_bw(const json_t *doc, const struct tp_plan_ref *r, struct out *o,
                   tp_error *err)
{
    return ckpt(doc, r, true, o, err);
}

static int ckpt_lat(const json_t *doc, const struct tp_plan_ref *r, struct out *o,
                    tp_error *err)
{
    return ckpt(doc, r, false, o, err);
}

static const char *sync_name(const json_t *res)
{
    const char *s = json_string_value(json_object_get(res, "sync"));
    return s ? s : "sync";
}

static int commit_lat(const json_t *doc, const struct tp_plan_ref *r, struct out *o,
                      tp_error *err)
{
    const json_t *res = json_object_get(doc, "results");
    const json_t *lat = json_object_get(res, "latency");
    o->value = tp_json_num(lat, "mean") * 1e-9;
    if (!(o->value > 0))
        return failf(err, r, "%s", "has no commit latency");
    snprintf(o->source, sizeof o->source, "commit (write + %s): mean %.3g ms, p99 %.3g ms",
             sync_name(res), o->value * 1e3,
             tp_json_num(lat, "p99") * 1e-6);
    return 0;
}

static int dataset_bw(const json_t *doc, const struct tp_plan_ref *r, struct out *o,
                      tp_error *err)
{
    const json_t *res = json_object_get(doc, "results");
    size_t i, n = 0;
    const json_t *e;
    double sum = 0;
    json_array_foreach(json_object_get(res, "epochs"), i, e) {
        double v = tp_json_num(e, "throughput");
        if (v > 0) {
            sum += v;
            n++;
        }
    }
    if (!n)
        return failf(err, r, "%s", "has no epoch");
    o->value = sum / (double)n;
    snprintf(o->source, sizeof o->source, "dataset read throughput, mean of %zu epochs: %.3g GB/s",
             n, o->value / 1e9);
    return 0;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* step: every rank's compute time of every step but each run's first (the
 * warm-up: one slow first step would become the maximum that a large N
 * draws again and again), as the empirical distribution the slowest of N
 * ranks is drawn from. */
static int step_compute(const json_t *doc, const struct tp_plan_ref *r, struct out *o,
                        tp_error *err)
{
    const json_t *res = json_object_get(doc, "results");
    size_t i, j, k, n = 0, cap = 0;
    const json_t *run, *st, *v;
    json_array_foreach(json_object_get(res, "runs"), i, run) {
        const json_t *series = json_object_get(json_object_get(run, "series"), "compute");
        json_array_foreach(series, j, st) {
            if (j == 0 && json_array_size(series) > 1)
                continue;
            json_array_foreach(st, k, v) {
                if (!json_is_number(v))
                    continue;
                if (n == cap) {
                    size_t nc = cap ? 2 * cap : 256;
                    double *p = realloc(o->samples, nc * sizeof *p);
                    if (!p)
                        return tp_error_set(err, TP_ENOMEM, "out of memory");
                    o->samples = p;
                    cap = nc;
                }
                o->samples[n++] = json_number_value(v) * 1e-9;
            }
        }
    }
    if (n < 2)
        return failf(err, r, "%s", "has fewer than 2 compute times");
    qsort(o->samples, n, sizeof *o->samples, cmp);
    o->nsamples = n;
    double sum = 0;
    for (i = 0; i < n; i++)
        sum += o->samples[i];
    o->value = sum / (double)n;
    snprintf(o->source, sizeof o->source,
             "compute per step and rank, %zu samples: mean %.3g ms, p99 %.3g ms", n,
             o->value * 1e3, o->samples[(size_t)(0.99 * (double)(n - 1))] * 1e3);
    return 0;
}

typedef int (*reader)(const json_t *, const struct tp_plan_ref *, struct out *, tp_error *);

/* Per figure: the commands it accepts and the reader of each. */
static const struct {
    const char *name;
    struct {
        const char *command;
        reader read;
    } from[3];
} figs[TP_FIG_COUNT] = {
    [TP_FIG_COMPUTE] = {"compute_time", {{"step", step_compute}}},
    [TP_FIG_INTRA_LAT] = {"intra_node.latency", {{"net lat", net_lat}, {"coll", coll_lat}}},
    [TP_FIG_INTRA_BW] = {"intra_node.bandwidth", {{"net bw", net_bw}, {"coll", coll_bw}}},
    [TP_FIG_NET_LAT] = {"network.latency", {{"net lat", net_lat}, {"coll", coll_lat}}},
    [TP_FIG_NET_BW] = {"network.bandwidth", {{"net bw", net_bw}, {"coll", coll_bw}}},
    [TP_FIG_WRITE_BW] = {"storage.write_bandwidth", {{"io checkpoint", ckpt_bw}}},
    [TP_FIG_READ_BW] = {"storage.read_bandwidth", {{"io dataset", dataset_bw}}},
    [TP_FIG_COMMIT_LAT] = {"storage.commit_latency",
                           {{"io commit", commit_lat}, {"io checkpoint", ckpt_lat}}},
};

/* A measured figure must be one of sense, as the plan's own key would have
 * to be: a result document with an absurd figure (edited by hand, or from
 * a broken run) is refused naming the file, never carried into the model. */
static int sensible(const struct tp_plan_ref *r, const struct out *o, tp_error *err)
{
    const struct tp_yaml_range *g = tp__plan_fig_range(r->fig);
    double v = o->value;
    bool bad = !isfinite(v) || (g && (v < g->lo || v > g->hi || (g->lo_open && v == g->lo)));
    for (size_t i = 0; !bad && i < o->nsamples; i++)
        bad = !(o->samples[i] >= 0 && o->samples[i] <= (g ? g->hi : INFINITY));
    bad = bad || !(o->spread.sd_s >= 0 && o->spread.sd_s <= (g ? g->hi : INFINITY));
    if (!bad)
        return 0;
    return tp_error_set(err, TP_EUSAGE,
                        "%s: measured file %s: gives %s = %.6g (%s), which %s: refusing an absurd "
                        "measurement",
                        r->where, r->file, figs[r->fig].name, v, o->source,
                        g ? g->says : "must be finite");
}

static void store(struct tp_plan_spec *s, const struct tp_plan_ref *r, struct out *o)
{
    struct tp_plan_candidate *c = r->cand >= 0 ? &s->cand[r->cand] : NULL;
    switch (r->fig) {
    case TP_FIG_COMPUTE:
        s->w.compute_s = o->value;
        free(s->w.compute_samples);
        s->w.compute_samples = o->samples;
        s->w.ncompute = o->nsamples;
        o->samples = NULL;
        break;
    case TP_FIG_INTRA_LAT:
        s->c.intra_lat_s = o->value;
        s->c.intra_spread = o->spread;
        break;
    case TP_FIG_INTRA_BW: s->c.intra_bw_Bps = o->value; break;
    case TP_FIG_NET_LAT:
        c->net_lat_s = o->value;
        c->net_spread = o->spread;
        break;
    case TP_FIG_NET_BW: c->net_bw_Bps = o->value; break;
    case TP_FIG_WRITE_BW: c->write_Bps = o->value; break;
    case TP_FIG_READ_BW: c->read_Bps = o->value; break;
    case TP_FIG_COMMIT_LAT: c->commit_lat_s = o->value; break;
    default: break;
    }
}

static int resolve_one(struct tp_plan_spec *s, struct tp_plan_ref *r, tp_error *err)
{
    if (r->fig >= TP_FIG_COUNT || (r->cand >= s->ncand))
        return tp_error_set(err, TP_EUSAGE, "%s: bad measured reference", r->where);
    json_t *doc = NULL;
    /* a regular file under the document cap (a FIFO there is refused) */
    if (tp_json_load(r->file, &doc, err) != 0) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg); /* "FILE: reason" */
        return tp_error_set(err, TP_EUSAGE, "%s: measured file %s", r->where, why);
    }
    int rc = 0;
    const char *schema = json_string_value(json_object_get(doc, "schema"));
    const char *command = json_string_value(json_object_get(doc, "command"));
    const json_t *status = json_object_get(doc, "status");
    if (!schema || strcmp(schema, TP_RESULT_SCHEMA) != 0 || !command) {
        rc = failf(err, r, "%s", "is not a trainpath result document");
        goto out;
    }
    if (!json_is_true(json_object_get(status, "ok"))) {
        const char *m = json_string_value(json_object_get(status, "message"));
        rc = failf(err, r, "is the result of a failed run (%s)", m && *m ? m : "no message");
        goto out;
    }
    snprintf(r->command, sizeof r->command, "%s", command);
    char kinds[96] = "";
    for (int i = 0; i < 3 && figs[r->fig].from[i].command; i++) {
        if (strcmp(command, figs[r->fig].from[i].command) == 0) {
            struct out o = {0};
            rc = figs[r->fig].from[i].read(doc, r, &o, err);
            if (rc == 0)
                rc = sensible(r, &o, err);
            if (rc == 0) {
                r->value = o.value;
                snprintf(r->source, sizeof r->source, "%s", o.source);
                store(s, r, &o);
            }
            free(o.samples);
            goto out;
        }
        snprintf(kinds + strlen(kinds), sizeof kinds - strlen(kinds), "%s'%s'", i ? " or " : "",
                 figs[r->fig].from[i].command);
    }
    rc = tp_error_set(err, TP_EUSAGE,
                      "%s: measured file %s is a '%s' result; %s takes a %s result", r->where,
                      r->file, command, figs[r->fig].name, kinds);
out:
    json_decref(doc);
    return rc;
}

int tp_plan_resolve(struct tp_plan_spec *s, tp_error *err)
{
    for (size_t i = 0; i < s->nrefs; i++) {
        int rc = resolve_one(s, &s->refs[i], err);
        if (rc)
            return rc;
    }
    return 0;
}
