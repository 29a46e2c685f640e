/* libfabric transport: one reliable-datagram (FI_EP_RDM) endpoint per peer,
 * any provider (shm, tcp;ofi_rxm, verbs;ofi_rxm, efa, cxi, ...). The same code
 * serves every provider because it asks for the most demanding memory
 * registration rules (FI_MR_LOCAL, VIRT_ADDR, ALLOCATED, PROV_KEY, ENDPOINT)
 * and context mode bits, then follows whichever the provider keeps.
 *
 * Progress is a spin on one completion queue; every operation carries its own
 * struct op whose first member is the libfabric context. Any completion resets
 * the idle deadline. A long idle spin yields the CPU now and then, so a peer
 * or progress thread sharing the core is not starved for a whole time slice;
 * a fast exchange never gets that far.
 *
 * Ping-pong keeps one receive posted ahead (rx slot 0): send() re-posts it
 * right after the message leaves, so recv() finds it already waiting.
 *
 * Streams use fabtests-style credits so the receiver is never flooded with
 * unexpected messages: the receiver pre-posts a receive per window slot, and
 * after message n with (n + 1) % window == 0 or n + 1 == count it re-posts the
 * slots for the next window and sends a credit (an 8-byte count of messages
 * received). The sender posts the credit receive before each window, sends
 * the window, then waits for that credit. In RMA mode the data moves with
 * fi_writedata into the peer's rx buffer (slot (n % window) when the peer keeps
 * one buffer per slot) and the remote CQ data carries the slot, so the target
 * learns of each write from its completion queue; the credits stay two-sided.
 * A stream that was stopped or failed midway leaves operations posted: the
 * endpoint then refuses further data calls and must be closed.
 *
 * address() is the hex of fi_getname(); in RMA mode it is
 * "hex|rx_addr|rx_key|slot_stride|slots" (hex numbers), the rx buffer's remote
 * address (virtual address under FI_MR_VIRT_ADDR, else 0), its key and its
 * layout. */
#include "ofi_int.h"
#include "tp/transport.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "chan_int.h"
#include "tp/clock.h"
#include "tp/gpu.h"

#define CTRL_BYTES 64 /* credit buffers, and the smallest rx slot */
#define CREDIT_BYTES sizeof(uint64_t)
#define YIELD_EVERY 1024 /* empty CQ polls between sched_yield() calls */
#define CLOCK_EVERY 64   /* empty CQ polls between clock reads (a divisor of YIELD_EVERY) */

enum op_kind { OP_TX, OP_RX, OP_CREDIT_TX };

struct op {
    struct fi_context2 ctx; /* first: a pointer to the op is its context */
    enum op_kind kind;
    bool busy;    /* posted, completion not yet seen */
    bool arrived; /* rx: a message or an RMA write landed; cleared when consumed */
    size_t len;   /* rx: bytes that arrived */
    void *buf;    /* rx: where the message lands */
};

struct mem {
    void *buf;
    bool dev; /* GPU memory (FI_HMEM), from tp_gpu_alloc */
    size_t bytes;
    struct fid_mr *mr;
    void *desc; /* fi_mr_desc() where FI_MR_LOCAL requires it, else NULL */
};

struct tp_ep {
    struct tp__ofi f; /* provider entry, fids, registration state */
    fi_addr_t peer_fa;
    bool connected;
    bool broken;     /* a stream stopped or failed midway */
    bool rma;        /* TP_XFER_RMA */
    bool hmem;       /* tx and rx buffers in GPU memory, registered as FI_HMEM_CUDA */
    struct tp_gpu *gpu;
    bool rx_cq_data; /* FI_RX_CQ_DATA: each remote write consumes a posted receive */
    bool rx_ahead;   /* rx_ops[0] is posted into slot 0 */
    bool check;
    uint64_t data_mask; /* remote CQ data bits */
    size_t max_msg;
    size_t inject; /* tx_attr->inject_size */
    size_t stride; /* bytes per rx slot */
    unsigned window;
    unsigned nslots;         /* rx slots: window with check, else 1 */
    unsigned tx_busy;        /* tx ops in flight */
    uint64_t tx_done;        /* tx messages completed locally, ever */
    struct mem tx, rx, ctrl; /* ctrl: credit out at 0, credit in at CTRL_BYTES */
    struct op *tx_ops;       /* window */
    struct op *rx_ops;       /* window; rx_ops[0] doubles as the ping-pong receive */
    struct op credit_tx, credit_rx;
    uint64_t peer_rx_addr, peer_rx_key;
    size_t peer_stride;
    unsigned peer_slots;
    char peer[128];
    char *addr;
};

