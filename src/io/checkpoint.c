/* Checkpoint commit: what a checkpoint costs until it is durable.
 *
 * One checkpoint is K shard files written at queue depth q by J jobs, then
 * the commit a crash-safe writer needs: fdatasync every shard (pushed only
 * after all of that shard's writes completed: io_uring does not order
 * requests of one submission), the metadata written to a temporary file,
 * fsync'd, renamed over meta.json, and the folder fsync'd so the rename
 * itself is durable. The commit latency runs from the first write to the
 * folder's fsync.
 *
 * Every block starts with a header naming its shard, block and checkpoint,
 * and the metadata carries each shard's checksum (XXH3 over the XXH3 of
 * each block, so blocks completing out of order still hash in order).
 * --verify is the restore path: read meta.json back, read every shard, and
 * compare. Reads a page cache could have served are reported as such. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "io_int.h"
#include "tp/clock.h"
#include "tp/intr.h"
#include "tp/json.h"
#include "tp/log.h"
#include "tp/progress.h"
#include "tp/units.h"

#define CKPT_DIR "trainpath-ckpt"
#define META_BYTES 65536u /* the metadata region of a raw device */

struct ckpt_job {
    struct tp__io_ckpt_ctx *x;
    unsigned j;
    void **bufs;
    unsigned nbufs;
    json_t *engine;
    int rc;
    tp_error err;
    uint64_t first_ns, write_end_ns, sync_end_ns;
    tp_hist *lat; /* per-request latency of this job (writes or reads) */
};

struct tp__io_ckpt_ctx {
    const struct tp_ckpt_opts *o;
    const struct tp_target *t;
    unsigned K, J;
    uint64_t shard_bytes, bs;
    uint64_t blocks; /* per shard */
    struct tp_io_file *files;
    uint64_t **block_hash; /* [K][blocks] */
    uint64_t *written;     /* bytes completed per shard */
    unsigned r;
    bool reading; /* the job loop reads (verify) instead of writing */
    uint64_t **want_hash; /* verify: the block hashes just written */
    uint64_t bad_blocks;
    char bad_msg[512];
    atomic_bool failed;
    pthread_barrier_t bar;
    struct ckpt_job *jobs;
    char step[64];
};

static uint64_t shard_len(const struct tp__io_ckpt_ctx *x, unsigned k)
{
    uint64_t last = x->o->size - x->shard_bytes * (x->K - 1);
    return k == x->K - 1 ? last : x->shard_bytes;
}

static uint64_t block_len(const struct tp__io_ckpt_ctx *x, unsigned k, uint64_t b)
{
    uint64_t len = shard_len(x, k);
    uint64_t off = b * x->bs;
    return len - off < x->bs ? len - off : x->bs;
}

static uint64_t shard_blocks(const struct tp__io_ckpt_ctx *x, unsigned k)
{
    return (shard_len(x, k) + x->bs - 1) / x->bs;
}

static void fail(struct tp__io_ckpt_ctx *x, struct ckpt_job *jb, int rc)
{
    jb->rc = rc;
    atomic_store(&x->failed, true);
}

/* Stream the job's shards at queue depth: write (stamped, hashed) or read
 * back (hashed, header checked). */
