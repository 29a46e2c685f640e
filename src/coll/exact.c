/* Superaccumulator (include/tp/exact.h). A finite double is m * 2^(p-1074)
 * with m < 2^53 and 0 <= p <= 2045, so it lands in at most three 32-bit
 * digits; adding it is three integer additions, which commute and
 * associate, so the accumulator does not depend on order or grouping.
 * Rounding happens once, on the exact sum, at the end. */
#include "tp/exact.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#define TOP (TP_EXACT_DIGITS - 1)
#define CARRY_EVERY (1u << 30) /* additions before int64 digits could overflow */

void tp_exact_zero(tp_exact *acc)
{
    memset(acc, 0, sizeof *acc);
}

void tp_exact_normalize(tp_exact *acc)
{
    for (int i = 0; i < TOP; i++) {
        int64_t carry = acc->d[i] >> 32; /* floor: keeps the digit in [0, 2^32) */
        acc->d[i] -= carry * ((int64_t)1 << 32);
        acc->d[i + 1] += carry;
    }
    acc->adds = 0;
}

void tp_exact_add(tp_exact *acc, double x)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    unsigned e = (unsigned)(bits >> 52) & 0x7ff;
    uint64_t m = bits & ((1ull << 52) - 1);
    bool neg = bits >> 63;
    if (e == 0x7ff) {
        if (m)
            acc->nan = 1;
        else if (neg)
            acc->inf_neg = 1;
        else
            acc->inf_pos = 1;
        return;
    }
    unsigned p = 0;
    if (e) {
        m |= 1ull << 52;
        p = e - 1;
    }
    if (!m)
        return;
    if (++acc->adds >= CARRY_EVERY)
        tp_exact_normalize(acc);
    unsigned i = p >> 5;
    unsigned __int128 v = (unsigned __int128)m << (p & 31);
    int64_t d0 = (int64_t)(uint32_t)v, d1 = (int64_t)(uint32_t)(v >> 32),
            d2 = (int64_t)(uint32_t)(v >> 64);
    if (neg) {
        acc->d[i] -= d0;
        acc->d[i + 1] -= d1;
        acc->d[i + 2] -= d2;
    } else {
        acc->d[i] += d0;
        acc->d[i + 1] += d1;
        acc->d[i + 2] += d2;
    }
}

void tp_exact_add_f64(tp_exact *acc, const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        tp_exact_add(acc, x[i]);
}

void tp_exact_add_f32(tp_exact *acc, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        tp_exact_add(acc, (double)x[i]); /* exact: every float is a double */
}

void tp_exact_merge(tp_exact *dst, const tp_exact *src)
{
    tp_exact s = *src;
    if (dst->adds + (uint64_t)s.adds + 1 >= CARRY_EVERY) {
        tp_exact_normalize(dst);
        tp_exact_normalize(&s);
    }
    for (int i = 0; i < TP_EXACT_DIGITS; i++)
        dst->d[i] += s.d[i];
    dst->adds += s.adds + 1;
    dst->inf_pos |= s.inf_pos;
    dst->inf_neg |= s.inf_neg;
    dst->nan |= s.nan;
}

/* Bits [lo, lo + n) of the magnitude (n <= 64), lo >= 0. */
static uint64_t bits_at(const int64_t *d, int lo, int n)
{
    int i = lo >> 5, s = lo & 31;
    unsigned __int128 w = 0;
    for (int k = 2; k >= 0; k--) {
        w <<= 32;
        if (i + k < TP_EXACT_DIGITS)
            w |= (uint32_t)d[i + k];
    }
    w >>= s;
    return n >= 64 ? (uint64_t)w : (uint64_t)w & ((1ull << n) - 1);
}

/* Any bit set below position pos? */
static bool any_below(const int64_t *d, int pos)
{
    if (pos <= 0)
        return false;
    int i = pos >> 5;
    for (int k = 0; k < i; k++)
        if (d[k])
            return true;
    return ((uint32_t)d[i] & ((1u << (pos & 31)) - 1)) != 0;
}

/* The exact sum rounded to nearest-even with prec significant bits and no
 * bit below 2^(sub_lsb - 1074) (the format's smallest subnormal), as a
 * double (exact in double for every format here). */
static double round_to(const tp_exact *acc, int prec, int sub_lsb)
{
    if (acc->nan || (acc->inf_pos && acc->inf_neg))
        return NAN;
    if (acc->inf_pos)
        return INFINITY;
    if (acc->inf_neg)
        return -INFINITY;
    tp_exact a = *acc;
    tp_exact_normalize(&a);
    bool neg = a.d[TOP] < 0;
    if (neg) {
        for (int i = 0; i < TP_EXACT_DIGITS; i++)
            a.d[i] = -a.d[i];
        tp_exact_normalize(&a);
    }
    int top = TOP;
    while (top >= 0 && a.d[top] == 0)
        top--;
    if (top < 0)
        return 0.0;
    int h = 32 * top + 63 - __builtin_clzll((uint64_t)a.d[top]);
    if (h >= 32 * TOP + 31) /* beyond any finite double */
        return neg ? -INFINITY : INFINITY;
    int lsb = h - (prec - 1);
    if (lsb < sub_lsb)
        lsb = sub_lsb;
    uint64_t q = bits_at(a.d, lsb, h - lsb + 1);
    if (lsb > 0) {
        bool round = bits_at(a.d, lsb - 1, 1) != 0;
        bool sticky = any_below(a.d, lsb - 1);
        if (round && (sticky || (q & 1)))
            q++;
    }
    double v = ldexp((double)q, lsb - 1074);
    return neg ? -v : v;
}

double tp_exact_f64(const tp_exact *acc)
{
    return round_to(acc, 53, 0);
}

float tp_exact_f32(const tp_exact *acc)
{
    return (float)round_to(acc, 24, 1074 - 149); /* exact, or inf past FLT_MAX */
}

uint16_t tp_exact_bf16(const tp_exact *acc)
{
    float f = (float)round_to(acc, 8, 1074 - 133);
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if (isnan(f))
        return 0x7fc0;
    return (uint16_t)(u >> 16); /* exact: the low 16 bits are zero (or inf) */
}

uint16_t tp_exact_f16(const tp_exact *acc)
{
    double v = round_to(acc, 11, 1074 - 24);
    if (isnan(v))
        return 0x7e00;
    uint16_t sign = signbit(v) ? 0x8000 : 0;
    v = fabs(v);
    if (v >= 65536.0) /* rounded to 11 bits: 65504 is the largest finite */
        return sign | 0x7c00;
    if (v < ldexp(1, -14)) /* subnormal: multiples of 2^-24 */
        return sign | (uint16_t)(v * 16777216.0);
    int e;
    double fr = frexp(v, &e); /* v = fr * 2^e, fr in [0.5, 1) */
    uint16_t mant = (uint16_t)((fr * 2048.0) - 1024.0);
    return sign | (uint16_t)((e - 1 + 15) << 10) | mant;
}
