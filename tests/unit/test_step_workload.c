/* step --workload's loader (src/step/workload.c): version 1 (DDP's
 * buckets, tests/fixtures/workload/ddp-mlp.json) still read with its
 * meaning, version 2 (tests/fixtures/workload/fsdp-v2.json: every
 * collective of a step, two layouts, two ranks) read into the same shape,
 * the figures the replay and plan take from it, and each bad key named
 * with the file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "tp_test.h"
#include "tp/step.h"

#define V1 TP_SOURCE_ROOT "/tests/fixtures/workload/ddp-mlp.json"
#define V2 TP_SOURCE_ROOT "/tests/fixtures/workload/fsdp-v2.json"

static char dir[256];

static int setup(void **state)
{
    (void)state;
    return tp_test_mkdtemp(dir, sizeof dir, "tp_step_workload");
}

static int teardown(void **state)
{
    (void)state;
    return tp_test_rmtree(dir);
}

static struct tp_step_workload *load(const char *path)
{
    tp_error err = {0};
    struct tp_step_workload *w = NULL;
    int rc = tp_step_workload_load(path, &w, &err);
    if (rc)
        fail_msg("%s: %s", path, err.msg);
    return w;
}

static json_int_t at(const json_t *a, size_t i)
{
    return json_integer_value(json_array_get(a, i));
}

/* Version 1: one layout of allreduces in DDP's order, one rank, each
 * readiness moved by the forward; the slices are the old ones (the forward
 * and bucket 0's readiness, then the time between readinesses) and the rest
 * of the backward after the last. */
static void v1_read(void **state)
{
    (void)state;
    struct tp_step_workload *w = load(V1);
    json_t *d = json_load_file(V1, 0, NULL);
    assert_non_null(d);
    const json_t *bk = json_object_get(d, "buckets"), *st = json_object_get(d, "steps");
    const json_t *fw = json_object_get(st, "forward_ns"), *bw = json_object_get(st, "backward_ns");
    TP_EQ_INT(w->version, 1);
    TP_EQ_U64(w->nlayouts, 1);
    TP_EQ_U64(w->nranks, 1);
    TP_EQ_U64(w->nsteps, json_array_size(fw));
    TP_EQ_STR(w->source, "pytorch-ddp");
    const struct tp_step_wl_layout *L = tp_step_workload_layout(w, 5);
    TP_EQ_U64(L->n, json_array_size(bk));
    uint64_t sum = 0;
    for (size_t i = 0; i < L->n; i++) {
        const json_t *b = json_array_get(bk, i);
        TP_EQ_STR(L->coll[i].name, "allreduce");
        TP_EQ_INT(L->coll[i].kind, TP_ALLREDUCE);
        TP_EQ_U64(L->coll[i].bytes, json_integer_value(json_object_get(b, "bytes")));
        TP_EQ_U64(L->coll[i].replay_bytes, L->coll[i].bytes);
        TP_EQ_STR(L->coll[i].dtype, "float32");
        TP_EQ_INT(L->coll[i].group, -1);
        sum += L->coll[i].bytes;
        for (size_t s = 0; s < w->nsteps; s++) {
            TP_EQ_U64(w->ranks[0].ready_ns[w->at[s] + i],
                      at(fw, s) + at(json_object_get(b, "ready_ns"), s));
            TP_EQ_U64(w->ranks[0].duration_ns[w->at[s] + i],
                      at(json_object_get(b, "allreduce_ns"), s));
        }
    }
    TP_EQ_U64(tp_step_workload_grad_bytes(w), sum);
    assert_null(w->ranks[0].start_ns);
    assert_non_null(w->ranks[0].step_ns);
    for (size_t s = 0; s < w->nsteps; s++) {
        const json_t *r0 = json_object_get(json_array_get(bk, 0), "ready_ns");
        TP_EQ_U64(tp_step_workload_slice_ns(w, 0, s, 0), at(fw, s) + at(r0, s));
        uint64_t all = 0;
        for (size_t i = 0; i <= L->n; i++)
            all += tp_step_workload_slice_ns(w, 7, s + w->nsteps, i); /* any rank, step mod n */
        TP_EQ_U64(all, at(fw, s) + at(bw, s));
        const json_t *last = json_object_get(json_array_get(bk, L->n - 1), "ready_ns");
        TP_EQ_U64(tp_step_workload_slice_ns(w, 0, s, L->n), at(bw, s) - at(last, s));
    }
    double ov = tp_step_workload_overlap(w);
    assert_true(ov > 0 && ov < 1);
    assert_true(w->params > 0 && w->samples_per_rank == 32 && w->sample_bytes == 264);
    json_decref(d);
    tp_step_workload_free(w);
}

