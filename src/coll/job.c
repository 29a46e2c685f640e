/* `trainpath coll` as one library call: the checks of the options that need
 * no rank, the config every rank must share, and the job run on a group
 * (include/tp/group.h): the sweep once per backend of the list, a table
 * row per size as it is measured, and the count of wrong elements as the
 * verdict. What a backend can and cannot do is its row's; nothing here
 * names one. */
#include <string.h>

#include "kind_int.h"
#include "tp/counters.h"
#include "tp/group.h"
#include "tp/clock.h"
#include "tp/log.h"
#include "tp/progress.h"
#include "tp/trace.h"
#include "tp/units.h"

/* The first backend of l that needs a GPU, or NULL. */
static const struct tp_coll_backend *with_gpu(const struct tp_coll_backends *l)
{
    for (int i = 0; i < l->n; i++)
        if (l->row[i]->gpu_need)
            return l->row[i];
    return NULL;
}

/* The option that makes the job open a GPU ("--backend nccl", "--mem
 * cuda"), into buf; NULL when it needs none. */
static const char *gpu_what(const struct tp_coll_job *j, char *buf, size_t cap)
{
    const struct tp_coll_backend *b = with_gpu(&j->backends);
    if (b)
        snprintf(buf, cap, "--backend %s", b->name);
    else if (j->bench.mem_cuda)
        snprintf(buf, cap, "--mem cuda");
    else
        return NULL;
    return buf;
}

/* When every backend of l chooses its own algorithm, the one to name (the
 * last of them in table order); NULL when one runs trainpath's. */
static const char *chooser(const struct tp_coll_backends *l)
{
    const char *label = NULL;
    for (int t = 0; tp_coll_backend_table[t]; t++)
        for (int i = 0; i < l->n; i++)
            if (l->row[i] == tp_coll_backend_table[t]) {
                if (!l->row[i]->own_algo)
                    return NULL;
                label = l->row[i]->label;
            }
    return label;
}

int tp_coll_job_check(const struct tp_coll_job *j, const struct tp_group_opts *g, tp_error *err)
{
    const struct tp_coll_bench_opts *b = &j->bench;
    const struct tp_coll_backends *l = &j->backends;
    int rc = tp_coll_check_args(b->kind, b->dtype, b->op, b->exact, b->algo, err);
    if (rc)
        return rc;
    if (b->repro_check &&
        (!tp__coll_kinds[b->kind]->exact || !tp_dtype_is_float(b->dtype) || b->op != TP_SUM))
        return tp_error_set(err, TP_EUSAGE,
                            "--repro-check: allreduce with --redop sum of a float --dtype only");
    /* --repro-check sums its accumulators with trainpath's own allreduce */
    if (b->repro_check && (l->n != 1 || l->row[0]->own_algo))
        return tp_error_set(err, TP_EUSAGE, "--repro-check: runs on --backend trainpath");
    if (b->repro_check && b->mem_cuda)
        return tp_error_set(err, TP_EUSAGE, "--repro-check: runs with --mem host");
    const char *own = chooser(l);
    if (own && b->algo && strcmp(b->algo, "auto") != 0)
        return tp_error_set(err, TP_EUSAGE,
                            "--algo %s with --backend %s: %s chooses its own algorithm", b->algo,
                            l->arg, own);
    for (int i = 0; i < l->n; i++)
        if (b->exact && l->row[i]->no_exact)
            return tp_error_set(err, TP_EUSAGE, "--repro exact: runs on --backend trainpath (%s)",
                                l->row[i]->no_exact);
    if (l->n == 1 && l->row[0]->own_transport && g->comm.transport)
        return tp_error_set(err, TP_EUSAGE, "--transport with --backend %s: %s", l->row[0]->name,
                            l->row[0]->own_transport);
    for (int i = 0; i < l->n; i++)
        if (b->mem_cuda && l->row[i]->no_cuda)
            return tp_error_set(err, TP_EUSAGE, "--mem cuda with --backend %s: %s",
                                l->row[i]->name, l->row[i]->no_cuda);
    char what[64];
    if (g->gpu_device >= 0 && !gpu_what(j, what, sizeof what)) {
        const struct tp_coll_backend *gb = NULL;
        for (int t = 0; tp_coll_backend_table[t] && !gb; t++)
            if (tp_coll_backend_table[t]->gpu_need)
                gb = tp_coll_backend_table[t];
        return tp_error_set(err, TP_EUSAGE, "--gpu: only with --mem cuda or --backend %s",
                            gb ? gb->name : "?");
    }
    if (gpu_what(j, what, sizeof what) && !tp_gpu_built())
        return tp_error_set(err, TP_EUSAGE, "%s: %s", what, tp_gpu_build_line());
    if (b->chunk_bytes && b->chunk_bytes < 64)
        return tp_error_set(err, TP_EUSAGE, "--chunk: at least 64 bytes");
    /* every other rank waits out the delay in the collective: one as long
     * as --timeout fails them, not the network */
    if (b->inject_delay_ns && b->inject_delay_ns >= g->timeout_ns)
        return tp_error_set(err, TP_EUSAGE,
                            "--inject-delay %.3g s is not under --timeout %.3g s: the other "
                            "ranks would time out waiting for it",
                            (double)b->inject_delay_ns / 1e9, (double)g->timeout_ns / 1e9);
    /* an option the kind has no use for is refused, not ignored */
    const struct tp__coll_kind *k = tp__coll_kinds[b->kind];
    if (j->redop_given && !k->reduces)
        return tp_error_set(err, TP_EUSAGE, "--redop %s: %s reduces nothing", tp_redop_name(b->op),
                            k->name);
    /* a script that loops over the kinds gives every one the same --root:
     * said, not refused */
    if (j->root_given && !k->rooted)
        tp_log(TP_LOG_WARN, "--root %d: %s has no root (ignored)", b->root, k->name);
    return 0;
}

