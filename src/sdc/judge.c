/* The SDC screen's judgement (include/tp/sdc.h): the members (the nodes of
 * an allocation, or the threads of one node) ran the same chain, so a
 * sound member's hashes are the majority's; one whose hash differs is the
 * odd one out, named with the first step it differs at. Two members that
 * disagree, or a split with no strict majority, name nobody: every member
 * is undecided, since nothing says which one computed wrong.
 *
 * Memory: the chains arrive one at a time (rank 0 takes each node's result
 * as it comes), and only the distinct ones are kept: a chain that agrees
 * with one kept on the steps both have joins it (the longer of the two is
 * kept), so most members cost an int. Chains of different lengths (soaks
 * by time) are compared at the end on the steps they all have. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdc_int.h"

struct tp_sdc_judge {
    int n;
    int *rep;    /* [n]: the kept chain member m agrees with; -1: none given */
    size_t *len; /* [n]: its checkpoints */
    struct tp_sdc_chain *kept;
    int nkept, capkept;
};

struct tp_sdc_judge *tp_sdc_judge_new(int n)
{
    if (n < 1 || n > 1000000)
        return NULL;
    struct tp_sdc_judge *j = calloc(1, sizeof *j);
    if (!j || !(j->rep = malloc((size_t)n * sizeof *j->rep)) ||
        !(j->len = calloc((size_t)n, sizeof *j->len))) {
        tp_sdc_judge_free(j);
        return NULL;
    }
    j->n = n;
    for (int m = 0; m < n; m++)
        j->rep[m] = -1;
    return j;
}

void tp_sdc_judge_free(struct tp_sdc_judge *j)
{
    if (!j)
        return;
    for (int k = 0; k < j->nkept; k++)
        tp_sdc_chain_free(&j->kept[k]);
    free(j->kept);
    free(j->rep);
    free(j->len);
    free(j);
}

/* The first of the first len checkpoints where a and b differ, or len. */
static size_t first_diff(const struct tp_sdc_chain *a, const struct tp_sdc_chain *b, size_t len)
{
    size_t i = 0;
    while (i < len && a->step[i] == b->step[i] && a->hash[i] == b->hash[i])
        i++;
    return i;
}

