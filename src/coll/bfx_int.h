/* Internal to src/coll: the kernels of block fixed-point (blockfx.c), one
 * row each in its own file, best first: bfx_avx512.c (AVX-512 F, CD, DQ,
 * BW and VL), bfx_avx2.c (AVX2: Zen 2 and 3) and bfx_scalar.c (portable
 * C, every CPU). Each does exactly what
 * include/tp/blockfx.h says of tp_bfx_scan, tp_bfx_load and tp_bfx_store
 * (load_add: tp_bfx_load added into out, sum and pair: tp_bfx_sum's
 * shortcuts),
 * bit for bit the same as the scalar row (tests/unit/test_blockfx.c runs
 * every row the CPU can). Adding a kernel is one file and one line in
 * blockfx.c's table. */
#ifndef TP_BFX_INT_H
#define TP_BFX_INT_H

#include "tp/blockfx.h"

struct tp__bfx_kernel {
    const char *name;
    bool (*cpu_ok)(void); /* can this CPU run it? */
    void (*scan)(enum tp_dtype t, const void *in, size_t n, int32_t *span);
    void (*load)(enum tp_dtype t, const void *in, size_t n, int lsb, int64_t *out);
    void (*load_add)(enum tp_dtype t, const void *in, size_t n, int lsb, int64_t *out);
    void (*store)(enum tp_dtype t, const int64_t *in, size_t n, int lsb, uint32_t divisor,
                  void *out);
    /* Optional (NULL: none): tp_bfx_sum's block, elements [off, off + n)
     * of in[0 .. nin), loaded at lsb, added, and rounded at lsb - shift
     * (divided by 2^shift) in registers, into out[0 .. n); false, having
     * done nothing, where the kernel has no such fast case (then the load,
     * the load that adds and the store do it). */
    bool (*sum)(enum tp_dtype t, const void *const *in, int nin, size_t off, size_t n, int lsb,
                int shift, void *out);
    /* Optional (NULL: none): tp_bfx_sum of two f32 inputs where one IEEE
     * addition a lane, rounded to nearest, ties to even, is the exact
     * sum's correct rounding (it always is, for two operands): out[i] =
     * a[i] + b[i], halved where shift is 1, from i = 0 on, until the end
     * or the first vector with a lane that needs more (a NaN or an
     * infinity, an input or a sum that overflowed); returns how
     * many elements it wrote (a whole number of vectors, or n), the rest
     * left to the blocks. out may be a (element i over element i). */
    size_t (*pair)(const float *a, const float *b, size_t n, int shift, float *out);
};

extern const struct tp__bfx_kernel tp__bfx_scalar, tp__bfx_avx2, tp__bfx_avx512;

/* A block's span (tp_bfx_scan) from its elements' largest magnitude
 * encoding big (the sign bit cleared) and its smallest nonzero one small
 * (0 when every element is zero), in a format of mbits fraction and ebits
 * exponent bits: the positions that bound what its values can hold. */
static inline void tp__bfx_span(unsigned mbits, unsigned ebits, uint32_t big, uint32_t small,
                                int32_t *span)
{
    uint32_t emax = (1u << ebits) - 1, ehi = big >> mbits, elo = small >> mbits;
    span[0] = !big ? 0 : ehi == emax ? TP_BFX_NONFINITE : (int32_t)((ehi ? ehi : 1) + mbits);
    span[1] = !big ? 0 : TP_BFX_NL - (int32_t)(elo ? elo : 1);
}

/* One element, as tp_bfx_store (the scalar row's rounding): the encoding
 * of v * 2^(lsb - bias - mbits) / divisor in type t, for the lanes a
 * faster kernel leaves (subnormal and infinite results, averages). */
uint32_t tp__bfx_round(enum tp_dtype t, int64_t v, int lsb, uint32_t divisor);

#endif
