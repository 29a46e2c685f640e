/* An isolation row (isolate_int.h): a slow group split. Its halves
 * (contiguous in its ring order) run at once, each beside reference
 * groups of known-good nodes of its size. A slow half is split again
 * (down to two or three nodes, then its members are confirmed one by
 * one). Neither slow: the fault was on a link across the split, one of
 * the two links of the group's ring that neither half has, and both are
 * probed. One slow: the halves explain one fault; a second one on a link
 * across the split would hide behind it, so those two links are probed
 * too, after every other test (they must not hold up the recursion). */
#include <math.h>

#include "isolate_int.h"

static void schedule(tp_triage *t, struct tp__action *a, struct tp__triage_iso_sizes *z)
{
    for (int i = 0; i < a->n; i++)
        if (!tp__triage_iso_is_free(t, a->set[i]))
            return;
    int h = a->n / 2;
    for (int i = 0; i < a->n; i++)
        tp__triage_iso_take(t, a->set[i]);
    tp__triage_iso_test_of(t, true, a->set, h, a, 0);
    tp__triage_iso_test_of(t, true, a->set + h, a->n - h, a, 1);
    tp__triage_iso_want_refs(z, h);
    tp__triage_iso_want_refs(z, a->n - h);
    a->got = 0;
}

static int result(tp_triage *t, struct tp__action *a, int step, double r)
{
    a->res[step] = r;
    if (++a->got < 2)
        return 0;
    if (isnan(a->res[0]) || isnan(a->res[1])) {
        if (++a->retries > TP__ISO_RETRIES)
            tp__triage_iso_unresolved(t, a);
        return 0;
    }
    a->done = true;
    int h = a->n / 2, rc = 0;
    double thr = 1 + fmax(t->o.min_effect, t->o.z * t->group_spread);
    bool slow[2] = {a->res[0] > thr, a->res[1] > thr};
    for (int k = 0; k < 2 && rc == 0; k++)
        if (slow[k])
            rc = tp__triage_bisect(t, a->set + (k ? h : 0), k ? a->n - h : h);
    /* the links of the group's ring that neither half has */
    int v[4] = {a->set[h - 1], a->set[h], a->set[a->n - 1], a->set[0]};
    if (rc == 0 && !(slow[0] && slow[1]))
        rc = tp__triage_iso_probe_action(t, v, 2, slow[0] || slow[1]);
    return rc;
}

const struct tp__triage_iso_kind tp__triage_iso_bisect = {TP_TRIAGE_BISECT, schedule, result,
                                                          NULL};
