/* The isolation's common steps (isolate_int.h): the actions' life (new,
 * given up, freed), who is free in a round and the known-good partners,
 * the tests an action puts in a round, and the naming of what was
 * confirmed. The rows (iso_<kind>.c) and isolate.c call these; nothing
 * here calls a row. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "isolate_int.h"
#include "tp/topology.h"

bool tp__triage_iso_alive(const tp_triage *t, int v)
{
    return t->node[v].status != ST_LOST && t->node[v].status != ST_MISSING;
}

bool tp__triage_iso_is_free(const tp_triage *t, int v)
{
    return tp__triage_iso_alive(t, v) && t->node[v].busy != t->round_no;
}

void tp__triage_iso_take(tp_triage *t, int v)
{
    t->node[v].busy = t->round_no;
}

void tp__triage_iso_give_back(tp_triage *t, const int *v, int n)
{
    for (int i = 0; i < n; i++)
        if (v[i] >= 0)
            t->node[v[i]].busy = -1;
}

/* ---- the actions ---- */

static struct tp__action *new_action(tp_triage *t, enum tp__akind kind)
{
    struct tp__action *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->kind = kind;
    t->nactions++;
    /* appended: the older suspects are served first */
    struct tp__action **p = &t->actions;
    while (*p)
        p = &(*p)->next;
    *p = a;
    return a;
}

void tp__triage_free_actions(tp_triage *t)
{
    while (t->actions) {
        struct tp__action *a = t->actions;
        t->actions = a->next;
        free(a->set);
        free(a->edge_done);
        free(a);
    }
}

int tp__triage_iso_node_action(tp_triage *t, int s, bool group_mode, struct tp__action *parent)
{
    struct tp__action *a = new_action(t, TP__A_NODE);
    if (!a)
        return TP_ENOMEM;
    a->a = s;
    a->ends = 1;
    a->group_mode = group_mode;
    a->parent = parent;
    if (parent)
        parent->children++;
    t->node[s].in_action = true;
    if (t->node[s].status == ST_PASS)
        t->node[s].status = ST_SUSPECT;
    return 0;
}

int tp__triage_confirm_node(tp_triage *t, int s, bool group_mode)
{
    return tp__triage_iso_node_action(t, s, group_mode, NULL);
}

int tp__triage_iso_link_action(tp_triage *t, int a, int b, double probed)
{
    for (struct tp__action *x = t->actions; x; x = x->next) /* once per link */
        if (x->ends == 2 && ((x->a == a && x->b == b) || (x->a == b && x->b == a)))
            return 0;
    struct tp__action *l = new_action(t, TP__A_LINK);
    if (!l)
        return TP_ENOMEM;
    l->a = a;
    l->b = b;
    l->ends = 2;
    if (probed > 0) /* measured alone by the probe already */
        tp__triage_sprt_add(t, &l->sprt, probed, tp__triage_iso_spread(t, false));
    return 0;
}

int tp__triage_confirm_link(tp_triage *t, int a, int b)
{
    return tp__triage_iso_link_action(t, a, b, 0);
}

int tp__triage_iso_leaf_action(tp_triage *t, int l)
{
    l = t->leaf_sib[l]; /* a rail-optimised group's leaves: one action */
    if (t->leaf_state[l] != LEAF_NONE)
        return 0;
    struct tp__action *a = new_action(t, TP__A_LEAF);
    if (!a)
        return TP_ENOMEM;
    a->a = l;
    a->first = true;
    t->leaf_state[l] = LEAF_ACTION;
    int sw[TP_TOPOLOGY_MAX_RAILS];
    a->rails = tp__triage_leaf_rails(t, l, sw); /* the rails it may be on */
    for (int r = 0; r < t->nrails; r++)
        if (sw[r] >= 0)
            t->leaf_state[sw[r]] = LEAF_ACTION;
    return 0;
}

void tp__triage_iso_explained(tp_triage *t, int l, bool uplinks)
{
    for (struct tp__action *a = t->actions; a; a = a->next) {
        if (a->done || (a->kind != TP__A_NODE && a->kind != TP__A_LINK))
            continue;
        bool ina = tp__triage_under(t, a->a, l), inb = a->ends == 2 && tp__triage_under(t, a->b, l);
        bool explained = a->ends == 1 ? ina : uplinks ? ina != inb : ina || inb;
        if (!explained)
            continue;
        a->done = a->cancelled = true;
        for (int k = 0; k < a->ends; k++) {
            int v = k ? a->b : a->a;
            t->node[v].in_action = false;
            if (t->node[v].status == ST_SUSPECT)
                t->node[v].status = ST_PASS;
        }
        if (a->parent && !a->told && --a->parent->children == 0)
            a->parent->done = true; /* a link's end: the link is settled with it */
        a->told = true;
    }
}

