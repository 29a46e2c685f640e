/* trainpath validate: the main job. Runs a profile of the other commands
 * (check, net, coll, io, step, plan) as child processes of this binary,
 * each writing its result document into one results folder, then adds them
 * to the history database and renders the HTML report there.
 *
 * With no launcher it validates this host: local ranks over loopback and
 * shared memory, storage in a temporary folder. Under mpirun, srun or
 * torchrun each process is one node of the allocation (validate_alloc.c).
 * Each test is a child with a deadline, so one that hangs or crashes is a
 * failed test with a reason, not a hung validation. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <glob.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "tp/gpu.h"
#include "tp/check.h"
#include "tp/clock.h"
#include "tp/history.h"
#include "tp/html.h"
#include "tp/judge.h"
#include "tp/report.h"
#include "tp/result.h"
#include "validate.h"

extern char **environ;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: trainpath validate [--profile quick|standard|extended] [--out DIR] [--db FILE]\n"
            "                          [--only GROUPS] [--policy FILE] [--prometheus FILE] [-q]\n"
            "                          [--launcher L] [--iface NAME] [--pairs-at-once K]\n"
            "                          [--key-file F]\n"
            "\n"
            "The main job: the node audit, point-to-point latency and bandwidth, the\n"
            "collectives, the storage path (commit latency, checkpoint), training steps and\n"
            "the plan of this machine, as one results folder: every result document, the\n"
            "history database and the HTML report (report.html).\n"
            "\n"
            "Alone it validates this host (local ranks over loopback and shared memory,\n"
            "storage in a folder under /var/tmp). Under mpirun, srun or torchrun, one\n"
            "process per node, it validates the allocation: every node alone, then every\n"
            "pair of nodes (n-1 rounds by the circle method, each node in one pair per\n"
            "round, bandwidth both ways); rank 0 gathers the documents, judges the fleet\n"
            "(outlier nodes, slow nodes and links) and writes the results folder.\n"
            "\n"
            "  --profile P   quick (under a minute here, the default), standard (a few\n"
            "                minutes), extended (longer runs and larger sizes)\n"
            "  --out DIR     the results folder (default results/validate-UTCSTAMP)\n"
            "  --db FILE     the history database (default DIR/history.sqlite)\n"
            "  --only LIST   groups to run: check,net,coll,io,step,plan (plan needs net,\n"
            "                coll and io)\n"
            "  --policy FILE the plane policy for the audit (default: node rules only)\n"
            "  --prometheus FILE  the metrics in node_exporter's textfile format\n"
            "  --launcher L  local (this host), mpi or env (default: detected)\n"
            "  --iface NAME  allocation: the interface whose IPv4 address the other nodes\n"
            "                reach (default: that of the default route)\n"
            "  --pairs-at-once K  allocation: measure at most K pairs at once (default: a\n"
            "                whole round, n/2; 1 measures every link alone)\n"
            "  --key-file F  env launcher: the pre-shared key of the rendezvous\n"
            "  -q, --quiet   no progress line, no summary\n"
            "Exit: 0 every test ran and none failed, 1 a test failed, the audit found a\n"
            "critical finding or the fleet a slow node or link, 2 bad input.\n");
}

static void add(struct vt_ctx *c, const char *name, const char *group, const char *what,
                double expect_s, ...)
{
    struct vt_test *t = &c->t[c->n++];
    *t = (struct vt_test){.name = name, .group = group, .what = what, .expect_s = expect_s};
    t->nagios = strcmp(group, "check") == 0;
    t->directional = strcmp(name, "net-bw") == 0;
    va_list ap;
    va_start(ap, expect_s);
    const char *a;
    while ((a = va_arg(ap, const char *)) && t->argc < VT_MAX_ARGS - 4)
        t->argv[t->argc++] = a;
    va_end(ap);
}

static const char *const groups[] = {"check", "net", "coll", "io", "step", "plan"};

/* Is group g in --only (a comma-separated list; NULL: every group)? */
static bool picked(const char *only, const char *g)
{
    if (!only)
        return true;
    size_t n = strlen(g);
    for (const char *p = only; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, g, n) == 0)
            return true;
        p += len + (p[len] == ',');
    }
    return false;
}

