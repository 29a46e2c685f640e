/* Node facts: RDMA devices (sys/class/infiniband) and their namespace mode,
 * CPU (count, cpufreq governors, SMT, NUMA nodes), GPUs on PCI, huge pages
 * and THP, the IOMMU mode and time synchronisation (the kernel hardening
 * sysctls are facts_sysctl.c's). NUMA placement comes from sysfs
 * (numa_node), the file hwloc itself reads, so a snapshot folder answers
 * exactly as the live host. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/timex.h>
#include <unistd.h>

#include "facts_int.h"
#include "tp/counters.h"

/* ---- RDMA ---- */

static bool is_number(const char *name)
{
    return tp__check_fx_prefixed_number(name, "");
}

/* The distinct non-empty GID types of a port, in GID index order. Reading
 * an unused GID entry fails on a live system; that is not a type. */
static json_t *gid_types(struct fx *c, const char *port_dir)
{
    char dir[PATH_MAX], path[PATH_MAX], buf[64];
    json_t *types = tp__check_fx_arr(c);
    struct tp_sysfs_names idx;
    tp__check_fx_fmt(dir, "%s/gid_attrs/types", port_dir);
    if (tp_sysfs_list(dir, FX_LIST, is_number, &idx) < 0)
        return types;
    for (size_t i = 0; i < idx.n; i++) {
        tp__check_fx_fmt(path, "%s/%s", dir, idx.v[i]);
        if (tp_sysfs_text(path, buf, sizeof buf) < 0 || !buf[0])
            continue;
        bool seen = false;
        size_t k;
        json_t *t;
        json_array_foreach(types, k, t) seen |= strcmp(json_string_value(t), buf) == 0;
        if (!seen)
            tp__check_fx_push(c, types, tp__check_fx_str(c, buf));
    }
    tp_sysfs_names_free(&idx);
    return types;
}

/* The netdev of a port: the GID table's ndevs/0 (set for RoCE), else the
 * first netdev of the device's PCI function (device/net). */
static json_t *port_netdev(struct fx *c, const char *dev_dir, const char *port_dir)
{
    char path[PATH_MAX], buf[64];
    tp__check_fx_fmt(path, "%s/gid_attrs/ndevs/0", port_dir);
    if (tp_sysfs_text(path, buf, sizeof buf) == 0 && buf[0])
        return tp__check_fx_str(c, buf);
    struct tp_sysfs_names nets;
    tp__check_fx_fmt(path, "%s/device/net", dev_dir);
    if (tp_sysfs_list(path, FX_LIST, NULL, &nets) < 0)
        return tp__check_fx_str(c, NULL);
    json_t *v = tp__check_fx_str(c, nets.n ? nets.v[0] : NULL);
    tp_sysfs_names_free(&nets);
    return v;
}

static json_t *rdma_device(struct fx *c, const char *base, const char *name)
{
    char dev_dir[PATH_MAX], path[PATH_MAX], buf[128];
    tp__check_fx_fmt(dev_dir, "%s/%s", base, name);
    json_t *d = tp__check_fx_obj(c), *ports = tp__check_fx_arr(c);
    tp__check_fx_set(c, d, "name", tp__check_fx_str(c, name));
    tp__check_fx_fmt(path, "%s/node_guid", dev_dir);
    tp__check_fx_set(
        c, d, "node_guid",
        tp__check_fx_str(c, tp_sysfs_text(path, buf, sizeof buf) == 0 ? buf : NULL));
    struct tp_sysfs_names pn;
    tp__check_fx_fmt(path, "%s/ports", dev_dir);
    if (tp_sysfs_list(path, FX_LIST, is_number, &pn) == 0) {
        for (size_t i = 0; i < pn.n; i++) {
            char port_dir[PATH_MAX];
            tp__check_fx_fmt(port_dir, "%s/ports/%s", dev_dir, pn.v[i]);
            json_t *p = tp__check_fx_obj(c);
            tp__check_fx_set(c, p, "port", tp__check_fx_int(c, true, strtol(pn.v[i], NULL, 10)));
            /* state reads "4: ACTIVE" */
            tp__check_fx_fmt(path, "%s/state", port_dir);
            const char *state = NULL;
            if (tp_sysfs_text(path, buf, sizeof buf) == 0) {
                char *colon = strchr(buf, ':');
                state = colon ? colon + 1 + strspn(colon + 1, " ") : buf;
            }
            tp__check_fx_set(c, p, "state", tp__check_fx_str(c, state));
            tp__check_fx_fmt(path, "%s/link_layer", port_dir);
            tp__check_fx_set(
                c, p, "link_layer",
                tp__check_fx_str(
                    c, tp_sysfs_text(path, buf, sizeof buf) == 0 && buf[0] ? buf : NULL));
            tp__check_fx_set(c, p, "netdev", port_netdev(c, dev_dir, port_dir));
            tp__check_fx_set(c, p, "gid_types", gid_types(c, port_dir));
            tp__check_fx_push(c, ports, p);
        }
        tp_sysfs_names_free(&pn);
    }
    tp__check_fx_set(c, d, "ports", ports);
    return d;
}

