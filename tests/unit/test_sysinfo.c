/* Tests for the core system modules: sysinfo against a committed snapshot of
 * /etc, /proc and /sys (tests/fixtures/sysinfo) and against the live machine;
 * tp_write_atomic in a scratch folder, checking that no temporary file is ever
 * left behind; tp_log through a pipe standing in for stderr. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tp/atomicfile.h"
#include "tp/transport.h"
#include "tp/log.h"
#include "tp/sysinfo.h"
#include "tp_test.h"

/* Whether a library whose file name holds name is mapped in this process. */
static bool mapped(const char *name)
{
    FILE *f = fopen("/proc/self/maps", "r");
    assert_non_null(f);
    char line[1024];
    bool yes = false;
    while (!yes && fgets(line, sizeof line, f))
        yes = strstr(line, name) != NULL;
    fclose(f);
    return yes;
}

#define FIXTURE TP_SOURCE_ROOT "/tests/fixtures/sysinfo"

static const char *str_at(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    assert_non_null(v);
    assert_true(json_is_string(v));
    return json_string_value(v);
}

static json_int_t int_at(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    assert_non_null(v);
    assert_true(json_is_integer(v));
    return json_integer_value(v);
}

static void assert_null_at(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    assert_non_null(v); /* present, and null */
    assert_true(json_is_null(v));
}

static void snapshot_cpu_and_os(void **state)
{
    (void)state;
    json_t *doc = tp_sysinfo_json(FIXTURE);
    assert_non_null(doc);
    assert_string_equal(str_at(doc, "os"), "Debian GNU/Linux 12 (bookworm)");
    json_t *cpu = json_object_get(doc, "cpu");
    assert_non_null(cpu);
    assert_string_equal(str_at(cpu, "model"), "Intel(R) Xeon(R) Platinum 8480+");
    assert_int_equal(int_at(cpu, "logical_cores"), 4);
    assert_int_equal(int_at(cpu, "online"), 4);
    /* host and kernel describe the running machine even for a snapshot. */
    assert_true(strlen(str_at(doc, "host")) > 0);
    assert_true(strlen(str_at(doc, "kernel")) > 0);
    json_decref(doc);
}

static void snapshot_nics(void **state)
{
    (void)state;
    json_t *doc = tp_sysinfo_json(FIXTURE);
    assert_non_null(doc);
    json_t *nics = json_object_get(doc, "nics");
    assert_true(json_is_array(nics));
    /* bonding_masters is a file, not an interface; order is by name. */
    assert_int_equal(json_array_size(nics), 3);

    json_t *eth0 = json_array_get(nics, 0);
    assert_string_equal(str_at(eth0, "name"), "eth0");
    assert_int_equal(int_at(eth0, "speed_mbps"), 100000);
    assert_int_equal(int_at(eth0, "mtu"), 9000);
    assert_string_equal(str_at(eth0, "driver"), "mlx5_core");
    assert_string_equal(str_at(eth0, "state"), "up");
    assert_true(json_is_false(json_object_get(eth0, "loopback")));
    assert_null_at(eth0, "addresses"); /* never from getifaddrs for a snapshot */

    json_t *ib0 = json_array_get(nics, 1);
    assert_string_equal(str_at(ib0, "name"), "ib0");
    assert_null_at(ib0, "speed_mbps"); /* the kernel says -1: unknown */
    assert_int_equal(int_at(ib0, "mtu"), 4092);
    assert_string_equal(str_at(ib0, "driver"), "mlx5_core");
    assert_string_equal(str_at(ib0, "state"), "down");
    assert_true(json_is_false(json_object_get(ib0, "loopback")));

    json_t *lo = json_array_get(nics, 2);
    assert_string_equal(str_at(lo, "name"), "lo");
    assert_null_at(lo, "speed_mbps"); /* no speed file */
    assert_int_equal(int_at(lo, "mtu"), 65536);
    assert_null_at(lo, "driver"); /* virtual: no device link */
    assert_string_equal(str_at(lo, "state"), "unknown");
    assert_true(json_is_true(json_object_get(lo, "loopback")));
    json_decref(doc);
}

