/* validate across an allocation by a tier: the control path of its stages
 * (docs/fleet.md, "Every node accounted for").
 *
 * Every stage after the nodes met (the node's own tests, the tier's
 * rounds, the gather of the results) is bounded, and a node lost in one
 * is left out while the others go on: the launcher's group where its
 * operations can be bounded and go on without a rank (the env launcher's
 * star), else a star of the stages' own beside it (MPI: rank 0 at the
 * control port it reserved when the nodes met, the session key its key).
 *
 * Which nodes were lost is what the allgather that ends a stage says (its
 * NULLs): rank 0 sends one result to all, so every node's triage records
 * the same losses in the same place and plans the same rounds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tp/log.h"
#include "validate_int.h"

/* A pair test's and a group test's durations by f of each of the
 * profile's net tests: a pair's tests run both ways where directional,
 * a group's are the across rows. */
void tp__validate_net_sums(const struct tp__validate_ctx *c,
                           double (*f)(const struct tp_validate_test *), double *pair,
                           double *group)
{
    *pair = *group = 0;
    for (int i = 0; i < c->tests.n; i++) {
        const struct tp_validate_test *t = &c->tests.t[i];
        if (!tp__validate_between(t))
            continue;
        if (t->role == TP_VALIDATE_ACROSS)
            *group += f(t);
        else
            *pair += f(t) * (t->directional ? 2 : 1);
    }
}

/* The longest a sound node can take in a round: its tests' deadlines (a
 * pair's both ways, or the group's collective; a child past its deadline
 * is killed), and a minute of slack for starting them and the barriers. */
double tp__validate_round_timeout_s(const struct tp__validate_ctx *c)
{
    if (c->node_timeout_s > 0)
        return c->node_timeout_s;
    double pair, group;
    tp__validate_net_sums(c, tp__validate_deadline_s, &pair, &group);
    return fmax(pair, group) + 60;
}

/* Every node's own tests run at once, each to its deadline: a sound node
 * is done by their sum, and the slack (--node-timeout, else a minute) for
 * a node that started them late. */
static double local_timeout_s(const struct tp__validate_ctx *c)
{
    double sum = 0;
    for (int i = 0; i < c->tests.n; i++)
        if (tp__validate_own(&c->tests.t[i]))
            sum += tp__validate_deadline_s(&c->tests.t[i]);
    return sum + (c->node_timeout_s > 0 ? c->node_timeout_s : 60);
}

/* The gather: rank 0 waits this long for each node's result (its
 * documents, some hundreds of KB; the others wait twice that for their
 * turn). */
static double gather_timeout_s(const struct tp__validate_ctx *c)
{
    return c->node_timeout_s > 0 ? c->node_timeout_s : TP__VALIDATE_GATHER_TIMEOUT_S;
}

/* per stage: its name in a verdict, what it is in words, its bound */
static const struct {
    const char *name, *what;
    double (*timeout_s)(const struct tp__validate_ctx *c);
} stages[] = {
    [TP__VALIDATE_LOCAL] = {"local", "its own tests", local_timeout_s},
    [TP__VALIDATE_ROUNDS] = {"rounds", "the tier's rounds", tp__validate_round_timeout_s},
    [TP__VALIDATE_GATHER] = {"gather", "the gather of the results", gather_timeout_s},
};

double tp__validate_stage_timeout_s(const struct tp__validate_ctx *c, enum tp__validate_stage s)
{
    return stages[s].timeout_s(c);
}

int tp__validate_control_open(struct tp__validate_ctx *c, struct tp_boot *b,
                              const struct tp__validate_node *nodes, struct tp_boot **ctl,
                              tp_error *err)
{
    *ctl = b;
    c->own_star = false;
    c->stage = -1;
    if (tp_boot_leave_out(b))
        return 0;
    json_t *opts = json_pack("{s:s, s:s}", "star", "the tier's stages", "tier", c->tier);
    struct tp_boot_star_opts so = {.rank = tp_boot_rank(b),
                                   .size = tp_boot_size(b),
                                   .host = nodes[0].addr,
                                   .port = atoi(nodes[0].tport),
                                   .key_file = c->keyfile,
                                   .timeout_ns = (uint64_t)(TP__VALIDATE_STAR_JOIN_S * 1e9),
                                   .options = opts,
                                   .leave_out = true,
                                   .lean = true};
    int rc = opts ? tp_boot_star(&so, ctl, err) : tp_error_set(err, TP_ENOMEM, "out of memory");
    json_decref(opts);
    if (rc) {
        *ctl = b;
        tp_error_prefix(err, "the tier's control star at %s port %s", nodes[0].addr,
                        nodes[0].tport);
        return rc;
    }
    c->own_star = true; /* it leaves the lost out (one not joined by then too) */
    return 0;
}

