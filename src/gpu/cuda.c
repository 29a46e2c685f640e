/* The GPU path proper (built with -Dgpu): the CUDA runtime, NCCL and cuBLAS
 * loaded with dlopen by the sonames of the headers this file was compiled
 * against, so their types and calling conventions are the headers' own
 * (each pointer is declared with __typeof__ of the real prototype) while
 * the binary needs none of the libraries to start.
 *
 * Waits never block inside the driver: the stream is polled
 * (cudaStreamQuery) against the deadline, and with NCCL its asynchronous
 * error too; the communicator is non-blocking (config.blocking = 0) so
 * that its set-up, which waits for every rank, has the same deadline. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include "tp/clock.h"
#include "tp/gpu.h"

#define STR_(x) #x
#define STR(x) STR_(x)
#define CUDART_SONAME "libcudart.so." STR(TP_CUDART_MAJOR)
#define CUBLAS_SONAME "libcublas.so." STR(CUBLAS_VER_MAJOR)
#define NCCL_SONAME "libnccl.so." STR(NCCL_MAJOR)

#define FN(name) __typeof__(&name) name

struct cudart {
    void *h;
    FN(cudaGetErrorString);
    FN(cudaGetDeviceCount);
    FN(cudaSetDevice);
    FN(cudaGetDeviceProperties);
    FN(cudaDeviceGetPCIBusId);
    FN(cudaDriverGetVersion);
    FN(cudaRuntimeGetVersion);
    FN(cudaMalloc);
    FN(cudaFree);
    FN(cudaMemcpyAsync);
    FN(cudaMemsetAsync);
    FN(cudaStreamCreateWithFlags);
    FN(cudaStreamDestroy);
    FN(cudaStreamQuery);
    FN(cudaHostRegister);
    FN(cudaHostUnregister);
    FN(cudaMemGetInfo);
};

struct nccl {
    void *h;
    FN(ncclGetVersion);
    FN(ncclGetUniqueId);
    FN(ncclCommInitRankConfig);
    FN(ncclCommGetAsyncError);
    FN(ncclCommAbort);
    FN(ncclCommFinalize);
    FN(ncclCommDestroy);
    FN(ncclGetErrorString);
    FN(ncclAllReduce);
    FN(ncclReduceScatter);
    FN(ncclAllGather);
    FN(ncclBroadcast);
    FN(ncclReduce);
    FN(ncclSend);
    FN(ncclRecv);
    FN(ncclGroupStart);
    FN(ncclGroupEnd);
};

struct cublas {
    void *h;
    FN(cublasCreate_v2);
    FN(cublasDestroy_v2);
    FN(cublasSetStream_v2);
    FN(cublasGetVersion_v2);
    FN(cublasGemmEx);
    FN(cublasSgemm_v2);
    FN(cublasSetMathMode);
};

struct tp_gpu {
    struct cudart rt;
    struct nccl nc;
    struct cublas bl;
    const char *what;
    int device;
    uint64_t timeout_ns;
    cudaStream_t stream;  /* copies and NCCL */
    cudaStream_t cstream; /* the compute kernel's own, as frameworks keep
                             compute and communication on separate streams
                             so that they overlap */
    ncclComm_t comm;
    int nranks, rank;
    cublasHandle_t blas;
    void *ga, *gb, *gc; /* the compute kernel's matrices */
    unsigned gemm_n;
    float *sx, *sw, *sy; /* the SDC screen's product: x, w, y */
    unsigned sdc_n;
    int ndev;            /* devices on this host (emulated ones included) */
    bool emu; /* TP_GPU_EMULATE: a test double of the device (below) */
};

/* ---- TP_GPU_EMULATE=N (a test hook) ----
 *
 * N devices whose memory is host memory and whose matrix product runs on
 * the CPU (f32), so that machines without a GPU test what surrounds the
 * device calls: staging, the check through device buffers, the step's GPU
 * compute and GPU-resident buckets, net's staged flows. It says nothing
 * about CUDA itself (no library is loaded) and offers no NCCL. Documents
 * record "emulated": true. */
static int emu_devices(void)
{
    const char *v = getenv("TP_GPU_EMULATE");
    int n = v ? atoi(v) : 0;
    return n > 0 ? n : 0;
}

static void emu_gemm(const struct tp_gpu *g)
{
    size_t n = g->gemm_n;
    const float *a = g->ga, *b = g->gb;
    float *c = g->gc;
    memset(c, 0, n * n * sizeof *c);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < n; k++) {
            float x = a[i * n + k];
            for (size_t j = 0; j < n; j++)
                c[i * n + j] += x * b[k * n + j];
        }
}

bool tp_gpu_built(void)
{
    return true;
}

