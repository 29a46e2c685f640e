/* Fleet outliers: the same metric on many hosts, judged against the
 * fleet's own median. The spread is the median absolute deviation (MAD),
 * which the outliers themselves cannot inflate, and the robust z of
 * Iglewicz and Hoaglin, 0.6745 (x - median) / MAD, is on the scale of a
 * normal z (0.6745 is the MAD of a unit normal). When more than half the
 * hosts agree exactly (counts of failed checks, a flag) the MAD is 0 and z
 * is undefined: a relative rule stands in, and the result says so.
 *
 * Pairwise measurements (a bandwidth between every two nodes) tell a slow
 * node from a slow link: a slow node drags down most of its pairs, a slow
 * link one pair between two nodes that are otherwise fine. */
#include "tp/judge.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tp/file.h"
#include "tp/json.h"
#include "tp/report.h"

json_t *tp_fleet_new(void)
{
    return json_pack("{s:[], s:[]}", "rows", "pairs");
}

static int oom(tp_error *err)
{
    return tp_error_set(err, TP_ENOMEM, "fleet: out of memory");
}

/* Append row (a new reference, stolen) with "host": host to data.rows. */
static int add_row(json_t *data, json_t *row, const char *host, tp_error *err)
{
    if (!row || json_object_set_new(row, "host", json_string(host)) ||
        json_array_append_new(json_object_get(data, "rows"), row)) {
        json_decref(row);
        return oom(err);
    }
    return 0;
}

int tp_fleet_add_doc(json_t *data, const json_t *doc, const char *host, tp_error *err)
{
    if (!host)
        host = json_string_value(json_object_get(json_object_get(doc, "provenance"), "host"));
    if (!host || !*host)
        return tp_error_set(err, TP_EUSAGE,
                            "a result document without provenance.host (give the host beside it)");
    int rc = tp_report_check(doc, err); /* a line's document is read as a file's */
    if (rc)
        return rc;
    json_t *rows = tp_report_metrics(doc, err);
    if (!rows)
        return TP_ENOMEM;
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        if ((rc = add_row(data, json_copy(row), host, err)))
            break;
    }
    json_decref(rows);
    return rc;
}

static bool better_ok(const json_t *b)
{
    const char *s = json_string_value(b);
    return !b || json_is_null(b) || (s && (strcmp(s, "lower") == 0 || strcmp(s, "higher") == 0));
}

/* The optional "unit" and "better" of a simple or pair line. */
static int unit_better(const json_t *o, const char *where, json_t *out, tp_error *err)
{
    const json_t *u = json_object_get(o, "unit"), *b = json_object_get(o, "better");
    if (u && !json_is_string(u))
        return tp_error_set(err, TP_EUSAGE, "%s: \"unit\" is not a string", where);
    if (!better_ok(b))
        return tp_error_set(err, TP_EUSAGE, "%s: \"better\" is not \"lower\", \"higher\" or null",
                            where);
    if (json_object_set_new(out, "unit", json_string(u ? json_string_value(u) : "")) ||
        json_object_set_new(out, "better", b ? json_incref((json_t *)b) : json_null()))
        return oom(err);
    return 0;
}

/* A fleet line's string field; an empty one counts as absent. */
static const char *str(const json_t *o, const char *k)
{
    const char *s = tp_json_str(o, k);
    return s && *s ? s : NULL;
}

