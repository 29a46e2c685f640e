/* Tests for the check rules and the plane helpers. The facts are a
 * synthetic GPU node written as JSON (single quotes, turned into double
 * ones before json_loads): management eth0, control eth1, two RoCE ports
 * eth2/eth3 sharing one data subnet, storage eth4, an NVMe/TCP and an
 * NVMe/RDMA controller, an nvmet target, two GPUs on two NUMA nodes. Its
 * policy, built in C, makes every rule PASS; each case then changes one
 * thing in the facts or the policy and expects one rule to WARN, FAIL or
 * SKIP, with evidence that names what it saw; with the part it needs
 * named unseen in facts.missing (the facts could not see it), UNKNOWN
 * instead of SKIP, and never PASS. A coverage test checks that
 * every rule of the table has a PASS, a FAIL or WARN, and a SKIP case. The
 * audits behind the command line (one node, a fleet, facts files) run on
 * the snapshot fixtures of tests/fixtures/check. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "tp/check.h"
#include "tp_test.h"

#define FIXTURES TP_SOURCE_ROOT "/tests/fixtures/check"

/* ---- building facts and policies ---- */

/* JSON written with single quotes. */
static json_t *loads(const char *sq)
{
    char *s = strdup(sq);
    assert_non_null(s);
    for (char *c = s; *c; c++)
        if (*c == '\'')
            *c = '"';
    json_error_t e;
    json_t *j = json_loads(s, JSON_DECODE_ANY, &e);
    free(s);
    if (!j)
        fail_msg("bad test JSON (%s, column %d): %s", e.text, e.column, sq);
    return j;
}

static const char base_facts[] =
    "{'schema': 'trainpath.facts/1', 'root': '/', 'host': 'node17', 'missing': [],"
    " 'interfaces': ["
    "  {'name': 'lo', 'ifindex': 1, 'state': 'unknown', 'mtu': 65536, 'mac': '00:00:00:00:00:00',"
    "   'loopback': true, 'driver': null, 'speed_mbps': null, 'vlan': null, 'numa_node': null,"
    "   'pci': null, 'rdma_device': null, 'addresses': ["
    "     {'family': 'inet', 'address': '127.0.0.1', 'prefix': 8},"
    "     {'family': 'inet6', 'address': '::1', 'prefix': 128}]},"
    "  {'name': 'eth0', 'ifindex': 2, 'state': 'up', 'mtu': 1500, 'loopback': false,"
    "   'driver': 'ixgbe', 'speed_mbps': 10000, 'vlan': null, 'numa_node': 0,"
    "   'pci': '0000:01:00.0', 'rdma_device': null, 'addresses': ["
    "     {'family': 'inet', 'address': '10.0.0.5', 'prefix': 24}]},"
    "  {'name': 'eth1', 'ifindex': 3, 'state': 'up', 'mtu': 1500, 'loopback': false,"
    "   'driver': 'ixgbe', 'speed_mbps': 10000, 'vlan': null, 'numa_node': 0,"
    "   'pci': '0000:01:00.1', 'rdma_device': null, 'addresses': ["
    "     {'family': 'inet', 'address': '10.10.0.5', 'prefix': 24}]},"
    "  {'name': 'eth2', 'ifindex': 4, 'state': 'up', 'mtu': 9000, 'loopback': false,"
    "   'driver': 'mlx5_core', 'speed_mbps': 400000, 'vlan': null, 'numa_node': 0,"
    "   'pci': '0000:17:00.0', 'rdma_device': 'mlx5_0', 'addresses': ["
    "     {'family': 'inet', 'address': '10.1.0.5', 'prefix': 24}]},"
    "  {'name': 'eth3', 'ifindex': 5, 'state': 'up', 'mtu': 9000, 'loopback': false,"
    "   'driver': 'mlx5_core', 'speed_mbps': 400000, 'vlan': null, 'numa_node': 1,"
    "   'pci': '0000:97:00.0', 'rdma_device': 'mlx5_1', 'addresses': ["
    "     {'family': 'inet', 'address': '10.1.0.6', 'prefix': 24}]},"
    "  {'name': 'eth4', 'ifindex': 6, 'state': 'up', 'mtu': 9000, 'loopback': false,"
    "   'driver': 'mlx5_core', 'speed_mbps': 100000, 'vlan': null, 'numa_node': 0,"
    "   'pci': '0000:18:00.0', 'rdma_device': null, 'addresses': ["
    "     {'family': 'inet', 'address': '10.2.0.5', 'prefix': 24}]}],"
    " 'routes': [{'family': 'inet', 'dst': '10.1.0.0/24', 'gateway': null, 'dev': 'eth2',"
    "             'metric': 0}],"
    " 'listeners': ["
    "  {'proto': 'tcp', 'family': 'inet', 'address': '10.0.0.5', 'port': 22, 'wildcard': false,"
    "   'inode': 101, 'pid': 811, 'process': 'sshd'},"
    "  {'proto': 'tcp', 'family': 'inet', 'address': '10.10.0.5', 'port': 6818,"
    "   'wildcard': false, 'inode': 102, 'pid': 900, 'process': 'slurmd'},"
    "  {'proto': 'tcp', 'family': 'inet', 'address': '10.2.0.5', 'port': 4420,"
    "   'wildcard': false, 'inode': 103, 'pid': null, 'process': null},"
    "  {'proto': 'udp', 'family': 'inet', 'address': '127.0.0.1', 'port': 323,"
    "   'wildcard': false, 'inode': 104, 'pid': 700, 'process': 'chronyd'}],"
    " 'nftables': {'ruleset': {'nftables': ["
    "   {'metainfo': {'version': '1.0.6', 'json_schema_version': 1}},"
    "   {'table': {'family': 'inet', 'name': 'filter', 'handle': 1}},"
    "   {'chain': {'family': 'inet', 'table': 'filter', 'name': 'input', 'handle': 1,"
    "              'type': 'filter', 'hook': 'input', 'prio': 0, 'policy': 'drop'}},"
    "   {'rule': {'family': 'inet', 'table': 'filter', 'chain': 'input', 'handle': 2, 'expr': ["
    "     {'match': {'op': '==', 'left': {'meta': {'key': 'iifname'}}, 'right': 'lo'}},"
    "     {'accept': null}]}},"
    "   {'rule': {'family': 'inet', 'table': 'filter', 'chain': 'input', 'handle': 3, 'expr': ["
    "     {'match': {'op': 'in', 'left': {'ct': {'key': 'state'}},"
    "                'right': ['established', 'related']}},"
    "     {'accept': null}]}},"
    "   {'rule': {'family': 'inet', 'table': 'filter', 'chain': 'input', 'handle': 4, 'expr': ["
    "     {'match': {'op': '==', 'left': {'meta': {'key': 'iifname'}},"
    "                'right': {'set': ['eth2', 'eth3']}}},"
    "     {'counter': {'packets': 0, 'bytes': 0}}, {'accept': null}]}},"
    "   {'rule': {'family': 'inet', 'table': 'filter', 'chain': 'input', 'handle': 5, 'expr': ["
    "     {'match': {'op': '==', 'left': {'meta': {'key': 'iifname'}}, 'right': 'eth0'}},"
    "     {'match': {'op': '==', 'left': {'payload': {'protocol': 'tcp', 'field': 'dport'}},"
    "                'right': 22}},"
    "     {'accept': null}]}}]},"
    "  'input_chains': [{'family': 'inet', 'table': 'filter', 'chain': 'input',"
    "                    'policy': 'drop', 'priority': 0}]},"
    " 'rdma': {'netns_mode': 'exclusive', 'devices': ["
    "   {'name': 'mlx5_0', 'node_guid': 'b859:9f03:00a1:0001', 'ports': [{'port': 1,"
    "    'state': 'ACTIVE', 'link_layer': 'Ethernet', 'netdev': 'eth2',"
    "    'gid_types': ['RoCE v1', 'RoCE v2']}]},"
    "   {'name': 'mlx5_1', 'node_guid': 'b859:9f03:00a1:0002', 'ports': [{'port': 1,"
    "    'state': 'ACTIVE', 'link_layer': 'Ethernet', 'netdev': 'eth3',"
    "    'gid_types': ['RoCE v1', 'RoCE v2']}]}]},"
    " 'nvme_hosts': ["
    "   {'ctrl': 'nvme1', 'transport': 'tcp', 'address': 'traddr=10.2.0.9,trsvcid=4420',"
    "    'subsysnqn': 'nqn.2024-01.io.example:ckpt', 'state': 'live', 'dhchap_secret': true,"
    "    'dhchap_ctrl_secret': true, 'tls_key': true, 'ctrl_loss_tmo': 600,"
    "    'reconnect_delay': 10},"
    "   {'ctrl': 'nvme2', 'transport': 'rdma', 'address': 'traddr=10.2.0.10,trsvcid=4420',"
    "    'subsysnqn': 'nqn.2024-01.io.example:data', 'state': 'live', 'dhchap_secret': true,"
    "    'dhchap_ctrl_secret': true, 'tls_key': null, 'ctrl_loss_tmo': -1,"
    "    'reconnect_delay': 10}],"
    " 'nvme_multipath': true,"
    " 'nvmet': {"
    "   'subsystems': [{'nqn': 'nqn.2024-01.io.example:scratch', 'allow_any_host': false,"
    "                   'allowed_hosts': ['nqn.2014-08.org.nvmexpress:uuid:host1']}],"
    "   'hosts': [{'nqn': 'nqn.2014-08.org.nvmexpress:uuid:host1', 'dhchap_key': true,"
    "              'dhchap_ctrl_key': true, 'dhchap_hash': 'hmac(sha256)'}],"
    "   'ports': [{'id': '1', 'trtype': 'tcp', 'adrfam': 'ipv4', 'traddr': '10.2.0.5',"
    "              'trsvcid': '4420', 'tsas': 'tls1.3', 'treq': 'required',"
    "              'subsystems': ['nqn.2024-01.io.example:scratch']},"
    "             {'id': '2', 'trtype': 'rdma', 'adrfam': 'ipv4', 'traddr': '10.2.0.5',"
    "              'trsvcid': '4421', 'tsas': null, 'treq': 'not specified',"
    "              'subsystems': ['nqn.2024-01.io.example:scratch']}]},"
    " 'cpu': {'count': 64, 'governors': {'performance': 64}, 'smt': 'on', 'numa_nodes': 2},"
    " 'gpus': [{'pci': '0000:19:00.0', 'vendor': '0x10de', 'class': '0x030200', 'numa_node': 0},"
    "          {'pci': '0000:99:00.0', 'vendor': '0x10de', 'class': '0x030200', 'numa_node': 1}],"
    " 'pcie_links': ["
    "  {'pci': '0000:17:00.0', 'kind': 'nic', 'speed_mts': 32000, 'max_speed_mts': 32000,"
    "   'width': 16, 'max_width': 16},"
    "  {'pci': '0000:19:00.0', 'kind': 'gpu', 'speed_mts': 2500, 'max_speed_mts': 32000,"
    "   'width': 16, 'max_width': 16},"
    "  {'pci': '0000:5e:00.0', 'kind': 'nvme', 'speed_mts': 16000, 'max_speed_mts': 16000,"
    "   'width': 4, 'max_width': 4}],"
    " 'counter_causes': [],"
    " 'gpudirect': {'peermem': 'nvidia_peermem', 'nvidia_driver': '550.54.15'},"
    " 'memory': {'hugepages_total': 1024, 'hugepage_size_kb': 2048, 'thp': 'madvise'},"
    " 'iommu': {'mode': 'passthrough', 'cmdline': 'intel_iommu=on iommu=pt', 'groups': 80},"
    " 'time': {'synchronized': true, 'source': 'adjtimex', 'maxerror_us': 16000},"
    " 'secrets': []}";

