/* Fixed-point reproducible sums (tp_fx): for every float dtype, sums rounded
 * once must match the superaccumulator (tp_exact) bit for bit; averages must
 * match an independent integer reference; accumulators must not depend on
 * order or grouping; inf/NaN, overflow, subnormals and headroom follow the
 * contract in include/tp/fixed.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tp_test.h"
#include "tp/exact.h"
#include "tp/fixed.h"

struct ty {
    enum tp_dtype t;
    const char *name;
    unsigned mbits, ebits, bytes; /* fraction and exponent bits, encoding bytes */
    int lsb;                      /* exponent of the smallest subnormal */
};

static const struct ty types[] = {
    {TP_F16, "f16", 10, 5, 2, -24},
    {TP_BF16, "bf16", 7, 8, 2, -133},
    {TP_F32, "f32", 23, 8, 4, -149},
    {TP_F64, "f64", 52, 11, 8, -1074},
};
#define NTYPES (sizeof types / sizeof types[0])

static unsigned emax(const struct ty *y) /* the exponent field of inf and NaN */
{
    return (1u << y->ebits) - 1;
}

static uint64_t enc(const struct ty *y, bool neg, unsigned e, uint64_t frac)
{
    return (uint64_t)neg << (y->mbits + y->ebits) | (uint64_t)e << y->mbits | frac;
}

static uint64_t sign_bit(const struct ty *y)
{
    return 1ull << (y->mbits + y->ebits);
}

static double dec(const struct ty *y, uint64_t u)
{
    switch (y->t) {
    case TP_F16: return tp_f16_to_f32((uint16_t)u);
    case TP_BF16: return tp_bf16_to_f32((uint16_t)u);
    case TP_F32: {
        uint32_t v = (uint32_t)u;
        float f;
        memcpy(&f, &v, sizeof f);
        return f;
    }
    default: {
        double f;
        memcpy(&f, &u, sizeof f);
        return f;
    }
    }
}

/* Encodings (held in uint64_t) into an array of the dtype. */
static void pack(const struct ty *y, const uint64_t *u, size_t n, void *buf)
{
    unsigned char *b = buf;
    for (size_t i = 0; i < n; i++) {
        if (y->bytes == 2) {
            uint16_t v = (uint16_t)u[i];
            memcpy(b + 2 * i, &v, 2);
        } else if (y->bytes == 4) {
            uint32_t v = (uint32_t)u[i];
            memcpy(b + 4 * i, &v, 4);
        } else {
            memcpy(b + 8 * i, &u[i], 8);
        }
    }
}

static uint64_t unpack1(const struct ty *y, const void *buf)
{
    uint16_t h;
    uint32_t s;
    uint64_t d;
    if (y->bytes == 2) {
        memcpy(&h, buf, 2);
        return h;
    }
    if (y->bytes == 4) {
        memcpy(&s, buf, 4);
        return s;
    }
    memcpy(&d, buf, 8);
    return d;
}

/* The encoding of x (exactly representable in y, or beyond its range)
 * through tp_exact, which rounds it to y. */
static uint64_t exact_round(const struct ty *y, const tp_exact *a)
{
    switch (y->t) {
    case TP_F16: return tp_exact_f16(a);
    case TP_BF16: return tp_exact_bf16(a);
    case TP_F32: {
        float f = tp_exact_f32(a);
        uint32_t v;
        memcpy(&v, &f, sizeof v);
        return v;
    }
    default: {
        double f = tp_exact_f64(a);
        uint64_t v;
        memcpy(&v, &f, sizeof v);
        return v;
    }
    }
}

/* Reference for divisor 1: tp_exact's sum of the same values. */
static uint64_t ref_sum(const struct ty *y, const uint64_t *u, size_t n)
{
    tp_exact a;
    tp_exact_zero(&a);
    for (size_t i = 0; i < n; i++)
        tp_exact_add(&a, dec(y, u[i])); /* exact: every value of y is a double */
    return exact_round(y, &a);
}

/* The module under test: each value loaded as one contribution, the
 * contributions added one by one, the sum stored once. */