static int add_object(json_t *data, const json_t *o, const char *where, tp_error *err)
{
    const char *host = str(o, "host");
    const json_t *value = json_object_get(o, "value");
    const char *schema = str(o, "schema");
    if (schema && strncmp(schema, "trainpath.result/", 17) == 0) {
        int rc = tp_fleet_add_doc(data, o, host, err);
        if (rc)
            tp_error_prefix(err, "%s", where);
        return rc;
    }
    if (json_object_get(o, "doc")) {
        if (!json_is_object(json_object_get(o, "doc")))
            return tp_error_set(err, TP_EUSAGE, "%s: \"doc\" is not a result document", where);
        int rc = tp_fleet_add_doc(data, json_object_get(o, "doc"), host, err);
        if (rc)
            tp_error_prefix(err, "%s", where);
        return rc;
    }
    if (json_object_get(o, "rows")) {
        const json_t *rows = json_object_get(o, "rows");
        if (!host || !json_is_array(rows))
            return tp_error_set(err, TP_EUSAGE,
                                "%s: {\"host\", \"rows\"} needs a host and an "
                                "array of rows",
                                where);
        size_t i;
        const json_t *row;
        json_array_foreach(rows, i, row) {
            if (!json_is_object(row) || !str(row, "key") || !str(row, "metric") ||
                !json_is_number(json_object_get(row, "value")))
                return tp_error_set(err, TP_EUSAGE,
                                    "%s: rows[%zu] is not a metric row (key, metric, value)", where,
                                    i);
            int rc = add_row(data, json_copy((json_t *)row), host, err);
            if (rc)
                return rc;
        }
        return 0;
    }
    const char *metric = str(o, "metric");
    if (metric && (!json_is_number(value) || !isfinite(json_number_value(value))))
        return tp_error_set(err, TP_EUSAGE, "%s: \"value\" is not a finite number", where);
    if (metric && json_object_get(o, "a")) {
        const char *a = str(o, "a"), *b = str(o, "b");
        if (!a || !b)
            return tp_error_set(err, TP_EUSAGE, "%s: a pair needs \"a\" and \"b\" (host names)",
                                where);
        json_t *p =
            json_pack("{s:s, s:s, s:s, s:O}", "a", a, "b", b, "metric", metric, "value", value);
        if (!p)
            return oom(err);
        int rc = unit_better(o, where, p, err);
        if (!rc && json_array_append_new(json_object_get(data, "pairs"), p))
            return oom(err);
        if (rc)
            json_decref(p);
        return rc;
    }
    if (metric && host) {
        /* the key may carry labels: the metric is the name before them */
        size_t stem = strcspn(metric, "{");
        json_t *row = json_pack("{s:s, s:s%, s:{}, s:O}", "key", metric, "metric", metric, stem,
                                "labels", "value", value);
        if (!row)
            return oom(err);
        int rc = unit_better(o, where, row, err);
        if (rc) {
            json_decref(row);
            return rc;
        }
        return add_row(data, row, host, err);
    }
    return tp_error_set(err, TP_EUSAGE,
                        "%s: not a fleet line (expected {host, metric, value}, {a, b, metric, "
                        "value}, a result document, {host, doc} or {host, rows})",
                        where);
}

int tp_fleet_add_line(json_t *data, const char *line, const char *source, size_t lineno,
                      tp_error *err)
{
    const char *p = line;
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
        p++;
    if (!*p)
        return 0;
    char where[300];
    snprintf(where, sizeof where, "%s:%zu", source ? source : "fleet", lineno);
    json_error_t je;
    json_t *o = json_loads(p, 0, &je);
    if (!o)
        return tp_error_set(err, TP_EUSAGE, "%s:%d: not JSON: %s", where, je.column, je.text);
    int rc = json_is_object(o) ? add_object(data, o, where, err)
                               : tp_error_set(err, TP_EUSAGE, "%s: not a JSON object", where);
    json_decref(o);
    return rc;
}

int tp_fleet_load(json_t *data, const char *path, tp_error *err)
{
    bool std = strcmp(path, "-") == 0;
    FILE *f = NULL;
    /* capped as a document is, whether a file (regular: a FIFO is
     * refused) or stdin (a stream: a pipe, or /dev/zero read to the cap) */
    int rc = tp_file_open(std ? "/dev/stdin" : path, "a JSON Lines file", TP_FILE_MAX_DOC,
                          std ? TP_FILE_STREAM : TP_FILE_REGULAR, &f, err);
    if (rc)
        return rc;
    char *line = NULL;
    size_t cap = 0, lineno = 0, records = 0;
    while (rc == 0 && getline(&line, &cap, f) >= 0) {
        rc = tp_fleet_add_line(data, line, std ? "stdin" : path, ++lineno, err);
        records += line[strspn(line, " \t\r\n")] != '\0';
    }
    if (rc == 0 && ferror(f))
        rc = tp_error_errno(err, TP_ESYS, errno, "%s: read", path);
    /* an empty file is a fleet nobody measured, not one without outliers */
    if (rc == 0 && records == 0)
        rc = tp_error_set(err, TP_EUSAGE, "%s: %s: no records (JSON Lines, one a line)",
                          std ? "stdin" : path, lineno ? "only blank lines" : "empty");
    free(line);
    fclose(f);
    return rc;
}

