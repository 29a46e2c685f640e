/* The simulator's model fleet, read from a YAML file (include/tp/triage.h,
 * docs/fleet.md "The simulator"): one table of keys per mapping, walked by
 * tp_yaml, so every error reads "FILE:LINE:COL: KEY: message". */
#include <stddef.h>
#include <string.h>

#include "tp/plan.h" /* TP_PLAN_MAX_GPUS_PER_NODE: plan's bound on the same key */
#include "tp/topology.h" /* TP_TOPOLOGY_MAX_RAILS: the fabric is one */
#include "tp/triage.h"
#include "tp/yaml.h"

typedef struct tp_yaml_key key;
typedef struct tp_yaml_table table;
typedef struct tp_yaml_node node;
typedef struct tp_triage_fleet FL;

_Static_assert(sizeof(int) == sizeof(unsigned), "TP_YAML_UINT stores an unsigned into an int");

static const struct tp_yaml_range nodes_range = {2, TP_TRIAGE_MAX_NODES, false,
                                                 "must be between 2 and 1000000"};
static const struct tp_yaml_range iters_range = {1, 1e6, false, "must be between 1 and 1000000"};
static const struct tp_yaml_range severity_range = {0, 100, true,
                                                    "must be above 0 and at most 10000%"};
static const struct tp_yaml_range noise_range = {0, 1, false, "must be between 0 and 100%"};
static const struct tp_yaml_range node_range = {0, TP_TRIAGE_MAX_NODES - 1, false,
                                                "must be a node number between 0 and 999999"};
static const struct tp_yaml_range round_range = {1, 1e6, false,
                                                 "must be a round between 1 and 1000000"};
static const struct tp_yaml_range size_range = {0, 10, false, "must be between 0 and 1000%"};
static const struct tp_yaml_range leaf_range = {1, TP_TRIAGE_MAX_NODES, false,
                                                "must be a node count between 1 and 1000000"};
static const struct tp_yaml_range drift_range = {-0.5, 1, false, "must be between -50% and 100%"};
/* evict or localise: plan's cluster keys (docs/plan.md), their ranges
 * but for the restart, which costs something here (0: the default) */
static const struct tp_yaml_range gpn_range = {1, TP_PLAN_MAX_GPUS_PER_NODE, false,
                                               "must be at least 1 and at most 1024 GPUs per node"};
static const struct tp_yaml_range mtbf_range = {60, 1000 * 31536000.0, false,
                                                "must be between 1 min and 1000 y"};
static const struct tp_yaml_range restart_range = {0, 7 * 86400, true,
                                                   "must be above 0 and at most 1 w"};
static const struct tp_yaml_range spares_range = {0, TP_TRIAGE_MAX_NODES, false,
                                                  "must be a node count between 0 and 1000000"};
static const struct tp_yaml_range return_range = {0, 31536000, true,
                                                  "must be above 0 and at most 1 y"};

static int link_check(struct tp_yaml *y, const node *map, const node *at, const char *path,
                      void *base, uint64_t seen);
static int fleet_check(struct tp_yaml *y, const node *map, const node *at, const char *path,
                       void *base, uint64_t seen);

/* clang-format off */
static const key slow_keys[] = {
    {.name = "node", .kind = TP_YAML_UINT, .off = offsetof(struct tp_triage_slow_node, node),
     .range = &node_range, .flags = TP_YAML_REQUIRED, .what = "a node number", .eg = "17"},
    {.name = "severity", .kind = TP_YAML_FRAC,
     .off = offsetof(struct tp_triage_slow_node, severity), .range = &severity_range,
     .flags = TP_YAML_REQUIRED, .eg = "25%, 0.25"},
    {.name = "collective", .kind = TP_YAML_BOOL,
     .off = offsetof(struct tp_triage_slow_node, collective)},
};
static const table slow_tbl = {slow_keys, TP_YAML_NKEYS(slow_keys), NULL, NULL};
static const key slow_elem = {.kind = TP_YAML_MAP, .sub = &slow_tbl};

