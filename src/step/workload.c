/* --workload FILE: a training job recorded from a real framework
 * (contrib/pytorch/trainpath_record.py, or trainpath workload import;
 * docs/workload.md), read into the shape `trainpath step` replays: the
 * layouts of collectives a step makes (kind, bytes, dtype, group) and the
 * layout each recorded step made, per recorded rank and step the forward,
 * the backward, the optimizer step and each collective's readiness from
 * the step's compute start, the samples per rank and their size, and the
 * checkpoint's bytes.
 *
 * Version 1 (DDP's buckets) is read into the same shape: one layout of
 * allreduces in the order DDP fired them, one rank, each readiness moved
 * by the forward (version 1 counts it from the forward's end). Every value
 * is checked; an error names the file and the key. The collective kinds
 * are coll's own (tp_coll_parse); the three a workload has and coll has
 * not are the rows of own_kinds[] below, each with the coll kind it
 * replays as. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "step_int.h"
#include "tp/file.h"
#include "tp/json.h"
#include "tp/model.h"
#include "tp/result.h"
#include "tp/step.h"

#define WL_MAX_BUCKETS 1024 /* version 1: trainpath step's bucket limit */
#define WL_MAX_STEPS 100000
#define WL_MAX_COLLS 65536 /* the collectives of one layout */
#define WL_MAX_RANKS 65536 /* recorded ranks */
#define WL_MAX_BYTES (UINT64_C(1) << 40)
#define WL_MAX_TIMES (1u << 26) /* per-collective times over all steps and ranks */

/* The kinds a workload file records that coll has no row of, and how
 * each replays: send and recv as coll's sendrecv of the message (each rank
 * sends to the next and receives from the previous), barrier as an
 * allreduce of 4 bytes (one element: the least a synchronisation moves). */
static const struct own_kind {
    const char *name;
    enum tp_coll_kind as;
    uint64_t bytes; /* what it replays: 0 the recorded bytes, else this */
} own_kinds[] = {
    {"send", TP_SENDRECV, 0},
    {"recv", TP_SENDRECV, 0},
    {"barrier", TP_ALLREDUCE, 4},
};
#define NOWN (sizeof own_kinds / sizeof *own_kinds)

/* torch's element types by the names a workload file uses (the second:
 * torch's own spelling where it differs, as str(dtype) prints it) */
static const char *const dtypes[][2] = {
    {"float32", "float"},
    {"bfloat16", NULL},
    {"float16", "half"},
    {"float64", "double"},
    {"float8e4m3", "float8_e4m3fn"},
    {"float8e5m2", "float8_e5m2"},
    {"int64", "long"},
    {"int32", "int"},
    {"int16", "short"},
    {"int8", NULL},
    {"uint64", NULL},
    {"uint32", NULL},
    {"uint16", NULL},
    {"uint8", NULL},
    {"bool", NULL},
    {"complex64", NULL},
    {"complex128", NULL},
};
#define NDTYPES (sizeof dtypes / sizeof *dtypes)

static const char *const phases[] = {"forward", "backward", "optimizer", "other"};
#define NPHASES (sizeof phases / sizeof *phases)

