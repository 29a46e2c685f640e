/* validate across an allocation, rank 0's part: every node's results
 * taken in as they arrive (tp_boot_gather_each), one node at a time, and
 * the results folder: nodes/NODE/, pairs/A--B/, groups/, fleet.jsonl (one
 * line per node and test, one per pair measurement: the input of `report
 * fleet`), fleet.json (the judgement), the plan, the history and the
 * report.
 *
 * Memory: a node's documents are written to the folder, added to the
 * history and to the fleet's rows as its result arrives, then dropped;
 * what stays is its entry (tests, pairs and groups with their status,
 * summary and the pairs' judged rows), a few KB, the fleet's metric rows
 * and, for the SDC screen, its chain where it differs from every chain
 * kept (sdc.c). Rank 0's own documents stay whole for the report. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tp/atomicfile.h"
#include "tp/history.h"
#include "tp/intr.h"
#include "tp/judge.h"
#include "tp/log.h"
#include "tp/report.h"
#include "tp/result.h"
#include "validate_int.h"

static int write_doc(const char *dir, const char *name, const json_t *doc, tp_error *err)
{
    char path[4600];
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    if (tp__validate_mkdirs(dir) < 0)
        return tp_error_errno(err, TP_ESYS, errno, "%s", dir);
    return tp_result_write(doc, path, err);
}

/* Is row a pair metric worth judging: the medians and tails of latency and
 * the bandwidths (a maximum is one sample; counts are not health)? */
static bool pair_metric(const json_t *row)
{
    const char *m = json_string_value(json_object_get(row, "metric"));
    if (!m || json_is_null(json_object_get(row, "better")))
        return false;
    size_t n = strlen(m);
    return strcmp(m, "net.bw") == 0 || strcmp(m, "net.bibw") == 0 ||
           (strncmp(m, "net.", 4) == 0 &&
            ((n > 12 && strcmp(m + n - 12, ".latency.p50") == 0) ||
             (n > 12 && strcmp(m + n - 12, ".latency.p99") == 0)));
}

struct fleet_out {
    FILE *f;      /* fleet.jsonl, as a temporary file beside it (NULL: none) */
    struct tp_atomic *a; /* ... its replacement, committed at the end */
    size_t lines;
    json_t *data; /* tp_fleet's */
    json_t *matrix; /* {key: {"unit", "better", "values": [[a, b, value]]}} */
};

static int fleet_line(struct fleet_out *fo, json_t *line, tp_error *err)
{
    char *s = json_dumps(line, JSON_COMPACT);
    json_decref(line);
    if (!s)
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    if (fo->f)
        fprintf(fo->f, "%s\n", s);
    fo->lines++;
    int rc = tp_fleet_add_line(fo->data, s, "fleet.jsonl", fo->lines, err);
    free(s);
    return rc;
}

/* What rank 0 holds while the nodes' results come in. */
struct tp__validate_collect {
    struct tp__validate_ctx *c;
    const struct tp__validate_node *nodes;
    int n;
    json_t *index;    /* label -> rank */
    json_t *gathered; /* each node's entry, its documents written and dropped ("doc": true),
                         rank 0's whole; a pair's judged rows under "rows" */
    struct fleet_out fo;
    char fleet_path[4400];
    struct tp__validate_hist hist;
    struct tp__validate_sdc *sdc; /* the nodes' SDC chains (sdc.c) */
    int rc;       /* the first error taking a node's result in */
    tp_error err;
};

/* The pairwise matrix the report draws: the median latency at the
 * smallest size, the bandwidth at the largest. */
