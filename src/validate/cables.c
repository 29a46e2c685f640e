/* A node's own counters handed to the fleet triage on an allocation: the
 * causes of kind errors or flap its tests' counters named on its own link
 * (the interface that carried the test's traffic), so that a node the
 * triage names slow is a bad cable (status "cable", action service) when
 * they name its link (docs/fleet.md, "Switches and uplinks";
 * docs/counters.md, "Causes"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validate_int.h"

/* the causes that name a node's link rather than the path beyond it */
static bool link_cause(const char *cause)
{
    return cause && (strcmp(cause, "errors") == 0 || strcmp(cause, "flap") == 0);
}

/* The evidence of counters' link causes on its path device into out, each
 * {"node": who, "cause", "dev", "name", "delta"}. */
static void link_of(json_t *out, const json_t *counters, const char *who)
{
    const char *path = json_string_value(json_object_get(counters, "path"));
    size_t i, j;
    const json_t *c, *e;
    if (!path || !*path) /* no path: no link to name */
        return;
    json_array_foreach(json_object_get(counters, "causes"), i, c)
    {
        const char *cause = json_string_value(json_object_get(c, "cause"));
        if (!link_cause(cause))
            continue;
        json_array_foreach(json_object_get(c, "evidence"), j, e)
        {
            const char *dev = json_string_value(json_object_get(e, "dev"));
            const char *name = json_string_value(json_object_get(e, "name"));
            if (!dev || !name || strcmp(dev, path) != 0)
                continue;
            json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:s, s:I}", "node", who, "cause",
                                                 cause, "dev", dev, "name", name, "delta",
                                                 json_integer_value(json_object_get(e, "delta"))));
        }
    }
}

json_t *tp__validate_link_causes(const json_t *doc)
{
    json_t *out = json_array();
    const json_t *res = json_object_get(doc, "results");
    if (out) {
        link_of(out, json_object_get(res, "counters"), "");
        link_of(out, json_object_get(res, "peer_counters"), "server");
    }
    return out;
}

/* What one node's counters said of its link, summed over its tests: a
 * (cause, dev, counter) each, its deltas' sum and the tests it moved in. */
#define LINK_MAX 8
struct said {
    const char *cause, *dev, *name;
    json_int_t sum;
    int tests;
};
struct node_said {
    int n;
    struct said s[LINK_MAX];
};

/* label's rank in index (label -> rank), or -1 */
static int rank_of(const json_t *index, const char *label)
{
    const json_t *r = label ? json_object_get(index, label) : NULL;
    return r ? (int)json_integer_value(r) : -1;
}

/* entry e (a test, pair or group of node self's): its link causes into
 * said, each to the node it names (self, or the pair's server b) */
static void take(struct node_said *said, const json_t *index, int self, const json_t *e)
{
    size_t i;
    const json_t *x;
    json_array_foreach(json_object_get(e, "link"), i, x)
    {
        const char *who = json_string_value(json_object_get(x, "node"));
        int v = who && strcmp(who, "server") == 0
                    ? rank_of(index, json_string_value(json_object_get(e, "b")))
                    : self;
        const char *cause = json_string_value(json_object_get(x, "cause"));
        const char *dev = json_string_value(json_object_get(x, "dev"));
        const char *name = json_string_value(json_object_get(x, "name"));
        if (v < 0 || !cause || !dev || !name)
            continue;
        struct node_said *ns = &said[v];
        int k = 0;
        while (k < ns->n && !(strcmp(ns->s[k].cause, cause) == 0 &&
                              strcmp(ns->s[k].dev, dev) == 0 && strcmp(ns->s[k].name, name) == 0))
            k++;
        if (k == ns->n) {
            if (ns->n == LINK_MAX)
                continue;
            ns->s[ns->n++] = (struct said){.cause = cause, .dev = dev, .name = name};
        }
        ns->s[k].sum += json_integer_value(json_object_get(x, "delta"));
        ns->s[k].tests++;
    }
}

/* "flap on v6: carrier_changes +4 in 2 tests; errors on ..." into out */
static void phrase(const struct node_said *ns, char *out, size_t size)
{
    size_t len = 0;
    out[0] = 0;
    for (int k = 0; k < ns->n && len < size; k++) {
        const struct said *s = &ns->s[k];
        bool same = k > 0 && strcmp(s->cause, ns->s[k - 1].cause) == 0 &&
                    strcmp(s->dev, ns->s[k - 1].dev) == 0;
        int w =
            same ? snprintf(out + len, size - len, ", %s +%" JSON_INTEGER_FORMAT " in %d test%s",
                            s->name, s->sum, s->tests, s->tests == 1 ? "" : "s")
                 : snprintf(out + len, size - len,
                            "%s%s on %s: %s +%" JSON_INTEGER_FORMAT " in %d test%s", k ? "; " : "",
                            s->cause, s->dev, s->name, s->sum, s->tests, s->tests == 1 ? "" : "s");
        if (w < 0)
            break;
        len += (size_t)w;
    }
}

int tp__validate_link_errors(tp_triage *tri, const json_t *gathered,
                             const struct tp__validate_node *nodes, int n, tp_error *err)
{
    if (!tri || n <= 0)
        return 0;
    struct node_said *said = calloc((size_t)n, sizeof *said);
    json_t *index = json_object(); /* label -> rank (labels are unique) */
    bool oom = !said || !index;
    for (int r = 0; !oom && r < n; r++)
        oom = json_object_set_new(index, nodes[r].label, json_integer(r)) != 0;
    if (oom) {
        free(said);
        json_decref(index);
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    }
    size_t i, j;
    const json_t *g, *e;
    static const char *const parts[] = {"tests", "pairs", "groups"};
    json_array_foreach(gathered, i, g)
    {
        int self = rank_of(index, json_string_value(json_object_get(g, "label")));
        if (self < 0)
            continue;
        for (size_t p = 0; p < sizeof parts / sizeof *parts; p++)
            json_array_foreach(json_object_get(g, parts[p]), j, e)
            {
                take(said, index, self, e);
            }
    }
    int rc = 0;
    for (int v = 0; rc == 0 && v < n; v++) {
        char what[512];
        if (!said[v].n)
            continue;
        phrase(&said[v], what, sizeof what);
        rc = tp_triage_link_errors(tri, v, what, err);
    }
    free(said);
    json_decref(index);
    return rc;
}