static int check_only(const char *only, tp_error *err)
{
    if (!only)
        return 0;
    if (!*only)
        return tp_error_set(err, TP_EUSAGE, "--only: empty (give check,net,coll,io,step,plan)");
    for (const char *p = only; *p;) {
        size_t len = strcspn(p, ",");
        bool known = false;
        for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++)
            known |= len == strlen(groups[i]) && strncmp(p, groups[i], len) == 0;
        if (!known)
            return tp_error_set(err, TP_EUSAGE, "--only %s: '%.*s' is not a group (%s)", only,
                                (int)len, p, "check, net, coll, io, step, plan");
        p += len + (p[len] == ',');
    }
    if (picked(only, "plan") &&
        !(picked(only, "net") && picked(only, "coll") && picked(only, "io")))
        return tp_error_set(err, TP_EUSAGE,
                            "--only %s: plan is fed by the net, coll and io results: add them",
                            only);
    return 0;
}

/* GPUs the NVIDIA driver exposes here (/dev/nvidia0, 1, ...), without
 * touching CUDA in this process: the tests run as children. */
static int gpu_count(void)
{
    glob_t g;
    if (glob("/dev/nvidia[0-9]*", 0, NULL, &g) != 0)
        return 0;
    int n = (int)g.gl_pathc;
    globfree(&g);
    return n;
}

/* The profiles: the same tests, longer and larger as the profile grows;
 * standard and extended add the loaded latency, both directions at once
 * and two more collectives. Where the GPU path is built and the driver
 * shows GPUs, NCCL's allreduce (one rank per GPU) and a GPU-compute step
 * join the coll and step groups. */
