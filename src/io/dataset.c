/* Dataset reads: what storage does to a data loader.
 *
 * N records of r bytes live in F files (record i in file i mod F at slot
 * i div F), each record a header naming it plus a seeded pattern, so every
 * read is checked (the header always; every byte with --verify). An epoch
 * reads every record once in a shuffled order drawn from the seed and the
 * epoch number, as a sampler does; J jobs take every J-th position of that
 * order, each with q reads in flight. The dataset is reused when a previous
 * run left the same one (manifest.json and file sizes match; the layout and
 * the manifest are records.c's, which step's loader shares).
 *
 * --during checkpoint reads again, continuing the epochs, while one
 * checkpoint is written into the same target: the read p99 against the
 * epochs before shows how a checkpoint hurts the loader. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io_int.h"
#include "tp/clock.h"
#include "tp/intr.h"
#include "tp/log.h"
#include "tp/pattern.h"
#include "tp/progress.h"
#include "tp/stats.h"
#include "tp/sysinfo.h"
#include "tp/units.h"

#define DS_DIR "trainpath-dataset"

struct ds_job;

struct ds_ctx {
    const struct tp_dataset_opts *o;
    const struct tp_target *t;
    struct tp_io_records d; /* the files' layout (tp/io.h) */
    char dir[4400];
    unsigned J;
    struct tp_io_file *files;
    int *fds;
    uint32_t *perm;
    unsigned epoch;
    bool continuous; /* during a checkpoint: keep reading epochs until stop */
    atomic_bool stop, failed;
    atomic_uint ready;
    struct ds_job *jobs;
};

struct ds_job {
    struct ds_ctx *x;
    unsigned j;
    void **bufs;
    json_t *engine;
    tp_hist *lat;
    uint64_t first_ns, end_ns, reads, wrong;
    char wrong_msg[256];
    int rc;
    tp_error err;
};

static uint64_t rec_seed(const struct ds_ctx *x, uint64_t i)
{
    return tp_splitmix64(x->o->c.seed ^ (i * 0x9e3779b97f4a7c15ull));
}

static void rec_fill(const void *arg, uint64_t i, char *p)
{
    const struct ds_ctx *x = arg;
    uint64_t r = x->o->record_size;
    struct tp__io_hdr h = {TP__IO_HDR_MAGIC, i, r, x->o->c.seed};
    memcpy(p, &h, sizeof h);
    tp_pattern_fill(p + sizeof h, r - sizeof h, rec_seed(x, i));
}

/* 0 when the record read as p is record i, else a reason. */
static const char *rec_check(const struct ds_ctx *x, uint64_t i, const char *p, bool full)
{
    struct tp__io_hdr h;
    memcpy(&h, p, sizeof h);
    if (h.magic != TP__IO_HDR_MAGIC)
        return "no record header";
    if (h.a != i)
        return "the header of another record";
    if (h.b != x->o->record_size || h.seed != x->o->c.seed)
        return "a record of another dataset (size or seed)";
    size_t off;
    uint8_t want, got;
    if (full && tp_pattern_check(p + sizeof h, x->o->record_size - sizeof h, rec_seed(x, i), &off,
                                 &want, &got) != 0)
        return "payload differs";
    return NULL;
}

static uint64_t rec_off(const struct ds_ctx *x, uint64_t i)
{
    return x->files[tp_io_record_file(&x->d, i)].base + tp_io_record_off(&x->d, i);
}

static void shuffle(struct ds_ctx *x, unsigned epoch)
{
    uint64_t n = x->o->records, s = x->o->c.seed ^ ((uint64_t)(epoch + 1) << 40);
    for (uint64_t i = 0; i < n; i++)
        x->perm[i] = (uint32_t)i;
    for (uint64_t i = n - 1; i > 0; i--) {
        s = tp_splitmix64(s);
        uint64_t k = (uint64_t)(((unsigned __int128)s * (i + 1)) >> 64);
        uint32_t tmp = x->perm[i];
        x->perm[i] = x->perm[k];
        x->perm[k] = tmp;
    }
}

