/* The executor: runs one task graph (src/coll/coll_int.h) to completion.
 * Sends and receives to one peer are posted in the order the algorithm
 * emitted them, each as soon as its dependencies are done; local copies and
 * reductions run as soon as theirs are. Both ends of a channel emit their
 * tasks in the same order, so messages need no tags. Waiting spins briefly,
 * then sleeps in poll() when every busy channel has a file descriptor (TCP)
 * or yields the CPU (shared memory), so oversubscribed ranks still move. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "coll_int.h"
#include "tp/blockfx.h"
#include "tp/clock.h"
#include "tp/intr.h"
#include "tp/fixed.h"

#define ALIVE_EVERY_NS 50000000ull

void tp__coll_red_apply(const struct redfn *r, void *dst, const void *a, const void *b,
                        size_t bytes)
{
    size_t n = bytes / r->esize;
    if (r->exact2) {
        const void *in[2] = {a, b};
        tp_bfx_sum(r->dtype, in, 2, n, r->op == TP_AVG ? (uint32_t)r->nranks : 1, r->ahead, dst);
    } else if (r->fixed) {
        if (dst != a)
            memcpy(dst, a, bytes);
        tp_fx_add(r->dtype, dst, b, n);
    } else {
        tp_reduce3(r->dtype, r->op, dst, a, b, n);
    }
}

int tp__coll_task_add(struct plan *p, enum task_kind k, int peer, void *dst, const void *src,
                      size_t len, int d0, int d1)
{
    if (p->nt == p->cap) {
        int cap = p->cap ? p->cap * 2 : 256;
        struct task *t = realloc(p->t, (size_t)cap * sizeof *t);
        if (!t) {
            p->oom = true;
            return NO_DEP;
        }
        p->t = t;
        p->cap = cap;
    }
    struct task *t = &p->t[p->nt];
    bool reduce = k == T_RECV_RED || (k == T_RECV && src);
    *t = (struct task){.op = {.dst = dst, .src = src, .len = len, .reduce = reduce},
                       .kind = (uint8_t)k, .state = S_WAIT, .peer = peer, .dep = {d0, d1},
                       .qnext = -1};
    return p->nt++;
}

int tp__coll_task_join_all(struct plan *p, const int *deps, int n)
{
    int j = NO_DEP;
    for (int i = 0; i < n; i++) {
        if (deps[i] == NO_DEP)
            continue;
        j = j == NO_DEP ? deps[i] : t_join(p, j, deps[i]);
    }
    return j;
}

static inline bool ready(const struct task *all, const struct task *t)
{
    return (t->dep[0] < 0 || all[t->dep[0]].op.done) &&
           (t->dep[1] < 0 || all[t->dep[1]].op.done);
}

static bool is_comm(const struct task *t)
{
    return (t->kind == T_SEND || t->kind == T_RECV || t->kind == T_RECV_RED) && t->op.len > 0;
}

static void run_local(const struct plan *p, struct task *t)
{
    struct tp_chan_op *o = &t->op;
    switch (t->kind) {
    case T_COPY:
        if (o->dst != o->src)
            memmove(o->dst, o->src, o->len);
        break;
    case T_RED:
        tp__coll_red_apply(&p->red, o->dst, o->dst, o->src, o->len);
        break;
    case T_FINISH:
        if (!p->red.fixed)
            tp_reduce_finish(p->red.dtype, p->red.op, o->dst, o->len / p->red.esize,
                             p->red.nranks);
        break;
    default:
        break;
    }
    o->done = true;
}

/* A channel's reducing receive: the graph's reduction (arg is its redfn). */
static void combine(void *arg, void *dst, const void *a, const void *b, size_t bytes)
{
    tp__coll_red_apply(arg, dst, a, b, bytes);
}

static int waiting_peer(const struct tp_comm *c, const struct plan *p)
{
    for (int i = 0; i < p->nt; i++)
        if (p->t[i].state == S_POSTED && !p->t[i].op.done && p->t[i].kind != T_SEND)
            return p->t[i].peer;
    for (int i = 0; i < p->nt; i++)
        if (p->t[i].state == S_POSTED && !p->t[i].op.done)
            return p->t[i].peer;
    (void)c;
    return -1;
}