extern const struct tp_transport_ops tp_ofi_ops;

/* ---- completions ---- */

static void set_done(const struct tp_stream_ctl *ctl, uint64_t n)
{
    if (ctl && ctl->done)
        __atomic_store_n(ctl->done, n, __ATOMIC_RELAXED);
}

static void op_finished(struct tp_ep *ep, struct op *o, size_t len)
{
    o->busy = false;
    if (o->kind == OP_TX) {
        ep->tx_busy--;
        ep->tx_done++;
    } else if (o->kind == OP_RX) {
        o->arrived = true;
        o->len = len;
    }
}

static int complete(struct tp_ep *ep, const struct fi_cq_data_entry *e, tp_error *err)
{
    if (e->flags & FI_REMOTE_CQ_DATA) {
        /* an RMA write landed; the data says which slot of the window */
        uint64_t slot = e->data & ep->data_mask;
        if (slot >= ep->window)
            return tp_error_set(err, TP_EPROTO,
                                "peer %s wrote slot %llu, beyond the window of %u (do both ends "
                                "use the same window?)",
                                ep->peer, (unsigned long long)slot, ep->window);
        if (ep->rx_cq_data && e->op_context)
            ((struct op *)e->op_context)->busy = false;
        ep->rx_ops[slot].arrived = true;
        ep->rx_ops[slot].len = e->len;
        return 0;
    }
    if (e->op_context)
        op_finished(ep, e->op_context, e->len);
    return 0;
}

static int cq_error(struct tp_ep *ep, tp_error *err)
{
    struct fi_cq_err_entry ee;
    char d[256];
    int r = tp__ofi_cq_readerr(&ep->f, &ee, d, sizeof d);
    if (r == 0)
        return 0;
    if (r < 0)
        return tp_error_set(err, TP_ESYS, "fi_cq_readerr (%s, peer %s): %s", ep->f.prov, ep->peer,
                            fi_strerror(-r));
    struct op *o = ee.op_context;
    if (o && !(ee.flags & FI_REMOTE_CQ_DATA) && o->busy) {
        o->busy = false;
        if (o->kind == OP_TX)
            ep->tx_busy--;
        if (o == &ep->rx_ops[0])
            ep->rx_ahead = false;
    }
    if (ee.err == FI_ECANCELED)
        return 0;
    if (ee.err == FI_ETRUNC)
        return tp_error_set(err, TP_EPROTO,
                            "peer %s sent a message longer than the receive posted for it (%s: %s)",
                            ep->peer, ep->f.prov, d);
    return tp_error_set(err, TP_EPEER, "%s with peer %s failed on %s: %s (%s)",
                        o && o->kind == OP_RX ? "receive" : "transfer", ep->peer, ep->f.prov,
                        fi_strerror(ee.err), d);
}

/* Reap completions: how many (>= 0), or a negative tp code. */
static int progress(struct tp_ep *ep, tp_error *err)
{
    struct fi_cq_data_entry e[16];
    ssize_t n = fi_cq_read(ep->f.cq, e, 16);
    if (n == -FI_EAGAIN)
        return 0;
    if (n == -FI_EAVAIL) {
        int rc = cq_error(ep, err);
        return rc < 0 ? rc : 1;
    }
    if (n < 0)
        return tp_error_set(err, TP_ESYS, "fi_cq_read (%s, peer %s): %s", ep->f.prov, ep->peer,
                            fi_strerror((int)-n));
    for (ssize_t i = 0; i < n; i++) {
        int rc = complete(ep, &e[i], err);
        if (rc)
            return rc;
    }
    return (int)n;
}

/* An idle deadline kept without a clock read on the fast path: the clock
 * is read every CLOCK_EVERY empty polls only, and after progress the
 * deadline restarts from the next read (a few microseconds late at most,
 * against timeouts of seconds). A small message's round trip is about a
 * microsecond on shared memory, and each read costs some 20 ns; fi_pingpong
 * reads none. (Measured end to end the change is within this VM's noise:
 * bench/README.md.) */
struct waiter {
    unsigned idle;    /* empty polls in a row */
    bool restart;     /* the deadline restarts at the next clock read */
    uint64_t deadline;
    uint64_t timeout_ns;
    const struct tp_stream_ctl *ctl;
    const char *what; /* "receiving from", "sending to" */
};

static struct waiter waiter(uint64_t timeout_ns, const struct tp_stream_ctl *ctl, const char *what)
{
    return (struct waiter){0, true, 0, timeout_ns, ctl, what};
}

