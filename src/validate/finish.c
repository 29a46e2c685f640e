/* validate across an allocation, rank 0's end: once every node's result
 * is in (collect.c took each in as it arrived), the fleet judged and the
 * rest of the results folder written, a function a job: the SDC screen's
 * judgement, fleet.json's lists of nodes, pairs and groups, the fleet's
 * judgement, the summary's lines, the plan (the test after the others),
 * fleet.json with --on-fail's actions and nodes.jsonl, the summary
 * printed, the history, Prometheus and the report. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp/intr.h"
#include "tp/judge.h"
#include "tp/report.h"
#include "tp/result.h"
#include "collect_int.h"
#include "validate_int.h"

/* One verdict per test across the nodes: the worst status, and who. */
static json_t *test_verdicts(json_t *gathered, const struct tp__validate_ctx *c, int *failed)
{
    json_t *v = json_array();
    for (int i = 0; i < c->tests.n; i++) {
        const struct tp_validate_test *t = &c->tests.t[i];
        if (!tp__validate_own(t))
            continue;
        int nfail = 0, nwarn = 0, nodes = 0;
        char who[400] = "", why[300] = "";
        bool same = true;
        size_t r, k;
        json_t *g, *e;
        json_array_foreach(gathered, r, g)
        {
            struct tp__validate_entry node;
            tp__validate_entry_read(g, &node);
            json_array_foreach(node.tests, k, e)
            {
                struct tp__validate_ran x;
                tp__validate_ran_read(e, &x);
                if (!x.test || strcmp(x.test, t->name) != 0)
                    continue;
                nodes++;
                const char *says = json_string_value(x.summary);
                nfail += x.st == TP__VALIDATE_FAIL;
                nwarn += x.st == TP__VALIDATE_WARN;
                if (x.st == TP__VALIDATE_PASS)
                    continue;
                if (!why[0])
                    snprintf(why, sizeof why, "%s", says);
                same &= strcmp(why, says) == 0;
                size_t len = strlen(who);
                if (len < 300)
                    snprintf(who + len, sizeof who - len, "%s%s", len ? ", " : "", node.label);
                else if (!strstr(who, "..."))
                    snprintf(who + len, sizeof who - len, ", ...");
            }
        }
        char summary[900];
        if (!who[0])
            snprintf(summary, sizeof summary, "%s: passed on all %d nodes", t->what, nodes);
        else
            snprintf(summary, sizeof summary, "%s: %s on %d of %d nodes (%s): %s%s", t->what,
                     tp__validate_status_name(nfail ? TP__VALIDATE_FAIL : TP__VALIDATE_WARN),
                     nfail + nwarn, nodes, who, why,
                     same ? "" : "; the others differ (see fleet.json)");
        *failed += nfail;
        enum tp__validate_status worst = nfail   ? TP__VALIDATE_FAIL
                                         : nwarn ? TP__VALIDATE_WARN
                                                 : TP__VALIDATE_PASS;
        json_array_append_new(v, json_pack("{s:s, s:s, s:s}", "name", t->name, "status",
                                           tp__validate_status_name(worst), "summary", summary));
    }
    return v;
}

/* What the triage named, in the nodes' labels, and what was done. */
static void print_triage(FILE *f, const struct tp__validate_node *nodes, int n,
                         const json_t *triage, const json_t *actions)
{
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(triage, "nodes_detail"), i, v)
    {
        int k = (int)json_integer_value(json_object_get(v, "node"));
        const char *st = json_string_value(json_object_get(v, "status"));
        if (k < 0 || k >= n || !st || strcmp(st, "pass") == 0)
            continue;
        fprintf(f, "node %s: %s (%s; %s): %s\n", nodes[k].label, st,
                json_string_value(json_object_get(v, "cause")),
                json_string_value(json_object_get(v, "action")),
                json_string_value(json_object_get(v, "says")));
    }
    json_array_foreach(actions, i, v)
        fprintf(f, "on-fail: %s\n", json_string_value(json_object_get(v, "says")));
    const json_t *counts = json_object_get(triage, "counts");
    const char *key;
    const json_t *cnt;
    fprintf(f, "verdicts:");
    json_object_foreach((json_t *)counts, key, cnt) if (json_integer_value(cnt))
        fprintf(f, " %s %lld", key, (long long)json_integer_value(cnt));
    fprintf(f, "\n");
}