/* Version 2: the layouts, each step's layout, every rank's own times. */
static void v2_read(void **state)
{
    (void)state;
    struct tp_step_workload *w = load(V2);
    TP_EQ_INT(w->version, 2);
    TP_EQ_STR(w->source, "pytorch-fsdp");
    TP_EQ_U64(w->nlayouts, 2);
    TP_EQ_U64(w->nsteps, 4);
    TP_EQ_U64(w->nranks, 2);
    TP_EQ_U64(w->ngroups, 1);
    TP_EQ_U64(w->layouts[0].n, 4);
    TP_EQ_U64(w->layouts[1].n, 6);
    static const char *const kinds1[] = {"allgather",      "allgather", "allgather",
                                         "reduce-scatter", "allgather", "reduce-scatter"};
    static const uint64_t bytes1[] = {4194240, 8388480, 8388480, 16776960, 4194240, 8388480};
    for (size_t i = 0; i < 6; i++) {
        TP_EQ_STR(w->layouts[1].coll[i].name, kinds1[i]);
        TP_EQ_U64(w->layouts[1].coll[i].bytes, bytes1[i]);
        TP_EQ_INT(w->layouts[1].coll[i].group, 0);
        TP_EQ_STR(w->layouts[1].coll[i].dtype, i == 3 || i == 5 ? "float32" : "bfloat16");
    }
    TP_EQ_INT(w->layouts[1].coll[3].kind, TP_REDUCE_SCATTER);
    TP_EQ_STR(w->layouts[1].coll[0].phase, "forward");
    TP_EQ_STR(w->layouts[1].coll[3].phase, "backward");
    for (size_t s = 0; s < 4; s++) {
        TP_EQ_U64(w->layout[s], s % 2);
        TP_EQ_U64(w->at[s + 1] - w->at[s], s % 2 ? 6 : 4);
        assert_true(tp_step_workload_layout(w, s + 8) == &w->layouts[s % 2]);
    }
    TP_EQ_INT(w->ranks[0].rank, 0);
    TP_EQ_INT(w->ranks[1].rank, 1);
    /* rank 1 computes 3x slower: its slices are its own */
    for (size_t s = 0; s < 4; s++)
        for (size_t k = 0; k < 2; k++) {
            const struct tp_step_wl_rank *q = &w->ranks[k];
            uint64_t all = 0;
            for (size_t i = 0; i <= w->at[s + 1] - w->at[s]; i++)
                all += tp_step_workload_slice_ns(w, k, s, i);
            TP_EQ_U64(all, q->forward_ns[s] + q->backward_ns[s]);
            TP_EQ_U64(tp_step_workload_slice_ns(w, k + 2, s, 0), q->ready_ns[w->at[s]]);
        }
    assert_true(w->ranks[1].forward_ns[0] == 3 * w->ranks[0].forward_ns[0]);
    /* the gradient: the larger layout's reduce-scatters (the other has none) */
    TP_EQ_U64(tp_step_workload_grad_bytes(w), 16776960 + 8388480);
    uint64_t med = tp_step_workload_compute_ns(w);
    assert_true(med >= w->ranks[0].forward_ns[0] + w->ranks[0].backward_ns[0] - 1000000);
    double ov = tp_step_workload_overlap(w);
    assert_true(ov > 0 && ov < 1);
    TP_EQ_U64(w->params, 2097120 + 4194240);
    TP_EQ_U64(w->samples_per_rank, 8);
    assert_non_null(w->ranks[0].start_ns);
    assert_non_null(w->ranks[1].duration_ns);
    tp_step_workload_free(w);
}

