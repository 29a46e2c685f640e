/* The isolation: what the screen found slow, measured again alone until it
 * is named or cleared (include/tp/triage.h). Each suspect is an action of
 * a kind, a row of the table below, one file each (iso_<kind>.c):
 *   node     a node suspect against known-good partners;
 *   link     a link suspect alone, then its two ends with others;
 *   bisect   a slow group split in halves, beside reference groups;
 *   members  the members of a group too small to split, one by one;
 *   probe    links as pairs (across a split, or of a small ring);
 *   leaf     a leaf switch's traffic across its uplinks, then within it.
 * A round takes every action whose nodes are free, older ones first and
 * side probes last, so disjoint suspects are isolated at once and each
 * node is in at most one test of a round; then reference groups of
 * known-good nodes, of each size a group test of the round has.
 * The rounds allowed after the screen: 3 (ceil(log2 n) + 5), the bound
 * for one fault three times over; what is left then stays suspect. */
#include <math.h>

#include "isolate_int.h"

static const struct tp__triage_iso_kind *const kinds[TP__A_KINDS] = {
    [TP__A_NODE] = &tp__triage_iso_node,       [TP__A_LINK] = &tp__triage_iso_link,
    [TP__A_BISECT] = &tp__triage_iso_bisect,   [TP__A_MEMBERS] = &tp__triage_iso_members,
    [TP__A_PROBE] = &tp__triage_iso_probe,     [TP__A_LEAF] = &tp__triage_iso_leaf,
};

/* a's children all settled: its kind's children_done */
static int children_done(tp_triage *t, struct tp__action *a)
{
    const struct tp__triage_iso_kind *k = kinds[a->kind];
    if (k->children_done)
        return k->children_done(t, a);
    a->done = true;
    return 0;
}

/* count tests (groups of size, or pairs) of known-good free nodes: the
 * references the round's own tests are judged against */
static void refs(tp_triage *t, int size, bool group, int count)
{
    int v[64];
    if (size > 64)
        return;
    for (int r = 0; r < count; r++) {
        int k = 0;
        for (int tries = 0; tries < 8 * size + 64 && k < size && t->ngood > 0; tries++) {
            int g = t->good[tp__triage_rand(&t->rng) % (uint64_t)t->ngood];
            if (tp__triage_iso_is_free(t, g) && t->node[g].status == ST_PASS) {
                tp__triage_iso_take(t, g);
                v[k++] = g;
            }
        }
        if (k < size) {
            tp__triage_iso_give_back(t, v, k);
            return;
        }
        tp__triage_iso_test_of(t, group, v, size, NULL, -1);
    }
}

static void give_up_all(tp_triage *t)
{
    for (struct tp__action *a = t->actions; a; a = a->next)
        if (!a->done)
            tp__triage_iso_unresolved(t, a);
}