static void set_sysctl(json_t *s, const char *fam, const char *dev, const char *key, int v)
{
    char name[128], val[16];
    snprintf(name, sizeof name, "net.%s.conf.%s.%s", fam, dev, key);
    snprintf(val, sizeof val, "%d", v);
    json_object_set_new(s, name, json_string(val));
}

/* The sysctls of a well-configured node: strict rp_filter on management,
 * control and storage, loose on the RoCE ports, ARP pinned on the RoCE
 * ports, no redirects, no source routing, no forwarding. */
static json_t *base_sysctl(void)
{
    static const struct {
        const char *dev;
        int rp, arp_ignore, arp_announce;
    } d[] = {{"all", 0, 0, 0},  {"default", 0, 0, 0}, {"lo", 0, 0, 0},  {"eth0", 1, 0, 0},
             {"eth1", 1, 0, 0}, {"eth2", 2, 1, 2},    {"eth3", 2, 1, 2}, {"eth4", 1, 0, 0}};
    json_t *s = json_object();
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) {
        set_sysctl(s, "ipv4", d[i].dev, "rp_filter", d[i].rp);
        set_sysctl(s, "ipv4", d[i].dev, "arp_ignore", d[i].arp_ignore);
        set_sysctl(s, "ipv4", d[i].dev, "arp_announce", d[i].arp_announce);
        set_sysctl(s, "ipv4", d[i].dev, "accept_redirects", 0);
        set_sysctl(s, "ipv4", d[i].dev, "send_redirects", 0);
        set_sysctl(s, "ipv4", d[i].dev, "accept_source_route", 0);
    }
    static const char *const rest[][2] = {
        {"net.ipv4.ip_forward", "0"},
        {"net.ipv6.conf.all.forwarding", "0"},
        {"net.ipv6.conf.all.accept_redirects", "0"},
        {"net.ipv6.conf.all.accept_source_route", "0"},
        {"kernel.kptr_restrict", "1"},
        {"kernel.dmesg_restrict", "1"},
        {"kernel.unprivileged_bpf_disabled", "2"},
        {"kernel.yama.ptrace_scope", "1"},
    };
    for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++)
        json_object_set_new(s, rest[i][0], json_string(rest[i][1]));
    return s;
}

static json_t *facts_new(void)
{
    json_t *f = loads(base_facts);
    json_object_set_new(f, "sysctl", base_sysctl());
    return f;
}

static void cidr(struct tp_cidr *c, const char *text)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s", text);
    char *slash = strchr(buf, '/');
    assert_non_null(slash);
    *slash = '\0';
    memset(c, 0, sizeof *c);
    c->prefix = (unsigned)atoi(slash + 1);
    c->family = strchr(buf, ':') ? AF_INET6 : AF_INET;
    assert_int_equal(inet_pton(c->family, buf, c->addr), 1);
}

static void plane(struct tp_policy *p, enum tp_plane pl, const char *net, const char *iface,
                  unsigned mtu_min)
{
    struct tp_policy_plane *pp = &p->planes[pl];
    pp->present = true;
    cidr(&pp->cidrs[pp->ncidrs++], net);
    snprintf(pp->ifaces[pp->nifaces++], sizeof pp->ifaces[0], "%s", iface);
    pp->mtu_min = mtu_min;
}

static void service(struct tp_policy *p, enum tp_plane pl, const char *name, const char *proto,
                    unsigned lo, unsigned hi)
{
    struct tp_policy_plane *pp = &p->planes[pl];
    struct tp_service *s = &pp->services[pp->nservices++];
    snprintf(s->name, sizeof s->name, "%s", name);
    snprintf(s->proto, sizeof s->proto, "%s", proto);
    s->port_lo = lo;
    s->port_hi = hi;
}

static void policy_new(struct tp_policy *p)
{
    memset(p, 0, sizeof *p);
    snprintf(p->file, sizeof p->file, "test-policy.yaml");
    p->role = TP_ROLE_COMPUTE;
    p->multi_tenant = true;
    plane(p, TP_PLANE_MGMT, "10.0.0.0/24", "eth0", 0);
    service(p, TP_PLANE_MGMT, "sshd", "tcp", 22, 22);
    service(p, TP_PLANE_MGMT, "node_exporter", "tcp", 9100, 9100);
    plane(p, TP_PLANE_CONTROL, "10.10.0.0/24", "eth1", 0);
    service(p, TP_PLANE_CONTROL, "slurmd", "tcp", 6818, 6818);
    plane(p, TP_PLANE_DATA, "10.1.0.0/24", "eth[23]", 9000);
    p->planes[TP_PLANE_DATA].rdma = true;
    plane(p, TP_PLANE_STORAGE, "10.2.0.0/24", "eth4", 9000);
    service(p, TP_PLANE_STORAGE, "nvmet-tcp", "tcp", 4420, 4421);
}

/* Set (value JSON) or delete (value NULL) the member at path "a/b/0/c";
 * "-" as the last step appends to an array. */
static void patch(json_t *root, const char *path, const char *value)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    json_t *parent = root;
    char *key = buf, *slash;
    while ((slash = strchr(key, '/'))) {
        *slash = '\0';
        json_t *next = json_is_array(parent) ? json_array_get(parent, strtoul(key, NULL, 10))
                                             : json_object_get(parent, key);
        if (!next)
            fail_msg("patch %s: no %s", path, key);
        parent = next;
        key = slash + 1;
    }
    if (json_is_object(parent)) {
        if (value)
            json_object_set_new(parent, key, loads(value));
        else
            json_object_del(parent, key);
    } else if (json_is_array(parent)) {
        if (strcmp(key, "-") == 0)
            json_array_append_new(parent, loads(value));
        else if (value)
            json_array_set_new(parent, strtoul(key, NULL, 10), loads(value));
        else
            json_array_remove(parent, strtoul(key, NULL, 10));
    } else {
        fail_msg("patch %s: parent is not an object or array", path);
    }
}

static const json_t *finding(const json_t *findings, const char *id)
{
    size_t i;
    json_t *f;
    json_array_foreach(findings, i, f) {
        if (strcmp(json_string_value(json_object_get(f, "id")), id) == 0)
            return f;
    }
    fail_msg("no finding %s", id);
    return NULL;
}

static const char *field(const json_t *f, const char *key)
{
    const char *s = json_string_value(json_object_get(f, key));
    assert_non_null(s);
    return s;
}

/* ---- one change, one rule ---- */

static void no_data_plane(struct tp_policy *p)
{
    p->planes[TP_PLANE_DATA].present = false;
}

static void no_control_plane(struct tp_policy *p)
{
    p->planes[TP_PLANE_CONTROL].present = false;
}

static void no_mgmt_plane(struct tp_policy *p)
{
    p->planes[TP_PLANE_MGMT].present = false;
}

static void no_control_services(struct tp_policy *p)
{
    p->planes[TP_PLANE_CONTROL].nservices = 0;
}

static void kubernetes(struct tp_policy *p)
{
    p->role = TP_ROLE_KUBERNETES;
}

static void single_tenant(struct tp_policy *p)
{
    p->multi_tenant = false;
}

static void data_not_rdma(struct tp_policy *p)
{
    p->planes[TP_PLANE_DATA].rdma = false;
}

static void no_mtu_min(struct tp_policy *p)
{
    p->planes[TP_PLANE_DATA].mtu_min = 0;
}

static void exporter_everywhere(struct tp_policy *p)
{
    for (int pl = TP_PLANE_CONTROL; pl < TP_PLANES; pl++)
        service(p, (enum tp_plane)pl, "node_exporter", "tcp", 9100, 9100);
}

struct rcase {
    const char *id;
    enum tp_check_status want;
    const char *needle; /* in the evidence, or NULL */
    void (*policy)(struct tp_policy *);
    const char *patch[4][2]; /* {path, JSON value or NULL to delete} */
};

#define PASS TP_CHECK_PASS
#define WARN TP_CHECK_WARN
#define FAIL TP_CHECK_FAIL
#define SKIP TP_CHECK_SKIP
#define UNKNOWN TP_CHECK_UNKNOWN

/* facts.missing saying the facts could not see a part */
#define UNSEEN(part) {"missing", "[{'part': '" part "', 'reason': 'no such file', 'unseen': true}]"}

static const char wild_slurmd[] = "{'proto': 'tcp', 'family': 'inet', 'address': '0.0.0.0', "
                                  "'port': 6818, 'wildcard': true, 'pid': 900, 'process': "
                                  "'slurmd'}";
static const char accept_eth0[] =
    "{'rule': {'family': 'inet', 'table': 'filter', 'chain': 'input', 'handle': 9, 'expr': ["
    "{'match': {'op': '==', 'left': {'meta': {'key': 'iifname'}}, 'right': 'eth0'}},"
    "{'counter': null}, {'accept': null}]}}";
static const char accept_eth_star[] =
    "{'rule': {'family': 'inet', 'table': 'filter', 'chain': 'input', 'handle': 9, 'expr': ["
    "{'match': {'op': '==', 'left': {'meta': {'key': 'iifname'}}, 'right': 'eth*'}},"
    "{'accept': null}]}}";
static const char drop_all[] =
    "{'rule': {'family': 'inet', 'table': 'filter', 'chain': 'input', 'handle': 10, 'expr': ["
    "{'counter': null}, {'drop': null}]}}";

