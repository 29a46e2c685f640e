/* sendrecv: each rank sends its buffer to rank + 1 and receives rank - 1's
 * (S is one buffer), a ring shift: the point-to-point figure of a
 * collective run; busbw = algbw. */
#include "kind_int.h"

static void source(size_t j, size_t count, int me, int n, int root, int *src, size_t *at)
{
    (void)count, (void)root;
    *src = (me - 1 + n) % n;
    *at = j;
}

static const struct algo *choose(int n, int nhosts, bool shm, size_t bytes)
{
    (void)shm;
    (void)n, (void)nhosts, (void)bytes;
    return &tp__coll_algo_ring_sendrecv;
}

#ifdef TP_HAVE_MPI
static int mpi(const struct tp__coll_mpi_call *m)
{
    return MPI_Sendrecv(m->send, m->count, m->dt, (m->rank + 1) % m->n, 0, m->recv, m->count,
                        m->dt, (m->rank - 1 + m->n) % m->n, 0, m->comm, MPI_STATUS_IGNORE);
}
#endif

const struct tp__coll_kind tp__coll_sendrecv = {
    .name = "sendrecv",
    .source = source,
    .choose = choose,
    .nccl = TP_NCCL_SENDRECV,
    TP__COLL_MPI(mpi)
};
