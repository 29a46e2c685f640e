/* The AVX2 kernel of block fixed-point (bfx_int.h), for CPUs with AVX2 but
 * no AVX-512 (AMD Zen 2 and 3), whose row comes first. 8 elements a step
 * in the scan of f32 (16 of bf16 and f16: the magnitudes' unsigned maximum
 * and nonzero minimum); 8 in the load, in integers whatever MXCSR says
 * (per-element VPSLLVQ / VPSRLVQ from each value's exponent, then a
 * negation where the sign is set); 8 in the rounding of sums of every
 * type. AVX2 converts no int64 to float: where a step's 8 sums are below
 * 2^51 in magnitude (gradients' are) each is a double exactly, then f32
 * takes VCVTPD2PS's one rounding where MXCSR rounds to nearest, and
 * otherwise (bf16, f16) the double's bits are rounded in integers; larger
 * sums are rounded in integers from each magnitude's highest bit. The
 * unit is an integer add to the exponent field. The lanes whose result
 * would be subnormal or infinite, and averages over a rank count that is
 * not a power of two, go to the scalar row's rounding (the same bits,
 * tests/unit/test_blockfx.c). A message's last partial vector goes
 * through a zeroed copy of one step. The pair (two f32 inputs) adds with
 * VADDPS, which rounds as MXCSR says: it runs only where MXCSR holds its
 * default. No block sum in registers (sum). */
#include <immintrin.h>
#include <string.h>

#include "bfx_int.h"

#define AVX2 __attribute__((target("avx2")))
#define INLINE static inline AVX2 __attribute__((always_inline))

static bool cpu_ok(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
}

/* ---- the span ---- */

/* The largest and smallest unsigned 32-bit lanes of v. */
INLINE uint32_t hmax_u32(__m256i v)
{
    __m128i x = _mm_max_epu32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    x = _mm_max_epu32(x, _mm_shuffle_epi32(x, _MM_SHUFFLE(1, 0, 3, 2)));
    x = _mm_max_epu32(x, _mm_shuffle_epi32(x, _MM_SHUFFLE(2, 3, 0, 1)));
    return (uint32_t)_mm_cvtsi128_si32(x);
}

INLINE uint32_t hmin_u32(__m256i v)
{
    __m128i x = _mm_min_epu32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    x = _mm_min_epu32(x, _mm_shuffle_epi32(x, _MM_SHUFFLE(1, 0, 3, 2)));
    x = _mm_min_epu32(x, _mm_shuffle_epi32(x, _MM_SHUFFLE(2, 3, 0, 1)));
    return (uint32_t)_mm_cvtsi128_si32(x);
}

/* A block of f32: the magnitudes' largest and smallest nonzero encodings,
 * 8 lanes a step, two steps in flight (a zero, wrapped to the largest by
 * the - 1, never wins the minimum; the tail is a zeroed copy). */
INLINE void scan_block32(const uint32_t *in, size_t n, uint32_t *big, uint32_t *small)
{
    const __m256i abs = _mm256_set1_epi32(0x7fffffff), one = _mm256_set1_epi32(1);
    __m256i hi0 = _mm256_setzero_si256(), hi1 = hi0, lo0 = _mm256_set1_epi32(-1), lo1 = lo0;
    size_t i = 0;
    for (; n - i >= 16; i += 16) {
        __m256i a = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(in + i)), abs);
        __m256i b = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(in + i + 8)), abs);
        hi0 = _mm256_max_epu32(hi0, a);
        hi1 = _mm256_max_epu32(hi1, b);
        lo0 = _mm256_min_epu32(lo0, _mm256_sub_epi32(a, one));
        lo1 = _mm256_min_epu32(lo1, _mm256_sub_epi32(b, one));
    }
    for (; i < n; i += 8) {
        uint32_t tail[8] = {0};
        const uint32_t *p = in + i;
        if (n - i < 8) {
            memcpy(tail, p, (n - i) * sizeof *p);
            p = tail;
        }
        __m256i a = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)p), abs);
        hi0 = _mm256_max_epu32(hi0, a);
        lo0 = _mm256_min_epu32(lo0, _mm256_sub_epi32(a, one));
    }
    *big = hmax_u32(_mm256_max_epu32(hi0, hi1));
    *small = hmin_u32(_mm256_min_epu32(lo0, lo1)) + 1;
}