/* Drive the CQ once: 1 keep waiting, 0 stopped, < 0 error or idle timeout. */
static int spin(struct tp_ep *ep, struct waiter *w, tp_error *err)
{
    int n = progress(ep, err);
    if (n < 0)
        return n;
    if (w->ctl && w->ctl->stop && *w->ctl->stop)
        return 0;
    if (n > 0) {
        w->restart = true;
        w->idle = 0;
        return 1;
    }
    if (++w->idle % YIELD_EVERY == 0)
        sched_yield();
    if (w->idle % CLOCK_EVERY != 0)
        return 1;
    uint64_t now = tp_now_ns();
    if (w->restart) {
        w->deadline = now + w->timeout_ns;
        w->restart = false;
    }
    if (now >= w->deadline)
        return tp_error_set(err, TP_ETIMEOUT, "no progress %s peer %s over %s for %.3f s", w->what,
                            ep->peer, ep->f.prov, (double)w->timeout_ns / 1e9);
    return 1;
}

static int wait_idle(struct tp_ep *ep, const struct op *o, struct waiter *w, tp_error *err)
{
    while (o->busy) {
        int rc = spin(ep, w, err);
        if (rc <= 0)
            return rc;
    }
    return 1;
}

static int wait_arrived(struct tp_ep *ep, const struct op *o, struct waiter *w, tp_error *err)
{
    while (!o->arrived) {
        int rc = spin(ep, w, err);
        if (rc <= 0)
            return rc;
    }
    return 1;
}

/* ---- posting ---- */

static int post_failed(struct tp_ep *ep, const char *call, ssize_t r, tp_error *err)
{
    return tp_error_set(err, r == -FI_ENOMEM ? TP_ENOMEM : TP_EPEER, "%s to peer %s on %s: %s",
                        call, ep->peer, ep->f.prov, fi_strerror((int)-r));
}

static void *slot_buf(struct tp_ep *ep, unsigned slot)
{
    return (char *)ep->rx.buf + (ep->check ? (size_t)slot * ep->stride : 0);
}

/* Post o as a receive into buf; 1 posted, 0 stopped, < 0 error. */
static int post_recv(struct tp_ep *ep, struct op *o, void *buf, size_t len, void *desc,
                     struct waiter *w, tp_error *err)
{
    o->buf = buf;
    o->arrived = false;
    for (;;) {
        ssize_t r = fi_recv(ep->f.ep, buf, len, desc, FI_ADDR_UNSPEC, o);
        if (r == 0) {
            o->busy = true;
            return 1;
        }
        if (r != -FI_EAGAIN)
            return post_failed(ep, "fi_recv", r, err);
        int rc = spin(ep, w, err);
        if (rc <= 0)
            return rc;
    }
}

static int post_slot(struct tp_ep *ep, unsigned slot, struct waiter *w, tp_error *err)
{
    return post_recv(ep, &ep->rx_ops[slot], slot_buf(ep, slot), ep->stride, ep->rx.desc, w, err);
}

/* Two-sided messages need a receive posted; RMA writes need one only under
 * FI_RX_CQ_DATA. */
static bool needs_rx_post(const struct tp_ep *ep)
{
    return !ep->rma || ep->rx_cq_data;
}

static int post_ahead(struct tp_ep *ep, struct waiter *w, tp_error *err)
{
    if (ep->rx_ahead || !needs_rx_post(ep))
        return 1;
    int rc = post_slot(ep, 0, w, err);
    if (rc > 0)
        ep->rx_ahead = true;
    return rc;
}

/* Send len bytes of the tx buffer as message or RMA write into slot; with
 * o == NULL the message is injected (no completion). 1 posted, 0 stopped,
 * < 0 error. */
static int post_send(struct tp_ep *ep, struct op *o, size_t len, unsigned slot, struct waiter *w,
                     tp_error *err)
{
    uint64_t raddr = 0;
    if (ep->rma)
        raddr = ep->peer_rx_addr + (uint64_t)(slot % ep->peer_slots) * ep->peer_stride;
    for (;;) {
        ssize_t r;
        if (ep->rma && !o)
            r = fi_inject_writedata(ep->f.ep, ep->tx.buf, len, slot, ep->peer_fa, raddr,
                                    ep->peer_rx_key);
        else if (ep->rma)
            r = fi_writedata(ep->f.ep, ep->tx.buf, len, ep->tx.desc, slot, ep->peer_fa, raddr,
                             ep->peer_rx_key, o);
        else if (!o)
            r = fi_inject(ep->f.ep, ep->tx.buf, len, ep->peer_fa);
        else
            r = fi_send(ep->f.ep, ep->tx.buf, len, ep->tx.desc, ep->peer_fa, o);
        if (r == 0) {
            if (o) {
                o->busy = true;
                ep->tx_busy++;
            } else {
                ep->tx_done++;
            }
            return 1;
        }
        if (r != -FI_EAGAIN)
            return post_failed(ep, ep->rma ? "fi_writedata" : "fi_send", r, err);
        int rc = spin(ep, w, err);
        if (rc <= 0)
            return rc;
    }
}