int tp__triage_bisect(tp_triage *t, const int *set, int n)
{
    /* four or more: halves; two or three: each member alone */
    struct tp__action *a = new_action(t, n >= 4 ? TP__A_BISECT : TP__A_MEMBERS);
    if (!a || !(a->set = malloc(sizeof *a->set * (size_t)n)))
        return TP_ENOMEM;
    memcpy(a->set, set, sizeof *set * (size_t)n);
    a->n = n;
    a->on_set = true;
    for (int i = 0; i < n; i++)
        t->node[set[i]].in_action = true;
    for (int i = 0; n < 4 && i < n; i++)
        if (tp__triage_iso_node_action(t, set[i], true, a))
            return TP_ENOMEM;
    return 0;
}

int tp__triage_iso_probe_action(tp_triage *t, const int *v, int edges, bool later)
{
    struct tp__action *a = new_action(t, TP__A_PROBE);
    if (!a || !(a->set = malloc(sizeof *a->set * (size_t)(2 * edges))) ||
        !(a->edge_done = calloc((size_t)edges, sizeof *a->edge_done)))
        return TP_ENOMEM;
    memcpy(a->set, v, sizeof *v * (size_t)(2 * edges));
    a->n = edges;
    a->later = later;
    return 0;
}

void tp__triage_iso_unresolved(tp_triage *t, struct tp__action *a)
{
    a->done = true;
    int v[2] = {a->a, a->b};
    for (int k = 0; k < a->ends; k++)
        if (t->node[v[k]].status == ST_PASS || t->node[v[k]].status == ST_SUSPECT)
            t->node[v[k]].status = ST_SUSPECT;
    for (int i = 0; a->on_set && i < a->n; i++)
        if (t->node[a->set[i]].status == ST_PASS)
            t->node[a->set[i]].status = ST_SUSPECT;
    if (a->ends == 1)
        t->node[a->a].in_action = false;
    if (a->parent && !a->told && --a->parent->children == 0) {
        a->told = true;
        if (a->parent->needs_all)
            tp__triage_iso_unresolved(t, a->parent);
        else
            a->parent->done = true;
    }
    a->told = true;
}

/* ---- scheduling ---- */

/* The worst of s's screen pairs with g, against the pair median: 0 when
 * they never met. */
static double met_in_screen(const tp_triage *t, int s, int g)
{
    double worst = 0;
    for (int k = t->adj_off[s]; k < t->adj_off[s + 1]; k++) {
        const struct tp__pair *p = &t->pairs[t->adj[k]];
        if ((p->a == g || p->b == g) && t->pair_median > 0)
            worst = fmax(worst, p->fig / t->pair_median);
    }
    return worst;
}

/* A known-good partner for s: one it never met, drawn; else, of those it
 * met, the one whose screen pairs with s were the least slow. A pair that
 * was slow may be the link between them, which would make s look slow
 * again and blame it for the link; a node that is slow itself was slow
 * with everyone, and any partner does. One a had already only when no
 * other is left (reuse); *any: a usable one exists, free or not. */
static int pick(tp_triage *t, int s, const struct tp__action *a, bool reuse, bool *any)
{
    int best = -1;
    double best_met = INFINITY;
    *any = false;
    for (int pass = 0; pass < 2; pass++)
        for (int tries = 0; tries < (pass ? t->ngood : 64) && t->ngood > 0; tries++) {
            int g = pass ? t->good[tries]
                         : t->good[tp__triage_rand(&t->rng) % (uint64_t)t->ngood];
            bool usable = g != s && tp__triage_iso_alive(t, g) && t->node[g].status == ST_PASS;
            for (int i = 0; usable && a && !reuse && i < a->nused; i++)
                usable = a->used[i] != g;
            *any |= usable;
            if (!usable || !tp__triage_iso_is_free(t, g))
                continue;
            double met = met_in_screen(t, s, g);
            if (!pass && met == 0)
                return g;
            if (pass && met < best_met) {
                best = g;
                best_met = met;
            }
        }
    return best;
}

