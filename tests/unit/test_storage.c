/* Tests for the storage layer: the I/O queue over both engines (round trip,
 * end of file, errors, links, a full queue), targets (missing, not a folder,
 * not writable, refused devices) and page-cache residency. Every engine
 * test runs twice, once per engine, on a file in a scratch folder. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "tp/pattern.h"
#include "tp/storage.h"
#include "tp_test.h"

static char dir[64];
static const char *engine_names[] = {"io_uring", "psync"};

static int file_in_dir(const char *name, int flags)
{
    char p[128];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return open(p, flags | O_CLOEXEC, 0644);
}

static void open_q(const char *engine, int *fds, unsigned nfds, void **bufs, unsigned nbufs,
                   size_t bytes, unsigned depth, struct tp_ioq **q)
{
    struct tp_ioq_opts o = {.engine = engine, .depth = depth, .fds = fds, .nfds = nfds,
                            .bufs = bufs, .nbufs = nbufs, .buf_bytes = bytes,
                            .timeout_ns = 10000000000ull};
    tp_error err = {0};
    int rc = tp_ioq_open(&o, q, &err);
    if (rc)
        print_message("open %s: %s\n", engine, err.msg);
    assert_int_equal(rc, 0);
    assert_string_equal(tp_ioq_engine(*q), engine);
}

/* Reap until n completions; returns them in d (sorted by tag). */
static void reap_n(struct tp_ioq *q, struct tp_io_done *d, unsigned n)
{
    tp_error err = {0};
    unsigned got = 0;
    while (got < n) {
        int k = tp_ioq_reap(q, d + got, n - got, 1, &err);
        assert_true(k > 0);
        got += (unsigned)k;
    }
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = i + 1; j < n; j++)
            if (d[j].tag < d[i].tag) {
                struct tp_io_done t = d[i];
                d[i] = d[j];
                d[j] = t;
            }
}

static void round_trip(void **state)
{
    (void)state;
    for (int e = 0; e < 2; e++) {
        int fd = file_in_dir("rt.bin", O_CREAT | O_TRUNC | O_RDWR);
        assert_true(fd >= 0);
        enum { N = 8, B = 65536 };
        void *bufs[N];
        for (int i = 0; i < N; i++) {
            assert_int_equal(posix_memalign(&bufs[i], 4096, B), 0);
            tp_pattern_fill(bufs[i], B, 100 + (uint64_t)i);
        }
        struct tp_ioq *q;
        tp_error err = {0};
        open_q(engine_names[e], &fd, 1, bufs, N, B, N, &q);
        for (unsigned i = 0; i < N; i++) {
            struct tp_io_req r = {.kind = TP_IO_WRITE, .buf = i, .len = B, .off = (uint64_t)i * B,
                                  .tag = i};
            assert_int_equal(tp_ioq_push(q, &r, &err), 0);
        }
        /* the queue is full: one more is refused, not queued */
        struct tp_io_req extra = {.kind = TP_IO_FSYNC};
        assert_int_equal(tp_ioq_push(q, &extra, &err), TP_EBUSY);
        assert_int_equal(tp_ioq_inflight(q), N);
        assert_int_equal(tp_ioq_submit(q, &err), 0);
        struct tp_io_done d[N];
        reap_n(q, d, N);
        for (unsigned i = 0; i < N; i++) {
            assert_int_equal(d[i].tag, i);
            assert_int_equal(d[i].res, B);
        }
        /* read back into cleared buffers, check every byte */
        for (unsigned i = 0; i < N; i++) {
            memset(bufs[i], 0, B);
            struct tp_io_req r = {.kind = TP_IO_READ, .buf = i, .len = B,
                                  .off = (uint64_t)(N - 1 - i) * B, .tag = i};
            assert_int_equal(tp_ioq_push(q, &r, &err), 0);
        }
        assert_int_equal(tp_ioq_submit(q, &err), 0);
        reap_n(q, d, N);
        for (unsigned i = 0; i < N; i++) {
            size_t off;
            uint8_t want, got;
            assert_int_equal(d[i].res, B);
            assert_int_equal(tp_pattern_check(bufs[i], B, 100 + (N - 1 - i), &off, &want, &got), 0);
        }
        /* a read across the end of the file reports the bytes it got */
        struct tp_io_req tail = {.kind = TP_IO_READ, .buf = 0, .len = B,
                                 .off = (uint64_t)N * B - 1000, .tag = 7};
        assert_int_equal(tp_ioq_push(q, &tail, &err), 0);
        assert_int_equal(tp_ioq_submit(q, &err), 0);
        reap_n(q, d, 1);
        assert_int_equal(d[0].res, 1000);
        /* a sync completes; latency is measured */
        struct tp_io_req s = {.kind = TP_IO_FDATASYNC, .tag = 9};
        assert_int_equal(tp_ioq_push(q, &s, &err), 0);
        assert_int_equal(tp_ioq_submit(q, &err), 0);
        reap_n(q, d, 1);
        assert_int_equal(d[0].res, 0);
        assert_true(d[0].lat_ns > 0);
        tp_ioq_close(q);
        /* submit_batch 1: a push reaches the kernel without tp_ioq_submit */
        struct tp_ioq_opts o1 = {.engine = engine_names[e], .depth = 4, .fds = &fd, .nfds = 1,
                                 .bufs = bufs, .nbufs = N, .buf_bytes = B, .submit_batch = 1,
                                 .timeout_ns = 2000000000ull};
        assert_int_equal(tp_ioq_open(&o1, &q, &err), 0);
        struct tp_io_req one = {.kind = TP_IO_READ, .buf = 1, .len = B, .off = B, .tag = 5};
        assert_int_equal(tp_ioq_push(q, &one, &err), 0);
        reap_n(q, d, 1);
        assert_int_equal(d[0].tag, 5);
        assert_int_equal(d[0].res, B);
        json_t *info = tp_ioq_info(q);
        assert_string_equal(json_string_value(json_object_get(info, "engine")), engine_names[e]);
        json_decref(info);
        tp_ioq_close(q);
        for (int i = 0; i < N; i++)
            free(bufs[i]);
        close(fd);
    }
}

