/* A topology as a JSON object for documents (tp_topology_json): the
 * counts, then every switch as topology.conf would list it: a leaf with its
 * nodes, a switch above with the switches below it. The lists are built
 * once by counting (each leaf's nodes, each switch's children), so a
 * document of a million nodes costs two passes. */
#include <stdlib.h>

#include "topo_int.h"

/* Lists by owner: owner o's items are item[at[o]] .. item[at[o + 1] - 1],
 * in the order a walk emits them; the walk runs twice (count, then place). */
struct lists {
    int *at, *item, *next;
    bool place;
};

static void emit(struct lists *l, int owner, int item)
{
    if (l->place)
        l->item[l->next[owner]++] = item;
    else
        l->at[owner + 1]++;
}

/* Each leaf's nodes in node order, once each (a leaf that serves every
 * rail holds its nodes on each). */
static void walk_leaf_nodes(const struct tp_topology *t, struct lists *l)
{
    for (int i = 0; i < t->nnodes; i++) {
        const int *leaf = t->leaf + i * t->nrails;
        for (int r = 0; r < t->nrails; r++) {
            int seen = 0;
            while (seen < r && leaf[seen] != leaf[r])
                seen++;
            if (leaf[r] >= 0 && seen == r)
                emit(l, leaf[r], i);
        }
    }
}

/* Each switch's children, in index order. */
static void walk_children(const struct tp_topology *t, struct lists *l)
{
    for (int s = 0; s < t->nswitches; s++)
        for (int k = 0; k < t->sw[s].nup; k++)
            emit(l, t->sw[s].up[k], s);
}

/* Lists of at most n items in all, by walk. */
static int lists_make(const struct tp_topology *t, struct lists *l, size_t n,
                      void (*walk)(const struct tp_topology *, struct lists *))
{
    size_t nsw = (size_t)t->nswitches;
    l->at = calloc(nsw + 1, sizeof *l->at);
    l->item = malloc((n ? n : 1) * sizeof *l->item);
    l->next = malloc(nsw * sizeof *l->next);
    if (!l->at || !l->item || !l->next)
        return TP_ENOMEM;
    walk(t, l);
    for (size_t s = 0; s < nsw; s++) {
        l->at[s + 1] += l->at[s];
        l->next[s] = l->at[s];
    }
    l->place = true;
    walk(t, l);
    return 0;
}

static void lists_free(struct lists *l)
{
    free(l->at);
    free(l->item);
    free(l->next);
}

/* Set key to v in o, taking v; false (v freed) when either failed. */
static bool put(json_t *o, const char *key, json_t *v)
{
    return v && json_object_set_new(o, key, v) == 0;
}

static json_t *names(const struct tp_topology *t, const struct lists *l, int s, bool nodes)
{
    json_t *a = json_array();
    char buf[32];
    for (int k = l->at[s]; a && k < l->at[s + 1]; k++) {
        const char *name = nodes ? tp_topology_node_name(t, l->item[k], buf, sizeof buf)
                                 : tp_topology_switch_name(t, l->item[k], buf, sizeof buf);
        if (json_array_append_new(a, json_string(name)) != 0) {
            json_decref(a);
            a = NULL;
        }
    }
    return a;
}

static json_t *one_switch(const struct tp_topology *t, int s, const struct lists *ln,
                          const struct lists *lc)
{
    const struct tp_topo_switch *w = &t->sw[s];
    json_t *o = json_object();
    char buf[32];
    bool ok = o && put(o, "name", json_string(tp_topology_switch_name(t, s, buf, sizeof buf))) &&
              put(o, "level", json_integer(w->level));
    if (ok && w->rail >= 0)
        ok = put(o, "rail", json_integer(w->rail));
    if (ok && w->link_speed)
        ok = put(o, "link_speed", json_integer(w->link_speed));
    if (ok)
        ok = w->level == 0 ? put(o, "nodes", names(t, ln, s, true))
                           : put(o, "switches", names(t, lc, s, false));
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *tp_topology_json(const struct tp_topology *t)
{
    struct lists ln = {0}, lc = {0};
    int per[2] = {0, 0};
    size_t nup = 0;
    for (int s = 0; s < t->nswitches; s++) {
        if (t->sw[s].level < 2)
            per[t->sw[s].level]++;
        nup += (size_t)t->sw[s].nup;
    }
    json_t *o = json_object(), *sw = json_array();
    bool ok =
        o && sw &&
        lists_make(t, &ln, (size_t)t->nnodes * (size_t)t->nrails, walk_leaf_nodes) == 0 &&
        lists_make(t, &lc, nup, walk_children) == 0 && put(o, "nodes", json_integer(t->nnodes)) &&
        put(o, "rails", json_integer(t->nrails)) && put(o, "levels", json_integer(t->nlevels)) &&
        put(o, "leaves", json_integer(per[0])) && put(o, "spines", json_integer(per[1]));
    for (int s = 0; ok && s < t->nswitches; s++)
        ok = json_array_append_new(sw, one_switch(t, s, &ln, &lc)) == 0;
    if (ok) {
        ok = put(o, "switches", sw);
        sw = NULL;
    }
    lists_free(&ln);
    lists_free(&lc);
    json_decref(sw);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}
