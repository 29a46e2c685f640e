/* An isolation row (isolate_int.h): a link suspect. The pair again, alone,
 * twice (a probe that found it counts as the first): one measurement alone
 * can meet a hiccup of the host, two seldom do; then each end with a fresh
 * known-good partner: a slow link when the pair is slow alone both times
 * and both ends are fine with others; an end slow with others too is
 * confirmed as a node instead. */
#include <math.h>

#include "isolate_int.h"

static void schedule(tp_triage *t, struct tp__action *a, struct tp__triage_iso_sizes *z)
{
    (void)z;
    if (!tp__triage_iso_is_free(t, a->a) || !tp__triage_iso_is_free(t, a->b))
        return;
    tp__triage_iso_take(t, a->a);
    tp__triage_iso_take(t, a->b);
    int v[2];
    if (a->step < 2) { /* alone, the first time or the second */
        v[0] = a->a;
        v[1] = a->b;
        tp__triage_iso_test_of(t, false, v, 2, a, a->step);
        return;
    }
    int g[4] = {a->a, a->b, -1, -1};
    g[2] = tp__triage_iso_partner(t, a->a, a);
    g[3] = g[2] < 0 ? g[2] : tp__triage_iso_partner(t, a->b, a);
    if (g[2] < 0 || g[3] < 0) {
        tp__triage_iso_give_back(t, g, 4);
        if (g[2] == -1 || g[3] == -1)
            tp__triage_iso_unresolved(t, a);
        return;
    }
    for (int k = 0; k < 2; k++) {
        v[0] = g[k];
        v[1] = a->used[k] = g[2 + k];
        tp__triage_iso_test_of(t, false, v, 2, a, 10 + k);
    }
    a->got = 0;
}

static int result(tp_triage *t, struct tp__action *a, int step, double r)
{
    double sus = tp__triage_suspect(t);
    if (step < 2) {
        if (isnan(r)) {
            if (++a->retries > TP__ISO_RETRIES)
                tp__triage_iso_unresolved(t, a);
            return 0;
        }
        /* res[0]: the mean of the measurements alone */
        a->res[0] = step == 0 ? r : (a->res[0] + r) / 2;
        a->step = step + 1;
        if (r <= tp__triage_slow(t)) { /* not slow alone: the screen's round was loaded */
            a->done = true;
            t->node[a->a].contention = t->node[a->b].contention = true;
        }
        return 0;
    }
    a->res[step - 9] = r; /* res[1], res[2]: the ends */
    if (++a->got < 2)
        return 0;
    if (isnan(a->res[1]) || isnan(a->res[2])) {
        if (++a->retries > TP__ISO_RETRIES)
            tp__triage_iso_unresolved(t, a);
        return 0;
    }
    a->done = true;
    if (a->res[1] <= sus && a->res[2] <= sus) {
        double thr = tp__triage_slow(t);
        tp__triage_name_link(t, a->a, a->b, a->res[0] * t->pair_median, t->pair_median,
                             thr * t->pair_median, "pairs");
        return 0;
    }
    /* an end slow with others too: a node, not the link */
    int rc = 0;
    for (int k = 0; k < 2 && rc == 0; k++) {
        int v = k ? a->b : a->a;
        if (a->res[1 + k] > sus && !t->node[v].tried && t->node[v].status != ST_SLOW)
            rc = tp__triage_iso_node_action(t, v, false, NULL);
    }
    return rc;
}

const struct tp__triage_iso_kind tp__triage_iso_link = {TP_TRIAGE_CONFIRM, schedule, result};
