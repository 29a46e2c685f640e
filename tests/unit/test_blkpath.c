/* Tests for blkpath against a committed sysfs snapshot laid out as the kernel
 * documents it (tests/fixtures/blkpath/sys: NVMe/TCP with native multipath,
 * NVMe/RDMA, local PCIe NVMe with a partition, an NVMe loop controller, dm
 * over an NVMe/TCP partition, virtio and loop disks) and small mountinfo
 * files; against scratch sysfs roots that link into the snapshot (lookup by
 * device number, by the mount's source, a slaves/ loop); and against the live
 * machine. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "tp/blkpath.h"
#include "tp_test.h"

#define FIXTURE TP_SOURCE_ROOT "/tests/fixtures/blkpath"
#define SYS FIXTURE "/sys"
#define NO_SYS "/nonexistent/trainpath-sys"

static const char *str_at(const json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_string(v))
        fail_msg("\"%s\" is not a string", key);
    return json_string_value(v);
}

static json_int_t int_at(const json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_integer(v))
        fail_msg("\"%s\" is not an integer", key);
    return json_integer_value(v);
}

static void assert_null_at(const json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    if (!v || !json_is_null(v))
        fail_msg("\"%s\" is not present and null", key);
}

static void assert_bool_at(const json_t *obj, const char *key, int want)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_boolean(v))
        fail_msg("\"%s\" is not a boolean", key);
    if (json_is_true(v) != !!want)
        fail_msg("\"%s\" is %s, expected %s", key, json_is_true(v) ? "true" : "false",
                 want ? "true" : "false");
}

static json_t *obj_at(const json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_object(v))
        fail_msg("\"%s\" is not an object", key);
    return v;
}

static json_t *describe_ok(const char *path, const char *sysfs, const char *mountinfo)
{
    tp_error err = {0};
    json_t *d = NULL;
    int rc = tp_blkpath_describe(path, sysfs, mountinfo, &d, &err);
    if (rc != TP_OK)
        fail_msg("describe %s: %d %s", path, rc, err.msg);
    assert_non_null(d);
    assert_string_equal(str_at(d, "path"), path);
    return d;
}

/* The names in an array of objects, joined with spaces. */
static void names(const json_t *arr, const char *key, char *out, size_t cap)
{
    size_t i;
    const json_t *v;
    out[0] = '\0';
    assert_true(json_is_array(arr));
    json_array_foreach(arr, i, v)
    {
        const char *s = json_is_string(v) ? json_string_value(v) : str_at(v, key);
        if (out[0])
            strncat(out, " ", cap - strlen(out) - 1);
        strncat(out, s, cap - strlen(out) - 1);
    }
}

static void assert_block(const json_t *b, const char *name, const char *dev, const char *kind,
                         long long size_bytes, long long lbs, long long pbs, int rotational,
                         const char *scheduler)
{
    assert_string_equal(str_at(b, "name"), name);
    assert_string_equal(str_at(b, "dev"), dev);
    assert_string_equal(str_at(b, "kind"), kind);
    assert_int_equal(int_at(b, "size_bytes"), size_bytes);
    assert_int_equal(int_at(b, "logical_block_size"), lbs);
    assert_int_equal(int_at(b, "physical_block_size"), pbs);
    assert_bool_at(b, "rotational", rotational);
    assert_string_equal(str_at(b, "scheduler"), scheduler);
}

