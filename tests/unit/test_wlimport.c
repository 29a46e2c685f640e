/* trainpath workload import (include/tp/wlimport.h), unit by unit. The
 * NCCL log fixtures under tests/fixtures/nccl/ (NCCL 2.18's lines with
 * [nranks=N], two ranks interleaved and a first step that differs; 2.4's
 * without [nranks=N]; 2.21's bf16 and fp8 and a step cut short; malformed
 * lines named by line; nothing usable) and logs written here for what real
 * logs hold (every kind, NUL bytes, an [nranks=N] that is not a count, an
 * RCCL version line); the period finding and NCCL's datatypes; small
 * torch.profiler traces written here, one per thing a real trace does that
 * the importer must get right (each of these failed on the importer before
 * workload format 2): the GPU's copies of CPU spans, the collective's work
 * on the GPU linked by correlation and never the CPU's enqueue, sizes on
 * the backend's annotation, RCCL's Generic kernels, ids beyond int64,
 * values that are not counts named, negative durations and timestamps,
 * two processes in one trace, unnamed record_param_comms, FSDP's kinds,
 * steps whose collectives differ, gzip and a BOM; and the whole import:
 * what it fills, assumes and refuses, several ranks lined up, an output
 * that is an input. The real public traces are tested against an
 * independent reader in tests/integration/wlimport/. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "tp/wlimport.h"
#include "tp_test.h"

#define FIXTURES TP_SOURCE_ROOT "/tests/fixtures/nccl"

/* whether one of the warnings holds every one of the parts (NULL-ended) */
static bool warned(const json_t *w, ...)
{
    for (size_t i = 0; i < json_array_size(w); i++) {
        const char *s = json_string_value(json_array_get(w, i));
        va_list ap;
        va_start(ap, w);
        bool all = true;
        for (const char *p = va_arg(ap, const char *); p; p = va_arg(ap, const char *))
            all = all && strstr(s, p) != NULL;
        va_end(ap);
        if (all)
            return true;
    }
    return false;
}

static void print_warnings(const json_t *w)
{
    for (size_t i = 0; i < json_array_size(w); i++)
        print_message("# warning: %s\n", json_string_value(json_array_get(w, i)));
}

static struct tp_wlimport_part *read_ok(const char *path, json_t *w)
{
    struct tp_wlimport_part *p = NULL;
    tp_error err = {0};
    int rc = tp_wlimport_read(path, "auto", &p, w, &err);
    if (rc)
        fail_msg("%s: %s", path, err.msg);
    return p;
}

/* step s's collective i */
static const struct tp_wlimport_coll *C(const struct tp_wlimport_part *p, size_t s, size_t i)
{
    assert_true(s < p->nsteps);
    assert_true(i < p->steps[s].n);
    return &p->colls[p->steps[s].first + i];
}

/* every step calls n collectives */
static void steps_of(const struct tp_wlimport_part *p, size_t nsteps, size_t n)
{
    TP_EQ_INT(p->nsteps, nsteps);
    for (size_t s = 0; s < p->nsteps; s++)
        TP_EQ_INT(p->steps[s].n, n);
}

static char dir[64];

static int setup(void **state)
{
    (void)state;
    return tp_test_mkdtemp(dir, sizeof dir, "tp_wlimport");
}

static int teardown(void **state)
{
    (void)state;
    return tp_test_rmtree(dir);
}

/* ---- NCCL and RCCL logs ---- */

static void ddp_two_ranks(void **state)
{
    (void)state;
    json_t *w = json_array();
    struct tp_wlimport_part *p = read_ok(FIXTURES "/ddp_2rank_v2.18.log", w);
    TP_EQ_STR(p->format, "nccl-log");
    steps_of(p, 5, 3); /* the first step (a broadcast, two allreduces) left out */
    TP_EQ_INT(C(p, 0, 0)->kind, TP_WL_ALLREDUCE);
    TP_EQ_INT(C(p, 0, 0)->bytes, 1071144);
    TP_EQ_INT(C(p, 0, 1)->bytes, 1050624);
    TP_EQ_INT(C(p, 4, 2)->bytes, 133120);
    TP_EQ_STR(C(p, 0, 0)->dtype, "float32");
    TP_EQ_INT(C(p, 0, 0)->ready_ns, TP_WL_NONE); /* a log has no times */
    assert_false(p->timed);
    TP_EQ_INT(p->skipped, 1);
    TP_EQ_INT(p->world_size, 2);
    TP_EQ_INT(p->rank, 0); /* its init line: comm 0x55d0c8000000 rank 0 nranks 2 */
    TP_EQ_STR(p->backend, "nccl");
    TP_EQ_STR(p->version, "2.18.3+cuda12.2");
    TP_EQ_INT(p->ngroups, 1);
    TP_EQ_STR(p->groups[0].name, "0x55d0c8000000");
    TP_EQ_INT(p->groups[0].size, 2);
    assert_true(warned(w, "ddp_2rank_v2.18.log", "the first step's 3 collectives left out", NULL));
    assert_true(warned(w, "2 processes in the log: n1 pid 4242 taken", NULL));
    tp_wlimport_part_free(p);
    json_decref(w);
}

static void old_format_without_nranks(void **state)
{
    (void)state;
    json_t *w = json_array();
    struct tp_wlimport_part *p = read_ok(FIXTURES "/nccl_v2.4_fp16.log", w);
    steps_of(p, 4, 2);
    TP_EQ_INT(C(p, 0, 0)->bytes, 2 * 1048576);
    TP_EQ_INT(C(p, 0, 1)->bytes, 2 * 524288);
    TP_EQ_STR(C(p, 3, 1)->dtype, "float16");
    TP_EQ_INT(p->skipped, 0);
    TP_EQ_INT(p->world_size, 0); /* not in these lines */
    TP_EQ_INT(p->rank, -1);
    TP_EQ_INT(json_array_size(w), 0);
    tp_wlimport_part_free(p);
    json_decref(w);
}

static void bf16_fp8_and_a_step_cut_short(void **state)
{
    (void)state;
    json_t *w = json_array();
    struct tp_wlimport_part *p = read_ok(FIXTURES "/nccl_v2.21_bf16_fp8.log", w);
    steps_of(p, 3, 3);
    TP_EQ_INT(C(p, 0, 0)->bytes, 2 * 4194304);
    TP_EQ_STR(C(p, 0, 0)->dtype, "bfloat16");
    TP_EQ_INT(C(p, 0, 1)->bytes, 1000000);
    TP_EQ_STR(C(p, 0, 1)->dtype, "float8e4m3");
    TP_EQ_INT(C(p, 0, 2)->bytes, 12345);
    TP_EQ_STR(C(p, 0, 2)->dtype, "float8e5m2");
    TP_EQ_INT(p->world_size, 8);
    assert_true(warned(w, "the last 1 collectives (a step cut short) left out", NULL));
    tp_wlimport_part_free(p);
    json_decref(w);
}

static void malformed_lines_named(void **state)
{
    (void)state;
    json_t *w = json_array();
    struct tp_wlimport_part *p = read_ok(FIXTURES "/malformed.log", w);
    steps_of(p, 3, 2);
    TP_EQ_INT(C(p, 0, 0)->bytes, 262144);
    TP_EQ_INT(C(p, 0, 1)->bytes, 16384);
    assert_true(warned(w, "malformed.log:4:", "after 'count'", NULL));
    assert_true(warned(w, "malformed.log:7:", "not an ncclDataType_t", NULL));
    assert_true(warned(w, "malformed.log:9:", "not an ncclDataType_t", NULL));
    TP_EQ_INT(json_array_size(w), 3);
    tp_wlimport_part_free(p);
    json_decref(w);
}