static void missing_root_gives_nulls(void **state)
{
    (void)state;
    json_t *doc = tp_sysinfo_json("/nonexistent/trainpath-root");
    assert_non_null(doc);
    assert_null_at(doc, "os");
    json_t *cpu = json_object_get(doc, "cpu");
    assert_null_at(cpu, "model");
    assert_null_at(cpu, "logical_cores");
    assert_null_at(cpu, "online");
    assert_null_at(doc, "nics");
    json_decref(doc);
}

static void live_system(void **state)
{
    (void)state;
    json_t *doc = tp_sysinfo_json(NULL);
    assert_non_null(doc);
    assert_true(strlen(str_at(doc, "host")) > 0);
    assert_true(strlen(str_at(doc, "kernel")) > 0);
    json_t *nics = json_object_get(doc, "nics");
    assert_true(json_is_array(nics));
    size_t i;
    json_t *nic;
    json_array_foreach(nics, i, nic)
    {
        assert_true(strlen(str_at(nic, "name")) > 0);
        assert_true(json_is_boolean(json_object_get(nic, "loopback")));
        /* Live: addresses come from getifaddrs, one list per interface. */
        assert_true(json_is_array(json_object_get(nic, "addresses")));
    }
    json_t *lib = json_object_get(doc, "libraries");
    assert_true(strlen(str_at(lib, "jansson")) > 0);
    assert_true(strlen(str_at(lib, "libsodium")) > 0);
    /* libfabric is loaded on first use (src/fabric/ofi_lib.c): a process
     * that used no ofi transport has neither it nor the psm libraries it
     * links (libinfinipath's constructor and signal handler), and its
     * document names no libfabric version */
    assert_false(mapped("libfabric.so"));
    assert_false(mapped("libinfinipath.so"));
    assert_false(mapped("libpsm2.so"));
    assert_null(json_object_get(lib, "libfabric"));
    json_decref(doc);
    /* once the fabric layer loaded it, its version is there */
    assert_true(strlen(tp_ofi_version()) > 0);
    assert_true(mapped("libfabric.so"));
    doc = tp_sysinfo_json(NULL);
    assert_non_null(doc);
    lib = json_object_get(doc, "libraries");
    unsigned major, minor;
    char extra;
    assert_int_equal(sscanf(str_at(lib, "libfabric"), "%u.%u%c", &major, &minor, &extra), 2);
    assert_true(major >= 1);
    json_decref(doc);

    json_t *empty = tp_sysinfo_json(""); /* "" means the live system too */
    assert_non_null(empty);
    assert_true(json_is_array(json_object_get(empty, "nics")));
    json_decref(empty);
}

/* Scratch folder for the atomic-file tests. */
static int make_dir(void **state)
{
    char *dir = strdup("/tmp/tp_test_atomic.XXXXXX");
    if (!dir || !mkdtemp(dir)) {
        free(dir);
        return -1;
    }
    *state = dir;
    return 0;
}

static int remove_dir(void **state)
{
    char *dir = *state;
    tp_test_rmtree(dir);
    free(dir);
    return 0;
}

/* Names in dir other than . and .., joined with spaces in sorted order. */
static void list_dir(const char *dir, char *out, size_t cap)
{
    struct dirent **ents;
    int n = scandir(dir, &ents, NULL, alphasort);
    assert_true(n >= 0);
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        const char *name = ents[i]->d_name;
        if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0) {
            if (out[0])
                strncat(out, " ", cap - strlen(out) - 1);
            strncat(out, name, cap - strlen(out) - 1);
        }
        free(ents[i]);
    }
    free(ents);
}

static void read_whole(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
}

static void atomic_writes_and_replaces(void **state)
{
    const char *dir = *state;
    char path[4096], buf[256], names[1024];
    snprintf(path, sizeof path, "%s/result.json", dir);
    tp_error err = {0};

    assert_int_equal(tp_write_atomic(path, "first\n", 6, &err), TP_OK);
    read_whole(path, buf, sizeof buf);
    assert_string_equal(buf, "first\n");
    list_dir(dir, names, sizeof names);
    assert_string_equal(names, "result.json");

    assert_int_equal(tp_write_atomic(path, "second, longer\n", 15, &err), TP_OK);
    read_whole(path, buf, sizeof buf);
    assert_string_equal(buf, "second, longer\n");
    list_dir(dir, names, sizeof names);
    assert_string_equal(names, "result.json");

    assert_int_equal(tp_write_atomic(path, NULL, 0, &err), TP_OK);
    read_whole(path, buf, sizeof buf);
    assert_string_equal(buf, "");
}

