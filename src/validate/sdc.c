/* validate's part of the SDC screen (docs/sdc.md): every node runs `trainpath
 * sdc` among its own tests, which judges the node's cores against each
 * other; rank 0 compares the nodes' chains (include/tp/sdc.h) and names
 * the node whose hashes differ from the majority's, with the step where
 * they first did.
 *
 * As each node's result arrives its chain goes into the judgement, which
 * keeps only the chains that differ (one, when the nodes agree), and its
 * own finding (a core that differed from the node's others) a few bytes;
 * the document itself is dropped as the collect drops every document.
 * Once all are in, a node named gets the verdict "corrupt" (hardware,
 * drain: --on-fail drain drains it), two nodes that disagree "undecided"
 * (no majority to say which is wrong), and its sdc test fails with the
 * words, so validate exits 1 as for any failed test. The verdicts go over
 * the tier's where a tier ran, else they are the allocation's verdicts
 * alone (nodes.jsonl without a tier). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp/log.h"
#include "tp/sdc.h"
#include "validate_int.h"

#define VAR "TP_FAULT_SDC="

void tp__validate_sdc_env(struct tp__validate_ctx *c, int rank)
{
    for (size_t i = 0; c->envp && c->envp[i]; i++) {
        if (strncmp(c->envp[i], VAR, strlen(VAR)) != 0)
            continue;
        const char *v = c->envp[i] + strlen(VAR);
        char *end = NULL;
        long r = strtol(v, &end, 10);
        if (end == v || *end != ':') /* malformed: the test refuses it, saying so */
            return;
        if (r == rank) { /* this node's: as the command alone sees its own, rank 0 */
            snprintf(c->sdc_fault, sizeof c->sdc_fault, "%s0%.120s", VAR, end);
            c->envp[i] = c->sdc_fault;
        } else {
            for (size_t k = i; c->envp[k]; k++)
                c->envp[k] = c->envp[k + 1];
        }
        return;
    }
}

/* What rank 0 keeps of one node's screen. */
struct node_sdc {
    bool have; /* its chain is in the judgement */
    bool core; /* one of its cores differed from its others */
    uint64_t step, after;
    char says[240]; /* the core's finding, as its document said it */
};

struct tp__validate_sdc {
    int n;
    struct tp_sdc_judge *judge;
    struct node_sdc *node; /* [n] */
};

struct tp__validate_sdc *tp__validate_sdc_new(int n)
{
    struct tp__validate_sdc *s = calloc(1, sizeof *s);
    if (!s || !(s->judge = tp_sdc_judge_new(n)) ||
        !(s->node = calloc((size_t)n, sizeof *s->node))) {
        tp__validate_sdc_free(s);
        return NULL;
    }
    s->n = n;
    return s;
}

void tp__validate_sdc_free(struct tp__validate_sdc *s)
{
    if (!s)
        return;
    tp_sdc_judge_free(s->judge);
    free(s->node);
    free(s);
}

void tp__validate_sdc_take(struct tp__validate_sdc *s, int r, const char *label, const json_t *doc)
{
    const json_t *res = json_object_get(doc, "results"), *chain = json_object_get(res, "chain");
    if (!s || r < 0 || r >= s->n || !chain)
        return; /* it ran no chain: its test's failure says why */
    struct tp_sdc_chain c;
    tp_error err;
    if (tp_sdc_chain_parse(chain, &c, &err) != 0 || tp_sdc_judge_add(s->judge, r, &c, &err) != 0) {
        tp_log(TP_LOG_WARN, "node %s: its sdc document's chain is left out: %s", label, err.msg);
        tp_sdc_chain_free(&c);
        return;
    }
    tp_sdc_chain_free(&c);
    struct node_sdc *x = &s->node[r];
    x->have = true;
    const json_t *first = json_object_get(res, "first");
    if (json_is_object(first)) {
        x->core = true;
        x->step = (uint64_t)json_integer_value(json_object_get(first, "step"));
        x->after = (uint64_t)json_integer_value(json_object_get(first, "after"));
        snprintf(x->says, sizeof x->says, "%s",
                 json_string_value(json_object_get(json_object_get(doc, "status"), "message")));
    }
}

/* The sdc test of the node labelled label, in gathered: failed, saying
 * says. */
static void fail_test(json_t *gathered, const char *label, const char *says)
{
    size_t i, k;
    json_t *g, *e;
    json_array_foreach(gathered, i, g)
    {
        if (strcmp(json_string_value(json_object_get(g, "label")), label) != 0)
            continue;
        json_array_foreach(json_object_get(g, "tests"), k,
                           e) if (strcmp(json_string_value(json_object_get(e, "test")), "sdc") == 0)
        {
            json_object_set_new(e, "status", json_string("FAIL"));
            json_object_set_new(e, "summary", json_string(says));
        }
    }
}

/* Node r's verdict of the screen, its words into says; NULL where the
 * tier's verdict stands (tier: it passed, or sent no chain). */
