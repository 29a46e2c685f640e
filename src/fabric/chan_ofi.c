/* The libfabric channel of the collectives (include/tp/chan.h). Every rank
 * opens one reliable-datagram endpoint (one completion queue, one address
 * vector) and the channels to its peers share it. Messages are tagged with the sender's
 * rank and a sequence number of the directed pair, so a receive matches
 * its send whatever order the provider delivers in, and each send or
 * receive goes to the provider as soon as the caller posts it: the
 * provider moves bytes while the rank computes. A transfer larger than the
 * per-message cap travels as several messages cut the same way at both
 * ends (the cap is agreed at set-up and rounded to the graph's element
 * size).
 *
 * A receive that reduces lands in one of a few staging slots of its channel
 * and is reduced when it completes. Slots are handed out in the order the
 * receives were posted, so a receive only ever waits for earlier messages
 * from the same peer, which the peer sends first: where the in-order TCP
 * channel cannot deadlock, neither can this one.
 *
 * Memory is registered only where the provider asks for it (FI_MR_LOCAL):
 * the arena once (every buffer of a collective comes from tp_comm_alloc),
 * the staging slots and the control words. A rank that fails sends each
 * peer a control message on a reserved tag, so they stop at once; a peer
 * that dies on this machine is seen in /proc; other losses end with the
 * executor's idle timeout or a completion error naming the peer. */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include "chan_int.h"
#include "ofi_int.h"
#include "tp/transport.h"

/* 1 MiB messages already make the per-message cost negligible (16 MiB
 * allreduce and sendrecv, n = 2, shm and tcp;ofi_rxm: 4 MiB showed no
 * difference beyond the noise) and keep a reducing channel's staging at
 * NSTAGE MiB */
#define PIECE_MAX (1u << 20)
#define NSTAGE 4 /* staging slots per reducing channel (<= 32) */
#define BATCH 16 /* completions per fi_cq_read */
#define CQ_SIZE 8192
/* tag: [ctrl:1][sender rank:12][sequence:40]; the upper 11 bits stay clear
 * for providers that reserve some */
#define SEQ_BITS 40
#define SEQ_MASK ((UINT64_C(1) << SEQ_BITS) - 1)
#define RANK_BITS 12
#define CTRL_TAG (UINT64_C(1) << (SEQ_BITS + RANK_BITS))
#define CTRL_BYTES 64 /* per peer: where its failure notice lands */

enum pkind { P_SEND, P_RECV, P_CTRL_TX, P_CTRL_RX };

/* One posted message; a pointer to it is the libfabric context. */
struct piece {
    struct fi_context2 ctx; /* first */
    struct piece *next;     /* free list */
    struct ochan *ch;
    struct tp_chan_op *t;
    size_t off, len; /* bytes of t */
    int slot;        /* staging slot, or -1 */
    uint8_t kind;
};

#define BLOCK 64
struct block {
    struct block *next;
    struct piece p[BLOCK];
};

struct ofi_ep {
    struct tp_chan_set *set;
    struct tp__ofi f;     /* provider entry, fids, registration state */
    struct ochan **chans; /* by rank, NULL where no ofi channel */
    int refs;             /* channels not yet closed */
    size_t piece;         /* largest message, bytes (agreed by every rank) */
    size_t inject;
    bool mr_local;
    struct fid_mr *arena_mr;
    void *arena_desc;
    uint8_t *ctrl; /* CTRL_BYTES per rank, plus our outgoing notice */
    struct fid_mr *ctrl_mr;
    void *ctrl_desc;
    struct piece *free;
    struct block *blocks;
    int pending; /* transfers finished since the caller last heard */
    int fail;    /* a post failed: progress() reports ferr */
    tp_error ferr;
    bool aborted; /* we told the peers */
    int *pid;     /* rank -> pid when on this machine (else 0) */
};

struct ochan {
    struct tp_chan base;
    struct ofi_ep *ep;
    fi_addr_t fa;
    uint64_t tx_seq, rx_seq;
    struct tp_chan_op *sp, *rp; /* first transfer not fully posted, per direction */
    size_t sp_off, rp_off;
    uint8_t *stage; /* NSTAGE slots of ep->piece bytes, on first use */
    struct fid_mr *stage_mr;
    void *stage_desc;
    uint32_t stage_free; /* bit i: slot i free */
    struct piece ctrl_rx;
    bool peer_failed;
};

