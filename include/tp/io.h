/* Storage workloads: what `trainpath io` measures.
 *
 *   checkpoint  write S bytes as K shards, then commit them the way real
 *               checkpoint writers must (fdatasync every shard, metadata to a
 *               temporary file, fsync, rename, fsync the folder); over R
 *               checkpoints the commit-latency distribution, its phases and
 *               the throughput; --verify reads it back (the restore path).
 *   dataset     N records of r bytes in F files, read once per epoch in a
 *               seeded shuffled order at queue depth q on J jobs, as a data
 *               loader does; per-read latency, samples/s, epoch time; with
 *               during_ckpt, how a concurrent checkpoint degrades the reads.
 *   commit      small writes each made durable (fdatasync, fsync or O_DSYNC):
 *               the latency of one durable commit.
 *
 * Each fills a results object (even when it fails part-way: whatever was
 * measured, plus the storage description) and returns 0 or a tp code; the
 * caller turns that into the result document. */
#ifndef TP_IO_H
#define TP_IO_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "tp/error.h"
#include "tp/storage.h"

struct tp_io_common {
    struct tp_target_opts target;
    const char *engine;  /* auto, io_uring, psync */
    unsigned qd;         /* requests in flight per job */
    unsigned jobs;       /* threads */
    bool direct;         /* O_DIRECT */
    bool force;          /* allow a size beyond the free space */
    bool drop_cache;     /* drop the files' cached pages before reading them */
    uint64_t bs;         /* block size of large transfers */
    unsigned batch;      /* submit once this many requests are queued (1: each one) */
    uint64_t seed;
    uint64_t timeout_ns; /* no completion for this long fails (io_uring) */
    const char *sysfs_root;
    bool progress;       /* one log line per repeat or epoch */
};

struct tp_ckpt_opts {
    struct tp_io_common c;
    uint64_t size;   /* bytes per checkpoint */
    unsigned shards;
    unsigned repeat;
    bool verify;     /* read each checkpoint back and check its checksums */
    bool keep;       /* leave the checkpoints in place */
};

struct tp_dataset_opts {
    struct tp_io_common c;
    uint64_t records;
    uint64_t record_size;
    unsigned files;
    unsigned epochs;
    bool verify;       /* check every byte of every record, not only its header */
    bool during_ckpt;  /* after the epochs, read again while a checkpoint is written */
    struct tp_ckpt_opts ckpt; /* that checkpoint (size, shards; shares c) */
};

struct tp_commit_opts {
    struct tp_io_common c;
    uint64_t write_size;
    uint64_t count;    /* commits per job */
    uint64_t time_ns;  /* or: run this long (count is then a cap) */
    const char *sync;  /* fdatasync (default), fsync, dsync (O_DSYNC, no separate call) */
    bool overwrite;    /* lay the file out first, then overwrite it (fio's layout); default
                          appends to a fresh file, as a log does */
};

/* Run the workload; fill results. TP_EUSAGE for bad input (naming it),
 * TP_ESYS/TP_ETIMEOUT/TP_ECHECK when the storage failed or returned wrong
 * data. Files a failed run created are removed. */
int tp_io_checkpoint(const struct tp_ckpt_opts *o, json_t *results, tp_error *err);
int tp_io_dataset(const struct tp_dataset_opts *o, json_t *results, tp_error *err);
int tp_io_commit(const struct tp_commit_opts *o, json_t *results, tp_error *err);

/* A checkpoint writer for callers that checkpoint now and then (the
 * training loop of `trainpath step`): the target is checked and the
 * buffers are allocated once; each write is one checkpoint committed as
 * tp_io_checkpoint commits it (its number names its folder; the previous
 * one is removed once it committed, unless o->keep). */
struct tp_io_ckpt;
int tp_io_ckpt_open(const struct tp_ckpt_opts *o, struct tp_io_ckpt **out, tp_error *err);
/* Write and commit checkpoint number r; *commit_ns is the first write to the
 * folder fsync. Errors as tp_io_checkpoint (the partial one is removed). */
int tp_io_ckpt_write(struct tp_io_ckpt *w, unsigned r, uint64_t *commit_ns, tp_error *err);
/* Remove what the writer left (unless keep) and free it. NULL is fine. */
void tp_io_ckpt_close(struct tp_io_ckpt *w);

#endif
