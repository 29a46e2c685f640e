/* The SDC screen's parts, shared by the files of src/sdc/: one chain's
 * state and its step (chain.c, compiled with -ffp-contract=off), the
 * checkpoints kept of a chain (checkpoints.c), the test hook's flip
 * (hook.c). Internal to the library. */
#ifndef TP_SDC_INT_H
#define TP_SDC_INT_H

#include <stdint.h>

#include "tp/error.h"
#include "tp/sdc.h"

/* One chain under way: the seeded weights, this step's input and result,
 * the exact sums' scratch, the last step's hash. */
struct tp__sdc_state {
    uint64_t seed;
    float *x, *w, *y;    /* TP_SDC_N x TP_SDC_N each, row-major */
    float *sums;         /* TP_SDC_N column sums of y */
    int64_t *ints;       /* y at the sums' unit */
    unsigned char h[32]; /* the last step's SHA-256 (the seed's before the first) */
};

/* The state of seed before step 1: its weights and first input drawn,
 * h the seed's own hash. Returns 0 or TP_ENOMEM (nothing left held). */
int tp__sdc_init(struct tp__sdc_state *st, uint64_t seed, tp_error *err);

/* Step s (1, 2, ...; in order): flip (when >= 0) is the bit of the input
 * the test hook flips first. Leaves the step's hash in st->h. */
void tp__sdc_step(struct tp__sdc_state *st, uint64_t s, int64_t flip);

void tp__sdc_fini(struct tp__sdc_state *st);

/* The bit flipped in thread t's chain at step s by f (NULL: none), or -1. */
int64_t tp__sdc_flip(const struct tp_sdc_fault *f, int t, uint64_t s);

/* Keep step s's hash h in c (its first 8 bytes) and as c's final hash.
 * Returns 0 or TP_ENOMEM. */
int tp__sdc_keep(struct tp_sdc_chain *c, uint64_t s, const unsigned char h[32], tp_error *err);

#endif