/* The same for a block of 16-bit encodings, 16 lanes a step; the 8 lanes
 * left reduce by PHMINPOSUW (of the complement, for the maximum). */
INLINE void scan_block16(const uint16_t *in, size_t n, uint32_t *big, uint32_t *small)
{
    const __m256i abs = _mm256_set1_epi16(0x7fff), one = _mm256_set1_epi16(1);
    __m256i hi = _mm256_setzero_si256(), lo = _mm256_set1_epi16(-1);
    for (size_t i = 0; i < n; i += 16) {
        uint16_t tail[16] = {0};
        const uint16_t *p = in + i;
        if (n - i < 16) {
            memcpy(tail, p, (n - i) * sizeof *p);
            p = tail;
        }
        __m256i a = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)p), abs);
        hi = _mm256_max_epu16(hi, a);
        lo = _mm256_min_epu16(lo, _mm256_sub_epi16(a, one));
    }
    __m128i h = _mm_max_epu16(_mm256_castsi256_si128(hi), _mm256_extracti128_si256(hi, 1));
    __m128i l = _mm_min_epu16(_mm256_castsi256_si128(lo), _mm256_extracti128_si256(lo, 1));
    *big = 0xffffu &
           ~(uint32_t)_mm_cvtsi128_si32(_mm_minpos_epu16(_mm_xor_si128(h, _mm_set1_epi16(-1))));
    *small = ((uint32_t)_mm_cvtsi128_si32(_mm_minpos_epu16(l)) + 1) & 0xffffu;
}

AVX2 static void scan(enum tp_dtype t, const void *in, size_t n, int32_t *span)
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

/* ---- load ---- */

/* out[0..8) = (or, add: +=) the 8 encodings from p (type t) as int64s at
 * lsb. The exponent, the significand with its hidden bit and the distance
 * to the unit in 32-bit lanes, then each half widened to 64: a left shift
 * by the distance when >= 0, else a right one (the dropped bits are
 * zeros); a count past 63, as a negative one is read, gives 0, so one of
 * the two shifts is the value and the other 0 (both when 0). */
INLINE void load8(enum tp_dtype t, unsigned mbits, unsigned ebits, const void *p, __m256i unit,
                  bool add, int64_t *out)
{
    const __m256i emax = _mm256_set1_epi32((1 << ebits) - 1),
                  fmask = _mm256_set1_epi32((1 << mbits) - 1),
                  hidden = _mm256_set1_epi32(1 << mbits), one = _mm256_set1_epi32(1),
                  zero = _mm256_setzero_si256();
    __m256i u = t == TP_F32 ? _mm256_loadu_si256((const __m256i *)p)
                            : _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
    __m256i e = _mm256_and_si256(_mm256_srli_epi32(u, (int)mbits), emax);
    __m256i m = _mm256_or_si256(_mm256_and_si256(u, fmask),
                                _mm256_andnot_si256(_mm256_cmpeq_epi32(e, zero), hidden));
    __m256i s = _mm256_sub_epi32(_mm256_max_epi32(e, one), unit);
    __m256i neg = _mm256_srai_epi32(_mm256_slli_epi32(u, 31 - (int)(mbits + ebits)), 31);
    for (int h = 0; h < 2; h++) {
        __m128i mh = h ? _mm256_extracti128_si256(m, 1) : _mm256_castsi256_si128(m);
        __m128i sh = h ? _mm256_extracti128_si256(s, 1) : _mm256_castsi256_si128(s);
        __m128i nh = h ? _mm256_extracti128_si256(neg, 1) : _mm256_castsi256_si128(neg);
        __m256i m64 = _mm256_cvtepu32_epi64(mh), s64 = _mm256_cvtepi32_epi64(sh),
                n64 = _mm256_cvtepi32_epi64(nh);
        __m256i v = _mm256_or_si256(_mm256_sllv_epi64(m64, s64),
                                    _mm256_srlv_epi64(m64, _mm256_sub_epi64(zero, s64)));
        v = _mm256_sub_epi64(_mm256_xor_si256(v, n64), n64);
        __m256i *o = (__m256i *)(out + 4 * h);
        if (add)
            v = _mm256_add_epi64(v, _mm256_loadu_si256(o));
        _mm256_storeu_si256(o, v);
    }
}

/* out[i] = (or, add: out[i] +=) in[i] as an int64 at lsb; the last partial
 * step through zeroed copies (a zero loads as 0). */
