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
    char path[TP__VALIDATE_PATH_MAX];
    if (tp__validate_path(path, sizeof path, "%s/%s.json", dir, name) < 0)
        return tp_error_errno(err, TP_ESYS, errno, "%s/%s.json", dir, name);
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
    char fleet_path[TP__VALIDATE_PATH_MAX];
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

/* ---- a node's entry, read once ---- */

/* A node's entry as alloc.c sends it: {"label", "host", "addr", "tests",
 * "pairs", "groups"}. */
struct entry {
    const char *label, *host, *addr;
    json_t *tests, *pairs, *groups; /* arrays of what it ran (struct ran) */
};

static void entry_read(const json_t *g, struct entry *x)
{
    *x = (struct entry){
        .label = json_string_value(json_object_get(g, "label")),
        .host = json_string_value(json_object_get(g, "host")),
        .addr = json_string_value(json_object_get(g, "addr")),
        .tests = json_object_get(g, "tests"),
        .pairs = json_object_get(g, "pairs"),
        .groups = json_object_get(g, "groups"),
    };
}

/* One thing a node ran: a test of its own, a pair measurement or its part
 * of a group test (tp__validate_ran's {"test", "status", "summary",
 * "seconds", "doc", "counters"?, "link"?}; a pair's "a" and "b"; the
 * rounds' "round", "stage" and "sub"; the judged rows collect_add put in
 * "rows"). The values are the entry's own, copied out as they are. */
struct ran {
    const char *test, *status; /* status as sent; st its value */
    enum tp__validate_status st;
    const char *a, *b, *sub;
    json_t *summary, *seconds, *counters, *round, *stage, *rows;
    json_t *doc; /* an object (held), true (written and dropped) or null */
    bool has_doc;
};

