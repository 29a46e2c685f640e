/* The words of a plan's decision: a few sentences that say why the cheapest
 * design wins (what the worst one loses to exposed communication), what its
 * wall time goes to, what the slowest rank and the rare stall cost at this
 * scale, how often to checkpoint, and from which scale one design becomes
 * cheaper than another. Every figure is read off the decision, so the words
 * and the numbers of the result document cannot disagree. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "plan_int.h"
#include "tp/units.h"

void tp_plan_terms(const struct tp_plan_spec *s, const struct tp_plan_point *pt,
                   struct tp_plan_term t[TP_PLAN_TERMS])
{
    double wall = pt->step_s / (1 - pt->waste);
    const struct tp_plan_term all[TP_PLAN_TERMS] = {
        {"compute", s->w.compute_s / wall},
        {"exposed communication", pt->exposed_s / wall},
        {"waiting for the slowest rank", (pt->jitter_s + pt->rare_s) / wall},
        {"dataset reads", pt->data_stall_s / wall},
        {"checkpoints, rework and restarts", 1 - pt->step_s / wall},
    };
    /* largest first; an insertion sort keeps equal shares in this order */
    for (int i = 0; i < TP_PLAN_TERMS; i++) {
        int j = i;
        for (; j > 0 && all[i].share > t[j - 1].share; j--)
            t[j] = t[j - 1];
        t[j] = all[i];
    }
}

/* The terms that matter (above 0.5 %, and always the largest), in words. */
static void dominant(const struct tp_plan_spec *s, const struct tp_plan_point *pt, char *buf,
                     size_t cap)
{
    struct tp_plan_term t[TP_PLAN_TERMS];
    tp_plan_terms(s, pt, t);
    size_t o = 0;
    for (int i = 0; i < TP_PLAN_TERMS && o < cap; i++) {
        if (i > 0 && t[i].share < 0.005)
            break;
        o += (size_t)snprintf(buf + o, cap - o, "%s%.1f %% %s", i ? ", " : "", 100 * t[i].share,
                              t[i].what);
    }
}

/* One sentence, appended to words. */
static void say(json_t *words, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(json_t *words, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    json_array_append_new(words, json_string(line));
}

int tp__plan_explain(const struct tp_plan_spec *s, struct tp_plan_decision *d, tp_error *err)
{
    json_t *words = d->words = json_array();
    if (!words)
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    char a[48], b[48], c[48], e[48];
    double gpus = d->gpus;
    const struct tp_plan_point *best = &d->ev[d->order[0]].pt;
    const char *name = s->cand[d->order[0]].name;
    /* a candidate that cannot be evaluated is kept, ranked last, and said so */
    for (int i = 0; i < s->ncand; i++)
        if (d->ev[d->order[i]].pt.why[0])
            say(words, "%s cannot be evaluated at %.0f GPUs: %s", s->cand[d->order[i]].name, gpus,
                d->ev[d->order[i]].pt.why);
    if (best->why[0]) {
        say(words, "no candidate completes a training run at %.0f GPUs", gpus);
        goto crossings;
    }
    /* the candidate with the most exposed communication, against the best */
    int worst = d->order[0];
    for (int i = 0; i < s->ncand; i++)
        if (!d->ev[i].pt.why[0] &&
            tp_plan_exposed_fraction(&d->ev[i].pt) > tp_plan_exposed_fraction(&d->ev[worst].pt))
            worst = i;
    if (worst != d->order[0]) {
        const struct tp_plan_point *w = &d->ev[worst].pt;
        say(words,
            "at %.0f GPUs the step of %s is %.0f %% exposed communication; %s cuts it to %.0f %% "
            "and saves %s per run (%s %s)",
            gpus, s->cand[worst].name, 100 * tp_plan_exposed_fraction(w), name,
            100 * tp_plan_exposed_fraction(best), tp_fmt_money(w->cost - best->cost, a, sizeof a),
            tp_fmt_duration_s(fabs(w->train_s - best->train_s), b, sizeof b),
            w->train_s >= best->train_s ? "sooner" : "later, for less");
    }
    char dom[256];
    dominant(s, best, dom, sizeof dom);
    say(words, "%s%s: %s per run, %s to train; its wall time is %s", name,
        s->ncand > 1 ? " costs least" : "", tp_fmt_money(best->cost, a, sizeof a),
        tp_fmt_duration_s(best->train_s, b, sizeof b), dom);
    say(words,
        "the slowest of %.0f ranks adds %s to each step (%.1f %% of it) over the mean rank's "
        "%s of compute%s",
        gpus, tp_fmt_duration_s(best->jitter_s, a, sizeof a), 100 * best->jitter_s / best->step_s,
        tp_fmt_duration_s(s->w.compute_s, b, sizeof b),
        s->w.compute_samples ? " (the measured distribution)" : " (a normal)");
    if (s->w.spike_p > 0)
        say(words,
            "a %s stall at per-rank probability %g hits %.1f %% of steps at this scale: %s per "
            "step on average",
            tp_fmt_duration_s(s->w.spike_s, a, sizeof a), s->w.spike_p,
            100 * tp_plan_rare_event(s->w.spike_p, gpus),
            tp_fmt_duration_s(best->rare_s, b, sizeof b));
    say(words,
        "%s: checkpoint every %s (Daly; Young: %s), each stalling %s; the job fails every %s on "
        "average: %.1f %% of wall time lost",
        name, tp_fmt_duration_s(best->interval_s, a, sizeof a),
        tp_fmt_duration_s(tp_plan_young(best->ckpt_s, best->mtbf_s), b, sizeof b),
        tp_fmt_duration_s(best->ckpt_s, c, sizeof c), tp_fmt_duration_s(best->mtbf_s, e, sizeof e),
        100 * best->waste);
crossings:
    d->nexplain = json_array_size(words);
    for (int k = 0; k < d->ncross; k++)
        say(words, "%s becomes cheaper per run than %s from %.0f GPUs",
            s->cand[d->cross[k].cheaper].name, s->cand[d->cross[k].than].name,
            d->cross[k].from_gpus);
    return 0;
}
