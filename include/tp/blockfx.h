/* Block fixed-point: the fast path of reproducible sums ("--repro exact",
 * docs/reproducibility.md). The elements of a message are grouped in blocks
 * of TP_BFX_BLOCK from its first element. Within a block whose values (on
 * every rank) span few enough binades, each value is exactly one 64-bit
 * two's-complement integer at a unit the ranks agree on, 2^(lsb - bias -
 * mbits) ("position" lsb); integers add exactly, in any order and grouping,
 * and the sum is rounded once to the format. The result is the correctly
 * rounded exact sum, the same bits as the wide representation's
 * (include/tp/fixed.h), which stays the path of the other blocks (a NaN or
 * an infinity in them, or values too far apart).
 *
 * Positions: a finite value of a format (mbits fraction bits, exponent
 * field e, bias) is M * 2^(q - bias - mbits) with q = max(e, 1) and M its
 * significand (the hidden bit included for e > 0); M's lowest set bit is at
 * position q + ctz(M), its highest at q + bitlen(M) - 1.
 *
 * Only f32, bf16 and f16 (their 16-bit encodings for the latter two). */
#ifndef TP_BLOCKFX_H
#define TP_BLOCKFX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tp/dtype.h"

#define TP_BFX_BLOCK 1024     /* elements a block */
#define TP_BFX_NONFINITE 0x7fffffff /* a span's hi when the block holds a NaN or an infinity */
#define TP_BFX_NL 4096        /* a span's nl is TP_BFX_NL - the lowest set bit's position */

/* The kernels that do the work, by name ("avx512", "avx2", "scalar"), best first,
 * NULL-terminated; the first this CPU can run is used. */
const char *const *tp_bfx_kernels(void);

/* Use kernel name from now on (the tests and bench/exact_sum compare
 * them); false, changing nothing, when there is none of that name or this
 * CPU cannot run it. */
bool tp_bfx_use(const char *name);

/* The kernel in use. */
const char *tp_bfx_kernel(void);

/* Whether t has a block fixed-point path (f32, bf16, f16). */
bool tp_bfx_supports(enum tp_dtype t);

/* The blocks of n elements: ceil(n / TP_BFX_BLOCK). */
size_t tp_bfx_blocks(size_t n);

/* This rank's span of each block of in[0..n) (type t): the positions its
 * nonzero finite elements can hold, into span[2b] (hi: the hidden bit's
 * position of the largest magnitude's exponent, q + mbits; 0 when every
 * element is zero; TP_BFX_NONFINITE when one is NaN or infinite) and
 * span[2b + 1] (nl: TP_BFX_NL minus the smallest nonzero magnitude's q,
 * the position of its significand's bit 0; 0 when every element is zero).
 * Every kernel gives the same spans. The ranks' spans combine by an
 * element-wise maximum (an allreduce, max, i32). */
void tp_bfx_scan(enum tp_dtype t, const void *in, size_t n, int32_t *span);

/* The position of a block's unit given its combined span (2 int32) and the
 * rank count: > 0 when the block takes the fast path (every rank's values
 * and their sum fit one int64 each: width + ceil(log2 nranks) + 1 sign bit
 * <= 64); 0 when it must take the wide path (a NaN or an infinity, or too
 * wide). An all-zero block is fast (unit 1). */
int tp_bfx_unit(const int32_t *span, int nranks);

/* out[i] = in[i] (type t) as an integer at unit position lsb, exactly (lsb
 * from tp_bfx_unit of the block holding it, every element finite and within
 * the span). */
void tp_bfx_load(enum tp_dtype t, const void *in, size_t n, int lsb, int64_t *out);

/* out[i] (type t) = in[i] * 2^(lsb - bias - mbits) / divisor, rounded once
 * to nearest, ties to even (divisor 1 for sum, the rank count for avg; 0
 * is 1); results past the format's largest finite value round to infinity,
 * subnormal results are rounded correctly too; an exact zero gives +0. */
void tp_bfx_store(enum tp_dtype t, const int64_t *in, size_t n, int lsb, uint32_t divisor,
                  void *out);

/* Elements [from, to) of a message (type t; in is the message's element
 * 0) as int64s at their block's unit into out[0 .. to - from): unit[b] is
 * block b's (tp_bfx_unit; the blocks counted from the message's element
 * 0); a block whose unit is 0 (the wide path's) loads as zeros. */
void tp_bfx_load_range(enum tp_dtype t, const int *unit, const void *in, size_t from, size_t to,
                       int64_t *out);

/* out[0 .. to - from) (type t) = the int64 sums in[0 .. to - from) of the
 * message's elements [from, to), each rounded once at its block's unit
 * and divided by divisor (tp_bfx_store; a power of two is a shift of the
 * unit); a block whose unit is 0 is left as it is in out. */
void tp_bfx_store_range(enum tp_dtype t, const int *unit, const int64_t *in, size_t from,
                        size_t to, uint32_t divisor, void *out);

/* out[i] (type t) = the exact sum of in[0][i] .. in[nin - 1][i] (i < n),
 * divided by divisor (0 or 1 for a sum) and rounded once to nearest, ties
 * to even: the same bits as the wide representation's (tp_fx_store of the
 * tp_fx_add of every input). Local, no communication: the owner of a slice
 * that holds every rank's values of it sums them here. Blocks of
 * TP_BFX_BLOCK from element 0 take one int64 an element at a unit from
 * their own span where every input and the sum fit (tp_bfx_unit with nin),
 * the wide words where not (a NaN or an infinity, values too far apart);
 * two f32 inputs, one IEEE addition a lane where the kernel has it (the
 * correctly rounded sum of two operands: the same bits, src/coll/bfx_int.h).
 * out may be one of the inputs (element i over element i: every block is
 * read whole before it is written), and overlap none otherwise. ahead:
 * the inputs come from memory, not the cache; each block's successor is
 * prefetched while it is summed (measured: 0.65x the time when the data
 * is past the last-level cache, 1.3x when it is within it). */
void tp_bfx_sum(enum tp_dtype t, const void *const *in, int nin, size_t n, uint32_t divisor,
                bool ahead, void *out);
#endif
