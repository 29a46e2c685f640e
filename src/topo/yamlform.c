/* trainpath's YAML form of a topology (docs/topology.md):
 *
 *     rails: 2                          # optional, 1 to 64 (default 1)
 *     nodes: "gpu[000-127]"             # optional: every node, in order
 *     leaves:
 *       - {name: leaf0, nodes: "gpu[000-031]", rail: 0, up: "spine[0-3]"}
 *     switches:                         # optional: switches above switches
 *       - {name: "spine[0-3]", up: [core0, core1]}
 *
 * One table of keys per mapping, walked by tp_yaml, so every mistake of
 * shape reads "FILE:LINE:COL: KEY.PATH: message"; the values are stashed
 * first and read in a fixed order (the node list, the leaves, the switches
 * above) whatever order the file gives the keys in. A switch named in an
 * up: list needs no entry of its own: only one that has switches above it
 * does. Slurm's own topology.yaml (a sequence of topologies) is refused by
 * name. */
#include <stddef.h>
#include <string.h>

#include "tp/yaml.h"
#include "topo_int.h"

typedef struct tp_yaml_key key;
typedef struct tp_yaml_table table;
typedef struct tp_yaml_node node;

struct top {
    unsigned rails;
    const node *nodes, *leaves, *switches;
};

struct leaf {
    char name[TP_TOPOLOGY_NAME_MAX + 1];
    double rail;
    const node *nodes, *up;
};

struct upper {
    const node *name, *up;
};

/* A value kept as its node, read once the whole file is walked. */
static int stash(struct tp_yaml *y, const key *k, const node *v, const char *path, void *base)
{
    (void)y, (void)path;
    memcpy((char *)base + k->off, &v, sizeof v);
    return 0;
}

static const struct tp_yaml_range rails_range = {1, TP_TOPOLOGY_MAX_RAILS, false,
                                                 "must be between 1 and 64"};
static const struct tp_yaml_range rail_range = {0, TP_TOPOLOGY_MAX_RAILS - 1, false,
                                                "must be between 0 and 63"};

/* clang-format off */
static const key top_keys[] = {
    {.name = "rails", .kind = TP_YAML_UINT, .off = offsetof(struct top, rails),
     .range = &rails_range, .def = 1, .what = "a rail count", .eg = "1, 8"},
    {.name = "nodes", .kind = TP_YAML_CUSTOM, .off = offsetof(struct top, nodes), .read = stash},
    {.name = "leaves", .kind = TP_YAML_CUSTOM, .off = offsetof(struct top, leaves), .read = stash,
     .flags = TP_YAML_REQUIRED},
    {.name = "switches", .kind = TP_YAML_CUSTOM, .off = offsetof(struct top, switches),
     .read = stash},
};
static const table top_tbl = {top_keys, TP_YAML_NKEYS(top_keys), NULL, NULL};

static const key leaf_keys[] = {
    {.name = "name", .kind = TP_YAML_STR, TP_YAML_STR_FIELD(struct leaf, name),
     .flags = TP_YAML_REQUIRED},
    {.name = "nodes", .kind = TP_YAML_CUSTOM, .off = offsetof(struct leaf, nodes), .read = stash,
     .flags = TP_YAML_REQUIRED},
    {.name = "rail", .kind = TP_YAML_INT, .off = offsetof(struct leaf, rail), .range = &rail_range,
     .def = -1, .what = "a rail number", .eg = "0, 7"},
    {.name = "up", .kind = TP_YAML_CUSTOM, .off = offsetof(struct leaf, up), .read = stash},
};
static const table leaf_tbl = {leaf_keys, TP_YAML_NKEYS(leaf_keys), NULL, NULL};

static const key upper_keys[] = {
    {.name = "name", .kind = TP_YAML_CUSTOM, .off = offsetof(struct upper, name), .read = stash,
     .flags = TP_YAML_REQUIRED},
    {.name = "up", .kind = TP_YAML_CUSTOM, .off = offsetof(struct upper, up), .read = stash,
     .flags = TP_YAML_REQUIRED},
};
static const table upper_tbl = {upper_keys, TP_YAML_NKEYS(upper_keys), NULL, NULL};
/* clang-format on */