static const char *host_of(const struct ofi_ep *ep, int r)
{
    return tp__chan_host(ep->set, r);
}

/* ---- pieces ---- */

static struct piece *get_piece(struct ofi_ep *ep)
{
    if (!ep->free) {
        struct block *b = calloc(1, sizeof *b);
        if (!b)
            return NULL;
        b->next = ep->blocks;
        ep->blocks = b;
        for (int i = 0; i < BLOCK; i++) {
            b->p[i].next = ep->free;
            ep->free = &b->p[i];
        }
    }
    struct piece *p = ep->free;
    ep->free = p->next;
    return p;
}

static void put_piece(struct ofi_ep *ep, struct piece *p)
{
    p->next = ep->free;
    ep->free = p;
}

/* ---- memory ---- */

/* The descriptor for a buffer of a collective; false (and ep->fail set)
 * when the provider needs registered memory and it is not in the arena. */
static bool desc_of(struct ochan *o, const void *buf, size_t len, void **desc)
{
    struct ofi_ep *ep = o->ep;
    struct tp_chan_set *c = ep->set;
    *desc = NULL;
    if (!ep->mr_local)
        return true;
    const uint8_t *b = buf;
    if (ep->arena_mr && b >= c->arena && len <= c->arena_bytes &&
        (size_t)(b - c->arena) <= c->arena_bytes - len) {
        *desc = ep->arena_desc;
        return true;
    }
    if (!ep->fail)
        ep->fail = tp_error_set(&ep->ferr, TP_EPROTO,
                                "collective with rank %d: buffer not from tp_comm_alloc, and "
                                "provider %s needs registered memory",
                                o->base.peer, ep->f.prov);
    return false;
}

static bool make_stage(struct ochan *o)
{
    struct ofi_ep *ep = o->ep;
    size_t bytes = NSTAGE * ep->piece;
    void *p = NULL;
    tp_error e;
    if (posix_memalign(&p, 4096, bytes) != 0) {
        if (!ep->fail)
            ep->fail = tp_error_set(&ep->ferr, TP_ENOMEM, "staging for rank %d: %zu bytes",
                                    o->base.peer, bytes);
        return false;
    }
    memset(p, 0, bytes); /* touch the pages before they carry data */
    o->stage = p;
    o->stage_free = (uint32_t)((UINT64_C(1) << NSTAGE) - 1);
    if (ep->mr_local &&
        tp__ofi_mr_reg(&ep->f, p, bytes, FI_RECV, NULL, &o->stage_mr, &o->stage_desc, &e) < 0) {
        if (!ep->fail) {
            ep->ferr = e;
            ep->fail = e.code;
        }
        return false;
    }
    return true;
}

/* ---- posting ---- */

static int post_error(struct ochan *o, const char *call, ssize_t r)
{
    struct ofi_ep *ep = o->ep;
    if (!ep->fail)
        ep->fail = tp_error_set(&ep->ferr, r == -FI_ENOMEM ? TP_ENOMEM : TP_EPEER,
                                "rank %d on %s: %s on %s: %s", o->base.peer,
                                host_of(ep, o->base.peer), call, ep->f.prov, fi_strerror((int)-r));
    return ep->fail;
}

/* Bytes of the next message of a transfer at off: the agreed cap, rounded
 * down to whole elements of es bytes, the element of the graph being run
 * (both ends run the same one). */
static size_t piece_len(const struct ofi_ep *ep, const struct tp_chan_op *t, size_t off,
                        size_t es)
{
    if (!es)
        es = 1;
    size_t cap = ep->piece / es * es;
    if (cap == 0)
        cap = es;
    return t->len - off < cap ? t->len - off : cap;
}

/* Pieces of a transfer complete in any order, and transfers of a queue too:
 * the queue drops its finished head at once, so it is empty when the last
 * of them is done (the caller's next graph must not find old ones). */
static void retire(struct tp_chan *ch)
{
    while (ch->sq_head && ch->sq_head->done)
        tp__chan_dequeue(&ch->sq_head, &ch->sq_tail);
    while (ch->rq_head && ch->rq_head->done)
        tp__chan_dequeue(&ch->rq_head, &ch->rq_tail);
}

