/* Fixed-point accumulators for reproducible sum and avg (include/tp/fixed.h).
 * A finite value of a float format is m * 2^(s + lsb) with m below 2^53 and
 * lsb the smallest subnormal, so loading it is placing m << s into (at most)
 * two words of a wide integer and negating the integer when the value is
 * negative; adding is a carry loop, which associates and commutes, so the
 * sum's bits are independent of order and grouping. Storing rounds once:
 * the top two non-zero words of the magnitude, shifted up one word and
 * divided by the divisor, keep far more than precision + 2 bits, and every
 * bit below them only decides the sticky bit. */
#include "tp/fixed.h"

#include <stdbool.h>
#include <string.h>

#define NAN_ONE 1ull          /* counter word: NaN inputs in bits 0-20 */
#define PINF_ONE (1ull << 21) /* +inf in 21-41 */
#define NINF_ONE (1ull << 42) /* -inf in 42-62 */
#define FIELD ((1ull << 21) - 1)
#define MAX_WORDS 34 /* value words of f64, the widest */

size_t tp_fx_words(enum tp_dtype t)
{
    switch (t) {
    case TP_F16: return 1 + 1;
    case TP_BF16:
    case TP_F32: return 5 + 1;
    case TP_F64: return MAX_WORDS + 1;
    default: return 0;
    }
}

/* One element from its encoding u (sign, ebits of exponent, mbits of
 * fraction) into a[0..w]. With constant arguments the compiler specializes
 * it per type. The value of a normal encoding is (2^mbits + frac) *
 * 2^(e - 1 + lsb), of a subnormal frac * 2^lsb, hence the shift e - 1. */
static inline __attribute__((always_inline)) void load_one(uint64_t *a, unsigned w, uint64_t u,
                                                           unsigned mbits, unsigned ebits)
{
    unsigned e = (unsigned)(u >> mbits) & ((1u << ebits) - 1);
    uint64_t m = u & ((1ull << mbits) - 1);
    bool neg = (u >> (mbits + ebits)) & 1;
    if (e == (1u << ebits) - 1) {
        for (unsigned k = 0; k < w; k++)
            a[k] = 0;
        a[w] = m ? NAN_ONE : neg ? NINF_ONE : PINF_ONE;
        return;
    }
    /* Branch-free, as the signs and binades of real data are unpredictable.
     * lo and hi are m << sh from word sh / 64 up, then negated if neg:
     * -x = ~x + 1, where the + 1 carries into hi when lo is 0. */
    unsigned sh = e ? e - 1 : 0, b = sh & 63;
    m |= (uint64_t)(e != 0) << mbits;
    uint64_t lo = m << b, hi = (m >> 1) >> (63 - b);
    uint64_t neg_mask = 0 - (uint64_t)neg;
    hi = (hi ^ neg_mask) + (neg_mask & (lo == 0));
    lo = (lo ^ neg_mask) - neg_mask;
    if (w == 1) { /* f16: m << sh < 2^40 */
        a[0] = lo;
    } else {
        /* words below i are 0, above i + 1 the sign extension (0 for -0);
         * i + 1 < w for every format */
        unsigned i = sh >> 6;
        uint64_t fill = neg_mask & (0 - (uint64_t)(m != 0));
#pragma GCC unroll 40
        for (unsigned k = 0; k < w; k++)
            a[k] = fill & (0 - (uint64_t)(k > i));
        a[i] = lo;
        a[i + 1] = hi;
    }
    a[w] = 0;
}

void tp_fx_load(enum tp_dtype t, uint64_t *acc, const void *in, size_t n)
{
    switch (t) {
    case TP_F16: {
        const uint16_t *x = in;
        for (size_t i = 0; i < n; i++)
            load_one(acc + 2 * i, 1, x[i], 10, 5);
        break;
    }
    case TP_BF16: {
        const uint16_t *x = in;
        for (size_t i = 0; i < n; i++)
            load_one(acc + 6 * i, 5, x[i], 7, 8);
        break;
    }
    case TP_F32: {
        const unsigned char *x = in;
        for (size_t i = 0; i < n; i++) {
            uint32_t u;
            memcpy(&u, x + 4 * i, sizeof u);
            load_one(acc + 6 * i, 5, u, 23, 8);
        }
        break;
    }
    case TP_F64: {
        const unsigned char *x = in;
        for (size_t i = 0; i < n; i++) {
            uint64_t u;
            memcpy(&u, x + 8 * i, sizeof u);
            load_one(acc + (MAX_WORDS + 1) * i, MAX_WORDS, u, 52, 11);
        }
        break;
    }
    default: break;
    }
}

