/* trainpath net serve: accept control connections, authenticate, and execute
 * the phases a client asks for on the data endpoints it negotiated.
 *
 * One test at a time (iperf3's rule), and only for a client that has
 * authenticated: each accepted connection runs its handshake on a thread of
 * its own, under a deadline of min(--timeout, 5 s) in all, and only then
 * competes for the one test slot (busy, taken 0 -> 1 by compare-and-swap).
 * The winner runs its test on the same thread, with --timeout again; a
 * client that authenticated while another test started is answered BUSY
 * after WELCOME. So a silent or slow connection holds its own handshake and
 * nothing more, and a good client is served beside it. While a test runs,
 * and when CONN_MAX connection threads are alive, the accept loop answers
 * BUSY at once, so nobody hangs and the threads stay bounded. A client that
 * fails authentication or sends a bad frame is logged and dropped; the
 * server goes on serving.
 *
 * Ownership: tp_net_serve owns srv and its table of connection threads; it
 * alone starts and joins them, and srv outlives every one it joins. Each
 * thread owns its connection and session (closes and frees them) and takes
 * its socket out of the table before closing it, so the accept loop, which
 * cuts a handshake at its deadline or on shutdown with shutdown(2) (that
 * wakes the thread's poll), never touches a descriptor number since reused.
 * Every thread ends on its own: a handshake within its deadline, a test
 * within its timeouts. On a signal the handshakes are cut and joined, and a
 * running test gets a second to end; one that has not is abandoned with srv,
 * which it still uses. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <sodium.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net_int.h"
#include "tp/clock.h"
#include "tp/counters.h"
#include "tp/log.h"
#include "tp/net.h"
#include "tp/sysinfo.h"
#include "tp/transport.h"
#include "tp/wire.h"

struct session {
    struct tp_conn c;
    const struct tp_transport_ops *ops;
    struct tp_ep_config cfg;
    char provider[65];
    char peer_data[96];
    size_t nflows;
    struct tp_ep *ep[NET_MAX_FLOWS];
    enum flow_kind kind[NET_MAX_FLOWS];
    bool check, corrupt;
    uint64_t timeout_ns;
    /* background phase (loaded): jobs running until STOP */
    struct flow_job *bg;
    size_t nbg;
    volatile int bg_stop;
    double bg_u0, bg_s0; /* CPU seconds when the background flows started */
    bool abandoned;      /* a flow thread is stuck: leak its jobs and endpoints */
    struct tp_gpu *gpu;  /* --mem cuda: the server's GPU (shared, never closed) */
    bool dev;            /* the endpoints' buffers are GPU memory (FI_HMEM) */
    void *dbuf[NET_MAX_FLOWS], *hbuf[NET_MAX_FLOWS];
    struct tp_ctr_probe *probe; /* this node's counters, from REQUEST to BYE */
};

/* The server's GPU, opened at the first --mem cuda request and kept for the
 * life of the process (a CUDA context costs a second to make); sessions on
 * several threads share it (the CUDA runtime is thread-safe). */
static pthread_mutex_t gpu_mu = PTHREAD_MUTEX_INITIALIZER;
static struct tp_gpu *server_gpu;

static int get_gpu(struct tp_gpu **out, uint64_t timeout_ns, tp_error *err)
{
    pthread_mutex_lock(&gpu_mu);
    int rc = 0;
    if (!server_gpu) {
        struct tp_gpu_opts go = {
            .what = "--mem cuda (server)", .device = -1, .timeout_ns = timeout_ns};
        rc = tp_gpu_open(&go, &server_gpu, err);
    }
    *out = server_gpu;
    pthread_mutex_unlock(&gpu_mu);
    return rc;
}

void tp__net_cpu_seconds(double *user_s, double *sys_s)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    *user_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
    *sys_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static enum flow_role server_role(enum flow_kind k)
{
    return k == FLOW_PINGPONG ? ROLE_PONG : k == FLOW_C2S ? ROLE_RECV : ROLE_SEND;
}

