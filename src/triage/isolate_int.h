/* What the files of the isolation share (isolate.c, iso_common.c and the
 * rows iso_<kind>.c): an action is one suspect being measured again; its
 * kind is a row of the table in isolate.c that schedules its tests and
 * takes their results. */
#ifndef TP_TRIAGE_ISOLATE_INT_H
#define TP_TRIAGE_ISOLATE_INT_H

#include "triage_int.h"

/* the rows' indices in isolate.c's table */
enum tp__akind { TP__A_NODE, TP__A_LINK, TP__A_BISECT, TP__A_MEMBERS, TP__A_PROBE, TP__A_KINDS };

struct tp__action {
    struct tp__action *next, *parent;
    enum tp__akind kind;
    bool group_mode, done, named_any;
    bool later;  /* scheduled after every other action of a round (a side probe) */
    bool on_set; /* set holds suspect nodes (bisect, members), not edges (probe) */
    int ends;    /* nodes it is about: 1 (a) or 2 (a, b); 0: its set */
    int step, retries, children;
    int n;    /* BISECT, MEMBERS: set size; PROBE: edges (set holds 2 per edge) */
    int *set;
    int a, b; /* NODE: a; LINK: a, b */
    double res[4];
    int got;  /* LINK ends, BISECT halves: how many came back */
    int used[4];
    bool *edge_done;
};

/* The sizes of the reference groups a round needs. */
struct tp__triage_iso_sizes {
    int n, size[16];
};

/* A kind of action: schedule puts its tests of this round in t->cur when
 * its nodes are free (NULL: it has none of its own); result takes the
 * figure of its test step, as a ratio to the fleet's median (NAN: failed).
 * A round in which any action of a kind scheduled a test is labelled with
 * the lowest of their stages. */
struct tp__triage_iso_kind {
    enum tp_triage_stage stage;
    void (*schedule)(tp_triage *t, struct tp__action *a, struct tp__triage_iso_sizes *z);
    int (*result)(tp_triage *t, struct tp__action *a, int step, double r);
};

extern const struct tp__triage_iso_kind tp__triage_iso_node, tp__triage_iso_link, tp__triage_iso_bisect, tp__triage_iso_members,
    tp__triage_iso_probe;

#define TP__ISO_REFS 3 /* reference groups per size and round */
#define TP__ISO_RETRIES 3

/* ---- iso_common.c ---- */

bool tp__triage_iso_alive(const tp_triage *t, int v);
bool tp__triage_iso_is_free(const tp_triage *t, int v); /* alive and in no test of this round */
void tp__triage_iso_take(tp_triage *t, int v);
void tp__triage_iso_give_back(tp_triage *t, const int *v, int n); /* -1s skipped */

/* New actions (TP_ENOMEM). A node action with a parent counts as its child. */
int tp__triage_iso_node_action(tp_triage *t, int s, bool group_mode, struct tp__action *parent);
int tp__triage_iso_link_action(tp_triage *t, int a, int b, double probed);
/* links (v[2i], v[2i+1]), i < edges; later: after every other action */
int tp__triage_iso_probe_action(tp_triage *t, const int *v, int edges, bool later);

/* A free known-good node not yet used by a, taken: one that never met s
 * in the screen, else the one whose screen pairs with s were the least
 * slow; -2 when none is free in this round, -1 when there is none. */
int tp__triage_iso_partner(tp_triage *t, int s, const struct tp__action *a);

/* Append a test of a's, its step, to t->cur. */
void tp__triage_iso_test_of(tp_triage *t, bool group, const int *v, int n, struct tp__action *a,
                     int step);
void tp__triage_iso_want_refs(struct tp__triage_iso_sizes *z, int size);

/* Give a up: its nodes not named stay suspect; its parent counts it. */
void tp__triage_iso_unresolved(tp_triage *t, struct tp__action *a);

/* Members m all confirmed: none named, the links of their ring are probed. */
int tp__triage_iso_members_done(tp_triage *t, struct tp__action *m);

/* The spread of the figures a test of that shape is judged by. */
double tp__triage_iso_spread(const tp_triage *t, bool group);

#endif
