/* The collectives' front door: the algorithm table, argument checks, the
 * arena a communicator needs, and one call = build the graph (of the
 * algorithm --algo names, or of the kind's size-based choice, src/coll/
 * kind_*.c), run it. --repro exact wraps allreduce: inputs become wide
 * fixed-point integers (src/coll/fixed.c), any algorithm adds them (integer
 * addition: order cannot matter), and each element is rounded once at the
 * end. */
#include <stdlib.h>
#include <string.h>

#include "kind_int.h"
#include "tp/fixed.h"

const struct algo *const tp__coll_algos[] = {
    &tp__coll_algo_ring_allreduce,
    &tp__coll_algo_rhd_allreduce,
    &tp__coll_algo_rd_allreduce,
    &tp__coll_algo_dbtree_allreduce,
    &tp__coll_algo_binomial_allreduce,
    &tp__coll_algo_hier_allreduce,
    &tp__coll_algo_ring_reduce_scatter,
    &tp__coll_algo_rhd_reduce_scatter,
    &tp__coll_algo_ring_allgather,
    &tp__coll_algo_bruck_allgather,
    &tp__coll_algo_binomial_bcast,
    &tp__coll_algo_ring_bcast,
    &tp__coll_algo_binomial_reduce,
    &tp__coll_algo_ring_reduce,
    &tp__coll_algo_pairwise_alltoall,
    &tp__coll_algo_ring_sendrecv,
    NULL,
};

const char *const *tp_coll_algos(enum tp_coll_kind kind)
{
    static const char *lists[TP_COLL_COUNT][8];
    if (!lists[kind][0]) {
        int k = 0;
        for (int i = 0; tp__coll_algos[i]; i++)
            if (tp__coll_algos[i]->kind == kind && k < 7)
                lists[kind][k++] = tp__coll_algos[i]->name;
    }
    return lists[kind];
}

static const struct algo *find_algo(enum tp_coll_kind kind, const char *name)
{
    for (int i = 0; tp__coll_algos[i]; i++)
        if (tp__coll_algos[i]->kind == kind && strcmp(tp__coll_algos[i]->name, name) == 0)
            return tp__coll_algos[i];
    return NULL;
}

static int no_algo(enum tp_coll_kind kind, const char *name, tp_error *err)
{
    char list[128] = "";
    for (const char *const *a = tp_coll_algos(kind); *a; a++) {
        strcat(list, list[0] ? ", " : "");
        strcat(list, *a);
    }
    return tp_error_set(err, TP_EUSAGE, "--algo %s: not an algorithm of %s (auto, %s)", name,
                        tp_coll_name(kind), list);
}

int tp_coll_check_args(enum tp_coll_kind kind, enum tp_dtype dtype, enum tp_redop op,
                       bool exact, const char *algo, tp_error *err)
{
    if (algo && strcmp(algo, "auto") != 0 && !find_algo(kind, algo))
        return no_algo(kind, algo, err);
    if (exact) {
        if (!tp__coll_kinds[kind]->exact)
            return tp_error_set(err, TP_EUSAGE,
                                "--repro exact: only allreduce has a reproducible mode (not %s)",
                                tp_coll_name(kind));
        if (!tp_dtype_is_float(dtype))
            return tp_error_set(err, TP_EUSAGE,
                                "--repro exact with --dtype %s: integer sums are exact already",
                                tp_dtype_name(dtype));
        if (op != TP_SUM && op != TP_AVG)
            return tp_error_set(err, TP_EUSAGE,
                                "--repro exact with --redop %s: only sum and avg (min, max "
                                "and prod do not depend on the order's rounding the same way; "
                                "min and max are exact already)",
                                tp_redop_name(op));
    }
    return 0;
}

/* The kind's size-based choice (written into the result; --algo overrides). */
static const struct algo *choose(const struct tp_comm *c, const struct tp_coll_args *a)
{
    return tp__coll_kinds[a->kind]->choose(c->size, c->nhosts,
                                           a->count * tp_dtype_size(a->dtype));
}

const char *tp_coll_algo(const struct tp_comm *c, const struct tp_coll_args *a, tp_error *err)
{
    if (a->algo && strcmp(a->algo, "auto") != 0) {
        const struct algo *al = find_algo(a->kind, a->algo);
        if (!al) {
            no_algo(a->kind, a->algo, err);
            return NULL;
        }
        return al->name;
    }
    return choose(c, a)->name;
}

static size_t default_chunk(const struct tp_comm *c)
{
    return c->shm && c->nhosts == 1 ? (256u << 10) : (512u << 10);
}

static int run_plan(struct tp_comm *c, const struct algo *al, const struct tp_coll_args *a,
                    const void *send, void *recv, size_t count, const struct redfn *red,
                    bool finish, tp_error *err)
{
    struct plan *p = &c->plan;
    p->nt = 0;
    p->oom = false;
    p->comm = c;
    p->red = *red;
    size_t chunk = a->chunk_bytes ? a->chunk_bytes : default_chunk(c);
    p->chunk = chunk < red->esize ? red->esize : chunk / red->esize * red->esize;
    struct bargs b = {.a = a, .send = send, .recv = recv, .count = count, .root = a->root,
                      .dep = NO_DEP, .finish = finish};
    al->build(p, &c->world, &b);
    return tp__coll_exec(c, p, err);
}

