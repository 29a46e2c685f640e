/* Tests of the judgements on metric rows (tp/judge.h): the threshold gate
 * (the file's errors at file:line:column, unit conversion, PASS/FAIL/
 * MISSING/UNUSABLE and the Nagios codes), the statistical diff (the two
 * tests against closed forms and a brute-force rank count; a planted +20 %
 * regression, noise from the same distribution under several seeds, a
 * shift under the minimum effect, an improvement), fleet outliers (a
 * planted host, the MAD = 0 rule, a slow node and a slow link among 16,
 * noise) and the Prometheus textfile (checked line by line against the
 * exposition format by a small parser here). Every document is synthetic;
 * files go to a fresh folder under /tmp. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tp/hist.h"
#include "tp/judge.h"
#include "tp/report.h"
#include "tp_test.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    return tp_test_mkdtemp(dir, sizeof dir, "tp_judge");
}

static int teardown(void **state)
{
    (void)state;
    return tp_test_rmtree(dir);
}

/* ---- random numbers (splitmix64) ---- */

static double uniform(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

static double normal(uint64_t *s)
{
    double u = uniform(s), v = uniform(s);
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* ---- rows and documents ---- */

/* A row as tp_report_metrics writes it; labels "k=v,k=v" sorted by key. */
static json_t *row(const char *metric, const char *labels, double value, const char *unit,
                   const char *better)
{
    char key[512];
    json_t *lab = json_object();
    snprintf(key, sizeof key, "%s%s%s%s", metric, *labels ? "{" : "", labels, *labels ? "}" : "");
    char buf[256];
    snprintf(buf, sizeof buf, "%s", labels);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        *eq = '\0';
        json_object_set_new(lab, t, json_string(eq + 1));
    }
    json_t *r = json_pack("{s:s, s:o, s:s, s:f, s:s, s:s?}", "metric", metric, "labels", lab, "key",
                          key, "value", value, "unit", unit, "better", better);
    assert_non_null(r);
    return r;
}

static void with_stats(json_t *r, double n, double mean, double sd)
{
    json_object_set_new(r, "stats",
                        json_pack("{s:f, s:f, s:f}", "count", n, "mean", mean, "stdev", sd));
}

/* A net lat document: n round trips of about 80 us (one way 40 us),
 * log-normal with sigma 0.25, times scale; samples from seed. */
static json_t *lat_doc(uint64_t seed, int n, double scale, const char *host)
{
    tp_hist *h = tp_hist_new();
    assert_non_null(h);
    uint64_t s = seed * 7919 + 1;
    for (int i = 0; i < n; i++)
        tp_hist_record(h, (uint64_t)llround(80000 * scale * exp(0.25 * normal(&s))));
    json_t *lat = json_object();
    json_object_set_new(lat, "count", json_integer((json_int_t)h->count));
    json_object_set_new(lat, "mean", json_real(h->mean / 2));
    json_object_set_new(lat, "stdev", json_real(tp_hist_stdev(h) / 2));
    json_object_set_new(lat, "p50", json_real((double)tp_hist_percentile(h, 50) / 2));
    json_object_set_new(lat, "p99", json_real((double)tp_hist_percentile(h, 99) / 2));
    json_object_set_new(lat, "p99_9", json_real((double)tp_hist_percentile(h, 99.9) / 2));
    json_object_set_new(lat, "max", json_real((double)h->max / 2));
    json_object_set_new(lat, "unit", json_string("ns"));
    json_t *doc =
        json_pack("{s:s, s:s, s:{s:b}, s:{s:s}, s:{s:s}, s:{s:s, s:[{s:i, s:o, s:o}]}}", "schema",
                  "trainpath.result/1", "command", "net lat", "status", "ok", 1, "provenance",
                  "host", host, "config", "transport", "tcp", "results", "test", "lat", "sizes",
                  "size_bytes", 8, "latency", lat, "rtt_histogram", tp_hist_to_json(h));
    tp_hist_free(h);
    assert_non_null(doc);
    return doc;
}

static const json_t *find_row(const json_t *rows, const char *key)
{
    size_t i;
    const json_t *r;
    json_array_foreach(rows, i, r) {
        if (strcmp(json_string_value(json_object_get(r, "key")), key) == 0)
            return r;
    }
    fail_msg("no row %s", key);
    return NULL;
}

static const char *sv(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static double nv(const json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}

/* ================= gate ================= */

static const char *example = "thresholds:\n"
                             "  - metric: coll.busbw              # metric name (required)\n"
                             "    labels: {op: allreduce, size: \"67108864\"}\n"
                             "    min: 10GB/s\n"
                             "    severity: critical\n"
                             "  - metric: net.lat.latency.p99\n"
                             "    labels: {size: \"8\"}\n"
                             "    max: 50us\n"
                             "  - metric: step.cov\n"
                             "    max: 0.1\n";

static json_t *example_rows(double busbw, bool with_cov)
{
    json_t *rows = json_array();
    json_array_append_new(rows,
                          row("coll.busbw", "op=allreduce,ranks=8,size=67108864,transport=tcp",
                              busbw, "B/s", "higher"));
    json_array_append_new(rows,
                          row("coll.busbw", "op=allgather,ranks=8,size=67108864,transport=tcp", 1e9,
                              "B/s", "higher"));
    json_array_append_new(
        rows, row("net.lat.latency.p99", "size=8,transport=tcp", 41599.5, "ns", "lower"));
    json_array_append_new(
        rows, row("net.lat.latency.p99", "size=4096,transport=tcp", 90000, "ns", "lower"));
    if (with_cov)
        json_array_append_new(rows, row("step.cov", "preset=resnet50,ranks=8", 0.05, "", "lower"));
    return rows;
}

static tp_gate *load_gate(const char *text)
{
    char path[256];
    tp_test_write(dir, "gate.yaml", text, path, sizeof path);
    tp_gate *g = NULL;
    tp_error err = {0};
    int rc = tp_gate_load(path, &g, &err);
    if (rc)
        fail_msg("tp_gate_load: %d %s", rc, err.msg);
    return g;
}

static const json_t *result_of(const json_t *rep, int threshold, int nth)
{
    size_t i;
    const json_t *r;
    json_array_foreach(json_object_get(rep, "results"), i, r) {
        if (json_integer_value(json_object_get(r, "threshold")) == threshold && nth-- == 0)
            return r;
    }
    fail_msg("no result %d of threshold %d", nth, threshold);
    return NULL;
}

static void gate_example(void **state)
{
    (void)state;
    tp_gate *g = load_gate(example);
    TP_EQ_INT(tp_gate_size(g), 3);
    tp_error err = {0};

    /* busbw 8.1 GB/s under 10 GB/s: critical */
    json_t *rows = example_rows(8.1e9, true);
    json_t *rep = tp_gate_eval(g, rows, &err);
    assert_non_null(rep);
    TP_EQ_INT(json_integer_value(json_object_get(rep, "code")), TP_GATE_CRITICAL);
    TP_EQ_STR(sv(rep, "status"), "CRITICAL");
    TP_EQ_INT(json_integer_value(json_object_get(rep, "fail")), 1);
    TP_EQ_INT(json_integer_value(json_object_get(rep, "pass")), 2);
    TP_EQ_INT(json_integer_value(json_object_get(rep, "missing")), 0);
    /* allgather, 4096 not matched */
    TP_EQ_INT(json_array_size(json_object_get(rep, "results")), 3);
    const json_t *r = result_of(rep, 0, 0);
    TP_EQ_STR(sv(r, "status"), "FAIL");
    TP_EQ_STR(sv(r, "severity"), "critical");
    TP_EQ_INT(json_integer_value(json_object_get(r, "line")), 2);
    TP_EQ_STR(
        sv(r, "says"),
        "coll.busbw{op=allreduce,ranks=8,size=67108864,transport=tcp} 8.1 GB/s < 10 GB/s (min)");
    TP_NEAR(nv(r, "min"), 1e10, 1e-3);
    r = result_of(rep, 1, 0);
    TP_EQ_STR(sv(r, "status"), "PASS");
    TP_NEAR(nv(r, "max"), 50000, 1e-9); /* 50us in the row's ns */
    TP_EQ_STR(sv(r, "says"), "net.lat.latency.p99{size=8,transport=tcp} 41.6 us <= 50 us (max)");
    r = result_of(rep, 2, 0);
    TP_EQ_STR(sv(r, "says"), "step.cov{preset=resnet50,ranks=8} 0.05 <= 0.1 (max)");

    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    tp_gate_print(f, rep, false);
    fclose(f);
    TP_HAS(text, "GATE CRITICAL: 1 of 3 thresholds fails\n");
    TP_HAS(text, "FAIL     critical line 2: coll.busbw{");
    if (strstr(text, "PASS"))
        fail_msg("PASS printed without all: %s", text);
    free(text);
    json_decref(rep);
    json_decref(rows);

    /* all pass */
    rows = example_rows(12.5e9, true);
    rep = tp_gate_eval(g, rows, &err);
    TP_EQ_INT(json_integer_value(json_object_get(rep, "code")), TP_GATE_OK);
    TP_EQ_STR(sv(result_of(rep, 0, 0), "says"),
              "coll.busbw{op=allreduce,ranks=8,size=67108864,transport=tcp} 12.5 GB/s >= 10 GB/s "
              "(min)");
    json_decref(rep);
    json_decref(rows);

    /* step.cov did not run: missing counts as a critical failure */
    rows = example_rows(12.5e9, false);
    rep = tp_gate_eval(g, rows, &err);
    TP_EQ_INT(json_integer_value(json_object_get(rep, "code")), TP_GATE_CRITICAL);
    TP_EQ_INT(json_integer_value(json_object_get(rep, "missing")), 1);
    r = result_of(rep, 2, 0);
    TP_EQ_STR(sv(r, "status"), "MISSING");
    TP_HAS(sv(r, "says"), "step.cov: no row matches (no step.cov in the documents");
    TP_HAS(sv(r, "says"), "a missing metric fails the gate");
    json_decref(rep);
    json_decref(rows);

    /* labels match, metric does, no row with these labels */
    rows = json_array();
    json_array_append_new(rows, row("coll.busbw", "op=allgather,size=8", 1e9, "B/s", "higher"));
    rep = tp_gate_eval(g, rows, &err);
    TP_HAS(sv(result_of(rep, 0, 0), "says"),
           "coll.busbw{op=allreduce,size=67108864}: no row matches (1 row of coll.busbw, none with "
           "these labels)");
    TP_EQ_INT(json_integer_value(json_object_get(rep, "missing")), 3);
    json_decref(rep);
    json_decref(rows);
    tp_gate_free(g);
}

static void gate_warning_units_hosts(void **state)
{
    (void)state;
    tp_gate *g = load_gate("thresholds:\n"
                           "  - metric: plan.step\n"
                           "    max: 2ms\n"
                           "    severity: warning\n"
                           "  - metric: coll.busbw\n"
                           "    labels: {size: 64M, transport: \"tc*\"}\n"
                           "    min: 80Gb/s\n"
                           "    max: 100GB/s\n"
                           "    severity: warning\n"
                           "  - metric: step.cov\n"
                           "    max: 10%\n");
    tp_error err = {0};
    json_t *rows = json_array();
    json_t *r1 = row("plan.step", "candidate=a,gpus=8", 0.0015, "s", "lower");
    json_t *r2 = row("plan.step", "candidate=b,gpus=8", 0.003, "s", "lower");
    json_object_set_new(r2, "host", json_string("node3"));
    json_array_append_new(rows, r1);
    json_array_append_new(rows, r2);
    json_array_append_new(
        rows, row("coll.busbw", "op=allreduce,size=67108864,transport=tcp", 11e9, "B/s", "higher"));
    json_array_append_new(
        rows, row("coll.busbw", "op=allreduce,size=67108864,transport=ofi", 1e9, "B/s", "higher"));
    json_array_append_new(rows, row("step.cov", "preset=x,ranks=2", 0.125, "", "lower"));
    json_t *rep = tp_gate_eval(g, rows, &err);
    /* only warnings fail */
    TP_EQ_INT(json_integer_value(json_object_get(rep, "code")), TP_GATE_CRITICAL);
    TP_EQ_STR(sv(result_of(rep, 0, 0), "status"), "PASS");
    const json_t *r = result_of(rep, 0, 1);
    TP_EQ_STR(sv(r, "status"), "FAIL");
    TP_EQ_STR(sv(r, "says"), "plan.step{candidate=b,gpus=8} on node3 3 ms > 2 ms (max)");
    TP_EQ_STR(sv(r, "host"), "node3");
    r = result_of(rep, 1, 0); /* 64M = 67108864, tc* = tcp; 80Gb/s = 10 GB/s */
    TP_EQ_STR(sv(r, "status"), "PASS");
    TP_EQ_STR(sv(r, "says"), "coll.busbw{op=allreduce,size=67108864,transport=tcp} 10 GB/s <= 11 "
                             "GB/s <= 100 GB/s");
    TP_EQ_INT(json_array_size(json_object_get(rep, "results")), 4); /* the ofi row is not matched */
    r = result_of(rep, 2, 0);
    TP_EQ_STR(sv(r, "status"), "FAIL");
    TP_EQ_STR(sv(r, "says"), "step.cov{preset=x,ranks=2} 0.125 > 0.1 (max)");
    json_decref(rep);
    /* the critical one fixed: WARNING */
    json_real_set(json_object_get(json_array_get(rows, 4), "value"), 0.09);
    rep = tp_gate_eval(g, rows, &err);
    TP_EQ_INT(json_integer_value(json_object_get(rep, "code")), TP_GATE_WARNING);
    TP_EQ_STR(sv(rep, "status"), "WARNING");
    json_decref(rep);
    json_decref(rows);
    tp_gate_free(g);

    /* a duration against a bandwidth: the file does not fit the data */
    g = load_gate("thresholds:\n  - {metric: coll.busbw, max: 50us}\n  - {metric: x.y, min: 1}\n");
    rows = json_array();
    json_array_append_new(rows, row("coll.busbw", "op=allreduce", 1e10, "B/s", "higher"));
    rep = tp_gate_eval(g, rows, &err);
    TP_EQ_INT(json_integer_value(json_object_get(rep, "code")), TP_GATE_UNKNOWN);
    TP_EQ_INT(json_integer_value(json_object_get(rep, "unusable")), 1);
    r = result_of(rep, 0, 0);
    TP_EQ_STR(sv(r, "status"), "UNUSABLE");
    TP_EQ_STR(sv(r, "says"),
              "coll.busbw{op=allreduce}: the limit 50us is a duration, which does not "
              "compare with a value in 'B/s'");
    json_decref(rep);
    json_decref(rows);
    tp_gate_free(g);

    /* digits enough to tell the value from the limit */
    char a[64], b[64];
    TP_EQ_STR(tp_gate_fmt(9.999e9, "B/s", 3, a, sizeof a), "10 GB/s");
    TP_EQ_STR(tp_gate_fmt(9.999e9, "B/s", 4, b, sizeof b), "9.999 GB/s");
    TP_EQ_STR(tp_gate_fmt(1.5e-3, "s", 3, a, sizeof a), "1.5 ms");
    TP_EQ_STR(tp_gate_fmt(12, "$", 3, a, sizeof a), "12 $");
}

static void gate_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"thresholds:\n  - metric: a.b\n    maxx: 3\n",
         ":3:5: thresholds[0].maxx: unknown key (did you mean max? known: metric, labels, min, "
         "max, severity)"},
        {"thresholds:\n  - max: 3\n", ":2:5: thresholds[0].metric: required"},
        {"thresholds:\n  - metric: a.b\n    max: 10 parsecs\n",
         ":3:10: thresholds[0].max: cannot parse '10 parsecs' as a limit"},
        {"thresholds:\n  - metric: a.b\n    min: 2ms\n    max: 1ms\n",
         ":3:10: thresholds[0].min: min 2ms is above max 1ms"},
        {"thresholds:\n  - metric: a.b\n    severity: warning\n",
         ":2:5: thresholds[0].max: required (or min"},
        {"thresholds:\n  - metric: a.b\n    max: 1\n    labels: [x, y]\n",
         ":4:13: thresholds[0].labels: expected a mapping of label names"},
        {"thresholds:\n  - metric: a.b\n    max: 1\n    labels: {op: [x]}\n",
         ":4:18: thresholds[0].labels.op: expected a label value"},
        {"thresholds:\n  - metric: a.b\n    max: 1\n    severity: fatal\n",
         ":4:15: thresholds[0].severity: unknown value 'fatal' (use one of: critical, warning)"},
        {"thresholds: []\n", ":1:1: thresholds: no thresholds"},
        {"# nothing\n", ":1:1: empty document"},
        {"- metric: a\n", ":1:1: top level: expected a mapping (thresholds:)"},
        {"thresholds:\n  - metric: Coll.BusBW\n    max: 1\n",
         ":2:13: thresholds[0].metric: 'Coll.BusBW' is not a metric name"},
        {"thresholds:\n  - metric: a.b\n    max: 1\n  - metric: a.c\n    min: 1\n    min: 2\n",
         ":6:5: thresholds[1].min: duplicate key (first at line 5, column 5)"},
        {"limits:\n  - metric: a.b\n", ":1:1: limits: unknown key"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[256], want[512];
        tp_test_write(dir, "bad.yaml", cases[i].text, path, sizeof path);
        tp_gate *g = (tp_gate *)1;
        tp_error err = {0};
        int rc = tp_gate_load(path, &g, &err);
        if (rc != TP_EUSAGE)
            fail_msg("case %zu: rc %d, expected TP_EUSAGE (%s)", i, rc, err.msg);
        assert_null(g);
        snprintf(want, sizeof want, "%s%s", path, cases[i].want);
        if (strncmp(err.msg, want, strlen(want)) != 0)
            fail_msg("case %zu: \"%s\", expected it to start \"%s\"", i, err.msg, want);
    }
    tp_gate *g = NULL;
    tp_error err = {0};
    TP_EQ_INT(tp_gate_load("/nonexistent/t.yaml", &g, &err), TP_EUSAGE);
    TP_HAS(err.msg, "/nonexistent/t.yaml");
}

