/* --on-fail: what validate does with a node the triage judged bad, as rows
 * of a table, one function each: none (report it, the default) and drain
 * (Slurm: `scontrol update NodeName=X State=DRAIN Reason="trainpath: TEST
 * EVIDENCE"`). An action takes the nodes whose verdict's action is "drain"
 * (tp_triage_verdict): a slow node, or one lost mid-run (it died or hung);
 * the two ends of a slow link are for service (the cable, the port), and a
 * node missing from the start or failed by trainpath's own harness is
 * rerun, so neither is drained. An action's command is bounded (scontrol
 * retries an unreachable slurmctld for minutes) and stopped at an
 * interrupt; what became of it is in the fleet document either way. */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tp/clock.h"
#include "tp/intr.h"
#include "validate_int.h"

extern char **environ;

/* What an action's command came to, beside its exit status (>= 0). */
enum { ACT_NORUN = -1, ACT_LATE = -2, ACT_INTR = -3 };

/* The bound of one action's command without --node-timeout. */
#define ACT_TIMEOUT_S 60.0

struct onfail {
    const char *name;
    int (*ready)(tp_error *err); /* can it act here? */
    /* act on node (its scheduler name), why: the reason, within timeout_s;
     * fills cmd; its exit status, or ACT_* */
    int (*act)(const char *node, const char *why, double timeout_s, char *cmd, size_t cap);
};

static int none_ready(tp_error *err)
{
    (void)err;
    return 0;
}

/* Is prog an executable file in PATH? */
static bool in_path(const char *prog)
{
    const char *path = getenv("PATH");
    for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
        size_t len = strcspn(p, ":");
        char f[4200];
        snprintf(f, sizeof f, "%.*s/%s", (int)len, p, prog);
        if (len && access(f, X_OK) == 0)
            return true;
        p += len + (p[len] == ':');
    }
    return false;
}

static int drain_ready(tp_error *err)
{
    if (!getenv("SLURM_JOB_ID"))
        return tp_error_set(err, TP_EUSAGE,
                            "--on-fail drain: not under Slurm (SLURM_JOB_ID is not set): drain "
                            "acts through scontrol on the nodes of a Slurm job (run it under "
                            "srun or sbatch, or use --on-fail none)");
    if (!in_path("scontrol"))
        return tp_error_set(err, TP_EUSAGE,
                            "--on-fail drain: scontrol is not in PATH: it is how a node is "
                            "drained");
    return 0;
}

/* Run argv, waiting at most timeout_s and not past an interrupt (either
 * kills it, and whatever it started: it leads a process group of its own):
 * its exit status, or ACT_*. */
static int run_bounded(char *const argv[], double timeout_s)
{
    pid_t pid;
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&at, 0);
    int src = posix_spawnp(&pid, argv[0], NULL, &at, argv, environ);
    posix_spawnattr_destroy(&at);
    if (src != 0)
        return ACT_NORUN;
    uint64_t deadline = tp_now_ns() + (uint64_t)(timeout_s * 1e9);
    int st = 0;
    pid_t got;
    while ((got = waitpid(pid, &st, WNOHANG)) == 0) {
        if (tp_intr_signal() || tp_now_ns() >= deadline) {
            kill(-pid, SIGKILL);
            while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
            }
            return tp_intr_signal() ? ACT_INTR : ACT_LATE;
        }
        usleep(10000);
    }
    if (got < 0)
        return ACT_NORUN;
    return WIFEXITED(st) ? WEXITSTATUS(st) : ACT_NORUN;
}

static int drain_act(const char *node, const char *why, double timeout_s, char *cmd, size_t cap)
{
    char name[200], reason[300];
    snprintf(name, sizeof name, "NodeName=%s", node);
    snprintf(reason, sizeof reason, "Reason=%s", why);
    char *argv[] = {"scontrol", "update", name, "State=DRAIN", reason, NULL};
    snprintf(cmd, cap, "scontrol update %s State=DRAIN Reason=\"%s\"", name, why);
    return run_bounded(argv, timeout_s);
}

