/* The rules of the node as a whole (plane "node"): the CPU governor,
 * memory (THP, hugepages), the IOMMU, time, every interface and listener
 * placed in a plane, forwarding, redirects and source routing, kernel
 * hardening, RDMA namespaces on shared nodes and secrets among results.
 * Each rule's table row follows its check. */
#include <stdio.h>
#include <string.h>

#include "rules_int.h"

/* ---- CPU, memory, IOMMU, time ---- */

static void cpu_governor(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    (void)p;
    const json_t *govs = tp__check_get(tp__check_get(facts, "cpu"), "governors");
    if (!json_is_object(govs) || json_object_size(govs) == 0) {
        tp__check_nofacts(r, facts, "cpu",
                          "no cpufreq governors (no cpufreq driver, or a virtual machine)");
        return;
    }
    struct finding f = {0};
    const char *g;
    json_t *n;
    json_object_foreach((json_t *)govs, g, n) {
        long long count = json_integer_value(n);
        if (strcmp(g, "performance") == 0)
            tp__check_ok(&f, "performance on %lld CPUs", count);
        else
            tp__check_bad(&f, TP_CHECK_FAIL, "%s on %lld CPUs", g, count);
    }
    tp__check_done(r, &f, "every CPU should run the performance governor");
}

const struct tp_check_rule tp__check_rule_cpu_governor = {
    .id = "CPU-GOVERNOR",
    .plane = "node",
    .severity = TP_SEV_WARNING,
    .title = "CPUs run the performance governor",
    .rationale =
        "Frequency scaling adds wake-up latency to the proxy threads that drive NCCL and to the "
        "data loader; synchronous steps wait for the slowest rank, so it shows up as step time "
        "jitter.",
    .remediation =
        "`cpupower frequency-set -g performance` (persist with the tuned or cpupower service); "
        "set the BIOS power profile to maximum performance.",
    .source =
        "Linux Documentation/admin-guide/pm/cpufreq.rst; NVIDIA 'Performance Tuning for Mellanox "
        "Adapters' (power management)",
    .check = cpu_governor,
};

static void mem_thp(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    if (!p->planes[TP_PLANE_DATA].present) {
        tp__check_skip(r, "the policy has no data plane");
        return;
    }
    const char *thp = tp__check_sget(tp__check_get(facts, "memory"), "thp");
    if (!thp)
        tp__check_nofacts(r, facts, "memory.thp", "no transparent hugepage facts");
    else if (strcmp(thp, "always") == 0)
        tp__check_say(r, TP_CHECK_FAIL,
                      "transparent_hugepage/enabled always; want madvise or never");
    else
        tp__check_say(r, TP_CHECK_PASS, "transparent_hugepage/enabled %s", thp);
}

const struct tp_check_rule tp__check_rule_mem_thp = {
    .id = "MEM-THP",
    .plane = "node",
    .severity = TP_SEV_WARNING,
    .title = "Transparent hugepages are not 'always'",
    .rationale =
        "With THP 'always', khugepaged compaction and page faults stall at random, adding "
        "millisecond jitter to training steps; 'madvise' leaves huge pages to the allocators that "
        "ask for them.",
    .remediation =
        "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled (persist with "
        "transparent_hugepage=madvise on the kernel command line).",
    .source = "Linux Documentation/admin-guide/mm/transhuge.rst",
    .check = mem_thp,
};

static void mem_hugepages_rdma(const json_t *facts, const struct tp_policy *p,
                               struct tp_check_result *r)
{
    (void)p;
    size_t ndev = tp__check_rdma_devices(facts);
    const json_t *mem = tp__check_get(facts, "memory");
    long long total, kb = 0;
    if (ndev == 0)
        tp__check_skip(r, "no RDMA devices");
    else if (!tp__check_iget(mem, "hugepages_total", &total))
        tp__check_nofacts(r, facts, "memory", "no hugepage facts");
    else {
        tp__check_iget(mem, "hugepage_size_kb", &kb);
        tp__check_say(r, total > 0 ? TP_CHECK_PASS : TP_CHECK_FAIL,
                      "%lld hugepages of %lld kB with %zu RDMA devices%s", total, kb, ndev,
                      total > 0 ? "" : "; want hugepages reserved for registered buffers");
    }
}

