/* Result documents flattened into metric rows: one table per command says
 * which fields become which metrics, with their labels and which way is
 * better. Everything `report` does (history, baselines, gates, diffs,
 * outliers, Prometheus, HTML) starts here, so a metric is named once.
 *
 * The same readers check a document (tp__report_metrics_checked, for the
 * loader in docs.c): what a reader reads must have the type it reads (a
 * number, not "41599.5"; an array, not null), and every row must make
 * physical sense: not negative, in a unit trainpath writes, under that
 * unit's bound (the bounds table). Without the check the readers pass over
 * what they cannot read, and a row is silently missing. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_int.h"
#include "tp/hist.h"
#include "tp/json.h"
#include "tp/report.h"
#include "tp/units.h"

enum better { NONE, LOWER, HIGHER };

struct rows {
    json_t *a;
    bool oom;
    char *bad; /* checking: the first thing wrong with the document ("" none); else NULL */
    size_t badcap;
};

/* What is wrong with the document, when checking; the first finding stays. */
__attribute__((format(printf, 2, 3))) static void bad(struct rows *r, const char *fmt, ...)
{
    if (!r->bad || r->bad[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->bad, r->badcap, fmt, ap);
    va_end(ap);
    tp_utf8_trim(r->bad);
}

const char *tp__report_type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

/* The number at obj.key (or obj.key.value, a {value, unit} field) and its
 * unit; NAN when absent or null. Anything else there is wrong: what names
 * where it is. */
static double num(struct rows *r, const json_t *obj, const char *key, const char *what,
                  const char **unit)
{
    const json_t *v = json_object_get(obj, key);
    const char *sub = "";
    if (json_is_object(v)) {
        const json_t *u = json_object_get(v, "unit");
        if (u && !json_is_string(u))
            bad(r, "%s.%s.unit is %s, want a string", what, key, tp__report_type_name(u));
        if (unit)
            *unit = json_string_value(u);
        v = json_object_get(v, "value");
        sub = ".value";
    }
    if (json_is_number(v))
        return json_number_value(v);
    if (v && !json_is_null(v))
        bad(r, "%s.%s%s is %s, want a number", what, key, sub, tp__report_type_name(v));
    return NAN;
}

/* The string at obj.key, NULL when absent or null (anything else is wrong). */
static const char *str(struct rows *r, const json_t *obj, const char *key, const char *what)
{
    const json_t *v = json_object_get(obj, key);
    if (v && !json_is_null(v) && !json_is_string(v))
        bad(r, "%s.%s is %s, want a string", what, key, tp__report_type_name(v));
    return json_string_value(v);
}

/* The array (want JSON_ARRAY) or object at obj.key, NULL when absent or
 * null (anything else is wrong). */
static const json_t *part(struct rows *r, const json_t *obj, const char *key, json_type want,
                          const char *what)
{
    const json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v))
        return NULL;
    if (json_typeof(v) != want) {
        bad(r, "%s.%s is %s, want %s", what, key, tp__report_type_name(v),
            want == JSON_ARRAY ? "an array" : "an object");
        return NULL;
    }
    return v;
}

static const json_t *arr(struct rows *r, const json_t *obj, const char *key, const char *what)
{
    return part(r, obj, key, JSON_ARRAY, what);
}

static const json_t *obj(struct rows *r, const json_t *o, const char *key, const char *what)
{
    return part(r, o, key, JSON_OBJECT, what);
}

/* The largest value a row may have, by its unit: far beyond any run (a
 * 1e10 s latency is 317 years), so only a broken or forged document
 * reaches them. No row is negative. docs/report.md lists them. */
