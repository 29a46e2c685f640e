/* The rules of `trainpath check`: the registry that lists every rule in
 * report order, and the evaluator that runs them. Each rule is a small
 * check beside its table row (id, plane, severity, title, rationale,
 * remediation, source) in the file of its plane: rules_data.c,
 * rules_storage.c, rules_mgmt.c, rules_control.c and rules_node.c. A rule
 * reads the facts (docs/check.md) and the policy and says PASS, WARN, FAIL,
 * SKIP or UNKNOWN; it never guesses: it SKIPs when the policy has no plane
 * it is about or the node lacks what it checks (no RDMA device), and is
 * UNKNOWN when the part of the facts it needs could not be seen (named
 * unseen in facts.missing). A PASS over a part seen only in part (the
 * row's needs) is UNKNOWN too: the evaluator decides that, not each rule.
 *
 * The order is the registry's, not the files': the report, `trainpath
 * check rules` and the result document list the rules as tp_check_rules[]
 * does. A new rule is a check and its row in the file of its plane, and its
 * line here. */
#include <stdbool.h>
#include <string.h>

#include "tp/json.h"

#include "rules_int.h"

/* Report order: the implementation checklist (links, NUMA placement, host
 * tuning, storage paths, time) and then the security audit (planes and
 * listeners, firewalls, sysctls, kernel, NVMe-oF security, tenants and
 * results). */
const struct tp_check_rule *const tp_check_rules[] = {
    &tp__check_rule_net_mtu_data,
    &tp__check_rule_net_mtu_storage,
    &tp__check_rule_net_speed_data,
    &tp__check_rule_numa_nic_gpu,
    &tp__check_rule_pcie_link_full,
    &tp__check_rule_ctr_errors,
    &tp__check_rule_link_flap,
    &tp__check_rule_gpu_peermem,
    &tp__check_rule_cpu_governor,
    &tp__check_rule_mem_thp,
    &tp__check_rule_mem_hugepages_rdma,
    &tp__check_rule_iommu_pt,
    &tp__check_rule_rdma_port_active,
    &tp__check_rule_nvmeof_ctrl_loss,
    &tp__check_rule_nvmeof_multipath,
    &tp__check_rule_time_sync,
    &tp__check_rule_net_iface_plane,
    &tp__check_rule_sec_listen_plane,
    &tp__check_rule_sec_listen_wildcard_control,
    &tp__check_rule_sec_sshd_mgmt,
    &tp__check_rule_sec_fw_mgmt,
    &tp__check_rule_sec_fw_control,
    &tp__check_rule_net_rpf_mgmt,
    &tp__check_rule_net_rpf_data,
    &tp__check_rule_net_arp_data,
    &tp__check_rule_net_ipfwd,
    &tp__check_rule_net_redirects,
    &tp__check_rule_net_send_redirects,
    &tp__check_rule_net_source_route,
    &tp__check_rule_kern_kptr,
    &tp__check_rule_kern_dmesg,
    &tp__check_rule_kern_bpf,
    &tp__check_rule_kern_ptrace,
    &tp__check_rule_nvmet_any_host,
    &tp__check_rule_nvmet_dhchap,
    &tp__check_rule_nvmet_tls,
    &tp__check_rule_nvmeof_host_dhchap,
    &tp__check_rule_nvmeof_host_tls,
    &tp__check_rule_rdma_netns,
    &tp__check_rule_sec_results_secrets,
};

const size_t tp_check_nrules = sizeof tp_check_rules / sizeof tp_check_rules[0];

#define NSTATUS 5

const char *tp_check_status_name(enum tp_check_status s)
{
    static const char *const n[NSTATUS] = {"PASS", "WARN", "FAIL", "SKIP", "UNKNOWN"};
    return (unsigned)s < NSTATUS ? n[s] : "UNKNOWN";
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
        const struct tp_check_rule *rule = tp_check_rules[i];
        struct tp_check_result res = {.status = TP_CHECK_PASS};
        rule->check(facts, p ? p : &none, &res);
        if (res.status == TP_CHECK_PASS && rule->needs)
            tp__check_pass_seen(facts, rule->needs, &res);
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

static bool is_rule(const char *w, size_t n)
{
    for (size_t i = 0; i < tp_check_nrules; i++)
        if (strlen(tp_check_rules[i]->id) == n && strncmp(tp_check_rules[i]->id, w, n) == 0)
            return true;
    return false;
}

int tp_check_only_ok(const char *only, tp_error *err)
{
    if (!only || !*only)
        return tp_error_set(err, TP_EUSAGE, "--only: empty (give rule ids; trainpath check rules "
                                            "lists them)");
    for (const char *w = only;; w++) {
        size_t n = strcspn(w, ",");
        if (!is_rule(w, n))
            return tp_error_set(err, TP_EUSAGE,
                                "--only: '%.*s' is no rule (trainpath check rules lists them)",
                                (int)n, w);
        w += n;
        if (!*w)
            break;
    }
    return 0;
}

bool tp_check_only_has(const char *only, const char *id)
{
    if (!only)
        return true;
    size_t len = strlen(id);
    for (const char *w = only;; w++) {
        size_t n = strcspn(w, ",");
        if (n == len && strncmp(w, id, n) == 0)
            return true;
        w += n;
        if (!*w)
            break;
    }
    return false;
}

int tp_check_nagios(const json_t *findings)
{
    if (!json_is_array(findings))
        return 3;
    bool warn = false, unknown = false;
    size_t i;
    json_t *f;
    json_array_foreach(findings, i, f) {
        const char *st = tp__check_sget(f, "status"), *sev = tp__check_sget(f, "severity");
        if (!st) {
            unknown = true;
            continue;
        }
        if (strcmp(st, "FAIL") == 0 && sev && strcmp(sev, "critical") == 0)
            return 2;
        if (strcmp(st, "FAIL") == 0 || strcmp(st, "WARN") == 0)
            warn = true;
        else if (strcmp(st, "PASS") != 0 && strcmp(st, "SKIP") != 0)
            unknown = true; /* UNKNOWN, or a word no rule says */
    }
    return unknown ? 3 : warn ? 1 : 0;
}

json_t *tp_check_summary(const json_t *findings)
{
    int n[NSTATUS] = {0};
    size_t i;
    const json_t *f;
    json_array_foreach(findings, i, f) {
        const char *st = tp__check_sget(f, "status");
        for (int k = 0; k < NSTATUS; k++)
            if (st && strcmp(st, tp_check_status_name((enum tp_check_status)k)) == 0)
                n[k]++;
    }
    return json_pack("{s:i, s:i, s:i, s:i, s:i}", "pass", n[TP_CHECK_PASS], "warn",
                     n[TP_CHECK_WARN], "fail", n[TP_CHECK_FAIL], "skip", n[TP_CHECK_SKIP],
                     "unknown", n[TP_CHECK_UNKNOWN]);
}

const char *tp_check_nagios_word(int code)
{
    static const char *const w[] = {"OK", "WARNING", "CRITICAL", "UNKNOWN"};
    return code >= 0 && code <= 3 ? w[code] : "UNKNOWN";
}
