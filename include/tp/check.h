/* trainpath check: an implementation checklist and a plane-aware security
 * audit of one node. Three parts:
 *
 *  - facts: what the node is, collected into one JSON object (interfaces,
 *    routes, listeners, nftables, sysctls, RDMA, NVMe-oF host and target,
 *    CPU, NUMA placement, memory, IOMMU, time); from this host or from a
 *    snapshot folder (--root) laid out as the kernel lays out /proc, /sys
 *    and configfs. docs/check.md lists every field.
 *  - the policy: the node's planes (management, control, data, storage),
 *    each with its CIDRs, interfaces and the services it may expose, and
 *    the node's role (YAML, errors at file:line:column and key path).
 *  - the rules: a table; each rule reads the facts and the policy and says
 *    PASS, WARN, FAIL, SKIP (does not apply to this node) or UNKNOWN (the
 *    facts it needs could not be seen) with its evidence.
 *
 * The audits put the three together for one node or a fleet of them, into
 * a result document whose verdict is a Nagios code. */
#ifndef TP_CHECK_H
#define TP_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <jansson.h>

#include "tp/error.h"

/* ---- facts ---- */

/* Collect the facts of this host (root NULL or "/") or of the snapshot under
 * root, into a new JSON object (*facts). A part that cannot be read is not
 * an error: it is named in facts.missing with the reason. Either the node
 * lacks it (no nvmet configfs, no RDMA device: a rule SKIPs), or the entry
 * says "unseen": true, a part every Linux node has that could not be read
 * (no sys/class/net, no proc/sys, no permission for nftables): a rule that
 * needs it is UNKNOWN. TP_EUSAGE when root is not a folder, or is not a
 * snapshot (neither proc/ nor sys/ under it); TP_ENOMEM. */
int tp_check_facts(const char *root, json_t **facts, tp_error *err);

/* Look through the folders for secrets that must not sit among results:
 * PEM private keys, OpenSSH private keys, trainpath key files, NVMe
 * DH-HMAC-CHAP secrets ("DHHC-1:"). Sets facts.secrets to the list found
 * ({dir, file, kind}; never the secret). Files over 1 MiB are skipped; a
 * folder that cannot be read (or does not exist) is listed in facts.missing
 * as unseen "secrets", so SEC-RESULTS-SECRETS cannot PASS without it. */
int tp_check_scan_secrets(json_t *facts, const char *const *dirs, int n, tp_error *err);

/* Read the result documents in the folders (three levels down at most,
 * symlinks not followed) and set facts.counter_causes to every cause their
 * counters name (docs/counters.md): {file, command, side ("this node",
 * "the server node" or "host HOST"), cause, evidence (its first counters
 * and deltas)};
 * an empty list when none does. Files that are not result documents are
 * passed over. TP_ENOMEM only. */
int tp_check_scan_counters(json_t *facts, const char *const *dirs, int n, tp_error *err);

/* ---- policy ---- */

enum tp_plane { TP_PLANE_MGMT, TP_PLANE_CONTROL, TP_PLANE_DATA, TP_PLANE_STORAGE, TP_PLANES };

/* "management", "control", "data", "storage"; parse returns -1 if unknown. */
const char *tp_plane_name(enum tp_plane p);
int tp_plane_parse(const char *s);

enum tp_role { TP_ROLE_COMPUTE, TP_ROLE_STORAGE, TP_ROLE_LOGIN, TP_ROLE_KUBERNETES };
const char *tp_role_name(enum tp_role r);

#define TP_POLICY_MAX 32

struct tp_cidr {
    int family;          /* AF_INET or AF_INET6 */
    uint8_t addr[16];    /* network order; 4 bytes used for AF_INET */
    unsigned prefix;     /* 0..32 or 0..128 */
};

/* True when the textual address a (IPv4 or IPv6) lies inside c. */
bool tp_cidr_contains(const struct tp_cidr *c, const char *a);

struct tp_service {
    char name[32];       /* "sshd", "slurmd", "nvmet-tcp", ... (a label) */
    char proto[4];       /* "tcp" or "udp" */
    unsigned port_lo, port_hi; /* one port: lo == hi */
};

