/* The parts of the GPU path that need no GPU: the calibration arithmetic of
 * the compute kernel, and, in a build without the GPU path, the entry points
 * that refuse with a message saying so (src/gpu/cuda.c is the real path). */
#include <math.h>

#include "tp/gpu.h"

double tp_gpu_gemm_flops(unsigned n)
{
    return 2.0 * (double)n * (double)n * (double)n;
}

uint64_t tp_gpu_gemm_reps(double target_ns, double per_ns)
{
    if (!(target_ns > 0))
        return 0;
    if (!(per_ns > 0))
        return 1;
    double r = floor(target_ns / per_ns + 0.5);
    return r < 1 ? 1 : r > 1e12 ? (uint64_t)1e12 : (uint64_t)r;
}

unsigned tp_gpu_gemm_side(unsigned n0, double t0_ns, double want_ns)
{
    if (n0 == 0 || !(t0_ns > 0) || !(want_ns > 0))
        return n0 ? n0 : 256;
    double n = (double)n0 * cbrt(want_ns / t0_ns);
    double r = floor(n / 256 + 0.5) * 256;
    return r < 256 ? 256 : r > 16384 ? 16384 : (unsigned)r;
}

#ifndef TP_HAVE_GPU

static int not_built(const char *what, tp_error *err)
{
    return tp_error_set(err, TP_EUSAGE, "%s: %s", what ? what : "GPU", tp_gpu_build_line());
}

bool tp_gpu_built(void)
{
    return false;
}

const char *tp_gpu_build_line(void)
{
    return "the GPU path is not built (this build was configured without CUDA; "
           "meson setup -Dgpu=enabled where CUDA's headers, NCCL and cuBLAS are installed)";
}

int tp_gpu_open(const struct tp_gpu_opts *o, struct tp_gpu **out, tp_error *err)
{
    *out = NULL;
    return not_built(o ? o->what : NULL, err);
}

int tp_gpu_device(const struct tp_gpu *g)
{
    (void)g;
    return -1;
}

bool tp_gpu_emulated(const struct tp_gpu *g)
{
    (void)g;
    return false;
}

void tp_gpu_close(struct tp_gpu *g)
{
    (void)g;
}

json_t *tp_gpu_info(const struct tp_gpu *g)
{
    (void)g;
    return json_pack("{s:b, s:s}", "built", 0, "why", tp_gpu_build_line());
}

int tp_gpu_alloc(struct tp_gpu *g, size_t bytes, void **dptr, tp_error *err)
{
    (void)g, (void)bytes;
    *dptr = NULL;
    return not_built(NULL, err);
}

void tp_gpu_free(struct tp_gpu *g, void *dptr)
{
    (void)g, (void)dptr;
}

int tp_gpu_h2d(struct tp_gpu *g, void *dst, const void *src, size_t bytes, tp_error *err)
{
    (void)g, (void)dst, (void)src, (void)bytes;
    return not_built(NULL, err);
}

int tp_gpu_d2h(struct tp_gpu *g, void *dst, const void *src, size_t bytes, tp_error *err)
{
    (void)g, (void)dst, (void)src, (void)bytes;
    return not_built(NULL, err);
}

int tp_gpu_memset(struct tp_gpu *g, void *dst, int byte, size_t bytes, tp_error *err)
{
    (void)g, (void)dst, (void)byte, (void)bytes;
    return not_built(NULL, err);
}

bool tp_gpu_pin(struct tp_gpu *g, void *host, size_t bytes)
{
    (void)g, (void)host, (void)bytes;
    return false;
}

void tp_gpu_unpin(struct tp_gpu *g, void *host)
{
    (void)g, (void)host;
}

int tp_gpu_sync(struct tp_gpu *g, tp_error *err)
{
    (void)g;
    return not_built(NULL, err);
}

int tp_gpu_nccl_id(struct tp_gpu *g, char hex[TP_GPU_NCCL_ID_HEX], tp_error *err)
{
    (void)g;
    hex[0] = '\0';
    return not_built("--backend nccl", err);
}

int tp_gpu_nccl_init(struct tp_gpu *g, int nranks, int rank, const char *id_hex, tp_error *err)
{
    (void)g, (void)nranks, (void)rank, (void)id_hex;
    return not_built("--backend nccl", err);
}

int tp_gpu_nccl_run(struct tp_gpu *g, const struct tp_gpu_nccl_args *a, tp_error *err)
{
    (void)g, (void)a;
    return not_built("--backend nccl", err);
}

int tp_gpu_nccl_dtype(enum tp_dtype t)
{
    (void)t;
    return -1;
}

int tp_gpu_nccl_redop(enum tp_redop op)
{
    (void)op;
    return -1;
}

int tp_gpu_gemm_init(struct tp_gpu *g, unsigned n, tp_error *err)
{
    (void)g, (void)n;
    return not_built("--compute gpu", err);
}

int tp_gpu_gemm(struct tp_gpu *g, uint64_t reps, tp_error *err)
{
    (void)g, (void)reps;
    return not_built("--compute gpu", err);
}

int tp_gpu_devices(const struct tp_gpu *g)
{
    (void)g;
    return 0;
}

int tp_gpu_emulated_devices(void)
{
    return 0;
}

int tp_gpu_sdc_init(struct tp_gpu *g, unsigned n, const float *w, tp_error *err)
{
    (void)g, (void)n, (void)w;
    return not_built("sdc --gpu", err);
}

int tp_gpu_sdc_product(struct tp_gpu *g, const float *x, float *y, tp_error *err)
{
    (void)g, (void)x, (void)y;
    return not_built("sdc --gpu", err);
}

#endif