static uint64_t fx_sum(const struct ty *y, const uint64_t *u, size_t n, uint32_t d)
{
    size_t w = tp_fx_words(y->t);
    uint64_t *acc = calloc((n ? n : 1) * w, sizeof *acc);
    unsigned char *buf = malloc((n ? n : 1) * 8), out[8];
    assert_non_null(acc);
    assert_non_null(buf);
    pack(y, u, n, buf);
    tp_fx_load(y->t, acc, buf, n);
    for (size_t i = 1; i < n; i++)
        tp_fx_add(y->t, acc, acc + i * w, 1);
    tp_fx_store(y->t, out, acc, 1, d);
    free(acc);
    free(buf);
    return unpack1(y, out);
}

#define SAME_ENC(y, got, want, what, trial)                                                        \
    do {                                                                                           \
        uint64_t g_ = (got), w_ = (want);                                                          \
        if (g_ != w_)                                                                              \
            fail_msg("%s %s trial %d: got 0x%llx (%a), expected 0x%llx (%a)", (y)->name, what,     \
                     (int)(trial), (unsigned long long)g_, dec(y, g_), (unsigned long long)w_,     \
                     dec(y, w_));                                                                  \
    } while (0)

/* A random finite value of y: class 0 any exponent, 1 subnormal, 2 near the
 * largest, 3 within 3 binades of center, 4 zero (either sign). */
static uint64_t rand_value(const struct ty *y, int cls, unsigned center)
{
    unsigned top = emax(y) - 1, e;
    switch (cls) {
    case 0: e = (unsigned)(tp_test_rnd() % (top + 1)); break;
    case 1: e = 0; break;
    case 2: e = top - (unsigned)(tp_test_rnd() % 3); break;
    case 3: {
        int c = (int)center + (int)(tp_test_rnd() % 7) - 3;
        e = c < 0 ? 0 : c > (int)top ? top : (unsigned)c;
        break;
    }
    default: return enc(y, tp_test_rnd() & 1, 0, 0);
    }
    return enc(y, tp_test_rnd() & 1, e, tp_test_rnd() & ((1ull << y->mbits) - 1));
}

static void words_per_element(void **state)
{
    (void)state;
    TP_EQ_U64(tp_fx_words(TP_F16), 2);
    TP_EQ_U64(tp_fx_words(TP_BF16), 6);
    TP_EQ_U64(tp_fx_words(TP_F32), 6);
    TP_EQ_U64(tp_fx_words(TP_F64), 35);
    TP_EQ_U64(tp_fx_words(TP_I32), 0);
    TP_EQ_U64(tp_fx_words(TP_I64), 0);
    /* unsupported types leave everything as it is */
    uint64_t acc[2] = {7, 7};
    int32_t in = 5;
    tp_fx_load(TP_I32, acc, &in, 1);
    tp_fx_add(TP_I64, acc, acc, 1);
    tp_fx_store(TP_I32, &in, acc, 1, 1);
    TP_EQ_U64(acc[0], 7);
    TP_EQ_U64(in, 5);
}

/* Load then store gives every value back (16-bit formats: all of them):
 * the conversion is exact, and load writes every word of the element. */
static void load_store_round_trip(void **state)
{
    (void)state;
    tp_test_rng = 1;
    for (size_t k = 0; k < NTYPES; k++) {
        const struct ty *y = &types[k];
        size_t w = tp_fx_words(y->t);
        uint64_t acc[35], fresh[35];
        unsigned char buf[8], out[8];
        uint32_t count = y->bytes == 2 ? 0x10000 : 200000;
        for (uint32_t i = 0; i < count; i++) {
            uint64_t u = y->bytes == 2 ? i : y->bytes == 4 ? (uint32_t)tp_test_rnd() : tp_test_rnd();
            unsigned e = (unsigned)(u >> y->mbits) & emax(y);
            uint64_t frac = u & ((1ull << y->mbits) - 1);
            pack(y, &u, 1, buf);
            memset(acc, 0xa5, sizeof acc);
            memset(fresh, 0, sizeof fresh);
            tp_fx_load(y->t, acc, buf, 1);
            tp_fx_load(y->t, fresh, buf, 1);
            if (memcmp(acc, fresh, w * sizeof *acc) != 0)
                fail_msg("%s 0x%llx: load left stale words", y->name, (unsigned long long)u);
            tp_fx_store(y->t, out, acc, 1, 1);
            uint64_t want = u;
            if (e == emax(y) && frac) /* NaN: the quiet NaN of the format */
                want = enc(y, false, emax(y), 1ull << (y->mbits - 1));
            if (u == sign_bit(y)) /* -0: an exact zero is +0 */
                want = 0;
            SAME_ENC(y, unpack1(y, out), want, "round trip", i);
        }
    }
}

