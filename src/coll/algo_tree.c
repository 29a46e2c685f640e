/* Tree algorithms, pipelined in chunks: binomial trees (latency-optimal for
 * small messages: log2(n) steps) for broadcast, reduce and allreduce, and
 * the double binary tree for allreduce: each half of the data goes up and
 * down its own binary tree, the second tree the mirror image of the first,
 * so a rank that is interior in one tree is a leaf in the other and every
 * link carries data both ways (NCCL's small- and medium-size allreduce).
 * The two-level allreduce lives here too: reduce within each host, allreduce
 * among one leader per host, broadcast within each host. */
#include <stdlib.h>
#include <string.h>

#include "coll_int.h"

void tp__coll_tree_binomial(int n, int me, int root, struct tree *t)
{
    int vr = (me - root + n) % n;
    t->nchild = 0;
    t->parent = -1;
    int mask = 1;
    while (mask < n) {
        if (vr & mask) {
            t->parent = (vr - mask + root) % n;
            break;
        }
        mask <<= 1;
    }
    /* children: vr + 2^k below the lowest set bit; smallest subtree first,
     * so reductions start with the data that arrives first */
    for (int m = 1; m < mask && m < n; m <<= 1)
        if (vr + m < n && t->nchild < 64)
            t->child[t->nchild++] = (vr + m + root) % n;
}

void tp__coll_tree_heap(int n, int me, bool mirror, struct tree *t)
{
    int v = mirror ? n - 1 - me : me;
    t->parent = v == 0 ? -1 : (v - 1) / 2;
    if (t->parent >= 0 && mirror)
        t->parent = n - 1 - t->parent;
    t->nchild = 0;
    for (int c = 2 * v + 1; c <= 2 * v + 2 && c < n; c++)
        t->child[t->nchild++] = mirror ? n - 1 - c : c;
}

void tp__coll_tree_reduce(struct plan *p, const struct grp *g, const struct tree *t,
                          const uint8_t *sb, uint8_t *rb, size_t lo, size_t cnt, size_t M,
                          const int *dep, int *ends, bool finish)
{
    size_t es = p->red.esize;
    for (size_t j = 0; j < M; j++) {
        size_t off, len;
        chunk_range(lo, cnt, M, j, es, &off, &len);
        int last = dep ? dep[j] : NO_DEP;
        const uint8_t *src = sb + off;
        for (int c = 0; c < t->nchild; c++) {
            int peer = g->rank[t->child[c]];
            last = c == 0 ? t_recv3(p, peer, rb + off, sb + off, len, last, NO_DEP)
                          : t_recvred(p, peer, rb + off, len, last, NO_DEP);
            src = rb + off;
        }
        if (t->parent >= 0)
            last = t_send(p, g->rank[t->parent], src, len, last, NO_DEP);
        else if (!t->nchild)
            last = t_copy(p, rb + off, sb + off, len, last, NO_DEP);
        if (t->parent < 0 && finish)
            last = t_finish(p, rb + off, len, last, NO_DEP);
        ends[j] = last;
    }
}

void tp__coll_tree_bcast(struct plan *p, const struct grp *g, const struct tree *t,
                         const uint8_t *src, uint8_t *rb, size_t lo, size_t cnt, size_t M,
                         const int *dep, int *ends)
{
    size_t es = p->red.esize;
    for (size_t j = 0; j < M; j++) {
        size_t off, len;
        chunk_range(lo, cnt, M, j, es, &off, &len);
        int got = dep ? dep[j] : NO_DEP, end = NO_DEP;
        const uint8_t *from = (src ? src : rb) + off;
        if (t->parent >= 0) {
            got = t_recv(p, g->rank[t->parent], rb + off, len, got, NO_DEP);
            from = rb + off;
        } else if (src && src != rb) {
            end = t_copy(p, rb + off, src + off, len, got, NO_DEP);
        }
        end = t_join(p, end, got);
        for (int c = 0; c < t->nchild; c++)
            end = t_join(p, end, t_send(p, g->rank[t->child[c]], from, len, got, NO_DEP));
        ends[j] = end;
    }
}