/* "netns shared" / "netns exclusive", anywhere in the text (ROOT/rdma-system.txt,
 * the `rdma system show` text form) or the JSON of `rdma -j system show`. */
static const char *netns_mode_of(const char *text)
{
    json_t *doc = json_loads(text, 0, NULL);
    if (doc) {
        json_t *o = json_is_array(doc) ? json_array_get(doc, 0) : doc;
        const char *m = json_string_value(json_object_get(o, "netns"));
        const char *r = m && !strcmp(m, "shared")      ? "shared"
                        : m && !strcmp(m, "exclusive") ? "exclusive"
                                                       : NULL;
        json_decref(doc);
        return r;
    }
    if (strstr(text, "netns shared"))
        return "shared";
    if (strstr(text, "netns exclusive"))
        return "exclusive";
    return NULL;
}

static json_t *netns_mode(struct fx *c)
{
    const char *mode = NULL;
    if (c->live) {
        char out[4096], why[128];
        char *argv[] = {"rdma", "-j", "system", "show", NULL};
        if (tp__check_fx_run(argv, out, sizeof out, 5000, why) < 0)
            tp__check_fx_missing(c, "rdma.netns_mode", "%s", why);
        else if (!(mode = netns_mode_of(out)))
            tp__check_fx_missing(c, "rdma.netns_mode", "`rdma -j system show` names no netns mode");
    } else {
        char path[PATH_MAX];
        char *text = tp__check_fx_path(c, path, "/rdma-system.txt") == 0
                         ? tp__check_fx_slurp_abs(path, 65536, NULL)
                         : NULL;
        if (!text)
            tp__check_fx_missing(c, "rdma.netns_mode",
                                 "no rdma-system.txt in the snapshot (`rdma system show`)");
        else if (!(mode = netns_mode_of(text)))
            tp__check_fx_missing(c, "rdma.netns_mode", "rdma-system.txt names no netns mode");
        free(text);
    }
    return tp__check_fx_str(c, mode);
}

void tp__check_fx_node_rdma(struct fx *c)
{
    char base[PATH_MAX];
    struct tp_sysfs_names devs = {0};
    if (tp__check_fx_path(c, base, "/sys/class/infiniband") < 0 ||
        tp_sysfs_list(base, FX_LIST, NULL, &devs) < 0 || devs.n == 0) {
        tp_sysfs_names_free(&devs);
        tp__check_fx_set(c, c->facts, "rdma", json_null());
        tp__check_fx_missing(c, "rdma", "no RDMA device in sys/class/infiniband");
        return;
    }
    json_t *r = tp__check_fx_obj(c), *list = tp__check_fx_arr(c);
    tp__check_fx_set(c, r, "netns_mode", netns_mode(c));
    for (size_t i = 0; i < devs.n; i++)
        tp__check_fx_push(c, list, rdma_device(c, base, devs.v[i]));
    tp_sysfs_names_free(&devs);
    tp__check_fx_set(c, r, "devices", list);
    tp__check_fx_set(c, c->facts, "rdma", r);
}