/* The streaming form: the target stays the old file until the commit,
 * and a discard leaves it and nothing else behind. */
static void atomic_stream_commit_discard(void **state)
{
    const char *dir = *state;
    char path[4096], buf[256], names[1024];
    snprintf(path, sizeof path, "%s/fleet.jsonl", dir);
    tp_error err = {0};
    assert_int_equal(tp_write_atomic(path, "old\n", 4, &err), TP_OK);

    struct tp_atomic *a = NULL;
    FILE *f = NULL;
    assert_int_equal(tp_atomic_begin(path, &a, &f, &err), TP_OK);
    fprintf(f, "line 1\n");
    fflush(f);
    read_whole(path, buf, sizeof buf);
    assert_string_equal(buf, "old\n"); /* not yet */
    list_dir(dir, names, sizeof names);
    assert_non_null(strstr(names, ".fleet.jsonl.tmp."));
    fprintf(f, "line 2\n");
    assert_int_equal(tp_atomic_commit(a, &err), TP_OK);
    read_whole(path, buf, sizeof buf);
    assert_string_equal(buf, "line 1\nline 2\n");
    list_dir(dir, names, sizeof names);
    assert_string_equal(names, "fleet.jsonl");

    assert_int_equal(tp_atomic_begin(path, &a, &f, &err), TP_OK);
    fprintf(f, "torn");
    tp_atomic_discard(a);
    read_whole(path, buf, sizeof buf);
    assert_string_equal(buf, "line 1\nline 2\n");
    list_dir(dir, names, sizeof names);
    assert_string_equal(names, "fleet.jsonl");

    snprintf(path, sizeof path, "%s/no-such-folder/fleet.jsonl", dir);
    assert_int_equal(tp_atomic_begin(path, &a, &f, &err), TP_EUSAGE);
    assert_null(a);
    assert_non_null(strstr(err.msg, path));
}

/* /dev/null is written into, not replaced: a rename over it would turn it
 * into a plain file for the whole machine (a bench once did). */
