/* The version-2 workload document of an import (join_int.h) and its
 * printed summary (tp_wlimport_print).
 *
 * The steps' collectives become layouts: a step's ordered list of (kind,
 * bytes, dtype, group), the steps that call the same sharing one; a job
 * whose collectives change keeps each step's own, said in a warning. Each
 * rank's times go into "ranks", the skew across ranks into "skew". Where
 * no file has times (an NCCL log alone) one step is written from
 * --compute-ms, as assumed: the forward a third, the backward two thirds,
 * the collectives ready as their bytes accumulate (over the backward when
 * every one is an allreduce, DDP's buckets; over the whole compute
 * otherwise). "imported" says which file filled which key, what was
 * assumed and what is missing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "join_int.h"
#include "tp/json.h"
#include "tp/text.h"

static const char *const phases[] = {"forward", "backward", "optimizer", "other"};

static void filled(json_t *imp, const char *key, const char *from)
{
    json_object_set_new(json_object_get(imp, "filled"), key, tp_json_text(from));
}

static void assumed(json_t *imp, const char *key, const char *why)
{
    json_object_set_new(json_object_get(imp, "assumed"), key, json_string(why));
}

static void missing(json_t *imp, const char *key)
{
    json_array_append_new(json_object_get(imp, "missing"), json_string(key));
}

#define step_of tp__wl_step_of

/* whether rank 0's steps a and b call the same (kind, bytes, dtype, group) */
static bool same_layout(const struct tp__wl_job *j, size_t a, size_t b)
{
    const struct tp_wlimport_part *m = j->ranks[0].m;
    const struct tp_wlimport_step *x = step_of(j, 0, a), *y = step_of(j, 0, b);
    if (x->n != y->n)
        return false;
    for (size_t i = 0; i < x->n; i++) {
        const struct tp_wlimport_coll *p = &m->colls[x->first + i], *q = &m->colls[y->first + i];
        if (p->kind != q->kind || p->bytes != q->bytes || p->group != q->group ||
            (p->dtype != q->dtype && (!p->dtype || !q->dtype || strcmp(p->dtype, q->dtype))))
            return false;
    }
    return true;
}

static json_t *layout_json(const struct tp__wl_job *j, size_t s)
{
    const struct tp_wlimport_part *m = j->ranks[0].m;
    const struct tp_wlimport_step *st = step_of(j, 0, s);
    json_t *a = json_array();
    for (size_t i = 0; i < st->n; i++) {
        const struct tp_wlimport_coll *c = &m->colls[st->first + i];
        json_t *x = json_pack("{s:s, s:I, s:i, s:s}", "kind", tp_wlimport_kind_name(c->kind),
                              "bytes", (json_int_t)c->bytes, "group", c->group, "phase",
                              phases[c->phase < 4 ? c->phase : 3]);
        if (c->dtype)
            json_object_set_new(x, "dtype", json_string(c->dtype));
        json_array_append_new(a, x);
    }
    return a;
}

static json_t *ints(const int64_t *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_integer(v[i] < 0 ? 0 : v[i]));
    return a;
}

