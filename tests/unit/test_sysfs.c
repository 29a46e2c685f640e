/* core/sysfs.c: the one reader of kernel files under a root, on a small
 * tree made under /tmp for each run: a network interface's attributes with
 * the shapes sysfs and snapshots give them (a trailing newline, none, an
 * empty file, padding, a CR, a second line, hex, a number too large, a
 * word), a FIFO and a folder where a file should be, and a folder to list
 * with names that sort differently by bytes and by version. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tp/sysfs.h"
#include "tp_test.h"

static char root[64];    /* the snapshot: ROOT/sys/class/net/... */
static char eth0[300];   /* ROOT/sys/class/net/eth0 */
static char netdir[256]; /* ROOT/sys/class/net */

static const struct {
    const char *name, *text;
} files[] = {
    {"mtu", "1500\n"},
    {"type", "1"}, /* no newline */
    {"speed", "-1\n"},
    {"ifindex", "0x10\n"},
    {"empty", ""},
    {"blank", "  \t\n"},
    {"word", "fast\n"},
    {"huge", "99999999999999999999\n"},
    {"model", "  Samsung SSD 990  \n"},
    {"crlf", "up\r\n"},
    {"twolines", "5\nfoo\n"},
    {"counter", "123 (bytes)\n"},
    {"tabbed", "\t42\n"},
    {"negative", "-3\n"},
    {"trailer", "7x\n"},
};

static int setup(void **state)
{
    (void)state;
    if (tp_test_mkdtemp(root, sizeof root, "tp_sysfs") < 0)
        return -1;
    snprintf(netdir, sizeof netdir, "%s/sys/class/net", root);
    snprintf(eth0, sizeof eth0, "%s/eth0", netdir);
    char p[512];
    const char *dirs[] = {"sys",
                          "sys/class",
                          "sys/class/net",
                          "sys/class/net/eth0",
                          "sys/class/net/eth2",
                          "sys/class/net/eth10",
                          "sys/class/net/.hidden",
                          "sys/class/net/eth0/folder"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        snprintf(p, sizeof p, "%s/%s", root, dirs[i]);
        if (mkdir(p, 0755) < 0)
            return -1;
    }
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        tp_test_write(eth0, files[i].name, files[i].text, p, sizeof p);
    tp_test_write(netdir, "bonding_masters", "\n", p, sizeof p);
    snprintf(p, sizeof p, "%s/fifo", eth0);
    return mkfifo(p, 0644);
}

static int teardown(void **state)
{
    (void)state;
    return tp_test_rmtree(root);
}

/* eth0's file name as a path, into out[PATH_MAX] */
static const char *at(char *out, const char *name)
{
    if (tp_sysfs_path(out, PATH_MAX, eth0, "/%s", name) < 0)
        fail_msg("path of %s/%s: %s", eth0, name, strerror(errno));
    return out;
}

static void test_path(void **state)
{
    (void)state;
    char out[PATH_MAX];
    /* live: the kernel path itself */
    TP_EQ_INT(tp_sysfs_path(out, sizeof out, NULL, "/sys/class/net/%s", "eth0"), 0);
    TP_EQ_STR(out, "/sys/class/net/eth0");
    TP_EQ_INT(tp_sysfs_path(out, sizeof out, "", "/proc/%d/comm", 1), 0);
    TP_EQ_STR(out, "/proc/1/comm");
    /* a root is a prefix written as given, with and without its slash */
    TP_EQ_INT(tp_sysfs_path(out, sizeof out, "/snap", "/sys/%s", "block"), 0);
    TP_EQ_STR(out, "/snap/sys/block");
    TP_EQ_INT(tp_sysfs_path(out, sizeof out, "/snap/", "/sys/%s", "block"), 0);
    TP_EQ_STR(out, "/snap//sys/block");
    /* not a jail: none of the four readers it replaced refused "..", and
     * their paths are built from the kernel's own names */
    TP_EQ_INT(tp_sysfs_path(out, sizeof out, "/snap", "/sys/../%s", "etc"), 0);
    TP_EQ_STR(out, "/snap/sys/../etc");
    /* too long, by the root or by the path: -1, ENAMETOOLONG, "" */
    char small[16];
    errno = 0;
    TP_EQ_INT(tp_sysfs_path(small, sizeof small, "/snap", "/sys/class/%s", "net"), -1);
    TP_EQ_INT(errno, ENAMETOOLONG);
    TP_EQ_STR(small, "");
    TP_EQ_INT(tp_sysfs_path(small, sizeof small, "/a/root/longer/than/this", "/x"), -1);
    TP_EQ_STR(small, "");
    TP_EQ_INT(tp_sysfs_path(small, sizeof small, "/0123456789", "/abc"), 0); /* 15 and the NUL */
    TP_EQ_STR(small, "/0123456789/abc");
    TP_EQ_INT(tp_sysfs_path(small, sizeof small, "/0123456789", "/abcd"), -1);
}