/* ================= diff: the tests ================= */

static void diff_mann_whitney_exact(void **state)
{
    (void)state;
    tp_error err = {0};
    struct tp_diff_stat st;
    /* A = 1..5, B = 6..10: U = 0; with continuity 12 / sqrt(25 * 11 / 12) */
    tp_hist *a = tp_hist_new(), *b = tp_hist_new();
    for (int i = 1; i <= 5; i++) {
        tp_hist_record(a, (uint64_t)i);
        tp_hist_record(b, (uint64_t)i + 5);
    }
    assert_int_equal(tp_diff_mann_whitney(a, b, &st, &err), 0);
    TP_NEAR(st.p, 0.012185780355344818, 1e-12);
    TP_NEAR(st.p_b_gt, 1, 0);
    if (!(st.stat > 0))
        fail_msg("stat %g: B is above A, expected > 0", st.stat);
    tp_hist_free(a);
    tp_hist_free(b);

    /* random data with heavy ties, small values (a bucket each) and large
     * (shared buckets): against mid-ranks counted one by one over the
     * bucket indexes */
    for (uint64_t seed = 1; seed <= 5; seed++) {
        uint64_t s = seed;
        a = tp_hist_new();
        b = tp_hist_new();
        enum { NA = 300, NB = 200 };
        unsigned idx[NA + NB];
        for (int i = 0; i < NA + NB; i++) {
            uint64_t v = seed % 2 ? (uint64_t)(uniform(&s) * 40) + (i >= NA ? 3 : 0)
                                  : (uint64_t)(5000 * exp(normal(&s) * 0.3)) + (i >= NA ? 200 : 0);
            tp_hist_record(i < NA ? a : b, v);
            idx[i] = tp_hist_index(v);
        }
        double ra = 0, tie = 0;
        for (int i = 0; i < NA + NB; i++) {
            double less = 0, same = 0;
            for (int j = 0; j < NA + NB; j++) {
                less += idx[j] < idx[i];
                same += idx[j] == idx[i];
            }
            if (i < NA)
                ra += less + (same + 1) / 2;
        }
        for (unsigned k = 0; k < TP_HIST_BUCKETS; k++) {
            double t = (double)(a->counts[k] + b->counts[k]);
            tie += t * t * t - t;
        }
        double n = NA + NB, ua = ra - NA * (NA + 1) / 2.0, mu = NA * NB / 2.0;
        double var = NA * NB / 12.0 * ((n + 1) - tie / (n * (n - 1)));
        double z = fmax(fabs(ua - mu) - 0.5, 0) / sqrt(var);
        assert_int_equal(tp_diff_mann_whitney(a, b, &st, &err), 0);
        TP_NEAR(st.p, erfc(z / sqrt(2)), 1e-12);
        TP_NEAR(fabs(st.stat), z, 1e-9);
        TP_NEAR(st.p_b_gt, 1 - ua / (NA * NB), 1e-12);
        tp_hist_free(a);
        tp_hist_free(b);
    }

    /* one bucket holds everything: no evidence */
    a = tp_hist_new();
    b = tp_hist_new();
    tp_hist_record_n(a, 7, 100);
    tp_hist_record_n(b, 7, 50);
    assert_int_equal(tp_diff_mann_whitney(a, b, &st, &err), 0);
    TP_NEAR(st.p, 1, 0);
    tp_hist_reset(b);
    TP_EQ_INT(tp_diff_mann_whitney(a, b, &st, &err), TP_EUSAGE);
    tp_hist_free(a);
    tp_hist_free(b);
}

