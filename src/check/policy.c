/* Reading a plane policy: the node's role and, per plane (management,
 * control, data, storage), its CIDRs, interfaces and the services it may
 * expose. The format is the tables below, walked by the YAML layer (so every
 * error names file:line:col and the key path, unknown keys and planes are
 * refused); this file adds what tables cannot say: CIDRs and port ranges,
 * the per-plane defaults and limits, and the one check across planes that
 * the audit depends on: no address may belong to two planes. */
#include "tp/check.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "tp/yaml.h"

typedef struct tp_yaml_node node;
typedef struct tp_yaml_key key;
typedef struct tp_yaml_table table;
typedef struct tp_policy PO;
typedef struct tp_policy_plane PL;
typedef struct tp_service SV;

#define REQ TP_YAML_REQUIRED

/* ---- CIDRs and ports ---- */

/* Decimal digits at s (at least one) into *v, capped at 999999; *end is
 * set past them. */
static bool digits(const char *s, unsigned *v, const char **end)
{
    unsigned n = 0;
    const char *p = s;
    for (; isdigit((unsigned char)*p); p++)
        if (n <= 99999)
            n = n * 10 + (unsigned)(*p - '0');
    *v = n;
    *end = p;
    return p != s;
}

/* "10.1.0.0/16" or "fd00:0:0:1::/64" into c; the prefix is needed and the
 * host bits must be zero (the error then names the network meant). */
static int read_cidr(struct tp_yaml *y, const key *k, const node *v, const char *path, void *base)
{
    struct tp_cidr *c = (struct tp_cidr *)((char *)base + k->off);
    const char *t = v->text, *slash = strchr(t, '/');
    char addr[64];
    size_t alen = slash ? (size_t)(slash - t) : strlen(t);
    if (alen >= sizeof addr)
        goto bad;
    memcpy(addr, t, alen);
    addr[alen] = '\0';
    memset(c, 0, sizeof *c);
    if (inet_pton(AF_INET, addr, c->addr) == 1)
        c->family = AF_INET;
    else if (inet_pton(AF_INET6, addr, c->addr) == 1)
        c->family = AF_INET6;
    else
        goto bad;
    if (!slash)
        return tp_yaml_fail(y, v, path, "'%s' has no prefix length (write %s/%d for one host)", t,
                            t, c->family == AF_INET ? 32 : 128);
    unsigned max = c->family == AF_INET ? 32 : 128, prefix;
    const char *end;
    if (!digits(slash + 1, &prefix, &end) || *end)
        goto bad;
    if (prefix > max)
        return tp_yaml_fail(y, v, path, "'%s': the prefix length of an %s network is 0 to %u", t,
                            c->family == AF_INET ? "IPv4" : "IPv6", max);
    c->prefix = prefix;
    bool host_bits = false;
    for (unsigned bit = prefix; bit < max; bit++) {
        uint8_t m = (uint8_t)(0x80u >> (bit % 8));
        host_bits |= (c->addr[bit / 8] & m) != 0;
        c->addr[bit / 8] &= (uint8_t)~m;
    }
    if (host_bits) {
        char net[INET6_ADDRSTRLEN];
        inet_ntop(c->family, c->addr, net, sizeof net);
        return tp_yaml_fail(y, v, path, "'%s' has host bits set (the network is %s/%u)", t, net,
                            prefix);
    }
    return 0;
bad:
    return tp_yaml_fail(y, v, path, "cannot parse '%s' as %s (use e.g. %s)", t, k->what, k->eg);
}

/* Whether two networks share an address: the same family and the shorter
 * prefix's bits equal. */
static bool overlap(const struct tp_cidr *a, const struct tp_cidr *b)
{
    if (a->family != b->family)
        return false;
    unsigned bits = a->prefix < b->prefix ? a->prefix : b->prefix;
    for (unsigned bit = 0; bit < bits; bit++) {
        uint8_t m = (uint8_t)(0x80u >> (bit % 8));
        if ((a->addr[bit / 8] & m) != (b->addr[bit / 8] & m))
            return false;
    }
    return true;
}

/* `port: 22` into the service's lo and hi. */
static int read_port(struct tp_yaml *y, const key *k, const node *v, const char *path, void *base)
{
    SV *s = base;
    const char *end;
    unsigned n;
    if (!digits(v->text, &n, &end) || *end)
        return tp_yaml_fail(y, v, path, "cannot parse '%s' as %s (use e.g. %s)", v->text, k->what,
                            k->eg);
    if (n < 1 || n > 65535)
        return tp_yaml_fail(y, v, path, "'%s' must be between 1 and 65535", v->text);
    s->port_lo = s->port_hi = n;
    return 0;
}

