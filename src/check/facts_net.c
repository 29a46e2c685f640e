/* Network facts: interfaces (sysfs), their addresses, routes and listening
 * sockets (procfs) and the nftables ruleset (the network sysctls are
 * facts_sysctl.c's). Everything is read from files under the root, except what the
 * kernel offers no file for: the IPv4 addresses (getifaddrs live; the
 * documented extra file ROOT/ip-addr.json, `ip -j addr show`, under a root)
 * and the nftables ruleset (libnftables live; ROOT/nftables.json, `nft -j
 * list ruleset`, under a root). */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <nftables/libnftables.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "facts_int.h"

#define ARPHRD_LOOPBACK_ 772 /* sys/class/net/X/type of a loopback device */

/* ---- byte order of /proc/net hex ---- */

/* /proc/net/{route,tcp*,udp*} print each 32-bit word of an address as %08X
 * of its value in memory: the network-order bytes read in host order. Live,
 * that is this host's order; a snapshot is taken to come from a
 * little-endian host (x86-64, arm64), as docs/check.md says. */
static void word_bytes(const struct fx *c, uint32_t v, uint8_t out[4])
{
    if (c->live) {
        memcpy(out, &v, 4);
        return;
    }
    for (int i = 0; i < 4; i++)
        out[i] = (uint8_t)(v >> (8 * i));
}

/* 8 (IPv4) or 32 (IPv6) hex digits of words in host order into bytes. */
static int hex_words(const struct fx *c, const char *hex, uint8_t *out, size_t nbytes)
{
    if (strlen(hex) != 2 * nbytes)
        return -1;
    for (size_t w = 0; w < nbytes / 4; w++) {
        char word[9];
        memcpy(word, hex + 8 * w, 8);
        word[8] = '\0';
        char *end;
        unsigned long v = strtoul(word, &end, 16);
        if (*end)
            return -1;
        word_bytes(c, (uint32_t)v, out + 4 * w);
    }
    return 0;
}

/* 32 hex digits in network byte order (if_inet6, ipv6_route) into bytes. */
static int hex_bytes(const char *hex, uint8_t out[16])
{
    if (strlen(hex) != 32)
        return -1;
    for (int i = 0; i < 16; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1)
            return -1;
        out[i] = (uint8_t)v;
    }
    return 0;
}

static const char *ntop(int af, const uint8_t *b, char *buf)
{
    return inet_ntop(af, b, buf, INET6_ADDRSTRLEN) ? buf : NULL;
}

static bool all_zero(const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (b[i])
            return false;
    return true;
}

static unsigned popcount32(uint32_t v)
{
    return (unsigned)__builtin_popcount(v);
}

/* ---- interfaces ---- */

/* "0000:17:00.0": a PCI address (the domain may be wider than 4 digits). */
static bool is_pci_addr(const char *s)
{
    size_t n = strlen(s);
    if (n < 12 || s[n - 2] != '.' || s[n - 5] != ':' || s[n - 8] != ':')
        return false;
    for (size_t i = 0; i < n; i++) {
        if (i == n - 2 || i == n - 5 || i == n - 8)
            continue;
        char ch = s[i];
        if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F')))
            return false;
    }
    return true;
}

/* The PCI function a net or RDMA device sits on: the deepest PCI address
 * in the resolved device path (a virtio NIC is virtio2 below 0000:00:03.0).
 * pci_dir gets that function's folder. -1 when it is not on PCI. */
static int pci_of(const char *device_link, char *pci, size_t cap, char *pci_dir)
{
    char real[PATH_MAX];
    if (!realpath(device_link, real))
        return -1;
    for (;;) {
        char *slash = strrchr(real, '/');
        if (!slash)
            return -1;
        if (is_pci_addr(slash + 1) && strlen(slash + 1) < cap) {
            strcpy(pci, slash + 1);
            strcpy(pci_dir, real);
            return 0;
        }
        *slash = '\0';
    }
}

struct vlan {
    char name[64];
    long id;
    char parent[64];
};

/* proc/net/vlan/config: two header lines, then "eth0.42 | 42 | eth0". */
static size_t read_vlans(struct fx *c, struct vlan *v, size_t cap)
{
    char path[PATH_MAX];
    if (tp__check_fx_path(c, path, "/proc/net/vlan/config") < 0)
        return 0;
    FILE *f = tp_sysfs_open(path);
    if (!f)
        return 0;
    char line[256];
    size_t n = 0;
    int lineno = 0;
    while (n < cap && fgets(line, sizeof line, f)) {
        if (++lineno <= 2)
            continue;
        struct vlan x;
        if (sscanf(line, " %63[^ |] | %ld | %63s", x.name, &x.id, x.parent) == 3)
            v[n++] = x;
    }
    fclose(f);
    return n;
}