const struct tp_check_rule tp__check_rule_mem_hugepages_rdma = {
    .id = "MEM-HUGEPAGES-RDMA",
    .plane = "node",
    .severity = TP_SEV_WARNING,
    .title = "Hugepages are reserved on RDMA hosts",
    .rationale =
        "Registering buffers backed by huge pages needs fewer NIC translation entries and "
        "registers faster; without a reserve, large registrations thrash the NIC's translation "
        "cache.",
    .remediation =
        "Reserve hugepages (vm.nr_hugepages or hugepages= on the kernel command line) sized for "
        "the registered buffers.",
    .source =
        "Linux Documentation/admin-guide/mm/hugetlbpage.rst; perftest README (--use_hugepages)",
    .check = mem_hugepages_rdma,
};

static void iommu_pt(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    (void)p;
    size_t ngpu = json_array_size(tp__check_get(facts, "gpus")),
           ndev = tp__check_rdma_devices(facts);
    const char *mode = tp__check_sget(tp__check_get(facts, "iommu"), "mode");
    if (ngpu == 0 || ndev == 0) {
        tp__check_skip(r, "GPUDirect RDMA needs GPUs and RDMA devices: %zu GPUs, %zu RDMA devices",
                       ngpu, ndev);
        return;
    }
    if (!mode) {
        tp__check_nofacts(r, facts, "iommu", "no IOMMU facts");
        return;
    }
    const char *cmdline = tp__check_sget(tp__check_get(facts, "iommu"), "cmdline");
    if (strcmp(mode, "passthrough") == 0 || strcmp(mode, "off") == 0)
        tp__check_say(r, TP_CHECK_PASS, "IOMMU %s with %zu GPUs and %zu RDMA devices", mode, ngpu,
                      ndev);
    else if (strcmp(mode, "translated") == 0)
        tp__check_say(r, TP_CHECK_FAIL,
                      "IOMMU translated (cmdline: %s); want passthrough (iommu=pt) or off",
                      cmdline ? cmdline : "?");
    else
        tp__check_say(r, TP_CHECK_WARN, "IOMMU mode %s; want passthrough (iommu=pt) or off", mode);
}

const struct tp_check_rule tp__check_rule_iommu_pt = {
    .id = "IOMMU-PT",
    .plane = "node",
    .severity = TP_SEV_WARNING,
    .title = "IOMMU in passthrough for GPUDirect RDMA",
    .rationale =
        "GPUDirect RDMA needs peer-to-peer PCIe between NIC and GPU; with a translating IOMMU "
        "peer traffic is redirected to the root complex or fails, and NCCL falls back to host "
        "memory.",
    .remediation =
        "Boot with iommu=pt (intel_iommu=on iommu=pt or amd_iommu=on iommu=pt), and disable PCIe "
        "ACS on the switches between NICs and GPUs.",
    .source =
        "NCCL User Guide, Troubleshooting: 'PCI Access Control Services (ACS)' and IOMMU; NVIDIA "
        "GPUDirect RDMA documentation",
    .check = iommu_pt,
};

static void time_sync(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    (void)p;
    const json_t *t = tp__check_get(facts, "time");
    int s = tp__check_bget(t, "synchronized");
    long long us;
    char err[48] = "maxerror unknown";
    if (tp__check_iget(t, "maxerror_us", &us))
        snprintf(err, sizeof err, "maxerror %lld us", us);
    if (s < 0)
        tp__check_nofacts(r, facts, "time", "clock synchronisation state unknown");
    else if (s)
        tp__check_say(r, TP_CHECK_PASS, "clock synchronised (%s, from %s)", err,
                      tp__check_sget(t, "source") ? tp__check_sget(t, "source") : "?");
    else
        tp__check_say(r, TP_CHECK_FAIL, "clock not synchronised (%s); want NTP or PTP sync", err);
}

const struct tp_check_rule tp__check_rule_time_sync = {
    .id = "TIME-SYNC",
    .plane = "node",
    .severity = TP_SEV_CRITICAL,
    .title = "The clock is synchronised",
    .rationale =
        "Checkpoints, logs and traces from many nodes are ordered by time; a free-running clock "
        "misorders them, and authentication with time windows (Kerberos, TLS) fails.",
    .remediation =
        "Run chrony (or ptp4l/phc2sys on PTP fabrics) against the cluster's time servers.",
    .source = CIS "'Configure time synchronization'; adjtimex(2) (STA_UNSYNC, maxerror)",
    .check = time_sync,
};

