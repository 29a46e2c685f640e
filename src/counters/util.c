/* What the counter sources share (ctr_int.h): adding a counter or a
 * device to the snapshot being taken, and paths and folders under its
 * root; the files are read by core's one reader (tp/sysfs.h), none trusted
 * to be small or to exist. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctr_int.h"

const char *tp_ctr_source_name(enum tp_ctr_source s)
{
    static const char *const names[TP_CTR_SOURCES] = {
        [TP_CTR_RDMA] = "rdma", [TP_CTR_NETDEV] = "netdev", [TP_CTR_ETHTOOL] = "ethtool",
        [TP_CTR_TCP] = "tcp", [TP_CTR_PCIE] = "pcie"};
    return (unsigned)s < TP_CTR_SOURCES ? names[s] : "?";
}

int tp__ctr_add(struct tp__ctr_ctx *c, enum tp_ctr_source s, const char *dev, const char *name,
                uint64_t value, bool level)
{
    struct tp_ctr_snap *sn = c->snap;
    if (sn->n == sn->cap) {
        size_t cap = sn->cap ? 2 * sn->cap : 256;
        struct tp_ctr *p = realloc(sn->c, cap * sizeof *p);
        if (!p)
            return tp_error_set(c->err, TP_ENOMEM, "counters: out of memory");
        sn->c = p;
        sn->cap = cap;
    }
    struct tp_ctr *k = &sn->c[sn->n++];
    memset(k, 0, sizeof *k);
    snprintf(k->dev, sizeof k->dev, "%s", dev);
    snprintf(k->name, sizeof k->name, "%s", name);
    k->source = (uint8_t)s;
    k->level = level;
    k->value = value;
    return 0;
}

int tp__ctr_dev(struct tp__ctr_ctx *c, enum tp_ctr_source s, const char *dev)
{
    struct tp_ctr_snap *sn = c->snap;
    char **p = realloc(sn->devs, (sn->ndevs + 1) * sizeof *p);
    if (!p)
        return tp_error_set(c->err, TP_ENOMEM, "counters: out of memory");
    sn->devs = p;
    size_t len = strlen(tp_ctr_source_name(s)) + strlen(dev) + 2;
    if (!(p[sn->ndevs] = malloc(len)))
        return tp_error_set(c->err, TP_ENOMEM, "counters: out of memory");
    snprintf(p[sn->ndevs++], len, "%s:%s", tp_ctr_source_name(s), dev);
    return 0;
}

bool tp__ctr_path(const struct tp__ctr_ctx *c, char *out, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = tp_sysfs_vpath(out, cap, c->root, fmt, ap);
    va_end(ap);
    return rc == 0;
}

int tp__ctr_list_under(struct tp__ctr_ctx *c, const char *rel, char *base, size_t cap,
                       struct tp_sysfs_names *names)
{
    names->v = NULL;
    names->n = 0;
    if (!tp__ctr_path(c, base, cap, "%s", rel))
        return 0;
    if (tp_sysfs_list(base, 0, NULL, names) < 0 && errno == ENOMEM)
        return tp_error_set(c->err, TP_ENOMEM, "counters: out of memory");
    return 0;
}

void tp__ctr_names_free(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

int tp__ctr_numbers_in(struct tp__ctr_ctx *c, enum tp_ctr_source s, const char *dev,
                       const char *path)
{
    struct tp_sysfs_names names;
    if (tp_sysfs_list(path, 0, NULL, &names) < 0 && errno == ENOMEM)
        return tp_error_set(c->err, TP_ENOMEM, "counters: out of memory");
    int rc = 0;
    for (size_t i = 0; i < names.n && !rc; i++) {
        char f[4096];
        uint64_t v;
        if (snprintf(f, sizeof f, "%s/%s", path, names.v[i]) < (int)sizeof f &&
            tp_sysfs_u64(f, &v) == 0)
            rc = tp__ctr_add(c, s, dev, names.v[i], v, false);
    }
    tp_sysfs_names_free(&names);
    return rc;
}

