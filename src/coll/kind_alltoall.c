/* alltoall: block p of rank r's input ends as block r of rank p's output.
 * Input and output are n blocks of count elements (S is either); each
 * block crosses one link, hence (n-1)/n. */
#include "kind_int.h"

static void source(size_t j, size_t count, int me, int n, int root, int *src, size_t *at)
{
    (void)n, (void)root;
    *src = (int)(j / count);
    *at = (size_t)me * count + j % count;
}

static const struct algo *choose(int n, int nhosts, bool shm, size_t bytes)
{
    (void)shm;
    (void)n, (void)nhosts, (void)bytes;
    return &tp__coll_algo_pairwise_alltoall;
}

#ifdef TP_HAVE_MPI
static int mpi(const struct tp__coll_mpi_call *m)
{
    return MPI_Alltoall(m->send, m->count, m->dt, m->recv, m->count, m->dt, m->comm);
}
#endif

const struct tp__coll_kind tp__coll_alltoall = {
    .name = "alltoall",
    .busbw_k = 1,
    .in_blocks = true,
    .out_blocks = true,
    .source = source,
    .choose = choose,
    .nccl = TP_NCCL_ALLTOALL,
    TP__COLL_MPI(mpi)
};