static void *reader(void *arg)
{
    struct ds_job *jb = arg;
    struct ds_ctx *x = jb->x;
    const struct tp_dataset_opts *o = x->o;
    unsigned qd = o->c.qd;
    struct tp_ioq *q = NULL;
    struct tp_ioq_opts qo = {.engine = o->c.engine, .depth = qd, .fds = x->fds,
                             .nfds = x->d.files, .bufs = jb->bufs, .nbufs = qd,
                             .buf_bytes = o->record_size,
                             .submit_batch = o->c.batch,
                             .timeout_ns = o->c.timeout_ns};
    unsigned *free_buf = malloc(qd * sizeof *free_buf), nfree = qd;
    uint64_t *rec_of = malloc(qd * sizeof *rec_of);
    jb->first_ns = jb->end_ns = 0;
    jb->rc = !free_buf || !rec_of ? tp_error_set(&jb->err, TP_ENOMEM, "dataset: out of memory")
                                  : tp_ioq_open(&qo, &q, &jb->err);
    atomic_fetch_add(&x->ready, 1);
    if (jb->rc) {
        atomic_store(&x->failed, true);
        goto out;
    }
    if (!jb->engine)
        jb->engine = tp_ioq_info(q);
    for (unsigned i = 0; i < qd; i++)
        free_buf[i] = i;
    uint64_t n = o->records, pos = jb->j;
    struct tp_io_done done[64];
    for (;;) {
        if (tp_intr_signal() && !atomic_load(&x->failed)) { /* stop pushing; reap the rest */
            jb->rc = tp_intr_check(&jb->err);
            atomic_store(&x->failed, true);
        }
        while (nfree > 0 && !atomic_load(&x->stop) && !atomic_load(&x->failed)) {
            if (pos >= n) {
                if (!x->continuous)
                    break;
                pos = jb->j; /* a reader's next pass; the order stays this epoch's */
            }
            uint64_t i = x->perm[pos];
            pos += x->J;
            unsigned b = free_buf[--nfree];
            rec_of[b] = i;
            struct tp_io_req rq = {.kind = TP_IO_READ,
                                   .file = (uint16_t)tp_io_record_file(&x->d, i), .buf = b,
                                   .len = (uint32_t)o->record_size, .off = rec_off(x, i),
                                   .tag = b};
            if (!jb->first_ns)
                jb->first_ns = tp_now_ns();
            int rc = tp_ioq_push(q, &rq, &jb->err);
            if (rc) {
                jb->rc = rc;
                atomic_store(&x->failed, true);
                break;
            }
        }
        if (tp_ioq_inflight(q) == 0)
            break;
        int rc = tp_ioq_submit(q, &jb->err);
        int got = rc ? rc : tp_ioq_reap(q, done, 64, 1, &jb->err);
        if (got < 0) {
            jb->rc = got;
            atomic_store(&x->failed, true);
            break;
        }
        for (int k = 0; k < got; k++) {
            unsigned b = (unsigned)done[k].tag;
            uint64_t i = rec_of[b];
            free_buf[nfree++] = b;
            jb->end_ns = done[k].end_ns;
            if (done[k].res < 0) {
                jb->rc = tp_error_errno(&jb->err, TP_ESYS, (int)-done[k].res,
                                        "%s: read of record %" PRIu64,
                                        x->files[tp_io_record_file(&x->d, i)].path, i);
                atomic_store(&x->failed, true);
                continue;
            }
            tp_hist_record(jb->lat, done[k].lat_ns);
            jb->reads++;
            const char *why = (uint64_t)done[k].res != o->record_size
                                  ? "short read: the file is truncated"
                                  : rec_check(x, i, jb->bufs[b], o->verify);
            if (why && jb->wrong++ == 0)
                snprintf(jb->wrong_msg, sizeof jb->wrong_msg, "%.160s: record %" PRIu64 ": %s",
                         x->files[tp_io_record_file(&x->d, i)].path, i, why);
        }
    }
out:
    tp_ioq_close(q);
    free(free_buf);
    free(rec_of);
    return NULL;
}

