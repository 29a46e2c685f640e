/* The delays `trainpath step --inject-delay` adds: drawn per rank and step
 * from the rank's own stream (seeded by rank and run, so each run sees other
 * timing while the data and the weights stay the same), and slept where
 * they were injected (the loader, the comm thread, the compute). */
#include <math.h>
#include <time.h>

#include "step_int.h"
#include "tp/clock.h"
#include "tp/intr.h"
#include "tp/pattern.h"

/* in naps of at most 10 ms: the signal may land on another thread, where
 * it does not cut this one's nanosleep short */
void tp__step_sleep_ns(uint64_t ns)
{
    uint64_t end = tp_now_ns() + ns, now;
    while (!tp_intr_signal() && (now = tp_now_ns()) < end) {
        uint64_t nap = end - now < 10000000u ? end - now : 10000000u;
        struct timespec ts = {0, (long)nap};
        nanosleep(&ts, NULL);
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
