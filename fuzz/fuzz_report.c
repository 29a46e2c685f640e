/* Fuzz target: result documents read back (tp_report_load, which checks
 * them: tp_report_check) and everything `trainpath report` does with one:
 * its metric rows (tp_report_metrics) and provenance, the diff of the rows
 * against themselves (tp_diff_rows, which reads the documents'
 * histograms), the Prometheus text, the fleet judgement of the document as
 * one host, the HTML page, and the history (tp_history_add into an
 * in-memory SQLite database, kept for 256 inputs, then begun afresh). The
 * input is the document's JSON text.
 *
 * A document the loader refuses must be refused naming the file; it still
 * goes through the rest when it looks like a result (a trainpath.result
 * schema and a command), since those take documents from other callers
 * (validate, the tests) unchecked and must not break on any. A document
 * the loader accepts must give rows that are all finite and not negative. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "tp/history.h"
#include "tp/html.h"
#include "tp/judge.h"
#include "tp/report.h"

static tp_history *hist;

static bool name_char(char ch, bool first)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' || ch == ':' ||
           (!first && ch >= '0' && ch <= '9');
}

/* Every line of a Prometheus text is "# HELP NAME text", "# TYPE NAME
 * gauge" or NAME{LABEL="escaped",...} VALUE: a label value or a help text
 * that breaks out of its line would make a sample the collector misreads. */
static void check_prom(const char *t, size_t len)
{
    FZ_ASSERT(len == 0 || t[len - 1] == '\n', "prom text does not end its last line");
    for (const char *line = t, *end; line < t + len; line = end + 1) {
        end = memchr(line, '\n', (size_t)(t + len - line));
        const char *p = line;
        if (strncmp(p, "# HELP ", 7) == 0 || strncmp(p, "# TYPE ", 7) == 0)
            p += 7;
        bool comment = p != line;
        FZ_ASSERT(name_char(*p, true), "prom line %.*s: no metric name", (int)(end - line), line);
        while (name_char(*p, false))
            p++;
        if (comment) {
            FZ_ASSERT(*p == ' ', "prom line %.*s: no text after the name", (int)(end - line), line);
            continue;
        }
        if (*p == '{') {
            do {
                p++;
                FZ_ASSERT(name_char(*p, true) && *p != ':', "prom line %.*s: bad label name",
                          (int)(end - line), line);
                while (name_char(*p, false) && *p != ':')
                    p++;
                FZ_ASSERT(p[0] == '=' && p[1] == '"', "prom line %.*s: no label value",
                          (int)(end - line), line);
                for (p += 2; *p != '"'; p++) {
                    FZ_ASSERT(p < end, "prom line %.*s: a label value runs off the line",
                              (int)(end - line), line);
                    if (*p == '\\') {
                        p++;
                        FZ_ASSERT(*p == '\\' || *p == '"' || *p == 'n',
                                  "prom line %.*s: bad escape", (int)(end - line), line);
                    }
                }
                p++;
            } while (*p == ',');
            FZ_ASSERT(*p == '}', "prom line %.*s: labels not closed", (int)(end - line), line);
            p++;
        }
        FZ_ASSERT(*p == ' ' && p + 1 < end && !memchr(p + 1, ' ', (size_t)(end - p - 1)),
                  "prom line %.*s: not NAME VALUE", (int)(end - line), line);
    }
}
static unsigned hist_uses;

static void history(const json_t *doc)
{
    tp_error err;
    if (hist && ++hist_uses >= 256) {
        tp_history_close(hist);
        hist = NULL;
    }
    if (!hist) {
        FZ_ASSERT(tp_history_open(":memory:", &hist, &err) == 0, "%s", err.msg);
        hist_uses = 0;
    }
    struct tp_history_added a, b;
    if (tp_history_add_run(hist, doc, "doc.json", "fuzz", &a, &err) != 0) {
        FZ_ASSERT(err.msg[0], "history error without a message");
        return;
    }
    /* the same document again is a duplicate: nothing added */
    FZ_ASSERT(tp_history_add_run(hist, doc, "doc.json", "fuzz", &b, &err) == 0,
              "adding a document twice: %s", err.msg);
    FZ_ASSERT(!b.added && b.run_id == a.run_id, "a duplicate was added again (run %lld, %lld)",
              (long long)a.run_id, (long long)b.run_id);
}

