/* Result documents flattened into metric rows: one table per command says
 * which fields become which metrics, with their labels and which way is
 * better. Everything `report` does (history, baselines, gates, diffs,
 * outliers, Prometheus, HTML) starts here, so a metric is named once. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp/json.h"
#include "tp/report.h"
#include "tp/units.h"

enum better { NONE, LOWER, HIGHER };

struct rows {
    json_t *a;
    bool oom;
};

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
    static const char *const words[] = {NULL, "lower", "higher"};
    json_t *row = json_pack("{s:s, s:o, s:s, s:f, s:s, s:s?}", "metric", metric, "labels", lab,
                            "key", key, "value", value, "unit", unit ? unit : "", "better",
                            words[b]);
    if (!row) {
        r->oom = true;
        return;
    }
    if (json_is_object(stats)) {
        json_t *st = json_pack("{s:f, s:f, s:f}", "count", tp_json_num(stats, "count"), "mean",
                               tp_json_num(stats, "mean"), "stdev", tp_json_num(stats, "stdev"));
        if (st && isfinite(tp_json_num(stats, "count")))
            json_object_set_new(row, "stats", st);
        else
            json_decref(st);
    }
    if (json_is_object(hist))
        json_object_set(row, "histogram", (json_t *)hist);
    if (json_array_append_new(r->a, row) < 0)
        r->oom = true;
}

/* A {value, unit} field (or a bare number) of obj as a row; the unit read
 * before the row is made (an argument list has no order of evaluation). */
static void field(struct rows *r, const char *metric, const char *const *labels,
                  const json_t *obj, const char *key, enum better b)
{
    const char *unit = NULL;
    double v = tp_json_num_unit(obj, key, &unit);
    add(r, metric, labels, v, unit, b, NULL, NULL);
}

/* The percentiles of a stats object {count, mean, p50, p99, ...}, named
 * metric.p50, metric.p99, ... */
