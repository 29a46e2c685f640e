/* Kernel TCP transport. One connected stream socket per endpoint carries
 * fixed-size messages back to back; framing is implicit because both ends know
 * the message length. Once connected the socket blocks in the kernel with no
 * kernel timeout, so a ping-pong receive is one system call that arms no
 * timer (a kernel timeout costs ~1.3 us per call on a VM, a tenth of a
 * loopback round trip). Deadlines are kept by a watchdog thread instead: it
 * looks at every endpoint in a blocking call every 10 ms and shuts down the
 * socket of one that has made no progress for its timeout, which wakes the
 * call with a timeout error. A stream with a stop flag runs with a 10 ms
 * SO_RCVTIMEO/SO_SNDTIMEO slice instead, to check the flag. With busy_poll
 * the calls are non-blocking and spin, yielding the CPU now and then. Streams
 * send with MSG_MORE on all but the last message, so small messages coalesce
 * as in iperf3's writes. The server listens at open() and accepts in
 * connect(); the client connects in connect(). Kernel flow control is the
 * window: send_stream just writes. recv_stream reads as much of the stream as
 * its buffer holds (at least 64 KiB, never past the stream's last byte), so
 * small messages do not cost a system call each.
 *
 * A stream that was stopped or failed midway may leave part of a message in
 * the socket; the endpoint then refuses further data calls.
 *
 * tp_ep_info for TCP: provider "kernel", fabric says how the socket polls
 * (SO_BUSY_POLL set, refused, or off), domain is the local IP. */
#include "tp/transport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "chan_int.h"
#include "tp/clock.h"

#define SLICE_MS 10
#define BUSY_POLL_US 50
#define YIELD_EVERY 1024           /* empty spinning reads between sched_yield() calls */
#define RX_MIN_BYTES (64u * 1024u) /* recv_stream reads small messages in bulk */

struct tp_ep {
    bool initiator;
    bool busy_poll;
    bool broken;    /* a stream was stopped or failed midway: bytes may be left */
    int lfd;        /* listener (server, until connect) */
    int fd;         /* data socket */
    unsigned spins; /* empty spinning reads/writes (busy_poll) */
    /* watchdog state: armed while in a blocking call with no kernel timeout */
    struct tp_ep *wd_next;
    bool wd_listed;
    int armed;            /* atomic */
    uint64_t progress_ns; /* atomic: last progress of the armed call */
    uint64_t op_timeout_ns;
    int fired;   /* atomic: the watchdog shut the socket down */
    bool sliced; /* SO_RCVTIMEO/SO_SNDTIMEO slices are set */
    size_t max_msg;
    size_t rx_cap;
    void *tx;
    void *rx;
    char peer[128];
    char local_ip[64];
    char addr[80];
    char poll_note[96];
};

extern const struct tp_transport_ops tp_tcp_ops;

static int alloc_buf(void **out, size_t bytes)
{
    void *p = NULL;
    if (posix_memalign(&p, 4096, bytes) != 0)
        return -1;
    memset(p, 0, bytes); /* touch every page now, not in the timed loop */
    *out = p;
    return 0;
}

