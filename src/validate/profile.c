/* validate's profiles as a table: one row per test, and in each row a cell
 * per profile (quick, standard, extended) with the test's expected seconds
 * and its arguments, or none where the profile leaves it out. The same
 * tests grow longer and larger with the profile; standard and extended add
 * the loaded latency, both directions at once and two more collectives.
 * Every profile ends with the SDC screen (its group sdc) before the plan,
 * and the counters of the tests judged by check last.
 * Where the GPU path is built and the driver shows GPUs, NCCL's allreduce
 * and a GPU-compute step (one rank per GPU) join the coll and step groups.
 * Building a profile is one loop over the rows; --only keeps the groups it
 * picks, in the table's order. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "tp/gpu.h"
#include "tp/validate.h"
#include "validate_int.h"

enum { QUICK, STANDARD, EXTENDED, NPROFILES };

static const char *const profiles[NPROFILES] = {"quick", "standard", "extended"};

/* A row's test in one profile: args are words split at spaces (NULL: not
 * in this profile). Besides the placeholders filled when a test runs (PEER,
 * PORT, KEY, BIND, PLAN, DOCS: the folder of this node's documents), three
 * are filled here: DIR (the scratch folder), NGPU (the GPUs here) and
 * POLICY (the --policy file). */
struct cell {
    double expect_s;
    const char *args;
};

/* Where a row joins a profile: always, with or without a --policy, or
 * where GPUs show. */
enum join { ALWAYS, WITH_POLICY, WITHOUT_POLICY, WITH_GPUS, WITH_GPU_COMPUTE };

/* A row's group is what --only picks; its role what the validation does
 * with it (the callers ask the role, never the group or the name). */
struct row {
    const char *name, *group, *what;
    enum join join;
    enum tp_validate_role role;
    const struct tp_validate_inputs *inputs; /* TP_VALIDATE_AFTER's */
    bool nagios;      /* exit codes 0..2 are the audit's verdicts */
    bool directional; /* between nodes: measured both ways */
    bool traced;      /* the command writes a timeline with --trace (coll, step) */
    struct cell in[NPROFILES];
};

/* The plan's: the documents of the net, coll and io rows below. */
static const struct tp_validate_inputs plan_inputs = {
    .net_lat = "net-lat", .net_bw = "net-bw", .coll = "coll-allreduce", .io = "io-checkpoint"};

