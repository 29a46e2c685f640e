/* The collective calls of a scanned trace (trace_int.h), sorted once and
 * swept, never searched pair by pair:
 *
 * 1. the process's CPU communication spans, sorted by thread and start,
 *    become clusters: a span nested in the open cluster's outermost span
 *    on its thread joins it (c10d op > record_param_comms > nccl:*), any
 *    other starts one; gloo's spans that start no cluster are work, not
 *    calls (gloo runs the collective on its own threads);
 * 2. the kind, the sizes and the group of a cluster come from its members
 *    by the order of trust: the c10d op's name, record_param_comms'
 *    Collective name and In/Out msg nelems, the backend annotation's name
 *    and Input Dims (its input), the c10d op's Input Dims;
 * 3. GPU work: a kernel's launch (same correlation) inside a cluster's
 *    span on the launching thread, else the kernel's External id equal to
 *    a member's; a gpu_user_annotation by External id. The work is the
 *    first linked event's start to the last one's end; the kernel's args
 *    fill what the CPU side did not say;
 * 4. calls without GPU work take gloo's work spans of their kind in
 *    order (their time, and their Input Dims where the call has no size);
 *    where the trace has no call of that kind, each work span is its own
 *    call. */
#include <stdlib.h>
#include <string.h>

#include "trace_int.h"

struct ref { /* an id to a call */
    uint64_t id;
    size_t call;
};

static int cmp_cev(const void *a, const void *b)
{
    const struct tp__wl_cev *x = *(const struct tp__wl_cev *const *)a,
                            *y = *(const struct tp__wl_cev *const *)b;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1;               /* the outer first */
    return x->role < y->role ? -1 : x->role > y->role; /* a c10d op before its parts */
}

