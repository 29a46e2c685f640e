/* trainpath validate: the main job. Runs a profile of the other commands
 * (check, net, coll, io, step, plan) as child processes of this binary,
 * each writing its result document into one results folder, then adds them
 * to the history database and renders the HTML report there.
 *
 * With no arguments it validates this host: local ranks over loopback and
 * shared memory, storage in a temporary folder. Each test is a child with a
 * deadline, so one that hangs or crashes is a failed test with a reason, not
 * a hung validation. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
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
#include "tp/check.h"
#include "tp/clock.h"
#include "tp/history.h"
#include "tp/html.h"
#include "tp/judge.h"
#include "tp/report.h"
#include "tp/result.h"

#define MAX_TESTS 24
#define MAX_ARGS 40

struct test {
    const char *name;   /* the document's file name, without .json */
    const char *what;   /* for the progress line */
    double expect_s;    /* roughly how long it takes here */
    int argc;
    const char *argv[MAX_ARGS];
    bool nagios;        /* exit codes 0..2 are verdicts, not failures (check) */
    /* filled when run */
    int rc;
    double took_s;
    char why[256];
};

struct plan_ctx {
    const char *profile, *out, *db, *policy, *prom;
    bool quiet, tty;
    char dir[4096];     /* the scratch folder for io and step */
    char outdir[4096];
    char port[16];
    pid_t server;
    struct test t[MAX_TESTS];
    int n;
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: trainpath validate [--profile quick|standard|extended] [--out DIR] [--db FILE]\n"
            "                          [--policy FILE] [--prometheus FILE] [-q]\n"
            "\n"
            "The main job: the node audit, point-to-point latency and bandwidth, an allreduce\n"
            "sweep, the storage path (commit latency, checkpoint), training steps and the\n"
            "plan of this machine, as one results folder: every result document, the\n"
            "history database and the HTML report (report.html).\n"
            "  --profile P   quick (under a minute here, the default), standard, extended\n"
            "  --out DIR     the results folder (default results/validate-UTCSTAMP)\n"
            "  --db FILE     the history database (default DIR/history.sqlite)\n"
            "  --policy FILE the plane policy for the audit (default: node rules only)\n"
            "  --prometheus FILE  the metrics in node_exporter's textfile format\n"
            "  -q, --quiet   no progress line, no summary\n"
            "Exit: 0 every test ran and none failed, 1 a test failed or the audit found a\n"
            "critical finding, 2 bad input.\n");
}

static void add(struct plan_ctx *c, const char *name, const char *what, double expect_s,
                bool nagios, ...)
{
    struct test *t = &c->t[c->n++];
    *t = (struct test){.name = name, .what = what, .expect_s = expect_s, .nagios = nagios};
    va_list ap;
    va_start(ap, nagios);
    const char *a;
    while ((a = va_arg(ap, const char *)) && t->argc < MAX_ARGS - 4)
        t->argv[t->argc++] = a;
    va_end(ap);
}

