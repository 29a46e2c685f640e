/* The GPU path's logic that runs without a GPU: the compute kernel's
 * calibration arithmetic, NCCL's type and operator codes, the refusals of a
 * host without a device (or a build without the path), and the FI_HMEM
 * probe that decides between GPU memory on the wire and staging. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tp/gpu.h"
#include "tp/transport.h"

static void gemm_reps(void **state)
{
    (void)state;
    assert_int_equal(tp_gpu_gemm_reps(0, 1000), 0);
    assert_int_equal(tp_gpu_gemm_reps(-5, 1000), 0);
    assert_int_equal(tp_gpu_gemm_reps(10e6, 1e5), 100);
    assert_int_equal(tp_gpu_gemm_reps(10e6, 3e5), 33);    /* 33.3 rounds down */
    assert_int_equal(tp_gpu_gemm_reps(10e6, 2.9e5), 34);  /* 34.48 rounds down */
    assert_int_equal(tp_gpu_gemm_reps(1e3, 1e6), 1);      /* at least one */
    assert_int_equal(tp_gpu_gemm_reps(1e6, 0), 1);        /* unmeasured: one */
}

static void gemm_side(void **state)
{
    (void)state;
    /* 8x the time is 2x the side */
    assert_int_equal(tp_gpu_gemm_side(1024, 1e5, 8e5), 2048);
    assert_int_equal(tp_gpu_gemm_side(4096, 8e5, 1e5), 2048);
    /* rounded to a multiple of 256 within [256, 16384] */
    assert_int_equal(tp_gpu_gemm_side(1000, 1e5, 1e5), 1024);
    assert_int_equal(tp_gpu_gemm_side(4096, 1e9, 1), 256);
    assert_int_equal(tp_gpu_gemm_side(4096, 1, 1e12), 16384);
    /* nothing to scale by: the side stays */
    assert_int_equal(tp_gpu_gemm_side(2048, 0, 1e5), 2048);
    assert_int_equal(tp_gpu_gemm_side(2048, 1e5, 0), 2048);
    assert_true(tp_gpu_gemm_flops(4096) == 2.0 * 4096.0 * 4096.0 * 4096.0);
}

static void nccl_codes(void **state)
{
    (void)state;
    if (!tp_gpu_built()) {
        for (int t = 0; t < TP_DTYPE_COUNT; t++)
            assert_int_equal(tp_gpu_nccl_dtype((enum tp_dtype)t), -1);
        skip();
    }
    /* NCCL 2.x: ncclInt32 2, ncclInt64 4, ncclFloat16 6, ncclFloat32 7,
     * ncclFloat64 8, ncclBfloat16 9; ncclSum 0 .. ncclAvg 4 (nccl.h) */
    assert_int_equal(tp_gpu_nccl_dtype(TP_I32), 2);
    assert_int_equal(tp_gpu_nccl_dtype(TP_I64), 4);
    assert_int_equal(tp_gpu_nccl_dtype(TP_F16), 6);
    assert_int_equal(tp_gpu_nccl_dtype(TP_F32), 7);
    assert_int_equal(tp_gpu_nccl_dtype(TP_F64), 8);
    assert_int_equal(tp_gpu_nccl_dtype(TP_BF16), 9);
    assert_int_equal(tp_gpu_nccl_redop(TP_SUM), 0);
    assert_int_equal(tp_gpu_nccl_redop(TP_PROD), 1);
    assert_int_equal(tp_gpu_nccl_redop(TP_MAX), 2);
    assert_int_equal(tp_gpu_nccl_redop(TP_MIN), 3);
    assert_int_equal(tp_gpu_nccl_redop(TP_AVG), 4);
    assert_int_equal(tp_gpu_nccl_dtype(TP_DTYPE_COUNT), -1);
    assert_int_equal(tp_gpu_nccl_redop(TP_REDOP_COUNT), -1);
}

/* Without a device (this suite's machines) opening refuses as a usage
 * error naming the option; with one it opens and says what it is. */