static int bad(tp_error *err, const char *path, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int bad(tp_error *err, const char *path, const char *key, const char *fmt, ...)
{
    char why[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return tp_error_set(err, TP_EUSAGE, "--workload %s: %s: %s", path, key, why);
}

static int oom(tp_error *err, const char *path)
{
    return tp_error_set(err, TP_ENOMEM, "--workload %s: out of memory", path);
}

/* o[key] as a whole number in [lo, hi] */
static int whole(const json_t *o, const char *key, uint64_t lo, uint64_t hi, uint64_t *out,
                 const char *path, const char *where, tp_error *err)
{
    const json_t *v = json_object_get(o, key);
    char k[160];
    snprintf(k, sizeof k, "%s%s", where, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0 || (uint64_t)json_integer_value(v) < lo ||
        (uint64_t)json_integer_value(v) > hi)
        return bad(err, path, k, "%s",
                   json_is_integer(v) ? "out of range" : "must be a whole number");
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

/* o[key]: *n whole numbers >= 0 (*n 0: any count from 1 to WL_MAX_STEPS,
 * set there); like names the list whose count it must have */
static int series(const json_t *o, const char *key, size_t *n, uint64_t **out, const char *path,
                  const char *where, const char *like, tp_error *err)
{
    const json_t *a = json_object_get(o, key);
    char k[160];
    snprintf(k, sizeof k, "%s%s", where, key);
    if (!json_is_array(a) || json_array_size(a) == 0 || json_array_size(a) > WL_MAX_STEPS)
        return bad(err, path, k, "must be a list of 1 to 100000 durations (ns)");
    if (*n && json_array_size(a) != *n)
        return bad(err, path, k, "must have one duration per recorded step (as %s)", like);
    *n = json_array_size(a);
    uint64_t *v = calloc(*n, sizeof *v);
    if (!v)
        return oom(err, path);
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
    for (size_t l = 0; w->layouts && l < w->nlayouts; l++)
        free(w->layouts[l].coll);
    free(w->layouts);
    for (size_t k = 0; w->ranks && k < w->nranks; k++) {
        struct tp_step_wl_rank *q = &w->ranks[k];
        free(q->forward_ns);
        free(q->backward_ns);
        free(q->optimizer_ns);
        free(q->step_ns);
        free(q->ready_ns);
        free(q->start_ns);
        free(q->duration_ns);
    }
    free(w->ranks);
    free(w->layout);
    free(w->at);
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

/* the dtype name s as the table spells it, or NULL */
static const char *dtype_of(const char *s)
{
    for (size_t i = 0; i < NDTYPES; i++)
        if (strcmp(s, dtypes[i][0]) == 0 || (dtypes[i][1] && strcmp(s, dtypes[i][1]) == 0))
            return dtypes[i][0];
    return NULL;
}

/* The kind named s into c (name, kind, replay_bytes from bytes); -1 when s
 * names none. */
static int kind_of(const char *s, struct tp_step_wl_coll *c)
{
    int k = tp_coll_parse(s);
    if (k >= 0) {
        c->name = tp_coll_name((enum tp_coll_kind)k);
        c->kind = (enum tp_coll_kind)k;
        c->replay_bytes = c->bytes;
        return 0;
    }
    for (size_t i = 0; i < NOWN; i++)
        if (strcmp(s, own_kinds[i].name) == 0) {
            c->name = own_kinds[i].name;
            c->kind = own_kinds[i].as;
            c->mapped = true;
            c->replay_bytes = own_kinds[i].bytes ? own_kinds[i].bytes : c->bytes;
            return 0;
        }
    return -1;
}

/* "allreduce, reduce-scatter, ..., barrier": every kind a file may name */
static void kind_list(char *out, size_t cap)
{
    size_t at = 0;
    for (int k = 0; k < TP_COLL_COUNT && at < cap; k++)
        at += (size_t)snprintf(out + at, cap - at, "%s%s", k ? ", " : "",
                               tp_coll_name((enum tp_coll_kind)k));
    for (size_t i = 0; i < NOWN && at < cap; i++)
        at += (size_t)snprintf(out + at, cap - at, ", %s", own_kinds[i].name);
}

/* The parts both versions share: the batch, the checkpoint, the model's
 * parameter count, the source; the file's digest. */
static int common(const json_t *d, struct tp_step_workload *w, const char *path, tp_error *err)
{
    const json_t *ba = json_object_get(d, "batch"), *ck = json_object_get(d, "checkpoint");
    int rc = 0;
    if (!json_is_object(ba))
        return bad(err, path, "batch", "must be an object");
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
    return rc;
}

/* ---- version 1: DDP's buckets ---- */

static int load_v1(const json_t *d, struct tp_step_workload *w, const char *path, tp_error *err)
{
    const json_t *bk = json_object_get(d, "buckets"), *st = json_object_get(d, "steps");
    if (!json_is_array(bk) || json_array_size(bk) == 0 || json_array_size(bk) > WL_MAX_BUCKETS)
        return bad(err, path, "buckets", "must be a list of 1 to 1024 buckets");
    if (!json_is_object(st))
        return bad(err, path, "steps", "must be an object of per-step durations");
    if (!json_is_object(json_object_get(d, "batch")))
        return bad(err, path, "batch", "must be an object");
    size_t nb = json_array_size(bk);
    w->nranks = 1;
    w->nlayouts = 1;
    w->ranks = calloc(1, sizeof *w->ranks);
    w->layouts = calloc(1, sizeof *w->layouts);
    if (!w->ranks || !w->layouts)
        return oom(err, path);
    struct tp_step_wl_rank *q = &w->ranks[0];
    const json_t *rk = json_object_get(json_object_get(d, "recorded"), "rank");
    q->rank =
        json_is_integer(rk) && json_integer_value(rk) >= 0 && json_integer_value(rk) < INT32_MAX
            ? (int)json_integer_value(rk)
            : 0;
    const char *like = "steps.forward_ns";
    int rc = series(st, "forward_ns", &w->nsteps, &q->forward_ns, path, "steps.", like, err);
    if (rc == 0)
        rc = series(st, "backward_ns", &w->nsteps, &q->backward_ns, path, "steps.", like, err);
    if (rc == 0)
        rc = series(st, "optimizer_ns", &w->nsteps, &q->optimizer_ns, path, "steps.", like, err);
    if (rc == 0 && json_object_get(st, "step_ns")) /* optional: the whole step as recorded */
        rc = series(st, "step_ns", &w->nsteps, &q->step_ns, path, "steps.", like, err);
    if (rc)
        return rc;
    struct tp_step_wl_layout *L = &w->layouts[0];
    L->n = nb;
    L->coll = calloc(nb, sizeof *L->coll);
    w->layout = calloc(w->nsteps, sizeof *w->layout);
    w->at = calloc(w->nsteps + 1, sizeof *w->at);
    q->ready_ns = calloc(nb * w->nsteps, sizeof *q->ready_ns);
    if (!L->coll || !w->layout || !w->at || !q->ready_ns)
        return oom(err, path);
    for (size_t s = 0; s <= w->nsteps; s++)
        w->at[s] = s * nb;
    for (size_t i = 0; rc == 0 && i < nb; i++) {
        const json_t *b = json_array_get(bk, i);
        char where[48];
        snprintf(where, sizeof where, "buckets[%zu].", i);
        struct tp_step_wl_coll *c = &L->coll[i];
        uint64_t *ready = NULL;
        size_t n = w->nsteps;
        if (!json_is_object(b))
            return bad(err, path, where, "must be an object");
        rc = whole(b, "bytes", 4, WL_MAX_BYTES, &c->bytes, path, where, err);
        if (rc)
            return rc;
        kind_of("allreduce", c);
        c->group = -1;
        c->phase = "backward";
        const json_t *dt = json_object_get(b, "dtype");
        if (dt && !(json_is_string(dt) && (c->dtype = dtype_of(json_string_value(dt))))) {
            char k[64];
            snprintf(k, sizeof k, "%sdtype", where);
            return bad(err, path, k, "not an element type (float32, bfloat16, float16, ...)");
        }
        rc = series(b, "ready_ns", &n, &ready, path, where, like, err);
        /* version 1's readiness counts from the forward's end */
        for (size_t s = 0; rc == 0 && s < n; s++)
            q->ready_ns[s * nb + i] = q->forward_ns[s] + ready[s];
        free(ready);
        /* optional, but in every bucket or in none */
        bool has = json_object_get(b, "allreduce_ns") != NULL;
        if (rc == 0 && i > 0 && has != (q->duration_ns != NULL))
            rc = bad(err, path, where, "allreduce_ns: in every bucket or in none");
        if (rc == 0 && has && !q->duration_ns &&
            !(q->duration_ns = calloc(nb * w->nsteps, sizeof *q->duration_ns)))
            rc = oom(err, path);
        uint64_t *ar = NULL;
        n = w->nsteps;
        if (rc == 0 && has)
            rc = series(b, "allreduce_ns", &n, &ar, path, where, like, err);
        for (size_t s = 0; rc == 0 && ar && s < n; s++)
            q->duration_ns[s * nb + i] = ar[s];
        free(ar);
    }
    return rc;
}

/* ---- version 2: every collective of a step, per rank ---- */

static int read_coll(const json_t *o, struct tp_step_wl_coll *c, size_t ngroups, const char *path,
                     const char *where, tp_error *err)
{
    char k[160];
    if (!json_is_object(o))
        return bad(err, path, where, "must be an object (kind, bytes, dtype, group, phase)");
    snprintf(k, sizeof k, "%s.", where);
    int rc = whole(o, "bytes", 0, WL_MAX_BYTES, &c->bytes, path, k, err);
    if (rc)
        return rc;
    const json_t *v = json_object_get(o, "kind");
    snprintf(k, sizeof k, "%s.kind", where);
    if (!json_is_string(v)) {
        char all[200];
        kind_list(all, sizeof all);
        return bad(err, path, k, "must name a collective (%s)", all);
    }
    if (kind_of(json_string_value(v), c) != 0) {
        char all[200];
        kind_list(all, sizeof all);
        return bad(err, path, k, "\"%.64s\" is not a collective (%s)", json_string_value(v), all);
    }
    static const char *const types = "float32, bfloat16, float16, float64, float8e4m3, "
                                     "float8e5m2, int64, int32, int16, int8, uint8, ...";
    v = json_object_get(o, "dtype"); /* optional: an import may not know it */
    snprintf(k, sizeof k, "%s.dtype", where);
    if (v && !json_is_string(v))
        return bad(err, path, k, "must name an element type (%s)", types);
    if (v && !(c->dtype = dtype_of(json_string_value(v))))
        return bad(err, path, k, "\"%.64s\" is not an element type (%s)", json_string_value(v),
                   types);
    v = json_object_get(o, "group");
    snprintf(k, sizeof k, "%s.group", where);
    c->group = -1;
    if (v && (!json_is_integer(v) || json_integer_value(v) < -1 ||
              json_integer_value(v) >= (json_int_t)ngroups))
        return bad(err, path, k, "must be an index into groups (0 to %zd), or -1 for none",
                   (ssize_t)ngroups - 1);
    if (v)
        c->group = (int)json_integer_value(v);
    v = json_object_get(o, "phase");
    snprintf(k, sizeof k, "%s.phase", where);
    c->phase = "other";
    if (v) {
        size_t i = 0;
        while (i < NPHASES && !(json_is_string(v) && strcmp(json_string_value(v), phases[i]) == 0))
            i++;
        if (i == NPHASES)
            return bad(err, path, k, "must be forward, backward, optimizer or other");
        c->phase = phases[i];
    }
    return 0;
}

/* q->key: one list per recorded step of one time per collective of the
 * step's layout, into *out (w->at's layout); absent: *out stays NULL
 * unless required; an entry null (no work found) TP_STEP_WL_NONE where
 * not required */
static int per_coll(const json_t *o, const char *key, bool required,
                    const struct tp_step_workload *w, uint64_t **out, const char *path,
                    const char *where, tp_error *err)
{
    const json_t *a = json_object_get(o, key);
    char k[160];
    snprintf(k, sizeof k, "%s%s", where, key);
    if (!a && !required)
        return 0;
    if (!json_is_array(a) || json_array_size(a) != w->nsteps)
        return bad(err, path, k,
                   "must be a list of one list per recorded step (%zu, as "
                   "steps.layout)",
                   w->nsteps);
    uint64_t *v = malloc((w->at[w->nsteps] ? w->at[w->nsteps] : 1) * sizeof *v);
    if (!v)
        return oom(err, path);
    for (size_t s = 0; s < w->nsteps; s++) {
        const json_t *x = json_array_get(a, s);
        size_t want = w->at[s + 1] - w->at[s];
        if (!json_is_array(x) || json_array_size(x) != want) {
            free(v);
            char ks[200];
            snprintf(ks, sizeof ks, "%.150s[%zu]", k, s);
            return bad(err, path, ks,
                       "must have one time per collective of the step's layout "
                       "(layouts[%zu]: %zu)",
                       w->layout[s], want);
        }
        for (size_t i = 0; i < want; i++) {
            const json_t *e = json_array_get(x, i);
            if (!required && json_is_null(e)) {
                v[w->at[s] + i] = TP_STEP_WL_NONE;
                continue;
            }
            if (!json_is_integer(e) || json_integer_value(e) < 0) {
                free(v);
                char ks[200];
                snprintf(ks, sizeof ks, "%.150s[%zu][%zu]", k, s, i);
                return bad(err, path, ks, "must be a whole number of ns >= 0%s",
                           required ? "" : " (or null: no work found)");
            }
            v[w->at[s] + i] = (uint64_t)json_integer_value(e);
        }
    }
    *out = v;
    return 0;
}

static int read_rank(const json_t *o, size_t k, const json_t *want_rank, struct tp_step_workload *w,
                     const char *path, tp_error *err)
{
    struct tp_step_wl_rank *q = &w->ranks[k];
    char where[48];
    snprintf(where, sizeof where, "ranks[%zu]", k);
    if (!json_is_object(o))
        return bad(err, path, where, "must be an object of the rank's times");
    strcat(where, ".");
    uint64_t rank;
    int rc = whole(o, "rank", 0, INT32_MAX, &rank, path, where, err);
    if (rc)
        return rc;
    q->rank = (int)rank;
    if (want_rank && json_integer_value(want_rank) != (json_int_t)rank) {
        char key[64];
        snprintf(key, sizeof key, "%srank", where);
        return bad(err, path, key, "%d, but recorded.ranks[%zu] is %lld", q->rank, k,
                   (long long)json_integer_value(want_rank));
    }
    const char *like = "steps.layout";
    size_t n = w->nsteps;
    rc = series(o, "forward_ns", &n, &q->forward_ns, path, where, like, err);
    if (rc == 0)
        rc = series(o, "backward_ns", &n, &q->backward_ns, path, where, like, err);
    if (rc == 0)
        rc = series(o, "optimizer_ns", &n, &q->optimizer_ns, path, where, like, err);
    if (rc == 0 && json_object_get(o, "step_ns"))
        rc = series(o, "step_ns", &n, &q->step_ns, path, where, like, err);
    if (rc == 0)
        rc = per_coll(o, "ready_ns", true, w, &q->ready_ns, path, where, err);
    if (rc == 0)
        rc = per_coll(o, "start_ns", false, w, &q->start_ns, path, where, err);
    if (rc == 0)
        rc = per_coll(o, "duration_ns", false, w, &q->duration_ns, path, where, err);
    return rc;
}

static int load_v2(const json_t *d, struct tp_step_workload *w, const char *path, tp_error *err)
{
    const json_t *gr = json_object_get(d, "groups"), *ly = json_object_get(d, "layouts");
    const json_t *st = json_object_get(d, "steps"), *rk = json_object_get(d, "ranks");
    const json_t *rec_ranks = json_object_get(json_object_get(d, "recorded"), "ranks");
    if (gr && (!json_is_array(gr) || json_array_size(gr) > WL_MAX_RANKS))
        return bad(err, path, "groups", "must be a list of the job's process groups");
    w->ngroups = json_array_size(gr);
    for (size_t g = 0; g < w->ngroups; g++) {
        const json_t *o = json_array_get(gr, g);
        char where[48];
        snprintf(where, sizeof where, "groups[%zu]", g);
        if (!json_is_object(o))
            return bad(err, path, where, "must be an object (name, desc, size, ranks)");
        uint64_t size;
        strcat(where, ".");
        if (json_object_get(o, "size") &&
            whole(o, "size", 1, WL_MAX_RANKS * UINT64_C(1024), &size, path, where, err))
            return err->code;
    }
    if (!json_is_array(ly) || json_array_size(ly) == 0 || json_array_size(ly) > WL_MAX_STEPS)
        return bad(err, path, "layouts",
                   "must be a list of 1 to 100000 layouts (each a list of "
                   "collectives)");
    w->nlayouts = json_array_size(ly);
    if (!(w->layouts = calloc(w->nlayouts, sizeof *w->layouts)))
        return oom(err, path);
    for (size_t l = 0; l < w->nlayouts; l++) {
        const json_t *a = json_array_get(ly, l);
        char where[64];
        snprintf(where, sizeof where, "layouts[%zu]", l);
        if (!json_is_array(a) || json_array_size(a) > WL_MAX_COLLS)
            return bad(err, path, where, "must be a list of at most 65536 collectives");
        struct tp_step_wl_layout *L = &w->layouts[l];
        L->n = json_array_size(a);
        if (L->n && !(L->coll = calloc(L->n, sizeof *L->coll)))
            return oom(err, path);
        for (size_t i = 0; i < L->n; i++) {
            snprintf(where, sizeof where, "layouts[%zu][%zu]", l, i);
            int rc = read_coll(json_array_get(a, i), &L->coll[i], w->ngroups, path, where, err);
            if (rc)
                return rc;
        }
    }
    if (!json_is_object(st))
        return bad(err, path, "steps", "must be an object (layout: each step's layout)");
    const json_t *sl = json_object_get(st, "layout");
    if (!json_is_array(sl) || json_array_size(sl) == 0 || json_array_size(sl) > WL_MAX_STEPS)
        return bad(err, path, "steps.layout",
                   "must be a list of 1 to 100000 layout indexes, one "
                   "per recorded step");
    w->nsteps = json_array_size(sl);
    w->layout = calloc(w->nsteps, sizeof *w->layout);
    w->at = calloc(w->nsteps + 1, sizeof *w->at);
    if (!w->layout || !w->at)
        return oom(err, path);
    for (size_t s = 0; s < w->nsteps; s++) {
        const json_t *x = json_array_get(sl, s);
        if (!json_is_integer(x) || json_integer_value(x) < 0 ||
            json_integer_value(x) >= (json_int_t)w->nlayouts) {
            char k[48];
            snprintf(k, sizeof k, "steps.layout[%zu]", s);
            return bad(err, path, k, "must be an index into layouts (0 to %zu)", w->nlayouts - 1);
        }
        w->layout[s] = (size_t)json_integer_value(x);
        w->at[s + 1] = w->at[s] + w->layouts[w->layout[s]].n;
    }
    if (!json_is_array(rk) || json_array_size(rk) == 0 || json_array_size(rk) > WL_MAX_RANKS)
        return bad(err, path, "ranks", "must be a list of 1 to 65536 ranks' times");
    w->nranks = json_array_size(rk);
    if ((uint64_t)w->at[w->nsteps] * w->nranks > WL_MAX_TIMES)
        return bad(err, path, "ranks",
                   "%zu ranks of %zu steps that make %zu collectives: more "
                   "than %u times to read",
                   w->nranks, w->nsteps, w->at[w->nsteps], WL_MAX_TIMES);
    if (rec_ranks && (!json_is_array(rec_ranks) || json_array_size(rec_ranks) != w->nranks))
        return bad(err, path, "recorded.ranks", "must list the rank of each entry of ranks (%zu)",
                   w->nranks);
    for (size_t k = 0; k < json_array_size(rec_ranks); k++)
        if (!json_is_integer(json_array_get(rec_ranks, k))) {
            char key[48];
            snprintf(key, sizeof key, "recorded.ranks[%zu]", k);
            return bad(err, path, key, "must be a whole number");
        }
    if (!(w->ranks = calloc(w->nranks, sizeof *w->ranks)))
        return oom(err, path);
    for (size_t k = 0; k < w->nranks; k++) {
        int rc = read_rank(json_array_get(rk, k), k, json_array_get(rec_ranks, k), w, path, err);
        if (rc)
            return rc;
    }
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
        return oom(err, path);
    }
    const json_t *ver = json_object_get(d, "trainpath_workload");
    if (!json_is_object(d))
        rc = bad(err, path, "(top)", "must be an object (a trainpath workload file)");
    else if (!json_is_integer(ver) || json_integer_value(ver) < 1 || json_integer_value(ver) > 2)
        rc = bad(err, path, "trainpath_workload",
                 "must be 1 or 2 (the versions this trainpath "
                 "reads)");
    else {
        w->version = (int)json_integer_value(ver);
        rc = w->version == 1 ? load_v1(d, w, path, err) : load_v2(d, w, path, err);
    }
    if (rc == 0)
        rc = common(d, w, path, err);
    json_decref(d);
    if (rc) {
        tp_step_workload_free(w);
        return rc;
    }
    *out = w;
    return 0;
}

/* ---- what the replay and plan read of it ---- */

const struct tp_step_wl_layout *tp_step_workload_layout(const struct tp_step_workload *w,
                                                        uint64_t step)
{
    return &w->layouts[w->layout[step % w->nsteps]];
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* the median of v[i], i < n (sorts v) */
static uint64_t median_of(uint64_t *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_u64);
    return n ? v[n / 2] : 0;
}

/* The median over the recorded steps of recorded ranks ranks[i % nranks],
 * i < m, of a[s] + b[s] (b may be NULL), where pick gives a and b of a
 * rank; NAN when out of memory or when a rank has no a. */
static double median_ranks(const struct tp_step_workload *w, size_t m,
                           const uint64_t *(*pick)(const struct tp_step_wl_rank *, int))
{
    size_t n = m * w->nsteps;
    uint64_t *v = malloc(n * sizeof *v);
    if (!v)
        return NAN;
    for (size_t i = 0; i < m; i++) {
        const struct tp_step_wl_rank *q = &w->ranks[i % w->nranks];
        const uint64_t *a = pick(q, 0), *b = pick(q, 1);
        if (!a) {
            free(v);
            return NAN;
        }
        for (size_t s = 0; s < w->nsteps; s++)
            v[i * w->nsteps + s] = a[s] + (b ? b[s] : 0);
    }
    double r = (double)median_of(v, n);
    free(v);
    return r;
}

static const uint64_t *pick_compute(const struct tp_step_wl_rank *q, int which)
{
    return which ? q->backward_ns : q->forward_ns;
}
static const uint64_t *pick_optimizer(const struct tp_step_wl_rank *q, int which)
{
    return which ? NULL : q->optimizer_ns;
}
static const uint64_t *pick_step(const struct tp_step_wl_rank *q, int which)
{
    return which ? NULL : q->step_ns;
}

uint64_t tp_step_workload_compute_ns(const struct tp_step_workload *w)
{
    double m = median_ranks(w, w->nranks, pick_compute);
    return isfinite(m) ? (uint64_t)m : w->ranks[0].forward_ns[0] + w->ranks[0].backward_ns[0];
}

/* a gradient's collective: what DDP's buckets and FSDP's shards sum by */
static bool grad_kind(const struct tp_step_wl_coll *c)
{
    return !c->mapped && (c->kind == TP_ALLREDUCE || c->kind == TP_REDUCE_SCATTER);
}

uint64_t tp_step_workload_grad_bytes(const struct tp_step_workload *w)
{
    uint64_t most = 0;
    for (size_t l = 0; l < w->nlayouts; l++) {
        uint64_t sum = 0;
        for (size_t i = 0; i < w->layouts[l].n; i++)
            if (grad_kind(&w->layouts[l].coll[i]))
                sum += w->layouts[l].coll[i].bytes;
        most = sum > most ? sum : most;
    }
    return most;
}

double tp_step_workload_overlap(const struct tp_step_workload *w)
{
    double hid = 0, all = 0;
    for (size_t k = 0; k < w->nranks; k++) {
        const struct tp_step_wl_rank *q = &w->ranks[k];
        if (!q->duration_ns)
            continue;
        for (size_t s = 0; s < w->nsteps; s++) {
            const struct tp_step_wl_layout *L = &w->layouts[w->layout[s]];
            uint64_t end = q->forward_ns[s] + q->backward_ns[s];
            for (size_t i = 0; i < L->n; i++) {
                if (!grad_kind(&L->coll[i]))
                    continue;
                size_t at = w->at[s] + i;
                uint64_t t0 = q->start_ns && q->start_ns[at] != TP_STEP_WL_NONE ? q->start_ns[at]
                                                                                : q->ready_ns[at];
                uint64_t d = q->duration_ns[at];
                if (d == TP_STEP_WL_NONE)
                    continue;
                uint64_t left = end > t0 ? end - t0 : 0;
                hid += (double)(d < left ? d : left);
                all += (double)d;
            }
        }
    }
    return all > 0 ? hid / all : NAN;
}

uint64_t tp_step_workload_slice_ns(const struct tp_step_workload *w, size_t rank, uint64_t step,
                                   size_t i)
{
    size_t s = (size_t)(step % w->nsteps);
    const struct tp_step_wl_rank *q = &w->ranks[rank % w->nranks];
    const uint64_t *r = &q->ready_ns[w->at[s]];
    size_t n = w->at[s + 1] - w->at[s];
    uint64_t end = q->forward_ns[s] + q->backward_ns[s], prev = 0;
    for (size_t j = 0; j < i && j < n; j++)
        prev = r[j] > prev ? r[j] : prev;
    prev = prev < end ? prev : end;
    uint64_t now = i < n ? (r[i] < end ? r[i] : end) : end;
    return now > prev ? now - prev : 0;
}

/* ---- the replay's side ---- */

struct tp_coll_shape tp__step_wl_shape(const struct tp_step_wl_coll *c, int n)
{
    struct tp_coll_shape sh = tp_coll_shape_for(c->kind, TP_F32, n, c->replay_bytes);
    if (sh.count == 0) /* below one element a rank: the least the kind moves */
        sh = tp_coll_shape_for(c->kind, TP_F32, n, 4 * (uint64_t)n);
    return sh;
}

/* a figure the document can hold: NaN (nothing to compare) as null */
static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}
static json_t *ns(double v)
{
    return isfinite(v) ? tp_metric(v, "ns") : json_null();
}

/* the replayed ranks' median compute (series.compute of run0), rank i's
 * alone when i >= 0 */
static double replayed_compute(const json_t *run0, int i)
{
    const json_t *comp = json_object_get(json_object_get(run0, "series"), "compute");
    size_t n = 0;
    for (size_t s = 0; s < json_array_size(comp); s++)
        n += json_array_size(json_array_get(comp, s));
    uint64_t *v = n ? malloc(n * sizeof *v) : NULL;
    size_t k = 0;
    for (size_t s = 0; v && s < json_array_size(comp); s++)
        for (size_t q = 0; q < json_array_size(json_array_get(comp, s)); q++)
            if (i < 0 || (size_t)i == q)
                v[k++] = (uint64_t)json_number_value(json_array_get(json_array_get(comp, s), q));
    double m = k ? (double)median_of(v, k) : NAN;
    free(v);
    return m;
}

/* What the comm thread ran in the first step of plan p: kind and bytes per
 * call, in order; a call that replays a recorded kind coll calls otherwise
 * says the recorded one, the model's gradient and an added call are
 * marked. */
static json_t *ran_json(const struct tp__step_plan *p, const struct tp_step_wl_layout *L)
{
    json_t *a = json_array();
    for (size_t j = 0; j < p->nran; j++) {
        const struct tp__step_call *c = &p->call[j];
        json_t *e = json_pack("{s:s, s:I}", "kind", tp_coll_name(p->ran[j].kind), "bytes",
                              (json_int_t)p->ran[j].bytes);
        if (c->from >= 0 && L->coll[c->from].mapped)
            json_object_set_new(e, "recorded_kind", json_string(L->coll[c->from].name));
        if (c->from < 0)
            json_object_set_new(e, "added", json_true());
        if (c->real)
            json_object_set_new(e, "model_gradient", json_true());
        json_array_append_new(a, e);
    }
    return a;
}

json_t *tp__step_workload_compare(const struct rank *r, const json_t *run0)
{
    const struct tp_step_workload *w = r->o->workload;
    size_t l0 = w->layout[0];
    const struct tp__step_plan *p0 = &r->plans[l0];
    const struct tp_step_wl_layout *L0 = &w->layouts[l0];
    /* the first step's gradient allreduces as replayed, in order (DDP's
     * buckets; the model's own where the replay added it; not a barrier) */
    json_t *bytes = json_array();
    unsigned nbuckets = 0;
    for (size_t j = 0; j < p0->nran; j++) {
        const struct tp__step_call *c = &p0->call[j];
        if (c->from < 0 || (c->kind == TP_ALLREDUCE && !L0->coll[c->from].mapped)) {
            json_array_append_new(bytes, json_integer((json_int_t)p0->ran[j].bytes));
            nbuckets++;
        }
    }
    json_t *layouts = json_array();
    for (size_t l = 0; l < r->nplans; l++)
        if (r->plans[l].ran_step >= 0)
            json_array_append_new(layouts,
                                  json_pack("{s:I, s:I, s:o}", "layout", (json_int_t)l, "step",
                                            (json_int_t)r->plans[l].ran_step, "collectives",
                                            ran_json(&r->plans[l], &w->layouts[l])));
    size_t m = (size_t)r->n;
    double compute = replayed_compute(run0, -1);
    double step = tp_json_num(json_object_get(run0, "step_time"), "p50");
    double rec_compute = median_ranks(w, m, pick_compute);
    double rec_step = median_ranks(w, m, pick_step);
    json_t *rec = json_pack("{s:o, s:o}", "compute_p50", ns(rec_compute), "optimizer_p50",
                            ns(median_ranks(w, m, pick_optimizer)));
    json_t *rep = json_pack("{s:o, s:o}", "compute_p50", ns(compute), "step_p50", ns(step));
    json_t *ratio =
        json_pack("{s:o}", "compute", num(rec_compute > 0 ? compute / rec_compute : NAN));
    if (isfinite(rec_step)) {
        json_object_set_new(rec, "step_p50", ns(rec_step));
        json_object_set_new(ratio, "step", num(rec_step > 0 ? step / rec_step : NAN));
    }
    json_object_set_new(rep, "bucket_bytes", bytes);
    json_object_set_new(rep, "collectives", ran_json(p0, L0));
    json_object_set_new(rep, "layouts", layouts);
    json_object_set_new(rep, "elements", json_string("float32 sums"));
    /* each replayed rank beside the recorded rank whose compute it replays */
    json_t *ranks = json_array();
    for (int i = 0; i < r->n; i++) {
        const struct tp_step_wl_rank *q = &w->ranks[(size_t)i % w->nranks];
        struct tp_step_workload one = *w; /* the median of that rank alone */
        one.ranks = (struct tp_step_wl_rank *)q;
        one.nranks = 1;
        double rc = median_ranks(&one, 1, pick_compute), pc = replayed_compute(run0, i);
        json_array_append_new(ranks,
                              json_pack("{s:i, s:i, s:o, s:o, s:o}", "rank", i, "replays", q->rank,
                                        "recorded_compute_p50", ns(rc), "replayed_compute_p50",
                                        ns(pc), "compute_ratio", num(rc > 0 ? pc / rc : NAN)));
    }
    return json_pack("{s:s, s:i, s:I, s:I, s:I, s:o, s:o, s:o, s:o}", "source", w->source,
                     "version", w->version, "buckets", (json_int_t)nbuckets, "layouts",
                     (json_int_t)w->nlayouts, "recorded_ranks", (json_int_t)w->nranks, "recorded",
                     rec, "replayed", rep, "replayed_over_recorded", ratio, "ranks", ranks);
}