static const struct row rows[] = {
    {"check", "check", "node audit", WITH_POLICY, .nagios = true,
     .in = {{1, "check --policy POLICY -q"},
            {1, "check --policy POLICY -q"},
            {1, "check --policy POLICY -q"}}},
    {"check", "check", "node audit (node rules)", WITHOUT_POLICY, .nagios = true,
     .in = {{1, "check -q"}, {1, "check -q"}, {1, "check -q"}}},
    {"net-lat", "net", "net lat", ALWAYS, .role = TP_VALIDATE_PAIR,
     .in = {{2, "net lat PEER -p PORT KEY --sizes 8,4K,64K --time 0.3"},
            {32, "net lat PEER -p PORT KEY --sizes 8,64,1K,4K,64K,1M --time 5"},
            {125, "net lat PEER -p PORT KEY --sizes 8,64,1K,4K,64K,1M --time 20"}}},
    {"net-bw", "net", "net bw", ALWAYS, .role = TP_VALIDATE_PAIR, .directional = true,
     .in = {{1.5, "net bw PEER -p PORT KEY --sizes 1M --time 0.5"},
            {8, "net bw PEER -p PORT KEY --sizes 64K,1M --time 3"},
            {35, "net bw PEER -p PORT KEY --sizes 64K,1M,4M --time 10"}}},
    {"net-bibw", "net", "net bibw", ALWAYS, .role = TP_VALIDATE_PAIR,
     .in = {{0, NULL},
            {4, "net bibw PEER -p PORT KEY --sizes 1M --time 3"},
            {25, "net bibw PEER -p PORT KEY --sizes 64K,1M --time 10"}}},
    {"net-loaded", "net", "net loaded latency", ALWAYS, .role = TP_VALIDATE_PAIR,
     .in = {{0, NULL},
            {12, "net loaded PEER -p PORT KEY --streams 2 --time 5"},
            {45, "net loaded PEER -p PORT KEY --streams 2 --time 20"}}},
    /* the tiers' gang and groups: one allreduce across a group of nodes,
     * each node a rank of it (env launcher: MASTER_ADDR is the group's
     * first node; the validation fills the rank variables and BIND). The
     * figure is the largest size's: 4 MiB at least, since a 1 MiB allreduce
     * is latency-bound, and where groups share cores (the test bed) a rank
     * waiting out its peer's time slice made it 0.6 or 5-9 ms at random;
     * 4 MiB, three groups at once, stayed within 2 % in the runs measured. */
    {"coll-across", "net", "allreduce across nodes", ALWAYS, .role = TP_VALIDATE_ACROSS,
     .traced = true,
     .in = {{2, "coll --launcher env --intra fabric --sizes 64K,1M,4M --iters 20 --warmup 3 KEY BIND -q"},
            {6, "coll --launcher env --intra fabric --sizes 64K,1M,16M --time 500ms KEY BIND -q"},
            {20, "coll --launcher env --intra fabric --sizes 64K,1M,16M,64M --time 2s KEY BIND -q"}}},
    {"coll-allreduce", "coll", "coll allreduce, 2 local ranks", ALWAYS, .traced = true,
     .in = {{3, "coll -n 2 --launcher local --sizes 8-4M --time 20ms -q"},
            {25, "coll -n 2 --launcher local --sizes 8-64M --time 1s -q"},
            {90, "coll -n 2 --launcher local --sizes 8-64M --time 5s -q"}}},
    {"coll-allgather", "coll", "coll allgather, 2 local ranks", ALWAYS, .traced = true,
     .in = {{0, NULL},
            {10, "coll -n 2 --launcher local --op allgather --sizes 8-64M --time 300ms -q"},
            {40, "coll -n 2 --launcher local --op allgather --sizes 8-64M --time 2s -q"}}},
    {"coll-reduce-scatter", "coll", "coll reduce-scatter, 2 local ranks", ALWAYS, .traced = true,
     .in = {{0, NULL},
            {10, "coll -n 2 --launcher local --op reduce-scatter --sizes 8-64M --time 300ms -q"},
            {40, "coll -n 2 --launcher local --op reduce-scatter --sizes 8-64M --time 2s -q"}}},
    {"coll-nccl", "coll", "coll allreduce through NCCL, one rank per GPU", WITH_GPUS, .traced = true,
     .in = {{3, "coll -n NGPU --launcher local --backend nccl --sizes 8-64M --time 20ms -q"},
            {25, "coll -n NGPU --launcher local --backend nccl --sizes 8-1G --time 300ms -q"},
            {90, "coll -n NGPU --launcher local --backend nccl --sizes 8-1G --time 2s -q"}}},
    {"io-commit", "io", "io commit", ALWAYS,
     .in = {{1, "io commit DIR --count 200 -q"},
            {10, "io commit DIR --count 5000 -q"},
            {40, "io commit DIR --count 20000 -q"}}},
    {"io-checkpoint", "io", "io checkpoint", ALWAYS,
     .in = {{3, "io checkpoint DIR --size 64M --shards 2 --jobs 2 --repeat 3 -q"},
            {25, "io checkpoint DIR --size 1G --shards 2 --jobs 2 --repeat 5 -q"},
            {90, "io checkpoint DIR --size 4G --shards 2 --jobs 2 --repeat 5 -q"}}},
    {"step", "step", "step resnet50, 2 local ranks", ALWAYS, .traced = true,
     .in = {{5, "step -n 2 --launcher local --preset resnet50 --scale 0.05 --steps 30 "
                "--ckpt-every 10 --dir DIR -q"},
            {30, "step -n 2 --launcher local --preset resnet50 --scale 0.1 --steps 1000 "
                 "--ckpt-every 100 --dir DIR -q"},
            {120, "step -n 2 --launcher local --preset resnet50 --scale 0.1 --steps 5000 "
                  "--ckpt-every 100 --dir DIR -q"}}},
    {"step-gpu", "step", "step, GPU compute and NCCL, one rank per GPU", WITH_GPUS, .traced = true,
     .in = {{5, "step -n NGPU --launcher local --compute gpu --backend nccl --preset llm-1.3b "
                "--scale 0.05 --steps 30 --no-io --verify-repro 2 --dir DIR -q"},
            {30, "step -n NGPU --launcher local --compute gpu --backend nccl --preset llm-1.3b "
                 "--scale 0.2 --steps 500 --no-io --verify-repro 2 --dir DIR -q"},
            {120, "step -n NGPU --launcher local --compute gpu --backend nccl --preset llm-1.3b "
                  "--scale 0.2 --steps 2000 --no-io --verify-repro 2 --dir DIR -q"}}},
    /* the SDC screen: every core of the node on the same seeded chain
     * for a while (about 0.1 ms a step on a core here; nodes of different
     * speeds are compared on the steps they all ran); rank 0 compares the
     * nodes' chains (src/validate/sdc.c); --sdc-minutes sets the time */
    {"sdc", "sdc", "SDC screen, the same chain on every core", ALWAYS, .role = TP_VALIDATE_SCREEN,
     .in = {{0.3, "sdc --time 300ms -q"}, {15, "sdc --time 15s -q"}, {60, "sdc --time 1m -q"}}},
    /* and on every GPU (cuBLAS): one chain a GPU, the node's GPUs judged
     * against each other, each kind's chain against the other nodes' of
     * that kind (one core's chain beside it, already screened above) */
    {"sdc-gpu", "sdc", "SDC screen on every GPU (cuBLAS)", WITH_GPU_COMPUTE,
     .role = TP_VALIDATE_SCREEN_GPU,
     .in = {{0.3, "sdc --gpu --threads 1 --time 300ms -q"},
            {15, "sdc --gpu --threads 1 --time 15s -q"},
            {60, "sdc --gpu --threads 1 --time 1m -q"}}},
    {"plan", "plan", "plan of this machine", ALWAYS, .role = TP_VALIDATE_AFTER,
     .inputs = &plan_inputs,
     .in = {{1, "plan PLAN"}, {1, "plan PLAN"}, {1, "plan PLAN"}}},
    /* last, the counters the tests above recorded (results.counters of the
     * documents in this node's folder) under check's counter rules: an
     * error counter that moved during a test is critical, a carrier that
     * changed a warning (docs/counters.md) */
    {"counters", "check", "counters during the tests (CTR-ERRORS, LINK-FLAP)", ALWAYS,
     .nagios = true,
     .in = {{0.3, "check --only CTR-ERRORS,LINK-FLAP --results DOCS -q"},
            {0.3, "check --only CTR-ERRORS,LINK-FLAP --results DOCS -q"},
            {0.3, "check --only CTR-ERRORS,LINK-FLAP --results DOCS -q"}}},
};