/* a collective line of pid 7 on comm c with [nranks=nr] (NULL: none) */
static int logline(char *out, size_t cap, const char *name, unsigned long count, int dt,
                   const char *c, const char *nr)
{
    char tail[64] = "";
    if (nr)
        snprintf(tail, sizeof tail, " [nranks=%s]", nr);
    return snprintf(out, cap,
                    "node1:7:9 [0] NCCL INFO %s: opCount 1 sendbuff 0x1 recvbuff 0x2 count %lu "
                    "datatype %d op 0 root 0 comm %s%s stream 0x3\n",
                    name, count, dt, c, tail);
}

/* FSDP and tensor parallelism in a log: every kind, two communicators, a
 * NUL byte in the middle, lines whose [nranks=N] is not a rank count, an
 * RCCL version line; the sizes by NCCL's count per kind */
static void log_of_every_kind(void **state)
{
    (void)state;
    char text[16384], *t = text;
    size_t left = sizeof text;
#define ADD(...)                                                                                   \
    do {                                                                                           \
        int k_ = logline(t, left, __VA_ARGS__);                                                    \
        t += k_;                                                                                   \
        left -= (size_t)k_;                                                                        \
    } while (0)
    t += snprintf(t, left,
                  "node1:7:7 [0] NCCL INFO RCCL version 2.18.3+hip6.0 HEAD:abc\n"
                  "node1:7:8 [0] NCCL INFO comm 0xdp rank 3 nranks 8 cudaDev 0 busId "
                  "1000 - Init COMPLETE\n");
    left = sizeof text - (size_t)(t - text);
    for (int s = 0; s < 3; s++) {
        ADD("AllGather", 1000, 9, "0xdp", NULL); /* 8 ranks from the init line */
        ADD("AllReduce", 4096, 9, "0xtp", "2");  /* tensor parallelism's */
        ADD("ReduceScatter", 500, 7, "0xdp", "8");
        ADD("Broadcast", 10, 4, "0xdp", "8");
        ADD("Send", 256, 7, "0xpp", "2");
        ADD("Recv", 256, 7, "0xpp", "2");
        if (s == 1) {
            ADD("AllReduce", 4096, 7, "0xtp", "-7");            /* not a count: left out */
            ADD("AllReduce", 4096, 7, "0xtp", "1000000000000"); /* past 2^24 ranks */
            ADD("Gather", 4096, 7, "0xtp", "2");                /* no kind of ours */
            *t++ = '\0'; /* a NUL byte: the lines after it are read */
            left--;
        }
    }
#undef ADD
    char path[256];
    FILE *f = fopen(tp_test_write(dir, "kinds.log", "", path, sizeof path), "wb");
    assert_non_null(f);
    fwrite(text, 1, (size_t)(t - text), f);
    fclose(f);
    json_t *w = json_array();
    struct tp_wlimport_part *p = read_ok(path, w);
    print_warnings(w);
    steps_of(p, 3, 6);
    static const int kinds[] = {TP_WL_ALLGATHER, TP_WL_ALLREDUCE, TP_WL_REDUCE_SCATTER,
                                TP_WL_BROADCAST, TP_WL_SEND,      TP_WL_RECV};
    static const uint64_t bytes[] = {8 * 1000 * 2, 4096 * 2, 8 * 500 * 4, 10 * 8, 1024, 1024};
    for (size_t s = 0; s < 3; s++)
        for (size_t i = 0; i < 6; i++) {
            TP_EQ_INT(C(p, s, i)->kind, kinds[i]);
            TP_EQ_INT(C(p, s, i)->bytes, bytes[i]);
        }
    TP_EQ_INT(p->ngroups, 3);
    TP_EQ_INT(C(p, 0, 0)->group, 0);
    TP_EQ_INT(C(p, 0, 1)->group, 1);
    TP_EQ_INT(p->world_size, 8);
    TP_EQ_INT(p->rank, 3);
    TP_EQ_STR(p->backend, "rccl");
    TP_EQ_STR(p->version, "2.18.3+hip6.0");
    assert_true(warned(w, "kinds.log:", "an [nranks=N] that is not a rank count", NULL));
    assert_true(warned(w, "1 NUL bytes in the log", NULL));
    assert_true(warned(w, "calls of a kind a workload file cannot hold (Gather", NULL));
    tp_wlimport_part_free(p);
    json_decref(w);
}

static void nothing_usable(void **state)
{
    (void)state;
    struct tp_wlimport_part *p = NULL;
    tp_error err = {0};
    TP_EQ_INT(tp_wlimport_read(FIXTURES "/nothing.log", "auto", &p, NULL, &err), TP_EUSAGE);
    assert_null(p);
    assert_non_null(strstr(err.msg, "nothing.log: no usable collective line"));
    /* a file of neither format; a format that does not fit; no such format */
    TP_EQ_INT(tp_wlimport_read(TP_SOURCE_ROOT "/meson.build", "auto", &p, NULL, &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "meson.build: neither a torch.profiler trace"));
    TP_EQ_INT(tp_wlimport_read(FIXTURES "/malformed.log", "kineto", &p, NULL, &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "malformed.log: not a torch.profiler trace"));
    TP_EQ_INT(tp_wlimport_read(FIXTURES "/malformed.log", "pcap", &p, NULL, &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "--from pcap: not a format (auto, kineto or nccl-log)"));
    TP_EQ_INT(tp_wlimport_read(FIXTURES, "auto", &p, NULL, &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "nccl: is a folder"));
}

static void kind_names(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int kind;
    } names[] = {
        {"c10d::allreduce_", TP_WL_ALLREDUCE},
        {"c10d::_allgather_base_", TP_WL_ALLGATHER},
        {"c10d::_reduce_scatter_base_", TP_WL_REDUCE_SCATTER},
        {"c10d::alltoall_base_", TP_WL_ALLTOALL},
        {"c10d::recv_any_source_", TP_WL_RECV},
        {"allgather_into_tensor_coalesced", TP_WL_ALLGATHER},
        {"reduce_scatter_tensor_coalesced", TP_WL_REDUCE_SCATTER},
        {"nccl:all_reduce", TP_WL_ALLREDUCE},
        {"nccl:_all_gather_base", TP_WL_ALLGATHER},
        {"nccl:all_to_all", TP_WL_ALLTOALL},
        {"nccl:send 0->1", TP_WL_SEND},
        {"gloo:broadcast", TP_WL_BROADCAST},
        {"ReduceScatter", TP_WL_REDUCE_SCATTER},
        {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", TP_WL_ALLREDUCE},
        {"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", TP_WL_ALLGATHER},
        {"ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)", -1},
        {"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)", -1},
        {"c10d::gather_", -1},
        {"wait", -1},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (tp_wlimport_kind_of(names[i].name) != names[i].kind)
            fail_msg("%s: kind %d, wanted %d", names[i].name, tp_wlimport_kind_of(names[i].name),
                     names[i].kind);
    }
    TP_EQ_STR(tp_wlimport_kind_name(TP_WL_REDUCE_SCATTER), "reduce-scatter");
    assert_null(tp_wlimport_kind_name(TP_WL_NKINDS));
}
static size_t period_of(const char *s, size_t *start, size_t *q)
{
    uint64_t k[64];
    size_t n = strlen(s);
    for (size_t i = 0; i < n; i++)
        k[i] = (uint64_t)s[i];
    *start = *q = 99;
    return tp_wlimport_period(k, n, start, q);
}

