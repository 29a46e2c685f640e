/* trainpath plan: the scale model. So far its checkpoint-interval part:
 * `trainpath plan interval --checkpoint-cost 5m --mtbf 24h`. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "tp/plan.h"
#include "tp/result.h"
#include "tp/units.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: trainpath plan interval --checkpoint-cost DUR --mtbf DUR [--restart DUR]\n"
               "                               [--json FILE] [-q]\n"
               "\n"
               "How often to checkpoint: Young's interval sqrt(2 delta M), Daly's higher-order\n"
               "one, and the share of wall time lost at each (Daly's model: exponential\n"
               "failures, each losing the work since the last checkpoint plus the restart).\n"
               "  --checkpoint-cost DUR  time one checkpoint stalls the job (delta)\n"
               "  --mtbf DUR             mean time between failures of the job (M)\n"
               "  --restart DUR          time to restart after a failure (default 0)\n"
               "\n"
               "Plan files (designs, costs, measured inputs) are not built yet.\n");
}

static const struct option long_opts[] = {
    {"checkpoint-cost", required_argument, NULL, 'c'},
    {"mtbf", required_argument, NULL, 'm'},
    {"restart", required_argument, NULL, 'r'},
    {"json", required_argument, NULL, 'j'},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int interval(int argc, char **argv)
{
    uint64_t delta = 0, mtbf = 0, restart = 0;
    const char *json = NULL;
    bool quiet = false, have_d = false, have_m = false;
    tp_error err = {0};
    int rc = 0, opt;
    opterr = 0;
    optind = 1;
    while (rc == 0 && (opt = getopt_long(argc, argv, ":qh", long_opts, NULL)) != -1) {
        switch (opt) {
        case 'c':
            rc = tp_parse_duration(optarg, "--checkpoint-cost", &delta, &err);
            have_d = true;
            break;
        case 'm':
            rc = tp_parse_duration(optarg, "--mtbf", &mtbf, &err);
            have_m = true;
            break;
        case 'r': rc = tp_parse_duration(optarg, "--restart", &restart, &err); break;
        case 'j': json = optarg; break;
        case 'q': quiet = true; break;
        case 'h': usage(stdout); return 0;
        case ':': rc = tp_error_set(&err, TP_EUSAGE, "%s: needs a value", argv[optind - 1]); break;
        default:
            rc = tp_error_set(&err, TP_EUSAGE, "%s: unknown option (see trainpath plan --help)",
                              argv[optind - 1]);
        }
    }
    if (rc == 0 && optind < argc)
        rc = tp_error_set(&err, TP_EUSAGE, "%s: unexpected argument", argv[optind]);
    if (rc == 0 && (!have_d || delta == 0))
        rc = tp_error_set(&err, TP_EUSAGE, "--checkpoint-cost: needed, and more than 0");
    if (rc == 0 && (!have_m || mtbf == 0))
        rc = tp_error_set(&err, TP_EUSAGE, "--mtbf: needed, and more than 0");
    if (rc)
        return cli_fail(&err);
    double d = (double)delta / 1e9, m = (double)mtbf / 1e9, r = (double)restart / 1e9;
    double ty = tp_plan_young(d, m), td = tp_plan_daly(d, m);
    double wy = tp_plan_waste(ty, d, r, m), wd = tp_plan_waste(td, d, r, m);
    if (!quiet) {
        char a[32], b[32];
        printf("checkpoint every %s (Daly; Young: %s): %.2f %% of wall time lost to "
               "checkpoints, rework and restarts (%.2f %% at Young's)\n",
               tp_fmt_ns(td * 1e9, a, sizeof a), tp_fmt_ns(ty * 1e9, b, sizeof b), 100 * wd,
               100 * wy);
    }
    if (json) {
        json_t *cfg = json_pack("{s:f, s:f, s:f}", "checkpoint_cost_s", d, "mtbf_s", m,
                                "restart_s", r);
        json_t *doc = tp_result_new("plan interval", cfg);
        json_object_set_new(
            doc, "results",
            json_pack("{s:{s:o, s:f}, s:{s:o, s:f}}", "daly", "interval", tp_metric(td, "s"),
                      "waste_fraction", wd, "young", "interval", tp_metric(ty, "s"),
                      "waste_fraction", wy));
        tp_result_finish(doc, 0, "");
        rc = tp_result_write(doc, json, &err);
        json_decref(doc);
        if (rc)
            return cli_fail(&err);
    }
    return 0;
}

int cmd_plan(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "interval") == 0)
        return interval(argc - 1, argv + 1);
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return 0;
    }
    usage(stderr);
    tp_error err;
    tp_error_set(&err, TP_EUSAGE, "plan %s: only 'plan interval' exists so far (plan files are "
                 "not built yet)", argc >= 2 ? argv[1] : "");
    return cli_fail(&err);
}
