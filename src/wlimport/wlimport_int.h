/* The format table of trainpath workload import (include/tp/wlimport.h):
 * one row a format, one file a row. Internal to src/wlimport/. */
#ifndef TP_WLIMPORT_INT_H
#define TP_WLIMPORT_INT_H

#include <stdbool.h>

#include "tp/wlimport.h"

struct tp__wlimport_format {
    const char *name; /* --from NAME, and the output's source */
    const char *what; /* for messages: "a torch.profiler trace" */
    /* whether text (len bytes, NUL-terminated) is this format */
    bool (*detect)(const char *text, size_t len);
    /* fill p from text; warnings as tp_wlimport_read's; TP_EUSAGE naming
     * path when nothing usable is there */
    int (*read)(const char *path, const char *text, size_t len, struct tp_wlimport_part *p,
                json_t *warnings, tp_error *err);
};

extern const struct tp__wlimport_format tp__wlimport_kineto, tp__wlimport_nccl_log;

/* Add "path:line: why" (line 0: "path: why") to warnings (NULL: nothing). */
void tp__wlimport_warn(json_t *warnings, const char *path, unsigned long line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Allocate p's arrays for n steps of b buckets: the per-step times
 * (with_times), the bytes and dtypes (with_bytes). TP_ENOMEM naming path. */
int tp__wlimport_alloc(struct tp_wlimport_part *p, size_t n, unsigned b, bool with_times,
                       bool with_bytes, bool with_allreduce, const char *path, tp_error *err);

#endif