/* ---- CPU and NUMA ---- */

static bool is_cpu(const char *name)
{
    return tp__check_fx_prefixed_number(name, "cpu");
}

static bool is_node(const char *name)
{
    return tp__check_fx_prefixed_number(name, "node");
}

static bool not_dot(const char *name)
{
    return name[0] != '.';
}

static void cpu(struct fx *c)
{
    char base[PATH_MAX], path[PATH_MAX], buf[64];
    json_t *o = tp__check_fx_obj(c);
    struct tp_sysfs_names cpus = {0};
    if (tp__check_fx_path(c, base, "/sys/devices/system/cpu") < 0 ||
        tp_sysfs_list(base, FX_LIST, is_cpu, &cpus) < 0 || cpus.n == 0) {
        tp__check_fx_set(c, o, "count", json_null());
        tp__check_fx_unseen(c, "cpu.count", "no sys/devices/system/cpu/cpuN");
    } else {
        tp__check_fx_set(c, o, "count", tp__check_fx_int(c, true, (long)cpus.n));
    }
    json_t *gov = tp__check_fx_obj(c);
    size_t with_gov = 0;
    for (size_t i = 0; i < cpus.n; i++) {
        tp__check_fx_fmt(path, "%s/%s/cpufreq/scaling_governor", base, cpus.v[i]);
        if (tp_sysfs_text(path, buf, sizeof buf) < 0 || !buf[0])
            continue;
        json_t *n = json_object_get(gov, buf);
        tp__check_fx_set(c, gov, buf,
                         tp__check_fx_int(c, true, n ? (long)json_integer_value(n) + 1 : 1));
        with_gov++;
    }
    if (with_gov == 0) {
        json_decref(gov);
        gov = json_null();
        tp__check_fx_missing(c, "cpu.governors",
                             "no cpufreq (sys/devices/system/cpu/cpuN/cpufreq)");
    }
    tp__check_fx_set(c, o, "governors", gov);
    tp_sysfs_names_free(&cpus);
    tp__check_fx_fmt(path, "%s/smt/control", base);
    tp__check_fx_set(c, o, "smt",
                     tp__check_fx_str(c, tp_sysfs_text(path, buf, sizeof buf) == 0 && buf[0]
                                             ? buf
                                             : NULL));
    struct tp_sysfs_names nodes;
    if (tp__check_fx_path(c, base, "/sys/devices/system/node") == 0 &&
        tp_sysfs_list(base, FX_LIST, is_node, &nodes) == 0) {
        tp__check_fx_set(c, o, "numa_nodes", tp__check_fx_int(c, nodes.n > 0, (long)nodes.n));
        tp_sysfs_names_free(&nodes);
    } else {
        tp__check_fx_set(c, o, "numa_nodes", json_null());
        tp__check_fx_missing(c, "cpu.numa_nodes", "no sys/devices/system/node");
    }
    tp__check_fx_set(c, c->facts, "cpu", o);
}

/* ---- GPUs ---- */

static bool gpu_vendor(const char *v)
{
    return !strcmp(v, "0x10de") || !strcmp(v, "0x1002"); /* NVIDIA, AMD */
}

/* What GPUDirect RDMA needs from the kernel: the peer-memory module that
 * lets an RDMA NIC register GPU memory (nvidia_peermem, or the older
 * nv_peer_mem), and the NVIDIA driver's version. */
static void gpudirect(struct fx *c)
{
    static const char *const mods[] = {"nvidia_peermem", "nv_peer_mem"};
    char path[PATH_MAX], ver[64];
    json_t *g = tp__check_fx_obj(c);
    const char *peer = NULL;
    for (size_t i = 0; i < 2 && !peer; i++) {
        struct stat st;
        if (tp__check_fx_path(c, path, "/sys/module/%s", mods[i]) == 0 && stat(path, &st) == 0 &&
            S_ISDIR(st.st_mode))
            peer = mods[i];
    }
    tp__check_fx_set(c, g, "peermem", tp__check_fx_str(c, peer));
    bool have_ver = tp__check_fx_read(c, ver, sizeof ver, "/sys/module/nvidia/version") == 0;
    tp__check_fx_set(c, g, "nvidia_driver", tp__check_fx_str(c, have_ver ? ver : NULL));
    tp__check_fx_set(c, c->facts, "gpudirect", g);
}