static const char *const groups[] = {"check", "net", "coll", "io", "step", "sdc", "plan"};

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
        return tp_error_set(err, TP_EUSAGE, "--only: empty (give check,net,coll,io,step,sdc,plan)");
    for (const char *p = only; *p;) {
        size_t len = strcspn(p, ",");
        bool known = false;
        for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++)
            known |= len == strlen(groups[i]) && strncmp(p, groups[i], len) == 0;
        if (!known)
            return tp_error_set(err, TP_EUSAGE, "--only %s: '%.*s' is not a group (%s)", only,
                                (int)len, p, "check, net, coll, io, step, sdc, plan");
        p += len + (p[len] == ',');
    }
    if (picked(only, "plan") &&
        !(picked(only, "net") && picked(only, "coll") && picked(only, "io")))
        return tp_error_set(err, TP_EUSAGE,
                            "--only %s: plan is fed by the net, coll and io results: add them",
                            only);
    return 0;
}

static bool joins(const struct row *r, const char *policy, int ngpu)
{
    switch (r->join) {
    case WITH_POLICY: return policy != NULL;
    case WITHOUT_POLICY: return policy == NULL;
    case WITH_GPUS: return ngpu > 0;
    case WITH_GPU_COMPUTE: return ngpu > 0 || tp_gpu_emulated_devices() > 0;
    case ALWAYS: break;
    }
    return true;
}

/* Split args into t's argv: the words are copied into out->words from
 * *used on, the build-time placeholders filled. Returns 0, or -1 when the
 * list has no room left (the table outgrew the list). */
