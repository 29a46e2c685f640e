/* Block path: from a path to the filesystem it lives on, the block device
 * behind it, the disks under that device and, for NVMe, the controllers with
 * their transport and target. Everything comes from sysfs under a root and
 * from a mountinfo file, so a snapshot is described exactly as the live
 * machine is.
 *
 * The main idea: work on canonical (realpath) sysfs folders, because every
 * relation the kernel documents is a folder or a symlink. A partition is a
 * subfolder of its disk; slaves/ links to the devices a dm or md device is
 * stacked on; an NVMe namespace sits under its controller, or with native
 * multipath under its subsystem, whose folder links to every controller.
 * Facts that cannot be read become null; only a path that does not exist is
 * an error. */
#include "tp/blkpath.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "tp/file.h"
#include "tp/json.h"
#include "tp/sysfs.h"

/* Stacking deeper than this (dm over md over partitions ...) is taken as a
 * loop in a broken snapshot. */
#define MAX_DEPTH 16

static int live(const char *root)
{
    return !root || !*root;
}

static const char *sys_dir(const char *root)
{
    return live(root) ? "/sys" : root;
}

/* Format a path into out[PATH_MAX]; -1 when it does not fit, so a long root
 * is a missing fact instead of a truncated path. */
#define fmt_path(out, ...) tp_sysfs_path(out, PATH_MAX, NULL, __VA_ARGS__)

static const char *base(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The folder holding path (path is canonical: no trailing slash). */
static void parent_of(const char *path, char *out)
{
    size_t n = (size_t)(base(path) - path);
    if (n > 1)
        n--; /* drop the slash, except for "/" itself */
    memcpy(out, path, n);
    out[n] = '\0';
}

static int exists(const char *dir, const char *name)
{
    char path[PATH_MAX];
    return fmt_path(path, "%s/%s", dir, name) == 0 && access(path, F_OK) == 0;
}

/* First line of dir/name with surrounding blanks removed (NVMe pads model
 * and serial with spaces). 0 when read (possibly empty), -ENOENT when the
 * file is absent, -1 when it is there but cannot be read (a FIFO or a
 * device in a snapshot is refused, not waited on). */
static int read_attr(const char *dir, const char *name, char *buf, size_t cap)
{
    char path[PATH_MAX];
    buf[0] = '\0';
    if (fmt_path(path, "%s/%s", dir, name) < 0)
        return -1;
    if (tp_sysfs_line(path, buf, cap) < 0)
        return errno == ENOENT || errno == ENOTDIR ? -ENOENT : -1;
    size_t lead = strspn(buf, " \t");
    memmove(buf, buf + lead, strlen(buf) - lead + 1);
    return 0;
}

/* A JSON string of a non-empty attribute, else null. */
static json_t *attr_json(const char *dir, const char *name)
{
    char buf[512];
    if (read_attr(dir, name, buf, sizeof buf) < 0 || !buf[0])
        return json_null();
    return tp_json_text(buf);
}

static int read_long(const char *dir, const char *name, long long *out)
{
    char path[PATH_MAX];
    return fmt_path(path, "%s/%s", dir, name) == 0 ? tp_sysfs_long(path, out) : -1;
}

static json_t *long_json(const char *dir, const char *name)
{
    long long v;
    return read_long(dir, name, &v) == 0 ? json_integer(v) : json_null();
}

/* Set key to value (a new reference, NULL when allocation failed); -1 on
 * failure so callers can or the results together. */
static int put(json_t *obj, const char *key, json_t *value)
{
    return value ? json_object_set_new(obj, key, value) : -1;
}

/* A growable list of strings. */
struct list {
    char **v;
    size_t n, cap;
};

static int list_add(struct list *l, const char *s)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        char **grown = realloc(l->v, cap * sizeof *grown);
        if (!grown)
            return -1;
        l->v = grown;
        l->cap = cap;
    }
    if (!(l->v[l->n] = strdup(s)))
        return -1;
    l->n++;
    return 0;
}

