/* trainpath: one binary, one subcommand per capability. main() only
 * dispatches; each command parses its own options (src/cli/<cmd>_cmd.c) and
 * calls into libtrainpath. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "tp/gpu.h"
#include "tp/log.h"
#include "tp/result.h"

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
} commands[] = {
    {"net", cmd_net, "point-to-point latency, jitter, bandwidth, loaded latency, CPU cost"},
    {"coll", cmd_coll, "collectives across ranks (local, MPI/Slurm, torchrun-style env)"},
    {"io", cmd_io, "storage: checkpoint commit, dataset reads, commit latency, path identification"},
    {"step", cmd_step, "synthetic data-parallel training: step breakdown, jitter, reproducibility"},
    {"plan", cmd_plan, "scale model: step time, checkpoint interval, cost per design"},
    {"check", cmd_check, "implementation checklist and plane-aware security audit of a node"},
    {"report", cmd_report, "history, baselines, threshold gates, diffs, fleet outliers, HTML"},
    {"validate", cmd_validate, "the main job: check, net, coll, io, step and plan, one results folder"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: trainpath [--version] [--help] COMMAND [ARGS]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\n'trainpath COMMAND --help' describes a command. Exit codes: 0 ok, 1 the "
               "measurement or the peer failed, 2 usage or bad input.\n");
}

const char *cli_launcher(const char *given)
{
    return tp_boot_detect(given);
}

bool cli_rank0(const char *launcher)
{
    return tp_boot_will_be_rank0(launcher);
}

int cli_fail(const tp_error *err)
{
    tp_log(TP_LOG_ERROR, "%s", err->msg[0] ? err->msg : tp_code_name(err->code));
    return tp_exit_code(err->code);
}

int cli_json_path_ok(const char *path, tp_error *err)
{
    if (strcmp(path, "-") == 0)
        return 0;
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    struct stat st;
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0 ||
        (stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
        return tp_error_set(err, TP_EUSAGE, "--json %s: names a folder, not a file", path);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    if (access(dir, W_OK | X_OK) != 0)
        return tp_error_errno(err, TP_EUSAGE, errno, "--json %s: folder %s is not writable", path,
                              dir);
    return 0;
}

int cli_write_result(const json_t *doc, const char *path, tp_error *err)
{
    int rc = tp_result_write(doc, path, err);
    if (rc == TP_EUSAGE) {
        rc = TP_ESYS;
        if (err)
            err->code = rc;
    }
    return rc;
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
        printf("trainpath %s\n%s\n", TP_VERSION, tp_gpu_build_line());
        return 0;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "trainpath: error: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
