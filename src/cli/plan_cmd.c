/* trainpath plan: the scale model. `trainpath plan FILE` evaluates a plan
 * file's candidate designs at the cluster's scale and over a sweep of
 * scales, ranks them by cost per run and says in words what dominates;
 * `trainpath plan interval --checkpoint-cost 5m --mtbf 24h` is the
 * checkpoint interval alone. The deciding is the library's (tp_plan_run,
 * tp_plan_interval_run, src/plan/decide.c); this file parses the options
 * and prints the decision's tables and words. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tp/plan.h"
#include "tp/result.h"
#include "tp/text.h"
#include "tp/units.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: trainpath plan FILE [--gpus N] [--json FILE] [-q]\n"
               "       trainpath plan interval --checkpoint-cost DUR --mtbf DUR [--restart DUR]\n"
               "                               [--json FILE] [-q]\n"
               "\n"
               "How often to checkpoint: Young's interval sqrt(2 delta M), Daly's higher-order\n"
               "one, and the share of wall time lost at each (Daly's model: exponential\n"
               "failures, each losing the work since the last checkpoint plus the restart).\n"
               "  --checkpoint-cost DUR  time one checkpoint stalls the job (delta)\n"
               "  --mtbf DUR             mean time between failures of the job (M)\n"
               "  --restart DUR          time to restart after a failure (default 0)\n"
               "\n"
               "A plan file (YAML; docs/examples/plan.yaml, docs/plan.md) names a workload, a\n"
               "cluster, prices and candidate designs, each figure nominal or measured by\n"
               "trainpath (`KEY: {measured: result.json}`). For each candidate at the\n"
               "cluster's size: step time (the slowest of N ranks, exposed communication),\n"
               "checkpoint interval and waste, time to train and cost per run; ranked, with\n"
               "a sweep over scales and the break-even scales between designs.\n"
               "  --gpus N               evaluate at N GPUs instead of the cluster's size\n"
               "  --json FILE            write the result document (atomically; - for stdout)\n"
               "  -q, --quiet            no table\n");
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

/* plan interval's figures, held to the ranges of sense of the plan file's
 * own keys (docs/plan.md, "Limits"), the value echoed as typed. */
static int interval_limit(const char *opt, const char *typed, uint64_t ns, double lo_s,
                          double hi_s, const char *says, tp_error *err)
{
    double v = (double)ns / 1e9;
    if (typed && (v < lo_s || v > hi_s))
        return tp_error_set(err, TP_EUSAGE, "%s: '%s' %s", opt, typed, says);
    return 0;
}

static int interval(int argc, char **argv)
{
    uint64_t delta = 0, mtbf = 0, restart = 0;
    const char *delta_typed = NULL, *mtbf_typed = NULL, *restart_typed = NULL;
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
            delta_typed = optarg;
            break;
        case 'm':
            rc = tp_parse_duration(optarg, "--mtbf", &mtbf, &err);
            have_m = true;
            mtbf_typed = optarg;
            break;
        case 'r':
            rc = tp_parse_duration(optarg, "--restart", &restart, &err);
            restart_typed = optarg;
            break;
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
    if (rc == 0)
        rc = interval_limit("--checkpoint-cost", delta_typed, delta, 1e-9, 7 * 86400.0,
                            "must be between 1 ns and 1 w", &err);
    if (rc == 0)
        rc = interval_limit("--mtbf", mtbf_typed, mtbf, 60, 1000 * 31536000.0,
                            "must be between 1 min and 1000 y", &err);
    if (rc == 0)
        rc = interval_limit("--restart", restart_typed, restart, 0, 7 * 86400.0,
                            "must be between 0 and 1 w", &err);
    if (rc == 0 && json)
        rc = tp_result_path_ok(json, &err);
    if (rc)
        return cli_refuse("plan interval", json ? json : cli_json_arg(argc, argv), &err);
    struct tp_plan_interval iv = {.ckpt_s = (double)delta / 1e9, .mtbf_s = (double)mtbf / 1e9,
                                  .restart_s = (double)restart / 1e9};
    json_t *doc = json ? tp_result_new("plan interval", NULL) : NULL;
    tp_plan_interval_run(&iv, doc);
    if (!quiet) { /* with --json - the document alone goes to stdout */
        char a[32], b[32];
        fprintf(cli_table_out(json),
                "checkpoint every %s (Daly; Young: %s): %.2f %% of wall time lost to "
                "checkpoints, rework and restarts (%.2f %% at Young's)\n",
               tp_fmt_ns(iv.daly_s * 1e9, a, sizeof a), tp_fmt_ns(iv.young_s * 1e9, b, sizeof b),
               100 * iv.daly_waste, 100 * iv.young_waste);
    }
    if (json && !doc)
        rc = tp_error_set(&err, TP_ENOMEM, "out of memory");
    if (doc) {
        tp_result_finish(doc, 0, "");
        rc = tp_result_write_run(doc, json, &err);
        json_decref(doc);
    }
    return rc ? cli_fail(&err) : 0;
}

