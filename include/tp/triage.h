/* Fleet triage: how `validate` covers an allocation of hundreds to
 * thousands of nodes in minutes and names what is wrong (docs/fleet.md).
 *
 *   tiers      a tier is a plan of rounds; in a round every node is in at
 *              most one test, so a round's tests run at once and share no
 *              node. prolog: one gang collective over every node, then a
 *              ring pass (each node with both ring neighbours); screen
 *              (the default): prolog, a groups pass (every node in one
 *              small group collective) and k random perfect matchings;
 *              full: the gang, the groups pass and every pair by the circle
 *              method. The rows are in src/triage/tier.c, one file each.
 *   judgement  a test is a suspect when its figure (a time: lower is
 *              better) is above the fleet's own median of the same test, at
 *              the same group size, by more than max(min_effect / 2,
 *              z_screen * the fleet's robust spread) (the median and MAD, as
 *              `report fleet`); with a topology, a leaf switch whose pairs
 *              are slow as a whole too.
 *   isolation  after the tier's rounds, each suspect is measured again
 *              alone, a round at a time, until a sequential probability
 *              ratio test decides: a node against known-good partners, a
 *              link by itself and its two ends with others, a leaf switch
 *              across its uplinks and within it, a slow group that no pair
 *              explains split in halves (beside reference groups of
 *              known-good nodes of the same size) down to its members, with
 *              the links across each split probed. Nothing is named before
 *              it was measured again alone, three times; a named switch or
 *              uplinks take the names of the nodes behind them.
 *   verdicts   every node: a status, a cause class, the evidence and the
 *              action a scheduler can take.
 *   simulator  the same planner, judgement and isolation fed by a model
 *              fleet instead of measurements.
 *
 * A driver (validate, the simulator) asks tp_triage_next for a round, runs
 * its tests, gives their figures to tp_triage_record, and repeats until
 * tp_triage_next says there is nothing left; tp_triage_result then holds
 * the judgement. Node numbers are 0 .. n-1 (the ranks). */
#ifndef TP_TRIAGE_H
#define TP_TRIAGE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "tp/error.h"

#define TP_TRIAGE_MAX_NODES 1000000
#define TP_TRIAGE_MAX_REPEATS 16 /* a suspect's measurements alone, at most */

/* The stages a round belongs to, in the order they can run. */
enum tp_triage_stage {
    TP_TRIAGE_GANG,    /* one collective over every node */
    TP_TRIAGE_RING,    /* each node with both ring neighbours (pairs) */
    TP_TRIAGE_GROUPS,  /* every node in one small group collective */
    TP_TRIAGE_MATCH,   /* a random perfect matching (pairs) */
    TP_TRIAGE_PAIRS,   /* a round of the circle method (pairs) */
    TP_TRIAGE_BISECT,  /* isolation: halves of a slow group, beside references */
    TP_TRIAGE_PROBE,   /* isolation: the links across a split */
    TP_TRIAGE_CONFIRM, /* isolation: a suspect measured again alone */
    TP_TRIAGE_NSTAGES
};

/* "gang", "ring", "groups", "match", "pairs", "bisect", "probe", "confirm". */
const char *tp_triage_stage_name(enum tp_triage_stage s);

/* One test: a pair (n == 2, both directions) or a group collective over
 * nodes[0..n) in that ring order. rails: the rails of a rail-optimised
 * topology it runs on, a bit each (NIC r of each node to NIC r of the
 * other), the traffic split evenly over them; 0: every rail. Only a
 * triage told that its driver can pin a test (tp_triage_opts.pin_rails)
 * plans one that is not 0. */
struct tp_triage_test {
    bool group;
    int n;
    int *nodes;
    uint64_t rails;
};

struct tp_triage_round {
    enum tp_triage_stage stage;
    int ntests;
    struct tp_triage_test *tests;
};

struct tp_topology;

/* ---- tiers ---- */

/* Whether name is a tier's (NULL: the default, screen, is). */
bool tp_triage_tier_known(const char *name);

