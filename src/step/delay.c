/* The delays `trainpath step --inject-delay` adds: drawn per rank and step
 * from the rank's own stream (seeded by rank and run, so each run sees other
 * timing while the data and the weights stay the same), and slept where
 * they were injected (the loader, the comm thread, the compute). */
#include <errno.h>
#include <math.h>
#include <time.h>

#include "step_int.h"
#include "tp/pattern.h"

void tp__step_sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static double uniform(uint64_t *s)
{
    *s = tp_splitmix64(*s);
    return (double)(*s >> 11) * 0x1.0p-53;
}

uint64_t tp__step_delay_draw(const struct rank *r, uint64_t *rng, enum tp_delay_where where)
{
    uint64_t total = 0;
    for (unsigned i = 0; i < r->o->ndelays; i++) {
        const struct tp_delay *d = &r->o->delays[i];
        if (d->where != where || (d->rank >= 0 && d->rank != r->me))
            continue;
        double u = uniform(rng);
        switch (d->dist) {
        case TP_DELAY_CONST: total += d->ns; break;
        case TP_DELAY_EXP: total += (uint64_t)(-log(1 - u) * (double)d->ns); break;
        case TP_DELAY_SPIKE: total += u < d->p ? d->ns : 0; break;
        }
    }
    return total;
}