INLINE void load_steps(enum tp_dtype t, unsigned mbits, unsigned ebits, const void *in, size_t n,
                       int lsb, bool add, int64_t *out)
{
    const size_t es = t == TP_F32 ? 4 : 2;
    const __m256i unit = _mm256_set1_epi32(lsb);
    size_t i = 0;
    for (; n - i >= 8; i += 8)
        load8(t, mbits, ebits, (const unsigned char *)in + i * es, unit, add, out + i);
    if (i < n) {
        unsigned char tin[32] = {0};
        int64_t tout[8] = {0};
        memcpy(tin, (const unsigned char *)in + i * es, (n - i) * es);
        if (add)
            memcpy(tout, out + i, (n - i) * sizeof *out);
        load8(t, mbits, ebits, tin, unit, add, tout);
        memcpy(out + i, tout, (n - i) * sizeof *out);
    }
}

INLINE void load_type(enum tp_dtype t, const void *in, size_t n, int lsb, bool add, int64_t *out)
{
    if (t == TP_F32)
        load_steps(TP_F32, 23, 8, in, n, lsb, add, out);
    else if (t == TP_BF16)
        load_steps(TP_BF16, 7, 8, in, n, lsb, add, out);
    else
        load_steps(TP_F16, 10, 5, in, n, lsb, add, out);
}

AVX2 static void load(enum tp_dtype t, const void *in, size_t n, int lsb, int64_t *out)
{
    load_type(t, in, n, lsb, false, out);
}

AVX2 static void load_add(enum tp_dtype t, const void *in, size_t n, int lsb, int64_t *out)
{
    load_type(t, in, n, lsb, true, out);
}

/* ---- store ---- */

/* 4 int64 sums v rounded to the format (mbits fraction bits; ue: the
 * unit's exponent, lsb - bias - mbits), in integers, whatever MXCSR says:
 * each lane's encoding in its low 32 bits, 0 for a zero and for a lane
 * whose result is not normal and finite; *bad: those lanes, nonzero,
 * left to the scalar rounding (all ones in 64 bits each). The magnitude's
 * highest bit k: its upper half converted to f64 (or, if that is zero,
 * its lower half), exactly, as 2^52 + x - 2^52, the exponent field read;
 * s = k - mbits bits are dropped, rounded to nearest, ties to even by
 * adding 2^(s-1) - 1 and the last kept bit before the shift; the result r
 * (2^mbits to 2^(mbits+1), a carry included) added to the biased exponent
 * less one, shifted, makes the encoding, the carry moving it into the next
 * binade by itself. */
INLINE __m256i round4(__m256i v, unsigned mbits, unsigned ebits, int ue, __m256i *bad)
{
    const int bias = (1 << (ebits - 1)) - 1;
    const __m256i zero = _mm256_setzero_si256(), one = _mm256_set1_epi64x(1),
                  lo32 = _mm256_set1_epi64x(0xffffffffll), c32 = _mm256_set1_epi64x(32),
                  magic = _mm256_set1_epi64x(0x4330000000000000ll), vm = _mm256_set1_epi64x(mbits),
                  ebias = _mm256_set1_epi64x((long long)ue + bias - 1023),
                  top = _mm256_set1_epi64x((long long)((1u << ebits) - 1) << mbits),
                  sign = _mm256_set1_epi64x(1ll << (mbits + ebits));
    __m256i neg = _mm256_cmpgt_epi64(zero, v), zer = _mm256_cmpeq_epi64(v, zero);
    __m256i mag = _mm256_sub_epi64(_mm256_xor_si256(v, neg), neg); /* INT64_MIN: 2^63 */
    __m256i hi = _mm256_srli_epi64(mag, 32), hz = _mm256_cmpeq_epi64(hi, zero);
    __m256i x = _mm256_blendv_epi8(hi, _mm256_and_si256(mag, lo32), hz);
    __m256d d =
        _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(x, magic)), _mm256_castsi256_pd(magic));
    /* k + 1023: the exponent field, 32 more for the upper half */
    __m256i k = _mm256_add_epi64(_mm256_srli_epi64(_mm256_castpd_si256(d), 52),
                                 _mm256_andnot_si256(hz, c32));
    __m256i s = _mm256_sub_epi64(_mm256_sub_epi64(k, _mm256_set1_epi64x(1023)), vm);
    __m256i half = _mm256_sllv_epi64(one, _mm256_sub_epi64(s, one)); /* 0 when s <= 0 */
    __m256i odd = _mm256_and_si256(_mm256_srlv_epi64(mag, s), one);
    __m256i up = _mm256_and_si256(_mm256_cmpgt_epi64(s, zero),
                                  _mm256_add_epi64(half, _mm256_sub_epi64(odd, one)));
    __m256i r = _mm256_or_si256(_mm256_srlv_epi64(_mm256_add_epi64(mag, up), s),
                                _mm256_sllv_epi64(mag, _mm256_sub_epi64(zero, s)));
    __m256i bexp = _mm256_add_epi64(k, ebias); /* k + ue + bias: before a carry */
    __m256i enc = _mm256_add_epi64(_mm256_slli_epi64(_mm256_sub_epi64(bexp, one), (int)mbits), r);
    /* normal and finite: bexp >= 1 and the encoding below the infinities' */
    __m256i ok = _mm256_andnot_si256(
        zer, _mm256_and_si256(_mm256_cmpgt_epi64(bexp, zero), _mm256_cmpgt_epi64(top, enc)));
    *bad = _mm256_andnot_si256(_mm256_or_si256(ok, zer), _mm256_set1_epi64x(-1));
    return _mm256_and_si256(ok, _mm256_or_si256(enc, _mm256_and_si256(neg, sign)));
}

