/* The AVX-512 kernel of block fixed-point (bfx_int.h): 16 elements a step
 * in the scan of f32 (32 of bf16 and f16: the magnitudes' unsigned maximum
 * and nonzero minimum), 8 in the load (through the FPU: widened to f64,
 * scaled by a power of two, VCVTPD2QQ, all exact; by per-element
 * VPSLLVQ / VPSRLVQ and a masked negation where MXCSR reads subnormals as
 * zero) and in the rounding of f32 sums (VCVTQQ2PS, round to nearest even
 * whatever MXCSR says, then the unit added to the exponent field) and of
 * bf16 and f16 sums (in integers); the lanes whose result would be
 * subnormal or infinite, and averages over a rank count that is not a
 * power of two, go to the scalar row's rounding (the same bits,
 * tests/unit/test_blockfx.c). Chosen at run time where the CPU has
 * AVX-512 F, CD, DQ, BW and VL. */
#include <immintrin.h>
#include <string.h>

#include "bfx_int.h"

#define AVX512 __attribute__((target("avx512f,avx512cd,avx512dq,avx512bw,avx512vl")))
/* rounding to nearest, ties to even, given in the instruction (a constant
 * expression: the intrinsics take no variable, even at -O0) */
#define RNE (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

static bool cpu_ok(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl");
}

/* The live lanes of a vector from p, the others zero. A whole vector by
 * a plain load: masked loads from memory measured up to twice as slow on
 * AMD EPYC, as masked stores did (put8). */
#define VLD(NAME, V, E, M, FULL, PLAIN, MASKED)                                                   \
    static inline AVX512 __attribute__((always_inline)) V NAME(const E *p, M live)                \
    {                                                                                             \
        return live == (M)(FULL) ? PLAIN((const void *)p) : MASKED(live, p);                      \
    }
VLD(vld_u32x16, __m512i, uint32_t, __mmask16, 0xffffu, _mm512_loadu_si512, _mm512_maskz_loadu_epi32)
VLD(vld_u16x32, __m512i, uint16_t, __mmask32, 0xffffffffu, _mm512_loadu_si512, _mm512_maskz_loadu_epi16)
VLD(vld_i64x8, __m512i, int64_t, __mmask8, 0xffu, _mm512_loadu_si512, _mm512_maskz_loadu_epi64)
VLD(vld_u32x8, __m256i, uint32_t, __mmask8, 0xffu, _mm256_loadu_si256, _mm256_maskz_loadu_epi32)
VLD(vld_u16x8, __m128i, uint16_t, __mmask8, 0xffu, _mm_loadu_si128, _mm_maskz_loadu_epi16)
VLD(vld_f32x16, __m512, float, __mmask16, 0xffffu, _mm512_loadu_ps, _mm512_maskz_loadu_ps)

/* A block of f32: the magnitudes' largest and smallest nonzero encodings,
 * 16 lanes a step (a zero, wrapped to the largest by the - 1, never wins
 * the minimum; the lanes past the block load as zeros). */
static inline AVX512 __attribute__((always_inline)) void
scan_block32(const uint32_t *in, size_t n, uint32_t *big, uint32_t *small)
{
    const __m512i abs = _mm512_set1_epi32(0x7fffffff), one = _mm512_set1_epi32(1);
    __m512i hi = _mm512_setzero_si512(), lo = _mm512_set1_epi32(-1);
    for (size_t i = 0; i < n; i += 16) {
        __mmask16 live = (__mmask16)(n - i >= 16 ? 0xffffu : (1u << (n - i)) - 1);
        __m512i a = _mm512_and_si512(vld_u32x16(in + i, live), abs);
        hi = _mm512_max_epu32(hi, a);
        lo = _mm512_min_epu32(lo, _mm512_sub_epi32(a, one));
    }
    *big = _mm512_reduce_max_epu32(hi);
    *small = _mm512_reduce_min_epu32(lo) + 1;
}

