/* The driver of include/tp/triage.h: the planned rounds of the tier, then
 * the screen judgement, then isolation rounds until no action is left.
 * What a round measured is kept (pairs and groups) for the judgement and
 * the verdicts. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp/plan.h" /* TP_PLAN_MAX_GPUS_PER_NODE: the same bound as plan's */
#include "tp/topology.h"
#include "triage_int.h"

int tp_triage_new(int n, const bool *joined, const struct tp_triage_opts *o, tp_triage **out,
                  tp_error *err)
{
    *out = NULL;
    struct tp_triage_opts d;
    tp__triage_defaults(o, &d);
    const struct tp__triage_tier *tier = tp__triage_tier_find(d.tier);
    char names[128];
    if (!tier)
        return tp_error_set(err, TP_EUSAGE, "--tier %s: %s", d.tier,
                            tp_triage_tier_names(" or ", names, sizeof names));
    if (n < 2 || n > TP_TRIAGE_MAX_NODES)
        return tp_error_set(err, TP_EUSAGE, "%d nodes: a fleet is 2 to %d nodes", n,
                            TP_TRIAGE_MAX_NODES);
    if (d.min_effect >= 10 || d.z > 100 || d.z_screen > 100 || d.matchings > 64 ||
        (o && o->group > n)) /* the default (8) shrinks to the fleet */
        return tp_error_set(err, TP_EUSAGE, "triage options out of range (min effect %g, z %g, "
                            "screen z %g, %d matchings, groups of %d)", d.min_effect, d.z,
                            d.z_screen, d.matchings, d.group);
    if (d.alpha >= 0.5 || d.beta >= 0.5 || d.repeats < 2 || d.repeats > TP_TRIAGE_MAX_REPEATS)
        return tp_error_set(err, TP_EUSAGE, "sequential test out of range (alpha %g, beta %g: "
                            "below 0.5; repeats %d: 2 to %d)", d.alpha, d.beta, d.repeats,
                            TP_TRIAGE_MAX_REPEATS);
    if (o && (o->gpus_per_node < 0 || o->gpus_per_node > TP_PLAN_MAX_GPUS_PER_NODE ||
              o->mtbf_node_s < 0 || o->restart_s < 0 || o->spare_nodes < 0 ||
              o->evict_return_s < 0))
        return tp_error_set(err, TP_EUSAGE, "evict or localise: inputs out of range (%d GPUs a "
                            "node: 1 to %d; MTBF %g s, restart %g s, %d spare nodes, return "
                            "%g s: none below 0)", o->gpus_per_node, TP_PLAN_MAX_GPUS_PER_NODE,
                            o->mtbf_node_s, o->restart_s, o->spare_nodes, o->evict_return_s);
    tp_triage *t = calloc(1, sizeof *t);
    if (!t)
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    t->n = n;
    t->o = d;
    t->alpha_each = d.alpha; /* split over the suspects at the screen's judgement */
    t->tier = tier;
    t->rng = d.seed ^ 0x7472696167650000ull;
    t->node = calloc((size_t)n, sizeof *t->node);
    t->order = malloc(sizeof *t->order * (size_t)n);
    t->cur_nodes = malloc(sizeof *t->cur_nodes * (size_t)n);
    t->cur.tests = malloc(sizeof *t->cur.tests * (size_t)(n / 2 + 1));
    t->cur_owner = malloc(sizeof *t->cur_owner * (size_t)(n / 2 + 1));
    t->cur_step = malloc(sizeof *t->cur_step * (size_t)(n / 2 + 1));
    t->good = malloc(sizeof *t->good * (size_t)n);
    t->named = json_array();
    int rc = t->node && t->order && t->cur_nodes && t->cur.tests && t->cur_owner && t->cur_step &&
                     t->good && t->named
                 ? 0
                 : TP_ENOMEM;
    for (int i = 0; rc == 0 && i < n; i++) {
        t->node[i].ev_other = -1;
        t->node[i].link_rail = -1;
        t->node[i].busy = -1;
        if (joined && !joined[i])
            t->node[i].status = ST_MISSING;
        else
            t->order[t->m++] = i;
    }
    if (rc == 0)
        tp__triage_shuffle(t->order, t->m, &t->rng);
    int r[TP_TRIAGE_NSTAGES], total = 0;
    if (rc == 0) {
        for (int s = 0; s < TP_TRIAGE_NSTAGES; s++)
            total += r[s] = tp__triage_stage_rounds(tier, (enum tp_triage_stage)s, t->m, &d);
        t->plan_stage = malloc((size_t)total + 1);
        t->plan_index = malloc(sizeof *t->plan_index * ((size_t)total + 1));
        rc = t->plan_stage && t->plan_index ? 0 : TP_ENOMEM;
    }
    for (int s = 0; rc == 0 && s < TP_TRIAGE_NSTAGES; s++)
        for (int k = 0; k < r[s]; k++) {
            t->plan_stage[t->nplan] = (uint8_t)s;
            t->plan_index[t->nplan++] = k;
        }
    if (rc == 0)
        rc = tp__triage_draw_matchings(t, r[TP_TRIAGE_MATCH]);
    if (rc == 0 && (rc = tp__triage_leaves_init(t, err)) != 0) {
        tp_triage_free(t);
        return rc;
    }
    if (rc) {
        tp_triage_free(t);
        return tp_error_set(err, rc, "out of memory");
    }
    *out = t;
    return 0;
}