/* The first document of test that node measured with a partner, as a
 * path relative to the results folder ("pairs/A--B/net-lat.json", "" if
 * none). */
static void first_pair_doc(const json_t *gathered, const char *node, const char *test, char *out,
                           size_t cap)
{
    size_t r, k;
    const json_t *g, *e;
    tp__validate_path(out, cap, "pairs/%s--?/%s.json", node, test);
    json_array_foreach(gathered, r, g) json_array_foreach(json_object_get(g, "pairs"), k, e)
    {
        struct tp__validate_ran x;
        tp__validate_ran_read(e, &x);
        if (strcmp(x.test, test) != 0 || (strcmp(x.a, node) != 0 && strcmp(x.b, node) != 0) ||
            !x.has_doc)
            continue;
        char dir[TP__VALIDATE_PATH_MAX];
        tp__validate_pair_dir(NULL, &x, dir, sizeof dir);
        tp__validate_path(out, cap, "%s/%s.json", dir, test);
        return;
    }
}

/* The fleet document's nodes: every node of the allocation in rank order,
 * those whose result never reached rank 0 (a node lost before the gather
 * or in it) too, with "arrived"; by a tier each with its verdict's
 * "status", "stage" and "completed" (the tier's tests it completed).
 * Takes list. */
static json_t *every_node(json_t *list, const struct tp__validate_node *nodes, int n,
                          const json_t *triage)
{
    json_t *by = json_object(), *verdict = json_object(), *out = json_array();
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
        json_object_set(by, json_string_value(json_object_get(e, "label")), e);
    json_array_foreach(json_object_get(triage, "nodes_detail"), i, e)
    {
        int r = (int)json_integer_value(json_object_get(e, "node"));
        if (r >= 0 && r < n)
            json_object_set(verdict, nodes[r].label, e);
    }
    for (int r = 0; r < n; r++) {
        json_t *x = json_object_get(by, nodes[r].label), *v;
        if (x)
            json_incref(x);
        else
            x = json_pack("{s:s, s:n, s:s, s:[]}", "label", nodes[r].label, "host", "addr",
                          nodes[r].addr, "tests");
        json_object_set_new(x, "arrived", json_boolean(json_object_get(by, nodes[r].label)));
        if ((v = json_object_get(verdict, nodes[r].label))) {
            json_object_set(x, "status", json_object_get(v, "status"));
            json_object_set(x, "stage", json_object_get(v, "stage"));
            json_object_set(x, "completed", json_object_get(v, "tests"));
        }
        json_array_append_new(out, x);
    }
    json_decref(by);
    json_decref(verdict);
    json_decref(list);
    return out;
}

/* What the end builds, each job's part for the later ones. */
struct finish {
    struct tp__validate_collect *k;
    const json_t *triage; /* the tier's judgement, or NULL */
    int rounds;
    int rc; /* the first error, said once at the end */
    tp_error err;
    json_t *verdicts_of; /* the nodes' verdicts: the triage's with the SDC screen's */
    json_t *sdc;         /* fleet.json's "sdc" */
    json_t *html_docs;   /* what the report draws */
    json_t *node_list, *pair_list, *group_list; /* fleet.json's nodes, pairs and groups */
    int npairs, pair_fail, failed;
    json_t *judgement; /* tp_fleet_judge's */
    json_t *verdicts;  /* the summary's lines: each test, the pairs, the plan, the fleet */
    json_t *fdoc;      /* fleet.json */
    enum tp__validate_status fstatus;
    char fsum[1200];
};

/* The SDC screen across the nodes: a node named fails its sdc test and
 * gets its verdict, over the tier's or alone (verdicts: what the nodes'
 * lines, the fleet's nodes and --on-fail read), with the counters cited. */
static void judge_sdc(struct finish *f)
{
    const struct tp__validate_collect *k = f->k;
    f->verdicts_of = tp__validate_sdc_judge(k->sdc, k->nodes, k->gathered, f->triage, &f->sdc);
    const char **labels = calloc((size_t)(k->n > 0 ? k->n : 1), sizeof *labels);
    for (int r = 0; labels && r < k->n; r++)
        labels[r] = k->nodes[r].label;
    if (f->verdicts_of && labels)
        tp_validate_cite_counters(f->verdicts_of, k->gathered, labels, k->n);
    free(labels);
}

