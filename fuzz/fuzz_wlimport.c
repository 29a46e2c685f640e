/* Fuzz target: trainpath workload import (tp_wlimport_run) as `trainpath
 * workload import` runs it, on one to three files: the input, cut at lines
 * "#@file", each part written as a file (a part starting with gzip's magic
 * is read as gzip, so the harness reaches zlib's side too). Contracts: an
 * error is TP_EUSAGE (or out of memory) and names a file or an option;
 * nothing is written then; on success the written document is a version-2
 * workload file whose lists agree (every rank a list per step, every step
 * a list per collective of its layout). */
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "tp/wlimport.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *part[3];
    size_t len[3];
    size_t n = fz_split(data, size, "\n#@file\n", part, len, 3);
    char paths[3][4096], out[4096];
    const char *files[3];
    for (size_t i = 0; i < n; i++) {
        char rel[16];
        snprintf(rel, sizeof rel, "in%zu", i);
        fz_write(rel, part[i], len[i], paths[i]);
        files[i] = paths[i];
    }
    fz_remove("out.json");
    fz_path(out, "out.json");
    struct tp_wlimport_opts o = {.from = "auto",
                                 .out = out,
                                 .files = files,
                                 .nfiles = n,
                                 .compute_ms = 10,
                                 .samples = 8,
                                 .sample_bytes = 64};
    json_t *doc = NULL, *w = NULL;
    tp_error err = {0};
    int rc = tp_wlimport_run(&o, &doc, &w, &err);
    if (rc) {
        FZ_ASSERT(rc == TP_EUSAGE || rc == TP_ENOMEM, "code %d: %s", rc, err.msg);
        bool named = strstr(err.msg, fz_dir()) != NULL || strncmp(err.msg, "step ", 5) == 0 ||
                     strncmp(err.msg, "the files of", 12) == 0 ||
                     strncmp(err.msg, "rank ", 5) == 0 || strncmp(err.msg, "files of", 8) == 0;
        FZ_ASSERT(named, "an error that names no file: %s", err.msg);
        FILE *f = fopen(out, "r");
        FZ_ASSERT(!f, "%s written after an error", out);
        return 0;
    }
    const json_t *ly = json_object_get(doc, "layouts"),
                 *sl = json_object_get(json_object_get(doc, "steps"), "layout");
    const json_t *ranks = json_object_get(doc, "ranks");
    FZ_ASSERT(fz_int(doc, "trainpath_workload") == 2, "version");
    FZ_ASSERT(json_array_size(ly) >= 1 && json_array_size(sl) >= 1 && json_array_size(ranks) >= 1,
              "empty lists");
    for (size_t r = 0; r < json_array_size(ranks); r++) {
        const json_t *rk = json_array_get(ranks, r), *rd = json_object_get(rk, "ready_ns");
        FZ_ASSERT(json_array_size(rd) == json_array_size(sl),
                  "rank %zu: %zu ready lists, %zu steps", r, json_array_size(rd),
                  json_array_size(sl));
        for (size_t s = 0; s < json_array_size(sl); s++) {
            size_t l = (size_t)json_integer_value(json_array_get(sl, s));
            FZ_ASSERT(l < json_array_size(ly), "step %zu: layout %zu", s, l);
            FZ_ASSERT(
                json_array_size(json_array_get(rd, s)) == json_array_size(json_array_get(ly, l)),
                "rank %zu step %zu: %zu readiness for %zu collectives", r, s,
                json_array_size(json_array_get(rd, s)), json_array_size(json_array_get(ly, l)));
        }
    }
    tp_wlimport_print(fz_null(), doc, out);
    json_decref(doc);
    json_decref(w);
    return 0;
}