/* ---- changing the fixtures: "a.0.b" names a key or an index ---- */

static json_t *walk(json_t *d, const char *path, char *last, size_t cap)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    char *dot = strrchr(buf, '.');
    snprintf(last, cap, "%.60s", dot ? dot + 1 : buf);
    if (!dot)
        return d;
    *dot = 0;
    json_t *at_ = d;
    for (char *tok = strtok(buf, "."); tok && at_; tok = strtok(NULL, "."))
        at_ = json_is_array(at_) ? json_array_get(at_, strtoul(tok, NULL, 10))
                                 : json_object_get(at_, tok);
    if (!at_)
        fail_msg("%s: no such place in the fixture", path);
    return at_;
}

/* the fixture from with path set to value (JSON text), removed ("-") or
 * its last element dropped ("pop"), written to DIR/name */
static char *mutate(const char *from, const char *path, const char *value, const char *name,
                    char *out, size_t cap)
{
    json_t *d = json_load_file(from, 0, NULL);
    assert_non_null(d);
    char key[64];
    json_t *p = walk(d, path, key, sizeof key);
    json_t *target =
        json_is_array(p) ? json_array_get(p, strtoul(key, NULL, 10)) : json_object_get(p, key);
    if (strcmp(value, "pop") == 0) {
        assert_true(json_is_array(target));
        json_array_remove(target, json_array_size(target) - 1);
    } else if (strcmp(value, "-") == 0) {
        if (json_is_array(p))
            json_array_remove(p, strtoul(key, NULL, 10));
        else
            json_object_del(p, key);
    } else {
        json_t *v = json_loads(value, JSON_DECODE_ANY, NULL);
        assert_non_null(v);
        if (json_is_array(p))
            json_array_set_new(p, strtoul(key, NULL, 10), v);
        else
            json_object_set_new(p, key, v);
    }
    char *text = json_dumps(d, JSON_COMPACT);
    tp_test_write(dir, name, text, out, cap);
    free(text);
    json_decref(d);
    return out;
}

