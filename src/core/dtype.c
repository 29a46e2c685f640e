/* Element types and reduction operators (include/tp/dtype.h): their names,
 * sizes and parsing, and the conversions of the 16-bit float formats, which
 * every layer that touches element data needs (the reduction kernels in
 * coll/, the expected values of the sweep, the GPU staging). Conversions
 * round to nearest, ties to even, as the hardware does. */
#include "tp/dtype.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

static const struct {
    const char *name;
    size_t size;
    int is_float;
} dtypes[TP_DTYPE_COUNT] = {
    [TP_F32] = {"f32", 4, 1}, [TP_F64] = {"f64", 8, 1}, [TP_BF16] = {"bf16", 2, 1},
    [TP_F16] = {"f16", 2, 1}, [TP_I32] = {"i32", 4, 0}, [TP_I64] = {"i64", 8, 0},
};
static const char *const redops[TP_REDOP_COUNT] = {"sum", "prod", "min", "max", "avg"};

size_t tp_dtype_size(enum tp_dtype t)
{
    return dtypes[t].size;
}

const char *tp_dtype_name(enum tp_dtype t)
{
    return dtypes[t].name;
}

const char *tp_redop_name(enum tp_redop op)
{
    return redops[op];
}

int tp_dtype_is_float(enum tp_dtype t)
{
    return dtypes[t].is_float;
}

int tp_dtype_parse(const char *s)
{
    for (int i = 0; i < TP_DTYPE_COUNT; i++)
        if (strcmp(s, dtypes[i].name) == 0)
            return i;
    return -1;
}

int tp_redop_parse(const char *s)
{
    for (int i = 0; i < TP_REDOP_COUNT; i++)
        if (strcmp(s, redops[i]) == 0)
            return i;
    return -1;
}

uint16_t tp_f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40); /* quiet NaN, sign kept */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

uint16_t tp_f32_to_f16(float f)
{
#ifdef __FLT16_MAX__
    _Float16 h = (_Float16)f; /* the compiler's conversion rounds to nearest-even */
    uint16_t u;
    memcpy(&u, &h, sizeof u);
    return u;
#else
    /* No _Float16 on this compiler and target (clang before 15 on x86-64):
     * the same round-to-nearest-even in integers (F. Giesen's
     * float_to_half_fast3_rtne), NaN quieted with its top payload bits and
     * sign kept, as the hardware conversion does. */
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint32_t sign = (x >> 16) & 0x8000u;
    x &= 0x7fffffffu;
    if (x > 0x7f800000u)
        return (uint16_t)(sign | 0x7e00u | ((x >> 13) & 0x3ffu));
    if (x >= 0x47800000u) /* 2^16 and above, infinity included */
        return (uint16_t)(sign | 0x7c00u);
    if (x < 0x38800000u) { /* below 2^-14: a subnormal or zero */
        /* adding 0.5 puts the 10 subnormal bits at the bottom of the float's
         * mantissa, and the float addition rounds them to nearest-even */
        const uint32_t magic_bits = 0x3f000000u;
        float magic, sum;
        memcpy(&magic, &magic_bits, sizeof magic);
        memcpy(&sum, &x, sizeof sum);
        sum += magic;
        uint32_t s;
        memcpy(&s, &sum, sizeof s);
        return (uint16_t)(sign | (s - magic_bits));
    }
    x += (uint32_t)(15 - 127) * (1u << 23) + 0xfffu + ((x >> 13) & 1u); /* rebias and round */
    return (uint16_t)(sign | (x >> 13));
#endif
}

float tp_bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

float tp_f16_to_f32(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    float s = (h & 0x8000) ? -1.0f : 1.0f;
    if (e == 0x1f)
        return m ? NAN : s * INFINITY;
    if (e == 0)
        return s * ldexpf((float)m, -24);
    return s * ldexpf((float)(m | 0x400), e - 25);
}

/* f16 -> f32 through a table: the conversion sits in the inner loop of every
 * f16 reduction. Filled once, on first use. */
static float f16_table[65536];
static pthread_once_t f16_once = PTHREAD_ONCE_INIT;

static void fill_f16(void)
{
    for (uint32_t i = 0; i < 65536; i++)
        f16_table[i] = tp_f16_to_f32((uint16_t)i);
}

const float *tp_f16_table(void)
{
    pthread_once(&f16_once, fill_f16);
    return f16_table;
}
