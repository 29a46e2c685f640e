/* trainpath report: reads result documents, never measures.
 *
 *   report add DOC|DIR... [--db FILE] [--batch B]     into the history
 *   report history METRIC [--db FILE] [--label K=V]... [--host H] [--last N]
 *   report baseline [--db FILE] [--host H] [--runs N]
 *   report gate THRESHOLDS DOC|DIR...                 Nagios 0..3
 *   report diff A B [--alpha X] [--min-effect PCT] [--all]
 *   report fleet FILE.jsonl...
 *   report html --out FILE DOC|DIR...
 *   report prometheus --out FILE DOC|DIR... [--host H]
 *
 * Each takes --json FILE for its outcome as JSON. DOC|DIR: a result
 * document, or a folder whose result documents are all taken. This file
 * parses the options, makes one library call a subcommand (tp_report_add
 * and the rest, src/report/run.c), prints its outcome and maps it to the
 * exit code. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tp/history.h"
#include "tp/judge.h"
#include "tp/report.h"
#include "tp/result.h"
#include "tp/text.h"
#include "tp/units.h"

#define MAX_LABELS 8

static void usage(FILE *f)
{
    fprintf(f,
            "usage: trainpath report add DOC|DIR... [--db FILE] [--batch B]\n"
            "       trainpath report history METRIC|KEY [--db FILE] [--label K=V]... [--host H]\n"
            "                                [--last N]\n"
            "       trainpath report baseline [--db FILE] [--host H] [--runs N]\n"
            "       trainpath report gate THRESHOLDS DOC|DIR...\n"
            "       trainpath report diff A B [--alpha X] [--min-effect PCT] [--all]\n"
            "       trainpath report fleet FILE.jsonl...\n"
            "       trainpath report html --out FILE DOC|DIR...\n"
            "       trainpath report prometheus --out FILE DOC|DIR... [--host H]\n"
            "  every subcommand: --json FILE (its outcome as JSON), -q (no text)\n"
            "\n"
            "Reads result documents only (docs/report.md lists the metrics). The history is\n"
            "SQLite (default results/history.sqlite).\n"
            "Exit: gate exits with Nagios codes (0 ok, 1 warning, 2 critical, 3 unknown);\n"
            "diff exits 1 when a change is a significant regression; fleet exits 1 when a\n"
            "host or link is an outlier; 2 on bad input (gate: 3).\n");
}

struct opts {
    const char *db, *batch, *host, *out, *json;
    const char *labels[MAX_LABELS];
    int nlabels;
    long last, runs;
    double alpha, min_effect;
    bool all, quiet, have_min_effect;
    char **args;
    int nargs;
};

static int parse(int argc, char **argv, struct opts *o, tp_error *err)
{
    static const struct option lo[] = {
        {"db", required_argument, NULL, 'd'},       {"batch", required_argument, NULL, 'b'},
        {"host", required_argument, NULL, 'H'},     {"out", required_argument, NULL, 'o'},
        {"json", required_argument, NULL, 'j'},     {"label", required_argument, NULL, 'l'},
        {"last", required_argument, NULL, 'n'},     {"runs", required_argument, NULL, 'r'},
        {"alpha", required_argument, NULL, 'a'},    {"min-effect", required_argument, NULL, 'm'},
        {"all", no_argument, NULL, 'A'},            {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
    };
    int opt;
    uint64_t u;
    opterr = 0;
    optind = 1;
    while ((opt = getopt_long(argc, argv, ":qh", lo, NULL)) != -1) {
        int rc = 0;
        switch (opt) {
        case 'd': o->db = optarg; break;
        case 'b': o->batch = optarg; break;
        case 'H': o->host = optarg; break;
        case 'o': o->out = optarg; break;
        case 'j': o->json = optarg; break;
        case 'l':
            if (!strchr(optarg, '=') || o->nlabels == MAX_LABELS)
                return tp_error_set(err, TP_EUSAGE, "--label %s: want NAME=VALUE (at most %d)",
                                    optarg, MAX_LABELS);
            o->labels[o->nlabels++] = optarg;
            break;
        case 'n':
            rc = tp_parse_u64(optarg, "--last", 1, 1000000, &u, err);
            o->last = (long)u;
            break;
        case 'r':
            rc = tp_parse_u64(optarg, "--runs", 1, 1000000, &u, err);
            o->runs = (long)u;
            break;
        case 'a': {
            char *end;
            o->alpha = strtod(optarg, &end);
            if (end == optarg || *end || !(o->alpha > 0 && o->alpha < 1))
                return tp_error_set(err, TP_EUSAGE, "--alpha %s: a probability in (0, 1)", optarg);
            break;
        }
        case 'm': {
            char *end;
            o->min_effect = strtod(optarg, &end) / 100;
            o->have_min_effect = true;
            if (end == optarg || (*end && strcmp(end, "%") != 0) ||
                !(o->min_effect >= 0 && o->min_effect <= 100))
                return tp_error_set(err, TP_EUSAGE, "--min-effect %s: a percentage (0 to 10000), e.g. 2",
                                    optarg);
            break;
        }
        case 'A': o->all = true; break;
        case 'q': o->quiet = true; break;
        case 'h': usage(stdout); return 1;
        case ':': return tp_error_set(err, TP_EUSAGE, "%s: needs a value", argv[optind - 1]);
        default:
            return tp_error_set(err, TP_EUSAGE, "%s: unknown option (see trainpath report --help)",
                                argv[optind - 1]);
        }
        if (rc)
            return rc;
    }
    o->args = argv + optind;
    o->nargs = argc - optind;
    return 0;
}

static int emit(const struct opts *o, json_t *out, tp_error *err)
{
    int rc = 0;
    if (o->json && out) {
        if (strcmp(o->json, "-") == 0) {
            char *s = json_dumps(out, JSON_INDENT(2));
            if (s)
                puts(s);
            free(s);
        } else {
            rc = tp_result_write(out, o->json, err);
        }
    }
    json_decref(out);
    return rc;
}

/* Where the text goes: stderr when the JSON takes stdout. */
static FILE *text_out(const struct opts *o)
{
    return o->json && strcmp(o->json, "-") == 0 ? stderr : stdout;
}

