/* Internal to src/fabric: what the channel kinds (chan_shm.c, chan_tcp.c,
 * chan_ofi.c) share with the table and the set-up in chan.c. A kind's
 * open_all fills the set's channels; the set owns them and the arena. */
#ifndef TP_FABRIC_CHAN_INT_H
#define TP_FABRIC_CHAN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tp/chan.h"

struct tp_chan_set {
    struct tp_boot *boot;
    int rank, size, nhosts;
    struct tp_chan **ch; /* by rank, NULL at this rank and where none is open yet */
    uint8_t *arena;      /* arena_bytes for the caller's buffers */
    size_t arena_bytes;
    /* releases the arena; set by whoever mapped it (chan.c, or the shm kind
     * whose arena is shared memory) */
    void (*arena_free)(struct tp_chan_set *s);
    void *arena_ctx;
    bool shared; /* the intra kind joins the ranks of one host */
    uint64_t timeout_ns;
    bool busy_poll;
    json_t *info; /* fabric endpoint facts, or NULL */
    /* valid during tp_chan_open_all only */
    const int *host_of;
    const char *provider;  /* resolved: never NULL for a kind that takes one */
    const char *bind_addr; /* NULL: the kind's default */
};

/* One row of the kinds' table. open_all is collective (every rank calls
 * it, even one that needs no channel of the kind): it opens a channel to
 * every peer whose s->ch[peer] is still NULL (an intra kind: only to the
 * ranks of this host, and it provides the arena). */
struct tp_chan_kind {
    const char *name;
    const struct tp_chan_ops *ops;
    int (*open_all)(struct tp_chan_set *s, tp_error *err);
};

extern const struct tp_chan_kind tp__chan_shm, tp__chan_tcp, tp__chan_ofi;

/* Append op to a channel's queue of posted sends or receives. */
static inline void tp__chan_enqueue(struct tp_chan_op **head, struct tp_chan_op **tail,
                                    struct tp_chan_op *op)
{
    if (*tail)
        (*tail)->next = op;
    else
        *head = op;
    *tail = op;
    op->next = NULL;
}

/* Drop a finished op from the head of a queue. */
static inline void tp__chan_dequeue(struct tp_chan_op **head, struct tp_chan_op **tail)
{
    if (!(*head = (*head)->next))
        *tail = NULL;
}

/* stream.c: writes that bypass this core's cache (tp_chan_op.stream).
 * stream_copy is memcpy, stream_combine is cb->fn (dst may be a), both
 * with non-temporal stores; their stores are ordered before a later store
 * (the one that tells the peer) only after stream_fence. */
void tp__fabric_stream_copy(void *dst, const void *src, size_t n);
void tp__fabric_stream_combine(const struct tp_chan_combine *cb, void *dst, const void *a,
                               const void *b, size_t n);
void tp__fabric_stream_fence(void);

/* Is the process pid (on this machine) dead, or a zombie not yet reaped? */
bool tp__fabric_pid_gone(int pid);

/* TCP_INFO of socket fd into out (tcp_info.c: the kernel's own struct,
 * which glibc's netinet/tcp.h lags behind); out->have false when the
 * kernel refuses. */
struct tp_ep_stats;
void tp__fabric_tcp_info(int fd, struct tp_ep_stats *out);

/* Host name of rank r, for errors. */
static inline const char *tp__chan_host(const struct tp_chan_set *s, int r)
{
    return tp_boot_host(s->boot, r);
}

#endif
