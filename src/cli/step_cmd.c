/* trainpath step: a synthetic data-parallel training run over real ranks.
 * Options are parsed and checked before any rank starts; ranks come from a
 * local fork, mpirun/srun or a torchrun-style environment, as for coll. What
 * follows from the options, the run, the table and the document are the
 * library's (tp_step_prepare, tp_step_main). Each option is a row of one
 * table (opts.h), the group's of cli_group_rows, which --help is written
 * from. */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "tp/boot.h"
#include "tp/result.h"
#include "tp/step.h"
#include "tp/units.h"

struct parsed {
    struct tp_step_given s;
    struct tp_group_opts g;
    bool quiet;
};

static int delay_parse(const char *arg, void *opts, tp_error *err)
{
    struct tp_step_opts *s = &((struct parsed *)opts)->s.o;
    if (s->ndelays == TP_STEP_MAX_DELAYS)
        return tp_error_set(err, TP_EUSAGE, "--inject-delay: at most %d", TP_STEP_MAX_DELAYS);
    return tp_step_parse_delay(arg, &s->delays[s->ndelays++], err);
}

#define P(f) CLI_AT(struct parsed, f)
static const char *const reduces[] = {"plain", "exact", "arrival", NULL}; /* enum tp_step_reduce */
static const char *const wheres[] = {"cpu", "gpu", NULL};
static const char *const mems[] = {"host", "cuda", NULL};
static const char *const backends[] = {"trainpath", "nccl", NULL};

