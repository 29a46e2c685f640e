/* Internal to src/step: one rank's state in `trainpath step`, shared by the
 * files of the training loop. loop.c owns the rank and its threads and calls
 * the others: data.c (the dataset and the prefetching loader), compute.c
 * (the calibrated work, the model's step), comm.c (the comm thread and the
 * bucket allreduce), ckpt.c (checkpoints, the background writer), summary.c
 * (what rank 0 reports), delay.c (the injected delays). None of them calls
 * loop.c back. Non-static names here are tp__step_*. */
#ifndef TP_STEP_INT_H
#define TP_STEP_INT_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "tp/boot.h"
#include "tp/coll.h"
#include "tp/error.h"
#include "tp/io.h"
#include "tp/step.h"

/* What every rank records per step (rec[step * NF + field]); rank 0 gathers
 * them all. F_READY (when the rank's gradient was ready, on rank 0's clock)
 * becomes the "straggler_wait" series: how long the rank then waited for
 * the last rank to be ready. */
enum { F_WAIT, F_COMPUTE, F_COMM, F_EXPOSED, F_CKPT, F_DELAY_IO, F_DELAY_COMM, F_DELAY_COMPUTE,
       F_STEP, F_LOSS, F_READY, F_OVERLAP, NF };

#define STEP_SUB "trainpath-step" /* DIR/STEP_SUB: the dataset and the checkpoints */
#define STEP_FILES 8u             /* the dataset's files (fewer when fewer samples) */

/* One prefetch slot of the loader. */
struct slot {
    char *buf;         /* local batch records */
    uint64_t step;     /* which step it holds */
    bool ready;
    uint64_t delay_ns; /* io delay injected while reading it */
};

/* trace.c: the tracks of --trace (a thread each) and the spans on them. */
enum tp__step_track { TP__TRACK_TRAIN, TP__TRACK_COMM, TP__TRACK_LOADER, TP__TRACK_WRITER,
                      TP__TRACK_COUNT };
enum tp__step_span {
    TP__SPAN_WAIT,           /* train: waiting for the step's batch */
    TP__SPAN_COMPUTE,        /* train: forward and backward (the calibrated work) */
    TP__SPAN_COMPUTE_DELAY,  /* train: an injected compute delay, inside the compute */
    TP__SPAN_EXPOSED,        /* train: waiting for the buckets after the compute */
    TP__SPAN_UPDATE,         /* train: the optimizer step */
    TP__SPAN_CKPT,           /* train: taking a checkpoint (the stall when async) */
    TP__SPAN_COMM_DELAY,     /* comm: an injected comm delay */
    TP__SPAN_BUCKET,         /* comm: one bucket's allreduce, or a recorded allreduce
                                (index: the bucket, or its place in the step) */
    TP__SPAN_COLL,           /* comm: a recorded collective of another kind (index: its
                                place in the step) */
    TP__SPAN_IO_DELAY,       /* loader: an injected io delay */
    TP__SPAN_READ,           /* loader: reading (or generating) the step's batch */
    TP__SPAN_CKPT_WRITE,     /* writer: an async checkpoint (index: its number) */
    TP__SPAN_COUNT
};
struct tp__step_trace;

/* One call the comm thread makes in a step (comm.c): a bucket's allreduce,
 * or one collective of a recorded step, replayed with f32 elements. */
struct tp__step_call {
    enum tp_coll_kind kind;
    size_t count, in_elems, out_elems; /* MPI's count; each rank's input and output */
    size_t off;     /* its input at r->grad + off, its output at r->gsum + off */
    uint32_t index; /* in the trace: the bucket (0: posted last), or its place in the step */
    int from;       /* the layout's collective it replays; -1: a bucket, or the model's
                       allreduce the replay adds */
    bool real;      /* the model's gradient rides at its head (off is 0) */
};

/* What the comm thread ran: a call's kind and bytes (nccl-tests' size). */
struct tp__step_ran {
    enum tp_coll_kind kind;
    uint64_t bytes;
};

/* The calls of one step: the buckets (presets: one plan), or one recorded
 * layout's collectives (a plan per layout). The compute before call k is
 * slice k; with tail, one more slice follows the last call. */
struct tp__step_plan {
    struct tp__step_call *call;
    size_t n;
    bool tail;
    /* the first step of the first run made with it, and what the comm
     * thread ran then (results.workload.replayed); ran_step -1: none yet */
    int64_t ran_step;
    struct tp__step_ran *ran;
    size_t nran;
};