static int run_readers(struct ds_ctx *x, tp_error *err)
{
    atomic_store(&x->failed, false);
    atomic_store(&x->ready, 0);
    for (unsigned j = 0; j < x->J; j++) {
        x->jobs[j].rc = 0;
        x->jobs[j].reads = 0;
        tp_hist_reset(x->jobs[j].lat);
    }
    int rc = tp__io_run_jobs(x->J, reader, x->jobs, sizeof *x->jobs, err);
    for (unsigned j = 0; rc == 0 && j < x->J; j++)
        if (x->jobs[j].rc) {
            *err = x->jobs[j].err;
            rc = x->jobs[j].rc;
        }
    return rc;
}


static void merge_epoch(struct ds_ctx *x, tp_hist *into, uint64_t *t0, uint64_t *t1,
                        uint64_t *reads)
{
    *t0 = UINT64_MAX;
    *t1 = 0;
    *reads = 0;
    for (unsigned j = 0; j < x->J; j++) {
        struct ds_job *jb = &x->jobs[j];
        tp_hist_merge(into, jb->lat);
        *reads += jb->reads;
        if (jb->first_ns && jb->first_ns < *t0)
            *t0 = jb->first_ns;
        if (jb->end_ns > *t1)
            *t1 = jb->end_ns;
    }
    if (*t0 > *t1)
        *t0 = *t1;
}

struct during {
    struct ds_ctx *x;
    int rc;
    tp_error err;
};

static void *during_readers(void *arg)
{
    struct during *d = arg;
    d->rc = run_readers(d->x, &d->err);
    return NULL;
}

/* Read while one checkpoint is written; fills r. */
static int during_checkpoint(struct ds_ctx *x, const tp_hist *base, json_t *r, tp_error *err)
{
    struct tp_ckpt_opts co = x->o->ckpt;
    co.c = x->o->c;
    co.repeat = 1;
    struct tp__io_ckpt_ctx *cx = NULL;
    int rc = tp__io_ckpt_prepare(&co, x->t, &cx, err);
    if (rc)
        return rc;
    x->continuous = true;
    atomic_store(&x->stop, false);
    shuffle(x, x->o->epochs);
    struct during d = {.x = x};
    pthread_t th;
    if (pthread_create(&th, NULL, during_readers, &d) != 0) {
        tp__io_ckpt_free(cx);
        return tp_error_errno(err, TP_ESYS, errno, "dataset: pthread_create");
    }
    while (atomic_load(&x->ready) < x->J)
        usleep(100);
    usleep(20000); /* the readers are at full depth before the writer starts */
    struct tp__io_ckpt_phases ph;
    uint64_t c0 = tp_now_ns();
    int crc = tp__io_ckpt_write(cx, 0, &ph, err);
    uint64_t c1 = tp_now_ns();
    atomic_store(&x->stop, true);
    pthread_join(th, NULL);
    x->continuous = false;
    char step[64];
    snprintf(step, sizeof step, "trainpath-ckpt/step-%04u", 0u);
    tp__io_rmdir(x->t, step);
    tp__io_rmdir(x->t, "trainpath-ckpt");
    tp__io_ckpt_free(cx);
    if (crc)
        return crc;
    if (d.rc) {
        *err = d.err;
        return d.rc;
    }
    tp_hist *h = tp_hist_new();
    uint64_t t0, t1, reads;
    merge_epoch(x, h, &t0, &t1, &reads);
    tp_stats sb, sd;
    tp_stats_from_hist(base, &sb);
    tp_stats_from_hist(h, &sd);
    json_object_set_new(
        r, "during_checkpoint",
        json_pack("{s:o, s:o, s:I, s:o, s:o, s:o, s:o}", "baseline", tp__io_lat_json(base),
                  "during", tp__io_lat_json(h), "reads", (json_int_t)reads, "p99_ratio",
                  sb.p99 > 0 ? json_real(sd.p99 / sb.p99) : json_null(), "mean_ratio",
                  sb.mean > 0 ? json_real(sd.mean / sb.mean) : json_null(), "checkpoint",
                  json_pack("{s:o, s:o, s:o, s:o, s:I}", "commit",
                            tp_metric((double)ph.commit_ns, "ns"), "write",
                            tp_metric((double)ph.write_ns, "ns"), "data_sync",
                            tp_metric((double)ph.sync_ns, "ns"), "wall",
                            tp_metric((double)(c1 - c0), "ns"), "bytes", (json_int_t)ph.bytes),
                  "samples_per_s",
                  tp_metric(t1 > t0 ? (double)reads / ((double)(t1 - t0) / 1e9) : 0, "1/s")));
    tp_hist_free(h);
    return 0;
}