static int send_credit(struct tp_ep *ep, uint64_t value, struct waiter *w, tp_error *err)
{
    int rc = wait_idle(ep, &ep->credit_tx, w, err);
    if (rc <= 0)
        return rc;
    memcpy(ep->ctrl.buf, &value, sizeof value);
    for (;;) {
        ssize_t r = ep->inject >= CREDIT_BYTES
                        ? fi_inject(ep->f.ep, ep->ctrl.buf, CREDIT_BYTES, ep->peer_fa)
                        : fi_send(ep->f.ep, ep->ctrl.buf, CREDIT_BYTES, ep->ctrl.desc, ep->peer_fa,
                                  &ep->credit_tx);
        if (r == 0) {
            ep->credit_tx.busy = ep->inject < CREDIT_BYTES;
            return 1;
        }
        if (r != -FI_EAGAIN)
            return post_failed(ep, "credit fi_send", r, err);
        rc = spin(ep, w, err);
        if (rc <= 0)
            return rc;
    }
}

/* ---- set-up and tear-down ---- */

/* Allocate, touch and register a buffer: host memory, or with dev GPU
 * memory registered as FI_HMEM_CUDA (the provider or NIC reads and writes it
 * itself: GPUDirect RDMA where the NIC and driver have it). */
static int reg(struct tp_ep *ep, struct mem *m, size_t bytes, uint64_t access, bool dev,
               tp_error *err)
{
    int rc;
    m->dev = dev;
    if (dev) {
        if ((rc = tp_gpu_alloc(ep->gpu, bytes, &m->buf, err)) ||
            (rc = tp_gpu_memset(ep->gpu, m->buf, 0, bytes, err)))
            return rc;
    } else if (posix_memalign(&m->buf, 4096, bytes) != 0) {
        m->buf = NULL;
        return tp_error_set(err, TP_ENOMEM, "cannot allocate %zu bytes for %s", bytes, ep->f.prov);
    } else {
        memset(m->buf, 0, bytes); /* touch every page before registration and timing */
    }
    m->bytes = bytes;
    return tp__ofi_mr_reg(&ep->f, m->buf, bytes, access, dev ? ep->gpu : NULL, &m->mr, &m->desc,
                          err);
}

/* fi_close never waits for the peer, so this is safe after it died. The
 * endpoint goes first (as fabtests do), so nothing in flight still refers to
 * a memory region or queue being closed. */
static void ofi_close(struct tp_ep *ep)
{
    if (!ep)
        return;
    TP_OFI_CLOSE(ep->f.ep);
    TP_OFI_CLOSE(ep->tx.mr);
    TP_OFI_CLOSE(ep->rx.mr);
    TP_OFI_CLOSE(ep->ctrl.mr);
    tp__ofi_close(&ep->f);
    struct mem *ms[3] = {&ep->tx, &ep->rx, &ep->ctrl};
    for (int i = 0; i < 3; i++) {
        if (ms[i]->dev)
            tp_gpu_free(ep->gpu, ms[i]->buf);
        else
            free(ms[i]->buf);
    }
    free(ep->tx_ops);
    free(ep->rx_ops);
    free(ep->addr);
    free(ep);
}

