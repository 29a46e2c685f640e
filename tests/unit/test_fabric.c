/* Transport tests: two endpoints in one process over loopback, the server
 * side in a thread, for kernel TCP and the libfabric providers that run
 * without an RDMA NIC (shm, tcp;ofi_rxm), in message and RMA mode. Every
 * payload is checked byte for byte against a pattern that changes per message
 * and direction; stream receivers also check the index order and wipe each
 * slot after checking it, so a slot delivered before its new data arrived
 * fails. Threads return codes; only the main thread asserts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tp/chan.h"
#include "tp/clock.h"
#include "tp/transport.h"

#define SEC_NS 1000000000ull
#define TMO_NS (10 * SEC_NS) /* operations that should succeed */
#define MIB ((size_t)1 << 20)
#define SERVER_NAME "server-under-test"
#define CLIENT_NAME "client-under-test"

struct variant {
    const char *transport;
    const char *provider;
    enum tp_xfer_mode mode;
    bool busy_poll;
    const char *ip;
};

static const struct variant v_tcp = {.transport = "tcp", .provider = NULL, .mode = TP_XFER_MSG};
static const struct variant v_tcp_spin = {
    .transport = "tcp", .provider = NULL, .mode = TP_XFER_MSG, .busy_poll = true};
static const struct variant v_tcp6 = {
    .transport = "tcp", .provider = NULL, .mode = TP_XFER_MSG, .ip = "::1"};
static const struct variant v_shm = {.transport = "ofi", .provider = "shm", .mode = TP_XFER_MSG};
static const struct variant v_shm_rma = {
    .transport = "ofi", .provider = "shm", .mode = TP_XFER_RMA};
static const struct variant v_rxm = {
    .transport = "ofi", .provider = "tcp;ofi_rxm", .mode = TP_XFER_MSG};
static const struct variant v_rxm_rma = {
    .transport = "ofi", .provider = "tcp;ofi_rxm", .mode = TP_XFER_RMA};

struct pair {
    const struct tp_transport_ops *ops;
    struct tp_ep *srv, *cli;
};

#define assert_ok(expr, err)                                                                       \
    do {                                                                                           \
        int rc_ = (expr);                                                                          \
        if (rc_ != 0)                                                                              \
            print_message("%s: %s\n", #expr, (err)->msg);                                          \
        assert_int_equal(rc_, 0);                                                                  \
    } while (0)

static struct tp_ep_config config(const struct variant *v, bool initiator, size_t max_msg,
                                  unsigned window, bool check)
{
    return (struct tp_ep_config){
        .provider = v->provider,
        .local_ip = v->ip ? v->ip : "127.0.0.1",
        .peer_name = initiator ? SERVER_NAME : CLIENT_NAME,
        .initiator = initiator,
        .max_msg_bytes = max_msg,
        .window = window,
        .mode = v->mode,
        .check = check,
        .busy_poll = v->busy_poll,
    };
}

static void open_pair(struct pair *p, const struct variant *v, size_t max_msg, unsigned window,
                      bool check)
{
    tp_error err = {0};
    p->ops = tp_transport_find(v->transport);
    assert_non_null(p->ops);
    struct tp_ep_config sc = config(v, false, max_msg, window, check);
    struct tp_ep_config cc = config(v, true, max_msg, window, check);
    assert_ok(p->ops->open(&sc, &p->srv, &err), &err);
    assert_ok(p->ops->open(&cc, &p->cli, &err), &err);
    /* TCP: the client's connect completes through the listen backlog, then
     * the server accepts; ofi: each side just inserts the other's name. */
    assert_ok(p->ops->connect(p->cli, p->ops->address(p->srv), TMO_NS, &err), &err);
    assert_ok(p->ops->connect(p->srv, p->ops->address(p->cli), TMO_NS, &err), &err);
}

static void close_pair(struct pair *p)
{
    p->ops->close(p->cli);
    p->ops->close(p->srv);
}

/* ---- running both ends ---- */

typedef int (*side_fn)(const struct tp_transport_ops *ops, struct tp_ep *ep, void *arg,
                       tp_error *err);

struct side {
    side_fn fn;
    const struct tp_transport_ops *ops;
    struct tp_ep *ep;
    void *arg;
    tp_error err;
    int rc;
};

static void *side_main(void *a)
{
    struct side *s = a;
    s->rc = s->fn(s->ops, s->ep, s->arg, &s->err);
    return NULL;
}

/* The server side runs in a thread, the client side here. */
static void run_both(struct pair *p, side_fn srv, void *srv_arg, side_fn cli, void *cli_arg)
{
    struct side s = {.fn = srv, .ops = p->ops, .ep = p->srv, .arg = srv_arg};
    struct side c = {.fn = cli, .ops = p->ops, .ep = p->cli, .arg = cli_arg};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, side_main, &s), 0);
    side_main(&c);
    pthread_join(t, NULL);
    if (s.rc)
        print_message("server side: %s\n", s.err.msg);
    if (c.rc)
        print_message("client side: %s\n", c.err.msg);
    assert_int_equal(s.rc, 0);
    assert_int_equal(c.rc, 0);
}

