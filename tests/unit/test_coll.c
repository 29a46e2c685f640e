/* Every collective x algorithm x dtype x redop (and --repro exact) at a few
 * awkward sizes, checked bit for bit by the sweep itself, over N local
 * ranks. Usage: test_coll N [shm|fabric]; TP_COLL_HOST_SPLIT=k pretends
 * every k ranks share a host (two-level schedules, mixed channels);
 * TP_COLL_SHM_STORES=stream writes every receive on shared memory with
 * streaming stores (--shm-stores; the sizes here are below auto's 8 KiB). Prints
 * TAP from rank 0; exits non-zero when anything failed on any rank. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp/boot.h"
#include "tp/coll.h"

static int fails, tests;

static void report(int me, bool ok, const char *what, const tp_error *err)
{
    tests++;
    if (!ok)
        fails++;
    if (me == 0)
        printf("%s %d - %s%s%s\n", ok ? "ok" : "not ok", tests, what, err && err->msg[0] ? ": " : "",
               err ? err->msg : "");
}

int main(int argc, char **argv)
{
    bool launched = argc > 1 && strcmp(argv[1], "auto") == 0;
    int nranks = argc > 1 && !launched ? atoi(argv[1]) : 2;
    const char *intra = argc > 2 ? argv[2] : "shm";
    const char *transport = argc > 3 ? argv[3] : "tcp";
    const char *provider = argc > 4 ? argv[4] : NULL;
    tp_error err = {0};
    json_t *opts = json_object();
    struct tp_boot_opts bo = {.backend = launched ? NULL : "local", .nranks = nranks,
                              .timeout_ns = 60000000000ull,
                              .options = opts};
    struct tp_boot *b;
    if (tp_boot_init(&bo, &b, &err) < 0) {
        printf("1..1\nnot ok 1 - boot: %s\n", err.msg);
        json_decref(opts);
        return 1;
    }
    int me = tp_boot_rank(b), n = tp_boot_size(b);
    struct tp_comm_opts co = {.intra = intra, .transport = transport, .provider = provider,
                              .arena_bytes = 256u << 20,
                              .shm_stores = getenv("TP_COLL_SHM_STORES"),
                              .timeout_ns = 60000000000ull};
    struct tp_comm *c;
    if (tp_comm_init(b, &co, &c, &err) < 0) {
        if (me == 0)
            printf("1..1\nnot ok 1 - comm: %s\n", err.msg);
        tp_boot_fini(b);
        json_decref(opts);
        return 1;
    }
    static const uint64_t base[] = {1, 1000, 20000};
    int fatal = 0;
    for (int k = 0; k < TP_COLL_COUNT && !fatal; k++) {
        bool reduces = k == TP_ALLREDUCE || k == TP_REDUCE_SCATTER || k == TP_REDUCE;
        for (const char *const *al = tp_coll_algos((enum tp_coll_kind)k); *al && !fatal; al++) {
            for (int t = 0; t < TP_DTYPE_COUNT && !fatal; t++) {
                for (int op = 0; op < (reduces ? TP_REDOP_COUNT : 1) && !fatal; op++) {
                    for (int exact = 0; exact < 2 && !fatal; exact++) {
                        if (exact && (k != TP_ALLREDUCE || !tp_dtype_is_float((enum tp_dtype)t) ||
                                      (op != TP_SUM && op != TP_AVG)))
                            continue;
                        uint64_t sizes[3];
                        for (int i = 0; i < 3; i++)
                            sizes[i] = i == 0 ? tp_dtype_size((enum tp_dtype)t) * (uint64_t)n
                                              : base[i];
                        struct tp_coll_bench_opts o = {
                            .kind = (enum tp_coll_kind)k, .dtype = (enum tp_dtype)t,
                            .op = (enum tp_redop)op, .sizes = sizes, .nsizes = 3, .algo = *al,
                            .exact = exact, .root = n > 1 ? n - 1 - (t % 2) : 0,
                            .chunk_bytes = 1024, .iters = 2, .warmup = 1};
                        uint64_t wrong = 0;
                        json_t *res = me == 0 ? json_object() : NULL;
                        int rc = tp_coll_bench(c, &o, res, &wrong, &err);
                        json_decref(res);
                        char what[160];
                        snprintf(what, sizeof what, "%s %s %s %s%s n=%d %s %s",
                                 tp_coll_name(o.kind), *al, tp_dtype_name(o.dtype),
                                 tp_redop_name(o.op), exact ? " exact" : "", n, intra, transport);
                        if (rc < 0) {
                            report(me, false, what, &err);
                            fatal = 1;
                        } else if (wrong) {
                            tp_error w;
                            tp_error_set(&w, TP_ECHECK, "%llu wrong", (unsigned long long)wrong);
                            report(me, false, what, &w);
                        } else {
                            report(me, true, what, NULL);
                        }
                    }
                }
            }
        }
    }
    if (fatal)
        tp_comm_abort(c);
    tp_comm_fini(c);
    int worst = tp_boot_fini(b);
    json_decref(opts);
    if (me == 0) {
        printf("1..%d\n", tests);
        fflush(stdout);
    }
    return fails || worst ? 1 : 0;
}
