/* The SDC screen's parts, shared by the files of src/sdc/: one chain's
 * state and its step (chain.c, compiled with -ffp-contract=off), the
 * checkpoints kept of a chain (checkpoints.c), the test hook's flip
 * (hook.c). Internal to the library. */
#ifndef TP_SDC_INT_H
#define TP_SDC_INT_H

#include <stdint.h>

#include <jansson.h>

#include "tp/error.h"
#include "tp/sdc.h"

/* Where a chain's products are computed: NULL, on this core in chain.c's
 * fixed order; else by a device (a GPU, run.c), product(ctx, x, y) being
 * y = x w with the weights the device was given (st->w after init). */
struct tp__sdc_device {
    int (*product)(void *ctx, const float *x, float *y, tp_error *err);
    void *ctx;
};

/* One chain under way: the seeded weights, this step's input and result,
 * the exact sums' scratch, the last step's hash. */
struct tp__sdc_state {
    uint64_t seed;
    const struct tp__sdc_device *dev;
    float *x, *w, *y;    /* TP_SDC_N x TP_SDC_N each, row-major */
    float *sums;         /* TP_SDC_N column sums of y */
    int64_t *ints;       /* y at the sums' unit */
    unsigned char h[32]; /* the last step's SHA-256 (the seed's before the first) */
};

/* The state of seed before step 1, its products on dev (NULL: this core):
 * its weights and first input drawn, h the seed's own hash (a device
 * chain's starts from another, so it never passes for a CPU chain).
 * Returns 0 or TP_ENOMEM (nothing left held). */
int tp__sdc_init(struct tp__sdc_state *st, uint64_t seed, const struct tp__sdc_device *dev,
                 tp_error *err);

/* Step s (1, 2, ...; in order): flip (when >= 0) is the bit of the input
 * the test hook flips first. Leaves the step's hash in st->h. Returns 0,
 * or the device's error (a CPU chain cannot fail). */
int tp__sdc_step(struct tp__sdc_state *st, uint64_t s, int64_t flip, tp_error *err);

void tp__sdc_fini(struct tp__sdc_state *st);

/* The bit flipped at step s by f (NULL: none) in the chain of thread t
 * (gpu < 0) or of GPU gpu, or -1. */
int64_t tp__sdc_flip(const struct tp_sdc_fault *f, int t, int gpu, uint64_t s);

/* Keep step s's hash h in c (its first 8 bytes) and as c's final hash.
 * Returns 0 or TP_ENOMEM. */
int tp__sdc_keep(struct tp_sdc_chain *c, uint64_t s, const unsigned char h[32], tp_error *err);

/* ---- gpu.c: the chains on GPUs (sdc --gpu) ---- */

struct tp__sdc_gpus;

/* Open every GPU of this host (the path built, cuBLAS loaded; the
 * emulated ones under TP_GPU_EMULATE) into *out. Returns 0, or
 * tp_gpu_open's error naming "sdc --gpu" (TP_EUSAGE: not built, no
 * device). */
int tp__sdc_gpus_open(struct tp__sdc_gpus **out, tp_error *err);

/* The GPUs opened. */
int tp__sdc_gpus_count(const struct tp__sdc_gpus *s);

/* GPU d's products, for tp__sdc_init. */
const struct tp__sdc_device *tp__sdc_gpus_device(const struct tp__sdc_gpus *s, int d);

/* Give GPU d the chain's weights w (st->w after tp__sdc_init), from the
 * thread that will run its chain. Returns 0 or the device's error. */
int tp__sdc_gpus_prepare(struct tp__sdc_gpus *s, int d, const float *w, tp_error *err);

/* Judge the GPUs' chains c[0 .. count), the GPUs of one key (name, compute
 * capability, SMs, cuBLAS version) against their majority: the rows into
 * results' "gpus_detail", each key's chain into "gpu_chains" ({key, gpus,
 * majority, chain}). Returns 0, TP_ECHECK naming the first GPU that
 * diverged (or that they have no majority), TP_ENOMEM. */
int tp__sdc_gpus_judge(const struct tp__sdc_gpus *s, const struct tp_sdc_chain *c,
                       json_t *results, tp_error *err);

void tp__sdc_gpus_close(struct tp__sdc_gpus *s);

#endif
