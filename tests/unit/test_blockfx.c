/* Block fixed-point (tp_bfx): for f32, bf16 and f16, over 1 to 8 "ranks"
 * of data, every block the span says is fast must round to the same bits
 * as the wide representation (tp_fx, itself checked against the
 * superaccumulator in test_fixed.c), for sums and averages; the span must
 * send a block to the wide path exactly when a NaN or an infinity is in it
 * or its values are too far apart for one int64 with the sum's headroom. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <xmmintrin.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tp_test.h"
#include "tp/blockfx.h"
#include "tp/fixed.h"

struct ty {
    enum tp_dtype t;
    const char *name;
    unsigned mbits, ebits, bytes;
};

static const struct ty types[] = {
    {TP_F32, "f32", 23, 8, 4},
    {TP_BF16, "bf16", 7, 8, 2},
    {TP_F16, "f16", 10, 5, 2},
};

static uint32_t enc(const struct ty *y, bool neg, unsigned e, uint32_t frac)
{
    return (uint32_t)neg << (y->mbits + y->ebits) | (uint32_t)e << y->mbits | frac;
}

static void put(const struct ty *y, void *buf, size_t i, uint32_t u)
{
    if (y->bytes == 4) {
        memcpy((unsigned char *)buf + 4 * i, &u, 4);
    } else {
        uint16_t h = (uint16_t)u;
        memcpy((unsigned char *)buf + 2 * i, &h, 2);
    }
}

static uint32_t get(const struct ty *y, const void *buf, size_t i)
{
    if (y->bytes == 4) {
        uint32_t u;
        memcpy(&u, (const unsigned char *)buf + 4 * i, 4);
        return u;
    }
    uint16_t h;
    memcpy(&h, (const unsigned char *)buf + 2 * i, 2);
    return h;
}

/* The kinds of data a block is filled with. */
enum kind {
    GRADIENT,  /* normal values around 1e-3, zeros, a few outliers 100x */
    NARROW,    /* one binade: the common case at its tightest */
    WIDE,      /* exponents over the whole finite range: the wide path */
    SUBNORMAL, /* subnormals and the smallest normals */
    CANCEL,    /* x on one rank, -x (nearly) on another: heavy cancellation */
    HUGE_VALS, /* near the largest finite: sums overflow to infinity */
    NONFINITE, /* a NaN or an infinity among gradients */
    RANDOM,    /* random encodings, NaN and infinity included */
    NKINDS
};

static uint32_t element(const struct ty *y, enum kind k, int rank, size_t i, uint32_t base)
{
    unsigned emax = (1u << y->ebits) - 1, bias = emax >> 1;
    uint32_t frac = (uint32_t)tp_test_rnd() & ((1u << y->mbits) - 1);
    bool neg = tp_test_rnd() & 1;
    switch (k) {
    case GRADIENT: {
        uint64_t r = tp_test_rnd() % 100;
        if (r < 10)
            return 0;
        unsigned e = bias - 10 + (unsigned)(tp_test_rnd() % 6) + (r < 12 ? 7 : 0);
        if (y->ebits == 5)
            e = bias - 6 + (unsigned)(tp_test_rnd() % 4) + (r < 12 ? 6 : 0);
        return enc(y, neg, e, frac);
    }
    case NARROW: return enc(y, neg, bias, frac);
    case WIDE: return enc(y, neg, 1 + (unsigned)(tp_test_rnd() % (emax - 1)), frac);
    case SUBNORMAL: return enc(y, neg, (unsigned)(tp_test_rnd() % 3), frac);
    case CANCEL:
        /* rank 0 and 1 hold a value and its negation, others a little noise */
        if (rank <= 1)
            return base ^ ((uint32_t)rank << (y->mbits + y->ebits));
        return enc(y, neg, bias - 20 < 1 ? 1 : bias - 20, frac);
    case HUGE_VALS: return enc(y, false, emax - 1, frac);
    case NONFINITE:
        if (i == 17 && rank == 0)
            return enc(y, neg, emax, tp_test_rnd() & 1 ? 1 : 0);
        return enc(y, neg, bias - 3, frac);
    case RANDOM:
    default: return (uint32_t)(tp_test_rnd() & ((1ull << (y->mbits + y->ebits + 1)) - 1));
    }
}