/* REQUEST: validate, open one endpoint per flow, answer ACCEPT. */
static int on_request(struct session *s, json_t *body, tp_error *err)
{
    struct tp_conn *c = &s->c;
    struct tp_net_request req;
    int rc;
    if ((rc = tp_net_parse_request(c, body, &req, err)))
        return rc;
    s->check = req.check;
    uint64_t max_msg = req.max_msg, timeout_ms = req.timeout_ms;
    /* the client's timeout, within the server's own: a client that asks
     * for an hour and goes silent holds the test slot for --timeout */
    uint64_t timeout_ns = timeout_ms * 1000000ull;
    if (timeout_ns > s->timeout_ns)
        timeout_ns = s->timeout_ns;
    if (req.cuda && (rc = get_gpu(&s->gpu, timeout_ns, err)))
        return rc;
    s->ops = tp_transport_find(req.transport);
    if (!s->ops) {
        char names[128];
        return tp_error_set(err, TP_EUSAGE, "unknown transport '%s' (server has %s)", req.transport,
                            tp_transport_names(", ", names, sizeof names));
    }
    if (s->ops->needs_provider) {
        if (!req.provider)
            return tp_error_set(err, TP_EUSAGE, "transport %s needs a provider", s->ops->name);
        if ((rc = tp_transport_provider_check(s->ops, req.provider, err)))
            return rc;
        snprintf(s->provider, sizeof s->provider, "%s", req.provider);
    }
    s->timeout_ns = timeout_ns;
    c->timeout_ns = s->timeout_ns;
    snprintf(s->peer_data, sizeof s->peer_data, "%s (data path)", c->peer);
    s->cfg = (struct tp_ep_config){
        .provider = s->provider[0] ? s->provider : NULL,
        .local_ip = c->local_ip,
        .peer_name = s->peer_data,
        .initiator = false,
        .max_msg_bytes = (size_t)max_msg,
        .window = (unsigned)req.window,
        .mode = req.rma ? TP_XFER_RMA : TP_XFER_MSG,
        .busy_poll = req.busy_poll,
        .check = s->check,
        .gpu = s->gpu,
    };
    json_t *addrs = json_array();
    for (size_t i = 0; i < req.nflows; i++) {
        s->kind[i] = (enum flow_kind)req.kind[i];
        if ((rc = s->ops->open(&s->cfg, &s->ep[i], err))) {
            json_decref(addrs);
            return rc;
        }
        s->nflows = i + 1;
        json_array_append_new(addrs, json_string(s->ops->address(s->ep[i])));
        if (s->gpu) {
            struct tp_ep_info ei;
            s->ops->info(s->ep[i], &ei);
            s->dev = ei.hmem;
            if ((rc = tp__net_flow_mem_alloc(s->gpu, s->dev, (size_t)max_msg, &s->dbuf[i],
                                             &s->hbuf[i], err))) {
                json_decref(addrs);
                return rc;
            }
        }
    }
    struct tp_ep_info info;
    s->ops->info(s->ep[0], &info);
    json_t *host = tp_sysinfo_json(NULL);
    json_object_del(host, "nics");
    json_object_set_new(host, "process", tp_process_json());
    json_t *acc = json_pack("{s:o, s:o, s:{s:s, s:s, s:s}}", "flows", addrs, "host", host,
                            "endpoint", "provider", info.provider, "domain", info.domain,
                            "mem_path", tp__net_flow_mem_path(s->gpu, s->dev, s->ops));
    if (s->gpu)
        json_object_set_new(json_object_get(acc, "endpoint"), "gpu", tp_gpu_info(s->gpu));
    rc = tp_wire_send(c, TP_F_ACCEPT, acc, err);
    json_decref(acc);
    return rc;
}

/* CONNECT: join each of the client's endpoints. */
static int on_connect(struct session *s, json_t *body, tp_error *err)
{
    const char *addr[NET_MAX_FLOWS];
    int rc = tp_net_parse_connect(&s->c, body, s->nflows, addr, err);
    for (size_t i = 0; !rc && i < s->nflows; i++)
        rc = s->ops->connect(s->ep[i], addr[i], s->timeout_ns, err);
    if (rc)
        return rc;
    return tp_wire_send(&s->c, TP_F_DONE, NULL, err);
}

static json_t *rx_json(const struct flow_job *j)
{
    const struct rx_stats *rx = &j->rx;
    return json_pack("{s:I, s:I, s:I, s:f, s:f}", "msgs", (json_int_t)rx->msgs, "bytes",
                     (json_int_t)rx->bytes, "span_ns", (json_int_t)(rx->last_ns - rx->first_ns),
                     "peak_1s_Bps", tp__net_rx_peak_Bps(rx, 1000000000ull), "peak_100ms_Bps",
                     tp__net_rx_peak_Bps(rx, FLOW_INTERVAL_NS));
}

