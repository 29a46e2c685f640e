/* Flows: one data-path endpoint pair and the roles its two ends play in a
 * phase (ping-pong, or one direction of a stream). Shared by the server and
 * the client so both ends of every role live side by side. Internal to net/. */
#ifndef TP_NET_INT_H
#define TP_NET_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "tp/error.h"
#include "tp/gpu.h"
#include "tp/hist.h"
#include "tp/net.h"
#include "tp/transport.h"

/* the kinds a REQUEST names (tp_net_parse_request), as the same values */
enum flow_kind {
    FLOW_PINGPONG = TP_NET_FLOW_PINGPONG,
    FLOW_C2S = TP_NET_FLOW_C2S,
    FLOW_S2C = TP_NET_FLOW_S2C
};

enum flow_role {
    ROLE_PING, /* client side of a ping-pong: times round trips */
    ROLE_PONG, /* server side: echoes */
    ROLE_SEND, /* stream sender */
    ROLE_RECV, /* stream receiver */
};

#define FLOW_INTERVAL_NS 100000000ull /* receive-rate sampling interval: 100 ms */

struct rx_stats {
    uint64_t msgs, bytes;
    uint64_t first_ns, last_ns; /* arrival of first and last message */
    uint64_t *intervals;        /* bytes per FLOW_INTERVAL_NS since first_ns */
    size_t nintervals, cap;
};

struct flow_job {
    /* in */
    const struct tp_transport_ops *ops;
    struct tp_ep *ep;
    enum flow_role role;
    uint64_t size, count;
    bool check, corrupt; /* corrupt: fault injection, flip one sent byte */
    const volatile int *stop;
    uint64_t timeout_ns;
    tp_hist *rtt;     /* ROLE_PING: round trips recorded here (NULL: don't) */
    const char *peer; /* names the peer in errors */
    /* --mem cuda (NULL gpu: host memory). dev: the endpoint's buffers are GPU
     * memory (FI_HMEM), hbuf a host scratch of size bytes for the pattern
     * and its check. Otherwise staged: every message sent starts in dtx and
     * every message received ends in drx, both GPU memory, copied to and
     * from the endpoint's host buffers. */
    struct tp_gpu *gpu;
    bool dev;
    void *dtx, *drx, *hbuf;
    /* out */
    uint64_t start_ns, end_ns; /* ROLE_PING/SEND: first send to last completion */
    uint64_t done;             /* messages completed */
    struct rx_stats rx;        /* ROLE_RECV */
    int rc;
    tp_error err;
    pthread_t thread;
};

/* Run job on this thread; returns job->rc. */
int tp__net_flow_run(struct flow_job *job);

/* Start one thread per job. Returns 0, or TP_ESYS with *started threads
 * running. */
int tp__net_flow_start(struct flow_job *jobs, size_t n, size_t *started, tp_error *err);

/* Wait for n started jobs; returns the first failing job's code with its
 * error in err. A job that completes no message for its timeout plus a 2 s
 * grace is stuck inside a call that cannot be interrupted (libfabric's shm
 * provider spins on a lock that a killed peer held): the wait detaches it,
 * sets *abandoned and returns TP_ETIMEOUT naming the peer. The caller must
 * then leave the jobs and their endpoints alone (that thread may still touch
 * them) and end the run. */
int tp__net_flow_join(struct flow_job *jobs, size_t n, bool *abandoned, tp_error *err);

/* flow_start + flow_join. */
int tp__net_flow_run_all(struct flow_job *jobs, size_t n, bool *abandoned, tp_error *err);

/* Close n endpoints in a helper thread and wait up to 2 s: fi_close on a
 * shared-memory endpoint whose peer was killed holding a lock can spin
 * forever, and ending a run must not hang on it. A close that does not end
 * is left running (logged); the endpoints are then leaked. Returns false in
 * that case. */
bool tp__net_flow_close_eps(const struct tp_transport_ops *ops, struct tp_ep *const *eps, size_t n);

/* Peak receive rate in bytes/s over sliding windows of window_ns (a multiple
 * of FLOW_INTERVAL_NS); falls back to the mean when the run is shorter. */
double tp__net_rx_peak_Bps(const struct rx_stats *rx, uint64_t window_ns);

/* Free rx->intervals. */
void tp__net_rx_free(struct rx_stats *rx);

/* Seed of the payload pattern for a message size, the same on both ends. */
uint64_t tp__net_flow_seed(uint64_t size);

/* --mem cuda buffers of one flow (nothing when g is NULL): with dev a host
 * scratch (*hbuf), else where the messages start and end in GPU memory
 * (*dbuf: bytes for those sent, then bytes for those received). */
int tp__net_flow_mem_alloc(struct tp_gpu *g, bool dev, size_t bytes, void **dbuf, void **hbuf,
                           tp_error *err);
void tp__net_flow_mem_free(struct tp_gpu *g, void *dbuf, void *hbuf);

/* What the result says about the path the bytes took. Static string. */
const char *tp__net_flow_mem_path(const struct tp_gpu *g, bool dev,
                                  const struct tp_transport_ops *ops);

#endif

/* Limits the server enforces on what a client may ask for. */
#define NET_MAX_FLOWS TP_NET_MAX_FLOWS
#define NET_MAX_MSG TP_NET_MAX_MSG
#define NET_MAX_WINDOW TP_NET_MAX_WINDOW
#define NET_MAX_BUFFER_BYTES TP_NET_MAX_BUFFER_BYTES /* all data buffers of one test */

/* rusage of this process: user and system CPU seconds. */
void tp__net_cpu_seconds(double *user_s, double *sys_s);
