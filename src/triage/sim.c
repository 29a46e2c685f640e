/* The fleet simulator (include/tp/triage.h): the triage's own planner,
 * judgement and isolation, with every test's figure drawn from a model
 * fleet instead of measured. It scores what was named against what was
 * planted: precision, recall, and the rounds it took after the tier's.
 * The noise beyond the Gaussian (spikes, a leaf's congestion, the run's
 * drift: docs/fleet.md, "The noise model") draws from streams of its own,
 * so turning one on moves no other draw: a run with it and one without
 * differ by it alone. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tp/intr.h"
#include "triage_int.h"

#define PAIR_FIG 10e-6 /* a pair test's figure: a 10 us median latency */
#define GROUP_FIG 1e-3 /* a group's: a 1 ms allreduce, times 2(n-1)/n */

struct sim {
    const struct tp_triage_fleet *f;
    double *fnet, *fall; /* per node: its factor in pairs, in collectives */
    int *pos, *stamp;    /* a test's ring positions */
    bool *lost, *exercised;
    uint64_t rng;
    double spread;
    /* congestion: per node its leaf (consecutive nodes, leaf_size each,
     * until a topology fills it), per leaf its factor this round (NULL:
     * off) */
    int *leaf, nleaves, leaf_size;
    double *cong;
    uint64_t spike_rng, cong_rng;
    int drift_rounds; /* R: the drift is reached by round R */
    double drift_now; /* this round's factor */
    struct tp__sim_fabric fab; /* the switches (sim_fabric.c) */
};

static int check_node(int v, int n, const char *what, tp_error *err)
{
    if (v < 0 || v >= n)
        return tp_error_set(err, TP_EUSAGE, "%s %d: the nodes are 0 to %d", what, v, n - 1);
    return 0;
}