/* ---- judging ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n) (n > 0); sorts v. */
static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct spread {
    double med, mad;
};

/* Median and MAD of v[0..n); v is reordered. */
static struct spread spread_of(double *v, size_t n, double *scratch)
{
    struct spread s;
    s.med = median(v, n);
    for (size_t i = 0; i < n; i++)
        scratch[i] = fabs(v[i] - s.med);
    s.mad = median(scratch, n);
    return s;
}

struct verdict {
    bool out;
    double z; /* NAN under the relative rule */
    double rel;
    bool high;
};

static struct verdict judge(double x, struct spread s, double zlim, double rel_lim)
{
    struct verdict v;
    v.high = x > s.med;
    v.rel = s.med != 0 ? (x - s.med) / fabs(s.med) : NAN;
    if (s.mad > 0) {
        v.z = 0.6745 * (x - s.med) / s.mad;
        v.out = fabs(v.z) > zlim;
    } else {
        v.z = NAN;
        v.out = s.med != 0 ? fabs(x - s.med) > rel_lim * fabs(s.med) : x != 0;
    }
    return v;
}

/* Whether a deviation is the bad way: 1 worse, 0 better, -1 unknown. */
static int worse_of(const char *better, bool high)
{
    if (!better)
        return -1;
    return strcmp(better, "lower") == 0 ? high : !high;
}

static void dev_words(struct verdict v, const char *better, char *buf, size_t cap)
{
    int w = worse_of(better, v.high);
    char d[64];
    if (isfinite(v.z))
        snprintf(d, sizeof d, "robust z = %+.1f", v.z);
    else if (isfinite(v.rel))
        snprintf(d, sizeof d, "%+.1f %% from the median, MAD 0", v.rel * 100);
    else
        snprintf(d, sizeof d, "the median is 0, MAD 0");
    snprintf(buf, cap, "%s, %s%s%s%s", d, v.high ? "high" : "low",
             w < 0 ? ""
             : w   ? ": worse ("
                   : ": better (",
             better ? better : "", w < 0 ? "" : " is better)");
}

static json_t *relative_note(double rel)
{
    char buf[200];
    snprintf(buf, sizeof buf,
             "MAD is 0 (over half agree exactly): an outlier is more than %g %% from the median, "
             "or any value off a median of 0",
             rel * 100);
    return json_string(buf);
}

struct ctx {
    double z, rel, pair_rel;
    size_t outliers, worse, few;
    json_t *metrics, *pairs;
    json_t *seen_nodes, *seen_links; /* distinct, whatever the metrics */
};

