/* The screen tier (the default): the prolog's rounds, a groups pass (every
 * node in one small group collective: the fleet's own distribution of a
 * collective, so a fault only collectives show is found without a
 * baseline) and k random perfect matchings (each node meets k partners
 * besides its ring neighbours, every one distinct). O(k) rounds. */
#include "triage_int.h"

const struct tp__triage_tier tp__triage_tier_screen = {
    "screen",
    {
        [TP_TRIAGE_GANG] = tp__triage_one_round,
        [TP_TRIAGE_RING] = tp__triage_ring_rounds,
        [TP_TRIAGE_GROUPS] = tp__triage_groups_rounds,
        [TP_TRIAGE_MATCH] = tp__triage_matchings,
    },
};