/* The tiers' names from their rows, shallow to deep, into out (cap bytes,
 * cut short there): joined by ", ", the last two by last ("prolog, screen
 * or full" with " or "). Returns out. */
char *tp_triage_tier_names(const char *last, char *out, size_t cap);

struct tp_triage_opts {
    const char *tier;  /* "prolog", "screen" (NULL: screen), "full" */
    int matchings;     /* screen: k random perfect matchings (0: 4) */
    int group;         /* the groups pass' group size (0: 8; at most n/3) */
    double min_effect; /* slow means at least this much above the median (0: 0.10) */
    double z;          /* ... and this many robust deviations (0: 4) */
    /* The screen's bar for a suspect, lower than the naming bar: this many
     * robust deviations (0: 2.5). A suspect is then settled by a
     * sequential probability ratio test of repeated measurements alone
     * (docs/fleet.md, "The isolation"): normal against min_effect slower
     * (or twice the spread, where that is more), with a false name at
     * most alpha in the whole run (0: 1e-3; each suspect's test gets an
     * even share of it) and a missed fault at most beta per suspect (0:
     * 0.01), in at most repeats measurements (0: 10, at most
     * TP_TRIAGE_MAX_REPEATS). */
    double z_screen;
    double alpha, beta;
    int repeats;
    uint64_t seed;     /* the matchings, the groups, the partners */
    /* per-test durations, for the estimates and the simulated wall time
     * (0: 3 s a pair test, 5 s a group test, 0.2 s between rounds) */
    double pair_s, group_s, round_gap_s;
    /* a baseline of the gang collective's figure (0: none; without one the
     * gang, having no peers, is recorded and not judged) */
    double gang_baseline;
    /* the most rounds a tier may plan before its isolation (0: no bound;
     * the simulator's, TP_TRIAGE_SIM_MAX_ROUNDS): tp_triage_pick passes over
     * a deeper tier that plans more */
    int max_rounds;
    /* the fabric's switches (include/tp/topology.h), node i of the
     * triage its node i, on every rail (NULL: none). With one, the screen
     * also judges each leaf switch's traffic, across its uplinks and
     * within it, and the isolation names a slow leaf switch or a leaf's
     * slow uplinks instead of the nodes behind them (docs/fleet.md,
     * "Switches and uplinks"). The caller keeps it alive as long as the
     * triage. */
    const struct tp_topology *topo;
    /* the driver can run a pair test on some rails only (a test's
     * rails): then the isolation finds which rail of a rail-optimised
     * topology's slow leaf or uplinks it is; false: named as the leaves
     * of its group of nodes, the rail not told apart */
    bool pin_rails;
    /* with topo: node i of the triage is topo's node topo_nodes[i] (-1:
     * a node that never joined, in no leaf); NULL: node i (then topo has
     * exactly the fleet's nodes). Read by tp_triage_new only. */
    const int *topo_nodes;
    /* Evict or localise (docs/fleet.md): what the decision made when the
     * screen ends with suspects weighs, in plan's names and units
     * (docs/plan.md, `cluster`): GPUs a node (0: 8, at most
     * plan's TP_PLAN_MAX_GPUS_PER_NODE), a node's mean time between failures
     * (0: 6000 h), what swapping nodes into the job costs it, the
     * restart (0: 10 min), nodes standing by to take a suspect's place
     * (0: none) and how long an evicted node is away before it is
     * returned (0: 1 h). Negative values are refused by tp_triage_new. */
    int gpus_per_node;
    double mtbf_node_s, restart_s;
    int spare_nodes;
    double evict_return_s;
};

/* Rounds of each stage tier would plan for n nodes (all zero for an
 * unknown tier) into rounds[TP_TRIAGE_NSTAGES]; returns their sum. The
 * isolation adds its rounds after these (tp_triage_isolation_bound). */
int tp_triage_tier_rounds(const char *tier, int n, const struct tp_triage_opts *o,
                          int rounds[TP_TRIAGE_NSTAGES]);

