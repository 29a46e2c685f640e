/* The GPU path: device memory, NCCL and cuBLAS for `--mem cuda`,
 * `coll --backend nccl` and `step --compute gpu`.
 *
 * Optional twice over. At build time: meson's gpu option (auto, enabled,
 * disabled) compiles this module against the CUDA toolkit's headers when
 * they are found; without them every entry point below says plainly that
 * the GPU path is not built. At run time: the CUDA runtime, NCCL and cuBLAS
 * are loaded with dlopen by the sonames the build's headers name
 * (libcudart.so.13, libnccl.so.2, libcublas.so.13), so a binary built with
 * the GPU path still starts, and runs every other command, on a machine with
 * neither a GPU nor CUDA's libraries.
 *
 * One struct tp_gpu per rank: one device (the rank's index among the ranks
 * of its host, modulo the devices visible, as nccl-tests and torchrun pick
 * them), one stream, and, when asked, an NCCL communicator and a cuBLAS
 * handle. Every wait on the device has a deadline: a collective whose peer
 * died is aborted (ncclCommAbort) and reported, never waited on forever. */
#ifndef TP_GPU_H
#define TP_GPU_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tp/dtype.h"
#include "tp/error.h"

struct tp_gpu;

/* True when this binary was built with the GPU path. */
bool tp_gpu_built(void);

/* One line for --version and the refusals: the CUDA, NCCL and cuBLAS
 * versions built against, or why the path is not built. Static storage. */
const char *tp_gpu_build_line(void);

enum { TP_GPU_NCCL = 1u, TP_GPU_CUBLAS = 2u };

struct tp_gpu_opts {
    const char *what;  /* the option that asked ("--mem cuda"), to name in errors */
    int device;        /* device index; -1: local_rank modulo the devices visible */
    int local_rank;    /* this rank's index among the ranks of its host */
    unsigned need;     /* TP_GPU_NCCL, TP_GPU_CUBLAS: libraries to load as well */
    uint64_t timeout_ns; /* deadline of every wait on the device (0: 60 s) */
};

/* Load the libraries, pick and initialise the device, create the stream.
 * Errors are TP_EUSAGE (exit 2) and name o->what: the path not built, a
 * library that cannot be loaded, no CUDA device or driver (with the
 * runtime's own words), a device index out of range. */
int tp_gpu_open(const struct tp_gpu_opts *o, struct tp_gpu **out, tp_error *err);

/* The devices TP_GPU_EMULATE=N asks for (N; 0 unset, or where the GPU
 * path is not built, as then there is nothing to emulate). validate runs
 * its GPU compute tests (the SDC screen's) on them; not NCCL's. */
int tp_gpu_emulated_devices(void);

/* The devices this host has (the emulated ones under TP_GPU_EMULATE), as
 * counted when g was opened; 0 where the path is not built. */
int tp_gpu_devices(const struct tp_gpu *g);

/* The device index in use (what FI_HMEM registration names). */
int tp_gpu_device(const struct tp_gpu *g);

/* True when g is the TP_GPU_EMULATE=N test double: N devices whose memory
 * is host memory and whose matrix product runs on the CPU, no NCCL. It lets
 * machines without a GPU exercise what surrounds the device calls (staging,
 * checks, the step's GPU path, net's staged flows); documents record it. */
bool tp_gpu_emulated(const struct tp_gpu *g);

/* Release the NCCL communicator, cuBLAS handle, buffers and stream; g may be NULL. */
void tp_gpu_close(struct tp_gpu *g);

/* Provenance: device name, index, PCI bus id, memory, compute capability,
 * driver and runtime versions, NCCL and cuBLAS versions. New reference. */
json_t *tp_gpu_info(const struct tp_gpu *g);

/* Device memory (cudaMalloc; never managed memory). Freed by tp_gpu_free or
 * tp_gpu_close. TP_ENOMEM naming the size when the device has no room. */
int tp_gpu_alloc(struct tp_gpu *g, size_t bytes, void **dptr, tp_error *err);
void tp_gpu_free(struct tp_gpu *g, void *dptr);

/* Copies and fill on the rank's stream, complete when they return. The
 * stream functions may be called from one thread while another runs
 * tp_gpu_gemm. */
int tp_gpu_h2d(struct tp_gpu *g, void *dst, const void *src, size_t bytes, tp_error *err);
int tp_gpu_d2h(struct tp_gpu *g, void *dst, const void *src, size_t bytes, tp_error *err);
int tp_gpu_memset(struct tp_gpu *g, void *dst, int byte, size_t bytes, tp_error *err);

