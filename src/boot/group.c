/* The group object every backend builds on, mpi included: its allocation
 * and release (tp__boot_new, tp__boot_free), hanging up its connections,
 * the hosts it knows, and the check that two ranks were started with the
 * same options. The star's operations are in star.c, the backends' own in
 * their files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "boot_int.h"

void tp__boot_hang_up(struct tp_boot *b)
{
    if (b->conn)
        for (int r = 0; r < b->size; r++)
            if (b->conn[r].fd >= 0)
                tp_conn_close(&b->conn[r]);
}

void tp__boot_free(struct tp_boot *b)
{
    if (!b)
        return;
    tp__boot_hang_up(b);
    if (b->hosts)
        for (int r = 0; r < b->size; r++)
            free(b->hosts[r]);
    free(b->hosts);
    if (b->gone_why)
        for (int r = 0; r < b->size; r++)
            free(b->gone_why[r]);
    free(b->gone_why);
    free(b->gone);
    free(b->conn);
    free(b->offset);
    free(b->rtt);
    free(b->children);
    sodium_memzero(&b->key, sizeof b->key);
    free(b);
}

struct tp_boot *tp__boot_new(const struct tp_boot_backend *be, int rank, int size,
                             uint64_t timeout_ns)
{
    struct tp_boot *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->be = be;
    b->rank = rank;
    b->size = size;
    b->timeout_ns = timeout_ns;
    b->lost = -1;
    b->local_rank = -1;
    b->conn = calloc((size_t)size, sizeof *b->conn);
    b->hosts = calloc((size_t)size, sizeof *b->hosts);
    b->offset = calloc((size_t)size, sizeof *b->offset);
    b->rtt = calloc((size_t)size, sizeof *b->rtt);
    b->gone = calloc((size_t)size, sizeof *b->gone);
    b->gone_why = rank == 0 ? calloc((size_t)size, sizeof *b->gone_why) : NULL;
    if (!b->conn || !b->hosts || !b->offset || !b->rtt || !b->gone || (rank == 0 && !b->gone_why)) {
        tp__boot_free(b);
        return NULL;
    }
    for (int r = 0; r < size; r++)
        b->conn[r].fd = -1;
    return b;
}

const char *tp__boot_my_host(void)
{
    static char host[256];
    if (!host[0] && gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "?");
    return host;
}

const char *tp__boot_host(const struct tp_boot *b, int r)
{
    return r >= 0 && r < b->size && b->hosts[r] ? b->hosts[r] : "?";
}

bool tp__boot_options_differ(const json_t *ours, const json_t *theirs, char *what, size_t cap)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)ours, k, v)
    {
        json_t *t = json_object_get(theirs, k);
        if (!t || !json_equal(v, t)) {
            char *a = json_dumps(t ? t : json_null(), JSON_ENCODE_ANY | JSON_COMPACT);
            char *c = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
            snprintf(what, cap, "--%s (%.60s, where rank 0 has %.60s)", k, a ? a : "?",
                     c ? c : "?");
            free(a);
            free(c);
            return true;
        }
    }
    json_object_foreach((json_t *)theirs, k, v)
    {
        if (!json_object_get(ours, k)) {
            snprintf(what, cap, "--%s (which rank 0 does not have)", k);
            return true;
        }
    }
    return false;
}