static int build(struct vt_ctx *c, tp_error *err)
{
    int q = strcmp(c->profile, "quick") == 0, s = strcmp(c->profile, "standard") == 0;
    int e = strcmp(c->profile, "extended") == 0;
    if (!q && !s && !e)
        return tp_error_set(err, TP_EUSAGE, "--profile %s: use quick, standard or extended",
                            c->profile);
    int rc = check_only(c->only, err);
    if (rc)
        return rc;
    if (c->policy)
        add(c, "check", "check", "node audit", 1, "check", "--policy", c->policy, "-q", NULL);
    else
        add(c, "check", "check", "node audit (node rules)", 1, "check", "-q", NULL);
    const char *t_lat = q ? "0.3" : s ? "5" : "20", *t_bw = q ? "0.5" : s ? "3" : "10";
    add(c, "net-lat", "net", "net lat", q ? 2 : s ? 32 : 125, "net", "lat", "PEER", "-p", "PORT",
        "KEY", "--sizes", q ? "8,4K,64K" : "8,64,1K,4K,64K,1M", "--time", t_lat, NULL);
    add(c, "net-bw", "net", "net bw", q ? 1.5 : s ? 8 : 35, "net", "bw", "PEER", "-p", "PORT",
        "KEY", "--sizes", q ? "1M" : s ? "64K,1M" : "64K,1M,4M", "--time", t_bw, NULL);
    if (!q) {
        add(c, "net-bibw", "net", "net bibw", s ? 4 : 25, "net", "bibw", "PEER", "-p", "PORT",
            "KEY", "--sizes", s ? "1M" : "64K,1M", "--time", t_bw, NULL);
        add(c, "net-loaded", "net", "net loaded latency", s ? 12 : 45, "net", "loaded", "PEER",
            "-p", "PORT", "KEY", "--streams", "2", "--time", s ? "5" : "20", NULL);
    }
    add(c, "coll-allreduce", "coll", "coll allreduce, 2 local ranks", q ? 3 : s ? 25 : 90,
        "coll", "-n", "2", "--launcher", "local", "--sizes", q ? "8-4M" : "8-64M", "--time",
        q ? "20ms" : s ? "1s" : "5s", "-q", NULL);
    if (!q) {
        add(c, "coll-allgather", "coll", "coll allgather, 2 local ranks", s ? 10 : 40, "coll",
            "-n", "2", "--launcher", "local", "--op", "allgather", "--sizes", "8-64M", "--time",
            s ? "300ms" : "2s", "-q", NULL);
        add(c, "coll-reduce-scatter", "coll", "coll reduce-scatter, 2 local ranks", s ? 10 : 40,
            "coll", "-n", "2", "--launcher", "local", "--op", "reduce-scatter", "--sizes", "8-64M",
            "--time", s ? "300ms" : "2s", "-q", NULL);
    }
    static char ngpu_s[16];
    int ngpu = tp_gpu_built() ? gpu_count() : 0;
    snprintf(ngpu_s, sizeof ngpu_s, "%d", ngpu);
    if (ngpu > 0)
        add(c, "coll-nccl", "coll", "coll allreduce through NCCL, one rank per GPU",
            q ? 3 : s ? 25 : 90, "coll", "-n", ngpu_s, "--launcher", "local", "--backend", "nccl",
            "--sizes",
            q ? "8-64M" : "8-1G", "--time", q ? "20ms" : s ? "300ms" : "2s", "-q", NULL);
    add(c, "io-commit", "io", "io commit", q ? 1 : s ? 10 : 40, "io", "commit", c->dir,
        "--count", q ? "200" : s ? "5000" : "20000", "-q", NULL);
    add(c, "io-checkpoint", "io", "io checkpoint", q ? 3 : s ? 25 : 90, "io", "checkpoint", c->dir,
        "--size", q ? "64M" : s ? "1G" : "4G", "--shards", "2", "--jobs", "2", "--repeat",
        q ? "3" : "5", "-q", NULL);
    add(c, "step", "step", "step resnet50, 2 local ranks", q ? 5 : s ? 30 : 120, "step", "-n",
        "2", "--launcher", "local", "--preset", "resnet50", "--scale", q ? "0.05" : "0.1",
        "--steps", q ? "30" : s ? "1000" : "5000", "--ckpt-every", q ? "10" : "100", "--dir",
        c->dir, "-q", NULL);
    if (ngpu > 0)
        add(c, "step-gpu", "step", "step, GPU compute and NCCL, one rank per GPU",
            q ? 5 : s ? 30 : 120, "step", "-n", ngpu_s, "--launcher", "local", "--compute", "gpu",
            "--backend", "nccl", "--preset", "llm-1.3b", "--scale", q ? "0.05" : "0.2", "--steps",
            q ? "30" : s ? "500" : "2000", "--no-io", "--verify-repro", "2", "--dir", c->dir, "-q",
            NULL);
    add(c, "plan", "plan", "plan of this machine", 1, "plan", "PLAN", NULL);
    /* --only: keep the groups picked, in order */
    int k = 0;
    for (int i = 0; i < c->n; i++)
        if (picked(c->only, c->t[i].group))
            c->t[k++] = c->t[i];
    c->n = k;
    return 0;
}

double validate_now_s(void)
{
    return (double)tp_now_ns() / 1e9;
}

double validate_deadline_s(const struct vt_test *t)
{
    return 60 + 10 * t->expect_s;
}

void validate_progress(const struct vt_ctx *c, int i, int n, const char *what, double left_s)
{
    if (c->quiet || !c->tty)
        return;
    fprintf(stderr, "\r\033[K[%d/%d] %s: %.0f s elapsed, about %.0f s left", i + 1, n, what,
            validate_now_s() - c->t0, left_s);
    fflush(stderr);
}

void validate_progress_clear(const struct vt_ctx *c)
{
    if (!c->quiet && c->tty)
        fprintf(stderr, "\r\033[K");
}

/* The environment of the children: without the variables by which a
 * launcher (mpirun, srun, torchrun) makes a process a rank, so a child's
 * own ranks are its own local group, not members of this job. */
static bool launcher_var(const char *kv)
{
    static const char *const prefix[] = {"OMPI_", "PMIX_", "PMI_", "MPI_LOCALRANKID", "HYDRA_"};
    static const char *const exact[] = {"RANK",        "WORLD_SIZE",  "LOCAL_RANK",
                                        "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                                        "GROUP_RANK",  "ROLE_RANK"};
    for (size_t i = 0; i < sizeof prefix / sizeof prefix[0]; i++)
        if (strncmp(kv, prefix[i], strlen(prefix[i])) == 0)
            return true;
    size_t n = strcspn(kv, "=");
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
        if (n == strlen(exact[i]) && strncmp(kv, exact[i], n) == 0)
            return true;
    return false;
}

static char **child_env(void)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **e = calloc(n + 1, sizeof *e);
    size_t k = 0;
    for (size_t i = 0; e && i < n; i++)
        if (!launcher_var(environ[i]))
            e[k++] = environ[i];
    return e;
}

