/* trainpath validate: the main job's options, in one struct for
 * tp_validate_run (src/validate/), which runs the profile and prints the
 * progress, the summary and where the results went; bad input before
 * anything runs is printed here once and exits 2. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "tp/units.h"
#include "tp/validate.h"

static void usage(FILE *f)
{
    fprintf(
        f, "usage: trainpath validate [--profile quick|standard|extended] [--out DIR] [--db FILE]\n"
           "                          [--only GROUPS] [--policy FILE] [--prometheus FILE] [-q]\n"
           "                          [--launcher L] [--iface NAME] [--pairs-at-once K]\n"
           "                          [--key-file F]\n"
           "\n"
           "The main job: the node audit, point-to-point latency and bandwidth, the\n"
           "collectives, the storage path (commit latency, checkpoint), training steps and\n"
           "the plan of this machine, as one results folder: every result document, the\n"
           "history database and the HTML report (report.html).\n"
           "\n"
           "Alone it validates this host (local ranks over loopback and shared memory,\n"
           "storage in a folder under /var/tmp). Under mpirun, srun or torchrun, one\n"
           "process per node, it validates the allocation: every node alone, then every\n"
           "pair of nodes (n-1 rounds by the circle method, each node in one pair per\n"
           "round, bandwidth both ways); rank 0 gathers the documents, judges the fleet\n"
           "(outlier nodes, slow nodes and links) and writes the results folder.\n"
           "\n"
           "  --profile P   quick (under a minute here, the default), standard (a few\n"
           "                minutes), extended (longer runs and larger sizes)\n"
           "  --out DIR     the results folder (default results/validate-UTCSTAMP)\n"
           "  --db FILE     the history database (default DIR/history.sqlite)\n"
           "  --only LIST   groups to run: check,net,coll,io,step,plan (plan needs net,\n"
           "                coll and io)\n"
           "  --policy FILE the plane policy for the audit (default: node rules only)\n"
           "  --prometheus FILE  the metrics in node_exporter's textfile format\n"
           "  --launcher L  local (this host), mpi or env (default: detected)\n"
           "  --iface NAME  allocation: the interface whose IPv4 address the other nodes\n"
           "                reach (default: that of the default route)\n"
           "  --pairs-at-once K  allocation: measure at most K pairs at once (default: a\n"
           "                whole round, n/2; 1 measures every link alone)\n"
           "  --key-file F  env launcher: the pre-shared key of the rendezvous\n"
           "  -q, --quiet   no progress line, no summary\n"
           "Exit: 0 every test ran and none failed, 1 a test failed, the audit found a\n"
           "critical finding or the fleet a slow node or link, 2 bad input.\n");
}

int cmd_validate(int argc, char **argv)
{
    enum { OPT_ONLY = 256, OPT_IFACE, OPT_LAUNCHER, OPT_KEY, OPT_AT_ONCE };
    static const struct option opts[] = {
        {"profile", required_argument, NULL, 'p'},
        {"out", required_argument, NULL, 'o'},
        {"db", required_argument, NULL, 'd'},
        {"policy", required_argument, NULL, 'P'},
        {"prometheus", required_argument, NULL, 'm'},
        {"only", required_argument, NULL, OPT_ONLY},
        {"iface", required_argument, NULL, OPT_IFACE},
        {"launcher", required_argument, NULL, OPT_LAUNCHER},
        {"key-file", required_argument, NULL, OPT_KEY},
        {"pairs-at-once", required_argument, NULL, OPT_AT_ONCE},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct tp_validate_opts o = {.profile = "quick"};
    tp_error err = {0};
    int rc = 0, opt;
    opterr = 0;
    optind = 1;
    while (rc == 0 && (opt = getopt_long(argc, argv, ":qh", opts, NULL)) != -1) {
        switch (opt) {
        case 'p': o.profile = optarg; break;
        case 'o': o.out = optarg; break;
        case 'd': o.db = optarg; break;
        case 'P': o.policy = optarg; break;
        case 'm': o.prom = optarg; break;
        case OPT_ONLY: o.only = optarg; break;
        case OPT_IFACE: o.iface = optarg; break;
        case OPT_LAUNCHER: o.launcher = optarg; break;
        case OPT_KEY: o.key_file = optarg; break;
        case OPT_AT_ONCE: {
            uint64_t k = 0;
            rc = tp_parse_u64(optarg, "--pairs-at-once", 1, 1000000, &k, &err);
            o.pairs_at_once = (int)k;
            break;
        }
        case 'q': o.quiet = true; break;
        case 'h': usage(stdout); return 0;
        case ':': rc = tp_error_set(&err, TP_EUSAGE, "%s: needs a value", argv[optind - 1]); break;
        default:
            rc = tp_error_set(&err, TP_EUSAGE, "%s: unknown option (see trainpath validate --help)",
                              argv[optind - 1]);
        }
    }
    if (rc == 0 && optind < argc)
        rc = tp_error_set(&err, TP_EUSAGE, "%s: unexpected argument", argv[optind]);
    if (rc)
        return cli_fail(&err);
    rc = tp_validate_run(&o, &err);
    return rc < 0 ? cli_fail(&err) : rc;
}
