/* The netdev source (include/tp/counters.h): every interface under
 * /sys/class/net, the kernel's statistics/ (bytes, packets, errors,
 * drops) and its carrier changes (carrier_changes, carrier_up_count,
 * carrier_down_count: a link that went down and up); device IF. */
#include <stdio.h>

#include "ctr_int.h"

static int read_netdev(struct tp__ctr_ctx *c)
{
    static const char *const carrier[] = {"carrier_changes", "carrier_up_count",
                                          "carrier_down_count"};
    char base[2048];
    struct tp_sysfs_names ifs;
    if (tp__ctr_list_under(c, "/sys/class/net", base, sizeof base, &ifs))
        return TP_ENOMEM;
    int rc = 0;
    for (size_t i = 0; i < ifs.n && !rc; i++) {
        char p[4096];
        const char *name = ifs.v[i];
        rc = tp__ctr_dev(c, TP_CTR_NETDEV, name);
        if (!rc && snprintf(p, sizeof p, "%s/%s/statistics", base, name) < (int)sizeof p)
            rc = tp__ctr_numbers_in(c, TP_CTR_NETDEV, name, p);
        for (size_t k = 0; k < sizeof carrier / sizeof *carrier && !rc; k++) {
            uint64_t v;
            if (snprintf(p, sizeof p, "%s/%s/%s", base, name, carrier[k]) < (int)sizeof p &&
                tp_sysfs_u64(p, &v) == 0)
                rc = tp__ctr_add(c, TP_CTR_NETDEV, name, carrier[k], v, false);
        }
    }
    tp_sysfs_names_free(&ifs);
    return rc;
}

const struct tp__ctr_source tp__ctr_netdev = {TP_CTR_NETDEV, "netdev", read_netdev};
