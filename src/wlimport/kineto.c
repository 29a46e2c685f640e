/* A torch.profiler trace (export_chrome_trace: Kineto's object with
 * traceEvents, or the legacy profiler's bare list of events, as Debian's
 * torch 1.13 writes) as steps, times and, where the trace has them, bucket
 * sizes. Complete events ("ph": "X", ts and dur in microseconds) only:
 *
 * - steps: the ProfilerStep#N spans, else the spans between the ends of
 *   the Optimizer.step#... spans;
 * - in a step, the backward runs from the first autograd::engine::
 *   evaluate_function span to the end of the last; the forward from the
 *   step's first op to there; the optimizer is the Optimizer.step spans;
 * - the allreduces, in order: the calls (c10d::allreduce_, else
 *   record_param_comms, else the work below) give each bucket's readiness
 *   (the call's start, from the backward's start); the work (the NCCL
 *   kernels, gloo:all_reduce, nccl:all_reduce), matched to the calls in
 *   order, gives the allreduce's duration;
 * - bytes from record_param_comms' "In msg nelems" and "dtype" (torch
 *   2.x), the kernels' same args, or the call's "Input Dims" and "Input
 *   type" (record_shapes=True); torch 1.13's CPU profiler records none.
 *
 * Steps whose allreduce count differs from the last step's (DDP rebuilds
 * its buckets after step 1) are left out, and so are the last steps whose
 * allreduces have no work span: the profile ended before the work did. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tp/json.h"
#include "wlimport_int.h"

enum kind { K_OTHER, K_STEP, K_OPT, K_AUTOGRAD, K_CALL, K_SIZES, K_WORK };

/* event names: the first row that matches (exact, or a prefix) */
static const struct {
    const char *name;
    bool prefix;
    enum kind kind;
    const char *backend; /* what the name says of the backend */
} names[] = {
    {"ProfilerStep#", true, K_STEP, NULL},
    {"Optimizer.step#", true, K_OPT, NULL},
    {"autograd::engine::evaluate_function", true, K_AUTOGRAD, NULL},
    {"c10d::allreduce_", false, K_CALL, NULL},
    {"record_param_comms", false, K_SIZES, NULL},
    {"ncclDevKernel_AllReduce", true, K_WORK, "nccl"},
    {"ncclKernel_AllReduce", true, K_WORK, "nccl"},
    {"gloo:all_reduce", false, K_WORK, "gloo"},
    {"nccl:all_reduce", false, K_WORK, "nccl"},
};

/* torch's dtype names: args' "dtype" exactly, "Input type" as a part */
static const struct {
    const char *torch, *name;
    size_t size;
} dtypes[] = {
    {"BFloat16", "bfloat16", 2},
    {"Half", "float16", 2},
    {"Float8_e4m3fn", "float8e4m3", 1},
    {"Float8_e5m2", "float8e5m2", 1},
    {"Float", "float32", 4},
    {"float", "float32", 4},
    {"Double", "float64", 8},
    {"double", "float64", 8},
    {"Long", "int64", 8},
    {"long", "int64", 8},
    {"Int", "int32", 4},
    {"int", "int32", 4},
    {"Char", "int8", 1},
    {"Byte", "uint8", 1},
};

struct span {
    int64_t t0, t1;
};

struct ev {
    int64_t ts, end; /* ns */
    enum kind kind;
    int row;
    const json_t *args;
};

static bool detect(const char *text, size_t len)
{
    (void)len;
    text += strspn(text, " \t\r\n");
    return (*text == '{' && strstr(text, "\"traceEvents\"")) ||
           (*text == '[' && strstr(text, "\"ph\""));
}

