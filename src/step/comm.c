/* The comm side of `trainpath step`: the comm thread and the calls it
 * makes.
 *
 * A step is a plan of calls: the gradient's buckets, posted from B-1 down
 * to 0 as DDP's backward produces them, or with --workload the recorded
 * collectives of the step's layout in the order the job called them, each
 * run by coll's own implementation of its kind (tp_coll_run) on f32
 * elements, with the recorded total size. The compute posts each call as
 * its slice of the step ends; the comm thread runs each as soon as it is
 * posted, timing each so the loop can tell the comm the compute hid from
 * the comm it exposed. The model's real gradient rides at the head of one
 * allreduce (bucket 0; a workload's last allreduce that holds it, or one
 * added for it): by a plain f32 allreduce, by its exact sum over every
 * rank's samples (--reduce exact, exact.c), or gathered and summed in the
 * order the ranks became ready (--reduce arrival). With --reduce exact
 * every allreduce runs by --repro exact too, as a model's whole gradient
 * would. The calls of a workload share one input and one output buffer,
 * past the model's gradient (the largest call's size): the compute thread
 * writes the model's gradient while the comm thread reads the others'. */
#include <stdint.h>
#include <stdlib.h>
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

/* A call on buffers that live in GPU memory: through NCCL on the device
 * buffers, or through trainpath staged via host memory (copied out, run,
 * copied back, all counted as comm). The model's own gradient is computed
 * on the host (it is tiny), so its call first lands it on the GPU as a
 * backward pass would leave it, and its sum comes back for the update. */
static int run_gpu(struct rank *r, const struct tp__step_call *k, struct tp_coll_args *a,
                   tp_error *err)
{
    const struct tp_step_opts *o = r->o;
    size_t gl = tp_model_grad_len(o->dim);
    int rc = 0;
    if (k->real)
        rc = tp_gpu_h2d(o->gpu, r->dgrad, r->grad, gl * 4, err);
    a->sendbuf = r->dgrad + k->off;
    a->recvbuf = r->dgsum + k->off;
    if (rc == 0 && o->nccl) {
        a->exact = false;
        rc = tp_coll_nccl_run(o->gpu, a, err);
    } else if (rc == 0) {
        a->sendbuf = r->grad + k->off;
        a->recvbuf = r->gsum + k->off;
        rc = tp_gpu_d2h(o->gpu, r->grad + k->off, r->dgrad + k->off, k->in_elems * 4, err);
        if (rc == 0)
            rc = tp_coll_run(r->c, a, err);
        if (rc == 0)
            rc = tp_gpu_h2d(o->gpu, r->dgsum + k->off, r->gsum + k->off, k->out_elems * 4, err);
    }
    if (rc == 0 && k->real)
        rc = tp_gpu_d2h(o->gpu, r->gsum, r->dgsum, gl * 4, err);
    return rc;
}

static int run_call(struct rank *r, const struct tp__step_call *k, tp_error *err)
{
    const struct tp_step_opts *o = r->o;
    if (k->real) {
        int rc = reduce_real(r, err);
        if (rc)
            return rc;
    }
    if (k->count == 0) /* an empty bucket */
        return 0;
    bool ar = k->kind == TP_ALLREDUCE;
    struct tp_coll_args a = {.kind = k->kind, .dtype = TP_F32, .op = TP_SUM,
                             .sendbuf = r->grad + k->off, .recvbuf = r->gsum + k->off,
                             .count = k->count, .root = 0, .algo = ar ? o->algo : NULL,
                             .exact = ar && o->reduce == TP_STEP_EXACT};
    if (o->grad_cuda)
        return run_gpu(r, k, &a, err);
    return tp_coll_run(r->c, &a, err);
}