/* Whether every one of the 8 int64s in a and b is below 2^51 in
 * magnitude (v + 2^51 below 2^52): then each is a double exactly, its
 * bits added to those of 1.5 * 2^52, which is then subtracted (exact in
 * every rounding mode). */
INLINE bool small8(__m256i a, __m256i b)
{
    const __m256i c51 = _mm256_set1_epi64x(1ll << 51);
    __m256i w =
        _mm256_srli_epi64(_mm256_or_si256(_mm256_add_epi64(a, c51), _mm256_add_epi64(b, c51)), 52);
    return _mm256_testz_si256(w, w);
}

INLINE __m256d exact_f64(__m256i v)
{
    const __m256i magic = _mm256_set1_epi64x(0x4338000000000000ll);
    return _mm256_sub_pd(_mm256_castsi256_pd(_mm256_add_epi64(v, magic)),
                         _mm256_castsi256_pd(magic));
}

/* 8 f32 sums below 2^51 in magnitude (small8): each as a double, exactly,
 * VCVTPD2PS's one rounding (to nearest, ties to even: store_sum uses this
 * only where MXCSR says so), then the unit one integer add to the
 * exponent field (add: ue << 23, with -126 <= ue <= 76 so that every
 * nonzero result, of exponent field 127 to 178 before, is normal and
 * finite); zeros stay +0. */
INLINE void store8_f32(__m256i a, __m256i b, __m256i add, uint32_t *out)
{
    __m256i f = _mm256_castps_si256(
        _mm256_set_m128(_mm256_cvtpd_ps(exact_f64(b)), _mm256_cvtpd_ps(exact_f64(a))));
    __m256i zero = _mm256_cmpeq_epi32(f, _mm256_setzero_si256());
    _mm256_storeu_si256((__m256i *)out, _mm256_add_epi32(f, _mm256_andnot_si256(zero, add)));
}

/* round4 for sums below 2^51 in magnitude (small8), in integers on each
 * one's exact double: its magnitude's bits rounded to mbits fraction bits
 * at nearest, ties to even, by adding 2^(51 - mbits) - 1 and the last
 * kept bit before the shift (a carry moves into the exponent by itself),
 * then the exponent rebiased, the unit included. */
