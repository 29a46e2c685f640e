/* validate across an allocation by a triage tier (docs/fleet.md): prolog,
 * screen and full run the rounds tp_triage plans (full: every pair by the
 * circle method) and those its isolation asks for.
 *
 * Rank 0 holds the triage (and its deputy a copy: rounds.c): it plans each
 * round and tells every node its own part; each node runs its part and
 * sends its figure back to rank 0 alone, which records the round, the
 * nodes lost in it too (they are left out of the rounds after).
 *
 *   a pair test    the profile's net tests from the pair's first node
 *                  against the second's server, then the bandwidth the
 *                  other way (a barrier between); its figure is the worse
 *                  direction's time to move the largest size once (size /
 *                  bandwidth), or without a bandwidth test the median
 *                  one-way latency at the largest size;
 *   a group test   coll-across: `trainpath coll --launcher env` on every
 *                  member at once, the group's first node its rank 0 and
 *                  rendezvous (at the port it reserved when the nodes
 *                  met; tp_boot_env_member); its figure is the median time
 *                  of the largest size.
 * A test that failed gives no figure (NAN): the triage neither judges nor
 * blames its nodes on it (trainpath's own failure is not the hardware's). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp/atomicfile.h"
#include "tp/log.h"
#include "tp/units.h"
#include "validate_int.h"

static double expect_s(const struct tp_validate_test *t)
{
    return t->expect_s;
}

/* The triage's options from c: the tier, its draws, and the per-test
 * durations of the estimate from the profile's expectations. */
static void opts_of(const struct tp__validate_ctx *c, int n, struct tp_triage_opts *o)
{
    *o = (struct tp_triage_opts){.tier = c->tier, .matchings = c->matchings, .seed = c->seed,
                                 .min_effect = c->min_effect};
    tp__validate_net_sums(c, expect_s, &o->pair_s, &o->group_s);
    /* --pairs-at-once K: a round of n/2 pairs takes that many slots */
    if (c->pairs_at_once > 0)
        o->pair_s *= (n / 2 + c->pairs_at_once - 1) / c->pairs_at_once;
    o->round_gap_s = 0.5; /* starting the children, the barriers */
    /* the decision to evict or isolate: --plan's job (0: the defaults) */
    o->gpus_per_node = c->gpus_per_node;
    o->mtbf_node_s = c->mtbf_node_s;
    o->restart_s = c->restart_s;
    o->spare_nodes = c->spare_nodes;
}

int tp__validate_tier_pick(struct tp__validate_ctx *c, int n, tp_error *err)
{
    struct tp_triage_opts o;
    opts_of(c, n, &o);
    if (c->budget_s > 0) {
        const char *tier = NULL;
        int rc = tp_triage_pick(n, c->budget_s, &o, &tier, err);
        if (rc)
            return rc;
        c->tier = tier;
        return 0;
    }
    if (!c->tier)
        c->tier = "screen";
    char names[128];
    if (tp_triage_tier_known(c->tier))
        return 0;
    return tp_error_set(err, TP_EUSAGE, "--tier %s: %s", c->tier,
                        tp_triage_tier_names(" or ", names, sizeof names));
}

/* The largest size's entry of a result document's sizes, or NULL. */
static const json_t *last_size(const json_t *doc)
{
    const json_t *s = json_object_get(json_object_get(doc, "results"), "sizes");
    size_t k = json_array_size(s);
    return k ? json_array_get(s, k - 1) : NULL;
}

/* A node's figure of what it ran in a round: bw (seconds per largest
 * size, the worst of its bandwidth tests), lat (its latency's) and failed. */
struct fig {
    double bw, lat, group;
    bool failed, ran;
};