/* ---- payload pattern ---- */

static uint64_t word(uint64_t seed, size_t i)
{
    return (seed + 1) * 0x9E3779B97F4A7C15ull + i * 0xD1B54A32D192ED03ull;
}

static void fill(void *buf, size_t len, uint64_t seed)
{
    unsigned char *b = buf;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w = word(seed, i / 8);
        memcpy(b + i, &w, 8);
    }
    uint64_t w = word(seed, i / 8);
    memcpy(b + i, &w, len - i);
}

/* Offset of the first wrong byte, or -1. */
static long mismatch(const void *buf, size_t len, uint64_t seed)
{
    const unsigned char *b = buf;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w = word(seed, i / 8);
        if (memcmp(b + i, &w, 8) != 0)
            return (long)i;
    }
    uint64_t w = word(seed, i / 8);
    return memcmp(b + i, &w, len - i) != 0 ? (long)i : -1;
}

/* ---- ping-pong ---- */

struct pp {
    size_t len;
    unsigned iters;
    uint64_t seed;
};

static uint64_t pp_seed(const struct pp *pp, unsigned i, int dir)
{
    return pp->seed + 2ull * i + (uint64_t)dir;
}

static int pp_client(const struct tp_transport_ops *ops, struct tp_ep *ep, void *arg, tp_error *err)
{
    const struct pp *pp = arg;
    for (unsigned i = 0; i < pp->iters; i++) {
        const void *data;
        fill(ops->tx_buf(ep), pp->len, pp_seed(pp, i, 0));
        int rc = ops->send(ep, pp->len, TMO_NS, err);
        if (!rc)
            rc = ops->recv(ep, pp->len, &data, TMO_NS, err);
        if (rc)
            return rc;
        long bad = mismatch(data, pp->len, pp_seed(pp, i, 1));
        if (bad >= 0)
            return tp_error_set(err, TP_ECHECK, "pong %u of %zu B wrong at byte %ld", i, pp->len,
                                bad);
    }
    return 0;
}

static int pp_server(const struct tp_transport_ops *ops, struct tp_ep *ep, void *arg, tp_error *err)
{
    const struct pp *pp = arg;
    for (unsigned i = 0; i < pp->iters; i++) {
        const void *data;
        int rc = ops->recv(ep, pp->len, &data, TMO_NS, err);
        if (rc)
            return rc;
        long bad = mismatch(data, pp->len, pp_seed(pp, i, 0));
        if (bad >= 0)
            return tp_error_set(err, TP_ECHECK, "ping %u of %zu B wrong at byte %ld", i, pp->len,
                                bad);
        fill(ops->tx_buf(ep), pp->len, pp_seed(pp, i, 1));
        if ((rc = ops->send(ep, pp->len, TMO_NS, err)))
            return rc;
    }
    return 0;
}

static void pingpong(struct pair *p, size_t len, unsigned iters, uint64_t seed)
{
    struct pp pp = {len, iters, seed};
    run_both(p, pp_server, &pp, pp_client, &pp);
}

