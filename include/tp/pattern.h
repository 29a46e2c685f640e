/* Verifiable payloads: every byte of a message is a function of its offset
 * and a seed, so the receiver checks each byte without a copy of what was
 * sent (nccl-tests' #wrong column, for point-to-point messages). */
#ifndef TP_PATTERN_H
#define TP_PATTERN_H

#include <stddef.h>
#include <stdint.h>

/* splitmix64's output function: a well-mixed 64-bit value of z (the
 * pattern's word generator, and a seeded random stream for callers). */
static inline uint64_t tp_splitmix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Fill buf[0..len) with the pattern for seed. */
void tp_pattern_fill(void *buf, size_t len, uint64_t seed);

/* Check buf against the pattern for seed. Returns 0 when every byte matches;
 * else -1 with the first bad offset and the expected and received bytes. */
int tp_pattern_check(const void *buf, size_t len, uint64_t seed, size_t *bad_off, uint8_t *want,
                     uint8_t *got);

#endif
