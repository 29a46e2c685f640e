/* The rules of `trainpath check`: one small function per rule and one table
 * that holds each with its id, plane, severity, rationale, remediation and
 * source. A rule reads the facts (docs/check.md) and the policy and says
 * PASS, WARN, FAIL or SKIP; it SKIPs, never guesses, when the part of the
 * facts it needs is null or absent, or the policy has no plane it is about.
 *
 * Evidence names the interface, port or controller, the value seen and what
 * was wanted. A rule gathers what is wrong and what was checked in a
 * `struct finding`; the finding reports the first when anything is wrong and
 * the second otherwise. Generic baselines (CIS, Lynis) treat every interface
 * alike; these rules know the planes: strict reverse-path filtering is right
 * on management and wrong on RDMA ports that share a subnet. */
#include <arpa/inet.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "tp/json.h"

#include "tp/check.h"

/* ---- evidence ---- */

struct finding {
    enum tp_check_status status; /* worst so far: PASS, WARN or FAIL */
    char bad[1024];              /* what is wrong; reported when status is not PASS */
    char good[1024];             /* what was checked; reported on PASS */
};

/* item is already one of the "; "-separated items of buf */
static bool has_item(const char *buf, const char *item)
{
    size_t n = strlen(item);
    for (const char *s = strstr(buf, item); s; s = strstr(s + 1, item))
        if ((s == buf || (s >= buf + 2 && s[-2] == ';' && s[-1] == ' ')) &&
            (s[n] == '\0' || s[n] == ';'))
            return true;
    return false;
}

/* Append an item to buf, "; " between items; "..." marks a full buffer.
 * Repeated items (the same port on 0.0.0.0 and ::) are written once. */
static void vappend(char *buf, size_t cap, const char *fmt, va_list ap)
{
    char item[512];
    vsnprintf(item, sizeof item, fmt, ap);
    if (has_item(buf, item))
        return;
    size_t n = strlen(buf);
    if (n + 4 >= cap) {
        memcpy(buf + cap - 4, "...", 4);
        return;
    }
    int w = snprintf(buf + n, cap - n, "%s%s", n ? "; " : "", item);
    if (w < 0 || (size_t)w >= cap - n)
        memcpy(buf + cap - 4, "...", 4);
}

/* Record something checked that is as wanted. */
__attribute__((format(printf, 2, 3))) static void ok(struct finding *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vappend(f->good, sizeof f->good, fmt, ap);
    va_end(ap);
}

/* Record something wrong (s is WARN or FAIL); the finding takes the worst. */
__attribute__((format(printf, 3, 4))) static void bad(struct finding *f, enum tp_check_status s,
                                                      const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vappend(f->bad, sizeof f->bad, fmt, ap);
    va_end(ap);
    if (s == TP_CHECK_FAIL || (s == TP_CHECK_WARN && f->status == TP_CHECK_PASS))
        f->status = s;
}

/* The result of a finding: what is wrong followed by what was wanted, or
 * what was checked. A cut marks its end with "...". */
static void done(struct tp_check_result *r, const struct finding *f, const char *want)
{
    size_t cap = sizeof r->evidence;
    int w;
    r->status = f->status;
    if (f->status == TP_CHECK_PASS)
        w = snprintf(r->evidence, cap, "%s", f->good[0] ? f->good : "nothing to check");
    else
        w = snprintf(r->evidence, cap, "%s%s%s", f->bad, want ? "; " : "", want ? want : "");
    if (w < 0 || (size_t)w >= cap)
        memcpy(r->evidence + cap - 4, "...", 4);
}

/* The result is one sentence, with status s. */
__attribute__((format(printf, 3, 4))) static void say(struct tp_check_result *r,
                                                      enum tp_check_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->evidence, sizeof r->evidence, fmt, ap);
    va_end(ap);
    r->status = s;
}

#define skip(r, ...) say(r, TP_CHECK_SKIP, __VA_ARGS__)

/* ---- facts ---- */

/* The member key of o, NULL when absent or JSON null. */
static const json_t *get(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_null(v) ? NULL : v;
}