enum use { USE_LIST, USE_NODES, USE_UP, USE_UPPER };

struct reader {
    struct tp_yaml y;
    struct tp__topo_build b;
    const node *up; /* USE_UPPER: the up list of the switches named */
    const char *up_path;
    struct tp__topo_pos name_at; /* the hostlist being read: where it is */
};

static int hostlists(struct reader *r, const node *v, const char *path, enum use use, int sw);

/* A switch of a switches: entry's name: defined, with its up list. */
static int on_upper(void *user, const char *name, size_t off)
{
    (void)off;
    struct reader *r = user;
    int sw, rc = tp__topo_switch(&r->b, name, r->name_at, -1, false, 0, &sw);
    return rc ? rc : hostlists(r, r->up, r->up_path, USE_UP, sw);
}

/* One hostlist v (a non-null scalar) at path, put to use. */
static int one(struct reader *r, const node *v, const char *path, enum use use, int sw)
{
    int p, rc = tp__topo_path(&r->b, path, &p);
    if (rc)
        return tp_error_set(r->y.err, rc, "%s: out of memory", r->y.file);
    struct tp__topo_pos at = {v->line, v->col, p};
    r->name_at = at;
    switch (use) {
    case USE_LIST: return tp__topo_node_list(&r->b, v->text, at);
    case USE_NODES: return tp__topo_nodes(&r->b, sw, v->text, at);
    case USE_UP: return tp__topo_links(&r->b, sw, v->text, at, true);
    case USE_UPPER: return tp__topo_each(&r->b, v->text, at, on_upper, r);
    }
    return 0;
}

/* v: a hostlist, or a sequence of them. */
static int hostlists(struct reader *r, const node *v, const char *path, enum use use, int sw)
{
    if (v->type == TP_YAML_N_SCALAR && !v->null)
        return one(r, v, path, use, sw);
    if (v->type != TP_YAML_N_SEQ || v->n == 0)
        return tp_yaml_fail(&r->y, v, path,
                            "expected a hostlist (e.g. \"gpu[000-031]\") or a sequence of them, "
                            "found %s",
                            v->type == TP_YAML_N_SEQ ? "an empty sequence"
                                                     : tp_yaml_type_name(&r->y, v));
    char p[TP_YAML_PATH_LEN];
    for (size_t i = 0; i < v->n; i++) {
        const node *e = v->kid[i];
        tp_yaml_join_index(p, path, i);
        if (e->type != TP_YAML_N_SCALAR || e->null)
            return tp_yaml_fail(&r->y, e, p, "expected a hostlist (e.g. \"spine[0-3]\"), found %s",
                                tp_yaml_type_name(&r->y, e));
        int rc = one(r, e, p, use, sw);
        if (rc)
            return rc;
    }
    return 0;
}

/* list: a non-empty sequence of mappings, at key name. */
static int sequence(struct reader *r, const node *list, const char *name, const char *eg)
{
    if (list->type == TP_YAML_N_SEQ && list->n > 0)
        return 0;
    return tp_yaml_fail(&r->y, list, name, "expected a sequence of %s, e.g. %s, found %s", name, eg,
                        list->type == TP_YAML_N_SEQ ? "an empty one"
                                                    : tp_yaml_type_name(&r->y, list));
}

