/* trainpath workload import (include/tp/wlimport.h) against the NCCL logs
 * under tests/fixtures/nccl/, one per line format: NCCL 2.18's with
 * [nranks=N], two ranks' lines interleaved and a first step whose buckets
 * differ (ddp_2rank_v2.18.log); 2.4's without [nranks=N], float16
 * (nccl_v2.4_fp16.log); 2.21's with bfloat16 and the fp8 types and a step
 * cut short (nccl_v2.21_bf16_fp8.log); malformed lines that must be named
 * by line (malformed.log); nothing usable (nothing.log). Then the period
 * finding, the NCCL datatypes, small torch.profiler traces written here
 * (Kineto's with sizes, the legacy list without, one whose profile ended
 * before its last allreduces' work did), and the whole import:
 * what it fills, what it assumes, and what it refuses. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static struct tp_wlimport_part *read_ok(const char *path, json_t *w)
{
    struct tp_wlimport_part *p = NULL;
    tp_error err = {0};
    int rc = tp_wlimport_read(path, "auto", &p, w, &err);
    if (rc)
        fail_msg("%s: %s", path, err.msg);
    return p;
}

static void ddp_two_ranks(void **state)
{
    (void)state;
    json_t *w = json_array();
    struct tp_wlimport_part *p = read_ok(FIXTURES "/ddp_2rank_v2.18.log", w);
    TP_EQ_STR(p->format, "nccl-log");
    TP_EQ_INT(p->nbuckets, 3);
    TP_EQ_INT(p->bytes[0], 1071144);
    TP_EQ_INT(p->bytes[1], 1050624);
    TP_EQ_INT(p->bytes[2], 133120);
    TP_EQ_STR(p->dtype[0], "float32");
    TP_EQ_INT(p->nsteps, 5); /* the first step's two allreduces left out */
    TP_EQ_INT(p->skipped, 1);
    TP_EQ_INT(p->world_size, 2);
    TP_EQ_STR(p->backend, "nccl");
    assert_null(p->forward_ns); /* a log has no times */
    assert_true(warned(w, "ddp_2rank_v2.18.log", "first step's 2 allreduces left out", NULL));
    assert_true(warned(w, "2 processes or communicators", "pid 4242", NULL));
    tp_wlimport_part_free(p);
    json_decref(w);
}

static void old_format_without_nranks(void **state)
{
    (void)state;
    json_t *w = json_array();
    struct tp_wlimport_part *p = read_ok(FIXTURES "/nccl_v2.4_fp16.log", w);
    TP_EQ_INT(p->nbuckets, 2);
    TP_EQ_INT(p->bytes[0], 2 * 1048576);
    TP_EQ_INT(p->bytes[1], 2 * 524288);
    TP_EQ_STR(p->dtype[1], "float16");
    TP_EQ_INT(p->nsteps, 4);
    TP_EQ_INT(p->skipped, 0);
    TP_EQ_INT(p->world_size, 0); /* not in these lines */
    TP_EQ_INT(json_array_size(w), 0);
    tp_wlimport_part_free(p);
    json_decref(w);
}

static void bf16_fp8_and_a_step_cut_short(void **state)
{
    (void)state;
    json_t *w = json_array();
    struct tp_wlimport_part *p = read_ok(FIXTURES "/nccl_v2.21_bf16_fp8.log", w);
    TP_EQ_INT(p->nbuckets, 3);
    TP_EQ_INT(p->bytes[0], 2 * 4194304);
    TP_EQ_STR(p->dtype[0], "bfloat16");
    TP_EQ_INT(p->bytes[1], 1000000);
    TP_EQ_STR(p->dtype[1], "float8e4m3");
    TP_EQ_INT(p->bytes[2], 12345);
    TP_EQ_STR(p->dtype[2], "float8e5m2");
    TP_EQ_INT(p->nsteps, 3);
    TP_EQ_INT(p->world_size, 8);
    assert_true(warned(w, "the last 1 allreduces (a step cut short) left out", NULL));
    tp_wlimport_part_free(p);
    json_decref(w);
}

