/* The checks more than one plane runs, each with its own plane: jumbo
 * frames (data, storage), input denied by default with no rule that accepts
 * everything from the plane's interfaces (management, control), and
 * reverse-path filtering (strict on management; loose or off on RDMA data
 * ports, which may get replies on another port of their subnet). Generic
 * baselines (CIS, Lynis) treat every interface alike; these checks know the
 * plane. */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "rules_int.h"

void tp__check_mtu(const json_t *facts, const struct tp_policy *p, int pl,
                   struct tp_check_result *r)
{
    const json_t *ifs = tp__check_plane_ifaces(facts, p, pl, r);
    if (!ifs)
        return;
    unsigned want = p->planes[pl].mtu_min;
    if (want == 0) {
        tp__check_skip(r, "the policy sets no mtu_min for the %s plane", tp__check_pname(pl));
        return;
    }
    struct finding f = {0};
    size_t i;
    json_t *ifc;
    json_array_foreach(ifs, i, ifc) {
        long long m;
        if (tp__check_plane_of(p, ifc) != pl)
            continue;
        if (!tp__check_iget(ifc, "mtu", &m))
            tp__check_bad(&f, TP_CHECK_WARN, "%s (%s): MTU unknown", tp__check_ifname(ifc),
                          tp__check_pname(pl));
        else if (m < (long long)want)
            tp__check_bad(&f, TP_CHECK_FAIL, "%s (%s): MTU %lld < %u", tp__check_ifname(ifc),
                          tp__check_pname(pl), m, want);
        else
            tp__check_ok(&f, "%s (%s): MTU %lld >= %u", tp__check_ifname(ifc), tp__check_pname(pl),
                         m, want);
    }
    char w[96];
    snprintf(w, sizeof w, "the policy wants MTU >= %u on the %s plane", want, tp__check_pname(pl));
    tp__check_done(r, &f, w);
}

/* The first key of a one-member object, as libnftables writes statements. */
static const char *first_key(const json_t *o)
{
    return json_is_object(o) ? json_object_iter_key(json_object_iter((json_t *)o)) : NULL;
}

/* A match on the input interface that ifname satisfies. */
static bool iif_match(const json_t *m, const char *ifname)
{
    const char *op = tp__check_sget(m, "op");
    const char *key = tp__check_sget(json_object_get(json_object_get(m, "left"), "meta"), "key");
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
        const char *a = tp__check_sget(rule, k[i]), *b = tp__check_sget(chain, k[i]);
        if (!a || !b || strcmp(a, b) != 0)
            return false;
    }
    const char *a = tp__check_sget(rule, "chain"), *b = tp__check_sget(chain, "chain");
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
    const char *f = tp__check_sget(chain, "family");
    return f && (strcmp(f, "inet") == 0 || strcmp(f, fam ? "ip6" : "ip") == 0);
}