/* The same for a block of 16-bit encodings, 32 lanes a step. */
static inline AVX512 __attribute__((always_inline)) void
scan_block16(const uint16_t *in, size_t n, uint32_t *big, uint32_t *small)
{
    const __m512i abs = _mm512_set1_epi16(0x7fff), one = _mm512_set1_epi16(1);
    __m512i hi = _mm512_setzero_si512(), lo = _mm512_set1_epi16(-1);
    for (size_t i = 0; i < n; i += 32) {
        __mmask32 live = n - i >= 32 ? 0xffffffffu : (1u << (n - i)) - 1;
        __m512i a = _mm512_and_si512(vld_u16x32(in + i, live), abs);
        hi = _mm512_max_epu16(hi, a);
        lo = _mm512_min_epu16(lo, _mm512_sub_epi16(a, one));
    }
    __m512i h = _mm512_max_epu32(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(hi)),
                                 _mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(hi, 1)));
    __m512i l = _mm512_min_epu32(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(lo)),
                                 _mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(lo, 1)));
    *big = _mm512_reduce_max_epu32(h);
    *small = (_mm512_reduce_min_epu32(l) + 1) & 0xffffu;
}

AVX512 static void scan(enum tp_dtype t, const void *in, size_t n, int32_t *span)
{
    for (size_t b = 0; b * TP_BFX_BLOCK < n; b++) {
        size_t from = b * TP_BFX_BLOCK, k = n - from < TP_BFX_BLOCK ? n - from : TP_BFX_BLOCK;
        uint32_t big, small;
        if (t == TP_F32) {
            scan_block32((const uint32_t *)in + from, k, &big, &small);
            tp__bfx_span(23, 8, big, small, span + 2 * b);
        } else {
            scan_block16((const uint16_t *)in + from, k, &big, &small);
            tp__bfx_span(t == TP_BF16 ? 7 : 10, t == TP_BF16 ? 8 : 5, big, small, span + 2 * b);
        }
    }
}

/* out[0..8) (the live lanes) = v, or += v. A whole vector is stored
 * unmasked: a masked store of a full vector to memory another core had
 * read measured five times slower on AMD EPYC (docs/reproducibility.md). */
static inline AVX512 __attribute__((always_inline)) void put8(int64_t *out, __mmask8 live,
                                                              __m512i v, bool add)
{
    if (add)
        v = _mm512_add_epi64(v, vld_i64x8(out, live));
    if (live == 0xff)
        _mm512_storeu_si512(out, v);
    else
        _mm512_mask_storeu_epi64(out, live, v);
}

static inline AVX512 __attribute__((always_inline)) void
load_all(enum tp_dtype t, unsigned mbits, unsigned ebits, const void *in, size_t n, int lsb,
         bool add, int64_t *out)
{
    const __m512i emax = _mm512_set1_epi64((1 << ebits) - 1),
                  fmask = _mm512_set1_epi64((1 << mbits) - 1),
                  hidden = _mm512_set1_epi64(1 << mbits), one = _mm512_set1_epi64(1),
                  unit = _mm512_set1_epi64(lsb), zero = _mm512_setzero_si512();
    for (size_t i = 0; i < n; i += 8) {
        __mmask8 live = (__mmask8)(n - i >= 8 ? 0xffu : (1u << (n - i)) - 1);
        __m512i u = t == TP_F32
                        ? _mm512_cvtepu32_epi64(vld_u32x8((const uint32_t *)in + i, live))
                        : _mm512_cvtepu16_epi64(vld_u16x8((const uint16_t *)in + i, live));
        __m512i e = _mm512_and_si512(_mm512_srli_epi64(u, mbits), emax);
        __m512i m = _mm512_mask_or_epi64(_mm512_and_si512(u, fmask), _mm512_test_epi64_mask(e, e),
                                         _mm512_and_si512(u, fmask), hidden);
        /* each element's distance to the unit: left when >= 0, else right
         * (the dropped bits are zeros); a count past 63 gives 0, so one of
         * the two shifts is the value and the other 0 (both when 0) */
        __m512i s = _mm512_sub_epi64(_mm512_max_epu64(e, one), unit);
        __m512i v = _mm512_or_si512(_mm512_sllv_epi64(m, s),
                                    _mm512_srlv_epi64(m, _mm512_sub_epi64(zero, s)));
        __mmask8 neg = _mm512_test_epi64_mask(u, _mm512_set1_epi64(1ll << (mbits + ebits)));
        v = _mm512_mask_sub_epi64(v, neg, zero, v);
        put8(out + i, live, v, add);
    }
}

