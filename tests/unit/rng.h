/* Seeded random numbers for the unit tests: splitmix64, a fixed portable
 * stream, so a failure reproduces from its seed. Header-only, test use. */
#ifndef TP_TEST_RNG_H
#define TP_TEST_RNG_H

#include <math.h>
#include <stdint.h>

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
