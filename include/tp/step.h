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
 * NCCL, or through trainpath staged via host memory. The model
 * (tp/model.h) is small and real, so the weights' hash after training
 * tells whether the run was reproducible. */
#ifndef TP_STEP_H
#define TP_STEP_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

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

struct tp_step_opts {
    const char *preset;   /* for the record ("custom" when none) */
    uint64_t steps;
    uint64_t batch;       /* global samples per step, split over the ranks */
    uint64_t sample_bytes; /* one record of the dataset */
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

/* Run on every rank of c (b is its boot group, for clock offsets). Rank 0
 * fills results (NULL elsewhere): per-step series, summary, loss curve,
 * weight hashes per run, the reproducibility verdict. Returns 0, a peer or
 * I/O error, or TP_ECHECK when --verify-repro found hashes that had to be
 * equal and were not. */
int tp_step_run(struct tp_comm *c, struct tp_boot *b, const struct tp_step_opts *o,
                json_t *results, tp_error *err);

#endif