/* Parse "IP:PORT" or "[IPv6]:PORT" into a sockaddr. */
static int parse_hostport(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
    char host[64];
    const char *port;
    if (s[0] == '[') {
        const char *end = strchr(s, ']');
        if (!end || end[1] != ':' || (size_t)(end - s - 1) >= sizeof host)
            return -1;
        memcpy(host, s + 1, (size_t)(end - s - 1));
        host[end - s - 1] = '\0';
        port = end + 2;
    } else {
        const char *colon = strrchr(s, ':');
        if (!colon || (size_t)(colon - s) >= sizeof host)
            return -1;
        memcpy(host, s, (size_t)(colon - s));
        host[colon - s] = '\0';
        port = colon + 1;
    }
    struct addrinfo hints = {.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
                             .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    if (getaddrinfo(host, port, &hints, &res) != 0 || !res)
        return -1;
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    *len = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

static int parse_ip(const char *ip, struct sockaddr_storage *ss, socklen_t *len)
{
    char hp[80];
    snprintf(hp, sizeof hp, strchr(ip, ':') ? "[%s]:0" : "%s:0", ip);
    return parse_hostport(hp, ss, len);
}

static void format_addr(const struct sockaddr_storage *ss, char *out, size_t cap)
{
    char host[INET6_ADDRSTRLEN] = "?";
    if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
        inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
        snprintf(out, cap, "[%s]:%u", host, ntohs(a->sin6_port));
    } else {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
        inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
        snprintf(out, cap, "%s:%u", host, ntohs(a->sin_port));
    }
}

static int set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* ---- watchdog ---- */

static pthread_mutex_t wd_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wd_cond = PTHREAD_COND_INITIALIZER;
static struct tp_ep *wd_list;
static bool wd_started;

static void *wd_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&wd_lock);
    for (;;) {
        while (!wd_list)
            pthread_cond_wait(&wd_cond, &wd_lock);
        uint64_t now = tp_now_ns();
        for (struct tp_ep *ep = wd_list; ep; ep = ep->wd_next) {
            if (!__atomic_load_n(&ep->armed, __ATOMIC_ACQUIRE))
                continue;
            uint64_t last = __atomic_load_n(&ep->progress_ns, __ATOMIC_RELAXED);
            if (now > last && now - last > ep->op_timeout_ns &&
                !__atomic_exchange_n(&ep->fired, 1, __ATOMIC_ACQ_REL))
                shutdown(ep->fd, SHUT_RDWR);
        }
        pthread_mutex_unlock(&wd_lock);
        usleep(SLICE_MS * 1000);
        pthread_mutex_lock(&wd_lock);
    }
    return NULL;
}

/* Put a connected endpoint under the watchdog (starting it on first use). */
static int wd_add(struct tp_ep *ep, tp_error *err)
{
    pthread_mutex_lock(&wd_lock);
    if (!wd_started) {
        pthread_t t;
        if (pthread_create(&t, NULL, wd_main, NULL) != 0) {
            pthread_mutex_unlock(&wd_lock);
            return tp_error_set(err, TP_ESYS, "cannot start the tcp watchdog thread");
        }
        pthread_detach(t);
        wd_started = true;
    }
    ep->wd_next = wd_list;
    wd_list = ep;
    ep->wd_listed = true;
    pthread_cond_signal(&wd_cond);
    pthread_mutex_unlock(&wd_lock);
    return 0;
}

static void wd_remove(struct tp_ep *ep)
{
    if (!ep->wd_listed)
        return;
    pthread_mutex_lock(&wd_lock);
    for (struct tp_ep **pp = &wd_list; *pp; pp = &(*pp)->wd_next)
        if (*pp == ep) {
            *pp = ep->wd_next;
            break;
        }
    ep->wd_listed = false;
    pthread_mutex_unlock(&wd_lock);
}

static inline void wd_arm(struct tp_ep *ep, uint64_t timeout_ns)
{
    ep->op_timeout_ns = timeout_ns;
    __atomic_store_n(&ep->progress_ns, tp_now_ns(), __ATOMIC_RELAXED);
    __atomic_store_n(&ep->armed, 1, __ATOMIC_RELEASE);
}

static inline void wd_progress(struct tp_ep *ep)
{
    __atomic_store_n(&ep->progress_ns, tp_now_ns(), __ATOMIC_RELAXED);
}

static inline void wd_disarm(struct tp_ep *ep)
{
    __atomic_store_n(&ep->armed, 0, __ATOMIC_RELEASE);
}

/* Kernel timeouts on the socket: a slice for stop-flag streams, 0 (none)
 * for everything else. */