static int cmp_ref(const void *a, const void *b)
{
    const struct ref *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_launch(const void *a, const void *b)
{
    const struct tp__wl_launch *x = a, *y = b;
    return x->corr < y->corr ? -1 : x->corr > y->corr;
}

static int cmp_call_time(const void *a, const void *b)
{
    const struct tp__wl_call *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->thread < y->thread ? -1 : x->thread > y->thread;
}

static int cmp_cev_time(const void *a, const void *b)
{
    const struct tp__wl_cev *x = *(const struct tp__wl_cev *const *)a,
                            *y = *(const struct tp__wl_cev *const *)b;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* what a member says, where the cluster does not know it yet: rank is the
 * trust of the source (lower wins) */
struct fill {
    int kind_rank, size_rank;
};

static void take_kind(struct tp__wl_call *c, struct fill *f, int kind, int rank)
{
    if (kind >= 0 && rank < f->kind_rank) {
        c->kind = (int16_t)kind;
        f->kind_rank = rank;
    }
}

static void take_size(struct tp__wl_call *c, struct fill *f, uint64_t in, uint64_t out,
                      const char *dtype, int rank)
{
    if ((in != TP_WL_UNSIZED || out != TP_WL_UNSIZED) && rank < f->size_rank) {
        c->in_b = in;
        c->out_b = out;
        f->size_rank = rank;
        if (dtype)
            c->dtype = dtype;
    }
}

/* a member's contribution, by the order of trust: the kind from the c10d
 * op's name (0), record_param_comms' Collective name (1), the backend
 * annotation's name (2), the kernel's (4); the sizes from record_param_comms'
 * In/Out msg nelems (1), the kernel's same args (2), the c10d op's two
 * tensors (3: the output and the input, so the group's size needs no
 * guess), the backend annotation's Input Dims (4: its input alone) */
static void member(struct tp__wl_call *c, struct fill *f, const struct tp__wl_cev *e)
{
    switch (e->role) {
    case TR_CALL:
        take_kind(c, f, e->kind, 0);
        if (e->out_first && e->dims_b[0] != TP_WL_UNSIZED && e->dims_b[1] != TP_WL_UNSIZED)
            take_size(c, f, e->dims_b[1], e->dims_b[0], e->dtype, 3);
        break;
    case TR_SIZES:
        take_kind(c, f, e->kind, 1);
        if (e->has_sizes)
            take_size(c, f, e->in_b, e->out_b, e->dtype, 1);
        break;
    case TR_BACKEND:
        take_kind(c, f, e->kind, 2);
        take_size(c, f, e->dims_b[0], TP_WL_UNSIZED, e->dtype, 4);
        break;
    default: /* kernels and GPU annotations */
        take_kind(c, f, e->kind, 4);
        if (e->has_sizes)
            take_size(c, f, e->in_b, e->out_b, e->dtype, 2);
        break;
    }
    if (c->group < 0 && e->group >= 0)
        c->group = e->group;
    if (!c->gsize && e->gsize)
        c->gsize = e->gsize;
    if (!c->dtype && e->dtype)
        c->dtype = e->dtype;
}

static void work(struct tp__wl_call *c, const struct tp__wl_cev *e)
{
    if (c->work0 == TP_WL_NONE || e->ts < c->work0)
        c->work0 = e->ts;
    if (c->work1 == TP_WL_NONE || e->end > c->work1)
        c->work1 = e->end;
}

/* the call on thread th whose span holds ts: calls sorted by (thread, ts) */
static ssize_t holding(const struct tp__wl_call *c, size_t n, uint32_t th, int64_t ts)
{
    size_t lo = 0, hi = n; /* the first call after (th, ts) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c[mid].thread < th || (c[mid].thread == th && c[mid].ts <= ts))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || c[lo - 1].thread != th || c[lo - 1].end < ts)
        return -1;
    return (ssize_t)(lo - 1);
}

int tp__wl_trace_link(const struct tp__wl_scan *s, uint64_t pid, struct tp__wl_call **out,
                      size_t *n, const char *path, tp_error *err)
{
    const struct tp__wl_cev **cpu = calloc(s->ncevs + 1, sizeof *cpu);
    const struct tp__wl_cev **gloo = calloc(s->ncevs + 1, sizeof *gloo);
    struct tp__wl_call *calls = calloc(s->ncevs + 1, sizeof *calls);
    struct ref *refs = calloc(s->ncevs + 1, sizeof *refs);
    struct tp__wl_launch *launch = malloc((s->nlaunches + 1) * sizeof *launch);
    if (!cpu || !gloo || !calls || !refs || !launch) {
        free(cpu), free(gloo), free(calls), free(refs), free(launch);
        return tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
    }
    size_t ncpu = 0, ngloo = 0, nc = 0, nrefs = 0;
    for (size_t i = 0; i < s->ncevs; i++) {
        const struct tp__wl_cev *e = &s->cevs[i];
        bool mine = s->threads[e->thread].pid == pid;
        if (mine && (e->role == TR_CALL || e->role == TR_SIZES || e->role == TR_BACKEND))
            cpu[ncpu++] = e;
    }
    qsort(cpu, ncpu, sizeof *cpu, cmp_cev);
    /* 1-2: clusters, by a sweep per thread */
    struct fill *fills = calloc(ncpu + 1, sizeof *fills);
    if (!fills) {
        free(cpu), free(gloo), free(calls), free(refs), free(launch);
        return tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
    }
    for (size_t i = 0; i < ncpu; i++) {
        const struct tp__wl_cev *e = cpu[i];
        struct tp__wl_call *open = nc ? &calls[nc - 1] : NULL;
        bool inside = open && open->thread == e->thread && e->ts >= open->ts && e->end <= open->end;
        if (!inside && e->role == TR_BACKEND && e->gloo) {
            gloo[ngloo++] = e; /* gloo's work, on its own thread */
            continue;
        }
        if (!inside) {
            open = &calls[nc++];
            *open = (struct tp__wl_call){.ts = e->ts,
                                         .end = e->end,
                                         .in_b = TP_WL_UNSIZED,
                                         .out_b = TP_WL_UNSIZED,
                                         .work0 = TP_WL_NONE,
                                         .work1 = TP_WL_NONE,
                                         .group = -1,
                                         .thread = e->thread,
                                         .kind = -1};
            fills[nc - 1] = (struct fill){99, 99};
        } else if (e->role == TR_BACKEND && e->gloo) {
            work(open, e); /* gloo run inline in the call */
        }
        member(open, &fills[nc - 1], e);
        open->named = open->named || !(e->role == TR_SIZES && e->unnamed && !e->has_sizes);
        if (e->ext)
            refs[nrefs++] = (struct ref){e->ext, nc - 1};
    }
    /* 3: GPU work (calls are in (thread, ts) order here) */
    qsort(refs, nrefs, sizeof *refs, cmp_ref);
    if (s->nlaunches) /* (NULL when the trace has none: not for memcpy) */
        memcpy(launch, s->launches, s->nlaunches * sizeof *launch);
    qsort(launch, s->nlaunches, sizeof *launch, cmp_launch);
    for (size_t i = 0; i < s->ncevs; i++) {
        const struct tp__wl_cev *e = &s->cevs[i];
        if (e->role != TR_KERNEL && e->role != TR_GPU_ANN)
            continue;
        ssize_t at = -1;
        if (e->role == TR_KERNEL && e->corr) {
            struct tp__wl_launch key = {.corr = e->corr};
            const struct tp__wl_launch *l =
                bsearch(&key, launch, s->nlaunches, sizeof *launch, cmp_launch);
            if (l && s->threads[l->thread].pid == pid)
                at = holding(calls, nc, l->thread, l->ts);
        }
        /* older Kineto gives a kernel its own correlation as External id:
         * no CPU op's id then, so no link by it */
        if (at < 0 && e->ext && e->ext != e->corr) {
            struct ref key = {.id = e->ext};
            const struct ref *r = bsearch(&key, refs, nrefs, sizeof *refs, cmp_ref);
            if (r)
                at = (ssize_t)r->call;
        }
        if (at < 0)
            continue;
        struct tp__wl_call *c = &calls[at];
        if (e->role == TR_KERNEL) {
            if (!c->kernel) { /* the first kernel: annotations' times no longer count */
                c->work0 = c->work1 = TP_WL_NONE;
                c->kernel = true;
            }
            work(c, e);
            member(c, &fills[at], e);
        } else if (!c->kernel) {
            work(c, e);
        }
    }
    /* 4: gloo's work in order, per kind */
    qsort(calls, nc, sizeof *calls, cmp_call_time); /* fills are no longer used */
    qsort(gloo, ngloo, sizeof *gloo, cmp_cev_time);
    for (int k = 0; k < TP_WL_NKINDS; k++) {
        size_t w = 0, have = 0;
        for (size_t i = 0; i < nc; i++)
            have += calls[i].kind == k;
        for (size_t i = 0; i < nc && w < ngloo; i++) {
            if (calls[i].kind != k || calls[i].work0 != TP_WL_NONE)
                continue;
            while (w < ngloo && gloo[w]->kind != k)
                w++;
            if (w == ngloo)
                break;
            struct tp__wl_call *c = &calls[i];
            work(c, gloo[w]);
            if (c->in_b == TP_WL_UNSIZED && c->out_b == TP_WL_UNSIZED) { /* its Input Dims */
                c->in_b = gloo[w]->dims_b[0];
                c->dtype = c->dtype ? c->dtype : gloo[w]->dtype;
            }
            w++;
        }
        if (have)
            continue;
        for (size_t i = 0; i < ngloo; i++) /* no calls of this kind: the work is the call */
            if (gloo[i]->kind == k) {
                struct tp__wl_call *c = &calls[nc++];
                *c = (struct tp__wl_call){.ts = gloo[i]->ts,
                                          .end = gloo[i]->end,
                                          .group = gloo[i]->group,
                                          .gsize = gloo[i]->gsize,
                                          .thread = gloo[i]->thread,
                                          .kind = (int16_t)k,
                                          .work0 = gloo[i]->ts,
                                          .work1 = gloo[i]->end,
                                          .named = true,
                                          .in_b = gloo[i]->dims_b[0],
                                          .out_b = TP_WL_UNSIZED,
                                          .dtype = gloo[i]->dtype};
            }
    }
    qsort(calls, nc, sizeof *calls, cmp_call_time);
    free(cpu), free(gloo), free(refs), free(launch), free(fills);
    *out = calls;
    *n = nc;
    return 0;
}
