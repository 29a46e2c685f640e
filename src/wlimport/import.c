/* trainpath workload import, the front door (include/tp/wlimport.h): the
 * format table, a file read by its row (named, or detected by content
 * after gzip is undone), the files of one rank merged (a trace's order and
 * times, a log's bytes: each figure from the first file that has it), the
 * ranks lined up (join.c), what no file has filled from the options or
 * assumed (said so in "imported"), and the version-2 workload file built
 * (doc.c) and written atomically. An output that is one of the inputs is
 * refused before anything is read. */
#include <stdlib.h>
#include <string.h>

#include "join_int.h"
#include "tp/atomicfile.h"
#include "tp/file.h"

static const struct tp__wlimport_format *const formats[] = {
    &tp__wlimport_kineto,
    &tp__wlimport_nccl_log,
};
#define NFORMATS (sizeof formats / sizeof formats[0])

static const struct tp__wlimport_format *format_named(const char *name)
{
    for (size_t i = 0; i < NFORMATS; i++)
        if (strcmp(formats[i]->name, name) == 0)
            return formats[i];
    return NULL;
}

/* "auto, kineto or nccl-log": the table's names, for messages */
static void format_names(char *out, size_t cap)
{
    size_t at = (size_t)snprintf(out, cap, "auto");
    for (size_t i = 0; i < NFORMATS && at < cap; i++)
        at += (size_t)snprintf(out + at, cap - at, "%s%s", i + 1 == NFORMATS ? " or " : ", ",
                               formats[i]->name);
}

int tp_wlimport_read(const char *path, const char *format, struct tp_wlimport_part **out,
                     json_t *warnings, tp_error *err)
{
    const struct tp__wlimport_format *f = NULL;
    if (format && strcmp(format, "auto") != 0 && !(f = format_named(format))) {
        char names[128];
        format_names(names, sizeof names);
        return tp_error_set(err, TP_EUSAGE, "--from %s: not a format (%s)", format, names);
    }
    struct tp__wl_in *in = malloc(sizeof *in);
    struct tp_wlimport_part *p = calloc(1, sizeof *p);
    if (!in || !p) {
        free(in);
        free(p);
        return tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
    }
    int rc = tp__wl_in_open(in, path, err);
    if (rc) {
        free(in);
        free(p);
        return rc;
    }
    const char *text = (const char *)in->peek + in->peek_at;
    size_t len = in->peek_n - in->peek_at;
    for (size_t i = 0; !f && i < NFORMATS; i++)
        if (formats[i]->detect(text, len))
            f = formats[i];
    if (!f)
        rc = tp_error_set(err, TP_EUSAGE,
                          "%s: neither a torch.profiler trace (JSON with traceEvents, or a list "
                          "of trace events; plain or gzip) nor an NCCL log (lines with 'NCCL "
                          "INFO'): not a file `workload import` reads",
                          path);
    else if (!f->detect(text, len))
        rc = tp_error_set(err, TP_EUSAGE, "%s: not %s (--from %s)", path, f->what, f->name);
    if (rc == 0) {
        p->format = f->name;
        p->rank = -1;
        rc = f->read(in, p, warnings, err);
    }
    tp__wl_in_close(in, p->sha256);
    free(in);
    if (rc) {
        tp_wlimport_part_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

/* whether the output is one of the inputs (tp_file_distinct: the same
 * file, through links, standard input included): writing it would destroy
 * what is being read */
static int output_is_input(const struct tp_wlimport_opts *o, tp_error *err)
{
    struct tp_file_arg *ins = calloc(o->nfiles ? o->nfiles : 1, sizeof *ins);
    if (!ins)
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    for (size_t i = 0; i < o->nfiles; i++)
        ins[i] = (struct tp_file_arg){"the input", o->files[i], NULL};
    const struct tp_file_arg out = {"--out", o->out, NULL};
    int rc = tp_file_distinct(&out, 1, ins, o->nfiles, err);
    free(ins);
    return rc;
}

int tp_wlimport_run(const struct tp_wlimport_opts *o, json_t **doc, json_t **warnings,
                    tp_error *err)
{
    if (!o->out)
        return tp_error_set(err, TP_EUSAGE, "--out FILE: where to write the workload file");
    if (o->nfiles == 0)
        return tp_error_set(err, TP_EUSAGE,
                            "no FILE: give torch.profiler traces, NCCL logs, or both");
    if (!o->samples || !o->sample_bytes)
        return tp_error_set(err, TP_EUSAGE,
                            "--samples N and --sample-bytes B are needed: a trace and an NCCL log "
                            "hold no batch (the samples each rank trains on a step, one "
                            "sample's bytes)");
    size_t stdin_uses = 0;
    for (size_t i = 0; i < o->nfiles; i++)
        stdin_uses += strcmp(o->files[i], "-") == 0;
    if (stdin_uses > 1)
        return tp_error_set(err, TP_EUSAGE, "- (standard input) given %zu times: once at most",
                            stdin_uses);
    int rc = output_is_input(o, err);
    if (rc)
        return rc;
    struct tp__wl_job job = {0};
    json_t *warn = json_array();
    job.parts = calloc(o->nfiles, sizeof *job.parts);
    job.paths = o->files;
    job.nparts = o->nfiles;
    if (!warn || !job.parts)
        rc = tp_error_set(err, TP_ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < o->nfiles; i++)
        rc = tp_wlimport_read(o->files[i], o->from, &job.parts[i], warn, err);
    if (rc == 0)
        rc = tp__wl_join(&job, o, warn, err);
    json_t *d = NULL;
    if (rc == 0)
        rc = tp__wl_doc(&job, o, warn, &d, err);
    if (rc == 0) {
        char *s = json_dumps(d, JSON_INDENT(1) | JSON_ENSURE_ASCII);
        size_t n = s ? strlen(s) : 0;
        char *t = s ? realloc(s, n + 2) : NULL;
        if (!t) {
            free(s);
            rc = tp_error_set(err, TP_ENOMEM, "out of memory");
        } else {
            t[n] = '\n';
            t[n + 1] = 0;
            rc = tp_write_atomic(o->out, t, n + 1, err);
            free(t);
        }
    }
    tp__wl_job_free(&job);
    if (rc) {
        json_decref(d);
        json_decref(warn);
        return rc;
    }
    *doc = d;
    *warnings = warn;
    return 0;
}