static int set_slice(struct tp_ep *ep, bool on)
{
    struct timeval tv = {.tv_sec = 0, .tv_usec = on ? SLICE_MS * 1000 : 0};
    if (setsockopt(ep->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0 ||
        setsockopt(ep->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0)
        return -1;
    ep->sliced = on;
    return 0;
}

/* TCP_NODELAY always; SO_BUSY_POLL when asked (unprivileged users usually get
 * EPERM: noted, then the spinning reads still apply). */
static int tune_socket(struct tp_ep *ep, int fd, tp_error *err)
{
    int one = 1;
    int fl = fcntl(fd, F_GETFL);
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0 || fl < 0 ||
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0)
        return tp_error_errno(err, TP_ESYS, errno, "setting up the socket to %s", ep->peer);
    if (!ep->busy_poll) {
        int rc = wd_add(ep, err);
        if (rc)
            return rc;
    }
    snprintf(ep->poll_note, sizeof ep->poll_note, "kernel TCP, blocking calls, watchdog deadline");
    if (ep->busy_poll) {
        int us = BUSY_POLL_US;
        if (setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &us, sizeof us) == 0)
            snprintf(ep->poll_note, sizeof ep->poll_note,
                     "kernel TCP, SO_BUSY_POLL %d us, spinning reads", us);
        else if (errno == EPERM || errno == ENOPROTOOPT)
            snprintf(ep->poll_note, sizeof ep->poll_note,
                     "kernel TCP, SO_BUSY_POLL refused (%s), spinning reads", strerror(errno));
        else
            return tp_error_errno(err, TP_ESYS, errno, "SO_BUSY_POLL on socket to %s", ep->peer);
    }
    return 0;
}

static void tcp_close(struct tp_ep *ep)
{
    if (!ep)
        return;
    wd_remove(ep);
    if (ep->lfd >= 0)
        close(ep->lfd);
    if (ep->fd >= 0)
        close(ep->fd);
    free(ep->tx);
    free(ep->rx);
    free(ep);
}

