/* Ring algorithms, pipelined in chunks: allreduce (reduce-scatter then
 * allgather around the ring, 2(n-1) steps, each rank sending 2(n-1)/n of
 * the data: bandwidth-optimal), reduce-scatter, allgather, and the chain
 * (a ring cut open) for broadcast and reduce. Chunk j of step s+1 leaves as
 * soon as chunk j of step s has arrived, so the ring streams. */
#include <stdlib.h>

#include "coll_int.h"

#define L(g, i) ((g)->rank[(((i) % (g)->n) + (g)->n) % (g)->n])

static size_t chunks_for(const struct plan *p, size_t count, int n)
{
    size_t biggest = (count + (size_t)n - 1) / (size_t)n;
    return nchunks(biggest * p->red.esize, p->chunk);
}

/* The reduce-scatter half of the ring. Block (first - s) leaves at step s
 * and block (first - s - 1) arrives; the rank ends owning block
 * (first - n + 1). Step 0 sends from sb; later steps from acc. The last
 * step's receive lands in last_dst (a buffer laid out like acc). recv[s*M+j]
 * and send[s*M+j] get the task ids. */
static void ring_rs(struct plan *p, const struct grp *g, int first, const uint8_t *sb,
                    uint8_t *acc, uint8_t *last_dst, size_t last_shift, size_t count, size_t M,
                    int dep, int *send, int *recv)
{
    int n = g->n, me = g->me;
    size_t es = p->red.esize;
    int right = L(g, me + 1), left = L(g, me - 1);
    for (int s = 0; s < n - 1; s++) {
        int bs = ((first - s) % n + n) % n, br = ((first - s - 1) % n + n) % n;
        size_t slo = blk_lo(count, n, bs), scnt = blk_lo(count, n, bs + 1) - slo;
        size_t rlo = blk_lo(count, n, br), rcnt = blk_lo(count, n, br + 1) - rlo;
        for (size_t j = 0; j < M; j++) {
            size_t off, len;
            chunk_range(slo, scnt, M, j, es, &off, &len);
            send[s * (int)M + (int)j] =
                s == 0 ? t_send(p, right, sb + off, len, dep, NO_DEP)
                       : t_send(p, right, acc + off, len, recv[(s - 1) * (int)M + (int)j], NO_DEP);
            chunk_range(rlo, rcnt, M, j, es, &off, &len);
            uint8_t *d = s == n - 2 ? last_dst + (off - last_shift) : acc + off;
            recv[s * (int)M + (int)j] = t_recv3(p, left, d, sb + off, len, dep, NO_DEP);
        }
    }
}

