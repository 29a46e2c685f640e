/* The logistic-regression model of `trainpath step` and its synthetic data.
 * Every random number is splitmix64 of a key derived from (seed, what,
 * index), so a sample, the true weights and the initial weights are pure
 * functions of their inputs: any rank can make or check any of them, and a
 * run repeats bit for bit.
 *
 * Record layout (host byte order, every float 4-byte aligned when the record
 * is; HDR = 20 bytes of header):
 *
 *   offset  size     field
 *   0       4        uint32 magic, TP_MODEL_MAGIC
 *   4       4        uint32 dim, the feature count
 *   8       8        uint64 index, the sample's index in the dataset
 *   16      4        float label, 0 or 1
 *   20      4 * dim  float features x_0 .. x_{dim-1}, each in [-1, 1)
 *   20+4dim ...      padding up to record_size: tp_pattern_fill(seed ^ index)
 *
 * The data: sample key k = splitmix64(seed ^ splitmix64(index)); feature j
 * is splitmix64(k + j * gamma) mapped to [-1, 1) through its top 24 bits
 * (exact floats; gamma is splitmix64's increment, so the features are the
 * splitmix64 stream seeded at k). The true weights w*_j are the stream of
 * splitmix64(seed ^ TRUE_SALT), in [-1, 1), scaled by 9 / sqrt(dim) so the
 * true logit w*.x has a standard deviation near 3 for any dim (unscaled, a
 * dim-16 model could not beat about 0.8 of the initial loss even with the
 * true weights). The label is 1 when u < sigmoid(w*.x), u in [0, 1) from
 * splitmix64(k ^ LABEL_SALT): the labels follow the model, so training
 * lowers the loss.
 *
 * Floating point: all f32, fixed order, one binary on every rank, so every
 * rank computes the same bits. A fused multiply-add would change a result,
 * not its determinism (all ranks run the same code); still, this file asks
 * for none: gcc in ISO C mode (c_std=c17) defaults to -ffp-contract=off, and
 * clang honours the pragma below (gcc would warn about it). expf and log1pf
 * come from the C library, so a different libm on another host could change
 * the data's labels and the loss; the gradients' bits then still agree
 * between ranks of one build. */
#include "tp/model.h"

#include <math.h>
#include <sodium.h>
#include <string.h>

#include "tp/pattern.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#define HDR 20u
#define OFF_DIM 4
#define OFF_INDEX 8
#define OFF_LABEL 16

#define GAMMA 0x9e3779b97f4a7c15ull
#define TRUE_SALT 0x7472756577656967ull  /* "trueweig" */
#define INIT_SALT 0x696e697477656967ull  /* "initweig" */
#define LABEL_SALT 0x6c6162656c756e69ull /* "labeluni" */

/* Element j of the splitmix64 stream seeded at key. */
static uint64_t stream(uint64_t key, uint64_t j)
{
    return tp_splitmix64(key + j * GAMMA);
}

/* Uniform in [-1, 1) from the top 24 bits of r, exactly: an integer in
 * [-2^23, 2^23) times 2^-23. */
static float sym(uint64_t r)
{
    return (float)((int32_t)(r >> 40) - (1 << 23)) * 0x1p-23f;
}

/* Uniform in [0, 1) from the top 24 bits of r, exactly. */
static float unit(uint64_t r)
{
    return (float)(uint32_t)(r >> 40) * 0x1p-24f;
}

static uint64_t sample_key(uint64_t seed, uint64_t index)
{
    return tp_splitmix64(seed ^ tp_splitmix64(index));
}

/* 1 / (1 + e^-z) without overflow: e^-|z| <= 1 on both branches. */
static float sigmoid(float z)
{
    if (z >= 0.0f)
        return 1.0f / (1.0f + expf(-z));
    float e = expf(z);
    return e / (1.0f + e);
}

/* log(1 + e^z) without overflow or loss for large |z|. */
static float softplus(float z)
{
    return z > 0.0f ? z + log1pf(expf(-z)) : log1pf(expf(z));
}

size_t tp_model_record_min(unsigned dim)
{
    return HDR + 4 * (size_t)dim;
}