static void stream(struct ckpt_job *jb, struct tp_ioq *q, unsigned *mine, unsigned nmine)
{
    struct tp__io_ckpt_ctx *x = jb->x;
    unsigned qd = x->o->c.qd;
    unsigned *free_buf = malloc(qd * sizeof *free_buf), nfree = qd;
    uint64_t *tag_shard = malloc(qd * sizeof *tag_shard), *tag_block = malloc(qd * sizeof *tag_block);
    struct tp_io_done done[64];
    if (!free_buf || !tag_shard || !tag_block) {
        fail(x, jb, tp_error_set(&jb->err, TP_ENOMEM, "checkpoint: out of memory"));
        goto out;
    }
    for (unsigned i = 0; i < qd; i++)
        free_buf[i] = i;
    unsigned si = 0;
    uint64_t b = 0;
    /* after a failure (this job's or another's) nothing more is pushed, but
     * what is in flight is still reaped: a write the storage accepted counts
     * in bytes_written, and the first error is the one reported */
    for (;;) {
        if (tp_intr_signal() && !atomic_load(&x->failed)) /* stop pushing; reap what is in flight */
            fail(x, jb, tp_intr_check(&jb->err));
        while (nfree > 0 && si < nmine && !atomic_load(&x->failed)) {
            unsigned k = mine[si];
            unsigned buf = free_buf[--nfree];
            uint64_t len = block_len(x, k, b);
            char *p = jb->bufs[buf];
            if (!x->reading) {
                struct tp__io_hdr h = {TP__IO_HDR_MAGIC, (uint64_t)k | (uint64_t)x->r << 32, b,
                                       x->o->c.seed};
                memcpy(p, &h, len < sizeof h ? len : sizeof h);
                x->block_hash[k][b] = XXH3_64bits(p, len);
            }
            struct tp_io_req rq = {.kind = x->reading ? TP_IO_READ : TP_IO_WRITE,
                                   .file = (uint16_t)si,
                                   .buf = buf,
                                   .len = (uint32_t)len,
                                   .off = x->files[k].base + b * x->bs,
                                   .tag = buf};
            tag_shard[buf] = k;
            tag_block[buf] = b;
            if (!jb->first_ns)
                jb->first_ns = tp_now_ns();
            int rc = tp_ioq_push(q, &rq, &jb->err);
            if (rc) {
                fail(x, jb, rc);
                break;
            }
            if (++b == shard_blocks(x, k)) {
                b = 0;
                si++;
            }
        }
        if (tp_ioq_inflight(q) == 0)
            break;
        int rc = tp_ioq_submit(q, &jb->err);
        int n = rc ? rc : tp_ioq_reap(q, done, 64, 1, &jb->err);
        if (n < 0) {
            tp_error_prefix(&jb->err, "%s", x->files[mine[si < nmine ? si : nmine - 1]].path);
            fail(x, jb, n);
            break;
        }
        for (int i = 0; i < n; i++) {
            unsigned buf = (unsigned)done[i].tag;
            unsigned k = (unsigned)tag_shard[buf];
            uint64_t blk = tag_block[buf];
            uint64_t len = block_len(x, k, blk);
            free_buf[nfree++] = buf;
            tp_hist_record(jb->lat, done[i].lat_ns);
            if (done[i].end_ns > jb->write_end_ns)
                jb->write_end_ns = done[i].end_ns;
            if (done[i].res < 0) {
                if (!jb->rc)
                    fail(x, jb,
                         tp_error_errno(&jb->err, TP_ESYS, (int)-done[i].res,
                                        "%s: %s at offset %" PRIu64 " after %" PRIu64
                                        " bytes of the shard were %s",
                                        x->files[k].path, x->reading ? "read" : "write",
                                        blk * x->bs, x->written[k],
                                        x->reading ? "read" : "written"));
                continue;
            }
            if ((uint64_t)done[i].res != len) {
                if (!jb->rc)
                    fail(x, jb,
                         tp_error_set(&jb->err, TP_ECHECK,
                                      "%s: short read at offset %" PRIu64 " (%" PRId64
                                      " of %" PRIu64 " bytes): the shard is truncated",
                                      x->files[k].path, blk * x->bs, done[i].res, len));
                continue;
            }
            x->written[k] += len;
            if (x->reading) {
                const char *p = jb->bufs[buf];
                uint64_t hsh = XXH3_64bits(p, len);
                x->block_hash[k][blk] = hsh;
                if (hsh != x->want_hash[k][blk]) {
                    struct tp__io_hdr h = {0};
                    memcpy(&h, p, len < sizeof h ? len : sizeof h);
                    if (__atomic_fetch_add(&x->bad_blocks, 1, __ATOMIC_RELAXED) == 0)
                        snprintf(x->bad_msg, sizeof x->bad_msg,
                                 "%.300s: block %" PRIu64 " (offset %" PRIu64 ") differs from what "
                                 "was written%s",
                                 x->files[k].path, blk, blk * x->bs,
                                 h.magic != TP__IO_HDR_MAGIC ? " (no block header: not ours)"
                                 : (h.a & 0xffffffffu) != k || h.b != blk
                                     ? " (a header of another block: misplaced)"
                                 : (h.a >> 32) != x->r ? " (an older checkpoint: stale)"
                                                       : "");
                }
            }
        }
    }
out:
    free(free_buf);
    free(tag_shard);
    free(tag_block);
}

