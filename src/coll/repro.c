/* --repro exact: the allreduce (sum, avg) whose result is the correctly
 * rounded exact sum, the same bits whatever the rank count, algorithm,
 * chunking or arrival order (docs/reproducibility.md).
 *
 * The fast path, block fixed-point (include/tp/blockfx.h), per segment of
 * the message:
 *   1. every rank scans its blocks' spans (the highest and lowest bit of
 *      its values), and a max-allreduce of two int32 a block agrees on each
 *      block's unit;
 *   2. each value of a block that fits becomes one int64 at that unit,
 *      exactly;
 *   3. the int64s are summed: by a reduce-scatter, each rank rounding its
 *      slice once to the type, then an allgather of the type, for the
 *      allreduce algorithms that are that pair (ring, rabenseifner: 8 bytes
 *      an element through the reduce-scatter, the type's through the
 *      allgather); by the algorithm itself over int64 for the others, every
 *      rank then rounding every element;
 *   4. the blocks that do not fit (a NaN or an infinity, values too far
 *      apart) take the wide representation (include/tp/fixed.h), packed
 *      together; it rounds to the same bits.
 * f64 takes the wide path (its 53-bit significands leave one int64 little
 * room for a span). Integer sums cannot overflow: the unit leaves
 * ceil(log2 ranks) bits of headroom. */
#include <string.h>

#include "kind_int.h"
#include "tp/blockfx.h"
#include "tp/fixed.h"

#define FAST_SEG (1u << 16) /* elements a pass of the fast path (a multiple of the block) */

/* The allreduce algorithms that are a reduce-scatter and an allgather, by
 * the algorithms of those kinds they are made of. */
static const struct {
    const struct algo *allreduce, *reduce_scatter, *allgather;
} split[] = {
    {&tp__coll_algo_ring_allreduce, &tp__coll_algo_ring_reduce_scatter,
     &tp__coll_algo_ring_allgather},
    {&tp__coll_algo_rhd_allreduce, &tp__coll_algo_rhd_reduce_scatter,
     &tp__coll_algo_bruck_allgather},
};

/* The wide path over send[0..count) into recv, in passes of
 * TP__COLL_EXACT_SEG_BYTES of fixed-point words. */
static int wide(struct tp_comm *c, const struct algo *al, const struct tp_coll_args *a,
                const void *send, void *recv, size_t count, tp_error *err)
{
    size_t words = tp_fx_words(a->dtype), es = tp_dtype_size(a->dtype);
    /* a pass's words, the result's and the algorithm's scratch: within
     * what is left of the arena (the fast path holds some of it) */
    size_t left = c->arena_bytes > c->arena_used ? c->arena_bytes - c->arena_used : 0;
    size_t seg_max = TP__COLL_EXACT_SEG_BYTES / (words * 8), fit = left / (3 * words * 8 + 64);
    seg_max = fit < seg_max ? (fit ? fit : 1) : seg_max;
    size_t seg = count < seg_max ? count : seg_max, mark = c->arena_used;
    uint64_t *fs = tp_comm_alloc(c, (seg ? seg : 1) * words * 8);
    uint64_t *fr = tp_comm_alloc(c, (seg ? seg : 1) * words * 8);
    if (!fs || !fr) {
        c->arena_used = mark;
        return tp_error_set(err, TP_ENOMEM,
                            "--repro exact: arena too small for %zu fixed-point elements", seg);
    }
    struct redfn red = {.dtype = a->dtype, .op = TP_SUM, .fixed = true, .esize = words * 8,
                        .nranks = c->size};
    int rc = 0;
    for (size_t done = 0; rc == 0 && (done < count || count == 0);) {
        size_t k = count - done < seg ? count - done : seg;
        tp_fx_load(a->dtype, fs, (const uint8_t *)send + done * es, k);
        rc = tp__coll_run_plan(c, al, a, fs, fr, k, &red, false, err);
        if (rc == 0)
            tp_fx_store(a->dtype, (uint8_t *)recv + done * es, fr, k,
                        a->op == TP_AVG ? (uint32_t)c->size : 1);
        done += k;
        if (count == 0)
            break;
    }
    c->arena_used = mark;
    return rc;
}

/* One pass of the fast path over elements [off, off + m) (off a multiple of
 * the block). */
