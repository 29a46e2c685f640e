/* io_uring engine through liburing, as fio's io_uring engine: one ring per
 * queue, the queue's buffers registered (READ_FIXED/WRITE_FIXED, no page
 * pinning per request) and its files registered (no fd lookup per request).
 * Either registration may be refused (RLIMIT_MEMLOCK, old kernels): the
 * engine then runs unregistered and tp_ioq_info says so. */
#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "engine_int.h"
#include "tp/clock.h"

struct uring {
    struct io_uring ring;
    unsigned queued; /* sqes prepared and not yet submitted */
};

static int u_init(struct tp_ioq *q, tp_error *err)
{
    struct uring *u = calloc(1, sizeof *u);
    if (!u)
        return tp_error_set(err, TP_ENOMEM, "io_uring: out of memory");
    /* one thread submits and reaps: let the kernel skip cross-thread work */
    int rc = io_uring_queue_init(q->o.depth, &u->ring,
                                 IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN);
    if (rc == -EINVAL)
        rc = io_uring_queue_init(q->o.depth, &u->ring, 0);
    if (rc < 0) {
        free(u);
        return tp_error_errno(err, TP_EUNSUP, -rc, "io_uring unavailable (kernel.io_uring_disabled, "
                                                    "seccomp or an old kernel)");
    }
    if (q->o.nfds > 0 && io_uring_register_files(&u->ring, q->o.fds, q->o.nfds) == 0)
        q->fixed_files = true;
    if (q->o.nbufs > 0) {
        struct iovec *iov = calloc(q->o.nbufs, sizeof *iov);
        if (iov) {
            for (unsigned i = 0; i < q->o.nbufs; i++)
                iov[i] = (struct iovec){q->o.bufs[i], q->o.buf_bytes};
            if (io_uring_register_buffers(&u->ring, iov, q->o.nbufs) == 0)
                q->registered_buffers = true;
            free(iov);
        }
    }
    q->priv = u;
    return 0;
}

static int u_submit(struct tp_ioq *q, tp_error *err)
{
    struct uring *u = q->priv;
    while (u->queued > 0) {
        int rc = io_uring_submit(&u->ring);
        if (rc == -EINTR || rc == -EAGAIN || rc == -EBUSY)
            continue;
        if (rc < 0)
            return tp_error_errno(err, TP_ESYS, -rc, "io_uring_submit");
        u->queued -= (unsigned)rc < u->queued ? (unsigned)rc : u->queued;
        if (rc == 0)
            break;
    }
    return 0;
}

static int u_queue(struct tp_ioq *q, const struct tp_io_req *r, unsigned slot, tp_error *err)
{
    struct uring *u = q->priv;
    struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
    if (!sqe) {
        int rc = u_submit(q, err);
        if (rc)
            return rc;
        sqe = io_uring_get_sqe(&u->ring);
        if (!sqe)
            return tp_error_set(err, TP_ESYS, "io_uring: submission queue full");
    }
    int fd = q->fixed_files ? (int)r->file : q->o.fds[r->file];
    char *buf = r->kind <= TP_IO_WRITE ? (char *)q->o.bufs[r->buf] + r->buf_off : NULL;
    switch (r->kind) {
    case TP_IO_READ:
        if (q->registered_buffers)
            io_uring_prep_read_fixed(sqe, fd, buf, r->len, r->off, (int)r->buf);
        else
            io_uring_prep_read(sqe, fd, buf, r->len, r->off);
        break;
    case TP_IO_WRITE:
        if (q->registered_buffers)
            io_uring_prep_write_fixed(sqe, fd, buf, r->len, r->off, (int)r->buf);
        else
            io_uring_prep_write(sqe, fd, buf, r->len, r->off);
        break;
    case TP_IO_FSYNC:
        io_uring_prep_fsync(sqe, fd, 0);
        break;
    default:
        io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
        break;
    }
    if (q->fixed_files)
        sqe->flags |= IOSQE_FIXED_FILE;
    if (r->flags & TP_IO_LINK)
        sqe->flags |= IOSQE_IO_LINK;
    io_uring_sqe_set_data64(sqe, slot);
    u->queued++;
    return 0;
}

static int u_reap(struct tp_ioq *q, unsigned *slot, int64_t *res, uint64_t *start_ns,
                  uint64_t *end_ns, unsigned max, unsigned min, tp_error *err)
{
    struct uring *u = q->priv;
    struct io_uring_cqe *cqe;
    if (min > 0) {
        for (;;) {
            int rc;
            if (q->o.timeout_ns) {
                struct __kernel_timespec ts = {(long long)(q->o.timeout_ns / 1000000000u),
                                               (long long)(q->o.timeout_ns % 1000000000u)};
                rc = io_uring_wait_cqes(&u->ring, &cqe, min, &ts, NULL);
            } else
                rc = io_uring_wait_cqe_nr(&u->ring, &cqe, min);
            if (rc == -EINTR)
                continue;
            if (rc == -ETIME)
                return tp_error_set(err, TP_ETIMEOUT, "no I/O completed within %.0f s",
                                    (double)q->o.timeout_ns / 1e9);
            if (rc < 0)
                return tp_error_errno(err, TP_ESYS, -rc, "io_uring wait");
            break;
        }
    }
    struct io_uring_cqe *cqes[64];
    unsigned n = io_uring_peek_batch_cqe(&u->ring, cqes, max < 64 ? max : 64);
    for (unsigned i = 0; i < n; i++) {
        slot[i] = (unsigned)io_uring_cqe_get_data64(cqes[i]);
        res[i] = cqes[i]->res;
        start_ns[i] = 0;
        end_ns[i] = 0;
    }
    io_uring_cq_advance(&u->ring, n);
    return (int)n;
}

static void u_fini(struct tp_ioq *q)
{
    struct uring *u = q->priv;
    /* the ring's own references to registered files go only when its
     * teardown ends, after this returns: drop them now, so a caller that
     * closes and unlinks its files right after (a failed checkpoint) does
     * not unlink files still open (NFS and FUSE keep those as hidden
     * files, and the folder cannot be removed) */
    if (q->fixed_files)
        io_uring_unregister_files(&u->ring);
    io_uring_queue_exit(&u->ring);
    free(u);
}

const struct tp_io_engine_ops tp_engine_uring = {
    .name = "io_uring",
    .init = u_init,
    .queue = u_queue,
    .submit = u_submit,
    .reap = u_reap,
    .fini = u_fini,
};
