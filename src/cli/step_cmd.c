/* trainpath step: a synthetic data-parallel training run over real ranks.
 * Options are parsed and checked before any rank starts; ranks come from a
 * local fork, mpirun/srun or a torchrun-style environment, as for coll. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "tp/boot.h"
#include "tp/coll.h"
#include "tp/fixed.h"
#include "tp/log.h"
#include "tp/model.h"
#include "tp/result.h"
#include "tp/step.h"
#include "tp/units.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: trainpath step [-n RANKS] [--preset NAME [--scale S]] [--steps N] [options]\n"
            "\n"
            "Each rank, each step: its share of the global batch from a prefetching loader\n"
            "(reads through the io engines), the model's forward and backward plus\n"
            "calibrated CPU work, the gradient allreduced in buckets (overlapped with the\n"
            "compute, as DDP does), the update, and every K steps a checkpoint.\n"
            "\n"
            "  -n, --ranks N          local ranks (default 2; mpirun/srun/env as for coll)\n"
            "      --preset NAME      resnet50, llm-1.3b, unet3d (shapes from public figures)\n"
            "      --scale S          shrink the preset: gradient and sample bytes, compute\n"
            "                         time, checkpoint size (default 0.1)\n"
            "      --steps N          (default 50)\n"
            "      --batch N          global samples per step (default: the preset's per-rank\n"
            "                         batch times the ranks; 32 per rank without a preset)\n"
            "      --sample-size SIZE bytes per sample (default 4K)\n"
            "      --samples N        records in the dataset (default 4 global batches)\n"
            "      --grad-size SIZE   gradient bytes allreduced per step (default 4M)\n"
            "      --buckets N        allreduce buckets (default: 25 MiB each, as DDP, 1..16)\n"
            "      --no-overlap       allreduce after the compute instead of during it\n"
            "      --compute-ms MS    compute per step and rank (default 10)\n"
            "      --dim N            features of the model (default 64, fewer if samples are small)\n"
            "      --lr X             learning rate (default 0.5)\n"
            "      --reduce MODE      plain (default: deterministic for one configuration),\n"
            "                         exact (the same bits for any rank count and timing), or\n"
            "                         arrival (ranks' sums added in the order they became ready)\n"
            "      --algo A           allreduce algorithm (default: by size)\n"
            "      --verify-repro N   train N times with different injected timing and compare\n"
            "                         the weights' hashes (exit 1 if plain or exact differ)\n"
            "      --inject-delay SPEC  WHERE:const:DUR, WHERE:exp:MEAN or WHERE:spike:DUR:P,\n"
            "                         WHERE comm, io or compute, @RANK for one rank (repeatable)\n"
            "      --ckpt-every K     checkpoint every K steps (default 0: none)\n"
            "      --ckpt-size SIZE   the job's checkpoint (default: the preset's 14 B/param;\n"
            "                         64M without one); each rank writes its share\n"
            "      --ckpt-async       write checkpoints from a snapshot in the background\n"
            "      --dir DIR          dataset and checkpoints (default /var/tmp/trainpath-step)\n"
            "      --prefetch N       batches the loader reads ahead (default 2)\n"
            "      --qd N             loader reads in flight (default 16)\n"
            "      --engine E         auto, io_uring, psync\n"
            "      --direct           O_DIRECT dataset reads\n"
            "      --no-io            generate the samples in memory instead of reading them\n"
            "      --seed N           data, model and timing seed (default 1)\n"
            "      --no-pin           leave the compute threads unpinned\n"
            "      --compute WHERE    cpu (default: calibrated CPU work) or gpu (cuBLAS bf16\n"
            "                         matrix products sized by --compute-ms; the gradient then\n"
            "                         lives on the GPU)\n"
            "      --mem M            host or cuda: where the gradient buckets live (default:\n"
            "                         cuda with --compute gpu, else host)\n"
            "      --backend B        trainpath (default; from GPU memory it stages through\n"
            "                         host memory) or nccl (needs the gradient on the GPU)\n"
            "      --gemm-size N      matrix side of the GPU compute (default: calibrated)\n"
            "      --gpu N            device index (default: the rank's index on its host)\n"
            "      --launcher L, --key-file F, --transport T, -P/--provider NAME, --intra M,\n"
            "      --bind ADDR, --timeout DUR   as for trainpath coll\n"
            "      --json FILE        write the result document (atomically; - for stdout)\n"
            "  -q, --quiet            no table\n");
}

enum {
    OPT_PRESET = 256, OPT_SCALE, OPT_STEPS, OPT_BATCH, OPT_SSIZE, OPT_SAMPLES, OPT_GSIZE,
    OPT_BUCKETS, OPT_NOOVERLAP, OPT_COMPUTE, OPT_DIM, OPT_LR, OPT_REDUCE, OPT_ALGO, OPT_VERIFY,
    OPT_DELAY, OPT_CKEVERY, OPT_CKSIZE, OPT_CKASYNC, OPT_DIR, OPT_PREFETCH, OPT_QD, OPT_ENGINE,
    OPT_DIRECT, OPT_NOIO, OPT_SEED, OPT_NOPIN, OPT_LAUNCHER, OPT_KEY, OPT_TRANSPORT, OPT_INTRA, OPT_BIND,
    OPT_TIMEOUT, OPT_JSON, OPT_COMPUTE_WHERE, OPT_MEM, OPT_BACKEND, OPT_GEMM, OPT_GPU,
};

static const struct option long_opts[] = {
    {"ranks", required_argument, NULL, 'n'},
    {"preset", required_argument, NULL, OPT_PRESET},
    {"scale", required_argument, NULL, OPT_SCALE},
    {"steps", required_argument, NULL, OPT_STEPS},
    {"batch", required_argument, NULL, OPT_BATCH},
    {"sample-size", required_argument, NULL, OPT_SSIZE},
    {"samples", required_argument, NULL, OPT_SAMPLES},
    {"grad-size", required_argument, NULL, OPT_GSIZE},
    {"buckets", required_argument, NULL, OPT_BUCKETS},
    {"no-overlap", no_argument, NULL, OPT_NOOVERLAP},
    {"compute-ms", required_argument, NULL, OPT_COMPUTE},
    {"dim", required_argument, NULL, OPT_DIM},
    {"lr", required_argument, NULL, OPT_LR},
    {"reduce", required_argument, NULL, OPT_REDUCE},
    {"repro", required_argument, NULL, OPT_REDUCE},
    {"algo", required_argument, NULL, OPT_ALGO},
    {"verify-repro", required_argument, NULL, OPT_VERIFY},
    {"inject-delay", required_argument, NULL, OPT_DELAY},
    {"ckpt-every", required_argument, NULL, OPT_CKEVERY},
    {"ckpt-size", required_argument, NULL, OPT_CKSIZE},
    {"ckpt-async", no_argument, NULL, OPT_CKASYNC},
    {"dir", required_argument, NULL, OPT_DIR},
    {"prefetch", required_argument, NULL, OPT_PREFETCH},
    {"qd", required_argument, NULL, OPT_QD},
    {"engine", required_argument, NULL, OPT_ENGINE},
    {"direct", no_argument, NULL, OPT_DIRECT},
    {"no-io", no_argument, NULL, OPT_NOIO},
    {"seed", required_argument, NULL, OPT_SEED},
    {"no-pin", no_argument, NULL, OPT_NOPIN},
    {"launcher", required_argument, NULL, OPT_LAUNCHER},
    {"key-file", required_argument, NULL, OPT_KEY},
    {"transport", required_argument, NULL, OPT_TRANSPORT},
    {"provider", required_argument, NULL, 'P'},
    {"intra", required_argument, NULL, OPT_INTRA},
    {"bind", required_argument, NULL, OPT_BIND},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"json", required_argument, NULL, OPT_JSON},
    {"compute", required_argument, NULL, OPT_COMPUTE_WHERE},
    {"mem", required_argument, NULL, OPT_MEM},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"gemm-size", required_argument, NULL, OPT_GEMM},
    {"gpu", required_argument, NULL, OPT_GPU},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

struct parsed {
    struct tp_step_opts s;
    struct tp_comm_opts c;
    uint64_t nranks, timeout_ns;
    const char *launcher, *key_file, *json;
    const char *preset;
    double scale;
    bool quiet, have_batch, have_samples, have_buckets, have_dim, have_ckpt_size;
    /* what the preset or the flags set */
    bool have_grad, have_sample, have_compute;
    uint64_t grad, sample, ckpt;
    double compute;
    const char *mem; /* --mem */
    int gpu;         /* --gpu, or -1 */
};