void tp__check_firewall(const json_t *facts, const struct tp_policy *p, int pl,
                        struct tp_check_result *r)
{
    const json_t *nft = tp__check_get(facts, "nftables");
    const json_t *ifs = tp__check_plane_ifaces(facts, p, pl, r);
    if (!ifs)
        return;
    if (!json_is_object(nft)) {
        tp__check_nofacts(r, facts, "nftables", "no nftables facts");
        return;
    }
    const json_t *chains = tp__check_get(nft, "input_chains");
    const json_t *ruleset = tp__check_get(tp__check_get(nft, "ruleset"), "nftables");
    struct finding f = {0};
    if (json_array_size(chains) == 0) {
        tp__check_say(r, TP_CHECK_FAIL,
                      "no nftables input chain: all input accepted; want an input chain "
                      "with policy drop");
        return;
    }
    /* the chains that deny by default, and which families they see */
    bool deny[2] = {false, false}, denies[64] = {false};
    size_t i, k;
    json_t *c, *ifc, *a;
    json_array_foreach(chains, i, c) {
        const char *pol = tp__check_sget(c, "policy");
        char d[160];
        snprintf(d, sizeof d, "%s %s %s", tp__check_sget(c, "family"), tp__check_sget(c, "table"),
                 tp__check_sget(c, "chain"));
        if ((pol && strcmp(pol, "drop") == 0) || chain_rule(ruleset, c, NULL)) {
            if (i < 64)
                denies[i] = true;
            deny[0] |= covers(c, 0);
            deny[1] |= covers(c, 1);
            tp__check_ok(&f, "%s: policy %s", d, pol ? pol : "?");
        } else {
            /* noted without a verdict: harmless beside a default-deny chain,
             * the evidence of the FAIL when no chain denies */
            tp__check_bad(&f, TP_CHECK_PASS, "%s: policy %s", d, pol ? pol : "?");
        }
    }
    if (!deny[0] && !deny[1]) {
        f.status = TP_CHECK_FAIL;
        tp__check_done(r, &f, "want an input chain with policy drop");
        return;
    }
    f.bad[0] = '\0';
    /* each family the plane uses must be denied by default, and no
     * default-deny chain may accept everything from a plane interface */
    json_array_foreach(ifs, k, ifc) {
        if (tp__check_plane_of(p, ifc) != pl)
            continue;
        bool uses[2] = {false, false};
        json_array_foreach(json_object_get(ifc, "addresses"), i, a) {
            const char *fam = tp__check_sget(a, "family");
            if (fam)
                uses[strcmp(fam, "inet6") == 0] = true;
        }
        for (int fam = 0; fam < 2; fam++) {
            if (!uses[fam])
                continue;
            if (!deny[fam]) {
                tp__check_bad(&f, TP_CHECK_FAIL, "%s (%s): %s input accepted by default",
                              tp__check_ifname(ifc), tp__check_pname(pl), fam ? "IPv6" : "IPv4");
                continue;
            }
            const json_t *open = NULL;
            bool all = true;
            json_array_foreach(chains, i, c) {
                if (i >= 64 || !denies[i] || !covers(c, fam))
                    continue;
                const json_t *rule = chain_rule(ruleset, c, tp__check_ifname(ifc));
                all &= rule != NULL;
                open = rule ? rule : open;
            }
            if (all && open)
                tp__check_bad(&f, TP_CHECK_FAIL, "%s (%s): %s %s %s accepts all %s input on it",
                              tp__check_ifname(ifc), tp__check_pname(pl),
                              tp__check_sget(open, "family"), tp__check_sget(open, "table"),
                              tp__check_sget(open, "chain"), fam ? "IPv6" : "IPv4");
        }
    }
    tp__check_done(r, &f,
                   "want default-deny input (policy drop) that admits only the plane's services");
}

static bool rdma_iface(const struct tp_policy *p, const json_t *ifc)
{
    return p->planes[TP_PLANE_DATA].rdma || tp__check_get(ifc, "rdma_device");
}

void tp__check_rpf(const json_t *facts, const struct tp_policy *p, int pl, bool (*good)(long long),
                   const char *want, struct tp_check_result *r)
{
    const json_t *ifs = tp__check_plane_ifaces(facts, p, pl, r);
    if (!ifs)
        return;
    if (!tp__check_get(facts, "sysctl")) {
        tp__check_nofacts(r, facts, "sysctl.net", "no sysctl facts");
        return;
    }
    struct finding f = {0};
    size_t i;
    json_t *ifc;
    json_array_foreach(ifs, i, ifc) {
        long long v;
        char text[160];
        if (tp__check_plane_of(p, ifc) != pl || (pl == TP_PLANE_DATA && !rdma_iface(p, ifc)))
            continue;
        if (!tp__check_effective(facts, tp__check_ifname(ifc), "rp_filter", &v, text, sizeof text))
            tp__check_bad(&f, TP_CHECK_WARN, "%s (%s): rp_filter unknown", tp__check_ifname(ifc),
                          tp__check_pname(pl));
        else if (good(v))
            tp__check_ok(&f, "%s (%s): %s", tp__check_ifname(ifc), tp__check_pname(pl), text);
        else
            tp__check_bad(&f, TP_CHECK_FAIL, "%s (%s): %s", tp__check_ifname(ifc),
                          tp__check_pname(pl), text);
    }
    if (!f.good[0] && !f.bad[0]) {
        tp__check_skip(r, "no RDMA interface in the %s plane", tp__check_pname(pl));
        return;
    }
    tp__check_done(r, &f, want);
}
