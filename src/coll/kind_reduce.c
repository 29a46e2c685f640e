/* reduce: the root ends with the element-wise reduction of all ranks'
 * buffers (S is one rank's buffer); the other ranks' outputs are scratch,
 * so only the root's is checked. busbw = algbw, as nccl-tests counts it. */
#include "kind_int.h"

static void source(size_t j, size_t count, int me, int n, int root, int *src, size_t *at)
{
    (void)count, (void)me, (void)n, (void)root;
    *src = -1;
    *at = j;
}

static const struct algo *choose(int n, int nhosts, bool shm, size_t bytes)
{
    (void)shm;
    (void)n, (void)nhosts;
    return bytes <= (256u << 10) ? &tp__coll_algo_binomial_reduce : &tp__coll_algo_ring_reduce;
}

#ifdef TP_HAVE_MPI
static int mpi(const struct tp__coll_mpi_call *m)
{
    return MPI_Reduce(m->send, m->recv, m->count, m->dt, m->op, m->root, m->comm);
}
#endif

const struct tp__coll_kind tp__coll_reduce = {
    .name = "reduce",
    .reduces = true,
    .rooted = true,
    .root_only = true,
    .source = source,
    .choose = choose,
    .nccl = TP_NCCL_REDUCE,
    TP__COLL_MPI(mpi)
};