size_t tp__step_wl_calls(const struct tp_step_workload *w, size_t l, int n, size_t gl,
                         struct tp__step_call *call, size_t *ncalls, bool *tail)
{
    const struct tp_step_wl_layout *L = &w->layouts[l];
    size_t past = (gl + 15) / 16 * 16; /* the others' buffers start a cache line past it */
    size_t need = gl, real = SIZE_MAX;
    for (size_t i = 0; i < L->n; i++) {
        struct tp_coll_shape sh = tp__step_wl_shape(&L->coll[i], n);
        size_t most = sh.in_elems > sh.out_elems ? sh.in_elems : sh.out_elems;
        need = past + most > need ? past + most : need;
        if (L->coll[i].kind == TP_ALLREDUCE && !L->coll[i].mapped && sh.count >= gl)
            real = i;
        if (call)
            call[i] = (struct tp__step_call){.kind = L->coll[i].kind, .count = sh.count,
                                             .in_elems = sh.in_elems, .out_elems = sh.out_elems,
                                             .off = past, .index = (uint32_t)i, .from = (int)i};
    }
    *ncalls = L->n + (real == SIZE_MAX);
    *tail = real != SIZE_MAX;
    if (real != SIZE_MAX) { /* it rides at the head of the buffers */
        struct tp_coll_shape sh = tp__step_wl_shape(&L->coll[real], n);
        need = sh.count > need ? sh.count : need;
        if (call) {
            call[real].off = 0;
            call[real].real = true;
        }
    } else if (call) {
        call[L->n] = (struct tp__step_call){.kind = TP_ALLREDUCE, .count = gl, .in_elems = gl,
                                            .out_elems = gl, .off = 0, .index = (uint32_t)L->n,
                                            .from = -1, .real = true};
    }
    return need;
}

size_t tp__step_wl_buffer_floats(const struct tp_step_workload *w, int n, size_t gl)
{
    size_t most = gl, calls;
    bool tail;
    for (size_t l = 0; l < w->nlayouts; l++) {
        size_t need = tp__step_wl_calls(w, l, n, gl, NULL, &calls, &tail);
        most = need > most ? need : most;
    }
    return most;
}

/* equal buckets (the last one short); bucket 0 holds at least the model's
 * own gradient, and the last bucket ends at r->count */
static void bucket_layout(struct rank *r)
{
    const struct tp_step_opts *o = r->o;
    unsigned B = o->buckets;
    size_t at = 0;
    for (unsigned k = 0; k < B; k++) {
        r->bofs[k] = at;
        at += r->bucket_elems;
        if (k == 0 && at < tp_model_grad_len(o->dim))
            at = tp_model_grad_len(o->dim);
        if (at > r->count || k == B - 1)
            at = r->count;
    }
    r->bofs[B] = at;
}

static int plan_alloc(struct tp__step_plan *p, size_t n)
{
    p->n = n;
    p->ran_step = -1;
    p->call = calloc(n ? n : 1, sizeof *p->call);
    p->ran = calloc(n ? n : 1, sizeof *p->ran);
    return p->call && p->ran ? 0 : -1;
}

int tp__step_calls_build(struct rank *r, tp_error *err)
{
    const struct tp_step_opts *o = r->o;
    const struct tp_step_workload *w = o->workload;
    size_t gl = tp_model_grad_len(o->dim);
    r->nplans = w ? w->nlayouts : 1;
    if (!(r->plans = calloc(r->nplans, sizeof *r->plans)))
        return tp_error_set(err, TP_ENOMEM, "step: out of memory");
    r->maxcalls = 1;
    if (!w) {
        unsigned B = o->buckets;
        r->count = o->grad_bytes / 4;
        r->bucket_elems = (r->count + B - 1) / B;
        if (r->bucket_elems < gl)
            r->bucket_elems = gl < r->count ? gl : r->count;
        bucket_layout(r);
        struct tp__step_plan *p = &r->plans[0];
        if (plan_alloc(p, B))
            return tp_error_set(err, TP_ENOMEM, "step: out of memory");
        for (unsigned j = 0; j < B; j++) { /* bucket B-1 first */
            unsigned k = B - 1 - j;
            size_t cnt = r->bofs[k + 1] - r->bofs[k];
            p->call[j] = (struct tp__step_call){.kind = TP_ALLREDUCE, .count = cnt,
                                                .in_elems = cnt, .out_elems = cnt,
                                                .off = r->bofs[k], .index = k, .from = -1,
                                                .real = k == 0};
        }
        r->maxcalls = B;
    } else {
        r->count = tp__step_wl_buffer_floats(w, r->n, gl);
        for (size_t l = 0; l < r->nplans; l++) {
            struct tp__step_plan *p = &r->plans[l];
            size_t n;
            tp__step_wl_calls(w, l, r->n, gl, NULL, &n, &p->tail);
            if (plan_alloc(p, n))
                return tp_error_set(err, TP_ENOMEM, "step: out of memory");
            tp__step_wl_calls(w, l, r->n, gl, p->call, &n, &p->tail);
            r->maxcalls = n > r->maxcalls ? n : r->maxcalls;
        }
    }
    r->bstart = calloc(r->maxcalls, sizeof *r->bstart);
    r->bend = calloc(r->maxcalls, sizeof *r->bend);
    r->real_sum = calloc(gl, sizeof *r->real_sum);
    if (!r->bstart || !r->bend || !r->real_sum)
        return tp_error_set(err, TP_ENOMEM, "step: out of memory");
    return 0;
}