static json_t *done_json(struct flow_job *jobs, size_t n, double u0, double s0)
{
    double u1, s1;
    tp__net_cpu_seconds(&u1, &s1);
    json_t *fl = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(fl, jobs[i].role == ROLE_RECV ? rx_json(&jobs[i]) : json_object());
    return json_pack("{s:o, s:{s:f, s:f}}", "flows", fl, "cpu", "user_s", u1 - u0, "sys_s",
                     s1 - s0);
}

static int stop_background(struct session *s, double u0, double s0, json_t **done, tp_error *err)
{
    if (!s->bg)
        return 0;
    s->bg_stop = 1;
    tp_error e;
    int rc = tp__net_flow_join(s->bg, s->nbg, &s->abandoned, &e);
    if (rc && err)
        *err = e;
    if (s->abandoned)
        return rc; /* the stuck thread still owns s->bg */
    if (done && !rc)
        *done = done_json(s->bg, s->nbg, u0, s0);
    for (size_t i = 0; i < s->nbg; i++)
        tp__net_rx_free(&s->bg[i].rx);
    free(s->bg);
    s->bg = NULL;
    s->nbg = 0;
    return rc;
}

/* RUN: {flows:[i...], size, count}; count 0 runs them in the background until
 * STOP (the loaded test's congestors). */
static int on_run(struct session *s, json_t *body, tp_error *err)
{
    struct tp_net_run_req run;
    int rc = tp_net_parse_run(&s->c, body, s->nflows, s->cfg.max_msg_bytes, &run, err);
    if (rc)
        return rc;
    uint64_t size = run.size, count = run.count;
    size_t n = run.n;
    if (count == 0 && s->bg)
        return tp_error_set(err, TP_EPROTO, "peer %s: background flows already running", s->c.peer);
    struct flow_job *jobs = calloc(n, sizeof *jobs);
    if (!jobs)
        return tp_error_set(err, TP_ENOMEM, "RUN");
    for (size_t i = 0; i < n; i++) {
        size_t f = run.flow[i];
        for (size_t b = 0; b < s->nbg; b++)
            if (s->bg[b].ep == s->ep[f]) {
                free(jobs);
                return tp_error_set(err, TP_EPROTO, "peer %s: flow %zu is busy in the background",
                                    s->c.peer, f);
            }
        jobs[i] = (struct flow_job){
            .ops = s->ops,
            .ep = s->ep[f],
            .role = server_role(s->kind[f]),
            .size = size,
            .count = count ? count : UINT64_MAX >> 1,
            .check = s->check,
            .corrupt = s->corrupt,
            .stop = count ? NULL : &s->bg_stop,
            .timeout_ns = s->timeout_ns,
            .peer = s->peer_data,
            .gpu = s->gpu,
            .dev = s->dev,
            .dtx = s->dbuf[f],
            .drx = s->dbuf[f] ? (char *)s->dbuf[f] + s->cfg.max_msg_bytes : NULL,
            .hbuf = s->hbuf[f],
        };
    }
    double u0, s0;
    tp__net_cpu_seconds(&u0, &s0);
    if (count == 0) {
        s->bg = jobs;
        s->nbg = n;
        s->bg_stop = 0;
        s->bg_u0 = u0;
        s->bg_s0 = s0;
        size_t started;
        if ((rc = tp__net_flow_start(jobs, n, &started, err))) {
            s->nbg = started;
            stop_background(s, 0, 0, NULL, NULL);
            return rc;
        }
        return tp_wire_send(&s->c, TP_F_DONE, NULL, err);
    }
    rc = tp__net_flow_run_all(jobs, n, &s->abandoned, err);
    if (s->abandoned)
        return rc; /* leave jobs to the stuck thread */
    if (rc == 0) {
        json_t *done = done_json(jobs, n, u0, s0);
        rc = tp_wire_send(&s->c, TP_F_DONE, done, err);
        json_decref(done);
    }
    for (size_t i = 0; i < n; i++)
        tp__net_rx_free(&jobs[i].rx);
    free(jobs);
    return rc;
}

/* The client's address, numeric, into out[cap] (for the interface the
 * test's traffic uses); "" when it cannot be told. */