bool tp__triage_iso_round(tp_triage *t)
{
    t->cur.ntests = 0;
    t->cur_nnodes = 0;
    bool left = false;
    for (struct tp__action *a = t->actions; a; a = a->next)
        left |= !a->done;
    if (!left)
        return false;
    if (t->iso_rounds >= 3 * tp__triage_iso_bound(t->n, &t->o)) {
        give_up_all(t);
        return false;
    }
    struct tp__triage_iso_sizes z = {0};
    enum tp_triage_stage stage = TP_TRIAGE_CONFIRM;
    /* the first ones (a leaf's: what it explains need not be measured),
     * then the rest, then the side probes */
    for (int pass = 0; pass < 3; pass++)
        for (struct tp__action *a = t->actions; a; a = a->next) {
            const struct tp__triage_iso_kind *k = kinds[a->kind];
            int when = a->first ? 0 : a->later ? 2 : 1;
            if (a->done || when != pass || !k->schedule)
                continue;
            int before = t->cur.ntests;
            k->schedule(t, a, &z);
            if (t->cur.ntests > before && k->stage < stage)
                stage = k->stage;
        }
    for (int i = 0; i < z.n; i++)
        refs(t, z.size[i], true, TP__ISO_REFS);
    /* pairs alone: known-good pairs beside them, so that a drift of the
     * whole fabric or another job's load in this round moves the
     * reference too */
    int pairs = 0, leaf = 0;
    for (int i = 0; i < t->cur.ntests; i++) {
        pairs += !t->cur.tests[i].group && t->cur_owner[i];
        leaf += t->cur_owner[i] && t->cur_owner[i]->kind == TP__A_LEAF;
    }
    /* a leaf's round is judged as a whole, its pairs' mean against the
     * one reference: four references a pair of it (their mean has 1 / k
     * of a pair's variance, common to all its pairs), so that the
     * reference's noise is 10-20 % of the round's variance, not the
     * 40-60 % of one a pair as a median (a leaf of 32 nodes behind one
     * slow uplink of 8 at 16,384 nodes: its test ran out of rounds in 19
     * runs of 100) */
    int want = TP__ISO_LEAF_REFS * leaf;
    if (pairs)
        refs(t, 2, false, want > TP__ISO_PAIR_REFS
                              ? (want < TP__ISO_PAIR_REFS_MAX ? want : TP__ISO_PAIR_REFS_MAX)
                              : TP__ISO_PAIR_REFS);
    t->cur.stage = stage;
    if (t->cur.ntests == 0) { /* every action is waiting on nothing: none can go on */
        give_up_all(t);
        return false;
    }
    return true;
}

/* the round's reference pairs: their median (3 or more of them; else the
 * screen's median) and the spread a ratio to it has */
static void pair_reference(tp_triage *t, const double *figure)
{
    float v[TP__ISO_PAIR_REFS_MAX];
    int k = 0;
    for (int i = 0; i < t->cur.ntests && k < TP__ISO_PAIR_REFS_MAX; i++)
        if (!t->cur_owner[i] && !t->cur.tests[i].group && !isnan(figure[i]))
            v[k++] = (float)figure[i];
    t->round_ref = k >= 3 ? tp__triage_median(v, k) : t->pair_median;
    /* a leaf's round is a mean of its pairs (iso_leaf.c): the tail a
     * shared fabric gives every pair (spikes, other leaves' congestion)
     * lifts a mean and not a median, so it is judged against the
     * references' mean */
    double sum = 0;
    for (int i = 0; i < k; i++)
        sum += v[i] / t->round_ref - 1;
    t->round_ref_excess = k >= 3 ? sum / k : 0;
    /* a ratio to the median of k has the spread of one figure and that of
     * the median (pi / 2k of a figure's variance) */
    t->round_spread = t->pair_spread * (k >= 3 ? sqrt(1 + M_PI / (2 * k)) : 1);
    t->round_nref = k >= 3 ? k : 0;
}

int tp__triage_iso_record(tp_triage *t, const double *figure)
{
    int rc = 0;
    pair_reference(t, figure);
    for (int i = 0; rc == 0 && i < t->cur.ntests; i++)
        if (!t->cur_owner[i] && !isnan(figure[i]) && t->cur.tests[i].group)
            rc = tp__triage_add_ref(t, t->cur.tests[i].n,
                                    tp__triage_norm(figure[i], t->cur.tests[i].n));
    for (int i = 0; rc == 0 && i < t->cur.ntests; i++) {
        struct tp__action *a = t->cur_owner[i];
        const struct tp_triage_test *x = &t->cur.tests[i];
        if (!a || a->done || !kinds[a->kind]->result)
            continue;
        double f = figure[i], ref = x->group ? tp__triage_ref_median(t, x->n) : 0;
        double r = isnan(f)    ? NAN
                   : x->group ? (ref > 0 ? tp__triage_norm(f, x->n) / ref : NAN)
                              : f / t->round_ref;
        rc = kinds[a->kind]->result(t, a, t->cur_step[i], r);
        /* settled: its parent told, once; the last child, its kind's end */
        if (rc == 0 && a->done && a->parent && !a->told) {
            a->told = true;
            if (--a->parent->children == 0)
                rc = children_done(t, a->parent);
        }
    }
    return rc;
}
