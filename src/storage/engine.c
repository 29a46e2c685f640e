/* The I/O queue: slots, timing and short transfers, over a table of engines.
 * An engine only queues, submits and reaps; everything a workload relies on
 * (a request is reported once, whole or failed; its latency is push to
 * completion) is here, so every engine behaves the same. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_int.h"
#include "tp/clock.h"

static const struct tp_io_engine_ops *const engines[] = {&tp_engine_uring, &tp_engine_psync};

/* TP_IO_TRACE=FILE appends one line per request pushed and completed
 * ("push|done KIND fd OFF LEN RES NS"): the ordering tests read it to check
 * that no sync was pushed before the writes it covers had completed. */
static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *trace_file;
static int trace_state; /* 0 unknown, 1 on, -1 off */

static void trace(const char *what, const struct tp_ioq *q, const struct tp_io_req *r, int64_t res,
                  uint64_t ns)
{
    static const char *const kinds[] = {"read", "write", "fsync", "fdatasync"};
    if (__atomic_load_n(&trace_state, __ATOMIC_ACQUIRE) < 0)
        return; /* the common case: one load, no lock */
    pthread_mutex_lock(&trace_lock);
    if (trace_state == 0) {
        const char *path = getenv("TP_IO_TRACE");
        trace_file = path && path[0] ? fopen(path, "a") : NULL;
        __atomic_store_n(&trace_state, trace_file ? 1 : -1, __ATOMIC_RELEASE);
    }
    if (trace_file) {
        fprintf(trace_file, "%s %s %d %llu %u %lld %llu\n", what, kinds[r->kind & 3],
                q->o.fds[r->file], (unsigned long long)r->off, r->len, (long long)res,
                (unsigned long long)ns);
        fflush(trace_file);
    }
    pthread_mutex_unlock(&trace_lock);
}

static int open_with(const struct tp_io_engine_ops *ops, const struct tp_ioq_opts *o,
                     struct tp_ioq **out, tp_error *err)
{
    struct tp_ioq *q = calloc(1, sizeof *q);
    if (!q)
        return tp_error_set(err, TP_ENOMEM, "io queue: out of memory");
    q->ops = ops;
    q->o = *o;
    q->slots = calloc(o->depth, sizeof *q->slots);
    q->free_slots = calloc(o->depth, sizeof *q->free_slots);
    if (!q->slots || !q->free_slots) {
        free(q->slots);
        free(q->free_slots);
        free(q);
        return tp_error_set(err, TP_ENOMEM, "io queue: out of memory");
    }
    for (unsigned i = 0; i < o->depth; i++)
        q->free_slots[i] = o->depth - 1 - i;
    q->nfree = o->depth;
    int rc = ops->init(q, err);
    if (rc) {
        free(q->slots);
        free(q->free_slots);
        free(q);
        return rc;
    }
    *out = q;
    return 0;
}

int tp_ioq_engine_check(const char *name, tp_error *err)
{
    if (strcmp(name, "auto") == 0)
        return 0;
    char list[128] = "auto";
    size_t used = strlen(list), n = sizeof engines / sizeof engines[0];
    for (size_t i = 0; i < n; i++) {
        if (strcmp(name, engines[i]->name) == 0)
            return 0;
        used += (size_t)snprintf(list + used, used < sizeof list ? sizeof list - used : 0, "%s%s",
                                 i + 1 < n ? ", " : " or ", engines[i]->name);
    }
    return tp_error_set(err, TP_EUSAGE, "--engine %s: %s", name, list);
}

int tp_ioq_open(const struct tp_ioq_opts *o, struct tp_ioq **out, tp_error *err)
{
    tp_clock_init();
    if (o->depth < 1 || o->depth > 4096)
        return tp_error_set(err, TP_EUSAGE, "queue depth %u: must be 1..4096", o->depth);
    const char *name = o->engine ? o->engine : "auto";
    if (strcmp(name, "auto") == 0) {
        tp_error e2;
        if (open_with(&tp_engine_uring, o, out, &e2) == 0)
            return 0;
        return open_with(&tp_engine_psync, o, out, err);
    }
    for (size_t i = 0; i < sizeof engines / sizeof engines[0]; i++)
        if (strcmp(name, engines[i]->name) == 0)
            return open_with(engines[i], o, out, err);
    return tp_error_set(err, TP_EUSAGE, "--engine %s: unknown (auto, io_uring, psync)", name);
}

