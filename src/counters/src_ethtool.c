/* The ethtool source (include/tp/counters.h): each interface's driver
 * statistics, the names `ethtool -S` prints (rx_pause, rx_prio3_pause,
 * rx_discards_phy, tx_timeout ...). On this node through SIOCETHTOOL
 * (ETHTOOL_GSSET_INFO, GSTRINGS, GSTATS); under another root from the
 * text `ethtool -S IF` printed, where an sosreport keeps it:
 * sos_commands/networking/ethtool_-S_IF. Device IF. */
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctr_int.h"

#define MAX_STATS 65536u /* a driver with more is not believed */
#define TEXT_MAX (1u << 20)

/* The interface's statistics through the ioctl; 0 (none, or the driver
 * has none) or TP_ENOMEM. */
static int by_ioctl(struct tp__ctr_ctx *c, int fd, const char *ifname)
{
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", ifname);
    struct {
        struct ethtool_sset_info hdr;
        uint32_t len[1];
    } ss = {.hdr = {.cmd = ETHTOOL_GSSET_INFO, .sset_mask = 1ull << ETH_SS_STATS}};
    ifr.ifr_data = (void *)&ss;
    if (ioctl(fd, SIOCETHTOOL, &ifr) != 0 || !(ss.hdr.sset_mask & (1ull << ETH_SS_STATS)))
        return 0;
    uint32_t n = ss.len[0];
    if (n == 0 || n > MAX_STATS)
        return 0;
    struct ethtool_gstrings *names = calloc(1, sizeof *names + (size_t)n * ETH_GSTRING_LEN);
    struct ethtool_stats *vals = calloc(1, sizeof *vals + (size_t)n * sizeof(uint64_t));
    int rc = 0;
    if (!names || !vals) {
        rc = tp_error_set(c->err, TP_ENOMEM, "counters: out of memory");
        goto out;
    }
    names->cmd = ETHTOOL_GSTRINGS;
    names->string_set = ETH_SS_STATS;
    names->len = n;
    ifr.ifr_data = (void *)names;
    if (ioctl(fd, SIOCETHTOOL, &ifr) != 0)
        goto out;
    vals->cmd = ETHTOOL_GSTATS;
    vals->n_stats = n;
    ifr.ifr_data = (void *)vals;
    if (ioctl(fd, SIOCETHTOOL, &ifr) != 0 || vals->n_stats != n)
        goto out;
    for (uint32_t i = 0; i < n && !rc; i++) {
        char nm[ETH_GSTRING_LEN + 1];
        memcpy(nm, names->data + (size_t)i * ETH_GSTRING_LEN, ETH_GSTRING_LEN);
        nm[ETH_GSTRING_LEN] = '\0';
        if (nm[0])
            rc = tp__ctr_add(c, TP_CTR_ETHTOOL, ifname, nm, vals->data[i], false);
    }
out:
    free(names);
    free(vals);
    return rc;
}

/* The statistics from `ethtool -S IF`'s text: after the "NIC statistics:"
 * line, one "NAME: VALUE" a line (NAME may hold spaces and brackets). */
static int by_text(struct tp__ctr_ctx *c, const char *ifname)
{
    char p[2048];
    if (!tp__ctr_path(c, p, sizeof p, "/sos_commands/networking/ethtool_-S_%s", ifname))
        return 0;
    char *buf = malloc(TEXT_MAX);
    if (!buf)
        return tp_error_set(c->err, TP_ENOMEM, "counters: out of memory");
    int rc = 0;
    if (tp_sysfs_read(p, buf, TEXT_MAX) > 0) {
        char *ls = NULL;
        for (char *line = strtok_r(buf, "\n", &ls); line && !rc; line = strtok_r(NULL, "\n", &ls)) {
            char *colon = strrchr(line, ':');
            if (!colon || colon[1] != ' ')
                continue;
            char *end;
            unsigned long long v = strtoull(colon + 1, &end, 10);
            while (*end == ' ' || *end == '\r')
                end++;
            if (end == colon + 1 || *end)
                continue;
            *colon = '\0';
            while (*line == ' ' || *line == '\t')
                line++;
            if (*line)
                rc = tp__ctr_add(c, TP_CTR_ETHTOOL, ifname, line, v, false);
        }
    }
    free(buf);
    return rc;
}

static int read_ethtool(struct tp__ctr_ctx *c)
{
    char base[2048];
    struct tp_sysfs_names ifs;
    if (tp__ctr_list_under(c, "/sys/class/net", base, sizeof base, &ifs))
        return TP_ENOMEM;
    int fd = c->live ? socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0) : -1;
    int rc = 0;
    for (size_t i = 0; i < ifs.n && !rc; i++)
        rc = c->live ? (fd >= 0 ? by_ioctl(c, fd, ifs.v[i]) : 0) : by_text(c, ifs.v[i]);
    if (fd >= 0)
        close(fd);
    tp_sysfs_names_free(&ifs);
    return rc;
}

const struct tp__ctr_source tp__ctr_ethtool = {TP_CTR_ETHTOOL, "ethtool", read_ethtool};
