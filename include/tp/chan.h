/* Channels: how the collectives move bytes between the ranks of a boot group
 * (include/tp/boot.h). A channel joins this rank to one peer and carries
 * transfers in the order they were posted, per direction; both ends post the
 * same transfers in the same order (the caller's task graph fixes every
 * length), so a channel needs no framing and no tags of the caller's.
 *
 * A transfer is a struct tp_chan_op that the caller owns and embeds in its
 * own bookkeeping (coll's task). A receive either copies or reduces: a
 * reducing receive calls the caller's combine function on the bytes as they
 * arrive, so this layer knows nothing of data types or operators.
 *
 * The kinds are rows of a table (src/fabric/chan.c), one file each:
 *   shm  ranks of one host: every rank's arena is shared memory that the
 *        others map, and a receiver copies or reduces straight out of the
 *        sender's buffer (one copy, the reduction fused with it);
 *   tcp  kernel TCP, one connection per pair;
 *   ofi  libfabric, one RDM endpoint per rank, any provider.
 * The point-to-point transport (include/tp/transport.h) names the kind that
 * joins ranks on different hosts; tp_chan_intra_parse names the one for
 * ranks of one host. tp_chan_open_all opens every channel of a rank at once.
 *
 * Nothing here blocks except tp_chan_open_all: progress() moves what can move
 * and returns; the caller waits (pollfd) and keeps the deadlines. */
#ifndef TP_CHAN_H
#define TP_CHAN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tp/boot.h"
#include "tp/error.h"

struct tp_transport_ops;

/* How a reducing receive combines: fn(arg, dst, a, b, bytes) sets dst to a
 * op b for bytes bytes (dst may be a). A channel only ever passes whole
 * elements of esize bytes. */
struct tp_chan_combine {
    void (*fn)(void *arg, void *dst, const void *a, const void *b, size_t bytes);
    void *arg;
    size_t esize;
};

/* One transfer. The caller fills dst/src/len/reduce before posting; off and
 * next belong to the channel from post until done. */
struct tp_chan_op {
    void *dst;               /* receive: where the result lands */
    const void *src;         /* send: the bytes; reducing receive: the first
                                operand (NULL: dst itself) */
    size_t len;              /* bytes */
    size_t off;              /* bytes moved so far */
    struct tp_chan_op *next; /* the channel's queue */
    bool reduce;             /* receive: dst = combine(src or dst, incoming) */
    bool stream;             /* receive: write dst past this core's cache
                                (non-temporal stores) where the kind writes
                                it itself (shm); a hint, ignored elsewhere */
    bool done;               /* set once the transfer has finished */
};

struct tp_chan;

/* What every kind implements (the calls below say what each does); the
 * kind's name is its row's (tp_chan_kind_name). */
struct tp_chan_ops {
    void (*post_send)(struct tp_chan *ch, struct tp_chan_op *op);
    void (*post_recv)(struct tp_chan *ch, struct tp_chan_op *op);
    int (*progress)(struct tp_chan *ch, const struct tp_chan_combine *cb, int *done,
                    tp_error *err);
    int (*pollfd)(struct tp_chan *ch, short *events);
    int (*alive)(struct tp_chan *ch, tp_error *err);
    void (*abort)(struct tp_chan *ch);
    void (*close)(struct tp_chan *ch);
    /* a send is read by the peer's core straight out of this rank's memory
     * (shm): a receive whose destination such a send forwards next is
     * worth a stream (tp_chan_op.stream) */
    bool peer_reads;
};

/* The part of every channel the caller may read. */
struct tp_chan {
    const struct tp_chan_ops *ops;
    int peer;                             /* the peer's rank */
    struct tp_chan_op *sq_head, *sq_tail; /* posted sends, in order */
    struct tp_chan_op *rq_head, *rq_tail; /* posted receives, in order */
};

/* Queue op behind the earlier sends (receives) to this peer; the channel
 * starts moving it at the next progress() at the latest. */
static inline void tp_chan_post_send(struct tp_chan *ch, struct tp_chan_op *op)
{
    op->off = 0;
    op->done = false;
    ch->ops->post_send(ch, op);
}

static inline void tp_chan_post_recv(struct tp_chan *ch, struct tp_chan_op *op)
{
    op->off = 0;
    op->done = false;
    ch->ops->post_recv(ch, op);
}

/* Has the channel posted transfers that are not done? */
static inline bool tp_chan_busy(const struct tp_chan *ch)
{
    return ch->sq_head || ch->rq_head;
}

/* Move what can move without blocking. Sets done on every transfer that
 * finished and adds their number to *done; reducing receives go through cb.
 * Returns > 0 when anything finished or moved, 0 when nothing could. On error
 * (a negative TP_E* code; err names the peer, its host and what failed) the
 * channel is unusable: abort and close it. */
