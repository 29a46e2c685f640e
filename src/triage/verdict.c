/* The verdicts of a triage (include/tp/triage.h): per node a status, a
 * cause class, the evidence and the action a scheduler can take, and the
 * judgement of the whole fleet. The table below is the one place that
 * says which status gets which cause and action. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tp/topology.h"
#include "triage_int.h"

typedef void says_fn(const tp_triage *t, int v, char *out, size_t size);

static void says_pass(const tp_triage *t, int v, char *out, size_t size)
{
    snprintf(out, size, t->node[v].contention ? "slow in a loaded round, normal alone" : "passed");
}

static void says_suspect(const tp_triage *t, int v, char *out, size_t size)
{
    (void)t, (void)v;
    snprintf(out, size, "slow in a loaded round, not settled within the rounds allowed: run again");
}

static void says_slow(const tp_triage *t, int v, char *out, size_t size)
{
    const struct tp__node *x = &t->node[v];
    snprintf(out, size, "slow: %.2fx the fleet's median alone with known-good partners",
             x->ev_value / x->ev_median);
}

static void says_link(const tp_triage *t, int v, char *out, size_t size)
{
    const struct tp__node *x = &t->node[v];
    snprintf(out, size, "an end of the slow link %d-%d (%.2fx the median); normal with other "
             "partners", v, x->ev_other, x->ev_value / x->ev_median);
}

static void says_cable(const tp_triage *t, int v, char *out, size_t size)
{
    const struct tp__node *x = &t->node[v];
    char rail[48] = "";
    if (x->link_rail >= 0) /* its NIC's: which of its links */
        snprintf(rail, sizeof rail, " on rail %d (its NIC %d)", x->link_rail, x->link_rail);
    snprintf(out, size, "its link to its leaf switch%s: %.2fx the fleet's median alone with "
             "known-good partners, and its counters name the link (%s): service the cable or "
             "its ports", rail, x->ev_value / x->ev_median, x->link_errors);
}

/* a switch's name and, with rails, its rail (or its group's, the rail
 * not told apart); its index when there is no topology to ask */
static const char *leaf_name(const tp_triage *t, int l, char *buf, size_t size)
{
    if (!t->o.topo) {
        snprintf(buf, size, "%d", l);
        return buf;
    }
    char made[TP_TOPOLOGY_NAME_MAX + 16];
    /* a file's own name, else one made up in made (a generated fabric) */
    const char *name = tp_topology_switch_name(t->o.topo, l, made, sizeof made);
    int rail = t->o.topo->sw[l].rail;
    if (t->leaf_group && t->leaf_group[l])
        snprintf(buf, size, "%s (or another rail's leaf over its nodes)", name);
    else if (t->nrails > 1 && rail >= 0)
        snprintf(buf, size, "%s on rail %d", name, rail);
    else
        snprintf(buf, size, "%s", name);
    return buf;
}

static void says_switch(const tp_triage *t, int v, char *out, size_t size)
{
    char name[TP_TOPOLOGY_NAME_MAX + 64];
    snprintf(out, size, "behind leaf switch %s, named slow: service the switch, not the node",
             leaf_name(t, t->node[v].ev_other, name, sizeof name));
}

static void says_uplink(const tp_triage *t, int v, char *out, size_t size)
{
    char name[TP_TOPOLOGY_NAME_MAX + 64];
    snprintf(out, size, "behind %s, whose uplinks were named slow: service them, not the "
             "node", leaf_name(t, t->node[v].ev_other, name, sizeof name));
}

static void says_error(const tp_triage *t, int v, char *out, size_t size)
{
    if (t->node[v].unfinished)
        snprintf(out, size, "not validated to the end: %s; run again", t->stopped);
    else
        snprintf(out, size, "a test of it failed on trainpath's side (not a fault of the node): "
                 "run again");
}

static void says_lost(const tp_triage *t, int v, char *out, size_t size)
{
    const struct tp__node *x = &t->node[v];
    snprintf(out, size, "lost during %s: it died or stopped answering",
             x->lost_what ? x->lost_what : tp_triage_stage_name(x->stage));
}

static void says_missing(const tp_triage *t, int v, char *out, size_t size)
{
    (void)t, (void)v;
    snprintf(out, size, "never joined");
}

/* per status: its name, cause and action, whether it carries evidence,
 * and what it says (NULL: a status only tp_triage_verdict_as gives, its
 * words the caller's) */
static const struct {
    const char *status, *cause, *action;
    bool evidence;
    says_fn *says;
} verdicts[] = {
    [ST_PASS] = {"pass", "none", "none", false, says_pass},
    [ST_SUSPECT] = {"suspect", "contention", "rerun", false, says_suspect},
    [ST_SLOW] = {"slow", "hardware", "drain", true, says_slow},
    [ST_LINK] = {"link", "hardware", "service", true, says_link},
    [ST_ERROR] = {"error", "harness", "rerun", false, says_error},
    [ST_LOST] = {"lost", "timeout", "drain", false, says_lost},
    [ST_MISSING] = {"missing", "timeout", "rerun", false, says_missing},
    [ST_CORRUPT] = {"corrupt", "hardware", "drain", true, NULL},
    [ST_UNDECIDED] = {"undecided", "hardware", "rerun", true, NULL},
    [ST_SWITCH] = {"switch", "hardware", "service", true, says_switch},
    [ST_UPLINK] = {"uplink", "hardware", "service", true, says_uplink},
    [ST_CABLE] = {"cable", "hardware", "service", true, says_cable},
};

/* v's status as its verdict says it: slow with its counters naming its
 * link is a bad cable */
