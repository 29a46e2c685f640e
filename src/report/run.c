/* The work of each `trainpath report` subcommand, from the file names its
 * command line gives to the result the CLI prints: read the documents (or
 * the history, the thresholds, the fleet lines), hand them to the module
 * that judges them, free what was read. Nothing here prints, so each can
 * be called and checked without a terminal. */
#include <stdlib.h>
#include <string.h>

#include "tp/html.h"
#include "tp/json.h"
#include "tp/report.h"

int tp_report_add(const char *db, const char *const *names, size_t n, const char *batch,
                  size_t *added, size_t *read, tp_error *err)
{
    json_t **docs;
    size_t nd;
    tp_history *h = NULL;
    *added = *read = 0;
    int rc = tp_report_docs_load(names, n, &docs, &nd, err);
    if (rc == 0)
        rc = tp_history_open(db, &h, err);
    for (size_t i = 0; rc == 0 && i < nd; i++) {
        struct tp_history_added a;
        rc = tp_history_add_run(h, docs[i], tp_json_str(docs[i], "_file"), batch, &a, err);
        *added += rc == 0 && a.added;
    }
    tp_history_close(h);
    tp_report_docs_free(docs, nd);
    *read = nd;
    return rc;
}

int tp_report_history(const char *db, const struct tp_history_filter *f, json_t **points,
                      tp_error *err)
{
    tp_history *h = NULL;
    *points = NULL;
    int rc = tp_history_open_readonly(db, &h, err);
    if (rc == 0)
        rc = tp_history_series(h, f, points, err);
    tp_history_close(h);
    return rc;
}

int tp_report_baselines(const char *db, const struct tp_history_scope *scope, json_t **baselines,
                        tp_error *err)
{
    tp_history *h = NULL;
    *baselines = NULL;
    int rc = tp_history_open_readonly(db, &h, err);
    if (rc == 0)
        rc = tp_history_baselines(h, scope, baselines, err);
    tp_history_close(h);
    return rc;
}

json_t *tp_report_gate(const char *thresholds, const char *const *names, size_t n, tp_error *err)
{
    tp_gate *g = NULL;
    json_t **docs = NULL, *rows = NULL, *rep = NULL;
    size_t nd = 0;
    if (tp_gate_load(thresholds, &g, err) == 0 &&
        tp_report_docs_load(names, n, &docs, &nd, err) == 0 &&
        (rows = tp_report_rows(docs, nd, NULL, err)))
        rep = tp_gate_eval(g, rows, err);
    json_decref(rows);
    tp_report_docs_free(docs, nd);
    tp_gate_free(g);
    return rep;
}

json_t *tp_report_gate_unknown(const char *why)
{
    return json_pack("{s:i, s:s, s:i, s:i, s:i, s:i, s:i, s:[], s:s}", "code", TP_GATE_UNKNOWN,
                     "status", "UNKNOWN", "thresholds", 0, "pass", 0, "fail", 0, "missing", 0,
                     "unusable", 0, "results", "error", why ? why : "");
}

/* Whether the two documents of a diff can be compared at all: one command,
 * and runs that did not fail. */
static int comparable(const char *a, const json_t *da, const char *b, const json_t *db,
                      tp_error *err)
{
    const char *ca = tp_json_str(da, "command"), *cb = tp_json_str(db, "command");
    if (strcmp(ca, cb) != 0)
        return tp_error_set(err, TP_EUSAGE,
                            "%s is a '%s' result, %s a '%s' result: a diff compares two runs of "
                            "one command",
                            a, ca, b, cb);
    const char *files[] = {a, b};
    const json_t *docs[] = {da, db};
    for (int i = 0; i < 2; i++) {
        const json_t *st = json_object_get(docs[i], "status");
        if (!json_is_true(json_object_get(st, "ok"))) {
            const char *m = tp_json_str(st, "message");
            return tp_error_set(err, TP_EUSAGE,
                                "%s: the result of a failed run (%s): it has no figures to "
                                "compare",
                                files[i], m && *m ? m : "no message");
        }
    }
    return 0;
}

/* A diff that compared no figure (run.ok and the counters' rows aside:
 * they say how a run went, every run has them) is no diff: the two runs
 * measured different things (sizes, transports, ops). */
static int compared_figures(const char *a, const char *b, const json_t *d, tp_error *err)
{
    size_t i, n = 0;
    const json_t *r;
    json_array_foreach(json_object_get(d, "rows"), i, r) {
        const char *k = tp_json_str(r, "key");
        n += k && strncmp(k, "run.ok", 6) != 0 && strncmp(k, "counters.", 9) != 0;
    }
    if (n)
        return 0;
    const json_t *oa = json_object_get(d, "only_a"), *ob = json_object_get(d, "only_b");
    const char *ka = json_string_value(json_array_get(oa, 0));
    const char *kb = json_string_value(json_array_get(ob, 0));
    return tp_error_set(err, TP_EUSAGE,
                        "%s and %s have no figure in common: 0 rows compared (%zu only in %s, "
                        "e.g. %s; %zu only in %s, e.g. %s)",
                        a, b, json_array_size(oa), a, ka ? ka : "none", json_array_size(ob), b,
                        kb ? kb : "none");
}

json_t *tp_report_diff(const char *a, const char *b, const struct tp_diff_opts *opts, tp_error *err)
{
    json_t *da = NULL, *db = NULL, *d = NULL;
    if (tp_report_load(a, &da, err) == 0 && tp_report_load(b, &db, err) == 0 &&
        comparable(a, da, b, db, err) == 0)
        d = tp_diff_docs(da, db, opts, err);
    if (d && compared_figures(a, b, d, err)) {
        json_decref(d);
        d = NULL;
    }
    json_decref(da);
    json_decref(db);
    return d;
}

json_t *tp_report_fleet(const char *const *files, size_t n, tp_error *err)
{
    json_t *data = tp_fleet_new(), *j = NULL;
    int rc = data ? 0 : tp_error_set(err, TP_ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = tp_fleet_load(data, files[i], err);
    if (rc == 0)
        j = tp_fleet_judge(data, NULL, err);
    json_decref(data);
    return j;
}

int tp_report_html(const char *const *names, size_t n, const char *out, size_t *ndocs,
                   tp_error *err)
{
    json_t **docs;
    int rc = tp_report_docs_load(names, n, &docs, ndocs, err);
    if (rc == 0)
        rc = tp_html_report((const json_t *const *)docs, *ndocs, NULL, out, err);
    tp_report_docs_free(docs, *ndocs);
    return rc;
}

int tp_report_prometheus(const char *const *names, size_t n, const char *out, const char *host,
                         tp_error *err)
{
    json_t **docs, *rows = NULL;
    size_t nd;
    int rc = tp_report_docs_load(names, n, &docs, &nd, err);
    if (rc == 0 && !(rows = tp_report_rows(docs, nd, host, err)))
        rc = TP_ENOMEM;
    if (rc == 0)
        rc = tp_prom_write(out, rows, host, err);
    json_decref(rows);
    tp_report_docs_free(docs, nd);
    return rc;
}