struct rank {
    const struct tp_step_opts *o;
    struct tp_comm *c;
    struct tp_boot *b;
    int me, n;
    unsigned run;
    /* dataset */
    struct tp_io_records ds; /* its files (tp/io.h) */
    char ds_dir[4200];
    struct tp_io_file files[STEP_FILES];
    int fds[STEP_FILES]; /* the files' fds, for the io queues */
    uint64_t local_max; /* most samples a rank gets per step */
    /* loader */
    pthread_t loader;
    bool loader_started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct slot *slots;
    bool stop;
    int loader_rc;
    tp_error loader_err;
    /* comm thread */
    pthread_t comm;
    bool comm_started;
    struct tp__step_plan *plans; /* presets: one, the buckets; a workload: one per layout */
    size_t nplans, maxcalls;     /* ... and the most calls a step makes */
    const struct tp__step_plan *cur; /* this step's */
    size_t posted;    /* calls posted this step */
    size_t done_upto; /* calls done this step */
    bool comm_quit;
    uint64_t comm_busy_ns, comm_delay_ns;
    uint64_t *bstart, *bend; /* this step's calls (maxcalls), in the order run */
    size_t bofs[1025]; /* bucket k holds gradient elements [bofs[k], bofs[k + 1]) */
    int comm_rc;
    tp_error comm_err;
    uint64_t cur_step;
    /* gradient */
    float *grad, *gsum; /* count floats each (comm arena): the calls' inputs and outputs */
    float *real_sum;    /* the model's summed gradient, kept as its call completed */
    size_t count, bucket_elems;
    /* exact (exact.c): the per-sample gradients as grad_len columns of
     * col_stride floats, the spans, units and int64 sums of the fast path,
     * the wide path's grad_len elements of fx words, and the rounded sum */
    float *cols;
    size_t col_stride;
    int32_t *span, *span_all;
    int *unit;
    int64_t *ints, *isum, *isum_all;
    uint64_t *fx, *fx_sum;
    float *exact_sum;
    float *gather;                  /* arrival: n * grad_len */
    uint64_t *ready_ns, *ready_all;
    float *w;
    /* compute */
    double work_ns_per_iter;
    volatile double sink;
    /* the GPU path */
    float *dgrad, *dgsum; /* the buckets in GPU memory (grad_cuda) */
    unsigned gemm_n;      /* compute_gpu: the matrix side, */
    double gemm_ns;       /* one product's time, */
    uint64_t gemm_reps;   /* and the products in compute_ms */
    double gemm_carry;    /* --workload on the GPU: the fraction of a product
                             a slice's time left over, for the next slice */
    /* checkpoints */
    struct tp_io_ckpt *ckpt;
    pthread_t writer;
    bool writer_started, writer_busy, writer_quit;
    uint64_t writer_req;
    char *snapshot;
    uint64_t snapshot_bytes;
    int writer_rc;
    tp_error writer_err;
    /* records */
    uint64_t *rec;     /* steps * NF */
    cpu_set_t allowed; /* the process's cores: the helper threads run on any of them */
    bool have_allowed;
    uint64_t rng;
    struct tp__step_trace *trace; /* --trace: the first run's timeline, or NULL */
};

/* What --verify-repro found over the runs so far. */
struct tp__step_repro {
    char first_hash[65]; /* run 0's weights */
    float *w0;           /* run 0's weights, to count ulps against */
    bool differs;
    unsigned distinct;
    uint64_t max_ulps;
};

/* Samples this rank gets per step: its share of the global batch. */
static inline uint64_t tp__step_local_count(const struct rank *r)
{
    uint64_t B = r->o->batch;
    return B / (uint64_t)r->n + ((uint64_t)r->me < B % (uint64_t)r->n ? 1 : 0);
}

/* Helper threads are created by the pinned compute thread and would inherit
 * its single core: give them back every core the process may use. */
static inline void tp__step_unpin(const struct rank *r)
{
    if (r->have_allowed)
        pthread_setaffinity_np(pthread_self(), sizeof r->allowed, &r->allowed);
}

/* trace.c: the timeline. open makes r->trace (every rank: the first steps
 * for the document, every step with --trace); add records span s of step
 * (index: the bucket or checkpoint) from t0 to t1 on this rank's clock, in
 * the first run only, from the span's own thread (no lock); write is
 * collective after the first run: rank 0 gathers every rank's events,
 * writes r->o->trace atomically when set (origin: its start of the run, its
 * clock) and returns results.timeline in *timeline (NULL elsewhere). Errors
 * name the file; TP_ESYS when it cannot be written. */
int tp__step_trace_open(struct rank *r, tp_error *err);
void tp__step_trace_add(struct rank *r, enum tp__step_span s, uint64_t step, uint32_t index,
                        uint64_t t0, uint64_t t1);