/* The wide path's result for element i of ranks' data (sum or average). */
static uint32_t wide(const struct ty *y, void *const *data, int ranks, size_t i, bool avg)
{
    size_t w = tp_fx_words(y->t);
    uint64_t acc[64], one[64];
    tp_fx_load(y->t, acc, (const unsigned char *)data[0] + i * y->bytes, 1);
    for (int r = 1; r < ranks; r++) {
        tp_fx_load(y->t, one, (const unsigned char *)data[r] + i * y->bytes, 1);
        tp_fx_add(y->t, acc, one, 1);
    }
    (void)w;
    uint32_t out = 0;
    tp_fx_store(y->t, &out, acc, 1, avg ? (uint32_t)ranks : 1);
    return y->bytes == 4 ? out : (uint16_t)out;
}

/* Fill, scan, combine, and for each fast block compare every element's
 * sum and average with the wide path. Returns how many blocks were fast. */
static int check(const struct ty *y, enum kind k, int ranks, size_t n)
{
    void *data[8];
    size_t nb = tp_bfx_blocks(n);
    int32_t *span = calloc(2 * nb, sizeof *span), *mine = calloc(2 * nb, sizeof *mine);
    int64_t *acc = calloc(n, sizeof *acc), *one = calloc(n, sizeof *one);
    unsigned char *out = calloc(n, 4);
    assert_non_null(span);
    assert_non_null(mine);
    assert_non_null(acc);
    assert_non_null(one);
    assert_non_null(out);
    uint32_t *base = calloc(n, sizeof *base);
    for (size_t i = 0; i < n; i++)
        base[i] = element(y, GRADIENT, 0, i, 0);
    for (int r = 0; r < ranks; r++) {
        data[r] = calloc(n, y->bytes);
        for (size_t i = 0; i < n; i++)
            put(y, data[r], i, element(y, k, r, i, base[i]));
        tp_bfx_scan(y->t, data[r], n, mine);
        for (size_t j = 0; j < 2 * nb; j++)
            span[j] = mine[j] > span[j] ? mine[j] : span[j];
        /* every row's spans are the scalar row's: a wider span still sums
         * right, only at a coarser unit, so the sums alone would not tell */
        const char *row = tp_bfx_kernel();
        int32_t *ref = calloc(2 * nb, sizeof *ref);
        assert_non_null(ref);
        assert_true(tp_bfx_use("scalar"));
        tp_bfx_scan(y->t, data[r], n, ref);
        assert_true(tp_bfx_use(row));
        for (size_t j = 0; j < 2 * nb; j++)
            if (ref[j] != mine[j])
                fail_msg("%s %s, kind %d, rank %d, block %zu: span[%zu] %d, the scalar row's %d",
                         row, y->name, (int)k, r, j / 2, j % 2, mine[j], ref[j]);
        free(ref);
    }
    int fast = 0;
    for (size_t b = 0; b < nb; b++) {
        size_t from = b * TP_BFX_BLOCK, m = n - from < TP_BFX_BLOCK ? n - from : TP_BFX_BLOCK;
        int lsb = tp_bfx_unit(span + 2 * b, ranks);
        /* the wide path exactly for a NaN or an infinity */
        bool nonfinite = false;
        for (int r = 0; r < ranks; r++)
            for (size_t i = from; i < from + m; i++)
                nonfinite |= ((get(y, data[r], i) >> y->mbits) & ((1u << y->ebits) - 1)) ==
                             (1u << y->ebits) - 1;
        if (nonfinite)
            TP_EQ_INT(lsb, 0);
        if (!lsb)
            continue;
        fast++;
        memset(acc + from, 0, m * sizeof *acc);
        for (int r = 0; r < ranks; r++) {
            tp_bfx_load(y->t, (unsigned char *)data[r] + from * y->bytes, m, lsb, one);
            for (size_t i = 0; i < m; i++)
                acc[from + i] += one[i];
        }
        for (int avg = 0; avg < 2; avg++) {
            tp_bfx_store(y->t, acc + from, m, lsb, avg ? (uint32_t)ranks : 1,
                         out + from * y->bytes);
            for (size_t i = from; i < from + m; i++) {
                uint32_t got = get(y, out, i), want = wide(y, data, ranks, i, avg);
                if (got != want)
                    fail_msg("%s %s, kind %d, %d ranks, element %zu (block unit %d): 0x%x, the "
                             "wide path 0x%x",
                             y->name, avg ? "avg" : "sum", (int)k, ranks, i, lsb, got, want);
            }
        }
    }
    /* tp_bfx_sum: every element, fast block or wide, the sum and the
     * average, with and without prefetching, and the sum in place over the
     * first input (a copy of it) */
    unsigned char *first = malloc(n * y->bytes);
    assert_non_null(first);
    memcpy(first, data[0], n * y->bytes);
    for (int pass = 0; pass < 3; pass++) {
        bool avg = pass == 1, inplace = pass == 2;
        const void *in[8];
        for (int r = 0; r < ranks; r++)
            in[r] = inplace && r == 0 ? first : data[r];
        unsigned char *dst = inplace ? first : out;
        tp_bfx_sum(y->t, in, ranks, n, avg ? (uint32_t)ranks : 1, pass == 1, dst);
        for (size_t i = 0; i < n; i++) {
            uint32_t got = get(y, dst, i), want = wide(y, data, ranks, i, avg);
            if (got != want)
                fail_msg("tp_bfx_sum %s %s%s, kind %d, %d ranks, element %zu: 0x%x, the wide "
                         "path 0x%x",
                         y->name, avg ? "avg" : "sum", inplace ? " in place" : "", (int)k, ranks,
                         i, got, want);
        }
    }
    free(first);
    for (int r = 0; r < ranks; r++)
        free(data[r]);
    free(span);
    free(mine);
    free(acc);
    free(one);
    free(out);
    free(base);
    return fast;
}