static const key link_keys[] = {
    /* a and b both, or neither (a link the tier's rounds cross, drawn): link_check */
    {.name = "a", .kind = TP_YAML_UINT, .off = offsetof(struct tp_triage_slow_link, a),
     .range = &node_range, .what = "a node number", .eg = "3"},
    {.name = "b", .kind = TP_YAML_UINT, .off = offsetof(struct tp_triage_slow_link, b),
     .range = &node_range, .what = "a node number", .eg = "900"},
    {.name = "severity", .kind = TP_YAML_FRAC,
     .off = offsetof(struct tp_triage_slow_link, severity), .range = &severity_range,
     .flags = TP_YAML_REQUIRED, .eg = "30%, 0.3"},
};
static const table link_tbl = {link_keys, TP_YAML_NKEYS(link_keys), link_check, NULL};
static const key link_elem = {.kind = TP_YAML_MAP, .sub = &link_tbl};

static const key missing_elem = {.kind = TP_YAML_UINT, .range = &node_range,
                                 .what = "a node number", .eg = "44"};

static const key death_keys[] = {
    {.name = "node", .kind = TP_YAML_UINT, .off = offsetof(struct tp_triage_death, node),
     .range = &node_range, .flags = TP_YAML_REQUIRED, .what = "a node number", .eg = "8"},
    {.name = "round", .kind = TP_YAML_UINT, .off = offsetof(struct tp_triage_death, round),
     .range = &round_range, .flags = TP_YAML_REQUIRED, .what = "a round number", .eg = "3"},
};
static const table death_tbl = {death_keys, TP_YAML_NKEYS(death_keys), NULL, NULL};
static const key death_elem = {.kind = TP_YAML_MAP, .sub = &death_tbl};

static const struct tp_yaml_range leafno_range = {0, TP_TRIAGE_MAX_NODES - 1, false,
                                                  "must be a leaf number from 0"};
static const struct tp_yaml_range spines_range = {1, 4096, false, "must be between 1 and 4096"};
static const struct tp_yaml_range spineno_range = {0, 4095, false,
                                                   "must be a spine number from 0"};
static const struct tp_yaml_range rails_range = {1, TP_TOPOLOGY_MAX_RAILS, false,
                                                 "must be between 1 and 64"};
static const struct tp_yaml_range railno_range = {0, TP_TOPOLOGY_MAX_RAILS - 1, false,
                                                  "must be a rail number from 0"};

/* fabric: a two-level fat tree, rail-optimised with rails */
static const key fabric_keys[] = {
    {.name = "per_leaf", .kind = TP_YAML_UINT, .off = offsetof(struct tp_triage_fabric, per_leaf),
     .range = &leaf_range, .flags = TP_YAML_REQUIRED, .what = "a node count", .eg = "32"},
    {.name = "spines", .kind = TP_YAML_UINT, .off = offsetof(struct tp_triage_fabric, spines),
     .range = &spines_range, .def = 1, .what = "a spine count", .eg = "4"},
    {.name = "rails", .kind = TP_YAML_UINT, .off = offsetof(struct tp_triage_fabric, rails),
     .range = &rails_range, .def = 1, .what = "a rail count", .eg = "8"},
};
static const table fabric_tbl = {fabric_keys, TP_YAML_NKEYS(fabric_keys), NULL, NULL};