static void *job_main(void *arg)
{
    struct ckpt_job *jb = arg;
    struct tp__io_ckpt_ctx *x = jb->x;
    unsigned nmine = 0;
    unsigned *mine = calloc(x->K / x->J + 1, sizeof *mine);
    int *fds = calloc(x->K / x->J + 1, sizeof *fds);
    struct tp_ioq *q = NULL;
    jb->first_ns = jb->write_end_ns = jb->sync_end_ns = 0;
    if (!mine || !fds) {
        fail(x, jb, tp_error_set(&jb->err, TP_ENOMEM, "checkpoint: out of memory"));
    } else {
        for (unsigned k = jb->j; k < x->K; k += x->J) {
            fds[nmine] = x->files[k].fd;
            mine[nmine++] = k;
        }
        struct tp_ioq_opts qo = {.engine = x->o->c.engine,
                                 .depth = x->o->c.qd,
                                 .fds = fds,
                                 .nfds = nmine,
                                 .bufs = jb->bufs,
                                 .nbufs = jb->nbufs,
                                 .buf_bytes = x->bs,
                                 .submit_batch = x->o->c.batch,
                             .timeout_ns = x->o->c.timeout_ns};
        int rc = nmine ? tp_ioq_open(&qo, &q, &jb->err) : 0;
        if (rc)
            fail(x, jb, rc);
        else if (q && !jb->engine)
            jb->engine = tp_ioq_info(q);
    }
    pthread_barrier_wait(&x->bar); /* all start together */
    if (q && !atomic_load(&x->failed))
        stream(jb, q, mine, nmine);
    pthread_barrier_wait(&x->bar); /* every write has completed */
    if (q && !x->reading && !atomic_load(&x->failed)) {
        struct tp_io_done done[64];
        unsigned next = 0;
        while (!atomic_load(&x->failed) && (next < nmine || tp_ioq_inflight(q) > 0)) {
            while (next < nmine && tp_ioq_inflight(q) < x->o->c.qd) {
                struct tp_io_req rq = {.kind = TP_IO_FDATASYNC, .file = (uint16_t)next,
                                       .tag = mine[next]};
                int rc = tp_ioq_push(q, &rq, &jb->err);
                if (rc) {
                    fail(x, jb, rc);
                    break;
                }
                next++;
            }
            int rc = tp_ioq_submit(q, &jb->err);
            int n = rc ? rc : tp_ioq_reap(q, done, 64, 1, &jb->err);
            if (n < 0) {
                /* a timeout: which shard's sync is stuck is not known */
                tp_error_prefix(&jb->err, "%s/%s: fdatasync of the shards", x->t->path, x->step);
                fail(x, jb, n);
                break;
            }
            for (int i = 0; i < n; i++) {
                if (done[i].end_ns > jb->sync_end_ns)
                    jb->sync_end_ns = done[i].end_ns;
                if (done[i].res < 0)
                    fail(x, jb, tp_error_errno(&jb->err, TP_ESYS, (int)-done[i].res,
                                               "%s: fdatasync", x->files[done[i].tag].path));
            }
        }
    }
    tp_ioq_close(q);
    free(mine);
    free(fds);
    return NULL;
}

int tp__io_ckpt_prepare(const struct tp_ckpt_opts *o, const struct tp_target *t,
                        struct tp__io_ckpt_ctx **out, tp_error *err)
{
    char a[32], b[32];
    if (o->shards < 1 || o->size < o->shards)
        return tp_error_set(err, TP_EUSAGE, "--shards %u: must be 1..--size bytes", o->shards);
    unsigned K = o->shards;
    uint64_t bs = o->c.bs, shard_bytes = (o->size + K - 1) / K;
    uint32_t al = t->dio_off_align;
    if (o->c.direct) {
        if (bs % al)
            return tp_error_set(err, TP_EUSAGE, "--bs %s: not a multiple of the O_DIRECT "
                                "alignment (%u bytes) of %s",
                                tp_fmt_size(bs, a, sizeof a), al, t->path);
        shard_bytes = tp__io_round_up(shard_bytes, al);
        if (shard_bytes * (K - 1) >= o->size || (o->size - shard_bytes * (K - 1)) % al)
            return tp_error_set(err, TP_EUSAGE,
                                "--size %s over %u shards: with --direct every shard must be a "
                                "multiple of %u bytes",
                                tp_fmt_size(o->size, a, sizeof a), K, al);
    }
    if (shard_bytes * (K - 1) >= o->size)
        return tp_error_set(err, TP_EUSAGE, "--size %s cannot be split into %u shards",
                            tp_fmt_size(o->size, a, sizeof a), K);
    struct tp__io_ckpt_ctx *x = calloc(1, sizeof *x);
    if (!x)
        return tp_error_set(err, TP_ENOMEM, "checkpoint: out of memory");
    x->o = o;
    x->t = t;
    x->K = K;
    x->J = o->c.jobs < K ? o->c.jobs : K;
    x->bs = bs;
    x->shard_bytes = shard_bytes;
    x->blocks = (x->shard_bytes + x->bs - 1) / x->bs;
    uint64_t need = t->is_device ? x->shard_bytes * x->K + META_BYTES
                                 : (o->size + META_BYTES) * (o->keep ? o->repeat : 1);
    uint64_t space = tp_target_space(t);
    if (need > space && (t->is_device || !o->c.force)) {
        free(x);
        char c[32];
        return tp_error_set(err, TP_EUSAGE, "--size %s: %s needs %s, %s has %s%s",
                            tp_fmt_size(o->size, a, sizeof a),
                            o->keep ? "keeping every checkpoint" : "a checkpoint",
                            tp_fmt_bytes(need, b, sizeof b), t->path,
                            tp_fmt_bytes(space, c, sizeof c),
                            t->is_device ? "" : " free (--force writes anyway)");
    }
    x->files = calloc(x->K, sizeof *x->files);
    x->block_hash = calloc(x->K, sizeof *x->block_hash);
    x->want_hash = calloc(x->K, sizeof *x->want_hash);
    x->written = calloc(x->K, sizeof *x->written);
    x->jobs = calloc(x->J, sizeof *x->jobs);
    bool ok = x->files && x->block_hash && x->want_hash && x->written && x->jobs;
    for (unsigned k = 0; ok && k < x->K; k++) {
        x->block_hash[k] = calloc(x->blocks, sizeof **x->block_hash);
        x->want_hash[k] = calloc(x->blocks, sizeof **x->want_hash);
        ok = x->block_hash[k] && x->want_hash[k];
        x->files[k].fd = -1;
    }
    for (unsigned j = 0; ok && j < x->J; j++) {
        x->jobs[j].x = x;
        x->jobs[j].j = j;
        x->jobs[j].nbufs = o->c.qd;
        x->jobs[j].bufs =
            tp__io_bufs_alloc(o->c.qd, x->bs, t->dio_mem_align, o->c.seed * 1000 + j * 64);
        x->jobs[j].lat = tp_hist_new();
        ok = x->jobs[j].bufs && x->jobs[j].lat;
    }
    if (!ok || pthread_barrier_init(&x->bar, NULL, x->J) != 0) {
        tp__io_ckpt_free(x);
        return tp_error_set(err, TP_ENOMEM, "checkpoint: out of memory for %u shards", x->K);
    }
    *out = x;
    return 0;
}

