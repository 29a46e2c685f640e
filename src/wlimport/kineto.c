/* A torch.profiler trace (export_chrome_trace: Kineto's object with
 * traceEvents, or the legacy profiler's bare list of events), plain or
 * gzip, of any size, as one rank's steps and collectives. The scan
 * (trace_scan.c) keeps what matters; the link (trace_link.c) makes the
 * collective calls and their work; this row picks the process, the steps
 * and their phases, and puts each call in its step:
 *
 * - the process: the one with the most ProfilerStep#N spans (others are
 *   named in a warning and left out); its step thread, the one holding
 *   them; without any, a step ends at each Optimizer.step span's end;
 * - a step's compute starts at its first CPU op (or its first call);
 *   the backward runs from its first autograd evaluate_function span to
 *   the end of its last; the forward from the compute's start to there;
 *   the optimizer is the sum of its Optimizer.step spans; GPU copies of
 *   these (gpu_user_annotation) never count;
 * - a call belongs to the step whose span holds its start; its readiness
 *   and its work's start are from the step's compute start;
 * - the last steps whose calls have no work (the profile ended before
 *   their work did: gloo ends its span after DDP's future completes) are
 *   left out when others remain; other calls without work keep no start
 *   or duration (null in the file). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "trace_int.h"

static bool detect(const char *text, size_t len)
{
    (void)len;
    text += strspn(text, " \t\r\n");
    return (*text == '{' && strstr(text, "\"traceEvents\"")) ||
           (*text == '[' && strstr(text, "\"ph\""));
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_span(const void *a, const void *b)
{
    const struct tp__wl_span *x = a, *y = b;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* the process to read: most steps, else most calls, else most optimizer
 * steps; *others counts the other processes that had steps or calls */
static uint64_t pick_pid(const struct tp__wl_scan *s, size_t *others, uint64_t *other_pid)
{
    uint64_t best = 0;
    size_t best_score = 0, first = SIZE_MAX;
    *others = 0;
    for (size_t t = 0; t < s->nthreads; t++) {
        uint64_t pid = s->threads[t].pid;
        bool seen = false;
        for (size_t u = 0; u < t && !seen; u++)
            seen = s->threads[u].pid == pid;
        if (seen)
            continue;
        size_t steps = 0, calls = 0, opts = 0;
        for (size_t i = 0; i < s->nspans; i++)
            if (s->threads[s->spans[i].thread].pid == pid)
                steps += s->spans[i].role == TR_STEP, opts += s->spans[i].role == TR_OPT;
        for (size_t i = 0; i < s->ncevs; i++)
            calls += s->cevs[i].role == TR_CALL && s->threads[s->cevs[i].thread].pid == pid;
        size_t score = steps * 1000000 + calls * 10 + opts;
        if (!score)
            continue;
        if (score > best_score) {
            if (first != SIZE_MAX)
                (*others)++, *other_pid = best;
            best = pid;
            best_score = score;
            first = t;
        } else {
            (*others)++;
            *other_pid = pid;
        }
    }
    return best;
}

struct stepspan {
    int64_t t0, t1, id;
};

/* the steps: the step thread's ProfilerStep spans, or the ends of the
 * optimizer steps */
