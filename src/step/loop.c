/* The training loop of `trainpath step`, one rank's view.
 *
 * Three threads per rank. The loader reads this rank's share of each global
 * batch through an io queue into one of `prefetch` slots, ahead of the
 * compute. The compute thread (the caller's, pinned to its own core) takes
 * a batch, runs the model's forward and backward on it and the calibrated
 * CPU work of compute_ms, and hands gradient buckets to the comm thread:
 * with overlap as each slice of the work finishes (last bucket first, as
 * DDP's backward produces them), else all after the compute. The comm
 * thread allreduces the buckets in order; the model's real gradient lives in
 * bucket 0 (the last one ready), the other buckets carry the rest of the
 * preset's gradient bytes. Then the update, and every K steps a checkpoint
 * (written in place, or by a background writer from a snapshot).
 *
 * Per step and rank it records the data wait, the compute, the comm busy
 * time and the part of it the compute did not hide (exposed), the
 * checkpoint stall, the delays injected, and the step time. Rank 0 gathers
 * them all at the end. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tp/atomicfile.h"
#include "tp/clock.h"
#include "tp/fixed.h"
#include "tp/hist.h"
#include "tp/io.h"
#include "tp/log.h"
#include "tp/model.h"
#include "tp/pattern.h"
#include "tp/result.h"
#include "tp/stats.h"
#include "tp/step.h"
#include "tp/storage.h"

enum { F_WAIT, F_COMPUTE, F_COMM, F_EXPOSED, F_CKPT, F_DELAY_IO, F_DELAY_COMM, F_DELAY_COMPUTE,
       F_STEP, F_LOSS, F_READY, F_OVERLAP, NF };
/* F_READY (when the rank's gradient was ready, on rank 0's clock) becomes
 * the "straggler_wait" series: how long the rank then waited for the last
 * rank to be ready */
static const char *const field_names[NF] = {
    "data_wait", "compute", "comm", "comm_exposed", "ckpt_stall", "delay_io", "delay_comm",
    "delay_compute", "step", "loss", "straggler_wait", "comm_overlapped"};

#define DS_SUB "trainpath-step"
#define DS_FILES 8u

struct slot {
    char *buf;        /* local batch records */
    uint64_t step;    /* which step it holds */
    bool ready;
    uint64_t delay_ns; /* io delay injected while reading it */
};

struct rank {
    const struct tp_step_opts *o;
    struct tp_comm *c;
    struct tp_boot *b;
    int me, n;
    unsigned run;
    /* dataset */
    int fds[DS_FILES];
    unsigned nfiles;
    uint64_t per_file;
    uint64_t local_max; /* most samples a rank gets per step */
    /* loader */
    pthread_t loader;
    bool loader_started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct slot *slots;
    bool stop;
    int loader_rc;
    tp_error loader_err;
    /* comm thread */
    pthread_t comm;
    bool comm_started;
    int posted;              /* buckets posted this step (highest first) */
    int done_upto;           /* buckets allreduced this step */
    bool comm_quit;
    uint64_t comm_busy_ns, comm_delay_ns;
    uint64_t bstart[1024], bend[1024]; /* this step's buckets, in the order run */
    int comm_rc;
    tp_error comm_err;
    uint64_t cur_step;
    /* gradient */
    float *grad, *gsum;   /* grad_bytes each (comm arena) */
    size_t count, bucket_elems;
    uint64_t *fx, *fx_sum, *fx_tmp; /* exact: grad_len elements of fx words */
    float *gather;        /* arrival: n * grad_len */
    uint64_t *ready_ns, *ready_all;
    float *w;
    /* compute */
    double work_ns_per_iter;
    volatile double sink;
    /* the GPU path */
    float *dgrad, *dgsum;  /* the buckets in GPU memory (grad_cuda) */
    unsigned gemm_n;       /* compute_gpu: the matrix side, */
    double gemm_ns;        /* one product's time, */
    uint64_t gemm_reps;    /* and the products in compute_ms */
    /* checkpoints */
    struct tp_io_ckpt *ckpt;
    pthread_t writer;
    bool writer_started, writer_busy, writer_quit;
    uint64_t writer_req;
    char *snapshot;
    uint64_t snapshot_bytes;
    int writer_rc;
    tp_error writer_err;
    /* records */
    uint64_t *rec; /* steps * NF */
    cpu_set_t allowed; /* the process's cores: the helper threads run on any of them */
    bool have_allowed;
    uint64_t rng;
};

/* ---- small helpers ---- */

/* Helper threads are created by the pinned compute thread and would inherit
 * its single core: give them back every core the process may use. */
static void unpin(const struct rank *r)
{
    if (r->have_allowed)
        pthread_setaffinity_np(pthread_self(), sizeof r->allowed, &r->allowed);
}

static void sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static double uniform(uint64_t *s)
{
    *s = tp_splitmix64(*s);
    return (double)(*s >> 11) * 0x1.0p-53;
}

/* The delay to inject at where for this rank and step (drawn from the
 * rank's stream, so each run and rank sees its own timing). */
static uint64_t draw_delay(const struct rank *r, uint64_t *rng, enum tp_delay_where where)
{
    uint64_t total = 0;
    for (unsigned i = 0; i < r->o->ndelays; i++) {
        const struct tp_delay *d = &r->o->delays[i];
        if (d->where != where || (d->rank >= 0 && d->rank != r->me))
            continue;
        double u = uniform(rng);
        switch (d->dist) {
        case TP_DELAY_CONST: total += d->ns; break;
        case TP_DELAY_EXP: total += (uint64_t)(-log(1 - u) * (double)d->ns); break;
        case TP_DELAY_SPIKE: total += u < d->p ? d->ns : 0; break;
        }
    }
    return total;
}

static uint64_t local_count(const struct rank *r)
{
    uint64_t B = r->o->batch;
    return B / (uint64_t)r->n + ((uint64_t)r->me < B % (uint64_t)r->n ? 1 : 0);
}

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
static uint64_t sample_of(const struct tp_step_opts *o, uint64_t s, uint64_t k)
{
    static __thread struct perm cache;
    uint64_t g = s * o->batch + k, N = o->samples;
    uint64_t epoch = g / N, pos = g % N;
    if (!cache.valid || cache.epoch != epoch || cache.n != N || cache.seed != o->seed)
        perm_for(&cache, o->seed, N, epoch);
    return (uint64_t)(((unsigned __int128)pos * cache.a + cache.b) % N);
}