/* `ports: 60001-63000` (or one port) into the service's lo and hi. */
static int read_ports(struct tp_yaml *y, const key *k, const node *v, const char *path, void *base)
{
    SV *s = base;
    const char *t = v->text, *p;
    unsigned lo, hi;
    bool ok = digits(t, &lo, &p);
    hi = lo;
    if (ok && *p == '-')
        ok = digits(p + 1, &hi, &p);
    if (!ok || *p)
        return tp_yaml_fail(y, v, path, "cannot parse '%s' as %s (use e.g. %s)", t, k->what, k->eg);
    if (lo < 1 || lo > 65535 || hi < 1 || hi > 65535)
        return tp_yaml_fail(y, v, path, "'%s': a port is 1 to 65535", t);
    if (lo > hi)
        return tp_yaml_fail(y, v, path, "'%s' runs backwards (write the lower port first)", t);
    s->port_lo = lo;
    s->port_hi = hi;
    return 0;
}

/* A results folder: an absolute path (the audit may run from anywhere). */
static int read_dir(struct tp_yaml *y, const key *k, const node *v, const char *path, void *base)
{
    char *out = (char *)base + k->off;
    if (v->text[0] != '/')
        return tp_yaml_fail(y, v, path, "'%s' is not an absolute path", v->text);
    if (strlen(v->text) >= k->size)
        return tp_yaml_fail(y, v, path, "path too long (at most %zu characters)", k->size - 1);
    memcpy(out, v->text, strlen(v->text) + 1);
    return 0;
}

/* ---- the tables ---- */

static const struct tp_yaml_range mtu_range = {0, 65535, false, "must be between 0 and 65535"};

static const struct tp_yaml_choice roles[] = {{"compute", TP_ROLE_COMPUTE},
                                              {"storage", TP_ROLE_STORAGE},
                                              {"login", TP_ROLE_LOGIN},
                                              {"kubernetes", TP_ROLE_KUBERNETES},
                                              {NULL, 0}};
static const struct tp_yaml_choice protos[] = {{"tcp", 0}, {"udp", 1}, {NULL, 0}};

_Static_assert(sizeof(enum tp_role) == sizeof(int), "TP_YAML_ENUM stores an int");

static int service_check(struct tp_yaml *y, const node *map, const node *at, const char *path,
                         void *base, uint64_t seen);
static int plane_check(struct tp_yaml *y, const node *map, const node *at, const char *path,
                       void *base, uint64_t seen);
static int planes_check(struct tp_yaml *y, const node *map, const node *at, const char *path,
                        void *base, uint64_t seen);
static int policy_check(struct tp_yaml *y, const node *map, const node *at, const char *path,
                        void *base, uint64_t seen);

/* clang-format off */
static const key service_keys[] = {
    {.name = "name", .kind = TP_YAML_STR, TP_YAML_STR_FIELD(SV, name), .flags = REQ,
     .eg = "sshd"},
    /* port or ports, one of the two: service_check */
    {.name = "port", .kind = TP_YAML_PARSE, .read = read_port, .what = "a port",
     .eg = "22, 9100"},
    {.name = "ports", .kind = TP_YAML_PARSE, .read = read_ports, .what = "a port range",
     .eg = "60001-63000"},
    {.name = "proto", .kind = TP_YAML_STR, TP_YAML_STR_FIELD(SV, proto), .sdef = "tcp",
     .choices = protos},
};
static const table service_tbl = {service_keys, TP_YAML_NKEYS(service_keys), service_check, NULL};

static const key cidr_elem = {.kind = TP_YAML_PARSE, .read = read_cidr, .what = "a CIDR",
                              .eg = "10.0.0.0/24, fd00:0:0:1::/64"};
static const key iface_elem = {.kind = TP_YAML_STR, .size = sizeof(((PL *)0)->ifaces[0]),
                               .eg = "eno1, \"ens*np0\""};
static const key service_elem = {.kind = TP_YAML_MAP, .sub = &service_tbl};