void tp__io_ckpt_free(struct tp__io_ckpt_ctx *x)
{
    if (!x)
        return;
    if (x->jobs && x->J)
        pthread_barrier_destroy(&x->bar);
    for (unsigned k = 0; k < x->K; k++) {
        if (x->block_hash)
            free(x->block_hash[k]);
        if (x->want_hash)
            free(x->want_hash[k]);
        if (x->files)
            tp_io_file_close(&x->files[k]);
    }
    for (unsigned j = 0; x->jobs && j < x->J; j++) {
        tp__io_bufs_free(x->jobs[j].bufs, x->jobs[j].nbufs);
        tp_hist_free(x->jobs[j].lat);
        json_decref(x->jobs[j].engine);
    }
    free(x->files);
    free(x->block_hash);
    free(x->want_hash);
    free(x->written);
    free(x->jobs);
    free(x);
}

static int open_shards(struct tp__io_ckpt_ctx *x, int flags, tp_error *err)
{
    for (unsigned k = 0; k < x->K; k++) {
        char name[64];
        snprintf(name, sizeof name, "shard-%04u-of-%04u.bin", k, x->K);
        int rc = tp__io_file_open(x->t, &x->o->c, x->step, name, k, x->shard_bytes, flags,
                                  &x->files[k], err);
        if (rc)
            return rc;
        x->files[k].bytes = shard_len(x, k);
    }
    return 0;
}

static void close_shards(struct tp__io_ckpt_ctx *x)
{
    for (unsigned k = 0; k < x->K; k++)
        tp_io_file_close(&x->files[k]);
}

/* Run the jobs over the shards; the first job error wins. */
static int run(struct tp__io_ckpt_ctx *x, tp_error *err)
{
    atomic_store(&x->failed, false);
    memset(x->written, 0, x->K * sizeof *x->written);
    for (unsigned j = 0; j < x->J; j++) {
        x->jobs[j].rc = 0;
        tp_error_clear(&x->jobs[j].err);
    }
    int rc = tp__io_run_jobs(x->J, job_main, x->jobs, sizeof *x->jobs, err);
    for (unsigned j = 0; rc == 0 && j < x->J; j++)
        if (x->jobs[j].rc) {
            *err = x->jobs[j].err;
            rc = x->jobs[j].rc;
        }
    return rc;
}

static json_t *meta_doc(struct tp__io_ckpt_ctx *x)
{
    json_t *shards = json_array();
    for (unsigned k = 0; k < x->K; k++) {
        char h[20];
        uint64_t nb = shard_blocks(x, k);
        snprintf(h, sizeof h, "%016" PRIx64, XXH3_64bits(x->block_hash[k], nb * sizeof(uint64_t)));
        const char *name = strrchr(x->files[k].path, '/');
        json_array_append_new(shards, json_pack("{s:s, s:I, s:I, s:s}", "name",
                                                name ? name + 1 : x->files[k].path, "offset",
                                                (json_int_t)x->files[k].base, "bytes",
                                                (json_int_t)shard_len(x, k), "xxh3", h));
    }
    return json_pack("{s:s, s:I, s:I, s:I, s:o}", "format", "trainpath-checkpoint/1", "checkpoint",
                     (json_int_t)x->r, "block_size", (json_int_t)x->bs, "seed",
                     (json_int_t)x->o->c.seed, "shards", shards);
}

