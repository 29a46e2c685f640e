/* The shared-memory channel's streaming stores (src/fabric/stream.c), white
 * box: every head alignment and length around the 16-byte stores and the
 * 64-byte lines, guard bytes on both sides; a combine in pieces through
 * the bounce buffer, whole elements per call (a 48-byte element, as the
 * wide fixed-point words are, does not divide the buffer), in place and
 * out of place, the same bytes as one direct call. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "tp_test.h"
#include "chan_int.h"

#define GUARD 64

static void fill(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)tp_test_rnd();
}

static void copy_every_alignment_and_length(void **state)
{
    (void)state;
    static const size_t lens[] = {0,  1,   15,  16,  17,  63,   64,   65,   79,
                                  80, 127, 128, 129, 200, 4095, 4096, 4097, 70001};
    tp_test_rng = 1;
    size_t cap = 70001 + 2 * GUARD + 64;
    uint8_t *src = malloc(cap), *dst = malloc(cap);
    assert_non_null(src);
    assert_non_null(dst);
    for (size_t k = 0; k < sizeof lens / sizeof *lens; k++)
        for (size_t head = 0; head < 18; head++)
            for (size_t sh = 0; sh < 3; sh++) { /* source alignment too */
                size_t n = lens[k];
                fill(src, cap);
                memset(dst, 0xee, cap);
                tp__fabric_stream_copy(dst + GUARD + head, src + sh, n);
                tp__fabric_stream_fence();
                if (memcmp(dst + GUARD + head, src + sh, n) != 0)
                    fail_msg("copy of %zu bytes at head %zu, source +%zu differs", n, head, sh);
                for (size_t i = 0; i < GUARD + head; i++)
                    if (dst[i] != 0xee)
                        fail_msg("copy of %zu at head %zu wrote %zu bytes before", n, head,
                                 GUARD + head - i);
                for (size_t i = GUARD + head + n; i < cap; i++)
                    if (dst[i] != 0xee)
                        fail_msg("copy of %zu at head %zu wrote past the end", n, head);
            }
    free(src);
    free(dst);
}

/* an elementwise combine that notices a call on part of an element */
struct elem {
    size_t esize;
    int calls;
};

static void mix(void *arg, void *dst, const void *a, const void *b, size_t bytes)
{
    struct elem *e = arg;
    e->calls++;
    if (bytes % e->esize)
        fail_msg("combine called on %zu bytes: not whole %zu-byte elements", bytes, e->esize);
    uint8_t *d = dst;
    const uint8_t *x = a, *y = b;
    for (size_t i = 0; i < bytes; i++)
        d[i] = (uint8_t)(x[i] * 3u + y[i] + (uint8_t)(i % e->esize));
}

static void combine_whole_elements_any_size(void **state)
{
    (void)state;
    static const size_t esizes[] = {2, 4, 8, 48};
    static const size_t counts[] = {1, 7, 85, 86, 1000, 3001};
    tp_test_rng = 2;
    size_t cap = 3001 * 48 + 2 * GUARD;
    uint8_t *a = malloc(cap), *b = malloc(cap), *want = malloc(cap), *got = malloc(cap);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(want);
    assert_non_null(got);
    for (size_t s = 0; s < sizeof esizes / sizeof *esizes; s++)
        for (size_t c = 0; c < sizeof counts / sizeof *counts; c++)
            for (int in_place = 0; in_place < 2; in_place++) {
                size_t es = esizes[s], n = counts[c] * es;
                struct elem e = {es, 0};
                struct tp_chan_combine cb = {.fn = mix, .arg = &e, .esize = es};
                fill(a, cap);
                fill(b, cap);
                mix(&e, want, a, b, n);
                memset(got, 0xee, cap);
                uint8_t *dst = got + GUARD + 8; /* not 16-aligned */
                if (in_place)
                    memcpy(dst, a, n);
                e.calls = 0;
                tp__fabric_stream_combine(&cb, dst, in_place ? dst : a, b, n);
                tp__fabric_stream_fence();
                if (memcmp(dst, want, n) != 0)
                    fail_msg("combine of %zu x %zu bytes (%s) differs", counts[c], es,
                             in_place ? "in place" : "out of place");
                if (got[GUARD + 7] != 0xee || dst[n] != 0xee)
                    fail_msg("combine of %zu x %zu bytes wrote outside dst", counts[c], es);
                if (n > 4096 && e.calls < 2)
                    fail_msg("%zu bytes in %d call(s): not through the bounce buffer", n, e.calls);
            }
    free(a);
    free(b);
    free(want);
    free(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(copy_every_alignment_and_length),
        cmocka_unit_test(combine_whole_elements_any_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