static void peer_host(int fd, char *out, size_t cap)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    out[0] = '\0';
    if (getpeername(fd, (struct sockaddr *)&ss, &len) != 0 ||
        getnameinfo((struct sockaddr *)&ss, len, out, (socklen_t)cap, NULL, 0, NI_NUMERICHOST))
        out[0] = '\0';
}

/* This node's counters for the client, in its BYE: whole when they fit a
 * frame with room to spare; else the traffic and other counters of
 * interfaces off the path left out ("trimmed": true); else only the
 * causes, links and what was read. */
static json_t *counters_for_bye(struct session *s)
{
    json_t *c = tp_ctr_probe_end(s->probe);
    s->probe = NULL;
    const size_t room = TP_WIRE_MAX_PAYLOAD / 2;
    for (int pass = 0; c && pass < 2; pass++) {
        size_t n = json_dumpb(c, NULL, 0, JSON_COMPACT);
        if (n <= room)
            break;
        json_object_set_new(c, "trimmed", json_true());
        const char *path = json_string_value(json_object_get(c, "path"));
        json_t *ch = json_object_get(c, "changed"), *keep = json_array();
        size_t i;
        json_t *e;
        json_array_foreach(ch, i, e) {
            const char *cls = json_string_value(json_object_get(e, "class"));
            const char *dev = json_string_value(json_object_get(e, "dev"));
            bool cause = cls && strcmp(cls, "traffic") != 0 && strcmp(cls, "other") != 0;
            if (pass == 0 && (cause || (path && dev && strcmp(dev, path) == 0)))
                json_array_append(keep, e);
        }
        json_object_set_new(c, "changed", keep);
        static const char *const lists[] = {"reset", "levels", "gone", "new"};
        for (size_t k = 0; pass == 1 && k < sizeof lists / sizeof *lists; k++)
            json_object_set_new(c, lists[k], json_array());
    }
    return json_pack("{s:o}", "counters", c ? c : json_pack("{s:s}", "error", "out of memory"));
}

static int run_session(struct session *s, tp_error *err)
{
    int rc;
    for (;;) {
        enum tp_frame t;
        json_t *body = NULL;
        if ((rc = tp_wire_recv(&s->c, &t, &body, err)))
            return rc;
        switch (t) {
        case TP_F_REQUEST:
            rc = s->nflows ? tp_error_set(err, TP_EPROTO, "peer %s: second REQUEST", s->c.peer)
                           : on_request(s, body, err);
            if (rc == 0 && !s->probe) { /* outside every timed phase */
                char host[NI_MAXHOST];
                peer_host(s->c.fd, host, sizeof host);
                s->probe = tp_ctr_probe_start(host[0] ? host : NULL, 0);
            }
            break;
        case TP_F_CONNECT:
            rc = s->nflows
                     ? on_connect(s, body, err)
                     : tp_error_set(err, TP_EPROTO, "peer %s: CONNECT before REQUEST", s->c.peer);
            break;
        case TP_F_RUN:
            rc = s->nflows ? on_run(s, body, err)
                           : tp_error_set(err, TP_EPROTO, "peer %s: RUN before REQUEST", s->c.peer);
            break;
        case TP_F_STOP: {
            json_t *done = NULL;
            rc = stop_background(s, s->bg_u0, s->bg_s0, &done, err);
            if (!rc)
                rc = tp_wire_send(&s->c, TP_F_DONE, done, err);
            json_decref(done);
            break;
        }
        case TP_F_BYE: {
            json_decref(body);
            json_t *bye = s->probe ? counters_for_bye(s) : NULL;
            tp_wire_send(&s->c, TP_F_BYE, bye, err);
            json_decref(bye);
            return 0;
        }
        default:
            rc = tp_error_set(err, TP_EPROTO, "peer %s sent an unexpected frame (type %d)",
                              s->c.peer, (int)t);
        }
        json_decref(body);
        if (rc)
            return rc;
    }
}

static void end_session(struct session *s)
{
    stop_background(s, 0, 0, NULL, NULL);
    if (s->probe) /* a session that ended before its BYE */
        json_decref(tp_ctr_probe_end(s->probe));
    s->probe = NULL;
    if (s->abandoned) {
        /* a flow thread is stuck inside the fabric library with these
         * endpoints: closing them could hang too, so leak them */
        tp_log(TP_LOG_WARN, "client %s: abandoned a stuck data-path thread and its endpoints",
               s->c.peer);
        tp_conn_close(&s->c);
        return;
    }
    if (s->nflows && !tp__net_flow_close_eps(s->ops, s->ep, s->nflows))
        tp_log(TP_LOG_WARN, "client %s: closing the data endpoints did not finish; leaving them",
               s->c.peer);
    for (size_t i = 0; i < NET_MAX_FLOWS; i++)
        tp__net_flow_mem_free(s->gpu, s->dbuf[i], s->hbuf[i]);
    tp_conn_close(&s->c);
    free(s);
}

