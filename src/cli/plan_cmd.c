/* trainpath plan: the scale model. `trainpath plan FILE` evaluates a plan
 * file's candidate designs at the cluster's scale and over a sweep of
 * scales, ranks them by cost per run and says in words what dominates;
 * `trainpath plan interval --checkpoint-cost 5m --mtbf 24h` is the
 * checkpoint interval alone. */
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>

#include "cli.h"
#include "tp/plan.h"
#include "tp/result.h"
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
    if (rc == 0 && json)
        rc = cli_json_path_ok(json, &err);
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
        rc = cli_write_result(doc, json, &err);
        json_decref(doc);
        if (rc)
            return cli_fail(&err);
    }
    return 0;
}


/* ---- plan FILE ---- */

struct eval {
    struct tp_plan_point pt;
    double sim_mean, sim_p99;
    double *series;
    int rank;
};

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double exposed_frac(const struct tp_plan_point *p)
{
    return p->exposed_s / p->step_s;
}

static json_t *spec_json(const struct tp_plan_spec *s, double gpus)
{
    json_t *cands = json_array();
    for (int i = 0; i < s->ncand; i++) {
        const struct tp_plan_candidate *c = &s->cand[i];
        json_array_append_new(cands, json_pack(
            "{s:s, s:{s:s, s:f, s:f, s:f, s:f, s:f, s:s, s:f, s:s, s:f},"
            " s:{s:s, s:f, s:f, s:f, s:f, s:b, s:f}}",
            "name", c->name,
            "network", "kind", c->net_kind, "link_bps", c->link_bps, "nics_per_node",
            c->nics_per_node, "efficiency", c->efficiency, "latency_s", c->net_lat_s,
            "bandwidth_Bps", c->net_bw_Bps > 0 ? c->net_bw_Bps
                                               : c->link_bps / 8 * c->nics_per_node * c->efficiency,
            "topology", tp_plan_topo_name(c->topology), "oversubscription", c->oversubscription,
            "algorithm", tp_plan_algo_name(c->algo), "node_cost", c->node_cost,
            "storage", "kind", c->storage_kind, "write_Bps", c->write_Bps, "read_Bps", c->read_Bps,
            "commit_latency_s", c->commit_lat_s, "tb_month", c->tb_month, "async_checkpoint",
            c->async_ckpt, "snapshot_Bps", c->snapshot_Bps));
    }
    json_t *inputs = json_array();
    for (size_t i = 0; i < s->nrefs; i++)
        json_array_append_new(inputs, json_pack("{s:s, s:s, s:s, s:s, s:f}", "where",
                                                s->refs[i].where, "file", s->refs[i].file,
                                                "command", s->refs[i].command, "source",
                                                s->refs[i].source, "value", s->refs[i].value));
    json_t *sweep = json_array();
    for (int i = 0; i < s->nsweep; i++)
        json_array_append_new(sweep, json_real(s->sweep_gpus[i]));
    return json_pack(
        "{s:s, s:f, s:{s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f},"
        " s:{s:f, s:f, s:f, s:f, s:f, s:f, s:f}, s:{s:f, s:f, s:f}, s:o, s:o, s:i, s:I, s:o}",
        "plan_file", s->file, "gpus", gpus,
        "workload", "name", s->w.name, "unit", s->w.unit, "parameters", s->w.params,
        "gradient_bytes_per_parameter", s->w.grad_bytes_per_param, "samples_per_gpu",
        s->w.samples_per_gpu, "compute_s", s->w.compute_s, "compute_cv", s->w.compute_cv,
        "dataset_bytes_per_sample", s->w.dataset_bytes_per_sample, "checkpoint_bytes",
        s->w.checkpoint_bytes, "train_samples", s->w.train_samples, "overlap", s->w.overlap,
        "spike_s", s->w.spike_s, "spike_probability", s->w.spike_p,
        "cluster", "nodes", s->c.nodes, "gpus_per_node", s->c.gpus_per_node, "intra_latency_s",
        s->c.intra_lat_s, "intra_bandwidth_Bps", s->c.intra_bw_Bps, "mtbf_per_node_s",
        s->c.mtbf_node_s, "mtbf_job_s", s->c.mtbf_job_s, "restart_s", s->c.restart_s,
        "prices", "gpu_hour", s->p.gpu_hour, "amortization_s", s->p.amortization_s,
        "checkpoints_kept", s->p.checkpoints_kept,
        "candidates", cands, "sweep_gpus", sweep, "simulate_steps", (int)s->sim_steps, "seed",
        (json_int_t)s->seed, "inputs", inputs);
}