struct tp_policy_plane {
    bool present;                       /* the policy names this plane */
    struct tp_cidr cidrs[TP_POLICY_MAX];
    int ncidrs;
    char ifaces[TP_POLICY_MAX][32];     /* interface names; fnmatch(3) patterns */
    int nifaces;
    struct tp_service services[TP_POLICY_MAX]; /* what this plane may expose */
    int nservices;
    unsigned mtu_min;                   /* default 9000 on data and storage, else 0 */
    bool rdma;                          /* data or storage plane: RDMA traffic (RoCE/IB) */
};

struct tp_policy {
    char file[4096];
    enum tp_role role;
    bool multi_tenant;                  /* several tenants share this host */
    struct tp_policy_plane planes[TP_PLANES];
    char results_dirs[4][4096];         /* folders that must hold no secrets */
    int nresults_dirs;
};

/* Read a policy file (YAML) into p, which is zeroed first. Errors name the
 * file, line, column and key path; unknown keys and unknown planes are
 * errors; CIDRs of two planes that overlap are an error naming both.
 * TP_EUSAGE on any error, p then partly filled. */
int tp_policy_parse(const char *path, struct tp_policy *p, tp_error *err);

/* The plane an interface belongs to (by name, then by any of its addresses
 * in facts), or -1. iface is one entry of facts.interfaces. */
int tp_policy_plane_of(const struct tp_policy *p, const json_t *iface);

/* ---- rules ---- */

/* SKIP: the rule does not apply to this node (no such plane, no RDMA
 * device). UNKNOWN: it applies, but the facts it needs could not be seen
 * (unseen in facts.missing), so it can say neither PASS nor FAIL. */
enum tp_check_status {
    TP_CHECK_PASS,
    TP_CHECK_WARN,
    TP_CHECK_FAIL,
    TP_CHECK_SKIP,
    TP_CHECK_UNKNOWN,
};
enum tp_check_severity { TP_SEV_WARNING, TP_SEV_CRITICAL };

/* "PASS", "WARN", "FAIL", "SKIP", "UNKNOWN"; "warning", "critical". */
const char *tp_check_status_name(enum tp_check_status s);
const char *tp_check_severity_name(enum tp_check_severity s);

struct tp_check_result {
    enum tp_check_status status;
    char evidence[1024];   /* what was seen, naming interfaces, ports, values */
};

struct tp_check_rule {
    const char *id;        /* "NET-RPF-DATA" */
    const char *plane;     /* "management", "control", "data", "storage" or "node" */
    enum tp_check_severity severity; /* of a FAIL */
    const char *title;     /* one line */
    const char *rationale;
    const char *remediation;
    const char *source;    /* where the recommendation comes from */
    /* the parts of the facts (names as in facts.missing, space-separated)
     * whose partial view could hide a failure: a PASS becomes UNKNOWN when
     * one of them is unseen (listeners without proc/net/udp); NULL: none */
    const char *needs;
    void (*check)(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r);
};

/* The rules, in report order, and their number. Each row is defined beside
 * its check in the file of its plane (src/check/rules_<plane>.c); this
 * registry puts them in the order of the report and the result document. */
extern const struct tp_check_rule *const tp_check_rules[];
extern const size_t tp_check_nrules;

/* Evaluate every rule: a new array of findings, one per rule, in table
 * order: {id, plane, severity, title, status, evidence, rationale,
 * remediation, source}. A rule's PASS is UNKNOWN when a part of its needs
 * is unseen in facts.missing. */
json_t *tp_check_evaluate(const json_t *facts, const struct tp_policy *p);

/* Whether only is a list of rule ids separated by commas, each a row of
 * tp_check_rules. 0, or TP_EUSAGE with err naming the first word that is
 * no rule (or an empty list). */
int tp_check_only_ok(const char *only, tp_error *err);

/* Whether the rule id is in only (tp_check_only_ok's list); every rule is
 * when only is NULL. */
bool tp_check_only_has(const char *only, const char *id);

/* The Nagios exit code of findings, worst first as check_multi and Icinga
 * rank them (CRITICAL > UNKNOWN > WARNING > OK): 2 (critical) when a
 * critical rule FAILs, else 3 (unknown) when a rule is UNKNOWN, findings is
 * not an array or a finding's status is not a known word, else 1 (warning)
 * when any rule FAILs or WARNs, else 0. So an audit that could not see
 * what a rule needs never passes, nor hides behind a warning. */