/* The metadata commit: temporary file, fsync, rename, folder fsync (on a
 * raw device: the metadata region, then fdatasync). */
static int commit_meta(struct tp__io_ckpt_ctx *x, tp_error *err)
{
    json_t *m = meta_doc(x);
    char *text = m ? json_dumps(m, JSON_COMPACT) : NULL;
    json_decref(m);
    if (!text)
        return tp_error_set(err, TP_ENOMEM, "checkpoint metadata: out of memory");
    size_t len = strlen(text);
    int rc = 0;
    if (x->t->is_device) {
        uint64_t at = x->shard_bytes * x->K;
        void *blk = NULL;
        if (len >= META_BYTES || posix_memalign(&blk, 4096, META_BYTES) != 0) {
            free(text);
            return tp_error_set(err, TP_ENOMEM, "checkpoint metadata: %zu bytes", len);
        }
        memset(blk, 0, META_BYTES);
        memcpy(blk, text, len);
        if (pwrite(x->t->dev_fd, blk, META_BYTES, (off_t)at) != (ssize_t)META_BYTES ||
            fdatasync(x->t->dev_fd) != 0)
            rc = tp_error_errno(err, TP_ESYS, errno, "%s: metadata at offset %" PRIu64,
                                x->t->path, at);
        free(blk);
        free(text);
        return rc;
    }
    char tmp[4480], fin[4480], dir[4400];
    snprintf(dir, sizeof dir, "%s/%s", x->t->path, x->step);
    snprintf(tmp, sizeof tmp, "%s/meta.json.tmp", dir);
    snprintf(fin, sizeof fin, "%s/meta.json", dir);
    int fd = open(tmp, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0)
        rc = tp_error_errno(err, TP_ESYS, errno, "%s", tmp);
    else {
        const char *p = text;
        size_t left = len;
        while (rc == 0 && left > 0) {
            ssize_t n = write(fd, p, left);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                rc = tp_error_errno(err, TP_ESYS, n < 0 ? errno : EIO, "%s: write", tmp);
            else {
                p += n;
                left -= (size_t)n;
            }
        }
        if (rc == 0 && fsync(fd) != 0)
            rc = tp_error_errno(err, TP_ESYS, errno, "%s: fsync", tmp);
        close(fd);
    }
    if (rc == 0 && rename(tmp, fin) != 0)
        rc = tp_error_errno(err, TP_ESYS, errno, "rename %s", tmp);
    if (rc == 0) {
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0 || fsync(dfd) != 0)
            rc = tp_error_errno(err, TP_ESYS, errno, "%s: fsync of the folder", dir);
        if (dfd >= 0)
            close(dfd);
    }
    free(text);
    return rc;
}

int tp__io_ckpt_write(struct tp__io_ckpt_ctx *x, unsigned r, struct tp__io_ckpt_phases *ph,
                      tp_error *err)
{
    memset(ph, 0, sizeof *ph);
    x->r = r;
    x->reading = false;
    snprintf(x->step, sizeof x->step, CKPT_DIR "/step-%04u", r);
    int rc = tp__io_mkdir(x->t, CKPT_DIR, false, err);
    if (rc == 0)
        rc = tp__io_mkdir(x->t, x->step, true, err);
    if (rc == 0)
        rc = open_shards(x, O_CREAT | O_TRUNC | O_WRONLY, err);
    if (rc == 0)
        rc = run(x, err);
    uint64_t t0 = UINT64_MAX, wend = 0, send = 0;
    for (unsigned j = 0; j < x->J; j++) {
        if (x->jobs[j].first_ns && x->jobs[j].first_ns < t0)
            t0 = x->jobs[j].first_ns;
        if (x->jobs[j].write_end_ns > wend)
            wend = x->jobs[j].write_end_ns;
        if (x->jobs[j].sync_end_ns > send)
            send = x->jobs[j].sync_end_ns;
    }
    for (unsigned k = 0; k < x->K; k++)
        ph->bytes += x->written[k];
    uint64_t m0 = tp_now_ns();
    if (rc == 0)
        rc = commit_meta(x, err);
    uint64_t m1 = tp_now_ns();
    close_shards(x);
    if (rc) {
        tp__io_rmdir(x->t, x->step); /* no partial checkpoint left behind */
        return rc;
    }
    ph->write_ns = wend - t0;
    ph->sync_ns = send > wend ? send - wend : 0;
    ph->meta_ns = m1 - m0;
    ph->commit_ns = m1 - t0;
    for (unsigned k = 0; k < x->K; k++)
        memcpy(x->want_hash[k], x->block_hash[k], shard_blocks(x, k) * sizeof(uint64_t));
    return 0;
}