/* len more bytes of t moved. Only ever called inside progress(), which
 * hands ep->pending to the caller before it returns. */
static void finished(struct ochan *o, struct tp_chan_op *t, size_t len)
{
    t->off += len;
    if (t->off == t->len) {
        t->done = true;
        o->ep->pending++;
        retire(&o->base);
    }
}

/* Post what the provider takes of the channel's unposted sends, then
 * receives, in order; 1 when anything was posted. Errors go to ep->fail.
 * es: bytes per element of the graph being run. */
static int pump(struct ochan *o, size_t es)
{
    struct ofi_ep *ep = o->ep;
    int me = ep->set->rank, moved = 0;
    while (o->sp && !ep->fail) {
        struct tp_chan_op *t = o->sp;
        size_t len = piece_len(ep, t, o->sp_off, es);
        const uint8_t *buf = (const uint8_t *)t->src + o->sp_off;
        uint64_t tag = ((uint64_t)me << SEQ_BITS) | (o->tx_seq & SEQ_MASK);
        ssize_t r;
        if (len <= ep->inject) {
            r = fi_tinject(ep->f.ep, buf, len, o->fa, tag);
            if (r == 0)
                finished(o, t, len);
        } else {
            void *desc;
            struct piece *p;
            if (!desc_of(o, buf, len, &desc))
                break;
            if (!(p = get_piece(ep))) {
                post_error(o, "fi_tsend", -FI_ENOMEM);
                break;
            }
            *p = (struct piece){
                .ch = o, .t = t, .off = o->sp_off, .len = len, .slot = -1, .kind = P_SEND};
            r = fi_tsend(ep->f.ep, buf, len, desc, o->fa, tag, p);
            if (r)
                put_piece(ep, p);
        }
        if (r == -FI_EAGAIN)
            break;
        if (r) {
            post_error(o, len <= ep->inject ? "fi_tinject" : "fi_tsend", r);
            break;
        }
        moved = 1;
        o->tx_seq++;
        if ((o->sp_off += len) == t->len) {
            o->sp = t->next;
            o->sp_off = 0;
        }
    }
    while (o->rp && !ep->fail) {
        struct tp_chan_op *t = o->rp;
        size_t len = piece_len(ep, t, o->rp_off, es);
        bool reduce = t->reduce;
        void *buf = (uint8_t *)t->dst + o->rp_off, *desc = NULL;
        int slot = -1;
        if (reduce) {
            if (!o->stage && !make_stage(o))
                break;
            if (!o->stage_free)
                break; /* an earlier message of this peer holds every slot */
            slot = __builtin_ctz(o->stage_free);
            buf = o->stage + (size_t)slot * ep->piece;
            desc = o->stage_desc;
        } else if (!desc_of(o, buf, len, &desc)) {
            break;
        }
        struct piece *p = get_piece(ep);
        if (!p) {
            post_error(o, "fi_trecv", -FI_ENOMEM);
            break;
        }
        *p = (struct piece){
            .ch = o, .t = t, .off = o->rp_off, .len = len, .slot = slot, .kind = P_RECV};
        uint64_t tag = ((uint64_t)o->base.peer << SEQ_BITS) | (o->rx_seq & SEQ_MASK);
        ssize_t r = fi_trecv(ep->f.ep, buf, len, desc, FI_ADDR_UNSPEC, tag, 0, p);
        if (r) {
            put_piece(ep, p);
            if (r != -FI_EAGAIN)
                post_error(o, "fi_trecv", r);
            break;
        }
        if (slot >= 0)
            o->stage_free &= ~(UINT32_C(1) << slot);
        moved = 1;
        o->rx_seq++;
        if ((o->rp_off += len) == t->len) {
            o->rp = t->next;
            o->rp_off = 0;
        }
    }
    return moved;
}

/* Queue only: the caller runs progress() right after posting, and
 * that posts to the provider, where a transfer that finishes (an injected
 * send) can be counted. */
static void post_send(struct tp_chan *ch, struct tp_chan_op *t)
{
    struct ochan *o = (struct ochan *)ch;
    tp__chan_enqueue(&ch->sq_head, &ch->sq_tail, t);
    if (!o->sp) {
        o->sp = t;
        o->sp_off = 0;
    }
}