/* The profiles: the same tests, longer and larger as the profile grows. */
static int build(struct plan_ctx *c, tp_error *err)
{
    int q = strcmp(c->profile, "quick") == 0, s = strcmp(c->profile, "standard") == 0;
    int e = strcmp(c->profile, "extended") == 0;
    if (!q && !s && !e)
        return tp_error_set(err, TP_EUSAGE, "--profile %s: use quick, standard or extended",
                            c->profile);
    if (c->policy)
        add(c, "check", "node audit", 1, true, "check", "--policy", c->policy, "-q", NULL);
    else
        add(c, "check", "node audit (node rules)", 1, true, "check", "-q", NULL);
    const char *t_lat = q ? "0.3" : s ? "2" : "10", *t_bw = q ? "0.5" : s ? "3" : "10";
    add(c, "net-lat", "net lat (loopback)", q ? 2 : 10, false, "net", "lat", "127.0.0.1", "-p",
        c->port, "--sizes", q ? "8,4K,64K" : "8,64,1K,4K,64K,1M", "--time", t_lat, NULL);
    add(c, "net-bw", "net bw (loopback)", q ? 1.5 : 12, false, "net", "bw", "127.0.0.1", "-p",
        c->port, "--sizes", q ? "1M" : "64K,1M", "--time", t_bw, NULL);
    add(c, "coll-allreduce", "coll allreduce, 2 ranks", q ? 3 : 30, false, "coll", "-n", "2",
        "--sizes", q ? "8-4M" : "8-64M", "--time", q ? "20ms" : s ? "200ms" : "1s", "-q", NULL);
    add(c, "io-commit", "io commit", 1, false, "io", "commit", c->dir, "--count",
        q ? "200" : "2000", "-q", NULL);
    add(c, "io-checkpoint", "io checkpoint", q ? 3 : 20, false, "io", "checkpoint", c->dir,
        "--size", q ? "64M" : s ? "512M" : "2G", "--shards", "2", "--jobs", "2", "--repeat",
        q ? "3" : "5", "-q", NULL);
    add(c, "step", "step resnet50, 2 ranks", q ? 5 : 30, false, "step", "-n", "2", "--preset",
        "resnet50", "--scale", q ? "0.05" : "0.1", "--steps", q ? "30" : s ? "200" : "1000",
        "--ckpt-every", q ? "10" : "50", "--dir", c->dir, "-q", NULL);
    add(c, "plan", "plan of this machine", 1, false, "plan", "PLAN", NULL);
    return 0;
}

static double now_s(void)
{
    return (double)tp_now_ns() / 1e9;
}

static void progress(const struct plan_ctx *c, int i, double t0)
{
    if (c->quiet || !c->tty)
        return;
    double left = 0;
    for (int k = i; k < c->n; k++)
        left += c->t[k].expect_s;
    fprintf(stderr, "\r\033[K[%d/%d] %s: %.0f s elapsed, about %.0f s left", i + 1, c->n,
            c->t[i].what, now_s() - t0, left);
    fflush(stderr);
}

/* Run argv (argv[0] is this binary) with stdout and stderr into log, under
 * a deadline. Returns the exit code, or -1 with why filled. */
