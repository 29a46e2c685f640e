/* The table of backends that run the sweep's collectives (one row per
 * backend, src/coll/backend_<name>.c), and --backend's list of them. */
#include <stdio.h>
#include <string.h>

#include "tp/coll.h"

extern const struct tp_coll_backend tp__coll_backend_trainpath, tp__coll_backend_mpi,
    tp__coll_backend_nccl;

const struct tp_coll_backend *const tp_coll_backend_table[TP_COLL_BACKENDS + 1] = {
    &tp__coll_backend_trainpath,
    &tp__coll_backend_mpi,
    &tp__coll_backend_nccl,
    NULL,
};

const struct tp_coll_backend *tp_coll_backend_find(const char *name, size_t len)
{
    for (int i = 0; tp_coll_backend_table[i]; i++)
        if (len == strlen(tp_coll_backend_table[i]->name) &&
            strncmp(name, tp_coll_backend_table[i]->name, len) == 0)
            return tp_coll_backend_table[i];
    return NULL;
}

void tp_coll_backends_default(struct tp_coll_backends *l)
{
    *l = (struct tp_coll_backends){.row = {tp_coll_backend_table[0]}, .n = 1};
}

/* "trainpath, mpi or nccl" */
static void names(char *buf, size_t cap)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; tp_coll_backend_table[i] && at < cap; i++)
        at += (size_t)snprintf(buf + at, cap - at, "%s%s",
                               i == 0                           ? ""
                               : tp_coll_backend_table[i + 1] ? ", "
                                                                : " or ",
                               tp_coll_backend_table[i]->name);
}

int tp_coll_backends_parse(const char *arg, struct tp_coll_backends *l, tp_error *err)
{
    struct tp_coll_backends out = {.arg = arg};
    for (const char *s = arg;;) {
        size_t len = strcspn(s, ",");
        const struct tp_coll_backend *b = tp_coll_backend_find(s, len);
        if (!b) {
            char known[128];
            names(known, sizeof known);
            return tp_error_set(err, TP_EUSAGE, "--backend %s: '%.*s' is not %s", arg, (int)len,
                                s, known);
        }
        for (int i = 0; i < out.n; i++)
            if (out.row[i] == b)
                return tp_error_set(err, TP_EUSAGE, "--backend %s: %s twice", arg, b->name);
        out.row[out.n++] = b;
        if (!s[len])
            break;
        s += len + 1;
    }
    *l = out;
    return 0;
}