static void gpus(struct fx *c)
{
    char base[PATH_MAX], path[PATH_MAX], vendor[32], cls[32];
    struct tp_sysfs_names devs;
    json_t *list = tp__check_fx_arr(c);
    if (tp__check_fx_path(c, base, "/sys/bus/pci/devices") < 0 ||
        tp_sysfs_list(base, FX_LIST, not_dot, &devs) < 0) {
        json_decref(list);
        tp__check_fx_set(c, c->facts, "gpus", json_null());
        tp__check_fx_unseen(c, "gpus", "no sys/bus/pci/devices");
        return;
    }
    for (size_t i = 0; i < devs.n; i++) {
        tp__check_fx_fmt(path, "%s/%s/class", base, devs.v[i]);
        if (tp_sysfs_text(path, cls, sizeof cls) < 0 || strncmp(cls, "0x03", 4) != 0)
            continue;
        tp__check_fx_fmt(path, "%s/%s/vendor", base, devs.v[i]);
        if (tp_sysfs_text(path, vendor, sizeof vendor) < 0 || !gpu_vendor(vendor))
            continue;
        long node = 0;
        tp__check_fx_fmt(path, "%s/%s/numa_node", base, devs.v[i]);
        bool has_node = tp__check_fx_long_abs(path, &node) == 0 && node >= 0;
        json_t *g = tp__check_fx_obj(c);
        tp__check_fx_set(c, g, "pci", tp__check_fx_str(c, devs.v[i]));
        tp__check_fx_set(c, g, "vendor", tp__check_fx_str(c, vendor));
        tp__check_fx_set(c, g, "class", tp__check_fx_str(c, cls));
        tp__check_fx_set(c, g, "numa_node", tp__check_fx_int(c, has_node, node));
        tp__check_fx_push(c, list, g);
    }
    tp_sysfs_names_free(&devs);
    tp__check_fx_set(c, c->facts, "gpus", list);
    gpudirect(c);
}

/* The PCIe links of the devices on a training node's data paths (NIC,
 * GPU, NVMe, accelerator) that report one, read by the counters layer
 * under the same root: {pci, kind, speed_mts, max_speed_mts, width,
 * max_width}, null where a file is absent. */