static const struct rcase cases[] = {
    /* the checklist */
    {"NET-MTU-DATA", FAIL, "eth2 (data): MTU 1500 < 9000", NULL, {{"interfaces/3/mtu", "1500"}}},
    {"NET-MTU-DATA", WARN, "eth3 (data): MTU unknown", NULL, {{"interfaces/4/mtu", "null"}}},
    {"NET-MTU-DATA", SKIP, "no interface facts", NULL, {{"interfaces", "null"}}},
    {"NET-MTU-DATA", SKIP, "no data plane", no_data_plane, {{0}}},
    {"NET-MTU-DATA", SKIP, "no mtu_min", no_mtu_min, {{0}}},
    {"NET-MTU-STORAGE", FAIL, "eth4 (storage): MTU 1500 < 9000", NULL,
     {{"interfaces/5/mtu", "1500"}}},
    {"NET-MTU-STORAGE", SKIP, "no interface of this node is in the storage plane", NULL,
     {{"interfaces/5", NULL}}},
    {"NET-SPEED-DATA", FAIL, "eth3 (data): 200000 Mb/s, the fastest port 400000 Mb/s", NULL,
     {{"interfaces/4/speed_mbps", "200000"}}},
    {"NET-SPEED-DATA", SKIP, "fewer than two", NULL, {{"interfaces/4/speed_mbps", "-1"}}},
    {"NUMA-NIC-GPU", FAIL, "eth3 (data): NUMA node 1 has no GPU (GPUs on nodes 0)", NULL,
     {{"gpus/1/numa_node", "0"}}},
    {"NUMA-NIC-GPU", PASS, "single NUMA node", NULL,
     {{"gpus/1/numa_node", "0"}, {"cpu/numa_nodes", "1"}}},
    {"NUMA-NIC-GPU", SKIP, "no GPU facts", NULL, {{"gpus", "null"}}},
    {"NUMA-NIC-GPU", SKIP, "no GPUs", NULL, {{"gpus", "[]"}}},
    {"NUMA-NIC-GPU", SKIP, "the GPUs have no NUMA", NULL,
     {{"gpus/0/numa_node", "-1"}, {"gpus/1/numa_node", "null"}}},
    {"PCIE-LINK-FULL", PASS, "0000:19:00.0 (gpu): 2.5 GT/s x16 (a GPU idles below its speed)",
     NULL, {{0}}},
    {"PCIE-LINK-FULL", WARN, "0000:17:00.0 (nic): 16.0 of 32.0 GT/s", NULL,
     {{"pcie_links/0/speed_mts", "16000"}}},
    {"PCIE-LINK-FULL", WARN, "0000:19:00.0 (gpu): x8 of x16", NULL,
     {{"pcie_links/1/width", "8"}}},
    {"PCIE-LINK-FULL", WARN, "0000:5e:00.0 (nvme): x2 of x4", NULL,
     {{"pcie_links/2/width", "2"}}},
    {"PCIE-LINK-FULL", PASS, "0000:5e:00.0 (nvme): 16.0 GT/s x4", NULL,
     {{"pcie_links/0/width", "null"}, {"pcie_links/0/speed_mts", "null"}}},
    {"PCIE-LINK-FULL", SKIP, "no NIC, GPU, NVMe or accelerator", NULL, {{"pcie_links", "[]"}}},
    {"PCIE-LINK-FULL", SKIP, "no PCIe link facts", NULL, {{"pcie_links", "null"}}},
    {"CTR-ERRORS", FAIL, "v/net-bw.json (net bw, this node): eth2 rx_crc_errors_phy +5", NULL,
     {{"counter_causes", "[{'file': 'v/net-bw.json', 'command': 'net bw', 'side': 'this node',"
                         " 'cause': 'errors', 'evidence': 'eth2 rx_crc_errors_phy +5'}]"}}},
    {"CTR-ERRORS", PASS, "no error counter moved", NULL,
     {{"counter_causes", "[{'file': 'v/a.json', 'command': 'coll', 'side': 'this node',"
                         " 'cause': 'loss', 'evidence': 'Tcp RetransSegs +3'}]"}}},
    {"CTR-ERRORS", SKIP, "no results folders were read", NULL, {{"counter_causes", "null"}}},
    {"LINK-FLAP", WARN, "v/net-bw.json (net bw, the server node): eth2 carrier_changes +2", NULL,
     {{"counter_causes", "[{'file': 'v/net-bw.json', 'command': 'net bw',"
                         " 'side': 'the server node', 'cause': 'flap',"
                         " 'evidence': 'eth2 carrier_changes +2'}]"}}},
    {"LINK-FLAP", PASS, "no link went down", NULL, {{0}}},
    {"LINK-FLAP", SKIP, "no results folders were read", NULL, {{"counter_causes", "null"}}},
    {"GPU-PEERMEM", FAIL, "neither nvidia_peermem nor nv_peer_mem is loaded", NULL,
     {{"gpudirect/peermem", "null"}}},
    {"GPU-PEERMEM", SKIP, "no RDMA devices", NULL, {{"rdma", "null"}}},
    {"GPU-PEERMEM", SKIP, "no NVIDIA GPUs", NULL,
     {{"gpus/0/vendor", "'0x1002'"}, {"gpus/1/vendor", "'0x1002'"}}},
    {"GPU-PEERMEM", SKIP, "no GPUDirect facts", NULL, {{"gpudirect", "null"}}},
    {"CPU-GOVERNOR", FAIL, "powersave on 32 CPUs", NULL,
     {{"cpu/governors", "{'performance': 32, 'powersave': 32}"}}},
    {"CPU-GOVERNOR", SKIP, "no cpufreq", NULL, {{"cpu/governors", "{}"}}},
    {"CPU-GOVERNOR", SKIP, NULL, NULL, {{"cpu", "null"}}},
    {"MEM-THP", FAIL, "always", NULL, {{"memory/thp", "'always'"}}},
    {"MEM-THP", PASS, "never", NULL, {{"memory/thp", "'never'"}}},
    {"MEM-THP", SKIP, NULL, NULL, {{"memory", "null"}}},
    {"MEM-THP", SKIP, "no data plane", no_data_plane, {{0}}},
    {"MEM-HUGEPAGES-RDMA", FAIL, "0 hugepages of 2048 kB with 2 RDMA devices", NULL,
     {{"memory/hugepages_total", "0"}}},
    {"MEM-HUGEPAGES-RDMA", SKIP, "no RDMA devices", NULL, {{"rdma", "null"}}},
    {"MEM-HUGEPAGES-RDMA", SKIP, "no hugepage facts", NULL, {{"memory", "null"}}},
    {"IOMMU-PT", FAIL, "IOMMU translated", NULL, {{"iommu/mode", "'translated'"}}},
    {"IOMMU-PT", WARN, "IOMMU mode unknown", NULL, {{"iommu/mode", "'unknown'"}}},
    {"IOMMU-PT", PASS, "IOMMU off", NULL, {{"iommu/mode", "'off'"}}},
    {"IOMMU-PT", SKIP, "no IOMMU facts", NULL, {{"iommu", "null"}}},
    {"IOMMU-PT", SKIP, "0 GPUs", NULL, {{"gpus", "[]"}}},
    {"RDMA-PORT-ACTIVE", FAIL, "mlx5_1 port 1 (eth3, data): DOWN", NULL,
     {{"rdma/devices/1/ports/0/state", "'DOWN'"}}},
    {"RDMA-PORT-ACTIVE", SKIP, "no RDMA devices", NULL, {{"rdma", "null"}}},
    {"NVMEOF-CTRL-LOSS", FAIL, "nvme1 (tcp traddr=10.2.0.9,trsvcid=4420): ctrl_loss_tmo 30 s",
     NULL, {{"nvme_hosts/0/ctrl_loss_tmo", "30"}}},
    {"NVMEOF-CTRL-LOSS", WARN, "nvme2 (rdma traddr=10.2.0.10,trsvcid=4420): ctrl_loss_tmo "
                               "unknown",
     NULL, {{"nvme_hosts/1/ctrl_loss_tmo", "null"}}},
    {"NVMEOF-CTRL-LOSS", SKIP, "no NVMe host facts", NULL, {{"nvme_hosts", "null"}}},
    {"NVMEOF-CTRL-LOSS", SKIP, "no NVMe-oF controllers", NULL, {{"nvme_hosts", "[]"}}},
    {"NVMEOF-CTRL-LOSS", SKIP, "no NVMe-oF controllers", NULL,
     {{"nvme_hosts/0/transport", "'loop'"}, {"nvme_hosts/1", NULL}}},
    {"NVMEOF-MULTIPATH", FAIL, "nvme_core multipath N", NULL, {{"nvme_multipath", "false"}}},
    {"NVMEOF-MULTIPATH", SKIP, "multipath parameter not in the facts", NULL,
     {{"nvme_multipath", "null"}}},
    {"NVMEOF-MULTIPATH", SKIP, NULL, NULL, {{"nvme_hosts", "[]"}, {"nvme_multipath", "false"}}},
    {"TIME-SYNC", FAIL, "clock not synchronised (maxerror 16000 us)", NULL,
     {{"time/synchronized", "false"}}},
    {"TIME-SYNC", SKIP, NULL, NULL, {{"time", "null"}}},
    {"TIME-SYNC", SKIP, NULL, NULL, {{"time/synchronized", "null"}}},
    {"NET-IFACE-PLANE", WARN, "docker0 (up, 172.17.0.1) is in no plane", NULL,
     {{"interfaces/-", "{'name': 'docker0', 'state': 'up', 'mtu': 1500, 'loopback': false,"
                       " 'addresses': [{'family': 'inet', 'address': '172.17.0.1', 'prefix': "
                       "16}]}"}}},
    {"NET-IFACE-PLANE", PASS, "eth4: storage", NULL,
     {{"interfaces/-", "{'name': 'docker0', 'state': 'down', 'mtu': 1500, 'loopback': false,"
                       " 'addresses': []}"}}},
    {"NET-IFACE-PLANE", SKIP, NULL, NULL, {{"interfaces", NULL}}},

    /* listeners */
    {"SEC-LISTEN-PLANE", FAIL, "tcp/6818 (slurmd) on 0.0.0.0: wildcard, exposed on planes that "
                               "do not allow it: management, data, storage",
     NULL, {{"listeners/1", wild_slurmd}}},
    {"SEC-LISTEN-PLANE", FAIL, "tcp/8080 (python3) on 10.1.0.5 (data plane): not a data service",
     NULL,
     {{"listeners/-", "{'proto': 'tcp', 'family': 'inet', 'address': '10.1.0.5', 'port': 8080,"
                      " 'wildcard': false, 'pid': 1234, 'process': 'python3'}"}}},
    {"SEC-LISTEN-PLANE", FAIL, "udp/5353 (pid 42) on 192.168.7.5: address in no plane", NULL,
     {{"listeners/-", "{'proto': 'udp', 'family': 'inet', 'address': '192.168.7.5', "
                      "'port': 5353, 'wildcard': false, 'pid': 42, 'process': null}"}}},
    {"SEC-LISTEN-PLANE", PASS, "tcp/9100 (node_exporter) on [::]: allowed on management, "
                               "control, data, storage",
     exporter_everywhere,
     {{"listeners/-", "{'proto': 'tcp', 'family': 'inet6', 'address': '::', 'port': 9100, "
                      "'wildcard': true, 'pid': 77, 'process': 'node_exporter'}"}}},
    {"SEC-LISTEN-PLANE", PASS, "tcp/22 (sshd) on [::ffff:10.0.0.5] (management plane): sshd", NULL,
     {{"listeners/0/address", "'::ffff:10.0.0.5'"}, {"listeners/0/family", "'inet6'"}}},
    {"SEC-LISTEN-PLANE", PASS, NULL, NULL,
     {{"listeners/-", "{'proto': 'tcp', 'family': 'inet6', 'address': '::1', 'port': 631,"
                      " 'wildcard': false, 'pid': 5, 'process': 'cupsd'}"}}},
    {"SEC-LISTEN-PLANE", SKIP, "no listener facts", NULL, {{"listeners", "null"}}},
    /* the facts could not see: UNKNOWN, naming the part and why */
    {"SEC-LISTEN-PLANE", UNKNOWN, "could not see it (listeners: no such file)", NULL,
     {{"listeners", "null"}, UNSEEN("listeners")}},
    /* a PASS over listeners seen in part (no proc/net/udp) cannot stand */
    {"SEC-LISTEN-PLANE", UNKNOWN, "what they saw passed", NULL, {UNSEEN("listeners")}},
    {"SEC-SSHD-MGMT", UNKNOWN, "could not see all of it (addresses.inet", NULL,
     {UNSEEN("addresses.inet")}},
    /* what was seen failing still FAILs */
    {"SEC-SSHD-MGMT", FAIL, "tcp/22 (sshd) on 10.1.0.5 (data)", NULL,
     {{"listeners/0/address", "'10.1.0.5'"}, UNSEEN("listeners")}},
    /* absent from the node (not unseen): still SKIP */
    {"SEC-LISTEN-PLANE", SKIP, "no listener facts", NULL,
     {{"listeners", "null"}, {"missing", "[{'part': 'listeners', 'reason': 'r'}]"}}},
    {"NET-IFACE-PLANE", UNKNOWN, "interfaces: no such file", NULL,
     {{"interfaces", "null"}, UNSEEN("interfaces")}},
    {"TIME-SYNC", UNKNOWN, "time: no such file", NULL, {{"time", "null"}, UNSEEN("time")}},
    {"KERN-KPTR", UNKNOWN, "sysctl: no such file", NULL, {{"sysctl", "null"}, UNSEEN("sysctl")}},
    {"KERN-PTRACE", SKIP, "kernel.yama.ptrace_scope not in the facts", NULL,
     {{"sysctl/kernel.yama.ptrace_scope", NULL}, UNSEEN("sysctl.net")}},
    {"NET-REDIRECTS", UNKNOWN, "sysctl.net: no such file", NULL,
     {{"sysctl", "null"}, UNSEEN("sysctl.net")}},
    {"SEC-FW-MGMT", UNKNOWN, "nftables: no such file", NULL,
     {{"nftables", "null"}, UNSEEN("nftables")}},
    {"SEC-FW-MGMT", SKIP, "no management plane", no_mgmt_plane,
     {{"nftables", "null"}, UNSEEN("nftables")}},
    {"MEM-HUGEPAGES-RDMA", UNKNOWN, "memory: no such file", NULL,
     {{"memory", "null"}, UNSEEN("memory")}},
    {"CPU-GOVERNOR", UNKNOWN, "cpu.count", NULL, {{"cpu", "null"}, UNSEEN("cpu.count")}},
    {"GPU-PEERMEM", UNKNOWN, "gpus: no such file", NULL, {{"gpus", "null"}, UNSEEN("gpus")}},
    {"SEC-RESULTS-SECRETS", UNKNOWN, "/r/x: Permission denied", NULL,
     {{"missing", "[{'part': 'secrets', 'reason': '/r/x: Permission denied', 'unseen': true}]"}}},
    {"SEC-RESULTS-SECRETS", FAIL, "private key", NULL,
     {{"secrets", "[{'dir': '/r', 'file': 'id.pem', 'kind': 'private key'}]"},
      UNSEEN("secrets")}},
    {"SEC-RESULTS-SECRETS", UNKNOWN, "secrets: no such file", NULL,
     {{"secrets", "null"}, UNSEEN("secrets")}},
    {"SEC-LISTEN-WILDCARD-CONTROL", FAIL, "tcp/6818 (slurmd) on 0.0.0.0: control service slurmd "
                                          "on a wildcard address",
     NULL, {{"listeners/1", wild_slurmd}}},
    {"SEC-LISTEN-WILDCARD-CONTROL", PASS, "no control-plane service is listening", NULL,
     {{"listeners/1", NULL}}},
    {"SEC-LISTEN-WILDCARD-CONTROL", SKIP, "no listener facts", NULL, {{"listeners", NULL}}},
    {"SEC-LISTEN-WILDCARD-CONTROL", SKIP, "no control-plane services", no_control_services,
     {{0}}},
    {"SEC-SSHD-MGMT", FAIL, "tcp/22 (sshd) on 10.1.0.5 (data)", NULL,
     {{"listeners/0/address", "'10.1.0.5'"}}},
    {"SEC-SSHD-MGMT", FAIL, "tcp/22 (sshd) on 0.0.0.0: wildcard, reachable on control, data, "
                            "storage",
     NULL, {{"listeners/0/address", "'0.0.0.0'"}, {"listeners/0/wildcard", "true"}}},
    {"SEC-SSHD-MGMT", WARN, "wildcard (only management addresses today)", NULL,
     {{"listeners/0/address", "'0.0.0.0'"},
      {"listeners/0/wildcard", "true"},
      {"interfaces", "[{'name': 'eth0', 'state': 'up', 'loopback': false, 'addresses': "
                     "[{'family': 'inet', 'address': '10.0.0.5', 'prefix': 24}]}]"}}},
    {"SEC-SSHD-MGMT", FAIL, "the policy has no management plane", no_mgmt_plane, {{0}}},
    {"SEC-SSHD-MGMT", FAIL, "tcp/2222 (sshd) on 10.2.0.5 (storage)", NULL,
     {{"listeners/-", "{'proto': 'tcp', 'family': 'inet', 'address': '10.2.0.5', 'port': 2222,"
                      " 'wildcard': false, 'pid': 812, 'process': 'sshd'}"}}},
    {"SEC-SSHD-MGMT", PASS, "no sshd listening outside loopback", NULL,
     {{"listeners/0/address", "'127.0.0.1'"}}},
    {"SEC-SSHD-MGMT", SKIP, NULL, NULL, {{"listeners", "null"}}},

    /* firewall */
    {"SEC-FW-MGMT", FAIL, "inet filter input: policy accept; want an input chain with policy drop",
     NULL, {{"nftables/input_chains/0/policy", "'accept'"}}},
    {"SEC-FW-MGMT", FAIL, "no nftables input chain", NULL, {{"nftables/input_chains", "[]"}}},
    {"SEC-FW-MGMT", FAIL, "eth0 (management): inet filter input accepts all IPv4 input on it",
     NULL, {{"nftables/ruleset/nftables/-", accept_eth0}}},
    {"SEC-FW-MGMT", FAIL, "eth0 (management): IPv4 input accepted by default", NULL,
     {{"nftables/input_chains/0/family", "'ip6'"}}},
    {"SEC-FW-MGMT", PASS, "inet filter input: policy accept", NULL,
     {{"nftables/input_chains/0/policy", "'accept'"}, {"nftables/ruleset/nftables/-", drop_all}}},
    {"SEC-FW-MGMT", SKIP, "no nftables facts", NULL, {{"nftables", "null"}}},
    {"SEC-FW-MGMT", SKIP, "no management plane", no_mgmt_plane, {{0}}},
    {"SEC-FW-CONTROL", FAIL, "policy accept", NULL,
     {{"nftables/input_chains/0/policy", "'accept'"}}},
    {"SEC-FW-CONTROL", FAIL, "eth1 (control): inet filter input accepts all IPv4 input on it",
     NULL, {{"nftables/ruleset/nftables/-", accept_eth_star}}},
    {"SEC-FW-CONTROL", PASS, "inet filter input: policy drop", NULL,
     {{"nftables/ruleset/nftables/-", accept_eth0}}},
    {"SEC-FW-CONTROL", SKIP, "no nftables facts", NULL, {{"nftables", NULL}}},
    {"SEC-FW-CONTROL", SKIP, "no control plane", no_control_plane, {{0}}},

    /* sysctls */
    {"NET-RPF-MGMT", FAIL, "eth0 (management): rp_filter 0 (all 0, eth0 0); management "
                           "interfaces need 1",
     NULL, {{"sysctl/net.ipv4.conf.eth0.rp_filter", "'0'"}}},
    {"NET-RPF-MGMT", FAIL, "eth0 (management): rp_filter 2 (all 2, eth0 1)", NULL,
     {{"sysctl/net.ipv4.conf.all.rp_filter", "'2'"}}},
    {"NET-RPF-MGMT", SKIP, "no sysctl facts", NULL, {{"sysctl", "null"}}},
    {"NET-RPF-DATA", FAIL, "eth2 (data): rp_filter 1 (all 0, eth2 1); RDMA interfaces need 0 or 2",
     NULL, {{"sysctl/net.ipv4.conf.eth2.rp_filter", "'1'"}}},
    {"NET-RPF-DATA", FAIL, "eth3 (data): rp_filter 1 (all 1, eth3 0)", NULL,
     {{"sysctl/net.ipv4.conf.all.rp_filter", "'1'"},
      {"sysctl/net.ipv4.conf.eth3.rp_filter", "'0'"}}},
    {"NET-RPF-DATA", PASS, "eth2 (data): rp_filter 2 (all 1, eth2 2)", NULL,
     {{"sysctl/net.ipv4.conf.all.rp_filter", "'1'"}}},
    {"NET-RPF-DATA", WARN, "eth2 (data): rp_filter unknown", NULL,
     {{"sysctl/net.ipv4.conf.eth2.rp_filter", NULL}, {"sysctl/net.ipv4.conf.all.rp_filter", NULL}}},
    {"NET-RPF-DATA", SKIP, "no sysctl facts", NULL, {{"sysctl", NULL}}},
    {"NET-RPF-DATA", SKIP, "no RDMA interface in the data plane", data_not_rdma,
     {{"interfaces/3/rdma_device", "null"}, {"interfaces/4/rdma_device", "null"}}},
    {"NET-ARP-DATA", FAIL, "eth2 (data, 10.1.0.0/24 shared): arp_ignore 0 (all 0, eth2 0), "
                           "arp_announce 2 (all 0, eth2 2)",
     NULL, {{"sysctl/net.ipv4.conf.eth2.arp_ignore", "'0'"}}},
    {"NET-ARP-DATA", FAIL, "arp_announce 1 (all 1, eth3 1)", NULL,
     {{"sysctl/net.ipv4.conf.all.arp_announce", "'1'"},
      {"sysctl/net.ipv4.conf.eth3.arp_announce", "'1'"}}},
    {"NET-ARP-DATA", PASS, "arp_ignore 1 (all 1, eth2 0)", NULL,
     {{"sysctl/net.ipv4.conf.all.arp_ignore", "'1'"},
      {"sysctl/net.ipv4.conf.eth2.arp_ignore", "'0'"}}},
    {"NET-ARP-DATA", SKIP, "no two data-plane interfaces share", NULL,
     {{"interfaces/4/addresses/0/address", "'10.1.1.6'"}}},
    {"NET-ARP-DATA", SKIP, "no sysctl facts", NULL, {{"sysctl", "null"}}},
    {"NET-IPFWD", FAIL, "net.ipv4.ip_forward 1; want 0 on a compute node", NULL,
     {{"sysctl/net.ipv4.ip_forward", "'1'"}}},
    {"NET-IPFWD", FAIL, "net.ipv6.conf.all.forwarding 1", NULL,
     {{"sysctl/net.ipv6.conf.all.forwarding", "'1'"}}},
    {"NET-IPFWD", PASS, "net.ipv4.ip_forward 1: role kubernetes", kubernetes,
     {{"sysctl/net.ipv4.ip_forward", "'1'"}}},
    {"NET-IPFWD", SKIP, NULL, NULL, {{"sysctl", "null"}}},
    {"NET-REDIRECTS", FAIL, "net.ipv4.conf.eth2.accept_redirects 1", NULL,
     {{"sysctl/net.ipv4.conf.eth2.accept_redirects", "'1'"}}},
    {"NET-REDIRECTS", FAIL, "net.ipv6.conf.all.accept_redirects 1", NULL,
     {{"sysctl/net.ipv6.conf.all.accept_redirects", "'1'"}}},
    {"NET-REDIRECTS", WARN, "net.ipv4.conf.eth4.accept_redirects unknown", NULL,
     {{"sysctl/net.ipv4.conf.eth4.accept_redirects", NULL}}},
    {"NET-REDIRECTS", SKIP, NULL, NULL, {{"sysctl", NULL}}},
    {"NET-SEND-REDIRECTS", FAIL, "net.ipv4.conf.all.send_redirects 1; want send_redirects 0", NULL,
     {{"sysctl/net.ipv4.conf.all.send_redirects", "'1'"}}},
    {"NET-SEND-REDIRECTS", SKIP, NULL, NULL, {{"sysctl", "null"}}},
    {"NET-SOURCE-ROUTE", FAIL, "net.ipv4.conf.default.accept_source_route 1", NULL,
     {{"sysctl/net.ipv4.conf.default.accept_source_route", "'1'"}}},
    {"NET-SOURCE-ROUTE", FAIL, "net.ipv6.conf.all.accept_source_route 1", NULL,
     {{"sysctl/net.ipv6.conf.all.accept_source_route", "'1'"}}},
    {"NET-SOURCE-ROUTE", SKIP, NULL, NULL, {{"sysctl", "null"}}},
    {"KERN-KPTR", FAIL, "kernel.kptr_restrict 0; want >= 1", NULL,
     {{"sysctl/kernel.kptr_restrict", "'0'"}}},
    {"KERN-KPTR", PASS, "kernel.kptr_restrict 2", NULL, {{"sysctl/kernel.kptr_restrict", "'2'"}}},
    {"KERN-KPTR", SKIP, "kernel.kptr_restrict not in the facts", NULL,
     {{"sysctl/kernel.kptr_restrict", NULL}}},
    {"KERN-DMESG", FAIL, "kernel.dmesg_restrict 0; want 1", NULL,
     {{"sysctl/kernel.dmesg_restrict", "'0'"}}},
    {"KERN-DMESG", SKIP, NULL, NULL, {{"sysctl", "null"}}},
    {"KERN-BPF", FAIL, "kernel.unprivileged_bpf_disabled 0", NULL,
     {{"sysctl/kernel.unprivileged_bpf_disabled", "'0'"}}},
    {"KERN-BPF", SKIP, NULL, NULL, {{"sysctl/kernel.unprivileged_bpf_disabled", NULL}}},
    {"KERN-PTRACE", FAIL, "kernel.yama.ptrace_scope 0; want >= 1", NULL,
     {{"sysctl/kernel.yama.ptrace_scope", "'0'"}}},
    {"KERN-PTRACE", PASS, "kernel.yama.ptrace_scope 3", NULL,
     {{"sysctl/kernel.yama.ptrace_scope", "3"}}},
    {"KERN-PTRACE", SKIP, "kernel.yama.ptrace_scope not in the facts", NULL,
     {{"sysctl/kernel.yama.ptrace_scope", NULL}}},

    /* NVMe-oF */
    {"NVMET-ANY-HOST", FAIL, "nqn.2024-01.io.example:scratch: allow_any_host 1", NULL,
     {{"nvmet/subsystems/0/allow_any_host", "true"}}},
    {"NVMET-ANY-HOST", FAIL, "nqn.2024-01.io.example:scratch: no allowed_hosts", NULL,
     {{"nvmet/subsystems/0/allowed_hosts", "[]"}}},
    {"NVMET-ANY-HOST", SKIP, "no nvmet facts", NULL, {{"nvmet", "null"}}},
    {"NVMET-ANY-HOST", SKIP, "no nvmet subsystems", NULL, {{"nvmet/subsystems", "[]"}}},
    {"NVMET-DHCHAP", FAIL, "nqn.2014-08.org.nvmexpress:uuid:host1: no dhchap_ctrl_key", NULL,
     {{"nvmet/hosts/0/dhchap_ctrl_key", "false"}}},
    {"NVMET-DHCHAP", FAIL, "host2: no dhchap_key, no dhchap_ctrl_key", NULL,
     {{"nvmet/subsystems/0/allowed_hosts/-", "'nqn.2014-08.org.nvmexpress:uuid:host2'"}}},
    {"NVMET-DHCHAP", SKIP, "no nvmet facts", NULL, {{"nvmet", NULL}}},
    {"NVMET-DHCHAP", SKIP, "no allowed hosts", NULL, {{"nvmet/subsystems/0/allowed_hosts", "[]"}}},
    {"NVMET-TLS", FAIL, "port 1 (tcp 10.2.0.5:4420): tsas none, treq not specified", NULL,
     {{"nvmet/ports/0/tsas", "'none'"}, {"nvmet/ports/0/treq", "'not specified'"}}},
    {"NVMET-TLS", FAIL, "tsas tls1.3, treq not required", NULL,
     {{"nvmet/ports/0/treq", "'not required'"}}},
    {"NVMET-TLS", SKIP, "no nvmet facts", NULL, {{"nvmet", "null"}}},
    {"NVMET-TLS", SKIP, "no NVMe/TCP target ports", NULL, {{"nvmet/ports/0/trtype", "'rdma'"}}},
    {"NVMEOF-HOST-DHCHAP", FAIL, "nvme2 (rdma traddr=10.2.0.10,trsvcid=4420): dhchap_secret set, "
                                 "dhchap_ctrl_secret none",
     NULL, {{"nvme_hosts/1/dhchap_ctrl_secret", "false"}}},
    {"NVMEOF-HOST-DHCHAP", WARN, "nvme1 (tcp traddr=10.2.0.9,trsvcid=4420): DH-HMAC-CHAP secrets "
                                 "unknown",
     NULL, {{"nvme_hosts/0/dhchap_secret", "null"}}},
    {"NVMEOF-HOST-DHCHAP", SKIP, "no NVMe host facts", NULL, {{"nvme_hosts", NULL}}},
    {"NVMEOF-HOST-TLS", FAIL, "nvme1 (tcp traddr=10.2.0.9,trsvcid=4420): no tls_key", NULL,
     {{"nvme_hosts/0/tls_key", "false"}}},
    {"NVMEOF-HOST-TLS", WARN, "tls_key unknown", NULL, {{"nvme_hosts/0/tls_key", "null"}}},
    {"NVMEOF-HOST-TLS", SKIP, "no NVMe-oF/tcp controllers", NULL,
     {{"nvme_hosts/0/transport", "'rdma'"}}},
    {"NVMEOF-HOST-TLS", SKIP, "no NVMe host facts", NULL, {{"nvme_hosts", "null"}}},

    /* tenants and results */
    {"RDMA-NETNS", FAIL, "RDMA netns mode shared", NULL, {{"rdma/netns_mode", "'shared'"}}},
    {"RDMA-NETNS", WARN, "netns mode unknown", NULL, {{"rdma/netns_mode", "null"}}},
    {"RDMA-NETNS", PASS, "single tenant (policy): netns mode shared", single_tenant,
     {{"rdma/netns_mode", "'shared'"}}},
    {"RDMA-NETNS", SKIP, "no RDMA devices", NULL, {{"rdma", "null"}}},
    {"RDMA-NETNS", SKIP, "no RDMA devices", NULL, {{"rdma/devices", "[]"}}},
    {"SEC-RESULTS-SECRETS", FAIL, "/results/keys/id_ed25519: private key", NULL,
     {{"secrets", "[{'dir': '/results', 'file': 'keys/id_ed25519', 'kind': 'private key'}]"}}},
    {"SEC-RESULTS-SECRETS", SKIP, "no results folders were scanned", NULL, {{"secrets", NULL}}},
    {"SEC-RESULTS-SECRETS", SKIP, NULL, NULL, {{"secrets", "null"}}},
};

