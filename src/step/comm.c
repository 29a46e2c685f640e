/* The comm side of `trainpath step`: the comm thread and the bucket
 * allreduce.
 *
 * The compute posts gradient buckets from B-1 down to 0 (as DDP's backward
 * produces them); the comm thread allreduces each as soon as it is posted,
 * timing each bucket so the loop can tell the comm the compute hid from the
 * comm it exposed. The model's real gradient rides in bucket 0: by a plain
 * f32 allreduce, by its exact sum over every rank's samples (--reduce
 * exact, exact.c), or gathered and summed in the order the ranks became
 * ready (--reduce arrival). With --reduce exact every bucket is allreduced
 * by --repro exact too, as a model's whole gradient would be. */
#include <string.h>

#include "step_int.h"
#include "tp/clock.h"
#include "tp/gpu.h"
#include "tp/model.h"
#include "tp/pattern.h"

static int reduce_real(struct rank *r, tp_error *err)
{
    const struct tp_step_opts *o = r->o;
    size_t gl = tp_model_grad_len(o->dim);
    if (o->reduce == TP_STEP_EXACT)
        return tp__step_exact_sum(r, r->exact_sum, err);
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
        a.exact = o->reduce == TP_STEP_EXACT;
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
    size_t lo = r->bofs[k], hi = r->bofs[k + 1];
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
                             .algo = r->o->algo, .exact = r->o->reduce == TP_STEP_EXACT};
    return tp_coll_run(r->c, &a, err);
}

void tp__step_bucket_layout(struct rank *r)
{
    const struct tp_step_opts *o = r->o;
    unsigned B = o->buckets;
    const struct tp_step_workload *w = o->workload;
    size_t at = 0;
    for (unsigned k = 0; k < B; k++) {
        r->bofs[k] = at;
        if (w && w->nbuckets == B) /* trainpath's bucket k is the (B-1-k)-th DDP fired */
            at += (size_t)(w->bucket_bytes[B - 1 - k] / 4);
        else
            at += r->bucket_elems;
        if (k == 0 && at < tp_model_grad_len(o->dim))
            at = tp_model_grad_len(o->dim);
        if (at > r->count || k == B - 1)
            at = r->count;
    }
    r->bofs[B] = at;
}

int tp__step_comm_warmup(struct rank *r, tp_error *err)
{
    int rc = 0;
    for (int k = (int)r->o->buckets - 1; rc == 0 && k >= 0; k--)
        rc = allreduce_bucket(r, k, err);
    return rc;
}

void *tp__step_comm_main(void *arg)
{
    struct rank *r = arg;
    tp__step_unpin(r);
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
            uint64_t d = tp__step_delay_draw(r, &rng, TP_DELAY_COMM);
            r->comm_delay_ns = d;
            if (d) {
                uint64_t d0 = tp_now_ns();
                tp__step_sleep_ns(d);
                tp__step_trace_add(r, TP__SPAN_COMM_DELAY, r->cur_step, 0, d0, tp_now_ns());
            }
        }
        uint64_t t0 = tp_now_ns();
        int rc = allreduce_bucket(r, k, &r->comm_err);
        uint64_t t1 = tp_now_ns();
        tp__step_trace_add(r, TP__SPAN_BUCKET, r->cur_step, (uint32_t)k, t0, t1);
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

void tp__step_comm_post(struct rank *r)
{
    pthread_mutex_lock(&r->mu);
    r->posted++;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

void tp__step_comm_reset(struct rank *r)
{
    pthread_mutex_lock(&r->mu);
    r->posted = r->done_upto = 0;
    r->comm_busy_ns = 0;
    r->comm_delay_ns = 0;
    pthread_mutex_unlock(&r->mu);
}

int tp__step_comm_wait(struct rank *r, uint64_t *busy_ns, uint64_t *delay_ns, tp_error *err)
{
    int B = (int)r->o->buckets;
    pthread_mutex_lock(&r->mu);
    while (r->done_upto < B && r->comm_rc == 0)
        pthread_cond_wait(&r->cv, &r->mu);
    int rc = r->comm_rc;
    *busy_ns = r->comm_busy_ns;
    *delay_ns = r->comm_delay_ns;
    pthread_mutex_unlock(&r->mu);
    if (rc)
        *err = r->comm_err;
    return rc;
}

/* The summed gradient of the real model, after bucket 0 completed. */
void tp__step_real_sum(struct rank *r, float *out)
{
    const struct tp_step_opts *o = r->o;
    size_t gl = tp_model_grad_len(o->dim);
    if (o->reduce == TP_STEP_EXACT) {
        memcpy(out, r->exact_sum, gl * sizeof *out);
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