static void assert_tcp_ctrls(const json_t *nvme)
{
    char list[256];
    names(nvme, "controller", list, sizeof list);
    assert_string_equal(list, "nvme0 nvme1");
    static const char *const traddr[] = {"192.168.10.5", "192.168.11.5"};
    for (size_t i = 0; i < 2; i++) {
        json_t *c = json_array_get(nvme, i);
        char addr[128];
        snprintf(addr, sizeof addr, "traddr=%s,trsvcid=4420,src_addr=192.168.1%zu.21", traddr[i],
                 i);
        assert_string_equal(str_at(c, "transport"), "tcp");
        assert_string_equal(str_at(c, "address"), addr);
        assert_string_equal(str_at(c, "traddr"), traddr[i]);
        assert_string_equal(str_at(c, "trsvcid"), "4420");
        assert_string_equal(str_at(c, "subsysnqn"), "nqn.2023-10.com.example:ckpt-pool");
        assert_string_equal(str_at(c, "state"), "live");
        assert_int_equal(int_at(c, "queue_count"), 9);
        assert_string_equal(str_at(c, "model"), "Linux");
        assert_string_equal(str_at(c, "serial"), "8c9b1d2e3f4a5b6c");
        assert_string_equal(str_at(c, "firmware_rev"), "6.1.0-28");
        assert_string_equal(str_at(c, "cntrltype"), "io");
        assert_string_equal(str_at(c, "hostnqn"),
                            "nqn.2014-08.org.nvmexpress:uuid:4c4c4544-0042-3510-8052-b4c04f564433");
        assert_bool_at(c, "fabrics", 1);
        /* nvme0 has a DH-HMAC-CHAP secret, nvme1 says "none" but has a TLS key. */
        assert_bool_at(c, "dhchap", i == 0);
        assert_bool_at(c, "tls", i == 1);
    }
}

static void nvme_tcp_multipath(void **state)
{
    (void)state;
    json_t *d = describe_ok("nvme0n1", SYS, NULL);
    assert_null_at(d, "fs"); /* a device named in a snapshot has no filesystem */
    json_t *b = obj_at(d, "block");
    assert_block(b, "nvme0n1", "259:0", "nvme", 1099511627776LL, 512, 4096, 0, "none");
    assert_string_equal(str_at(b, "model"), "Linux"); /* device/ is nvme-subsys0 */
    assert_null_at(b, "partition_of");
    assert_int_equal(json_array_size(json_object_get(b, "slaves")), 0); /* no slaves/ folder */
    assert_null(json_object_get(b, "dm_name"));
    char list[256];
    names(json_object_get(d, "disks"), "name", list, sizeof list);
    assert_string_equal(list, "nvme0n1");
    assert_tcp_ctrls(json_object_get(d, "nvme"));
    assert_string_equal(str_at(d, "kind"), "nvme-of/tcp");
    json_decref(d);

    /* Its partition, named as a device node: queue/ and device/ are the disk's. */
    d = describe_ok("/dev/nvme0n1p1", SYS, "");
    b = obj_at(d, "block");
    assert_block(b, "nvme0n1p1", "259:1", "partition", 2147479552LL * 512, 512, 4096, 0, "none");
    assert_string_equal(str_at(b, "partition_of"), "nvme0n1");
    assert_string_equal(str_at(b, "model"), "Linux");
    names(json_object_get(d, "disks"), "name", list, sizeof list);
    assert_string_equal(list, "nvme0n1");
    assert_tcp_ctrls(json_object_get(d, "nvme"));
    assert_string_equal(str_at(d, "kind"), "nvme-of/tcp");
    json_decref(d);
}

