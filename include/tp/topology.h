/* A cluster's switch topology (docs/topology.md): which leaf switch each
 * node's NIC of each rail is cabled to, and which switches are above which,
 * for the fleet triage's planner and simulator.
 *
 *   sources    Slurm's topology.conf (the topology/tree plugin's SwitchName
 *              lines, hostlist expressions and all), trainpath's YAML form
 *              (leaves with their nodes, rails and the switches above), told
 *              apart by content; or a generated fat tree for the simulator.
 *   model      switches are numbered 0 .. nswitches-1 and nodes 0 .. nnodes-1;
 *              a leaf (level 0) has nodes, a switch at level L >= 1 has
 *              switches below it, the highest of them at level L-1 (levels
 *              are counted from the leaves up, as Slurm counts them). A node
 *              has one attachment per rail; in a rail-optimised fabric its
 *              NIC r goes to a leaf that serves rail r.
 *   paths      traffic between two leaves goes up to the lowest switches
 *              above both and down again; tp_topology_level says how high,
 *              tp_topology_uplinks which leaf-to-spine uplinks it can take.
 *
 * A topology is read-only once made: the queries may run from any thread. */
#ifndef TP_TOPOLOGY_H
#define TP_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "tp/error.h"

#define TP_TOPOLOGY_MAX_NODES 1000000    /* nodes of a topology, names a hostlist expands to */
#define TP_TOPOLOGY_MAX_SWITCHES 1000000 /* switches of a topology */
#define TP_TOPOLOGY_MAX_RAILS 64         /* NICs of a node on separate rails */
#define TP_TOPOLOGY_NAME_MAX 64          /* characters of a node or switch name (Slurm's limit) */

struct tp_topo_switch {
    char *name;          /* NULL in a generated topology: "leafN", "spineN" then
                          * (tp_topology_switch_name) */
    int level;           /* 0: a leaf (has nodes, or nothing below it); L: the highest
                          * switch below it is at L-1 */
    int rail;            /* a leaf: the rail it serves, -1 when every rail; above: the rail of
                          * every leaf below it when they share one, else -1 */
    unsigned link_speed; /* topology.conf's LinkSpeed= (Slurm: arbitrary units, unused);
                          * 0 when not given */
    int nup, *up;        /* the switches directly above it, in increasing index; up points into
                          * storage the topology owns (generated leaves share one array) */
};

struct tp_topology {
    int nnodes;
    char **node; /* node names, in the order first given; NULL in a generated
                  * topology (tp_topology_node_name: "nodeN") */
    int nrails;  /* >= 1: a node has one attachment per rail */
    int *leaf;   /* [node * nrails + rail]: the index of its leaf switch; never -1
                  * in a topology these functions make (every node has a leaf on
                  * every rail, or the file is refused) */
    int nswitches;
    struct tp_topo_switch *sw;
    int nlevels;                /* 1 + the highest level */
    struct tp__topo_priv *priv; /* private: the name indexes, the ancestors, the storage */
};

/* Read the topology at path: Slurm's topology.conf (SwitchName=NAME
 * [Switches=HOSTLIST] [Nodes=HOSTLIST] [LinkSpeed=N] lines, keys in any case,
 * "#" comments) or trainpath's YAML form (rails:, nodes:, leaves:, switches:;
 * docs/topology.md), told apart by the first line that is not blank or a
 * comment (KEY=VALUE: topology.conf). On success returns 0 and *out, which
 * the caller frees with tp_topology_free. On error returns TP_EUSAGE with
 * err saying "FILE:LINE:COL: message" (YAML: "FILE:LINE:COL: KEY.PATH:
 * message") where a place is known: an unreadable, empty or non-text file;
 * an unknown key; a duplicate switch; Nodes= and Switches= on one switch; a
 * Switches= naming a switch not defined, or itself; switches in a cycle; a
 * bad hostlist (a range that runs backwards, an unclosed bracket, over
 * TP_TOPOLOGY_MAX_NODES names); a node under two leaves of one rail; a node
 * with no leaf on some rail; Slurm's block or ring plugins' lines, or Slurm's
 * topology.yaml (not read: the message says so). TP_ENOMEM when memory runs
 * out. *out is NULL on error. */
