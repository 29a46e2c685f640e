/* Fuzz target: reading a history (src/report/history.c), the SQLite file a
 * user points `report history` and `report baselines` at with --db. The
 * file may be damaged or not ours at all, so the input is the database file
 * itself (the committed corpus holds real histories written by `trainpath
 * report add`, with 512-byte pages to keep them small). It is opened
 * read-only, as the report commands do, and read the way they read it:
 * the runs, every baseline (all hosts, then one host), the baseline and
 * the history of a few of the keys found, by key, by metric and labels,
 * and the last two points, printed as the commands print them.
 *
 * Beyond the sanitizers: an error names the database file and is never
 * trainpath's own "out of memory" (these inputs are small: such an error
 * would hide what really went wrong); what is read back is well-formed: run ids and counts
 * are integers, a baseline has kept <= samples <= the runs asked for and
 * its value between its min and max, a history by key has only that key
 * and no more points than asked for. */
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "tp/history.h"

static char path[4096];

static void check_error(int rc, const tp_error *err, const char *what)
{
    /* trainpath's own "FILE: out of memory" (a JSON value it could not
     * make); SQLite's, "FILE: WHAT: out of memory", is its word on a
     * damaged file (a record that claims a huge size) and is let pass */
    char own[4200];
    snprintf(own, sizeof own, "%s: out of memory", path);
    FZ_ASSERT(rc != TP_ENOMEM || strcmp(err->msg, own) != 0,
              "%s: 'out of memory' on a small input: %s", what, err->msg);
    FZ_ASSERT(strncmp(err->msg, path, strlen(path)) == 0, "%s: error %d does not name the file: %s",
              what, rc, err->msg);
}

static void check_runs(const json_t *runs)
{
    FZ_ASSERT(json_is_array(runs), "runs is not an array");
    size_t i;
    const json_t *r;
    json_array_foreach(runs, i, r)
    {
        (void)fz_int(r, "run_id");
        FZ_ASSERT(fz_int(r, "metrics") >= 0, "run %zu: negative metrics count", i);
        FZ_ASSERT(json_is_boolean(json_object_get(r, "ok")), "run %zu: ok is not a boolean", i);
    }
}

static void check_baseline(const json_t *b, size_t runs)
{
    FZ_ASSERT(json_is_string(json_object_get(b, "key")), "baseline without a key");
    FZ_ASSERT(json_is_object(json_object_get(b, "labels")), "baseline labels not an object");
    long long samples = fz_int(b, "samples"), kept = fz_int(b, "kept");
    FZ_ASSERT(kept >= 1 && kept <= samples && (size_t)samples <= runs,
              "baseline %s: kept %lld of %lld samples, over %zu runs",
              json_string_value(json_object_get(b, "key")), kept, samples, runs);
    double v = json_number_value(json_object_get(b, "value"));
    double lo = json_number_value(json_object_get(b, "min"));
    double hi = json_number_value(json_object_get(b, "max"));
    FZ_ASSERT(lo <= hi, "baseline min %g above max %g", lo, hi);
    double slack = 1e-9 * fmax(fabs(lo), fabs(hi));
    FZ_ASSERT(v >= lo - slack && v <= hi + slack, "baseline %g outside [%g, %g]", v, lo, hi);
}

/* the history of key, all of it and its last two points */
static void read_series(tp_history *h, const char *key, const json_t *labels, const char *metric)
{
    tp_error err;
    json_t *pts = NULL;
    struct tp_history_filter f = {.key = key};
    int rc = tp_history_series(h, &f, &pts, &err);
    if (rc) {
        check_error(rc, &err, "series");
        return;
    }
    size_t i;
    const json_t *p;
    json_array_foreach(pts, i, p)
    {
        (void)fz_int(p, "run_id");
        const char *k = json_string_value(json_object_get(p, "key"));
        FZ_ASSERT(k && strcmp(k, key) == 0, "series of %s has a point of %s", key, k ? k : "null");
        FZ_ASSERT(json_is_number(json_object_get(p, "value")), "point without a value");
    }
    tp_history_print_series(fz_null(), key, path, pts);
    json_decref(pts);

    f.last = 2;
    if ((rc = tp_history_series(h, &f, &pts, &err)) == 0) {
        FZ_ASSERT(json_array_size(pts) <= 2, "last 2 gave %zu points", json_array_size(pts));
        json_decref(pts);
    } else {
        check_error(rc, &err, "series, last 2");
    }

    if (metric) {
        /* by metric and labels, as `report history METRIC --label k=v` */
        bool strings = json_is_object(labels);
        const char *lk;
        const json_t *lv;
        json_object_foreach((json_t *)labels, lk, lv) strings = strings && json_is_string(lv);
        struct tp_history_filter m = {.metric = metric, .labels = strings ? labels : NULL};
        if ((rc = tp_history_series(h, &m, &pts, &err)) == 0)
            json_decref(pts);
        else
            check_error(rc, &err, "series by metric");
    }

    struct tp_baseline b;
    if ((rc = tp_history_baseline(h, key, NULL, &b, &err)) == 0)
        FZ_ASSERT(b.kept <= b.samples && b.samples <= TP_HISTORY_BASELINE_RUNS,
                  "baseline of %s: kept %zu of %zu", key, b.kept, b.samples);
    else
        check_error(rc, &err, "baseline");
}

static void read_baselines(tp_history *h, const char *host)
{
    tp_error err;
    json_t *bl = NULL;
    struct tp_history_scope scope = {.host = host, .runs = host ? 3 : 0};
    int rc = tp_history_baselines(h, &scope, &bl, &err);
    if (rc) {
        check_error(rc, &err, "baselines");
        return;
    }
    size_t i;
    const json_t *b;
    json_array_foreach(bl, i, b)
    {
        check_baseline(b, host ? 3 : TP_HISTORY_BASELINE_RUNS);
        if (!host && i < 3)
            read_series(h, json_string_value(json_object_get(b, "key")),
                        json_object_get(b, "labels"),
                        json_string_value(json_object_get(b, "metric")));
    }
    tp_history_print_baselines(fz_null(), bl);
    json_decref(bl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_write("history.sqlite", data, size, path);
    tp_error err;
    tp_history *h = NULL;
    int rc = tp_history_open_readonly(path, &h, &err);
    if (rc) {
        FZ_ASSERT(!h, "a handle after an error");
        check_error(rc, &err, "open");
        return 0;
    }
    json_t *runs = NULL;
    if ((rc = tp_history_runs(h, NULL, &runs, &err)) == 0) {
        check_runs(runs);
        const char *batch = json_string_value(json_object_get(json_array_get(runs, 0), "batch"));
        json_t *some = NULL;
        if (batch && (rc = tp_history_runs(h, batch, &some, &err)) == 0) {
            check_runs(some);
            json_decref(some);
        } else if (batch) {
            check_error(rc, &err, "runs of a batch");
        }
    } else {
        check_error(rc, &err, "runs");
    }
    read_baselines(h, NULL);
    read_baselines(h, json_string_value(json_object_get(json_array_get(runs, 0), "host")));
    json_decref(runs);
    tp_history_close(h);
    return 0;
}
