/* What the files of the isolation share (isolate.c, iso_common.c and the
 * rows iso_<kind>.c): an action is one suspect being measured again; its
 * kind is a row of the table in isolate.c that schedules its tests and
 * takes their results. */
#ifndef TP_TRIAGE_ISOLATE_INT_H
#define TP_TRIAGE_ISOLATE_INT_H

#include "triage_int.h"

/* the rows' indices in isolate.c's table */
enum tp__akind {
    TP__A_NODE, TP__A_LINK, TP__A_BISECT, TP__A_MEMBERS, TP__A_PROBE, TP__A_LEAF, TP__A_KINDS
};

/* A suspect's sequential test (sprt.c): its measurements alone, as
 * ratios to their round's reference, and the log likelihood ratio. */
struct tp__sprt {
    float r[TP_TRIAGE_MAX_REPEATS];
    float sigma;  /* the spread the last measurement was judged with */
    float effect; /* H1: this much slower (0: set at the first measurement) */
    float floor;  /* named only with the mean past 1 + this (0: min_effect) */
    float alpha;  /* its false-name bound (0: the run's share, t->alpha_each) */
    int repeats;  /* its measurements at most (0: tp_triage_opts.repeats) */
    double llr, sum;
    int n;
};

enum tp__sprt_state { TP__SPRT_MORE, TP__SPRT_SLOW, TP__SPRT_SOUND, TP__SPRT_UNDECIDED };

/* Add measurement r (a ratio to its reference) judged with spread sigma. */
void tp__triage_sprt_add(const tp_triage *t, struct tp__sprt *s, double r, double sigma);
/* Slow, sound, undecided after the repeats allowed, or more to measure:
 * with steps the measurements taken (sprt_state) or the rounds (an
 * action that measures many pairs a round: three rounds at least to name,
 * repeats rounds at most). */
enum tp__sprt_state tp__triage_sprt_state(const tp_triage *t, const struct tp__sprt *s);
enum tp__sprt_state tp__triage_sprt_decide(const tp_triage *t, const struct tp__sprt *s, int steps);
/* The mean of the ratios; the mean at which n of them would name. */
double tp__triage_sprt_mean(const struct tp__sprt *s);
double tp__triage_sprt_bar(const tp_triage *t, const struct tp__sprt *s);
/* {"test": "sprt", "ratios", "effect", "llr", "accept", "reject", "alpha",
 * "beta", "sigma"}: the confidence behind a verdict. */
json_t *tp__triage_sprt_json(const tp_triage *t, const struct tp__sprt *s);

struct tp__action {
    struct tp__action *next, *parent;
    enum tp__akind kind;
    bool group_mode, done, named_any;
    bool later;  /* scheduled after every other action of a round (a side probe) */
    bool first;  /* scheduled before every other (a leaf's) */
    bool cancelled; /* ended unnamed: a named leaf explains it */
    bool told;      /* its parent was told it settled */
    bool deferred;  /* LINK (with a topology): slow, its ends sound: put to its leaves */
    bool on_set; /* set holds suspect nodes (bisect, members), not edges (probe) */
    int ends;    /* nodes it is about: 1 (a) or 2 (a, b); 0: its set */
    int step, retries, children;
    int n;    /* BISECT, MEMBERS: set size; PROBE: edges (set holds 2 per edge) */
    int *set;
    int a, b; /* NODE: a; LINK: a, b */
    double res[4];
    int got;  /* LINK ends, BISECT halves: how many came back */
    int nused, used[TP_TRIAGE_MAX_REPEATS + 2]; /* partners it has had */
    struct tp__sprt sprt; /* NODE, LINK: its measurements alone; LEAF: across its uplinks */
    struct tp__sprt sprt2; /* LEAF: within it */
    int rounds[2];        /* LEAF: rounds run across, within */
    bool alone_done;      /* LINK: slow alone, its ends next; LEAF: slow across, within next */
    /* LEAF on a rail-optimised topology: the rails it may still be on (a
     * bit each), what was found before its rail (switch or uplinks: the
     * rail search runs), the search's two halves of those rails, their
     * round's sums, and the last half found slow */
    uint64_t rails;
    uint8_t found;
    struct tp__sprt half[2], on_rail;
    double hres[2][4];
    bool needs_all;       /* a child given up gives this one up too (LINK) */
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
    /* the last of its child node actions settled (NULL: it has none;
     * isolate.c tells it, as it records their results) */
    int (*children_done)(tp_triage *t, struct tp__action *a);
};



