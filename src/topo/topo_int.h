/* What the files of src/topo/ share (include/tp/topology.h): the hostlist
 * expansion, the name indexes, and the builder both readers fill (switches,
 * nodes, the links named between them, each with the place in the file it
 * came from), which checks the whole and makes the struct tp_topology. */
#ifndef TP_TOPO_INT_H
#define TP_TOPO_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "tp/topology.h"

/* ---- hostlist.c: Slurm's hostlist expressions ---- */

/* Called for each name in order; at is the offset in the expression of the
 * item that made it. Returns 0, or an error code that stops the expansion
 * and is returned. */
typedef int (*tp__topo_name_fn)(void *user, const char *name, size_t at);

struct tp__topo_hl_error {
    size_t at;     /* offset in the expression of the mistake */
    char msg[200]; /* what is wrong, naming the expression's part */
};

/* Expand expr ("tux[0-3,7],s[00-15]", "rack[0-1]_blade[0-3]"; items apart
 * by commas or whitespace, each name at most TP_TOPOLOGY_NAME_MAX
 * characters) into its names, calling fn for each, at most max names in
 * all (counted before any is made). Returns 0; TP_EUSAGE with e filled
 * (a range that runs backwards or has no end, a bracket unclosed, nested or
 * stray, a character other than digits, '-' and ',' in brackets, a number
 * of more than 18 digits, a name too long, more than max names, no name at
 * all); TP_ENOMEM; or fn's error. */
int tp__topo_hostlist(const char *expr, size_t max, tp__topo_name_fn fn, void *user,
                      struct tp__topo_hl_error *e);

/* ---- names.c: name -> index ---- */

/* The name of item i of whatever the index is over. */
typedef const char *(*tp__topo_name_of)(const void *ctx, int i);

/* An open-addressing table of indices, hashed by name. Zero it to start. */
struct tp__topo_names {
    int *slot; /* index + 1; 0: empty */
    size_t cap;
    int n;
};

/* The index whose name (by of) is name, or -1. */
int tp__topo_names_find(const struct tp__topo_names *h, const char *name, tp__topo_name_of of,
                        const void *ctx);

/* Add index i (its name by of; not there yet). 0 or TP_ENOMEM. */
int tp__topo_names_add(struct tp__topo_names *h, int i, tp__topo_name_of of, const void *ctx);

void tp__topo_names_free(struct tp__topo_names *h);

/* ---- the private part of a struct tp_topology ---- */

struct tp__topo_priv {
    struct tp__topo_names node_ix, sw_ix; /* empty in a generated topology */
    char *pool;                           /* every name, NUL-terminated */
    int *edges;                           /* the storage of every switch's up */
    /* Switch s's ancestors (every switch above it, at any height), sorted,
     * when they are more than its up: anc[anc_at[s]] .. anc[anc_at[s] +
     * anc_n[s] - 1]; anc_n[s] == 0: they are its up. NULL: none stored. */
    size_t *anc_at;
    int *anc_n, *anc;
    int nleaves; /* a generated topology's spines are named from this index on */
};

/* ---- build.c: the readers' common builder ---- */

/* A place in the file: line and column (1-based), and the key path of the
 * YAML form (an index into the builder's paths; -1: none). */
struct tp__topo_pos {
    int line, col, path;
};

struct tp__topo_bsw; /* a switch as the file gives it */
struct tp__topo_link;

struct tp__topo_build {
    const char *file; /* for messages */
    tp_error *err;
    int nrails;   /* set before any node is added */
    bool offsets; /* an item's offset in a hostlist adds to its column (topology.conf) */
    char *pool;   /* every name; the others hold offsets into it */
    size_t pool_len, pool_cap;
    struct tp__topo_bsw *sw;
    int nsw, capsw;
    struct tp__topo_names sw_ix, node_ix;
    size_t *node;                 /* offsets into pool */
    struct tp__topo_pos *node_at; /* where each node was first given */
    int *leaf;                    /* [node * nrails + rail], -1: none yet */
    int nnodes, capnodes;
    bool closed; /* a list of every node was given: a leaf's node must be in it */
    struct tp__topo_link *link;
    int nlink, caplink;
    char **paths;
    int npaths, cappaths;
};

/* Start b (zeroed) for file, errors into err, one rail. */
void tp__topo_build_init(struct tp__topo_build *b, const char *file, tp_error *err);

void tp__topo_build_free(struct tp__topo_build *b);

/* Keep path (a YAML key path) for messages: its index in *out. 0 or
 * TP_ENOMEM. */
int tp__topo_path(struct tp__topo_build *b, const char *path, int *out);

/* Set b->err to "FILE:LINE:COL: [PATH: ]message" at at. Returns TP_EUSAGE. */
int tp__topo_fail(const struct tp__topo_build *b, struct tp__topo_pos at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Define switch name, given at at: a leaf (it has nodes) serving rail (-1:
 * every rail) or not. Its index in *idx. Refused: a name that is not one
 * name (empty, too long, with whitespace, '[', ']' or ','), a name
 * defined before. */
int tp__topo_switch(struct tp__topo_build *b, const char *name, struct tp__topo_pos at, int rail,
                    bool leaf, unsigned link_speed, int *idx);

/* Hand each name of hostlist expr, given at at, to fn (user its first
 * argument); a mistake in expr becomes "FILE:LINE:COL: bad hostlist
 * 'EXPR': what" (the column moved to the mistake when b->offsets). */
int tp__topo_each(struct tp__topo_build *b, const char *expr, struct tp__topo_pos at,
                  tp__topo_name_fn fn, void *user);

/* Put the nodes of hostlist expr, given at at, under leaf switch sw. */
int tp__topo_nodes(struct tp__topo_build *b, int sw, const char *expr, struct tp__topo_pos at);

/* The list of every node (the YAML form's nodes:), given before any leaf:
 * the nodes take its order, and a leaf's node must be in it. */
int tp__topo_node_list(struct tp__topo_build *b, const char *expr, struct tp__topo_pos at);

/* Switch sw names the switches of hostlist expr, given at at: as the
 * switches directly above it (up) or below it. Resolved by
 * tp__topo_finish. */
int tp__topo_links(struct tp__topo_build *b, int sw, const char *expr, struct tp__topo_pos at,
                   bool up);

/* The name of switch i in b (for messages of the readers). */
const char *tp__topo_switch_name(const struct tp__topo_build *b, int i);

/* Resolve the links (a name never defined: a switch of its own when
 * implicit, else an error), check the whole (a switch below itself, a
 * switch above a leaf that has nodes, a link given twice, a cycle, a node
 * without a leaf on a rail, no nodes, a non-leaf with nothing below it when
 * implicit), work out levels, rails and ancestors, and make *out. */
int tp__topo_finish(struct tp__topo_build *b, bool implicit, struct tp_topology **out);

/* Ancestors of the switches of t (t->sw, up and levels made): fills
 * t->priv's anc_*; TP_EUSAGE through err when there are too many. order
 * lists every switch, each after every switch above it. */
int tp__topo_ancestors(struct tp_topology *t, const int *order, tp_error *err, const char *file);

/* ---- the readers ---- */

/* topology.conf (conf.c) in buf (len bytes, NUL-terminated), read from
 * file. */
int tp__topo_read_conf(const char *file, const char *buf, size_t len, struct tp_topology **out,
                       tp_error *err);

/* The YAML form (yamlform.c) at file. */
int tp__topo_read_yaml(const char *file, struct tp_topology **out, tp_error *err);

#endif
