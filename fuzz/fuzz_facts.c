/* Fuzz target: the fact readers of `trainpath check --root` (tp_check_facts)
 * over a snapshot folder laid out as the kernel lays out /proc, /sys and
 * configfs (tests/fixtures/check/node-rdma shows the shape), then the
 * rules over those facts (tp_check_evaluate, with docs/examples/policy.yaml)
 * and the secrets scan of a results folder (tp_check_scan_secrets).
 *
 * The tree's folders and links are made once (an interface on a PCI
 * function with an RDMA device, a VLAN, a fabrics NVMe controller, an
 * nvmet port, subsystem and host, a process holding a socket). The input
 * fills its files: it is cut at every "\n~~\n" and part i becomes the file
 * slots[i] below (a part not given: the file is absent). Part 0 is not a
 * file but extra interface names, one a line, each made a folder in
 * sys/class/net and proc/sys/net/ipv4/conf for that input. A slot whose
 * name starts with '@' is a link whose target is the part. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "tp/check.h"

#define PCI "sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0"
#define NVMET "sys/kernel/config/nvmet"

static const char *const slots[] = {
    "", /* part 0: extra interface names */
    "proc/net/tcp",
    "proc/net/tcp6",
    "proc/net/udp",
    "proc/net/udp6",
    "proc/net/route",
    "proc/net/ipv6_route",
    "proc/net/if_inet6",
    "proc/net/vlan/config",
    "ip-addr.json",
    "nftables.json",
    "time.json",
    "rdma-system.txt",
    "@proc/1200/fd/3",
    "proc/1200/comm",
    "proc/meminfo",
    "proc/cmdline",
    "proc/sys/kernel/hostname",
    "proc/sys/net/ipv4/ip_forward",
    "proc/sys/net/ipv4/conf/all/rp_filter",
    "proc/sys/net/ipv4/conf/eth0/accept_redirects",
    "proc/sys/kernel/kptr_restrict",
    PCI "/net/eth0/ifindex",
    PCI "/net/eth0/operstate",
    PCI "/net/eth0/mtu",
    PCI "/net/eth0/address",
    PCI "/net/eth0/type",
    PCI "/net/eth0/speed",
    PCI "/numa_node",
    PCI "/infiniband/mlx5_0/ports/1/state",
    PCI "/infiniband/mlx5_0/ports/1/link_layer",
    PCI "/infiniband/mlx5_0/ports/1/gid_attrs/types/0",
    PCI "/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0",
    PCI "/infiniband/mlx5_0/node_guid",
    "sys/devices/virtual/nvme-fabrics/ctl/nvme1/transport",
    "sys/devices/virtual/nvme-fabrics/ctl/nvme1/address",
    "sys/devices/virtual/nvme-fabrics/ctl/nvme1/state",
    "sys/devices/virtual/nvme-fabrics/ctl/nvme1/subsysnqn",
    "sys/devices/virtual/nvme-fabrics/ctl/nvme1/dhchap_secret",
    "sys/devices/virtual/nvme-fabrics/ctl/nvme1/ctrl_loss_tmo",
    "sys/devices/virtual/nvme-fabrics/ctl/nvme1/reconnect_delay",
    "sys/module/nvme_core/parameters/multipath",
    NVMET "/ports/1/addr_trtype",
    NVMET "/ports/1/addr_adrfam",
    NVMET "/ports/1/addr_traddr",
    NVMET "/ports/1/addr_trsvcid",
    NVMET "/ports/1/addr_tsas",
    NVMET "/ports/1/addr_treq",
    NVMET "/subsystems/nqn.s1/attr_allow_any_host",
    NVMET "/hosts/nqn.h1/dhchap_key",
    NVMET "/hosts/nqn.h1/dhchap_hash",
    "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
    "sys/devices/system/cpu/smt/control",
    "sys/devices/system/node/node0/cpulist",
    "sys/devices/pci0000:16/0000:16:03.0/0000:18:00.0/class",
    "sys/devices/pci0000:16/0000:16:03.0/0000:18:00.0/vendor",
    "sys/kernel/mm/transparent_hugepage/enabled",
    "sys/kernel/iommu_groups/0/type",
    "results/api_key",
};
#define NSLOTS (sizeof slots / sizeof slots[0])
#define MAX_NAMES 4

