/* Collectives over a group of ranks (the capability behind `trainpath
 * coll`). A communicator joins the ranks of a boot group with one data
 * channel per peer (include/tp/chan.h, src/fabric/): the transport's channel
 * between hosts (kernel TCP, or libfabric with --transport ofi), and between
 * ranks of one host either that or shared memory (--intra shm), where a
 * receiver copies or reduces straight out of the sender's buffer (one copy).
 *
 * Each algorithm builds a small dependency graph of sends, receives and
 * local reductions (src/coll/algo_*.c); one executor (src/coll/exec.c)
 * runs every graph, so chunked pipelining, rank counts that are not powers
 * of two and two-level schedules need no special driver code. Every wait
 * has an idle deadline; a lost peer is an error naming its rank and host,
 * and a rank that fails tells its peers (they fail fast, not by timeout).
 *
 * Buffers: allocate the buffers passed to tp_coll_run with tp_comm_alloc;
 * with shared memory they live in this rank's shared arena, which is what
 * lets peers read them directly. */
#ifndef TP_COLL_H
#define TP_COLL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tp/boot.h"
#include "tp/dtype.h"
#include "tp/reduce.h"
#include "tp/error.h"
#include "tp/gpu.h"

enum tp_coll_kind {
    TP_ALLREDUCE,
    TP_REDUCE_SCATTER,
    TP_ALLGATHER,
    TP_BROADCAST,
    TP_REDUCE,
    TP_ALLTOALL,
    TP_SENDRECV,
    TP_COLL_COUNT
};

/* "allreduce", "reduce-scatter", "allgather", "broadcast", "reduce",
 * "alltoall", "sendrecv"; parse also takes "reducescatter",
 * "reduce_scatter" and "bcast", and returns -1 when s names no kind. */
const char *tp_coll_name(enum tp_coll_kind k);
int tp_coll_parse(const char *s);

/* nccl-tests' bus-bandwidth factor for k over n ranks (n >= 1): 2(n-1)/n
 * for allreduce, (n-1)/n for reduce-scatter, allgather and alltoall, 1 for
 * the others. */
double tp_coll_busbw_factor(enum tp_coll_kind k, int n);

/* A sweep size in a kind's terms (nccl-tests' convention, see
 * tp_coll_bench_opts). */
struct tp_coll_shape {
    size_t count;     /* MPI's count (struct tp_coll_args) */
    size_t in_elems;  /* elements of each rank's input */
    size_t out_elems; /* elements of each rank's output */
    uint64_t bytes;   /* the size reported: the larger of input and output */
};

/* The shape of size bytes of dtype t for k over n ranks (n >= 1): size
 * rounded down to whole elements, and to whole blocks of n where input or
 * output is n blocks. Never fails. */
struct tp_coll_shape tp_coll_shape_for(enum tp_coll_kind k, enum tp_dtype t, int n,
                                       uint64_t size);

/* The algorithm tp_coll_run chooses by size (--algo auto) for k over n
 * ranks on nhosts hosts (shm: one host whose ranks share memory; else a
 * network between them), bytes being the call's count times the element
 * size. Never NULL. */
const char *tp_coll_auto_algo(enum tp_coll_kind k, int n, int nhosts, bool shm, size_t bytes);

struct tp_comm_opts {
    const char *transport; /* "tcp" (default) or "ofi" (libfabric) */
    const char *provider;  /* ofi: provider as fi_info names it ("shm", "tcp;ofi_rxm",
                              "verbs;ofi_rxm", "efa"); NULL: tcp;ofi_rxm */
    const char *intra;     /* "shm" (default) or "fabric" for ranks of one host */
    const char *bind_addr; /* address to listen on for data connections; NULL:
                              127.0.0.1 when every rank is on one host, else the
                              first non-loopback IPv4 address that is up */
    size_t arena_bytes;    /* what tp_comm_alloc may hand out on this rank */
    uint64_t timeout_ns;   /* idle deadline of every wait */
    bool busy_poll;        /* spin instead of sleeping in poll() */
    const char *shm_stores; /* "auto" (NULL), "cached" or "stream": which
                               receives on shared memory write with streaming
                               (non-temporal) stores (tp_comm_stores_check) */
};

struct tp_comm;

/* --shm-stores NAME: auto (also NULL) streams a receive of 8 KiB or more
 * whose destination the next send hands to a peer on shared memory, cached
 * streams none, stream every receive on shared memory. Returns 0, or
 * TP_EUSAGE with err naming the choices. */