static void nvme_rdma(void **state)
{
    (void)state;
    json_t *d = describe_ok("/dev/nvme2n1", SYS, NULL);
    json_t *b = obj_at(d, "block");
    assert_block(b, "nvme2n1", "259:2", "nvme", 7501476528LL * 512, 4096, 4096, 0, "none");
    assert_string_equal(str_at(b, "model"), "Linux"); /* device/ is the controller */
    json_t *nvme = json_object_get(d, "nvme");
    assert_int_equal(json_array_size(nvme), 1);
    json_t *c = json_array_get(nvme, 0);
    assert_string_equal(str_at(c, "controller"), "nvme2");
    assert_string_equal(str_at(c, "transport"), "rdma");
    assert_string_equal(str_at(c, "address"), "traddr=10.0.0.5,trsvcid=4420");
    assert_string_equal(str_at(c, "traddr"), "10.0.0.5");
    assert_string_equal(str_at(c, "trsvcid"), "4420");
    assert_string_equal(str_at(c, "subsysnqn"), "nqn.2023-10.com.example:dataset");
    assert_string_equal(str_at(c, "state"), "live");
    assert_int_equal(int_at(c, "queue_count"), 17);
    assert_string_equal(str_at(c, "serial"), "2f8e1a7c9d3b4e5f");
    assert_bool_at(c, "fabrics", 1);
    assert_bool_at(c, "dhchap", 0); /* no dhchap_secret file */
    assert_bool_at(c, "tls", 0);
    assert_string_equal(str_at(d, "kind"), "nvme-of/rdma");
    json_decref(d);

    assert_int_equal(tp_blkpath_logical_block("nvme2n1", SYS), 4096);
    assert_int_equal(tp_blkpath_logical_block("/dev/nvme2n1", SYS), 4096);
}

static void nvme_pcie_partition(void **state)
{
    (void)state;
    json_t *d = describe_ok("/dev/nvme3n1p1", SYS, NULL);
    json_t *b = obj_at(d, "block");
    assert_block(b, "nvme3n1p1", "259:4", "partition", 7501474480LL * 512, 512, 4096, 0, "none");
    assert_string_equal(str_at(b, "partition_of"), "nvme3n1");
    assert_string_equal(str_at(b, "model"), "SAMSUNG MZQL23T8HCLS-00A07"); /* padding trimmed */
    json_t *disks = json_object_get(d, "disks");
    assert_int_equal(json_array_size(disks), 1);
    json_t *disk = json_array_get(disks, 0);
    assert_block(disk, "nvme3n1", "259:3", "nvme", 7501476528LL * 512, 512, 4096, 0, "none");
    assert_null_at(disk, "partition_of");

    json_t *nvme = json_object_get(d, "nvme");
    assert_int_equal(json_array_size(nvme), 1);
    json_t *c = json_array_get(nvme, 0);
    assert_string_equal(str_at(c, "controller"), "nvme3");
    assert_string_equal(str_at(c, "transport"), "pcie");
    assert_string_equal(str_at(c, "address"), "0000:3d:00.0");
    assert_string_equal(str_at(c, "traddr"), "0000:3d:00.0");
    assert_null_at(c, "trsvcid");
    assert_string_equal(str_at(c, "model"), "SAMSUNG MZQL23T8HCLS-00A07");
    assert_string_equal(str_at(c, "serial"), "S64HNE0R812345");
    assert_string_equal(str_at(c, "firmware_rev"), "GDC5602Q");
    assert_int_equal(int_at(c, "queue_count"), 65);
    assert_null_at(c, "hostnqn"); /* PCIe controllers have none */
    assert_bool_at(c, "fabrics", 0);
    assert_bool_at(c, "dhchap", 0);
    assert_bool_at(c, "tls", 0);
    assert_string_equal(str_at(d, "kind"), "nvme");
    json_decref(d);

    assert_int_equal(tp_blkpath_logical_block("nvme3n1p1", SYS), 512);
}

static void nvme_loop(void **state)
{
    (void)state;
    json_t *d = describe_ok("nvme4n1", SYS, NULL);
    assert_block(obj_at(d, "block"), "nvme4n1", "259:5", "nvme", 1073741824LL, 512, 512, 0, "none");
    json_t *nvme = json_object_get(d, "nvme");
    assert_int_equal(json_array_size(nvme), 1);
    json_t *c = json_array_get(nvme, 0);
    assert_string_equal(str_at(c, "controller"), "nvme4");
    assert_string_equal(str_at(c, "transport"), "loop");
    assert_null_at(c, "address"); /* the kernel writes an empty line */
    assert_null_at(c, "traddr");
    assert_null_at(c, "trsvcid");
    assert_string_equal(str_at(c, "subsysnqn"), "nqn.2023-10.com.example:loop-test");
    assert_string_equal(str_at(c, "state"), "live");
    assert_int_equal(int_at(c, "queue_count"), 5);
    assert_bool_at(c, "fabrics", 1);
    assert_string_equal(str_at(d, "kind"), "nvme-of/loop");
    json_decref(d);
}

