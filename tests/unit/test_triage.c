/* Tests of fleet triage (tp/triage.h): the tiers' rounds and estimates,
 * the pick by budget, the planner's invariants (each node in at most one
 * test a round; the ring pass, the matchings' distinct partners, the full
 * tier's every pair once), the driver's handling of failed tests, and the
 * simulator at 8, 64, 1,024 and 16,384 nodes under several seeds: a clean
 * fleet names nothing, one slow node is named within ceil(log2 n) + 3
 * isolation rounds, one slow link (both ends) within ceil(log2 n) + 5, two
 * faults both, a fault only collectives show, a node that never joined is
 * missing (not slow), one that dies is lost, a link no round crossed is
 * not named. The noise model beyond the Gaussian, its figures drawn
 * through the simulator's own path: spikes at their rate and of their
 * heavy tail, a leaf's congestion on the pairs and groups touching it
 * (and two tests of a leaf correlated), the drift round by round. Then
 * the fleet file's reader and its errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tp/topology.h"
#include "tp/triage.h"
#include "tp_test.h"
/* the simulator's hook, tp__triage_sim_run: the noise model's tests draw
 * their figures through its own path */
#include "../../src/triage/triage_int.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    return tp_test_mkdtemp(dir, sizeof dir, "tp_triage");
}

static void print_worst(void);

static int teardown(void **state)
{
    (void)state;
    print_worst();
    return tp_test_rmtree(dir);
}

static int ceil_log2(int n)
{
    int lg = 0;
    while ((1 << lg) < n)
        lg++;
    return lg;
}

/* ---- tiers ---- */

static void tier_rounds(void **state)
{
    (void)state;
    int r[TP_TRIAGE_NSTAGES];
    /* prolog: the gang and the ring pass, whatever n */
    TP_EQ_INT(tp_triage_tier_rounds("prolog", 8, NULL, r), 3);
    TP_EQ_INT(r[TP_TRIAGE_GANG], 1);
    TP_EQ_INT(r[TP_TRIAGE_RING], 2);
    TP_EQ_INT(tp_triage_tier_rounds("prolog", 9, NULL, r), 4); /* an odd ring: 3 */
    TP_EQ_INT(tp_triage_tier_rounds("prolog", 10000, NULL, r), 3);
    /* screen: + the groups pass and 4 matchings */
    TP_EQ_INT(tp_triage_tier_rounds("screen", 1024, NULL, r), 8);
    TP_EQ_INT(r[TP_TRIAGE_GROUPS], 1);
    TP_EQ_INT(r[TP_TRIAGE_MATCH], 4);
    TP_EQ_INT(tp_triage_tier_rounds(NULL, 1024, NULL, r), 8); /* the default */
    struct tp_triage_opts o = {.matchings = 6};
    TP_EQ_INT(tp_triage_tier_rounds("screen", 1024, &o, r), 10);
    /* too few nodes for 4 partners besides the ring neighbours */
    tp_triage_tier_rounds("screen", 5, NULL, r);
    TP_EQ_INT(r[TP_TRIAGE_MATCH], 2);
    /* full: every pair by the circle method */
    tp_triage_tier_rounds("full", 64, NULL, r);
    TP_EQ_INT(r[TP_TRIAGE_PAIRS], 63);
    tp_triage_tier_rounds("full", 9, NULL, r);
    TP_EQ_INT(r[TP_TRIAGE_PAIRS], 9);
    TP_EQ_INT(tp_triage_tier_rounds("nope", 64, NULL, r), 0);
    /* the names, from the rows, as the messages join them */
    char names[64];
    TP_EQ_STR(tp_triage_tier_names(" or ", names, sizeof names), "prolog, screen or full");
    TP_EQ_STR(tp_triage_tier_names(", ", names, sizeof names), "prolog, screen, full");
    TP_EQ_STR(tp_triage_tier_names(" or ", names, 10), "prolog, s"); /* cut at cap */
    assert_true(tp_triage_tier_known(NULL) && tp_triage_tier_known("full"));
    assert_false(tp_triage_tier_known("nope"));
    /* log2 n to split a group down to a member, a probe, 10 measurements
     * of a link's sequential test alone, 10 of its ends', and one spare */
    TP_EQ_INT(tp_triage_isolation_bound(1024, NULL), 10 + 2 * 10 + 3);
    TP_EQ_INT(tp_triage_isolation_bound(1000, NULL), 10 + 2 * 10 + 3);
    TP_EQ_INT(tp_triage_isolation_bound(8, NULL), 3 + 2 * 10 + 3);
    /* the simulator's, as its plan line says it: a fabric's leaf (16
     * across, 10 within, 16 a step of the rail search, one to spare) where
     * that is more */
    struct tp_triage_fleet fl = {.n = 16384};
    TP_EQ_INT(tp_triage_fleet_isolation_bound(&fl, NULL), 14 + 2 * 10 + 3);
    fl.fabric = (struct tp_triage_fabric){32, 8, 1};
    TP_EQ_INT(tp_triage_fleet_isolation_bound(&fl, NULL), 14 + 2 * 10 + 3); /* 27 < 37 */
    fl.fabric.rails = 4;
    TP_EQ_INT(tp_triage_fleet_isolation_bound(&fl, NULL), 16 + 10 + 2 * 16 + 1);
    fl.fabric.rails = 8;
    TP_EQ_INT(tp_triage_fleet_isolation_bound(&fl, NULL), 16 + 10 + 3 * 16 + 1);
}

static void estimate_and_pick(void **state)
{
    (void)state;
    struct tp_triage_opts o = {.pair_s = 3, .group_s = 5, .round_gap_s = 0.2};
    /* prolog at 1024: the gang (5.2) and two ring rounds (3.2 each) */
    TP_NEAR(tp_triage_estimate_s("prolog", 1024, &o, false), 11.6, 1e-9);
    /* with isolation: 33 rounds of the longer test */
    TP_NEAR(tp_triage_estimate_s("prolog", 1024, &o, true), 11.6 + 33 * 5.2, 1e-9);
    TP_NEAR(tp_triage_estimate_s("nope", 1024, &o, false), -1, 0);
    double full = tp_triage_estimate_s("full", 1024, &o, true);
    double screen = tp_triage_estimate_s("screen", 1024, &o, true);
    double prolog = tp_triage_estimate_s("prolog", 1024, &o, true);
    const char *tier = NULL;
    tp_error err = {0};
    assert_int_equal(tp_triage_pick(1024, full, &o, &tier, &err), 0);
    TP_EQ_STR(tier, "full");
    assert_int_equal(tp_triage_pick(1024, full - 1, &o, &tier, &err), 0);
    TP_EQ_STR(tier, "screen");
    assert_int_equal(tp_triage_pick(1024, screen - 1, &o, &tier, &err), 0);
    TP_EQ_STR(tier, "prolog");
    assert_int_equal(tp_triage_pick(1024, prolog - 1, &o, &tier, &err), TP_EUSAGE);
    TP_HAS(err.msg, "--budget");
    TP_HAS(err.msg, "the prolog tier needs");
    TP_HAS(err.msg, "1024 nodes");
}

/* ---- the planner ---- */

/* Run a triage of n nodes by tier with every figure equal, checking that
 * no node is in two tests of a round; pairs[a * n + b] counts the pair
 * tests of stage s between a and b. */
static int run_flat(int n, const char *tier, enum tp_triage_stage s, int *pairs)
{
    struct tp_triage_opts o = {.tier = tier, .seed = 5};
    tp_triage *t = NULL;
    tp_error err = {0};
    assert_int_equal(tp_triage_new(n, NULL, &o, &t, &err), 0);
    int *seen = calloc((size_t)n, sizeof *seen), rounds = 0;
    double *one = malloc(sizeof *one * (size_t)n);
    assert_non_null(seen);
    assert_non_null(one);
    const struct tp_triage_round *r;
    while ((r = tp_triage_next(t)) != NULL) {
        rounds++;
        for (int i = 0; i < r->ntests; i++) {
            const struct tp_triage_test *x = &r->tests[i];
            assert_true(x->n >= 2);
            for (int k = 0; k < x->n; k++) {
                int v = x->nodes[k];
                assert_true(v >= 0 && v < n);
                if (seen[v] == rounds)
                    fail_msg("%s, %d nodes: node %d in two tests of round %d", tier, n, v,
                             rounds);
                seen[v] = rounds;
            }
            if (r->stage == s && !x->group)
                pairs[x->nodes[0] * n + x->nodes[1]]++, pairs[x->nodes[1] * n + x->nodes[0]]++;
            one[i] = 1;
        }
        assert_int_equal(tp_triage_record(t, one, NULL, &err), 0);
    }
    json_t *res = tp_triage_result(t, &err);
    TP_EQ_INT(json_array_size(json_object_get(res, "named")), 0);
    TP_EQ_INT(json_integer_value(json_object_get(json_object_get(res, "counts"), "pass")), n);
    json_decref(res);
    tp_triage_free(t);
    free(seen);
    free(one);
    return rounds;
}

static void planner(void **state)
{
    (void)state;
    for (int n = 8; n <= 9; n++) { /* full: every pair exactly once */
        int *p = calloc((size_t)(n * n), sizeof *p);
        int rounds = run_flat(n, "full", TP_TRIAGE_PAIRS, p);
        int r[TP_TRIAGE_NSTAGES];
        TP_EQ_INT(rounds, tp_triage_tier_rounds("full", n, NULL, r));
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++)
                if (a != b && p[a * n + b] != 1)
                    fail_msg("full, %d nodes: pair %d-%d measured %d times", n, a, b,
                             p[a * n + b]);
        free(p);
    }
    int n = 64; /* prolog: each node with exactly its two ring neighbours */
    int *p = calloc((size_t)(n * n), sizeof *p);
    run_flat(n, "prolog", TP_TRIAGE_RING, p);
    for (int a = 0; a < n; a++) {
        int deg = 0;
        for (int b = 0; b < n; b++)
            deg += p[a * n + b];
        TP_EQ_INT(deg, 2);
    }
    /* screen: 4 matchings, 4 distinct partners, none a ring neighbour */
    int *ring = calloc((size_t)(n * n), sizeof *ring);
    memset(p, 0, sizeof *p * (size_t)(n * n));
    run_flat(n, "screen", TP_TRIAGE_MATCH, p);
    run_flat(n, "screen", TP_TRIAGE_RING, ring); /* the same seed: the same ring */
    for (int a = 0; a < n; a++) {
        int deg = 0;
        for (int b = 0; b < n; b++) {
            deg += p[a * n + b] > 0;
            if (p[a * n + b] > 1 || (p[a * n + b] && ring[a * n + b]))
                fail_msg("screen: %d met %d %d times in the matchings (ring: %d)", a, b,
                         p[a * n + b], ring[a * n + b]);
        }
        TP_EQ_INT(deg, 4);
    }
    free(p);
    free(ring);
}

static void driver_errors(void **state)
{
    (void)state;
    tp_triage *t = NULL;
    tp_error err = {0};
    struct tp_triage_opts o = {.tier = "deep"};
    assert_int_equal(tp_triage_new(8, NULL, &o, &t, &err), TP_EUSAGE);
    TP_HAS(err.msg, "--tier deep");
    assert_int_equal(tp_triage_new(1, NULL, NULL, &t, &err), TP_EUSAGE);
    TP_HAS(err.msg, "1 nodes");
    assert_int_equal(tp_triage_new(8, NULL, NULL, &t, &err), 0);
    double f[8] = {0};
    assert_int_equal(tp_triage_record(t, f, NULL, &err), TP_EUSAGE); /* nothing asked yet */
    TP_HAS(err.msg, "no round");
    assert_int_equal(tp_triage_link_errors(t, 8, "crc", &err), TP_EUSAGE);
    TP_HAS(err.msg, "node 8 of 8");
    tp_triage_free(t);
    /* a topology of another fleet's nodes */
    struct tp_topology *topo = NULL;
    assert_int_equal(tp_topology_fat_tree(16, 8, 1, 1, &topo, &err), 0);
    o = (struct tp_triage_opts){.topo = topo};
    assert_int_equal(tp_triage_new(8, NULL, &o, &t, &err), TP_EUSAGE);
    TP_HAS(err.msg, "the topology has 16 nodes, the fleet 8");
    tp_topology_free(topo);
    /* sequential test's options out of range */
    o = (struct tp_triage_opts){.repeats = TP_TRIAGE_MAX_REPEATS + 1};
    assert_int_equal(tp_triage_new(8, NULL, &o, &t, &err), TP_EUSAGE);
    TP_HAS(err.msg, "repeats 17: 2 to 16");
    o = (struct tp_triage_opts){.alpha = 0.5};
    assert_int_equal(tp_triage_new(8, NULL, &o, &t, &err), TP_EUSAGE);
    TP_HAS(err.msg, "alpha 0.5");
}