/* ---- interfaces and listeners ---- */

/* operstate "unknown" is what drivers without carrier reporting (dummy,
 * tunnels, some virtual NICs) show while up; a downed one shows "down". */
static bool up_iface(const json_t *ifc)
{
    const char *s = tp__check_sget(ifc, "state");
    return s && (strcmp(s, "up") == 0 || strcmp(s, "unknown") == 0);
}

static void net_iface_plane(const json_t *facts, const struct tp_policy *p,
                            struct tp_check_result *r)
{
    const json_t *ifs = tp__check_get(facts, "interfaces");
    if (!json_is_array(ifs)) {
        tp__check_nofacts(r, facts, "interfaces", "no interface facts");
        return;
    }
    struct finding f = {0};
    size_t i;
    json_t *ifc;
    json_array_foreach(ifs, i, ifc) {
        if (tp__check_loopback_iface(ifc) || !up_iface(ifc))
            continue;
        int pl = tp__check_plane_of(p, ifc);
        const char *a =
            tp__check_sget(json_array_get(json_object_get(ifc, "addresses"), 0), "address");
        if (pl < 0)
            tp__check_bad(&f, TP_CHECK_WARN, "%s (up, %s) is in no plane", tp__check_ifname(ifc),
                          a ? a : "no address");
        else
            tp__check_ok(&f, "%s: %s", tp__check_ifname(ifc), tp__check_pname(pl));
    }
    tp__check_done(
        r, &f, "name each interface (pattern) or its subnet (CIDR) under a plane of the policy");
}

const struct tp_check_rule tp__check_rule_net_iface_plane = {
    .id = "NET-IFACE-PLANE",
    .plane = "node",
    .severity = TP_SEV_WARNING,
    .title = "Every up interface belongs to a plane",
    .rationale =
        "An interface outside the plane policy carries traffic no rule checks: a forgotten bridge "
        "or test port can join planes meant to be separate.",
    .remediation =
        "Add the interface (fnmatch pattern) or its subnet (CIDR) to a plane of the policy, or "
        "bring it down.",
    .source =
        "NVIDIA DGX SuperPOD Reference Architecture (separate compute, storage, in-band and "
        "out-of-band management networks)",
    .check = net_iface_plane,
};

static void sec_listen_plane(const json_t *facts, const struct tp_policy *p,
                             struct tp_check_result *r)
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
        if (a && tp__check_loopback_addr(a))
            continue;
        tp__check_describe(l, d, sizeof d);
        if (tp__check_wildcard(l)) {
            unsigned mask = tp__check_wildcard_planes(facts, p, tp__check_sget(l, "family")),
                     denied = 0;
            for (int pl = 0; pl < TP_PLANES; pl++)
                if ((mask & (1u << pl)) && !tp__check_service(p, pl, l))
                    denied |= 1u << pl;
            char list[128];
            tp__check_plane_list(denied ? denied : mask & ~NO_PLANE, list, sizeof list);
            if (denied)
                tp__check_bad(&f, TP_CHECK_FAIL,
                              "%s: wildcard, exposed on planes that do not allow it: %s", d, list);
            else if (mask & ~NO_PLANE)
                tp__check_ok(&f, "%s: allowed on %s", d, list);
            continue;
        }
        int pl = a ? tp__check_addr_plane(facts, p, a) : -1;
        const struct tp_service *s = pl >= 0 ? tp__check_service(p, pl, l) : NULL;
        if (pl < 0)
            tp__check_bad(&f, TP_CHECK_FAIL, "%s: address in no plane", d);
        else if (!s)
            tp__check_bad(&f, TP_CHECK_FAIL, "%s (%s plane): not a %s service", d,
                          tp__check_pname(pl), tp__check_pname(pl));
        else
            tp__check_ok(&f, "%s (%s plane): %s", d, tp__check_pname(pl), s->name);
    }
    tp__check_done(
        r, &f,
        "bind each service to an address of a plane that lists its port (a wildcard listener "
        "is exposed on every plane the node has addresses on)");
}