static void fig_add(struct fig *f, const json_t *entry)
{
    const json_t *doc = json_object_get(entry, "doc");
    const char *st = json_string_value(json_object_get(entry, "status"));
    const json_t *sz = last_size(doc);
    f->ran = true;
    if (!st || tp__validate_status_of(st) == TP__VALIDATE_FAIL || !sz) {
        f->failed = true;
        return;
    }
    const char *test = json_string_value(json_object_get(json_object_get(doc, "results"), "test"));
    double bytes = json_number_value(json_object_get(sz, "size_bytes"));
    if (test && strcmp(test, "bw") == 0) {
        double bw = json_number_value(json_object_get(json_object_get(sz, "bw"), "value"));
        if (bw > 0)
            f->bw = fmax(f->bw, bytes / bw);
        else
            f->failed = true;
    } else if (test && strcmp(test, "lat") == 0) {
        f->lat = fmax(f->lat, 1e-9 * json_number_value(
                                         json_object_get(json_object_get(sz, "latency"), "p50")));
    } else if (json_object_get(sz, "time")) {
        double t = 1e-9 * json_number_value(json_object_get(json_object_get(sz, "time"), "p50"));
        if (t > 0)
            f->group = t;
        else
            f->failed = true;
    }
    /* other net tests (bibw, loaded) are kept in the results, not figured */
}

static void annotate(json_t *o, int round, const char *stage, const char *sub)
{
    json_object_set_new(o, "round", json_integer(round));
    json_object_set_new(o, "stage", json_string(stage));
    if (sub)
        json_object_set_new(o, "sub", json_string(sub));
}

/* The round's pair tests: in slots of --pairs-at-once K (all of them in
 * one slot without it), each both ways (a barrier between): the first node
 * runs every net test against the second's server, then the second the
 * directional ones against the first's. Every node takes every slot's
 * barriers; p says how many pair tests the round has and which is this
 * node's (if any). */
static int run_pairs(struct tp__validate_ctx *c, struct tp_boot *b,
                     const struct tp__validate_node *nodes, const struct tp__validate_part *p,
                     json_t *pairs, struct fig *f, tp_error *err)
{
    int me = tp_boot_rank(b), mine = p->pair, pos = p->pos;
    int at_once = c->pairs_at_once > 0 ? c->pairs_at_once : p->npairs;
    int slots = (p->npairs + at_once - 1) / at_once;
    const char *stage = tp_triage_stage_name(p->stage);
    char sub[64];
    snprintf(sub, sizeof sub, "%s-r%d", stage, p->round);
    for (int k = 0; k < 2 * slots; k++) {
        int slot = k / 2, way = k % 2;
        for (int i = 0; mine >= 0 && mine / at_once == slot && pos == way && i < c->tests.n; i++) {
            struct tp_validate_test *nt = &c->tests.t[i];
            if (nt->role != TP_VALIDATE_PAIR || (way == 1 && !nt->directional))
                continue;
            int other = p->t.nodes[1 - pos];
            json_t *o = tp__validate_measure_pair(c, nt, nodes, me, other, sub);
            annotate(o, p->round, stage, sub);
            fig_add(f, o);
            json_array_append_new(pairs, o);
        }
        int rc = tp_boot_barrier(b, err);
        if (rc)
            return rc;
    }
    return 0;
}