struct rdma_link {
    char dev[64];
    char netdev[64];
};

/* Which RDMA device each netdev belongs to: sys/class/infiniband/D/device/net/N. */
static size_t read_rdma_links(struct fx *c, struct rdma_link *l, size_t cap)
{
    char path[PATH_MAX];
    struct tp_sysfs_names devs;
    if (tp__check_fx_path(c, path, "/sys/class/infiniband") < 0 ||
        tp_sysfs_list(path, FX_LIST, NULL, &devs) < 0)
        return 0;
    size_t n = 0;
    for (size_t i = 0; i < devs.n; i++) {
        struct tp_sysfs_names nets;
        if (tp__check_fx_path(c, path, "/sys/class/infiniband/%s/device/net", devs.v[i]) < 0 ||
            tp_sysfs_list(path, FX_LIST, NULL, &nets) < 0)
            continue;
        for (size_t j = 0; j < nets.n && n < cap; j++) {
            snprintf(l[n].dev, sizeof l[n].dev, "%s", devs.v[i]);
            snprintf(l[n].netdev, sizeof l[n].netdev, "%s", nets.v[j]);
            n++;
        }
        tp_sysfs_names_free(&nets);
    }
    tp_sysfs_names_free(&devs);
    return n;
}

struct ifsort {
    long ifindex;
    char *name;
};

static int by_ifindex(const void *a, const void *b)
{
    const struct ifsort *x = a, *y = b;
    if (x->ifindex != y->ifindex)
        return x->ifindex < y->ifindex ? -1 : 1;
    return strcmp(x->name, y->name);
}

static json_t *find_iface(json_t *ifaces, const char *name)
{
    size_t i;
    json_t *it;
    json_array_foreach(ifaces, i, it)
    {
        if (!strcmp(json_string_value(json_object_get(it, "name")), name))
            return it;
    }
    return NULL;
}

static void add_address(struct fx *c, json_t *ifaces, const char *ifname, const char *family,
                        const char *addr, long prefix)
{
    /* getifaddrs names an IPv4 alias by its label, "eth0:1" */
    char name[64];
    snprintf(name, sizeof name, "%s", ifname);
    char *colon = strchr(name, ':');
    json_t *it = find_iface(ifaces, name);
    if (!it && colon) {
        *colon = '\0';
        it = find_iface(ifaces, name);
    }
    json_t *list = it ? json_object_get(it, "addresses") : NULL;
    if (!json_is_array(list))
        return;
    json_t *a = tp__check_fx_obj(c);
    tp__check_fx_set(c, a, "family", tp__check_fx_str(c, family));
    tp__check_fx_set(c, a, "address", tp__check_fx_str(c, addr));
    tp__check_fx_set(c, a, "prefix", tp__check_fx_int(c, true, prefix));
    tp__check_fx_push(c, list, a);
}

static unsigned mask_bits(const struct sockaddr *m)
{
    unsigned bits = 0;
    if (!m)
        return 0;
    if (m->sa_family == AF_INET) {
        const struct sockaddr_in *s = (const struct sockaddr_in *)(const void *)m;
        return popcount32(s->sin_addr.s_addr);
    }
    if (m->sa_family == AF_INET6) {
        const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)(const void *)m;
        for (int i = 0; i < 16; i++)
            bits += (unsigned)__builtin_popcount(s->sin6_addr.s6_addr[i]);
    }
    return bits;
}

static void addresses_live(struct fx *c, json_t *ifaces)
{
    struct ifaddrs *ifas = NULL;
    if (getifaddrs(&ifas) < 0) {
        tp__check_fx_unseen(c, "addresses", "getifaddrs: %s", strerror(errno));
        return;
    }
    for (struct ifaddrs *a = ifas; a; a = a->ifa_next) {
        if (!a->ifa_addr || !a->ifa_name)
            continue;
        char buf[INET6_ADDRSTRLEN];
        int af = a->ifa_addr->sa_family;
        const void *bytes;
        if (af == AF_INET)
            bytes = &((const struct sockaddr_in *)(const void *)a->ifa_addr)->sin_addr;
        else if (af == AF_INET6)
            bytes = &((const struct sockaddr_in6 *)(const void *)a->ifa_addr)->sin6_addr;
        else
            continue;
        if (!ntop(af, bytes, buf))
            continue;
        add_address(c, ifaces, a->ifa_name, af == AF_INET ? "inet" : "inet6", buf,
                    (long)mask_bits(a->ifa_netmask));
    }
    freeifaddrs(ifas);
}

