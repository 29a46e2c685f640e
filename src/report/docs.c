/* Result documents read back for `report`: one file, or the files and
 * folders a command line names, and the metric rows of many documents at
 * once, each row with the host it came from.
 *
 * Every document is checked before anything is done with it
 * (tp_report_check): the schema version it claims, its shape (a known
 * command, a status, results an object), and everything the metric readers
 * read (numbers that are numbers, rows that make physical sense). A
 * document that fails is refused, naming the file and why; of many, every
 * one that fails is named, and nothing is read.
 *
 * A folder is taken whole: a .json file in it that is not JSON (cut short,
 * garbage) or that claims to be a result document and is not a sound one
 * is refused as a file named alone would be. Only a file that is JSON and
 * does not claim to be a result (no "schema" "trainpath.result/...", not a
 * "command" with "results": facts snapshots, report's own --json outputs)
 * is passed over: results folders hold those too. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report_int.h"
#include "tp/file.h"
#include "tp/json.h"
#include "tp/report.h"
#include "tp/result.h"

#define RESULT_PREFIX "trainpath.result/"

/* Whether d says it is a result document (rightly or not). */
static bool claims(const json_t *d)
{
    const char *schema = json_string_value(json_object_get(d, "schema"));
    return json_is_object(d) &&
           ((schema && strncmp(schema, RESULT_PREFIX, strlen(RESULT_PREFIX)) == 0) ||
            (json_object_get(d, "command") && json_object_get(d, "results")));
}

/* What v is, for a message; "missing" when absent. */
static const char *what(const json_t *v)
{
    return v ? tp__report_type_name(v) : "missing";
}

/* A member of d that must be of type want when present ("" when fine). */
static bool typed(const json_t *d, const char *key, json_type want, const char *wants, char *why,
                  size_t cap)
{
    const json_t *v = json_object_get(d, key);
    if (!v || json_typeof(v) == want || (want == JSON_INTEGER && json_is_integer(v)))
        return true;
    snprintf(why, cap, "\"%s\" is %s, want %s", key, tp__report_type_name(v), wants);
    return false;
}

/* The top level: schema, command, status, results. */
static bool shape(const json_t *d, char *why, size_t cap)
{
    if (!json_is_object(d)) {
        snprintf(why, cap, "not a trainpath result document (%s, not an object)",
                 tp__report_type_name(d));
        return false;
    }
    const json_t *sv = json_object_get(d, "schema");
    const char *schema = json_string_value(sv);
    if (!schema) {
        snprintf(why, cap, "not a trainpath result document (%s)",
                 sv ? "\"schema\" is not a string" : "no \"schema\"");
        return false;
    }
    if (strncmp(schema, RESULT_PREFIX, strlen(RESULT_PREFIX)) != 0) {
        snprintf(why, cap, "not a trainpath result document (schema \"%.64s\")", schema);
        return false;
    }
    if (strcmp(schema, TP_RESULT_SCHEMA) != 0) {
        snprintf(why, cap, "claims schema \"%.64s\": this trainpath reads \"%s\" only", schema,
                 TP_RESULT_SCHEMA);
        return false;
    }
    const json_t *cv = json_object_get(d, "command");
    if (!json_is_string(cv)) {
        snprintf(why, cap, "\"command\" is %s, want a string", what(cv));
        return false;
    }
    if (!tp__report_command_known(json_string_value(cv))) {
        char known[400];
        snprintf(why, cap, "command \"%.64s\" is not one trainpath runs (%s)",
                 json_string_value(cv), tp__report_commands(known, sizeof known));
        return false;
    }
    const json_t *st = json_object_get(d, "status");
    if (!json_is_object(st)) {
        snprintf(why, cap, "\"status\" is %s, want an object", what(st));
        return false;
    }
    const json_t *ok = json_object_get(st, "ok");
    if (!json_is_boolean(ok)) {
        snprintf(why, cap, "status.ok is %s, want true or false", what(ok));
        return false;
    }
    char sub[160];
    if (!typed(st, "code", JSON_STRING, "a string", sub, sizeof sub) ||
        !typed(st, "exit_code", JSON_INTEGER, "an integer", sub, sizeof sub) ||
        !typed(st, "message", JSON_STRING, "a string", sub, sizeof sub)) {
        snprintf(why, cap, "status: %s", sub);
        return false;
    }
    const json_t *res = json_object_get(d, "results");
    if (!json_is_object(res)) {
        snprintf(why, cap, "\"results\" is %s, want an object", what(res));
        return false;
    }
    return typed(d, "config", JSON_OBJECT, "an object", why, cap) &&
           typed(d, "provenance", JSON_OBJECT, "an object", why, cap) &&
           typed(d, "started_utc", JSON_STRING, "a string", why, cap);
}

int tp_report_check(const json_t *doc, tp_error *err)
{
    char why[400] = "";
    if (!shape(doc, why, sizeof why))
        return tp_error_set(err, TP_EUSAGE, "%s", why);
    json_t *rows = tp__report_metrics_checked(doc, why, sizeof why, err);
    if (!rows)
        return TP_ENOMEM;
    json_decref(rows);
    if (why[0])
        return tp_error_set(err, TP_EUSAGE, "%s", why);
    return 0;
}