static int dtype_of(const char *s, bool part)
{
    for (size_t i = 0; s && i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (part ? strstr(s, dtypes[i].torch) != NULL : strcmp(s, dtypes[i].torch) == 0)
            return (int)i;
    return -1;
}

/* an allreduce's bytes from its args: "In msg nelems" and "dtype", or
 * "Input Dims" and "Input type"; 0 when they are not there */
static uint64_t bytes_of(const json_t *args, int *dt)
{
    const json_t *n = json_object_get(args, "In msg nelems");
    int t = dtype_of(tp_json_str(args, "dtype"), false);
    if (json_is_integer(n) && json_integer_value(n) > 0 && t >= 0) {
        *dt = t;
        return (uint64_t)json_integer_value(n) * dtypes[t].size;
    }
    const json_t *dims = json_array_get(json_object_get(args, "Input Dims"), 0);
    t = dtype_of(json_string_value(json_array_get(json_object_get(args, "Input type"), 0)), true);
    while (json_is_array(json_array_get(dims, 0))) /* a list of tensors: the first */
        dims = json_array_get(dims, 0);
    if (!json_is_array(dims) || json_array_size(dims) == 0 || t < 0)
        return 0;
    uint64_t e = 1;
    for (size_t i = 0; i < json_array_size(dims); i++) {
        const json_t *d = json_array_get(dims, i);
        if (!json_is_integer(d) || json_integer_value(d) < 0)
            return 0;
        e *= (uint64_t)json_integer_value(d);
    }
    *dt = t;
    return e * dtypes[t].size;
}

/* record_param_comms of another collective (its "Collective name") */
static bool other_collective(const json_t *args)
{
    const char *c = tp_json_str(args, "Collective name");
    return c && strcmp(c, "allreduce") != 0 && strcmp(c, "all_reduce") != 0;
}

static int cmp_ev(const void *a, const void *b)
{
    const struct ev *x = a, *y = b;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static int cmp_span(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

/* the events of kind k (and row, when row >= 0) in [t0, t1) into out */
static size_t pick(const struct ev *e, size_t n, enum kind k, int row, int64_t t0, int64_t t1,
                   const struct ev **out)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (e[i].kind == k && (row < 0 || e[i].row == row) && e[i].ts >= t0 && e[i].ts < t1)
            out[m++] = &e[i];
    return m;
}

static int read_trace(const char *path, const char *text, size_t len, struct tp_wlimport_part *p,
                      json_t *warnings, tp_error *err)
{
    json_error_t je;
    json_t *d = json_loadb(text, len, 0, &je);
    if (!d)
        return tp_error_set(err, TP_EUSAGE, "%s:%d:%d: not JSON: %s", path, je.line, je.column,
                            je.text);
    const json_t *list = json_is_array(d) ? d : json_object_get(d, "traceEvents");
    const json_t *dist = json_object_get(d, "distributedInfo");
    size_t n = json_array_size(list), ne = 0, ns = 0;
    struct ev *e = calloc(n ? n : 1, sizeof *e);
    struct span *steps = calloc(n ? n : 1, sizeof *steps);
    const struct ev **sel = calloc(n ? n : 1, sizeof *sel),
                    **work = calloc(n ? n : 1, sizeof *work);
    int rc = 0;
    if (!e || !steps || !sel || !work)
        rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
    if (rc == 0 && !json_is_array(list))
        rc = tp_error_set(err, TP_EUSAGE, "%s: no list of trace events (traceEvents)", path);
    bool has_row[sizeof names / sizeof names[0]] = {0};
    int64_t first = INT64_MAX;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const json_t *x = json_array_get(list, i);
        const char *ph = tp_json_str(x, "ph"), *name = tp_json_str(x, "name");
        const json_t *ts = json_object_get(x, "ts"), *dur = json_object_get(x, "dur");
        if (!ph || strcmp(ph, "X") != 0 || !name || !json_is_number(ts) || !json_is_number(dur))
            continue;
        struct ev v = {.ts = llround(json_number_value(ts) * 1000),
                       .kind = K_OTHER,
                       .row = -1,
                       .args = json_object_get(x, "args")};
        v.end = v.ts + llround(json_number_value(dur) * 1000);
        for (size_t r = 0; r < sizeof names / sizeof names[0]; r++)
            if (names[r].prefix ? strncmp(name, names[r].name, strlen(names[r].name)) == 0
                                : strcmp(name, names[r].name) == 0) {
                v.kind = names[r].kind;
                v.row = (int)r;
                break;
            }
        if (v.kind == K_SIZES && other_collective(v.args))
            continue;
        if (v.row >= 0)
            has_row[v.row] = true;
        if (v.kind == K_STEP)
            steps[ns++] = (struct span){v.ts, v.end};
        else if (v.ts < first)
            first = v.ts;
        e[ne++] = v;
    }
    if (rc == 0)
        qsort(e, ne, sizeof *e, cmp_ev);
    /* without ProfilerStep spans: from one optimizer step's end to the next's */
    if (rc == 0 && ns == 0) {
        int64_t t = first;
        for (size_t i = 0; i < ne; i++)
            if (e[i].kind == K_OPT) {
                steps[ns++] = (struct span){t, e[i].end};
                t = e[i].end;
            }
        if (ns)
            tp__wlimport_warn(warnings, path, 0,
                              "no ProfilerStep#N spans: the steps end at each Optimizer.step");
    } else if (rc == 0) {
        qsort(steps, ns, sizeof *steps, cmp_span);
    }
    if (rc == 0 && ns == 0)
        rc = tp_error_set(err, TP_EUSAGE,
                          "%s: no step in the trace: no ProfilerStep#N span (torch.profiler's "
                          "schedule with prof.step() writes them) and no Optimizer.step span",
                          path);
    /* the calls: c10d::allreduce_, else record_param_comms, else the work */
    enum kind ck = K_CALL;
    int wrow = -1;
    for (size_t r = 0; r < sizeof names / sizeof names[0]; r++)
        if (names[r].kind == K_WORK && has_row[r] && wrow < 0)
            wrow = (int)r;
    bool any_call = false, any_sizes = false;
    for (size_t r = 0; r < sizeof names / sizeof names[0]; r++) {
        any_call |= names[r].kind == K_CALL && has_row[r];
        any_sizes |= names[r].kind == K_SIZES && has_row[r];
    }
    if (!any_call)
        ck = any_sizes ? K_SIZES : K_WORK;
    int crow = ck == K_WORK ? wrow : -1;
    /* per step: its calls and whether it has a backward */
    size_t *count = calloc(ns ? ns : 1, sizeof *count);
    bool *usable = calloc(ns ? ns : 1, sizeof *usable);
    if (rc == 0 && (!count || !usable))
        rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
    size_t nb = 0;
    for (size_t s = 0; rc == 0 && s < ns; s++) {
        usable[s] = pick(e, ne, K_AUTOGRAD, -1, steps[s].t0, steps[s].t1, sel) > 0;
        count[s] = pick(e, ne, ck, crow, steps[s].t0, steps[s].t1, sel);
        if (usable[s])
            nb = count[s]; /* the last step's count is the job's */
    }
    if (rc == 0 && nb == 0)
        rc = tp_error_set(err, TP_EUSAGE,
                          "%s: no allreduce in the trace's steps (c10d::allreduce_, "
                          "record_param_comms, gloo:all_reduce, nccl:all_reduce, "
                          "ncclKernel_AllReduce*, ncclDevKernel_AllReduce*): not a DDP job?",
                          path);
    if (rc == 0 && nb > 1024)
        rc = tp_error_set(err, TP_EUSAGE, "%s: %zu allreduces a step: over 1024 buckets", path, nb);
    size_t kept = 0, firstkept = ns;
    for (size_t s = 0; rc == 0 && s < ns; s++) {
        usable[s] = usable[s] && count[s] == nb;
        if (usable[s] && firstkept == ns)
            firstkept = s;
        kept += usable[s];
    }
    if (rc == 0 && kept < ns)
        tp__wlimport_warn(warnings, path, 0,
                          "%zu of %zu steps left out: no backward, or another count of "
                          "allreduces than the last step's %zu (DDP rebuilds its buckets after "
                          "the first step)",
                          ns - kept, ns, nb);
    /* the work, matched to the calls in order from the first kept step. A
     * profile can end before the last allreduces' work does: gloo completes
     * the future DDP waits on before it ends its span, so the step, and the
     * profile, can end first and the span is lost. The steps of the calls
     * without work are then left out, when others remain; else the
     * durations are */
    bool timed = wrow >= 0;
    if (rc == 0 && timed) {
        size_t nw = pick(e, ne, K_WORK, wrow, steps[firstkept].t0, INT64_MAX, work);
        size_t ncall = 0, cut = 0;
        for (size_t s = firstkept; s < ns; s++) {
            ncall += count[s];
            cut += ncall > nw && usable[s];
        }
        if (ncall > nw && cut < kept) {
            tp__wlimport_warn(warnings, path, 0,
                              "the last %zu of %zu allreduce calls have no %s span (the profile "
                              "ended before their work did): the last %zu step%s left out",
                              ncall - nw, ncall, names[wrow].name, cut, cut == 1 ? "" : "s");
            ncall = 0;
            for (size_t s = firstkept; s < ns; s++) {
                ncall += count[s];
                usable[s] = usable[s] && ncall <= nw;
            }
            kept -= cut;
        } else if (ncall > nw) {
            tp__wlimport_warn(warnings, path, 0,
                              "%zu %s spans for %zu allreduce calls: no allreduce durations", nw,
                              names[wrow].name, ncall);
            timed = false;
        }
    }
    if (rc == 0)
        rc = tp__wlimport_alloc(p, kept, (unsigned)nb, true, false, timed, path, err);
    /* bytes: from the sizes events, the work's args or the calls' shapes */
    uint64_t *bytes = calloc(nb ? nb : 1, sizeof *bytes);
    int *dt = calloc(nb ? nb : 1, sizeof *dt);
    bool have_bytes = bytes && dt;
    size_t ci = 0, k = 0; /* the first kept step's first call's index among all calls */
    for (size_t s = 0; rc == 0 && s < ns; s++) {
        size_t m = pick(e, ne, ck, crow, steps[s].t0, steps[s].t1, sel);
        if (s < firstkept || !usable[s]) {
            ci += s >= firstkept ? m : 0;
            continue;
        }
        int64_t bw0 = INT64_MAX, bw1 = 0, f0 = steps[s].t1;
        for (size_t i = 0; i < ne; i++) {
            if (e[i].ts < steps[s].t0 || e[i].ts >= steps[s].t1 || e[i].kind == K_STEP)
                continue;
            if (e[i].ts < f0)
                f0 = e[i].ts;
            if (e[i].kind == K_AUTOGRAD) {
                bw0 = e[i].ts < bw0 ? e[i].ts : bw0;
                bw1 = e[i].end > bw1 ? e[i].end : bw1;
            }
            if (e[i].kind == K_OPT)
                p->optimizer_ns[k] += (uint64_t)(e[i].end - e[i].ts);
        }
        uint64_t last = 0;
        for (unsigned b = 0; b < nb; b++, ci++) {
            uint64_t r = sel[b]->ts > bw0 ? (uint64_t)(sel[b]->ts - bw0) : 0;
            p->ready_ns[k * nb + b] = r;
            last = r > last ? r : last;
            if (p->allreduce_ns)
                p->allreduce_ns[k * nb + b] = (uint64_t)(work[ci]->end - work[ci]->ts);
            int t = -1;
            uint64_t by = bytes_of(sel[b]->args, &t);
            if (!by && any_sizes && ck != K_SIZES) { /* the record_param_comms inside the call */
                for (size_t i = 0; i < ne && !by; i++)
                    if (e[i].kind == K_SIZES && e[i].ts >= sel[b]->ts && e[i].ts <= sel[b]->end)
                        by = bytes_of(e[i].args, &t);
            }
            if (!by && p->allreduce_ns)
                by = bytes_of(work[ci]->args, &t);
            if (!by)
                have_bytes = false;
            else if (have_bytes) {
                bytes[b] = by;
                dt[b] = t;
            }
        }
        p->forward_ns[k] = bw0 > f0 ? (uint64_t)(bw0 - f0) : 0;
        p->backward_ns[k] = (uint64_t)(bw1 - bw0) > last ? (uint64_t)(bw1 - bw0) : last;
        p->step_ns[k] = (uint64_t)(steps[s].t1 - steps[s].t0);
        k++;
    }
    if (rc == 0 && have_bytes) {
        p->bytes = bytes;
        p->dtype = calloc(nb, sizeof *p->dtype);
        if (!p->dtype)
            rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
        for (unsigned b = 0; rc == 0 && b < nb; b++)
            p->dtype[b] = dtypes[dt[b]].name;
        bytes = NULL;
    }
    if (rc == 0) {
        p->skipped = (unsigned)(ns - kept);
        const char *be = tp_json_str(dist, "backend");
        snprintf(p->backend, sizeof p->backend, "%s",
                 be                                 ? be
                 : wrow >= 0 && names[wrow].backend ? names[wrow].backend
                                                    : "");
        const json_t *ws = json_object_get(dist, "world_size");
        if (json_is_integer(ws) && json_integer_value(ws) > 0)
            p->world_size = (unsigned)json_integer_value(ws);
        for (size_t i = 0; i < ne && !p->world_size; i++) {
            const json_t *g = json_object_get(e[i].args, "Group size");
            if (e[i].kind == K_SIZES && json_is_integer(g) && json_integer_value(g) > 0)
                p->world_size = (unsigned)json_integer_value(g);
        }
    }
    free(bytes);
    free(dt);
    free(count);
    free(usable);
    free(e);
    free(steps);
    free(sel);
    free(work);
    json_decref(d);
    return rc;
}

const struct tp__wlimport_format tp__wlimport_kineto = {
    .name = "kineto",
    .what = "a torch.profiler trace (Chrome trace events)",
    .detect = detect,
    .read = read_trace,
};
