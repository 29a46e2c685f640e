/* Synthetic data-parallel training over real ranks: what the network and
 * storage paths do to a training step, its variance and its
 * reproducibility (the capability behind `trainpath step`).
 *
 * Each rank, each step: take its share of the global batch from a
 * prefetching loader that reads the dataset through the io engines; compute
 * (the real model's forward and backward on those samples, then calibrated
 * CPU work up to compute_ms); synchronise G bytes of gradient by allreduce
 * in buckets, overlapped with compute as PyTorch DDP does or after it;
 * apply the update; every K steps a checkpoint, synchronous or in a
 * background writer. On the GPU path the compute is cuBLAS matrix products
 * on the rank's GPU, the buckets live in GPU memory and synchronise through
 * NCCL, or through trainpath staged via host memory. With a recorded
 * workload (--workload) a step replays the recording instead: each rank
 * its recorded rank's compute, and the step's recorded collectives, each
 * of its kind and size, posted as the recorded compute reached it. The
 * model (tp/model.h) is small and real, so the weights' hash after
 * training tells whether the run was reproducible. */
#ifndef TP_STEP_H
#define TP_STEP_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tp/boot.h"
#include "tp/coll.h"
#include "tp/error.h"
#include "tp/gpu.h"

enum tp_step_reduce {
    TP_STEP_PLAIN,   /* f32 allreduce, deterministic for one configuration */
    TP_STEP_EXACT,   /* exact fixed-point sums: the same bits for any rank count */
    TP_STEP_ARRIVAL, /* ranks' sums added in the order they became ready */
};

enum tp_delay_where { TP_DELAY_COMM, TP_DELAY_IO, TP_DELAY_COMPUTE };
enum tp_delay_dist { TP_DELAY_CONST, TP_DELAY_EXP, TP_DELAY_SPIKE };

/* An injected delay: where, what distribution, on which rank. */
struct tp_delay {
    enum tp_delay_where where;
    enum tp_delay_dist dist;
    uint64_t ns; /* constant; mean of the exponential; the spike's size */
    double p;    /* the spike's probability per step */
    int rank;    /* -1: every rank */
};

#define TP_STEP_MAX_DELAYS 8

/* A recorded training job (--workload FILE, docs/workload.md), as read from
 * a workload file of version 1 (DDP's allreduce buckets) or 2 (every
 * collective of a step, per rank): the layouts of collectives a step
 * makes, which layout each recorded step made, and each recorded rank's
 * own times. Version 1 is read into the same shape: one layout of
 * allreduces (its buckets, in the order DDP fired them), one rank, and
 * each bucket's readiness moved from the forward's end to the step's
 * compute start (plus the forward). */

/* One collective of a layout, as recorded. */
struct tp_step_wl_coll {
    const char *name;      /* the file's kind, coll's spelling where coll has it:
                              "allreduce", "reduce-scatter", ..., or the workload's
                              own "send", "recv", "barrier" (a static string) */
    enum tp_coll_kind kind; /* the coll kind it replays as (send, recv: sendrecv;
                               barrier: allreduce) */
    bool mapped;            /* a kind of the workload's own (send, recv, barrier) that
                               replays as another: kind is not the recorded one */
    uint64_t bytes;        /* as recorded: nccl-tests' size (barrier: 0) */
    uint64_t replay_bytes; /* the size replayed: bytes, or the kind's own (barrier: 4) */
    const char *dtype;     /* as recorded ("float32", "bfloat16", ...; a static string),
                              NULL when the file does not say */
    int group;             /* into the file's groups; -1: none named */
    const char *phase;     /* "forward", "backward", "optimizer" or "other" (static) */
};

/* The ordered collectives one step makes. */
struct tp_step_wl_layout {
    size_t n;
    struct tp_step_wl_coll *coll;
};

/* One recorded rank's figures: a value per recorded step, and per
 * collective of each step at [at[s] + i] (struct tp_step_workload's at). */
