/* validate on this host alone: the tests one after the other, the net tests
 * against a server on loopback, the plan fed with this host's documents;
 * then the summary table and the outputs from the documents written. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tp/log.h"
#include "tp/report.h"
#include "validate_int.h"

/* The plan of this host, fed with the documents of its inputs, each
 * NAME.json beside it. Returns 0 or -1 (errno). */
static int write_plan(struct tp__validate_ctx *c, const struct tp_validate_inputs *in)
{
    char lat[256], bw[256], coll[256], io[256];
    snprintf(lat, sizeof lat, "%s.json", in->net_lat);
    snprintf(bw, sizeof bw, "%s.json", in->net_bw);
    snprintf(coll, sizeof coll, "%s.json", in->coll);
    snprintf(io, sizeof io, "%s.json", in->io);
    return tp__validate_write_plan(c, 1, 2, lat, bw, coll, io);
}

int tp__validate_host(struct tp__validate_ctx *c)
{
    tp_error err = {0};
    snprintf(c->addr, sizeof c->addr, "127.0.0.1");
    /* a collective across nodes is an allocation's (its tiers): not here */
    int kept = 0;
    for (int i = 0; i < c->tests.n; i++)
        if (c->tests.t[i].role != TP_VALIDATE_ACROSS)
            c->tests.t[kept++] = c->tests.t[i];
    c->tests.n = kept;
    if (tp__validate_any_between(c) && tp__validate_start_server(c, c->outdir, &err))
        return tp__validate_fail(&err);
    c->t0 = tp__validate_now_s();
    int failed = 0;
    json_t *verdicts = json_array();
    for (int i = 0; i < c->tests.n; i++) {
        struct tp_validate_test *t = &c->tests.t[i];
        double left = 0;
        for (int k = i; k < c->tests.n; k++)
            left += c->tests.t[k].expect_s;
        tp__validate_progress(c, i, c->tests.n, t->what, left);
        if (t->inputs && write_plan(c, t->inputs) < 0) {
            t->rc = -1;
            snprintf(t->why, sizeof t->why, "cannot write %.160s: %s", c->plan, strerror(errno));
        }
        enum tp__validate_status status =
            t->rc < 0 ? TP__VALIDATE_FAIL : tp__validate_run_test(c, t, c->outdir, NULL, NULL);
        failed += status == TP__VALIDATE_FAIL;
        json_array_append_new(verdicts, json_pack("{s:s, s:s, s:s, s:f}", "name", t->name, "status",
                                                  tp__validate_status_name(status), "summary",
                                                  t->why[0] ? t->why : t->what, "seconds",
                                                  t->took_s));
    }
    tp__validate_stop_server(c);
    tp__validate_progress_clear(c);

    /* the history and the report, from the documents written */
    json_t *docs[TP_VALIDATE_MAX_TESTS], *rows = json_array();
    size_t nd = 0;
    char causes[TP_VALIDATE_MAX_TESTS][160] = {{0}};
    for (int i = 0; i < c->tests.n; i++) {
        char json[TP__VALIDATE_PATH_MAX];
        tp__validate_path(json, sizeof json, "%s/%s.json", c->outdir, c->tests.t[i].name);
        tp_error lerr;
        if (tp_report_load(json, &docs[nd], &lerr) != 0) {
            /* a test that wrote no document has said so in its row; one
             * that wrote a document the report refuses must be named */
            if (access(json, F_OK) == 0)
                tp_log(TP_LOG_WARN, "%s: left out of the history and the report: %s", json,
                       lerr.msg);
            continue;
        }
        /* each row with its host (the document's), as report prometheus
         * and the history name it */
        json_t *r = tp_report_rows(&docs[nd], 1, NULL, &lerr);
        if (r)
            json_array_extend(rows, r);
        json_decref(r);
        /* the causes its counters name, beside its verdict and its line */
        json_t *cs = tp__validate_counter_causes(docs[nd]);
        size_t k;
        json_t *x;
        json_array_foreach(cs, k, x) {
            size_t len = strlen(causes[i]);
            const char *line = json_string_value(x), *colon = strchr(line, ':');
            snprintf(causes[i] + len, sizeof causes[i] - len, "%s%.*s", len ? ", " : "",
                     (int)(colon ? colon - line : (ptrdiff_t)strlen(line)), line);
        }
        if (json_array_size(cs))
            json_object_set(json_array_get(verdicts, (size_t)i), "counters", cs);
        json_decref(cs);
        nd++;
    }
    if (!c->quiet) {
        printf("# trainpath validate --profile %s: %d tests in %.0f s\n", c->profile, c->tests.n,
               tp__validate_now_s() - c->t0);
        for (int i = 0; i < c->tests.n; i++) {
            const struct tp_validate_test *t = &c->tests.t[i];
            printf("%-4s %-20s %6.1f s  %s%s%s%s\n",
                   tp__validate_status_word(tp__validate_status(t)), t->name, t->took_s, t->why[0] ? t->why : t->what,
                   causes[i][0] ? " (counters: " : "", causes[i], causes[i][0] ? ")" : "");
        }
    }
    int orc = tp__validate_outputs(c, NULL, (const json_t *const *)docs, nd, (const json_t *const *)docs,
                                   nd, rows, verdicts);
    for (size_t i = 0; i < nd; i++)
        json_decref(docs[i]);
    json_decref(rows);
    json_decref(verdicts);
    return failed || orc ? 1 : 0;
}
