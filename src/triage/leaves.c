/* The fleet's switches in the triage (tp_triage_opts.topo): per leaf
 * switch its nodes, on every rail; the screen's judgement of each leaf's
 * traffic, across its uplinks and within it (a fault of a switch or an
 * uplink slows many pairs by a little each, which no pair's own figure
 * shows); and, once the isolation is over, the nodes a named switch or
 * uplinks explain. A pair's traffic crosses every rail, so the leaves of
 * a rail-optimised group (one a rail over the same nodes) see the same
 * pairs: they are judged as one, their lowest, and the leaf action
 * (iso_leaf.c) finds the rail. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "isolate_int.h"
#include "tp/topology.h"

/* is l node v's leaf on an earlier rail than r (a leaf given no rail
 * serves them all): counted once */
static bool seen_before(const tp_triage *t, const int *lv, int r)
{
    (void)t;
    for (int q = 0; q < r; q++)
        if (lv[q] == lv[r])
            return true;
    return false;
}

int tp__triage_leaves_init(tp_triage *t, tp_error *err)
{
    const struct tp_topology *topo = t->o.topo;
    if (!topo)
        return 0;
    const int *map = t->o.topo_nodes;
    if (!map && topo->nnodes != t->n)
        return tp_error_set(err, TP_EUSAGE,
                            "the topology has %d nodes, the fleet %d: one "
                            "entry a node, in the fleet's order",
                            topo->nnodes, t->n);
    int ns = topo->nswitches, R = topo->nrails > 0 ? topo->nrails : 1;
    size_t nr = (size_t)t->n * (size_t)R;
    t->nswitches = ns;
    t->nrails = R;
    t->leaf_of = malloc(sizeof *t->leaf_of * nr);
    t->leaf_off = calloc((size_t)ns + 1, sizeof *t->leaf_off);
    t->leaf_nodes = malloc(sizeof *t->leaf_nodes * nr);
    t->leaf_sib = malloc(sizeof *t->leaf_sib * ((size_t)ns + 1));
    t->leaf_state = calloc((size_t)ns + 1, 1);
    t->leaf_group = calloc((size_t)ns + 1, sizeof *t->leaf_group);
    if (!t->leaf_of || !t->leaf_off || !t->leaf_nodes || !t->leaf_sib || !t->leaf_state ||
        !t->leaf_group)
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    for (int v = 0; v < t->n; v++) { /* each NIC's leaf, a rail each */
        int tv = map ? map[v] : v;
        if (tv >= topo->nnodes || (tv < 0 && t->node[v].status != ST_MISSING))
            return tp_error_set(err, TP_EUSAGE, "node %d: topology node %d of %d", v, tv,
                                topo->nnodes);
        int *lv = t->leaf_of + (size_t)v * (size_t)R;
        for (int r = 0; r < R; r++) {
            lv[r] = tv < 0 ? -1 : topo->leaf[(size_t)tv * (size_t)topo->nrails + (size_t)r];
            if (tv >= 0 && !seen_before(t, lv, r))
                t->leaf_off[lv[r] + 1]++;
        }
    }
    t->o.topo_nodes = NULL; /* read once: the caller's map need not outlive this */
    for (int l = 0; l < ns; l++)
        t->leaf_off[l + 1] += t->leaf_off[l];
    int *fill = malloc(sizeof *fill * (size_t)(ns + 1));
    if (!fill)
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    memcpy(fill, t->leaf_off, sizeof *fill * (size_t)(ns + 1));
    for (int v = 0; v < t->n; v++) {
        const int *lv = t->leaf_of + (size_t)v * (size_t)R;
        for (int r = 0; r < R; r++)
            if (lv[r] >= 0 && !seen_before(t, lv, r))
                t->leaf_nodes[fill[lv[r]]++] = v;
    }
    free(fill);
    tp__triage_leaf_siblings(t);
    return 0;
}

void tp__triage_leaves_free(tp_triage *t)
{
    free(t->leaf_of);
    free(t->leaf_off);
    free(t->leaf_nodes);
    free(t->leaf_sib);
    free(t->leaf_state);
    free(t->leaf_group);
}

