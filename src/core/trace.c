/* Timelines in the Chrome trace event format (include/tp/trace.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "tp/atomicfile.h"
#include "tp/trace.h"

struct tp_trace {
    struct tp_atomic *a;
    FILE *f;
    bool first;
};

int tp_trace_begin(const char *path, struct tp_trace **out, tp_error *err)
{
    *out = NULL;
    struct tp_trace *t = calloc(1, sizeof *t);
    if (!t)
        return tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
    int rc = tp_atomic_begin(path, &t->a, &t->f, err);
    if (rc) {
        free(t);
        if (rc == TP_EUSAGE) /* checked before the run: the run's failure now */
            rc = err->code = TP_ESYS;
        return rc;
    }
    fputs("{\"traceEvents\":[", t->f);
    t->first = true;
    *out = t;
    return 0;
}

static void put(struct tp_trace *t, const char *json)
{
    fputs(t->first ? "\n" : ",\n", t->f);
    fputs(json, t->f);
    t->first = false;
}

static void meta(struct tp_trace *t, int pid, int tid, const char *what, const char *name)
{
    json_t *e = json_pack("{s:s, s:s, s:i, s:{s:s}}", "name", what, "ph", "M", "pid", pid, "args",
                          "name", name ? name : "");
    if (tid >= 0)
        json_object_set_new(e, "tid", json_integer(tid));
    char *s = e ? json_dumps(e, JSON_COMPACT) : NULL;
    if (s)
        put(t, s);
    free(s);
    json_decref(e);
}

void tp_trace_process(struct tp_trace *t, int pid, const char *name)
{
    meta(t, pid, -1, "process_name", name);
}

void tp_trace_thread(struct tp_trace *t, int pid, int tid, const char *name)
{
    meta(t, pid, tid, "thread_name", name);
}

void tp_trace_span(struct tp_trace *t, int pid, int tid, const char *name, const char *cat,
                   int64_t start_ns, int64_t dur_ns, const char *args)
{
    /* names come from trainpath's own tables, but escape them anyway */
    json_t *n = json_string(name ? name : ""), *c = json_string(cat ? cat : "");
    char *ns = n ? json_dumps(n, JSON_ENCODE_ANY) : NULL, *cs = c ? json_dumps(c, JSON_ENCODE_ANY) : NULL;
    if (ns && cs) {
        put(t, "");
        fprintf(t->f,
                "{\"name\":%s,\"cat\":%s,\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,"
                "\"dur\":%.3f,\"args\":{%s}}",
                ns, cs, pid, tid, (double)start_ns / 1000.0,
                (double)(dur_ns > 0 ? dur_ns : 0) / 1000.0, args ? args : "");
    }
    free(ns);
    free(cs);
    json_decref(n);
    json_decref(c);
}

int tp_trace_end(struct tp_trace *t, json_t *other, tp_error *err)
{
    char *s = other ? json_dumps(other, JSON_COMPACT) : NULL;
    fprintf(t->f, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":%s}\n", s ? s : "{}");
    free(s);
    json_decref(other);
    int rc = tp_atomic_commit(t->a, err);
    free(t);
    return rc;
}

void tp_trace_discard(struct tp_trace *t)
{
    if (!t)
        return;
    tp_atomic_discard(t->a);
    free(t);
}