int tp_coll_job_check_group(const struct tp_coll_job *j, const struct tp_group_opts *g,
                            tp_error *err)
{
    const struct tp_coll_bench_opts *b = &j->bench;
    const struct tp__coll_kind *k = tp__coll_kinds[b->kind];
    bool local = !tp_boot_launched(g->launcher_name);
    int n = local ? g->nranks : 1;
    if (local && k->rooted && b->root >= n)
        return tp_error_set(err, TP_EUSAGE, "--root %d: not a rank (0..%d)", b->root, n - 1);
    /* a size below one element moves nothing: the sweep skips it (no row
     * of count 0), said here; a list of nothing but such sizes is refused */
    size_t small = 0;
    uint64_t last_small = 0;
    for (size_t i = 0; i < b->nsizes; i++)
        if (tp_coll_shape_for(b->kind, b->dtype, n, b->sizes[i]).count == 0) {
            small++;
            last_small = b->sizes[i];
        }
    if (small) {
        char a[32];
        size_t es = tp_dtype_size(b->dtype);
        bool blocks = k->in_blocks || k->out_blocks;
        size_t min = blocks ? es * (size_t)n : es;
        tp_fmt_size(last_small, a, sizeof a);
        if (small == b->nsizes)
            return tp_error_set(err, TP_EUSAGE,
                                "--sizes: %s is below one %s element%s (%zu bytes): nothing to "
                                "move",
                                b->nsizes == 1 ? a : "every size", tp_dtype_name(b->dtype),
                                blocks ? " per rank" : "", min);
        tp_log(TP_LOG_WARN, "--sizes: %zu size%s up to %s below one %s element%s (%zu bytes): "
               "skipped", small, small == 1 ? "" : "s", a, tp_dtype_name(b->dtype),
               blocks ? " per rank" : "", min);
    }
    /* with the local launcher the ranks are forked from this process and
     * nothing readies a backend on the way: one that is not ready now
     * (mpi: no MPI launcher started us) would fail on every rank */
    const struct tp_coll_backends *l = &j->backends;
    for (int i = 0; local && i < l->n; i++) {
        int rc = l->row[i]->ready ? l->row[i]->ready(err) : 0;
        if (rc < 0)
            return rc;
    }
    return 0;
}

