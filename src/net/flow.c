/* The measuring loops. They stay lean: no allocation, no logging and no
 * branches beyond the optional payload check. With --check the ping side
 * verifies after it stops the clock; the pong side must verify before it
 * echoes (a received payload is valid only until the next call on the
 * endpoint), so --check adds one pass over the payload to each round trip:
 * documented in docs/metrics.md. */
#include "net_int.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "tp/clock.h"
#include "tp/intr.h"
#include "tp/gpu.h"
#include "tp/pattern.h"

uint64_t tp__net_flow_seed(uint64_t size)
{
    return 0x7472616e70617468ull ^ (size * 0x100000001b3ull);
}

static bool staged(const struct flow_job *j)
{
    return j->gpu && !j->dev;
}

/* The message's bytes start in GPU memory (staged: copied out of dtx into
 * the host tx buffer before each send) and end there (copied from the
 * received data into drx). Both copies are inside the timed loops: they
 * are what a host-staged GPU transfer costs. */
static int stage_out(struct flow_job *j, void *tx)
{
    return tp_gpu_d2h(j->gpu, tx, j->dtx, j->size, &j->err);
}

static int stage_in(struct flow_job *j, const void *data)
{
    return tp_gpu_h2d(j->gpu, j->drx, data, j->size, &j->err);
}

static int before_send(void *arg, const void *tx, size_t len, uint64_t index)
{
    (void)len, (void)index;
    return stage_out(arg, (void *)tx);
}

static int prepare_tx(struct flow_job *j)
{
    void *tx = j->ops->tx_buf(j->ep);
    if (j->check || j->corrupt) {
        void *fill = j->dev ? j->hbuf : tx; /* GPU memory is filled through the host */
        tp_pattern_fill(fill, j->size, tp__net_flow_seed(j->size));
        if (j->corrupt)
            ((unsigned char *)fill)[j->size / 2] ^= 0x20;
        if (j->dev)
            return tp_gpu_h2d(j->gpu, tx, fill, j->size, &j->err);
    }
    /* staged: the message to send lives in dtx */
    return staged(j) ? tp_gpu_h2d(j->gpu, j->dtx, tx, j->size, &j->err) : 0;
}

static int verify(struct flow_job *j, const void *data, uint64_t index)
{
    size_t off;
    uint8_t want, got;
    if (j->dev) { /* the payload is in GPU memory: read it back first */
        int rc = tp_gpu_d2h(j->gpu, j->hbuf, data, j->size, &j->err);
        if (rc)
            return rc;
        data = j->hbuf;
    }
    if (tp_pattern_check(data, j->size, tp__net_flow_seed(j->size), &off, &want, &got) == 0)
        return 0;
    return tp_error_set(&j->err, TP_ECHECK,
                        "payload mismatch: %llu-byte message %llu, byte %zu: expected 0x%02x, "
                        "received 0x%02x",
                        (unsigned long long)j->size, (unsigned long long)index, off, want, got);
}

static int ping(struct flow_job *j)
{
    const struct tp_transport_ops *ops = j->ops;
    struct tp_ep *ep = j->ep;
    const void *data;
    int rc;
    void *tx = ops->tx_buf(ep);
    bool st = staged(j);
    j->start_ns = tp_now_ns();
    for (uint64_t i = 0; i < j->count; i++) {
        if (tp_intr_signal()) /* one relaxed load: outside the timed region */
            return tp_intr_check(&j->err);
        uint64_t t0 = tp_now_ns();
        if ((st && (rc = stage_out(j, tx))) ||
            (rc = ops->send(ep, j->size, j->timeout_ns, &j->err)) ||
            (rc = ops->recv(ep, j->size, &data, j->timeout_ns, &j->err)) ||
            (st && (rc = stage_in(j, data))))
            return rc;
        uint64_t t1 = tp_now_ns();
        if (j->rtt)
            tp_hist_record(j->rtt, t1 - t0);
        __atomic_store_n(&j->done, i + 1, __ATOMIC_RELAXED);
        if (j->check && (rc = verify(j, data, i)))
            return rc;
    }
    j->end_ns = tp_now_ns();
    return 0;
}

static int pong(struct flow_job *j)
{
    const struct tp_transport_ops *ops = j->ops;
    struct tp_ep *ep = j->ep;
    const void *data;
    int rc;
    void *tx = ops->tx_buf(ep);
    bool st = staged(j);
    for (uint64_t i = 0; i < j->count; i++) {
        if ((rc = ops->recv(ep, j->size, &data, j->timeout_ns, &j->err)))
            return rc;
        int bad = j->check ? verify(j, data, i) : 0;
        /* staged: the message lands in GPU memory, the answer leaves from it */
        if ((st && ((rc = stage_in(j, data)) || (rc = stage_out(j, tx)))) ||
            (rc = ops->send(ep, j->size, j->timeout_ns, &j->err)))
            return rc;
        __atomic_store_n(&j->done, i + 1, __ATOMIC_RELAXED);
        if (bad)
            return bad;
    }
    return 0;
}

/* The final 1-byte acknowledgement tells the sender its last message was
 * received, so the sender's clock covers delivery, not just hand-off. */
