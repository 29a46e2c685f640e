/* The small real model `trainpath step` trains, so that "the weights are
 * bitwise the same" means something: logistic regression on a synthetic
 * dataset generated from a seed. Every sample is a function of (seed,
 * index) only, so any rank can generate or check any sample, and the global
 * batch of a step is the same set of samples whatever the rank count.
 *
 * A sample's gradient is computed in f32 in a fixed order (its dot product
 * left to right), so it is the same bits on every rank; what differs between
 * the reduction modes is only how per-sample gradients are summed:
 *   plain   f32, samples in index order within a rank, then the allreduce;
 *   exact   each per-sample gradient added exactly into wide fixed-point
 *           accumulators (tp/fixed.h), summed across ranks exactly, rounded
 *           once: the same bits for any rank count and any timing;
 *   arrival f32, ranks' partial sums added in the order they became ready
 *           (what a naive implementation does): timing changes the bits. */
#ifndef TP_MODEL_H
#define TP_MODEL_H

#include <stddef.h>
#include <stdint.h>

#define TP_MODEL_MAGIC 0x74706d64u /* "tpmd" */

/* The parameter vector holds dim weights then the bias: dim + 1 floats.
 * Gradient vectors have dim + 2 floats: the parameters' gradients, then the
 * summed loss of the samples (so the loss travels with the gradient). */
static inline size_t tp_model_params(unsigned dim)
{
    return (size_t)dim + 1;
}
static inline size_t tp_model_grad_len(unsigned dim)
{
    return (size_t)dim + 2;
}

/* Bytes a record needs for dim features: 20 + 4 * dim, a header (uint32
 * magic, uint32 dim, uint64 index, float label) and the features (layout in
 * src/step/model.c). Records may be larger: padding up to the preset's
 * sample size. Keep record sizes a multiple of 4 when records lie back to
 * back, so that every record's floats stay aligned (see _parse). */
size_t tp_model_record_min(unsigned dim);

/* Fill rec (record_size >= tp_model_record_min(dim); any alignment) with
 * sample index of the dataset of seed: features x_j in [-1, 1), label 0 or
 * 1 drawn from a logistic model whose true weights also come from the seed
 * (scaled so the true logit's spread does not depend on dim). The padding
 * after the features is tp_pattern_fill(..., seed ^ index), so a reader can
 * check it with tp_pattern_check. */
void tp_model_record_fill(void *rec, size_t record_size, uint64_t seed, uint64_t index,
                          unsigned dim);

/* Check rec is sample index of dimension dim (magic, dim and index); point
 * *x at its features (inside rec) and set *label. Returns 0, or -1 when the
 * header is wrong or rec is not 4-byte aligned (its floats could not be read
 * in place); *x and *label are then unchanged. The padding is not checked. */
int tp_model_record_parse(const void *rec, unsigned dim, uint64_t index, const float **x,
                          float *label);

/* Initial parameters (dim + 1 floats) for the seed: weights uniform in
 * [-1/128, 1/128), bias 0. */
void tp_model_init(float *w, unsigned dim, uint64_t seed);

/* One sample's gradient and loss, in f32, in a fixed order: out[0..dim]
 * the parameters' gradients, out[dim + 1] the loss (cross-entropy), so out
 * holds tp_model_grad_len(dim) floats. With z = (sum of w_j x_j, left to
 * right) + bias and p = sigmoid(z): out[j] = (p - label) x_j, out[dim] =
 * p - label; the loss is computed from z (softplus), so it stays finite and
 * accurate when p rounds to 0 or 1. */
void tp_model_sample_grad(const float *w, unsigned dim, const float *x, float label, float *out);

/* w[j] -= lr * (gsum[j] / nsamples) for the dim + 1 parameters (gsum is
 * the summed gradient over nsamples samples; its loss slot is ignored), in
 * f32, in that order. nsamples 0 leaves w unchanged. */
void tp_model_update(float *w, unsigned dim, const float *gsum, uint64_t nsamples, float lr);

/* SHA-256 of the parameters' bytes ((dim + 1) * 4, host byte order) as 64
 * lowercase hex digits and a NUL. */
void tp_model_sha256(const float *w, unsigned dim, char hex[65]);

/* Distance in units in the last place between two floats (0 when the
 * bits are equal; +0 and -0 are 0 apart); NaN against anything is
 * UINT64_MAX. */
uint64_t tp_ulps_f32(float a, float b);

#endif