static int tcp_open(const struct tp_ep_config *cfg, struct tp_ep **out, tp_error *err)
{
    if (cfg->mode == TP_XFER_RMA)
        return tp_error_set(err, TP_EUNSUP,
                            "the tcp transport has no RMA mode (kernel sockets are two-sided); "
                            "use the ofi transport for RMA writes");
    if (cfg->max_msg_bytes < 1 || cfg->window < 1)
        return tp_error_set(err, TP_EUSAGE,
                            "tcp endpoint needs max_msg_bytes >= 1 and window >= 1");
    tp_clock_init();
    struct tp_ep *ep = calloc(1, sizeof *ep);
    if (!ep)
        return tp_error_set(err, TP_ENOMEM, "out of memory opening a tcp endpoint");
    ep->lfd = ep->fd = -1;
    ep->initiator = cfg->initiator;
    ep->busy_poll = cfg->busy_poll;
    ep->max_msg = cfg->max_msg_bytes;
    ep->rx_cap = cfg->max_msg_bytes > RX_MIN_BYTES ? cfg->max_msg_bytes : RX_MIN_BYTES;
    snprintf(ep->peer, sizeof ep->peer, "%s", cfg->peer_name ? cfg->peer_name : "(peer)");
    snprintf(ep->local_ip, sizeof ep->local_ip, "%s", cfg->local_ip ? cfg->local_ip : "");
    snprintf(ep->poll_note, sizeof ep->poll_note, "kernel TCP");
    if (alloc_buf(&ep->tx, ep->max_msg) != 0 || alloc_buf(&ep->rx, ep->rx_cap) != 0) {
        tcp_close(ep);
        return tp_error_set(err, TP_ENOMEM, "cannot allocate %zu-byte tcp buffers", ep->rx_cap);
    }
    if (!ep->initiator) {
        struct sockaddr_storage ss;
        socklen_t sl;
        if (!cfg->local_ip || parse_ip(cfg->local_ip, &ss, &sl) != 0) {
            tcp_close(ep);
            return tp_error_set(err, TP_EUSAGE, "tcp server needs a numeric local IP, got '%s'",
                                cfg->local_ip ? cfg->local_ip : "(none)");
        }
        int one = 1;
        ep->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (ep->lfd < 0 || setsockopt(ep->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
            bind(ep->lfd, (struct sockaddr *)&ss, sl) != 0 || listen(ep->lfd, 4) != 0 ||
            set_nonblock(ep->lfd) != 0) {
            int e = errno;
            tcp_close(ep);
            return tp_error_errno(err, TP_ESYS, e, "cannot listen on %s", cfg->local_ip);
        }
        sl = sizeof ss;
        if (getsockname(ep->lfd, (struct sockaddr *)&ss, &sl) != 0) {
            int e = errno;
            tcp_close(ep);
            return tp_error_errno(err, TP_ESYS, e, "getsockname on %s", cfg->local_ip);
        }
        format_addr(&ss, ep->addr, sizeof ep->addr);
    } else {
        /* the client's address is the IP it will connect from */
        snprintf(ep->addr, sizeof ep->addr, "%s", ep->local_ip);
    }
    *out = ep;
    return 0;
}

static const char *tcp_address(struct tp_ep *ep)
{
    return ep->addr;
}

/* Wait until fd is ready for events, in slices, up to deadline. */
static int wait_fd(int fd, short events, uint64_t deadline)
{
    int left = tp_deadline_left_ms(deadline);
    if (left == 0)
        return 0;
    struct pollfd p = {.fd = fd, .events = events};
    int n = poll(&p, 1, left < SLICE_MS ? left : SLICE_MS);
    return n < 0 && errno != EINTR ? -1 : n;
}

static int client_connect(struct tp_ep *ep, const char *peer_addr, uint64_t timeout_ns,
                          tp_error *err)
{
    struct sockaddr_storage ss;
    socklen_t sl;
    if (!peer_addr || parse_hostport(peer_addr, &ss, &sl) != 0)
        return tp_error_set(err, TP_EUSAGE, "bad tcp address '%s' from peer %s (want IP:PORT)",
                            peer_addr ? peer_addr : "", ep->peer);
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return tp_error_errno(err, TP_ESYS, errno, "socket for %s", peer_addr);
    ep->fd = fd;
    int rc = tune_socket(ep, fd, err);
    if (rc)
        return rc;
    struct sockaddr_storage ls;
    socklen_t ll;
    if (ep->local_ip[0] && parse_ip(ep->local_ip, &ls, &ll) == 0 && ls.ss_family == ss.ss_family &&
        bind(fd, (struct sockaddr *)&ls, ll) != 0)
        return tp_error_errno(err, TP_ESYS, errno, "cannot bind to %s", ep->local_ip);
    if (connect(fd, (struct sockaddr *)&ss, sl) != 0 && errno != EINPROGRESS)
        return tp_error_errno(err, TP_EPEER, errno, "connect to peer %s at %s", ep->peer,
                              peer_addr);
    uint64_t deadline = tp_now_ns() + timeout_ns;
    for (;;) {
        int n = wait_fd(fd, POLLOUT, deadline);
        if (n < 0)
            return tp_error_errno(err, TP_ESYS, errno, "poll on connect to %s", peer_addr);
        if (n > 0)
            break;
        if (tp_now_ns() >= deadline)
            return tp_error_set(err, TP_ETIMEOUT, "connect to peer %s at %s timed out after %.1f s",
                                ep->peer, peer_addr, (double)timeout_ns / 1e9);
    }
    int soerr = 0;
    socklen_t el = sizeof soerr;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &el);
    if (soerr)
        return tp_error_errno(err, TP_EPEER, soerr, "connect to peer %s at %s", ep->peer,
                              peer_addr);
    return 0;
}

/* Does the connected socket's peer have the IP the control channel gave? */
static bool from_expected_ip(int fd, const char *want_ip)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char got[80], want[80];
    if (!want_ip || !want_ip[0])
        return true;
    if (getpeername(fd, (struct sockaddr *)&ss, &sl) != 0)
        return false;
    format_addr(&ss, got, sizeof got);
    snprintf(want, sizeof want, strchr(want_ip, ':') ? "[%s]:" : "%s:", want_ip);
    return strncmp(got, want, strlen(want)) == 0;
}

/* Accept the client's data connection. Connections from any other IP than
 * the one the client announced over the authenticated control channel are
 * dropped, so a third host cannot slip into the data path. */