/* The input as a document, when it looks like a result (as the loader
 * took them before it checked them), else NULL. */
static json_t *looks_like_result(const uint8_t *data, size_t size)
{
    json_error_t je;
    json_t *d = json_loadb((const char *)data, size, 0, &je);
    const char *schema = json_string_value(json_object_get(d, "schema"));
    if (schema && strncmp(schema, "trainpath.result/", 17) == 0 &&
        json_is_string(json_object_get(d, "command")))
        return d;
    json_decref(d);
    return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[4096];
    fz_write("doc.json", data, size, path);
    tp_error err;
    json_t *doc = NULL;
    int rc = tp_report_load(path, &doc, &err);
    bool checked = rc == 0;
    if (rc) {
        fz_names_file(rc, &err, path);
        if (!(doc = looks_like_result(data, size)))
            return 0;
    }
    json_t *rows = tp_report_metrics(doc, &err);
    /* the contract: NULL only when memory runs out, which it does not here */
    FZ_ASSERT(rows, "tp_report_metrics failed: %s", err.msg);
    FZ_ASSERT(json_array_size(rows) >= 1, "no run.ok row");
    size_t ri;
    const json_t *row;
    json_array_foreach(rows, ri, row) {
        double v = json_number_value(json_object_get(row, "value"));
        FZ_ASSERT(!checked || (isfinite(v) && v >= 0), "a checked document's row %s = %g",
                  json_string_value(json_object_get(row, "key")), v);
    }
    json_t *prov = tp_report_provenance(doc);
    FZ_ASSERT(prov, "tp_report_provenance failed");
    json_decref(prov);

    json_t *diff = tp_diff_rows(rows, rows, NULL, &err);
    FZ_ASSERT(diff, "tp_diff_rows failed: %s", err.msg);
    FZ_ASSERT(fz_int(diff, "regressions") == 0 && fz_int(diff, "improvements") == 0 &&
                  fz_int(diff, "changed") == 0,
              "rows differ from themselves: %lld regressions, %lld improvements, %lld changed",
              fz_int(diff, "regressions"), fz_int(diff, "improvements"), fz_int(diff, "changed"));
    tp_diff_print(fz_null(), diff, true);
    json_decref(diff);

    char *text = NULL;
    size_t len = 0;
    FZ_ASSERT(tp_prom_render(rows, "fuzzhost", &text, &len, &err) == 0, "prom: %s", err.msg);
    FZ_ASSERT(text && strlen(text) == len, "prom text length %zu, said %zu", strlen(text), len);
    check_prom(text, len);
    free(text);

    json_t *fleet = tp_fleet_new();
    if (tp_fleet_add_doc(fleet, doc, "fuzzhost", &err) == 0) {
        json_t *j = tp_fleet_judge(fleet, NULL, &err);
        FZ_ASSERT(j, "fleet judge failed: %s", err.msg);
        tp_fleet_print(fz_null(), j);
        json_decref(j);
    }
    json_decref(fleet);

    const json_t *docs[] = {doc};
    rc = tp_html_render(docs, 1, NULL, &text, &len, &err);
    FZ_ASSERT(rc == 0, "html: %s", err.msg);
    FZ_ASSERT(strlen(text) == len, "html length %zu, said %zu", strlen(text), len);
    /* every string from a document is escaped: an element the page never
     * writes (the dictionary offers it) cannot come through */
    FZ_ASSERT(!strstr(text, "<x-fuzz"), "a document's string reached the page unescaped");
    free(text);

    history(doc);
    json_decref(rows);
    json_decref(doc);
    return 0;
}