static void ran_read(const json_t *e, struct ran *x)
{
    const char *status = json_string_value(json_object_get(e, "status"));
    json_t *doc = json_object_get(e, "doc");
    *x = (struct ran){
        .test = json_string_value(json_object_get(e, "test")),
        .status = status,
        .st = tp__validate_status_of(status),
        .a = json_string_value(json_object_get(e, "a")),
        .b = json_string_value(json_object_get(e, "b")),
        .sub = json_string_value(json_object_get(e, "sub")),
        .summary = json_object_get(e, "summary"),
        .seconds = json_object_get(e, "seconds"),
        .counters = json_object_get(e, "counters"),
        .round = json_object_get(e, "round"),
        .stage = json_object_get(e, "stage"),
        .rows = json_object_get(e, "rows"),
        .doc = doc,
        .has_doc = json_is_object(doc) || json_is_true(doc),
    };
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

/* The judged rows of one pair measurement x as pair lines. */
static int pair_rows(struct fleet_out *fo, const json_t *index, const struct ran *x,
                     tp_error *err)
{
    size_t q;
    json_t *row;
    int rc = 0;
    json_array_foreach(x->rows, q, row) {
        if (rc)
            break;
        json_t *line = json_pack("{s:s, s:s, s:O, s:s, s:O, s:O, s:O, s:O}", "a", x->a, "b",
                                 x->b, "round", x->round, "test", x->test, "metric",
                                 json_object_get(row, "key"), "value",
                                 json_object_get(row, "value"), "unit",
                                 json_object_get(row, "unit"), "better",
                                 json_object_get(row, "better"));
        rc = fleet_line(fo, line, err);
        if (fo->matrix)
            matrix_add(fo->matrix, row, node_index(index, x->a), node_index(index, x->b));
    }
    return rc;
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
            struct entry node;
            entry_read(g, &node);
            json_array_foreach(node.tests, k, e) {
                struct ran x;
                ran_read(e, &x);
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

/* The folder of pair measurement x under the results folder top, or
 * relative to it (top NULL: "pairs/A--B", "pairs/A--B/SUB"). */
static void pair_dir(const char *top, const struct ran *x, char *out, size_t cap)
{
    tp__validate_path(out, cap, "%s%spairs/%s--%s%s%s", top ? top : "", top ? "/" : "", x->a,
                      x->b, x->sub ? "/" : "", x->sub ? x->sub : "");
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
    json_array_foreach(gathered, r, g)
        json_array_foreach(json_object_get(g, "pairs"), k, e) {
            struct ran x;
            ran_read(e, &x);
            if (strcmp(x.test, test) != 0 || (strcmp(x.a, node) != 0 && strcmp(x.b, node) != 0) ||
                !x.has_doc)
                continue;
            char dir[TP__VALIDATE_PATH_MAX];
            pair_dir(NULL, &x, dir, sizeof dir);
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
    tp__validate_path(k->fleet_path, sizeof k->fleet_path, "%s/fleet.jsonl", c->outdir);
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
static int take_doc(struct tp__validate_collect *k, int r, json_t *e, json_t *doc,
                    const char *dir, const char *name, tp_error *err)
{
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
    struct entry node;
    entry_read(g, &node);
    const char *label = node.label;
    char dir[TP__VALIDATE_PATH_MAX];
    size_t i;
    json_t *e;
    struct ran x;
    if (!label || r < 0 || r >= k->n || strcmp(label, k->nodes[r].label) != 0) {
        rc = tp_error_set(err, TP_EPROTO, "node %s sent a result that is not its own",
                          r >= 0 && r < k->n ? k->nodes[r].label : "?");
        json_decref(g);
        return keep_error(k, rc, &first);
    }
    tp__validate_path(dir, sizeof dir, "%s/nodes/%s", k->c->outdir, label);
    json_array_foreach(node.tests, i, e) {
        ran_read(e, &x);
        if (!json_is_object(x.doc) || !x.test)
            continue;
        const struct tp_validate_test *t = tp__validate_test_of(k->c, x.test);
        if (t && t->role == TP_VALIDATE_SCREEN)
            tp__validate_sdc_take(k->sdc, r, label, x.doc);
        if (t && t->role == TP_VALIDATE_SCREEN_GPU)
            tp__validate_sdc_take_gpu(k->sdc, r, label, x.doc);
        if (!rc)
            rc = fleet_line(&k->fo, json_pack("{s:s, s:s, s:O}", "host", label, "test", x.test,
                                              "doc", x.doc),
                            err);
        int wrc = take_doc(k, r, e, x.doc, dir, x.test, rc ? &spare : err);
        rc = rc ? rc : wrc;
    }
    json_array_foreach(node.pairs, i, e) {
        ran_read(e, &x);
        if (!json_is_object(x.doc) || !x.test)
            continue;
        json_t *rows = judged_rows(x.doc, rc ? &spare : err);
        if (!rows && !rc)
            rc = err->code ? err->code : tp_error_set(err, TP_ENOMEM, "out of memory");
        json_object_set_new(e, "rows", rows ? rows : json_array());
        pair_dir(k->c->outdir, &x, dir, sizeof dir);
        int wrc = take_doc(k, r, e, x.doc, dir, x.test, rc ? &spare : err);
        rc = rc ? rc : wrc;
    }
    json_array_foreach(node.groups, i, e) {
        ran_read(e, &x);
        if (!json_is_object(x.doc) || !x.test)
            continue;
        tp__validate_path(dir, sizeof dir, "%s/groups/%s/%s", k->c->outdir, x.sub, label);
        int wrc = take_doc(k, r, e, x.doc, dir, x.test, rc ? &spare : err);
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

/* ---- the end: tp__validate_collect_finish, job by job ---- */

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
static void list_tests(struct finish *f, size_t r, const struct entry *node)
{
    json_t *tl = json_array(), *e;
    size_t q;
    json_array_foreach(node->tests, q, e) {
        struct ran x;
        ran_read(e, &x);
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
static void list_pairs(struct finish *f, size_t r, const struct entry *node)
{
    struct ran first;
    ran_read(json_array_get(node->pairs, 0), &first);
    json_t *e;
    size_t q;
    json_array_foreach(node->pairs, q, e) {
        struct ran x;
        ran_read(e, &x);
        f->npairs++;
        f->pair_fail += x.st != TP__VALIDATE_PASS;
        json_t *pe = json_pack("{s:O, s:s, s:s, s:s, s:s, s:O, s:O}", "round", x.round, "a", x.a,
                               "b", x.b, "test", x.test, "status", x.status, "summary",
                               x.summary, "seconds", x.seconds);
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
            f->rc = pair_rows(&f->k->fo, f->k->index, &x, &f->err);
    }
}

/* The tiers' collectives across nodes into fleet.json's groups: each
 * group's rank 0 has the document; a member's failure is its group's,
 * said once per member. */
static void list_groups(struct finish *f, const struct entry *node)
{
    json_t *e;
    size_t q;
    json_array_foreach(node->groups, q, e) {
        struct ran x;
        ran_read(e, &x);
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
        f->rc = fleet_commit(f->k, &f->err);
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
        int len = snprintf(summary, sizeof summary,
                           "%d measurements between %d nodes in %d rounds", f->npairs, k->n,
                           f->rounds);
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
        snprintf(f->fsum, sizeof f->fsum, "%s tier: %d rounds (%d of isolation); %d named%s%s%s%.500s",
                 f->k->c->tier, f->rounds,
                 (int)json_integer_value(json_object_get(triage, "rounds_isolation")), (int)named,
                 unsure ? ", some unsettled (see nodes.jsonl)" : "",
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
    json_t *res = json_pack("{s:i, s:i, s:i, s:o, s:o, s:O, s:O}", "node_count", n,
                            "failed_tests", f->failed, "rounds", f->rounds, "nodes", f->node_list,
                            "pairs", f->pair_list, "matrix", f->k->fo.matrix, "judgement",
                            f->judgement);
    f->node_list = f->pair_list = NULL;
    if (f->sdc)
        json_object_set(res, "sdc", f->sdc);
    if (f->verdicts_of) {
        /* the verdicts, each node a line; and what --on-fail did */
        json_t *acts = tp__validate_onfail(c, nodes, n, f->verdicts_of);
        json_object_set_new(res, "actions", acts ? acts : json_array());
        if (!f->rc)
            f->rc = tp__validate_node_lines(c, nodes, n, f->verdicts_of,
                                            triage ? c->tier : NULL, &f->err);
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
    json_array_foreach(f->verdicts, i, v) {
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
    int orc = hdocs ? tp__validate_outputs(f->k->c, &f->k->hist, NULL, 0, hdocs, nh, rows,
                                           f->verdicts)
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
    json_array_foreach(k->gathered, r, g) {
        struct entry node;
        entry_read(g, &node);
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