#if defined(__x86_64__)
/* One step of an add-with-carry chain over word k of a and b (x86-64: the
 * compiler does not reliably turn C into an adc chain). */
#define ADC(k)                                                                                     \
    "movq " #k "*8(%[a]), %%rax\n\tadcq " #k "*8(%[b]), %%rax\n\tmovq %%rax, " #k "*8(%[a])\n\t"
#define ADC5 "clc\n\t" ADC(0) ADC(1) ADC(2) ADC(3) ADC(4)
#define ADC34                                                                                      \
    ADC5 ADC(5) ADC(6) ADC(7) ADC(8) ADC(9) ADC(10) ADC(11) ADC(12) ADC(13) ADC(14) ADC(15)        \
        ADC(16) ADC(17) ADC(18) ADC(19) ADC(20) ADC(21) ADC(22) ADC(23) ADC(24) ADC(25) ADC(26)    \
            ADC(27) ADC(28) ADC(29) ADC(30) ADC(31) ADC(32) ADC(33)
#endif

/* a[0..w) += b[0..w) with carry; the counter words add on their own. */
static inline __attribute__((always_inline)) void add_one(uint64_t *a, const uint64_t *b,
                                                          unsigned w)
{
#if defined(__x86_64__)
    if (w == 5) {
        __asm__ volatile(ADC5 : : [a] "r"(a), [b] "r"(b) : "rax", "cc", "memory");
        a[w] += b[w];
        return;
    }
    if (w == MAX_WORDS) {
        __asm__ volatile(ADC34 : : [a] "r"(a), [b] "r"(b) : "rax", "cc", "memory");
        a[w] += b[w];
        return;
    }
#endif
    uint64_t c = 0;
    for (unsigned k = 0; k < w; k++) {
        unsigned __int128 s = (unsigned __int128)a[k] + b[k] + c;
        a[k] = (uint64_t)s;
        c = (uint64_t)(s >> 64);
    }
    a[w] += b[w];
}

void tp_fx_add(enum tp_dtype t, uint64_t *acc, const uint64_t *in, size_t n)
{
    switch (t) {
    case TP_F16: /* one value word: no carry at all */
        for (size_t i = 0; i < 2 * n; i++)
            acc[i] += in[i];
        break;
    case TP_BF16:
    case TP_F32:
        for (size_t i = 0; i < n; i++)
            add_one(acc + 6 * i, in + 6 * i, 5);
        break;
    case TP_F64:
        for (size_t i = 0; i < n; i++)
            add_one(acc + (MAX_WORDS + 1) * i, in + (MAX_WORDS + 1) * i, MAX_WORDS);
        break;
    default: break;
    }
}

/* (r:w) / d, r < d < 2^32, in two 64-by-32-bit steps (native divisions);
 * r becomes the remainder. */
static inline uint64_t div_word(uint64_t *r, uint64_t w, uint32_t d)
{
    uint64_t x = (*r << 32) | (w >> 32);
    uint64_t hi = x / d;
    x = ((x % d) << 32) | (w & 0xffffffffu);
    *r = x % d;
    return (hi << 32) | (x / d);
}

/* The encoding of one element a[0..w], rounded as tp_fx_store says, for a
 * format of prec significand bits, ebits exponent bits and bytes bytes.
 * With constant format arguments the compiler specializes it per type. */
