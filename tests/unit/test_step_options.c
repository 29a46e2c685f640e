/* step's options without ranks: what tp_step_derive fills in from the
 * preset, the flags and the rank count, the config every rank shares, the
 * arena the loop needs, and tp_step_prepare's refusals and --dir. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "tp_test.h"
#include "tp/fixed.h"
#include "tp/group.h"
#include "tp/model.h"
#include "tp/step.h"

/* As `trainpath step` starts: its defaults, nothing given. */
static struct tp_step_given given(void)
{
    return (struct tp_step_given){.scale = 0.1, .mem_cuda = -1,
                                  .o = {.steps = 50, .overlap = true, .lr = 0.5f,
                                        .prefetch = 2, .qd = 16, .seed = 1, .runs = 1,
                                        .pin = true, .dir = "/var/tmp/trainpath-step"}};
}

static void defaults(void **state)
{
    (void)state;
    tp_error err = {0};
    for (int n = 1; n <= 8; n++) {
        struct tp_step_given g = given();
        assert_int_equal(tp_step_derive(&g, n, &err), 0);
        TP_EQ_U64(g.o.grad_bytes, 4u << 20);
        TP_EQ_U64(g.o.sample_bytes, 4096);
        TP_NEAR(g.o.compute_ms, 10, 0);
        TP_EQ_U64(g.o.ckpt_bytes, 64u << 20);
        TP_EQ_U64(g.o.batch, 32u * (unsigned)n);
        TP_EQ_U64(g.o.samples, 4 * 32u * (unsigned)n);
        TP_EQ_INT(g.o.dim, 64);
        TP_EQ_INT(g.o.buckets, 1);
        assert_null(g.o.preset);
    }
}

static void flags_over_preset(void **state)
{
    (void)state;
    tp_error err = {0};
    struct tp_step_opts ps = {0};
    assert_int_equal(tp_step_preset("resnet50", 0.1, &ps, &err), 0);
    struct tp_step_given g = given();
    g.preset = "resnet50";
    assert_int_equal(tp_step_derive(&g, 4, &err), 0);
    TP_EQ_STR(g.o.preset, "resnet50");
    TP_EQ_U64(g.o.grad_bytes, ps.grad_bytes);
    TP_EQ_U64(g.o.sample_bytes, ps.sample_bytes / 4 * 4);
    TP_EQ_U64(g.o.ckpt_bytes, ps.ckpt_bytes);
    TP_EQ_U64(g.o.batch, ps.batch * 4);
    /* flags win over the preset; what was given is not derived */
    g.grad_bytes = 100u << 20;
    g.have_grad = true;
    g.sample_bytes = 1023;
    g.have_sample = true;
    g.compute_ms = 2.5;
    g.have_compute = true;
    g.o.batch = 7;
    g.have_batch = true;
    g.o.buckets = 9;
    g.have_buckets = true;
    assert_int_equal(tp_step_derive(&g, 4, &err), 0);
    TP_EQ_U64(g.o.grad_bytes, 100u << 20);
    TP_EQ_U64(g.o.sample_bytes, 1020); /* whole floats */
    TP_NEAR(g.o.compute_ms, 2.5, 0);
    TP_EQ_U64(g.o.batch, 7);
    TP_EQ_U64(g.o.samples, 28);
    TP_EQ_INT(g.o.buckets, 9);
    TP_EQ_INT(g.o.dim, 64);
}

