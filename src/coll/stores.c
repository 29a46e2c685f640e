/* --shm-stores: which receives on shared memory write their destination
 * with streaming (non-temporal) stores (tp_chan_op.stream, done by the
 * channel: src/fabric/stream.c). The policies are rows of a table; the
 * executor asks tp__coll_mark_streams to mark a graph before it runs it.
 *
 * Why a destination that a later send forwards: over shared memory the
 * peer reads that send straight out of this rank's buffer, so the lines
 * sit in the peer's cache and an ordinary store must fetch and invalidate
 * each. A destination nobody forwards (the result, a reduce-scatter's
 * slice) is read next by this rank's own core: streaming would push it out
 * of the cache, so it stays cached (measured: docs/metrics.md). */
#include <string.h>

#include "coll_int.h"

struct tp__coll_stores {
    const char *name;
    bool on;    /* streams at all */
    bool every; /* every receive on shared memory, not only forwarded ones */
    size_t min; /* bytes: smaller receives stay cached */
};

static const struct tp__coll_stores rows[] = {
    {"auto", true, false, 8192}, /* forwarded destinations of 8 KiB or more */
    {"cached", false, false, 0}, /* ordinary stores everywhere */
    {"stream", true, true, 1},   /* every receive on shared memory */
};

const struct tp__coll_stores *tp__coll_stores_find(const char *name)
{
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        if (strcmp(rows[i].name, name ? name : "auto") == 0)
            return &rows[i];
    return NULL;
}

int tp_comm_stores_check(const char *name, tp_error *err)
{
    if (tp__coll_stores_find(name))
        return 0;
    return tp_error_set(err, TP_EUSAGE, "--shm-stores %s: auto, cached or stream", name);
}

static bool streams(const struct tp_comm *c, const struct task *r)
{
    return (r->kind == T_RECV || r->kind == T_RECV_RED) && r->op.len >= c->stores->min &&
           c->ch[r->peer] && tp_chan_peer_reads(c->ch[r->peer]);
}

static void mark(struct tp_comm *c, struct task *r)
{
    r->op.stream = true;
    c->streamed += r->op.len;
}

void tp__coll_mark_streams(struct tp_comm *c, struct plan *p)
{
    const struct tp__coll_stores *st = c->stores;
    if (!st->on)
        return;
    for (int i = 0; i < p->nt; i++) {
        struct task *t = &p->t[i];
        if (st->every) {
            if (streams(c, t))
                mark(c, t);
            continue;
        }
        /* a send over shared memory of what a receive just wrote */
        if (t->kind != T_SEND || !c->ch[t->peer] || !tp_chan_peer_reads(c->ch[t->peer]))
            continue;
        for (int k = 0; k < 2; k++) {
            int d = t->dep[k];
            if (d == NO_DEP)
                continue;
            struct task *r = &p->t[d];
            if (!r->op.stream && streams(c, r) && r->op.dst == t->op.src && r->op.len == t->op.len)
                mark(c, r);
        }
    }
}
