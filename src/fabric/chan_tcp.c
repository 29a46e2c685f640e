/* The kernel-TCP channel of the collectives (include/tp/chan.h): one
 * connection per pair of ranks, non-blocking, messages in order without
 * framing (both ends know every length from the task graph). A receive that
 * reduces goes through a small staging buffer and is reduced as it arrives,
 * so a large message never waits for its last byte before the arithmetic
 * starts. Connections open with a framed hello (src/wire) carrying a token
 * that rank 0 made and the authenticated boot path carried, so a stray
 * connection cannot join. */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "chan_int.h"
#include "tp/clock.h"
#include "tp/wire.h"

#define STAGE (256u << 10)
#define TOKEN 16

struct tcp_chan {
    struct tp_chan base;
    struct tp_chan_set *set;
    int fd;
    size_t fill; /* bytes in stage */
    uint8_t *stage;
};

static const char *peer_host(const struct tcp_chan *t)
{
    return tp__chan_host(t->set, t->base.peer);
}

static void post_send(struct tp_chan *ch, struct tp_chan_op *t)
{
    tp__chan_enqueue(&ch->sq_head, &ch->sq_tail, t);
}

static void post_recv(struct tp_chan *ch, struct tp_chan_op *t)
{
    tp__chan_enqueue(&ch->rq_head, &ch->rq_tail, t);
}

static int io_error(struct tcp_chan *t, ssize_t n, const char *what, tp_error *err)
{
    if (n == 0)
        return tp_error_set(err, TP_EPEER, "rank %d on %s closed the connection (%s)",
                            t->base.peer, peer_host(t), what);
    return tp_error_errno(err, TP_EPEER, errno, "rank %d on %s: %s", t->base.peer, peer_host(t),
                          what);
}

