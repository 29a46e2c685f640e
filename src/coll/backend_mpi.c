/* --backend mpi: the same collectives through the MPI library that
 * launched the ranks (MPI_Allreduce and its siblings), so one run and one
 * result format compare trainpath's algorithms with the user's MPI. bf16
 * and f16 have no MPI type: they travel as 16-bit integers with
 * user-defined operators that use trainpath's kernels; avg is MPI's sum
 * followed by the division; --repro exact takes block fixed-point
 * (tp/blockfx.h) where the type has it: the spans by MPI_Allreduce's max,
 * one int64 an element by its integer sum (exact in any order MPI adds),
 * each element rounded once; the other blocks and f64 send the wide
 * fixed-point words with an operator that adds them. Either way even MPI's
 * own algorithms give bitwise reproducible sums. The MPI call of each kind is in the kind's row
 * (src/coll/kind_*.c); this file maps the types and operators. */
#include <stdlib.h>
#include <string.h>

#include "kind_int.h"
#include "tp/blockfx.h"
#include "tp/fixed.h"

/* The row's need: an MPI library that the launcher initialised. */
static int ready(tp_error *err)
{
    if (!tp_coll_mpi_available())
        return tp_error_set(err, TP_EUSAGE,
                            "--backend mpi: the ranks were not started by mpirun or srun");
    return 0;
}

#ifdef TP_HAVE_MPI

bool tp_coll_mpi_available(void)
{
    int init = 0;
    MPI_Initialized(&init);
    return init;
}

static enum tp_dtype op_dtype;
static enum tp_redop op_redop;

static void user_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    tp_reduce(op_dtype, op_redop, inout, in, (size_t)*len);
}

static void fx_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    tp_fx_add(op_dtype, inout, in, (size_t)*len);
}

static MPI_Datatype mpi_type(enum tp_dtype t)
{
    switch (t) {
    case TP_F32:
        return MPI_FLOAT;
    case TP_F64:
        return MPI_DOUBLE;
    case TP_I32:
        return MPI_INT32_T;
    case TP_I64:
        return MPI_INT64_T;
    default:
        return MPI_UINT16_T;
    }
}

static MPI_Op mpi_op(enum tp_redop op)
{
    switch (op) {
    case TP_PROD:
        return MPI_PROD;
    case TP_MIN:
        return MPI_MIN;
    case TP_MAX:
        return MPI_MAX;
    default:
        return MPI_SUM;
    }
}

static int mpi_fail(int rc, const char *what, tp_error *err)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    return tp_error_set(err, TP_EPEER, "MPI %s: %s", what, msg);
}

static int run_call(struct tp_comm *c, const struct tp_coll_args *a, tp_error *err);

/* --repro exact by block fixed-point (an allreduce of a type that has it):
 * the blocks' spans, their units, the int64 sums, the rounding, and the
 * blocks that do not fit, packed, by the wide words (run_call). */