static int send_stream(struct flow_job *j)
{
    const void *data;
    struct tp_stream_ctl ctl = {.timeout_ns = j->timeout_ns,
                                .stop = j->stop,
                                .done = &j->done,
                                .before_send = staged(j) ? before_send : NULL,
                                .arg = j};
    j->start_ns = tp_now_ns();
    int rc = j->ops->send_stream(j->ep, j->size, j->count, &ctl, &j->err);
    if (rc)
        return rc;
    if (j->stop && *j->stop)
        return 0;
    if ((rc = j->ops->recv(j->ep, 1, &data, j->timeout_ns, &j->err)))
        return rc;
    j->end_ns = tp_now_ns();
    return 0;
}

static int on_msg(void *arg, const void *data, size_t len, uint64_t index)
{
    struct flow_job *j = arg;
    struct rx_stats *rx = &j->rx;
    int rc;
    if (staged(j) && (rc = stage_in(j, data)) != 0)
        return rc;
    /* read the clock on every large message but only every 64th small one:
     * 100 ms intervals do not need more, and tiny messages arrive at
     * millions per second */
    if (len >= 4096 || (index & 63) == 0 || index + 1 == j->count) {
        uint64_t now = tp_now_ns();
        if (rx->msgs == 0)
            rx->first_ns = now;
        rx->last_ns = now;
        size_t slot = (size_t)((now - rx->first_ns) / FLOW_INTERVAL_NS);
        if (slot >= rx->cap) {
            size_t cap = rx->cap ? rx->cap * 2 : 64;
            while (cap <= slot)
                cap *= 2;
            uint64_t *p = realloc(rx->intervals, cap * sizeof *p);
            if (!p)
                return tp_error_set(&j->err, TP_ENOMEM, "recording receive intervals");
            memset(p + rx->cap, 0, (cap - rx->cap) * sizeof *p);
            rx->intervals = p;
            rx->cap = cap;
        }
        if (slot + 1 > rx->nintervals)
            rx->nintervals = slot + 1;
        /* the messages since the last clock read land in this slot */
        uint64_t since = index + 1 - rx->msgs;
        rx->intervals[slot] += since * len;
        rx->msgs = index + 1;
        rx->bytes = rx->msgs * len;
    }
    if (j->check)
        return verify(j, data, index);
    return 0;
}

static int recv_stream(struct flow_job *j)
{
    struct tp_stream_ctl ctl = {
        .timeout_ns = j->timeout_ns, .stop = j->stop, .on_msg = on_msg, .arg = j, .done = &j->done};
    int rc = j->ops->recv_stream(j->ep, j->size, j->count, &ctl, &j->err);
    if (rc)
        return rc;
    if (j->stop && *j->stop) {
        j->rx.msgs = j->done;
        j->rx.bytes = j->done * j->size;
        return 0;
    }
    return j->ops->send(j->ep, 1, j->timeout_ns, &j->err);
}

/* Fault injection for tests: TP_FAULT_STUCK=1 makes the first job of the
 * process never return, as a data-path call stuck inside a library would,
 * so the abandon path of flow_join can be exercised. */
static int stuck_once;

int tp__net_flow_run(struct flow_job *j)
{
    if (getenv("TP_FAULT_STUCK") && !__atomic_exchange_n(&stuck_once, 1, __ATOMIC_ACQ_REL))
        for (;;)
            pause();
    tp_error_clear(&j->err);
    j->done = 0;
    if ((j->rc = prepare_tx(j)) != 0)
        return j->rc;
    j->start_ns = tp_now_ns();
    switch (j->role) {
    case ROLE_PING: j->rc = ping(j); break;
    case ROLE_PONG: j->rc = pong(j); break;
    case ROLE_SEND: j->rc = send_stream(j); break;
    case ROLE_RECV: j->rc = recv_stream(j); break;
    }
    if (j->role == ROLE_RECV || j->role == ROLE_PONG || (j->stop && *j->stop))
        j->end_ns = tp_now_ns();
    return j->rc;
}

static void *flow_thread(void *arg)
{
    tp__net_flow_run(arg);
    return NULL;
}

int tp__net_flow_start(struct flow_job *jobs, size_t n, size_t *started, tp_error *err)
{
    for (*started = 0; *started < n; (*started)++)
        if (pthread_create(&jobs[*started].thread, NULL, flow_thread, &jobs[*started]) != 0)
            return tp_error_set(err, TP_ESYS, "cannot start a flow thread");
    return 0;
}

static uint64_t progress(const struct flow_job *jobs, size_t n)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += __atomic_load_n(&jobs[i].done, __ATOMIC_RELAXED);
    return sum;
}

