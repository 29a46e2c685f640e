/* The step timeline (--trace FILE): in the first run every rank records
 * what each of its threads did, step by step, as intervals of its own
 * clock moved onto rank 0's (the boot's measured offset, whose uncertainty
 * is half the round trip it was measured over); rank 0 gathers the ranks'
 * records one rank at a time and writes them, atomically, in the Chrome
 * trace event format that Perfetto (ui.perfetto.dev) and chrome://tracing
 * read: one process per rank, one thread per track (the training loop, the
 * comm thread's buckets, the loader, the checkpoint writer), complete
 * events ("ph": "X") in microseconds from rank 0's start of the run.
 *
 * The spans are rows of a table; each thread appends to its own buffer, so
 * recording takes no lock; a buffer that fills stops recording and the
 * trace says how many events were dropped. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "step_int.h"
#include "tp/atomicfile.h"

#define TRACE_MAX_EVENTS (1u << 18) /* per rank, over all its tracks */

struct span_row {
    const char *name;
    enum tp__step_track track;
    const char *index; /* what the event's index counts: its key in args, and
                          the number after the name ("allreduce bucket 3");
                          NULL: none */
};

static const struct span_row spans[TP__SPAN_COUNT] = {
    [TP__SPAN_WAIT] = {"data wait", TP__TRACK_TRAIN, NULL},
    [TP__SPAN_COMPUTE] = {"compute", TP__TRACK_TRAIN, NULL},
    [TP__SPAN_COMPUTE_DELAY] = {"injected compute delay", TP__TRACK_TRAIN, NULL},
    [TP__SPAN_EXPOSED] = {"exposed comm", TP__TRACK_TRAIN, NULL},
    [TP__SPAN_UPDATE] = {"update", TP__TRACK_TRAIN, NULL},
    [TP__SPAN_CKPT] = {"checkpoint", TP__TRACK_TRAIN, "checkpoint"},
    [TP__SPAN_COMM_DELAY] = {"injected comm delay", TP__TRACK_COMM, NULL},
    [TP__SPAN_BUCKET] = {"allreduce bucket", TP__TRACK_COMM, "bucket"},
    [TP__SPAN_IO_DELAY] = {"injected io delay", TP__TRACK_LOADER, NULL},
    [TP__SPAN_READ] = {"read batch", TP__TRACK_LOADER, NULL},
    [TP__SPAN_CKPT_WRITE] = {"checkpoint write", TP__TRACK_WRITER, "checkpoint"},
};

static const char *const track_names[TP__TRACK_COUNT] = {
    [TP__TRACK_TRAIN] = "train", [TP__TRACK_COMM] = "comm", [TP__TRACK_LOADER] = "loader",
    [TP__TRACK_WRITER] = "checkpoint writer"};

/* one event: span, step, index, start, end (rank 0's clock, ns) */
struct ev {
    uint32_t span, index;
    uint64_t step, t0, t1;
};

struct tp__step_trace {
    struct ev *ev[TP__TRACK_COUNT];
    uint32_t n[TP__TRACK_COUNT], cap[TP__TRACK_COUNT];
    uint64_t dropped[TP__TRACK_COUNT];
    int64_t offset; /* this rank's clock minus rank 0's */
};

int tp__step_trace_open(struct rank *r, tp_error *err)
{
    const struct tp_step_opts *o = r->o;
    struct tp__step_trace *t = calloc(1, sizeof *t);
    if (!t)
        return tp_error_set(err, TP_ENOMEM, "--trace: out of memory");
    /* what a step adds to each track, bounded over the rank */
    uint64_t per[TP__TRACK_COUNT] = {
        [TP__TRACK_TRAIN] = 6, [TP__TRACK_COMM] = (uint64_t)o->buckets + 1,
        [TP__TRACK_LOADER] = 2, [TP__TRACK_WRITER] = 1};
    uint64_t room = TRACE_MAX_EVENTS / TP__TRACK_COUNT;
    for (int k = 0; k < TP__TRACK_COUNT; k++) {
        uint64_t want = o->steps * per[k] + 4;
        t->cap[k] = (uint32_t)(want < room ? want : room);
        if (!(t->ev[k] = malloc(t->cap[k] * sizeof *t->ev[k]))) {
            r->trace = t;
            tp__step_trace_close(r);
            return tp_error_set(err, TP_ENOMEM, "--trace: out of memory");
        }
    }
    t->offset = tp_boot_clock_offset_ns(r->b, r->me);
    r->trace = t;
    return 0;
}

