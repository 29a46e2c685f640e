/* Transports: one struct tp_transport_ops table per data path (kernel TCP,
 * libfabric). An endpoint carries fixed-size messages to one peer. It owns its
 * buffers (registered with the NIC where the fabric needs that), so the
 * measuring code fills tx_buf() and never touches registration.
 *
 * Connection set-up runs over the control channel, which lives above this
 * layer: each side open()s an endpoint, the two exchange address() strings
 * over the control channel, then each side connect()s to the other's string.
 * The listening side (the server) calls connect() after it has received the
 * initiator's address; for TCP that is the accept().
 *
 * Every blocking call takes an idle timeout: no progress for timeout_ns is an
 * error (TP_ETIMEOUT) that names the peer. A dead peer is an error, never a
 * hang. After an error, or a stream ended early by its stop flag, an endpoint
 * may refuse further data calls (TP_EPROTO): close it and open a new one. */
#ifndef TP_TRANSPORT_H
#define TP_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tp/error.h"

struct tp_gpu;

enum tp_xfer_mode {
    TP_XFER_MSG, /* two-sided send/receive */
    TP_XFER_RMA, /* one-sided RMA write carrying remote CQ data; the target is
                    told of each write by that completion */
};

struct tp_ep_config {
    const char *provider;  /* ofi: provider as fi_info prints it ("shm",
                              "tcp;ofi_rxm", "verbs;ofi_rxm", "efa"); NULL: tcp */
    const char *local_ip;  /* numeric IP of the local end of the control
                              connection; data endpoints bind/listen there */
    const char *peer_name; /* how errors name the peer, e.g. "10.0.0.2:7471" */
    bool initiator;        /* true on the client (connects), false on the server */
    size_t max_msg_bytes;  /* largest message this endpoint will carry (>= 1) */
    unsigned window;       /* messages in flight in send_stream (>= 1) */
    enum tp_xfer_mode mode;
    bool busy_poll; /* tcp: SO_BUSY_POLL and spinning reads; ofi spins always */
    bool check;     /* the receiver keeps one buffer per window slot so
                       on_msg sees every payload before it is reused */
    struct tp_gpu *gpu; /* --mem cuda (tp/gpu.h): ofi asks the provider for
                           FI_HMEM and, where it is offered, puts tx_buf and
                           the receive buffers in this GPU's memory (the NIC
                           or the provider moves them: GPUDirect where the
                           hardware has it); tcp ignores it (the caller
                           stages through host memory). NULL: host memory */
};

/* Facts about an open endpoint, for the result document's provenance. */
struct tp_ep_info {
    char transport[16];         /* "tcp" or "ofi" */
    char provider[64];          /* ofi: fi_info's provider name (e.g. "tcp;ofi_rxm") */
    char fabric[128];           /* ofi: fabric name */
    char domain[128];           /* ofi: domain name (often the NIC) */
    char api_version[32];       /* ofi: "1.17" of the library actually loaded */
    char runtime[32];           /* ofi: libfabric's package version ("1.17.0"); "" for tcp */
    unsigned long long mr_mode; /* ofi: FI_MR_* bits in force */
    bool rma;                   /* RMA writes with remote CQ data are available */
    size_t max_msg_bytes;       /* largest message the provider allows */
    bool hmem;                  /* tx_buf and received data are GPU memory (FI_HMEM) */
};

/* A connection's own view of its path, read after a test (kernel TCP:
 * TCP_INFO): what the kernel counted for this socket alone, over its
 * life. Fields the kernel does not give stay 0. */
struct tp_ep_stats {
    bool have;                  /* the transport gave any */
    uint64_t total_retrans;     /* segments retransmitted */
    uint64_t bytes_retrans;     /* bytes retransmitted */
    uint64_t lost;              /* segments thought lost at the moment */
    uint64_t rtt_us, rttvar_us; /* smoothed RTT and its variation */
    uint64_t delivery_rate_Bps; /* the latest delivery rate sample, bytes/s */
    uint64_t reordering;        /* the reordering degree the kernel saw */
    uint64_t rcv_ooopack;       /* out-of-order packets received */
};

/* Called for each received message in recv_stream: data points at the payload
 * (valid until the callback returns), index counts from 0. A non-zero return
 * stops the stream and recv_stream returns that value (use a TP_E* code and
 * fill the error through arg). */
typedef int (*tp_msg_fn)(void *arg, const void *data, size_t len, uint64_t index);

struct tp_stream_ctl {
    uint64_t timeout_ns;      /* no progress for this long: TP_ETIMEOUT */
    const volatile int *stop; /* optional: non-zero stops the stream early; the
                                 call then returns 0 with *done set */
    tp_msg_fn on_msg;         /* optional, receiver only */
    tp_msg_fn before_send;    /* optional, sender only: called with tx_buf before
                                 each message is handed over (staging from the
                                 GPU); may run while earlier messages from the
                                 same buffer are still in flight */
    void *arg;
    uint64_t *done; /* optional: messages completed so far, updated as
                       the stream runs (read by other threads) */
};

struct tp_ep;
struct tp_chan_kind;

struct tp_transport_ops {
    const char *name; /* "tcp", "ofi" */
    const char *what; /* how messages call it: "kernel TCP", "libfabric" */