/* The same file read through a root with and without its trailing slash. */
static void test_root_slash(void **state)
{
    (void)state;
    char with[PATH_MAX], slash_root[128], path[PATH_MAX], a[32], b[32];
    snprintf(slash_root, sizeof slash_root, "%s/", root);
    TP_EQ_INT(tp_sysfs_path(path, sizeof path, root, "/sys/class/net/%s/mtu", "eth0"), 0);
    TP_EQ_INT(tp_sysfs_path(with, sizeof with, slash_root, "/sys/class/net/%s/mtu", "eth0"), 0);
    TP_EQ_INT(tp_sysfs_line(path, a, sizeof a), 0);
    TP_EQ_INT(tp_sysfs_line(with, b, sizeof b), 0);
    TP_EQ_STR(a, "1500");
    TP_EQ_STR(b, "1500");
}

static void test_read(void **state)
{
    (void)state;
    char p[PATH_MAX], buf[64];
    TP_EQ_INT(tp_sysfs_read(at(p, "mtu"), buf, sizeof buf), 5);
    TP_EQ_STR(buf, "1500\n");
    TP_EQ_INT(tp_sysfs_read(at(p, "empty"), buf, sizeof buf), 0);
    TP_EQ_STR(buf, "");
    /* cap - 1 bytes at most, NUL-terminated */
    TP_EQ_INT(tp_sysfs_read(at(p, "mtu"), buf, 3), 2);
    TP_EQ_STR(buf, "15");
    /* missing: ENOENT, and buf is "" */
    strcpy(buf, "untouched");
    errno = 0;
    TP_EQ_INT(tp_sysfs_read(at(p, "no_such"), buf, sizeof buf), -1);
    TP_EQ_INT(errno, ENOENT);
    TP_EQ_STR(buf, "");
    /* a FIFO (a snapshot's trap) and a folder are refused, not waited on */
    errno = 0;
    TP_EQ_INT(tp_sysfs_read(at(p, "fifo"), buf, sizeof buf), -1);
    TP_EQ_INT(errno, EINVAL);
    errno = 0;
    TP_EQ_INT(tp_sysfs_read(at(p, "folder"), buf, sizeof buf), -1);
    TP_EQ_INT(errno, EINVAL);
    /* a /proc file (size 0 in stat) is read to its end */
    TP_EQ_INT(tp_sysfs_read("/proc/self/comm", buf, sizeof buf) > 0, 1);
}