static int server_accept(struct tp_ep *ep, const char *peer_ip, uint64_t timeout_ns, tp_error *err)
{
    if (ep->lfd < 0)
        return tp_error_set(err, TP_EUSAGE, "tcp endpoint for %s is not listening", ep->peer);
    uint64_t deadline = tp_now_ns() + timeout_ns;
    for (;;) {
        int fd = accept4(ep->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0 && !from_expected_ip(fd, peer_ip)) {
            close(fd);
            continue;
        }
        if (fd >= 0) {
            ep->fd = fd;
            close(ep->lfd);
            ep->lfd = -1;
            return tune_socket(ep, fd, err);
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED)
            return tp_error_errno(err, TP_ESYS, errno, "accept on %s", ep->addr);
        if (wait_fd(ep->lfd, POLLIN, deadline) < 0)
            return tp_error_errno(err, TP_ESYS, errno, "poll on %s", ep->addr);
        if (tp_now_ns() >= deadline)
            return tp_error_set(err, TP_ETIMEOUT, "peer %s did not connect to %s within %.1f s",
                                ep->peer, ep->addr, (double)timeout_ns / 1e9);
    }
}

static int tcp_connect(struct tp_ep *ep, const char *peer_addr, uint64_t timeout_ns, tp_error *err)
{
    if (ep->fd >= 0)
        return tp_error_set(err, TP_EUSAGE, "tcp endpoint for %s is already connected", ep->peer);
    int rc = ep->initiator ? client_connect(ep, peer_addr, timeout_ns, err)
                           : server_accept(ep, peer_addr, timeout_ns, err);
    if (rc && ep->fd >= 0) {
        close(ep->fd);
        ep->fd = -1;
    }
    return rc;
}

static void *tcp_tx_buf(struct tp_ep *ep)
{
    return ep->tx;
}

static int check_ready(struct tp_ep *ep, size_t len, tp_error *err)
{
    if (ep->fd < 0)
        return tp_error_set(err, TP_EUSAGE, "tcp endpoint for %s is not connected", ep->peer);
    if (ep->broken)
        return tp_error_set(
            err, TP_EPROTO,
            "tcp endpoint for %s failed, timed out or was left mid-stream; open a new one",
            ep->peer);
    if (len < 1 || len > ep->max_msg)
        return tp_error_set(err, TP_EUSAGE, "message of %zu bytes outside 1..%zu", len,
                            ep->max_msg);
    return 0;
}

static bool stopped(const struct tp_stream_ctl *ctl)
{
    return ctl && ctl->stop && *ctl->stop;
}

static int timed_out(struct tp_ep *ep, const char *what, uint64_t timeout_ns, tp_error *err)
{
    return tp_error_set(err, TP_ETIMEOUT, "no progress %s peer %s for %.3f s", what, ep->peer,
                        (double)timeout_ns / 1e9);
}

/* Wait for fd readiness or spin; 1 to retry, 0 on stop, < 0 on error. */
static int idle(struct tp_ep *ep, short events, uint64_t deadline, const struct tp_stream_ctl *ctl,
                uint64_t timeout_ns, tp_error *err)
{
    if (stopped(ctl))
        return 0;
    if (ep->busy_poll && ++ep->spins % YIELD_EVERY == 0)
        sched_yield(); /* let a peer or softirq sharing the core run */
    if (tp_now_ns() >= deadline)
        return timed_out(ep, events == POLLIN ? "receiving from" : "sending to", timeout_ns, err);
    return 1;
}

static int peer_closed(struct tp_ep *ep, tp_error *err)
{
    return tp_error_set(err, TP_EPEER, "peer %s closed the connection", ep->peer);
}

/* A failed send() or recv(): the peer's fault where the errno says so. */
static int io_failed(struct tp_ep *ep, int e, const char *call, tp_error *err)
{
    switch (e) {
    case EPIPE:
    case ECONNRESET: return peer_closed(ep, err);
    case ETIMEDOUT:
    case ECONNABORTED:
    case EHOSTUNREACH:
    case ENETUNREACH:
    case ENETDOWN: return tp_error_errno(err, TP_EPEER, e, "connection to peer %s lost", ep->peer);
    default: return tp_error_errno(err, TP_ESYS, e, "%s with peer %s", call, ep->peer);
    }
}

/* Did the watchdog end this call? Then the socket is shut down for good. */
static int fired(struct tp_ep *ep, short events, uint64_t timeout_ns, tp_error *err)
{
    ep->broken = true;
    return timed_out(ep, events == POLLIN ? "receiving from" : "sending to", timeout_ns, err);
}

