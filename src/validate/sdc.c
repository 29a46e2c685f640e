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

#define MAX_KEYS 16 /* kinds of GPU in one allocation */

/* What rank 0 keeps of one node's screen. */
struct node_sdc {
    bool have; /* its chain is in the judgement */
    bool core; /* one of its cores differed from its others */
    uint64_t step, after;
    char says[240]; /* the core's finding, as its document said it */
    bool gpu;       /* sdc-gpu: one of its GPUs differed from its others of that kind */
    char gpu_says[240];
};

/* The GPUs of one kind (sdc-gpu's key: name, compute capability, SMs,
 * cuBLAS version), whose chains compare across nodes: a judgement each. */
struct kind {
    char key[160];
    struct tp_sdc_judge *judge;
    int have;
};

struct tp__validate_sdc {
    int n;
    struct tp_sdc_judge *judge;
    struct node_sdc *node; /* [n] */
    int nkinds;
    struct kind kind[MAX_KEYS];
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
    for (int k = 0; k < s->nkinds; k++)
        tp_sdc_judge_free(s->kind[k].judge);
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

void tp__validate_sdc_take_gpu(struct tp__validate_sdc *s, int r, const char *label,
                               const json_t *doc)
{
    const json_t *res = json_object_get(doc, "results"), *e;
    size_t i;
    if (!s || r < 0 || r >= s->n)
        return;
    json_array_foreach(json_object_get(res, "gpu_chains"), i, e)
    {
        const char *key = json_string_value(json_object_get(e, "key"));
        int k = 0;
        while (key && k < s->nkinds && strcmp(s->kind[k].key, key) != 0)
            k++;
        if (!key || (k == s->nkinds && k == MAX_KEYS)) {
            tp_log(TP_LOG_WARN, "node %s: its GPUs' chain is left out (%s)", label,
                   key ? "more than 16 kinds of GPU" : "no key");
            continue;
        }
        if (k == s->nkinds) {
            if (!(s->kind[k].judge = tp_sdc_judge_new(s->n)))
                return;
            snprintf(s->kind[k].key, sizeof s->kind[k].key, "%s", key);
            s->nkinds++;
        }
        struct tp_sdc_chain c;
        tp_error err;
        if (tp_sdc_chain_parse(json_object_get(e, "chain"), &c, &err) != 0 ||
            tp_sdc_judge_add(s->kind[k].judge, r, &c, &err) != 0)
            tp_log(TP_LOG_WARN, "node %s: its %s GPUs' chain is left out: %s", label, key,
                   err.msg);
        else
            s->kind[k].have++;
        tp_sdc_chain_free(&c);
    }
    json_array_foreach(json_object_get(res, "gpus_detail"), i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "call")), "agree") == 0)
            continue;
        struct node_sdc *x = &s->node[r];
        x->gpu = true;
        snprintf(x->gpu_says, sizeof x->gpu_says, "%s",
                 json_string_value(json_object_get(json_object_get(doc, "status"), "message")));
        break;
    }
}

/* The test `test` of the node labelled label, in gathered: failed, saying
 * says. */