/* Random sums, with subnormals, values near the largest, heavy
 * cancellation and zeros, against tp_exact bit for bit. */
static void sums_match_superaccumulator(void **state)
{
    (void)state;
    tp_test_rng = 2;
    for (size_t k = 0; k < NTYPES; k++) {
        const struct ty *y = &types[k];
        for (int trial = 0; trial < 20000; trial++) {
            uint64_t u[64];
            size_t n = 1 + tp_test_rnd() % 40;
            unsigned center = (unsigned)(tp_test_rnd() % emax(y));
            bool cancel = trial % 4 == 0; /* every value and its negation, and a few more */
            for (size_t i = 0; i < n; i++) {
                int r = (int)(tp_test_rnd() % 10);
                int cls = r < 2                      ? 0
                          : r == 2                   ? 1
                          : r == 3 && trial % 3 == 0 ? 2
                          : r < 7                    ? 3
                          : r == 7                   ? 4
                                                     : 5;
                if (cls == 5 && i > 0)
                    u[i] = u[tp_test_rnd() % i] ^ sign_bit(y); /* cancels an earlier value */
                else
                    u[i] = rand_value(y, cls == 5 ? 3 : cls, center);
            }
            if (cancel) {
                for (size_t i = 0; i < n && n + i < 64; i++)
                    u[n + i] = u[i] ^ sign_bit(y);
                size_t m = n * 2 < 62 ? n * 2 : 62;
                u[m] = rand_value(y, 3, center / 2);
                u[m + 1] = rand_value(y, 1, 0);
                n = m + 2;
                for (size_t i = n - 1; i > 0; i--) { /* shuffle */
                    size_t j = tp_test_rnd() % (i + 1);
                    uint64_t t = u[i];
                    u[i] = u[j];
                    u[j] = t;
                }
            }
            SAME_ENC(y, fx_sum(y, u, n, 1), ref_sum(y, u, n), "sum", trial);
        }
    }
}

static void hard_sums(void **state)
{
    (void)state;
    const struct ty *f16 = &types[0], *bf16 = &types[1], *f32 = &types[2], *f64 = &types[3];
    uint64_t one32 = 0x3f800000, max32 = 0x7f7fffff, inf32 = 0x7f800000;
    /* 1 + 2^-24: a tie, to even (down); one more tiny bit breaks it */
    SAME_ENC(f32, fx_sum(f32, (uint64_t[]){one32, 0x33800000}, 2, 1), one32, "tie", 0);
    SAME_ENC(f32, fx_sum(f32, (uint64_t[]){one32, 0x33800000, 1}, 3, 1), 0x3f800001, "sticky", 0);
    SAME_ENC(f32, fx_sum(f32, (uint64_t[]){0x3f800001, 0x33800000}, 2, 1), 0x3f800002, "tie up", 0);
    /* overflow to inf, no overflow midway, ties at the top */
    SAME_ENC(f32, fx_sum(f32, (uint64_t[]){max32, max32}, 2, 1), inf32, "overflow", 0);
    SAME_ENC(f32, fx_sum(f32, (uint64_t[]){max32, max32, max32 | 1u << 31}, 3, 1), max32, "midway",
             0);
    SAME_ENC(f32, fx_sum(f32, (uint64_t[]){max32 | 1u << 31, max32 | 1u << 31}, 2, 1),
             inf32 | 1u << 31, "-overflow", 0);
    SAME_ENC(f32, fx_sum(f32, (uint64_t[]){max32, 0x73000000}, 2, 1), inf32, "top tie", 0);
    SAME_ENC(f32, fx_sum(f32, (uint64_t[]){max32, 0x72ffffff}, 2, 1), max32, "below top tie", 0);
    /* subnormals are exact; zeros of both signs sum to +0 */
    SAME_ENC(f32, fx_sum(f32, (uint64_t[]){1, 1, 0x007fffff}, 3, 1), 0x00800001, "subnormal", 0);
    SAME_ENC(f32, fx_sum(f32, (uint64_t[]){1, 1u << 31 | 1}, 2, 1), 0, "cancel", 0);
    SAME_ENC(f32, fx_sum(f32, (uint64_t[]){1u << 31, 1u << 31}, 2, 1), 0, "-0 + -0", 0);
    SAME_ENC(f32, fx_sum(f32, NULL, 0, 1), 0, "empty", 0);
    SAME_ENC(f16, fx_sum(f16, (uint64_t[]){0x7bff, 0x4c00}, 2, 1), 0x7c00, "f16 tie to inf", 0);
    SAME_ENC(f16, fx_sum(f16, (uint64_t[]){0x7bff, 0x4b80}, 2, 1), 0x7bff, "f16 max", 0);
    SAME_ENC(f16, fx_sum(f16, (uint64_t[]){1, 0x83ff}, 2, 1), 0x83fe, "f16 subnormal", 0);
    SAME_ENC(bf16, fx_sum(bf16, (uint64_t[]){0x3f80, 0x3b80}, 2, 1), 0x3f80, "bf16 tie", 0);
    SAME_ENC(bf16, fx_sum(bf16, (uint64_t[]){0x3f80, 0x3b80, 1}, 3, 1), 0x3f81, "bf16 sticky", 0);
    uint64_t p53, one64 = 0x3ff0000000000000ull, tiny;
    double v = ldexp(1, 53), t = 0x1p-1074;
    memcpy(&p53, &v, 8);
    memcpy(&tiny, &t, 8);
    SAME_ENC(f64, fx_sum(f64, (uint64_t[]){p53, one64}, 2, 1), p53, "f64 tie", 0);
    SAME_ENC(f64, fx_sum(f64, (uint64_t[]){p53, one64, tiny}, 3, 1), p53 + 1, "f64 sticky", 0);
    SAME_ENC(f64, fx_sum(f64, (uint64_t[]){0x7fefffffffffffffull, 0x7fefffffffffffffull}, 2, 1),
             0x7ff0000000000000ull, "f64 overflow", 0);
}

