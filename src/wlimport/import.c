/* trainpath workload import, the front door (include/tp/wlimport.h): the
 * format table, reading a file by its row (named, or detected by content),
 * merging the files (each figure from the first file that has it: a
 * torch.profiler trace's order and times, an NCCL log's bytes), filling
 * what no file has from the options or, said so, by assumption, and
 * writing the version-1 workload file atomically with its provenance in
 * "imported". */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "tp/atomicfile.h"
#include "tp/file.h"
#include "tp/json.h"
#include "wlimport_int.h"

static const struct tp__wlimport_format *const formats[] = {
    &tp__wlimport_kineto,
    &tp__wlimport_nccl_log,
};
#define NFORMATS (sizeof formats / sizeof formats[0])

const char *const tp_wlimport_formats[] = {"kineto", "nccl-log", NULL};

static const struct tp__wlimport_format *format_named(const char *name)
{
    for (size_t i = 0; i < NFORMATS; i++)
        if (strcmp(formats[i]->name, name) == 0)
            return formats[i];
    return NULL;
}

/* read path: its row, its part and its SHA-256 */
static int read_one(const char *path, const char *format, struct tp_wlimport_part **out,
                    char sha[65], json_t *warnings, tp_error *err)
{
    const struct tp__wlimport_format *f = NULL;
    if (format && strcmp(format, "auto") != 0 && !(f = format_named(format)))
        return tp_error_set(err, TP_EUSAGE, "--from %s: not a format (auto, kineto or nccl-log)",
                            format);
    char *text = NULL;
    size_t len = 0;
    int rc = tp_file_read(path, "a trace or an NCCL log", TP_FILE_MAX_DOC, 0, &text, &len, err);
    if (rc)
        return rc;
    for (size_t i = 0; !f && i < NFORMATS; i++)
        if (formats[i]->detect(text, len))
            f = formats[i];
    struct tp_wlimport_part *p = calloc(1, sizeof *p);
    if (!f)
        rc = tp_error_set(err, TP_EUSAGE,
                          "%s: neither a torch.profiler trace (JSON with traceEvents, or a list "
                          "of trace events) nor an NCCL log (lines with 'NCCL INFO'): say "
                          "--from kineto or --from nccl-log",
                          path);
    else if (!p)
        rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
    else if (!f->detect(text, len))
        rc = tp_error_set(err, TP_EUSAGE, "%s: not %s (--from %s)", path, f->what, f->name);
    if (rc == 0) {
        p->format = f->name;
        rc = f->read(path, text, len, p, warnings, err);
    }
    if (rc == 0 && sha) {
        unsigned char d[32];
        crypto_hash_sha256(d, (const unsigned char *)text, len);
        sodium_bin2hex(sha, 65, d, sizeof d);
    }
    free(text);
    if (rc) {
        tp_wlimport_part_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

int tp_wlimport_read(const char *path, const char *format, struct tp_wlimport_part **out,
                     json_t *warnings, tp_error *err)
{
    return read_one(path, format, out, NULL, warnings, err);
}

static json_t *series(const uint64_t *v, size_t n, size_t stride)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_integer((json_int_t)v[i * stride]));
    return a;
}

static void filled(json_t *imp, const char *key, const char *from)
{
    json_object_set_new(json_object_get(imp, "filled"), key, json_string(from));
}

static void assumed(json_t *imp, const char *key, const char *why)
{
    json_object_set_new(json_object_get(imp, "assumed"), key, json_string(why));
}

static void missing(json_t *imp, const char *key)
{
    json_array_append_new(json_object_get(imp, "missing"), json_string(key));
}

/* the document from the parts: t gives the times (NULL: assumed from
 * compute_ms), b the bytes */
