/* Two snapshots of one node compared (include/tp/counters.h): a merge of
 * their sorted counters and devices; a count that went down is a wrap or
 * a reset, reported as such and never as a delta. */
#include <stdlib.h>
#include <string.h>

#include "ctr_int.h"

static int key_cmp(const struct tp_ctr *a, const struct tp_ctr *b)
{
    if (a->source != b->source)
        return a->source < b->source ? -1 : 1;
    int d = strcmp(a->dev, b->dev);
    return d ? d : strcmp(a->name, b->name);
}

static int push(struct tp_ctr_diff *d, size_t *cap, const struct tp_ctr *b, const struct tp_ctr *a,
                enum tp_ctr_state st, uint64_t delta, tp_error *err)
{
    if (d->n == *cap) {
        size_t nc = *cap ? 2 * *cap : 64;
        struct tp_ctr_delta *p = realloc(d->d, nc * sizeof *p);
        if (!p)
            return tp_error_set(err, TP_ENOMEM, "counters: out of memory");
        d->d = p;
        *cap = nc;
    }
    const struct tp_ctr *k = a ? a : b;
    struct tp_ctr_delta *e = &d->d[d->n++];
    *e = (struct tp_ctr_delta){.before = b, .after = a, .state = (uint8_t)st, .delta = delta};
    e->cls = (uint8_t)tp_ctr_classify((enum tp_ctr_source)k->source, k->name, &e->unit);
    return 0;
}

static int push_name(char ***list, size_t *n, const char *s, tp_error *err)
{
    char **p = realloc(*list, (*n + 1) * sizeof *p);
    if (!p)
        return tp_error_set(err, TP_ENOMEM, "counters: out of memory");
    *list = p;
    if (!(p[*n] = strdup(s)))
        return tp_error_set(err, TP_ENOMEM, "counters: out of memory");
    (*n)++;
    return 0;
}

int tp_ctr_diff(const struct tp_ctr_snap *before, const struct tp_ctr_snap *after,
                struct tp_ctr_diff *out, tp_error *err)
{
    memset(out, 0, sizeof *out);
    out->after = after;
    out->read = after->n;
    out->window_s = after->at_ns > before->at_ns ? (double)(after->at_ns - before->at_ns) / 1e9 : 0;
    size_t cap = 0, i = 0, j = 0;
    int rc = 0;
    while (!rc && (i < before->n || j < after->n)) {
        const struct tp_ctr *b = i < before->n ? &before->c[i] : NULL,
                            *a = j < after->n ? &after->c[j] : NULL;
        int c = !b ? 1 : !a ? -1 : key_cmp(b, a);
        if (c < 0) {
            rc = push(out, &cap, b, NULL, TP_CTR_GONE, 0, err);
            i++;
        } else if (c > 0) {
            rc = push(out, &cap, NULL, a, TP_CTR_NEW, 0, err);
            j++;
        } else {
            if (a->level || b->level) {
                if (a->value != b->value)
                    rc = push(out, &cap, b, a, TP_CTR_LEVEL, 0, err);
            } else if (a->value < b->value) {
                rc = push(out, &cap, b, a, TP_CTR_RESET, 0, err);
            } else if (a->value > b->value) {
                rc = push(out, &cap, b, a, TP_CTR_COUNTED, a->value - b->value, err);
            }
            i++;
            j++;
        }
    }
    i = j = 0;
    while (!rc && (i < before->ndevs || j < after->ndevs)) {
        int c = i >= before->ndevs ? 1 : j >= after->ndevs ? -1
                                                           : strcmp(before->devs[i], after->devs[j]);
        if (c < 0)
            rc = push_name(&out->gone, &out->ngone, before->devs[i++], err);
        else if (c > 0)
            rc = push_name(&out->added, &out->nadded, after->devs[j++], err);
        else
            i++, j++;
    }
    if (rc)
        tp_ctr_diff_free(out);
    return rc;
}

int tp_ctr_diff_links(struct tp_ctr_diff *d, const struct tp_ctr_snap *before,
                      const struct tp_ctr_snap *sample, tp_error *err)
{
    size_t i = 0, j = 0;
    while (i < before->n && j < sample->n) {
        const struct tp_ctr *b = &before->c[i], *s = &sample->c[j];
        int c = key_cmp(b, s);
        if (c < 0) {
            i++;
            continue;
        }
        if (c > 0) {
            j++;
            continue;
        }
        if (b->source == TP_CTR_PCIE && b->level && b->value != s->value &&
            strstr(b->name, "current_") == b->name) {
            bool known = false;
            for (size_t k = 0; k < d->nchanged_links && !known; k++)
                known = strcmp(d->changed_links[k], b->dev) == 0;
            if (!known && push_name(&d->changed_links, &d->nchanged_links, b->dev, err))
                return TP_ENOMEM;
        }
        i++;
        j++;
    }
    return 0;
}

void tp_ctr_diff_free(struct tp_ctr_diff *d)
{
    if (!d)
        return;
    free(d->d);
    tp__ctr_names_free(d->gone, d->ngone);
    tp__ctr_names_free(d->added, d->nadded);
    tp__ctr_names_free(d->changed_links, d->nchanged_links);
    memset(d, 0, sizeof *d);
}
