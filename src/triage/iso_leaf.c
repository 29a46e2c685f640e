/* An isolation row (isolate_int.h): a leaf switch suspect (a topology's,
 * leaves.c). First its traffic across its uplinks: each round every free
 * node under it with a known-good partner under another leaf, at once,
 * until a sequential test of the rounds' mean ratios decides (the effect
 * sought: min_effect times the share of pairs one of whose two flows
 * crosses one of its uplinks, as the fabric spreads flows over them), in
 * at most twice a node's rounds, 16 at most (tp__triage_leaf_repeats: one
 * uplink of 8 slow moves its leaf's mean by a quarter of its slowdown,
 * which 10 rounds of 32 pairs left unsettled in 4 runs of 100 at 16,384
 * nodes, 8 % noise, 15 % slow). Slow across: then within it, its free
 * nodes in pairs among themselves: slow there too, the leaf switch is
 * named; sound, its uplinks. Sound across: cleared. Each round is judged
 * whole, three rounds at least each way before anything is named.
 *
 * On a rail-optimised topology the action is a group's (its leaves, one a
 * rail, over the same nodes: every pair above crosses them all). Once
 * its switch or uplinks are found slow, and where the driver can pin a
 * test to rails (tp_triage_opts.pin_rails), the rail search: each round
 * the same pairs (within it for a switch, across for uplinks), half of
 * them on one half of the rails still suspect, half on the other, a
 * sequential test a half; the half found slow is halved again until one
 * rail is left, log2 of the rails' steps, each in as many rounds as the
 * test across may take. The fault was named by then at the run's bound; a
 * step only picks the half, at 1 % of a wrong one. Neither half slow (or
 * no verdict within the rounds allowed): named for the group, the rail
 * not told apart. */
#include <math.h>
#include <string.h>

#include "isolate_int.h"
#include "tp/topology.h"

#define LEAF_PAIRS 64 /* pairs of a leaf action in one round, at most */
#define RAIL_ALPHA 0.01f /* a rail search's step: the wrong half of the rails */