/* The load by the FPU, 8 lanes a step: each value widened to f64 (exact:
 * bf16 is f32's top half, f16 by VCVTPH2PS), multiplied by the power of two
 * 2^(bias + mbits - lsb) (exact: a significand of at most 24 bits times a
 * power of two within f64's range), and converted to int64 (VCVTPD2QQ, exact:
 * an integer that fits). Used unless MXCSR's denormals-are-zero bit is
 * set, which would read a subnormal input as zero. */
static inline AVX512 __attribute__((always_inline)) void
load_fp(enum tp_dtype t, const void *in, size_t n, int lsb, bool add, int64_t *out)
{
    int bias_m = t == TP_F32 ? 150 : t == TP_BF16 ? 134 : 25;
    union {
        uint64_t u;
        double d;
    } scale = {.u = (uint64_t)(1023 + bias_m - lsb) << 52};
    const __m512d k = _mm512_set1_pd(scale.d);
    for (size_t i = 0; i < n; i += 8) {
        __mmask8 live = (__mmask8)(n - i >= 8 ? 0xffu : (1u << (n - i)) - 1);
        __m256 f;
        if (t == TP_F32)
            f = _mm256_castsi256_ps(vld_u32x8((const uint32_t *)in + i, live));
        else if (t == TP_BF16)
            f = _mm256_castsi256_ps(_mm256_slli_epi32(
                _mm256_cvtepu16_epi32(vld_u16x8((const uint16_t *)in + i, live)), 16));
        else /* VCVTPH2PS of AVX-512 F: 16 lanes, the low 8 ours */
            f = _mm512_castps512_ps256(_mm512_cvtph_ps(
                _mm256_zextsi128_si256(vld_u16x8((const uint16_t *)in + i, live))));
        __m512i v = _mm512_cvtpd_epi64(_mm512_mul_pd(_mm512_cvtps_pd(f), k));
        put8(out + i, live, v, add);
    }
}

/* out[i] = (or, add: out[i] +=) in[i] as an int64 at lsb */
static inline AVX512 __attribute__((always_inline)) void
load_any(enum tp_dtype t, const void *in, size_t n, int lsb, bool add, int64_t *out)
{
    if (!(_mm_getcsr() & 0x40)) /* DAZ clear */
        load_fp(t, in, n, lsb, add, out);
    else if (t == TP_F32)
        load_all(TP_F32, 23, 8, in, n, lsb, add, out);
    else if (t == TP_BF16)
        load_all(TP_BF16, 7, 8, in, n, lsb, add, out);
    else
        load_all(TP_F16, 10, 5, in, n, lsb, add, out);
}

AVX512 static void load(enum tp_dtype t, const void *in, size_t n, int lsb, int64_t *out)
{
    load_any(t, in, n, lsb, false, out);
}

AVX512 static void load_add(enum tp_dtype t, const void *in, size_t n, int lsb, int64_t *out)
{
    load_any(t, in, n, lsb, true, out);
}

/* out[0..8) (the live lanes) = v, 32-bit lanes; whole vectors unmasked (put8) */
static inline AVX512 __attribute__((always_inline)) void put8f(uint32_t *out, __mmask8 live,
                                                               __m256i v)
{
    if (live == 0xff)
        _mm256_storeu_si256((__m256i *)out, v);
    else
        _mm256_mask_storeu_epi32(out, live, v);
}

/* The f32 encodings of 8 int64 sums v at a unit that keeps every result
 * normal and finite (add: the unit's exponent, ue << 23): VCVTQQ2PS's one
 * rounding, the unit one integer add; zeros stay +0. */
