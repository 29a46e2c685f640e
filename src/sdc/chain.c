/* The SDC screen's workload: one step of the chain (include/tp/sdc.h).
 *
 * Every node and every core must compute the same bits, so nothing here
 * may depend on the machine: the product runs in one fixed order of f32
 * multiplies and adds (the compiler may vectorise over j, which keeps each
 * element's order), and this file is compiled with -ffp-contract=off
 * (src/meson.build), so no multiply and add fuse into one FMA on a CPU
 * that has them; the column sums are exact (block fixed point: every
 * value one int64 at a shared unit, added in any order, rounded once), so
 * the AVX-512 and scalar kernels give the same sums; the next input is
 * rounded to a fixed grid. Only IEEE operations in round-to-nearest,
 * which every x86-64 core performs alike.
 *
 * Why the grid: the weights are multiples of 2^-9 in [-1, 1) and the input
 * multiples of 2^-16 in (-2, 2), so every product and every partial sum is
 * a multiple of 2^-25 below 2^7 in magnitude: its nonzero magnitudes lie
 * within 2^-25 .. 2^7, so the block's span (from the largest exponent's
 * top bit to the smallest's bit 0) is at most 32 + 24 bits, and 64 values
 * add in an int64 with room: the sums take the exact fast path on every
 * step of a sound chain. */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "sdc_int.h"
#include "tp/blockfx.h"
#include "tp/pattern.h"

#define N TP_SDC_N
#define NN (N * N)
#define GRID 65536.0f /* 2^16 */
/* t + ROUND - ROUND is t rounded to an integer, ties to even, for |t| <
 * 2^22 (the sum lands where a float's unit is 1): rintf without a call */
#define ROUND 12582912.0f /* 1.5 * 2^23 */

/* The draws of the weights and of each step's fresh input: independent
 * streams of splitmix64 keyed by the seed. */
#define W_STREAM 0x5744c5a17e1e70f1ull
#define R_STREAM 0x52d1e8f09b3c4a27ull

static uint64_t draw(uint64_t seed, uint64_t stream, uint64_t i)
{
    return tp_splitmix64(tp_splitmix64(seed ^ stream) + i);
}

/* The fresh input of step s, element i (key: the R stream's, of the
 * seed): a multiple of 2^-16 in [-1, 1). */
static float fresh(uint64_t key, uint64_t s, size_t i)
{
    int64_t v = (int64_t)(tp_splitmix64(key + s * NN + i) >> 47) - (1 << 16);
    return (float)v / GRID;
}

/* x = fresh(s) + y scaled below 1 by a power of two, on the grid of 2^-16;
 * a value that is not finite (only a flipped bit makes one) counts as 0. */
static void next_input(struct tp__sdc_state *st, uint64_t s)
{
    float top = 0;
    for (size_t i = 0; i < NN; i++)
        if (isfinite(st->y[i]) && fabsf(st->y[i]) > top)
            top = fabsf(st->y[i]);
    int e = 0;
    if (top > 0)
        frexpf(top, &e); /* top = m 2^e, 0.5 <= m < 1 */
    /* 2^-e as a float where it is one (a sound chain: always) */
    float scale = e > -127 && e < 127 ? ldexpf(1.0f, -e) : 0.0f;
    uint64_t key = tp_splitmix64(st->seed ^ R_STREAM);
    for (size_t i = 0; i < NN; i++) {
        float y = st->y[i];
        float v = !isfinite(y) ? 0.0f : scale > 0 ? y * scale : ldexpf(y, -e);
        float t = (fresh(key, s, i) + v) * GRID;
        st->x[i] = (t + ROUND - ROUND) / GRID;
    }
}

/* The column sums of y, exact: one unit for the whole matrix (the spans
 * of its blocks combined) with room for N values a column; a matrix too
 * wide for one int64 (a flipped exponent bit) sums in double, in order. */