static void open_or_refuse(void **state)
{
    (void)state;
    struct tp_gpu *g = (struct tp_gpu *)1;
    tp_error err = {0};
    struct tp_gpu_opts o = {.what = "--mem cuda", .device = -1,
                            .need = TP_GPU_NCCL | TP_GPU_CUBLAS};
    int rc = tp_gpu_open(&o, &g, &err);
    if (rc == 0) {
        json_t *info = tp_gpu_info(g);
        assert_non_null(json_object_get(info, "name"));
        json_decref(info);
        void *d = NULL;
        assert_int_equal(tp_gpu_alloc(g, 4096, &d, &err), 0);
        unsigned char in[4096], out[4096];
        for (int i = 0; i < 4096; i++)
            in[i] = (unsigned char)(i * 7);
        assert_int_equal(tp_gpu_h2d(g, d, in, sizeof in, &err), 0);
        assert_int_equal(tp_gpu_d2h(g, out, d, sizeof out, &err), 0);
        assert_memory_equal(in, out, sizeof in);
        tp_gpu_free(g, d);
        tp_gpu_close(g);
        return;
    }
    printf("# refused: %s\n", err.msg);
    assert_int_equal(rc, TP_EUSAGE);
    assert_null(g);
    assert_non_null(strstr(err.msg, "--mem cuda: "));
    if (tp_gpu_built())
        assert_true(strstr(err.msg, "no CUDA device") || strstr(err.msg, "cannot load"));
    else
        assert_non_null(strstr(err.msg, "not built"));
    /* with a device named too, the answer is the same refusal */
    o.device = 1023;
    assert_int_equal(tp_gpu_open(&o, &g, &err), TP_EUSAGE);
    assert_null(g);
}

/* The TP_GPU_EMULATE test double: which device a rank takes, the
 * refusals that do not depend on CUDA, and memory that round-trips. */
static void emulated(void **state)
{
    (void)state;
    if (!tp_gpu_built())
        skip();
    setenv("TP_GPU_EMULATE", "2", 1);
    tp_error err = {0};
    struct tp_gpu *g = NULL;
    struct tp_gpu_opts o = {.what = "--mem cuda", .device = -1, .local_rank = 3};
    assert_int_equal(tp_gpu_open(&o, &g, &err), 0);
    assert_true(tp_gpu_emulated(g));
    assert_int_equal(tp_gpu_device(g), 1); /* local rank 3 of 2 devices */
    void *d = NULL;
    char in[64] = "staged through the emulated device", out[64] = {0};
    assert_int_equal(tp_gpu_alloc(g, sizeof in, &d, &err), 0);
    assert_int_equal(tp_gpu_h2d(g, d, in, sizeof in, &err), 0);
    assert_int_equal(tp_gpu_d2h(g, out, d, sizeof out, &err), 0);
    assert_string_equal(out, in);
    tp_gpu_free(g, d);
    tp_gpu_close(g);
    o.device = 5;
    assert_int_equal(tp_gpu_open(&o, &g, &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "device 5: 2 emulated device(s)"));
    o.device = -1;
    o.need = TP_GPU_NCCL;
    assert_int_equal(tp_gpu_open(&o, &g, &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "NCCL is not emulated"));
    unsetenv("TP_GPU_EMULATE");
}

static void build_line(void **state)
{
    (void)state;
    const char *l = tp_gpu_build_line();
    if (tp_gpu_built())
        assert_non_null(strstr(l, "NCCL"));
    else
        assert_non_null(strstr(l, "not built"));
}

static void hmem_probe(void **state)
{
    (void)state;
    assert_false(tp_ofi_hmem_offered("no-such-provider"));
    assert_false(tp_ofi_hmem_offered(""));
    assert_false(tp_ofi_hmem_offered(NULL));
    /* the installed libfabric's own answer, through its fi_info tool */
    static const char *const provs[] = {"shm", "tcp;ofi_rxm"};
    for (size_t i = 0; i < 2; i++) {
        char cmd[200];
        snprintf(cmd, sizeof cmd,
                 "fi_info -p '%s' -c FI_HMEM -t FI_EP_RDM 2>/dev/null | grep -c '^provider:'",
                 provs[i]);
        FILE *f = popen(cmd, "r");
        if (!f)
            skip();
        int count = -1;
        if (fscanf(f, "%d", &count) != 1)
            count = -1;
        int st = pclose(f);
        if (count < 0 || (st != 0 && count != 0)) {
            printf("# fi_info not usable here (%d, status %d)\n", count, st);
            continue;
        }
        printf("# %s: fi_info lists %d FI_HMEM entr%s, probe says %d\n", provs[i], count,
               count == 1 ? "y" : "ies", tp_ofi_hmem_offered(provs[i]));
        assert_int_equal(tp_ofi_hmem_offered(provs[i]), count > 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gemm_reps),      cmocka_unit_test(gemm_side),
        cmocka_unit_test(nccl_codes),     cmocka_unit_test(open_or_refuse),
        cmocka_unit_test(build_line),     cmocka_unit_test(hmem_probe),
        cmocka_unit_test(emulated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