static void post_recv(struct tp_chan *ch, struct tp_chan_op *t)
{
    struct ochan *o = (struct ochan *)ch;
    tp__chan_enqueue(&ch->rq_head, &ch->rq_tail, t);
    if (!o->rp) {
        o->rp = t;
        o->rp_off = 0;
    }
}

/* ---- completions ---- */

/* One completion. cb == NULL (while aborting): data is dropped. */
static int complete(struct ofi_ep *ep, struct piece *p, size_t len,
                    const struct tp_chan_combine *cb, tp_error *err)
{
    struct ochan *o = p->ch;
    int peer = o->base.peer;
    if (p->kind == P_CTRL_RX) { /* the peer gave up; the piece is its channel's */
        o->peer_failed = true;
        return 0;
    }
    if (p->kind == P_RECV && len != p->len) {
        put_piece(ep, p);
        return tp_error_set(err, TP_EPROTO,
                            "rank %d on %s sent %zu bytes where %zu were expected (ranks "
                            "disagree on the schedule)",
                            peer, host_of(ep, peer), len, p->len);
    }
    if (p->slot >= 0) {
        struct tp_chan_op *t = p->t;
        if (cb) {
            uint8_t *d = (uint8_t *)t->dst + p->off;
            const void *a = t->src ? (const uint8_t *)t->src + p->off : d;
            cb->fn(cb->arg, d, a, o->stage + (size_t)p->slot * ep->piece, len);
        }
        o->stage_free |= UINT32_C(1) << p->slot;
    }
    if (p->kind != P_CTRL_TX)
        finished(o, p->t, p->len);
    put_piece(ep, p);
    return 0;
}

static int cq_error(struct ofi_ep *ep, tp_error *err)
{
    struct fi_cq_err_entry ee;
    char d[256];
    int n = tp__ofi_cq_readerr(&ep->f, &ee, d, sizeof d);
    if (n == 0)
        return 0;
    if (n < 0)
        return tp_error_set(err, TP_ESYS, "fi_cq_readerr on %s: %s", ep->f.prov, fi_strerror(-n));
    struct piece *p = ee.op_context;
    int peer = p ? p->ch->base.peer : -1;
    enum pkind kind = p ? (enum pkind)p->kind : P_SEND;
    if (p) {
        if (p->slot >= 0)
            p->ch->stage_free |= UINT32_C(1) << p->slot;
        if (p->kind != P_CTRL_RX)
            put_piece(ep, p);
    }
    if (ee.err == FI_ECANCELED)
        return 0;
    if (peer < 0)
        return tp_error_set(err, TP_EPEER, "a transfer failed on %s: %s (%s)", ep->f.prov,
                            fi_strerror(ee.err), d);
    if (ee.err == FI_ETRUNC)
        return tp_error_set(err, TP_EPROTO,
                            "rank %d on %s sent a longer message than expected (ranks disagree "
                            "on the schedule; %s: %s)",
                            peer, host_of(ep, peer), ep->f.prov, d);
    return tp_error_set(err, TP_EPEER, "rank %d on %s: %s failed on %s: %s (%s)", peer,
                        host_of(ep, peer), kind == P_SEND ? "send" : "receive", ep->f.prov,
                        fi_strerror(ee.err), d);
}

/* Drain the shared CQ (a few batches at most): completions handled, or an
 * error. Completions may belong to any channel's transfers. */
static int reap(struct ofi_ep *ep, const struct tp_chan_combine *cb, tp_error *err)
{
    int got = 0;
    for (int b = 0; b < 4; b++) {
        struct fi_cq_tagged_entry e[BATCH];
        ssize_t n = fi_cq_read(ep->f.cq, e, BATCH);
        if (n == -FI_EAGAIN)
            break;
        if (n == -FI_EAVAIL) {
            int rc = cq_error(ep, err);
            if (rc < 0)
                return rc;
            got++;
            continue;
        }
        if (n < 0)
            return tp_error_set(err, TP_ESYS, "fi_cq_read on %s: %s", ep->f.prov,
                                fi_strerror((int)-n));
        for (ssize_t i = 0; i < n; i++) {
            int rc = complete(ep, e[i].op_context, e[i].len, cb, err);
            if (rc < 0)
                return rc;
        }
        got += (int)n;
        if (n < BATCH)
            break;
    }
    return got;
}

