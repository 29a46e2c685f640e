/* Tests for the metric rows: each kind of result document flattens into the
 * documented metrics, with labels, units, the better direction and the
 * statistics behind them; keys are unique within a document; a failed run
 * yields run.ok = 0 and nothing else; provenance and loading. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tp/report.h"
#include "tp_test.h"

static json_t *doc(const char *command, json_t *config, json_t *results, bool ok)
{
    return json_pack("{s:s, s:s, s:{s:b}, s:s, s:{s:s, s:s}, s:{s:s}, s:o, s:o}", "schema",
                     "trainpath.result/1", "command", command, "status", "ok", ok,
                     "started_utc", "2026-11-30T10:00:00.000Z", "provenance", "host", "node1",
                     "kernel", "6.1", "tool", "version", "0.1.0", "config", config, "results",
                     results);
}

static json_t *stats(double mean, double p50, double p99, double count)
{
    return json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:s}", "count", count, "mean", mean,
                     "stdev", mean / 10, "p50", p50, "p99", p99, "p99_9", p99 * 1.5, "max",
                     p99 * 2, "unit", "ns");
}

/* The row with this key, or fail. */
static const json_t *row(const json_t *rows, const char *key)
{
    size_t i;
    const json_t *r;
    json_array_foreach(rows, i, r) {
        if (strcmp(json_string_value(json_object_get(r, "key")), key) == 0)
            return r;
    }
    fprintf(stderr, "no row %s among:\n", key);
    json_array_foreach(rows, i, r)
        fprintf(stderr, "  %s\n", json_string_value(json_object_get(r, "key")));
    fail_msg("no row %s", key);
    return NULL;
}

static void unique_keys(const json_t *rows)
{
    size_t i, j;
    const json_t *a, *b;
    json_array_foreach(rows, i, a) {
        json_array_foreach(rows, j, b) {
            if (j <= i)
                continue;
            const char *ka = json_string_value(json_object_get(a, "key"));
            const char *kb = json_string_value(json_object_get(b, "key"));
            if (strcmp(ka, kb) == 0)
                fail_msg("key %s twice", ka);
        }
    }
}

static void net_lat(void **state)
{
    (void)state;
    json_t *hist = json_pack("{s:i, s:i, s:i, s:f, s:f, s:i, s:[[ii]]}", "count", 100, "min", 10,
                             "max", 90, "mean", 50.0, "m2", 1.0, "sub_bits", 7, "buckets", 900,
                             100);
    json_t *d = doc("net lat", json_pack("{s:s, s:n}", "transport", "tcp", "provider"),
                    json_pack("{s:s, s:[{s:i, s:o, s:o}]}", "test", "lat", "sizes", "size_bytes",
                              8, "latency", stats(27000, 26900, 38000, 5754), "rtt_histogram",
                              hist),
                    true);
    tp_error err;
    json_t *rows = tp_report_metrics(d, &err);
    assert_non_null(rows);
    unique_keys(rows);
    const json_t *r = row(rows, "net.lat.latency.p99{size=8,transport=tcp}");
    assert_true(json_real_value(json_object_get(r, "value")) == 38000);
    assert_string_equal(json_string_value(json_object_get(r, "unit")), "ns");
    assert_string_equal(json_string_value(json_object_get(r, "better")), "lower");
    r = row(rows, "net.lat.latency.p50{size=8,transport=tcp}");
    assert_non_null(json_object_get(r, "histogram"));
    assert_true(json_number_value(json_object_get(json_object_get(r, "stats"), "count")) == 5754);
    assert_string_equal(json_string_value(json_object_get(json_object_get(r, "labels"), "size")),
                        "8");
    r = row(rows, "run.ok{command=net lat}");
    assert_true(json_real_value(json_object_get(r, "value")) == 1);
    json_decref(rows);
    json_decref(d);
}

/* The counters beside a run become one row a cause, the sum of its
 * evidence over the run's nodes (links counted for the PCIe causes), 0
 * when nothing moved, and the connections' retransmits; counters that
 * could not be read give no such rows. */