static void stats_rows(struct rows *r, const char *metric, const char *const *labels,
                       const json_t *st, const json_t *hist, enum better b)
{
    static const char *const q[] = {"mean", "p50", "p99", "p99_9", "max"};
    const char *unit = json_string_value(json_object_get(st, "unit"));
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        char m[128];
        snprintf(m, sizeof m, "%s.%s", metric, q[i]);
        add(r, m, labels, tp_json_num(st, q[i]), unit, b, i == 0 || i == 1 ? st : NULL,
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

static void lbl_size(char *buf, size_t cap, const json_t *e)
{
    snprintf(buf, cap, "size=%.0f", tp_json_num(e, "size_bytes"));
}

static void net(struct rows *r, const json_t *doc)
{
    const json_t *cfg = json_object_get(doc, "config"), *res = json_object_get(doc, "results");
    const char *test = json_string_value(json_object_get(res, "test"));
    const char *tr = json_string_value(json_object_get(cfg, "transport"));
    const char *prov = json_string_value(json_object_get(cfg, "provider"));
    char size[48], transport[96];
    snprintf(transport, sizeof transport, "transport=%s%s%s", tr ? tr : "tcp", prov ? ":" : "",
             prov ? prov : "");
    const char *sections[] = {"sizes", "isolated", "loaded"};
    for (int s = 0; s < 3; s++) {
        size_t i;
        const json_t *e;
        json_array_foreach(json_object_get(res, sections[s]), i, e) {
            lbl_size(size, sizeof size, e);
            const char *labels[] = {size, transport, NULL};
            char m[64];
            if (json_object_get(e, "latency")) {
                /* net.lat.latency; net.loaded.latency under load, and
                 * net.loaded.isolated.latency for its reference */
                snprintf(m, sizeof m, "net.%s%s.latency", test ? test : "lat",
                         s == 1 ? ".isolated" : "");
                size_t from = json_array_size(r->a);
                stats_rows(r, m, labels, json_object_get(e, "latency"),
                           json_object_get(e, "rtt_histogram"), LOWER);
                halve_histograms(r, from);
            }
            if (s > 0)
                continue;
            static const char *const bws[] = {"bw", "bibw"};
            for (int k = 0; k < 2; k++) {
                const char *unit = NULL;
                double v = tp_json_num_unit(e, bws[k], &unit);
                snprintf(m, sizeof m, "net.%s", bws[k]);
                add(r, m, labels, v, unit, HIGHER, NULL, NULL);
            }
        }
    }
}

static void coll(struct rows *r, const json_t *doc)
{
    const json_t *cfg = json_object_get(doc, "config"), *res = json_object_get(doc, "results");
    char op[48], ranks[32], size[48], algo[64], transport[64];
    snprintf(op, sizeof op, "op=%s", json_string_value(json_object_get(cfg, "op")) ?: "allreduce");
    snprintf(ranks, sizeof ranks, "ranks=%.0f", tp_json_num(cfg, "ranks"));
    snprintf(transport, sizeof transport, "transport=%s",
             json_string_value(json_object_get(cfg, "transport")) ?: "tcp");
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(res, "sizes"), i, e) {
        lbl_size(size, sizeof size, e);
        /* NCCL, MPI and GPU memory get labels of their own; trainpath from
         * host memory keeps the labels it always had (baselines match) */
        char be[48] = "", mem[24] = "";
        const char *b = json_string_value(json_object_get(e, "backend"));
        const char *m = json_string_value(json_object_get(e, "mem"));
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
        stats_rows(r, "coll.time", labels, json_object_get(e, "time"), NULL, LOWER);
        add(r, "coll.wrong", labels, tp_json_num(e, "wrong"), "", LOWER, NULL, NULL);
        const json_t *sk = json_object_get(e, "arrival_skew");
        add(r, "coll.skew.p99", labels, tp_json_num(sk, "p99"), "ns", LOWER, NULL, NULL);
    }
    json_array_foreach(json_object_get(res, "fit"), i, e) {
        snprintf(algo, sizeof algo, "algo=%s",
                 json_string_value(json_object_get(e, "algo")) ?: "?");
        const char *labels[] = {algo, op, ranks, transport, NULL};
        field(r, "coll.fit.alpha", labels, e, "alpha", LOWER);
        field(r, "coll.fit.beta", labels, e, "beta", LOWER);
    }
}

/* The storage's fs type, the label of every io row. */
static const char *fs_label(const json_t *res, char *buf, size_t cap)
{
    const char *fs = json_string_value(json_object_get(
        json_object_get(json_object_get(res, "storage"), "fs"), "type"));
    snprintf(buf, cap, "fs=%s", fs ? fs : "?");
    return buf;
}

static void io_checkpoint(struct rows *r, const json_t *doc)
{
    const json_t *res = json_object_get(doc, "results");
    char fsl[64];
    const char *labels[] = {fs_label(res, fsl, sizeof fsl), NULL};
    stats_rows(r, "io.checkpoint.commit", labels, json_object_get(res, "commit"),
               json_object_get(res, "commit_histogram"), LOWER);
    field(r, "io.checkpoint.throughput", labels, res, "throughput", HIGHER);
}

static void io_dataset(struct rows *r, const json_t *doc)
{
    const json_t *res = json_object_get(doc, "results");
    char fsl[64];
    const char *labels[] = {fs_label(res, fsl, sizeof fsl), NULL};
    stats_rows(r, "io.dataset.read", labels, json_object_get(res, "latency"),
               json_object_get(res, "latency_histogram"), LOWER);
    double sum = 0, n = 0;
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(res, "epochs"), i, e) {
        double v = tp_json_num(e, "samples_per_s");
        if (isfinite(v)) {
            sum += v;
            n++;
        }
    }
    add(r, "io.dataset.samples_per_s", labels, n > 0 ? sum / n : NAN, "1/s", HIGHER, NULL, NULL);
    const json_t *during = json_object_get(res, "during");
    add(r, "io.dataset.during.p99_ratio", labels, tp_json_num(during, "p99_ratio"), "", LOWER,
        NULL, NULL);
}

static void io_commit(struct rows *r, const json_t *doc)
{
    const json_t *res = json_object_get(doc, "results");
    char fsl[64];
    const char *labels[] = {fs_label(res, fsl, sizeof fsl), NULL};
    stats_rows(r, "io.commit.latency", labels, json_object_get(res, "latency"),
               json_object_get(res, "latency_histogram"), LOWER);
    field(r, "io.commit.per_s", labels, res, "commits_per_s", HIGHER);
}

static void step(struct rows *r, const json_t *doc)
{
    const json_t *cfg = json_object_get(doc, "config"), *res = json_object_get(doc, "results");
    char preset[64], ranks[32];
    snprintf(preset, sizeof preset, "preset=%s",
             json_string_value(json_object_get(cfg, "preset")) ?: "none");
    snprintf(ranks, sizeof ranks, "ranks=%.0f", tp_json_num(cfg, "ranks"));
    const char *labels[] = {preset, ranks, NULL};
    const json_t *run = json_array_get(json_object_get(res, "runs"), 0);
    const json_t *st = json_object_get(run, "step_time");
    stats_rows(r, "step.time", labels, st, NULL, LOWER);
    add(r, "step.cov", labels, tp_json_num(st, "cv"), "", LOWER, NULL, NULL);
    const json_t *sum = json_object_get(run, "summary");
    add(r, "step.amplification", labels, tp_json_num(sum, "amplification"), "", LOWER, NULL, NULL);
    add(r, "step.exposed_comm_fraction", labels, tp_json_num(sum, "exposed_comm_fraction"), "",
        LOWER, NULL, NULL);
    add(r, "step.ckpt_overhead_fraction", labels, tp_json_num(sum, "ckpt_overhead_fraction"), "",
        LOWER, NULL, NULL);
    field(r, "step.goodput", labels, sum, "goodput", HIGHER);
    const json_t *rep = json_object_get(res, "reproducibility");
    if (json_is_boolean(json_object_get(rep, "identical")))
        add(r, "step.repro.identical", labels,
            json_is_true(json_object_get(rep, "identical")) ? 1 : 0, "", HIGHER, NULL, NULL);
}

