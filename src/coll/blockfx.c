/* Block fixed-point (include/tp/blockfx.h): the blocks, the unit of a
 * block from its combined span, and the kernels that scan, load and round,
 * as rows of a table (bfx_int.h), the best one this CPU can run chosen at
 * the first call. */
#include <string.h>

#include "bfx_int.h"
#include "tp/fixed.h"

#define WIDE_PIECE 128 /* elements a pass of a wide block (its words on the stack) */

static const struct tp__bfx_kernel *const kernels[] = {&tp__bfx_avx512, &tp__bfx_avx2,
                                                       &tp__bfx_scalar, NULL};

static const struct tp__bfx_kernel *in_use;

static const struct tp__bfx_kernel *kernel(void)
{
    if (!in_use)
        for (int i = 0; kernels[i] && !in_use; i++)
            if (kernels[i]->cpu_ok())
                in_use = kernels[i];
    return in_use;
}

const char *const *tp_bfx_kernels(void)
{
    static const char *names[sizeof kernels / sizeof kernels[0]];
    for (int i = 0; kernels[i]; i++)
        names[i] = kernels[i]->name;
    return names;
}

bool tp_bfx_use(const char *name)
{
    for (int i = 0; kernels[i]; i++)
        if (strcmp(kernels[i]->name, name) == 0 && kernels[i]->cpu_ok()) {
            in_use = kernels[i];
            return true;
        }
    return false;
}

const char *tp_bfx_kernel(void)
{
    return kernel()->name;
}

bool tp_bfx_supports(enum tp_dtype t)
{
    return t == TP_F32 || t == TP_BF16 || t == TP_F16;
}

size_t tp_bfx_blocks(size_t n)
{
    return (n + TP_BFX_BLOCK - 1) / TP_BFX_BLOCK;
}

int tp_bfx_unit(const int32_t *span, int nranks)
{
    int hi = span[0];
    if (hi == TP_BFX_NONFINITE)
        return 0;
    if (hi == 0)
        return 1;
    int lo = TP_BFX_NL - span[1], head = 0;
    while (head < 31 && (1 << head) < nranks)
        head++;
    return (hi - lo + 1) + head + 1 <= 64 ? lo : 0;
}

void tp_bfx_scan(enum tp_dtype t, const void *in, size_t n, int32_t *span)
{
    kernel()->scan(t, in, n, span);
}

void tp_bfx_load(enum tp_dtype t, const void *in, size_t n, int lsb, int64_t *out)
{
    kernel()->load(t, in, n, lsb, out);
}

void tp_bfx_store(enum tp_dtype t, const int64_t *in, size_t n, int lsb, uint32_t divisor,
                  void *out)
{
    kernel()->store(t, in, n, lsb, divisor, out);
}

void tp_bfx_load_range(enum tp_dtype t, const int *unit, const void *in, size_t from, size_t to,
                       int64_t *out)
{
    size_t es = tp_dtype_size(t);
    for (size_t i = from; i < to;) {
        size_t b = i / TP_BFX_BLOCK, end = (b + 1) * TP_BFX_BLOCK < to ? (b + 1) * TP_BFX_BLOCK : to;
        if (unit[b])
            kernel()->load(t, (const uint8_t *)in + i * es, end - i, unit[b], out + (i - from));
        else
            memset(out + (i - from), 0, (end - i) * sizeof *out);
        i = end;
    }
}

void tp_bfx_store_range(enum tp_dtype t, const int *unit, const int64_t *in, size_t from,
                        size_t to, uint32_t divisor, void *out)
{
    size_t es = tp_dtype_size(t);
    int shift = 0;
    if (divisor > 1 && !(divisor & (divisor - 1))) {
        shift = __builtin_ctz(divisor);
        divisor = 1;
    }
    for (size_t i = from; i < to;) {
        size_t b = i / TP_BFX_BLOCK, end = (b + 1) * TP_BFX_BLOCK < to ? (b + 1) * TP_BFX_BLOCK : to;
        if (unit[b])
            kernel()->store(t, in + (i - from), end - i, unit[b] - shift, divisor,
                            (uint8_t *)out + (i - from) * es);
        i = end;
    }
}

