/* The control-plane rules: scheduler and orchestration services bound to
 * control-plane addresses, not to a wildcard, and control-plane input
 * denied by default. Each rule's table row follows its check. */
#include "rules_int.h"

static void sec_listen_wildcard_control(const json_t *facts, const struct tp_policy *p,
                                        struct tp_check_result *r)
{
    const json_t *ls = tp__check_get(facts, "listeners");
    const struct tp_policy_plane *cp = &p->planes[TP_PLANE_CONTROL];
    if (!cp->present || cp->nservices == 0) {
        tp__check_skip(r, "the policy lists no control-plane services");
        return;
    }
    if (!json_is_array(ls)) {
        tp__check_nofacts(r, facts, "listeners", "no listener facts");
        return;
    }
    struct finding f = {0};
    size_t i;
    json_t *l;
    json_array_foreach(ls, i, l) {
        const char *a = tp__check_sget(l, "address");
        const struct tp_service *s = tp__check_service(p, TP_PLANE_CONTROL, l);
        char d[256];
        if (!s || (a && tp__check_loopback_addr(a)))
            continue;
        tp__check_describe(l, d, sizeof d);
        if (tp__check_wildcard(l))
            tp__check_bad(&f, TP_CHECK_FAIL, "%s: control service %s on a wildcard address", d,
                          s->name);
        else
            tp__check_ok(&f, "%s: control service %s", d, s->name);
    }
    if (!f.good[0] && f.status == TP_CHECK_PASS)
        tp__check_ok(&f, "no control-plane service is listening");
    tp__check_done(r, &f, "bind control services to control-plane addresses");
}

const struct tp_check_rule tp__check_rule_sec_listen_wildcard_control = {
    .id = "SEC-LISTEN-WILDCARD-CONTROL",
    .plane = "control",
    .severity = TP_SEV_WARNING,
    .title = "Control-plane services are not bound to a wildcard address",
    .rationale =
        "slurmd, kubelet or etcd on 0.0.0.0 becomes reachable on every interface added later, the "
        "data plane included, without anyone changing their configuration.",
    .remediation =
        "Bind each control service to the node's control-plane address (slurm.conf "
        "CommunicationParameters, kubelet --address, etcd --listen-client-urls).",
    .source = CIS "'Ensure only approved services are listening on a network interface'",
    .needs = "listeners",
    .check = sec_listen_wildcard_control,
};

static void sec_fw_control(const json_t *facts, const struct tp_policy *p,
                           struct tp_check_result *r)
{
    tp__check_firewall(facts, p, TP_PLANE_CONTROL, r);
}

const struct tp_check_rule tp__check_rule_sec_fw_control = {
    .id = "SEC-FW-CONTROL",
    .plane = "control",
    .severity = TP_SEV_CRITICAL,
    .title = "Control-plane input is default-deny",
    .rationale =
        "Schedulers and orchestration (slurmctld, kube-apiserver, etcd) hold the keys to every "
        "node; only their ports should be open on the control plane.",
    .remediation =
        "Add an nftables input chain with policy drop that accepts only the control services "
        "listed in the policy on the control-plane interfaces.",
    .source = CIS "'Ensure nftables default deny firewall policy'; nft(8)",
    .check = sec_fw_control,
};