static void dm_over_nvme_tcp(void **state)
{
    (void)state;
    json_t *d = describe_ok("dm-0", SYS, NULL);
    json_t *b = obj_at(d, "block");
    assert_block(b, "dm-0", "253:0", "dm", 2147479552LL * 512, 512, 4096, 0, "none");
    assert_string_equal(str_at(b, "dm_name"), "vg-data");
    assert_null_at(b, "model");
    assert_null_at(b, "partition_of");
    char list[256];
    names(json_object_get(b, "slaves"), NULL, list, sizeof list);
    assert_string_equal(list, "nvme0n1p1");
    /* dm-0 -> nvme0n1p1 -> nvme0n1, a leaf */
    json_t *disks = json_object_get(d, "disks");
    assert_int_equal(json_array_size(disks), 1);
    assert_block(json_array_get(disks, 0), "nvme0n1", "259:0", "nvme", 1099511627776LL, 512, 4096,
                 0, "none");
    assert_tcp_ctrls(json_object_get(d, "nvme"));
    assert_string_equal(str_at(d, "kind"), "nvme-of/tcp");
    json_decref(d);

    /* dm has its own queue/. */
    assert_int_equal(tp_blkpath_logical_block("/dev/dm-0", SYS), 512);
}

static void virtio_and_loop(void **state)
{
    (void)state;
    json_t *d = describe_ok("vda1", SYS, NULL);
    json_t *b = obj_at(d, "block");
    assert_block(b, "vda1", "254:1", "partition", 104855552LL * 512, 512, 512, 1, "mq-deadline");
    assert_string_equal(str_at(b, "partition_of"), "vda");
    assert_null_at(b, "model"); /* virtio has no model */
    json_t *disks = json_object_get(d, "disks");
    assert_int_equal(json_array_size(disks), 1);
    assert_block(json_array_get(disks, 0), "vda", "254:0", "virtio", 104857600LL * 512, 512, 512, 1,
                 "mq-deadline");
    assert_int_equal(json_array_size(json_object_get(d, "nvme")), 0);
    assert_string_equal(str_at(d, "kind"), "block");
    json_decref(d);

    d = describe_ok("/dev/loop0", SYS, NULL);
    assert_block(obj_at(d, "block"), "loop0", "7:0", "loop", 1073741824LL, 512, 512, 1, "none");
    assert_string_equal(str_at(d, "kind"), "block");
    json_decref(d);
}