static int check(const struct tp_triage_fleet *f, const struct tp_triage_opts *o, tp_error *err)
{
    if (f->n < 2 || f->n > TP_TRIAGE_MAX_NODES)
        return tp_error_set(err, TP_EUSAGE, "nodes %d: 2 to %d", f->n, TP_TRIAGE_MAX_NODES);
    if (!(f->noise >= 0 && f->noise <= 1) || !(f->test_noise >= 0 && f->test_noise <= 1))
        return tp_error_set(err, TP_EUSAGE, "noise: 0 to 100%%");
    if (f->iters < 0 || f->iters > 1000000)
        return tp_error_set(err, TP_EUSAGE, "iters %d: 1 to 1000000", f->iters);
    if (tp__sim_fabric_check(f, err))
        return TP_EUSAGE;
    const struct tp_triage_burst *burst[2] = {&f->spikes, &f->congestion};
    for (int i = 0; i < 2; i++)
        if (!(burst[i]->rate >= 0 && burst[i]->rate <= 1) ||
            !(burst[i]->size >= 0 && burst[i]->size <= 10))
            return tp_error_set(err, TP_EUSAGE, "%s: rate %g: 0 to 100%%, size %g: 0 to 1000%%",
                                i ? "congestion" : "spikes", burst[i]->rate, burst[i]->size);
    if (f->leaf_size < 0 || f->leaf_size > TP_TRIAGE_MAX_NODES)
        return tp_error_set(err, TP_EUSAGE, "leaf_size %d: 1 to %d", f->leaf_size,
                            TP_TRIAGE_MAX_NODES);
    if (!(f->drift >= -0.5 && f->drift <= 1))
        return tp_error_set(err, TP_EUSAGE, "drift %g: -50%% to 100%%", f->drift);
    if (f->nslow < 0 || f->nslow > TP_TRIAGE_SIM_MAX_FAULTS || f->nlinks < 0 ||
        f->nlinks > TP_TRIAGE_SIM_MAX_FAULTS || f->nmissing < 0 ||
        f->nmissing > TP_TRIAGE_SIM_MAX_FAULTS || f->ndies < 0 ||
        f->ndies > TP_TRIAGE_SIM_MAX_FAULTS)
        return tp_error_set(err, TP_EUSAGE, "at most %d faults of each kind",
                            TP_TRIAGE_SIM_MAX_FAULTS);
    int rc = 0;
    for (int i = 0; rc == 0 && i < f->nslow; i++) {
        rc = check_node(f->slow[i].node, f->n, "slow_nodes: node", err);
        if (rc == 0 && !(f->slow[i].severity > 0 && f->slow[i].severity <= 100))
            rc = tp_error_set(err, TP_EUSAGE, "slow_nodes: severity %g: above 0, at most 100",
                              f->slow[i].severity);
    }
    for (int i = 0; rc == 0 && i < f->nlinks; i++) {
        bool drawn = f->link[i].a < 0 && f->link[i].b < 0; /* a link the tier crosses */
        if (!drawn)
            rc = check_node(f->link[i].a, f->n, "slow_links: a", err);
        if (rc == 0 && !drawn)
            rc = check_node(f->link[i].b, f->n, "slow_links: b", err);
        if (rc == 0 && !drawn && f->link[i].a == f->link[i].b)
            rc = tp_error_set(err, TP_EUSAGE, "slow_links: %d-%d: a link has two ends",
                              f->link[i].a, f->link[i].b);
        if (rc == 0 && !(f->link[i].severity > 0 && f->link[i].severity <= 100))
            rc = tp_error_set(err, TP_EUSAGE, "slow_links: severity %g: above 0, at most 100",
                              f->link[i].severity);
    }
    for (int i = 0; rc == 0 && i < f->nslow; i++)
        for (int j = 0; rc == 0 && j < i; j++)
            if (f->slow[j].node == f->slow[i].node)
                rc = tp_error_set(err, TP_EUSAGE,
                                  "slow_nodes: node %d is planted twice (entries "
                                  "%d and %d): a node is one fault, give it once",
                                  f->slow[i].node, j + 1, i + 1);
    for (int i = 0; rc == 0 && i < f->nlinks; i++)
        for (int j = 0; rc == 0 && j < i && f->link[i].a >= 0; j++)
            if ((f->link[j].a == f->link[i].a && f->link[j].b == f->link[i].b) ||
                (f->link[j].a == f->link[i].b && f->link[j].b == f->link[i].a))
                rc = tp_error_set(err, TP_EUSAGE,
                                  "slow_links: link %d-%d is planted twice "
                                  "(entries %d and %d): a link is one fault, give it once",
                                  f->link[i].a, f->link[i].b, j + 1, i + 1);
    for (int i = 0; rc == 0 && i < f->nmissing; i++)
        rc = check_node(f->missing[i], f->n, "missing:", err);
    for (int i = 0; rc == 0 && i < f->ndies; i++) {
        rc = check_node(f->dies[i].node, f->n, "dies: node", err);
        if (rc == 0 && f->dies[i].round < 1)
            rc = tp_error_set(err, TP_EUSAGE, "dies: round %d: from 1", f->dies[i].round);
    }
    /* the planner plans for the nodes that join, as tp_triage_pick counts */
    int r[TP_TRIAGE_NSTAGES],
        planned = tp_triage_tier_rounds(o ? o->tier : NULL, f->n - f->nmissing, o, r);
    if (rc == 0 && planned > TP_TRIAGE_SIM_MAX_ROUNDS)
        rc = tp_error_set(err, TP_EUSAGE,
                          "--tier %s: %d rounds for %d nodes; the simulator "
                          "runs tiers of at most %d rounds",
                          o && o->tier ? o->tier : "screen", planned, f->n,
                          TP_TRIAGE_SIM_MAX_ROUNDS);
    return rc;
}

/* The worst factor of the link between a and b (either way). */
static double link_factor(const struct sim *s, int a, int b)
{
    double w = 1;
    for (int i = 0; i < s->f->nlinks; i++)
        if ((s->f->link[i].a == a && s->f->link[i].b == b) ||
            (s->f->link[i].a == b && s->f->link[i].b == a))
            w = fmax(w, 1 + s->f->link[i].severity);
    return w;
}

/* A rare slowdown's factor: 1 + size X with probability rate (X >= 0,
 * of mean 1: Lomax of tail index 2 when heavy, else exponential), or 1.
 * Lomax for a host's hiccups: how long a stall lasts (a preemption, a
 * page fault, a retransmission timeout) has a power-law tail; exponential
 * for a leaf's congestion: another job takes a share of the links, which
 * is bounded. */
