/* trainpath workload import (src/wlimport/; docs/workload.md): what a
 * PyTorch user already has, torch.profiler traces (Kineto's or the legacy
 * profiler's Chrome trace, plain or gzip, of any size) and NCCL/RCCL logs
 * (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL), turned into a version-2
 * workload file that `trainpath step --workload` replays: every collective
 * of a step with its kind, bytes, element type, process group and
 * readiness, the work's start and duration where the file has them, the
 * forward, backward and optimizer per step, each rank's own where several
 * ranks' files are given. Each format is a row of a table; files of one
 * rank merge, each figure from the first file that has it; files of
 * several ranks are lined up collective by collective. The written file
 * says which file filled which key and what was assumed. */
#ifndef TP_WLIMPORT_H
#define TP_WLIMPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tp/error.h"

/* The collectives a workload file records (the file's names:
 * tp_wlimport_kind_name). */
enum tp_wlimport_kind {
    TP_WL_ALLREDUCE,
    TP_WL_ALLGATHER,
    TP_WL_REDUCE_SCATTER,
    TP_WL_ALLTOALL,
    TP_WL_BROADCAST,
    TP_WL_REDUCE,
    TP_WL_SEND,
    TP_WL_RECV,
    TP_WL_BARRIER,
    TP_WL_NKINDS
};

/* "allreduce", "allgather", "reduce-scatter", "alltoall", "broadcast",
 * "reduce", "send", "recv", "barrier"; NULL for another number. */
const char *tp_wlimport_kind_name(int kind);

/* The kind a name of torch's, NCCL's or RCCL's means: a c10d op
 * ("c10d::_allgather_base_"), record_param_comms' "Collective name"
 * ("allgather_into_tensor_coalesced"), a backend's annotation
 * ("nccl:_reduce_scatter_base", "gloo:all_reduce", "nccl:send 0->1"), an
 * NCCL log's ("AllReduce") or a kernel's ("ncclDevKernel_AllGather_RING_LL(...)");
 * -1 when it names none of them (gather, scatter, a kernel that does not
 * say: "ncclDevKernel_Generic", "ncclKernel_SendRecv"). */
int tp_wlimport_kind_of(const char *name);

#define TP_WL_NONE INT64_MIN     /* a time the file does not have */
#define TP_WL_UNSIZED UINT64_MAX /* bytes the file does not have (0 is a size: an empty call) */

/* One collective call of a step. */
struct tp_wlimport_coll {
    int kind;            /* enum tp_wlimport_kind */
    uint64_t bytes;      /* nccl-tests' size: the larger of the call's input and
                            output; TP_WL_UNSIZED: not in the file */
    const char *dtype;   /* static name ("float32"); NULL: not in the file */
    int group;           /* index in the part's groups; -1: not in the file */
    int64_t ready_ns;    /* the call, from the step's compute start; TP_WL_NONE */
    int64_t start_ns;    /* its work's start, from the same origin; TP_WL_NONE */
    int64_t dur_ns;      /* its work's duration; TP_WL_NONE */
    unsigned char phase; /* TP_WL_PHASE_* */
};

enum { TP_WL_PHASE_FORWARD, TP_WL_PHASE_BACKWARD, TP_WL_PHASE_OPTIMIZER, TP_WL_PHASE_OTHER };

/* One step. Times TP_WL_NONE where the file has none (a log). */
struct tp_wlimport_step {
    int64_t id;    /* ProfilerStep#N's N; -1 when the file numbers no steps */
    int64_t t0_ns; /* the compute's start on the file's clock (the origin of
                      the collectives' times) */
    int64_t forward_ns, backward_ns, optimizer_ns, step_ns;
    size_t first, n; /* its collectives: colls[first .. first + n) */
};

/* A process group as the file names it. */
struct tp_wlimport_group {
    char name[64];           /* torch's name ("0") or the communicator ("0x55d0...") */
    char desc[64];           /* torch's description ("default_pg"), or "" */
    unsigned size;           /* ranks; 0: not in the file */
    unsigned nranks, *ranks; /* the global ranks, when the file lists them */
};