void tp_model_record_fill(void *rec, size_t record_size, uint64_t seed, uint64_t index,
                          unsigned dim)
{
    unsigned char *p = rec;
    uint64_t k = sample_key(seed, index), tk = tp_splitmix64(seed ^ TRUE_SALT);
    float scale = 9.0f / sqrtf((float)(dim ? dim : 1));
    float z = 0.0f;
    for (unsigned j = 0; j < dim; j++) {
        float x = sym(stream(k, j));
        z += scale * sym(stream(tk, j)) * x;
        memcpy(p + HDR + 4 * (size_t)j, &x, 4);
    }
    float label = unit(tp_splitmix64(k ^ LABEL_SALT)) < sigmoid(z) ? 1.0f : 0.0f;
    uint32_t magic = TP_MODEL_MAGIC, d = dim;
    memcpy(p, &magic, 4);
    memcpy(p + OFF_DIM, &d, 4);
    memcpy(p + OFF_INDEX, &index, 8);
    memcpy(p + OFF_LABEL, &label, 4);
    size_t min = tp_model_record_min(dim);
    if (record_size > min)
        tp_pattern_fill(p + min, record_size - min, seed ^ index);
}

int tp_model_record_parse(const void *rec, unsigned dim, uint64_t index, const float **x,
                          float *label)
{
    const unsigned char *p = rec;
    uint32_t magic, d;
    uint64_t idx;
    if ((uintptr_t)rec % _Alignof(float))
        return -1; /* *x would point at misaligned floats */
    memcpy(&magic, p, 4);
    memcpy(&d, p + OFF_DIM, 4);
    memcpy(&idx, p + OFF_INDEX, 8);
    if (magic != TP_MODEL_MAGIC || d != dim || idx != index)
        return -1;
    memcpy(label, p + OFF_LABEL, 4);
    *x = (const float *)(const void *)(p + HDR);
    return 0;
}

void tp_model_init(float *w, unsigned dim, uint64_t seed)
{
    uint64_t k = tp_splitmix64(seed ^ INIT_SALT);
    for (unsigned j = 0; j < dim; j++)
        w[j] = sym(stream(k, j)) * 0x1p-7f; /* [-1/128, 1/128), exact */
    w[dim] = 0.0f;
}

void tp_model_sample_grad(const float *w, unsigned dim, const float *x, float label, float *out)
{
    float s = 0.0f;
    for (unsigned j = 0; j < dim; j++)
        s += w[j] * x[j];
    float z = s + w[dim];
    float d = sigmoid(z) - label;
    for (unsigned j = 0; j < dim; j++)
        out[j] = d * x[j];
    out[dim] = d;
    /* -(y log p + (1 - y) log(1 - p)) = y softplus(-z) + (1 - y) softplus(z):
     * no log of a rounded p, and no cancellation when y is 0 or 1 */
    out[dim + 1] = label * softplus(-z) + (1.0f - label) * softplus(z);
}

void tp_model_update(float *w, unsigned dim, const float *gsum, uint64_t nsamples, float lr)
{
    if (nsamples == 0)
        return;
    float n = (float)nsamples;
    for (size_t j = 0; j < tp_model_params(dim); j++)
        w[j] -= lr * (gsum[j] / n);
}

void tp_model_sha256(const float *w, unsigned dim, char hex[65])
{
    /* the portable SHA-256 of libsodium: no CPU dispatch, so no sodium_init */
    unsigned char h[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(h, (const unsigned char *)w, tp_model_params(dim) * sizeof(float));
    sodium_bin2hex(hex, 65, h, sizeof h);
}

/* The float's place on a line where consecutive floats are 1 apart: sign
 * and magnitude turned into a signed integer, so -0 and +0 are both 0. */
static int64_t ordinal(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    int64_t m = u & 0x7fffffffu;
    return u >> 31 ? -m : m;
}

uint64_t tp_ulps_f32(float a, float b)
{
    if (isnan(a) || isnan(b))
        return UINT64_MAX;
    int64_t x = ordinal(a), y = ordinal(b);
    return x > y ? (uint64_t)(x - y) : (uint64_t)(y - x);
}