int tp_comm_stores_check(const char *name, tp_error *err);

/* The bytes this rank has received with streaming stores so far. */
uint64_t tp_comm_streamed_bytes(const struct tp_comm *c);

/* Build the channels between the ranks of b (collective: every rank calls
 * it). On error no communicator exists and err names the peer at fault. */
int tp_comm_init(struct tp_boot *b, const struct tp_comm_opts *o, struct tp_comm **out,
                 tp_error *err);

int tp_comm_rank(const struct tp_comm *c);
int tp_comm_size(const struct tp_comm *c);

/* Hosts in the communicator, and whether shared memory joins the ranks of
 * one host. */
int tp_comm_nhosts(const struct tp_comm *c);
bool tp_comm_shm(const struct tp_comm *c);

/* bytes from this rank's arena (64-byte aligned, zero-filled pages not yet
 * touched), or NULL when the arena is exhausted. Freed all at once by
 * tp_comm_reset_alloc or tp_comm_fini. */
void *tp_comm_alloc(struct tp_comm *c, size_t bytes);
void tp_comm_reset_alloc(struct tp_comm *c);

/* One collective call. count is as MPI counts it: allreduce, broadcast,
 * reduce, sendrecv: elements of each buffer; reduce-scatter: elements each
 * rank receives (it sends size * count); allgather: elements each rank
 * sends (it receives size * count); alltoall: elements sent to each peer. */
struct tp_coll_args {
    enum tp_coll_kind kind;
    enum tp_dtype dtype;
    enum tp_redop op;
    const void *sendbuf;
    void *recvbuf; /* reduce: significant at the root; scratch elsewhere */
    size_t count;
    int root;       /* broadcast, reduce */
    const char *algo; /* NULL or "auto": size-based choice */
    bool exact;     /* allreduce sum/avg of floats, bitwise reproducible */
    size_t chunk_bytes; /* pipelining unit; 0: the transport's default */
};

/* Run one collective. Returns 0, or a negative code with err naming the
 * lost or failed rank and its host (TP_EPEER, TP_ETIMEOUT) or the bad
 * argument (TP_EUSAGE). After an error the communicator is unusable. */
int tp_coll_run(struct tp_comm *c, const struct tp_coll_args *a, tp_error *err);

/* The algorithm tp_coll_run would use for a (its --algo, or the size-based
 * choice), or NULL with err set when a names an algorithm that does not
 * exist or does not implement a->kind. */
const char *tp_coll_algo(const struct tp_comm *c, const struct tp_coll_args *a, tp_error *err);

/* Names of the algorithms that implement kind, NULL-terminated. */
const char *const *tp_coll_algos(enum tp_coll_kind kind);

/* The algorithm-independent check of a, without a communicator (used before
 * any rank starts): unsupported dtype/op/exact combinations. */
int tp_coll_check_args(enum tp_coll_kind kind, enum tp_dtype dtype, enum tp_redop op,
                       bool exact, const char *algo, tp_error *err);

/* The arena (tp_comm_opts.arena_bytes) for a communicator of nranks whose
 * largest collective call has buffers of call_bytes each: that call's input,
 * output and the scratch an algorithm takes (at most one more buffer); per
 * rank 340000 bytes (what a sweep gathers of every rank's timing records,
 * with room to spare); 4 MiB for alignment and small buffers; with exact,
 * the fixed-point segments of --repro exact; and own_bytes, what the caller
 * allocates besides. Never fails. */
size_t tp_coll_arena_bytes(int nranks, size_t call_bytes, bool exact, size_t own_bytes);

/* Tell every peer this rank has failed and close the channels (a failed
 * rank calls this so the others stop waiting for it). */
void tp_comm_abort(struct tp_comm *c);

/* Provenance: channels by kind, hosts, arena. New reference. */
json_t *tp_comm_info(const struct tp_comm *c);

void tp_comm_fini(struct tp_comm *c);


/* ---- backends: what runs the sweep's collectives (src/coll/backend*.c) ---- */

