/* allgather: every rank ends with all ranks' inputs, block r from rank r.
 * The output is n blocks of count elements (S is the output); each block
 * crosses one link, hence (n-1)/n. */
#include "kind_int.h"

static void source(size_t j, size_t count, int me, int n, int root, int *src, size_t *at)
{
    (void)me, (void)n, (void)root;
    *src = (int)(j / count);
    *at = j % count;
}

static const struct algo *choose(int n, int nhosts, bool shm, size_t bytes)
{
    (void)shm;
    (void)nhosts;
    return bytes * (size_t)n <= (64u << 10) ? &tp__coll_algo_bruck_allgather
                                            : &tp__coll_algo_ring_allgather;
}

#ifdef TP_HAVE_MPI
static int mpi(const struct tp__coll_mpi_call *m)
{
    return MPI_Allgather(m->send, m->count, m->dt, m->recv, m->count, m->dt, m->comm);
}
#endif

const struct tp__coll_kind tp__coll_allgather = {
    .name = "allgather",
    .busbw_k = 1,
    .out_blocks = true,
    .source = source,
    .choose = choose,
    .nccl = TP_NCCL_ALLGATHER,
    TP__COLL_MPI(mpi)
};