int tp__triage_iso_partner(tp_triage *t, int s, struct tp__action *a)
{
    bool any = false;
    for (int reuse = 0; reuse < 2; reuse++) {
        int g = pick(t, s, a, reuse, &any);
        if (g >= 0) {
            tp__triage_iso_take(t, g);
            if (a && a->nused < (int)(sizeof a->used / sizeof *a->used))
                a->used[a->nused++] = g;
            return g;
        }
        if (any) /* one is to be had, in another round */
            return -2;
    }
    return -1;
}

void tp__triage_iso_test_of(tp_triage *t, bool group, const int *v, int n, struct tp__action *a,
                     int step)
{
    int *p = tp__triage_cur_test(t, group, n);
    memcpy(p, v, sizeof *v * (size_t)n);
    t->cur_owner[t->cur.ntests - 1] = a;
    t->cur_step[t->cur.ntests - 1] = step;
}

void tp__triage_iso_want_refs(struct tp__triage_iso_sizes *z, int size)
{
    for (int i = 0; i < z->n; i++)
        if (z->size[i] == size)
            return;
    if (z->n < 16)
        z->size[z->n++] = size;
}

double tp__triage_iso_spread(const tp_triage *t, bool group)
{
    return group ? t->group_spread : t->round_spread > 0 ? t->round_spread : t->pair_spread;
}

/* ---- naming ---- */

/* the evidence of v: the value, the reference, the threshold, and the
 * sequential test's confidence (shared by both ends of a link) */
static void evidence(tp_triage *t, int v, double value, double median, double thr,
                     json_t *conf)
{
    t->node[v].ev_value = (float)value;
    t->node[v].ev_median = (float)median;
    t->node[v].ev_threshold = (float)thr;
    t->node[v].ev_stage = (uint8_t)t->cur.stage;
    json_decref(t->node[v].ev_conf);
    t->node[v].ev_conf = json_incref(conf);
}

void tp__triage_name_node(tp_triage *t, int s, double ref, const struct tp__sprt *x,
                          const char *test)
{
    if (t->node[s].status == ST_SLOW) /* named by another action already */
        return;
    double value = tp__triage_sprt_mean(x) * ref, thr = tp__triage_sprt_bar(t, x) * ref;
    json_t *conf = tp__triage_sprt_json(t, x);
    t->node[s].status = ST_SLOW;
    evidence(t, s, value, ref, thr, conf);
    char says[240];
    snprintf(says, sizeof says, "node %d: %.2fx the fleet's median in %s, alone with %d known-good "
             "partners (threshold %.2fx; a false name at most %.0e)", s, value / ref, test, x->n,
             thr / ref, t->alpha_each);
    json_array_append_new(t->named, json_pack("{s:s, s:i, s:s, s:f, s:f, s:f, s:i, s:o, s:s}",
                                              "kind", "node", "node", s, "test", test, "value",
                                              value, "median", ref, "threshold", thr, "round",
                                              t->iso_rounds + 1, "confidence", conf, "says",
                                              says));
}

void tp__triage_name_link(tp_triage *t, int a, int b, double ref, const struct tp__sprt *x,
                          const char *test)
{
    double value = tp__triage_sprt_mean(x) * ref, thr = tp__triage_sprt_bar(t, x) * ref;
    json_t *conf = tp__triage_sprt_json(t, x);
    for (int k = 0; k < 2; k++) {
        int v = k ? b : a;
        if (t->node[v].status != ST_SLOW) {
            t->node[v].status = ST_LINK;
            evidence(t, v, value, ref, thr, conf);
        }
        t->node[v].ev_other = k ? a : b;
    }
    char says[240];
    snprintf(says, sizeof says, "link %d-%d: %.2fx the fleet's median alone in %d measurements, "
             "both ends normal with other partners (threshold %.2fx; a false name at most %.0e)",
             a, b, value / ref, x->n, thr / ref, t->alpha_each);
    json_array_append_new(t->named, json_pack("{s:s, s:i, s:i, s:s, s:f, s:f, s:f, s:i, s:o, s:s}",
                                              "kind", "link", "a", a, "b", b, "test", test,
                                              "value", value, "median", ref, "threshold", thr,
                                              "round", t->iso_rounds + 1, "confidence", conf,
                                              "says", says));
}

