/* Generated topologies for the simulator (tp_topology_fat_tree): a
 * two-level fat tree, or its rail-optimised form where each group of nodes
 * has a leaf per rail and NIC r of every node of the group is cabled to
 * the group's rail-r leaf, so that NIC r of every node meets NIC r of
 * every other node of its group one switch away. No names are stored: a simulated fleet of a
 * million nodes costs the leaf table and one up list that every leaf
 * shares, since every leaf goes up to every spine. */
#include <stdlib.h>

#include "topo_int.h"

int tp_topology_fat_tree(int nodes, int per_leaf, int spines, int rails, struct tp_topology **out,
                         tp_error *err)
{
    *out = NULL;
    if (nodes < 1 || nodes > TP_TOPOLOGY_MAX_NODES)
        return tp_error_set(err, TP_EUSAGE, "fat tree: %d nodes (1 to %d)", nodes,
                            TP_TOPOLOGY_MAX_NODES);
    if (per_leaf < 1)
        return tp_error_set(err, TP_EUSAGE, "fat tree: %d nodes a leaf (at least 1)", per_leaf);
    if (rails < 1 || rails > TP_TOPOLOGY_MAX_RAILS)
        return tp_error_set(err, TP_EUSAGE, "fat tree: %d rails (1 to %d)", rails,
                            TP_TOPOLOGY_MAX_RAILS);
    long long groups = (nodes + (long long)per_leaf - 1) / per_leaf, nleaves = groups * rails;
    if (spines < 0 || nleaves + spines > TP_TOPOLOGY_MAX_SWITCHES)
        return tp_error_set(err, TP_EUSAGE,
                            "fat tree: %lld leaves and %d spines (at most %d "
                            "switches)",
                            nleaves, spines, TP_TOPOLOGY_MAX_SWITCHES);
    if (spines == 0 && nleaves > 1)
        return tp_error_set(err, TP_EUSAGE,
                            "fat tree: no spines for %lld leaves: nothing would join them",
                            nleaves);
    struct tp_topology *t = calloc(1, sizeof *t);
    struct tp__topo_priv *p = t ? calloc(1, sizeof *p) : NULL;
    if (t)
        t->priv = p;
    int nsw = (int)nleaves + spines;
    if (p) {
        t->sw = calloc((size_t)nsw, sizeof *t->sw);
        t->leaf = malloc((size_t)nodes * (size_t)rails * sizeof *t->leaf);
        p->edges = malloc((size_t)(spines ? spines : 1) * sizeof *p->edges);
    }
    if (!p || !t->sw || !t->leaf || !p->edges) {
        tp_topology_free(t);
        return tp_error_set(err, TP_ENOMEM, "fat tree: out of memory");
    }
    t->nnodes = nodes;
    t->nrails = rails;
    t->nswitches = nsw;
    t->nlevels = spines ? 2 : 1;
    p->nleaves = (int)nleaves;
    for (int s = 0; s < spines; s++)
        p->edges[s] = (int)nleaves + s;
    for (int i = 0; i < nodes; i++)
        for (int r = 0; r < rails; r++)
            t->leaf[i * rails + r] = i / per_leaf * rails + r;
    for (int s = 0; s < nsw; s++) {
        struct tp_topo_switch *w = &t->sw[s];
        bool leaf = s < nleaves;
        w->level = leaf ? 0 : 1;
        w->rail = leaf && rails > 1 ? s % rails : -1;
        w->nup = leaf ? spines : 0;
        w->up = p->edges;
    }
    *out = t;
    return 0;
}