static int progress(struct tp_chan *ch, const struct tp_chan_combine *cb, int *done,
                    tp_error *err)
{
    struct tcp_chan *t = (struct tcp_chan *)ch;
    int moved = 0;
    while (ch->sq_head) {
        struct tp_chan_op *k = ch->sq_head;
        ssize_t n = send(t->fd, (const uint8_t *)k->src + k->off, k->len - k->off,
                         MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            break;
        if (n <= 0)
            return io_error(t, n < 0 ? -1 : 1, "send", err);
        moved = 1;
        k->off += (size_t)n;
        if (k->off < k->len)
            break;
        k->done = true;
        (*done)++;
        tp__chan_dequeue(&ch->sq_head, &ch->sq_tail);
    }
    while (ch->rq_head) {
        struct tp_chan_op *k = ch->rq_head;
        bool reduce = k->reduce;
        ssize_t n;
        if (!reduce) {
            n = recv(t->fd, (uint8_t *)k->dst + k->off, k->len - k->off, MSG_DONTWAIT);
        } else {
            size_t want = k->len - k->off - t->fill;
            if (want > STAGE - t->fill)
                want = STAGE - t->fill;
            n = recv(t->fd, t->stage + t->fill, want, MSG_DONTWAIT);
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            break;
        if (n <= 0)
            return io_error(t, n, "receive", err);
        moved = 1;
        if (!reduce) {
            k->off += (size_t)n;
        } else {
            t->fill += (size_t)n;
            size_t whole = t->fill / cb->esize * cb->esize;
            if (whole) {
                uint8_t *d = (uint8_t *)k->dst + k->off;
                const void *a = k->src ? (const uint8_t *)k->src + k->off : d;
                cb->fn(cb->arg, d, a, t->stage, whole);
                k->off += whole;
                memmove(t->stage, t->stage + whole, t->fill - whole);
                t->fill -= whole;
            }
        }
        if (k->off < k->len)
            continue;
        k->done = true;
        (*done)++;
        tp__chan_dequeue(&ch->rq_head, &ch->rq_tail);
    }
    return moved;
}

static int pollfd_of(struct tp_chan *ch, short *events)
{
    struct tcp_chan *t = (struct tcp_chan *)ch;
    *events = (short)((ch->rq_head ? POLLIN : 0) | (ch->sq_head ? POLLOUT : 0));
    return t->fd;
}

static int alive(struct tp_chan *ch, tp_error *err)
{
    (void)ch;
    (void)err;
    return 0; /* a lost peer shows as EOF or a reset on the socket */
}

static void abort_chan(struct tp_chan *ch)
{
    struct tcp_chan *t = (struct tcp_chan *)ch;
    if (t->fd >= 0)
        shutdown(t->fd, SHUT_RDWR);
}

static void close_chan(struct tp_chan *ch)
{
    struct tcp_chan *t = (struct tcp_chan *)ch;
    if (!t)
        return;
    if (t->fd >= 0)
        close(t->fd);
    free(t->stage);
    free(t);
}

static const struct tp_chan_ops tcp_ops = {
    .post_send = post_send,
    .post_recv = post_recv,
    .progress = progress,
    .pollfd = pollfd_of,
    .alive = alive,
    .abort = abort_chan,
    .close = close_chan,
};

static int new_chan(struct tp_chan_set *c, int peer, int fd, tp_error *err)
{
    struct tcp_chan *t = calloc(1, sizeof *t);
    if (!t || !(t->stage = malloc(STAGE))) {
        free(t);
        close(fd);
        return tp_error_set(err, TP_ENOMEM, "tcp channel");
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    /* 4 MiB socket buffers (capped by net.core.[rw]mem_max): with the
     * autotuned default a ring step stalls on a full buffer while the peer
     * is busy sending (measured: 1 MiB allreduce over loopback 2.5 -> 4.2
     * GB/s busbw, bench/coll-vs-mpi.sh) */
    int sz = 4 << 20;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
    if (c->busy_poll) {
        int us = 50;
        setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &us, sizeof us);
    }
    t->base.ops = &tcp_ops;
    t->base.peer = peer;
    t->set = c;
    t->fd = fd;
    c->ch[peer] = &t->base;
    return 0;
}

/* The first IPv4 address of an interface that is up and not loopback. */
static int default_addr(char *buf, size_t cap, tp_error *err)
{
    struct ifaddrs *ifa, *i;
    if (getifaddrs(&ifa) != 0)
        return tp_error_errno(err, TP_ESYS, errno, "getifaddrs");
    int rc = tp_error_set(err, TP_EUSAGE,
                          "no up, non-loopback IPv4 interface for the data path; use --bind");
    for (i = ifa; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) ||
            (i->ifa_flags & IFF_LOOPBACK))
            continue;
        inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, buf, (socklen_t)cap);
        rc = 0;
        break;
    }
    freeifaddrs(ifa);
    if (!rc)
        tp_error_clear(err);
    return rc;
}

