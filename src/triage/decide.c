/* Evict or localise (include/tp/triage.h, docs/fleet.md): once the screen
 * has ended with suspects, the GPU-hours the job loses if it waits out
 * their isolation against those it loses if the whole suspect group is
 * evicted now and replaced by spares, as ByteRobust does when that loses
 * fewer. The model is the pure function tp_triage_decide; the rest takes
 * its inputs from the triage (the suspect group, the rounds' measured
 * time, the isolation's bound) and writes the result's "decision". The
 * decision is advice: the triage isolates all the same, so that the
 * result also says what the isolation then cost. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "isolate_int.h"
#include "tp/units.h"

void tp_triage_decide(const struct tp_triage_decide_in *in, struct tp_triage_decision *d)
{
    double g = in->gpus_per_node, n = in->nodes, gpus = n * g;
    double wait_s = in->rounds_left * in->round_s, m = in->mtbf_node_s, r = in->restart_s;
    double h = 3600;
    *d = (struct tp_triage_decision){0};
    /* One fault among the suspects, as the isolation's bound has it: it
     * leaves the job, and takes a spare where there is one, under either
     * choice, so neither is charged for it.
     * isolate: the whole job waits out the rounds; each node failure
     * meanwhile (n W / M of them, to first order) costs it a restart; a
     * false name (alpha, the run's bound) sends a sound node away until
     * it is returned; the fault cleared (beta) leaves the job min_effect
     * slower until its next failure, M / n on average: min_effect x g x M */
    d->iso_wait_gpu_h = gpus * wait_s / h;
    d->iso_fail_gpu_h = n * wait_s / m * gpus * r / h;
    d->iso_false_gpu_h = in->alpha * g * in->evict_return_s / h;
    d->iso_missed_gpu_h = in->beta * in->min_effect * g * m / h;
    /* evict: the whole job waits out the restart that swaps the spares
     * in (a failure meanwhile: one more); its suspects - 1 sound ones
     * that the spares - 1 left after the fault's do not replace leave it
     * that many nodes short until they are returned */
    d->evict_restart_gpu_h = gpus * r / h;
    d->evict_fail_gpu_h = n * r / m * gpus * r / h;
    d->evict_short_gpu_h =
        fmax(in->suspects - fmax(in->spare_nodes, 1), 0) * g * in->evict_return_s / h;
    d->isolate_gpu_h =
        d->iso_wait_gpu_h + d->iso_fail_gpu_h + d->iso_false_gpu_h + d->iso_missed_gpu_h;
    d->evict_gpu_h = d->evict_restart_gpu_h + d->evict_fail_gpu_h + d->evict_short_gpu_h;
    d->evict = d->evict_gpu_h < d->isolate_gpu_h;
}

/* mark the nodes of action a as suspects (alive ones only) */
static void mark_action(const tp_triage *t, const struct tp__action *a, bool *sus)
{
    if (a->kind == TP__A_LEAF) {
        for (int i = t->leaf_off[a->a]; i < t->leaf_off[a->a + 1]; i++)
            sus[t->leaf_nodes[i]] = true;
    } else if (a->set) { /* a group's members, or a probe's edges (two nodes each) */
        int k = a->on_set ? a->n : 2 * a->n;
        for (int i = 0; i < k; i++)
            sus[a->set[i]] = true;
    } else {
        sus[a->a] = true;
        if (a->ends == 2)
            sus[a->b] = true;
    }
}

static bool alive(const tp_triage *t, int v)
{
    return t->node[v].status != ST_LOST && t->node[v].status != ST_MISSING;
}

void tp__triage_decide_at_screen(tp_triage *t)
{
    bool *sus = calloc((size_t)t->n, sizeof *sus);
    if (!sus)
        return; /* out of memory: no decision, the rest of the result stands */
    for (const struct tp__action *a = t->actions; a; a = a->next)
        if (!a->done)
            mark_action(t, a, sus);
    int suspects = 0, nodes = 0;
    for (int v = 0; v < t->n; v++) {
        nodes += alive(t, v);
        suspects += sus[v] && alive(t, v);
    }
    free(sus);
    if (suspects == 0)
        return; /* nothing to decide */
    const struct tp_triage_opts *o = &t->o;
    t->dec_measured = t->took_n[0] > 0;
    t->dec_in = (struct tp_triage_decide_in){
        .nodes = nodes,
        .suspects = suspects,
        .rounds_left = tp__triage_iso_bound(t->n, o),
        /* measured: the mean of the screen's rounds; else the estimate's
         * isolation round (tp_triage_estimate_s: the longer test) */
        .round_s = t->dec_measured ? t->took_s[0] / t->took_n[0]
                                   : fmax(o->pair_s, o->group_s) + o->round_gap_s,
        .gpus_per_node = o->gpus_per_node,
        .mtbf_node_s = o->mtbf_node_s,
        .restart_s = o->restart_s,
        .spare_nodes = o->spare_nodes,
        .evict_return_s = o->evict_return_s,
        .alpha = o->alpha,
        .beta = o->beta,
        .min_effect = o->min_effect,
    };
    tp_triage_decide(&t->dec_in, &t->dec);
    t->decided = true;
}