static int peer_failed(struct ochan *o, tp_error *err)
{
    return tp_error_set(err, TP_EPEER, "rank %d on %s failed", o->base.peer,
                        host_of(o->ep, o->base.peer));
}

static int progress(struct tp_chan *ch, const struct tp_chan_combine *cb, int *done,
                    tp_error *err)
{
    struct ochan *o = (struct ochan *)ch;
    struct ofi_ep *ep = o->ep;
    int moved = pump(o, cb->esize);
    int got = reap(ep, cb, err);
    if (got < 0)
        return got;
    if (got)
        moved |= pump(o, cb->esize) | 1; /* slots or queue room may have freed */
    if (ep->fail) {
        *err = ep->ferr;
        return ep->fail;
    }
    if (o->peer_failed)
        return peer_failed(o, err);
    if (ep->pending) {
        *done += ep->pending;
        ep->pending = 0;
        moved = 1;
    }
    return moved;
}

static int pollfd_of(struct tp_chan *ch, short *events)
{
    (void)ch;
    *events = 0;
    return -1; /* the CQ has no wait object: spin, and the caller yields */
}

static int alive(struct tp_chan *ch, tp_error *err)
{
    struct ochan *o = (struct ochan *)ch;
    int pid = o->ep->pid[ch->peer];
    if (o->peer_failed)
        return peer_failed(o, err);
    if (pid > 0 && tp__fabric_pid_gone(pid))
        return tp_error_set(err, TP_EPEER, "rank %d on %s (pid %d) is gone", ch->peer,
                            host_of(o->ep, ch->peer), pid);
    return 0;
}

/* Tell every peer that this rank gave up (best effort, bounded: a peer
 * that does not hear it still stops at its own timeout). */
static void abort_chan(struct tp_chan *ch)
{
    struct ofi_ep *ep = ((struct ochan *)ch)->ep;
    if (ep->aborted)
        return;
    ep->aborted = true;
    struct tp_chan_set *c = ep->set;
    uint8_t *note = ep->ctrl + (size_t)c->size * CTRL_BYTES;
    uint64_t tag = CTRL_TAG | ((uint64_t)c->rank << SEQ_BITS);
    tp_error ignored;
    /* shm: a rank killed while it held a lock in a live peer's region (in
     * the middle of a send to it) leaves that lock held for good, and a
     * send to that peer spins on it inside the provider, beyond any
     * deadline of ours; whether a rank is dying cannot be told reliably
     * while the kernel tears it down. So no notes over shm at all: every
     * peer is on this machine and sees this rank's process end (alive()
     * checks its pid), as this one saw the dead rank's. */
    if (strstr(ep->f.prov, "shm"))
        return;
    for (int r = 0; r < c->size; r++) {
        struct ochan *o = ep->chans[r];
        /* never to a peer known dead: the shm provider would spin forever
         * on a lock in its region that the dead process held */
        if (!o || (ep->pid[r] > 0 && tp__fabric_pid_gone(ep->pid[r])))
            continue;
        for (int tries = 0; tries < 100; tries++) {
            ssize_t rc;
            struct piece *p = NULL;
            if (ep->inject >= sizeof(uint64_t)) {
                rc = fi_tinject(ep->f.ep, note, sizeof(uint64_t), o->fa, tag);
            } else if ((p = get_piece(ep))) {
                *p = (struct piece){.ch = o, .slot = -1, .kind = P_CTRL_TX};
                rc = fi_tsend(ep->f.ep, note, sizeof(uint64_t), ep->ctrl_desc, o->fa, tag, p);
                if (rc)
                    put_piece(ep, p);
            } else {
                break;
            }
            if (rc != -FI_EAGAIN)
                break;
            if (reap(ep, NULL, &ignored) < 0)
                break;
        }
    }
    reap(ep, NULL, &ignored);
}

/* Everything, endpoint first: fi_close drops what is still posted without
 * waiting for any peer, so nothing in flight outlives the memory below. */
