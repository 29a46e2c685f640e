/* Timelines in the Chrome trace event format (the JSON Object Format that
 * Perfetto, ui.perfetto.dev, and chrome://tracing open): processes and
 * threads named by metadata events, spans as complete events ("ph": "X")
 * with "ts" and "dur" in microseconds (three decimals: nanoseconds),
 * "displayTimeUnit" "ns" and the writer's own facts under "otherData".
 * Written as it comes, atomically (tp/atomicfile.h): the file is the old
 * one or the whole new one. Used by step and coll (--trace FILE). */
#ifndef TP_TRACE_H
#define TP_TRACE_H

#include <jansson.h>
#include <stdint.h>

#include "tp/error.h"

struct tp_trace;

/* Start the timeline that will replace path. The path was checked before
 * the run (tp_result_file_ok), so a failure now is the run's: TP_ESYS
 * naming path (TP_ENOMEM out of memory), never TP_EUSAGE. */
int tp_trace_begin(const char *path, struct tp_trace **out, tp_error *err);

/* Name process pid, or thread tid of process pid. */
void tp_trace_process(struct tp_trace *t, int pid, const char *name);
void tp_trace_thread(struct tp_trace *t, int pid, int tid, const char *name);

/* A span of thread tid of process pid: name (and cat) any text; start and
 * duration in ns from the timeline's zero (a negative duration is drawn as
 * 0); args the members of its "args" object as JSON text ("\"step\":3"),
 * or NULL for none. */
void tp_trace_span(struct tp_trace *t, int pid, int tid, const char *name, const char *cat,
                   int64_t start_ns, int64_t dur_ns, const char *args);

/* Finish: otherData (taken, may be NULL), then the rename over path.
 * Returns 0 or TP_ESYS naming path (nothing replaced). Frees t. */
int tp_trace_end(struct tp_trace *t, json_t *other, tp_error *err);

/* Drop the timeline: path untouched, nothing left behind. Frees t. */
void tp_trace_discard(struct tp_trace *t);

#endif
