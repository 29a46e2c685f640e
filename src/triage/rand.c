/* The triage's random draws (include/tp/triage.h): splitmix64 from the
 * triage's seed, so a run is the same for the same seed. */
#include <math.h>

#include "triage_int.h"

uint64_t tp__triage_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double tp__triage_uniform(uint64_t *s)
{
    return (double)(tp__triage_rand(s) >> 11) * 0x1p-53;
}

double tp__triage_normal(uint64_t *s)
{
    double u = tp__triage_uniform(s), v = tp__triage_uniform(s);
    return sqrt(-2 * log(1 - u)) * cos(2 * M_PI * v);
}

void tp__triage_shuffle(int *v, int n, uint64_t *s)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(tp__triage_rand(s) % (uint64_t)(i + 1));
        int x = v[i];
        v[i] = v[j];
        v[j] = x;
    }
}