/* One key: hosts is {host: [values]}. */
static int judge_key(struct ctx *c, const char *key, const json_t *info, tp_error *err)
{
    const json_t *hosts = json_object_get(info, "hosts");
    size_t n = json_object_size(hosts);
    if (n < TP_FLEET_MIN_HOSTS) {
        c->few++;
        return 0;
    }
    double *x = calloc(n, sizeof *x), *v = calloc(n, sizeof *v), *tmp = calloc(n, sizeof *tmp);
    json_t *outs = json_array();
    int rc = 0;
    if (!x || !v || !tmp || !outs)
        goto fail;
    const char *h;
    const json_t *vals;
    size_t k = 0;
    json_object_foreach((json_t *)hosts, h, vals) {
        size_t m = json_array_size(vals), j;
        const json_t *e;
        double *w = calloc(m, sizeof *w);
        if (!w)
            goto fail;
        json_array_foreach(vals, j, e)
            w[j] = json_number_value(e);
        x[k++] = median(w, m);
        free(w);
    }
    memcpy(v, x, n * sizeof *x);
    struct spread s = spread_of(v, n, tmp);
    const char *unit = json_string_value(json_object_get(info, "unit")) ?: "";
    const char *better = json_string_value(json_object_get(info, "better"));
    k = 0;
    json_object_foreach((json_t *)hosts, h, vals) {
        struct verdict d = judge(x[k], s, c->z, c->rel);
        double xv = x[k++];
        if (!d.out)
            continue;
        int w = worse_of(better, d.high);
        char vs[64], ms[64], dw[200], says[1000];
        tp_gate_fmt(xv, unit, 3, vs, sizeof vs);
        tp_gate_fmt(s.med, unit, 3, ms, sizeof ms);
        dev_words(d, better, dw, sizeof dw);
        snprintf(says, sizeof says, "%s on %s: %s, fleet median %s over %zu hosts (%s)", key, h, vs,
                 ms, n, dw);
        json_t *o = json_pack("{s:s, s:f, s:o, s:o, s:s, s:o, s:s}", "host", h, "value", xv, "z",
                              isfinite(d.z) ? json_real(d.z) : json_null(), "relative",
                              isfinite(d.rel) ? json_real(d.rel) : json_null(), "direction",
                              d.high ? "high" : "low", "worse",
                              w < 0 ? json_null() : json_boolean(w), "says", says);
        if (!o || json_array_append_new(outs, o))
            goto fail;
        c->outliers++;
        c->worse += w == 1;
    }
    if (json_array_size(outs)) {
        json_t *m = json_pack("{s:s, s:O, s:s, s:O, s:i, s:f, s:f, s:s}", "key", key, "metric",
                              json_object_get(info, "metric"), "unit", unit, "better",
                              json_object_get(info, "better"), "hosts", (json_int_t)n, "median",
                              s.med, "mad", s.mad, "rule", s.mad > 0 ? "robust z" : "relative");
        if (!m || (s.mad == 0 && json_object_set_new(m, "note", relative_note(c->rel))) ||
            json_object_set(m, "outliers", outs) || json_array_append_new(c->metrics, m))
            goto fail;
    }
    goto done;
fail:
    rc = oom(err);
done:
    json_decref(outs);
    free(x);
    free(v);
    free(tmp);
    return rc;
}