/* The metadata as a restore finds it on the storage. */
static json_t *read_meta(struct tp__io_ckpt_ctx *x, tp_error *err)
{
    json_error_t je;
    json_t *m = NULL;
    je.text[0] = '\0';
    if (x->t->is_device) {
        char *blk = NULL; /* aligned: the device may be open with O_DIRECT */
        if (posix_memalign((void **)&blk, 4096, META_BYTES + 4096) != 0)
            return NULL;
        ssize_t n = pread(x->t->dev_fd, blk, META_BYTES, (off_t)(x->shard_bytes * x->K));
        if (n > 0) {
            blk[n] = '\0';
            m = json_loads(blk, JSON_DISABLE_EOF_CHECK, &je);
        } else
            snprintf(je.text, sizeof je.text, "%s", n < 0 ? strerror(errno) : "empty");
        free(blk);
    } else {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s/meta.json", x->t->path, x->step);
        tp_error lerr;
        if (tp_json_load(path, &m, &lerr) != 0) /* capped, a regular file */
            snprintf(je.text, sizeof je.text, "%.150s", lerr.msg);
    }
    if (!m)
        tp_error_set(err, TP_ECHECK, "%s%s%s: metadata unreadable: %s", x->t->path,
                     x->t->is_device ? "" : "/", x->t->is_device ? "" : x->step, je.text);
    return m;
}

/* Restore: read the committed checkpoint back and check it. Fills v. */
static int ckpt_verify(struct tp__io_ckpt_ctx *x, json_t *v, tp_error *err)
{
    json_t *m = read_meta(x, err);
    if (!m) {
        json_object_set_new(v, "error", json_string(err->msg));
        return TP_ECHECK;
    }
    int rc = open_shards(x, O_RDONLY, err);
    double cached = -1;
    const char *cache = x->o->c.direct ? "direct" : "cached";
    if (rc == 0 && !x->o->c.direct) {
        if (x->o->c.drop_cache) {
            tp__io_drop_cache(x->files, x->K);
            cache = "dropped";
        }
        cached = tp__io_cached_fraction(x->files, x->K);
        if (cached > 0.01)
            cache = "cached";
        else if (cached < 0 && !x->o->c.drop_cache)
            cache = "unknown";
    }
    x->reading = true;
    x->bad_blocks = 0;
    x->bad_msg[0] = '\0';
    for (unsigned j = 0; j < x->J; j++)
        tp_hist_reset(x->jobs[j].lat);
    uint64_t t0 = tp_now_ns();
    if (rc == 0)
        rc = run(x, err);
    uint64_t t1 = tp_now_ns();
    x->reading = false;
    uint64_t bad_shards = 0;
    json_t *shards = json_object_get(m, "shards");
    for (unsigned k = 0; rc == 0 && k < x->K; k++) {
        char h[20];
        snprintf(h, sizeof h, "%016" PRIx64,
                 XXH3_64bits(x->block_hash[k], shard_blocks(x, k) * sizeof(uint64_t)));
        const char *want = json_string_value(json_object_get(json_array_get(shards, k), "xxh3"));
        if (!want || strcmp(want, h) != 0) {
            if (!bad_shards && !x->bad_msg[0])
                snprintf(x->bad_msg, sizeof x->bad_msg, "%.300s: checksum %s, metadata says %s",
                         x->files[k].path, h, want ? want : "nothing");
            bad_shards++;
        }
    }
    close_shards(x);
    json_decref(m);
    tp_hist *lat = tp_hist_new();
    for (unsigned j = 0; lat && j < x->J; j++)
        tp_hist_merge(lat, x->jobs[j].lat);
    json_object_set_new(v, "restore_time", tp_metric((double)(t1 - t0) / 1e9, "s"));
    json_object_set_new(v, "restore_throughput",
                        tp_metric(t1 > t0 ? (double)x->o->size / ((double)(t1 - t0) / 1e9) : 0,
                                  "B/s"));
    json_object_set_new(v, "read_latency", lat ? tp__io_lat_json(lat) : json_null());
    json_object_set_new(v, "page_cache", json_string(cache));
    json_object_set_new(v, "cached_fraction_before", cached >= 0 ? json_real(cached) : json_null());
    json_object_set_new(v, "bad_blocks", json_integer((json_int_t)x->bad_blocks));
    json_object_set_new(v, "bad_shards", json_integer((json_int_t)bad_shards));
    tp_hist_free(lat);
    if (rc == 0 && (x->bad_blocks || bad_shards))
        rc = tp_error_set(err, TP_ECHECK, "checkpoint %u does not read back as written: %s", x->r,
                          x->bad_msg);
    if (rc == 0 && strcmp(cache, "cached") == 0)
        json_object_set_new(v, "warning",
                            json_string("the page cache held the checkpoint: the restore "
                                        "measured memory, not storage (use --direct or "
                                        "--drop-cache)"));
    return rc;
}

