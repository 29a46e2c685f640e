/* The shared-memory channel between ranks of one host (include/tp/chan.h).
 * Every rank's arena (the memory tp_comm_alloc hands out) is a shared
 * mapping that the other ranks of its host map too, so a large send only
 * publishes (offset, length) in a ring of slots and the receiver copies, or
 * reduces, straight out of the sender's buffer: one copy, the reduction
 * fused with it; the send completes when the receiver advances the ring's
 * tail. A small send (up to INLINE bytes) travels inside the slot and
 * completes at once, and each slot carries its own sequence number, so the
 * receiver polls one cache line and the small-message critical path is one
 * line transfer. A receive marked stream (its destination is what a later
 * send hands to a peer) writes with non-temporal stores (stream.c). The
 * arenas are unlinked once mapped, so nothing is left in /dev/shm after a
 * crash. A peer that fails sets its header's abort flag;
 * one that dies is seen in /proc (a zombie counts as dead). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chan_int.h"

#define RING 64
#define SLOT 256
#define INLINE (SLOT - 32)
#define HDR_MAGIC 0x74707368u /* "tpsh" */

struct slot {
    uint64_t seq; /* message number + 1 once the slot is filled */
    uint64_t len, off;
    uint64_t pad;
    uint8_t data[INLINE];
};

struct ring {
    _Alignas(64) uint64_t tail; /* messages consumed; written by the receiver */
    _Alignas(64) struct slot d[RING];
};

struct shm_hdr {
    uint32_t magic;
    int32_t aborted;
    int32_t pid;
    int32_t nranks;
    _Alignas(64) struct ring ring[]; /* ring[j]: this rank's sends to rank j */
};

/* What the channels of one rank share: the mappings (the arena is this
 * rank's, after its header). */
struct shm_ctx {
    uint8_t **base; /* mapping of rank r's arena file, or NULL */
    size_t *len;
    size_t hdr;     /* bytes of header in front of each arena */
    char name[64];
};

struct shm_chan {
    struct tp_chan base;
    struct tp_chan_set *set;
    struct ring *out, *in;
    uint8_t *my_base, *my_end, *peer_base; /* my_end: past this rank's arena */
    size_t peer_len;
    struct shm_hdr *peer_hdr;
    struct tp_chan_op *unpub; /* first posted send not yet published */
    uint64_t head;      /* messages published */
    uint64_t peer_tail; /* the receiver's tail, as last read */
    uint64_t tail;      /* receives consumed */
};

static size_t hdr_bytes(int n)
{
    size_t b = sizeof(struct shm_hdr) + (size_t)n * sizeof(struct ring);
    return (b + 4095) & ~(size_t)4095;
}

static void post_send(struct tp_chan *ch, struct tp_chan_op *t)
{
    struct shm_chan *s = (struct shm_chan *)ch;
    tp__chan_enqueue(&ch->sq_head, &ch->sq_tail, t);
    if (!s->unpub)
        s->unpub = t;
}

static void post_recv(struct tp_chan *ch, struct tp_chan_op *t)
{
    tp__chan_enqueue(&ch->rq_head, &ch->rq_tail, t);
}

