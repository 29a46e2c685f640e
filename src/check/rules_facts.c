/* The facts as the rules read them. A value that is null, absent or of
 * another type is unknown, never 0, so a rule can SKIP or WARN on it; a
 * number may be a JSON integer or the text a sysctl file holds. An
 * interface is in the plane the policy gives it (loopback in none); a
 * listener is in the plane of the interface holding its address, else of
 * the policy CIDR holding it; a wildcard listener is reachable on every
 * plane the node has an address on. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "rules_int.h"

const json_t *tp__check_get(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_null(v) ? NULL : v;
}

const char *tp__check_sget(const json_t *o, const char *key)
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

bool tp__check_iget(const json_t *o, const char *key, long long *v)
{
    const json_t *x = json_object_get(o, key);
    if (json_is_integer(x)) {
        *v = json_integer_value(x);
        return true;
    }
    return json_is_string(x) && parse_ll(json_string_value(x), v);
}

int tp__check_bget(const json_t *o, const char *key)
{
    const json_t *x = json_object_get(o, key);
    return json_is_boolean(x) ? json_is_true(x) : -1;
}

bool tp__check_sysctl(const json_t *facts, const char *name, long long *v)
{
    return tp__check_iget(tp__check_get(facts, "sysctl"), name, v);
}

bool tp__check_sysctl_conf(const json_t *facts, const char *fam, const char *dev, const char *key,
                           long long *v)
{
    char name[256], slashed[64];
    snprintf(slashed, sizeof slashed, "%s", dev);
    for (char *c = slashed; *c; c++)
        if (*c == '.')
            *c = '/';
    snprintf(name, sizeof name, "net.%s.conf.%s.%s", fam, slashed, key);
    if (tp__check_sysctl(facts, name, v))
        return true;
    snprintf(name, sizeof name, "net.%s.conf.%s.%s", fam, dev, key);
    return tp__check_sysctl(facts, name, v);
}

bool tp__check_effective(const json_t *facts, const char *dev, const char *key, long long *v,
                         char *text, size_t n)
{
    long long all, one;
    bool ha = tp__check_sysctl_conf(facts, "ipv4", "all", key, &all);
    bool ho = tp__check_sysctl_conf(facts, "ipv4", dev, key, &one);
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

const char *tp__check_ifname(const json_t *ifc)
{
    const char *s = tp__check_sget(ifc, "name");
    return s ? s : "?";
}

bool tp__check_loopback_iface(const json_t *ifc)
{
    return json_is_true(json_object_get(ifc, "loopback"));
}

int tp__check_plane_of(const struct tp_policy *p, const json_t *ifc)
{
    return tp__check_loopback_iface(ifc) ? -1 : tp_policy_plane_of(p, ifc);
}

const char *tp__check_pname(int plane)
{
    return tp_plane_name((enum tp_plane)plane);
}

const json_t *tp__check_plane_ifaces(const json_t *facts, const struct tp_policy *p, int pl,
                                     struct tp_check_result *r)
{
    const json_t *ifs = tp__check_get(facts, "interfaces");
    if (!p->planes[pl].present) {
        tp__check_skip(r, "the policy has no %s plane", tp__check_pname(pl));
        return NULL;
    }
    if (!json_is_array(ifs)) {
        tp__check_nofacts(r, facts, "interfaces", "no interface facts");
        return NULL;
    }
    size_t i;
    json_t *ifc;
    json_array_foreach(ifs, i, ifc) {
        if (tp__check_plane_of(p, ifc) == pl)
            return ifs;
    }
    /* the plane may hold an interface by an address the facts could not see */
    if (p->planes[pl].ncidrs > 0)
        tp__check_nofacts(r, facts, "addresses", "no interface of this node is in the %s plane",
                          tp__check_pname(pl));
    else
        tp__check_skip(r, "no interface of this node is in the %s plane", tp__check_pname(pl));
    return NULL;
}

size_t tp__check_rdma_devices(const json_t *facts)
{
    return json_array_size(tp__check_get(tp__check_get(facts, "rdma"), "devices"));
}

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

bool tp__check_loopback_addr(const char *a)
{
    static const struct tp_cidr lo4 = {AF_INET, {127}, 8};
    static const struct tp_cidr lo6 = {AF_INET6, {[15] = 1}, 128};
    return tp_cidr_contains(&lo4, a) || tp_cidr_contains(&lo6, a);
}