/* ---- dataset ---- */

static void ds_path(const struct tp_step_opts *o, unsigned k, char *out, size_t cap)
{
    snprintf(out, cap, "%s/" DS_SUB "/data-%04u.bin", o->dir, k);
}

static bool ds_matches(const struct rank *r)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/" DS_SUB "/manifest.json", r->o->dir);
    json_t *m = json_load_file(p, 0, NULL);
    bool ok = m && json_integer_value(json_object_get(m, "samples")) == (json_int_t)r->o->samples &&
              json_integer_value(json_object_get(m, "sample_bytes")) ==
                  (json_int_t)r->o->sample_bytes &&
              json_integer_value(json_object_get(m, "dim")) == (json_int_t)r->o->dim &&
              json_integer_value(json_object_get(m, "seed")) == (json_int_t)r->o->seed;
    json_decref(m);
    for (unsigned k = 0; ok && k < r->nfiles; k++) {
        struct stat st;
        ds_path(r->o, k, p, sizeof p);
        ok = stat(p, &st) == 0 && (uint64_t)st.st_size == r->per_file * r->o->sample_bytes;
    }
    return ok;
}

static int ds_create(const struct rank *r, tp_error *err)
{
    const struct tp_step_opts *o = r->o;
    char p[4200];
    snprintf(p, sizeof p, "%s/" DS_SUB, o->dir);
    if (mkdir(p, 0755) != 0 && errno != EEXIST)
        return tp_error_errno(err, TP_EUSAGE, errno, "%s", p);
    size_t per = (size_t)((1u << 20) / o->sample_bytes ? (1u << 20) / o->sample_bytes : 1);
    char *buf = malloc(per * o->sample_bytes);
    if (!buf)
        return tp_error_set(err, TP_ENOMEM, "step dataset: out of memory");
    int rc = 0;
    for (unsigned k = 0; rc == 0 && k < r->nfiles; k++) {
        ds_path(o, k, p, sizeof p);
        int fd = open(p, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
        if (fd < 0) {
            rc = tp_error_errno(err, TP_EUSAGE, errno, "%s", p);
            break;
        }
        for (uint64_t s = 0; rc == 0 && s < r->per_file; s += per) {
            uint64_t m = r->per_file - s < per ? r->per_file - s : per;
            for (uint64_t i = 0; i < m; i++) {
                uint64_t idx = (s + i) * r->nfiles + k;
                char *rec = buf + i * o->sample_bytes;
                if (idx < o->samples)
                    tp_model_record_fill(rec, o->sample_bytes, o->seed, idx, o->dim);
                else
                    memset(rec, 0, o->sample_bytes);
            }
            ssize_t w = pwrite(fd, buf, m * o->sample_bytes, (off_t)(s * o->sample_bytes));
            if (w != (ssize_t)(m * o->sample_bytes))
                rc = tp_error_errno(err, TP_ESYS, w < 0 ? errno : ENOSPC, "%s: creating the dataset",
                                    p);
        }
        if (rc == 0 && fdatasync(fd) != 0)
            rc = tp_error_errno(err, TP_ESYS, errno, "%s: fdatasync", p);
        close(fd);
    }
    free(buf);
    if (rc == 0) {
        json_t *m = json_pack("{s:s, s:I, s:I, s:I, s:I}", "format", "trainpath-step-dataset/1",
                              "samples", (json_int_t)o->samples, "sample_bytes",
                              (json_int_t)o->sample_bytes, "dim", (json_int_t)o->dim, "seed",
                              (json_int_t)o->seed);
        char *text = json_dumps(m, JSON_INDENT(2));
        snprintf(p, sizeof p, "%s/" DS_SUB "/manifest.json", o->dir);
        rc = text ? tp_write_atomic(p, text, strlen(text), err)
                  : tp_error_set(err, TP_ENOMEM, "out of memory");
        free(text);
        json_decref(m);
    }
    return rc;
}

/* The lowest rank of each host creates (or reuses) the dataset; everyone
 * then opens it. */
static int ds_open(struct rank *r, bool *created, tp_error *err)
{
    const struct tp_step_opts *o = r->o;
    r->nfiles = (unsigned)(o->samples < DS_FILES ? o->samples : DS_FILES);
    r->per_file = (o->samples + r->nfiles - 1) / r->nfiles;
    int first = r->me;
    for (int i = 0; i < r->me; i++)
        if (strcmp(tp_boot_host(r->b, i), tp_boot_host(r->b, r->me)) == 0) {
            first = i;
            break;
        }
    int rc = 0;
    *created = false;
    if (first == r->me && !ds_matches(r)) {
        rc = ds_create(r, err);
        *created = true;
    }
    tp_error berr;
    int brc = tp_boot_barrier(r->b, &berr);
    if (rc)
        return rc;
    if (brc) {
        *err = berr;
        return brc;
    }
    for (unsigned k = 0; k < r->nfiles; k++) {
        char p[4200];
        ds_path(o, k, p, sizeof p);
        r->fds[k] = open(p, O_RDONLY | O_CLOEXEC | (o->direct ? O_DIRECT : 0));
        if (r->fds[k] < 0)
            return tp_error_errno(err, errno == EINVAL ? TP_EUSAGE : TP_ESYS, errno, "%s%s", p,
                                  errno == EINVAL ? " (--direct)" : "");
    }
    return 0;
}

/* ---- loader ---- */

static int load_batch(struct rank *r, struct tp_ioq *q, uint64_t s, tp_error *err)
{
    const struct tp_step_opts *o = r->o;
    uint64_t m = local_count(r), next = 0, done = 0;
    struct tp_io_done d[64];
    while (done < m) {
        while (next < m && tp_ioq_inflight(q) < o->qd) {
            uint64_t i = sample_of(o, s, (uint64_t)r->me + next * (uint64_t)r->n);
            struct tp_io_req rq = {.kind = TP_IO_READ, .file = (uint16_t)(i % r->nfiles),
                                   .buf = (uint32_t)next, .len = (uint32_t)o->sample_bytes,
                                   .off = (i / r->nfiles) * o->sample_bytes, .tag = next};
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
                                    sample_of(o, s, (uint64_t)r->me + d[k].tag * (uint64_t)r->n),
                                    d[k].res < 0 ? strerror((int)-d[k].res) : "short read");
            done++;
        }
    }
    return 0;
}