/* The test hook TP_FAULT_STALL=STAGE:RANK (docs/env.md): that rank stops
 * answering as its STAGE begins (as a frozen node would), for twice the
 * stage's bound and ten seconds more, then exits 3; the test sees the
 * others name it lost in that stage and go on. */
static void stall_hook(const struct tp__validate_ctx *c, const struct tp_boot *ctl,
                       enum tp__validate_stage s)
{
    const char *v = getenv("TP_FAULT_STALL"), *colon = v ? strchr(v, ':') : NULL;
    size_t len = strlen(stages[s].name);
    if (!colon || (size_t)(colon - v) != len || strncmp(v, stages[s].name, len) != 0 ||
        atoi(colon + 1) != tp_boot_rank(ctl))
        return;
    tp_log(TP_LOG_WARN, "TP_FAULT_STALL: rank %d stops answering in %s", tp_boot_rank(ctl),
           stages[s].name);
    sleep((unsigned)(2 * tp__validate_stage_timeout_s(c, s)) + 10);
    _exit(3);
}

void tp__validate_round_hook(const struct tp__validate_ctx *c, const struct tp_boot *ctl,
                             int round)
{
    const char *v = getenv("TP_FAULT_STALL");
    int k, rank, used = 0;
    if (!v || sscanf(v, "rounds.%d:%d%n", &k, &rank, &used) != 2 || v[used] || k != round ||
        rank != tp_boot_rank(ctl))
        return;
    tp_log(TP_LOG_WARN, "TP_FAULT_STALL: rank %d stops answering in round %d", rank, round);
    sleep((unsigned)(2 * tp__validate_stage_timeout_s(c, TP__VALIDATE_ROUNDS)) + 10);
    _exit(3);
}

void tp__validate_control_stage(struct tp__validate_ctx *c, struct tp_boot *ctl,
                                enum tp__validate_stage s)
{
    c->stage = (int)s;
    tp_boot_set_timeout(ctl, (uint64_t)(tp__validate_stage_timeout_s(c, s) * 1e9));
    stall_hook(c, ctl, s);
}

int tp__validate_control_close(struct tp__validate_ctx *c, struct tp_boot *b, struct tp_boot *ctl,
                               int rc)
{
    bool gone = false;
    for (int r = 0; r < tp_boot_size(ctl); r++)
        gone |= tp_boot_gone(ctl, r);
    if (c->own_star) {
        /* a node lost, or rank 0 (seen from the others): the launcher's
         * group cannot end without it (MPI_Finalize would wait for it
         * forever), so the job ends by tp_boot_abort; an interrupt reaches
         * every rank and ends the group as before */
        c->lost = gone || (rc && !tp_code_is_intr(rc));
        tp_boot_fini(ctl);
    } else if (ctl == b) {
        /* the group's own operations after the stages: its time again */
        tp_boot_set_timeout(b, (uint64_t)(TP__VALIDATE_GROUP_TIMEOUT_S * 1e9));
    }
    return rc;
}

int tp__validate_stage_barrier(struct tp_boot *ctl, bool *lost, tp_error *err)
{
    int rc = tp_boot_barrier(ctl, err);
    for (int r = 0; r < tp_boot_size(ctl); r++)
        lost[r] = rc == 0 && tp_boot_gone(ctl, r);
    return rc;
}

const char *tp__validate_stage_what(enum tp__validate_stage s)
{
    return stages[s].what;
}

int tp__validate_lose(tp_triage *tri, int n, enum tp__validate_stage s, const bool *lost,
                      tp_error *err)
{
    int rc = 0;
    for (int r = 0; !rc && r < n; r++)
        if (lost[r])
            rc = tp_triage_lose(tri, r, stages[s].name, stages[s].what, err);
    return rc;
}