static void fs_longest_prefix(void **state)
{
    (void)state;
    /* No sysfs: the block device is unknown, only the mount table speaks. */
    json_t *d = describe_ok("/", NO_SYS, FIXTURE "/mountinfo-virtio");
    json_t *fs = obj_at(d, "fs");
    assert_string_equal(str_at(fs, "type"), "ext4");
    assert_string_equal(str_at(fs, "mount"), "/");
    assert_string_equal(str_at(fs, "source"), "/dev/vda1");
    assert_string_equal(str_at(fs, "options"), "rw,relatime,errors=remount-ro");
    assert_null_at(d, "block");
    assert_int_equal(json_array_size(json_object_get(d, "disks")), 0);
    assert_string_equal(str_at(d, "kind"), "unknown");
    json_decref(d);

    /* /sys/block is under /sys, not merely under /. */
    d = describe_ok("/sys/block", NO_SYS, FIXTURE "/mountinfo-virtio");
    assert_string_equal(str_at(obj_at(d, "fs"), "type"), "sysfs");
    assert_string_equal(str_at(obj_at(d, "fs"), "mount"), "/sys");
    json_decref(d);

    /* A mount on /tm does not hold /tmp. */
    d = describe_ok("/tmp", NO_SYS, FIXTURE "/mountinfo-virtio");
    assert_string_equal(str_at(obj_at(d, "fs"), "mount"), "/");
    json_decref(d);

    /* /dev/shm beats /dev and /. */
    d = describe_ok("/dev/shm", NO_SYS, FIXTURE "/mountinfo-virtio");
    fs = obj_at(d, "fs");
    assert_string_equal(str_at(fs, "type"), "tmpfs");
    assert_string_equal(str_at(fs, "mount"), "/dev/shm");
    assert_string_equal(str_at(fs, "options"), "rw,nosuid,nodev,inode64");
    assert_string_equal(str_at(d, "kind"), "tmpfs");
    json_decref(d);

    /* Two mounts on /tmp: the later one, stacked on top, is what a path sees. */
    d = describe_ok("/tmp", NO_SYS, FIXTURE "/mountinfo-nfs");
    fs = obj_at(d, "fs");
    assert_string_equal(str_at(fs, "type"), "nfs4");
    assert_string_equal(str_at(fs, "mount"), "/tmp");
    assert_string_equal(str_at(fs, "source"), "server:/scratch");
    assert_string_equal(str_at(fs, "options"),
                        "rw,relatime,vers=4.2,rsize=1048576,wsize=1048576,proto=tcp,sec=sys,"
                        "addr=10.0.0.2");
    assert_null_at(d, "block");
    assert_string_equal(str_at(d, "kind"), "nfs");
    json_decref(d);

    /* "" skips the filesystem; a mountinfo file that was named must be
     * there, and be a regular file of a sane size (never read forever) */
    d = describe_ok("/", NO_SYS, "");
    assert_null_at(d, "fs");
    json_decref(d);
    const char *bad[] = {FIXTURE "/no-such-mountinfo", "/dev/zero", FIXTURE};
    const char *says[] = {"No such file", "is a character device", "is a folder"};
    for (int i = 0; i < 3; i++) {
        tp_error err = {0};
        d = NULL;
        assert_int_equal(tp_blkpath_describe("/", NO_SYS, bad[i], &d, &err), TP_EUSAGE);
        assert_null(d);
        if (!strstr(err.msg, "--mountinfo") || !strstr(err.msg, bad[i]) || !strstr(err.msg, says[i]))
            fail_msg("mountinfo %s: message \"%s\" lacks the option, the file or \"%s\"", bad[i],
                     err.msg, says[i]);
    }
}

static void missing_path(void **state)
{
    (void)state;
    static const char *const paths[] = {"/nonexistent/trainpath/data", "nvme9n9", "/dev/nvme9n9"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        tp_error err = {0};
        json_t *d = (json_t *)&err; /* must be reset to NULL */
        assert_int_equal(tp_blkpath_describe(paths[i], SYS, NULL, &d, &err), TP_EUSAGE);
        assert_null(d);
        assert_int_equal(err.code, TP_EUSAGE);
        char want[256];
        snprintf(want, sizeof want, "%s: No such file or directory", paths[i]);
        assert_string_equal(err.msg, want);
        assert_int_equal(tp_blkpath_logical_block(paths[i], SYS), 512);
    }
}

/* A scratch folder standing for /sys, linking into the snapshot. */
static int make_root(void **state)
{
    char *dir = strdup("/tmp/tp_test_blkpath.XXXXXX");
    if (!dir || !mkdtemp(dir)) {
        free(dir);
        return -1;
    }
    *state = dir;
    return 0;
}

static int remove_root(void **state)
{
    char *dir = *state;
    tp_test_rmtree(dir);
    free(dir);
    return 0;
}