void tp_triage_free(tp_triage *t)
{
    if (!t)
        return;
    tp__triage_free_actions(t);
    for (int v = 0; t->node && v < t->n; v++) {
        json_decref(t->node[v].ev_conf);
        free(t->node[v].link_errors);
    }
    tp__triage_leaves_free(t);
    free(t->node);
    free(t->order);
    free(t->plan_stage);
    free(t->plan_index);
    free(t->partners);
    free(t->cur_nodes);
    free(t->cur.tests);
    free(t->cur_owner);
    free(t->cur_step);
    free(t->pairs);
    free(t->groups);
    free(t->gnodes);
    free(t->good);
    free(t->adj_off);
    free(t->adj);
    free(t->refs);
    json_decref(t->named);
    free(t);
}

const struct tp_triage_round *tp_triage_next(tp_triage *t)
{
    if (t->pending)
        return &t->cur;
    while (!t->done) {
        if (t->next_plan < t->nplan) {
            int i = t->next_plan++;
            if (tp__triage_plan_round(t, (enum tp_triage_stage)t->plan_stage[i],
                                      t->plan_index[i]) != 0) {
                t->done = true; /* out of memory: the judgement says what it had */
                return NULL;
            }
        } else {
            if (!t->screened) {
                t->screened = true;
                if (tp__triage_screen_judge(t) != 0) {
                    t->done = true;
                    return NULL;
                }
                tp__triage_decide_at_screen(t); /* evict or localise, with suspects */
            }
            if (!tp__triage_iso_round(t)) {
                t->done = true;
                tp__triage_leaves_finish(t);
                return NULL;
            }
        }
        if (t->cur.ntests > 0) {
            t->pending = true;
            return &t->cur;
        }
    }
    return NULL;
}

int tp_triage_record(tp_triage *t, const double *figure, const bool *lost, tp_error *err)
{
    if (!t->pending)
        return tp_error_set(err, TP_EUSAGE, "triage: no round is waiting for its figures");
    enum tp_triage_stage st = t->cur.stage;
    for (int v = 0; lost && v < t->n; v++)
        if (lost[v] && t->node[v].status != ST_MISSING && t->node[v].status != ST_LOST) {
            t->node[v].status = ST_LOST;
            t->node[v].stage = (uint8_t)st;
        }
    double *fig = malloc(sizeof *fig * (size_t)(t->cur.ntests + 1));
    if (!fig)
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    int rc = 0;
    for (int i = 0; i < t->cur.ntests; i++) {
        const struct tp_triage_test *x = &t->cur.tests[i];
        double f = figure[i];
        bool some_lost = false;
        for (int k = 0; k < x->n; k++)
            some_lost |= t->node[x->nodes[k]].status == ST_LOST;
        if (!(f > 0) || isinf(f)) {
            f = NAN;
            if (!some_lost) { /* ours: the nodes are not judged on it, never blamed */
                t->harness_failures++;
                for (int k = 0; k < x->n; k++)
                    if (t->node[x->nodes[k]].status == ST_PASS)
                        t->node[x->nodes[k]].status = ST_ERROR;
            }
        } else if (some_lost) {
            f = NAN; /* a test that lost a node mid-way measured nothing */
        }
        fig[i] = f;
        for (int k = 0; !isnan(f) && k < x->n; k++) {
            t->node[x->nodes[k]].tests++;
            t->node[x->nodes[k]].stage = (uint8_t)st;
        }
        if (!t->screened && !isnan(f))
            rc = x->group ? tp__triage_add_group(t, x->nodes, x->n, f, st, false)
                          : tp__triage_add_pair(t, x->nodes[0], x->nodes[1], f, st);
        if (rc)
            break;
    }
    if (rc == 0 && t->screened)
        rc = tp__triage_iso_record(t, fig);
    free(fig);
    t->pending = false;
    t->round_no++;
    t->rounds[st]++;
    if (t->screened)
        t->iso_rounds++;
    return rc ? tp_error_set(err, rc, "out of memory") : 0;
}

int tp_triage_lose(tp_triage *t, int v, const char *stage, const char *what, tp_error *err)
{
    if (v < 0 || v >= t->n)
        return tp_error_set(err, TP_EUSAGE, "triage: node %d of %d", v, t->n);
    if (t->pending)
        return tp_error_set(err, TP_EUSAGE, "triage: node %d lost while a round waits", v);
    struct tp__node *x = &t->node[v];
    if (x->status == ST_LOST || x->status == ST_MISSING)
        return 0;
    x->status = ST_LOST;
    x->lost_stage = stage;
    x->lost_what = what;
    return 0;
}

int tp_triage_link_errors(tp_triage *t, int v, const char *what, tp_error *err)
{
    return tp_triage_link_errors_rail(t, v, -1, what, err);
}

int tp_triage_link_errors_rail(tp_triage *t, int v, int rail, const char *what, tp_error *err)
{
    if (v < 0 || v >= t->n)
        return tp_error_set(err, TP_EUSAGE, "triage: node %d of %d", v, t->n);
    int nr = t->o.topo ? t->o.topo->nrails : 1;
    if (rail < -1 || rail >= nr)
        return tp_error_set(err, TP_EUSAGE, "triage: node %d: rail %d of %d", v, rail, nr);
    char *w = strndup(what && *what ? what : "link errors", 100);
    if (!w)
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    free(t->node[v].link_errors);
    t->node[v].link_errors = w;
    t->node[v].link_rail = rail;
    return 0;
}

void tp_triage_stop(tp_triage *t, const char *why)
{
    snprintf(t->stopped, sizeof t->stopped, "%.300s", why && *why ? why : "stopped");
    tp__triage_leaves_finish(t); /* what a leaf named so far explains */
    for (int v = 0; v < t->n; v++)
        if (t->node[v].status == ST_PASS) {
            t->node[v].status = ST_ERROR;
            t->node[v].unfinished = true;
        }
}

int tp_triage_rounds(const tp_triage *t, enum tp_triage_stage s)
{
    if ((unsigned)s < TP_TRIAGE_NSTAGES)
        return t->rounds[s];
    return t->round_no;
}
