/* The data side of `trainpath step`: the dataset and the prefetching loader.
 *
 * The dataset is `samples` records of the model (tp_model_record_fill) in up
 * to 8 files under DIR/trainpath-step, created once per host and reused
 * while its parameters match: io's record files (tp_io_records in tp/io.h),
 * the layout and manifest `trainpath io dataset` uses too. Each step, a
 * rank's share of the global batch is the samples at positions me, me + n,
 * me + 2n, ... of that step's part of an epoch-wise shuffle that is an
 * affine map of the sample index: the same global order for any rank count,
 * so --reduce exact trains the same weights on 1 or N ranks. The loader
 * thread reads a step's share through an io queue into one of `prefetch`
 * slots, ahead of the compute, and the compute thread waits for the slot of
 * its step. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "step_int.h"
#include "tp/clock.h"
#include "tp/model.h"
#include "tp/pattern.h"
#include "tp/storage.h"

/* The epoch's permutation of 0..N-1: an affine map i -> a i + b mod N with
 * a coprime to N (no table of N entries per epoch). */
struct perm {
    uint64_t seed, n, epoch, a, b;
    bool valid;
};

static void perm_for(struct perm *p, uint64_t seed, uint64_t n, uint64_t epoch)
{
    uint64_t h = tp_splitmix64(seed ^ (epoch * 0x9e3779b97f4a7c15ull));
    uint64_t a = (h | 1) % n ? (h | 1) % n : 1;
    for (;;) {
        uint64_t x = a, y = n;
        while (y) {
            uint64_t t = x % y;
            x = y;
            y = t;
        }
        if (x == 1)
            break;
        a = (a + 1) % n ? (a + 1) % n : 1;
    }
    *p = (struct perm){seed, n, epoch, a, h >> 32, true};
}

/* Global sample index of the k-th sample of step s (an epoch-wise shuffle,
 * the same for any rank count). Each thread keeps the last epoch's map, so
 * the per-sample cost is one multiply and one modulo. */
uint64_t tp__step_sample_of(const struct tp_step_opts *o, uint64_t s, uint64_t k)
{
    static __thread struct perm cache;
    uint64_t g = s * o->batch + k, N = o->samples;
    uint64_t epoch = g / N, pos = g % N;
    if (!cache.valid || cache.epoch != epoch || cache.n != N || cache.seed != o->seed)
        perm_for(&cache, o->seed, N, epoch);
    return (uint64_t)(((unsigned __int128)pos * cache.a + cache.b) % N);
}

/* ---- dataset ---- */

/* Record i of the dataset: the model's sample i (tp/model.h). */
static void fill(const void *arg, uint64_t i, char *rec)
{
    const struct tp_step_opts *o = arg;
    tp_model_record_fill(rec, o->sample_bytes, o->seed, i, o->dim);
}

int tp__step_data_open(struct rank *r, bool *created, tp_error *err)
{
    const struct tp_step_opts *o = r->o;
    snprintf(r->ds_dir, sizeof r->ds_dir, "%s/" STEP_SUB, o->dir);
    r->ds = (struct tp_io_records){
        .dir = r->ds_dir, .name = "step dataset", .records = o->samples,
        .record_bytes = o->sample_bytes,
        .files = (unsigned)(o->samples < STEP_FILES ? o->samples : STEP_FILES),
        .chunk_bytes = 1u << 20, .fill = fill, .arg = o};
    int first = r->me;
    for (int i = 0; i < r->me; i++)
        if (strcmp(tp_boot_host(r->b, i), tp_boot_host(r->b, r->me)) == 0) {
            first = i;
            break;
        }
    int rc = 0;
    *created = false;
    if (first == r->me) {
        json_t *m = json_pack("{s:s, s:I, s:I, s:I, s:I}", "format", "trainpath-step-dataset/1",
                              "samples", (json_int_t)o->samples, "sample_bytes",
                              (json_int_t)o->sample_bytes, "dim", (json_int_t)o->dim, "seed",
                              (json_int_t)o->seed);
        rc = m ? tp_io_records_ensure(&r->ds, m, created, err)
               : tp_error_set(err, TP_ENOMEM, "step dataset manifest: out of memory");
        json_decref(m);
    }
    tp_error berr;
    int brc = tp_boot_barrier(r->b, &berr);
    if (rc)
        return rc;
    if (brc) {
        *err = berr;
        return brc;
    }
    rc = tp_io_records_open(&r->ds, o->direct, r->files, err);
    for (unsigned k = 0; rc == 0 && k < r->ds.files; k++)
        r->fds[k] = r->files[k].fd;
    return rc;
}

void tp__step_data_close(struct rank *r)
{
    for (unsigned k = 0; k < STEP_FILES; k++)
        tp_io_file_close(&r->files[k]);
}

/* ---- loader ---- */

