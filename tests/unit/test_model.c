/* The step workload's model (tp/model.h): records are the documented layout
 * and a pure function of (seed, index), checked against an independent
 * re-derivation of the generator; parsing rejects the wrong sample; the
 * gradient and loss match hand-computed values and stay finite for large
 * logits; full-batch gradient descent lowers the loss (the data is
 * learnable); the update, the parameter hash and the ulp distance follow
 * their contracts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tp_test.h"
#include "tp/model.h"
#include "tp/pattern.h"

#define HDR 20 /* magic, dim, index, label: the layout documented in model.c */

static float f32_at(const unsigned char *p)
{
    float f;
    memcpy(&f, p, 4);
    return f;
}

/* The generator as model.c documents it, written again here from the
 * description (in double for the label), so a change to the data shows. */
static double ref_sym(uint64_t r)
{
    return (double)(r >> 40) / 8388608.0 - 1.0;
}

static double ref_feature(uint64_t seed, uint64_t index, unsigned j)
{
    uint64_t k = tp_splitmix64(seed ^ tp_splitmix64(index));
    return ref_sym(tp_splitmix64(k + j * 0x9e3779b97f4a7c15ull));
}

/* sigmoid(w*.x) and u for the sample: label 1 when u < p */
static void ref_label(uint64_t seed, uint64_t index, unsigned dim, double *p, double *u)
{
    uint64_t k = tp_splitmix64(seed ^ tp_splitmix64(index));
    uint64_t tk = tp_splitmix64(seed ^ 0x7472756577656967ull);
    double z = 0;
    for (unsigned j = 0; j < dim; j++)
        z += 9.0 / sqrt(dim) * ref_sym(tp_splitmix64(tk + j * 0x9e3779b97f4a7c15ull)) *
             ref_feature(seed, index, j);
    *p = 1.0 / (1.0 + exp(-z));
    *u = (double)(tp_splitmix64(k ^ 0x6c6162656c756e69ull) >> 40) / 16777216.0;
}

static void record_layout(void **state)
{
    (void)state;
    const unsigned dims[] = {1, 3, 16, 100};
    for (size_t t = 0; t < sizeof dims / sizeof dims[0]; t++) {
        unsigned dim = dims[t];
        TP_EQ_U64(tp_model_record_min(dim), HDR + 4 * dim);
        size_t size = tp_model_record_min(dim) + 37; /* padding not a multiple of 8 */
        uint64_t seed = 0x5eed0000 + t;
        uint64_t *buf = malloc(size + 8);
        assert_non_null(buf);
        unsigned char *rec = (unsigned char *)buf;
        for (uint64_t index = 0; index < 200; index++) {
            uint64_t big = index * 0x100000001ull; /* the high half of the index counts */
            tp_model_record_fill(rec, size, seed, big, dim);
            uint32_t magic, d;
            uint64_t idx;
            memcpy(&magic, rec, 4);
            memcpy(&d, rec + 4, 4);
            memcpy(&idx, rec + 8, 8);
            TP_EQ_U64(magic, TP_MODEL_MAGIC);
            TP_EQ_U64(d, dim);
            TP_EQ_U64(idx, big);
            const float *x = NULL;
            float label = -1;
            assert_int_equal(tp_model_record_parse(rec, dim, big, &x, &label), 0);
            assert_ptr_equal(x, rec + HDR);
            for (unsigned j = 0; j < dim; j++) {
                if (x[j] != ref_feature(seed, big, j))
                    fail_msg("seed %llu index %llu x[%u] = %.9g, expected %.9g",
                             (unsigned long long)seed, (unsigned long long)big, j, x[j],
                             ref_feature(seed, big, j));
                assert_true(x[j] >= -1.0f && x[j] < 1.0f);
            }
            assert_true(label == f32_at(rec + 16));
            double p, u;
            ref_label(seed, big, dim, &p, &u);
            if (fabs(u - p) > 1e-5) /* f32 and double agree away from the edge */
                TP_NEAR(label, u < p ? 1.0 : 0.0, 0);
            else
                assert_true(label == 0.0f || label == 1.0f);
            size_t bad;
            uint8_t want, got;
            if (tp_pattern_check(rec + tp_model_record_min(dim), 37, seed ^ big, &bad, &want,
                                 &got))
                fail_msg("padding byte %zu = %#x, expected %#x", bad, got, want);
        }
        free(buf);
    }
}