static enum tp__status status_of(const tp_triage *t, int v)
{
    const struct tp__node *x = &t->node[v];
    return x->status == ST_SLOW && x->link_errors ? ST_CABLE : (enum tp__status)x->status;
}

json_t *tp_triage_verdict_as(const char *status, int node, const char *stage, int tests,
                             json_t *evidence, const char *says)
{
    for (size_t i = 0; status && i < sizeof verdicts / sizeof verdicts[0]; i++)
        if (strcmp(status, verdicts[i].status) == 0)
            return json_pack("{s:i, s:s, s:s, s:s, s:s, s:i, s:o, s:s}", "node", node, "status",
                             verdicts[i].status, "cause", verdicts[i].cause, "action",
                             verdicts[i].action, "stage", stage, "tests", tests, "evidence",
                             evidence ? evidence : json_null(), "says", says);
    json_decref(evidence);
    return NULL;
}

json_t *tp_triage_verdict(const tp_triage *t, int v)
{
    if (v < 0 || v >= t->n)
        return NULL;
    const struct tp__node *x = &t->node[v];
    enum tp__status st = status_of(t, v);
    const char *cause = verdicts[st].cause;
    const char *stage = x->status == ST_MISSING ? "join"
                        : x->status == ST_LOST && x->lost_stage ? x->lost_stage
                                                                : tp_triage_stage_name(x->stage);
    if (x->status == ST_PASS && x->contention)
        cause = "contention";
    char says[480];
    verdicts[st].says(t, v, says, sizeof says);
    json_t *ev = verdicts[st].evidence
                     ? json_pack("{s:s, s:f, s:f, s:f}", "test", tp_triage_stage_name(x->ev_stage),
                                 "value", (double)x->ev_value, "median", (double)x->ev_median,
                                 "threshold", (double)x->ev_threshold)
                     : json_null();
    if (ev && x->ev_conf && json_is_object(ev)) /* the measurements behind it */
        json_object_set(ev, "confidence", x->ev_conf);
    char name[TP_TOPOLOGY_NAME_MAX + 16];
    if (ev && json_is_object(ev) && (st == ST_SWITCH || st == ST_UPLINK))
        json_object_set_new(ev, "component",
                            json_pack("{s:s, s:s}", "kind", verdicts[st].status, "leaf",
                                      leaf_name(t, x->ev_other, name, sizeof name)));
    return json_pack("{s:i, s:s, s:s, s:s, s:s, s:i, s:o, s:s}", "node", v, "status",
                     verdicts[st].status, "cause", cause, "action", verdicts[st].action, "stage",
                     stage, "tests", x->tests, "evidence", ev, "says", says);
}

json_t *tp_triage_result(const tp_triage *t, tp_error *err)
{
    return tp__triage_result_of(t, false, err);
}

/* what was named, a node whose counters name its link as a cable */
static json_t *named_of(const tp_triage *t)
{
    json_t *out = json_array();
    size_t i;
    json_t *e;
    json_array_foreach(t->named, i, e) {
        json_t *c = json_deep_copy(e);
        const char *kind = json_string_value(json_object_get(e, "kind"));
        int v = (int)json_integer_value(json_object_get(e, "node"));
        if (c && kind && strcmp(kind, "node") == 0 && v >= 0 && v < t->n &&
            status_of(t, v) == ST_CABLE) {
            char says[480];
            says_cable(t, v, says, sizeof says);
            json_object_set_new(c, "kind", json_string("cable"));
            json_object_set_new(c, "counters", json_string(t->node[v].link_errors));
            json_object_set_new(c, "rail", t->node[v].link_rail >= 0
                                               ? json_integer(t->node[v].link_rail)
                                               : json_null());
            json_object_set_new(c, "says", json_string(says));
        }
        json_array_append_new(out, c);
    }
    return out;
}

json_t *tp__triage_result_of(const tp_triage *t, bool brief, tp_error *err)
{
    json_t *rounds = json_object(), *counts = json_object(), *detail = json_array();
    for (int s = 0; s < TP_TRIAGE_NSTAGES; s++)
        json_object_set_new(rounds, tp_triage_stage_name((enum tp_triage_stage)s),
                            json_integer(t->rounds[s]));
    int count[sizeof verdicts / sizeof verdicts[0]] = {0};
    for (int v = 0; v < t->n; v++) {
        count[status_of(t, v)]++;
        if (!brief || t->node[v].status != ST_PASS || t->node[v].contention)
            json_array_append_new(detail, tp_triage_verdict(t, v));
    }
    for (size_t i = 0; i < sizeof verdicts / sizeof verdicts[0]; i++)
        json_object_set_new(counts, verdicts[i].status, json_integer(count[i]));
    json_t *r = json_pack("{s:s, s:i, s:i, s:o, s:i, s:i, s:i, s:f, s:f, s:f, s:o, s:i, s:o, s:o}",
                          "tier", t->tier->name, "nodes", t->n, "joined", t->m, "rounds", rounds,
                          "rounds_total", t->round_no, "rounds_isolation", t->iso_rounds,
                          "isolation_bound", tp__triage_iso_bound(t->n, &t->o), "pair_median",
                          t->pair_median, "spread", t->pair_spread, "threshold",
                          t->pair_median > 0 ? tp__triage_slow(t) : 0.0, "named", named_of(t),
                          "harness_failures", t->harness_failures, "counts", counts,
                          "nodes_detail", detail);
    if (r) {
        json_t *d = tp_triage_decision_json(t);
        json_object_set_new(r, "decision", d ? d : json_null());
    }
    if (r && t->stopped[0])
        json_object_set_new(r, "partial", json_string(t->stopped));
    if (!r)
        tp_error_set(err, TP_ENOMEM, "out of memory");
    return r;
}
