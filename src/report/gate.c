/* Threshold gates: a YAML file of limits on metric rows, judged with
 * Nagios codes. The file is read by tp_yaml tables (so every error names
 * file:line:column and the key path); a limit keeps the kind of unit it was
 * written in (a duration, a rate, a size, a percentage or a plain number)
 * and is converted into each row's own unit at the comparison, so
 * "max: 50us" judges rows in ns and in s alike and refuses rows in B/s. A
 * threshold that matches no row fails: a gate must never pass because a
 * test did not run. */
#include "tp/judge.h"

#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tp/text.h"
#include "tp/units.h"
#include "tp/yaml.h"

typedef struct tp_yaml_node node;
typedef struct tp_yaml_key key;
typedef struct tp_yaml_table table;

#define MAX_THRESHOLDS 1024
#define MAX_LABELS 8

enum lkind { L_PLAIN, L_DUR, L_RATE, L_SIZE, L_PERCENT };

struct limit {
    bool set;
    enum lkind kind;
    double v; /* seconds, bytes per second, bytes, a fraction, or the number */
    char text[48];
};

struct thr {
    char metric[128];
    int nlabels;
    char lk[MAX_LABELS][48], lv[MAX_LABELS][96];
    struct limit min, max;
    int severity; /* enum tp_gate_code: WARNING or CRITICAL */
    int line, col;
};

struct tp_gate {
    int n;
    struct thr t[MAX_THRESHOLDS];
};

/* ---- values in words ---- */

static const char *fmt_g(double v, int sig, const char *unit, char *buf, size_t cap)
{
    snprintf(buf, cap, "%.*g%s%s", sig, v, *unit ? " " : "", unit);
    return buf;
}

const char *tp_gate_fmt(double value, const char *unit, int sig, char *buf, size_t cap)
{
    if (sig <= 0)
        sig = 3;
    if (sig > 17)
        sig = 17;
    if (!unit)
        unit = "";
    if (!isfinite(value))
        return fmt_g(value, sig, unit, buf, cap);
    if (strcmp(unit, "ns") == 0 || strcmp(unit, "s") == 0) {
        static const char *const names[] = {"ns", "us", "ms", "s"};
        double v = strcmp(unit, "s") == 0 ? value * 1e9 : value;
        int k = 0;
        while (k < 3 && fabs(v) >= 999.5) {
            v /= 1000;
            k++;
        }
        return fmt_g(v, sig, names[k], buf, cap);
    }
    if (strcmp(unit, "B/s") == 0)
        return fmt_g(value / 1e9, sig, "GB/s", buf, cap);
    return fmt_g(value, sig, unit, buf, cap);
}

/* ---- reading the file ---- */

/* A limit: a plain number (in the row's unit), or a number with a unit of
 * the plan parser's: a rate, a duration, a percentage, a size. Durations
 * come before sizes, so "5m" is five minutes (a size takes M). */
static int read_limit(struct tp_yaml *y, const key *k, const node *v, const char *path, void *base)
{
    struct limit *l = (struct limit *)((char *)base + k->off);
    const char *t = v->text;
    double d;
    const char *pct = strchr(t, '%');
    if (tp_yaml_parse_value(TP_YAML_NUM, t, &d))
        l->kind = L_PLAIN;
    else if (tp_yaml_parse_value(TP_YAML_LINK, t, &d))
        l->kind = L_RATE, d /= 8;
    else if (tp_yaml_parse_value(TP_YAML_DUR, t, &d))
        l->kind = L_DUR;
    else if (pct && !pct[1] && tp_yaml_parse_value(TP_YAML_FRAC, t, &d))
        l->kind = L_PERCENT;
    else if (tp_yaml_parse_value(TP_YAML_SIZE, t, &d))
        l->kind = L_SIZE;
    else
        return tp_yaml_fail(y, v, path,
                            "cannot parse '%s' as a limit (use e.g. 10GB/s, 100Gb/s, 50us, "
                            "2ms, 10%%, 4K, or a plain number in the metric's unit)",
                            t);
    l->set = true;
    l->v = d;
    snprintf(l->text, sizeof l->text, "%s", t);
    return 0;
}

