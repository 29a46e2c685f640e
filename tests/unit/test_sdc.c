/* The SDC screen (include/tp/sdc.h): the chain is deterministic (the same
 * seed gives the same hashes, with either exact-sum kernel; another seed
 * others), one flipped bit changes the hash from its step on and not
 * before, the checkpoint rule is one rule both ways, chains survive their
 * document, the majority names the odd member of three with its step,
 * nobody when all agree, and no one but "no majority" when two disagree;
 * the test hook's variable is read as documented; the command's threads
 * name the one that diverged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tp_test.h"
#include "tp/blockfx.h"
#include "tp/sdc.h"
#include "tp/triage.h"

static void chain(uint64_t seed, uint64_t steps, uint64_t fault_step, uint32_t bit,
                  struct tp_sdc_chain *c)
{
    struct tp_sdc_fault f = {.step = fault_step, .bit = bit, .thread = -1, .gpu = -1};
    tp_error err = {0};
    int rc = tp_sdc_chain_run(seed, steps, fault_step ? &f : NULL, 0, c, &err);
    if (rc)
        fail_msg("tp_sdc_chain_run(%llu, %llu) = %d: %s", (unsigned long long)seed,
                 (unsigned long long)steps, rc, err.msg);
}

/* The first checkpoint where a and b differ (their count when none). */
static size_t first_diff(const struct tp_sdc_chain *a, const struct tp_sdc_chain *b)
{
    size_t i = 0;
    while (i < a->n && i < b->n && a->hash[i] == b->hash[i])
        i++;
    return i;
}

static void deterministic(void **state)
{
    (void)state;
    struct tp_sdc_chain a, b, c;
    chain(1, 300, 0, 0, &a);
    chain(1, 300, 0, 0, &b);
    chain(2, 300, 0, 0, &c);
    TP_EQ_U64(a.steps, 300);
    TP_EQ_U64(a.n, 256 + 22); /* every step to 256, then 258 .. 300 by 2 */
    TP_EQ_U64(a.step[a.n - 1], 300);
    TP_EQ_U64(first_diff(&a, &b), a.n);
    assert_memory_equal(a.final, b.final, 32);
    TP_EQ_U64(first_diff(&a, &c), 0); /* another seed: another chain from step 1 */
    assert_memory_not_equal(a.final, c.final, 32);
    /* the exact sums are the same bits whichever kernel the CPU runs */
    const char *was = tp_bfx_kernel();
    for (const char *const *k = tp_bfx_kernels(); *k; k++) {
        if (!tp_bfx_use(*k))
            continue;
        tp_sdc_chain_free(&b);
        chain(1, 300, 0, 0, &b);
        print_message("kernel %s: final %02x%02x...\n", *k, b.final[0], b.final[1]);
        TP_EQ_U64(first_diff(&a, &b), a.n);
    }
    assert_true(tp_bfx_use(was));
    tp_sdc_chain_free(&a);
    tp_sdc_chain_free(&b);
    tp_sdc_chain_free(&c);
}

/* A bit flipped before step s: every checkpoint before s the same, every
 * one from s on different (the hash chains them). */
static void flipped_bit(void **state)
{
    (void)state;
    struct tp_sdc_chain clean, bad;
    chain(7, 300, 0, 0, &clean);
    static const struct {
        uint64_t step;
        uint32_t bit;
    } cases[] = {{1, 22}, {40, 22}, {256, 31}, {270, 30}, {300, 4000 * 32 + 22}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        chain(7, 300, cases[k].step, cases[k].bit, &bad);
        size_t d = first_diff(&clean, &bad);
        assert_true(d < clean.n);
        TP_EQ_U64(clean.step[d], cases[k].step);
        for (size_t i = d; i < clean.n; i++)
            if (clean.hash[i] == bad.hash[i])
                fail_msg("step %llu: the same hash after the flip at %llu",
                         (unsigned long long)clean.step[i], (unsigned long long)cases[k].step);
        assert_memory_not_equal(clean.final, bad.final, 32);
        tp_sdc_chain_free(&bad);
    }
    tp_sdc_chain_free(&clean);
}

