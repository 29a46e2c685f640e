/* The decision between a plan's candidate designs: each evaluated at the
 * scale decided at, with a simulated run; ranked by cost per run; swept over
 * the scales; and for every pair, the break-even scale from which a design
 * that costs more at small scale starts to cost less. All of it is held in
 * one struct, from which the words (explain.c) and the result document
 * (doc.c) are read and the CLI prints its tables, so each piece can be
 * tested without the binary. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "plan_int.h"

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Candidate i at the decision's scale, and the mean and p99 of its
 * simulated run (none when the spec asks for no steps). */
static int evaluate(const struct tp_plan_spec *s, int i, double gpus, struct tp_plan_outcome *e,
                    tp_error *err)
{
    unsigned n = s->sim_steps;
    tp_plan_eval(s, &s->cand[i], gpus, &e->pt);
    if (n == 0)
        return 0;
    e->series = malloc(n * sizeof *e->series);
    double *sorted = malloc(n * sizeof *sorted), sum = 0;
    if (!e->series || !sorted) {
        free(sorted);
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    }
    tp_plan_simulate(s, &s->cand[i], gpus, n, s->seed, e->series);
    memcpy(sorted, e->series, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmpd);
    for (unsigned k = 0; k < n; k++)
        sum += sorted[k];
    e->sim_mean_s = sum / n;
    /* nearest rank, as everywhere in trainpath */
    e->sim_p99_s = sorted[(size_t)ceil(0.99 * n) - 1];
    free(sorted);
    return 0;
}

/* Whether a ranks before b: those that can be evaluated first, by cost. */
static bool before(const struct tp_plan_point *a, const struct tp_plan_point *b)
{
    if (!a->why[0] != !b->why[0])
        return !a->why[0];
    return !a->why[0] && a->cost < b->cost;
}

/* Candidates by cost per run, cheapest first, then those that cannot be
 * evaluated: an insertion sort, so that equal costs (two designs alike in
 * what they cost) keep the plan's order. */
static void rank(const struct tp_plan_spec *s, struct tp_plan_decision *d)
{
    for (int i = 0; i < s->ncand; i++) {
        int j = i;
        for (; j > 0 && before(&d->ev[i].pt, &d->ev[d->order[j - 1]].pt); j--)
            d->order[j] = d->order[j - 1];
        d->order[j] = i;
    }
    for (int i = 0; i < s->ncand; i++)
        d->ev[d->order[i]].rank = i + 1;
}

/* Each candidate over the scales: the plan's, else from one node's GPUs
 * doubling up to the scale decided at, and that scale. */
static int sweep(const struct tp_plan_spec *s, struct tp_plan_decision *d, tp_error *err)
{
    int n = 0;
    if (s->nsweep) {
        for (int i = 0; i < s->nsweep; i++)
            d->scales[n++] = s->sweep_gpus[i];
    } else {
        for (double g = s->c.gpus_per_node; g < d->gpus && n < TP_PLAN_MAX_SWEEP; g *= 2)
            d->scales[n++] = g;
        d->scales[n++] = d->gpus;
    }
    d->nscales = n;
    d->sweep = calloc((size_t)n, sizeof *d->sweep);
    if (!d->sweep)
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    for (int k = 0; k < n; k++)
        for (int i = 0; i < s->ncand; i++)
            tp_plan_eval(s, &s->cand[i], d->scales[k], &d->sweep[k][i]);
    return 0;
}

/* Where a design that costs more at the smallest scale starts to cost
 * less, up to the largest scale of the sweep or the one decided at. */
static void crossings(const struct tp_plan_spec *s, struct tp_plan_decision *d)
{
    double lo = d->scales[0], top = d->scales[d->nscales - 1];
    double hi = top > d->gpus ? top : d->gpus;
    const struct tp_plan_point *at_lo = d->sweep[0];
    for (int i = 0; i < s->ncand; i++)
        for (int j = 0; j < s->ncand; j++) {
            if (i == j || !(at_lo[i].cost <= at_lo[j].cost))
                continue;
            double at = tp_plan_break_even(s, &s->cand[i], &s->cand[j], lo, hi);
            if (at > 0)
                d->cross[d->ncross++] = (struct tp_plan_crossing){j, i, at};
        }
}

int tp_plan_decide(const struct tp_plan_spec *s, double gpus, struct tp_plan_decision *d,
                   tp_error *err)
{
    memset(d, 0, sizeof *d);
    d->gpus = gpus;
    if (s->ncand < 1 || s->ncand > TP_PLAN_MAX_CAND)
        return tp_error_set(err, TP_EUSAGE, "%s: %d candidates (1 to %d, please)", s->file,
                            s->ncand, TP_PLAN_MAX_CAND);
    for (int i = 0; i < s->ncand; i++) {
        int rc = evaluate(s, i, gpus, &d->ev[i], err);
        if (rc)
            return rc;
    }
    rank(s, d);
    int rc = sweep(s, d, err);
    if (rc)
        return rc;
    crossings(s, d);
    return tp__plan_explain(s, d, err);
}

void tp_plan_decision_free(struct tp_plan_decision *d)
{
    for (int i = 0; i < TP_PLAN_MAX_CAND; i++)
        free(d->ev[i].series);
    free(d->sweep);
    json_decref(d->words);
    memset(d, 0, sizeof *d);
}

int tp_plan_run(const char *path, double gpus, struct tp_plan_spec *s, struct tp_plan_decision *d,
                json_t *doc, tp_error *err)
{
    memset(d, 0, sizeof *d);
    int rc = tp_plan_parse(path, s, err);
    if (rc == 0)
        rc = tp_plan_resolve(s, err);
    if (rc) {
        json_object_set_new(doc, "config", json_pack("{s:s}", "plan_file", path));
        return rc;
    }
    if (gpus <= 0)
        gpus = s->c.nodes * s->c.gpus_per_node;
    if (gpus > TP_PLAN_MAX_GPUS) {
        json_object_set_new(doc, "config", json_pack("{s:s}", "plan_file", path));
        return tp_error_set(err, TP_EUSAGE, "--gpus %.0f: more than %d GPUs", gpus,
                            TP_PLAN_MAX_GPUS);
    }
    json_object_set_new(doc, "config", tp__plan_spec_json(s, gpus));
    rc = tp_plan_decide(s, gpus, d, err);
    if (rc == 0)
        json_object_set_new(doc, "results", tp__plan_results_json(s, d));
    return rc;
}
