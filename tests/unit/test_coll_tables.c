/* coll's tables without a communicator: the kinds (names, busbw factors,
 * nccl-tests' size convention for n = 1..8, the size-based algorithm
 * choice). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "tp_test.h"
#include "tp/coll.h"

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
        size_t bytes;
        const char *algo;
    } cases[] = {
        {TP_ALLREDUCE, 2, 1, 8, "recdoubling"},
        {TP_ALLREDUCE, 2, 1, 4096, "recdoubling"},
        {TP_ALLREDUCE, 2, 1, 4097, "rabenseifner"}, /* dbtree only beyond two ranks */
        {TP_ALLREDUCE, 3, 1, 4097, "dbtree"},
        {TP_ALLREDUCE, 3, 1, 32768, "dbtree"},
        {TP_ALLREDUCE, 3, 1, 32769, "rabenseifner"},
        {TP_ALLREDUCE, 3, 1, 262144, "rabenseifner"},
        {TP_ALLREDUCE, 3, 1, 262145, "ring"},
        {TP_ALLREDUCE, 4, 2, 8, "hier"},
        {TP_ALLREDUCE, 4, 2, 1 << 30, "hier"},
        {TP_ALLREDUCE, 4, 4, 8, "recdoubling"}, /* one rank per host: nothing to nest */
        {TP_REDUCE_SCATTER, 4, 1, 65536, "rabenseifner"}, /* by the input, 4 blocks */
        {TP_REDUCE_SCATTER, 4, 1, 65537, "ring"},
        {TP_ALLGATHER, 4, 1, 16384, "bruck"}, /* by the output */
        {TP_ALLGATHER, 4, 1, 16385, "ring"},
        {TP_BROADCAST, 5, 1, 262144, "binomial"},
        {TP_BROADCAST, 5, 1, 262145, "ring"},
        {TP_REDUCE, 5, 1, 262144, "binomial"},
        {TP_REDUCE, 5, 1, 262145, "ring"},
        {TP_ALLTOALL, 8, 2, 8, "pairwise"},
        {TP_SENDRECV, 8, 2, 1 << 20, "ring"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        TP_EQ_STR(tp_coll_auto_algo(cases[i].k, cases[i].n, cases[i].nhosts, cases[i].bytes),
                  cases[i].algo);
    /* every choice is an algorithm of its kind */
    for (int k = 0; k < TP_COLL_COUNT; k++)
        for (int n = 1; n <= 8; n++)
            for (size_t b = 1; b <= (1u << 24); b *= 4) {
                const char *a = tp_coll_auto_algo((enum tp_coll_kind)k, n, n > 2 ? 2 : 1, b);
                bool found = false;
                for (const char *const *x = tp_coll_algos((enum tp_coll_kind)k); *x; x++)
                    found |= strcmp(*x, a) == 0;
                if (!found)
                    fail_msg("%s n=%d %zu B: %s is not one of its algorithms",
                             tp_coll_name((enum tp_coll_kind)k), n, b, a);
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kind_names),
        cmocka_unit_test(busbw_factors),
        cmocka_unit_test(shapes),
        cmocka_unit_test(auto_algos),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
