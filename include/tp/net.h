/* trainpath net: point-to-point latency, jitter and bandwidth between two
 * hosts. A server (tp_net_serve) waits for clients; a client (tp_net_run)
 * connects to it over an authenticated TCP control channel, negotiates one
 * test, and drives it over the chosen data path (kernel TCP or libfabric).
 * Conventions as perftest, sockperf and OSU: latency is one-way = RTT/2 (RTT
 * kept too); bandwidth in bytes/s; see docs/metrics.md. */
#ifndef TP_NET_H
#define TP_NET_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tp/error.h"

enum tp_net_test { TP_NET_LAT, TP_NET_BW, TP_NET_BIBW, TP_NET_LOADED };

struct tp_net_server_opts {
    const char *bind;         /* address to listen on; "0.0.0.0" by default */
    int port;                 /* 0 picks a free port (logged) */
    const char *key_file;     /* pre-shared key; NULL: none */
    bool insecure;            /* allow a non-loopback bind without a key */
    bool one_off;             /* exit after one test (iperf3 -1) */
    uint64_t timeout_ns;      /* per blocking step */
    const volatile int *stop; /* set (by a signal handler) to shut down */
};

/* A server opens its GPU (device 0) the first time a client asks for
 * --mem cuda, and keeps it; a server without one refuses such a request
 * (TP_EUSAGE, the client reports it). */

/* Serve tests until *stop is set (or after one test with one_off). Refuses
 * (TP_EUSAGE) to listen on a non-loopback address without a key unless
 * insecure. Per-client failures are logged and do not end the server. */
int tp_net_serve(const struct tp_net_server_opts *o, tp_error *err);

struct tp_net_client_opts {
    enum tp_net_test test;
    const char *host;
    int port;
    const char *transport; /* "tcp" or "ofi" */
    const char *provider;  /* ofi provider, e.g. "tcp;ofi_rxm" */
    bool rma;              /* ofi: one-sided writes with remote CQ data */
    const uint64_t *sizes; /* message sizes, ascending */
    size_t nsizes;
    uint64_t iters;       /* measured iterations per size; 0: bound by duration */
    uint64_t duration_ns; /* per size when iters is 0 */
    uint64_t warmup;      /* warm-up iterations; 0: adaptive, warmup_ns long */
    uint64_t warmup_ns;
    unsigned window;    /* messages in flight for bw/bibw/loaded streams */
    unsigned streams;   /* loaded: background streams */
    uint64_t load_size; /* loaded: background message size */
    bool check;         /* verify every payload byte */
    bool busy_poll;
    const char *key_file;
    uint64_t timeout_ns;
    bool mem_cuda; /* both ends' buffers in GPU memory (perftest's --use_cuda) */
    int gpu;       /* the client's device index (-1: 0) */
    bool progress_line; /* sizes done and time left on stderr (tp/progress.h) */
};

/* The effective configuration as the result document's "config". */
json_t *tp_net_config_json(const struct tp_net_client_opts *o);

/* Run the test. Fills doc's "results" with what was measured (also what was
 * measured before a failure) and adds the data path and the server's host
 * to its "provenance". Returns 0 or a TP_E* code with err naming the peer or
 * input at fault. */
int tp_net_run(const struct tp_net_client_opts *o, json_t *doc, tp_error *err);

/* Print the results of a net document as a table. */
void tp_net_print(FILE *f, const json_t *doc);

/* ---- the frame bodies a server reads (src/net/frames.c) ----
 * What a client may ask for, checked before the server touches a transport
 * or allocates anything: every field's type and range, and the buffers the
 * request would make the server pin. The server then looks the transport
 * and provider up, opens the endpoints and runs the flows. Public so that
 * fuzz/fuzz_frames.c can feed them bodies; nothing else above net/ needs
 * them. Each error is TP_EPROTO (TP_EUSAGE where the client's options were
 * the cause) with a message that names the peer (c->peer) and the field. */

#define TP_NET_MAX_FLOWS 65
#define TP_NET_MAX_MSG (1ull << 30)
#define TP_NET_MAX_WINDOW 4096
#define TP_NET_MAX_TIMEOUT_MS 3600000ull
#define TP_NET_MAX_BUFFER_BYTES (16ull << 30) /* all data buffers of one test */
#define TP_NET_MAX_ADDRESS 4096               /* bytes of a data-path address */

struct tp_conn;

enum tp_net_flow { TP_NET_FLOW_PINGPONG, TP_NET_FLOW_C2S, TP_NET_FLOW_S2C };

/* REQUEST: the test and its data path. Strings are borrowed from the body. */
struct tp_net_request {
    const char *transport; /* at most 16 bytes; not yet looked up */
    const char *provider;  /* at most 64 bytes; NULL when absent */
    bool rma;              /* mode "rma"; else "msg" */
    bool cuda;             /* mem "cuda"; else "host" (or absent) */
    uint64_t max_msg;      /* 1..TP_NET_MAX_MSG */
    uint64_t window;       /* 1..TP_NET_MAX_WINDOW */
    uint64_t timeout_ms;   /* 1..TP_NET_MAX_TIMEOUT_MS */
    bool busy_poll, check;
    size_t nflows; /* 1..TP_NET_MAX_FLOWS */
    enum tp_net_flow kind[TP_NET_MAX_FLOWS];
    uint64_t buffer_bytes; /* what the endpoints would pin: at most TP_NET_MAX_BUFFER_BYTES */
};

/* Read a REQUEST body into *out. TP_EUSAGE when the buffers it needs
 * (message size x window with check, x flows) exceed
 * TP_NET_MAX_BUFFER_BYTES; TP_EPROTO for anything else out of shape. */
int tp_net_parse_request(struct tp_conn *c, const json_t *body, struct tp_net_request *out,
                         tp_error *err);

/* CONNECT: the client's data-path addresses, one per flow of the session
 * (nflows), each a string of at most TP_NET_MAX_ADDRESS bytes without NUL,
 * borrowed from the body into addr[0..nflows). */
int tp_net_parse_connect(struct tp_conn *c, const json_t *body, size_t nflows, const char **addr,
                         tp_error *err);

/* RUN: one phase over some of the session's nflows flows. */
struct tp_net_run_req {
    size_t n;                      /* 1..nflows */
    size_t flow[TP_NET_MAX_FLOWS]; /* distinct indices, each < nflows */
    uint64_t size;                 /* 1..max_msg */
    uint64_t count;                /* 0 (in the background until STOP) .. 2^62 - 1 */
};

/* Read a RUN body against a session of nflows flows (1..TP_NET_MAX_FLOWS)
 * and messages of at most max_msg bytes. A flow named twice is refused: its
 * endpoint would get two threads. */
int tp_net_parse_run(struct tp_conn *c, const json_t *body, size_t nflows, uint64_t max_msg,
                     struct tp_net_run_req *out, tp_error *err);

#endif