static void matches_the_wide_path(void **state)
{
    (void)state;
    static const int rank_counts[] = {1, 2, 3, 4, 5, 8};
    int kernels = 0;
    for (const char *const *name = tp_bfx_kernels(); *name; name++) {
        if (!tp_bfx_use(*name)) {
            print_message("# kernel %s: this CPU cannot run it\n", *name);
            continue;
        }
        kernels++;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (int k = 0; k < NKINDS; k++)
            for (size_t r = 0; r < sizeof rank_counts / sizeof rank_counts[0]; r++) {
                tp_test_rng = 1000 * t + 10 * (uint64_t)k + r;
                int fast = check(&types[t], (enum kind)k, rank_counts[r], 3 * TP_BFX_BLOCK + 77);
                /* the common cases take the fast path; NaN and inf never */
                if (k == GRADIENT || k == NARROW || k == SUBNORMAL || k == HUGE_VALS)
                    TP_EQ_INT(fast, 4);
                if (k == NONFINITE)
                    TP_EQ_INT(fast, 3); /* the block with the NaN or inf is wide */
            }
    }
    assert_true(kernels >= 1); /* the scalar one, at least */
    tp_bfx_use(tp_bfx_kernels()[0]);
}

/* With MXCSR's denormals-are-zero bit set (as code built with -ffast-math
 * leaves it), a subnormal input still loads as itself: a kernel that loads
 * through the FPU must notice and take its integer path. */
static void subnormals_under_daz(void **state)
{
    (void)state;
    unsigned csr = _mm_getcsr();
    for (const char *const *name = tp_bfx_kernels(); *name; name++) {
        if (!tp_bfx_use(*name))
            continue;
        _mm_setcsr(csr | 0x40);
        for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
            tp_test_rng = 77 + t;
            TP_EQ_INT(check(&types[t], SUBNORMAL, 3, 2 * TP_BFX_BLOCK), 2);
        }
        _mm_setcsr(csr);
    }
    tp_bfx_use(tp_bfx_kernels()[0]);
}

/* The span's width rule at its edge: values 2^j apart fit one int64 with
 * the sum's headroom while width + ceil(log2 ranks) + 1 <= 64. */