static void test_text_and_line(void **state)
{
    (void)state;
    char p[PATH_MAX], buf[64];
    /* text: the whole file, trailing blanks cut */
    TP_EQ_INT(tp_sysfs_text(at(p, "twolines"), buf, sizeof buf), 0);
    TP_EQ_STR(buf, "5\nfoo");
    TP_EQ_INT(tp_sysfs_text(at(p, "model"), buf, sizeof buf), 0);
    TP_EQ_STR(buf, "  Samsung SSD 990");
    TP_EQ_INT(tp_sysfs_text(at(p, "no_such"), buf, sizeof buf), -1);
    /* line: the first line, its newline, CR and trailing blanks cut */
    TP_EQ_INT(tp_sysfs_line(at(p, "twolines"), buf, sizeof buf), 0);
    TP_EQ_STR(buf, "5");
    TP_EQ_INT(tp_sysfs_line(at(p, "crlf"), buf, sizeof buf), 0);
    TP_EQ_STR(buf, "up");
    TP_EQ_INT(tp_sysfs_line(at(p, "type"), buf, sizeof buf), 0); /* no newline */
    TP_EQ_STR(buf, "1");
    TP_EQ_INT(tp_sysfs_line(at(p, "blank"), buf, sizeof buf), 0);
    TP_EQ_STR(buf, "");
    TP_EQ_INT(tp_sysfs_line(at(p, "empty"), buf, sizeof buf), 0); /* an empty line */
    TP_EQ_STR(buf, "");
    /* a line longer than buf: its first cap - 1 bytes */
    char four[5];
    TP_EQ_INT(tp_sysfs_line(at(p, "model"), four, sizeof four), 0);
    TP_EQ_STR(four, "  Sa");
    errno = 0;
    TP_EQ_INT(tp_sysfs_line(at(p, "fifo"), buf, sizeof buf), -1);
    TP_EQ_INT(errno, EINVAL);
}

/* tp_sysfs_long of eth0/name fails with errno e, and leaves *out alone */
static void long_fails(const char *name, int e)
{
    char p[PATH_MAX];
    long long v = 77;
    errno = 0;
    if (tp_sysfs_long(at(p, name), &v) != -1 || errno != e || v != 77)
        fail_msg("tp_sysfs_long(%s): errno %d (%s), value %lld; expected -1 with errno %d (%s)",
                 name, errno, strerror(errno), v, e, strerror(e));
}

static void test_long(void **state)
{
    (void)state;
    char p[PATH_MAX];
    long long v;
    TP_EQ_INT(tp_sysfs_long(at(p, "mtu"), &v), 0);
    TP_EQ_INT(v, 1500);
    TP_EQ_INT(tp_sysfs_long(at(p, "type"), &v), 0);
    TP_EQ_INT(v, 1);
    TP_EQ_INT(tp_sysfs_long(at(p, "speed"), &v), 0); /* a link that is down */
    TP_EQ_INT(v, -1);
    TP_EQ_INT(tp_sysfs_long(at(p, "ifindex"), &v), 0); /* hex, as PCI ids */
    TP_EQ_INT(v, 16);
    TP_EQ_INT(tp_sysfs_long(at(p, "tabbed"), &v), 0); /* leading blanks */
    TP_EQ_INT(v, 42);
    TP_EQ_INT(tp_sysfs_long(at(p, "twolines"), &v), 0); /* the first line */
    TP_EQ_INT(v, 5);
    long_fails("no_such", ENOENT);
    long_fails("fifo", EINVAL);
    long_fails("empty", EINVAL);
    long_fails("blank", EINVAL);
    long_fails("word", EINVAL);
    long_fails("trailer", EINVAL);
    long_fails("counter", EINVAL); /* a number with words after it is no number */
    long_fails("huge", ERANGE);
}

static void u64_fails(const char *name, int e)
{
    char p[PATH_MAX];
    uint64_t v = 77;
    errno = 0;
    if (tp_sysfs_u64(at(p, name), &v) != -1 || errno != e || v != 77)
        fail_msg("tp_sysfs_u64(%s): errno %d (%s), value %llu; expected -1 with errno %d (%s)",
                 name, errno, strerror(errno), (unsigned long long)v, e, strerror(e));
}

