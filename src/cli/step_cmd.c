/* trainpath step: a synthetic data-parallel training run over real ranks.
 * Options are parsed and checked before any rank starts; ranks come from a
 * local fork, mpirun/srun or a torchrun-style environment, as for coll. What
 * follows from the options, the run, the table and the document are the
 * library's (tp_step_prepare, tp_step_main). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tp/boot.h"
#include "tp/result.h"
#include "tp/step.h"
#include "tp/storage.h"
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
            "      --workload FILE    a recorded job (contrib/pytorch/trainpath_record.py,\n"
            "                         or trainpath workload import; version 1 or 2): each\n"
            "                         step's collectives of their kinds, each rank's compute\n"
            "                         and optimizer times replayed (on the GPU with\n"
            "                         --compute gpu)\n"
            "      --scale S          shrink the preset: gradient and sample bytes, compute\n"
            "                         time, checkpoint size (default 0.1)\n"
            "      --steps N          (default 50)\n"
            "      --batch N          global samples per step (default: the preset's per-rank\n"
            "                         batch times the ranks; 32 per rank without a preset)\n"
            "      --sample-size SIZE bytes per sample (default 4K)\n"
            "      --samples N        records in the dataset (default 4 global batches)\n"
            "      --grad-size SIZE   gradient bytes allreduced per step (default 4M)\n"
            "      --buckets N        allreduce buckets, 1..1024 and at most one per gradient\n"
            "                         element (default: one per 25 MiB as DDP, at most 16)\n"
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
            "      --trace FILE       the first run's timeline, every rank and thread, in the\n"
            "                         Chrome trace format (ui.perfetto.dev, chrome://tracing)\n"
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
            "      --shm-stores S, --bind ADDR, --timeout DUR   as for trainpath coll\n"
            "      --json FILE        write the result document (atomically; - for stdout)\n"
            "  -q, --quiet            no table\n"
            "Progress (steps done, time left) is shown on stderr when it is a terminal;\n"
            "-q or --json - hide it.\n");
}

enum {
    OPT_PRESET = 256, OPT_SCALE, OPT_STEPS, OPT_BATCH, OPT_SSIZE, OPT_SAMPLES, OPT_GSIZE,
    OPT_BUCKETS, OPT_NOOVERLAP, OPT_COMPUTE, OPT_DIM, OPT_LR, OPT_REDUCE, OPT_ALGO, OPT_VERIFY,
    OPT_DELAY, OPT_CKEVERY, OPT_CKSIZE, OPT_CKASYNC, OPT_DIR, OPT_PREFETCH, OPT_QD, OPT_ENGINE,
    OPT_DIRECT, OPT_NOIO, OPT_SEED, OPT_NOPIN, OPT_COMPUTE_WHERE, OPT_MEM, OPT_BACKEND, OPT_GEMM,
    OPT_TRACE, OPT_WORKLOAD,
};

static const struct option long_opts[] = {
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
    {"trace", required_argument, NULL, OPT_TRACE},
    {"workload", required_argument, NULL, OPT_WORKLOAD},
    {"compute", required_argument, NULL, OPT_COMPUTE_WHERE},
    {"mem", required_argument, NULL, OPT_MEM},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"gemm-size", required_argument, NULL, OPT_GEMM},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    CLI_GROUP_LONG_OPTS,
    {NULL, 0, NULL, 0},
};

struct parsed {
    struct tp_step_given s;
    struct tp_group_opts g;
    bool quiet;
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

/* One option of step's own: 0, TP_EUSAGE naming it, or 1 when opt is not one. */
static int own_opt(struct parsed *p, int opt, const char *arg, tp_error *err)
{
    struct tp_step_given *g = &p->s;
    struct tp_step_opts *s = &g->o;
    uint64_t v;
    double d;
    int rc = 0;
    switch (opt) {
    case OPT_PRESET: g->preset = arg; break;
    case OPT_SCALE:
        rc = parse_double(arg, "--scale", 1e-6, 1, &g->scale, err);
        g->have_scale = true;
        break;
    case OPT_STEPS: rc = tp_parse_u64(arg, "--steps", 1, 1000000, &s->steps, err); break;
    case OPT_BATCH:
        rc = tp_parse_u64(arg, "--batch", 1, 1u << 24, &s->batch, err);
        g->have_batch = true;
        break;
    case OPT_SSIZE:
        rc = tp_parse_size(arg, "--sample-size", &g->sample_bytes, err);
        g->have_sample = true;
        break;
    case OPT_SAMPLES:
        rc = tp_parse_u64(arg, "--samples", 1, UINT32_MAX - 1, &s->samples, err);
        g->have_samples = true;
        break;
    case OPT_GSIZE:
        rc = tp_parse_size(arg, "--grad-size", &g->grad_bytes, err);
        g->have_grad = true;
        break;
    case OPT_BUCKETS:
        rc = tp_parse_u64(arg, "--buckets", 1, 1024, &v, err);
        s->buckets = (unsigned)v;
        g->have_buckets = true;
        break;
    case OPT_NOOVERLAP: s->overlap = false; break;
    case OPT_COMPUTE:
        rc = parse_double(arg, "--compute-ms", 0, 600000, &g->compute_ms, err);
        g->have_compute = true;
        break;
    case OPT_DIM:
        rc = tp_parse_u64(arg, "--dim", 1, 65536, &v, err);
        s->dim = (unsigned)v;
        g->have_dim = true;
        break;
    case OPT_LR:
        rc = parse_double(arg, "--lr", 1e-9, 1e6, &d, err);
        s->lr = (float)d;
        break;
    case OPT_REDUCE:
        if (strcmp(arg, "plain") == 0)
            s->reduce = TP_STEP_PLAIN;
        else if (strcmp(arg, "exact") == 0)
            s->reduce = TP_STEP_EXACT;
        else if (strcmp(arg, "arrival") == 0)
            s->reduce = TP_STEP_ARRIVAL;
        else
            rc = tp_error_set(err, TP_EUSAGE, "--reduce %s: plain, exact or arrival", arg);
        break;
    case OPT_ALGO: s->algo = arg; break;
    case OPT_VERIFY:
        rc = tp_parse_u64(arg, "--verify-repro", 1, 100, &v, err);
        s->runs = (unsigned)v;
        break;
    case OPT_DELAY:
        if (s->ndelays == TP_STEP_MAX_DELAYS)
            rc = tp_error_set(err, TP_EUSAGE, "--inject-delay: at most %d",
                              TP_STEP_MAX_DELAYS);
        else
            rc = tp_step_parse_delay(arg, &s->delays[s->ndelays++], err);
        break;
    case OPT_CKEVERY:
        rc = tp_parse_u64(arg, "--ckpt-every", 0, 1000000, &s->ckpt_every, err);
        break;
    case OPT_CKSIZE:
        rc = tp_parse_size(arg, "--ckpt-size", &g->ckpt_bytes, err);
        g->have_ckpt = true;
        break;
    case OPT_CKASYNC: s->ckpt_async = true; break;
    case OPT_DIR: s->dir = arg; break;
    case OPT_PREFETCH:
        rc = tp_parse_u64(arg, "--prefetch", 1, 64, &v, err);
        s->prefetch = (unsigned)v;
        break;
    case OPT_QD:
        rc = tp_parse_u64(arg, "--qd", 1, 1024, &v, err);
        s->qd = (unsigned)v;
        break;
    case OPT_ENGINE:
        rc = tp_ioq_engine_check(arg, err);
        s->engine = arg;
        break;
    case OPT_DIRECT: s->direct = true; break;
    case OPT_NOIO: s->no_io = true; break;
    case OPT_SEED: rc = tp_parse_u64(arg, "--seed", 0, INT64_MAX, &s->seed, err); break;
    case OPT_NOPIN: s->pin = false; break;
    case OPT_TRACE: s->trace = arg; break;
    case OPT_WORKLOAD: g->workload = arg; break;
    case OPT_COMPUTE_WHERE:
        if (strcmp(arg, "cpu") && strcmp(arg, "gpu"))
            rc = tp_error_set(err, TP_EUSAGE, "--compute %s: cpu or gpu", arg);
        s->compute_gpu = strcmp(arg, "gpu") == 0;
        break;
    case OPT_MEM:
        if (strcmp(arg, "host") && strcmp(arg, "cuda"))
            rc = tp_error_set(err, TP_EUSAGE, "--mem %s: host or cuda", arg);
        g->mem_cuda = strcmp(arg, "cuda") == 0;
        break;
    case OPT_BACKEND:
        if (strcmp(arg, "trainpath") && strcmp(arg, "nccl"))
            rc = tp_error_set(err, TP_EUSAGE, "--backend %s: trainpath or nccl", arg);
        s->nccl = strcmp(arg, "nccl") == 0;
        break;
    case OPT_GEMM:
        rc = tp_parse_u64(arg, "--gemm-size", 16, 16384, &v, err);
        s->gemm_n = (unsigned)v;
        break;
    case 'q': p->quiet = true; break;
    default: return 1;
    }
    return rc;
}