/* A test that failed with no node lost is trainpath's failure: its nodes
 * are "error" (harness, rerun), never slow; a node lost is "lost". */
static void failed_tests(void **state)
{
    (void)state;
    tp_triage *t = NULL;
    tp_error err = {0};
    struct tp_triage_opts o = {.tier = "prolog", .seed = 3};
    assert_int_equal(tp_triage_new(8, NULL, &o, &t, &err), 0);
    const struct tp_triage_round *r;
    int round = 0, failed[2] = {-1, -1}, lost_node = -1;
    double fig[8];
    bool lost[8] = {false};
    while ((r = tp_triage_next(t)) != NULL) {
        round++;
        for (int i = 0; i < r->ntests; i++)
            fig[i] = 1;
        if (r->stage == TP_TRIAGE_RING && failed[0] < 0) { /* the first pair fails */
            fig[0] = NAN;
            failed[0] = r->tests[0].nodes[0];
            failed[1] = r->tests[0].nodes[1];
            lost_node = r->tests[1].nodes[0]; /* and a node of the second dies */
            lost[lost_node] = true;
        }
        assert_int_equal(tp_triage_record(t, fig, lost, &err), 0);
    }
    for (int k = 0; k < 2; k++) {
        json_t *v = tp_triage_verdict(t, failed[k]);
        TP_EQ_STR(json_string_value(json_object_get(v, "status")), "error");
        TP_EQ_STR(json_string_value(json_object_get(v, "cause")), "harness");
        TP_EQ_STR(json_string_value(json_object_get(v, "action")), "rerun");
        TP_HAS(json_string_value(json_object_get(v, "says")), "not a fault of the node");
        json_decref(v);
    }
    json_t *v = tp_triage_verdict(t, lost_node);
    TP_EQ_STR(json_string_value(json_object_get(v, "status")), "lost");
    TP_EQ_STR(json_string_value(json_object_get(v, "stage")), "ring");
    json_decref(v);
    json_t *res = tp_triage_result(t, &err);
    TP_EQ_INT(json_integer_value(json_object_get(res, "harness_failures")), 1);
    TP_EQ_INT(json_array_size(json_object_get(res, "named")), 0);
    json_decref(res);
    assert_null(tp_triage_verdict(t, 8));
    tp_triage_free(t);
}

/* A node lost outside the rounds: before the first (its own tests) it is
 * in no round; after the last (the gather) it keeps the tests it did.
 * Either verdict is "lost" with the stage given; the rest pass. */
static void lost_outside_rounds(void **state)
{
    (void)state;
    tp_triage *t = NULL;
    tp_error err = {0};
    struct tp_triage_opts o = {.tier = "screen", .seed = 5};
    assert_int_equal(tp_triage_new(8, NULL, &o, &t, &err), 0);
    assert_int_equal(tp_triage_lose(t, 3, "local", "its own tests", &err), 0);
    assert_int_equal(tp_triage_lose(t, 8, "local", "its own tests", &err), TP_EUSAGE);
    const struct tp_triage_round *r;
    double fig[8];
    bool first = true;
    while ((r = tp_triage_next(t)) != NULL) {
        for (int i = 0; i < r->ntests; i++) {
            fig[i] = 1;
            for (int k = 0; k < r->tests[i].n; k++)
                assert_int_not_equal(r->tests[i].nodes[k], 3);
        }
        if (first) { /* not while a round waits for its figures */
            assert_int_equal(tp_triage_lose(t, 5, "gather", "the gather", &err), TP_EUSAGE);
            first = false;
        }
        assert_int_equal(tp_triage_record(t, fig, NULL, &err), 0);
    }
    assert_int_equal(tp_triage_lose(t, 5, "gather", "the gather of the results", &err), 0);
    assert_int_equal(tp_triage_lose(t, 3, "gather", "the gather of the results", &err), 0);
    json_t *v = tp_triage_verdict(t, 3);
    TP_EQ_STR(json_string_value(json_object_get(v, "status")), "lost");
    TP_EQ_STR(json_string_value(json_object_get(v, "stage")), "local"); /* as it was */
    TP_EQ_STR(json_string_value(json_object_get(v, "action")), "drain");
    TP_HAS(json_string_value(json_object_get(v, "says")), "lost during its own tests");
    TP_EQ_INT(json_integer_value(json_object_get(v, "tests")), 0);
    json_decref(v);
    v = tp_triage_verdict(t, 5);
    TP_EQ_STR(json_string_value(json_object_get(v, "stage")), "gather");
    TP_HAS(json_string_value(json_object_get(v, "says")), "the gather of the results");
    assert_true(json_integer_value(json_object_get(v, "tests")) > 0);
    json_decref(v);
    json_t *res = tp_triage_result(t, &err);
    const json_t *counts = json_object_get(res, "counts");
    TP_EQ_INT(json_integer_value(json_object_get(counts, "lost")), 2);
    TP_EQ_INT(json_integer_value(json_object_get(counts, "pass")), 6);
    json_decref(res);
    tp_triage_free(t);
}

/* A run that stopped before the end: the nodes still passing are "error"
 * (harness, rerun), saying why; a lost node stays lost; the result is
 * partial. */
static void stopped_midway(void **state)
{
    (void)state;
    tp_triage *t = NULL;
    tp_error err = {0};
    struct tp_triage_opts o = {.tier = "screen", .seed = 7};
    assert_int_equal(tp_triage_new(8, NULL, &o, &t, &err), 0);
    assert_int_equal(tp_triage_lose(t, 6, "local", "its own tests", &err), 0);
    const struct tp_triage_round *r;
    double fig[8];
    for (int k = 0; k < 2 && (r = tp_triage_next(t)); k++) {
        for (int i = 0; i < r->ntests; i++)
            fig[i] = 1;
        assert_int_equal(tp_triage_record(t, fig, NULL, &err), 0);
    }
    tp_triage_stop(t, "interrupted in round 3 (ring): SIGTERM");
    json_t *v = tp_triage_verdict(t, 0);
    TP_EQ_STR(json_string_value(json_object_get(v, "status")), "error");
    TP_EQ_STR(json_string_value(json_object_get(v, "cause")), "harness");
    TP_EQ_STR(json_string_value(json_object_get(v, "action")), "rerun");
    TP_HAS(json_string_value(json_object_get(v, "says")),
           "not validated to the end: interrupted in round 3 (ring): SIGTERM; run again");
    json_decref(v);
    v = tp_triage_verdict(t, 6);
    TP_EQ_STR(json_string_value(json_object_get(v, "status")), "lost");
    json_decref(v);
    json_t *res = tp_triage_result(t, &err);
    TP_EQ_INT(json_integer_value(json_object_get(json_object_get(res, "counts"), "error")), 7);
    TP_HAS(json_string_value(json_object_get(res, "partial")), "interrupted in round 3");
    json_decref(res);
    tp_triage_free(t);
}

/* ---- the simulator ---- */

static const int sizes[] = {8, 64, 1024, 16384};

/* Seeds per fleet size: a few in `make check`'s sanitizer run; with
 * TP_TRIAGE_SEEDS=K (the 'slow' test triage_seeds: 100) K at every size. */
static int seeds_for(int n)
{
    const char *e = getenv("TP_TRIAGE_SEEDS");
    int k = e ? atoi(e) : 0;
    if (k > 0)
        return k;
    return n >= 16384 ? 2 : n >= 1024 ? 4 : 12;
}

static json_t *simulate(const struct tp_triage_fleet *f, const char *tier, uint64_t seed)
{
    struct tp_triage_opts o = {.tier = tier, .seed = seed};
    json_t *res = NULL;
    tp_error err = {0};
    int rc = tp_triage_simulate(f, &o, true, &res, &err);
    if (rc)
        fail_msg("simulate %d nodes, seed %llu: %s", f->n, (unsigned long long)seed, err.msg);
    return res;
}

static const json_t *sim_of(const json_t *res)
{
    return json_object_get(res, "simulated");
}

static long long sim_int(const json_t *res, const char *k)
{
    return json_integer_value(json_object_get(sim_of(res), k));
}

/* every planted fault named, nothing else, within bound isolation rounds */
/* The most isolation rounds each case took, over its seeds, against its
 * bound: printed at the end (the table in docs/fleet.md). */
static struct {
    const char *what;
    int n, worst, bound, seeds;
} worst[64];

static void note_worst(const char *what, int n, int rounds, int bound)
{
    int i = 0;
    while (i < 63 && worst[i].what && (strcmp(worst[i].what, what) != 0 || worst[i].n != n))
        i++;
    if (!worst[i].what) {
        worst[i].what = what;
        worst[i].n = n;
    }
    worst[i].worst = rounds > worst[i].worst ? rounds : worst[i].worst;
    worst[i].bound = bound;
    worst[i].seeds++;
}

static void print_worst(void)
{
    for (int i = 0; i < 64 && worst[i].what; i++)
        printf("# worst isolation rounds: %s, %d nodes: %d over %d seeds (bound %d)\n",
               worst[i].what, worst[i].n, worst[i].worst, worst[i].seeds, worst[i].bound);
    fflush(stdout);
}

static void expect_found(const json_t *res, int bound, const char *what, int n, uint64_t seed)
{
    const json_t *rt = json_object_get(sim_of(res), "rounds_to_name");
    note_worst(what, n, (int)json_integer_value(rt), bound);
    if (sim_int(res, "missed") != 0 || sim_int(res, "false_named") != 0 || !json_is_integer(rt))
        fail_msg("%s, %d nodes, seed %llu: missed %lld, false %lld", what, n,
                 (unsigned long long)seed, sim_int(res, "missed"), sim_int(res, "false_named"));
    if (json_integer_value(rt) > bound)
        fail_msg("%s, %d nodes, seed %llu: named after %lld isolation rounds, bound %d", what, n,
                 (unsigned long long)seed, json_integer_value(rt), bound);
}

static const json_t *detail_of(const json_t *res, int node)
{
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(res, "nodes_detail"), i, v)
        if (json_integer_value(json_object_get(v, "node")) == node)
            return v;
    return NULL;
}

static void sim_clean(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (int s = 1; s <= seeds_for(sizes[i]); s++) {
            struct tp_triage_fleet f = {.n = sizes[i], .noise = 0.05, .seed = (uint64_t)s};
            json_t *res = simulate(&f, NULL, (uint64_t)s);
            if (json_array_size(json_object_get(res, "named")) != 0)
                fail_msg("a clean fleet of %d nodes, seed %d: %s", sizes[i], s,
                         json_dumps(json_object_get(res, "named"), 0));
            TP_EQ_INT(json_integer_value(json_object_get(json_object_get(res, "counts"), "slow")),
                      0);
            json_decref(res);
        }
}

static void sim_slow_node(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (int s = 1; s <= seeds_for(sizes[i]); s++) {
            int n = sizes[i], node = (int)((uint64_t)s * 2654435761u % (uint64_t)n);
            struct tp_triage_fleet f = {.n = n, .noise = 0.05, .seed = (uint64_t)s, .nslow = 1};
            f.slow[0].node = node;
            f.slow[0].severity = 0.25;
            json_t *res = simulate(&f, NULL, (uint64_t)s);
            expect_found(res, ceil_log2(n) + 3, "one slow node", n, (uint64_t)s);
            json_t *v = json_array_get(json_object_get(res, "named"), 0);
            TP_EQ_INT(json_integer_value(json_object_get(v, "node")), node);
            /* its verdict: slow, hardware, drain, with the evidence */
            const json_t *d = detail_of(res, node);
            assert_non_null(d);
            TP_EQ_STR(json_string_value(json_object_get(d, "status")), "slow");
            TP_EQ_STR(json_string_value(json_object_get(d, "action")), "drain");
            assert_true(json_is_object(json_object_get(d, "evidence")));
            json_decref(res);
        }
}

static void sim_slow_link(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (int s = 1; s <= seeds_for(sizes[i]); s++) {
            int n = sizes[i];
            struct tp_triage_fleet f = {.n = n, .noise = 0.05, .seed = (uint64_t)s, .nlinks = 1};
            f.link[0].a = f.link[0].b = -1; /* one the tier crosses, drawn */
            f.link[0].severity = 0.3;
            json_t *res = simulate(&f, NULL, (uint64_t)s);
            expect_found(res, ceil_log2(n) + 5, "one slow link", n, (uint64_t)s);
            TP_EQ_INT(json_integer_value(json_object_get(json_object_get(res, "counts"), "link")),
                      2);
            json_decref(res);
        }
}

