/* What the files of src/triage/ share: the tier rows, the driver's state,
 * the random draws, and the steps between them (planned rounds, the screen
 * judgement, the isolation, the verdicts). */
#ifndef TP_TRIAGE_INT_H
#define TP_TRIAGE_INT_H

#include <stdint.h>

#include "tp/triage.h"

/* ---- tiers (tier.c, one row per tier_<name>.c) ---- */

/* A tier: for each stage it runs, how many rounds that takes for m nodes
 * (NULL: the stage is not run); the stages run in enum order. */
struct tp__triage_tier {
    const char *name;
    int (*rounds[TP_TRIAGE_NSTAGES])(int m, const struct tp_triage_opts *o);
};

extern const struct tp__triage_tier tp__triage_tier_prolog, tp__triage_tier_screen,
    tp__triage_tier_full;

/* The row of tier name (NULL: screen), or NULL when there is none. */
const struct tp__triage_tier *tp__triage_tier_find(const char *name);

/* Rounds of stage s in tier t for m nodes (0 when it is not run). */
int tp__triage_stage_rounds(const struct tp__triage_tier *t, enum tp_triage_stage s, int m,
                            const struct tp_triage_opts *o);

/* ---- the stages' rounds (stages.c: the rows are made of these) ---- */

int tp__triage_one_round(int m, const struct tp_triage_opts *o);     /* 1 */
int tp__triage_ring_rounds(int m, const struct tp_triage_opts *o);   /* 1 to 3 */
int tp__triage_groups_rounds(int m, const struct tp_triage_opts *o); /* 1, or 0: too few */
int tp__triage_matchings(int m, const struct tp_triage_opts *o);     /* k, or fewer partners */
int tp__triage_circle_rounds(int m, const struct tp_triage_opts *o); /* m - 1, or m */
/* The groups pass' group size for m nodes (0: no groups pass). */
int tp__triage_groups_size(int m, const struct tp_triage_opts *o);

/* The isolation rounds one fault takes at most under o (its repeats):
 * tp_triage_isolation_bound at o's options; with a topology, a leaf's
 * too when more (its test across, within, and on R rails pinned
 * ceil(log2 R) steps of its rail search: leaf_repeats x (1 + steps) +
 * repeats + 1). */
int tp__triage_iso_bound(int n, const struct tp_triage_opts *o);
/* The rounds a leaf's sequential test across its uplinks, or a step of
 * its rail search, may take: twice o's repeats, at most
 * TP_TRIAGE_MAX_REPEATS (a fault of one uplink of U slows only a share of
 * the leaf's pairs, so its test needs more rounds than a node's). */
int tp__triage_leaf_repeats(const struct tp_triage_opts *o);

/* o with its zeros made the defaults. */
void tp__triage_defaults(const struct tp_triage_opts *o, struct tp_triage_opts *out);

/* ---- random draws (rand.c) ---- */

uint64_t tp__triage_rand(uint64_t *s);        /* splitmix64 */
double tp__triage_uniform(uint64_t *s);       /* [0, 1) */
double tp__triage_normal(uint64_t *s);        /* standard normal */
void tp__triage_shuffle(int *v, int n, uint64_t *s);

/* ---- the driver's state (triage.c; what it measured: store.c) ---- */

struct tp__pair { /* one pair measurement */
    int a, b;
    float fig;
    uint8_t stage;
};

struct tp__group { /* one group measurement: nodes in tp_triage.gnodes */
    int off, n;
    float fig;
    uint8_t stage;
    bool ref; /* every node of it known good when it ran */
};

enum tp__status {
    ST_PASS, ST_SUSPECT, ST_SLOW, ST_LINK, ST_ERROR, ST_LOST, ST_MISSING,
    ST_CORRUPT, ST_UNDECIDED, /* the SDC screen's (tp_triage_verdict_as): never a triage's own */
    ST_SWITCH, ST_UPLINK,     /* behind a leaf switch, or a leaf's uplinks, named slow */
    ST_CABLE,                 /* verdicts only: slow, and its counters name its link */
};