static int open_all(struct tp_chan_set *c, tp_error *err)
{
    int n = c->size, me = c->rank, need = 0;
    for (int r = 0; r < n; r++)
        need += r != me && !c->ch[r];
    char addr[64] = "127.0.0.1";
    if (c->bind_addr)
        snprintf(addr, sizeof addr, "%s", c->bind_addr);
    else if (c->nhosts > 1 && default_addr(addr, sizeof addr, err) < 0)
        return err->code;
    int lfd = -1, port = 0, rc = 0;
    bool lo;
    char mine[256], **all = NULL, hex[2 * TOKEN + 1] = "-";
    if (me == 0) {
        uint8_t token[TOKEN];
        randombytes_buf(token, sizeof token);
        sodium_bin2hex(hex, sizeof hex, token, sizeof token);
    }
    /* every rank joins the exchange, even one with no TCP peer */
    if (need && (rc = tp_listen(addr, 0, "--bind", &lfd, &port, &lo, err)) < 0)
        port = -1;
    snprintf(mine, sizeof mine, "%s %d %s", addr, port, hex);
    if (tp_boot_allgather(c->boot, mine, &all, err) < 0) {
        if (lfd >= 0)
            close(lfd);
        return err->code;
    }
    for (int r = 0; r < n && !rc; r++) {
        char a[64], t[2 * TOKEN + 2];
        int pp;
        if (sscanf(all[r], "%63s %d %33s", a, &pp, t) != 3)
            rc = tp_error_set(err, TP_EPROTO, "rank %d sent a malformed data address", r);
        else if (r < me && !c->ch[r] && pp <= 0)
            rc = tp_error_set(err, TP_EPEER, "rank %d on %s could not listen for data", r,
                              tp__chan_host(c, r));
    }
    if (rc)
        goto out;
    {
        const char *h0 = strrchr(all[0], ' ');
        if (!h0 || strlen(h0 + 1) != 2 * TOKEN) {
            rc = tp_error_set(err, TP_EPROTO, "rank 0 sent no data-path token");
            goto out;
        }
        memcpy(hex, h0 + 1, sizeof hex); /* rank 0's token, for everyone */
    }
    uint64_t deadline = tp_now_ns() + c->timeout_ns;
    /* connect to every lower rank that has no channel yet */
    for (int r = 0; r < me && !rc; r++) {
        if (c->ch[r])
            continue;
        char peer_addr[64];
        int peer_port;
        if (sscanf(all[r], "%63s %d", peer_addr, &peer_port) != 2) {
            rc = tp_error_set(err, TP_EPROTO, "rank %d sent a bad data address", r);
            break;
        }
        struct tp_conn conn;
        if ((rc = tp_conn_connect(&conn, peer_addr, peer_port, c->timeout_ns, err)) < 0) {
            tp_error_prefix(err, "rank %d on %s", r, tp__chan_host(c, r));
            break;
        }
        json_t *hello = json_pack("{s:i, s:s}", "rank", me, "token", hex);
        rc = tp_wire_send(&conn, TP_F_JOIN, hello, err);
        json_decref(hello);
        if (rc < 0) {
            tp_conn_close(&conn);
            tp_error_prefix(err, "rank %d on %s: data-path hello", r, tp__chan_host(c, r));
            break;
        }
        rc = new_chan(c, r, conn.fd, err);
    }
    /* accept every higher rank without a channel */
    int expect = 0;
    for (int r = me + 1; r < n; r++)
        expect += !c->ch[r];
    while (!rc && expect > 0) {
        int ms = tp_deadline_left_ms(deadline);
        struct pollfd p = {.fd = lfd, .events = POLLIN};
        if (ms <= 0 || poll(&p, 1, ms) == 0) {
            int r = me + 1;
            while (r < n && c->ch[r])
                r++;
            rc = tp_error_set(err, TP_ETIMEOUT, "rank %d on %s did not connect its data path",
                              r, tp__chan_host(c, r));
            break;
        }
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0)
            continue;
        /* a framed hello (src/wire: bounded, with a deadline) with the token
         * rank 0 sent over the authenticated bootstrap */
        struct tp_conn in;
        tp_conn_from_fd(&in, fd, 5000000000ull);
        json_t *hello = NULL;
        uint64_t rank = 0;
        const char *tok = "";
        tp_error ignored;
        bool ours = tp_wire_expect(&in, TP_F_JOIN, &hello, &ignored) == 0 &&
                    tp_wire_u64(&in, hello, "rank", (uint64_t)me + 1, (uint64_t)n - 1, &rank,
                                &ignored) == 0 &&
                    tp_wire_str(&in, hello, "token", 2 * TOKEN, &tok, &ignored) == 0 &&
                    strlen(tok) == 2 * TOKEN && sodium_memcmp(tok, hex, 2 * TOKEN) == 0 &&
                    !c->ch[rank];
        json_decref(hello);
        if (!ours) {
            close(fd); /* not one of ours: ignore it */
            continue;
        }
        if ((rc = new_chan(c, (int)rank, fd, err)) == 0)
            expect--;
    }
out:
    if (lfd >= 0)
        close(lfd);
    tp_boot_free_strings(all, n);
    return rc;
}

const struct tp_chan_kind tp__chan_tcp = {"tcp", &tcp_ops, open_all};