static void checkpoints(void **state)
{
    (void)state;
    TP_EQ_U64(tp_sdc_checkpoint_step(0), 1);
    TP_EQ_U64(tp_sdc_checkpoint_step(255), 256);
    TP_EQ_U64(tp_sdc_checkpoint_step(256), 258);
    TP_EQ_U64(tp_sdc_checkpoint_step(511), 768);
    TP_EQ_U64(tp_sdc_checkpoint_step(512), 772);
    /* the rule both ways, over the first levels */
    size_t i = 0;
    for (uint64_t s = 1; s <= 20000; s++) {
        bool is = tp_sdc_is_checkpoint(s);
        if (is)
            TP_EQ_U64(tp_sdc_checkpoint_step(i++), s);
        else if (tp_sdc_checkpoint_step(i) == s)
            fail_msg("step %llu is checkpoint %zu but not a checkpoint", (unsigned long long)s, i);
    }
    TP_EQ_U64(i, 256 * 6 + (20000 - 16128) / 64); /* levels 0-5 whole, level 6 by 64 */
}

static void document(void **state)
{
    (void)state;
    struct tp_sdc_chain a, b;
    tp_error err = {0};
    chain(3, 270, 0, 0, &a);
    json_t *j = tp_sdc_chain_json(&a);
    assert_non_null(j);
    TP_EQ_INT(tp_sdc_chain_parse(j, &b, &err), 0);
    TP_EQ_U64(b.n, a.n);
    TP_EQ_U64(b.steps, 270);
    TP_EQ_U64(first_diff(&a, &b), a.n);
    assert_memory_equal(a.final, b.final, 32);
    tp_sdc_chain_free(&b);
    /* a hash that is not hex, a hash too few: refused, said */
    char *hex = strdup(json_string_value(json_object_get(j, "hashes")));
    memcpy(hex + 3 * 16, "not-hex-not-hex!", 16);
    json_object_set_new(j, "hashes", json_string(hex));
    TP_EQ_INT(tp_sdc_chain_parse(j, &b, &err), TP_EPROTO);
    TP_HAS(err.msg, "hash 3 is not 16 hex digits");
    hex[strlen(hex) - 16] = 0;
    json_object_set_new(j, "hashes", json_string(hex));
    TP_EQ_INT(tp_sdc_chain_parse(j, &b, &err), TP_EPROTO);
    TP_HAS(err.msg, "are not the checkpoints of 270 steps");
    free(hex);
    json_decref(j);
    tp_sdc_chain_free(&a);
}

/* Judge members whose chains are c[0..n). */
static void judge(const struct tp_sdc_chain *c, int n, struct tp_sdc_verdict *v)
{
    tp_error err = {0};
    struct tp_sdc_judge *j = tp_sdc_judge_new(n);
    assert_non_null(j);
    for (int m = 0; m < n; m++)
        if (c[m].n)
            TP_EQ_INT(tp_sdc_judge_add(j, m, &c[m], &err), 0);
    TP_EQ_INT(tp_sdc_judge_result(j, v, &err), 0);
    tp_sdc_judge_free(j);
}

/* Member m of v: its call, the step it diverged at (0: none) and its words. */
static void member(const struct tp_sdc_verdict *v, int m, enum tp_sdc_call call, uint64_t step,
                   uint64_t after, const char *says)
{
    char got[300];
    TP_EQ_INT(v->of[m].call, call);
    TP_EQ_U64(v->of[m].step, step);
    TP_EQ_U64(v->of[m].after, after);
    tp_sdc_says(v, m, "nodes", got, sizeof got);
    TP_EQ_STR(got, says);
}