static const struct {
    const char *unit;
    double max;
} bounds[] = {
    {"ns", 1e19},  {"us", 1e16},    {"ms", 1e13},        {"s", 1e10}, /* durations: 1e10 s */
    {"B/s", 1e15}, {"bit/s", 8e15},                                   /* rates: 1 PB/s */
    {"ns/B", 1e9},                                                    /* 1 s a byte */
    {"1/s", 1e12}, {"msg/s", 1e12}, {"samples/s", 1e12},              /* events a second */
    {"$", 1e12},   {"B", 1e18},     {"", 1e12}, /* counts, ratios, fractions, codes */
};

/* Whether value (in unit) makes physical sense as a row; why not, when checking. */
static bool sane(struct rows *r, const char *key, const char *what, double v, const char *unit)
{
    if (!r->bad)
        return true;
    for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
        if (strcmp(bounds[i].unit, unit) != 0)
            continue;
        if (v < 0 || v > bounds[i].max) {
            bad(r, "%s%s = %g%s%s is %s: not a measurement", key, what, v, unit[0] ? " " : "",
                unit, v < 0 ? "negative" : "beyond the bound of its unit");
            return false;
        }
        return true;
    }
    bad(r, "%s: unit \"%s\" is not one trainpath writes", key, unit);
    return false;
}

/* labels: "k=v" strings, NULL-terminated */
static void add(struct rows *r, const char *metric, const char *const *labels, double value,
                const char *unit, enum better b, const json_t *stats, const json_t *hist)
{
    if (!isfinite(value) || r->oom)
        return;
    json_t *lab = json_object();
    char key[512];
    size_t n = (size_t)snprintf(key, sizeof key, "%s", metric);
    /* labels are given sorted by the callers' tables; keep that order */
    for (int i = 0; labels && labels[i]; i++) {
        const char *eq = strchr(labels[i], '=');
        if (!eq)
            continue;
        char k[64], v[256];
        snprintf(k, sizeof k, "%.*s", (int)(eq - labels[i]), labels[i]);
        /* the caller's buffer may have cut a long value (a transport, a
         * candidate's name) inside a UTF-8 character: JSON refuses that,
         * and the document lost all its rows as "out of memory" (caught with
         * fuzz/fuzz_report) */
        snprintf(v, sizeof v, "%s", eq + 1);
        tp_utf8_trim(v);
        json_object_set_new(lab, k, json_string(v));
        if (n < sizeof key)
            n += (size_t)snprintf(key + n, sizeof key - n, "%s%s=%s", i ? "," : "{", k, v);
    }
    if (labels && labels[0] && n < sizeof key)
        snprintf(key + n, sizeof key - n, "}");
    tp_utf8_trim(key);
    if (!sane(r, key, "", value, unit ? unit : "")) {
        json_decref(lab);
        return;
    }
    static const char *const words[] = {NULL, "lower", "higher"};
    json_t *row = json_pack("{s:s, s:o, s:s, s:f, s:s, s:s?}", "metric", metric, "labels", lab,
                            "key", key, "value", value, "unit", unit ? unit : "", "better",
                            words[b]);
    if (!row) {
        r->oom = true;
        return;
    }
    if (json_is_object(stats)) {
        double count = num(r, stats, "count", key, NULL), mean = num(r, stats, "mean", key, NULL);
        double sd = num(r, stats, "stdev", key, NULL);
        const char *u = unit ? unit : "";
        /* the statistics feed the diff's tests: as sane as the row */
        bool ok = (!isfinite(count) || sane(r, key, ".stats.count", count, "")) &&
                  (!isfinite(mean) || sane(r, key, ".stats.mean", mean, u)) &&
                  (!isfinite(sd) || sane(r, key, ".stats.stdev", sd, u));
        json_t *st = json_pack("{s:f, s:f, s:f}", "count", count, "mean", mean, "stdev", sd);
        if (st && ok && isfinite(count))
            json_object_set_new(row, "stats", st);
        else
            json_decref(st);
    }
    if (json_is_object(hist)) {
        if (r->bad) { /* the diff's test reads it: it must be a histogram */
            tp_error he = {0};
            tp_hist *h = tp_hist_from_json(hist, &he);
            if (!h)
                bad(r, "%s: %s", key, he.msg);
            tp_hist_free(h);
        }
        json_object_set(row, "histogram", (json_t *)hist);
    } else if (hist && !json_is_null(hist)) {
        bad(r, "%s: its histogram is %s, want an object", key, tp__report_type_name(hist));
    }
    if (json_array_append_new(r->a, row) < 0)
        r->oom = true;
}