static int list_has(const struct list *l, const char *s)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i], s) == 0)
            return 1;
    return 0;
}

static void list_free(struct list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

/* Entry names of dir/sub that pass keep (all when NULL), in natural order
 * (nvme2 before nvme10); a missing folder is an empty list. -1 only when out
 * of memory. */
static int list_dir(const char *dir, const char *sub, bool (*keep)(const char *),
                    struct tp_sysfs_names *out)
{
    char path[PATH_MAX];
    out->v = NULL;
    out->n = 0;
    if (fmt_path(path, "%s/%s", dir, sub) < 0 ||
        tp_sysfs_list(path, TP_SYSFS_NATURAL, keep, out) == 0)
        return 0;
    return errno == ENOMEM ? -1 : 0;
}

/* "nvme" followed by digits only: a controller, not a namespace. */
static bool is_ctrl_name(const char *s)
{
    if (strncmp(s, "nvme", 4) != 0 || !s[4])
        return false;
    return strspn(s + 4, "0123456789") == strlen(s + 4);
}

/* nvmeXnY (namespace) or nvmeXcYnZ (one path of a multipath namespace). */
static int is_nvme_ns_name(const char *s)
{
    if (strncmp(s, "nvme", 4) != 0)
        return 0;
    s += 4;
    size_t d = strspn(s, "0123456789");
    if (!d)
        return 0;
    s += d;
    if (*s == 'c') {
        if (!(d = strspn(s + 1, "0123456789")))
            return 0;
        s += 1 + d;
    }
    return *s == 'n' && s[1] && strspn(s + 1, "0123456789") == strlen(s + 1);
}

/* A component of the canonical device path starts with prefix and goes on
 * with a digit ("virtio2", "target0:0:0"). */
static int path_has_node(const char *path, const char *prefix)
{
    size_t n = strlen(prefix);
    for (const char *p = strchr(path, '/'); p; p = strchr(p + 1, '/'))
        if (strncmp(p + 1, prefix, n) == 0 && p[1 + n] >= '0' && p[1 + n] <= '9')
            return 1;
    return 0;
}

static const char *block_kind(const char *dir, int partition)
{
    const char *name = base(dir);
    if (partition)
        return "partition";
    if (exists(dir, "dm"))
        return "dm";
    if (exists(dir, "md"))
        return "md";
    if (strncmp(name, "loop", 4) == 0)
        return "loop";
    if (strncmp(name, "nvme", 4) == 0)
        return "nvme";
    if (path_has_node(dir, "virtio") || strncmp(name, "vd", 2) == 0)
        return "virtio";
    if (path_has_node(dir, "target") || strncmp(name, "sd", 2) == 0)
        return "scsi";
    return "disk";
}

/* The folder that holds queue/ and device/ for dir: the disk of a partition,
 * dir itself otherwise (dm and md have their own queue/). */
static int whole_disk(const char *dir, char *out)
{
    int partition = exists(dir, "partition");
    if (partition)
        parent_of(dir, out);
    else
        memcpy(out, dir, strlen(dir) + 1);
    return partition;
}

/* The active scheduler: the bracketed word of "none [mq-deadline] kyber";
 * a lone word when the queue has no choice (bio-based dm shows "none"). */
static json_t *scheduler_json(const char *queue)
{
    char buf[256];
    if (read_attr(queue, "scheduler", buf, sizeof buf) < 0 || !buf[0])
        return json_null();
    char *open = strchr(buf, '['), *close = open ? strchr(open, ']') : NULL;
    if (open && close) {
        *close = '\0';
        return tp_json_text(open + 1);
    }
    return strpbrk(buf, " \t") ? json_null() : tp_json_text(buf);
}

static json_t *slaves_json(const char *dir)
{
    struct tp_sysfs_names names;
    json_t *arr = list_dir(dir, "slaves", NULL, &names) == 0 ? json_array() : NULL;
    for (size_t i = 0; arr && i < names.n; i++)
        if (json_array_append_new(arr, tp_json_text(names.v[i])) < 0) {
            json_decref(arr);
            arr = NULL;
        }
    tp_sysfs_names_free(&names);
    return arr;
}

/* One block device, from its canonical sysfs folder. */
static json_t *block_json(const char *dir)
{
    char whole[PATH_MAX], queue[PATH_MAX], device[PATH_MAX];
    int partition = whole_disk(dir, whole);
    const char *kind = block_kind(dir, partition);
    int have_queue = fmt_path(queue, "%s/queue", whole) == 0;
    int have_device = fmt_path(device, "%s/device", whole) == 0;

    long long sectors, rot;
    json_t *size =
        read_long(dir, "size", &sectors) == 0 && sectors >= 0 && sectors <= LLONG_MAX / 512
            ? json_integer(sectors * 512) /* always 512-byte units */
            : json_null();
    json_t *rotational = have_queue && read_long(queue, "rotational", &rot) == 0
                             ? json_boolean(rot != 0)
                             : json_null();

    json_t *b = json_object();
    if (!b) {
        json_decref(size);
        json_decref(rotational);
        return NULL;
    }
    int bad = put(b, "name", tp_json_text(base(dir))) | put(b, "dev", attr_json(dir, "dev")) |
              put(b, "kind", tp_json_text(kind)) | put(b, "size_bytes", size) |
              put(b, "logical_block_size",
                  have_queue ? long_json(queue, "logical_block_size") : json_null()) |
              put(b, "physical_block_size",
                  have_queue ? long_json(queue, "physical_block_size") : json_null()) |
              put(b, "rotational", rotational) |
              put(b, "scheduler", have_queue ? scheduler_json(queue) : json_null()) |
              put(b, "model", have_device ? attr_json(device, "model") : json_null()) |
              put(b, "partition_of", partition ? tp_json_text(base(whole)) : json_null()) |
              put(b, "slaves", slaves_json(dir));
    if (strcmp(kind, "dm") == 0)
        bad |= put(b, "dm_name", attr_json(dir, "dm/name"));
    if (bad) {
        json_decref(b);
        return NULL;
    }
    return b;
}

/* Walk from dir down through the partition's disk and slaves/ to the leaf
 * devices, appending each leaf once. seen guards against loops. */
static int collect_disks(const char *dir, int depth, struct list *seen, struct list *leaves)
{
    if (depth > MAX_DEPTH || list_has(seen, dir))
        return 0;
    if (list_add(seen, dir) < 0)
        return -1;
    char whole[PATH_MAX];
    if (whole_disk(dir, whole))
        return collect_disks(whole, depth + 1, seen, leaves);

    struct tp_sysfs_names slaves;
    int rc = list_dir(dir, "slaves", NULL, &slaves);
    for (size_t i = 0; rc == 0 && i < slaves.n; i++) {
        char link[PATH_MAX], real[PATH_MAX];
        if (fmt_path(link, "%s/slaves/%s", dir, slaves.v[i]) == 0 && realpath(link, real))
            rc = collect_disks(real, depth + 1, seen, leaves);
    }
    if (rc == 0 && slaves.n == 0)
        rc = list_add(leaves, dir);
    tp_sysfs_names_free(&slaves);
    return rc;
}

/* key=value out of an NVMe-oF address "traddr=10.0.0.5,trsvcid=4420,...". */
static json_t *address_field(const char *addr, const char *key)
{
    size_t klen = strlen(key);
    for (const char *p = addr; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (strncmp(p, key, klen) == 0 && p[klen] == '=') {
            const char *v = p + klen + 1;
            size_t n = strcspn(v, ",");
            return n ? tp_json_textn(v, n) : json_null();
        }
    return json_null();
}

/* 1 when dir/name holds a key or secret, 0 when it is absent, empty or
 * "none", -1 when it is there but unreadable. */
static int secret_state(const char *dir, const char *name)
{
    char buf[512];
    int rc = read_attr(dir, name, buf, sizeof buf);
    if (rc == -ENOENT)
        return 0;
    if (rc < 0)
        return -1;
    return buf[0] && strcmp(buf, "none") != 0;
}

/* true when any of the attributes holds a key or secret; null when none does
 * but one cannot be read (a root-only attribute: we cannot tell). */
static json_t *secret_json(const char *dir, const char *name, const char *alt)
{
    int a = secret_state(dir, name), b = alt ? secret_state(dir, alt) : 0;
    if (a > 0 || b > 0)
        return json_true();
    return a < 0 || b < 0 ? json_null() : json_false();
}

/* One NVMe controller from its sysfs folder (sysfs-class-nvme). */
static json_t *ctrl_json(const char *dir)
{
    char transport[64], addr[512];
    int have_transport =
        read_attr(dir, "transport", transport, sizeof transport) == 0 && transport[0];
    int have_addr = read_attr(dir, "address", addr, sizeof addr) == 0 && addr[0];
    int pcie = have_transport && strcmp(transport, "pcie") == 0;

    json_t *traddr, *trsvcid;
    if (have_addr && pcie && !strchr(addr, '=')) {
        traddr = tp_json_text(addr); /* a PCIe address is the PCI function, "0000:3d:00.0" */
        trsvcid = json_null();
    } else {
        traddr = have_addr ? address_field(addr, "traddr") : json_null();
        trsvcid = have_addr ? address_field(addr, "trsvcid") : json_null();
    }

    json_t *c = json_object();
    if (!c) {
        json_decref(traddr);
        json_decref(trsvcid);
        return NULL;
    }
    int bad = put(c, "controller", tp_json_text(base(dir))) |
              put(c, "transport", have_transport ? tp_json_text(transport) : json_null()) |
              put(c, "address", have_addr ? tp_json_text(addr) : json_null()) | put(c, "traddr", traddr) |
              put(c, "trsvcid", trsvcid) | put(c, "subsysnqn", attr_json(dir, "subsysnqn")) |
              put(c, "state", attr_json(dir, "state")) |
              put(c, "queue_count", long_json(dir, "queue_count")) |
              put(c, "model", attr_json(dir, "model")) |
              put(c, "serial", attr_json(dir, "serial")) |
              put(c, "firmware_rev", attr_json(dir, "firmware_rev")) |
              put(c, "cntrltype", attr_json(dir, "cntrltype")) |
              put(c, "hostnqn", attr_json(dir, "hostnqn")) |
              put(c, "fabrics", json_boolean(have_transport && !pcie)) |
              put(c, "dhchap", secret_json(dir, "dhchap_secret", NULL)) |
              put(c, "tls", secret_json(dir, "tls_key", "tls_configured_key"));
    if (bad) {
        json_decref(c);
        return NULL;
    }
    return c;
}

/* Canonical folders of the controllers behind namespace disk ns. Without
 * multipath the namespace's device (and its parent folder) is the
 * controller; with native multipath it is the subsystem, which links to each
 * controller by name. */
static int ctrl_dirs(const char *ns, struct list *out)
{
    char link[PATH_MAX], holder[PATH_MAX];
    if (fmt_path(link, "%s/device", ns) < 0 || !realpath(link, holder))
        parent_of(ns, holder);
    if (is_ctrl_name(base(holder)))
        return list_has(out, holder) ? 0 : list_add(out, holder);
    if (strncmp(base(holder), "nvme-subsys", 11) != 0)
        return 0;
    struct tp_sysfs_names names;
    int rc = list_dir(holder, ".", is_ctrl_name, &names);
    for (size_t i = 0; rc == 0 && i < names.n; i++) {
        char real[PATH_MAX];
        if (fmt_path(link, "%s/%s", holder, names.v[i]) == 0 && realpath(link, real) &&
            !list_has(out, real))
            rc = list_add(out, real);
    }
    tp_sysfs_names_free(&names);
    return rc;
}

/* The mount of mountinfo whose mount point is the longest prefix of path. */
struct mount {
    char *type, *point, *source, *options;
};

static void mount_free(struct mount *m)
{
    free(m->type);
    free(m->point);
    free(m->source);
    free(m->options);
    memset(m, 0, sizeof *m);
}

/* Undo mountinfo's octal escapes (\040 space, \011 tab, \012, \134), in place. */
static void unescape(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
            r[3] >= '0' && r[3] <= '7') {
            *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
            r += 3;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
}

/* The per-mount options, then the superblock's without the rw/ro they
 * repeat, as findmnt shows them. Caller frees. */
static char *merge_options(const char *vfs, const char *super)
{
    size_t cap = strlen(vfs) + strlen(super) + 2;
    char *out = malloc(cap), *copy = strdup(super);
    if (!out || !copy) {
        free(out);
        free(copy);
        return NULL;
    }
    memcpy(out, vfs, strlen(vfs) + 1);
    char *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (strcmp(t, "rw") == 0 || strcmp(t, "ro") == 0)
            continue;
        if (out[0])
            strcat(out, ",");
        strcat(out, t);
    }
    free(copy);
    return out;
}

/* point is path itself or a folder above it. */
static int covers(const char *point, const char *path)
{
    size_t n = strlen(point);
    if (strcmp(point, "/") == 0)
        return path[0] == '/';
    return strncmp(point, path, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* Lines are "ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - TYPE
 * SOURCE SUPER" (proc(5)). Later lines stack on earlier ones, so among
 * equal mount points the last wins. 0 and a filled m when found, 1 when no
 * mount covers path or the file cannot be read (err says why), -1 when out
 * of memory. */
static int find_mount(const char *mountinfo, const char *path, struct mount *m, tp_error *err)
{
    FILE *f;
    if (tp_file_open(mountinfo, "mountinfo", TP_FILE_MAX_SYSTEM, TP_FILE_REGULAR, &f, err))
        return 1;
    char *line = NULL;
    size_t cap = 0, best = 0;
    int found = 0, rc = 0;
    while (rc == 0 && getline(&line, &cap, f) > 0) {
        char *field[64], *save = NULL;
        int n = 0, sep = -1;
        for (char *t = strtok_r(line, " \n", &save); t && n < 64;
             t = strtok_r(NULL, " \n", &save)) {
            if (sep < 0 && n >= 6 && strcmp(t, "-") == 0)
                sep = n;
            field[n++] = t;
        }
        if (sep < 0 || n < sep + 4)
            continue;
        unescape(field[4]);
        size_t len = strlen(field[4]);
        if (!covers(field[4], path) || (found && len < best))
            continue;
        unescape(field[sep + 2]);
        mount_free(m);
        m->type = strdup(field[sep + 1]);
        m->point = strdup(field[4]);
        m->source = strdup(field[sep + 2]);
        m->options = merge_options(field[5], field[sep + 3]);
        if (!m->type || !m->point || !m->source || !m->options)
            rc = -1;
        found = 1;
        best = len;
    }
    free(line);
    fclose(f);
    if (rc < 0)
        mount_free(m);
    return rc < 0 ? -1 : !found;
}

static json_t *mount_json(const struct mount *m)
{
    json_t *o = json_object();
    if (o && (put(o, "type", tp_json_text(m->type)) | put(o, "mount", tp_json_text(m->point)) |
              put(o, "source", tp_json_text(m->source)) | put(o, "options", tp_json_text(m->options)))) {
        json_decref(o);
        o = NULL;
    }
    return o;
}

/* The canonical folder of a block device named by sysfs_root/class/block/NAME. */
static int block_by_name(const char *sysfs, const char *name, char *out)
{
    char link[PATH_MAX];
    if (!*name || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return -1;
    return fmt_path(link, "%s/class/block/%s", sysfs, name) == 0 && realpath(link, out) ? 0 : -1;
}

static int block_by_dev(const char *sysfs, dev_t dev, char *out)
{
    char link[PATH_MAX];
    return fmt_path(link, "%s/dev/block/%u:%u", sysfs, major(dev), minor(dev)) == 0 &&
                   realpath(link, out)
               ? 0
               : -1;
}

/* What path names: a block device of a snapshot by name, a block device node,
 * or a file whose filesystem's device is looked up. */
struct target {
    char blk[PATH_MAX]; /* canonical sysfs folder, "" when unknown */
    char real[PATH_MAX];
    int is_device;  /* path names the device itself: no filesystem */
    int have_mount; /* locate found the mount holding real */
};

static int resolve(const char *path, const char *sysfs_root, struct target *t, tp_error *err)
{
    const char *sysfs = sys_dir(sysfs_root);
    t->blk[0] = t->real[0] = '\0';
    t->is_device = t->have_mount = 0;
    if (!live(sysfs_root)) {
        const char *name = strncmp(path, "/dev/", 5) == 0 ? path + 5 : path;
        if (block_by_name(sysfs, name, t->blk) == 0) {
            t->is_device = 1;
            return 0;
        }
    }
    struct stat st;
    if (stat(path, &st) < 0)
        return tp_error_errno(err, TP_EUSAGE, errno, "%s", path);
    if (S_ISBLK(st.st_mode)) {
        t->is_device = 1;
        if (block_by_dev(sysfs, st.st_rdev, t->blk) < 0)
            t->blk[0] = '\0';
        return 0;
    }
    if (block_by_dev(sysfs, st.st_dev, t->blk) < 0)
        t->blk[0] = '\0';
    if (!realpath(path, t->real))
        t->real[0] = '\0';
    return 0;
}

/* Filesystems whose st_dev is not the block device (btrfs, for one, gives
 * an anonymous number): take the device the mount names. */
static void block_from_source(const char *sysfs_root, const char *source, char *out)
{
    if (strncmp(source, "/dev/", 5) != 0)
        return;
    if (live(sysfs_root)) {
        struct stat st;
        if (stat(source, &st) == 0 && S_ISBLK(st.st_mode) &&
            block_by_dev("/sys", st.st_rdev, out) < 0)
            out[0] = '\0';
    } else if (block_by_name(sysfs_root, source + 5, out) < 0) {
        out[0] = '\0';
    }
}

static const char *kind_of(const json_t *nvme, const json_t *fs, const json_t *block)
{
    static const char *const fabrics[][2] = {{"tcp", "nvme-of/tcp"},
                                             {"rdma", "nvme-of/rdma"},
                                             {"fc", "nvme-of/fc"},
                                             {"loop", "nvme-of/loop"}};
    if (json_array_size(nvme) > 0) {
        const char *tr = json_string_value(json_object_get(json_array_get(nvme, 0), "transport"));
        for (size_t i = 0; tr && i < sizeof fabrics / sizeof fabrics[0]; i++)
            if (strcmp(tr, fabrics[i][0]) == 0)
                return fabrics[i][1];
        return "nvme";
    }
    const char *type = json_string_value(json_object_get(fs, "type"));
    if (type && (strcmp(type, "nfs") == 0 || strcmp(type, "nfs4") == 0))
        return "nfs";
    if (type && strcmp(type, "tmpfs") == 0)
        return "tmpfs";
    return json_is_object(block) ? "block" : "unknown";
}

/* disks and nvme arrays for the device at blk. */
static int describe_disks(const char *blk, json_t *disks, json_t *nvme)
{
    struct list seen = {0}, leaves = {0}, ctrls = {0};
    int rc = collect_disks(blk, 0, &seen, &leaves);
    for (size_t i = 0; rc == 0 && i < leaves.n; i++) {
        rc = json_array_append_new(disks, block_json(leaves.v[i]));
        if (rc == 0 && is_nvme_ns_name(base(leaves.v[i])))
            rc = ctrl_dirs(leaves.v[i], &ctrls);
    }
    for (size_t i = 0; rc == 0 && i < ctrls.n; i++)
        rc = json_array_append_new(nvme, ctrl_json(ctrls.v[i]));
    list_free(&seen);
    list_free(&leaves);
    list_free(&ctrls);
    return rc;
}

/* Resolve path and, unless it names a device or mountinfo is "", find the
 * mount that holds it; the mount's source names the block device when the
 * device number did not. 0, TP_EUSAGE for a missing path, TP_ENOMEM. */
static int locate(const char *path, const char *sysfs_root, const char *mountinfo, struct target *t,
                  struct mount *m, tp_error *err)
{
    int rc = resolve(path, sysfs_root, t, err);
    if (rc < 0)
        return rc;
    if (!t->is_device && t->real[0] && !(mountinfo && !*mountinfo)) {
        tp_error merr = {0};
        int found = find_mount(mountinfo ? mountinfo : "/proc/self/mountinfo", t->real, m, &merr);
        if (found < 0)
            return tp_error_set(err, TP_ENOMEM, "%s: out of memory reading the mounts", path);
        /* a --mountinfo the user named must be one; the live one may fail */
        if (found == 1 && mountinfo && merr.code) {
            *err = merr;
            tp_error_prefix(err, "--mountinfo");
            return merr.code;
        }
        t->have_mount = found == 0;
    }
    if (t->have_mount && !t->blk[0])
        block_from_source(sysfs_root, m->source, t->blk);
    return 0;
}

int tp_blkpath_describe(const char *path, const char *sysfs_root, const char *mountinfo,
                        json_t **out, tp_error *err)
{
    if (!out || !path || !*path)
        return tp_error_set(err, TP_EUSAGE, "storage path: empty");
    *out = NULL;
    struct target *t = malloc(sizeof *t);
    if (!t)
        return tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
    struct mount m = {0};
    int rc = locate(path, sysfs_root, mountinfo, t, &m, err);
    if (rc < 0) {
        mount_free(&m);
        free(t);
        return rc;
    }

    json_t *doc = json_object(), *disks = json_array(), *nvme = json_array();
    json_t *fs = t->have_mount ? mount_json(&m) : json_null();
    json_t *block = t->blk[0] ? block_json(t->blk) : json_null();
    int oom = 0;
    if (disks && nvme && t->blk[0])
        oom = describe_disks(t->blk, disks, nvme) < 0;
    if (!oom && doc && fs && block && disks && nvme) {
        const char *kind = kind_of(nvme, fs, block);
        oom = put(doc, "path", tp_json_text(path)) | put(doc, "fs", fs) | put(doc, "block", block) |
              put(doc, "disks", disks) | put(doc, "nvme", nvme) | put(doc, "kind", tp_json_text(kind));
    } else {
        oom = 1;
        json_decref(fs);
        json_decref(block);
        json_decref(disks);
        json_decref(nvme);
    }
    mount_free(&m);
    free(t);
    if (oom) {
        json_decref(doc);
        return tp_error_set(err, TP_ENOMEM, "%s: out of memory describing the storage", path);
    }
    *out = doc;
    return TP_OK;
}

uint32_t tp_blkpath_logical_block(const char *path, const char *sysfs_root)
{
    struct target *t = malloc(sizeof *t);
    struct mount m = {0};
    long long lbs = 0;
    /* Only the live machine's mount table can name a live device; with a
     * snapshot, path names the device or its number is looked up. */
    if (t && path && *path &&
        locate(path, sysfs_root, live(sysfs_root) ? NULL : "", t, &m, NULL) == 0 && t->blk[0]) {
        char whole[PATH_MAX], queue[PATH_MAX];
        whole_disk(t->blk, whole); /* a partition reads its disk's queue/; dm and md their own */
        if (fmt_path(queue, "%s/queue", whole) < 0 ||
            read_long(queue, "logical_block_size", &lbs) < 0)
            lbs = 0;
    }
    mount_free(&m);
    free(t);
    return lbs >= 512 && lbs <= 65536 && (lbs & (lbs - 1)) == 0 ? (uint32_t)lbs : 512;
}

/* Decimal size with three significant digits ("1.1 TB"), as DESIGN asks. */
static const char *fmt_bytes(json_int_t bytes, char *buf, size_t cap)
{
    static const char *const unit[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
    double v = (double)bytes;
    size_t u = 0;
    while (v >= 1000 && u + 1 < sizeof unit / sizeof unit[0]) {
        v /= 1000;
        u++;
    }
    snprintf(buf, cap, "%.3g %s", v, unit[u]);
    return buf;
}

static const char *str_or(const json_t *obj, const char *key, const char *dflt)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : dflt;
}

static void print_block(FILE *f, const char *label, const json_t *b)
{
    char size[32];
    json_t *bytes = json_object_get(b, "size_bytes");
    fprintf(f, "  %s: %s (%s %s", label, str_or(b, "name", "?"), str_or(b, "kind", "?"),
            str_or(b, "dev", "?"));
    if (json_is_string(json_object_get(b, "dm_name")))
        fprintf(f, " %s", str_or(b, "dm_name", ""));
    if (json_is_string(json_object_get(b, "partition_of")))
        fprintf(f, " of %s", str_or(b, "partition_of", ""));
    fprintf(f, ")");
    if (json_is_integer(bytes))
        fprintf(f, " %s", fmt_bytes(json_integer_value(bytes), size, sizeof size));
    json_t *lbs = json_object_get(b, "logical_block_size");
    json_t *pbs = json_object_get(b, "physical_block_size");
    if (json_is_integer(lbs) && json_is_integer(pbs))
        fprintf(f, ", blocks %lld/%lld B", (long long)json_integer_value(lbs),
                (long long)json_integer_value(pbs));
    if (json_is_string(json_object_get(b, "scheduler")))
        fprintf(f, ", scheduler %s", str_or(b, "scheduler", ""));
    if (json_is_boolean(json_object_get(b, "rotational")))
        fputs(json_is_true(json_object_get(b, "rotational")) ? ", rotational" : ", ssd", f);
    if (json_is_string(json_object_get(b, "model")))
        fprintf(f, ", %s", str_or(b, "model", ""));
}

void tp_blkpath_print(FILE *f, const json_t *desc)
{
    const json_t *fs = json_object_get(desc, "fs"), *block = json_object_get(desc, "block");
    const json_t *disks = json_object_get(desc, "disks"), *nvme = json_object_get(desc, "nvme");
    fprintf(f, "storage: %s", str_or(desc, "path", "?"));
    if (json_is_object(fs))
        fprintf(f, " on %s (%s at %s)", str_or(fs, "type", "?"), str_or(fs, "source", "?"),
                str_or(fs, "mount", "?"));
    fprintf(f, ": %s\n", str_or(desc, "kind", "unknown"));

    if (json_is_object(block)) {
        print_block(f, "block", block);
        /* The leaves, when the path goes through a partition or a stack. */
        size_t i;
        const json_t *d;
        json_array_foreach(disks, i, d)
        {
            if (i == 0 && json_array_size(disks) == 1 &&
                strcmp(str_or(d, "name", ""), str_or(block, "name", "")) == 0)
                break;
            fprintf(f, i == 0 ? " -> %s" : ", %s", str_or(d, "name", "?"));
        }
        fprintf(f, "\n");
    } else {
        fprintf(f, "  block: none\n");
    }

    size_t i;
    const json_t *c;
    json_array_foreach(nvme, i, c)
    {
        fprintf(f, "  %s: %s", str_or(c, "controller", "?"), str_or(c, "transport", "?"));
        const char *traddr = str_or(c, "traddr", NULL), *svc = str_or(c, "trsvcid", NULL);
        if (traddr)
            fprintf(f, " traddr %s%s%s", traddr, svc ? ":" : "", svc ? svc : "");
        fprintf(f, " %s %s", str_or(c, "subsysnqn", "?"), str_or(c, "state", "?"));
        json_t *q = json_object_get(c, "queue_count");
        if (json_is_integer(q) && json_integer_value(q) > 1) /* the admin queue counts too */
            fprintf(f, ", %lld I/O queues", (long long)json_integer_value(q) - 1);
        if (json_is_true(json_object_get(c, "dhchap")))
            fprintf(f, ", dhchap");
        if (json_is_true(json_object_get(c, "tls")))
            fprintf(f, ", tls");
        fprintf(f, "\n");
    }
}