static int parse_double(const char *s, const char *what, double lo, double hi, double *out,
                        tp_error *err)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !(v >= lo && v <= hi))
        return tp_error_set(err, TP_EUSAGE, "%s %s: a number in [%g, %g]", what, s, lo, hi);
    *out = v;
    return 0;
}

static int parse(int argc, char **argv, struct parsed *p, tp_error *err)
{
    struct tp_step_opts *s = &p->s;
    uint64_t v;
    double d;
    int rc = 0, opt;
    opterr = 0;
    optind = 1;
    while (rc == 0 && (opt = getopt_long(argc, argv, ":n:P:qh", long_opts, NULL)) != -1) {
        switch (opt) {
        case 'n': rc = tp_parse_u64(optarg, "--ranks", 1, 1024, &p->nranks, err); break;
        case OPT_PRESET: p->preset = optarg; break;
        case OPT_SCALE: rc = parse_double(optarg, "--scale", 1e-6, 1, &p->scale, err); break;
        case OPT_STEPS: rc = tp_parse_u64(optarg, "--steps", 1, 1000000, &s->steps, err); break;
        case OPT_BATCH:
            rc = tp_parse_u64(optarg, "--batch", 1, 1u << 24, &s->batch, err);
            p->have_batch = true;
            break;
        case OPT_SSIZE:
            rc = tp_parse_size(optarg, "--sample-size", &p->sample, err);
            p->have_sample = true;
            break;
        case OPT_SAMPLES:
            rc = tp_parse_u64(optarg, "--samples", 1, UINT32_MAX - 1, &s->samples, err);
            p->have_samples = true;
            break;
        case OPT_GSIZE:
            rc = tp_parse_size(optarg, "--grad-size", &p->grad, err);
            p->have_grad = true;
            break;
        case OPT_BUCKETS:
            rc = tp_parse_u64(optarg, "--buckets", 1, 1024, &v, err);
            s->buckets = (unsigned)v;
            p->have_buckets = true;
            break;
        case OPT_NOOVERLAP: s->overlap = false; break;
        case OPT_COMPUTE:
            rc = parse_double(optarg, "--compute-ms", 0, 600000, &p->compute, err);
            p->have_compute = true;
            break;
        case OPT_DIM:
            rc = tp_parse_u64(optarg, "--dim", 1, 65536, &v, err);
            s->dim = (unsigned)v;
            p->have_dim = true;
            break;
        case OPT_LR:
            rc = parse_double(optarg, "--lr", 1e-9, 1e6, &d, err);
            s->lr = (float)d;
            break;
        case OPT_REDUCE:
            if (strcmp(optarg, "plain") == 0)
                s->reduce = TP_STEP_PLAIN;
            else if (strcmp(optarg, "exact") == 0)
                s->reduce = TP_STEP_EXACT;
            else if (strcmp(optarg, "arrival") == 0)
                s->reduce = TP_STEP_ARRIVAL;
            else
                rc = tp_error_set(err, TP_EUSAGE, "--reduce %s: plain, exact or arrival", optarg);
            break;
        case OPT_ALGO: s->algo = optarg; break;
        case OPT_VERIFY:
            rc = tp_parse_u64(optarg, "--verify-repro", 1, 100, &v, err);
            s->runs = (unsigned)v;
            break;
        case OPT_DELAY:
            if (s->ndelays == TP_STEP_MAX_DELAYS)
                rc = tp_error_set(err, TP_EUSAGE, "--inject-delay: at most %d",
                                  TP_STEP_MAX_DELAYS);
            else
                rc = tp_step_parse_delay(optarg, &s->delays[s->ndelays++], err);
            break;
        case OPT_CKEVERY:
            rc = tp_parse_u64(optarg, "--ckpt-every", 0, 1000000, &s->ckpt_every, err);
            break;
        case OPT_CKSIZE:
            rc = tp_parse_size(optarg, "--ckpt-size", &p->ckpt, err);
            p->have_ckpt_size = true;
            break;
        case OPT_CKASYNC: s->ckpt_async = true; break;
        case OPT_DIR: s->dir = optarg; break;
        case OPT_PREFETCH:
            rc = tp_parse_u64(optarg, "--prefetch", 1, 64, &v, err);
            s->prefetch = (unsigned)v;
            break;
        case OPT_QD:
            rc = tp_parse_u64(optarg, "--qd", 1, 1024, &v, err);
            s->qd = (unsigned)v;
            break;
        case OPT_ENGINE:
            if (strcmp(optarg, "auto") && strcmp(optarg, "io_uring") && strcmp(optarg, "psync"))
                rc = tp_error_set(err, TP_EUSAGE, "--engine %s: auto, io_uring or psync", optarg);
            s->engine = optarg;
            break;
        case OPT_DIRECT: s->direct = true; break;
        case OPT_NOIO: s->no_io = true; break;
        case OPT_SEED: rc = tp_parse_u64(optarg, "--seed", 0, INT64_MAX, &s->seed, err); break;
        case OPT_NOPIN: s->pin = false; break;
        case OPT_LAUNCHER:
            if (strcmp(optarg, "local") && strcmp(optarg, "mpi") && strcmp(optarg, "env"))
                rc = tp_error_set(err, TP_EUSAGE, "--launcher %s: local, mpi or env", optarg);
            p->launcher = optarg;
            break;
        case OPT_KEY: p->key_file = optarg; break;
        case OPT_TRANSPORT:
            if (strcmp(optarg, "tcp") && strcmp(optarg, "ofi"))
                rc = tp_error_set(err, TP_EUSAGE, "--transport %s: tcp or ofi", optarg);
            p->c.transport = optarg;
            break;
        case 'P':
            p->c.provider = optarg;
            p->c.transport = "ofi";
            break;
        case OPT_INTRA:
            if (strcmp(optarg, "shm") && strcmp(optarg, "fabric"))
                rc = tp_error_set(err, TP_EUSAGE, "--intra %s: shm or fabric", optarg);
            p->c.intra = optarg;
            break;
        case OPT_BIND: p->c.bind_addr = optarg; break;
        case OPT_TIMEOUT: rc = tp_parse_duration(optarg, "--timeout", &p->timeout_ns, err); break;
        case OPT_JSON: p->json = optarg; break;
        case OPT_COMPUTE_WHERE:
            if (strcmp(optarg, "cpu") && strcmp(optarg, "gpu"))
                rc = tp_error_set(err, TP_EUSAGE, "--compute %s: cpu or gpu", optarg);
            s->compute_gpu = strcmp(optarg, "gpu") == 0;
            break;
        case OPT_MEM:
            if (strcmp(optarg, "host") && strcmp(optarg, "cuda"))
                rc = tp_error_set(err, TP_EUSAGE, "--mem %s: host or cuda", optarg);
            p->mem = optarg;
            break;
        case OPT_BACKEND:
            if (strcmp(optarg, "trainpath") && strcmp(optarg, "nccl"))
                rc = tp_error_set(err, TP_EUSAGE, "--backend %s: trainpath or nccl", optarg);
            s->nccl = strcmp(optarg, "nccl") == 0;
            break;
        case OPT_GEMM:
            rc = tp_parse_u64(optarg, "--gemm-size", 16, 16384, &v, err);
            s->gemm_n = (unsigned)v;
            break;
        case OPT_GPU:
            rc = tp_parse_u64(optarg, "--gpu", 0, 1023, &v, err);
            p->gpu = (int)v;
            break;
        case 'q': p->quiet = true; break;
        case 'h': usage(stdout); return 1;
        case ':': return tp_error_set(err, TP_EUSAGE, "%s: needs a value", argv[optind - 1]);
        default:
            return tp_error_set(err, TP_EUSAGE, "%s: unknown option (see trainpath step --help)",
                                argv[optind - 1]);
        }
    }
    if (rc)
        return rc;
    if (optind < argc)
        return tp_error_set(err, TP_EUSAGE, "%s: unexpected argument", argv[optind]);
    if (s->ckpt_async && !s->ckpt_every)
        return tp_error_set(err, TP_EUSAGE, "--ckpt-async: needs --ckpt-every");
    s->grad_cuda = p->mem ? strcmp(p->mem, "cuda") == 0 : s->compute_gpu || s->nccl;
    if (s->nccl && p->c.transport)
        return tp_error_set(err, TP_EUSAGE, "--transport with --backend nccl: NCCL picks its "
                            "own transport");
    if (s->nccl && s->algo)
        return tp_error_set(err, TP_EUSAGE, "--algo %s with --backend nccl: NCCL chooses its "
                            "own algorithm", s->algo);
    if (s->gemm_n && !s->compute_gpu)
        return tp_error_set(err, TP_EUSAGE, "--gemm-size: only with --compute gpu");
    if (p->gpu >= 0 && !s->compute_gpu && !s->grad_cuda)
        return tp_error_set(err, TP_EUSAGE, "--gpu: only with --compute gpu, --mem cuda or "
                            "--backend nccl");
    return 0;
}