static int ring_allreduce(struct plan *p, const struct grp *g, const struct bargs *b)
{
    int n = g->n, me = g->me;
    size_t es = p->red.esize, count = b->count;
    const uint8_t *sb = b->send;
    uint8_t *rb = b->recv;
    if (n == 1) {
        int t = t_copy(p, rb, sb, count * es, b->dep, NO_DEP);
        return b->finish ? t_finish(p, rb, count * es, t, NO_DEP) : t;
    }
    size_t M = chunks_for(p, count, n);
    int steps = n - 1, *ids = malloc(4 * (size_t)steps * M * sizeof *ids + sizeof *ids);
    if (!ids) {
        p->oom = true;
        return NO_DEP;
    }
    int *rs_send = ids, *rs_recv = ids + steps * M, *ag_recv = ids + 2 * steps * M,
        *own = ids + 3 * steps * M;
    ring_rs(p, g, me, sb, rb, rb, 0, count, M, b->dep, rs_send, rs_recv);
    int right = L(g, me + 1), left = L(g, me - 1);
    int ob = (me + 1) % n;
    size_t olo = blk_lo(count, n, ob), ocnt = blk_lo(count, n, ob + 1) - olo;
    for (size_t j = 0; j < M; j++) {
        size_t off, len;
        chunk_range(olo, ocnt, M, j, es, &off, &len);
        int last = rs_recv[(steps - 1) * (int)M + (int)j];
        own[j] = b->finish ? t_finish(p, rb + off, len, last, NO_DEP) : last;
    }
    int end = NO_DEP;
    for (int s = 0; s < steps; s++) {
        int bs = ((me + 1 - s) % n + n) % n, br = ((me - s) % n + n) % n;
        size_t slo = blk_lo(count, n, bs), scnt = blk_lo(count, n, bs + 1) - slo;
        size_t rlo = blk_lo(count, n, br), rcnt = blk_lo(count, n, br + 1) - rlo;
        for (size_t j = 0; j < M; j++) {
            size_t off, len;
            chunk_range(slo, scnt, M, j, es, &off, &len);
            int d = s == 0 ? own[j] : ag_recv[(s - 1) * (int)M + (int)j];
            int st = t_send(p, right, rb + off, len, d, NO_DEP);
            chunk_range(rlo, rcnt, M, j, es, &off, &len);
            /* block br left this rank at reduce-scatter step s: wait for it */
            ag_recv[s * (int)M + (int)j] =
                t_recv(p, left, rb + off, len, rs_send[s * (int)M + (int)j], NO_DEP);
            end = t_join(p, end, t_join(p, st, ag_recv[s * (int)M + (int)j]));
        }
    }
    for (size_t j = 0; j < M; j++)
        end = t_join(p, end, own[j]);
    free(ids);
    return end;
}

static int ring_reduce_scatter(struct plan *p, const struct grp *g, const struct bargs *b)
{
    int n = g->n, me = g->me;
    size_t es = p->red.esize, rc = b->count, count = rc * (size_t)n;
    const uint8_t *sb = b->send;
    uint8_t *rb = b->recv;
    if (n == 1) {
        int t = t_copy(p, rb, sb, rc * es, b->dep, NO_DEP);
        return b->finish ? t_finish(p, rb, rc * es, t, NO_DEP) : t;
    }
    uint8_t *acc = tp__coll_scratch(p->comm, count * es);
    size_t M = chunks_for(p, count, n);
    int steps = n - 1, *ids = malloc(2 * (size_t)steps * M * sizeof *ids + sizeof *ids);
    if (!ids || !acc) {
        free(ids);
        p->oom = true;
        return NO_DEP;
    }
    /* start one block later so the rank ends owning its own block; the
     * last step lands in rb, shifted so block me sits at rb */
    ring_rs(p, g, me - 1, sb, acc, rb, (size_t)me * rc * es, count, M, b->dep, ids,
            ids + steps * M);
    int end = NO_DEP;
    for (size_t j = 0; j < M; j++) {
        size_t off, len;
        chunk_range(0, rc, M, j, es, &off, &len);
        int last = ids[steps * M + (size_t)(steps - 1) * M + j];
        end = t_join(p, end, b->finish ? t_finish(p, rb + off, len, last, NO_DEP) : last);
        for (int s = 0; s < steps; s++)
            end = t_join(p, end, ids[(size_t)s * M + j]);
    }
    free(ids);
    return end;
}

static int ring_allgather(struct plan *p, const struct grp *g, const struct bargs *b)
{
    int n = g->n, me = g->me;
    size_t es = p->red.esize, sc = b->count;
    const uint8_t *sb = b->send;
    uint8_t *rb = b->recv;
    int end = t_copy(p, rb + (size_t)me * sc * es, sb, sc * es, b->dep, NO_DEP);
    if (n == 1)
        return end;
    size_t M = nchunks(sc * es, p->chunk);
    int *prev = malloc(2 * M * sizeof *prev + sizeof *prev), *cur = prev + M;
    if (!prev) {
        p->oom = true;
        return NO_DEP;
    }
    int right = L(g, me + 1), left = L(g, me - 1);
    for (int s = 0; s < n - 1; s++) {
        int bs = ((me - s) % n + n) % n, br = ((me - s - 1) % n + n) % n;
        for (size_t j = 0; j < M; j++) {
            size_t off, len;
            chunk_range(0, sc, M, j, es, &off, &len);
            int st = s == 0 ? t_send(p, right, sb + off, len, b->dep, NO_DEP)
                            : t_send(p, right, rb + (size_t)bs * sc * es + off, len, prev[j],
                                     NO_DEP);
            cur[j] = t_recv(p, left, rb + (size_t)br * sc * es + off, len, b->dep, NO_DEP);
            end = t_join(p, end, t_join(p, st, cur[j]));
        }
        int *t = prev;
        prev = cur;
        cur = t;
    }
    free(prev < cur ? prev : cur);
    return end;
}