struct tp__node {
    uint8_t status;
    uint8_t stage;       /* the last stage it took part in */
    bool contention;     /* slow in a loaded round, normal alone */
    bool in_action;      /* an isolation action is about it */
    int tests;           /* tests completed */
    int busy;            /* the round number it is in a test of */
    float ev_value, ev_median, ev_threshold; /* the evidence */
    uint8_t ev_stage;
    int ev_other;        /* the other end of its link, its leaf (ST_SWITCH, ST_UPLINK), or -1 */
    json_t *ev_conf;     /* the sequential test behind a name (sprt.c), or NULL */
    char *link_errors;   /* what its counters said of its link (tp_triage_link_errors), or NULL */
    int link_rail;       /* the rail of that link (-1: not known) */
    const char *lost_stage, *lost_what; /* lost outside the rounds (tp_triage_lose), or NULL */
    bool unfinished;     /* error: the run stopped before it was validated (tp_triage_stop) */
};

struct tp__action;

struct tp__ref { /* a group of known-good nodes: its figure per ring factor */
    int size;
    float norm;
};

/* A group's figure divided by the ring allreduce's 2(n-1)/n, so groups of
 * nearby sizes compare (store.c, as the rest of the figures read from
 * measurements). */
double tp__triage_norm(double fig, int n);

/* The median of the reference groups of size n measured so far (of any
 * size when none of n was; 0: none at all). */
double tp__triage_ref_median(const tp_triage *t, int n);
int tp__triage_add_ref(tp_triage *t, int n, double norm);

struct tp_triage {
    int n, m;                 /* nodes; nodes that joined */
    struct tp_triage_opts o;  /* with the defaults */
    const struct tp__triage_tier *tier;
    uint64_t rng;
    struct tp__node *node;
    int *order;               /* the ring order (the joined nodes, shuffled) */
    /* the planned rounds: stage and index within it, built when asked */
    int nplan, next_plan;
    uint8_t *plan_stage;
    int *plan_index;
    int *partners;            /* matchings: node -> partner per matching, -1 */
    /* the round being run */
    struct tp_triage_round cur;
    int cur_nnodes;
    int *cur_nodes;
    struct tp__action **cur_owner; /* per test: the action it serves (NULL: planned or ref) */
    int *cur_step;
    bool pending;
    int round_no;             /* rounds recorded, every stage */
    int rounds[TP_TRIAGE_NSTAGES];
    bool screened;            /* the tier's rounds are over and judged */
    bool done;
    int iso_rounds;
    /* measurements */
    struct tp__pair *pairs;
    int npairs, cap_pairs;
    struct tp__group *groups;
    int ngroups, cap_groups;
    int *gnodes;
    int ngnodes, cap_gnodes;
    int *adj_off, *adj;           /* per node, its screen pairs (indices into pairs) */
    struct tp__ref *refs;         /* reference groups' figures, by size */
    int nrefs, cap_refs;
    /* the fleet's figures */
    double pair_median, pair_spread; /* spread: 1.4826 MAD / median */
    double group_spread;
    /* isolation */
    struct tp__action *actions;   /* a list */
    int nactions;                 /* made so far */
    json_t *named;                /* what was named, in order */
    int *good;                    /* the known-good pool */
    int ngood;
    double alpha_each;        /* a suspect's share of the run's false-name bound */
    /* the switches (leaves.c; all NULL without a topology): per node and
     * rail its leaf (a switch index: leaf_of[v * nrails + r]), per switch
     * its nodes (leaf_nodes[leaf_off[L] .. leaf_off[L + 1]]), the lowest
     * switch over the same nodes (leaf_sib: a rail-optimised group's
     * leaves, one a rail, share it), what was found of it (enum
     * tp__leaf_state) and whether it was named for its group of nodes,
     * its rail not told apart (leaf_group) */
    int *leaf_of, *leaf_off, *leaf_nodes, *leaf_sib;
    uint8_t *leaf_state;
    bool *leaf_group;
    int nswitches, nrails;
    bool leaves_finished;         /* tp__triage_leaves_finish ran */
    int round_nref;                 /* reference pairs behind round_ref (0: the screen's) */
    double round_ref, round_spread; /* this isolation round's pair reference and the
                                       spread of a ratio to it (isolate.c) */
    double round_ref_excess; /* its reference pairs' mean ratio to it less one
                                (0: under 3 of them) */
    int harness_failures;
    char stopped[320];            /* why the run stopped before the end (tp_triage_stop), or "" */
    /* evict or localise (decide.c): the round times its driver measured
     * (tp_triage_round_took; [0] the planned rounds, [1] the isolation's)
     * and the decision made when the screen ended with suspects */
    double took_s[2];
    int took_n[2], took_round;
    bool decided, dec_measured;   /* dec_measured: dec_in.round_s was measured */
    struct tp_triage_decide_in dec_in;
    struct tp_triage_decision dec;
};