static void pcie_links(struct fx *c)
{
    struct tp_ctr_snap s;
    tp_error err = {0};
    char base[PATH_MAX];
    if (tp__check_fx_path(c, base, "/sys/bus/pci/devices") < 0 || !tp__check_fx_is_dir(base)) {
        tp__check_fx_set(c, c->facts, "pcie_links", json_null());
        tp__check_fx_unseen(c, "pcie_links", "no sys/bus/pci/devices");
        return;
    }
    if (tp_ctr_snapshot_links(c->live ? NULL : c->root, &s, &err) != 0) {
        tp_ctr_snap_free(&s);
        tp__check_fx_set(c, c->facts, "pcie_links", json_null());
        tp__check_fx_unseen(c, "pcie_links", "%s", err.msg);
        return;
    }
    static const char *const levels[] = {"current_link_speed", "max_link_speed",
                                         "current_link_width", "max_link_width"};
    static const char *const keys[] = {"speed_mts", "max_speed_mts", "width", "max_width"};
    json_t *list = tp__check_fx_arr(c);
    for (size_t d = 0; d < s.ndevs; d++) {
        const char *dev = strchr(s.devs[d], ':') + 1; /* "pcie:BDF" */
        char cls[32];
        const char *kind = "other";
        if (tp__check_fx_read(c, cls, sizeof cls, "/sys/bus/pci/devices/%s/class", dev) == 0)
            kind = strncmp(cls, "0x02", 4) == 0   ? "nic"
                   : strncmp(cls, "0x03", 4) == 0 ? "gpu"
                   : strncmp(cls, "0x12", 4) == 0 ? "accelerator"
                   : strncmp(cls, "0x0108", 6) == 0 ? "nvme"
                                                    : "other";
        bool any = false;
        for (size_t i = 0; i < s.n && !any; i++)
            any = strcmp(s.c[i].dev, dev) == 0;
        if (!any) /* a device that reports no link (a virtual one) */
            continue;
        json_t *l = tp__check_fx_obj(c);
        tp__check_fx_set(c, l, "pci", tp__check_fx_str(c, dev));
        tp__check_fx_set(c, l, "kind", tp__check_fx_str(c, kind));
        for (size_t k = 0; k < 4; k++) {
            bool have = false;
            long v = 0;
            for (size_t i = 0; i < s.n && !have; i++)
                if (strcmp(s.c[i].dev, dev) == 0 && strcmp(s.c[i].name, levels[k]) == 0) {
                    have = true;
                    v = (long)s.c[i].value;
                }
            tp__check_fx_set(c, l, keys[k], tp__check_fx_int(c, have, v));
        }
        tp__check_fx_push(c, list, l);
    }
    tp_ctr_snap_free(&s);
    tp__check_fx_set(c, c->facts, "pcie_links", list);
}

/* ---- memory ---- */

static void memory(struct fx *c)
{
    char path[PATH_MAX];
    json_t *o = tp__check_fx_obj(c);
    bool total_ok = false, size_ok = false;
    long total = 0, size_kb = 0;
    FILE *f = tp__check_fx_path(c, path, "/proc/meminfo") == 0 ? tp_sysfs_open(path) : NULL;
    if (f) {
        char line[256];
        while (fgets(line, sizeof line, f)) {
            total_ok |= sscanf(line, "HugePages_Total: %ld", &total) == 1;
            size_ok |= sscanf(line, "Hugepagesize: %ld kB", &size_kb) == 1;
        }
        fclose(f);
    } else {
        tp__check_fx_unseen(c, "memory", "no proc/meminfo");
    }
    tp__check_fx_set(c, o, "hugepages_total", tp__check_fx_int(c, total_ok, total));
    tp__check_fx_set(c, o, "hugepage_size_kb", tp__check_fx_int(c, size_ok, size_kb));
    /* "always [madvise] never": the bracketed word is the mode in force */
    char buf[128];
    const char *thp = NULL;
    if (tp__check_fx_read(c, buf, sizeof buf, "/sys/kernel/mm/transparent_hugepage/enabled") == 0) {
        char *open = strchr(buf, '['), *close = open ? strchr(open, ']') : NULL;
        if (close) {
            *close = '\0';
            thp = open + 1;
        }
    } else {
        tp__check_fx_missing(c, "memory.thp", "no sys/kernel/mm/transparent_hugepage/enabled");
    }
    tp__check_fx_set(c, o, "thp", tp__check_fx_str(c, thp));
    tp__check_fx_set(c, c->facts, "memory", o);
}

/* ---- IOMMU ---- */