/* A node's own tests into fleet.json's nodes; rank 0's documents (r 0)
 * into the report's. */
static void list_tests(struct finish *f, size_t r, const struct tp__validate_entry *node)
{
    json_t *tl = json_array(), *e;
    size_t q;
    json_array_foreach(node->tests, q, e)
    {
        struct tp__validate_ran x;
        tp__validate_ran_read(e, &x);
        json_t *te = json_pack("{s:s, s:s, s:O, s:O}", "test", x.test, "status", x.status,
                               "summary", x.summary, "seconds", x.seconds);
        if (x.counters)
            json_object_set(te, "counters", x.counters);
        json_array_append_new(tl, te);
        if (r == 0 && json_is_object(x.doc))
            json_array_append(f->html_docs, x.doc);
    }
    json_array_append_new(f->node_list,
                          json_pack("{s:s, s:s?, s:s?, s:o}", "label", node->label, "host",
                                    node->host, "addr", node->addr, "tests", tl));
}

/* A node's pair measurements into fleet.json's pairs and their judged
 * rows into fleet.jsonl; rank 0's first round's documents into the
 * report's. */
static void list_pairs(struct finish *f, size_t r, const struct tp__validate_entry *node)
{
    struct tp__validate_ran first;
    tp__validate_ran_read(json_array_get(node->pairs, 0), &first);
    json_t *e;
    size_t q;
    json_array_foreach(node->pairs, q, e)
    {
        struct tp__validate_ran x;
        tp__validate_ran_read(e, &x);
        f->npairs++;
        f->pair_fail += x.st != TP__VALIDATE_PASS;
        json_t *pe = json_pack("{s:O, s:s, s:s, s:s, s:s, s:O, s:O}", "round", x.round, "a", x.a,
                               "b", x.b, "test", x.test, "status", x.status, "summary", x.summary,
                               "seconds", x.seconds);
        if (x.stage)
            json_object_set(pe, "stage", x.stage);
        if (x.counters)
            json_object_set(pe, "counters", x.counters);
        json_array_append_new(f->pair_list, pe);
        if (!x.has_doc)
            continue;
        /* the report draws the first pair of rank 0 */
        if (r == 0 && json_integer_value(x.round) == json_integer_value(first.round))
            json_array_append(f->html_docs, x.doc);
        if (!f->rc)
            f->rc = tp__validate_pair_rows(&f->k->fo, f->k->index, &x, &f->err);
    }
}

/* The tiers' collectives across nodes into fleet.json's groups: each
 * group's rank 0 has the document; a member's failure is its group's,
 * said once per member. */
static void list_groups(struct finish *f, const struct tp__validate_entry *node)
{
    json_t *e;
    size_t q;
    json_array_foreach(node->groups, q, e)
    {
        struct tp__validate_ran x;
        tp__validate_ran_read(e, &x);
        if (!x.has_doc) {
            if (x.st != TP__VALIDATE_PASS)
                json_array_append_new(f->group_list, json_deep_copy(e));
            continue;
        }
        json_t *ge = json_deep_copy(e);
        json_object_del(ge, "doc");
        json_array_append_new(f->group_list, ge);
    }
}

/* fleet.jsonl committed, and the fleet judged from its rows. */
static void judge_fleet(struct finish *f)
{
    if (!f->rc)
        f->rc = tp__validate_fleet_commit(f->k, &f->err);
    f->judgement = f->rc ? NULL : tp_fleet_judge(f->k->fo.data, NULL, &f->err);
    if (!f->rc && !f->judgement)
        f->rc = f->err.code;
}

/* The summary's line per test across the nodes, and the pairs'. */
static void verdict_lines(struct finish *f)
{
    const struct tp__validate_collect *k = f->k;
    f->verdicts = test_verdicts(k->gathered, k->c, &f->failed);
    if (tp__validate_any_between(k->c)) {
        char summary[300];
        int len = snprintf(summary, sizeof summary, "%d measurements between %d nodes in %d rounds",
                           f->npairs, k->n, f->rounds);
        if (f->pair_fail && len < (int)sizeof summary)
            snprintf(summary + len, sizeof summary - (size_t)len,
                     "; %d did not run or failed (see fleet.json)", f->pair_fail);
        json_array_append_new(f->verdicts,
                              json_pack("{s:s, s:s, s:s}", "name", "pairs", "status",
                                        tp__validate_status_name(f->pair_fail ? TP__VALIDATE_FAIL
                                                                              : TP__VALIDATE_PASS),
                                        "summary", summary));
    }
    f->failed += f->pair_fail;
}