/* ROOT/ip-addr.json: [{"ifname": .., "addr_info": [{"family", "local", "prefixlen"}]}]. */
static int addresses_ipjson(struct fx *c, json_t *ifaces)
{
    char path[PATH_MAX];
    if (tp__check_fx_path(c, path, "/ip-addr.json") < 0 || access(path, F_OK) < 0)
        return -1;
    char why[512];
    json_t *doc = tp__check_fx_json(path, why, sizeof why);
    if (!doc) {
        tp__check_fx_unseen(c, "addresses", "%s", why);
        return -1;
    }
    if (!json_is_array(doc)) {
        tp__check_fx_unseen(c, "addresses",
                            "ip-addr.json: not an array (expected `ip -j addr show`)");
        json_decref(doc);
        return -1;
    }
    size_t i, j;
    json_t *link, *ai;
    json_array_foreach(doc, i, link)
    {
        const char *name = json_string_value(json_object_get(link, "ifname"));
        if (!name)
            continue;
        json_array_foreach(json_object_get(link, "addr_info"), j, ai)
        {
            const char *fam = json_string_value(json_object_get(ai, "family"));
            const char *local = json_string_value(json_object_get(ai, "local"));
            json_t *plen = json_object_get(ai, "prefixlen");
            if (!fam || !local || !json_is_integer(plen) ||
                (strcmp(fam, "inet") != 0 && strcmp(fam, "inet6") != 0))
                continue;
            add_address(c, ifaces, name, fam, local, (long)json_integer_value(plen));
        }
    }
    json_decref(doc);
    return 0;
}

/* proc/net/if_inet6: "<32 hex> <ifindex> <prefix> <scope> <flags> <name>", all hex. */
static int addresses_if_inet6(struct fx *c, json_t *ifaces)
{
    char path[PATH_MAX];
    FILE *f = tp__check_fx_path(c, path, "/proc/net/if_inet6") == 0 ? tp_sysfs_open(path) : NULL;
    if (!f)
        return -1;
    char line[256], hex[33], name[64];
    unsigned idx, plen, scope, flags;
    while (fgets(line, sizeof line, f)) {
        uint8_t b[16];
        char buf[INET6_ADDRSTRLEN];
        if (sscanf(line, "%32s %x %x %x %x %63s", hex, &idx, &plen, &scope, &flags, name) != 6 ||
            hex_bytes(hex, b) < 0 || !ntop(AF_INET6, b, buf))
            continue;
        add_address(c, ifaces, name, "inet6", buf, (long)plen);
    }
    fclose(f);
    return 0;
}