/* ---- plan FILE ---- */

/* The names a plan file gave (candidates, the workload) and the words
 * made of them are the file's text: printed through tp_text_safe, so that
 * an escape sequence in a name never reaches the terminal. */

/* The candidates in rank order at the scale decided at. */
static void print_ranking(FILE *o, const struct tp_plan_spec *s, const struct tp_plan_decision *d)
{
    char a[48], b[48], c[48], e[48], f[48], g[48], t1[4096], t2[512];
    double nodes = d->ev[0].pt.nodes;
    fprintf(o, "# trainpath plan: %s: %s at %.0f GPUs (%.0f node%s x %.3g)\n",
            tp_text_safe(s->file, t1, sizeof t1, TP_TEXT_LINE),
            tp_text_safe(s->w.name, t2, sizeof t2, TP_TEXT_LINE), d->gpus, nodes,
            nodes == 1 ? "" : "s", d->gpus / nodes);
    fprintf(o, "# %-4s %-22s %-12s %10s %10s %8s %10s %10s %6s %10s %14s\n", "rank", "candidate",
            "algorithm", "step", "p99", "exposed", "jitter", "ckpt every", "waste", "train",
            "$ per run");
    for (int i = 0; i < s->ncand; i++) {
        const struct tp_plan_point *p = &d->ev[d->order[i]].pt;
        fprintf(o, "  %-4d %-22s %-12s %10s %10s %7.1f%% %10s %10s %5.1f%% %10s %14s\n", i + 1,
                tp_text_safe(s->cand[d->order[i]].name, t2, sizeof t2, TP_TEXT_LINE),
                tp_plan_algo_name(p->algo),
                tp_fmt_duration_s(p->step_s, a, sizeof a),
                tp_fmt_duration_s(p->step_p99_s, b, sizeof b), 100 * tp_plan_exposed_fraction(p),
                tp_fmt_duration_s(p->jitter_s, c, sizeof c),
                tp_fmt_duration_s(p->interval_s, e, sizeof e), 100 * p->waste,
                tp_fmt_duration_s(p->train_s, f, sizeof f), tp_fmt_money(p->cost, g, sizeof g));
    }
}

/* Step time and cost per run of each candidate at each scale of the sweep. */
static void print_sweep(FILE *o, const struct tp_plan_spec *s, const struct tp_plan_decision *d)
{
    char a[48], b[48], t[512];
    fprintf(o, "# sweep: step time and $ per run by scale\n# %8s", "gpus");
    for (int i = 0; i < s->ncand; i++)
        fprintf(o, "  %24.24s", tp_text_safe(s->cand[i].name, t, sizeof t, TP_TEXT_LINE));
    fprintf(o, "\n");
    for (int k = 0; k < d->nscales; k++) {
        fprintf(o, "  %8.0f", d->scales[k]);
        for (int i = 0; i < s->ncand; i++)
            fprintf(o, "  %10s %13s", tp_fmt_duration_s(d->sweep[k][i].step_s, a, sizeof a),
                    tp_fmt_money(d->sweep[k][i].cost, b, sizeof b));
        fprintf(o, "\n");
    }
}