static void ep_free(struct ofi_ep *ep)
{
    if (!ep)
        return;
    TP_OFI_CLOSE(ep->f.ep);
    if (ep->chans)
        for (int r = 0; r < ep->set->size; r++) {
            struct ochan *o = ep->chans[r];
            if (!o)
                continue;
            TP_OFI_CLOSE(o->stage_mr);
            free(o->stage);
            free(o);
        }
    TP_OFI_CLOSE(ep->arena_mr);
    TP_OFI_CLOSE(ep->ctrl_mr);
    tp__ofi_close(&ep->f);
    while (ep->blocks) {
        struct block *b = ep->blocks;
        ep->blocks = b->next;
        free(b);
    }
    free(ep->chans);
    free(ep->ctrl);
    free(ep->pid);
    free(ep);
}

static void close_chan(struct tp_chan *ch)
{
    struct ofi_ep *ep = ((struct ochan *)ch)->ep;
    if (--ep->refs == 0)
        ep_free(ep); /* the last channel takes the shared endpoint along */
}

static const struct tp_chan_ops ofi_ops = {
    .post_send = post_send,
    .post_recv = post_recv,
    .progress = progress,
    .pollfd = pollfd_of,
    .alive = alive,
    .abort = abort_chan,
    .close = close_chan,
};

/* ---- set-up ---- */

static bool loopback(const struct fi_info *i)
{
    if (!i->src_addr)
        return false;
    if (i->addr_format == FI_SOCKADDR_IN)
        return (((const uint8_t *)&((const struct sockaddr_in *)i->src_addr)->sin_addr)[0]) == 127;
    if (i->addr_format == FI_SOCKADDR_IN6) {
        static const uint8_t lo6[16] = {[15] = 1};
        return memcmp(&((const struct sockaddr_in6 *)i->src_addr)->sin6_addr, lo6, 16) == 0;
    }
    return false;
}

/* The provider's entry for a tagged RDM endpoint: its exact name first
 * (and, across hosts, not a loopback interface). */
static int select_info(struct ofi_ep *ep, const char *provider, const char *node, bool multi,
                       tp_error *err)
{
    struct fi_info *hints = tp__ofi_hints(provider, FI_TAGGED | FI_MSG, FI_CONTEXT | FI_CONTEXT2,
                                          TP__OFI_MR_WANTED),
                   *list = NULL;
    if (!hints)
        return tp_error_set(err, TP_ENOMEM, "libfabric hints");
    int rc = fi_getinfo(TP__OFI_API, node, NULL, node ? FI_SOURCE : 0, hints, &list);
    fi_freeinfo(hints);
    if (rc) {
        if (tp_ofi_provider_check(provider, err) < 0)
            return err->code; /* unknown here: names the ones there are */
        return tp_error_set(err, TP_EUNSUP,
                            "libfabric provider '%s' offers no tagged RDM endpoint%s%s "
                            "(fi_getinfo: %s)",
                            provider, node ? " on " : "", node ? node : "", fi_strerror(-rc));
    }
    struct fi_info *pick = NULL;
    for (int pass = 0; pass < 3 && !pick; pass++)
        for (struct fi_info *i = list; i && !pick; i = i->next) {
            bool exact = strcmp(i->fabric_attr->prov_name, provider) == 0;
            if ((pass == 0 && exact && !(multi && loopback(i))) || (pass == 1 && exact) ||
                pass == 2)
                pick = i;
        }
    ep->f.info = fi_dupinfo(pick);
    fi_freeinfo(list);
    if (!ep->f.info)
        return tp_error_set(err, TP_ENOMEM, "libfabric info");
    snprintf(ep->f.prov, sizeof ep->f.prov, "%s", ep->f.info->fabric_attr->prov_name);
    ep->f.mr_mode = ep->f.info->domain_attr->mr_mode;
    ep->mr_local = (ep->f.mr_mode & FI_MR_LOCAL) != 0;
    ep->inject = ep->f.info->tx_attr->inject_size;
    return 0;
}

static int open_fids(struct ofi_ep *ep, tp_error *err)
{
    struct fi_cq_attr cq_attr = {
        .format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_NONE, .size = CQ_SIZE};
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE, .count = (size_t)ep->set->size};
    return tp__ofi_open(&ep->f, &cq_attr, &av_attr, err);
}

