/* The "counters" object of a result document as a few lines under a
 * command's table (include/tp/counters.h): what was read, each cause with
 * its evidence, and what reset or went. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tp/counters.h"

static void evidence(FILE *f, const json_t *ev)
{
    size_t i, shown = 0;
    const json_t *e;
    json_array_foreach(ev, i, e) {
        if (shown == 4) {
            fprintf(f, ", +%zu more", json_array_size(ev) - shown);
            break;
        }
        const json_t *d = json_object_get(e, "delta");
        fprintf(f, "%s%s %s", shown ? ", " : "", json_string_value(json_object_get(e, "dev")),
                json_string_value(json_object_get(e, "name")));
        if (d)
            fprintf(f, " +%" JSON_INTEGER_FORMAT, json_integer_value(d));
        shown++;
    }
}

void tp_ctr_print(FILE *f, const char *what, const json_t *c)
{
    what = what ? what : "counters";
    if (!c)
        return;
    const char *why = json_string_value(json_object_get(c, "error"));
    if (why) {
        fprintf(f, "%s: not read (%s)\n", what, why);
        return;
    }
    const char *path = json_string_value(json_object_get(c, "path"));
    const json_t *causes = json_object_get(c, "causes");
    fprintf(f, "%s: %" JSON_INTEGER_FORMAT " read over %.2f s%s%s%s\n", what,
            json_integer_value(json_object_get(c, "counters_read")),
            json_number_value(json_object_get(c, "window_s")), path ? ", path " : "",
            path ? path : "", json_array_size(causes) ? "" : "; no cause found");
    size_t i;
    const json_t *e;
    json_array_foreach(causes, i, e) {
        fprintf(f, "  %s: ", json_string_value(json_object_get(e, "cause")));
        evidence(f, json_object_get(e, "evidence"));
        fprintf(f, "\n    %s\n", json_string_value(json_object_get(e, "text")));
    }
    const json_t *reset = json_object_get(c, "reset");
    if (json_array_size(reset)) {
        fprintf(f, "  wrapped or reset (no delta claimed): ");
        evidence(f, reset);
        fprintf(f, "\n");
    }
    static const char *const lists[] = {"gone", "new"};
    for (int k = 0; k < 2; k++) {
        const json_t *l = json_object_get(c, lists[k]);
        if (!json_array_size(l))
            continue;
        fprintf(f, "  devices %s during the test:", lists[k]);
        json_array_foreach(l, i, e)
            fprintf(f, " %s", json_string_value(e));
        fprintf(f, "\n");
    }
}

void tp_ctr_print_results(FILE *f, const json_t *results)
{
    tp_ctr_print(f, NULL, json_object_get(results, "counters"));
    tp_ctr_print(f, "server's counters", json_object_get(results, "peer_counters"));
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(results, "nodes_counters"), i, e) {
        char what[320];
        snprintf(what, sizeof what, "counters on %s (rank %" JSON_INTEGER_FORMAT ")",
                 json_string_value(json_object_get(e, "host")),
                 json_integer_value(json_object_get(e, "rank")));
        tp_ctr_print(f, what, json_object_get(e, "counters"));
    }
}
