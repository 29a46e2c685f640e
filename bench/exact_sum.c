/* Cost of exact (reproducible) summation against a plain loop, per element,
 * on this machine: the price `coll --repro exact` will pay in its reduction.
 * Not a test; run `build/exact_sum [N]` (make bench runs it). Buffers are touched before
 * timing; each variant runs 5 times and the fastest is kept. */
#include <stdio.h>
#include <stdlib.h>

#include "tp/clock.h"
#include "tp/exact.h"

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 16u << 20;
    double *x = malloc(n * sizeof *x);
    float *f = malloc(n * sizeof *f);
    if (!x || !f)
        return 1;
    uint64_t s = 88172645463325252ull;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        x[i] = ((double)(s >> 11) / 9007199254740992.0 - 0.5) * 1e6;
        f[i] = (float)x[i];
    }
    tp_clock_init();
    double best[3] = {1e30, 1e30, 1e30}, plain = 0, exact = 0;
    float exact32 = 0;
    for (int rep = 0; rep < 5; rep++) {
        uint64_t t0 = tp_now_ns();
        double acc = 0;
        for (size_t i = 0; i < n; i++)
            acc += x[i];
        uint64_t t1 = tp_now_ns();
        tp_exact e;
        tp_exact_zero(&e);
        tp_exact_add_f64(&e, x, n);
        exact = tp_exact_f64(&e);
        uint64_t t2 = tp_now_ns();
        tp_exact_zero(&e);
        tp_exact_add_f32(&e, f, n);
        exact32 = tp_exact_f32(&e);
        uint64_t t3 = tp_now_ns();
        plain = acc;
        double d[3] = {(double)(t1 - t0), (double)(t2 - t1), (double)(t3 - t2)};
        for (int k = 0; k < 3; k++)
            if (d[k] < best[k])
                best[k] = d[k];
    }
    printf("exact summation of %zu values (fastest of 5)\n", n);
    printf("  plain double loop : %6.2f ns/value  sum %.17g\n", best[0] / (double)n, plain);
    printf("  exact, f64 input  : %6.2f ns/value  sum %.17g  (%.1fx plain)\n", best[1] / (double)n,
           exact, best[1] / best[0]);
    printf("  exact, f32 input  : %6.2f ns/value  sum %.9g\n", best[2] / (double)n,
           (double)exact32);
    free(x);
    free(f);
    return 0;
}