void tp__step_trace_close(struct rank *r)
{
    struct tp__step_trace *t = r->trace;
    if (!t)
        return;
    for (int k = 0; k < TP__TRACK_COUNT; k++)
        free(t->ev[k]);
    free(t);
    r->trace = NULL;
}

void tp__step_trace_add(struct rank *r, enum tp__step_span s, uint64_t step, uint32_t index,
                        uint64_t t0, uint64_t t1)
{
    struct tp__step_trace *t = r->trace;
    if (!t || r->run != 0)
        return;
    int k = spans[s].track;
    if (t->n[k] == t->cap[k]) {
        t->dropped[k]++;
        return;
    }
    t->ev[k][t->n[k]++] = (struct ev){(uint32_t)s, index, step,
                                      (uint64_t)((int64_t)t0 - t->offset),
                                      (uint64_t)((int64_t)t1 - t->offset)};
}

/* ---- gathering and writing ---- */

/* This rank's records as text: a header line "offset rtt dropped", then
 * "track span index step t0 t1" per event. */
static char *serialise(const struct rank *r)
{
    const struct tp__step_trace *t = r->trace;
    size_t n = 0;
    uint64_t dropped = 0;
    for (int k = 0; k < TP__TRACK_COUNT; k++) {
        n += t->n[k];
        dropped += t->dropped[k];
    }
    size_t cap = 80 + n * 96;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    size_t at = (size_t)snprintf(s, cap, "%" PRId64 " %" PRIu64 " %" PRIu64 "\n", t->offset,
                                 tp_boot_clock_rtt_ns(r->b, r->me), dropped);
    for (int k = 0; k < TP__TRACK_COUNT; k++)
        for (uint32_t i = 0; i < t->n[k]; i++) {
            const struct ev *e = &t->ev[k][i];
            at += (size_t)snprintf(s + at, cap - at, "%d %u %u %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
                                   k, e->span, e->index, e->step, e->t0, e->t1);
        }
    return s;
}

struct writer {
    FILE *f;
    const struct rank *r;
    uint64_t origin; /* rank 0's start of the run, its clock */
    json_t *ranks;   /* the offsets, for otherData */
    uint64_t dropped;
    bool first;
};

static void put_event(struct writer *w, const char *json)
{
    fputs(w->first ? "\n" : ",\n", w->f);
    fputs(json, w->f);
    w->first = false;
}

static void put_meta(struct writer *w, int pid, int tid, const char *what, const char *name)
{
    json_t *e = json_pack("{s:s, s:s, s:i, s:{s:s}}", "name", what, "ph", "M", "pid", pid, "args",
                          "name", name);
    if (tid >= 0)
        json_object_set_new(e, "tid", json_integer(tid));
    char *s = json_dumps(e, JSON_COMPACT);
    if (s)
        put_event(w, s);
    free(s);
    json_decref(e);
}

static double us(int64_t ns)
{
    return (double)ns / 1000.0;
}

