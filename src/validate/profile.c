/* validate's profiles: the tests of quick, standard and extended, each a
 * command line of this binary, and --only's choice of groups among them. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "tp/validate.h"

static void add(struct tp_validate_list *c, const char *name, const char *group, const char *what,
                double expect_s, ...)
{
    struct tp_validate_test *t = &c->t[c->n++];
    *t = (struct tp_validate_test){.name = name, .group = group, .what = what, .expect_s = expect_s};
    t->nagios = strcmp(group, "check") == 0;
    t->directional = strcmp(name, "net-bw") == 0;
    va_list ap;
    va_start(ap, expect_s);
    const char *a;
    while ((a = va_arg(ap, const char *)) && t->argc < TP_VALIDATE_MAX_ARGS - 4)
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

/* The profiles: the same tests, longer and larger as the profile grows;
 * standard and extended add the loaded latency, both directions at once
 * and two more collectives. Where the GPU path is built and the driver
 * shows GPUs, NCCL's allreduce (one rank per GPU) and a GPU-compute step
 * join the coll and step groups. */
int tp_validate_tests(const char *profile, const char *only, const char *policy, int ngpu,
                      const char *scratch, struct tp_validate_list *c, tp_error *err)
{
    c->n = 0;
    int q = strcmp(profile, "quick") == 0, s = strcmp(profile, "standard") == 0;
    int e = strcmp(profile, "extended") == 0;
    if (!q && !s && !e)
        return tp_error_set(err, TP_EUSAGE, "--profile %s: use quick, standard or extended",
                            profile);
    int rc = check_only(only, err);
    if (rc)
        return rc;
    if (policy)
        add(c, "check", "check", "node audit", 1, "check", "--policy", policy, "-q", NULL);
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
    const char *ngpu_s = c->ngpu;
    snprintf(c->ngpu, sizeof c->ngpu, "%d", ngpu);
    if (ngpu > 0)
        add(c, "coll-nccl", "coll", "coll allreduce through NCCL, one rank per GPU",
            q ? 3 : s ? 25 : 90, "coll", "-n", ngpu_s, "--launcher", "local", "--backend", "nccl",
            "--sizes",
            q ? "8-64M" : "8-1G", "--time", q ? "20ms" : s ? "300ms" : "2s", "-q", NULL);
    add(c, "io-commit", "io", "io commit", q ? 1 : s ? 10 : 40, "io", "commit", scratch,
        "--count", q ? "200" : s ? "5000" : "20000", "-q", NULL);
    add(c, "io-checkpoint", "io", "io checkpoint", q ? 3 : s ? 25 : 90, "io", "checkpoint", scratch,
        "--size", q ? "64M" : s ? "1G" : "4G", "--shards", "2", "--jobs", "2", "--repeat",
        q ? "3" : "5", "-q", NULL);
    add(c, "step", "step", "step resnet50, 2 local ranks", q ? 5 : s ? 30 : 120, "step", "-n",
        "2", "--launcher", "local", "--preset", "resnet50", "--scale", q ? "0.05" : "0.1",
        "--steps", q ? "30" : s ? "1000" : "5000", "--ckpt-every", q ? "10" : "100", "--dir",
        scratch, "-q", NULL);
    if (ngpu > 0)
        add(c, "step-gpu", "step", "step, GPU compute and NCCL, one rank per GPU",
            q ? 5 : s ? 30 : 120, "step", "-n", ngpu_s, "--launcher", "local", "--compute", "gpu",
            "--backend", "nccl", "--preset", "llm-1.3b", "--scale", q ? "0.05" : "0.2", "--steps",
            q ? "30" : s ? "500" : "2000", "--no-io", "--verify-repro", "2", "--dir", scratch, "-q",
            NULL);
    add(c, "plan", "plan", "plan of this machine", 1, "plan", "PLAN", NULL);
    /* --only: keep the groups picked, in order */
    int k = 0;
    for (int i = 0; i < c->n; i++)
        if (picked(only, c->t[i].group))
            c->t[k++] = c->t[i];
    c->n = k;
    return 0;
}