struct tp_coll_backend {
    const char *name;       /* --backend NAME, and the result's "backend" */
    const char *label;      /* in messages: "MPI chooses its own algorithm" */
    bool own_algo;          /* chooses its own algorithm: --algo does not apply, and
                               the result's "algo" is the backend's name */
    unsigned gpu_need;      /* TP_GPU_* it needs of the rank's GPU; 0: none */
    bool device_memory;     /* works on GPU memory itself; with the others, --mem cuda
                               buffers are staged through host memory */
    const char *device_why; /* data_path "why" of a device_memory backend */
    const char *no_exact;   /* why --repro exact cannot run on it, or NULL */
    const char *no_cuda;    /* why --mem cuda cannot run on it, or NULL */
    const char *own_transport; /* why --transport does not apply when it runs alone */
    /* One collective: a's buffers from tp_comm_alloc, or device memory of g
     * for a device_memory backend. Returns 0 or an error as tp_coll_run. */
    int (*run)(struct tp_comm *c, struct tp_gpu *g, const struct tp_coll_args *a,
               tp_error *err);
    /* Whether it can run in this process, once the communicator exists (mpi:
     * the ranks were started by an MPI launcher): 0 or TP_EUSAGE saying why
     * not. NULL: always. */
    int (*ready)(tp_error *err);
};

#define TP_COLL_BACKENDS 3

/* The rows (trainpath, mpi, nccl), NULL-terminated; trainpath is the default. */
extern const struct tp_coll_backend *const tp_coll_backend_table[TP_COLL_BACKENDS + 1];

/* The row named by the first len bytes of name, or NULL. */
const struct tp_coll_backend *tp_coll_backend_find(const char *name, size_t len);

/* --backend's list: rows in the order given, each at most once. */
struct tp_coll_backends {
    const struct tp_coll_backend *row[TP_COLL_BACKENDS];
    int n;
    const char *arg; /* as given; NULL for the default */
};

/* The default list: trainpath alone (arg NULL). Never fails. */
void tp_coll_backends_default(struct tp_coll_backends *l);

/* Parse "NAME[,NAME...]" into *l. TP_EUSAGE naming arg and the word that is
 * not a backend or comes twice; *l is left as it was then. */
int tp_coll_backends_parse(const char *arg, struct tp_coll_backends *l, tp_error *err);

/* ---- the benchmark sweep (src/coll/sweep.c) ---- */

struct tp_coll_bench_opts {
    enum tp_coll_kind kind;
    enum tp_dtype dtype;
    enum tp_redop op;
    const uint64_t *sizes; /* bytes, as nccl-tests counts them (see below) */
    size_t nsizes;
    const char *algo;  /* NULL/"auto" or a name */
    bool exact;        /* --repro exact */
    bool repro_check;  /* inputs: shares of 840 values per element (see docs) */
    int root;
    size_t chunk_bytes;
    uint64_t iters;    /* 0: as many as fit in time_ns (at least 5) */
    uint64_t warmup;   /* warm-up iterations per size */
    uint64_t time_ns;  /* per size when iters is 0 */
    uint64_t inject_delay_ns; /* each rank sleeps up to this, at random, before
                                 each iteration (jitter / arrival-order tests) */
    const struct tp_coll_backend *backend; /* NULL: trainpath */
    bool mem_cuda;       /* --mem cuda: the buffers live on gpu (trainpath and mpi
                            stage them through host memory each iteration) */
    struct tp_gpu *gpu;  /* this rank's GPU, opened by the caller (mem_cuda, nccl) */
    void (*progress)(void *arg, size_t i, size_t n); /* rank 0, after each size */
    void *progress_arg;
    /* rank 0: every timed iteration of every rank as a span of thread
     * trace_tid (tp/trace.h), from trace_origin_ns of rank 0's clock; NULL:
     * none */
    struct tp_trace *trace;
    int trace_tid;
    uint64_t trace_origin_ns;
};

/* The size S of a sweep entry is nccl-tests' size: the buffer of one rank
 * for allreduce, broadcast, reduce and sendrecv; the input (n blocks) for
 * reduce-scatter and alltoall; the output (n blocks) for allgather. S is
 * rounded down to whole elements (and whole blocks of n).
 *
 * Run the sweep on every rank. Rank 0 appends one entry per size to
 * results->"sizes" and the alpha-beta fits to results->"fit" (results is
 * NULL elsewhere); what was measured before a failure stays there.
 * Returns 0 or an error naming the failed rank; wrong results are not an
 * error here (the caller reads "wrong"). */
int tp_coll_bench(struct tp_comm *c, const struct tp_coll_bench_opts *o, json_t *results,
                  uint64_t *wrong_total, tp_error *err);

/* The arena (tp_comm_opts.arena_bytes) tp_coll_bench needs for o on each
 * of nranks ranks, with any backend. Never fails. */
