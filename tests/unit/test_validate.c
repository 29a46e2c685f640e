/* Tests for validate's profiles, built without running anything: each
 * profile's tests in order and a few of their arguments, --only keeping the
 * groups picked in the profile's order and refusing what it cannot run, the
 * GPU rows only where GPUs show, the audit's row with and without a policy;
 * and tp_validate_run refusing bad input before it creates anything. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tp_test.h"
#include "tp/gpu.h"
#include "tp/triage.h"
#include "tp/validate.h"

#include "../../src/validate/validate_int.h"

static struct tp_validate_list list;

/* Build profile into list, which must succeed. */
static void build(const char *profile, const char *only, const char *policy, int ngpu)
{
    tp_error err = {0};
    int rc = tp_validate_tests(profile, only, policy, ngpu, "/scratch", &list, &err);
    if (rc != 0)
        fail_msg("tp_validate_tests(%s, %s) = %d: %s", profile, only ? only : "NULL", rc, err.msg);
}

/* The names of the tests in list, space-separated, into buf. */
static const char *names(char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < list.n && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? " " : "", list.t[i].name);
    return buf;
}

static const struct tp_validate_test *find(const char *name)
{
    for (int i = 0; i < list.n; i++)
        if (strcmp(list.t[i].name, name) == 0)
            return &list.t[i];
    fail_msg("no test %s in the list", name);
    return NULL;
}

/* The word after flag in test name's arguments. */
static const char *arg(const char *name, const char *flag)
{
    const struct tp_validate_test *t = find(name);
    for (int i = 0; i + 1 < t->argc; i++)
        if (strcmp(t->argv[i], flag) == 0)
            return t->argv[i + 1];
    fail_msg("%s has no %s", name, flag);
    return NULL;
}

/* All of t's arguments, space-separated, into buf. */
static const char *line(const struct tp_validate_test *t, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < t->argc && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? " " : "", t->argv[i]);
    return buf;
}

/* Each profile's tests, in the order they run. */
static void profiles(void **state)
{
    (void)state;
    static const struct {
        const char *profile, *tests;
    } want[] = {
        {"quick", "check net-lat net-bw coll-across coll-allreduce io-commit io-checkpoint step "
                  "sdc plan counters"},
        {"standard", "check net-lat net-bw net-bibw net-loaded coll-across coll-allreduce "
                     "coll-allgather coll-reduce-scatter io-commit io-checkpoint step sdc plan "
                     "counters"},
        {"extended", "check net-lat net-bw net-bibw net-loaded coll-across coll-allreduce "
                     "coll-allgather coll-reduce-scatter io-commit io-checkpoint step sdc plan "
                     "counters"},
    };
    char buf[512];
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        build(want[i].profile, NULL, NULL, 0);
        print_message("%s: %s\n", want[i].profile, names(buf, sizeof buf));
        TP_EQ_STR(names(buf, sizeof buf), want[i].tests);
    }
}

/* A few arguments and expected seconds per profile: the same tests, longer
 * and larger as the profile grows. */