/* rank r's figures, per step */
static json_t *rank_json(const struct tp__wl_job *j, size_t r)
{
    json_t *f = json_array(), *b = json_array(), *o = json_array(), *st = json_array();
    json_t *ready = json_array(), *start = json_array(), *dur = json_array();
    for (size_t s = 0; s < j->nsteps; s++) {
        const struct tp_wlimport_step *x = step_of(j, r, s);
        json_array_append_new(f, json_integer(x->forward_ns < 0 ? 0 : x->forward_ns));
        json_array_append_new(b, json_integer(x->backward_ns < 0 ? 0 : x->backward_ns));
        json_array_append_new(o, json_integer(x->optimizer_ns < 0 ? 0 : x->optimizer_ns));
        json_array_append_new(st, json_integer(x->step_ns < 0 ? 0 : x->step_ns));
        json_t *rd = json_array(), *sd = json_array(), *dd = json_array();
        for (size_t i = 0; i < x->n; i++) { /* in the first rank's order (the layout's) */
            const struct tp_wlimport_coll *c = tp__wl_coll_of(j, r, s, i);
            json_array_append_new(rd, json_integer(c->ready_ns < 0 ? 0 : c->ready_ns));
            json_array_append_new(sd, c->dur_ns == TP_WL_NONE
                                          ? json_null()
                                          : json_integer(c->start_ns < 0 ? 0 : c->start_ns));
            json_array_append_new(dd,
                                  c->dur_ns == TP_WL_NONE ? json_null() : json_integer(c->dur_ns));
        }
        json_array_append_new(ready, rd);
        json_array_append_new(start, sd);
        json_array_append_new(dur, dd);
    }
    json_t *x = json_pack("{s:i, s:o, s:o, s:o, s:o, s:o}", "rank", j->ranks[r].rank, "forward_ns",
                          f, "backward_ns", b, "optimizer_ns", o, "step_ns", st, "ready_ns", ready);
    if (j->worked) {
        json_object_set_new(x, "start_ns", start);
        json_object_set_new(x, "duration_ns", dur);
    } else {
        json_decref(start);
        json_decref(dur);
    }
    return x;
}

/* the assumed single step of a job without times: *rank_out, the layout's
 * readiness spread over the compute by the collectives' bytes */
static json_t *assumed_rank(const struct tp__wl_job *j, double compute_ms)
{
    const struct tp_wlimport_part *m = j->ranks[0].m;
    const struct tp_wlimport_step *st = step_of(j, 0, 0);
    int64_t all = (int64_t)(compute_ms * 1e6 + 0.5), fwd = all / 3, bwd = all - fwd;
    bool ddp = true;
    uint64_t total = 0, before = 0;
    for (size_t i = 0; i < st->n; i++) {
        ddp = ddp && m->colls[st->first + i].kind == TP_WL_ALLREDUCE;
        total += m->colls[st->first + i].bytes;
    }
    int64_t from = ddp ? fwd : 0, span = ddp ? bwd : all;
    json_t *rd = json_array();
    for (size_t i = 0; i < st->n; i++) {
        before += m->colls[st->first + i].bytes;
        json_array_append_new(
            rd,
            json_integer(
                from + (total ? (int64_t)((double)span * (double)before / (double)total) : span)));
    }
    return json_pack("{s:i, s:[I], s:[I], s:[I], s:[o]}", "rank", j->ranks[0].rank, "forward_ns",
                     (json_int_t)fwd, "backward_ns", (json_int_t)bwd, "optimizer_ns", (json_int_t)0,
                     "ready_ns", rd);
}

static json_t *groups_json(const struct tp_wlimport_part *m)
{
    json_t *a = json_array();
    for (size_t g = 0; g < m->ngroups; g++) {
        const struct tp_wlimport_group *G = &m->groups[g];
        json_t *rk = json_array();
        for (unsigned k = 0; k < G->nranks; k++)
            json_array_append_new(rk, json_integer(G->ranks[k]));
        json_array_append_new(a, json_pack("{s:o, s:o, s:i, s:o}", "name", tp_json_text(G->name),
                                           "desc", tp_json_text(G->desc), "size", (int)G->size,
                                           "ranks", rk));
    }
    return a;
}

/* "steps 1-3, 5" for the steps whose layout is l */
static void steps_text(const size_t *layout, size_t n, size_t l, char *out, size_t cap)
{
    size_t at = 0;
    out[0] = 0;
    for (size_t s = 0; s < n && at + 16 < cap; s++) {
        if (layout[s] != l || (s > 0 && layout[s - 1] == l))
            continue;
        size_t e = s;
        while (e + 1 < n && layout[e + 1] == l)
            e++;
        at += (size_t)snprintf(out + at, cap - at, e > s ? "%s%zu-%zu" : "%s%zu", at ? ", " : "",
                               s + 1, e + 1);
    }
}