int tp__check_addr_plane(const json_t *facts, const struct tp_policy *p, const char *addr)
{
    size_t i, j;
    json_t *ifc, *a;
    json_array_foreach(tp__check_get(facts, "interfaces"), i, ifc) {
        json_array_foreach(json_object_get(ifc, "addresses"), j, a) {
            struct tp_cidr host;
            const char *s = tp__check_sget(a, "address");
            if (s && host_cidr(s, &host) && tp_cidr_contains(&host, addr)) {
                int pl = tp__check_plane_of(p, ifc);
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

unsigned tp__check_wildcard_planes(const json_t *facts, const struct tp_policy *p,
                                   const char *family)
{
    unsigned mask = 0;
    bool v4only = family && strcmp(family, "inet") == 0;
    size_t i, j;
    json_t *ifc, *a;
    json_array_foreach(tp__check_get(facts, "interfaces"), i, ifc) {
        if (tp__check_loopback_iface(ifc))
            continue;
        json_array_foreach(json_object_get(ifc, "addresses"), j, a) {
            const char *s = tp__check_sget(a, "address"), *fam = tp__check_sget(a, "family");
            if (!s || tp__check_loopback_addr(s) || (v4only && fam && strcmp(fam, "inet") != 0))
                continue;
            int pl = tp__check_plane_of(p, ifc);
            mask |= pl >= 0 ? 1u << pl : NO_PLANE;
        }
    }
    return mask;
}

bool tp__check_wildcard(const json_t *l)
{
    const char *a = tp__check_sget(l, "address");
    return json_is_true(json_object_get(l, "wildcard")) ||
           (a && (strcmp(a, "0.0.0.0") == 0 || strcmp(a, "::") == 0 || strcmp(a, "*") == 0));
}

void tp__check_describe(const json_t *l, char *buf, size_t n)
{
    long long port = -1, pid;
    tp__check_iget(l, "port", &port);
    const char *proto = tp__check_sget(l, "proto"), *proc = tp__check_sget(l, "process"),
               *a = tp__check_sget(l, "address");
    char who[96];
    if (proc)
        snprintf(who, sizeof who, "%s", proc);
    else if (tp__check_iget(l, "pid", &pid))
        snprintf(who, sizeof who, "pid %lld", pid);
    else
        snprintf(who, sizeof who, "process unknown");
    bool v6 = a && strchr(a, ':');
    snprintf(buf, n, "%s/%lld (%s) on %s%s%s", proto ? proto : "?", port, who, v6 ? "[" : "",
             a ? a : "?", v6 ? "]" : "");
}

const struct tp_service *tp__check_service(const struct tp_policy *p, int pl, const json_t *l)
{
    long long port;
    const char *proto = tp__check_sget(l, "proto");
    if (!proto || !tp__check_iget(l, "port", &port))
        return NULL;
    const struct tp_policy_plane *pp = &p->planes[pl];
    for (int i = 0; pp->present && i < pp->nservices; i++) {
        const struct tp_service *s = &pp->services[i];
        if (strcmp(s->proto, proto) == 0 && port >= s->port_lo && port <= s->port_hi)
            return s;
    }
    return NULL;
}

void tp__check_plane_list(unsigned mask, char *buf, size_t n)
{
    buf[0] = '\0';
    for (int pl = 0; pl <= TP_PLANES; pl++)
        if (mask & (1u << pl)) {
            size_t len = strlen(buf);
            snprintf(buf + len, n - len, "%s%s", len ? ", " : "",
                     pl == TP_PLANES ? "no plane" : tp__check_pname(pl));
        }
}

const json_t *tp__check_placed_listeners(const json_t *facts, struct tp_check_result *r)
{
    const json_t *ls = tp__check_get(facts, "listeners");
    if (!json_is_array(ls)) {
        tp__check_nofacts(r, facts, "listeners", "no listener facts");
        return NULL;
    }
    if (!json_is_array(tp__check_get(facts, "interfaces"))) {
        tp__check_nofacts(r, facts, "interfaces",
                          "no interface facts to place the listeners in planes");
        return NULL;
    }
    return ls;
}