/* A BUSY answer costs a client nothing, so a flood of connections must not
 * become a flood of log lines: the first answer of each second is logged
 * with its peer and why, the others are counted into one line once that
 * second is over (or, final, at once). peer NULL only writes a count that is
 * due. */
struct busy_log {
    uint64_t since_ns;
    unsigned quiet;
};

static void log_busy(struct busy_log *bl, const char *peer, const char *why, bool final)
{
    uint64_t now = tp_now_ns();
    if (bl->since_ns && now - bl->since_ns < 1000000000ull && !final) {
        bl->quiet += peer != NULL;
        return;
    }
    if (bl->quiet)
        tp_log(TP_LOG_INFO, "answered %u more client(s) busy in the %.1f s after that", bl->quiet,
               (double)(now - bl->since_ns) / 1e9);
    bl->quiet = 0;
    if (peer) {
        tp_log(TP_LOG_INFO, "client %s: busy, %s", peer, why);
        bl->since_ns = now;
    }
}

#define CONN_MAX 65 /* connection threads at once: 64 handshakes and the test */
#define HANDSHAKE_MAX_NS 5000000000ull
#define BUSY_LINGER_NS 1000000000ull

enum cut { CUT_NONE, CUT_DEADLINE, CUT_STOP };

/* One connection thread: a handshake, then the test if it wins the slot.
 * The fields marked mu are shared with the accept loop under server.mu. */
struct conn {
    struct server *srv;
    struct session *s; /* the thread's own: it closes and frees it */
    pthread_t thread;
    bool used;            /* accept loop only: a thread to join */
    atomic_bool done;     /* the thread is finished with srv and s */
    int fd;               /* mu: the socket, -1 once the thread is about to close it */
    uint64_t deadline_ns; /* accept loop only: it cuts the handshake then */
    enum cut cut;         /* mu: why the accept loop shut the socket down */
    bool session;         /* mu: this thread holds the test slot */
};

struct server {
    struct tp_key key;
    uint64_t timeout_ns;   /* --timeout: a test's, copied (an abandoned test outlives o) */
    uint64_t handshake_ns; /* min(--timeout, HANDSHAKE_MAX_NS) */
    bool corrupt;          /* TP_FAULT_CORRUPT */
    atomic_int busy;       /* the test slot: 0 -> 1 by compare-and-swap under mu */
    atomic_int sessions_done;
    pthread_mutex_t mu;
    bool closing;             /* mu: shutting down; no handshake may take the slot */
    struct busy_log busy_log; /* mu */
    struct conn conn[CONN_MAX];
};

/* After a BUSY frame behind WELCOME: the client has likely sent its REQUEST
 * already, and closing over unread bytes would reset the connection, which
 * some stacks let overtake the frame. So stop writing and read until the
 * client closes, for a second at most. */
static void linger_close(struct tp_conn *c)
{
    shutdown(c->fd, SHUT_WR);
    uint64_t deadline = tp_now_ns() + BUSY_LINGER_NS;
    char sink[512];
    for (;;) {
        struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
        int n = poll(&pfd, 1, tp_deadline_left_ms(deadline));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0 || recv(c->fd, sink, sizeof sink, 0) <= 0)
            return;
    }
}

