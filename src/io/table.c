/* Tables for people after `trainpath io`: the same figures as the results
 * block of the document (latency and epoch time as tp_fmt_ns prints them,
 * throughput in GB/s = 1e9 B/s), one printer per workload, each a row's
 * print in workload.c. Reads the results only, so a run that failed
 * part-way prints what it measured, and one that measured nothing prints
 * nothing (no table of zeros before its error). */
#include <stdio.h>

#include "io_int.h"
#include "tp/blkpath.h"
#include "tp/json.h"
#include "tp/units.h"

static void lat_row(FILE *f, const char *what, const json_t *st)
{
    char a[16], b[16], c[16], d[16], e[16];
    fprintf(f, "  %-18s p50 %9s  p99 %9s  p99.9 %9s  max %9s  mean %9s  (%lld)\n", what,
            tp_fmt_ns(tp_json_num_or(st, "p50", 0), a, sizeof a),
            tp_fmt_ns(tp_json_num_or(st, "p99", 0), b, sizeof b),
            tp_fmt_ns(tp_json_num_or(st, "p99_9", 0), c, sizeof c),
            tp_fmt_ns(tp_json_num_or(st, "max", 0), d, sizeof d),
            tp_fmt_ns(tp_json_num_or(st, "mean", 0), e, sizeof e),
            (long long)json_integer_value(json_object_get(st, "count")));
}

/* The engine line every workload table starts with (when the engine was
 * opened at all). */
static void engine_line(FILE *f, const struct tp_io_opts *o, const json_t *r)
{
    const json_t *eng = json_object_get(r, "engine");
    if (eng)
        fprintf(f, "# engine %s, qd %lld, %s%s%s\n",
                json_string_value(json_object_get(eng, "engine")),
                (long long)json_integer_value(json_object_get(eng, "depth")),
                o->c.direct ? "direct" : "buffered",
                json_is_true(json_object_get(eng, "registered_buffers")) ? ", registered buffers"
                                                                         : "",
                json_is_true(json_object_get(eng, "fixed_files")) ? ", fixed files" : "");
}

/* Whether entry of the array r[key] says it was measured (its flag key is
 * true, or any entry when flag is NULL). */
static bool measured(const json_t *r, const char *key, const char *flag)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(r, key), i, e)
        if (!flag || json_is_true(json_object_get(e, flag)))
            return true;
    return false;
}

void tp__io_print_checkpoint(FILE *f, const struct tp_io_opts *o, const json_t *r)
{
    char a[32];
    if (!measured(r, "checkpoints", "committed"))
        return;
    engine_line(f, o, r);
    fprintf(f, "# %4s %12s %12s %12s %12s %12s\n", "ckpt", "commit", "write", "data sync",
            "metadata", "GB/s");
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(r, "checkpoints"), i, e) {
        if (!json_is_true(json_object_get(e, "committed")))
            continue;
        char w[16], s[16], m[16], c[16];
        fprintf(f, "  %4zu %12s %12s %12s %12s %12.3f\n", i,
                tp_fmt_ns(tp_json_num_or(e, "commit", 0), c, sizeof c),
                tp_fmt_ns(tp_json_num_or(e, "write", 0), w, sizeof w),
                tp_fmt_ns(tp_json_num_or(e, "data_sync", 0), s, sizeof s),
                tp_fmt_ns(tp_json_num_or(e, "metadata", 0), m, sizeof m),
                tp_json_num_or(e, "throughput", 0) / 1e9);
        const json_t *v = json_object_get(e, "verify");
        if (v)
            fprintf(f, "       restore %s at %s (page cache: %s)\n",
                    tp_fmt_ns(tp_json_num_or(v, "restore_time", 0) * 1e9, w, sizeof w),
                    tp_fmt_rate(tp_json_num_or(v, "restore_throughput", 0), a, sizeof a),
                    tp_json_str(v, "page_cache") ? tp_json_str(v, "page_cache") : "?");
    }
    lat_row(f, "commit", json_object_get(r, "commit"));
    lat_row(f, "write request", json_object_get(r, "write_latency"));
}

void tp__io_print_dataset(FILE *f, const struct tp_io_opts *o, const json_t *r)
{
    char a[32];
    if (!measured(r, "epochs", NULL))
        return;
    engine_line(f, o, r);
    fprintf(f, "# %5s %10s %12s %10s %10s %10s %8s\n", "epoch", "time", "samples/s", "GB/s",
            "p50", "p99", "cached");
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(r, "epochs"), i, e) {
        char b[16], c[16], t[16];
        const json_t *l = json_object_get(e, "latency");
        const json_t *cf = json_object_get(e, "cached_fraction_before");
        fprintf(f, "  %5zu %10s %12.0f %10.3f %10s %10s %8s\n", i,
                tp_fmt_ns(tp_json_num_or(e, "time", 0) * 1e9, t, sizeof t),
                tp_json_num_or(e, "samples_per_s", 0), tp_json_num_or(e, "throughput", 0) / 1e9,
                tp_fmt_ns(tp_json_num_or(l, "p50", 0), b, sizeof b),
                tp_fmt_ns(tp_json_num_or(l, "p99", 0), c, sizeof c),
                o->c.direct ? "direct"
                : json_is_number(cf)
                    ? (snprintf(a, sizeof a, "%.0f%%", 100 * json_number_value(cf)), a)
                    : "?");
    }
    lat_row(f, "read", json_object_get(r, "latency"));
    const json_t *d = json_object_get(r, "during_checkpoint");
    if (d) {
        lat_row(f, "read, checkpoint", json_object_get(d, "during"));
        fprintf(f, "  read p99 during a checkpoint: %.2fx the baseline\n",
                json_number_value(json_object_get(d, "p99_ratio")));
    }
}

void tp__io_print_commit(FILE *f, const struct tp_io_opts *o, const json_t *r)
{
    char a[32];
    if (json_integer_value(json_object_get(r, "commits")) <= 0)
        return;
    engine_line(f, o, r);
    fprintf(f, "# %lld commits of %s, %s, %s: %.3g commits/s\n",
            (long long)json_integer_value(json_object_get(r, "commits")),
            tp_fmt_size((uint64_t)json_integer_value(json_object_get(r, "write_size")), a,
                        sizeof a),
            json_string_value(json_object_get(r, "sync")),
            json_string_value(json_object_get(r, "mode")), tp_json_num_or(r, "commits_per_s", 0));
    lat_row(f, "commit", json_object_get(r, "latency"));
    lat_row(f, "write", json_object_get(r, "write_latency"));
    if (json_is_object(json_object_get(r, "sync_latency")))
        lat_row(f, "sync", json_object_get(r, "sync_latency"));
}

void tp__io_print_info(FILE *f, const struct tp_io_opts *o, const json_t *r)
{
    (void)o;
    const json_t *desc = json_object_get(r, "storage");
    if (desc)
        tp_blkpath_print(f, desc);
}
