/* Workload presets, delay specs and the checks made before any rank starts.
 *
 * The presets take their shape from public figures (docs/step.md lists the
 * sources); they describe one data-parallel rank (one GPU) and are scaled to
 * this machine with --scale, which multiplies the gradient bytes, the
 * sample bytes, the compute time and the checkpoint size. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "step_int.h"
#include "tp/blockfx.h"
#include "tp/model.h"
#include "tp/step.h"
#include "tp/sysinfo.h"
#include "tp/units.h"

struct preset {
    const char *name, *help;
    double params;       /* model parameters */
    double grad_elem_bytes;
    double sample_bytes;
    uint64_t batch_per_rank;
    double compute_ms;
};

/* ResNet-50: 25.6 M parameters, fp32 gradients; ImageNet JPEGs average
 * about 112 KB; 256 images per GPU at ~2,500 images/s on an A100 (mixed
 * precision). LLM 1.3 B: bf16 gradients; 8 sequences of 2,048 tokens (2-byte
 * ids) per GPU; 6 N T FLOPs = 1.3e14 per step at ~150 TFLOP/s. UNet3D as
 * MLPerf Storage runs it: ~19 M parameters, 146.6 MB samples (KiTS19
 * volumes), batch 7, 0.636 s of A100 compute per step. */
static const struct preset presets[] = {
    {"resnet50", "ResNet-50: 25.6M params (fp32 grads 102 MB), 112 KB samples, 256/rank, 100 ms",
     25.6e6, 4, 112e3, 256, 100},
    {"llm-1.3b", "1.3B-param language model: bf16 grads 2.6 GB, 4 KB samples (2048 tokens), "
                 "8/rank, 850 ms",
     1.3e9, 2, 4096, 8, 850},
    {"unet3d", "UNet3D (MLPerf Storage): 19M params, 146.6 MB samples, 7/rank, 636 ms", 19e6, 4,
     146.6e6, 7, 636},
};

const char *const tp_step_preset_names[] = {"resnet50", "llm-1.3b", "unet3d", NULL};

const char *tp_step_preset_help(const char *name)
{
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
        if (strcmp(presets[i].name, name) == 0)
            return presets[i].help;
    return NULL;
}

int tp_step_preset(const char *name, double scale, struct tp_step_opts *o, tp_error *err)
{
    if (!(scale > 0 && scale <= 1))
        return tp_error_set(err, TP_EUSAGE, "--scale %g: must be in (0, 1]", scale);
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
        const struct preset *p = &presets[i];
        if (strcmp(p->name, name) != 0)
            continue;
        o->preset = p->name;
        o->grad_bytes = (uint64_t)(p->params * p->grad_elem_bytes * scale) / 4 * 4;
        o->sample_bytes = (uint64_t)(p->sample_bytes * scale);
        o->compute_ms = p->compute_ms * scale;
        o->batch = p->batch_per_rank; /* times the ranks, by the caller */
        /* 14 bytes per parameter: bf16 weights + fp32 master weights and Adam moments */
        o->ckpt_bytes = (uint64_t)(p->params * 14 * scale);
        return 0;
    }
    return tp_error_set(err, TP_EUSAGE, "--preset %s: unknown (resnet50, llm-1.3b, unet3d)",
                        name);
}

int tp_step_parse_delay(const char *spec, struct tp_delay *d, tp_error *err)
{
    char buf[128];
    if (strlen(spec) >= sizeof buf)
        return tp_error_set(err, TP_EUSAGE, "--inject-delay %s: too long", spec);
    snprintf(buf, sizeof buf, "%s", spec);
    memset(d, 0, sizeof *d);
    d->rank = -1;
    char *at = strchr(buf, '@');
    if (at) {
        *at = '\0';
        char *end;
        long r = strtol(at + 1, &end, 10);
        if (at[1] == '\0' || *end || r < 0 || r > 65535)
            return tp_error_set(err, TP_EUSAGE, "--inject-delay %s: '@%s' is not a rank", spec,
                                at + 1);
        d->rank = (int)r;
    }
    char *save = NULL, *where = strtok_r(buf, ":", &save), *dist = strtok_r(NULL, ":", &save);
    char *a1 = strtok_r(NULL, ":", &save), *a2 = strtok_r(NULL, ":", &save);
    char *extra = strtok_r(NULL, ":", &save);
    const char *form = "WHERE:const:DUR, WHERE:exp:MEAN or WHERE:spike:DUR:P, WHERE comm, io "
                       "or compute, optionally @RANK";
    if (!where || !dist || !a1 || extra)
        return tp_error_set(err, TP_EUSAGE, "--inject-delay %s: expected %s", spec, form);
    if (strcmp(where, "comm") == 0)
        d->where = TP_DELAY_COMM;
    else if (strcmp(where, "io") == 0)
        d->where = TP_DELAY_IO;
    else if (strcmp(where, "compute") == 0)
        d->where = TP_DELAY_COMPUTE;
    else
        return tp_error_set(err, TP_EUSAGE, "--inject-delay %s: '%s' is not comm, io or compute",
                            spec, where);
    int rc = tp_parse_duration(a1, "--inject-delay", &d->ns, err);
    if (rc)
        return rc;
    if (strcmp(dist, "const") == 0 || strcmp(dist, "exp") == 0) {
        d->dist = dist[0] == 'c' ? TP_DELAY_CONST : TP_DELAY_EXP;
        if (a2)
            return tp_error_set(err, TP_EUSAGE, "--inject-delay %s: expected %s", spec, form);
    } else if (strcmp(dist, "spike") == 0) {
        d->dist = TP_DELAY_SPIKE;
        char *end;
        d->p = a2 ? strtod(a2, &end) : -1;
        if (!a2 || *end || !(d->p > 0 && d->p <= 1))
            return tp_error_set(err, TP_EUSAGE,
                                "--inject-delay %s: a spike needs a probability in (0, 1]", spec);
    } else
        return tp_error_set(err, TP_EUSAGE, "--inject-delay %s: '%s' is not const, exp or spike",
                            spec, dist);
    if (d->ns > 60000000000ull)
        return tp_error_set(err, TP_EUSAGE, "--inject-delay %s: at most 60s", spec);
    return 0;
}