/* Run argv (argv[0] is this binary) with stdout and stderr into log, under
 * a deadline. Returns the exit code, or -1 with why filled. */
static int run(const struct vt_ctx *c, const char *const *argv, const char *log,
               double deadline_s, char *why, size_t cap)
{
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, cap, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0)
            dup2(null, 0);
        setpgid(0, 0); /* its ranks die with it */
        execve("/proc/self/exe", (char *const *)argv, c->envp ? c->envp : environ);
        _exit(127);
    }
    double end = validate_now_s() + deadline_s;
    for (;;) {
        int st;
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) {
            if (WIFEXITED(st))
                return WEXITSTATUS(st);
            snprintf(why, cap, "killed by signal %d", WTERMSIG(st));
            return -1;
        }
        if (validate_now_s() > end) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            snprintf(why, cap, "did not finish within %.0f s", deadline_s);
            return -1;
        }
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

const char *validate_status(const struct vt_test *t)
{
    bool ok = t->rc == 0 || (t->nagios && t->rc >= 0 && t->rc <= 2);
    /* the audit's verdict on the node counts: a critical finding fails the
     * validation as a test that could not run does */
    return !ok ? "FAIL" : t->nagios && t->rc == 2 ? "FAIL" : t->nagios && t->rc == 1 ? "WARN"
                                                                                     : "PASS";
}

const char *validate_run(struct vt_ctx *c, struct vt_test *t, const char *docdir,
                         const char *peer, const char *port)
{
    const char *args[VT_MAX_ARGS + 8];
    int k = 0;
    t->why[0] = 0;
    args[k++] = "trainpath";
    for (int a = 0; a < t->argc; a++) {
        const char *w = t->argv[a];
        if (strcmp(w, "PLAN") == 0)
            args[k++] = c->plan;
        else if (strcmp(w, "PEER") == 0)
            args[k++] = peer ? peer : "127.0.0.1";
        else if (strcmp(w, "PORT") == 0)
            args[k++] = port ? port : c->port;
        else if (strcmp(w, "KEY") == 0) {
            if (c->keyfile[0]) {
                args[k++] = "--key-file";
                args[k++] = c->keyfile;
            }
        } else
            args[k++] = w;
    }
    char json[4400], log[4400];
    snprintf(json, sizeof json, "%s/%s.json", docdir, t->name);
    snprintf(log, sizeof log, "%s/%s.log", docdir, t->name);
    args[k++] = "--json";
    args[k++] = json;
    args[k] = NULL;
    double s0 = validate_now_s();
    t->rc = run(c, args, log, validate_deadline_s(t), t->why, sizeof t->why);
    t->took_s = validate_now_s() - s0;
    const char *st = validate_status(t);
    if (strcmp(st, "FAIL") == 0 && !t->why[0]) {
        if (t->nagios && t->rc == 2)
            snprintf(t->why, sizeof t->why, "a critical finding (see %s.json)", t->name);
        else
            snprintf(t->why, sizeof t->why, "exit %d (see %s.log)", t->rc, t->name);
    }
    return st;
}

int validate_start_server(struct vt_ctx *c, const char *logdir, tp_error *err)
{
    char log[4400];
    snprintf(log, sizeof log, "%s/net-serve.log", logdir);
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
    pid_t pid = fork();
    if (pid < 0)
        return tp_error_errno(err, TP_ESYS, errno, "fork");
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execve("/proc/self/exe", (char *const *)argv, c->envp ? c->envp : environ);
        _exit(127);
    }
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
    validate_stop_server(c);
    return tp_error_set(err, TP_ESYS, "net serve on %s did not start (see %s)", c->addr, log);
}

void validate_stop_server(struct vt_ctx *c)
{
    if (c->server > 0) {
        kill(c->server, SIGTERM);
        waitpid(c->server, NULL, 0);
        c->server = 0;
    }
}