json_t *tp_coll_job_config(const struct tp_coll_job *j, const struct tp_group_opts *g)
{
    const struct tp_coll_bench_opts *b = &j->bench;
    const struct tp_comm_opts *c = &g->comm;
    json_t *sizes = json_array();
    for (size_t i = 0; i < b->nsizes; i++)
        json_array_append_new(sizes, json_integer((json_int_t)b->sizes[i]));
    return json_pack("{s:s, s:o, s:s, s:s, s:s, s:i, s:I, s:I, s:I, s:I, s:s, s:b, s:s, s:s, "
                     "s:s, s:s, s:s, s:I, s:I, s:s, s:s*}",
                     "op", tp_coll_name(b->kind), "sizes", sizes, "dtype",
                     tp_dtype_name(b->dtype), "redop", tp_redop_name(b->op), "algo",
                     b->algo ? b->algo : "auto", "root", b->root, "iters", (json_int_t)b->iters,
                     "time_ns", (json_int_t)b->time_ns, "warmup", (json_int_t)b->warmup,
                     "chunk_bytes", (json_int_t)b->chunk_bytes, "repro",
                     b->exact ? "exact" : "plain", "repro_check", b->repro_check, "backend",
                     j->backends.arg ? j->backends.arg : "trainpath", "transport",
                     c->transport ? c->transport : "tcp", "provider",
                     c->provider ? c->provider : "", "intra", c->intra ? c->intra : "shm",
                     "shm_stores", c->shm_stores ? c->shm_stores : "auto", "timeout_ns",
                     (json_int_t)g->timeout_ns, "inject_delay_ns",
                     (json_int_t)b->inject_delay_ns, "mem", b->mem_cuda ? "cuda" : "host", "trace",
                     j->trace);
}

/* The job's state, the arg of every callback. */
struct run {
    struct tp_coll_job *j;
    const struct tp_group_opts *g;
    json_t *options;
    json_t *results; /* rank 0's */
    uint64_t wrong;
};

static json_t *config(void *arg, int nranks)
{
    struct run *r = arg;
    json_object_set_new(r->options, "ranks", json_integer(nranks));
    return json_incref(r->options);
}

static size_t arena_bytes(void *arg, int nranks)
{
    struct run *r = arg;
    return tp_coll_bench_arena_bytes(&r->j->bench, nranks);
}

static int ready(void *arg, tp_error *err)
{
    struct run *r = arg;
    const struct tp_coll_backends *l = &r->j->backends;
    for (int i = 0; i < l->n; i++) {
        int rc = l->row[i]->ready ? l->row[i]->ready(err) : 0;
        if (rc < 0)
            return rc;
    }
    return 0;
}

static void print_row(void *arg, size_t i, size_t n)
{
    (void)n;
    struct run *r = arg;
    tp_progress_hide(); /* the row starts at the margin; the line comes back below it */
    if (r->j->table)
        tp_coll_print_row(r->j->table, json_array_get(json_object_get(r->results, "sizes"), i));
}

/* --trace: rank 0 opens the timeline, a process per rank and a thread per
 * backend; the sweep adds the spans (tp_coll_bench_opts.trace). */
static int trace_begin(struct tp_coll_job *j, const struct tp_group *g, tp_error *err)
{
    struct tp_coll_bench_opts *b = &j->bench;
    int rc = tp_trace_begin(j->trace, &b->trace, err);
    for (int r = 0; rc == 0 && r < g->size; r++) {
        char name[300];
        snprintf(name, sizeof name, "rank %d (%s)", r, tp_boot_host(g->boot, r));
        tp_trace_process(b->trace, r, name);
        for (int k = 0; k < j->backends.n; k++)
            tp_trace_thread(b->trace, r, k, j->backends.row[k]->name);
    }
    b->trace_origin_ns = tp_now_ns();
    return rc;
}

