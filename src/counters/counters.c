/* Snapshots of a node's counters (include/tp/counters.h): the sources as a
 * table, each read under the root, the counters sorted so that two
 * snapshots compare by a merge. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctr_int.h"
#include "tp/clock.h"

static const struct tp__ctr_source *const sources[] = {
    &tp__ctr_rdma, &tp__ctr_netdev, &tp__ctr_ethtool, &tp__ctr_tcp, &tp__ctr_pcie, NULL};

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int by_key(const void *pa, const void *pb)
{
    const struct tp_ctr *a = pa, *b = pb;
    if (a->source != b->source)
        return a->source < b->source ? -1 : 1;
    int d = strcmp(a->dev, b->dev);
    return d ? d : strcmp(a->name, b->name);
}

static int take(const char *root, bool links_only, struct tp_ctr_snap *out, tp_error *err)
{
    memset(out, 0, sizeof *out);
    tp_clock_init();
    bool live = !root || !*root || strcmp(root, "/") == 0;
    char r[2048];
    if (!live) {
        size_t len = strlen(root);
        while (len > 1 && root[len - 1] == '/')
            len--;
        if (len >= sizeof r)
            return tp_error_set(err, TP_EUSAGE, "%s: path too long", root);
        memcpy(r, root, len);
        r[len] = '\0';
        struct stat st;
        if (stat(r, &st) != 0)
            return tp_error_set(err, TP_EUSAGE, "%s: %s", root, strerror(errno));
        if (!S_ISDIR(st.st_mode))
            return tp_error_set(err, TP_EUSAGE, "%s: not a folder (the root to read counters under)",
                                root);
    }
    struct tp__ctr_ctx c = {.root = live ? "" : r, .live = live, .links_only = links_only,
                            .snap = out, .err = err};
    out->at_ns = tp_now_ns();
    for (int i = 0; sources[i]; i++) {
        if (links_only && sources[i]->id != TP_CTR_PCIE)
            continue;
        int rc = sources[i]->read(&c);
        if (rc)
            return rc;
    }
    if (out->n)
        qsort(out->c, out->n, sizeof *out->c, by_key);
    if (out->ndevs)
        qsort(out->devs, out->ndevs, sizeof *out->devs, by_name);
    return 0;
}

int tp_ctr_snapshot(const char *root, struct tp_ctr_snap *out, tp_error *err)
{
    return take(root, false, out, err);
}

int tp_ctr_snapshot_links(const char *root, struct tp_ctr_snap *out, tp_error *err)
{
    return take(root, true, out, err);
}

void tp_ctr_snap_free(struct tp_ctr_snap *s)
{
    if (!s)
        return;
    free(s->c);
    tp__ctr_names_free(s->devs, s->ndevs);
    memset(s, 0, sizeof *s);
}
