/* Element types and reduction operators of the collectives, and the
 * reduction kernels that apply them (src/coll/reduce.c). bf16 and f16 are
 * stored as their 16-bit encodings and reduced through float, rounding to
 * nearest-even after every operation, as NCCL does; the order of operations
 * is fixed by the algorithm, so plain mode is deterministic for a fixed
 * configuration. Integer sums wrap (two's complement); integer avg
 * truncates toward zero. */
#ifndef TP_DTYPE_H
#define TP_DTYPE_H

#include <stddef.h>
#include <stdint.h>

enum tp_dtype { TP_F32, TP_F64, TP_BF16, TP_F16, TP_I32, TP_I64, TP_DTYPE_COUNT };
enum tp_redop { TP_SUM, TP_PROD, TP_MIN, TP_MAX, TP_AVG, TP_REDOP_COUNT };

/* Bytes per element. */
size_t tp_dtype_size(enum tp_dtype t);
/* "f32", "f64", "bf16", "f16", "i32", "i64" / "sum", "prod", "min", "max", "avg". */
const char *tp_dtype_name(enum tp_dtype t);
const char *tp_redop_name(enum tp_redop op);
/* Parse a name; returns -1 when unknown. */
int tp_dtype_parse(const char *s);
int tp_redop_parse(const char *s);
/* True for f32, f64, bf16, f16. */
int tp_dtype_is_float(enum tp_dtype t);

/* Conversions of the 16-bit float formats (round to nearest, ties to even;
 * NaN stays NaN). */
uint16_t tp_f32_to_bf16(float f);
uint16_t tp_f32_to_f16(float f);
float tp_bf16_to_f32(uint16_t h);
float tp_f16_to_f32(uint16_t h);

/* dst[i] = dst[i] op src[i] for n elements. avg reduces as sum (the
 * division happens once, in tp_reduce_finish). */
void tp_reduce(enum tp_dtype t, enum tp_redop op, void *dst, const void *src, size_t n);

/* dst[i] = a[i] op b[i] (dst may alias a or b). */
void tp_reduce3(enum tp_dtype t, enum tp_redop op, void *dst, const void *a, const void *b,
                size_t n);

/* The final step of op over nranks contributions: avg divides by nranks;
 * every other op leaves buf as it is. */
void tp_reduce_finish(enum tp_dtype t, enum tp_redop op, void *buf, size_t n, int nranks);

#endif