static bool cmdline_has(const char *cmdline, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = cmdline; (p = strstr(p, word)) != NULL; p += n)
        if ((p == cmdline || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
    return false;
}

/* The mode, by the rule docs/check.md states: the kernel command line
 * first (off, then passthrough), then the registered IOMMUs
 * (sys/class/iommu): present → translated, unless every IOMMU group's type
 * is "identity" (a kernel built for passthrough by default); none
 * registered → off; no sys/class/iommu folder at all (a snapshot without
 * it) → unknown. */
static void iommu(struct fx *c)
{
    char path[PATH_MAX], cmdline[4096];
    json_t *o = tp__check_fx_obj(c);
    bool have_cmd = tp__check_fx_read(c, cmdline, sizeof cmdline, "/proc/cmdline") == 0;
    if (!have_cmd)
        tp__check_fx_unseen(c, "iommu.cmdline", "no proc/cmdline");
    struct tp_sysfs_names groups = {0}, units = {0};
    bool have_groups = tp__check_fx_path(c, path, "/sys/kernel/iommu_groups") == 0 &&
                       tp_sysfs_list(path, FX_LIST, is_number, &groups) == 0;
    bool have_class = tp__check_fx_path(c, path, "/sys/class/iommu") == 0 &&
                      tp_sysfs_list(path, FX_LIST, NULL, &units) == 0;
    size_t identity = 0;
    for (size_t i = 0; i < groups.n; i++) {
        char type[32];
        if (tp__check_fx_read(c, type, sizeof type, "/sys/kernel/iommu_groups/%s/type",
                              groups.v[i]) == 0 &&
            !strcmp(type, "identity"))
            identity++;
    }
    const char *mode;
    if (have_cmd && (cmdline_has(cmdline, "intel_iommu=off") ||
                     cmdline_has(cmdline, "amd_iommu=off") || cmdline_has(cmdline, "iommu=off")))
        mode = "off";
    else if (have_cmd &&
             (cmdline_has(cmdline, "iommu=pt") || cmdline_has(cmdline, "iommu.passthrough=1")))
        mode = "passthrough";
    else if (units.n > 0)
        mode = groups.n > 0 && identity == groups.n ? "passthrough" : "translated";
    else if (have_class)
        mode = "off";
    else
        mode = "unknown";
    tp__check_fx_set(c, o, "mode", tp__check_fx_str(c, mode));
    tp__check_fx_set(c, o, "cmdline", tp__check_fx_str(c, have_cmd ? cmdline : NULL));
    tp__check_fx_set(c, o, "groups", tp__check_fx_int(c, have_groups, (long)groups.n));
    tp_sysfs_names_free(&groups);
    tp_sysfs_names_free(&units);
    tp__check_fx_set(c, c->facts, "iommu", o);
}

/* ---- time ---- */

static void time_sync(struct fx *c)
{
    json_t *o = tp__check_fx_obj(c);
    json_t *sync = json_null(), *source = json_null(), *maxerr = json_null();
    if (c->live) {
        struct timex tx = {0}; /* modes 0: read only */
        int state = ntp_adjtime(&tx);
        if (state < 0) {
            tp__check_fx_unseen(c, "time", "ntp_adjtime: %s", strerror(errno));
        } else {
            sync = json_boolean(!(tx.status & STA_UNSYNC) && state != TIME_ERROR);
            source = tp__check_fx_str(c, "adjtimex");
            maxerr = tp__check_fx_int(c, true, tx.maxerror);
        }
    } else {
        char path[PATH_MAX];
        char why[512];
        json_t *doc = NULL;
        if (tp__check_fx_path(c, path, "/time.json") < 0 || access(path, F_OK) < 0)
            tp__check_fx_unseen(c, "time", "no time.json in the snapshot");
        else if (!(doc = tp__check_fx_json(path, why, sizeof why)))
            tp__check_fx_unseen(c, "time", "%s", why);
        else if (!json_is_boolean(json_object_get(doc, "synchronized")))
            tp__check_fx_unseen(c, "time", "time.json has no boolean \"synchronized\"");
        else {
            sync = json_incref(json_object_get(doc, "synchronized"));
            source = tp__check_fx_str(c, "file");
            json_t *me = json_object_get(doc, "maxerror_us");
            if (json_is_integer(me))
                maxerr = json_incref(me);
        }
        json_decref(doc);
    }
    tp__check_fx_set(c, o, "synchronized", sync);
    tp__check_fx_set(c, o, "source", source);
    tp__check_fx_set(c, o, "maxerror_us", maxerr);
    tp__check_fx_set(c, c->facts, "time", o);
}

void tp__check_fx_node(struct fx *c)
{
    cpu(c);
    gpus(c);
    pcie_links(c);
    memory(c);
    iommu(c);
    time_sync(c);
}
