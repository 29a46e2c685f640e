/* validate's child runner: every test is a child process of this binary
 * (fork, exec /proc/self/exe) with its output in a log and a deadline, so a
 * test that hangs or crashes is a failed test with a reason, not a hung
 * validation; its ranks are in its own process group and die with it. The
 * net tests measure against a `net serve` child started and stopped here.
 * The children's environment drops the launcher's variables. What ran is
 * kept for the gather: the test, its status and its document. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tp/boot.h"
#include "tp/clock.h"
#include "tp/intr.h"
#include "tp/log.h"
#include "tp/progress.h"
#include "tp/report.h"
#include "validate_int.h"

extern char **environ;

/* In a child just forked: it ends (SIGTERM, which a trainpath child passes
 * on to its own ranks) when validate does, even when validate was killed
 * and could not stop it: no net server or test left running on the node
 * after a validation that died or was stalled out of a run. */
static void die_with_parent(pid_t parent)
{
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) /* it died before the line above */
        _exit(127);
}

double tp__validate_now_s(void)
{
    return (double)tp_now_ns() / 1e9;
}

double tp__validate_deadline_s(const struct tp_validate_test *t)
{
    return 60 + 10 * t->expect_s;
}

/* The line is tp/progress.h's, redrawn by its own thread while this one
 * waits on a test; the time left counts down from the profile's expected
 * seconds of the tests still to run. */
void tp__validate_progress(const struct tp__validate_ctx *c, int i, int n, const char *what,
                           double left_s)
{
    if (c->quiet || !c->tty)
        return;
    if (!tp_progress_on())
        tp_progress_begin(true, "validate", n, "tests", TP_PROGRESS_TICK);
    tp_progress_total(n);
    tp_progress_what("validate: %s", what);
    tp_progress_set(i);
    tp_progress_left(left_s);
}

void tp__validate_progress_clear(const struct tp__validate_ctx *c)
{
    (void)c;
    tp_progress_end();
}

/* The environment of the children: without the variables by which a
 * launcher (mpirun, srun, torchrun) makes a process a rank (boot knows
 * them), so a child's own ranks are its own local group, not members of
 * this job. */
char **tp__validate_child_env(void)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **e = calloc(n + 2, sizeof *e);
    size_t k = 0;
    for (size_t i = 0; e && i < n; i++)
        if (!tp_boot_launcher_var(environ[i]))
            e[k++] = environ[i];
    /* an interrupt validate passes on is said once, by validate and its
     * table ("FAIL net-bw interrupted by SIGINT"), not again by the test
     * whose output shares the terminal (cli_fail) */
    if (e)
        e[k++] = (char *)TP_INTR_SAID_BY_PARENT "=1";
    return e;
}

#define INTR_GRACE_S 10.0

/* Run argv (argv[0] is this binary) with stdout and stderr into log, under
 * a deadline. Returns the exit code, or -1 with why filled. */
static int run(const struct tp__validate_ctx *c, const char *const *argv, const char *log,
               double deadline_s, char *why, size_t cap)
{
    tp_error ie;
    if (tp_intr_check(&ie)) { /* no test starts after an interrupt */
        snprintf(why, cap, "not run: %.200s", ie.msg);
        return -1;
    }
    /* the child's environment: envp, and the rank variables of a
     * collective across nodes (built before fork: no malloc after it) */
    char **env = c->envp ? c->envp : environ, **joined = NULL;
    if (c->extra_env) {
        size_t ne = 0, nx = 0;
        while (env[ne])
            ne++;
        while (c->extra_env[nx])
            nx++;
        joined = calloc(ne + nx + 1, sizeof *joined);
        if (!joined) {
            snprintf(why, cap, "out of memory");
            return -1;
        }
        memcpy(joined, env, ne * sizeof *joined);
        memcpy(joined + ne, c->extra_env, nx * sizeof *joined);
        env = joined;
    }
    pid_t parent = getpid(), pid = fork();
    if (pid != 0)
        free(joined); /* the child has its copy */
    if (pid < 0) {
        snprintf(why, cap, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_APPEND | O_CLOEXEC);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0)
            dup2(null, 0);
        setpgid(0, 0); /* its ranks die with it */
        die_with_parent(parent);
        execve("/proc/self/exe", (char *const *)argv, env);
        _exit(127);
    }
    double end = tp__validate_now_s() + deadline_s;
    bool passed_on = false;
    for (;;) {
        int st;
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) {
            if (passed_on) {
                tp_intr_check(&ie);
                snprintf(why, cap, "%.200s", ie.msg);
                return -1;
            }
            if (WIFEXITED(st))
                return WEXITSTATUS(st);
            snprintf(why, cap, "killed by signal %d", WTERMSIG(st));
            return -1;
        }
        /* the child has a process group of its own, which a terminal's
         * SIGINT does not reach: pass ours on, and give it INTR_GRACE_S to
         * stop at its safe point and write its failed document */
        if (!passed_on && tp_intr_signal()) {
            passed_on = true;
            kill(-pid, tp_intr_signal());
            double grace = tp__validate_now_s() + INTR_GRACE_S;
            if (grace < end)
                end = grace;
        }
        if (tp__validate_now_s() > end) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            if (passed_on)
                snprintf(why, cap, "interrupted; did not stop within %.0f s", INTR_GRACE_S);
            else
                snprintf(why, cap, "did not finish within %.0f s", deadline_s);
            return -1;
        }
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

