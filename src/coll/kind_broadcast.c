/* broadcast: every rank ends with the root's buffer (S is that buffer);
 * nccl-tests counts busbw = algbw for it. */
#include <string.h>

#include "kind_int.h"

static void source(size_t j, size_t count, int me, int n, int root, int *src, size_t *at)
{
    (void)count, (void)me, (void)n;
    *src = root;
    *at = j;
}

static const struct algo *choose(int n, int nhosts, bool shm, size_t bytes)
{
    (void)shm;
    (void)n, (void)nhosts;
    return bytes <= (256u << 10) ? &tp__coll_algo_binomial_bcast : &tp__coll_algo_ring_bcast;
}

#ifdef TP_HAVE_MPI
/* MPI broadcasts in place: the root's output buffer carries its input. */
static int mpi(const struct tp__coll_mpi_call *m)
{
    if (m->rank == m->root)
        memcpy(m->recv, m->send, m->bytes);
    return MPI_Bcast(m->recv, m->count, m->dt, m->root, m->comm);
}
#endif

const struct tp__coll_kind tp__coll_broadcast = {
    .name = "broadcast",
    .aliases = {"bcast"},
    .rooted = true,
    .source = source,
    .choose = choose,
    .nccl = TP_NCCL_BROADCAST,
    TP__COLL_MPI(mpi)
};
