/* An isolation row (isolate_int.h): links probed as pairs, each as soon as
 * both its ends are free; a slow one is confirmed as a link (the probe
 * counting as its measurement alone). */
#include <math.h>

#include "isolate_int.h"

static void schedule(tp_triage *t, struct tp__action *a, struct tp__triage_iso_sizes *z)
{
    (void)z;
    for (int e = 0; e < a->n; e++) {
        int v[2] = {a->set[2 * e], a->set[2 * e + 1]};
        if (a->edge_done[e])
            continue;
        if (!tp__triage_iso_alive(t, v[0]) || !tp__triage_iso_alive(t, v[1])) {
            a->edge_done[e] = true;
            continue;
        }
        if (!tp__triage_iso_is_free(t, v[0]) || !tp__triage_iso_is_free(t, v[1]))
            continue;
        tp__triage_iso_take(t, v[0]);
        tp__triage_iso_take(t, v[1]);
        tp__triage_iso_test_of(t, false, v, 2, a, e);
    }
    bool all = true; /* every edge's ends died */
    for (int e = 0; e < a->n; e++)
        all &= a->edge_done[e];
    a->done = all;
}

static int result(tp_triage *t, struct tp__action *a, int e, double r)
{
    if (isnan(r)) {
        if (++a->retries > TP__ISO_RETRIES)
            a->edge_done[e] = true;
    } else {
        a->edge_done[e] = true;
    }
    int rc = 0;
    if (r > tp__triage_suspect(t))
        rc = tp__triage_iso_link_action(t, a->set[2 * e], a->set[2 * e + 1], r);
    bool all = true;
    for (int i = 0; i < a->n; i++)
        all &= a->edge_done[i];
    a->done = all;
    return rc;
}

const struct tp__triage_iso_kind tp__triage_iso_probe = {TP_TRIAGE_PROBE, schedule, result, NULL};