static void sim_two_faults(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (int s = 1; s <= seeds_for(sizes[i]); s++) {
            int n = sizes[i];
            struct tp_triage_fleet f = {.n = n, .noise = 0.05, .seed = (uint64_t)s, .nslow = 1,
                                        .nlinks = 1};
            f.slow[0].node = (int)((uint64_t)s * 40503u % (uint64_t)n);
            f.slow[0].severity = 0.25;
            f.link[0].a = f.link[0].b = -1;
            f.link[0].severity = 0.3;
            json_t *res = simulate(&f, NULL, (uint64_t)s);
            /* two faults: both named, within the bound of the slower one twice */
            expect_found(res, 2 * (ceil_log2(n) + 5), "a node and a link", n, (uint64_t)s);
            json_decref(res);
            /* two slow links */
            f.nslow = 0;
            f.nlinks = 2;
            f.link[1] = f.link[0];
            res = simulate(&f, NULL, (uint64_t)s);
            expect_found(res, 2 * (ceil_log2(n) + 5), "two links", n, (uint64_t)s);
            json_decref(res);
        }
}

/* A fabric as noisy as a shared one (issue 43's targets): 8 % per-sample
 * noise, 5 % from one run of a test to the next, faults of 15 %. The
 * screen's bar is lower than the naming bar and every suspect is settled
 * by its sequential test: one slow node named in 99 % of runs at least,
 * two both named in 95 %, at most one false name in 100 clean runs (over
 * the 100 seeds of triage_seeds; the few of the sanitizer run are held to
 * the same shares). Scored here, from what the test planted and the
 * "named" list alone, not by the simulator's own score. */
static int named_right(const json_t *res, const int *planted, int np, int *falsely)
{
    size_t i;
    const json_t *e;
    int right = 0;
    json_array_foreach(json_object_get(res, "named"), i, e) {
        const char *kind = json_string_value(json_object_get(e, "kind"));
        int v = (int)json_integer_value(json_object_get(e, "node"));
        bool hit = false;
        for (int k = 0; kind && strcmp(kind, "node") == 0 && k < np; k++)
            hit |= planted[k] == v;
        right += hit;
        *falsely += !hit;
    }
    return right;
}

static void sim_noisy_fabric(void **state)
{
    (void)state;
    static const int noisy_sizes[] = {1024, 16384};
    for (size_t i = 0; i < sizeof noisy_sizes / sizeof *noisy_sizes; i++) {
        int n = noisy_sizes[i], seeds = seeds_for(n), clean_false = 0, one = 0, two = 0,
            fault_false = 0;
        for (int s = 1; s <= seeds; s++) {
            struct tp_triage_fleet f = {.n = n, .noise = 0.08, .test_noise = 0.05,
                                        .seed = (uint64_t)s};
            int planted[2] = {(int)((uint64_t)s * 2654435761u % (uint64_t)n), 0}, falsely = 0;
            planted[1] = (planted[0] + n / 2) % n;
            json_t *res = simulate(&f, NULL, (uint64_t)s);
            named_right(res, planted, 0, &clean_false);
            json_decref(res);
            f.nslow = 1;
            f.slow[0] = (struct tp_triage_slow_node){planted[0], 0.15, false};
            res = simulate(&f, NULL, (uint64_t)s);
            one += named_right(res, planted, 1, &falsely) == 1;
            json_decref(res);
            f.nslow = 2;
            f.slow[1] = (struct tp_triage_slow_node){planted[1], 0.15, false};
            res = simulate(&f, NULL, (uint64_t)s);
            two += named_right(res, planted, 2, &falsely) == 2;
            json_decref(res);
            fault_false += falsely;
        }
        printf("# noisy fabric, %d nodes, %d seeds: one slow node named %d, two named %d, "
               "clean runs' false names %d, the fault runs' %d\n", n, seeds, one, two,
               clean_false, fault_false);
        /* at most one false name in 100 runs, clean or not (the fault runs
         * are two a seed) */
        if (100 * one < 99 * seeds || 100 * two < 95 * seeds || 100 * clean_false > seeds ||
            100 * fault_false > 2 * seeds)
            fail_msg("%d nodes: one named in %d of %d runs (99 %% wanted), two in %d (95 %%), "
                     "%d false names in clean runs, %d in the fault runs (at most 1 in 100)", n,
                     one, seeds, two, clean_false, fault_false);
    }
}

/* A switched fabric (two-level fat tree, 32 nodes a leaf, 4 spines,
 * flows spread over them), as noisy as sim_noisy_fabric: a slow uplink, a
 * slow leaf switch and a bad cable are each named as what they are (not
 * as the nodes behind them) in 99 % of runs, a slow node and a slow
 * uplink both in 95 %, a clean fabric names nothing in 99 of 100, and
 * nothing behind a switch or uplink is to be drained. Scored here from
 * the named list and the verdicts. */
static bool named_component(const json_t *res, const char *kind, const char *field, int id)
{
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(res, "named"), i, e)
        if (strcmp(json_string_value(json_object_get(e, "kind")), kind) == 0 &&
            json_integer_value(json_object_get(e, field)) == id)
            return true;
    return false;
}

static void sim_fabric_faults(void **state)
{
    (void)state;
    int n = 1024, seeds = seeds_for(n), got[5] = {0}, clean_false = 0;
    for (int s = 1; s <= seeds; s++) {
        struct tp_triage_fleet f = {.n = n, .noise = 0.08, .test_noise = 0.05,
                                    .seed = (uint64_t)s, .fabric = {32, 4}};
        int pick = (int)((uint64_t)s * 2654435761u % (uint64_t)n), leaf = (pick / 32 + 7) % 32;
        json_t *res = simulate(&f, NULL, (uint64_t)s);
        clean_false += (int)json_array_size(json_object_get(res, "named"));
        json_decref(res);
        for (int c = 0; c < 4; c++) {
            struct tp_triage_fleet g = f;
            if (c == 0 || c == 3)
                g.slow_uplink[g.nuplinks++] = (struct tp_triage_slow_uplink){leaf, s % 4, 0.15, 0};
            if (c == 1)
                g.slow_switch[g.nswitches++] = (struct tp_triage_slow_switch){leaf, 0.15, 0};
            if (c == 2)
                g.cable[g.ncables++] = (struct tp_triage_bad_cable){pick, 0.15, 0};
            if (c == 3) /* a node on another leaf */
                g.slow[g.nslow++] = (struct tp_triage_slow_node){(pick + 64) % n, 0.15, false};
            res = simulate(&g, NULL, (uint64_t)s);
            bool hit = c == 0   ? named_component(res, "uplink", "switch", leaf)
                       : c == 1 ? named_component(res, "switch", "switch", leaf)
                       : c == 2 ? named_component(res, "cable", "node", pick)
                                : named_component(res, "uplink", "switch", leaf) &&
                                      named_component(res, "node", "node", (pick + 64) % n);
            size_t want = c == 3 ? 2 : 1;
            got[c] += hit && json_array_size(json_object_get(res, "named")) == want;
            /* the nodes behind the switch or uplinks: serviced, not drained */
            const json_t *d = detail_of(res, leaf * 32 + 1);
            if (hit && c < 2 && d)
                TP_EQ_STR(json_string_value(json_object_get(d, "action")), "service");
            if (hit && c < 2 && !d)
                fail_msg("seed %d: node %d behind the named leaf has no verdict", s, leaf * 32 + 1);
            json_decref(res);
        }
    }
    printf("# fabric, %d nodes, %d seeds: uplink %d, switch %d, cable %d, node and uplink %d; "
           "clean runs' false names %d\n", n, seeds, got[0], got[1], got[2], got[3], clean_false);
    /* two faults: 95 % asked, so one miss in the few seeds of the
     * sanitizer run is within it (the 100 of triage_seeds hold the share) */
    if (100 * got[0] < 99 * seeds || 100 * got[1] < 99 * seeds || 100 * got[2] < 99 * seeds ||
        (100 * got[3] < 95 * seeds && seeds - got[3] > 1) || 100 * clean_false > seeds)
        fail_msg("fabric: uplink %d, switch %d, cable %d, node and uplink %d of %d; clean false "
                 "names %d", got[0], got[1], got[2], got[3], seeds, clean_false);
}

/* A rail-optimised fabric small enough to reason out: 128 nodes in 8
 * groups of 16, each group under one leaf a rail on 4 rails (leaf g * 4 +
 * r, as tp_topology_fat_tree numbers them), 2 spines; 5 % noise, faults of
 * 30 %. A pair's traffic is split over its 4 rails and ends when the
 * slowest share does, so a fault on one rail slows every pair through it
 * by its whole 30 %, and only a test pinned to some rails tells which:
 * - group 2's leaf on rail 3 (leaf11) slow: every pair with an end in
 *   nodes 32-47 is 1.3x, within the group too; rails {0, 1} against
 *   {2, 3} pinned, then {2} against {3}: the switch leaf11, rail 3, and
 *   nodes 32-47 "switch" (service), nothing drained;
 * - group 5's rail-2 uplink to spine 0 (leaf22's) slow: a pair across it
 *   is 1.3x when either of its rail-2 flows took spine 0 (3 in 4 of them
 *   at 2 spines), a pair within it never: the uplinks of leaf22, rail 2;
 * - node 5's cable on rail 1: every pair of node 5 1.3x, and its counters
 *   name its NIC 1's link: a cable, node 5, rail 1, its verdict saying
 *   which rail. */
static const json_t *only_named(const json_t *res, int seed)
{
    const json_t *named = json_object_get(res, "named");
    if (json_array_size(named) != 1)
        fail_msg("seed %d: %zu named, one wanted: %s", seed, json_array_size(named),
                 json_dumps(named, 0));
    return json_array_get(named, 0);
}

static void sim_rail_fabric(void **state)
{
    (void)state;
    for (int s = 1; s <= 4; s++) {
        struct tp_triage_fleet f = {.n = 128, .noise = 0.05, .seed = (uint64_t)s,
                                    .fabric = {.per_leaf = 16, .spines = 2, .rails = 4}};
        struct tp_triage_fleet g = f;
        g.slow_switch[g.nswitches++] = (struct tp_triage_slow_switch){2, 0.3, 3};
        json_t *res = simulate(&g, NULL, (uint64_t)s);
        const json_t *e = only_named(res, s);
        TP_EQ_STR(json_string_value(json_object_get(e, "kind")), "switch");
        TP_EQ_STR(json_string_value(json_object_get(e, "leaf")), "leaf11");
        TP_EQ_INT(json_integer_value(json_object_get(e, "switch")), 11);
        TP_EQ_INT(json_integer_value(json_object_get(e, "rail")), 3);
        TP_HAS(json_string_value(json_object_get(e, "says")), "leaf11 on rail 3");
        for (int v = 32; v < 48; v++) {
            const json_t *d = detail_of(res, v);
            assert_non_null(d);
            TP_EQ_STR(json_string_value(json_object_get(d, "status")), "switch");
            TP_EQ_STR(json_string_value(json_object_get(d, "action")), "service");
            TP_HAS(json_string_value(json_object_get(d, "says")), "leaf11 on rail 3");
        }
        TP_EQ_INT(json_integer_value(json_object_get(json_object_get(res, "counts"), "slow")), 0);
        json_decref(res);

        g = f;
        g.slow_uplink[g.nuplinks++] = (struct tp_triage_slow_uplink){5, 0, 0.3, 2};
        res = simulate(&g, NULL, (uint64_t)s);
        e = only_named(res, s);
        TP_EQ_STR(json_string_value(json_object_get(e, "kind")), "uplink");
        TP_EQ_INT(json_integer_value(json_object_get(e, "switch")), 22);
        TP_EQ_INT(json_integer_value(json_object_get(e, "rail")), 2);
        TP_EQ_STR(json_string_value(json_object_get(detail_of(res, 80), "status")), "uplink");
        json_decref(res);

        g = f;
        g.cable[g.ncables++] = (struct tp_triage_bad_cable){5, 0.3, 1};
        res = simulate(&g, NULL, (uint64_t)s);
        e = only_named(res, s);
        TP_EQ_STR(json_string_value(json_object_get(e, "kind")), "cable");
        TP_EQ_INT(json_integer_value(json_object_get(e, "node")), 5);
        TP_EQ_INT(json_integer_value(json_object_get(e, "rail")), 1);
        const json_t *d = detail_of(res, 5);
        assert_non_null(d);
        TP_EQ_STR(json_string_value(json_object_get(d, "status")), "cable");
        TP_HAS(json_string_value(json_object_get(d, "says")), "on rail 1 (its NIC 1)");
        TP_EQ_INT(sim_int(res, "false_named"), 0);
        json_decref(res);
    }
}