static inline __attribute__((always_inline)) uint64_t store_one(const uint64_t *a, unsigned w,
                                                                unsigned prec, unsigned ebits,
                                                                unsigned bytes, uint64_t qnan,
                                                                uint32_t d)
{
    uint64_t sign = 1ull << (8 * bytes - 1);
    uint64_t inf = ((1ull << ebits) - 1) << (prec - 1);
    uint64_t cnt = a[w];
    if (cnt) {
        uint64_t nan = cnt & FIELD, pinf = (cnt >> 21) & FIELD, ninf = (cnt >> 42) & FIELD;
        if (nan || (pinf && ninf))
            return qnan;
        return pinf ? inf : sign | inf;
    }

    /* The magnitude's top non-zero word t and the one below it, and
     * whether any word below those is non-zero (the same for x and -x).
     * Above the top word k that differs from the sign extension, the
     * magnitude is zero, except that negating can carry into word k + 1. */
    uint64_t fill = 0 - (a[w - 1] >> 63);
    unsigned k = w - 1;
    while (k > 0 && a[k] == fill)
        k--;
    uint64_t sticky = 0;
    for (unsigned i = 0; i + 1 < k; i++)
        sticky |= a[i];
    /* words t and t - 1 of the magnitude; without branches, as signs are
     * unpredictable: -x = ~x + 1, and the + 1 carries up to x's lowest 1 */
    uint64_t mb = (k ? a[k - 1] : 0) ^ fill, mt = a[k] ^ fill;
    uint64_t c = fill & (sticky == 0);
    mb += c;
    c &= mb == 0;
    mt += c;
    c &= mt == 0; /* -x = 2^(64 (k + 1)): the carry leaves word k */
    unsigned t = k + (unsigned)c;
    mb = c ? 0 : mb;
    mt = c ? 1 : mt;
    if (mt == 0)
        return 0; /* exact zero (k = 0): +0 */

    /* X * 2^base is the value but for the sticky words: X = mag[t]:mag[t-1]
     * (mag[0]:0 when t = 0), so X >= 2^64. With a divisor, Q = N * 2^64 / d
     * for N = mag[t]:mag[t-1] (0:mag[0] when t = 0), Q >= 2^32 * N, and the
     * top two non-zero words of Q become X. Either way X keeps at least 64
     * bits, ample for prec and the round bit, and the rounding position r
     * below lies in [1, 128): where the result is subnormal (t = 0, or t =
     * 1 with a divisor) nothing above the smallest subnormal went into
     * sticky. */
    long base = 64 * (long)t - 64;
    unsigned __int128 x = (unsigned __int128)mt << 64 | mb;
    if (d > 1) {
        uint64_t nh = mt, nl = mb;
        if (t == 0) {
            nh = 0;
            nl = mt;
            base = 0;
        }
        uint64_t r = 0, q2 = div_word(&r, nh, d), q1 = div_word(&r, nl, d);
        uint64_t q0 = div_word(&r, 0, d);
        sticky |= r; /* (also a 1 among Q's low 32 bits, as d < 2^32) */
        if (q2) {
            x = (unsigned __int128)q2 << 64 | q1;
            sticky |= q0;
        } else {
            x = (unsigned __int128)q1 << 64 | q0;
            base -= 64;
        }
    }
    uint64_t xh = (uint64_t)(x >> 64);
    int top = xh ? 127 - __builtin_clzll(xh) : 63 - __builtin_clzll((uint64_t)x);
    long l = base + top - (long)(prec - 1); /* the result's last bit, */
    if (l < 0)
        l = 0;                         /* no finer than the smallest subnormal */
    unsigned r = (unsigned)(l - base); /* in [1, 128) (see above) */
    uint64_t m = (uint64_t)(x >> r);   /* at most prec bits */
    bool round = (x >> (r - 1)) & 1;
    sticky |= (x & (((unsigned __int128)1 << (r - 1)) - 1)) != 0;
    m += round & ((sticky != 0) | (m & 1));
    /* (l << (prec - 1)) + m is the encoding: l is the biased exponent minus
     * one for a normal result, whose hidden bit m adds, and 0 for a
     * subnormal one; a carry out of m, or a subnormal that rounds up to the
     * smallest normal, moves into the exponent by itself. */
    uint64_t enc = l >= (1l << ebits) ? inf : ((uint64_t)l << (prec - 1)) + m;
    if (enc > inf)
        enc = inf;
    return (fill & sign) | enc;
}

void tp_fx_store(enum tp_dtype t, void *out, const uint64_t *acc, size_t n, uint32_t divisor)
{
    unsigned char *o = out;
    switch (t) {
    case TP_F16:
        for (size_t i = 0; i < n; i++) {
            uint16_t v = (uint16_t)store_one(acc + 2 * i, 1, 11, 5, 2, 0x7e00, divisor);
            memcpy(o + 2 * i, &v, sizeof v);
        }
        break;
    case TP_BF16:
        for (size_t i = 0; i < n; i++) {
            uint16_t v = (uint16_t)store_one(acc + 6 * i, 5, 8, 8, 2, 0x7fc0, divisor);
            memcpy(o + 2 * i, &v, sizeof v);
        }
        break;
    case TP_F32:
        for (size_t i = 0; i < n; i++) {
            uint32_t v = (uint32_t)store_one(acc + 6 * i, 5, 24, 8, 4, 0x7fc00000, divisor);
            memcpy(o + 4 * i, &v, sizeof v);
        }
        break;
    case TP_F64:
        for (size_t i = 0; i < n; i++) {
            uint64_t v = store_one(acc + (MAX_WORDS + 1) * i, MAX_WORDS, 53, 11, 8,
                                   0x7ff8000000000000ull, divisor);
            memcpy(o + 8 * i, &v, sizeof v);
        }
        break;
    default: break;
    }
}