int tp_report_load(const char *path, json_t **doc, tp_error *err)
{
    json_t *d = NULL;
    *doc = NULL;
    struct stat st;
    /* a device or a pipe is not a document (and /dev/zero never ends) */
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return tp_error_set(err, TP_EUSAGE, "%s: is %s; a result document must be a regular file",
                            path, tp_file_type_name((unsigned)st.st_mode));
    int rc = tp_json_load(path, &d, err);
    if (rc)
        return rc;
    if ((rc = tp_report_check(d, err))) {
        json_decref(d);
        tp_error_prefix(err, "%s", path);
        return rc;
    }
    *doc = d;
    return 0;
}

/* The documents read so far, and the files refused. */
struct reading {
    json_t **docs;
    size_t n;
    int rc;          /* the first refusal's code; TP_ENOMEM wins */
    int refused;     /* how many files */
    char why[512];   /* their messages, "; "-separated, as many as fit */
    char names[512]; /* the files alone, ", "-separated, when the messages do not fit */
    char first[512]; /* the first message */
};

/* s after buf's text, as much as fits. */
static void append(char *buf, size_t cap, const char *s)
{
    size_t len = strlen(buf), k = strlen(s);
    if (k > cap - 1 - len)
        k = cap - 1 - len;
    memcpy(buf + len, s, k);
    buf[len + k] = '\0';
}

static void refuse(struct reading *rd, const tp_error *e)
{
    if (rd->rc == 0 || e->code == TP_ENOMEM)
        rd->rc = e->code;
    if (rd->refused) {
        append(rd->why, sizeof rd->why, "; ");
        append(rd->names, sizeof rd->names, ", ");
    } else {
        snprintf(rd->first, sizeof rd->first, "%s", e->msg);
    }
    append(rd->why, sizeof rd->why, e->msg);
    /* the file is the message up to its first ": " (a folder's error too) */
    const char *colon = strstr(e->msg, ": ");
    char name[512];
    snprintf(name, sizeof name, "%.*s", colon ? (int)(colon - e->msg) : (int)strlen(e->msg),
             e->msg);
    append(rd->names, sizeof rd->names, name);
    rd->refused++;
}

/* A document into the reading with the path it came from. */
static void keep(struct reading *rd, json_t *d, const char *path)
{
    if (rd->n == TP_REPORT_MAX_DOCS) {
        tp_error e;
        tp_error_set(&e, TP_EUSAGE, "%s: more than %d documents (at most %d in one call)", path,
                     TP_REPORT_MAX_DOCS, TP_REPORT_MAX_DOCS);
        json_decref(d);
        refuse(rd, &e);
        return;
    }
    json_object_set_new(d, "_file", json_string(path));
    rd->docs[rd->n++] = d;
}

/* One file of a folder: kept, refused, or (JSON that is not a result)
 * passed over. */
static void folder_file(struct reading *rd, const char *path)
{
    json_t *d = NULL;
    tp_error e = {0};
    if (tp_json_load(path, &d, &e)) {
        refuse(rd, &e);
        return;
    }
    if (!claims(d)) {
        json_decref(d);
        return;
    }
    if (tp_report_check(d, &e)) {
        tp_error_prefix(&e, "%s", path);
        json_decref(d);
        refuse(rd, &e);
        return;
    }
    keep(rd, d, path);
}

/* Every *.json regular file in folder, in name order. */
static void load_folder(struct reading *rd, const char *folder)
{
    struct dirent **list;
    int k = scandir(folder, &list, NULL, alphasort);
    if (k < 0) {
        tp_error e;
        tp_error_errno(&e, TP_EUSAGE, errno, "%s", folder);
        refuse(rd, &e);
        return;
    }
    for (int j = 0; j < k; j++) {
        const char *name = list[j]->d_name;
        size_t len = strlen(name);
        char path[4200];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", folder, name);
        if (len > 5 && strcmp(name + len - 5, ".json") == 0 && stat(path, &st) == 0 &&
            S_ISREG(st.st_mode))
            folder_file(rd, path);
        free(list[j]);
    }
    free(list);
}

int tp_report_docs_load(const char *const *names, size_t nnames, json_t ***out, size_t *n,
                        tp_error *err)
{
    *out = NULL;
    *n = 0;
    struct reading rd = {.docs = calloc(TP_REPORT_MAX_DOCS, sizeof(json_t *))};
    if (!rd.docs)
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    for (size_t i = 0; i < nnames; i++) {
        struct stat st;
        json_t *d;
        tp_error e = {0};
        if (stat(names[i], &st) == 0 && S_ISDIR(st.st_mode))
            load_folder(&rd, names[i]);
        else if (tp_report_load(names[i], &d, &e) == 0)
            keep(&rd, d, names[i]);
        else
            refuse(&rd, &e);
    }
    int rc = rd.rc;
    if (rd.refused == 1)
        tp_error_set(err, rc, "%s", rd.why);
    else if (rd.refused > 1 && strlen(rd.why) + 32 < sizeof err->msg)
        tp_error_set(err, rc, "%d documents refused: %s", rd.refused, rd.why);
    else if (rd.refused > 1) /* every name, then why the first */
        tp_error_set(err, rc, "%d documents refused: %s (the first: %s)", rd.refused, rd.names,
                     rd.first);
    if (rd.refused && err)
        tp_utf8_trim(err->msg); /* a message cut inside a character */
    else if (rd.n == 0)
        rc = tp_error_set(err, TP_EUSAGE, "no result documents in %s",
                          nnames ? names[0] : "(none)");
    if (rc) {
        tp_report_docs_free(rd.docs, rd.n);
        return rc;
    }
    *out = rd.docs;
    *n = rd.n;
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
