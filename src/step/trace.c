/* The step timeline: in the first run every rank records what each of its
 * threads did, step by step, as intervals of its own clock moved onto rank
 * 0's (the boot's measured offset, whose uncertainty is half the round trip
 * it was measured over); rank 0 gathers the ranks' records one rank at a
 * time. It keeps the first TIMELINE_STEPS steps of the first
 * TIMELINE_RANKS ranks for the result document (results.timeline, which the
 * HTML report draws), and with --trace FILE writes every step of every
 * rank, atomically, in the Chrome trace event format that Perfetto
 * (ui.perfetto.dev) and chrome://tracing read: one process per rank, one
 * thread per track (the training loop, the comm thread's calls, the
 * loader, the checkpoint writer), complete events ("ph": "X") in
 * microseconds from rank 0's start of the run.
 *
 * The spans are rows of a table; each thread appends to its own buffer, so
 * recording takes no lock; a buffer that fills stops recording and the
 * trace says how many events were dropped. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "step_int.h"
#include "tp/trace.h"

#define TRACE_MAX_EVENTS (1u << 18) /* per rank, over all its tracks */
#define TIMELINE_STEPS 4            /* in the result document: the first steps */
#define TIMELINE_RANKS 16           /* ... of the first ranks */

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
    [TP__SPAN_COLL] = {"collective", TP__TRACK_COMM, "collective"},
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
    uint64_t steps; /* the steps recorded: all with --trace, else the document's */
    int64_t offset; /* this rank's clock minus rank 0's */
};

