/* --repro exact: the allreduce (sum, avg) whose result is the correctly
 * rounded exact sum, the same bits whatever the rank count, algorithm,
 * chunking or arrival order (docs/reproducibility.md).
 *
 * The fast path, per segment of the message, for the allreduce algorithms
 * that are a reduce-scatter and an allgather (ring, rabenseifner):
 *   1. the ranks exchange their values as they are (a direct exchange in
 *      place of the reduce-scatter: each rank gets every rank's values of
 *      its slice, the type's bytes on the wire);
 *   2. the owner of a slice sums them exactly and rounds each element once
 *      (tp_bfx_sum: block fixed-point, one int64 a value at a unit from the
 *      block's own span, the wide words for a block that needs them: a NaN
 *      or an infinity, values too far apart);
 *   3. the algorithm's allgather spreads the rounded slices.
 * Two ranks run ring's or rabenseifner's own graph, as plain does: each
 * element is reduced once, from exactly the two ranks' values, and that
 * receive's reduction is their exact sum rounded once (red.exact2), so
 * the chunks pipeline and the forwarded receives stream as plain's do.
 * Recursive doubling on two ranks is one exchange of the whole message,
 * each receive summing the peer's values with its own (as with the direct
 * exchange's two ranks), where send and receive buffers are apart.
 * For the other algorithms, a message whose values on every rank together
 * are at most GATHER_BYTES (recursive doubling: TP__COLL_EXACT_SEG_BYTES)
 * is gathered whole (Bruck's allgather) and every rank sums it
 * (tp_bfx_sum); for a larger one every rank scans its blocks'
 * spans, a max-allreduce of two int32 a block agrees on each block's unit, the
 * values become int64s at it, the algorithm allreduces the int64s and every
 * rank rounds every element; the blocks that do not fit take the wide
 * representation (include/tp/fixed.h), packed together.
 * f64 takes the wide path (its 53-bit significands leave one int64 little
 * room for a span). Integer sums cannot overflow: the unit leaves
 * ceil(log2 ranks) bits of headroom. Either way the result is the same
 * bits. */
#include <string.h>
#include <unistd.h>

#include "kind_int.h"
#include "tp/blockfx.h"
#include "tp/fixed.h"

#define FAST_SEG (1u << 16)   /* elements a pass of the agreed-span path (a multiple of the block) */
#define DIRECT_SEG (1u << 18) /* elements a pass of the direct exchange */
#define GATHER_BYTES (64u << 10) /* every rank's values of a message gathered whole, at most */

/* The allreduce algorithms that are a reduce-scatter and an allgather, by
 * the allgather they end with (the exact path replaces their
 * reduce-scatter by the direct exchange below). */