const struct tp_check_rule tp__check_rule_sec_listen_plane = {
    .id = "SEC-LISTEN-PLANE",
    .plane = "node",
    .severity = TP_SEV_CRITICAL,
    .title = "Every listener is on a plane that allows its port",
    .rationale =
        "A service reachable from the data or storage plane is reachable from every tenant "
        "workload on the fabric; least privilege means each port is exposed only on the plane "
        "that needs it.",
    .remediation =
        "Bind the service to an address of its plane (not 0.0.0.0 or ::) or add it to that "
        "plane's services in the policy; stop services nobody needs.",
    .source = CIS "'Ensure only approved services are listening on a network interface'",
    .needs = "listeners addresses",
    .check = sec_listen_plane,
};

/* ---- sysctls ---- */

static void net_ipfwd(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    long long v4, v6;
    if (!tp__check_sysctl(facts, "net.ipv4.ip_forward", &v4)) {
        tp__check_nofacts(r, facts, "sysctl.net", "net.ipv4.ip_forward not in the facts");
        return;
    }
    bool has6 = tp__check_sysctl(facts, "net.ipv6.conf.all.forwarding", &v6);
    if (p->role == TP_ROLE_KUBERNETES) {
        tp__check_say(r, TP_CHECK_PASS,
                      "net.ipv4.ip_forward %lld: role kubernetes routes pod traffic", v4);
        return;
    }
    struct finding f = {0};
    if (v4)
        tp__check_bad(&f, TP_CHECK_FAIL, "net.ipv4.ip_forward %lld", v4);
    else
        tp__check_ok(&f, "net.ipv4.ip_forward 0");
    if (has6 && v6)
        tp__check_bad(&f, TP_CHECK_FAIL, "net.ipv6.conf.all.forwarding %lld", v6);
    else if (has6)
        tp__check_ok(&f, "net.ipv6.conf.all.forwarding 0");
    char w[96];
    snprintf(w, sizeof w, "want 0 on a %s node (only kubernetes nodes route)",
             tp_role_name(p->role));
    tp__check_done(r, &f, w);
}

const struct tp_check_rule tp__check_rule_net_ipfwd = {
    .id = "NET-IPFWD",
    .plane = "node",
    .severity = TP_SEV_WARNING,
    .title = "IP forwarding off unless the node routes pods",
    .rationale =
        "A forwarding node can route between planes meant to be separate, e.g. from the data "
        "plane into management; only Kubernetes nodes need it, for pod traffic.",
    .remediation =
        "sysctl -w net.ipv4.ip_forward=0 net.ipv6.conf.all.forwarding=0 in /etc/sysctl.d, or set "
        "role: kubernetes in the policy.",
    .source = CIS "'Ensure ip forwarding is disabled'; " SYSCTL_DOC,
    .check = net_ipfwd,
};

/* Setting key must be 0 under all, default and every plane interface
 * (IPv4), and the IPv6 names in v6 must be 0 too. */
static void conf_zero(const json_t *facts, const struct tp_policy *p, const char *key,
                      const char *v6, struct tp_check_result *r)
{
    if (!tp__check_get(facts, "sysctl")) {
        tp__check_nofacts(r, facts, "sysctl.net", "no sysctl facts");
        return;
    }
    struct finding f = {0};
    const char *devs[2 + 128];
    int n = 0;
    devs[n++] = "all";
    devs[n++] = "default";
    size_t i;
    json_t *ifc;
    json_array_foreach(tp__check_get(facts, "interfaces"), i, ifc) {
        if (n < 130 && tp__check_plane_of(p, ifc) >= 0)
            devs[n++] = tp__check_ifname(ifc);
    }
    int seen = 0;
    for (int k = 0; k < n; k++) {
        long long v;
        if (!tp__check_sysctl_conf(facts, "ipv4", devs[k], key, &v)) {
            if (k < 2)
                continue;
            tp__check_bad(&f, TP_CHECK_WARN, "net.ipv4.conf.%s.%s unknown", devs[k], key);
            continue;
        }
        seen++;
        if (v)
            tp__check_bad(&f, TP_CHECK_FAIL, "net.ipv4.conf.%s.%s %lld", devs[k], key, v);
        else
            tp__check_ok(&f, "net.ipv4.conf.%s.%s 0", devs[k], key);
    }
    long long v;
    if (v6 && tp__check_sysctl(facts, v6, &v)) {
        seen++;
        if (v)
            tp__check_bad(&f, TP_CHECK_FAIL, "%s %lld", v6, v);
        else
            tp__check_ok(&f, "%s 0", v6);
    }
    if (!seen) {
        tp__check_nofacts(r, facts, "sysctl.net", "no %s sysctls in the facts", key);
        return;
    }
    char w[64];
    snprintf(w, sizeof w, "want %s 0", key);
    tp__check_done(r, &f, w);
}

