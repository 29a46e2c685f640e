/* The scalar kernel of block fixed-point (bfx_int.h): the span scan, the
 * exact load into one int64 an element, and the rounding back, once, to the
 * format, in portable C. Every function is a loop over elements with the
 * format's constants (mbits, ebits) known at the call, so the compiler
 * specializes each. It is also every other kernel's reference and the
 * path of what they leave to it. */
#include <fenv.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "bfx_int.h"

struct fmt {
    unsigned mbits, ebits;
};

static const struct fmt F32 = {23, 8}, BF16 = {7, 8}, F16 = {10, 5};

static inline uint32_t bits_at(enum tp_dtype t, const void *in, size_t i)
{
    if (t == TP_F32) {
        uint32_t u;
        memcpy(&u, (const unsigned char *)in + 4 * i, sizeof u);
        return u;
    }
    uint16_t h;
    memcpy(&h, (const unsigned char *)in + 2 * i, sizeof h);
    return h;
}

/* ---- the span ---- */

static inline __attribute__((always_inline)) void scan_block(enum tp_dtype t, struct fmt f,
                                                             const void *in, size_t from,
                                                             size_t to, int32_t *span)
{
    const uint32_t abs = (1u << (f.mbits + f.ebits)) - 1;
    uint32_t big = 0, small = UINT32_MAX; /* magnitudes' largest, nonzero smallest - 1 */
    for (size_t i = from; i < to; i++) {
        uint32_t a = bits_at(t, in, i) & abs;
        big = a > big ? a : big;
        small = a - 1 < small ? a - 1 : small; /* a zero wraps past every other */
    }
    tp__bfx_span(f.mbits, f.ebits, big, small + 1, span);
}

static void scan(enum tp_dtype t, const void *in, size_t n, int32_t *span)
{
    for (size_t b = 0; b * TP_BFX_BLOCK < n; b++) {
        size_t from = b * TP_BFX_BLOCK, to = from + TP_BFX_BLOCK < n ? from + TP_BFX_BLOCK : n;
        if (t == TP_F32)
            scan_block(TP_F32, F32, in, from, to, span + 2 * b);
        else if (t == TP_BF16)
            scan_block(TP_BF16, BF16, in, from, to, span + 2 * b);
        else
            scan_block(TP_F16, F16, in, from, to, span + 2 * b);
    }
}

/* ---- load ---- */

/* out[i] = (or, add: out[i] +=) in[i] as an int64 at lsb */
static inline __attribute__((always_inline)) void load_all(enum tp_dtype t, struct fmt f,
                                                           const void *in, size_t n, int lsb,
                                                           bool add, int64_t *out)
{
    const uint32_t emax = (1u << f.ebits) - 1, fmask = (1u << f.mbits) - 1;
    for (size_t i = 0; i < n; i++) {
        uint32_t u = bits_at(t, in, i);
        uint32_t e = (u >> f.mbits) & emax;
        uint64_t m = (u & fmask) | ((uint64_t)(e != 0) << f.mbits);
        /* s >= -ctz(m) for a nonzero value: the right shift drops only zeros
         * (a zero's may be anything: it stays 0) */
        int s = (e ? (int)e : 1) - lsb;
        uint64_t v = s >= 0 ? m << s : s > -64 ? m >> -s : 0;
        uint64_t neg = 0 - (uint64_t)((u >> (f.mbits + f.ebits)) & 1);
        int64_t x = (int64_t)((v ^ neg) - neg);
        out[i] = add ? out[i] + x : x;
    }
}

static inline __attribute__((always_inline)) void load_any(enum tp_dtype t, const void *in,
                                                           size_t n, int lsb, bool add,
                                                           int64_t *out)
{
    if (t == TP_F32)
        load_all(TP_F32, F32, in, n, lsb, add, out);
    else if (t == TP_BF16)
        load_all(TP_BF16, BF16, in, n, lsb, add, out);
    else if (t == TP_F16)
        load_all(TP_F16, F16, in, n, lsb, add, out);
}

static void load(enum tp_dtype t, const void *in, size_t n, int lsb, int64_t *out)
{
    load_any(t, in, n, lsb, false, out);
}

static void load_add(enum tp_dtype t, const void *in, size_t n, int lsb, int64_t *out)
{
    load_any(t, in, n, lsb, true, out);
}

/* ---- store ---- */

/* The encoding of (-1)^neg * q * 2^ue, q rounded to the format at nearest,
 * ties to even; sticky: a nonzero part below q's last bit was dropped
 * already. q > 0. */