/* NaN if any NaN or both infinities; else the one infinity; for sums and
 * averages alike, whatever the finite values. */
static void inf_and_nan(void **state)
{
    (void)state;
    for (size_t k = 0; k < NTYPES; k++) {
        const struct ty *y = &types[k];
        uint64_t pinf = enc(y, false, emax(y), 0), ninf = pinf | sign_bit(y);
        uint64_t nan = enc(y, false, emax(y), 1ull << (y->mbits - 1));
        uint64_t snan = enc(y, true, emax(y), 1), one = enc(y, false, emax(y) / 2, 0);
        uint64_t big = enc(y, true, emax(y) - 1, (1ull << y->mbits) - 1); /* -max */
        struct {
            uint64_t in[4];
            size_t n;
            uint64_t want;
        } c[] = {
            {{pinf}, 1, pinf},
            {{ninf}, 1, ninf},
            {{pinf, one}, 2, pinf},
            {{big, big, ninf}, 3, ninf},
            {{pinf, pinf, big}, 3, pinf},
            {{pinf, ninf}, 2, nan},
            {{ninf, one, pinf}, 3, nan},
            {{snan}, 1, nan},
            {{one, snan, one}, 3, nan},
            {{nan, pinf}, 2, nan},
            {{ninf, nan}, 2, nan},
            {{big, big, big, big}, 4, ninf}, /* finite overflow */
        };
        for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
            for (uint32_t d = 1; d <= 3; d += 2)
                SAME_ENC(y, fx_sum(y, c[i].in, c[i].n, d), c[i].want, "inf/nan", i);
        /* counters keep counting: 1000 +inf, then one -inf */
        uint64_t acc[35], one_acc[35];
        unsigned char buf[8], out[8];
        pack(y, &pinf, 1, buf);
        tp_fx_load(y->t, acc, buf, 1);
        tp_fx_load(y->t, one_acc, buf, 1);
        for (int i = 0; i < 999; i++)
            tp_fx_add(y->t, acc, one_acc, 1);
        tp_fx_store(y->t, out, acc, 1, 1);
        SAME_ENC(y, unpack1(y, out), pinf, "1000 +inf", 0);
        pack(y, &ninf, 1, buf);
        tp_fx_load(y->t, one_acc, buf, 1);
        tp_fx_add(y->t, acc, one_acc, 1);
        tp_fx_store(y->t, out, acc, 1, 1);
        SAME_ENC(y, unpack1(y, out), nan, "1000 +inf, -inf", 0);
    }
}

