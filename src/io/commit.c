/* Commit latency: small writes, each made durable before the next, as a
 * write-ahead log, a metadata store or a checkpoint's commit record does.
 *
 * With io_uring the write and its sync travel in one submission, the sync
 * linked to the write (IOSQE_IO_LINK: it starts only after the write
 * completed successfully); psync calls pwrite then fdatasync. O_DSYNC
 * (--sync dsync) makes the write itself durable. Reported per commit: the
 * write, the sync (write completion to sync completion) and the whole
 * commit, with the tail fio users read (p99, p99.9, max). A commit of
 * more than 1 GiB is written in 1 GiB pieces, the last linked to the sync,
 * and timed from the first piece's start: any --write-size the space
 * allows commits. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io_int.h"
#include "tp/clock.h"
#include "tp/intr.h"
#include "tp/log.h"
#include "tp/progress.h"
#include "tp/units.h"

#define COMMIT_DIR "trainpath-commit"

struct cm_job {
    const struct tp_commit_opts *o;
    const struct tp_target *t;
    unsigned j;
    struct tp_io_file f;
    void **buf;
    json_t *engine;
    tp_hist *total, *write, *sync;
    uint64_t commits, t0, t1;
    int rc;
    tp_error err;
};

enum { SYNC_FDATASYNC, SYNC_FSYNC, SYNC_DSYNC };

static int sync_mode(const char *s)
{
    if (!s || strcmp(s, "fdatasync") == 0)
        return SYNC_FDATASYNC;
    if (strcmp(s, "fsync") == 0)
        return SYNC_FSYNC;
    if (strcmp(s, "dsync") == 0)
        return SYNC_DSYNC;
    return -1;
}

/* The bytes of one write request: a commit larger than this is written in
 * pieces of it, the last linked to the sync. One write(2) moves at most
 * 0x7ffff000 bytes (Linux's MAX_RW_COUNT), and a request's length is 32
 * bits; a piece of 1 GiB is neither cut short by the first nor too long for
 * the second. */
#define PIECE_MAX (UINT64_C(1) << 30)

static uint64_t piece_bytes(uint64_t ws)
{
    return ws < PIECE_MAX ? ws : PIECE_MAX;
}

/* Push the requests, submit them and reap want completions into d. */
static int exchange(struct tp_ioq *q, const struct tp_io_req *r, unsigned want,
                    struct tp_io_done *d, tp_error *err)
{
    int rc = 0;
    for (unsigned k = 0; rc == 0 && k < want; k++)
        rc = tp_ioq_push(q, &r[k], err);
    if (rc == 0)
        rc = tp_ioq_submit(q, err);
    unsigned got = 0;
    while (rc == 0 && got < want) {
        /* one at a time: the write's completion is stamped when it lands */
        int n = tp_ioq_reap(q, d + got, 1, 1, err);
        if (n < 0)
            rc = n;
        else
            got += (unsigned)n;
    }
    return rc;
}

/* One commit of ws bytes at off: its pieces written, the last linked to
 * the sync (none with dsync), timed from the first write's start. A short
 * write breaks the link, so the engine finishes the write and the sync
 * comes back canceled: it is then issued again, alone. */