#define EXACT_SEG_BYTES (32u << 20) /* fixed-point bytes per pass */

size_t tp_coll_arena_bytes(int nranks, size_t call_bytes, bool exact, size_t own_bytes)
{
    return 3 * call_bytes + (size_t)nranks * 340000 + (4u << 20) +
           (exact ? 2 * (size_t)EXACT_SEG_BYTES : 0) + own_bytes;
}

/* The algorithm a names, or the size-based choice; NULL with err set when
 * the name is not one of a->kind's. A sweep passes the same name on every
 * call, so the last hit is kept: one compare in the timed loop instead of a
 * scan of the table. */
static const struct algo *resolve(struct tp_comm *c, const struct tp_coll_args *a, tp_error *err)
{
    if (!a->algo || strcmp(a->algo, "auto") == 0)
        return choose(c, a);
    if (c->algo_hit && a->kind == c->algo_hit->kind && strcmp(a->algo, c->algo_hit->name) == 0)
        return c->algo_hit;
    const struct algo *al = find_algo(a->kind, a->algo);
    if (!al) {
        no_algo(a->kind, a->algo, err);
        return NULL;
    }
    c->algo_hit = al;
    return al;
}

int tp_coll_run(struct tp_comm *c, const struct tp_coll_args *a, tp_error *err)
{
    if (c->failed)
        return tp_error_set(err, TP_EPROTO, "communicator failed earlier");
    const struct algo *al = resolve(c, a, err);
    if (!al)
        return err->code;
    int rc = tp_coll_check_args(a->kind, a->dtype, a->op, a->exact, NULL, err);
    if (rc < 0)
        return rc;
    if (tp__coll_kinds[a->kind]->rooted && (a->root < 0 || a->root >= c->size))
        return tp_error_set(err, TP_EUSAGE, "--root %d: not a rank (0..%d)", a->root,
                            c->size - 1);
    struct redfn red = {.dtype = a->dtype, .op = a->op, .fixed = false,
                        .esize = tp_dtype_size(a->dtype), .nranks = c->size};
    size_t mark = c->arena_used;
    if (!a->exact) {
        rc = run_plan(c, al, a, a->sendbuf, a->recvbuf, a->count, &red, a->op == TP_AVG, err);
    } else {
        size_t words = tp_fx_words(a->dtype), es = tp_dtype_size(a->dtype);
        size_t seg_max = EXACT_SEG_BYTES / (words * 8);
        size_t seg = a->count < seg_max ? a->count : seg_max;
        uint64_t *fs = tp_comm_alloc(c, (seg ? seg : 1) * words * 8);
        uint64_t *fr = tp_comm_alloc(c, (seg ? seg : 1) * words * 8);
        if (!fs || !fr) {
            c->arena_used = mark;
            return tp_error_set(err, TP_ENOMEM,
                                "--repro exact: arena too small for %zu fixed-point elements",
                                seg);
        }
        red.fixed = true;
        red.esize = words * 8;
        for (size_t done = 0; rc == 0 && (done < a->count || a->count == 0);) {
            size_t k = a->count - done < seg ? a->count - done : seg;
            tp_fx_load(a->dtype, fs, (const uint8_t *)a->sendbuf + done * es, k);
            rc = run_plan(c, al, a, fs, fr, k, &red, false, err);
            if (rc == 0)
                tp_fx_store(a->dtype, (uint8_t *)a->recvbuf + done * es, fr, k,
                            a->op == TP_AVG ? (uint32_t)c->size : 1);
            done += k;
            if (a->count == 0)
                break;
        }
    }
    c->arena_used = mark;
    if (rc < 0)
        tp_comm_abort(c);
    return rc;
}

int tp_coll_allreduce_fx(struct tp_comm *c, enum tp_dtype dtype, const uint64_t *send,
                         uint64_t *recv, size_t count, const char *algo, size_t chunk_bytes,
                         tp_error *err)
{
    if (c->failed)
        return tp_error_set(err, TP_EPROTO, "communicator failed earlier");
    struct tp_coll_args a = {.kind = TP_ALLREDUCE, .dtype = dtype, .op = TP_SUM,
                             .sendbuf = send, .recvbuf = recv, .count = count, .algo = algo,
                             .exact = true, .chunk_bytes = chunk_bytes};
    const struct algo *al = resolve(c, &a, err);
    if (!al)
        return err->code;
    int rc = tp_coll_check_args(a.kind, dtype, TP_SUM, true, NULL, err);
    if (rc < 0)
        return rc;
    struct redfn red = {.dtype = dtype, .op = TP_SUM, .fixed = true,
                        .esize = tp_fx_words(dtype) * 8, .nranks = c->size};
    size_t mark = c->arena_used;
    rc = run_plan(c, al, &a, send, recv, count, &red, false, err);
    c->arena_used = mark;
    if (rc < 0)
        tp_comm_abort(c);
    return rc;
}