/* Bitwise the same accumulator whatever the order of the contributions, how
 * they are split into groups, and in what order the groups merge. */
static void order_and_grouping_do_not_matter(void **state)
{
    (void)state;
    enum { R = 37, N = 129 };
    tp_test_rng = 3;
    for (size_t k = 0; k < NTYPES; k++) {
        const struct ty *y = &types[k];
        size_t w = tp_fx_words(y->t), elem = N * w;
        uint64_t *in = malloc(R * elem * sizeof *in), *ref = malloc(elem * sizeof *ref);
        uint64_t *grp = malloc(9 * elem * sizeof *grp);
        assert_true(in && ref && grp);
        uint64_t u[N];
        unsigned char buf[N * 8];
        for (int r = 0; r < R; r++) { /* contribution r: one rank's vector */
            for (int i = 0; i < N; i++) {
                unsigned center = (unsigned)(i * 7919) % emax(y);
                u[i] = rand_value(y, tp_test_rnd() % 8 ? 3 : (int)(tp_test_rnd() % 5), center);
                if (i == 5 && r == 11)
                    u[i] = enc(y, false, emax(y), 0); /* a lone +inf */
                if (i == 6 && r % 9 == 4)
                    u[i] = enc(y, r & 1, emax(y), 0); /* both infinities */
            }
            pack(y, u, N, buf);
            tp_fx_load(y->t, in + r * elem, buf, N);
        }
        memcpy(ref, in, elem * sizeof *ref);
        for (int r = 1; r < R; r++)
            tp_fx_add(y->t, ref, in + r * elem, N);
        unsigned char want1[N * 8], want3[N * 8], got[N * 8];
        tp_fx_store(y->t, want1, ref, N, 1);
        tp_fx_store(y->t, want3, ref, N, 3);
        for (int trial = 0; trial < 10; trial++) {
            int order[R];
            for (int r = 0; r < R; r++)
                order[r] = r;
            for (int r = R - 1; r > 0; r--) {
                int j = (int)(tp_test_rnd() % (uint64_t)(r + 1)), t = order[r];
                order[r] = order[j];
                order[j] = t;
            }
            /* cut the shuffled list into 2..9 non-empty groups of random size */
            int parts = 2 + (int)(tp_test_rnd() % 8), cut[10] = {0};
            for (int p = 1; p < parts; p++)
                cut[p] = cut[p - 1] + 1 + (int)(tp_test_rnd() % (uint64_t)(R - cut[p - 1] - (parts - p)));
            cut[parts] = R;
            for (int p = 0; p < parts; p++) {
                memcpy(grp + p * elem, in + order[cut[p]] * elem, elem * sizeof *grp);
                for (int r = cut[p] + 1; r < cut[p + 1]; r++)
                    tp_fx_add(y->t, grp + p * elem, in + order[r] * elem, N);
            }
            while (parts > 1) { /* merge in a random tree */
                int a = (int)(tp_test_rnd() % (uint64_t)parts), b = (a + 1) % parts;
                tp_fx_add(y->t, grp + a * elem, grp + b * elem, N);
                memcpy(grp + b * elem, grp + (parts - 1) * elem, elem * sizeof *grp);
                parts--;
            }
            if (memcmp(grp, ref, elem * sizeof *ref) != 0)
                fail_msg("%s trial %d: accumulator differs after reordering", y->name, trial);
            tp_fx_store(y->t, got, grp, N, 1);
            assert_memory_equal(got, want1, N * y->bytes);
            tp_fx_store(y->t, got, grp, N, 3);
            assert_memory_equal(got, want3, N * y->bytes);
        }
        /* and the sums are the right ones */
        for (int i = 0; i < N; i++) {
            uint64_t col[R];
            for (int r = 0; r < R; r++) {
                /* recover contribution r of element i from its accumulator */
                unsigned char one[8];
                tp_fx_store(y->t, one, in + r * elem + i * w, 1, 1);
                col[r] = unpack1(y, one);
            }
            SAME_ENC(y, unpack1(y, want1 + i * y->bytes), ref_sum(y, col, R), "grouped sum", i);
        }
        free(in);
        free(ref);
        free(grp);
    }
}

