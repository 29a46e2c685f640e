/* Provenance facts for result documents. Every file is read relative to a
 * root so tests and offline audits can point at a snapshot of /etc, /proc and
 * /sys; only uname, sysconf and getifaddrs describe the running machine, and
 * the latter two are used only when no root is given. A fact that cannot be
 * read becomes JSON null: provenance never makes a measurement fail. */
#include "tp/sysinfo.h"

#include <arpa/inet.h>
#include <sched.h>
#include <dlfcn.h>
#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netinet/in.h>
#include <rdma/fabric.h> /* FI_MAJOR, FI_MINOR */
#include <sodium.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "tp/json.h"
#include "tp/sysfs.h"

/* Keys that name the CPU, best first: x86, then ARM boards, MIPS, POWER,
 * RISC-V and old 32-bit ARM. */
static const char *const cpu_model_keys[] = {"model name", "Model", "cpu model",
                                             "cpu",        "uarch", "Processor"};
#define N_MODEL_KEYS (sizeof cpu_model_keys / sizeof cpu_model_keys[0])

static int live(const char *root)
{
    return !root || !*root;
}

/* Format a path into out[PATH_MAX]; -1 when it does not fit, so a long
 * root is reported as a missing fact instead of reading a truncated path. */
#define fmt_path(out, ...) tp_sysfs_path(out, PATH_MAX, NULL, __VA_ARGS__)

static int join(char *out, const char *root, const char *rel)
{
    return tp_sysfs_path(out, PATH_MAX, root, "%s", rel);
}

static void trim_right(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
}

/* First line of the small file dir/name, without its newline; 0 or -1. */
static int read_line(const char *dir, const char *name, char *buf, size_t cap)
{
    char path[PATH_MAX];
    return fmt_path(path, "%s/%s", dir, name) == 0 ? tp_sysfs_line(path, buf, cap) : -1;
}

static int read_long(const char *dir, const char *name, long *out)
{
    char path[PATH_MAX];
    long long v;
    if (fmt_path(path, "%s/%s", dir, name) < 0 || tp_sysfs_long(path, &v) < 0)
        return -1;
    *out = (long)v;
    return 0;
}

static json_t *long_or_null(int ok, long v)
{
    return ok ? json_integer(v) : json_null();
}

/* Split "key<ws>: value" in place; 0 or -1 when the line has no colon. */
static int split_kv(char *line, char **key, char **val)
{
    char *colon = strchr(line, ':');
    if (!colon)
        return -1;
    *colon = '\0';
    trim_right(line);
    char *v = colon + 1;
    while (*v == ' ' || *v == '\t')
        v++;
    trim_right(v);
    *key = line;
    *val = v;
    return 0;
}

/* "processor" on most architectures, "processor N" on s390x. */
static int is_processor_key(const char *key)
{
    return strncmp(key, "processor", 9) == 0 && (key[9] == '\0' || key[9] == ' ');
}

/* PRETTY_NAME from os-release, unquoted; NULL if absent. Caller frees. */
static char *os_pretty_name(const char *root)
{
    static const char *const files[] = {"/etc/os-release", "/usr/lib/os-release"};
    for (size_t i = 0; i < 2; i++) {
        char path[PATH_MAX];
        FILE *f = join(path, root, files[i]) == 0 ? tp_sysfs_open(path) : NULL;
        if (!f)
            continue;
        char line[512];
        char *name = NULL;
        while (!name && fgets(line, sizeof line, f)) {
            if (strncmp(line, "PRETTY_NAME=", 12) != 0)
                continue;
            char *v = line + 12;
            trim_right(v);
            size_t n = strlen(v);
            if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
                v[n - 1] = '\0';
                v++;
            }
            /* Shell-style escapes: drop the backslash before the next char. */
            char *w = v;
            for (char *r = v; *r; r++) {
                if (*r == '\\' && r[1])
                    r++;
                *w++ = *r;
            }
            *w = '\0';
            name = strdup(v);
        }
        fclose(f);
        return name;
    }
    return NULL;
}