static json_t *build(const struct tp_wlimport_opts *o, struct tp_wlimport_part *const *parts,
                     const char (*sha)[65], const struct tp_wlimport_part *t, const char *tpath,
                     const struct tp_wlimport_part *b, const char *bpath)
{
    json_t *imp = json_pack("{s:[], s:{}, s:{}, s:[]}", "files", "filled", "assumed", "missing");
    for (size_t i = 0; i < o->nfiles; i++)
        json_array_append_new(json_object_get(imp, "files"),
                              json_pack("{s:o, s:s, s:s}", "path", tp_json_text(o->files[i]),
                                        "format", parts[i]->format, "sha256", sha[i]));
    unsigned nb = b->nbuckets;
    size_t ns = t ? t->nsteps : 1;
    uint64_t total = 0;
    for (unsigned i = 0; i < nb; i++)
        total += b->bytes[i];
    /* assumed times: forward a third, backward two thirds, the buckets ready
     * in the backward as their bytes accumulate, no optimizer */
    uint64_t ms_ns = (uint64_t)(o->compute_ms * 1e6 + 0.5), fwd = ms_ns / 3, bwd = ms_ns - fwd;
    json_t *bk = json_array();
    uint64_t before = 0;
    for (unsigned i = 0; i < nb; i++) {
        before += b->bytes[i];
        json_t *x = json_pack("{s:I, s:I, s:s, s:[]}", "index", (json_int_t)i, "bytes",
                              (json_int_t)b->bytes[i], "dtype", b->dtype[i], "parameters");
        if (t) {
            json_object_set_new(x, "ready_ns", series(t->ready_ns + i, ns, nb));
            if (t->allreduce_ns)
                json_object_set_new(x, "allreduce_ns", series(t->allreduce_ns + i, ns, nb));
        } else {
            json_object_set_new(
                x, "ready_ns",
                json_pack("[I]", (json_int_t)(total ? (uint64_t)((double)bwd * (double)before /
                                                                 (double)total)
                                                    : bwd)));
        }
        json_array_append_new(bk, x);
    }
    json_t *steps;
    if (t) {
        steps = json_pack("{s:o, s:o, s:o, s:o}", "forward_ns", series(t->forward_ns, ns, 1),
                          "backward_ns", series(t->backward_ns, ns, 1), "optimizer_ns",
                          series(t->optimizer_ns, ns, 1), "step_ns", series(t->step_ns, ns, 1));
        for (const char *const *k = (const char *const[]){"steps.forward_ns", "steps.backward_ns",
                                                          "steps.optimizer_ns", "steps.step_ns",
                                                          "buckets[].ready_ns", NULL};
             *k; k++)
            filled(imp, *k, tpath);
        if (t->allreduce_ns)
            filled(imp, "buckets[].allreduce_ns", tpath);
        else
            missing(imp, "buckets[].allreduce_ns");
    } else {
        steps = json_pack("{s:[I], s:[I], s:[I]}", "forward_ns", (json_int_t)fwd, "backward_ns",
                          (json_int_t)bwd, "optimizer_ns", (json_int_t)0);
        char why[160];
        snprintf(why, sizeof why, "a third of --compute-ms %g", o->compute_ms);
        assumed(imp, "steps.forward_ns", why);
        snprintf(why, sizeof why, "two thirds of --compute-ms %g", o->compute_ms);
        assumed(imp, "steps.backward_ns", why);
        assumed(imp, "steps.optimizer_ns", "0: no file times the optimizer step");
        assumed(imp, "buckets[].ready_ns",
                "in the backward as the buckets' bytes accumulate: bucket i at (bytes of buckets "
                "0..i) / (all buckets' bytes) of it");
        assumed(imp, "steps", "one step: every step of the log alike");
        missing(imp, "steps.step_ns");
        missing(imp, "buckets[].allreduce_ns");
    }
    filled(imp, "buckets[].bytes", bpath);
    filled(imp, "buckets[].dtype", bpath);
    filled(imp, "model.parameter_bytes", bpath);
    missing(imp, "model.parameters");
    filled(imp, "batch.samples_per_rank", "--samples");
    filled(imp, "batch.sample_bytes", "--sample-bytes");
    char why[160];
    snprintf(why, sizeof why,
             "3 x the buckets' bytes (weights and Adam's two moments): no file has the state "
             "dict");
    assumed(imp, "checkpoint.bytes", why);
    missing(imp, "buckets[].parameters");
    missing(imp, "recorded.torch");
    /* recorded: the first file that says, then the option */
    json_t *rec = json_pack("{s:I, s:I}", "steps", (json_int_t)(t ? t->nsteps : b->nsteps),
                            "skipped_steps", (json_int_t)(t ? t->skipped : b->skipped));
    const struct tp_wlimport_part *ws = NULL, *be = NULL;
    const char *wsp = NULL, *bep = NULL;
    for (size_t i = 0; i < o->nfiles; i++) {
        if (!ws && parts[i]->world_size) {
            ws = parts[i];
            wsp = o->files[i];
        }
        if (!be && parts[i]->backend[0]) {
            be = parts[i];
            bep = o->files[i];
        }
    }
    if (ws) {
        json_object_set_new(rec, "world_size", json_integer(ws->world_size));
        filled(imp, "recorded.world_size", wsp);
    } else if (o->world_size) {
        json_object_set_new(rec, "world_size", json_integer(o->world_size));
        filled(imp, "recorded.world_size", "--world-size");
    } else {
        missing(imp, "recorded.world_size");
    }
    if (be) {
        json_object_set_new(rec, "backend", json_string(be->backend));
        filled(imp, "recorded.backend", bep);
    } else {
        missing(imp, "recorded.backend");
    }
    char source[32];
    snprintf(source, sizeof source, "%s%s%s", t ? t->format : b->format, t && b != t ? "+" : "",
             t && b != t ? b->format : "");
    return json_pack("{s:i, s:s, s:o, s:{s:[], s:I}, s:o, s:o, s:{s:I, s:I}, s:{s:I}, s:o}",
                     "trainpath_workload", 1, "source", source, "recorded", rec, "model",
                     "parameters", "parameter_bytes", (json_int_t)total, "buckets", bk, "steps",
                     steps, "batch", "samples_per_rank", (json_int_t)o->samples, "sample_bytes",
                     (json_int_t)o->sample_bytes, "checkpoint", "bytes", (json_int_t)(3 * total),
                     "imported", imp);
}