enum tp__validate_status tp__validate_run_test(struct tp__validate_ctx *c,
                                               struct tp_validate_test *t, const char *docdir,
                                               const char *peer, const char *port)
{
    const char *args[TP_VALIDATE_MAX_ARGS + 12];
    int k = 0;
    t->why[0] = 0;
    args[k++] = "trainpath";
    for (int a = 0; a < t->argc; a++) {
        const char *w = t->argv[a];
        if (strcmp(w, "PLAN") == 0)
            args[k++] = c->plan;
        else if (strcmp(w, "DOCS") == 0)
            args[k++] = docdir;
        else if (strcmp(w, "PEER") == 0)
            args[k++] = peer ? peer : "127.0.0.1";
        else if (strcmp(w, "PORT") == 0)
            args[k++] = port ? port : c->port;
        else if (strcmp(w, "BIND") == 0) {
            args[k++] = "--bind";
            args[k++] = c->addr[0] ? c->addr : "127.0.0.1";
        } else if (strcmp(w, "KEY") == 0) {
            if (c->keyfile[0]) {
                args[k++] = "--key-file";
                args[k++] = c->keyfile;
            }
        } else
            args[k++] = w;
    }
    char json[TP__VALIDATE_PATH_MAX], log[TP__VALIDATE_PATH_MAX], trace[TP__VALIDATE_PATH_MAX];
    tp__validate_path(json, sizeof json, "%s/%s.json", docdir, t->name);
    tp__validate_path(log, sizeof log, "%s/%s.log", docdir, t->name);
    tp__validate_path(trace, sizeof trace, "%s/%s.trace.json", docdir, t->name);
    if (c->trace && t->traced) {
        args[k++] = "--trace";
        args[k++] = trace;
    }
    args[k++] = "--json";
    args[k++] = json;
    args[k] = NULL;
    /* its document is the one this run of it writes, or none: never one
     * left at that path before (a test that is killed writes none) */
    unlink(json);
    unlink(trace);
    double s0 = tp__validate_now_s();
    t->rc = run(c, args, log, tp__validate_deadline_s(t), t->why, sizeof t->why);
    t->took_s = tp__validate_now_s() - s0;
    enum tp__validate_status st = tp__validate_status(t);
    if (st == TP__VALIDATE_FAIL && !t->why[0]) {
        if (t->nagios && t->rc == 2)
            snprintf(t->why, sizeof t->why, "a critical finding (see %s.json)", t->name);
        else
            snprintf(t->why, sizeof t->why, "exit %d (see %s.log)", t->rc, t->name);
    }
    return st;
}

