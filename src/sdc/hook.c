/* The SDC screen's test hook, TP_FAULT_SDC=RANK:STEP[:BIT[:THREAD]]
 * (docs/env.md): silent data corruption planted on purpose, so the tests
 * see the screen name the node or the core it was planted in, with the
 * step. Read where the chain runs; validate hands it to the node it names
 * (src/validate/sdc.c). */
#include <errno.h>
#include <stdlib.h>

#include "sdc_int.h"

#define DEFAULT_BIT 22 /* the highest fraction bit of the first element */

int tp_sdc_fault_env(int rank, struct tp_sdc_fault *f, tp_error *err)
{
    *f = (struct tp_sdc_fault){.bit = DEFAULT_BIT, .thread = -1};
    const char *v = getenv("TP_FAULT_SDC");
    if (!v)
        return 0;
    uint64_t field[4] = {0};
    int nf = 0;
    const char *p = v;
    while (nf < 4) {
        char *end;
        errno = 0;
        if (*p < '0' || *p > '9')
            break;
        field[nf++] = strtoull(p, &end, 10);
        if (errno || (*end && *end != ':'))
            break;
        p = end + (*end == ':');
        if (!*end) {
            p = end;
            break;
        }
    }
    if (nf < 2 || *p || field[1] < 1 || field[1] > TP_SDC_MAX_STEPS ||
        field[2] >= (nf > 2 ? (uint64_t)TP_SDC_N * TP_SDC_N * 32 : 1) ||
        field[3] >= (nf > 3 ? TP_SDC_MAX_THREADS : 1))
        return tp_error_set(err, TP_EUSAGE,
                            "TP_FAULT_SDC=%s: RANK:STEP[:BIT[:THREAD]], STEP "
                            "from 1, BIT below %d, THREAD below %d (the test hook, docs/env.md)",
                            v, TP_SDC_N * TP_SDC_N * 32, TP_SDC_MAX_THREADS);
    if (field[0] != (uint64_t)rank)
        return 0;
    f->step = field[1];
    if (nf > 2)
        f->bit = (uint32_t)field[2];
    if (nf > 3)
        f->thread = (int)field[3];
    return 0;
}

int64_t tp__sdc_flip(const struct tp_sdc_fault *f, int t, uint64_t s)
{
    return f && f->step == s && (f->thread < 0 || f->thread == t) ? (int64_t)f->bit : -1;
}