void tp__step_calls_free(struct rank *r)
{
    for (size_t l = 0; r->plans && l < r->nplans; l++) {
        free(r->plans[l].call);
        free(r->plans[l].ran);
    }
    free(r->plans);
    free(r->bstart);
    free(r->bend);
    free(r->real_sum);
    r->plans = NULL;
    r->bstart = r->bend = NULL;
    r->real_sum = NULL;
}

/* the model's summed gradient, kept as soon as its call is done (a later
 * call of a workload's step reuses the output buffer) */
static void keep_real(struct rank *r)
{
    memcpy(r->real_sum, r->gsum, tp_model_grad_len(r->o->dim) * sizeof *r->real_sum);
}

int tp__step_comm_warmup(struct rank *r, tp_error *err)
{
    int rc = 0;
    for (size_t l = 0; rc == 0 && l < r->nplans; l++)
        for (size_t j = 0; rc == 0 && j < r->plans[l].n; j++) {
            const struct tp__step_call *k = &r->plans[l].call[j];
            /* the same kind, size and buffers: its first use is past (each
             * bucket has buffers of its own; a workload's calls share theirs) */
            bool seen = false;
            for (size_t m = 0; !seen && m <= l; m++)
                for (size_t i = 0; !seen && i < (m == l ? j : r->plans[m].n); i++) {
                    const struct tp__step_call *x = &r->plans[m].call[i];
                    seen = x->kind == k->kind && x->count == k->count && x->off == k->off &&
                           x->real == k->real;
                }
            if (!seen)
                rc = run_call(r, k, err);
        }
    return rc;
}

void *tp__step_comm_main(void *arg)
{
    struct rank *r = arg;
    tp__step_unpin(r);
    uint64_t rng = tp_splitmix64(r->o->seed ^ 0xc033ull ^ ((uint64_t)r->me << 20) ^
                                 ((uint64_t)r->run << 40));
    pthread_mutex_lock(&r->mu);
    for (;;) {
        /* run the next call posted */
        while (!r->comm_quit && r->posted <= r->done_upto)
            pthread_cond_wait(&r->cv, &r->mu);
        if (r->comm_quit)
            break;
        size_t j = r->done_upto;
        struct tp__step_plan *p = (struct tp__step_plan *)r->cur;
        const struct tp__step_call *k = &p->call[j];
        bool first = j == 0;
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
        int rc = run_call(r, k, &r->comm_err);
        uint64_t t1 = tp_now_ns();
        tp__step_trace_add(r, k->kind == TP_ALLREDUCE ? TP__SPAN_BUCKET : TP__SPAN_COLL,
                           r->cur_step, k->index, t0, t1);
        if (rc == 0 && k->real)
            keep_real(r);
        /* the first run's first step of this plan: what ran, for the document */
        if (rc == 0 && r->run == 0 && (p->ran_step < 0 || p->ran_step == (int64_t)r->cur_step)) {
            size_t most = k->in_elems > k->out_elems ? k->in_elems : k->out_elems;
            p->ran_step = (int64_t)r->cur_step;
            p->ran[p->nran++] = (struct tp__step_ran){k->kind, 4 * (uint64_t)most};
        }
        pthread_mutex_lock(&r->mu);
        r->bstart[j] = t0;
        r->bend[j] = t1;
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

const struct tp__step_plan *tp__step_comm_reset(struct rank *r, uint64_t s)
{
    const struct tp_step_workload *w = r->o->workload;
    pthread_mutex_lock(&r->mu);
    r->cur = &r->plans[w ? w->layout[s % w->nsteps] : 0];
    r->posted = r->done_upto = 0;
    r->comm_busy_ns = 0;
    r->comm_delay_ns = 0;
    pthread_mutex_unlock(&r->mu);
    return r->cur;
}

int tp__step_comm_wait(struct rank *r, uint64_t *busy_ns, uint64_t *delay_ns, tp_error *err)
{
    pthread_mutex_lock(&r->mu);
    while (r->done_upto < r->cur->n && r->comm_rc == 0)
        pthread_cond_wait(&r->cv, &r->mu);
    int rc = r->comm_rc;
    *busy_ns = r->comm_busy_ns;
    *delay_ns = r->comm_delay_ns;
    pthread_mutex_unlock(&r->mu);
    if (rc)
        *err = r->comm_err;
    return rc;
}

/* The summed gradient of the real model, after its call completed. */
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
        memcpy(out, r->real_sum, gl * sizeof *out);
}