/* labels: a mapping of names to scalars, kept as text. */
static int read_labels(struct tp_yaml *y, const key *k, const node *v, const char *path, void *base)
{
    (void)k;
    struct thr *t = base;
    if (v->type == TP_YAML_N_SCALAR && v->null)
        return 0;
    if (v->type != TP_YAML_N_MAP)
        return tp_yaml_fail(y, v, path,
                            "expected a mapping of label names to values, e.g. {op: allreduce, "
                            "size: \"67108864\"}, found %s",
                            tp_yaml_type_name(y, v));
    for (size_t i = 0; i + 1 < v->n; i += 2) {
        const node *kn = v->kid[i], *vn = v->kid[i + 1];
        char p[TP_YAML_PATH_LEN];
        if (kn->type != TP_YAML_N_SCALAR || kn->null || !*kn->text) {
            tp_yaml_join(p, path, "?");
            return tp_yaml_fail(y, kn, p, "expected a label name, found %s",
                                tp_yaml_type_name(y, kn));
        }
        tp_yaml_join(p, path, kn->text);
        int rc = tp_yaml_duplicate(y, v, i, p);
        if (rc)
            return rc;
        if (vn->type != TP_YAML_N_SCALAR || vn->null)
            return tp_yaml_fail(y, vn, p, "expected a label value (a string), found %s",
                                tp_yaml_type_name(y, vn));
        if (t->nlabels == MAX_LABELS)
            return tp_yaml_fail(y, kn, p, "too many labels (at most %d)", MAX_LABELS);
        if (strlen(kn->text) >= sizeof t->lk[0] || strlen(vn->text) >= sizeof t->lv[0])
            return tp_yaml_fail(y, kn, p,
                                "label name or value too long (at most %zu and %zu "
                                "characters)",
                                sizeof t->lk[0] - 1, sizeof t->lv[0] - 1);
        strcpy(t->lk[t->nlabels], kn->text);
        strcpy(t->lv[t->nlabels], vn->text);
        t->nlabels++;
    }
    return 0;
}

static bool metric_name_ok(const char *s)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == '.'))
            return false;
    return true;
}

static int thr_check(struct tp_yaml *y, const node *map, const node *at, const char *path,
                     void *base, uint64_t seen);

static const struct tp_yaml_choice severities[] = {
    {"critical", TP_GATE_CRITICAL}, {"warning", TP_GATE_WARNING}, {NULL, 0}};

/* clang-format off */
static const key thr_keys[] = {
    {.name = "metric", .kind = TP_YAML_STR, TP_YAML_STR_FIELD(struct thr, metric),
     .flags = TP_YAML_REQUIRED, .eg = "coll.busbw, net.lat.latency.p99"},
    {.name = "labels", .kind = TP_YAML_CUSTOM, .read = read_labels},
    {.name = "min", .kind = TP_YAML_PARSE, .off = offsetof(struct thr, min), .read = read_limit},
    {.name = "max", .kind = TP_YAML_PARSE, .off = offsetof(struct thr, max), .read = read_limit},
    {.name = "severity", .kind = TP_YAML_ENUM, .off = offsetof(struct thr, severity),
     .choices = severities, .def = TP_GATE_CRITICAL},
};
static const table thr_tbl = {thr_keys, TP_YAML_NKEYS(thr_keys), thr_check, "key"};

static const key thr_elem = {.kind = TP_YAML_MAP, .sub = &thr_tbl};

static const key top_keys[] = {
    {.name = "thresholds", .kind = TP_YAML_LIST, TP_YAML_LIST_OF(struct tp_gate, t, n),
     .elem = &thr_elem, .flags = TP_YAML_REQUIRED, .what = "a sequence of thresholds",
     .eg = "[{metric: coll.busbw, min: 10GB/s}]"},
};
static const table top_tbl = {top_keys, TP_YAML_NKEYS(top_keys), NULL, NULL};
/* clang-format on */

static int thr_check(struct tp_yaml *y, const node *map, const node *at, const char *path,
                     void *base, uint64_t seen)
{
    (void)seen;
    struct thr *t = base;
    t->line = at->line;
    t->col = at->col;
    char p[TP_YAML_PATH_LEN];
    if (!metric_name_ok(t->metric)) {
        tp_yaml_join(p, path, "metric");
        return tp_yaml_fail(y, tp_yaml_lookup(map, "metric", true), p,
                            "'%s' is not a metric name (lower-case letters, digits, '_' and '.'; "
                            "labels go under labels:)",
                            t->metric);
    }
    if (!t->min.set && !t->max.set) {
        tp_yaml_join(p, path, "max");
        return tp_yaml_fail(y, at, p, "required (or min: a threshold needs min, max or both)");
    }
    if (t->min.set && t->max.set && t->min.kind == t->max.kind && t->min.v > t->max.v) {
        tp_yaml_join(p, path, "min");
        return tp_yaml_fail(y, tp_yaml_lookup(map, "min", true), p,
                            "min %s is above max %s: no value could pass", t->min.text,
                            t->max.text);
    }
    return 0;
}