/* One uplink of 8 slow at 16,384 nodes (512 leaves of 32, 8 spines;
 * issue 43's noise: 8 %, 5 % run to run, 15 % slow), on one rail and on 8:
 * it slows only the quarter of its leaf's pairs one of whose two flows
 * takes it, its leaf's mean by 3.5 %, so the leaf's test across its
 * uplinks needs more than a node's 10 rounds, and a reference that is
 * not noisier than the leaf's own pairs (a leaf's test that ran out of
 * rounds left the leaf unnamed in seeds 3 and 5 on one rail, 1, 5 and 8
 * on 8 rails). Each seed names the uplinks of the planted leaf on its
 * rail and nothing else, within the document's isolation bound (a
 * leaf's, with 8 rails: 16 rounds across, 10 within, 3 steps of 16 of
 * the rail search and one to spare). */
static void sim_uplink_one_of_eight(void **state)
{
    (void)state;
    static const int rails[] = {1, 8};
    for (size_t i = 0; i < sizeof rails / sizeof *rails; i++)
        for (int s = 1; s <= 8; s++) {
            int n = 16384, R = rails[i], pick = (int)((uint64_t)s * 2654435761u % (uint64_t)n),
                leaf = (pick / 32 + 7) % 512;
            struct tp_triage_fleet f = {.n = n, .noise = 0.08, .test_noise = 0.05,
                                        .seed = (uint64_t)s,
                                        .fabric = {.per_leaf = 32, .spines = 8, .rails = R}};
            f.slow_uplink[f.nuplinks++] =
                (struct tp_triage_slow_uplink){leaf, s % 8, 0.15, R > 1 ? s % R : 0};
            json_t *res = simulate(&f, NULL, (uint64_t)s);
            int sw = R > 1 ? leaf * R + s % R : leaf;
            if (!named_component(res, "uplink", "switch", sw) ||
                json_array_size(json_object_get(res, "named")) != 1)
                fail_msg("%d rails, seed %d: the uplinks of switch %d not named alone: %s", R, s, sw,
                         json_dumps(json_object_get(res, "named"), 0));
            TP_EQ_INT(json_integer_value(json_object_get(res, "isolation_bound")),
                      R > 1 ? 16 + 10 + 3 * 16 + 1 : 14 + 2 * 10 + 3);
            if (sim_int(res, "rounds_to_name") >
                json_integer_value(json_object_get(res, "isolation_bound")))
                fail_msg("%d rails, seed %d: named after %lld isolation rounds", R, s,
                         (long long)sim_int(res, "rounds_to_name"));
            json_decref(res);
        }
}

/* small fleets, as a test bed of 6 to 8 nodes has: a slow node and a slow
 * link the tier crossed, the node named on every seed and nothing sound.
 * (Below 6 nodes a slow node and a slow link are most of the pairs, and a
 * fleet's own median cannot tell them: docs/fleet.md.) At 6 nodes with a slow
 * node every node meets it in the screen, so the ends of the link are
 * confirmed with the few known-good partners left, node 0 among them (a
 * partner list that took node 0 for "used" left the link unsettled). */
static void sim_small_fleets(void **state)
{
    (void)state;
    for (int n = 6; n <= 8; n++)
        for (int s = 1; s <= 40; s++) {
            struct tp_triage_fleet f = {.n = n, .noise = 0.05, .seed = (uint64_t)s, .nslow = 1,
                                        .nlinks = 1};
            f.slow[0].node = n - 2;
            f.slow[0].severity = 4;
            f.link[0].a = -1; /* one the tier crosses, drawn */
            f.link[0].b = -1;
            f.link[0].severity = 4;
            json_t *res = simulate(&f, NULL, (uint64_t)s);
            /* a link drawn next to the slow node may be taken for it: say
             * only that nothing sound was named and the node was */
            if (sim_int(res, "false_named") != 0)
                fail_msg("%d nodes, seed %d: named falsely", n, s);
            const json_t *d = detail_of(res, n - 2);
            assert_non_null(d);
            TP_EQ_STR(json_string_value(json_object_get(d, "status")), "slow");
            json_decref(res);
        }
    /* the bed's own case: node 4 slow, link 1-2 slow, 6 nodes */
    int named_link = 0;
    for (int s = 1; s <= 40; s++) {
        struct tp_triage_fleet f = {.n = 6, .noise = 0.05, .seed = (uint64_t)s, .nslow = 1,
                                    .nlinks = 1};
        f.slow[0].node = 4;
        f.slow[0].severity = 4;
        f.link[0].a = 1;
        f.link[0].b = 2;
        f.link[0].severity = 4;
        json_t *res = simulate(&f, NULL, (uint64_t)s);
        const json_t *e1 = detail_of(res, 1), *e2 = detail_of(res, 2);
        bool missed = sim_int(res, "missed") != 0;
        if (!missed) {
            named_link++;
            assert_non_null(e1);
            assert_non_null(e2);
            TP_EQ_STR(json_string_value(json_object_get(e1, "status")), "link");
            TP_EQ_STR(json_string_value(json_object_get(e2, "status")), "link");
        }
        TP_EQ_INT(sim_int(res, "false_named"), 0);
        json_decref(res);
    }
    print_message("6 nodes, node 4 and link 1-2 slow: both named on %d of 40 seeds\n", named_link);
    assert_true(named_link >= 30);
    /* the prolog tier's ring pass of 6: a slow node raises its neighbours'
     * medians too; judged by the pairs' own median it is named */
    for (int s = 1; s <= 20; s++) {
        struct tp_triage_fleet f = {.n = 6, .noise = 0.05, .seed = (uint64_t)s, .nslow = 1};
        f.slow[0].node = 4;
        f.slow[0].severity = 4;
        json_t *res = simulate(&f, "prolog", (uint64_t)s);
        expect_found(res, ceil_log2(6) + 3, "prolog, one slow node", 6, (uint64_t)s);
        json_decref(res);
    }
}

/* The bed's case driven by hand: node 4 slow, the link 1-2 slow, and node 2
 * made a suspect by the screen's noise (its other pairs 30 % slow there,
 * normal after). Its known-good partners must not include node 1 while
 * others are to be had: their pair was the slow link, so node 2 would look
 * slow again (on the bed, with noise in its other test, it was drained for
 * the link's fault). The link itself is measured alone three times (the
 * sequential test's least): so in the isolation 1-2 is measured three
 * times, never a fourth as a partner. */
static double bed_figure(const struct tp_triage_test *x, bool screen)
{
    double f = 1;
    bool has1 = false, has2 = false;
    for (int i = 0; i < x->n; i++) {
        has1 |= x->nodes[i] == 1;
        has2 |= x->nodes[i] == 2;
        if (x->nodes[i] == 4)
            f = 5;
    }
    if (!x->group && has1 && has2)
        f = 5;
    else if (!x->group && has2 && screen && f == 1)
        f = 1.3;
    if (x->group) { /* a ring over the group: the link is crossed when 1, 2 neighbour */
        for (int i = 0; i < x->n; i++) {
            int a = x->nodes[i], b = x->nodes[(i + 1) % x->n];
            if ((a == 1 && b == 2) || (a == 2 && b == 1))
                f = 5;
        }
        f *= 2.0 * (x->n - 1) / x->n;
    }
    return f;
}

static void iso_partner_not_across_the_link(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 60; seed++) {
        struct tp_triage_opts o = {.tier = "screen", .seed = seed};
        tp_triage *t = NULL;
        tp_error err = {0};
        TP_EQ_INT(tp_triage_new(6, NULL, &o, &t, &err), 0);
        const struct tp_triage_round *rd;
        int link_tests = 0;
        while ((rd = tp_triage_next(t))) {
            double fig[8];
            bool screen = rd->stage < TP_TRIAGE_BISECT;
            for (int i = 0; i < rd->ntests; i++) {
                const struct tp_triage_test *x = &rd->tests[i];
                fig[i] = bed_figure(x, screen);
                link_tests += !screen && !x->group && x->nodes[0] + x->nodes[1] == 3 &&
                              x->nodes[0] * x->nodes[1] == 2;
            }
            TP_EQ_INT(tp_triage_record(t, fig, NULL, &err), 0);
        }
        json_t *res = tp_triage_result(t, &err);
        assert_non_null(res);
        const char *s2 = json_string_value(json_object_get(detail_of(res, 2), "status"));
        const char *s4 = json_string_value(json_object_get(detail_of(res, 4), "status"));
        if (strcmp(s2, "slow") == 0)
            fail_msg("seed %llu: node 2, an end of the slow link, named slow",
                     (unsigned long long)seed);
        TP_EQ_STR(s4, "slow");
        if (link_tests > 3)
            fail_msg("seed %llu: the link 1-2 measured %d times in the isolation (3 alone, "
                     "the rest as node 2's partner)", (unsigned long long)seed, link_tests);
        json_decref(res);
        tp_triage_free(t);
    }
}

/* A topology from a file names its switches: n nodes on 4 leaves named
 * edgeA..edgeD (n / 4 each) under one spine; every pair with one end under
 * edgeB (its one uplink crossed) slow by a factor drawn from [lo, hi], the
 * rest 1.0, each with a little jitter, groups neutral. */
struct named_case {
    int n;
    double lo, hi;
    uint64_t lcg;
    int cable; /* > 0: that node's every pair slow instead (a bad cable), no uplink */
};

static double named_leaf_figure(const struct tp_triage_test *x, struct named_case *c)
{
    double u[2];
    for (int k = 0; k < 2; k++) {
        c->lcg = c->lcg * 6364136223846793005ull + 1442695040888963407ull;
        u[k] = (double)(c->lcg >> 40) / (double)(1ull << 24);
    }
    double jitter = 1 + 0.01 * u[0];
    if (x->group)
        return jitter * 2.0 * (x->n - 1) / x->n;
    int per = c->n / 4;
    bool a = x->nodes[0] / per == 1, b = x->nodes[1] / per == 1;
    if (c->cable > 0)
        a = x->nodes[0] == c->cable, b = x->nodes[1] == c->cable;
    return jitter * (a != b ? c->lo + (c->hi - c->lo) * u[1] : 1.0);
}

/* The uplinks named by the file's name for the leaf, "edgeB" (a name the
 * triage once dropped for a generated "leafN" buffer it never filled), and
 * its nodes status uplink, the rest passed. */
static void named_uplink_case(struct named_case *c)
{
    char path[] = "/tmp/tp-topo-XXXXXX";
    int fd = mkstemp(path), per = c->n / 4;
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    for (int l = 0; l < 4; l++)
        fprintf(f, "SwitchName=edge%c Nodes=n[%d-%d]\n", 'A' + l, l * per, l * per + per - 1);
    fputs("SwitchName=core Switches=edgeA,edgeB,edgeC,edgeD\n", f);
    fclose(f);
    struct tp_topology *topo = NULL;
    tp_error err = {0};
    int rc = tp_topology_load(path, &topo, &err);
    unlink(path);
    if (rc)
        fail_msg("%s", err.msg);
    int map[64];
    for (int i = 0; i < c->n; i++) {
        char name[8];
        snprintf(name, sizeof name, "n%d", i);
        map[i] = tp_topology_node(topo, name);
        assert_true(map[i] >= 0);
    }
    struct tp_triage_opts o = {.tier = "screen", .seed = 5, .topo = topo, .topo_nodes = map};
    tp_triage *t = NULL;
    TP_EQ_INT(tp_triage_new(c->n, NULL, &o, &t, &err), 0);
    const struct tp_triage_round *rd;
    while ((rd = tp_triage_next(t))) {
        double fig[64];
        for (int i = 0; i < rd->ntests; i++)
            fig[i] = named_leaf_figure(&rd->tests[i], c);
        TP_EQ_INT(tp_triage_record(t, fig, NULL, &err), 0);
    }
    if (c->cable > 0) /* its counters name its link */
        TP_EQ_INT(tp_triage_link_errors(t, c->cable, "flap on v6: carrier_changes +9", &err), 0);
    json_t *res = tp_triage_result(t, &err);
    assert_non_null(res);
    json_t *named = json_object_get(res, "named");
    TP_EQ_INT((int)json_array_size(named), 1);
    if (c->cable > 0) { /* the cable, not its leaf: the other node there is sound */
        for (int v = 0; v < c->n; v++)
            TP_EQ_STR(json_string_value(json_object_get(detail_of(res, v), "status")),
                      v == c->cable ? "cable" : "pass");
        json_decref(res);
        tp_triage_free(t);
        tp_topology_free(topo);
        return;
    }
    TP_EQ_STR(json_string_value(json_object_get(json_array_get(named, 0), "kind")), "uplink");
    TP_EQ_STR(json_string_value(json_object_get(json_array_get(named, 0), "leaf")), "edgeB");
    for (int v = 0; v < c->n; v++)
        TP_EQ_STR(json_string_value(json_object_get(detail_of(res, v), "status")),
                  v / per == 1 ? "uplink" : "pass");
    json_decref(res);
    tp_triage_free(t);
    tp_topology_free(topo);
}

