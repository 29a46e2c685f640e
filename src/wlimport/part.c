/* What the format rows of src/wlimport/ share (wlimport_int.h): a part's
 * arrays, allocated and freed in one place, and the warnings a reader
 * leaves, each naming the file and, for a text format, the line. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tp/json.h"
#include "wlimport_int.h"

#define MAX_WARNINGS 50

void tp__wlimport_warn(json_t *warnings, const char *path, unsigned long line, const char *fmt, ...)
{
    if (!warnings || json_array_size(warnings) >= MAX_WARNINGS)
        return;
    char why[384], msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (line)
        snprintf(msg, sizeof msg, "%s:%lu: %s", path, line, why);
    else
        snprintf(msg, sizeof msg, "%s: %s", path, why);
    json_array_append_new(warnings, tp_json_text(msg));
}

int tp__wlimport_alloc(struct tp_wlimport_part *p, size_t n, unsigned b, bool with_times,
                       bool with_bytes, bool with_allreduce, const char *path, tp_error *err)
{
    size_t m = n ? n : 1, mb = (size_t)(b ? b : 1);
    p->nsteps = n;
    p->nbuckets = b;
    bool ok = true;
    if (with_times) {
        ok = (p->forward_ns = calloc(m, sizeof(uint64_t))) &&
             (p->backward_ns = calloc(m, sizeof(uint64_t))) &&
             (p->optimizer_ns = calloc(m, sizeof(uint64_t))) &&
             (p->step_ns = calloc(m, sizeof(uint64_t))) &&
             (p->ready_ns = calloc(m * mb, sizeof(uint64_t))) &&
             (!with_allreduce || (p->allreduce_ns = calloc(m * mb, sizeof(uint64_t))));
    }
    if (ok && with_bytes)
        ok = (p->bytes = calloc(mb, sizeof *p->bytes)) && (p->dtype = calloc(mb, sizeof *p->dtype));
    return ok ? 0 : tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
}

void tp_wlimport_part_free(struct tp_wlimport_part *p)
{
    if (!p)
        return;
    free(p->bytes);
    free(p->dtype);
    free(p->forward_ns);
    free(p->backward_ns);
    free(p->optimizer_ns);
    free(p->step_ns);
    free(p->ready_ns);
    free(p->allreduce_ns);
    free(p);
}