static void iface_json(struct fx *c, json_t *ifaces, const char *name, const struct vlan *vl,
                       size_t nvl, const struct rdma_link *rl, size_t nrl)
{
    char dir[PATH_MAX], path[PATH_MAX], buf[256];
    if (tp__check_fx_path(c, dir, "/sys/class/net/%s", name) < 0)
        return;
    json_t *it = tp__check_fx_obj(c);
    long v = 0;
    tp__check_fx_set(c, it, "name", tp__check_fx_str(c, name));
    tp__check_fx_fmt(path, "%s/ifindex", dir);
    tp__check_fx_set(c, it, "ifindex", tp__check_fx_long_json(c, path));
    tp__check_fx_fmt(path, "%s/operstate", dir);
    tp__check_fx_set(
        c, it, "state",
        tp__check_fx_str(c, tp_sysfs_text(path, buf, sizeof buf) == 0 ? buf : NULL));
    tp__check_fx_fmt(path, "%s/mtu", dir);
    tp__check_fx_set(c, it, "mtu", tp__check_fx_long_json(c, path));
    tp__check_fx_fmt(path, "%s/address", dir);
    tp__check_fx_set(c, it, "mac",
                     tp__check_fx_str(c, tp_sysfs_text(path, buf, sizeof buf) == 0 && buf[0]
                                             ? buf
                                             : NULL));
    tp__check_fx_fmt(path, "%s/type", dir);
    tp__check_fx_set(c, it, "loopback",
                     json_boolean(tp__check_fx_long_abs(path, &v) == 0 && v == ARPHRD_LOOPBACK_));
    tp__check_fx_fmt(path, "%s/device/driver", dir);
    tp__check_fx_set(
        c, it, "driver",
        tp__check_fx_str(c, tp__check_fx_link_base(path, buf, sizeof buf) == 0 ? buf : NULL));
    /* speed fails (EINVAL) on a link that is down and on virtual devices;
     * SPEED_UNKNOWN is -1, or 4294967295 where printed unsigned */
    tp__check_fx_fmt(path, "%s/speed", dir);
    bool speed = tp__check_fx_long_abs(path, &v) == 0 && v > 0 && v < 4294967295L;
    tp__check_fx_set(c, it, "speed_mbps", tp__check_fx_int(c, speed, v));

    json_t *vlan = json_null();
    for (size_t i = 0; i < nvl; i++) {
        if (!strcmp(vl[i].name, name)) {
            json_decref(vlan);
            vlan = tp__check_fx_obj(c);
            tp__check_fx_set(c, vlan, "id", tp__check_fx_int(c, true, vl[i].id));
            tp__check_fx_set(c, vlan, "parent", tp__check_fx_str(c, vl[i].parent));
            break;
        }
    }
    tp__check_fx_set(c, it, "vlan", vlan);

    char pci[64], pci_dir[PATH_MAX];
    tp__check_fx_fmt(path, "%s/device", dir);
    bool on_pci = pci_of(path, pci, sizeof pci, pci_dir) == 0;
    /* device/numa_node, or the PCI function's when the device is not the
     * function itself (virtio); -1 means the platform does not say */
    tp__check_fx_fmt(path, "%s/device/numa_node", dir);
    int got = tp__check_fx_long_abs(path, &v);
    if (got < 0 && on_pci) {
        tp__check_fx_fmt(path, "%s/numa_node", pci_dir);
        got = tp__check_fx_long_abs(path, &v);
    }
    tp__check_fx_set(c, it, "numa_node", tp__check_fx_int(c, got == 0 && v >= 0, v));
    tp__check_fx_set(c, it, "pci", tp__check_fx_str(c, on_pci ? pci : NULL));

    const char *rdma = NULL;
    for (size_t i = 0; i < nrl && !rdma; i++)
        if (!strcmp(rl[i].netdev, name))
            rdma = rl[i].dev;
    tp__check_fx_set(c, it, "rdma_device", tp__check_fx_str(c, rdma));
    tp__check_fx_set(c, it, "addresses", tp__check_fx_arr(c));
    tp__check_fx_push(c, ifaces, it);
}

static bool not_file(const char *name)
{
    return strcmp(name, "bonding_masters") != 0;
}

void tp__check_fx_net_interfaces(struct fx *c)
{
    char path[PATH_MAX];
    struct tp_sysfs_names names;
    if (tp__check_fx_path(c, path, "/sys/class/net") < 0 ||
        tp_sysfs_list(path, FX_LIST, not_file, &names) < 0) {
        tp__check_fx_set(c, c->facts, "interfaces", json_null());
        tp__check_fx_unseen(c, "interfaces", "no sys/class/net");
        return;
    }
    struct ifsort *order = calloc(names.n ? names.n : 1, sizeof *order);
    if (!order) {
        c->oom = true;
        tp_sysfs_names_free(&names);
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < names.n; i++) {
        if (tp__check_fx_path(c, path, "/sys/class/net/%s", names.v[i]) < 0 ||
            !tp__check_fx_is_dir(path))
            continue;
        long idx;
        order[n].ifindex = tp__check_fx_long(c, &idx, "/sys/class/net/%s/ifindex", names.v[i]) == 0
                               ? idx
                               : 1L << 30;
        order[n++].name = names.v[i];
    }
    qsort(order, n, sizeof *order, by_ifindex);

    enum { MAXLINKS = 256 };
    struct vlan *vl = calloc(MAXLINKS, sizeof *vl);
    struct rdma_link *rl = calloc(MAXLINKS, sizeof *rl);
    if (!vl || !rl) {
        c->oom = true;
        free(vl);
        free(rl);
        free(order);
        tp_sysfs_names_free(&names);
        return;
    }
    size_t nvl = read_vlans(c, vl, MAXLINKS), nrl = read_rdma_links(c, rl, MAXLINKS);
    json_t *ifaces = tp__check_fx_arr(c);
    for (size_t i = 0; i < n; i++)
        iface_json(c, ifaces, order[i].name, vl, nvl, rl, nrl);
    free(vl);
    free(rl);
    free(order);
    tp_sysfs_names_free(&names);

    if (c->live) {
        addresses_live(c, ifaces);
    } else if (addresses_ipjson(c, ifaces) < 0) {
        tp__check_fx_unseen(c, "addresses.inet",
                            "no ip-addr.json in the snapshot (`ip -j addr show`)");
        if (addresses_if_inet6(c, ifaces) < 0)
            tp__check_fx_missing(c, "addresses.inet6", "no proc/net/if_inet6");
    }
    tp__check_fx_set(c, c->facts, "interfaces", ifaces);
}