static void diff_welch_closed_forms(void **state)
{
    (void)state;
    tp_error err = {0};
    struct tp_diff_stat st;
    /* n = 2 a side, equal stdevs: df = 2, p = 1 - |t| / sqrt(t^2 + 2) */
    assert_int_equal(tp_diff_welch(2, 10, 1, 2, 13, 1, &st, &err), 0);
    TP_NEAR(st.df, 2, 1e-12);
    TP_NEAR(st.stat, 3, 1e-12);
    TP_NEAR(st.p, 0.09546596626670911, 1e-12);
    /* one side constant: df = 1 (Cauchy), p = 1 - 2/pi atan(|t|) */
    assert_int_equal(tp_diff_welch(2, 0, 1, 2, 2, 0, &st, &err), 0);
    TP_NEAR(st.df, 1, 1e-12);
    TP_NEAR(st.p, 0.21634689593878542, 1e-12);
    /* large samples: the normal distribution */
    assert_int_equal(tp_diff_welch(1e6, 100, 10, 1e6, 100.05, 10, &st, &err), 0);
    TP_NEAR(st.p, erfc(fabs(st.stat) / sqrt(2)), 1e-6);
    /* tiny p stays accurate (no 1 - (1 - p)) */
    assert_int_equal(tp_diff_welch(1000, 100, 10, 1000, 110, 10, &st, &err), 0);
    if (!(st.p > 0 && st.p < 1e-80))
        fail_msg("p = %g for t = %g, expected between 0 and 1e-80", st.p, st.stat);
    /* degenerate */
    assert_int_equal(tp_diff_welch(5, 1, 0, 5, 1, 0, &st, &err), 0);
    TP_NEAR(st.p, 1, 0);
    assert_int_equal(tp_diff_welch(5, 1, 0, 5, 2, 0, &st, &err), 0);
    TP_NEAR(st.p, 0, 0);
    TP_EQ_INT(tp_diff_welch(1, 1, 0, 5, 2, 1, &st, &err), TP_EUSAGE);
    TP_EQ_INT(tp_diff_welch(5, NAN, 0, 5, 2, 1, &st, &err), TP_EUSAGE);
}

/* ================= diff: documents ================= */

static json_t *diff_of(json_t *a, json_t *b, const struct tp_diff_opts *o)
{
    tp_error err = {0};
    json_t *d = tp_diff_docs(a, b, o, &err);
    if (!d)
        fail_msg("tp_diff_docs: %s", err.msg);
    json_decref(a);
    json_decref(b);
    return d;
}

static const json_t *diff_row(const json_t *d, const char *key)
{
    return find_row(json_object_get(d, "rows"), key);
}

#define P50 "net.lat.latency.p50{size=8,transport=tcp}"
#define P99 "net.lat.latency.p99{size=8,transport=tcp}"
#define MEAN "net.lat.latency.mean{size=8,transport=tcp}"
#define MAX "net.lat.latency.max{size=8,transport=tcp}"