static json_t *verdict_of(const struct tp__validate_sdc *s, const struct tp_sdc_verdict *v, int r,
                          bool tier, char *says, size_t cap)
{
    const struct node_sdc *x = &s->node[r];
    const struct tp_sdc_member *m = &v->of[r];
    char words[300];
    tp_sdc_says(v, r, "nodes", words, sizeof words);
    snprintf(says, cap, "sdc: %s", words);
    const char *status = "corrupt", *scope = "node";
    uint64_t step = m->step, after = m->after;
    if (m->call == TP_SDC_UNDECIDED) {
        status = "undecided";
    } else if (m->call == TP_SDC_ABSENT) {
        snprintf(says, cap, "sdc: no result from this node to compare (see its sdc test)");
        return tier ? NULL : tp_triage_verdict_as("error", r, "local", 0, NULL, says);
    } else if (m->call == TP_SDC_AGREE && x->core) {
        snprintf(says, cap, "sdc: one core of this node against its others: %s", x->says);
        scope = "core";
        step = x->step;
        after = x->after;
    } else if (m->call == TP_SDC_AGREE) {
        return tier ? NULL : tp_triage_verdict_as("pass", r, "local", 1, NULL, says);
    }
    json_t *ev = json_pack("{s:s, s:s, s:I, s:I, s:i, s:i}", "test", "sdc", "scope", scope, "step",
                           (json_int_t)step, "after", (json_int_t)after, "agree", v->majority, "of",
                           v->present);
    return tp_triage_verdict_as(status, r, "local", 1, ev, says);
}

/* verdicts (a tier's copy, or the screen's own) with v in node r's place;
 * counts follow. */
static void put(json_t *verdicts, int r, json_t *v)
{
    json_t *detail = json_object_get(verdicts, "nodes_detail"),
           *counts = json_object_get(verdicts, "counts"), *e;
    size_t i;
    const char *old = NULL;
    json_array_foreach(detail, i, e) if (json_integer_value(json_object_get(e, "node")) == r)
    {
        old = json_string_value(json_object_get(e, "status"));
        if (strcmp(old, "lost") == 0 || strcmp(old, "missing") == 0) {
            json_decref(v); /* it was not there to the end: that stands */
            return;
        }
        json_object_set(v, "tests", json_object_get(e, "tests"));
        json_object_set_new(counts, old,
                            json_integer(json_integer_value(json_object_get(counts, old)) - 1));
        json_array_set(detail, i, v);
        break;
    }
    if (!old)
        json_array_append(detail, v);
    const char *st = json_string_value(json_object_get(v, "status"));
    json_object_set_new(counts, st,
                        json_integer(json_integer_value(json_object_get(counts, st)) + 1));
    json_decref(v);
}

json_t *tp__validate_sdc_judge(struct tp__validate_sdc *s, const struct tp__validate_node *nodes,
                               json_t *gathered, const json_t *triage, json_t **judgement)
{
    *judgement = NULL;
    struct tp_sdc_verdict v;
    tp_error err;
    bool any = false;
    for (int r = 0; s && r < s->n; r++)
        any |= s->node[r].have;
    json_t *verdicts = triage ? json_deep_copy(triage) : NULL;
    if (!any || tp_sdc_judge_result(s->judge, &v, &err) != 0)
        return verdicts;
    if (!verdicts)
        verdicts = json_pack("{s:{}, s:[]}", "counts", "nodes_detail");
    json_t *named = json_array();
    int bad = 0;
    for (int r = 0; verdicts && r < s->n; r++) {
        char says[600];
        json_t *x = verdict_of(s, &v, r, triage != NULL, says, sizeof says);
        if (!x)
            continue;
        const char *st = json_string_value(json_object_get(x, "status"));
        if (strcmp(st, "corrupt") == 0 || strcmp(st, "undecided") == 0) {
            bad++;
            fail_test(gathered, nodes[r].label, says + strlen("sdc: "));
            json_array_append_new(named, json_pack("{s:i, s:s, s:s, s:O, s:s}", "node", r, "label",
                                                   nodes[r].label, "status", st, "evidence",
                                                   json_object_get(x, "evidence"), "says", says));
        }
        put(verdicts, r, x);
    }
    char sum[300];
    if (bad)
        snprintf(sum, sizeof sum, "%d of %d nodes named (see nodes.jsonl)", bad, v.present);
    else if (v.present > 1)
        snprintf(sum, sizeof sum, "the %d nodes computed the same chain over %" PRIu64 " steps",
                 v.present, v.compared);
    else
        snprintf(sum, sizeof sum, "one node's chain: nothing to compare it with");
    *judgement = json_pack("{s:i, s:i, s:i, s:I, s:o, s:s}", "nodes", s->n, "with_chain", v.present,
                           "majority", v.majority, "steps_compared", (json_int_t)v.compared,
                           "named", named, "says", sum);
    tp_sdc_verdict_free(&v);
    return verdicts;
}