/* Elements [from, from + k) of tp_bfx_sum by the wide words. */
static void sum_wide(enum tp_dtype t, const void *const *in, int nin, size_t from, size_t k,
                     uint32_t divisor, uint8_t *out)
{
    size_t es = tp_dtype_size(t);
    uint64_t acc[WIDE_PIECE * 6], w[WIDE_PIECE * 6]; /* f32, bf16, f16: 6 words at most */
    for (size_t i = 0; i < k; i += WIDE_PIECE) {
        size_t j = k - i < WIDE_PIECE ? k - i : WIDE_PIECE;
        tp_fx_load(t, acc, (const uint8_t *)in[0] + (from + i) * es, j);
        for (int r = 1; r < nin; r++) {
            tp_fx_load(t, w, (const uint8_t *)in[r] + (from + i) * es, j);
            tp_fx_add(t, acc, w, j);
        }
        tp_fx_store(t, out + i * es, acc, j, divisor);
    }
}

/* Elements [i, i + k) of tp_bfx_sum (k <= TP_BFX_BLOCK) as one block: its
 * unit from the inputs' own spans, the int64s summed (in registers where
 * the kernel can) and rounded once; the wide words where the block needs
 * them. next: elements of the following block to prefetch. */
static void sum_block(const struct tp__bfx_kernel *kn, enum tp_dtype t, const void *const *in,
                      int nin, size_t i, size_t k, size_t next, uint32_t divisor, int shift,
                      uint32_t odd, void *out)
{
    size_t es = tp_dtype_size(t);
    for (int r = 0; r < nin; r++)
        for (size_t b = 0; b < next * es; b += 64)
            __builtin_prefetch((const uint8_t *)in[r] + (i + k) * es + b);
    int32_t span[2] = {0, 0}, s[2];
    for (int r = 0; r < nin; r++) {
        kn->scan(t, (const uint8_t *)in[r] + i * es, k, s);
        span[0] = s[0] > span[0] ? s[0] : span[0];
        span[1] = s[1] > span[1] ? s[1] : span[1];
    }
    int unit = tp_bfx_unit(span, nin);
    uint8_t *o = (uint8_t *)out + i * es;
    if (!unit) {
        sum_wide(t, in, nin, i, k, divisor, o);
        return;
    }
    if (kn->sum && odd == 1 && kn->sum(t, in, nin, i, k, unit, shift, o))
        return;
    int64_t acc[TP_BFX_BLOCK];
    kn->load(t, (const uint8_t *)in[0] + i * es, k, unit, acc);
    for (int r = 1; r < nin; r++)
        kn->load_add(t, (const uint8_t *)in[r] + i * es, k, unit, acc);
    kn->store(t, acc, k, unit - shift, odd, o);
}

void tp_bfx_sum(enum tp_dtype t, const void *const *in, int nin, size_t n, uint32_t divisor,
                bool ahead, void *out)
{
    const struct tp__bfx_kernel *kn = kernel();
    int shift = 0;
    uint32_t odd = divisor;
    if (divisor > 1 && !(divisor & (divisor - 1))) {
        shift = __builtin_ctz(divisor);
        odd = 1;
    }
    /* two f32 inputs: one IEEE addition a lane where the kernel has it
     * (bfx_int.h), the blocks only from where it stops */
    bool pair = kn->pair && t == TP_F32 && nin == 2 && odd <= 1 && shift <= 1;
    for (size_t i = 0; i < n;) {
        if (pair) {
            i += kn->pair((const float *)in[0] + i, (const float *)in[1] + i, n - i, shift,
                          (float *)out + i);
            if (i == n)
                break;
        }
        size_t k = n - i < TP_BFX_BLOCK ? n - i : TP_BFX_BLOCK;
        /* ahead: the next block's inputs, fetched while this one is summed
         * (the scan would otherwise wait for memory alone) */
        size_t next = !ahead ? 0 : n - i - k < TP_BFX_BLOCK ? n - i - k : TP_BFX_BLOCK;
        sum_block(kn, t, in, nin, i, k, next, divisor, shift, odd, out);
        i += k;
    }
}