/* Test hook: TP_IO_TEST_CORRUPT=SHARD:OFFSET flips one byte of a committed
 * shard before it is verified, so the tests see the restore path catch it. */
static void corrupt_hook(struct tp__io_ckpt_ctx *x)
{
    const char *spec = getenv("TP_IO_TEST_CORRUPT");
    unsigned k;
    unsigned long long off;
    if (!spec || sscanf(spec, "%u:%llu", &k, &off) != 2 || k >= x->K)
        return;
    char name[64], path[4480];
    snprintf(name, sizeof name, "shard-%04u-of-%04u.bin", k, x->K);
    snprintf(path, sizeof path, "%s/%s/%s", x->t->path, x->step, name);
    int fd = x->t->is_device ? x->t->dev_fd : open(path, O_RDWR | O_CLOEXEC);
    off_t at = (off_t)(x->t->is_device ? k * x->shard_bytes + off : off);
    unsigned char *b = NULL;
    if (fd >= 0 && posix_memalign((void **)&b, 4096, 4096) == 0) {
        off_t blk = at / 4096 * 4096;
        if (pread(fd, b, 4096, blk) > at - blk) {
            b[at - blk] ^= 0x5a;
            if (pwrite(fd, b, 4096, blk) == 4096 && fdatasync(fd) == 0)
                tp_log(TP_LOG_WARN, "test hook: flipped the byte at %s+%lld", name, (long long)at);
        }
    }
    free(b);
    if (fd >= 0 && !x->t->is_device)
        close(fd);
}

static json_t *phase_json(const struct tp__io_ckpt_phases *p)
{
    return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "commit", tp_metric((double)p->commit_ns, "ns"),
                     "write", tp_metric((double)p->write_ns, "ns"), "data_sync",
                     tp_metric((double)p->sync_ns, "ns"), "metadata",
                     tp_metric((double)p->meta_ns, "ns"), "bytes",
                     json_integer((json_int_t)p->bytes), "throughput",
                     tp_metric(p->commit_ns ? (double)p->bytes / ((double)p->commit_ns / 1e9) : 0,
                               "B/s"));
}