static void diff_planted_regression(void **state)
{
    (void)state;
    json_t *d = diff_of(lat_doc(1, 5000, 1.0, "n1"), lat_doc(2, 5000, 1.2, "n1"), NULL);
    const json_t *r = diff_row(d, P99);
    TP_EQ_STR(sv(r, "verdict"), "regression");
    TP_EQ_STR(sv(r, "test"), "mann-whitney");
    if (!(nv(r, "p") < 1e-12))
        fail_msg("p = %g, expected < 1e-12", nv(r, "p"));
    TP_NEAR(nv(r, "relative"), 0.2, 0.06);
    TP_NEAR(nv(r, "n_a"), 5000, 0);
    if (!(nv(r, "p_b_gt") > 0.65))
        fail_msg("P(B > A) = %g for a +20 %% shift", nv(r, "p_b_gt"));
    char want[128];
    snprintf(want, sizeof want, "%s +", P99);
    TP_HAS(sv(r, "says"), want);
    TP_HAS(sv(r, "says"), " us → ");
    TP_HAS(sv(r, "says"), "), p ");
    r = diff_row(d, P50);
    TP_EQ_STR(sv(r, "verdict"), "regression");
    TP_NEAR(nv(r, "relative"), 0.2, 0.02);
    r = diff_row(d, MEAN);
    TP_EQ_STR(sv(r, "test"), "welch");
    TP_EQ_STR(sv(r, "verdict"), "regression");
    TP_HAS(sv(r, "says"), "(Welch, means)");
    r = diff_row(d, MAX);
    TP_EQ_STR(sv(r, "verdict"), "no samples");
    TP_HAS(sv(r, "why"), "the maximum is one sample");
    if (json_integer_value(json_object_get(d, "regressions")) < 4)
        fail_msg("%lld regressions, expected mean, p50, p99, p99_9",
                 (long long)json_integer_value(json_object_get(d, "regressions")));
    TP_EQ_INT(json_integer_value(json_object_get(d, "improvements")), 0);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    tp_diff_print(f, d, false);
    fclose(f);
    TP_HAS(text, "REGRESSION   net.lat.latency.p99{size=8,transport=tcp} +");
    free(text);
    json_decref(d);
}

static void diff_noise_not_flagged(void **state)
{
    (void)state;
    for (uint64_t seed = 10; seed < 26; seed += 2) {
        json_t *d =
            diff_of(lat_doc(seed, 5000, 1.0, "n1"), lat_doc(seed + 1, 5000, 1.0, "n1"), NULL);
        size_t i;
        const json_t *r;
        json_array_foreach(json_object_get(d, "rows"), i, r) {
            const char *v = sv(r, "verdict");
            if (strcmp(v, "regression") == 0 || strcmp(v, "improvement") == 0)
                fail_msg("seed %llu: %s: %s (%s)", (unsigned long long)seed, v, sv(r, "says"),
                         sv(r, "why"));
        }
        json_decref(d);
    }
}

static void diff_small_shift_and_improvement(void **state)
{
    (void)state;
    /* +1 % on 50000 samples: the test sees it, the minimum effect keeps it out */
    json_t *d = diff_of(lat_doc(3, 50000, 1.0, "n1"), lat_doc(4, 50000, 1.01, "n1"), NULL);
    const json_t *r = diff_row(d, P50);
    if (!(nv(r, "p") < 0.01))
        fail_msg("p = %g: 1 %% on 50000 samples should be significant", nv(r, "p"));
    TP_EQ_STR(sv(r, "verdict"), "unchanged");
    TP_HAS(sv(r, "why"), "below the minimum effect of 2 %");
    TP_EQ_INT(json_integer_value(json_object_get(d, "regressions")), 0);
    json_decref(d);

    /* the same with no minimum effect: now it is a regression */
    struct tp_diff_opts o = {.min_effect = -1};
    d = diff_of(lat_doc(3, 50000, 1.0, "n1"), lat_doc(4, 50000, 1.01, "n1"), &o);
    TP_EQ_STR(sv(diff_row(d, P50), "verdict"), "regression");
    json_decref(d);

    /* 20 % faster: an improvement, never a regression */
    d = diff_of(lat_doc(5, 5000, 1.0, "n1"), lat_doc(6, 5000, 0.8, "n1"), NULL);
    TP_EQ_STR(sv(diff_row(d, P99), "verdict"), "improvement");
    TP_EQ_STR(sv(diff_row(d, P50), "verdict"), "improvement");
    TP_EQ_INT(json_integer_value(json_object_get(d, "regressions")), 0);
    TP_HAS(sv(diff_row(d, P50), "says"), " -");
    json_decref(d);
}

static void diff_rows_without_histograms(void **state)
{
    (void)state;
    json_t *a = json_array(), *b = json_array();
    json_t *r;
    /* stats only: Welch on the means, for the mean and the p50 */
    r = row("coll.time.mean", "op=allreduce,size=8", 100, "ns", "lower");
    with_stats(r, 1000, 100, 10);
    json_array_append_new(a, r);
    r = row("coll.time.mean", "op=allreduce,size=8", 110, "ns", "lower");
    with_stats(r, 1000, 110, 10);
    json_array_append_new(b, r);
    r = row("coll.time.p50", "op=allreduce,size=8", 95, "ns", "lower");
    with_stats(r, 1000, 100, 10);
    json_array_append_new(a, r);
    r = row("coll.time.p50", "op=allreduce,size=8", 96, "ns", "lower");
    with_stats(r, 1000, 110, 10);
    json_array_append_new(b, r);
    /* one number a side */
    json_array_append_new(a, row("coll.busbw", "op=allreduce,size=8", 2e9, "B/s", "higher"));
    json_array_append_new(b, row("coll.busbw", "op=allreduce,size=8", 1e9, "B/s", "higher"));
    /* no better: "changed" */
    r = row("x.p50", "", 10, "", NULL);
    with_stats(r, 100, 10, 1);
    json_array_append_new(a, r);
    r = row("x.p50", "", 20, "", NULL);
    with_stats(r, 100, 20, 1);
    json_array_append_new(b, r);
    /* units differ; one row on each side only */
    json_array_append_new(a, row("y", "", 1, "s", "lower"));
    json_array_append_new(b, row("y", "", 1, "ns", "lower"));
    json_array_append_new(a, row("only.a", "", 1, "", "lower"));
    json_array_append_new(b, row("only.b", "", 1, "", "lower"));
    /* the same key on two hosts: two rows */
    r = row("h", "", 1, "", "lower");
    json_object_set_new(r, "host", json_string("n1"));
    json_array_append_new(a, r);
    r = row("h", "", 1, "", "lower");
    json_object_set_new(r, "host", json_string("n2"));
    json_array_append_new(a, r);
    r = row("h", "", 1, "", "lower");
    json_object_set_new(r, "host", json_string("n2"));
    json_array_append_new(b, r);

    tp_error err = {0};
    json_t *d = tp_diff_rows(a, b, NULL, &err);
    assert_non_null(d);
    const json_t *x = diff_row(d, "coll.time.mean{op=allreduce,size=8}");
    TP_EQ_STR(sv(x, "test"), "welch");
    TP_EQ_STR(sv(x, "verdict"), "regression");
    TP_EQ_STR(sv(x, "says"), "coll.time.mean{op=allreduce,size=8} +10.0 % (100 ns → 110 ns), p = "
                             "5e-99 (Welch, means)");
    x = diff_row(d, "coll.time.p50{op=allreduce,size=8}");
    TP_EQ_STR(sv(x, "test"), "welch");
    TP_EQ_STR(sv(x, "verdict"), "unchanged"); /* +1 %: under the minimum effect */
    x = diff_row(d, "coll.busbw{op=allreduce,size=8}");
    TP_EQ_STR(sv(x, "verdict"), "no samples");
    TP_EQ_STR(sv(x, "says"),
              "coll.busbw{op=allreduce,size=8} -50.0 % (2 GB/s → 1 GB/s), not tested "
              "(no samples: one number a side)");
    TP_EQ_STR(sv(diff_row(d, "x.p50"), "verdict"), "changed");
    TP_EQ_STR(sv(diff_row(d, "y"), "verdict"), "incomparable");
    TP_EQ_INT(json_integer_value(json_object_get(d, "regressions")), 1);
    TP_EQ_INT(json_integer_value(json_object_get(d, "compared")), 6);
    TP_EQ_INT(json_array_size(json_object_get(d, "only_a")), 2); /* only.a, h@n1 */
    TP_EQ_STR(json_string_value(json_array_get(json_object_get(d, "only_a"), 1)), "h@n1");
    TP_EQ_STR(json_string_value(json_array_get(json_object_get(d, "only_b"), 0)), "only.b");
    TP_EQ_STR(sv(diff_row(d, "h"), "host"), "n2");
    json_decref(d);
    assert_null(tp_diff_rows(a, json_null(), NULL, &err));
    TP_EQ_INT(err.code, TP_EUSAGE);
    json_decref(a);
    json_decref(b);
}