static int select_info(struct tp_ep *ep, const struct tp_ep_config *cfg, tp_error *err)
{
    const char *node =
        cfg->local_ip && cfg->local_ip[0] && tp__ofi_takes_ip(cfg->provider) ? cfg->local_ip : NULL;
    int rc = -FI_ENODATA;
    /* GPU memory on the wire where the provider takes it, else (rc still
     * set) host buffers the caller stages through */
    if (cfg->gpu && !tp_gpu_emulated(cfg->gpu) &&
        (rc = tp__ofi_get_info(cfg->provider, node, ep->rma, true, &ep->f.info)) == 0)
        ep->hmem = true;
    if (rc)
        rc = tp__ofi_get_info(cfg->provider, node, ep->rma, false, &ep->f.info);
    if (rc && ep->rma) {
        struct fi_info *plain = NULL;
        if (tp__ofi_get_info(cfg->provider, node, false, false, &plain) == 0) {
            fi_freeinfo(plain);
            return tp_error_set(err, TP_EUNSUP,
                                "libfabric provider '%s' offers no RMA writes (FI_RMA with "
                                "FI_REMOTE_WRITE) for RDM endpoints; use message mode",
                                cfg->provider);
        }
    }
    if (rc)
        return tp__ofi_unknown_provider(cfg->provider, node, rc, err);
    struct fi_info *fi = ep->f.info;
    snprintf(ep->f.prov, sizeof ep->f.prov, "%s", fi->fabric_attr->prov_name);
    if (fi->ep_attr->max_msg_size < cfg->max_msg_bytes)
        return tp_error_set(err, TP_EUNSUP, "%zu-byte messages exceed provider %s's limit of %zu",
                            cfg->max_msg_bytes, ep->f.prov, fi->ep_attr->max_msg_size);
    if (ep->rma) {
        size_t bytes = fi->domain_attr->cq_data_size;
        if (bytes == 0)
            return tp_error_set(err, TP_EUNSUP,
                                "provider %s carries no remote CQ data with RMA "
                                "writes, which RMA mode needs",
                                ep->f.prov);
        ep->data_mask = bytes >= 8 ? UINT64_MAX : (UINT64_C(1) << (8 * bytes)) - 1;
        if (cfg->window - 1 > ep->data_mask)
            return tp_error_set(err, TP_EUNSUP,
                                "window %u exceeds what provider %s's %zu-byte "
                                "remote CQ data can count",
                                cfg->window, ep->f.prov, bytes);
    }
    ep->f.mr_mode = fi->domain_attr->mr_mode;
    ep->rx_cq_data = (fi->mode & FI_RX_CQ_DATA) != 0;
    /* no inject from GPU memory: the provider would have to copy it out */
    ep->inject = ep->hmem ? 0 : fi->tx_attr->inject_size;
    return 0;
}

static int open_fids(struct tp_ep *ep, tp_error *err)
{
    struct fi_cq_attr cq_attr = {
        .format = FI_CQ_FORMAT_DATA, .wait_obj = FI_WAIT_NONE, .size = 2 * (size_t)ep->window + 16};
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE, .count = 4};
    return tp__ofi_open(&ep->f, &cq_attr, &av_attr, err);
}

static int make_address(struct tp_ep *ep, tp_error *err)
{
    size_t cap = 2 * TP__OFI_NAME_MAX + 96, hexlen;
    if (!(ep->addr = malloc(cap)))
        return tp_error_set(err, TP_ENOMEM, "out of memory for the %s address", ep->f.prov);
    int rc = tp__ofi_name_hex(&ep->f, ep->addr, cap, &hexlen, err);
    if (rc == 0 && ep->rma) {
        uint64_t base = ep->f.mr_mode & FI_MR_VIRT_ADDR ? (uint64_t)(uintptr_t)ep->rx.buf : 0;
        snprintf(ep->addr + hexlen, cap - hexlen, "|%llx|%llx|%zx|%x", (unsigned long long)base,
                 (unsigned long long)fi_mr_key(ep->rx.mr), ep->stride, ep->nslots);
    }
    return rc;
}

