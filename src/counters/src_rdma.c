/* The rdma source (include/tp/counters.h): every port of every RDMA device
 * under /sys/class/infiniband, its IB PMA counters (ports/P/counters/) and
 * the driver's hardware counters (ports/P/hw_counters/: RoCE congestion
 * notifications, ECN marks, sequence errors and timeouts), each by its own
 * name; device "DEV/P". */
#include <stdio.h>

#include "ctr_int.h"

static int read_rdma(struct tp__ctr_ctx *c)
{
    char base[2048], **devs;
    size_t nd;
    if (tp__ctr_list_under(c, "/sys/class/infiniband", base, sizeof base, &devs, &nd))
        return TP_ENOMEM;
    int rc = 0;
    for (size_t i = 0; i < nd && !rc; i++) {
        char ports[4096];
        if (snprintf(ports, sizeof ports, "%s/%s/ports", base, devs[i]) >= (int)sizeof ports)
            continue;
        char **pn;
        size_t np;
        if ((rc = tp__ctr_list(ports, &pn, &np))) {
            rc = tp_error_set(c->err, TP_ENOMEM, "counters: out of memory");
            break;
        }
        for (size_t p = 0; p < np && !rc; p++) {
            char dev[128], dir[4096];
            snprintf(dev, sizeof dev, "%s/%s", devs[i], pn[p]);
            rc = tp__ctr_dev(c, TP_CTR_RDMA, dev);
            if (!rc && snprintf(dir, sizeof dir, "%s/%s/counters", ports, pn[p]) < (int)sizeof dir)
                rc = tp__ctr_numbers_in(c, TP_CTR_RDMA, dev, dir);
            if (!rc &&
                snprintf(dir, sizeof dir, "%s/%s/hw_counters", ports, pn[p]) < (int)sizeof dir)
                rc = tp__ctr_numbers_in(c, TP_CTR_RDMA, dev, dir);
        }
        tp__ctr_names_free(pn, np);
    }
    tp__ctr_names_free(devs, nd);
    return rc;
}

const struct tp__ctr_source tp__ctr_rdma = {TP_CTR_RDMA, "rdma", read_rdma};
