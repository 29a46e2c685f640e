/* The channel kinds' table and the set-up of one rank's channels
 * (include/tp/chan.h). A set is built in two passes, each a kind's
 * collective open_all: first the intra kind between ranks of one host
 * (shared memory, which also maps the arena), then the transport's kind for
 * every pair still without a channel. Adding a kind is one file and one
 * line in the table; nothing above this layer compares kind names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "chan_int.h"
#include "tp/transport.h"

const struct tp_chan_kind *const tp_chan_kinds[] = {&tp__chan_shm, &tp__chan_tcp, &tp__chan_ofi,
                                                    NULL};

/* --intra: a kind of its own, or the transport's (NULL) */
static const struct {
    const char *name;
    const struct tp_chan_kind *kind;
} intras[] = {{"shm", &tp__chan_shm}, {"fabric", NULL}};

#define NINTRA (sizeof intras / sizeof intras[0])

const char *tp_chan_kind_name(const struct tp_chan_kind *k)
{
    return k->name;
}

int tp_chan_intra_parse(const char *name, const struct tp_chan_kind **out, tp_error *err)
{
    if (!name)
        name = intras[0].name;
    for (size_t i = 0; i < NINTRA; i++)
        if (strcmp(intras[i].name, name) == 0) {
            *out = intras[i].kind;
            return 0;
        }
    char list[128] = "";
    for (size_t i = 0, used = 0; i < NINTRA; i++) {
        const char *sep = i == 0 ? "" : i + 1 == NINTRA ? " or " : ", ";
        int n = snprintf(list + used, sizeof list - used, "%s%s", sep, intras[i].name);
        if (n < 0 || (size_t)n >= sizeof list - used)
            break;
        used += (size_t)n;
    }
    return tp_error_set(err, TP_EUSAGE, "--intra %s: %s", name, list);
}

static void unmap_private(struct tp_chan_set *s)
{
    munmap(s->arena, s->arena_bytes ? s->arena_bytes : 4096);
}

/* An arena of this rank's own, where no shared one is mapped: private
 * pages, reserved lazily (a large --arena costs nothing until touched). */
static int private_arena(struct tp_chan_set *s, tp_error *err)
{
    void *p = mmap(NULL, s->arena_bytes ? s->arena_bytes : 4096, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return tp_error_set(err, TP_ENOMEM, "arena of %zu bytes", s->arena_bytes);
    s->arena = p;
    s->arena_free = unmap_private;
    return 0;
}

/* The same answer on every rank: does any host have two ranks? */
static bool host_pairs(const int *host_of, int n)
{
    for (int r = 0; r < n; r++)
        for (int q = r + 1; q < n; q++)
            if (host_of[q] == host_of[r])
                return true;
    return false;
}

int tp_chan_open_all(struct tp_boot *b, const struct tp_chan_opts *o, struct tp_chan_set **out,
                     tp_error *err)
{
    struct tp_chan_set *s = calloc(1, sizeof *s);
    if (!s)
        return tp_error_set(err, TP_ENOMEM, "communicator");
    s->boot = b;
    s->rank = tp_boot_rank(b);
    s->size = tp_boot_size(b);
    s->nhosts = o->nhosts;
    s->arena_bytes = (o->arena_bytes + 4095) & ~(size_t)4095;
    s->timeout_ns = o->timeout_ns;
    s->busy_poll = o->busy_poll;
    s->host_of = o->host_of;
    s->bind_addr = o->bind_addr;
    s->provider = o->provider && o->provider[0] ? o->provider : o->transport->default_provider;
    if (!(s->ch = calloc((size_t)s->size, sizeof *s->ch))) {
        free(s);
        return tp_error_set(err, TP_ENOMEM, "communicator");
    }
    s->shared = o->intra && host_pairs(o->host_of, s->size);
    int rc = s->shared ? o->intra->open_all(s, err) : private_arena(s, err);
    if (rc == 0)
        rc = o->transport->chan->open_all(s, err);
    s->host_of = NULL;
    s->provider = s->bind_addr = NULL;
    if (rc) {
        tp_chan_set_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

struct tp_chan **tp_chan_set_chans(struct tp_chan_set *s)
{
    return s->ch;
}

uint8_t *tp_chan_set_arena(struct tp_chan_set *s)
{
    return s->arena;
}

bool tp_chan_set_shared(const struct tp_chan_set *s)
{
    return s->shared;
}

int tp_chan_set_count(const struct tp_chan_set *s, const struct tp_chan_kind *k)
{
    int n = 0;
    for (int r = 0; r < s->size; r++)
        n += s->ch[r] && s->ch[r]->ops == k->ops;
    return n;
}

json_t *tp_chan_set_info(const struct tp_chan_set *s)
{
    return s->info;
}

void tp_chan_set_abort(struct tp_chan_set *s)
{
    if (!s)
        return;
    for (int r = 0; r < s->size; r++)
        if (s->ch[r])
            tp_chan_abort(s->ch[r]);
}

void tp_chan_set_close(struct tp_chan_set *s)
{
    if (!s)
        return;
    for (int r = 0; r < s->size; r++)
        if (s->ch[r])
            s->ch[r]->ops->close(s->ch[r]);
    if (s->arena_free)
        s->arena_free(s);
    free(s->ch);
    json_decref(s->info);
    free(s);
}
