/* --workload FILE: a training job recorded from a real framework
 * (contrib/pytorch/trainpath_record.py; docs/workload.md), read into the
 * shape `trainpath step` replays: DDP's buckets in the order its reducer
 * fired them, per recorded step the forward, the backward up to each
 * bucket's readiness and the optimizer step, the samples per rank and their
 * size, and the checkpoint's bytes. Every value is checked; an error names
 * the file and the key. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "step_int.h"
#include "tp/file.h"
#include "tp/json.h"
#include "tp/result.h"
#include "tp/step.h"

#define WL_MAX_BUCKETS 1024 /* trainpath step's limit */
#define WL_MAX_STEPS 100000

static int bad(tp_error *err, const char *path, const char *key, const char *why)
{
    return tp_error_set(err, TP_EUSAGE, "--workload %s: %s: %s", path, key, why);
}

/* o[key] as a whole number in [lo, hi] */
static int whole(const json_t *o, const char *key, uint64_t lo, uint64_t hi, uint64_t *out,
                 const char *path, const char *where, tp_error *err)
{
    const json_t *v = json_object_get(o, key);
    char k[128];
    snprintf(k, sizeof k, "%s%s", where, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0 ||
        (uint64_t)json_integer_value(v) < lo || (uint64_t)json_integer_value(v) > hi)
        return bad(err, path, k, json_is_integer(v) ? "out of range" : "must be a whole number");
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

/* o[key]: n whole numbers >= 0 (n 0: any count >= 1, set there) */
static int series(const json_t *o, const char *key, size_t *n, uint64_t **out, const char *path,
                  const char *where, tp_error *err)
{
    const json_t *a = json_object_get(o, key);
    char k[160];
    snprintf(k, sizeof k, "%s%s", where, key);
    if (!json_is_array(a) || json_array_size(a) == 0 || json_array_size(a) > WL_MAX_STEPS)
        return bad(err, path, k, "must be a list of 1 to 100000 durations (ns)");
    if (*n && json_array_size(a) != *n)
        return bad(err, path, k, "must have one duration per recorded step (as steps.forward_ns)");
    *n = json_array_size(a);
    uint64_t *v = calloc(*n, sizeof *v);
    if (!v)
        return tp_error_set(err, TP_ENOMEM, "--workload %s: out of memory", path);
    for (size_t i = 0; i < *n; i++) {
        const json_t *x = json_array_get(a, i);
        if (!json_is_integer(x) || json_integer_value(x) < 0) {
            free(v);
            return bad(err, path, k, "every duration must be a whole number of ns >= 0");
        }
        v[i] = (uint64_t)json_integer_value(x);
    }
    *out = v;
    return 0;
}

void tp_step_workload_free(struct tp_step_workload *w)
{
    if (!w)
        return;
    free(w->bucket_bytes);
    free(w->ready_ns);
    free(w->allreduce_ns);
    free(w->forward_ns);
    free(w->backward_ns);
    free(w->optimizer_ns);
    free(w->step_ns);
    free(w);
}

static int digest(const char *path, char hex[65], tp_error *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = tp_file_read(path, "a workload file", TP_FILE_MAX_DOC, 0, &text, &len, err);
    if (rc)
        return rc;
    unsigned char d[32];
    crypto_hash_sha256(d, (const unsigned char *)text, len);
    sodium_bin2hex(hex, 65, d, sizeof d);
    free(text);
    return 0;
}

int tp_step_workload_load(const char *path, struct tp_step_workload **out, tp_error *err)
{
    json_t *d = NULL;
    int rc = tp_json_load(path, &d, err);
    if (rc) { /* its message starts with the path */
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        return tp_error_set(err, rc == TP_ENOMEM ? rc : TP_EUSAGE, "--workload %s", why);
    }
    struct tp_step_workload *w = calloc(1, sizeof *w);
    if (!w) {
        json_decref(d);
        return tp_error_set(err, TP_ENOMEM, "--workload %s: out of memory", path);
    }
    const json_t *ver = json_object_get(d, "trainpath_workload");
    const json_t *bk = json_object_get(d, "buckets"), *st = json_object_get(d, "steps");
    const json_t *ba = json_object_get(d, "batch"), *ck = json_object_get(d, "checkpoint");
    if (!json_is_object(d))
        rc = bad(err, path, "(top)", "must be an object (a trainpath workload file)");
    else if (!json_is_integer(ver) || json_integer_value(ver) != 1)
        rc = bad(err, path, "trainpath_workload", "must be 1 (the version this trainpath reads)");
    else if (!json_is_array(bk) || json_array_size(bk) == 0 ||
             json_array_size(bk) > WL_MAX_BUCKETS)
        rc = bad(err, path, "buckets", "must be a list of 1 to 1024 buckets");
    else if (!json_is_object(st))
        rc = bad(err, path, "steps", "must be an object of per-step durations");
    else if (!json_is_object(ba))
        rc = bad(err, path, "batch", "must be an object");
    if (rc == 0)
        rc = series(st, "forward_ns", &w->nsteps, &w->forward_ns, path, "steps.", err);
    if (rc == 0)
        rc = series(st, "backward_ns", &w->nsteps, &w->backward_ns, path, "steps.", err);
    if (rc == 0)
        rc = series(st, "optimizer_ns", &w->nsteps, &w->optimizer_ns, path, "steps.", err);
    if (rc == 0 && json_object_get(st, "step_ns")) /* optional: the whole step as recorded */
        rc = series(st, "step_ns", &w->nsteps, &w->step_ns, path, "steps.", err);
    if (rc == 0) {
        w->nbuckets = (unsigned)json_array_size(bk);
        w->bucket_bytes = calloc(w->nbuckets, sizeof *w->bucket_bytes);
        w->ready_ns = calloc((size_t)w->nbuckets * w->nsteps, sizeof *w->ready_ns);
        if (!w->bucket_bytes || !w->ready_ns)
            rc = tp_error_set(err, TP_ENOMEM, "--workload %s: out of memory", path);
    }
    for (unsigned i = 0; rc == 0 && i < w->nbuckets; i++) {
        const json_t *b = json_array_get(bk, i);
        char where[48];
        snprintf(where, sizeof where, "buckets[%u].", i);
        uint64_t *ready = NULL;
        size_t n = w->nsteps;
        if (!json_is_object(b))
            rc = bad(err, path, where, "must be an object");
        if (rc == 0)
            rc = whole(b, "bytes", 4, UINT64_C(1) << 40, &w->bucket_bytes[i], path, where, err);
        if (rc == 0)
            rc = series(b, "ready_ns", &n, &ready, path, where, err);
        for (size_t s = 0; rc == 0 && s < n; s++)
            w->ready_ns[s * w->nbuckets + i] = ready[s];
        free(ready);
        /* optional, but in every bucket or in none */
        bool has = json_object_get(b, "allreduce_ns") != NULL;
        if (rc == 0 && i > 0 && has != (w->allreduce_ns != NULL))
            rc = bad(err, path, where, "allreduce_ns: in every bucket or in none");
        if (rc == 0 && has && !w->allreduce_ns &&
            !(w->allreduce_ns = calloc((size_t)w->nbuckets * w->nsteps, sizeof *w->allreduce_ns)))
            rc = tp_error_set(err, TP_ENOMEM, "--workload %s: out of memory", path);
        uint64_t *ar = NULL;
        n = w->nsteps;
        if (rc == 0 && has)
            rc = series(b, "allreduce_ns", &n, &ar, path, where, err);
        for (size_t s = 0; rc == 0 && ar && s < n; s++)
            w->allreduce_ns[s * w->nbuckets + i] = ar[s];
        free(ar);
    }
    if (rc == 0)
        rc = whole(ba, "samples_per_rank", 1, 1u << 20, &w->samples_per_rank, path, "batch.", err);
    if (rc == 0)
        rc = whole(ba, "sample_bytes", 4, 64u << 20, &w->sample_bytes, path, "batch.", err);
    if (rc == 0 && ck)
        rc = whole(ck, "bytes", 0, UINT64_C(1) << 44, &w->ckpt_bytes, path, "checkpoint.", err);
    /* the parameter count, from the shapes (optional: plan wants it) */
    const json_t *ps = json_object_get(json_object_get(d, "model"), "parameters");
    for (size_t i = 0; rc == 0 && i < json_array_size(ps); i++) {
        const json_t *shape = json_object_get(json_array_get(ps, i), "shape");
        uint64_t n = 1;
        for (size_t j = 0; j < json_array_size(shape); j++) {
            json_int_t e = json_integer_value(json_array_get(shape, j));
            if (!json_is_integer(json_array_get(shape, j)) || e < 0 || e > (json_int_t)1 << 40) {
                char k[64];
                snprintf(k, sizeof k, "model.parameters[%zu].shape", i);
                rc = bad(err, path, k, "must be a list of whole numbers");
                break;
            }
            n *= (uint64_t)e;
        }
        w->params += n;
    }
    const char *src = tp_json_str(d, "source");
    if (rc == 0) {
        snprintf(w->source, sizeof w->source, "%s", src ? src : "unknown");
        snprintf(w->path, sizeof w->path, "%s", path);
        rc = digest(path, w->sha256, err);
    }
    json_decref(d);
    if (rc) {
        tp_step_workload_free(w);
        return rc;
    }
    *out = w;
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* the median of a[i] + b[i] (b may be NULL), i < n */
static uint64_t median(const uint64_t *a, const uint64_t *b, size_t n)
{
    uint64_t *v = malloc(n * sizeof *v);
    if (!v)
        return a[0] + (b ? b[0] : 0);
    for (size_t s = 0; s < n; s++)
        v[s] = a[s] + (b ? b[s] : 0);
    qsort(v, n, sizeof *v, cmp_u64);
    uint64_t m = v[n / 2];
    free(v);
    return m;
}

uint64_t tp_step_workload_compute_ns(const struct tp_step_workload *w)
{
    return median(w->forward_ns, w->backward_ns, w->nsteps);
}

json_t *tp__step_workload_compare(const struct rank *r, const json_t *run0)
{
    const struct tp_step_workload *w = r->o->workload;
    unsigned B = r->o->buckets;
    json_t *bytes = json_array(); /* as replayed, in DDP's order */
    for (unsigned i = 0; i < B; i++)
        json_array_append_new(bytes,
                              json_integer((json_int_t)(4 * (r->bofs[B - i] - r->bofs[B - 1 - i]))));
    const json_t *comp = json_object_get(json_object_get(run0, "series"), "compute");
    size_t n = 0;
    for (size_t s = 0; s < json_array_size(comp); s++)
        n += json_array_size(json_array_get(comp, s));
    uint64_t *v = n ? malloc(n * sizeof *v) : NULL;
    size_t k = 0;
    for (size_t s = 0; v && s < json_array_size(comp); s++)
        for (size_t q = 0; q < json_array_size(json_array_get(comp, s)); q++)
            v[k++] = (uint64_t)json_number_value(json_array_get(json_array_get(comp, s), q));
    double compute = k ? (double)median(v, NULL, k) : NAN;
    free(v);
    double step = tp_json_num(json_object_get(run0, "step_time"), "p50");
    double rec_compute = (double)tp_step_workload_compute_ns(w);
    double rec_step = w->step_ns ? (double)median(w->step_ns, NULL, w->nsteps) : NAN;
    json_t *rec = json_pack("{s:o, s:o}", "compute_p50", tp_metric(rec_compute, "ns"),
                            "optimizer_p50",
                            tp_metric((double)median(w->optimizer_ns, NULL, w->nsteps), "ns"));
    json_t *rep = json_pack("{s:o, s:o}", "compute_p50", tp_metric(compute, "ns"), "step_p50",
                            tp_metric(step, "ns"));
    json_t *ratio = json_pack("{s:f}", "compute", rec_compute > 0 ? compute / rec_compute : NAN);
    if (w->step_ns) {
        json_object_set_new(rec, "step_p50", tp_metric(rec_step, "ns"));
        json_object_set_new(ratio, "step", json_real(rec_step > 0 ? step / rec_step : NAN));
    }
    json_object_set_new(rep, "bucket_bytes", bytes);
    return json_pack("{s:s, s:I, s:o, s:o, s:o}", "source", w->source, "buckets",
                     (json_int_t)w->nbuckets, "recorded", rec, "replayed", rep,
                     "replayed_over_recorded", ratio);
}

double tp_step_workload_overlap(const struct tp_step_workload *w)
{
    if (!w->allreduce_ns)
        return NAN;
    double hid = 0, all = 0;
    for (size_t s = 0; s < w->nsteps; s++)
        for (unsigned i = 0; i < w->nbuckets; i++) {
            uint64_t ar = w->allreduce_ns[s * w->nbuckets + i], rd = w->ready_ns[s * w->nbuckets + i];
            uint64_t left = w->backward_ns[s] > rd ? w->backward_ns[s] - rd : 0;
            hid += (double)(ar < left ? ar : left);
            all += (double)ar;
        }
    return all > 0 ? hid / all : NAN;
}

uint64_t tp_step_workload_slice_ns(const struct tp_step_workload *w, uint64_t step, unsigned k)
{
    size_t s = step % w->nsteps;
    const uint64_t *r = &w->ready_ns[s * w->nbuckets];
    uint64_t prev = k == 0 ? 0 : r[k - 1];
    uint64_t base = k == 0 ? w->forward_ns[s] : 0;
    return base + (r[k] > prev ? r[k] - prev : 0);
}