/* ---- routes ---- */

static void route_json(struct fx *c, json_t *routes, const char *family, const char *dst,
                       unsigned plen, const char *gw, const char *dev, long metric)
{
    char d[INET6_ADDRSTRLEN + 8];
    snprintf(d, sizeof d, "%s/%u", dst, plen);
    json_t *r = tp__check_fx_obj(c);
    tp__check_fx_set(c, r, "family", tp__check_fx_str(c, family));
    tp__check_fx_set(c, r, "dst", tp__check_fx_str(c, d));
    tp__check_fx_set(c, r, "gateway", tp__check_fx_str(c, gw));
    tp__check_fx_set(c, r, "dev", tp__check_fx_str(c, dev));
    tp__check_fx_set(c, r, "metric", tp__check_fx_int(c, true, metric));
    tp__check_fx_push(c, routes, r);
}

#define RTF_UP_ 0x0001
#define RTF_REJECT_ 0x0200
#define RTF_LOCAL_ 0x80000000u

/* proc/net/route: "Iface Destination Gateway Flags RefCnt Use Metric Mask ..." */
static int routes_v4(struct fx *c, json_t *routes)
{
    char path[PATH_MAX];
    FILE *f = tp__check_fx_path(c, path, "/proc/net/route") == 0 ? tp_sysfs_open(path) : NULL;
    if (!f)
        return -1;
    char line[512], dev[64], dst_hex[16], gw_hex[16], mask_hex[16];
    unsigned flags;
    long metric;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%63s %15s %15s %x %*d %*d %ld %15s", dev, dst_hex, gw_hex, &flags,
                   &metric, mask_hex) != 6 ||
            !(flags & RTF_UP_))
            continue;
        uint8_t dst[4], gw[4], mask[4];
        char dbuf[INET6_ADDRSTRLEN], gbuf[INET6_ADDRSTRLEN];
        if (hex_words(c, dst_hex, dst, 4) < 0 || hex_words(c, gw_hex, gw, 4) < 0 ||
            hex_words(c, mask_hex, mask, 4) < 0 || !ntop(AF_INET, dst, dbuf) ||
            !ntop(AF_INET, gw, gbuf))
            continue;
        uint32_t m;
        memcpy(&m, mask, 4);
        route_json(c, routes, "inet", dbuf, popcount32(m), all_zero(gw, 4) ? NULL : gbuf, dev,
                   metric);
    }
    fclose(f);
    return 0;
}

/* proc/net/ipv6_route: "dst plen src plen nexthop metric refcnt use flags dev",
 * all tables; the local table's own-address entries and reject routes are
 * left out (they are not paths out of the host). */
static int routes_v6(struct fx *c, json_t *routes)
{
    char path[PATH_MAX];
    FILE *f = tp__check_fx_path(c, path, "/proc/net/ipv6_route") == 0 ? tp_sysfs_open(path) : NULL;
    if (!f)
        return -1;
    char line[512], dst_hex[33], src_hex[33], gw_hex[33], dev[64];
    unsigned plen, splen, metric, refcnt, use, flags;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%32s %x %32s %x %32s %x %x %x %x %63s", dst_hex, &plen, src_hex, &splen,
                   gw_hex, &metric, &refcnt, &use, &flags, dev) != 10 ||
            !(flags & RTF_UP_) || (flags & (RTF_REJECT_ | RTF_LOCAL_)))
            continue;
        uint8_t dst[16], gw[16];
        char dbuf[INET6_ADDRSTRLEN], gbuf[INET6_ADDRSTRLEN];
        if (hex_bytes(dst_hex, dst) < 0 || hex_bytes(gw_hex, gw) < 0 ||
            !ntop(AF_INET6, dst, dbuf) || !ntop(AF_INET6, gw, gbuf))
            continue;
        route_json(c, routes, "inet6", dbuf, plen, all_zero(gw, 16) ? NULL : gbuf, dev,
                   (long)metric);
    }
    fclose(f);
    return 0;
}

