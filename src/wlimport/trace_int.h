/* Internal to the torch.profiler row (kineto.c, trace_scan.c,
 * trace_link.c): what the streaming scan keeps of a trace, in compact
 * arrays sized by the events that matter (steps, phases, collectives,
 * kernel launches), never by the trace; and the collective calls the link
 * builds from them. Non-static names are tp__wl_trace_* / tp__wl_*. */
#ifndef TP_WL_TRACE_INT_H
#define TP_WL_TRACE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "wlimport_int.h"

/* What a kept event is. */
enum tp__wl_role {
    TR_STEP,     /* a CPU ProfilerStep#N span */
    TR_OPT,      /* a CPU Optimizer.step#... span */
    TR_AUTOGRAD, /* a CPU autograd::engine::evaluate_function span */
    TR_CALL,     /* a CPU c10d:: collective op (kind -1: one the file cannot hold) */
    TR_SIZES,    /* a CPU record_param_comms */
    TR_BACKEND,  /* a CPU backend annotation: nccl:*, gloo:*, hccl:* ... */
    TR_GPU_ANN,  /* a gpu_user_annotation of a backend: the work on the GPU */
    TR_KERNEL,   /* a communication kernel on the GPU */
};

/* A thread of the trace: (pid, tid) as written (numbers or strings). */
struct tp__wl_thread {
    uint64_t pid, tid; /* the values, or a hash of the text */
    char pid_text[40]; /* for messages */
    int64_t *ops;      /* the starts of its CPU events (the step's first op) */
    size_t nops;
};

/* A kept span (steps, optimizer, autograd): 32 bytes. */
struct tp__wl_span {
    int64_t ts, end, id;
    uint32_t thread;
    uint8_t role;
};

/* A kept communication event, its sizes and group from its args. */
struct tp__wl_cev {
    int64_t ts, end;      /* ns on the trace's clock */
    uint64_t ext, corr;   /* External id, correlation (0: none) */
    uint64_t in_b, out_b; /* In/Out msg nelems x dtype (TP_WL_UNSIZED: not there) */
    uint64_t dims_b[2];   /* the first two tensors of Input Dims x Input type (or
                             TP_WL_UNSIZED) */
    const char *dtype;    /* static name, NULL */
    int32_t group;        /* in the scan's groups; -1 */
    uint32_t gsize;       /* "Group size"; 0 */
    uint32_t thread;
    int16_t kind; /* -1: not said */
    uint8_t role;
    uint8_t gloo : 1,  /* a backend whose span is the work (gloo) */
        out_first : 1, /* a c10d op whose first tensor is the output */
        has_sizes : 1, /* in_b/out_b from In/Out msg nelems */
        unnamed : 1;   /* a record_param_comms without a Collective name */
    uint32_t seq;      /* its place in the file, for messages */
};

/* A kernel launch on the CPU: correlation, time, thread. */
struct tp__wl_launch {
    uint64_t corr;
    int64_t ts;
    uint32_t thread;
};

/* A process group the trace names (distributedInfo's pg_config, or a
 * record_param_comms' Process Group Name/Description/Ranks). */
struct tp__wl_tgroup {
    char name[64], desc[64];
    unsigned size, nranks, *ranks;
};

/* Everything the scan keeps. */
struct tp__wl_scan {
    struct tp__wl_thread *threads;
    size_t nthreads;
    struct tp__wl_span *spans;
    size_t nspans;
    struct tp__wl_cev *cevs;
    size_t ncevs;
    struct tp__wl_launch *launches;
    size_t nlaunches;
    struct tp__wl_tgroup *groups;
    size_t ngroups;
    /* distributedInfo */
    int rank;
    unsigned world_size;
    char backend[16], version[32];
    char seen_backend[16]; /* the first backend annotation's prefix ("nccl") */
    uint64_t events;       /* complete events seen */
    uint64_t skipped_neg;  /* events with a negative duration, left out */
    bool legacy;           /* the legacy profiler's bare list */
};

