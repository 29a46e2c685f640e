/* The SDC screen's test hook, TP_FAULT_SDC=RANK:STEP[:BIT[:THREAD|gGPU]]
 * (docs/env.md): silent data corruption planted on purpose, so the tests
 * see the screen name the node or the core it was planted in, with the
 * step. Read where the chain runs; validate hands it to the node it names
 * (src/validate/sdc.c). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "sdc_int.h"

#define DEFAULT_BIT 22 /* the highest fraction bit of the first element */

int tp_sdc_fault_env(int rank, struct tp_sdc_fault *f, tp_error *err)
{
    *f = (struct tp_sdc_fault){.bit = DEFAULT_BIT, .thread = -1, .gpu = -1};
    const char *v = getenv("TP_FAULT_SDC");
    if (!v)
        return 0;
    uint64_t field[4] = {0};
    int nf = 0;
    bool gpu = false; /* the fourth field is gK: GPU K's chain */
    const char *p = v;
    while (nf < 4) {
        char *end;
        errno = 0;
        if (nf == 3 && *p == 'g') {
            gpu = true;
            p++;
        }
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
    if (nf < 2 || *p || (gpu && nf < 4) || field[1] < 1 || field[1] > TP_SDC_MAX_STEPS ||
        field[2] >= (nf > 2 ? (uint64_t)TP_SDC_N * TP_SDC_N * 32 : 1) ||
        field[3] >= (nf > 3 ? TP_SDC_MAX_THREADS : 1))
        return tp_error_set(err, TP_EUSAGE,
                            "TP_FAULT_SDC=%s: RANK:STEP[:BIT[:THREAD|gGPU]], STEP from 1, BIT "
                            "below %d, THREAD and GPU below %d (the test hook, docs/env.md)",
                            v, TP_SDC_N * TP_SDC_N * 32, TP_SDC_MAX_THREADS);
    if (field[0] != (uint64_t)rank)
        return 0;
    f->step = field[1];
    if (nf > 2)
        f->bit = (uint32_t)field[2];
    if (nf > 3 && gpu) {
        f->thread = -2; /* no core's */
        f->gpu = (int)field[3];
    } else if (nf > 3) {
        f->thread = (int)field[3];
        f->gpu = -2; /* no GPU's */
    }
    return 0;
}

int64_t tp__sdc_flip(const struct tp_sdc_fault *f, int t, int gpu, uint64_t s)
{
    if (!f || f->step != s)
        return -1;
    bool hit = gpu < 0 ? f->thread == -1 || f->thread == t : f->gpu == -1 || f->gpu == gpu;
    return hit ? (int64_t)f->bit : -1;
}