/* The isolation rounds one fault takes at most after the tier's own, at
 * the default 10 repeats: ceil(log2 n) + 23 (a group split down to its
 * members, a probe, a link's sequential test of at most 10 measurements
 * alone, then its two ends' with others, at most 10 more). The
 * estimates add it; the isolation itself stops after three times it, what
 * is left unsettled then being "suspect". With a topology (opts.topo) a
 * leaf's bound counts when more: 16 rounds across its uplinks, 10
 * within, 16 a step of the rail search (log2 of the rails, with
 * pin_rails), one to spare: 59 on 4 rails, 75 on 8 (the result document's
 * isolation_bound). o: the options (NULL: the defaults). */
int tp_triage_isolation_bound(int n, const struct tp_triage_opts *o);

/* Estimated wall time in seconds of tier for n nodes: its rounds and, when
 * with_isolation, the isolation's bound, at o's durations. -1 for an
 * unknown tier. */
double tp_triage_estimate_s(const char *tier, int n, const struct tp_triage_opts *o,
                            bool with_isolation);

/* The deepest tier whose estimate with isolation fits budget_s seconds for
 * n nodes (and whose rounds o->max_rounds bounds, when set). TP_EUSAGE when not even prolog fits:
 * err says the minimum
 * ("--budget 20s: the prolog tier needs 31 s for 64 nodes"). */
int tp_triage_pick(int n, double budget_s, const struct tp_triage_opts *o, const char **tier,
                   tp_error *err);

/* ---- the driver ---- */

typedef struct tp_triage tp_triage;

/* A triage of n nodes (2 .. TP_TRIAGE_MAX_NODES) by o's tier; joined, when
 * not NULL, says which nodes joined (those that did not are "missing" and
 * in no test). TP_EUSAGE for an unknown tier or a value out of range
 * (naming it), TP_ENOMEM. */
int tp_triage_new(int n, const bool *joined, const struct tp_triage_opts *o, tp_triage **out,
                  tp_error *err);

void tp_triage_free(tp_triage *t);

/* The next round to run, valid until the next call of tp_triage_record or
 * tp_triage_free; NULL when triage is done. Every node of it is alive. */
const struct tp_triage_round *tp_triage_next(tp_triage *t);

/* What the round tp_triage_next gave measured: figure[i] for its test i (a
 * time, > 0; NAN when the test failed), and lost, when not NULL, the nodes
 * that died or hung in it (lost[node] true; those are left out from now
 * on). A failed test with no lost node is trainpath's own failure: its
 * nodes are not judged on it and never blamed. TP_EUSAGE when no round is
 * pending. */
int tp_triage_record(tp_triage *t, const double *figure, const bool *lost, tp_error *err);

/* Node v lost outside the rounds: before the first (in the node's own
 * tests) or after the last (the gather of the results). It is left out of
 * every round from now on; its verdict is "lost" with "stage": stage (a
 * short name, "local", "gather") and says "lost during WHAT: ..." (what a
 * phrase, "its own tests"); both must outlive t (literals). A node already
 * lost or missing stays as it was. TP_EUSAGE for v out of range, or while
 * a round waits for its figures. */
int tp_triage_lose(tp_triage *t, int v, const char *stage, const char *what, tp_error *err);

/* The run stopped before the triage was done (an interrupt, the launcher
 * ending the job, the driver's own failure): every node still passing is
 * "error" (cause harness, action rerun), saying it was not validated to the
 * end and why (why, at most 300 bytes, copied); a node named or lost keeps
 * its verdict; tp_triage_result says "partial": why. */
void tp_triage_stop(tp_triage *t, const char *why);

/* Node v's own counters named a fault of its link to its leaf switch
 * (link errors, a link that flapped or trained down: include/tp/counters.h)
 * what, a short phrase kept by the triage (at most 100 bytes): a node named
 * slow is then a bad cable (status "cable", action service), any time
 * before tp_triage_result. TP_EUSAGE for v out of range. */
int tp_triage_link_errors(tp_triage *t, int v, const char *what, tp_error *err);

/* tp_triage_link_errors for the link of node v's NIC on rail (0 to the
 * topology's rails - 1; -1: not known), which the cable's name then
 * carries. TP_EUSAGE for v or rail out of range. */
