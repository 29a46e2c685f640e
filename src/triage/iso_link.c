/* An isolation row (isolate_int.h): a link suspect. The pair again,
 * alone, each round until its sequential test (sprt.c) decides (a probe
 * that found it counts as its first measurement): sound, the screen's
 * round was loaded; slow, each end is confirmed as a node (its own
 * sequential test with known-good partners, a child of this one): a slow
 * link when both ends are sound with others; an end slow with others too
 * is named as a node instead and explains the pair; an end left
 * undecided leaves the link suspect. With a topology no link is named: a
 * slow pair whose ends are sound is put to their leaves (leaf actions),
 * its ends suspect unless a leaf is named that explains it. */
#include <math.h>

#include "isolate_int.h"

static void schedule(tp_triage *t, struct tp__action *a, struct tp__triage_iso_sizes *z)
{
    (void)z;
    if (a->alone_done || !tp__triage_iso_is_free(t, a->a) || !tp__triage_iso_is_free(t, a->b))
        return;
    tp__triage_iso_take(t, a->a);
    tp__triage_iso_take(t, a->b);
    int v[2] = {a->a, a->b};
    tp__triage_iso_test_of(t, false, v, 2, a, 0);
}

static int children_done(tp_triage *t, struct tp__action *a)
{
    if (a->cancelled) /* a named leaf explains it */
        return 0;
    a->done = true;
    if (a->named_any) /* an end slow with others explains the pair */
        return 0;
    if (!t->o.topo) {
        tp__triage_name_link(t, a->a, a->b, t->pair_median, &a->sprt, "pairs");
        return 0;
    }
    /* in a switched fabric no cable joins two nodes: what slows the pair
     * and neither end is its leaves' (a switch, its uplinks); the ends
     * stay suspect unless one of those is named (leaves.c) */
    a->deferred = true;
    for (int k = 0; k < 2; k++)
        if (t->node[k ? a->b : a->a].status == ST_PASS)
            t->node[k ? a->b : a->a].status = ST_SUSPECT;
    int la = tp__triage_leaf_of(t, a->a, 0), lb = tp__triage_leaf_of(t, a->b, 0);
    int rc = tp__triage_iso_leaf_action(t, la); /* rail 0's: its group's leaves */
    if (rc == 0 && lb != la)
        rc = tp__triage_iso_leaf_action(t, lb);
    return rc;
}

/* slow alone: each end with others, as a node action of its own (again
 * if it was cleared before: a node slow by a little can pass its own test
 * now and then, and its slow pairs then come back here as links) */
static int ends(tp_triage *t, struct tp__action *a)
{
    a->alone_done = a->needs_all = true;
    int rc = 0;
    for (int k = 0; k < 2 && rc == 0; k++) {
        int v = k ? a->b : a->a;
        if (t->node[v].status == ST_SLOW)
            a->named_any = true;
        else
            rc = tp__triage_iso_node_action(t, v, false, a);
    }
    return rc == 0 && a->children == 0 ? children_done(t, a) : rc;
}

static int result(tp_triage *t, struct tp__action *a, int step, double r)
{
    (void)step;
    if (isnan(r)) {
        if (++a->retries > TP__ISO_RETRIES)
            tp__triage_iso_unresolved(t, a);
        return 0;
    }
    tp__triage_sprt_add(t, &a->sprt, r, tp__triage_iso_spread(t, false));
    switch (tp__triage_sprt_state(t, &a->sprt)) {
    case TP__SPRT_SOUND: /* not slow alone: the screen's round was loaded */
        a->done = true;
        t->node[a->a].contention = t->node[a->b].contention = true;
        return 0;
    case TP__SPRT_UNDECIDED: tp__triage_iso_unresolved(t, a); return 0;
    case TP__SPRT_SLOW: return ends(t, a);
    case TP__SPRT_MORE: break;
    }
    return 0;
}

const struct tp__triage_iso_kind tp__triage_iso_link = {TP_TRIAGE_CONFIRM, schedule, result,
                                                        children_done};
