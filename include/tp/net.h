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

#endif