#define TP_STEP_WL_NONE UINT64_MAX /* a start or duration the file does not have (null) */
struct tp_step_wl_rank {
    int rank;                                           /* its rank in the recorded job */
    uint64_t *forward_ns, *backward_ns, *optimizer_ns; /* nsteps each */
    uint64_t *step_ns;     /* the whole step, or NULL */
    uint64_t *ready_ns;    /* each call, from the start of the step's compute */
    uint64_t *start_ns;    /* each call's work: its start (same origin), or NULL; an
                              entry TP_STEP_WL_NONE where no work was found */
    uint64_t *duration_ns; /* ... and its duration, the same way */
};

struct tp_step_workload {
    char path[1024];
    char sha256[65];     /* of the file, for the config every rank compares */
    char source[32];     /* "pytorch-ddp", "kineto", ... */
    int version;         /* the file's: 1 or 2 */
    size_t nlayouts;
    struct tp_step_wl_layout *layouts;
    size_t nsteps;
    size_t *layout;      /* nsteps: the layout recorded step s made */
    size_t *at;          /* nsteps + 1: step s's collectives are [at[s], at[s + 1]) of a
                            rank's per-collective lists */
    size_t nranks;       /* >= 1 */
    struct tp_step_wl_rank *ranks;
    size_t ngroups;      /* the file's groups (0 when it names none) */
    uint64_t samples_per_rank, sample_bytes, ckpt_bytes;
    uint64_t params; /* the model's parameters (elements), 0 when the file lists none */
};

/* Read and check the workload file at path (version 1 or 2). TP_EUSAGE
 * naming the file and the key at fault ("--workload F: layouts[0][3].kind:
 * "allgatherx" is not a collective (allreduce, ...)"); TP_ENOMEM. */
int tp_step_workload_load(const char *path, struct tp_step_workload **out, tp_error *err);
void tp_step_workload_free(struct tp_step_workload *w);

/* The layout recorded step step % nsteps made. */
const struct tp_step_wl_layout *tp_step_workload_layout(const struct tp_step_workload *w,
                                                        uint64_t step);

/* The median over the recorded steps and ranks of forward + backward, ns. */
uint64_t tp_step_workload_compute_ns(const struct tp_step_workload *w);

/* The gradient a step synchronises: the largest over the layouts of the
 * bytes of its allreduces and reduce-scatters (version 1: the buckets'
 * sum). */
uint64_t tp_step_workload_grad_bytes(const struct tp_step_workload *w);

/* The share of the gradient's collectives' time (allreduce and
 * reduce-scatter) that ran before the compute (forward + backward) ended,
 * over all steps and ranks: each one's work from start_ns (or, without
 * it, from its readiness) for duration_ns; NAN when the file has no
 * durations of such a collective. */
double tp_step_workload_overlap(const struct tp_step_workload *w);

/* Recorded rank ranks[rank % nranks]'s compute in recorded step step %
 * nsteps before its collective i is called (i < the step's count): from
 * the latest earlier readiness (0 for the first) to its own, each clamped
 * to the compute's end (forward + backward), 0 when not later; i equal to
 * the count: the rest of the compute after the last readiness. A step's
 * slices add up to its forward + backward. */
uint64_t tp_step_workload_slice_ns(const struct tp_step_workload *w, size_t rank, uint64_t step,
                                   size_t i);