static const key switch_keys[] = {
    {.name = "leaf", .kind = TP_YAML_UINT, .off = offsetof(struct tp_triage_slow_switch, leaf),
     .range = &leafno_range, .flags = TP_YAML_REQUIRED, .what = "a leaf number", .eg = "3"},
    {.name = "severity", .kind = TP_YAML_FRAC,
     .off = offsetof(struct tp_triage_slow_switch, severity), .range = &severity_range,
     .flags = TP_YAML_REQUIRED, .eg = "15%, 0.15"},
    {.name = "rail", .kind = TP_YAML_UINT, .off = offsetof(struct tp_triage_slow_switch, rail),
     .range = &railno_range, .what = "a rail number", .eg = "2"},
};
static const table switch_tbl = {switch_keys, TP_YAML_NKEYS(switch_keys), NULL, NULL};
static const key switch_elem = {.kind = TP_YAML_MAP, .sub = &switch_tbl};

static const key uplink_keys[] = {
    {.name = "leaf", .kind = TP_YAML_UINT, .off = offsetof(struct tp_triage_slow_uplink, leaf),
     .range = &leafno_range, .flags = TP_YAML_REQUIRED, .what = "a leaf number", .eg = "3"},
    {.name = "spine", .kind = TP_YAML_UINT, .off = offsetof(struct tp_triage_slow_uplink, spine),
     .range = &spineno_range, .flags = TP_YAML_REQUIRED, .what = "a spine number", .eg = "1"},
    {.name = "severity", .kind = TP_YAML_FRAC,
     .off = offsetof(struct tp_triage_slow_uplink, severity), .range = &severity_range,
     .flags = TP_YAML_REQUIRED, .eg = "15%, 0.15"},
    {.name = "rail", .kind = TP_YAML_UINT, .off = offsetof(struct tp_triage_slow_uplink, rail),
     .range = &railno_range, .what = "a rail number", .eg = "2"},
};
static const table uplink_tbl = {uplink_keys, TP_YAML_NKEYS(uplink_keys), NULL, NULL};
static const key uplink_elem = {.kind = TP_YAML_MAP, .sub = &uplink_tbl};

/* a bad cable: a node's link to its leaf on a rail */
static const key cable_keys[] = {
    {.name = "node", .kind = TP_YAML_UINT, .off = offsetof(struct tp_triage_bad_cable, node),
     .range = &node_range, .flags = TP_YAML_REQUIRED, .what = "a node number", .eg = "5"},
    {.name = "severity", .kind = TP_YAML_FRAC,
     .off = offsetof(struct tp_triage_bad_cable, severity), .range = &severity_range,
     .flags = TP_YAML_REQUIRED, .eg = "15%, 0.15"},
    {.name = "rail", .kind = TP_YAML_UINT, .off = offsetof(struct tp_triage_bad_cable, rail),
     .range = &railno_range, .what = "a rail number", .eg = "2"},
};
static const table cable_tbl = {cable_keys, TP_YAML_NKEYS(cable_keys), NULL, NULL};
static const key cable_elem = {.kind = TP_YAML_MAP, .sub = &cable_tbl};

/* spikes: and congestion: (both keys, or neither: off) */
static const key burst_keys[] = {
    {.name = "rate", .kind = TP_YAML_FRAC, .off = offsetof(struct tp_triage_burst, rate),
     .range = &noise_range, .flags = TP_YAML_REQUIRED, .eg = "1%, 0.01"},
    {.name = "size", .kind = TP_YAML_FRAC, .off = offsetof(struct tp_triage_burst, size),
     .range = &size_range, .flags = TP_YAML_REQUIRED, .eg = "50%, 0.5"},
};
static const table burst_tbl = {burst_keys, TP_YAML_NKEYS(burst_keys), NULL, NULL};

