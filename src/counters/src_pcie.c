/* The pcie source (include/tp/counters.h): the PCIe devices on a training
 * node's data paths under /sys/bus/pci/devices (class network, display,
 * NVMe and processing accelerator): current and maximum link speed (MT/s)
 * and width (lanes), as levels, and the AER error counts
 * (aer_dev_correctable, _nonfatal, _fatal: "NAME COUNT" lines) as counters
 * "correctable.NAME" and so on, their TOTAL_ lines left out (sums of the
 * others); device BDF. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctr_int.h"

/* Whether PCI class code cls (the 24-bit "class" file) is on a data path. */
static bool on_path(uint64_t cls)
{
    unsigned base = (unsigned)(cls >> 16), sub = (unsigned)(cls >> 8) & 0xff;
    return base == 0x02 || base == 0x03 || base == 0x12 || (base == 0x01 && sub == 0x08);
}

/* "8.0 GT/s PCIe", "2.5 GT/s": MT/s; false for "Unknown" and the like. */
static bool speed_mts(const char *path, uint64_t *mts)
{
    char buf[64];
    if (tp_sysfs_read(path, buf, sizeof buf) <= 0)
        return false;
    char *end;
    double g = strtod(buf, &end);
    if (end == buf || g <= 0 || g > 1000 || strncmp(end, " GT/s", 5) != 0)
        return false;
    *mts = (uint64_t)llround(g * 1000);
    return true;
}

static int aer(struct tp__ctr_ctx *c, const char *dev, const char *path, const char *kind)
{
    char buf[4096];
    if (tp_sysfs_read(path, buf, sizeof buf) <= 0)
        return 0;
    int rc = 0;
    char *ls = NULL;
    for (char *line = strtok_r(buf, "\n", &ls); line && !rc; line = strtok_r(NULL, "\n", &ls)) {
        char *sp = strrchr(line, ' ');
        if (!sp)
            continue;
        char *end;
        unsigned long long v = strtoull(sp + 1, &end, 10);
        if (end == sp + 1 || *end)
            continue;
        *sp = '\0';
        if (strncmp(line, "TOTAL_", 6) == 0) /* the sum of the lines above it */
            continue;
        char name[64];
        snprintf(name, sizeof name, "%s.%s", kind, line);
        rc = tp__ctr_add(c, TP_CTR_PCIE, dev, name, v, false);
    }
    return rc;
}

static int read_pcie(struct tp__ctr_ctx *c)
{
    static const char *const widths[] = {"current_link_width", "max_link_width"};
    static const char *const speeds[] = {"current_link_speed", "max_link_speed"};
    static const char *const aers[][2] = {{"aer_dev_correctable", "correctable"},
                                          {"aer_dev_nonfatal", "nonfatal"},
                                          {"aer_dev_fatal", "fatal"}};
    char base[2048];
    struct tp_sysfs_names devs;
    if (tp__ctr_list_under(c, "/sys/bus/pci/devices", base, sizeof base, &devs))
        return TP_ENOMEM;
    int rc = 0;
    for (size_t i = 0; i < devs.n && !rc; i++) {
        char p[4096];
        const char *dev = devs.v[i];
        uint64_t cls, v;
        if (snprintf(p, sizeof p, "%s/%s/class", base, dev) >= (int)sizeof p ||
            tp_sysfs_u64(p, &cls) != 0 || !on_path(cls))
            continue;
        rc = tp__ctr_dev(c, TP_CTR_PCIE, dev);
        for (int k = 0; k < 2 && !rc; k++) {
            snprintf(p, sizeof p, "%s/%s/%s", base, dev, speeds[k]);
            if (speed_mts(p, &v))
                rc = tp__ctr_add(c, TP_CTR_PCIE, dev, speeds[k], v, true);
            snprintf(p, sizeof p, "%s/%s/%s", base, dev, widths[k]);
            if (!rc && tp_sysfs_u64(p, &v) == 0)
                rc = tp__ctr_add(c, TP_CTR_PCIE, dev, widths[k], v, true);
        }
        for (size_t k = 0; k < sizeof aers / sizeof *aers && !rc && !c->links_only; k++) {
            snprintf(p, sizeof p, "%s/%s/%s", base, dev, aers[k][0]);
            rc = aer(c, dev, p, aers[k][1]);
        }
    }
    tp_sysfs_names_free(&devs);
    return rc;
}

const struct tp__ctr_source tp__ctr_pcie = {TP_CTR_PCIE, "pcie", read_pcie};
