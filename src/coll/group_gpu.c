/* The GPU of each rank of a group (include/tp/group.h), for coll's --mem
 * cuda and --backend nccl and step's --compute gpu: every rank opens its
 * own (the index of the rank among the ranks of its host), the ranks agree
 * on the outcome so that one rank's refusal stops them all with the same
 * message instead of leaving the others waiting, and, for NCCL, rank 0's
 * unique id travels over the boot group that started the ranks (local, MPI
 * or env), as nccl-tests passes it over MPI. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp/group.h"

int tp_group_gpu_open(struct tp_boot *b, const char *what, unsigned need, int device,
                      uint64_t timeout_ns, struct tp_gpu **out, tp_error *err)
{
    *out = NULL;
    int me = tp_boot_rank(b), n = tp_boot_size(b);
    struct tp_gpu_opts go = {.what = what, .device = device, .local_rank = tp_boot_local_rank(b),
                             .need = need, .timeout_ns = timeout_ns};
    struct tp_gpu *g = NULL;
    tp_error mine_err = {0};
    char hex[TP_GPU_NCCL_ID_HEX] = "-";
    int rc = tp_gpu_open(&go, &g, &mine_err);
    if (rc == 0 && (need & TP_GPU_NCCL) && me == 0)
        rc = tp_gpu_nccl_id(g, hex, &mine_err);
    char *mine = NULL;
    int len = rc == 0 ? asprintf(&mine, "ok %s", hex)
                      : asprintf(&mine, "err %d rank %d (%s): %s", -rc, me, tp_boot_host(b, me),
                                 mine_err.msg);
    if (len < 0)
        mine = NULL; /* asprintf leaves it undefined */
    if (!mine) {
        tp_gpu_close(g);
        return tp_error_set(err, TP_ENOMEM, "GPU status");
    }
    char **all = NULL;
    int arc = tp_boot_allgather(b, mine, &all, err);
    free(mine);
    if (arc < 0) {
        tp_gpu_close(g);
        return arc;
    }
    /* the first rank that failed speaks for all */
    rc = 0;
    for (int r = 0; r < n && rc == 0; r++) {
        int code = 0, used = 0;
        if (strncmp(all[r], "err ", 4) == 0 && sscanf(all[r] + 4, "%d %n", &code, &used) == 1)
            rc = tp_error_set(err, code > 0 ? -code : TP_EUSAGE, "%s", all[r] + 4 + used);
    }
    if (rc == 0 && (need & TP_GPU_NCCL))
        rc = tp_gpu_nccl_init(g, n, me, all[0] + 3, err);
    tp_boot_free_strings(all, n);
    if (rc < 0) {
        tp_gpu_close(g);
        return rc;
    }
    *out = g;
    return 0;
}