/* (named_uplink_case: an uplink named by the file's name, or a cable) */
static void topology_names_its_uplinks(void **state)
{
    (void)state;
    /* 4 nodes a leaf, its pairs across 1.6x */
    named_uplink_case(&(struct named_case){.n = 16, .lo = 1.6, .hi = 1.6, .lcg = 7});
    /* 2 nodes a leaf behind an uplink at a hundredth of its rate (the
     * switched bed's: TBF at 200 Mbit/s), its pairs across 60x to 100x:
     * a round of two such pairs spreads by tens, which the leaf's test
     * once took as noise and never decided */
    for (uint64_t s = 1; s <= 5; s++)
        named_uplink_case(&(struct named_case){.n = 8, .lo = 60, .hi = 100, .lcg = s});
    /* a bad cable there instead, node 6's (the switched bed's other
     * fault): its leaf's pairs across are 60x-100x and 1x, one node slow,
     * not the leaf; named the cable alone */
    for (uint64_t s = 1; s <= 5; s++)
        named_uplink_case(
            &(struct named_case){.n = 8, .lo = 60, .hi = 100, .lcg = s, .cable = 6});
}

/* slow in collectives only (a PCIe or reduction fault): pairs look fine,
 * the groups pass and the bisection find it */
static void sim_collective_fault(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (int s = 1; s <= seeds_for(sizes[i]); s++) {
            int n = sizes[i];
            struct tp_triage_fleet f = {.n = n, .noise = 0.05, .seed = (uint64_t)s, .nslow = 1};
            f.slow[0].node = (int)((uint64_t)s * 7u % (uint64_t)n);
            f.slow[0].severity = 0.25;
            f.slow[0].collective = true;
            json_t *res = simulate(&f, NULL, (uint64_t)s);
            expect_found(res, ceil_log2(n) + 5, "a collective-only fault", n, (uint64_t)s);
            json_decref(res);
        }
}

static void sim_missing_and_dead(void **state)
{
    (void)state;
    for (size_t i = 0; i < 3; i++) {
        int n = sizes[i];
        struct tp_triage_fleet f = {.n = n, .noise = 0.05, .seed = 9, .nmissing = 1, .ndies = 1};
        f.missing[0] = 3;
        f.dies[0].node = 5;
        f.dies[0].round = 2;
        json_t *res = simulate(&f, NULL, 9);
        TP_EQ_INT(json_array_size(json_object_get(res, "named")), 0);
        const json_t *m = detail_of(res, 3), *d = detail_of(res, 5);
        assert_non_null(m);
        assert_non_null(d);
        TP_EQ_STR(json_string_value(json_object_get(m, "status")), "missing");
        TP_EQ_STR(json_string_value(json_object_get(m, "stage")), "join");
        TP_EQ_STR(json_string_value(json_object_get(d, "status")), "lost");
        TP_EQ_STR(json_string_value(json_object_get(d, "action")), "drain");
        json_t *counts = json_object_get(res, "counts");
        TP_EQ_INT(json_integer_value(json_object_get(counts, "slow")), 0);
        TP_EQ_INT(json_integer_value(json_object_get(counts, "pass")), n - 2);
        json_decref(res);
    }
}

/* A slow link that no round of the tier crosses can't be seen: it must not
 * be named, nor blamed on its ends. */
static void sim_unexercised_link(void **state)
{
    (void)state;
    int checked = 0;
    for (uint64_t s = 1; s <= 40 && checked < 5; s++) {
        struct tp_triage_fleet f = {.n = 64, .noise = 0.05, .seed = s, .nlinks = 1};
        f.link[0].a = 3;
        f.link[0].b = 40;
        f.link[0].severity = 0.5;
        json_t *res = simulate(&f, "prolog", s);
        const json_t *p = json_array_get(json_object_get(sim_of(res), "planted"), 0);
        if (!json_is_true(json_object_get(p, "exercised"))) {
            checked++;
            TP_EQ_INT(json_array_size(json_object_get(res, "named")), 0);
            /* brief: only the nodes that did not pass are listed */
            assert_null(detail_of(res, 3));
            assert_null(detail_of(res, 40));
        }
        json_decref(res);
    }
    assert_true(checked >= 5);
}

static void sim_errors(void **state)
{
    (void)state;
    struct tp_triage_fleet f = {.n = 8, .nslow = 1};
    f.slow[0].node = 8;
    f.slow[0].severity = 0.2;
    json_t *res = NULL;
    tp_error err = {0};
    assert_int_equal(tp_triage_simulate(&f, NULL, true, &res, &err), TP_EUSAGE);
    TP_HAS(err.msg, "slow_nodes: node 8");
    assert_null(res);
    struct tp_triage_fleet g = {.n = 9000};
    struct tp_triage_opts o = {.tier = "full"};
    assert_int_equal(tp_triage_simulate(&g, &o, true, &res, &err), TP_EUSAGE);
    TP_HAS(err.msg, "--tier full: 9001 rounds for 9000 nodes");
}

/* ---- the noise model (docs/fleet.md, "The noise model") ---- */

/* What the noise model's tests keep of a simulated run: every pair test's
 * figure with its round and nodes. */
struct drawn {
    int n, cap;
    double *fig;
    int *round, *a, *b;
};

static void keep_pairs(void *u, int round, const struct tp_triage_round *r, const double *fig)
{
    struct drawn *d = u;
    for (int i = 0; i < r->ntests; i++) {
        if (r->tests[i].group || isnan(fig[i]))
            continue;
        if (d->n == d->cap) {
            d->cap = d->cap ? 2 * d->cap : 4096;
            d->fig = realloc(d->fig, sizeof *d->fig * (size_t)d->cap);
            d->round = realloc(d->round, sizeof *d->round * (size_t)d->cap);
            d->a = realloc(d->a, sizeof *d->a * (size_t)d->cap);
            d->b = realloc(d->b, sizeof *d->b * (size_t)d->cap);
            assert_true(d->fig && d->round && d->a && d->b);
        }
        d->fig[d->n] = fig[i];
        d->round[d->n] = round;
        d->a[d->n] = r->tests[i].nodes[0];
        d->b[d->n++] = r->tests[i].nodes[1];
    }
}

/* Run f by tier, keeping its pair figures in *d (emptied first). Nothing
 * is slow past 900 %: the tier's rounds alone, no isolation (what these
 * tests look at is the figures, and a fleet congested without noise would
 * send thousands of pairs to it). */
static void draw_pairs(const struct tp_triage_fleet *f, const char *tier, struct drawn *d)
{
    struct tp_triage_opts o = {.tier = tier, .seed = f->seed, .min_effect = 9};
    json_t *res = NULL;
    tp_error err = {0};
    d->n = 0;
    if (tp__triage_sim_run(f, &o, true, keep_pairs, d, &res, &err) != 0)
        fail_msg("simulate %d nodes: %s", f->n, err.msg);
    json_decref(res);
}