/* Append a measurement (TP_ENOMEM). */
int tp__triage_add_pair(tp_triage *t, int a, int b, double fig, enum tp_triage_stage s);
int tp__triage_add_group(tp_triage *t, const int *nodes, int n, double fig,
                         enum tp_triage_stage s, bool ref);

/* Room for one more test of n nodes in t->cur; returns its nodes array,
 * to be filled by the caller (a round's room is allocated once: n node
 * slots and n / 2 tests hold any round). */
int *tp__triage_cur_test(tp_triage *t, bool group, int n);

/* ---- planned rounds (rounds.c) ---- */

/* Build t->cur as planned round k of stage s. 0 or TP_ENOMEM. */
int tp__triage_plan_round(tp_triage *t, enum tp_triage_stage s, int k);

/* Draw the matchings (t->partners), after the ring order. 0 or TP_ENOMEM. */
int tp__triage_draw_matchings(tp_triage *t, int k);

/* ---- figures (store.c) ---- */

double tp__triage_median(float *v, int n); /* reorders v */

/* The thresholds: a test at most this far above the median is normal. */
double tp__triage_slow(const tp_triage *t);    /* to name: 1 + max(min_effect, z spread) */
double tp__triage_suspect(const tp_triage *t); /* to look again: 1 + max(min_effect/2,
                                                   z_screen spread) */

/* ---- switches (leaves.c) ---- */

enum tp__leaf_state {
    LEAF_NONE, LEAF_ACTION, LEAF_SWITCH, LEAF_UPLINK, LEAF_UNSETTLED, LEAF_CLEARED
};

/* t's leaf tables from t->o.topo (nothing without one): TP_EUSAGE when
 * its nodes are not the fleet's, TP_ENOMEM. */
int tp__triage_leaves_init(tp_triage *t, tp_error *err);
void tp__triage_leaves_free(tp_triage *t);

/* ---- the rails (rails.c) ---- */

/* t->leaf_sib from the leaves' node lists (leaves.c, once they are made). */
void tp__triage_leaf_siblings(tp_triage *t);
/* Node v's leaf switch on rail r (-1: it never joined). */
int tp__triage_leaf_of(const tp_triage *t, int v, int r);
/* Is node v under leaf switch l (on l's rail). */
bool tp__triage_under(const tp_triage *t, int v, int l);
/* The rails of a rail-optimised topology whose leaves serve exactly leaf
 * l's nodes (l's siblings and l itself), a bit each, each one's switch in
 * sw[r] when sw is not NULL (-1 for the others); 0 when l serves every
 * rail (a leaf given none). */
uint64_t tp__triage_leaf_rails(const tp_triage *t, int l, int *sw);

/* After the screen's node and link suspects: each leaf whose pairs
 * across its uplinks or within it are slow as a whole, or with two node
 * suspects or more, is a leaf action. 0 or TP_ENOMEM. */
int tp__triage_leaf_suspects(tp_triage *t, const bool *sus);

/* Once the isolation is over: the nodes behind a named leaf switch or
 * uplinks take its status, and their own names as slow nodes, which it
 * explains, are withdrawn (the fewest faults that explain what was
 * measured). */
void tp__triage_leaves_finish(tp_triage *t);

/* ---- judgement (judge.c) ---- */

/* After the tier's rounds: the fleet's medians and spreads, the suspects,
 * the first isolation actions, the known-good pool. 0 or TP_ENOMEM. */