static void parse_rejects(void **state)
{
    (void)state;
    unsigned dim = 8;
    size_t size = tp_model_record_min(dim);
    uint64_t buf[32];
    unsigned char *rec = (unsigned char *)buf;
    const float *x;
    float label;
    tp_model_record_fill(rec, size, 7, 1234, dim);
    assert_int_equal(tp_model_record_parse(rec, dim, 1234, &x, &label), 0);
    assert_int_equal(tp_model_record_parse(rec, dim, 1235, &x, &label), -1);
    assert_int_equal(tp_model_record_parse(rec, dim, 1234 + (1ull << 32), &x, &label), -1);
    assert_int_equal(tp_model_record_parse(rec, dim + 1, 1234, &x, &label), -1);
    assert_int_equal(tp_model_record_parse(rec, dim - 1, 1234, &x, &label), -1);
    rec[0] ^= 1; /* magic */
    assert_int_equal(tp_model_record_parse(rec, dim, 1234, &x, &label), -1);
    rec[0] ^= 1;
    assert_int_equal(tp_model_record_parse(rec, dim, 1234, &x, &label), 0);
    /* a record at a misaligned address: *x could not be read as floats */
    memmove(rec + 1, rec, size);
    assert_int_equal(tp_model_record_parse(rec + 1, dim, 1234, &x, &label), -1);
}

static void records_are_deterministic(void **state)
{
    (void)state;
    unsigned dim = 32;
    size_t size = 4096;
    unsigned char *a = malloc(size), *b = malloc(size);
    assert_non_null(a);
    assert_non_null(b);
    for (uint64_t index = 0; index < 50; index++) {
        memset(a, 0x00, size);
        memset(b, 0xff, size); /* no byte left from before */
        tp_model_record_fill(a, size, 99, index, dim);
        tp_model_record_fill(b, size, 99, index, dim);
        assert_memory_equal(a, b, size);
        tp_model_record_fill(b, size, 100, index, dim);
        assert_memory_not_equal(a + HDR, b + HDR, 4 * dim); /* other seed: other features */
        assert_memory_not_equal(a + tp_model_record_min(dim), b + tp_model_record_min(dim),
                                size - tp_model_record_min(dim));
        tp_model_record_fill(b, size, 99, index + 1, dim);
        assert_memory_not_equal(a + HDR, b + HDR, 4 * dim); /* other index too */
    }
    free(a);
    free(b);
}

static void labels_are_mixed(void **state)
{
    (void)state;
    unsigned dim = 16, ones = 0, n = 2000;
    uint64_t buf[32];
    const float *x;
    float label;
    for (unsigned i = 0; i < n; i++) {
        tp_model_record_fill(buf, sizeof buf, 3, i, dim);
        assert_int_equal(tp_model_record_parse(buf, dim, i, &x, &label), 0);
        assert_true(label == 0.0f || label == 1.0f);
        ones += label == 1.0f;
    }
    if (ones < n / 4 || ones > 3 * n / 4)
        fail_msg("%u of %u labels are 1: the classes should both be common", ones, n);
}

static void init_is_small_and_seeded(void **state)
{
    (void)state;
    unsigned dim = 64;
    float a[65], b[65], c[65];
    tp_model_init(a, dim, 5);
    tp_model_init(b, dim, 5);
    tp_model_init(c, dim, 6);
    assert_memory_equal(a, b, sizeof a);
    assert_memory_not_equal(a, c, sizeof a);
    for (unsigned j = 0; j < dim; j++)
        assert_true(a[j] >= -0.01f && a[j] < 0.01f);
    assert_true(a[dim] == 0.0f && c[dim] == 0.0f);
}