static const key plane_keys[] = {
    /* cidrs or interfaces, at least one: plane_check */
    {.name = "cidrs", .kind = TP_YAML_LIST, TP_YAML_LIST_OF(PL, cidrs, ncidrs),
     .elem = &cidr_elem, .what = "a sequence of CIDRs", .eg = "[10.0.0.0/24, fd00:0:0:1::/64]"},
    {.name = "interfaces", .kind = TP_YAML_LIST, TP_YAML_LIST_OF(PL, ifaces, nifaces),
     .elem = &iface_elem, .what = "a sequence of interface names or patterns",
     .eg = "[eno1, \"mgmt*\"]"},
    {.name = "services", .kind = TP_YAML_LIST, TP_YAML_LIST_OF(PL, services, nservices),
     .elem = &service_elem, .what = "a sequence of services",
     .eg = "[{name: sshd, port: 22}]"},
    /* absent: 9000 on data and storage, else 0; plane_check */
    {.name = "mtu_min", .kind = TP_YAML_UINT, .off = offsetof(PL, mtu_min), .range = &mtu_range,
     .what = "an MTU", .eg = "1500, 9000"},
    {.name = "rdma", .kind = TP_YAML_BOOL, .off = offsetof(PL, rdma)},
};
static const table plane_tbl = {plane_keys, TP_YAML_NKEYS(plane_keys), plane_check, NULL};

/* in enum tp_plane order: the key's index is the plane */
#define PLANE(p) offsetof(PO, planes) + (p) * sizeof(PL)
static const key planes_keys[] = {
    {.name = "management", .kind = TP_YAML_MAP, .off = PLANE(TP_PLANE_MGMT), .sub = &plane_tbl},
    {.name = "control", .kind = TP_YAML_MAP, .off = PLANE(TP_PLANE_CONTROL), .sub = &plane_tbl},
    {.name = "data", .kind = TP_YAML_MAP, .off = PLANE(TP_PLANE_DATA), .sub = &plane_tbl},
    {.name = "storage", .kind = TP_YAML_MAP, .off = PLANE(TP_PLANE_STORAGE), .sub = &plane_tbl},
};
static const table planes_tbl = {planes_keys, TP_YAML_NKEYS(planes_keys), planes_check, "plane"};

static const key results_elem = {.kind = TP_YAML_PARSE, .read = read_dir,
                                 .size = sizeof(((PO *)0)->results_dirs[0]), .what = "a folder",
                                 .eg = "/var/lib/trainpath/results"};

static const key top_keys[] = {
    {.name = "role", .kind = TP_YAML_ENUM, .off = offsetof(PO, role), .choices = roles,
     .flags = REQ},
    {.name = "multi_tenant", .kind = TP_YAML_BOOL, .off = offsetof(PO, multi_tenant)},
    {.name = "results", .kind = TP_YAML_LIST, TP_YAML_LIST_OF(PO, results_dirs, nresults_dirs),
     .elem = &results_elem, .what = "a sequence of folders",
     .eg = "[/var/lib/trainpath/results]"},
    {.name = "planes", .kind = TP_YAML_MAP, .sub = &planes_tbl, .flags = REQ},
};
static const table top_tbl = {top_keys, TP_YAML_NKEYS(top_keys), policy_check, NULL};
/* clang-format on */

_Static_assert(TP_YAML_NKEYS(planes_keys) == TP_PLANES, "one key per plane");

static unsigned default_mtu(enum tp_plane p)
{
    return p == TP_PLANE_DATA || p == TP_PLANE_STORAGE ? 9000 : 0;
}

/* ---- checks across keys ---- */

static int service_check(struct tp_yaml *y, const node *map, const node *at, const char *path,
                         void *base, uint64_t seen)
{
    (void)base;
    bool one = tp_yaml_seen(&service_tbl, seen, "port"),
         range = tp_yaml_seen(&service_tbl, seen, "ports");
    char p[TP_YAML_PATH_LEN];
    if (one && range) {
        const node *a = tp_yaml_lookup(map, "port", false),
                   *b = tp_yaml_lookup(map, "ports", false);
        const node *second = a->line > b->line || (a->line == b->line && a->col > b->col) ? a : b;
        tp_yaml_join(p, path, second->text);
        return tp_yaml_fail(y, second, p, "give port (one) or ports (a range), not both");
    }
    if (!one && !range) {
        tp_yaml_join(p, path, "port");
        return tp_yaml_fail(y, at, p, "required (or ports: one of the two)");
    }
    return 0;
}