/* The pairs of one metric. */
static int judge_pairs(struct ctx *c, const char *metric, const json_t *list, const char *better,
                       tp_error *err)
{
    size_t n = json_array_size(list);
    if (n < TP_FLEET_MIN_HOSTS) {
        c->few++;
        return 0;
    }
    double *v = calloc(n, sizeof *v), *tmp = calloc(n, sizeof *tmp);
    bool *bad = calloc(n, sizeof *bad);
    json_t *nodes = json_object(), *slow_nodes = json_array(), *slow_links = json_array();
    int rc = 0;
    if (!v || !tmp || !bad || !nodes || !slow_nodes || !slow_links)
        goto fail;
    size_t i;
    const json_t *p;
    json_array_foreach(list, i, p)
        v[i] = json_number_value(json_object_get(p, "value"));
    struct spread s = spread_of(v, n, tmp);
    const json_t *first = json_array_get(list, 0);
    const char *unit = json_string_value(json_object_get(first, "unit")) ?: "";
    json_array_foreach(list, i, p) {
        const char *b = json_string_value(json_object_get(p, "better"));
        if (b) { /* a line's own word wins over the rows' */
            better = b;
            break;
        }
    }
    /* per node: [slow pairs, pairs] */
    json_array_foreach(list, i, p) {
        struct verdict d = judge(json_number_value(json_object_get(p, "value")), s, c->z, c->rel);
        /* an outlier the worse way, and far enough off to be a defect: with
         * a tight fleet a pair 3 % off can be 4 MADs off */
        double x = json_number_value(json_object_get(p, "value"));
        bad[i] = d.out && worse_of(better, d.high) != 0 &&
                 fabs(x - s.med) > c->pair_rel * fabs(s.med);
        for (int e = 0; e < 2; e++) {
            const char *node = json_string_value(json_object_get(p, e ? "b" : "a"));
            json_t *cnt = json_object_get(nodes, node);
            if (!cnt) {
                cnt = json_pack("[i, i]", 0, 0);
                if (!cnt || json_object_set_new(nodes, node, cnt))
                    goto fail;
            }
            json_array_set_new(cnt, 0,
                               json_integer(json_integer_value(json_array_get(cnt, 0)) + bad[i]));
            json_array_set_new(cnt, 1,
                               json_integer(json_integer_value(json_array_get(cnt, 1)) + 1));
        }
    }
    const char *node;
    json_t *cnt;
    json_object_foreach(nodes, node, cnt) {
        json_int_t nslow = json_integer_value(json_array_get(cnt, 0)),
                   of = json_integer_value(json_array_get(cnt, 1));
        if (nslow < 2 || 2 * nslow <= of)
            continue;
        json_array_append_new(cnt, json_true()); /* marks the node slow */
        /* the node's pairs, in words: its median against the fleet's */
        double *w = calloc((size_t)of, sizeof *w);
        size_t m = 0;
        if (!w)
            goto fail;
        json_array_foreach(list, i, p) {
            if (strcmp(json_string_value(json_object_get(p, "a")), node) == 0 ||
                strcmp(json_string_value(json_object_get(p, "b")), node) == 0)
                w[m++] = json_number_value(json_object_get(p, "value"));
        }
        double nmed = median(w, m);
        free(w);
        char ns[64], ms[64], says[600];
        tp_gate_fmt(nmed, unit, 3, ns, sizeof ns);
        tp_gate_fmt(s.med, unit, 3, ms, sizeof ms);
        snprintf(says, sizeof says,
                 "%s: node %s is slow: %lld of its %lld pairs are outliers the worse way (its "
                 "median %s, all pairs' %s)",
                 metric, node, (long long)nslow, (long long)of, ns, ms);
        json_t *o = json_pack("{s:s, s:I, s:I, s:f, s:s}", "node", node, "slow", nslow, "of", of,
                              "median", nmed, "says", says);
        if (!o || json_array_append_new(slow_nodes, o))
            goto fail;
        json_object_set_new(c->seen_nodes, node, json_true());
    }
    /* the links against the pairs of the nodes that are not slow: a slow
     * node's pairs are not the healthy fleet, and would widen the MAD */
    size_t m2 = 0;
    json_array_foreach(list, i, p) {
        if (json_array_size(json_object_get(nodes, json_string_value(json_object_get(p, "a")))) !=
                3 &&
            json_array_size(json_object_get(nodes, json_string_value(json_object_get(p, "b")))) !=
                3)
            v[m2++] = json_number_value(json_object_get(p, "value"));
    }
    struct spread s2 = m2 >= TP_FLEET_MIN_HOSTS && m2 < n ? spread_of(v, m2, tmp) : s;
    json_array_foreach(list, i, p) {
        const char *a = json_string_value(json_object_get(p, "a"));
        const char *b = json_string_value(json_object_get(p, "b"));
        if (json_array_size(json_object_get(nodes, a)) == 3 ||
            json_array_size(json_object_get(nodes, b)) == 3)
            continue; /* explained by a slow node */
        double x = json_number_value(json_object_get(p, "value"));
        struct verdict d = judge(x, s2, c->z, c->rel);
        if (!(d.out && worse_of(better, d.high) != 0 &&
              fabs(x - s2.med) > c->pair_rel * fabs(s2.med)))
            continue;
        char xs[64], ms[64], dw[200], says[800];
        tp_gate_fmt(x, unit, 3, xs, sizeof xs);
        tp_gate_fmt(s2.med, unit, 3, ms, sizeof ms);
        dev_words(d, better, dw, sizeof dw);
        snprintf(says, sizeof says,
                 "%s: link %s - %s is slow: %s against a median of %s over %zu pairs%s (%s); "
                 "both ends are otherwise normal",
                 metric, a, b, xs, ms, m2 < n ? m2 : n,
                 m2 < n ? " of the nodes not slow" : "", dw);
        json_t *o = json_pack("{s:s, s:s, s:f, s:o, s:s}", "a", a, "b", b, "value", x, "z",
                              isfinite(d.z) ? json_real(d.z) : json_null(), "says", says);
        if (!o || json_array_append_new(slow_links, o))
            goto fail;
        char lk[600];
        /* a link is a cable: both ways are one */
        bool ab = strcmp(a, b) < 0;
        snprintf(lk, sizeof lk, "%s\n%s", ab ? a : b, ab ? b : a);
        json_object_set_new(c->seen_links, lk, json_true());
    }
    if (json_array_size(slow_nodes) || json_array_size(slow_links)) {
        json_t *m = json_pack("{s:s, s:s, s:o, s:i, s:f, s:f, s:s, s:O, s:O}", "metric", metric,
                              "unit", unit, "better", better ? json_string(better) : json_null(),
                              "pairs", (json_int_t)n, "median", s.med, "mad", s.mad, "rule",
                              s.mad > 0 ? "robust z" : "relative", "slow_nodes", slow_nodes,
                              "slow_links", slow_links);
        if (!m || (s.mad == 0 && json_object_set_new(m, "note", relative_note(c->rel))) ||
            (!better &&
             json_object_set_new(m, "direction",
                                 json_string("which way is better is not known: a "
                                             "pair off the median either way counts"))) ||
            json_array_append_new(c->pairs, m))
            goto fail;
    }
    goto done;
fail:
    rc = oom(err);
done:
    free(v);
    free(tmp);
    free(bad);
    json_decref(nodes);
    json_decref(slow_nodes);
    json_decref(slow_links);
    return rc;
}