static const char *db_path(const struct opts *o)
{
    return o->db ? o->db : "results/history.sqlite";
}

/* the positional arguments, as the library takes file names */
static const char *const *args(const struct opts *o)
{
    return (const char *const *)o->args;
}

static int sub_add(struct opts *o)
{
    tp_error err = {0};
    size_t added, nd;
    if (tp_report_add(db_path(o), args(o), (size_t)o->nargs, o->batch, &added, &nd, &err))
        return cli_fail(&err);
    if (!o->quiet && added == nd)
        fprintf(text_out(o), "%zu of %zu documents added to %s\n", added, nd, db_path(o));
    else if (!o->quiet)
        fprintf(text_out(o), "%zu of %zu documents added to %s (%zu %s there already)\n", added, nd,
                db_path(o), nd - added, nd - added == 1 ? "was" : "were");
    json_t *j = json_pack("{s:s, s:I, s:I}", "db", db_path(o), "added", (json_int_t)added,
                          "documents", (json_int_t)nd);
    return emit(o, j, &err) ? cli_fail(&err) : 0;
}

static int sub_history(struct opts *o)
{
    tp_error err = {0};
    if (o->nargs != 1) {
        tp_error_set(&err, TP_EUSAGE, "report history: give one METRIC or KEY");
        return cli_fail(&err);
    }
    json_t *labels = NULL;
    if (o->nlabels) {
        labels = json_object();
        for (int i = 0; i < o->nlabels; i++) {
            const char *eq = strchr(o->labels[i], '=');
            char k[64];
            snprintf(k, sizeof k, "%.*s", (int)(eq - o->labels[i]), o->labels[i]);
            json_object_set_new(labels, k, json_string(eq + 1));
        }
    }
    struct tp_history_filter f = {.host = o->host, .labels = labels, .last = (size_t)o->last};
    if (strchr(o->args[0], '{'))
        f.key = o->args[0];
    else
        f.metric = o->args[0];
    json_t *pts = NULL;
    int rc = tp_report_history(db_path(o), &f, &pts, &err);
    json_decref(labels);
    if (rc)
        return cli_fail(&err);
    if (!o->quiet)
        tp_history_print_series(text_out(o), o->args[0], db_path(o), pts);
    return emit(o, pts, &err) ? cli_fail(&err) : 0;
}

