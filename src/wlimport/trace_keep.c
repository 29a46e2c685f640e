/* What the scan of a torch.profiler trace keeps of each complete event
 * (trace_int.h), in compact arrays sized by what matters, never by the
 * trace:
 *
 * - CPU spans (cat cpu_op, user_annotation, Operator, or none: the legacy
 *   profiler's list): ProfilerStep#N, Optimizer.step#..., autograd's
 *   evaluate_function; the c10d:: collective ops, record_param_comms
 *   (never a Work's wait(), which torch 2.x records as one too), the
 *   backends' annotations (nccl:*, gloo:*, ...); every other CPU span only
 *   as its start on its thread (where a step's first op is);
 * - GPU events: communication kernels (NCCL's and RCCL's names, or a
 *   kernel whose args name a collective) and the backends'
 *   gpu_user_annotation spans; other kernels, copies and annotations never;
 * - runtime calls that launch a kernel: correlation, time, thread.
 *
 * A collective event's sizes come from its args (In/Out msg nelems with
 * dtype; the first two tensors of Input Dims with Input type) and its
 * group from Process Group Name/Description/Ranks. A value that is not a
 * count or a time that fits is refused naming the event; a negative
 * duration leaves the event out, said. */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "trace_int.h"

uint64_t tp__wl_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h | (1ull << 63);
}

bool tp__wl_whole(const char *s, size_t n, uint64_t *v)
{
    uint64_t x = 0;
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (x > (UINT64_MAX - d) / 10)
            return false;
        x = x * 10 + d;
    }
    *v = x;
    return true;
}

static int thread_of(struct tp__wl_scan *s, const char *pid, const char *tid, uint32_t *out)
{
    uint64_t p = 0, q = 0;
    size_t pl = strlen(pid), tl = strlen(tid);
    if (!tp__wl_whole(pid, pl, &p))
        p = tp__wl_hash(pid, pl);
    if (!tp__wl_whole(tid, tl, &q))
        q = tp__wl_hash(tid, tl);
    for (size_t i = s->nthreads; i-- > 0;) /* few threads; the last ones are hot */
        if (s->threads[i].pid == p && s->threads[i].tid == q) {
            *out = (uint32_t)i;
            return 0;
        }
    struct tp__wl_thread *th = tp__wl_grow((void **)&s->threads, &s->nthreads, sizeof *th);
    if (!th)
        return -1;
    th->pid = p;
    th->tid = q;
    snprintf(th->pid_text, sizeof th->pid_text, "%s", pid);
    *out = (uint32_t)(s->nthreads - 1);
    return 0;
}

static bool prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

/* "nccl:", "gloo:", ... : a backend's annotation; *gloo when the span is the
 * work itself (a backend that runs collectives on CPU threads) */
static bool backend_name(const char *name, bool *gloo)
{
    static const struct {
        const char *prefix;
        bool cpu_work;
    } backends[] = {{"nccl:", false}, {"rccl:", false}, {"hccl:", false}, {"xccl:", false},
                    {"ucc:", false},  {"gloo:", true},  {"mpi:", true}};
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
        if (prefix(name, backends[i].prefix)) {
            *gloo = backends[i].cpu_work;
            return true;
        }
    return false;
}

static bool is_any(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(s, *list) == 0)
            return true;
    return false;
}

/* the groups: name to index, the ranks text parsed once */
int32_t tp__wl_trace_group(struct tp__wl_scan *s, const char *name, const char *desc,
                           const char *ranks, size_t rlen, uint32_t size)
{
    size_t i = 0;
    while (i < s->ngroups && strcmp(s->groups[i].name, name) != 0)
        i++;
    if (i == s->ngroups) {
        struct tp__wl_tgroup *b = realloc(s->groups, (s->ngroups + 1) * sizeof *b);
        if (!b)
            return -1;
        s->groups = b;
        memset(&b[i], 0, sizeof b[i]);
        snprintf(b[i].name, sizeof b[i].name, "%s", name);
        s->ngroups++;
    }
    struct tp__wl_tgroup *g = &s->groups[i];
    if (desc && desc[0] && !g->desc[0])
        snprintf(g->desc, sizeof g->desc, "%s", desc);
    if (size && !g->size)
        g->size = size;
    if (ranks && rlen && !g->ranks) { /* "[0, 1, 2]" */
        size_t cap = 0;
        for (size_t k = 0; k < rlen; k++)
            cap += ranks[k] == ',';
        g->ranks = calloc(cap + 1, sizeof *g->ranks);
        for (size_t k = 0; g->ranks && k < rlen;) {
            if (!isdigit((unsigned char)ranks[k])) {
                k++;
                continue;
            }
            unsigned long v = 0;
            while (k < rlen && isdigit((unsigned char)ranks[k]) && v < (1ul << 24))
                v = v * 10 + (unsigned long)(ranks[k++] - '0');
            if (g->nranks <= cap)
                g->ranks[g->nranks++] = (unsigned)v;
        }
        if (!g->size)
            g->size = g->nranks;
    }
    return (int32_t)i;
}