static void majority(void **state)
{
    (void)state;
    struct tp_sdc_chain c[3];
    struct tp_sdc_verdict v;
    static const char agree2[] = "agrees with the majority (2 of 3 nodes)";
    /* three alike: nobody named */
    for (int m = 0; m < 3; m++)
        chain(1, 200, 0, 0, &c[m]);
    judge(c, 3, &v);
    TP_EQ_INT(v.majority, 3);
    TP_EQ_INT(v.odd, 0);
    TP_EQ_U64(v.compared, 200);
    for (int m = 0; m < 3; m++)
        member(&v, m, TP_SDC_AGREE, 0, 0, "agrees with the majority (3 of 3 nodes)");
    tp_sdc_verdict_free(&v);
    /* one bit of member 1's data at step 40: it alone is named, at 40 */
    tp_sdc_chain_free(&c[1]);
    chain(1, 200, 40, 22, &c[1]);
    judge(c, 3, &v);
    TP_EQ_INT(v.majority, 2);
    TP_EQ_INT(v.odd, 1);
    member(&v, 0, TP_SDC_AGREE, 0, 0, agree2);
    member(&v, 1, TP_SDC_ODD, 40, 39,
           "result hash diverged from the majority (2 of 3 nodes) at step 40");
    member(&v, 2, TP_SDC_AGREE, 0, 0, agree2);
    tp_sdc_verdict_free(&v);
    /* two that disagree: no majority, both undecided, nobody blamed */
    judge(c, 2, &v);
    TP_EQ_INT(v.majority, 0);
    TP_EQ_INT(v.odd, 2);
    for (int m = 0; m < 2; m++)
        member(&v, m, TP_SDC_UNDECIDED, 40, 39, "the 2 nodes disagree from step 40; no majority");
    tp_sdc_verdict_free(&v);
    /* past the exact steps a checkpoint bounds the step: between them */
    for (int m = 0; m < 3; m++) {
        tp_sdc_chain_free(&c[m]);
        chain(1, 300, m == 2 ? 261 : 0, 22, &c[m]);
    }
    judge(c, 3, &v);
    member(&v, 2, TP_SDC_ODD, 262, 260,
           "result hash diverged from the majority (2 of 3 nodes) between steps 261 and 262");
    tp_sdc_verdict_free(&v);
    for (int m = 0; m < 3; m++)
        tp_sdc_chain_free(&c[m]);
}

/* Soaks by time end at different steps: compared on the steps all have;
 * a member without a chain is absent, not counted. */
static void lengths(void **state)
{
    (void)state;
    struct tp_sdc_chain c[4] = {{0}};
    struct tp_sdc_verdict v;
    chain(5, 100, 0, 0, &c[0]);
    chain(5, 280, 0, 0, &c[1]);
    chain(5, 280, 200, 22, &c[2]); /* past the shortest: not compared */
    judge(c, 4, &v);
    TP_EQ_U64(v.compared, 100);
    TP_EQ_INT(v.present, 3);
    TP_EQ_INT(v.odd, 0);
    TP_EQ_INT(v.majority, 3);
    TP_EQ_INT(v.of[3].call, TP_SDC_ABSENT);
    tp_sdc_verdict_free(&v);
    tp_sdc_chain_free(&c[2]);
    chain(5, 280, 50, 22, &c[2]);
    judge(c, 4, &v);
    TP_EQ_INT(v.of[2].call, TP_SDC_ODD);
    TP_EQ_U64(v.of[2].step, 50);
    TP_EQ_INT(v.majority, 2);
    tp_sdc_verdict_free(&v);
    for (int m = 0; m < 3; m++)
        tp_sdc_chain_free(&c[m]);
}