static double burst(const struct tp_triage_burst *b, bool heavy, uint64_t *rng)
{
    if (!(tp__triage_uniform(rng) < b->rate))
        return 1;
    double u = 1 - tp__triage_uniform(rng); /* (0, 1] */
    return 1 + b->size * (heavy ? 1 / sqrt(u) - 1 : -log(u));
}

/* The round's congestion (each leaf's factor) and drift. */
static void new_round(struct sim *s, int round)
{
    for (int l = 0; s->cong && l < s->nleaves; l++)
        s->cong[l] = burst(&s->f->congestion, false, &s->cong_rng);
    s->drift_now =
        s->f->drift == 0 ? 1 : pow(1 + s->f->drift, (double)(round - 1) / (s->drift_rounds - 1));
}

/* The worst congestion of the leaves a test touches. */
static double congested(const struct sim *s, const struct tp_triage_test *x)
{
    double w = 1;
    for (int k = 0; s->cong && k < x->n; k++)
        w = fmax(w, s->cong[s->leaf[x->nodes[k]]]);
    return w;
}

static double draw(struct sim *s, const struct tp_triage_test *x, int id, bool planned)
{
    const struct tp_triage_fleet *f = s->f;
    double worst = 1, base;
    for (int k = 0; k < x->n; k++)
        if (s->lost[x->nodes[k]])
            return NAN;
    if (!x->group) {
        int a = x->nodes[0], b = x->nodes[1];
        worst = fmax(fmax(s->fnet[a], s->fnet[b]), link_factor(s, a, b));
        worst = fmax(worst, tp__sim_fabric_factor(&s->fab, a, b, x->rails));
        base = PAIR_FIG;
        for (int i = 0; planned && i < f->nlinks; i++)
            s->exercised[i] |= (f->link[i].a == a && f->link[i].b == b) ||
                               (f->link[i].a == b && f->link[i].b == a);
    } else {
        for (int k = 0; k < x->n; k++) {
            worst = fmax(worst, s->fall[x->nodes[k]]);
            s->pos[x->nodes[k]] = k;
            s->stamp[x->nodes[k]] = id;
            if (x->n >= 2) /* its ring's flows through the fabric, every rail */
                worst = fmax(worst, tp__sim_fabric_factor(&s->fab, x->nodes[k],
                                                          x->nodes[(k + 1) % x->n], 0));
        }
        for (int i = 0; i < f->nlinks; i++) {
            int a = f->link[i].a, b = f->link[i].b;
            if (s->stamp[a] != id || s->stamp[b] != id)
                continue;
            int d = abs(s->pos[a] - s->pos[b]);
            if (d == 1 || d == x->n - 1) {
                worst = fmax(worst, 1 + f->link[i].severity);
                s->exercised[i] |= planned;
            }
        }
        base = GROUP_FIG * 2.0 * (x->n - 1) / x->n;
    }
    double fig = base * worst * (1 + s->spread * tp__triage_normal(&s->rng));
    fig *= s->drift_now * congested(s, x);
    if (f->spikes.rate > 0)
        fig *= burst(&f->spikes, true, &s->spike_rng);
    return fmax(fig, 1e-3 * base);
}

/* A link the tier's own rounds cross, drawn (reservoir sampling over
 * every pair test and every ring link of every group): the rounds are
 * planned before anything is measured, so a dry run of them with equal
 * figures crosses the links the real run will. Not a link of a node that
 * another fault has (taken): two faults are two. */
static int crossed_link(int n, const bool *joined, const bool *taken,
                        const struct tp_triage_opts *o, uint64_t *rng, int *a, int *b,
                        tp_error *err)
{
    tp_triage *t = NULL;
    int rc = tp_triage_new(n, joined, o, &t, err);
    double *one = malloc(sizeof *one * (size_t)(n / 2 + 1));
    if (rc == 0 && !one)
        rc = tp_error_set(err, TP_ENOMEM, "out of memory");
    uint64_t seen = 0;
    while (rc == 0 && t->next_plan < t->nplan && (rc = tp_intr_check(err)) == 0) {
        const struct tp_triage_round *r = tp_triage_next(t);
        if (!r)
            break;
        for (int i = 0; i < r->ntests; i++) {
            const struct tp_triage_test *x = &r->tests[i];
            one[i] = 1;
            for (int k = 0; k < (x->n == 2 ? 1 : x->n); k++) {
                int u = x->nodes[k], w = x->nodes[(k + 1) % x->n];
                if (!taken[u] && !taken[w] && tp__triage_rand(rng) % ++seen == 0) {
                    *a = u;
                    *b = w;
                }
            }
        }
        rc = tp_triage_record(t, one, NULL, err);
    }
    tp_triage_free(t);
    free(one);
    return rc;
}

