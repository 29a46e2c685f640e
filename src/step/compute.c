/* The compute side of `trainpath step`: the calibrated CPU work, the GPU
 * product calibration and the model's step.
 *
 * compute_ms is spent as calibrated work (a dependent multiply-add chain
 * timed once per rank), or as cuBLAS matrix products of a calibrated side,
 * cut into one slice per bucket so that the comm can overlap it; a
 * recorded workload's slices (between its collectives' readiness) and
 * optimizer step as this rank's recorded rank measured them, either way
 * (rank i replays recorded rank i mod the ranks recorded, so a recorded
 * straggler stays one). The model's forward and backward is real
 * (tp/model.h): per-sample gradients summed in sample order, or exactly,
 * so the weights' hash tells reproducibility. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "step_int.h"
#include "tp/clock.h"
#include "tp/gpu.h"
#include "tp/intr.h"
#include "tp/model.h"

static double work(uint64_t iters, double x)
{
    for (uint64_t i = 0; i < iters; i++)
        x = x * 1.0000000001 + 1e-12;
    return x;
}

/* Iterations of the chain between two looks at tp_intr: about 100 us of it
 * (an iteration is a few ns), so SIGINT ends a slice of any length within a
 * millisecond, at the cost of one relaxed load per 2^15 iterations. The
 * chain is the same cut or whole. */
#define WORK_CHUNK 32768

/* iters of the chain into r->sink, stopping early at an interrupt. */
static int spend(struct rank *r, uint64_t iters, tp_error *err)
{
    while (iters > 0) {
        uint64_t k = iters < WORK_CHUNK ? iters : WORK_CHUNK;
        r->sink = work(k, r->sink);
        iters -= k;
        if (tp_intr_signal())
            return tp_intr_check(err);
    }
    return 0;
}

/* reps matrix products, in runs of at most 10 ms, an interrupt asked
 * between two runs (a minute of products would otherwise be one wait). */
static int gemms(struct rank *r, uint64_t reps, tp_error *err)
{
    uint64_t run = r->gemm_ns > 0 ? (uint64_t)(10e6 / r->gemm_ns) : 1;
    run = run ? run : 1;
    while (reps > 0) {
        uint64_t k = reps < run ? reps : run;
        int rc = tp_gpu_gemm(r->o->gpu, k, err);
        if (rc)
            return rc;
        reps -= k;
        if (tp_intr_signal())
            return tp_intr_check(err);
    }
    return 0;
}

void tp__step_calibrate(struct rank *r)
{
    uint64_t best = UINT64_MAX, n = 2000000;
    for (int i = 0; i < 5; i++) {
        uint64_t t0 = tp_now_ns();
        r->sink = work(n, r->sink);
        uint64_t t = tp_now_ns() - t0;
        best = t < best ? t : best;
    }
    r->work_ns_per_iter = (double)best / (double)n;
}

/* --compute gpu: time the matrix product at a side where one product is
 * a small slice of a bucket's share of compute_ms (at least 8 per slice, so
 * the count rounds finely), then count the products that fill compute_ms. */
int tp__step_calibrate_gpu(struct rank *r, tp_error *err)
{
    const struct tp_step_opts *o = r->o;
    unsigned n = o->gemm_n ? o->gemm_n : 4096;
    double want = o->compute_ms * 1e6 / ((double)o->buckets * 8);
    for (int pass = 0; pass < 3; pass++) {
        int rc = tp_gpu_gemm_init(o->gpu, n, err);
        if (rc == 0)
            rc = tp_gpu_gemm(o->gpu, 3, err); /* warm-up: cuBLAS picks its kernel */
        uint64_t best = UINT64_MAX;
        for (int i = 0; rc == 0 && i < 5; i++) {
            uint64_t t0 = tp_now_ns();
            rc = tp_gpu_gemm(o->gpu, 4, err);
            uint64_t t = tp_now_ns() - t0;
            best = t < best ? t : best;
        }
        if (rc)
            return rc;
        r->gemm_n = n;
        r->gemm_ns = (double)best / 4;
        unsigned n2 = tp_gpu_gemm_side(n, r->gemm_ns, want);
        if (o->gemm_n || !(want > 0) || n2 == n ||
            (r->gemm_ns > want / 4 && r->gemm_ns < want * 2))
            break;
        n = n2;
    }
    r->gemm_reps = tp_gpu_gemm_reps(o->compute_ms * 1e6, r->gemm_ns);
    return 0;
}