/* Joins with a 1 s timed wait, so the guard costs one wake-up a second. */
int tp__net_flow_join(struct flow_job *jobs, size_t n, bool *abandoned, tp_error *err)
{
    uint64_t last = progress(jobs, n), since = tp_now_ns();
    uint64_t limit = (n ? jobs[0].timeout_ns : 0) + 2000000000ull;
    for (size_t i = 0; i < n;) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        if (pthread_timedjoin_np(jobs[i].thread, NULL, &ts) == 0) {
            i++;
            continue;
        }
        uint64_t now = tp_now_ns(), p = progress(jobs, n);
        if (p != last) {
            last = p;
            since = now;
            continue;
        }
        if (now - since < limit)
            continue;
        for (size_t k = i; k < n; k++)
            pthread_detach(jobs[k].thread);
        *abandoned = true;
        return tp_error_set(err, TP_ETIMEOUT,
                            "peer %s: a data-path call has not returned for %.1f s; "
                            "abandoning it (the peer died inside the fabric library?)",
                            jobs[0].peer ? jobs[0].peer : "?", (double)(now - since) / 1e9);
    }
    for (size_t i = 0; i < n; i++) {
        if (jobs[i].rc) {
            if (err)
                *err = jobs[i].err;
            return jobs[i].rc;
        }
    }
    return 0;
}

int tp__net_flow_run_all(struct flow_job *jobs, size_t n, bool *abandoned, tp_error *err)
{
    size_t started;
    int rc = tp__net_flow_start(jobs, n, &started, err);
    int jrc = tp__net_flow_join(jobs, started, abandoned, rc ? NULL : err);
    return rc ? rc : jrc;
}

/* Who frees a closer: the waiter (the close ended in time) or the closing
 * thread (the waiter gave up). One compare-and-swap decides. */
enum { CLOSING, CLOSED, ORPHANED };

struct closer {
    const struct tp_transport_ops *ops;
    size_t n;
    int state;
    struct tp_ep *eps[];
};

static void *closer_main(void *arg)
{
    struct closer *c = arg;
    for (size_t i = 0; i < c->n; i++)
        c->ops->close(c->eps[i]);
    int expect = CLOSING;
    if (!__atomic_compare_exchange_n(&c->state, &expect, CLOSED, false, __ATOMIC_SEQ_CST,
                                     __ATOMIC_SEQ_CST))
        free(c); /* orphaned: nobody waits for us */
    return NULL;
}

bool tp__net_flow_close_eps(const struct tp_transport_ops *ops, struct tp_ep *const *eps, size_t n)
{
    struct closer *c = calloc(1, sizeof *c + n * sizeof c->eps[0]);
    pthread_t t;
    if (!c)
        return false;
    c->ops = ops;
    c->n = n;
    c->state = CLOSING;
    memcpy(c->eps, eps, n * sizeof eps[0]);
    if (pthread_create(&t, NULL, closer_main, c) != 0) {
        closer_main(c); /* closes inline; state is now CLOSED */
        free(c);
        return true;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 2;
    if (pthread_timedjoin_np(t, NULL, &ts) != 0) {
        int expect = CLOSING;
        if (__atomic_compare_exchange_n(&c->state, &expect, ORPHANED, false, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST)) {
            pthread_detach(t);
            return false;
        }
        pthread_join(t, NULL); /* it finished just now */
    }
    free(c);
    return true;
}

double tp__net_rx_peak_Bps(const struct rx_stats *rx, uint64_t window_ns)
{
    size_t w = (size_t)(window_ns / FLOW_INTERVAL_NS);
    if (w == 0)
        w = 1;
    uint64_t span = rx->last_ns - rx->first_ns;
    /* the last interval is partial; use only whole ones */
    size_t whole = (size_t)(span / FLOW_INTERVAL_NS);
    if (whole < w || rx->nintervals < w) {
        return span ? (double)rx->bytes * 1e9 / (double)span : 0.0;
    }
    uint64_t sum = 0, best = 0;
    for (size_t i = 0; i < whole && i < rx->nintervals; i++) {
        sum += rx->intervals[i];
        if (i >= w)
            sum -= rx->intervals[i - w];
        if (i + 1 >= w && sum > best)
            best = sum;
    }
    return (double)best * 1e9 / (double)(w * FLOW_INTERVAL_NS);
}

void tp__net_rx_free(struct rx_stats *rx)
{
    free(rx->intervals);
    memset(rx, 0, sizeof *rx);
}

int tp__net_flow_mem_alloc(struct tp_gpu *g, bool dev, size_t bytes, void **dbuf, void **hbuf,
                           tp_error *err)
{
    *dbuf = *hbuf = NULL;
    if (!g)
        return 0;
    if (dev) {
        if (!(*hbuf = malloc(bytes ? bytes : 1)))
            return tp_error_set(err, TP_ENOMEM, "host scratch of %zu bytes", bytes);
        memset(*hbuf, 0, bytes);
        return 0;
    }
    int rc = tp_gpu_alloc(g, 2 * bytes, dbuf, err);
    return rc ? rc : tp_gpu_memset(g, *dbuf, 0, 2 * bytes, err);
}

void tp__net_flow_mem_free(struct tp_gpu *g, void *dbuf, void *hbuf)
{
    tp_gpu_free(g, dbuf);
    free(hbuf);
}

const char *tp__net_flow_mem_path(const struct tp_gpu *g, bool dev,
                                  const struct tp_transport_ops *ops)
{
    if (!g)
        return "host";
    if (dev)
        return "device: the provider moves GPU memory itself (FI_HMEM)";
    return ops->mem_staged;
}