static void arguments(void **state)
{
    (void)state;
    static const struct {
        const char *profile, *test, *flag, *value;
    } want[] = {
        {"quick", "net-lat", "--sizes", "8,4K,64K"},
        {"quick", "net-lat", "--time", "0.3"},
        {"quick", "net-bw", "--time", "0.5"},
        {"quick", "coll-allreduce", "--sizes", "8-4M"},
        {"quick", "coll-allreduce", "--time", "20ms"},
        {"quick", "io-checkpoint", "--size", "64M"},
        {"quick", "io-checkpoint", "--repeat", "3"},
        {"quick", "step", "--steps", "30"},
        {"quick", "step", "--ckpt-every", "10"},
        {"standard", "net-lat", "--sizes", "8,64,1K,4K,64K,1M"},
        {"standard", "net-lat", "--time", "5"},
        {"standard", "net-bibw", "--sizes", "1M"},
        {"standard", "net-loaded", "--streams", "2"},
        {"standard", "coll-allreduce", "--sizes", "8-64M"},
        {"standard", "coll-allreduce", "--time", "1s"},
        {"standard", "coll-allgather", "--op", "allgather"},
        {"standard", "coll-allgather", "--time", "300ms"},
        {"standard", "io-commit", "--count", "5000"},
        {"standard", "io-checkpoint", "--size", "1G"},
        {"standard", "step", "--steps", "1000"},
        {"extended", "net-lat", "--time", "20"},
        {"extended", "net-bw", "--sizes", "64K,1M,4M"},
        {"extended", "net-loaded", "--time", "20"},
        {"extended", "coll-allreduce", "--time", "5s"},
        {"extended", "coll-reduce-scatter", "--time", "2s"},
        {"extended", "io-checkpoint", "--size", "4G"},
        {"extended", "step", "--steps", "5000"},
        {"quick", "sdc", "--time", "300ms"},
        {"standard", "sdc", "--time", "15s"},
        {"extended", "sdc", "--time", "1m"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        build(want[i].profile, NULL, NULL, 0);
        const char *got = arg(want[i].test, want[i].flag);
        if (strcmp(got, want[i].value) != 0)
            fail_msg("%s: %s %s = \"%s\", expected \"%s\"", want[i].profile, want[i].test,
                     want[i].flag, got, want[i].value);
    }
    static const struct {
        const char *profile, *test;
        double expect_s;
    } secs[] = {{"quick", "net-bw", 1.5},
                {"quick", "step", 5},
                {"standard", "net-lat", 32},
                {"extended", "step", 120}};
    for (size_t i = 0; i < sizeof secs / sizeof secs[0]; i++) {
        build(secs[i].profile, NULL, NULL, 0);
        TP_NEAR(find(secs[i].test)->expect_s, secs[i].expect_s, 0);
    }
}

/* The words the tests fill when they run stay; the scratch folder is in. */
static void placeholders(void **state)
{
    (void)state;
    char buf[512];
    build("quick", NULL, NULL, 0);
    TP_EQ_STR(line(find("net-lat"), buf, sizeof buf),
              "net lat PEER -p PORT KEY --sizes 8,4K,64K --time 0.3");
    TP_EQ_STR(line(find("plan"), buf, sizeof buf), "plan PLAN");
    TP_EQ_STR(line(find("counters"), buf, sizeof buf),
              "check --only CTR-ERRORS,LINK-FLAP --results DOCS -q");
    TP_EQ_STR(line(find("io-commit"), buf, sizeof buf), "io commit /scratch --count 200 -q");
    TP_EQ_STR(arg("step", "--dir"), "/scratch");
    TP_EQ_STR(line(find("coll-across"), buf, sizeof buf),
              "coll --launcher env --intra fabric --sizes 64K,1M,4M --iters 20 --warmup 3 KEY BIND -q");
    /* only the audits' exit codes are verdicts (the node's, and the
     * counters' of the tests), only bandwidth goes both ways */
    for (int i = 0; i < list.n; i++) {
        const struct tp_validate_test *t = &list.t[i];
        TP_EQ_INT(t->nagios, strcmp(t->name, "check") == 0 || strcmp(t->name, "counters") == 0);
        TP_EQ_INT(t->directional, strcmp(t->name, "net-bw") == 0);
        /* the collective across nodes: an allocation's tiers run it, over
         * the network also between ranks of one host */
        TP_EQ_INT(t->role == TP_VALIDATE_ACROSS, strcmp(t->name, "coll-across") == 0);
        /* the roles the callers ask instead of the groups: the net tests
         * between two nodes, the SDC screen judged across them, the plan
         * after the others on their documents */
        TP_EQ_INT(t->role == TP_VALIDATE_PAIR, strncmp(t->name, "net-", 4) == 0);
        TP_EQ_INT(t->role == TP_VALIDATE_SCREEN, strcmp(t->name, "sdc") == 0);
        TP_EQ_INT(t->role == TP_VALIDATE_AFTER, strcmp(t->name, "plan") == 0);
        TP_EQ_INT(t->inputs != NULL, strcmp(t->name, "plan") == 0);
        TP_EQ_INT(tp__validate_between(t), strcmp(t->group, "net") == 0);
        TP_EQ_INT(tp__validate_own(t),
                  strcmp(t->group, "net") != 0 && strcmp(t->group, "plan") != 0);
        TP_EQ_INT(t->rc, 0);
        TP_EQ_INT(t->why[0], 0);
    }
}

static void only_keeps_the_profiles_order(void **state)
{
    (void)state;
    char buf[512];
    build("quick", "io,step", NULL, 0);
    TP_EQ_STR(names(buf, sizeof buf), "io-commit io-checkpoint step");
    build("standard", "step,check", NULL, 0);
    TP_EQ_STR(names(buf, sizeof buf), "check step counters");
    build("standard", "plan,io,coll,net", NULL, 0);
    TP_EQ_STR(names(buf, sizeof buf),
              "net-lat net-bw net-bibw net-loaded coll-across coll-allreduce coll-allgather "
              "coll-reduce-scatter io-commit io-checkpoint plan");
}

static void refused(void **state)
{
    (void)state;
    static const struct {
        const char *profile, *only, *says;
    } bad[] = {
        {"quick", "plan,io", "--only plan,io: plan is fed by the net, coll and io results"},
        {"quick", "plan,net,coll", "plan is fed by the net, coll and io results: add them"},
        {"quick", "io,disk", "--only io,disk: 'disk' is not a group (check, net, coll, io, step"},
        {"quick", "io,,step", "--only io,,step: '' is not a group"},
        {"quick", "", "--only: empty (give check,net,coll,io,step,sdc,plan)"},
        {"nonsense", NULL, "--profile nonsense: use quick, standard or extended"},
        {"Quick", "io", "--profile Quick: use quick, standard or extended"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tp_error err = {0};
        list.n = 5;
        int rc = tp_validate_tests(bad[i].profile, bad[i].only, NULL, 0, "/scratch", &list, &err);
        TP_EQ_INT(rc, TP_EUSAGE);
        TP_EQ_INT(err.code, TP_EUSAGE);
        TP_HAS(err.msg, bad[i].says);
        TP_EQ_INT(list.n, 0);
    }
}

/* --sdc-minutes: the sdc test's time; refused when --only leaves the test
 * out. */
static void sdc_soak(void **state)
{
    (void)state;
    char buf[512];
    tp_error err = {0};
    build("standard", "sdc", NULL, 0);
    TP_EQ_INT(tp_validate_sdc_soak(&list, "sdc", 2.5, &err), 0);
    TP_EQ_STR(line(find("sdc"), buf, sizeof buf), "sdc --time 150s -q");
    TP_NEAR(find("sdc")->expect_s, 150, 0);
    build("quick", "io", NULL, 0);
    TP_EQ_INT(tp_validate_sdc_soak(&list, "io", 1, &err), TP_EUSAGE);
    TP_HAS(err.msg, "--sdc-minutes: the sdc test is not in --only io");
}

static void gpu_rows_only_with_gpus(void **state)
{
    (void)state;
    char buf[512];
    build("quick", NULL, NULL, 0);
    TP_EQ_INT(strstr(names(buf, sizeof buf), "nccl") || strstr(buf, "gpu"), 0);
    build("quick", NULL, NULL, 4);
    TP_EQ_STR(names(buf, sizeof buf), "check net-lat net-bw coll-across coll-allreduce coll-nccl "
                                      "io-commit io-checkpoint step step-gpu sdc sdc-gpu plan counters");
    TP_EQ_STR(arg("sdc-gpu", "--time"), "300ms");
    TP_EQ_INT(tp_validate_sdc_soak(&list, NULL, 0.5, &(tp_error){0}), 0);
    TP_EQ_STR(arg("sdc", "--time"), "30s"); /* --sdc-minutes: both screens */
    TP_EQ_STR(arg("sdc-gpu", "--time"), "30s");
    TP_EQ_STR(arg("coll-nccl", "-n"), "4");
    TP_EQ_STR(arg("coll-nccl", "--backend"), "nccl");
    TP_EQ_STR(arg("coll-nccl", "--sizes"), "8-64M");
    TP_EQ_STR(arg("step-gpu", "-n"), "4");
    TP_EQ_STR(arg("step-gpu", "--compute"), "gpu");
    TP_EQ_STR(arg("step-gpu", "--dir"), "/scratch");
    build("extended", "coll", NULL, 8);
    TP_EQ_STR(names(buf, sizeof buf),
              "coll-allreduce coll-allgather coll-reduce-scatter coll-nccl");
    TP_EQ_STR(arg("coll-nccl", "-n"), "8");
    TP_EQ_STR(arg("coll-nccl", "--sizes"), "8-1G");
    TP_EQ_STR(arg("coll-nccl", "--time"), "2s");
    /* emulated GPUs (the test double) run the GPUs' SDC screen, not NCCL's
     * tests; only a build with the GPU path has them */
    setenv("TP_GPU_EMULATE", "2", 1);
    build("quick", "sdc", NULL, 0);
    TP_EQ_STR(names(buf, sizeof buf), tp_gpu_built() ? "sdc sdc-gpu" : "sdc");
    unsetenv("TP_GPU_EMULATE");
}

static void check_row_and_policy(void **state)
{
    (void)state;
    char buf[512];
    build("quick", "check", NULL, 0);
    TP_EQ_INT(list.n, 2); /* the node's audit, and last the tests' counters */
    TP_EQ_STR(list.t[0].what, "node audit (node rules)");
    TP_EQ_STR(line(&list.t[0], buf, sizeof buf), "check -q");
    TP_EQ_STR(list.t[1].name, "counters");
    build("extended", "check", "/etc/trainpath/plane.yaml", 0);
    TP_EQ_INT(list.n, 2);
    TP_EQ_STR(list.t[0].name, "check");
    TP_EQ_STR(list.t[0].what, "node audit");
    TP_EQ_STR(line(&list.t[0], buf, sizeof buf), "check --policy /etc/trainpath/plane.yaml -q");
    TP_EQ_INT(list.t[0].nagios, 1);
}

/* Bad input is refused before the results folder or a group exists. */
static void run_refuses_bad_input(void **state)
{
    (void)state;
    char dir[256], out[320];
    if (tp_test_mkdtemp(dir, sizeof dir, "test_validate") < 0)
        fail_msg("mkdtemp: %s", strerror(errno));
    snprintf(out, sizeof out, "%s/results", dir);
    static const struct {
        struct tp_validate_opts o;
        const char *says;
    } bad[] = {
        {{.profile = "nonsense", .quiet = true}, "--profile nonsense: use quick"},
        {{.only = "io,disk", .quiet = true}, "'disk' is not a group"},
        {{.only = "plan", .quiet = true}, "plan is fed by"},
        {{.launcher = "slurm", .quiet = true}, "--launcher slurm: local, mpi or env"},
        {{.policy = "/nonexistent/plane.yaml", .quiet = true}, "--policy /nonexistent/plane.yaml"},
        {{.key_file = "/nonexistent/key", .launcher = "env", .quiet = true},
         "--key-file /nonexistent/key"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct tp_validate_opts o = bad[i].o;
        o.out = out;
        tp_error err = {0};
        TP_EQ_INT(tp_validate_run(&o, &err), TP_EUSAGE);
        TP_HAS(err.msg, bad[i].says);
        struct stat st;
        TP_EQ_INT(stat(out, &st), -1);
    }
    TP_EQ_INT(tp_test_rmtree(dir), 0);
}

/* A node the triage named slow gets the causes its tests' and its pairs'
 * counters named, as evidence and in its sentence; a node that passed,
 * and one named without any cause, are left as they were. */
static void verdicts_cite_counters(void **state)
{
    (void)state;
    json_error_t je;
    json_t *verdicts = json_loads(
        "{\"nodes_detail\": ["
        " {\"node\": 0, \"status\": \"pass\", \"says\": \"passed\"},"
        " {\"node\": 1, \"status\": \"slow\", \"says\": \"slow in pairs\"},"
        " {\"node\": 2, \"status\": \"link\", \"says\": \"a slow link\"}]}",
        0, &je);
    json_t *gathered = json_loads(
        "[{\"label\": \"a\", \"tests\": [{\"test\": \"net-bw\", \"counters\": "
        "   [\"loss: Tcp RetransSegs +9\"]}],"
        "  \"pairs\": [{\"test\": \"net-bw\", \"a\": \"a\", \"b\": \"b\", \"counters\": "
        "   [\"server's throttled: eth0 rx_prio3_pause +120\"]}]},"
        " {\"label\": \"b\", \"tests\": [{\"test\": \"coll-allreduce\", \"counters\": "
        "   [\"errors: mlx5_0/1 symbol_error +4\"]}, {\"test\": \"step\"}], \"pairs\": []},"
        " {\"label\": \"c\", \"tests\": [{\"test\": \"net-bw\"}], \"pairs\": []}]",
        0, &je);
    assert_non_null(verdicts);
    assert_non_null(gathered);
    const char *labels[] = {"a", "b", "c"};
    tp_validate_cite_counters(verdicts, gathered, labels, 3);
    json_t *d = json_object_get(verdicts, "nodes_detail");
    /* a passed: untouched, though its own test named a cause */
    assert_null(json_object_get(json_array_get(d, 0), "counters"));
    TP_EQ_STR(json_string_value(json_object_get(json_array_get(d, 0), "says")), "passed");
    /* b slow: its own test's errors and the pair it was in (a--b) */
    json_t *b = json_array_get(d, 1), *ev = json_object_get(b, "counters");
    TP_EQ_INT((int)json_array_size(ev), 2);
    TP_EQ_STR(json_string_value(json_object_get(json_array_get(ev, 0), "test")), "coll-allreduce");
    TP_EQ_STR(json_string_value(json_object_get(json_array_get(ev, 0), "cause")), "errors");
    TP_EQ_STR(json_string_value(json_object_get(json_array_get(ev, 0), "counters")),
              "mlx5_0/1 symbol_error +4");
    assert_null(json_object_get(json_array_get(ev, 0), "pair"));
    TP_EQ_STR(json_string_value(json_object_get(json_array_get(ev, 1), "pair")), "a--b");
    TP_EQ_STR(json_string_value(json_object_get(json_array_get(ev, 1), "cause")),
              "server's throttled");
    TP_EQ_STR(json_string_value(json_object_get(b, "says")),
              "slow in pairs; the counters of its tests name: errors, server's throttled");
    /* c named, but its tests' counters named nothing */
    assert_null(json_object_get(json_array_get(d, 2), "counters"));
    TP_EQ_STR(json_string_value(json_object_get(json_array_get(d, 2), "says")), "a slow link");
    json_decref(verdicts);
    json_decref(gathered);
}

/* The causes a test document's counters name on a node's own link: errors
 * and flaps on the device of the counters' path, the client's and the
 * server's; not another device's, not loss, not counters without a path. */
static void link_causes(void **state)
{
    (void)state;
    json_error_t je;
    json_t *doc = json_loads(
        "{\"results\": {"
        " \"counters\": {\"path\": \"v6\", \"causes\": ["
        "  {\"cause\": \"flap\", \"evidence\": [{\"dev\": \"v6\", \"name\": \"carrier_changes\","
        "   \"delta\": 2}, {\"dev\": \"eth9\", \"name\": \"carrier_changes\", \"delta\": 5}]},"
        "  {\"cause\": \"loss\", \"evidence\": [{\"dev\": \"Tcp\", \"name\": \"RetransSegs\","
        "   \"delta\": 40}]}]},"
        " \"peer_counters\": {\"path\": \"v3\", \"causes\": ["
        "  {\"cause\": \"errors\", \"evidence\": [{\"dev\": \"v3\", \"name\": \"rx_crc_errors\","
        "   \"delta\": 4}]}]}}}",
        0, &je);
    assert_non_null(doc);
    json_t *l = tp__validate_link_causes(doc);
    TP_EQ_INT((int)json_array_size(l), 2);
    char *s = json_dumps(l, JSON_COMPACT | JSON_SORT_KEYS);
    TP_EQ_STR(s, "[{\"cause\":\"flap\",\"delta\":2,\"dev\":\"v6\",\"name\":\"carrier_changes\","
                 "\"node\":\"\"},{\"cause\":\"errors\",\"delta\":4,\"dev\":\"v3\",\"name\":"
                 "\"rx_crc_errors\",\"node\":\"server\"}]");
    free(s);
    json_decref(l);
    /* no path (a collective's counters): no link named */
    json_object_del(json_object_get(json_object_get(doc, "results"), "counters"), "path");
    json_object_del(json_object_get(doc, "results"), "peer_counters");
    l = tp__validate_link_causes(doc);
    TP_EQ_INT((int)json_array_size(l), 0);
    json_decref(l);
    json_decref(doc);
}

/* Rank 0 hands each node's link causes to the triage: a node named slow
 * whose link the counters name (here as the server of another node's
 * pair) is a bad cable, its counters summed in its verdict; a node that
 * passed stays passed though its counters name its link; a label that is
 * no node's is passed over. */
static void link_errors_name_a_cable(void **state)
{
    (void)state;
    enum { N = 8, SLOW = 2 };
    struct tp_triage_opts o = {.tier = "screen", .seed = 3, .min_effect = 0.5};
    tp_triage *t = NULL;
    tp_error err = {0};
    TP_EQ_INT(tp_triage_new(N, NULL, &o, &t, &err), 0);
    const struct tp_triage_round *r;
    double fig[N];
    unsigned x = 1;
    while ((r = tp_triage_next(t)) != NULL) {
        for (int i = 0; i < r->ntests && i < N; i++) {
            x = x * 1103515245u + 12345u; /* a figure within 1 % of 1 */
            fig[i] = 1 + (double)(x >> 16 & 0xff) / 25600;
            for (int k = 0; k < r->tests[i].n; k++)
                if (r->tests[i].nodes[k] == SLOW)
                    fig[i] *= 3;
        }
        TP_EQ_INT(tp_triage_record(t, fig, NULL, &err), 0);
    }
    struct tp__validate_node nodes[N];
    memset(nodes, 0, sizeof nodes);
    for (int v = 0; v < N; v++)
        snprintf(nodes[v].label, sizeof nodes[v].label, "n%d", v);
    json_error_t je;
    json_t *gathered = json_loads(
        "[{\"label\": \"n1\", \"tests\": [], \"pairs\": ["
        "  {\"test\": \"net-bw\", \"a\": \"n1\", \"b\": \"n2\", \"link\": [{\"node\": \"server\","
        "   \"cause\": \"flap\", \"dev\": \"v2\", \"name\": \"carrier_changes\", \"delta\": 2}]},"
        "  {\"test\": \"net-lat\", \"a\": \"n1\", \"b\": \"n2\"}]},"
        " {\"label\": \"n2\", \"tests\": [], \"pairs\": ["
        "  {\"test\": \"net-bw\", \"a\": \"n2\", \"b\": \"n6\", \"link\": [{\"node\": \"\","
        "   \"cause\": \"flap\", \"dev\": \"v2\", \"name\": \"carrier_changes\", \"delta\": 4}]}]},"
        " {\"label\": \"n5\", \"tests\": [{\"test\": \"net-bw\", \"link\": [{\"node\": \"\","
        "   \"cause\": \"errors\", \"dev\": \"v5\", \"name\": \"rx_crc_errors\", \"delta\": 3}]}]},"
        " {\"label\": \"elsewhere\", \"tests\": [{\"test\": \"net-bw\", \"link\": [{\"node\":"
        "   \"\", \"cause\": \"errors\", \"dev\": \"v9\", \"name\": \"rx_crc_errors\","
        "   \"delta\": 1}]}]}]",
        0, &je);
    assert_non_null(gathered);
    TP_EQ_INT(tp__validate_link_errors(t, gathered, nodes, N, &err), 0);
    json_t *res = tp_triage_result(t, &err);
    assert_non_null(res);
    json_t *d = json_object_get(res, "nodes_detail"), *v;
    size_t i;
    int cables = 0;
    json_array_foreach(d, i, v) {
        int node = (int)json_integer_value(json_object_get(v, "node"));
        const char *st = json_string_value(json_object_get(v, "status"));
        if (node == SLOW) {
            TP_EQ_STR(st, "cable");
            TP_EQ_STR(json_string_value(json_object_get(v, "action")), "service");
            TP_HAS(json_string_value(json_object_get(v, "says")),
                   "its counters name the link (flap on v2: carrier_changes +6 in 2 tests)");
            cables++;
        } else if (strcmp(st, "pass") != 0) {
            fail_msg("node %d: %s, not passed", node, st);
        }
    }
    TP_EQ_INT(cables, 1);
    json_t *named = json_array_get(json_object_get(res, "named"), 0);
    TP_EQ_STR(json_string_value(json_object_get(named, "kind")), "cable");
    TP_EQ_STR(json_string_value(json_object_get(named, "counters")),
              "flap on v2: carrier_changes +6 in 2 tests");
    json_decref(res);
    json_decref(gathered);
    tp_triage_free(t);
}

/* A path that fits is made whole; one that does not is refused, never
 * cut short into another file's name. */
static void paths_whole_or_none(void **state)
{
    (void)state;
    char out[17]; /* "dir/net-lat.json" and its NUL */
    TP_EQ_INT(tp__validate_path(out, sizeof out, "%s/%s.json", "dir", "net-lat"), 0);
    TP_EQ_STR(out, "dir/net-lat.json");
    errno = 0;
    TP_EQ_INT(tp__validate_path(out, sizeof out, "%s/%s.json", "dir", "net-lat2"), -1);
    TP_EQ_INT(errno, ENAMETOOLONG);
    TP_EQ_STR(out, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(profiles),
        cmocka_unit_test(paths_whole_or_none),
        cmocka_unit_test(arguments),
        cmocka_unit_test(placeholders),
        cmocka_unit_test(only_keeps_the_profiles_order),
        cmocka_unit_test(refused),
        cmocka_unit_test(sdc_soak),
        cmocka_unit_test(gpu_rows_only_with_gpus),
        cmocka_unit_test(check_row_and_policy),
        cmocka_unit_test(run_refuses_bad_input),
        cmocka_unit_test(verdicts_cite_counters),
        cmocka_unit_test(link_causes),
        cmocka_unit_test(link_errors_name_a_cable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