/* ---- streams ---- */

struct stream {
    size_t len;
    uint64_t count;
    uint64_t seed;
    bool verify;   /* the receiver keeps one buffer per slot (cfg->check) */
    uint64_t next; /* receiver: next index on_msg expects */
    uint64_t done; /* ctl->done of the side that wrote it */
    uint64_t tx_done;
};

static int on_msg(void *arg, const void *data, size_t len, uint64_t index)
{
    struct stream *st = arg;
    if (index != st->next || len != st->len)
        return TP_ECHECK;
    if (st->verify) {
        if (mismatch(data, len, st->seed) >= 0)
            return TP_ECHECK;
        memset((void *)data, 0, len); /* a stale slot must not pass next time */
    }
    st->next++;
    return 0;
}

static int stream_tx(const struct tp_transport_ops *ops, struct tp_ep *ep, void *arg, tp_error *err)
{
    struct stream *st = arg;
    fill(ops->tx_buf(ep), st->len, st->seed);
    struct tp_stream_ctl ctl = {.timeout_ns = TMO_NS, .done = &st->tx_done};
    const void *ack;
    int rc = ops->send_stream(ep, st->len, st->count, &ctl, err);
    return rc ? rc : ops->recv(ep, 1, &ack, TMO_NS, err);
}

static int stream_rx(const struct tp_transport_ops *ops, struct tp_ep *ep, void *arg, tp_error *err)
{
    struct stream *st = arg;
    struct tp_stream_ctl ctl = {
        .timeout_ns = TMO_NS, .on_msg = on_msg, .arg = st, .done = &st->done};
    int rc = ops->recv_stream(ep, st->len, st->count, &ctl, err);
    if (rc == TP_ECHECK && !err->msg[0])
        tp_error_set(err, rc, "message %llu of %zu B out of order or wrong",
                     (unsigned long long)st->next, st->len);
    return rc ? rc : ops->send(ep, 1, TMO_NS, err);
}

/* count messages of len bytes, then a 1-byte acknowledgement back (as the
 * bandwidth test does); to_server: the client sends. */
static void stream(struct pair *p, size_t len, uint64_t count, bool to_server, bool verify)
{
    struct stream st = {.len = len, .count = count, .seed = 1000 + count + len, .verify = verify};
    if (to_server)
        run_both(p, stream_rx, &st, stream_tx, &st);
    else
        run_both(p, stream_tx, &st, stream_rx, &st);
    assert_int_equal(st.next, count);
    assert_int_equal(st.done, count);
    assert_int_equal(st.tx_done, count);
}

/* ---- the data-path suite, per variant ---- */

static void suite(const struct variant *v)
{
    struct pair p;

    /* window 16: ping-pong and streams interleaved, both directions */
    open_pair(&p, v, MIB, 16, true);
    pingpong(&p, 8, 1000, 1);
    pingpong(&p, MIB, 100, 2);
    stream(&p, 64, 10000, true, true); /* a multiple of the window */
    stream(&p, MIB, 200, false, true); /* 12 windows and 8 */
    stream(&p, 64, 5, true, true);     /* less than one window */
    stream(&p, 64, 1, false, true);
    stream(&p, 64, 0, true, true);
    pingpong(&p, 8, 10, 3);
    pingpong(&p, 4096, 10, 4);
    struct tp_ep_info info;
    p.ops->info(p.cli, &info);
    assert_string_equal(info.transport, v->transport);
    if (v->provider) {
        assert_string_equal(info.provider, v->provider);
        assert_true(info.api_version[0] != '\0');
        assert_int_equal(info.rma, v->mode == TP_XFER_RMA);
    }
    assert_true(info.max_msg_bytes >= MIB);
    close_pair(&p);

    /* window 64: partial last windows */
    open_pair(&p, v, MIB, 64, true);
    stream(&p, 64, 10000, true, true); /* 156 windows and 16 */
    stream(&p, MIB, 200, true, true);  /* 3 windows and 8 */
    stream(&p, 64, 100, false, true);
    pingpong(&p, 8, 100, 5);
    close_pair(&p);

    /* without check: one shared rx buffer, so only order and count */
    open_pair(&p, v, 64, 64, false);
    stream(&p, 64, 10000, true, false);
    pingpong(&p, 64, 100, 6);
    close_pair(&p);
}