static int load_batch(struct rank *r, struct tp_ioq *q, uint64_t s, tp_error *err)
{
    const struct tp_step_opts *o = r->o;
    uint64_t m = tp__step_local_count(r), next = 0, done = 0;
    struct tp_io_done d[64];
    while (done < m) {
        while (next < m && tp_ioq_inflight(q) < o->qd) {
            uint64_t i = tp__step_sample_of(o, s, (uint64_t)r->me + next * (uint64_t)r->n);
            struct tp_io_req rq = {.kind = TP_IO_READ,
                                   .file = (uint16_t)tp_io_record_file(&r->ds, i),
                                   .buf = (uint32_t)next, .len = (uint32_t)o->sample_bytes,
                                   .off = tp_io_record_off(&r->ds, i), .tag = next};
            int rc = tp_ioq_push(q, &rq, err);
            if (rc)
                return rc;
            next++;
        }
        int rc = tp_ioq_submit(q, err);
        int n = rc ? rc : tp_ioq_reap(q, d, 64, 1, err);
        if (n < 0)
            return n;
        for (int k = 0; k < n; k++) {
            if (d[k].res != (int64_t)o->sample_bytes)
                return tp_error_set(err, TP_ESYS, "step dataset: read of sample %" PRIu64 ": %s",
                                    tp__step_sample_of(o, s,
                                                       (uint64_t)r->me + d[k].tag * (uint64_t)r->n),
                                    d[k].res < 0 ? strerror((int)-d[k].res) : "short read");
            done++;
        }
    }
    return 0;
}

void *tp__step_loader_main(void *arg)
{
    struct rank *r = arg;
    tp__step_unpin(r);
    const struct tp_step_opts *o = r->o;
    uint64_t m = tp__step_local_count(r);
    struct tp_ioq *q = NULL;
    unsigned P = o->prefetch;
    /* one queue per slot: its buffers are the slot's records */
    struct tp_ioq **qs = calloc(P, sizeof *qs);
    void ***bufs = calloc(P, sizeof *bufs);
    int rc = !qs || !bufs ? tp_error_set(&r->loader_err, TP_ENOMEM, "loader: out of memory") : 0;
    for (unsigned p = 0; rc == 0 && !o->no_io && p < P; p++) {
        bufs[p] = calloc(m ? m : 1, sizeof **bufs);
        if (!bufs[p]) {
            rc = tp_error_set(&r->loader_err, TP_ENOMEM, "loader: out of memory");
            break;
        }
        for (uint64_t j = 0; j < m; j++)
            bufs[p][j] = r->slots[p].buf + j * o->sample_bytes;
        struct tp_ioq_opts qo = {.engine = o->engine, .depth = o->qd, .fds = r->fds,
                                 .nfds = r->ds.files, .bufs = bufs[p], .nbufs = (unsigned)m,
                                 .buf_bytes = o->sample_bytes, .submit_batch = 1,
                                 .timeout_ns = 60000000000ull};
        rc = tp_ioq_open(&qo, &qs[p], &r->loader_err);
    }
    uint64_t rng = tp_splitmix64(o->seed ^ 0x10adull ^ ((uint64_t)r->me << 20) ^
                                 ((uint64_t)r->run << 40));
    for (uint64_t s = 0; rc == 0 && s < o->steps; s++) {
        struct slot *sl = &r->slots[s % P];
        pthread_mutex_lock(&r->mu);
        while (sl->ready && !r->stop)
            pthread_cond_wait(&r->cv, &r->mu);
        bool stop = r->stop;
        pthread_mutex_unlock(&r->mu);
        if (stop)
            break;
        /* the io delay: drawn here, slept before the reads */
        uint64_t delay = tp__step_delay_draw(r, &rng, TP_DELAY_IO);
        if (delay) {
            uint64_t d0 = tp_now_ns();
            tp__step_sleep_ns(delay);
            tp__step_trace_add(r, TP__SPAN_IO_DELAY, s, 0, d0, tp_now_ns());
        }
        q = qs[s % P];
        uint64_t l0 = tp_now_ns();
        if (o->no_io)
            for (uint64_t j = 0; j < m; j++)
                tp_model_record_fill(sl->buf + j * o->sample_bytes, o->sample_bytes, o->seed,
                                     tp__step_sample_of(o, s, (uint64_t)r->me + j * (uint64_t)r->n),
                                     o->dim);
        else
            rc = load_batch(r, q, s, &r->loader_err);
        tp__step_trace_add(r, TP__SPAN_READ, s, 0, l0, tp_now_ns());
        pthread_mutex_lock(&r->mu);
        sl->step = s;
        sl->delay_ns = delay;
        sl->ready = rc == 0;
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
    }
    for (unsigned p = 0; qs && p < P; p++)
        tp_ioq_close(qs[p]);
    for (unsigned p = 0; bufs && p < P; p++)
        free(bufs[p]);
    free(qs);
    free(bufs);
    pthread_mutex_lock(&r->mu);
    r->loader_rc = rc;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

int tp__step_batch_wait(struct rank *r, uint64_t s, struct slot **out, tp_error *err)
{
    struct slot *sl = &r->slots[s % r->o->prefetch];
    pthread_mutex_lock(&r->mu);
    while (!(sl->ready && sl->step == s) && r->loader_rc == 0)
        pthread_cond_wait(&r->cv, &r->mu);
    int rc = sl->ready && sl->step == s ? 0 : r->loader_rc;
    pthread_mutex_unlock(&r->mu);
    if (rc)
        *err = r->loader_err;
    *out = sl;
    return rc;
}

void tp__step_batch_release(struct rank *r, struct slot *sl)
{
    pthread_mutex_lock(&r->mu);
    sl->ready = false;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}
