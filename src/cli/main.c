/* trainpath: one binary, one subcommand per capability. main() only
 * dispatches; each command parses its own options (src/cli/<cmd>_cmd.c) and
 * calls into libtrainpath. */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "tp/gpu.h"
#include "tp/intr.h"
#include "tp/version.h"

/* stops: the command's long loops ask tp_intr at their safe points, so
 * SIGINT/SIGTERM become a failed document and exit 130/143 (tp/intr.h);
 * the others are short and write atomically, and keep the default action. */
static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    bool stops;
    const char *help;
} commands[] = {
    {"net", cmd_net, true, "point-to-point latency, jitter, bandwidth, loaded latency, CPU cost"},
    {"coll", cmd_coll, true, "collectives across ranks (local, MPI/Slurm, torchrun-style env)"},
    {"io", cmd_io, true,
     "storage: checkpoint commit, dataset reads, commit latency, path identification"},
    {"step", cmd_step, true,
     "synthetic data-parallel training: step breakdown, jitter, reproducibility"},
    {"plan", cmd_plan, false, "scale model: step time, checkpoint interval, cost per design"},
    {"check", cmd_check, false, "implementation checklist and plane-aware security audit of a node"},
    {"report", cmd_report, false, "history, baselines, threshold gates, diffs, fleet outliers, HTML"},
    {"sdc", cmd_sdc, true,
     "silent-data-corruption screen: the same seeded chain on every core, hashes compared"},
    {"workload", cmd_workload, true,
     "import torch.profiler traces and NCCL logs as a workload file for step"},
    {"validate", cmd_validate, true,
     "the main job: check, net, coll, io, step, sdc and plan, one results folder"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: trainpath [--version] [--help] COMMAND [ARGS]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\n'trainpath COMMAND --help' describes a command. Exit codes: 0 ok, 1 the "
               "measurement or the peer failed, 2 usage or bad input, 130/143 interrupted by "
               "SIGINT/SIGTERM.\n");
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
        printf("trainpath %s\n%s\n", tp_version(), tp_gpu_build_line());
        return 0;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0) {
            if (commands[i].stops) {
                tp_intr_install();
            } else {
                /* the default action, as these short commands promise,
                 * whatever a library's constructor installed (libinfinipath,
                 * under libfabric's psm provider, made SIGINT a silent exit
                 * 1 while libfabric was linked) */
                signal(SIGINT, SIG_DFL);
                signal(SIGTERM, SIG_DFL);
            }
            return commands[i].run(argc - 1, argv + 1);
        }
    fprintf(stderr, "trainpath: error: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