int tp_triage_link_errors_rail(tp_triage *t, int v, int rail, const char *what, tp_error *err);

/* The round tp_triage_record took last took seconds of wall time (> 0,
 * finite), as its driver measured it: the decision to evict or isolate
 * (tp_triage_decision) weighs the isolation's rounds at the mean of the
 * rounds measured before it, else at the estimate's durations. TP_EUSAGE
 * for a bad time, before the first round is recorded, or a second time
 * for one round. */
int tp_triage_round_took(tp_triage *t, double seconds, tp_error *err);

/* Rounds recorded so far in stage s (TP_TRIAGE_NSTAGES: all of them). */
int tp_triage_rounds(const tp_triage *t, enum tp_triage_stage s);

/* ---- evict or localise (docs/fleet.md) ---- */

/* What the choice between waiting for the isolation of a suspect group
 * and evicting the whole group now weighs. */
struct tp_triage_decide_in {
    int nodes;             /* the job's nodes (alive when the screen ended) */
    int suspects;          /* nodes in the suspect group */
    int rounds_left;       /* isolation rounds still to run, at most */
    double round_s;        /* one isolation round */
    int gpus_per_node;
    double mtbf_node_s;    /* a node's mean time between failures */
    double restart_s;      /* swapping nodes into the job: reschedule, reload */
    int spare_nodes;       /* nodes standing by to take a suspect's place */
    double evict_return_s; /* an evicted node away before it is returned */
    double alpha, beta;    /* the isolation's sequential test: a false name in the
                              run, a missed fault of min_effect per suspect */
    double min_effect;     /* the least slowdown a fault is named at */
};

/* Expected GPU-hours lost by each choice, and its terms. */
struct tp_triage_decision {
    bool evict;            /* evicting loses fewer (a tie: isolate) */
    double isolate_gpu_h, evict_gpu_h;
    double iso_wait_gpu_h;     /* every GPU of the job waits out the rounds */
    double iso_fail_gpu_h;     /* a node failing meanwhile restarts the job */
    double iso_false_gpu_h;    /* a sound node named (alpha), away until returned */
    double iso_missed_gpu_h;   /* the fault cleared (beta): the job slower by
                                  min_effect until its next failure */
    double evict_restart_gpu_h; /* every GPU of the job waits out the restart */
    double evict_fail_gpu_h;    /* a node failing meanwhile restarts it again */
    double evict_short_gpu_h;   /* sound suspects no spare replaces: the job that
                                   many nodes short until they are returned */
};

/* The expected GPU-hours each choice loses, with one fault among the
 * suspects (it leaves the job under either choice, so neither is charged
 * for it); g = gpus_per_node, G = nodes x g, W = rounds_left x round_s, M
 * the MTBF, R the restart (docs/fleet.md, "Evict or localise"):
 *   isolate = G W + (nodes W / M) G R + alpha g return + beta min_effect g M
 *   evict   = G R + (nodes R / M) G R + max(suspects - max(spares, 1), 0) g return
 * each over 3600 s; evict when it loses fewer. Inputs as tp_triage_new
 * checks them (mtbf_node_s > 0); no error. */
void tp_triage_decide(const struct tp_triage_decide_in *in, struct tp_triage_decision *out);

/* The decision made when the screen ended with suspects, as the result
 * holds it (its "decision", below), a new reference; NULL before the
 * screen ended, when it raised no suspects (nothing to decide), or on
 * ENOMEM. A driver may print its "says" as the isolation starts. */
json_t *tp_triage_decision_json(const tp_triage *t);

/* The judgement, when tp_triage_next has returned NULL (before: what is
 * known so far):
 *   {"tier", "nodes", "rounds": {STAGE: n, ...}, "rounds_total",
 *    "rounds_isolation", "isolation_bound", "pair_median", "spread",
 *    "threshold", "named": [{"kind": "node" | "link", "node" | "a","b",
 *                             "test", "value", "median", "says"}],
 *    "counts": {STATUS: n}, "nodes_detail": [VERDICT per node],
 *    "decision": tp_triage_decision_json's, or null}
 * where a VERDICT is tp_triage_verdict's. NULL on TP_ENOMEM. */
