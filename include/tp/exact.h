/* Exact, order-independent summation (the reproducible mode of coll): a
 * superaccumulator holds a sum of doubles as one wide fixed-point integer
 * (Kulisch; the layout of Neal's xsum "large accumulator"), so adding the
 * same values in any order, split across any number of ranks and merged in
 * any grouping, gives bitwise the same accumulator, and the result is
 * rounded once, correctly (to nearest, ties to even), to the target format.
 * f32, f16 and bf16 values convert to double exactly, so one accumulator
 * serves every floating-point dtype. */
#ifndef TP_EXACT_H
#define TP_EXACT_H

#include <stddef.h>
#include <stdint.h>

/* 2098 bits cover every finite double from the smallest subnormal (2^-1074)
 * to the largest (< 2^1024); 32-bit digits in 64-bit words leave 31 bits of
 * carry headroom, so 2^31 values add before a carry pass is needed. */
#define TP_EXACT_DIGITS 68

typedef struct tp_exact {
    int64_t d[TP_EXACT_DIGITS]; /* value = sum d[i] * 2^(32 i - 1074) */
    uint32_t adds;              /* additions since the last carry pass */
    uint8_t inf_pos, inf_neg, nan;
} tp_exact;

/* Set acc to zero. */
void tp_exact_zero(tp_exact *acc);

/* Add one double exactly (inf and NaN are remembered: +inf + -inf is NaN). */
void tp_exact_add(tp_exact *acc, double x);

/* Add n doubles / floats. */
void tp_exact_add_f64(tp_exact *acc, const double *x, size_t n);
void tp_exact_add_f32(tp_exact *acc, const float *x, size_t n);

/* dst += src, exactly (how ranks combine their partial sums). */
void tp_exact_merge(tp_exact *dst, const tp_exact *src);

/* Carry-propagate into the canonical form (digits in [0, 2^32) except the
 * top, which holds the sign), so equal sums have equal bytes. */
void tp_exact_normalize(tp_exact *acc);

/* The sum rounded once to nearest-even double / float (overflow gives inf). */
double tp_exact_f64(const tp_exact *acc);
float tp_exact_f32(const tp_exact *acc);

/* The sum rounded once to bfloat16 / IEEE half, as their 16-bit encodings. */
uint16_t tp_exact_bf16(const tp_exact *acc);
uint16_t tp_exact_f16(const tp_exact *acc);

#endif
