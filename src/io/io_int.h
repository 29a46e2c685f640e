/* Internal to src/io: what the three workloads share. */
#ifndef TP_IO_INT_H
#define TP_IO_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "tp/hist.h"
#include "tp/io.h"
#include "tp/result.h"
#include "tp/storage.h"

/* One file of a workload: a real file in the target folder, or a region of
 * the raw device (fd shared, offsets shifted by base). */
struct io_file {
    int fd;
    bool own_fd; /* close it (folder); a device region borrows the device's fd */
    uint64_t base;
    uint64_t bytes;
    char path[4352]; /* for messages: the file, or "DEV@offset" */
};

#define IO_HDR_MAGIC 0x7470696f68647231ull /* "tpiohdr1" */

/* The first 32 bytes of every block a workload writes: where it belongs, so
 * a read names a misplaced or stale block. */
struct io_hdr {
    uint64_t magic;
    uint64_t a, b; /* workload's coordinates (shard and block; record index and 0) */
    uint64_t seed;
};

/* Open (creating when flags have O_CREAT) name under the target's folder
 * sub, or map region index of region_bytes on the device. O_DIRECT is added
 * when c->direct. Errors name the file. */
int io_file_open(const struct tp_target *t, const struct tp_io_common *c, const char *sub,
                 const char *name, unsigned region, uint64_t region_bytes, int flags,
                 struct io_file *f, tp_error *err);
void io_file_close(struct io_file *f);

/* Create DIR/sub (and remove what a previous run left in it when fresh). */
int io_mkdir(const struct tp_target *t, const char *sub, bool fresh, tp_error *err);
/* Remove DIR/sub and the files in it (no-op on a device). */
void io_rmdir(const struct tp_target *t, const char *sub);

/* n buffers of bytes each, aligned for O_DIRECT, filled with seeded
 * patterns (touched, so first-touch faults stay out of the timing). */
void **io_bufs_alloc(unsigned n, size_t bytes, uint32_t align, uint64_t seed);
void io_bufs_free(void **bufs, unsigned n);

/* Statistics of h in ns, as every io result reports latency. */
json_t *io_lat_json(const tp_hist *h);

/* Round up to a multiple of a. */
static inline uint64_t io_round_up(uint64_t v, uint64_t a)
{
    return a ? (v + a - 1) / a * a : v;
}

/* Open the workload's target and put its "storage" and "target" blocks in
 * results. Errors as tp_target_open. */
int io_open_target(const struct tp_io_common *c, struct tp_target *t, json_t *results,
                   tp_error *err);

/* Run fn(arg + i*stride) on n threads and wait for all. Returns the first
 * non-zero return value. */
int io_run_jobs(unsigned n, void *(*fn)(void *), void *arg, size_t stride, tp_error *err);

/* One checkpoint writer, used by the checkpoint workload and by dataset's
 * during-checkpoint phase. */
struct ckpt_phases {
    uint64_t write_ns, sync_ns, meta_ns, commit_ns; /* commit: first write to folder fsync */
    uint64_t bytes;
};
struct ckpt_ctx;
int ckpt_prepare(const struct tp_ckpt_opts *o, const struct tp_target *t, struct ckpt_ctx **out,
                 tp_error *err);
/* Write and commit checkpoint number r. On failure its files are removed. */
int ckpt_write(struct ckpt_ctx *x, unsigned r, struct ckpt_phases *ph, tp_error *err);
void ckpt_free(struct ckpt_ctx *x);

/* Page cache: fraction of the files' pages cached, by mincore (-1 unknown;
 * a device region is unknown). */
double io_cached_fraction(const struct io_file *f, unsigned n);
/* Ask the kernel to drop the files' clean cached pages. */
void io_drop_cache(const struct io_file *f, unsigned n);

#endif