static const struct {
    const char *from, *path, *value, *says;
} bad[] = {
    {V2, "layouts.0.3.kind", "\"allgatherx\"",
     "layouts[0][3].kind: \"allgatherx\" is not a collective (allreduce, reduce-scatter, "
     "allgather, broadcast, reduce, alltoall, sendrecv, send, recv, barrier)"},
    {V2, "layouts.1.2.kind", "7", "layouts[1][2].kind: must name a collective (allreduce"},
    {V2, "layouts.1.2.bytes", "\"1M\"", "layouts[1][2].bytes: must be a whole number"},
    {V2, "layouts.1.2.bytes", "-4", "layouts[1][2].bytes: out of range"},
    {V2, "layouts.0.0.dtype", "\"float33\"",
     "layouts[0][0].dtype: \"float33\" is not an element type"},
    {V2, "layouts.0.0.dtype", "16", "layouts[0][0].dtype: must name an element type (float32, "},
    {V2, "layouts.0.1.group", "3",
     "layouts[0][1].group: must be an index into groups (0 to 0), or -1"},
    {V2, "layouts.0.1.phase", "\"sideways\"",
     "layouts[0][1].phase: must be forward, backward, optimizer or other"},
    {V2, "layouts.1.4", "[]",
     "layouts[1][4]: must be an object (kind, bytes, dtype, group, phase)"},
    {V2, "layouts", "[]", "layouts: must be a list of 1 to 100000 layouts"},
    {V2, "groups.0", "1", "groups[0]: must be an object"},
    {V2, "groups.0.size", "0", "groups[0].size: out of range"},
    {V2, "steps.layout.2", "5", "steps.layout[2]: must be an index into layouts (0 to 1)"},
    {V2, "steps.layout", "-", "steps.layout: must be a list of 1 to 100000 layout indexes"},
    {V2, "steps", "-", "steps: must be an object (layout: each step's layout)"},
    {V2, "ranks", "-", "ranks: must be a list of 1 to 65536 ranks' times"},
    {V2, "ranks.1", "\"fast\"", "ranks[1]: must be an object of the rank's times"},
    {V2, "ranks.1.rank", "5", "ranks[1].rank: 5, but recorded.ranks[1] is 1"},
    {V2, "recorded.ranks", "[0]", "recorded.ranks: must list the rank of each entry of ranks (2)"},
    {V2, "ranks.0.forward_ns", "pop",
     "ranks[0].forward_ns: must have one duration per recorded step (as steps.layout)"},
    {V2, "ranks.1.optimizer_ns.3", "1.5",
     "ranks[1].optimizer_ns: every duration must be a whole number of ns >= 0"},
    {V2, "ranks.1.ready_ns.1", "pop",
     "ranks[1].ready_ns[1]: must have one time per collective of the step's layout (layouts[1]: "
     "6)"},
    {V2, "ranks.1.ready_ns", "pop",
     "ranks[1].ready_ns: must be a list of one list per recorded step (4, as steps.layout)"},
    {V2, "ranks.0.ready_ns", "-",
     "ranks[0].ready_ns: must be a list of one list per recorded step"},
    {V2, "ranks.0.duration_ns.0.0", "-1",
     "ranks[0].duration_ns[0][0]: must be a whole number of ns >= 0 (or null: no work found)"},
    {V2, "ranks.1.ready_ns.2.1", "null",
     "ranks[1].ready_ns[2][1]: must be a whole number of ns >= 0"},
    {V2, "ranks.0.start_ns.2", "7", "ranks[0].start_ns[2]: must have one time per collective"},
    {V2, "batch.sample_bytes", "-", "batch.sample_bytes: must be a whole number"},
    {V2, "trainpath_workload", "3",
     "trainpath_workload: must be 1 or 2 (the versions this "
     "trainpath reads)"},
    {V1, "buckets.1.bytes", "\"1M\"", "buckets[1].bytes: must be a whole number"},
    {V1, "buckets.0.ready_ns", "pop",
     "buckets[0].ready_ns: must have one duration per recorded step (as steps.forward_ns)"},
    {V1, "buckets.2.dtype", "\"float33\"", "buckets[2].dtype: not an element type"},
    {V1, "buckets.1.allreduce_ns", "-", "buckets[1].: allreduce_ns: in every bucket or in none"},
    {V1, "steps.optimizer_ns", "-", "steps.optimizer_ns: must be a list of 1 to 100000"},
    {V1, "buckets", "[]", "buckets: must be a list of 1 to 1024 buckets"},
};

static void bad_keys(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char path[400], name[32], want[600];
        snprintf(name, sizeof name, "bad%zu.json", i);
        mutate(bad[i].from, bad[i].path, bad[i].value, name, path, sizeof path);
        tp_error err = {0};
        struct tp_step_workload *w = NULL;
        int rc = tp_step_workload_load(path, &w, &err);
        if (rc != TP_EUSAGE)
            fail_msg("%s = %s: rc %d (%s), expected TP_EUSAGE", bad[i].path, bad[i].value, rc,
                     err.msg);
        assert_null(w);
        snprintf(want, sizeof want, "--workload %s: %s", path, bad[i].says);
        TP_HAS(err.msg, want);
    }
}