/* Independent reference for avg: S * 2^unit / d rounded to nearest-even in
 * y, for |S| < 2^115 and d < 2^32, with plain 128-bit integer arithmetic.
 * Why it is correct: e is the exact binade of the quotient (found by exact
 * integer comparisons), g is the weight of the result's last significand bit
 * (mbits below e, but not below the smallest subnormal), k and rem are the
 * exact integer quotient and remainder of |S| * 2^unit / (d * 2^g), and
 * comparing 2 rem with the divisor is the definition of round to nearest,
 * ties to even. The rounded value k * 2^g has at most mbits + 2 bits and
 * lies at or above 2^-1074, so it is exact as a double, and turning it into
 * y's encoding does not round again (it only overflows to inf, correctly,
 * when k * 2^g is past the largest finite value). */
static uint64_t ref_div(const struct ty *y, __int128 s, int unit, uint32_t d)
{
    if (s == 0)
        return 0;
    bool neg = s < 0;
    unsigned __int128 n = neg ? -(unsigned __int128)s : (unsigned __int128)s;
    int top = 127;
    while (!(n >> top))
        top--;
    /* the largest j with d * 2^j <= n: start where it surely holds */
    int j = top - 33;
#define GE(jj) ((jj) >= 0 ? n >= (unsigned __int128)d << (jj) : n << -(jj) >= d)
    while (GE(j + 1))
        j++;
#undef GE
    int e = j + unit, prec = (int)y->mbits + 1;
    int g = e - prec + 1 > y->lsb ? e - prec + 1 : y->lsb;
    int sh = unit - g;
    unsigned __int128 num = n, den = d;
    if (sh >= 0)
        num <<= sh;
    else
        den <<= -sh;
    unsigned __int128 kq = num / den, rem = num % den;
    if (2 * rem > den || (2 * rem == den && (kq & 1)))
        kq++;
    double v = ldexp((double)kq, g); /* exact (or inf) */
    if (neg)
        v = -v;
    if (y->t == TP_F64) {
        uint64_t b;
        memcpy(&b, &v, 8);
        return b;
    }
    if (v == 0) /* a negative quotient that rounds to zero is -0 */
        return neg ? sign_bit(y) : 0;
    tp_exact a; /* v is a value of y (or beyond its range): tp_exact only encodes it */
    tp_exact_zero(&a);
    tp_exact_add(&a, v);
    return exact_round(y, &a);
}

/* Averages over random contributions whose exponents span a window narrow
 * enough that the exact sum fits in 128 bits, the window placed anywhere
 * from the subnormals to the largest values. */
static void averages_round_once(void **state)
{
    (void)state;
    tp_test_rng = 4;
    static const uint32_t divs[] = {1, 2, 3, 5, 7, 8, 6, 1000003, 4294967295u};
    for (size_t k = 0; k < NTYPES; k++) {
        const struct ty *y = &types[k];
        int span = 110 - (int)y->mbits - 1 - 6; /* exponents; 64 values of mbits + 1 bits */
        int top = (int)emax(y) - 1;
        if (span > top)
            span = top;
        for (int trial = 0; trial < 20000; trial++) {
            int lo_e;
            switch (trial % 4) {
            case 0: /* down to the subnormals */ lo_e = 0; break;
            case 1: /* up to the largest */ lo_e = top - span; break;
            default: lo_e = (int)(tp_test_rnd() % (uint64_t)(top - span + 1));
            }
            int width = 1 + (int)(tp_test_rnd() % (uint64_t)(span + 1));
            int s0 = lo_e > 0 ? lo_e - 1 : 0; /* shift of the window's lowest binade */
            int unit = s0 + y->lsb;
            size_t n = 1 + tp_test_rnd() % 64;
            uint64_t u[64];
            __int128 s = 0;
            for (size_t i = 0; i < n; i++) {
                if (i > 0 && tp_test_rnd() % 4 == 0) {
                    u[i] = u[tp_test_rnd() % i] ^ sign_bit(y); /* cancellation */
                } else {
                    unsigned e = (unsigned)(lo_e + (int)(tp_test_rnd() % (uint64_t)width));
                    u[i] = enc(y, tp_test_rnd() & 1, e, tp_test_rnd() & ((1ull << y->mbits) - 1));
                }
                unsigned e = (unsigned)(u[i] >> y->mbits) & emax(y);
                __int128 m = (__int128)(u[i] & ((1ull << y->mbits) - 1));
                int sh = 0;
                if (e) {
                    m |= (__int128)1 << y->mbits;
                    sh = (int)e - 1;
                }
                m <<= sh - s0;
                s += u[i] & sign_bit(y) ? -m : m;
            }
            uint32_t d = divs[trial % (sizeof divs / sizeof divs[0])];
            if (d == 1) /* the reference agrees with tp_exact */
                SAME_ENC(y, ref_div(y, s, unit, 1), ref_sum(y, u, n), "reference", trial);
            SAME_ENC(y, fx_sum(y, u, n, d), ref_div(y, s, unit, d), "avg", trial);
        }
    }
}