static int commit_one(struct cm_job *jb, struct tp_ioq *q, int mode, uint64_t off, uint64_t i)
{
    uint64_t ws = jb->o->write_size, pb = piece_bytes(ws), start = 0, w_end = 0, w_lat = 0;
    uint64_t s_end = 0;
    for (uint64_t done = 0; done < ws;) {
        uint64_t len = ws - done < pb ? ws - done : pb;
        bool last = done + len == ws;
        struct tp_io_req r[2] = {
            {.kind = TP_IO_WRITE, .len = (uint32_t)len, .off = off + done, .tag = 0},
            {.kind = mode == SYNC_FSYNC ? TP_IO_FSYNC : TP_IO_FDATASYNC, .tag = 1}};
        unsigned want = 1;
        if (last && mode != SYNC_DSYNC) {
            r[0].flags = TP_IO_LINK;
            want = 2;
        }
        struct tp_io_done d[2];
        int rc = exchange(q, r, want, d, &jb->err);
        if (rc) {
            tp_error_prefix(&jb->err, "%s", jb->f.path);
            return rc;
        }
        const struct tp_io_done *dw = d[0].tag == 0 ? &d[0] : &d[1];
        const struct tp_io_done *dsy = want == 2 ? (d[0].tag == 1 ? &d[0] : &d[1]) : NULL;
        if (done == 0)
            start = dw->end_ns - dw->lat_ns; /* the first write's start */
        int64_t sres = dsy ? dsy->res : 0;
        if (dw->res >= 0 && sres == -ECANCELED) {
            struct tp_io_done again;
            r[1].flags = 0;
            if ((rc = exchange(q, &r[1], 1, &again, &jb->err))) {
                tp_error_prefix(&jb->err, "%s", jb->f.path);
                return rc;
            }
            sres = again.res;
            s_end = again.end_ns;
        } else if (dsy)
            s_end = dsy->end_ns;
        if (dw->res < 0 || sres < 0) {
            bool wfail = dw->res < 0 && dw->res != -ECANCELED;
            return tp_error_errno(&jb->err, TP_ESYS, (int)-(wfail ? dw->res : sres),
                                  "%s: %s of commit %" PRIu64, jb->f.path,
                                  wfail ? "write" : mode == SYNC_FSYNC ? "fsync" : "fdatasync",
                                  i);
        }
        w_end = dw->end_ns;
        w_lat = dw->lat_ns;
        done += len;
    }
    /* one piece: the write's own latency; several: first start to last end */
    tp_hist_record(jb->write, ws <= pb ? w_lat : w_end > start ? w_end - start : 0);
    if (mode != SYNC_DSYNC) {
        tp_hist_record(jb->sync, s_end > w_end ? s_end - w_end : 0);
        tp_hist_record(jb->total, s_end > start ? s_end - start : 0);
    } else
        tp_hist_record(jb->total, w_end > start ? w_end - start : 0);
    return 0;
}

static void *cm_main(void *arg)
{
    struct cm_job *jb = arg;
    const struct tp_commit_opts *o = jb->o;
    int mode = sync_mode(o->sync);
    uint64_t ws = o->write_size;
    struct tp_ioq *q = NULL;
    /* auto: psync. A commit is one write and one sync at a time, which log
     * writers do with plain calls; io_uring punts the sync to a worker
     * thread, which adds a hop (docs/storage.md has the figures). */
    const char *engine = !o->c.engine || strcmp(o->c.engine, "auto") == 0 ? "psync" : o->c.engine;
    struct tp_ioq_opts qo = {.engine = engine, .depth = 2, .fds = &jb->f.fd, .nfds = 1,
                             .bufs = jb->buf, .nbufs = 1, .buf_bytes = piece_bytes(ws),
                             .timeout_ns = o->c.timeout_ns};
    jb->rc = tp_ioq_open(&qo, &q, &jb->err);
    if (jb->rc)
        return NULL;
    jb->engine = tp_ioq_info(q);
    uint64_t deadline = o->time_ns ? tp_now_ns() + o->time_ns : UINT64_MAX;
    jb->t0 = tp_now_ns();
    for (uint64_t i = 0; i < o->count && tp_now_ns() < deadline; i++) {
        if (tp_intr_signal()) { /* between commits: none is half done */
            jb->rc = tp_intr_check(&jb->err);
            break;
        }
        /* overwrite: cycle over the laid-out file; append: always extend */
        uint64_t off = jb->f.base + (o->overwrite ? (i % (jb->f.bytes / ws)) * ws : i * ws);
        struct tp__io_hdr h = {TP__IO_HDR_MAGIC, jb->j, i, o->c.seed};
        memcpy(jb->buf[0], &h, ws < sizeof h ? ws : sizeof h);
        if ((jb->rc = commit_one(jb, q, mode, off, i)))
            break;
        jb->commits++;
        jb->t1 = tp_now_ns();
        if (jb->j == 0) /* one store: the line's own thread draws it */
            tp_progress_set((double)jb->commits);
    }
    tp_ioq_close(q);
    return NULL;
}