static void plan(struct rows *r, const json_t *doc)
{
    const json_t *res = json_object_get(doc, "results");
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(res, "candidates"), i, c) {
        char cand[96], gpus[32];
        snprintf(cand, sizeof cand, "candidate=%s",
                 json_string_value(json_object_get(c, "name")) ?: "?");
        snprintf(gpus, sizeof gpus, "gpus=%.0f", tp_json_num(c, "gpus"));
        const char *labels[] = {cand, gpus, NULL};
        field(r, "plan.step", labels, c, "step", LOWER);
        add(r, "plan.exposed_fraction", labels, tp_json_num(c, "exposed_fraction"), "", LOWER, NULL,
            NULL);
        field(r, "plan.time_to_train", labels, c, "time_to_train", LOWER);
        field(r, "plan.cost", labels, json_object_get(c, "cost"), "total", LOWER);
    }
}

static void check(struct rows *r, const json_t *doc)
{
    const json_t *res = json_object_get(doc, "results");
    const json_t *sum = json_object_get(res, "summary");
    add(r, "check.fail", NULL, tp_json_num(sum, "fail"), "", LOWER, NULL, NULL);
    add(r, "check.warn", NULL, tp_json_num(sum, "warn"), "", LOWER, NULL, NULL);
    add(r, "check.nagios", NULL, tp_json_num(json_object_get(res, "nagios"), "code"), "", LOWER,
        NULL, NULL);
    size_t i;
    const json_t *f;
    json_array_foreach(json_object_get(res, "findings"), i, f) {
        const char *st = json_string_value(json_object_get(f, "status"));
        if (!st || strcmp(st, "SKIP") == 0)
            continue;
        char rule[80];
        snprintf(rule, sizeof rule, "rule=%s", json_string_value(json_object_get(f, "id")) ?: "?");
        const char *labels[] = {rule, NULL};
        add(r, "check.rule.pass", labels, strcmp(st, "PASS") == 0 ? 1 : 0, "", HIGHER, NULL,
            NULL);
    }
}

/* validate's fleet document: the judgement of the allocation */
static void fleet(struct rows *r, const json_t *doc)
{
    const json_t *res = json_object_get(doc, "results"), *j = json_object_get(res, "judgement");
    static const char *const k[] = {"slow_nodes", "slow_links", "worse", "outliers"};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        char m[64];
        snprintf(m, sizeof m, "fleet.%s", k[i]);
        add(r, m, NULL, tp_json_num(j, k[i]), "", LOWER, NULL, NULL);
    }
    add(r, "fleet.failed_tests", NULL, tp_json_num(res, "failed_tests"), "", LOWER, NULL, NULL);
    add(r, "fleet.nodes", NULL, tp_json_num(res, "node_count"), "", NONE, NULL, NULL);
}

/* The rows of each command's documents: one reader per command ("net lat",
 * "net bw", ... share one, by the prefix). */
static const struct {
    const char *command;
    bool prefix;
    void (*rows)(struct rows *r, const json_t *doc);
} readers[] = {
    {"net ", true, net},
    {"coll", false, coll},
    {"io checkpoint", false, io_checkpoint},
    {"io dataset", false, io_dataset},
    {"io commit", false, io_commit},
    {"step", false, step},
    {"plan", false, plan},
    {"check", false, check},
    {"fleet", false, fleet},
};

json_t *tp_report_metrics(const json_t *doc, tp_error *err)
{
    struct rows r = {json_array(), false};
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
    for (size_t i = 0; ok && command && i < sizeof readers / sizeof readers[0]; i++) {
        const char *c = readers[i].command;
        if (readers[i].prefix ? strncmp(command, c, strlen(c)) == 0 : strcmp(command, c) == 0) {
            readers[i].rows(&r, doc);
            break;
        }
    }
    if (r.oom) {
        json_decref(r.a);
        tp_error_set(err, TP_ENOMEM, "out of memory");
        return NULL;
    }
    return r.a;
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