    /* What callers ask of a transport instead of comparing its name. */
    bool needs_provider;       /* an endpoint needs a provider named (net --provider) */
    const char *provider_hint; /* where to find one, for the message that asks */
    bool rma;                  /* TP_XFER_RMA is available */
    /* Can provider open this transport's endpoints here? 0, or TP_EUSAGE
     * naming it and the ones there are. NULL: it takes no provider. */
    int (*provider_check)(const char *provider, tp_error *err);
    /* Does provider move GPU memory itself (FI_HMEM)? NULL: never. */
    bool (*hmem_offered)(const char *provider);
    const char *mem_staged; /* provenance's mem_path when GPU memory is
                               staged through host memory, and why */

    /* The collectives' channel over this transport (include/tp/chan.h), and
     * the provider it takes when none is named (NULL: it takes none). */
    const struct tp_chan_kind *chan;
    const char *default_provider;

    /* Open an endpoint as cfg says. On error *out is untouched, err names the
     * provider or address at fault (TP_EUSAGE for an unknown provider,
     * TP_EUNSUP for a missing capability such as RMA). */
    int (*open)(const struct tp_ep_config *cfg, struct tp_ep **out, tp_error *err);

    /* Printable address the peer passes to connect(); valid until close. */
    const char *(*address)(struct tp_ep *ep);

    /* Join the peer whose address() string is peer_addr. */
    int (*connect)(struct tp_ep *ep, const char *peer_addr, uint64_t timeout_ns, tp_error *err);

    /* The send buffer (max_msg_bytes, registered, touched). */
    void *(*tx_buf)(struct tp_ep *ep);

    /* Send len bytes from tx_buf; returns when the buffer may be reused. */
    int (*send)(struct tp_ep *ep, size_t len, uint64_t timeout_ns, tp_error *err);

    /* Receive one message of exactly len bytes; *data points at it until the
     * next call on ep. */
    int (*recv)(struct tp_ep *ep, size_t len, const void **data, uint64_t timeout_ns,
                tp_error *err);

    /* Send count messages of len bytes from tx_buf, keeping up to window in
     * flight (the transport's own flow control decides for TCP). Returns once
     * all are complete locally and the receiver has granted every credit. */
    int (*send_stream)(struct tp_ep *ep, size_t len, uint64_t count,
                       const struct tp_stream_ctl *ctl, tp_error *err);

    /* Receive count messages of len bytes sent by send_stream, calling
     * ctl->on_msg for each. */
    int (*recv_stream)(struct tp_ep *ep, size_t len, uint64_t count,
                       const struct tp_stream_ctl *ctl, tp_error *err);

    /* Facts for provenance. */
    void (*info)(struct tp_ep *ep, struct tp_ep_info *out);

    /* The connection's own counters (struct tp_ep_stats); NULL where the
     * transport has none. */
    void (*stats)(struct tp_ep *ep, struct tp_ep_stats *out);

    /* Release everything; ep may be NULL. */
    void (*close)(struct tp_ep *ep);
};

/* The transport named name ("tcp" or "ofi"), or NULL. */
const struct tp_transport_ops *tp_transport_find(const char *name);

/* All transports, NULL-terminated, for --help and validation. */
extern const struct tp_transport_ops *const tp_transports[];

/* The transport used when none is named: the first that needs no provider
 * (tcp), or with have_provider the first that needs one (ofi). */
const struct tp_transport_ops *tp_transport_default(bool have_provider);

/* The names of the transports joined by ", ", the last two by last_sep
 * ("tcp or ofi" for " or "), into buf; returns buf. */
const char *tp_transport_names(const char *last_sep, char *buf, size_t cap);

/* --transport NAME for the collectives (coll, step): the transport, the
 * default for NULL; NULL with TP_EUSAGE "--transport NAME: tcp or ofi" when
 * there is no such transport or it has no collectives' channel. */
const struct tp_transport_ops *tp_transport_parse(const char *name, tp_error *err);

/* The options of a point-to-point test (net) that depend on the transport:
 * it exists, it has a provider when it needs one and none when it takes
 * none, and RMA only where it has RMA. Does not probe the provider (see
 * tp_transport_provider_check). Returns 0, or TP_EUSAGE with err saying
 * which option is wrong and what to use instead. */
int tp_transport_check(const char *transport, const char *provider, bool rma, tp_error *err);

/* t->provider_check for provider: 0 for a transport that takes none. */
int tp_transport_provider_check(const struct tp_transport_ops *t, const char *provider,
                                tp_error *err);

/* t->hmem_offered for provider: false for a transport without the probe. */
bool tp_transport_hmem_offered(const struct tp_transport_ops *t, const char *provider);

/* How output names t and its provider: "tcp", or "ofi tcp;ofi_rxm" for a
 * transport that takes one (provider NULL or "": its default), into buf;
 * returns buf. */
const char *tp_transport_label(const struct tp_transport_ops *t, const char *provider, char *buf,
                               size_t cap);

/* libfabric's runtime version as "1.17.0" (empty string if unavailable). */
const char *tp_ofi_version(void);

/* Check that provider can open an RDM endpoint on this host; TP_EUSAGE
 * naming the provider and listing the available ones when it cannot. */
int tp_ofi_provider_check(const char *provider, tp_error *err);

/* Whether provider offers FI_HMEM (device memory registered and moved by
 * the provider) for RDM endpoints on this host: what decides between the
 * GPU's own memory on the wire and staging through host memory. */
bool tp_ofi_hmem_offered(const char *provider);

#endif