/* Lay the file out (written and synced) so that commits overwrite it. */
static int layout(struct cm_job *jb, tp_error *err)
{
    uint64_t pb = piece_bytes(jb->o->write_size);
    for (uint64_t off = 0; off < jb->f.bytes;) {
        /* the buffer holds one piece; a short write is taken as progress */
        size_t len = (size_t)(jb->f.bytes - off < pb ? jb->f.bytes - off : pb);
        ssize_t k = pwrite(jb->f.fd, jb->buf[0], len, (off_t)(jb->f.base + off));
        if (k <= 0)
            return tp_error_errno(err, TP_ESYS, k < 0 ? errno : EIO, "%s: laying the file out",
                                  jb->f.path);
        off += (uint64_t)k;
    }
    if (fdatasync(jb->f.fd) != 0)
        return tp_error_errno(err, TP_ESYS, errno, "%s: fdatasync", jb->f.path);
    return 0;
}

int tp_io_commit(const struct tp_commit_opts *o, json_t *results, tp_error *err)
{
    char a[32];
    int mode = sync_mode(o->sync);
    if (mode < 0)
        return tp_error_set(err, TP_EUSAGE, "--sync %s: fdatasync, fsync or dsync", o->sync);
    struct tp_target t;
    int rc = tp__io_open_target(&o->c, &t, results, err);
    if (rc)
        return rc;
    uint64_t ws = o->write_size;
    if (o->c.direct && ws % t.dio_off_align)
        rc = tp_error_set(err, TP_EUSAGE, "--write-size %s: with --direct a multiple of %u bytes",
                          tp_fmt_size(ws, a, sizeof a), t.dio_off_align);
    /* the file a job commits into: count writes when appending; when
     * overwriting, a region of at most 64 MiB cycled over */
    uint64_t region = o->count * ws;
    if (o->overwrite && region > (64u << 20))
        region = ws < (64u << 20) ? (64u << 20) / ws * ws : ws;
    char wsz[32], fr[32];
    if (rc == 0 && region * o->c.jobs > tp_target_space(&t) && (t.is_device || !o->c.force))
        rc =
            tp_error_set(err, TP_EUSAGE, "--count %llu x --write-size %s%s: %s needed, %s has %s%s",
                         (unsigned long long)o->count, tp_fmt_size(ws, wsz, sizeof wsz),
                         o->overwrite ? " (overwriting: 64 MiB a job at most)" : "",
                         tp_fmt_bytes(region * o->c.jobs, a, sizeof a), t.path,
                         tp_fmt_bytes(tp_target_space(&t), fr, sizeof fr),
                         t.is_device ? "" : " free (--force writes anyway)");
    if (rc == 0)
        rc = tp__io_mkdir(&t, COMMIT_DIR, true, err);
    struct cm_job *jobs = rc ? NULL : calloc(o->c.jobs, sizeof *jobs);
    if (rc == 0 && !jobs)
        rc = tp_error_set(err, TP_ENOMEM, "commit: out of memory");
    for (unsigned j = 0; rc == 0 && j < o->c.jobs; j++) {
        struct cm_job *jb = &jobs[j];
        jb->o = o;
        jb->t = &t;
        jb->j = j;
        jb->buf = tp__io_bufs_alloc(1, piece_bytes(ws), t.dio_mem_align, o->c.seed + j);
        jb->total = tp_hist_new();
        jb->write = tp_hist_new();
        jb->sync = tp_hist_new();
        if (!jb->buf || !jb->total || !jb->write || !jb->sync) {
            rc = tp_error_set(err, TP_ENOMEM, "commit: out of memory");
            break;
        }
        char name[32];
        snprintf(name, sizeof name, "commit-%02u.log", j);
        struct tp_io_common c = o->c;
        rc = tp__io_file_open(&t, &c, COMMIT_DIR, name, j, region,
                              O_CREAT | O_TRUNC | O_WRONLY | (mode == SYNC_DSYNC ? O_DSYNC : 0),
                              &jb->f, err);
        if (rc == 0 && mode == SYNC_DSYNC && t.is_device)
            rc = tp_error_set(err, TP_EUSAGE, "--sync dsync: not with --device (use fdatasync)");
        if (rc == 0 && o->overwrite)
            rc = layout(jb, err);
    }
    if (rc == 0) { /* by time, or job 0's commits of count */
        tp_progress_begin(o->c.progress_line, "io commit",
                          o->time_ns ? (double)o->time_ns / 1e9 : (double)o->count,
                          o->time_ns ? "s" : "commits",
                          TP_PROGRESS_TICK | (o->time_ns ? TP_PROGRESS_TIMED : 0));
        rc = tp__io_run_jobs(o->c.jobs, cm_main, jobs, sizeof *jobs, err);
        tp_progress_end();
    }
    tp_hist *total = tp_hist_new(), *wr = tp_hist_new(), *sy = tp_hist_new();
    uint64_t commits = 0, t0 = UINT64_MAX, t1 = 0;
    for (unsigned j = 0; jobs && j < o->c.jobs; j++) {
        struct cm_job *jb = &jobs[j];
        if (rc == 0 && jb->rc) {
            rc = jb->rc;
            *err = jb->err;
        }
        if (jb->total) {
            tp_hist_merge(total, jb->total);
            tp_hist_merge(wr, jb->write);
            tp_hist_merge(sy, jb->sync);
        }
        commits += jb->commits;
        if (jb->t0 && jb->t0 < t0)
            t0 = jb->t0;
        if (jb->t1 > t1)
            t1 = jb->t1;
        if (j == 0 && jb->engine)
            json_object_set(results, "engine", jb->engine);
    }
    double s = t1 > t0 ? (double)(t1 - t0) / 1e9 : 0;
    json_object_set_new(results, "sync", json_string(o->sync ? o->sync : "fdatasync"));
    json_object_set_new(results, "write_size", json_integer((json_int_t)ws));
    json_object_set_new(results, "mode", json_string(o->overwrite ? "overwrite" : "append"));
    json_object_set_new(results, "commits", json_integer((json_int_t)commits));
    json_object_set_new(results, "commits_per_s", tp_metric(s > 0 ? (double)commits / s : 0, "1/s"));
    json_object_set_new(results, "latency", tp__io_lat_json(total));
    json_object_set_new(results, "latency_histogram", tp_hist_to_json(total));
    json_object_set_new(results, "write_latency", tp__io_lat_json(wr));
    json_object_set_new(results, "sync_latency",
                        mode == SYNC_DSYNC ? json_null() : tp__io_lat_json(sy));
    if (o->c.progress && commits) {
        char b[32], c[32];
        tp_log(TP_LOG_INFO, "%" PRIu64 " commits: p50 %s, p99 %s", commits,
               tp_fmt_ns((double)tp_hist_percentile(total, 50), b, sizeof b),
               tp_fmt_ns((double)tp_hist_percentile(total, 99), c, sizeof c));
    }
    tp_hist_free(total);
    tp_hist_free(wr);
    tp_hist_free(sy);
    for (unsigned j = 0; jobs && j < o->c.jobs; j++) {
        tp_io_file_close(&jobs[j].f);
        tp__io_bufs_free(jobs[j].buf, 1);
        tp_hist_free(jobs[j].total);
        tp_hist_free(jobs[j].write);
        tp_hist_free(jobs[j].sync);
        json_decref(jobs[j].engine);
    }
    free(jobs);
    tp__io_rmdir(&t, COMMIT_DIR);
    tp_target_close(&t);
    return rc;
}