const char *tp_gpu_build_line(void)
{
    static char line[160];
    if (!line[0])
        snprintf(line, sizeof line,
                 "GPU path built: CUDA runtime %d.%d, NCCL %d.%d.%d, cuBLAS %d.%d "
                 "(loaded at run time)",
                 CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10, NCCL_MAJOR, NCCL_MINOR,
                 NCCL_PATCH, CUBLAS_VER_MAJOR, CUBLAS_VER_MINOR);
    return line;
}

/* dlopen soname, or the configure-time library folder's copy of it. */
static void *load(const char *soname, tp_error *err, const char *what)
{
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
#ifdef TP_CUDA_LIBDIR
    if (!h) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", TP_CUDA_LIBDIR, soname);
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
#endif
    if (!h)
        tp_error_set(err, TP_EUSAGE, "%s: cannot load %s (%s); install CUDA's libraries or "
                     "set LD_LIBRARY_PATH", what, soname, dlerror());
    return h;
}

#define SYM(lib, name)                                                                        \
    do {                                                                                      \
        if (!((lib)->name = (__typeof__((lib)->name))dlsym((lib)->h, #name)))                 \
            return tp_error_set(err, TP_EUSAGE, "%s: %s has no symbol %s", what, soname,      \
                                #name);                                                       \
    } while (0)

static int load_cudart(struct cudart *r, const char *what, tp_error *err)
{
    const char *soname = CUDART_SONAME;
    if (!(r->h = load(soname, err, what)))
        return err->code;
    SYM(r, cudaGetErrorString);
    SYM(r, cudaGetDeviceCount);
    SYM(r, cudaSetDevice);
    SYM(r, cudaGetDeviceProperties);
    SYM(r, cudaDeviceGetPCIBusId);
    SYM(r, cudaDriverGetVersion);
    SYM(r, cudaRuntimeGetVersion);
    SYM(r, cudaMalloc);
    SYM(r, cudaFree);
    SYM(r, cudaMemcpyAsync);
    SYM(r, cudaMemsetAsync);
    SYM(r, cudaStreamCreateWithFlags);
    SYM(r, cudaStreamDestroy);
    SYM(r, cudaStreamQuery);
    SYM(r, cudaHostRegister);
    SYM(r, cudaHostUnregister);
    SYM(r, cudaMemGetInfo);
    return 0;
}

static int load_nccl(struct nccl *n, const char *what, tp_error *err)
{
    const char *soname = NCCL_SONAME;
    if (!(n->h = load(soname, err, what)))
        return err->code;
    SYM(n, ncclGetVersion);
    SYM(n, ncclGetUniqueId);
    SYM(n, ncclCommInitRankConfig);
    SYM(n, ncclCommGetAsyncError);
    SYM(n, ncclCommAbort);
    SYM(n, ncclCommFinalize);
    SYM(n, ncclCommDestroy);
    SYM(n, ncclGetErrorString);
    SYM(n, ncclAllReduce);
    SYM(n, ncclReduceScatter);
    SYM(n, ncclAllGather);
    SYM(n, ncclBroadcast);
    SYM(n, ncclReduce);
    SYM(n, ncclSend);
    SYM(n, ncclRecv);
    SYM(n, ncclGroupStart);
    SYM(n, ncclGroupEnd);
    return 0;
}

static int load_cublas(struct cublas *b, const char *what, tp_error *err)
{
    const char *soname = CUBLAS_SONAME;
    if (!(b->h = load(soname, err, what)))
        return err->code;
    SYM(b, cublasCreate_v2);
    SYM(b, cublasDestroy_v2);
    SYM(b, cublasSetStream_v2);
    SYM(b, cublasGetVersion_v2);
    SYM(b, cublasGemmEx);
    SYM(b, cublasSgemm_v2);
    SYM(b, cublasSetMathMode);
    return 0;
}

/* The CUDA runtime's current device is per thread, and the comm, flow and
 * compute threads that share g did not choose it: make it g's before any
 * call that works on the device. */
static _Thread_local int cur_dev = -1;

static void use(struct tp_gpu *g)
{
    if (g->emu)
        return;
    if (cur_dev != g->device && g->rt.cudaSetDevice(g->device) == cudaSuccess)
        cur_dev = g->device;
}

static int cuda_fail(struct tp_gpu *g, cudaError_t e, const char *call, tp_error *err)
{
    return tp_error_set(err, e == cudaErrorMemoryAllocation ? TP_ENOMEM : TP_ESYS,
                        "GPU %d: %s: %s", g->device, call, g->rt.cudaGetErrorString(e));
}

/* The device o asks for among n: --gpu, else the local rank modulo n. */
static int pick_device(const struct tp_gpu_opts *o, int n)
{
    return o->device >= 0 ? o->device : (o->local_rank > 0 ? o->local_rank : 0) % n;
}

int tp_gpu_open(const struct tp_gpu_opts *o, struct tp_gpu **out, tp_error *err)
{
    *out = NULL;
    const char *what = o->what ? o->what : "GPU";
    struct tp_gpu *g = calloc(1, sizeof *g);
    if (!g)
        return tp_error_set(err, TP_ENOMEM, "%s: GPU state", what);
    g->what = what;
    g->timeout_ns = o->timeout_ns ? o->timeout_ns : 60000000000ull;
    g->device = -1;
    int nemu = emu_devices();
    if (nemu) {
        g->emu = true;
        if (o->need & TP_GPU_NCCL) {
            free(g);
            return tp_error_set(err, TP_EUSAGE, "%s: NCCL is not emulated (TP_GPU_EMULATE "
                                "emulates device memory and compute only)", what);
        }
        g->device = pick_device(o, nemu);
        g->ndev = nemu;
        if (g->device >= nemu) {
            free(g);
            return tp_error_set(err, TP_EUSAGE, "%s: device %d: %d emulated device(s)", what,
                                o->device, nemu);
        }
        *out = g;
        return 0;
    }
    int rc = load_cudart(&g->rt, what, err);
    if (rc == 0 && (o->need & TP_GPU_NCCL))
        rc = load_nccl(&g->nc, what, err);
    if (rc == 0 && (o->need & TP_GPU_CUBLAS))
        rc = load_cublas(&g->bl, what, err);
    int ndev = 0;
    if (rc == 0) {
        cudaError_t e = g->rt.cudaGetDeviceCount(&ndev);
        if (e != cudaSuccess || ndev < 1)
            rc = tp_error_set(err, TP_EUSAGE, "%s: no CUDA device on this host (%s)", what,
                              e != cudaSuccess ? g->rt.cudaGetErrorString(e)
                                               : "the runtime sees 0 devices");
    }
    if (rc == 0) {
        g->device = pick_device(o, ndev);
        g->ndev = ndev;
        if (g->device >= ndev)
            rc = tp_error_set(err, TP_EUSAGE, "%s: device %d: this host has %d CUDA device(s)",
                              what, g->device, ndev);
    }
    cudaError_t e;
    if (rc == 0 && (e = g->rt.cudaSetDevice(g->device)) != cudaSuccess)
        rc = cuda_fail(g, e, "cudaSetDevice", err);
    if (rc == 0)
        cur_dev = g->device;
    if (rc == 0 && (e = g->rt.cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking)) !=
                       cudaSuccess)
        rc = cuda_fail(g, e, "cudaStreamCreateWithFlags", err);
    if (rc == 0 && (o->need & TP_GPU_CUBLAS) &&
        (e = g->rt.cudaStreamCreateWithFlags(&g->cstream, cudaStreamNonBlocking)) != cudaSuccess)
        rc = cuda_fail(g, e, "cudaStreamCreateWithFlags", err);
    if (rc == 0 && (o->need & TP_GPU_CUBLAS)) {
        cublasStatus_t s = g->bl.cublasCreate_v2(&g->blas);
        if (s == CUBLAS_STATUS_SUCCESS)
            s = g->bl.cublasSetStream_v2(g->blas, g->cstream);
        if (s != CUBLAS_STATUS_SUCCESS)
            rc = tp_error_set(err, TP_ESYS, "GPU %d: cuBLAS handle: status %d", g->device,
                              (int)s);
    }
    if (rc < 0) {
        tp_gpu_close(g);
        return rc;
    }
    *out = g;
    return 0;
}

int tp_gpu_devices(const struct tp_gpu *g)
{
    return g ? g->ndev : 0;
}

int tp_gpu_device(const struct tp_gpu *g)
{
    return g ? g->device : -1;
}

bool tp_gpu_emulated(const struct tp_gpu *g)
{
    return g && g->emu;
}

void tp_gpu_close(struct tp_gpu *g)
{
    if (!g)
        return;
    void *bufs[] = {g->ga, g->gb, g->gc, g->sx, g->sw, g->sy}; /* host memory when emulated */
    if (g->emu) {
        for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
            free(bufs[i]);
        free(g);
        return;
    }
    if (g->device >= 0 && g->rt.h)
        use(g);
    if (g->comm) {
        /* a non-blocking communicator finalizes in the background: wait for
         * it within the deadline, else abort it */
        ncclResult_t r = g->nc.ncclCommFinalize(g->comm);
        uint64_t t0 = tp_now_ns();
        while (r == ncclInProgress && tp_now_ns() - t0 < g->timeout_ns) {
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
            g->nc.ncclCommGetAsyncError(g->comm, &r);
        }
        if (r == ncclSuccess)
            g->nc.ncclCommDestroy(g->comm);
        else
            g->nc.ncclCommAbort(g->comm);
    }
    if (g->blas)
        g->bl.cublasDestroy_v2(g->blas);
    if (g->rt.h) {
        for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
            if (bufs[i])
                g->rt.cudaFree(bufs[i]);
        if (g->stream)
            g->rt.cudaStreamDestroy(g->stream);
        if (g->cstream)
            g->rt.cudaStreamDestroy(g->cstream);
    }
    /* the libraries stay loaded: CUDA's own exit handlers need them */
    free(g);
}

json_t *tp_gpu_info(const struct tp_gpu *g)
{
    json_t *j = json_pack("{s:b, s:s, s:i}", "built", 1, "build", tp_gpu_build_line(), "device",
                          g->device);
    if (g->emu) {
        json_object_set_new(j, "emulated", json_true());
        json_object_set_new(j, "name", json_string("emulated (TP_GPU_EMULATE: host memory, "
                                                   "CPU matrix product)"));
        return j;
    }
    struct cudaDeviceProp p;
    memset(&p, 0, sizeof p);
    if (g->rt.cudaGetDeviceProperties(&p, g->device) == cudaSuccess) {
        json_object_set_new(j, "name", json_string(p.name));
        json_object_set_new(j, "memory_bytes", json_integer((json_int_t)p.totalGlobalMem));
        char cc[16];
        snprintf(cc, sizeof cc, "%d.%d", p.major, p.minor);
        json_object_set_new(j, "compute_capability", json_string(cc));
        json_object_set_new(j, "multiprocessors", json_integer(p.multiProcessorCount));
    }
    char bus[32];
    if (g->rt.cudaDeviceGetPCIBusId(bus, sizeof bus, g->device) == cudaSuccess)
        json_object_set_new(j, "pci_bus_id", json_string(bus));
    int v = 0;
    if (g->rt.cudaDriverGetVersion(&v) == cudaSuccess)
        json_object_set_new(j, "driver_cuda_version", json_integer(v));
    if (g->rt.cudaRuntimeGetVersion(&v) == cudaSuccess)
        json_object_set_new(j, "runtime_version", json_integer(v));
    if (g->nc.h && g->nc.ncclGetVersion(&v) == ncclSuccess)
        json_object_set_new(j, "nccl_version", json_integer(v));
    if (g->blas && g->bl.cublasGetVersion_v2(g->blas, &v) == CUBLAS_STATUS_SUCCESS)
        json_object_set_new(j, "cublas_version", json_integer(v));
    return j;
}

int tp_gpu_alloc(struct tp_gpu *g, size_t bytes, void **dptr, tp_error *err)
{
    if (g->emu) {
        if (posix_memalign(dptr, 256, bytes ? bytes : 1) != 0) {
            *dptr = NULL;
            return tp_error_set(err, TP_ENOMEM, "emulated GPU %d: %zu bytes", g->device, bytes);
        }
        return 0;
    }
    use(g);
    *dptr = NULL;
    cudaError_t e = g->rt.cudaMalloc(dptr, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        *dptr = NULL;
        size_t fr = 0, tot = 0;
        g->rt.cudaMemGetInfo(&fr, &tot);
        return tp_error_set(err, TP_ENOMEM, "GPU %d: cudaMalloc of %zu bytes (%zu of %zu free): %s",
                            g->device, bytes, fr, tot, g->rt.cudaGetErrorString(e));
    }
    return 0;
}

void tp_gpu_free(struct tp_gpu *g, void *dptr)
{
    if (g && dptr && g->emu) {
        free(dptr);
    } else if (g && dptr) {
        use(g);
        g->rt.cudaFree(dptr);
    }
}

/* Poll the stream until it drains, NCCL's asynchronous error too when a
 * communicator exists; past the deadline the communicator is aborted. */
static int wait_on(struct tp_gpu *g, cudaStream_t st, const char *what, tp_error *err)
{
    uint64_t t0 = tp_now_ns();
    unsigned spins = 0;
    for (;;) {
        cudaError_t e = g->rt.cudaStreamQuery(st);
        if (e == cudaSuccess)
            return 0;
        if (e != cudaErrorNotReady)
            return cuda_fail(g, e, what, err);
        if (g->comm && st == g->stream) {
            ncclResult_t a = ncclSuccess;
            g->nc.ncclCommGetAsyncError(g->comm, &a);
            if (a != ncclSuccess && a != ncclInProgress) {
                g->nc.ncclCommAbort(g->comm);
                g->comm = NULL;
                return tp_error_set(err, TP_EPEER, "GPU %d: %s: NCCL: %s", g->device, what,
                                    g->nc.ncclGetErrorString(a));
            }
        }
        if (tp_now_ns() - t0 > g->timeout_ns) {
            if (g->comm && st == g->stream) {
                g->nc.ncclCommAbort(g->comm);
                g->comm = NULL;
            }
            return tp_error_set(err, TP_ETIMEOUT, "GPU %d: %s did not finish in %.0f s%s",
                                g->device, what, (double)g->timeout_ns / 1e9,
                                g->nranks && st == g->stream
                                    ? " (a rank of the NCCL communicator is missing?)"
                                    : "");
        }
        if (++spins > 1000) { /* short operations spin; long ones sleep a little */
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        }
    }
}

static int wait_stream(struct tp_gpu *g, const char *what, tp_error *err)
{
    return wait_on(g, g->stream, what, err);
}

int tp_gpu_sync(struct tp_gpu *g, tp_error *err)
{
    if (g->emu)
        return 0;
    use(g);
    int rc = wait_stream(g, "stream", err);
    return rc == 0 && g->cstream ? wait_on(g, g->cstream, "compute stream", err) : rc;
}

int tp_gpu_h2d(struct tp_gpu *g, void *dst, const void *src, size_t bytes, tp_error *err)
{
    if (g->emu) {
        memmove(dst, src, bytes);
        return 0;
    }
    use(g);
    cudaError_t e = g->rt.cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, g->stream);
    return e != cudaSuccess ? cuda_fail(g, e, "cudaMemcpy to the device", err)
                            : wait_stream(g, "copy to the device", err);
}

int tp_gpu_d2h(struct tp_gpu *g, void *dst, const void *src, size_t bytes, tp_error *err)
{
    if (g->emu) {
        memmove(dst, src, bytes);
        return 0;
    }
    use(g);
    cudaError_t e = g->rt.cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, g->stream);
    return e != cudaSuccess ? cuda_fail(g, e, "cudaMemcpy from the device", err)
                            : wait_stream(g, "copy from the device", err);
}

int tp_gpu_memset(struct tp_gpu *g, void *dst, int byte, size_t bytes, tp_error *err)
{
    if (g->emu) {
        memset(dst, byte, bytes);
        return 0;
    }
    use(g);
    cudaError_t e = g->rt.cudaMemsetAsync(dst, byte, bytes, g->stream);
    return e != cudaSuccess ? cuda_fail(g, e, "cudaMemset", err)
                            : wait_stream(g, "cudaMemset", err);
}

bool tp_gpu_pin(struct tp_gpu *g, void *host, size_t bytes)
{
    if (g && g->emu)
        return false;
    if (g)
        use(g);
    return g && host && bytes &&
           g->rt.cudaHostRegister(host, bytes, cudaHostRegisterDefault) == cudaSuccess;
}

void tp_gpu_unpin(struct tp_gpu *g, void *host)
{
    if (g && host && !g->emu)
        g->rt.cudaHostUnregister(host);
}

/* ---- NCCL ---- */

/* Bytes per element of an NCCL type: NCCL's own types (uint8 among them)
 * are more than trainpath's, so tp_dtype_size (core/dtype.c) cannot answer
 * for a value NCCL hands back. */
static size_t type_bytes(ncclDataType_t t)
{
    switch (t) {
    case ncclInt8:
    case ncclUint8:
        return 1;
    case ncclFloat16:
    case ncclBfloat16:
        return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32:
        return 4;
    default:
        return 8;
    }
}

int tp_gpu_nccl_dtype(enum tp_dtype t)
{
    switch (t) {
    case TP_F32:
        return ncclFloat32;
    case TP_F64:
        return ncclFloat64;
    case TP_BF16:
        return ncclBfloat16;
    case TP_F16:
        return ncclFloat16;
    case TP_I32:
        return ncclInt32;
    case TP_I64:
        return ncclInt64;
    default:
        return -1;
    }
}

int tp_gpu_nccl_redop(enum tp_redop op)
{
    switch (op) {
    case TP_SUM:
        return ncclSum;
    case TP_PROD:
        return ncclProd;
    case TP_MIN:
        return ncclMin;
    case TP_MAX:
        return ncclMax;
    case TP_AVG:
        return ncclAvg;
    default:
        return -1;
    }
}

int tp_gpu_nccl_id(struct tp_gpu *g, char hex[TP_GPU_NCCL_ID_HEX], tp_error *err)
{
    ncclUniqueId id;
    ncclResult_t r = g->nc.ncclGetUniqueId(&id);
    if (r != ncclSuccess)
        return tp_error_set(err, TP_ESYS, "ncclGetUniqueId: %s", g->nc.ncclGetErrorString(r));
    for (size_t i = 0; i < sizeof id.internal; i++)
        snprintf(hex + 2 * i, 3, "%02x", (unsigned char)id.internal[i]);
    return 0;
}

/* NCCL calls on a non-blocking communicator may answer ncclInProgress:
 * poll its state until it settles, within the deadline. */
static int settle(struct tp_gpu *g, ncclResult_t r, const char *what, tp_error *err)
{
    uint64_t t0 = tp_now_ns();
    while (r == ncclInProgress) {
        if (tp_now_ns() - t0 > g->timeout_ns) {
            g->nc.ncclCommAbort(g->comm);
            g->comm = NULL;
            return tp_error_set(err, TP_ETIMEOUT, "GPU %d: %s: no answer from every rank in "
                                "%.0f s", g->device, what, (double)g->timeout_ns / 1e9);
        }
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
        g->nc.ncclCommGetAsyncError(g->comm, &r);
    }
    if (r != ncclSuccess) {
        if (g->comm)
            g->nc.ncclCommAbort(g->comm);
        g->comm = NULL;
        return tp_error_set(err, TP_EPEER, "GPU %d: %s: %s", g->device, what,
                            g->nc.ncclGetErrorString(r));
    }
    return 0;
}

int tp_gpu_nccl_init(struct tp_gpu *g, int nranks, int rank, const char *id_hex, tp_error *err)
{
    use(g);
    if (!g->nc.h)
        return tp_error_set(err, TP_EUSAGE, "%s: NCCL was not loaded", g->what);
    ncclUniqueId id;
    if (strlen(id_hex) != 2 * sizeof id.internal)
        return tp_error_set(err, TP_EPROTO, "NCCL unique id: %zu hex digits, not %zu",
                            strlen(id_hex), 2 * sizeof id.internal);
    for (size_t i = 0; i < sizeof id.internal; i++) {
        unsigned v;
        if (sscanf(id_hex + 2 * i, "%2x", &v) != 1)
            return tp_error_set(err, TP_EPROTO, "NCCL unique id: not hex at %zu", 2 * i);
        id.internal[i] = (char)v;
    }
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = 0;
    ncclResult_t r = g->nc.ncclCommInitRankConfig(&g->comm, nranks, id, rank, &cfg);
    if (r != ncclSuccess && r != ncclInProgress) {
        g->comm = NULL;
        return tp_error_set(err, TP_EPEER, "GPU %d: ncclCommInitRank (rank %d of %d): %s",
                            g->device, rank, nranks, g->nc.ncclGetErrorString(r));
    }
    g->nranks = nranks;
    g->rank = rank;
    return settle(g, r, "ncclCommInitRank", err);
}

int tp_gpu_nccl_run(struct tp_gpu *g, const struct tp_gpu_nccl_args *a, tp_error *err)
{
    use(g);
    if (!g->comm)
        return tp_error_set(err, TP_EPROTO, "GPU %d: no NCCL communicator (aborted?)", g->device);
    int dt = tp_gpu_nccl_dtype(a->dtype), op = tp_gpu_nccl_redop(a->redop);
    if (dt < 0 || op < 0)
        return tp_error_set(err, TP_EUSAGE, "NCCL has no code for dtype %d or redop %d",
                            (int)a->dtype, (int)a->redop);
    ncclDataType_t t = (ncclDataType_t)dt;
    ncclRedOp_t o = (ncclRedOp_t)op;
    size_t es = type_bytes(t);
    int n = g->nranks, me = g->rank;
    ncclResult_t r = ncclSuccess;
    const char *what = "NCCL collective";
    switch (a->op) {
    case TP_NCCL_ALLREDUCE:
        what = "ncclAllReduce";
        r = g->nc.ncclAllReduce(a->send, a->recv, a->count, t, o, g->comm, g->stream);
        break;
    case TP_NCCL_REDUCE_SCATTER:
        what = "ncclReduceScatter";
        r = g->nc.ncclReduceScatter(a->send, a->recv, a->count, t, o, g->comm, g->stream);
        break;
    case TP_NCCL_ALLGATHER:
        what = "ncclAllGather";
        r = g->nc.ncclAllGather(a->send, a->recv, a->count, t, g->comm, g->stream);
        break;
    case TP_NCCL_BROADCAST:
        what = "ncclBroadcast";
        r = g->nc.ncclBroadcast(a->send, a->recv, a->count, t, a->root, g->comm, g->stream);
        break;
    case TP_NCCL_REDUCE:
        what = "ncclReduce";
        r = g->nc.ncclReduce(a->send, a->recv, a->count, t, o, a->root, g->comm, g->stream);
        break;
    case TP_NCCL_ALLTOALL:
        what = "ncclSend/ncclRecv (alltoall)";
        r = g->nc.ncclGroupStart();
        for (int p = 0; r == ncclSuccess && p < n; p++) {
            r = g->nc.ncclSend((const char *)a->send + (size_t)p * a->count * es, a->count, t, p,
                               g->comm, g->stream);
            if (r == ncclSuccess)
                r = g->nc.ncclRecv((char *)a->recv + (size_t)p * a->count * es, a->count, t, p,
                                   g->comm, g->stream);
        }
        r = r == ncclSuccess ? g->nc.ncclGroupEnd() : (g->nc.ncclGroupEnd(), r);
        break;
    case TP_NCCL_SENDRECV:
        what = "ncclSend/ncclRecv";
        r = g->nc.ncclGroupStart();
        if (r == ncclSuccess)
            r = g->nc.ncclSend(a->send, a->count, t, (me + 1) % n, g->comm, g->stream);
        if (r == ncclSuccess)
            r = g->nc.ncclRecv(a->recv, a->count, t, (me - 1 + n) % n, g->comm, g->stream);
        r = r == ncclSuccess ? g->nc.ncclGroupEnd() : (g->nc.ncclGroupEnd(), r);
        break;
    }
    int rc = settle(g, r, what, err);
    return rc < 0 ? rc : wait_stream(g, what, err);
}

/* ---- compute (cuBLAS) ---- */

int tp_gpu_gemm_init(struct tp_gpu *g, unsigned n, tp_error *err)
{
    if (g->emu) {
        if (n < 16 || n > 32768)
            return tp_error_set(err, TP_EUSAGE, "matrix side %u: 16 to 32768", n);
        free(g->ga);
        free(g->gb);
        free(g->gc);
        size_t elems = (size_t)n * n;
        g->ga = malloc(elems * sizeof(float));
        g->gb = malloc(elems * sizeof(float));
        g->gc = malloc(elems * sizeof(float));
        g->gemm_n = 0;
        if (!g->ga || !g->gb || !g->gc)
            return tp_error_set(err, TP_ENOMEM, "emulated %u x %u matrices", n, n);
        for (size_t i = 0; i < elems; i++)
            ((float *)g->ga)[i] = ((float *)g->gb)[i] = (float)((int)(i * 7 % 17) - 8) / 64.0f;
        g->gemm_n = n;
        return 0;
    }
    use(g);
    if (!g->blas)
        return tp_error_set(err, TP_EUSAGE, "%s: cuBLAS was not loaded", g->what);
    if (n < 16 || n > 32768)
        return tp_error_set(err, TP_EUSAGE, "matrix side %u: 16 to 32768", n);
    tp_gpu_free(g, g->ga);
    tp_gpu_free(g, g->gb);
    tp_gpu_free(g, g->gc);
    g->ga = g->gb = g->gc = NULL;
    g->gemm_n = 0;
    size_t elems = (size_t)n * n, bytes = elems * 2;
    uint16_t *h = malloc(bytes);
    if (!h)
        return tp_error_set(err, TP_ENOMEM, "host copy of a %u x %u matrix", n, n);
    for (size_t i = 0; i < elems; i++) {
        /* small values, exact in bf16 (so its top half is the encoding): no
         * overflow, the same bits each run */
        float f = (float)((int)(i * 7 % 17) - 8) / 64.0f;
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        h[i] = (uint16_t)(u >> 16);
    }
    int rc = tp_gpu_alloc(g, bytes, &g->ga, err);
    if (rc == 0)
        rc = tp_gpu_alloc(g, bytes, &g->gb, err);
    if (rc == 0)
        rc = tp_gpu_alloc(g, bytes, &g->gc, err);
    if (rc == 0)
        rc = tp_gpu_h2d(g, g->ga, h, bytes, err);
    if (rc == 0)
        rc = tp_gpu_h2d(g, g->gb, h, bytes, err);
    free(h);
    if (rc == 0)
        g->gemm_n = n;
    return rc;
}

int tp_gpu_gemm(struct tp_gpu *g, uint64_t reps, tp_error *err)
{
    use(g);
    if (!g->gemm_n)
        return tp_error_set(err, TP_EPROTO, "GPU %d: compute kernel not prepared", g->device);
    if (g->emu) {
        for (uint64_t i = 0; i < reps; i++)
            emu_gemm(g);
        return 0;
    }
    const float alpha = 1.0f, beta = 0.0f;
    int n = (int)g->gemm_n;
    for (uint64_t i = 0; i < reps; i++) {
        cublasStatus_t s =
            g->bl.cublasGemmEx(g->blas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, g->ga,
                               CUDA_R_16BF, n, g->gb, CUDA_R_16BF, n, &beta, g->gc, CUDA_R_16BF,
                               n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        if (s != CUBLAS_STATUS_SUCCESS)
            return tp_error_set(err, TP_ESYS, "GPU %d: cublasGemmEx (%d x %d bf16): status %d",
                                g->device, n, n, (int)s);
    }
    return wait_on(g, g->cstream, "matrix products", err);
}

/* ---- the SDC screen's product (cuBLAS) ---- */

/* The emulated device's own order: every element summed from the last k
 * down, so its chain is not the CPU's (as a real device's is not). */
int tp_gpu_emulated_devices(void)
{
    return emu_devices();
}

static void emu_sdc(const struct tp_gpu *g, const float *x, float *y)
{
    size_t n = g->sdc_n;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            float acc = 0;
            for (size_t k = n; k-- > 0;)
                acc += x[i * n + k] * g->sw[k * n + j];
            y[i * n + j] = acc;
        }
}

int tp_gpu_sdc_init(struct tp_gpu *g, unsigned n, const float *w, tp_error *err)
{
    if (n < 1 || n > 4096)
        return tp_error_set(err, TP_EUSAGE, "SDC matrix side %u: 1 to 4096", n);
    size_t bytes = (size_t)n * n * sizeof(float);
    if (g->emu) {
        g->sx = malloc(bytes);
        g->sw = malloc(bytes);
        g->sy = malloc(bytes);
        if (!g->sx || !g->sw || !g->sy)
            return tp_error_set(err, TP_ENOMEM, "emulated %u x %u matrices", n, n);
        memcpy(g->sw, w, bytes);
        g->sdc_n = n;
        return 0;
    }
    use(g);
    if (!g->blas)
        return tp_error_set(err, TP_EUSAGE, "%s: cuBLAS was not loaded", g->what);
    /* pedantic math: plain f32 (no TF32 tensor-core rounding, no reduced
     * precision anywhere), so the product is the same bits every run on
     * the same architecture, SM count and cuBLAS version */
    cublasStatus_t s = g->bl.cublasSetMathMode(g->blas, CUBLAS_PEDANTIC_MATH);
    if (s != CUBLAS_STATUS_SUCCESS)
        return tp_error_set(err, TP_ESYS, "GPU %d: cublasSetMathMode: status %d", g->device,
                            (int)s);
    int rc = tp_gpu_alloc(g, bytes, (void **)&g->sx, err);
    if (rc == 0)
        rc = tp_gpu_alloc(g, bytes, (void **)&g->sw, err);
    if (rc == 0)
        rc = tp_gpu_alloc(g, bytes, (void **)&g->sy, err);
    cudaError_t e;
    if (rc == 0 && (e = g->rt.cudaMemcpyAsync(g->sw, w, bytes, cudaMemcpyHostToDevice,
                                              g->cstream)) != cudaSuccess)
        rc = cuda_fail(g, e, "cudaMemcpyAsync", err);
    if (rc == 0)
        rc = wait_on(g, g->cstream, "the SDC weights' copy", err);
    if (rc == 0)
        g->sdc_n = n;
    return rc;
}

int tp_gpu_sdc_product(struct tp_gpu *g, const float *x, float *y, tp_error *err)
{
    if (!g->sdc_n)
        return tp_error_set(err, TP_EPROTO, "GPU %d: SDC product not prepared", g->device);
    int n = (int)g->sdc_n;
    size_t bytes = (size_t)n * (size_t)n * sizeof(float);
    if (g->emu) {
        emu_sdc(g, x, y);
        return 0;
    }
    use(g);
    cudaError_t e = g->rt.cudaMemcpyAsync(g->sx, x, bytes, cudaMemcpyHostToDevice, g->cstream);
    if (e != cudaSuccess)
        return cuda_fail(g, e, "cudaMemcpyAsync", err);
    /* row-major y = x w is column-major y' = w' x': the operands swap */
    const float alpha = 1.0f, beta = 0.0f;
    cublasStatus_t s = g->bl.cublasSgemm_v2(g->blas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha,
                                            g->sw, n, g->sx, n, &beta, g->sy, n);
    if (s != CUBLAS_STATUS_SUCCESS)
        return tp_error_set(err, TP_ESYS, "GPU %d: cublasSgemm (%d x %d f32): status %d",
                            g->device, n, n, (int)s);
    if ((e = g->rt.cudaMemcpyAsync(y, g->sy, bytes, cudaMemcpyDeviceToHost, g->cstream)) !=
        cudaSuccess)
        return cuda_fail(g, e, "cudaMemcpyAsync", err);
    return wait_on(g, g->cstream, "the SDC product", err);
}
