/* Internal to src/coll: one row per kind of collective, in the manner of
 * nccl-tests' struct testColl. Each row (src/coll/kind_<name>.c) holds what
 * the rest of coll needs to know of its kind: names, the sweep's size
 * convention, the bus-bandwidth factor, where each output element comes
 * from (so the sweep can check it bit for bit), the size-based algorithm
 * choice, and the matching MPI and NCCL calls. The callers index the table
 * by enum tp_coll_kind; none of them switches on the kind. */
#ifndef TP_COLL_KIND_INT_H
#define TP_COLL_KIND_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "coll_int.h"
#include "tp/gpu.h"

#ifdef TP_HAVE_MPI
#include <mpi.h>

/* One MPI call as the backend prepared it: types and operator already
 * mapped (bf16, f16 and --repro exact travel with operators of their own). */
struct tp__coll_mpi_call {
    const void *send;
    void *recv;
    int count; /* MPI's count (struct tp_coll_args) */
    MPI_Datatype dt;
    MPI_Op op;
    int root, rank, n;
    size_t bytes; /* of a count-element buffer (a broadcast root copies its input) */
    MPI_Comm comm;
};
#define TP__COLL_MPI(fn) .mpi = (fn),
#else
#define TP__COLL_MPI(fn)
#endif

struct tp__coll_kind {
    const char *name;        /* tp_coll_name */
    const char *aliases[3];  /* also accepted by tp_coll_parse, NULL-terminated */
    /* busbw = algbw * k (n - 1) / n, nccl-tests' factor: how often an optimal
     * algorithm moves each byte over a rank's link; 0 for a factor of 1 */
    double busbw_k;
    bool in_blocks, out_blocks; /* each rank's input / output is n blocks of count */
    bool reduces;     /* output elements combine every rank's input (redop applies) */
    bool rooted;      /* has a root (--root) */
    bool root_only;   /* the output is significant at the root only */
    bool exact;       /* has the reproducible mode (--repro exact, --repro-check) */
    bool agree;       /* the sweep records whether all ranks' outputs hashed the same */
    /* Output element j of rank me comes from input element *at of rank *src,
     * or (*src = -1) is the reduction of every rank's element *at. */
    void (*source)(size_t j, size_t count, int me, int n, int root, int *src, size_t *at);
    /* The size-based choice for n ranks on nhosts hosts (shm: they share
     * memory, one host on the shared-memory channel; else a network carries
     * them), bytes = MPI's count times the element size. Every input is the
     * same on every rank, so every rank makes the same choice. */
    const struct algo *(*choose)(int n, int nhosts, bool shm, size_t bytes);
    enum tp_gpu_nccl_op nccl;
#ifdef TP_HAVE_MPI
    int (*mpi)(const struct tp__coll_mpi_call *m); /* an MPI error code */
#endif
};

/* The rows, by enum tp_coll_kind. */
extern const struct tp__coll_kind *const tp__coll_kinds[TP_COLL_COUNT];

extern const struct tp__coll_kind tp__coll_allreduce, tp__coll_reduce_scatter,
    tp__coll_allgather, tp__coll_broadcast, tp__coll_reduce, tp__coll_alltoall,
    tp__coll_sendrecv;

/* The algorithms (src/coll/algo_*.c) the choices return. */
extern const struct algo tp__coll_algo_ring_reduce_scatter, tp__coll_algo_ring_allgather,
    tp__coll_algo_ring_bcast, tp__coll_algo_ring_reduce, tp__coll_algo_binomial_allreduce,
    tp__coll_algo_binomial_bcast, tp__coll_algo_binomial_reduce, tp__coll_algo_dbtree_allreduce,
    tp__coll_algo_hier_allreduce, tp__coll_algo_rhd_reduce_scatter, tp__coll_algo_bruck_allgather,
    tp__coll_algo_pairwise_alltoall, tp__coll_algo_ring_sendrecv, tp__coll_algo_rd_allreduce;

#endif
