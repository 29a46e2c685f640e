/* What the format rows of src/wlimport/ share (wlimport_int.h): a part's
 * arrays, grown and freed in one place, and the warnings a reader leaves,
 * each naming the file and, for a text format, the line. */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tp/json.h"
#include "wlimport_int.h"

#define MAX_WARNINGS 50

void tp__wlimport_warn(json_t *warnings, const char *path, unsigned long line, const char *fmt, ...)
{
    if (!warnings || json_array_size(warnings) >= MAX_WARNINGS)
        return;
    char why[512], msg[1400];
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

void *tp__wl_grow(void **a, size_t *n, size_t sz)
{
    if (*n == 0 || (*n >= 16 && (*n & (*n - 1)) == 0)) {
        size_t cap = *n ? 2 * *n : 16;
        void *b = cap <= SIZE_MAX / sz ? realloc(*a, cap * sz) : NULL;
        if (!b)
            return NULL;
        *a = b;
    }
    void *e = (char *)*a + *n * sz;
    memset(e, 0, sz);
    (*n)++;
    return e;
}

struct tp_wlimport_step *tp__wl_add_step(struct tp_wlimport_part *p)
{
    struct tp_wlimport_step *s = tp__wl_grow((void **)&p->steps, &p->nsteps, sizeof *s);
    if (s) {
        s->id = -1;
        s->forward_ns = s->backward_ns = s->optimizer_ns = s->step_ns = TP_WL_NONE;
        s->first = p->ncolls;
    }
    return s;
}

struct tp_wlimport_coll *tp__wl_add_coll(struct tp_wlimport_part *p)
{
    struct tp_wlimport_coll *c = tp__wl_grow((void **)&p->colls, &p->ncolls, sizeof *c);
    if (c) {
        c->group = -1;
        c->bytes = TP_WL_UNSIZED;
        c->ready_ns = c->start_ns = c->dur_ns = TP_WL_NONE;
        c->phase = TP_WL_PHASE_OTHER;
    }
    return c;
}

int tp__wl_group(struct tp_wlimport_part *p, const char *name, size_t len, const char *desc)
{
    char nm[64];
    snprintf(nm, sizeof nm, "%.*s", (int)(len < sizeof nm ? len : sizeof nm - 1), name);
    for (size_t i = 0; i < p->ngroups; i++)
        if (strcmp(p->groups[i].name, nm) == 0)
            return (int)i;
    struct tp_wlimport_group *g = tp__wl_grow((void **)&p->groups, &p->ngroups, sizeof *g);
    if (!g)
        return -1;
    snprintf(g->name, sizeof g->name, "%s", nm);
    snprintf(g->desc, sizeof g->desc, "%s", desc ? desc : "");
    return (int)(p->ngroups - 1);
}

void tp_wlimport_part_free(struct tp_wlimport_part *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->ngroups; i++)
        free(p->groups[i].ranks);
    free(p->groups);
    free(p->steps);
    free(p->colls);
    free(p);
}
