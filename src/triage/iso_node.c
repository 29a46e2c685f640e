/* An isolation row (isolate_int.h): a node suspect, measured alone with a
 * fresh known-good partner each round (pairs; or, for a fault only
 * collectives show, groups of two beside reference groups of two) until
 * its sequential test (sprt.c) decides. Slow: named, with the ratios and
 * the test's confidence. Sound: it joins the known-good pool and its own
 * slow pairs of the screen become links to look at. Undecided after the
 * repeats allowed: left suspect. */
#include <math.h>

#include "isolate_int.h"

static void schedule(tp_triage *t, struct tp__action *a, struct tp__triage_iso_sizes *z)
{
    int v[2];
    if (!tp__triage_iso_is_free(t, a->a))
        return;
    tp__triage_iso_take(t, a->a);
    v[0] = a->a;
    if ((v[1] = tp__triage_iso_partner(t, a->a, a)) < 0) {
        tp__triage_iso_give_back(t, v, 1);
        if (v[1] == -1)
            tp__triage_iso_unresolved(t, a); /* no partner left to judge it by */
        return;
    }
    tp__triage_iso_test_of(t, a->group_mode, v, 2, a, a->sprt.n);
    if (a->group_mode)
        tp__triage_iso_want_refs(z, 2);
}

/* normal alone: known good now (a small fleet with many suspects runs out
 * of partners otherwise), and its slow pairs of the screen were the
 * links', then */
static int cleared(tp_triage *t, struct tp__action *a)
{
    int s = a->a, rc = 0;
    if (t->node[s].status == ST_SUSPECT) /* an end of a link named meanwhile stays one */
        t->node[s].status = ST_PASS;
    t->node[s].contention = true;
    bool pooled = false;
    for (int i = 0; i < t->ngood && !pooled; i++)
        pooled = t->good[i] == s;
    if (!pooled && t->node[s].status == ST_PASS && t->ngood < t->n)
        t->good[t->ngood++] = s;
    double sus = tp__triage_suspect(t);
    for (int k = t->adj_off[s]; !a->group_mode && rc == 0 && k < t->adj_off[s + 1]; k++) {
        const struct tp__pair *p = &t->pairs[t->adj[k]];
        int o = p->a == s ? p->b : p->a;
        if (p->fig / t->pair_median > sus && t->node[o].status != ST_SLOW && !t->node[o].in_action)
            rc = tp__triage_iso_link_action(t, s, o, 0);
    }
    return rc;
}

static int result(tp_triage *t, struct tp__action *a, int step, double r)
{
    (void)step;
    if (isnan(r)) { /* a partner lost, or ours: again, with another */
        if (++a->retries > TP__ISO_RETRIES)
            tp__triage_iso_unresolved(t, a);
        return 0;
    }
    tp__triage_sprt_add(t, &a->sprt, r, tp__triage_iso_spread(t, a->group_mode));
    enum tp__sprt_state st = tp__triage_sprt_state(t, &a->sprt);
    if (st == TP__SPRT_MORE)
        return 0;
    if (st == TP__SPRT_UNDECIDED) {
        tp__triage_iso_unresolved(t, a);
        return 0;
    }
    a->done = true;
    t->node[a->a].in_action = false;
    int rc = 0;
    if (st == TP__SPRT_SLOW) {
        double ref = a->group_mode ? tp__triage_ref_median(t, 2) : t->pair_median;
        tp__triage_name_node(t, a->a, ref, &a->sprt, a->group_mode ? "a group of two" : "pairs");
        if (a->parent)
            a->parent->named_any = true;
    } else {
        rc = cleared(t, a);
    }
    return rc; /* its parent, if any, is told by isolate.c */
}

const struct tp__triage_iso_kind tp__triage_iso_node = {TP_TRIAGE_CONFIRM, schedule, result, NULL};