static int leaves(struct reader *r, const node *list, int rails)
{
    int rc = sequence(r, list, "leaves", "[{name: leaf0, nodes: \"gpu[000-031]\", up: spine0}]");
    char path[TP_YAML_PATH_LEN], p[TP_YAML_PATH_LEN];
    for (size_t i = 0; rc == 0 && i < list->n; i++) {
        const node *m = list->kid[i];
        struct leaf l = {0};
        tp_yaml_join_index(path, "leaves", i);
        rc = tp_yaml_walk(&r->y, m, m, path, &leaf_tbl, &l);
        if (rc == 0 && l.rail >= rails) {
            tp_yaml_join(p, path, "rail");
            rc = tp_yaml_fail(&r->y, tp_yaml_lookup(m, "rail", true), p,
                              "rail %d: the rails are 0 to %d (rails: %d)", (int)l.rail, rails - 1,
                              rails);
        }
        int sw = -1, pi = -1;
        if (rc == 0) {
            tp_yaml_join(p, path, "name");
            rc = tp__topo_path(&r->b, p, &pi);
        }
        if (rc == 0) {
            const node *n = tp_yaml_lookup(m, "name", true);
            rc = tp__topo_switch(&r->b, l.name, (struct tp__topo_pos){n->line, n->col, pi},
                                 (int)l.rail, true, 0, &sw);
        }
        if (rc == 0) {
            tp_yaml_join(p, path, "nodes");
            rc = hostlists(r, l.nodes, p, USE_NODES, sw);
        }
        if (rc == 0 && l.up) {
            tp_yaml_join(p, path, "up");
            rc = hostlists(r, l.up, p, USE_UP, sw);
        }
    }
    return rc;
}

static int uppers(struct reader *r, const node *list)
{
    int rc = sequence(r, list, "switches", "[{name: \"spine[0-3]\", up: [core0, core1]}]");
    char path[TP_YAML_PATH_LEN], p[TP_YAML_PATH_LEN], up[TP_YAML_PATH_LEN];
    for (size_t i = 0; rc == 0 && i < list->n; i++) {
        const node *m = list->kid[i];
        struct upper u = {0};
        tp_yaml_join_index(path, "switches", i);
        rc = tp_yaml_walk(&r->y, m, m, path, &upper_tbl, &u);
        if (rc == 0) {
            tp_yaml_join(p, path, "name");
            tp_yaml_join(up, path, "up");
            r->up = u.up;
            r->up_path = up;
            rc = hostlists(r, u.name, p, USE_UPPER, -1);
        }
    }
    return rc;
}

/* The root: a mapping; Slurm's topology.yaml (a sequence of topologies,
 * each with topology:) refused by name. */
static int root(struct reader *r)
{
    const node *v = r->y.root;
    if (!v)
        return tp_error_set(r->y.err, TP_EUSAGE,
                            "%s:1:1: empty document: a topology file needs leaves:", r->y.file);
    if (v->type == TP_YAML_N_SEQ && v->n > 0 && tp_yaml_lookup(v->kid[0], "topology", false))
        return tp_yaml_fail(&r->y, v, "",
                            "this is Slurm's topology.yaml (a sequence of topologies), which "
                            "trainpath does not read: give topology.conf, or the form of "
                            "docs/topology.md");
    if (v->type != TP_YAML_N_MAP)
        return tp_yaml_fail(&r->y, v, "", "expected a mapping (leaves:, rails:, ...), found %s",
                            tp_yaml_type_name(&r->y, v));
    return 0;
}

int tp__topo_read_yaml(const char *file, struct tp_topology **out, tp_error *err)
{
    struct reader r;
    struct top top = {0};
    tp__topo_build_init(&r.b, file, err);
    int rc = tp_yaml_open(&r.y, file, "topology", err);
    if (rc == 0)
        rc = root(&r);
    if (rc == 0)
        rc = tp_yaml_walk(&r.y, r.y.root, r.y.root, "", &top_tbl, &top);
    r.b.nrails = (int)top.rails;
    if (rc == 0 && top.nodes)
        rc = hostlists(&r, top.nodes, "nodes", USE_LIST, -1);
    if (rc == 0)
        rc = leaves(&r, top.leaves, (int)top.rails);
    if (rc == 0 && top.switches)
        rc = uppers(&r, top.switches);
    if (rc == 0)
        rc = tp__topo_finish(&r.b, true, out);
    tp_yaml_close(&r.y);
    tp__topo_build_free(&r.b);
    return rc;
}