static void run_case(const struct rcase *c)
{
    json_t *facts = facts_new();
    struct tp_policy p;
    policy_new(&p);
    for (int i = 0; i < 4 && c->patch[i][0]; i++)
        patch(facts, c->patch[i][0], c->patch[i][1]);
    if (c->policy)
        c->policy(&p);
    json_t *findings = tp_check_evaluate(facts, &p);
    assert_non_null(findings);
    const json_t *f = finding(findings, c->id);
    const char *st = field(f, "status"), *ev = field(f, "evidence");
    char where[128];
    snprintf(where, sizeof where, "%s after %s", c->id, c->patch[0][0] ? c->patch[0][0] : "policy");
    if (strcmp(st, tp_check_status_name(c->want)) != 0)
        fail_msg("%s: status %s, expected %s; evidence: %s", where, st,
                 tp_check_status_name(c->want), ev);
    if (c->needle && !strstr(ev, c->needle))
        fail_msg("%s: evidence \"%s\" lacks \"%s\"", where, ev, c->needle);
    print_message("%-28s %s  %s\n", c->id, st, ev);
    json_decref(findings);
    json_decref(facts);
}

static void each_case(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(&cases[i]);
}

/* Every rule has a FAIL or WARN case and a SKIP case above; PASS is the
 * baseline (every_rule_passes). */
