/* What the tests whose documents sit in the results folders saw on the
 * node's counters (tp_check_scan_counters, docs/counters.md): every result
 * document under the folders (a few levels down: validate writes nodes/X/
 * and pairs/A--B/) is read, and each cause its counters or its server's
 * counters name becomes a fact {file, command, side, cause, evidence}. A
 * rule then says whether a test window was clean. Symlinks are not
 * followed; a file that is not a result document is passed over. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tp/check.h"
#include "tp/file.h"

#include "facts_int.h"

#define WALK_MAX_DEPTH 3

/* The causes of one counters object of a document, appended to out. */
static void causes_in(const char *path, const char *cmd, const json_t *counters, const char *side,
                      json_t *out)
{
    size_t i, j;
    const json_t *c, *e;
    json_array_foreach(json_object_get(counters, "causes"), i, c) {
        const char *cause = json_string_value(json_object_get(c, "cause"));
        if (!cause)
            continue;
        char ev[400] = "";
        size_t n = 0;
        json_array_foreach(json_object_get(c, "evidence"), j, e) {
            if (n >= sizeof ev - 1 || j == 4)
                break;
            const json_t *d = json_object_get(e, "delta");
            int w = snprintf(ev + n, sizeof ev - n, "%s%s %s", j ? ", " : "",
                             json_string_value(json_object_get(e, "dev")),
                             json_string_value(json_object_get(e, "name")));
            n = w < 0 || n + (size_t)w >= sizeof ev ? sizeof ev - 1 : n + (size_t)w;
            if (json_is_integer(d) && n < sizeof ev - 1) {
                w = snprintf(ev + n, sizeof ev - n, " +%" JSON_INTEGER_FORMAT,
                             json_integer_value(d));
                n = w < 0 || n + (size_t)w >= sizeof ev ? sizeof ev - 1 : n + (size_t)w;
            }
        }
        json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:s, s:s}", "file", path, "command",
                                             cmd ? cmd : "?", "side", side, "cause", cause,
                                             "evidence", ev));
    }
}

/* The causes of one document (this node's, net's server's, and coll's and
 * step's other hosts'), appended to out. */
static void causes_of(const char *path, const json_t *doc, json_t *out)
{
    const json_t *res = json_object_get(doc, "results");
    const char *cmd = json_string_value(json_object_get(doc, "command"));
    causes_in(path, cmd, json_object_get(res, "counters"), "this node", out);
    causes_in(path, cmd, json_object_get(res, "peer_counters"), "the server node", out);
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(res, "nodes_counters"), i, e) {
        char side[300];
        snprintf(side, sizeof side, "host %s", json_string_value(json_object_get(e, "host")));
        causes_in(path, cmd, json_object_get(e, "counters"), side, out);
    }
}

static void walk(const char *dir, int depth, json_t *out)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        struct stat st;
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path ||
            lstat(path, &st) != 0)
            continue;
        size_t len = strlen(e->d_name);
        if (S_ISDIR(st.st_mode) && depth < WALK_MAX_DEPTH) {
            walk(path, depth + 1, out);
        } else if (S_ISREG(st.st_mode) && len > 5 && strcmp(e->d_name + len - 5, ".json") == 0) {
            char *text = NULL;
            size_t n = 0;
            tp_error err = {0};
            if (tp_file_read(path, "a result document", TP_FILE_MAX_DOC, TP_FILE_REGULAR, &text,
                             &n, &err) != 0)
                continue;
            json_t *doc = json_loadb(text, n, 0, NULL);
            free(text);
            if (json_is_object(doc) && json_is_object(json_object_get(doc, "results")))
                causes_of(path, doc, out);
            json_decref(doc);
        }
    }
    closedir(d);
}

int tp_check_scan_counters(json_t *facts, const char *const *dirs, int n, tp_error *err)
{
    json_t *out = json_array();
    if (!out)
        return tp_error_set(err, TP_ENOMEM, "check: out of memory");
    for (int i = 0; i < n; i++)
        walk(dirs[i], 0, out);
    json_object_set_new(facts, "counter_causes", out);
    return 0;
}