static int open_ep(struct ofi_ep *ep, tp_error *err)
{
    struct tp_chan_set *c = ep->set;
    const char *prov = c->provider;
    const char *node = c->bind_addr && tp__ofi_takes_ip(prov) ? c->bind_addr : NULL;
    int rc;
    if ((rc = select_info(ep, prov, node, c->nhosts > 1, err)) < 0 || (rc = open_fids(ep, err)))
        return rc;
    size_t ctrl_bytes = ((size_t)c->size + 1) * CTRL_BYTES;
    if (posix_memalign((void **)&ep->ctrl, 4096, ctrl_bytes) != 0) {
        ep->ctrl = NULL;
        return tp_error_set(err, TP_ENOMEM, "libfabric control words");
    }
    memset(ep->ctrl, 0, ctrl_bytes);
    memcpy(ep->ctrl + (size_t)c->size * CTRL_BYTES, &(uint64_t){(uint64_t)c->rank},
           sizeof(uint64_t));
    if (ep->mr_local) {
        if ((rc = tp__ofi_mr_reg(&ep->f, ep->ctrl, ctrl_bytes, FI_SEND | FI_RECV, NULL,
                                 &ep->ctrl_mr, &ep->ctrl_desc, err)))
            return rc;
        if (c->arena_bytes &&
            (rc = tp__ofi_mr_reg(&ep->f, c->arena, c->arena_bytes, FI_SEND | FI_RECV, NULL,
                                 &ep->arena_mr, &ep->arena_desc, err)))
            return rc;
    }
    size_t cap = ep->f.info->ep_attr->max_msg_size;
    ep->piece = cap < PIECE_MAX ? (cap >= 4096 ? cap / 4096 * 4096 : cap) : PIECE_MAX;
    return 0;
}

/* "<boot id>:<pid namespace>": equal strings mean pids are comparable. */
static void machine_id(char *buf, size_t cap)
{
    char boot[64] = "", ns[64] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(boot, sizeof boot, f))
            boot[0] = 0;
        fclose(f);
        boot[strcspn(boot, "\n")] = 0;
    }
    ssize_t n = readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
    ns[n > 0 ? n : 0] = 0;
    if (!boot[0] || !ns[0] || strchr(ns, ' ')) {
        snprintf(buf, cap, "-");
        return;
    }
    snprintf(buf, cap, "%s:%s", boot, ns);
}

/* Our entry of the exchange: "<hex name> <piece bytes> <pid> <machine id>". */
static int make_entry(struct ofi_ep *ep, char *buf, size_t cap, tp_error *err)
{
    size_t len;
    int rc = tp__ofi_name_hex(&ep->f, buf, cap - 200, &len, err); /* room for the rest */
    if (rc)
        return rc;
    char mid[160];
    machine_id(mid, sizeof mid);
    snprintf(buf + len, cap - len, " %zu %d %s", ep->piece, (int)getpid(), mid);
    return 0;
}

static json_t *ep_info(const struct ofi_ep *ep)
{
    const struct fi_info *fi = ep->f.info;
    char api[32];
    tp__ofi_api_version(api, sizeof api);
    return json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I}", "provider", fi->fabric_attr->prov_name,
        "fabric", fi->fabric_attr->name ? fi->fabric_attr->name : "", "domain",
        fi->domain_attr->name ? fi->domain_attr->name : "", "api_version", api, "libfabric_runtime",
        tp_ofi_version(), "mr_mode", (json_int_t)ep->f.mr_mode, "max_msg_bytes",
        (json_int_t)ep->piece, "inject_bytes", (json_int_t)ep->inject);
}

/* Address vector, and a channel per peer that needs one, from the
 * exchanged entries. */