static int progress(struct tp_chan *ch, const struct tp_chan_combine *cb, int *done,
                    tp_error *err)
{
    struct shm_chan *s = (struct shm_chan *)ch;
    int moved = 0;
    /* publish: small payloads inline (the send is then complete) */
    while (s->unpub) {
        if (s->head - s->peer_tail >= RING &&
            s->head - (s->peer_tail = __atomic_load_n(&s->out->tail, __ATOMIC_ACQUIRE)) >= RING)
            break;
        struct tp_chan_op *t = s->unpub;
        struct slot *sl = &s->out->d[s->head % RING];
        const uint8_t *src = t->src;
        sl->len = t->len;
        if (t->len <= INLINE) {
            memcpy(sl->data, src, t->len);
            sl->off = UINT64_MAX;
            t->off = 0; /* complete */
        } else {
            if (src < s->my_base || src + t->len > s->my_end)
                return tp_error_set(err, TP_EPROTO,
                                    "collective: send buffer not from tp_comm_alloc");
            sl->off = (uint64_t)(src - s->my_base);
            t->off = s->head + 1; /* complete once the tail passes it */
        }
        __atomic_store_n(&sl->seq, s->head + 1, __ATOMIC_RELEASE);
        s->head++;
        s->unpub = t->next;
        moved = 1;
    }
    /* completed sends: inline ones at once, others once consumed */
    while (ch->sq_head && ch->sq_head != s->unpub) {
        struct tp_chan_op *t = ch->sq_head;
        if (t->off > s->peer_tail &&
            t->off > (s->peer_tail = __atomic_load_n(&s->out->tail, __ATOMIC_ACQUIRE)))
            break;
        t->done = true;
        (*done)++;
        moved = 1;
        tp__chan_dequeue(&ch->sq_head, &ch->sq_tail);
    }
    /* receive */
    while (ch->rq_head) {
        struct slot *sl = &s->in->d[s->tail % RING];
        if (__atomic_load_n(&sl->seq, __ATOMIC_ACQUIRE) != s->tail + 1)
            break;
        struct tp_chan_op *t = ch->rq_head;
        uint64_t off = sl->off, len = sl->len;
        if (len != t->len || (off != UINT64_MAX && (off > s->peer_len || len > s->peer_len - off)))
            return tp_error_set(err, TP_EPROTO,
                                "rank %d sent %llu bytes where %zu were expected "
                                "(ranks disagree on the schedule)",
                                ch->peer, (unsigned long long)len, t->len);
        const uint8_t *src = off == UINT64_MAX ? sl->data : s->peer_base + off;
        const void *a = t->src ? t->src : t->dst;
        if (t->stream) { /* the peer's core reads dst next: past our cache */
            if (t->reduce)
                tp__fabric_stream_combine(cb, t->dst, a, src, len);
            else
                tp__fabric_stream_copy(t->dst, src, len);
            tp__fabric_stream_fence(); /* before the tail, and any send of dst */
        } else if (t->reduce) {
            cb->fn(cb->arg, t->dst, a, src, len);
        } else {
            memcpy(t->dst, src, len);
        }
        s->tail++;
        __atomic_store_n(&s->in->tail, s->tail, __ATOMIC_RELEASE);
        t->done = true;
        (*done)++;
        moved = 1;
        tp__chan_dequeue(&ch->rq_head, &ch->rq_tail);
    }
    return moved;
}

static int pollfd_of(struct tp_chan *ch, short *events)
{
    (void)ch;
    *events = 0;
    return -1;
}

static const struct tp_chan_ops shm_ops;

static int alive(struct tp_chan *ch, tp_error *err)
{
    struct shm_chan *s = (struct shm_chan *)ch;
    const char *host = tp__chan_host(s->set, ch->peer);
    if (__atomic_load_n(&s->peer_hdr->aborted, __ATOMIC_ACQUIRE)) {
        /* a peer gives up when it lost another rank: name the rank lost,
         * not the messenger, when it is one of this host's */
        struct tp_chan_set *set = s->set;
        for (int r = 0; r < set->size; r++) {
            struct shm_chan *o = (struct shm_chan *)set->ch[r];
            if (r != ch->peer && o && o->base.ops == &shm_ops &&
                tp__fabric_pid_gone(o->peer_hdr->pid))
                return tp_error_set(err, TP_EPEER,
                                    "rank %d on %s (pid %d) is gone (rank %d on %s gave up)", r,
                                    tp__chan_host(set, r), o->peer_hdr->pid, ch->peer, host);
        }
        return tp_error_set(err, TP_EPEER, "rank %d on %s failed", ch->peer, host);
    }
    if (tp__fabric_pid_gone(s->peer_hdr->pid))
        return tp_error_set(err, TP_EPEER, "rank %d on %s (pid %d) is gone", ch->peer, host,
                            s->peer_hdr->pid);
    return 0;
}

static void abort_chan(struct tp_chan *ch)
{
    struct shm_chan *s = (struct shm_chan *)ch;
    struct shm_hdr *h = (struct shm_hdr *)s->my_base;
    __atomic_store_n(&h->aborted, 1, __ATOMIC_RELEASE);
}

static void close_chan(struct tp_chan *ch)
{
    free(ch);
}

static const struct tp_chan_ops shm_ops = {
    .post_send = post_send,
    .post_recv = post_recv,
    .progress = progress,
    .pollfd = pollfd_of,
    .alive = alive,
    .abort = abort_chan,
    .close = close_chan,
    .peer_reads = true,
};

/* The set's arena_free: every mapping, and the name if still there. */
static void close_all(struct tp_chan_set *c)
{
    struct shm_ctx *x = c->arena_ctx;
    if (!x)
        return;
    for (int r = 0; r < c->size; r++)
        if (x->base[r])
            munmap(x->base[r], x->len[r]);
    if (x->name[0])
        shm_unlink(x->name);
    free(x->base);
    free(x->len);
    free(x);
    c->arena_ctx = NULL;
    c->arena = NULL;
}