static void gradient_by_hand(void **state)
{
    (void)state;
    /* z = 0.5 * 1 + (-0.25) * 0.5 + 0.125 = 0.5; p = sigmoid(0.5) */
    const float w[3] = {0.5f, -0.25f, 0.125f}, x[2] = {1.0f, 0.5f};
    const double p = 0.6224593312018546;
    float g[4];
    tp_model_sample_grad(w, 2, x, 1.0f, g);
    TP_NEAR(g[0], (p - 1) * 1.0, 1e-6);
    TP_NEAR(g[1], (p - 1) * 0.5, 1e-6);
    TP_NEAR(g[2], p - 1, 1e-6);
    TP_NEAR(g[3], 0.47407698418010663, 1e-6); /* -log p */
    tp_model_sample_grad(w, 2, x, 0.0f, g);
    TP_NEAR(g[0], p * 1.0, 1e-6);
    TP_NEAR(g[1], p * 0.5, 1e-6);
    TP_NEAR(g[2], p, 1e-6);
    TP_NEAR(g[3], 0.9740769841801068, 1e-6); /* -log(1 - p) */
}

static void gradient_large_logits(void **state)
{
    (void)state;
    /* |z| = 100: p rounds to 0 or 1, but the loss must be the exact |z|
     * when wrong and ~0 when right, never inf or NaN */
    const float x[1] = {1.0f};
    const float wpos[2] = {100.0f, 0.0f}, wneg[2] = {-100.0f, 0.0f};
    float g[3];
    tp_model_sample_grad(wpos, 1, x, 0.0f, g);
    TP_NEAR(g[0], 1.0, 1e-6);
    TP_NEAR(g[2], 100.0, 1e-5);
    tp_model_sample_grad(wpos, 1, x, 1.0f, g);
    TP_NEAR(g[0], 0.0, 1e-6);
    assert_true(g[2] >= 0.0f && g[2] < 1e-30f);
    tp_model_sample_grad(wneg, 1, x, 1.0f, g);
    TP_NEAR(g[0], -1.0, 1e-6);
    TP_NEAR(g[2], 100.0, 1e-5);
    tp_model_sample_grad(wneg, 1, x, 0.0f, g);
    TP_NEAR(g[0], 0.0, 1e-6);
    assert_true(g[2] >= 0.0f && g[2] < 1e-30f);
}

/* mean loss over the samples, and the summed gradient in gsum (f32, index
 * order: the plain reduction of one rank) */
static float full_batch(const float *w, unsigned dim, const unsigned char *recs, size_t size,
                        unsigned n, float *gsum)
{
    size_t glen = tp_model_grad_len(dim);
    float g[32];
    memset(gsum, 0, glen * sizeof *gsum);
    for (unsigned i = 0; i < n; i++) {
        const float *x;
        float label;
        assert_int_equal(tp_model_record_parse(recs + i * size, dim, i, &x, &label), 0);
        tp_model_sample_grad(w, dim, x, label, g);
        for (size_t j = 0; j < glen; j++)
            gsum[j] += g[j];
    }
    return gsum[dim + 1] / (float)n;
}

static void training_lowers_the_loss(void **state)
{
    (void)state;
    unsigned dim = 16, n = 512, steps = 300;
    size_t size = tp_model_record_min(dim);
    unsigned char *recs = malloc(n * size);
    assert_non_null(recs);
    for (unsigned i = 0; i < n; i++)
        tp_model_record_fill(recs + i * size, size, 2024, i, dim);
    float w[17], gsum[18];
    tp_model_init(w, dim, 2024);
    float first = full_batch(w, dim, recs, size, n, gsum), last = first;
    for (unsigned s = 0; s < steps; s++) {
        tp_model_update(w, dim, gsum, n, 4.0f);
        last = full_batch(w, dim, recs, size, n, gsum);
    }
    TP_NEAR_REL(first, log(2.0), 0.05); /* small weights: p near 1/2 */
    if (!(last < 0.8f * first))
        fail_msg("loss %.6f after %u steps, from %.6f: want below 0.8x", last, steps, first);
    free(recs);
}

