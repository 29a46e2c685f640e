/* The reduction kernels of the collectives (src/coll/reduce.c): dst op= src
 * for every element type and operator of include/tp/dtype.h. bf16 and f16 are
 * stored as their 16-bit encodings and reduced through float, rounding to
 * nearest-even after every operation, as NCCL does; the order of operations
 * is fixed by the algorithm, so plain mode is deterministic for a fixed
 * configuration. Integer sums wrap (two's complement); integer avg
 * truncates toward zero. */
#ifndef TP_REDUCE_H
#define TP_REDUCE_H

#include <stdbool.h>
#include <stddef.h>

#include "tp/dtype.h"

/* dst[i] = dst[i] op src[i] for n elements. avg reduces as sum (the
 * division happens once, in tp_reduce_finish). */
void tp_reduce(enum tp_dtype t, enum tp_redop op, void *dst, const void *src, size_t n);

/* dst[i] = a[i] op b[i] (dst may alias a or b). The plain types' kernels
 * run at the widest vector width this CPU has (AVX-512, AVX2, baseline),
 * the same bits at every width. */
void tp_reduce3(enum tp_dtype t, enum tp_redop op, void *dst, const void *a, const void *b,
                size_t n);

/* The final step of op over nranks contributions: avg divides by nranks;
 * every other op leaves buf as it is. */
void tp_reduce_finish(enum tp_dtype t, enum tp_redop op, void *buf, size_t n, int nranks);

/* The instruction set the kernels use ("avx512", "avx2", "baseline"). */
const char *tp_reduce_kernel(void);

/* Use the kernels of instruction set name from now on (the tests compare
 * them); false, changing nothing, when there is none of that name or this
 * CPU cannot run it. */
bool tp_reduce_use(const char *name);

#endif