int tp__step_trace_open(struct rank *r, tp_error *err)
{
    const struct tp_step_opts *o = r->o;
    struct tp__step_trace *t = calloc(1, sizeof *t);
    if (!t)
        return tp_error_set(err, TP_ENOMEM, "step timeline: out of memory");
    t->steps = o->trace || o->steps < TIMELINE_STEPS ? o->steps : TIMELINE_STEPS;
    /* what a step adds to each track, bounded over the rank */
    uint64_t per[TP__TRACK_COUNT] = {
        [TP__TRACK_TRAIN] = 6, [TP__TRACK_COMM] = (uint64_t)r->maxcalls + 1,
        [TP__TRACK_LOADER] = 2, [TP__TRACK_WRITER] = 1};
    uint64_t room = TRACE_MAX_EVENTS / TP__TRACK_COUNT;
    for (int k = 0; k < TP__TRACK_COUNT; k++) {
        uint64_t want = t->steps * per[k] + 4;
        t->cap[k] = (uint32_t)(want < room ? want : room);
        if (!(t->ev[k] = malloc(t->cap[k] * sizeof *t->ev[k]))) {
            r->trace = t;
            tp__step_trace_close(r);
            return tp_error_set(err, TP_ENOMEM, "step timeline: out of memory");
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
    if (!t || r->run != 0 || step >= t->steps)
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
    struct tp_trace *f; /* the --trace file, or NULL */
    const struct rank *r;
    uint64_t origin;  /* rank 0's start of the run, its clock */
    json_t *ranks;    /* the offsets, for otherData */
    json_t *timeline; /* results.timeline's ranks */
    uint64_t dropped;
};

static void put_span(struct writer *w, int rank, int k, unsigned span, unsigned index,
                     uint64_t step, int64_t start, int64_t dur, json_t *doc_events)
{
    const struct span_row *row = &spans[span];
    char name[80], args[96];
    int at = snprintf(args, sizeof args, "\"step\":%" PRIu64, step);
    if (row->index) {
        snprintf(name, sizeof name, "%s %u", row->name, index);
        snprintf(args + at, sizeof args - (size_t)at, ",\"%s\":%u", row->index, index);
    } else {
        snprintf(name, sizeof name, "%s", row->name);
    }
    if (doc_events && step < TIMELINE_STEPS)
        json_array_append_new(doc_events, json_pack("[i, s, I, I, I]", k, name, (json_int_t)step,
                                                     (json_int_t)start, (json_int_t)dur));
    if (w->f)
        tp_trace_span(w->f, rank, k, name, "step", start, dur, args);
}

static int one_rank(void *ctx, int rank, const char *data, tp_error *err)
{
    struct writer *w = ctx;
    if (!data) /* a rank left out */
        return 0;
    int64_t offset;
    uint64_t rtt, dropped;
    int used = 0;
    if (sscanf(data, "%" SCNd64 " %" SCNu64 " %" SCNu64 "%n", &offset, &rtt, &dropped, &used) != 3)
        return tp_error_set(err, TP_EPROTO, "step timeline: rank %d sent no header", rank);
    w->dropped += dropped;
    const char *host = tp_boot_host(w->r->b, rank);
    json_t *doc_events = NULL;
    if (rank < TIMELINE_RANKS) {
        doc_events = json_array();
        json_array_append_new(w->timeline,
                              json_pack("{s:i, s:s, s:I, s:o}", "rank", rank, "host",
                                        host ? host : "?", "uncertainty_ns",
                                        (json_int_t)(rtt / 2), "events", doc_events));
    }
    if (w->f) {
        char pname[300];
        snprintf(pname, sizeof pname, "rank %d (%s)", rank, host ? host : "?");
        tp_trace_process(w->f, rank, pname);
        for (int k = 0; k < TP__TRACK_COUNT; k++)
            tp_trace_thread(w->f, rank, k, track_names[k]);
        json_array_append_new(w->ranks, json_pack("{s:i, s:s, s:I, s:I}", "rank", rank, "host",
                                                  host ? host : "?", "offset_ns",
                                                  (json_int_t)offset, "uncertainty_ns",
                                                  (json_int_t)(rtt / 2)));
    }
    const char *p = data + used;
    int k, n;
    unsigned span, index;
    uint64_t step, t0, t1;
    while (sscanf(p, "%d %u %u %" SCNu64 " %" SCNu64 " %" SCNu64 "%n", &k, &span, &index, &step,
                  &t0, &t1, &n) == 6) {
        p += n;
        if (k < 0 || k >= TP__TRACK_COUNT || span >= TP__SPAN_COUNT)
            return tp_error_set(err, TP_EPROTO, "step timeline: rank %d sent an unknown span",
                                rank);
        put_span(w, rank, k, span, index, step, (int64_t)(t0 - w->origin),
                 t1 >= t0 ? (int64_t)(t1 - t0) : 0, doc_events);
    }
    return 0;
}

static json_t *timeline_doc(const struct writer *w, uint64_t steps)
{
    json_t *tracks = json_array();
    for (int k = 0; k < TP__TRACK_COUNT; k++)
        json_array_append_new(tracks, json_string(track_names[k]));
    return json_pack("{s:I, s:i, s:o, s:s, s:O}", "steps",
                     (json_int_t)(steps < TIMELINE_STEPS ? steps : TIMELINE_STEPS), "ranks_total",
                     w->r->n, "tracks", tracks, "clock",
                     "rank 0's, ns from its start of the first run; events: [track, name, step, "
                     "start_ns, duration_ns]",
                     "ranks", w->timeline);
}

int tp__step_trace_write(struct rank *r, uint64_t origin, json_t **timeline, tp_error *err)
{
    *timeline = NULL;
    char *mine = serialise(r);
    if (!mine)
        return tp_error_set(err, TP_ENOMEM, "step timeline: out of memory");
    struct writer w = {.r = r, .origin = origin - (uint64_t)r->trace->offset};
    int rc = 0;
    if (r->me == 0) {
        w.ranks = json_array();
        w.timeline = json_array();
        if (r->o->trace)
            rc = tp_trace_begin(r->o->trace, &w.f, err);
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
    if (rc == 0 && w.f) {
        rc = tp_trace_end(
            w.f,
            json_pack("{s:s, s:s, s:s, s:O, s:I}", "tool", "trainpath step", "clock",
                      "rank 0's, ns from its start of the first run; each rank's offset measured "
                      "at start-up, uncertain by half the round trip it was measured over",
                      "events", "the first run; spans in docs/step.md", "ranks", w.ranks,
                      "dropped_events", (json_int_t)w.dropped),
            err);
    } else {
        tp_trace_discard(w.f);
    }
    if (rc == 0)
        *timeline = timeline_doc(&w, r->o->steps);
    json_decref(w.ranks);
    json_decref(w.timeline);
    return rc;
}