static const key top_keys[] = {
    {.name = "nodes", .kind = TP_YAML_UINT, .off = offsetof(FL, n), .range = &nodes_range,
     .flags = TP_YAML_REQUIRED, .what = "a node count", .eg = "1024"},
    {.name = "noise", .kind = TP_YAML_FRAC, .off = offsetof(FL, noise), .range = &noise_range,
     .def = 0.05, .eg = "5%, 0.05"},
    {.name = "iters", .kind = TP_YAML_UINT, .off = offsetof(FL, iters), .range = &iters_range,
     .def = 20, .what = "a sample count", .eg = "20"},
    {.name = "test_noise", .kind = TP_YAML_FRAC, .off = offsetof(FL, test_noise),
     .range = &noise_range, .eg = "1%, 0.01"},
    {.name = "seed", .kind = TP_YAML_U64, .off = offsetof(FL, seed), .def = 1},
    {.name = "spikes", .kind = TP_YAML_MAP, .off = offsetof(FL, spikes), .sub = &burst_tbl},
    {.name = "congestion", .kind = TP_YAML_MAP, .off = offsetof(FL, congestion),
     .sub = &burst_tbl},
    {.name = "leaf_size", .kind = TP_YAML_UINT, .off = offsetof(FL, leaf_size),
     .range = &leaf_range, .def = 32, .what = "a node count", .eg = "32"},
    {.name = "drift", .kind = TP_YAML_FRAC, .off = offsetof(FL, drift), .range = &drift_range,
     .eg = "5%, -2%, 0.05"},
    {.name = "slow_nodes", .kind = TP_YAML_LIST, TP_YAML_LIST_OF(FL, slow, nslow),
     .elem = &slow_elem, .what = "a sequence of slow nodes",
     .eg = "[{node: 17, severity: 25%}]"},
    {.name = "slow_links", .kind = TP_YAML_LIST, TP_YAML_LIST_OF(FL, link, nlinks),
     .elem = &link_elem, .what = "a sequence of slow links",
     .eg = "[{a: 3, b: 900, severity: 30%}, {severity: 30%}]"},
    {.name = "fabric", .kind = TP_YAML_MAP, .off = offsetof(FL, fabric), .sub = &fabric_tbl},
    {.name = "slow_switches", .kind = TP_YAML_LIST,
     TP_YAML_LIST_OF(FL, slow_switch, nswitches), .elem = &switch_elem,
     .what = "a sequence of slow leaf switches", .eg = "[{leaf: 3, severity: 15%}]"},
    {.name = "slow_uplinks", .kind = TP_YAML_LIST, TP_YAML_LIST_OF(FL, slow_uplink, nuplinks),
     .elem = &uplink_elem, .what = "a sequence of slow uplinks",
     .eg = "[{leaf: 3, spine: 1, severity: 15%}]"},
    {.name = "bad_cables", .kind = TP_YAML_LIST, TP_YAML_LIST_OF(FL, cable, ncables),
     .elem = &cable_elem, .what = "a sequence of bad cables",
     .eg = "[{node: 5, severity: 15%, rail: 2}]"},
    {.name = "missing", .kind = TP_YAML_LIST, TP_YAML_LIST_OF(FL, missing, nmissing),
     .elem = &missing_elem, .what = "a sequence of node numbers", .eg = "[44, 45]"},
    {.name = "dies", .kind = TP_YAML_LIST, TP_YAML_LIST_OF(FL, dies, ndies),
     .elem = &death_elem, .what = "a sequence of deaths", .eg = "[{node: 8, round: 3}]"},
    /* evict or localise (docs/fleet.md) */
    {.name = "gpus_per_node", .kind = TP_YAML_UINT, .off = offsetof(FL, gpus_per_node),
     .range = &gpn_range, .def = 8, .what = "a GPU count", .eg = "8"},
    {.name = "mtbf_per_node", .kind = TP_YAML_DUR, .off = offsetof(FL, mtbf_node_s),
     .range = &mtbf_range, .def = 6000 * 3600.0, .eg = "6000h"},
    {.name = "restart", .kind = TP_YAML_DUR, .off = offsetof(FL, restart_s),
     .range = &restart_range, .def = 600, .eg = "10m"},
    {.name = "spare_nodes", .kind = TP_YAML_UINT, .off = offsetof(FL, spare_nodes),
     .range = &spares_range, .what = "a node count", .eg = "16"},
    {.name = "evict_return", .kind = TP_YAML_DUR, .off = offsetof(FL, evict_return_s),
     .range = &return_range, .def = 3600, .eg = "1h"},
};
static const table top_tbl = {top_keys, TP_YAML_NKEYS(top_keys), fleet_check, NULL};
/* clang-format on */

