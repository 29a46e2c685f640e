/* The rdma source (include/tp/counters.h): every port of every RDMA device
 * under /sys/class/infiniband, its IB PMA counters (ports/P/counters/) and
 * the driver's hardware counters (ports/P/hw_counters/: RoCE congestion
 * notifications, ECN marks, sequence errors and timeouts), each by its own
 * name; device "DEV/P". */
#include <errno.h>
#include <stdio.h>

#include "ctr_int.h"

static int read_rdma(struct tp__ctr_ctx *c)
{
    char base[2048];
    struct tp_sysfs_names devs;
    if (tp__ctr_list_under(c, "/sys/class/infiniband", base, sizeof base, &devs))
        return TP_ENOMEM;
    int rc = 0;
    for (size_t i = 0; i < devs.n && !rc; i++) {
        char ports[4096];
        if (snprintf(ports, sizeof ports, "%s/%s/ports", base, devs.v[i]) >= (int)sizeof ports)
            continue;
        struct tp_sysfs_names pn;
        if (tp_sysfs_list(ports, 0, NULL, &pn) < 0 && errno == ENOMEM) {
            rc = tp_error_set(c->err, TP_ENOMEM, "counters: out of memory");
            break;
        }
        for (size_t p = 0; p < pn.n && !rc; p++) {
            char dev[128], dir[4096];
            snprintf(dev, sizeof dev, "%s/%s", devs.v[i], pn.v[p]);
            rc = tp__ctr_dev(c, TP_CTR_RDMA, dev);
            if (!rc &&
                snprintf(dir, sizeof dir, "%s/%s/counters", ports, pn.v[p]) < (int)sizeof dir)
                rc = tp__ctr_numbers_in(c, TP_CTR_RDMA, dev, dir);
            if (!rc &&
                snprintf(dir, sizeof dir, "%s/%s/hw_counters", ports, pn.v[p]) < (int)sizeof dir)
                rc = tp__ctr_numbers_in(c, TP_CTR_RDMA, dev, dir);
        }
        tp_sysfs_names_free(&pn);
    }
    tp_sysfs_names_free(&devs);
    return rc;
}

const struct tp__ctr_source tp__ctr_rdma = {TP_CTR_RDMA, "rdma", read_rdma};