static void hard_averages(void **state)
{
    (void)state;
    const struct ty *f16 = &types[0], *f32 = &types[2], *f64 = &types[3];
    uint64_t max32 = 0x7f7fffff;
    /* subnormal quotients: 1.5, 2.5, 3.5, 0.5 units: ties to even */
    SAME_ENC(f32, fx_sum(f32, (uint64_t[]){3}, 1, 2), 2, "1.5", 0);
    SAME_ENC(f32, fx_sum(f32, (uint64_t[]){5}, 1, 2), 2, "2.5", 0);
    SAME_ENC(f32, fx_sum(f32, (uint64_t[]){7}, 1, 2), 4, "3.5", 0);
    SAME_ENC(f32, fx_sum(f32, (uint64_t[]){1}, 1, 2), 0, "0.5", 0);
    SAME_ENC(f32, fx_sum(f32, (uint64_t[]){1, 1}, 2, 3), 1, "2/3", 0);
    /* a negative quotient that rounds to zero keeps its sign */
    SAME_ENC(f32, fx_sum(f32, (uint64_t[]){1u << 31 | 1}, 1, 3), 1u << 31, "-1/3", 0);
    /* the smallest normal from a subnormal sum */
    SAME_ENC(f32, fx_sum(f32, (uint64_t[]){0x00ffffff, 0x00000001}, 2, 2), 0x00800000, "min normal",
             0);
    SAME_ENC(f32, fx_sum(f32, (uint64_t[]){0x3f800000, 0, 0}, 3, 3), 0x3eaaaaab, "1/3", 0);
    SAME_ENC(f32, fx_sum(f32, (uint64_t[]){max32, max32}, 2, 2), max32, "max", 0);
    SAME_ENC(f32, fx_sum(f32, (uint64_t[]){max32, max32, max32}, 3, 2), 0x7f800000, "1.5 max", 0);
    SAME_ENC(f32, fx_sum(f32, (uint64_t[]){max32, max32, max32}, 3, 3), max32, "3 max / 3", 0);
    SAME_ENC(f16, fx_sum(f16, (uint64_t[]){0x7bff, 0x7bff}, 2, 2), 0x7bff, "f16 max", 0);
    SAME_ENC(f16, fx_sum(f16, (uint64_t[]){0xfbff, 0xfbff, 0xfbff}, 3, 2), 0xfc00, "f16 -inf", 0);
    SAME_ENC(f64, fx_sum(f64, (uint64_t[]){0x3ff0000000000000ull}, 1, 3), 0x3fd5555555555555ull,
             "f64 1/3", 0);
    SAME_ENC(f64, fx_sum(f64, (uint64_t[]){0x7fefffffffffffffull, 0x7fefffffffffffffull}, 2, 2),
             0x7fefffffffffffffull, "f64 max", 0);
    SAME_ENC(f64, fx_sum(f64, (uint64_t[]){3}, 1, 2), 2, "f64 1.5 units", 0);
}

/* 2^p as an encoding of y (p at or above y's smallest subnormal). */
static uint64_t pow2(const struct ty *y, bool neg, int p)
{
    int bias = (1 << (y->ebits - 1)) - 1, emin = 1 - bias;
    if (p >= emin)
        return enc(y, neg, (unsigned)(p + bias), 0);
    return enc(y, neg, 0, 1ull << (p - y->lsb));
}

/* Sums at the boundaries between accumulator words, where negating carries
 * across words: +-2^(64 j) units, alone, doubled, and a little off. */