/* Fill what depends on the preset and the rank count (known after boot for
 * mpirun and env launches; every rank computes the same). */
static int finish_opts(struct parsed *p, int n, tp_error *err)
{
    struct tp_step_opts *s = &p->s;
    uint64_t per_rank = 32;
    if (p->preset) {
        struct tp_step_opts ps = {0};
        int rc = tp_step_preset(p->preset, p->scale, &ps, err);
        if (rc)
            return rc;
        s->preset = p->preset;
        per_rank = ps.batch;
        s->grad_bytes = ps.grad_bytes;
        s->sample_bytes = ps.sample_bytes;
        s->compute_ms = ps.compute_ms;
        s->ckpt_bytes = ps.ckpt_bytes;
    }
    if (p->have_grad || !p->preset)
        s->grad_bytes = p->have_grad ? p->grad : 4u << 20;
    if (p->have_sample || !p->preset)
        s->sample_bytes = p->have_sample ? p->sample : 4096;
    if (p->have_compute || !p->preset)
        s->compute_ms = p->have_compute ? p->compute : 10;
    if (p->have_ckpt_size || !p->preset)
        s->ckpt_bytes = p->have_ckpt_size ? p->ckpt : 64u << 20;
    s->sample_bytes = s->sample_bytes / 4 * 4; /* records hold floats */
    if (!p->have_batch)
        s->batch = per_rank * (uint64_t)n;
    if (!p->have_samples)
        s->samples = 4 * s->batch;
    if (!p->have_dim) {
        size_t fit = s->sample_bytes > tp_model_record_min(0)
                         ? (s->sample_bytes - tp_model_record_min(0)) / 4 : 0;
        s->dim = (unsigned)(fit < 64 ? (fit ? fit : 1) : 64);
    }
    if (!p->have_buckets) {
        uint64_t b = (s->grad_bytes + (25u << 20) - 1) / (25u << 20);
        s->buckets = (unsigned)(b < 1 ? 1 : b > 16 ? 16 : b);
    }
    return 0;
}


