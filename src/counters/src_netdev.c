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
    char base[2048], **ifs;
    size_t n;
    if (tp__ctr_list_under(c, "/sys/class/net", base, sizeof base, &ifs, &n))
        return TP_ENOMEM;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        char p[4096];
        rc = tp__ctr_dev(c, TP_CTR_NETDEV, ifs[i]);
        if (!rc && snprintf(p, sizeof p, "%s/%s/statistics", base, ifs[i]) < (int)sizeof p)
            rc = tp__ctr_numbers_in(c, TP_CTR_NETDEV, ifs[i], p);
        for (size_t k = 0; k < sizeof carrier / sizeof *carrier && !rc; k++) {
            uint64_t v;
            if (snprintf(p, sizeof p, "%s/%s/%s", base, ifs[i], carrier[k]) < (int)sizeof p &&
                tp__ctr_read_u64(p, &v))
                rc = tp__ctr_add(c, TP_CTR_NETDEV, ifs[i], carrier[k], v, false);
        }
    }
    tp__ctr_names_free(ifs, n);
    return rc;
}

const struct tp__ctr_source tp__ctr_netdev = {TP_CTR_NETDEV, "netdev", read_netdev};