static void net_redirects(const json_t *facts, const struct tp_policy *p,
                          struct tp_check_result *r)
{
    conf_zero(facts, p, "accept_redirects", "net.ipv6.conf.all.accept_redirects", r);
}

const struct tp_check_rule tp__check_rule_net_redirects = {
    .id = "NET-REDIRECTS",
    .plane = "node",
    .severity = TP_SEV_WARNING,
    .title = "ICMP redirects are not accepted",
    .rationale =
        "An accepted redirect rewrites the route to a peer: one forged ICMP packet moves storage "
        "or control traffic onto another host.",
    .remediation =
        "sysctl -w net.ipv4.conf.{all,default,<iface>}.accept_redirects=0 "
        "net.ipv6.conf.all.accept_redirects=0.",
    .source = CIS "'Ensure icmp redirects are not accepted'; " SYSCTL_DOC,
    .check = net_redirects,
};

static void net_send_redirects(const json_t *facts, const struct tp_policy *p,
                               struct tp_check_result *r)
{
    conf_zero(facts, p, "send_redirects", NULL, r);
}

const struct tp_check_rule tp__check_rule_net_send_redirects = {
    .id = "NET-SEND-REDIRECTS",
    .plane = "node",
    .severity = TP_SEV_WARNING,
    .title = "ICMP redirects are not sent",
    .rationale =
        "A node is not a router; redirects it sends tell peers to take paths between planes.",
    .remediation = "sysctl -w net.ipv4.conf.{all,default,<iface>}.send_redirects=0.",
    .source = CIS "'Ensure packet redirect sending is disabled'; " SYSCTL_DOC,
    .check = net_send_redirects,
};

static void net_source_route(const json_t *facts, const struct tp_policy *p,
                             struct tp_check_result *r)
{
    conf_zero(facts, p, "accept_source_route", "net.ipv6.conf.all.accept_source_route", r);
}

const struct tp_check_rule tp__check_rule_net_source_route = {
    .id = "NET-SOURCE-ROUTE",
    .plane = "node",
    .severity = TP_SEV_WARNING,
    .title = "Source-routed packets are not accepted",
    .rationale =
        "Source routing lets a sender pick the path through the node, around the plane separation "
        "and firewalls.",
    .remediation =
        "sysctl -w net.ipv4.conf.{all,default,<iface>}.accept_source_route=0 "
        "net.ipv6.conf.all.accept_source_route=0.",
    .source = CIS "'Ensure source routed packets are not accepted'; " SYSCTL_DOC,
    .check = net_source_route,
};

/* A kernel sysctl within [lo, hi]. */
static void kern_range(const json_t *facts, const char *name, long long lo, long long hi,
                       struct tp_check_result *r)
{
    long long v;
    if (!tp__check_sysctl(facts, name, &v))
        tp__check_nofacts(r, facts, "sysctl.kernel", "%s not in the facts", name);
    else if (v >= lo && v <= hi)
        tp__check_say(r, TP_CHECK_PASS, "%s %lld", name, v);
    else if (lo == hi)
        tp__check_say(r, TP_CHECK_FAIL, "%s %lld; want %lld", name, v, lo);
    else
        tp__check_say(r, TP_CHECK_FAIL, "%s %lld; want >= %lld", name, v, lo);
}

static void kern_kptr(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    (void)p;
    kern_range(facts, "kernel.kptr_restrict", 1, 2, r);
}

const struct tp_check_rule tp__check_rule_kern_kptr = {
    .id = "KERN-KPTR",
    .plane = "node",
    .severity = TP_SEV_WARNING,
    .title = "Kernel pointers are hidden",
    .rationale =
        "Kernel addresses in /proc defeat KASLR for any local user; on shared GPU nodes users run "
        "arbitrary code.",
    .remediation = "sysctl -w kernel.kptr_restrict=1 (or 2) in /etc/sysctl.d.",
    .source = KERNEL_DOC " (kptr_restrict); Lynis KRNL-6000",
    .check = kern_kptr,
};

static void kern_dmesg(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    (void)p;
    kern_range(facts, "kernel.dmesg_restrict", 1, 1, r);
}

