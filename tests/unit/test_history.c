/* The results history: documents in, series and baselines out, over a real
 * SQLite file in a temporary folder. The documents are synthetic (built
 * here with json_pack, so the test runs on a clean clone); where
 * results/demo exists its real documents are added as well. Baselines are
 * checked against sums done by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "tp/history.h"
#include "tp/report.h"
#include "tp_test.h"

/* within 1e-9 relative, absolute below 1 (b, evaluated twice, is a plain value) */
#define NEAR(a, b) TP_NEAR(a, b, 1e-9 * fmax(1.0, fabs((double)(b))))

static char dir[64];
static char db[128];

static int setup(void **state)
{
    (void)state;
    if (tp_test_mkdtemp(dir, sizeof dir, "tp_history") != 0)
        return -1;
    snprintf(db, sizeof db, "%s/history.sqlite", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return tp_test_rmtree(dir);
}

/* ---- synthetic documents ---- */

static json_t *doc(const char *command, const char *host, const char *utc, bool ok, json_t *config,
                   json_t *results)
{
    json_t *d = json_pack("{s:s, s:{s:s, s:s}, s:s, s:{s:b, s:s}, s:s?, s:{s:s, s:s}, s:o, s:o}",
                          "schema", "trainpath.result/1", "tool", "name", "trainpath", "version",
                          "0.1.0", "command", command, "status", "ok", ok, "code",
                          ok ? "ok" : "peer", "started_utc", utc, "provenance", "host", host,
                          "kernel", "6.1.0-test", "config", config, "results", results);
    assert_non_null(d);
    return d;
}

static json_t *lat_stats(double p50)
{
    return json_pack("{s:i, s:f, s:f, s:f, s:f, s:s}", "count", 1000, "mean", p50 + 0.5, "stdev",
                     2.0, "p50", p50, "p99", 2 * p50, "unit", "ns");
}

/* net lat over tcp at size 8 (and 4096 when two_sizes) with this p50 */
static json_t *net_doc(const char *host, const char *utc, double p50, bool two_sizes)
{
    json_t *sizes = json_pack("[{s:i, s:o}]", "size_bytes", 8, "latency", lat_stats(p50));
    if (two_sizes)
        json_array_append_new(
            sizes, json_pack("{s:i, s:o}", "size_bytes", 4096, "latency", lat_stats(10 * p50)));
    return doc("net lat", host, utc, true,
               json_pack("{s:s, s:s, s:i}", "test", "lat", "transport", "tcp", "window", 1),
               json_pack("{s:s, s:o}", "test", "lat", "sizes", sizes));
}

#define LAT8 "net.lat.latency.p50{size=8,transport=tcp}"

static json_t *coll_doc(const char *host, const char *utc, double busbw)
{
    return doc("coll", host, utc, true,
               json_pack("{s:s, s:i, s:s}", "op", "allreduce", "ranks", 2, "transport", "tcp"),
               json_pack("{s:[{s:i, s:{s:f, s:s}, s:{s:f, s:s}, s:o, s:i}]}", "sizes", "size_bytes",
                         1048576, "busbw", "value", busbw, "unit", "B/s", "algbw", "value", busbw,
                         "unit", "B/s", "time", lat_stats(1e5), "wrong", 0));
}

#define BUSBW "coll.busbw{op=allreduce,ranks=2,size=1048576,transport=tcp}"

static json_t *step_doc(const char *host, const char *utc)
{
    return doc("step", host, utc, true, json_pack("{s:s, s:i}", "preset", "tiny", "ranks", 2),
               json_pack("{s:[{s:{s:i, s:f, s:f, s:f, s:f, s:s}, s:{s:f, s:{s:f, s:s}}}],"
                         " s:{s:b}}",
                         "runs", "step_time", "count", 40, "mean", 5.2e6, "p50", 5.1e6, "p99", 6e6,
                         "cv", 0.05, "unit", "ns", "summary", "amplification", 1.2, "goodput",
                         "value", 0.9, "unit", "", "reproducibility", "identical", true));
}

static json_t *failed_doc(const char *host, const char *utc)
{
    return doc("net lat", host, utc, false, json_pack("{s:s}", "transport", "tcp"), json_object());
}

static char *config_id(const json_t *d)
{
    json_t *pv = tp_report_provenance(d);
    char *id = strdup(json_string_value(json_object_get(pv, "config_id")));
    json_decref(pv);
    return id;
}

static tp_history *open_ok(void)
{
    tp_history *h = NULL;
    tp_error err = {0};
    int rc = tp_history_open(db, &h, &err);
    if (rc)
        fail_msg("open %s: %d %s", db, rc, err.msg);
    return h;
}

/* add and steal d; the outcome */
static struct tp_history_added add(tp_history *h, json_t *d, const char *file, const char *batch)
{
    struct tp_history_added out;
    tp_error err = {0};
    int rc = tp_history_add_run(h, d, file, batch, &out, &err);
    if (rc)
        fail_msg("add %s: %d %s", file ? file : "doc", rc, err.msg);
    json_decref(d);
    return out;
}

static size_t rows_of(const json_t *d)
{
    json_t *rows = tp_report_metrics(d, NULL);
    assert_non_null(rows);
    size_t n = json_array_size(rows);
    json_decref(rows);
    return n;
}

static size_t count_runs(tp_history *h, const char *batch)
{
    json_t *runs = NULL;
    tp_error err = {0};
    int rc = tp_history_runs(h, batch, &runs, &err);
    if (rc)
        fail_msg("runs: %d %s", rc, err.msg);
    size_t n = json_array_size(runs);
    json_decref(runs);
    return n;
}

/* Run SQL on a file with SQLite directly: the other applications. */
static void sql(const char *path, const char *text)
{
    sqlite3 *s = NULL;
    if (sqlite3_open(path, &s) != SQLITE_OK)
        fail_msg("sqlite3_open %s", path);
    char *msg = NULL;
    if (sqlite3_exec(s, text, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", text, msg);
    sqlite3_close(s);
}

static long long sql_int(const char *path, const char *text)
{
    sqlite3 *s = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open_v2(path, &s, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(s, text, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    long long v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(s);
    return v;
}

/* ---- tests ---- */

/* Every kind of document goes in with one metrics row per tp_report_metrics
 * row; the real demo documents too where the tree has them. */
static void adds_documents_and_groups_batches(void **state)
{
    (void)state;
    tp_history *h = open_ok();
    json_t *docs[] = {net_doc("a", "2026-03-01T10:00:00.000Z", 20000, true),
                      coll_doc("a", "2026-03-01T10:01:00.000Z", 5e9),
                      step_doc("a", "2026-03-01T10:02:00.000Z"),
                      failed_doc("a", "2026-03-01T10:03:00.000Z")};
    size_t added = 0;
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        size_t want = rows_of(docs[i]);
        struct tp_history_added out = add(h, docs[i], "synthetic.json", "validate-1");
        assert_true(out.added);
        TP_EQ_INT(out.metrics, want);
        added++;
    }
    /* the failed run is stored, with run.ok = 0 as its only metric */
    json_t *runs = NULL;
    tp_error err = {0};
    assert_int_equal(tp_history_runs(h, "validate-1", &runs, &err), 0);
    TP_EQ_INT(json_array_size(runs), 4);
    json_t *last = json_array_get(runs, 3);
    assert_true(json_is_false(json_object_get(last, "ok")));
    TP_EQ_INT(json_integer_value(json_object_get(last, "metrics")), 1);
    assert_string_equal(json_string_value(json_object_get(last, "file")), "synthetic.json");
    assert_string_equal(json_string_value(json_object_get(last, "batch")), "validate-1");
    assert_string_equal(json_string_value(json_object_get(last, "kernel")), "6.1.0-test");
    assert_string_equal(json_string_value(json_object_get(last, "tool_version")), "0.1.0");
    json_decref(runs);

    /* the real documents, when the tree has them */
    size_t demo = 0;
    DIR *d = opendir(TP_SOURCE_ROOT "/results/demo");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0)
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/results/demo/%s", TP_SOURCE_ROOT, e->d_name);
        json_t *rd = NULL;
        tp_error lerr;
        if (tp_report_load(path, &rd, &lerr) != 0)
            continue;
        size_t want = rows_of(rd);
        struct tp_history_added out = add(h, rd, path, "validate-2");
        assert_true(out.added);
        TP_EQ_INT(out.metrics, want);
        demo++;
    }
    if (d)
        closedir(d);
    print_message("added %zu synthetic and %zu demo documents\n", added, demo);
    TP_EQ_INT(count_runs(h, "validate-1"), 4);
    TP_EQ_INT(count_runs(h, "validate-2"), demo);
    TP_EQ_INT(count_runs(h, NULL), 4 + demo);
    TP_EQ_INT(count_runs(h, "validate-3"), 0);
    tp_history_close(h);
}

/* Added out of order, with one time in another zone: read back in time. */
static void series_is_in_time_order(void **state)
{
    (void)state;
    tp_history *h = open_ok();
    /* time index 0 is 10:00Z written as 12:00+02:00: text order would put it last */
    const char *utc[] = {"2026-03-01T12:00:00.000+02:00", "2026-03-01T10:01:00.000Z",
                         "2026-03-01T10:02:00.5Z", "2026-03-01T10:03:00.000Z",
                         "2026-03-01T10:04:00.000Z"};
    const int order[] = {3, 0, 4, 1, 2};
    int64_t id[5];
    for (int i = 0; i < 5; i++) {
        int t = order[i];
        struct tp_history_added out =
            add(h, net_doc(t % 2 ? "b" : "a", utc[t], 100 + 10 * t, true), NULL, NULL);
        id[t] = out.run_id;
    }
    json_t *pts = NULL;
    tp_error err = {0};
    struct tp_history_filter f = {.key = LAT8};
    assert_int_equal(tp_history_series(h, &f, &pts, &err), 0);
    TP_EQ_INT(json_array_size(pts), 5);
    for (int t = 0; t < 5; t++) {
        json_t *p = json_array_get(pts, (size_t)t);
        NEAR(json_number_value(json_object_get(p, "value")), 100 + 10 * t);
        TP_EQ_INT(json_integer_value(json_object_get(p, "run_id")), id[t]);
        assert_string_equal(json_string_value(json_object_get(p, "started_utc")), utc[t]);
        assert_string_equal(json_string_value(json_object_get(p, "host")), t % 2 ? "b" : "a");
        assert_string_equal(json_string_value(json_object_get(p, "unit")), "ns");
        assert_string_equal(json_string_value(json_object_get(p, "key")), LAT8);
    }
    json_decref(pts);

    /* the most recent 2, still oldest first */
    f.last = 2;
    assert_int_equal(tp_history_series(h, &f, &pts, &err), 0);
    TP_EQ_INT(json_array_size(pts), 2);
    NEAR(json_number_value(json_object_get(json_array_get(pts, 0), "value")), 130);
    NEAR(json_number_value(json_object_get(json_array_get(pts, 1), "value")), 140);
    json_decref(pts);

    /* one host */
    f = (struct tp_history_filter){.key = LAT8, .host = "a"};
    assert_int_equal(tp_history_series(h, &f, &pts, &err), 0);
    TP_EQ_INT(json_array_size(pts), 3);
    NEAR(json_number_value(json_object_get(json_array_get(pts, 1), "value")), 120);
    json_decref(pts);

    /* by metric name, with and without label filters */
    struct {
        json_t *labels;
        size_t n;
    } cases[] = {{NULL, 10},
                 {json_pack("{s:s}", "size", "8"), 5},
                 {json_pack("{s:s, s:s}", "transport", "tcp", "size", "4096"), 5},
                 {json_pack("{s:s}", "size", "65536"), 0},
                 {json_pack("{s:s}", "rack", "r1"), 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        f = (struct tp_history_filter){.metric = "net.lat.latency.p50", .labels = cases[i].labels};
        assert_int_equal(tp_history_series(h, &f, &pts, &err), 0);
        if (json_array_size(pts) != cases[i].n)
            fail_msg("case %zu: %zu points, expected %zu", i, json_array_size(pts), cases[i].n);
        if (cases[i].n == 5)
            NEAR(json_number_value(json_object_get(json_array_get(pts, 0), "value")),
                 i == 1 ? 100 : 1000);
        json_decref(pts);
        json_decref(cases[i].labels);
    }

    /* a filter with a number, and no key or metric at all, are usage errors */
    json_t *bad = json_pack("{s:i}", "size", 8);
    f = (struct tp_history_filter){.metric = "net.lat.latency.p50", .labels = bad};
    TP_EQ_INT(tp_history_series(h, &f, &pts, &err), TP_EUSAGE);
    assert_null(pts);
    json_decref(bad);
    f = (struct tp_history_filter){0};
    TP_EQ_INT(tp_history_series(h, &f, &pts, &err), TP_EUSAGE);
    f = (struct tp_history_filter){.key = "no.such.metric"};
    assert_int_equal(tp_history_series(h, &f, &pts, &err), 0);
    TP_EQ_INT(json_array_size(pts), 0);
    json_decref(pts);
    tp_history_close(h);
}

/* The rule on its own, at each threshold. */
static void trim_rule(void **state)
{
    (void)state;
    struct tp_baseline b;
    tp_history_trim(NULL, 0, &b);
    TP_EQ_INT(b.samples, 0);
    assert_true(isnan(b.value));

    double four[] = {4, 1, 1000, 3}; /* below 5: the plain mean, outlier and all */
    tp_history_trim(four, 4, &b);
    NEAR(b.value, 1008.0 / 4);
    TP_EQ_INT(b.kept, 4);
    NEAR(b.min, 1);
    NEAR(b.max, 1000);
    assert_string_equal(b.rule, "mean, 4 samples");

    double five[] = {50, 1, 20, 10, 30}; /* 5: one dropped each side */
    tp_history_trim(five, 5, &b);
    NEAR(b.value, 20);
    TP_EQ_INT(b.kept, 3);
    NEAR(b.min, 10);
    NEAR(b.max, 30);
    assert_string_equal(b.rule, "trimmed mean 10 %, 3 of 5 samples");

    /* 18: 10 % is 1.8, rounded to 2 each side */
    double v[18];
    for (int i = 0; i < 18; i++)
        v[i] = i == 0 ? -1e9 : i == 1 ? 1e9 : i == 2 ? 1e8 : i == 3 ? -5 : i;
    tp_history_trim(v, 18, &b);
    /* kept: 4 .. 17 */
    NEAR(b.value, (4.0 + 17.0) / 2);
    TP_EQ_INT(b.samples, 18);
    TP_EQ_INT(b.kept, 14);
    NEAR(b.min, 4);
    NEAR(b.max, 17);
    assert_string_equal(b.rule, "trimmed mean 10 %, 14 of 18 samples");

    double one[] = {7};
    tp_history_trim(one, 1, &b);
    NEAR(b.value, 7);
    assert_string_equal(b.rule, "mean, 1 sample");
}

/* Baselines from the database, against hand sums: outliers dropped, the
 * last N runs, one host, one configuration. */
static void baseline_trimmed_mean(void **state)
{
    (void)state;
    tp_history *h = open_ok();
    /* host a, in time order */
    const double a[] = {1, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 1000};
    char utc[32];
    char *cfg = NULL;
    for (int i = 0; i < 12; i++) {
        snprintf(utc, sizeof utc, "2026-03-01T10:%02d:00.000Z", i);
        json_t *d = net_doc("a", utc, a[i], false);
        if (!cfg)
            cfg = config_id(d);
        add(h, d, NULL, NULL);
    }
    /* host b: same configuration, much slower */
    for (int i = 0; i < 3; i++) {
        snprintf(utc, sizeof utc, "2026-03-01T11:%02d:00.000Z", i);
        add(h, net_doc("b", utc, 5000, false), NULL, NULL);
    }
    /* another configuration on host a: not part of a's baseline */
    json_t *other = net_doc("a", "2026-03-01T12:00:00.000Z", 1e7, false);
    json_object_set_new(json_object_get(other, "config"), "window", json_integer(64));
    char *other_cfg = config_id(other);
    assert_string_not_equal(cfg, other_cfg);
    add(h, other, NULL, NULL);

    struct tp_baseline b;
    tp_error err = {0};
    /* 12 samples: drop 1 and 1000; mean of 10..19 */
    struct tp_history_scope s = {.host = "a", .config_id = cfg};
    assert_int_equal(tp_history_baseline(h, LAT8, &s, &b, &err), 0);
    NEAR(b.value, 14.5);
    TP_EQ_INT(b.samples, 12);
    TP_EQ_INT(b.kept, 10);
    NEAR(b.min, 10);
    NEAR(b.max, 19);
    assert_string_equal(b.rule, "trimmed mean 10 %, 10 of 12 samples");

    /* the last 5 runs: 16 17 18 19 1000, drop 16 and 1000 */
    s.runs = 5;
    assert_int_equal(tp_history_baseline(h, LAT8, &s, &b, &err), 0);
    NEAR(b.value, 18);
    assert_string_equal(b.rule, "trimmed mean 10 %, 3 of 5 samples");
    /* the last 4: plain mean, the outlier stays */
    s.runs = 4;
    assert_int_equal(tp_history_baseline(h, LAT8, &s, &b, &err), 0);
    NEAR(b.value, (17 + 18 + 19 + 1000) / 4.0);
    assert_string_equal(b.rule, "mean, 4 samples");

    /* every host of the configuration: 15 samples, k = 2: drop 1, 10 and
     * two of the 5000s; keep 11..19, 1000, 5000 */
    s = (struct tp_history_scope){.config_id = cfg};
    assert_int_equal(tp_history_baseline(h, LAT8, &s, &b, &err), 0);
    NEAR(b.value, (135.0 + 1000 + 5000) / 11);
    TP_EQ_INT(b.samples, 15);
    TP_EQ_INT(b.kept, 11);
    NEAR(b.max, 5000);

    /* no configuration given: the other one joins in (16 samples) */
    assert_int_equal(tp_history_baseline(h, LAT8, NULL, &b, &err), 0);
    TP_EQ_INT(b.samples, 16);

    /* a key never seen */
    assert_int_equal(tp_history_baseline(h, "net.lat.latency.p50{size=9}", &s, &b, &err), 0);
    TP_EQ_INT(b.samples, 0);
    assert_true(isnan(b.value));

    /* all of host a's baselines as JSON: the same figure */
    json_t *all = NULL;
    s = (struct tp_history_scope){.host = "a", .config_id = cfg};
    assert_int_equal(tp_history_baselines(h, &s, &all, &err), 0);
    /* mean, p50, p99 at size 8, and run.ok */
    TP_EQ_INT(json_array_size(all), 4);
    size_t i;
    json_t *e, *p50 = NULL, *ok = NULL;
    json_array_foreach(all, i, e)
    {
        const char *key = json_string_value(json_object_get(e, "key"));
        assert_string_equal(json_string_value(json_object_get(e, "config_id")), cfg);
        if (strcmp(key, LAT8) == 0)
            p50 = e;
        if (strcmp(json_string_value(json_object_get(e, "metric")), "run.ok") == 0)
            ok = e;
    }
    assert_non_null(p50);
    assert_non_null(ok);
    assert_string_equal(json_string_value(json_object_get(p50, "metric")), "net.lat.latency.p50");
    assert_string_equal(json_string_value(json_object_get(json_object_get(p50, "labels"), "size")),
                        "8");
    assert_string_equal(json_string_value(json_object_get(p50, "unit")), "ns");
    assert_string_equal(json_string_value(json_object_get(p50, "better")), "lower");
    NEAR(json_number_value(json_object_get(p50, "value")), 14.5);
    TP_EQ_INT(json_integer_value(json_object_get(p50, "samples")), 12);
    TP_EQ_INT(json_integer_value(json_object_get(p50, "kept")), 10);
    assert_string_equal(json_string_value(json_object_get(p50, "rule")),
                        "trimmed mean 10 %, 10 of 12 samples");
    NEAR(json_number_value(json_object_get(ok, "value")), 1);
    assert_string_equal(json_string_value(json_object_get(ok, "better")), "higher");
    json_decref(all);

    /* every configuration: one baseline per (config_id, key) */
    s = (struct tp_history_scope){.host = "a"};
    assert_int_equal(tp_history_baselines(h, &s, &all, &err), 0);
    TP_EQ_INT(json_array_size(all), 8);
    json_decref(all);
    free(cfg);
    free(other_cfg);
    tp_history_close(h);
}

/* Without a count, a baseline is over the last 20 runs. */
static void baseline_default_last_20(void **state)
{
    (void)state;
    tp_history *h = open_ok();
    char utc[32];
    /* 5 old runs far off, then 20 runs at 100 .. 119 GB/s */
    for (int i = 0; i < 25; i++) {
        snprintf(utc, sizeof utc, "2026-03-02T10:%02d:00.000Z", i);
        add(h, coll_doc("a", utc, i < 5 ? 1.0 : (95.0 + i) * 1e9), NULL, "b");
    }
    struct tp_baseline b;
    tp_error err = {0};
    struct tp_history_scope s = {.host = "a"};
    assert_int_equal(tp_history_baseline(h, BUSBW, &s, &b, &err), 0);
    /* 20 samples, drop 2 each side: 102 .. 117 */
    TP_EQ_INT(b.samples, 20);
    TP_EQ_INT(b.kept, 16);
    NEAR(b.value, 109.5e9);
    NEAR(b.min, 102e9);
    NEAR(b.max, 117e9);
    assert_string_equal(b.rule, "trimmed mean 10 %, 16 of 20 samples");
    tp_history_close(h);
}

/* Same command, host, started_utc and config_id: ignored, not refused. */
static void duplicates_are_ignored(void **state)
{
    (void)state;
    tp_history *h = open_ok();
    const char *t = "2026-03-03T10:00:00.000Z";
    struct tp_history_added first = add(h, net_doc("a", t, 100, false), "one.json", "x");
    assert_true(first.added);
    assert_true(first.metrics > 0);

    /* the same document again, even from another file and batch */
    struct tp_history_added again = add(h, net_doc("a", t, 999, false), "copy.json", "y");
    assert_false(again.added);
    TP_EQ_INT(again.run_id, first.run_id);
    TP_EQ_INT(again.metrics, 0);
    tp_error err = {0};
    json_t *d = net_doc("a", t, 999, false);
    assert_int_equal(tp_history_add(h, d, "copy.json", "y", &err), 0);
    json_decref(d);
    TP_EQ_INT(count_runs(h, NULL), 1);
    /* nothing of the copy went in */
    struct tp_history_filter f = {.key = LAT8};
    json_t *pts = NULL;
    assert_int_equal(tp_history_series(h, &f, &pts, &err), 0);
    TP_EQ_INT(json_array_size(pts), 1);
    NEAR(json_number_value(json_object_get(json_array_get(pts, 0), "value")), 100);
    json_decref(pts);

    /* another host, or another configuration, at the same time: new runs */
    assert_true(add(h, net_doc("b", t, 100, false), NULL, NULL).added);
    json_t *other = net_doc("a", t, 100, false);
    json_object_set_new(json_object_get(other, "config"), "window", json_integer(8));
    assert_true(add(h, other, NULL, NULL).added);
    TP_EQ_INT(count_runs(h, NULL), 3);
    tp_history_close(h);
}

/* A document that cannot be placed in time is refused, naming its file. */
static void bad_documents_are_refused(void **state)
{
    (void)state;
    tp_history *h = open_ok();
    tp_error err = {0};
    json_t *d = net_doc("a", "2026-03-01T10:00:00Z", 1, false);
    json_object_del(d, "started_utc");
    TP_EQ_INT(tp_history_add(h, d, "nostart.json", NULL, &err), TP_EUSAGE);
    TP_HAS(err.msg, "nostart.json");
    json_object_set_new(d, "started_utc", json_string("yesterday"));
    TP_EQ_INT(tp_history_add(h, d, "yesterday.json", NULL, &err), TP_EUSAGE);
    TP_HAS(err.msg, "yesterday.json");
    json_decref(d);
    TP_EQ_INT(count_runs(h, NULL), 0);
    tp_history_close(h);
}

/* What was added is there after closing; the file says what it is. */
static void reopen_keeps_everything(void **state)
{
    (void)state;
    tp_history *h = open_ok();
    add(h, net_doc("a", "2026-03-04T10:00:00.000Z", 100, false), NULL, NULL);
    add(h, step_doc("a", "2026-03-04T10:01:00.000Z"), NULL, NULL);
    tp_history_close(h);

    TP_EQ_INT(sql_int(db, "PRAGMA application_id"), TP_HISTORY_APP_ID);
    TP_EQ_INT(sql_int(db, "PRAGMA user_version"), TP_HISTORY_SCHEMA);
    TP_EQ_INT(sql_int(db, "SELECT count(*) FROM runs"), 2);

    /* two handles on one file, both writing */
    h = open_ok();
    tp_history *h2 = open_ok();
    TP_EQ_INT(count_runs(h, NULL), 2);
    add(h, net_doc("a", "2026-03-04T10:02:00.000Z", 110, false), NULL, NULL);
    add(h2, net_doc("a", "2026-03-04T10:03:00.000Z", 120, false), NULL, NULL);
    TP_EQ_INT(count_runs(h, NULL), 4);
    tp_history_close(h2);
    tp_history_close(h);

    /* read-only: reads, refuses to add */
    tp_error err = {0};
    assert_int_equal(tp_history_open_readonly(db, &h, &err), 0);
    assert_string_equal(tp_history_path(h), db);
    struct tp_history_filter f = {.key = LAT8};
    json_t *pts = NULL;
    assert_int_equal(tp_history_series(h, &f, &pts, &err), 0);
    TP_EQ_INT(json_array_size(pts), 3);
    NEAR(json_number_value(json_object_get(json_array_get(pts, 2), "value")), 120);
    json_decref(pts);
    json_t *d = net_doc("a", "2026-03-04T10:04:00.000Z", 1, false);
    TP_EQ_INT(tp_history_add(h, d, NULL, NULL, &err), TP_EUSAGE);
    TP_HAS(err.msg, db);
    json_decref(d);
    tp_history_close(h);
    TP_EQ_INT(sql_int(db, "SELECT count(*) FROM runs"), 4);
}

/* A file that is not SQLite at all: refused, named, left as it was. */
static void not_sqlite_is_refused(void **state)
{
    (void)state;
    char path[160];
    char text[2048];
    memset(text, 'x', sizeof text - 1);
    text[sizeof text - 1] = '\0';
    memcpy(text, "these are not the runs you are looking for\n", 43);
    tp_test_write(dir, "notes.txt", text, path, sizeof path);
    tp_history *h = (tp_history *)1;
    tp_error err = {0};
    TP_EQ_INT(tp_history_open(path, &h, &err), TP_EUSAGE);
    assert_null(h);
    TP_HAS(err.msg, path);
    TP_HAS(err.msg, "not a trainpath history");
    TP_EQ_INT(tp_history_open_readonly(path, &h, &err), TP_EUSAGE);
    TP_HAS(err.msg, path);
    /* untouched */
    char back[2048] = {0};
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    TP_EQ_INT(fread(back, 1, sizeof back, f), sizeof text - 1);
    fclose(f);
    assert_string_equal(back, text);
}

/* Valid SQLite, but someone else's: refused, and not written to. */
static void other_database_is_refused(void **state)
{
    (void)state;
    char path[160];
    snprintf(path, sizeof path, "%s/music.db", dir);
    sql(path, "CREATE TABLE songs (title TEXT); INSERT INTO songs VALUES ('so what');");
    tp_history *h = NULL;
    tp_error err = {0};
    TP_EQ_INT(tp_history_open(path, &h, &err), TP_EUSAGE);
    assert_null(h);
    TP_HAS(err.msg, path);
    TP_HAS(err.msg, "another application");
    TP_EQ_INT(sql_int(path, "SELECT count(*) FROM sqlite_master"), 1);

    /* another application's id, even with no tables yet */
    snprintf(path, sizeof path, "%s/other-id.db", dir);
    sql(path, "PRAGMA application_id = 1234");
    TP_EQ_INT(tp_history_open(path, &h, &err), TP_EUSAGE);
    TP_HAS(err.msg, path);
}

/* A history written by a newer trainpath: refused, saying so. */
static void newer_schema_is_refused(void **state)
{
    (void)state;
    tp_history_close(open_ok());
    sql(db, "PRAGMA user_version = 99");
    tp_history *h = NULL;
    tp_error err = {0};
    TP_EQ_INT(tp_history_open(db, &h, &err), TP_EUSAGE);
    assert_null(h);
    TP_HAS(err.msg, db);
    TP_HAS(err.msg, "newer");
}

/* Missing files and unwritable places. */
static void missing_and_unreachable_files(void **state)
{
    (void)state;
    char path[160];
    tp_history *h = NULL;
    tp_error err = {0};
    snprintf(path, sizeof path, "%s/missing.sqlite", dir);
    TP_EQ_INT(tp_history_open_readonly(path, &h, &err), TP_EUSAGE);
    TP_HAS(err.msg, path);
    struct stat sb;
    assert_int_not_equal(stat(path, &sb), 0); /* read-only created nothing */

    snprintf(path, sizeof path, "%s/no/such/folder/h.sqlite", dir);
    TP_EQ_INT(tp_history_open(path, &h, &err), TP_ESYS);
    assert_null(h);
    TP_HAS(err.msg, path);

    TP_EQ_INT(tp_history_open("", &h, &err), TP_EUSAGE);
    tp_history_close(NULL);
}

/* The report subcommands' work from file names: add (twice: nothing new),
 * the series and the baselines read back and printed as the CLI shows
 * them; a missing database is refused, not made. */
static void report_calls_from_files(void **state)
{
    (void)state;
    char a[160], b[160], missing[160];
    snprintf(a, sizeof a, "%s/a.json", dir);
    snprintf(b, sizeof b, "%s/b.json", dir);
    snprintf(missing, sizeof missing, "%s/missing.sqlite", dir);
    json_t *da = net_doc("n1", "2026-11-30T10:00:00.000Z", 100, false);
    json_t *db_ = net_doc("n1", "2026-11-30T11:00:00.000Z", 110, false);
    assert_int_equal(json_dump_file(da, a, 0), 0);
    assert_int_equal(json_dump_file(db_, b, 0), 0);
    json_decref(da);
    json_decref(db_);
    const char *names[] = {a, b};
    size_t added, read;
    tp_error err = {0};
    TP_EQ_INT(tp_report_add(db, names, 2, "b1", &added, &read, &err), 0);
    TP_EQ_U64(added, 2);
    TP_EQ_U64(read, 2);
    TP_EQ_INT(tp_report_add(db, names, 1, NULL, &added, &read, &err), 0);
    TP_EQ_U64(added, 0);
    TP_EQ_U64(read, 1);

    json_t *pts = NULL, *base = NULL;
    struct tp_history_filter f = {.key = LAT8};
    TP_EQ_INT(tp_report_history(db, &f, &pts, &err), 0);
    TP_EQ_U64(json_array_size(pts), 2);
    struct tp_history_scope sc = {0};
    TP_EQ_INT(tp_report_baselines(db, &sc, &base, &err), 0);
    assert_true(json_array_size(base) > 0);

    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    tp_history_print_series(out, LAT8, "h.sqlite", pts);
    tp_history_print_baselines(out, base);
    fclose(out);
    TP_HAS(text, "# " LAT8 " in h.sqlite: 2 points\n");
    TP_HAS(text, "+10.0 %  " LAT8 "\n"); /* 100 ns, then 110 ns: +10 % from the first */
    TP_HAS(text, "mean, 2 samples");
    free(text);
    json_decref(pts);
    json_decref(base);

    TP_EQ_INT(tp_report_history(missing, &f, &pts, &err), TP_EUSAGE);
    assert_null(pts);
    TP_HAS(err.msg, missing);
    struct stat sb;
    assert_int_not_equal(stat(missing, &sb), 0);
    TP_EQ_INT(tp_report_baselines(missing, &sc, &base, &err), TP_EUSAGE);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(adds_documents_and_groups_batches),
        T(series_is_in_time_order),
        cmocka_unit_test(trim_rule),
        T(baseline_trimmed_mean),
        T(baseline_default_last_20),
        T(duplicates_are_ignored),
        T(bad_documents_are_refused),
        T(reopen_keeps_everything),
        T(not_sqlite_is_refused),
        T(other_database_is_refused),
        T(newer_schema_is_refused),
        T(missing_and_unreachable_files),
        T(report_calls_from_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