/* Page-lock host memory that staging copies use (cudaHostRegister), so
 * they run at DMA speed. Returns true when it was pinned; best effort. */
bool tp_gpu_pin(struct tp_gpu *g, void *host, size_t bytes);
void tp_gpu_unpin(struct tp_gpu *g, void *host);

/* Wait for everything queued on the stream, within the deadline. */
int tp_gpu_sync(struct tp_gpu *g, tp_error *err);

/* ---- NCCL ---- */

#define TP_GPU_NCCL_ID_HEX 257 /* 128-byte unique id as hex, with its NUL */

/* A fresh NCCL unique id as hex (rank 0 makes it; the boot group carries it). */
int tp_gpu_nccl_id(struct tp_gpu *g, char hex[TP_GPU_NCCL_ID_HEX], tp_error *err);

/* Join the NCCL communicator of nranks ranks named by id_hex (collective). */
int tp_gpu_nccl_init(struct tp_gpu *g, int nranks, int rank, const char *id_hex, tp_error *err);

/* The collectives as NCCL offers them; counts as struct tp_coll_args counts them. */
enum tp_gpu_nccl_op {
    TP_NCCL_ALLREDUCE,
    TP_NCCL_REDUCE_SCATTER,
    TP_NCCL_ALLGATHER,
    TP_NCCL_BROADCAST,
    TP_NCCL_REDUCE,
    TP_NCCL_ALLTOALL, /* grouped ncclSend/ncclRecv, count elements per peer */
    TP_NCCL_SENDRECV, /* send to rank+1, receive from rank-1 */
};

struct tp_gpu_nccl_args {
    enum tp_gpu_nccl_op op;
    enum tp_dtype dtype;
    enum tp_redop redop;
    const void *send; /* device memory */
    void *recv;       /* device memory */
    size_t count;
    int root;
};

/* Run one collective on the stream and wait for it. TP_ETIMEOUT (the
 * communicator aborted) when it does not finish within the deadline;
 * TP_EPEER with NCCL's words when NCCL reports an asynchronous error. */
int tp_gpu_nccl_run(struct tp_gpu *g, const struct tp_gpu_nccl_args *a, tp_error *err);

/* NCCL's codes for a dtype and a reduction, or -1 when NCCL has none
 * (every trainpath dtype and redop has one; -1 without the GPU path). */
int tp_gpu_nccl_dtype(enum tp_dtype t);
int tp_gpu_nccl_redop(enum tp_redop op);

/* ---- compute (cuBLAS) ---- */

/* Prepare the compute kernel: three n x n bf16 matrices with f32
 * accumulation (the shape of a transformer's linear layers), filled with
 * fixed values. */
int tp_gpu_gemm_init(struct tp_gpu *g, unsigned n, tp_error *err);

/* Run reps matrix products back to back and wait for them. They run on a
 * compute stream of their own, so another thread's copies and collectives
 * (the rank's stream) overlap them, as DDP overlaps its buckets. */
int tp_gpu_gemm(struct tp_gpu *g, uint64_t reps, tp_error *err);

/* Floating-point operations of one product of n x n matrices (2 n^3). */
double tp_gpu_gemm_flops(unsigned n);

/* How many products of measured per_ns each fill target_ns (at least 1
 * when target_ns > 0, else 0); the calibration of --compute-ms. */
uint64_t tp_gpu_gemm_reps(double target_ns, double per_ns);

/* The matrix side for a product that takes about want_ns on a device that
 * did one product of side n0 in t0_ns (cubic scaling, rounded to a multiple
 * of 256, within [256, 16384]); keeps one product well under a step's
 * compute so reps can be counted finely. */
unsigned tp_gpu_gemm_side(unsigned n0, double t0_ns, double want_ns);

/* ---- the SDC screen's product (cuBLAS, f32) ---- */

/* Prepare y = x w for n x n row-major f32 matrices (n 1 .. 4096), w fixed:
 * copied to the device once. cuBLAS in its pedantic math mode (plain f32:
 * no TF32, no reduced precision), so the product is the same bits on
 * every run on devices of the same architecture and SM count with the
 * same cuBLAS version (cuBLAS's reproducibility rule); not the CPU's bits.
 * Opened with TP_GPU_CUBLAS. The emulated device sums in its own order. */
int tp_gpu_sdc_init(struct tp_gpu *g, unsigned n, const float *w, tp_error *err);

/* y = x w (x and y on the host): x copied in, cublasSgemm, y copied out,
 * on the compute stream, waited for within the deadline. */
int tp_gpu_sdc_product(struct tp_gpu *g, const float *x, float *y, tp_error *err);

#endif