size_t tp_coll_bench_arena_bytes(const struct tp_coll_bench_opts *o, int nranks);

/* The same collective through the MPI library that launched the ranks
 * (--backend mpi). TP_EUSAGE when the ranks were not started by an MPI
 * launcher or the build has no MPI. */
int tp_coll_mpi_run(struct tp_comm *c, const struct tp_coll_args *a, tp_error *err);
bool tp_coll_mpi_available(void);

/* The same collective through NCCL (--backend nccl) on device buffers of
 * g, whose NCCL communicator the caller has set up (tp_gpu_nccl_init)
 * with the same ranks as the communicator. Blocks until it is done. */
int tp_coll_nccl_run(struct tp_gpu *g, const struct tp_coll_args *a, tp_error *err);

/* ---- `trainpath coll` as one call (src/coll/job.c) ---- */

struct tp_group_opts;

struct tp_coll_job {
    struct tp_coll_bench_opts bench; /* the sweep; tp_coll_main sets backend, mem_cuda
                                        (per backend), gpu and progress */
    struct tp_coll_backends backends; /* each runs the whole sweep, in this order */
    FILE *table; /* where rank 0 prints its table; NULL: none (-q) */
    const char *trace; /* --trace FILE: rank 0 writes every iteration's span
                          of every rank and backend; NULL: none */
    bool redop_given, root_given; /* --redop, --root were on the command line */
    bool progress_line;           /* rank 0 shows the sweep's progress on stderr (tp/progress.h) */
};

/* Check j before any rank starts, with the group's options as given
 * (g->comm.transport is --transport's: -P has not implied ofi yet).
 * Returns 0; on error TP_EUSAGE naming the options that do not go
 * together. */
int tp_coll_job_check(const struct tp_coll_job *j, const struct tp_group_opts *g,
                      tp_error *err);

/* Check j once the launcher is known (tp_group_opts.launcher_name set)
 * and before any rank starts: --root names a rank, some size of --sizes
 * holds at least one element (one block of n for the kinds whose buffers
 * are n blocks; the sweep skips the sizes that do not, and a warning says
 * how many), and with the local launcher every backend is ready (a
 * backend that needs ranks from another launcher cannot be). With another
 * launcher the rank count comes at boot: --root and the blocks are then
 * checked against one rank, and again by the run. TP_EUSAGE naming the
 * option. */
int tp_coll_job_check_group(const struct tp_coll_job *j, const struct tp_group_opts *g,
                            tp_error *err);

/* The options every rank must share (compared at boot), which are also the
 * result document's config. New reference. */
json_t *tp_coll_job_config(const struct tp_coll_job *j, const struct tp_group_opts *g);

/* Run the sweep of j through each of its backends on the group of g
 * (tp_group_main), rank 0 printing the table to j->table: a row per size as
 * it is measured and, with several backends, busbw per backend at the end.
 * Returns 0, the run's error (*speak as tp_group_main's), or TP_ECHECK
 * when elements were wrong. */
int tp_coll_main(struct tp_coll_job *j, const struct tp_group_opts *g, bool *speak,
                 tp_error *err);

/* The table (src/coll/table.c), in nccl-tests' columns plus the algorithm
 * and arrival skew. The header: the run's collective, ranks, hosts and
 * channels (c), and the column names. A row: one entry of the result's
 * "sizes". The comparison after a sweep through several backends: busbw
 * per size and backend, and each backend's ratio to the first's. Each
 * flushes f; none fails. */
void tp_coll_print_header(FILE *f, const struct tp_coll_job *j, const struct tp_group_opts *g,
                          const struct tp_comm *c);
void tp_coll_print_row(FILE *f, const json_t *size_entry);
void tp_coll_print_comparison(FILE *f, const json_t *results, const struct tp_coll_backends *l);

/* Allreduce of accumulators that are already wide fixed-point words
 * (include/tp/fixed.h; count elements of tp_fx_words(dtype) words, buffers
 * from tp_comm_alloc): for callers that sum several local contributions
 * exactly before the ranks combine theirs (a rank's gradient over its
 * samples). Round with tp_fx_store afterwards. */
int tp_coll_allreduce_fx(struct tp_comm *c, enum tp_dtype dtype, const uint64_t *send,
                         uint64_t *recv, size_t count, const char *algo, size_t chunk_bytes,
                         tp_error *err);

#endif