/* Count the CPUs in a list like "0-3,8,10-11"; -1 if malformed. */
static long count_cpu_list(const char *s)
{
    long total = 0;
    while (*s) {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s)
            return -1;
        if (*end == '-') {
            s = end + 1;
            b = strtol(s, &end, 10);
            if (end == s || b < a)
                return -1;
        }
        total += b - a + 1;
        s = end;
        if (*s == ',')
            s++;
        else if (*s)
            return -1;
    }
    return total;
}

static json_t *cpu_json(const char *root)
{
    char path[PATH_MAX];
    char *model[N_MODEL_KEYS] = {0};
    long logical = 0;
    FILE *f = join(path, root, "/proc/cpuinfo") == 0 ? tp_sysfs_open(path) : NULL;
    if (f) {
        char *line = NULL;
        size_t cap = 0;
        while (getline(&line, &cap, f) > 0) {
            char *key, *val;
            if (split_kv(line, &key, &val) < 0)
                continue;
            if (is_processor_key(key))
                logical++;
            for (size_t i = 0; i < N_MODEL_KEYS; i++)
                if (!model[i] && *val && strcmp(key, cpu_model_keys[i]) == 0)
                    model[i] = strdup(val);
        }
        free(line);
        fclose(f);
    }
    const char *best = NULL;
    for (size_t i = 0; i < N_MODEL_KEYS && !best; i++)
        best = model[i];

    long online = -1;
    if (live(root)) {
        online = sysconf(_SC_NPROCESSORS_ONLN);
    } else {
        char buf[256];
        if (join(path, root, "/sys/devices/system/cpu") == 0 &&
            read_line(path, "online", buf, sizeof buf) == 0)
            online = count_cpu_list(buf);
    }

    json_t *cpu = json_object();
    if (cpu && (json_object_set_new(cpu, "model", tp_json_text(best)) < 0 ||
                json_object_set_new(cpu, "logical_cores", long_or_null(logical > 0, logical)) < 0 ||
                json_object_set_new(cpu, "online", long_or_null(online > 0, online)) < 0)) {
        json_decref(cpu);
        cpu = NULL;
    }
    for (size_t i = 0; i < N_MODEL_KEYS; i++)
        free(model[i]);
    return cpu;
}

static int prefix_len(const struct sockaddr *mask)
{
    const unsigned char *b;
    size_t n;
    if (!mask)
        return -1;
    if (mask->sa_family == AF_INET) {
        b = (const unsigned char *)&((const struct sockaddr_in *)(const void *)mask)->sin_addr;
        n = 4;
    } else if (mask->sa_family == AF_INET6) {
        b = ((const struct sockaddr_in6 *)(const void *)mask)->sin6_addr.s6_addr;
        n = 16;
    } else {
        return -1;
    }
    int bits = 0;
    for (size_t i = 0; i < n; i++)
        bits += __builtin_popcount(b[i]);
    return bits;
}

/* The interface's addresses as "addr/prefix" strings, from getifaddrs(). */
static json_t *addresses_json(const struct ifaddrs *all, const char *name)
{
    json_t *arr = json_array();
    for (const struct ifaddrs *ifa = all; arr && ifa; ifa = ifa->ifa_next) {
        if (!ifa->ifa_addr || strcmp(ifa->ifa_name, name) != 0)
            continue;
        int fam = ifa->ifa_addr->sa_family;
        const void *a;
        if (fam == AF_INET)
            a = &((const struct sockaddr_in *)(const void *)ifa->ifa_addr)->sin_addr;
        else if (fam == AF_INET6)
            a = &((const struct sockaddr_in6 *)(const void *)ifa->ifa_addr)->sin6_addr;
        else
            continue;
        char text[INET6_ADDRSTRLEN + 8];
        if (!inet_ntop(fam, a, text, INET6_ADDRSTRLEN))
            continue;
        int plen = prefix_len(ifa->ifa_netmask);
        if (plen >= 0)
            snprintf(text + strlen(text), sizeof text - strlen(text), "/%d", plen);
        if (json_array_append_new(arr, json_string(text)) < 0) {
            json_decref(arr);
            arr = NULL;
        }
    }
    return arr;
}