int tp_gate_load(const char *path, tp_gate **out, tp_error *err)
{
    *out = NULL;
    if (!path || !*path)
        return tp_error_set(err, TP_EUSAGE, "thresholds file: no path given");
    tp_gate *g = calloc(1, sizeof *g);
    if (!g)
        return tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
    struct tp_yaml y;
    int rc = tp_yaml_open(&y, path, "thresholds", err);
    if (rc == 0 && !y.root)
        rc = tp_error_set(err, TP_EUSAGE,
                          "%s:1:1: empty document: a thresholds file needs "
                          "thresholds:",
                          path);
    else if (rc == 0 && y.root->type != TP_YAML_N_MAP)
        rc = tp_yaml_fail(&y, y.root, "", "expected a mapping (thresholds:), found %s",
                          tp_yaml_type_name(&y, y.root));
    if (rc == 0)
        rc = tp_yaml_walk(&y, y.root, y.root, "", &top_tbl, g);
    if (rc == 0 && g->n == 0)
        rc = tp_yaml_fail(&y, tp_yaml_lookup(y.root, "thresholds", false), "thresholds",
                          "no thresholds: a gate without any would pass anything");
    tp_yaml_close(&y);
    if (rc) {
        free(g);
        return rc;
    }
    *out = g;
    return 0;
}

void tp_gate_free(tp_gate *g)
{
    free(g);
}

size_t tp_gate_size(const tp_gate *g)
{
    return (size_t)g->n;
}

/* ---- judging ---- */

/* A threshold's label value matches a row's: the same text, a shell
 * pattern (transport: "ofi*"), or for size the same number of bytes
 * (size: 64M against size=67108864). */
static bool label_match(const char *name, const char *want, const char *have)
{
    if (strcmp(want, have) == 0)
        return true;
    if (strpbrk(want, "*?[") && fnmatch(want, have, 0) == 0)
        return true;
    if (strcmp(name, "size") == 0) {
        uint64_t a, b;
        tp_error e;
        return tp_parse_size(want, "size", &a, &e) == 0 &&
               tp_parse_size(have, "size", &b, &e) == 0 && a == b;
    }
    return false;
}

static bool row_matches(const struct thr *t, const json_t *row)
{
    const char *m = json_string_value(json_object_get(row, "metric"));
    if (!m || strcmp(m, t->metric) != 0)
        return false;
    const json_t *labels = json_object_get(row, "labels");
    for (int i = 0; i < t->nlabels; i++) {
        const char *have = json_string_value(json_object_get(labels, t->lk[i]));
        if (!have || !label_match(t->lk[i], t->lv[i], have))
            return false;
    }
    return true;
}

/* The limit in the row's unit, or false when the two cannot be compared. */
static bool convert(const struct limit *l, const char *unit, double *out)
{
    static const struct {
        enum lkind kind;
        const char *unit;
        double mult;
    } rules[] = {
        {L_DUR, "ns", 1e9}, {L_DUR, "us", 1e6}, {L_DUR, "ms", 1e3},
        {L_DUR, "s", 1},    {L_RATE, "B/s", 1}, {L_RATE, "bit/s", 8},
        {L_SIZE, "B", 1},   {L_PERCENT, "", 1}, {L_PERCENT, "%", 100},
    };
    if (l->kind == L_PLAIN) {
        *out = l->v;
        return true;
    }
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        if (rules[i].kind == l->kind && strcmp(rules[i].unit, unit) == 0) {
            *out = l->v * rules[i].mult;
            return true;
        }
    }
    return false;
}

static const char *kind_name(enum lkind k)
{
    static const char *const names[] = {"a number", "a duration", "a rate", "a size",
                                        "a percentage"};
    return names[k];
}

/* Two values in words, with as many digits as it takes to tell them apart. */
static void fmt_pair(double a, double b, const char *unit, char *sa, char *sb, size_t cap)
{
    for (int sig = 3; sig <= 8; sig++) {
        tp_gate_fmt(a, unit, sig, sa, cap);
        tp_gate_fmt(b, unit, sig, sb, cap);
        if (a == b || strcmp(sa, sb) != 0)
            return;
    }
}

static const char *severity_name(int s)
{
    return s == TP_GATE_WARNING ? "warning" : "critical";
}

/* "coll.busbw{op=allreduce} on node3" */
static void row_name(const json_t *row, char *buf, size_t cap)
{
    const char *k = json_string_value(json_object_get(row, "key"));
    const char *host = json_string_value(json_object_get(row, "host"));
    snprintf(buf, cap, "%s%s%s", k ? k : "?", host ? " on " : "", host ? host : "");
}