/* A {value, unit} field (or a bare number) of obj as a row; the unit read
 * before the row is made (an argument list has no order of evaluation). */
static void field(struct rows *r, const char *metric, const char *const *labels,
                  const json_t *obj, const char *key, enum better b)
{
    const char *unit = NULL;
    double v = num(r, obj, key, metric, &unit);
    add(r, metric, labels, v, unit, b, NULL, NULL);
}

/* The percentiles of a stats object {count, mean, p50, p99, ...}, named
 * metric.p50, metric.p99, ...; st is read from obj.key. */
static void stats_rows(struct rows *r, const char *metric, const char *const *labels,
                       const json_t *o, const char *key, const json_t *hist, enum better b)
{
    static const char *const q[] = {"mean", "p50", "p99", "p99_9", "max"};
    const json_t *st = obj(r, o, key, metric);
    if (!st)
        return;
    const char *unit = str(r, st, "unit", metric);
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        char m[128];
        snprintf(m, sizeof m, "%s.%s", metric, q[i]);
        add(r, m, labels, num(r, st, q[i], metric, NULL), unit, b, i == 0 || i == 1 ? st : NULL,
            i == 1 ? hist : NULL);
    }
}

/* net's histograms hold round trips; its rows are one-way (RTT/2) */
static void halve_histograms(struct rows *r, size_t from)
{
    for (size_t i = from; i < json_array_size(r->a); i++) {
        json_t *row = json_array_get(r->a, i);
        if (json_object_get(row, "histogram"))
            json_object_set_new(row, "histogram_scale", json_real(0.5));
    }
}

/* The size label of a sizes entry: a byte count. */
static void lbl_size(struct rows *r, char *buf, size_t cap, const json_t *e, const char *what)
{
    double v = num(r, e, "size_bytes", what, NULL);
    if (r->bad && isfinite(v) && !(v >= 0 && v <= 1e18))
        bad(r, "%s.size_bytes = %g: not a size", what, v);
    snprintf(buf, cap, "size=%.0f", v);
}

/* The element i of a results array, as its place: "results.sizes[3]". */
static const char *at(char *buf, size_t cap, const char *array, size_t i)
{
    snprintf(buf, cap, "results.%s[%zu]", array, i);
    return buf;
}

static void net(struct rows *r, const json_t *doc)
{
    const json_t *cfg = obj(r, doc, "config", "document"),
                 *res = obj(r, doc, "results", "document");
    const char *test = str(r, res, "test", "results");
    const char *tr = str(r, cfg, "transport", "config");
    const char *prov = str(r, cfg, "provider", "config");
    char size[48], transport[96], where[64];
    snprintf(transport, sizeof transport, "transport=%s%s%s", tr ? tr : "tcp", prov ? ":" : "",
             prov ? prov : "");
    const char *sections[] = {"sizes", "isolated", "loaded"};
    for (int s = 0; s < 3; s++) {
        size_t i;
        const json_t *e;
        json_array_foreach(arr(r, res, sections[s], "results"), i, e) {
            const char *w = at(where, sizeof where, sections[s], i);
            if (!json_is_object(e)) {
                bad(r, "%s is %s, want an object", w, tp__report_type_name(e));
                continue;
            }
            lbl_size(r, size, sizeof size, e, w);
            const char *labels[] = {size, transport, NULL};
            char m[64];
            if (json_object_get(e, "latency")) {
                /* net.lat.latency; net.loaded.latency under load, and
                 * net.loaded.isolated.latency for its reference */
                snprintf(m, sizeof m, "net.%s%s.latency", test ? test : "lat",
                         s == 1 ? ".isolated" : "");
                size_t from = json_array_size(r->a);
                stats_rows(r, m, labels, e, "latency", json_object_get(e, "rtt_histogram"),
                           LOWER);
                halve_histograms(r, from);
            }
            if (s > 0)
                continue;
            static const char *const bws[] = {"bw", "bibw"};
            for (int k = 0; k < 2; k++) {
                snprintf(m, sizeof m, "net.%s", bws[k]);
                field(r, m, labels, e, bws[k], HIGHER);
            }
        }
    }
}