const struct tp_check_rule tp__check_rule_kern_dmesg = {
    .id = "KERN-DMESG",
    .plane = "node",
    .severity = TP_SEV_WARNING,
    .title = "dmesg is restricted",
    .rationale =
        "The kernel log holds addresses and driver state (GPU Xid, NIC errors) that help an "
        "attacker; operators read it as root.",
    .remediation = "sysctl -w kernel.dmesg_restrict=1 in /etc/sysctl.d.",
    .source = KERNEL_DOC " (dmesg_restrict); Lynis KRNL-6000",
    .check = kern_dmesg,
};

static void kern_bpf(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    (void)p;
    kern_range(facts, "kernel.unprivileged_bpf_disabled", 1, 2, r);
}

const struct tp_check_rule tp__check_rule_kern_bpf = {
    .id = "KERN-BPF",
    .plane = "node",
    .severity = TP_SEV_WARNING,
    .title = "Unprivileged BPF is disabled",
    .rationale =
        "Unprivileged BPF has been the way in for verifier bugs and Spectre gadgets; training "
        "jobs do not need it.",
    .remediation =
        "sysctl -w kernel.unprivileged_bpf_disabled=1 (2 lets root re-enable it) in /etc/sysctl.d.",
    .source = KERNEL_DOC " (unprivileged_bpf_disabled); Lynis KRNL-6000",
    .check = kern_bpf,
};

static void kern_ptrace(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    (void)p;
    kern_range(facts, "kernel.yama.ptrace_scope", 1, 3, r);
}

const struct tp_check_rule tp__check_rule_kern_ptrace = {
    .id = "KERN-PTRACE",
    .plane = "node",
    .severity = TP_SEV_WARNING,
    .title = "ptrace is restricted",
    .rationale =
        "With ptrace_scope 0 any process can attach to another of the same user and read its "
        "memory, keys and tokens included.",
    .remediation =
        "sysctl -w kernel.yama.ptrace_scope=1 in /etc/sysctl.d (debuggers still work on children, "
        "and with CAP_SYS_PTRACE).",
    .source =
        "Linux Documentation/admin-guide/LSM/Yama.rst; " CIS "'Ensure ptrace_scope is restricted'",
    .check = kern_ptrace,
};

/* ---- tenants and results ---- */

static void rdma_netns(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    size_t ndev = tp__check_rdma_devices(facts);
    const char *mode = tp__check_sget(tp__check_get(facts, "rdma"), "netns_mode");
    if (ndev == 0)
        tp__check_skip(r, "no RDMA devices");
    else if (!p->multi_tenant)
        tp__check_say(r, TP_CHECK_PASS, "single tenant (policy): netns mode %s is fine",
                      mode ? mode : "unknown");
    else if (!mode)
        tp__check_say(r, TP_CHECK_WARN,
                      "multi-tenant policy and RDMA netns mode unknown; want exclusive");
    else if (strcmp(mode, "exclusive") == 0)
        tp__check_say(r, TP_CHECK_PASS,
                      "RDMA netns mode exclusive, %zu devices, multi-tenant policy", ndev);
    else
        tp__check_say(r, TP_CHECK_FAIL,
                      "RDMA netns mode %s: every network namespace sees all %zu RDMA devices; want "
                      "exclusive on a multi-tenant node",
                      mode, ndev);
}

const struct tp_check_rule tp__check_rule_rdma_netns = {
    .id = "RDMA-NETNS",
    .plane = "node",
    .severity = TP_SEV_CRITICAL,
    .title = "RDMA devices are per namespace on shared nodes",
    .rationale =
        "In shared netns mode every container sees every RDMA device and can open QPs on other "
        "tenants' ports; exclusive mode binds each device to one network namespace.",
    .remediation =
        "`rdma system set netns exclusive` (persist with ib_core netns_mode=0) and move each "
        "device into its tenant's namespace with `rdma dev set <dev> netns <ns>`.",
    .source = "rdma(8), rdma-system(8): 'rdma system set netns exclusive'",
    .check = rdma_netns,
};

static void sec_results_secrets(const json_t *facts, const struct tp_policy *p,
                                struct tp_check_result *r)
{
    (void)p;
    const json_t *s = tp__check_get(facts, "secrets");
    if (!json_is_array(s)) {
        tp__check_nofacts(r, facts, "secrets", "no results folders were scanned");
        return;
    }
    struct finding f = {0};
    size_t i;
    json_t *e;
    json_array_foreach(s, i, e) {
        tp__check_bad(&f, TP_CHECK_FAIL, "%s/%s: %s", tp__check_sget(e, "dir"),
                      tp__check_sget(e, "file"),
                      tp__check_sget(e, "kind") ? tp__check_sget(e, "kind") : "secret");
    }
    if (json_array_size(s) == 0)
        tp__check_ok(&f, "no secrets in the results folders");
    tp__check_done(r, &f, "move keys out of results folders and rotate them");
}