/* "coll.busbw{op=allreduce,size=64M}": the threshold as written */
static void thr_name(const struct thr *t, char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "%s", t->metric);
    for (int i = 0; i < t->nlabels && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s=%s", i ? "," : "{", t->lk[i], t->lv[i]);
    if (t->nlabels && n < cap)
        snprintf(buf + n, cap - n, "}");
}

static json_t *thr_labels(const struct thr *t)
{
    json_t *o = json_object();
    for (int i = 0; o && i < t->nlabels; i++)
        json_object_set_new(o, t->lk[i], json_string(t->lv[i]));
    return o;
}

/* One (threshold, row) result; NULL when out of memory. */
static json_t *judge_row(const struct thr *t, const json_t *row, const char **status)
{
    const char *unit = json_string_value(json_object_get(row, "unit"));
    if (!unit)
        unit = "";
    double v = json_number_value(json_object_get(row, "value"));
    char name[600], says[900], sv[64], sl[64], sh[64];
    row_name(row, name, sizeof name);
    json_t *r =
        json_pack("{s:s, s:f, s:s}", "key", json_string_value(json_object_get(row, "key")) ?: "?",
                  "value", v, "unit", unit);
    if (!r)
        return NULL;
    const char *host = json_string_value(json_object_get(row, "host"));
    if (host)
        json_object_set_new(r, "host", json_string(host));
    double lo = 0, hi = 0;
    const struct limit *bad = NULL;
    if (t->min.set && !convert(&t->min, unit, &lo))
        bad = &t->min;
    else if (t->max.set && !convert(&t->max, unit, &hi))
        bad = &t->max;
    if (bad) {
        *status = "UNUSABLE";
        snprintf(says, sizeof says,
                 "%s: the limit %s is %s, which does not compare with a value in '%s'", name,
                 bad->text, kind_name(bad->kind), unit);
        json_object_set_new(r, "says", json_string(says));
        return r;
    }
    if (t->min.set)
        json_object_set_new(r, "min", json_real(lo));
    if (t->max.set)
        json_object_set_new(r, "max", json_real(hi));
    if (t->min.set && v < lo) {
        *status = "FAIL";
        fmt_pair(v, lo, unit, sv, sl, sizeof sv);
        snprintf(says, sizeof says, "%s %s < %s (min)", name, sv, sl);
    } else if (t->max.set && v > hi) {
        *status = "FAIL";
        fmt_pair(v, hi, unit, sv, sh, sizeof sv);
        snprintf(says, sizeof says, "%s %s > %s (max)", name, sv, sh);
    } else {
        *status = "PASS";
        if (t->min.set && t->max.set) {
            fmt_pair(v, lo, unit, sv, sl, sizeof sv);
            fmt_pair(v, hi, unit, sv, sh, sizeof sv);
            snprintf(says, sizeof says, "%s %s <= %s <= %s", name, sl, sv, sh);
        } else if (t->min.set) {
            fmt_pair(v, lo, unit, sv, sl, sizeof sv);
            snprintf(says, sizeof says, "%s %s >= %s (min)", name, sv, sl);
        } else {
            fmt_pair(v, hi, unit, sv, sh, sizeof sv);
            snprintf(says, sizeof says, "%s %s <= %s (max)", name, sv, sh);
        }
    }
    json_object_set_new(r, "says", json_string(says));
    return r;
}

/* What a missing threshold says: that it fails, and what rows there were. */
static void missing_says(const struct thr *t, const json_t *rows, char *says, size_t cap)
{
    char name[600];
    thr_name(t, name, sizeof name);
    size_t i, same = 0;
    const json_t *row;
    json_array_foreach(rows, i, row) {
        const char *m = json_string_value(json_object_get(row, "metric"));
        same += m && strcmp(m, t->metric) == 0;
    }
    if (same)
        snprintf(says, cap,
                 "%s: no row matches (%zu row%s of %s, none with these labels); a missing "
                 "metric fails the gate",
                 name, same, same == 1 ? "" : "s", t->metric);
    else
        snprintf(says, cap,
                 "%s: no row matches (no %s in the documents: the test did not run or failed); "
                 "a missing metric fails the gate",
                 name, t->metric);
}

json_t *tp_gate_eval(const tp_gate *g, const json_t *rows, tp_error *err)
{
    json_t *results = json_array();
    json_t *rep = json_object();
    if (!results || !rep)
        goto oom;
    int code = TP_GATE_OK;
    size_t npass = 0, nfail = 0, nmissing = 0, nunusable = 0;
    for (int ti = 0; ti < g->n; ti++) {
        const struct thr *t = &g->t[ti];
        size_t matched = 0, i;
        const json_t *row;
        json_array_foreach(rows, i, row) {
            if (!row_matches(t, row) || !json_is_number(json_object_get(row, "value")))
                continue;
            matched++;
            const char *status = "PASS";
            json_t *r = judge_row(t, row, &status);
            if (!r)
                goto oom;
            if (strcmp(status, "PASS") == 0) {
                npass++;
            } else if (strcmp(status, "FAIL") == 0) {
                nfail++;
                if (t->severity > code)
                    code = t->severity;
            } else {
                nunusable++;
            }
            json_object_set_new(r, "status", json_string(status));
            json_object_set_new(r, "threshold", json_integer(ti));
            json_object_set_new(r, "line", json_integer(t->line));
            json_object_set_new(r, "metric", json_string(t->metric));
            json_object_set_new(r, "labels", thr_labels(t));
            json_object_set_new(r, "severity", json_string(severity_name(t->severity)));
            if (json_array_append_new(results, r))
                goto oom;
        }
        if (matched)
            continue;
        nmissing++;
        if (t->severity > code)
            code = t->severity;
        char says[1024];
        missing_says(t, rows, says, sizeof says);
        json_t *r = json_pack("{s:s, s:i, s:i, s:s, s:o, s:s, s:s}", "status", "MISSING",
                              "threshold", ti, "line", t->line, "metric", t->metric, "labels",
                              thr_labels(t), "severity", severity_name(t->severity), "says", says);
        if (!r || json_array_append_new(results, r))
            goto oom;
    }
    if (nunusable)
        code = TP_GATE_UNKNOWN;
    static const char *const words[] = {"OK", "WARNING", "CRITICAL", "UNKNOWN"};
    if (json_object_set_new(rep, "code", json_integer(code)) ||
        json_object_set_new(rep, "status", json_string(words[code])) ||
        json_object_set_new(rep, "thresholds", json_integer(g->n)) ||
        json_object_set_new(rep, "pass", json_integer((json_int_t)npass)) ||
        json_object_set_new(rep, "fail", json_integer((json_int_t)nfail)) ||
        json_object_set_new(rep, "missing", json_integer((json_int_t)nmissing)) ||
        json_object_set_new(rep, "unusable", json_integer((json_int_t)nunusable)) ||
        json_object_set_new(rep, "results", results))
        goto oom_rep;
    return rep;
oom:
    json_decref(results);
oom_rep:
    json_decref(rep);
    tp_error_set(err, TP_ENOMEM, "gate: out of memory");
    return NULL;
}

void tp_gate_print(FILE *f, const json_t *report, bool all)
{
    const char *status = json_string_value(json_object_get(report, "status"));
    json_int_t n = json_integer_value(json_object_get(report, "thresholds"));
    /* thresholds that failed: count each once, however many rows it failed on */
    size_t i;
    const json_t *r;
    json_int_t prev = -1, failed = 0;
    json_array_foreach(json_object_get(report, "results"), i, r) {
        const char *st = json_string_value(json_object_get(r, "status"));
        json_int_t t = json_integer_value(json_object_get(r, "threshold"));
        if (st && strcmp(st, "PASS") != 0 && t != prev) {
            failed++;
            prev = t;
        }
    }
    fprintf(f, "GATE %s: %lld of %lld threshold%s %s", status ? status : "?", (long long)failed,
            (long long)n, n == 1 ? "" : "s", failed == 1 ? "fails" : "fail");
    json_int_t missing = json_integer_value(json_object_get(report, "missing"));
    json_int_t unusable = json_integer_value(json_object_get(report, "unusable"));
    if (missing || unusable) {
        fprintf(f, " (");
        if (missing)
            fprintf(f, "%lld missing%s", (long long)missing, unusable ? ", " : "");
        if (unusable)
            fprintf(f, "%lld not comparable", (long long)unusable);
        fprintf(f, ")");
    }
    fprintf(f, "\n");
    json_array_foreach(json_object_get(report, "results"), i, r) {
        const char *st = json_string_value(json_object_get(r, "status"));
        if (!st || (!all && strcmp(st, "PASS") == 0))
            continue;
        /* says quotes the thresholds file's labels: safe text only */
        char t[2048];
        fprintf(f, "%-8s %-8s line %lld: %s\n", st,
                json_string_value(json_object_get(r, "severity")),
                (long long)json_integer_value(json_object_get(r, "line")),
                tp_text_safe(json_string_value(json_object_get(r, "says")), t, sizeof t,
                             TP_TEXT_LINE));
    }
}