static void every_rule_has_cases(void **state)
{
    (void)state;
    for (size_t r = 0; r < tp_check_nrules; r++) {
        bool bad = false, skip = false;
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            if (strcmp(cases[i].id, tp_check_rules[r]->id) != 0)
                continue;
            bad |= cases[i].want == FAIL || cases[i].want == WARN;
            skip |= cases[i].want == SKIP;
        }
        if (!bad || !skip)
            fail_msg("%s: no %s case", tp_check_rules[r]->id, bad ? "SKIP" : "FAIL or WARN");
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool known = false;
        for (size_t r = 0; r < tp_check_nrules; r++)
            known |= strcmp(cases[i].id, tp_check_rules[r]->id) == 0;
        if (!known)
            fail_msg("case %zu names unknown rule %s", i, cases[i].id);
    }
}

/* ---- whole evaluations ---- */

static void every_rule_passes(void **state)
{
    (void)state;
    json_t *facts = facts_new();
    struct tp_policy p;
    policy_new(&p);
    json_t *findings = tp_check_evaluate(facts, &p);
    assert_non_null(findings);
    assert_int_equal(json_array_size(findings), tp_check_nrules);
    size_t i;
    json_t *f;
    json_array_foreach(findings, i, f) {
        print_message("%-28s %s  %s\n", field(f, "id"), field(f, "status"), field(f, "evidence"));
        if (strcmp(field(f, "status"), "PASS") != 0)
            fail_msg("%s: %s on the healthy node: %s", field(f, "id"), field(f, "status"),
                     field(f, "evidence"));
    }
    assert_int_equal(tp_check_nagios(findings), 0);
    json_decref(findings);
    json_decref(facts);
}

