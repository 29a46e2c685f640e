/* The sequential confirmation of a suspect (isolate_int.h): Wald's
 * sequential probability ratio test over its measurements alone, each a
 * ratio r to the round's reference (the median of known-good pairs run
 * beside it, else the screen's median). x = r - 1 is taken as normal with
 * the fleet's robust spread sigma about 0 (H0: sound) or about
 * delta = max(min_effect, 2 sigma) (H1: slow by the least worth naming,
 * or the least the noise lets the test see); each
 * measurement adds (x delta - delta^2 / 2) / sigma^2 to the log likelihood
 * ratio, x first clipped to [-max(delta, 3 sigma), max(2 delta, 3 sigma)]
 * and the step to a third of the bar to name, so that a spike (a host's
 * hiccup) or two (another job's load on the suspect's leaf in two rounds)
 * cannot decide alone. Slow once the sum reaches ln((1 - beta) / alpha)
 * after three measurements at least (nothing is named before it was
 * measured again alone, three times) with their mean past 1 + min_effect (the
 * least worth naming, as --min-effect says); sound once it
 * falls to ln(beta / (1 - alpha)); after `repeats` measurements, sound
 * when the sum is below half the bar to name, else undecided (left
 * suspect; a test may allow itself more, a leaf's). alpha here
 * is each suspect's share of the run's (tp_triage_opts.alpha): that split
 * evenly over the suspects the screen raised (t->alpha_each, judge.c), or
 * the test's own (a rail search's: which rail, once the fault is named). */
#include <math.h>

#include "isolate_int.h"

/* s's false-name bound: its own, or the run's share for a suspect */
static double alpha_of(const tp_triage *t, const struct tp__sprt *s)
{
    return s->alpha > 0 ? s->alpha : t->alpha_each;
}

void tp__triage_sprt_add(const tp_triage *t, struct tp__sprt *s, double r, double sigma)
{
    /* the effect to tell from none, unless the action set its own: the
     * least worth naming, or twice the spread where the fabric is noisier
     * than that (a smaller effect cannot be told from the noise in the
     * repeats allowed), fixed at the first measurement; sigma at least an
     * eighth of it, as a fleet measured with no spread at all would decide
     * on any difference */
    if (s->n == 0 && !(s->effect > 0))
        s->effect = (float)fmax(t->o.min_effect, 2 * sigma);
    double d = s->effect, sg = fmax(sigma, d / 8);
    double x = fmin(fmax(r - 1, -fmax(d, 3 * sg)), fmax(2 * d, 3 * sg));
    if (s->n < TP_TRIAGE_MAX_REPEATS)
        s->r[s->n] = (float)r;
    s->n++;
    s->sum += r;
    /* and at most a third of the bar to name: three measurements alone at
     * least, however slow one or two of them were */
    double a = log((1 - t->o.beta) / alpha_of(t, s));
    s->llr += fmin((x * d - d * d / 2) / (sg * sg), a / 3);
    s->sigma = (float)sg;
}

enum tp__sprt_state tp__triage_sprt_decide(const tp_triage *t, const struct tp__sprt *s, int steps)
{
    double a = log((1 - t->o.beta) / alpha_of(t, s)), b = log(t->o.beta / (1 - alpha_of(t, s)));
    /* named only past the least effect worth naming (--min-effect, or the
     * action's own floor), as the mean of the measurements says: a
     * smaller one is measured on */
    double floor = s->floor > 0 ? s->floor : t->o.min_effect;
    if (s->llr >= a && steps >= 3 && tp__triage_sprt_mean(s) > 1 + floor)
        return TP__SPRT_SLOW;
    if (s->llr <= b)
        return TP__SPRT_SOUND;
    /* out of repeats: below half the bar to name, sound (a fault of the
     * effect sought would be past the bar by then, all but always) */
    if (steps >= (s->repeats > 0 ? s->repeats : t->o.repeats))
        return s->llr < a / 2 ? TP__SPRT_SOUND : TP__SPRT_UNDECIDED;
    return TP__SPRT_MORE;
}

enum tp__sprt_state tp__triage_sprt_state(const tp_triage *t, const struct tp__sprt *s)
{
    return tp__triage_sprt_decide(t, s, s->n);
}

double tp__triage_sprt_mean(const struct tp__sprt *s)
{
    return s->n ? s->sum / s->n : 0;
}

double tp__triage_sprt_bar(const tp_triage *t, const struct tp__sprt *s)
{
    /* the sum reaches ln((1 - beta) / alpha) when the mean of x is
     * delta / 2 + A sigma^2 / (n delta) (unclipped) */
    double d = s->effect, a = log((1 - t->o.beta) / alpha_of(t, s));
    int n = s->n > 0 ? s->n : 1;
    return 1 + d / 2 + a * (double)s->sigma * s->sigma / (n * d);
}

json_t *tp__triage_sprt_json(const tp_triage *t, const struct tp__sprt *s)
{
    json_t *r = json_array();
    int n = s->n < TP_TRIAGE_MAX_REPEATS ? s->n : TP_TRIAGE_MAX_REPEATS;
    for (int i = 0; i < n; i++)
        json_array_append_new(r, json_real(round(s->r[i] * 1e4) / 1e4));
    return json_pack("{s:s, s:o, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "test", "sprt", "ratios", r,
                     "effect", (double)s->effect, "llr", s->llr, "accept",
                     log((1 - t->o.beta) / alpha_of(t, s)), "reject",
                     log(t->o.beta / (1 - alpha_of(t, s))), "alpha", alpha_of(t, s), "beta",
                     t->o.beta, "sigma", (double)s->sigma);
}