static bool named_node(const json_t *named, int v, int *round)
{
    size_t i;
    const json_t *e;
    json_array_foreach(named, i, e)
        if (strcmp(json_string_value(json_object_get(e, "kind")), "node") == 0 &&
            json_integer_value(json_object_get(e, "node")) == v) {
            *round = (int)json_integer_value(json_object_get(e, "round"));
            return true;
        }
    return false;
}

static bool named_link(const json_t *named, int a, int b, int *round)
{
    size_t i;
    const json_t *e;
    json_array_foreach(named, i, e) {
        if (strcmp(json_string_value(json_object_get(e, "kind")), "link") != 0)
            continue;
        int x = (int)json_integer_value(json_object_get(e, "a"));
        int y = (int)json_integer_value(json_object_get(e, "b"));
        if ((x == a && y == b) || (x == b && y == a)) {
            *round = (int)json_integer_value(json_object_get(e, "round"));
            return true;
        }
    }
    return false;
}

/* The noise model the figures were drawn from, in the fleet file's keys
 * (what a rerun needs), and R, the rounds the drift is spread over. */
static json_t *noise_model(const struct sim *s)
{
    const struct tp_triage_fleet *f = s->f;
    return json_pack("{s:f, s:i, s:f, s:I, s:{s:f, s:f}, s:{s:f, s:f}, s:i, s:f, s:i}", "noise",
                     f->noise, "iters", f->iters ? f->iters : 20, "test_noise", f->test_noise,
                     "seed", (json_int_t)f->seed, "spikes", "rate", f->spikes.rate, "size",
                     f->spikes.size, "congestion", "rate", f->congestion.rate, "size",
                     f->congestion.size, "leaf_size", s->leaf_size, "drift", f->drift,
                     "drift_rounds", s->drift_rounds);
}

/* planted against named: the "simulated" object */
static json_t *score(const struct sim *s, const json_t *res, double wall)
{
    const struct tp_triage_fleet *f = s->f;
    const json_t *named = json_object_get(res, "named");
    json_t *planted = json_array();
    int hits = 0, last = 0;
    bool all = true;
    for (int i = 0; i < f->nslow; i++) {
        int r = 0;
        bool hit = named_node(named, f->slow[i].node, &r);
        hits += hit;
        all &= hit;
        last = hit && r > last ? r : last;
        json_array_append_new(planted, json_pack("{s:s, s:i, s:f, s:b, s:b}", "kind", "node",
                                                 "node", f->slow[i].node, "severity",
                                                 f->slow[i].severity, "collective",
                                                 f->slow[i].collective, "named", hit));
    }
    for (int i = 0; i < f->nlinks; i++) {
        int r = 0;
        bool hit = named_link(named, f->link[i].a, f->link[i].b, &r);
        hits += hit;
        all &= hit;
        last = hit && r > last ? r : last;
        json_array_append_new(planted, json_pack("{s:s, s:i, s:i, s:f, s:b, s:b}", "kind", "link",
                                                 "a", f->link[i].a, "b", f->link[i].b,
                                                 "severity", f->link[i].severity, "exercised",
                                                 s->exercised[i], "named", hit));
    }
    tp__sim_fabric_score(f, named, planted, &hits, &all, &last);
    int nplanted = f->nslow + f->nlinks + f->nswitches + f->nuplinks + f->ncables,
        nnamed = (int)json_array_size(named);
    return json_pack("{s:f, s:o, s:i, s:i, s:i, s:f, s:f, s:o, s:o}", "wall_s", wall, "planted",
                     planted, "true_named", hits, "false_named", nnamed - hits, "missed",
                     nplanted - hits, "precision", nnamed ? (double)hits / nnamed : 1.0, "recall",
                     nplanted ? (double)hits / nplanted : 1.0, "rounds_to_name",
                     all && nplanted ? json_integer(last) : json_null(), "noise_model",
                     noise_model(s));
}