/* Basename of the device/driver symlink; NULL for virtual interfaces. */
static char *driver_name(const char *nicdir)
{
    char path[PATH_MAX], target[PATH_MAX];
    if (fmt_path(path, "%s/device/driver", nicdir) < 0)
        return NULL;
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n <= 0)
        return NULL;
    target[n] = '\0';
    while (n > 1 && target[n - 1] == '/')
        target[--n] = '\0';
    const char *slash = strrchr(target, '/');
    return strdup(slash ? slash + 1 : target);
}

/* Live system only: the driver as `ethtool -i` reports it, which also names
 * the drivers of virtual interfaces (veth, bridge, bond) that have no device
 * link in sysfs. */
static char *driver_ethtool(const char *name)
{
    struct ethtool_drvinfo info = {.cmd = ETHTOOL_GDRVINFO};
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    if (strlen(name) >= sizeof ifr.ifr_name)
        return NULL;
    memcpy(ifr.ifr_name, name, strlen(name) + 1);
    ifr.ifr_data = (char *)&info;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return NULL;
    int rc = ioctl(fd, SIOCETHTOOL, &ifr);
    close(fd);
    if (rc != 0 || !info.driver[0])
        return NULL;
    info.driver[sizeof info.driver - 1] = '\0';
    return strdup(info.driver);
}

static json_t *nic_json(const char *netdir, const char *name, const struct ifaddrs *ifas,
                        int with_addrs)
{
    char dir[PATH_MAX], state[64];
    long speed = -1, mtu = 0, type = -1;
    int have_dir = fmt_path(dir, "%s/%s", netdir, name) == 0;

    int have_speed = have_dir && read_long(dir, "speed", &speed) == 0 && speed >= 0;
    int have_mtu = have_dir && read_long(dir, "mtu", &mtu) == 0;
    int have_state = have_dir && read_line(dir, "operstate", state, sizeof state) == 0;
    /* The ARP hardware type is what makes an interface a loopback; the name
     * only decides when the type cannot be read. */
    int have_type = have_dir && read_long(dir, "type", &type) == 0;
    int loopback = have_type ? type == ARPHRD_LOOPBACK : strcmp(name, "lo") == 0;
    char *driver = have_dir ? driver_name(dir) : NULL;
    if (!driver && with_addrs && !loopback)
        driver = driver_ethtool(name);

    json_t *nic = json_object();
    if (nic && (json_object_set_new(nic, "name", tp_json_text(name)) < 0 ||
                json_object_set_new(nic, "speed_mbps", long_or_null(have_speed, speed)) < 0 ||
                json_object_set_new(nic, "mtu", long_or_null(have_mtu, mtu)) < 0 ||
                json_object_set_new(nic, "driver", tp_json_text(driver)) < 0 ||
                json_object_set_new(nic, "state", tp_json_text(have_state ? state : NULL)) < 0 ||
                json_object_set_new(nic, "loopback", json_boolean(loopback)) < 0 ||
                json_object_set_new(nic, "addresses",
                                    with_addrs ? addresses_json(ifas, name) : json_null()) < 0)) {
        json_decref(nic);
        nic = NULL;
    }
    free(driver);
    return nic;
}

