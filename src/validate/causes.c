/* The causes the counters of validate's test documents name
 * (docs/counters.md): a test's causes beside its line and in its entry,
 * and on a node's verdict when the triage named the node, the causes of
 * its own tests and of the pairs it was in, as the verdict's evidence. */
#include <stdio.h>
#include <string.h>

#include "tp/validate.h"
#include "validate_int.h"

/* The causes of one counters object into out, each line prefixed. */
static void causes_of(json_t *out, const json_t *counters, const char *prefix)
{
    size_t i, j;
    const json_t *c, *e;
    json_array_foreach(json_object_get(counters, "causes"), i, c) {
        char line[256];
        int n = snprintf(line, sizeof line, "%s%s:", prefix,
                         json_string_value(json_object_get(c, "cause")));
        json_array_foreach(json_object_get(c, "evidence"), j, e) {
            const json_t *d = json_object_get(e, "delta");
            if (n < 0 || (size_t)n >= sizeof line || j == 3)
                break;
            n += snprintf(line + n, sizeof line - (size_t)n, "%s %s %s", j ? "," : "",
                          json_string_value(json_object_get(e, "dev")),
                          json_string_value(json_object_get(e, "name")));
            if (d && n >= 0 && (size_t)n < sizeof line)
                n += snprintf(line + n, sizeof line - (size_t)n, " +%" JSON_INTEGER_FORMAT,
                              json_integer_value(d));
        }
        json_array_append_new(out, json_string(line));
    }
}

json_t *tp__validate_counter_causes(const json_t *doc)
{
    json_t *out = json_array();
    const json_t *res = json_object_get(doc, "results");
    causes_of(out, json_object_get(res, "counters"), "");
    causes_of(out, json_object_get(res, "peer_counters"), "server's ");
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(res, "nodes_counters"), i, e) {
        char prefix[300];
        snprintf(prefix, sizeof prefix, "%s's ", json_string_value(json_object_get(e, "host")));
        causes_of(out, json_object_get(e, "counters"), prefix);
    }
    return out;
}

/* The causes of entry e (a test or a pair of a node's results) as
 * evidence objects {test, pair?, cause, counters} into out, at most max
 * in all. */
static void cite(json_t *out, const json_t *e, size_t max)
{
    const char *test = json_string_value(json_object_get(e, "test"));
    const char *a = json_string_value(json_object_get(e, "a"));
    const char *b = json_string_value(json_object_get(e, "b"));
    size_t i;
    const json_t *x;
    json_array_foreach(json_object_get(e, "counters"), i, x) {
        if (json_array_size(out) >= max)
            return;
        const char *line = json_string_value(x), *colon = line ? strchr(line, ':') : NULL;
        if (!colon)
            continue;
        json_t *o = json_pack("{s:s, s:s%, s:s}", "test", test ? test : "?", "cause", line,
                              (size_t)(colon - line), "counters", colon[1] ? colon + 2 : "");
        if (a && b) {
            char pair[300];
            snprintf(pair, sizeof pair, "%s--%s", a, b);
            json_object_set_new(o, "pair", json_string(pair));
        }
        json_array_append_new(out, o);
    }
}

void tp_validate_cite_counters(json_t *verdicts, const json_t *gathered,
                               const char *const *labels, int n)
{
    static const char *const named[] = {"slow", "link", "suspect", "error", "switch", "uplink",
                                        "cable"};
    size_t i, r, q;
    json_t *v;
    const json_t *g, *e;
    json_array_foreach(json_object_get(verdicts, "nodes_detail"), i, v) {
        int k = (int)json_integer_value(json_object_get(v, "node"));
        const char *st = json_string_value(json_object_get(v, "status"));
        bool judged = false;
        for (size_t s = 0; st && s < sizeof named / sizeof *named; s++)
            judged |= strcmp(st, named[s]) == 0;
        if (!judged || k < 0 || k >= n)
            continue;
        const char *label = labels[k];
        json_t *ev = json_array();
        json_array_foreach(gathered, r, g) { /* its own tests first */
            const char *gl = json_string_value(json_object_get(g, "label"));
            if (gl && strcmp(gl, label) == 0)
                json_array_foreach(json_object_get(g, "tests"), q, e)
                    cite(ev, e, 8);
        }
        json_array_foreach(gathered, r, g) { /* then the pairs it was in */
            json_array_foreach(json_object_get(g, "pairs"), q, e) {
                const char *a = json_string_value(json_object_get(e, "a"));
                const char *b = json_string_value(json_object_get(e, "b"));
                if ((a && strcmp(a, label) == 0) || (b && strcmp(b, label) == 0))
                    cite(ev, e, 8);
            }
        }
        if (!json_array_size(ev)) {
            json_decref(ev);
            continue;
        }
        char says[1200], list[200] = "";
        size_t len = 0;
        json_array_foreach(ev, q, e) {
            const char *c = json_string_value(json_object_get(e, "cause"));
            if (!strstr(list, c) && len < sizeof list - 1)
                len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", c);
        }
        snprintf(says, sizeof says, "%s; the counters of its tests name: %s",
                 json_string_value(json_object_get(v, "says")), list);
        json_object_set_new(v, "says", json_string(says));
        json_object_set_new(v, "counters", ev);
    }
}