/* The tests after the others (the plan): this allocation, fed with rank
 * 0's documents of its inputs (the network's from its first pair). */
static void run_after(struct finish *f)
{
    struct tp__validate_ctx *c = f->k->c;
    const struct tp__validate_node *nodes = f->k->nodes;
    for (int i = 0; i < c->tests.n; i++) {
        struct tp_validate_test *t = &c->tests.t[i];
        const struct tp_validate_inputs *in = t->inputs;
        if (!in)
            continue;
        char lat[TP__VALIDATE_PATH_MAX], bw[TP__VALIDATE_PATH_MAX], coll[TP__VALIDATE_PATH_MAX],
            io[TP__VALIDATE_PATH_MAX];
        first_pair_doc(f->k->gathered, nodes[0].label, in->net_lat, lat, sizeof lat);
        first_pair_doc(f->k->gathered, nodes[0].label, in->net_bw, bw, sizeof bw);
        tp__validate_path(coll, sizeof coll, "nodes/%s/%s.json", nodes[0].label, in->coll);
        tp__validate_path(io, sizeof io, "nodes/%s/%s.json", nodes[0].label, in->io);
        enum tp__validate_status st = TP__VALIDATE_FAIL;
        if (tp__validate_write_plan(c, f->k->n, 2, lat, bw, coll, io) < 0) {
            t->rc = -1;
            snprintf(t->why, sizeof t->why, "cannot write the plan: %s", strerror(errno));
        } else {
            st = tp__validate_run_test(c, t, c->outdir, NULL, NULL);
        }
        f->failed += st == TP__VALIDATE_FAIL;
        json_array_append_new(f->verdicts,
                              json_pack("{s:s, s:s, s:s, s:f}", "name", t->name, "status",
                                        tp__validate_status_name(st), "summary",
                                        t->why[0] ? t->why : t->what, "seconds", t->took_s));
        char path[TP__VALIDATE_PATH_MAX];
        tp__validate_path(path, sizeof path, "%s/%s.json", c->outdir, t->name);
        json_t *doc = NULL;
        tp_error lerr; /* its document may be missing: the test's line says why */
        if (tp_report_load(path, &doc, &lerr) == 0) {
            tp__validate_hist_add(&f->k->hist, doc);
            json_array_append_new(f->html_docs, doc);
        }
    }
}

/* The fleet's status and its summary: without a tier, tp_fleet_judge's
 * (its first line); by a tier the triage's, what it named measured again
 * alone. */
static void fleet_status(struct finish *f)
{
    const json_t *judgement = f->judgement, *triage = f->triage;
    json_int_t slow = json_integer_value(json_object_get(judgement, "slow_nodes")) +
                      json_integer_value(json_object_get(judgement, "slow_links"));
    json_int_t worse = json_integer_value(json_object_get(judgement, "worse"));
    f->fstatus = slow ? TP__VALIDATE_FAIL : worse ? TP__VALIDATE_WARN : TP__VALIDATE_PASS;
    const json_t *counts = json_object_get(triage, "counts");
    /* a node lost or never joined was not validated: the run fails */
    json_int_t named = json_array_size(json_object_get(triage, "named")) +
                       json_integer_value(json_object_get(counts, "lost")) +
                       json_integer_value(json_object_get(counts, "missing"));
    /* and the SDC screen's (without a tier its failed test says it) */
    named += (json_int_t)json_array_size(json_object_get(f->sdc, "named"));
    json_int_t unsure = json_integer_value(json_object_get(counts, "suspect")) +
                        json_integer_value(json_object_get(counts, "error"));
    if (triage)
        f->fstatus = named ? TP__VALIDATE_FAIL : unsure ? TP__VALIDATE_WARN : TP__VALIDATE_PASS;
    char *words = NULL;
    size_t wl = 0;
    FILE *wf = open_memstream(&words, &wl);
    if (wf) {
        tp_fleet_print(wf, judgement);
        fclose(wf);
    }
    snprintf(f->fsum, sizeof f->fsum, "%.*s", words ? (int)strcspn(words, "\n") : 0,
             words ? words : "");
    free(words);
    json_int_t nlost = json_integer_value(json_object_get(counts, "lost")) +
                       json_integer_value(json_object_get(counts, "missing"));
    const char *partial = json_string_value(json_object_get(triage, "partial"));
    if (triage)
        snprintf(f->fsum, sizeof f->fsum,
                 "%s tier: %d rounds (%d of isolation); %d named%s%s%s%.500s", f->k->c->tier,
                 f->rounds, (int)json_integer_value(json_object_get(triage, "rounds_isolation")),
                 (int)named, unsure ? ", some unsettled (see nodes.jsonl)" : "",
                 nlost && !partial
                     ? ", lost or missing nodes left out, the others validated to the end"
                     : "",
                 partial ? "; " : "", partial ? partial : "");
}

