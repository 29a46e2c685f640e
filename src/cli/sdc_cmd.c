/* trainpath sdc: the silent-data-corruption screen of this node. Parses the
 * options into a tp_sdc_opts for tp_sdc_run (src/sdc/), which runs the
 * chains, writes the document and prints the table; bad input exits 2
 * naming the option, with a failed document when --json was given. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "tp/sdc.h"
#include "tp/units.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: trainpath sdc [--steps N | --time DUR] [--threads N] [--gpu] [--seed S]\n"
               "                     [--json FILE] [-q]\n"
               "\n"
               "Silent-data-corruption screen (docs/sdc.md): every thread, one per CPU this\n"
               "process may use and pinned to it, runs the same deterministic chain on the same\n"
               "seeded data (a 64x64 f32 matrix product in one fixed order, exact column sums,\n"
               "the result fed into the next step) and hashes each step's result into a\n"
               "SHA-256 chain. A thread whose hashes differ from the majority's is named with\n"
               "the step where it diverged. Under `trainpath validate` every node runs this and\n"
               "rank 0 names the node whose hashes differ from the other nodes'.\n"
               "\n"
               "  --steps N     steps of every chain (default 10000; 1 to 10^12)\n"
               "  --time DUR    run for about DUR instead (30s, 10m, 2h; at most a week), on to\n"
               "                the next checkpoint, every thread the same steps\n"
               "  --threads N   chains at once, 1 to 1024 (default: one per CPU allowed)\n"
               "  --gpu         also one chain per GPU of this host, its products by cuBLAS\n"
               "                (f32, pedantic math); each GPU judged against the GPUs of its\n"
               "                kind (name, compute capability, SMs, cuBLAS version)\n"
               "  --seed S      the data's seed (default 1; every node must use the same)\n"
               "  --json FILE   write the result document (atomically; - for stdout)\n"
               "  -q, --quiet   no table\n"
               "Progress (steps or time, time left) is shown on stderr when it is a terminal;\n"
               "-q or --json - hide it.\n"
               "Exit: 0 every thread computed the same, 1 a thread (or GPU) diverged or they\n"
               "have no majority, 2 bad input (--gpu where no GPU or no GPU path is).\n");
}

int cmd_sdc(int argc, char **argv)
{
    enum { OPT_STEPS = 256, OPT_TIME, OPT_THREADS, OPT_GPU, OPT_SEED, OPT_JSON };
    static const struct option opts[] = {
        {"steps", required_argument, NULL, OPT_STEPS},
        {"time", required_argument, NULL, OPT_TIME},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"gpu", no_argument, NULL, OPT_GPU},
        {"seed", required_argument, NULL, OPT_SEED},
        {"json", required_argument, NULL, OPT_JSON},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct tp_sdc_opts o = {.seed = 1};
    tp_error err = {0};
    int rc = 0, opt;
    uint64_t v = 0, ns = 0;
    opterr = 0;
    optind = 1;
    while (rc == 0 && (opt = getopt_long(argc, argv, ":qh", opts, NULL)) != -1) {
        switch (opt) {
        case OPT_STEPS:
            rc = tp_parse_u64(optarg, "--steps", 1, TP_SDC_MAX_STEPS, &o.steps, &err);
            break;
        case OPT_TIME:
            rc = tp_parse_duration_min(optarg, "--time", TP_DURATION_MIN_NS, &ns, &err);
            o.seconds = (double)ns / 1e9;
            break;
        case OPT_THREADS:
            rc = tp_parse_u64(optarg, "--threads", 1, TP_SDC_MAX_THREADS, &v, &err);
            o.threads = (int)v;
            break;
        case OPT_GPU: o.gpu = true; break;
        case OPT_SEED: rc = tp_parse_u64(optarg, "--seed", 0, INT64_MAX, &o.seed, &err); break;
        case OPT_JSON: o.json = optarg; break;
        case 'q': o.quiet = true; break;
        case 'h': usage(stdout); return 0;
        case ':': rc = tp_error_set(&err, TP_EUSAGE, "%s: needs a value", argv[optind - 1]); break;
        default:
            rc = tp_error_set(&err, TP_EUSAGE, "%s: unknown option (see trainpath sdc --help)",
                              argv[optind - 1]);
        }
    }
    if (rc == 0 && optind < argc)
        rc = tp_error_set(&err, TP_EUSAGE, "%s: unexpected argument", argv[optind]);
    o.progress_line = cli_progress(o.quiet, o.json);
    if (rc == 0)
        rc = tp_sdc_run(&o, &err);
    if (rc == TP_EUSAGE)
        return cli_refuse("sdc", o.json ? o.json : cli_json_arg(argc, argv), &err);
    return rc < 0 ? cli_fail(&err) : 0;
}