static void test_tcp_suite(void **state)
{
    (void)state;
    suite(&v_tcp);
}

/* SO_BUSY_POLL (usually refused without CAP_NET_ADMIN) and spinning reads */
static void test_tcp_busy_poll(void **state)
{
    (void)state;
    struct pair p;
    open_pair(&p, &v_tcp_spin, MIB, 16, true);
    pingpong(&p, 8, 1000, 11);
    pingpong(&p, MIB, 20, 12);
    stream(&p, 64, 10000, true, true);
    stream(&p, MIB, 50, false, true);
    struct tp_ep_info info;
    p.ops->info(p.cli, &info);
    assert_non_null(strstr(info.fabric, "SO_BUSY_POLL"));
    close_pair(&p);
}

static void test_tcp_ipv6(void **state)
{
    (void)state;
    struct pair p;
    open_pair(&p, &v_tcp6, 4096, 4, true);
    assert_true(strncmp(p.ops->address(p.srv), "[::1]:", 6) == 0);
    pingpong(&p, 4096, 100, 13);
    stream(&p, 100, 1000, true, true);
    close_pair(&p);
}

static void test_shm_suite(void **state)
{
    (void)state;
    /* regions a dead process with our pid left behind (SIGKILL, then pid
     * reuse): the first shm endpoint must clear them, not fail with EBUSY */
    for (int e = 0; e < 4; e++) {
        char path[64];
        snprintf(path, sizeof path, "/dev/shm/%d:0:%d", (int)getpid(), e);
        FILE *f = fopen(path, "w");
        if (f)
            fclose(f);
    }
    suite(&v_shm);
}

static void test_shm_rma_suite(void **state)
{
    (void)state;
    suite(&v_shm_rma);
}

static void test_rxm_suite(void **state)
{
    (void)state;
    suite(&v_rxm);
}

static void test_rxm_rma_suite(void **state)
{
    (void)state;
    suite(&v_rxm_rma);
}

/* ---- failures ---- */

static void timeout_case(const struct variant *v)
{
    struct pair p;
    tp_error err = {0};
    open_pair(&p, v, 64, 4, true);
    const void *data;
    uint64_t t0 = tp_now_ns();
    int rc = p.ops->recv(p.cli, 8, &data, 200 * 1000000ull, &err);
    uint64_t took = tp_now_ns() - t0;
    assert_int_equal(rc, TP_ETIMEOUT);
    assert_int_equal(err.code, TP_ETIMEOUT);
    assert_non_null(strstr(err.msg, SERVER_NAME));
    assert_in_range(took, 150 * 1000000ull, 2 * SEC_NS);
    if (strcmp(v->transport, "tcp") == 0) {
        /* the watchdog shut the socket down: the endpoint says so and must go */
        assert_int_equal(p.ops->send(p.cli, 8, TMO_NS, &err), TP_EPROTO);
        assert_non_null(strstr(err.msg, "open a new one"));
    } else {
        pingpong(&p, 8, 10, 7); /* libfabric endpoints stay usable */
    }
    close_pair(&p);
}

static void test_tcp_timeout(void **state)
{
    (void)state;
    timeout_case(&v_tcp);
}

static void test_shm_timeout(void **state)
{
    (void)state;
    timeout_case(&v_shm);
}

static void test_rxm_timeout(void **state)
{
    (void)state;
    timeout_case(&v_rxm);
}

static void test_rxm_rma_timeout(void **state)
{
    (void)state;
    timeout_case(&v_rxm_rma);
}

