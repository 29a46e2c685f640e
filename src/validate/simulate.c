/* trainpath validate --simulate (include/tp/validate.h): the fleet triage
 * of src/triage/ run against a model fleet read from a file. The tier, the
 * plan and its estimate are printed before anything runs, as on a real
 * allocation; then what the triage named against what was planted. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tp/result.h"
#include "tp/triage.h"
#include "tp/units.h"
#include "tp/validate.h"

static void print_plan(FILE *out, const struct tp_triage_fleet *f, const struct tp_triage_opts *t)
{
    int r[TP_TRIAGE_NSTAGES], m = f->n - f->nmissing;
    int total = tp_triage_tier_rounds(t->tier, m, t, r);
    char stages[256] = "", a[32], b[32];
    size_t at = 0;
    for (int s = 0; s < TP_TRIAGE_NSTAGES; s++)
        if (r[s] && at < sizeof stages)
            at += (size_t)snprintf(stages + at, sizeof stages - at, "%s%s %d", at ? ", " : "",
                                   tp_triage_stage_name((enum tp_triage_stage)s), r[s]);
    /* the isolation at the fleet's bound (its fabric's leaves counted),
     * each of its rounds as long as the estimate's */
    double plain = tp_triage_estimate_s(t->tier, m, t, false);
    int bound = tp_triage_fleet_isolation_bound(f, t), node = tp_triage_isolation_bound(m, t);
    double iso = (tp_triage_estimate_s(t->tier, m, t, true) - plain) / (node > 0 ? node : 1);
    tp_fmt_duration_s(plain, a, sizeof a);
    tp_fmt_duration_s(plain + iso * bound, b, sizeof b);
    fprintf(out, "plan: the %s tier for %d nodes", t->tier, f->n);
    if (f->nmissing)
        fprintf(out, " (%d never join)", f->nmissing);
    fprintf(out, ": %s = %d rounds, about %s; isolation at most %d rounds more (%s in all)\n",
            stages, total, a, bound, b);
}


/* a planted fault in words, by its kind: the format and its fields */
static const struct {
    const char *kind, *fmt, *f1, *f2;
} planted_words[] = {
    {"node", "node %lld", "node", NULL},
    {"link", "link %lld-%lld", "a", "b"},
    {"switch", "leaf switch %lld", "leaf", NULL},
    {"uplink", "the uplink of leaf %lld to spine %lld", "leaf", "spine"},
    {"cable", "the cable of node %lld", "node", NULL},
};

static void print_outcome(FILE *out, const json_t *res)
{
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(res, "named"), i, v)
        fprintf(out, "named: %s\n", json_string_value(json_object_get(v, "says")));
    const json_t *sim = json_object_get(res, "simulated");
    json_array_foreach(json_object_get(sim, "planted"), i, v) {
        if (json_is_true(json_object_get(v, "named")))
            continue;
        const char *kind = json_string_value(json_object_get(v, "kind"));
        double sev = json_real_value(json_object_get(v, "severity"));
        char what[128] = "";
        for (size_t w = 0; kind && w < sizeof planted_words / sizeof *planted_words; w++)
            if (strcmp(kind, planted_words[w].kind) == 0)
                snprintf(what, sizeof what, planted_words[w].fmt,
                         json_integer_value(json_object_get(v, planted_words[w].f1)),
                         planted_words[w].f2 ? json_integer_value(json_object_get(
                                                   v, planted_words[w].f2))
                                             : 0);
        fprintf(out, "missed: %s (%.0f %% slower%s)\n", what, 100 * sev,
                json_is_false(json_object_get(v, "exercised"))
                    ? "; no round of the tier crossed it"
                    : "");
    }
    const json_t *counts = json_object_get(res, "counts"), *c;
    const char *k;
    char line[512] = "";
    size_t at = 0;
    json_object_foreach((json_t *)counts, k, c)
        if (json_integer_value(c) && at < sizeof line)
            at += (size_t)snprintf(line + at, sizeof line - at, "%s%s %lld", at ? ", " : "", k,
                                   json_integer_value(c));
    fprintf(out, "verdicts: %s\n", line);
    const json_t *decision = json_object_get(res, "decision"); /* null: no suspects */
    if (json_is_object(decision))
        fprintf(out, "decision: %s\n", json_string_value(json_object_get(decision, "says")));
    const json_t *rt = json_object_get(sim, "rounds_to_name");
    char w[32];
    tp_fmt_duration_s(json_real_value(json_object_get(sim, "wall_s")), w, sizeof w);
    long long planted = (long long)json_array_size(json_object_get(sim, "planted"));
    fprintf(out,
            "simulated: %lld nodes, %s tier: %lld rounds (%lld of isolation, bound %lld for one "
            "fault), about %s; %lld of %lld planted faults named, %lld named falsely",
            json_integer_value(json_object_get(res, "nodes")),
            json_string_value(json_object_get(res, "tier")),
            json_integer_value(json_object_get(res, "rounds_total")),
            json_integer_value(json_object_get(res, "rounds_isolation")),
            json_integer_value(json_object_get(res, "isolation_bound")), w,
            json_integer_value(json_object_get(sim, "true_named")), planted,
            json_integer_value(json_object_get(sim, "false_named")));
    if (json_is_integer(rt) && planted)
        fprintf(out, "; the last named after %lld isolation rounds", json_integer_value(rt));
    fprintf(out, "\n");
}

