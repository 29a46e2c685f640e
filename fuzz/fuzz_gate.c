/* Fuzz target: threshold files (tp_gate_load), judged (tp_gate_eval) over
 * the metric rows of the seed result documents in fuzz/seeds/report (one
 * per command, every unit a row can have) and printed (tp_gate_print), as
 * `trainpath report --gate` does. The input is the thresholds' YAML. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "tp/judge.h"
#include "tp/report.h"

#define SEEDS TP_SOURCE_ROOT "/fuzz/seeds/report"

static json_t *rows;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    rows = json_array();
    DIR *d = opendir(SEEDS);
    FZ_ASSERT(d, "cannot open %s", SEEDS);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[4096];
        json_t *doc;
        tp_error err;
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", SEEDS, e->d_name);
        FZ_ASSERT(tp_report_load(path, &doc, &err) == 0, "%s", err.msg);
        json_t *r = tp_report_metrics(doc, &err);
        FZ_ASSERT(r, "%s: %s", path, err.msg);
        json_array_extend(rows, r);
        json_decref(r);
        json_decref(doc);
    }
    closedir(d);
    FZ_ASSERT(json_array_size(rows) > 20, "only %zu rows in %s", json_array_size(rows), SEEDS);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[4096];
    fz_write("thresholds.yaml", data, size, path);
    tp_error err;
    tp_gate *g = NULL;
    int rc = tp_gate_load(path, &g, &err);
    if (rc) {
        FZ_ASSERT(!g, "a gate returned with error %d", rc);
        fz_names_file(rc, &err, path);
        return 0;
    }
    FZ_ASSERT(g && tp_gate_size(g) >= 1, "a gate without thresholds");
    json_t *rep = tp_gate_eval(g, rows, &err);
    FZ_ASSERT(rep, "eval failed: %s", err.msg);
    long long code = fz_int(rep, "code"), n = fz_int(rep, "thresholds");
    long long sum = fz_int(rep, "pass") + fz_int(rep, "fail") + fz_int(rep, "missing") +
                    fz_int(rep, "unusable");
    FZ_ASSERT(code >= 0 && code <= 3, "code %lld", code);
    FZ_ASSERT(n == (long long)tp_gate_size(g), "thresholds %lld, gate holds %zu", n,
              tp_gate_size(g));
    FZ_ASSERT(sum == (long long)json_array_size(json_object_get(rep, "results")),
              "pass + fail + missing + unusable = %lld, %zu results", sum,
              json_array_size(json_object_get(rep, "results")));
    tp_gate_print(fz_null(), rep, true);
    json_decref(rep);

    /* and judged against no rows: every threshold is missing */
    json_t *none = json_array();
    rep = tp_gate_eval(g, none, &err);
    FZ_ASSERT(rep && fz_int(rep, "missing") == n, "with no rows, %lld of %lld missing",
              rep ? fz_int(rep, "missing") : -1, n);
    json_decref(rep);
    json_decref(none);
    tp_gate_free(g);
    return 0;
}