/* mkdir -p of the folder holding path, then a symlink path -> target. */
static void link_at(const char *root, const char *rel, const char *target)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
        *p = '\0';
        mkdir(path, 0755);
        *p = '/';
    }
    if (symlink(target, path) != 0)
        fail_msg("symlink %s -> %s", path, target);
}

/* Write one line into root/rel, making the folders above it. */
static void write_at(const char *root, const char *rel, const char *line)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
        *p = '\0';
        mkdir(path, 0755);
        *p = '/';
    }
    FILE *f = fopen(path, "w");
    if (!f)
        fail_msg("cannot write %s", path);
    fprintf(f, "%s\n", line);
    fclose(f);
}

static void lookup_by_dev_number(void **state)
{
    const char *root = *state;
    /* The fixture folder's own device number stands for the NVMe/RDMA disk. */
    struct stat st;
    assert_int_equal(stat(FIXTURE, &st), 0);
    char rel[64];
    snprintf(rel, sizeof rel, "dev/block/%u:%u", major(st.st_dev), minor(st.st_dev));
    link_at(root, rel, SYS "/devices/virtual/nvme-fabrics/ctl/nvme2/nvme2n1");

    json_t *d = describe_ok(FIXTURE, root, "");
    assert_null_at(d, "fs");
    assert_string_equal(str_at(obj_at(d, "block"), "name"), "nvme2n1");
    assert_string_equal(str_at(json_array_get(json_object_get(d, "nvme"), 0), "controller"),
                        "nvme2");
    assert_string_equal(str_at(d, "kind"), "nvme-of/rdma");
    json_decref(d);
    assert_int_equal(tp_blkpath_logical_block(FIXTURE, root), 4096);
    assert_int_equal(tp_blkpath_logical_block(FIXTURE "/mountinfo-nfs", root), 4096);
}

static void lookup_by_mount_source(void **state)
{
    const char *root = *state;
    /* No dev/block entry: the mount's source /dev/vda1 names the device. */
    link_at(root, "class/block/vda1",
            SYS "/devices/pci0000:00/0000:00:04.0/virtio2/block/vda/vda1");
    json_t *d = describe_ok("/", root, FIXTURE "/mountinfo-virtio");
    assert_string_equal(str_at(obj_at(d, "fs"), "source"), "/dev/vda1");
    json_t *b = obj_at(d, "block");
    assert_string_equal(str_at(b, "name"), "vda1");
    assert_string_equal(str_at(b, "partition_of"), "vda");
    assert_string_equal(str_at(json_array_get(json_object_get(d, "disks"), 0), "name"), "vda");
    assert_string_equal(str_at(d, "kind"), "block");
    json_decref(d);
}