static void ds_free(struct ds_ctx *x)
{
    for (unsigned k = 0; x->files && k < x->d.files; k++)
        tp_io_file_close(&x->files[k]);
    for (unsigned j = 0; x->jobs && j < x->J; j++) {
        tp__io_bufs_free(x->jobs[j].bufs, x->o->c.qd);
        tp_hist_free(x->jobs[j].lat);
        json_decref(x->jobs[j].engine);
    }
    free(x->files);
    free(x->fds);
    free(x->perm);
    free(x->jobs);
}

static int check_opts(const struct tp_dataset_opts *o, const struct tp_target *t, unsigned F,
                      tp_error *err)
{
    char a[32], b[32], c[32];
    if (o->record_size < sizeof(struct tp__io_hdr))
        return tp_error_set(err, TP_EUSAGE, "--record-size %s: at least %zu bytes",
                            tp_fmt_size(o->record_size, a, sizeof a), sizeof(struct tp__io_hdr));
    if (o->record_size > (1u << 30))
        return tp_error_set(err, TP_EUSAGE, "--record-size %s: at most 1G",
                            tp_fmt_size(o->record_size, a, sizeof a));
    if (o->records >= UINT32_MAX)
        return tp_error_set(err, TP_EUSAGE, "--records %" PRIu64 ": at most %u", o->records,
                            UINT32_MAX - 1);
    if (o->c.direct && o->record_size % t->dio_off_align)
        return tp_error_set(err, TP_EUSAGE,
                            "--record-size %s: with --direct it must be a multiple of %u bytes "
                            "(the O_DIRECT alignment of %s, from %s)",
                            tp_fmt_size(o->record_size, a, sizeof a), t->dio_off_align, t->path,
                            t->align_source);
    if (F > 4096 || F < 1)
        return tp_error_set(err, TP_EUSAGE, "--files %u: must be 1..4096", F);
    uint64_t per_file = (o->records + F - 1) / F;
    uint64_t need = per_file * F * o->record_size;
    uint64_t space = tp_target_space(t);
    if (need > space && (t->is_device || !o->c.force))
        return tp_error_set(
            err, TP_EUSAGE,
            "--records %llu x --record-size %s: the dataset "
            "needs %s, %s has %s%s",
            (unsigned long long)o->records, tp_fmt_size(o->record_size, c, sizeof c),
            tp_fmt_bytes(need, a, sizeof a), t->path, tp_fmt_bytes(space, b, sizeof b),
            t->is_device ? "" : " free (--force writes anyway)");
    return 0;
}