/* A group test: this node's rank of the collective across t's nodes. */
static void run_group(struct tp__validate_ctx *c, const struct tp__validate_node *nodes, int me,
                      const struct tp__validate_part *p, json_t *groups, struct fig *f)
{
    const struct tp_triage_test *t = &p->t;
    int pos = p->pos, round = p->round;
    const char *stage = tp_triage_stage_name(p->stage);
    struct tp_validate_test *across = NULL;
    for (int i = 0; i < c->tests.n && !across; i++)
        if (c->tests.t[i].role == TP_VALIDATE_ACROSS)
            across = &c->tests.t[i];
    if (!across)
        return;
    const struct tp__validate_node *lead = &nodes[t->nodes[0]];
    char vars[4][128];
    tp_boot_env_member(pos, t->n, lead->addr, lead->cport, vars); /* addr < 64, port < 16 */
    char *env[] = {vars[0], vars[1], vars[2], vars[3], NULL};
    char dir[TP__VALIDATE_PATH_MAX];
    tp__validate_path(dir, sizeof dir, "%s/groups/%s-r%d-%s/%s", c->outdir, stage, round, lead->label,
             nodes[me].label);
    tp__validate_mkdirs(dir);
    c->extra_env = env;
    enum tp__validate_status st = tp__validate_run_test(c, across, dir, NULL, NULL);
    c->extra_env = NULL;
    char doc[TP__VALIDATE_PATH_MAX];
    tp__validate_path(doc, sizeof doc, "%s/%s.json", dir, across->name);
    json_t *o = tp__validate_ran(across, st, pos == 0 ? doc : "");
    char sub[600];
    snprintf(sub, sizeof sub, "%s-r%d-%s", stage, round, lead->label);
    annotate(o, round, stage, sub);
    if (p->listed) { /* a large group's are the lead's alone (rounds.c) */
        json_t *members = json_array();
        for (int k = 0; k < t->n; k++)
            json_array_append_new(members, json_string(nodes[t->nodes[k]].label));
        json_object_set_new(o, "members", members);
    }
    json_object_set_new(o, "size", json_integer(t->n));
    json_object_set_new(o, "node", json_string(nodes[me].label));
    if (pos == 0) {
        fig_add(f, o);
    } else {
        /* the figure is rank 0's; the others say only whether they failed */
        f->ran = true;
        f->failed |= st == TP__VALIDATE_FAIL;
        json_object_del(o, "doc");
    }
    json_array_append_new(groups, o);
}

static void print_plan(const struct tp__validate_ctx *c, int n, const struct tp_triage_opts *o)
{
    if (c->topo) {
        int leaves = 0, above = 0;
        for (int s = 0; s < c->topo->nswitches; s++)
            c->topo->sw[s].level == 0 ? leaves++ : above++;
        printf("plan: the topology %s: %d leaf switches, %d above them; every node found in it\n",
               c->topology, leaves, above);
    }
    int r[TP_TRIAGE_NSTAGES];
    int total = tp_triage_tier_rounds(c->tier, n, o, r);
    printf("plan: the %s tier for %d nodes:", c->tier, n);
    const char *sep = " ";
    for (int s = 0; s < TP_TRIAGE_NSTAGES; s++)
        if (r[s]) {
            printf("%s%s %d", sep, tp_triage_stage_name((enum tp_triage_stage)s), r[s]);
            sep = ", ";
        }
    char pair[96];
    snprintf(pair, sizeof pair, c->pairs_at_once > 0 ? "a round's pairs %.1f s, %d at once"
                                                     : "a pair test %.1f s",
             o->pair_s, c->pairs_at_once);
    printf(" = %d rounds, about %.0f s (%s, a group test %.1f s)%s; isolation at "
           "most %d rounds more (%.0f s in all)\n",
           total, tp_triage_estimate_s(c->tier, n, o, false), pair, o->group_s,
           c->budget_s > 0 ? ", the deepest tier within --budget" : "",
           tp_triage_isolation_bound(n, o), tp_triage_estimate_s(c->tier, n, o, true));
    if (c->job_plan) {
        char m[48] = "not given (the triage's default)", rs[32];
        if (c->mtbf_node_s > 0)
            tp_fmt_duration_s(c->mtbf_node_s, m, sizeof m);
        printf("plan: suspects after the screen weighed, isolate or evict, for the job of %s: "
               "%d GPUs a node, a node's MTBF %s, a restart %s; %d spare nodes\n",
               c->job_plan, c->gpus_per_node, m, tp_fmt_duration_s(c->restart_s, rs, sizeof rs),
               c->spare_nodes);
    } else if (c->spare_nodes) {
        printf("plan: suspects after the screen weighed, isolate or evict, with %d spare nodes\n",
               c->spare_nodes);
    }
    printf("plan: a node silent for %.0f s in a round is lost (%s), %.0f s in its own tests, "
           "%.0f s in the gather; the lost are left out and the others go on%s\n",
           tp__validate_stage_timeout_s(c, TP__VALIDATE_ROUNDS),
           c->node_timeout_s > 0 ? "--node-timeout" : "its tests' deadlines",
           tp__validate_stage_timeout_s(c, TP__VALIDATE_LOCAL),
           tp__validate_stage_timeout_s(c, TP__VALIDATE_GATHER),
           c->own_star ? "; the stages meet over a star of their own, the launcher's operations cannot "
                 "be bounded"
               : "");
    fflush(stdout);
}