static int ofi_open(const struct tp_ep_config *cfg, struct tp_ep **out, tp_error *err)
{
    if (!cfg->provider || !cfg->provider[0])
        return tp_error_set(err, TP_EUSAGE, "the ofi transport needs a libfabric provider");
    if (cfg->max_msg_bytes < 1 || cfg->window < 1)
        return tp_error_set(err, TP_EUSAGE,
                            "ofi endpoint needs max_msg_bytes >= 1 and window >= 1");
    tp_clock_init();
    struct tp_ep *ep = calloc(1, sizeof *ep);
    if (!ep)
        return tp_error_set(err, TP_ENOMEM, "out of memory opening an ofi endpoint");
    snprintf(ep->peer, sizeof ep->peer, "%s", cfg->peer_name ? cfg->peer_name : "(peer)");
    snprintf(ep->f.prov, sizeof ep->f.prov, "%s", cfg->provider);
    ep->rma = cfg->mode == TP_XFER_RMA;
    ep->check = cfg->check;
    ep->gpu = cfg->gpu;
    ep->window = cfg->window;
    ep->nslots = cfg->check ? cfg->window : 1;
    ep->max_msg = cfg->max_msg_bytes;
    ep->f.next_key = 1;
    size_t slot = cfg->max_msg_bytes > CTRL_BYTES ? cfg->max_msg_bytes : CTRL_BYTES;
    ep->stride = (slot + 63) & ~(size_t)63;
    ep->credit_tx.kind = OP_CREDIT_TX;
    int rc = select_info(ep, cfg, err);
    if (!rc)
        rc = open_fids(ep, err);
    if (!rc && (!(ep->tx_ops = calloc(ep->window, sizeof *ep->tx_ops)) ||
                !(ep->rx_ops = calloc(ep->window, sizeof *ep->rx_ops))))
        rc = tp_error_set(err, TP_ENOMEM, "out of memory for %u-deep window", ep->window);
    uint64_t rma_tx = ep->rma ? FI_WRITE : 0, rma_rx = ep->rma ? FI_REMOTE_WRITE : 0;
    if (!rc)
        rc = reg(ep, &ep->tx, ep->max_msg, FI_SEND | rma_tx, ep->hmem, err);
    if (!rc)
        rc = reg(ep, &ep->rx, ep->stride * ep->nslots, FI_RECV | rma_rx, ep->hmem, err);
    if (!rc)
        rc = reg(ep, &ep->ctrl, 2 * CTRL_BYTES, FI_SEND | FI_RECV, false, err);
    if (!rc)
        rc = make_address(ep, err);
    if (rc) {
        ofi_close(ep);
        return rc;
    }
    for (unsigned i = 0; i < ep->window; i++) {
        ep->tx_ops[i].kind = OP_TX;
        ep->rx_ops[i].kind = OP_RX;
    }
    ep->credit_rx.kind = OP_RX;
    *out = ep;
    return 0;
}

static const char *ofi_address(struct tp_ep *ep)
{
    return ep->addr;
}

static int parse_rma(struct tp_ep *ep, const char *s, tp_error *err)
{
    unsigned long long base, key;
    size_t stride;
    unsigned slots;
    char tail;
    if (!s || sscanf(s, "|%llx|%llx|%zx|%x%c", &base, &key, &stride, &slots, &tail) != 4)
        return tp_error_set(err, TP_EPROTO,
                            "address from peer %s lacks the RMA fields (is it in RMA mode?)",
                            ep->peer);
    if (slots != 1 && slots != ep->window)
        return tp_error_set(err, TP_EUSAGE,
                            "peer %s keeps %u rx slots but this end's window is "
                            "%u; both ends need the same window",
                            ep->peer, slots, ep->window);
    if (stride < ep->max_msg)
        return tp_error_set(err, TP_EUSAGE,
                            "peer %s accepts %zu-byte writes, this end sends up "
                            "to %zu; use the same message size",
                            ep->peer, stride, ep->max_msg);
    ep->peer_rx_addr = base;
    ep->peer_rx_key = key;
    ep->peer_stride = stride;
    ep->peer_slots = slots;
    return 0;
}

static int ofi_connect(struct tp_ep *ep, const char *peer_addr, uint64_t timeout_ns, tp_error *err)
{
    if (ep->connected)
        return tp_error_set(err, TP_EUSAGE, "%s endpoint for %s is already connected", ep->f.prov,
                            ep->peer);
    size_t hexlen = peer_addr ? strcspn(peer_addr, "|") : 0;
    unsigned char name[TP__OFI_NAME_MAX];
    if (tp__ofi_unhex(peer_addr, hexlen, name) < 0)
        return tp_error_set(err, TP_EPROTO, "bad %s address '%s' from peer %s", ep->f.prov,
                            peer_addr ? peer_addr : "", ep->peer);
    if (ep->rma) {
        int rc = parse_rma(ep, peer_addr + hexlen, err);
        if (rc)
            return rc;
    }
    int n = fi_av_insert(ep->f.av, name, 1, &ep->peer_fa, 0, NULL);
    if (n != 1)
        return tp_error_set(err, TP_EPEER, "fi_av_insert of peer %s's %s address: %s", ep->peer,
                            ep->f.prov, n < 0 ? fi_strerror(-n) : "rejected");
    ep->connected = true;
    /* ready for the first ping before the peer can send it */
    struct waiter w = waiter(timeout_ns, NULL, "connecting to");
    int rc = post_ahead(ep, &w, err);
    return rc < 0 ? rc : 0;
}

static void *ofi_tx_buf(struct tp_ep *ep)
{
    return ep->tx.buf;
}

