/* A comparison of two snapshots as the result document's "counters"
 * object (include/tp/counters.h, docs/metrics.md): what moved, what reset,
 * what went, the PCIe links, and the causes with their evidence. */
#include <string.h>

#include "ctr_int.h"

struct link {
    const char *dev;
    uint64_t v[4]; /* speed, max speed, width, max width */
    bool have[4];
};

static bool changed_link(const struct tp_ctr_diff *d, const char *dev)
{
    for (size_t k = 0; k < d->nchanged_links; k++)
        if (strcmp(d->changed_links[k], dev) == 0)
            return true;
    for (size_t k = 0; k < d->n; k++)
        if (d->d[k].state == TP_CTR_LEVEL && d->d[k].after->source == TP_CTR_PCIE &&
            strcmp(d->d[k].after->dev, dev) == 0 &&
            strncmp(d->d[k].after->name, "current_", 8) == 0)
            return true;
    return false;
}

static bool downtrained(const struct link *l)
{
    return (l->have[0] && l->have[1] && l->v[0] < l->v[1]) ||
           (l->have[2] && l->have[3] && l->v[2] < l->v[3]);
}

/* The PCIe links of the after snapshot, one entry a device, in order. */
static size_t links_of(const struct tp_ctr_snap *s, struct link *out, size_t cap)
{
    static const char *const names[4] = {"current_link_speed", "max_link_speed",
                                         "current_link_width", "max_link_width"};
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++) {
        const struct tp_ctr *c = &s->c[i];
        if (c->source != TP_CTR_PCIE || !c->level)
            continue;
        if (!n || strcmp(out[n - 1].dev, c->dev) != 0) {
            if (n == cap)
                break;
            out[n++] = (struct link){.dev = c->dev};
        }
        for (int k = 0; k < 4; k++)
            if (strcmp(c->name, names[k]) == 0) {
                out[n - 1].v[k] = c->value;
                out[n - 1].have[k] = true;
            }
    }
    return n;
}

static json_t *num_or_null(const struct link *l, int k)
{
    return l->have[k] ? json_integer((json_int_t)l->v[k]) : json_null();
}

static json_t *entry(const struct tp_ctr *k)
{
    return json_pack("{s:s, s:s, s:s}", "dev", k->dev, "source",
                     tp_ctr_source_name((enum tp_ctr_source)k->source), "name", k->name);
}

static void list_strings(json_t *obj, const char *key, char **s, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_string(s[i]));
    json_object_set_new(obj, key, a);
}

json_t *tp_ctr_diff_json(const struct tp_ctr_diff *d, const char *path)
{
    json_t *o = json_pack("{s:f, s:I}", "window_s", d->window_s, "counters_read",
                          (json_int_t)d->read);
    if (!o)
        return NULL;
    if (path)
        json_object_set_new(o, "path", json_string(path));
    json_t *changed = json_array(), *reset = json_array(), *levels = json_array();
    json_t *ev[TP_CTR_CLASSES] = {0};
    /* the path's counters first, then the rest, each in snapshot order */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < d->n; i++) {
            const struct tp_ctr_delta *e = &d->d[i];
            const struct tp_ctr *k = e->after ? e->after : e->before;
            bool on_path = path && strcmp(k->dev, path) == 0;
            if ((pass == 0) != on_path)
                continue;
            if (e->state == TP_CTR_COUNTED) {
                json_t *j = entry(k);
                json_object_set_new(j, "unit", json_string(e->unit));
                json_object_set_new(j, "delta", json_integer((json_int_t)e->delta));
                json_object_set_new(j, "class", json_string(tp_ctr_class_name(e->cls)));
                json_array_append_new(changed, j);
                if (tp__ctr_class_text(e->cls)) {
                    if (!ev[e->cls])
                        ev[e->cls] = json_array();
                    json_t *x = entry(k);
                    json_object_set_new(x, "delta", json_integer((json_int_t)e->delta));
                    json_array_append_new(ev[e->cls], x);
                }
            } else if (e->state == TP_CTR_RESET || e->state == TP_CTR_LEVEL) {
                json_t *j = entry(k);
                json_object_set_new(j, "before", json_integer((json_int_t)e->before->value));
                json_object_set_new(j, "after", json_integer((json_int_t)e->after->value));
                json_array_append_new(e->state == TP_CTR_RESET ? reset : levels, j);
            }
        }
    json_object_set_new(o, "changed", changed);
    json_object_set_new(o, "reset", reset);
    json_object_set_new(o, "levels", levels);
    list_strings(o, "gone", d->gone, d->ngone);
    list_strings(o, "new", d->added, d->nadded);
    json_t *links = json_array();
    struct link ls[256];
    size_t nl = d->after ? links_of(d->after, ls, sizeof ls / sizeof *ls) : 0;
    for (size_t i = 0; i < nl; i++) {
        bool down = downtrained(&ls[i]), moved = changed_link(d, ls[i].dev);
        json_array_append_new(
            links, json_pack("{s:s, s:o, s:o, s:o, s:o, s:b, s:b}", "dev", ls[i].dev, "speed_mts",
                             num_or_null(&ls[i], 0), "max_speed_mts", num_or_null(&ls[i], 1),
                             "width", num_or_null(&ls[i], 2), "max_width", num_or_null(&ls[i], 3),
                             "downtrained", down, "changed", moved));
        enum tp_ctr_class c[2] = {down ? TP_CTR_DOWNTRAINED : TP_CTR_OTHER,
                                  moved ? TP_CTR_LINK_CHANGED : TP_CTR_OTHER};
        for (int k = 0; k < 2; k++) {
            if (c[k] == TP_CTR_OTHER)
                continue;
            if (!ev[c[k]])
                ev[c[k]] = json_array();
            json_array_append_new(
                ev[c[k]], json_pack("{s:s, s:s, s:s, s:o, s:o}", "dev", ls[i].dev, "source", "pcie",
                                    "name", "link", "speed_mts", num_or_null(&ls[i], 0), "width",
                                    num_or_null(&ls[i], 2)));
        }
    }
    json_object_set_new(o, "links", links);
    json_t *causes = json_array();
    for (int c = 0; c < TP_CTR_CLASSES; c++)
        if (ev[c])
            json_array_append_new(causes, json_pack("{s:s, s:s, s:o}", "cause",
                                                    tp_ctr_class_name((enum tp_ctr_class)c), "text",
                                                    tp__ctr_class_text((enum tp_ctr_class)c),
                                                    "evidence", ev[c]));
    json_object_set_new(o, "causes", causes);
    return o;
}