int tp_check_nagios(const json_t *findings);

/* "OK", "WARNING", "CRITICAL" or "UNKNOWN" for the Nagios code 0..3;
 * "UNKNOWN" for any other code. */
const char *tp_check_nagios_word(int code);

/* The findings counted by status: a new object {pass, warn, fail, skip,
 * unknown}. NULL when out of memory. */
json_t *tp_check_summary(const json_t *findings);

/* ---- audits ---- */

/* What `trainpath check` audits: one node (tp_check_audit) or a fleet
 * (tp_check_fleet). */
struct tp_check_opts {
    const char *policy;         /* the policy file; NULL: none, the node rules only
                                 * (tp_check_audit; a fleet needs one) */
    const char *root;           /* collect the facts under this folder (NULL or "/": this host) */
    const char *facts;          /* or read them from this file (tp_check_load_facts) */
    const char *const *results; /* folders to scan for secrets besides the policy's; each
                                 * must be a folder (TP_EUSAGE), and not with facts */
    int nresults;
    const char *const *fleet;   /* tp_check_fleet: the hosts' facts files */
    int nfleet;
    const char *only;           /* rule ids separated by commas: only these rules are
                                 * reported and decide the verdict (tp_check_only_ok);
                                 * NULL: every rule */
};

/* The facts in the file at path: a facts object (trainpath check facts
 * --json), or a check result document holding one in results.facts. 0 with
 * *facts a new reference; on error TP_EUSAGE with err naming the file (and
 * the line and column where it is not JSON), *facts untouched. */
int tp_check_load_facts(const char *path, json_t **facts, tp_error *err);

/* The result document's "config" of o: {policy, root, facts}, or with
 * o->fleet {policy, fleet: [files]}. A new object; NULL when out of
 * memory. */
json_t *tp_check_config_json(const struct tp_check_opts *o);

/* Audit one node: check the inputs named in o (the o->results folders
 * exist, not with o->facts), read the policy o->policy into p (not read,
 * and no plane rule applies, without one), collect the facts under o->root
 * or read them from o->facts, scan the policy's and o->results' folders for
 * secrets (collected facts only), and evaluate every rule. Fills doc's
 * "results" with {host, role (with a policy), nagios: {code, word},
 * summary, findings, facts}; the node's Nagios code is results.nagios.code.
 * Returns 0, or on error a TP_E* code (TP_EUSAGE for a policy, root, facts
 * file or results folder that cannot be used; TP_ENOMEM) with err naming
 * it, and doc's results left empty. */
int tp_check_audit(const struct tp_check_opts *o, struct tp_policy *p, json_t *doc,
                   tp_error *err);

/* Audit the hosts' facts files o->fleet (tp_check_load_facts) under the
 * policy o->policy, read into p. Fills doc's "results" with {hosts: [{host,
 * file, nagios, summary}], by_rule: one per rule in table order, {id,
 * plane, severity, title, fail: [{host, evidence}], warn: [...], pass,
 * skip}, nagios: {code, word} of the worst host}. A host is named by its
 * facts' host, else by its file. Returns 0, or on error a TP_E* code
 * (TP_EUSAGE: no or a bad policy, a file without facts; TP_ENOMEM) with err
 * naming the file; doc's results then hold the hosts audited before it, and
 * no nagios. */
int tp_check_fleet(const struct tp_check_opts *o, struct tp_policy *p, json_t *doc,
                   tp_error *err);

/* Finish the document of an audit (tp_check_audit or tp_check_fleet
 * returned rc, err its message) and decide the process's exit status, the
 * one place that does: 0..3, results.nagios.code, when the audit ran (the
 * status is ok: the verdict is in the results); 3 (UNKNOWN) when it could
 * not (bad input, memory: status says why); 128 + the signal when it was
 * interrupted (tp/intr.h). The status's exit_code is set to the same
 * number, so the document and the process never disagree. */
int tp_check_finish(json_t *doc, int rc, const char *message);

#endif