/* The fleet's judgement as a document of its own, fleet.json (with
 * --on-fail's actions and nodes.jsonl where there are verdicts); its
 * status is the process's exit: a run that fails the fleet (a node named,
 * lost or missing, a test failed) is not ok. */
static void fleet_doc(struct finish *f, const tp_error *stopped)
{
    struct tp__validate_ctx *c = f->k->c;
    const struct tp__validate_node *nodes = f->k->nodes;
    const json_t *triage = f->triage;
    int n = f->k->n;
    const char *partial = json_string_value(json_object_get(triage, "partial"));
    json_t *fdoc = f->fdoc =
        tp_result_new("fleet", json_pack("{s:s, s:s?, s:i, s:i}", "profile", c->profile, "only",
                                         c->only, "nodes", n, "rounds", f->rounds));
    json_t *res = json_pack("{s:i, s:i, s:i, s:o, s:o, s:O, s:O}", "node_count", n, "failed_tests",
                            f->failed, "rounds", f->rounds, "nodes", f->node_list, "pairs",
                            f->pair_list, "matrix", f->k->fo.matrix, "judgement", f->judgement);
    f->node_list = f->pair_list = NULL;
    if (f->sdc)
        json_object_set(res, "sdc", f->sdc);
    if (f->verdicts_of) {
        /* the verdicts, each node a line; and what --on-fail did */
        json_t *acts = tp__validate_onfail(c, nodes, n, f->verdicts_of);
        json_object_set_new(res, "actions", acts ? acts : json_array());
        if (!f->rc)
            f->rc = tp__validate_node_lines(c, nodes, n, f->verdicts_of, triage ? c->tier : NULL,
                                            &f->err);
    }
    if (triage) {
        json_object_set_new(res, "tier", json_string(c->tier));
        if (partial) /* the run stopped: the documents of the nodes not gathered are not here */
            json_object_set_new(res, "partial", json_string(partial));
        json_object_set_new(res, "groups", f->group_list);
        json_object_set(res, "triage", f->verdicts_of);
        f->group_list = NULL;
    }
    json_object_set_new(fdoc, "results", res);
    /* an interrupt in the actions (a drain waiting on slurmctld) is
     * the run's end too: the document says so */
    tp_error intr = {0};
    if (!stopped && tp_intr_check(&intr))
        stopped = &intr;
    bool fails = f->failed || f->fstatus == TP__VALIDATE_FAIL;
    char fwhy[1300];
    snprintf(fwhy, sizeof fwhy, "%s%s%.1200s", f->failed ? "a test failed" : "",
             f->failed && f->fsum[0] ? "; " : "", f->fsum);
    tp_result_finish(fdoc,
                     stopped ? stopped->code
                     : fails ? TP_ECHECK
                             : 0,
                     stopped ? stopped->msg
                     : fails ? fwhy
                             : NULL);
    char path[TP__VALIDATE_PATH_MAX];
    tp__validate_path(path, sizeof path, "%s/fleet.json", c->outdir);
    if (!f->rc)
        f->rc = tp_result_write(fdoc, path, &f->err);
    tp__validate_hist_add(&f->k->hist, fdoc);
    json_array_append(f->html_docs, fdoc);
    json_array_append_new(f->verdicts,
                          json_pack("{s:s, s:s, s:s}", "name", "fleet", "status",
                                    tp__validate_status_name(f->fstatus), "summary", f->fsum));
}

/* The summary on stdout: a line per verdict, what the triage named, the
 * files. */
