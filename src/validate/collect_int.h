/* What collect.c (rank 0 taking the nodes' results in) and finish.c (the
 * end: the fleet judged, the results folder written) share: what rank 0
 * holds, and a node's entry read once. Internal to src/validate/. */
#ifndef TP_VALIDATE_COLLECT_INT_H
#define TP_VALIDATE_COLLECT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "tp/error.h"
#include "validate_int.h"

/* fleet.jsonl as it is written, and what is read from its lines. */
struct tp__validate_fleet_out {
    FILE *f;             /* fleet.jsonl, as a temporary file beside it (NULL: none) */
    struct tp_atomic *a; /* ... its replacement, committed at the end */
    size_t lines;
    json_t *data;   /* tp_fleet's */
    json_t *matrix; /* {key: {"unit", "better", "values": [[a, b, value]]}} */
};

/* What rank 0 holds while the nodes' results come in. */
struct tp__validate_collect {
    struct tp__validate_ctx *c;
    const struct tp__validate_node *nodes;
    int n;
    json_t *index;    /* label -> rank */
    json_t *gathered; /* each node's entry, its documents written and dropped ("doc": true),
                         rank 0's whole; a pair's judged rows under "rows" */
    struct tp__validate_fleet_out fo;
    char fleet_path[TP__VALIDATE_PATH_MAX];
    struct tp__validate_hist hist;
    struct tp__validate_sdc *sdc; /* the nodes' SDC chains (sdc.c) */
    int rc;                       /* the first error taking a node's result in */
    tp_error err;
};

/* A node's entry as alloc.c sends it: {"label", "host", "addr", "tests",
 * "pairs", "groups"}. */
struct tp__validate_entry {
    const char *label, *host, *addr;
    json_t *tests, *pairs, *groups; /* arrays of what it ran (struct tp__validate_ran) */
};

/* Read g, a node's entry, into x (its strings and arrays are g's). */
void tp__validate_entry_read(const json_t *g, struct tp__validate_entry *x);

/* One thing a node ran: a test of its own, a pair measurement or its part
 * of a group test (tp__validate_ran's {"test", "status", "summary",
 * "seconds", "doc", "counters"?, "link"?}; a pair's "a" and "b"; the
 * rounds' "round", "stage" and "sub"; the judged rows collect_add put in
 * "rows"). The values are the entry's own, copied out as they are. */
struct tp__validate_ran {
    const char *test, *status; /* status as sent; st its value */
    enum tp__validate_status st;
    const char *a, *b, *sub;
    json_t *summary, *seconds, *counters, *round, *stage, *rows;
    json_t *doc; /* an object (held), true (written and dropped) or null */
    bool has_doc;
};

/* Read e, one thing a node ran, into x (its values are e's). */
void tp__validate_ran_read(const json_t *e, struct tp__validate_ran *x);

/* The folder of pair measurement x under the results folder top, or
 * relative to it (top NULL: "pairs/A--B", "pairs/A--B/SUB"). */
void tp__validate_pair_dir(const char *top, const struct tp__validate_ran *x, char *out,
                           size_t cap);

/* The judged rows of pair measurement x (its "rows") as pair lines of
 * fo, and into its matrix (index: label -> rank). Returns 0 or the first
 * error. */
int tp__validate_pair_rows(struct tp__validate_fleet_out *fo, const json_t *index,
                           const struct tp__validate_ran *x, tp_error *err);

/* fleet.jsonl: its temporary file committed over it. */
int tp__validate_fleet_commit(struct tp__validate_collect *k, tp_error *err);

#endif