static int *ids_or_oom(struct plan *p, size_t n)
{
    int *v = malloc(n * sizeof *v + sizeof *v);
    if (!v)
        p->oom = true;
    return v;
}

static int join_ends(struct plan *p, const int *ends, size_t M)
{
    int end = NO_DEP;
    for (size_t j = 0; j < M; j++)
        end = t_join(p, end, ends[j]);
    return end;
}

static int *start_deps(struct plan *p, int dep, size_t M)
{
    int *d = ids_or_oom(p, M);
    if (d)
        for (size_t j = 0; j < M; j++)
            d[j] = dep;
    return d;
}

static int binomial_bcast(struct plan *p, const struct grp *g, const struct bargs *b)
{
    struct tree t;
    tp__coll_tree_binomial(g->n, g->me, b->root, &t);
    size_t M = nchunks(b->count * p->red.esize, p->chunk);
    int *ends = ids_or_oom(p, M), *dep = start_deps(p, b->dep, M), end = NO_DEP;
    if (ends && dep) {
        tp__coll_tree_bcast(p, g, &t, t.parent < 0 ? b->send : NULL, b->recv, 0, b->count, M, dep,
                            ends);
        end = join_ends(p, ends, M);
    }
    free(ends);
    free(dep);
    return end;
}

static int binomial_reduce(struct plan *p, const struct grp *g, const struct bargs *b)
{
    struct tree t;
    tp__coll_tree_binomial(g->n, g->me, b->root, &t);
    size_t M = nchunks(b->count * p->red.esize, p->chunk);
    int *ends = ids_or_oom(p, M), *dep = start_deps(p, b->dep, M), end = NO_DEP;
    if (ends && dep) {
        tp__coll_tree_reduce(p, g, &t, b->send, b->recv, 0, b->count, M, dep, ends, b->finish);
        end = join_ends(p, ends, M);
    }
    free(ends);
    free(dep);
    return end;
}

/* Reduce to index 0 then broadcast from it, chunk by chunk. */
static int tree_allreduce(struct plan *p, const struct grp *g, const struct tree *t,
                          const uint8_t *sb, uint8_t *rb, size_t lo, size_t cnt, size_t M,
                          int *dep, int *ends, bool finish)
{
    tp__coll_tree_reduce(p, g, t, sb, rb, lo, cnt, M, dep, ends, finish);
    /* the broadcast of chunk j waits for its reduction (at the root: the
     * result; elsewhere: our send of that chunk, before rb is overwritten) */
    tp__coll_tree_bcast(p, g, t, NULL, rb, lo, cnt, M, ends, ends);
    return 0;
}

static int binomial_allreduce(struct plan *p, const struct grp *g, const struct bargs *b)
{
    struct tree t;
    tp__coll_tree_binomial(g->n, g->me, 0, &t);
    size_t M = nchunks(b->count * p->red.esize, p->chunk);
    int *ends = ids_or_oom(p, M), *dep = start_deps(p, b->dep, M), end = NO_DEP;
    if (ends && dep) {
        tree_allreduce(p, g, &t, b->send, b->recv, 0, b->count, M, dep, ends, b->finish);
        end = join_ends(p, ends, M);
    }
    free(ends);
    free(dep);
    return end;
}

/* Each half of the data through one tree; tasks emitted phase by phase,
 * chunk by chunk, tree by tree, the same order on every rank, so the two
 * trees' messages on a shared link are in the same order at both ends. */
