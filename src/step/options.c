/* step's options between the command line and the loop (include/tp/
 * step.h): the checks that need no rank, the figures derived from the
 * preset, the flags and the rank count, the config every rank must share,
 * and the arena the loop needs. The rank count is known before boot only
 * with the local launcher, so derivation runs again once the group has
 * formed (src/step/job.c); every rank derives the same. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "step_int.h"
#include "tp/fixed.h"
#include "tp/group.h"
#include "tp/model.h"
#include "tp/step.h"
#include "tp/units.h"

int tp_step_derive(struct tp_step_given *g, int n, tp_error *err)
{
    struct tp_step_opts *s = &g->o;
    uint64_t per_rank = 32;
    const struct tp_step_workload *w = s->workload;
    if (w) { /* the recorded job's shape, as a preset's */
        s->preset = "workload";
        per_rank = w->samples_per_rank;
        s->grad_bytes = tp_step_workload_grad_bytes(w) / 4 * 4; /* replayed as f32 elements */
        s->sample_bytes = w->sample_bytes;
        s->compute_ms = (double)tp_step_workload_compute_ns(w) / 1e6;
        s->ckpt_bytes = w->ckpt_bytes ? w->ckpt_bytes : 64u << 20;
        s->buckets = 1; /* for a workload: the most collectives a recorded step makes */
        for (size_t l = 0; l < w->nlayouts; l++)
            if (w->layouts[l].n > s->buckets)
                s->buckets = (unsigned)w->layouts[l].n;
    }
    if (g->preset) {
        struct tp_step_opts ps = {0};
        int rc = tp_step_preset(g->preset, g->scale, &ps, err);
        if (rc)
            return rc;
        s->preset = g->preset;
        per_rank = ps.batch;
        s->grad_bytes = ps.grad_bytes;
        s->sample_bytes = ps.sample_bytes;
        s->compute_ms = ps.compute_ms;
        s->ckpt_bytes = ps.ckpt_bytes;
    }
    bool shaped = g->preset || w;
    if (g->have_grad || !shaped)
        s->grad_bytes = g->have_grad ? g->grad_bytes : 4u << 20;
    if (g->have_sample || !shaped)
        s->sample_bytes = g->have_sample ? g->sample_bytes : 4096;
    if (g->have_compute || !shaped)
        s->compute_ms = g->have_compute ? g->compute_ms : 10;
    if (g->have_ckpt || !shaped)
        s->ckpt_bytes = g->have_ckpt ? g->ckpt_bytes : 64u << 20;
    s->sample_given = g->have_sample ? g->sample_bytes : 0;
    s->sample_bytes = s->sample_bytes / 4 * 4; /* records hold floats */
    if (!g->have_batch)
        s->batch = per_rank * (uint64_t)n;
    if (!g->have_samples)
        s->samples = 4 * s->batch;
    if (!g->have_dim) {
        size_t fit = s->sample_bytes > tp_model_record_min(0)
                         ? (s->sample_bytes - tp_model_record_min(0)) / 4 : 0;
        s->dim = (unsigned)(fit < 64 ? (fit ? fit : 1) : 64);
    }
    if (w && !g->have_grad) {
        /* replayed, an allreduce also carries the model's own gradient (one
         * is added where none holds it): at least that much */
        uint64_t need = (uint64_t)tp_model_grad_len(s->dim) * 4;
        if (s->grad_bytes < need)
            s->grad_bytes = need;
    }
    if (!g->have_buckets && !w) {
        uint64_t b = (s->grad_bytes + (25u << 20) - 1) / (25u << 20);
        s->buckets = (unsigned)(b < 1 ? 1 : b > 16 ? 16 : b);
    }
    return 0;
}

static const char *reduce_name(enum tp_step_reduce r)
{
    return r == TP_STEP_EXACT ? "exact" : r == TP_STEP_ARRIVAL ? "arrival" : "plain";
}