static void fail_test(json_t *gathered, const char *label, const char *test, const char *says)
{
    size_t i, k;
    json_t *g, *e;
    json_array_foreach(gathered, i, g)
    {
        if (strcmp(json_string_value(json_object_get(g, "label")), label) != 0)
            continue;
        json_array_foreach(json_object_get(g, "tests"), k,
                           e) if (strcmp(json_string_value(json_object_get(e, "test")), test) == 0)
        {
            json_object_set_new(e, "status",
                                json_string(tp__validate_status_name(TP__VALIDATE_FAIL)));
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

/* The GPUs of kind k across the nodes: a node whose chain differs from
 * the kind's majority (one not named already) is named as for the cores,
 * its sdc-gpu test failed, evidence {"test": "sdc-gpu", "scope": "gpu",
 * "kind", ...}; the kind's summary appended to kinds. */
static void gpu_kind(const struct tp__validate_sdc *s, int k, const struct tp__validate_node *nodes,
                     json_t *gathered, json_t *verdicts, json_t *named, bool *blamed, int *bad,
                     json_t *kinds)
{
    const struct kind *g = &s->kind[k];
    struct tp_sdc_verdict v;
    tp_error err;
    if (!g->have || tp_sdc_judge_result(g->judge, &v, &err) != 0)
        return;
    for (int r = 0; r < s->n; r++) {
        const struct tp_sdc_member *m = &v.of[r];
        if ((m->call != TP_SDC_ODD && m->call != TP_SDC_UNDECIDED) || blamed[r])
            continue;
        char words[300], says[600];
        tp_sdc_says(&v, r, "nodes", words, sizeof words);
        snprintf(says, sizeof says, "sdc-gpu: %s GPUs: %s", g->key, words);
        const char *st = m->call == TP_SDC_ODD ? "corrupt" : "undecided";
        json_t *ev = json_pack("{s:s, s:s, s:s, s:I, s:I, s:i, s:i}", "test", "sdc-gpu", "scope",
                               "gpu", "kind", g->key, "step", (json_int_t)m->step, "after",
                               (json_int_t)m->after, "agree", v.majority, "of", v.present);
        json_t *x = tp_triage_verdict_as(st, r, "local", 1, ev, says);
        blamed[r] = true;
        (*bad)++;
        fail_test(gathered, nodes[r].label, "sdc-gpu", says + strlen("sdc-gpu: "));
        json_array_append_new(named, json_pack("{s:i, s:s, s:s, s:O, s:s}", "node", r, "label",
                                               nodes[r].label, "status", st, "evidence",
                                               json_object_get(x, "evidence"), "says", says));
        put(verdicts, r, x);
    }
    json_array_append_new(kinds, json_pack("{s:s, s:i, s:i, s:I}", "key", g->key, "with_chain",
                                           v.present, "majority", v.majority, "steps_compared",
                                           (json_int_t)v.compared));
    tp_sdc_verdict_free(&v);
}

json_t *tp__validate_sdc_judge(struct tp__validate_sdc *s, const struct tp__validate_node *nodes,
                               json_t *gathered, const json_t *triage, json_t **judgement)
{
    *judgement = NULL;
    struct tp_sdc_verdict v = {0};
    tp_error err;
    bool any = false, cpu = false;
    for (int r = 0; s && r < s->n; r++) {
        cpu |= s->node[r].have;
        any |= s->node[r].have || s->node[r].gpu;
    }
    for (int k = 0; s && k < s->nkinds; k++)
        any |= s->kind[k].have > 0;
    json_t *verdicts = triage ? json_deep_copy(triage) : NULL;
    if (!any || (cpu && tp_sdc_judge_result(s->judge, &v, &err) != 0))
        return verdicts;
    if (!verdicts)
        verdicts = json_pack("{s:{}, s:[]}", "counts", "nodes_detail");
    json_t *named = json_array(), *kinds = json_array();
    bool *blamed = calloc((size_t)s->n, sizeof *blamed);
    int bad = 0;
    for (int r = 0; cpu && verdicts && blamed && r < s->n; r++) {
        char says[600];
        json_t *x = verdict_of(s, &v, r, triage != NULL, says, sizeof says);
        if (!x)
            continue;
        const char *st = json_string_value(json_object_get(x, "status"));
        if (strcmp(st, "corrupt") == 0 || strcmp(st, "undecided") == 0) {
            bad++;
            blamed[r] = true;
            fail_test(gathered, nodes[r].label, "sdc", says + strlen("sdc: "));
            json_array_append_new(named, json_pack("{s:i, s:s, s:s, s:O, s:s}", "node", r, "label",
                                                   nodes[r].label, "status", st, "evidence",
                                                   json_object_get(x, "evidence"), "says", says));
        }
        put(verdicts, r, x);
    }
    /* the GPUs: each kind across the nodes, then a GPU that differed from
     * the others of its node (its sdc-gpu test failed there) */
    for (int k = 0; verdicts && blamed && k < s->nkinds; k++)
        gpu_kind(s, k, nodes, gathered, verdicts, named, blamed, &bad, kinds);
    for (int r = 0; verdicts && blamed && r < s->n; r++) {
        if (!s->node[r].gpu || blamed[r])
            continue;
        char says[600];
        snprintf(says, sizeof says, "sdc-gpu: one GPU of this node against its others: %s",
                 s->node[r].gpu_says);
        json_t *x = tp_triage_verdict_as("corrupt", r, "local", 1,
                                         json_pack("{s:s, s:s}", "test", "sdc-gpu", "scope", "gpu"),
                                         says);
        bad++;
        blamed[r] = true;
        json_array_append_new(named, json_pack("{s:i, s:s, s:s, s:O, s:s}", "node", r, "label",
                                               nodes[r].label, "status", "corrupt", "evidence",
                                               json_object_get(x, "evidence"), "says", says));
        put(verdicts, r, x);
    }
    free(blamed);
    char sum[300];
    int present = cpu ? v.present : 0;
    if (bad)
        snprintf(sum, sizeof sum, "%d of %d nodes named (see nodes.jsonl)", bad, s->n);
    else if (present > 1)
        snprintf(sum, sizeof sum, "the %d nodes computed the same chain over %" PRIu64 " steps%s",
                 present, v.compared,
                 json_array_size(kinds) ? "; each kind of GPU the same as its kind" : "");
    else
        snprintf(sum, sizeof sum, "one node's chain: nothing to compare it with");
    *judgement = json_pack("{s:i, s:i, s:i, s:I, s:o, s:o, s:s}", "nodes", s->n, "with_chain",
                           present, "majority", cpu ? v.majority : 0, "steps_compared",
                           (json_int_t)(cpu ? v.compared : 0), "named", named, "gpus", kinds,
                           "says", sum);
    tp_sdc_verdict_free(&v);
    return verdicts;
}