/* The noise's streams, congestion's leaves (s->leaf, s->cong; nothing
 * when it is off) and the drift's rounds, R: the tier's for the nodes
 * that join and the isolation bound. 0 or TP_ENOMEM. */
static int noise_setup(struct sim *s, const struct tp_triage_opts *o)
{
    const struct tp_triage_fleet *f = s->f;
    int n = f->n, r[TP_TRIAGE_NSTAGES];
    s->spike_rng = f->seed ^ 0x7370696b65000000ull;
    s->cong_rng = f->seed ^ 0x636f6e6700000000ull;
    s->drift_rounds = tp_triage_tier_rounds(o ? o->tier : NULL, n - f->nmissing, o, r) +
                      tp_triage_isolation_bound(n, NULL); /* a node's bound: drift's horizon */
    s->drift_rounds = s->drift_rounds < 2 ? 2 : s->drift_rounds;
    /* a fabric's leaves are congestion's */
    s->leaf_size = f->fabric.per_leaf > 0 ? f->fabric.per_leaf : f->leaf_size > 0 ? f->leaf_size : 32;
    if (!(f->congestion.rate > 0))
        return 0;
    s->nleaves = (n + s->leaf_size - 1) / s->leaf_size;
    s->leaf = malloc(sizeof *s->leaf * (size_t)n);
    s->cong = malloc(sizeof *s->cong * (size_t)s->nleaves);
    if (!s->leaf || !s->cong)
        return TP_ENOMEM;
    for (int v = 0; v < n; v++) /* consecutive nodes: a topology's leaves can replace this */
        s->leaf[v] = v / s->leaf_size;
    return 0;
}

int tp_triage_simulate(const struct tp_triage_fleet *f, const struct tp_triage_opts *o, bool brief,
                       json_t **out, tp_error *err)
{
    return tp__triage_sim_run(f, o, brief, NULL, NULL, out, err);
}

