/* Result documents: one JSON object per run, written atomically, so a reader
 * (report, history, CI) never sees half a file, and a failed run still leaves
 * a valid document that says why. */
#include "tp/result.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tp/atomicfile.h"
#include "tp/clock.h"
#include "tp/intr.h"
#include "tp/sysinfo.h"
#include "tp/version.h"

json_t *tp_result_new(const char *command, json_t *config)
{
    char now[40];
    tp_utc_iso8601(now, sizeof now);
    const struct tp_clock_info *ci = tp_clock_info();
    json_t *prov = tp_sysinfo_json(NULL);
    if (!prov)
        prov = json_object();
    json_object_set_new(prov, "process", tp_process_json());
    json_object_set_new(prov, "clock",
                        json_pack("{s:s, s:f, s:f, s:f}", "source", ci->source, "tsc_hz",
                                  ci->tsc_hz, "resolution_ns", ci->resolution_ns,
                                  "read_overhead_ns", ci->read_overhead_ns));
    json_t *doc =
        json_pack("{s:s, s:{s:s, s:s}, s:s, s:{s:b, s:s, s:i, s:s}, s:s, s:n, s:o, "
                  "s:o, s:o}",
                  "schema", TP_RESULT_SCHEMA, "tool", "name", "trainpath", "version", tp_version(),
                  "command", command, "status", "ok", 0, "code", "running", "exit_code", 1,
                  "message", "", "started_utc", now, "finished_utc", "provenance", prov, "config",
                  config ? config : json_object(), "results", json_object());
    return doc;
}

void tp_result_finish(json_t *doc, int code, const char *message)
{
    tp_error blamed;
    tp_error_set(&blamed, code, "%s", message ? message : "");
    if (tp_intr_blame(code, &blamed) != code) {
        code = blamed.code;
        message = blamed.msg;
    }
    char now[40];
    tp_utc_iso8601(now, sizeof now);
    json_object_set_new(doc, "status",
                        json_pack("{s:b, s:s, s:i, s:s}", "ok", code == TP_OK, "code",
                                  tp_code_name(code), "exit_code", tp_exit_code(code), "message",
                                  message ? message : ""));
    json_object_set_new(doc, "finished_utc", json_string(now));
}

int tp_result_write(const json_t *doc, const char *path, tp_error *err)
{
    /* on stdout (a terminal, often) every character beyond ASCII is
     * escaped: jansson leaves C1 controls (U+009B is a CSI) raw otherwise */
    bool out = strcmp(path, "-") == 0;
    char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
                                     (out ? JSON_ENSURE_ASCII : 0));
    if (!text)
        return tp_error_set(err, TP_ENOMEM, "encoding the result document");
    size_t len = strlen(text);
    text[len] = '\0';
    int rc = 0;
    if (out) {
        if (fwrite(text, 1, len, stdout) != len || fputc('\n', stdout) == EOF ||
            fflush(stdout) != 0)
            rc = tp_error_set(err, TP_ESYS, "writing the result document to stdout");
    } else {
        char *withnl = malloc(len + 2);
        if (!withnl) {
            free(text);
            return tp_error_set(err, TP_ENOMEM, "encoding the result document");
        }
        memcpy(withnl, text, len);
        withnl[len] = '\n';
        rc = tp_write_atomic(path, withnl, len + 1, err);
        free(withnl);
    }
    free(text);
    return rc;
}

json_t *tp_metric(double value, const char *unit)
{
    return json_pack("{s:f, s:s}", "value", value, "unit", unit);
}

int tp_result_path_ok(const char *path, tp_error *err)
{
    if (strcmp(path, "-") == 0)
        return 0;
    return tp_result_file_ok("--json", path, err);
}

int tp_result_file_ok(const char *opt, const char *path, tp_error *err)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    struct stat st;
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0 ||
        (stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
        return tp_error_set(err, TP_EUSAGE, "%s %s: names a folder, not a file", opt, path);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    if (access(dir, W_OK | X_OK) != 0)
        return tp_error_errno(err, TP_EUSAGE, errno, "%s %s: folder %s is not writable", opt,
                              path, dir);
    return 0;
}

int tp_result_write_run(const json_t *doc, const char *path, tp_error *err)
{
    int rc = tp_result_write(doc, path, err);
    if (rc == TP_EUSAGE) {
        rc = TP_ESYS;
        if (err)
            err->code = rc;
    }
    return rc;
}