int tp__wl_doc(const struct tp__wl_job *j, const struct tp_wlimport_opts *o, json_t *warnings,
               json_t **out, tp_error *err)
{
    const struct tp_wlimport_part *m = j->ranks[0].m;
    const char *bpath = j->paths[j->ranks[0].bytes_file];
    const char *tpath = j->timed ? j->paths[j->ranks[0].times_file] : NULL;
    if (!j->timed && !(o->compute_ms > 0))
        return tp_error_set(err, TP_EUSAGE,
                            "%s: an NCCL log has no times: give --compute-ms MS, your measured "
                            "compute per step, or merge a torch.profiler trace",
                            bpath);
    size_t nsteps = j->timed ? j->nsteps : 1;
    size_t *layout = calloc(nsteps, sizeof *layout), nl = 0;
    size_t *first = calloc(nsteps, sizeof *first);
    if (!layout || !first) {
        free(layout);
        free(first);
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    }
    json_t *layouts = json_array(), *lsteps = json_array();
    for (size_t s = 0; s < nsteps; s++) {
        size_t l = 0;
        while (l < nl && !same_layout(j, first[l], s))
            l++;
        if (l == nl) {
            first[nl++] = s;
            json_array_append_new(layouts, layout_json(j, s));
        }
        layout[s] = l;
        json_array_append_new(lsteps, json_integer((json_int_t)l));
    }
    if (nl > 1) {
        char a[160], b[160];
        steps_text(layout, nsteps, 0, a, sizeof a);
        steps_text(layout, nsteps, 1, b, sizeof b);
        tp__wlimport_warn(warnings, tpath ? tpath : bpath, 0,
                          "the steps' collectives differ (%zu layouts: steps %s call one list, "
                          "steps %s another%s): each step keeps its own (workload format 2; "
                          "DDP's first step, before it rebuilds its buckets, is one such)",
                          nl, a, b, nl > 2 ? ", ..." : "");
    }
    json_t *imp = json_pack("{s:[], s:{}, s:{}, s:[]}", "files", "filled", "assumed", "missing");
    for (size_t i = 0; i < j->nparts; i++) {
        const struct tp_wlimport_part *p = j->parts[i];
        json_array_append_new(json_object_get(imp, "files"),
                              json_pack("{s:o, s:s, s:s, s:i, s:o}", "path",
                                        tp_json_text(j->paths[i]), "format", p->format, "sha256",
                                        p->sha256, "rank", p->rank, "process",
                                        tp_json_text(p->who)));
    }
    json_t *ranks = json_array();
    if (j->timed) {
        for (size_t r = 0; r < j->nranks; r++)
            json_array_append_new(ranks, rank_json(j, r));
        for (const char *const *k =
                 (const char *const[]){"ranks[].forward_ns", "ranks[].backward_ns",
                                       "ranks[].optimizer_ns", "ranks[].step_ns",
                                       "ranks[].ready_ns", "steps.layout", NULL};
             *k; k++)
            filled(imp, *k, tpath);
        if (j->worked) {
            filled(imp, "ranks[].start_ns", tpath);
            filled(imp, "ranks[].duration_ns", tpath);
        } else {
            missing(imp, "ranks[].start_ns");
            missing(imp, "ranks[].duration_ns");
        }
    } else {
        json_array_append_new(ranks, assumed_rank(j, o->compute_ms));
        char why[160];
        snprintf(why, sizeof why, "a third of --compute-ms %g", o->compute_ms);
        assumed(imp, "ranks[].forward_ns", why);
        snprintf(why, sizeof why, "two thirds of --compute-ms %g", o->compute_ms);
        assumed(imp, "ranks[].backward_ns", why);
        assumed(imp, "ranks[].optimizer_ns", "0: no file times the optimizer step");
        assumed(imp, "ranks[].ready_ns",
                "as the collectives' bytes accumulate: collective i at (bytes of 0..i) / (all "
                "bytes) of the backward when all are allreduces (DDP's buckets), of the whole "
                "compute otherwise");
        assumed(imp, "steps.layout", "one step: every step of the log alike");
        missing(imp, "ranks[].step_ns");
        missing(imp, "ranks[].start_ns");
        missing(imp, "ranks[].duration_ns");
    }
    filled(imp, "layouts[][].bytes", bpath);
    filled(imp, "layouts[][].kind", tpath ? tpath : bpath);
    filled(imp, "groups", tpath ? tpath : bpath);
    /* the gradient: the allreduces' and reduce-scatters' bytes of the first
     * layout (of the backward, where the file tells phases) */
    uint64_t grad = 0, any = 0;
    const struct tp_wlimport_step *s0 = step_of(j, 0, first[0]);
    for (size_t i = 0; i < s0->n; i++) {
        const struct tp_wlimport_coll *c = &m->colls[s0->first + i];
        bool g = c->kind == TP_WL_ALLREDUCE || c->kind == TP_WL_REDUCE_SCATTER;
        grad += g && (!j->timed || c->phase == TP_WL_PHASE_BACKWARD) ? c->bytes : 0;
        any += g ? c->bytes : 0;
    }
    if (!grad)
        grad = any;
    assumed(imp, "model.parameter_bytes",
            "the allreduces' and reduce-scatters' bytes of a step's backward (the gradient)");
    assumed(imp, "checkpoint.bytes",
            "3 x model.parameter_bytes (weights and Adam's two moments): no file has the state "
            "dict");
    missing(imp, "model.parameters");
    missing(imp, "recorded.torch");
    filled(imp, "batch.samples_per_rank", "--samples");
    filled(imp, "batch.sample_bytes", "--sample-bytes");
    /* recorded */
    json_t *rl = json_array();
    for (size_t r = 0; r < j->nranks; r++)
        json_array_append_new(rl, json_integer(j->ranks[r].rank));
    json_t *rec = json_pack("{s:I, s:I, s:o}", "steps", (json_int_t)nsteps, "skipped_steps",
                            (json_int_t)m->skipped, "ranks", rl);
    unsigned ws = 0;
    const char *wsp = NULL, *bep = NULL;
    const struct tp_wlimport_part *be = NULL;
    for (size_t i = 0; i < j->nparts; i++) {
        if (!wsp && j->parts[i]->world_size) {
            ws = j->parts[i]->world_size;
            wsp = j->paths[i];
        }
        if (!bep && j->parts[i]->backend[0]) {
            be = j->parts[i];
            bep = j->paths[i];
        }
    }
    if (!ws && o->world_size) {
        ws = o->world_size;
        wsp = "--world-size";
    }
    if (ws) {
        json_object_set_new(rec, "world_size", json_integer(ws));
        filled(imp, "recorded.world_size", wsp);
        if (ws == 1)
            tp__wlimport_warn(warnings, strcmp(wsp, "--world-size") ? wsp : "--world-size", 0,
                              "a world size of 1: the job ran one rank, its collectives were "
                              "local (their times say nothing of a network)");
    } else {
        missing(imp, "recorded.world_size");
    }
    if (be) {
        json_object_set_new(rec, "backend", tp_json_text(be->backend));
        filled(imp, "recorded.backend", bep);
        if (be->version[0])
            json_object_set_new(rec, "nccl_version", tp_json_text(be->version));
    } else {
        missing(imp, "recorded.backend");
    }
    char source[64] = "";
    for (size_t i = 0, at = 0; i < j->nparts && at < sizeof source; i++) {
        if (strstr(source, j->parts[i]->format))
            continue;
        at += (size_t)snprintf(source + at, sizeof source - at, "%s%s", at ? "+" : "",
                               j->parts[i]->format);
    }
    json_t *d = json_pack(
        "{s:i, s:s, s:o, s:o, s:o, s:{s:o}, s:o, s:{s:[], s:I}, s:{s:I, s:I}, "
        "s:{s:I}}",
        "trainpath_workload", 2, "source", source, "recorded", rec, "groups", groups_json(m),
        "layouts", layouts, "steps", "layout", lsteps, "ranks", ranks, "model", "parameters",
        "parameter_bytes", (json_int_t)grad, "batch", "samples_per_rank", (json_int_t)o->samples,
        "sample_bytes", (json_int_t)o->sample_bytes, "checkpoint", "bytes", (json_int_t)(3 * grad));
    if (d && j->nranks > 1) {
        json_t *off = json_array(), *arr = json_array(), *slow = json_array();
        for (size_t r = 0; r < j->nranks; r++)
            json_array_append_new(off, json_integer(j->ranks[r].offset_ns));
        size_t at = 0;
        for (size_t s = 0; s < nsteps; s++) {
            size_t n = step_of(j, 0, s)->n;
            json_array_append_new(arr, ints(j->arrival_ns + at, n));
            at += n;
            json_array_append_new(slow, json_integer(j->slowest[s]));
        }
        json_object_set_new(d, "skew",
                            json_pack("{s:o, s:b, s:o, s:o}", "offset_ns", off, "offsets_measured",
                                      j->offsets_measured, "arrival_ns", arr, "slowest_rank",
                                      slow));
        filled(imp, "skew", "the ranks' traces");
    }
    if (d)
        json_object_set_new(d, "imported", imp);
    else
        json_decref(imp);
    free(layout);
    free(first);
    if (!d)
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    *out = d;
    return 0;
}