static inline int tp_chan_progress(struct tp_chan *ch, const struct tp_chan_combine *cb, int *done,
                                   tp_error *err)
{
    return ch->ops->progress(ch, cb, done, err);
}

/* For a blocking wait: the file descriptor to poll and its events, or -1
 * when the channel cannot wake a poll() (shared memory, a completion queue
 * without wait object): the caller then yields instead. */
static inline int tp_chan_pollfd(struct tp_chan *ch, short *events)
{
    return ch->ops->pollfd(ch, events);
}

/* Does the peer read this channel's sends out of this rank's memory? */
static inline bool tp_chan_peer_reads(const struct tp_chan *ch)
{
    return ch->ops->peer_reads;
}

/* Is the peer still there? For the caller to ask now and then while it
 * waits. Returns 0, or TP_EPEER with err naming the rank that is gone or
 * gave up (and its pid where it ran on this machine). */
static inline int tp_chan_alive(struct tp_chan *ch, tp_error *err)
{
    return ch->ops->alive(ch, err);
}

/* Tell the peer this rank has failed (best effort, bounded), so it stops
 * waiting at once instead of at its deadline. */
static inline void tp_chan_abort(struct tp_chan *ch)
{
    ch->ops->abort(ch);
}

/* ---- the kinds ---- */

struct tp_chan_kind; /* a row of the table */

/* Every kind, NULL-terminated, in the order provenance lists them. */
extern const struct tp_chan_kind *const tp_chan_kinds[];

/* The row's name ("shm", "tcp", "ofi"). */
const char *tp_chan_kind_name(const struct tp_chan_kind *k);

/* --intra NAME: how ranks of one host talk. "shm" (also for NULL) gives the
 * shared-memory kind, "fabric" gives *out = NULL: the transport's own kind.
 * Returns 0, or TP_EUSAGE with err saying "--intra NAME: shm or fabric". */
int tp_chan_intra_parse(const char *name, const struct tp_chan_kind **out, tp_error *err);

/* ---- every channel of one rank ---- */

struct tp_chan_opts {
    const struct tp_transport_ops *transport; /* its channel kind joins the
                                                 ranks that intra does not */
    const struct tp_chan_kind *intra; /* ranks of one host (where some host has
                                         two ranks), or NULL: the transport's */
    const char *provider;  /* ofi: NULL or "": the transport's default */
    const char *bind_addr; /* listen here for data; NULL: 127.0.0.1 on one host,
                              else the first non-loopback IPv4 address up */
    const int *host_of;    /* rank -> host index (read during the call) */
    int nhosts;
    size_t arena_bytes;    /* this rank's arena (rounded up to whole pages) */
    uint64_t timeout_ns;   /* every blocking step of the set-up */
    bool busy_poll;        /* tcp: SO_BUSY_POLL on the sockets */
};

struct tp_chan_set;

/* Open this rank's channels to every other rank of b (collective: every rank
 * calls it with the same kinds): the intra kind between ranks of one host
 * when some host has two, the transport's kind for every other pair; and the
 * rank's arena of o->arena_bytes, which the caller's buffers come from (with
 * shm it is the shared memory peers read; ofi registers it once). On error no
 * set exists, what was opened is closed, and err names the rank, host or
 * address at fault; the other ranks may still be waiting for this one in an
 * exchange, so agree on the outcome (tp_boot_allgather) before going on. */
int tp_chan_open_all(struct tp_boot *b, const struct tp_chan_opts *o, struct tp_chan_set **out,
                     tp_error *err);

/* The channels by rank (NULL at this rank's own index), valid until close. */
struct tp_chan **tp_chan_set_chans(struct tp_chan_set *s);

/* The arena (arena_bytes, page-aligned, zero-filled), valid until close. */
uint8_t *tp_chan_set_arena(struct tp_chan_set *s);

/* Whether shared memory joins the ranks of one host. */
bool tp_chan_set_shared(const struct tp_chan_set *s);

/* Channels of kind k. */
int tp_chan_set_count(const struct tp_chan_set *s, const struct tp_chan_kind *k);

/* Provenance of the fabric endpoint (provider, domain, limits), or NULL
 * when no channel has one. Borrowed: valid until close. */
json_t *tp_chan_set_info(const struct tp_chan_set *s);

/* tp_chan_abort on every channel; s may be NULL. */
void tp_chan_set_abort(struct tp_chan_set *s);

/* Close every channel and release the arena; s may be NULL. */
void tp_chan_set_close(struct tp_chan_set *s);

#endif