static json_t *point_json(const struct tp_plan_spec *s, const struct tp_plan_candidate *c,
                          const struct eval *e)
{
    const struct tp_plan_point *p = &e->pt;
    double young = tp_plan_young(p->ckpt_s, p->mtbf_s);
    json_t *series = json_array();
    for (unsigned i = 0; e->series && i < s->sim_steps; i++)
        json_array_append_new(series, json_real(e->series[i]));
    char gunit[32];
    snprintf(gunit, sizeof gunit, "%s/s", s->w.unit);
    return json_pack(
        "{s:s, s:i, s:f, s:f, s:s, s:o, s:o, s:o, s:o, s:f, s:o, s:o, s:o, s:o, s:o,"
        " s:{s:o, s:o, s:o, s:o, s:o, s:f}, s:o, s:o,"
        " s:{s:o, s:o, s:o, s:o}, s:{s:i, s:o, s:o, s:o}}",
        "name", c->name, "rank", e->rank, "gpus", p->gpus, "nodes", p->nodes,
        "algorithm", tp_plan_algo_name(p->algo),
        "step", tp_metric(p->step_s, "s"), "step_p99", tp_metric(p->step_p99_s, "s"),
        "comm", tp_metric(p->comm_s, "s"), "comm_exposed", tp_metric(p->exposed_s, "s"),
        "exposed_fraction", exposed_frac(p),
        "compute_slowest", tp_metric(p->compute_s, "s"), "jitter", tp_metric(p->jitter_s, "s"),
        "rare_event", tp_metric(p->rare_s, "s"), "data_stall", tp_metric(p->data_stall_s, "s"),
        "samples_per_step", tp_metric(s->w.samples_per_gpu * p->gpus, s->w.unit),
        "checkpoint", "stall", tp_metric(p->ckpt_s, "s"), "interval", tp_metric(p->interval_s, "s"),
        "interval_young", tp_metric(young, "s"), "mtbf", tp_metric(p->mtbf_s, "s"),
        "interval_steps", tp_metric(ceil(p->interval_s / p->step_s), "steps"),
        "waste_fraction", p->waste,
        "goodput", tp_metric(p->goodput, gunit), "time_to_train", tp_metric(p->train_s, "s"),
        "cost", "gpu", tp_metric(p->cost_gpu, "$"), "network", tp_metric(p->cost_network, "$"),
        "storage", tp_metric(p->cost_storage, "$"), "total", tp_metric(p->cost, "$"),
        "simulation", "steps", (int)s->sim_steps, "mean", tp_metric(e->sim_mean, "s"), "p99",
        tp_metric(e->sim_p99, "s"), "series", series);
}

/* The dominant terms of a candidate's wall time, largest first, in words. */
static void dominant(const struct tp_plan_spec *s, const struct tp_plan_point *p, char *buf,
                     size_t cap)
{
    double wall = p->step_s / (1 - p->waste);
    struct {
        const char *what;
        double share;
    } t[] = {
        {"compute", s->w.compute_s / wall},
        {"exposed communication", p->exposed_s / wall},
        {"waiting for the slowest rank", (p->jitter_s + p->rare_s) / wall},
        {"dataset reads", p->data_stall_s / wall},
        {"checkpoints, rework and restarts", 1 - p->step_s / wall},
    };
    size_t n = sizeof t / sizeof t[0];
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (t[j].share > t[i].share) {
                __typeof__(t[0]) x = t[i];
                t[i] = t[j];
                t[j] = x;
            }
    size_t o = 0;
    for (size_t i = 0; i < n && o < cap; i++) {
        if (i > 0 && t[i].share < 0.005)
            break;
        o += (size_t)snprintf(buf + o, cap - o, "%s%.1f %% %s", i ? ", " : "", 100 * t[i].share,
                              t[i].what);
    }
}