int tp__validate_start_server(struct tp__validate_ctx *c, const char *logdir, tp_error *err)
{
    char log[TP__VALIDATE_PATH_MAX];
    tp__validate_path(log, sizeof log, "%s/net-serve.log", logdir);
    const char *argv[12];
    int k = 0;
    argv[k++] = "trainpath";
    argv[k++] = "net";
    argv[k++] = "serve";
    argv[k++] = "--bind";
    argv[k++] = c->addr;
    argv[k++] = "--port";
    argv[k++] = "0";
    if (c->keyfile[0]) {
        argv[k++] = "--key-file";
        argv[k++] = c->keyfile;
    }
    argv[k] = NULL;
    /* emptied here, before the port is looked for in it (never an earlier
     * server's line), and written once: the log is how the server says its
     * port, so one that cannot be written (a full disk, a read-only folder)
     * is the failure, said now, not a server that "did not start" */
    static const char head[] = "# trainpath net serve, for validate\n";
    errno = 0;
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, head, sizeof head - 1) != (ssize_t)(sizeof head - 1) ||
        fsync(fd) != 0) {
        int e = errno ? errno : ENOSPC; /* a short write: the disk filled */
        if (fd >= 0)
            close(fd);
        return tp_error_errno(err, TP_ESYS, e, "net serve's log %s", log);
    }
    pid_t parent = getpid(), pid = fork();
    if (pid < 0) {
        close(fd);
        return tp_error_errno(err, TP_ESYS, errno, "fork");
    }
    if (pid == 0) {
        die_with_parent(parent);
        dup2(fd, 1);
        dup2(fd, 2);
        execve("/proc/self/exe", (char *const *)argv, c->envp ? c->envp : environ);
        _exit(127);
    }
    close(fd);
    c->server = pid;
    for (int i = 0; i < 200; i++) {
        FILE *f = fopen(log, "r");
        char line[512];
        while (f && fgets(line, sizeof line, f)) {
            const char *p = strstr(line, " port ");
            if (strstr(line, "listening") && p && sscanf(p + 6, "%15[0-9]", c->port) == 1) {
                fclose(f);
                return 0;
            }
        }
        if (f)
            fclose(f);
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            c->server = 0;
            return tp_error_set(err, TP_ESYS, "net serve on %s exited (see %s)", c->addr, log);
        }
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    tp__validate_stop_server(c);
    return tp_error_set(err, TP_ESYS, "net serve on %s did not start (see %s)", c->addr, log);
}

void tp__validate_stop_server(struct tp__validate_ctx *c)
{
    if (c->server > 0) {
        kill(c->server, SIGTERM);
        waitpid(c->server, NULL, 0);
        c->server = 0;
    }
}

json_t *tp__validate_ran(const struct tp_validate_test *t, enum tp__validate_status status,
                         const char *docpath)
{
    json_t *doc = NULL;
    tp_error err;
    if (tp_report_load(docpath, &doc, &err) != 0) {
        doc = NULL;
        if (access(docpath, F_OK) == 0) /* written, but refused: say so */
            tp_log(TP_LOG_WARN, "%s: left out of the fleet's documents: %s", docpath, err.msg);
    }
    json_t *causes = doc ? tp__validate_counter_causes(doc) : json_array();
    json_t *e = json_pack("{s:s, s:s, s:s, s:f, s:o}", "test", t->name, "status",
                          tp__validate_status_name(status), "summary",
                          t->why[0] ? t->why : t->what, "seconds", t->took_s, "doc",
                          doc ? doc : json_null());
    if (e && json_array_size(causes))
        json_object_set(e, "counters", causes);
    json_decref(causes);
    json_t *link = doc ? tp__validate_link_causes(doc) : NULL; /* for the triage: cables.c */
    if (e && json_array_size(link))
        json_object_set(e, "link", link);
    json_decref(link);
    return e;
}

json_t *tp__validate_measure_pair(struct tp__validate_ctx *c, struct tp_validate_test *t,
                            const struct tp__validate_node *nodes, int a, int b, const char *sub)
{
    char dir[TP__VALIDATE_PATH_MAX], doc[TP__VALIDATE_PATH_MAX];
    tp__validate_path(dir, sizeof dir, "%s/pairs/%s--%s%s%s", c->outdir, nodes[a].label, nodes[b].label,
             sub ? "/" : "", sub ? sub : "");
    tp__validate_mkdirs(dir);
    enum tp__validate_status st = tp__validate_run_test(c, t, dir, nodes[b].addr, nodes[b].port);
    tp__validate_path(doc, sizeof doc, "%s/%s.json", dir, t->name);
    json_t *o = tp__validate_ran(t, st, doc);
    json_object_set_new(o, "a", json_string(nodes[a].label));
    json_object_set_new(o, "b", json_string(nodes[b].label));
    return o;
}