INLINE __m256i round4_small(__m256i v, unsigned mbits, unsigned ebits, int ue, __m256i *bad)
{
    const int bias = (1 << (ebits - 1)) - 1, drop = 52 - (int)mbits;
    const __m256i zero = _mm256_setzero_si256(), one = _mm256_set1_epi64x(1),
                  absm = _mm256_set1_epi64x(0x7fffffffffffffffll),
                  half = _mm256_set1_epi64x((1ll << (drop - 1)) - 1),
                  rebias = _mm256_set1_epi64x((long long)(1023 - bias - ue) << mbits),
                  lo = _mm256_set1_epi64x((1ll << mbits) - 1),
                  top = _mm256_set1_epi64x((long long)((1u << ebits) - 1) << mbits);
    __m256i d = _mm256_castpd_si256(exact_f64(v));
    __m256i a = _mm256_and_si256(d, absm);
    __m256i odd = _mm256_and_si256(_mm256_srli_epi64(a, drop), one);
    __m256i enc = _mm256_sub_epi64(
        _mm256_srli_epi64(_mm256_add_epi64(a, _mm256_add_epi64(half, odd)), drop), rebias);
    __m256i zer = _mm256_cmpeq_epi64(v, zero);
    /* normal and finite: the exponent field 1 to emax - 1 */
    __m256i ok = _mm256_andnot_si256(
        zer, _mm256_and_si256(_mm256_cmpgt_epi64(enc, lo), _mm256_cmpgt_epi64(top, enc)));
    *bad = _mm256_andnot_si256(_mm256_or_si256(ok, zer), _mm256_set1_epi64x(-1));
    __m256i sign = _mm256_srli_epi64(_mm256_andnot_si256(absm, d), 63 - (int)(mbits + ebits));
    return _mm256_and_si256(ok, _mm256_or_si256(enc, sign));
}

/* out[0..8) (type t) = the 8 sums from in, rounded at lsb (ue its unit's
 * exponent): where each is below 2^51 in magnitude, f32 by store8_f32
 * where fast, else round4_small; otherwise round4; the lanes these
 * leave, the scalar rounding. */
INLINE void store8(enum tp_dtype t, unsigned mbits, unsigned ebits, const int64_t *in, int lsb,
                   int ue, bool fast, __m256i add, void *out)
{
    __m256i va = _mm256_loadu_si256((const __m256i *)in),
            vb = _mm256_loadu_si256((const __m256i *)(in + 4));
    bool small = small8(va, vb);
    if (fast && small) {
        store8_f32(va, vb, add, out);
        return;
    }
    __m256i bad0, bad1;
    __m256i a =
        small ? round4_small(va, mbits, ebits, ue, &bad0) : round4(va, mbits, ebits, ue, &bad0);
    __m256i b =
        small ? round4_small(vb, mbits, ebits, ue, &bad1) : round4(vb, mbits, ebits, ue, &bad1);
    /* the low 32 bits of each lane, in order: a0 a1 b0 b1 | a2 a3 b2 b3,
     * then the middle 64-bit pairs swapped */
    __m256i p = _mm256_castps_si256(
        _mm256_shuffle_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b), _MM_SHUFFLE(2, 0, 2, 0)));
    p = _mm256_permute4x64_epi64(p, _MM_SHUFFLE(3, 1, 2, 0));
    if (t == TP_F32) {
        _mm256_storeu_si256((__m256i *)out, p);
    } else {
        __m256i h = _mm256_permute4x64_epi64(_mm256_packus_epi32(p, p), _MM_SHUFFLE(3, 1, 2, 0));
        _mm_storeu_si128((__m128i *)out, _mm256_castsi256_si128(h));
    }
    unsigned rest = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(bad0)) |
                    (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(bad1)) << 4;
    for (; rest; rest &= rest - 1) {
        unsigned j = (unsigned)__builtin_ctz(rest);
        uint32_t u = tp__bfx_round(t, in[j], lsb, 1);
        if (t == TP_F32)
            memcpy((unsigned char *)out + 4 * j, &u, 4);
        else {
            uint16_t h = (uint16_t)u;
            memcpy((unsigned char *)out + 2 * j, &h, 2);
        }
    }
}

/* Sums (divisor 1), 8 a step; the last partial step through zeroed copies. */
INLINE void store_sum(enum tp_dtype t, unsigned mbits, unsigned ebits, const int64_t *in, size_t n,
                      int lsb, void *out)
{
    const size_t es = t == TP_F32 ? 4 : 2;
    const int ue = lsb - ((1 << (ebits - 1)) - 1) - (int)mbits;
    /* rounding to nearest with every exception masked (an inexact
     * conversion would otherwise trap), flushing as it may: the
     * conversion's results are normal */
    const bool fast = t == TP_F32 && ue >= -126 && ue <= 76 && (_mm_getcsr() & 0x7f80) == 0x1f80;
    const __m256i add = _mm256_set1_epi32(ue * (1 << 23));
    size_t i = 0;
    for (; n - i >= 8; i += 8)
        store8(t, mbits, ebits, in + i, lsb, ue, fast, add, (unsigned char *)out + i * es);
    if (i < n) {
        int64_t tin[8] = {0};
        unsigned char tout[32];
        memcpy(tin, in + i, (n - i) * sizeof *in);
        store8(t, mbits, ebits, tin, lsb, ue, fast, add, tout);
        memcpy((unsigned char *)out + i * es, tout, (n - i) * es);
    }
}