static int one_rank(void *ctx, int rank, const char *data, tp_error *err)
{
    struct writer *w = ctx;
    if (!data || !w->f) /* a rank left out; the file could not be opened */
        return 0;
    int64_t offset;
    uint64_t rtt, dropped;
    int used = 0;
    if (sscanf(data, "%" SCNd64 " %" SCNu64 " %" SCNu64 "%n", &offset, &rtt, &dropped, &used) != 3)
        return tp_error_set(err, TP_EPROTO, "--trace: rank %d sent no header", rank);
    w->dropped += dropped;
    const char *host = tp_boot_host(w->r->b, rank);
    char pname[300];
    snprintf(pname, sizeof pname, "rank %d (%s)", rank, host ? host : "?");
    put_meta(w, rank, -1, "process_name", pname);
    for (int k = 0; k < TP__TRACK_COUNT; k++)
        put_meta(w, rank, k, "thread_name", track_names[k]);
    json_array_append_new(w->ranks,
                          json_pack("{s:i, s:s, s:I, s:I}", "rank", rank, "host", host ? host : "?",
                                    "offset_ns", (json_int_t)offset, "uncertainty_ns",
                                    (json_int_t)(rtt / 2)));
    const char *p = data + used;
    int k, n;
    unsigned span, index;
    uint64_t step, t0, t1;
    while (sscanf(p, "%d %u %u %" SCNu64 " %" SCNu64 " %" SCNu64 "%n", &k, &span, &index, &step,
                  &t0, &t1, &n) == 6) {
        p += n;
        if (k < 0 || k >= TP__TRACK_COUNT || span >= TP__SPAN_COUNT)
            return tp_error_set(err, TP_EPROTO, "--trace: rank %d sent an unknown span", rank);
        const struct span_row *row = &spans[span];
        char name[80], more[48] = "", ev[400];
        if (row->index) {
            snprintf(name, sizeof name, "%s %u", row->name, index);
            snprintf(more, sizeof more, ",\"%s\":%u", row->index, index);
        } else {
            snprintf(name, sizeof name, "%s", row->name);
        }
        snprintf(ev, sizeof ev,
                 "{\"name\":\"%s\",\"cat\":\"step\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,"
                 "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"step\":%" PRIu64 "%s}}",
                 name, rank, k, us((int64_t)(t0 - w->origin)),
                 us(t1 >= t0 ? (int64_t)(t1 - t0) : 0), step, more);
        put_event(w, ev);
    }
    return 0;
}

int tp__step_trace_write(struct rank *r, uint64_t origin, tp_error *err)
{
    char *mine = serialise(r);
    if (!mine)
        return tp_error_set(err, TP_ENOMEM, "--trace: out of memory");
    struct writer w = {.r = r, .origin = origin - (uint64_t)r->trace->offset, .first = true};
    struct tp_atomic *a = NULL;
    int rc = 0;
    if (r->me == 0) {
        w.ranks = json_array();
        /* the path was checked before the run: a failure now is the run's */
        if ((rc = tp_atomic_begin(r->o->trace, &a, &w.f, err)) == TP_EUSAGE)
            rc = err->code = TP_ESYS;
        if (rc == 0)
            fputs("{\"traceEvents\":[", w.f);
    }
    /* every rank takes part even when rank 0 could not open the file */
    tp_error gerr = {0};
    int grc = tp_boot_gather_each(r->b, mine, one_rank, &w, &gerr);
    free(mine);
    if (r->me != 0)
        return grc;
    if (rc == 0 && grc) {
        rc = grc;
        *err = gerr;
    }
    if (rc == 0) {
        json_t *other = json_pack(
            "{s:s, s:s, s:s, s:o, s:I}", "tool", "trainpath step", "clock",
            "rank 0's, ns from its start of the first run; each rank's offset measured at start-up, "
            "uncertain by half the round trip it was measured over",
            "events", "the first run; spans in docs/step.md", "ranks", w.ranks, "dropped_events",
            (json_int_t)w.dropped);
        w.ranks = NULL;
        char *s = json_dumps(other, JSON_COMPACT);
        fprintf(w.f, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":%s}\n", s ? s : "{}");
        free(s);
        json_decref(other);
        rc = tp_atomic_commit(a, err);
    } else if (a) {
        tp_atomic_discard(a);
    }
    json_decref(w.ranks);
    return rc;
}