static void drawn_free(struct drawn *d)
{
    free(d->fig);
    free(d->round);
    free(d->a);
    free(d->b);
    *d = (struct drawn){0};
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The median of v[0..n) (reordered). */
static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The median of the pair figures of d (of round r only, r > 0), and how
 * many there were. */
static double pair_median(const struct drawn *d, int r, int *count)
{
    double *v = malloc(sizeof *v * (size_t)(d->n + 1));
    assert_non_null(v);
    int k = 0;
    for (int i = 0; i < d->n; i++)
        if (r <= 0 || d->round[i] == r)
            v[k++] = d->fig[i];
    double m = k ? median_of(v, k) : 0;
    free(v);
    *count = k;
    return m;
}

/* k of n past a bar where p is expected: within 4.5 binomial deviations */
static void expect_binomial(const char *what, int k, int n, double p)
{
    double sd = sqrt(n * p * (1 - p));
    print_message("%s: %d of %d, expected %.1f (sd %.1f)\n", what, k, n, n * p, sd);
    if (fabs(k - n * p) > 4.5 * sd + 1)
        fail_msg("%s: %d of %d figures, expected %.1f +- %.1f (4.5 sd)", what, k, n, n * p,
                 4.5 * sd);
}

/* Spikes: without other noise every figure is the base but a spike's, so
 * the fraction above it is the rate, and the spikes' sizes follow the
 * Lomax law of mean size: past 1 + size a quarter of them, past 1 + 3 size
 * a sixteenth (an exponential law would give 37 % and 5 %). Off, none. */
static void sim_noise_spikes(void **state)
{
    (void)state;
    struct drawn d = {0};
    struct tp_triage_fleet f = {.n = 16384, .seed = 3, .spikes = {.rate = 0.05, .size = 0.5}};
    draw_pairs(&f, NULL, &d);
    int count;
    double base = pair_median(&d, 0, &count);
    int above = 0, past1 = 0, past3 = 0;
    for (int i = 0; i < d.n; i++) {
        double x = (d.fig[i] / base - 1) / f.spikes.size; /* the spike's X */
        above += x > 1e-9;
        past1 += x > 1;
        past3 += x > 3;
    }
    assert_true(d.n > 40000);
    expect_binomial("spikes at 5 %", above, d.n, f.spikes.rate);
    expect_binomial("past 1 + size", past1, d.n, f.spikes.rate / 4);
    expect_binomial("past 1 + 3 size", past3, d.n, f.spikes.rate / 16);
    f.spikes.rate = 0; /* off: every figure the base */
    draw_pairs(&f, NULL, &d);
    for (int i = 0; i < d.n; i++)
        TP_NEAR_REL(d.fig[i], base, 1e-12);
    drawn_free(&d);
}

/* Pearson's correlation of x and y over n. */
static double correlation(const double *x, const double *y, int n)
{
    double mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;
    for (int i = 0; i < n; i++)
        mx += x[i] / n, my += y[i] / n;
    for (int i = 0; i < n; i++) {
        sxy += (x[i] - mx) * (y[i] - my);
        sxx += (x[i] - mx) * (x[i] - mx);
        syy += (y[i] - my) * (y[i] - my);
    }
    return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : 0;
}

/* Per round and leaf of n nodes, two pair tests touching that leaf: the
 * logs of their figures against the round's median, in x and y (at most
 * cap). Returns how many (rounds of fewer than 64 pair tests, the
 * isolation's, left out). */
static int leaf_pairs(const struct drawn *d, int n, int leaf_size, double *x, double *y, int cap)
{
    int k = 0, rounds = 0;
    for (int i = 0; i < d->n; i++)
        rounds = d->round[i] > rounds ? d->round[i] : rounds;
    int nleaves = (n + leaf_size - 1) / leaf_size;
    int *first = malloc(sizeof *first * (size_t)nleaves);
    assert_non_null(first);
    for (int r = 1; r <= rounds; r++) {
        int count;
        double m = pair_median(d, r, &count);
        if (count < 64)
            continue;
        for (int l = 0; l < nleaves; l++)
            first[l] = -1;
        for (int i = 0; i < d->n && k < cap; i++) {
            if (d->round[i] != r)
                continue;
            int l = d->a[i] / leaf_size;
            if (first[l] == -2)
                continue;
            if (first[l] == -1) {
                first[l] = i;
                continue;
            }
            x[k] = log(d->fig[first[l]] / m);
            y[k++] = log(d->fig[i] / m);
            first[l] = -2;
        }
    }
    free(first);
    return k;
}

/* Congestion: a leaf congested in a round slows every test touching it.
 * Without other noise a pair is slowed when either of its leaves is: a
 * pair within one leaf at the rate r, a pair across two at 1 - (1 - r)^2.
 * With noise, two tests of one leaf in one round move together: their
 * figures correlate, and do not without congestion. */
static void sim_noise_congestion(void **state)
{
    (void)state;
    struct drawn d = {0};
    const double r = 0.2;
    struct tp_triage_fleet f = {
        .n = 512, .seed = 5, .leaf_size = 16, .congestion = {.rate = r, .size = 0.3}};
    draw_pairs(&f, "full", &d); /* 511 rounds of every pair */
    int count, within = 0, across = 0, slow_within = 0, slow_across = 0;
    double base = pair_median(&d, 0, &count);
    for (int i = 0; i < d.n; i++) {
        bool same = d.a[i] / 16 == d.b[i] / 16, slow = d.fig[i] > base * (1 + 1e-9);
        within += same;
        across += !same;
        slow_within += same && slow;
        slow_across += !same && slow;
    }
    print_message("congested: %d of %d pairs within a leaf, %d of %d across\n", slow_within, within,
                  slow_across, across);
    /* a leaf's draw is shared by its pairs of a round: allow for it */
    TP_NEAR((double)slow_within / within, r, 0.03);
    TP_NEAR((double)slow_across / across, 1 - (1 - r) * (1 - r), 0.03);
    drawn_free(&d);

    /* correlated within a round's leaf, and not without congestion */
    const int cap = 16384;
    double *x = malloc(sizeof *x * (size_t)cap), *y = malloc(sizeof *y * (size_t)cap);
    assert_true(x && y);
    struct tp_triage_fleet g = {.n = 16384,
                                .noise = 0.05,
                                .seed = 7,
                                .leaf_size = 32,
                                .congestion = {.rate = 0.2, .size = 0.3}};
    draw_pairs(&g, NULL, &d);
    int k = leaf_pairs(&d, g.n, 32, x, y, cap);
    double with = correlation(x, y, k);
    g.congestion.rate = 0;
    draw_pairs(&g, NULL, &d);
    int k0 = leaf_pairs(&d, g.n, 32, x, y, cap);
    double without = correlation(x, y, k0);
    print_message("two tests of a leaf in a round: correlation %.3f with congestion (%d), "
                  "%.3f without (%d)\n",
                  with, k, without, k0);
    assert_true(k > 2000 && k0 > 2000);
    if (!(with > 0.25))
        fail_msg("correlation %.3f of two tests of one leaf with congestion: expected > 0.25",
                 with);
    if (!(fabs(without) < 0.08))
        fail_msg("correlation %.3f of two tests of one leaf without congestion: expected ~0",
                 without);
    free(x);
    free(y);
    drawn_free(&d);
}

/* The groups pass of a run: each group's figure and how many leaves its
 * members are in. */
struct groups_seen {
    int leaf_size, n;
    double fig[64];
    int leaves[64];
};

static void keep_groups(void *u, int round, const struct tp_triage_round *r, const double *fig)
{
    (void)round;
    struct groups_seen *g = u;
    for (int i = 0; r->stage == TP_TRIAGE_GROUPS && i < r->ntests && g->n < 64; i++) {
        const struct tp_triage_test *x = &r->tests[i];
        int leaves = 0;
        for (int k = 0; k < x->n; k++) {
            bool seen = false;
            for (int j = 0; j < k; j++)
                seen |= x->nodes[j] / g->leaf_size == x->nodes[k] / g->leaf_size;
            leaves += !seen;
        }
        g->fig[g->n] = fig[i];
        g->leaves[g->n++] = leaves;
    }
}

/* A group is as congested as the worst of its members' leaves: slowed at
 * 1 - (1 - r)^k for k leaves (as one leaf's draw alone, at r, it would be
 * far fewer). Each group against itself in the same run without
 * congestion (the same plan: the planner draws nothing from the figures). */
static void sim_noise_congestion_groups(void **state)
{
    (void)state;
    const double r = 0.2;
    int groups = 0, slowed = 0;
    double expected = 0;
    for (uint64_t seed = 1; seed <= 200; seed++) {
        struct groups_seen g[2] = {{.leaf_size = 8}, {.leaf_size = 8}};
        for (int k = 0; k < 2; k++) {
            struct tp_triage_fleet f = {.n = 64,
                                        .seed = seed,
                                        .leaf_size = 8,
                                        .congestion = {.rate = k ? 0 : r, .size = 0.3}};
            struct tp_triage_opts o = {.seed = seed, .min_effect = 9};
            json_t *res = NULL;
            tp_error err = {0};
            TP_EQ_INT(tp__triage_sim_run(&f, &o, true, keep_groups, &g[k], &res, &err), 0);
            json_decref(res);
        }
        TP_EQ_INT(g[0].n, g[1].n);
        for (int i = 0; i < g[0].n; i++) {
            TP_EQ_INT(g[0].leaves[i], g[1].leaves[i]);
            groups++;
            slowed += g[0].fig[i] > g[1].fig[i] * (1 + 1e-9);
            expected += 1 - pow(1 - r, g[0].leaves[i]);
        }
    }
    print_message("groups congested: %d of %d, expected %.0f (one leaf's draw alone: %.0f)\n",
                  slowed, groups, expected, r * groups);
    TP_NEAR((double)slowed / groups, expected / groups, 0.05);
}

/* Drift: every figure times (1 + drift)^((k - 1) / (R - 1)) in round k, R
 * the tier's rounds and the isolation bound: each round's median pair
 * figure against the first's, and none without it. */
static void sim_noise_drift(void **state)
{
    (void)state;
    const double drifts[] = {0.1, -0.1, 0};
    struct drawn d = {0};
    for (size_t j = 0; j < sizeof drifts / sizeof *drifts; j++) {
        struct tp_triage_fleet f = {.n = 4096, .noise = 0.02, .seed = 11, .drift = drifts[j]};
        draw_pairs(&f, NULL, &d);
        int r[TP_TRIAGE_NSTAGES], count, first = 0, checked = 0;
        int R = tp_triage_tier_rounds(NULL, f.n, NULL, r) + tp_triage_isolation_bound(f.n, NULL);
        double m0 = 0;
        for (int k = 1; k <= R; k++) {
            double m = pair_median(&d, k, &count);
            if (count < 1000)
                continue;
            if (!first) {
                first = k;
                m0 = m;
                continue;
            }
            double want = pow(1 + drifts[j], (double)(k - first) / (R - 1));
            print_message("drift %+.0f %%: round %d of %d: median %.4f of round %d's, "
                          "expected %.4f\n",
                          100 * drifts[j], k, R, m / m0, first, want);
            TP_NEAR(m / m0, want, 0.003);
            checked++;
        }
        assert_true(checked >= 5);
    }
    drawn_free(&d);
}

/* The document says the noise model the figures were drawn from. */
static void sim_noise_echoed(void **state)
{
    (void)state;
    struct tp_triage_fleet f = {.n = 64,
                                .noise = 0.08,
                                .test_noise = 0.05,
                                .seed = 9,
                                .spikes = {0.01, 0.5},
                                .congestion = {0.05, 0.1},
                                .leaf_size = 8,
                                .drift = -0.02};
    json_t *res = simulate(&f, NULL, 9);
    const json_t *m = json_object_get(sim_of(res), "noise_model");
    assert_non_null(m);
    TP_NEAR(json_real_value(json_object_get(m, "noise")), 0.08, 1e-12);
    TP_EQ_INT(json_integer_value(json_object_get(m, "iters")), 20);
    TP_NEAR(json_real_value(json_object_get(m, "test_noise")), 0.05, 1e-12);
    TP_EQ_INT(json_integer_value(json_object_get(m, "seed")), 9);
    TP_NEAR(json_real_value(json_object_get(json_object_get(m, "spikes"), "rate")), 0.01, 1e-12);
    TP_NEAR(json_real_value(json_object_get(json_object_get(m, "spikes"), "size")), 0.5, 1e-12);
    TP_NEAR(json_real_value(json_object_get(json_object_get(m, "congestion"), "rate")), 0.05,
            1e-12);
    TP_NEAR(json_real_value(json_object_get(json_object_get(m, "congestion"), "size")), 0.1, 1e-12);
    TP_EQ_INT(json_integer_value(json_object_get(m, "leaf_size")), 8);
    TP_NEAR(json_real_value(json_object_get(m, "drift")), -0.02, 1e-12);
    int r[TP_TRIAGE_NSTAGES];
    TP_EQ_INT(json_integer_value(json_object_get(m, "drift_rounds")),
              tp_triage_tier_rounds(NULL, 64, NULL, r) + tp_triage_isolation_bound(64, NULL));
    json_decref(res);
    f.leaf_size = 0; /* the default */
    res = simulate(&f, NULL, 9);
    m = json_object_get(sim_of(res), "noise_model");
    TP_EQ_INT(json_integer_value(json_object_get(m, "leaf_size")), 32);
    json_decref(res);
}

static void sim_noise_errors(void **state)
{
    (void)state;
    static const struct {
        struct tp_triage_fleet f;
        const char *says;
    } bad[] = {
        {{.n = 8, .spikes = {1.5, 0.5}}, "spikes: rate 1.5"},
        {{.n = 8, .spikes = {0.01, -0.5}}, "spikes: rate 0.01: 0 to 100%, size -0.5"},
        {{.n = 8, .congestion = {0.05, 11}}, "congestion: rate 0.05: 0 to 100%, size 11"},
        {{.n = 8, .congestion = {NAN, 0.1}}, "congestion: rate nan"},
        {{.n = 8, .leaf_size = -1}, "leaf_size -1"},
        {{.n = 8, .drift = -0.6}, "drift -0.6: -50% to 100%"},
        {{.n = 8, .drift = 1.5}, "drift 1.5"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *res = NULL;
        tp_error err = {0};
        TP_EQ_INT(tp_triage_simulate(&bad[i].f, NULL, true, &res, &err), TP_EUSAGE);
        TP_HAS(err.msg, bad[i].says);
        assert_null(res);
    }
}

/* ---- the fleet file ---- */

static void fleet_file(void **state)
{
    (void)state;
    char path[128];
    tp_test_write(dir, "fleet.yaml",
                  "nodes: 1024\n"
                  "noise: 3%\n"
                  "iters: 50\n"
                  "seed: 18446744073709551615\n"
                  "slow_nodes: [{node: 17, severity: 25%}, {node: 18, severity: 0.5, "
                  "collective: true}]\n"
                  "slow_links:\n"
                  "  - {a: 3, b: 900, severity: 30%}\n"
                  "  - {severity: 20%}\n"
                  "missing: [44, 45]\n"
                  "dies: [{node: 8, round: 3}]\n",
                  path, sizeof path);
    struct tp_triage_fleet f;
    tp_error err = {0};
    assert_int_equal(tp_triage_fleet_load(path, &f, &err), 0);
    TP_EQ_INT(f.n, 1024);
    TP_NEAR(f.noise, 0.03, 1e-12);
    TP_EQ_INT(f.iters, 50);
    TP_EQ_U64(f.seed, UINT64_MAX);
    TP_EQ_INT(f.nslow, 2);
    TP_EQ_INT(f.slow[1].node, 18);
    assert_true(f.slow[1].collective && !f.slow[0].collective);
    TP_NEAR(f.slow[0].severity, 0.25, 1e-12);
    TP_EQ_INT(f.nlinks, 2);
    TP_EQ_INT(f.link[0].b, 900);
    TP_EQ_INT(f.link[1].a, -1); /* drawn */
    TP_EQ_INT(f.link[1].b, -1);
    TP_EQ_INT(f.nmissing, 2);
    TP_EQ_INT(f.missing[1], 45);
    TP_EQ_INT(f.ndies, 1);
    TP_EQ_INT(f.dies[0].round, 3);
    /* the defaults */
    tp_test_write(dir, "small.yaml", "nodes: 8\n", path, sizeof path);
    assert_int_equal(tp_triage_fleet_load(path, &f, &err), 0);
    TP_NEAR(f.noise, 0.05, 1e-12);
    TP_EQ_INT(f.iters, 20);
    TP_EQ_INT(f.nslow + f.nlinks + f.nmissing + f.ndies, 0);
    /* evict or localise: plan's defaults (8 GPUs, 6000 h, 10 min), no
     * spare, back after 1 h; and given */
    TP_EQ_INT(f.gpus_per_node, 8);
    TP_NEAR(f.mtbf_node_s, 6000 * 3600.0, 0);
    TP_NEAR(f.restart_s, 600, 0);
    TP_EQ_INT(f.spare_nodes, 0);
    TP_NEAR(f.evict_return_s, 3600, 0);
    tp_test_write(dir, "evict.yaml",
                  "nodes: 8\ngpus_per_node: 4\nmtbf_per_node: 2000h\nrestart: 90s\n"
                  "spare_nodes: 16\nevict_return: 2h\n",
                  path, sizeof path);
    assert_int_equal(tp_triage_fleet_load(path, &f, &err), 0);
    TP_EQ_INT(f.gpus_per_node, 4);
    TP_NEAR(f.mtbf_node_s, 2000 * 3600.0, 0);
    TP_NEAR(f.restart_s, 90, 0);
    TP_EQ_INT(f.spare_nodes, 16);
    TP_NEAR(f.evict_return_s, 7200, 0);
}

/* A fleet file that must be refused: its text, where the error points
 * (LINE:COL and the key path) and what it says. */
struct bad_fleet {
    const char *name, *text, *where, *path, *says;
};

static void expect_bad_fleet(const struct bad_fleet *b)
{
    char path[128], at[160];
    tp_test_write(dir, "bad.yaml", b->text, path, sizeof path);
    struct tp_triage_fleet f;
    tp_error err = {0};
    int rc = tp_triage_fleet_load(path, &f, &err);
    if (rc != TP_EUSAGE)
        fail_msg("%s: rc %d, expected TP_EUSAGE (%s)", b->name, rc, err.msg);
    TP_EXPECT_ERR(b->name, err.msg, path, tp_test_err_at(at, sizeof at, b->where, b->path),
                  b->says);
}

static void fleet_file_errors(void **state)
{
    (void)state;
    static const struct bad_fleet bad[] = {
        {"empty", "# nothing\n", "1:1", "", "empty document"},
        {"no nodes", "noise: 5%\n", "1:1", "nodes", "required"},
        {"one node", "nodes: 1\n", "1:8", "nodes", "between 2 and 1000000"},
        {"unknown key", "nodes: 8\nslow_node: []\n", "2:1", "slow_node", "did you mean slow_nodes"},
        {"node past the fleet", "nodes: 8\nslow_nodes: [{node: 8, severity: 20%}]\n", "2:21",
         "slow_nodes[0].node", "node 8: the fleet has nodes 0 to 7"},
        {"no severity", "nodes: 8\nslow_nodes: [{node: 2}]\n", "2:14", "slow_nodes[0].severity",
         "required"},
        {"zero severity", "nodes: 8\nslow_links: [{severity: 0}]\n", "2:25",
         "slow_links[0].severity", "above 0"},
        {"one end", "nodes: 8\nslow_links: [{a: 1, severity: 5%}]\n", "2:14", "slow_links[0].b",
         "required with a"},
        {"a loop", "nodes: 8\nslow_links: [{a: 1, b: 1, severity: 5%}]\n", "2:24",
         "slow_links[0].b", "a link joins two nodes"},
        {"missing past", "nodes: 8\nmissing: [1, 9]\n", "2:14", "missing[1]",
         "node 9: the fleet has nodes 0 to 7"},
        {"dies round 0", "nodes: 8\ndies: [{node: 1, round: 0}]\n", "2:25", "dies[0].round",
         "must be a round between 1 and 1000000"},
        {"dies past the bound", "nodes: 8\ndies: [{node: 1, round: 2000000}]\n", "2:25",
         "dies[0].round", "'2000000' must be a round between 1 and 1000000"},
        {"negative node", "nodes: 8\nmissing: [-1]\n", "2:11", "missing[0]", "-1"},
        {"not a mapping", "[1, 2]\n", "1:1", "", "expected a mapping"},
        {"a switch without a fabric", "nodes: 8\nslow_switches: [{leaf: 0, severity: 15%}]\n",
         "2:16", "slow_switches", "no fabric to plant it on"},
        {"a leaf past the fabric",
         "nodes: 64\nfabric: {per_leaf: 32, spines: 2}\nslow_switches: [{leaf: 2, severity: "
         "15%}]\n", "3:17", "slow_switches[0]", "leaf 2: the fabric has leaves 0 to 1"},
        {"a spine past the fabric",
         "nodes: 64\nfabric: {per_leaf: 32, spines: 2}\nslow_uplinks: [{leaf: 1, spine: 2, "
         "severity: 15%}]\n", "3:16", "slow_uplinks[0]", "spine 2: the fabric has spines 0 to 1"},
        {"no per_leaf", "nodes: 64\nfabric: {spines: 2}\n", "2:1", "fabric.per_leaf", "required"},
        {"a cable past the fleet", "nodes: 8\nbad_cables: [{node: 8, severity: 15%}]\n", "2:21",
         "bad_cables[0].node", "node 8: the fleet has nodes 0 to 7"},
        {"no rails", "nodes: 64\nfabric: {per_leaf: 32, spines: 2, rails: 0}\n", "2:42",
         "fabric.rails", "must be between 1 and 64"},
        {"too many rails", "nodes: 64\nfabric: {per_leaf: 32, spines: 2, rails: 65}\n", "2:42",
         "fabric.rails", "must be between 1 and 64"},
        {"a rail past the fabric",
         "nodes: 64\nfabric: {per_leaf: 32, spines: 2, rails: 4}\nslow_switches: [{leaf: 1, "
         "rail: 4, severity: 15%}]\n", "3:33", "slow_switches[0].rail",
         "rail 4: the fabric has rails 0 to 3"},
        {"an uplink's rail past the fabric",
         "nodes: 64\nfabric: {per_leaf: 32, spines: 2, rails: 2}\nslow_uplinks: [{leaf: 1, "
         "spine: 0, rail: 2, severity: 15%}]\n", "3:42", "slow_uplinks[0].rail",
         "rail 2: the fabric has rails 0 to 1"},
        {"a cable's rail on one rail",
         "nodes: 64\nfabric: {per_leaf: 32, spines: 2}\nbad_cables: [{node: 3, rail: 1, "
         "severity: 15%}]\n", "3:30", "bad_cables[0].rail",
         "rail 1: the fabric has one rail, 0"},
        {"a rail not a number",
         "nodes: 64\nfabric: {per_leaf: 32, spines: 2, rails: 2}\nbad_cables: [{node: 3, rail: "
         "one, severity: 15%}]\n", "3:30", "bad_cables[0].rail", "'one'"},
        {"a negative MTBF", "nodes: 8\nmtbf_per_node: -5h\n", "2:16", "mtbf_per_node",
         "'-5h' must be between 1 min and 1000 y"},
        {"spares not whole", "nodes: 8\nspare_nodes: 2.5\n", "2:14", "spare_nodes",
         "'2.5' is not a whole number"},
        {"no restart", "nodes: 8\nrestart: 0\n", "2:10", "restart", "must be above 0"},
        {"no GPUs", "nodes: 8\ngpus_per_node: 0\n", "2:16", "gpus_per_node",
         "at least 1 and at most 1024"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        expect_bad_fleet(&bad[i]);
    tp_error err = {0};
    struct tp_triage_fleet f;
    assert_int_equal(tp_triage_fleet_load("/nonexistent/fleet.yaml", &f, &err), TP_EUSAGE);
    TP_HAS(err.msg, "/nonexistent/fleet.yaml");
}

/* The noise model's keys: read, and off (leaf_size 32) when absent. */
static void fleet_file_noise(void **state)
{
    (void)state;
    char path[128];
    tp_test_write(dir, "noisy.yaml",
                  "nodes: 1024\n"
                  "spikes: {rate: 1%, size: 50%}\n"
                  "congestion:\n"
                  "  rate: 0.05\n"
                  "  size: 10%\n"
                  "leaf_size: 16\n"
                  "drift: -2%\n",
                  path, sizeof path);
    struct tp_triage_fleet f;
    tp_error err = {0};
    assert_int_equal(tp_triage_fleet_load(path, &f, &err), 0);
    TP_NEAR(f.spikes.rate, 0.01, 1e-12);
    TP_NEAR(f.spikes.size, 0.5, 1e-12);
    TP_NEAR(f.congestion.rate, 0.05, 1e-12);
    TP_NEAR(f.congestion.size, 0.1, 1e-12);
    TP_EQ_INT(f.leaf_size, 16);
    TP_NEAR(f.drift, -0.02, 1e-12);
    tp_test_write(dir, "quiet.yaml", "nodes: 8\n", path, sizeof path);
    assert_int_equal(tp_triage_fleet_load(path, &f, &err), 0);
    TP_NEAR(f.spikes.rate + f.spikes.size + f.congestion.rate + f.congestion.size, 0, 0);
    TP_NEAR(f.drift, 0, 0);
    TP_EQ_INT(f.leaf_size, 32);
    /* docs/examples/fleet-noisy.yaml: the realistic values of docs/fleet.md */
    assert_int_equal(
        tp_triage_fleet_load(TP_SOURCE_ROOT "/docs/examples/fleet-noisy.yaml", &f, &err), 0);
    assert_true(f.spikes.rate > 0 && f.congestion.rate > 0 && f.drift != 0);
}

static void fleet_file_noise_errors(void **state)
{
    (void)state;
    static const struct bad_fleet bad[] = {
        {"spike rate past 100 %", "nodes: 8\nspikes: {rate: 150%, size: 50%}\n", "2:16",
         "spikes.rate", "'150%' must be between 0 and 100%"},
        {"negative spike rate", "nodes: 8\nspikes: {rate: -1%, size: 50%}\n", "2:16", "spikes.rate",
         "must be between 0 and 100%"},
        {"spike size past 1000 %", "nodes: 8\nspikes: {rate: 1%, size: 2000%}\n", "2:26",
         "spikes.size", "'2000%' must be between 0 and 1000%"},
        {"a spike rate alone", "nodes: 8\nspikes: {rate: 1%}\n", "2:1", "spikes.size", "required"},
        {"spikes a number", "nodes: 8\nspikes: 1%\n", "2:9", "spikes", "expected a mapping"},
        {"a spike's unknown key", "nodes: 8\nspikes: {rate: 1%, size: 5%, tail: 2}\n", "2:30",
         "spikes.tail", "unknown key"},
        {"congestion rate not a number", "nodes: 8\ncongestion: {rate: often, size: 10%}\n", "2:20",
         "congestion.rate", "cannot parse 'often'"},
        {"a congestion size alone", "nodes: 8\ncongestion: {size: 10%}\n", "2:1", "congestion.rate",
         "required"},
        {"leaf_size 0", "nodes: 8\nleaf_size: 0\n", "2:12", "leaf_size",
         "'0' must be a node count between 1 and 1000000"},
        {"leaf_size a fraction", "nodes: 8\nleaf_size: 2.5\n", "2:12", "leaf_size",
         "not a whole number"},
        {"drift past 100 %", "nodes: 8\ndrift: 150%\n", "2:8", "drift",
         "'150%' must be between -50% and 100%"},
        {"drift below -50 %", "nodes: 8\ndrift: -0.7\n", "2:8", "drift",
         "'-0.7' must be between -50% and 100%"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        expect_bad_fleet(&bad[i]);
}

/* ---- evict or localise (docs/fleet.md) ---- */

/* The model at hand-worked inputs: 1,000 nodes of 8 GPUs (G = 8,000), 10
 * suspects, 30 rounds of 4 s left (W = 120 s), MTBF 6,000 h (21.6e6 s), a
 * 10 min restart, 4 spares, back after 1 h, alpha 1e-3, beta 0.01, min
 * effect 10 %. Every figure below is worked out by hand from the
 * formulas of docs/fleet.md, not by the code under test. */
static const struct tp_triage_decide_in hand = {
    .nodes = 1000, .suspects = 10, .rounds_left = 30, .round_s = 4, .gpus_per_node = 8,
    .mtbf_node_s = 21.6e6, .restart_s = 600, .spare_nodes = 4, .evict_return_s = 3600,
    .alpha = 1e-3, .beta = 0.01, .min_effect = 0.10};

static void decide_model(void **state)
{
    (void)state;
    struct tp_triage_decision d;
    tp_triage_decide(&hand, &d);
    /* isolate: 8,000 GPUs wait 120 s: 266.667 GPU-h; failures meanwhile
     * 1000 x 120 / 21.6e6 = 1/180, each a restart of 8,000 x 600 s =
     * 1333.33 GPU-h: 7.4074; a false name 1e-3 x 8 GPUs x 1 h = 0.008; a
     * missed fault 0.01 x 0.10 x 8 x 6000 h = 48 */
    TP_NEAR(d.iso_wait_gpu_h, 266.666667, 1e-5);
    TP_NEAR(d.iso_fail_gpu_h, 7.407407, 1e-5);
    TP_NEAR(d.iso_false_gpu_h, 0.008, 1e-9);
    TP_NEAR(d.iso_missed_gpu_h, 48, 1e-9);
    TP_NEAR(d.isolate_gpu_h, 266.666667 + 7.407407 + 0.008 + 48, 1e-4);
    /* evict: the restart 1333.33; failures during it 1000 x 600 / 21.6e6
     * = 1/36 of a restart: 37.037; 10 suspects, one of them the fault, 9
     * sound ones, 3 spares left after the fault's: 6 nodes short for
     * 1 h, 48 */
    TP_NEAR(d.evict_restart_gpu_h, 1333.333333, 1e-5);
    TP_NEAR(d.evict_fail_gpu_h, 37.037037, 1e-5);
    TP_NEAR(d.evict_short_gpu_h, 48, 1e-9);
    TP_NEAR(d.evict_gpu_h, 1333.333333 + 37.037037 + 48, 1e-4);
    assert_false(d.evict);
}

/* Where the choice flips: in the restart (spares for every suspect), and
 * in the spares (a short restart, the evicted away 4 h). */
static void decide_flips(void **state)
{
    (void)state;
    struct tp_triage_decision d;
    /* spares for all: with a = G / 3600, k = n / M, evict = a (R + k R^2)
     * and isolate = C + a k W R (its failures restart the job too), C =
     * 266.6667 + 0.008 + 48 = 314.6747; equal at the root R* of
     * k R^2 + (1 - k W) R - C / a = 0, C / a = 141.6036 s, k W = 1 / 180 */
    double a = 8000 / 3600.0, k = 1000 / 21.6e6, kw = 1 / 180.0, c = 266.666667 + 0.008 + 48;
    double r_star = (-(1 - kw) + sqrt((1 - kw) * (1 - kw) + 4 * k * c / a)) / (2 * k);
    /* 141.6036 / (1 - 1/180) = 142.395, less the failures' share: 141.463 */
    TP_NEAR(r_star, 141.463, 0.001);
    struct tp_triage_decide_in in = hand;
    in.spare_nodes = 10;
    in.restart_s = r_star * (1 - 1e-6);
    tp_triage_decide(&in, &d);
    assert_true(d.evict);
    TP_NEAR(d.evict_short_gpu_h, 0, 0);
    in.restart_s = r_star * (1 + 1e-6);
    tp_triage_decide(&in, &d);
    assert_false(d.evict);
    /* a 60 s restart, the evicted away 4 h: evict = 133.333 + 0.3704 +
     * (9 - (P - 1)) x 8 x 4 = 133.704 + 32 (10 - P), for P >= 1; isolate
     * 266.667 + 0.032 + 48 + a k W 60 = 315.439; evict is below it while
     * 32 (10 - P) < 181.735, that is from P = 5 */
    in.restart_s = 60;
    in.evict_return_s = 4 * 3600;
    in.spare_nodes = 5;
    tp_triage_decide(&in, &d);
    TP_NEAR(d.evict_short_gpu_h, 160, 1e-9);
    TP_NEAR(d.evict_gpu_h, 133.333333 + 0.370370 + 160, 1e-4);
    /* the false name's sound node away 4 h now: 1e-3 x 8 x 4 = 0.032 */
    TP_NEAR(d.isolate_gpu_h, 266.666667 + 0.032 + 48 + 8000 / 3600.0 / 180 * 60, 1e-4);
    assert_true(d.evict);
    in.spare_nodes = 4;
    tp_triage_decide(&in, &d);
    TP_NEAR(d.evict_short_gpu_h, 192, 1e-9);
    assert_false(d.evict);
    /* no spare: the fault leaves the job either way, its 9 sound fellows
     * short 4 h: 288, as with one spare */
    in.spare_nodes = 0;
    tp_triage_decide(&in, &d);
    TP_NEAR(d.evict_short_gpu_h, 9 * 8 * 4, 1e-9);
    assert_false(d.evict);
    in.spare_nodes = 1;
    tp_triage_decide(&in, &d);
    TP_NEAR(d.evict_short_gpu_h, 9 * 8 * 4, 1e-9);
    /* a tie is isolation's: nothing is learnt by evicting */
    struct tp_triage_decide_in tie = {.nodes = 1, .suspects = 1, .rounds_left = 1,
                                      .round_s = 600, .gpus_per_node = 1, .mtbf_node_s = 1e300,
                                      .restart_s = 600, .evict_return_s = 1};
    tp_triage_decide(&tie, &d);
    TP_NEAR(d.isolate_gpu_h, d.evict_gpu_h, 0);
    assert_false(d.evict);
}

/* A fleet of 64 with one slow node, simulated: the decision is made as
 * the isolation starts, from the screen's measured rounds, and flips
 * with the restart and the spares. */
static json_t *decide_sim(double restart_s, int spares, int *spares_in_fleet)
{
    struct tp_triage_fleet f = {.n = 64, .noise = 0.05, .seed = 3, .nslow = 1};
    f.slow[0].node = 17;
    f.slow[0].severity = 0.25;
    if (spares_in_fleet) /* through the fleet's keys rather than the options */
        f.spare_nodes = *spares_in_fleet;
    struct tp_triage_opts o = {.seed = 3, .restart_s = restart_s, .spare_nodes = spares};
    json_t *res = NULL;
    tp_error err = {0};
    if (tp_triage_simulate(&f, &o, true, &res, &err))
        fail_msg("simulate: %s", err.msg);
    return res;
}

static void decide_in_the_triage(void **state)
{
    (void)state;
    json_t *res = decide_sim(600, 0, NULL);
    const json_t *d = json_object_get(res, "decision");
    assert_true(json_is_object(d));
    TP_EQ_STR(json_string_value(json_object_get(d, "choice")), "isolate");
    long long sus = json_integer_value(json_object_get(d, "suspects"));
    assert_true(sus >= 1);
    /* the screen tier at 64 nodes: the gang and the groups (5 s + 0.2 s),
     * 2 ring and 4 matching rounds (3 s + 0.2 s): 29.6 s over 8 rounds */
    TP_NEAR(json_real_value(json_object_get(d, "round_s")), 29.6 / 8, 1e-9);
    assert_true(json_is_true(json_object_get(d, "round_s_measured")));
    TP_EQ_INT(json_integer_value(json_object_get(d, "rounds_left_bound")), 6 + 23);
    TP_EQ_INT(json_integer_value(json_object_get(d, "nodes")), 64);
    /* the defaults: 8 GPUs, 6000 h, 10 min, no spare, back after 1 h */
    TP_EQ_INT(json_integer_value(json_object_get(d, "gpus_per_node")), 8);
    TP_NEAR(json_real_value(json_object_get(d, "mtbf_per_node_s")), 21.6e6, 0);
    TP_NEAR(json_real_value(json_object_get(d, "restart_s")), 600, 0);
    TP_EQ_INT(json_integer_value(json_object_get(d, "spares")), 0);
    /* isolate: 512 GPUs x 29 x 3.7 s = 15.260 GPU-h; failures 64 x 107.3 /
     * 21.6e6 x 512 x 600 / 3600 = 0.02713; 0.008; 48 */
    TP_NEAR(json_real_value(json_object_get(d, "isolate_gpu_hours")),
            512 * 29 * 3.7 / 3600 + 64 * 29 * 3.7 / 21.6e6 * 512 * 600 / 3600 + 0.008 + 48,
            1e-9);
    /* evict: 85.333 + 64 x 600 / 21.6e6 x 85.333 + (sus - 1) x 8 x 1 h */
    TP_NEAR(json_real_value(json_object_get(d, "evict_gpu_hours")),
            512 * 600 / 3600.0 + 64 * 600 / 21.6e6 * 512 * 600 / 3600 + (double)(sus - 1) * 8,
            1e-9);
    /* the isolation ran all the same: what it cost, at its rounds' times */
    double spent = json_real_value(json_object_get(d, "isolation_spent_gpu_hours"));
    double iso = (double)json_integer_value(json_object_get(res, "rounds_isolation"));
    assert_true(spent >= 512 * iso * 3.2 / 3600 - 1e-9 && spent <= 512 * iso * 5.2 / 3600 + 1e-9);
    TP_HAS(json_string_value(json_object_get(d, "says")), "isolate: isolating the ");
    json_decref(res);
    /* a 1 min restart with a spare for every suspect: evicting loses
     * 8.53 GPU-h and some, against the isolation's 63 */
    res = decide_sim(60, 1000, NULL);
    d = json_object_get(res, "decision");
    TP_EQ_STR(json_string_value(json_object_get(d, "choice")), "evict");
    TP_NEAR(json_real_value(json_object_get(json_object_get(json_object_get(d, "terms"), "evict"),
                                            "short")),
            0, 0);
    TP_HAS(json_string_value(json_object_get(d, "says")), "a spare for each");
    json_decref(res);
    /* ... and the fleet's own key, where the options leave it */
    int fleet_spares = 1000;
    res = decide_sim(60, 0, &fleet_spares);
    d = json_object_get(res, "decision");
    TP_EQ_INT(json_integer_value(json_object_get(d, "spares")), 1000);
    TP_EQ_STR(json_string_value(json_object_get(d, "choice")), "evict");
    json_decref(res);
}

/* Zero suspects: nothing to decide, "decision" null; the round times and
 * the inputs refused where they are bad. */
static void decide_nothing_and_errors(void **state)
{
    (void)state;
    struct tp_triage_fleet f = {.n = 64, .noise = 0.001, .seed = 1};
    json_t *res = simulate(&f, NULL, 1);
    TP_EQ_INT(json_array_size(json_object_get(res, "named")), 0);
    TP_EQ_INT(json_integer_value(json_object_get(res, "rounds_isolation")), 0);
    assert_true(json_is_null(json_object_get(res, "decision")));
    json_decref(res);
    tp_triage *t = NULL;
    tp_error err = {0};
    assert_int_equal(tp_triage_new(8, NULL, NULL, &t, &err), 0);
    assert_null(tp_triage_decision_json(t)); /* before the screen */
    assert_int_equal(tp_triage_round_took(t, 3, &err), TP_EUSAGE); /* no round yet */
    const struct tp_triage_round *r = tp_triage_next(t);
    double fig[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    assert_int_equal(tp_triage_record(t, fig, NULL, &err), 0);
    assert_int_equal(tp_triage_round_took(t, -1, &err), TP_EUSAGE);
    TP_HAS(err.msg, "a time above 0");
    assert_int_equal(tp_triage_round_took(t, INFINITY, &err), TP_EUSAGE);
    assert_int_equal(tp_triage_round_took(t, 2.5, &err), 0);
    assert_int_equal(tp_triage_round_took(t, 2.5, &err), TP_EUSAGE); /* once a round */
    (void)r;
    tp_triage_free(t);
    struct tp_triage_opts bad[] = {{.mtbf_node_s = -1}, {.restart_s = -60}, {.spare_nodes = -1},
                                   {.gpus_per_node = 1025}, {.evict_return_s = -1}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        t = NULL;
        assert_int_equal(tp_triage_new(8, NULL, &bad[i], &t, &err), TP_EUSAGE);
        assert_null(t);
        TP_HAS(err.msg, "evict or localise");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tier_rounds),
        cmocka_unit_test(estimate_and_pick),
        cmocka_unit_test(planner),
        cmocka_unit_test(driver_errors),
        cmocka_unit_test(failed_tests),
        cmocka_unit_test(lost_outside_rounds),
        cmocka_unit_test(stopped_midway),
        cmocka_unit_test(sim_clean),
        cmocka_unit_test(sim_slow_node),
        cmocka_unit_test(sim_slow_link),
        cmocka_unit_test(sim_two_faults),
        cmocka_unit_test(sim_noisy_fabric),
        cmocka_unit_test(sim_fabric_faults),
        cmocka_unit_test(sim_rail_fabric),
        cmocka_unit_test(sim_uplink_one_of_eight),
        cmocka_unit_test(sim_small_fleets),
        cmocka_unit_test(iso_partner_not_across_the_link),
        cmocka_unit_test(topology_names_its_uplinks),
        cmocka_unit_test(sim_collective_fault),
        cmocka_unit_test(sim_missing_and_dead),
        cmocka_unit_test(sim_unexercised_link),
        cmocka_unit_test(sim_errors),
        cmocka_unit_test(fleet_file),
        cmocka_unit_test(fleet_file_errors),
        cmocka_unit_test(sim_noise_spikes),
        cmocka_unit_test(sim_noise_congestion),
        cmocka_unit_test(sim_noise_congestion_groups),
        cmocka_unit_test(sim_noise_drift),
        cmocka_unit_test(sim_noise_echoed),
        cmocka_unit_test(sim_noise_errors),
        cmocka_unit_test(fleet_file_noise),
        cmocka_unit_test(fleet_file_noise_errors),
        cmocka_unit_test(decide_model),
        cmocka_unit_test(decide_flips),
        cmocka_unit_test(decide_in_the_triage),
        cmocka_unit_test(decide_nothing_and_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