static void test_u64(void **state)
{
    (void)state;
    char p[PATH_MAX];
    uint64_t v;
    TP_EQ_INT(tp_sysfs_u64(at(p, "mtu"), &v), 0);
    TP_EQ_U64(v, 1500);
    TP_EQ_INT(tp_sysfs_u64(at(p, "counter"), &v), 0); /* the number a counter file starts with */
    TP_EQ_U64(v, 123);
    TP_EQ_INT(tp_sysfs_u64(at(p, "tabbed"), &v), 0);
    TP_EQ_U64(v, 42);
    TP_EQ_INT(tp_sysfs_u64(at(p, "ifindex"), &v), 0);
    TP_EQ_U64(v, 16);
    TP_EQ_INT(tp_sysfs_u64(at(p, "twolines"), &v), 0);
    TP_EQ_U64(v, 5);
    u64_fails("no_such", ENOENT);
    u64_fails("empty", EINVAL);
    u64_fails("blank", EINVAL);
    u64_fails("negative", EINVAL); /* no sign */
    u64_fails("word", EINVAL);
    u64_fails("trailer", EINVAL);
    u64_fails("huge", ERANGE);
}

static void test_open(void **state)
{
    (void)state;
    char p[PATH_MAX], line[16];
    FILE *f = tp_sysfs_open(at(p, "twolines"));
    assert_non_null(f);
    assert_non_null(fgets(line, sizeof line, f));
    TP_EQ_STR(line, "5\n");
    fclose(f);
    assert_null(tp_sysfs_open(at(p, "fifo")));
    assert_null(tp_sysfs_open(at(p, "no_such")));
}

static void expect_names(const struct tp_sysfs_names *n, const char *want)
{
    char got[256] = "";
    for (size_t i = 0; i < n->n; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? " " : "", n->v[i]);
    TP_EQ_STR(got, want);
}

static bool not_bonding(const char *name)
{
    return strcmp(name, "bonding_masters") != 0;
}

static void test_list(void **state)
{
    (void)state;
    struct tp_sysfs_names n;
    TP_EQ_INT(tp_sysfs_list(netdir, 0, NULL, &n), 0);
    expect_names(&n, "bonding_masters eth0 eth10 eth2");
    tp_sysfs_names_free(&n);
    TP_EQ_INT(n.n, 0);
    tp_sysfs_names_free(&n); /* a second free does nothing */
    TP_EQ_INT(tp_sysfs_list(netdir, TP_SYSFS_NATURAL, not_bonding, &n), 0);
    expect_names(&n, "eth0 eth2 eth10");
    tp_sysfs_names_free(&n);
    TP_EQ_INT(tp_sysfs_list(netdir, TP_SYSFS_NATURAL | TP_SYSFS_HIDDEN, NULL, &n), 0);
    expect_names(&n, ".hidden bonding_masters eth0 eth2 eth10");
    tp_sysfs_names_free(&n);
    /* a folder that is not there: -1 with its errno, and no names */
    char p[PATH_MAX];
    errno = 0;
    TP_EQ_INT(tp_sysfs_list(at(p, "no_such"), 0, NULL, &n), -1);
    TP_EQ_INT(errno, ENOENT);
    TP_EQ_INT(n.n, 0);
    assert_null(n.v);
    errno = 0;
    TP_EQ_INT(tp_sysfs_list(at(p, "mtu"), 0, NULL, &n), -1);
    TP_EQ_INT(errno, ENOTDIR);
    /* an empty folder: none */
    TP_EQ_INT(tp_sysfs_list(at(p, "folder"), 0, NULL, &n), 0);
    TP_EQ_INT(n.n, 0);
    tp_sysfs_names_free(&n);
    /* an open folder, for a walk by descriptor: read, not closed */
    DIR *d = opendir(netdir);
    assert_non_null(d);
    TP_EQ_INT(tp_sysfs_list_dir(d, TP_SYSFS_HIDDEN, NULL, &n), 0);
    expect_names(&n, ".hidden bonding_masters eth0 eth10 eth2");
    tp_sysfs_names_free(&n);
    TP_EQ_INT(closedir(d), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_path), cmocka_unit_test(test_root_slash),
        cmocka_unit_test(test_read), cmocka_unit_test(test_text_and_line),
        cmocka_unit_test(test_long), cmocka_unit_test(test_u64),
        cmocka_unit_test(test_open), cmocka_unit_test(test_list),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
