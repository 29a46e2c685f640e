/* Payload pattern: 64-bit word i of a message is splitmix64(seed ^ i), so the
 * pattern is cheap to make and to check (one mix per 8 bytes) and a byte
 * moved, dropped or flipped anywhere shows up. */
#include "tp/pattern.h"

#include <string.h>

void tp_pattern_fill(void *buf, size_t len, uint64_t seed)
{
    unsigned char *p = buf;
    size_t words = len / 8;
    for (size_t i = 0; i < words; i++) {
        uint64_t w = tp_splitmix64(seed ^ i);
        memcpy(p + 8 * i, &w, 8);
    }
    if (len % 8) {
        uint64_t w = tp_splitmix64(seed ^ words);
        memcpy(p + 8 * words, &w, len % 8);
    }
}

int tp_pattern_check(const void *buf, size_t len, uint64_t seed, size_t *bad_off, uint8_t *want,
                     uint8_t *got)
{
    const unsigned char *p = buf;
    size_t words = (len + 7) / 8;
    for (size_t i = 0; i < words; i++) {
        uint64_t w = tp_splitmix64(seed ^ i), r = 0;
        size_t n = i * 8 + 8 <= len ? 8 : len - i * 8;
        memcpy(&r, p + 8 * i, n);
        if (n < 8)
            w &= (~0ull) >> (64 - 8 * n);
        if (r == w)
            continue;
        for (size_t b = 0; b < n; b++) {
            uint8_t wb = (uint8_t)(w >> (8 * b)), rb = (uint8_t)(r >> (8 * b));
            if (wb != rb) {
                if (bad_off)
                    *bad_off = i * 8 + b;
                if (want)
                    *want = wb;
                if (got)
                    *got = rb;
                return -1;
            }
        }
    }
    return 0;
}
