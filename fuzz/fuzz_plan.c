/* Fuzz target: plan files (tp_plan_parse), their `measured:` references
 * (tp_plan_resolve) and the model that reads the parsed plan, as
 * `trainpath plan` runs them. The input is the plan's YAML, optionally
 * followed by a line "#@measured" and the text of a result document: that
 * becomes m.json beside the plan, so `latency: {measured: m.json}` resolves
 * against fuzzed JSON. A plan whose references name any other file is
 * parsed but not resolved: the harness reads nothing outside its folder. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "tp/plan.h"

static struct tp_plan_spec spec; /* 100 KB: not on the stack */

static bool refs_stay_here(const struct tp_plan_spec *s, const char *mfile)
{
    for (size_t i = 0; i < s->nrefs; i++)
        if (strcmp(s->refs[i].file, mfile) != 0)
            return false;
    return true;
}

/* What `trainpath plan` computes for candidate c at the cluster's scale,
 * with a short simulation. */
static void model(const struct tp_plan_spec *s, const struct tp_plan_candidate *c)
{
    double gpus = s->c.nodes * s->c.gpus_per_node;
    struct tp_plan_point pt;
    tp_plan_eval(s, c, gpus, &pt);
    double series[16];
    unsigned steps = s->sim_steps < 16 ? s->sim_steps : 16;
    tp_plan_simulate(s, c, gpus, steps, s->seed, series);
    (void)tp_plan_young(pt.ckpt_s, pt.mtbf_s);
    (void)tp_plan_rare_event(s->w.spike_p, gpus);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *part[2];
    size_t len[2];
    size_t n = fz_split(data, size, "\n#@measured\n", part, len, 2);
    char plan[4096], mfile[4096];
    fz_write("plan.yaml", part[0], len[0], plan);
    if (n > 1)
        fz_write("m.json", part[1], len[1], mfile);
    else
        fz_remove("m.json");
    fz_path(mfile, "m.json");

    tp_error err;
    int rc = tp_plan_parse(plan, &spec, &err);
    if (rc) {
        fz_names_file(rc, &err, plan);
    } else {
        FZ_ASSERT(spec.ncand >= 1 && spec.ncand <= TP_PLAN_MAX_CAND, "%d candidates", spec.ncand);
        FZ_ASSERT(spec.sim_steps >= 1, "no simulation steps");
        if (refs_stay_here(&spec, mfile))
            rc = tp_plan_resolve(&spec, &err);
        else
            rc = 1;
        if (rc == 0)
            for (int i = 0; i < spec.ncand; i++)
                model(&spec, &spec.cand[i]);
        if (rc == 0 && spec.ncand > 1)
            (void)tp_plan_break_even(&spec, &spec.cand[0], &spec.cand[1], spec.c.gpus_per_node,
                                     spec.c.nodes * spec.c.gpus_per_node);
    }
    tp_plan_spec_free(&spec);
    return 0;
}
