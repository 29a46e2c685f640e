/* The tiers as a table (include/tp/triage.h): each row names its stages
 * and their rounds; the estimate, the pick by budget and the defaults read
 * the rows and nothing else. A new tier is a file tier_<name>.c with its
 * row (the rounds of each stage it runs, from stages.c), and a line in
 * tiers[] below. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tp/units.h"
#include "triage_int.h"

static const struct tp__triage_tier *const tiers[] = {
    &tp__triage_tier_prolog, &tp__triage_tier_screen, &tp__triage_tier_full};
#define NTIERS (sizeof tiers / sizeof tiers[0])

bool tp_triage_tier_known(const char *name)
{
    return tp__triage_tier_find(name) != NULL;
}

char *tp_triage_tier_names(const char *last, char *out, size_t cap)
{
    size_t used = 0;
    if (cap)
        out[0] = 0;
    for (size_t i = 0; i < NTIERS && used < cap; i++)
        used += (size_t)snprintf(out + used, cap - used, "%s%s",
                                 i == 0 ? "" : i + 1 == NTIERS ? last : ", ", tiers[i]->name);
    return out;
}

/* the stages: their names, and whether their tests are group collectives
 * (the longer of the two durations) or pairs */
static const struct {
    const char *name;
    bool group;
} stages[TP_TRIAGE_NSTAGES] = {
    [TP_TRIAGE_GANG] = {"gang", true},       [TP_TRIAGE_RING] = {"ring", false},
    [TP_TRIAGE_GROUPS] = {"groups", true},   [TP_TRIAGE_MATCH] = {"match", false},
    [TP_TRIAGE_PAIRS] = {"pairs", false},    [TP_TRIAGE_BISECT] = {"bisect", true},
    [TP_TRIAGE_PROBE] = {"probe", false},    [TP_TRIAGE_CONFIRM] = {"confirm", false},
};

const char *tp_triage_stage_name(enum tp_triage_stage s)
{
    return (unsigned)s < TP_TRIAGE_NSTAGES ? stages[s].name : "?";
}

const struct tp__triage_tier *tp__triage_tier_find(const char *name)
{
    if (!name)
        name = "screen";
    for (size_t i = 0; i < NTIERS; i++)
        if (strcmp(tiers[i]->name, name) == 0)
            return tiers[i];
    return NULL;
}

int tp__triage_stage_rounds(const struct tp__triage_tier *t, enum tp_triage_stage s, int m,
                            const struct tp_triage_opts *o)
{
    return m >= 2 && t->rounds[s] ? t->rounds[s](m, o) : 0;
}

int tp_triage_tier_rounds(const char *tier, int n, const struct tp_triage_opts *o,
                          int rounds[TP_TRIAGE_NSTAGES])
{
    struct tp_triage_opts d;
    tp__triage_defaults(o, &d);
    const struct tp__triage_tier *t = tp__triage_tier_find(tier);
    int sum = 0;
    for (int s = 0; s < TP_TRIAGE_NSTAGES; s++) {
        rounds[s] = t ? tp__triage_stage_rounds(t, (enum tp_triage_stage)s, n, &d) : 0;
        sum += rounds[s];
    }
    return sum;
}

static double round_s(enum tp_triage_stage s, const struct tp_triage_opts *d)
{
    return (stages[s].group ? d->group_s : d->pair_s) + d->round_gap_s;
}

double tp_triage_estimate_s(const char *tier, int n, const struct tp_triage_opts *o,
                            bool with_isolation)
{
    struct tp_triage_opts d;
    tp__triage_defaults(o, &d);
    if (!tp__triage_tier_find(tier))
        return -1;
    int r[TP_TRIAGE_NSTAGES];
    tp_triage_tier_rounds(tier, n, &d, r);
    double s = 0;
    for (int i = 0; i < TP_TRIAGE_NSTAGES; i++)
        s += r[i] * round_s((enum tp_triage_stage)i, &d);
    if (with_isolation) /* the worst: every isolation round a group's */
        s += tp__triage_iso_bound(n, &d) * (fmax(d.pair_s, d.group_s) + d.round_gap_s);
    return s;
}

int tp_triage_pick(int n, double budget_s, const struct tp_triage_opts *o, const char **tier,
                   tp_error *err)
{
    int r[TP_TRIAGE_NSTAGES];
    for (size_t i = NTIERS; i-- > 0;)
        if (tp_triage_estimate_s(tiers[i]->name, n, o, true) <= budget_s &&
            !(o && o->max_rounds > 0 &&
              tp_triage_tier_rounds(tiers[i]->name, n, o, r) > o->max_rounds)) {
            *tier = tiers[i]->name;
            return 0;
        }
    char b[32], need[32];
    tp_fmt_duration_s(budget_s, b, sizeof b);
    tp_fmt_duration_s(ceil(tp_triage_estimate_s(tiers[0]->name, n, o, true)), need, sizeof need);
    return tp_error_set(err, TP_EUSAGE, "--budget %s: the %s tier needs %s for %d nodes", b,
                        tiers[0]->name, need, n);
}
