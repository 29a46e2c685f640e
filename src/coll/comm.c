/* Communicator set-up (include/tp/coll.h): group the ranks by host, open
 * the channels (include/tp/chan.h: shared memory within a host when asked,
 * the transport's channel otherwise), and agree that every rank succeeded
 * before anyone measures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll_int.h"
#include "tp/transport.h"

int tp_comm_rank(const struct tp_comm *c)
{
    return c->rank;
}

int tp_comm_size(const struct tp_comm *c)
{
    return c->size;
}

int tp_comm_nhosts(const struct tp_comm *c)
{
    return c->nhosts;
}

bool tp_comm_shm(const struct tp_comm *c)
{
    return c->shm;
}

uint64_t tp_comm_streamed_bytes(const struct tp_comm *c)
{
    return c->streamed;
}

void *tp_comm_alloc(struct tp_comm *c, size_t bytes)
{
    size_t at = (c->arena_used + 63) & ~(size_t)63;
    if (at > c->arena_bytes || bytes > c->arena_bytes - at)
        return NULL;
    c->arena_used = at + bytes;
    return c->arena + at;
}

void tp_comm_reset_alloc(struct tp_comm *c)
{
    c->arena_used = 0;
}

void *tp__coll_scratch(struct tp_comm *c, size_t bytes)
{
    return tp_comm_alloc(c, bytes);
}

/* Host index of every rank. TP_COLL_HOST_SPLIT=k (a test hook) pretends
 * that every k consecutive ranks share a host, so two-level schedules and
 * mixed channels run on one machine. */
static int group_hosts(struct tp_comm *c, tp_error *err)
{
    int n = c->size;
    if (!(c->host_of = calloc((size_t)n, sizeof *c->host_of)))
        return tp_error_set(err, TP_ENOMEM, "communicator");
    const char *split = getenv("TP_COLL_HOST_SPLIT");
    int k = split ? atoi(split) : 0;
    c->nhosts = 0;
    for (int r = 0; r < n; r++) {
        int h = -1;
        if (k > 0) {
            h = r / k;
        } else {
            for (int q = 0; q < r && h < 0; q++)
                if (strcmp(tp_boot_host(c->boot, q), tp_boot_host(c->boot, r)) == 0)
                    h = c->host_of[q];
            if (h < 0)
                h = c->nhosts;
        }
        c->host_of[r] = h;
        if (h + 1 > c->nhosts)
            c->nhosts = h + 1;
    }
    c->world.n = n;
    c->world.me = c->rank;
    c->local.n = c->leaders.n = 0;
    c->world.rank = malloc((size_t)n * sizeof(int));
    c->local.rank = malloc((size_t)n * sizeof(int));
    c->leaders.rank = malloc((size_t)n * sizeof(int));
    if (!c->world.rank || !c->local.rank || !c->leaders.rank)
        return tp_error_set(err, TP_ENOMEM, "communicator");
    c->leaders.me = -1;
    for (int r = 0; r < n; r++) {
        c->world.rank[r] = r;
        if (c->host_of[r] == c->host_of[c->rank]) {
            if (r == c->rank)
                c->local.me = c->local.n;
            c->local.rank[c->local.n++] = r;
        }
    }
    for (int h = 0; h < c->nhosts; h++)
        for (int r = 0; r < n; r++)
            if (c->host_of[r] == h) {
                if (r == c->rank)
                    c->leaders.me = c->leaders.n;
                c->leaders.rank[c->leaders.n++] = r;
                break;
            }
    return 0;
}

static void free_comm(struct tp_comm *c)
{
    if (!c)
        return;
    tp_chan_set_close(c->chans);
    free(c->host_of);
    free(c->world.rank);
    free(c->local.rank);
    free(c->leaders.rank);
    free(c->plan.t);
    free(c->qlast);
    free(c->local_ids);
    free(c);
}