int tp_topology_load(const char *path, struct tp_topology **out, tp_error *err);

/* A generated fat tree for the simulator: nodes nodes in groups of per_leaf
 * (the last group may be smaller); with rails == 1 one leaf a group, with
 * rails > 1 a rail-optimised fabric: rails leaves a group, leaf r of a group
 * serving rail r, a node's NIC r cabled to its group's rail-r leaf. Every
 * leaf goes up to every one of spines spines (level 1). Switches: the leaves
 * first, group by group and rail by rail (leaf g * rails + r), then the
 * spines; no names are stored (tp_topology_switch_name: "leafN", "spineN";
 * tp_topology_node_name: "nodeN"). Returns 0 and *out, or TP_EUSAGE naming
 * the argument out of range (nodes 1 to TP_TOPOLOGY_MAX_NODES, per_leaf >= 1,
 * rails 1 to TP_TOPOLOGY_MAX_RAILS, spines >= 0 and at least 1 when there
 * is more than one leaf, at most TP_TOPOLOGY_MAX_SWITCHES switches), or
 * TP_ENOMEM; *out is NULL on error. */
int tp_topology_fat_tree(int nodes, int per_leaf, int spines, int rails, struct tp_topology **out,
                         tp_error *err);

/* Free t and everything it holds. NULL is harmless. */
void tp_topology_free(struct tp_topology *t);

/* The index of the node called name, or -1 when there is none. In a
 * generated topology the names are "node0" ... (no leading zeros). */
int tp_topology_node(const struct tp_topology *t, const char *name);

/* The index of the switch called name, or -1 when there is none. In a
 * generated topology the names are "leaf0" ..., "spine0" .... */
int tp_topology_switch(const struct tp_topology *t, const char *name);

/* Node i's name: t->node[i], or "nodeI" written into buf (cap bytes) in a
 * generated topology. Returns the name, "" when i is out of range. */
const char *tp_topology_node_name(const struct tp_topology *t, int i, char *buf, size_t cap);

/* Switch i's name: its name, or "leafI" / "spineJ" (J counted from the
 * first spine) written into buf (cap bytes) in a generated topology.
 * Returns the name, "" when i is out of range. */
const char *tp_topology_switch_name(const struct tp_topology *t, int i, char *buf, size_t cap);

/* Whether nodes a and b are under the same leaf on rail (a == b: true).
 * False when an argument is out of range. */
bool tp_topology_same_leaf(const struct tp_topology *t, int a, int b, int rail);

/* How high traffic between nodes a and b on rail climbs: 0 when they share
 * their rail leaf (or a == b), L >= 1 when the lowest switches above both
 * their leaves are at level L (1: a common spine), -1 when no switch is
 * above both (the leaves are not joined: Slurm allows that) or an argument
 * is out of range. */
int tp_topology_level(const struct tp_topology *t, int a, int b, int rail);

/* One uplink: the cable from switch lower up to switch upper. */
struct tp_topo_uplink {
    int lower, upper;
};

/* The leaf-to-spine uplinks that traffic between nodes a and b on rail can
 * take (ECMP spreads a flow over them): from a's leaf, each uplink to a
 * switch that is, or is below, one of the lowest switches above both
 * leaves; then the same from b's leaf (the cables its traffic comes down).
 * In a two-level fat tree: a's leaf to each spine the two leaves share, then
 * b's leaf to the same. Writes at most cap of them to out (a's first, each
 * leaf's in increasing upper index) and returns how many there are (more
 * than cap when they did not fit): 0 when a and b share their leaf; -1
 * when tp_topology_level is -1. */
int tp_topology_uplinks(const struct tp_topology *t, int a, int b, int rail,
                        struct tp_topo_uplink *out, int cap);

/* t as a JSON object for documents: {"nodes": N, "rails": R, "levels": L,
 * "leaves": (switches at level 0), "spines": (at level 1), "switches":
 * [{"name", "level", "rail" (when >= 0), "link_speed" (when given),
 * "nodes": [names] (a leaf) or "switches": [names below it] (above)}]}, the
 * switches in index order, a leaf's nodes in node order. NULL when memory
 * runs out. */
json_t *tp_topology_json(const struct tp_topology *t);

#endif