void tp__check_fx_net_routes(struct fx *c)
{
    json_t *routes = tp__check_fx_arr(c);
    int v4 = routes_v4(c, routes), v6 = routes_v6(c, routes);
    if (v4 < 0)
        tp__check_fx_unseen(c, "routes.inet", "no proc/net/route");
    if (v6 < 0)
        tp__check_fx_missing(c, "routes.inet6", "no proc/net/ipv6_route");
    if (v4 < 0 && v6 < 0) {
        json_decref(routes);
        routes = json_null();
    }
    tp__check_fx_set(c, c->facts, "routes", routes);
}

/* ---- listeners ---- */

struct sock {
    const char *proto;  /* "tcp", "udp" */
    const char *family; /* "inet", "inet6" */
    char addr[INET6_ADDRSTRLEN];
    unsigned port;
    bool wildcard;
    unsigned long inode;
    long pid;
};

struct socks {
    struct sock *v;
    size_t n, cap;
};

#define TCP_LISTEN_ 0x0A
#define TCP_CLOSE_ 0x07 /* an unconnected UDP socket */

/* One of proc/net/{tcp,tcp6,udp,udp6}: the listening (tcp) or unconnected
 * bound (udp) sockets. Ports are printed in host order already. */
static int read_socks(struct fx *c, const char *file, const char *proto, int af, struct socks *s)
{
    char path[PATH_MAX];
    FILE *f = tp__check_fx_path(c, path, "/proc/net/%s", file) == 0 ? tp_sysfs_open(path) : NULL;
    if (!f)
        return -1;
    size_t nbytes = af == AF_INET ? 4 : 16;
    unsigned want = strcmp(proto, "tcp") == 0 ? TCP_LISTEN_ : TCP_CLOSE_;
    char line[512], lhex[40], rhex[40];
    unsigned lport, rport, st;
    unsigned long inode;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, " %*s %39[0-9A-Fa-f]:%x %39[0-9A-Fa-f]:%x %x %*s %*s %*s %*s %*s %lu",
                   lhex, &lport, rhex, &rport, &st, &inode) != 6 ||
            st != want)
            continue;
        uint8_t la[16], ra[16];
        if (hex_words(c, lhex, la, nbytes) < 0 || hex_words(c, rhex, ra, nbytes) < 0)
            continue;
        if (want == TCP_CLOSE_ && (rport != 0 || !all_zero(ra, nbytes)))
            continue;
        if (s->n == s->cap) {
            s->cap = s->cap ? 2 * s->cap : 32;
            struct sock *v = realloc(s->v, s->cap * sizeof *v);
            if (!v) {
                c->oom = true;
                break;
            }
            s->v = v;
        }
        struct sock *k = &s->v[s->n];
        if (!ntop(af, la, k->addr))
            continue;
        k->proto = proto;
        k->family = af == AF_INET ? "inet" : "inet6";
        k->port = lport;
        k->wildcard = all_zero(la, nbytes);
        k->inode = inode;
        k->pid = -1;
        s->n++;
    }
    fclose(f);
    return 0;
}

/* The owner of each socket: the lowest pid holding an fd that links to
 * "socket:[inode]" in proc/PID/fd. Returns how many fd folders could not be
 * read (another user's processes, without privilege). */