static size_t min_z(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* *to = a copy of c. */
static int copy_chain(struct tp_sdc_chain *to, const struct tp_sdc_chain *c, tp_error *err)
{
    struct tp_sdc_chain x = {.steps = c->steps, .n = c->n, .cap = c->n};
    x.step = malloc(c->n * sizeof *x.step);
    x.hash = malloc(c->n * sizeof *x.hash);
    if (!x.step || !x.hash) {
        tp_sdc_chain_free(&x);
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    }
    memcpy(x.step, c->step, c->n * sizeof *x.step);
    memcpy(x.hash, c->hash, c->n * sizeof *x.hash);
    memcpy(x.final, c->final, sizeof x.final);
    tp_sdc_chain_free(to);
    *to = x;
    return 0;
}

int tp_sdc_judge_add(struct tp_sdc_judge *j, int m, const struct tp_sdc_chain *c, tp_error *err)
{
    if (m < 0 || m >= j->n || j->rep[m] >= 0 || c->n == 0)
        return tp_error_set(err, TP_EUSAGE,
                            "sdc judgement: member %d out of range 0..%d, "
                            "given twice or without checkpoints",
                            m, j->n - 1);
    for (int k = 0; k < j->nkept; k++) {
        size_t both = min_z(c->n, j->kept[k].n);
        if (first_diff(c, &j->kept[k], both) < both)
            continue;
        if (c->n > j->kept[k].n && copy_chain(&j->kept[k], c, err))
            return TP_ENOMEM;
        j->rep[m] = k;
        j->len[m] = c->n;
        return 0;
    }
    if (j->nkept == j->capkept) {
        int cap = j->capkept ? 2 * j->capkept : 4;
        struct tp_sdc_chain *kept = realloc(j->kept, (size_t)cap * sizeof *kept);
        if (!kept)
            return tp_error_set(err, TP_ENOMEM, "out of memory");
        j->kept = kept;
        j->capkept = cap;
    }
    memset(&j->kept[j->nkept], 0, sizeof j->kept[0]);
    if (copy_chain(&j->kept[j->nkept], c, err))
        return TP_ENOMEM;
    j->rep[m] = j->nkept++;
    j->len[m] = c->n;
    return 0;
}

void tp_sdc_verdict_free(struct tp_sdc_verdict *v)
{
    if (v) {
        free(v->of);
        v->of = NULL;
    }
}

int tp_sdc_judge_result(const struct tp_sdc_judge *j, struct tp_sdc_verdict *v, tp_error *err)
{
    memset(v, 0, sizeof *v);
    v->members = j->n;
    v->of = calloc((size_t)j->n, sizeof *v->of);
    int *group = calloc((size_t)j->nkept + 1, sizeof *group);
    int *count = calloc((size_t)j->nkept + 1, sizeof *count);
    if (!v->of || !group || !count) {
        free(group);
        free(count);
        tp_sdc_verdict_free(v);
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    }
    size_t len = SIZE_MAX; /* the checkpoints every present chain has */
    for (int m = 0; m < j->n; m++)
        if (j->rep[m] >= 0) {
            v->present++;
            len = min_z(len, j->len[m]);
        }
    /* the kept chains that agree on those steps are one group */
    for (int k = 0; k < j->nkept; k++) {
        group[k] = k;
        for (int g = 0; g < k; g++)
            if (group[g] == g && first_diff(&j->kept[g], &j->kept[k], len) == len) {
                group[k] = g;
                break;
            }
    }
    int best = -1;
    for (int m = 0; m < j->n; m++)
        if (j->rep[m] >= 0 && ++count[group[j->rep[m]]] * 2 > v->present)
            best = group[j->rep[m]];
    for (int m = 0; m < j->n && !v->compared; m++)
        if (j->rep[m] >= 0)
            v->compared = j->kept[j->rep[m]].step[len - 1];
    v->majority = best >= 0 ? count[best] : 0;
    for (int m = 0; m < j->n; m++) {
        struct tp_sdc_member *x = &v->of[m];
        if (j->rep[m] < 0) {
            x->call = TP_SDC_ABSENT;
            continue;
        }
        int g = group[j->rep[m]];
        if (g == best) {
            x->call = TP_SDC_AGREE;
            continue;
        }
        /* against the majority's chain, else the first step it differs
         * from any other group's */
        size_t at = len;
        for (int k = 0; k < j->nkept; k++)
            if (group[k] == k && k != g && (best < 0 || k == best))
                at = min_z(at, first_diff(&j->kept[g], &j->kept[k], len));
        const struct tp_sdc_chain *c = &j->kept[g];
        x->call = best >= 0 ? TP_SDC_ODD : TP_SDC_UNDECIDED;
        x->step = c->step[at];
        x->after = at ? c->step[at - 1] : 0;
        v->odd++;
        if (!v->step || x->step < v->step) {
            v->step = x->step;
            v->after = x->after;
        }
    }
    free(group);
    free(count);
    return 0;
}

/* "at step S" or "between steps A and S"; "from step S" or "from a step
 * between A and S" */
static void where(bool from, uint64_t step, uint64_t after, char *out, size_t cap)
{
    if (after + 1 == step)
        snprintf(out, cap, "%s step %" PRIu64, from ? "from" : "at", step);
    else
        snprintf(out, cap, "%s %" PRIu64 " and %" PRIu64,
                 from ? "from a step between" : "between steps", after + 1, step);
}

void tp_sdc_says(const struct tp_sdc_verdict *v, int m, const char *what, char *out, size_t cap)
{
    const struct tp_sdc_member *x = &v->of[m];
    char at[80];
    where(x->call == TP_SDC_UNDECIDED, x->step, x->after, at, sizeof at);
    switch (x->call) {
    case TP_SDC_AGREE:
        if (v->present == 1)
            snprintf(out, cap, "alone: no other %s to compare with", what);
        else
            snprintf(out, cap, "agrees with the majority (%d of %d %s)", v->majority, v->present,
                     what);
        break;
    case TP_SDC_ODD:
        snprintf(out, cap, "result hash diverged from the majority (%d of %d %s) %s", v->majority,
                 v->present, what, at);
        break;
    case TP_SDC_UNDECIDED:
        if (v->present == 2)
            snprintf(out, cap, "the 2 %s disagree %s; no majority", what, at);
        else
            snprintf(out, cap, "the %d %s split with no majority (this one differs %s)", v->present,
                     what, at);
        break;
    case TP_SDC_ABSENT: snprintf(out, cap, "no result to compare"); break;
    }
}