static void width_at_the_edge(void **state)
{
    (void)state;
    const struct ty *y = &types[0]; /* f32 */
    assert_false(tp_bfx_use("no-such-kernel"));
    for (const char *const *name = tp_bfx_kernels(); *name; name++)
    for (int ranks = 1; tp_bfx_use(*name) && ranks <= 8; ranks++) {
        int head = ranks > 4 ? 3 : ranks > 2 ? 2 : ranks > 1 ? 1 : 0;
        for (int width = 50; width <= 66; width++) {
            /* 1.0 (hi = lo = 127 + 23) and a value whose lowest bit is
             * width - 1 positions below */
            uint32_t u[2] = {enc(y, false, 127, 0), enc(y, false, 127 - (unsigned)(width - 24), 1)};
            int32_t span[2] = {0, 0};
            tp_bfx_scan(TP_F32, u, 2, span);
            TP_EQ_INT(span[0], 127 + 23);
            TP_EQ_INT(TP_BFX_NL - span[1], 127 - (width - 24));
            int lsb = tp_bfx_unit(span, ranks);
            TP_EQ_INT(lsb != 0, width + head + 1 <= 64);
        }
    }
    int32_t zero[2] = {0, 0};
    TP_EQ_INT(tp_bfx_unit(zero, 8), 1); /* an all-zero block is fast */
}

/* The rounding of sums at the edges of the format, for every unit from
 * results all subnormal to results all infinite: every kernel gives the
 * scalar row's bits (the scalar row matches the wide path above), for sums
 * of 1, a few bits, 2^24 + 1 (a tie), 2^62 and the largest int64s. */
static void rounding_at_the_edges(void **state)
{
    (void)state;
    static const int64_t v[] = {0, 1, -1, 3, -5, (1 << 24) + 1, -((1 << 25) + 3),
                                (int64_t)1 << 62, INT64_MAX, -INT64_MAX, 12345678901234567,
                                -1, 7, 1 << 23, 0, 9}; /* 16: two whole vectors */
    size_t n = sizeof v / sizeof v[0];
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        const struct ty *y = &types[t];
        int bias_m = (int)((1u << y->ebits) >> 1) - 1 + (int)y->mbits;
        for (int ue = -(bias_m + 70); ue <= 200; ue++) {
            int lsb = bias_m + ue;
            if (lsb < 1)
                continue;
            uint32_t want[16], got[16];
            tp_bfx_use("scalar");
            tp_bfx_store(y->t, v, n, lsb, 1, want);
            for (const char *const *name = tp_bfx_kernels(); *name; name++) {
                if (!tp_bfx_use(*name))
                    continue;
                memset(got, 0, sizeof got);
                tp_bfx_store(y->t, v, n, lsb, 1, got);
                for (size_t i = 0; i < n; i++)
                    if (get(y, got, i) != get(y, want, i))
                        fail_msg("%s kernel %s, unit %d, sum %lld: 0x%x, the scalar row 0x%x",
                                 y->name, *name, lsb, (long long)v[i], get(y, got, i),
                                 get(y, want, i));
            }
        }
    }
    tp_bfx_use(tp_bfx_kernels()[0]);
}

/* Two values whose sum cancels into the subnormals, at the unit where the
 * rounding's fast case ends (the smallest exponent field 23 or 24, f32):
 * every kernel's tp_bfx_sum gives the wide path's bits. */
static void sum_into_the_subnormals(void **state)
{
    (void)state;
    const struct ty *y = &types[0];
    for (unsigned e = 22; e <= 26; e++) {
        uint32_t a[2] = {enc(y, false, e, 1), enc(y, true, e, 3)},
                 b[2] = {enc(y, true, e, 0), enc(y, false, e, 2)}, got[2], want[2];
        void *data[2] = {a, b};
        const void *in[2] = {a, b};
        for (size_t i = 0; i < 2; i++)
            want[i] = wide(y, data, 2, i, false);
        for (const char *const *name = tp_bfx_kernels(); *name; name++) {
            if (!tp_bfx_use(*name))
                continue;
            tp_bfx_sum(TP_F32, in, 2, 2, 1, false, got);
            for (size_t i = 0; i < 2; i++)
                if (got[i] != want[i])
                    fail_msg("kernel %s, exponent field %u, element %zu: 0x%x, the wide path 0x%x",
                             *name, e, i, got[i], want[i]);
        }
    }
    tp_bfx_use(tp_bfx_kernels()[0]);
}

