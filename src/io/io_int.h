/* Internal to src/io: what the three workloads share. Non-static names here
 * are tp__io_* (the library's symbols all start with tp_). */
#ifndef TP_IO_INT_H
#define TP_IO_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "tp/hist.h"
#include "tp/io.h"
#include "tp/result.h"
#include "tp/storage.h"

#define TP__IO_HDR_MAGIC 0x7470696f68647231ull /* "tpiohdr1" */

/* The first 32 bytes of every block a workload writes: where it belongs, so
 * a read names a misplaced or stale block. */
struct tp__io_hdr {
    uint64_t magic;
    uint64_t a, b; /* workload's coordinates (shard and block; record index and 0) */
    uint64_t seed;
};

/* Open (creating when flags have O_CREAT) name under the target's folder
 * sub, or map region index of region_bytes on the device. O_DIRECT is added
 * when c->direct. Errors name the file. */
int tp__io_file_open(const struct tp_target *t, const struct tp_io_common *c, const char *sub,
                     const char *name, unsigned region, uint64_t region_bytes, int flags,
                     struct tp_io_file *f, tp_error *err);
/* Open the file at path (a folder's file, f->bytes = bytes), adding O_CLOEXEC
 * and O_DIRECT when direct. TP_EUSAGE when the filesystem refuses O_DIRECT,
 * else TP_ESYS, naming the file. */
int tp__io_file_open_path(const char *path, int flags, bool direct, uint64_t bytes,
                          struct tp_io_file *f, tp_error *err);

/* Create DIR/sub (and remove what a previous run left in it when fresh). */
int tp__io_mkdir(const struct tp_target *t, const char *sub, bool fresh, tp_error *err);
/* Remove DIR/sub and the files in it (no-op on a device). */
void tp__io_rmdir(const struct tp_target *t, const char *sub);

/* n buffers of bytes each, aligned for O_DIRECT, filled with seeded
 * patterns (touched, so first-touch faults stay out of the timing). */
void **tp__io_bufs_alloc(unsigned n, size_t bytes, uint32_t align, uint64_t seed);
void tp__io_bufs_free(void **bufs, unsigned n);

/* Statistics of h in ns, as every io result reports latency. */
json_t *tp__io_lat_json(const tp_hist *h);

/* Round up to a multiple of a. */
static inline uint64_t tp__io_round_up(uint64_t v, uint64_t a)
{
    return a ? (v + a - 1) / a * a : v;
}

/* Open the workload's target and put its "storage" and "target" blocks in
 * results. Errors as tp_target_open. */
int tp__io_open_target(const struct tp_io_common *c, struct tp_target *t, json_t *results,
                       tp_error *err);

/* Run fn(arg + i*stride) on n threads and wait for all. Returns the first
 * non-zero return value. */
int tp__io_run_jobs(unsigned n, void *(*fn)(void *), void *arg, size_t stride, tp_error *err);

/* One checkpoint writer, used by the checkpoint workload and by dataset's
 * during-checkpoint phase. */
struct tp__io_ckpt_phases {
    uint64_t write_ns, sync_ns, meta_ns, commit_ns; /* commit: first write to folder fsync */
    uint64_t bytes;
};
struct tp__io_ckpt_ctx;
int tp__io_ckpt_prepare(const struct tp_ckpt_opts *o, const struct tp_target *t,
                        struct tp__io_ckpt_ctx **out, tp_error *err);
/* Write and commit checkpoint number r. On failure its files are removed. */
int tp__io_ckpt_write(struct tp__io_ckpt_ctx *x, unsigned r, struct tp__io_ckpt_phases *ph,
                      tp_error *err);
void tp__io_ckpt_free(struct tp__io_ckpt_ctx *x);

/* Page cache: fraction of the files' pages cached, by mincore (-1 unknown;
 * a device region is unknown). */
double tp__io_cached_fraction(const struct tp_io_file *f, unsigned n);
/* Ask the kernel to drop the files' clean cached pages. */
void tp__io_drop_cache(const struct tp_io_file *f, unsigned n);

/* table.c: each workload's table of its results (the rows' print). */
void tp__io_print_checkpoint(FILE *f, const struct tp_io_opts *o, const json_t *r);
void tp__io_print_dataset(FILE *f, const struct tp_io_opts *o, const json_t *r);
void tp__io_print_commit(FILE *f, const struct tp_io_opts *o, const json_t *r);
void tp__io_print_info(FILE *f, const struct tp_io_opts *o, const json_t *r);

#endif