int tp_triage_round_took(tp_triage *t, double seconds, tp_error *err)
{
    if (!(seconds > 0) || isinf(seconds))
        return tp_error_set(err, TP_EUSAGE, "triage: a round took %g s: a time above 0", seconds);
    if (t->round_no == 0 || t->pending || t->took_round == t->round_no)
        return tp_error_set(err, TP_EUSAGE, "triage: no recorded round is waiting for its time");
    int k = t->screened; /* the round just recorded was an isolation round */
    t->took_s[k] += seconds;
    t->took_n[k]++;
    t->took_round = t->round_no;
    return 0;
}

/* GPU-hours in words: whole above 100, else three figures at most */
static const char *gpu_h(double v, char *b, size_t cap)
{
    snprintf(b, cap, v >= 100 ? "%.0f" : v >= 1 ? "%.1f" : "%.2g", v);
    return b;
}

static void says(const tp_triage *t, char *out, size_t size)
{
    const struct tp_triage_decide_in *in = &t->dec_in;
    const struct tp_triage_decision *d = &t->dec;
    char a[16], b[16], c[16], e[16], f[16], g[16], rs[32], rr[32], ret[32], iso[256], ev[256];
    int gpus = in->nodes * in->gpus_per_node;
    int unspared = in->suspects - (in->spare_nodes > 1 ? in->spare_nodes : 1);
    snprintf(iso, sizeof iso,
             "about %s GPU-hours (at most %d rounds of %s while %d GPUs wait: %s; a failure "
             "meanwhile, a false or a missed name: %s)",
             gpu_h(d->isolate_gpu_h, a, sizeof a), in->rounds_left,
             tp_fmt_duration_s(in->round_s, rs, sizeof rs), gpus,
             gpu_h(d->iso_wait_gpu_h, b, sizeof b),
             gpu_h(d->iso_fail_gpu_h + d->iso_false_gpu_h + d->iso_missed_gpu_h, c, sizeof c));
    char shortw[96] = "a spare for each";
    if (unspared > 0)
        snprintf(shortw, sizeof shortw, "%d sound ones with no spare, away %s: %s", unspared,
                 tp_fmt_duration_s(in->evict_return_s, ret, sizeof ret),
                 gpu_h(d->evict_short_gpu_h, g, sizeof g));
    snprintf(ev, sizeof ev, "about %s GPU-hours (a %s restart of %d GPUs: %s; %s)",
             gpu_h(d->evict_gpu_h, e, sizeof e), tp_fmt_duration_s(in->restart_s, rr, sizeof rr),
             gpus, gpu_h(d->evict_restart_gpu_h + d->evict_fail_gpu_h, f, sizeof f), shortw);
    if (d->evict)
        snprintf(out, size, "evict: evicting the %d suspect nodes now loses %s, isolating them %s",
                 in->suspects, ev, iso);
    else
        snprintf(out, size,
                 "isolate: isolating the %d suspect nodes loses %s, evicting them now %s",
                 in->suspects, iso, ev);
}

json_t *tp_triage_decision_json(const tp_triage *t)
{
    if (!t->decided)
        return NULL;
    const struct tp_triage_decide_in *in = &t->dec_in;
    const struct tp_triage_decision *d = &t->dec;
    /* what the isolation has cost so far: its rounds at their measured
     * times, those not measured at the decision's round */
    int unmeasured = t->iso_rounds - t->took_n[1];
    double spent_s = t->took_s[1] + (unmeasured > 0 ? unmeasured : 0) * in->round_s;
    char w[1024];
    says(t, w, sizeof w);
    json_t *terms =
        json_pack("{s:{s:f, s:f, s:f, s:f}, s:{s:f, s:f, s:f}}", "isolate", "wait",
                  d->iso_wait_gpu_h, "failure", d->iso_fail_gpu_h, "false_name", d->iso_false_gpu_h,
                  "missed", d->iso_missed_gpu_h, "evict", "restart", d->evict_restart_gpu_h,
                  "failure", d->evict_fail_gpu_h, "short", d->evict_short_gpu_h);
    json_t *o = json_pack(
        "{s:s, s:f, s:f, s:i, s:i, s:i, s:f, s:b, s:i, s:i, s:f, s:f, s:f, s:o, s:f, s:s}",
        "choice", d->evict ? "evict" : "isolate", "isolate_gpu_hours", d->isolate_gpu_h,
        "evict_gpu_hours", d->evict_gpu_h, "suspects", in->suspects, "spares", in->spare_nodes,
        "rounds_left_bound", in->rounds_left, "round_s", in->round_s, "round_s_measured",
        t->dec_measured, "nodes", in->nodes, "gpus_per_node", in->gpus_per_node, "mtbf_per_node_s",
        in->mtbf_node_s, "restart_s", in->restart_s, "evict_return_s", in->evict_return_s, "terms",
        terms, "isolation_spent_gpu_hours", in->nodes * in->gpus_per_node * spent_s / 3600, "says",
        w);
    return o;
}