/* a free known-good node under another leaf than l, taken; -1: none */
static int outside(tp_triage *t, int l)
{
    for (int tries = 0; tries < 64 && t->ngood > 0; tries++) {
        int g = t->good[tp__triage_rand(&t->rng) % (uint64_t)t->ngood];
        if (!tp__triage_under(t, g, l) && t->node[g].status == ST_PASS &&
            tp__triage_iso_is_free(t, g)) {
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

/* the rails of mask, a bit each, split in two: the lower half of them
 * (rounded up), and the rest */
static void halves(uint64_t mask, uint64_t h[2])
{
    int n = 0, k = 0;
    for (uint64_t m = mask; m; m &= m - 1)
        n++;
    h[0] = h[1] = 0;
    for (int r = 0; r < 64; r++)
        if (mask >> r & 1)
            h[k++ < (n + 1) / 2 ? 0 : 1] |= (uint64_t)1 << r;
}

static int bits(uint64_t m)
{
    int n = 0;
    for (; m; m &= m - 1)
        n++;
    return n;
}

static void schedule(tp_triage *t, struct tp__action *a, struct tp__triage_iso_sizes *z)
{
    (void)z;
    int l = a->a, pairs = 0, held = -1;
    bool search = a->found != 0; /* the rail search: the pairs that found it */
    bool within = search ? a->found == LEAF_SWITCH : a->alone_done;
    uint64_t h[2];
    halves(a->rails, h);
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
        tp__triage_iso_test_of(t, false, w, 2, a, search ? 2 + pairs % 2 : within);
        if (search) /* pinned to a half of the rails, alternately */
            t->cur.tests[t->cur.ntests - 1].rails = h[pairs % 2];
        pairs++;
    }
    if (!search)
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

/* the action over: st for the switch named (its group's lowest leaf when
 * the rail was not told apart, rail NULL on a topology of one rail), the
 * group's other leaves cleared once one is named */
static void settle(tp_triage *t, struct tp__action *a, enum tp__leaf_state st,
                   const struct tp__rail_found *rail)
{
    a->done = true;
    bool named = st == LEAF_SWITCH || st == LEAF_UPLINK;
    int sw[TP_TOPOLOGY_MAX_RAILS], l = a->a;
    tp__triage_leaf_rails(t, a->a, sw);
    if (rail && rail->rail >= 0)
        l = sw[rail->rail];
    for (int r = 0; r < t->nrails; r++)
        if (sw[r] >= 0)
            t->leaf_state[sw[r]] = (uint8_t)(named ? LEAF_CLEARED : st);
    t->leaf_state[a->a] = (uint8_t)(named ? LEAF_CLEARED : st);
    t->leaf_state[l] = (uint8_t)st;
    if (named) {
        tp__triage_name_leaf(t, l, st, &a->sprt, a->rounds[1] ? &a->sprt2 : NULL, rail);
        tp__triage_iso_explained(t, l, st == LEAF_UPLINK);
    }
}

/* the group's rail not told apart: named for the group */
static void settle_group(tp_triage *t, struct tp__action *a, const char *why)
{
    struct tp__rail_found f = {.rail = -1, .rails = a->rails, .why = why};
    settle(t, a, (enum tp__leaf_state)a->found, &f);
}

/* switch or uplinks found: its rail searched for, where the driver pins
 * tests to rails, the group has more than one and the pairs can be
 * split between two halves of them; else named */
static void found(tp_triage *t, struct tp__action *a, enum tp__leaf_state st)
{
    a->found = (uint8_t)st;
    if (bits(a->rails) < 2) { /* one rail, or a leaf of every rail */
        settle(t, a, st, NULL);
        return;
    }
    if (!t->o.pin_rails) {
        settle_group(t, a, "the driver cannot pin a test to a rail");
        return;
    }
    if (alive(t, a->a) < (st == LEAF_SWITCH ? 4 : 2))
        settle_group(t, a, "too few nodes to test two halves of its rails");
}

/* the share of a leaf's pairs across it one of whose two flows crosses
 * one given uplink of its up, as the fabric spreads flows over them */
static double share_across(const tp_triage *t, int l)
{
    int up = t->o.topo->sw[l].nup > 0 ? t->o.topo->sw[l].nup : 1;
    return 1 - (1 - 1.0 / up) * (1 - 1.0 / up);
}

/* the round's mean ratio as one measurement: its spread that of a mean of
 * its pairs and of the reference they are judged against (the mean of
 * round_nref pairs, or the screen's median) */
static void add_round(tp_triage *t, double res[4], struct tp__sprt *x)
{
    double n = res[1], sd = t->pair_spread;
    if (n < 1)
        return;
    /* a pair's spread: the fleet's, or the round's own when more (a slow
     * uplink that some of its pairs' flows cross and some not spreads
     * them wider than noise does) */
    double mean = res[0] / n, own = n > 1 ? (res[2] - n * mean * mean) / (n - 1) : 0;
    /* when every pair of the round is slow beyond the effect sought (the
     * whole leaf behind its uplinks), that spread grows with the slowdown
     * itself: taken at the effect, a round far slower than it is not made
     * to look noisy (a leaf of two nodes behind an uplink at a hundredth
     * of its rate: pairs 97x and 60x the median, a spread of 26 that no
     * rate of rounds could cross). A round with a pair not slow (an
     * uplink of several that some flows miss, a spike in one pair, one
     * node's cable) keeps its spread. */
    double at = 1 + x->effect;
    if (mean > at && res[3] > at)
        own *= (at / mean) * (at / mean);
    double pv = fmax(sd * sd, own);
    double var = pv / n + sd * sd * (t->round_nref ? 1.0 / t->round_nref : 0);
    tp__triage_sprt_add(t, x, mean, sqrt(var));
    res[0] = res[1] = res[2] = res[3] = 0;
}

/* a round of the rail search judged: a half slow is halved again (down
 * to one rail: named on it); neither slow: the group's */
static void search_round(tp_triage *t, struct tp__action *a)
{
    double eff = t->o.min_effect * (a->found == LEAF_SWITCH ? 1 : share_across(t, a->a));
    enum tp__sprt_state st[2];
    for (int k = 0; k < 2; k++) {
        a->half[k].effect = a->half[k].floor = (float)eff;
        /* the fault is named already (its test's alpha spent): this picks
         * its rail, a wrong half at most once in RAIL_ALPHA^-1 */
        a->half[k].alpha = RAIL_ALPHA;
        a->half[k].repeats = tp__triage_leaf_repeats(&t->o);
        add_round(t, a->hres[k], &a->half[k]);
        st[k] = a->half[k].n ? tp__triage_sprt_state(t, &a->half[k]) : TP__SPRT_MORE;
    }
    if (st[0] == TP__SPRT_SLOW || st[1] == TP__SPRT_SLOW) {
        /* both: two of its rails slow; the worse one is searched */
        int k = st[0] == TP__SPRT_SLOW && st[1] == TP__SPRT_SLOW
                    ? tp__triage_sprt_mean(&a->half[1]) > tp__triage_sprt_mean(&a->half[0])
                    : st[1] == TP__SPRT_SLOW;
        uint64_t h[2];
        halves(a->rails, h);
        a->rails = h[k];
        a->on_rail = a->half[k];
        memset(a->half, 0, sizeof a->half);
        if (bits(a->rails) == 1) {
            struct tp__rail_found f = {.rail = 0, .test = a->on_rail, .rails = a->rails};
            while (!(a->rails >> f.rail & 1))
                f.rail++;
            settle(t, a, (enum tp__leaf_state)a->found, &f);
        }
        return;
    }
    if (st[0] != TP__SPRT_MORE && st[1] != TP__SPRT_MORE)
        settle_group(t, a, "neither half of them slow alone");
}

static int result(tp_triage *t, struct tp__action *a, int step, double r)
{
    bool within = step == 1;
    double *res = step >= 2 ? a->hres[step - 2] : a->res;
    struct tp__sprt *x = within ? &a->sprt2 : &a->sprt;
    if (!isnan(r)) { /* a pair lost: the others of the round still count */
        r -= t->round_ref_excess; /* against the references' mean */
        if (res[1] == 0 || r < res[3])
            res[3] = r; /* the round's least */
        res[0] += r;
        res[1]++;
        res[2] += r * r;
    }
    if (--a->got > 0)
        return 0;
    if (step >= 2) {
        search_round(t, a);
        return 0;
    }
    if (!within) {
        /* one uplink of its up slow by the least worth naming: the share
         * of pairs one of whose two flows crosses it, that much slower */
        a->sprt.effect = a->sprt.floor = (float)(t->o.min_effect * share_across(t, a->a));
        a->sprt.repeats = tp__triage_leaf_repeats(&t->o);
    } else {
        a->sprt2.effect = a->sprt2.floor = (float)t->o.min_effect;
    }
    add_round(t, a->res, x);
    if (!within) {
        switch (tp__triage_sprt_state(t, &a->sprt)) {
        case TP__SPRT_SOUND: settle(t, a, LEAF_CLEARED, NULL); break;
        case TP__SPRT_UNDECIDED: settle(t, a, LEAF_UNSETTLED, NULL); break;
        case TP__SPRT_SLOW: /* within it next; a leaf of one node: its uplinks */
            a->alone_done = true;
            if (alive(t, a->a) < 2)
                found(t, a, LEAF_UPLINK);
            break;
        case TP__SPRT_MORE: break;
        }
        return 0;
    }
    switch (tp__triage_sprt_state(t, &a->sprt2)) {
    case TP__SPRT_SLOW: found(t, a, LEAF_SWITCH); break;
    case TP__SPRT_SOUND:
    case TP__SPRT_UNDECIDED: /* slow across, not within: the uplinks, at least */
        found(t, a, LEAF_UPLINK);
        break;
    case TP__SPRT_MORE: break;
    }
    return 0;
}

const struct tp__triage_iso_kind tp__triage_iso_leaf = {TP_TRIAGE_CONFIRM, schedule, result, NULL};