static void test_tcp_peer_closed(void **state)
{
    (void)state;
    struct pair p;
    tp_error err = {0};
    open_pair(&p, &v_tcp, 64, 4, true);
    p.ops->close(p.srv);
    const void *data;
    int rc = p.ops->recv(p.cli, 8, &data, TMO_NS, &err);
    assert_int_equal(rc, TP_EPEER);
    assert_non_null(strstr(err.msg, SERVER_NAME));
    assert_non_null(strstr(err.msg, "closed"));
    p.ops->close(p.cli);
}

/* A dead libfabric peer is an error or a timeout, never a hang, and close()
 * returns afterwards. The peer is a child process (this binary run again with
 * "peer-child"), because shm short-cuts peers inside one process and would
 * touch the freed region of an endpoint closed next to it. */
static int peer_child(const char *provider, int in_fd, int out_fd, bool abrupt)
{
    const struct variant v = {.transport = "ofi", .provider = provider, .mode = TP_XFER_MSG};
    struct tp_ep_config cfg = config(&v, false, 64, 8, true);
    const struct tp_transport_ops *ops = tp_transport_find("ofi");
    struct tp_ep *ep;
    tp_error err = {0};
    char line[1024];
    FILE *in = fdopen(in_fd, "r");
    int rc = ops->open(&cfg, &ep, &err);
    if (rc || dprintf(out_fd, "%s\n", ops->address(ep)) < 0 || !in || !fgets(line, sizeof line, in))
        return 3;
    line[strcspn(line, "\n")] = '\0';
    struct pp pp = {8, 10, 8};
    if (ops->connect(ep, line, TMO_NS, &err) || pp_server(ops, ep, &pp, &err)) {
        fprintf(stderr, "peer-child: %s\n", err.msg);
        return 4;
    }
    if (abrupt)
        _exit(0); /* as if killed: the kernel closes what it holds */
    ops->close(ep);
    return 0;
}

static void peer_gone_case(const struct variant *v, bool abrupt)
{
    int down[2], up[2]; /* parent -> child, child -> parent */
    assert_int_equal(pipe(down), 0);
    assert_int_equal(pipe(up), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char a[16], b[16];
        snprintf(a, sizeof a, "%d", down[0]);
        snprintf(b, sizeof b, "%d", up[1]);
        execl("/proc/self/exe", "test_fabric", "peer-child", v->provider, a, b,
              abrupt ? "abrupt" : "clean", (char *)NULL);
        _exit(127);
    }
    close(down[0]);
    close(up[1]);
    FILE *in = fdopen(up[0], "r");
    assert_non_null(in);
    char line[1024];
    assert_non_null(fgets(line, sizeof line, in));
    line[strcspn(line, "\n")] = '\0';

    const struct tp_transport_ops *ops = tp_transport_find("ofi");
    struct tp_ep_config cfg = config(v, true, 64, 8, true);
    struct tp_ep *ep;
    tp_error err = {0};
    assert_ok(ops->open(&cfg, &ep, &err), &err);
    assert_ok(ops->connect(ep, line, TMO_NS, &err), &err);
    assert_true(dprintf(down[1], "%s\n", ops->address(ep)) > 0);
    struct pp pp = {8, 10, 8};
    assert_ok(pp_client(ops, ep, &pp, &err), &err);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);

    struct tp_stream_ctl ctl = {.timeout_ns = 500 * 1000000ull};
    int rc = ops->send_stream(ep, 64, 1000, &ctl, &err);
    if (rc != TP_EPEER)
        assert_int_equal(rc, TP_ETIMEOUT);
    assert_non_null(strstr(err.msg, SERVER_NAME));
    const void *data;
    rc = ops->recv(ep, 8, &data, 200 * 1000000ull, &err);
    assert_true(rc == TP_EPEER || rc == TP_ETIMEOUT || rc == TP_EPROTO);
    ops->close(ep);
    fclose(in);
    close(down[1]);
}

static void test_shm_peer_gone(void **state)
{
    (void)state;
    peer_gone_case(&v_shm, false);
}

static void test_rxm_peer_gone(void **state)
{
    (void)state;
    peer_gone_case(&v_rxm, true);
}

/* ---- stop ---- */