static bool is_dir(const char *dir, const char *name)
{
    char path[PATH_MAX];
    struct stat st;
    return fmt_path(path, "%s/%s", dir, name) == 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* One object per entry of sys/class/net, sorted by name; null if the folder
 * cannot be read. Files there (bonding_masters) are not interfaces. */
static json_t *nics_json(const char *root)
{
    char netdir[PATH_MAX];
    struct tp_sysfs_names names;
    if (join(netdir, root, "/sys/class/net") < 0 || tp_sysfs_list(netdir, 0, NULL, &names) < 0)
        return errno == ENOMEM ? NULL : json_null();

    struct ifaddrs *ifas = NULL;
    int with_addrs = live(root) && getifaddrs(&ifas) == 0;
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < names.n; i++)
        if (is_dir(netdir, names.v[i]) &&
            json_array_append_new(arr, nic_json(netdir, names.v[i], ifas, with_addrs)) < 0) {
            json_decref(arr);
            arr = NULL;
        }
    tp_sysfs_names_free(&names);
    if (ifas)
        freeifaddrs(ifas);
    return arr;
}

/* libfabric's version where this process loaded it (src/fabric loads it
 * on first use): "" where it did not, which leaves it out. */
static void libfabric_version(char *out, size_t cap)
{
    out[0] = '\0';
    void *h = dlopen("libfabric.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return;
    uint32_t (*version)(void);
    *(void **)&version = dlsym(h, "fi_version");
    if (version) {
        uint32_t v = version();
        snprintf(out, cap, "%u.%u", (unsigned)FI_MAJOR(v), (unsigned)FI_MINOR(v));
    }
    dlclose(h);
}

static json_t *libraries_json(void)
{
    char fab[32];
    libfabric_version(fab, sizeof fab);
#if JANSSON_VERSION_HEX >= 0x020d00
    const char *jv = jansson_version_str(); /* the library actually loaded */
#else
    const char *jv = JANSSON_VERSION;
#endif
    json_t *lib = json_object();
    if (lib && ((fab[0] && json_object_set_new(lib, "libfabric", json_string(fab)) < 0) ||
                json_object_set_new(lib, "jansson", tp_json_text(jv)) < 0 ||
                json_object_set_new(lib, "libsodium", tp_json_text(sodium_version_string())) < 0)) {
        json_decref(lib);
        lib = NULL;
    }
    return lib;
}

json_t *tp_sysinfo_json(const char *root)
{
    struct utsname u;
    int have_uname = uname(&u) == 0;
    char kernel[sizeof u.release + sizeof u.version + 1];
    if (have_uname)
        snprintf(kernel, sizeof kernel, "%s %s", u.release, u.version);
    char *os = os_pretty_name(root);

    json_t *doc = json_object();
    if (doc && (json_object_set_new(doc, "host", tp_json_text(have_uname ? u.nodename : NULL)) < 0 ||
                json_object_set_new(doc, "kernel", tp_json_text(have_uname ? kernel : NULL)) < 0 ||
                json_object_set_new(doc, "os", tp_json_text(os)) < 0 ||
                json_object_set_new(doc, "cpu", cpu_json(root)) < 0 ||
                json_object_set_new(doc, "nics", nics_json(root)) < 0 ||
                json_object_set_new(doc, "libraries", libraries_json()) < 0)) {
        json_decref(doc);
        doc = NULL;
    }
    free(os);
    return doc;
}

/* CPU list in the kernel's "0-3,8" form. */
static void cpu_list(const cpu_set_t *set, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, set))
            continue;
        int e = c;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set))
            e++;
        int n = e > c ? snprintf(out + len, cap - len, "%s%d-%d", len ? "," : "", c, e)
                      : snprintf(out + len, cap - len, "%s%d", len ? "," : "", c);
        if (n < 0 || (size_t)n >= cap - len)
            break;
        len += (size_t)n;
        c = e;
    }
}

json_t *tp_process_json(void)
{
    cpu_set_t set;
    char list[512] = "";
    int count = -1;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        cpu_list(&set, list, sizeof list);
        count = CPU_COUNT(&set);
    }
    return json_pack("{s:i, s:s, s:i}", "pid", (int)getpid(), "affinity", list, "cpus_allowed",
                     count);
}

uint64_t tp_mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return (uint64_t)kb * 1024;
}