json_t *tp_fleet_judge(const json_t *data, const struct tp_fleet_opts *opts, tp_error *err)
{
    struct ctx c = {TP_FLEET_Z, TP_FLEET_REL, TP_FLEET_PAIR_REL, 0, 0, 0,
                    json_array(), json_array(), json_object(), json_object()};
    if (opts && opts->z > 0)
        c.z = opts->z;
    if (opts && opts->rel > 0)
        c.rel = opts->rel;
    if (opts && opts->pair_rel > 0)
        c.pair_rel = opts->pair_rel;
    json_t *keys = json_object(), *bet = json_object(), *pm = json_object(), *out = NULL;
    if (!keys || !bet || !pm || !c.metrics || !c.pairs)
        goto fail;
    size_t i;
    const json_t *row;
    /* which way is better, by metric name, from every row that knows */
    json_array_foreach(json_object_get(data, "rows"), i, row) {
        const char *m = json_string_value(json_object_get(row, "metric"));
        const json_t *b = json_object_get(row, "better");
        if (m && json_is_string(b) && !json_object_get(bet, m) &&
            json_object_set(bet, m, (json_t *)b))
            goto fail;
    }
    json_array_foreach(json_object_get(data, "rows"), i, row) {
        const char *key = json_string_value(json_object_get(row, "key"));
        const char *m = json_string_value(json_object_get(row, "metric"));
        const char *host = json_string_value(json_object_get(row, "host"));
        const json_t *value = json_object_get(row, "value");
        if (!key || !m || !host || !json_is_number(value))
            continue;
        json_t *info = json_object_get(keys, key);
        if (!info) {
            const char *unit = json_string_value(json_object_get(row, "unit"));
            const json_t *b = json_object_get(bet, m);
            info = json_pack("{s:s, s:s, s:O, s:{}}", "metric", m, "unit", unit ? unit : "",
                             "better", b ? b : json_null(), "hosts");
            if (!info || json_object_set_new(keys, key, info))
                goto fail;
        }
        json_t *hosts = json_object_get(info, "hosts"), *vals = json_object_get(hosts, host);
        if (!vals && (json_object_set_new(hosts, host, vals = json_array()) || !vals))
            goto fail;
        if (json_array_append(vals, (json_t *)value))
            goto fail;
    }
    const char *key;
    json_t *info;
    json_object_foreach(keys, key, info) {
        if (judge_key(&c, key, info, err))
            goto fail_set;
    }
    const json_t *p;
    json_array_foreach(json_object_get(data, "pairs"), i, p) {
        const char *m = json_string_value(json_object_get(p, "metric"));
        json_t *list = json_object_get(pm, m);
        if (!list && (json_object_set_new(pm, m, list = json_array()) || !list))
            goto fail;
        if (json_array_append(list, (json_t *)p))
            goto fail;
    }
    json_object_foreach(pm, key, info) {
        /* pair lines without "better" take the rows' view of their metric */
        if (judge_pairs(&c, key, info, json_string_value(json_object_get(bet, key)), err))
            goto fail_set;
    }
    out = json_pack("{s:I, s:I, s:I, s:I, s:I, s:O, s:O}", "outliers", (json_int_t)c.outliers,
                    "worse", (json_int_t)c.worse, "slow_nodes",
                    (json_int_t)json_object_size(c.seen_nodes), "slow_links",
                    (json_int_t)json_object_size(c.seen_links), "too_few_hosts", (json_int_t)c.few, "metrics", c.metrics,
                    "pairs", c.pairs);
    if (!out)
        goto fail;
    goto done;
fail:
    oom(err);
fail_set:
    out = NULL;
done:
    json_decref(keys);
    json_decref(bet);
    json_decref(pm);
    json_decref(c.metrics);
    json_decref(c.pairs);
    json_decref(c.seen_nodes);
    json_decref(c.seen_links);
    return out;
}