static void counter_rows(void **state)
{
    (void)state;
    json_t *c = json_pack(
        "{s:f, s:i, s:[], s:[], s:[], s:[], s:[], s:[], s:["
        "{s:s, s:s, s:[{s:s, s:s, s:s, s:i}, {s:s, s:s, s:s, s:i}]},"
        "{s:s, s:s, s:[{s:s, s:s, s:s, s:i, s:i}]}]}",
        "window_s", 1.5, "counters_read", 300, "changed", "reset", "levels", "gone", "new",
        "links", "causes", "cause", "loss", "text", "t", "evidence", "dev", "Tcp", "source",
        "tcp", "name", "RetransSegs", "delta", 24, "dev", "TcpExt", "source", "tcp", "name",
        "TCPTimeouts", "delta", 3, "cause", "downtrained", "text", "t", "evidence", "dev",
        "0000:3b:00.0", "source", "pcie", "name", "link", "speed_mts", 8000, "width", 8);
    json_t *d = doc("net bw", json_pack("{s:s}", "transport", "tcp"),
                    json_pack("{s:s, s:[], s:o, s:[{s:i}, {s:i}]}", "test", "bw", "sizes",
                              "counters", c, "connections", "total_retrans", 20, "total_retrans",
                              4),
                    true);
    /* the server's node's counters count too */
    json_object_set_new(json_object_get(d, "results"), "peer_counters",
                        json_pack("{s:[{s:s, s:s, s:[{s:s, s:s, s:s, s:i}]}]}", "causes", "cause",
                                  "errors", "text", "t", "evidence", "dev", "eth0", "source",
                                  "ethtool", "name", "rx_crc_errors_phy", "delta", 2));
    tp_error err;
    json_t *rows = tp_report_metrics(d, &err);
    assert_non_null(rows);
    unique_keys(rows);
    static const struct {
        const char *key;
        double v;
    } want[] = {
        {"counters.loss{command=net bw}", 27},     {"counters.downtrained{command=net bw}", 1},
        {"counters.errors{command=net bw}", 2},    {"counters.flap{command=net bw}", 0},
        {"counters.throttled{command=net bw}", 0}, {"counters.tcp_retrans{command=net bw}", 24},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const json_t *r = row(rows, want[i].key);
        assert_true(json_number_value(json_object_get(r, "value")) == want[i].v);
        assert_string_equal(json_string_value(json_object_get(r, "better")), "lower");
    }
    json_decref(rows);
    json_object_set_new(json_object_get(d, "results"), "counters",
                        json_pack("{s:s}", "error", "could not be read"));
    rows = tp_report_metrics(d, &err);
    assert_non_null(rows);
    size_t i;
    const json_t *r;
    json_array_foreach(rows, i, r)
        assert_null(strstr(json_string_value(json_object_get(r, "key")), "counters."));
    json_decref(rows);
    json_decref(d);
}

static void coll_and_step(void **state)
{
    (void)state;
    json_t *d = doc("coll", json_pack("{s:s, s:i, s:s}", "op", "allreduce", "ranks", 2,
                                      "transport", "tcp"),
                    json_pack("{s:[{s:i, s:o, s:{s:f, s:s}, s:{s:f, s:s}, s:i, s:o}], s:[]}",
                              "sizes", "size_bytes", 1048576, "time",
                              stats(88943, 86800, 120000, 2000), "busbw", "value", 11.8e9, "unit",
                              "B/s", "algbw", "value", 11.8e9, "unit", "B/s", "wrong", 0,
                              "arrival_skew", stats(2000, 1900, 2400, 2000), "fit"),
                    true);
    tp_error err;
    json_t *rows = tp_report_metrics(d, &err);
    unique_keys(rows);
    const json_t *r = row(rows, "coll.busbw{op=allreduce,ranks=2,size=1048576,transport=tcp}");
    assert_true(json_real_value(json_object_get(r, "value")) == 11.8e9);
    assert_string_equal(json_string_value(json_object_get(r, "better")), "higher");
    row(rows, "coll.wrong{op=allreduce,ranks=2,size=1048576,transport=tcp}");
    json_decref(rows);
    json_decref(d);

    /* one run through two backends (--backend trainpath,nccl --mem cuda): the
     * rows stay apart, and trainpath from host memory keeps its old key */
    d = doc("coll", json_pack("{s:s, s:i, s:s}", "op", "allreduce", "ranks", 2, "transport",
                              "tcp"),
            json_pack("{s:[{s:i, s:s, s:s, s:{s:f, s:s}}, {s:i, s:s, s:s, s:{s:f, s:s}},"
                      " {s:i, s:s, s:s, s:{s:f, s:s}}], s:[]}",
                      "sizes", "size_bytes", 1048576, "backend", "trainpath", "mem", "host",
                      "busbw", "value", 10e9, "unit", "B/s", "size_bytes", 1048576, "backend",
                      "trainpath", "mem", "cuda", "busbw", "value", 7e9, "unit", "B/s",
                      "size_bytes", 1048576, "backend", "nccl", "mem", "cuda", "busbw", "value",
                      90e9, "unit", "B/s", "fit"),
            true);
    rows = tp_report_metrics(d, &err);
    unique_keys(rows);
    r = row(rows, "coll.busbw{op=allreduce,ranks=2,size=1048576,transport=tcp}");
    assert_true(json_real_value(json_object_get(r, "value")) == 10e9);
    r = row(rows, "coll.busbw{mem=cuda,op=allreduce,ranks=2,size=1048576,transport=tcp}");
    assert_true(json_real_value(json_object_get(r, "value")) == 7e9);
    r = row(rows, "coll.busbw{backend=nccl,mem=cuda,op=allreduce,ranks=2,size=1048576,"
                  "transport=tcp}");
    assert_true(json_real_value(json_object_get(r, "value")) == 90e9);
    json_decref(rows);
    json_decref(d);

    d = doc("step", json_pack("{s:s, s:i}", "preset", "resnet50", "ranks", 2),
            json_pack("{s:[{s:o, s:{s:f, s:f, s:f, s:f, s:{s:f, s:s}}}], s:{s:b}}", "runs",
                      "step_time", stats(12e6, 11.9e6, 19e6, 50), "summary", "amplification",
                      1.03, "exposed_comm_fraction", 0.15, "ckpt_overhead_fraction", 0.0,
                      "data_wait_fraction", 0.0, "goodput", "value", 41000.0, "unit",
                      "samples/s", "reproducibility", "identical", 1),
            true);
    rows = tp_report_metrics(d, &err);
    unique_keys(rows);
    r = row(rows, "step.time.mean{preset=resnet50,ranks=2}");
    assert_true(json_real_value(json_object_get(r, "value")) == 12e6);
    r = row(rows, "step.goodput{preset=resnet50,ranks=2}");
    assert_string_equal(json_string_value(json_object_get(r, "unit")), "samples/s");
    r = row(rows, "step.repro.identical{preset=resnet50,ranks=2}");
    assert_true(json_real_value(json_object_get(r, "value")) == 1);
    json_decref(rows);
    json_decref(d);
}