static json_t *config_json(const struct parsed *p, int n)
{
    const struct tp_step_opts *s = &p->s;
    json_t *delays = json_array();
    static const char *const where[] = {"comm", "io", "compute"};
    static const char *const dist[] = {"const", "exp", "spike"};
    for (unsigned i = 0; i < s->ndelays; i++)
        json_array_append_new(delays, json_pack("{s:s, s:s, s:I, s:f, s:i}", "where",
                                                where[s->delays[i].where], "dist",
                                                dist[s->delays[i].dist], "ns",
                                                (json_int_t)s->delays[i].ns, "p", s->delays[i].p,
                                                "rank", s->delays[i].rank));
    const char *reduce = s->reduce == TP_STEP_EXACT ? "exact"
                         : s->reduce == TP_STEP_ARRIVAL ? "arrival" : "plain";
    json_t *j = json_pack("{s:s, s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:f, s:I, s:f, s:s, s:s?}",
                          "preset", p->preset ? p->preset : "custom", "scale",
                          p->preset ? p->scale : 1.0, "ranks", (json_int_t)n, "steps",
                          (json_int_t)s->steps, "batch", (json_int_t)s->batch, "sample_bytes",
                          (json_int_t)s->sample_bytes, "samples", (json_int_t)s->samples,
                          "grad_bytes", (json_int_t)s->grad_bytes, "overlap", s->overlap,
                          "compute_ms", s->compute_ms, "dim", (json_int_t)s->dim, "lr",
                          (double)s->lr, "reduce", reduce, "algo", s->algo);
    json_object_set_new(j, "no_io", json_boolean(s->no_io));
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

static void print_summary(const struct tp_step_opts *s, json_t *results)
{
    size_t i;
    json_t *run;
    printf("# %-4s %10s %10s %10s %10s %6s %6s %8s %8s %10s %10s  %s\n", "run", "step(ms)",
           "p50", "p99", "max", "CoV", "ampl", "exposed", "ckpt", "samples/s", "loss",
           "weights sha256");
    json_array_foreach(json_object_get(results, "runs"), i, run) {
        json_t *st = json_object_get(run, "step_time"), *sm = json_object_get(run, "summary");
        printf("  %-4zu %10.3f %10.3f %10.3f %10.3f %6.3f %6.3f %7.1f%% %7.1f%% %10.0f %10.5f  "
               "%.16s\n",
               i, json_number_value(json_object_get(st, "mean")) / 1e6,
               json_number_value(json_object_get(st, "p50")) / 1e6,
               json_number_value(json_object_get(st, "p99")) / 1e6,
               json_number_value(json_object_get(st, "max")) / 1e6,
               json_number_value(json_object_get(st, "cv")),
               json_number_value(json_object_get(sm, "amplification")),
               100 * json_number_value(json_object_get(sm, "exposed_comm_fraction")),
               100 * json_number_value(json_object_get(sm, "ckpt_overhead_fraction")),
               json_number_value(json_object_get(json_object_get(sm, "goodput"), "value")),
               json_number_value(json_object_get(run, "final_loss")),
               json_string_value(json_object_get(run, "weights_sha256")));
    }
    json_t *r0 = json_array_get(json_object_get(results, "runs"), 0);
    json_t *series = json_object_get(r0, "series");
    if (series) {
        static const char *const parts[] = {"data_wait", "compute", "comm", "comm_exposed",
                                            "ckpt_stall", "step"};
        printf("# run 0, mean per step and rank (ms):");
        for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++) {
            json_t *steps = json_object_get(series, parts[k]), *per;
            double sum = 0;
            size_t cnt = 0, si, ri;
            json_t *x;
            json_array_foreach(steps, si, per) json_array_foreach(per, ri, x) {
                sum += json_number_value(x);
                cnt++;
            }
            printf(" %s %.3f", parts[k], cnt ? sum / (double)cnt / 1e6 : 0);
        }
        printf("\n");
    }
    json_t *rp = json_object_get(results, "reproducibility");
    printf("# reproducibility (%s, %u run%s): %s\n", json_string_value(json_object_get(rp, "reduce")),
           s->runs, s->runs == 1 ? "" : "s", json_string_value(json_object_get(rp, "verdict")));
}