static void all_skip(const char *facts_json)
{
    json_t *facts = loads(facts_json);
    struct tp_policy p;
    policy_new(&p);
    json_t *findings = tp_check_evaluate(facts, &p);
    assert_non_null(findings);
    size_t i;
    json_t *f;
    json_array_foreach(findings, i, f) {
        if (strcmp(field(f, "status"), "SKIP") != 0)
            fail_msg("%s: %s with facts %s: %s", field(f, "id"), field(f, "status"), facts_json,
                     field(f, "evidence"));
        assert_true(field(f, "evidence")[0] != '\0');
    }
    assert_int_equal(tp_check_nagios(findings), 0);
    json_decref(findings);
    json_decref(facts);
}

static void absent_facts_skip(void **state)
{
    (void)state;
    all_skip("{}");
    all_skip("{'interfaces': null, 'listeners': null, 'nftables': null, 'sysctl': null,"
             " 'rdma': null, 'nvme_hosts': null, 'nvme_multipath': null, 'nvmet': null,"
             " 'cpu': null, 'gpus': null, 'memory': null, 'iommu': null, 'time': null,"
             " 'secrets': null}");
}

static void findings_have_every_field(void **state)
{
    (void)state;
    static const char *const keys[] = {"id",        "plane",       "severity", "title", "status",
                                       "evidence", "rationale", "remediation", "source"};
    json_t *facts = facts_new();
    struct tp_policy p;
    policy_new(&p);
    patch(facts, "time/synchronized", "false");
    json_t *findings = tp_check_evaluate(facts, &p);
    assert_int_equal(json_array_size(findings), tp_check_nrules);
    for (size_t i = 0; i < tp_check_nrules; i++) {
        const json_t *f = json_array_get(findings, i);
        const struct tp_check_rule *r = tp_check_rules[i];
        assert_int_equal(json_object_size(f), sizeof keys / sizeof keys[0]);
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            if (!field(f, keys[k])[0])
                fail_msg("%s: empty %s", r->id, keys[k]);
        assert_string_equal(field(f, "id"), r->id);
        assert_string_equal(field(f, "plane"), r->plane);
        assert_string_equal(field(f, "severity"), tp_check_severity_name(r->severity));
        assert_string_equal(field(f, "title"), r->title);
        assert_string_equal(field(f, "rationale"), r->rationale);
        assert_string_equal(field(f, "remediation"), r->remediation);
        assert_string_equal(field(f, "source"), r->source);
    }
    assert_string_equal(field(finding(findings, "TIME-SYNC"), "status"), "FAIL");
    json_decref(findings);
    json_decref(facts);
}

static void table_is_well_formed(void **state)
{
    (void)state;
    assert_true(tp_check_nrules >= 30);
    for (size_t i = 0; i < tp_check_nrules; i++) {
        const struct tp_check_rule *r = tp_check_rules[i];
        const char *text[] = {r->id, r->plane, r->title, r->rationale, r->remediation, r->source};
        for (size_t k = 0; k < sizeof text / sizeof text[0]; k++)
            if (!text[k] || !text[k][0])
                fail_msg("rule %zu (%s): field %zu empty", i, r->id ? r->id : "?", k);
        assert_non_null(r->check);
        if (tp_plane_parse(r->plane) < 0 && strcmp(r->plane, "node") != 0)
            fail_msg("%s: plane %s", r->id, r->plane);
        assert_true(r->severity == TP_SEV_WARNING || r->severity == TP_SEV_CRITICAL);
        for (size_t j = 0; j < i; j++)
            if (strcmp(r->id, tp_check_rules[j]->id) == 0)
                fail_msg("rule id %s twice (%zu and %zu)", r->id, j, i);
    }
}

/* ---- Nagios codes ---- */

static void nagios_codes(void **state)
{
    (void)state;
    static const struct {
        const char *findings;
        int code;
    } t[] = {
        {"[]", 0},
        {"[{'status': 'PASS', 'severity': 'critical'}, {'status': 'SKIP', 'severity': 'critical'}]",
         0},
        {"[{'status': 'WARN', 'severity': 'critical'}]", 1},
        {"[{'status': 'FAIL', 'severity': 'warning'}, {'status': 'PASS', 'severity': 'critical'}]",
         1},
        {"[{'status': 'WARN', 'severity': 'warning'}, {'status': 'FAIL', 'severity': 'critical'},"
         " {'status': 'FAIL', 'severity': 'warning'}]",
         2},
        {"[{'status': 'PASS', 'severity': 'warning'}, {'severity': 'warning'}]", 3},
        {"[{'status': 'BOGUS', 'severity': 'warning'}]", 3},
        /* UNKNOWN outranks WARNING, CRITICAL outranks UNKNOWN (check_multi, Icinga) */
        {"[{'severity': 'warning'}, {'status': 'FAIL', 'severity': 'warning'}]", 3},
        {"[{'status': 'WARN', 'severity': 'warning'}, {'status': 'UNKNOWN', 'severity': 'warning'}]",
         3},
        {"[{'status': 'UNKNOWN', 'severity': 'warning'}, {'status': 'PASS', 'severity': 'warning'}]",
         3},
        {"[{'status': 'UNKNOWN', 'severity': 'critical'}, {'status': 'FAIL', 'severity': "
         "'critical'}]",
         2},
        {"{}", 3},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        json_t *f = loads(t[i].findings);
        int code = tp_check_nagios(f);
        if (code != t[i].code)
            fail_msg("nagios(%s) = %d, expected %d", t[i].findings, code, t[i].code);
        json_decref(f);
    }
    assert_int_equal(tp_check_nagios(NULL), 3);

    /* from real evaluations: a warning rule's FAIL, a critical rule's FAIL, a WARN */
    static const struct {
        const char *path, *value;
        int code;
    } e[] = {{"memory/thp", "'always'", 1},
             {"time/synchronized", "false", 2},
             {"iommu/mode", "'unknown'", 1},
             {"nvmet/subsystems/0/allow_any_host", "true", 2}};
    for (size_t i = 0; i < sizeof e / sizeof e[0]; i++) {
        json_t *facts = facts_new();
        struct tp_policy p;
        policy_new(&p);
        patch(facts, e[i].path, e[i].value);
        json_t *findings = tp_check_evaluate(facts, &p);
        int code = tp_check_nagios(findings);
        if (code != e[i].code)
            fail_msg("%s = %s: nagios %d, expected %d", e[i].path, e[i].value, code, e[i].code);
        json_decref(findings);
        json_decref(facts);
    }
}

static void names(void **state)
{
    (void)state;
    assert_string_equal(tp_check_status_name(TP_CHECK_PASS), "PASS");
    assert_string_equal(tp_check_status_name(TP_CHECK_WARN), "WARN");
    assert_string_equal(tp_check_status_name(TP_CHECK_FAIL), "FAIL");
    assert_string_equal(tp_check_status_name(TP_CHECK_SKIP), "SKIP");
    assert_string_equal(tp_check_status_name(TP_CHECK_UNKNOWN), "UNKNOWN");
    assert_string_equal(tp_check_severity_name(TP_SEV_WARNING), "warning");
    assert_string_equal(tp_check_severity_name(TP_SEV_CRITICAL), "critical");
    static const char *const planes[] = {"management", "control", "data", "storage"};
    for (int i = 0; i < TP_PLANES; i++) {
        assert_string_equal(tp_plane_name((enum tp_plane)i), planes[i]);
        assert_int_equal(tp_plane_parse(planes[i]), i);
    }
    assert_int_equal(tp_plane_parse("mgmt"), -1);
    assert_int_equal(tp_plane_parse("Data"), -1);
    assert_int_equal(tp_plane_parse(""), -1);
    assert_int_equal(tp_plane_parse(NULL), -1);
    assert_string_equal(tp_role_name(TP_ROLE_COMPUTE), "compute");
    assert_string_equal(tp_role_name(TP_ROLE_STORAGE), "storage");
    assert_string_equal(tp_role_name(TP_ROLE_LOGIN), "login");
    assert_string_equal(tp_role_name(TP_ROLE_KUBERNETES), "kubernetes");
}

/* ---- audits (the library calls behind trainpath check) ---- */

static void summary_and_words(void **state)
{
    (void)state;
    json_t *f = loads("[{'status': 'PASS'}, {'status': 'FAIL'}, {'status': 'FAIL'},"
                      " {'status': 'SKIP'}, {'status': 'BOGUS'}, {}, {'status': 'UNKNOWN'}]");
    json_t *sum = tp_check_summary(f);
    assert_non_null(sum);
    static const char *const keys[] = {"pass", "warn", "fail", "skip", "unknown"};
    static const long long want[] = {1, 0, 2, 1, 1};
    for (int k = 0; k < 5; k++)
        TP_EQ_INT(json_integer_value(json_object_get(sum, keys[k])), want[k]);
    TP_EQ_INT(json_object_size(sum), 5);
    json_decref(sum);
    json_decref(f);
    static const char *const words[] = {"OK", "WARNING", "CRITICAL", "UNKNOWN"};
    for (int c = 0; c < 4; c++)
        TP_EQ_STR(tp_check_nagios_word(c), words[c]);
    TP_EQ_STR(tp_check_nagios_word(-1), "UNKNOWN");
    TP_EQ_STR(tp_check_nagios_word(4), "UNKNOWN");
}

static const char node_policy[] = "role: compute\n"
                                  "multi_tenant: true\n"
                                  "planes:\n"
                                  "  management:\n"
                                  "    cidrs: [10.0.0.0/24]\n"
                                  "    interfaces: [eth0]\n"
                                  "    services:\n"
                                  "      - {name: sshd, port: 22}\n"
                                  "    mtu_min: 1500\n"
                                  "  data:\n"
                                  "    cidrs: [10.0.1.0/24, \"fd00:1::/64\"]\n"
                                  "    interfaces: [eth2]\n"
                                  "    rdma: true\n";

/* A document as the CLI hands one over: an empty results object. */
static json_t *doc_new(void)
{
    json_t *doc = json_pack("{s:s, s:{}}", "command", "check", "results");
    assert_non_null(doc);
    return doc;
}

static const json_t *results_of(const json_t *doc)
{
    const json_t *r = json_object_get(doc, "results");
    assert_true(json_is_object(r));
    return r;
}

