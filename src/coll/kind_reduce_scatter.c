/* reduce-scatter: rank r ends with block r of the element-wise reduction of
 * all ranks' inputs. Each input is n blocks of count elements (S is the
 * input); each byte of a block crosses one link, hence (n-1)/n. */
#include "kind_int.h"

static void source(size_t j, size_t count, int me, int n, int root, int *src, size_t *at)
{
    (void)n, (void)root;
    *src = -1;
    *at = (size_t)me * count + j;
}

static const struct algo *choose(int n, int nhosts, bool shm, size_t bytes)
{
    (void)shm;
    (void)nhosts;
    return bytes * (size_t)n <= (256u << 10) ? &tp__coll_algo_rhd_reduce_scatter
                                             : &tp__coll_algo_ring_reduce_scatter;
}

#ifdef TP_HAVE_MPI
static int mpi(const struct tp__coll_mpi_call *m)
{
    return MPI_Reduce_scatter_block(m->send, m->recv, m->count, m->dt, m->op, m->comm);
}
#endif

const struct tp__coll_kind tp__coll_reduce_scatter = {
    .name = "reduce-scatter",
    .aliases = {"reducescatter", "reduce_scatter"},
    .busbw_k = 1,
    .in_blocks = true,
    .reduces = true,
    .source = source,
    .choose = choose,
    .nccl = TP_NCCL_REDUCE_SCATTER,
    TP__COLL_MPI(mpi)
};