static size_t find_owners(struct fx *c, struct socks *s)
{
    char path[PATH_MAX];
    struct tp_sysfs_names pids;
    if (tp__check_fx_path(c, path, "/proc") < 0 || tp_sysfs_list(path, FX_LIST, NULL, &pids) < 0)
        return 0;
    size_t denied = 0;
    for (size_t i = 0; i < pids.n; i++) {
        if (!tp__check_fx_prefixed_number(pids.v[i], ""))
            continue;
        long pid = strtol(pids.v[i], NULL, 10);
        struct tp_sysfs_names fds;
        if (tp__check_fx_path(c, path, "/proc/%s/fd", pids.v[i]) < 0)
            continue;
        if (tp_sysfs_list(path, FX_LIST, NULL, &fds) < 0) {
            denied += errno == EACCES || errno == EPERM;
            continue;
        }
        for (size_t j = 0; j < fds.n; j++) {
            char link[PATH_MAX], target[64];
            if (tp__check_fx_path(c, link, "/proc/%s/fd/%s", pids.v[i], fds.v[j]) < 0)
                continue;
            ssize_t n = readlink(link, target, sizeof target - 1);
            if (n < 0 && (errno == EACCES || errno == EPERM)) {
                denied++; /* listed but not readable: count the process once */
                break;
            }
            if (n <= 0)
                continue;
            target[n] = '\0';
            unsigned long ino;
            char close_br;
            if (sscanf(target, "socket:[%lu%c", &ino, &close_br) != 2 || close_br != ']')
                continue;
            for (size_t k = 0; k < s->n; k++)
                if (s->v[k].inode == ino && (s->v[k].pid < 0 || pid < s->v[k].pid))
                    s->v[k].pid = pid;
        }
        tp_sysfs_names_free(&fds);
    }
    tp_sysfs_names_free(&pids);
    return denied;
}

void tp__check_fx_net_listeners(struct fx *c)
{
    static const struct {
        const char *file, *proto;
        int af;
    } files[] = {{"tcp", "tcp", AF_INET},
                 {"tcp6", "tcp", AF_INET6},
                 {"udp", "udp", AF_INET},
                 {"udp6", "udp", AF_INET6}};
    struct socks s = {0};
    int read_any = 0;
    /* IPv4's tables are always there; IPv6's only while IPv6 is on (its
     * addresses table exists): else their absence is the node's, not the
     * facts' */
    char v6[PATH_MAX];
    bool ipv6 = tp__check_fx_path(c, v6, "/proc/net/if_inet6") == 0 && access(v6, F_OK) == 0;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        if (read_socks(c, files[i].file, files[i].proto, files[i].af, &s) == 0)
            read_any = 1;
        else if (files[i].af == AF_INET || ipv6)
            tp__check_fx_unseen(c, "listeners", "no proc/net/%s", files[i].file);
        else
            tp__check_fx_missing(c, "listeners", "no proc/net/%s (IPv6 off)", files[i].file);
    }
    if (!read_any) {
        free(s.v);
        tp__check_fx_set(c, c->facts, "listeners", json_null());
        return;
    }
    size_t denied = s.n ? find_owners(c, &s) : 0;
    if (denied)
        tp__check_fx_missing(c, "listeners.pid",
                             "the fds of %zu processes could not be read (not root, or another pid "
                             "namespace's): some pid/process are null",
                             denied);
    json_t *list = tp__check_fx_arr(c);
    for (size_t i = 0; i < s.n; i++) {
        const struct sock *k = &s.v[i];
        json_t *o = tp__check_fx_obj(c);
        tp__check_fx_set(c, o, "proto", tp__check_fx_str(c, k->proto));
        tp__check_fx_set(c, o, "family", tp__check_fx_str(c, k->family));
        tp__check_fx_set(c, o, "address", tp__check_fx_str(c, k->addr));
        tp__check_fx_set(c, o, "port", tp__check_fx_int(c, true, (long)k->port));
        tp__check_fx_set(c, o, "wildcard", json_boolean(k->wildcard));
        tp__check_fx_set(c, o, "inode", tp__check_fx_int(c, true, (long)k->inode));
        tp__check_fx_set(c, o, "pid", tp__check_fx_int(c, k->pid >= 0, k->pid));
        char comm[64];
        bool named =
            k->pid >= 0 && tp__check_fx_read(c, comm, sizeof comm, "/proc/%ld/comm", k->pid) == 0;
        tp__check_fx_set(c, o, "process", tp__check_fx_str(c, named ? comm : NULL));
        tp__check_fx_push(c, list, o);
    }
    free(s.v);
    tp__check_fx_set(c, c->facts, "listeners", list);
}

/* ---- nftables ---- */

/* The base chains hooked on input, from `nft -j list ruleset`'s objects
 * {"chain": {"family", "table", "name", "hook", "prio", "policy"}}. */