static void coll(struct rows *r, const json_t *doc)
{
    const json_t *cfg = obj(r, doc, "config", "document"),
                 *res = obj(r, doc, "results", "document");
    char op[48], ranks[32], size[48], algo[64], transport[64], where[64];
    snprintf(op, sizeof op, "op=%s", str(r, cfg, "op", "config") ?: "allreduce");
    snprintf(ranks, sizeof ranks, "ranks=%.0f", num(r, cfg, "ranks", "config", NULL));
    snprintf(transport, sizeof transport, "transport=%s",
             str(r, cfg, "transport", "config") ?: "tcp");
    size_t i;
    const json_t *e;
    json_array_foreach(arr(r, res, "sizes", "results"), i, e) {
        const char *w = at(where, sizeof where, "sizes", i);
        if (!json_is_object(e)) {
            bad(r, "%s is %s, want an object", w, tp__report_type_name(e));
            continue;
        }
        lbl_size(r, size, sizeof size, e, w);
        /* NCCL, MPI and GPU memory get labels of their own; trainpath from
         * host memory keeps the labels it always had (baselines match) */
        char be[48] = "", mem[24] = "";
        const char *b = str(r, e, "backend", w);
        const char *m = str(r, e, "mem", w);
        if (b && strcmp(b, "trainpath") != 0)
            snprintf(be, sizeof be, "backend=%s", b);
        if (m && strcmp(m, "host") != 0)
            snprintf(mem, sizeof mem, "mem=%s", m);
        const char *labels[7];
        int k = 0;
        if (be[0]) /* in key order: backend, mem, op, ranks, size, transport */
            labels[k++] = be;
        if (mem[0])
            labels[k++] = mem;
        labels[k++] = op;
        labels[k++] = ranks;
        labels[k++] = size;
        labels[k++] = transport;
        labels[k] = NULL;
        field(r, "coll.busbw", labels, e, "busbw", HIGHER);
        field(r, "coll.algbw", labels, e, "algbw", HIGHER);
        stats_rows(r, "coll.time", labels, e, "time", NULL, LOWER);
        add(r, "coll.wrong", labels, num(r, e, "wrong", w, NULL), "", LOWER, NULL, NULL);
        const json_t *sk = obj(r, e, "arrival_skew", w);
        add(r, "coll.skew.p99", labels, num(r, sk, "p99", "coll.skew", NULL), "ns", LOWER, NULL,
            NULL);
    }
    json_array_foreach(arr(r, res, "fit", "results"), i, e) {
        const char *w = at(where, sizeof where, "fit", i);
        snprintf(algo, sizeof algo, "algo=%s", str(r, e, "algo", w) ?: "?");
        const char *labels[] = {algo, op, ranks, transport, NULL};
        field(r, "coll.fit.alpha", labels, e, "alpha", LOWER);
        field(r, "coll.fit.beta", labels, e, "beta", LOWER);
    }
}

/* The storage's fs type, the label of every io row. */
static const char *fs_label(struct rows *r, const json_t *res, char *buf, size_t cap)
{
    const json_t *fs = obj(r, obj(r, res, "storage", "results"), "fs", "results.storage");
    const char *type = str(r, fs, "type", "results.storage.fs");
    snprintf(buf, cap, "fs=%s", type ? type : "?");
    return buf;
}

