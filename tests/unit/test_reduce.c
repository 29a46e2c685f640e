/* The reduction kernels (include/tp/reduce.h): for every instruction set
 * this CPU runs (AVX-512, AVX2, baseline), every plain type and operator,
 * every way dst may lie (apart, over the first operand, over the second,
 * partly over one), lengths with and without a vector tail, and values that
 * tell orders apart (NaN, signed zeros, infinities, subnormals, the
 * integers' extremes): the same bits as one operation per element in the
 * type, the operands in their order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tp/reduce.h"
#include "tp_test.h"

#define N 1037 /* vectors of every width, and a tail */

/* The value of element i of operand k (0, 1), as raw bits in 8 bytes. */
static void fill(enum tp_dtype t, void *buf, int k, size_t n)
{
    static const float fs[] = {NAN, -0.0f, 0.0f, INFINITY, -INFINITY, 1e-40f, -3.5f, 2.0f};
    static const double ds[] = {NAN, -0.0, 0.0, INFINITY, -INFINITY, 1e-310, -3.5, 2.0};
    for (size_t i = 0; i < n; i++) {
        uint64_t r = tp_test_rnd();
        bool special = (i + (size_t)k) % 7 == 0;
        switch (t) {
        case TP_F32:
            ((float *)buf)[i] = special ? fs[r % 8] : (float)((double)(int64_t)r / 9e15);
            break;
        case TP_F64:
            ((double *)buf)[i] = special ? ds[r % 8] : (double)(int64_t)r / 9e15;
            break;
        case TP_I32:
            ((int32_t *)buf)[i] = special ? (r & 1 ? INT32_MIN : INT32_MAX) : (int32_t)r;
            break;
        case TP_I64:
            ((int64_t *)buf)[i] = special ? (r & 1 ? INT64_MIN : INT64_MAX) : (int64_t)r;
            break;
        default: break;
        }
    }
}

#define REF(T, U)                                                                                \
    for (size_t i = 0; i < n; i++) {                                                             \
        T x = ((const T *)a)[i], y = ((const T *)b)[i];                                          \
        T *o = (T *)d + i;                                                                       \
        switch (op) {                                                                            \
        case TP_SUM:                                                                             \
        case TP_AVG: *o = (T)((U)x + (U)y); break;                                               \
        case TP_PROD: *o = (T)((U)x * (U)y); break;                                              \
        case TP_MIN: *o = y < x ? y : x; break;                                                  \
        case TP_MAX: *o = y > x ? y : x; break;                                                  \
        default: break;                                                                          \
        }                                                                                        \
    }

/* d = a op b, one element at a time (a, b and d apart). */
static void reference(enum tp_dtype t, enum tp_redop op, void *d, const void *a, const void *b,
                      size_t n)
{
    switch (t) {
    case TP_F32: REF(float, float); break;
    case TP_F64: REF(double, double); break;
    case TP_I32: REF(int32_t, uint32_t); break;
    case TP_I64: REF(int64_t, uint64_t); break;
    default: break;
    }
}

static void every_width_the_same_bits(void **state)
{
    (void)state;
    static const enum tp_dtype types[] = {TP_F32, TP_F64, TP_I32, TP_I64};
    static const enum tp_redop ops[] = {TP_SUM, TP_PROD, TP_MIN, TP_MAX, TP_AVG};
    static const size_t lens[] = {0, 1, 7, 16, 33, N};
    static const char *const isas[] = {"avx512", "avx2", "baseline"};
    int ran = 0;
    uint8_t *a = malloc(N * 8), *b = malloc(N * 8), *want = malloc(N * 8),
            *buf = malloc(3 * N * 8);
    assert_true(a && b && want && buf);
    for (size_t s = 0; s < 3; s++) {
        if (!tp_reduce_use(isas[s])) {
            print_message("# %s: this CPU cannot run it\n", isas[s]);
            continue;
        }
        ran++;
        TP_EQ_STR(tp_reduce_kernel(), isas[s]);
        for (size_t ti = 0; ti < 4; ti++)
            for (size_t oi = 0; oi < 5; oi++)
                for (size_t li = 0; li < 6; li++) {
                    enum tp_dtype t = types[ti];
                    size_t n = lens[li], es = tp_dtype_size(t), bytes = n * es;
                    tp_test_rng = 100 * ti + 10 * oi + li + 1;
                    fill(t, a, 0, n);
                    fill(t, b, 1, n);
                    reference(t, ops[oi], want, a, b, n);
                    /* 0 apart, 1 over a, 2 over b, 3 partly over a (a one
                     * element on: element by element, each read before
                     * the element below it is written) */
                    for (int mode = 0; mode < 4; mode++) {
                        uint8_t *d = buf, *x = a, *y = b;
                        if (mode == 1) {
                            memcpy(buf, a, bytes);
                            x = d;
                        } else if (mode == 2) {
                            memcpy(buf, b, bytes);
                            y = d;
                        } else if (mode == 3) {
                            memcpy(buf + es, a, bytes);
                            x = buf + es;
                        }
                        tp_reduce3(t, ops[oi], d, x, y, n);
                        if (memcmp(d, want, bytes) != 0)
                            fail_msg("%s %s %s n=%zu, dst mode %d: not the element-wise bits",
                                     isas[s], tp_dtype_name(t), tp_redop_name(ops[oi]), n, mode);
                    }
                }
    }
    assert_true(ran >= 1); /* the baseline, at least */
    assert_false(tp_reduce_use("no-such-isa"));
    free(a);
    free(b);
    free(want);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_width_the_same_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