static void *loader_main(void *arg)
{
    struct rank *r = arg;
    unpin(r);
    const struct tp_step_opts *o = r->o;
    uint64_t m = local_count(r);
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
                                 .nfds = r->nfiles, .bufs = bufs[p], .nbufs = (unsigned)m,
                                 .buf_bytes = o->sample_bytes, .submit_batch = 1,
                                 .timeout_ns = 60000000000ull};
        rc = tp_ioq_open(&qo, &qs[p], &r->loader_err);
    }
    uint64_t rng = tp_splitmix64(o->seed ^ 0x10adull ^ ((uint64_t)r->me << 20) ^ ((uint64_t)r->run << 40));
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
        uint64_t delay = draw_delay(r, &rng, TP_DELAY_IO);
        if (delay)
            sleep_ns(delay);
        q = qs[s % P];
        if (o->no_io)
            for (uint64_t j = 0; j < m; j++)
                tp_model_record_fill(sl->buf + j * o->sample_bytes, o->sample_bytes, o->seed,
                                     sample_of(o, s, (uint64_t)r->me + j * (uint64_t)r->n),
                                     o->dim);
        else
            rc = load_batch(r, q, s, &r->loader_err);
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

/* ---- comm ---- */

static int reduce_real(struct rank *r, tp_error *err)
{
    const struct tp_step_opts *o = r->o;
    size_t gl = tp_model_grad_len(o->dim);
    if (o->reduce == TP_STEP_EXACT)
        return tp_coll_allreduce_fx(r->c, TP_F32, r->fx, r->fx_sum, gl, o->algo, 0, err);
    if (o->reduce == TP_STEP_ARRIVAL) {
        struct tp_coll_args a = {.kind = TP_ALLGATHER, .dtype = TP_F32, .op = TP_SUM,
                                 .sendbuf = r->grad, .recvbuf = r->gather, .count = gl};
        int rc = tp_coll_run(r->c, &a, err);
        struct tp_coll_args t = {.kind = TP_ALLGATHER, .dtype = TP_I64, .op = TP_SUM,
                                 .sendbuf = r->ready_ns, .recvbuf = r->ready_all, .count = 1};
        return rc ? rc : tp_coll_run(r->c, &t, err);
    }
    return 0; /* plain: bucket 0's allreduce carries it */
}

/* Bucket k of a gradient that lives in GPU memory: through NCCL on the
 * device buffers, or through trainpath staged via host memory (copied out,
 * allreduced, copied back, all counted as comm). The model's own gradient
 * is computed on the host (it is tiny), so bucket 0 first lands it on the
 * GPU as a backward pass would leave it, and its sum comes back for the
 * update. */
static int allreduce_bucket_gpu(struct rank *r, int k, size_t lo, size_t hi, tp_error *err)
{
    const struct tp_step_opts *o = r->o;
    size_t gl = tp_model_grad_len(o->dim), bytes = (hi - lo) * 4;
    int rc = 0;
    if (k == 0)
        rc = tp_gpu_h2d(o->gpu, r->dgrad, r->grad, gl * 4, err);
    struct tp_coll_args a = {.kind = TP_ALLREDUCE, .dtype = TP_F32, .op = TP_SUM,
                             .sendbuf = r->dgrad + lo, .recvbuf = r->dgsum + lo,
                             .count = hi - lo, .algo = o->algo};
    if (rc == 0 && o->nccl) {
        rc = tp_coll_nccl_run(o->gpu, &a, err);
    } else if (rc == 0) {
        a.sendbuf = r->grad + lo;
        a.recvbuf = r->gsum + lo;
        rc = tp_gpu_d2h(o->gpu, r->grad + lo, r->dgrad + lo, bytes, err);
        if (rc == 0)
            rc = tp_coll_run(r->c, &a, err);
        if (rc == 0)
            rc = tp_gpu_h2d(o->gpu, r->dgsum + lo, r->gsum + lo, bytes, err);
    }
    if (rc == 0 && k == 0)
        rc = tp_gpu_d2h(o->gpu, r->gsum, r->dgsum, gl * 4, err);
    return rc;
}

static int allreduce_bucket(struct rank *r, int k, tp_error *err)
{
    size_t lo = (size_t)k * r->bucket_elems;
    size_t hi = lo + r->bucket_elems < r->count ? lo + r->bucket_elems : r->count;
    if (k == 0) {
        int rc = reduce_real(r, err);
        if (rc)
            return rc;
    }
    if (hi <= lo)
        return 0;
    if (r->o->grad_cuda)
        return allreduce_bucket_gpu(r, k, lo, hi, err);
    struct tp_coll_args a = {.kind = TP_ALLREDUCE, .dtype = TP_F32, .op = TP_SUM,
                             .sendbuf = r->grad + lo, .recvbuf = r->gsum + lo, .count = hi - lo,
                             .algo = r->o->algo};
    return tp_coll_run(r->c, &a, err);
}

