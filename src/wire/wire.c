/* Control-channel framing. The control channel is where an attacker on the
 * network can reach us, so nothing read from it is trusted: the header is
 * checked (magic, type, length <= TP_WIRE_MAX_PAYLOAD) before the payload is
 * read, the payload must parse as one JSON object, and fields are read only
 * through the bounds-checking accessors at the end of this file. */
#include "tp/wire.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tp/clock.h"
#include "tp/intr.h"

/* The longest a wait on a socket goes without asking tp_intr: a signal
 * that lands on another thread does not cut this one's poll short. */
#define INTR_SLICE_MS 250

static void sockaddr_text(const struct sockaddr *sa, char *ip, size_t ipcap, int *port)
{
    char host[INET6_ADDRSTRLEN] = "?";
    int p = 0;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
        p = ntohs(in->sin_port);
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
        p = ntohs(in6->sin6_port);
    }
    snprintf(ip, ipcap, "%s", host);
    if (port)
        *port = p;
}

static void fill_names(struct tp_conn *c)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    char ip[INET6_ADDRSTRLEN];
    int port = 0;
    if (getpeername(c->fd, (struct sockaddr *)&ss, &len) == 0) {
        sockaddr_text((struct sockaddr *)&ss, ip, sizeof ip, &port);
        if (ss.ss_family == AF_INET6)
            snprintf(c->peer, sizeof c->peer, "[%s]:%d", ip, port);
        else
            snprintf(c->peer, sizeof c->peer, "%s:%d", ip, port);
    } else {
        snprintf(c->peer, sizeof c->peer, "?");
    }
    len = sizeof ss;
    if (getsockname(c->fd, (struct sockaddr *)&ss, &len) == 0)
        sockaddr_text((struct sockaddr *)&ss, c->local_ip, sizeof c->local_ip, NULL);
    else
        snprintf(c->local_ip, sizeof c->local_ip, "127.0.0.1");
}

static bool is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6)
        return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
    return false;
}

int tp_listen(const char *host, int port, const char *what, int *out_fd, int *bound_port,
              bool *loopback, tp_error *err)
{
    char svc[16];
    snprintf(svc, sizeof svc, "%d", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    int g = getaddrinfo(host, svc, &hints, &res);
    if (g != 0)
        return tp_error_set(err, TP_EUSAGE, "%s %s: %s", what, host, gai_strerror(g));
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, 128) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        freeaddrinfo(res);
        return tp_error_errno(
            err, e == EADDRINUSE || e == EADDRNOTAVAIL || e == EACCES ? TP_EUSAGE : TP_ESYS, e,
            "cannot listen on %s port %d", host, port);
    }
    if (loopback)
        *loopback = is_loopback(res->ai_addr);
    freeaddrinfo(res);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    if (bound_port)
        *bound_port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                     : ((struct sockaddr_in *)&ss)->sin_port);
    *out_fd = fd;
    return 0;
}

void tp_conn_from_fd(struct tp_conn *c, int fd, uint64_t timeout_ns)
{
    memset(c, 0, sizeof *c);
    c->fd = fd;
    c->timeout_ns = timeout_ns;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fill_names(c);
}

void tp_conn_close(struct tp_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}

int tp_conn_connect(struct tp_conn *c, const char *host, int port, uint64_t timeout_ns,
                    tp_error *err)
{
    memset(c, 0, sizeof *c);
    c->fd = -1;
    char svc[16];
    snprintf(svc, sizeof svc, "%d", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(host, svc, &hints, &res);
    if (rc != 0)
        return tp_error_set(err, TP_EUSAGE, "cannot resolve host '%s': %s", host, gai_strerror(rc));
    uint64_t deadline = tp_now_ns() + timeout_ns;
    int last_errno = ECONNREFUSED;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        int fd =
            socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
        if (fd < 0) {
            last_errno = errno;
            continue;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) {
            last_errno = errno;
            close(fd);
            continue;
        }
        /* in slices, so that an interrupt recorded on another thread ends
         * the wait (a peer that drops SYNs holds it for the whole timeout) */
        struct pollfd pfd = {.fd = fd, .events = POLLOUT};
        int n, left;
        do {
            if ((rc = tp_intr_check(err)) != 0) {
                close(fd);
                freeaddrinfo(res);
                return rc;
            }
            left = tp_deadline_left_ms(deadline);
            n = left > 0 ? poll(&pfd, 1, left < INTR_SLICE_MS ? left : INTR_SLICE_MS) : 0;
        } while ((n < 0 && errno == EINTR) || (n == 0 && left > INTR_SLICE_MS));
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        if (n == 0) {
            close(fd);
            freeaddrinfo(res);
            return tp_error_set(err, TP_ETIMEOUT,
                                "connecting to %s port %d: no answer within %.1f s", host, port,
                                (double)timeout_ns / 1e9);
        }
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
        if (n < 0 || soerr != 0) {
            last_errno = n < 0 ? errno : soerr;
            close(fd);
            continue;
        }
        int fl = fcntl(fd, F_GETFL);
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
        freeaddrinfo(res);
        tp_conn_from_fd(c, fd, timeout_ns);
        return 0;
    }
    freeaddrinfo(res);
    return tp_error_errno(err, TP_EPEER, last_errno, "cannot connect to %s port %d", host, port);
}

