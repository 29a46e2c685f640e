/* Recursive halving and doubling (Rabenseifner): reduce-scatter by
 * recursive halving, then allgather by recursive doubling, log2(p) steps
 * each and the bandwidth of a ring; the middle-size allreduce of MPICH and
 * Open MPI. Rank counts that are not a power of two fold first: of the
 * first 2r ranks (r = n - p, p the largest power of two <= n) each even
 * rank hands its data to the odd rank after it and sits out, and gets the
 * result back at the end. The same halving gives reduce-scatter, where the
 * blocks are grouped so that each remaining rank's part covers the ranks
 * folded into it. */
#include <stdlib.h>

#include "coll_int.h"

struct fold {
    int p, rem, newrank; /* newrank -1: sits out */
};

static struct fold fold_of(int n, int me)
{
    struct fold f = {1, 0, -1};
    while (f.p * 2 <= n)
        f.p *= 2;
    f.rem = n - f.p;
    if (me < 2 * f.rem)
        f.newrank = me % 2 ? me / 2 : -1;
    else
        f.newrank = me - f.rem;
    return f;
}

static int real_of(const struct fold *f, int nr)
{
    return nr < f->rem ? nr * 2 + 1 : nr + f->rem;
}

/* Element offset of part k (0..p) of the halving: parts are the
 * allreduce's p even blocks, or for reduce-scatter the groups of original
 * ranks each remaining rank stands for. */
struct parts {
    const struct fold *f;
    size_t count; /* allreduce: elements; reduce-scatter: per rank */
    bool rs;
};

static size_t part_lo(const struct parts *pt, int k)
{
    if (!pt->rs)
        return blk_lo(pt->count, pt->f->p, k);
    int orig = k < pt->f->rem ? 2 * k : k + pt->f->rem;
    return (size_t)orig * pt->count;
}

/* Halving over parts [0, p) of buf (starting from src for the first step
 * when src != buf), then optionally doubling back. Returns the last task;
 * *lo_out receives my part. */
static int halve_double(struct plan *p, const struct grp *g, const struct parts *pt,
                        const uint8_t *src, uint8_t *buf, int dep, bool doubling, bool finish)
{
    const struct fold *f = pt->f;
    size_t es = p->red.esize;
    int nr = f->newrank, lo = 0, hi = f->p, last = dep;
    int sent[32];
    int step = 0;
    for (int mask = f->p / 2; mask >= 1; mask /= 2, step++) {
        int peer = g->rank[real_of(f, nr ^ mask)], mid = lo + (hi - lo) / 2;
        int slo = nr & mask ? lo : mid, shi = nr & mask ? mid : hi;
        int klo = nr & mask ? mid : lo, khi = nr & mask ? hi : mid;
        size_t so = part_lo(pt, slo) * es, sl = part_lo(pt, shi) * es - so;
        size_t ko = part_lo(pt, klo) * es, kl = part_lo(pt, khi) * es - ko;
        sent[step] = t_send(p, peer, src + so, sl, last, NO_DEP);
        last = t_recv3(p, peer, buf + ko, src + ko, kl, last, NO_DEP);
        src = buf;
        lo = klo;
        hi = khi;
    }
    if (finish) {
        size_t o = part_lo(pt, lo) * es;
        last = t_finish(p, buf + o, part_lo(pt, hi) * es - o, last, NO_DEP);
    }
    if (!doubling) {
        for (int s = 0; s < step; s++)
            last = t_join(p, last, sent[s]);
        return last;
    }
    for (int mask = 1; mask < f->p; mask *= 2) {
        step--;
        int peer = g->rank[real_of(f, nr ^ mask)], w = hi - lo;
        int plo = nr & mask ? lo - w : hi, phi = plo + w;
        size_t mo = part_lo(pt, lo) * es, ml = part_lo(pt, hi) * es - mo;
        size_t po = part_lo(pt, plo) * es, pl = part_lo(pt, phi) * es - po;
        int st = t_send(p, peer, buf + mo, ml, last, NO_DEP);
        /* the partner's range left this rank at the matching halving step */
        int rt = t_recv(p, peer, buf + po, pl, last, sent[step]);
        last = t_join(p, st, rt);
        lo = lo < plo ? lo : plo;
        hi = hi > phi ? hi : phi;
    }
    return last;
}

static int rhd_allreduce(struct plan *p, const struct grp *g, const struct bargs *b)
{
    int n = g->n, me = g->me;
    size_t bytes = b->count * p->red.esize;
    const uint8_t *sb = b->send;
    uint8_t *rb = b->recv;
    struct fold f = fold_of(n, me);
    int last = b->dep, out = NO_DEP;
    const uint8_t *src = sb;
    if (me < 2 * f.rem) {
        if (me % 2 == 0) {
            out = t_send(p, g->rank[me + 1], sb, bytes, b->dep, NO_DEP);
        } else {
            last = t_recv3(p, g->rank[me - 1], rb, sb, bytes, b->dep, NO_DEP);
            src = rb;
        }
    }
    if (f.newrank < 0) /* sat out: the result comes back */
        return t_recv(p, g->rank[me + 1], rb, bytes, out, NO_DEP);
    if (f.p == 1) {
        last = t_copy(p, rb, src, bytes, last, NO_DEP);
        return b->finish ? t_finish(p, rb, bytes, last, NO_DEP) : last;
    }
    struct parts pt = {&f, b->count, false};
    last = halve_double(p, g, &pt, src, rb, last, true, b->finish);
    if (me < 2 * f.rem)
        last = t_send(p, g->rank[me - 1], rb, bytes, last, NO_DEP);
    return last;
}