static void *conn_main(void *arg)
{
    struct conn *cn = arg;
    struct server *srv = cn->srv;
    struct session *s = cn->s;
    tp_error err;
    tp_error_clear(&err);
    int rc = tp_auth_server(&s->c, &srv->key, &err);
    bool won = false;
    pthread_mutex_lock(&srv->mu);
    enum cut cut = srv->closing && !cn->cut ? CUT_STOP : cn->cut;
    if (!rc && !cut) {
        int idle = 0;
        won = cn->session = atomic_compare_exchange_strong(&srv->busy, &idle, 1);
        if (!won)
            log_busy(&srv->busy_log, s->c.peer, "another test started while it authenticated",
                     false);
    }
    pthread_mutex_unlock(&srv->mu);
    /* the deadline passed: the accept loop cut the socket, or a frame of
     * the handshake was not whole in time (a trickle) */
    if (cut == CUT_DEADLINE || (rc == TP_ETIMEOUT && !cut)) {
        tp_log(TP_LOG_WARN, "peer %s did not answer with a whole handshake within %.1f s; closing",
               s->c.peer, (double)srv->handshake_ns / 1e9);
    } else if (cut == CUT_STOP) {
        tp_log(TP_LOG_INFO, "client %s: closed in its handshake, the server is shutting down",
               s->c.peer);
    } else if (rc) {
        tp_log(TP_LOG_WARN, "%s", err.msg);
    } else if (!won) {
        tp_error ignored;
        if (tp_wire_send(&s->c, TP_F_BUSY, NULL, &ignored) == 0)
            linger_close(&s->c);
    } else {
        s->c.timeout_ns = s->timeout_ns = srv->timeout_ns;
        tp_log(TP_LOG_INFO, "client %s: authenticated%s", s->c.peer,
               srv->key.set ? "" : " (no key)");
        rc = run_session(s, &err);
        if (rc) {
            tp_log(TP_LOG_WARN, "client %s: %s; closing connection", s->c.peer, err.msg);
            if (rc != TP_EPEER) /* tell a live client why, best effort */
                tp_wire_send_error(&s->c, &err);
        } else {
            tp_log(TP_LOG_INFO, "client %s: test finished", s->c.peer);
        }
        atomic_fetch_add(&srv->sessions_done, 1);
    }
    /* out of the table before the close: the accept loop must never shut
     * down a descriptor number that has since been reused */
    pthread_mutex_lock(&srv->mu);
    cn->fd = -1;
    pthread_mutex_unlock(&srv->mu);
    end_session(s);
    if (won)
        atomic_store(&srv->busy, 0);
    atomic_store(&cn->done, true);
    return NULL;
}

/* Shut down the sockets of handshakes past their deadline, or (stop) of
 * every handshake: shutdown(2) wakes the thread's poll, and the thread ends
 * on its own. Called with mu held. */
static void cut_handshakes(struct server *srv, bool stop)
{
    uint64_t now = tp_now_ns();
    for (struct conn *cn = srv->conn; cn < srv->conn + CONN_MAX; cn++)
        if (cn->used && cn->fd >= 0 && !cn->session && !cn->cut &&
            (stop || now >= cn->deadline_ns)) {
            shutdown(cn->fd, SHUT_RDWR);
            cn->cut = stop ? CUT_STOP : CUT_DEADLINE;
        }
}

/* Join the threads that have ended; a free entry, or NULL when all are in
 * use. */
static struct conn *reap(struct server *srv)
{
    struct conn *free_cn = NULL;
    for (struct conn *cn = srv->conn; cn < srv->conn + CONN_MAX; cn++) {
        if (cn->used && atomic_load(&cn->done)) {
            pthread_join(cn->thread, NULL);
            cn->used = false;
        }
        if (!cn->used && !free_cn)
            free_cn = cn;
    }
    return free_cn;
}

/* Answer BUSY on the accept loop's thread: a frame this small fits in any
 * socket buffer, so nobody waits. */
static void answer_busy(struct server *srv, struct tp_conn *c, const char *why)
{
    tp_error ignored;
    tp_wire_send(c, TP_F_BUSY, NULL, &ignored);
    pthread_mutex_lock(&srv->mu);
    log_busy(&srv->busy_log, c->peer, why, false);
    pthread_mutex_unlock(&srv->mu);
    tp_conn_close(c);
}

/* Start the handshake of an accepted connection on a thread of its own. */
static void start_conn(struct server *srv, struct conn *cn, struct tp_conn *c)
{
    tp_log(TP_LOG_INFO, "client %s: connected", c->peer);
    struct session *s = calloc(1, sizeof *s);
    if (!s) {
        tp_conn_close(c);
        return;
    }
    s->c = *c;
    s->corrupt = srv->corrupt;
    s->timeout_ns = srv->handshake_ns;
    /* the entry is free: nobody reads it until the thread starts */
    *cn = (struct conn){
        .srv = srv, .s = s, .fd = c->fd, .deadline_ns = tp_now_ns() + srv->handshake_ns};
    if (pthread_create(&cn->thread, NULL, conn_main, cn) != 0) {
        tp_log(TP_LOG_WARN, "client %s: cannot start a thread for it; closing", c->peer);
        end_session(s);
        return;
    }
    cn->used = true;
}

