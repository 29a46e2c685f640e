/* Element types and reduction operators (src/core/dtype.c): names, sizes,
 * parsing, and the conversions of the 16-bit float formats. bf16 and f16
 * are stored as their 16-bit encodings. The reduction kernels that apply
 * the operators are the collectives' (include/tp/reduce.h). */
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

/* Conversions of float to the 16-bit formats (round to nearest, ties to
 * even; NaN stays NaN). */
uint16_t tp_f32_to_bf16(float f);
uint16_t tp_f32_to_f16(float f);
/* Exact conversions of the 16-bit formats to float (every value is exact). */
float tp_bf16_to_f32(uint16_t h);
float tp_f16_to_f32(uint16_t h);

/* All 65536 f16 encodings as floats (the table tp_f16_to_f32 would give),
 * filled once on first use, thread-safe: for inner loops that convert
 * every element. Never NULL. */
const float *tp_f16_table(void);

#endif