static int connect_all(struct ofi_ep *ep, char **all, tp_error *err)
{
    struct tp_chan_set *c = ep->set;
    int n = c->size, me = c->rank;
    char mine[160];
    machine_id(mine, sizeof mine);
    /* every rank that opened one agrees on the smallest cap */
    for (int r = 0; r < n; r++) {
        size_t piece;
        if (all[r][0] != '-' && sscanf(all[r], "%*s %zu", &piece) == 1 && piece > 0 &&
            piece < ep->piece)
            ep->piece = piece;
    }
    for (int r = 0; r < n; r++) {
        if (r == me || c->ch[r])
            continue;
        char hex[1100], mid[160];
        size_t piece;
        int pid;
        if (all[r][0] == '-')
            return tp_error_set(err, TP_EPEER, "rank %d on %s could not open a %s endpoint%s%s", r,
                                host_of(ep, r), ep->f.prov, all[r][1] ? ":" : "", all[r] + 1);
        unsigned char name[TP__OFI_NAME_MAX];
        fi_addr_t fa;
        if (sscanf(all[r], "%1099s %zu %d %159s", hex, &piece, &pid, mid) != 4 ||
            tp__ofi_unhex(hex, strlen(hex), name) < 0)
            return tp_error_set(err, TP_EPROTO, "rank %d on %s sent a malformed %s address", r,
                                host_of(ep, r), ep->f.prov);
        int k = fi_av_insert(ep->f.av, name, 1, &fa, 0, NULL);
        if (k != 1)
            return tp_error_set(err, TP_EPEER, "rank %d on %s: fi_av_insert of its %s address: %s",
                                r, host_of(ep, r), ep->f.prov, k < 0 ? fi_strerror(-k) : "rejected");
        if (strcmp(mine, "-") != 0 && strcmp(mid, mine) == 0)
            ep->pid[r] = pid;
        struct ochan *o = calloc(1, sizeof *o);
        if (!o)
            return tp_error_set(err, TP_ENOMEM, "libfabric channel");
        o->base.ops = &ofi_ops;
        o->base.peer = r;
        o->ep = ep;
        o->fa = fa;
        ep->chans[r] = o;
        /* a failure notice can come at any time: its receive waits from now */
        o->ctrl_rx = (struct piece){.ch = o, .slot = -1, .kind = P_CTRL_RX};
        ssize_t pr = fi_trecv(ep->f.ep, ep->ctrl + (size_t)r * CTRL_BYTES, CTRL_BYTES, ep->ctrl_desc,
                              FI_ADDR_UNSPEC, CTRL_TAG | ((uint64_t)r << SEQ_BITS), 0, &o->ctrl_rx);
        if (pr)
            return tp_error_set(err, TP_ESYS, "fi_trecv for rank %d on %s: %s", r, host_of(ep, r),
                                fi_strerror((int)-pr));
    }
    return 0;
}

static int open_all(struct tp_chan_set *c, tp_error *err)
{
    int n = c->size, me = c->rank, need = 0, rc = 0;
    for (int r = 0; r < n; r++)
        need += r != me && !c->ch[r];
    struct ofi_ep *ep = NULL;
    char mine[4096] = "-";
    if (need) {
        if (n < 1 || n > (1 << RANK_BITS))
            rc = tp_error_set(err, TP_EUNSUP, "the libfabric channel carries at most %d ranks",
                              1 << RANK_BITS);
        else if (!(ep = calloc(1, sizeof *ep)) || !(ep->pid = calloc((size_t)n, sizeof *ep->pid)) ||
                 !(ep->chans = calloc((size_t)n, sizeof *ep->chans)))
            rc = tp_error_set(err, TP_ENOMEM, "libfabric endpoint");
        if (ep) {
            ep->set = c;
            ep->f.next_key = 1;
        }
        if (!rc)
            rc = open_ep(ep, err);
        if (!rc)
            rc = make_entry(ep, mine, sizeof mine, err);
        if (rc)
            snprintf(mine, sizeof mine, "- %s", err->msg); /* "-": no endpoint, and why */
    }
    /* every rank joins the exchange, even one that failed or needs nothing:
     * the caller then tells everyone who failed */
    char **all = NULL;
    tp_error gerr;
    if (tp_boot_allgather(c->boot, mine, &all, &gerr) < 0) {
        if (!rc) {
            *err = gerr;
            rc = gerr.code;
        }
        ep_free(ep);
        return rc;
    }
    if (!rc && need)
        rc = connect_all(ep, all, err);
    tp_boot_free_strings(all, n);
    if (rc) {
        ep_free(ep);
        return rc;
    }
    if (!need)
        return 0;
    for (int r = 0; r < n; r++)
        if (ep->chans[r]) {
            c->ch[r] = &ep->chans[r]->base;
            ep->refs++;
        }
    c->info = ep_info(ep);
    return 0;
}

const struct tp_chan_kind tp__chan_ofi = {"ofi", &ofi_ops, open_all};