static int find_steps(const struct tp__wl_scan *s, uint64_t pid, struct stepspan **out, size_t *n,
                      uint32_t *thread, bool *by_opt)
{
    size_t best = 0;
    *thread = UINT32_MAX;
    for (size_t t = 0; t < s->nthreads; t++) {
        if (s->threads[t].pid != pid)
            continue;
        size_t k = 0;
        for (size_t i = 0; i < s->nspans; i++)
            k += s->spans[i].thread == t && s->spans[i].role == TR_STEP;
        if (k > best || *thread == UINT32_MAX) {
            *thread = (uint32_t)t;
            best = k > best ? k : best;
        }
    }
    struct stepspan *v = calloc(s->nspans + 1, sizeof *v);
    if (!v)
        return -1;
    size_t m = 0;
    *by_opt = best == 0;
    if (best) {
        for (size_t i = 0; i < s->nspans; i++)
            if (s->spans[i].thread == *thread && s->spans[i].role == TR_STEP)
                v[m++] = (struct stepspan){s->spans[i].ts, s->spans[i].end, s->spans[i].id};
    } else { /* from one optimizer step's end to the next's */
        int64_t t = INT64_MAX;
        for (size_t th = 0; th < s->nthreads; th++)
            if (s->threads[th].pid == pid && s->threads[th].nops && s->threads[th].ops[0] < t)
                t = s->threads[th].ops[0];
        for (size_t i = 0; i < s->nspans; i++) /* spans sorted by start */
            if (s->spans[i].role == TR_OPT && s->threads[s->spans[i].thread].pid == pid) {
                v[m++] =
                    (struct stepspan){t == INT64_MAX ? s->spans[i].ts : t, s->spans[i].end, -1};
                t = s->spans[i].end;
                *thread = s->spans[i].thread;
            }
    }
    for (size_t i = 1; i < m; i++) /* a few hundred steps: insertion sort */
        for (size_t j = i; j > 0 && v[j - 1].t0 > v[j].t0; j--) {
            struct stepspan x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    *out = v;
    *n = m;
    return 0;
}

/* the first of the sorted starts a[0..n) at or after t0 and before t1 */
static int64_t first_in(const int64_t *a, size_t n, int64_t t0, int64_t t1)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] < t0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && a[lo] < t1 ? a[lo] : TP_WL_NONE;
}

