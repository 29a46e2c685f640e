/* trainpath workload import: torch.profiler traces and/or NCCL logs into
 * a workload file (docs/workload.md). Parses the options into a
 * tp_wlimport_opts, makes one call (tp_wlimport_run, src/wlimport/),
 * prints the readers' warnings and the summary; bad input exits 2 naming
 * the file, the line or the option. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tp/log.h"
#include "tp/text.h"
#include "tp/units.h"
#include "tp/wlimport.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: trainpath workload import [--from auto|kineto|nccl-log] --out OUT.json\n"
               "                                 --samples N --sample-bytes B [--compute-ms MS]\n"
               "                                 [--world-size N] [-q] FILE...\n"
               "\n"
               "Turns what a PyTorch job already left behind into a workload file (version 2)\n"
               "that `trainpath step --workload` replays and a plan's workload.from reads\n"
               "(docs/workload.md). A torch.profiler trace (export_chrome_trace or\n"
               "tensorboard_trace_handler; Kineto's or the legacy profiler's; plain or .gz; of\n"
               "any size) gives the steps, the forward, backward and optimizer, and every\n"
               "collective (allreduce, allgather, reduce-scatter, alltoall, broadcast, reduce,\n"
               "send, recv, barrier) with its bytes, element type, process group, the call's\n"
               "time and its work's (the GPU kernel, or gloo's span; never the CPU's enqueue).\n"
               "An NCCL or RCCL log (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL) gives the\n"
               "collectives of one rank, a step being the shortest repeating sequence. Files\n"
               "of one rank merge, each figure from the first file that has it; traces of\n"
               "several ranks of one job (each saying its rank) are lined up step by step:\n"
               "each rank's own times, the ranks' clocks aligned on the collectives' ends,\n"
               "the arrival skew of each collective and the slowest rank of each step. The\n"
               "output's \"imported\" says which file filled which key and what was assumed.\n"
               "\n"
               "  --from F          the files' format: auto (by content, the default), kineto\n"
               "                    or nccl-log\n"
               "  --out FILE        the workload file to write (atomically; not an input)\n"
               "  --samples N       samples each rank trains on a step (1 to 1048576)\n"
               "  --sample-bytes B  one sample's bytes (4 to 64MiB; 264, 3K, 150KiB)\n"
               "  --compute-ms MS   the compute of a step, measured, for files without times\n"
               "                    (an NCCL log alone): forward a third, backward two thirds\n"
               "  --world-size N    the ranks of the job where no file says\n"
               "  -q, --quiet       no summary\n"
               "FILE may be - for standard input (once).\n"
               "Exit: 0 written; 2 bad input (a file that cannot be read or holds nothing\n"
               "usable, a value that is not a count or a time, files of one rank that disagree,\n"
               "ranks whose steps call other collectives, a collective no file sizes, no times\n"
               "and no --compute-ms, an output that is an input), naming the file, its line or\n"
               "event, or the option; 130/143 interrupted (nothing written).\n");
}

int cmd_workload(int argc, char **argv)
{
    enum { OPT_FROM = 256, OPT_OUT, OPT_SAMPLES, OPT_SBYTES, OPT_COMPUTE, OPT_WORLD };
    static const struct option opts[] = {
        {"from", required_argument, NULL, OPT_FROM},
        {"out", required_argument, NULL, OPT_OUT},
        {"samples", required_argument, NULL, OPT_SAMPLES},
        {"sample-bytes", required_argument, NULL, OPT_SBYTES},
        {"compute-ms", required_argument, NULL, OPT_COMPUTE},
        {"world-size", required_argument, NULL, OPT_WORLD},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return 0;
    }
    tp_error err = {0};
    if (argc < 2 || strcmp(argv[1], "import") != 0) {
        tp_error_set(&err, TP_EUSAGE, "%s: want 'trainpath workload import' (see --help)",
                     argc < 2 ? "no subcommand" : argv[1]);
        return cli_fail(&err);
    }
    argc--;
    argv++;
    struct tp_wlimport_opts o = {.from = "auto"};
    bool quiet = false;
    int rc = 0, opt;
    uint64_t v = 0;
    opterr = 0;
    optind = 1;
    while (rc == 0 && (opt = getopt_long(argc, argv, ":qh", opts, NULL)) != -1) {
        switch (opt) {
        case OPT_FROM: o.from = optarg; break;
        case OPT_OUT: o.out = optarg; break;
        case OPT_SAMPLES:
            rc = tp_parse_u64(optarg, "--samples", 1, 1u << 20, &o.samples, &err);
            break;
        case OPT_SBYTES:
            rc = tp_parse_size(optarg, "--sample-bytes", &o.sample_bytes, &err);
            if (rc == 0 && (o.sample_bytes < 4 || o.sample_bytes > (64u << 20)))
                rc = tp_error_set(&err, TP_EUSAGE, "--sample-bytes %s: 4 B to 64 MiB", optarg);
            break;
        case OPT_COMPUTE: {
            char *end;
            o.compute_ms = strtod(optarg, &end);
            if (end == optarg || *end || !(o.compute_ms > 0 && o.compute_ms <= 3600e3))
                rc =
                    tp_error_set(&err, TP_EUSAGE,
                                 "--compute-ms %s: milliseconds above 0 (at most an hour)", optarg);
            break;
        }
        case OPT_WORLD:
            rc = tp_parse_u64(optarg, "--world-size", 1, 1u << 20, &v, &err);
            o.world_size = (unsigned)v;
            break;
        case 'q': quiet = true; break;
        case 'h': usage(stdout); return 0;
        case ':': rc = tp_error_set(&err, TP_EUSAGE, "%s: needs a value", argv[optind - 1]); break;
        default:
            rc = tp_error_set(&err, TP_EUSAGE, "%s: unknown option (see trainpath workload --help)",
                              argv[optind - 1]);
        }
    }
    if (rc)
        return cli_fail(&err);
    o.files = (const char *const *)(argv + optind);
    o.nfiles = (size_t)(argc - optind);
    json_t *doc = NULL, *warnings = NULL;
    rc = tp_wlimport_run(&o, &doc, &warnings, &err);
    if (rc)
        return cli_fail(&err);
    for (size_t i = 0; i < json_array_size(warnings); i++) {
        char safe[512];
        tp_log(TP_LOG_WARN, "%s",
               tp_text_safe(json_string_value(json_array_get(warnings, i)), safe, sizeof safe,
                            TP_TEXT_LINE));
    }
    if (!quiet)
        tp_wlimport_print(stdout, doc, o.out);
    json_decref(doc);
    json_decref(warnings);
    return 0;
}
