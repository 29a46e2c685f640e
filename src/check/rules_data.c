/* The data-plane rules: the GPU-to-GPU RDMA fabric. Jumbo frames and one
 * link speed on every port, each NIC on a GPU's NUMA node, the peer-memory
 * module GPUDirect RDMA needs, ACTIVE RDMA ports, and the sysctls of RoCE
 * ports that share a subnet (loose rp_filter, ARP answered by the port that
 * owns the address). Each rule's table row follows its check. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "rules_int.h"

static void net_mtu_data(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    tp__check_mtu(facts, p, TP_PLANE_DATA, r);
}

const struct tp_check_rule tp__check_rule_net_mtu_data = {
    .id = "NET-MTU-DATA",
    .plane = "data",
    .severity = TP_SEV_CRITICAL,
    .title = "Data-plane interfaces have jumbo frames",
    .rationale =
        "The RoCE path MTU is the largest IB MTU (256..4096) that fits the netdev MTU: at 1500 a "
        "RoCE port sends 1024-byte packets, four times the packets and interrupts for a gradient "
        "allreduce, and a port below the fabric MTU black-holes large frames.",
    .remediation =
        "Set the MTU of every data-plane port (and its VLAN parent) to the fabric MTU, e.g. "
        "`ip link set dev eth2 mtu 9000`, and persist it in the network configuration.",
    .source =
        "NVIDIA MLNX_OFED documentation, RoCE: 'RoCE MTU' (active MTU follows the netdev MTU)",
    .check = net_mtu_data,
};

static void net_speed_data(const json_t *facts, const struct tp_policy *p,
                           struct tp_check_result *r)
{
    const json_t *ifs = tp__check_plane_ifaces(facts, p, TP_PLANE_DATA, r);
    if (!ifs)
        return;
    long long top = 0, s;
    int n = 0;
    size_t i;
    json_t *ifc;
    json_array_foreach(ifs, i, ifc) {
        if (tp__check_plane_of(p, ifc) == TP_PLANE_DATA && tp__check_iget(ifc, "speed_mbps", &s) &&
            s > 0) {
            n++;
            top = s > top ? s : top;
        }
    }
    if (n < 2) {
        tp__check_skip(r, "fewer than two data-plane ports report a link speed");
        return;
    }
    struct finding f = {0};
    json_array_foreach(ifs, i, ifc) {
        if (tp__check_plane_of(p, ifc) != TP_PLANE_DATA || !tp__check_iget(ifc, "speed_mbps", &s) ||
            s <= 0)
            continue;
        if (s < top)
            tp__check_bad(&f, TP_CHECK_FAIL, "%s (data): %lld Mb/s, the fastest port %lld Mb/s",
                          tp__check_ifname(ifc), s, top);
        else
            tp__check_ok(&f, "%s (data): %lld Mb/s", tp__check_ifname(ifc), s);
    }
    tp__check_done(r, &f, "every data-plane port should run at the same speed");
}

const struct tp_check_rule tp__check_rule_net_speed_data = {
    .id = "NET-SPEED-DATA",
    .plane = "data",
    .severity = TP_SEV_WARNING,
    .title = "Data-plane ports run at one speed",
    .rationale =
        "A ring or tree collective runs at the speed of its slowest link: one port negotiated "
        "down (a bad cable, a 200G optic in a 400G rail) slows every rank of the job.",
    .remediation =
        "Find the slow port (`ethtool eth3`, `ibstat`), reseat or replace the cable or optic, and "
        "check the switch port's speed setting.",
    .source =
        "NCCL User Guide, Troubleshooting; NVIDIA DGX SuperPOD Reference Architecture "
        "(rail-optimized compute fabric)",
    .check = net_speed_data,
};

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
        if (!tp__check_iget(g, "numa_node", &gn) || gn < 0)
            continue;
        found |= gn == node;
        json_array_foreach(gpus, j, h) {
            if (j < i && tp__check_iget(h, "numa_node", &hn) && hn == gn)
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
    const json_t *gpus = tp__check_get(facts, "gpus");
    const json_t *ifs = tp__check_plane_ifaces(facts, p, TP_PLANE_DATA, r);
    if (!ifs)
        return;
    if (!json_is_array(gpus) || json_array_size(gpus) == 0) {
        if (gpus)
            tp__check_skip(r, "no GPUs");
        else
            tp__check_nofacts(r, facts, "gpus", "no GPU facts");
        return;
    }
    long long nodes;
    if (tp__check_iget(tp__check_get(facts, "cpu"), "numa_nodes", &nodes) && nodes == 1) {
        tp__check_say(r, TP_CHECK_PASS, "single NUMA node: every NIC shares it with every GPU");
        return;
    }
    char list[256];
    gpu_on_node(gpus, -1, list, sizeof list);
    if (!list[0]) {
        tp__check_skip(r, "the GPUs have no NUMA node information");
        return;
    }
    struct finding f = {0};
    int known = 0;
    size_t i;
    json_t *ifc;
    json_array_foreach(ifs, i, ifc) {
        long long node;
        if (tp__check_plane_of(p, ifc) != TP_PLANE_DATA ||
            !tp__check_iget(ifc, "numa_node", &node) || node < 0)
            continue;
        known++;
        if (gpu_on_node(gpus, node, list, sizeof list))
            tp__check_ok(&f, "%s (data): NUMA node %lld has a GPU", tp__check_ifname(ifc), node);
        else
            tp__check_bad(&f, TP_CHECK_FAIL,
                          "%s (data): NUMA node %lld has no GPU (GPUs on nodes %s)",
                          tp__check_ifname(ifc), node, list);
    }
    if (!known) {
        tp__check_skip(r, "the data-plane NICs have no NUMA node information");
        return;
    }
    tp__check_done(r, &f, "each data-plane NIC should sit on a NUMA node with a GPU");
}

const struct tp_check_rule tp__check_rule_numa_nic_gpu = {
    .id = "NUMA-NIC-GPU",
    .plane = "data",
    .severity = TP_SEV_WARNING,
    .title = "Each data-plane NIC shares a NUMA node with a GPU",
    .rationale =
        "GPUDirect RDMA moves data between the NIC and GPU memory over PCIe; a NIC on another "
        "socket sends it across the inter-socket link, or NCCL stages it through host memory, "
        "cutting bandwidth.",
    .remediation =
        "Place RDMA NICs and GPUs under the same PCIe switch or root complex (see "
        "`nvidia-smi topo -m`), or select per-GPU NICs with NCCL_IB_HCA.",
    .source =
        "NVIDIA GPUDirect RDMA documentation, 'Supported Systems'; NCCL User Guide, "
        "NCCL_NET_GDR_LEVEL",
    .check = numa_nic_gpu,
};

/* Every NIC, GPU, NVMe drive and accelerator trains its PCIe link at its
 * maximum width, and NICs, drives and accelerators at their maximum speed
 * too: a GPU's link slows down at idle to save power (NVIDIA's drop to
 * 2.5 GT/s), so its speed is not judged here, only under load. */