static void word_boundaries(void **state)
{
    (void)state;
    for (size_t k = 0; k < NTYPES; k++) {
        const struct ty *y = &types[k];
        int bias = (1 << (y->ebits - 1)) - 1;
        for (int j = 1; 64 * j + y->lsb <= bias; j++) {
            int p = 64 * j + y->lsb;
            for (int neg = 0; neg < 2; neg++)
                for (int tiny = -2; tiny <= 2; tiny++)
                    for (int twice = 0; twice < 2; twice++) {
                        uint64_t u[4];
                        size_t n = 0;
                        u[n++] = pow2(y, neg, p);
                        if (twice)
                            u[n++] = pow2(y, neg, p);
                        for (int i = 0; i < abs(tiny); i++)
                            u[n++] = pow2(y, tiny < 0, p - 40);
                        __int128 sum = (__int128)(twice + 1) << 40;
                        sum = (neg ? -sum : sum) + tiny;
                        SAME_ENC(y, fx_sum(y, u, n, 1), ref_sum(y, u, n), "boundary sum", j);
                        for (uint32_t d = 3; d <= 7; d += 4)
                            SAME_ENC(y, fx_sum(y, u, n, d), ref_div(y, sum, p - 40, d),
                                     "boundary avg", j);
                    }
        }
    }
}

/* Averages by powers of two where only a bit that division shifts out of
 * the top two words decides the rounding: A + B is a tie (B half an ulp of
 * A), and C, one unit in the word below A's, breaks it. */
static void sticky_below_the_quotient(void **state)
{
    (void)state;
    for (size_t k = 1; k < NTYPES; k++) { /* f16 has one word */
        const struct ty *y = &types[k];
        int prec = (int)y->mbits + 1, pa = 64 + 60 + y->lsb;
        for (int neg = 0; neg < 2; neg++) {
            uint64_t u[3] = {pow2(y, neg, pa), pow2(y, neg, pa - prec), pow2(y, neg, y->lsb)};
            __int128 sum = ((__int128)1 << 124) + ((__int128)1 << (124 - prec)) + 1;
            for (uint32_t d = 1; d <= 8; d *= 2) {
                uint64_t want = ref_div(y, neg ? -sum : sum, y->lsb, d);
                SAME_ENC(y, fx_sum(y, u, 3, d), want, "sticky", d);
                SAME_ENC(y, fx_sum(y, u, 2, d), ref_div(y, neg ? -sum + 1 : sum - 1, y->lsb, d),
                         "tie", d);
                assert_true(want != ref_div(y, neg ? -sum + 1 : sum - 1, y->lsb, d));
            }
        }
    }
}

/* 2^23 copies of the largest value (2^24 for the wide formats) add without
 * overflow: their average is that value again, their sum inf. Doubling an
 * accumulator onto itself stands for the contributions. */
static void headroom(void **state)
{
    (void)state;
    for (size_t k = 0; k < NTYPES; k++) {
        const struct ty *y = &types[k];
        int doublings = y->t == TP_F16 ? 23 : 24;
        for (int neg = 0; neg < 2; neg++) {
            uint64_t max = enc(y, neg, emax(y) - 1, (1ull << y->mbits) - 1);
            uint64_t acc[35];
            unsigned char buf[8], out[8];
            pack(y, &max, 1, buf);
            tp_fx_load(y->t, acc, buf, 1);
            for (int i = 0; i < doublings; i++)
                tp_fx_add(y->t, acc, acc, 1);
            tp_fx_store(y->t, out, acc, 1, 1u << doublings);
            SAME_ENC(y, unpack1(y, out), max, "headroom avg", doublings);
            tp_fx_store(y->t, out, acc, 1, 1);
            SAME_ENC(y, unpack1(y, out), enc(y, neg, emax(y), 0), "headroom sum", doublings);
            tp_fx_store(y->t, out, acc, 1, 3u << (doublings - 2)); /* 4/3 max: inf */
            SAME_ENC(y, unpack1(y, out), enc(y, neg, emax(y), 0), "headroom 4/3", doublings);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(words_per_element),
        cmocka_unit_test(load_store_round_trip),
        cmocka_unit_test(sums_match_superaccumulator),
        cmocka_unit_test(hard_sums),
        cmocka_unit_test(inf_and_nan),
        cmocka_unit_test(order_and_grouping_do_not_matter),
        cmocka_unit_test(averages_round_once),
        cmocka_unit_test(hard_averages),
        cmocka_unit_test(word_boundaries),
        cmocka_unit_test(sticky_below_the_quotient),
        cmocka_unit_test(headroom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