static void matrix_add(json_t *matrix, const json_t *row, int a, int b)
{
    const char *m = json_string_value(json_object_get(row, "metric"));
    const char *size = json_string_value(json_object_get(json_object_get(row, "labels"), "size"));
    if (!m || !size || (strcmp(m, "net.bw") != 0 && strcmp(m, "net.lat.latency.p50") != 0))
        return;
    json_t *e = json_object_get(matrix, m);
    double sz = atof(size), have = json_number_value(json_object_get(e, "size"));
    bool lat = strcmp(m, "net.lat.latency.p50") == 0;
    if (!e || (lat ? sz < have : sz > have)) {
        e = json_pack("{s:f, s:s, s:O, s:[]}", "size", sz, "unit",
                      json_string_value(json_object_get(row, "unit")), "better",
                      json_object_get(row, "better"), "values");
        json_object_set_new(matrix, m, e);
    } else if (sz != have) {
        return;
    }
    json_array_append_new(json_object_get(e, "values"),
                          json_pack("[i, i, O]", a, b, json_object_get(row, "value")));
}

static int node_index(const json_t *index, const char *label)
{
    const json_t *r = label ? json_object_get(index, label) : NULL;
    return r ? (int)json_integer_value(r) : -1;
}

/* The rows of a pair measurement's document worth judging (pair_metric);
 * NULL with err set when doc has none to read. */
static json_t *judged_rows(const json_t *doc, tp_error *err)
{
    json_t *rows = tp_report_metrics(doc, err), *out = rows ? json_array() : NULL;
    size_t q;
    json_t *row;
    json_array_foreach(rows, q, row)
        if (pair_metric(row))
            json_array_append(out, row);
    json_decref(rows);
    return out;
}

/* The judged rows of one pair measurement e as pair lines. */
static int pair_rows(struct fleet_out *fo, const json_t *index, const json_t *e,
                     const json_t *rows, tp_error *err)
{
    const char *a = json_string_value(json_object_get(e, "a"));
    const char *b = json_string_value(json_object_get(e, "b"));
    size_t q;
    json_t *row;
    int rc = 0;
    json_array_foreach(rows, q, row) {
        if (rc)
            break;
        json_t *line = json_pack("{s:s, s:s, s:O, s:O, s:O, s:O, s:O, s:O}", "a", a, "b", b,
                                 "round", json_object_get(e, "round"), "test",
                                 json_object_get(e, "test"), "metric", json_object_get(row, "key"),
                                 "value", json_object_get(row, "value"), "unit",
                                 json_object_get(row, "unit"), "better",
                                 json_object_get(row, "better"));
        rc = fleet_line(fo, line, err);
        if (fo->matrix)
            matrix_add(fo->matrix, row, node_index(index, a), node_index(index, b));
    }
    return rc;
}