AVX2 static void store(enum tp_dtype t, const int64_t *in, size_t n, int lsb, uint32_t divisor,
                       void *out)
{
    if (divisor > 1)
        tp__bfx_scalar.store(t, in, n, lsb, divisor, out);
    else if (t == TP_F32)
        store_sum(TP_F32, 23, 8, in, n, lsb, out);
    else if (t == TP_BF16)
        store_sum(TP_BF16, 7, 8, in, n, lsb, out);
    else
        store_sum(TP_F16, 10, 5, in, n, lsb, out);
}

/* ---- the pair ---- */

/* tp_bfx_sum of two f32 inputs by one addition a lane (bfx_int.h: pair),
 * 8 lanes a vector. VADDPS rounds as MXCSR says, and AVX2 has no rounding
 * in the instruction: so only where MXCSR is as a process starts (to
 * nearest, ties to even; flush-to-zero and denormals-are-zero off, which
 * would read or write a subnormal as zero; every exception masked, which
 * an inexact sum would otherwise trap), and otherwise nothing. There the
 * sum is the correctly rounded exact sum of its two operands; +0 is added
 * so that -0 + -0 gives +0, as the blocks do. An average halves that:
 * where the exact sum is below 2^-125 it is the sum itself (two floats'
 * sum there is a float), so the halving is its one rounding; above, the
 * rounded sum's half is normal and exact, and halving commutes with
 * rounding between normal binades. A NaN or an infinity (an input, or a
 * sum that overflowed, whose half might not have) ends the run. */
AVX2 static size_t pair(const float *a, const float *b, size_t n, int shift, float *out)
{
    if ((_mm_getcsr() & 0xffc0) != 0x1f80) /* DAZ, the masks, rounding, FTZ */
        return 0;
    const __m256i expo = _mm256_set1_epi32(0x7f800000);
    const __m256 zero = _mm256_setzero_ps(), half = _mm256_set1_ps(0.5f);
    size_t i = 0;
    /* four vectors a step and one test of their exponents (as the AVX-512
     * pair): the or of four exponents is all ones wherever one of them
     * is, and may be where none is: the vectors one at a time below
     * decide then */
    for (; n - i >= 32; i += 32) {
        __m256 s[4];
        __m256i e = _mm256_setzero_si256();
        for (int v = 0; v < 4; v++) {
            s[v] = _mm256_add_ps(_mm256_loadu_ps(a + i + 8 * v), _mm256_loadu_ps(b + i + 8 * v));
            e = _mm256_or_si256(e, _mm256_and_si256(_mm256_castps_si256(s[v]), expo));
        }
        if (_mm256_movemask_epi8(_mm256_cmpeq_epi32(e, expo)))
            break;
        for (int v = 0; v < 4; v++) {
            s[v] = _mm256_add_ps(s[v], zero);
            if (shift)
                s[v] = _mm256_mul_ps(s[v], half);
            _mm256_storeu_ps(out + i + 8 * v, s[v]);
        }
    }
    for (; i < n; i += 8) {
        bool whole = n - i >= 8;
        /* the live lanes of a partial vector: lane j's index below n - i */
        __m256i live = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(whole ? 8 : n - i)),
                                          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        __m256 s =
            whole ? _mm256_add_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i))
                  : _mm256_add_ps(_mm256_maskload_ps(a + i, live), _mm256_maskload_ps(b + i, live));
        if (_mm256_movemask_epi8(
                _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_castps_si256(s), expo), expo)))
            return i;
        s = _mm256_add_ps(s, zero);
        if (shift)
            s = _mm256_mul_ps(s, half);
        if (whole)
            _mm256_storeu_ps(out + i, s);
        else
            _mm256_maskstore_ps(out + i, live, s);
    }
    return n;
}

const struct tp__bfx_kernel tp__bfx_avx2 = {
    .name = "avx2",
    .cpu_ok = cpu_ok,
    .scan = scan,
    .load = load,
    .load_add = load_add,
    .store = store,
    .pair = pair,
};