static int halving_reduce_scatter(struct plan *p, const struct grp *g, const struct bargs *b)
{
    int n = g->n, me = g->me;
    size_t es = p->red.esize, rc = b->count, part = rc * es, total = part * (size_t)n;
    const uint8_t *sb = b->send;
    uint8_t *rb = b->recv;
    struct fold f = fold_of(n, me);
    if (n == 1) {
        int t = t_copy(p, rb, sb, part, b->dep, NO_DEP);
        return b->finish ? t_finish(p, rb, part, t, NO_DEP) : t;
    }
    if (f.newrank < 0) {
        int s = t_send(p, g->rank[me + 1], sb, total, b->dep, NO_DEP);
        int r = t_recv(p, g->rank[me + 1], rb, part, b->dep, NO_DEP);
        return t_join(p, s, r);
    }
    uint8_t *acc = tp__coll_scratch(p->comm, total);
    if (!acc) {
        p->oom = true;
        return NO_DEP;
    }
    int last = b->dep;
    const uint8_t *src = sb;
    if (me < 2 * f.rem) {
        last = t_recv3(p, g->rank[me - 1], acc, sb, total, b->dep, NO_DEP);
        src = acc;
    }
    struct parts pt = {&f, rc, true};
    if (f.p > 1)
        last = halve_double(p, g, &pt, src, acc, last, false, false);
    else
        last = t_copy(p, acc, src, total, last, NO_DEP);
    /* my part covers me (and me - 1 when it was folded into me) */
    int first = me < 2 * f.rem ? me - 1 : me;
    size_t o = (size_t)first * part, l = (size_t)(me - first + 1) * part;
    if (b->finish)
        last = t_finish(p, acc + o, l, last, NO_DEP);
    int end = t_copy(p, rb, acc + (size_t)me * part, part, last, NO_DEP);
    if (first < me)
        end = t_join(p, end, t_send(p, g->rank[first], acc + o, part, last, NO_DEP));
    return end;
}

/* Recursive doubling: log2(p) steps, each exchanging the whole vector with
 * one partner; the fewest steps, so the small-message allreduce. Each step
 * writes a fresh buffer (two scratch buffers alternate, the last step
 * writes rb), since the partner may still be reading the one just sent. */
static int rd_allreduce(struct plan *p, const struct grp *g, const struct bargs *b)
{
    int n = g->n, me = g->me;
    size_t bytes = b->count * p->red.esize;
    const uint8_t *cur = b->send;
    uint8_t *rb = b->recv;
    struct fold f = fold_of(n, me);
    int last = b->dep, out = NO_DEP;
    int steps = 0;
    while ((1 << steps) < f.p)
        steps++;
    uint8_t *tmp[2] = {NULL, NULL};
    if (f.newrank >= 0 && (steps > 1 || me < 2 * f.rem)) {
        tmp[0] = tp__coll_scratch(p->comm, bytes);
        tmp[1] = tp__coll_scratch(p->comm, bytes);
        if (!tmp[0] || !tmp[1]) {
            p->oom = true;
            return NO_DEP;
        }
    }
    if (me < 2 * f.rem) {
        if (me % 2 == 0) {
            out = t_send(p, g->rank[me + 1], cur, bytes, b->dep, NO_DEP);
            return t_recv(p, g->rank[me + 1], rb, bytes, out, NO_DEP);
        }
        /* the fold lands in tmp[1]; the first step writes tmp[0] */
        last = t_recv3(p, g->rank[me - 1], tmp[1], cur, bytes, b->dep, NO_DEP);
        cur = tmp[1];
    }
    if (steps == 0) {
        last = t_copy(p, rb, cur, bytes, last, NO_DEP);
    }
    int sent[2] = {NO_DEP, NO_DEP};
    for (int k = 0; k < steps; k++) {
        int peer = g->rank[real_of(&f, f.newrank ^ (1 << k))];
        uint8_t *dst = k == steps - 1 ? rb : tmp[k % 2];
        int st = t_send(p, peer, cur, bytes, last, NO_DEP);
        /* dst was sent two steps ago: that send must be over */
        last = t_recv3(p, peer, dst, cur, bytes, last, sent[k % 2]);
        sent[k % 2] = st;
        last = t_join(p, last, st);
        cur = dst;
    }
    if (b->finish)
        last = t_finish(p, rb, bytes, last, NO_DEP);
    if (me < 2 * f.rem)
        last = t_send(p, g->rank[me - 1], rb, bytes, last, NO_DEP);
    return last;
}

const struct algo tp__coll_algo_rd_allreduce = {"recdoubling", TP_ALLREDUCE, rd_allreduce};
const struct algo tp__coll_algo_rhd_allreduce = {"rabenseifner", TP_ALLREDUCE, rhd_allreduce};
const struct algo tp__coll_algo_rhd_reduce_scatter = {"rabenseifner", TP_REDUCE_SCATTER,
                                                      halving_reduce_scatter};
