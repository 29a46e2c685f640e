/* An isolation row (isolate_int.h): the members of a slow group too small
 * to split (two or three nodes). It has no tests of its own: each member
 * is a node action, in group mode, with this one as its parent; when the
 * last is settled and none was named, the links of their ring are
 * probed. */
#include "isolate_int.h"

/* the members all confirmed: none named, a link of their ring */
static int children_done(tp_triage *t, struct tp__action *m)
{
    m->done = true;
    if (m->named_any)
        return 0;
    int v[6], e = 0;
    for (int i = 0; i < m->n && (m->n > 2 || i == 0); i++) {
        v[2 * e] = m->set[i];
        v[2 * e + 1] = m->set[(i + 1) % m->n];
        e++;
    }
    return tp__triage_iso_probe_action(t, v, e, false);
}

const struct tp__triage_iso_kind tp__triage_iso_members = {TP_TRIAGE_CONFIRM, NULL, NULL,
                                                           children_done};
