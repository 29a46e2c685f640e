/* Helpers for the unit tests: assertions that print both values, and seeded
 * random numbers (splitmix64, a fixed portable stream, so a failure
 * reproduces from its seed). Header-only; include after cmocka.h. */
#ifndef TP_TEST_UTIL_H
#define TP_TEST_UTIL_H

#include <math.h>
#include <stdint.h>

/* Assertions that print both values (cmocka prints integers in hex). */
#define EQ_U64(a, b)                                                                               \
    do {                                                                                           \
        unsigned long long a_ = (a), b_ = (b);                                                     \
        if (a_ != b_)                                                                              \
            fail_msg("%s = %llu, expected %s = %llu", #a, a_, #b, b_);                             \
    } while (0)

/* |a - b| <= tol * |b|, relative */
#define NEAR(a, b, tol)                                                                            \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (!(fabs(a_ - b_) <= (tol)*fabs(b_)))                                                    \
            fail_msg("%s = %.17g, expected %s = %.17g (relative tolerance %g)", #a, a_, #b, b_,    \
                     (double)(tol));                                                               \
    } while (0)

static uint64_t rng_state;

static inline uint64_t rnd(void)
{
    uint64_t z = (rng_state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* uniform in (0, 1) */
static inline double unif(void)
{
    return ((double)(rnd() >> 11) + 0.5) / 9007199254740992.0;
}

static inline double normal(void)
{
    return sqrt(-2 * log(unif())) * cos(2 * M_PI * unif());
}

#endif