int tp__triage_sim_run(const struct tp_triage_fleet *given, const struct tp_triage_opts *o,
                       bool brief, tp__triage_sim_each *each, void *u, json_t **out, tp_error *err)
{
    *out = NULL;
    int rc = check(given, o, err);
    if (rc)
        return rc;
    struct tp_triage_fleet *f = malloc(sizeof *f);
    if (!f)
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    *f = *given;
    int n = f->n;
    struct sim s = {.f = f, .rng = f->seed ^ 0x73696d0000000000ull};
    int iters = f->iters ? f->iters : 20;
    s.spread = hypot(1.2533 * f->noise / sqrt(iters), f->test_noise);
    s.fnet = malloc(sizeof *s.fnet * (size_t)n);
    s.fall = malloc(sizeof *s.fall * (size_t)n);
    s.pos = malloc(sizeof *s.pos * (size_t)n);
    s.stamp = malloc(sizeof *s.stamp * (size_t)n);
    s.lost = calloc((size_t)n, sizeof *s.lost);
    s.exercised = calloc((size_t)f->nlinks + 1, sizeof *s.exercised);
    bool *joined = malloc(sizeof *joined * (size_t)n);
    double *fig = malloc(sizeof *fig * (size_t)(n / 2 + 1));
    tp_triage *t = NULL;
    if (!s.fnet || !s.fall || !s.pos || !s.stamp || !s.lost || !s.exercised || !joined || !fig ||
        noise_setup(&s, o))
        rc = tp_error_set(err, TP_ENOMEM, "out of memory");
    if (rc == 0)
        rc = tp__sim_fabric_init(&s.fab, f, err);
    /* the triage is told the fabric's topology */
    struct tp_triage_opts oo = {0};
    if (o)
        oo = *o;
    if (s.fab.topo) { /* and can pin a test to rails */
        oo.topo = s.fab.topo;
        oo.pin_rails = true;
    }
    /* evict or localise: the fleet's, where the options leave them */
    oo.gpus_per_node = oo.gpus_per_node ? oo.gpus_per_node : f->gpus_per_node;
    oo.spare_nodes = oo.spare_nodes ? oo.spare_nodes : f->spare_nodes;
    oo.mtbf_node_s = oo.mtbf_node_s > 0 ? oo.mtbf_node_s : f->mtbf_node_s;
    oo.restart_s = oo.restart_s > 0 ? oo.restart_s : f->restart_s;
    oo.evict_return_s = oo.evict_return_s > 0 ? oo.evict_return_s : f->evict_return_s;
    for (int v = 0; rc == 0 && v < n; v++) {
        s.fnet[v] = s.fall[v] = 1;
        s.stamp[v] = -1;
        joined[v] = true;
    }
    for (int i = 0; rc == 0 && i < f->nslow; i++) {
        int v = f->slow[i].node;
        s.fall[v] = fmax(s.fall[v], 1 + f->slow[i].severity);
        if (!f->slow[i].collective)
            s.fnet[v] = fmax(s.fnet[v], 1 + f->slow[i].severity);
    }
    for (int i = 0; rc == 0 && i < f->nmissing; i++)
        joined[f->missing[i]] = false;
    bool *taken = calloc((size_t)n, sizeof *taken);
    if (rc == 0 && !taken)
        rc = tp_error_set(err, TP_ENOMEM, "out of memory");
    for (int i = 0; rc == 0 && i < f->nslow; i++)
        taken[f->slow[i].node] = true;
    for (int i = 0; rc == 0 && i < f->ncables; i++)
        taken[f->cable[i].node] = true;
    for (int i = 0; rc == 0 && i < f->nlinks; i++)
        if (f->link[i].a >= 0)
            taken[f->link[i].a] = taken[f->link[i].b] = true;
    for (int i = 0; rc == 0 && i < f->nlinks; i++)
        if (f->link[i].a < 0) {
            rc = crossed_link(n, joined, taken, o, &s.rng, &f->link[i].a, &f->link[i].b, err);
            if (rc == 0 && f->link[i].a < 0)
                rc = tp_error_set(err, TP_EUSAGE, "slow_links: no link of the %s tier is left "
                                  "to plant one on", o && o->tier ? o->tier : "screen");
            if (rc == 0)
                taken[f->link[i].a] = taken[f->link[i].b] = true;
        }
    free(taken);
    if (rc == 0)
        rc = tp_triage_new(n, joined, &oo, &t, err);
    /* a bad cable's counters name its link, as a node's own tests would
     * (its NIC's, so its rail) */
    for (int i = 0; rc == 0 && i < f->ncables; i++)
        rc = tp_triage_link_errors_rail(t, f->cable[i].node, s.fab.topo ? f->cable[i].rail : -1,
                                        "symbol errors on its link to its leaf (simulated)", err);
    double wall = 0;
    int id = 0;
    const struct tp_triage_round *r;
    /* a signal stops the run at the next round (tp/intr.h) */
    while (rc == 0 && (rc = tp_intr_check(err)) == 0 && (r = tp_triage_next(t)) != NULL) {
        int round = tp_triage_rounds(t, TP_TRIAGE_NSTAGES) + 1;
        for (int i = 0; i < f->ndies; i++)
            if (f->dies[i].round == round)
                s.lost[f->dies[i].node] = true;
        bool planned = !t->screened;
        double longest = 0;
        new_round(&s, round);
        for (int i = 0; i < r->ntests; i++) {
            fig[i] = draw(&s, &r->tests[i], id++, planned);
            longest = fmax(longest, r->tests[i].group ? t->o.group_s : t->o.pair_s);
        }
        wall += longest + t->o.round_gap_s;
        if (each)
            each(u, round, r, fig);
        rc = tp_triage_record(t, fig, s.lost, err);
        if (rc == 0) /* its simulated wall time, as a driver measures a round's */
            rc = tp_triage_round_took(t, longest + t->o.round_gap_s, err);
    }
    if (rc == 0) {
        json_t *res = tp__triage_result_of(t, brief, err);
        if (!res)
            rc = TP_ENOMEM;
        else {
            json_object_set_new(res, "simulated", score(&s, res, wall));
            *out = res;
        }
    }
    tp_triage_free(t);
    free(s.fnet);
    free(s.fall);
    free(s.pos);
    free(s.stamp);
    free(s.lost);
    free(s.exercised);
    free(s.leaf);
    free(s.cong);
    tp__sim_fabric_free(&s.fab);
    free(joined);
    free(fig);
    free(f);
    return rc;
}
