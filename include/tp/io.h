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
#include <stdio.h>

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
    bool progress_line;  /* the progress line on stderr (tp/progress.h) */
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

/* `trainpath io` as one call (src/io/workload.c): a workload is a row of a
 * table (checkpoint, dataset, commit, info) with the options it takes, its
 * defaults, its config block, its run and its table. */
struct tp_io_workload;

/* One invocation's options, whichever workload it runs; each workload's
 * tp_*_opts gets c copied in when it runs. The defaults are those of the
 * option rows of `trainpath io` (src/cli/io_cmd.c), where each option is
 * declared once. */
struct tp_io_opts {
    const struct tp_io_workload *w;
    struct tp_io_common c;
    struct tp_ckpt_opts ck;    /* checkpoint; dataset's --during takes its size and shards */
    struct tp_dataset_opts ds; /* dataset */
    struct tp_commit_opts cm;  /* commit */
    const char *path;          /* DIR, or info's PATH */
    const char *mountinfo;     /* info: this file instead of /proc/self/mountinfo */
    bool have_qd;              /* c.qd was given (else the workload's default) */
};

/* The workload named name (checkpoint, dataset, commit, info), or NULL. */
const struct tp_io_workload *tp_io_workload(const char *name);
/* Its name, as the CLI and the config document spell it. */
const char *tp_io_workload_name(const struct tp_io_workload *w);
/* Whether w takes the option of that long name ("record-size", without the
 * dashes): its own, the target and engine options when it has a target,
 * and sysfs-root. The CLI's own options (--json, --quiet) are not asked. */
bool tp_io_workload_takes(const struct tp_io_workload *w, const char *option);

/* After parsing (o->w set): check what depends on several options (DIR or
 * --device, not both; --destroy-data only with --device; --during needs a
 * folder; info needs a PATH) and fill in the target and the workload's
 * default queue depth. Returns 0, or TP_EUSAGE naming the option. */
int tp_io_opts_finish(struct tp_io_opts *o, tp_error *err);
/* The effective configuration as the result document's "config". NULL when
 * out of memory. */
json_t *tp_io_config_json(const struct tp_io_opts *o);
/* Run o's workload, filling results; returns as that workload does
 * (tp_io_checkpoint, tp_io_dataset, tp_io_commit, or tp_blkpath_describe
 * for info). */
int tp_io_run(const struct tp_io_opts *o, json_t *results, tp_error *err);
/* Print results as the workload's table on f (also what a failed run
 * measured; info prints the storage description when there is one). */
void tp_io_print(FILE *f, const struct tp_io_opts *o, const json_t *results);

/* One file of a workload: a real file in a folder, or a region of a raw
 * device (the device's fd shared, offsets shifted by base). */
struct tp_io_file {
    int fd;
    bool own_fd; /* close it (folder); a device region borrows the device's fd */
    uint64_t base;
    uint64_t bytes;
    char path[4352]; /* for messages: the file, or "DEV@offset" */
};

/* Close f's fd when it owns one; f->fd becomes -1. A zeroed or already
 * closed f is fine. */
void tp_io_file_close(struct tp_io_file *f);

/* Record files: how `trainpath io dataset` and the loader of `trainpath
 * step` keep a dataset of `records` records of record_bytes each. They live
 * in files files DIR/data-KKKK.bin: record i is slot i div files of file
 * i mod files (the last slots of short files are zeros). A manifest.json
 * beside them, written last, names the dataset, so a later run that asks
 * for the same one reuses the files. What a record holds (fill) and what
 * the manifest says are the caller's. */
struct tp_io_records {
    const char *dir;      /* the files' folder (made when missing; its parent exists) */
    const char *name;     /* the dataset in messages ("dataset", "step dataset") */
    uint64_t records;
    uint64_t record_bytes;
    unsigned files;       /* 1..records */
    uint64_t chunk_bytes; /* creation writes this much per call (at least one record) */
    void (*fill)(const void *arg, uint64_t i, char *rec); /* record i's record_bytes */
    const void *arg;
};

/* Record slots per file. */
static inline uint64_t tp_io_records_per_file(const struct tp_io_records *d)
{
    return (d->records + d->files - 1) / d->files;
}

/* The file that holds record i, and the record's offset in it (a device
 * region adds its base). */
static inline unsigned tp_io_record_file(const struct tp_io_records *d, uint64_t i)
{
    return (unsigned)(i % d->files);
}
static inline uint64_t tp_io_record_off(const struct tp_io_records *d, uint64_t i)
{
    return i / d->files * d->record_bytes;
}

/* Write every slot of d into files[0 .. d->files-1] (fill for a record,
 * zeros past the last one), then fdatasync each file. Returns 0; on error
 * TP_ENOMEM, or TP_ESYS naming the file and the offset, with the files
 * partly written. */
int tp_io_records_write(const struct tp_io_records *d, const struct tp_io_file *files,
                        tp_error *err);

/* Make d->dir hold the dataset that manifest describes. When its
 * manifest.json has every field of manifest with the same value and every
 * file has its size, the files are kept and *created is false. Otherwise the
 * folder is made, the files written (tp_io_records_write) and manifest
 * written beside them atomically; *created is true. Returns 0; on error
 * TP_ESYS or TP_ENOMEM naming the file, and what this call wrote is removed
 * (the files, the manifest, the folder when it is left empty). */
int tp_io_records_ensure(const struct tp_io_records *d, const json_t *manifest, bool *created,
                         tp_error *err);

/* Open every file of d for reading, with O_DIRECT when direct, into
 * files[0 .. d->files-1]. Returns 0; on error TP_EUSAGE when the filesystem
 * refuses O_DIRECT, else TP_ESYS, naming the file, and the files it had
 * opened are closed again. */
int tp_io_records_open(const struct tp_io_records *d, bool direct, struct tp_io_file *files,
                       tp_error *err);

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