static int sub_baseline(struct opts *o)
{
    tp_error err = {0};
    struct tp_history_scope sc = {.host = o->host, .runs = (size_t)o->runs};
    json_t *b = NULL;
    if (tp_report_baselines(db_path(o), &sc, &b, &err))
        return cli_fail(&err);
    if (!o->quiet)
        tp_history_print_baselines(text_out(o), b);
    return emit(o, b, &err) ? cli_fail(&err) : 0;
}

/* gate's exit codes are Nagios', an error too: a gate that cannot judge
 * (a document or the thresholds refused) says UNKNOWN and why, on its first
 * line and in its --json outcome, never that a test did not run */
static int sub_gate(struct opts *o)
{
    tp_error err = {0};
    json_t *rep = NULL;
    if (o->nargs < 2)
        tp_error_set(&err, TP_EUSAGE, "report gate: give THRESHOLDS and the documents");
    else
        rep = tp_report_gate(o->args[0], args(o) + 1, (size_t)o->nargs - 1, &err);
    if (!rep) {
        cli_fail(&err);
        char safe[sizeof err.msg];
        if (!o->quiet)
            fprintf(text_out(o), "GATE UNKNOWN: %s\n",
                    tp_text_safe(err.msg, safe, sizeof safe, TP_TEXT_LINE));
        tp_error jerr = {0};
        if (emit(o, tp_report_gate_unknown(err.msg), &jerr))
            cli_fail(&jerr);
        return TP_GATE_UNKNOWN;
    }
    int code = (int)json_integer_value(json_object_get(rep, "code"));
    if (!o->quiet)
        tp_gate_print(text_out(o), rep, o->all);
    if (emit(o, rep, &err)) {
        cli_fail(&err);
        return TP_GATE_UNKNOWN;
    }
    return code;
}

static int sub_diff(struct opts *o)
{
    tp_error err = {0};
    if (o->nargs != 2) {
        tp_error_set(&err, TP_EUSAGE, "report diff: give two documents, A (baseline) and B");
        return cli_fail(&err);
    }
    /* --min-effect 0 means none (-1 to the library); without it, the default (0) */
    struct tp_diff_opts dopt = {
        .alpha = o->alpha,
        .min_effect = o->have_min_effect ? (o->min_effect > 0 ? o->min_effect : -1) : 0};
    json_t *d = tp_report_diff(o->args[0], o->args[1], &dopt, &err);
    if (!d)
        return cli_fail(&err);
    int regress = (int)json_integer_value(json_object_get(d, "regressions"));
    if (!o->quiet)
        tp_diff_print(text_out(o), d, o->all);
    if (emit(o, d, &err))
        return cli_fail(&err);
    return regress ? 1 : 0;
}

static int sub_fleet(struct opts *o)
{
    tp_error err = {0};
    if (o->nargs < 1) {
        tp_error_set(&err, TP_EUSAGE, "report fleet: give the JSON Lines files ('-': stdin)");
        return cli_fail(&err);
    }
    json_t *j = tp_report_fleet(args(o), (size_t)o->nargs, &err);
    if (!j)
        return cli_fail(&err);
    long out = (long)(json_integer_value(json_object_get(j, "outliers")) +
                      json_integer_value(json_object_get(j, "slow_nodes")) +
                      json_integer_value(json_object_get(j, "slow_links")));
    if (!o->quiet)
        tp_fleet_print(text_out(o), j);
    if (emit(o, j, &err))
        return cli_fail(&err);
    return out ? 1 : 0;
}