struct tp_step_opts {
    const char *preset;   /* for the record ("custom" when none) */
    uint64_t steps;
    uint64_t batch;       /* global samples per step, split over the ranks */
    uint64_t sample_bytes; /* one record of the dataset */
    uint64_t sample_given; /* --sample-size as given, before the rounding to floats; 0: not */
    uint64_t samples;     /* records in the dataset (epochs repeat it) */
    uint64_t grad_bytes;  /* gradient bytes allreduced per step (f32) */
    unsigned buckets;
    bool overlap;         /* allreduce buckets while computing (DDP) */
    double compute_ms;    /* per step and rank */
    unsigned dim;         /* the model's features (<= what a record holds) */
    float lr;
    enum tp_step_reduce reduce;
    const char *algo;     /* allreduce algorithm (NULL: by size) */
    /* data */
    const char *dir;      /* the dataset and checkpoints live here */
    unsigned prefetch;    /* batches the loader may read ahead */
    unsigned qd;          /* loader reads in flight */
    const char *engine;   /* io engine */
    bool direct;
    bool no_io;           /* the loader generates records in memory (harness cost) */
    /* checkpoints */
    uint64_t ckpt_every;  /* steps between checkpoints (0: none) */
    uint64_t ckpt_bytes;  /* the whole job's; each rank writes its share */
    bool ckpt_async;
    /* delays */
    struct tp_delay delays[TP_STEP_MAX_DELAYS];
    unsigned ndelays;
    uint64_t seed;
    unsigned runs;        /* --verify-repro N: train N times with different timing */
    bool pin;             /* each rank on its own core */
    const struct tp_step_workload *workload; /* --workload: its collectives, compute and
                                                optimizer times replayed; NULL: none */
    const char *trace;    /* --trace FILE: rank 0 writes the first run's timeline
                             (Chrome trace event format); NULL: none */
    bool progress_line;   /* rank 0 shows the steps done on stderr (tp/progress.h) */
    /* the GPU path (tp/gpu.h) */
    bool compute_gpu;     /* compute_ms of cuBLAS matrix products, not CPU work */
    bool grad_cuda;       /* the gradient buckets live in GPU memory */
    bool nccl;            /* buckets allreduced by NCCL (needs grad_cuda); else by
                             trainpath, staged through host memory when grad_cuda */
    unsigned gemm_n;      /* matrix side of the compute kernel (0: calibrated) */
    struct tp_gpu *gpu;   /* this rank's GPU, opened by the caller (TP_GPU_CUBLAS
                             for compute_gpu, TP_GPU_NCCL for nccl) */
};

/* Fill the shape of a named workload (resnet50, llm-1.3b, unet3d) scaled
 * by scale (gradient bytes, sample bytes, compute time and checkpoint
 * size). TP_EUSAGE naming an unknown preset or a bad scale. */
int tp_step_preset(const char *name, double scale, struct tp_step_opts *o, tp_error *err);

/* Names of the presets, NULL-terminated, with one line each. */
extern const char *const tp_step_preset_names[];
const char *tp_step_preset_help(const char *name);

/* Parse "WHERE:DIST:ARGS[@RANK]": WHERE comm, io or compute; DIST
 * const:DUR, exp:MEAN, spike:DUR:P. TP_EUSAGE naming spec when malformed. */
int tp_step_parse_delay(const char *spec, struct tp_delay *d, tp_error *err);

/* Check o before any rank starts, including the memory a rank needs
 * against MemAvailable shared by ranks_per_host ranks. TP_EUSAGE naming
 * the option. */
int tp_step_check(const struct tp_step_opts *o, int ranks_per_host, tp_error *err);

/* Check o against the group's shape, once the rank count is known (before
 * the fork with the local launcher, at boot on every rank otherwise):
 * every --inject-delay @RANK names one of nranks ranks, and with
 * --ckpt-every the checkpoints of this host's per_host ranks fit in the
 * free space of o->dir. TP_EUSAGE naming the option (--ckpt-size, --dir:
 * step's words, not io checkpoint's). */
int tp_step_check_group(const struct tp_step_opts *o, int nranks, int per_host, tp_error *err);

/* Run on every rank of c (b is its boot group, for clock offsets). Rank 0
 * fills results (NULL elsewhere): per-step series, summary, loss curve,
 * weight hashes per run, the reproducibility verdict. Returns 0, a peer or
 * I/O error, or TP_ECHECK when --verify-repro found hashes that had to be
 * equal and were not. */