static void update_formula(void **state)
{
    (void)state;
    float w[4] = {1.0f, 2.0f, 3.0f, 42.0f}; /* w[3] is past the dim + 1 parameters */
    const float gsum[4] = {4.0f, -8.0f, 2.0f, 99.0f}; /* gsum[3]: the loss, not a parameter */
    tp_model_update(w, 2, gsum, 4, 0.5f);
    assert_true(w[0] == 0.5f);  /* 1 - 0.5 * (4 / 4) */
    assert_true(w[1] == 3.0f);  /* 2 - 0.5 * (-8 / 4) */
    assert_true(w[2] == 2.75f); /* 3 - 0.5 * (2 / 4) */
    assert_true(w[3] == 42.0f);
    /* lr * (gsum / n), not (lr * gsum) / n: the bits of the documented order */
    float v[2] = {1.0f, 1.0f};
    const float gs[3] = {1.9f, 3.4f, 0.0f}; /* values where the two orders round apart */
    assert_true(1.0f - 0.7f * (1.9f / 3.0f) != 1.0f - (0.7f * 1.9f) / 3.0f);
    assert_true(1.0f - 0.7f * (3.4f / 3.0f) != 1.0f - (0.7f * 3.4f) / 3.0f);
    tp_model_update(v, 1, gs, 3, 0.7f);
    assert_true(v[0] == 1.0f - 0.7f * (1.9f / 3.0f));
    assert_true(v[1] == 1.0f - 0.7f * (3.4f / 3.0f));
    tp_model_update(v, 1, gs, 0, 0.7f); /* no samples: no step */
    assert_true(v[0] == 1.0f - 0.7f * (1.9f / 3.0f));
    assert_true(v[1] == 1.0f - 0.7f * (3.4f / 3.0f));
}

static void sha256_of_parameters(void **state)
{
    (void)state;
    /* python3 -c "import hashlib,struct;
     *   print(hashlib.sha256(struct.pack('<3f', 1.0, -2.5, 0.0)).hexdigest())" */
    const float w[3] = {1.0f, -2.5f, 0.0f};
    char hex[65];
    memset(hex, 'x', sizeof hex);
    tp_model_sha256(w, 2, hex);
    assert_string_equal(hex, "738e86d615200bd3391d7ae379779a8e4644bade56d93d0634aa07004fa697f3");
    /* dim 0: the bias alone, struct.pack('<f', 0.0) */
    tp_model_sha256(w + 2, 0, hex);
    assert_string_equal(hex, "df3f619804a92fdb4057192dc43dd748ea778adc52bc498ce80524c014b81119");
}

static void ulps(void **state)
{
    (void)state;
    float min_sub = nextafterf(0.0f, 1.0f);
    TP_EQ_U64(tp_ulps_f32(1.0f, 1.0f), 0);
    TP_EQ_U64(tp_ulps_f32(1.0f, nextafterf(1.0f, 2.0f)), 1);
    TP_EQ_U64(tp_ulps_f32(nextafterf(1.0f, 2.0f), 1.0f), 1);
    TP_EQ_U64(tp_ulps_f32(1.0f, nextafterf(1.0f, 0.0f)), 1); /* across the binade */
    TP_EQ_U64(tp_ulps_f32(0.0f, -0.0f), 0);
    TP_EQ_U64(tp_ulps_f32(-min_sub, min_sub), 2);
    TP_EQ_U64(tp_ulps_f32(min_sub, -min_sub), 2);
    TP_EQ_U64(tp_ulps_f32(-0.0f, min_sub), 1);
    TP_EQ_U64(tp_ulps_f32(1.0f, 2.0f), 1u << 23);
    TP_EQ_U64(tp_ulps_f32(-1.0f, 1.0f), 2 * 0x3f800000ull);
    TP_EQ_U64(tp_ulps_f32(FLT_MAX, INFINITY), 1);
    TP_EQ_U64(tp_ulps_f32(-INFINITY, INFINITY), 2 * 0x7f800000ull);
    TP_EQ_U64(tp_ulps_f32(NAN, 1.0f), UINT64_MAX);
    TP_EQ_U64(tp_ulps_f32(1.0f, NAN), UINT64_MAX);
    TP_EQ_U64(tp_ulps_f32(NAN, NAN), UINT64_MAX);
    TP_EQ_U64(tp_ulps_f32(-NAN, 0.0f), UINT64_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(record_layout),
        cmocka_unit_test(parse_rejects),
        cmocka_unit_test(records_are_deterministic),
        cmocka_unit_test(labels_are_mixed),
        cmocka_unit_test(init_is_small_and_seeded),
        cmocka_unit_test(gradient_by_hand),
        cmocka_unit_test(gradient_large_logits),
        cmocka_unit_test(training_lowers_the_loss),
        cmocka_unit_test(update_formula),
        cmocka_unit_test(sha256_of_parameters),
        cmocka_unit_test(ulps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