static int sub_html(struct opts *o)
{
    tp_error err = {0};
    size_t nd = 0;
    if (!o->out)
        tp_error_set(&err, TP_EUSAGE, "report html: --out FILE is needed");
    if (!o->out || tp_report_html(args(o), (size_t)o->nargs, o->out, &nd, &err))
        return cli_fail(&err);
    if (!o->quiet)
        fprintf(text_out(o), "report: %s (%zu documents)\n", o->out, nd);
    json_t *j = json_pack("{s:s, s:I}", "out", o->out, "documents", (json_int_t)nd);
    return emit(o, j, &err) ? cli_fail(&err) : 0;
}

static int sub_prom(struct opts *o)
{
    tp_error err = {0};
    if (!o->out)
        tp_error_set(&err, TP_EUSAGE, "report prometheus: --out FILE is needed");
    if (!o->out || tp_report_prometheus(args(o), (size_t)o->nargs, o->out, o->host, &err))
        return cli_fail(&err);
    if (!o->quiet)
        fprintf(text_out(o), "prometheus textfile: %s\n", o->out);
    json_t *j = json_pack("{s:s}", "out", o->out);
    return emit(o, j, &err) ? cli_fail(&err) : 0;
}

/* --out, --json and (add's) --db against the documents, folders and files
 * named and (the others') --db: an output that is an input refused, its
 * exit code returned (0: none). */
static int distinct(const struct opts *o, bool add)
{
    struct tp_file_arg outs[3] = {{"--out", o->out, NULL}, {"--json", o->json, NULL}}, *ins;
    size_t nout = 2, nin = 0;
    if (!(ins = calloc((size_t)o->nargs + 1, sizeof *ins)))
        return 0; /* out of memory: the subcommand says so */
    const struct tp_file_arg db = {"--db", db_path(o), NULL};
    if (add)
        outs[nout++] = db; /* written; the others read it */
    else
        ins[nin++] = db;
    for (int i = 0; i < o->nargs; i++)
        ins[nin++] = (struct tp_file_arg){"the input", o->args[i], ".json"};
    int rc = cli_distinct(outs, nout, ins, nin);
    free(ins);
    return rc;
}

int cmd_report(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*run)(struct opts *);
    } subs[] = {
        {"add", sub_add},         {"history", sub_history}, {"baseline", sub_baseline},
        {"gate", sub_gate},       {"diff", sub_diff},       {"fleet", sub_fleet},
        {"html", sub_html},       {"prometheus", sub_prom},
    };
    tp_error err = {0};
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        if (argc < 2) {
            tp_error_set(&err, TP_EUSAGE, "report: give a subcommand");
            return cli_fail(&err);
        }
        return 0;
    }
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        if (strcmp(argv[1], subs[i].name) != 0)
            continue;
        struct opts o = {0};
        int rc = parse(argc - 1, argv + 1, &o, &err);
        if (rc == 1)
            return 0;
        bool gate = strcmp(subs[i].name, "gate") == 0;
        if (rc != 1 && distinct(&o, strcmp(subs[i].name, "add") == 0))
            return gate ? TP_GATE_UNKNOWN : 2;
        if (rc) {
            cli_fail(&err);
            return gate ? TP_GATE_UNKNOWN : tp_exit_code(rc);
        }
        return subs[i].run(&o);
    }
    tp_error_set(&err, TP_EUSAGE, "report %s: unknown (add, history, baseline, gate, diff, fleet, "
                 "html, prometheus)", argv[1]);
    return cli_fail(&err);
}
