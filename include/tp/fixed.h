/* Reproducible sum and avg of the float dtypes ("--repro exact"): each rank
 * converts its elements exactly into wide two's-complement fixed-point
 * integers, ranks add those integers with plain multiword addition (which
 * associates and commutes, so every algorithm, ordering and rank count gives
 * the same bits), and each element is rounded once, correctly (to nearest,
 * ties to even), to the output type at the end. Unlike tp_exact (exact.h),
 * an element's accumulator is a flat array of words that travels over the
 * wire as it is and merges with a carry loop, the fast path of the mode.
 *
 * Layout of one element, tp_fx_words(t) 64-bit words: the value words,
 * little-endian (word 0 least significant), hold a two's-complement X with
 * value X * 2^lsb, lsb the format's smallest subnormal; the last word counts
 * non-finite inputs in three 21-bit fields (bits 0-20 NaN, 21-41 +inf,
 * 42-62 -inf) that also merge by plain addition, with no carry into or out
 * of the word.
 *
 *   type  value words  lsb     largest finite   headroom above it
 *   f16    1           -24     < 2^16           24 bits (sign included)
 *   bf16   5           -133    < 2^128          59 bits
 *   f32    5           -149    < 2^128          43 bits
 *   f64   34           -1074   < 2^1024         78 bits
 *
 * So up to 2^23 contributions per element add without overflow for every
 * type (2^23 is the f16 limit, the sign bit taking one of its 24 bits), and
 * each counter field holds up to 2^21 - 1 non-finite inputs. An exact zero
 * sum gives +0 (also for -0 + -0): the integers do not remember the sign of
 * zero. Only f32, f64, bf16 and f16 are supported; bf16 and f16 are their
 * 16-bit encodings. */
#ifndef TP_FIXED_H
#define TP_FIXED_H

#include <stddef.h>
#include <stdint.h>

#include "tp/dtype.h"

/* 64-bit words per element, the counter word included: f16 1+1, bf16 and
 * f32 5+1, f64 34+1. Returns 0 for a type this module does not support (the
 * integer types), for which the functions below do nothing. */
size_t tp_fx_words(enum tp_dtype t);

/* acc (n * tp_fx_words(t) words) = the exact value of in[0..n) of type t.
 * Every finite input is exact; a NaN or infinity sets its counter to 1 and
 * the value to 0. */
void tp_fx_load(enum tp_dtype t, uint64_t *acc, const void *in, size_t n);

/* acc += in, element-wise, exactly: a multiword add with carry over the
 * value words, and a plain add of the counter word. acc and in may be the
 * same array. */
void tp_fx_add(enum tp_dtype t, uint64_t *acc, const uint64_t *in, size_t n);

/* out[i] (type t) = acc[i] / divisor rounded once to nearest, ties to even
 * (divisor 1 for sum, the rank count for avg; 0 is taken as 1). NaN if any
 * NaN or both infinities were added; +-inf if only that infinity; a finite
 * result beyond the format rounds to +-inf as IEEE does; subnormal results
 * are correctly rounded too. An exact zero gives +0; a non-zero average
 * below half the smallest subnormal gives a zero of its sign. out may not
 * overlap acc. */
void tp_fx_store(enum tp_dtype t, void *out, const uint64_t *acc, size_t n, uint32_t divisor);

#endif