static int parse(int argc, char **argv, struct parsed *p, tp_error *err)
{
    int rc = 0, opt;
    opterr = 0;
    optind = 1;
    while (rc == 0 && (opt = getopt_long(argc, argv, ":n:P:qh", long_opts, NULL)) != -1) {
        if (opt == 'h') {
            usage(stdout);
            return 1;
        }
        if (opt == ':')
            return tp_error_set(err, TP_EUSAGE, "%s: needs a value", argv[optind - 1]);
        if ((rc = own_opt(p, opt, optarg, err)) == 1 &&
            (rc = cli_group_opt(&p->g, opt, optarg, err)) == 1)
            return tp_error_set(err, TP_EUSAGE, "%s: unknown option (see trainpath step --help)",
                                argv[optind - 1]);
    }
    if (rc)
        return rc;
    if (optind < argc)
        return tp_error_set(err, TP_EUSAGE, "%s: unexpected argument", argv[optind]);
    return cli_group_check(&p->g, err);
}

int cmd_step(int argc, char **argv)
{
    struct parsed p = {.s = {.scale = 0.1, .mem_cuda = -1,
                             .o = {.steps = 50, .overlap = true, .lr = 0.5f, .prefetch = 2,
                                   .qd = 16, .seed = 1, .runs = 1, .pin = true,
                                   .dir = "/var/tmp/trainpath-step"}}};
    cli_group_init(&p.g);
    tp_error err = {0};
    int rc = parse(argc, argv, &p, &err);
    if (rc == 1)
        return 0;
    if (rc == 0)
        rc = tp_step_prepare(&p.s, &p.g, &err);
    if (cli_group_distinct(&p.g, p.s.o.trace, p.s.workload)) { /* before any refusal's document */
        tp_step_workload_free((struct tp_step_workload *)p.s.o.workload);
        return 2;
    }
    if (rc == 0)
        rc = cli_group_json_ok(&p.g, &err);
    if (rc == 0 && p.s.o.trace && tp_boot_will_be_rank0(p.g.launcher_name))
        rc = tp_result_file_ok("--trace", p.s.o.trace, &err);
    if (rc < 0)
        return cli_refuse("step", cli_group_json(&p.g, argc, argv), &err);
    /* with --json - the document alone goes to stdout */
    p.s.table = p.quiet ? NULL : cli_table_out(p.g.json);
    p.s.o.progress_line = cli_progress(p.quiet, p.g.json);
    bool speak;
    rc = tp_step_main(&p.s, &p.g, &speak, &err);
    tp_step_workload_free((struct tp_step_workload *)p.s.o.workload);
    return cli_group_exit(rc, speak, &err);
}