static int split(struct tp_validate_list *out, size_t *used, struct tp_validate_test *t,
                 const char *args, const char *policy, const char *scratch)
{
    size_t len = strlen(args);
    if (*used + len + 1 > sizeof out->words)
        return -1;
    char *w = out->words + *used;
    memcpy(w, args, len + 1);
    *used += len + 1;
    for (char *save = NULL, *word = strtok_r(w, " ", &save); word;
         word = strtok_r(NULL, " ", &save)) {
        if (t->argc >= TP_VALIDATE_MAX_ARGS - 4) /* room for KEY's two words */
            return -1;
        t->argv[t->argc++] = strcmp(word, "DIR") == 0      ? scratch
                             : strcmp(word, "NGPU") == 0   ? out->ngpu
                             : strcmp(word, "POLICY") == 0 ? policy
                                                           : word;
    }
    return 0;
}

int tp_validate_tests(const char *profile, const char *only, const char *policy, int ngpu,
                      const char *scratch, struct tp_validate_list *out, tp_error *err)
{
    out->n = 0;
    int p = 0;
    while (p < NPROFILES && strcmp(profile, profiles[p]) != 0)
        p++;
    if (p == NPROFILES)
        return tp_error_set(err, TP_EUSAGE, "--profile %s: use quick, standard or extended",
                            profile);
    int rc = check_only(only, err);
    if (rc)
        return rc;
    snprintf(out->ngpu, sizeof out->ngpu, "%d", ngpu);
    size_t used = 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const struct row *r = &rows[i];
        const struct cell *in = &r->in[p];
        if (!in->args || !joins(r, policy, ngpu) || !picked(only, r->group))
            continue;
        struct tp_validate_test *t = out->n < TP_VALIDATE_MAX_TESTS ? &out->t[out->n] : NULL;
        if (t)
            *t = (struct tp_validate_test){.name = r->name,
                                           .what = r->what,
                                           .group = r->group,
                                           .expect_s = in->expect_s,
                                           .role = r->role,
                                           .inputs = r->inputs,
                                           .nagios = r->nagios,
                                           .directional = r->directional,
                                           .traced = r->traced};
        if (!t || split(out, &used, t, in->args, policy, scratch) < 0) {
            out->n = 0;
            return tp_error_set(err, TP_ENOMEM,
                                "--profile %s: more tests or words than a list holds", profile);
        }
        out->n++;
    }
    return 0;
}

bool tp__validate_between(const struct tp_validate_test *t)
{
    return t->role == TP_VALIDATE_PAIR || t->role == TP_VALIDATE_ACROSS;
}

bool tp__validate_own(const struct tp_validate_test *t)
{
    return !tp__validate_between(t) && t->role != TP_VALIDATE_AFTER;
}

bool tp__validate_any_between(const struct tp__validate_ctx *c)
{
    for (int i = 0; i < c->tests.n; i++)
        if (tp__validate_between(&c->tests.t[i]))
            return true;
    return false;
}

const struct tp_validate_test *tp__validate_test_of(const struct tp__validate_ctx *c,
                                                    const char *name)
{
    for (int i = 0; name && i < c->tests.n; i++)
        if (strcmp(c->tests.t[i].name, name) == 0)
            return &c->tests.t[i];
    return NULL;
}

bool tp__validate_test_named(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (strlen(rows[i].name) == len && strncmp(rows[i].name, name, len) == 0)
            return true;
    return false;
}

int tp_validate_sdc_soak(struct tp_validate_list *l, const char *only, double minutes,
                         tp_error *err)
{
    bool found = false; /* sdc, and sdc-gpu where it runs */
    snprintf(l->sdc_time, sizeof l->sdc_time, "%gs", minutes * 60);
    for (int i = 0; i < l->n; i++) {
        struct tp_validate_test *t = &l->t[i];
        bool screen = t->role == TP_VALIDATE_SCREEN || t->role == TP_VALIDATE_SCREEN_GPU;
        for (int a = 0; screen && a + 1 < t->argc; a++)
            if (strcmp(t->argv[a], "--time") == 0) {
                t->argv[a + 1] = l->sdc_time;
                t->expect_s = minutes * 60;
                found = true;
            }
    }
    if (found)
        return 0;
    return tp_error_set(err, TP_EUSAGE, "--sdc-minutes: the sdc test is not in --only %s",
                        only ? only : "");
}
