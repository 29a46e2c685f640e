/* The isolation's common steps (isolate_int.h): the actions' life (new,
 * given up, freed), who is free in a round and the known-good partners,
 * the tests an action puts in a round, and the naming of what was
 * confirmed. The rows (iso_<kind>.c) and isolate.c call these; nothing
 * here calls a row. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "isolate_int.h"

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
    for (int i = 0; i < 4; i++) /* no partner used yet (node 0 is one) */
        a->used[i] = -1;
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
    t->node[s].tried = true;
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
    if (probed > tp__triage_slow(t)) { /* measured alone by the probe already */
        l->res[0] = probed;
        l->step = 1;
    }
    return 0;
}

int tp__triage_confirm_link(tp_triage *t, int a, int b)
{
    return tp__triage_iso_link_action(t, a, b, 0);
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
    if (a->parent && --a->parent->children == 0)
        a->parent->done = true;
}

int tp__triage_iso_members_done(tp_triage *t, struct tp__action *m)
{
    m->done = true;
    if (m->named_any)
        return 0;
    /* none of them alone: a link of their ring */
    int v[6], e = 0;
    for (int i = 0; i < m->n && (m->n > 2 || i == 0); i++) {
        v[2 * e] = m->set[i];
        v[2 * e + 1] = m->set[(i + 1) % m->n];
        e++;
    }
    return tp__triage_iso_probe_action(t, v, e, false);
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
 * with everyone, and any partner does. */
int tp__triage_iso_partner(tp_triage *t, int s, const struct tp__action *a)
{
    bool any = false;
    int best = -1;
    double best_met = INFINITY;
    for (int pass = 0; pass < 2; pass++)
        for (int tries = 0; tries < (pass ? t->ngood : 64) && t->ngood > 0; tries++) {
            int g = pass ? t->good[tries]
                         : t->good[tp__triage_rand(&t->rng) % (uint64_t)t->ngood];
            bool usable = g != s && tp__triage_iso_alive(t, g) && t->node[g].status == ST_PASS;
            for (int i = 0; usable && a && i < 4; i++)
                usable = a->used[i] != g;
            any |= usable;
            if (!usable || !tp__triage_iso_is_free(t, g))
                continue;
            double met = met_in_screen(t, s, g);
            if (!pass && met == 0) {
                tp__triage_iso_take(t, g);
                return g;
            }
            if (pass && met < best_met) {
                best = g;
                best_met = met;
            }
        }
    if (best >= 0) {
        tp__triage_iso_take(t, best);
        return best;
    }
    return any ? -2 : -1;
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
    return group ? t->group_spread : t->pair_spread;
}

/* ---- naming ---- */

static void evidence(tp_triage *t, int v, double value, double median, double thr)
{
    t->node[v].ev_value = (float)value;
    t->node[v].ev_median = (float)median;
    t->node[v].ev_threshold = (float)thr;
    t->node[v].ev_stage = (uint8_t)t->cur.stage;
}

void tp__triage_name_node(tp_triage *t, int s, double value, double median, double thr,
                          const char *test)
{
    t->node[s].status = ST_SLOW;
    evidence(t, s, value, median, thr);
    char says[200];
    snprintf(says, sizeof says, "node %d: %.2fx the fleet's median in %s, alone with known-good "
             "partners (threshold %.2fx)", s, value / median, test, thr / median);
    json_array_append_new(t->named, json_pack("{s:s, s:i, s:s, s:f, s:f, s:f, s:i, s:s}", "kind",
                                              "node", "node", s, "test", test, "value", value,
                                              "median", median, "threshold", thr, "round",
                                              t->iso_rounds + 1, "says", says));
}

void tp__triage_name_link(tp_triage *t, int a, int b, double value, double median, double thr,
                          const char *test)
{
    for (int k = 0; k < 2; k++) {
        int v = k ? b : a;
        if (t->node[v].status != ST_SLOW)
            t->node[v].status = ST_LINK;
        t->node[v].ev_other = k ? a : b;
        evidence(t, v, value, median, thr);
    }
    char says[200];
    snprintf(says, sizeof says, "link %d-%d: %.2fx the fleet's median alone, both ends normal "
             "with other partners (threshold %.2fx)", a, b, value / median, thr / median);
    json_array_append_new(t->named, json_pack("{s:s, s:i, s:i, s:s, s:f, s:f, s:f, s:i, s:s}",
                                              "kind", "link", "a", a, "b", b, "test", test,
                                              "value", value, "median", median, "threshold", thr,
                                              "round", t->iso_rounds + 1, "says", says));
}