static void audit_one_node(void **state)
{
    (void)state;
    char dir[64], pol[128], saved[128];
    assert_int_equal(tp_test_mkdtemp(dir, sizeof dir, "tp_rules_audit"), 0);
    tp_test_write(dir, "node.yaml", node_policy, pol, sizeof pol);
    struct tp_policy p;
    struct tp_check_opts o = {.policy = pol, .facts = FIXTURES "/node-rdma.json"};
    tp_error err = {0};
    json_t *doc = doc_new();
    int rc = tp_check_audit(&o, &p, doc, &err);
    if (rc)
        fail_msg("audit: %d %s", rc, err.msg);
    const json_t *r = results_of(doc), *findings = json_object_get(r, "findings");
    static const char *const keys[] = {"host", "role", "nagios", "summary", "findings", "facts"};
    TP_EQ_INT(json_object_size(r), 6);
    size_t k = 0;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)r, key, v) TP_EQ_STR(key, keys[k++]);
    TP_EQ_STR(field(r, "host"), "node17");
    TP_EQ_STR(field(r, "role"), "compute");
    TP_EQ_STR(p.file, pol);
    TP_EQ_INT(json_array_size(findings), tp_check_nrules);
    int code = tp_check_nagios(findings);
    TP_EQ_INT(code, 2); /* sshd on the wildcard reaches the data plane */
    TP_EQ_STR(field(finding(findings, "SEC-SSHD-MGMT"), "status"), "FAIL");
    const json_t *nagios = json_object_get(r, "nagios");
    TP_EQ_INT(json_integer_value(json_object_get(nagios, "code")), code);
    TP_EQ_STR(field(nagios, "word"), "CRITICAL");
    const json_t *sum = json_object_get(r, "summary");
    long long total = 0;
    json_object_foreach((json_t *)sum, key, v) total += json_integer_value(v);
    TP_EQ_INT(total, tp_check_nrules);
    TP_EQ_STR(field(json_object_get(r, "facts"), "schema"), "trainpath.facts/1");

    /* the result document holds the facts: audited again from it, the same findings */
    snprintf(saved, sizeof saved, "%s/node.json", dir);
    assert_int_equal(json_dump_file(doc, saved, 0), 0);
    json_t *again = doc_new();
    o.facts = saved;
    rc = tp_check_audit(&o, &p, again, &err);
    if (rc)
        fail_msg("audit of %s: %d %s", saved, rc, err.msg);
    assert_true(json_equal(json_object_get(results_of(again), "findings"), findings));
    json_decref(again);

    /* no policy: the node rules only, no role */
    json_t *bare = doc_new();
    o.policy = NULL;
    assert_int_equal(tp_check_audit(&o, &p, bare, &err), 0);
    r = results_of(bare);
    assert_null(json_object_get(r, "role"));
    TP_EQ_STR(field(finding(json_object_get(r, "findings"), "NET-MTU-DATA"), "status"), "SKIP");
    TP_EQ_STR(field(finding(json_object_get(r, "findings"), "KERN-KPTR"), "status"), "PASS");
    json_decref(bare);
    json_decref(doc);
    assert_int_equal(tp_test_rmtree(dir), 0);
}

static void audit_refusals(void **state)
{
    (void)state;
    char dir[64], pol[128], notfacts[128], notjson[128];
    assert_int_equal(tp_test_mkdtemp(dir, sizeof dir, "tp_rules_audit"), 0);
    tp_test_write(dir, "node.yaml", node_policy, pol, sizeof pol);
    tp_test_write(dir, "result.json", "{\"schema\": \"trainpath.result/1\"}", notfacts,
                  sizeof notfacts);
    tp_test_write(dir, "bad.json", "{\n  bad", notjson, sizeof notjson);
    static const struct {
        int which; /* 0: facts file not facts, 1: not JSON, 2: bad policy, 3: bad root,
                    * 4: a root that is no snapshot, 5: no such results folder,
                    * 6: results with facts */
        const char *says;
    } t[] = {{0, "not trainpath facts"}, {1, "bad.json:2:"},      {2, "nope.yaml"},
             {3, "--root"},              {4, "not a snapshot"},  {5, "--results"},
             {6, "not with --facts"}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        struct tp_policy p;
        char missing[160];
        snprintf(missing, sizeof missing, "%s/nope.yaml", dir);
        struct tp_check_opts o = {.policy = t[i].which == 2 ? missing : pol};
        if (t[i].which == 0)
            o.facts = notfacts;
        else if (t[i].which == 1)
            o.facts = notjson;
        else if (t[i].which == 3)
            o.root = notfacts; /* a file, not a folder */
        else if (t[i].which == 4)
            o.root = dir; /* a folder without proc/ or sys/ */
        const char *results[] = {missing};
        if (t[i].which == 5 || t[i].which == 6) {
            o.results = results;
            o.nresults = 1;
        }
        if (t[i].which == 6) {
            o.facts = FIXTURES "/node-rdma.json";
            results[0] = dir;
        }
        tp_error err = {0};
        json_t *doc = doc_new();
        TP_EQ_INT(tp_check_audit(&o, &p, doc, &err), TP_EUSAGE);
        TP_HAS(err.msg, t[i].says);
        TP_EQ_INT(json_object_size(results_of(doc)), 0);
        json_decref(doc);
    }
    json_t *facts = NULL;
    tp_error err = {0};
    TP_EQ_INT(tp_check_load_facts(notfacts, &facts, &err), TP_EUSAGE);
    assert_null(facts);
    TP_EQ_INT(tp_check_load_facts(FIXTURES "/node-rdma.json", &facts, &err), 0);
    TP_EQ_STR(field(facts, "host"), "node17");
    json_decref(facts);
    assert_int_equal(tp_test_rmtree(dir), 0);
}

static void audit_fleet(void **state)
{
    (void)state;
    char dir[64], pol[128];
    assert_int_equal(tp_test_mkdtemp(dir, sizeof dir, "tp_rules_fleet"), 0);
    tp_test_write(dir, "node.yaml", node_policy, pol, sizeof pol);
    const char *files[] = {FIXTURES "/node-rdma.json", FIXTURES "/target-open.json",
                           FIXTURES "/absent.json"};
    struct tp_policy p;
    struct tp_check_opts o = {.policy = pol, .fleet = files, .nfleet = 2};
    json_t *cfg = tp_check_config_json(&o);
    TP_EQ_STR(field(cfg, "policy"), pol);
    TP_EQ_INT(json_array_size(json_object_get(cfg, "fleet")), 2);
    assert_null(json_object_get(cfg, "root"));
    json_decref(cfg);
    tp_error err = {0};
    json_t *doc = doc_new();
    int rc = tp_check_fleet(&o, &p, doc, &err);
    if (rc)
        fail_msg("fleet: %d %s", rc, err.msg);
    const json_t *r = results_of(doc), *hosts = json_object_get(r, "hosts");
    const json_t *by_rule = json_object_get(r, "by_rule");
    TP_EQ_INT(json_array_size(hosts), 2);
    TP_EQ_STR(field(json_array_get(hosts, 0), "host"), "node17");
    TP_EQ_STR(field(json_array_get(hosts, 1), "host"), "stor3");
    TP_EQ_STR(field(json_array_get(hosts, 1), "file"), files[1]);
    long long worst = 0;
    size_t i;
    json_t *h, *g;
    static const int rank[] = {0, 1, 3, 2}; /* OK, WARNING, UNKNOWN, CRITICAL */
    json_array_foreach(hosts, i, h) {
        long long c = json_integer_value(json_object_get(h, "nagios"));
        assert_true(c >= 0 && c <= 3);
        worst = rank[c] > rank[worst] ? c : worst;
    }
    TP_EQ_INT(json_integer_value(json_object_get(json_object_get(r, "nagios"), "code")), worst);
    TP_EQ_INT(json_array_size(by_rule), tp_check_nrules);
    json_array_foreach(by_rule, i, g) {
        TP_EQ_STR(field(g, "id"), tp_check_rules[i]->id);
        long long n = (long long)json_array_size(json_object_get(g, "fail")) +
                      (long long)json_array_size(json_object_get(g, "warn")) +
                      json_integer_value(json_object_get(g, "pass")) +
                      json_integer_value(json_object_get(g, "skip")) +
                      json_integer_value(json_object_get(g, "unknown"));
        if (n != 2)
            fail_msg("%s: %lld hosts counted, expected 2", tp_check_rules[i]->id, n);
    }
    json_decref(doc);

    /* a file that cannot be read ends the fleet: the hosts before it stay */
    o.nfleet = 3;
    doc = doc_new();
    TP_EQ_INT(tp_check_fleet(&o, &p, doc, &err), TP_EUSAGE);
    TP_HAS(err.msg, "absent.json");
    TP_EQ_INT(json_array_size(json_object_get(results_of(doc), "hosts")), 2);
    assert_null(json_object_get(results_of(doc), "nagios"));
    json_decref(doc);

    /* no policy: refused */
    o.policy = NULL;
    doc = doc_new();
    TP_EQ_INT(tp_check_fleet(&o, &p, doc, &err), TP_EUSAGE);
    json_decref(doc);
    assert_int_equal(tp_test_rmtree(dir), 0);
}

/* ---- the plane helpers ---- */

static void cidr_contains(void **state)
{
    (void)state;
    static const struct {
        const char *net, *addr;
        bool in;
    } t[] = {
        {"10.1.0.0/24", "10.1.0.5", true},
        {"10.1.0.0/24", "10.1.0.255", true},
        {"10.1.0.0/24", "10.1.1.0", false},
        {"10.1.0.0/23", "10.1.1.7", true},
        {"10.1.0.0/23", "10.1.2.7", false},
        {"10.1.0.128/25", "10.1.0.127", false},
        {"10.1.0.128/25", "10.1.0.128", true},
        {"10.1.0.5/32", "10.1.0.5", true},
        {"10.1.0.5/32", "10.1.0.4", false},
        {"0.0.0.0/0", "192.168.1.1", true},
        {"0.0.0.0/0", "fd00::1", false},
        {"10.1.0.0/24", "::ffff:10.1.0.5", true},  /* IPv4-mapped */
        {"10.1.0.0/24", "::ffff:10.2.0.5", false},
        {"10.1.0.0/24", "::10.1.0.5", false},      /* IPv4-compatible is not mapped */
        {"10.1.0.0/24", "fd00::a01:5", false},
        {"fd00:1::/64", "fd00:1::5", true},
        {"fd00:1::/64", "fd00:1:0:0:ffff::1", true},
        {"fd00:1::/64", "fd00:2::5", false},
        {"fd00:1::/63", "fd00:1:0:1::9", true},
        {"fd00:1::/63", "fd00:1:0:2::9", false},
        {"fe80::/10", "fe80::1%eth2", true},       /* zone */
        {"fe80::/10", "febf::1", true},
        {"fe80::/10", "fec0::1", false},
        {"fd00:1::/64", "[fd00:1::5]", true},      /* ss(8) brackets */
        {"::/0", "2001:db8::1", true},
        {"::/0", "10.1.0.5", false},               /* dotted IPv4 is not an IPv6 address */
        {"::ffff:0:0/96", "::ffff:10.1.0.5", true},
        {"10.1.0.0/24", "10.1.0.5/24", true},      /* with a prefix */
        {"10.1.0.0/24", "", false},
        {"10.1.0.0/24", "10.1.0", false},
        {"10.1.0.0/24", "eth0", false},
        {"10.1.0.0/24", "10.1.0.5 ", false},
        {"fd00:1::/64", "fd00:1::5::1", false},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        struct tp_cidr c;
        cidr(&c, t[i].net);
        if (tp_cidr_contains(&c, t[i].addr) != t[i].in)
            fail_msg("%s in %s: %d, expected %d", t[i].addr, t[i].net, !t[i].in, t[i].in);
    }
    struct tp_cidr c;
    cidr(&c, "10.0.0.0/8");
    assert_false(tp_cidr_contains(&c, NULL));
    assert_false(tp_cidr_contains(NULL, "10.0.0.1"));
    c.prefix = 33; /* out of range: never contains */
    assert_false(tp_cidr_contains(&c, "10.0.0.1"));
    c.family = 0;
    c.prefix = 8;
    assert_false(tp_cidr_contains(&c, "10.0.0.1"));
}

