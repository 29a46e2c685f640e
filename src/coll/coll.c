/* The collectives' front door: argument checks, the arena a communicator
 * needs, and one call = the graph of the algorithm --algo names, or of the
 * kind's size-based choice (algo.c), run. --repro exact hands allreduce to
 * repro.c: inputs become fixed-point integers (blockfx.c, fixed.c), the
 * integers add (integer addition: order cannot matter), and each element is
 * rounded once at the end. */
#include <stdlib.h>
#include <string.h>

#include "kind_int.h"
#include "tp/fixed.h"

int tp_coll_check_args(enum tp_coll_kind kind, enum tp_dtype dtype, enum tp_redop op,
                       bool exact, const char *algo, tp_error *err)
{
    if (algo && strcmp(algo, "auto") != 0 && !tp__coll_find_algo(kind, algo))
        return tp__coll_no_algo(kind, algo, err);
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


size_t tp_coll_arena_bytes(int nranks, size_t call_bytes, bool exact, size_t own_bytes)
{
    return 3 * call_bytes + (size_t)nranks * 340000 + (4u << 20) +
           (exact ? 2 * (size_t)TP__COLL_EXACT_SEG_BYTES : 0) + own_bytes;
}

int tp_coll_run(struct tp_comm *c, const struct tp_coll_args *a, tp_error *err)
{
    if (c->failed)
        return tp_error_set(err, TP_EPROTO, "communicator failed earlier");
    const struct algo *al = tp__coll_resolve(c, a, err);
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
        rc = tp__coll_run_plan(c, al, a, a->sendbuf, a->recvbuf, a->count, &red, a->op == TP_AVG, err);
    } else {
        rc = tp__coll_repro(c, al, a, err);
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
    const struct algo *al = tp__coll_resolve(c, &a, err);
    if (!al)
        return err->code;
    int rc = tp_coll_check_args(a.kind, dtype, TP_SUM, true, NULL, err);
    if (rc < 0)
        return rc;
    struct redfn red = {.dtype = dtype, .op = TP_SUM, .fixed = true,
                        .esize = tp_fx_words(dtype) * 8, .nranks = c->size};
    size_t mark = c->arena_used;
    rc = tp__coll_run_plan(c, al, &a, send, recv, count, &red, false, err);
    c->arena_used = mark;
    if (rc < 0)
        tp_comm_abort(c);
    return rc;
}