/* Each rank's node in the topology: by its Slurm name, else its label
 * (the host); one that never joined has none (-1). Every rank finds the
 * same, so a node missing from the file fails every rank alike (exit 2,
 * nothing measured). */
static int topology_nodes(const struct tp__validate_ctx *c, const struct tp__validate_node *nodes,
                          int n, int *map, tp_error *err)
{
    for (int r = 0; r < n; r++) {
        const char *name = nodes[r].sched[0] ? nodes[r].sched : nodes[r].label;
        map[r] = nodes[r].missing ? -1 : tp_topology_node(c->topo, name);
        if (map[r] < 0 && !nodes[r].missing)
            return tp_error_set(err, TP_EUSAGE, "--topology %s: node %s (rank %d) is not in it",
                                c->topology, name, r);
    }
    return 0;
}

int tp__validate_triage_new(const struct tp__validate_ctx *c, const struct tp__validate_node *nodes,
                            int n, int me, tp_triage **tri, tp_error *err)
{
    struct tp_triage_opts o;
    opts_of(c, n, &o);
    bool *joined = malloc((size_t)n * sizeof *joined);
    int *map = c->topo ? malloc((size_t)n * sizeof *map) : NULL;
    if (!joined || (c->topo && !map)) {
        free(joined);
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    }
    for (int r = 0; r < n; r++)
        joined[r] = !nodes[r].missing;
    int rc = c->topo ? topology_nodes(c, nodes, n, map, err) : 0;
    o.topo = c->topo;
    o.topo_nodes = map; /* read by tp_triage_new alone */
    if (rc == 0)
        rc = tp_triage_new(n, joined, &o, tri, err);
    free(joined);
    free(map);
    if (rc == 0 && me == 0 && !c->quiet)
        print_plan(c, n, &o);
    return rc;
}

int tp__validate_triage(struct tp__validate_ctx *c, struct tp_boot *ctl,
                        const struct tp__validate_node *nodes, tp_triage *tri,
                        struct tp__validate_rounds *rs, json_t *pairs, json_t *groups,
                        tp_error *err)
{
    int n = tp_boot_size(ctl), me = tp_boot_rank(ctl);
    struct tp_triage_opts o;
    opts_of(c, n, &o);
    double est = tp_triage_estimate_s(c->tier, n, &o, false), t0 = tp__validate_now_s();
    int stage_rounds[TP_TRIAGE_NSTAGES];
    int planned = tp_triage_tier_rounds(c->tier, n, &o, stage_rounds);
    int rc = 0;
    bool said = false; /* the decision to evict or isolate */
    for (;;) {
        struct tp__validate_part p;
        if ((rc = tp__validate_round_next(rs, ctl, tri, &p, err)) || p.end) {
            tp__validate_part_free(&p);
            break;
        }
        /* a new deputy, every node's record in hand: its triage now */
        tp_triage *made = NULL;
        if (p.needs_triage && ((rc = tp__validate_triage_new(c, nodes, n, me, &made, err)) ||
                               (rc = tp__validate_rounds_adopt(rs, made, err)))) {
            tp__validate_part_free(&p); /* made, if any, is rs's (adopted) */
            break;
        }
        const char *stage = tp_triage_stage_name(p.stage);
        if (me == 0) {
            char what[96];
            snprintf(what, sizeof what, "%s tier, round %d (%s)", c->tier, p.round, stage);
            tp__validate_progress(c, p.round - 1, p.round > planned ? p.round : planned, what,
                                  fmax(0, est - (tp__validate_now_s() - t0)));
        }
        tp__validate_round_hook(c, ctl, p.round);
        json_t *d = me == 0 && !said ? tp_triage_decision_json(tri) : NULL;
        if (d && !c->quiet) { /* the screen ended with suspects: evict or isolate */
            printf("decision: %s\n", json_string_value(json_object_get(d, "says")));
            fflush(stdout);
        }
        said |= d != NULL;
        json_decref(d);
        struct fig f = {0};
        if (p.ti >= 0 && p.t.group)
            run_group(c, nodes, me, &p, groups, &f);
        if (p.npairs > 0) /* every node takes the pairs' barriers */
            rc = run_pairs(c, ctl, nodes, &p, pairs, &f, err);
        char mine[96] = "";
        if (p.ti >= 0 && f.ran) {
            if (f.failed)
                snprintf(mine, sizeof mine, "%d F 0", p.ti);
            else if (f.group > 0)
                snprintf(mine, sizeof mine, "%d g %.9g", p.ti, f.group);
            else if (f.bw > 0)
                snprintf(mine, sizeof mine, "%d b %.9g", p.ti, f.bw);
            else if (f.lat > 0)
                snprintf(mine, sizeof mine, "%d l %.9g", p.ti, f.lat);
        }
        tp__validate_part_free(&p);
        /* the round's figures to rank 0, and the nodes lost in it (its
         * tests with them measured nothing; the rounds go on without them) */
        if (rc || (rc = tp__validate_round_end(rs, ctl, tri, mine, err)))
            break;
    }
    return rc;
}