/* The deadline of one frame that starts now: its own timeout, cut to the
 * connection's exchange deadline when one is set. */
static uint64_t frame_deadline(const struct tp_conn *c)
{
    uint64_t d = tp_now_ns() + c->timeout_ns;
    return c->deadline_ns && c->deadline_ns < d ? c->deadline_ns : d;
}

static int too_late(const struct tp_conn *c, uint64_t deadline, tp_error *err)
{
    if (c->deadline_ns && deadline == c->deadline_ns)
        return tp_error_set(err, TP_ETIMEOUT,
                            "peer %s did not complete the exchange on the control connection "
                            "within its deadline",
                            c->peer);
    return tp_error_set(err, TP_ETIMEOUT,
                        "peer %s did not answer on the control connection within %.1f s", c->peer,
                        (double)c->timeout_ns / 1e9);
}

/* Move exactly len bytes before deadline (absolute), a trickle as much as
 * silence: the deadline holds for the whole transfer, not for each read.
 * Polls in slices of at most INTR_SLICE_MS so that an interrupt recorded on
 * another thread is seen. */
static int io_all(struct tp_conn *c, void *buf, size_t len, bool writing, uint64_t deadline,
                  tp_error *err)
{
    char *p = buf;
    while (len > 0) {
        int rc = tp_intr_check(err);
        if (rc)
            return rc;
        int left = tp_deadline_left_ms(deadline);
        if (left == 0)
            return too_late(c, deadline, err);
        struct pollfd pfd = {.fd = c->fd, .events = writing ? POLLOUT : POLLIN};
        int n = poll(&pfd, 1, left < INTR_SLICE_MS ? left : INTR_SLICE_MS);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return tp_error_errno(err, TP_ESYS, errno, "poll on control connection to %s", c->peer);
        if (n == 0)
            continue;
        ssize_t k = writing ? send(c->fd, p, len, MSG_NOSIGNAL) : recv(c->fd, p, len, 0);
        if (k < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (k < 0)
            return tp_error_errno(err, TP_EPEER, errno, "control connection to %s", c->peer);
        if (k == 0)
            return tp_error_set(err, TP_EPEER, "peer %s closed the control connection", c->peer);
        p += k;
        len -= (size_t)k;
        *(writing ? &c->bytes_sent : &c->bytes_received) += (uint64_t)k;
    }
    return 0;
}

static void put32(unsigned char *p, uint32_t v)
{
    v = htonl(v);
    memcpy(p, &v, 4);
}

static uint32_t get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return ntohl(v);
}

int tp_wire_send(struct tp_conn *c, enum tp_frame type, const json_t *body, tp_error *err)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : strdup("{}");
    if (!text)
        return tp_error_set(err, TP_ENOMEM, "encoding a control frame");
    size_t len = strlen(text);
    if (len > TP_WIRE_MAX_PAYLOAD) {
        free(text);
        return tp_error_set(err, TP_EPROTO, "control frame of %zu bytes exceeds the %u limit", len,
                            TP_WIRE_MAX_PAYLOAD);
    }
    unsigned char *frame = malloc(12 + len);
    if (!frame) {
        free(text);
        return tp_error_set(err, TP_ENOMEM, "encoding a control frame");
    }
    put32(frame, TP_WIRE_MAGIC);
    put32(frame + 4, (uint32_t)type << 16);
    put32(frame + 8, (uint32_t)len);
    memcpy(frame + 12, text, len);
    free(text);
    int rc = io_all(c, frame, 12 + len, true, frame_deadline(c), err);
    free(frame);
    return rc;
}

int tp_wire_recv(struct tp_conn *c, enum tp_frame *type, json_t **body, tp_error *err)
{
    /* one deadline for the whole frame, header and payload */
    uint64_t deadline = frame_deadline(c);
    unsigned char hdr[12];
    int rc = io_all(c, hdr, sizeof hdr, false, deadline, err);
    if (rc)
        return rc;
    uint32_t magic = get32(hdr), tf = get32(hdr + 4), len = get32(hdr + 8);
    if (magic != TP_WIRE_MAGIC)
        return tp_error_set(err, TP_EPROTO,
                            "peer %s sent a frame with bad magic 0x%08x (not a trainpath peer?)",
                            c->peer, magic);
    uint32_t t = tf >> 16;
    if (t < 1 || t > TP_F_MAX || (tf & 0xffff) != 0)
        return tp_error_set(err, TP_EPROTO, "peer %s sent a frame of unknown type %u", c->peer, t);
    if (len > TP_WIRE_MAX_PAYLOAD)
        return tp_error_set(err, TP_EPROTO,
                            "peer %s sent a frame of %u bytes, over the %u-byte limit", c->peer,
                            len, TP_WIRE_MAX_PAYLOAD);
    char *buf = malloc(len + 1);
    if (!buf)
        return tp_error_set(err, TP_ENOMEM, "reading a control frame");
    rc = io_all(c, buf, len, false, deadline, err);
    if (rc) {
        free(buf);
        return rc;
    }
    json_error_t je;
    json_t *j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
    free(buf);
    if (!j || !json_is_object(j)) {
        json_decref(j);
        for (char *q = je.text; *q; q++) /* jansson quotes the peer's bytes: keep logs plain */
            if ((unsigned char)*q < 0x20 || *q == 0x7f)
                *q = '?';
        return tp_error_set(err, TP_EPROTO, "peer %s sent a frame that is not a JSON object: %s",
                            c->peer, j ? "wrong type" : je.text);
    }
    *type = (enum tp_frame)t;
    *body = j;
    return 0;
}