static void rank_count_and_shape(void **state)
{
    (void)state;
    tp_error err = {0};
    struct tp_step_given g = given();
    /* derived for one rank before boot, again for the count boot gives */
    assert_int_equal(tp_step_derive(&g, 1, &err), 0);
    TP_EQ_U64(g.o.batch, 32);
    assert_int_equal(tp_step_derive(&g, 6, &err), 0);
    TP_EQ_U64(g.o.batch, 192);
    TP_EQ_U64(g.o.samples, 768);
    /* 25 MiB buckets, 1 to 16 */
    static const struct {
        uint64_t grad;
        unsigned buckets;
    } b[] = {{1, 1}, {25u << 20, 1}, {(25u << 20) + 1, 2}, {100u << 20, 4}, {1ull << 40, 16}};
    for (size_t i = 0; i < sizeof b / sizeof b[0]; i++) {
        g = given();
        g.grad_bytes = b[i].grad;
        g.have_grad = true;
        assert_int_equal(tp_step_derive(&g, 2, &err), 0);
        TP_EQ_INT(g.o.buckets, b[i].buckets);
    }
    /* the model's features: as many as a record holds, at most 64, at least 1 */
    size_t min = tp_model_record_min(0);
    static const uint64_t samples[] = {4, 64, 256, 1024};
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        g = given();
        g.sample_bytes = samples[i];
        g.have_sample = true;
        assert_int_equal(tp_step_derive(&g, 2, &err), 0);
        size_t fit = samples[i] > min ? (samples[i] - min) / 4 : 0;
        TP_EQ_INT(g.o.dim, fit < 64 ? (fit ? fit : 1) : 64);
    }
}

static void bad_preset(void **state)
{
    (void)state;
    tp_error err = {0};
    struct tp_step_given g = given();
    g.preset = "gpt5";
    TP_EQ_INT(tp_step_derive(&g, 2, &err), TP_EUSAGE);
    TP_EQ_STR(err.msg, "--preset gpt5: unknown (resnet50, llm-1.3b, unet3d)");
    TP_EQ_U64(g.o.batch, 0); /* untouched */
    g.preset = "resnet50";
    g.scale = 2;
    TP_EQ_INT(tp_step_derive(&g, 2, &err), TP_EUSAGE);
    TP_HAS(err.msg, "--scale 2");
}

static void config(void **state)
{
    (void)state;
    tp_error err = {0};
    struct tp_step_given g = given();
    assert_int_equal(tp_step_derive(&g, 3, &err), 0);
    json_t *c = tp_step_config_json(&g, 3);
    TP_EQ_STR(json_string_value(json_object_get(c, "preset")), "custom");
    TP_NEAR(json_number_value(json_object_get(c, "scale")), 1.0, 0); /* no preset, no scale */
    TP_EQ_INT(json_integer_value(json_object_get(c, "ranks")), 3);
    TP_EQ_INT(json_integer_value(json_object_get(c, "batch")), 96);
    TP_EQ_STR(json_string_value(json_object_get(c, "reduce")), "plain");
    assert_true(json_is_null(json_object_get(c, "algo")));
    TP_EQ_STR(json_string_value(json_object_get(c, "backend")), "trainpath");
    TP_EQ_STR(json_string_value(json_object_get(c, "engine")), "auto");
    TP_EQ_INT(json_array_size(json_object_get(c, "inject_delay")), 0);
    /* the keys every rank compares, in the document's order */
    static const char *const keys[] = {
        "preset", "scale", "ranks", "steps", "batch", "sample_bytes", "samples", "grad_bytes",
        "overlap", "compute_ms", "dim", "lr", "reduce", "algo", "no_io", "buckets", "dir",
        "prefetch", "qd", "engine", "direct", "ckpt_every", "ckpt_bytes", "ckpt_async",
        "inject_delay", "seed", "runs", "pin", "compute", "mem", "backend", "gemm_size",
    };
    TP_EQ_INT(json_object_size(c), sizeof keys / sizeof keys[0]);
    size_t i = 0;
    const char *k;
    json_t *v;
    json_object_foreach(c, k, v) TP_EQ_STR(k, keys[i++]);
    json_decref(c);
    g.preset = "unet3d";
    g.scale = 0.5;
    g.o.reduce = TP_STEP_ARRIVAL;
    assert_int_equal(tp_step_derive(&g, 2, &err), 0);
    c = tp_step_config_json(&g, 0);
    TP_EQ_STR(json_string_value(json_object_get(c, "preset")), "unet3d");
    TP_NEAR(json_number_value(json_object_get(c, "scale")), 0.5, 0);
    TP_EQ_INT(json_integer_value(json_object_get(c, "ranks")), 0);
    TP_EQ_STR(json_string_value(json_object_get(c, "reduce")), "arrival");
    json_decref(c);
}