json_t *tp__validate_triage_stopped(const struct tp__validate_ctx *c, tp_triage *tri,
                                    const struct tp_boot *b, const struct tp_boot *ctl,
                                    const tp_error *why)
{
    char where[360];
    const struct tp_triage_round *rd = c->stage == TP__VALIDATE_ROUNDS ? tp_triage_next(tri) : NULL;
    if (rd)
        snprintf(where, sizeof where, "the run stopped in round %d (%s): %.300s",
                 tp_triage_rounds(tri, TP_TRIAGE_NSTAGES) + 1, tp_triage_stage_name(rd->stage),
                 why->msg);
    else
        snprintf(where, sizeof where, "the run stopped in %s: %.300s",
                 c->stage >= 0 ? tp__validate_stage_what((enum tp__validate_stage)c->stage)
                               : "the meeting of the nodes",
                 why->msg);
    tp_triage_stop(tri, where);
    tp_error err;
    return tp__validate_triage_result(tri, b, ctl, &err);
}

json_t *tp__validate_triage_result(tp_triage *tri, const struct tp_boot *b,
                                   const struct tp_boot *ctl, tp_error *err)
{
    json_t *res = tp_triage_result(tri, err);
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(res, "nodes_detail"), i, v) {
        int r = (int)json_integer_value(json_object_get(v, "node"));
        const char *why = tp_boot_gone_why(ctl, r);
        const char *st = json_string_value(json_object_get(v, "status"));
        if (!why)
            why = tp_boot_gone_why(b, r);
        if (!why || !st || (strcmp(st, "lost") != 0 && strcmp(st, "missing") != 0))
            continue;
        char says[900];
        snprintf(says, sizeof says, "%s (rank 0: %.600s)",
                 json_string_value(json_object_get(v, "says")), why);
        json_object_set_new(v, "says", json_string(says));
    }
    return res;
}

int tp__validate_node_lines(const struct tp__validate_ctx *c, const struct tp__validate_node *nodes,
                            int n, const json_t *result, const char *tier, tp_error *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(result, "nodes_detail"), i, v) {
        int k = (int)json_integer_value(json_object_get(v, "node"));
        if (k < 0 || k >= n)
            continue;
        json_t *line = json_deep_copy(v);
        json_object_set_new(line, "label", json_string(nodes[k].label));
        json_object_set_new(line, "addr", json_string(nodes[k].addr));
        json_object_set_new(line, "sched", nodes[k].sched[0] ? json_string(nodes[k].sched)
                                                             : json_null());
        json_object_set_new(line, "tier", tier ? json_string(tier) : json_null());
        char *s = json_dumps(line, JSON_COMPACT);
        json_decref(line);
        if (s)
            fprintf(f, "%s\n", s);
        free(s);
    }
    fclose(f);
    char path[TP__VALIDATE_PATH_MAX];
    tp__validate_path(path, sizeof path, "%s/nodes.jsonl", c->outdir);
    int rc = tp_write_atomic(path, text ? text : "", len, err);
    free(text);
    return rc;
}