int tp__step_trace_write(struct rank *r, uint64_t origin, json_t **timeline, tp_error *err);
void tp__step_trace_close(struct rank *r);

/* delay.c: the delay to inject at where for this rank and step, drawn from
 * *rng (the rank's stream, so each run and rank sees its own timing). */
uint64_t tp__step_delay_draw(const struct rank *r, uint64_t *rng, enum tp_delay_where where);
/* Sleep ns, through signals other than an interrupt: one recorded
 * (tp_intr) ends the sleep within 10 ms, and the caller's next safe point
 * stops the run. */
void tp__step_sleep_ns(uint64_t ns);

/* data.c: the global sample index of the k-th sample of step s (an
 * epoch-wise shuffle, the same for any rank count). */
uint64_t tp__step_sample_of(const struct tp_step_opts *o, uint64_t s, uint64_t k);
/* The lowest rank of each host creates (or reuses) the dataset, as io's
 * record files (tp_io_records_ensure); then every rank opens them (a
 * barrier between). *created: this rank wrote it. Errors name the file;
 * TP_EUSAGE when the filesystem refuses --direct. */
int tp__step_data_open(struct rank *r, bool *created, tp_error *err);
/* Close what tp__step_data_open opened. */
void tp__step_data_close(struct rank *r);
/* The loader thread (arg: the rank): fills the prefetch slots step by step
 * until r->stop; its error goes to r->loader_rc and r->loader_err. */
void *tp__step_loader_main(void *arg);
/* Wait for step s's batch; *out is its slot. Returns 0, or the loader's
 * error (err filled). */
int tp__step_batch_wait(struct rank *r, uint64_t s, struct slot **out, tp_error *err);
/* Hand a consumed slot back to the loader. */
void tp__step_batch_release(struct rank *r, struct slot *sl);

/* compute.c: pin the calling (compute) thread to one core per rank of this
 * host. */
void tp__step_pin(struct rank *r);
/* Time the CPU work (r->work_ns_per_iter). */
void tp__step_calibrate(struct rank *r);
/* --compute gpu: choose the matrix side and count the products that fill
 * compute_ms (r->gemm_*). Errors are the GPU's. */
int tp__step_calibrate_gpu(struct rank *r, tp_error *err);
/* Slice k of the step's compute (r->cur_step): of compute_ms (CPU work or
 * GPU products; slice 0 takes the remainder), or with a workload this
 * rank's recorded compute before the step's call k (k equal to the
 * recorded collectives' count: the rest of its forward and backward).
 * An interrupt ends it within a millisecond (a GPU's within one run of
 * products of about 10 ms): TP_EINTR/TP_ETERM. Other errors are the GPU's. */
int tp__step_compute_slice(struct rank *r, size_t k, tp_error *err);
/* workload.c: results.workload: the recorded medians (compute = forward +
 * backward, optimizer, step) of the ranks replayed beside the replay's
 * (run0: the first run's document) and their ratios, each replayed rank's
 * beside the recorded rank it replays, what the comm thread ran in the
 * first step (replayed.collectives) and in the first step of each layout,
 * and the recorded allreduces' bytes as replayed (bucket_bytes). */
json_t *tp__step_workload_compare(const struct rank *r, const json_t *run0);
/* The shape a recorded collective replays with over n ranks: its
 * replay_bytes as f32 elements (tp_coll_shape_for), at least one element
 * (a rank). */
struct tp_coll_shape tp__step_wl_shape(const struct tp_step_wl_coll *c, int n);
/* --workload: the recorded optimizer step of this step (calibrated work,
 * or matrix products with --compute gpu); nothing without a workload.
 * An interrupt ends it as it ends a compute slice; other errors are the
 * GPU's. */
int tp__step_optimizer(struct rank *r, tp_error *err);
/* The model's forward and backward on this rank's share of the batch (buf):
 * the gradient into r->grad, or r->cols when exact. TP_ECHECK naming the
 * sample when a record is not the one written. */
int tp__step_model_step(struct rank *r, const char *buf, tp_error *err);

/* exact.c: the floats a column of r->cols takes for local_max samples (a
 * whole number of blocks). */
size_t tp__step_col_stride(uint64_t local_max);
/* --reduce exact: the sum over every rank's samples of their gradients
 * (r->cols), correctly rounded, into out (grad_len floats); collective:
 * every rank calls it. Errors are the collectives'. */
int tp__step_exact_sum(struct rank *r, float *out, tp_error *err);

