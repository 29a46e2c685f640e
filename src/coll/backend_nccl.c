/* --backend nccl: the same collectives through NCCL, on buffers in GPU
 * memory, so one run and one result format put NCCL's numbers beside
 * trainpath's (and the sweep adds the tails, arrival skew and fit that
 * nccl-tests leaves out). NCCL's own algorithm choice stands ("nccl" in the
 * algo column); --repro exact has no NCCL counterpart (its sums carry no
 * exact accumulator) and is refused before any rank starts. */
#include "kind_int.h"

int tp_coll_nccl_run(struct tp_gpu *g, const struct tp_coll_args *a, tp_error *err)
{
    if (a->kind >= TP_COLL_COUNT)
        return tp_error_set(err, TP_EUSAGE, "collective %d: unknown", (int)a->kind);
    if (a->exact)
        return tp_error_set(err, TP_EUSAGE, "--repro exact: runs on --backend trainpath, "
                            "not nccl");
    struct tp_gpu_nccl_args n = {.op = tp__coll_kinds[a->kind]->nccl, .dtype = a->dtype,
                                 .redop = a->op, .send = a->sendbuf, .recv = a->recvbuf,
                                 .count = a->count, .root = a->root};
    return tp_gpu_nccl_run(g, &n, err);
}

static int run(struct tp_comm *c, struct tp_gpu *g, const struct tp_coll_args *a, tp_error *err)
{
    (void)c;
    return tp_coll_nccl_run(g, a, err);
}

const struct tp_coll_backend tp__coll_backend_nccl = {
    .name = "nccl",
    .label = "NCCL",
    .own_algo = true,
    .gpu_need = TP_GPU_NCCL,
    .device_memory = true,
    .device_why = "NCCL reads and writes GPU memory itself",
    .no_exact = "NCCL's sums keep no exact accumulator",
    .own_transport = "NCCL picks its own transport (NCCL_NET, NCCL_IB_HCA, ...)",
    .run = run,
};