static int dbtree_allreduce(struct plan *p, const struct grp *g, const struct bargs *b)
{
    struct tree t[2];
    tp__coll_tree_heap(g->n, g->me, false, &t[0]);
    tp__coll_tree_heap(g->n, g->me, true, &t[1]);
    size_t half = b->count / 2, lo[2] = {0, half}, cnt[2] = {half, b->count - half};
    size_t M = nchunks(cnt[1] * p->red.esize, p->chunk);
    int *ends = ids_or_oom(p, 2 * M), *dep = start_deps(p, b->dep, M), end = NO_DEP;
    if (!ends || !dep) {
        free(ends);
        free(dep);
        return NO_DEP;
    }
    int one[2];
    for (size_t j = 0; j < M; j++)
        for (int k = 0; k < 2; k++) {
            size_t l, c;
            chunk_range(lo[k], cnt[k], M, j, p->red.esize, &l, &c);
            /* one chunk at a time: reuse tp__coll_tree_reduce with M = 1 over the chunk */
            tp__coll_tree_reduce(p, g, &t[k], b->send, b->recv, l / p->red.esize, c / p->red.esize,
                                 1, &dep[j], one, b->finish);
            ends[2 * j + (size_t)k] = one[0];
        }
    for (size_t j = 0; j < M; j++)
        for (int k = 0; k < 2; k++) {
            size_t l, c;
            chunk_range(lo[k], cnt[k], M, j, p->red.esize, &l, &c);
            tp__coll_tree_bcast(p, g, &t[k], NULL, b->recv, l / p->red.esize, c / p->red.esize, 1,
                                &ends[2 * j + (size_t)k], one);
            end = t_join(p, end, one[0]);
        }
    free(ends);
    free(dep);
    return end;
}

/* Two levels: reduce to the host's leader over shared memory, allreduce
 * among leaders over the fabric, broadcast back within the host. */
static int hier_allreduce(struct plan *p, const struct grp *g, const struct bargs *b)
{
    (void)g;
    struct tp_comm *c = p->comm;
    size_t M = nchunks(b->count * p->red.esize, p->chunk);
    int *ends = ids_or_oom(p, M), *dep = start_deps(p, b->dep, M), end = NO_DEP;
    if (!ends || !dep) {
        free(ends);
        free(dep);
        return NO_DEP;
    }
    struct tree t;
    tp__coll_tree_binomial(c->local.n, c->local.me, 0, &t);
    tp__coll_tree_reduce(p, &c->local, &t, b->send, b->recv, 0, b->count, M, dep, ends, false);
    int mid = join_ends(p, ends, M);
    if (c->local.me == 0 && c->leaders.n > 1) {
        struct bargs lb = *b;
        lb.send = b->recv; /* in place */
        lb.dep = mid;
        const struct algo *inner = b->count * p->red.esize <= (256u << 10)
                                       ? &tp__coll_algo_rhd_allreduce
                                       : &tp__coll_algo_ring_allreduce;
        mid = inner->build(p, &c->leaders, &lb);
    } else if (c->local.me == 0 && b->finish) {
        mid = t_finish(p, b->recv, b->count * p->red.esize, mid, NO_DEP);
    }
    for (size_t j = 0; j < M; j++)
        dep[j] = mid;
    tp__coll_tree_bcast(p, &c->local, &t, NULL, b->recv, 0, b->count, M, dep, ends);
    end = join_ends(p, ends, M);
    free(ends);
    free(dep);
    return end;
}

const struct algo tp__coll_algo_binomial_allreduce = {"binomial", TP_ALLREDUCE, binomial_allreduce};
const struct algo tp__coll_algo_binomial_bcast = {"binomial", TP_BROADCAST, binomial_bcast};
const struct algo tp__coll_algo_binomial_reduce = {"binomial", TP_REDUCE, binomial_reduce};
const struct algo tp__coll_algo_dbtree_allreduce = {"dbtree", TP_ALLREDUCE, dbtree_allreduce};
const struct algo tp__coll_algo_hier_allreduce = {"hier", TP_ALLREDUCE, hier_allreduce};
