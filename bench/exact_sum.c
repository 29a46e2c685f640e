/* Cost of exact (reproducible) summation on this machine, per element: the
 * price `coll --repro exact` pays outside its messages.
 *   1. a plain double loop against the superaccumulator (tp_exact);
 *   2. per float type and per kernel (scalar, AVX-512 where the CPU has
 *      it), the conversions of --repro exact: block fixed-point (blockfx.h:
 *      the span scan, the load into one int64, the rounding of a sum and of
 *      an average over 3 ranks) beside the wide representation (fixed.h:
 *      load and store, whose words the fast path avoids), and the owner's
 *      whole sum, tp_bfx_sum, of two inputs (f32: the pair row where the
 *      kernel has it) and of three (the blocks), on gradient-like values
 *      (normal around 1e-3, a tenth zeros).
 * Not a test; run `build/exact_sum [N]` (make bench runs it). Buffers are
 * touched before timing; each variant runs 5 times and the fastest is
 * kept. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp/blockfx.h"
#include "tp/clock.h"
#include "tp/dtype.h"
#include "tp/exact.h"
#include "tp/fixed.h"

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

static double gaussian(void)
{
    double u = ((double)(next() >> 11) + 0.5) / 9007199254740992.0;
    double v = ((double)(next() >> 11) + 0.5) / 9007199254740992.0;
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

#define BEST(var, ...)                                                                             \
    do {                                                                                           \
        for (int rep_ = 0; rep_ < 5; rep_++) {                                                     \
            uint64_t t0_ = tp_now_ns();                                                            \
            __VA_ARGS__;                                                                           \
            double d_ = (double)(tp_now_ns() - t0_);                                               \
            if (d_ < var)                                                                          \
                var = d_;                                                                          \
        }                                                                                          \
    } while (0)

static void conversions(enum tp_dtype t, size_t n)
{
    size_t es = tp_dtype_size(t), nb = tp_bfx_blocks(n), words = tp_fx_words(t);
    unsigned char *in = malloc(n * es), *out = malloc(n * es);
    int32_t *span = malloc(2 * nb * sizeof *span);
    int64_t *fx = malloc(n * sizeof *fx);
    uint64_t *wide = malloc(n * words * 8);
    if (!in || !out || !span || !fx || !wide) {
        fprintf(stderr, "exact_sum: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++) {
        float v = next() % 10 == 0 ? 0.0f : (float)(gaussian() * 1e-3);
        if (t == TP_F32)
            memcpy(in + 4 * i, &v, 4);
        else {
            uint16_t h = t == TP_BF16 ? tp_f32_to_bf16(v) : tp_f32_to_f16(v);
            memcpy(in + 2 * i, &h, 2);
        }
    }
    memset(out, 0, n * es);
    memset(fx, 0, n * sizeof *fx);
    memset(wide, 0, n * words * 8);
    double scan = 1e30, load = 1e30, sum = 1e30, avg = 1e30, wload = 1e30, wstore = 1e30;
    BEST(scan, tp_bfx_scan(t, in, n, span));
    int unit = 0, fast = 0;
    for (size_t b = 0; b < nb; b++) { /* one rank's units; the loads take each block's */
        int u = tp_bfx_unit(span + 2 * b, 1);
        fast += u != 0;
        unit = u && (!unit || u < unit) ? u : unit;
    }
    BEST(load, for (size_t b = 0; b < nb; b++) {
        size_t from = b * TP_BFX_BLOCK, k = from + TP_BFX_BLOCK < n ? TP_BFX_BLOCK : n - from;
        tp_bfx_load(t, in + from * es, k, unit, fx + from);
    });
    BEST(sum, tp_bfx_store(t, fx, n, unit, 1, out));
    BEST(avg, tp_bfx_store(t, fx, n, unit, 3, out));
    BEST(wload, tp_fx_load(t, wide, in, n));
    BEST(wstore, tp_fx_store(t, out, wide, n, 1));
    /* tp_bfx_sum, the owner's whole sum: two inputs (the pair's case for
     * f32 where the kernel has it) and three (the blocks) */
    double two = 1e30, three = 1e30;
    const void *ins[3] = {in, out, in};
    memcpy(out, in, n * es);
    BEST(two, tp_bfx_sum(t, ins, 2, n, 1, false, fx));
    BEST(three, tp_bfx_sum(t, ins, 3, n, 1, false, fx));
    printf("  %-5s  %5.2f  %5.2f  %5.2f  %5.2f  |  %5.2f  %5.2f  |  %5.2f  %5.2f   (%zu of %zu "
           "blocks fast)\n",
           tp_dtype_name(t), scan / (double)n, load / (double)n, sum / (double)n,
           avg / (double)n, wload / (double)n, wstore / (double)n, two / (double)n,
           three / (double)n, (size_t)fast, nb);
    free(in);
    free(out);
    free(span);
    free(fx);
    free(wide);
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 16u << 20;
    double *x = malloc(n * sizeof *x);
    float *f = malloc(n * sizeof *f);
    if (!x || !f)
        return 1;
    for (size_t i = 0; i < n; i++) {
        x[i] = ((double)(next() >> 11) / 9007199254740992.0 - 0.5) * 1e6;
        f[i] = (float)x[i];
    }
    tp_clock_init();
    double best[3] = {1e30, 1e30, 1e30}, plain = 0, exact = 0;
    float exact32 = 0;
    for (int rep = 0; rep < 5; rep++) {
        uint64_t t0 = tp_now_ns();
        double acc = 0;
        for (size_t i = 0; i < n; i++)
            acc += x[i];
        uint64_t t1 = tp_now_ns();
        tp_exact e;
        tp_exact_zero(&e);
        tp_exact_add_f64(&e, x, n);
        exact = tp_exact_f64(&e);
        uint64_t t2 = tp_now_ns();
        tp_exact_zero(&e);
        tp_exact_add_f32(&e, f, n);
        exact32 = tp_exact_f32(&e);
        uint64_t t3 = tp_now_ns();
        plain = acc;
        double d[3] = {(double)(t1 - t0), (double)(t2 - t1), (double)(t3 - t2)};
        for (int k = 0; k < 3; k++)
            if (d[k] < best[k])
                best[k] = d[k];
    }
    printf("exact summation of %zu values (fastest of 5)\n", n);
    printf("  plain double loop : %6.2f ns/value  sum %.17g\n", best[0] / (double)n, plain);
    printf("  exact, f64 input  : %6.2f ns/value  sum %.17g  (%.1fx plain)\n", best[1] / (double)n,
           exact, best[1] / best[0]);
    printf("  exact, f32 input  : %6.2f ns/value  sum %.9g\n", best[2] / (double)n,
           (double)exact32);
    free(x);
    free(f);
    printf("\n--repro exact's conversions, ns per element (%zu gradient-like values)\n", n);
    for (const char *const *k = tp_bfx_kernels(); *k; k++) {
        if (!tp_bfx_use(*k)) {
            printf("kernel %s: this CPU cannot run it\n", *k);
            continue;
        }
        printf("kernel %s\n  type   block fixed-point: scan  load  sum   avg/3  |  wide: load  store  |  "
               "tp_bfx_sum: 2 in  3 in\n",
               *k);
        conversions(TP_F32, n);
        conversions(TP_BF16, n);
        conversions(TP_F16, n);
    }
    return 0;
}