int tp__triage_screen_judge(tp_triage *t);

/* ---- evict or localise (decide.c) ---- */

/* Once the screen is judged: with suspects, the choice between their
 * isolation and evicting them (t->decided, t->dec); none without. */
void tp__triage_decide_at_screen(tp_triage *t);

/* ---- isolation (isolate.c) ---- */

/* Build t->cur as the next isolation round; false when no action is left
 * (or the rounds allowed are spent: what is left stays suspect). */
bool tp__triage_iso_round(tp_triage *t);

/* Hand the figures of the isolation round t->cur to its actions. */
int tp__triage_iso_record(tp_triage *t, const double *figure);

/* New actions (iso_common.c; judge.c starts them). */
int tp__triage_confirm_node(tp_triage *t, int s, bool group_mode);
int tp__triage_confirm_link(tp_triage *t, int a, int b);
int tp__triage_bisect(tp_triage *t, const int *set, int n);

void tp__triage_free_actions(tp_triage *t);

/* ---- the simulator's fabric (sim_fabric.c) ---- */

/* A model fleet's switches (tp_triage_fleet.fabric): the topology the
 * triage is given, and the factor every flow through a slow leaf switch
 * or uplink takes. */
struct tp__sim_fabric {
    struct tp_topology *topo; /* NULL: no fabric */
    int per_leaf, spines, nleaves, rails; /* nleaves: groups, one leaf a rail each */
    double *sw, *up; /* per switch (group * rails + rail); per switch and spine */
    bool any_uplink;
    uint64_t rng;    /* the spines flows take */
    int ncables;     /* the bad cables: each its node's link on its rail */
    const struct tp_triage_bad_cable *cable;
};

/* The fleet's fabric faults in range (TP_EUSAGE naming the first that is
 * not). */
int tp__sim_fabric_check(const struct tp_triage_fleet *f, tp_error *err);
/* fb from f: 0, TP_EUSAGE or TP_ENOMEM (err says). */
int tp__sim_fabric_init(struct tp__sim_fabric *fb, const struct tp_triage_fleet *f, tp_error *err);
void tp__sim_fabric_free(struct tp__sim_fabric *fb);
/* The worst factor, over the rails of a test (a bit each; 0: every
 * rail), of the cables, switches and uplinks between nodes a and b, a
 * spine drawn for each rail's and way's flow (1: nothing slow). */
double tp__sim_fabric_factor(struct tp__sim_fabric *fb, int a, int b, uint64_t rails);
/* The fabric's planted faults (switches, uplinks, cables) scored against
 * named: each appended to planted with whether it was named; *hits, *all
 * and *last (the latest round one was named in) updated. */
void tp__sim_fabric_score(const struct tp_triage_fleet *f, const json_t *named, json_t *planted,
                          int *hits, bool *all, int *last);

/* ---- the simulator (sim.c) ---- */


/* Told every round the simulator ran (1-based, every stage counted), its
 * tests and the figures drawn for them, before the triage records them. */
typedef void tp__triage_sim_each(void *u, int round, const struct tp_triage_round *r,
                                 const double *fig);

/* tp_triage_simulate, calling each (when not NULL) with every round: the
 * noise model's tests draw their figures through the simulator's own path
 * (tests/unit/test_triage.c). */
int tp__triage_sim_run(const struct tp_triage_fleet *f, const struct tp_triage_opts *o, bool brief,
                       tp__triage_sim_each *each, void *u, json_t **out, tp_error *err);

/* tp_triage_result; with brief, nodes_detail lists only the nodes that
 * did not pass or passed with a remark (verdict.c). */
json_t *tp__triage_result_of(const tp_triage *t, bool brief, tp_error *err);

/* Record a named fault and mark its nodes (iso_common.c): its
 * measurements alone x, as ratios to ref, and their confidence. */
struct tp__sprt;
void tp__triage_name_node(tp_triage *t, int s, double ref, const struct tp__sprt *x,
                          const char *test);
void tp__triage_name_link(tp_triage *t, int a, int b, double ref, const struct tp__sprt *x,
                          const char *test);

#endif