static int check_ready(struct tp_ep *ep, size_t len, tp_error *err)
{
    if (!ep->connected)
        return tp_error_set(err, TP_EUSAGE, "%s endpoint for %s is not connected", ep->f.prov,
                            ep->peer);
    if (ep->broken)
        return tp_error_set(err, TP_EPROTO,
                            "%s endpoint for %s was left mid-stream; open a new one", ep->f.prov,
                            ep->peer);
    if (len < 1 || len > ep->max_msg)
        return tp_error_set(err, TP_EUSAGE, "message of %zu bytes outside 1..%zu", len,
                            ep->max_msg);
    return 0;
}

static int ofi_send(struct tp_ep *ep, size_t len, uint64_t timeout_ns, tp_error *err)
{
    int rc = check_ready(ep, len, err);
    if (rc)
        return rc;
    struct waiter w = waiter(timeout_ns, NULL, "sending to");
    struct op *o = len <= ep->inject ? NULL : &ep->tx_ops[0];
    if (o && (rc = wait_idle(ep, o, &w, err)) < 0)
        return rc;
    if ((rc = post_send(ep, o, len, 0, &w, err)) < 0)
        return rc;
    /* the last recv's data is released now: re-post while the message flies */
    if ((rc = post_ahead(ep, &w, err)) < 0)
        return rc;
    if (o && (rc = wait_idle(ep, o, &w, err)) < 0)
        return rc;
    return 0;
}

static int ofi_recv(struct tp_ep *ep, size_t len, const void **data, uint64_t timeout_ns,
                    tp_error *err)
{
    int rc = check_ready(ep, len, err);
    if (rc)
        return rc;
    struct waiter w = waiter(timeout_ns, NULL, "receiving from");
    if ((rc = post_ahead(ep, &w, err)) < 0 || (rc = wait_arrived(ep, &ep->rx_ops[0], &w, err)) < 0)
        return rc;
    ep->rx_ahead = false;
    ep->rx_ops[0].arrived = false;
    if (!ep->rma && ep->rx_ops[0].len != len)
        return tp_error_set(err, TP_EPROTO, "peer %s sent %zu bytes, expected %zu", ep->peer,
                            ep->rx_ops[0].len, len);
    *data = slot_buf(ep, 0);
    return 0;
}

/* After a stop or a failure midway operations may still be posted. */
static int stream_end(struct tp_ep *ep, int rc)
{
    if (rc <= 0)
        ep->broken = true;
    return rc < 0 ? rc : 0;
}

static int ofi_send_stream(struct tp_ep *ep, size_t len, uint64_t count,
                           const struct tp_stream_ctl *ctl, tp_error *err)
{
    int rc = check_ready(ep, len, err);
    if (rc)
        return rc;
    set_done(ctl, 0);
    struct waiter w = waiter(ctl->timeout_ns, ctl, "sending to");
    uint64_t base = ep->tx_done;
    bool inject = len <= ep->inject;
    for (uint64_t first = 0; first < count; first += ep->window) {
        uint64_t n = count - first < ep->window ? count - first : ep->window;
        /* the credit receive goes up before the window, so the credit is
         * never unexpected; the receive posted ahead for ping-pong serves */
        struct op *credit = &ep->rx_ops[0];
        if (ep->rx_ahead) {
            ep->rx_ahead = false;
        } else {
            credit = &ep->credit_rx;
            rc = post_recv(ep, credit, (char *)ep->ctrl.buf + CTRL_BYTES, CTRL_BYTES, ep->ctrl.desc,
                           &w, err);
            if (rc <= 0)
                return stream_end(ep, rc);
        }
        for (unsigned s = 0; s < n; s++) {
            struct op *o = inject ? NULL : &ep->tx_ops[s];
            if (ctl->before_send &&
                (rc = ctl->before_send(ctl->arg, ep->tx.buf, len, first + s)) != 0)
                return stream_end(ep, rc < 0 ? rc : TP_EPROTO);
            if ((o && (rc = wait_idle(ep, o, &w, err)) <= 0) ||
                (rc = post_send(ep, o, len, s, &w, err)) <= 0)
                return stream_end(ep, rc);
            set_done(ctl, ep->tx_done - base);
        }
        while (!credit->arrived) {
            if ((rc = spin(ep, &w, err)) <= 0)
                return stream_end(ep, rc);
            set_done(ctl, ep->tx_done - base);
        }
        credit->arrived = false;
        uint64_t granted = 0;
        memcpy(&granted, credit->buf, sizeof granted);
        if (credit->len != CREDIT_BYTES || granted != first + n)
            return stream_end(ep, tp_error_set(err, TP_EPROTO,
                                               "peer %s granted credit for %llu messages, "
                                               "expected %llu (same window on both ends?)",
                                               ep->peer, (unsigned long long)granted,
                                               (unsigned long long)(first + n)));
    }
    while (ep->tx_busy)
        if ((rc = spin(ep, &w, err)) <= 0)
            return stream_end(ep, rc);
    set_done(ctl, count);
    return 0;
}