/* z with an upper normal tail of p (bisection: nothing here is hot) */
static double z_of_tail(double p)
{
    double lo = 0, hi = 40;
    for (int i = 0; i < 100; i++) {
        double mid = (lo + hi) / 2;
        if (0.5 * erfc(mid / M_SQRT2) > p)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* per switch: the sums of the screen's pairs across its uplinks and
 * within it, as ratios to the median less one, each clipped to 3
 * spreads (one spike moves a mean; a fault of 15 % in 5 % noise is
 * inside the clip) */
struct sums {
    double cross, within;
    int ncross, nwithin, suspects;
};

/* a pair crosses every rail (its traffic is split over them): each rail's
 * leaves of its ends take it, a leaf of several rails once */
static void add_pairs(const tp_triage *t, struct sums *s, double *all_cross, int *nall)
{
    double m = t->pair_median, c = 3 * fmax(t->pair_spread, 1e-3);
    int R = t->nrails;
    for (int i = 0; i < t->npairs; i++) {
        const struct tp__pair *p = &t->pairs[i];
        double x = fmin(fmax(p->fig / m - 1, -c), c);
        const int *ka = t->leaf_of + (size_t)p->a * (size_t)R,
                  *kb = t->leaf_of + (size_t)p->b * (size_t)R;
        for (int r = 0; r < R; r++) {
            int la = ka[r], lb = kb[r];
            bool da = seen_before(t, ka, r), db = seen_before(t, kb, r);
            if (la == lb) {
                if (!da) {
                    s[la].within += x;
                    s[la].nwithin++;
                }
                continue;
            }
            if (!da) {
                s[la].cross += x;
                s[la].ncross++;
            }
            if (!db) {
                s[lb].cross += x;
                s[lb].ncross++;
            }
            if (r == 0) { /* the fleet's mean across, once a pair */
                *all_cross += x;
                (*nall)++;
            }
        }
    }
}

int tp__triage_leaf_suspects(tp_triage *t, const bool *sus)
{
    if (!t->o.topo || !(t->pair_median > 0))
        return 0;
    int ns = t->nswitches, nleaves = 0;
    struct sums *s = calloc((size_t)ns, sizeof *s);
    if (!s)
        return TP_ENOMEM;
    double all = 0;
    int nall = 0;
    add_pairs(t, s, &all, &nall);
    for (int v = 0; v < t->n; v++)
        for (int k = 0; sus[v] && k < t->nrails; k++) {
            const int *lv = t->leaf_of + (size_t)v * (size_t)t->nrails;
            if (lv[k] >= 0 && !seen_before(t, lv, k)) /* -1: never joined */
                s[lv[k]].suspects++;
        }
    /* a rail-optimised group's leaves see the same pairs: one leaf */
    for (int l = 0; l < ns; l++)
        nleaves += t->leaf_off[l + 1] > t->leaf_off[l] && t->leaf_sib[l] == l;
    /* a leaf is one of many: its bar holds the screen's false leaf
     * suspects to one in 20 runs (they cost rounds, not names) */
    double bar = fmax(t->o.z_screen, z_of_tail(0.05 / (nleaves > 0 ? nleaves : 1)));
    double sigma = fmax(t->pair_spread, 1e-3), mean = nall ? all / nall : 0;
    int rc = 0;
    for (int l = 0; rc == 0 && l < ns; l++) {
        if (t->leaf_sib[l] != l) /* its group's action is its lowest leaf's */
            continue;
        double zc =
            s[l].ncross >= 3 ? (s[l].cross / s[l].ncross - mean) / (sigma / sqrt(s[l].ncross)) : 0;
        double zw =
            s[l].nwithin >= 3 ? (s[l].within / s[l].nwithin) / (sigma / sqrt(s[l].nwithin)) : 0;
        if (zc > bar || zw > bar || s[l].suspects >= 2)
            rc = tp__triage_iso_leaf_action(t, l);
    }
    free(s);
    return rc;
}

/* drop node v's entry from the named list: a switch or uplinks explain it */
static void withdraw(tp_triage *t, int v)
{
    size_t i;
    json_t *e;
    json_array_foreach(t->named, i, e)
    {
        const char *kind = json_string_value(json_object_get(e, "kind"));
        if (kind && strcmp(kind, "node") == 0 &&
            json_integer_value(json_object_get(e, "node")) == v) {
            json_array_remove(t->named, i);
            return;
        }
    }
}

/* a named link a named leaf explains: one end under a slow switch, or
 * its two ends on either side of slow uplinks, on any rail */
static bool link_explained(const tp_triage *t, int a, int b)
{
    for (int r = 0; r < t->nrails; r++) {
        int la = tp__triage_leaf_of(t, a, r), lb = tp__triage_leaf_of(t, b, r);
        uint8_t sa = t->leaf_state[la], sb = t->leaf_state[lb];
        if (sa == LEAF_SWITCH || sb == LEAF_SWITCH ||
            (la != lb && (sa == LEAF_UPLINK || sb == LEAF_UPLINK)))
            return true;
    }
    return false;
}

static void withdraw_links(tp_triage *t)
{
    for (size_t i = 0; i < json_array_size(t->named);) {
        json_t *e = json_array_get(t->named, i);
        const char *kind = json_string_value(json_object_get(e, "kind"));
        int a = (int)json_integer_value(json_object_get(e, "a")),
            b = (int)json_integer_value(json_object_get(e, "b"));
        if (!kind || strcmp(kind, "link") != 0 || !link_explained(t, a, b)) {
            i++;
            continue;
        }
        for (int k = 0; k < 2; k++) {
            struct tp__node *x = &t->node[k ? b : a];
            if (x->status == ST_LINK) {
                x->status = ST_PASS;
                x->ev_other = -1;
            }
        }
        json_array_remove(t->named, i);
    }
}

/* the slow pairs put to their leaves (iso_link.c): explained by a named
 * leaf, their ends pass (or take the leaf's status below); else they
 * stay suspect */
static void deferred_links(tp_triage *t)
{
    for (const struct tp__action *a = t->actions; a; a = a->next) {
        if (a->kind != TP__A_LINK || !a->deferred || !link_explained(t, a->a, a->b))
            continue;
        for (int k = 0; k < 2; k++)
            if (t->node[k ? a->b : a->a].status == ST_SUSPECT)
                t->node[k ? a->b : a->a].status = ST_PASS;
    }
}

void tp__triage_leaves_finish(tp_triage *t)
{
    if (t->leaves_finished) /* once: at the isolation's end, or a stop */
        return;
    t->leaves_finished = true;
    if (t->leaf_state) {
        withdraw_links(t);
        deferred_links(t);
    }
    for (int l = 0; t->leaf_state && l < t->nswitches; l++) {
        uint8_t st = t->leaf_state[l];
        if (st != LEAF_SWITCH && st != LEAF_UPLINK)
            continue;
        json_t *explained = json_array();
        for (int k = t->leaf_off[l]; k < t->leaf_off[l + 1]; k++) {
            int v = t->leaf_nodes[k];
            struct tp__node *x = &t->node[v];
            if (x->status == ST_SLOW && !x->link_errors) { /* a bad cable stays one */
                withdraw(t, v);
                json_array_append_new(explained, json_integer(v));
            }
            if (x->status == ST_PASS || x->status == ST_SUSPECT ||
                (x->status == ST_SLOW && !x->link_errors)) {
                x->status = st == LEAF_SWITCH ? ST_SWITCH : ST_UPLINK;
                x->ev_other = l;
            }
        }
        /* the component's own entry says which node names it explains */
        size_t i;
        json_t *e;
        json_array_foreach(t->named, i,
                           e) if (json_integer_value(json_object_get(e, "switch")) == l &&
                                  json_object_get(e, "leaf"))
            json_object_set(e, "explains", explained);
        json_decref(explained);
    }
}