/* ================= fleet ================= */

static json_t *fleet_judge(json_t *data)
{
    tp_error err = {0};
    json_t *j = tp_fleet_judge(data, NULL, &err);
    if (!j)
        fail_msg("tp_fleet_judge: %s", err.msg);
    return j;
}

static void add_line(json_t *data, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_line(json_t *data, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    tp_error err = {0};
    int rc = tp_fleet_add_line(data, line, "t.jsonl", 1, &err);
    if (rc)
        fail_msg("%s: %s", line, err.msg);
}

static void fleet_host_outliers(void **state)
{
    (void)state;
    json_t *data = tp_fleet_new();
    uint64_t s = 42;
    for (int h = 0; h < 16; h++) {
        /* latency: node07 twice as slow; bandwidth: node11 faster (better) */
        add_line(data,
                 "{\"host\": \"node%02d\", \"metric\": \"net.lat.latency.p99{size=8}\", "
                 "\"value\": %.1f, \"unit\": \"ns\", \"better\": \"lower\"}",
                 h, (h == 7 ? 80000 : 40000) * (1 + 0.04 * (uniform(&s) - 0.5)));
        add_line(data,
                 "{\"host\": \"node%02d\", \"metric\": \"net.bw{size=1M}\", \"value\": %.1f, "
                 "\"unit\": \"B/s\", \"better\": \"higher\"}",
                 h, (h == 11 ? 20e9 : 10e9) * (1 + 0.04 * (uniform(&s) - 0.5)));
        /* failed checks: 0 on all but node03, which has 2: MAD 0 */
        add_line(data, "{\"host\": \"node%02d\", \"metric\": \"check.fail\", \"value\": %d}", h,
                 h == 3 ? 2 : 0);
        /* no direction given: none known */
        add_line(data, "{\"host\": \"node%02d\", \"metric\": \"z\", \"value\": %d}", h,
                 h == 5 ? 100 : 10 + h % 3);
    }
    json_t *j = fleet_judge(data);
    TP_EQ_INT(json_integer_value(json_object_get(j, "outliers")), 4);
    TP_EQ_INT(json_integer_value(json_object_get(j, "worse")), 1);
    const json_t *m = json_array_get(json_object_get(j, "metrics"), 0);
    TP_EQ_STR(sv(m, "key"), "net.lat.latency.p99{size=8}");
    TP_EQ_STR(sv(m, "rule"), "robust z");
    const json_t *o = json_array_get(json_object_get(m, "outliers"), 0);
    TP_EQ_STR(sv(o, "host"), "node07");
    TP_EQ_STR(sv(o, "direction"), "high");
    assert_true(json_is_true(json_object_get(o, "worse")));
    if (!(nv(o, "z") > 3.5))
        fail_msg("z = %g", nv(o, "z"));
    TP_HAS(sv(o, "says"), "net.lat.latency.p99{size=8} on node07: ");
    TP_HAS(sv(o, "says"), " us over 16 hosts (robust z = +");
    TP_HAS(sv(o, "says"), "high: worse (lower is better)");
    o = json_array_get(
        json_object_get(json_array_get(json_object_get(j, "metrics"), 1), "outliers"), 0);
    TP_EQ_STR(sv(o, "host"), "node11");
    assert_true(json_is_false(json_object_get(o, "worse")));
    TP_HAS(sv(o, "says"), "high: better (higher is better)");
    m = json_array_get(json_object_get(j, "metrics"), 2);
    TP_EQ_STR(sv(m, "key"), "check.fail");
    TP_EQ_STR(sv(m, "rule"), "relative");
    TP_HAS(sv(m, "note"), "MAD is 0");
    o = json_array_get(json_object_get(m, "outliers"), 0);
    TP_EQ_STR(sv(o, "host"), "node03");
    assert_true(json_is_null(json_object_get(o, "z")));
    assert_true(json_is_null(json_object_get(o, "worse"))); /* a plain line: no direction */
    m = json_array_get(json_object_get(j, "metrics"), 3);
    o = json_array_get(json_object_get(m, "outliers"), 0);
    TP_EQ_STR(sv(o, "host"), "node05");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    tp_fleet_print(f, j);
    fclose(f);
    TP_HAS(text, "FLEET: 4 outliers (1 the worse way), 0 slow nodes, 0 slow links\n");
    TP_HAS(text, "WORSE    net.lat.latency.p99{size=8} on node07");
    TP_HAS(text, "note: check.fail: MAD is 0");
    free(text);
    json_decref(j);
    json_decref(data);

    /* noise only, several seeds: nothing; two hosts: not judged */
    for (uint64_t seed = 1; seed <= 5; seed++) {
        data = tp_fleet_new();
        s = seed;
        for (int h = 0; h < 16; h++)
            add_line(data,
                     "{\"host\": \"n%d\", \"metric\": \"m\", \"value\": %.3f, \"better\": "
                     "\"lower\"}",
                     h, 100 * (1 + 0.1 * (uniform(&s) - 0.5)));
        add_line(data, "{\"host\": \"n1\", \"metric\": \"two\", \"value\": 1}");
        add_line(data, "{\"host\": \"n2\", \"metric\": \"two\", \"value\": 100}");
        j = fleet_judge(data);
        TP_EQ_INT(json_integer_value(json_object_get(j, "outliers")), 0);
        TP_EQ_INT(json_integer_value(json_object_get(j, "too_few_hosts")), 1);
        json_decref(j);
        json_decref(data);
    }
}

static void fleet_lines_and_docs(void **state)
{
    (void)state;
    json_t *data = tp_fleet_new();
    tp_error err = {0};
    /* a whole result document per line, its host from provenance; {host, doc}; {host, rows} */
    for (int h = 0; h < 5; h++) {
        char host[16];
        snprintf(host, sizeof host, "gpu%d", h);
        json_t *doc = lat_doc((uint64_t)h + 100, 400, h == 2 ? 3.0 : 1.0, host);
        json_t *line =
            h == 4 ? json_pack("{s:s, s:O}", "host", "gpu4", "doc", doc) : json_incref(doc);
        char *text = json_dumps(line, JSON_COMPACT);
        assert_int_equal(tp_fleet_add_line(data, text, "f.jsonl", (size_t)h + 1, &err), 0);
        free(text);
        json_decref(line);
        json_decref(doc);
    }
    add_line(data, "{\"host\": \"gpu5\", \"rows\": [{\"key\": \"r\", \"metric\": \"r\", "
                   "\"value\": 1}]}");
    add_line(data, "   ");
    json_t *j = fleet_judge(data);
    /* gpu2 is three times slower: its p50, p99, p99_9, mean, max are outliers */
    const json_t *m;
    size_t i, found = 0;
    json_array_foreach(json_object_get(j, "metrics"), i, m) {
        const json_t *o = json_array_get(json_object_get(m, "outliers"), 0);
        found += strcmp(sv(o, "host"), "gpu2") == 0 && json_is_true(json_object_get(o, "worse"));
        if (strcmp(sv(m, "key"), P50) == 0)
            TP_EQ_STR(sv(m, "unit"), "ns");
    }
    if (found < 3)
        fail_msg("gpu2 worse in %zu metrics, expected p50, p99, mean at least", found);
    json_decref(j);

    /* errors name the line */
    static const struct {
        const char *line, *want;
    } bad[] = {
        {"{\"host\": \"a\"}", "f.jsonl:7: not a fleet line"},
        {"{\"host\": \"a\", \"metric\": \"m\"", "f.jsonl:7:"},
        {"[1, 2]", "f.jsonl:7: not a JSON object"},
        {"{\"a\": \"x\", \"metric\": \"m\", \"value\": 1}",
         "f.jsonl:7: a pair needs \"a\" and \"b\""},
        {"{\"host\": \"a\", \"metric\": \"m\", \"value\": \"1\"}",
         "f.jsonl:7: \"value\" is not a finite number"},
        {"{\"host\": \"a\", \"metric\": \"m\", \"value\": 1, \"better\": \"up\"}",
         "f.jsonl:7: \"better\" is not"},
        {"{\"schema\": \"trainpath.result/1\", \"command\": \"net lat\"}",
         "f.jsonl:7: a result document without provenance.host"},
        {"{\"host\": \"a\", \"rows\": [{\"key\": \"k\"}]}",
         "f.jsonl:7: rows[0] is not a metric row"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        TP_EQ_INT(tp_fleet_add_line(data, bad[k].line, "f.jsonl", 7, &err), TP_EUSAGE);
        if (strncmp(err.msg, bad[k].want, strlen(bad[k].want)) != 0)
            fail_msg("line %zu: \"%s\", expected it to start \"%s\"", k, err.msg, bad[k].want);
    }
    json_decref(data);

    /* from a file */
    char path[256];
    tp_test_write(dir, "fleet.jsonl",
                  "{\"host\": \"a\", \"metric\": \"m\", \"value\": 1}\n"
                  "\n"
                  "{\"a\": \"a\", \"b\": \"b\", \"metric\": \"net.bw\", \"value\": 5}\n"
                  "{\"host\": \"b\", \"metric\": \"m\", \"value\": 2}\n",
                  path, sizeof path);
    data = tp_fleet_new();
    assert_int_equal(tp_fleet_load(data, path, &err), 0);
    TP_EQ_INT(json_array_size(json_object_get(data, "rows")), 2);
    TP_EQ_INT(json_array_size(json_object_get(data, "pairs")), 1);
    TP_EQ_STR(sv(json_array_get(json_object_get(data, "pairs"), 0), "unit"), "");
    json_decref(data);
    tp_test_write(dir, "bad.jsonl", "{\"host\": \"a\", \"metric\": \"m\", \"value\": 1}\n\n{}\n",
                  path, sizeof path);
    data = tp_fleet_new();
    TP_EQ_INT(tp_fleet_load(data, path, &err), TP_EUSAGE);
    char want[300];
    snprintf(want, sizeof want, "%s:3: not a fleet line", path);
    TP_HAS(err.msg, want);
    json_decref(data);
    data = tp_fleet_new();
    TP_EQ_INT(tp_fleet_load(data, "/nonexistent/f.jsonl", &err), TP_EUSAGE);
    json_decref(data);
}

/* A full mesh of 16 nodes: bandwidth about 10 GB/s +- 1 % (uniform);
 * pairs touching slow_node at half that; the pair bad_a - bad_b at 3 GB/s. */
static json_t *mesh(uint64_t seed, int slow_node, int bad_a, int bad_b, bool better)
{
    json_t *data = tp_fleet_new();
    uint64_t s = seed;
    for (int a = 0; a < 16; a++) {
        for (int b = a + 1; b < 16; b++) {
            double v = 10e9 * (1 + 0.02 * (uniform(&s) - 0.5));
            if (a == slow_node || b == slow_node)
                v *= 0.5 + 0.1 * uniform(&s);
            if (a == bad_a && b == bad_b)
                v = 3e9;
            add_line(data,
                     "{\"a\": \"n%02d\", \"b\": \"n%02d\", \"metric\": \"net.bw\", \"value\": "
                     "%.0f, \"unit\": \"B/s\"%s}",
                     a, b, v, better ? ", \"better\": \"higher\"" : "");
        }
    }
    return data;
}

static void fleet_pairs(void **state)
{
    (void)state;
    /* a slow node, direction unknown (no "better" on the lines) */
    json_t *data = mesh(1, 5, -1, -1, false);
    json_t *j = fleet_judge(data);
    TP_EQ_INT(json_integer_value(json_object_get(j, "slow_nodes")), 1);
    TP_EQ_INT(json_integer_value(json_object_get(j, "slow_links")), 0);
    const json_t *p = json_array_get(json_object_get(j, "pairs"), 0);
    TP_EQ_STR(sv(p, "metric"), "net.bw");
    TP_HAS(sv(p, "direction"), "not known");
    const json_t *n = json_array_get(json_object_get(p, "slow_nodes"), 0);
    TP_EQ_STR(sv(n, "node"), "n05");
    TP_EQ_INT(json_integer_value(json_object_get(n, "slow")), 15);
    TP_EQ_INT(json_integer_value(json_object_get(n, "of")), 15);
    TP_HAS(sv(n, "says"),
           "net.bw: node n05 is slow: 15 of its 15 pairs are outliers the worse way");
    json_decref(j);
    json_decref(data);

    /* a slow node found with the direction from the rows of the same metric */
    data = mesh(2, 12, -1, -1, false);
    add_line(data, "{\"host\": \"n00\", \"metric\": \"net.bw\", \"value\": 1, \"better\": "
                   "\"higher\"}");
    j = fleet_judge(data);
    p = json_array_get(json_object_get(j, "pairs"), 0);
    TP_EQ_STR(sv(p, "better"), "higher");
    TP_EQ_STR(sv(json_array_get(json_object_get(p, "slow_nodes"), 0), "node"), "n12");
    json_decref(j);
    json_decref(data);

    /* a single bad link: named as the link, not as a node */
    data = mesh(3, -1, 2, 9, true);
    j = fleet_judge(data);
    TP_EQ_INT(json_integer_value(json_object_get(j, "slow_nodes")), 0);
    TP_EQ_INT(json_integer_value(json_object_get(j, "slow_links")), 1);
    p = json_array_get(json_object_get(j, "pairs"), 0);
    const json_t *l = json_array_get(json_object_get(p, "slow_links"), 0);
    TP_EQ_STR(sv(l, "a"), "n02");
    TP_EQ_STR(sv(l, "b"), "n09");
    TP_HAS(sv(l, "says"), "net.bw: link n02 - n09 is slow: 3 GB/s against a median of 10 GB/s over "
                          "120 pairs");
    TP_HAS(sv(l, "says"), "both ends are otherwise normal");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    tp_fleet_print(f, j);
    fclose(f);
    TP_HAS(text, "LINK     net.bw: link n02 - n09");
    free(text);
    json_decref(j);
    json_decref(data);

    /* a slow node and a bad link elsewhere: both, each as what it is */
    data = mesh(4, 14, 0, 1, true);
    j = fleet_judge(data);
    TP_EQ_INT(json_integer_value(json_object_get(j, "slow_nodes")), 1);
    TP_EQ_INT(json_integer_value(json_object_get(j, "slow_links")), 1);
    json_decref(j);
    json_decref(data);

    /* uniform noise: nothing, whatever the seed */
    for (uint64_t seed = 10; seed < 16; seed++) {
        data = mesh(seed, -1, -1, -1, seed % 2);
        j = fleet_judge(data);
        TP_EQ_INT(json_integer_value(json_object_get(j, "slow_nodes")), 0);
        TP_EQ_INT(json_integer_value(json_object_get(j, "slow_links")), 0);
        TP_EQ_INT(json_array_size(json_object_get(j, "pairs")), 0);
        json_decref(j);
        json_decref(data);
    }

    /* a tight fleet (values 1000 +- 1) and a link 3 % low: many MADs off
     * but not a defect; 30 % low is (the floor: 20 %) */
    for (int drop = 3; drop <= 30; drop += 27) {
        data = tp_fleet_new();
        for (int a = 0; a < 6; a++)
            for (int b = a + 1; b < 6; b++)
                add_line(data, "{\"a\": \"n%d\", \"b\": \"n%d\", \"metric\": \"net.bw\", "
                               "\"value\": %d, \"better\": \"higher\"}",
                         a, b, a == 1 && b == 4 ? 1000 - 10 * drop : 999 + (a + b) % 3);
        j = fleet_judge(data);
        TP_EQ_INT(json_integer_value(json_object_get(j, "slow_links")), drop == 30);
        json_decref(j);
        json_decref(data);
    }
}

/* The circle method: every pair once, no node twice in a round. */
static void fleet_rounds(void **state)
{
    (void)state;
    TP_EQ_INT(tp_fleet_rounds(1), 0);
    TP_EQ_INT(tp_fleet_partner(1, 0, 0), -1);
    for (int n = 2; n <= 17; n++) {
        int rounds = tp_fleet_rounds(n);
        TP_EQ_INT(rounds, n % 2 ? n : n - 1);
        int *met = calloc((size_t)(n * n), sizeof *met);
        for (int r = 0; r < rounds; r++) {
            int byes = 0;
            for (int i = 0; i < n; i++) {
                int p = tp_fleet_partner(n, r, i);
                if (p < 0) {
                    byes++;
                    continue;
                }
                assert_true(p != i && p < n);
                TP_EQ_INT(tp_fleet_partner(n, r, p), i); /* symmetric: one pair */
                met[i * n + p]++;
            }
            TP_EQ_INT(byes, n % 2); /* an odd count: one node sits out */
        }
        for (int i = 0; i < n; i++)
            for (int k = 0; k < n; k++)
                TP_EQ_INT(met[i * n + k], i != k); /* every pair exactly once */
        free(met);
        TP_EQ_INT(tp_fleet_partner(n, rounds, 0), -1);
        TP_EQ_INT(tp_fleet_partner(n, 0, n), -1);
    }
}

/* ================= Prometheus ================= */

static bool name_char(char c, bool first, bool colon)
{
    return isalpha((unsigned char)c) || c == '_' || (colon && c == ':') ||
           (!first && isdigit((unsigned char)c));
}

/* A metric or label name at *p; advances *p. */
static bool parse_name(const char **p, char *out, size_t cap, bool colon)
{
    size_t n = 0;
    if (!name_char(**p, true, colon))
        return false;
    while (name_char(**p, n == 0, colon) && n + 1 < cap)
        out[n++] = *(*p)++;
    out[n] = '\0';
    return true;
}

static bool parse_float(const char *s)
{
    if (strcmp(s, "NaN") == 0 || strcmp(s, "+Inf") == 0 || strcmp(s, "-Inf") == 0)
        return true;
    char *end;
    strtod(s, &end);
    return end != s && *end == '\0' && !strpbrk(s, "xXpP") && strcmp(s, "inf") != 0;
}

struct seen_label {
    char name[64], value[256];
};

/* Check text line by line against the text exposition format (0.0.4):
 * comments, HELP and TYPE (once per name, before its samples), samples
 * with escaped label values, each name's samples together. Fails the test
 * with the line on any violation. Returns the number of samples; the
 * label values of the sample named probe are unescaped into got. */
static int check_exposition(const char *text, const char *probe, struct seen_label *got, int *ngot)
{
    char names[64][128]; /* names whose samples have ended (another came) */
    int nnames = 0, samples = 0, lineno = 0;
    char cur[128] = "", typed[64][128];
    int ntyped = 0;
    const char *line = text;
    if (*text && text[strlen(text) - 1] != '\n')
        fail_msg("the text does not end in a newline");
    while (*line) {
        const char *eol = strchr(line, '\n');
        char buf[2048];
        size_t len = (size_t)(eol - line);
        assert_true(len < sizeof buf);
        memcpy(buf, line, len);
        buf[len] = '\0';
        line = eol + 1;
        lineno++;
        const char *p = buf;
        char name[128];
        if (!*p)
            continue;
        if (strncmp(p, "# HELP ", 7) == 0 || strncmp(p, "# TYPE ", 7) == 0) {
            bool type = p[2] == 'T';
            p += 7;
            if (!parse_name(&p, name, sizeof name, true) || *p != ' ')
                fail_msg("line %d: bad name: %s", lineno, buf);
            p++;
            if (type) {
                if (strcmp(p, "gauge") && strcmp(p, "counter") && strcmp(p, "untyped") &&
                    strcmp(p, "summary") && strcmp(p, "histogram"))
                    fail_msg("line %d: bad type: %s", lineno, buf);
                for (int i = 0; i < ntyped; i++)
                    if (strcmp(typed[i], name) == 0)
                        fail_msg("line %d: second TYPE for %s", lineno, name);
                if (strcmp(cur, name) == 0)
                    fail_msg("line %d: TYPE after samples of %s", lineno, name);
                snprintf(typed[ntyped++], sizeof typed[0], "%s", name);
            } else {
                for (; *p; p++) /* HELP: only \\ and \n escapes */
                    if (*p == '\\' && p[1] != '\\' && p[1] != 'n')
                        fail_msg("line %d: bad escape in HELP: %s", lineno, buf);
                    else if (*p == '\\')
                        p++;
            }
            continue;
        }
        if (*p == '#')
            continue;
        if (!parse_name(&p, name, sizeof name, true))
            fail_msg("line %d: no metric name: %s", lineno, buf);
        bool is_probe = probe && strcmp(name, probe) == 0;
        if (*p == '{') {
            p++;
            while (*p != '}') {
                char lname[64], value[256];
                size_t n = 0;
                if (!parse_name(&p, lname, sizeof lname, false) || *p++ != '=' || *p++ != '"')
                    fail_msg("line %d: bad label: %s", lineno, buf);
                while (*p != '"') {
                    if (!*p)
                        fail_msg("line %d: unterminated label value: %s", lineno, buf);
                    char c = *p++;
                    if (c == '\\') {
                        c = *p++;
                        if (c == 'n')
                            c = '\n';
                        else if (c != '\\' && c != '"')
                            fail_msg("line %d: bad escape \\%c: %s", lineno, c, buf);
                    }
                    if (n + 1 < sizeof value)
                        value[n++] = c;
                }
                value[n] = '\0';
                p++;
                if (is_probe && *ngot < 16) {
                    snprintf(got[*ngot].name, sizeof got[0].name, "%s", lname);
                    snprintf(got[*ngot].value, sizeof got[0].value, "%s", value);
                    (*ngot)++;
                }
                if (*p == ',')
                    p++;
                else if (*p != '}')
                    fail_msg("line %d: expected , or }: %s", lineno, buf);
            }
            p++;
        }
        if (*p++ != ' ')
            fail_msg("line %d: expected a space before the value: %s", lineno, buf);
        char value[64];
        snprintf(value, sizeof value, "%.*s", (int)strcspn(p, " "), p);
        if (!parse_float(value))
            fail_msg("line %d: bad value '%s'", lineno, value);
        p += strlen(value);
        if (*p)
            fail_msg("line %d: a timestamp or junk after the value: %s", lineno, buf);
        /* the samples of a name come together, after its TYPE */
        bool has_type = false;
        for (int i = 0; i < ntyped; i++)
            has_type |= strcmp(typed[i], name) == 0;
        if (!has_type)
            fail_msg("line %d: sample of %s before its TYPE", lineno, name);
        if (strcmp(cur, name) != 0) {
            for (int i = 0; i < nnames; i++)
                if (strcmp(names[i], name) == 0)
                    fail_msg("line %d: samples of %s are not together", lineno, name);
            if (*cur)
                snprintf(names[nnames++], sizeof names[0], "%s", cur);
            snprintf(cur, sizeof cur, "%s", name);
        }
        samples++;
    }
    return samples;
}

static json_t *prom_rows(void)
{
    json_t *rows = json_array();
    json_array_append_new(
        rows, row("net.lat.latency.p99", "size=8,transport=tcp", 41599.5, "ns", "lower"));
    json_array_append_new(
        rows, row("net.lat.latency.p99", "size=4096,transport=tcp", 52000, "ns", "lower"));
    json_array_append_new(rows, row("coll.busbw", "op=allreduce,size=8", 1.25e10, "B/s", "higher"));
    json_array_append_new(rows, row("step.cov", "preset=resnet50,ranks=8", 0.05, "", "lower"));
    json_array_append_new(rows, row("io.commit.per_s", "fs=ext4", 5496.5, "1/s", "higher"));
    json_array_append_new(rows, row("coll.fit.beta", "algo=ring", 0.5, "ns/B", "lower"));
    json_array_append_new(rows, row("plan.cost", "candidate=a", 1234.5, "$", "lower"));
    json_array_append_new(rows, row("plan.step", "candidate=a", 1.5, "s", "lower"));
    json_array_append_new(rows, row("run.ok", "", 1, "", "higher"));
    /* back to an earlier name: its samples must still come together */
    json_array_append_new(
        rows, row("net.lat.latency.p99", "size=65536,transport=tcp", 90000, "ns", "lower"));
    json_t *r = row("odd.labels", "", 3, "", NULL);
    json_object_set_new(json_object_get(r, "labels"), "path", json_string("a\\b\"c\nd"));
    json_object_set_new(json_object_get(r, "labels"), "9bad-name", json_string("x"));
    json_object_set_new(r, "host", json_string("row\"host"));
    json_array_append_new(rows, r);
    return rows;
}

static void prom_format(void **state)
{
    (void)state;
    json_t *rows = prom_rows();
    char *text = NULL;
    size_t len = 0;
    tp_error err = {0};
    assert_int_equal(tp_prom_render(rows, "node1", &text, &len, &err), 0);
    TP_EQ_INT(len, strlen(text));
    struct seen_label got[16];
    int ngot = 0;
    TP_EQ_INT(check_exposition(text, "trainpath_odd_labels", got, &ngot), 11);
    /* units: seconds, bytes per second, none for ratios */
    TP_HAS(text, "# TYPE trainpath_net_lat_latency_p99_seconds gauge\n");
    TP_HAS(text,
           "\ntrainpath_net_lat_latency_p99_seconds{size=\"8\",transport=\"tcp\",host=\"node1\"} "
           "4.15995e-05\n");
    TP_HAS(text, "trainpath_net_lat_latency_p99_seconds{size=\"65536\",transport=\"tcp\",host="
                 "\"node1\"} 9e-05\n");
    TP_HAS(text,
           "\ntrainpath_coll_busbw_bytes_per_second{op=\"allreduce\",size=\"8\",host=\"node1\"} "
           "12500000000\n");
    TP_HAS(text, "\ntrainpath_step_cov{preset=\"resnet50\",ranks=\"8\",host=\"node1\"} 0.05\n");
    TP_HAS(text, "\ntrainpath_io_commit_per_second{fs=\"ext4\",host=\"node1\"} 5496.5\n");
    TP_HAS(text,
           "\ntrainpath_coll_fit_beta_seconds_per_byte{algo=\"ring\",host=\"node1\"} 5e-10\n");
    TP_HAS(text, "\ntrainpath_plan_cost_dollars{candidate=\"a\",host=\"node1\"} 1234.5\n");
    TP_HAS(text, "\ntrainpath_plan_step_seconds{candidate=\"a\",host=\"node1\"} 1.5\n");
    TP_HAS(text, "\ntrainpath_run_ok{host=\"node1\"} 1\n");
    TP_HAS(text,
           "# HELP trainpath_net_lat_latency_p99_seconds trainpath net.lat.latency.p99, in ns "
           "converted to seconds; better: lower\n");
    /* escaping: the parser got back what went in; a row's host wins */
    int found = 0;
    for (int i = 0; i < ngot; i++) {
        if (strcmp(got[i].name, "path") == 0) {
            TP_EQ_STR(got[i].value, "a\\b\"c\nd");
            found++;
        }
        if (strcmp(got[i].name, "_9bad_name") == 0) {
            TP_EQ_STR(got[i].value, "x");
            found++;
        }
        if (strcmp(got[i].name, "host") == 0) {
            TP_EQ_STR(got[i].value, "row\"host");
            found++;
        }
    }
    TP_EQ_INT(found, 3);
    TP_HAS(text, "path=\"a\\\\b\\\"c\\nd\"");
    free(text);

    /* without a host; a series twice keeps the last */
    json_array_append_new(rows, row("run.ok", "", 0, "", "higher"));
    assert_int_equal(tp_prom_render(rows, NULL, &text, &len, &err), 0);
    check_exposition(text, NULL, NULL, NULL);
    TP_HAS(text, "\ntrainpath_run_ok 0\n");
    if (strstr(text, "trainpath_run_ok 1"))
        fail_msg("the first run.ok stayed: %s", text);
    free(text);
    json_decref(rows);
    json_t *none = json_array();
    assert_int_equal(tp_prom_render(none, NULL, &text, &len, &err), 0);
    json_decref(none);
    TP_EQ_INT(len, 0);
    free(text);
    TP_EQ_INT(tp_prom_render(json_null(), NULL, &text, &len, &err), TP_EUSAGE);
}

static void prom_write_atomic(void **state)
{
    (void)state;
    json_t *rows = prom_rows();
    char path[256];
    snprintf(path, sizeof path, "%s/trainpath.prom", dir);
    tp_error err = {0};
    tp_test_write(dir, "trainpath.prom", "old\n", path, sizeof path);
    assert_int_equal(tp_prom_write(path, rows, "node1", &err), 0);
    char *want = NULL;
    size_t len = 0;
    assert_int_equal(tp_prom_render(rows, "node1", &want, &len, &err), 0);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *got = calloc(1, len + 16);
    size_t n = fread(got, 1, len + 8, f);
    fclose(f);
    TP_EQ_INT(n, len);
    TP_EQ_STR(got, want);
    free(got);
    free(want);
    /* no temporary file left beside it */
    DIR *d = opendir(dir);
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".tmp"))
            fail_msg("temporary file %s left", e->d_name);
    closedir(d);
    /* a folder that does not exist: usage, naming it */
    TP_EQ_INT(tp_prom_write("/nonexistent/x.prom", rows, NULL, &err), TP_EUSAGE);
    TP_HAS(err.msg, "/nonexistent/x.prom");
    json_decref(rows);
}