/* Chain broadcast: root -> root+1 -> ... (a pipelined ring cut open). */
static int chain_bcast(struct plan *p, const struct grp *g, const struct bargs *b)
{
    int n = g->n, vr = (g->me - b->root + n) % n;
    size_t es = p->red.esize, bytes = b->count * es;
    size_t M = nchunks(bytes, p->chunk);
    const uint8_t *sb = b->send;
    uint8_t *rb = b->recv;
    int end = NO_DEP;
    int next = vr + 1 < n ? L(g, b->root + vr + 1) : -1, prev = L(g, b->root + vr - 1);
    if (vr == 0)
        end = t_copy(p, rb, sb, bytes, b->dep, NO_DEP);
    for (size_t j = 0; j < M; j++) {
        size_t off, len;
        chunk_range(0, b->count, M, j, es, &off, &len);
        int got = b->dep;
        if (vr > 0)
            end = t_join(p, end, got = t_recv(p, prev, rb + off, len, b->dep, NO_DEP));
        if (next >= 0)
            end = t_join(p, end, t_send(p, next, (vr == 0 ? sb : rb) + off, len, got, NO_DEP));
    }
    return end;
}

/* Chain reduce: the rank farthest from the root starts; each adds its own
 * data and passes on; the root finishes. */
static int chain_reduce(struct plan *p, const struct grp *g, const struct bargs *b)
{
    int n = g->n, vr = (g->me - b->root + n) % n;
    size_t es = p->red.esize, bytes = b->count * es;
    const uint8_t *sb = b->send;
    uint8_t *rb = b->recv;
    if (n == 1) {
        int t = t_copy(p, rb, sb, bytes, b->dep, NO_DEP);
        return b->finish ? t_finish(p, rb, bytes, t, NO_DEP) : t;
    }
    size_t M = nchunks(bytes, p->chunk);
    int from = vr + 1 < n ? L(g, b->root + vr + 1) : -1, to = L(g, b->root + vr - 1);
    int end = NO_DEP;
    for (size_t j = 0; j < M; j++) {
        size_t off, len;
        chunk_range(0, b->count, M, j, es, &off, &len);
        const uint8_t *src = sb + off;
        int got = b->dep;
        if (from >= 0) {
            got = t_recv3(p, from, rb + off, sb + off, len, b->dep, NO_DEP);
            src = rb + off;
        }
        if (vr > 0)
            got = t_send(p, to, src, len, got, NO_DEP);
        else if (b->finish)
            got = t_finish(p, rb + off, len, got, NO_DEP);
        end = t_join(p, end, got);
    }
    return end;
}

const struct algo tp__coll_algo_ring_allreduce = {"ring", TP_ALLREDUCE, ring_allreduce};
const struct algo tp__coll_algo_ring_reduce_scatter = {"ring", TP_REDUCE_SCATTER,
                                                       ring_reduce_scatter};
const struct algo tp__coll_algo_ring_allgather = {"ring", TP_ALLGATHER, ring_allgather};
const struct algo tp__coll_algo_ring_bcast = {"ring", TP_BROADCAST, chain_bcast};
const struct algo tp__coll_algo_ring_reduce = {"ring", TP_REDUCE, chain_reduce};