json_t *tp_step_config_json(const struct tp_step_given *g, int n)
{
    const struct tp_step_opts *s = &g->o;
    json_t *delays = json_array();
    static const char *const where[] = {"comm", "io", "compute"};
    static const char *const dist[] = {"const", "exp", "spike"};
    for (unsigned i = 0; i < s->ndelays; i++)
        json_array_append_new(delays, json_pack("{s:s, s:s, s:I, s:f, s:i}", "where",
                                                where[s->delays[i].where], "dist",
                                                dist[s->delays[i].dist], "ns",
                                                (json_int_t)s->delays[i].ns, "p", s->delays[i].p,
                                                "rank", s->delays[i].rank));
    json_t *j = json_pack("{s:s, s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:f, s:I, s:f, s:s, s:s?}",
                          "preset", g->preset ? g->preset : s->workload ? "workload" : "custom", "scale",
                          g->preset ? g->scale : 1.0, "ranks", (json_int_t)n, "steps",
                          (json_int_t)s->steps, "batch", (json_int_t)s->batch, "sample_bytes",
                          (json_int_t)s->sample_bytes, "samples", (json_int_t)s->samples,
                          "grad_bytes", (json_int_t)s->grad_bytes, "overlap", s->overlap,
                          "compute_ms", s->compute_ms, "dim", (json_int_t)s->dim, "lr",
                          (double)s->lr, "reduce", reduce_name(s->reduce), "algo", s->algo);
    json_object_set_new(j, "no_io", json_boolean(s->no_io));
    if (s->workload)
        json_object_set_new(j, "workload",
                            json_pack("{s:s, s:s, s:s, s:I}", "path", s->workload->path, "sha256",
                                      s->workload->sha256, "source", s->workload->source,
                                      "recorded_steps", (json_int_t)s->workload->nsteps));
    if (s->trace)
        json_object_set_new(j, "trace", json_string(s->trace));
    json_object_update_new(
        j, json_pack("{s:I, s:s, s:I, s:I, s:s, s:b, s:I, s:I, s:b, s:o, s:I, s:I, s:b}",
                     "buckets", (json_int_t)s->buckets, "dir", s->dir, "prefetch",
                     (json_int_t)s->prefetch, "qd", (json_int_t)s->qd, "engine",
                     s->engine ? s->engine : "auto", "direct", s->direct, "ckpt_every",
                     (json_int_t)s->ckpt_every, "ckpt_bytes", (json_int_t)s->ckpt_bytes,
                     "ckpt_async", s->ckpt_async, "inject_delay", delays, "seed",
                     (json_int_t)s->seed, "runs", (json_int_t)s->runs, "pin", s->pin));
    json_object_update_new(
        j, json_pack("{s:s, s:s, s:s, s:I}", "compute", s->compute_gpu ? "gpu" : "cpu", "mem",
                     s->grad_cuda ? "cuda" : "host", "backend", s->nccl ? "nccl" : "trainpath",
                     "gemm_size", (json_int_t)s->gemm_n));
    return j;
}

/* Besides the gradient's calls (the buckets, or a workload's largest
 * collective: input, output and an algorithm's scratch, with --reduce
 * exact its fixed-point segments:
 * tp_coll_arena_bytes), the loop allocates from the arena
 * (src/step/loop.c): --reduce exact's buffers for the model's gradient
 * (four gradients' worth of wide words, more than its spans and int64
 * sums take), the arrival mode's gather of every rank's gradient,
 * each step's record of 10 figures from every rank and its own, the ranks'
 * ready times; and 4 MiB more of slack. */
size_t tp_step_arena_bytes(const struct tp_step_opts *o, int n)
{
    size_t gl = tp_model_grad_len(o->dim), words = tp_fx_words(TP_F32);
    size_t own = (4u << 20) + 4 * gl * words * 8 + (size_t)n * gl * 4 +
                 (size_t)(n + 1) * o->steps * 10 * 8 + (size_t)n * 16;
    /* a workload's calls share one input and one output buffer of the
     * largest call's size (src/step/comm.c) */
    size_t call = o->workload ? 4 * tp__step_wl_buffer_floats(o->workload, n, gl)
                              : (size_t)o->grad_bytes;
    return tp_coll_arena_bytes(n, call, o->reduce == TP_STEP_EXACT, own);
}

/* The options that do not go together, whatever the rank count. */
static int check_given(struct tp_step_given *g, const struct tp_group_opts *go, tp_error *err)
{
    struct tp_step_opts *s = &g->o;
    if (s->ckpt_async && !s->ckpt_every)
        return tp_error_set(err, TP_EUSAGE, "--ckpt-async: needs --ckpt-every");
    /* an option that would change nothing is refused, not ignored */
    if (g->have_ckpt && !s->ckpt_every)
        return tp_error_set(err, TP_EUSAGE,
                            "--ckpt-size: needs --ckpt-every (without it no checkpoint is taken)");
    if (g->have_scale && !g->preset)
        return tp_error_set(err, TP_EUSAGE, "--scale: needs --preset (it shrinks a preset)");
    if (g->workload) {
        /* the recorded model's buckets and times are the shape: nothing may
         * reshape them */
        const char *clash = g->preset ? "--preset" : g->have_grad ? "--grad-size"
                            : g->have_buckets ? "--buckets" : g->have_compute ? "--compute-ms"
                            : NULL;
        if (clash)
            return tp_error_set(err, TP_EUSAGE, "%s with --workload: the workload's model sets it",
                                clash);
        if (!s->workload) {
            struct tp_step_workload *w;
            int rc = tp_step_workload_load(g->workload, &w, err);
            if (rc)
                return rc;
            s->workload = w;
        }
    }
    s->grad_cuda = g->mem_cuda >= 0 ? g->mem_cuda == 1 : s->compute_gpu || s->nccl;
    if (s->nccl && go->comm.transport)
        return tp_error_set(err, TP_EUSAGE, "--transport with --backend nccl: NCCL picks its "
                            "own transport");
    if (s->nccl && s->algo)
        return tp_error_set(err, TP_EUSAGE, "--algo %s with --backend nccl: NCCL chooses its "
                            "own algorithm", s->algo);
    if (s->gemm_n && !s->compute_gpu)
        return tp_error_set(err, TP_EUSAGE, "--gemm-size: only with --compute gpu");
    if (go->gpu_device >= 0 && !s->compute_gpu && !s->grad_cuda)
        return tp_error_set(err, TP_EUSAGE, "--gpu: only with --compute gpu, --mem cuda or "
                            "--backend nccl");
    return 0;
}