static void plane_of(void **state)
{
    (void)state;
    struct tp_policy p;
    policy_new(&p);
    static const struct {
        const char *iface;
        int plane;
    } t[] = {
        {"{'name': 'eth0', 'addresses': []}", TP_PLANE_MGMT},
        {"{'name': 'eth3', 'addresses': []}", TP_PLANE_DATA}, /* pattern eth[23] */
        {"{'name': 'eth5', 'addresses': []}", -1},
        /* the name wins over an address of another plane */
        {"{'name': 'eth1', 'addresses': [{'family': 'inet', 'address': '10.1.0.9'}]}",
         TP_PLANE_CONTROL},
        /* by address when no pattern names it; any of its addresses */
        {"{'name': 'bond0', 'addresses': [{'family': 'inet6', 'address': 'fe80::1'},"
         " {'family': 'inet', 'address': '10.2.0.77'}]}",
         TP_PLANE_STORAGE},
        {"{'name': 'ib0', 'addresses': [{'family': 'inet', 'address': '::ffff:10.1.0.77'}]}",
         TP_PLANE_DATA},
        {"{'name': 'docker0', 'addresses': [{'family': 'inet', 'address': '172.17.0.1'}]}", -1},
        {"{'addresses': [{'family': 'inet', 'address': '10.0.0.9'}]}", TP_PLANE_MGMT},
        {"{'name': 'eth9'}", -1},
        {"[]", -1},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        json_t *ifc = loads(t[i].iface);
        int got = tp_policy_plane_of(&p, ifc);
        if (got != t[i].plane)
            fail_msg("plane of %s: %d, expected %d", t[i].iface, got, t[i].plane);
        json_decref(ifc);
    }
    /* a plane the policy does not name matches nothing */
    json_t *ifc = loads("{'name': 'eth0', 'addresses': [{'family': 'inet', 'address': "
                        "'10.0.0.5'}]}");
    p.planes[TP_PLANE_MGMT].present = false;
    assert_int_equal(tp_policy_plane_of(&p, ifc), -1);
    assert_int_equal(tp_policy_plane_of(NULL, ifc), -1);
    assert_int_equal(tp_policy_plane_of(&p, NULL), -1);
    json_decref(ifc);
}

/* ---- evidence details ---- */

/* sysctl(8) writes a VLAN interface eth2.42 as net.ipv4.conf.eth2/42.* */
static void vlan_sysctl_names(void **state)
{
    (void)state;
    json_t *facts = facts_new();
    struct tp_policy p;
    policy_new(&p);
    snprintf(p.planes[TP_PLANE_DATA].ifaces[0], sizeof p.planes[0].ifaces[0], "eth2.*");
    patch(facts, "interfaces/3/name", "'eth2.42'");
    patch(facts, "interfaces/4/addresses", "[]");
    /* a slash in the key: set directly, not through patch() */
    json_object_set_new(json_object_get(facts, "sysctl"), "net.ipv4.conf.eth2/42.rp_filter",
                        json_string("1"));
    json_t *findings = tp_check_evaluate(facts, &p);
    const json_t *f = finding(findings, "NET-RPF-DATA");
    assert_string_equal(field(f, "status"), "FAIL");
    assert_non_null(strstr(field(f, "evidence"), "eth2.42 (data): rp_filter 1 (all 0, eth2.42 1)"));
    json_decref(findings);
    json_decref(facts);
}

/* Many failures: the evidence stays in its buffer, ends in "...", and a
 * multibyte character cut at the end still gives valid JSON. Repeated
 * listeners are reported once. */
static void long_evidence(void **state)
{
    (void)state;
    json_t *facts = facts_new();
    struct tp_policy p;
    policy_new(&p);
    json_t *ls = json_object_get(facts, "listeners");
    for (int i = 0; i < 200; i++) {
        json_t *l = loads("{'proto': 'tcp', 'family': 'inet', 'address': '10.1.0.5',"
                          " 'wildcard': false, 'pid': 1, 'process': 'r\u00e9plica-\u00e9\u00e9'}");
        json_object_set_new(l, "port", json_integer(10000 + i));
        json_array_append_new(ls, l);
    }
    json_t *findings = tp_check_evaluate(facts, &p);
    assert_non_null(findings);
    const char *ev = field(finding(findings, "SEC-LISTEN-PLANE"), "evidence");
    assert_true(strlen(ev) < sizeof((struct tp_check_result *)0)->evidence);
    assert_true(strlen(ev) > 900);
    assert_string_equal(ev + strlen(ev) - 3, "...");
    json_decref(findings);

    /* the same listener twice (two processes sharing a port) is one item */
    json_array_clear(ls);
    for (int i = 0; i < 2; i++)
        json_array_append_new(ls, loads("{'proto': 'tcp', 'family': 'inet', 'address': "
                                        "'10.1.0.5', 'port': 8080, 'wildcard': false, "
                                        "'pid': 1234, 'process': 'python3'}"));
    findings = tp_check_evaluate(facts, &p);
    ev = field(finding(findings, "SEC-LISTEN-PLANE"), "evidence");
    const char *first = strstr(ev, "tcp/8080");
    assert_non_null(first);
    assert_null(strstr(first + 1, "tcp/8080"));
    json_decref(findings);
    json_decref(facts);
}

/* Without a policy there are no planes: plane rules SKIP, node rules run. */
static void no_policy(void **state)
{
    (void)state;
    json_t *facts = facts_new();
    json_t *findings = tp_check_evaluate(facts, NULL);
    assert_non_null(findings);
    assert_string_equal(field(finding(findings, "NET-RPF-DATA"), "status"), "SKIP");
    assert_string_equal(field(finding(findings, "KERN-KPTR"), "status"), "PASS");
    assert_string_equal(field(finding(findings, "NET-IFACE-PLANE"), "status"), "WARN");
    json_decref(findings);
    json_decref(facts);
}


/* Facts that saw nothing (every part every node has is unseen, as under an
 * empty snapshot): no rule passes or fails, those that apply are UNKNOWN
 * and the node is UNKNOWN (3), never OK. */
static void unseen_facts_unknown(void **state)
{
    (void)state;
    static const char *const parts[] = {"host",   "interfaces", "addresses", "routes.inet",
                                        "listeners", "nftables", "sysctl",   "cpu.count",
                                        "gpus",   "memory",     "iommu.cmdline", "time"};
    json_t *facts = loads("{'schema': 'trainpath.facts/1', 'missing': []}");
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        json_array_append_new(json_object_get(facts, "missing"),
                              json_pack("{s:s, s:s, s:b}", "part", parts[i], "reason", "no file",
                                        "unseen", 1));
    struct tp_policy p;
    policy_new(&p);
    json_t *findings = tp_check_evaluate(facts, &p);
    assert_non_null(findings);
    size_t i, unknown = 0;
    json_t *f;
    json_array_foreach(findings, i, f) {
        const char *st = field(f, "status");
        if (strcmp(st, "SKIP") != 0 && strcmp(st, "UNKNOWN") != 0)
            fail_msg("%s: %s on facts that saw nothing: %s", field(f, "id"), st,
                     field(f, "evidence"));
        unknown += strcmp(st, "UNKNOWN") == 0;
    }
    /* the rules about what every node has: interfaces, listeners, the
     * firewall, sysctls, the clock */
    static const char *const must[] = {"NET-MTU-DATA", "SEC-LISTEN-PLANE", "SEC-FW-MGMT",
                                       "NET-RPF-DATA", "KERN-KPTR",        "TIME-SYNC",
                                       "NET-IFACE-PLANE"};
    for (size_t k = 0; k < sizeof must / sizeof must[0]; k++)
        if (strcmp(field(finding(findings, must[k]), "status"), "UNKNOWN") != 0)
            fail_msg("%s: %s, expected UNKNOWN: %s", must[k],
                     field(finding(findings, must[k]), "status"),
                     field(finding(findings, must[k]), "evidence"));
    assert_true(unknown >= 15);
    assert_int_equal(tp_check_nagios(findings), 3);
    json_t *sum = tp_check_summary(findings);
    TP_EQ_INT(json_integer_value(json_object_get(sum, "unknown")), (long long)unknown);
    json_decref(sum);
    json_decref(findings);
    json_decref(facts);
}

/* tp_check_finish: one decision for the exit status and status.exit_code. */
static void finish_decides(void **state)
{
    (void)state;
    static const struct {
        int rc, verdict; /* verdict -1: no results.nagios */
        int want;
        bool ok;
    } t[] = {{0, 0, 0, true},          {0, 1, 1, true},          {0, 2, 2, true},
             {0, 3, 3, true},          {TP_EUSAGE, -1, 3, false}, {TP_ENOMEM, -1, 3, false},
             {0, -1, 3, true}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        json_t *doc = doc_new();
        if (t[i].verdict >= 0)
            json_object_set_new(json_object_get(doc, "results"), "nagios",
                                json_pack("{s:i}", "code", t[i].verdict));
        int code = tp_check_finish(doc, t[i].rc, t[i].rc ? "bad input" : "");
        const json_t *st = json_object_get(doc, "status");
        if (code != t[i].want ||
            json_integer_value(json_object_get(st, "exit_code")) != t[i].want ||
            json_is_true(json_object_get(st, "ok")) != t[i].ok)
            fail_msg("case %zu: exit %d, status %s; expected %d", i, code,
                     json_dumps(st, JSON_COMPACT), t[i].want);
        json_decref(doc);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_is_well_formed),
        cmocka_unit_test(names),
        cmocka_unit_test(cidr_contains),
        cmocka_unit_test(plane_of),
        cmocka_unit_test(every_rule_passes),
        cmocka_unit_test(absent_facts_skip),
        cmocka_unit_test(every_rule_has_cases),
        cmocka_unit_test(each_case),
        cmocka_unit_test(findings_have_every_field),
        cmocka_unit_test(nagios_codes),
        cmocka_unit_test(summary_and_words),
        cmocka_unit_test(audit_one_node),
        cmocka_unit_test(audit_refusals),
        cmocka_unit_test(audit_fleet),
        cmocka_unit_test(vlan_sysctl_names),
        cmocka_unit_test(long_evidence),
        cmocka_unit_test(no_policy),
        cmocka_unit_test(unseen_facts_unknown),
        cmocka_unit_test(finish_decides),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