static const struct {
    const struct algo *allreduce, *allgather;
} split[] = {
    {&tp__coll_algo_ring_allreduce, &tp__coll_algo_ring_allgather},
    {&tp__coll_algo_rhd_allreduce, &tp__coll_algo_bruck_allgather},
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

/* Rank r's slice of a segment of m elements split n ways: [r * per,
 * min(m, (r + 1) * per)) with per = ceil(m / n), the allgather's blocks. */
static size_t slice_len(size_t m, int n, int r)
{
    size_t per = (m + (size_t)n - 1) / (size_t)n, lo = (size_t)r * per;
    return lo >= m ? 0 : m - lo < per ? m - lo : per;
}

/* The direct exchange (not user-selectable, so not in the algorithms'
 * table): every rank sends each other rank that rank's slice of its send
 * buffer as it is, all at once. Each receives its own slice of every other
 * rank's into recv's slot of that rank (slot r at r * per elements). */
static int build_exchange(struct plan *p, const struct grp *g, const struct bargs *b)
{
    int n = g->n, me = g->me;
    size_t es = p->red.esize, per = (b->count + (size_t)n - 1) / (size_t)n;
    size_t mine = slice_len(b->count, n, me);
    const uint8_t *send = b->send;
    uint8_t *recv = b->recv;
    int end = NO_DEP;
    for (int k = 1; k < n; k++) {
        int to = (me + k) % n, from = (me - k + n) % n;
        size_t len = slice_len(b->count, n, to);
        if (len)
            end = t_join(p, end, t_send(p, g->rank[to], send + (size_t)to * per * es, len * es,
                                        b->dep, NO_DEP));
        if (mine)
            end = t_join(p, end, t_recv(p, g->rank[from], recv + (size_t)from * per * es,
                                        mine * es, b->dep, NO_DEP));
    }
    return end;
}

static const struct algo exchange = {"exchange", TP_ALLTOALL, build_exchange};

/* Whether a's buffers (send and receive, on each rank of this host) are
 * past the last-level cache (32 MiB where the C library cannot say), so
 * the exact sum's inputs come from memory: it then prefetches them. */
static bool past_cache(const struct tp_comm *c, const struct tp_coll_args *a)
{
    static long llc; /* the same value whichever thread reads it first */
    long v = __atomic_load_n(&llc, __ATOMIC_RELAXED);
    if (!v) {
        v = sysconf(_SC_LEVEL3_CACHE_SIZE);
        v = v > 0 ? v : 32l << 20;
        __atomic_store_n(&llc, v, __ATOMIC_RELAXED);
    }
    return 2 * a->count * tp_dtype_size(a->dtype) * (size_t)c->local.n > (size_t)v;
}

/* One pass of the fast path over elements [off, off + m) for an algorithm
 * that is a reduce-scatter and an allgather (split[k]): the ranks exchange
 * their values as they are, so each owns every rank's values of its slice;
 * the owner sums them exactly and rounds once, locally (tp_bfx_sum: block
 * fixed-point at units from those values' own spans, the wide words for a
 * block that needs them), and the allgather of split[k] spreads the
 * rounded slices. The values cross the wire in their type, once, and no
 * rank converts values it does not own. */
static int direct_segment(struct tp_comm *c, int k, const struct tp_coll_args *a, size_t off,
                          size_t m, tp_error *err)
{
    int n = c->size, me = c->rank;
    size_t es = tp_dtype_size(a->dtype), mark = c->arena_used;
    size_t per = (m + (size_t)n - 1) / (size_t)n, mine = slice_len(m, n, me);
    const uint8_t *send = (const uint8_t *)a->sendbuf + off * es;
    uint8_t *recv = (uint8_t *)a->recvbuf + off * es;
    uint8_t *stage = tp_comm_alloc(c, (size_t)n * per * es);
    uint8_t *gathered = per * (size_t)n != m ? tp_comm_alloc(c, per * (size_t)n * es) : NULL;
    const void **in = tp_comm_alloc(c, (size_t)n * sizeof *in);
    /* the rounded slice lands where the allgather leaves it (in place) */
    uint8_t *slice = (gathered ? gathered : recv) + (size_t)me * per * es;
    if (!stage || !in || (per * (size_t)n != m && !gathered)) {
        c->arena_used = mark;
        return tp_error_set(err, TP_ENOMEM, "--repro exact: arena too small for %zu elements", m);
    }
    struct redfn raw = {.dtype = a->dtype, .op = a->op, .esize = es, .nranks = n,
                        .ahead = past_cache(c, a)};
    struct tp_coll_args xa = {.kind = TP_ALLTOALL, .dtype = a->dtype, .count = m,
                              .chunk_bytes = a->chunk_bytes};
    int rc = tp__coll_run_plan(c, &exchange, &xa, send, stage, m, &raw, false, err);
    for (int r = 0; r < n; r++)
        in[r] = r == me ? send + (size_t)me * per * es : stage + (size_t)r * per * es;
    if (rc == 0 && mine)
        tp_bfx_sum(a->dtype, in, n, mine, a->op == TP_AVG ? (uint32_t)n : 1, raw.ahead, slice);
    struct tp_coll_args ga = {.kind = TP_ALLGATHER, .dtype = a->dtype, .count = per,
                              .chunk_bytes = a->chunk_bytes};
    if (rc == 0)
        rc = tp__coll_run_plan(c, split[k].allgather, &ga, slice, gathered ? gathered : recv, per,
                               &raw, false, err);
    if (rc == 0 && gathered)
        memcpy(recv, gathered, m * es);
    c->arena_used = mark;
    return rc;
}

/* One pass of the fast path over elements [off, off + m) (off a multiple of
 * the block) for the other allreduce algorithms: the units agreed first,
 * then the int64s allreduced by the algorithm itself and rounded by every
 * rank. */
static int fast_segment(struct tp_comm *c, const struct algo *al, const struct tp_coll_args *a,
                        size_t off, size_t m, tp_error *err)
{
    int n = c->size;
    size_t es = tp_dtype_size(a->dtype), nb = tp_bfx_blocks(m), mark = c->arena_used;
    const uint8_t *send = (const uint8_t *)a->sendbuf + off * es;
    uint8_t *recv = (uint8_t *)a->recvbuf + off * es;
    int32_t *mine = tp_comm_alloc(c, 2 * nb * sizeof *mine);
    int32_t *span = tp_comm_alloc(c, 2 * nb * sizeof *span);
    int *unit = tp_comm_alloc(c, nb * sizeof *unit);
    int64_t *fx = tp_comm_alloc(c, m * sizeof *fx);
    int64_t *sum = tp_comm_alloc(c, m * sizeof *sum);
    if (!mine || !span || !unit || !fx || !sum) {
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
    /* 3. the sums by the algorithm, rounded once (an average: divided by
     * the rank count) */
    struct redfn ired = {.dtype = TP_I64, .op = TP_SUM, .esize = 8, .nranks = n};
    struct tp_coll_args ia = {.kind = TP_ALLREDUCE, .dtype = TP_I64, .op = TP_SUM, .count = m,
                              .algo = al->name, .chunk_bytes = a->chunk_bytes};
    if (rc == 0)
        rc = tp__coll_run_plan(c, al, &ia, fx, sum, m, &ired, false, err);
    if (rc == 0)
        tp_bfx_store_range(a->dtype, unit, sum, 0, m, a->op == TP_AVG ? (uint32_t)n : 1, recv);
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

/* Two ranks exchange their whole messages, each receive reducing the
 * peer's values with its own straight into recv (red.exact2): recursive
 * doubling's one step, with no copy. The peer reads send while this rank
 * writes recv, so they must not overlap. */
static int build_pair(struct plan *p, const struct grp *g, const struct bargs *b)
{
    int peer = g->rank[1 - g->me];
    size_t bytes = b->count * p->red.esize;
    return t_join(p, t_send(p, peer, b->send, bytes, b->dep, NO_DEP),
                  t_recv3(p, peer, b->recv, b->send, bytes, b->dep, NO_DEP));
}

static const struct algo pair = {"pair", TP_ALLREDUCE, build_pair};

/* A small message, whole: every rank's values gathered by Bruck's
 * allgather (ceil(log2 n) steps, as few as the allreduce algorithms that
 * suit small messages take), then summed exactly by every rank. */
static int gathered(struct tp_comm *c, const struct tp_coll_args *a, tp_error *err)
{
    int n = c->size;
    size_t es = tp_dtype_size(a->dtype), mark = c->arena_used;
    uint8_t *all = tp_comm_alloc(c, (size_t)n * a->count * es);
    const void **in = tp_comm_alloc(c, (size_t)n * sizeof *in);
    if (!all || !in) {
        c->arena_used = mark;
        return tp_error_set(err, TP_ENOMEM, "--repro exact: arena too small for %zu elements",
                            a->count);
    }
    struct redfn raw = {.dtype = a->dtype, .op = TP_SUM, .esize = es, .nranks = n};
    struct tp_coll_args ga = {.kind = TP_ALLGATHER, .dtype = a->dtype, .count = a->count,
                              .chunk_bytes = a->chunk_bytes};
    int rc = tp__coll_run_plan(c, &tp__coll_algo_bruck_allgather, &ga, a->sendbuf, all, a->count,
                               &raw, false, err);
    for (int r = 0; r < n; r++)
        in[r] = all + (size_t)r * a->count * es;
    if (rc == 0)
        tp_bfx_sum(a->dtype, in, n, a->count, a->op == TP_AVG ? (uint32_t)n : 1, false,
                   a->recvbuf);
    c->arena_used = mark;
    return rc;
}

int tp__coll_repro(struct tp_comm *c, const struct algo *al, const struct tp_coll_args *a,
                   tp_error *err)
{
    if (!tp_bfx_supports(a->dtype))
        return wide(c, al, a, a->sendbuf, a->recvbuf, a->count, err);
    int k = -1, rc = 0;
    for (size_t j = 0; j < sizeof split / sizeof split[0]; j++)
        if (split[j].allreduce == al)
            k = (int)j;
    /* recursive doubling's exact form is the gather itself (each rank ends
     * with every rank's values, in log2 n exchanges): on two ranks one
     * exchange whose receives sum (where send and receive lie apart); else
     * the gather, whenever it fits the room exact mode adds to the arena */
    size_t es = tp_dtype_size(a->dtype), all = (size_t)c->size * a->count * es;
    const uint8_t *sb = a->sendbuf, *rb = a->recvbuf;
    if (al == &tp__coll_algo_rd_allreduce && c->size == 2 && a->count &&
        (sb + a->count * es <= rb || rb + a->count * es <= sb)) {
        struct redfn two = {.dtype = a->dtype, .op = a->op, .esize = es, .nranks = 2,
                            .exact2 = true, .ahead = past_cache(c, a)};
        return tp__coll_run_plan(c, &pair, a, a->sendbuf, a->recvbuf, a->count, &two, false,
                                 err);
    }
    if (k < 0 && a->count &&
        (all <= GATHER_BYTES ||
         (al == &tp__coll_algo_rd_allreduce && all <= TP__COLL_EXACT_SEG_BYTES)))
        return gathered(c, a, err);
    /* two ranks, ring or rabenseifner: the algorithm's own schedule, its
     * one reduction of each element a receive's exact sum of the two
     * ranks' values (red.exact2), so exact mode is plain's graph: chunks
     * pipelined, forwarded receives streamed (stores.c) */
    if (k >= 0 && c->size == 2) {
        struct redfn two = {.dtype = a->dtype, .op = a->op, .esize = es, .nranks = 2,
                            .exact2 = true, .ahead = past_cache(c, a)};
        return tp__coll_run_plan(c, al, a, a->sendbuf, a->recvbuf, a->count, &two, false, err);
    }
    size_t seg = k >= 0 ? DIRECT_SEG : FAST_SEG;
    for (size_t off = 0; rc == 0 && off < a->count; off += seg) {
        size_t m = a->count - off < seg ? a->count - off : seg;
        rc = k >= 0 ? direct_segment(c, k, a, off, m, err) : fast_segment(c, al, a, off, m, err);
    }
    return rc;
}