static int link_check(struct tp_yaml *y, const node *map, const node *at, const char *path,
                      void *base, uint64_t seen)
{
    struct tp_triage_slow_link *l = base;
    bool a = tp_yaml_seen(&link_tbl, seen, "a"), b = tp_yaml_seen(&link_tbl, seen, "b");
    char p[TP_YAML_PATH_LEN];
    if (a != b) {
        tp_yaml_join(p, path, a ? "b" : "a");
        return tp_yaml_fail(y, at, p,
                            "required with %s (give both ends of the link, or neither for a "
                            "link the tier's rounds cross, drawn)",
                            a ? "a" : "b");
    }
    if (!a) {
        l->a = l->b = -1;
        return 0;
    }
    if (l->a == l->b) {
        tp_yaml_join(p, path, "b");
        return tp_yaml_fail(y, tp_yaml_lookup(map, "b", true), p,
                            "%d is a and b: a link joins two nodes", l->b);
    }
    return 0;
}

/* A node number given under key (an element of its list, or a field of
 * one) must be below nodes. */
static int below_n(struct tp_yaml *y, const node *list, size_t i, const char *field, int v,
                   int n, const char *name)
{
    if (v < n)
        return 0;
    char p[TP_YAML_PATH_LEN], q[TP_YAML_PATH_LEN];
    tp_yaml_join_index(p, name, i);
    const node *item = list && i < list->n ? list->kid[i] : NULL;
    const node *at = item;
    if (field) {
        tp_yaml_join(q, p, field);
        strcpy(p, q);
        at = item ? tp_yaml_lookup(item, field, true) : NULL;
    }
    return tp_yaml_fail(y, at ? at : list, p, "node %d: the fleet has nodes 0 to %d", v, n - 1);
}

/* a fault's rail (field rail of list key's item i) on the fabric's rails */
static int rail_check(struct tp_yaml *y, const node *map, const char *name, int i, int rail,
                      int rails)
{
    if (rail < rails)
        return 0;
    const node *l = tp_yaml_lookup(map, name, true);
    const node *item = l && (size_t)i < l->n ? l->kid[i] : l;
    const node *at = item ? tp_yaml_lookup(item, "rail", true) : NULL;
    char p[TP_YAML_PATH_LEN], q[TP_YAML_PATH_LEN];
    tp_yaml_join_index(p, name, (size_t)i);
    tp_yaml_join(q, p, "rail");
    if (rails > 1)
        return tp_yaml_fail(y, at ? at : item, q, "rail %d: the fabric has rails 0 to %d", rail,
                            rails - 1);
    return tp_yaml_fail(y, at ? at : item, q,
                        "rail %d: the fabric has one rail, 0 (fabric: {per_leaf, spines, "
                        "rails: N} for more)", rail);
}

/* the switch faults on the fabric: its leaves, spines and rails, and a
 * fabric at all */