/* The words from..to, one "- " line each. */
static void print_words(FILE *o, const json_t *words, size_t from, size_t to)
{
    char t[2048];
    for (size_t i = from; i < to; i++)
        fprintf(o, "- %s\n", tp_text_safe(json_string_value(json_array_get(words, i)), t,
                                           sizeof t, TP_TEXT_LINE));
}

static int plan_file(int argc, char **argv)
{
    const char *json = NULL, *path = NULL;
    bool quiet = false;
    uint64_t gpus_opt = 0;
    tp_error err = {0};
    int rc = 0, opt;
    static const struct option opts[] = {
        {"gpus", required_argument, NULL, 'g'},
        {"json", required_argument, NULL, 'j'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    opterr = 0;
    optind = 1;
    while (rc == 0 && (opt = getopt_long(argc, argv, ":qh", opts, NULL)) != -1) {
        switch (opt) {
        case 'g': rc = tp_parse_u64(optarg, "--gpus", 1, TP_PLAN_MAX_GPUS, &gpus_opt, &err); break;
        case 'j': json = optarg; break;
        case 'q': quiet = true; break;
        case 'h': usage(stdout); return 0;
        case ':': rc = tp_error_set(&err, TP_EUSAGE, "%s: needs a value", argv[optind - 1]); break;
        default:
            rc = tp_error_set(&err, TP_EUSAGE, "%s: unknown option (see trainpath plan --help)",
                              argv[optind - 1]);
        }
    }
    if (rc == 0 && optind != argc - 1)
        rc = tp_error_set(&err, TP_EUSAGE, optind < argc ? "%s: one plan file, please"
                                                         : "a plan file is needed%s",
                          optind < argc ? argv[argc - 1] : "");
    /* before any refusal writes its document: --json may be the plan */
    const struct tp_file_arg out = {"--json", json ? json : cli_json_arg(argc, argv), NULL},
                             in = {"the plan file", optind < argc ? argv[argc - 1] : NULL, NULL};
    int drc = cli_distinct(&out, 1, &in, 1);
    if (drc)
        return drc;
    if (rc == 0 && json)
        rc = tp_result_path_ok(json, &err);
    if (rc)
        return cli_refuse("plan", json ? json : cli_json_arg(argc, argv), &err);
    path = argv[optind];

    struct tp_plan_spec *s = calloc(1, sizeof *s);
    struct tp_plan_decision *d = calloc(1, sizeof *d);
    json_t *doc = tp_result_new("plan", json_pack("{s:s}", "plan_file", path));
    if (!s || !d || !doc)
        rc = tp_error_set(&err, TP_ENOMEM, "out of memory");
    else
        rc = tp_plan_run(path, (double)gpus_opt, s, d, doc, &err);
    /* the document on stdout: the table goes to stderr */
    FILE *o = cli_table_out(json);
    if (rc == 0 && !quiet) {
        print_ranking(o, s, d);
        print_words(o, d->words, 0, d->nexplain);
        print_sweep(o, s, d);
        print_words(o, d->words, d->nexplain, json_array_size(d->words));
    }
    if (doc) {
        tp_result_finish(doc, rc, rc ? err.msg : "");
        tp_error werr;
        if (json && tp_result_write_run(doc, json, &werr) < 0 && rc == 0) {
            err = werr;
            rc = werr.code;
        }
        json_decref(doc);
    }
    if (d)
        tp_plan_decision_free(d);
    free(d);
    if (s)
        tp_plan_spec_free(s);
    free(s);
    return rc < 0 ? cli_fail(&err) : 0;
}

int cmd_plan(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "interval") == 0)
        return interval(argc - 1, argv + 1);
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return 0;
    }
    return plan_file(argc, argv);
}