static void io_checkpoint(struct rows *r, const json_t *doc)
{
    const json_t *res = obj(r, doc, "results", "document");
    char fsl[64];
    const char *labels[] = {fs_label(r, res, fsl, sizeof fsl), NULL};
    stats_rows(r, "io.checkpoint.commit", labels, res, "commit",
               json_object_get(res, "commit_histogram"), LOWER);
    field(r, "io.checkpoint.throughput", labels, res, "throughput", HIGHER);
}

static void io_dataset(struct rows *r, const json_t *doc)
{
    const json_t *res = obj(r, doc, "results", "document");
    char fsl[64], where[64];
    const char *labels[] = {fs_label(r, res, fsl, sizeof fsl), NULL};
    stats_rows(r, "io.dataset.read", labels, res, "latency",
               json_object_get(res, "latency_histogram"), LOWER);
    double sum = 0, n = 0;
    size_t i;
    const json_t *e;
    json_array_foreach(arr(r, res, "epochs", "results"), i, e) {
        double v = num(r, e, "samples_per_s", at(where, sizeof where, "epochs", i), NULL);
        if (isfinite(v)) {
            sum += v;
            n++;
        }
    }
    add(r, "io.dataset.samples_per_s", labels, n > 0 ? sum / n : NAN, "1/s", HIGHER, NULL, NULL);
    const json_t *during = obj(r, res, "during", "results");
    add(r, "io.dataset.during.p99_ratio", labels,
        num(r, during, "p99_ratio", "results.during", NULL), "", LOWER, NULL, NULL);
}

static void io_commit(struct rows *r, const json_t *doc)
{
    const json_t *res = obj(r, doc, "results", "document");
    char fsl[64];
    const char *labels[] = {fs_label(r, res, fsl, sizeof fsl), NULL};
    stats_rows(r, "io.commit.latency", labels, res, "latency",
               json_object_get(res, "latency_histogram"), LOWER);
    field(r, "io.commit.per_s", labels, res, "commits_per_s", HIGHER);
}

static void step(struct rows *r, const json_t *doc)
{
    const json_t *cfg = obj(r, doc, "config", "document"),
                 *res = obj(r, doc, "results", "document");
    char preset[64], ranks[32];
    snprintf(preset, sizeof preset, "preset=%s", str(r, cfg, "preset", "config") ?: "none");
    snprintf(ranks, sizeof ranks, "ranks=%.0f", num(r, cfg, "ranks", "config", NULL));
    const char *labels[] = {preset, ranks, NULL};
    const json_t *run = json_array_get(arr(r, res, "runs", "results"), 0);
    if (run && !json_is_object(run))
        bad(r, "results.runs[0] is %s, want an object", tp__report_type_name(run));
    stats_rows(r, "step.time", labels, run, "step_time", NULL, LOWER);
    const json_t *st = obj(r, run, "step_time", "results.runs[0]");
    add(r, "step.cov", labels, num(r, st, "cv", "results.runs[0].step_time", NULL), "", LOWER,
        NULL, NULL);
    const json_t *sum = obj(r, run, "summary", "results.runs[0]");
    static const char *const fractions[] = {"amplification", "exposed_comm_fraction",
                                            "ckpt_overhead_fraction"};
    for (size_t i = 0; i < sizeof fractions / sizeof fractions[0]; i++) {
        char m[64];
        snprintf(m, sizeof m, "step.%s", fractions[i]);
        add(r, m, labels, num(r, sum, fractions[i], "results.runs[0].summary", NULL), "", LOWER,
            NULL, NULL);
    }
    field(r, "step.goodput", labels, sum, "goodput", HIGHER);
    const json_t *rep = obj(r, res, "reproducibility", "results");
    const json_t *same = json_object_get(rep, "identical");
    if (json_is_boolean(same))
        add(r, "step.repro.identical", labels, json_is_true(same) ? 1 : 0, "", HIGHER, NULL,
            NULL);
    else if (same && !json_is_null(same))
        bad(r, "results.reproducibility.identical is %s, want a boolean", tp__report_type_name(same));
}

