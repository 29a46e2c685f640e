/* Checkpoints of `trainpath step`: every K steps each rank writes its share
 * of ckpt_bytes through io's checkpoint writer (tp/io.h), committed as
 * `trainpath io checkpoint` commits one. Synchronous, the step stalls for the
 * commit; with --ckpt-async it stalls only for the snapshot copy (and for a
 * previous checkpoint still being written) while a background writer
 * commits, as an asynchronous checkpointer copies device to host. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "step_int.h"
#include "tp/clock.h"

void *tp__step_ckpt_writer_main(void *arg)
{
    struct rank *r = arg;
    tp__step_unpin(r);
    pthread_mutex_lock(&r->mu);
    for (;;) {
        while (!r->writer_quit && !r->writer_busy)
            pthread_cond_wait(&r->cv, &r->mu);
        if (r->writer_quit && !r->writer_busy)
            break;
        unsigned n = (unsigned)r->writer_req;
        pthread_mutex_unlock(&r->mu);
        uint64_t ns, w0 = tp_now_ns();
        int rc = tp_io_ckpt_write(r->ckpt, n, &ns, &r->writer_err);
        tp__step_trace_add(r, TP__SPAN_CKPT_WRITE, n * r->o->ckpt_every - 1, n, w0, tp_now_ns());
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
int tp__step_ckpt_take(struct rank *r, unsigned n, tp_error *err)
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

static void ckpt_dir(const struct rank *r, char *out, size_t cap)
{
    snprintf(out, cap, "%s/" STEP_SUB "/ckpt-rank%d", r->o->dir, r->me);
}

int tp__step_ckpt_open(struct rank *r, tp_error *err)
{
    const struct tp_step_opts *o = r->o;
    char dir[4200], sub[4200];
    ckpt_dir(r, dir, sizeof dir);
    /* DIR/STEP_SUB first: without the dataset (--no-io) nothing made it */
    snprintf(sub, sizeof sub, "%s/" STEP_SUB, o->dir);
    int rc = 0;
    if (mkdir(sub, 0755) != 0 && errno != EEXIST)
        rc = tp_error_errno(err, TP_ESYS, errno, "step checkpoints: %s", sub);
    if (rc == 0 && mkdir(dir, 0755) != 0 && errno != EEXIST)
        rc = tp_error_errno(err, TP_ESYS, errno, "step checkpoints: %s", dir);
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
            rc = tp_error_set(err, TP_ENOMEM, "step: checkpoint snapshot of %" PRIu64 " bytes",
                              co.size);
        else
            memset(r->snapshot, 1, 2 * co.size); /* touched before anything is timed */
    }
    return rc;
}

int tp__step_ckpt_drain(struct rank *r, tp_error *err)
{
    pthread_mutex_lock(&r->mu);
    while (r->writer_started && r->writer_busy)
        pthread_cond_wait(&r->cv, &r->mu);
    int rc = r->writer_rc;
    pthread_mutex_unlock(&r->mu);
    if (rc)
        *err = r->writer_err;
    return rc;
}

void tp__step_ckpt_close(struct rank *r)
{
    tp_io_ckpt_close(r->ckpt);
    if (r->ckpt) {
        char dir[4200];
        ckpt_dir(r, dir, sizeof dir);
        rmdir(dir);
    }
    r->ckpt = NULL;
    free(r->snapshot);
    r->snapshot = NULL;
}
