/* The rails of a rail-optimised topology in the triage (tp_triage_opts.topo):
 * a node's leaf switch on each rail, whether a node is under a leaf, and
 * a leaf's group: the leaves, one a rail, over exactly its nodes. A pair
 * test's traffic crosses every rail of its two nodes, so a group's leaves
 * see the same pairs; the leaf actions (iso_leaf.c) test them as one and
 * then find the rail with tests pinned to some rails only. */
#include <string.h>

#include "triage_int.h"
#include "tp/topology.h"

/* leaf_sib: the lowest switch whose node list is l's (a rail-optimised
 * group's leaves, one a rail, have the same nodes) */
void tp__triage_leaf_siblings(tp_triage *t)
{
    int R = t->nrails;
    for (int l = 0; l < t->nswitches; l++) {
        t->leaf_sib[l] = l;
        int n = t->leaf_off[l + 1] - t->leaf_off[l];
        if (n == 0)
            continue;
        int v0 = t->leaf_nodes[t->leaf_off[l]];
        for (int r = 0; r < R; r++) {
            int s = t->leaf_of[(size_t)v0 * (size_t)R + (size_t)r];
            if (s < 0 || s >= t->leaf_sib[l] || t->leaf_off[s + 1] - t->leaf_off[s] != n)
                continue;
            if (memcmp(t->leaf_nodes + t->leaf_off[s], t->leaf_nodes + t->leaf_off[l],
                       sizeof *t->leaf_nodes * (size_t)n) == 0)
                t->leaf_sib[l] = s;
        }
    }
}

int tp__triage_leaf_of(const tp_triage *t, int v, int r)
{
    return t->leaf_of[(size_t)v * (size_t)t->nrails + (size_t)r];
}

bool tp__triage_under(const tp_triage *t, int v, int l)
{
    int r = t->o.topo->sw[l].rail;
    return tp__triage_leaf_of(t, v, r >= 0 && r < t->nrails ? r : 0) == l;
}

uint64_t tp__triage_leaf_rails(const tp_triage *t, int l, int *sw)
{
    uint64_t rails = 0;
    for (int r = 0; sw && r < t->nrails; r++)
        sw[r] = -1;
    if (t->leaf_off[l + 1] == t->leaf_off[l])
        return 0;
    int v0 = t->leaf_nodes[t->leaf_off[l]];
    for (int r = 0; r < t->nrails; r++) {
        int s = tp__triage_leaf_of(t, v0, r);
        if (s < 0 || t->leaf_sib[s] != t->leaf_sib[l] || t->o.topo->sw[s].rail != r)
            continue;
        rails |= (uint64_t)1 << r;
        if (sw)
            sw[r] = s;
    }
    return rails;
}