void tp__triage_name_leaf(tp_triage *t, int l, enum tp__leaf_state st, const struct tp__sprt *across,
                          const struct tp__sprt *within, const struct tp__rail_found *rail)
{
    char buf[TP_TOPOLOGY_NAME_MAX + 16], says[600], where[200] = "";
    const struct tp_topology *topo = t->o.topo;
    /* a file's own name, else one made up in buf (a generated fabric) */
    const char *name = tp_topology_switch_name(topo, l, buf, sizeof buf);
    double value = tp__triage_sprt_mean(across), thr = tp__triage_sprt_bar(t, across);
    double in = within ? tp__triage_sprt_mean(within) : 0;
    int up = topo->sw[l].nup;
    /* which rail: found by tests pinned to it, or not told apart */
    if (rail && rail->rail >= 0)
        snprintf(where, sizeof where, " on rail %d (its group's %d rails halved down to it, "
                 "the last half's pairs %.2fx the fleet's median in %d rounds)", rail->rail,
                 t->nrails, tp__triage_sprt_mean(&rail->test), rail->test.n);
    else if (rail && rail->rails) {
        int k = snprintf(where, sizeof where, " or another rail's leaf over its nodes (rails");
        for (int r = 0; r < t->nrails && k > 0 && (size_t)k < sizeof where - 24; r++)
            if (rail->rails >> r & 1)
                k += snprintf(where + k, sizeof where - (size_t)k, " %d", r);
        snprintf(where + k, sizeof where - (size_t)k, ": %s)", rail->why);
    }
    if (st == LEAF_SWITCH)
        snprintf(says, sizeof says, "leaf switch %s%s: its pairs %.2fx the fleet's median within it "
                 "and %.2fx across its uplinks, alone (%d and %d rounds of its nodes at once): "
                 "service the switch, not the nodes behind it", name, where, in, value,
                 within ? within->n : 0, across->n);
    else {
        char inside[64] = ", no pair within it to compare";
        if (within)
            snprintf(inside, sizeof inside, ", %.2fx within it", in);
        snprintf(says, sizeof says, "the uplinks of %s%s: its pairs across them %.2fx the "
                 "fleet's median alone, %d rounds of its nodes at once (threshold %.2fx: one of its %d uplinks "
                 "slow by %.0f %% or more)%s: service its uplinks, not the nodes behind it",
                 name, where, value, across->n, thr, up > 0 ? up : 1, 100 * t->o.min_effect, inside);
    }
    json_t *e = json_pack("{s:s, s:s, s:i, s:i, s:s, s:f, s:f, s:f, s:i, s:o, s:o, s:s}", "kind",
                          st == LEAF_SWITCH ? "switch" : "uplink", "leaf", name, "switch", l,
                          "uplinks", up, "test", "pairs", "value", value * t->pair_median,
                          "median", t->pair_median, "threshold", thr * t->pair_median, "round",
                          t->iso_rounds + 1, "confidence", tp__triage_sprt_json(t, across),
                          "within", within ? tp__triage_sprt_json(t, within) : json_null(),
                          "says", says);
    /* its rail: the switch's own, the one found, or (its group's named,
     * the rail not told apart) null with the rails it may be on */
    int r = rail && rail->rail >= 0 ? rail->rail : topo->sw[l].rail;
    bool group = rail && rail->rail < 0 && rail->rails;
    json_object_set_new(e, "rail", r >= 0 && !group ? json_integer(r) : json_null());
    json_object_set_new(e, "rail_test", rail && rail->rail >= 0
                                            ? tp__triage_sprt_json(t, &rail->test)
                                            : json_null());
    if (group) {
        json_t *rs = json_array();
        for (int k = 0; k < t->nrails; k++)
            if (rail->rails >> k & 1)
                json_array_append_new(rs, json_integer(k));
        json_object_set_new(e, "rails", rs);
        t->leaf_group[l] = true;
    }
    json_array_append_new(t->named, e);
    /* the evidence its nodes carry (leaves.c gives them its status) */
    for (int k = t->leaf_off[l]; k < t->leaf_off[l + 1]; k++) {
        struct tp__node *x = &t->node[t->leaf_nodes[k]];
        if (x->status == ST_LINK || x->status == ST_LOST || x->status == ST_MISSING)
            continue;
        x->ev_value = (float)(value * t->pair_median);
        x->ev_median = (float)t->pair_median;
        x->ev_threshold = (float)(thr * t->pair_median);
        x->ev_stage = (uint8_t)t->cur.stage;
        json_decref(x->ev_conf);
        x->ev_conf = json_incref(json_object_get(e, "confidence"));
    }
}