/* What one file gave: one rank's steps and collectives. */
struct tp_wlimport_part {
    const char *format;  /* the row's name: "kineto", "nccl-log" */
    char sha256[65];     /* of the file as it is on disk */
    char who[96];        /* the process read, for messages ("pid 4515") */
    int rank;            /* -1: not in the file */
    unsigned world_size; /* 0: not in the file */
    char backend[16];    /* "nccl", "gloo", ...; "" when the file does not say */
    char version[32];    /* NCCL's version where the file says; "" */
    bool timed;          /* the steps carry times and readiness */
    size_t nsteps;
    struct tp_wlimport_step *steps;
    size_t ncolls;
    struct tp_wlimport_coll *colls;
    size_t ngroups;
    struct tp_wlimport_group *groups;
    unsigned skipped; /* steps left out (a first step that differs, ...) */
};

/* Read path ("-": standard input) as format (a row's name, or "auto": by
 * content, after gzip is undone) into a new *out; warnings (a JSON array,
 * may be NULL) gets one line per thing left out, naming path and, for a
 * text format, the line. TP_EUSAGE naming the file and the value at fault:
 * unreadable, no format recognised, a format that does not fit, malformed
 * content, or nothing usable in it; TP_EINTR/TP_ETERM when a signal came. */
int tp_wlimport_read(const char *path, const char *format, struct tp_wlimport_part **out,
                     json_t *warnings, tp_error *err);

/* Free a part (NULL is fine). */
void tp_wlimport_part_free(struct tp_wlimport_part *p);

/* The step of a sequence of keys (one per collective, in call order): a
 * *start and a *period p (1 to 4096 collectives a step) such that every
 * key from *start on equals the key p later, with at least two whole
 * periods from *start. The shortest period that repeats from the first
 * key wins (a partial last period allowed: a log cut short); else the
 * smallest start from which whole periods run to the end (a first step
 * that differs), each start's shortest period; else the smallest start
 * with a partial last period. Returns the whole periods from *start, or 0
 * when there is no such pair (fewer than two steps). */
size_t tp_wlimport_period(const uint64_t *keys, size_t n, size_t *start, size_t *period);

/* An NCCL datatype number (ncclDataType_t, 0 int8 to 11 float8e5m2) as
 * bytes per element and name; 0 and NULL for an unknown number. */
size_t tp_wlimport_nccl_dtype(int nccl, const char **name);

struct tp_wlimport_opts {
    const char *from;         /* "auto" (NULL) or a format's name, for every file */
    const char *out;          /* the workload file to write (atomically) */
    const char *const *files; /* one rank's files merge (first wins where two give a
                                 figure); several ranks' are lined up */
    size_t nfiles;
    double compute_ms;     /* --compute-ms: 0 when not given */
    uint64_t samples;      /* --samples: 0 when not given */
    uint64_t sample_bytes; /* --sample-bytes: 0 when not given */
    unsigned world_size;   /* --world-size: 0 when not given */
};

/* Import: read every file, merge each rank's, line the ranks up, check the
 * result is a workload file trainpath step reads, and write it to o->out
 * atomically. *doc (a new reference) is the document written; *warnings
 * (a new reference) the lines the readers left. TP_EUSAGE naming the file
 * or the option: a file that cannot be read or holds nothing usable, an
 * output that is one of the inputs, files of one rank that disagree on
 * the collectives, ranks whose steps differ, a collective without bytes
 * in any file, no times and no --compute-ms, no --samples or
 * --sample-bytes; then out is not written. */
int tp_wlimport_run(const struct tp_wlimport_opts *o, json_t **doc, json_t **warnings,
                    tp_error *err);

/* The summary of an imported document: steps, the collectives of the
 * first layout with bytes and median times, the skew across ranks, which
 * file filled what, what was assumed or is missing. Text from the files
 * (paths, names) is printed as safe text. */
void tp_wlimport_print(FILE *f, const json_t *doc, const char *out);

#endif
