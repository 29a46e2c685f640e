/* psync engine: pread/pwrite/fsync/fdatasync, one call at a time, as fio's
 * psync. The queue depth only bounds how many requests wait; they run in
 * push order when submitted, and each one's latency is its own call (not
 * the time it waited behind the others). A link is honoured: the request
 * after a failed linked one is cancelled, as io_uring does. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "engine_int.h"
#include "tp/clock.h"

struct psync {
    unsigned *pend, npend;           /* slots queued, in order */
    unsigned *done_slot, ndone, head; /* completions ready, FIFO */
    int64_t *done_res;
    uint64_t *done_start, *done_end;
};

static int p_init(struct tp_ioq *q, tp_error *err)
{
    struct psync *p = calloc(1, sizeof *p);
    unsigned d = q->o.depth;
    if (p) {
        p->pend = calloc(d, sizeof *p->pend);
        p->done_slot = calloc(d, sizeof *p->done_slot);
        p->done_res = calloc(d, sizeof *p->done_res);
        p->done_start = calloc(d, sizeof *p->done_start);
        p->done_end = calloc(d, sizeof *p->done_end);
    }
    if (!p || !p->pend || !p->done_slot || !p->done_res || !p->done_start ||
        !p->done_end) {
        if (p) {
            free(p->pend);
            free(p->done_slot);
            free(p->done_res);
            free(p->done_start);
            free(p->done_end);
        }
        free(p);
        return tp_error_set(err, TP_ENOMEM, "psync: out of memory");
    }
    q->priv = p;
    return 0;
}

static int p_queue(struct tp_ioq *q, const struct tp_io_req *r, unsigned slot, tp_error *err)
{
    (void)r;
    (void)err;
    struct psync *p = q->priv;
    p->pend[p->npend++] = slot;
    return 0;
}

static int64_t run_one(const struct tp_ioq *q, const struct tp_io_req *r)
{
    int fd = q->o.fds[r->file];
    char *buf = r->kind <= TP_IO_WRITE ? (char *)q->o.bufs[r->buf] + r->buf_off : NULL;
    ssize_t n;
    do {
        switch (r->kind) {
        case TP_IO_READ: n = pread(fd, buf, r->len, (off_t)r->off); break;
        case TP_IO_WRITE: n = pwrite(fd, buf, r->len, (off_t)r->off); break;
        case TP_IO_FSYNC: n = fsync(fd); break;
        default: n = fdatasync(fd); break;
        }
    } while (n < 0 && errno == EINTR);
    return n < 0 ? -(int64_t)errno : (int64_t)n;
}

static int p_submit(struct tp_ioq *q, tp_error *err)
{
    (void)err;
    struct psync *p = q->priv;
    bool cancel = false;
    for (unsigned i = 0; i < p->npend; i++) {
        unsigned slot = p->pend[i];
        const struct tp_io_req *r = &q->slots[slot].req;
        uint64_t t0 = tp_now_ns();
        int64_t res = cancel ? -ECANCELED : run_one(q, r);
        bool short_xfer = r->kind <= TP_IO_WRITE && res >= 0 && (uint64_t)res < r->len;
        cancel = (r->flags & TP_IO_LINK) && (res < 0 || short_xfer);
        unsigned at = (p->head + p->ndone) % q->o.depth;
        p->done_slot[at] = slot;
        p->done_res[at] = res;
        p->done_start[at] = t0;
        p->done_end[at] = tp_now_ns();
        p->ndone++;
    }
    p->npend = 0;
    return 0;
}

static int p_reap(struct tp_ioq *q, unsigned *slot, int64_t *res, uint64_t *start_ns,
                  uint64_t *end_ns, unsigned max, unsigned min, tp_error *err)
{
    struct psync *p = q->priv;
    if (p->ndone < min && p->npend > 0)
        p_submit(q, err);
    unsigned n = 0;
    while (n < max && p->ndone > 0) {
        slot[n] = p->done_slot[p->head];
        res[n] = p->done_res[p->head];
        start_ns[n] = p->done_start[p->head];
        end_ns[n] = p->done_end[p->head];
        p->head = (p->head + 1) % q->o.depth;
        p->ndone--;
        n++;
    }
    return (int)n;
}

static void p_fini(struct tp_ioq *q)
{
    struct psync *p = q->priv;
    free(p->pend);
    free(p->done_slot);
    free(p->done_res);
    free(p->done_start);
    free(p->done_end);
    free(p);
}

const struct tp_io_engine_ops tp_engine_psync = {
    .name = "psync",
    .init = p_init,
    .queue = p_queue,
    .submit = p_submit,
    .reap = p_reap,
    .fini = p_fini,
};