static json_t *config_of(const struct tp_validate_sim_opts *o, const struct tp_triage_opts *t,
                         const struct tp_triage_fleet *f)
{
    return json_pack("{s:s, s:s, s:o, s:i, s:i, s:I, s:f, s:f, s:f}", "fleet", o->fleet, "tier",
                     t->tier, "budget_s", o->budget_s > 0 ? json_real(o->budget_s) : json_null(),
                     "nodes", f->n, "matchings", t->matchings, "seed", (json_int_t)t->seed,
                     "pair_s", t->pair_s, "group_s", t->group_s, "min_effect",
                     t->min_effect > 0 ? t->min_effect : 0.10);
}

/* 0 when the triage named every planted fault and nothing else; else a
 * failure's code, with why in err: TP_EPEER when no node was judged (every
 * one died or never joined), TP_ECHECK for a fault missed or named falsely. */
static int judge(const json_t *res, int n, tp_error *err)
{
    const json_t *sim = json_object_get(res, "simulated"), *counts = json_object_get(res, "counts");
    long long gone = json_integer_value(json_object_get(counts, "missing")) +
                     json_integer_value(json_object_get(counts, "lost"));
    long long missed = json_integer_value(json_object_get(sim, "missed"));
    long long falsely = json_integer_value(json_object_get(sim, "false_named"));
    if (gone >= n)
        return tp_error_set(err, TP_EPEER,
                            "every node of the %d died or never joined: none was "
                            "judged",
                            n);
    if (missed || falsely)
        return tp_error_set(err, TP_ECHECK,
                            "%lld of %lld planted faults missed, %lld named "
                            "falsely",
                            missed, (long long)json_array_size(json_object_get(sim, "planted")),
                            falsely);
    return 0;
}

int tp_validate_simulate(const struct tp_validate_sim_opts *o, tp_error *err)
{
    if (o->json) {
        int rc = tp_result_path_ok(o->json, err);
        if (rc)
            return rc;
    }
    if (o->tier && o->budget_s > 0)
        return tp_error_set(err, TP_EUSAGE, "--tier and --budget: one or the other (--budget "
                             "picks the tier)");
    struct tp_triage_fleet f;
    int rc = tp_triage_fleet_load(o->fleet, &f, err);
    if (rc)
        return rc;
    struct tp_triage_opts t = {.tier = o->tier ? o->tier : "screen", .matchings = o->matchings,
                               .seed = o->seed ? o->seed : f.seed, .min_effect = o->min_effect,
                               .pair_s = o->pair_s,
                               .group_s = o->group_s};
    if (!(t.pair_s > 0))
        t.pair_s = 3;
    if (!(t.group_s > 0))
        t.group_s = 5;
    t.round_gap_s = 0.2;
    t.max_rounds = TP_TRIAGE_SIM_MAX_ROUNDS; /* --budget picks a tier the simulator runs */
    t.matchings = t.matchings ? t.matchings : 4;
    FILE *out = o->json && strcmp(o->json, "-") == 0 ? stderr : stdout;
    int m = f.n - f.nmissing;
    if (tp_triage_estimate_s(t.tier, m, &t, false) < 0) {
        char names[128];
        return tp_error_set(err, TP_EUSAGE, "--tier %s: unknown (tiers: %s)", t.tier,
                            tp_triage_tier_names(", ", names, sizeof names));
    }
    if (o->budget_s > 0) {
        rc = tp_triage_pick(m, o->budget_s, &t, &t.tier, err);
        if (rc)
            return rc;
        char b[32], e[32];
        if (!o->quiet)
            fprintf(out, "--budget %s: the %s tier fits (about %s with isolation)\n",
                    tp_fmt_duration_s(o->budget_s, b, sizeof b), t.tier,
                    tp_fmt_duration_s(tp_triage_estimate_s(t.tier, m, &t, true), e, sizeof e));
    }
    if (!o->quiet) { /* before the first round, as on an allocation */
        print_plan(out, &f, &t);
        fflush(out);
    }
    json_t *res = NULL;
    rc = tp_triage_simulate(&f, &t, true, &res, err);
    if (rc == TP_EUSAGE) /* an option out of range: nothing ran */
        return rc;
    if (!o->quiet && rc == 0)
        print_outcome(out, res);
    /* the verdict: what the document's status says is what the process
     * exits with */
    int verdict = rc == 0 ? judge(res, f.n, err) : rc;
    if (verdict && rc == 0 && !o->quiet)
        fprintf(out, "fail: %s\n", err->msg);
    if (o->json) {
        json_t *doc = tp_result_new("validate simulate", config_of(o, &t, &f));
        if (!doc) {
            json_decref(res);
            return tp_error_set(err, TP_ENOMEM, "out of memory");
        }
        if (res)
            json_object_set(doc, "results", res);
        tp_result_finish(doc, verdict, verdict ? err->msg : "");
        tp_error werr = {0};
        int wrc = tp_result_write_run(doc, o->json, &werr);
        json_decref(doc);
        if (wrc && rc == 0) {
            *err = werr;
            rc = wrc;
        }
    }
    json_decref(res);
    return rc ? rc : verdict ? 1 : 0;
}