static void bytes_of(const struct tp__wl_event *c, struct tp__wl_cev *e)
{
    size_t esz = tp__wl_torch_dtype(c->dtype, strlen(c->dtype), &e->dtype);
    const uint64_t U = TP_WL_UNSIZED;
    e->in_b = e->out_b = e->dims_b[0] = e->dims_b[1] = U;
    if (esz && (c->has_in || c->has_out)) {
        e->in_b = c->has_in && c->in_n <= (U - 1) / esz ? c->in_n * esz : U;
        e->out_b = c->has_out && c->out_n <= (U - 1) / esz ? c->out_n * esz : U;
        e->has_sizes = e->in_b != U || e->out_b != U;
    }
    for (int k = 0; k < 2 && k < c->nitype; k++) {
        const char *nm = NULL;
        size_t sz = tp__wl_torch_dtype(c->itype[k], strlen(c->itype[k]), &nm);
        if (sz && c->dims_state[k] == 2 && c->dims[k] <= (U - 1) / sz) {
            e->dims_b[k] = c->dims[k] * sz;
            if (!e->dtype)
                e->dtype = nm;
        }
    }
}

int tp__wl_trace_keep(struct tp__wl_scan *s, const struct tp__wl_event *c, const char *path,
                      json_t *warnings, tp_error *err)
{
    if (strcmp(c->ph, "X") != 0 || !c->name_len)
        return 0;
    s->events++;
    unsigned long long seq = (unsigned long long)s->events;
    if (c->bad)
        return tp_error_set(err, TP_EUSAGE, "%s: event %llu (%.60s): %s %s: not %s", path, seq,
                            c->name, c->bad, c->badv,
                            strcmp(c->bad, "ts") == 0 || strcmp(c->bad, "dur") == 0
                                ? "a time in µs that fits 64 bits of ns"
                                : "a count");
    if (!c->has_ts || !c->has_dur)
        return 0;
    static const char *const gpu_cats[] = {"kernel", "Kernel", "gpu_memcpy",          "gpu_memset",
                                           "Memcpy", "Memset", "gpu_user_annotation", NULL};
    static const char *const rt_cats[] = {"cuda_runtime", "cuda_driver", "Runtime",
                                          "hip_runtime",  "hip_driver",  NULL};
    static const char *const cpu_cats[] = {"cpu_op", "user_annotation", "Operator", "", NULL};
    bool gpu = is_any(c->cat, gpu_cats), rt = is_any(c->cat, rt_cats);
    bool cpu = is_any(c->cat, cpu_cats);
    if (!gpu && !rt && !cpu)
        return 0; /* python_function, instants, overhead, ... */
    uint32_t th;
    if (thread_of(s, c->pid, c->tid, &th))
        return tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
    if (c->dur < 0) {
        s->skipped_neg++;
        if (s->skipped_neg <= 3)
            tp__wlimport_warn(warnings, path, 0,
                              "event %llu (%.60s) has a negative duration (%" PRId64
                              " ns): left out",
                              seq, c->name, c->dur);
        return 0;
    }
    if (c->ts > INT64_MAX - c->dur)
        return tp_error_set(err, TP_EUSAGE, "%s: event %llu (%.60s): ts + dur overflows", path, seq,
                            c->name);
    int64_t end = c->ts + c->dur;
    if (rt) {
        if (!c->corr || !strstr(c->name, "Launch"))
            return 0;
        struct tp__wl_launch *l =
            tp__wl_grow((void **)&s->launches, &s->nlaunches, sizeof *l);
        if (!l)
            return tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
        *l = (struct tp__wl_launch){.corr = c->corr, .ts = c->ts, .thread = th};
        return 0;
    }
    enum tp__wl_role role;
    bool gloo = false, ann = strcmp(c->cat, "gpu_user_annotation") == 0, unnamed = false;
    int kind = -1;
    if (gpu) {
        bool kern = strcmp(c->cat, "kernel") == 0 || strcmp(c->cat, "Kernel") == 0;
        if (ann && backend_name(c->name, &gloo) && (kind = tp_wlimport_kind_of(c->name)) >= 0)
            role = TR_GPU_ANN;
        else if (kern && (c->coll != -2 || strstr(c->name, "nccl") || strstr(c->name, "rccl") ||
                          strstr(c->name, "msccl") || strstr(c->name, "Nccl")))
            role = TR_KERNEL, kind = c->coll >= 0 ? c->coll : tp_wlimport_kind_of(c->name);
        else
            return 0;
    } else {
        struct tp__wl_thread *T = &s->threads[th];
        if (!prefix(c->name, "ProfilerStep#")) { /* a start on its thread */
            int64_t *o = tp__wl_grow((void **)&T->ops, &T->nops, sizeof *o);
            if (!o)
                return tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
            *o = c->ts;
        }
        if (prefix(c->name, "ProfilerStep#") || prefix(c->name, "Optimizer.step#") ||
            prefix(c->name, "autograd::engine::evaluate_function")) {
            struct tp__wl_span *sp = tp__wl_grow((void **)&s->spans, &s->nspans, sizeof *sp);
            if (!sp)
                return tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
            *sp = (struct tp__wl_span){.ts = c->ts,
                                       .end = end,
                                       .thread = th,
                                       .id = -1,
                                       .role = prefix(c->name, "ProfilerStep#")     ? TR_STEP
                                               : prefix(c->name, "Optimizer.step#") ? TR_OPT
                                                                                    : TR_AUTOGRAD};
            uint64_t id;
            const char *num = c->name + strlen("ProfilerStep#");
            if (sp->role == TR_STEP && tp__wl_whole(num, strlen(num), &id) && id < INT64_MAX)
                sp->id = (int64_t)id;
            return 0;
        }
        if (strcmp(c->name, "record_param_comms") == 0 && c->wait)
            return 0; /* torch 2.x records a Work's wait() as record_param_comms too */
        if (strcmp(c->name, "record_param_comms") == 0)
            role = TR_SIZES, kind = c->coll >= 0 ? c->coll : -1, unnamed = c->coll == -2;
        else if (prefix(c->name, "c10d::"))
            role = TR_CALL, kind = tp_wlimport_kind_of(c->name);
        else if (backend_name(c->name, &gloo) && (kind = tp_wlimport_kind_of(c->name)) >= 0) {
            role = TR_BACKEND;
            if (!s->seen_backend[0])
                snprintf(s->seen_backend, sizeof s->seen_backend, "%.*s",
                         (int)strcspn(c->name, ":"), c->name);
        } else
            return 0;
        if (role == TR_CALL && kind < 0 &&
            !(prefix(c->name, "c10d::gather") || prefix(c->name, "c10d::scatter") ||
              prefix(c->name, "c10d::allgather") || prefix(c->name, "c10d::reduce")))
            return 0; /* another c10d op (c10d::wait, monitored_barrier's parts, ...) */
    }
    struct tp__wl_cev *e = tp__wl_grow((void **)&s->cevs, &s->ncevs, sizeof *e);
    if (!e)
        return tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
    *e = (struct tp__wl_cev){.ts = c->ts,
                             .end = end,
                             .ext = c->ext,
                             .corr = c->corr,
                             .thread = th,
                             .kind = (int16_t)kind,
                             .role = (uint8_t)role,
                             .gloo = gloo,
                             .group = -1,
                             .gsize = c->gsize,
                             .seq = (uint32_t)(seq > UINT32_MAX ? UINT32_MAX : seq)};
    e->out_first = role == TR_CALL && (strstr(c->name, "_base_") || strstr(c->name, "_base"));
    bytes_of(c, e);
    e->unnamed = unnamed;
    if (c->pg[0]) {
        e->group = tp__wl_trace_group(s, c->pg, c->pgdesc, c->ranks, c->ranks_len, c->gsize);
        if (e->group < 0)
            return tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
    }
    return 0;
}