static void period_finding(void **state)
{
    (void)state;
    size_t s, q;
    TP_EQ_INT(period_of("ABCABCABC", &s, &q), 3);
    TP_EQ_INT(s, 0);
    TP_EQ_INT(q, 3);
    TP_EQ_INT(period_of("XYABCABCABC", &s, &q), 3); /* a first step that differs */
    TP_EQ_INT(s, 2);
    TP_EQ_INT(q, 3);
    TP_EQ_INT(period_of("BACABCABC", &s, &q), 2); /* the same buckets in another order */
    TP_EQ_INT(s, 3);
    TP_EQ_INT(q, 3);
    TP_EQ_INT(period_of("ABCABCAB", &s, &q), 2); /* cut short: the start stays at 0 */
    TP_EQ_INT(s, 0);
    TP_EQ_INT(q, 3);
    TP_EQ_INT(period_of("ABABAB", &s, &q), 3); /* the shortest period */
    TP_EQ_INT(q, 2);
    TP_EQ_INT(period_of("AAAA", &s, &q), 4); /* all alike: one bucket a step */
    TP_EQ_INT(q, 1);
    TP_EQ_INT(period_of("ABC", &s, &q), 0); /* one step: nothing repeats */
    TP_EQ_INT(period_of("ABCDABCE", &s, &q), 0);
    TP_EQ_INT(period_of("", &s, &q), 0);
    /* a long log: a first call that differs, then one bucket 300,000 times
     * (a walk back from the end per period, not a search over every start),
     * and 300,000 calls of which none repeats; a step of 4,097 collectives
     * is past the limit, so none is found */
    size_t n = 300000;
    uint64_t *k = malloc(n * sizeof *k);
    assert_non_null(k);
    for (size_t i = 0; i < n; i++)
        k[i] = i ? 7 : 8;
    TP_EQ_INT(tp_wlimport_period(k, n, &s, &q), n - 1);
    TP_EQ_INT(s, 1);
    TP_EQ_INT(q, 1);
    for (size_t i = 0; i < n; i++)
        k[i] = i;
    TP_EQ_INT(tp_wlimport_period(k, n, &s, &q), 0);
    for (size_t i = 0; i < 3 * 4097; i++)
        k[i] = i % 4097;
    TP_EQ_INT(tp_wlimport_period(k, 3 * 4097, &s, &q), 0);
    for (size_t i = 0; i < 3 * 4096; i++)
        k[i] = i % 4096;
    TP_EQ_INT(tp_wlimport_period(k, 3 * 4096, &s, &q), 3);
    TP_EQ_INT(q, 4096);
    free(k);
}