static inline uint32_t round_bits(struct fmt f, bool neg, unsigned __int128 q, int ue,
                                  bool sticky)
{
    const int bias = (1 << (f.ebits - 1)) - 1, emin_unit = 1 - bias - (int)f.mbits;
    uint64_t hi64 = (uint64_t)(q >> 64);
    int k = hi64 ? 127 - __builtin_clzll(hi64) : 63 - __builtin_clzll((uint64_t)q);
    int unit = k + ue - (int)f.mbits; /* the result's last bit, before the subnormal floor */
    if (unit < emin_unit)
        unit = emin_unit;
    int s = unit - ue;
    uint64_t r;
    if (s <= 0) { /* every bit kept: exact (sticky cannot be set then) */
        r = (uint64_t)q << -s;
    } else {
        unsigned __int128 kept = s >= 128 ? 0 : q >> s;
        unsigned __int128 dropped = s >= 128 ? q : q & (((unsigned __int128)1 << s) - 1);
        unsigned __int128 half = s > 128 ? (unsigned __int128)0 : (unsigned __int128)1 << (s - 1);
        r = (uint64_t)kept;
        bool up = s <= 128 && (dropped > half || (dropped == half && (sticky || (r & 1))));
        r += up;
    }
    if (r >> (f.mbits + 1)) { /* rounding carried into a new binade */
        r >>= 1;
        unit++;
    }
    uint32_t sign = (uint32_t)neg << (f.mbits + f.ebits);
    if (!(r >> f.mbits)) /* subnormal (unit is the floor) */
        return sign | (uint32_t)r;
    long bexp = (long)unit + (long)f.mbits + bias;
    if (bexp >= (long)((1u << f.ebits) - 1)) /* past the largest finite: infinity */
        return sign | (((1u << f.ebits) - 1) << f.mbits);
    return sign | ((uint32_t)bexp << f.mbits) | ((uint32_t)r & ((1u << f.mbits) - 1));
}

/* One element: v * 2^ue / div, rounded. For div > 1 the quotient keeps 64
 * bits more than v (v << 64 / div), and the remainder is the sticky bit. */
static inline uint32_t store_one(struct fmt f, int64_t v, int ue, uint32_t div)
{
    if (v == 0)
        return 0;
    bool neg = v < 0;
    uint64_t mag = neg ? 0 - (uint64_t)v : (uint64_t)v;
    if (div <= 1)
        return round_bits(f, neg, mag, ue, false);
    unsigned __int128 num = (unsigned __int128)mag << 64;
    unsigned __int128 q = num / div;
    bool sticky = num - q * div != 0;
    return round_bits(f, neg, q, ue - 64, sticky);
}

/* Whether float arithmetic rounds to nearest now: on x86 what SSE does
 * (MXCSR, which fegetround does not read there: it reads the x87's). */
static bool to_nearest(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return (_mm_getcsr() & 0x6000) == 0;
#else
    return fegetround() == FE_TONEAREST;
#endif
}

/* f32 sums in the normal range: the hardware's int64 -> float conversion
 * rounds once to 24 bits (nearest, ties to even, where that is the
 * rounding mode: rne), and the unit is a power of two added to the
 * exponent: the same bits. Elsewhere (a subnormal or infinite result,
 * another rounding mode) the integer path. */
static inline uint32_t store_f32_sum(int64_t v, int ue, bool rne)
{
    if (v == 0)
        return 0;
    if (!rne)
        return store_one(F32, v, ue, 1);
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    long e = (long)((u >> 23) & 0xff) + ue;
    if (e >= 1 && e <= 254)
        return (u & 0x807fffffu) | ((uint32_t)e << 23);
    return store_one(F32, v, ue, 1);
}

static void store(enum tp_dtype t, const int64_t *in, size_t n, int lsb, uint32_t divisor,
                  void *out)
{
    unsigned char *o = out;
    if (t == TP_F32) {
        int ue = lsb - 127 - 23;
        bool rne = to_nearest();
        for (size_t i = 0; i < n; i++) {
            uint32_t u = divisor <= 1 ? store_f32_sum(in[i], ue, rne)
                                      : store_one(F32, in[i], ue, divisor);
            memcpy(o + 4 * i, &u, sizeof u);
        }
    } else if (t == TP_BF16 || t == TP_F16) {
        struct fmt f = t == TP_BF16 ? BF16 : F16;
        int ue = lsb - ((1 << (f.ebits - 1)) - 1) - (int)f.mbits;
        for (size_t i = 0; i < n; i++) {
            uint16_t h = (uint16_t)store_one(f, in[i], ue, divisor);
            memcpy(o + 2 * i, &h, sizeof h);
        }
    }
}

uint32_t tp__bfx_round(enum tp_dtype t, int64_t v, int lsb, uint32_t divisor)
{
    struct fmt f = t == TP_F32 ? F32 : t == TP_BF16 ? BF16 : F16;
    return store_one(f, v, lsb - ((1 << (f.ebits - 1)) - 1) - (int)f.mbits, divisor);
}

static bool always(void)
{
    return true;
}

const struct tp__bfx_kernel tp__bfx_scalar = {
    .name = "scalar",
    .cpu_ok = always,
    .scan = scan,
    .load = load,
    .load_add = load_add,
    .store = store,
};
