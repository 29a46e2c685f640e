/* Internal to the rules of trainpath check (src/check/rules*.c): what the
 * plane files share. The evidence a rule gathers (rules_evidence.c); the
 * facts as the rules read them, interfaces and listeners placed in planes
 * (rules_facts.c); the checks more than one plane runs with its own plane
 * (rules_shared.c); and each rule's row, defined beside its check in the
 * file of its plane, for the registry in rules.c. */
#ifndef TP_CHECK_RULES_INT_H
#define TP_CHECK_RULES_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "tp/check.h"

/* ---- evidence (rules_evidence.c) ---- */

struct finding {
    enum tp_check_status status; /* worst so far: PASS, WARN or FAIL */
    char bad[1024];              /* what is wrong; reported when status is not PASS */
    char good[1024];             /* what was checked; reported on PASS */
};

/* Record something checked that is as wanted. */
void tp__check_ok(struct finding *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Record something wrong (s is WARN or FAIL); the finding takes the worst. */
void tp__check_bad(struct finding *f, enum tp_check_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The result of a finding: what is wrong followed by what was wanted, or
 * what was checked. A cut marks its end with "...". */
void tp__check_done(struct tp_check_result *r, const struct finding *f, const char *want);

/* The result is one sentence, with status s. */
void tp__check_say(struct tp_check_result *r, enum tp_check_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The result is one sentence saying why the rule does not apply. */
#define tp__check_skip(r, ...) tp__check_say(r, TP_CHECK_SKIP, __VA_ARGS__)

/* The part of the facts the rule needs is null or absent: UNKNOWN when
 * facts.missing names it unseen (the facts could not see it: the sentence,
 * then the part and its reason), else a SKIP with the sentence (the node
 * lacks it). part is a name of facts.missing ("interfaces", "sysctl.net"). */
void tp__check_nofacts(struct tp_check_result *r, const json_t *facts, const char *part,
                       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* True when facts.missing names part, or a part above or below it
 * ("sysctl" for "sysctl.net", "addresses.inet" for "addresses"), as
 * unseen; why gets "part: reason" of the first such entry. */
bool tp__check_unseen(const json_t *facts, const char *part, char *why, size_t n);

/* A PASS over the space-separated parts needs (the row's needs) is UNKNOWN
 * when one of them is unseen: what was seen passed, but not all was seen. */
void tp__check_pass_seen(const json_t *facts, const char *needs, struct tp_check_result *r);

/* ---- facts (rules_facts.c) ---- */

#define NO_PLANE (1u << TP_PLANES) /* an address outside every plane */

/* The member key of o, NULL when absent or JSON null. */
const json_t *tp__check_get(const json_t *o, const char *key);

/* The string member key of o, NULL when absent or not a string. */
const char *tp__check_sget(const json_t *o, const char *key);

/* A number, as a JSON integer or as the string a sysctl file holds. */
bool tp__check_iget(const json_t *o, const char *key, long long *v);

/* 1 true, 0 false, -1 unknown (null or absent) */
int tp__check_bget(const json_t *o, const char *key);

/* The sysctl name (sysctl(8)'s dotted name) of the facts as a number. */
bool tp__check_sysctl(const json_t *facts, const char *name, long long *v);

/* net.<fam>.conf.<dev>.<key>; sysctl(8) writes the dots of a VLAN name
 * (eth0.42) as slashes, so try that form first. */
bool tp__check_sysctl_conf(const json_t *facts, const char *fam, const char *dev, const char *key,
                           long long *v);

/* The effective value of a per-interface IPv4 setting where the kernel
 * takes the max of all and the interface (rp_filter, arp_ignore,
 * arp_announce); the text says "1 (all 0, eth2 1)". False when neither is
 * known. */
bool tp__check_effective(const json_t *facts, const char *dev, const char *key, long long *v,
                         char *text, size_t n);

/* The name of an interface of the facts, "?" when it has none. */
const char *tp__check_ifname(const json_t *ifc);

/* The interface is a loopback device. */
bool tp__check_loopback_iface(const json_t *ifc);

/* The plane of an interface (tp_policy_plane_of), -1 for loopback. */
int tp__check_plane_of(const struct tp_policy *p, const json_t *ifc);

/* The name of plane number plane. */
const char *tp__check_pname(int plane);

/* The facts' interfaces when plane pl has any on this node; otherwise NULL
 * after a SKIP that says why (no interface facts, no such plane in the
 * policy, or no interface of the node in it). */
const json_t *tp__check_plane_ifaces(const json_t *facts, const struct tp_policy *p, int pl,
                                     struct tp_check_result *r);

/* The number of RDMA devices in the facts. */
size_t tp__check_rdma_devices(const json_t *facts);

/* The address is in 127.0.0.0/8 or is ::1. */
bool tp__check_loopback_addr(const char *a);

/* The plane of a local address: that of the interface holding it, else that
 * of the policy CIDR holding it, else -1. */
int tp__check_addr_plane(const json_t *facts, const struct tp_policy *p, const char *addr);

/* The planes (bit per plane, NO_PLANE for addresses in none) where a
 * wildcard socket of this family is reachable: every non-loopback address
 * of the node; an IPv6 wildcard also takes IPv4 unless bound v6-only, which
 * the facts do not say, so it counts as both. */
unsigned tp__check_wildcard_planes(const json_t *facts, const struct tp_policy *p,
                                   const char *family);

/* The listener is bound to a wildcard address (0.0.0.0, ::, *). */
bool tp__check_wildcard(const json_t *l);

/* "tcp/22 (sshd) on 0.0.0.0", "tcp/22 (pid 811) on [::]" */
void tp__check_describe(const json_t *l, char *buf, size_t n);

/* The service of plane pl that allows this listener, or NULL. */
const struct tp_service *tp__check_service(const struct tp_policy *p, int pl, const json_t *l);

/* "management, data" from a plane mask */
void tp__check_plane_list(unsigned mask, char *buf, size_t n);

/* The listeners, when the facts also have the interfaces that place them
 * in planes; else NULL, with r skipped saying which part is missing. */
const json_t *tp__check_placed_listeners(const json_t *facts, struct tp_check_result *r);

/* ---- checks of several planes (rules_shared.c) ---- */

/* The MTU rule of plane pl: every interface of the plane at or above the
 * policy's mtu_min for it. */
void tp__check_mtu(const json_t *facts, const struct tp_policy *p, int pl,
                   struct tp_check_result *r);

/* The firewall rule of plane pl: an nftables input chain that denies by
 * default each address family the plane's interfaces use, and no rule of
 * such a chain that accepts everything arriving on one of them. */
void tp__check_firewall(const json_t *facts, const struct tp_policy *p, int pl,
                        struct tp_check_result *r);

/* The rp_filter rule of plane pl: good says whether an effective value is
 * right there; on the data plane only RDMA interfaces count. want ends the
 * evidence of a failure. */
void tp__check_rpf(const json_t *facts, const struct tp_policy *p, int pl, bool (*good)(long long),
                   const char *want, struct tp_check_result *r);

/* ---- the rows, by plane file; rules.c lists them in report order ---- */

/* where the sources of the rows come from */
#define CIS "CIS Debian Linux 12 Benchmark, "
#define SYSCTL_DOC "Linux Documentation/networking/ip-sysctl.rst"
#define KERNEL_DOC "Linux Documentation/admin-guide/sysctl/kernel.rst"

/* rules_data.c */
extern const struct tp_check_rule tp__check_rule_net_mtu_data;
extern const struct tp_check_rule tp__check_rule_net_speed_data;
extern const struct tp_check_rule tp__check_rule_numa_nic_gpu;
extern const struct tp_check_rule tp__check_rule_pcie_link_full;
extern const struct tp_check_rule tp__check_rule_gpu_peermem;
extern const struct tp_check_rule tp__check_rule_rdma_port_active;
extern const struct tp_check_rule tp__check_rule_net_rpf_data;
extern const struct tp_check_rule tp__check_rule_net_arp_data;

/* rules_storage.c */
extern const struct tp_check_rule tp__check_rule_net_mtu_storage;
extern const struct tp_check_rule tp__check_rule_nvmeof_ctrl_loss;
extern const struct tp_check_rule tp__check_rule_nvmeof_multipath;
extern const struct tp_check_rule tp__check_rule_nvmet_any_host;
extern const struct tp_check_rule tp__check_rule_nvmet_dhchap;
extern const struct tp_check_rule tp__check_rule_nvmet_tls;
extern const struct tp_check_rule tp__check_rule_nvmeof_host_dhchap;
extern const struct tp_check_rule tp__check_rule_nvmeof_host_tls;

/* rules_mgmt.c */
extern const struct tp_check_rule tp__check_rule_sec_sshd_mgmt;
extern const struct tp_check_rule tp__check_rule_sec_fw_mgmt;
extern const struct tp_check_rule tp__check_rule_net_rpf_mgmt;

/* rules_control.c */
extern const struct tp_check_rule tp__check_rule_sec_listen_wildcard_control;
extern const struct tp_check_rule tp__check_rule_sec_fw_control;

/* rules_node.c */
extern const struct tp_check_rule tp__check_rule_cpu_governor;
extern const struct tp_check_rule tp__check_rule_mem_thp;
extern const struct tp_check_rule tp__check_rule_mem_hugepages_rdma;
extern const struct tp_check_rule tp__check_rule_iommu_pt;
extern const struct tp_check_rule tp__check_rule_time_sync;
extern const struct tp_check_rule tp__check_rule_net_iface_plane;
extern const struct tp_check_rule tp__check_rule_sec_listen_plane;
extern const struct tp_check_rule tp__check_rule_net_ipfwd;
extern const struct tp_check_rule tp__check_rule_net_redirects;
extern const struct tp_check_rule tp__check_rule_net_send_redirects;
extern const struct tp_check_rule tp__check_rule_net_source_route;
extern const struct tp_check_rule tp__check_rule_kern_kptr;
extern const struct tp_check_rule tp__check_rule_kern_dmesg;
extern const struct tp_check_rule tp__check_rule_kern_bpf;
extern const struct tp_check_rule tp__check_rule_kern_ptrace;
extern const struct tp_check_rule tp__check_rule_rdma_netns;
extern const struct tp_check_rule tp__check_rule_sec_results_secrets;
extern const struct tp_check_rule tp__check_rule_ctr_errors;
extern const struct tp_check_rule tp__check_rule_link_flap;

#endif