struct stopper {
    volatile int flag;
};

static void *stop_later(void *arg)
{
    struct timespec ts = {0, 100 * 1000000};
    nanosleep(&ts, NULL);
    ((struct stopper *)arg)->flag = 1;
    return NULL;
}

struct stop_side {
    const volatile int *stop;
    uint64_t done;
};

static int stop_tx(const struct tp_transport_ops *ops, struct tp_ep *ep, void *arg, tp_error *err)
{
    struct stop_side *s = arg;
    struct tp_stream_ctl ctl = {.timeout_ns = TMO_NS, .stop = s->stop, .done = &s->done};
    return ops->send_stream(ep, 64, UINT64_MAX, &ctl, err);
}

static int stop_rx(const struct tp_transport_ops *ops, struct tp_ep *ep, void *arg, tp_error *err)
{
    struct stop_side *s = arg;
    struct tp_stream_ctl ctl = {.timeout_ns = TMO_NS, .stop = s->stop, .done = &s->done};
    return ops->recv_stream(ep, 64, UINT64_MAX, &ctl, err);
}

static void stop_case(const struct variant *v)
{
    struct pair p;
    struct stopper st = {0};
    open_pair(&p, v, 64, 16, true);
    struct stop_side tx = {.stop = &st.flag}, rx = {.stop = &st.flag};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, stop_later, &st), 0);
    run_both(&p, stop_rx, &rx, stop_tx, &tx);
    pthread_join(t, NULL);
    assert_true(rx.done > 0);
    assert_true(tx.done >= rx.done);
    /* the stopped endpoint refuses further data calls */
    tp_error err = {0};
    assert_int_equal(p.ops->send(p.cli, 8, TMO_NS, &err), TP_EPROTO);
    close_pair(&p);
}

static void test_tcp_stop(void **state)
{
    (void)state;
    stop_case(&v_tcp);
}

static void test_shm_stop(void **state)
{
    (void)state;
    stop_case(&v_shm);
}

/* ---- lookup and bad input ---- */

static void test_find(void **state)
{
    (void)state;
    assert_non_null(tp_transport_find("tcp"));
    assert_non_null(tp_transport_find("ofi"));
    assert_null(tp_transport_find("udp"));
    assert_null(tp_transport_find(NULL));
    size_t n = 0;
    while (tp_transports[n])
        n++;
    assert_int_equal(n, 2);
    assert_string_equal(tp_ofi_version(), tp_ofi_version());
    assert_true(strncmp(tp_ofi_version(), "1.", 2) == 0);
}

/* What callers asked by comparing names is in the rows, and the option
 * checks say what they said before the rows had it. */