static void pcie_link_full(const json_t *facts, const struct tp_policy *p,
                           struct tp_check_result *r)
{
    (void)p;
    const json_t *links = tp__check_get(facts, "pcie_links");
    if (!json_is_array(links)) {
        tp__check_nofacts(r, facts, "pcie_links", "no PCIe link facts");
        return;
    }
    struct finding f = {0};
    int judged = 0;
    size_t i;
    json_t *l;
    json_array_foreach(links, i, l) {
        long long sp, msp, w, mw;
        const char *dev = tp__check_sget(l, "pci"), *kind = tp__check_sget(l, "kind");
        bool speeds = tp__check_iget(l, "speed_mts", &sp) && tp__check_iget(l, "max_speed_mts", &msp);
        bool widths = tp__check_iget(l, "width", &w) && tp__check_iget(l, "max_width", &mw);
        bool gpu = kind && strcmp(kind, "gpu") == 0;
        if (!dev || (!speeds && !widths))
            continue;
        judged++;
        if (widths && w < mw)
            tp__check_bad(&f, TP_CHECK_WARN, "%s (%s): x%lld of x%lld", dev, kind, w, mw);
        if (speeds && sp < msp && !gpu)
            tp__check_bad(&f, TP_CHECK_WARN, "%s (%s): %.1f of %.1f GT/s", dev, kind,
                          (double)sp / 1000, (double)msp / 1000);
        if ((!widths || w >= mw) && (!speeds || sp >= msp || gpu))
            tp__check_ok(&f, "%s (%s): %.1f GT/s x%lld%s", dev, kind,
                         speeds ? (double)sp / 1000 : 0.0, widths ? w : 0,
                         gpu && speeds && sp < msp ? " (a GPU idles below its speed)" : "");
    }
    if (!judged) {
        tp__check_skip(r, "no NIC, GPU, NVMe or accelerator reports its PCIe link");
        return;
    }
    tp__check_done(r, &f, "each device's PCIe link at its maximum width (and speed, but GPUs)");
}