extern const struct tp__triage_iso_kind tp__triage_iso_node, tp__triage_iso_link,
    tp__triage_iso_bisect, tp__triage_iso_members, tp__triage_iso_probe, tp__triage_iso_leaf;

#define TP__ISO_REFS 3 /* reference groups per size and round */
#define TP__ISO_RETRIES 3
#define TP__ISO_PAIR_REFS 8 /* reference pairs in a round of pairs alone */
#define TP__ISO_PAIR_REFS_MAX 256 /* ... in a leaf's round, TP__ISO_LEAF_REFS a pair of it */
#define TP__ISO_LEAF_REFS 4

/* ---- iso_common.c ---- */

bool tp__triage_iso_alive(const tp_triage *t, int v);
bool tp__triage_iso_is_free(const tp_triage *t, int v); /* alive and in no test of this round */
void tp__triage_iso_take(tp_triage *t, int v);
void tp__triage_iso_give_back(tp_triage *t, const int *v, int n); /* -1s skipped */

/* New actions (TP_ENOMEM). A node action with a parent counts as its child. */
int tp__triage_iso_node_action(tp_triage *t, int s, bool group_mode, struct tp__action *parent);
int tp__triage_iso_link_action(tp_triage *t, int a, int b, double probed);
/* leaf switch l (a switch index), once */
int tp__triage_iso_leaf_action(tp_triage *t, int l);
/* links (v[2i], v[2i+1]), i < edges; later: after every other action */
int tp__triage_iso_probe_action(tp_triage *t, const int *v, int edges, bool later);

/* A free known-good node, taken and added to a's partners: one a never
 * had (one it had when no other is left), one that never met s in the
 * screen, else the one whose screen pairs with s were the least slow;
 * -2 when none is free in this round, -1 when there is none. */
int tp__triage_iso_partner(tp_triage *t, int s, struct tp__action *a);

/* Append a test of a's, its step, to t->cur. */
void tp__triage_iso_test_of(tp_triage *t, bool group, const int *v, int n, struct tp__action *a,
                     int step);
void tp__triage_iso_want_refs(struct tp__triage_iso_sizes *z, int size);

/* Give a up: its nodes not named stay suspect; its parent counts it. */
void tp__triage_iso_unresolved(tp_triage *t, struct tp__action *a);


/* Leaf l named slow (its switch, or its uplinks): the actions it explains
 * end unnamed (a node under it, a link with an end under it: across it
 * for uplinks), their nodes left to tp__triage_leaves_finish. */
void tp__triage_iso_explained(tp_triage *t, int l, bool uplinks);

/* Which rail of a rail-optimised group's leaves a named one is on: rail
 * (found by the tests pinned to it, test), or -1 with the rails it may be
 * on and why it was not told apart. */
struct tp__rail_found {
    int rail;
    struct tp__sprt test;
    uint64_t rails;
    const char *why;
};

/* Name leaf switch l (LEAF_SWITCH) or its uplinks (LEAF_UPLINK) by its
 * sequential tests across its uplinks and within it (NULL: none ran), on
 * its rail (NULL: a topology of one rail, or a leaf of every rail). */
void tp__triage_name_leaf(tp_triage *t, int l, enum tp__leaf_state st, const struct tp__sprt *across,
                          const struct tp__sprt *within, const struct tp__rail_found *rail);

/* The spread of the figures a test of that shape is judged by. */
double tp__triage_iso_spread(const tp_triage *t, bool group);

#endif