/* Did the measurement or test e leave a document (written, or held)? */
static bool has_doc(const json_t *e)
{
    const json_t *d = json_object_get(e, "doc");
    return json_is_object(d) || json_is_true(d);
}

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
        json_array_foreach(gathered, r, g) {
            json_array_foreach(json_object_get(g, "tests"), k, e) {
                if (strcmp(json_string_value(json_object_get(e, "test")), t->name) != 0)
                    continue;
                nodes++;
                enum tp__validate_status st =
                    tp__validate_status_of(json_string_value(json_object_get(e, "status")));
                const char *says = json_string_value(json_object_get(e, "summary"));
                nfail += st == TP__VALIDATE_FAIL;
                nwarn += st == TP__VALIDATE_WARN;
                if (st == TP__VALIDATE_PASS)
                    continue;
                if (!why[0])
                    snprintf(why, sizeof why, "%s", says);
                same &= strcmp(why, says) == 0;
                size_t len = strlen(who);
                if (len < 300)
                    snprintf(who + len, sizeof who - len, "%s%s", len ? ", " : "",
                             json_string_value(json_object_get(g, "label")));
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
    json_array_foreach(json_object_get(triage, "nodes_detail"), i, v) {
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
    json_object_foreach((json_t *)counts, key, cnt)
        if (json_integer_value(cnt))
            fprintf(f, " %s %lld", key, (long long)json_integer_value(cnt));
    fprintf(f, "\n");
}

/* The folder of pair measurement e under the results folder. */
static void pair_dir(const struct tp__validate_ctx *c, const json_t *e, char *out, size_t cap)
{
    const char *sub = json_string_value(json_object_get(e, "sub"));
    snprintf(out, cap, "%s/pairs/%s--%s%s%s", c->outdir,
             json_string_value(json_object_get(e, "a")), json_string_value(json_object_get(e, "b")),
             sub ? "/" : "", sub ? sub : "");
}

/* The first document of test that node measured with a partner, as a
 * path relative to the results folder ("pairs/A--B/net-lat.json", "" if
 * none). */
static void first_pair_doc(const struct tp__validate_ctx *c, const json_t *gathered,
                           const char *node, const char *test, char *out, size_t cap)
{
    size_t r, k;
    const json_t *g, *e;
    snprintf(out, cap, "pairs/%s--?/%s.json", node, test);
    json_array_foreach(gathered, r, g)
        json_array_foreach(json_object_get(g, "pairs"), k, e) {
            const char *a = json_string_value(json_object_get(e, "a"));
            const char *b = json_string_value(json_object_get(e, "b"));
            if (strcmp(json_string_value(json_object_get(e, "test")), test) != 0 ||
                (strcmp(a, node) != 0 && strcmp(b, node) != 0) || !has_doc(e))
                continue;
            char dir[5000];
            pair_dir(c, e, dir, sizeof dir);
            snprintf(out, cap, "%s/%s.json", dir + strlen(c->outdir) + 1, test);
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
    json_array_foreach(json_object_get(triage, "nodes_detail"), i, e) {
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

struct tp__validate_collect *tp__validate_collect_new(struct tp__validate_ctx *c,
                                                      const struct tp__validate_node *nodes,
                                                      int n)
{
    struct tp__validate_collect *k = calloc(1, sizeof *k);
    if (!k)
        return NULL;
    k->c = c;
    k->nodes = nodes;
    k->n = n;
    k->index = json_object();
    k->gathered = json_array();
    k->fo.data = tp_fleet_new();
    k->fo.matrix = json_object();
    k->sdc = tp__validate_sdc_new(n);
    for (int r = 0; k->index && r < n; r++)
        json_object_set_new(k->index, nodes[r].label, json_integer(r));
    snprintf(k->fleet_path, sizeof k->fleet_path, "%s/fleet.jsonl", c->outdir);
    k->rc = tp_atomic_begin(k->fleet_path, &k->fo.a, &k->fo.f, &k->err);
    if (!k->index || !k->gathered || !k->fo.data || !k->fo.matrix || !k->sdc) {
        tp__validate_collect_free(k);
        return NULL;
    }
    tp__validate_hist_open(c, &k->hist);
    return k;
}

void tp__validate_collect_free(struct tp__validate_collect *k)
{
    if (!k)
        return;
    tp_atomic_discard(k->fo.a); /* never committed: no torn fleet.jsonl left */
    if (k->hist.h)
        tp_history_close(k->hist.h);
    json_decref(k->index);
    json_decref(k->gathered);
    json_decref(k->fo.data);
    json_decref(k->fo.matrix);
    tp__validate_sdc_free(k->sdc);
    free(k);
}

/* A document of node r's, taken in: written under dir (rank 0 wrote its
 * own), into the history; dropped from e unless r is rank 0. */
static int take_doc(struct tp__validate_collect *k, int r, json_t *e, const char *dir,
                    const char *name, tp_error *err)
{
    json_t *doc = json_object_get(e, "doc");
    int rc = r > 0 ? write_doc(dir, name, doc, err) : 0;
    tp__validate_hist_add(&k->hist, doc);
    if (r > 0)
        json_object_set_new(e, "doc", json_true());
    return rc;
}

/* The collect's first error is the first node's: keep rc (with e) unless
 * one is kept already; returns the one kept. */
static int keep_error(struct tp__validate_collect *k, int rc, const tp_error *e)
{
    if (rc && !k->rc) {
        k->rc = rc;
        k->err = *e;
    }
    return k->rc;
}

int tp__validate_collect_add(struct tp__validate_collect *k, int r, json_t *g)
{
    tp_error first = {0}, spare, *err = &first; /* this node's first error */
    int rc = 0;
    const char *label = json_string_value(json_object_get(g, "label"));
    char dir[5000];
    size_t i;
    json_t *e;
    if (!label || r < 0 || r >= k->n || strcmp(label, k->nodes[r].label) != 0) {
        rc = tp_error_set(err, TP_EPROTO, "node %s sent a result that is not its own",
                          r >= 0 && r < k->n ? k->nodes[r].label : "?");
        json_decref(g);
        return keep_error(k, rc, &first);
    }
    snprintf(dir, sizeof dir, "%s/nodes/%s", k->c->outdir, label);
    json_array_foreach(json_object_get(g, "tests"), i, e) {
        const char *name = json_string_value(json_object_get(e, "test"));
        json_t *doc = json_object_get(e, "doc");
        if (!json_is_object(doc) || !name)
            continue;
        const struct tp_validate_test *t = tp__validate_test_of(k->c, name);
        if (t && t->role == TP_VALIDATE_SCREEN)
            tp__validate_sdc_take(k->sdc, r, label, doc);
        if (t && t->role == TP_VALIDATE_SCREEN_GPU)
            tp__validate_sdc_take_gpu(k->sdc, r, label, doc);
        if (!rc)
            rc = fleet_line(&k->fo, json_pack("{s:s, s:s, s:O}", "host", label, "test", name,
                                              "doc", doc),
                            err);
        int wrc = take_doc(k, r, e, dir, name, rc ? &spare : err);
        rc = rc ? rc : wrc;
    }
    json_array_foreach(json_object_get(g, "pairs"), i, e) {
        const char *name = json_string_value(json_object_get(e, "test"));
        json_t *doc = json_object_get(e, "doc");
        if (!json_is_object(doc) || !name)
            continue;
        json_t *rows = judged_rows(doc, rc ? &spare : err);
        if (!rows && !rc)
            rc = err->code ? err->code : tp_error_set(err, TP_ENOMEM, "out of memory");
        json_object_set_new(e, "rows", rows ? rows : json_array());
        pair_dir(k->c, e, dir, sizeof dir);
        int wrc = take_doc(k, r, e, dir, name, rc ? &spare : err);
        rc = rc ? rc : wrc;
    }
    json_array_foreach(json_object_get(g, "groups"), i, e) {
        const char *name = json_string_value(json_object_get(e, "test"));
        if (!json_is_object(json_object_get(e, "doc")) || !name)
            continue;
        snprintf(dir, sizeof dir, "%s/groups/%s/%s", k->c->outdir,
                 json_string_value(json_object_get(e, "sub")), label);
        int wrc = take_doc(k, r, e, dir, name, rc ? &spare : err);
        rc = rc ? rc : wrc;
    }
    json_array_append_new(k->gathered, g);
    return keep_error(k, rc, &first);
}

int tp__validate_collect_node(void *ctx, int r, const char *data, tp_error *err)
{
    (void)err; /* the gather goes on; the error is the collect's */
    struct tp__validate_collect *k = ctx;
    if (!data) /* a node lost in the gather: its verdict says so */
        return 0;
    json_error_t je;
    json_t *g = json_loads(data, 0, &je);
    if (!g) {
        if (!k->rc)
            k->rc = tp_error_set(&k->err, TP_EPROTO, "node %s sent a broken result: %s",
                                 k->nodes[r].label, je.text);
        return 0;
    }
    tp__validate_collect_add(k, r, g);
    return 0;
}

int tp__validate_collect_error(const struct tp__validate_collect *k, tp_error *err)
{
    if (k->rc)
        *err = k->err;
    return k->rc;
}

const json_t *tp__validate_collect_gathered(const struct tp__validate_collect *k)
{
    return k ? k->gathered : NULL;
}

/* fleet.jsonl: its temporary file committed over it. */
static int fleet_commit(struct tp__validate_collect *k, tp_error *err)
{
    struct tp_atomic *a = k->fo.a;
    k->fo.a = NULL;
    k->fo.f = NULL;
    return a ? tp_atomic_commit(a, err) : 0;
}

int tp__validate_collect_finish(struct tp__validate_collect *k, const json_t *triage,
                                const tp_error *stopped)
{
    struct tp__validate_ctx *c = k->c;
    const struct tp__validate_node *nodes = k->nodes;
    int n = k->n;
    json_t *gathered = k->gathered;
    struct fleet_out *fo = &k->fo;
    tp_error err = {0};
    int rounds = (int)json_integer_value(json_object_get(triage, "rounds_total"));
    int failed = 0, pair_fail = 0, npairs = 0;
    json_t *html_docs = json_array();
    json_t *node_list = json_array(), *pair_list = json_array(), *group_list = json_array();
    int rc = k->rc ? tp__validate_collect_error(k, &err) : 0;
    if (!rc && (!html_docs || !node_list || !pair_list || !group_list))
        rc = tp_error_set(&err, TP_ENOMEM, "out of memory");
    /* the SDC screen across the nodes: a node named fails its sdc test and
     * gets its verdict, over the tier's or alone (verdicts: what the nodes'
     * lines, the fleet's nodes and --on-fail read) */
    json_t *sdc = NULL;
    json_t *verdicts_of = tp__validate_sdc_judge(k->sdc, nodes, gathered, triage, &sdc);
    const char **labels = calloc((size_t)(n > 0 ? n : 1), sizeof *labels);
    for (int r = 0; labels && r < n; r++)
        labels[r] = nodes[r].label;
    if (verdicts_of && labels)
        tp_validate_cite_counters(verdicts_of, gathered, labels, n);
    free(labels);
    size_t r, q;
    json_t *g, *e;
    json_array_foreach(gathered, r, g) {
        const char *label = json_string_value(json_object_get(g, "label"));
        json_t *tl = json_array();
        json_array_foreach(json_object_get(g, "tests"), q, e) {
            json_t *te = json_pack("{s:O, s:O, s:O, s:O}", "test", json_object_get(e, "test"),
                                   "status", json_object_get(e, "status"), "summary",
                                   json_object_get(e, "summary"), "seconds",
                                   json_object_get(e, "seconds"));
            if (json_object_get(e, "counters"))
                json_object_set(te, "counters", json_object_get(e, "counters"));
            json_array_append_new(tl, te);
            if (r == 0 && json_is_object(json_object_get(e, "doc")))
                json_array_append(html_docs, json_object_get(e, "doc"));
        }
        json_array_append_new(node_list,
                              json_pack("{s:s, s:s?, s:s?, s:o}", "label", label, "host",
                                        json_string_value(json_object_get(g, "host")), "addr",
                                        json_string_value(json_object_get(g, "addr")), "tests",
                                        tl));
        json_array_foreach(json_object_get(g, "pairs"), q, e) {
            const char *a = json_string_value(json_object_get(e, "a"));
            const char *b = json_string_value(json_object_get(e, "b"));
            const char *name = json_string_value(json_object_get(e, "test"));
            const char *st = json_string_value(json_object_get(e, "status"));
            npairs++;
            pair_fail += tp__validate_status_of(st) != TP__VALIDATE_PASS;
            json_t *pe = json_pack("{s:O, s:s, s:s, s:s, s:s, s:O, s:O}", "round",
                                   json_object_get(e, "round"), "a", a, "b", b, "test", name,
                                   "status", st, "summary", json_object_get(e, "summary"),
                                   "seconds", json_object_get(e, "seconds"));
            if (json_object_get(e, "stage"))
                json_object_set(pe, "stage", json_object_get(e, "stage"));
            if (json_object_get(e, "counters"))
                json_object_set(pe, "counters", json_object_get(e, "counters"));
            json_array_append_new(pair_list, pe);
            if (!has_doc(e))
                continue;
            /* the report draws the first pair of rank 0 */
            if (r == 0 && json_integer_value(json_object_get(e, "round")) ==
                              json_integer_value(json_object_get(
                                  json_array_get(json_object_get(g, "pairs"), 0), "round")))
                json_array_append(html_docs, json_object_get(e, "doc"));
            if (!rc)
                rc = pair_rows(fo, k->index, e, json_object_get(e, "rows"), &err);
        }
        /* the tiers' collectives across nodes: each group's rank 0 has the
         * document */
        json_array_foreach(json_object_get(g, "groups"), q, e) {
            const char *st = json_string_value(json_object_get(e, "status"));
            if (!has_doc(e)) {
                /* a member's failure is its group's, said once per member */
                if (tp__validate_status_of(st) != TP__VALIDATE_PASS)
                    json_array_append_new(group_list, json_deep_copy(e));
                continue;
            }
            json_t *ge = json_deep_copy(e);
            json_object_del(ge, "doc");
            json_array_append_new(group_list, ge);
        }
    }
    node_list = every_node(node_list, nodes, n, verdicts_of);
    if (!rc)
        rc = fleet_commit(k, &err);
    char path[4400];
    json_t *judgement = rc ? NULL : tp_fleet_judge(fo->data, NULL, &err);
    if (!rc && !judgement)
        rc = err.code;

    /* the plan: this allocation, its network from rank 0's first pair */
    json_t *verdicts = test_verdicts(gathered, c, &failed);
    if (tp__validate_any_between(c)) {
        char summary[300];
        int len = snprintf(summary, sizeof summary,
                           "%d measurements between %d nodes in %d rounds", npairs, n, rounds);
        if (pair_fail && len < (int)sizeof summary)
            snprintf(summary + len, sizeof summary - (size_t)len,
                     "; %d did not run or failed (see fleet.json)", pair_fail);
        json_array_append_new(verdicts, json_pack("{s:s, s:s, s:s}", "name", "pairs", "status",
                                                  tp__validate_status_name(
                                                      pair_fail ? TP__VALIDATE_FAIL
                                                                : TP__VALIDATE_PASS),
                                                  "summary",
                                                  summary));
    }
    failed += pair_fail;
    for (int i = 0; i < c->tests.n; i++) {
        struct tp_validate_test *t = &c->tests.t[i];
        const struct tp_validate_inputs *in = t->inputs;
        if (!in)
            continue;
        char lat[700], bw[700], coll[700], io[700];
        first_pair_doc(c, gathered, nodes[0].label, in->net_lat, lat, sizeof lat);
        first_pair_doc(c, gathered, nodes[0].label, in->net_bw, bw, sizeof bw);
        snprintf(coll, sizeof coll, "nodes/%s/%s.json", nodes[0].label, in->coll);
        snprintf(io, sizeof io, "nodes/%s/%s.json", nodes[0].label, in->io);
        enum tp__validate_status st = TP__VALIDATE_FAIL;
        if (tp__validate_write_plan(c, n, 2, lat, bw, coll, io) < 0) {
            t->rc = -1;
            snprintf(t->why, sizeof t->why, "cannot write the plan: %s", strerror(errno));
        } else {
            st = tp__validate_run_test(c, t, c->outdir, NULL, NULL);
        }
        failed += st == TP__VALIDATE_FAIL;
        json_array_append_new(verdicts,
                              json_pack("{s:s, s:s, s:s, s:f}", "name", t->name, "status",
                                        tp__validate_status_name(st),
                                        "summary", t->why[0] ? t->why : t->what, "seconds",
                                        t->took_s));
        snprintf(path, sizeof path, "%s/plan.json", c->outdir);
        json_t *doc = NULL;
        if (tp_report_load(path, &doc, &err) == 0) {
            tp__validate_hist_add(&k->hist, doc);
            json_array_append_new(html_docs, doc);
        }
    }

    /* the fleet's judgement, as a document of its own */
    json_t *fdoc = NULL;
    enum tp__validate_status fstatus = TP__VALIDATE_FAIL;
    char fsum[1200] = "";
    if (judgement) {
        json_int_t slow = json_integer_value(json_object_get(judgement, "slow_nodes")) +
                          json_integer_value(json_object_get(judgement, "slow_links"));
        json_int_t worse = json_integer_value(json_object_get(judgement, "worse"));
        fstatus = slow ? TP__VALIDATE_FAIL : worse ? TP__VALIDATE_WARN : TP__VALIDATE_PASS;
        /* by a tier, the triage judges: what it named, measured again alone */
        const json_t *counts = json_object_get(triage, "counts");
        /* a node lost or never joined was not validated: the run fails */
        json_int_t named = json_array_size(json_object_get(triage, "named")) +
                           json_integer_value(json_object_get(counts, "lost")) +
                           json_integer_value(json_object_get(counts, "missing"));
        /* and the SDC screen's (without a tier its failed test says it) */
        named += (json_int_t)json_array_size(json_object_get(sdc, "named"));
        json_int_t unsure = json_integer_value(json_object_get(counts, "suspect")) +
                            json_integer_value(json_object_get(counts, "error"));
        if (triage)
            fstatus = named ? TP__VALIDATE_FAIL : unsure ? TP__VALIDATE_WARN : TP__VALIDATE_PASS;
        char *words = NULL;
        size_t wl = 0;
        FILE *wf = open_memstream(&words, &wl);
        if (wf) {
            tp_fleet_print(wf, judgement);
            fclose(wf);
        }
        snprintf(fsum, sizeof fsum, "%.*s", words ? (int)strcspn(words, "\n") : 0,
                 words ? words : "");
        free(words);
        json_int_t nlost = json_integer_value(json_object_get(counts, "lost")) +
                           json_integer_value(json_object_get(counts, "missing"));
        const char *partial = json_string_value(json_object_get(triage, "partial"));
        if (triage)
            snprintf(fsum, sizeof fsum, "%s tier: %d rounds (%d of isolation); %d named%s%s%s%.500s",
                     c->tier, rounds,
                     (int)json_integer_value(json_object_get(triage, "rounds_isolation")),
                     (int)named, unsure ? ", some unsettled (see nodes.jsonl)" : "",
                     nlost && !partial
                         ? ", lost or missing nodes left out, the others validated to the end"
                         : "",
                     partial ? "; " : "", partial ? partial : "");
        fdoc = tp_result_new("fleet", json_pack("{s:s, s:s?, s:i, s:i}", "profile", c->profile,
                                                "only", c->only, "nodes", n, "rounds", rounds));
        json_t *res = json_pack("{s:i, s:i, s:i, s:o, s:o, s:O, s:O}", "node_count", n,
                                "failed_tests", failed, "rounds", rounds, "nodes", node_list,
                                "pairs", pair_list, "matrix", fo->matrix, "judgement", judgement);
        node_list = pair_list = NULL;
        if (sdc)
            json_object_set(res, "sdc", sdc);
        if (verdicts_of) {
            /* the verdicts, each node a line; and what --on-fail did */
            json_t *acts = tp__validate_onfail(c, nodes, n, verdicts_of);
            json_object_set_new(res, "actions", acts ? acts : json_array());
            if (!rc)
                rc = tp__validate_node_lines(c, nodes, n, verdicts_of, triage ? c->tier : NULL,
                                             &err);
        }
        if (triage) {
            json_object_set_new(res, "tier", json_string(c->tier));
            if (partial) /* the run stopped: the documents of the nodes not gathered are not here */
                json_object_set_new(res, "partial", json_string(partial));
            json_object_set_new(res, "groups", group_list);
            json_object_set(res, "triage", verdicts_of);
            group_list = NULL;
        }
        json_object_set_new(fdoc, "results", res);
        /* an interrupt in the actions (a drain waiting on slurmctld) is
         * the run's end too: the document says so */
        tp_error intr = {0};
        if (!stopped && tp_intr_check(&intr))
            stopped = &intr;
        /* its status is the process's exit: a run that fails the fleet
         * (a node named, lost or missing, a test failed) is not ok */
        bool fails = failed || fstatus == TP__VALIDATE_FAIL;
        char fwhy[1300];
        snprintf(fwhy, sizeof fwhy, "%s%s%.1200s", failed ? "a test failed" : "",
                 failed && fsum[0] ? "; " : "", fsum);
        tp_result_finish(fdoc,
                         stopped ? stopped->code
                         : fails ? TP_ECHECK
                                 : 0,
                         stopped ? stopped->msg
                         : fails ? fwhy
                                 : NULL);
        snprintf(path, sizeof path, "%s/fleet.json", c->outdir);
        if (!rc)
            rc = tp_result_write(fdoc, path, &err);
        tp__validate_hist_add(&k->hist, fdoc);
        json_array_append(html_docs, fdoc);
        json_array_append_new(verdicts, json_pack("{s:s, s:s, s:s}", "name", "fleet", "status",
                                                  tp__validate_status_name(fstatus), "summary",
                                                  fsum));
    }

    if (!c->quiet) {
        printf("# trainpath validate --profile %s: %d nodes, %d rounds %s%s, in %.0f s\n",
               c->profile, n, rounds, triage ? "by the tier " : "of pairs",
               triage ? c->tier : "", tp__validate_now_s() - c->t0);
        size_t i;
        json_t *v;
        json_array_foreach(verdicts, i, v) {
            const char *st = json_string_value(json_object_get(v, "status"));
            printf("%-4s %-20s %s\n", tp__validate_status_word(tp__validate_status_of(st)),
                   json_string_value(json_object_get(v, "name")),
                   json_string_value(json_object_get(v, "summary")));
        }
        if (verdicts_of)
            print_triage(stdout, nodes, n, verdicts_of,
                         json_object_get(json_object_get(fdoc, "results"), "actions"));
        if (!triage && judgement)
            tp_fleet_print(stdout, judgement);
        printf("fleet: %s/fleet.jsonl, %s/fleet.json%s%s%s\n", c->outdir, c->outdir,
               verdicts_of ? ", " : "", verdicts_of ? c->outdir : "",
               verdicts_of ? "/nodes.jsonl" : "");
    }
    if (rc)
        tp__validate_fail(&err);
    /* history and Prometheus: every node's rows, with its label as host */
    json_t *rows = json_copy(json_object_get(fo->data, "rows"));
    if (fdoc) {
        json_t *fr = tp_report_metrics(fdoc, &err);
        if (fr)
            json_array_extend(rows, fr);
        json_decref(fr);
    }
    size_t nh = json_array_size(html_docs);
    const json_t **hdocs = calloc(nh + 1, sizeof *hdocs);
    for (size_t i = 0; hdocs && i < nh; i++)
        hdocs[i] = json_array_get(html_docs, i);
    /* the history has every document already; the report takes rank 0's
     * node, its first pair, the plan and the fleet */
    int orc = hdocs ? tp__validate_outputs(c, &k->hist, NULL, 0, hdocs, nh, rows, verdicts) : 1;
    free(hdocs);
    json_decref(rows);
    json_decref(verdicts);
    json_decref(fdoc);
    json_decref(judgement);
    json_decref(node_list);
    json_decref(pair_list);
    json_decref(group_list);
    json_decref(html_docs);
    json_decref(sdc);
    json_decref(verdicts_of);
    return rc || orc || failed || fstatus == TP__VALIDATE_FAIL ? 1 : 0;
}

