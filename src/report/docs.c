/* Result documents read back for `report`: one file, or the files and
 * folders a command line names, and the metric rows of many documents at
 * once, each row with the host it came from.
 *
 * A folder is taken whole but forgivingly (a .json file in it that is not a
 * result document is passed over: results folders hold other JSON too),
 * while a file named on its own must be one, so a typo is an error rather
 * than an empty report. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tp/json.h"
#include "tp/report.h"

int tp_report_load(const char *path, json_t **doc, tp_error *err)
{
    json_t *d = NULL;
    int rc = tp_json_load(path, &d, err);
    if (rc)
        return rc;
    const char *schema = json_string_value(json_object_get(d, "schema"));
    if (!schema || strncmp(schema, "trainpath.result/", 17) != 0 ||
        !json_is_string(json_object_get(d, "command"))) {
        json_decref(d);
        return tp_error_set(err, TP_EUSAGE, "%s: not a trainpath result document", path);
    }
    *doc = d;
    return 0;
}

/* A document into docs[*n] with the path it came from. */
static void keep(json_t **docs, size_t *n, json_t *d, const char *path)
{
    json_object_set_new(d, "_file", json_string(path));
    docs[(*n)++] = d;
}

/* Every *.json result document in folder, in name order, while there is
 * room; the others are skipped. */
static int load_folder(const char *folder, json_t **docs, size_t *n, tp_error *err)
{
    struct dirent **list;
    int k = scandir(folder, &list, NULL, alphasort);
    if (k < 0)
        return tp_error_errno(err, TP_EUSAGE, errno, "%s", folder);
    for (int j = 0; j < k; j++) {
        const char *e = list[j]->d_name;
        size_t len = strlen(e);
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", folder, e);
        json_t *d;
        tp_error ignored;
        if (len > 5 && strcmp(e + len - 5, ".json") == 0 && *n < TP_REPORT_MAX_DOCS &&
            tp_report_load(path, &d, &ignored) == 0)
            keep(docs, n, d, path);
        free(list[j]);
    }
    free(list);
    return 0;
}

int tp_report_docs_load(const char *const *names, size_t nnames, json_t ***out, size_t *n,
                        tp_error *err)
{
    *out = NULL;
    *n = 0;
    json_t **docs = calloc(TP_REPORT_MAX_DOCS, sizeof *docs);
    if (!docs)
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    size_t nd = 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < nnames; i++) {
        struct stat st;
        json_t *d;
        if (stat(names[i], &st) == 0 && S_ISDIR(st.st_mode))
            rc = load_folder(names[i], docs, &nd, err);
        else if (nd == TP_REPORT_MAX_DOCS)
            rc = tp_error_set(err, TP_EUSAGE, "at most %d documents", TP_REPORT_MAX_DOCS);
        else if ((rc = tp_report_load(names[i], &d, err)) == 0)
            keep(docs, &nd, d, names[i]);
    }
    if (rc == 0 && nd == 0)
        rc =
            tp_error_set(err, TP_EUSAGE, "no result documents in %s", nnames ? names[0] : "(none)");
    if (rc) {
        tp_report_docs_free(docs, nd);
        return rc;
    }
    *out = docs;
    *n = nd;
    return 0;
}

void tp_report_docs_free(json_t **docs, size_t n)
{
    for (size_t i = 0; docs && i < n; i++)
        json_decref(docs[i]);
    free(docs);
}

json_t *tp_report_rows(json_t *const *docs, size_t n, const char *host, tp_error *err)
{
    json_t *rows = json_array();
    if (!rows) {
        tp_error_set(err, TP_ENOMEM, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *r = tp_report_metrics(docs[i], err);
        if (!r) {
            json_decref(rows);
            return NULL;
        }
        const char *h = host ? host : tp_json_str(json_object_get(docs[i], "provenance"), "host");
        size_t k;
        json_t *row;
        json_array_foreach(r, k, row) {
            if (h)
                json_object_set_new(row, "host", json_string(h));
        }
        int bad = json_array_extend(rows, r);
        json_decref(r);
        if (bad) {
            json_decref(rows);
            tp_error_set(err, TP_ENOMEM, "out of memory");
            return NULL;
        }
    }
    return rows;
}