static void test_rows_and_checks(void **state)
{
    (void)state;
    const struct tp_transport_ops *tcp = tp_transport_find("tcp"), *ofi = tp_transport_find("ofi");
    assert_ptr_equal(tp_transport_default(false), tcp);
    assert_ptr_equal(tp_transport_default(true), ofi);
    assert_false(tcp->needs_provider);
    assert_true(ofi->needs_provider);
    assert_false(tcp->rma);
    assert_true(ofi->rma);
    char buf[128];
    assert_string_equal(tp_transport_names(" or ", buf, sizeof buf), "tcp or ofi");
    assert_string_equal(tp_transport_names(", ", buf, sizeof buf), "tcp, ofi");
    assert_string_equal(tp_transport_label(tcp, NULL, buf, sizeof buf), "tcp");
    assert_string_equal(tp_transport_label(ofi, NULL, buf, sizeof buf), "ofi tcp;ofi_rxm");
    assert_string_equal(tp_transport_label(ofi, "shm", buf, sizeof buf), "ofi shm");
    assert_false(tp_transport_hmem_offered(tcp, "shm"));

    tp_error err = {0};
    assert_ok(tp_transport_check("tcp", NULL, false, &err), &err);
    assert_ok(tp_transport_check("ofi", "shm", true, &err), &err);
    assert_int_equal(tp_transport_check("udp", NULL, false, &err), TP_EUSAGE);
    assert_string_equal(err.msg, "--transport 'udp': unknown (use tcp or ofi)");
    assert_int_equal(tp_transport_check("ofi", NULL, false, &err), TP_EUSAGE);
    assert_string_equal(err.msg, "--transport ofi needs --provider NAME (as fi_info -l prints: "
                                 "shm, 'tcp;ofi_rxm', 'verbs;ofi_rxm', efa, ...)");
    assert_int_equal(tp_transport_check("tcp", "shm", false, &err), TP_EUSAGE);
    assert_string_equal(err.msg, "--provider 'shm' needs --transport ofi");
    assert_int_equal(tp_transport_check("tcp", NULL, true, &err), TP_EUSAGE);
    assert_string_equal(err.msg, "--rma needs --transport ofi (kernel TCP has no RMA)");
    assert_ok(tp_transport_provider_check(tcp, NULL, &err), &err);
    assert_int_equal(tp_transport_provider_check(ofi, "nosuchprov", &err), TP_EUSAGE);

    assert_ptr_equal(tp_transport_parse(NULL, &err), tcp);
    assert_ptr_equal(tp_transport_parse("ofi", &err), ofi);
    assert_null(tp_transport_parse("udp", &err));
    assert_int_equal(err.code, TP_EUSAGE);
    assert_string_equal(err.msg, "--transport udp: tcp or ofi");

    /* the channel kinds: shm for --intra shm, the transport's own for fabric */
    const struct tp_chan_kind *k = NULL;
    assert_ok(tp_chan_intra_parse(NULL, &k, &err), &err);
    assert_non_null(k);
    assert_string_equal(tp_chan_kind_name(k), "shm");
    assert_ok(tp_chan_intra_parse("fabric", &k, &err), &err);
    assert_null(k);
    assert_int_equal(tp_chan_intra_parse("nvlink", &k, &err), TP_EUSAGE);
    assert_string_equal(err.msg, "--intra nvlink: shm or fabric");
    const char *names[] = {"shm", "tcp", "ofi"};
    size_t n = 0;
    for (; tp_chan_kinds[n]; n++) {
        assert_true(n < 3);
        assert_string_equal(tp_chan_kind_name(tp_chan_kinds[n]), names[n]);
    }
    assert_int_equal(n, 3);
    assert_string_equal(tp_chan_kind_name(tcp->chan), "tcp");
    assert_string_equal(tp_chan_kind_name(ofi->chan), "ofi");
}

static void test_unknown_provider(void **state)
{
    (void)state;
    const struct variant bad = {.transport = "ofi", .provider = "nosuchprov", .mode = TP_XFER_MSG};
    struct tp_ep_config cfg = config(&bad, true, 64, 4, false);
    struct tp_ep *ep = NULL;
    tp_error err = {0};
    assert_int_equal(tp_transport_find("ofi")->open(&cfg, &ep, &err), TP_EUSAGE);
    assert_null(ep);
    assert_non_null(strstr(err.msg, "nosuchprov"));
    assert_non_null(strstr(err.msg, "shm")); /* the list of what is available */

    tp_error_clear(&err);
    assert_int_equal(tp_ofi_provider_check("nosuchprov", &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "nosuchprov"));
    assert_ok(tp_ofi_provider_check("shm", &err), &err);
    assert_ok(tp_ofi_provider_check("tcp;ofi_rxm", &err), &err);
}

static void test_tcp_rma_unsupported(void **state)
{
    (void)state;
    const struct variant v = {.transport = "tcp", .provider = NULL, .mode = TP_XFER_RMA};
    struct tp_ep_config cfg = config(&v, false, 64, 4, false);
    struct tp_ep *ep = NULL;
    tp_error err = {0};
    assert_int_equal(tp_transport_find("tcp")->open(&cfg, &ep, &err), TP_EUNSUP);
    assert_null(ep);
    assert_non_null(strstr(err.msg, "RMA"));
}

