/* Storage I/O engines and targets: the layer `trainpath io` (and later
 * `step`) builds its workloads on.
 *
 * An I/O queue (tp_ioq) keeps up to `depth` requests in flight on one thread
 * and reports each completion with its latency. Engines are a table of small
 * ops structs, one file each, as fio's engines/: io_uring through liburing
 * (registered buffers, fixed files) and psync (pread/pwrite, one at a time)
 * where io_uring is unavailable. The queue layer above the engines finishes
 * short transfers (resubmitting the rest), so a workload sees a request
 * either done in full or failed with its errno.
 *
 * Ordering: io_uring runs the requests of one submission in any order.
 * Workloads order a sync after the writes it covers either by waiting for
 * those writes to complete before pushing the sync (the checkpoint's commit)
 * or by linking the sync to its write (TP_IO_LINK, the commit workload); see
 * docs/storage.md.
 *
 * A target is where the workload's files live: a folder, or a raw block
 * device split into regions (destructive, refused unless explicitly allowed,
 * and refused when mounted or holding a partition table or a filesystem). */
#ifndef TP_STORAGE_H
#define TP_STORAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "tp/error.h"

enum tp_io_kind { TP_IO_READ, TP_IO_WRITE, TP_IO_FSYNC, TP_IO_FDATASYNC };

/* flags of a request */
#define TP_IO_LINK 1u /* the next request pushed starts only after this one succeeds */

struct tp_io_req {
    uint8_t kind;     /* enum tp_io_kind */
    uint8_t flags;    /* TP_IO_LINK */
    uint16_t file;    /* index into the queue's files */
    uint32_t buf;     /* index of the queue's buffer (reads and writes) */
    uint32_t buf_off; /* offset into that buffer */
    uint32_t len;     /* bytes (reads and writes) */
    uint64_t off;     /* file offset */
    uint64_t tag;     /* the caller's, returned with the completion */
};

struct tp_io_done {
    uint64_t tag;
    int64_t res;     /* bytes transferred (== len unless a read hit end of file), or -errno */
    uint64_t lat_ns; /* push to completion (psync: start of the call to its return) */
    uint64_t end_ns; /* tp_now_ns() when the completion was seen */
};

struct tp_ioq_opts {
    const char *engine;   /* "auto" (io_uring when the kernel allows it, else psync), "io_uring", "psync" */
    unsigned depth;       /* requests in flight, 1..4096 */
    const int *fds;       /* files the requests name by index */
    unsigned nfds;
    void *const *bufs;    /* buffers the requests name by index (registered with io_uring) */
    unsigned nbufs;
    size_t buf_bytes;     /* size of each buffer */
    unsigned submit_batch; /* push hands requests to the kernel once this many are queued:
                              1 submits each as it is pushed (fio's iodepth_batch_submit=1,
                              a steady stream); 0 waits for tp_ioq_submit */
    uint64_t timeout_ns;  /* io_uring: a wait that sees no completion for this long fails
                             with TP_ETIMEOUT (0: wait forever); psync calls cannot be bounded */
};

struct tp_ioq;

/* Whether name is an engine --engine takes: "auto" or one of the table's
 * (io_uring, psync). 0, or TP_EUSAGE "--engine NAME: auto, io_uring or
 * psync" (the list from the table). */
int tp_ioq_engine_check(const char *name, tp_error *err);

/* Open a queue. Errors: TP_EUSAGE for an unknown engine name, TP_EUNSUP when
 * io_uring was asked for and the kernel refuses it, TP_ENOMEM. */
int tp_ioq_open(const struct tp_ioq_opts *o, struct tp_ioq **out, tp_error *err);

/* Queue one request; at most depth may be in flight (pushed, not reaped).
 * TP_EBUSY when full. Nothing reaches the kernel before tp_ioq_submit. */
int tp_ioq_push(struct tp_ioq *q, const struct tp_io_req *r, tp_error *err);

/* Submit what was pushed. */
int tp_ioq_submit(struct tp_ioq *q, tp_error *err);

/* Wait for at least min completions (0: take what is there), store up to max
 * in out. Returns the number stored or a negative code. Short transfers are
 * resubmitted and reported only when whole; a read at end of file reports
 * the bytes it got. */
int tp_ioq_reap(struct tp_ioq *q, struct tp_io_done *out, unsigned max, unsigned min,
                tp_error *err);

/* Requests pushed and not yet reaped. */
unsigned tp_ioq_inflight(const struct tp_ioq *q);

/* {"engine","depth","registered_buffers","fixed_files"}: how the queue runs. */
json_t *tp_ioq_info(const struct tp_ioq *q);

const char *tp_ioq_engine(const struct tp_ioq *q);

/* Wait for everything in flight (bounded by their own completion), then free. */
void tp_ioq_close(struct tp_ioq *q);

/* ---- targets ---- */

struct tp_target {
    bool is_device;
    char path[4096];         /* the folder, or the device node */
    int dev_fd;              /* device: opened O_RDWR|O_EXCL (and O_DIRECT when asked) */
    uint64_t dev_bytes;      /* device size */
    uint32_t dio_mem_align;  /* O_DIRECT buffer alignment */
    uint32_t dio_off_align;  /* O_DIRECT offset and length alignment */
    const char *align_source; /* "statx" or "logical_block_size" */
};

struct tp_target_opts {
    const char *dir;       /* a folder; or */
    const char *device;    /* a raw block device (destroys its data) */
    bool destroy_data;     /* required with device */
    bool direct;           /* open the device with O_DIRECT */
    const char *sysfs_root; /* NULL: /sys (alignment fallback) */
};

/* Check and open the target. A folder must exist and be writable; a device
 * must be a block device, destroy_data must be set, and it must not be
 * mounted or held (opened O_EXCL), nor carry a partition table or a
 * filesystem signature (libblkid). Errors are TP_EUSAGE naming the path. */
int tp_target_open(const struct tp_target_opts *o, struct tp_target *t, tp_error *err);

/* Bytes the workload may write: free space of the folder's filesystem
 * (statvfs f_bavail) or the device size. */
uint64_t tp_target_space(const struct tp_target *t);

void tp_target_close(struct tp_target *t);

/* Fraction (0..1) of the file's pages in the page cache (mincore over a
 * read-only mapping); -1 when it cannot be told (empty file, mmap refused). */
double tp_file_cached_fraction(int fd, uint64_t bytes);

#endif