int tp_wlimport_run(const struct tp_wlimport_opts *o, json_t **doc, json_t **warnings,
                    tp_error *err)
{
    if (!o->out)
        return tp_error_set(err, TP_EUSAGE, "--out FILE: where to write the workload file");
    if (o->nfiles == 0)
        return tp_error_set(err, TP_EUSAGE,
                            "no FILE: give a torch.profiler trace, an NCCL log, or both");
    if (!o->samples || !o->sample_bytes)
        return tp_error_set(err, TP_EUSAGE,
                            "--samples N and --sample-bytes B are needed: a trace and an NCCL log "
                            "hold no batch (the samples each rank trains on a step, one "
                            "sample's bytes)");
    struct tp_wlimport_part **parts = calloc(o->nfiles, sizeof *parts);
    char(*sha)[65] = calloc(o->nfiles, sizeof *sha);
    json_t *warn = json_array();
    int rc = parts && sha && warn ? 0 : tp_error_set(err, TP_ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < o->nfiles; i++)
        rc = read_one(o->files[i], o->from, &parts[i], sha[i], warn, err);
    const struct tp_wlimport_part *t = NULL, *b = NULL;
    const char *tpath = NULL, *bpath = NULL;
    for (size_t i = 0; rc == 0 && i < o->nfiles; i++) {
        if (!t && parts[i]->forward_ns) {
            t = parts[i];
            tpath = o->files[i];
        }
        if (!b && parts[i]->bytes) {
            b = parts[i];
            bpath = o->files[i];
        }
    }
    if (rc == 0 && !b)
        rc = tp_error_set(err, TP_EUSAGE,
                          "%s: no bucket bytes (torch 1.13's CPU profiler records none; torch "
                          "2.x's record_param_comms does): merge an NCCL log of the same job "
                          "(NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL)",
                          o->files[0]);
    if (rc == 0 && !t && !(o->compute_ms > 0))
        rc = tp_error_set(err, TP_EUSAGE,
                          "%s: an NCCL log has no times: give --compute-ms MS, your measured "
                          "compute per step, or merge a torch.profiler trace",
                          bpath);
    for (size_t i = 1; rc == 0 && i < o->nfiles; i++) /* every file the same buckets */
        if (parts[i]->nbuckets != parts[0]->nbuckets)
            rc = tp_error_set(err, TP_EUSAGE,
                              "%s has %u allreduces a step, %s %u: not the same job (or not the "
                              "same rank)?",
                              o->files[0], parts[0]->nbuckets, o->files[i], parts[i]->nbuckets);
    if (rc == 0 && t && t->nsteps == 0)
        rc = tp_error_set(err, TP_EUSAGE, "%s: no step with a backward and the allreduces left",
                          tpath);
    for (unsigned i = 0; rc == 0 && i < b->nbuckets; i++)
        if (b->bytes[i] < 4 || b->bytes[i] > (UINT64_C(1) << 40))
            rc = tp_error_set(err, TP_EUSAGE,
                              "%s: bucket %u holds %llu bytes: trainpath step replays 4 B to "
                              "1 TiB",
                              bpath, i, (unsigned long long)b->bytes[i]);
    json_t *d = NULL;
    if (rc == 0 && !(d = build(o, parts, (const char(*)[65])sha, t, tpath, b, bpath)))
        rc = tp_error_set(err, TP_ENOMEM, "out of memory");
    if (rc == 0) {
        char *s = json_dumps(d, JSON_INDENT(1));
        size_t n = s ? strlen(s) : 0;
        char *t2 = s ? realloc(s, n + 2) : NULL;
        if (!t2) {
            free(s);
            rc = tp_error_set(err, TP_ENOMEM, "out of memory");
        } else {
            t2[n] = '\n';
            t2[n + 1] = 0;
            rc = tp_write_atomic(o->out, t2, n + 1, err);
            free(t2);
        }
    }
    for (size_t i = 0; parts && i < o->nfiles; i++)
        tp_wlimport_part_free(parts[i]);
    free(parts);
    free(sha);
    if (rc) {
        json_decref(d);
        json_decref(warn);
        return rc;
    }
    *doc = d;
    *warnings = warn;
    return 0;
}