static void test_tcp_refused(void **state)
{
    (void)state;
    struct tp_ep_config cfg = config(&v_tcp, false, 64, 4, false);
    struct tp_ep *srv = NULL, *cli = NULL;
    tp_error err = {0};
    const struct tp_transport_ops *ops = tp_transport_find("tcp");
    assert_ok(ops->open(&cfg, &srv, &err), &err);
    char addr[80];
    snprintf(addr, sizeof addr, "%s", ops->address(srv));
    ops->close(srv); /* nobody listens there now */
    cfg = config(&v_tcp, true, 64, 4, false);
    assert_ok(ops->open(&cfg, &cli, &err), &err);
    assert_string_equal(ops->address(cli), "127.0.0.1"); /* the IP it connects from */
    assert_int_equal(ops->connect(cli, addr, TMO_NS, &err), TP_EPEER);
    assert_non_null(strstr(err.msg, SERVER_NAME));
    assert_int_equal(ops->connect(cli, "not-an-address", TMO_NS, &err), TP_EUSAGE);
    ops->close(cli);
}

/* A connection from another IP than the one the client announced never
 * becomes the data path: 127.0.0.2 plays the intruder. */
static void test_tcp_intruder_dropped(void **state)
{
    (void)state;
    const struct tp_transport_ops *ops = tp_transport_find("tcp");
    struct tp_ep_config sc = config(&v_tcp, false, 64, 4, false);
    struct tp_ep_config cc = config(&v_tcp, true, 64, 4, false);
    struct tp_ep *srv = NULL, *cli = NULL;
    tp_error err = {0};
    assert_ok(ops->open(&sc, &srv, &err), &err);
    assert_ok(ops->open(&cc, &cli, &err), &err);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    int port = atoi(strrchr(ops->address(srv), ':') + 1);
    sa.sin_port = htons((uint16_t)port);
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    struct sockaddr_in from = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.2", &from.sin_addr);
    int intruder = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(bind(intruder, (struct sockaddr *)&from, sizeof from), 0);
    assert_int_equal(connect(intruder, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_ok(ops->connect(cli, ops->address(srv), TMO_NS, &err), &err);
    assert_ok(ops->connect(srv, ops->address(cli), TMO_NS, &err), &err);
    memset(ops->tx_buf(cli), 0x5a, 64);
    const void *data = NULL;
    assert_ok(ops->send(cli, 64, TMO_NS, &err), &err);
    assert_ok(ops->recv(srv, 64, &data, TMO_NS, &err), &err);
    assert_int_equal(((const unsigned char *)data)[63], 0x5a);
    char b;
    assert_int_equal(recv(intruder, &b, 1, 0), 0); /* the server closed it */
    close(intruder);
    ops->close(srv);
    ops->close(cli);
}

int main(int argc, char **argv)
{
    tp_clock_init();
    if (argc == 6 && strcmp(argv[1], "peer-child") == 0)
        return peer_child(argv[2], atoi(argv[3]), atoi(argv[4]), strcmp(argv[5], "abrupt") == 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_rows_and_checks),
        cmocka_unit_test(test_unknown_provider),
        cmocka_unit_test(test_tcp_rma_unsupported),
        cmocka_unit_test(test_tcp_refused),
        cmocka_unit_test(test_tcp_intruder_dropped),
        cmocka_unit_test(test_tcp_suite),
        cmocka_unit_test(test_tcp_busy_poll),
        cmocka_unit_test(test_tcp_ipv6),
        cmocka_unit_test(test_shm_suite),
        cmocka_unit_test(test_shm_rma_suite),
        cmocka_unit_test(test_rxm_suite),
        cmocka_unit_test(test_rxm_rma_suite),
        cmocka_unit_test(test_tcp_timeout),
        cmocka_unit_test(test_shm_timeout),
        cmocka_unit_test(test_rxm_timeout),
        cmocka_unit_test(test_rxm_rma_timeout),
        cmocka_unit_test(test_tcp_peer_closed),
        cmocka_unit_test(test_shm_peer_gone),
        cmocka_unit_test(test_rxm_peer_gone),
        cmocka_unit_test(test_tcp_stop),
        cmocka_unit_test(test_shm_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
