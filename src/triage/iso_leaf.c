/* An isolation row (isolate_int.h): a leaf switch suspect (a topology's,
 * leaves.c). First its traffic across its uplinks: each round every free
 * node under it with a known-good partner under another leaf, at once,
 * until a sequential test of the rounds' mean ratios decides (the effect
 * sought: min_effect times the share of pairs one of whose two flows
 * crosses one of its uplinks, as the fabric spreads flows over them). Slow
 * across: then within it, its free nodes in pairs among themselves: slow
 * there too, the leaf switch is named; sound, its uplinks. Sound across:
 * cleared. Each round is judged whole, three rounds at least each way
 * before anything is named. */
#include <math.h>

#include "isolate_int.h"
#include "tp/topology.h"

#define LEAF_PAIRS 64 /* pairs of a leaf action in one round, at most */

/* a free known-good node under another leaf than l, taken; -1: none */
static int outside(tp_triage *t, int l)
{
    for (int tries = 0; tries < 64 && t->ngood > 0; tries++) {
        int g = t->good[tp__triage_rand(&t->rng) % (uint64_t)t->ngood];
        if (t->leaf_of[g] != l && t->node[g].status == ST_PASS && tp__triage_iso_is_free(t, g)) {
            tp__triage_iso_take(t, g);
            return g;
        }
    }
    return -1;
}

static bool usable(const tp_triage *t, int v)
{
    return tp__triage_iso_is_free(t, v) && t->node[v].status != ST_ERROR;
}

static void schedule(tp_triage *t, struct tp__action *a, struct tp__triage_iso_sizes *z)
{
    (void)z;
    int l = a->a, pairs = 0, held = -1;
    bool within = a->alone_done;
    for (int k = t->leaf_off[l]; k < t->leaf_off[l + 1] && pairs < LEAF_PAIRS; k++) {
        int v = t->leaf_nodes[k];
        if (!usable(t, v))
            continue;
        int w[2] = {v, -1};
        if (within) { /* its nodes two by two */
            if (held < 0) {
                held = v;
                continue;
            }
            w[0] = held;
            w[1] = v;
            held = -1;
        } else if ((w[1] = outside(t, l)) < 0) {
            break;
        }
        tp__triage_iso_take(t, w[0]);
        tp__triage_iso_take(t, w[1]);
        tp__triage_iso_test_of(t, false, w, 2, a, within);
        pairs++;
    }
    a->rounds[within] += pairs > 0;
    a->got = pairs; /* results to come: the round is judged whole */
}

/* the leaf's own node count less the lost */
static int alive(const tp_triage *t, int l)
{
    int k = 0;
    for (int i = t->leaf_off[l]; i < t->leaf_off[l + 1]; i++)
        k += tp__triage_iso_alive(t, t->leaf_nodes[i]);
    return k;
}

static void settle(tp_triage *t, struct tp__action *a, enum tp__leaf_state st)
{
    a->done = true;
    t->leaf_state[a->a] = (uint8_t)st;
    if (st == LEAF_SWITCH || st == LEAF_UPLINK) {
        tp__triage_name_leaf(t, a->a, st, &a->sprt, a->rounds[1] ? &a->sprt2 : NULL);
        tp__triage_iso_explained(t, a->a, st == LEAF_UPLINK);
    }
}

/* the round's mean ratio as one measurement: its spread that of a mean of
 * its pairs and of the reference they were divided by (a median of
 * round_nref pairs, or the screen's) */
static void add_round(tp_triage *t, struct tp__action *a, struct tp__sprt *x)
{
    double n = a->res[1], sd = t->pair_spread;
    if (n < 1)
        return;
    /* a pair's spread: the fleet's, or the round's own when more (a slow
     * uplink that some of its pairs' flows cross and some not spreads
     * them wider than noise does) */
    double mean = a->res[0] / n, own = n > 1 ? (a->res[2] - n * mean * mean) / (n - 1) : 0;
    /* that spread grows with the slowdown itself (the crossing pairs'
     * ratios spread by how slow the uplink is): taken at the effect
     * sought, a round far slower than it is not made to look noisy (a
     * leaf of two nodes behind an uplink at a hundredth of its rate:
     * pairs 97x and 60x the median, a spread of 26 that no rate of
     * rounds could cross) */
    double at = 1 + x->effect;
    if (mean > at)
        own *= (at / mean) * (at / mean);
    double pv = fmax(sd * sd, own);
    double var = pv / n + sd * sd * (t->round_nref ? M_PI / (2 * t->round_nref) : 0);
    tp__triage_sprt_add(t, x, mean, sqrt(var));
    a->res[0] = a->res[1] = a->res[2] = 0;
}

static int result(tp_triage *t, struct tp__action *a, int within, double r)
{
    struct tp__sprt *x = within ? &a->sprt2 : &a->sprt;
    if (!isnan(r)) { /* a pair lost: the others of the round still count */
        a->res[0] += r;
        a->res[1]++;
        a->res[2] += r * r;
    }
    if (--a->got > 0)
        return 0;
    if (!within) {
        /* one uplink of its up slow by the least worth naming: the share
         * of pairs one of whose two flows crosses it, that much slower */
        const struct tp_topology *topo = t->o.topo;
        int up = topo->sw[a->a].nup > 0 ? topo->sw[a->a].nup : 1;
        double share = 1 - (1 - 1.0 / up) * (1 - 1.0 / up);
        a->sprt.effect = a->sprt.floor = (float)(t->o.min_effect * share);
    } else {
        a->sprt2.effect = a->sprt2.floor = (float)t->o.min_effect;
    }
    add_round(t, a, x);
    if (!within) {
        switch (tp__triage_sprt_state(t, &a->sprt)) {
        case TP__SPRT_SOUND: settle(t, a, LEAF_CLEARED); break;
        case TP__SPRT_UNDECIDED: settle(t, a, LEAF_UNSETTLED); break;
        case TP__SPRT_SLOW: /* within it next; a leaf of one node: its uplinks */
            a->alone_done = true;
            if (alive(t, a->a) < 2)
                settle(t, a, LEAF_UPLINK);
            break;
        case TP__SPRT_MORE: break;
        }
        return 0;
    }
    switch (tp__triage_sprt_state(t, &a->sprt2)) {
    case TP__SPRT_SLOW: settle(t, a, LEAF_SWITCH); break;
    case TP__SPRT_SOUND:
    case TP__SPRT_UNDECIDED: /* slow across, not within: the uplinks, at least */
        settle(t, a, LEAF_UPLINK);
        break;
    case TP__SPRT_MORE: break;
    }
    return 0;
}

const struct tp__triage_iso_kind tp__triage_iso_leaf = {TP_TRIAGE_CONFIRM, schedule, result, NULL};