static uint64_t median(const json_t *a)
{
    size_t n = json_array_size(a);
    uint64_t *v = n ? malloc(n * sizeof *v) : NULL;
    if (!v)
        return 0;
    for (size_t i = 0; i < n; i++)
        v[i] = (uint64_t)json_integer_value(json_array_get(a, i));
    for (size_t i = 1; i < n; i++) /* a few steps: insertion sort */
        for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
            uint64_t x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    uint64_t m = v[n / 2];
    free(v);
    return m;
}

void tp_wlimport_print(FILE *f, const json_t *doc, const char *out)
{
    const json_t *bk = json_object_get(doc, "buckets"), *st = json_object_get(doc, "steps");
    const json_t *imp = json_object_get(doc, "imported");
    fprintf(f, "%s: a workload file from %s: %zu step%s, %zu bucket%s, %lld bytes a step\n", out,
            tp_json_str(doc, "source"), json_array_size(json_object_get(st, "forward_ns")),
            json_array_size(json_object_get(st, "forward_ns")) == 1 ? "" : "s", json_array_size(bk),
            json_array_size(bk) == 1 ? "" : "s",
            (long long)json_integer_value(
                json_object_get(json_object_get(doc, "model"), "parameter_bytes")));
    fprintf(f, "  %-6s %14s %-9s %14s %14s\n", "bucket", "bytes", "dtype", "ready p50 (us)",
            "allreduce p50");
    for (size_t i = 0; i < json_array_size(bk); i++) {
        const json_t *b = json_array_get(bk, i), *ar = json_object_get(b, "allreduce_ns");
        char arv[32] = "-";
        if (ar)
            snprintf(arv, sizeof arv, "%.1f", (double)median(ar) / 1e3);
        fprintf(f, "  %-6zu %14lld %-9s %14.1f %14s\n", i,
                (long long)json_integer_value(json_object_get(b, "bytes")), tp_json_str(b, "dtype"),
                (double)median(json_object_get(b, "ready_ns")) / 1e3, arv);
    }
    fprintf(f, "  forward p50 %.3f ms, backward p50 %.3f ms, optimizer p50 %.3f ms\n",
            (double)median(json_object_get(st, "forward_ns")) / 1e6,
            (double)median(json_object_get(st, "backward_ns")) / 1e6,
            (double)median(json_object_get(st, "optimizer_ns")) / 1e6);
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)json_object_get(imp, "filled"), key, v)
        fprintf(f, "  %-24s from %s\n", key, json_string_value(v));
    json_object_foreach((json_t *)json_object_get(imp, "assumed"), key, v)
        fprintf(f, "  %-24s assumed: %s\n", key, json_string_value(v));
    const json_t *m = json_object_get(imp, "missing");
    if (json_array_size(m)) {
        fprintf(f, "  missing:");
        for (size_t i = 0; i < json_array_size(m); i++)
            fprintf(f, "%s %s", i ? "," : "", json_string_value(json_array_get(m, i)));
        fprintf(f, "\n");
    }
}
