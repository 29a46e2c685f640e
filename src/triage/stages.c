/* What the tiers' rows are made of (include/tp/triage.h): the options'
 * defaults and the rounds each planned stage takes for m nodes. tier.c
 * and the rows read these; nothing here reads a row. */
#include "triage_int.h"
#include "tp/topology.h"

void tp__triage_defaults(const struct tp_triage_opts *o, struct tp_triage_opts *out)
{
    static const struct tp_triage_opts none;
    *out = o ? *o : none;
    if (!out->tier)
        out->tier = "screen";
    if (out->matchings <= 0)
        out->matchings = 4;
    if (out->group <= 0)
        out->group = 8;
    if (out->min_effect <= 0)
        out->min_effect = 0.10;
    if (out->z <= 0)
        out->z = 4;
    if (out->z_screen <= 0)
        out->z_screen = 2.5;
    if (out->alpha <= 0)
        out->alpha = 1e-3;
    if (out->beta <= 0)
        out->beta = 0.01;
    if (out->repeats <= 0)
        out->repeats = 10;
    if (out->pair_s <= 0)
        out->pair_s = 3;
    if (out->group_s <= 0)
        out->group_s = 5;
    if (out->round_gap_s <= 0)
        out->round_gap_s = 0.2;
    /* evict or localise: plan's example cluster (docs/plan.md) */
    if (out->gpus_per_node <= 0)
        out->gpus_per_node = 8;
    if (out->mtbf_node_s <= 0)
        out->mtbf_node_s = 6000 * 3600.0;
    if (out->restart_s <= 0)
        out->restart_s = 600;
    if (out->spare_nodes < 0)
        out->spare_nodes = 0;
    if (out->evict_return_s <= 0)
        out->evict_return_s = 3600;
}

int tp__triage_one_round(int m, const struct tp_triage_opts *o)
{
    (void)o;
    return m >= 2;
}

int tp__triage_ring_rounds(int m, const struct tp_triage_opts *o)
{
    (void)o;
    /* edges (i, i+1): even ones, odd ones, and for an odd m the closing one */
    return m < 2 ? 0 : m == 2 ? 1 : m % 2 ? 3 : 2;
}

int tp__triage_groups_size(int m, const struct tp_triage_opts *o)
{
    int g = o->group > 0 ? o->group : 8;
    if (g > m / 3) /* at least three groups: the fleet's own median needs peers */
        g = m / 3;
    return g >= 2 ? g : 0;
}

int tp__triage_groups_rounds(int m, const struct tp_triage_opts *o)
{
    return tp__triage_groups_size(m, o) ? 1 : 0;
}

int tp__triage_matchings(int m, const struct tp_triage_opts *o)
{
    int k = o->matchings > 0 ? o->matchings : 4;
    /* partners left once the ring neighbours are taken */
    int left = m - 1 - (m > 3 ? 2 : m - 1);
    return k < left ? k : left > 0 ? left : 0;
}

int tp__triage_circle_rounds(int m, const struct tp_triage_opts *o)
{
    (void)o;
    /* every pair once; an odd count takes one round more, each node
     * sitting out one */
    return m < 2 ? 0 : m % 2 ? m : m - 1;
}

int tp__triage_leaf_repeats(const struct tp_triage_opts *o)
{
    int r = o->repeats > 0 ? o->repeats : 10;
    return 2 * r < TP_TRIAGE_MAX_REPEATS ? 2 * r : TP_TRIAGE_MAX_REPEATS;
}

/* The bound for n nodes at repeats r, with or without a topology, its
 * rails searched by halving (pinned) or not. */
static int iso_bound(int n, const struct tp_triage_opts *o, bool topo, int pinned_rails)
{
    int lg = 0;
    while (lg < 31 && (1 << lg) < n)
        lg++;
    /* a group halved down to its members, a probe, a link's sequential
     * test alone, then its ends' with others (a node's is one of those),
     * and a round to spare */
    int r = o->repeats > 0 ? o->repeats : 10, bound = lg + 2 * r + 3;
    if (!topo)
        return bound;
    /* a leaf's: its test across, then within, then (a rail-optimised
     * fabric whose tests can be pinned) a step of the rail search a
     * halving of its rails, and a round to spare */
    int lr = tp__triage_leaf_repeats(o), steps = 0;
    while (steps < 6 && (1 << steps) < pinned_rails)
        steps++;
    int leaf = lr + r + steps * lr + 1;
    return leaf > bound ? leaf : bound;
}

int tp__triage_iso_bound(int n, const struct tp_triage_opts *o)
{
    return iso_bound(n, o, o->topo != NULL, o->topo && o->pin_rails ? o->topo->nrails : 1);
}

int tp_triage_isolation_bound(int n, const struct tp_triage_opts *o)
{
    struct tp_triage_opts d;
    tp__triage_defaults(o, &d);
    return tp__triage_iso_bound(n, &d);
}

int tp_triage_fleet_isolation_bound(const struct tp_triage_fleet *f,
                                    const struct tp_triage_opts *o)
{
    struct tp_triage_opts d;
    tp__triage_defaults(o, &d);
    bool fabric = f->fabric.per_leaf > 0; /* the simulator pins a rail fabric's tests */
    return iso_bound(f->n, &d, fabric, fabric && f->fabric.rails > 1 ? f->fabric.rails : 1);
}