static int run_bfx(struct tp_comm *c, const struct tp_coll_args *a, tp_error *err)
{
    int n = c->size;
    size_t count = a->count, nb = tp_bfx_blocks(count), es = tp_dtype_size(a->dtype);
    size_t mark = c->arena_used, nwide = 0;
    int32_t *span = tp_comm_alloc(c, 4 * nb * sizeof *span);
    int *unit = tp_comm_alloc(c, nb * sizeof *unit);
    int64_t *fx = tp_comm_alloc(c, 2 * count * sizeof *fx + 8);
    if (!span || !unit || !fx) {
        c->arena_used = mark;
        return tp_error_set(err, TP_ENOMEM, "--repro exact: arena too small");
    }
    tp_bfx_scan(a->dtype, a->sendbuf, count, span);
    int rc = MPI_Allreduce(span, span + 2 * nb, (int)(2 * nb), MPI_INT32_T, MPI_MAX,
                           MPI_COMM_WORLD);
    for (size_t b = 0; rc == MPI_SUCCESS && b < nb; b++) {
        unit[b] = tp_bfx_unit(span + 2 * nb + 2 * b, n);
        if (!unit[b])
            nwide += count - b * TP_BFX_BLOCK < TP_BFX_BLOCK ? count - b * TP_BFX_BLOCK
                                                               : TP_BFX_BLOCK;
    }
    if (rc == MPI_SUCCESS) {
        tp_bfx_load_range(a->dtype, unit, a->sendbuf, 0, count, fx);
        rc = MPI_Allreduce(fx, fx + count, (int)count, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    }
    if (rc != MPI_SUCCESS) {
        c->arena_used = mark;
        return mpi_fail(rc, "allreduce", err);
    }
    tp_bfx_store_range(a->dtype, unit, fx + count, 0, count,
                       a->op == TP_AVG ? (uint32_t)n : 1, a->recvbuf);
    if (nwide) { /* the wide blocks, packed into fx's room */
        uint8_t *win = (uint8_t *)fx, *wout = win + nwide * es;
        size_t at = 0;
        for (size_t b = 0; b < nb; b++)
            if (!unit[b]) {
                size_t k = count - b * TP_BFX_BLOCK < TP_BFX_BLOCK ? count - b * TP_BFX_BLOCK
                                                                    : TP_BFX_BLOCK;
                memcpy(win + at * es, (const uint8_t *)a->sendbuf + b * TP_BFX_BLOCK * es, k * es);
                at += k;
            }
        struct tp_coll_args w = *a;
        w.sendbuf = win;
        w.recvbuf = wout;
        w.count = nwide;
        rc = run_call(c, &w, err);
        at = 0;
        for (size_t b = 0; rc == 0 && b < nb; b++)
            if (!unit[b]) {
                size_t k = count - b * TP_BFX_BLOCK < TP_BFX_BLOCK ? count - b * TP_BFX_BLOCK
                                                                    : TP_BFX_BLOCK;
                memcpy((uint8_t *)a->recvbuf + b * TP_BFX_BLOCK * es, wout + at * es, k * es);
                at += k;
            }
    }
    c->arena_used = mark;
    return rc;
}

int tp_coll_mpi_run(struct tp_comm *c, const struct tp_coll_args *a, tp_error *err)
{
    int rc = ready(err);
    if (rc < 0)
        return rc;
    rc = tp_coll_check_args(a->kind, a->dtype, a->op, a->exact, NULL, err);
    if (rc < 0)
        return rc;
    if (a->exact && tp_bfx_supports(a->dtype))
        return run_bfx(c, a, err);
    return run_call(c, a, err);
}

/* One MPI call of the kind (--repro exact: the wide words). */
static int run_call(struct tp_comm *c, const struct tp_coll_args *a, tp_error *err)
{
    int rc;
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Datatype dt = mpi_type(a->dtype);
    MPI_Op op = mpi_op(a->op), made = MPI_OP_NULL;
    MPI_Datatype fxt = MPI_DATATYPE_NULL;
    int n = c->size, cnt = (int)a->count;
    size_t es = tp_dtype_size(a->dtype);
    bool half = a->dtype == TP_BF16 || a->dtype == TP_F16;
    op_dtype = a->dtype;
    op_redop = a->op;
    const void *send = a->sendbuf;
    void *recv = a->recvbuf;
    uint64_t *fs = NULL, *fr = NULL;
    size_t mark = c->arena_used;
    if (a->exact) {
        size_t words = tp_fx_words(a->dtype);
        fs = tp_comm_alloc(c, a->count * words * 8 + 8);
        fr = tp_comm_alloc(c, a->count * words * 8 + 8);
        if (!fs || !fr) {
            c->arena_used = mark;
            return tp_error_set(err, TP_ENOMEM, "--repro exact: arena too small");
        }
        tp_fx_load(a->dtype, fs, a->sendbuf, a->count);
        MPI_Type_contiguous((int)words, MPI_UINT64_T, &fxt);
        MPI_Type_commit(&fxt);
        MPI_Op_create(fx_op, 1, &made);
        dt = fxt;
        op = made;
        send = fs;
        recv = fr;
    } else if (half) {
        MPI_Op_create(user_op, 1, &made);
        op = made;
    }
    const struct tp__coll_kind *k = tp__coll_kinds[a->kind];
    struct tp__coll_mpi_call m = {.send = send, .recv = recv, .count = cnt, .dt = dt, .op = op,
                                  .root = a->root, .rank = c->rank, .n = n,
                                  .bytes = a->count * es, .comm = w};
    rc = k->mpi(&m);
    if (made != MPI_OP_NULL)
        MPI_Op_free(&made);
    if (fxt != MPI_DATATYPE_NULL)
        MPI_Type_free(&fxt);
    if (rc != MPI_SUCCESS) {
        c->arena_used = mark;
        return mpi_fail(rc, tp_coll_name(a->kind), err);
    }
    if (a->exact)
        tp_fx_store(a->dtype, a->recvbuf, fr, a->count, a->op == TP_AVG ? (uint32_t)n : 1);
    else if (a->op == TP_AVG && (!k->root_only || c->rank == a->root))
        tp_reduce_finish(a->dtype, a->op, a->recvbuf, k->reduces ? a->count : 0, n);
    c->arena_used = mark;
    return 0;
}

#else

bool tp_coll_mpi_available(void)
{
    return false;
}

int tp_coll_mpi_run(struct tp_comm *c, const struct tp_coll_args *a, tp_error *err)
{
    (void)c;
    (void)a;
    return tp_error_set(err, TP_EUSAGE, "--backend mpi: this build has no MPI");
}

#endif

static int run(struct tp_comm *c, struct tp_gpu *g, const struct tp_coll_args *a, tp_error *err)
{
    (void)g;
    return tp_coll_mpi_run(c, a, err);
}

const struct tp_coll_backend tp__coll_backend_mpi = {
    .name = "mpi",
    .label = "MPI",
    .own_algo = true,
    .no_cuda = "not supported (trainpath does not assume a CUDA-aware MPI); use trainpath or nccl",
    .run = run,
    .ready = ready,
};