const struct tp_check_rule tp__check_rule_pcie_link_full = {
    .id = "PCIE-LINK-FULL",
    .plane = "data",
    .severity = TP_SEV_WARNING,
    .title = "PCIe links train at their maximum speed and width",
    .rationale =
        "A NIC, drive or GPU whose link trained below its maximum (a Gen3 x8 link for a Gen4 "
        "x16 card: a bad riser, a dirty slot, a BIOS setting) moves data at a fraction of its "
        "rate with nothing logged; GPUs have trained for hours at Gen2 unnoticed.",
    .remediation =
        "Compare `lspci -vv` LnkSta with LnkCap for the device, reseat it or its riser, check "
        "the slot's BIOS link settings; for a GPU, confirm under load (validate samples the "
        "links during its tests).",
    .source = "PCI Express Base Specification, Link Capabilities and Link Status registers; "
              "Linux sysfs-bus-pci (current_link_speed, max_link_width)",
    .check = pcie_link_full,
};

/* GPUDirect RDMA: an RDMA NIC reads and writes GPU memory itself only when
 * the peer-memory module lets it register that memory; without it NCCL and
 * libfabric (FI_HMEM) stage every transfer through host memory. */
static void gpu_peermem(const json_t *facts, const struct tp_policy *p,
                        struct tp_check_result *r)
{
    (void)p;
    const json_t *gpus = tp__check_get(facts, "gpus");
    if (!json_is_array(gpus)) {
        tp__check_nofacts(r, facts, "gpus", "no GPU facts");
        return;
    }
    size_t i, nv = 0, nrdma = tp__check_rdma_devices(facts);
    json_t *g;
    json_array_foreach(gpus, i, g) {
        const char *v = tp__check_sget(g, "vendor");
        nv += v && strcmp(v, "0x10de") == 0;
    }
    const json_t *gd = tp__check_get(facts, "gpudirect");
    if (nv == 0)
        tp__check_skip(r, "no NVIDIA GPUs");
    else if (nrdma == 0)
        tp__check_skip(r, "no RDMA devices: GPUDirect RDMA does not apply");
    else if (!json_is_object(gd))
        tp__check_skip(r, "no GPUDirect facts");
    else if (tp__check_sget(gd, "peermem"))
        tp__check_say(r, TP_CHECK_PASS,
                      "%s loaded: %zu NVIDIA GPU(s) and %zu RDMA device(s) can move GPU "
                      "memory directly",
                      tp__check_sget(gd, "peermem"), nv, nrdma);
    else
        tp__check_say(r, TP_CHECK_FAIL,
                      "%zu NVIDIA GPU(s) and %zu RDMA device(s), but neither nvidia_peermem nor "
                      "nv_peer_mem is loaded: GPU data is staged through host memory unless "
                      "NCCL uses DMA-BUF",
                      nv, nrdma);
}