/* ns of recorded compute as calibrated work on the CPU, or with --compute
 * gpu as whole matrix products, the fraction of a product left over
 * carried to the next call (so a step's products add up to its time
 * however finely its slices cut it) */
static int recorded(struct rank *r, uint64_t ns, tp_error *err)
{
    if (!r->o->compute_gpu)
        return spend(r, (uint64_t)((double)ns / r->work_ns_per_iter), err);
    double want = (double)ns / r->gemm_ns + r->gemm_carry;
    uint64_t reps = (uint64_t)want;
    r->gemm_carry = want - (double)reps;
    return gemms(r, reps, err);
}

int tp__step_compute_slice(struct rank *r, size_t k, tp_error *err)
{
    const struct tp_step_opts *o = r->o;
    uint64_t B = o->buckets;
    if (o->workload) /* this rank's recorded compute before the step's call k */
        return recorded(r, tp_step_workload_slice_ns(o->workload, (size_t)r->me, r->cur_step, k),
                        err);
    if (k >= B)
        return 0;
    if (o->compute_gpu) {
        uint64_t reps = r->gemm_reps;
        return gemms(r, reps / B + (k == 0 ? reps % B : 0), err);
    }
    uint64_t iters = (uint64_t)(o->compute_ms * 1e6 / r->work_ns_per_iter);
    return spend(r, iters / B + (k == 0 ? iters % B : 0), err);
}

int tp__step_optimizer(struct rank *r, tp_error *err)
{
    const struct tp_step_workload *w = r->o->workload;
    if (!w)
        return 0;
    const struct tp_step_wl_rank *q = &w->ranks[(size_t)r->me % w->nranks];
    return recorded(r, q->optimizer_ns[r->cur_step % w->nsteps], err);
}

/* The model's forward and backward on this rank's share of the batch:
 * per-sample gradients summed in sample order (f32), or kept as columns
 * for the exact sum (exact.c). */
int tp__step_model_step(struct rank *r, const char *buf, tp_error *err)
{
    const struct tp_step_opts *o = r->o;
    size_t gl = tp_model_grad_len(o->dim);
    uint64_t m = tp__step_local_count(r);
    float *g = malloc(gl * sizeof *g);
    if (!g)
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    bool exact = o->reduce == TP_STEP_EXACT;
    memset(r->grad, 0, gl * sizeof *r->grad);
    if (exact) /* past this rank's samples the columns stay zero */
        memset(r->cols, 0, gl * r->col_stride * sizeof *r->cols);
    int rc = 0;
    for (uint64_t j = 0; j < m; j++) {
        const float *x;
        float y;
        uint64_t idx = tp__step_sample_of(o, r->cur_step, (uint64_t)r->me + j * (uint64_t)r->n);
        if (tp_model_record_parse(buf + j * o->sample_bytes, o->dim, idx, &x, &y) != 0) {
            rc = tp_error_set(err, TP_ECHECK, "step dataset: sample %" PRIu64
                              " read back wrong (not the record written)", idx);
            break;
        }
        tp_model_sample_grad(r->w, o->dim, x, y, g);
        if (exact) /* summed exactly once every rank has its columns */
            for (size_t e = 0; e < gl; e++)
                r->cols[e * r->col_stride + j] = g[e];
        else
            for (size_t e = 0; e < gl; e++)
                r->grad[e] += g[e];
    }
    free(g);
    return rc;
}

/* Pin the calling (compute) thread to one core per rank of this host. */
void tp__step_pin(struct rank *r)
{
    int local = tp_boot_local_rank(r->b);
    cpu_set_t allowed, one;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return;
    int want = local % CPU_COUNT(&allowed), seen = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &allowed) && seen++ == want) {
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            pthread_setaffinity_np(pthread_self(), sizeof one, &one);
            return;
        }
}
