/* validate across an allocation, rank 0's part: every node's results
 * taken in as they arrive (tp_boot_gather_each), one node at a time, and
 * the results folder: nodes/NODE/, pairs/A--B/, groups/, fleet.jsonl (one
 * line per node and test, one per pair measurement: the input of `report
 * fleet`), and the history, each node's documents as they come; what
 * is read of a node's entry read once (struct tp__validate_entry and
 * tp__validate_ran). The end, once all are in (fleet.json, the judgement,
 * the plan, the report), is finish.c's.
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
#include "tp/judge.h"
#include "tp/log.h"
#include "tp/report.h"
#include "tp/result.h"
#include "collect_int.h"
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

static int fleet_line(struct tp__validate_fleet_out *fo, json_t *line, tp_error *err)
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

void tp__validate_entry_read(const json_t *g, struct tp__validate_entry *x)
{
    *x = (struct tp__validate_entry){
        .label = json_string_value(json_object_get(g, "label")),
        .host = json_string_value(json_object_get(g, "host")),
        .addr = json_string_value(json_object_get(g, "addr")),
        .tests = json_object_get(g, "tests"),
        .pairs = json_object_get(g, "pairs"),
        .groups = json_object_get(g, "groups"),
    };
}

void tp__validate_ran_read(const json_t *e, struct tp__validate_ran *x)
{
    const char *status = json_string_value(json_object_get(e, "status"));
    json_t *doc = json_object_get(e, "doc");
    *x = (struct tp__validate_ran){
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
int tp__validate_pair_rows(struct tp__validate_fleet_out *fo, const json_t *index,
                           const struct tp__validate_ran *x, tp_error *err)
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

/* The folder of pair measurement x under the results folder top, or
 * relative to it (top NULL: "pairs/A--B", "pairs/A--B/SUB"). */
void tp__validate_pair_dir(const char *top, const struct tp__validate_ran *x, char *out, size_t cap)
{
    tp__validate_path(out, cap, "%s%spairs/%s--%s%s%s", top ? top : "", top ? "/" : "", x->a,
                      x->b, x->sub ? "/" : "", x->sub ? x->sub : "");
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
    struct tp__validate_entry node;
    tp__validate_entry_read(g, &node);
    const char *label = node.label;
    char dir[TP__VALIDATE_PATH_MAX];
    size_t i;
    json_t *e;
    struct tp__validate_ran x;
    if (!label || r < 0 || r >= k->n || strcmp(label, k->nodes[r].label) != 0) {
        rc = tp_error_set(err, TP_EPROTO, "node %s sent a result that is not its own",
                          r >= 0 && r < k->n ? k->nodes[r].label : "?");
        json_decref(g);
        return keep_error(k, rc, &first);
    }
    tp__validate_path(dir, sizeof dir, "%s/nodes/%s", k->c->outdir, label);
    json_array_foreach(node.tests, i, e) {
        tp__validate_ran_read(e, &x);
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
        tp__validate_ran_read(e, &x);
        if (!json_is_object(x.doc) || !x.test)
            continue;
        json_t *rows = judged_rows(x.doc, rc ? &spare : err);
        if (!rows && !rc)
            rc = err->code ? err->code : tp_error_set(err, TP_ENOMEM, "out of memory");
        json_object_set_new(e, "rows", rows ? rows : json_array());
        tp__validate_pair_dir(k->c->outdir, &x, dir, sizeof dir);
        int wrc = take_doc(k, r, e, x.doc, dir, x.test, rc ? &spare : err);
        rc = rc ? rc : wrc;
    }
    json_array_foreach(node.groups, i, e) {
        tp__validate_ran_read(e, &x);
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
int tp__validate_fleet_commit(struct tp__validate_collect *k, tp_error *err)
{
    struct tp_atomic *a = k->fo.a;
    k->fo.a = NULL;
    k->fo.f = NULL;
    return a ? tp_atomic_commit(a, err) : 0;
}

