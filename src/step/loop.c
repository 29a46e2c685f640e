/* The training loop of `trainpath step`, one rank's view.
 *
 * Three threads per rank. The loader reads this rank's share of each global
 * batch through an io queue into one of `prefetch` slots, ahead of the
 * compute (data.c). The compute thread (the caller's, pinned to its own
 * core) takes a batch, runs the model's forward and backward on it and the
 * calibrated CPU work of compute_ms (compute.c), and hands the step's
 * calls to the comm thread (comm.c): with overlap as each slice of the
 * work finishes (last bucket first, as DDP's backward produces them; or a
 * recorded workload's collectives in their order, each when the recorded
 * compute reached its readiness), else all after the compute. The comm
 * thread runs the calls in order; the model's real gradient lives in
 * bucket 0 (the last one ready; with a workload, an allreduce that holds
 * it), the other buckets carry the rest of the preset's gradient bytes.
 * The step waits for every call before the update (as DDP). Then the update,
 * and every K steps a checkpoint (written in place, or by a background
 * writer from a snapshot: ckpt.c).
 * Before the timed steps every distinct call runs once (comm.c's
 * warm-up), so that step 0 times a step, not the channels' first use.
 *
 * Per step and rank it records the data wait, the compute, the comm busy
 * time and the part of it the compute did not hide (exposed), the
 * checkpoint stall, the delays injected, and the step time. Rank 0 gathers
 * them all at the end (summary.c). This file owns the rank and its threads;
 * the others never call back into it. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "step_int.h"
#include "tp/blockfx.h"
#include "tp/clock.h"
#include "tp/intr.h"
#include "tp/fixed.h"
#include "tp/model.h"
#include "tp/pattern.h"
#include "tp/progress.h"

/* ---- one training run ---- */