static void atomic_device_in_place(void **state)
{
    (void)state;
    tp_error err = {0};
    assert_int_equal(tp_write_atomic("/dev/null", "{}", 2, &err), TP_OK);
    struct stat st;
    assert_int_equal(stat("/dev/null", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    DIR *d = opendir("/dev");
    struct dirent *e;
    while (d && (e = readdir(d)))
        assert_null(strstr(e->d_name, ".null.tmp."));
    if (d)
        closedir(d);
}

static void atomic_relative_name(void **state)
{
    const char *dir = *state;
    char cwd[4096], buf[64], names[1024];
    tp_error err = {0};
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    int rc = tp_write_atomic("bare.json", "{}", 2, &err);
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(rc, TP_OK);
    snprintf(names, sizeof names, "%s/bare.json", dir);
    read_whole(names, buf, sizeof buf);
    assert_string_equal(buf, "{}");
    list_dir(dir, names, sizeof names);
    assert_string_equal(names, "bare.json");
}

static void atomic_keeps_mode(void **state)
{
    const char *dir = *state;
    char path[4096];
    snprintf(path, sizeof path, "%s/keep", dir);
    tp_error err = {0};
    assert_int_equal(tp_write_atomic(path, "a", 1, &err), TP_OK);
    assert_int_equal(chmod(path, 0640), 0);
    assert_int_equal(tp_write_atomic(path, "b", 1, &err), TP_OK);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
}

static void atomic_missing_folder(void **state)
{
    const char *dir = *state;
    char path[4096], names[1024];
    snprintf(path, sizeof path, "%s/no-such-folder/result.json", dir);
    tp_error err = {0};
    assert_int_equal(tp_write_atomic(path, "x", 1, &err), TP_EUSAGE);
    assert_int_equal(err.code, TP_EUSAGE);
    assert_non_null(strstr(err.msg, path));
    list_dir(dir, names, sizeof names);
    assert_string_equal(names, "");
}

static void atomic_failure_leaves_target(void **state)
{
    const char *dir = *state;
    char path[4096], buf[64], names[1024];
    tp_error err = {0};

    /* A folder where the file should be: rename fails after the temporary
     * file was written, and that file must be gone. */
    snprintf(path, sizeof path, "%s/taken", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    int rc = tp_write_atomic(path, "x", 1, &err);
    assert_true(rc < 0);
    assert_non_null(strstr(err.msg, path));
    list_dir(dir, names, sizeof names);
    assert_string_equal(names, "taken");
    rmdir(path);

    /* A path that names a folder is refused before anything is created. */
    snprintf(path, sizeof path, "%s/", dir);
    assert_int_equal(tp_write_atomic(path, "x", 1, &err), TP_EUSAGE);
    assert_int_equal(tp_write_atomic("", "x", 1, &err), TP_EUSAGE);

    /* A failure must not touch an existing file of the same folder. */
    snprintf(path, sizeof path, "%s/old", dir);
    assert_int_equal(tp_write_atomic(path, "old", 3, &err), TP_OK);
    snprintf(buf, sizeof buf, "%s/taken", dir);
    assert_int_equal(mkdir(buf, 0755), 0);
    assert_true(tp_write_atomic(buf, "new", 3, &err) < 0);
    rmdir(buf);
    read_whole(path, buf, sizeof buf);
    assert_string_equal(buf, "old");
    list_dir(dir, names, sizeof names);
    assert_string_equal(names, "old");
}

/* Run fn with stderr sent into a pipe; return what it wrote. */
static void capture_stderr(void (*fn)(void), char *out, size_t cap)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    int saved = dup(STDERR_FILENO);
    assert_true(saved >= 0);
    assert_true(dup2(fds[1], STDERR_FILENO) >= 0);
    close(fds[1]);
    fn();
    dup2(saved, STDERR_FILENO);
    close(saved);
    size_t n = 0;
    ssize_t r;
    while (n < cap - 1 && (r = read(fds[0], out + n, cap - 1 - n)) > 0)
        n += (size_t)r;
    out[n] = '\0';
    close(fds[0]);
}

static void log_levels(void)
{
    tp_log_set_level(TP_LOG_WARN);
    tp_log(TP_LOG_ERROR, "peer %s refused", "10.0.0.2:5201");
    tp_log(TP_LOG_WARN, "slow %d", 3);
    tp_log(TP_LOG_INFO, "dropped");
    tp_log(TP_LOG_DEBUG, "dropped too");
    tp_log_set_level(TP_LOG_DEBUG);
    tp_log(TP_LOG_DEBUG, "now shown");
}

static void log_long(void)
{
    char big[3001];
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    tp_log_set_level(TP_LOG_INFO);
    tp_log(TP_LOG_INFO, "%s", big);
}

static void log_format_and_level(void **state)
{
    (void)state;
    char out[8192];
    capture_stderr(log_levels, out, sizeof out);
    assert_string_equal(out, "trainpath: error: peer 10.0.0.2:5201 refused\n"
                             "trainpath: warn: slow 3\n"
                             "trainpath: debug: now shown\n");

    capture_stderr(log_long, out, sizeof out);
    assert_int_equal(strlen(out), strlen("trainpath: info: ") + 3000 + 1);
    assert_true(strncmp(out, "trainpath: info: zzz", 20) == 0);
    assert_int_equal(out[strlen(out) - 1], '\n');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(snapshot_cpu_and_os),
        cmocka_unit_test(snapshot_nics),
        cmocka_unit_test(missing_root_gives_nulls),
        cmocka_unit_test(live_system),
        cmocka_unit_test_setup_teardown(atomic_writes_and_replaces, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(atomic_stream_commit_discard, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(atomic_relative_name, make_dir, remove_dir),
        cmocka_unit_test(atomic_device_in_place),
        cmocka_unit_test_setup_teardown(atomic_keeps_mode, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(atomic_missing_folder, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(atomic_failure_leaves_target, make_dir, remove_dir),
        cmocka_unit_test(log_format_and_level),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