static void failed_run(void **state)
{
    (void)state;
    json_t *d = doc("net lat", json_object(), json_pack("{s:[{s:i, s:o}]}", "sizes", "size_bytes",
                                                        8, "latency", stats(1, 1, 1, 1)),
                    false);
    tp_error err;
    json_t *rows = tp_report_metrics(d, &err);
    assert_int_equal(json_array_size(rows), 1);
    const json_t *r = row(rows, "run.ok{command=net lat}");
    assert_true(json_real_value(json_object_get(r, "value")) == 0);
    json_decref(rows);
    json_decref(d);
}

static void check_and_plan(void **state)
{
    (void)state;
    json_t *d = doc("check", json_object(),
                    json_pack("{s:{s:i, s:i, s:i, s:i}, s:{s:i, s:s}, s:[{s:s, s:s}, {s:s, s:s}]}",
                              "summary", "pass", 10, "warn", 1, "fail", 2, "skip", 3, "nagios",
                              "code", 2, "word", "CRITICAL", "findings", "id", "NET-RPF-DATA",
                              "status", "FAIL", "id", "CPU-GOVERNOR", "status", "SKIP"),
                    true);
    tp_error err;
    json_t *rows = tp_report_metrics(d, &err);
    unique_keys(rows);
    assert_true(json_real_value(json_object_get(row(rows, "check.fail"), "value")) == 2);
    assert_true(json_real_value(json_object_get(row(rows, "check.nagios"), "value")) == 2);
    assert_true(json_real_value(json_object_get(row(rows, "check.rule.pass{rule=NET-RPF-DATA}"),
                                                "value")) == 0);
    /* a skipped rule says nothing about the node */
    size_t i;
    const json_t *r;
    json_array_foreach(rows, i, r)
        assert_null(strstr(json_string_value(json_object_get(r, "key")), "CPU-GOVERNOR"));
    json_decref(rows);
    json_decref(d);

    d = doc("plan", json_object(),
            json_pack("{s:[{s:s, s:i, s:{s:f, s:s}, s:f, s:{s:f, s:s}, s:{s:{s:f, s:s}}}]}",
                      "candidates", "name", "ib", "gpus", 1024, "step", "value", 1.87, "unit",
                      "s", "exposed_fraction", 0.03, "time_to_train", "value", 1e5, "unit", "s",
                      "cost", "total", "value", 83099.0, "unit", "$"),
            true);
    rows = tp_report_metrics(d, &err);
    unique_keys(rows);
    r = row(rows, "plan.cost{candidate=ib,gpus=1024}");
    assert_true(json_real_value(json_object_get(r, "value")) == 83099);
    assert_string_equal(json_string_value(json_object_get(r, "unit")), "$");
    json_decref(rows);
    json_decref(d);
}