int tp_step_run(struct tp_comm *c, struct tp_boot *b, const struct tp_step_opts *o,
                json_t *results, tp_error *err);

/* ---- `trainpath step` as one call (src/step/options.c, job.c, table.c) ---- */

struct tp_group_opts;

/* The options as the command line gives them, before what depends on the
 * preset and on the rank count is derived. */
struct tp_step_given {
    struct tp_step_opts o; /* as given; tp_step_derive and tp_step_prepare fill in
                              the rest (see there) */
    const char *preset;    /* --preset, or NULL */
    const char *workload;  /* --workload FILE, or NULL (tp_step_prepare loads it
                              into o.workload; the caller frees it) */
    double scale;          /* --scale of the preset */
    /* flags that override the preset's figures (have_*) */
    uint64_t grad_bytes, sample_bytes, ckpt_bytes;
    double compute_ms;
    bool have_grad, have_sample, have_compute, have_ckpt;
    bool have_scale; /* --scale was given (it needs --preset) */
    /* given, rather than derived */
    bool have_batch, have_samples, have_buckets, have_dim;
    int mem_cuda; /* --mem: 1 cuda, 0 host, -1 not given (cuda with --compute gpu
                     or --backend nccl) */
    FILE *table;  /* where rank 0 prints the header and the summary; NULL: none (-q) */
};

/* Fill g->o's figures for nranks ranks (every rank computes the same): the
 * preset's shape scaled, then the flags given over it, else the defaults
 * (4 MiB gradient, 4 KiB samples rounded down to whole floats, 10 ms
 * compute, 64 MiB checkpoint); the global batch (the preset's per-rank
 * batch, or 32, times nranks), 4 batches of samples, the model's features
 * (64, fewer if a sample cannot hold them) and the buckets (25 MiB each, 1
 * to 16) unless given. May be called again with another nranks. TP_EUSAGE
 * naming an unknown preset or a bad scale, g->o unchanged then. */
int tp_step_derive(struct tp_step_given *g, int nranks, tp_error *err);

/* The options every rank must share (compared at boot; nranks 0 when the
 * count is not known yet), and the result document's config. New
 * reference. */
json_t *tp_step_config_json(const struct tp_step_given *g, int nranks);

/* The arena (tp_comm_opts.arena_bytes) tp_step_run needs for o on each of
 * nranks ranks (tp_coll_arena_bytes for the gradient's allreduce, and the
 * step loop's own buffers). Never fails. */
size_t tp_step_arena_bytes(const struct tp_step_opts *o, int nranks);

/* Check g before any rank starts, with the group's options (-P having
 * implied ofi): the options that do not go together, o.grad_cuda from
 * --mem, then what tp_step_derive and tp_step_check find for the rank
 * count when the launcher is local (else for one rank: the count comes at
 * boot), --algo, and --dir (created when missing, and writable). TP_EUSAGE
 * naming the option. */
int tp_step_prepare(struct tp_step_given *g, const struct tp_group_opts *go, tp_error *err);

/* Train on the group of go (tp_group_main), after tp_step_prepare: derive
 * for the rank count the launcher gave, rank 0 printing the header and the
 * summary to g->table. Returns 0, the run's error (*speak as
 * tp_group_main's), or TP_ECHECK when --verify-repro found hashes that had
 * to be equal and were not. */
int tp_step_main(struct tp_step_given *g, const struct tp_group_opts *go, bool *speak,
                 tp_error *err);

/* The header line of a run over nranks, and the summary of rank 0's
 * results (a row per run, the mean breakdown of run 0, the verdict on
 * reproducibility). Each flushes nothing but f's buffer; none fails. */
void tp_step_print_header(FILE *f, const struct tp_step_given *g, int nranks);
void tp_step_print_summary(FILE *f, const struct tp_step_opts *o, const json_t *results);

#endif