static int map_file(const char *name, size_t *len, uint8_t **base, bool create, size_t size,
                    tp_error *err)
{
    int fd = shm_open(name, create ? O_RDWR | O_CREAT | O_EXCL : O_RDWR, 0600);
    if (fd < 0)
        return tp_error_errno(err, TP_ESYS, errno, "shm_open %s", name);
    if (create && ftruncate(fd, (off_t)size) != 0) {
        int e = errno;
        close(fd);
        return tp_error_errno(err, TP_ESYS, e, "shared memory of %zu bytes (/dev/shm full?)",
                              size);
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return tp_error_errno(err, TP_ESYS, errno, "fstat %s", name);
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return tp_error_errno(err, TP_ESYS, errno, "mmap %s", name);
    *base = p;
    *len = (size_t)st.st_size;
    return 0;
}

static int open_all(struct tp_chan_set *c, tp_error *err)
{
    int n = c->size, me = c->rank, rc;
    struct shm_ctx *x = calloc(1, sizeof *x);
    if (!x || !(x->base = calloc((size_t)n, sizeof *x->base)) ||
        !(x->len = calloc((size_t)n, sizeof *x->len))) {
        if (x)
            free(x->base);
        free(x);
        return tp_error_set(err, TP_ENOMEM, "shared memory");
    }
    c->arena_ctx = x;
    c->arena_free = close_all;
    x->hdr = hdr_bytes(n);
    uint32_t rnd;
    FILE *u = fopen("/dev/urandom", "r");
    if (!u || fread(&rnd, sizeof rnd, 1, u) != 1)
        rnd = (uint32_t)getpid() * 2654435761u;
    if (u)
        fclose(u);
    snprintf(x->name, sizeof x->name, "/trainpath-coll-%d-%08x", (int)getpid(), rnd);
    char **all = NULL;
    rc = map_file(x->name, &x->len[me], &x->base[me], true, x->hdr + c->arena_bytes, err);
    if (rc == 0) {
        struct shm_hdr *h = (struct shm_hdr *)x->base[me];
        h->magic = HDR_MAGIC;
        h->pid = (int32_t)getpid();
        h->nranks = n;
        c->arena = x->base[me] + x->hdr;
    }
    /* exchange names even after a failure, so every rank sees it */
    if (tp_boot_allgather(c->boot, rc == 0 ? x->name : "-", &all, err) < 0)
        return err->code;
    for (int r = 0; r < n && rc == 0; r++) {
        if (r == me || c->host_of[r] != c->host_of[me])
            continue;
        if (strcmp(all[r], "-") == 0) {
            rc = tp_error_set(err, TP_EPEER, "rank %d on %s could not create shared memory", r,
                              tp__chan_host(c, r));
            break;
        }
        if ((rc = map_file(all[r], &x->len[r], &x->base[r], false, 0, err)) < 0)
            break;
        struct shm_hdr *ph = (struct shm_hdr *)x->base[r];
        if (ph->magic != HDR_MAGIC || ph->nranks != n ||
            x->len[r] < hdr_bytes(n)) {
            rc = tp_error_set(err, TP_EPROTO, "rank %d: shared memory %s is not ours", r, all[r]);
            break;
        }
        struct shm_chan *s = calloc(1, sizeof *s);
        if (!s) {
            rc = tp_error_set(err, TP_ENOMEM, "shm channel");
            break;
        }
        s->base.ops = &shm_ops;
        s->base.peer = r;
        s->set = c;
        s->my_base = x->base[me];
        s->my_end = x->base[me] + x->hdr + c->arena_bytes;
        s->peer_base = x->base[r];
        s->peer_len = x->len[r];
        s->peer_hdr = ph;
        s->out = &((struct shm_hdr *)x->base[me])->ring[r];
        s->in = &ph->ring[me];
        c->ch[r] = &s->base;
    }
    tp_boot_free_strings(all, n);
    /* everyone mapped (or failed): the names can go */
    tp_error berr;
    int brc = tp_boot_barrier(c->boot, &berr);
    shm_unlink(x->name);
    x->name[0] = 0;
    if (rc == 0 && brc < 0) {
        *err = berr;
        rc = brc;
    }
    return rc;
}

const struct tp_chan_kind tp__chan_shm = {"shm", &shm_ops, open_all};