static int fast_segment(struct tp_comm *c, const struct algo *al, const struct tp_coll_args *a,
                        size_t off, size_t m, tp_error *err)
{
    int n = c->size, me = c->rank;
    size_t es = tp_dtype_size(a->dtype), nb = tp_bfx_blocks(m), mark = c->arena_used;
    const uint8_t *send = (const uint8_t *)a->sendbuf + off * es;
    uint8_t *recv = (uint8_t *)a->recvbuf + off * es;
    int rs_split = -1;
    for (size_t k = 0; k < sizeof split / sizeof split[0]; k++)
        if (split[k].allreduce == al)
            rs_split = (int)k;
    size_t per = (m + (size_t)n - 1) / (size_t)n, padded = rs_split >= 0 ? per * (size_t)n : m;
    int32_t *mine = tp_comm_alloc(c, 2 * nb * sizeof *mine);
    int32_t *span = tp_comm_alloc(c, 2 * nb * sizeof *span);
    int *unit = tp_comm_alloc(c, nb * sizeof *unit);
    int64_t *fx = tp_comm_alloc(c, padded * sizeof *fx);
    int64_t *sum = tp_comm_alloc(c, (rs_split >= 0 ? per : m) * sizeof *sum);
    uint8_t *slice = rs_split >= 0 ? tp_comm_alloc(c, per * es) : NULL;
    uint8_t *gathered = rs_split >= 0 && padded != m ? tp_comm_alloc(c, padded * es) : NULL;
    if (!mine || !span || !unit || !fx || !sum || (rs_split >= 0 && !slice) ||
        (rs_split >= 0 && padded != m && !gathered)) {
        c->arena_used = mark;
        return tp_error_set(err, TP_ENOMEM, "--repro exact: arena too small for %zu elements", m);
    }
    /* 1. the blocks' units: a max-allreduce of the spans */
    tp_bfx_scan(a->dtype, send, m, mine);
    struct tp_coll_args sa = {.kind = TP_ALLREDUCE, .dtype = TP_I32, .op = TP_MAX,
                              .count = 2 * nb, .chunk_bytes = a->chunk_bytes};
    struct redfn sred = {.dtype = TP_I32, .op = TP_MAX, .esize = 4, .nranks = n};
    const struct algo *sal = tp__coll_resolve(c, &sa, err);
    int rc = sal ? tp__coll_run_plan(c, sal, &sa, mine, span, 2 * nb, &sred, false, err)
                 : err->code;
    size_t nwide = 0;
    for (size_t b = 0; rc == 0 && b < nb; b++) {
        unit[b] = tp_bfx_unit(span + 2 * b, n);
        if (!unit[b])
            nwide += (b + 1) * TP_BFX_BLOCK < m ? TP_BFX_BLOCK : m - b * TP_BFX_BLOCK;
    }
    /* 2. the values as int64 at their block's unit (a wide block's as 0) */
    if (rc == 0)
        tp_bfx_load_range(a->dtype, unit, send, 0, m, fx);
    if (rc == 0 && padded > m)
        memset(fx + m, 0, (padded - m) * sizeof *fx);
    /* 3. the sums, rounded once (an average: divided by the rank count) */
    uint32_t div = a->op == TP_AVG ? (uint32_t)n : 1;
    struct redfn ired = {.dtype = TP_I64, .op = TP_SUM, .esize = 8, .nranks = n};
    if (rc == 0 && rs_split >= 0) {
        struct tp_coll_args ra = {.kind = TP_REDUCE_SCATTER, .dtype = TP_I64, .op = TP_SUM,
                                  .count = per, .chunk_bytes = a->chunk_bytes};
        rc = tp__coll_run_plan(c, split[rs_split].reduce_scatter, &ra, fx, sum, per, &ired,
                               false, err);
        size_t lo = (size_t)me * per, hi = lo + per < m ? lo + per : m;
        if (rc == 0 && lo < hi)
            tp_bfx_store_range(a->dtype, unit, sum, lo, hi, div, slice);
        struct tp_coll_args ga = {.kind = TP_ALLGATHER, .dtype = a->dtype, .count = per,
                                  .chunk_bytes = a->chunk_bytes};
        struct redfn gred = {.dtype = a->dtype, .op = TP_SUM, .esize = es, .nranks = n};
        if (rc == 0)
            rc = tp__coll_run_plan(c, split[rs_split].allgather, &ga, slice,
                                   gathered ? gathered : recv, per, &gred, false, err);
        if (rc == 0 && gathered)
            memcpy(recv, gathered, m * es);
    } else if (rc == 0) {
        struct tp_coll_args ia = {.kind = TP_ALLREDUCE, .dtype = TP_I64, .op = TP_SUM,
                                  .count = m, .algo = al->name, .chunk_bytes = a->chunk_bytes};
        rc = tp__coll_run_plan(c, al, &ia, fx, sum, m, &ired, false, err);
        if (rc == 0)
            tp_bfx_store_range(a->dtype, unit, sum, 0, m, div, recv);
    }
    /* 4. the blocks that did not fit, packed, by the wide path */
    if (rc == 0 && nwide) {
        size_t at = 0;
        uint8_t *win = tp_comm_alloc(c, nwide * es), *wout = tp_comm_alloc(c, nwide * es);
        if (!win || !wout)
            rc = tp_error_set(err, TP_ENOMEM, "--repro exact: arena too small for %zu elements",
                              nwide);
        for (size_t b = 0; rc == 0 && b < nb; b++) {
            size_t from = b * TP_BFX_BLOCK, k = from + TP_BFX_BLOCK < m ? TP_BFX_BLOCK : m - from;
            if (!unit[b]) {
                memcpy(win + at * es, send + from * es, k * es);
                at += k;
            }
        }
        if (rc == 0)
            rc = wide(c, al, a, win, wout, nwide, err);
        at = 0;
        for (size_t b = 0; rc == 0 && b < nb; b++) {
            size_t from = b * TP_BFX_BLOCK, k = from + TP_BFX_BLOCK < m ? TP_BFX_BLOCK : m - from;
            if (!unit[b]) {
                memcpy(recv + from * es, wout + at * es, k * es);
                at += k;
            }
        }
    }
    c->arena_used = mark;
    return rc;
}

int tp__coll_repro(struct tp_comm *c, const struct algo *al, const struct tp_coll_args *a,
                   tp_error *err)
{
    if (!tp_bfx_supports(a->dtype))
        return wide(c, al, a, a->sendbuf, a->recvbuf, a->count, err);
    int rc = 0;
    for (size_t off = 0; rc == 0 && off < a->count; off += FAST_SEG)
        rc = fast_segment(c, al, a, off, a->count - off < FAST_SEG ? a->count - off : FAST_SEG,
                          err);
    return rc;
}