/* comm.c: the comm thread (arg: the rank): runs the calls posted, in
 * order, until r->comm_quit; its error goes to r->comm_rc and
 * r->comm_err. */
void *tp__step_comm_main(void *arg);
/* The calls of a step of workload layout l over n ranks, gl the model's
 * gradient (floats), into call (room for the layout's count + 1; NULL:
 * count only): each recorded collective in order, its shape
 * tp__step_wl_shape's, its input and output past the model's gradient; the
 * model's gradient rides at the head of the last recorded allreduce that
 * holds it, or when none does, of an allreduce of its own added after the
 * last (then no slice follows: the rest of the compute comes before it).
 * *ncalls their count, *tail whether a slice of compute follows the last.
 * Returns the floats r->grad and r->gsum need for them. Never fails. */
size_t tp__step_wl_calls(const struct tp_step_workload *w, size_t l, int n, size_t gl,
                         struct tp__step_call *call, size_t *ncalls, bool *tail);
/* The floats the calls' buffers need for every layout of w over n ranks:
 * the largest tp__step_wl_calls returns. */
size_t tp__step_wl_buffer_floats(const struct tp_step_workload *w, int n, size_t gl);
/* Set r->plans, r->count and r->bofs: the buckets (equal, the last one
 * short; bucket 0, the last posted, holding at least the model's own
 * gradient), or with a workload a plan per layout (tp__step_wl_calls);
 * r->bstart and r->bend for the most calls a step makes. TP_ENOMEM. */
int tp__step_calls_build(struct rank *r, tp_error *err);
/* Free what tp__step_calls_build made. */
void tp__step_calls_free(struct rank *r);
/* Start step s: its plan r->cur, no call posted or done, no comm time
 * yet. Returns the plan. */
const struct tp__step_plan *tp__step_comm_reset(struct rank *r, uint64_t s);
/* Post the step's next call to the comm thread. */
void tp__step_comm_post(struct rank *r);
/* Wait until the step's calls are all done: *busy_ns the comm thread's
 * time in them, *delay_ns the comm delay it injected. Returns 0, or the
 * comm thread's error (err filled). */
int tp__step_comm_wait(struct rank *r, uint64_t *busy_ns, uint64_t *delay_ns, tp_error *err);
/* The summed gradient of the real model, once the call it rides on
 * completed. */
void tp__step_real_sum(struct rank *r, float *out);
/* Before the timed steps, on the rank's own thread (no comm thread yet),
 * every rank at once: each distinct call (kind and count) of the plans run
 * once through the path the steps use, so the channels' first use and the
 * first touch of the buffers land here, not in step 0 (as coll's warm-up
 * iterations do). The sums are of zeros and the steps overwrite them.
 * Returns 0 or the comm's error. */
int tp__step_comm_warmup(struct rank *r, tp_error *err);

/* ckpt.c: set up the rank's checkpoints (DIR/STEP_SUB/ckpt-rankN, its share
 * of ckpt_bytes, the snapshot for --ckpt-async). Errors name the folder. */
int tp__step_ckpt_open(struct rank *r, tp_error *err);
/* The background writer thread (arg: the rank). */
void *tp__step_ckpt_writer_main(void *arg);
/* Checkpoint number n: written and committed now, or the snapshot handed to
 * the writer. Errors are the checkpoint's (or the writer's previous one). */
int tp__step_ckpt_take(struct rank *r, unsigned n, tp_error *err);
/* Wait for the writer to finish what it holds; its error, if any (err
 * filled), else 0. */
int tp__step_ckpt_drain(struct rank *r, tp_error *err);
/* Remove what the checkpoints left and free them. */
void tp__step_ckpt_close(struct rank *r);

/* summary.c: note run's weights (hex their sha256) in p: run 0 sets the
 * reference, later runs count against it. */
void tp__step_repro_note(struct tp__step_repro *p, const struct rank *r, unsigned run,
                         const char *hex);
/* Rank 0's document of one run from every rank's records
 * (all[rank][step * NF + f]; F_READY is rewritten as the straggler wait).
 * NULL when out of memory. */
json_t *tp__step_run_json(const struct rank *r, unsigned run, const char *hex, uint64_t wall_ns,
                          uint64_t *all);
/* Rank 0's results after the runs: the dataset, the calibration, the data
 * path, runs (taken) and the reproducibility verdict. */
void tp__step_results(const struct rank *r, const struct tp__step_repro *p, bool created,
                      json_t *runs, json_t *results);
/* TP_ECHECK when the runs' weights had to be identical and were not. */
int tp__step_repro_check(const struct rank *r, const struct tp__step_repro *p, tp_error *err);

#endif
