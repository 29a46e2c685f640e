/* This machine's memory-copy bandwidth, the yardstick of a shared-memory
 * collective: memcpy of N bytes at a time (default 1M, 16M, 64M) through a
 * region of 256 MiB (or 2 N, whichever is larger), cut into slots of N
 * bytes and touched first: each copy goes from one slot to the next, so
 * the source was last touched 256 MiB of copies ago and comes from memory,
 * not from the cache (the L3 here is 32 MiB), as a collective's fresh
 * buffers do. On the calling core; the copies repeat for about 200 ms,
 * five times, the fastest rate printed, as bytes copied per second (GB/s
 * = 1e9 B/s), one line a size: "SIZE_BYTES GBPS". bench/coll-vs-mpi.sh
 * divides the shared-memory busbw by it. Not a test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp/clock.h"
#include "tp/units.h"

#define REGION (256ull << 20)

int main(int argc, char **argv)
{
    static const char *const dflt[] = {"1M", "16M", "64M"};
    int n = argc > 1 ? argc - 1 : 3;
    for (int i = 0; i < n; i++) {
        const char *arg = argc > 1 ? argv[i + 1] : dflt[i];
        uint64_t size = 0;
        tp_error err = {0};
        if (tp_parse_size(arg, "size", &size, &err) != 0 || size == 0) {
            fprintf(stderr, "memcpy_bw: %s: %s\n", arg, err.msg[0] ? err.msg : "not a size");
            return 2;
        }
        uint64_t slots = REGION / size < 2 ? 2 : REGION / size;
        char *r = malloc(slots * size);
        if (!r) {
            fprintf(stderr, "memcpy_bw: %s: out of memory\n", arg);
            return 2;
        }
        memset(r, 1, slots * size);
        double best = 0;
        uint64_t at = 0;
        for (int run = 0; run < 5; run++) {
            uint64_t t0 = tp_now_ns(), t1, reps = 0;
            do {
                uint64_t next = (at + 1) % slots;
                memcpy(r + next * size, r + at * size, size);
                at = next;
                reps++;
                t1 = tp_now_ns();
            } while (t1 - t0 < 200000000ull);
            double gbps = (double)size * (double)reps / (double)(t1 - t0);
            best = gbps > best ? gbps : best;
        }
        printf("%llu %.3f\n", (unsigned long long)size, best);
        free(r);
    }
    return 0;
}