/* send and recv replay as coll's sendrecv of the message, barrier as a
 * 4-byte allreduce; coll's own spellings are taken (reduce_scatter); the
 * skew, a dtype and other informative keys are not required; a work span
 * not found is null */
static void own_kinds(void **state)
{
    (void)state;
    const char *text =
        "{\"trainpath_workload\": 2, \"layouts\": [[{\"kind\": \"send\", \"bytes\": 1024}, "
        "{\"kind\": \"recv\", \"bytes\": 2048, \"dtype\": \"float16\", "
        "\"group\": -1}, {\"kind\": \"barrier\", \"bytes\": 0, \"dtype\": \"uint8\"}, "
        "{\"kind\": \"reduce_scatter\", \"bytes\": 64, \"dtype\": \"float8_e4m3fn\"}, "
        "{\"kind\": \"alltoall\", \"bytes\": 96, \"dtype\": \"int64\"}]], "
        "\"steps\": {\"layout\": [0]}, \"ranks\": [{\"rank\": 3, \"forward_ns\": [10], "
        "\"backward_ns\": [20], \"optimizer_ns\": [5], \"ready_ns\": [[1, 2, 40, 3, 25]], "
        "\"start_ns\": [[null, 2, 40, null, 25]], \"duration_ns\": [[null, 5, 5, 40, 5]]}], "
        "\"batch\": {\"samples_per_rank\": 1, \"sample_bytes\": 4}}";
    char path[400];
    tp_test_write(dir, "own.json", text, path, sizeof path);
    struct tp_step_workload *w = load(path);
    const struct tp_step_wl_coll *c = w->layouts[0].coll;
    TP_EQ_STR(c[0].name, "send");
    assert_null(c[0].dtype); /* the file does not say */
    TP_EQ_INT(c[0].kind, TP_SENDRECV);
    TP_EQ_U64(c[0].replay_bytes, 1024);
    TP_EQ_STR(c[1].name, "recv");
    TP_EQ_INT(c[1].kind, TP_SENDRECV);
    TP_EQ_U64(c[1].replay_bytes, 2048);
    TP_EQ_INT(c[1].group, -1);
    TP_EQ_STR(c[2].name, "barrier");
    TP_EQ_INT(c[2].kind, TP_ALLREDUCE);
    assert_true(c[0].mapped && c[1].mapped && c[2].mapped && !c[3].mapped && !c[4].mapped);
    TP_EQ_U64(c[2].bytes, 0);
    TP_EQ_U64(c[2].replay_bytes, 4);
    TP_EQ_STR(c[3].name, "reduce-scatter");
    TP_EQ_STR(c[3].dtype, "float8e4m3");
    TP_EQ_STR(c[4].phase, "other");
    TP_EQ_INT(w->ranks[0].rank, 3);
    TP_EQ_U64(w->ngroups, 0);
    TP_EQ_STR(w->source, "unknown");
    /* readinesses out of order and past the compute's end: each slice from
     * the latest earlier one, clamped to forward + backward (30) */
    static const uint64_t slices[] = {1, 1, 28, 0, 0, 0};
    for (size_t i = 0; i < 6; i++)
        TP_EQ_U64(tp_step_workload_slice_ns(w, 0, 0, i), slices[i]);
    /* the one gradient collective (the reduce-scatter): its work from its
     * readiness (no start recorded), 3 to 43 ns, 27 of its 40 ns before the
     * compute's end */
    TP_EQ_U64(w->ranks[0].start_ns[0], TP_STEP_WL_NONE);
    TP_NEAR(tp_step_workload_overlap(w), 27.0 / 40.0, 1e-12);
    TP_EQ_U64(tp_step_workload_grad_bytes(w), 64);
    tp_step_workload_free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(v1_read),
        cmocka_unit_test(v2_read),
        cmocka_unit_test(bad_keys),
        cmocka_unit_test(own_kinds),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
