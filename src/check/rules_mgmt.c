/* The management-plane rules: sshd only on management addresses,
 * management input denied by default, and strict reverse-path filtering.
 * Each rule's table row follows its check. */
#include <string.h>

#include "rules_int.h"

static bool sshd(const json_t *l)
{
    const char *proc = tp__check_sget(l, "process"), *proto = tp__check_sget(l, "proto");
    long long port;
    return (proc && strcmp(proc, "sshd") == 0) ||
           (proto && strcmp(proto, "tcp") == 0 && tp__check_iget(l, "port", &port) && port == 22);
}

static void sec_sshd_mgmt(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    const json_t *ls = tp__check_placed_listeners(facts, r);
    if (!ls)
        return;
    struct finding f = {0};
    size_t i;
    json_t *l;
    json_array_foreach(ls, i, l) {
        const char *a = tp__check_sget(l, "address");
        char d[256];
        if (!sshd(l) || (a && tp__check_loopback_addr(a)))
            continue;
        tp__check_describe(l, d, sizeof d);
        if (!p->planes[TP_PLANE_MGMT].present) {
            tp__check_bad(&f, TP_CHECK_FAIL, "%s: the policy has no management plane", d);
        } else if (tp__check_wildcard(l)) {
            unsigned other = tp__check_wildcard_planes(facts, p, tp__check_sget(l, "family")) &
                             ~(1u << TP_PLANE_MGMT);
            char list[128];
            tp__check_plane_list(other, list, sizeof list);
            if (other)
                tp__check_bad(&f, TP_CHECK_FAIL, "%s: wildcard, reachable on %s", d, list);
            else
                tp__check_bad(&f, TP_CHECK_WARN, "%s: wildcard (only management addresses today)",
                              d);
        } else {
            int pl = tp__check_addr_plane(facts, p, a ? a : "");
            if (pl == TP_PLANE_MGMT)
                tp__check_ok(&f, "%s (management)", d);
            else
                tp__check_bad(&f, TP_CHECK_FAIL, "%s (%s)", d,
                              pl < 0 ? "no plane" : tp__check_pname(pl));
        }
    }
    if (!f.good[0] && f.status == TP_CHECK_PASS)
        tp__check_ok(&f, "no sshd listening outside loopback");
    tp__check_done(r, &f,
                   "sshd should listen only on management addresses (sshd_config ListenAddress)");
}

const struct tp_check_rule tp__check_rule_sec_sshd_mgmt = {
    .id = "SEC-SSHD-MGMT",
    .plane = "management",
    .severity = TP_SEV_CRITICAL,
    .title = "sshd listens only on management addresses",
    .rationale =
        "An sshd reachable from the data plane lets any compromised workload try keys and "
        "passwords against every node over the fastest network in the cluster.",
    .remediation = "Set ListenAddress to the management address in sshd_config and restart sshd.",
    .source = "sshd_config(5) ListenAddress; " CIS "'Configure SSH Server'",
    .needs = "listeners addresses",
    .check = sec_sshd_mgmt,
};

static void sec_fw_mgmt(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    tp__check_firewall(facts, p, TP_PLANE_MGMT, r);
}

const struct tp_check_rule tp__check_rule_sec_fw_mgmt = {
    .id = "SEC-FW-MGMT",
    .plane = "management",
    .severity = TP_SEV_CRITICAL,
    .title = "Management input is default-deny",
    .rationale =
        "The management plane carries logins and BMC-adjacent services; a default-accept input "
        "chain exposes every service that starts, now or later.",
    .remediation =
        "Add an nftables input chain with policy drop that accepts only the management services "
        "(ssh, monitoring) on the management interfaces.",
    .source = CIS "'Ensure nftables default deny firewall policy'; nft(8)",
    .check = sec_fw_mgmt,
};

static bool rpf_strict(long long v)
{
    return v == 1;
}

static void net_rpf_mgmt(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    tp__check_rpf(facts, p, TP_PLANE_MGMT, rpf_strict, "management interfaces need 1 (strict)", r);
}

const struct tp_check_rule tp__check_rule_net_rpf_mgmt = {
    .id = "NET-RPF-MGMT",
    .plane = "management",
    .severity = TP_SEV_WARNING,
    .title = "Strict reverse-path filtering on management",
    .rationale =
        "Strict rp_filter drops spoofed sources on the plane that reaches the outside world; "
        "management has one path, so strict costs nothing there.",
    .remediation = "sysctl -w net.ipv4.conf.<iface>.rp_filter=1 (and all) in /etc/sysctl.d.",
    .source = SYSCTL_DOC " (rp_filter); " CIS "'Ensure reverse path filtering is enabled'",
    .check = net_rpf_mgmt,
};