static const char *frame_name(enum tp_frame t)
{
    static const char *names[] = {"?",       "HELLO",  "AUTH",    "WELCOME", "BUSY",   "REJECT",
                                  "REQUEST", "ACCEPT", "CONNECT", "RUN",     "DONE",   "STOP",
                                  "ERROR",   "BYE",    "JOIN",    "GROUP",   "GATHER", "TIME"};
    return (unsigned)t <= TP_F_MAX ? names[t] : "?";
}

/* The code a peer's ERROR carries. A peer's "usage" (it found our request
 * bad, or says it did) is the peer failing this run, exit 1: only our own
 * input is exit 2, and a hostile peer must not make it look so. */
static int code_from_name(const char *name)
{
    static const int codes[] = {TP_EPEER, TP_ETIMEOUT, TP_ESYS,   TP_ECHECK, TP_EAUTH,
                                TP_EBUSY, TP_EPROTO,   TP_ENOMEM, TP_EUNSUP};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (strcmp(name, tp_code_name(codes[i])) == 0)
            return codes[i];
    return TP_EPEER;
}

int tp_wire_expect(struct tp_conn *c, enum tp_frame want, json_t **body, tp_error *err)
{
    enum tp_frame t;
    json_t *j = NULL;
    int rc = tp_wire_recv(c, &t, &j, err);
    if (rc)
        return rc;
    if (t == want) {
        *body = j;
        return 0;
    }
    const char *msg = json_string_value(json_object_get(j, "message"));
    const char *code = json_string_value(json_object_get(j, "code"));
    char text[300];
    snprintf(text, sizeof text, "%.290s", msg ? msg : "");
    int peer_code = code ? code_from_name(code) : TP_EPEER;
    json_decref(j);
    switch (t) {
    case TP_F_ERROR:
        c->peer_said_error = true;
        return tp_error_set(err, peer_code, "peer %s: %s", c->peer, text);
    case TP_F_BUSY:
        return tp_error_set(err, TP_EBUSY,
                            "server %s is busy running another test; try again later", c->peer);
    case TP_F_REJECT:
        return tp_error_set(err, TP_EAUTH, "server %s rejected us: %s", c->peer, text);
    default:
        return tp_error_set(err, TP_EPROTO, "peer %s sent %s where %s was expected", c->peer,
                            frame_name(t), frame_name(want));
    }
}

void tp_wire_send_error(struct tp_conn *c, const tp_error *e)
{
    json_t *j = json_pack("{s:s, s:s}", "code", tp_code_name(e->code), "message", e->msg);
    tp_error ignored;
    if (j)
        tp_wire_send(c, TP_F_ERROR, j, &ignored);
    json_decref(j);
}

int tp_wire_u64(struct tp_conn *c, const json_t *o, const char *key, uint64_t lo, uint64_t hi,
                uint64_t *out, tp_error *err)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v))
        return tp_error_set(err, TP_EPROTO, "peer %s: field '%s' missing or not an integer",
                            c->peer, key);
    json_int_t x = json_integer_value(v);
    if (x < 0 || (uint64_t)x < lo || (uint64_t)x > hi)
        return tp_error_set(err, TP_EPROTO, "peer %s: field '%s' = %lld outside [%llu, %llu]",
                            c->peer, key, (long long)x, (unsigned long long)lo,
                            (unsigned long long)hi);
    *out = (uint64_t)x;
    return 0;
}

int tp_wire_str(struct tp_conn *c, const json_t *o, const char *key, size_t max_len,
                const char **out, tp_error *err)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_string(v))
        return tp_error_set(err, TP_EPROTO, "peer %s: field '%s' missing or not a string", c->peer,
                            key);
    if (json_string_length(v) > max_len || strlen(json_string_value(v)) != json_string_length(v))
        return tp_error_set(err, TP_EPROTO, "peer %s: field '%s' longer than %zu bytes", c->peer,
                            key, max_len);
    *out = json_string_value(v);
    return 0;
}

int tp_wire_bool(struct tp_conn *c, const json_t *o, const char *key, bool *out, tp_error *err)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_boolean(v))
        return tp_error_set(err, TP_EPROTO, "peer %s: field '%s' missing or not a boolean", c->peer,
                            key);
    *out = json_is_true(v);
    return 0;
}