/* step's options in the order of --help, the group's among them (CLI_SEE) */
static const struct cli_opt rows[] = {
    {CLI_TEXT,
     .help =
         "usage: trainpath step [-n RANKS] [--preset NAME [--scale S]] [--steps N] [options]\n"
         "\n"
         "Each rank, each step: its share of the global batch from a prefetching loader\n"
         "(reads through the io engines), the model's forward and backward plus\n"
         "calibrated CPU work, the gradient allreduced in buckets (overlapped with the\n"
         "compute, as DDP does), the update, and every K steps a checkpoint.\n"
         "\n"},
    {CLI_SEE, "ranks", .help = "local ranks (default 2; mpirun/srun/env as for coll)"},
    {CLI_STRING, "preset", 0, "NAME", P(s.preset),
     .help = "resnet50, llm-1.3b, unet3d (shapes from public figures)"},
    {CLI_STRING, "workload", 0, "FILE", P(s.workload),
     .help = "a recorded job (contrib/pytorch/trainpath_record.py,\n"
             "or trainpath workload import; version 1 or 2): each\n"
             "step's collectives of their kinds, each rank's compute\n"
             "and optimizer times replayed (on the GPU with\n"
             "--compute gpu)"},
    {CLI_REAL, "scale", 0, "S", P(s.scale), .given = P(s.have_scale), .min = 1e-6, .max = 1,
     .def = "0.1",
     .help = "shrink the preset: gradient and sample bytes, compute\n"
             "time, checkpoint size (default {})"},
    {CLI_UINT, "steps", 0, "N", P(s.o.steps), .lo = 1, .hi = 1000000, .def = "50",
     .help = "(default {})"},
    {CLI_UINT, "batch", 0, "N", P(s.o.batch), .given = P(s.have_batch), .lo = 1, .hi = 1u << 24,
     .help = "global samples per step (default: the preset's per-rank\n"
             "batch times the ranks; 32 per rank without a preset)"},
    {CLI_SIZE, "sample-size", 0, "SIZE", P(s.sample_bytes), .given = P(s.have_sample),
     .help = "bytes per sample (default 4K)"},
    {CLI_UINT, "samples", 0, "N", P(s.o.samples), .given = P(s.have_samples), .lo = 1,
     .hi = UINT32_MAX - 1, .help = "records in the dataset (default 4 global batches)"},
    {CLI_SIZE, "grad-size", 0, "SIZE", P(s.grad_bytes), .given = P(s.have_grad),
     .help = "gradient bytes allreduced per step (default 4M)"},
    {CLI_UINT, "buckets", 0, "N", P(s.o.buckets), .given = P(s.have_buckets), .lo = 1,
     .hi = 1024,
     .help = "allreduce buckets, 1..1024 and at most one per gradient\n"
             "element (default: one per 25 MiB as DDP, at most 16)"},
    {CLI_CLEAR, "no-overlap", .at = P(s.o.overlap),
     .help = "allreduce after the compute instead of during it"},
    {CLI_REAL, "compute-ms", 0, "MS", P(s.compute_ms), .given = P(s.have_compute), .max = 600000,
     .help = "compute per step and rank (default 10)"},
    {CLI_UINT, "dim", 0, "N", P(s.o.dim), .given = P(s.have_dim), .lo = 1, .hi = 65536,
     .help = "features of the model (default 64, fewer if samples are small)"},
    {CLI_REAL, "lr", 0, "X", P(s.o.lr), .min = 1e-9, .max = 1e6, .def = "0.5",
     .help = "learning rate (default {})"},
    {CLI_CHOICE, "reduce", 0, "MODE", P(s.o.reduce), .values = reduces, .alias = "repro",
     .help = "plain (default: deterministic for one configuration),\n"
             "exact (the same bits for any rank count and timing), or\n"
             "arrival (ranks' sums added in the order they became ready)"},
    {CLI_STRING, "algo", 0, "A", P(s.o.algo), .help = "allreduce algorithm (default: by size)"},
    {CLI_UINT, "verify-repro", 0, "N", P(s.o.runs), .lo = 1, .hi = 100, .def = "1",
     .help = "train N times with different injected timing and compare\n"
             "the weights' hashes (exit 1 if plain or exact differ)"},
    {CLI_CALL, "inject-delay", 0, "SPEC", .check = delay_parse,
     .help = "WHERE:const:DUR, WHERE:exp:MEAN or WHERE:spike:DUR:P,\n"
             "WHERE comm, io or compute, @RANK for one rank (repeatable)"},
    {CLI_UINT, "ckpt-every", 0, "K", P(s.o.ckpt_every), .hi = 1000000,
     .help = "checkpoint every K steps (default 0: none)"},
    {CLI_SIZE, "ckpt-size", 0, "SIZE", P(s.ckpt_bytes), .given = P(s.have_ckpt),
     .help = "the job's checkpoint (default: the preset's 14 B/param;\n"
             "64M without one); each rank writes its share"},
    {CLI_FLAG, "ckpt-async", .at = P(s.o.ckpt_async),
     .help = "write checkpoints from a snapshot in the background"},
    {CLI_STRING, "dir", 0, "DIR", P(s.o.dir), .def = "/var/tmp/trainpath-step",
     .help = "dataset and checkpoints (default {})"},
    {CLI_UINT, "prefetch", 0, "N", P(s.o.prefetch), .lo = 1, .hi = 64, .def = "2",
     .help = "batches the loader reads ahead (default {})"},
    {CLI_UINT, "qd", 0, "N", P(s.o.qd), .lo = 1, .hi = 1024, .def = "16",
     .help = "loader reads in flight (default {})"},
    {CLI_STRING, "engine", 0, "E", P(s.o.engine), .check = cli_engine_check,
     .help = "auto, io_uring, psync"},
    {CLI_FLAG, "direct", .at = P(s.o.direct), .help = "O_DIRECT dataset reads"},
    {CLI_FLAG, "no-io", .at = P(s.o.no_io),
     .help = "generate the samples in memory instead of reading them"},
    {CLI_UINT, "seed", 0, "N", P(s.o.seed), .hi = INT64_MAX, .def = "1",
     .help = "data, model and timing seed (default {})"},
    {CLI_CLEAR, "no-pin", .at = P(s.o.pin), .help = "leave the compute threads unpinned"},
    {CLI_STRING, "trace", 0, "FILE", P(s.o.trace),
     .help = "the first run's timeline, every rank and thread, in the\n"
             "Chrome trace format (ui.perfetto.dev, chrome://tracing)"},
    {CLI_CHOICE, "compute", 0, "WHERE", P(s.o.compute_gpu), .values = wheres,
     .help = "cpu (default: calibrated CPU work) or gpu (cuBLAS bf16\n"
             "matrix products sized by --compute-ms; the gradient then\n"
             "lives on the GPU)"},
    {CLI_CHOICE, "mem", 0, "M", P(s.mem_cuda), .values = mems,
     .help = "host or cuda: where the gradient buckets live (default:\n"
             "cuda with --compute gpu, else host)"},
    {CLI_CHOICE, "backend", 0, "B", P(s.o.nccl), .values = backends,
     .help = "trainpath (default; from GPU memory it stages through\n"
             "host memory) or nccl (needs the gradient on the GPU)"},
    {CLI_UINT, "gemm-size", 0, "N", P(s.o.gemm_n), .lo = 16, .hi = 16384,
     .help = "matrix side of the GPU compute (default: calibrated)"},
    {CLI_SEE, "gpu", .help = "device index (default: the rank's index on its host)"},
    {CLI_TEXT,
     .help = "      --launcher L, --key-file F, --transport T, -P/--provider NAME, --intra M,\n"
             "      --shm-stores S, --bind ADDR, --timeout DUR   as for trainpath coll\n"},
    {CLI_SEE, "json", .help = "write the result document (atomically; - for stdout)"},
    {CLI_FLAG, "quiet", 'q', .at = P(quiet), .help = "no table"},
    {CLI_TEXT, .help = "Progress (steps done, time left) is shown on stderr when it is a terminal;\n"
                       "-q or --json - hide it.\n"},
    {CLI_END},
};

static const struct cli_cmd step_cmd = {"step", rows, 25, .group = cli_group_rows,
                                        .group_at = offsetof(struct parsed, g)};

static int parse(int argc, char **argv, struct parsed *p, tp_error *err)
{
    int rc = cli_opts_parse(&step_cmd, argc, argv, p, err);
    if (rc)
        return rc;
    if (optind < argc)
        return tp_error_set(err, TP_EUSAGE, "%s: unexpected argument", argv[optind]);
    return cli_group_check(&p->g, err);
}

int cmd_step(int argc, char **argv)
{
    struct parsed p = {.s = {.mem_cuda = -1, .o = {.overlap = true, .pin = true}}};
    cli_group_init(&p.g);
    tp_error err = {0};
    int rc = cli_opts_defaults(&step_cmd, &p, &err);
    if (rc == 0)
        rc = parse(argc, argv, &p, &err);
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