/* Close the timeline: written when the run went well (rc 0), else dropped. */
static int trace_end(const struct tp_group *g, struct tp_coll_bench_opts *b, int rc,
                     tp_error *err)
{
    if (rc) {
        tp_trace_discard(b->trace);
        b->trace = NULL;
        return rc;
    }
    json_t *ranks = json_array();
    for (int r = 0; r < g->size; r++)
        json_array_append_new(
            ranks, json_pack("{s:i, s:s, s:I, s:I}", "rank", r, "host", tp_boot_host(g->boot, r),
                             "offset_ns", (json_int_t)tp_boot_clock_offset_ns(g->boot, r),
                             "uncertainty_ns", (json_int_t)(tp_boot_clock_rtt_ns(g->boot, r) / 2)));
    rc = tp_trace_end(b->trace,
                      json_pack("{s:s, s:s, s:s, s:o}", "tool", "trainpath coll", "clock",
                                "rank 0's, ns from its start of the sweep; each rank's offset "
                                "measured at start-up, uncertain by half the round trip it was "
                                "measured over",
                                "events", "every timed iteration (warm-up and the check run "
                                "left out); a thread per backend",
                                "ranks", ranks),
                      err);
    b->trace = NULL;
    return rc;
}

static int run(void *arg, const struct tp_group *g, json_t *results, tp_error *err)
{
    struct run *r = arg;
    struct tp_coll_job *j = r->j;
    struct tp_coll_bench_opts *b = &j->bench;
    const struct tp_coll_backends *l = &j->backends;
    FILE *table = g->rank == 0 ? j->table : NULL;
    b->gpu = g->gpu;
    if (table)
        tp_coll_print_header(table, j, r->g, g->comm);
    r->results = results;
    b->progress = print_row;
    b->progress_arg = r;
    bool mem_cuda = b->mem_cuda;
    int rc = 0;
    if (g->rank == 0 && j->trace)
        rc = trace_begin(j, g, err);
    /* rank 0 alone (the others are forked with the same job) */
    tp_progress_begin(g->rank == 0 && j->progress_line, "coll", (double)(b->nsizes * (size_t)l->n),
                      "sizes", 0);
    for (int k = 0; rc == 0 && k < l->n; k++) {
        uint64_t w = 0;
        b->backend = l->row[k];
        b->trace_tid = k;
        /* a device_memory backend works on GPU memory; the others where --mem says */
        b->mem_cuda = mem_cuda && !l->row[k]->device_memory;
        if (table && l->n > 1) {
            tp_progress_hide();
            fprintf(table, "# --backend %s%s\n", l->row[k]->name,
                    l->row[k]->device_memory || b->mem_cuda ? " (GPU memory)" : "");
        }
        rc = tp_coll_bench(g->comm, b, results, &w, err);
        r->wrong += w;
    }
    b->mem_cuda = mem_cuda;
    tp_progress_end();
    if (rc == 0 && table && l->n > 1)
        tp_coll_print_comparison(table, results, l);
    if (b->trace)
        rc = trace_end(g, b, rc, err);
    return rc;
}

/* Rank 0, the run over: the hosts' counters (tp_group_main's) under the
 * table. */
static void report(void *arg, json_t *results)
{
    struct run *r = arg;
    if (r->j->table)
        tp_ctr_print_results(r->j->table, results);
}

static int judge(void *arg, tp_error *err)
{
    struct run *r = arg;
    if (r->wrong > 0)
        return tp_error_set(err, TP_ECHECK, "%llu element(s) wrong (bit-exact check)",
                            (unsigned long long)r->wrong);
    return 0;
}

int tp_coll_main(struct tp_coll_job *j, const struct tp_group_opts *g, bool *speak,
                 tp_error *err)
{
    struct run r = {.j = j, .g = g, .options = tp_coll_job_config(j, g)};
    char what[64];
    const struct tp_coll_backend *gb = with_gpu(&j->backends);
    struct tp_group_job job = {.command = "coll", .options = r.options,
                               .gpu_what = gpu_what(j, what, sizeof what),
                               .gpu_need = gb ? gb->gpu_need : 0, .arg = &r,
                               .config = config, .arena_bytes = arena_bytes, .ready = ready,
                               .run = run, .judge = judge, .report = report};
    int rc = tp_group_main(g, &job, speak, err);
    json_decref(r.options);
    return rc;
}