/* the folders and links that stay; the slots' files come and go */
static const char *const skeleton[][2] = {
    /* {path, link target or NULL for a folder} */
    {PCI "/net/eth0", NULL},
    {"sys/class/net/eth0", "../../devices/pci0000:16/0000:16:02.0/0000:17:00.0/net/eth0"},
    {PCI "/net/eth0/device", "../../../0000:17:00.0"},
    {PCI "/driver", "../../../../bus/pci/drivers/mlx5_core"},
    {"sys/devices/virtual/net/eth0.42", NULL},
    {"sys/class/net/eth0.42", "../../devices/virtual/net/eth0.42"},
    {"sys/class/net/lo", NULL},
    {"sys/bus/pci/devices/0000:17:00.0", "../../../devices/pci0000:16/0000:16:02.0/0000:17:00.0"},
    {"sys/devices/pci0000:16/0000:16:03.0/0000:18:00.0", NULL},
    {"sys/bus/pci/devices/0000:18:00.0", "../../../devices/pci0000:16/0000:16:03.0/0000:18:00.0"},
    {PCI "/infiniband/mlx5_0/ports/1", NULL},
    {"sys/class/infiniband/mlx5_0",
     "../../devices/pci0000:16/0000:16:02.0/0000:17:00.0/infiniband/mlx5_0"},
    {PCI "/infiniband/mlx5_0/device", "../../../0000:17:00.0"},
    {"sys/devices/virtual/nvme-fabrics/ctl/nvme1", NULL},
    {"sys/class/nvme/nvme1", "../../devices/virtual/nvme-fabrics/ctl/nvme1"},
    {NVMET "/hosts/nqn.h1", NULL},
    {NVMET "/subsystems/nqn.s1/allowed_hosts/nqn.h1", "../../../hosts/nqn.h1"},
    {NVMET "/ports/1/subsystems/nqn.s1", "../../../subsystems/nqn.s1"},
    {"sys/devices/virtual/iommu/dmar0", NULL},
    {"sys/class/iommu/dmar0", "../../devices/virtual/iommu/dmar0"},
    {"proc/1200/fd", NULL},
    {"proc/sys/net/ipv4/conf/eth0.42", NULL},
    {"results", NULL},
};

static char root[PATH_MAX], results[PATH_MAX];
static struct tp_policy policy;
static char *last[NSLOTS]; /* what each slot's file holds now; NULL: absent */
static size_t last_len[NSLOTS];