static const char *sget(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static bool parse_ll(const char *s, long long *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    while (*end == ' ' || *end == '\n' || *end == '\t')
        end++;
    if (end == s || *end || errno)
        return false;
    *v = x;
    return true;
}

/* A number, as a JSON integer or as the string a sysctl file holds. */
static bool iget(const json_t *o, const char *key, long long *v)
{
    const json_t *x = json_object_get(o, key);
    if (json_is_integer(x)) {
        *v = json_integer_value(x);
        return true;
    }
    return json_is_string(x) && parse_ll(json_string_value(x), v);
}

/* 1 true, 0 false, -1 unknown (null or absent) */
static int bget(const json_t *o, const char *key)
{
    const json_t *x = json_object_get(o, key);
    return json_is_boolean(x) ? json_is_true(x) : -1;
}

/* The first key of a one-member object, as libnftables writes statements. */
static const char *first_key(const json_t *o)
{
    return json_is_object(o) ? json_object_iter_key(json_object_iter((json_t *)o)) : NULL;
}

static bool sysctl(const json_t *facts, const char *name, long long *v)
{
    return iget(get(facts, "sysctl"), name, v);
}

/* net.<fam>.conf.<dev>.<key>; sysctl(8) writes the dots of a VLAN name
 * (eth0.42) as slashes, so try that form first. */
static bool sysctl_conf(const json_t *facts, const char *fam, const char *dev, const char *key,
                        long long *v)
{
    char name[256], slashed[64];
    snprintf(slashed, sizeof slashed, "%s", dev);
    for (char *c = slashed; *c; c++)
        if (*c == '.')
            *c = '/';
    snprintf(name, sizeof name, "net.%s.conf.%s.%s", fam, slashed, key);
    if (sysctl(facts, name, v))
        return true;
    snprintf(name, sizeof name, "net.%s.conf.%s.%s", fam, dev, key);
    return sysctl(facts, name, v);
}

static const char *ifname(const json_t *ifc)
{
    const char *s = sget(ifc, "name");
    return s ? s : "?";
}

static bool loopback_iface(const json_t *ifc)
{
    return json_is_true(json_object_get(ifc, "loopback"));
}

/* operstate "unknown" is what drivers without carrier reporting (dummy,
 * tunnels, some virtual NICs) show while up; a downed one shows "down". */
static bool up_iface(const json_t *ifc)
{
    const char *s = sget(ifc, "state");
    return s && (strcmp(s, "up") == 0 || strcmp(s, "unknown") == 0);
}

static int plane_of(const struct tp_policy *p, const json_t *ifc)
{
    return loopback_iface(ifc) ? -1 : tp_policy_plane_of(p, ifc);
}

static const char *pname(int plane)
{
    return tp_plane_name((enum tp_plane)plane);
}

/* The facts' interfaces when plane pl has any on this node; otherwise NULL
 * after a SKIP that says why (no interface facts, no such plane in the
 * policy, or no interface of the node in it). */
static const json_t *plane_ifaces(const json_t *facts, const struct tp_policy *p, int pl,
                                  struct tp_check_result *r)
{
    const json_t *ifs = get(facts, "interfaces");
    if (!json_is_array(ifs)) {
        skip(r, "no interface facts");
        return NULL;
    }
    if (!p->planes[pl].present) {
        skip(r, "the policy has no %s plane", pname(pl));
        return NULL;
    }
    size_t i;
    json_t *ifc;
    json_array_foreach(ifs, i, ifc) {
        if (plane_of(p, ifc) == pl)
            return ifs;
    }
    skip(r, "no interface of this node is in the %s plane", pname(pl));
    return NULL;
}

static size_t rdma_devices(const json_t *facts)
{
    return json_array_size(get(get(facts, "rdma"), "devices"));
}

/* The interface with this name, or NULL. */
static const json_t *find_iface(const json_t *facts, const char *name)
{
    size_t i;
    json_t *ifc;
    json_array_foreach(get(facts, "interfaces"), i, ifc) {
        if (name && strcmp(ifname(ifc), name) == 0)
            return ifc;
    }
    return NULL;
}

/* ---- addresses and listeners ---- */

static bool host_cidr(const char *a, struct tp_cidr *c)
{
    memset(c, 0, sizeof *c);
    char buf[INET6_ADDRSTRLEN + 16];
    snprintf(buf, sizeof buf, "%s", a);
    buf[strcspn(buf, "%/")] = '\0';
    if (inet_pton(AF_INET, buf, c->addr) == 1) {
        c->family = AF_INET;
        c->prefix = 32;
        return true;
    }
    if (inet_pton(AF_INET6, buf, c->addr) == 1) {
        c->family = AF_INET6;
        c->prefix = 128;
        return true;
    }
    return false;
}

static bool loopback_addr(const char *a)
{
    static const struct tp_cidr lo4 = {AF_INET, {127}, 8};
    static const struct tp_cidr lo6 = {AF_INET6, {[15] = 1}, 128};
    return tp_cidr_contains(&lo4, a) || tp_cidr_contains(&lo6, a);
}

/* The plane of a local address: that of the interface holding it, else that
 * of the policy CIDR holding it, else -1. */
static int addr_plane(const json_t *facts, const struct tp_policy *p, const char *addr)
{
    size_t i, j;
    json_t *ifc, *a;
    json_array_foreach(get(facts, "interfaces"), i, ifc) {
        json_array_foreach(json_object_get(ifc, "addresses"), j, a) {
            struct tp_cidr host;
            const char *s = sget(a, "address");
            if (s && host_cidr(s, &host) && tp_cidr_contains(&host, addr)) {
                int pl = plane_of(p, ifc);
                if (pl >= 0)
                    return pl;
            }
        }
    }
    for (int pl = 0; pl < TP_PLANES; pl++)
        for (int k = 0; p->planes[pl].present && k < p->planes[pl].ncidrs; k++)
            if (tp_cidr_contains(&p->planes[pl].cidrs[k], addr))
                return pl;
    return -1;
}

#define NO_PLANE (1u << TP_PLANES) /* an address outside every plane */

/* The planes (bit per plane, NO_PLANE for addresses in none) where a
 * wildcard socket of this family is reachable: every non-loopback address
 * of the node; an IPv6 wildcard also takes IPv4 unless bound v6-only, which
 * the facts do not say, so it counts as both. */
static unsigned wildcard_planes(const json_t *facts, const struct tp_policy *p, const char *family)
{
    unsigned mask = 0;
    bool v4only = family && strcmp(family, "inet") == 0;
    size_t i, j;
    json_t *ifc, *a;
    json_array_foreach(get(facts, "interfaces"), i, ifc) {
        if (loopback_iface(ifc))
            continue;
        json_array_foreach(json_object_get(ifc, "addresses"), j, a) {
            const char *s = sget(a, "address"), *fam = sget(a, "family");
            if (!s || loopback_addr(s) || (v4only && fam && strcmp(fam, "inet") != 0))
                continue;
            int pl = plane_of(p, ifc);
            mask |= pl >= 0 ? 1u << pl : NO_PLANE;
        }
    }
    return mask;
}

static bool wildcard(const json_t *l)
{
    const char *a = sget(l, "address");
    return json_is_true(json_object_get(l, "wildcard")) ||
           (a && (strcmp(a, "0.0.0.0") == 0 || strcmp(a, "::") == 0 || strcmp(a, "*") == 0));
}

/* "tcp/22 (sshd) on 0.0.0.0", "tcp/22 (pid 811) on [::]" */
static void describe(const json_t *l, char *buf, size_t n)
{
    long long port = -1, pid;
    iget(l, "port", &port);
    const char *proto = sget(l, "proto"), *proc = sget(l, "process"), *a = sget(l, "address");
    char who[96];
    if (proc)
        snprintf(who, sizeof who, "%s", proc);
    else if (iget(l, "pid", &pid))
        snprintf(who, sizeof who, "pid %lld", pid);
    else
        snprintf(who, sizeof who, "process unknown");
    bool v6 = a && strchr(a, ':');
    snprintf(buf, n, "%s/%lld (%s) on %s%s%s", proto ? proto : "?", port, who, v6 ? "[" : "",
             a ? a : "?", v6 ? "]" : "");
}

/* The service of plane pl that allows this listener, or NULL. */
static const struct tp_service *service(const struct tp_policy *p, int pl, const json_t *l)
{
    long long port;
    const char *proto = sget(l, "proto");
    if (!proto || !iget(l, "port", &port))
        return NULL;
    const struct tp_policy_plane *pp = &p->planes[pl];
    for (int i = 0; pp->present && i < pp->nservices; i++) {
        const struct tp_service *s = &pp->services[i];
        if (strcmp(s->proto, proto) == 0 && port >= s->port_lo && port <= s->port_hi)
            return s;
    }
    return NULL;
}

/* "management, data" from a plane mask */
static void plane_list(unsigned mask, char *buf, size_t n)
{
    buf[0] = '\0';
    for (int pl = 0; pl <= TP_PLANES; pl++)
        if (mask & (1u << pl)) {
            size_t len = strlen(buf);
            snprintf(buf + len, n - len, "%s%s", len ? ", " : "",
                     pl == TP_PLANES ? "no plane" : pname(pl));
        }
}

/* ---- rules: the checklist ---- */

static void mtu(const json_t *facts, const struct tp_policy *p, int pl, struct tp_check_result *r)
{
    const json_t *ifs = plane_ifaces(facts, p, pl, r);
    if (!ifs)
        return;
    unsigned want = p->planes[pl].mtu_min;
    if (want == 0) {
        skip(r, "the policy sets no mtu_min for the %s plane", pname(pl));
        return;
    }
    struct finding f = {0};
    size_t i;
    json_t *ifc;
    json_array_foreach(ifs, i, ifc) {
        long long m;
        if (plane_of(p, ifc) != pl)
            continue;
        if (!iget(ifc, "mtu", &m))
            bad(&f, TP_CHECK_WARN, "%s (%s): MTU unknown", ifname(ifc), pname(pl));
        else if (m < (long long)want)
            bad(&f, TP_CHECK_FAIL, "%s (%s): MTU %lld < %u", ifname(ifc), pname(pl), m, want);
        else
            ok(&f, "%s (%s): MTU %lld >= %u", ifname(ifc), pname(pl), m, want);
    }
    char w[96];
    snprintf(w, sizeof w, "the policy wants MTU >= %u on the %s plane", want, pname(pl));
    done(r, &f, w);
}

static void net_mtu_data(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    mtu(facts, p, TP_PLANE_DATA, r);
}

static void net_mtu_storage(const json_t *facts, const struct tp_policy *p,
                            struct tp_check_result *r)
{
    mtu(facts, p, TP_PLANE_STORAGE, r);
}

static void net_speed_data(const json_t *facts, const struct tp_policy *p,
                           struct tp_check_result *r)
{
    const json_t *ifs = plane_ifaces(facts, p, TP_PLANE_DATA, r);
    if (!ifs)
        return;
    long long top = 0, s;
    int n = 0;
    size_t i;
    json_t *ifc;
    json_array_foreach(ifs, i, ifc) {
        if (plane_of(p, ifc) == TP_PLANE_DATA && iget(ifc, "speed_mbps", &s) && s > 0) {
            n++;
            top = s > top ? s : top;
        }
    }
    if (n < 2) {
        skip(r, "fewer than two data-plane ports report a link speed");
        return;
    }
    struct finding f = {0};
    json_array_foreach(ifs, i, ifc) {
        if (plane_of(p, ifc) != TP_PLANE_DATA || !iget(ifc, "speed_mbps", &s) || s <= 0)
            continue;
        if (s < top)
            bad(&f, TP_CHECK_FAIL, "%s (data): %lld Mb/s, the fastest port %lld Mb/s",
                ifname(ifc), s, top);
        else
            ok(&f, "%s (data): %lld Mb/s", ifname(ifc), s);
    }
    done(r, &f, "every data-plane port should run at the same speed");
}

/* The NUMA nodes of the GPUs as "0, 1", and whether node is one of them. */
static bool gpu_on_node(const json_t *gpus, long long node, char *list, size_t n)
{
    bool found = false;
    size_t i, j;
    json_t *g, *h;
    list[0] = '\0';
    json_array_foreach(gpus, i, g) {
        long long gn, hn;
        bool seen = false;
        if (!iget(g, "numa_node", &gn) || gn < 0)
            continue;
        found |= gn == node;
        json_array_foreach(gpus, j, h) {
            if (j < i && iget(h, "numa_node", &hn) && hn == gn)
                seen = true;
        }
        size_t len = strlen(list);
        if (!seen)
            snprintf(list + len, n - len, "%s%lld", len ? ", " : "", gn);
    }
    return found;
}

static void numa_nic_gpu(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    const json_t *gpus = get(facts, "gpus");
    if (!json_is_array(gpus) || json_array_size(gpus) == 0) {
        skip(r, gpus ? "no GPUs" : "no GPU facts");
        return;
    }
    const json_t *ifs = plane_ifaces(facts, p, TP_PLANE_DATA, r);
    if (!ifs)
        return;
    long long nodes;
    if (iget(get(facts, "cpu"), "numa_nodes", &nodes) && nodes == 1) {
        say(r, TP_CHECK_PASS, "single NUMA node: every NIC shares it with every GPU");
        return;
    }
    char list[256];
    gpu_on_node(gpus, -1, list, sizeof list);
    if (!list[0]) {
        skip(r, "the GPUs have no NUMA node information");
        return;
    }
    struct finding f = {0};
    int known = 0;
    size_t i;
    json_t *ifc;
    json_array_foreach(ifs, i, ifc) {
        long long node;
        if (plane_of(p, ifc) != TP_PLANE_DATA || !iget(ifc, "numa_node", &node) || node < 0)
            continue;
        known++;
        if (gpu_on_node(gpus, node, list, sizeof list))
            ok(&f, "%s (data): NUMA node %lld has a GPU", ifname(ifc), node);
        else
            bad(&f, TP_CHECK_FAIL, "%s (data): NUMA node %lld has no GPU (GPUs on nodes %s)",
                ifname(ifc), node, list);
    }
    if (!known) {
        skip(r, "the data-plane NICs have no NUMA node information");
        return;
    }
    done(r, &f, "each data-plane NIC should sit on a NUMA node with a GPU");
}

static void cpu_governor(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    (void)p;
    const json_t *govs = get(get(facts, "cpu"), "governors");
    if (!json_is_object(govs) || json_object_size(govs) == 0) {
        skip(r, "no cpufreq governors (no cpufreq driver, or a virtual machine)");
        return;
    }
    struct finding f = {0};
    const char *g;
    json_t *n;
    json_object_foreach((json_t *)govs, g, n) {
        long long count = json_integer_value(n);
        if (strcmp(g, "performance") == 0)
            ok(&f, "performance on %lld CPUs", count);
        else
            bad(&f, TP_CHECK_FAIL, "%s on %lld CPUs", g, count);
    }
    done(r, &f, "every CPU should run the performance governor");
}

/* GPUDirect RDMA: an RDMA NIC reads and writes GPU memory itself only when
 * the peer-memory module lets it register that memory; without it NCCL and
 * libfabric (FI_HMEM) stage every transfer through host memory. */
static void gpu_peermem(const json_t *facts, const struct tp_policy *p,
                        struct tp_check_result *r)
{
    (void)p;
    const json_t *gpus = get(facts, "gpus");
    if (!json_is_array(gpus)) {
        skip(r, "no GPU facts");
        return;
    }
    size_t i, nv = 0, nrdma = rdma_devices(facts);
    json_t *g;
    json_array_foreach(gpus, i, g) {
        const char *v = sget(g, "vendor");
        nv += v && strcmp(v, "0x10de") == 0;
    }
    const json_t *gd = get(facts, "gpudirect");
    if (nv == 0)
        skip(r, "no NVIDIA GPUs");
    else if (nrdma == 0)
        skip(r, "no RDMA devices: GPUDirect RDMA does not apply");
    else if (!json_is_object(gd))
        skip(r, "no GPUDirect facts");
    else if (sget(gd, "peermem"))
        say(r, TP_CHECK_PASS, "%s loaded: %zu NVIDIA GPU(s) and %zu RDMA device(s) can move GPU "
            "memory directly", sget(gd, "peermem"), nv, nrdma);
    else
        say(r, TP_CHECK_FAIL, "%zu NVIDIA GPU(s) and %zu RDMA device(s), but neither "
            "nvidia_peermem nor nv_peer_mem is loaded: GPU data is staged through host memory "
            "unless NCCL uses DMA-BUF", nv, nrdma);
}

static void mem_thp(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    if (!p->planes[TP_PLANE_DATA].present) {
        skip(r, "the policy has no data plane");
        return;
    }
    const char *thp = sget(get(facts, "memory"), "thp");
    if (!thp)
        skip(r, "no transparent hugepage facts");
    else if (strcmp(thp, "always") == 0)
        say(r, TP_CHECK_FAIL, "transparent_hugepage/enabled always; want madvise or never");
    else
        say(r, TP_CHECK_PASS, "transparent_hugepage/enabled %s", thp);
}

static void mem_hugepages_rdma(const json_t *facts, const struct tp_policy *p,
                               struct tp_check_result *r)
{
    (void)p;
    size_t ndev = rdma_devices(facts);
    const json_t *mem = get(facts, "memory");
    long long total, kb = 0;
    if (ndev == 0)
        skip(r, "no RDMA devices");
    else if (!iget(mem, "hugepages_total", &total))
        skip(r, "no hugepage facts");
    else {
        iget(mem, "hugepage_size_kb", &kb);
        say(r, total > 0 ? TP_CHECK_PASS : TP_CHECK_FAIL,
            "%lld hugepages of %lld kB with %zu RDMA devices%s", total, kb, ndev,
            total > 0 ? "" : "; want hugepages reserved for registered buffers");
    }
}

static void iommu_pt(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    (void)p;
    size_t ngpu = json_array_size(get(facts, "gpus")), ndev = rdma_devices(facts);
    const char *mode = sget(get(facts, "iommu"), "mode");
    if (ngpu == 0 || ndev == 0) {
        skip(r, "GPUDirect RDMA needs GPUs and RDMA devices: %zu GPUs, %zu RDMA devices", ngpu,
             ndev);
        return;
    }
    if (!mode) {
        skip(r, "no IOMMU facts");
        return;
    }
    const char *cmdline = sget(get(facts, "iommu"), "cmdline");
    if (strcmp(mode, "passthrough") == 0 || strcmp(mode, "off") == 0)
        say(r, TP_CHECK_PASS, "IOMMU %s with %zu GPUs and %zu RDMA devices", mode, ngpu, ndev);
    else if (strcmp(mode, "translated") == 0)
        say(r, TP_CHECK_FAIL, "IOMMU translated (cmdline: %s); want passthrough (iommu=pt) or off",
            cmdline ? cmdline : "?");
    else
        say(r, TP_CHECK_WARN, "IOMMU mode %s; want passthrough (iommu=pt) or off", mode);
}

static void rdma_port_active(const json_t *facts, const struct tp_policy *p,
                             struct tp_check_result *r)
{
    const json_t *rdma = get(facts, "rdma");
    if (!rdma || rdma_devices(facts) == 0) {
        skip(r, "no RDMA devices");
        return;
    }
    if (!p->planes[TP_PLANE_DATA].present) {
        skip(r, "the policy has no data plane");
        return;
    }
    struct finding f = {0};
    int n = 0;
    size_t i, j;
    json_t *dev, *port;
    json_array_foreach(get(rdma, "devices"), i, dev) {
        json_array_foreach(json_object_get(dev, "ports"), j, port) {
            const char *netdev = sget(port, "netdev"), *state = sget(port, "state");
            const json_t *ifc = find_iface(facts, netdev);
            long long num = 0;
            if (!ifc || plane_of(p, ifc) != TP_PLANE_DATA)
                continue;
            n++;
            iget(port, "port", &num);
            if (state && strstr(state, "ACTIVE"))
                ok(&f, "%s port %lld (%s, data): ACTIVE", sget(dev, "name"), num, netdev);
            else
                bad(&f, TP_CHECK_FAIL, "%s port %lld (%s, data): %s", sget(dev, "name"), num,
                    netdev, state ? state : "state unknown");
        }
    }
    if (!n) {
        skip(r, "no RDMA port has a data-plane netdev");
        return;
    }
    done(r, &f, "every data-plane RDMA port should be ACTIVE");
}

/* The fabrics controllers, or NULL after a SKIP. Loop controllers are a
 * local test transport with nothing on the wire, so they are left out. */
static const json_t *nvme_hosts(const json_t *facts, const char *transport,
                                struct tp_check_result *r)
{
    const json_t *hosts = get(facts, "nvme_hosts");
    if (!json_is_array(hosts)) {
        skip(r, "no NVMe host facts");
        return NULL;
    }
    size_t i;
    json_t *c;
    json_array_foreach(hosts, i, c) {
        const char *t = sget(c, "transport");
        if (t && strcmp(t, "loop") != 0 && (!transport || strcmp(t, transport) == 0))
            return hosts;
    }
    skip(r, "no NVMe-oF%s%s controllers", transport ? "/" : "", transport ? transport : "");
    return NULL;
}

static bool nvme_wanted(const json_t *c, const char *transport)
{
    const char *t = sget(c, "transport");
    return t && strcmp(t, "loop") != 0 && (!transport || strcmp(t, transport) == 0);
}

/* "nvme1 (tcp traddr=10.2.0.9,trsvcid=4420)" */
static void ctrl_name(const json_t *c, char *buf, size_t n)
{
    const char *a = sget(c, "address");
    snprintf(buf, n, "%s (%s %s)", sget(c, "ctrl") ? sget(c, "ctrl") : "?", sget(c, "transport"),
             a ? a : "?");
}

static void nvmeof_ctrl_loss(const json_t *facts, const struct tp_policy *p,
                             struct tp_check_result *r)
{
    (void)p;
    const json_t *hosts = nvme_hosts(facts, NULL, r);
    if (!hosts)
        return;
    struct finding f = {0};
    size_t i;
    json_t *c;
    json_array_foreach(hosts, i, c) {
        char name[256];
        long long tmo;
        if (!nvme_wanted(c, NULL))
            continue;
        ctrl_name(c, name, sizeof name);
        if (!iget(c, "ctrl_loss_tmo", &tmo))
            bad(&f, TP_CHECK_WARN, "%s: ctrl_loss_tmo unknown", name);
        else if (tmo == -1)
            ok(&f, "%s: ctrl_loss_tmo -1 (reconnect forever)", name);
        else if (tmo >= 60)
            ok(&f, "%s: ctrl_loss_tmo %lld s", name, tmo);
        else
            bad(&f, TP_CHECK_FAIL, "%s: ctrl_loss_tmo %lld s", name, tmo);
    }
    done(r, &f, "want ctrl_loss_tmo -1 or >= 60 s");
}

static void nvmeof_multipath(const json_t *facts, const struct tp_policy *p,
                             struct tp_check_result *r)
{
    (void)p;
    if (!nvme_hosts(facts, NULL, r))
        return;
    int mp = bget(facts, "nvme_multipath");
    if (mp < 0)
        skip(r, "nvme_core multipath parameter not in the facts");
    else
        say(r, mp ? TP_CHECK_PASS : TP_CHECK_FAIL, "nvme_core multipath %s%s", mp ? "Y" : "N",
            mp ? "" : "; want native multipath (nvme_core.multipath=Y)");
}

static void time_sync(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    (void)p;
    const json_t *t = get(facts, "time");
    int s = bget(t, "synchronized");
    long long us;
    char err[48] = "maxerror unknown";
    if (iget(t, "maxerror_us", &us))
        snprintf(err, sizeof err, "maxerror %lld us", us);
    if (s < 0)
        skip(r, "clock synchronisation state unknown");
    else if (s)
        say(r, TP_CHECK_PASS, "clock synchronised (%s, from %s)", err,
            sget(t, "source") ? sget(t, "source") : "?");
    else
        say(r, TP_CHECK_FAIL, "clock not synchronised (%s); want NTP or PTP sync", err);
}

static void net_iface_plane(const json_t *facts, const struct tp_policy *p,
                            struct tp_check_result *r)
{
    const json_t *ifs = get(facts, "interfaces");
    if (!json_is_array(ifs)) {
        skip(r, "no interface facts");
        return;
    }
    struct finding f = {0};
    size_t i;
    json_t *ifc;
    json_array_foreach(ifs, i, ifc) {
        if (loopback_iface(ifc) || !up_iface(ifc))
            continue;
        int pl = plane_of(p, ifc);
        const char *a = sget(json_array_get(json_object_get(ifc, "addresses"), 0), "address");
        if (pl < 0)
            bad(&f, TP_CHECK_WARN, "%s (up, %s) is in no plane", ifname(ifc), a ? a : "no address");
        else
            ok(&f, "%s: %s", ifname(ifc), pname(pl));
    }
    done(r, &f, "name each interface (pattern) or its subnet (CIDR) under a plane of the policy");
}

/* ---- rules: listeners ---- */

/* The listeners, when the facts also have the interfaces that place them
 * in planes; else NULL, with r skipped saying which part is missing. */
static const json_t *placed_listeners(const json_t *facts, struct tp_check_result *r)
{
    const json_t *ls = get(facts, "listeners");
    if (!json_is_array(ls)) {
        skip(r, "no listener facts");
        return NULL;
    }
    if (!json_is_array(get(facts, "interfaces"))) {
        skip(r, "no interface facts to place the listeners in planes");
        return NULL;
    }
    return ls;
}

static void sec_listen_plane(const json_t *facts, const struct tp_policy *p,
                             struct tp_check_result *r)
{
    const json_t *ls = placed_listeners(facts, r);
    if (!ls)
        return;
    struct finding f = {0};
    size_t i;
    json_t *l;
    json_array_foreach(ls, i, l) {
        const char *a = sget(l, "address");
        char d[256];
        if (a && loopback_addr(a))
            continue;
        describe(l, d, sizeof d);
        if (wildcard(l)) {
            unsigned mask = wildcard_planes(facts, p, sget(l, "family")), denied = 0;
            for (int pl = 0; pl < TP_PLANES; pl++)
                if ((mask & (1u << pl)) && !service(p, pl, l))
                    denied |= 1u << pl;
            char list[128];
            plane_list(denied ? denied : mask & ~NO_PLANE, list, sizeof list);
            if (denied)
                bad(&f, TP_CHECK_FAIL, "%s: wildcard, exposed on planes that do not allow it: %s",
                    d, list);
            else if (mask & ~NO_PLANE)
                ok(&f, "%s: allowed on %s", d, list);
            continue;
        }
        int pl = a ? addr_plane(facts, p, a) : -1;
        const struct tp_service *s = pl >= 0 ? service(p, pl, l) : NULL;
        if (pl < 0)
            bad(&f, TP_CHECK_FAIL, "%s: address in no plane", d);
        else if (!s)
            bad(&f, TP_CHECK_FAIL, "%s (%s plane): not a %s service", d, pname(pl), pname(pl));
        else
            ok(&f, "%s (%s plane): %s", d, pname(pl), s->name);
    }
    done(r, &f,
         "bind each service to an address of a plane that lists its port (a wildcard listener "
         "is exposed on every plane the node has addresses on)");
}

static void sec_listen_wildcard_control(const json_t *facts, const struct tp_policy *p,
                                        struct tp_check_result *r)
{
    const json_t *ls = get(facts, "listeners");
    const struct tp_policy_plane *cp = &p->planes[TP_PLANE_CONTROL];
    if (!json_is_array(ls)) {
        skip(r, "no listener facts");
        return;
    }
    if (!cp->present || cp->nservices == 0) {
        skip(r, "the policy lists no control-plane services");
        return;
    }
    struct finding f = {0};
    size_t i;
    json_t *l;
    json_array_foreach(ls, i, l) {
        const char *a = sget(l, "address");
        const struct tp_service *s = service(p, TP_PLANE_CONTROL, l);
        char d[256];
        if (!s || (a && loopback_addr(a)))
            continue;
        describe(l, d, sizeof d);
        if (wildcard(l))
            bad(&f, TP_CHECK_FAIL, "%s: control service %s on a wildcard address", d, s->name);
        else
            ok(&f, "%s: control service %s", d, s->name);
    }
    if (!f.good[0] && f.status == TP_CHECK_PASS)
        ok(&f, "no control-plane service is listening");
    done(r, &f, "bind control services to control-plane addresses");
}

static bool sshd(const json_t *l)
{
    const char *proc = sget(l, "process"), *proto = sget(l, "proto");
    long long port;
    return (proc && strcmp(proc, "sshd") == 0) ||
           (proto && strcmp(proto, "tcp") == 0 && iget(l, "port", &port) && port == 22);
}

static void sec_sshd_mgmt(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    const json_t *ls = placed_listeners(facts, r);
    if (!ls)
        return;
    struct finding f = {0};
    size_t i;
    json_t *l;
    json_array_foreach(ls, i, l) {
        const char *a = sget(l, "address");
        char d[256];
        if (!sshd(l) || (a && loopback_addr(a)))
            continue;
        describe(l, d, sizeof d);
        if (!p->planes[TP_PLANE_MGMT].present) {
            bad(&f, TP_CHECK_FAIL, "%s: the policy has no management plane", d);
        } else if (wildcard(l)) {
            unsigned other = wildcard_planes(facts, p, sget(l, "family")) & ~(1u << TP_PLANE_MGMT);
            char list[128];
            plane_list(other, list, sizeof list);
            if (other)
                bad(&f, TP_CHECK_FAIL, "%s: wildcard, reachable on %s", d, list);
            else
                bad(&f, TP_CHECK_WARN, "%s: wildcard (only management addresses today)", d);
        } else {
            int pl = addr_plane(facts, p, a ? a : "");
            if (pl == TP_PLANE_MGMT)
                ok(&f, "%s (management)", d);
            else
                bad(&f, TP_CHECK_FAIL, "%s (%s)", d, pl < 0 ? "no plane" : pname(pl));
        }
    }
    if (!f.good[0] && f.status == TP_CHECK_PASS)
        ok(&f, "no sshd listening outside loopback");
    done(r, &f, "sshd should listen only on management addresses (sshd_config ListenAddress)");
}

/* ---- rules: firewall ---- */

/* A match on the input interface that ifname satisfies. */
static bool iif_match(const json_t *m, const char *ifname)
{
    const char *op = sget(m, "op");
    const char *key = sget(json_object_get(json_object_get(m, "left"), "meta"), "key");
    if ((op && strcmp(op, "==") != 0 && strcmp(op, "in") != 0) || !key ||
        (strcmp(key, "iifname") != 0 && strcmp(key, "iif") != 0))
        return false;
    const json_t *right = json_object_get(m, "right");
    if (json_is_string(right))
        return fnmatch(json_string_value(right), ifname, 0) == 0;
    const json_t *set = json_object_get(right, "set");
    size_t i;
    json_t *e;
    json_array_foreach(set, i, e) {
        if (json_is_string(e) && fnmatch(json_string_value(e), ifname, 0) == 0)
            return true;
    }
    return false;
}

/* Whether a rule gives every packet that arrives on ifname the verdict
 * (accept, or drop/reject): its only conditions are input-interface
 * matches that ifname satisfies (ifname NULL: no condition at all). */
static bool catch_all(const json_t *rule, const char *ifname, bool accept)
{
    bool verdict = false;
    size_t i;
    json_t *e;
    const json_t *expr = json_object_get(rule, "expr");
    if (!json_is_array(expr))
        return false;
    json_array_foreach(expr, i, e) {
        const char *k = first_key(e);
        if (!k)
            return false;
        if (strcmp(k, "counter") == 0 || strcmp(k, "log") == 0)
            continue;
        if (strcmp(k, "match") == 0 && ifname && iif_match(json_object_get(e, "match"), ifname))
            continue;
        if (accept ? strcmp(k, "accept") == 0
                   : strcmp(k, "drop") == 0 || strcmp(k, "reject") == 0) {
            verdict = true;
            continue;
        }
        return false;
    }
    return verdict;
}

static bool same_chain(const json_t *rule, const json_t *chain)
{
    const char *k[] = {"family", "table"};
    for (int i = 0; i < 2; i++) {
        const char *a = sget(rule, k[i]), *b = sget(chain, k[i]);
        if (!a || !b || strcmp(a, b) != 0)
            return false;
    }
    const char *a = sget(rule, "chain"), *b = sget(chain, "chain");
    return a && b && strcmp(a, b) == 0;
}

/* The rule of chain that accepts everything on ifname, or NULL; with ifname
 * NULL, whether the chain's last rule drops everything (a default deny
 * written as a rule under policy accept). */
static const json_t *chain_rule(const json_t *ruleset, const json_t *chain, const char *ifname)
{
    const json_t *last = NULL;
    size_t i;
    json_t *item;
    json_array_foreach(ruleset, i, item) {
        const json_t *rule = json_object_get(item, "rule");
        if (!rule || !same_chain(rule, chain))
            continue;
        if (ifname && catch_all(rule, ifname, true))
            return rule;
        last = rule;
    }
    return !ifname && last && catch_all(last, NULL, false) ? last : NULL;
}

/* IPv4 (0) and IPv6 (1): does a chain of this family see them */
static bool covers(const json_t *chain, int fam)
{
    const char *f = sget(chain, "family");
    return f && (strcmp(f, "inet") == 0 || strcmp(f, fam ? "ip6" : "ip") == 0);
}

static void firewall(const json_t *facts, const struct tp_policy *p, int pl,
                     struct tp_check_result *r)
{
    const json_t *nft = get(facts, "nftables");
    if (!json_is_object(nft)) {
        skip(r, "no nftables facts (see missing)");
        return;
    }
    const json_t *ifs = plane_ifaces(facts, p, pl, r);
    if (!ifs)
        return;
    const json_t *chains = get(nft, "input_chains");
    const json_t *ruleset = get(get(nft, "ruleset"), "nftables");
    struct finding f = {0};
    if (json_array_size(chains) == 0) {
        say(r, TP_CHECK_FAIL, "no nftables input chain: all input accepted; want an input chain "
                              "with policy drop");
        return;
    }
    /* the chains that deny by default, and which families they see */
    bool deny[2] = {false, false}, denies[64] = {false};
    size_t i, k;
    json_t *c, *ifc, *a;
    json_array_foreach(chains, i, c) {
        const char *pol = sget(c, "policy");
        char d[160];
        snprintf(d, sizeof d, "%s %s %s", sget(c, "family"), sget(c, "table"), sget(c, "chain"));
        if ((pol && strcmp(pol, "drop") == 0) || chain_rule(ruleset, c, NULL)) {
            if (i < 64)
                denies[i] = true;
            deny[0] |= covers(c, 0);
            deny[1] |= covers(c, 1);
            ok(&f, "%s: policy %s", d, pol ? pol : "?");
        } else {
            /* noted without a verdict: harmless beside a default-deny chain,
             * the evidence of the FAIL when no chain denies */
            bad(&f, TP_CHECK_PASS, "%s: policy %s", d, pol ? pol : "?");
        }
    }
    if (!deny[0] && !deny[1]) {
        f.status = TP_CHECK_FAIL;
        done(r, &f, "want an input chain with policy drop");
        return;
    }
    f.bad[0] = '\0';
    /* each family the plane uses must be denied by default, and no
     * default-deny chain may accept everything from a plane interface */
    json_array_foreach(ifs, k, ifc) {
        if (plane_of(p, ifc) != pl)
            continue;
        bool uses[2] = {false, false};
        json_array_foreach(json_object_get(ifc, "addresses"), i, a) {
            const char *fam = sget(a, "family");
            if (fam)
                uses[strcmp(fam, "inet6") == 0] = true;
        }
        for (int fam = 0; fam < 2; fam++) {
            if (!uses[fam])
                continue;
            if (!deny[fam]) {
                bad(&f, TP_CHECK_FAIL, "%s (%s): %s input accepted by default", ifname(ifc),
                    pname(pl), fam ? "IPv6" : "IPv4");
                continue;
            }
            const json_t *open = NULL;
            bool all = true;
            json_array_foreach(chains, i, c) {
                if (i >= 64 || !denies[i] || !covers(c, fam))
                    continue;
                const json_t *rule = chain_rule(ruleset, c, ifname(ifc));
                all &= rule != NULL;
                open = rule ? rule : open;
            }
            if (all && open)
                bad(&f, TP_CHECK_FAIL, "%s (%s): %s %s %s accepts all %s input on it",
                    ifname(ifc), pname(pl), sget(open, "family"), sget(open, "table"),
                    sget(open, "chain"), fam ? "IPv6" : "IPv4");
        }
    }
    done(r, &f, "want default-deny input (policy drop) that admits only the plane's services");
}

static void sec_fw_mgmt(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    firewall(facts, p, TP_PLANE_MGMT, r);
}

static void sec_fw_control(const json_t *facts, const struct tp_policy *p,
                           struct tp_check_result *r)
{
    firewall(facts, p, TP_PLANE_CONTROL, r);
}

/* ---- rules: sysctls ---- */

/* The effective value of a per-interface IPv4 setting where the kernel
 * takes the max of all and the interface (rp_filter, arp_ignore,
 * arp_announce); the text says "1 (all 0, eth2 1)". False when neither is
 * known. */
static bool effective(const json_t *facts, const char *dev, const char *key, long long *v,
                      char *text, size_t n)
{
    long long all, one;
    bool ha = sysctl_conf(facts, "ipv4", "all", key, &all);
    bool ho = sysctl_conf(facts, "ipv4", dev, key, &one);
    if (!ha && !ho)
        return false;
    *v = ha && ho ? (all > one ? all : one) : ha ? all : one;
    char sa[24] = "?", so[24] = "?";
    if (ha)
        snprintf(sa, sizeof sa, "%lld", all);
    if (ho)
        snprintf(so, sizeof so, "%lld", one);
    snprintf(text, n, "%s %lld (all %s, %s %s)", key, *v, sa, dev, so);
    return true;
}

static bool rpf_strict(long long v)
{
    return v == 1;
}

static bool rpf_rdma(long long v)
{
    return v == 0 || v == 2;
}

static bool rdma_iface(const struct tp_policy *p, const json_t *ifc)
{
    return p->planes[TP_PLANE_DATA].rdma || get(ifc, "rdma_device");
}

static void rpf(const json_t *facts, const struct tp_policy *p, int pl, bool (*good)(long long),
                const char *want, struct tp_check_result *r)
{
    if (!get(facts, "sysctl")) {
        skip(r, "no sysctl facts");
        return;
    }
    const json_t *ifs = plane_ifaces(facts, p, pl, r);
    if (!ifs)
        return;
    struct finding f = {0};
    size_t i;
    json_t *ifc;
    json_array_foreach(ifs, i, ifc) {
        long long v;
        char text[160];
        if (plane_of(p, ifc) != pl || (pl == TP_PLANE_DATA && !rdma_iface(p, ifc)))
            continue;
        if (!effective(facts, ifname(ifc), "rp_filter", &v, text, sizeof text))
            bad(&f, TP_CHECK_WARN, "%s (%s): rp_filter unknown", ifname(ifc), pname(pl));
        else if (good(v))
            ok(&f, "%s (%s): %s", ifname(ifc), pname(pl), text);
        else
            bad(&f, TP_CHECK_FAIL, "%s (%s): %s", ifname(ifc), pname(pl), text);
    }
    if (!f.good[0] && !f.bad[0]) {
        skip(r, "no RDMA interface in the %s plane", pname(pl));
        return;
    }
    done(r, &f, want);
}

static void net_rpf_mgmt(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    rpf(facts, p, TP_PLANE_MGMT, rpf_strict, "management interfaces need 1 (strict)", r);
}

static void net_rpf_data(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    rpf(facts, p, TP_PLANE_DATA, rpf_rdma, "RDMA interfaces need 0 or 2", r);
}

struct subnet {
    const json_t *ifc;
    uint8_t net[4];
    long long prefix;
    bool shared;
};

static void net_arp_data(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    if (!get(facts, "sysctl")) {
        skip(r, "no sysctl facts");
        return;
    }
    const json_t *ifs = plane_ifaces(facts, p, TP_PLANE_DATA, r);
    if (!ifs)
        return;
    struct subnet s[64];
    int n = 0;
    size_t i, j;
    json_t *ifc, *a;
    json_array_foreach(ifs, i, ifc) {
        if (plane_of(p, ifc) != TP_PLANE_DATA)
            continue;
        json_array_foreach(json_object_get(ifc, "addresses"), j, a) {
            const char *addr = sget(a, "address");
            long long pre;
            uint8_t x[4];
            if (n == 64 || !addr || !iget(a, "prefix", &pre) || pre < 0 || pre > 32 ||
                inet_pton(AF_INET, addr, x) != 1)
                continue;
            uint32_t mask = pre == 0 ? 0 : 0xffffffffu << (32 - pre);
            for (int b = 0; b < 4; b++)
                s[n].net[b] = (uint8_t)(x[b] & (mask >> (24 - 8 * b)));
            s[n].ifc = ifc;
            s[n].prefix = pre;
            s[n].shared = false;
            n++;
        }
    }
    for (int x = 0; x < n; x++)
        for (int y = 0; y < n; y++)
            if (s[x].ifc != s[y].ifc && s[x].prefix == s[y].prefix &&
                memcmp(s[x].net, s[y].net, 4) == 0)
                s[x].shared = true;
    struct finding f = {0};
    int shared = 0;
    for (int x = 0; x < n; x++) {
        if (!s[x].shared)
            continue;
        shared++;
        const char *dev = ifname(s[x].ifc);
        char net[INET_ADDRSTRLEN], ti[160], ta[160];
        long long ig, an;
        inet_ntop(AF_INET, s[x].net, net, sizeof net);
        bool hi = effective(facts, dev, "arp_ignore", &ig, ti, sizeof ti);
        bool ha = effective(facts, dev, "arp_announce", &an, ta, sizeof ta);
        if (!hi || !ha)
            bad(&f, TP_CHECK_WARN, "%s (data, %s/%lld): arp_ignore or arp_announce unknown", dev,
                net, s[x].prefix);
        else if ((ig == 1 || ig == 2) && an == 2)
            ok(&f, "%s (data, %s/%lld): %s, %s", dev, net, s[x].prefix, ti, ta);
        else
            bad(&f, TP_CHECK_FAIL, "%s (data, %s/%lld shared): %s, %s", dev, net, s[x].prefix, ti,
                ta);
    }
    if (!shared) {
        skip(r, "no two data-plane interfaces share an IPv4 subnet");
        return;
    }
    done(r, &f, "ports sharing a subnet need arp_ignore 1 and arp_announce 2");
}

static void net_ipfwd(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    long long v4, v6;
    if (!sysctl(facts, "net.ipv4.ip_forward", &v4)) {
        skip(r, "net.ipv4.ip_forward not in the facts");
        return;
    }
    bool has6 = sysctl(facts, "net.ipv6.conf.all.forwarding", &v6);
    if (p->role == TP_ROLE_KUBERNETES) {
        say(r, TP_CHECK_PASS, "net.ipv4.ip_forward %lld: role kubernetes routes pod traffic", v4);
        return;
    }
    struct finding f = {0};
    if (v4)
        bad(&f, TP_CHECK_FAIL, "net.ipv4.ip_forward %lld", v4);
    else
        ok(&f, "net.ipv4.ip_forward 0");
    if (has6 && v6)
        bad(&f, TP_CHECK_FAIL, "net.ipv6.conf.all.forwarding %lld", v6);
    else if (has6)
        ok(&f, "net.ipv6.conf.all.forwarding 0");
    char w[96];
    snprintf(w, sizeof w, "want 0 on a %s node (only kubernetes nodes route)",
             tp_role_name(p->role));
    done(r, &f, w);
}

/* Setting key must be 0 under all, default and every plane interface
 * (IPv4), and the IPv6 names in v6 must be 0 too. */
static void conf_zero(const json_t *facts, const struct tp_policy *p, const char *key,
                      const char *v6, struct tp_check_result *r)
{
    if (!get(facts, "sysctl")) {
        skip(r, "no sysctl facts");
        return;
    }
    struct finding f = {0};
    const char *devs[2 + 128];
    int n = 0;
    devs[n++] = "all";
    devs[n++] = "default";
    size_t i;
    json_t *ifc;
    json_array_foreach(get(facts, "interfaces"), i, ifc) {
        if (n < 130 && plane_of(p, ifc) >= 0)
            devs[n++] = ifname(ifc);
    }
    int seen = 0;
    for (int k = 0; k < n; k++) {
        long long v;
        if (!sysctl_conf(facts, "ipv4", devs[k], key, &v)) {
            if (k < 2)
                continue;
            bad(&f, TP_CHECK_WARN, "net.ipv4.conf.%s.%s unknown", devs[k], key);
            continue;
        }
        seen++;
        if (v)
            bad(&f, TP_CHECK_FAIL, "net.ipv4.conf.%s.%s %lld", devs[k], key, v);
        else
            ok(&f, "net.ipv4.conf.%s.%s 0", devs[k], key);
    }
    long long v;
    if (v6 && sysctl(facts, v6, &v)) {
        seen++;
        if (v)
            bad(&f, TP_CHECK_FAIL, "%s %lld", v6, v);
        else
            ok(&f, "%s 0", v6);
    }
    if (!seen) {
        skip(r, "no %s sysctls in the facts", key);
        return;
    }
    char w[64];
    snprintf(w, sizeof w, "want %s 0", key);
    done(r, &f, w);
}

static void net_redirects(const json_t *facts, const struct tp_policy *p,
                          struct tp_check_result *r)
{
    conf_zero(facts, p, "accept_redirects", "net.ipv6.conf.all.accept_redirects", r);
}

static void net_send_redirects(const json_t *facts, const struct tp_policy *p,
                               struct tp_check_result *r)
{
    conf_zero(facts, p, "send_redirects", NULL, r);
}

static void net_source_route(const json_t *facts, const struct tp_policy *p,
                             struct tp_check_result *r)
{
    conf_zero(facts, p, "accept_source_route", "net.ipv6.conf.all.accept_source_route", r);
}

/* A kernel sysctl within [lo, hi]. */
static void kern_range(const json_t *facts, const char *name, long long lo, long long hi,
                       struct tp_check_result *r)
{
    long long v;
    if (!sysctl(facts, name, &v))
        skip(r, "%s not in the facts", name);
    else if (v >= lo && v <= hi)
        say(r, TP_CHECK_PASS, "%s %lld", name, v);
    else if (lo == hi)
        say(r, TP_CHECK_FAIL, "%s %lld; want %lld", name, v, lo);
    else
        say(r, TP_CHECK_FAIL, "%s %lld; want >= %lld", name, v, lo);
}

static void kern_kptr(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    (void)p;
    kern_range(facts, "kernel.kptr_restrict", 1, 2, r);
}

static void kern_dmesg(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    (void)p;
    kern_range(facts, "kernel.dmesg_restrict", 1, 1, r);
}

static void kern_bpf(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    (void)p;
    kern_range(facts, "kernel.unprivileged_bpf_disabled", 1, 2, r);
}

static void kern_ptrace(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    (void)p;
    kern_range(facts, "kernel.yama.ptrace_scope", 1, 3, r);
}

/* ---- rules: NVMe-oF target and host ---- */

static const json_t *nvmet(const json_t *facts, const char *what, struct tp_check_result *r)
{
    const json_t *t = get(facts, "nvmet");
    if (!json_is_object(t)) {
        skip(r, "no nvmet facts (no NVMe-oF target configured)");
        return NULL;
    }
    if (json_array_size(get(t, what)) == 0) {
        skip(r, "no nvmet %s", what);
        return NULL;
    }
    return t;
}

static void nvmet_any_host(const json_t *facts, const struct tp_policy *p,
                           struct tp_check_result *r)
{
    (void)p;
    const json_t *t = nvmet(facts, "subsystems", r);
    if (!t)
        return;
    struct finding f = {0};
    size_t i;
    json_t *s;
    json_array_foreach(get(t, "subsystems"), i, s) {
        const char *nqn = sget(s, "nqn") ? sget(s, "nqn") : "?";
        int any = bget(s, "allow_any_host");
        size_t nh = json_array_size(json_object_get(s, "allowed_hosts"));
        if (any == 1)
            bad(&f, TP_CHECK_FAIL, "%s: allow_any_host 1", nqn);
        else if (nh == 0)
            bad(&f, TP_CHECK_FAIL, "%s: no allowed_hosts", nqn);
        else if (any < 0)
            bad(&f, TP_CHECK_WARN, "%s: allow_any_host unknown", nqn);
        else
            ok(&f, "%s: allow_any_host 0, %zu allowed hosts", nqn, nh);
    }
    done(r, &f, "want allow_any_host 0 and an allowed_hosts list on every subsystem");
}

static const json_t *nvmet_host(const json_t *t, const char *nqn)
{
    size_t i;
    json_t *h;
    json_array_foreach(get(t, "hosts"), i, h) {
        const char *n = sget(h, "nqn");
        if (n && strcmp(n, nqn) == 0)
            return h;
    }
    return NULL;
}

static void nvmet_dhchap(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    (void)p;
    const json_t *t = nvmet(facts, "subsystems", r);
    if (!t)
        return;
    struct finding f = {0};
    size_t i, j;
    json_t *s, *h;
    json_array_foreach(get(t, "subsystems"), i, s) {
        json_array_foreach(json_object_get(s, "allowed_hosts"), j, h) {
            const char *nqn = json_string_value(h);
            if (!nqn)
                continue;
            const json_t *host = nvmet_host(t, nqn);
            int key = bget(host, "dhchap_key"), ctrl = bget(host, "dhchap_ctrl_key");
            if (key == 1 && ctrl == 1)
                ok(&f, "%s: dhchap_key and dhchap_ctrl_key", nqn);
            else
                bad(&f, TP_CHECK_FAIL, "%s: %s%s", nqn, key == 1 ? "" : "no dhchap_key",
                    ctrl == 1 ? "" : key == 1 ? "no dhchap_ctrl_key" : ", no dhchap_ctrl_key");
        }
    }
    if (!f.good[0] && !f.bad[0]) {
        skip(r, "no allowed hosts in any nvmet subsystem");
        return;
    }
    done(r, &f, "every allowed host needs dhchap_key and dhchap_ctrl_key (bidirectional)");
}

static void nvmet_tls(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    (void)p;
    const json_t *t = nvmet(facts, "ports", r);
    if (!t)
        return;
    struct finding f = {0};
    size_t i;
    json_t *port;
    json_array_foreach(get(t, "ports"), i, port) {
        const char *tr = sget(port, "trtype"), *tsas = sget(port, "tsas");
        const char *treq = sget(port, "treq");
        if (!tr || strcmp(tr, "tcp") != 0)
            continue;
        char d[160];
        snprintf(d, sizeof d, "port %s (tcp %s:%s)", sget(port, "id"), sget(port, "traddr"),
                 sget(port, "trsvcid"));
        if (tsas && strcmp(tsas, "tls1.3") == 0 && treq && strcmp(treq, "required") == 0)
            ok(&f, "%s: tsas tls1.3, treq required", d);
        else
            bad(&f, TP_CHECK_FAIL, "%s: tsas %s, treq %s", d, tsas ? tsas : "unknown",
                treq ? treq : "unknown");
    }
    if (!f.good[0] && !f.bad[0]) {
        skip(r, "no NVMe/TCP target ports");
        return;
    }
    done(r, &f, "want tsas tls1.3 and treq required on NVMe/TCP ports");
}

static void nvmeof_host_dhchap(const json_t *facts, const struct tp_policy *p,
                               struct tp_check_result *r)
{
    (void)p;
    const json_t *hosts = nvme_hosts(facts, NULL, r);
    if (!hosts)
        return;
    struct finding f = {0};
    size_t i;
    json_t *c;
    json_array_foreach(hosts, i, c) {
        char name[256];
        if (!nvme_wanted(c, NULL))
            continue;
        ctrl_name(c, name, sizeof name);
        int s = bget(c, "dhchap_secret"), cs = bget(c, "dhchap_ctrl_secret");
        if (s == 0 || cs == 0)
            bad(&f, TP_CHECK_FAIL, "%s: dhchap_secret %s, dhchap_ctrl_secret %s", name,
                s ? s > 0 ? "set" : "unknown" : "none", cs ? cs > 0 ? "set" : "unknown" : "none");
        else if (s < 0 || cs < 0)
            bad(&f, TP_CHECK_WARN, "%s: DH-HMAC-CHAP secrets unknown", name);
        else
            ok(&f, "%s: dhchap_secret and dhchap_ctrl_secret set", name);
    }
    done(r, &f, "connect with --dhchap-secret and --dhchap-ctrl-secret (bidirectional)");
}

static void nvmeof_host_tls(const json_t *facts, const struct tp_policy *p,
                            struct tp_check_result *r)
{
    (void)p;
    const json_t *hosts = nvme_hosts(facts, "tcp", r);
    if (!hosts)
        return;
    struct finding f = {0};
    size_t i;
    json_t *c;
    json_array_foreach(hosts, i, c) {
        char name[256];
        if (!nvme_wanted(c, "tcp"))
            continue;
        ctrl_name(c, name, sizeof name);
        int k = bget(c, "tls_key");
        if (k == 1)
            ok(&f, "%s: tls_key set", name);
        else if (k == 0)
            bad(&f, TP_CHECK_FAIL, "%s: no tls_key", name);
        else
            bad(&f, TP_CHECK_WARN, "%s: tls_key unknown", name);
    }
    done(r, &f, "connect NVMe/TCP with --tls and a configured PSK");
}

/* ---- rules: tenants and results ---- */

static void rdma_netns(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    size_t ndev = rdma_devices(facts);
    const char *mode = sget(get(facts, "rdma"), "netns_mode");
    if (ndev == 0)
        skip(r, "no RDMA devices");
    else if (!p->multi_tenant)
        say(r, TP_CHECK_PASS, "single tenant (policy): netns mode %s is fine",
            mode ? mode : "unknown");
    else if (!mode)
        say(r, TP_CHECK_WARN, "multi-tenant policy and RDMA netns mode unknown; want exclusive");
    else if (strcmp(mode, "exclusive") == 0)
        say(r, TP_CHECK_PASS, "RDMA netns mode exclusive, %zu devices, multi-tenant policy", ndev);
    else
        say(r, TP_CHECK_FAIL,
            "RDMA netns mode %s: every network namespace sees all %zu RDMA devices; want "
            "exclusive on a multi-tenant node",
            mode, ndev);
}

static void sec_results_secrets(const json_t *facts, const struct tp_policy *p,
                                struct tp_check_result *r)
{
    (void)p;
    const json_t *s = get(facts, "secrets");
    if (!json_is_array(s)) {
        skip(r, "no results folders were scanned");
        return;
    }
    struct finding f = {0};
    size_t i;
    json_t *e;
    json_array_foreach(s, i, e) {
        bad(&f, TP_CHECK_FAIL, "%s/%s: %s", sget(e, "dir"), sget(e, "file"),
            sget(e, "kind") ? sget(e, "kind") : "secret");
    }
    if (json_array_size(s) == 0)
        ok(&f, "no secrets in the results folders");
    done(r, &f, "move keys out of results folders and rotate them");
}

/* ---- the table ---- */

#define CIS "CIS Debian Linux 12 Benchmark, "
#define SYSCTL_DOC "Linux Documentation/networking/ip-sysctl.rst"
#define KERNEL_DOC "Linux Documentation/admin-guide/sysctl/kernel.rst"

const struct tp_check_rule tp_check_rules[] = {
    {"NET-MTU-DATA", "data", TP_SEV_CRITICAL, "Data-plane interfaces have jumbo frames",
     "The RoCE path MTU is the largest IB MTU (256..4096) that fits the netdev MTU: at 1500 a "
     "RoCE port sends 1024-byte packets, four times the packets and interrupts for a gradient "
     "allreduce, and a port below the fabric MTU black-holes large frames.",
     "Set the MTU of every data-plane port (and its VLAN parent) to the fabric MTU, e.g. "
     "`ip link set dev eth2 mtu 9000`, and persist it in the network configuration.",
     "NVIDIA MLNX_OFED documentation, RoCE: 'RoCE MTU' (active MTU follows the netdev MTU)",
     net_mtu_data},
    {"NET-MTU-STORAGE", "storage", TP_SEV_WARNING, "Storage-plane interfaces have jumbo frames",
     "NVMe/TCP and NFS move checkpoint shards of hundreds of MiB; at 1500 bytes the CPU cost "
     "per byte and the commit latency of a checkpoint rise.",
     "Set the MTU of every storage-plane port to the fabric MTU (`ip link set dev eth4 mtu "
     "9000`) end to end, targets included.",
     "NVIDIA 'Performance Tuning for Mellanox Adapters' (jumbo frames); " SYSCTL_DOC,
     net_mtu_storage},
    {"NET-SPEED-DATA", "data", TP_SEV_WARNING, "Data-plane ports run at one speed",
     "A ring or tree collective runs at the speed of its slowest link: one port negotiated "
     "down (a bad cable, a 200G optic in a 400G rail) slows every rank of the job.",
     "Find the slow port (`ethtool eth3`, `ibstat`), reseat or replace the cable or optic, "
     "and check the switch port's speed setting.",
     "NCCL User Guide, Troubleshooting; NVIDIA DGX SuperPOD Reference Architecture "
     "(rail-optimized compute fabric)",
     net_speed_data},
    {"NUMA-NIC-GPU", "data", TP_SEV_WARNING, "Each data-plane NIC shares a NUMA node with a GPU",
     "GPUDirect RDMA moves data between the NIC and GPU memory over PCIe; a NIC on another "
     "socket sends it across the inter-socket link, or NCCL stages it through host memory, "
     "cutting bandwidth.",
     "Place RDMA NICs and GPUs under the same PCIe switch or root complex (see `nvidia-smi "
     "topo -m`), or select per-GPU NICs with NCCL_IB_HCA.",
     "NVIDIA GPUDirect RDMA documentation, 'Supported Systems'; NCCL User Guide, "
     "NCCL_NET_GDR_LEVEL",
     numa_nic_gpu},
    {"GPU-PEERMEM", "data", TP_SEV_WARNING,
     "RDMA NICs can reach GPU memory (nvidia_peermem)",
     "GPUDirect RDMA lets the NIC read and write GPU memory; it needs the peer-memory module "
     "(nvidia_peermem, formerly nv_peer_mem) so the RDMA stack can register GPU pages. "
     "Without it NCCL, and libfabric's FI_HMEM, copy every transfer through host memory: "
     "more PCIe traffic, lower busbw, more CPU.",
     "`modprobe nvidia_peermem` and load it at boot (/etc/modules-load.d/); or, with the "
     "open GPU kernel modules on a 5.12+ kernel, let NCCL use DMA-BUF (NCCL_DMABUF_ENABLE=1, "
     "the default where supported). Confirm with NCCL_DEBUG=INFO ('GPU Direct RDMA Enabled').",
     "NVIDIA GPUDirect RDMA documentation ('Using nvidia-peermem'); NCCL User Guide, "
     "NCCL_NET_GDR_LEVEL and NCCL_DMABUF_ENABLE",
     gpu_peermem},
    {"CPU-GOVERNOR", "node", TP_SEV_WARNING, "CPUs run the performance governor",
     "Frequency scaling adds wake-up latency to the proxy threads that drive NCCL and to "
     "the data loader; synchronous steps wait for the slowest rank, so it shows up as step "
     "time jitter.",
     "`cpupower frequency-set -g performance` (persist with the tuned or cpupower service); "
     "set the BIOS power profile to maximum performance.",
     "Linux Documentation/admin-guide/pm/cpufreq.rst; NVIDIA 'Performance Tuning for "
     "Mellanox Adapters' (power management)",
     cpu_governor},
    {"MEM-THP", "node", TP_SEV_WARNING, "Transparent hugepages are not 'always'",
     "With THP 'always', khugepaged compaction and page faults stall at random, adding "
     "millisecond jitter to training steps; 'madvise' leaves huge pages to the allocators that "
     "ask for them.",
     "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled (persist with "
     "transparent_hugepage=madvise on the kernel command line).",
     "Linux Documentation/admin-guide/mm/transhuge.rst", mem_thp},
    {"MEM-HUGEPAGES-RDMA", "node", TP_SEV_WARNING, "Hugepages are reserved on RDMA hosts",
     "Registering buffers backed by huge pages needs fewer NIC translation entries and "
     "registers faster; without a reserve, large registrations thrash the NIC's translation "
     "cache.",
     "Reserve hugepages (vm.nr_hugepages or hugepages= on the kernel command line) sized "
     "for the registered buffers.",
     "Linux Documentation/admin-guide/mm/hugetlbpage.rst; perftest README (--use_hugepages)",
     mem_hugepages_rdma},
    {"IOMMU-PT", "node", TP_SEV_WARNING, "IOMMU in passthrough for GPUDirect RDMA",
     "GPUDirect RDMA needs peer-to-peer PCIe between NIC and GPU; with a translating IOMMU "
     "peer traffic is redirected to the root complex or fails, and NCCL falls back to host "
     "memory.",
     "Boot with iommu=pt (intel_iommu=on iommu=pt or amd_iommu=on iommu=pt), and disable "
     "PCIe ACS on the switches between NICs and GPUs.",
     "NCCL User Guide, Troubleshooting: 'PCI Access Control Services (ACS)' and IOMMU; "
     "NVIDIA GPUDirect RDMA documentation",
     iommu_pt},
    {"RDMA-PORT-ACTIVE", "data", TP_SEV_CRITICAL, "Data-plane RDMA ports are ACTIVE",
     "A down or initialising RDMA port removes a rail: NCCL fails to start on the HCA, or "
     "runs the job over fewer rails.",
     "Check the link (`rdma link show`, `ibstat`), the cable and the switch port; on "
     "InfiniBand, that a subnet manager runs.",
     "rdma(8) 'rdma link show'; ibstat(8)", rdma_port_active},
    {"NVMEOF-CTRL-LOSS", "storage", TP_SEV_WARNING, "NVMe-oF controllers survive a path outage",
     "A controller that gives up after a short outage fails in-flight checkpoint writes with "
     "EIO; the job dies instead of waiting for the path to come back.",
     "Connect with --ctrl-loss-tmo=-1 or >= 60 (nvme connect, or /etc/nvme/config).",
     "nvme-connect(1), --ctrl-loss-tmo (default 600 s)", nvmeof_ctrl_loss},
    {"NVMEOF-MULTIPATH", "storage", TP_SEV_WARNING, "Native NVMe multipath is on",
     "Without native multipath each path is a separate namespace device: a path failure is "
     "an I/O error, and ANA path states are ignored.",
     "Load nvme_core with multipath=Y (kernel command line nvme_core.multipath=Y).",
     "Linux nvme_core module parameter multipath (drivers/nvme/host/multipath.c); NVM Express "
     "Base Specification, Asymmetric Namespace Access",
     nvmeof_multipath},
    {"TIME-SYNC", "node", TP_SEV_CRITICAL, "The clock is synchronised",
     "Checkpoints, logs and traces from many nodes are ordered by time; a free-running clock "
     "misorders them, and authentication with time windows (Kerberos, TLS) fails.",
     "Run chrony (or ptp4l/phc2sys on PTP fabrics) against the cluster's time servers.",
     CIS "'Configure time synchronization'; adjtimex(2) (STA_UNSYNC, maxerror)", time_sync},
    {"NET-IFACE-PLANE", "node", TP_SEV_WARNING, "Every up interface belongs to a plane",
     "An interface outside the plane policy carries traffic no rule checks: a forgotten "
     "bridge or test port can join planes meant to be separate.",
     "Add the interface (fnmatch pattern) or its subnet (CIDR) to a plane of the policy, or "
     "bring it down.",
     "NVIDIA DGX SuperPOD Reference Architecture (separate compute, storage, in-band and "
     "out-of-band management networks)",
     net_iface_plane},
    {"SEC-LISTEN-PLANE", "node", TP_SEV_CRITICAL,
     "Every listener is on a plane that allows its port",
     "A service reachable from the data or storage plane is reachable from every tenant "
     "workload on the fabric; least privilege means each port is exposed only on the plane "
     "that needs it.",
     "Bind the service to an address of its plane (not 0.0.0.0 or ::) or add it to that "
     "plane's services in the policy; stop services nobody needs.",
     CIS "'Ensure only approved services are listening on a network interface'",
     sec_listen_plane},
    {"SEC-LISTEN-WILDCARD-CONTROL", "control", TP_SEV_WARNING,
     "Control-plane services are not bound to a wildcard address",
     "slurmd, kubelet or etcd on 0.0.0.0 becomes reachable on every interface added later, "
     "the data plane included, without anyone changing their configuration.",
     "Bind each control service to the node's control-plane address (slurm.conf "
     "CommunicationParameters, kubelet --address, etcd --listen-client-urls).",
     CIS "'Ensure only approved services are listening on a network interface'",
     sec_listen_wildcard_control},
    {"SEC-SSHD-MGMT", "management", TP_SEV_CRITICAL, "sshd listens only on management addresses",
     "An sshd reachable from the data plane lets any compromised workload try keys and "
     "passwords against every node over the fastest network in the cluster.",
     "Set ListenAddress to the management address in sshd_config and restart sshd.",
     "sshd_config(5) ListenAddress; " CIS "'Configure SSH Server'", sec_sshd_mgmt},
    {"SEC-FW-MGMT", "management", TP_SEV_CRITICAL, "Management input is default-deny",
     "The management plane carries logins and BMC-adjacent services; a default-accept input "
     "chain exposes every service that starts, now or later.",
     "Add an nftables input chain with policy drop that accepts only the management "
     "services (ssh, monitoring) on the management interfaces.",
     CIS "'Ensure nftables default deny firewall policy'; nft(8)", sec_fw_mgmt},
    {"SEC-FW-CONTROL", "control", TP_SEV_CRITICAL, "Control-plane input is default-deny",
     "Schedulers and orchestration (slurmctld, kube-apiserver, etcd) hold the keys to every "
     "node; only their ports should be open on the control plane.",
     "Add an nftables input chain with policy drop that accepts only the control services "
     "listed in the policy on the control-plane interfaces.",
     CIS "'Ensure nftables default deny firewall policy'; nft(8)", sec_fw_control},
    {"NET-RPF-MGMT", "management", TP_SEV_WARNING, "Strict reverse-path filtering on management",
     "Strict rp_filter drops spoofed sources on the plane that reaches the outside world; "
     "management has one path, so strict costs nothing there.",
     "sysctl -w net.ipv4.conf.<iface>.rp_filter=1 (and all) in /etc/sysctl.d.",
     SYSCTL_DOC " (rp_filter); " CIS "'Ensure reverse path filtering is enabled'",
     net_rpf_mgmt},
    {"NET-RPF-DATA", "data", TP_SEV_CRITICAL, "RDMA interfaces use loose or no rp_filter",
     "With several RoCE ports in one subnet, replies may arrive on a port other than the one "
     "the route picks; strict rp_filter (1) drops them, so RDMA CM address resolution and "
     "connections fail or hang.",
     "sysctl -w net.ipv4.conf.<iface>.rp_filter=2 on RDMA ports; the kernel uses the max of "
     "all and the interface, so net.ipv4.conf.all.rp_filter must not be 1.",
     SYSCTL_DOC " (rp_filter); NVIDIA MLNX_OFED documentation, RoCE multiple interfaces in "
     "the same subnet",
     net_rpf_data},
    {"NET-ARP-DATA", "data", TP_SEV_WARNING, "ARP stays on the port that owns the address",
     "When several RDMA ports share a subnet, Linux answers ARP for any local address on "
     "any port (ARP flux); RoCE traffic then lands on the wrong port and its QPs stall. "
     "arp_ignore 1 and arp_announce 2 keep each reply on the port that owns the address.",
     "sysctl -w net.ipv4.conf.<iface>.arp_ignore=1 net.ipv4.conf.<iface>.arp_announce=2 on "
     "the data-plane ports, plus source routing rules per port.",
     SYSCTL_DOC " (arp_ignore, arp_announce); NVIDIA MLNX_OFED documentation, RoCE multiple "
     "interfaces in the same subnet",
     net_arp_data},
    {"NET-IPFWD", "node", TP_SEV_WARNING, "IP forwarding off unless the node routes pods",
     "A forwarding node can route between planes meant to be separate, e.g. from the data "
     "plane into management; only Kubernetes nodes need it, for pod traffic.",
     "sysctl -w net.ipv4.ip_forward=0 net.ipv6.conf.all.forwarding=0 in /etc/sysctl.d, or "
     "set role: kubernetes in the policy.",
     CIS "'Ensure ip forwarding is disabled'; " SYSCTL_DOC, net_ipfwd},
    {"NET-REDIRECTS", "node", TP_SEV_WARNING, "ICMP redirects are not accepted",
     "An accepted redirect rewrites the route to a peer: one forged ICMP packet moves storage "
     "or control traffic onto another host.",
     "sysctl -w net.ipv4.conf.{all,default,<iface>}.accept_redirects=0 "
     "net.ipv6.conf.all.accept_redirects=0.",
     CIS "'Ensure icmp redirects are not accepted'; " SYSCTL_DOC, net_redirects},
    {"NET-SEND-REDIRECTS", "node", TP_SEV_WARNING, "ICMP redirects are not sent",
     "A node is not a router; redirects it sends tell peers to take paths between planes.",
     "sysctl -w net.ipv4.conf.{all,default,<iface>}.send_redirects=0.",
     CIS "'Ensure packet redirect sending is disabled'; " SYSCTL_DOC, net_send_redirects},
    {"NET-SOURCE-ROUTE", "node", TP_SEV_WARNING, "Source-routed packets are not accepted",
     "Source routing lets a sender pick the path through the node, around the plane "
     "separation and firewalls.",
     "sysctl -w net.ipv4.conf.{all,default,<iface>}.accept_source_route=0 "
     "net.ipv6.conf.all.accept_source_route=0.",
     CIS "'Ensure source routed packets are not accepted'; " SYSCTL_DOC, net_source_route},
    {"KERN-KPTR", "node", TP_SEV_WARNING, "Kernel pointers are hidden",
     "Kernel addresses in /proc defeat KASLR for any local user; on shared GPU nodes users "
     "run arbitrary code.",
     "sysctl -w kernel.kptr_restrict=1 (or 2) in /etc/sysctl.d.",
     KERNEL_DOC " (kptr_restrict); Lynis KRNL-6000", kern_kptr},
    {"KERN-DMESG", "node", TP_SEV_WARNING, "dmesg is restricted",
     "The kernel log holds addresses and driver state (GPU Xid, NIC errors) that help an "
     "attacker; operators read it as root.",
     "sysctl -w kernel.dmesg_restrict=1 in /etc/sysctl.d.",
     KERNEL_DOC " (dmesg_restrict); Lynis KRNL-6000", kern_dmesg},
    {"KERN-BPF", "node", TP_SEV_WARNING, "Unprivileged BPF is disabled",
     "Unprivileged BPF has been the way in for verifier bugs and Spectre gadgets; training "
     "jobs do not need it.",
     "sysctl -w kernel.unprivileged_bpf_disabled=1 (2 lets root re-enable it) in "
     "/etc/sysctl.d.",
     KERNEL_DOC " (unprivileged_bpf_disabled); Lynis KRNL-6000", kern_bpf},
    {"KERN-PTRACE", "node", TP_SEV_WARNING, "ptrace is restricted",
     "With ptrace_scope 0 any process can attach to another of the same user and read its "
     "memory, keys and tokens included.",
     "sysctl -w kernel.yama.ptrace_scope=1 in /etc/sysctl.d (debuggers still work on "
     "children, and with CAP_SYS_PTRACE).",
     "Linux Documentation/admin-guide/LSM/Yama.rst; " CIS "'Ensure ptrace_scope is "
     "restricted'",
     kern_ptrace},
    {"NVMET-ANY-HOST", "storage", TP_SEV_CRITICAL, "nvmet subsystems admit only listed hosts",
     "A subsystem with allow_any_host lets any host on the storage fabric connect and read "
     "or overwrite datasets and checkpoints.",
     "echo 0 > subsystems/<nqn>/attr_allow_any_host and link each host under "
     "subsystems/<nqn>/allowed_hosts.",
     "Linux nvmet configfs (drivers/nvme/target/configfs.c): attr_allow_any_host, "
     "allowed_hosts",
     nvmet_any_host},
    {"NVMET-DHCHAP", "storage", TP_SEV_CRITICAL, "Allowed hosts authenticate both ways",
     "A host NQN is only a name any initiator can claim; DH-HMAC-CHAP proves the host, and "
     "the controller key proves the target to the host.",
     "Set hosts/<nqn>/dhchap_key and dhchap_ctrl_key (nvme gen-dhchap-key) for every "
     "allowed host.",
     "NVM Express TP 8006 (in-band authentication, DH-HMAC-CHAP); Linux nvmet configfs: "
     "hosts/<nqn>/dhchap_key, dhchap_ctrl_key",
     nvmet_dhchap},
    {"NVMET-TLS", "storage", TP_SEV_WARNING, "NVMe/TCP target ports require TLS",
     "Without TLS, checkpoint and dataset blocks cross the storage plane in clear and can be "
     "altered in flight.",
     "Set ports/<id>/addr_tsas to tls1.3 and addr_treq to required, with PSKs in the "
     ".nvme keyring.",
     "NVM Express TP 8011 (TLS 1.3 for NVMe/TCP); NVMe over TCP Transport Specification; "
     "Linux nvmet configfs: addr_tsas, addr_treq",
     nvmet_tls},
    {"NVMEOF-HOST-DHCHAP", "storage", TP_SEV_WARNING,
     "NVMe-oF host controllers authenticate both ways",
     "Without a controller secret the host does not verify the target, so a rogue target on "
     "the storage plane can serve forged checkpoint data.",
     "nvme connect ... --dhchap-secret=<host key> --dhchap-ctrl-secret=<ctrl key>.",
     "NVM Express TP 8006 (DH-HMAC-CHAP); nvme-connect(1) --dhchap-secret, "
     "--dhchap-ctrl-secret",
     nvmeof_host_dhchap},
    {"NVMEOF-HOST-TLS", "storage", TP_SEV_WARNING, "NVMe/TCP host controllers use TLS",
     "NVMe/TCP without TLS sends blocks in clear over the storage plane.",
     "nvme connect -t tcp --tls (PSK in the .nvme keyring, tlshd running).",
     "NVM Express TP 8011 (TLS 1.3 for NVMe/TCP); nvme-connect(1) --tls, --tls-key",
     nvmeof_host_tls},
    {"RDMA-NETNS", "node", TP_SEV_CRITICAL, "RDMA devices are per namespace on shared nodes",
     "In shared netns mode every container sees every RDMA device and can open QPs on other "
     "tenants' ports; exclusive mode binds each device to one network namespace.",
     "`rdma system set netns exclusive` (persist with ib_core netns_mode=0) and move each "
     "device into its tenant's namespace with `rdma dev set <dev> netns <ns>`.",
     "rdma(8), rdma-system(8): 'rdma system set netns exclusive'", rdma_netns},
    {"SEC-RESULTS-SECRETS", "node", TP_SEV_CRITICAL, "Results folders hold no secrets",
     "Results are copied, shared and attached to tickets; a private key or DH-HMAC-CHAP secret "
     "among them leaks with them.",
     "Move the files out of the results folders, keep keys in /etc or a keyring, and rotate "
     "every secret that was there.",
     CIS "'Ensure permissions on SSH private host key files are configured'; NVM Express TP "
     "8006 (DH-HMAC-CHAP secrets)",
     sec_results_secrets},
};

const size_t tp_check_nrules = sizeof tp_check_rules / sizeof tp_check_rules[0];

/* ---- evaluation ---- */

const char *tp_check_status_name(enum tp_check_status s)
{
    static const char *const n[] = {"PASS", "WARN", "FAIL", "SKIP"};
    return (unsigned)s < 4 ? n[s] : "UNKNOWN";
}

const char *tp_check_severity_name(enum tp_check_severity s)
{
    return s == TP_SEV_CRITICAL ? "critical" : s == TP_SEV_WARNING ? "warning" : "unknown";
}

json_t *tp_check_evaluate(const json_t *facts, const struct tp_policy *p)
{
    static const struct tp_policy none; /* no policy: no planes, role compute */
    json_t *out = json_array();
    if (!out)
        return NULL;
    for (size_t i = 0; i < tp_check_nrules; i++) {
        const struct tp_check_rule *rule = &tp_check_rules[i];
        struct tp_check_result res = {.status = TP_CHECK_PASS};
        rule->check(facts, p ? p : &none, &res);
        tp_utf8_fix(res.evidence);
        json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "id", rule->id,
                              "plane", rule->plane, "severity",
                              tp_check_severity_name(rule->severity), "title", rule->title,
                              "status", tp_check_status_name(res.status), "evidence",
                              res.evidence, "rationale", rule->rationale, "remediation",
                              rule->remediation, "source", rule->source);
        if (!o || json_array_append_new(out, o) != 0) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

int tp_check_nagios(const json_t *findings)
{
    if (!json_is_array(findings))
        return 3;
    bool warn = false, unknown = false;
    size_t i;
    json_t *f;
    json_array_foreach(findings, i, f) {
        const char *st = sget(f, "status"), *sev = sget(f, "severity");
        if (!st) {
            unknown = true;
            continue;
        }
        if (strcmp(st, "FAIL") == 0 && sev && strcmp(sev, "critical") == 0)
            return 2;
        if (strcmp(st, "FAIL") == 0 || strcmp(st, "WARN") == 0)
            warn = true;
        else if (strcmp(st, "PASS") != 0 && strcmp(st, "SKIP") != 0)
            unknown = true;
    }
    return warn ? 1 : unknown ? 3 : 0;
}
