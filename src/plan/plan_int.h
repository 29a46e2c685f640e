/* Internal to src/plan/: what decide.c takes from the words (explain.c) and
 * from the result document (doc.c). */
#ifndef TP_PLAN_INT_H
#define TP_PLAN_INT_H

#include <jansson.h>

#include "tp/error.h"
#include "tp/plan.h"

/* Fill d->words and d->nexplain from d's ranked candidates and crossings.
 * Returns 0, or TP_ENOMEM with err set. */
int tp__plan_explain(const struct tp_plan_spec *s, struct tp_plan_decision *d, tp_error *err);

/* The effective plan at gpus GPUs: the result document's "config". */
json_t *tp__plan_spec_json(const struct tp_plan_spec *s, double gpus);

/* The decision: the result document's "results". */
json_t *tp__plan_results_json(const struct tp_plan_spec *s, const struct tp_plan_decision *d);

struct tp_yaml_range;

/* The range of sense of measurable figure fig, as its key in a plan file
 * has it (parse.c): a measured value is held to it too. */
const struct tp_yaml_range *tp__plan_fig_range(enum tp_plan_fig fig);

#endif