static void stacks_and_escapes(void **state)
{
    const char *root = *state;
    /* x and y each list the other as a slave: a broken snapshot must not hang. */
    link_at(root, "class/block/x", "../../devices/virtual/block/x");
    link_at(root, "devices/virtual/block/x/slaves/y", "../../y");
    link_at(root, "devices/virtual/block/y/slaves/x", "../../x");
    json_t *d = describe_ok("x", root, NULL);
    char list[64];
    names(json_object_get(obj_at(d, "block"), "slaves"), NULL, list, sizeof list);
    assert_string_equal(list, "y");
    assert_null_at(obj_at(d, "block"), "dev");
    assert_null_at(obj_at(d, "block"), "size_bytes");
    assert_null_at(obj_at(d, "block"), "logical_block_size");
    assert_int_equal(json_array_size(json_object_get(d, "disks")), 0);
    json_decref(d);
    assert_int_equal(tp_blkpath_logical_block("x", root), 512);

    /* z stacked on two partitions of one disk w: w is listed once. */
    link_at(root, "class/block/z", "../../devices/virtual/block/z");
    write_at(root, "devices/virtual/block/w/w1/partition", "1");
    write_at(root, "devices/virtual/block/w/w2/partition", "2");
    link_at(root, "devices/virtual/block/z/slaves/w1", "../../w/w1");
    link_at(root, "devices/virtual/block/z/slaves/w2", "../../w/w2");
    d = describe_ok("/dev/z", root, NULL);
    names(json_object_get(obj_at(d, "block"), "slaves"), NULL, list, sizeof list);
    assert_string_equal(list, "w1 w2");
    names(json_object_get(d, "disks"), "name", list, sizeof list);
    assert_string_equal(list, "w");
    json_decref(d);

    /* A mount point and source with spaces, escaped as \040 in mountinfo. */
    char real[PATH_MAX], dir[PATH_MAX + 16], mi[PATH_MAX + 16], arg[PATH_MAX + 16];
    assert_non_null(realpath(root, real));
    snprintf(dir, sizeof dir, "%s/my data", real);
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(mi, sizeof mi, "%s/mountinfo", real);
    FILE *f = fopen(mi, "w");
    assert_non_null(f);
    fprintf(f,
            "21 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n"
            "50 21 253:3 / %s/my\\040data rw,relatime - xfs /dev/mapper/vg\\040x rw,attr2\n",
            real);
    fclose(f);
    snprintf(arg, sizeof arg, "%s/my data/", real);
    d = describe_ok(arg, NO_SYS, mi);
    json_t *fs = obj_at(d, "fs");
    assert_string_equal(str_at(fs, "mount"), dir);
    assert_string_equal(str_at(fs, "type"), "xfs");
    assert_string_equal(str_at(fs, "source"), "/dev/mapper/vg x");
    assert_string_equal(str_at(fs, "options"), "rw,relatime,attr2");
    json_decref(d);
}

static void controller_attrs(void **state)
{
    const char *root = *state;
    /* No device link: the namespace's folder sits in its controller's. An
     * empty dhchap_secret is none; an empty tls_key gives way to
     * tls_configured_key; an IPv6 traddr keeps its colons. */
    const char *ctl = "devices/virtual/nvme-fabrics/ctl/nvme7";
    char rel[256];
    link_at(root, "class/block/nvme7n1", "../../devices/virtual/nvme-fabrics/ctl/nvme7/nvme7n1");
    snprintf(rel, sizeof rel, "%s/nvme7n1/dev", ctl);
    write_at(root, rel, "259:7");
    static const char *const attrs[][2] = {
        {"transport", "tcp"}, {"address", "traddr=fd00::5,trsvcid=4420"}, {"dhchap_secret", ""},
        {"tls_key", ""},      {"tls_configured_key", "0badc0de"},         {"state", "connecting"},
    };
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        snprintf(rel, sizeof rel, "%s/%s", ctl, attrs[i][0]);
        write_at(root, rel, attrs[i][1]);
    }
    json_t *d = describe_ok("nvme7n1", root, NULL);
    json_t *nvme = json_object_get(d, "nvme");
    assert_int_equal(json_array_size(nvme), 1);
    json_t *c = json_array_get(nvme, 0);
    assert_string_equal(str_at(c, "controller"), "nvme7");
    assert_string_equal(str_at(c, "traddr"), "fd00::5");
    assert_string_equal(str_at(c, "trsvcid"), "4420");
    assert_string_equal(str_at(c, "state"), "connecting");
    assert_null_at(c, "queue_count");
    assert_null_at(c, "subsysnqn");
    assert_bool_at(c, "dhchap", 0);
    assert_bool_at(c, "tls", 1);
    assert_string_equal(str_at(d, "kind"), "nvme-of/tcp");
    json_decref(d);
}