static int fabric_check(struct tp_yaml *y, const node *map, const FL *f)
{
    int nl = f->fabric.per_leaf > 0 ? (f->n + f->fabric.per_leaf - 1) / f->fabric.per_leaf : 0;
    int nr = nl > 0 && f->fabric.rails > 1 ? f->fabric.rails : 1;
    char p[TP_YAML_PATH_LEN];
    const char *keys[2] = {"slow_switches", "slow_uplinks"};
    int counts[2] = {f->nswitches, f->nuplinks};
    for (int k = 0; k < 2; k++) {
        const node *l = tp_yaml_lookup(map, keys[k], true);
        if (counts[k] && nl == 0)
            return tp_yaml_fail(y, l, keys[k], "no fabric to plant it on (fabric: {per_leaf: 32, "
                                "spines: 4})");
        for (int i = 0; i < counts[k]; i++) {
            int leaf = k ? f->slow_uplink[i].leaf : f->slow_switch[i].leaf;
            const node *item = l && (size_t)i < l->n ? l->kid[i] : l;
            tp_yaml_join_index(p, keys[k], (size_t)i);
            if (leaf >= nl)
                return tp_yaml_fail(y, item, p, "leaf %d: the fabric has leaves 0 to %d", leaf,
                                    nl - 1);
            if (k && f->slow_uplink[i].spine >= f->fabric.spines)
                return tp_yaml_fail(y, item, p, "spine %d: the fabric has spines 0 to %d",
                                    f->slow_uplink[i].spine, f->fabric.spines - 1);
            int rc = rail_check(y, map, keys[k], i,
                                k ? f->slow_uplink[i].rail : f->slow_switch[i].rail, nr);
            if (rc)
                return rc;
        }
    }
    for (int i = 0; i < f->ncables; i++) {
        int rc = rail_check(y, map, "bad_cables", i, f->cable[i].rail, nr);
        if (rc)
            return rc;
    }
    return 0;
}

static int fleet_check(struct tp_yaml *y, const node *map, const node *at, const char *path,
                       void *base, uint64_t seen)
{
    (void)at, (void)path, (void)seen;
    FL *f = base;
    int rc = 0;
    const node *l = tp_yaml_lookup(map, "slow_nodes", true);
    for (int i = 0; rc == 0 && i < f->nslow; i++)
        rc = below_n(y, l, (size_t)i, "node", f->slow[i].node, f->n, "slow_nodes");
    l = tp_yaml_lookup(map, "slow_links", true);
    for (int i = 0; rc == 0 && i < f->nlinks; i++) {
        if (f->link[i].a < 0)
            continue;
        rc = below_n(y, l, (size_t)i, "a", f->link[i].a, f->n, "slow_links");
        if (rc == 0)
            rc = below_n(y, l, (size_t)i, "b", f->link[i].b, f->n, "slow_links");
    }
    l = tp_yaml_lookup(map, "bad_cables", true);
    for (int i = 0; rc == 0 && i < f->ncables; i++)
        rc = below_n(y, l, (size_t)i, "node", f->cable[i].node, f->n, "bad_cables");
    rc = rc ? rc : fabric_check(y, map, f);
    l = tp_yaml_lookup(map, "missing", true);
    for (int i = 0; rc == 0 && i < f->nmissing; i++)
        rc = below_n(y, l, (size_t)i, NULL, f->missing[i], f->n, "missing");
    l = tp_yaml_lookup(map, "dies", true);
    for (int i = 0; rc == 0 && i < f->ndies; i++)
        rc = below_n(y, l, (size_t)i, "node", f->dies[i].node, f->n, "dies");
    return rc;
}

int tp_triage_fleet_load(const char *path, struct tp_triage_fleet *f, tp_error *err)
{
    memset(f, 0, sizeof *f);
    if (!path || !*path)
        return tp_error_set(err, TP_EUSAGE, "fleet file: no path given");
    struct tp_yaml y;
    int rc = tp_yaml_open(&y, path, "fleet", err);
    if (rc == 0 && !y.root)
        rc = tp_error_set(err, TP_EUSAGE, "%s:1:1: empty document: a fleet file needs nodes:",
                          path);
    else if (rc == 0 && y.root->type != TP_YAML_N_MAP)
        rc = tp_yaml_fail(&y, y.root, "", "expected a mapping (nodes:, slow_nodes: ...), found %s",
                          tp_yaml_type_name(&y, y.root));
    if (rc == 0)
        rc = tp_yaml_walk(&y, y.root, y.root, "", &top_tbl, f);
    tp_yaml_close(&y);
    return rc;
}