static void arena(void **state)
{
    (void)state;
    struct tp_step_opts o = {.grad_bytes = 1u << 20, .dim = 16, .steps = 12};
    size_t gl = tp_model_grad_len(16), w = tp_fx_words(TP_F32);
    for (int n = 1; n <= 8; n++)
        TP_EQ_U64(tp_step_arena_bytes(&o, n),
                  3 * (size_t)o.grad_bytes + (size_t)n * 340000 + (8u << 20) + 4 * gl * w * 8 +
                      (size_t)n * gl * 4 + (size_t)(n + 1) * o.steps * 10 * 8 + (size_t)n * 16);
}

static struct tp_group_opts group(void)
{
    return (struct tp_group_opts){.launcher_name = "mpi", .nranks = 2, .gpu_device = -1};
}

#define REFUSED(g, go, says)                                                                       \
    do {                                                                                           \
        tp_error e_ = {0};                                                                         \
        TP_EQ_INT(tp_step_prepare(&(g), &(go), &e_), TP_EUSAGE);                                   \
        TP_HAS(e_.msg, says);                                                                      \
    } while (0)

static void prepare(void **state)
{
    (void)state;
    char dir[256], sub[300];
    assert_int_equal(tp_test_mkdtemp(dir, sizeof dir, "tp-step-opts"), 0);
    snprintf(sub, sizeof sub, "%s/data", dir);
    tp_error err = {0};
    struct tp_step_given g = given();
    struct tp_group_opts go = group();
    g.o.dir = sub;
    assert_int_equal(tp_step_prepare(&g, &go, &err), 0);
    struct stat st;
    assert_int_equal(stat(sub, &st), 0); /* --dir made */
    TP_EQ_U64(g.o.batch, 32);              /* mpi: one rank until boot says */
    TP_EQ_INT(g.o.grad_cuda, 0);
    go.launcher_name = "local";
    go.nranks = 3;
    assert_int_equal(tp_step_prepare(&g, &go, &err), 0);
    TP_EQ_U64(g.o.batch, 96); /* local: the count is known */

    g = given();
    g.o.dir = sub;
    g.o.ckpt_async = true;
    REFUSED(g, go, "--ckpt-async: needs --ckpt-every");
    g = given();
    g.o.dir = sub;
    g.o.nccl = true;
    go.comm.transport = "ofi"; /* also what -P implies */
    REFUSED(g, go, "--transport with --backend nccl: NCCL picks its own transport");
    go.comm.transport = NULL;
    g.o.algo = "ring";
    REFUSED(g, go, "--algo ring with --backend nccl: NCCL chooses its own algorithm");
    g = given();
    g.o.dir = sub;
    g.o.gemm_n = 64;
    REFUSED(g, go, "--gemm-size: only with --compute gpu");
    g = given();
    g.o.dir = sub;
    go.gpu_device = 1;
    REFUSED(g, go, "--gpu: only with --compute gpu, --mem cuda or --backend nccl");
    g.mem_cuda = 0;
    g.o.compute_gpu = true; /* --mem host stays host */
    go.gpu_device = -1;
    go.launcher_name = "mpi"; /* no tp_step_check: this build may have no GPU path */
    assert_int_equal(tp_step_prepare(&g, &go, &err), 0);
    TP_EQ_INT(g.o.grad_cuda, 0);
    g.mem_cuda = -1; /* not given: the gradient follows the compute */
    assert_int_equal(tp_step_prepare(&g, &go, &err), 0);
    TP_EQ_INT(g.o.grad_cuda, 1);
    g = given();
    g.o.dir = sub;
    g.o.algo = "bogus";
    REFUSED(g, go, "--algo bogus");
    g = given();
    g.o.dir = "/proc/nope";
    REFUSED(g, go, "--dir /proc/nope");
    assert_int_equal(tp_test_rmtree(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults),  cmocka_unit_test(flags_over_preset),
        cmocka_unit_test(rank_count_and_shape), cmocka_unit_test(bad_preset),
        cmocka_unit_test(config),    cmocka_unit_test(arena),
        cmocka_unit_test(prepare),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
