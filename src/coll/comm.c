/* Communicator set-up (include/tp/coll.h): group the ranks by host, give
 * each pair a channel (shared memory within a host when asked, kernel TCP
 * otherwise), and agree that every rank succeeded before anyone measures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "coll_int.h"

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

bool coll_pid_gone(int pid)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return true;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')');
    return !p || p[1] == 0 || p[2] == 'Z' || p[2] == 'X';
}

void *coll_scratch(struct tp_comm *c, size_t bytes)
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
    if (c->ch)
        for (int r = 0; r < c->size; r++)
            if (c->ch[r])
                c->ch[r]->ops->close(c->ch[r]);
    if (c->shm_ctx)
        chan_shm_close_all(c);
    else if (c->arena)
        munmap(c->arena, c->arena_bytes);
    free(c->ch);
    free(c->host_of);
    free(c->world.rank);
    free(c->local.rank);
    free(c->leaders.rank);
    free(c->plan.t);
    free(c->qlast);
    free(c->local_ids);
    json_decref(c->fabric_info);
    free(c);
}

int tp_comm_init(struct tp_boot *b, const struct tp_comm_opts *o, struct tp_comm **out,
                 tp_error *err)
{
    const char *transport = o->transport ? o->transport : "tcp";
    const char *intra = o->intra ? o->intra : "shm";
    if (strcmp(transport, "tcp") != 0 && strcmp(transport, "ofi") != 0)
        return tp_error_set(err, TP_EUSAGE, "--transport %s: tcp or ofi", transport);
    if (strcmp(intra, "shm") != 0 && strcmp(intra, "fabric") != 0)
        return tp_error_set(err, TP_EUSAGE, "--intra %s: shm or fabric", intra);
    struct tp_comm *c = calloc(1, sizeof *c);
    if (!c)
        return tp_error_set(err, TP_ENOMEM, "communicator");
    c->boot = b;
    c->rank = tp_boot_rank(b);
    c->size = tp_boot_size(b);
    c->timeout_ns = o->timeout_ns ? o->timeout_ns : 30000000000ull;
    c->busy_poll = o->busy_poll;
    c->arena_bytes = (o->arena_bytes + 4095) & ~(size_t)4095;
    int rc = 0;
    if (!(c->ch = calloc((size_t)c->size, sizeof *c->ch)) ||
        !(c->qlast = malloc(4 * (size_t)c->size * sizeof *c->qlast))) {
        rc = tp_error_set(err, TP_ENOMEM, "communicator");
        goto fail;
    }
    if ((rc = group_hosts(c, err)) < 0)
        goto fail;
    /* the same decision on every rank: shared memory when any host has two */
    bool pairs = false;
    for (int r = 1; r < c->size; r++)
        pairs |= c->host_of[r] == c->host_of[r - 1];
    for (int r = 0; r < c->size && !pairs; r++)
        for (int q = r + 1; q < c->size; q++)
            pairs |= c->host_of[q] == c->host_of[r];
    c->shm = strcmp(intra, "shm") == 0 && pairs;
    /* oversubscribed: a spinning rank only burns the slice its peer needs */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN), here = 0;
    for (int r = 0; r < c->size; r++) /* by machine, not by the test hook's hosts */
        here += strcmp(tp_boot_host(b, r), tp_boot_host(b, c->rank)) == 0;
    c->spins = cpus > 0 && here > cpus ? 16 : 2000;
    if (c->shm) {
        rc = chan_shm_open_all(c, err);
    } else {
        void *p = mmap(NULL, c->arena_bytes ? c->arena_bytes : 4096, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED)
            rc = tp_error_set(err, TP_ENOMEM, "arena of %zu bytes", c->arena_bytes);
        else
            c->arena = p;
    }
    if (rc == 0)
        rc = strcmp(transport, "ofi") == 0 ? chan_ofi_open_all(c, o, &c->fabric_info, err)
                                           : chan_tcp_open_all(c, o, err);
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
    for (int r = 0; r < c->size; r++)
        if (c->ch[r])
            c->ch[r]->ops->abort(c->ch[r]);
}

json_t *tp_comm_info(const struct tp_comm *c)
{
    int shm = 0, tcp = 0, ofi = 0;
    for (int r = 0; r < c->size; r++)
        if (c->ch[r]) {
            const char *k = c->ch[r]->ops->name;
            *(strcmp(k, "shm") == 0 ? &shm : strcmp(k, "ofi") == 0 ? &ofi : &tcp) += 1;
        }
    json_t *hosts = json_array();
    for (int r = 0; r < c->size; r++)
        json_array_append_new(hosts, json_integer(c->host_of[r]));
    json_t *j = json_pack("{s:i, s:i, s:i, s:{s:i, s:i, s:i}, s:o, s:I}", "ranks", c->size,
                          "hosts", c->nhosts, "local_ranks", c->local.n, "channels", "shm", shm,
                          "tcp", tcp, "ofi", ofi, "host_of_rank", hosts, "arena_bytes",
                          (json_int_t)c->arena_bytes);
    if (c->fabric_info)
        json_object_set(j, "fabric", c->fabric_info);
    return j;
}

void tp_comm_fini(struct tp_comm *c)
{
    free_comm(c);
}
