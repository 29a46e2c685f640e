/* trainpath workload import (src/wlimport/; docs/workload.md): what a
 * PyTorch user already has, a torch.profiler trace (Kineto's or the legacy
 * profiler's Chrome trace) and an NCCL log (NCCL_DEBUG=INFO
 * NCCL_DEBUG_SUBSYS=COLL), turned into a version-1 workload file that
 * `trainpath step --workload` replays. Each format is a row of a table;
 * several files merge, each figure taken from the first file that has it,
 * and the file says which file filled which key and what was assumed. */
#ifndef TP_WLIMPORT_H
#define TP_WLIMPORT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tp/error.h"

/* What one file gave. Arrays are NULL where the file has no such figure;
 * per-step-and-bucket arrays are indexed [step * nbuckets + bucket], the
 * buckets in the order the job fired them. */
struct tp_wlimport_part {
    const char *format; /* the row's name: "kineto", "nccl-log" */
    unsigned nbuckets;  /* allreduces per step (0: none found) */
    size_t nsteps;      /* steps found (for a log: whole repeats) */
    uint64_t *bytes;    /* per bucket; NULL when the file has none */
    const char **dtype; /* per bucket, with bytes (static names: "float32") */
    uint64_t *forward_ns, *backward_ns, *optimizer_ns, *step_ns; /* per step; NULL: no times */
    uint64_t *ready_ns;     /* from the backward's start; with the times */
    uint64_t *allreduce_ns; /* optional, with the times */
    unsigned skipped;       /* steps left out (a first step that differs, ...) */
    unsigned world_size;    /* 0: not in the file */
    char backend[16];       /* "" when the file does not say */
};

/* Read path as format (a row's name, or "auto": by content) into a new
 * *out; warnings (a JSON array, may be NULL) gets one line per thing left
 * out, naming path and, for a text format, the line. TP_EUSAGE naming the
 * file: unreadable, no format recognised, a format that does not fit, or
 * nothing usable in it. */
int tp_wlimport_read(const char *path, const char *format, struct tp_wlimport_part **out,
                     json_t *warnings, tp_error *err);

/* Free a part (NULL is fine). */
void tp_wlimport_part_free(struct tp_wlimport_part *p);

/* The formats' names in table order, NULL-terminated ("kineto", ...). */
extern const char *const tp_wlimport_formats[];

/* The step of a sequence of keys (one per allreduce, in call order): a
 * *start and a *period p (1 to 1024: the buckets trainpath step replays)
 * such that every key from *start on equals the key p later, with at
 * least two whole periods from *start. The
 * shortest period that repeats from the first key wins (a partial last
 * period allowed: a log cut short); else the smallest start from which
 * whole periods run to the end (a first step that differs), each start's
 * shortest period; else the smallest start with a partial last period.
 * Returns the whole periods from *start, or 0 when there is no such pair
 * (fewer than two steps). */
size_t tp_wlimport_period(const uint64_t *keys, size_t n, size_t *start, size_t *period);

/* An NCCL datatype number (ncclDataType_t, 0 int8 to 11 float8e5m2) as
 * bytes per element and name; 0 and NULL for an unknown number. */
size_t tp_wlimport_nccl_dtype(int nccl, const char **name);

struct tp_wlimport_opts {
    const char *from;         /* "auto" (NULL) or a format's name, for every file */
    const char *out;          /* the workload file to write (atomically) */
    const char *const *files; /* the files to merge, first wins where two give a figure */
    size_t nfiles;
    double compute_ms;     /* --compute-ms: 0 when not given */
    uint64_t samples;      /* --samples: 0 when not given */
    uint64_t sample_bytes; /* --sample-bytes: 0 when not given */
    unsigned world_size;   /* --world-size: 0 when not given */
};

/* Import: read every file, merge them, check the result is a workload file
 * trainpath step reads, and write it to o->out atomically. *doc (a new
 * reference) is the document written; *warnings (a new reference) the
 * lines the readers left out. TP_EUSAGE naming the file or the option: a
 * file that cannot be read or holds nothing usable, files that disagree on
 * the buckets a step, no bucket bytes in any file, no times and no
 * --compute-ms, no --samples or --sample-bytes; then out is not written. */
int tp_wlimport_run(const struct tp_wlimport_opts *o, json_t **doc, json_t **warnings,
                    tp_error *err);

/* The summary of an imported document: steps, buckets with bytes, which
 * file filled what, what was assumed or is missing. */
void tp_wlimport_print(FILE *f, const json_t *doc, const char *out);

#endif