static void *comm_main(void *arg)
{
    struct rank *r = arg;
    unpin(r);
    int B = (int)r->o->buckets;
    uint64_t rng = tp_splitmix64(r->o->seed ^ 0xc033ull ^ ((uint64_t)r->me << 20) ^
                                 ((uint64_t)r->run << 40));
    pthread_mutex_lock(&r->mu);
    for (;;) {
        /* buckets are posted from B-1 down to 0; run the next one posted */
        while (!r->comm_quit && r->posted <= r->done_upto)
            pthread_cond_wait(&r->cv, &r->mu);
        if (r->comm_quit)
            break;
        int k = B - 1 - r->done_upto;
        bool first = r->done_upto == 0;
        pthread_mutex_unlock(&r->mu);
        if (first) {
            uint64_t d = draw_delay(r, &rng, TP_DELAY_COMM);
            r->comm_delay_ns = d;
            if (d)
                sleep_ns(d);
        }
        uint64_t t0 = tp_now_ns();
        int rc = allreduce_bucket(r, k, &r->comm_err);
        uint64_t t1 = tp_now_ns();
        pthread_mutex_lock(&r->mu);
        r->bstart[r->done_upto] = t0;
        r->bend[r->done_upto] = t1;
        r->comm_busy_ns += t1 - t0;
        r->done_upto++;
        if (rc) {
            r->comm_rc = rc;
            r->comm_quit = true;
        }
        pthread_cond_broadcast(&r->cv);
        if (rc)
            break;
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

static void post(struct rank *r)
{
    pthread_mutex_lock(&r->mu);
    r->posted++;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

/* ---- compute ---- */

static double work(uint64_t iters, double x)
{
    for (uint64_t i = 0; i < iters; i++)
        x = x * 1.0000000001 + 1e-12;
    return x;
}

static void calibrate(struct rank *r)
{
    uint64_t best = UINT64_MAX, n = 2000000;
    for (int i = 0; i < 5; i++) {
        uint64_t t0 = tp_now_ns();
        r->sink = work(n, r->sink);
        uint64_t t = tp_now_ns() - t0;
        best = t < best ? t : best;
    }
    r->work_ns_per_iter = (double)best / (double)n;
}

/* --compute gpu: time the matrix product at a side where one product is
 * a small slice of a bucket's share of compute_ms (at least 8 per slice, so
 * the count rounds finely), then count the products that fill compute_ms. */
static int calibrate_gpu(struct rank *r, tp_error *err)
{
    const struct tp_step_opts *o = r->o;
    unsigned n = o->gemm_n ? o->gemm_n : 4096;
    double want = o->compute_ms * 1e6 / ((double)o->buckets * 8);
    for (int pass = 0; pass < 3; pass++) {
        int rc = tp_gpu_gemm_init(o->gpu, n, err);
        if (rc == 0)
            rc = tp_gpu_gemm(o->gpu, 3, err); /* warm-up: cuBLAS picks its kernel */
        uint64_t best = UINT64_MAX;
        for (int i = 0; rc == 0 && i < 5; i++) {
            uint64_t t0 = tp_now_ns();
            rc = tp_gpu_gemm(o->gpu, 4, err);
            uint64_t t = tp_now_ns() - t0;
            best = t < best ? t : best;
        }
        if (rc)
            return rc;
        r->gemm_n = n;
        r->gemm_ns = (double)best / 4;
        unsigned n2 = tp_gpu_gemm_side(n, r->gemm_ns, want);
        if (o->gemm_n || !(want > 0) || n2 == n ||
            (r->gemm_ns > want / 4 && r->gemm_ns < want * 2))
            break;
        n = n2;
    }
    r->gemm_reps = tp_gpu_gemm_reps(o->compute_ms * 1e6, r->gemm_ns);
    return 0;
}

/* The model's forward and backward on this rank's share of the batch:
 * per-sample gradients summed in sample order (f32), or exactly. */
static int model_step(struct rank *r, const char *buf, tp_error *err)
{
    const struct tp_step_opts *o = r->o;
    size_t gl = tp_model_grad_len(o->dim);
    uint64_t m = local_count(r);
    float *g = malloc(gl * sizeof *g);
    if (!g)
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    memset(r->grad, 0, gl * sizeof *r->grad);
    size_t words = tp_fx_words(TP_F32);
    if (o->reduce == TP_STEP_EXACT)
        memset(r->fx, 0, gl * words * sizeof *r->fx);
    int rc = 0;
    for (uint64_t j = 0; j < m; j++) {
        const float *x;
        float y;
        uint64_t idx = sample_of(o, r->cur_step, (uint64_t)r->me + j * (uint64_t)r->n);
        if (tp_model_record_parse(buf + j * o->sample_bytes, o->dim, idx, &x, &y) != 0) {
            rc = tp_error_set(err, TP_ECHECK, "step dataset: sample %" PRIu64
                              " read back wrong (not the record written)", idx);
            break;
        }
        tp_model_sample_grad(r->w, o->dim, x, y, g);
        if (o->reduce == TP_STEP_EXACT) {
            tp_fx_load(TP_F32, r->fx_tmp, g, gl);
            tp_fx_add(TP_F32, r->fx, r->fx_tmp, gl);
        } else
            for (size_t e = 0; e < gl; e++)
                r->grad[e] += g[e];
    }
    free(g);
    return rc;
}

/* The summed gradient of the real model, after bucket 0 completed. */
static void real_sum(struct rank *r, float *out)
{
    const struct tp_step_opts *o = r->o;
    size_t gl = tp_model_grad_len(o->dim);
    if (o->reduce == TP_STEP_EXACT) {
        tp_fx_store(TP_F32, out, r->fx_sum, gl, 1);
    } else if (o->reduce == TP_STEP_ARRIVAL) {
        /* sum the ranks' partial gradients in the order they became ready
         * (each rank's time on rank 0's clock; ties by rank) */
        int order[1024], n = r->n;
        int64_t t[1024];
        for (int i = 0; i < n; i++) {
            order[i] = i;
            t[i] = (int64_t)r->ready_all[i] - tp_boot_clock_offset_ns(r->b, i);
        }
        for (int i = 1; i < n; i++)
            for (int j = i; j > 0 && (t[order[j]] < t[order[j - 1]] ||
                                      (t[order[j]] == t[order[j - 1]] && order[j] < order[j - 1]));
                 j--) {
                int tmp = order[j];
                order[j] = order[j - 1];
                order[j - 1] = tmp;
            }
        memset(out, 0, gl * sizeof *out);
        for (int i = 0; i < n; i++)
            for (size_t e = 0; e < gl; e++)
                out[e] += r->gather[(size_t)order[i] * gl + e];
    } else
        memcpy(out, r->gsum, gl * sizeof *out);
}

/* ---- checkpoints ---- */

static void *writer_main(void *arg)
{
    struct rank *r = arg;
    unpin(r);
    pthread_mutex_lock(&r->mu);
    for (;;) {
        while (!r->writer_quit && !r->writer_busy)
            pthread_cond_wait(&r->cv, &r->mu);
        if (r->writer_quit && !r->writer_busy)
            break;
        unsigned n = (unsigned)r->writer_req;
        pthread_mutex_unlock(&r->mu);
        uint64_t ns;
        int rc = tp_io_ckpt_write(r->ckpt, n, &ns, &r->writer_err);
        pthread_mutex_lock(&r->mu);
        if (rc && !r->writer_rc)
            r->writer_rc = rc;
        r->writer_busy = false;
        pthread_cond_broadcast(&r->cv);
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

/* Checkpoint number n: synchronous (the stall is the commit) or handed to
 * the writer (the stall is waiting for the previous one plus the
 * snapshot copy). */
static int checkpoint(struct rank *r, unsigned n, tp_error *err)
{
    if (!r->o->ckpt_async) {
        uint64_t ns;
        return tp_io_ckpt_write(r->ckpt, n, &ns, err);
    }
    pthread_mutex_lock(&r->mu);
    while (r->writer_busy)
        pthread_cond_wait(&r->cv, &r->mu);
    int rc = r->writer_rc;
    pthread_mutex_unlock(&r->mu);
    if (rc) {
        *err = r->writer_err;
        return rc;
    }
    /* the snapshot: the state (first half) copied out (second half) before
     * training goes on, as an async checkpointer copies device to host */
    memcpy(r->snapshot + r->snapshot_bytes, r->snapshot, r->snapshot_bytes);
    pthread_mutex_lock(&r->mu);
    r->writer_req = n;
    r->writer_busy = true;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    return 0;
}

/* ---- one training run ---- */

static int wait_batch(struct rank *r, uint64_t s, struct slot **out, tp_error *err)
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

static void release_batch(struct rank *r, struct slot *sl)
{
    pthread_mutex_lock(&r->mu);
    sl->ready = false;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

static int train(struct rank *r, tp_error *err)
{
    const struct tp_step_opts *o = r->o;
    int B = (int)o->buckets;
    uint64_t iters = (uint64_t)(o->compute_ms * 1e6 / r->work_ns_per_iter);
    size_t gl = tp_model_grad_len(o->dim);
    float *gs = malloc(gl * sizeof *gs);
    if (!gs)
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    tp_model_init(r->w, o->dim, o->seed);
    r->rng = tp_splitmix64(o->seed ^ ((uint64_t)r->me << 24) ^ ((uint64_t)r->run << 48) ^ 0xde1a);
    int rc = 0;
    for (uint64_t s = 0; rc == 0 && s < o->steps; s++) {
        uint64_t *f = &r->rec[s * NF];
        uint64_t t0 = tp_now_ns();
        struct slot *sl;
        rc = wait_batch(r, s, &sl, err);
        if (rc)
            break;
        uint64_t t1 = tp_now_ns();
        f[F_WAIT] = t1 - t0;
        f[F_DELAY_IO] = sl->delay_ns;
        r->cur_step = s;
        pthread_mutex_lock(&r->mu);
        r->posted = r->done_upto = 0;
        r->comm_busy_ns = 0;
        r->comm_delay_ns = 0;
        pthread_mutex_unlock(&r->mu);
        /* the compute: slices of the calibrated work; with overlap each
         * slice releases one bucket (B-1 first); the model's own forward and
         * backward is the last slice, which releases bucket 0 */
        uint64_t cdelay = draw_delay(r, &r->rng, TP_DELAY_COMPUTE), t2 = 0;
        f[F_DELAY_COMPUTE] = cdelay;
        for (int k = 0; k < B; k++) {
            if (o->compute_gpu) {
                uint64_t reps = r->gemm_reps;
                rc = tp_gpu_gemm(o->gpu, reps / (uint64_t)B + (k == 0 ? reps % (uint64_t)B : 0),
                                 err);
                if (rc)
                    break;
            } else
                r->sink = work(iters / (uint64_t)B + (k == 0 ? iters % (uint64_t)B : 0), r->sink);
            if (k == B - 1) {
                if (cdelay)
                    sleep_ns(cdelay);
                rc = model_step(r, sl->buf, err);
                if (rc)
                    break;
                /* the compute ends here, before the last bucket is handed
                 * over: what the comm thread does from now on is exposed */
                r->ready_ns[0] = tp_now_ns();
                t2 = r->ready_ns[0];
            }
            if (o->overlap)
                post(r);
        }
        release_batch(r, sl);
        if (rc)
            break;
        f[F_COMPUTE] = t2 - t1;
        if (!o->overlap)
            for (int k = 0; k < B; k++)
                post(r);
        pthread_mutex_lock(&r->mu);
        while (r->done_upto < B && r->comm_rc == 0)
            pthread_cond_wait(&r->cv, &r->mu);
        rc = r->comm_rc;
        uint64_t busy = r->comm_busy_ns;
        f[F_DELAY_COMM] = r->comm_delay_ns;
        pthread_mutex_unlock(&r->mu);
        if (rc) {
            *err = r->comm_err;
            break;
        }
        uint64_t t3 = tp_now_ns();
        f[F_COMM] = busy + f[F_DELAY_COMM];
        /* ready for the last synchronisation: the compute done and the comm
         * thread past its injected delay (its first bucket started) */
        uint64_t ready = r->bstart[0] > t2 ? r->bstart[0] : t2;
        f[F_READY] = (uint64_t)((int64_t)ready - tp_boot_clock_offset_ns(r->b, r->me));
        /* the comm the compute hid: bucket time inside [t1, t2] */
        for (int k = 0; k < B; k++) {
            uint64_t a0 = r->bstart[k] > t1 ? r->bstart[k] : t1;
            uint64_t a1 = r->bend[k] < t2 ? r->bend[k] : t2;
            f[F_OVERLAP] += a1 > a0 ? a1 - a0 : 0;
        }
        f[F_EXPOSED] = t3 - t2;
        real_sum(r, gs);
        tp_model_update(r->w, o->dim, gs, o->batch, o->lr);
        float loss = gs[gl - 1] / (float)o->batch;
        memcpy(&f[F_LOSS], &loss, sizeof loss);
        uint64_t t4 = tp_now_ns();
        if (o->ckpt_every && (s + 1) % o->ckpt_every == 0)
            rc = checkpoint(r, (unsigned)((s + 1) / o->ckpt_every), err);
        uint64_t t5 = tp_now_ns();
        f[F_CKPT] = t5 - t4;
        f[F_STEP] = t5 - t0;
    }
    free(gs);
    return rc;
}

static void stop_threads(struct rank *r)
{
    pthread_mutex_lock(&r->mu);
    r->stop = true;
    r->comm_quit = true;
    r->writer_quit = true;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    if (r->loader_started)
        pthread_join(r->loader, NULL);
    if (r->comm_started)
        pthread_join(r->comm, NULL);
    if (r->writer_started)
        pthread_join(r->writer, NULL);
    r->loader_started = r->comm_started = r->writer_started = false;
}

static int start_threads(struct rank *r, tp_error *err)
{
    r->stop = r->comm_quit = r->writer_quit = false;
    r->loader_rc = r->comm_rc = r->writer_rc = 0;
    r->writer_busy = false;
    for (unsigned p = 0; p < r->o->prefetch; p++)
        r->slots[p].ready = false;
    if (pthread_create(&r->loader, NULL, loader_main, r) != 0)
        return tp_error_errno(err, TP_ESYS, errno, "step: loader thread");
    r->loader_started = true;
    if (pthread_create(&r->comm, NULL, comm_main, r) != 0)
        return tp_error_errno(err, TP_ESYS, errno, "step: comm thread");
    r->comm_started = true;
    if (r->o->ckpt_every && r->o->ckpt_async) {
        if (pthread_create(&r->writer, NULL, writer_main, r) != 0)
            return tp_error_errno(err, TP_ESYS, errno, "step: checkpoint writer thread");
        r->writer_started = true;
    }
    return 0;
}

/* Pin the calling (compute) thread to one core per rank of this host. */
static void pin(struct rank *r)
{
    int local = tp_boot_local_rank(r->b);
    cpu_set_t allowed, one;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return;
    int want = local % CPU_COUNT(&allowed), seen = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &allowed) && seen++ == want) {
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            pthread_setaffinity_np(pthread_self(), sizeof one, &one);
            return;
        }
}

/* ---- results ---- */

static json_t *stats_of(const uint64_t *v, uint64_t n)
{
    uint64_t *c = malloc((n ? n : 1) * sizeof *c);
    if (!c)
        return json_null();
    memcpy(c, v, n * sizeof *c);
    tp_stats s;
    tp_stats_from_samples(c, n, &s);
    free(c);
    return tp_stats_to_json(&s, 1, "ns");
}

/* Rank 0's summary from every rank's records (all[rank][step * NF + f]). */
static void summarise(const struct rank *r, uint64_t *all, json_t *run)
{
    const struct tp_step_opts *o = r->o;
    uint64_t S = o->steps, n = (uint64_t)r->n;
    uint64_t *job = calloc(S, sizeof *job), *each = calloc(S * n, sizeof *each);
    double sum_max = 0, sum_all = 0, exposed = 0, ckpt = 0, comm = 0, wait = 0, compute = 0;
    double own_max = 0, own_all = 0, hidden = 0;
    json_t *series = json_object();
    for (int f = 0; f < NF; f++)
        json_object_set_new(series, field_names[f], json_array());
    for (uint64_t s = 0; job && each && s < S; s++) {
        uint64_t mx = 0;
        for (uint64_t k = 0; k < n; k++) {
            const uint64_t *f = &all[(k * S + s) * NF];
            mx = f[F_STEP] > mx ? f[F_STEP] : mx;
            each[s * n + k] = f[F_STEP];
            sum_all += (double)f[F_STEP];
            exposed += (double)f[F_EXPOSED];
            ckpt += (double)f[F_CKPT];
            comm += (double)f[F_COMM];
            wait += (double)f[F_WAIT];
            compute += (double)f[F_COMPUTE];
            hidden += (double)f[F_OVERLAP];
        }
        job[s] = mx;
        sum_max += (double)mx;
        /* a rank's own step: its step less the time it waited for the last
         * rank to have its gradient ready */
        uint64_t last = 0, own_mx = 0;
        for (uint64_t k = 0; k < n; k++) {
            uint64_t t = all[(k * S + s) * NF + F_READY];
            last = t > last ? t : last;
        }
        for (uint64_t k = 0; k < n; k++) {
            uint64_t *f = &all[(k * S + s) * NF];
            uint64_t lag = last - f[F_READY], own = f[F_STEP] > lag ? f[F_STEP] - lag : 0;
            own_mx = own > own_mx ? own : own_mx;
            own_all += (double)own;
            f[F_READY] = lag; /* reported as straggler_wait */
        }
        own_max += (double)own_mx;
        for (int fi = 0; fi < NF; fi++) {
            json_t *per = json_array();
            for (uint64_t k = 0; k < n; k++) {
                const uint64_t *f = &all[(k * S + s) * NF];
                if (fi == F_LOSS) {
                    float l;
                    memcpy(&l, &f[F_LOSS], sizeof l);
                    json_array_append_new(per, json_real(l));
                } else
                    json_array_append_new(per, json_integer((json_int_t)f[fi]));
            }
            json_array_append_new(json_object_get(series, field_names[fi]),
                                  fi == F_LOSS ? json_incref(json_array_get(per, 0)) : per);
            if (fi == F_LOSS)
                json_decref(per);
        }
    }
    double own_mean = own_all / (double)(S * n);
    double job_mean = own_max / (double)S;
    json_t *loss = json_object_get(series, "loss");
    json_object_set(run, "loss", loss);
    json_object_del(series, "loss");
    json_object_set_new(run, "series", series);
    json_object_set_new(run, "step_time", job ? stats_of(job, S) : json_null());
    json_object_set_new(run, "rank_step_time", each ? stats_of(each, S * n) : json_null());
    json_object_set_new(
        run, "summary",
        json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "amplification",
                  json_real(own_mean > 0 ? job_mean / own_mean : 0),
                  "exposed_comm_fraction", json_real(sum_all > 0 ? exposed / sum_all : 0),
                  "ckpt_overhead_fraction", json_real(sum_all > 0 ? ckpt / sum_all : 0),
                  "data_wait_fraction", json_real(sum_all > 0 ? wait / sum_all : 0),
                  "compute_fraction", json_real(sum_all > 0 ? compute / sum_all : 0),
                  "comm_hidden_fraction", json_real(comm > 0 ? hidden / comm : 0),
                  "goodput", tp_metric(sum_max > 0 ? (double)(o->batch * S) / (sum_max / 1e9) : 0,
                                       "samples/s")));
    free(job);
    free(each);
}

int tp_step_run(struct tp_comm *c, struct tp_boot *b, const struct tp_step_opts *o,
                json_t *results, tp_error *err)
{
    tp_clock_init();
    struct rank *r = calloc(1, sizeof *r);
    if (!r)
        return tp_error_set(err, TP_ENOMEM, "step: out of memory");
    r->o = o;
    r->c = c;
    r->b = b;
    r->me = tp_comm_rank(c);
    r->n = tp_comm_size(c);
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    for (unsigned k = 0; k < DS_FILES; k++)
        r->fds[k] = -1;
    size_t gl = tp_model_grad_len(o->dim), words = tp_fx_words(TP_F32);
    r->count = o->grad_bytes / 4;
    r->bucket_elems = (r->count + o->buckets - 1) / o->buckets;
    if (r->bucket_elems < gl)
        r->bucket_elems = gl < r->count ? gl : r->count;
    r->local_max = o->batch / (uint64_t)r->n + 1;
    int rc = 0;
    r->grad = tp_comm_alloc(c, r->count * 4);
    r->gsum = tp_comm_alloc(c, r->count * 4);
    r->fx = tp_comm_alloc(c, gl * words * 8);
    r->fx_sum = tp_comm_alloc(c, gl * words * 8);
    r->fx_tmp = calloc(gl * words, 8);
    r->gather = tp_comm_alloc(c, (size_t)r->n * gl * 4);
    r->ready_ns = tp_comm_alloc(c, 8);
    r->ready_all = tp_comm_alloc(c, (size_t)r->n * 8);
    r->w = calloc(tp_model_params(o->dim), sizeof *r->w);
    r->rec = calloc(o->steps * NF, sizeof *r->rec);
    r->slots = calloc(o->prefetch, sizeof *r->slots);
    bool ok = r->grad && r->gsum && r->fx && r->fx_sum && r->fx_tmp && r->gather &&
              r->ready_ns && r->ready_all && r->w && r->rec && r->slots;
    for (unsigned p = 0; ok && p < o->prefetch; p++) {
        if (posix_memalign((void **)&r->slots[p].buf, 4096, r->local_max * o->sample_bytes) != 0)
            ok = false;
        else
            memset(r->slots[p].buf, 0, r->local_max * o->sample_bytes);
    }
    if (!ok)
        rc = tp_error_set(err, TP_ENOMEM, "step: out of memory (gradient %" PRIu64
                          " bytes; the comm arena may be too small)", o->grad_bytes);
    if (ok)
        memset(r->grad, 0, r->count * 4);
    if (rc == 0 && o->grad_cuda) {
        rc = tp_gpu_alloc(o->gpu, r->count * 4, (void **)&r->dgrad, err);
        if (rc == 0)
            rc = tp_gpu_alloc(o->gpu, r->count * 4, (void **)&r->dgsum, err);
        if (rc == 0)
            rc = tp_gpu_memset(o->gpu, r->dgrad, 0, r->count * 4, err);
    }
    bool created = false;
    if (rc == 0 && !o->no_io)
        rc = ds_open(r, &created, err);
    if (rc == 0 && o->ckpt_every) {
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/" DS_SUB "/ckpt-rank%d", o->dir, r->me);
        if (mkdir(dir, 0755) != 0 && errno != EEXIST)
            rc = tp_error_errno(err, TP_ESYS, errno, "%s", dir);
        struct tp_ckpt_opts co = {0};
        co.c.target.dir = dir;
        co.c.engine = o->engine;
        co.c.qd = 8;
        co.c.jobs = 1;
        co.c.bs = 1u << 20;
        co.c.batch = 1;
        co.c.seed = o->seed;
        co.c.timeout_ns = 600000000000ull;
        co.size = o->ckpt_bytes / (uint64_t)r->n ? o->ckpt_bytes / (uint64_t)r->n : 4096;
        co.shards = 1;
        co.repeat = 1;
        if (rc == 0)
            rc = tp_io_ckpt_open(&co, &r->ckpt, err);
        r->snapshot_bytes = co.size;
        if (rc == 0 && o->ckpt_async) {
            r->snapshot = malloc(2 * co.size);
            if (!r->snapshot)
                rc = tp_error_set(err, TP_ENOMEM, "step: checkpoint snapshot of %" PRIu64
                                  " bytes", co.size);
            else
                memset(r->snapshot, 1, 2 * co.size); /* touched before anything is timed */
        }
    }
    r->have_allowed = sched_getaffinity(0, sizeof r->allowed, &r->allowed) == 0;
    if (o->pin)
        pin(r);
    calibrate(r);
    if (rc == 0 && o->compute_gpu)
        rc = calibrate_gpu(r, err);
    json_t *runs = json_array();
    char first_hash[65] = "";
    float *w0 = calloc(tp_model_params(o->dim), sizeof *w0);
    uint64_t max_ulps = 0;
    unsigned distinct = 1;
    bool differs = false;
    uint64_t *all = NULL;
    if (r->me == 0)
        all = calloc((size_t)r->n * o->steps * NF, sizeof *all);
    uint64_t *sendrec = rc == 0 ? tp_comm_alloc(c, o->steps * NF * 8) : NULL;
    uint64_t *recvrec = rc == 0 ? tp_comm_alloc(c, (size_t)r->n * o->steps * NF * 8) : NULL;
    if (rc == 0 && (!sendrec || !recvrec || !w0 || (r->me == 0 && !all)))
        rc = tp_error_set(err, TP_ENOMEM, "step: out of memory for the records");
    for (unsigned run = 0; rc == 0 && run < o->runs; run++) {
        r->run = run;
        memset(r->rec, 0, o->steps * NF * sizeof *r->rec);
        rc = start_threads(r, err);
        uint64_t t0 = tp_now_ns();
        if (rc == 0)
            rc = train(r, err);
        uint64_t t1 = tp_now_ns();
        /* wait for an async checkpoint still being written */
        pthread_mutex_lock(&r->mu);
        while (r->writer_started && r->writer_busy)
            pthread_cond_wait(&r->cv, &r->mu);
        int wrc = r->writer_rc;
        pthread_mutex_unlock(&r->mu);
        if (rc == 0 && wrc) {
            rc = wrc;
            *err = r->writer_err;
        }
        stop_threads(r);
        if (rc)
            break;
        /* gather the records (the comm thread has stopped) */
        memcpy(sendrec, r->rec, o->steps * NF * 8);
        struct tp_coll_args a = {.kind = TP_ALLGATHER, .dtype = TP_I64, .op = TP_SUM,
                                 .sendbuf = sendrec, .recvbuf = recvrec, .count = o->steps * NF};
        rc = tp_coll_run(c, &a, err);
        if (rc)
            break;
        char hex[65];
        tp_model_sha256(r->w, o->dim, hex);
        if (run == 0) {
            memcpy(first_hash, hex, sizeof hex);
            memcpy(w0, r->w, tp_model_params(o->dim) * sizeof *w0);
        } else if (strcmp(hex, first_hash) != 0) {
            differs = true;
            distinct++;
            for (size_t e = 0; e < tp_model_params(o->dim); e++) {
                uint64_t u = tp_ulps_f32(w0[e], r->w[e]);
                max_ulps = u > max_ulps ? u : max_ulps;
            }
        }
        if (r->me == 0) {
            memcpy(all, recvrec, (size_t)r->n * o->steps * NF * 8);
            json_t *jr = json_pack("{s:I, s:s, s:o}", "run", (json_int_t)run, "weights_sha256", hex,
                                   "wall", tp_metric((double)(t1 - t0) / 1e9, "s"));
            summarise(r, all, jr);
            float last;
            memcpy(&last, &all[(o->steps - 1) * NF + F_LOSS], sizeof last);
            json_object_set_new(jr, "final_loss", json_real(last));
            if (run > 0) {
                /* the time series of run 0 is enough; later runs keep their summaries */
                json_object_del(jr, "series");
                json_object_del(jr, "loss");
            }
            json_array_append_new(runs, jr);
        }
    }
    if (r->me == 0 && results) {
        json_object_set_new(results, "dataset_created", json_boolean(created));
        json_object_set_new(results, "calibration",
                            json_pack("{s:f, s:I}", "work_ns_per_iter", r->work_ns_per_iter,
                                      "iters_per_step",
                                      (json_int_t)(o->compute_ms * 1e6 / r->work_ns_per_iter)));
        if (o->compute_gpu)
            json_object_set_new(
                json_object_get(results, "calibration"), "gpu",
                json_pack("{s:i, s:o, s:I, s:o}", "gemm_side", (int)r->gemm_n, "gemm_time",
                          tp_metric(r->gemm_ns, "ns"), "products_per_step",
                          (json_int_t)r->gemm_reps, "throughput",
                          tp_metric(r->gemm_ns > 0 ? tp_gpu_gemm_flops(r->gemm_n) / r->gemm_ns * 1e9
                                                   : 0,
                                    "FLOP/s")));
        bool emu = tp_gpu_emulated(o->gpu);
        const char *where = !o->compute_gpu ? "cpu"
                            : emu           ? "gpu (emulated: CPU f32 products)"
                                            : "gpu (cuBLAS bf16 matrix products)";
        const char *sync = o->nccl        ? "nccl"
                           : o->grad_cuda ? "trainpath, staged through host memory"
                                          : "trainpath";
        json_object_set_new(results, "data_path",
                            json_pack("{s:b, s:s, s:s, s:s}", "emulated", emu, "compute", where,
                                      "gradients", o->grad_cuda ? "cuda" : "host", "sync", sync));
        json_object_set_new(results, "runs", runs);
        const char *mode = o->reduce == TP_STEP_EXACT ? "exact"
                           : o->reduce == TP_STEP_ARRIVAL ? "arrival" : "plain";
        json_object_set_new(results, "reproducibility",
                            json_pack("{s:s, s:I, s:s, s:b, s:I, s:I, s:s}", "reduce", mode, "runs",
                                      (json_int_t)o->runs, "weights_sha256", first_hash,
                                      "identical", !differs, "distinct_hashes",
                                      (json_int_t)distinct, "max_ulps", (json_int_t)max_ulps,
                                      "verdict",
                                      o->runs < 2 ? "not checked (one run)"
                                      : !differs ? "bitwise identical"
                                      : o->reduce == TP_STEP_ARRIVAL
                                          ? "diverged, as arrival-order summation does"
                                          : "NOT reproducible"));
    } else
        json_decref(runs);
    if (rc == 0 && differs && o->reduce != TP_STEP_ARRIVAL)
        rc = tp_error_set(err, TP_ECHECK,
                          "the weights differ between runs (%u distinct hashes, up to %" PRIu64
                          " ulps) in %s mode, which must be bitwise reproducible",
                          distinct, max_ulps, o->reduce == TP_STEP_EXACT ? "exact" : "plain");
    stop_threads(r);
    tp_io_ckpt_close(r->ckpt);
    if (r->ckpt) {
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/" DS_SUB "/ckpt-rank%d", o->dir, r->me);
        rmdir(dir);
    }
    for (unsigned k = 0; k < DS_FILES; k++)
        if (r->fds[k] >= 0)
            close(r->fds[k]);
    for (unsigned p = 0; r->slots && p < o->prefetch; p++)
        free(r->slots[p].buf);
    free(r->slots);
    free(r->snapshot);
    free(r->rec);
    free(r->w);
    free(r->fx_tmp);
    if (o->gpu) {
        tp_gpu_free(o->gpu, r->dgrad);
        tp_gpu_free(o->gpu, r->dgsum);
    }
    free(w0);
    free(all);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    free(r);
    return rc;
}