static json_t *input_chains(struct fx *c, const json_t *ruleset)
{
    json_t *out = tp__check_fx_arr(c);
    size_t i;
    json_t *item;
    json_array_foreach(json_object_get(ruleset, "nftables"), i, item)
    {
        json_t *ch = json_object_get(item, "chain");
        const char *hook = json_string_value(json_object_get(ch, "hook"));
        if (!hook || strcmp(hook, "input") != 0)
            continue;
        json_t *o = tp__check_fx_obj(c);
        tp__check_fx_set(c, o, "family",
                         tp__check_fx_str(c, json_string_value(json_object_get(ch, "family"))));
        tp__check_fx_set(c, o, "table",
                         tp__check_fx_str(c, json_string_value(json_object_get(ch, "table"))));
        tp__check_fx_set(c, o, "chain",
                         tp__check_fx_str(c, json_string_value(json_object_get(ch, "name"))));
        tp__check_fx_set(c, o, "policy",
                         tp__check_fx_str(c, json_string_value(json_object_get(ch, "policy"))));
        json_t *prio = json_object_get(ch, "prio");
        tp__check_fx_set(c, o, "priority", prio ? json_incref(prio) : json_null());
        tp__check_fx_push(c, out, o);
    }
    return out;
}

/* CAP_NET_ADMIN in this process's effective set. Without it, listing the
 * ruleset fails, and libnftables then prints to stderr by itself. */
static bool have_net_admin(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    if (!f)
        return true; /* cannot tell: let libnftables say */
    char line[256];
    unsigned long long eff = ~0ULL;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "CapEff: %llx", &eff) == 1)
            break;
    fclose(f);
    return (eff >> 12) & 1; /* CAP_NET_ADMIN is 12 */
}

static json_t *ruleset_live(struct fx *c)
{
    if (!have_net_admin()) {
        tp__check_fx_unseen(c, "nftables", "listing the ruleset needs CAP_NET_ADMIN (run as root)");
        return NULL;
    }
    struct nft_ctx *nft = nft_ctx_new(NFT_CTX_DEFAULT);
    if (!nft) {
        tp__check_fx_unseen(c, "nftables", "libnftables: cannot create a context");
        return NULL;
    }
    nft_ctx_output_set_flags(nft, NFT_CTX_OUTPUT_JSON);
    json_t *doc = NULL;
    if (nft_ctx_buffer_output(nft) != 0 || nft_ctx_buffer_error(nft) != 0) {
        tp__check_fx_unseen(c, "nftables", "libnftables: cannot buffer its output");
    } else if (nft_run_cmd_from_buffer(nft, "list ruleset") != 0) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s", nft_ctx_get_error_buffer(nft));
        char *nl = strchr(msg, '\n');
        if (nl)
            *nl = '\0';
        tp__check_fx_unseen(c, "nftables", "list ruleset: %s", msg[0] ? msg : "failed");
    } else {
        json_error_t je;
        doc = json_loads(nft_ctx_get_output_buffer(nft), 0, &je);
        if (!doc)
            tp__check_fx_unseen(c, "nftables", "libnftables output is not JSON: %s", je.text);
    }
    nft_ctx_free(nft);
    return doc;
}

static json_t *ruleset_file(struct fx *c)
{
    char path[PATH_MAX];
    if (tp__check_fx_path(c, path, "/nftables.json") < 0 || access(path, F_OK) < 0) {
        tp__check_fx_unseen(c, "nftables",
                            "no nftables.json in the snapshot (`nft -j list ruleset`)");
        return NULL;
    }
    char why[512];
    json_t *doc = tp__check_fx_json(path, why, sizeof why);
    if (!doc)
        tp__check_fx_unseen(c, "nftables", "%s", why);
    return doc;
}

void tp__check_fx_net_nftables(struct fx *c)
{
    json_t *ruleset = c->live ? ruleset_live(c) : ruleset_file(c);
    if (ruleset && !json_is_array(json_object_get(ruleset, "nftables"))) {
        tp__check_fx_unseen(c, "nftables", "the ruleset has no \"nftables\" array");
        json_decref(ruleset);
        ruleset = NULL;
    }
    if (!ruleset) {
        tp__check_fx_set(c, c->facts, "nftables", json_null());
        return;
    }
    json_t *nft = tp__check_fx_obj(c);
    tp__check_fx_set(c, nft, "ruleset", ruleset);
    tp__check_fx_set(c, nft, "input_chains", input_chains(c, ruleset));
    tp__check_fx_set(c, c->facts, "nftables", nft);
}