static inline AVX512 __attribute__((always_inline)) void round8(uint32_t *out, __mmask8 live,
                                                                __m512i v, __m256i add)
{
    __m256i b = _mm256_castps_si256(
        _mm512_cvt_roundepi64_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    put8f(out, live, _mm256_maskz_add_epi32(_mm512_test_epi64_mask(v, v), b, add));
}

/* f32 sums: VCVTQQ2PS rounds each int64 once to 24 bits (nearest, ties to
 * even); the unit is a power of two added to the exponent field, exact
 * while the result stays normal and finite; other lanes, the scalar
 * rounding. */
AVX512 static void store_f32_sum(const int64_t *in, size_t n, int lsb, uint32_t *out)
{
    const int ue = lsb - 150;
    /* A nonzero int64 converts to a float of exponent field 127 to 190
     * (1 <= |v| <= 2^63 after rounding); with -126 <= ue <= 64 every
     * result is normal and finite, so the unit is one integer add to the
     * encoding, lane by lane, with no checks (gradients' units always are). */
    if (ue >= -126 && ue <= 64) {
        const __m256i add = _mm256_set1_epi32(ue * (1 << 23));
        for (size_t i = 0; i < n; i += 8) {
            __mmask8 live = (__mmask8)(n - i >= 8 ? 0xffu : (1u << (n - i)) - 1);
            round8(out + i, live, vld_i64x8(in + i, live), add);
        }
        return;
    }
    const __m256i emask = _mm256_set1_epi32(0xff), keep = _mm256_set1_epi32((int)0x807fffffu),
                  shift = _mm256_set1_epi32(ue), lo = _mm256_set1_epi32(1),
                  hi = _mm256_set1_epi32(254);
    for (size_t i = 0; i < n; i += 8) {
        __mmask8 live = (__mmask8)(n - i >= 8 ? 0xffu : (1u << (n - i)) - 1);
        __m512i v = vld_i64x8(in + i, live);
        __m256i b = _mm256_castps_si256(
            _mm512_cvt_roundepi64_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        __m256i e = _mm256_add_epi32(_mm256_and_si256(_mm256_srli_epi32(b, 23), emask), shift);
        __mmask8 nonzero = _mm512_test_epi64_mask(v, v);
        __mmask8 ok = nonzero & _mm256_cmpge_epi32_mask(e, lo) & _mm256_cmple_epi32_mask(e, hi);
        __m256i r = _mm256_maskz_or_epi32(ok, _mm256_and_si256(b, keep),
                                          _mm256_slli_epi32(e, 23));
        put8f(out + i, live, r);
        for (__mmask8 rest = live & nonzero & (__mmask8)~ok; rest; rest &= (__mmask8)(rest - 1)) {
            unsigned k = (unsigned)__builtin_ctz(rest);
            out[i + k] = tp__bfx_round(TP_F32, in[i + k], lsb, 1);
        }
    }
}

/* bf16 and f16 sums: the rounding in integers, 8 lanes a step: the
 * magnitude's highest bit (VPLZCNTQ) sets how many bits are dropped, which
 * round to nearest, ties to even; a carry into a new binade shifts once
 * more. Lanes whose result would be subnormal or infinite, the scalar
 * rounding. */
static inline AVX512 __attribute__((always_inline)) void
store_half_sum(enum tp_dtype t, unsigned mbits, unsigned ebits, const int64_t *in, size_t n,
               int lsb, uint16_t *out)
{
    const int bias = (1 << (ebits - 1)) - 1, ue = lsb - bias - (int)mbits;
    const int emin_unit = 1 - bias - (int)mbits;
    const __m512i zero = _mm512_setzero_si512(), one = _mm512_set1_epi64(1),
                  c63 = _mm512_set1_epi64(63), vm = _mm512_set1_epi64(mbits),
                  top = _mm512_set1_epi64(1ll << (mbits + 1)),
                  fmask = _mm512_set1_epi64((1ll << mbits) - 1),
                  ebias = _mm512_set1_epi64(ue + (int)mbits + bias),
                  sign = _mm512_set1_epi64(1ll << (mbits + ebits));
    for (size_t i = 0; i < n; i += 8) {
        __mmask8 live = (__mmask8)(n - i >= 8 ? 0xffu : (1u << (n - i)) - 1);
        __m512i v = vld_i64x8(in + i, live);
        __mmask8 nonzero = _mm512_test_epi64_mask(v, v), neg = _mm512_movepi64_mask(v);
        __m512i mag = _mm512_abs_epi64(v);
        __m512i k = _mm512_sub_epi64(c63, _mm512_lzcnt_epi64(mag)); /* the highest bit */
        __m512i s = _mm512_sub_epi64(k, vm);                        /* bits to drop */
        __m512i sp = _mm512_max_epi64(s, zero), sn = _mm512_max_epi64(_mm512_sub_epi64(zero, s), zero);
        __m512i r = _mm512_srlv_epi64(mag, sp);
        __m512i dropped = _mm512_sub_epi64(mag, _mm512_sllv_epi64(r, sp));
        __m512i half = _mm512_sllv_epi64(one, _mm512_sub_epi64(sp, one)); /* 0 when sp is 0 */
        __mmask8 dropping = _mm512_cmpgt_epi64_mask(sp, zero);
        __mmask8 up = dropping & (_mm512_cmpgt_epu64_mask(dropped, half) |
                                  (_mm512_cmpeq_epi64_mask(dropped, half) &
                                   _mm512_test_epi64_mask(r, one)));
        r = _mm512_mask_add_epi64(r, up, r, one);
        r = _mm512_sllv_epi64(r, sn); /* nothing dropped: exact */
        __mmask8 carry = _mm512_cmpeq_epi64_mask(r, top);
        r = _mm512_mask_srli_epi64(r, carry, r, 1);
        __m512i unit = _mm512_mask_add_epi64(s, carry, s, one); /* last bit, in units of ue */
        __m512i bexp = _mm512_add_epi64(unit, ebias);
        /* normal and finite: 1 <= bexp < emax */
        __mmask8 ok = nonzero & _mm512_cmpgt_epi64_mask(bexp, zero) &
                      _mm512_cmplt_epi64_mask(bexp, _mm512_set1_epi64((1 << ebits) - 1));
        __m512i bits = _mm512_or_si512(_mm512_slli_epi64(bexp, mbits), _mm512_and_si512(r, fmask));
        bits = _mm512_mask_or_epi64(bits, neg, bits, sign);
        bits = _mm512_maskz_mov_epi64(ok, bits);
        if (live == 0xff)
            _mm_storeu_si128((__m128i *)(out + i), _mm512_cvtepi64_epi16(bits));
        else
            _mm_mask_storeu_epi16(out + i, live, _mm512_cvtepi64_epi16(bits));
        for (__mmask8 rest = live & nonzero & (__mmask8)~ok; rest; rest &= (__mmask8)(rest - 1)) {
            unsigned j = (unsigned)__builtin_ctz(rest);
            out[i + j] = (uint16_t)tp__bfx_round(t, in[i + j], lsb, 1);
        }
    }
    (void)emin_unit;
}

/* tp_bfx_sum's block in registers, f32 only: every input loaded through
 * the FPU (load_fp), the int64s added, the sum rounded as store_f32_sum's
 * fast case; where that case does not hold (a unit that could give a
 * subnormal or an infinite result, MXCSR's denormals-are-zero bit set, or
 * another type), nothing is done. */
AVX512 static bool sum(enum tp_dtype t, const void *const *in, int nin, size_t off, size_t n,
                       int lsb, int shift, void *out)
{
    const int ue = lsb - shift - 150;
    if (t != TP_F32 || ue < -126 || ue > 64 || (_mm_getcsr() & 0x40))
        return false;
    /* the scale 2^(150 - lsb) is a normal f32 throughout the fast case
     * (24 <= lsb <= 214 + shift), so each value is scaled in f32 (exact: a
     * power of two, the product an integer of at most 62 bits) and
     * converted straight to int64 (VCVTPS2QQ, exact) */
    union {
        uint32_t u;
        float f;
    } scale = {.u = (uint32_t)(127 + 150 - lsb) << 23};
    const __m256 k = _mm256_set1_ps(scale.f);
    const __m256i add = _mm256_set1_epi32(ue * (1 << 23));
    uint32_t *o = out;
    for (size_t i = 0; i < n; i += 8) {
        __mmask8 live = (__mmask8)(n - i >= 8 ? 0xffu : (1u << (n - i)) - 1);
        __m512i acc = _mm512_setzero_si512();
        for (int r = 0; r < nin; r++) {
            __m256 f = _mm256_castsi256_ps(vld_u32x8((const uint32_t *)in[r] + off + i, live));
            acc = _mm512_add_epi64(acc, _mm512_cvtps_epi64(_mm256_mul_ps(f, k)));
        }
        round8(o + i, live, acc, add);
    }
    return true;
}

/* tp_bfx_sum of two f32 inputs by one addition a lane (bfx_int.h: pair),
 * 16 lanes a step. VADDPS with its rounding in the instruction (to
 * nearest, ties to even, whatever MXCSR's rounding field says) is the
 * correctly rounded exact sum of its two operands; +0 is added so that
 * -0 + -0 gives +0, as the blocks do. An average halves that: where the
 * exact sum is below 2^-125 it is the sum itself (two floats' sum there
 * is a float), so the halving is its one rounding; above, the rounded
 * sum's half is normal and exact, and halving commutes with rounding
 * between normal binades. A NaN or an infinity (an input, or a sum that
 * overflowed, whose half might not have) ends the run. With MXCSR's
 * flush-to-zero or denormals-are-zero bit set (a subnormal result or
 * input would read as zero), nothing. */
AVX512 static size_t pair(const float *a, const float *b, size_t n, int shift, float *out)
{
    if (_mm_getcsr() & 0x8040) /* FTZ, DAZ */
        return 0;
    const __m512i expo = _mm512_set1_epi32(0x7f800000);
    const __m512 zero = _mm512_setzero_ps(), half = _mm512_set1_ps(0.5f);
    size_t i = 0;
    /* four vectors a step and one test of their exponents, so the next
     * loads go out while this step is checked (a vector a step with its
     * own test measured twice the plain sum's time inside a shared-memory
     * allreduce). The or of four exponents is all ones wherever one of
     * them is, and may be where none is: the vectors one at a time below
     * decide then. */
    for (; n - i >= 64; i += 64) {
        __m512 s[4];
        __m512i e = _mm512_setzero_si512();
        for (int v = 0; v < 4; v++) {
            s[v] = _mm512_add_round_ps(_mm512_loadu_ps(a + i + 16 * v),
                                       _mm512_loadu_ps(b + i + 16 * v), RNE);
            e = _mm512_or_si512(e, _mm512_and_si512(_mm512_castps_si512(s[v]), expo));
        }
        if (_mm512_cmpeq_epi32_mask(e, expo))
            break;
        for (int v = 0; v < 4; v++) {
            s[v] = _mm512_add_round_ps(s[v], zero, RNE);
            if (shift)
                s[v] = _mm512_mul_round_ps(s[v], half, RNE);
            _mm512_storeu_ps(out + i + 16 * v, s[v]);
        }
    }
    for (; i < n; i += 16) {
        __mmask16 live = (__mmask16)(n - i >= 16 ? 0xffffu : (1u << (n - i)) - 1);
        __m512 s = _mm512_add_round_ps(vld_f32x16(a + i, live), vld_f32x16(b + i, live), RNE);
        __m512i e = _mm512_and_si512(_mm512_castps_si512(s), expo);
        if (_mm512_cmpeq_epi32_mask(e, expo))
            return i;
        s = _mm512_add_round_ps(s, zero, RNE);
        if (shift)
            s = _mm512_mul_round_ps(s, half, RNE);
        if (live == 0xffff)
            _mm512_storeu_ps(out + i, s);
        else
            _mm512_mask_storeu_ps(out + i, live, s);
    }
    return n;
}

AVX512 static void store(enum tp_dtype t, const int64_t *in, size_t n, int lsb, uint32_t divisor,
                         void *out)
{
    if (divisor > 1) {
        tp__bfx_scalar.store(t, in, n, lsb, divisor, out);
        return;
    }
    if (t == TP_F32)
        store_f32_sum(in, n, lsb, out);
    else if (t == TP_BF16)
        store_half_sum(TP_BF16, 7, 8, in, n, lsb, out);
    else
        store_half_sum(TP_F16, 10, 5, in, n, lsb, out);
}

const struct tp__bfx_kernel tp__bfx_avx512 = {
    .name = "avx512",
    .cpu_ok = cpu_ok,
    .scan = scan,
    .load = load,
    .load_add = load_add,
    .store = store,
    .sum = sum,
    .pair = pair,
};