static void nccl_datatypes(void **state)
{
    (void)state;
    static const size_t size[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
    static const char *const name[] = {"int8",    "uint8",    "int32",      "uint32",
                                       "int64",   "uint64",   "float16",    "float32",
                                       "float64", "bfloat16", "float8e4m3", "float8e5m2"};
    for (int t = 0; t < 12; t++) {
        const char *n = NULL;
        TP_EQ_INT(tp_wlimport_nccl_dtype(t, &n), size[t]);
        TP_EQ_STR(n, name[t]);
    }
    const char *n = "x";
    TP_EQ_INT(tp_wlimport_nccl_dtype(12, &n), 0);
    assert_null(n);
    TP_EQ_INT(tp_wlimport_nccl_dtype(-1, NULL), 0);
}

/* ---- traces ---- */

/* a trace being written: events appended, then the file */
struct tr {
    char *buf;
    size_t n, cap;
};

static void ev(struct tr *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ev(struct tr *t, const char *fmt, ...)
{
    if (t->cap - t->n < 4096) {
        t->cap = t->cap ? 2 * t->cap : 65536;
        t->buf = realloc(t->buf, t->cap);
        assert_non_null(t->buf);
    }
    if (t->n)
        t->buf[t->n++] = ',';
    va_list ap;
    va_start(ap, fmt);
    t->n += (size_t)vsnprintf(t->buf + t->n, t->cap - t->n, fmt, ap);
    va_end(ap);
}

/* a complete event: ts and dur in µs as written (strings: fractions, big values) */
#define X(t, cat, name, ts, dur, pid, tid, args)                                                   \
    ev(t,                                                                                          \
       "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"ts\":%s,\"dur\":%s,\"pid\":%s,\"tid\":%s,"  \
       "\"args\":{%s}}",                                                                           \
       cat, name, ts, dur, pid, tid, args)

static char *num(char *b, long long v)
{
    sprintf(b, "%lld", v);
    return b;
}

/* write the trace (Kineto's object; dist: distributedInfo's members, or NULL) */
static void tr_write(struct tr *t, const char *dist, const char *name, char *path, size_t cap)
{
    size_t need = t->n + 512;
    char *text = malloc(need);
    assert_non_null(text);
    snprintf(text, need, "{\"schemaVersion\":1,%s%s%s\"traceEvents\":[%.*s]}",
             dist ? "\"distributedInfo\":{" : "", dist ? dist : "", dist ? "}," : "", (int)t->n,
             t->n ? t->buf : "");
    tp_test_write(dir, name, text, path, cap);
    free(text);
    free(t->buf);
    memset(t, 0, sizeof *t);
}

/* One rank of a torch 2.x job on NCCL, as Kineto writes it: `steps` steps,
 * each a forward (an op), a backward (autograd on thread 7) and an
 * optimizer step; the GPU's copies of ProfilerStep and Optimizer.step
 * (gpu_user_annotation); per step two collectives called from the
 * autograd thread: c10d op > record_param_comms (named, sized when
 * `sized`) > nccl:* (its Input Dims), launching a kernel (correlation)
 * whose name is NCCL's or RCCL's Generic with the collective in args.
 * Times in µs from base (clock: an offset the rank's clock is off by);
 * `late` µs of delay before rank's collectives. */
struct job {
    int rank, steps;
    long long base;
    bool sized, rccl;
    long late; /* µs this rank calls its collectives late */
    long sync; /* µs the kernels wait for the latest rank (the job's largest late) */
};

static void gpu_job(struct tr *t, const struct job *j)
{
    char a[64], b[64], args[512];
    long long corr = 1000 + 100000LL * j->rank;
    for (int s = 0; s < j->steps; s++) {
        long long t0 = j->base + s * 100000;
        char name[32];
        snprintf(name, sizeof name, "ProfilerStep#%d", 10 + s);
        X(t, "user_annotation", name, num(a, t0), "90000", "11", "11", "");
        X(t, "gpu_user_annotation", name, num(a, t0 + 300), "95000", "0", "20", ""); /* a copy */
        X(t, "cpu_op", "aten::linear", num(a, t0 + 100), "10000", "11", "11", "");
        X(t, "cpu_op", "autograd::engine::evaluate_function: AddmmBackward0", num(a, t0 + 20000),
          "40000", "11", "7", "");
        X(t, "user_annotation", "Optimizer.step#AdamW.step", num(a, t0 + 80000), "5000", "11", "11",
          "");
        X(t, "gpu_user_annotation", "Optimizer.step#AdamW.step", num(a, t0 + 80500), "9000", "0",
          "20", "");
        static const struct {
            const char *op, *coll, *ann, *kernel;
            long elems_in, elems_out;
        } c[2] = {
            {"c10d::_allgather_base_", "_allgather_base", "nccl:_all_gather_base",
             "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 250000, 1000000},
            {"c10d::_reduce_scatter_base_", "_reduce_scatter_base", "nccl:_reduce_scatter_base",
             "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
             1000000, 250000},
        };
        for (int k = 0; k < 2; k++) {
            long long at = t0 + 25000 + k * 20000 + j->late;
            corr++;
            X(t, "cpu_op", c[k].op, num(a, at), "60", "11", "7", "");
            if (j->sized)
                snprintf(args, sizeof args,
                         "\"Collective name\":\"%s\",\"In msg nelems\":%ld,\"Out msg "
                         "nelems\":%ld,\"dtype\":\"BFloat16\",\"Group size\":4,\"Process Group "
                         "Name\":\"0\",\"Process Group Description\":\"default_pg\",\"Process "
                         "Group Ranks\":\"[0, 1, 2, 3]\"",
                         c[k].coll, c[k].elems_in, c[k].elems_out);
            else
                snprintf(args, sizeof args, "\"External id\":%lld", corr * 7);
            X(t, "cpu_op", "record_param_comms", num(a, at + 5), "50", "11", "7", args);
            snprintf(args, sizeof args,
                     "\"Input Dims\":[[%ld]],\"Input type\":[\"c10::BFloat16\"],\"External "
                     "id\":%lld",
                     c[k].elems_in, corr * 3);
            X(t, "user_annotation", c[k].ann, num(a, at + 10), "40", "11", "7", args);
            snprintf(args, sizeof args, "\"correlation\":%lld", corr);
            X(t, "cuda_runtime", "cudaLaunchKernel", num(a, at + 20), "8", "11", "7", args);
            /* the work: 3 ms (4 on the second), starting 1 ms after the call,
             * when the latest rank has called too: it ends at the same time
             * on every rank */
            long long w0 = t0 + 25000 + k * 20000 + 1000 + j->sync;
            if (j->rccl)
                snprintf(args, sizeof args,
                         "\"correlation\":%lld,\"Collective name\":\"%s\",\"In msg nelems\":%ld,"
                         "\"Out msg nelems\":%ld,\"dtype\":\"BFloat16\"",
                         corr, c[k].coll, c[k].elems_in, c[k].elems_out);
            else
                snprintf(args, sizeof args, "\"correlation\":%lld", corr);
            X(t, "kernel",
              j->rccl ? "ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)" : c[k].kernel,
              num(a, w0), num(b, 3000 + 1000 * k), "0", "21", args);
            /* the GPU's annotation of the same call: not the work when a kernel is linked */
            snprintf(args, sizeof args, "\"External id\":%lld", corr * 3);
            X(t, "gpu_user_annotation", c[k].ann, num(a, w0 - 50), "9999", "0", "21", args);
        }
    }
}

static struct tp_wlimport_part *gpu_part(const struct job *j, const char *name, json_t *w)
{
    struct tr t = {0};
    gpu_job(&t, j);
    char path[256], dist[128];
    snprintf(dist, sizeof dist, "\"backend\":\"nccl\",\"rank\":%d,\"world_size\":4", j->rank);
    tr_write(&t, dist, name, path, sizeof path);
    return read_ok(path, w);
}

/* FSDP's kinds on NCCL: the GPU's copies never count as steps or optimizer
 * time, the kernels (by correlation) are the work, never the CPU's enqueue
 * span or the GPU annotation around them, the sizes the nccl-tests size */
static void fsdp_on_the_gpu(void **state)
{
    (void)state;
    for (int rccl = 0; rccl < 2; rccl++) {
        json_t *w = json_array();
        struct job j = {.rank = 0, .steps = 3, .base = 1000000, .sized = true, .rccl = rccl};
        struct tp_wlimport_part *p = gpu_part(&j, "fsdp.json", w);
        print_warnings(w);
        steps_of(p, 3, 2); /* not 6: the GPU's copies of ProfilerStep */
        TP_EQ_INT(p->skipped, 0);
        TP_EQ_INT(p->steps[0].id, 10);
        TP_EQ_INT(p->steps[1].optimizer_ns, 5000000); /* the CPU span, not + the GPU's 9 ms */
        TP_EQ_INT(p->steps[0].forward_ns, 19900000);  /* first op (t0+100) to the backward */
        TP_EQ_INT(p->steps[0].backward_ns, 40000000);
        TP_EQ_INT(p->steps[0].step_ns, 90000000);
        const struct tp_wlimport_coll *ag = C(p, 1, 0), *rs = C(p, 1, 1);
        TP_EQ_INT(ag->kind, TP_WL_ALLGATHER);
        TP_EQ_INT(ag->bytes, 2000000); /* the gathered output: 1,000,000 bf16 */
        TP_EQ_STR(ag->dtype, "bfloat16");
        TP_EQ_INT(rs->kind, TP_WL_REDUCE_SCATTER);
        TP_EQ_INT(rs->bytes, 2000000);     /* the input */
        TP_EQ_INT(ag->ready_ns, 24900000); /* the call at t0+25000, from the first op */
        TP_EQ_INT(ag->start_ns, 25900000);
        TP_EQ_INT(ag->dur_ns, 3000000); /* the kernel, not the enqueue's 40 µs */
        TP_EQ_INT(rs->dur_ns, 4000000);
        TP_EQ_INT(ag->phase, TP_WL_PHASE_BACKWARD);
        TP_EQ_INT(p->ngroups, 1);
        TP_EQ_STR(p->groups[0].name, "0");
        TP_EQ_STR(p->groups[0].desc, "default_pg");
        TP_EQ_INT(p->groups[0].nranks, 4);
        TP_EQ_INT(ag->group, 0);
        TP_EQ_INT(p->world_size, 4);
        TP_EQ_INT(p->rank, 0);
        TP_EQ_STR(p->backend, "nccl");
        tp_wlimport_part_free(p);
        json_decref(w);
    }
}

/* torch 1.12 to 2.0: record_param_comms carries no size; the backend's
 * annotation (record_shapes=True) does: its Input Dims are the input */
static void sizes_on_the_annotation(void **state)
{
    (void)state;
    json_t *w = json_array();
    struct job j = {.rank = 0, .steps = 2, .base = 5000000, .sized = false};
    struct tp_wlimport_part *p = gpu_part(&j, "unsized.json", w);
    steps_of(p, 2, 2);
    TP_EQ_INT(C(p, 0, 0)->kind, TP_WL_ALLGATHER);
    TP_EQ_INT(C(p, 0, 0)->bytes, 4 * 500000); /* n x the input, n from distributedInfo */
    TP_EQ_INT(C(p, 0, 1)->bytes, 2000000);
    TP_EQ_INT(C(p, 0, 0)->dur_ns, 3000000);
    tp_wlimport_part_free(p);
    json_decref(w);
}

/* a torch 2.x DDP trace with an allreduce whose ids are past int64 (Kineto
 * writes them raw), negative timestamps, an unnamed record_param_comms
 * inside an all-to-all and a standalone one (torch 2.0's waits) */
static void ids_negative_times_unnamed(void **state)
{
    (void)state;
    struct tr t = {0};
    char a[64], args[256];
    for (int s = 0; s < 2; s++) {
        long long t0 = -9000000 + s * 100000;
        X(&t, "user_annotation", s ? "ProfilerStep#2" : "ProfilerStep#1", num(a, t0), "90000", "5",
          "5", "");
        X(&t, "cpu_op", "aten::mm", num(a, t0 + 10), "100", "5", "5", "");
        X(&t, "cpu_op", "autograd::engine::evaluate_function: MmBackward0", num(a, t0 + 1000),
          "40000", "5", "5", "");
        X(&t, "cpu_op", "c10d::allreduce_", num(a, t0 + 2000), "50", "5", "5", "");
        X(&t, "cpu_op", "record_param_comms", num(a, t0 + 2005), "30", "5", "5",
          "\"Collective name\":\"allreduce\",\"In msg nelems\":1000,\"Out msg nelems\":1000,"
          "\"dtype\":\"Float\",\"External id\":18446744073709551615");
        snprintf(args, sizeof args, "\"correlation\":%s",
                 s ? "18446744073709551614" : "9223372036854775808");
        X(&t, "cuda_runtime", "cudaLaunchKernel", num(a, t0 + 2010), "5", "5", "5", args);
        X(&t, "kernel", "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", num(a, t0 + 30000),
          "2500.5", "0", "7", args);
        X(&t, "cpu_op", "c10d::alltoall_base_", num(a, t0 + 3000), "50", "5", "5",
          "\"Input Dims\":[[4096], [4096], [], [], [], []],\"Input type\":[\"float\", \"float\", "
          "\"\", \"\", \"\", \"Scalar\"]");
        X(&t, "cpu_op", "record_param_comms", num(a, t0 + 3005), "30", "5", "5",
          "\"Input Dims\":[[4096]],\"Input type\":[\"float\"]");
        X(&t, "cpu_op", "record_param_comms", num(a, t0 + 3500), "3", "5", "5", ""); /* a wait */
        X(&t, "cpu_op", "record_param_comms", num(a, t0 + 3600), "3", "5", "5",
          "\"Collective name\":\"wait\"");
    }
    char path[256];
    tr_write(&t, NULL, "ids.json", path, sizeof path);
    json_t *w = json_array();
    struct tp_wlimport_part *p = read_ok(path, w);
    print_warnings(w);
    steps_of(p, 2, 2);
    TP_EQ_INT(C(p, 0, 0)->kind, TP_WL_ALLREDUCE);
    TP_EQ_INT(C(p, 0, 0)->bytes, 4000);
    TP_EQ_INT(C(p, 1, 0)->dur_ns, 2500500); /* its kernel, linked by a correlation past int64 */
    TP_EQ_INT(C(p, 0, 1)->kind, TP_WL_ALLTOALL); /* not an allreduce */
    TP_EQ_INT(C(p, 0, 1)->bytes, 16384);
    TP_EQ_INT(p->steps[0].backward_ns, 40000000); /* not the 9 s of a negative origin */
    TP_EQ_INT(p->steps[0].forward_ns, 990000);
    TP_EQ_INT(C(p, 1, 0)->ready_ns, 1990000);
    tp_wlimport_part_free(p);
    json_decref(w);
}

/* values that are not counts or times are refused naming the event and the
 * value; a negative duration is left out, said */
static void bad_values_named(void **state)
{
    (void)state;
    static const struct {
        const char *args, *ts, *dur, *dist, *want;
    } cases[] = {
        {"\"Collective name\":\"allreduce\",\"In msg nelems\":-5,\"dtype\":\"Float\"", "100", "10",
         NULL, "(record_param_comms): In msg nelems -5: not a count"},
        {"\"In msg nelems\":1.5,\"dtype\":\"Float\"", "100", "10", NULL,
         "In msg nelems 1.5: not a count"},
        {"", "100", "1e30", NULL, "dur 1e30: not a time"},
        {"", "99999999999999999999", "1", NULL, "ts 99999999999999999999: not a time"},
        {"", "100", "10", "\"world_size\":1000000000000",
         "distributedInfo.world_size 1000000000000: not a rank count"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct tr t = {0};
        X(&t, "user_annotation", "ProfilerStep#1", "0", "1000", "1", "1", "");
        X(&t, "cpu_op", "record_param_comms", cases[i].ts, cases[i].dur, "1", "1", cases[i].args);
        char path[256];
        tr_write(&t, cases[i].dist, "bad.json", path, sizeof path);
        struct tp_wlimport_part *p = NULL;
        tp_error err = {0};
        TP_EQ_INT(tp_wlimport_read(path, "auto", &p, NULL, &err), TP_EUSAGE);
        if (!strstr(err.msg, cases[i].want) || !strstr(err.msg, "bad.json: "))
            fail_msg("case %zu: %s", i, err.msg);
    }
    /* a negative duration: that event left out, the trace read */
    struct tr t = {0};
    X(&t, "user_annotation", "ProfilerStep#1", "0", "1000", "1", "1", "");
    X(&t, "cpu_op", "autograd::engine::evaluate_function: X", "10", "-500", "1", "1", "");
    X(&t, "cpu_op", "c10d::allreduce_", "20", "5", "1", "1", "");
    X(&t, "cpu_op", "record_param_comms", "21", "3", "1", "1",
      "\"Collective name\":\"allreduce\",\"In msg nelems\":8,\"Out msg nelems\":8,\"dtype\":"
      "\"Float\"");
    char path[256];
    tr_write(&t, NULL, "neg.json", path, sizeof path);
    json_t *w = json_array();
    struct tp_wlimport_part *p = read_ok(path, w);
    assert_true(warned(w,
                       "neg.json: event 2 (autograd::engine::evaluate_function: X) has a "
                       "negative duration (-500000 ns): left out",
                       NULL));
    TP_EQ_INT(p->steps[0].backward_ns, 0);
    tp_wlimport_part_free(p);
    json_decref(w);
}

/* two processes with steps in one trace: one read and named, the other
 * left out, said (not their collectives doubled) */
static void two_processes(void **state)
{
    (void)state;
    struct tr t = {0};
    char a[64];
    for (int pid = 0; pid < 2; pid++)
        for (int s = 0; s < 2 + pid; s++) {
            long long t0 = 1000 + s * 10000;
            const char *p = pid ? "222" : "111";
            X(&t, "user_annotation", "ProfilerStep#1", num(a, t0), "9000", p, p, "");
            X(&t, "cpu_op", "c10d::allreduce_", num(a, t0 + 500), "50", p, p, "");
            X(&t, "cpu_op", "record_param_comms", num(a, t0 + 510), "30", p, p,
              "\"Collective name\":\"allreduce\",\"In msg nelems\":100,\"Out msg nelems\":100,"
              "\"dtype\":\"Float\"");
        }
    char path[256];
    tr_write(&t, NULL, "two.json", path, sizeof path);
    json_t *w = json_array();
    struct tp_wlimport_part *p = read_ok(path, w);
    steps_of(p, 3, 1); /* pid 222: the most steps */
    TP_EQ_STR(p->who, "pid 222");
    assert_true(
        warned(w, "1 other process with steps or collectives (pid 111", "pid 222 read", NULL));
    tp_wlimport_part_free(p);
    json_decref(w);
}

/* gzip, a UTF-8 BOM, and a trace cut short */
static void gzip_bom_and_cut(void **state)
{
    (void)state;
    struct tr t = {0};
    X(&t, "user_annotation", "ProfilerStep#1", "0", "1000", "1", "1", "");
    X(&t, "cpu_op", "c10d::allreduce_", "20", "5", "1", "1", "");
    X(&t, "cpu_op", "record_param_comms", "21", "3", "1", "1",
      "\"Collective name\":\"allreduce\",\"In msg nelems\":8,\"Out msg nelems\":8,\"dtype\":"
      "\"Float\"");
    char plain[256], path[256];
    tr_write(&t, NULL, "plain.json", plain, sizeof plain);
    FILE *f = fopen(plain, "rb");
    char text[8192];
    size_t n = fread(text, 1, sizeof text, f);
    fclose(f);
    snprintf(path, sizeof path, "%s/trace.json.gz", dir);
    gzFile g = gzopen(path, "wb");
    assert_non_null(g);
    gzwrite(g, "\xef\xbb\xbf", 3);
    gzwrite(g, text, (unsigned)n);
    gzclose(g);
    struct tp_wlimport_part *p = read_ok(path, NULL);
    steps_of(p, 1, 1);
    TP_EQ_INT(C(p, 0, 0)->bytes, 32);
    TP_EQ_INT(strlen(p->sha256), 64);
    tp_wlimport_part_free(p);
    /* cut short: the gzip stream and the JSON both end early */
    FILE *in = fopen(path, "rb");
    unsigned char gz[8192];
    size_t gn = fread(gz, 1, sizeof gz, in);
    fclose(in);
    f = fopen(path, "wb");
    fwrite(gz, 1, gn / 2, f);
    fclose(f);
    tp_error err = {0};
    TP_EQ_INT(tp_wlimport_read(path, "auto", &p, NULL, &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "trace.json.gz: gzip: the stream ends early"));
    f = fopen(plain, "wb");
    fwrite(text, 1, n / 2, f);
    fclose(f);
    TP_EQ_INT(tp_wlimport_read(plain, "auto", &p, NULL, &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "plain.json: not JSON: it ends at byte"));
}

/* a legacy gloo trace (torch 1.13's bare list, no args) of `steps` steps
 * of two allreduces each, whose profile ended before the last `lost`
 * works did: their gloo:all_reduce spans are missing (gloo completes the
 * future DDP waits on before it ends its span); a first step of `first`
 * allreduces (DDP's, before it rebuilds its buckets) */
static void legacy_trace(char *out, size_t cap, const char *name, int steps, int lost, int first)
{
    char ev[16384] = "";
    size_t k = 0;
    int calls = 0, total = 0;
    for (int s = 0; s < steps; s++)
        total += s == 0 && first ? first : 2;
    for (int s = 0; s < steps; s++) {
        long t0 = 100 + s * 2000;
        k += (size_t)snprintf(
            ev + k, sizeof ev - k,
            "{\"name\":\"ProfilerStep#%d\",\"ph\":\"X\",\"ts\":%ld,\"dur\":1900,\"tid\":1,"
            "\"pid\":\"CPU functions\",\"args\":{}},"
            "{\"name\":\"aten::addmm\",\"ph\":\"X\",\"ts\":%ld,\"dur\":100,\"tid\":1,"
            "\"pid\":\"CPU functions\",\"args\":{}},"
            "{\"name\":\"autograd::engine::evaluate_function: AddmmBackward0\",\"ph\":\"X\","
            "\"ts\":%ld,\"dur\":900,\"tid\":1,\"pid\":\"CPU functions\",\"args\":{}},"
            "{\"name\":\"Optimizer.step#Adam.step\",\"ph\":\"X\",\"ts\":%ld,\"dur\":200,"
            "\"tid\":1,\"pid\":\"CPU functions\",\"args\":{}},",
            s + 1, t0, t0 + 10, t0 + 200, t0 + 1500);
        int nb = s == 0 && first ? first : 2;
        for (int b = 0; b < nb; b++, calls++) {
            long c = t0 + 400 + b * 300;
            k += (size_t)snprintf(ev + k, sizeof ev - k,
                                  "{\"name\":\"c10d::allreduce_\",\"ph\":\"X\",\"ts\":%ld,"
                                  "\"dur\":30,\"tid\":1,\"pid\":\"CPU functions\",\"args\":{}},",
                                  c);
            if (calls < total - lost)
                k += (size_t)snprintf(ev + k, sizeof ev - k,
                                      "{\"name\":\"gloo:all_reduce\",\"ph\":\"X\",\"ts\":%ld,"
                                      "\"dur\":%d,\"tid\":3,\"pid\":\"CPU functions\","
                                      "\"args\":{}},",
                                      c + 50, 200 + s * 10 + b);
        }
    }
    ev[k - 1] = 0;
    char text[17000];
    snprintf(text, sizeof text, "[%s]", ev);
    tp_test_write(dir, name, text, out, cap);
}

static void legacy_without_sizes(void **state)
{
    (void)state;
    char path[256];
    legacy_trace(path, sizeof path, "legacy.json", 2, 0, 0);
    struct tp_wlimport_part *p = read_ok(path, NULL);
    steps_of(p, 2, 2);
    TP_EQ_INT(C(p, 0, 0)->bytes, TP_WL_UNSIZED);
    TP_EQ_STR(p->backend, "gloo");
    TP_EQ_INT(C(p, 0, 0)->ready_ns, 390000); /* the call at t0+400, from the first op (t0+10) */
    TP_EQ_INT(C(p, 1, 1)->dur_ns, 211000);   /* its gloo work span, in order */
    TP_EQ_INT(C(p, 1, 1)->start_ns, 740000); /* t0+750 */
    TP_EQ_INT(p->steps[0].optimizer_ns, 200000);
    TP_EQ_INT(p->steps[0].backward_ns, 900000);
    tp_wlimport_part_free(p);
}

static void profile_ended_before_the_work(void **state)
{
    (void)state;
    /* steps and works lost; what is kept, the warning, and a duration */
    static const struct {
        int steps, lost, nsteps;
        const char *warn1, *warn2;
        size_t s, i;
        long ns; /* -1: none */
    } cases[] = {
        /* the last work lost: the last step left out, the others timed */
        {3, 1, 2, "the last 1 of 6 collective calls have no work", "the last 1 step left out", 1, 1,
         211000},
        /* both of step 3's and the last of step 2's */
        {3, 3, 1, "the last 3 of 6", "the last 2 steps left out", 0, 1, 201000},
        /* one step, its last work lost: kept, that duration null */
        {1, 1, 1, "1 of 2 collective calls have no work in the trace", "null", 0, 1, -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[256];
        json_t *w = json_array();
        legacy_trace(path, sizeof path, "cut.json", cases[i].steps, cases[i].lost, 0);
        struct tp_wlimport_part *p = read_ok(path, w);
        print_warnings(w);
        steps_of(p, (size_t)cases[i].nsteps, 2);
        TP_EQ_INT(p->skipped, cases[i].steps - cases[i].nsteps);
        assert_true(warned(w, cases[i].warn1, cases[i].warn2, NULL));
        TP_EQ_INT(C(p, 0, 0)->dur_ns, 200000);
        TP_EQ_INT(C(p, cases[i].s, cases[i].i)->dur_ns, cases[i].ns < 0 ? TP_WL_NONE : cases[i].ns);
        tp_wlimport_part_free(p);
        json_decref(w);
    }
}

/* ---- the whole import ---- */

static json_t *run_ok(const struct tp_wlimport_opts *o, json_t **w)
{
    json_t *doc = NULL;
    tp_error err = {0};
    if (tp_wlimport_run(o, &doc, w, &err))
        fail_msg("%s", err.msg);
    json_decref(doc);
    json_error_t je;
    doc = json_load_file(o->out, 0, &je); /* what was written */
    if (!doc)
        fail_msg("%s: %s", o->out, je.text);
    return doc;
}

/* a JSON value by keys and indexes ("ranks", "0", "ready_ns", ...) */
static const json_t *at(const json_t *d, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *tok = strtok(buf, "."); tok && d; tok = strtok(NULL, "."))
        d = json_is_array(d) ? json_array_get(d, strtoul(tok, NULL, 10)) : json_object_get(d, tok);
    return d;
}

/* imported's map m's key k (keys hold dots) */
static const json_t *K(const json_t *doc, const char *m, const char *k)
{
    return json_object_get(json_object_get(json_object_get(doc, "imported"), m), k);
}

static long long I(const json_t *d, const char *path)
{
    const json_t *v = at(d, path);
    if (!json_is_integer(v))
        fail_msg("%s: not a whole number", path);
    return json_integer_value(v);
}

static const char *S(const json_t *d, const char *path)
{
    const json_t *v = at(d, path);
    if (!json_is_string(v))
        fail_msg("%s: not a string", path);
    return json_string_value(v);
}

static void import_log_with_compute(void **state)
{
    (void)state;
    char out[256];
    snprintf(out, sizeof out, "%s/wl.json", dir);
    remove(out);
    const char *files[] = {FIXTURES "/ddp_2rank_v2.18.log"};
    struct tp_wlimport_opts o = {
        .out = out, .files = files, .nfiles = 1, .samples = 32, .sample_bytes = 264};
    json_t *doc = NULL, *w = NULL;
    tp_error err = {0};
    TP_EQ_INT(tp_wlimport_run(&o, &doc, &w, &err), TP_EUSAGE); /* no times, no --compute-ms */
    assert_non_null(strstr(err.msg, "ddp_2rank_v2.18.log: an NCCL log has no times: give "
                                    "--compute-ms MS"));
    FILE *f = fopen(out, "r");
    assert_null(f); /* nothing written */
    o.compute_ms = 30;
    doc = run_ok(&o, &w);
    TP_EQ_INT(I(doc, "trainpath_workload"), 2);
    TP_EQ_STR(S(doc, "source"), "nccl-log");
    TP_EQ_INT(json_array_size(at(doc, "layouts.0")), 3);
    TP_EQ_STR(S(doc, "layouts.0.0.kind"), "allreduce");
    TP_EQ_INT(I(doc, "ranks.0.forward_ns.0"), 10000000);
    TP_EQ_INT(I(doc, "ranks.0.backward_ns.0"), 20000000);
    /* all allreduces (DDP's buckets): ready in the backward as the bytes accumulate */
    TP_EQ_INT(I(doc, "ranks.0.ready_ns.0.0"),
              10000000 + (long long)(20000000.0 * 1071144 / 2254888));
    TP_EQ_INT(I(doc, "ranks.0.ready_ns.0.2"), 30000000);
    assert_non_null(K(doc, "assumed", "ranks[].forward_ns"));
    assert_non_null(K(doc, "assumed", "ranks[].ready_ns"));
    assert_non_null(K(doc, "assumed", "checkpoint.bytes"));
    TP_EQ_STR(json_string_value(K(doc, "filled", "layouts[][].bytes")),
              FIXTURES "/ddp_2rank_v2.18.log");
    TP_EQ_INT(strlen(S(doc, "imported.files.0.sha256")), 64);
    TP_EQ_INT(I(doc, "model.parameter_bytes"), 2254888);
    TP_EQ_INT(I(doc, "checkpoint.bytes"), 3 * 2254888);
    json_decref(doc);
    json_decref(w);
}

static void import_refusals(void **state)
{
    (void)state;
    char out[256], leg[256];
    snprintf(out, sizeof out, "%s/no.json", dir);
    remove(out);
    legacy_trace(leg, sizeof leg, "legacy.json", 2, 0, 0);
    json_t *doc = NULL, *w = NULL;
    tp_error err = {0};
    /* no batch */
    const char *one[] = {FIXTURES "/ddp_2rank_v2.18.log"};
    struct tp_wlimport_opts o = {.out = out, .files = one, .nfiles = 1, .compute_ms = 10};
    TP_EQ_INT(tp_wlimport_run(&o, &doc, &w, &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "--samples N and --sample-bytes B are needed"));
    o.samples = 8;
    o.sample_bytes = 100;
    /* a trace without bytes alone: the collective named */
    const char *legacy[] = {leg};
    o.files = legacy;
    TP_EQ_INT(tp_wlimport_run(&o, &doc, &w, &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "legacy.json: step 1's collective 1 (allreduce) has no bytes"));
    /* a trace of 2 allreduces a step and a log of 3 */
    const char *two[] = {leg, FIXTURES "/ddp_2rank_v2.18.log"};
    o.files = two;
    o.nfiles = 2;
    TP_EQ_INT(tp_wlimport_run(&o, &doc, &w, &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "legacy.json's steps call other collectives than"));
    assert_non_null(strstr(err.msg, "ddp_2rank_v2.18.log's step (3 a step there, 2 in"));
    /* an unusable file among good ones */
    const char *bad[] = {leg, FIXTURES "/nothing.log"};
    o.files = bad;
    TP_EQ_INT(tp_wlimport_run(&o, &doc, &w, &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "nothing.log: no usable collective line"));
    /* the output is an input: refused, the input intact */
    const char *self[] = {leg};
    o.files = self;
    o.nfiles = 1;
    o.out = leg;
    TP_EQ_INT(tp_wlimport_run(&o, &doc, &w, &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "is the input"));
    struct tp_wlimport_part *p = read_ok(leg, NULL); /* still the trace */
    tp_wlimport_part_free(p);
    FILE *f = fopen(out, "r");
    assert_null(f);
}

/* DDP's first step (one bucket before it rebuilds them) and the later
 * steps (two): each keeps its own layout, said; the trace merged with a
 * log that sizes two buckets a step refuses the first step's */
static void layouts_per_step(void **state)
{
    (void)state;
    char out[256], leg[256], log[256];
    snprintf(out, sizeof out, "%s/layouts.json", dir);
    legacy_trace(leg, sizeof leg, "first.json", 3, 0, 1);
    tp_test_write(dir, "two.log",
                  "h:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count 1000 "
                  "datatype 7 op 0 root 0 comm 0x9 [nranks=2] stream 0x3\n"
                  "h:1:1 [0] NCCL INFO AllReduce: opCount 1 sendbuff 0x1 recvbuff 0x2 count 50 "
                  "datatype 7 op 0 root 0 comm 0x9 [nranks=2] stream 0x3\n"
                  "h:1:1 [0] NCCL INFO AllReduce: opCount 2 sendbuff 0x1 recvbuff 0x2 count 1000 "
                  "datatype 7 op 0 root 0 comm 0x9 [nranks=2] stream 0x3\n"
                  "h:1:1 [0] NCCL INFO AllReduce: opCount 3 sendbuff 0x1 recvbuff 0x2 count 50 "
                  "datatype 7 op 0 root 0 comm 0x9 [nranks=2] stream 0x3\n",
                  log, sizeof log);
    const char *files[] = {leg, log};
    struct tp_wlimport_opts o = {
        .out = out, .files = files, .nfiles = 2, .samples = 4, .sample_bytes = 64};
    json_t *w = NULL;
    json_t *doc = run_ok(&o, &w); /* DDP's first step left out, said; the others sized */
    assert_true(warned(w, "first.json: 1 of 3 steps left out (the first: step 1, 1 collectives)",
                       "two.log's step (2)", NULL));
    TP_EQ_INT(I(doc, "recorded.steps"), 2);
    TP_EQ_INT(I(doc, "recorded.skipped_steps"), 1);
    TP_EQ_INT(I(doc, "layouts.0.0.bytes"), 4000);
    json_decref(doc);
    json_decref(w);
    /* the trace with sizes of its own: Kineto's, the first step one bucket */
    struct tr t = {0};
    char a[64];
    for (int s = 0; s < 3; s++) {
        long long t0 = 100000 + s * 10000;
        X(&t, "user_annotation", "ProfilerStep#1", num(a, t0), "9000", "1", "1", "");
        X(&t, "cpu_op", "aten::mm", num(a, t0 + 1), "10", "1", "1", "");
        for (int b = 0; b < (s ? 2 : 1); b++) {
            X(&t, "cpu_op", "c10d::allreduce_", num(a, t0 + 500 + b * 100), "50", "1", "1", "");
            X(&t, "cpu_op", "record_param_comms", num(a, t0 + 510 + b * 100), "30", "1", "1",
              s ? (b ? "\"Collective name\":\"allreduce\",\"In msg nelems\":50,\"dtype\":\"Float\""
                     : "\"Collective name\":\"allreduce\",\"In msg "
                       "nelems\":1000,\"dtype\":\"Float\"")
                : "\"Collective name\":\"allreduce\",\"In msg nelems\":1050,\"dtype\":\"Float\"");
        }
    }
    char kin[256];
    tr_write(&t, NULL, "firststep.json", kin, sizeof kin);
    const char *one[] = {kin};
    o.files = one;
    o.nfiles = 1;
    doc = run_ok(&o, &w);
    print_warnings(w);
    TP_EQ_INT(json_array_size(at(doc, "layouts")), 2);
    TP_EQ_INT(I(doc, "layouts.0.0.bytes"), 4200);
    TP_EQ_INT(I(doc, "layouts.1.1.bytes"), 200);
    TP_EQ_INT(I(doc, "steps.layout.0"), 0);
    TP_EQ_INT(I(doc, "steps.layout.2"), 1);
    TP_EQ_INT(json_array_size(at(doc, "ranks.0.ready_ns.0")), 1);
    TP_EQ_INT(json_array_size(at(doc, "ranks.0.ready_ns.1")), 2);
    assert_true(warned(w,
                       "the steps' collectives differ (2 layouts: steps 1 call one list, steps "
                       "2-3 another)",
                       NULL));
    json_decref(doc);
    json_decref(w);
}

static void import_trace_and_log_merge(void **state)
{
    (void)state;
    char out[256], leg[256], log[256];
    snprintf(out, sizeof out, "%s/merged.json", dir);
    legacy_trace(leg, sizeof leg, "legacy.json", 2, 0, 0);
    tp_test_write(dir, "one.log",
                  "h:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count 1000 "
                  "datatype 7 op 0 root 0 comm 0x9 [nranks=2] stream 0x3\n"
                  "h:1:1 [0] NCCL INFO AllReduce: opCount 1 sendbuff 0x1 recvbuff 0x2 count 20 "
                  "datatype 9 op 0 root 0 comm 0x9 [nranks=2] stream 0x3\n"
                  "h:1:1 [0] NCCL INFO AllReduce: opCount 2 sendbuff 0x1 recvbuff 0x2 count 1000 "
                  "datatype 7 op 0 root 0 comm 0x9 [nranks=2] stream 0x3\n"
                  "h:1:1 [0] NCCL INFO AllReduce: opCount 3 sendbuff 0x1 recvbuff 0x2 count 20 "
                  "datatype 9 op 0 root 0 comm 0x9 [nranks=2] stream 0x3\n",
                  log, sizeof log);
    const char *files[] = {leg, log};
    struct tp_wlimport_opts o = {.out = out,
                                 .files = files,
                                 .nfiles = 2,
                                 .samples = 4,
                                 .sample_bytes = 64,
                                 .world_size = 16};
    json_t *w = NULL;
    json_t *doc = run_ok(&o, &w);
    TP_EQ_STR(S(doc, "source"), "kineto+nccl-log");
    TP_EQ_INT(I(doc, "layouts.0.0.bytes"), 4000);
    TP_EQ_INT(I(doc, "layouts.0.1.bytes"), 40);
    TP_EQ_STR(S(doc, "layouts.0.1.dtype"), "bfloat16");
    TP_EQ_INT(I(doc, "ranks.0.duration_ns.1.1"), 211000);
    TP_EQ_STR(json_string_value(K(doc, "filled", "layouts[][].bytes")), log);
    TP_EQ_STR(json_string_value(K(doc, "filled", "ranks[].forward_ns")), leg);
    /* the log's [nranks=2] before --world-size */
    TP_EQ_STR(json_string_value(K(doc, "filled", "recorded.world_size")), log);
    TP_EQ_INT(I(doc, "recorded.world_size"), 2);
    json_decref(doc);
    json_decref(w);
}

/* Two ranks of one job: rank 1's clock 5 s ahead of rank 0's, and rank 1
 * calls its collectives 700 µs later (a straggler); their kernels end
 * together. Lined up by ProfilerStep#N (rank 1's file has a step more),
 * the clocks aligned on the kernels' ends, the skew 700 µs, rank 1 the
 * slowest in every step. */
static void several_ranks(void **state)
{
    (void)state;
    char r0[256], r1[256], out[256];
    struct tr t = {0};
    struct job j0 = {.rank = 0, .steps = 3, .base = 1000000, .sized = true, .sync = 700};
    gpu_job(&t, &j0);
    tr_write(&t, "\"backend\":\"nccl\",\"rank\":0,\"world_size\":4", "rank0.json", r0, sizeof r0);
    struct job j1 = {
        .rank = 1, .steps = 4, .base = 1000000 + 5000000, .sized = true, .late = 700, .sync = 700};
    gpu_job(&t, &j1);
    tr_write(&t, "\"backend\":\"nccl\",\"rank\":1,\"world_size\":4", "rank1.json", r1, sizeof r1);
    snprintf(out, sizeof out, "%s/ranks.json", dir);
    const char *files[] = {r1, r0};
    struct tp_wlimport_opts o = {
        .out = out, .files = files, .nfiles = 2, .samples = 4, .sample_bytes = 64};
    json_t *w = NULL;
    json_t *doc = run_ok(&o, &w);
    print_warnings(w);
    TP_EQ_INT(I(doc, "recorded.steps"), 3);
    TP_EQ_INT(I(doc, "ranks.0.rank"), 0);
    TP_EQ_INT(I(doc, "ranks.1.rank"), 1);
    TP_EQ_INT(I(doc, "skew.offset_ns.1"), 5000000000LL);
    assert_true(json_is_true(at(doc, "skew.offsets_measured")));
    TP_EQ_INT(I(doc, "skew.arrival_ns.0.0"), 700000);
    TP_EQ_INT(I(doc, "skew.arrival_ns.2.1"), 700000);
    TP_EQ_INT(I(doc, "skew.slowest_rank.0"), 1);
    TP_EQ_INT(I(doc, "skew.slowest_rank.2"), 1);
    TP_EQ_INT(I(doc, "ranks.1.ready_ns.0.0") - I(doc, "ranks.0.ready_ns.0.0"), 700000);
    assert_true(warned(w, "1 of rank 1's 4 steps are not in every rank's files", NULL));
    json_decref(doc);
    json_decref(w);
    /* a file that does not say its rank among files of two */
    char leg[256];
    legacy_trace(leg, sizeof leg, "norank.json", 2, 0, 0);
    const char *three[] = {r0, r1, leg};
    o.files = three;
    o.nfiles = 3;
    json_t *d2 = NULL;
    tp_error err = {0};
    TP_EQ_INT(tp_wlimport_run(&o, &d2, &w, &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "norank.json does not say its rank"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ddp_two_ranks),
        cmocka_unit_test(old_format_without_nranks),
        cmocka_unit_test(bf16_fp8_and_a_step_cut_short),
        cmocka_unit_test(malformed_lines_named),
        cmocka_unit_test(log_of_every_kind),
        cmocka_unit_test(nothing_usable),
        cmocka_unit_test(kind_names),
        cmocka_unit_test(period_finding),
        cmocka_unit_test(nccl_datatypes),
        cmocka_unit_test(fsdp_on_the_gpu),
        cmocka_unit_test(sizes_on_the_annotation),
        cmocka_unit_test(ids_negative_times_unnamed),
        cmocka_unit_test(bad_values_named),
        cmocka_unit_test(two_processes),
        cmocka_unit_test(gzip_bom_and_cut),
        cmocka_unit_test(legacy_without_sizes),
        cmocka_unit_test(profile_ended_before_the_work),
        cmocka_unit_test(import_log_with_compute),
        cmocka_unit_test(import_refusals),
        cmocka_unit_test(layouts_per_step),
        cmocka_unit_test(import_trace_and_log_merge),
        cmocka_unit_test(several_ranks),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