int validate_write_plan(struct vt_ctx *c, int nodes, int gpus_per_node, const char *net_lat,
                        const char *net_bw, const char *coll, const char *io)
{
    snprintf(c->plan, sizeof c->plan, "%s/plan-this-machine.yaml", c->outdir);
    FILE *f = fopen(c->plan, "w");
    if (!f)
        return -1;
    fprintf(f,
            "# written by trainpath validate: the machine measured, fed with its results\n"
            "workload:\n  name: resnet50-this-machine\n  parameters: 1.28M\n"
            "  gradient_bytes_per_parameter: 4\n  samples_per_gpu: 256\n  compute_time: 5ms\n"
            "  train_samples: 1M\n"
            "cluster:\n  nodes: %d\n  gpus_per_node: %d\n  intra_node:\n"
            "    latency: {measured: %s}\n    bandwidth: {measured: %s}\n  mtbf_job: 24h\n"
            "prices:\n  gpu_hour: 1\n"
            "candidates:\n  - name: this-machine\n    network:\n"
            "      latency: {measured: %s}\n      bandwidth: {measured: %s}\n"
            "    storage:\n      write_bandwidth: {measured: %s}\n"
            "      commit_latency: {measured: %s}\n",
            nodes, gpus_per_node, coll, coll, net_lat, net_bw, io, io);
    return fclose(f) == 0 ? 0 : -1;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

/* The scratch folder and what io and step left in it (the step's dataset). */
static void rm_tree(const char *path)
{
    nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int validate_mkdirs(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(buf, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

int validate_outputs(struct vt_ctx *c, const json_t *const *docs, size_t n,
                     const json_t *const *html_docs, size_t nh, const json_t *rows,
                     const json_t *verdicts)
{
    char db[4400];
    if (c->db)
        snprintf(db, sizeof db, "%s", c->db);
    else
        snprintf(db, sizeof db, "%s/history.sqlite", c->outdir);
    char batch[64];
    snprintf(batch, sizeof batch, "validate-%lld", (long long)time(NULL));
    tp_error herr = {0};
    struct tp_history *h = NULL;
    int hrc = tp_history_open(db, &h, &herr);
    for (size_t i = 0; i < n && hrc == 0; i++)
        hrc = tp_history_add(h, docs[i], NULL, batch, &herr);
    if (h)
        tp_history_close(h);
    tp_error perr = {0};
    int prc = c->prom ? tp_prom_write(c->prom, rows, NULL, &perr) : 0;
    char html[4400];
    snprintf(html, sizeof html, "%s/report.html", c->outdir);
    tp_error rerr = {0};
    int rrc = tp_html_report(html_docs, nh, verdicts, html, &rerr);
    if (!c->quiet) {
        printf("history: %s\n", hrc ? herr.msg : db);
        printf("report: %s\n", rrc ? rerr.msg : html);
        if (c->prom)
            printf("prometheus: %s\n", prc ? perr.msg : c->prom);
    } else {
        if (hrc)
            fprintf(stderr, "trainpath: error: history: %s\n", herr.msg);
        if (rrc)
            fprintf(stderr, "trainpath: error: report: %s\n", rerr.msg);
        if (prc)
            fprintf(stderr, "trainpath: error: prometheus: %s\n", perr.msg);
    }
    return hrc || rrc || prc ? 1 : 0;
}

/* This host alone: the net tests against a server on loopback. */
static int validate_host(struct vt_ctx *c)
{
    tp_error err = {0};
    snprintf(c->addr, sizeof c->addr, "127.0.0.1");
    bool net = false;
    for (int i = 0; i < c->n; i++)
        net |= strcmp(c->t[i].group, "net") == 0;
    if (net && validate_start_server(c, c->outdir, &err))
        return cli_fail(&err);
    c->t0 = validate_now_s();
    int failed = 0;
    json_t *verdicts = json_array();
    for (int i = 0; i < c->n; i++) {
        struct vt_test *t = &c->t[i];
        double left = 0;
        for (int k = i; k < c->n; k++)
            left += c->t[k].expect_s;
        validate_progress(c, i, c->n, t->what, left);
        if (strcmp(t->group, "plan") == 0 &&
            validate_write_plan(c, 1, 2, "net-lat.json", "net-bw.json", "coll-allreduce.json",
                                "io-checkpoint.json") < 0) {
            t->rc = -1;
            snprintf(t->why, sizeof t->why, "cannot write %.160s: %s", c->plan, strerror(errno));
        }
        const char *status = t->rc < 0 ? "FAIL" : validate_run(c, t, c->outdir, NULL, NULL);
        failed += strcmp(status, "FAIL") == 0;
        json_array_append_new(verdicts,
                              json_pack("{s:s, s:s, s:s, s:f}", "name", t->name, "status", status,
                                        "summary", t->why[0] ? t->why : t->what, "seconds",
                                        t->took_s));
    }
    validate_stop_server(c);
    validate_progress_clear(c);

    /* the history and the report, from the documents written */
    json_t *docs[VT_MAX_TESTS], *rows = json_array();
    size_t nd = 0;
    for (int i = 0; i < c->n; i++) {
        char json[4400];
        snprintf(json, sizeof json, "%s/%s.json", c->outdir, c->t[i].name);
        tp_error lerr;
        if (tp_report_load(json, &docs[nd], &lerr) != 0)
            continue;
        json_t *r = tp_report_metrics(docs[nd], &lerr);
        if (r)
            json_array_extend(rows, r);
        json_decref(r);
        nd++;
    }
    if (!c->quiet) {
        printf("# trainpath validate --profile %s: %d tests in %.0f s\n", c->profile, c->n,
               validate_now_s() - c->t0);
        for (int i = 0; i < c->n; i++) {
            const struct vt_test *t = &c->t[i];
            const char *st = validate_status(t);
            printf("%-4s %-20s %6.1f s  %s\n", strcmp(st, "PASS") == 0 ? "ok" : st, t->name,
                   t->took_s, t->why[0] ? t->why : t->what);
        }
    }
    int orc = validate_outputs(c, (const json_t *const *)docs, nd, (const json_t *const *)docs, nd,
                               rows, verdicts);
    for (size_t i = 0; i < nd; i++)
        json_decref(docs[i]);
    json_decref(rows);
    json_decref(verdicts);
    return failed || orc ? 1 : 0;
}

int cmd_validate(int argc, char **argv)
{
    enum { OPT_ONLY = 256, OPT_IFACE, OPT_LAUNCHER, OPT_KEY, OPT_AT_ONCE };
    static const struct option opts[] = {
        {"profile", required_argument, NULL, 'p'},
        {"out", required_argument, NULL, 'o'},
        {"db", required_argument, NULL, 'd'},
        {"policy", required_argument, NULL, 'P'},
        {"prometheus", required_argument, NULL, 'm'},
        {"only", required_argument, NULL, OPT_ONLY},
        {"iface", required_argument, NULL, OPT_IFACE},
        {"launcher", required_argument, NULL, OPT_LAUNCHER},
        {"key-file", required_argument, NULL, OPT_KEY},
        {"pairs-at-once", required_argument, NULL, OPT_AT_ONCE},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct vt_ctx *c = calloc(1, sizeof *c);
    tp_error err = {0};
    if (!c) {
        tp_error_set(&err, TP_ENOMEM, "out of memory");
        return cli_fail(&err);
    }
    c->profile = "quick";
    int rc = 0, opt;
    opterr = 0;
    optind = 1;
    while (rc == 0 && (opt = getopt_long(argc, argv, ":qh", opts, NULL)) != -1) {
        switch (opt) {
        case 'p': c->profile = optarg; break;
        case 'o': c->out = optarg; break;
        case 'd': c->db = optarg; break;
        case 'P': c->policy = optarg; break;
        case 'm': c->prom = optarg; break;
        case OPT_ONLY: c->only = optarg; break;
        case OPT_IFACE: c->iface = optarg; break;
        case OPT_LAUNCHER: c->launcher = optarg; break;
        case OPT_KEY: c->key_file = optarg; break;
        case OPT_AT_ONCE: {
            char *end;
            long k = strtol(optarg, &end, 10);
            if (*end || end == optarg || k < 1 || k > 1000000)
                rc = tp_error_set(&err, TP_EUSAGE, "--pairs-at-once %s: give a count >= 1", optarg);
            c->pairs_at_once = (int)k;
            break;
        }
        case 'q': c->quiet = true; break;
        case 'h': usage(stdout); free(c); return 0;
        case ':': rc = tp_error_set(&err, TP_EUSAGE, "%s: needs a value", argv[optind - 1]); break;
        default:
            rc = tp_error_set(&err, TP_EUSAGE, "%s: unknown option (see trainpath validate --help)",
                              argv[optind - 1]);
        }
    }
    if (rc == 0 && optind < argc)
        rc = tp_error_set(&err, TP_EUSAGE, "%s: unexpected argument", argv[optind]);
    if (rc == 0 && c->policy && access(c->policy, R_OK) != 0)
        rc = tp_error_errno(&err, TP_EUSAGE, errno, "--policy %s", c->policy);
    if (rc == 0 && c->key_file && access(c->key_file, R_OK) != 0)
        rc = tp_error_errno(&err, TP_EUSAGE, errno, "--key-file %s", c->key_file);
    const char *launcher = rc == 0 ? cli_launcher(c->launcher) : "local";
    if (rc == 0 && strcmp(launcher, "local") != 0 && strcmp(launcher, "mpi") != 0 &&
        strcmp(launcher, "env") != 0)
        rc = tp_error_set(&err, TP_EUSAGE, "--launcher %s: local, mpi or env", launcher);
    /* the tests are built with a scratch path to come; this checks the
     * profile and --only before anything is created */
    if (rc == 0) {
        rc = build(c, &err);
        c->n = 0;
    }
    struct tp_boot *b = NULL;
    if (rc == 0 && strcmp(launcher, "local") != 0) {
        json_t *o = json_pack("{s:s, s:s?, s:s?, s:i}", "profile", c->profile, "only", c->only,
                              "policy", c->policy ? "given" : NULL, "pairs-at-once",
                              c->pairs_at_once);
        struct tp_boot_opts bo = {.backend = launcher,
                                  .key_file = c->key_file,
                                  .timeout_ns = 3600ull * 1000000000ull,
                                  .options = o};
        rc = tp_boot_init(&bo, &b, &err);
        json_decref(o);
    }
    /* the results folder: rank 0 names it, so every node writes into the
     * same one (when it is on a shared file system) */
    char stamp[64] = "";
    if (rc == 0 && !c->out) {
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(stamp, sizeof stamp, "results/validate-%Y%m%dT%H%M%SZ", &tm);
        char **all = NULL;
        if (b && (rc = tp_boot_allgather(b, stamp, &all, &err)) == 0) {
            snprintf(stamp, sizeof stamp, "%s", all[0]);
            tp_boot_free_strings(all, tp_boot_size(b));
        }
    }
    if (rc == 0)
        snprintf(c->outdir, sizeof c->outdir, "%s", c->out ? c->out : stamp);
    if (rc == 0 && validate_mkdirs(c->outdir) < 0)
        rc = tp_error_errno(&err, TP_EUSAGE, errno, "--out %s: cannot create the folder",
                            c->outdir);
    if (rc == 0 && access(c->outdir, W_OK | X_OK) != 0)
        rc = tp_error_errno(&err, TP_EUSAGE, errno, "--out %s: not writable", c->outdir);
    if (rc == 0) {
        snprintf(c->dir, sizeof c->dir, "/var/tmp/trainpath-validate.XXXXXX");
        if (!mkdtemp(c->dir)) {
            rc = tp_error_errno(&err, TP_ESYS, errno, "scratch folder under /var/tmp");
            c->dir[0] = 0;
        }
    }
    if (rc == 0 && !(c->envp = child_env()))
        rc = tp_error_set(&err, TP_ENOMEM, "out of memory");
    if (rc == 0)
        rc = build(c, &err);
    if (rc) {
        if (c->dir[0])
            rm_tree(c->dir);
        free(c->envp);
        free(c);
        tp_boot_fini(b);
        return cli_fail(&err);
    }
    c->tty = isatty(2);
    int status = b && tp_boot_size(b) > 1 ? validate_alloc(c, b) : validate_host(c);
    rm_tree(c->dir);
    free(c->envp);
    free(c);
    tp_boot_fini(b);
    return status;
}