static int train(struct rank *r, tp_error *err)
{
    const struct tp_step_opts *o = r->o;
    size_t gl = tp_model_grad_len(o->dim);
    float *gs = malloc(gl * sizeof *gs);
    if (!gs)
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    tp_model_init(r->w, o->dim, o->seed);
    r->rng = tp_splitmix64(o->seed ^ ((uint64_t)r->me << 24) ^ ((uint64_t)r->run << 48) ^ 0xde1a);
    int rc = 0;
    for (uint64_t s = 0; rc == 0 && s < o->steps; s++) {
        if (tp_intr_signal()) { /* a step is the safe point; the comm thread stops in its wait */
            rc = tp_intr_check(err);
            break;
        }
        uint64_t *f = &r->rec[s * NF];
        uint64_t t0 = tp_now_ns();
        struct slot *sl;
        rc = tp__step_batch_wait(r, s, &sl, err);
        if (rc)
            break;
        uint64_t t1 = tp_now_ns();
        f[F_WAIT] = t1 - t0;
        tp__step_trace_add(r, TP__SPAN_WAIT, s, 0, t0, t1);
        f[F_DELAY_IO] = sl->delay_ns;
        r->cur_step = s;
        const struct tp__step_plan *p = tp__step_comm_reset(r, s);
        /* the compute: a slice before each of the step's calls; with
         * overlap each slice releases its call (bucket B-1 first, or the
         * recorded collectives in their order); the model's own forward and
         * backward ends the slice before the call it rides on (bucket 0);
         * a recorded step's rest of the compute may follow the last call */
        uint64_t cdelay = tp__step_delay_draw(r, &r->rng, TP_DELAY_COMPUTE), t2 = 0;
        f[F_DELAY_COMPUTE] = cdelay;
        size_t slices = p->n + (p->tail ? 1 : 0);
        for (size_t k = 0; k < slices; k++) {
            rc = tp__step_compute_slice(r, k, err);
            if (rc)
                break;
            if (k < p->n && p->call[k].real) {
                if (cdelay) {
                    uint64_t d0 = tp_now_ns();
                    tp__step_sleep_ns(cdelay);
                    tp__step_trace_add(r, TP__SPAN_COMPUTE_DELAY, s, 0, d0, tp_now_ns());
                }
                rc = tp__step_model_step(r, sl->buf, err);
                if (rc)
                    break;
                r->ready_ns[0] = tp_now_ns();
            }
            /* the compute ends with the last slice, before its call is
             * handed over: what the comm thread does from then on is
             * exposed */
            t2 = tp_now_ns();
            if (o->overlap && k < p->n)
                tp__step_comm_post(r);
        }
        tp__step_batch_release(r, sl);
        if (rc)
            break;
        f[F_COMPUTE] = t2 - t1;
        tp__step_trace_add(r, TP__SPAN_COMPUTE, s, 0, t1, t2);
        if (!o->overlap)
            for (size_t k = 0; k < p->n; k++)
                tp__step_comm_post(r);
        uint64_t busy;
        rc = tp__step_comm_wait(r, &busy, &f[F_DELAY_COMM], err);
        if (rc)
            break;
        uint64_t t3 = tp_now_ns();
        f[F_COMM] = busy + f[F_DELAY_COMM];
        /* ready for the last synchronisation: the compute done and the comm
         * thread past its injected delay (its first call started) */
        uint64_t ready = r->bstart[0] > t2 ? r->bstart[0] : t2;
        f[F_READY] = (uint64_t)((int64_t)ready - tp_boot_clock_offset_ns(r->b, r->me));
        /* the comm the compute hid: the calls' time inside [t1, t2] */
        for (size_t k = 0; k < p->n; k++) {
            uint64_t a0 = r->bstart[k] > t1 ? r->bstart[k] : t1;
            uint64_t a1 = r->bend[k] < t2 ? r->bend[k] : t2;
            f[F_OVERLAP] += a1 > a0 ? a1 - a0 : 0;
        }
        f[F_EXPOSED] = t3 - t2;
        tp__step_trace_add(r, TP__SPAN_EXPOSED, s, 0, t2, t3);
        tp__step_real_sum(r, gs);
        tp_model_update(r->w, o->dim, gs, o->batch, o->lr);
        rc = tp__step_optimizer(r, err);
        if (rc)
            break;
        float loss = gs[gl - 1] / (float)o->batch;
        memcpy(&f[F_LOSS], &loss, sizeof loss);
        uint64_t t4 = tp_now_ns();
        tp__step_trace_add(r, TP__SPAN_UPDATE, s, 0, t3, t4);
        bool ckpt = o->ckpt_every && (s + 1) % o->ckpt_every == 0;
        if (ckpt)
            rc = tp__step_ckpt_take(r, (unsigned)((s + 1) / o->ckpt_every), err);
        uint64_t t5 = tp_now_ns();
        if (ckpt)
            tp__step_trace_add(r, TP__SPAN_CKPT, s, (uint32_t)((s + 1) / o->ckpt_every), t4, t5);
        f[F_CKPT] = t5 - t4;
        f[F_STEP] = t5 - t0;
        /* rank 0's progress line, between steps (drawn 4 times a second at most) */
        tp_progress_set((double)(r->run * o->steps + s + 1));
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
    if (pthread_create(&r->loader, NULL, tp__step_loader_main, r) != 0)
        return tp_error_errno(err, TP_ESYS, errno, "step: loader thread");
    r->loader_started = true;
    if (pthread_create(&r->comm, NULL, tp__step_comm_main, r) != 0)
        return tp_error_errno(err, TP_ESYS, errno, "step: comm thread");
    r->comm_started = true;
    if (r->o->ckpt_every && r->o->ckpt_async) {
        if (pthread_create(&r->writer, NULL, tp__step_ckpt_writer_main, r) != 0)
            return tp_error_errno(err, TP_ESYS, errno, "step: checkpoint writer thread");
        r->writer_started = true;
    }
    return 0;
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
    size_t gl = tp_model_grad_len(o->dim), words = tp_fx_words(TP_F32);
    int rc = tp__step_calls_build(r, err);
    r->local_max = o->batch / (uint64_t)r->n + 1;
    r->grad = tp_comm_alloc(c, r->count * 4);
    r->gsum = tp_comm_alloc(c, r->count * 4);
    r->fx = tp_comm_alloc(c, gl * words * 8);
    r->fx_sum = tp_comm_alloc(c, gl * words * 8);
    r->col_stride = tp__step_col_stride(r->local_max);
    if (o->reduce == TP_STEP_EXACT)
        r->cols = calloc(gl * r->col_stride, sizeof *r->cols);
    r->span = tp_comm_alloc(c, 2 * gl * sizeof *r->span);
    r->span_all = tp_comm_alloc(c, 2 * gl * sizeof *r->span_all);
    r->unit = calloc(gl, sizeof *r->unit);
    r->ints = calloc(TP_BFX_BLOCK, sizeof *r->ints);
    r->isum = tp_comm_alloc(c, gl * sizeof *r->isum);
    r->isum_all = tp_comm_alloc(c, gl * sizeof *r->isum_all);
    r->exact_sum = calloc(gl, sizeof *r->exact_sum);
    r->gather = tp_comm_alloc(c, (size_t)r->n * gl * 4);
    r->ready_ns = tp_comm_alloc(c, 8);
    r->ready_all = tp_comm_alloc(c, (size_t)r->n * 8);
    r->w = calloc(tp_model_params(o->dim), sizeof *r->w);
    r->rec = calloc(o->steps * NF, sizeof *r->rec);
    r->slots = calloc(o->prefetch, sizeof *r->slots);
    bool ok = rc == 0 && r->grad && r->gsum && r->fx && r->fx_sum && r->gather && r->span &&
              r->span_all && r->unit && r->ints && r->isum && r->isum_all && r->exact_sum &&
              (o->reduce != TP_STEP_EXACT || r->cols) &&
              r->ready_ns && r->ready_all && r->w && r->rec && r->slots;
    for (unsigned p = 0; ok && p < o->prefetch; p++) {
        if (posix_memalign((void **)&r->slots[p].buf, 4096, r->local_max * o->sample_bytes) != 0)
            ok = false;
        else
            memset(r->slots[p].buf, 0, r->local_max * o->sample_bytes);
    }
    if (!ok && rc == 0)
        rc = tp_error_set(err, TP_ENOMEM, "step: out of memory (the calls' buffers %zu"
                          " bytes each; the comm arena may be too small)", r->count * 4);
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
        rc = tp__step_data_open(r, &created, err);
    if (rc == 0 && o->ckpt_every)
        rc = tp__step_ckpt_open(r, err);
    r->have_allowed = sched_getaffinity(0, sizeof r->allowed, &r->allowed) == 0;
    if (o->pin)
        tp__step_pin(r);
    tp__step_calibrate(r);
    if (rc == 0 && o->compute_gpu)
        rc = tp__step_calibrate_gpu(r, err);
    if (rc == 0)
        rc = tp__step_comm_warmup(r, err);
    if (rc == 0)
        rc = tp__step_trace_open(r, err);
    json_t *runs = json_array();
    struct tp__step_repro repro = {.distinct = 1};
    repro.w0 = calloc(tp_model_params(o->dim), sizeof *repro.w0);
    uint64_t *all = NULL;
    json_t *timeline = NULL; /* rank 0's results.timeline */
    if (r->me == 0)
        all = calloc((size_t)r->n * o->steps * NF, sizeof *all);
    uint64_t *sendrec = rc == 0 ? tp_comm_alloc(c, o->steps * NF * 8) : NULL;
    uint64_t *recvrec = rc == 0 ? tp_comm_alloc(c, (size_t)r->n * o->steps * NF * 8) : NULL;
    if (rc == 0 && (!sendrec || !recvrec || !repro.w0 || (r->me == 0 && !all)))
        rc = tp_error_set(err, TP_ENOMEM, "step: out of memory for the records");
    tp_progress_begin(r->me == 0 && o->progress_line, "", (double)o->steps * o->runs, "steps", 0);
    for (unsigned run = 0; rc == 0 && run < o->runs; run++) {
        r->run = run;
        const char *preset = o->preset ? o->preset : "custom";
        if (o->runs > 1)
            tp_progress_what("step %s, run %u of %u", preset, run + 1, o->runs);
        else
            tp_progress_what("step %s", preset);
        memset(r->rec, 0, o->steps * NF * sizeof *r->rec);
        uint64_t origin = tp_now_ns(); /* the trace's zero: before the loader starts */
        rc = start_threads(r, err);
        uint64_t t0 = tp_now_ns();
        if (rc == 0)
            rc = train(r, err);
        uint64_t t1 = tp_now_ns();
        /* wait for an async checkpoint still being written */
        tp_error werr;
        int wrc = tp__step_ckpt_drain(r, &werr);
        if (rc == 0 && wrc) {
            rc = wrc;
            *err = werr;
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
        tp__step_repro_note(&repro, r, run, hex);
        if (r->me == 0) {
            memcpy(all, recvrec, (size_t)r->n * o->steps * NF * 8);
            json_array_append_new(runs, tp__step_run_json(r, run, hex, t1 - t0, all));
        }
        if (run == 0 && (rc = tp__step_trace_write(r, origin, &timeline, err)))
            break;
    }
    tp_progress_end();
    if (r->me == 0 && results) {
        tp__step_results(r, &repro, created, runs, results);
        if (timeline)
            json_object_set_new(results, "timeline", json_incref(timeline));
    } else {
        json_decref(runs);
    }
    json_decref(timeline);
    if (rc == 0)
        rc = tp__step_repro_check(r, &repro, err);
    stop_threads(r);
    tp__step_trace_close(r);
    tp__step_ckpt_close(r);
    tp__step_data_close(r);
    for (unsigned p = 0; r->slots && p < o->prefetch; p++)
        free(r->slots[p].buf);
    free(r->slots);
    free(r->rec);
    free(r->w);
    free(r->cols);
    free(r->unit);
    free(r->ints);
    free(r->exact_sum);
    if (o->gpu) {
        tp_gpu_free(o->gpu, r->dgrad);
        tp_gpu_free(o->gpu, r->dgsum);
    }
    free(repro.w0);
    free(all);
    tp__step_calls_free(r);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    free(r);
    return rc;
}