static int read_trace(struct tp__wl_in *in, struct tp_wlimport_part *p, json_t *warnings,
                      tp_error *err)
{
    const char *path = in->path;
    struct tp__wl_scan s;
    int rc = tp__wl_trace_scan(in, &s, warnings, err);
    if (rc) {
        tp__wl_trace_scan_free(&s);
        return rc;
    }
    if (s.nspans) /* (an empty array may be NULL: not for qsort) */
        qsort(s.spans, s.nspans, sizeof *s.spans, cmp_span);
    for (size_t t = 0; t < s.nthreads; t++)
        if (s.threads[t].nops)
            qsort(s.threads[t].ops, s.threads[t].nops, sizeof(int64_t), cmp_i64);
    size_t others = 0;
    uint64_t other = 0;
    uint64_t pid = pick_pid(&s, &others, &other);
    const char *pid_text = "";
    for (size_t t = 0; t < s.nthreads; t++)
        if (s.threads[t].pid == pid)
            pid_text = s.threads[t].pid_text;
    snprintf(p->who, sizeof p->who, "pid %s", pid_text);
    if (others) {
        const char *o = "";
        for (size_t t = 0; t < s.nthreads; t++)
            if (s.threads[t].pid == other)
                o = s.threads[t].pid_text;
        tp__wlimport_warn(warnings, path, 0,
                          "the trace holds %zu other process%s with steps or collectives (pid "
                          "%.40s%s): pid %.40s read, the others left out (import each process's "
                          "trace as a file of its own)",
                          others, others == 1 ? "" : "es", o, others > 1 ? ", ..." : "", pid_text);
    }
    struct stepspan *steps = NULL;
    size_t ns = 0;
    uint32_t sthread = 0;
    bool by_opt = false;
    if (find_steps(&s, pid, &steps, &ns, &sthread, &by_opt))
        rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
    if (rc == 0 && ns == 0) {
        size_t calls = 0;
        for (size_t i = 0; i < s.ncevs; i++)
            calls += s.cevs[i].role == TR_CALL || s.cevs[i].role == TR_BACKEND;
        rc = tp_error_set(err, TP_EUSAGE,
                          "%s: no step in the trace: no ProfilerStep#N span (torch.profiler's "
                          "schedule with prof.step() writes them) and no Optimizer.step span "
                          "(it holds %zu collective spans: an inference trace, or a training "
                          "loop profiled without prof.step()?)",
                          path, calls);
    }
    if (rc == 0 && by_opt)
        tp__wlimport_warn(warnings, path, 0,
                          "no ProfilerStep#N spans: the steps end at each Optimizer.step");
    struct tp__wl_call *calls = NULL;
    size_t nc = 0;
    if (rc == 0)
        rc = tp__wl_trace_link(&s, pid, &calls, &nc, path, err);
    /* the groups, in the scan's order (the calls' indexes) */
    for (size_t g = 0; rc == 0 && g < s.ngroups; g++) {
        const struct tp__wl_tgroup *G = &s.groups[g];
        int k = tp__wl_group(p, G->name, strlen(G->name), G->desc);
        if (k < 0)
            rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
        else {
            p->groups[k].size = G->size;
            if (G->nranks && (p->groups[k].ranks = malloc(G->nranks * sizeof(unsigned)))) {
                memcpy(p->groups[k].ranks, G->ranks, G->nranks * sizeof(unsigned));
                p->groups[k].nranks = G->nranks;
            }
        }
    }
    /* the phases' spans of the process, in time order */
    const struct tp__wl_thread *T = rc == 0 ? &s.threads[sthread] : NULL;
    size_t c = 0, a = 0, unknown = 0, outside = 0, negative = 0;
    for (size_t k = 0; rc == 0 && k < ns; k++) {
        int64_t t0 = steps[k].t0, t1 = steps[k].t1;
        while (c < nc && calls[c].ts < t0)
            c++, outside++;
        size_t c0 = c;
        while (c < nc && calls[c].ts < t1)
            c++;
        int64_t bw0 = TP_WL_NONE, bw1 = TP_WL_NONE, opt0 = TP_WL_NONE, opt1 = TP_WL_NONE;
        int64_t opt = 0;
        while (a < s.nspans && s.spans[a].ts < t0)
            a++;
        for (size_t i = a; i < s.nspans && s.spans[i].ts < t1; i++) {
            const struct tp__wl_span *x = &s.spans[i];
            if (s.threads[x->thread].pid != pid)
                continue;
            if (x->role == TR_AUTOGRAD) {
                bw0 = bw0 == TP_WL_NONE || x->ts < bw0 ? x->ts : bw0;
                bw1 = bw1 == TP_WL_NONE || x->end > bw1 ? x->end : bw1;
            } else if (x->role == TR_OPT) {
                opt += x->end - x->ts;
                opt0 = opt0 == TP_WL_NONE ? x->ts : opt0;
                opt1 = x->end;
            }
        }
        int64_t f0 = first_in(T->ops, T->nops, t0, t1);
        if (f0 == TP_WL_NONE)
            f0 = t0;
        if (c > c0 && calls[c0].ts < f0)
            f0 = calls[c0].ts;
        if (bw0 == TP_WL_NONE) /* no backward: the compute runs to the optimizer */
            bw0 = bw1 = opt0 != TP_WL_NONE ? opt0 : t1;
        if (bw0 < f0)
            f0 = bw0;
        struct tp_wlimport_step *st = tp__wl_add_step(p);
        if (!st) {
            rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
            break;
        }
        st->id = steps[k].id;
        st->t0_ns = f0;
        st->forward_ns = bw0 - f0;
        st->backward_ns = bw1 - bw0;
        st->optimizer_ns = opt;
        st->step_ns = t1 - t0;
        for (size_t i = c0; i < c; i++) {
            const struct tp__wl_call *x = &calls[i];
            if (x->kind < 0) {
                unknown += x->named; /* an unnamed wait is no call at all */
                continue;
            }
            struct tp_wlimport_coll *q = tp__wl_add_coll(p);
            if (!q) {
                rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
                break;
            }
            st = &p->steps[p->nsteps - 1];
            st->n++;
            q->kind = x->kind;
            unsigned n = x->gsize;
            if (!n && x->group >= 0)
                n = s.groups[x->group].size;
            if (!n && (x->group < 0 || strcmp(s.groups[x->group].name, "0") == 0))
                n = s.world_size;
            q->bytes = tp__wl_size(x->kind, x->in_b, x->out_b, n);
            if (q->bytes == TP_WL_UNSIZED && x->kind == TP_WL_BARRIER)
                q->bytes = 0;
            q->dtype = x->dtype;
            q->group = x->group;
            q->ready_ns = x->ts - f0;
            if (x->work0 != TP_WL_NONE) {
                q->start_ns = x->work0 - f0;
                q->dur_ns = x->work1 - x->work0;
                if (q->start_ns < 0) {
                    negative++;
                    q->start_ns = 0;
                }
            }
            q->phase = x->ts < bw0                                           ? TP_WL_PHASE_FORWARD
                       : x->ts < bw1                                         ? TP_WL_PHASE_BACKWARD
                       : opt0 != TP_WL_NONE && x->ts >= opt0 && x->ts < opt1 ? TP_WL_PHASE_OPTIMIZER
                                                                             : TP_WL_PHASE_OTHER;
        }
    }
    if (rc == 0 && unknown)
        tp__wlimport_warn(warnings, path, 0,
                          "%zu collective calls of a kind a workload file cannot hold (gather, "
                          "scatter, or a call no span names) left out",
                          unknown);
    if (rc == 0 && negative)
        tp__wlimport_warn(warnings, path, 0,
                          "%zu collectives' work started before their step's compute (the GPU's "
                          "clock against the CPU's?): taken as starting with it",
                          negative);
    for (; c < nc; c++)
        outside++;
    if (rc == 0 && outside)
        tp__wlimport_warn(warnings, path, 0,
                          "%zu collective calls outside the profiled steps (before the first or "
                          "after the last) left out",
                          outside);
    /* the profile's end: steps at the end whose calls have no work */
    size_t lacking = 0, with = 0; /* an empty call (0 bytes) has no work to lack */
    for (size_t i = 0; rc == 0 && i < p->ncolls; i++)
        if (p->colls[i].bytes != 0)
            p->colls[i].dur_ns == TP_WL_NONE ? lacking++ : with++;
    if (rc == 0 && lacking && with) {
        size_t cut = 0; /* the last steps holding every call without work */
        size_t k = p->nsteps, seen = 0;
        while (k > 0 && seen < lacking) {
            k--;
            const struct tp_wlimport_step *st = &p->steps[k];
            for (size_t i = 0; i < st->n; i++)
                seen += p->colls[st->first + i].dur_ns == TP_WL_NONE &&
                        p->colls[st->first + i].bytes != 0;
            cut++;
        }
        bool tail = true; /* every call before those steps has work */
        for (size_t i = 0; i < p->steps[k].first; i++)
            tail = tail && (p->colls[i].dur_ns != TP_WL_NONE || p->colls[i].bytes == 0);
        if (tail && k > 0) {
            tp__wlimport_warn(warnings, path, 0,
                              "the last %zu of %zu collective calls have no work (no kernel, GPU "
                              "annotation or gloo work span: the profile ended before their work "
                              "did): the last %zu step%s left out",
                              lacking, lacking + with, cut, cut == 1 ? "" : "s");
            p->ncolls = p->steps[k].first;
            p->nsteps = k;
            p->skipped += (unsigned)cut;
        } else {
            tp__wlimport_warn(warnings, path, 0,
                              "%zu of %zu collective calls have no work in the trace (no kernel, "
                              "GPU annotation or gloo work span linked: GPU events not captured, "
                              "or an empty call): their start and duration are null",
                              lacking, lacking + with);
        }
    }
    if (rc == 0 && p->ncolls == 0)
        rc = tp_error_set(err, TP_EUSAGE,
                          "%s: no collective in the trace's %zu step%s (%s): a single-GPU job? A "
                          "workload replays a distributed job's collectives",
                          path, p->nsteps, p->nsteps == 1 ? "" : "s", p->who);
    if (rc == 0) {
        p->timed = true;
        p->rank = s.rank;
        p->world_size = s.world_size;
        snprintf(p->backend, sizeof p->backend, "%s", s.backend[0] ? s.backend : s.seen_backend);
        snprintf(p->version, sizeof p->version, "%s", s.version);
        if (!p->world_size)
            for (size_t g = 0; g < s.ngroups; g++)
                p->world_size = s.groups[g].size > p->world_size ? s.groups[g].size : p->world_size;
    }
    free(calls);
    free(steps);
    tp__wl_trace_scan_free(&s);
    return rc;
}

const struct tp__wlimport_format tp__wlimport_kineto = {
    .name = "kineto",
    .what = "a torch.profiler trace (Chrome trace events)",
    .detect = detect,
    .read = read_trace,
};