static void print_lines(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    json_t *d = describe_ok("dm-0", SYS, NULL);
    tp_blkpath_print(f, d);
    json_decref(d);
    d = describe_ok("/tmp", NO_SYS, FIXTURE "/mountinfo-nfs");
    tp_blkpath_print(f, d);
    json_decref(d);
    d = describe_ok("nvme4n1", SYS, NULL);
    tp_blkpath_print(f, d);
    json_decref(d);
    fclose(f);
    assert_string_equal(
        buf, "storage: dm-0: nvme-of/tcp\n"
             "  block: dm-0 (dm 253:0 vg-data) 1.1 TB, blocks 512/4096 B, scheduler none, ssd"
             " -> nvme0n1\n"
             "  nvme0: tcp traddr 192.168.10.5:4420 nqn.2023-10.com.example:ckpt-pool live,"
             " 8 I/O queues, dhchap\n"
             "  nvme1: tcp traddr 192.168.11.5:4420 nqn.2023-10.com.example:ckpt-pool live,"
             " 8 I/O queues, tls\n"
             "storage: /tmp on nfs4 (server:/scratch at /tmp): nfs\n"
             "  block: none\n"
             "storage: nvme4n1: nvme-of/loop\n"
             "  block: nvme4n1 (nvme 259:5) 1.07 GB, blocks 512/512 B, scheduler none, ssd,"
             " Linux\n"
             "  nvme4: loop nqn.2023-10.com.example:loop-test live, 4 I/O queues\n");
    free(buf);
}

static void live_machine(void **state)
{
    (void)state;
    static const char *const paths[] = {"/", "/tmp"};
    for (size_t i = 0; i < 2; i++) {
        json_t *d = describe_ok(paths[i], NULL, NULL);
        json_t *fs = obj_at(d, "fs");
        assert_true(strlen(str_at(fs, "type")) > 0);
        if (i == 0)
            assert_string_equal(str_at(fs, "mount"), "/");
        uint32_t lbs = tp_blkpath_logical_block(paths[i], NULL);
        json_t *b = json_object_get(d, "block");
        if (json_is_object(b)) {
            /* The device number of the path, unless the mount's source named it. */
            struct stat st;
            char dev[32];
            assert_int_equal(stat(paths[i], &st), 0);
            snprintf(dev, sizeof dev, "%u:%u", major(st.st_dev), minor(st.st_dev));
            if (strcmp(str_at(b, "dev"), dev) != 0)
                assert_non_null(strstr(str_at(fs, "source"), "/dev/"));
            assert_true(json_array_size(json_object_get(d, "disks")) >= 1);
            assert_int_equal(lbs, int_at(b, "logical_block_size"));
            if (strcmp(str_at(b, "name"), "vda") == 0) { /* the development VM */
                assert_string_equal(str_at(b, "kind"), "virtio");
                assert_int_equal(lbs, 512);
            }
        } else {
            assert_int_equal(lbs, 512);
        }
        json_decref(d);
    }

    struct statfs sf;
    if (statfs("/dev/shm", &sf) == 0 && sf.f_type == TMPFS_MAGIC) {
        json_t *d = describe_ok("/dev/shm", NULL, NULL);
        assert_string_equal(str_at(obj_at(d, "fs"), "type"), "tmpfs");
        assert_null_at(d, "block");
        assert_string_equal(str_at(d, "kind"), "tmpfs");
        json_decref(d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nvme_tcp_multipath),
        cmocka_unit_test(nvme_rdma),
        cmocka_unit_test(nvme_pcie_partition),
        cmocka_unit_test(nvme_loop),
        cmocka_unit_test(dm_over_nvme_tcp),
        cmocka_unit_test(virtio_and_loop),
        cmocka_unit_test(fs_longest_prefix),
        cmocka_unit_test(missing_path),
        cmocka_unit_test_setup_teardown(lookup_by_dev_number, make_root, remove_root),
        cmocka_unit_test_setup_teardown(lookup_by_mount_source, make_root, remove_root),
        cmocka_unit_test_setup_teardown(stacks_and_escapes, make_root, remove_root),
        cmocka_unit_test_setup_teardown(controller_attrs, make_root, remove_root),
        cmocka_unit_test(print_lines),
        cmocka_unit_test(live_machine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