int tp__coll_exec(struct tp_comm *c, struct plan *p, tp_error *err)
{
    if (p->oom)
        return tp_error_set(err, TP_ENOMEM, "collective: task graph");
    int n = c->size;
    /* per-peer cursors: next send / receive to post; c->qlast is 4n ints */
    int *sfirst = c->qlast, *rfirst = c->qlast + n, *slast = c->qlast + 2 * n,
        *rlast = c->qlast + 3 * n;
    for (int r = 0; r < n; r++)
        sfirst[r] = rfirst[r] = slast[r] = rlast[r] = -1;
    int remaining = 0, nlocal = 0;
    if (c->local_cap < p->nt) {
        int *l = realloc(c->local_ids, ((size_t)p->nt + 1) * sizeof *l);
        if (!l)
            return tp_error_set(err, TP_ENOMEM, "collective: task graph");
        c->local_ids = l;
        c->local_cap = p->nt;
    }
    int *local = c->local_ids;
    for (int i = 0; i < p->nt; i++) {
        struct task *t = &p->t[i];
        remaining++;
        if (!is_comm(t)) {
            local[nlocal++] = i;
            continue;
        }
        int *first = t->kind == T_SEND ? sfirst : rfirst, *last = t->kind == T_SEND ? slast : rlast;
        if (last[t->peer] < 0)
            first[t->peer] = i;
        else
            p->t[last[t->peer]].qnext = i;
        last[t->peer] = i;
    }
    tp__coll_mark_streams(c, p);
    struct tp_chan_combine cb = {.fn = combine, .arg = &p->red, .esize = p->red.esize};
    uint64_t idle_since = 0, last_alive = 0;
    int spins = 0, rc = 0;
    struct pollfd *pfd = NULL;
    while (remaining > 0) {
        int moved = 0;
        for (int k = 0; k < nlocal;) {
            struct task *t = &p->t[local[k]];
            if (ready(p->t, t)) {
                run_local(p, t);
                remaining--;
                moved++;
                local[k] = local[--nlocal];
            } else {
                k++;
            }
        }
        for (int r = 0; r < n; r++) {
            struct tp_chan *ch = c->ch[r];
            while (sfirst[r] >= 0 && ready(p->t, &p->t[sfirst[r]])) {
                struct task *t = &p->t[sfirst[r]];
                t->state = S_POSTED;
                tp_chan_post_send(ch, &t->op);
                sfirst[r] = t->qnext;
            }
            while (rfirst[r] >= 0 && ready(p->t, &p->t[rfirst[r]])) {
                struct task *t = &p->t[rfirst[r]];
                t->state = S_POSTED;
                tp_chan_post_recv(ch, &t->op);
                rfirst[r] = t->qnext;
            }
            if (ch && tp_chan_busy(ch)) {
                int done = 0;
                int got = tp_chan_progress(ch, &cb, &done, err);
                if (got < 0) {
                    rc = got;
                    goto out;
                }
                remaining -= done;
                moved += got;
            }
        }
        if (moved) {
            spins = 0;
            idle_since = 0;
            continue;
        }
        if (++spins < c->spins)
            continue;
        if (tp_intr_signal()) { /* waiting is the safe point: every rank got it */
            rc = tp_intr_check(err);
            goto out;
        }
        uint64_t now = tp_now_ns();
        if (!idle_since)
            idle_since = last_alive = now;
        if (now - last_alive > ALIVE_EVERY_NS) {
            last_alive = now;
            for (int r = 0; r < n; r++) {
                struct tp_chan *ch = c->ch[r];
                if (ch && tp_chan_busy(ch) && (rc = tp_chan_alive(ch, err)) < 0)
                    goto out;
            }
        }
        if (now - idle_since > c->timeout_ns) {
            int peer = waiting_peer(c, p);
            rc = tp_error_set(err, TP_ETIMEOUT,
                              "rank %d on %s: no progress for %.1f s (lost or hung)", peer,
                              tp_boot_host(c->boot, peer), (double)c->timeout_ns / 1e9);
            goto out;
        }
        if (c->busy_poll)
            continue;
        /* sleep in poll() when every busy channel can; else yield */
        int np = 0;
        bool can_poll = true;
        if (!pfd && !(pfd = calloc((size_t)n, sizeof *pfd))) {
            rc = tp_error_set(err, TP_ENOMEM, "collective");
            goto out;
        }
        for (int r = 0; r < n && can_poll; r++) {
            struct tp_chan *ch = c->ch[r];
            if (!ch || !tp_chan_busy(ch))
                continue;
            short ev = 0;
            int fd = tp_chan_pollfd(ch, &ev);
            if (fd < 0)
                can_poll = false;
            else
                pfd[np++] = (struct pollfd){.fd = fd, .events = ev};
        }
        if (can_poll && np > 0) {
            if (poll(pfd, (nfds_t)np, 10) < 0 && errno != EINTR) {
                rc = tp_error_errno(err, TP_ESYS, errno, "poll");
                goto out;
            }
        } else {
            sched_yield();
        }
        spins = c->spins + 1;
    }
out:
    free(pfd);
    return rc;
}