static void plan(struct rows *r, const json_t *doc)
{
    const json_t *res = obj(r, doc, "results", "document");
    size_t i;
    const json_t *c;
    char where[64];
    json_array_foreach(arr(r, res, "candidates", "results"), i, c) {
        const char *w = at(where, sizeof where, "candidates", i);
        char cand[96], gpus[32];
        snprintf(cand, sizeof cand, "candidate=%s", str(r, c, "name", w) ?: "?");
        snprintf(gpus, sizeof gpus, "gpus=%.0f", num(r, c, "gpus", w, NULL));
        const char *labels[] = {cand, gpus, NULL};
        field(r, "plan.step", labels, c, "step", LOWER);
        add(r, "plan.exposed_fraction", labels, num(r, c, "exposed_fraction", w, NULL), "",
            LOWER, NULL, NULL);
        field(r, "plan.time_to_train", labels, c, "time_to_train", LOWER);
        field(r, "plan.cost", labels, obj(r, c, "cost", w), "total", LOWER);
    }
}

static void check(struct rows *r, const json_t *doc)
{
    const json_t *res = obj(r, doc, "results", "document");
    const json_t *sum = obj(r, res, "summary", "results");
    add(r, "check.fail", NULL, num(r, sum, "fail", "results.summary", NULL), "", LOWER, NULL,
        NULL);
    add(r, "check.warn", NULL, num(r, sum, "warn", "results.summary", NULL), "", LOWER, NULL,
        NULL);
    add(r, "check.nagios", NULL,
        num(r, obj(r, res, "nagios", "results"), "code", "results.nagios", NULL), "", LOWER, NULL,
        NULL);
    size_t i;
    const json_t *f;
    char where[64];
    json_array_foreach(arr(r, res, "findings", "results"), i, f) {
        const char *w = at(where, sizeof where, "findings", i);
        const char *st = str(r, f, "status", w);
        if (!st || strcmp(st, "SKIP") == 0)
            continue;
        char rule[80];
        snprintf(rule, sizeof rule, "rule=%s", str(r, f, "id", w) ?: "?");
        const char *labels[] = {rule, NULL};
        add(r, "check.rule.pass", labels, strcmp(st, "PASS") == 0 ? 1 : 0, "", HIGHER, NULL,
            NULL);
    }
}

/* the SDC screen of a node: its threads that diverged from their majority,
 * the time of a step on one core (its step count follows from that when
 * it ran by time, and is no figure of health) */
static void sdc(struct rows *r, const json_t *doc)
{
    const json_t *res = obj(r, doc, "results", "document");
    add(r, "sdc.diverged", NULL, num(r, res, "diverged", "results", NULL), "", LOWER, NULL, NULL);
    field(r, "sdc.step_time", NULL, res, "step_time", LOWER);
}

/* validate's fleet document: the judgement of the allocation */
static void fleet(struct rows *r, const json_t *doc)
{
    const json_t *res = obj(r, doc, "results", "document");
    const json_t *j = obj(r, res, "judgement", "results");
    static const char *const k[] = {"slow_nodes", "slow_links", "worse", "outliers"};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        char m[64];
        snprintf(m, sizeof m, "fleet.%s", k[i]);
        add(r, m, NULL, num(r, j, k[i], "results.judgement", NULL), "", LOWER, NULL, NULL);
    }
    add(r, "fleet.failed_tests", NULL, num(r, res, "failed_tests", "results", NULL), "", LOWER,
        NULL, NULL);
    add(r, "fleet.nodes", NULL, num(r, res, "node_count", "results", NULL), "", NONE, NULL, NULL);
}

/* validate --simulate's document: the triage's score against what was
 * planted */