int tp_comm_init(struct tp_boot *b, const struct tp_comm_opts *o, struct tp_comm **out,
                 tp_error *err)
{
    const struct tp_transport_ops *tr = tp_transport_parse(o->transport, err);
    const struct tp_chan_kind *intra;
    if (!tr || tp_chan_intra_parse(o->intra, &intra, err) < 0 ||
        tp_comm_stores_check(o->shm_stores, err) < 0)
        return err->code;
    struct tp_comm *c = calloc(1, sizeof *c);
    if (!c)
        return tp_error_set(err, TP_ENOMEM, "communicator");
    c->boot = b;
    c->rank = tp_boot_rank(b);
    c->size = tp_boot_size(b);
    c->timeout_ns = o->timeout_ns ? o->timeout_ns : 30000000000ull;
    c->busy_poll = o->busy_poll;
    c->stores = tp__coll_stores_find(o->shm_stores);
    c->arena_bytes = (o->arena_bytes + 4095) & ~(size_t)4095;
    int rc = 0;
    if (!(c->qlast = malloc(4 * (size_t)c->size * sizeof *c->qlast))) {
        rc = tp_error_set(err, TP_ENOMEM, "communicator");
        goto fail;
    }
    if ((rc = group_hosts(c, err)) < 0)
        goto fail;
    /* oversubscribed: a spinning rank only burns the slice its peer needs */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN), here = 0;
    for (int r = 0; r < c->size; r++) /* by machine, not by the test hook's hosts */
        here += strcmp(tp_boot_host(b, r), tp_boot_host(b, c->rank)) == 0;
    c->spins = cpus > 0 && here > cpus ? 16 : 2000;
    struct tp_chan_opts co = {.transport = tr, .intra = intra, .provider = o->provider,
                              .bind_addr = o->bind_addr, .host_of = c->host_of,
                              .nhosts = c->nhosts, .arena_bytes = c->arena_bytes,
                              .timeout_ns = c->timeout_ns, .busy_poll = c->busy_poll};
    rc = tp_chan_open_all(b, &co, &c->chans, err);
    if (rc == 0) {
        c->ch = tp_chan_set_chans(c->chans);
        c->arena = tp_chan_set_arena(c->chans);
        c->shm = tp_chan_set_shared(c->chans);
    }
    /* agree: one rank's failure is everyone's */
    char mine[600], **all = NULL;
    snprintf(mine, sizeof mine, "%s", rc == 0 ? "ok" : err->msg);
    tp_error gerr;
    if (tp_boot_allgather(b, mine, &all, &gerr) < 0) {
        if (rc == 0) {
            *err = gerr;
            rc = gerr.code;
        }
        goto fail;
    }
    for (int r = 0; r < c->size && rc == 0; r++)
        if (strcmp(all[r], "ok") != 0)
            rc = tp_error_set(err, TP_EPEER, "rank %d on %s: %s", r, tp_boot_host(b, r), all[r]);
    tp_boot_free_strings(all, c->size);
    if (rc)
        goto fail;
    *out = c;
    return 0;
fail:
    free_comm(c);
    return rc;
}

void tp_comm_abort(struct tp_comm *c)
{
    if (!c || c->failed)
        return;
    c->failed = true;
    tp_chan_set_abort(c->chans);
}

json_t *tp_comm_info(const struct tp_comm *c)
{
    json_t *chans = json_object();
    for (int i = 0; tp_chan_kinds[i]; i++)
        json_object_set_new(chans, tp_chan_kind_name(tp_chan_kinds[i]),
                            json_integer(tp_chan_set_count(c->chans, tp_chan_kinds[i])));
    json_t *hosts = json_array();
    for (int r = 0; r < c->size; r++)
        json_array_append_new(hosts, json_integer(c->host_of[r]));
    json_t *j = json_pack("{s:i, s:i, s:i, s:o, s:o, s:I}", "ranks", c->size, "hosts",
                          c->nhosts, "local_ranks", c->local.n, "channels", chans,
                          "host_of_rank", hosts, "arena_bytes", (json_int_t)c->arena_bytes);
    json_t *fabric = tp_chan_set_info(c->chans);
    if (fabric)
        json_object_set(j, "fabric", fabric);
    return j;
}

void tp_comm_fini(struct tp_comm *c)
{
    free_comm(c);
}