const struct tp_check_rule tp__check_rule_gpu_peermem = {
    .id = "GPU-PEERMEM",
    .plane = "data",
    .severity = TP_SEV_WARNING,
    .title = "RDMA NICs can reach GPU memory (nvidia_peermem)",
    .rationale =
        "GPUDirect RDMA lets the NIC read and write GPU memory; it needs the peer-memory module "
        "(nvidia_peermem, formerly nv_peer_mem) so the RDMA stack can register GPU pages. Without "
        "it NCCL, and libfabric's FI_HMEM, copy every transfer through host memory: more PCIe "
        "traffic, lower busbw, more CPU.",
    .remediation =
        "`modprobe nvidia_peermem` and load it at boot (/etc/modules-load.d/); or, with the open "
        "GPU kernel modules on a 5.12+ kernel, let NCCL use DMA-BUF (NCCL_DMABUF_ENABLE=1, the "
        "default where supported). Confirm with NCCL_DEBUG=INFO ('GPU Direct RDMA Enabled').",
    .source =
        "NVIDIA GPUDirect RDMA documentation ('Using nvidia-peermem'); NCCL User Guide, "
        "NCCL_NET_GDR_LEVEL and NCCL_DMABUF_ENABLE",
    .check = gpu_peermem,
};

/* The interface with this name, or NULL. */
static const json_t *find_iface(const json_t *facts, const char *name)
{
    size_t i;
    json_t *ifc;
    json_array_foreach(tp__check_get(facts, "interfaces"), i, ifc) {
        if (name && strcmp(tp__check_ifname(ifc), name) == 0)
            return ifc;
    }
    return NULL;
}

static void rdma_port_active(const json_t *facts, const struct tp_policy *p,
                             struct tp_check_result *r)
{
    const json_t *rdma = tp__check_get(facts, "rdma");
    if (!rdma || tp__check_rdma_devices(facts) == 0) {
        tp__check_skip(r, "no RDMA devices");
        return;
    }
    if (!p->planes[TP_PLANE_DATA].present) {
        tp__check_skip(r, "the policy has no data plane");
        return;
    }
    struct finding f = {0};
    int n = 0;
    size_t i, j;
    json_t *dev, *port;
    json_array_foreach(tp__check_get(rdma, "devices"), i, dev) {
        json_array_foreach(json_object_get(dev, "ports"), j, port) {
            const char *netdev = tp__check_sget(port, "netdev"),
                       *state = tp__check_sget(port, "state");
            const json_t *ifc = find_iface(facts, netdev);
            long long num = 0;
            if (!ifc || tp__check_plane_of(p, ifc) != TP_PLANE_DATA)
                continue;
            n++;
            tp__check_iget(port, "port", &num);
            if (state && strstr(state, "ACTIVE"))
                tp__check_ok(&f, "%s port %lld (%s, data): ACTIVE", tp__check_sget(dev, "name"),
                             num, netdev);
            else
                tp__check_bad(&f, TP_CHECK_FAIL, "%s port %lld (%s, data): %s",
                              tp__check_sget(dev, "name"), num, netdev,
                              state ? state : "state unknown");
        }
    }
    if (!n) {
        tp__check_skip(r, "no RDMA port has a data-plane netdev");
        return;
    }
    tp__check_done(r, &f, "every data-plane RDMA port should be ACTIVE");
}

const struct tp_check_rule tp__check_rule_rdma_port_active = {
    .id = "RDMA-PORT-ACTIVE",
    .plane = "data",
    .severity = TP_SEV_CRITICAL,
    .title = "Data-plane RDMA ports are ACTIVE",
    .rationale =
        "A down or initialising RDMA port removes a rail: NCCL fails to start on the HCA, or runs "
        "the job over fewer rails.",
    .remediation =
        "Check the link (`rdma link show`, `ibstat`), the cable and the switch port; on "
        "InfiniBand, that a subnet manager runs.",
    .source = "rdma(8) 'rdma link show'; ibstat(8)",
    .check = rdma_port_active,
};

static bool rpf_rdma(long long v)
{
    return v == 0 || v == 2;
}

static void net_rpf_data(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    tp__check_rpf(facts, p, TP_PLANE_DATA, rpf_rdma, "RDMA interfaces need 0 or 2", r);
}