/* The report subcommands' work from file names, as the CLI calls it: the
 * diff of two document files, the gate of a thresholds file on them, the
 * fleet of a lines file, the Prometheus textfile; a missing input is an
 * error that names it. */
static void report_calls_from_files(void **state)
{
    (void)state;
    char a[128], b[128], gate[128], lines[128], prom[128], missing[128];
    json_t *da = lat_doc(1, 5000, 1.0, "n1"), *db = lat_doc(2, 5000, 1.2, "n2");
    snprintf(a, sizeof a, "%s/a.json", dir);
    snprintf(b, sizeof b, "%s/b.json", dir);
    snprintf(prom, sizeof prom, "%s/tp.prom", dir);
    snprintf(missing, sizeof missing, "%s/missing.json", dir);
    assert_int_equal(json_dump_file(da, a, 0), 0);
    assert_int_equal(json_dump_file(db, b, 0), 0);
    json_decref(da);
    json_decref(db);
    tp_test_write(dir, "t.yaml", "thresholds:\n  - metric: net.lat.latency.p99\n    max: 1ns\n",
                  gate, sizeof gate);
    tp_test_write(dir, "f.jsonl",
                  "{\"host\": \"h1\", \"metric\": \"net.bw\", \"value\": 1e9, \"unit\": \"B/s\"}\n",
                  lines, sizeof lines);
    tp_error err = {0};

    json_t *d = tp_report_diff(a, b, NULL, &err);
    assert_non_null(d);
    if (json_integer_value(json_object_get(d, "regressions")) < 4)
        fail_msg("%lld regressions for a +20 %% shift, expected 4 or more",
                 (long long)json_integer_value(json_object_get(d, "regressions")));
    json_decref(d);
    assert_null(tp_report_diff(a, missing, NULL, &err));
    TP_HAS(err.msg, missing);

    const char *both[] = {a, b};
    json_t *rep = tp_report_gate(gate, both, 2, &err);
    assert_non_null(rep);
    TP_EQ_INT(json_integer_value(json_object_get(rep, "code")), TP_GATE_CRITICAL);
    TP_EQ_INT(json_integer_value(json_object_get(rep, "fail")), 2); /* a row each, n1 and n2 */
    json_decref(rep);
    assert_null(tp_report_gate(missing, both, 2, &err));
    TP_HAS(err.msg, missing);

    const char *files[] = {lines};
    json_t *j = tp_report_fleet(files, 1, &err);
    assert_non_null(j);
    TP_EQ_INT(json_integer_value(json_object_get(j, "outliers")), 0);
    json_decref(j);
    const char *none[] = {missing};
    assert_null(tp_report_fleet(none, 1, &err));
    TP_HAS(err.msg, missing);

    TP_EQ_INT(tp_report_prometheus(both, 1, prom, "node7", &err), 0);
    FILE *f = fopen(prom, "r");
    assert_non_null(f);
    char text[8192];
    size_t len = fread(text, 1, sizeof text - 1, f);
    text[len] = 0;
    fclose(f);
    TP_HAS(text, "host=\"node7\"");
    TP_EQ_INT(tp_report_prometheus(none, 1, prom, NULL, &err), TP_EUSAGE);
    TP_HAS(err.msg, missing);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gate_example),
        cmocka_unit_test(gate_warning_units_hosts),
        cmocka_unit_test(gate_errors),
        cmocka_unit_test(diff_mann_whitney_exact),
        cmocka_unit_test(diff_welch_closed_forms),
        cmocka_unit_test(diff_planted_regression),
        cmocka_unit_test(diff_noise_not_flagged),
        cmocka_unit_test(diff_small_shift_and_improvement),
        cmocka_unit_test(diff_rows_without_histograms),
        cmocka_unit_test(fleet_host_outliers),
        cmocka_unit_test(fleet_lines_and_docs),
        cmocka_unit_test(fleet_pairs),
        cmocka_unit_test(fleet_rounds),
        cmocka_unit_test(prom_format),
        cmocka_unit_test(prom_write_atomic),
        cmocka_unit_test(report_calls_from_files),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