static void errors_and_links(void **state)
{
    (void)state;
    for (int e = 0; e < 2; e++) {
        int fd = file_in_dir("ro.bin", O_CREAT | O_TRUNC | O_RDONLY);
        assert_true(fd >= 0);
        void *buf;
        assert_int_equal(posix_memalign(&buf, 4096, 4096), 0);
        memset(buf, 1, 4096);
        struct tp_ioq *q;
        tp_error err = {0};
        open_q(engine_names[e], &fd, 1, &buf, 1, 4096, 4, &q);
        /* a write to a read-only file fails with EBADF; the sync linked to
         * it is cancelled rather than run */
        struct tp_io_req w = {.kind = TP_IO_WRITE, .flags = TP_IO_LINK, .len = 4096, .tag = 0};
        struct tp_io_req s = {.kind = TP_IO_FDATASYNC, .tag = 1};
        assert_int_equal(tp_ioq_push(q, &w, &err), 0);
        assert_int_equal(tp_ioq_push(q, &s, &err), 0);
        assert_int_equal(tp_ioq_submit(q, &err), 0);
        struct tp_io_done d[2];
        reap_n(q, d, 2);
        assert_int_equal(d[0].res, -EBADF);
        assert_int_equal(d[1].res, -ECANCELED);
        /* out-of-range requests are refused before reaching the kernel */
        struct tp_io_req bad = {.kind = TP_IO_READ, .buf = 3, .len = 10};
        assert_int_equal(tp_ioq_push(q, &bad, &err), TP_EUSAGE);
        struct tp_io_req big = {.kind = TP_IO_READ, .buf = 0, .buf_off = 4000, .len = 200};
        assert_int_equal(tp_ioq_push(q, &big, &err), TP_EUSAGE);
        assert_int_equal(tp_ioq_inflight(q), 0);
        tp_ioq_close(q);
        free(buf);
        close(fd);
    }
}

static void engine_names_checked(void **state)
{
    (void)state;
    int fd = 0;
    struct tp_ioq *q = NULL;
    tp_error err = {0};
    struct tp_ioq_opts o = {.engine = "libaio", .depth = 1, .fds = &fd, .nfds = 1};
    assert_int_equal(tp_ioq_open(&o, &q, &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "libaio"));
    o.engine = "auto";
    o.depth = 0;
    assert_int_equal(tp_ioq_open(&o, &q, &err), TP_EUSAGE);
    o.depth = 2;
    assert_int_equal(tp_ioq_open(&o, &q, &err), 0);
    tp_ioq_close(q);
}

static void targets(void **state)
{
    (void)state;
    struct tp_target t;
    tp_error err = {0};
    struct tp_target_opts o = {.dir = "/nonexistent/tp"};
    assert_int_equal(tp_target_open(&o, &t, &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "/nonexistent/tp"));
    o.dir = "/etc/hostname";
    assert_int_equal(tp_target_open(&o, &t, &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "not a directory"));
    o.dir = dir;
    assert_int_equal(tp_target_open(&o, &t, &err), 0);
    assert_true(tp_target_space(&t) > 0);
    assert_true(t.dio_off_align >= 1 && t.dio_mem_align >= 1);
    tp_target_close(&t);
    /* a device: not a block device; no --destroy-data */
    struct tp_target_opts d = {.device = "/etc/hostname", .destroy_data = true};
    assert_int_equal(tp_target_open(&d, &t, &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "not a block device"));
    struct tp_target_opts both = {.dir = dir, .device = "/dev/null"};
    assert_int_equal(tp_target_open(&both, &t, &err), TP_EUSAGE);
}

static void residency(void **state)
{
    (void)state;
    int fd = file_in_dir("cache.bin", O_CREAT | O_TRUNC | O_RDWR);
    assert_true(fd >= 0);
    char buf[65536];
    memset(buf, 7, sizeof buf);
    for (int i = 0; i < 16; i++)
        assert_int_equal(write(fd, buf, sizeof buf), (ssize_t)sizeof buf);
    /* just written: in the page cache */
    double f = tp_file_cached_fraction(fd, 16 * sizeof buf);
    assert_true(f > 0.99);
    assert_int_equal(fdatasync(fd), 0);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    double g = tp_file_cached_fraction(fd, 16 * sizeof buf);
    /* tmpfs cannot drop (the cache is the storage); disk filesystems do */
    struct statfs sf;
    assert_int_equal(fstatfs(fd, &sf), 0);
    if (sf.f_type == TMPFS_MAGIC)
        assert_true(g > 0.99);
    else
        assert_true(g < 0.5);
    assert_true(tp_file_cached_fraction(fd, 0) < 0);
    close(fd);
}

static int setup(void **state)
{
    (void)state;
    return tp_test_mkdtemp(dir, sizeof dir, "tp_storage");
}

static int teardown(void **state)
{
    (void)state;
    return tp_test_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip),       cmocka_unit_test(errors_and_links),
        cmocka_unit_test(engine_names_checked), cmocka_unit_test(targets),
        cmocka_unit_test(residency),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