/* Shut down: no handshake may take the slot any more and each is cut; a
 * running test (on a signal) gets a second to end. Joins every thread but an
 * abandoned test's; returns whether one was abandoned (it still uses srv). */
static bool stop_all(struct server *srv, bool interrupted)
{
    pthread_mutex_lock(&srv->mu);
    srv->closing = true;
    cut_handshakes(srv, true);
    log_busy(&srv->busy_log, NULL, NULL, true);
    pthread_mutex_unlock(&srv->mu);
    bool abandon = false;
    if (interrupted) {
        /* give a running test a second to end, then abandon it rather than
         * make the operator wait for its timeout */
        for (int i = 0; i < 100 && atomic_load(&srv->busy); i++)
            usleep(10000);
        abandon = atomic_load(&srv->busy);
        if (abandon)
            tp_log(TP_LOG_WARN, "interrupted while a test was running; abandoning it");
    }
    for (struct conn *cn = srv->conn; cn < srv->conn + CONN_MAX; cn++) {
        if (!cn->used)
            continue;
        pthread_mutex_lock(&srv->mu);
        bool running = cn->session && !atomic_load(&cn->done);
        pthread_mutex_unlock(&srv->mu);
        if (abandon && running)
            continue;
        pthread_join(cn->thread, NULL);
        cn->used = false;
    }
    return abandon;
}

int tp_net_serve(const struct tp_net_server_opts *o, tp_error *err)
{
    tp_clock_init();
    struct server *srv = calloc(1, sizeof *srv);
    if (!srv)
        return tp_error_set(err, TP_ENOMEM, "server state");
    srv->timeout_ns = o->timeout_ns;
    srv->handshake_ns = o->timeout_ns < HANDSHAKE_MAX_NS ? o->timeout_ns : HANDSHAKE_MAX_NS;
    srv->corrupt = getenv("TP_FAULT_CORRUPT") != NULL;
    pthread_mutex_init(&srv->mu, NULL);
    int rc = 0, lfd = -1;
    if (o->key_file && (rc = tp_key_load(&srv->key, o->key_file, err)))
        goto out;
    int port = 0;
    bool loopback = false;
    if ((rc = tp_listen(o->bind, o->port, "--bind", &lfd, &port, &loopback, err)))
        goto out;
    if (!loopback && !srv->key.set && !o->insecure) {
        rc = tp_error_set(err, TP_EUSAGE,
                          "refusing to serve on %s without a key: anyone who reaches the port "
                          "could run tests. Pass --key-file FILE, or --bind 127.0.0.1, or "
                          "--insecure to accept the risk",
                          o->bind);
        goto out;
    }
    tp_log(TP_LOG_INFO, "listening on %s port %d (auth: %s)", o->bind, port,
           srv->key.set ? "hmac-sha256 pre-shared key" : "none");
    while (!(o->stop && *o->stop)) {
        struct conn *cn = reap(srv);
        pthread_mutex_lock(&srv->mu);
        cut_handshakes(srv, false);
        log_busy(&srv->busy_log, NULL, NULL, false);
        /* under mu, where the slot is taken: no second test slips in */
        bool over = o->one_off && atomic_load(&srv->sessions_done) > 0 && !atomic_load(&srv->busy);
        srv->closing = over;
        pthread_mutex_unlock(&srv->mu);
        if (over)
            break;
        struct pollfd pfd = {.fd = lfd, .events = POLLIN};
        if (poll(&pfd, 1, 200) <= 0)
            continue;
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        struct tp_conn c;
        tp_conn_from_fd(&c, fd, srv->handshake_ns);
        if (atomic_load(&srv->busy))
            answer_busy(srv, &c, "another test is running");
        else if (!cn)
            answer_busy(srv, &c, "too many clients are authenticating at once");
        else
            start_conn(srv, cn, &c);
    }
    if (stop_all(srv, o->stop && *o->stop)) {
        close(lfd);
        return 0; /* srv stays allocated: the abandoned test still uses it */
    }
    tp_log(TP_LOG_INFO, "server on port %d shutting down", port);
out:
    if (lfd >= 0)
        close(lfd);
    sodium_memzero(&srv->key, sizeof srv->key);
    pthread_mutex_destroy(&srv->mu);
    free(srv);
    return rc;
}
