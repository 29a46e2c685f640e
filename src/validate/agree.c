/* What the nodes of an allocation agree on, in O(N) bytes: a failure of
 * one fails all with its words (each node's word to rank 0, a gather;
 * rank 0's verdict to all, a broadcast), and rank 0's outcome of a step
 * only it takes, followed by all. An allgather of a word each would send
 * every node every node's word: N² bytes out of rank 0 over a star. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validate_int.h"

int tp__validate_agree(struct tp_boot *b, int rc, int code, bool keep_own, tp_error *err)
{
    char mine[600] = "", first[900] = "", **all = NULL, *verdict = NULL;
    if (rc)
        snprintf(mine, sizeof mine, "%.590s", err->msg[0] ? err->msg : "failed");
    int grc = tp_boot_gather(b, mine, &all, err);
    if (grc)
        return grc;
    for (int r = 0; all && r < tp_boot_size(b); r++) /* rank 0 */
        if (all[r] && all[r][0]) {
            snprintf(first, sizeof first, "node %s (rank %d): %.700s", tp_boot_host(b, r), r,
                     all[r]);
            break;
        }
    if (all)
        tp_boot_free_strings(all, tp_boot_size(b));
    if ((grc = tp_boot_bcast(b, first, &verdict, err)))
        return grc;
    if (verdict[0] && !(rc && keep_own))
        rc = tp_error_set(err, code, "%s", verdict);
    free(verdict);
    return rc;
}

int tp__validate_follow(struct tp_boot *b, int rc, tp_error *err)
{
    char word[700] = "", *got = NULL;
    if (tp_boot_rank(b) == 0 && rc)
        snprintf(word, sizeof word, "%d %.680s", err->code, err->msg);
    int grc = tp_boot_bcast(b, word, &got, err);
    if (grc)
        return grc;
    int code = 0, used = 0;
    if (got[0] && sscanf(got, "%d %n", &code, &used) >= 1 && code)
        rc = tp_error_set(err, code, "%s", got + used);
    else
        rc = 0;
    free(got);
    return rc;
}