static int ofi_recv_stream(struct tp_ep *ep, size_t len, uint64_t count,
                           const struct tp_stream_ctl *ctl, tp_error *err)
{
    int rc = check_ready(ep, len, err);
    if (rc)
        return rc;
    set_done(ctl, 0);
    if (count == 0)
        return 0;
    struct waiter w = waiter(ctl->timeout_ns, ctl, "receiving from");
    unsigned W = ep->window;
    if (needs_rx_post(ep)) {
        unsigned first = ep->rx_ahead ? 1 : 0; /* slot 0 may already be posted */
        ep->rx_ahead = false;
        for (unsigned s = first; s < W && s < count; s++)
            if ((rc = post_slot(ep, s, &w, err)) <= 0)
                return stream_end(ep, rc);
    }
    for (uint64_t next = 0; next < count; next++) {
        unsigned s = (unsigned)(next % W);
        struct op *o = &ep->rx_ops[s];
        if ((rc = wait_arrived(ep, o, &w, err)) <= 0)
            return stream_end(ep, rc);
        o->arrived = false;
        if (!ep->rma && o->len != len)
            return stream_end(ep, tp_error_set(err, TP_EPROTO,
                                               "peer %s sent %zu bytes as message %llu, "
                                               "expected %zu",
                                               ep->peer, o->len, (unsigned long long)next, len));
        if (ctl->on_msg && (rc = ctl->on_msg(ctl->arg, slot_buf(ep, s), len, next)) != 0) {
            ep->broken = true;
            return rc;
        }
        set_done(ctl, next + 1);
        /* the slot's next message cannot come before the credit below */
        if (needs_rx_post(ep) && next + W < count && (rc = post_slot(ep, s, &w, err)) <= 0)
            return stream_end(ep, rc);
        if (((next + 1) % W == 0 || next + 1 == count) &&
            (rc = send_credit(ep, next + 1, &w, err)) <= 0)
            return stream_end(ep, rc);
    }
    if ((rc = wait_idle(ep, &ep->credit_tx, &w, err)) <= 0)
        return stream_end(ep, rc);
    return 0;
}

static void ofi_info(struct tp_ep *ep, struct tp_ep_info *out)
{
    memset(out, 0, sizeof *out);
    struct fi_info *fi = ep->f.info;
    snprintf(out->transport, sizeof out->transport, "ofi");
    snprintf(out->provider, sizeof out->provider, "%s", fi->fabric_attr->prov_name);
    snprintf(out->fabric, sizeof out->fabric, "%s",
             fi->fabric_attr->name ? fi->fabric_attr->name : "");
    snprintf(out->domain, sizeof out->domain, "%s",
             fi->domain_attr->name ? fi->domain_attr->name : "");
    tp__ofi_api_version(out->api_version, sizeof out->api_version);
    snprintf(out->runtime, sizeof out->runtime, "%s", tp_ofi_version());
    out->mr_mode = (unsigned long long)ep->f.mr_mode;
    out->rma = ep->rma;
    out->max_msg_bytes = fi->ep_attr->max_msg_size;
    out->hmem = ep->hmem;
}

const struct tp_transport_ops tp_ofi_ops = {
    .name = "ofi",
    .what = "libfabric",
    .needs_provider = true,
    .provider_hint = "as fi_info -l prints: shm, 'tcp;ofi_rxm', 'verbs;ofi_rxm', efa, ...",
    .rma = true,
    .provider_check = tp_ofi_provider_check,
    .hmem_offered = tp_ofi_hmem_offered,
    .mem_staged = "staged through host memory: the provider offers no FI_HMEM here",
    .chan = &tp__chan_ofi,
    .default_provider = "tcp;ofi_rxm",
    .open = ofi_open,
    .address = ofi_address,
    .connect = ofi_connect,
    .tx_buf = ofi_tx_buf,
    .send = ofi_send,
    .recv = ofi_recv,
    .send_stream = ofi_send_stream,
    .recv_stream = ofi_recv_stream,
    .info = ofi_info,
    .close = ofi_close,
};