int cmd_step(int argc, char **argv)
{
    struct parsed p = {.nranks = 2, .timeout_ns = 30000000000ull, .scale = 0.1, .gpu = -1};
    p.s.steps = 50;
    p.s.overlap = true;
    p.s.lr = 0.5f;
    p.s.prefetch = 2;
    p.s.qd = 16;
    p.s.seed = 1;
    p.s.runs = 1;
    p.s.pin = true;
    p.s.dir = "/var/tmp/trainpath-step";
    tp_error err = {0};
    int rc = parse(argc, argv, &p, &err);
    if (rc == 1)
        return 0;
    if (rc < 0)
        return cli_fail(&err);
    const char *launcher = cli_launcher(p.launcher);
    bool local = strcmp(launcher, "local") == 0;
    /* everything that does not depend on the rank count is checked here,
     * before any rank starts (with the local launcher, the count is known) */
    rc = finish_opts(&p, local ? (int)p.nranks : 1, &err);
    if (rc == 0 && local)
        rc = tp_step_check(&p.s, (int)p.nranks, &err);
    if (rc == 0 && p.s.algo)
        rc = tp_coll_check_args(TP_ALLREDUCE, TP_F32, TP_SUM, p.s.reduce == TP_STEP_EXACT,
                                p.s.algo, &err);
    if (rc == 0 && mkdir(p.s.dir, 0755) != 0 && errno != EEXIST)
        rc = tp_error_errno(&err, TP_EUSAGE, errno, "--dir %s", p.s.dir);
    if (rc == 0 && access(p.s.dir, W_OK | X_OK) != 0)
        rc = tp_error_errno(&err, TP_EUSAGE, errno, "--dir %s: not writable", p.s.dir);
    if (rc == 0 && p.json && cli_rank0(launcher))
        rc = cli_json_path_ok(p.json, &err);
    if (rc < 0)
        return cli_fail(&err);
    json_t *options = config_json(&p, local ? (int)p.nranks : 0);
    struct tp_boot_opts bo = {.backend = p.launcher, .nranks = (int)p.nranks,
                              .key_file = p.key_file, .timeout_ns = p.timeout_ns,
                              .options = options};
    struct tp_boot *boot = NULL;
    json_t *doc = NULL, *results = NULL;
    if ((rc = tp_boot_init(&bo, &boot, &err)) < 0) {
        doc = tp_result_new("step", options);
        tp_result_finish(doc, rc, err.msg);
        if (p.json)
            tp_result_write(doc, p.json, &err);
        json_decref(doc);
        return cli_fail(&err);
    }
    int me = tp_boot_rank(boot), n = tp_boot_size(boot);
    if (!local) {
        rc = finish_opts(&p, n, &err);
        int per_host = 0;
        for (int i = 0; i < n; i++)
            per_host += strcmp(tp_boot_host(boot, i), tp_boot_host(boot, me)) == 0;
        if (rc == 0)
            rc = tp_step_check(&p.s, per_host, &err);
    }
    json_t *config = config_json(&p, n);
    json_object_set_new(config, "launcher", json_string(launcher));
    if (me == 0) {
        doc = tp_result_new("step", json_incref(config));
        results = json_object();
        json_object_set_new(doc, "results", results);
    }
    size_t gl = tp_model_grad_len(p.s.dim), words = tp_fx_words(TP_F32);
    /* the loop's own buffers (src/step/loop.c): exact's accumulators, the
     * arrival mode's gather, the step records (10 figures) gathered to rank
     * 0, the ready times, and 4 MiB more of slack */
    p.c.arena_bytes = tp_coll_arena_bytes(n, (size_t)p.s.grad_bytes, false,
                                          (4u << 20) + 4 * gl * words * 8 + (size_t)n * gl * 4 +
                                              (size_t)(n + 1) * p.s.steps * 10 * 8 +
                                              (size_t)n * 16);
    p.c.timeout_ns = p.timeout_ns;
    struct tp_comm *comm = NULL;
    if (rc == 0)
        rc = tp_comm_init(boot, &p.c, &comm, &err);
    struct tp_gpu *gpu = NULL;
    if (rc == 0 && (p.s.compute_gpu || p.s.grad_cuda)) {
        rc = tp_group_gpu_open(boot,
                          p.s.compute_gpu ? "--compute gpu"
                          : p.s.nccl      ? "--backend nccl"
                                          : "--mem cuda",
                          (p.s.compute_gpu ? TP_GPU_CUBLAS : 0) | (p.s.nccl ? TP_GPU_NCCL : 0),
                          p.gpu, p.timeout_ns, &gpu, &err);
        p.s.gpu = gpu;
        if (rc == 0 && me == 0)
            json_object_set_new(json_object_get(doc, "provenance"), "gpu", tp_gpu_info(gpu));
    }
    if (rc == 0) {
        if (me == 0 && !p.quiet) {
            char a[32], b[32];
            printf("# trainpath step: %s, %d ranks, %llu steps, global batch %llu, %s samples, "
                   "%s gradient in %u bucket(s)%s, compute %.3g ms, reduce %s\n",
                   p.preset ? p.preset : "custom", n, (unsigned long long)p.s.steps,
                   (unsigned long long)p.s.batch, tp_fmt_size(p.s.sample_bytes, a, sizeof a),
                   tp_fmt_size(p.s.grad_bytes, b, sizeof b), p.s.buckets,
                   p.s.overlap ? " overlapped" : "", p.s.compute_ms,
                   p.s.reduce == TP_STEP_EXACT ? "exact"
                   : p.s.reduce == TP_STEP_ARRIVAL ? "arrival" : "plain");
            fflush(stdout);
        }
        if (me == 0)
            json_object_set_new(json_object_get(doc, "provenance"), "comm", tp_comm_info(comm));
        rc = tp_step_run(comm, boot, &p.s, results, &err);
    }
    if (rc < 0 && rc != TP_ECHECK && comm)
        tp_comm_abort(comm);
    tp_gpu_close(gpu);
    if (comm)
        tp_comm_fini(comm);
    if (rc < 0 && me != 0 && rc != TP_ECHECK)
        tp_log(TP_LOG_ERROR, "rank %d: %s", me, err.msg);
    int worst = tp_boot_fini(boot);
    if (me == 0) {
        if (rc == 0 && worst != 0)
            rc = tp_error_set(&err, worst == 2 ? TP_EUSAGE : TP_EPEER,
                              "a rank exited with status %d", worst);
        if (!p.quiet && json_object_get(results, "runs"))
            print_summary(&p.s, results);
        tp_result_finish(doc, rc, rc ? err.msg : "");
        tp_error werr;
        if (p.json && cli_write_result(doc, p.json, &werr) < 0 && rc == 0) {
            err = werr;
            rc = werr.code;
        }
        json_decref(doc);
    }
    json_decref(config);
    json_decref(options);
    if (rc < 0)
        return me == 0 ? cli_fail(&err) : tp_exit_code(rc);
    return 0;
}