/* Write exactly len bytes; 1 done, 0 stopped, < 0 error. */
static int write_all(struct tp_ep *ep, const char *p, size_t len, uint64_t timeout_ns,
                     const struct tp_stream_ctl *ctl, int more, tp_error *err)
{
    int flags = MSG_NOSIGNAL | more | (ep->busy_poll ? MSG_DONTWAIT : 0);
    bool watched = !ep->busy_poll && !ep->sliced;
    /* a watched call never sees EAGAIN: only the other modes keep a deadline */
    uint64_t deadline = watched ? 0 : tp_now_ns() + timeout_ns;
    int rc = 1;
    if (watched)
        wd_arm(ep, timeout_ns);
    while (len > 0) {
        ssize_t n = send(ep->fd, p, len, flags);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            if (len == 0) /* done: the common case reads no clock here */
                break;
            if (watched)
                wd_progress(ep);
            else
                deadline = tp_now_ns() + timeout_ns;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (watched && __atomic_load_n(&ep->fired, __ATOMIC_ACQUIRE)) {
            rc = fired(ep, POLLOUT, timeout_ns, err);
            break;
        }
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            rc = io_failed(ep, errno, "send", err);
            break;
        }
        if ((rc = idle(ep, POLLOUT, deadline, ctl, timeout_ns, err)) <= 0)
            break;
        rc = 1;
    }
    if (watched)
        wd_disarm(ep);
    return rc;
}

/* Read between min and max bytes into p; returns bytes read (>= min), 0 when
 * stopped, < 0 on error. */
