/* Sysctl facts: the network settings the plane rules read (forwarding,
 * reverse-path filtering, redirects, source routing, ARP) for all, default
 * and every interface, and the kernel hardening settings, read as files
 * under ROOT/proc/sys into one object keyed by sysctl(8)'s names. A file
 * that is not there is left out: a rule SKIPs on a sysctl it cannot find. */
#include <stdio.h>
#include <string.h>

#include "facts_int.h"

/* Add "name": value when the file exists; a missing file is simply absent. */
static void sysctl_add(struct fx *c, json_t *obj, const char *name, const char *rel)
{
    char buf[256];
    if (tp__check_fx_read(c, buf, sizeof buf, "/proc/sys/%s", rel) == 0)
        tp__check_fx_set(c, obj, name, tp__check_fx_str(c, buf));
}

static const char *const conf_keys[] = {"rp_filter",           "accept_redirects", "send_redirects",
                                        "accept_source_route", "arp_ignore",       "arp_announce"};

/* net.ipv4.conf.<dev>.<key>; sysctl(8) writes a '.' inside a device name
 * (a VLAN, eth0.42) as '/'. */
static void conf_dev(struct fx *c, json_t *obj, const char *dev)
{
    char sdev[64];
    snprintf(sdev, sizeof sdev, "%s", dev);
    for (char *p = sdev; *p; p++)
        if (*p == '.')
            *p = '/';
    for (size_t k = 0; k < sizeof conf_keys / sizeof conf_keys[0]; k++) {
        char name[160], rel[160];
        snprintf(name, sizeof name, "net.ipv4.conf.%s.%s", sdev, conf_keys[k]);
        snprintf(rel, sizeof rel, "net/ipv4/conf/%s/%s", dev, conf_keys[k]);
        sysctl_add(c, obj, name, rel);
    }
}

static bool not_all_default(const char *name)
{
    return strcmp(name, "all") != 0 && strcmp(name, "default") != 0;
}

/* The kernel hardening sysctls the KERN-* rules read. */
static void kernel_sysctls(struct fx *c, json_t *sysctl)
{
    static const char *const keys[][2] = {
        {"kernel.kptr_restrict", "kernel/kptr_restrict"},
        {"kernel.dmesg_restrict", "kernel/dmesg_restrict"},
        {"kernel.unprivileged_bpf_disabled", "kernel/unprivileged_bpf_disabled"},
        {"kernel.yama.ptrace_scope", "kernel/yama/ptrace_scope"},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char buf[64];
        if (tp__check_fx_read(c, buf, sizeof buf, "/proc/sys/%s", keys[i][1]) == 0)
            tp__check_fx_set(c, sysctl, keys[i][0], tp__check_fx_str(c, buf));
    }
}

void tp__check_fx_sysctl(struct fx *c)
{
    char path[PATH_MAX];
    json_t *obj = tp__check_fx_obj(c);
    if (tp__check_fx_path(c, path, "/proc/sys") < 0 || !tp__check_fx_is_dir(path))
        tp__check_fx_unseen(c, "sysctl", "no proc/sys");
    else if (tp__check_fx_path(c, path, "/proc/sys/net") < 0 || !tp__check_fx_is_dir(path))
        tp__check_fx_unseen(c, "sysctl.net", "no proc/sys/net");
    sysctl_add(c, obj, "net.ipv4.ip_forward", "net/ipv4/ip_forward");
    conf_dev(c, obj, "all");
    conf_dev(c, obj, "default");
    struct tp_sysfs_names devs;
    if (tp__check_fx_path(c, path, "/proc/sys/net/ipv4/conf") == 0 &&
        tp_sysfs_list(path, FX_LIST, not_all_default, &devs) == 0) {
        for (size_t i = 0; i < devs.n; i++)
            conf_dev(c, obj, devs.v[i]);
        tp_sysfs_names_free(&devs);
    }
    sysctl_add(c, obj, "net.ipv6.conf.all.accept_redirects", "net/ipv6/conf/all/accept_redirects");
    sysctl_add(c, obj, "net.ipv6.conf.all.accept_source_route",
               "net/ipv6/conf/all/accept_source_route");
    kernel_sysctls(c, obj);
    tp__check_fx_set(c, c->facts, "sysctl", obj);
}