/* ---- the summary ---- */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* the median of the numbers in a (a list, or a list of lists: element i of
 * each when i >= 0) */
static double median(const json_t *a, long i)
{
    size_t n = json_array_size(a), k = 0;
    int64_t *v = n ? malloc(n * sizeof *v) : NULL;
    for (size_t s = 0; v && s < n; s++) {
        const json_t *x = json_array_get(a, s);
        if (i >= 0)
            x = json_array_get(x, (size_t)i);
        if (json_is_integer(x))
            v[k++] = json_integer_value(x);
    }
    double m = NAN;
    if (k) {
        qsort(v, k, sizeof *v, cmp_i64);
        m = (double)v[k / 2];
    }
    free(v);
    return m;
}

void tp_wlimport_print(FILE *f, const json_t *doc, const char *out)
{
    const json_t *ly = json_object_get(doc, "layouts"), *rk = json_object_get(doc, "ranks");
    const json_t *imp = json_object_get(doc, "imported"), *r0 = json_array_get(rk, 0);
    const json_t *l0 = json_array_get(ly, 0), *rec = json_object_get(doc, "recorded");
    char safe[1024], safe2[1024];
    uint64_t bytes = 0;
    for (size_t i = 0; i < json_array_size(l0); i++)
        bytes += (uint64_t)json_integer_value(json_object_get(json_array_get(l0, i), "bytes"));
    size_t nsteps = json_array_size(json_object_get(json_object_get(doc, "steps"), "layout"));
    fprintf(f,
            "%s: a workload file (version 2) from %s: %zu step%s, %zu rank%s, %zu layout%s; "
            "the first calls %zu collective%s, %llu bytes\n",
            tp_text_safe(out, safe, sizeof safe, TP_TEXT_LINE), tp_json_str(doc, "source"), nsteps,
            nsteps == 1 ? "" : "s", json_array_size(rk), json_array_size(rk) == 1 ? "" : "s",
            json_array_size(ly), json_array_size(ly) == 1 ? "" : "s", json_array_size(l0),
            json_array_size(l0) == 1 ? "" : "s", (unsigned long long)bytes);
    fprintf(f, "  %-4s %-14s %14s %-10s %5s %-9s %12s %12s\n", "#", "kind", "bytes", "dtype",
            "group", "phase", "ready p50", "work p50");
    const json_t *ready = json_object_get(r0, "ready_ns"),
                 *dur = json_object_get(r0, "duration_ns");
    size_t shown = json_array_size(l0) > 40 ? 36 : json_array_size(l0);
    for (size_t i = 0; i < shown; i++) {
        const json_t *c = json_array_get(l0, i);
        char rv[32] = "-", dv[32] = "-";
        double r = median(ready, (long)i), d = dur ? median(dur, (long)i) : NAN;
        if (r == r)
            snprintf(rv, sizeof rv, "%.1f us", r / 1e3);
        if (d == d)
            snprintf(dv, sizeof dv, "%.1f us", d / 1e3);
        const char *dt = tp_json_str(c, "dtype");
        fprintf(f, "  %-4zu %-14s %14lld %-10s %5lld %-9s %12s %12s\n", i, tp_json_str(c, "kind"),
                (long long)json_integer_value(json_object_get(c, "bytes")), dt ? dt : "-",
                (long long)json_integer_value(json_object_get(c, "group")), tp_json_str(c, "phase"),
                rv, dv);
    }
    if (shown < json_array_size(l0))
        fprintf(f, "  ... %zu more\n", json_array_size(l0) - shown);
    for (size_t r = 0; r < json_array_size(rk); r++) {
        const json_t *x = json_array_get(rk, r);
        fprintf(f,
                "  rank %lld: forward p50 %.3f ms, backward p50 %.3f ms, optimizer p50 %.3f ms\n",
                (long long)json_integer_value(json_object_get(x, "rank")),
                median(json_object_get(x, "forward_ns"), -1) / 1e6,
                median(json_object_get(x, "backward_ns"), -1) / 1e6,
                median(json_object_get(x, "optimizer_ns"), -1) / 1e6);
        if (r == 7 && json_array_size(rk) > 9) {
            fprintf(f, "  ... %zu more ranks\n", json_array_size(rk) - 8);
            break;
        }
    }
    const json_t *sk = json_object_get(doc, "skew");
    if (sk) {
        const json_t *arr = json_object_get(sk, "arrival_ns"),
                     *slow = json_object_get(sk, "slowest_rank");
        int64_t mx = 0;
        size_t n = 0;
        for (size_t s = 0; s < json_array_size(arr); s++)
            for (size_t i = 0; i < json_array_size(json_array_get(arr, s)); i++, n++) {
                int64_t v = json_integer_value(json_array_get(json_array_get(arr, s), i));
                mx = v > mx ? v : mx;
            }
        long best = -1;
        size_t best_n = 0;
        for (size_t s = 0; s < json_array_size(slow); s++) {
            long r = (long)json_integer_value(json_array_get(slow, s));
            size_t c = 0;
            for (size_t t = 0; t < json_array_size(slow); t++)
                c += json_integer_value(json_array_get(slow, t)) == r;
            if (c > best_n)
                best = r, best_n = c;
        }
        fprintf(f,
                "  arrival skew over %zu collectives: max %.1f us%s; slowest rank: %ld in %zu of "
                "%zu steps\n",
                n, (double)mx / 1e3,
                json_is_true(json_object_get(sk, "offsets_measured"))
                    ? " (clocks aligned on the collectives' ends)"
                    : " (clocks as recorded)",
                best, best_n, json_array_size(slow));
    }
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)json_object_get(imp, "filled"), key, v)
        fprintf(f, "  %-24s from %s\n", key,
                tp_text_safe(json_string_value(v), safe, sizeof safe, TP_TEXT_LINE));
    json_object_foreach((json_t *)json_object_get(imp, "assumed"), key, v)
        fprintf(f, "  %-24s assumed: %s\n", key,
                tp_text_safe(json_string_value(v), safe2, sizeof safe2, TP_TEXT_LINE));
    const json_t *m = json_object_get(imp, "missing");
    if (json_array_size(m)) {
        fprintf(f, "  missing:");
        for (size_t i = 0; i < json_array_size(m); i++)
            fprintf(f, "%s %s", i ? "," : "", json_string_value(json_array_get(m, i)));
        fprintf(f, "\n");
    }
    (void)rec;
}