static ssize_t read_some(struct tp_ep *ep, char *p, size_t min, size_t max, uint64_t timeout_ns,
                         const struct tp_stream_ctl *ctl, tp_error *err)
{
    size_t got = 0;
    bool watched = !ep->busy_poll && !ep->sliced;
    uint64_t deadline = watched ? 0 : tp_now_ns() + timeout_ns;
    ssize_t rc = 0;
    if (watched)
        wd_arm(ep, timeout_ns);
    while (got < min) {
        ssize_t n = recv(ep->fd, p + got, max - got, ep->busy_poll ? MSG_DONTWAIT : 0);
        if (n > 0) {
            got += (size_t)n;
            if (got >= min)
                break;
            if (watched)
                wd_progress(ep);
            else
                deadline = tp_now_ns() + timeout_ns;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (watched && __atomic_load_n(&ep->fired, __ATOMIC_ACQUIRE)) {
            rc = fired(ep, POLLIN, timeout_ns, err);
            break;
        }
        if (n == 0) {
            rc = peer_closed(ep, err);
            break;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            rc = io_failed(ep, errno, "recv", err);
            break;
        }
        if ((rc = idle(ep, POLLIN, deadline, ctl, timeout_ns, err)) <= 0)
            break;
        rc = 0;
    }
    if (watched)
        wd_disarm(ep);
    return got >= min ? (ssize_t)got : rc;
}

static int tcp_send(struct tp_ep *ep, size_t len, uint64_t timeout_ns, tp_error *err)
{
    int rc = check_ready(ep, len, err);
    if (rc)
        return rc;
    rc = write_all(ep, ep->tx, len, timeout_ns, NULL, 0, err);
    return rc < 0 ? rc : 0;
}

static int tcp_recv(struct tp_ep *ep, size_t len, const void **data, uint64_t timeout_ns,
                    tp_error *err)
{
    int rc = check_ready(ep, len, err);
    if (rc)
        return rc;
    ssize_t n = read_some(ep, ep->rx, len, len, timeout_ns, NULL, err);
    if (n < 0)
        return (int)n;
    *data = ep->rx;
    return 0;
}

static void set_done(const struct tp_stream_ctl *ctl, uint64_t n)
{
    if (ctl->done)
        __atomic_store_n(ctl->done, n, __ATOMIC_RELAXED);
}

/* A stream with a stop flag wakes every slice to look at it. */
static int begin_stream(struct tp_ep *ep, size_t len, const struct tp_stream_ctl *ctl,
                        tp_error *err)
{
    int rc = check_ready(ep, len, err);
    if (rc)
        return rc;
    set_done(ctl, 0);
    if (ctl->stop && !ep->busy_poll && set_slice(ep, true) != 0)
        return tp_error_errno(err, TP_ESYS, errno, "socket timeouts on the stream to %s", ep->peer);
    return 0;
}

static int end_stream(struct tp_ep *ep, int rc)
{
    if (ep->sliced && !ep->broken && set_slice(ep, false) != 0)
        ep->broken = true;
    return rc;
}

static int tcp_send_stream(struct tp_ep *ep, size_t len, uint64_t count,
                           const struct tp_stream_ctl *ctl, tp_error *err)
{
    int rc = begin_stream(ep, len, ctl, err);
    if (rc)
        return rc;
    for (uint64_t i = 0; i < count; i++) {
        int more = i + 1 < count ? MSG_MORE : 0;
        if (ctl->before_send && !stopped(ctl) &&
            (rc = ctl->before_send(ctl->arg, ep->tx, len, i)) != 0) {
            ep->broken = true;
            return rc < 0 ? rc : TP_EPROTO;
        }
        rc = stopped(ctl) ? 0 : write_all(ep, ep->tx, len, ctl->timeout_ns, ctl, more, err);
        if (rc <= 0) {
            ep->broken = true;
            return rc;
        }
        set_done(ctl, i + 1);
    }
    return end_stream(ep, 0);
}

/* Reads as much of the stream as fits the rx buffer (never past its last
 * byte, which belongs to the next exchange) and hands out whole messages; a
 * partial message at the end moves to the front. */
static int tcp_recv_stream(struct tp_ep *ep, size_t len, uint64_t count,
                           const struct tp_stream_ctl *ctl, tp_error *err)
{
    int rc = begin_stream(ep, len, ctl, err);
    if (rc)
        return rc;
    char *buf = ep->rx;
    size_t fill = 0;
    uint64_t next = 0;
    while (next < count) {
        uint64_t left_msgs = count - next;
        size_t want = ep->rx_cap - fill;
        if (left_msgs <= want / len)
            want = (size_t)left_msgs * len - fill;
        ssize_t n = read_some(ep, buf + fill, len - fill, want, ctl->timeout_ns, ctl, err);
        if (n <= 0) {
            ep->broken = true;
            return (int)n;
        }
        fill += (size_t)n;
        size_t off = 0;
        for (; fill - off >= len; off += len, next++) {
            if (ctl->on_msg && (rc = ctl->on_msg(ctl->arg, buf + off, len, next)) != 0) {
                ep->broken = true;
                return rc;
            }
            set_done(ctl, next + 1);
        }
        fill -= off;
        if (fill && off)
            memmove(buf, buf + off, fill);
    }
    return end_stream(ep, 0);
}

static void tcp_info(struct tp_ep *ep, struct tp_ep_info *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->transport, sizeof out->transport, "tcp");
    snprintf(out->provider, sizeof out->provider, "kernel");
    snprintf(out->fabric, sizeof out->fabric, "%s", ep->poll_note);
    snprintf(out->domain, sizeof out->domain, "%s", ep->local_ip);
    out->rma = false;
    out->max_msg_bytes = SIZE_MAX;
}

static void tcp_stats(struct tp_ep *ep, struct tp_ep_stats *out)
{
    memset(out, 0, sizeof *out);
    if (ep && ep->fd >= 0)
        tp__fabric_tcp_info(ep->fd, out);
}

const struct tp_transport_ops tp_tcp_ops = {
    .name = "tcp",
    .what = "kernel TCP",
    .needs_provider = false,
    .rma = false,
    .mem_staged = "staged through host memory: kernel TCP cannot read GPU memory",
    .chan = &tp__chan_tcp,
    .default_provider = NULL,
    .open = tcp_open,
    .address = tcp_address,
    .connect = tcp_connect,
    .tx_buf = tcp_tx_buf,
    .send = tcp_send,
    .recv = tcp_recv,
    .send_stream = tcp_send_stream,
    .recv_stream = tcp_recv_stream,
    .info = tcp_info,
    .stats = tcp_stats,
    .close = tcp_close,
};