/* One event's fields as the scan read them (trace_scan.c), for the keep
 * (trace_keep.c). */
struct tp__wl_event {
    char name[256]; /* kept to 255 bytes: every prefix the keep reads is early */
    size_t name_len;
    char cat[32], ph[4];
    char pid[40], tid[40];
    bool has_ts, has_dur;
    int64_t ts, dur;
    const char *bad; /* a field that could not be read */
    char badv[48];
    /* args */
    uint64_t ext, corr;
    int coll;  /* -2: no Collective name; -1: one that is no kind */
    bool wait; /* Collective name "wait": a Work's wait(), not a collective */
    bool has_in, has_out;
    uint64_t in_n, out_n;
    char dtype[32];
    uint32_t gsize;
    char pg[64], pgdesc[64];
    char *ranks; /* the Process Group Ranks text */
    size_t ranks_len, ranks_cap;
    /* Input Dims: the first two tensors' element counts */
    uint64_t dims[2];
    int dims_state[2]; /* 0 none, 1 counting, 2 done, -1 not a tensor */
    int ntensor;       /* the tensor of Input Dims being read (-1: none) */
    char itype[2][32];
    int nitype;
};

/* Keep what the import uses of the complete event c (trace_keep.c): a
 * step, optimizer or autograd span; a collective's CPU span, kernel or
 * GPU annotation with its sizes and group; a kernel launch; any other CPU
 * span as a start on its thread; nothing of the rest. 0, or TP_EUSAGE
 * naming path and the event (a value that is not a count or a time, an
 * overflow), TP_ENOMEM. */
int tp__wl_trace_keep(struct tp__wl_scan *s, const struct tp__wl_event *c, const char *path,
                      json_t *warnings, tp_error *err);

/* The group named name (added when new; desc, size and the ranks text
 * "[0, 1, 2]" kept where not known yet): its index, -1 when out of
 * memory. */
int32_t tp__wl_trace_group(struct tp__wl_scan *s, const char *name, const char *desc,
                           const char *ranks, size_t rlen, uint32_t size);

/* A whole number from JSON text (no sign, no fraction, not past 2^64-1). */
bool tp__wl_whole(const char *s, size_t n, uint64_t *v);

/* A 64-bit hash of text with the top bit set: ids and names that are not
 * whole numbers, kept apart from those that are. */
uint64_t tp__wl_hash(const char *s, size_t n);

/* Scan the trace on in (yajl, in chunks) into s. TP_EUSAGE naming the
 * file and the byte or the event at fault (not JSON, a size that is not a
 * count, a time that overflows); TP_ENOMEM; an interrupt. */
int tp__wl_trace_scan(struct tp__wl_in *in, struct tp__wl_scan *s, json_t *warnings, tp_error *err);
void tp__wl_trace_scan_free(struct tp__wl_scan *s);

/* A collective call: the nested CPU spans of one call, and its work. */
struct tp__wl_call {
    int64_t ts, end;      /* the outermost span */
    int64_t work0, work1; /* the work's start and end; TP_WL_NONE */
    uint64_t in_b, out_b; /* the sizes found, by the order of trust (TP_WL_UNSIZED) */
    const char *dtype;
    int32_t group;
    uint32_t gsize;
    uint32_t thread;
    int16_t kind; /* -1: no member says */
    bool kernel;  /* a kernel was linked: the work is the kernels' */
    bool named;   /* some member is more than an unnamed, unsized
                     record_param_comms (torch 2.0's waits are only that) */
};

/* The calls of the process chosen (pid): clusters of nested CPU spans,
 * their kind, size and group from the members, then the work linked
 * (kernels by correlation or External id, GPU annotations, gloo's work
 * spans in order). Sorted by start. TP_ENOMEM. */
int tp__wl_trace_link(const struct tp__wl_scan *s, uint64_t pid, struct tp__wl_call **out,
                      size_t *n, const char *path, tp_error *err);

#endif