const struct tp_check_rule tp__check_rule_sec_results_secrets = {
    .id = "SEC-RESULTS-SECRETS",
    .plane = "node",
    .severity = TP_SEV_CRITICAL,
    .title = "Results folders hold no secrets",
    .rationale =
        "Results are copied, shared and attached to tickets; a private key or DH-HMAC-CHAP secret "
        "among them leaks with them.",
    .remediation =
        "Move the files out of the results folders, keep keys in /etc or a keyring, and rotate "
        "every secret that was there.",
    .source =
        CIS "'Ensure permissions on SSH private host key files are configured'; NVM Express TP "
        "8006 (DH-HMAC-CHAP secrets)",
    .needs = "secrets",
    .check = sec_results_secrets,
};


/* ---- the counters of the tests in the results folders ---- */

/* The causes of one kind named by the tests' counters, as bad items of
 * status st; whether the results were scanned at all. */
static bool causes(const json_t *facts, struct tp_check_result *r, struct finding *f,
                   const char *cause, enum tp_check_status st)
{
    const json_t *cs = tp__check_get(facts, "counter_causes");
    if (!json_is_array(cs)) {
        tp__check_nofacts(r, facts, "counter_causes",
                          "no results folders were read (--results DIR, or the policy's)");
        return false;
    }
    size_t i;
    json_t *e;
    json_array_foreach(cs, i, e) {
        const char *c = tp__check_sget(e, "cause");
        if (c && strcmp(c, cause) == 0)
            tp__check_bad(f, st, "%s (%s, %s): %s", tp__check_sget(e, "file"),
                          tp__check_sget(e, "command"), tp__check_sget(e, "side"),
                          tp__check_sget(e, "evidence"));
    }
    return true;
}

static void ctr_errors(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    (void)p;
    struct finding f = {0};
    if (!causes(facts, r, &f, "errors", TP_CHECK_FAIL))
        return;
    if (!f.bad[0])
        tp__check_ok(&f, "no error counter moved during the tests in the results folders");
    tp__check_done(r, &f, "no error counter (symbol, CRC, link integrity, AER) moves in a test");
}

const struct tp_check_rule tp__check_rule_ctr_errors = {
    .id = "CTR-ERRORS",
    .plane = "node",
    .severity = TP_SEV_CRITICAL,
    .title = "No error counter moved during the tests",
    .rationale =
        "Symbol, CRC, link-integrity and PCIe AER errors during a test are a physical fault in "
        "the making (a cable, an optic, a riser) long before the link fails; a clean soak window "
        "has none.",
    .remediation =
        "Read the test's counters (its document's results.counters, `report html`), find the "
        "device and counter named, and reseat or replace the cable, optic or card.",
    .source = "IB PMA PortCounters (symbol_error, link_error_recovery); IEEE 802.3 FCS errors; "
              "PCI Express AER; docs/counters.md",
    .check = ctr_errors,
};

static void link_flap(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    (void)p;
    struct finding f = {0};
    if (!causes(facts, r, &f, "flap", TP_CHECK_WARN))
        return;
    if (!f.bad[0])
        tp__check_ok(&f, "no link went down during the tests in the results folders");
    tp__check_done(r, &f, "no carrier change or link_downed during a test");
}

const struct tp_check_rule tp__check_rule_link_flap = {
    .id = "LINK-FLAP",
    .plane = "node",
    .severity = TP_SEV_WARNING,
    .title = "No link went down during the tests",
    .rationale =
        "A carrier that changed (or an IB link_downed) during a test stalls every collective "
        "through that port and retrains the link; a flapping port is a failing cable or a switch "
        "fault.",
    .remediation =
        "Find the interface in the test's counters, check its cable and the switch port's log, "
        "and watch carrier_changes over a soak.",
    .source = "Linux sysfs-class-net (carrier_changes); IB PMA PortCounters (LinkDownedCounter); "
              "docs/counters.md",
    .check = link_flap,
};
