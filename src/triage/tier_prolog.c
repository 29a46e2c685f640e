/* The prolog tier: what fits a Slurm prolog at any scale. One gang
 * collective over every node (the whole fabric loaded at once), then the
 * ring pass: each node with both its ring neighbours, both directions, in
 * two rounds (three for an odd count). Its rounds do not grow with n. */
#include "triage_int.h"

const struct tp__triage_tier tp__triage_tier_prolog = {
    "prolog",
    {
        [TP_TRIAGE_GANG] = tp__triage_one_round,
        [TP_TRIAGE_RING] = tp__triage_ring_rounds,
    },
};