json_t *tp_triage_result(const tp_triage *t, tp_error *err);

/* Node i's verdict: {"node": i, "status": "pass" | "slow" | "link" (an end
 * of a slow link) | "suspect" (slow in a loaded round, not confirmed within
 * the rounds allowed) | "lost" | "missing" | "error", "cause": "none" |
 * "hardware" | "config" | "harness" | "contention" | "timeout",
 * "action": "none" | "rerun" | "drain" | "service", "stage" (the last
 * stage it took part in), "tests" (how many it completed), "evidence":
 * {"test", "value", "median", "threshold"} | null, "says"}. */
json_t *tp_triage_verdict(const tp_triage *t, int node);

/* A verdict of the same shape that another judgement gave (the SDC screen,
 * include/tp/sdc.h): status "pass", "error", or "corrupt" (a wrong result:
 * hardware, drain) or "undecided" (results that disagree with no majority
 * to say which is wrong: hardware, rerun), its cause and action from the
 * one table of verdicts; evidence (stolen; NULL: null) and says as given.
 * NULL for an unknown status or on ENOMEM. */
json_t *tp_triage_verdict_as(const char *status, int node, const char *stage, int tests,
                             json_t *evidence, const char *says);

/* ---- the simulator ---- */

#define TP_TRIAGE_SIM_MAX_FAULTS 64
#define TP_TRIAGE_SIM_MAX_ROUNDS 8192 /* the full tier at 8,192 nodes: 33.5 M pair tests */

/* A model fleet: the figures a test would measure, drawn. A pair test's
 * figure is pair_time times the worst factor of its two nodes and its link
 * (either way); a group's is group_time * 2(n-1)/n times the worst factor
 * of its nodes and ring links; each times (1 + s Z), Z standard normal, s
 * the spread of a median of `iters` samples of CoV `noise` (1.2533 noise /
 * sqrt(iters)) combined with test_noise, the test-to-test CoV. Then the
 * noise beyond the Gaussian (docs/fleet.md, "The noise model"), each off
 * at 0: a spike, a leaf's congestion and the run's drift, below. */