static void mkdir_p(const char *rel)
{
    char p[PATH_MAX];
    fz_path(p, rel);
    for (char *s = p + strlen(fz_dir()) + 1;; s++) {
        char *slash = strchr(s, '/');
        if (slash)
            *slash = '\0';
        if (mkdir(p, 0700) < 0 && errno != EEXIST) {
            perror(p);
            abort();
        }
        if (!slash)
            break;
        *slash = '/';
        s = slash;
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    tp_error err;
    FZ_ASSERT(tp_policy_parse(TP_SOURCE_ROOT "/docs/examples/policy.yaml", &policy, &err) == 0,
              "%s", err.msg);
    fz_path(root, "root");
    fz_path(results, "root/results");
    for (size_t i = 0; i < sizeof skeleton / sizeof skeleton[0]; i++) {
        char rel[PATH_MAX], path[PATH_MAX];
        snprintf(rel, sizeof rel, "root/%s", skeleton[i][0]);
        if (!skeleton[i][1]) {
            mkdir_p(rel);
            continue;
        }
        char *slash = strrchr(rel, '/');
        *slash = '\0';
        mkdir_p(rel);
        *slash = '/';
        FZ_ASSERT(symlink(skeleton[i][1], fz_path(path, rel)) == 0, "symlink %s: %s", rel,
                  strerror(errno));
    }
    return 0;
}

/* Make slot i hold part (NULL: absent), touching the disk only on a change. */
static void fill(size_t i, const uint8_t *part, size_t len)
{
    if (last[i] && part && len == last_len[i] && memcmp(last[i], part, len) == 0)
        return;
    if (!last[i] && !part)
        return;
    bool link = slots[i][0] == '@';
    char rel[PATH_MAX], path[PATH_MAX];
    snprintf(rel, sizeof rel, "root/%s", slots[i] + link);
    free(last[i]);
    last[i] = NULL;
    fz_remove(rel);
    if (!part)
        return;
    last[i] = fz_strndup(part, len);
    last_len[i] = len;
    if (!link) {
        fz_write(rel, part, len, NULL);
    } else if (len > 0 && len < 256 && !memchr(part, '\0', len)) {
        char *dir = strrchr(rel, '/');
        *dir = '\0';
        mkdir_p(rel);
        *dir = '/';
        FZ_ASSERT(symlink(last[i], fz_path(path, rel)) == 0, "symlink %s: %s", rel,
                  strerror(errno));
    }
}

/* Part 0: up to MAX_NAMES interface names, one a line; a name that is no
 * file name (empty, ".", "..", a '/', too long) is skipped. */
static size_t make_names(const uint8_t *part, size_t len, char names[][64])
{
    size_t n = 0;
    while (len > 0 && n < MAX_NAMES) {
        const uint8_t *nl = memchr(part, '\n', len);
        size_t l = nl ? (size_t)(nl - part) : len;
        if (l > 0 && l < 64 && !memchr(part, '/', l) && !memchr(part, '\0', l) &&
            !(l == 1 && part[0] == '.') && !(l == 2 && part[0] == '.' && part[1] == '.')) {
            memcpy(names[n], part, l);
            names[n][l] = '\0';
            char rel[PATH_MAX];
            snprintf(rel, sizeof rel, "root/sys/class/net/%s", names[n]);
            struct stat st;
            char path[PATH_MAX];
            if (lstat(fz_path(path, rel), &st) < 0) { /* not one of the skeleton's */
                mkdir_p(rel);
                snprintf(rel, sizeof rel, "root/proc/sys/net/ipv4/conf/%s", names[n]);
                mkdir_p(rel);
                n++;
            }
        }
        if (!nl)
            break;
        len -= l + 1;
        part = nl + 1;
    }
    return n;
}

static void remove_names(char names[][64], size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char rel[PATH_MAX];
        snprintf(rel, sizeof rel, "root/sys/class/net/%s", names[i]);
        fz_remove(rel);
        snprintf(rel, sizeof rel, "root/proc/sys/net/ipv4/conf/%s", names[i]);
        fz_remove(rel);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *part[NSLOTS];
    size_t len[NSLOTS];
    size_t n = fz_split(data, size, "\n~~\n", part, len, NSLOTS);
    for (size_t i = 1; i < NSLOTS; i++)
        fill(i, i < n ? part[i] : NULL, i < n ? len[i] : 0);
    char names[MAX_NAMES][64];
    size_t nnames = make_names(part[0], len[0], names);

    json_t *facts = NULL;
    tp_error err;
    int rc = tp_check_facts(root, &facts, &err);
    /* the contract: only a bad root or memory is an error */
    FZ_ASSERT(rc == 0 && json_is_object(facts), "facts failed (%d): %s", rc, err.msg);
    FZ_ASSERT(json_is_array(json_object_get(facts, "missing")), "no missing list");
    const char *const dirs[] = {results};
    rc = tp_check_scan_secrets(facts, dirs, 1, &err);
    FZ_ASSERT(rc == 0, "secrets scan failed (%d): %s", rc, err.msg);
    json_t *findings = tp_check_evaluate(facts, &policy);
    FZ_ASSERT(json_array_size(findings) == tp_check_nrules, "%zu findings for %zu rules",
              json_array_size(findings), tp_check_nrules);
    int code = tp_check_nagios(findings);
    FZ_ASSERT(code >= 0 && code <= 2, "nagios code %d", code);
    json_decref(findings);
    json_decref(facts);
    remove_names(names, nnames);
    return 0;
}
