/* --reduce exact's sum of the real model's gradient: every sample's
 * gradient on every rank, summed exactly and rounded once, so the weights
 * are the same bits for any rank count (docs/reproducibility.md).
 *
 * The fast path is block fixed-point (include/tp/blockfx.h) with an element
 * as its own block: the compute keeps each rank's per-sample gradients as
 * columns, one per element (r->cols, col_stride floats apart, zero past the
 * rank's samples); the ranks agree on each element's unit by a
 * max-allreduce of its span; each value becomes one int64 at that unit,
 * with ceil(log2 batch) bits of headroom, so the rank's samples sum in
 * int64 exactly; an int64 allreduce sums the ranks; each element is rounded
 * once. An element whose span does not fit (a NaN, an infinity, values too
 * far apart), on any rank, sends the whole gradient through the wide
 * representation (include/tp/fixed.h) instead, the same bits either way:
 * both are the correctly rounded exact sum. */
#include <stdlib.h>
#include <string.h>

#include "step_int.h"
#include "tp/blockfx.h"
#include "tp/fixed.h"
#include "tp/model.h"

size_t tp__step_col_stride(uint64_t local_max)
{
    return tp_bfx_blocks(local_max ? local_max : 1) * TP_BFX_BLOCK;
}

/* The wide path: the columns' values, sample by sample, into wide
 * accumulators, their allreduce, and the rounding. */
static int wide(struct rank *r, size_t gl, uint64_t m, float *out, tp_error *err)
{
    size_t words = tp_fx_words(TP_F32);
    float *row = malloc(gl * sizeof *row);
    uint64_t *tmp = calloc(gl * words, 8);
    if (!row || !tmp) {
        free(row);
        free(tmp);
        return tp_error_set(err, TP_ENOMEM, "step --reduce exact: out of memory");
    }
    memset(r->fx, 0, gl * words * 8);
    for (uint64_t j = 0; j < m; j++) {
        for (size_t e = 0; e < gl; e++)
            row[e] = r->cols[e * r->col_stride + j];
        tp_fx_load(TP_F32, tmp, row, gl);
        tp_fx_add(TP_F32, r->fx, tmp, gl);
    }
    free(row);
    free(tmp);
    int rc = tp_coll_allreduce_fx(r->c, TP_F32, r->fx, r->fx_sum, gl, r->o->algo, 0, err);
    if (rc == 0)
        tp_fx_store(TP_F32, out, r->fx_sum, gl, 1);
    return rc;
}

int tp__step_exact_sum(struct rank *r, float *out, tp_error *err)
{
    size_t gl = tp_model_grad_len(r->o->dim), per = r->col_stride / TP_BFX_BLOCK;
    uint64_t m = tp__step_local_count(r);
    int32_t *blk = malloc(gl * per * 2 * sizeof *blk);
    if (!blk)
        return tp_error_set(err, TP_ENOMEM, "step --reduce exact: out of memory");
    /* each element's span over this rank's samples: its blocks' maximum */
    tp_bfx_scan(TP_F32, r->cols, gl * r->col_stride, blk);
    for (size_t e = 0; e < gl; e++) {
        int32_t hi = 0, nl = 0;
        for (size_t k = 0; k < per; k++) {
            int32_t h = blk[2 * (e * per + k)], l = blk[2 * (e * per + k) + 1];
            hi = h > hi ? h : hi;
            nl = l > nl ? l : nl;
        }
        r->span[2 * e] = hi;
        r->span[2 * e + 1] = nl;
    }
    free(blk);
    struct tp_coll_args sa = {.kind = TP_ALLREDUCE, .dtype = TP_I32, .op = TP_MAX,
                              .sendbuf = r->span, .recvbuf = r->span_all, .count = 2 * gl};
    int rc = tp_coll_run(r->c, &sa, err);
    if (rc)
        return rc;
    /* the units: headroom for every sample of the global batch (the test
     * hook TP_FAULT_EXACT_WIDE, docs/env.md, fails every element's fit) */
    int addends = r->o->batch > INT32_MAX ? INT32_MAX : (int)r->o->batch;
    bool fit = !getenv("TP_FAULT_EXACT_WIDE");
    for (size_t e = 0; fit && e < gl; e++)
        fit = (r->unit[e] = tp_bfx_unit(r->span_all + 2 * e, addends)) != 0;
    if (!fit)
        return wide(r, gl, m, out, err);
    /* this rank's samples, summed exactly in int64 */
    for (size_t e = 0; e < gl; e++) {
        const float *col = r->cols + e * r->col_stride;
        int64_t acc = 0;
        for (uint64_t j = 0; j < m; j += TP_BFX_BLOCK) {
            size_t k = m - j < TP_BFX_BLOCK ? (size_t)(m - j) : TP_BFX_BLOCK;
            tp_bfx_load(TP_F32, col + j, k, r->unit[e], r->ints);
            for (size_t i = 0; i < k; i++)
                acc += r->ints[i];
        }
        r->isum[e] = acc;
    }
    struct tp_coll_args ia = {.kind = TP_ALLREDUCE, .dtype = TP_I64, .op = TP_SUM,
                              .sendbuf = r->isum, .recvbuf = r->isum_all, .count = gl};
    rc = tp_coll_run(r->c, &ia, err);
    for (size_t e = 0; rc == 0 && e < gl; e++)
        tp_bfx_store(TP_F32, r->isum_all + e, 1, r->unit[e], 1, out + e);
    return rc;
}