static int run(const char *const *argv, const char *log, double deadline_s, char *why,
               size_t cap)
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
        execv("/proc/self/exe", (char *const *)argv);
        _exit(127);
    }
    double end = now_s() + deadline_s;
    for (;;) {
        int st;
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) {
            if (WIFEXITED(st))
                return WEXITSTATUS(st);
            snprintf(why, cap, "killed by signal %d", WTERMSIG(st));
            return -1;
        }
        if (now_s() > end) {
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

/* net serve on loopback, port chosen by the kernel, read from its log. */
static int start_server(struct plan_ctx *c, tp_error *err)
{
    char log[4200];
    snprintf(log, sizeof log, "%s/net-serve.log", c->outdir);
    pid_t pid = fork();
    if (pid < 0)
        return tp_error_errno(err, TP_ESYS, errno, "fork");
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execl("/proc/self/exe", "trainpath", "net", "serve", "--bind", "127.0.0.1", "--port", "0",
              (char *)NULL);
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
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return tp_error_set(err, TP_ESYS, "net serve did not start (see %s)", log);
}

static void stop_server(struct plan_ctx *c)
{
    if (c->server > 0) {
        kill(c->server, SIGTERM);
        waitpid(c->server, NULL, 0);
        c->server = 0;
    }
}

/* This machine as a plan, fed with the results just measured. */
static int write_plan(const struct plan_ctx *c, char *path, size_t cap)
{
    snprintf(path, cap, "%s/plan-this-machine.yaml", c->outdir);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f,
            "# written by trainpath validate: this machine, fed with the results above\n"
            "workload:\n  name: resnet50-this-machine\n  parameters: 1.28M\n"
            "  gradient_bytes_per_parameter: 4\n  samples_per_gpu: 256\n  compute_time: 5ms\n"
            "  train_samples: 1M\n"
            "cluster:\n  nodes: 1\n  gpus_per_node: 2\n  intra_node:\n"
            "    latency: {measured: coll-allreduce.json}\n"
            "    bandwidth: {measured: coll-allreduce.json}\n  mtbf_job: 24h\n"
            "prices:\n  gpu_hour: 1\n"
            "candidates:\n  - name: this-machine\n    network:\n"
            "      latency: {measured: net-lat.json}\n      bandwidth: {measured: net-bw.json}\n"
            "    storage:\n      write_bandwidth: {measured: io-checkpoint.json}\n"
            "      commit_latency: {measured: io-checkpoint.json}\n");
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

static int mkdirs(const char *path)
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

int cmd_validate(int argc, char **argv)
{
    static const struct option opts[] = {
        {"profile", required_argument, NULL, 'p'}, {"out", required_argument, NULL, 'o'},
        {"db", required_argument, NULL, 'd'},      {"policy", required_argument, NULL, 'P'},
        {"prometheus", required_argument, NULL, 'm'},
        {"quiet", no_argument, NULL, 'q'},         {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct plan_ctx *c = calloc(1, sizeof *c);
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
    if (rc == 0 && c->out)
        snprintf(c->outdir, sizeof c->outdir, "%s", c->out);
    else if (rc == 0) {
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(c->outdir, sizeof c->outdir, "results/validate-%Y%m%dT%H%M%SZ", &tm);
    }
    if (rc == 0 && mkdirs(c->outdir) < 0)
        rc = tp_error_errno(&err, TP_EUSAGE, errno, "--out %s: cannot create the folder",
                            c->outdir);
    if (rc == 0) {
        snprintf(c->dir, sizeof c->dir, "/var/tmp/trainpath-validate.XXXXXX");
        if (!mkdtemp(c->dir)) {
            rc = tp_error_errno(&err, TP_ESYS, errno, "scratch folder under /var/tmp");
            c->dir[0] = 0;
        }
    }
    if (rc == 0)
        rc = build(c, &err);
    if (rc && c->dir[0])
        rm_tree(c->dir);
    if (rc) {
        free(c);
        return cli_fail(&err);
    }
    c->tty = isatty(2);
    rc = start_server(c, &err);
    if (rc) {
        rm_tree(c->dir);
        free(c);
        return cli_fail(&err);
    }

    double t0 = now_s();
    int failed = 0;
    json_t *verdicts = json_array();
    char plan_path[4200];
    for (int i = 0; i < c->n; i++) {
        struct test *t = &c->t[i];
        progress(c, i, t0);
        const char *args[MAX_ARGS + 4];
        int k = 0;
        args[k++] = "trainpath";
        for (int a = 0; a < t->argc; a++) {
            if (strcmp(t->argv[a], "PLAN") == 0) {
                if (write_plan(c, plan_path, sizeof plan_path) < 0) {
                    snprintf(t->why, sizeof t->why, "cannot write the plan file");
                    break;
                }
                args[k++] = plan_path;
            } else {
                args[k++] = t->argv[a];
            }
        }
        char json[4200], log[4200];
        snprintf(json, sizeof json, "%s/%s.json", c->outdir, t->name);
        snprintf(log, sizeof log, "%s/%s.log", c->outdir, t->name);
        args[k++] = "--json";
        args[k++] = json;
        args[k] = NULL;
        double s0 = now_s();
        t->rc = t->why[0] ? -1 : run(args, log, 60 + 10 * t->expect_s, t->why, sizeof t->why);
        t->took_s = now_s() - s0;
        bool ok = t->rc == 0 || (t->nagios && t->rc >= 0 && t->rc <= 2);
        if (!ok && !t->why[0])
            snprintf(t->why, sizeof t->why, "exit %d (see %s.log)", t->rc, t->name);
        /* the audit's verdict on the node counts: a critical finding fails
         * the validation as a test that could not run does */
        const char *status = !ok ? "FAIL" : t->nagios && t->rc == 2 ? "FAIL"
                             : t->nagios && t->rc == 1              ? "WARN"
                                                                    : "PASS";
        failed += strcmp(status, "FAIL") == 0;
        json_array_append_new(verdicts, json_pack("{s:s, s:s, s:s, s:f}", "name", t->name,
                                                  "status", status, "summary",
                                                  ok ? t->what : t->why, "seconds", t->took_s));
    }
    stop_server(c);
    if (!c->quiet && c->tty)
        fprintf(stderr, "\r\033[K");

    /* the history and the report, from the documents written */
    json_t *docs[MAX_TESTS];
    int nd = 0;
    char db[4200];
    snprintf(db, sizeof db, "%s", c->db ? c->db : "");
    if (!c->db)
        snprintf(db, sizeof db, "%s/history.sqlite", c->outdir);
    char batch[64];
    snprintf(batch, sizeof batch, "validate-%lld", (long long)time(NULL));
    tp_error herr = {0};
    int hrc = 0;
    struct tp_history *h = NULL;
    hrc = tp_history_open(db, &h, &herr);
    for (int i = 0; i < c->n; i++) {
        char json[4200];
        snprintf(json, sizeof json, "%s/%s.json", c->outdir, c->t[i].name);
        json_t *d = NULL;
        tp_error lerr;
        if (tp_report_load(json, &d, &lerr) != 0)
            continue;
        docs[nd++] = d;
        if (hrc == 0)
            hrc = tp_history_add(h, d, json, batch, &herr);
    }
    if (h)
        tp_history_close(h);
    /* the Prometheus textfile: every row of every document */
    tp_error perr = {0};
    int prc = 0;
    if (c->prom) {
        json_t *rows = json_array();
        for (int i = 0; i < nd && rows; i++) {
            json_t *r = tp_report_metrics(docs[i], &perr);
            if (r)
                json_array_extend(rows, r);
            json_decref(r);
        }
        prc = rows ? tp_prom_write(c->prom, rows, NULL, &perr)
                   : tp_error_set(&perr, TP_ENOMEM, "out of memory");
        json_decref(rows);
    }
    char html[4200];
    snprintf(html, sizeof html, "%s/report.html", c->outdir);
    tp_error rerr = {0};
    int rrc = tp_html_report((const json_t *const *)docs, (size_t)nd, verdicts, html, &rerr);
    for (int i = 0; i < nd; i++)
        json_decref(docs[i]);
    json_decref(verdicts);
    if (!c->quiet) {
        printf("# trainpath validate --profile %s: %d tests in %.0f s\n", c->profile, c->n,
               now_s() - t0);
        for (int i = 0; i < c->n; i++) {
            const struct test *t = &c->t[i];
            bool ok = t->rc == 0 || (t->nagios && t->rc >= 0 && t->rc <= 2);
            const char *word = !ok ? "FAIL" : t->nagios && t->rc == 2 ? "FAIL"
                               : t->nagios && t->rc == 1              ? "WARN"
                                                                      : "ok";
            printf("%-4s %-16s %6.1f s  %s%s\n", word, t->name, t->took_s, ok ? t->what : t->why,
                   ok && t->nagios && t->rc == 2 ? ": a critical finding (see check.json)" : "");
        }
        if (hrc)
            printf("history: %s\n", herr.msg);
        else
            printf("history: %s\n", db);
        if (rrc)
            printf("report: %s\n", rerr.msg);
        else
            printf("report: %s\n", html);
        if (c->prom)
            printf("prometheus: %s\n", prc ? perr.msg : c->prom);
    }
    rm_tree(c->dir);
    free(c);
    if (failed || hrc || rrc || prc)
        return 1;
    return 0;
}