static int plane_check(struct tp_yaml *y, const node *map, const node *at, const char *path,
                       void *base, uint64_t seen)
{
    PO *po = y->user;
    PL *pl = base;
    enum tp_plane plane = (enum tp_plane)(pl - po->planes);
    pl->present = true;
    if (!tp_yaml_seen(&plane_tbl, seen, "mtu_min"))
        pl->mtu_min = default_mtu(plane);
    if (pl->ncidrs == 0 && pl->nifaces == 0)
        return tp_yaml_fail(y, at, path,
                            "needs cidrs or interfaces (at least one entry): they tell which "
                            "addresses and interfaces belong to the %s plane",
                            planes_keys[plane].name);
    if (pl->rdma && plane != TP_PLANE_DATA && plane != TP_PLANE_STORAGE) {
        char p[TP_YAML_PATH_LEN];
        tp_yaml_join(p, path, "rdma");
        return tp_yaml_fail(y, tp_yaml_lookup(map, "rdma", true), p,
                            "RDMA belongs on the data plane (or storage, for NVMe/RDMA), not on "
                            "%s",
                            planes_keys[plane].name);
    }
    return 0;
}

static int planes_check(struct tp_yaml *y, const node *map, const node *at, const char *path,
                        void *base, uint64_t seen)
{
    (void)map, (void)base;
    if (seen)
        return 0;
    return tp_yaml_fail(y, at, path,
                        "needs at least one plane (management, control, data, "
                        "storage)");
}

/* The node of planes.NAME.cidrs[i] in the tree. */
static const node *cidr_node(const node *planes, enum tp_plane p, int i)
{
    const node *plane = tp_yaml_lookup(planes, planes_keys[p].name, true);
    const node *list = tp_yaml_lookup(plane, "cidrs", true);
    return list && list->type == TP_YAML_N_SEQ && (size_t)i < list->n ? list->kid[i] : NULL;
}

static bool before(const node *a, const node *b)
{
    return a->line < b->line || (a->line == b->line && a->col < b->col);
}

/* No address in two planes: the audit tells an interface's plane by its
 * addresses, and a policy that allows a service on one plane would allow it
 * on the other. The error stands at the one written first. */
static int policy_check(struct tp_yaml *y, const node *map, const node *at, const char *path,
                        void *base, uint64_t seen)
{
    (void)at, (void)path, (void)seen;
    const PO *po = base;
    const node *planes = tp_yaml_lookup(map, "planes", true);
    for (int a = 0; a < TP_PLANES; a++) {
        for (int b = a + 1; b < TP_PLANES; b++) {
            const PL *pa = &po->planes[a], *pb = &po->planes[b];
            for (int i = 0; i < pa->ncidrs; i++) {
                for (int j = 0; j < pb->ncidrs; j++) {
                    if (!overlap(&pa->cidrs[i], &pb->cidrs[j]))
                        continue;
                    const node *na = cidr_node(planes, (enum tp_plane)a, i),
                               *nb = cidr_node(planes, (enum tp_plane)b, j);
                    if (!na || !nb) /* cannot be: each came from its node */
                        continue;
                    int pi = a, ii = i, qi = b, jj = j;
                    if (before(nb, na)) {
                        const node *t = na;
                        na = nb, nb = t;
                        pi = b, ii = j, qi = a, jj = i;
                    }
                    char p1[TP_YAML_PATH_LEN], p2[TP_YAML_PATH_LEN];
                    snprintf(p1, sizeof p1, "planes.%s.cidrs[%d]", planes_keys[pi].name, ii);
                    snprintf(p2, sizeof p2, "planes.%s.cidrs[%d]", planes_keys[qi].name, jj);
                    return tp_yaml_fail(y, na, p1, "%s overlaps %s %s (line %d)", na->text, p2,
                                        nb->text, nb->line);
                }
            }
        }
    }
    return 0;
}

int tp_policy_parse(const char *path, struct tp_policy *p, tp_error *err)
{
    memset(p, 0, sizeof *p);
    if (!path || !*path)
        return tp_error_set(err, TP_EUSAGE, "policy file: no path given");
    if (strlen(path) >= sizeof p->file)
        return tp_error_set(err, TP_EUSAGE, "%.64s...: path too long", path);
    strcpy(p->file, path);
    struct tp_yaml y;
    int rc = tp_yaml_open(&y, path, "policy", err);
    y.user = p;
    if (rc == 0 && !y.root)
        rc = tp_error_set(err, TP_EUSAGE, "%s:1:1: empty document: a policy needs role and planes",
                          path);
    else if (rc == 0 && y.root->type != TP_YAML_N_MAP)
        rc = tp_yaml_fail(&y, y.root, "", "expected a mapping (role:, planes:), found %s",
                          tp_yaml_type_name(&y, y.root));
    if (rc == 0)
        rc = tp_yaml_walk(&y, y.root, y.root, "", &top_tbl, p);
    tp_yaml_close(&y);
    for (int i = 0; rc == 0 && i < TP_PLANES; i++)
        if (!p->planes[i].present)
            p->planes[i].mtu_min = default_mtu((enum tp_plane)i);
    return rc;
}
