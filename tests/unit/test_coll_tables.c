/* coll's tables without a communicator: the kinds (names, busbw factors,
 * nccl-tests' size convention for n = 1..8, the size-based algorithm
 * choice), the backends and --backend's list, the arena sizing, and the
 * checks of a `trainpath coll` job that run before any rank starts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "tp_test.h"
#include "tp/coll.h"
#include "tp/fixed.h"
#include "tp/group.h"

static void kind_names(void **state)
{
    (void)state;
    static const char *const names[TP_COLL_COUNT] = {
        "allreduce", "reduce-scatter", "allgather", "broadcast", "reduce", "alltoall", "sendrecv",
    };
    for (int k = 0; k < TP_COLL_COUNT; k++) {
        TP_EQ_STR(tp_coll_name((enum tp_coll_kind)k), names[k]);
        TP_EQ_INT(tp_coll_parse(names[k]), k);
    }
    TP_EQ_INT(tp_coll_parse("reducescatter"), TP_REDUCE_SCATTER);
    TP_EQ_INT(tp_coll_parse("reduce_scatter"), TP_REDUCE_SCATTER);
    TP_EQ_INT(tp_coll_parse("bcast"), TP_BROADCAST);
    TP_EQ_INT(tp_coll_parse("all-reduce"), -1);
    TP_EQ_INT(tp_coll_parse(""), -1);
}

static void busbw_factors(void **state)
{
    (void)state;
    for (int n = 1; n <= 8; n++) {
        double peers = (double)(n - 1) / n;
        TP_NEAR(tp_coll_busbw_factor(TP_ALLREDUCE, n), 2 * peers, 0);
        TP_NEAR(tp_coll_busbw_factor(TP_REDUCE_SCATTER, n), peers, 0);
        TP_NEAR(tp_coll_busbw_factor(TP_ALLGATHER, n), peers, 0);
        TP_NEAR(tp_coll_busbw_factor(TP_ALLTOALL, n), peers, 0);
        TP_NEAR(tp_coll_busbw_factor(TP_BROADCAST, n), 1, 0);
        TP_NEAR(tp_coll_busbw_factor(TP_REDUCE, n), 1, 0);
        TP_NEAR(tp_coll_busbw_factor(TP_SENDRECV, n), 1, 0);
    }
}

/* S rounded down to elements and blocks; the reported size is the larger
 * buffer (the input for reduce-scatter and alltoall, the output for
 * allgather, the one buffer otherwise). */
static void shapes(void **state)
{
    (void)state;
    for (int n = 1; n <= 8; n++) {
        for (uint64_t size = 0; size < 200; size += 7) {
            for (int t = 0; t < TP_DTYPE_COUNT; t++) {
                size_t es = tp_dtype_size((enum tp_dtype)t), elems = size / es, blk = elems / n;
                for (int k = 0; k < TP_COLL_COUNT; k++) {
                    struct tp_coll_shape s =
                        tp_coll_shape_for((enum tp_coll_kind)k, (enum tp_dtype)t, n, size);
                    size_t in = elems, out = elems, count = elems;
                    if (k == TP_REDUCE_SCATTER)
                        count = blk, in = blk * n, out = blk;
                    if (k == TP_ALLGATHER)
                        count = blk, in = blk, out = blk * n;
                    if (k == TP_ALLTOALL)
                        count = blk, in = out = blk * n;
                    TP_EQ_U64(s.count, count);
                    TP_EQ_U64(s.in_elems, in);
                    TP_EQ_U64(s.out_elems, out);
                    TP_EQ_U64(s.bytes, (k == TP_ALLGATHER ? out : in) * es);
                    TP_EQ_INT(s.bytes <= size, 1);
                }
            }
        }
    }
}