int tp_io_dataset(const struct tp_dataset_opts *o, json_t *results, tp_error *err)
{
    struct tp_target t;
    int rc = tp__io_open_target(&o->c, &t, results, err);
    if (rc)
        return rc;
    struct ds_ctx x = {.o = o, .t = &t};
    x.d.files = (unsigned)(o->files < o->records ? o->files : o->records);
    rc = check_opts(o, &t, x.d.files, err);
    if (rc) {
        tp_target_close(&t);
        return rc;
    }
    snprintf(x.dir, sizeof x.dir, "%s/" DS_DIR, t.path);
    x.d = (struct tp_io_records){.dir = x.dir, .name = "dataset", .records = o->records,
                                 .record_bytes = o->record_size, .files = x.d.files,
                                 .chunk_bytes = o->c.bs, .fill = rec_fill, .arg = &x};
    uint64_t per_file = tp_io_records_per_file(&x.d);
    x.J = o->c.jobs;
    x.files = calloc(x.d.files, sizeof *x.files);
    x.fds = calloc(x.d.files, sizeof *x.fds);
    x.perm = malloc(o->records * sizeof *x.perm);
    x.jobs = calloc(x.J, sizeof *x.jobs);
    bool ok = x.files && x.fds && x.perm && x.jobs;
    for (unsigned j = 0; ok && j < x.J; j++) {
        x.jobs[j].x = &x;
        x.jobs[j].j = j;
        x.jobs[j].bufs = tp__io_bufs_alloc(o->c.qd, o->record_size, t.dio_mem_align, j);
        x.jobs[j].lat = tp_hist_new();
        ok = x.jobs[j].bufs && x.jobs[j].lat;
    }
    if (!ok) {
        ds_free(&x);
        tp_target_close(&t);
        return tp_error_set(err, TP_ENOMEM, "dataset: out of memory for %" PRIu64 " records",
                            o->records);
    }
    uint64_t data_bytes = o->records * o->record_size;
    json_object_set_new(results, "records", json_integer((json_int_t)o->records));
    json_object_set_new(results, "record_size", json_integer((json_int_t)o->record_size));
    json_object_set_new(results, "files", json_integer((json_int_t)x.d.files));
    json_object_set_new(results, "dataset_bytes", json_integer((json_int_t)data_bytes));

    /* the readers' threads do the I/O while this one waits: the line's own
     * thread redraws it */
    tp_progress_begin(o->c.progress_line, "io dataset: the records", o->epochs + o->during_ckpt,
                      o->during_ckpt ? "phases" : "epochs", TP_PROGRESS_TICK);
    /* create or reuse: a folder keeps a manifest; a device's regions are
     * written every time */
    bool created = true;
    uint64_t c0 = tp_now_ns();
    if (t.is_device) {
        for (unsigned k = 0; rc == 0 && k < x.d.files; k++)
            rc = tp__io_file_open(&t, &o->c, DS_DIR, "", k, per_file * o->record_size, O_RDONLY,
                                  &x.files[k], err);
        if (rc == 0)
            rc = tp_io_records_write(&x.d, x.files, err);
    } else {
        json_t *m = json_pack("{s:s, s:I, s:I, s:I, s:I}", "format", "trainpath-dataset/1",
                              "records", (json_int_t)o->records, "record_size",
                              (json_int_t)o->record_size, "files", (json_int_t)x.d.files, "seed",
                              (json_int_t)o->c.seed);
        rc = m ? tp_io_records_ensure(&x.d, m, &created, err)
               : tp_error_set(err, TP_ENOMEM, "dataset manifest: out of memory");
        json_decref(m);
        if (rc == 0)
            rc = tp_io_records_open(&x.d, o->c.direct, x.files, err);
        if (rc && created)
            tp__io_rmdir(&t, DS_DIR);
    }
    bool reuse = !created;
    for (unsigned k = 0; rc == 0 && k < x.d.files; k++)
        x.fds[k] = x.files[k].fd;
    json_object_set_new(results, "created", json_boolean(!reuse));
    json_object_set_new(results, "create_time",
                        tp_metric(reuse ? 0 : (double)(tp_now_ns() - c0) / 1e9, "s"));

    uint64_t avail = tp_mem_available();
    bool fits = data_bytes < avail;
    json_t *pc = json_pack("{s:I, s:I, s:b, s:b, s:b}", "dataset_bytes", (json_int_t)data_bytes,
                           "mem_available_bytes", (json_int_t)avail, "fits", fits, "direct",
                           o->c.direct, "dropped", o->c.drop_cache);
    json_object_set_new(results, "page_cache", pc);
    if (fits && !o->c.direct && !o->c.drop_cache) {
        char a[32], b[32], msg[400];
        snprintf(msg, sizeof msg,
                 "the dataset (%s) fits in the page cache (%s available) and reads are "
                 "buffered: epochs may measure memory, not storage (use --direct or --drop-cache)",
                 tp_fmt_size(data_bytes, a, sizeof a), tp_fmt_size(avail, b, sizeof b));
        json_object_set_new(pc, "warning", json_string(msg));
        if (o->c.progress)
            tp_log(TP_LOG_WARN, "%s", msg);
    }

    json_t *epochs = json_array();
    json_object_set_new(results, "epochs", epochs);
    tp_hist *all = tp_hist_new();
    uint64_t total_reads = 0, total_ns = 0, wrong = 0;
    char wrong_msg[256] = "";
    for (unsigned e = 0; rc == 0 && e < o->epochs; e++) {
        if ((rc = tp_intr_check(err)))
            break;
        tp_progress_what("io dataset: epoch %u of %u", e + 1, o->epochs);
        tp_progress_set(e);
        if (o->c.drop_cache)
            tp__io_drop_cache(x.files, x.d.files);
        double cached = tp__io_cached_fraction(x.files, x.d.files);
        shuffle(&x, e);
        rc = run_readers(&x, err);
        tp_hist *h = tp_hist_new();
        uint64_t t0, t1, reads;
        merge_epoch(&x, h, &t0, &t1, &reads);
        for (unsigned j = 0; j < x.J; j++) {
            if (x.jobs[j].wrong && !wrong_msg[0])
                snprintf(wrong_msg, sizeof wrong_msg, "%s", x.jobs[j].wrong_msg);
            wrong += x.jobs[j].wrong;
            x.jobs[j].wrong = 0;
        }
        double s = (double)(t1 - t0) / 1e9;
        tp_hist_merge(all, h);
        total_reads += reads;
        total_ns += t1 - t0;
        json_array_append_new(
            epochs,
            json_pack("{s:I, s:I, s:o, s:o, s:o, s:o, s:o}", "epoch", (json_int_t)e, "reads",
                      (json_int_t)reads, "time", tp_metric(s, "s"), "samples_per_s",
                      tp_metric(s > 0 ? (double)reads / s : 0, "1/s"), "throughput",
                      tp_metric(s > 0 ? (double)reads * (double)o->record_size / s : 0, "B/s"),
                      "cached_fraction_before", cached >= 0 ? json_real(cached) : json_null(),
                      "latency", tp__io_lat_json(h)));
        if (o->c.progress && rc == 0) {
            char a[32], b[32];
            tp_stats st;
            tp_stats_from_hist(h, &st);
            tp_log(TP_LOG_INFO, "epoch %u/%u: %.0f samples/s, %s, p99 %s", e + 1, o->epochs,
                   (double)reads / s, tp_fmt_rate((double)reads * (double)o->record_size / s, a, sizeof a),
                   tp_fmt_ns(st.p99, b, sizeof b));
        }
        tp_hist_free(h);
    }
    if (x.jobs[0].engine)
        json_object_set(results, "engine", x.jobs[0].engine);
    double ts = (double)total_ns / 1e9;
    json_object_set_new(results, "latency", tp__io_lat_json(all));
    json_object_set_new(results, "latency_histogram", tp_hist_to_json(all));
    json_object_set_new(results, "samples_per_s",
                        tp_metric(ts > 0 ? (double)total_reads / ts : 0, "1/s"));
    json_object_set_new(results, "throughput",
                        tp_metric(ts > 0 ? (double)total_reads * (double)o->record_size / ts : 0,
                                  "B/s"));
    json_object_set_new(results, "wrong", json_integer((json_int_t)wrong));
    if (rc == 0 && wrong)
        rc = tp_error_set(err, TP_ECHECK, "%" PRIu64 " records read back wrong; first: %s", wrong,
                          wrong_msg);
    if (rc == 0 && o->during_ckpt) {
        tp_progress_what("io dataset: during a checkpoint");
        tp_progress_set(o->epochs);
        rc = during_checkpoint(&x, all, results, err);
    }
    tp_progress_end();
    tp_hist_free(all);
    ds_free(&x);
    tp_target_close(&t);
    return rc;
}
