/* Algorithms without reduction: Bruck's allgather (ceil(log2 n) steps for
 * any n, the small-message allgather of MPI libraries), pairwise exchange
 * for alltoall (n-1 steps, one partner each, as OSU and MPI libraries do
 * for large messages), and sendrecv around the ring (nccl-tests' sendrecv:
 * every rank sends to the next and receives from the previous). */
#include <stdlib.h>

#include "coll_int.h"

static int bruck_allgather(struct plan *p, const struct grp *g, const struct bargs *b)
{
    int n = g->n, me = g->me;
    size_t blk = b->count * p->red.esize;
    const uint8_t *sb = b->send;
    uint8_t *rb = b->recv;
    if (n == 1)
        return t_copy(p, rb, sb, blk, b->dep, NO_DEP);
    uint8_t *tmp = tp__coll_scratch(p->comm, blk * (size_t)n);
    if (!tmp) {
        p->oom = true;
        return NO_DEP;
    }
    /* tmp[i] holds rank (me + i)'s block */
    int last = t_copy(p, tmp, sb, blk, b->dep, NO_DEP);
    for (int k = 1; k < n; k <<= 1) {
        int cnt = k < n - k ? k : n - k;
        int to = g->rank[(me - k + n) % n], from = g->rank[(me + k) % n];
        int st = t_send(p, to, tmp, (size_t)cnt * blk, last, NO_DEP);
        int rt = t_recv(p, from, tmp + (size_t)k * blk, (size_t)cnt * blk, b->dep, NO_DEP);
        last = t_join(p, st, rt);
    }
    int end = NO_DEP;
    for (int i = 0; i < n; i++)
        end = t_join(p, end, t_copy(p, rb + (size_t)((me + i) % n) * blk, tmp + (size_t)i * blk,
                                    blk, last, NO_DEP));
    return end;
}

static int pairwise_alltoall(struct plan *p, const struct grp *g, const struct bargs *b)
{
    int n = g->n, me = g->me;
    size_t blk = b->count * p->red.esize;
    const uint8_t *sb = b->send;
    uint8_t *rb = b->recv;
    int last = t_copy(p, rb + (size_t)me * blk, sb + (size_t)me * blk, blk, b->dep, NO_DEP);
    for (int k = 1; k < n; k++) {
        int to = (me + k) % n, from = (me - k + n) % n;
        int st = t_send(p, g->rank[to], sb + (size_t)to * blk, blk, last, NO_DEP);
        int rt = t_recv(p, g->rank[from], rb + (size_t)from * blk, blk, last, NO_DEP);
        last = t_join(p, st, rt);
    }
    return last;
}

static int ring_sendrecv(struct plan *p, const struct grp *g, const struct bargs *b)
{
    int n = g->n, me = g->me;
    size_t bytes = b->count * p->red.esize;
    if (n == 1)
        return t_copy(p, b->recv, b->send, bytes, b->dep, NO_DEP);
    size_t M = nchunks(bytes, p->chunk);
    int end = NO_DEP;
    for (size_t j = 0; j < M; j++) {
        size_t off, len;
        chunk_range(0, b->count, M, j, p->red.esize, &off, &len);
        int st = t_send(p, g->rank[(me + 1) % n], (const uint8_t *)b->send + off, len, b->dep,
                        NO_DEP);
        int rt = t_recv(p, g->rank[(me - 1 + n) % n], (uint8_t *)b->recv + off, len, b->dep,
                        NO_DEP);
        end = t_join(p, end, t_join(p, st, rt));
    }
    return end;
}

const struct algo tp__coll_algo_bruck_allgather = {"bruck", TP_ALLGATHER, bruck_allgather};
const struct algo tp__coll_algo_pairwise_alltoall = {"pairwise", TP_ALLTOALL, pairwise_alltoall};
const struct algo tp__coll_algo_ring_sendrecv = {"ring", TP_SENDRECV, ring_sendrecv};