static void malformed_lines_named(void **state)
{
    (void)state;
    json_t *w = json_array();
    struct tp_wlimport_part *p = read_ok(FIXTURES "/malformed.log", w);
    TP_EQ_INT(p->nbuckets, 2);
    TP_EQ_INT(p->bytes[0], 262144);
    TP_EQ_INT(p->bytes[1], 16384);
    TP_EQ_INT(p->nsteps, 3);
    assert_true(warned(w, "malformed.log:4:", "after 'count'", NULL));
    assert_true(warned(w, "malformed.log:7:", "not an ncclDataType_t", NULL));
    assert_true(warned(w, "malformed.log:9:", "after 'datatype'", NULL));
    TP_EQ_INT(json_array_size(w), 3);
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
    assert_non_null(strstr(err.msg, "nothing.log: no usable AllReduce line"));
    /* a file of neither format; a format that does not fit */
    TP_EQ_INT(tp_wlimport_read(TP_SOURCE_ROOT "/meson.build", "auto", &p, NULL, &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "meson.build: neither a torch.profiler trace"));
    TP_EQ_INT(tp_wlimport_read(FIXTURES "/malformed.log", "kineto", &p, NULL, &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "malformed.log: not a torch.profiler trace"));
    TP_EQ_INT(tp_wlimport_read(FIXTURES "/malformed.log", "pcap", &p, NULL, &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "--from pcap: not a format"));
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
     * and 300,000 calls of which none repeats; a step of 1,025 buckets is
     * past what step replays, so none is found */
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
    for (size_t i = 0; i < 3 * 1025; i++)
        k[i] = i % 1025;
    TP_EQ_INT(tp_wlimport_period(k, 3 * 1025, &s, &q), 0);
    for (size_t i = 0; i < 3 * 1024; i++)
        k[i] = i % 1024;
    TP_EQ_INT(tp_wlimport_period(k, 3 * 1024, &s, &q), 3);
    TP_EQ_INT(q, 1024);
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

/* a Kineto trace (torch 2.x, NCCL): 3 ProfilerSteps, the first with one
 * allreduce, the others two; record_param_comms inside each
 * c10d::allreduce_ carries the sizes, a kernel on the GPU each duration */
static void kineto_trace(char *out, size_t cap)
{
    char ev[16384] = "", one[1024];
    size_t k = 0;
    for (int s = 0; s < 3; s++) {
        long t0 = 1000000 + s * 100000;
        k += (size_t)snprintf(
            ev + k, sizeof ev - k,
            "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#%d\","
            "\"ts\":%ld,\"dur\":90000,\"pid\":1,\"tid\":1},"
            "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"ts\":%ld,"
            "\"dur\":10000,\"pid\":1,\"tid\":1},"
            "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"autograd::engine::evaluate_"
            "function: AddmmBackward0\",\"ts\":%ld.5,\"dur\":40000,\"pid\":1,\"tid\":7},"
            "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"Optimizer.step#SGD.step\","
            "\"ts\":%ld,\"dur\":5000,\"pid\":1,\"tid\":1},",
            s + 1, t0, t0 + 100, t0 + 20000, t0 + 80000);
        int nb = s == 0 ? 1 : 2;
        for (int b = 0; b < nb; b++) {
            long c = t0 + 30000 + b * 25000;
            long n = s == 0 ? 3000000 : b == 0 ? 2000000 : 1000000;
            snprintf(one, sizeof one,
                     "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"c10d::allreduce_\",\"ts\":%ld,"
                     "\"dur\":50,\"pid\":1,\"tid\":7},"
                     "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"record_param_comms\",\"ts\":%ld,"
                     "\"dur\":20,\"pid\":1,\"tid\":7,\"args\":{\"Collective name\":\"allreduce\","
                     "\"In msg nelems\":%ld,\"Out msg nelems\":%ld,\"dtype\":\"BFloat16\","
                     "\"Group size\":4}},"
                     "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_AllReduce_Sum_bf16_"
                     "RING_LL(ncclDevKernelArgsStorage<4096ul>)\",\"ts\":%ld,\"dur\":%d,\"pid\":0,"
                     "\"tid\":20},",
                     c, c + 10, n, n, c + 500, 3000 + b * 1000);
            k += (size_t)snprintf(ev + k, sizeof ev - k, "%s", one);
        }
    }
    ev[k - 1] = 0; /* the last comma */
    char text[20000];
    snprintf(text, sizeof text,
             "{\"schemaVersion\":1,\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":0,"
             "\"world_size\":4},\"traceEvents\":[%s]}",
             ev);
    tp_test_write(dir, "kineto.json", text, out, cap);
}

static void kineto_with_sizes(void **state)
{
    (void)state;
    char path[256];
    kineto_trace(path, sizeof path);
    json_t *w = json_array();
    struct tp_wlimport_part *p = read_ok(path, w);
    TP_EQ_STR(p->format, "kineto");
    TP_EQ_INT(p->nbuckets, 2);
    TP_EQ_INT(p->nsteps, 2); /* the first step, one allreduce, left out */
    TP_EQ_INT(p->skipped, 1);
    assert_true(warned(w, "1 of 3 steps left out", NULL));
    TP_EQ_INT(p->bytes[0], 4000000); /* bf16: 2 bytes an element */
    TP_EQ_INT(p->bytes[1], 2000000);
    TP_EQ_STR(p->dtype[0], "bfloat16");
    TP_EQ_INT(p->world_size, 4);
    TP_EQ_STR(p->backend, "nccl");
    TP_EQ_INT(p->forward_ns[0], 19900500); /* first op (t0+100 us) to the backward (t0+20000.5) */
    TP_EQ_INT(p->ready_ns[0], 9999500);    /* the call at t0+30000 */
    TP_EQ_INT(p->ready_ns[1], 34999500);
    TP_EQ_INT(p->backward_ns[0], 40000000);
    TP_EQ_INT(p->optimizer_ns[1], 5000000);
    TP_EQ_INT(p->step_ns[0], 90000000);
    TP_EQ_INT(p->allreduce_ns[0], 3000000); /* the kernels */
    TP_EQ_INT(p->allreduce_ns[3], 4000000);
    tp_wlimport_part_free(p);
    json_decref(w);
}

/* torch 1.13's legacy trace: a bare list, no args, gloo */
static void legacy_trace(char *out, size_t cap)
{
    tp_test_write(dir, "legacy.json",
                  "[{\"name\":\"ProfilerStep#1\",\"ph\":\"X\",\"ts\":100,\"dur\":1000,\"tid\":1,"
                  "\"pid\":\"CPU functions\",\"args\":{}},"
                  "{\"name\":\"aten::addmm\",\"ph\":\"X\",\"ts\":110,\"dur\":100,\"tid\":1,"
                  "\"pid\":\"CPU functions\",\"args\":{}},"
                  "{\"name\":\"autograd::engine::evaluate_function: AddmmBackward0\",\"ph\":\"X\","
                  "\"ts\":300,\"dur\":400,\"tid\":1,\"pid\":\"CPU functions\",\"args\":{}},"
                  "{\"name\":\"c10d::allreduce_\",\"ph\":\"X\",\"ts\":500,\"dur\":30,\"tid\":1,"
                  "\"pid\":\"CPU functions\",\"args\":{}},"
                  "{\"name\":\"gloo:all_reduce\",\"ph\":\"X\",\"ts\":510,\"dur\":250,\"tid\":3,"
                  "\"pid\":\"CPU functions\",\"args\":{}},"
                  "{\"name\":\"Optimizer.step#Adam.step\",\"ph\":\"X\",\"ts\":800,\"dur\":200,"
                  "\"tid\":1,\"pid\":\"CPU functions\",\"args\":{}}]",
                  out, cap);
}

static void legacy_without_sizes(void **state)
{
    (void)state;
    char path[256];
    legacy_trace(path, sizeof path);
    struct tp_wlimport_part *p = read_ok(path, NULL);
    TP_EQ_INT(p->nbuckets, 1);
    TP_EQ_INT(p->nsteps, 1);
    assert_null(p->bytes);
    TP_EQ_STR(p->backend, "gloo");
    TP_EQ_INT(p->ready_ns[0], 200000);
    TP_EQ_INT(p->allreduce_ns[0], 250000);
    TP_EQ_INT(p->optimizer_ns[0], 200000);
    tp_wlimport_part_free(p);
}

/* a legacy gloo trace of `steps` steps of two allreduces each, whose
 * profile ended before the last `lost` works did: their gloo:all_reduce
 * spans are missing (gloo completes the future DDP waits on before it
 * ends its span) */
static void cut_trace(char *out, size_t cap, int steps, int lost)
{
    char ev[8192] = "";
    size_t k = 0;
    for (int s = 0; s < steps; s++) {
        long t0 = 100 + s * 2000;
        k += (size_t)snprintf(
            ev + k, sizeof ev - k,
            "{\"name\":\"ProfilerStep#%d\",\"ph\":\"X\",\"ts\":%ld,\"dur\":1900,\"tid\":1},"
            "{\"name\":\"aten::addmm\",\"ph\":\"X\",\"ts\":%ld,\"dur\":100,\"tid\":1},"
            "{\"name\":\"autograd::engine::evaluate_function: AddmmBackward0\",\"ph\":\"X\","
            "\"ts\":%ld,\"dur\":900,\"tid\":1},",
            s + 1, t0, t0 + 10, t0 + 200);
        for (int b = 0; b < 2; b++) {
            long c = t0 + 400 + b * 300;
            k += (size_t)snprintf(ev + k, sizeof ev - k,
                                  "{\"name\":\"c10d::allreduce_\",\"ph\":\"X\",\"ts\":%ld,"
                                  "\"dur\":30,\"tid\":1},",
                                  c);
            if (s * 2 + b < steps * 2 - lost)
                k += (size_t)snprintf(ev + k, sizeof ev - k,
                                      "{\"name\":\"gloo:all_reduce\",\"ph\":\"X\",\"ts\":%ld,"
                                      "\"dur\":%d,\"tid\":3},",
                                      c + 50, 200 + s * 10 + b);
        }
    }
    ev[k - 1] = 0;
    char text[9000];
    snprintf(text, sizeof text, "[%s]", ev);
    tp_test_write(dir, "cut.json", text, out, cap);
}

static void profile_ended_before_the_work(void **state)
{
    (void)state;
    /* steps and works lost; what is kept, the warning's two parts, and a
     * duration (bucket index into allreduce_ns, nanoseconds; -1: none kept) */
    static const struct {
        int steps, lost, nsteps;
        const char *warn1, *warn2;
        int at;
        long ns;
    } cases[] = {
        /* the last work lost: the last step left out, the others timed */
        {3, 1, 2, "the last 1 of 6 allreduce calls have no gloo:all_reduce span",
         "the last 1 step left out", 3, 211000 /* step 2, bucket 1 */},
        /* both buckets of step 3 and the last of step 2 */
        {3, 3, 1, "the last 3 of 6", "the last 2 steps left out", 1, 201000},
        /* one step, its last work lost: kept, without durations */
        {1, 1, 1, "1 gloo:all_reduce spans for 2 allreduce calls: no allreduce durations", "", -1,
         0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[256];
        json_t *w = json_array();
        cut_trace(path, sizeof path, cases[i].steps, cases[i].lost);
        struct tp_wlimport_part *p = read_ok(path, w);
        TP_EQ_INT(p->nsteps, cases[i].nsteps);
        TP_EQ_INT(p->skipped, cases[i].steps - cases[i].nsteps);
        assert_true(warned(w, cases[i].warn1, cases[i].warn2, NULL));
        TP_EQ_INT(p->ready_ns[0], 200000); /* the first call, 200 us into the backward */
        if (cases[i].at < 0) {
            assert_null(p->allreduce_ns);
        } else {
            TP_EQ_INT(p->allreduce_ns[0], 200000);
            TP_EQ_INT(p->allreduce_ns[cases[i].at], cases[i].ns);
        }
        tp_wlimport_part_free(p);
        json_decref(w);
    }
}

/* ---- the whole import ---- */

static void import_log_with_compute(void **state)
{
    (void)state;
    char out[256];
    snprintf(out, sizeof out, "%s/wl.json", dir);
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
    if (tp_wlimport_run(&o, &doc, &w, &err))
        fail_msg("%s", err.msg);
    json_decref(doc);
    json_error_t je;
    doc = json_load_file(out, 0, &je); /* what was written */
    assert_non_null(doc);
    TP_EQ_STR(json_string_value(json_object_get(doc, "source")), "nccl-log");
    const json_t *bk = json_object_get(doc, "buckets"), *st = json_object_get(doc, "steps");
    TP_EQ_INT(json_array_size(bk), 3);
    TP_EQ_INT(json_integer_value(json_array_get(json_object_get(st, "forward_ns"), 0)), 10000000);
    TP_EQ_INT(json_integer_value(json_array_get(json_object_get(st, "backward_ns"), 0)), 20000000);
    /* bucket i ready as the bytes accumulate: the last at the backward's end */
    TP_EQ_INT(
        json_integer_value(json_array_get(json_object_get(json_array_get(bk, 0), "ready_ns"), 0)),
        (long long)(20000000.0 * 1071144 / 2254888));
    TP_EQ_INT(
        json_integer_value(json_array_get(json_object_get(json_array_get(bk, 2), "ready_ns"), 0)),
        20000000);
    const json_t *imp = json_object_get(doc, "imported");
    assert_non_null(json_object_get(json_object_get(imp, "assumed"), "steps.forward_ns"));
    assert_non_null(json_object_get(json_object_get(imp, "assumed"), "buckets[].ready_ns"));
    assert_non_null(json_object_get(json_object_get(imp, "assumed"), "checkpoint.bytes"));
    TP_EQ_STR(json_string_value(json_object_get(json_object_get(imp, "filled"), "buckets[].bytes")),
              FIXTURES "/ddp_2rank_v2.18.log");
    TP_EQ_INT(json_string_length(
                  json_object_get(json_array_get(json_object_get(imp, "files"), 0), "sha256")),
              64);
    TP_EQ_INT(json_integer_value(json_object_get(json_object_get(doc, "model"), "parameter_bytes")),
              2254888);
    TP_EQ_INT(json_integer_value(json_object_get(json_object_get(doc, "checkpoint"), "bytes")),
              3 * 2254888);
    json_decref(doc);
    json_decref(w);
}

static void import_refusals(void **state)
{
    (void)state;
    char out[256], kin[256], leg[256];
    snprintf(out, sizeof out, "%s/no.json", dir);
    kineto_trace(kin, sizeof kin);
    legacy_trace(leg, sizeof leg);
    json_t *doc = NULL, *w = NULL;
    tp_error err = {0};
    /* no batch */
    const char *one[] = {FIXTURES "/ddp_2rank_v2.18.log"};
    struct tp_wlimport_opts o = {.out = out, .files = one, .nfiles = 1, .compute_ms = 10};
    TP_EQ_INT(tp_wlimport_run(&o, &doc, &w, &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "--samples N and --sample-bytes B are needed"));
    o.samples = 8;
    o.sample_bytes = 100;
    /* a trace without bytes alone */
    const char *legacy[] = {leg};
    o.files = legacy;
    TP_EQ_INT(tp_wlimport_run(&o, &doc, &w, &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "legacy.json: no bucket bytes"));
    /* a trace of 2 buckets a step and a log of 3 */
    const char *two[] = {kin, FIXTURES "/ddp_2rank_v2.18.log"};
    o.files = two;
    o.nfiles = 2;
    TP_EQ_INT(tp_wlimport_run(&o, &doc, &w, &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "kineto.json has 2 allreduces a step"));
    assert_non_null(strstr(err.msg, "ddp_2rank_v2.18.log 3"));
    /* an unusable file among good ones */
    const char *bad[] = {leg, FIXTURES "/nothing.log"};
    o.files = bad;
    TP_EQ_INT(tp_wlimport_run(&o, &doc, &w, &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "nothing.log: no usable AllReduce line"));
    FILE *f = fopen(out, "r");
    assert_null(f);
}

static void import_trace_and_log_merge(void **state)
{
    (void)state;
    char out[256], leg[256];
    snprintf(out, sizeof out, "%s/merged.json", dir);
    legacy_trace(leg, sizeof leg);
    /* one bucket a step in the trace: the v2.4 log has two, the single-step
     * log written here one */
    char log[256];
    tp_test_write(dir, "one.log",
                  "h:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count 1000 "
                  "datatype 7 op 0 root 0 comm 0x9 [nranks=2] stream 0x3\n"
                  "h:1:1 [0] NCCL INFO AllReduce: opCount 1 sendbuff 0x1 recvbuff 0x2 count 1000 "
                  "datatype 7 op 0 root 0 comm 0x9 [nranks=2] stream 0x3\n",
                  log, sizeof log);
    const char *files[] = {leg, log};
    struct tp_wlimport_opts o = {.out = out,
                                 .files = files,
                                 .nfiles = 2,
                                 .samples = 4,
                                 .sample_bytes = 64,
                                 .world_size = 16};
    json_t *doc = NULL, *w = NULL;
    tp_error err = {0};
    if (tp_wlimport_run(&o, &doc, &w, &err))
        fail_msg("%s", err.msg);
    TP_EQ_STR(json_string_value(json_object_get(doc, "source")), "kineto+nccl-log");
    const json_t *b0 = json_array_get(json_object_get(doc, "buckets"), 0);
    TP_EQ_INT(json_integer_value(json_object_get(b0, "bytes")), 4000);
    TP_EQ_INT(json_integer_value(json_array_get(json_object_get(b0, "allreduce_ns"), 0)), 250000);
    const json_t *fl = json_object_get(json_object_get(doc, "imported"), "filled");
    TP_EQ_STR(json_string_value(json_object_get(fl, "buckets[].bytes")), log);
    TP_EQ_STR(json_string_value(json_object_get(fl, "steps.forward_ns")), leg);
    /* the log's [nranks=2] before --world-size */
    TP_EQ_STR(json_string_value(json_object_get(fl, "recorded.world_size")), log);
    TP_EQ_INT(json_integer_value(json_object_get(json_object_get(doc, "recorded"), "world_size")),
              2);
    json_decref(doc);
    json_decref(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ddp_two_ranks),
        cmocka_unit_test(old_format_without_nranks),
        cmocka_unit_test(bf16_fp8_and_a_step_cut_short),
        cmocka_unit_test(malformed_lines_named),
        cmocka_unit_test(nothing_usable),
        cmocka_unit_test(period_finding),
        cmocka_unit_test(nccl_datatypes),
        cmocka_unit_test(kineto_with_sizes),
        cmocka_unit_test(legacy_without_sizes),
        cmocka_unit_test(profile_ended_before_the_work),
        cmocka_unit_test(import_log_with_compute),
        cmocka_unit_test(import_refusals),
        cmocka_unit_test(import_trace_and_log_merge),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