static const struct onfail actions[] = {
    {"none", none_ready, NULL},
    {"drain", drain_ready, drain_act},
};

static const struct onfail *find(const char *name)
{
    for (size_t i = 0; i < sizeof actions / sizeof actions[0]; i++)
        if (strcmp(actions[i].name, name ? name : "none") == 0)
            return &actions[i];
    return NULL;
}

int tp__validate_onfail_check(const char *name, tp_error *err)
{
    const struct onfail *a = find(name);
    if (!a) {
        char names[200] = "";
        size_t len = 0, n = sizeof actions / sizeof actions[0];
        for (size_t i = 0; i < n && len < sizeof names; i++)
            len += (size_t)snprintf(names + len, sizeof names - len, "%s%s",
                                    i == 0 ? "" : i + 1 == n ? " or " : ", ", actions[i].name);
        return tp_error_set(err, TP_EUSAGE, "--on-fail %s: %s", name, names);
    }
    return a->ready(err);
}

/* "trainpath: slow, 1.47x the fleet median in confirm (threshold 1.10x)",
 * or the verdict's own words without evidence. */
static void reason_of(const json_t *v, char *out, size_t cap)
{
    const json_t *e = json_object_get(v, "evidence");
    double val = json_number_value(json_object_get(e, "value"));
    double med = json_number_value(json_object_get(e, "median"));
    double thr = json_number_value(json_object_get(e, "threshold"));
    const char *test = json_string_value(json_object_get(e, "test"));
    if (test && med > 0)
        snprintf(out, cap, "trainpath: %s, %.2fx the fleet median in %s (threshold %.2fx)",
                 json_string_value(json_object_get(v, "status")), val / med, test, thr / med);
    else
        snprintf(out, cap, "trainpath: %.200s", json_string_value(json_object_get(v, "says")));
}

json_t *tp__validate_onfail(const struct tp__validate_ctx *c, const struct tp__validate_node *nodes,
                            int n, const json_t *result)
{
    json_t *out = json_array();
    const struct onfail *a = find(c->on_fail);
    if (!a || !a->act || !out)
        return out;
    double timeout_s = c->node_timeout_s > 0 ? c->node_timeout_s : ACT_TIMEOUT_S;
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(result, "nodes_detail"), i, v) {
        int k = (int)json_integer_value(json_object_get(v, "node"));
        const char *action = json_string_value(json_object_get(v, "action"));
        if (k < 0 || k >= n || !action || strcmp(action, "drain") != 0)
            continue;
        char why[256], cmd[700], how[120];
        reason_of(v, why, sizeof why);
        const char *name = nodes[k].sched[0] ? nodes[k].sched : nodes[k].label;
        /* after an interrupt the commands still to run are not started */
        bool skip = tp_intr_signal() != 0;
        int rc = skip ? ACT_INTR : a->act(name, why, timeout_s, cmd, sizeof cmd);
        if (skip)
            snprintf(cmd, sizeof cmd, "(%s of %s)", a->name, name);
        const char *sig = tp_intr_signal() == SIGTERM ? "SIGTERM" : "SIGINT";
        if (rc == 0)
            how[0] = 0;
        else if (rc > 0)
            snprintf(how, sizeof how, " (it failed: see its output)");
        else if (rc == ACT_LATE)
            snprintf(how, sizeof how, " (no answer within %.0f s: stopped)", timeout_s);
        else if (rc == ACT_INTR)
            snprintf(how, sizeof how,
                     skip ? " (not run: interrupted by %s)" : " (interrupted by %s: stopped)", sig);
        else
            snprintf(how, sizeof how, " (could not run it)");
        char says[1200];
        snprintf(says, sizeof says, "%s: %s%s", name, cmd, how);
        json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:i, s:s}", "node", nodes[k].label,
                                             "action", a->name, "command", cmd, "rc", rc, "says",
                                             says));
    }
    return out;
}