int tp_io_checkpoint(const struct tp_ckpt_opts *o, json_t *results, tp_error *err)
{
    struct tp_target t;
    int rc = tp__io_open_target(&o->c, &t, results, err);
    if (rc)
        return rc;
    struct tp__io_ckpt_ctx *x = NULL;
    rc = tp__io_ckpt_prepare(o, &t, &x, err);
    if (rc) {
        tp_target_close(&t);
        return rc;
    }
    json_object_set_new(results, "shard_bytes", json_integer((json_int_t)x->shard_bytes));
    json_t *list = json_array();
    json_object_set_new(results, "checkpoints", list);
    tp_hist *hc = tp_hist_new(), *hw = tp_hist_new(), *hs = tp_hist_new(), *hm = tp_hist_new();
    tp_hist *lat = tp_hist_new();
    double bytes_total = 0, ns_total = 0;
    /* the jobs' threads do the I/O while this one waits: the line's own
     * thread redraws it */
    tp_progress_begin(o->c.progress_line, "", o->repeat, "checkpoints", TP_PROGRESS_TICK);
    for (unsigned r = 0; rc == 0 && r < o->repeat; r++) {
        struct tp__io_ckpt_phases ph;
        if ((rc = tp_intr_check(err)))
            break;
        tp_progress_what("io checkpoint: write");
        for (unsigned j = 0; j < x->J; j++)
            tp_hist_reset(x->jobs[j].lat);
        rc = tp__io_ckpt_write(x, r, &ph, err);
        if (rc) {
            json_array_append_new(list, json_pack("{s:I, s:b, s:s, s:I}", "checkpoint",
                                                  (json_int_t)r, "committed", 0, "error",
                                                  err->msg, "bytes_written",
                                                  (json_int_t)ph.bytes));
            break;
        }
        for (unsigned j = 0; j < x->J; j++)
            tp_hist_merge(lat, x->jobs[j].lat);
        tp_hist_record(hc, ph.commit_ns);
        tp_hist_record(hw, ph.write_ns);
        tp_hist_record(hs, ph.sync_ns);
        tp_hist_record(hm, ph.meta_ns);
        bytes_total += (double)ph.bytes;
        ns_total += (double)ph.commit_ns;
        json_t *e = phase_json(&ph);
        json_object_set_new(e, "checkpoint", json_integer(r));
        json_object_set_new(e, "committed", json_true());
        json_array_append_new(list, e);
        if (o->verify) {
            tp_progress_what("io checkpoint: verify");
            corrupt_hook(x);
            json_t *v = json_object();
            json_object_set_new(e, "verify", v);
            rc = ckpt_verify(x, v, err);
        }
        if (o->c.progress) {
            char a[32], b[32], c[32];
            tp_log(TP_LOG_INFO, "checkpoint %u/%u: %s committed in %s (%s)", r + 1, o->repeat,
                   tp_fmt_size(ph.bytes, a, sizeof a), tp_fmt_ns((double)ph.commit_ns, b, sizeof b),
                   tp_fmt_rate((double)ph.bytes / ((double)ph.commit_ns / 1e9), c, sizeof c));
        }
        if (!o->keep && r > 0) {
            /* retiring the previous checkpoint: a checkpointer keeping the
             * last one pays this too, inside its stall when synchronous */
            char prev[64];
            snprintf(prev, sizeof prev, CKPT_DIR "/step-%04u", r - 1);
            uint64_t t0 = tp_now_ns();
            tp__io_rmdir(&t, prev);
            json_object_set_new(e, "retire", tp_metric((double)(tp_now_ns() - t0), "ns"));
        }
        tp_progress_set(r + 1);
    }
    tp_progress_end();
    if (x->jobs[0].engine)
        json_object_set(results, "engine", x->jobs[0].engine);
    json_object_set_new(results, "commit", tp__io_lat_json(hc));
    json_object_set_new(results, "commit_histogram", tp_hist_to_json(hc));
    json_object_set_new(results, "phases",
                        json_pack("{s:o, s:o, s:o}", "write", tp__io_lat_json(hw), "data_sync",
                                  tp__io_lat_json(hs), "metadata", tp__io_lat_json(hm)));
    json_object_set_new(results, "write_latency", tp__io_lat_json(lat));
    json_object_set_new(results, "throughput",
                        tp_metric(ns_total > 0 ? bytes_total / (ns_total / 1e9) : 0, "B/s"));
    tp_hist_free(hc);
    tp_hist_free(hw);
    tp_hist_free(hs);
    tp_hist_free(hm);
    tp_hist_free(lat);
    for (unsigned r = 0; !o->keep && r < o->repeat; r++) {
        char step[64];
        snprintf(step, sizeof step, CKPT_DIR "/step-%04u", r);
        tp__io_rmdir(&t, step);
    }
    if (!o->keep)
        tp__io_rmdir(&t, CKPT_DIR); /* trainpath's own folder; stays if it holds kept steps */
    tp__io_ckpt_free(x);
    tp_target_close(&t);
    return rc;
}

struct tp_io_ckpt {
    struct tp_ckpt_opts o;
    struct tp_target t;
    struct tp__io_ckpt_ctx *x;
    bool wrote;
    unsigned last;
};

int tp_io_ckpt_open(const struct tp_ckpt_opts *o, struct tp_io_ckpt **out, tp_error *err)
{
    struct tp_io_ckpt *w = calloc(1, sizeof *w);
    if (!w)
        return tp_error_set(err, TP_ENOMEM, "checkpoint writer: out of memory");
    w->o = *o;
    w->o.repeat = 1;
    int rc = tp_target_open(&w->o.c.target, &w->t, err);
    if (rc == 0) {
        rc = tp__io_ckpt_prepare(&w->o, &w->t, &w->x, err);
        if (rc)
            tp_target_close(&w->t);
    }
    if (rc) {
        free(w);
        return rc;
    }
    *out = w;
    return 0;
}

int tp_io_ckpt_write(struct tp_io_ckpt *w, unsigned r, uint64_t *commit_ns, tp_error *err)
{
    struct tp__io_ckpt_phases ph;
    int rc = tp__io_ckpt_write(w->x, r, &ph, err);
    *commit_ns = rc ? 0 : ph.commit_ns;
    if (rc == 0) {
        if (w->wrote && !w->o.keep && w->last != r) {
            char prev[64];
            snprintf(prev, sizeof prev, CKPT_DIR "/step-%04u", w->last);
            tp__io_rmdir(&w->t, prev);
        }
        w->wrote = true;
        w->last = r;
    }
    return rc;
}

void tp_io_ckpt_close(struct tp_io_ckpt *w)
{
    if (!w)
        return;
    if (w->wrote && !w->o.keep) {
        char last[64];
        snprintf(last, sizeof last, CKPT_DIR "/step-%04u", w->last);
        tp__io_rmdir(&w->t, last);
        tp__io_rmdir(&w->t, CKPT_DIR);
    }
    tp__io_ckpt_free(w->x);
    tp_target_close(&w->t);
    free(w);
}