struct tp_triage_fleet {
    int n;
    double noise;      /* per-sample CoV (0.05: 5 %) */
    int iters;         /* samples behind a test's figure (nccl-tests' -n; 0: 20) */
    double test_noise; /* CoV of a test's figure from one run to the next (0) */
    uint64_t seed;
    /* A rare slowdown: with probability rate, times (1 + size X), X >= 0 of
     * mean 1. spikes: per test, X Lomax of tail index 2 (P(X > x) =
     * (1 + x)^-2: a host's hiccup, another job's burst); congestion: per
     * leaf and round, X exponential, every test touching that leaf slowed
     * by it (a pair: the worse of its two leaves; a group: the worst of its
     * members'). Both 0: off. */
    struct tp_triage_burst {
        double rate; /* 0 to 1 */
        double size; /* 0 to 10 (1000 %) */
    } spikes, congestion;
    int leaf_size; /* congestion's leaves: this many consecutive nodes each (0: 32) */
    /* every figure times (1 + drift)^((k - 1) / (R - 1)) in round k, R the
     * tier's rounds plus the isolation bound: that much slower (drift < 0:
     * faster) by round R, the same ratio every round, on after it. -0.5 to
     * 1; 0: off */
    double drift;
    int nslow;
    struct tp_triage_slow_node {
        int node;
        double severity;  /* 0.2: 20 % slower */
        bool collective;  /* slow in group collectives only (a PCIe or reduction fault) */
    } slow[TP_TRIAGE_SIM_MAX_FAULTS];
    int nlinks;
    struct tp_triage_slow_link {
        int a, b; /* both -1: a link the tier's rounds cross, drawn */
        double severity;
    } link[TP_TRIAGE_SIM_MAX_FAULTS];
    /* The fabric (docs/fleet.md, "Switches and uplinks"): a two-level fat
     * tree, group g of nodes g * per_leaf .. (g + 1) * per_leaf - 1 under
     * one leaf switch a rail (rails 0: 1; more: rail-optimised, NIC r of
     * each node cabled to its group's rail-r leaf, switch g * rails + r),
     * each leaf up to every one of `spines` spines (per_leaf 0: no
     * switches, and no faults of them). A test's traffic is split evenly
     * over the rails it runs on (every rail unless pinned), rail r's share
     * from NIC r to NIC r; it ends when its slowest share does. A flow
     * between two leaves takes a spine drawn for it, each way and rail
     * (ECMP: a test's connections are new flows); a pair's figure is then
     * also the worst, over its rails, of the leaf switches, uplinks and
     * cables its flows crossed, a group's of its ring's. With a fabric,
     * congestion's leaves are its groups. The triage is given its
     * topology (tp_triage_opts.topo) and can pin tests to rails. */
    struct tp_triage_fabric {
        int per_leaf, spines, rails;
    } fabric;
    int nswitches;
    struct tp_triage_slow_switch {
        int leaf;        /* a group's leaf switch, 0-based: every flow through it slower */
        double severity;
        int rail;        /* the rail whose leaf it is (0) */
    } slow_switch[TP_TRIAGE_SIM_MAX_FAULTS];
    int nuplinks;
    struct tp_triage_slow_uplink {
        int leaf, spine; /* the cable from that leaf to that spine, both ways */
        double severity;
        int rail;        /* the rail of the leaf (0) */
    } slow_uplink[TP_TRIAGE_SIM_MAX_FAULTS];
    /* bad cables: a node's link to its leaf on a rail, slower by severity
     * in every test of the node that rail carries, and its counters name
     * the link (the triage hears of it: tp_triage_link_errors_rail) */
    int ncables;
    struct tp_triage_bad_cable {
        int node;
        double severity;
        int rail; /* its NIC's rail (0) */
    } cable[TP_TRIAGE_SIM_MAX_FAULTS];
    int nmissing;
    int missing[TP_TRIAGE_SIM_MAX_FAULTS]; /* never join */
    int ndies;
    struct tp_triage_death {
        int node, round; /* dies in that round (1-based, counting every round) */
    } dies[TP_TRIAGE_SIM_MAX_FAULTS];
    /* what the decision to evict or isolate weighs: tp_triage_opts' fields
     * of the same names, where the options leave them 0 */
    int gpus_per_node, spare_nodes;
    double mtbf_node_s, restart_s, evict_return_s;
};

/* Read a model fleet from a YAML file (docs/fleet.md, "The simulator"):
 *     nodes: 1024
 *     noise: 5%
 *     slow_nodes: [{node: 17, severity: 25%}]
 *     slow_links: [{a: 3, b: 900, severity: 30%}]
 *     missing: [44]
 *     dies: [{node: 8, round: 3}]
 * Errors read "FILE:LINE:COL: KEY: message" (TP_EUSAGE). */
int tp_triage_fleet_load(const char *path, struct tp_triage_fleet *f, tp_error *err);

/* tp_triage_isolation_bound as the simulator runs fleet f with o: with its
 * fabric's topology, a rail fabric's tests pinned (the result document's
 * isolation_bound, which the plan line says before the run). */
int tp_triage_fleet_isolation_bound(const struct tp_triage_fleet *f,
                                    const struct tp_triage_opts *o);

/* Run a triage of fleet f with o: every round the planner asks for, each
 * test's figure drawn from f. *out is the judgement (tp_triage_result)
 * with "simulated": {"wall_s", "planted": [...], "true_named",
 * "false_named", "missed", "precision", "recall", "rounds_to_name"
 * (after the tier's rounds, until the last planted fault was named;
 * null if one was not), "noise_model" (f's noise keys, as the fleet file
 * names them, and "drift_rounds": R)}. With brief, nodes_detail lists
 * only the nodes that did not pass. TP_EUSAGE for a fleet or option out
 * of range. */
int tp_triage_simulate(const struct tp_triage_fleet *f, const struct tp_triage_opts *o, bool brief,
                       json_t **out, tp_error *err);

#endif
