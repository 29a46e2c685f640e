/* The full tier: the gang, the groups pass and every pair once by the
 * circle method (n - 1 rounds; n for an odd count, each node sitting out
 * one): what validate did before the tiers, and the only tier that
 * crosses every link. */
#include "triage_int.h"

const struct tp__triage_tier tp__triage_tier_full = {
    "full",
    {
        [TP_TRIAGE_GANG] = tp__triage_one_round,
        [TP_TRIAGE_GROUPS] = tp__triage_groups_rounds,
        [TP_TRIAGE_PAIRS] = tp__triage_circle_rounds,
    },
};