int tp_ioq_push(struct tp_ioq *q, const struct tp_io_req *r, tp_error *err)
{
    if (q->nfree == 0)
        return tp_error_set(err, TP_EBUSY, "io queue full (%u in flight)", q->o.depth);
    if (r->file >= q->o.nfds || ((r->kind == TP_IO_READ || r->kind == TP_IO_WRITE) &&
                                 (r->buf >= q->o.nbufs ||
                                  (size_t)r->buf_off + r->len > q->o.buf_bytes)))
        return tp_error_set(err, TP_EUSAGE, "io request names file %u buffer %u [%u+%u]: out of range",
                            r->file, r->buf, r->buf_off, r->len);
    unsigned slot = q->free_slots[--q->nfree];
    struct ioq_slot *s = &q->slots[slot];
    s->req = *r;
    s->done = 0;
    s->start_ns = 0;
    s->push_ns = tp_now_ns();
    trace("push", q, r, 0, s->push_ns);
    int rc = q->ops->queue(q, r, slot, err);
    if (rc) {
        q->free_slots[q->nfree++] = slot;
        return rc;
    }
    q->inflight++;
    if (q->o.submit_batch && ++q->queued >= q->o.submit_batch)
        return tp_ioq_submit(q, err);
    return 0;
}

int tp_ioq_submit(struct tp_ioq *q, tp_error *err)
{
    q->queued = 0;
    return q->ops->submit(q, err);
}

/* A completion for slot: finished (stored in *d, returns 1), or the rest of a
 * short transfer queued again (returns 0), or an error queuing it (< 0). */
static int complete(struct tp_ioq *q, unsigned slot, int64_t res, uint64_t start_ns,
                    uint64_t end_ns, struct tp_io_done *d, bool *resubmit, tp_error *err)
{
    struct ioq_slot *s = &q->slots[slot];
    if (start_ns && !s->start_ns)
        s->start_ns = start_ns;
    bool xfer = s->req.kind == TP_IO_READ || s->req.kind == TP_IO_WRITE;
    if (xfer && res >= 0) {
        if (res == 0 && s->req.kind == TP_IO_WRITE)
            res = -EIO; /* a write that makes no progress would loop forever */
        else if (res > 0 && (uint64_t)res < s->req.len) {
            s->done += res;
            s->req.off += (uint64_t)res;
            s->req.buf_off += (uint32_t)res;
            s->req.len -= (uint32_t)res;
            int rc = q->ops->queue(q, &s->req, slot, err);
            if (rc)
                return rc;
            *resubmit = true;
            return 0;
        } else
            res += s->done; /* whole, or a read that reached end of file */
    }
    trace("done", q, &s->req, res, end_ns);
    d->tag = s->req.tag;
    d->res = res;
    d->end_ns = end_ns;
    uint64_t t0 = s->start_ns ? s->start_ns : s->push_ns;
    d->lat_ns = end_ns > t0 ? end_ns - t0 : 0;
    q->free_slots[q->nfree++] = slot;
    q->inflight--;
    return 1;
}

int tp_ioq_reap(struct tp_ioq *q, struct tp_io_done *out, unsigned max, unsigned min,
                tp_error *err)
{
    enum { BATCH = 64 };
    unsigned slot[BATCH];
    int64_t res[BATCH];
    uint64_t start[BATCH], end[BATCH];
    unsigned got = 0;
    if (min > q->inflight)
        min = q->inflight;
    if (max > q->inflight)
        max = q->inflight;
    while (got < max) {
        unsigned want = min > got ? min - got : 0;
        unsigned cap = max - got < BATCH ? max - got : BATCH;
        if (want > cap)
            want = cap;
        int n = q->ops->reap(q, slot, res, start, end, cap, want, err);
        if (n < 0)
            return n;
        if (n == 0)
            break;
        uint64_t now = tp_now_ns();
        bool resubmit = false;
        for (int i = 0; i < n; i++) {
            int rc = complete(q, slot[i], res[i], start[i], end[i] ? end[i] : now, &out[got],
                              &resubmit, err);
            if (rc < 0)
                return rc;
            got += (unsigned)rc;
        }
        if (resubmit) {
            int rc = tp_ioq_submit(q, err);
            if (rc)
                return rc;
        }
        if (got >= min && want == 0)
            break;
    }
    return (int)got;
}

unsigned tp_ioq_inflight(const struct tp_ioq *q)
{
    return q->inflight;
}

const char *tp_ioq_engine(const struct tp_ioq *q)
{
    return q->ops->name;
}

json_t *tp_ioq_info(const struct tp_ioq *q)
{
    return json_pack("{s:s, s:I, s:b, s:b}", "engine", q->ops->name, "depth",
                     (json_int_t)q->o.depth, "registered_buffers", q->registered_buffers,
                     "fixed_files", q->fixed_files);
}

void tp_ioq_close(struct tp_ioq *q)
{
    if (!q)
        return;
    /* the kernel may still write into the caller's buffers: drain first */
    struct tp_io_done d[64];
    tp_error e;
    while (q->inflight > 0 && tp_ioq_reap(q, d, 64, 1, &e) > 0) {
    }
    q->ops->fini(q);
    free(q->slots);
    free(q->free_slots);
    free(q);
}