/* One sentence of the words: into the document, and onto out unless NULL. */
static void say(json_t *words, FILE *out, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(json_t *words, FILE *out, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    json_array_append_new(words, json_string(line));
    if (out)
        fprintf(out, "- %s\n", line);
}

static json_t *explain(const struct tp_plan_spec *s, const struct eval *ev, const int *order,
                       double gpus, FILE *out)
{
    json_t *words = json_array();
    char a[48], b[48], c[48];
    const struct eval *best = &ev[order[0]];
    const struct tp_plan_candidate *bc = &s->cand[order[0]];
    /* the candidate with the most exposed communication, against the best */
    int worst = order[0];
    for (int i = 0; i < s->ncand; i++)
        if (exposed_frac(&ev[i].pt) > exposed_frac(&ev[worst].pt))
            worst = i;
    if (worst != order[0]) {
        const struct eval *w = &ev[worst];
        say(words, out,
            "at %.0f GPUs the step of %s is %.0f %% exposed communication; %s cuts it to %.0f %% "
            "and saves %s per run (%s %s)",
            gpus, s->cand[worst].name, 100 * exposed_frac(&w->pt), bc->name,
            100 * exposed_frac(&best->pt), tp_fmt_money(w->pt.cost - best->pt.cost, a, sizeof a),
            tp_fmt_duration_s(fabs(w->pt.train_s - best->pt.train_s), b, sizeof b),
            w->pt.train_s >= best->pt.train_s ? "sooner" : "later, for less");
    }
    char dom[256];
    dominant(s, &best->pt, dom, sizeof dom);
    say(words, out, "%s%s: %s per run, %s to train; its wall time is %s", bc->name,
        s->ncand > 1 ? " costs least" : "", tp_fmt_money(best->pt.cost, a, sizeof a),
        tp_fmt_duration_s(best->pt.train_s, b, sizeof b), dom);
    say(words, out,
        "the slowest of %.0f ranks adds %s to each step (%.1f %% of it) over the mean rank's "
        "%s of compute%s",
        gpus, tp_fmt_duration_s(best->pt.jitter_s, a, sizeof a), 100 * best->pt.jitter_s / best->pt.step_s,
        tp_fmt_duration_s(s->w.compute_s, b, sizeof b),
        s->w.compute_samples ? " (the measured distribution)" : " (a normal)");
    if (s->w.spike_p > 0)
        say(words, out,
            "a %s stall at per-rank probability %g hits %.1f %% of steps at this scale: %s per "
            "step on average",
            tp_fmt_duration_s(s->w.spike_s, a, sizeof a), s->w.spike_p,
            100 * tp_plan_rare_event(s->w.spike_p, gpus), tp_fmt_duration_s(best->pt.rare_s, b, sizeof b));
    say(words, out,
        "%s: checkpoint every %s (Daly; Young: %s), each stalling %s; the job fails every %s on "
        "average: %.1f %% of wall time lost",
        bc->name, tp_fmt_duration_s(best->pt.interval_s, a, sizeof a),
        tp_fmt_duration_s(tp_plan_young(best->pt.ckpt_s, best->pt.mtbf_s), b, sizeof b),
        tp_fmt_duration_s(best->pt.ckpt_s, c, sizeof c), tp_fmt_duration_s(best->pt.mtbf_s, dom, sizeof dom),
        100 * best->pt.waste);
    return words;
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
        case 'g': rc = tp_parse_u64(optarg, "--gpus", 1, UINT64_C(1) << 40, &gpus_opt, &err); break;
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
    if (rc == 0 && json)
        rc = cli_json_path_ok(json, &err);
    if (rc)
        return cli_fail(&err);
    path = argv[optind];

    struct tp_plan_spec *s = calloc(1, sizeof *s);
    struct eval *ev = calloc(TP_PLAN_MAX_CAND, sizeof *ev);
    json_t *doc = NULL, *results = json_object();
    if (!s || !ev) {
        rc = tp_error_set(&err, TP_ENOMEM, "out of memory");
        goto out;
    }
    rc = tp_plan_parse(path, s, &err);
    if (rc == 0)
        rc = tp_plan_resolve(s, &err);
    double gpus = gpus_opt ? (double)gpus_opt : s->c.nodes * s->c.gpus_per_node;
    /* the document on stdout: the table goes to stderr */
    FILE *o = json && strcmp(json, "-") == 0 ? stderr : stdout;
    doc = tp_result_new("plan", rc == 0 ? spec_json(s, gpus)
                                        : json_pack("{s:s}", "plan_file", path));
    if (rc)
        goto out;

    /* every candidate at the cluster's scale, with a simulated run */
    int order[TP_PLAN_MAX_CAND];
    for (int i = 0; i < s->ncand; i++) {
        struct eval *e = &ev[i];
        tp_plan_eval(s, &s->cand[i], gpus, &e->pt);
        e->series = malloc((s->sim_steps ? s->sim_steps : 1) * sizeof *e->series);
        if (!e->series) {
            rc = tp_error_set(&err, TP_ENOMEM, "out of memory");
            goto out;
        }
        tp_plan_simulate(s, &s->cand[i], gpus, s->sim_steps, s->seed, e->series);
        double *sorted = malloc(s->sim_steps * sizeof *sorted), sum = 0;
        if (!sorted) {
            rc = tp_error_set(&err, TP_ENOMEM, "out of memory");
            goto out;
        }
        memcpy(sorted, e->series, s->sim_steps * sizeof *sorted);
        qsort(sorted, s->sim_steps, sizeof *sorted, cmpd);
        for (unsigned k = 0; k < s->sim_steps; k++)
            sum += sorted[k];
        e->sim_mean = sum / s->sim_steps;
        /* nearest rank, as everywhere in trainpath */
        e->sim_p99 = sorted[(size_t)ceil(0.99 * s->sim_steps) - 1];
        free(sorted);
        order[i] = i;
    }
    for (int i = 0; i < s->ncand; i++)
        for (int j = i + 1; j < s->ncand; j++)
            if (ev[order[j]].pt.cost < ev[order[i]].pt.cost) {
                int x = order[i];
                order[i] = order[j];
                order[j] = x;
            }
    for (int i = 0; i < s->ncand; i++)
        ev[order[i]].rank = i + 1;

    char a[48], b[48], c[48], d[48], e5[48], f[48];
    if (!quiet) {
        fprintf(o, "# trainpath plan: %s: %s at %.0f GPUs (%.0f node%s x %.3g)\n", s->file,
               s->w.name, gpus, ev[0].pt.nodes, ev[0].pt.nodes == 1 ? "" : "s",
               gpus / ev[0].pt.nodes);
        fprintf(o, "# %-4s %-22s %-12s %10s %10s %8s %10s %10s %6s %10s %14s\n", "rank", "candidate",
               "algorithm", "step", "p99", "exposed", "jitter", "ckpt every", "waste", "train",
               "$ per run");
        for (int i = 0; i < s->ncand; i++) {
            const struct eval *x = &ev[order[i]];
            fprintf(o, "  %-4d %-22s %-12s %10s %10s %7.1f%% %10s %10s %5.1f%% %10s %14s\n", i + 1,
                   s->cand[order[i]].name, tp_plan_algo_name(x->pt.algo),
                   tp_fmt_duration_s(x->pt.step_s, a, sizeof a), tp_fmt_duration_s(x->pt.step_p99_s, b, sizeof b),
                   100 * exposed_frac(&x->pt), tp_fmt_duration_s(x->pt.jitter_s, c, sizeof c),
                   tp_fmt_duration_s(x->pt.interval_s, d, sizeof d), 100 * x->pt.waste,
                   tp_fmt_duration_s(x->pt.train_s, e5, sizeof e5), tp_fmt_money(x->pt.cost, f, sizeof f));
        }
    }
    json_t *cands = json_array();
    for (int i = 0; i < s->ncand; i++)
        json_array_append_new(cands, point_json(s, &s->cand[order[i]], &ev[order[i]]));
    json_t *words = explain(s, ev, order, gpus, quiet ? NULL : o);

    /* the sweep: each candidate over the scales */
    double scales[TP_PLAN_MAX_SWEEP + 1];
    int ns = 0;
    if (s->nsweep) {
        for (int i = 0; i < s->nsweep; i++)
            scales[ns++] = s->sweep_gpus[i];
    } else {
        for (double g = s->c.gpus_per_node; g < gpus && ns < TP_PLAN_MAX_SWEEP; g *= 2)
            scales[ns++] = g;
        scales[ns++] = gpus;
    }
    json_t *sweep = json_array();
    if (!quiet) {
        fprintf(o, "# sweep: step time and $ per run by scale\n# %8s", "gpus");
        for (int i = 0; i < s->ncand; i++)
            fprintf(o, "  %24.24s", s->cand[i].name);
        fprintf(o, "\n");
    }
    for (int k = 0; k < ns; k++) {
        json_t *row = json_array();
        struct tp_plan_point p;
        if (!quiet)
            fprintf(o, "  %8.0f", scales[k]);
        for (int i = 0; i < s->ncand; i++) {
            tp_plan_eval(s, &s->cand[i], scales[k], &p);
            json_array_append_new(
                row, json_pack("{s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:f}", "name", s->cand[i].name,
                               "algorithm", tp_plan_algo_name(p.algo), "step_s", p.step_s,
                               "step_p99_s", p.step_p99_s, "exposed_fraction", exposed_frac(&p),
                               "waste_fraction", p.waste, "time_to_train_s", p.train_s,
                               "cost", p.cost));
            if (!quiet)
                fprintf(o, "  %10s %13s", tp_fmt_duration_s(p.step_s, a, sizeof a), tp_fmt_money(p.cost, b, sizeof b));
        }
        if (!quiet)
            fprintf(o, "\n");
        json_array_append_new(sweep, json_pack("{s:f, s:f, s:o}", "gpus", p.gpus, "nodes", p.nodes,
                                               "candidates", row));
    }

    /* break-even: where a design that costs more at small scale starts to
     * cost less */
    json_t *be = json_array();
    double lo = scales[0], hi = scales[ns - 1] > gpus ? scales[ns - 1] : gpus;
    for (int i = 0; i < s->ncand; i++)
        for (int j = 0; j < s->ncand; j++) {
            if (i == j)
                continue;
            struct tp_plan_point pi, pj;
            tp_plan_eval(s, &s->cand[i], lo, &pi);
            tp_plan_eval(s, &s->cand[j], lo, &pj);
            if (!(pi.cost <= pj.cost))
                continue;
            double at = tp_plan_break_even(s, &s->cand[i], &s->cand[j], lo, hi);
            if (at <= 0)
                continue;
            json_array_append_new(be, json_pack("{s:s, s:s, s:f}", "cheaper", s->cand[j].name,
                                                "than", s->cand[i].name, "from_gpus", at));
            say(words, quiet ? NULL : o, "%s becomes cheaper per run than %s from %.0f GPUs", s->cand[j].name,
                s->cand[i].name, at);
        }

    json_t *ranking = json_array();
    for (int i = 0; i < s->ncand; i++)
        json_array_append_new(ranking, json_string(s->cand[order[i]].name));
    json_object_set_new(results, "gpus", json_real(gpus));
    json_object_set_new(results, "nodes", json_real(ev[0].pt.nodes));
    json_object_set_new(results, "ranking", ranking);
    json_object_set_new(results, "candidates", cands);
    json_object_set_new(results, "words", words);
    json_object_set_new(results, "sweep", sweep);
    json_object_set_new(results, "break_even", be);

out:
    if (doc) {
        json_object_set(doc, "results", results);
        tp_result_finish(doc, rc, rc ? err.msg : "");
        tp_error werr;
        if (json && cli_write_result(doc, json, &werr) < 0 && rc == 0) {
            err = werr;
            rc = werr.code;
        }
        json_decref(doc);
    } else if (json && rc) {
        /* the plan could not be allocated: still say why */
        json_t *fd = tp_result_new("plan", json_pack("{s:s}", "plan_file", path));
        tp_result_finish(fd, rc, err.msg);
        tp_error werr;
        tp_result_write(fd, json, &werr);
        json_decref(fd);
    }
    json_decref(results);
    for (int i = 0; ev && i < TP_PLAN_MAX_CAND; i++)
        free(ev[i].series);
    free(ev);
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