static void simulate(struct rows *r, const json_t *doc)
{
    const json_t *res = obj(r, doc, "results", "document");
    const json_t *s = obj(r, res, "simulated", "results");
    add(r, "simulate.precision", NULL, num(r, s, "precision", "results.simulated", NULL), "",
        HIGHER, NULL, NULL);
    add(r, "simulate.recall", NULL, num(r, s, "recall", "results.simulated", NULL), "", HIGHER,
        NULL, NULL);
    add(r, "simulate.rounds", NULL, num(r, res, "rounds_total", "results", NULL), "", LOWER, NULL,
        NULL);
}

/* The rows of each command's documents: one reader per command, NULL for a
 * command whose documents have no figures (a run.ok row only). A command
 * not here is not one trainpath runs. */
/* The counters beside a run's figures (docs/counters.md) as one row a
 * cause, present with 0 when nothing moved, so that a gate can say a clean
 * window has none: counters.CAUSE, the sum of its evidence's deltas (for
 * downtrained and link_changed: the links) over every node of the run;
 * counters.tcp_retrans, the test's own connections' retransmits. */
static const char *const causes[] = {"throttled", "pausing", "congestion",  "loss",
                                     "errors",    "flap",    "downtrained", "link_changed"};

/* Add the evidence of counters object c to sum (per cause of causes[]). */
static void cause_sums(struct rows *r, const json_t *c, double *sum)
{
    size_t i, j;
    const json_t *e, *x;
    json_array_foreach(arr(r, c, "causes", "counters"), i, e) {
        const char *name = str(r, e, "cause", "counters.causes");
        for (size_t k = 0; name && k < sizeof causes / sizeof *causes; k++) {
            if (strcmp(name, causes[k]) != 0)
                continue;
            json_array_foreach(arr(r, e, "evidence", "counters.causes"), j, x) {
                const json_t *d = json_object_get(x, "delta");
                sum[k] += json_is_number(d) ? json_number_value(d) : 1;
            }
        }
    }
}

static void counters(struct rows *r, const json_t *res, const char *const *labels)
{
    const json_t *c = json_object_get(res, "counters");
    if (!json_is_object(c) || json_object_get(c, "error"))
        return;
    double sum[sizeof causes / sizeof *causes] = {0};
    cause_sums(r, c, sum);
    /* every node of the run: net's server, coll's and step's other hosts */
    const json_t *peer = json_object_get(res, "peer_counters");
    if (json_is_object(peer) && !json_object_get(peer, "error"))
        cause_sums(r, peer, sum);
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(res, "nodes_counters"), i, e) {
        const json_t *nc = json_object_get(e, "counters");
        if (json_is_object(nc) && !json_object_get(nc, "error"))
            cause_sums(r, nc, sum);
    }
    for (size_t k = 0; k < sizeof causes / sizeof *causes; k++) {
        char m[64];
        snprintf(m, sizeof m, "counters.%s", causes[k]);
        add(r, m, labels, sum[k], "", LOWER, NULL, NULL);
    }
    const json_t *conns = json_object_get(res, "connections");
    if (json_is_array(conns) && json_array_size(conns)) {
        double retrans = 0;
        json_array_foreach(conns, i, e) {
            double v = num(r, e, "total_retrans", "connections", NULL);
            retrans += isfinite(v) ? v : 0;
        }
        add(r, "counters.tcp_retrans", labels, retrans, "", LOWER, NULL, NULL);
    }
}

static const struct {
    const char *command;
    void (*rows)(struct rows *r, const json_t *doc);
    /* its figures are the evidence of its verdict: kept when the status is
     * that verdict's failure (code "check"), not only when ok */
    bool verdict;
} readers[] = {
    {"net lat", net, false},
    {"net bw", net, false},
    {"net bibw", net, false},
    {"net loaded", net, false},
    {"coll", coll, false},
    {"io", NULL, false}, /* io refused before it knew its workload */
    {"io checkpoint", io_checkpoint, false},
    {"io dataset", io_dataset, false},
    {"io commit", io_commit, false},
    {"io info", NULL, false},
    {"step", step, false},
    {"plan", plan, false},
    {"plan interval", NULL, false},
    {"check", check, false},
    {"check fleet", NULL, false},
    {"sdc", sdc, false},
    {"fleet", fleet, true},
    {"validate simulate", simulate, true},
};