int tp_step_check_group(const struct tp_step_opts *s, int nranks, int per_host, tp_error *err)
{
    for (unsigned i = 0; i < s->ndelays; i++)
        if (s->delays[i].rank >= nranks)
            return tp_error_set(err, TP_EUSAGE, "--inject-delay ...@%d: not a rank (0..%d)",
                                s->delays[i].rank, nranks - 1);
    if (!s->ckpt_every)
        return 0;
    /* each rank commits its share (at least 4 KiB) into --dir: what this
     * host's ranks write must fit, as io checkpoint's own check would say
     * once the ranks run (in its words: --size, --force) */
    uint64_t share = s->ckpt_bytes / (uint64_t)nranks ? s->ckpt_bytes / (uint64_t)nranks : 4096;
    uint64_t need = share * (uint64_t)per_host;
    struct statvfs fs;
    if (statvfs(s->dir, &fs) != 0)
        return 0; /* --dir is checked on its own */
    uint64_t avail = (uint64_t)fs.f_bavail * fs.f_frsize;
    if (need + (uint64_t)per_host * (64u << 10) > avail) { /* and each one's metadata */
        char a[32], b[32], c[32];
        return tp_error_set(err, TP_EUSAGE,
                            "--ckpt-size %s: the checkpoints of %d rank%s on this host need %s in "
                            "--dir %s, which has %s free",
                            tp_fmt_size(s->ckpt_bytes, a, sizeof a), per_host,
                            per_host == 1 ? "" : "s", tp_fmt_size(need, b, sizeof b), s->dir,
                            tp_fmt_size(avail, c, sizeof c));
    }
    return 0;
}

int tp_step_prepare(struct tp_step_given *g, const struct tp_group_opts *go, tp_error *err)
{
    struct tp_step_opts *s = &g->o;
    int rc = check_given(g, go, err);
    if (rc)
        return rc;
    /* the other ranks wait out a rank's delay in the next allreduce: one as
     * long as --timeout fails them, not the network (as coll refuses it) */
    for (unsigned i = 0; i < s->ndelays; i++)
        if (s->delays[i].ns >= go->timeout_ns) {
            char a[32], b[32];
            return tp_error_set(err, TP_EUSAGE,
                                "--inject-delay: %s is not under --timeout %s: the other ranks "
                                "would time out waiting for it",
                                tp_fmt_duration_s((double)s->delays[i].ns / 1e9, a, sizeof a),
                                tp_fmt_duration_s((double)go->timeout_ns / 1e9, b, sizeof b));
        }
    /* everything that does not depend on the rank count is checked here,
     * before any rank starts (with the local launcher, the count is known) */
    bool local = !tp_boot_launched(go->launcher_name);
    rc = tp_step_derive(g, local ? go->nranks : 1, err);
    if (rc == 0 && local)
        rc = tp_step_check(s, go->nranks, err);
    if (rc == 0 && s->algo)
        rc = tp_coll_check_args(TP_ALLREDUCE, TP_F32, TP_SUM, s->reduce == TP_STEP_EXACT,
                                s->algo, err);
    if (rc == 0 && mkdir(s->dir, 0755) != 0 && errno != EEXIST)
        rc = tp_error_errno(err, TP_EUSAGE, errno, "--dir %s", s->dir);
    if (rc == 0 && access(s->dir, W_OK | X_OK) != 0)
        rc = tp_error_errno(err, TP_EUSAGE, errno, "--dir %s: not writable", s->dir);
    if (rc == 0 && local)
        rc = tp_step_check_group(s, go->nranks, go->nranks, err);
    return rc;
}