static void hook(void **state)
{
    (void)state;
    struct tp_sdc_fault f;
    tp_error err = {0};
    unsetenv("TP_FAULT_SDC");
    TP_EQ_INT(tp_sdc_fault_env(0, &f, &err), 0);
    TP_EQ_U64(f.step, 0);
    setenv("TP_FAULT_SDC", "1:40", 1);
    TP_EQ_INT(tp_sdc_fault_env(0, &f, &err), 0);
    TP_EQ_U64(f.step, 0); /* another rank's */
    TP_EQ_INT(tp_sdc_fault_env(1, &f, &err), 0);
    TP_EQ_U64(f.step, 40);
    TP_EQ_INT(f.bit, 22);
    TP_EQ_INT(f.thread, -1);
    TP_EQ_INT(f.gpu, -1); /* every thread and every GPU */
    setenv("TP_FAULT_SDC", "0:7:5:2", 1);
    TP_EQ_INT(tp_sdc_fault_env(0, &f, &err), 0);
    TP_EQ_U64(f.step, 7);
    TP_EQ_INT(f.bit, 5);
    TP_EQ_INT(f.thread, 2);
    TP_EQ_INT(f.gpu, -2); /* a thread's: no GPU's */
    setenv("TP_FAULT_SDC", "0:7:5:g3", 1);
    TP_EQ_INT(tp_sdc_fault_env(0, &f, &err), 0);
    TP_EQ_INT(f.thread, -2);
    TP_EQ_INT(f.gpu, 3);
    static const char *const bad[] = {"junk",      "1",      "1:0",       "1:5:131072",
                                      "1:5:1:1024", "1:5x",  "1:5:1:2:3", ":5",
                                      "1:5:g1",    "1:5:1:g", "1:5:1:gx", "1:5:1:g1024"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("TP_FAULT_SDC", bad[i], 1);
        if (tp_sdc_fault_env(1, &f, &err) != TP_EUSAGE)
            fail_msg("TP_FAULT_SDC=%s was taken", bad[i]);
        TP_HAS(err.msg, "TP_FAULT_SDC=");
    }
    unsetenv("TP_FAULT_SDC");
}

/* The command's threads: the one whose data the hook flipped is named,
 * with its step, in the error and the document. */
static void threads(void **state)
{
    (void)state;
    char dir[] = "/tmp/tp-sdc.XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/sdc.json", dir);
    struct tp_sdc_opts o = {.steps = 60, .threads = 3, .seed = 1, .json = path, .quiet = true};
    tp_error err = {0};
    TP_EQ_INT(tp_sdc_run(&o, &err), 0);
    setenv("TP_FAULT_SDC", "0:33:22:1", 1);
    TP_EQ_INT(tp_sdc_run(&o, &err), TP_ECHECK);
    unsetenv("TP_FAULT_SDC");
    TP_HAS(err.msg, "thread 1 ");
    TP_HAS(err.msg, "(2 of 3 threads) at step 33");
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    assert_non_null(doc);
    const json_t *res = json_object_get(doc, "results");
    TP_EQ_INT(json_integer_value(json_object_get(res, "diverged")), 1);
    TP_EQ_INT(json_integer_value(json_object_get(json_object_get(res, "first"), "step")), 33);
    TP_EQ_INT(json_is_false(json_object_get(json_object_get(doc, "status"), "ok")), 1);
    json_decref(doc);
    unlink(path);
    rmdir(dir);
    /* the hook's thread must be one of the run's */
    setenv("TP_FAULT_SDC", "0:5:22:7", 1);
    o.json = NULL;
    TP_EQ_INT(tp_sdc_run(&o, &err), TP_EUSAGE);
    unsetenv("TP_FAULT_SDC");
}

/* The verdicts the screen gives validate: one table with the triage's. */
static void verdicts(void **state)
{
    (void)state;
    json_t *v = tp_triage_verdict_as("corrupt", 1, "local", 1, json_pack("{s:s}", "test", "sdc"),
                                     "sdc: ...");
    assert_non_null(v);
    TP_EQ_STR(json_string_value(json_object_get(v, "cause")), "hardware");
    TP_EQ_STR(json_string_value(json_object_get(v, "action")), "drain");
    json_decref(v);
    v = tp_triage_verdict_as("undecided", 0, "local", 1, NULL, "sdc: ...");
    TP_EQ_STR(json_string_value(json_object_get(v, "action")), "rerun");
    assert_true(json_is_null(json_object_get(v, "evidence")));
    json_decref(v);
    assert_null(tp_triage_verdict_as("frob", 0, "local", 1, NULL, ""));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(deterministic), cmocka_unit_test(flipped_bit),
        cmocka_unit_test(checkpoints),   cmocka_unit_test(document),
        cmocka_unit_test(majority),      cmocka_unit_test(lengths),
        cmocka_unit_test(hook),          cmocka_unit_test(threads),
        cmocka_unit_test(verdicts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