static int reader(const char *command)
{
    for (size_t i = 0; command && i < sizeof readers / sizeof readers[0]; i++)
        if (strcmp(command, readers[i].command) == 0)
            return (int)i;
    return -1;
}

bool tp__report_command_known(const char *command)
{
    return reader(command) >= 0;
}

const char *tp__report_commands(char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof readers / sizeof readers[0] && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? ", " : "", readers[i].command);
    return buf;
}

bool tp__report_figures_kept(const json_t *doc)
{
    const json_t *status = json_object_get(doc, "status");
    if (json_is_true(json_object_get(status, "ok")))
        return true;
    /* a failed run's figures are not figures: run.ok = 0 says it all; but
     * a fleet that failed its judgement was measured to the end */
    int k = reader(json_string_value(json_object_get(doc, "command")));
    const char *code = json_string_value(json_object_get(status, "code"));
    return k >= 0 && readers[k].verdict && code && strcmp(code, "check") == 0;
}

/* The rows of doc; with why (cap bytes), the first thing wrong there too. */
static json_t *metrics(const json_t *doc, char *why, size_t cap, tp_error *err)
{
    struct rows r = {json_array(), false, why, cap};
    if (why && cap)
        why[0] = '\0';
    if (!r.a) {
        tp_error_set(err, TP_ENOMEM, "out of memory");
        return NULL;
    }
    const char *command = json_string_value(json_object_get(doc, "command"));
    bool ok = json_is_true(json_object_get(json_object_get(doc, "status"), "ok"));
    char cmd[64];
    snprintf(cmd, sizeof cmd, "command=%s", command ? command : "?");
    const char *run_labels[] = {cmd, NULL};
    add(&r, "run.ok", run_labels, ok ? 1 : 0, "", HIGHER, NULL, NULL);
    int k = reader(command);
    if (k >= 0 && readers[k].rows && tp__report_figures_kept(doc))
        readers[k].rows(&r, doc);
    if (ok && k >= 0)
        counters(&r, json_object_get(doc, "results"), run_labels);
    if (r.oom) {
        json_decref(r.a);
        tp_error_set(err, TP_ENOMEM, "out of memory");
        return NULL;
    }
    return r.a;
}

json_t *tp_report_metrics(const json_t *doc, tp_error *err)
{
    return metrics(doc, NULL, 0, err);
}

json_t *tp__report_metrics_checked(const json_t *doc, char *why, size_t cap, tp_error *err)
{
    return metrics(doc, why, cap, err);
}

json_t *tp_report_provenance(const json_t *doc)
{
    const json_t *pv = json_object_get(doc, "provenance");
    char *cfg = json_dumps(json_object_get(doc, "config"), JSON_SORT_KEYS | JSON_COMPACT);
    /* the configuration's identity, to tell comparable runs apart */
    unsigned long long h = 1469598103934665603ull;
    for (const char *p = cfg ? cfg : ""; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    free(cfg);
    char id[24];
    snprintf(id, sizeof id, "%016llx", h);
    return json_pack("{s:s?, s:s?, s:s?, s:s?, s:s?, s:s}", "command",
                     json_string_value(json_object_get(doc, "command")), "host",
                     json_string_value(json_object_get(pv, "host")), "started_utc",
                     json_string_value(json_object_get(doc, "started_utc")), "tool_version",
                     json_string_value(json_object_get(json_object_get(doc, "tool"), "version")),
                     "kernel", json_string_value(json_object_get(pv, "kernel")), "config_id", id);
}