static void column_sums(struct tp__sdc_state *st)
{
    int32_t span[2 * ((NN + TP_BFX_BLOCK - 1) / TP_BFX_BLOCK)], all[2] = {0, 0};
    size_t blocks = tp_bfx_blocks(NN);
    tp_bfx_scan(TP_F32, st->y, NN, span);
    for (size_t b = 0; b < blocks; b++)
        for (int k = 0; k < 2; k++)
            all[k] = span[2 * b + k] > all[k] ? span[2 * b + k] : all[k];
    int lsb = tp_bfx_unit(all, N);
    if (lsb > 0) {
        int64_t col[N] = {0};
        tp_bfx_load(TP_F32, st->y, NN, lsb, st->ints);
        for (size_t i = 0; i < N; i++)
            for (size_t j = 0; j < N; j++)
                col[j] += st->ints[i * N + j];
        tp_bfx_store(TP_F32, col, N, lsb, 1, st->sums);
        return;
    }
    for (size_t j = 0; j < N; j++) {
        double sum = 0;
        for (size_t i = 0; i < N; i++)
            sum += st->y[i * N + j];
        st->sums[j] = (float)sum;
    }
}

int tp__sdc_init(struct tp__sdc_state *st, uint64_t seed, const struct tp__sdc_device *dev,
                 tp_error *err)
{
    memset(st, 0, sizeof *st);
    st->seed = seed;
    st->dev = dev;
    st->x = aligned_alloc(64, NN * sizeof(float));
    st->w = aligned_alloc(64, NN * sizeof(float));
    st->y = aligned_alloc(64, NN * sizeof(float));
    st->sums = aligned_alloc(64, N * sizeof(float));
    st->ints = aligned_alloc(64, NN * sizeof(int64_t));
    if (!st->x || !st->w || !st->y || !st->sums || !st->ints) {
        tp__sdc_fini(st);
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < NN; i++) {
        st->w[i] = (float)((int)(draw(seed, W_STREAM, i) >> 54) - 512) / 512.0f;
        st->x[i] = fresh(tp_splitmix64(seed ^ R_STREAM), 1, i);
    }
    unsigned char head[28] = "trainpath-sdc/1";
    if (dev) /* 16 bytes at most: the seed follows */
        memcpy(head, "tp-sdc-device/1", 16);
    for (int b = 0; b < 8; b++)
        head[16 + b] = (unsigned char)(seed >> (8 * b));
    head[24] = N;
    crypto_hash_sha256(st->h, head, sizeof head);
    return 0;
}

/* y = x w: y[i][j] = (((0 + x[i][0] w[0][j]) + x[i][1] w[1][j]) + ...), each
 * product and each sum rounded to f32, in this order for every j. */
static void product(const float *restrict x, const float *restrict w, float *restrict y)
{
    for (size_t i = 0; i < N; i++) {
        float *restrict yi = y + i * N;
        for (size_t j = 0; j < N; j++)
            yi[j] = 0;
        for (size_t k = 0; k < N; k++) {
            const float a = x[i * N + k];
            const float *restrict wk = w + k * N;
            for (size_t j = 0; j < N; j++)
                yi[j] += a * wk[j];
        }
    }
}

int tp__sdc_step(struct tp__sdc_state *st, uint64_t s, int64_t flip, tp_error *err)
{
    if (flip >= 0) { /* the test hook: one bit of this step's input */
        uint32_t u;
        memcpy(&u, &st->x[flip / 32], 4);
        u ^= UINT32_C(1) << (flip % 32);
        memcpy(&st->x[flip / 32], &u, 4);
    }
    if (!st->dev)
        product(st->x, st->w, st->y);
    else if (st->dev->product(st->dev->ctx, st->x, st->y, err) < 0)
        return err->code;
    column_sums(st);
    crypto_hash_sha256_state h;
    crypto_hash_sha256_init(&h);
    crypto_hash_sha256_update(&h, st->h, sizeof st->h);
    crypto_hash_sha256_update(&h, (const unsigned char *)st->y, NN * sizeof(float));
    crypto_hash_sha256_update(&h, (const unsigned char *)st->sums, N * sizeof(float));
    crypto_hash_sha256_final(&h, st->h);
    next_input(st, s + 1);
    return 0;
}

void tp__sdc_fini(struct tp__sdc_state *st)
{
    free(st->x);
    free(st->w);
    free(st->y);
    free(st->sums);
    free(st->ints);
    memset(st, 0, sizeof *st);
}