/* tp_bfx_sum over blocks of changing kinds in one call (a unit, a width or
 * a path that carried over from one block to the next would show): every
 * element the wide path's, in place too. */
static void sum_over_changing_blocks(void **state)
{
    (void)state;
    static const enum kind order[] = {GRADIENT, GRADIENT,  SUBNORMAL, NARROW, HUGE_VALS,
                                      CANCEL,   GRADIENT,  WIDE,      NARROW, GRADIENT,
                                      NONFINITE, GRADIENT, NARROW};
    const size_t nb = sizeof order / sizeof order[0], n = nb * TP_BFX_BLOCK - 5;
    for (const char *const *name = tp_bfx_kernels(); *name; name++)
        for (int ranks = 1; tp_bfx_use(*name) && ranks <= 5; ranks += 2)
            for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
                const struct ty *y = &types[t];
                void *data[8];
                const void *in[8];
                tp_test_rng = 7000 + 10 * t + (uint64_t)ranks;
                for (int r = 0; r < ranks; r++) {
                    data[r] = calloc(n, y->bytes);
                    assert_non_null(data[r]);
                    in[r] = data[r];
                    for (size_t i = 0; i < n; i++) {
                        uint32_t base = element(y, GRADIENT, 0, i, 0);
                        put(y, data[r], i, element(y, order[i / TP_BFX_BLOCK], r, i, base));
                    }
                    /* now and then one tiny value among a gradient block's */
                    put(y, data[r], 6 * TP_BFX_BLOCK + 100, enc(y, false, 3, 1));
                }
                unsigned char *out = malloc(n * y->bytes), *want = malloc(n * y->bytes);
                assert_true(out && want);
                for (size_t i = 0; i < n; i++)
                    put(y, want, i, wide(y, data, ranks, i, false));
                tp_bfx_sum(y->t, in, ranks, n, 1, false, out);
                for (size_t i = 0; i < n; i++)
                    if (get(y, out, i) != get(y, want, i))
                        fail_msg("%s kernel %s, %d ranks, element %zu (block %zu): 0x%x, the wide "
                                 "path 0x%x",
                                 y->name, *name, ranks, i, i / TP_BFX_BLOCK, get(y, out, i),
                                 get(y, want, i));
                tp_bfx_sum(y->t, in, ranks, n, 1, true, data[0]); /* in place */
                if (memcmp(data[0], want, n * y->bytes) != 0)
                    fail_msg("%s kernel %s, %d ranks: in place differs", y->name, *name, ranks);
                for (int r = 0; r < ranks; r++)
                    free(data[r]);
                free(out);
                free(want);
            }
    tp_bfx_use(tp_bfx_kernels()[0]);
}

/* Two f32 inputs, the pair's case (one addition a lane where the kernel
 * has it): pairs at every edge of that shortcut (signed zeros, a tie,
 * subnormal sums, sums that overflow, NaN and infinities, averages whose
 * halves fall near or into the subnormals), each placed in a whole vector
 * and in the tail, among ordinary pairs; the sum and the average, in
 * place too, with MXCSR rounding toward zero, flushing to zero and
 * reading subnormals as zero: every kernel gives the wide path's bits. */