int tp_step_check(const struct tp_step_opts *o, int ranks_per_host, tp_error *err)
{
    char a[32], b[32];
    if (o->steps < 1)
        return tp_error_set(err, TP_EUSAGE, "--steps: at least 1");
    if (o->batch < 1)
        return tp_error_set(err, TP_EUSAGE, "--batch: at least 1");
    if (o->dim < 1 || o->dim > 65536)
        return tp_error_set(err, TP_EUSAGE, "--dim %u: 1..65536", o->dim);
    if (o->sample_bytes < tp_model_record_min(o->dim))
        return tp_error_set(
            err, TP_EUSAGE, "--sample-size %s: a record of %u feature%s needs at least %s",
            tp_fmt_size(o->sample_given ? o->sample_given : o->sample_bytes, a, sizeof a), o->dim,
            o->dim == 1 ? "" : "s", tp_fmt_bytes(tp_model_record_min(o->dim), b, sizeof b));
    if (o->samples < o->batch)
        return tp_error_set(err, TP_EUSAGE, "--samples %llu: fewer than one global batch (%llu)",
                            (unsigned long long)o->samples, (unsigned long long)o->batch);
    if (o->samples >= UINT32_MAX)
        return tp_error_set(err, TP_EUSAGE, "--samples: at most %u", UINT32_MAX - 1);
    if (o->grad_bytes / 4 < tp_model_grad_len(o->dim))
        return tp_error_set(err, TP_EUSAGE, "--grad-size %s: the model's own gradient needs %s",
                            tp_fmt_size(o->grad_bytes, a, sizeof a),
                            tp_fmt_bytes(4 * tp_model_grad_len(o->dim), b, sizeof b));
    if (!o->workload && (o->buckets < 1 || o->buckets > 1024 || o->buckets > o->grad_bytes / 4))
        return tp_error_set(err, TP_EUSAGE, "--buckets %u: 1..1024 and at most one per element",
                            o->buckets);
    if (!(o->compute_ms >= 0 && o->compute_ms <= 600000) && o->workload)
        return tp_error_set(err, TP_EUSAGE,
                            "--workload %s: steps.forward_ns + backward_ns, a recorded step's "
                            "compute (the median): %s, past the 10 min a step replays",
                            o->workload->path, tp_fmt_duration_s(o->compute_ms / 1e3, a, sizeof a));
    if (!(o->compute_ms >= 0 && o->compute_ms <= 600000))
        return tp_error_set(err, TP_EUSAGE, "--compute-ms %g: 0..600000", o->compute_ms);
    if (!(o->lr > 0 && o->lr < 1e6))
        return tp_error_set(err, TP_EUSAGE, "--lr %g: must be positive", (double)o->lr);
    if (o->prefetch < 1 || o->prefetch > 64)
        return tp_error_set(err, TP_EUSAGE, "--prefetch %u: 1..64", o->prefetch);
    if (o->runs < 1 || o->runs > 100)
        return tp_error_set(err, TP_EUSAGE, "--verify-repro %u: 1..100", o->runs);
    if (o->nccl && !o->grad_cuda)
        return tp_error_set(err, TP_EUSAGE, "--backend nccl: the gradient must live on the "
                            "GPU (--mem cuda)");
    if ((o->compute_gpu || o->grad_cuda || o->nccl) && !tp_gpu_built())
        return tp_error_set(err, TP_EUSAGE, "%s: %s",
                            o->compute_gpu ? "--compute gpu"
                            : o->nccl      ? "--backend nccl"
                                           : "--mem cuda",
                            tp_gpu_build_line());
    if (o->gemm_n && (o->gemm_n < 16 || o->gemm_n > 16384))
        return tp_error_set(err, TP_EUSAGE, "--gemm-size %u: 16..16384", o->gemm_n);
    /* what one rank holds: gradient (or a workload's largest call) in and
     * out, exact accumulators and columns (src/step/exact.c), the loader's
     * batches, the async checkpoint's snapshot and its writer */
    uint64_t local_batch = o->batch, gl = tp_model_grad_len(o->dim);
    uint64_t bufs = o->workload ? 4 * tp__step_wl_buffer_floats(o->workload, 1, gl) : 0;
    uint64_t need = 2 * (bufs > o->grad_bytes ? bufs : o->grad_bytes) + 64 * 8 * gl +
                    (uint64_t)o->prefetch * local_batch * o->sample_bytes + (16u << 20);
    if (o->reduce == TP_STEP_EXACT)
        need += 4 * gl * (local_batch + TP_BFX_BLOCK);
    if (o->ckpt_every)
        need += (o->ckpt_async ? o->ckpt_bytes : 0) + (16u << 20);
    uint64_t avail = tp_mem_available();
    if (avail && need * (uint64_t)(ranks_per_host > 0 ? ranks_per_host : 1) > avail)
        return tp_error_set(err, TP_EUSAGE,
                            "the run needs about %s per rank (%d on this host), and %s is "
                            "available: lower --grad-size, --sample-size, --batch or --prefetch",
                            tp_fmt_size(need, a, sizeof a), ranks_per_host,
                            tp_fmt_size(avail, b, sizeof b));
    return 0;
}