static void print_summary(const struct finish *f)
{
    const struct tp__validate_ctx *c = f->k->c;
    const json_t *triage = f->triage, *verdicts_of = f->verdicts_of;
    printf("# trainpath validate --profile %s: %d nodes, %d rounds %s%s, in %.0f s\n", c->profile,
           f->k->n, f->rounds, triage ? "by the tier " : "of pairs", triage ? c->tier : "",
           tp__validate_now_s() - c->t0);
    size_t i;
    json_t *v;
    json_array_foreach(f->verdicts, i, v)
    {
        const char *st = json_string_value(json_object_get(v, "status"));
        printf("%-4s %-20s %s\n", tp__validate_status_word(tp__validate_status_of(st)),
               json_string_value(json_object_get(v, "name")),
               json_string_value(json_object_get(v, "summary")));
    }
    if (verdicts_of)
        print_triage(stdout, f->k->nodes, f->k->n, verdicts_of,
                     json_object_get(json_object_get(f->fdoc, "results"), "actions"));
    if (!triage && f->judgement)
        tp_fleet_print(stdout, f->judgement);
    printf("fleet: %s/fleet.jsonl, %s/fleet.json%s%s%s\n", c->outdir, c->outdir,
           verdicts_of ? ", " : "", verdicts_of ? c->outdir : "",
           verdicts_of ? "/nodes.jsonl" : "");
}

/* The history and Prometheus: every node's rows, with its label as host;
 * the report: rank 0's node, its first pair, the plan and the fleet (the
 * history has every document already). Returns tp__validate_outputs's. */
static int finish_outputs(struct finish *f)
{
    tp_error err;
    json_t *rows = json_copy(json_object_get(f->k->fo.data, "rows"));
    if (f->fdoc) {
        json_t *fr = tp_report_metrics(f->fdoc, &err);
        if (fr)
            json_array_extend(rows, fr);
        json_decref(fr);
    }
    size_t nh = json_array_size(f->html_docs);
    const json_t **hdocs = calloc(nh + 1, sizeof *hdocs);
    for (size_t i = 0; hdocs && i < nh; i++)
        hdocs[i] = json_array_get(f->html_docs, i);
    int orc =
        hdocs ? tp__validate_outputs(f->k->c, &f->k->hist, NULL, 0, hdocs, nh, rows, f->verdicts)
              : 1;
    free(hdocs);
    json_decref(rows);
    return orc;
}

int tp__validate_collect_finish(struct tp__validate_collect *k, const json_t *triage,
                                const tp_error *stopped)
{
    struct finish f = {
        .k = k,
        .triage = triage,
        .rounds = (int)json_integer_value(json_object_get(triage, "rounds_total")),
        .html_docs = json_array(),
        .node_list = json_array(),
        .pair_list = json_array(),
        .group_list = json_array(),
        .fstatus = TP__VALIDATE_FAIL, /* without a judgement */
    };
    f.rc = k->rc ? tp__validate_collect_error(k, &f.err) : 0;
    if (!f.rc && (!f.html_docs || !f.node_list || !f.pair_list || !f.group_list))
        f.rc = tp_error_set(&f.err, TP_ENOMEM, "out of memory");
    judge_sdc(&f);
    size_t r;
    json_t *g;
    json_array_foreach(k->gathered, r, g)
    {
        struct tp__validate_entry node;
        tp__validate_entry_read(g, &node);
        list_tests(&f, r, &node);
        list_pairs(&f, r, &node);
        list_groups(&f, &node);
    }
    f.node_list = every_node(f.node_list, k->nodes, k->n, f.verdicts_of);
    judge_fleet(&f);
    verdict_lines(&f);
    run_after(&f);
    if (f.judgement) {
        fleet_status(&f);
        fleet_doc(&f, stopped);
    }
    if (!k->c->quiet)
        print_summary(&f);
    if (f.rc)
        tp__validate_fail(&f.err);
    int orc = finish_outputs(&f);
    json_decref(f.verdicts);
    json_decref(f.fdoc);
    json_decref(f.judgement);
    json_decref(f.node_list);
    json_decref(f.pair_list);
    json_decref(f.group_list);
    json_decref(f.html_docs);
    json_decref(f.sdc);
    json_decref(f.verdicts_of);
    return f.rc || orc || f.failed || f.fstatus == TP__VALIDATE_FAIL ? 1 : 0;
}