static void provenance_and_load(void **state)
{
    (void)state;
    json_t *d = doc("net lat", json_pack("{s:i}", "a", 1), json_object(), true);
    json_t *p = tp_report_provenance(d);
    assert_string_equal(json_string_value(json_object_get(p, "host")), "node1");
    assert_string_equal(json_string_value(json_object_get(p, "command")), "net lat");
    const char *id1 = json_string_value(json_object_get(p, "config_id"));
    assert_int_equal(strlen(id1), 16);
    json_t *d2 = doc("net lat", json_pack("{s:i}", "a", 2), json_object(), true);
    json_t *p2 = tp_report_provenance(d2);
    assert_string_not_equal(id1, json_string_value(json_object_get(p2, "config_id")));
    json_decref(p);
    json_decref(p2);
    json_decref(d2);

    char dir[64], path[96], bad[96];
    assert_int_equal(tp_test_mkdtemp(dir, sizeof dir, "tp_metrics"), 0);
    snprintf(path, sizeof path, "%s/doc.json", dir);
    assert_int_equal(json_dump_file(d, path, 0), 0);
    tp_test_write(dir, "bad.json", "{\"x\": 1}", bad, sizeof bad);
    json_t *back = NULL;
    tp_error err;
    assert_int_equal(tp_report_load(path, &back, &err), 0);
    json_decref(back);
    assert_int_equal(tp_report_load(bad, &back, &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "bad.json: not a trainpath result document"));
    assert_int_equal(tp_report_load("/nonexistent/x.json", &back, &err), TP_EUSAGE);
    assert_int_equal(tp_test_rmtree(dir), 0);
    json_decref(d);
}

/* A folder gives its result documents in name order and skips the rest; a
 * file named on its own must be one; the rows of many documents carry each
 * document's host, or the one given. */
static void docs_and_rows(void **state)
{
    (void)state;
    char dir[64], sub[96], path[128], bad[128];
    assert_int_equal(tp_test_mkdtemp(dir, sizeof dir, "tp_docs"), 0);
    snprintf(sub, sizeof sub, "%s/results", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    json_t *b = doc("check", json_object(), json_object(), true);
    json_object_set_new(json_object_get(b, "provenance"), "host", json_string("node2"));
    json_t *a = doc("net lat", json_object(), json_object(), false);
    json_object_del(a, "provenance");
    snprintf(path, sizeof path, "%s/b.json", sub);
    assert_int_equal(json_dump_file(b, path, 0), 0);
    snprintf(path, sizeof path, "%s/a.json", sub);
    assert_int_equal(json_dump_file(a, path, 0), 0);
    tp_test_write(sub, "c.json", "{\"not\": \"a result\"}", bad, sizeof bad);
    tp_test_write(sub, "notes.txt", "hello", path, sizeof path);

    const char *names[] = {sub};
    json_t **docs = NULL;
    size_t n = 0;
    tp_error err = {0};
    TP_EQ_INT(tp_report_docs_load(names, 1, &docs, &n, &err), 0);
    TP_EQ_INT(n, 2);
    snprintf(path, sizeof path, "%s/a.json", sub);
    TP_EQ_STR(json_string_value(json_object_get(docs[0], "_file")), path);
    TP_EQ_STR(json_string_value(json_object_get(docs[1], "command")), "check");

    json_t *rows = tp_report_rows(docs, n, NULL, &err);
    assert_non_null(rows);
    TP_EQ_INT(json_array_size(rows), 2); /* a run.ok each: the results are empty */
    assert_null(json_object_get(json_array_get(rows, 0), "host"));
    TP_EQ_STR(json_string_value(json_object_get(json_array_get(rows, 1), "host")), "node2");
    json_decref(rows);
    rows = tp_report_rows(docs, n, "h9", &err);
    size_t i;
    const json_t *r;
    json_array_foreach(rows, i, r)
        TP_EQ_STR(json_string_value(json_object_get(r, "host")), "h9");
    json_decref(rows);
    tp_report_docs_free(docs, n);

    const char *named[] = {sub, bad};
    TP_EQ_INT(tp_report_docs_load(named, 2, &docs, &n, &err), TP_EUSAGE);
    assert_null(docs);
    TP_EQ_INT(n, 0);
    TP_HAS(err.msg, "c.json: not a trainpath result document");
    const char *empty[] = {dir};
    TP_EQ_INT(tp_report_docs_load(empty, 1, &docs, &n, &err), TP_EUSAGE);
    TP_HAS(err.msg, "no result documents in /tmp/tp_docs_");
    TP_EQ_INT(tp_report_docs_load(NULL, 0, &docs, &n, &err), TP_EUSAGE);
    TP_HAS(err.msg, "no result documents in (none)");
    assert_int_equal(tp_test_rmtree(dir), 0);
    json_decref(a);
    json_decref(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(net_lat),
        cmocka_unit_test(counter_rows),
        cmocka_unit_test(coll_and_step),
        cmocka_unit_test(failed_run),
        cmocka_unit_test(check_and_plan),
        cmocka_unit_test(provenance_and_load),
        cmocka_unit_test(docs_and_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