static void auto_algos(void **state)
{
    (void)state;
    static const struct {
        enum tp_coll_kind k;
        int n, nhosts;
        bool shm;
        size_t bytes;
        const char *algo;
    } cases[] = {
        {TP_ALLREDUCE, 2, 1, true, 8, "recdoubling"},
        {TP_ALLREDUCE, 2, 1, true, 4096, "recdoubling"},
        {TP_ALLREDUCE, 2, 1, true, 4097, "rabenseifner"}, /* dbtree only beyond two ranks */
        /* two ranks over a network: one exchange while latency counts */
        {TP_ALLREDUCE, 2, 1, false, 4097, "recdoubling"},
        {TP_ALLREDUCE, 2, 2, false, 262144, "recdoubling"},
        {TP_ALLREDUCE, 2, 2, false, 262145, "ring"},
        {TP_ALLREDUCE, 3, 1, false, 4097, "dbtree"}, /* beyond two: as on shared memory */
        {TP_ALLREDUCE, 3, 1, true, 4097, "dbtree"},
        {TP_ALLREDUCE, 3, 1, true, 32768, "dbtree"},
        {TP_ALLREDUCE, 3, 1, true, 32769, "rabenseifner"},
        {TP_ALLREDUCE, 3, 1, true, 262144, "rabenseifner"},
        {TP_ALLREDUCE, 3, 1, true, 262145, "ring"},
        {TP_ALLREDUCE, 4, 2, true, 8, "hier"},
        {TP_ALLREDUCE, 4, 2, true, 1 << 30, "hier"},
        {TP_ALLREDUCE, 4, 4, true, 8, "recdoubling"}, /* one rank per host: nothing to nest */
        {TP_REDUCE_SCATTER, 4, 1, true, 65536, "rabenseifner"}, /* by the input, 4 blocks */
        {TP_REDUCE_SCATTER, 4, 1, true, 65537, "ring"},
        {TP_ALLGATHER, 4, 1, true, 16384, "bruck"}, /* by the output */
        {TP_ALLGATHER, 4, 1, true, 16385, "ring"},
        {TP_BROADCAST, 5, 1, true, 262144, "binomial"},
        {TP_BROADCAST, 5, 1, true, 262145, "ring"},
        {TP_REDUCE, 5, 1, true, 262144, "binomial"},
        {TP_REDUCE, 5, 1, true, 262145, "ring"},
        {TP_ALLTOALL, 8, 2, true, 8, "pairwise"},
        {TP_SENDRECV, 8, 2, true, 1 << 20, "ring"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        TP_EQ_STR(tp_coll_auto_algo(cases[i].k, cases[i].n, cases[i].nhosts, cases[i].shm,
                                    cases[i].bytes),
                  cases[i].algo);
    /* every choice is an algorithm of its kind */
    for (int k = 0; k < TP_COLL_COUNT; k++)
        for (int n = 1; n <= 8; n++)
            for (size_t b = 1; b <= (1u << 24); b *= 4)
                for (int shm = 0; shm < 2; shm++) {
                    const char *a =
                        tp_coll_auto_algo((enum tp_coll_kind)k, n, n > 2 ? 2 : 1, shm, b);
                    bool found = false;
                    for (const char *const *x = tp_coll_algos((enum tp_coll_kind)k); *x; x++)
                        found |= strcmp(*x, a) == 0;
                    if (!found)
                        fail_msg("%s n=%d %zu B: %s is not one of its algorithms",
                                 tp_coll_name((enum tp_coll_kind)k), n, b, a);
                }
}

static void backend_rows(void **state)
{
    (void)state;
    const struct tp_coll_backend *tp = tp_coll_backend_find("trainpath", 9),
                                 *mpi = tp_coll_backend_find("mpi", 3),
                                 *nccl = tp_coll_backend_find("nccl,mpi", 4);
    assert_non_null(tp);
    assert_non_null(mpi);
    assert_non_null(nccl);
    assert_ptr_equal(tp_coll_backend_table[0], tp); /* the default */
    assert_null(tp_coll_backend_find("mp", 2));
    assert_null(tp_coll_backend_find("mpich", 5));
    assert_null(tp_coll_backend_table[TP_COLL_BACKENDS]);
    TP_EQ_STR(tp->name, "trainpath");
    TP_EQ_INT(tp->own_algo || tp->gpu_need || tp->device_memory || tp->ready != NULL, 0);
    TP_EQ_INT(tp->no_exact == NULL && tp->no_cuda == NULL && tp->own_transport == NULL, 1);
    TP_EQ_INT(mpi->own_algo, 1);
    TP_EQ_INT(mpi->gpu_need, 0);
    TP_EQ_INT(mpi->device_memory, 0);
    assert_non_null(mpi->no_cuda);
    assert_null(mpi->no_exact); /* MPI sums the fixed-point words with an operator of ours */
    assert_non_null(mpi->ready);
    tp_error err = {0};
    /* this process was not started by mpirun */
    TP_EQ_INT(mpi->ready(&err), TP_EUSAGE);
    TP_HAS(err.msg, "--backend mpi: the ranks were not started by mpirun or srun");
    TP_EQ_INT(nccl->own_algo, 1);
    TP_EQ_INT(nccl->gpu_need, TP_GPU_NCCL);
    TP_EQ_INT(nccl->device_memory, 1);
    TP_EQ_STR(nccl->device_why, "NCCL reads and writes GPU memory itself");
    assert_non_null(nccl->no_exact);
    assert_non_null(nccl->own_transport);
    for (int i = 0; tp_coll_backend_table[i]; i++)
        assert_non_null(tp_coll_backend_table[i]->run);
}

static void backend_lists(void **state)
{
    (void)state;
    struct tp_coll_backends l;
    tp_coll_backends_default(&l);
    TP_EQ_INT(l.n, 1);
    TP_EQ_STR(l.row[0]->name, "trainpath");
    assert_null(l.arg);
    tp_error err = {0};
    assert_int_equal(tp_coll_backends_parse("nccl,mpi,trainpath", &l, &err), 0);
    TP_EQ_INT(l.n, 3);
    TP_EQ_STR(l.row[0]->name, "nccl");
    TP_EQ_STR(l.row[1]->name, "mpi");
    TP_EQ_STR(l.row[2]->name, "trainpath");
    TP_EQ_STR(l.arg, "nccl,mpi,trainpath");
    static const struct {
        const char *arg, *msg;
    } bad[] = {
        {"bogus", "--backend bogus: 'bogus' is not trainpath, mpi or nccl"},
        {"trainpath,bo", "--backend trainpath,bo: 'bo' is not trainpath, mpi or nccl"},
        {"trainpath,", "--backend trainpath,: '' is not trainpath, mpi or nccl"},
        {"", "--backend : '' is not trainpath, mpi or nccl"},
        {"mpi,nccl,mpi", "--backend mpi,nccl,mpi: mpi twice"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(tp_coll_backends_parse(bad[i].arg, &l, &err), TP_EUSAGE);
        TP_EQ_STR(err.msg, bad[i].msg);
        TP_EQ_INT(l.n, 3); /* the list stays as it was */
    }
}

static void arena(void **state)
{
    (void)state;
    for (int n = 1; n <= 8; n++) {
        TP_EQ_U64(tp_coll_arena_bytes(n, 1000, false, 7),
                  3000 + (size_t)n * 340000 + (4u << 20) + 7);
        TP_EQ_U64(tp_coll_arena_bytes(n, 1000, true, 0),
                  3000 + (size_t)n * 340000 + (4u << 20) + (64u << 20));
    }
    /* the sweep's: the largest size, and with --repro exact its fixed-point copies */
    uint64_t sizes[] = {8, 1 << 20, 4096};
    struct tp_coll_bench_opts o = {
        .kind = TP_ALLREDUCE, .dtype = TP_F64, .sizes = sizes, .nsizes = 3};
    TP_EQ_U64(tp_coll_bench_arena_bytes(&o, 4), 3 * (1u << 20) + 4 * 340000 + (4u << 20));
    o.exact = true;
    TP_EQ_U64(tp_coll_bench_arena_bytes(&o, 4),
              3 * (1u << 20) + 4 * 340000 + (4u << 20) + (64u << 20) +
                  2 * ((1u << 20) / 8 + 1) * tp_fx_words(TP_F64) * 8);
}

/* A job as `trainpath coll` parses it, with the given --backend list. */
static void job(struct tp_coll_job *j, struct tp_group_opts *g, const char *backends)
{
    static uint64_t sizes[] = {8, 1024};
    *j = (struct tp_coll_job){.bench = {.sizes = sizes, .nsizes = 2}};
    *g = (struct tp_group_opts){.gpu_device = -1, .nranks = 2, .timeout_ns = 1000000000};
    tp_coll_backends_default(&j->backends);
    tp_error err = {0};
    if (backends)
        assert_int_equal(tp_coll_backends_parse(backends, &j->backends, &err), 0);
}

/* Accepted, or refused only because this build has no GPU path. */
static void accepted_with_gpu(const struct tp_coll_job *j, const struct tp_group_opts *g)
{
    tp_error err = {0};
    int rc = tp_coll_job_check(j, g, &err);
    bool gpu = false;
    for (int i = 0; i < j->backends.n; i++)
        gpu |= j->backends.row[i]->gpu_need != 0;
    if (tp_gpu_built() || !gpu) {
        TP_EQ_INT(rc, 0);
        return;
    }
    char says[512];
    snprintf(says, sizeof says, "--backend nccl: %s", tp_gpu_build_line());
    TP_EQ_INT(rc, TP_EUSAGE);
    TP_EQ_STR(err.msg, says);
}

#define REFUSED(j, g, says)                                                                        \
    do {                                                                                           \
        tp_error e_ = {0};                                                                         \
        TP_EQ_INT(tp_coll_job_check(&(j), &(g), &e_), TP_EUSAGE);                                  \
        TP_EQ_STR(e_.msg, says);                                                                   \
    } while (0)

static void job_checks(void **state)
{
    (void)state;
    struct tp_coll_job j;
    struct tp_group_opts g;
    tp_error err = {0};
    job(&j, &g, NULL);
    assert_int_equal(tp_coll_job_check(&j, &g, &err), 0);
    j.bench.algo = "bruck";
    REFUSED(j, g,
            "--algo bruck: not an algorithm of allreduce (auto, ring, rabenseifner, "
            "recdoubling, dbtree, binomial, hier)");
    job(&j, &g, NULL);
    j.bench.repro_check = true;
    j.bench.kind = TP_ALLGATHER;
    REFUSED(j, g, "--repro-check: allreduce with --redop sum of a float --dtype only");
    job(&j, &g, "trainpath,mpi");
    j.bench.repro_check = true;
    REFUSED(j, g, "--repro-check: runs on --backend trainpath");
    job(&j, &g, NULL);
    j.bench.repro_check = j.bench.mem_cuda = true;
    REFUSED(j, g, "--repro-check: runs with --mem host");
    static const struct {
        const char *backends, *says;
    } algo[] = {
        {"mpi", "--algo ring with --backend mpi: MPI chooses its own algorithm"},
        {"nccl", "--algo ring with --backend nccl: NCCL chooses its own algorithm"},
        {"mpi,nccl", "--algo ring with --backend mpi,nccl: NCCL chooses its own algorithm"},
        {"nccl,mpi", "--algo ring with --backend nccl,mpi: NCCL chooses its own algorithm"},
    };
    for (size_t i = 0; i < sizeof algo / sizeof algo[0]; i++) {
        job(&j, &g, algo[i].backends);
        j.bench.algo = "ring";
        REFUSED(j, g, algo[i].says);
        j.bench.algo = "auto";
        accepted_with_gpu(&j, &g);
    }
    job(&j, &g, "trainpath,nccl");
    j.bench.algo = "ring"; /* trainpath's sweep uses it */
    accepted_with_gpu(&j, &g);
    j.bench.exact = true;
    j.bench.algo = NULL;
    REFUSED(j, g,
            "--repro exact: runs on --backend trainpath (NCCL's sums keep no exact "
            "accumulator)");
    job(&j, &g, "nccl");
    g.comm.transport = "tcp";
    REFUSED(j, g,
            "--transport with --backend nccl: NCCL picks its own transport (NCCL_NET, "
            "NCCL_IB_HCA, ...)");
    job(&j, &g, "nccl,trainpath");
    g.comm.transport = "tcp"; /* trainpath's sweep uses it */
    accepted_with_gpu(&j, &g);
    job(&j, &g, "trainpath,mpi");
    j.bench.mem_cuda = true;
    REFUSED(j, g,
            "--mem cuda with --backend mpi: not supported (trainpath does not assume a "
            "CUDA-aware MPI); use trainpath or nccl");
    job(&j, &g, NULL);
    g.gpu_device = 0;
    REFUSED(j, g, "--gpu: only with --mem cuda or --backend nccl");
    job(&j, &g, NULL);
    j.bench.chunk_bytes = 63;
    REFUSED(j, g, "--chunk: at least 64 bytes");
    j.bench.chunk_bytes = 64;
    assert_int_equal(tp_coll_job_check(&j, &g, &err), 0);
}

static void job_config(void **state)
{
    (void)state;
    struct tp_coll_job j;
    struct tp_group_opts g;
    job(&j, &g, NULL);
    json_t *c = tp_coll_job_config(&j, &g);
    char *text = json_dumps(c, JSON_PRESERVE_ORDER | JSON_COMPACT);
    TP_EQ_STR(text, "{\"op\":\"allreduce\",\"sizes\":[8,1024],\"dtype\":\"f32\",\"redop\":\"sum\","
                    "\"algo\":\"auto\",\"root\":0,\"iters\":0,\"time_ns\":0,\"warmup\":0,"
                    "\"chunk_bytes\":0,\"repro\":\"plain\",\"repro_check\":false,\"backend\":"
                    "\"trainpath\",\"transport\":\"tcp\",\"provider\":\"\",\"intra\":\"shm\","
                    "\"shm_stores\":\"auto\",\"timeout_ns\":1000000000,\"inject_delay_ns\":0,"
                    "\"mem\":\"host\"}");
    free(text);
    json_decref(c);
    job(&j, &g, "trainpath,nccl");
    c = tp_coll_job_config(&j, &g);
    TP_EQ_STR(json_string_value(json_object_get(c, "backend")), "trainpath,nccl");
    json_decref(c);
    /* what changes the data path or writes a file is on record */
    g.comm.shm_stores = "cached";
    j.trace = "/tmp/t.json";
    c = tp_coll_job_config(&j, &g);
    TP_EQ_STR(json_string_value(json_object_get(c, "shm_stores")), "cached");
    TP_EQ_STR(json_string_value(json_object_get(c, "trace")), "/tmp/t.json");
    json_decref(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kind_names),   cmocka_unit_test(busbw_factors),
        cmocka_unit_test(shapes),       cmocka_unit_test(auto_algos),
        cmocka_unit_test(backend_rows), cmocka_unit_test(backend_lists),
        cmocka_unit_test(arena),        cmocka_unit_test(job_checks),
        cmocka_unit_test(job_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