const struct tp_check_rule tp__check_rule_net_rpf_data = {
    .id = "NET-RPF-DATA",
    .plane = "data",
    .severity = TP_SEV_CRITICAL,
    .title = "RDMA interfaces use loose or no rp_filter",
    .rationale =
        "With several RoCE ports in one subnet, replies may arrive on a port other than the one "
        "the route picks; strict rp_filter (1) drops them, so RDMA CM address resolution and "
        "connections fail or hang.",
    .remediation =
        "sysctl -w net.ipv4.conf.<iface>.rp_filter=2 on RDMA ports; the kernel uses the max of "
        "all and the interface, so net.ipv4.conf.all.rp_filter must not be 1.",
    .source =
        SYSCTL_DOC " (rp_filter); NVIDIA MLNX_OFED documentation, RoCE multiple interfaces in the "
        "same subnet",
    .check = net_rpf_data,
};

struct subnet {
    const json_t *ifc;
    uint8_t net[4];
    long long prefix;
    bool shared;
};

static void net_arp_data(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    const json_t *ifs = tp__check_plane_ifaces(facts, p, TP_PLANE_DATA, r);
    if (!ifs)
        return;
    if (!tp__check_get(facts, "sysctl")) {
        tp__check_nofacts(r, facts, "sysctl.net", "no sysctl facts");
        return;
    }
    struct subnet s[64];
    int n = 0;
    size_t i, j;
    json_t *ifc, *a;
    json_array_foreach(ifs, i, ifc) {
        if (tp__check_plane_of(p, ifc) != TP_PLANE_DATA)
            continue;
        json_array_foreach(json_object_get(ifc, "addresses"), j, a) {
            const char *addr = tp__check_sget(a, "address");
            long long pre;
            uint8_t x[4];
            if (n == 64 || !addr || !tp__check_iget(a, "prefix", &pre) || pre < 0 || pre > 32 ||
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
        const char *dev = tp__check_ifname(s[x].ifc);
        char net[INET_ADDRSTRLEN], ti[160], ta[160];
        long long ig, an;
        inet_ntop(AF_INET, s[x].net, net, sizeof net);
        bool hi = tp__check_effective(facts, dev, "arp_ignore", &ig, ti, sizeof ti);
        bool ha = tp__check_effective(facts, dev, "arp_announce", &an, ta, sizeof ta);
        if (!hi || !ha)
            tp__check_bad(&f, TP_CHECK_WARN,
                          "%s (data, %s/%lld): arp_ignore or arp_announce unknown", dev, net,
                          s[x].prefix);
        else if ((ig == 1 || ig == 2) && an == 2)
            tp__check_ok(&f, "%s (data, %s/%lld): %s, %s", dev, net, s[x].prefix, ti, ta);
        else
            tp__check_bad(&f, TP_CHECK_FAIL, "%s (data, %s/%lld shared): %s, %s", dev, net,
                          s[x].prefix, ti, ta);
    }
    if (!shared) {
        tp__check_skip(r, "no two data-plane interfaces share an IPv4 subnet");
        return;
    }
    tp__check_done(r, &f, "ports sharing a subnet need arp_ignore 1 and arp_announce 2");
}

const struct tp_check_rule tp__check_rule_net_arp_data = {
    .id = "NET-ARP-DATA",
    .plane = "data",
    .severity = TP_SEV_WARNING,
    .title = "ARP stays on the port that owns the address",
    .rationale =
        "When several RDMA ports share a subnet, Linux answers ARP for any local address on any "
        "port (ARP flux); RoCE traffic then lands on the wrong port and its QPs stall. arp_ignore "
        "1 and arp_announce 2 keep each reply on the port that owns the address.",
    .remediation =
        "sysctl -w net.ipv4.conf.<iface>.arp_ignore=1 net.ipv4.conf.<iface>.arp_announce=2 on the "
        "data-plane ports, plus source routing rules per port.",
    .source =
        SYSCTL_DOC " (arp_ignore, arp_announce); NVIDIA MLNX_OFED documentation, RoCE multiple "
        "interfaces in the same subnet",
    .check = net_arp_data,
};
