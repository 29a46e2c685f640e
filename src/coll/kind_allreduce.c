/* allreduce: every rank ends with the element-wise reduction of all ranks'
 * buffers (S is one rank's buffer). Data crosses each link twice in an
 * optimal algorithm (reduce-scatter, then allgather), hence busbw's 2(n-1)/n.
 * The one kind with a reproducible mode, and the only one whose outputs the
 * sweep compares across ranks. */
#include "kind_int.h"

static void source(size_t j, size_t count, int me, int n, int root, int *src, size_t *at)
{
    (void)count, (void)me, (void)n, (void)root;
    *src = -1;
    *at = j;
}

/* Measured: the small end on shared memory (recursive doubling against
 * Rabenseifner at 8 B to 4 KiB on two ranks, bench/coll-vs-mpi.sh) and two
 * ranks over TCP (below); the other cut-offs are the usual MPI-library
 * starting points, not tuned here. */
static const struct algo *choose(int n, int nhosts, bool shm, size_t bytes)
{
    if (nhosts > 1 && nhosts < n)
        return &tp__coll_algo_hier_allreduce;
    /* two ranks over a network: one exchange of the whole message beats
     * Rabenseifner's two of half of it while latency counts (measured over
     * TCP on loopback, 2026-12-05: 14 against 25 us at 8 KiB, 73 against
     * 88 us at 256 KiB; the ring from 512 KiB) */
    if (!shm && n == 2 && bytes <= (256u << 10))
        return &tp__coll_algo_rd_allreduce;
    if (bytes <= (4u << 10))
        return &tp__coll_algo_rd_allreduce;
    if (bytes <= (32u << 10) && n > 2)
        return &tp__coll_algo_dbtree_allreduce;
    if (bytes <= (256u << 10))
        return &tp__coll_algo_rhd_allreduce;
    return &tp__coll_algo_ring_allreduce;
}

#ifdef TP_HAVE_MPI
static int mpi(const struct tp__coll_mpi_call *m)
{
    return MPI_Allreduce(m->send, m->recv, m->count, m->dt, m->op, m->comm);
}
#endif

const struct tp__coll_kind tp__coll_allreduce = {.name = "allreduce",
                                                 .busbw_k = 2,
                                                 .reduces = true,
                                                 .exact = true,
                                                 .agree = true,
                                                 .source = source,
                                                 .choose = choose,
                                                 .nccl = TP_NCCL_ALLREDUCE,
                                                 TP__COLL_MPI(mpi)};