void tp_fleet_print(FILE *f, const json_t *j)
{
    fprintf(f, "FLEET: %lld outlier%s (%lld the worse way), %lld slow node%s, %lld slow link%s\n",
            (long long)json_integer_value(json_object_get(j, "outliers")),
            json_integer_value(json_object_get(j, "outliers")) == 1 ? "" : "s",
            (long long)json_integer_value(json_object_get(j, "worse")),
            (long long)json_integer_value(json_object_get(j, "slow_nodes")),
            json_integer_value(json_object_get(j, "slow_nodes")) == 1 ? "" : "s",
            (long long)json_integer_value(json_object_get(j, "slow_links")),
            json_integer_value(json_object_get(j, "slow_links")) == 1 ? "" : "s");
    size_t i, k;
    const json_t *m, *o;
    json_array_foreach(json_object_get(j, "metrics"), i, m) {
        const char *note = json_string_value(json_object_get(m, "note"));
        if (note)
            fprintf(f, "  note: %s: %s\n", json_string_value(json_object_get(m, "key")), note);
        json_array_foreach(json_object_get(m, "outliers"), k, o) {
            const json_t *w = json_object_get(o, "worse");
            fprintf(f, "%-8s %s\n",
                    json_is_true(w)    ? "WORSE"
                    : json_is_false(w) ? "better"
                                       : "OUTLIER",
                    json_string_value(json_object_get(o, "says")));
        }
    }
    json_array_foreach(json_object_get(j, "pairs"), i, m) {
        const char *note = json_string_value(json_object_get(m, "note"));
        if (note)
            fprintf(f, "  note: %s: %s\n", json_string_value(json_object_get(m, "metric")), note);
        json_array_foreach(json_object_get(m, "slow_nodes"), k, o)
            fprintf(f, "%-8s %s\n", "NODE", json_string_value(json_object_get(o, "says")));
        json_array_foreach(json_object_get(m, "slow_links"), k, o)
            fprintf(f, "%-8s %s\n", "LINK", json_string_value(json_object_get(o, "says")));
    }
}

int tp_fleet_rounds(int n)
{
    return n < 2 ? 0 : n % 2 ? n : n - 1;
}

int tp_fleet_partner(int n, int round, int node)
{
    int m = n + n % 2; /* with a bye for an odd count: the node n */
    if (n < 2 || round < 0 || round >= m - 1 || node < 0 || node >= n)
        return -1;
    /* node m-1 stays put, the others turn around it: in round r it meets
     * r, and every other i meets the node opposite, 2r - i mod (m-1) */
    int p = node == m - 1 ? round : node == round ? m - 1 : ((2 * round - node) % (m - 1) + (m - 1)) % (m - 1);
    return p >= n ? -1 : p;
}