static void a_pair_by_one_addition(void **state)
{
    (void)state;
    const struct ty *y = &types[0];
    static const uint32_t edge[][2] = {
        {0x80000000u, 0x80000000u}, /* -0 + -0 */
        {0x00000000u, 0x80000000u}, /* +0 + -0 */
        {0x3f800001u, 0xbf800001u}, /* x + -x */
        {0x3f800000u, 0x33800000u}, /* 1 + 2^-24: a tie, to even */
        {0x3f800001u, 0x33800000u}, /* a tie, up */
        {0x00000003u, 0x00000005u}, /* subnormals */
        {0x00800000u, 0x80000001u}, /* the smallest normal less the smallest subnormal */
        {0x7f7fffffu, 0x7f7fffffu}, /* overflows; its half does not */
        {0x7f7fffffu, 0x73800000u}, /* rounds to infinity, or not */
        {0x7f800000u, 0x3f800000u}, /* infinity */
        {0x7f800000u, 0xff800000u}, /* inf - inf */
        {0x7fc00001u, 0x3f800000u}, /* a NaN */
        {0x01000001u, 0x00000001u}, /* sums of exponent field 1 to 4: halves near */
        {0x01800000u, 0x81000003u}, /* the subnormals */
        {0x02000001u, 0x00000001u},
        {0x00ffffffu, 0x00000001u}, /* exactly 2^-125 */
        {0x01000001u, 0x80800001u},
        {0x00000001u, 0x00000002u}, /* an average that ties in the subnormals */
        {0x01400001u, 0x00000001u}, /* a sum that rounds at exponent field 2, halved */
    };
    const size_t ne = sizeof edge / sizeof edge[0], n = 2 * TP_BFX_BLOCK + 21;
    static const unsigned csrs[] = {0, 0x6000 /* toward zero */, 0x8000 /* FTZ */, 0x40 /* DAZ */};
    float *a = malloc(n * 4), *b = malloc(n * 4), *got = malloc(n * 4), *want = malloc(n * 4);
    assert_true(a && b && got && want);
    unsigned csr = _mm_getcsr();
    /* the edge in the first four vectors (the AVX-512 pair's first step
     * of four), in the last of them, in a later step, in the tail */
    const size_t ats[] = {37, 60, 64 * 5 + 17, n - 3};
    for (size_t e = 0; e < ne + 1; e++)
        for (size_t where = 0; where < sizeof ats / sizeof ats[0]; where++) {
            tp_test_rng = 900 + e;
            for (size_t i = 0; i < n; i++) {
                put(y, a, i, element(y, GRADIENT, 0, i, 0));
                put(y, b, i, element(y, GRADIENT, 1, i, 0));
            }
            size_t at = ats[where];
            if (e < ne) {
                put(y, a, at, edge[e][0]);
                put(y, b, at, edge[e][1]);
            } else if (at + 16 < n) {
                /* no edge, but two sums in one lane of a step's vectors
                 * whose exponent fields or to all ones (0xfe | 0x01) */
                put(y, a, at, 0x7f000000u);
                put(y, b, at, 0x3f800000u);
                put(y, a, at + 16, 0x00800000u);
                put(y, b, at + 16, 0x00000001u);
            }
            void *data[2] = {a, b};
            for (int avg = 0; avg < 2; avg++) {
                for (size_t i = 0; i < n; i++)
                    put(y, want, i, wide(y, data, 2, i, avg));
                for (const char *const *name = tp_bfx_kernels(); *name; name++)
                    for (size_t c = 0; tp_bfx_use(*name) && c < sizeof csrs / sizeof csrs[0]; c++)
                        for (int inplace = 0; inplace < 2; inplace++) {
                            float *first = got;
                            memcpy(first, a, n * 4);
                            const void *in[2] = {inplace ? first : a, b};
                            _mm_setcsr(csr | csrs[c]);
                            tp_bfx_sum(TP_F32, in, 2, n, avg ? 2 : 1, false, got);
                            _mm_setcsr(csr);
                            for (size_t i = 0; i < n; i++)
                                if (get(y, got, i) != get(y, want, i))
                                    fail_msg("kernel %s, MXCSR |= 0x%x, %s%s, 0x%08x + 0x%08x at "
                                             "element %zu: 0x%x, the wide path 0x%x",
                                             *name, csrs[c], avg ? "avg" : "sum",
                                             inplace ? " in place" : "", get(y, a, i),
                                             get(y, b, i), i, get(y, got, i), get(y, want, i));
                        }
            }
        }
    free(a);
    free(b);
    free(got);
    free(want);
    tp_bfx_use(tp_bfx_kernels()[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(matches_the_wide_path),
        cmocka_unit_test(width_at_the_edge),
        cmocka_unit_test(subnormals_under_daz),
        cmocka_unit_test(rounding_at_the_edges),
        cmocka_unit_test(sum_into_the_subnormals),
        cmocka_unit_test(sum_over_changing_blocks),
        cmocka_unit_test(a_pair_by_one_addition),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
