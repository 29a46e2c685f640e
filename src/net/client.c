/* trainpath net client: negotiates a test with a server and drives its
 * phases. The client decides every iteration count and tells the server
 * before each phase (RUN), so both ends always agree on how many messages
 * move and no stop signal ever rides the data path. Duration-bound runs are
 * turned into counts from the warm-up, which doubles its count until it has
 * run warmup_ns and so also measures the time per iteration. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net_int.h"
#include "tp/clock.h"
#include "tp/counters.h"
#include "tp/intr.h"
#include "tp/hist.h"
#include "tp/log.h"
#include "tp/net.h"
#include "tp/progress.h"
#include "tp/result.h"
#include "tp/stats.h"
#include "tp/transport.h"
#include "tp/units.h"
#include "tp/wire.h"

static const char *test_names[] = {"lat", "bw", "bibw", "loaded"};

struct client {
    const struct tp_net_client_opts *o;
    struct tp_conn c;
    struct tp_key key;
    const struct tp_transport_ops *ops;
    struct tp_ep_config cfg;
    char peer_data[96];
    size_t nflows;
    struct tp_ep *ep[NET_MAX_FLOWS];
    enum flow_kind kind[NET_MAX_FLOWS];
    bool abandoned;       /* a flow thread is stuck: leak its phase and endpoints */
    volatile int bg_stop; /* stops the loaded test's background streams */
    json_t *results;      /* borrowed: doc["results"] */
    struct tp_gpu *gpu;   /* --mem cuda */
    bool dev;             /* the endpoints' buffers are GPU memory (FI_HMEM) */
    void *dbuf[NET_MAX_FLOWS], *hbuf[NET_MAX_FLOWS];
    json_t *prov; /* borrowed: doc["provenance"] */
    char what[48]; /* the progress line: the test (and the loaded test's part) */
    double pdone;  /* the progress line: sizes measured before this one */
};

json_t *tp_net_config_json(const struct tp_net_client_opts *o)
{
    json_t *sizes = json_array();
    for (size_t i = 0; i < o->nsizes; i++)
        json_array_append_new(sizes, json_integer((json_int_t)o->sizes[i]));
    json_t *cfg = json_pack(
        "{s:s, s:s, s:i, s:s, s:s?, s:s, s:o, s:I, s:f, s:I, s:f, s:i, s:b, s:b, s:b, s:f}", "test",
        test_names[o->test], "host", o->host, "port", o->port, "transport", o->transport,
        "provider", o->provider, "mode", o->rma ? "rma" : "msg", "sizes_bytes", sizes, "iterations",
        (json_int_t)o->iters, "duration_s", (double)o->duration_ns / 1e9, "warmup_iterations",
        (json_int_t)o->warmup, "warmup_s", (double)o->warmup_ns / 1e9, "window",
        o->test == TP_NET_LAT ? 1 : (int)o->window, "check", o->check, "busy_poll", o->busy_poll,
        "authenticated", o->key_file != NULL, "timeout_s", (double)o->timeout_ns / 1e9);
    json_object_set_new(cfg, "mem", json_string(o->mem_cuda ? "cuda" : "host"));
    if (o->test == TP_NET_LOADED) {
        json_object_set_new(cfg, "streams", json_integer(o->streams));
        json_object_set_new(cfg, "load_size_bytes", json_integer((json_int_t)o->load_size));
    }
    return cfg;
}

/* ---- control-channel steps ---- */

/* The largest message and the window the test asks the server for. */
static void ask(const struct client *cl, uint64_t *max_msg, unsigned *window)
{
    const struct tp_net_client_opts *o = cl->o;
    *max_msg = o->sizes[o->nsizes - 1];
    /* a ping-pong has one message in flight: no window of buffers for lat */
    *window = o->test == TP_NET_LAT ? 1 : o->window;
    if (o->test == TP_NET_LOADED && o->load_size > *max_msg)
        *max_msg = o->load_size;
}

/* What the server would pin for this test (the rule of tp_net_parse_request)
 * over its limit is our own input at fault: refused before connecting. */
static int buffers_fit(const struct client *cl, tp_error *err)
{
    uint64_t max_msg;
    unsigned window;
    ask(cl, &max_msg, &window);
    double total = ((double)max_msg * (cl->o->check ? window : 1) + (double)max_msg) *
                   (double)cl->nflows;
    if (total > (double)TP_NET_MAX_BUFFER_BYTES)
        return tp_error_set(err, TP_EUSAGE,
                            "the test needs %.1f GiB of buffers on the server (message size x "
                            "window with --check x flows); the limit is %.0f GiB",
                            total / 1073741824.0, (double)TP_NET_MAX_BUFFER_BYTES / 1073741824.0);
    return 0;
}

static int request(struct client *cl, tp_error *err)
{
    const struct tp_net_client_opts *o = cl->o;
    uint64_t max_msg;
    unsigned window;
    ask(cl, &max_msg, &window);
    json_t *flows = json_array();
    for (size_t i = 0; i < cl->nflows; i++)
        json_array_append_new(flows, json_string(cl->kind[i] == FLOW_PINGPONG ? "pingpong"
                                                 : cl->kind[i] == FLOW_C2S    ? "c2s"
                                                                              : "s2c"));
    json_t *req =
        json_pack("{s:s, s:s, s:I, s:i, s:I, s:b, s:b, s:o}", "transport", o->transport, "mode",
                  o->rma ? "rma" : "msg", "max_msg", (json_int_t)max_msg, "window", (int)window,
                  "timeout_ms", (json_int_t)(o->timeout_ns / 1000000u), "busy_poll", o->busy_poll,
                  "check", o->check, "flows", flows);
    if (o->provider)
        json_object_set_new(req, "provider", json_string(o->provider));
    if (o->mem_cuda) /* absent means host, as from clients before --mem */
        json_object_set_new(req, "mem", json_string("cuda"));
    int rc = tp_wire_send(&cl->c, TP_F_REQUEST, req, err);
    json_decref(req);
    if (rc)
        return rc;
    json_t *acc = NULL;
    if ((rc = tp_wire_expect(&cl->c, TP_F_ACCEPT, &acc, err)))
        return rc;
    json_t *addrs = json_object_get(acc, "flows");
    if (!json_is_array(addrs) || json_array_size(addrs) != cl->nflows) {
        json_decref(acc);
        return tp_error_set(err, TP_EPROTO, "server %s answered with %zu addresses for %zu flows",
                            cl->c.peer, json_array_size(addrs), cl->nflows);
    }
    json_t *peer = json_object();
    json_object_set_new(peer, "address", json_string(cl->c.peer));
    if (json_is_object(json_object_get(acc, "host")))
        json_object_update(peer, json_object_get(acc, "host"));
    json_object_set(peer, "endpoint", json_object_get(acc, "endpoint"));
    json_object_set_new(cl->prov, "peer", peer);

    snprintf(cl->peer_data, sizeof cl->peer_data, "%s (data path)", cl->c.peer);
    cl->cfg = (struct tp_ep_config){
        .provider = o->provider,
        .local_ip = cl->c.local_ip,
        .peer_name = cl->peer_data,
        .initiator = true,
        .max_msg_bytes = (size_t)max_msg,
        .window = window,
        .mode = o->rma ? TP_XFER_RMA : TP_XFER_MSG,
        .busy_poll = o->busy_poll,
        .check = o->check,
        .gpu = cl->gpu,
    };
    json_t *mine = json_array();
    for (size_t i = 0; i < cl->nflows && !rc; i++) {
        rc = cl->ops->open(&cl->cfg, &cl->ep[i], err);
        if (!rc)
            json_array_append_new(mine, json_string(cl->ops->address(cl->ep[i])));
        if (!rc && cl->gpu) {
            struct tp_ep_info ei;
            cl->ops->info(cl->ep[i], &ei);
            cl->dev = ei.hmem;
            rc = tp__net_flow_mem_alloc(cl->gpu, cl->dev, (size_t)max_msg, &cl->dbuf[i],
                                        &cl->hbuf[i], err);
        }
    }
    if (!rc) {
        json_t *con = json_pack("{s:O}", "flows", mine);
        rc = tp_wire_send(&cl->c, TP_F_CONNECT, con, err);
        json_decref(con);
    }
    json_decref(mine);
    for (size_t i = 0; i < cl->nflows && !rc; i++) {
        const char *a = json_string_value(json_array_get(addrs, i));
        rc = a ? cl->ops->connect(cl->ep[i], a, o->timeout_ns, err)
               : tp_error_set(err, TP_EPROTO, "server %s sent a non-string address", cl->c.peer);
    }
    json_decref(acc);
    json_t *done = NULL;
    if (!rc && !(rc = tp_wire_expect(&cl->c, TP_F_DONE, &done, err))) {
        struct tp_ep_info info;
        cl->ops->info(cl->ep[0], &info);
        json_object_set_new(cl->prov, "transport",
                            json_pack("{s:s, s:s, s:s, s:s, s:s, s:s*, s:I, s:b, s:I}", "transport",
                                      info.transport, "provider", info.provider, "fabric",
                                      info.fabric, "domain", info.domain, "api_version",
                                      info.api_version, "libfabric_runtime",
                                      info.runtime[0] ? info.runtime : NULL,
                                      "mr_mode", (json_int_t)info.mr_mode, "rma", info.rma,
                                      "max_msg_bytes", (json_int_t)info.max_msg_bytes));
        json_object_set_new(json_object_get(cl->prov, "transport"), "mem_path",
                            json_string(tp__net_flow_mem_path(cl->gpu, cl->dev, cl->ops)));
    }
    json_decref(done);
    return rc;
}

/* One phase: tell the server, run our side of every flow, read its DONE. */
struct phase {
    size_t flows[NET_MAX_FLOWS];
    size_t n;
    uint64_t size, count;
    tp_hist *rtt;
    /* out */
    struct flow_job jobs[NET_MAX_FLOWS];
    json_t *server; /* DONE body */
    double user_s, sys_s;
};

static enum flow_role client_role(enum flow_kind k)
{
    return k == FLOW_PINGPONG ? ROLE_PING : k == FLOW_C2S ? ROLE_SEND : ROLE_RECV;
}

static void setup_jobs(struct client *cl, struct phase *p, const volatile int *stop)
{
    for (size_t i = 0; i < p->n; i++) {
        size_t f = p->flows[i];
        p->jobs[i] = (struct flow_job){
            .ops = cl->ops,
            .ep = cl->ep[f],
            .role = client_role(cl->kind[f]),
            .size = p->size,
            .count = p->count,
            .check = cl->o->check,
            .stop = stop,
            .timeout_ns = cl->o->timeout_ns,
            .rtt = cl->kind[f] == FLOW_PINGPONG ? p->rtt : NULL,
            .peer = cl->peer_data,
            .gpu = cl->gpu,
            .dev = cl->dev,
            .dtx = cl->dbuf[f],
            .drx = cl->dbuf[f] ? (char *)cl->dbuf[f] + cl->cfg.max_msg_bytes : NULL,
            .hbuf = cl->hbuf[f],
        };
    }
}

static int send_run(struct client *cl, const struct phase *p, uint64_t count, tp_error *err)
{
    json_t *idx = json_array();
    for (size_t i = 0; i < p->n; i++)
        json_array_append_new(idx, json_integer((json_int_t)p->flows[i]));
    json_t *run = json_pack("{s:o, s:I, s:I}", "flows", idx, "size", (json_int_t)p->size, "count",
                            (json_int_t)count);
    int rc = tp_wire_send(&cl->c, TP_F_RUN, run, err);
    json_decref(run);
    return rc;
}

static int run_phase(struct client *cl, struct phase *p, tp_error *err)
{
    int rc = tp_intr_check(err); /* a phase is the client's safe point */
    if (rc)
        return rc;
    setup_jobs(cl, p, NULL);
    double u0, s0, u1, s1;
    tp__net_cpu_seconds(&u0, &s0);
    rc = send_run(cl, p, p->count, err);
    if (rc)
        return rc;
    rc = tp__net_flow_run_all(p->jobs, p->n, &cl->abandoned, err);
    if (cl->abandoned)
        return rc;
    tp__net_cpu_seconds(&u1, &s1);
    p->user_s = u1 - u0;
    p->sys_s = s1 - s0;
    if (rc) {
        /* the server may have failed first and said why: prefer its word */
        tp_error srv;
        json_t *b = NULL;
        struct tp_conn quick = cl->c;
        quick.timeout_ns = 200000000u;
        if (tp_wire_expect(&quick, TP_F_DONE, &b, &srv) != 0 && srv.code != TP_ETIMEOUT &&
            srv.code != TP_EPEER) {
            *err = srv;
            rc = srv.code;
        }
        json_decref(b);
        return rc;
    }
    return tp_wire_expect(&cl->c, TP_F_DONE, &p->server, err);
}

static struct phase *phase_new(size_t n, size_t first_flow, uint64_t size)
{
    struct phase *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->n = n;
    for (size_t i = 0; i < n; i++)
        p->flows[i] = first_flow + i;
    p->size = size;
    return p;
}

/* Reset a phase's outputs between chunks (kept while a stuck thread owns it). */
static void free_phase(struct client *cl, struct phase *p)
{
    if (cl->abandoned)
        return;
    for (size_t i = 0; i < p->n; i++)
        tp__net_rx_free(&p->jobs[i].rx);
    json_decref(p->server);
    p->server = NULL;
}

/* Release a phase unless a stuck thread still owns it. */
static void phase_free(struct client *cl, struct phase *p)
{
    if (!p || cl->abandoned)
        return;
    free_phase(cl, p);
    free(p);
}

/* Warm up with doubling counts until warmup_ns has passed (or run exactly
 * o->warmup iterations); returns the time per iteration of the last round. */
static int warmup(struct client *cl, struct phase *p, uint64_t *iters_done, double *per_iter_ns,
                  tp_error *err)
{
    const struct tp_net_client_opts *o = cl->o;
    uint64_t total_ns = 0, n = o->warmup ? o->warmup : 1;
    *iters_done = 0;
    *per_iter_ns = 0;
    for (;;) {
        p->count = n;
        uint64_t t0 = tp_now_ns();
        int rc = run_phase(cl, p, err);
        uint64_t t = tp_now_ns() - t0;
        free_phase(cl, p);
        if (rc)
            return rc;
        *iters_done += n;
        total_ns += t;
        *per_iter_ns = (double)t / (double)n;
        if (o->warmup || total_ns >= o->warmup_ns)
            return 0;
        uint64_t left = o->warmup_ns - total_ns;
        uint64_t next = (uint64_t)((double)left / *per_iter_ns) + 1;
        n = next < 2 * n ? next : 2 * n;
    }
}

/* Duration-bound runs are measured in chunks: each chunk's count comes from
 * the rate of the chunk before it (the warm-up, first), so a rate that drifts
 * with load changes the number of chunks, not the time measured. A chunk is a
 * quarter of the run but up to 1 s where the run is at least 2 s long (so 1 s
 * peak windows fit in one), the first at most a quarter, and none more than
 * what is left. --iters N is
 * one chunk of exactly N. */
#define MAX_CHUNKS 64

static uint64_t chunk_count(const struct tp_net_client_opts *o, double per_iter_ns,
                            uint64_t elapsed_ns)
{
    if (o->iters)
        return o->iters;
    double left = (double)(o->duration_ns - elapsed_ns), d = (double)o->duration_ns;
    /* a quarter of the run, but up to 1 s (half the run at most) so that
     * 1 s peak windows fit in a chunk of a longer run */
    double chunk = d / 4, want = d / 2 < 1e9 ? d / 2 : 1e9;
    if (chunk < want)
        chunk = want;
    /* the first chunk's rate comes from a short warm-up: risk a quarter of
     * the run on it at most */
    if (elapsed_ns == 0 && chunk > d / 4)
        chunk = d / 4;
    if (chunk > left)
        chunk = left;
    double n = per_iter_ns > 0 ? chunk / per_iter_ns : 1;
    return n < 1 ? 1 : n > 1e9 ? 1000000000u : (uint64_t)n;
}

/* More chunks needed? Stop within 1 % of the target or one iteration of it. */
static bool chunks_left(const struct tp_net_client_opts *o, uint64_t elapsed_ns, double per_iter_ns,
                        int chunks)
{
    if (o->iters || chunks >= MAX_CHUNKS || elapsed_ns >= o->duration_ns)
        return false;
    uint64_t left = o->duration_ns - elapsed_ns;
    return (double)left > per_iter_ns && left > o->duration_ns / 100;
}

struct cpu_sum {
    double cu, cs, su, ss; /* client user/sys, server user/sys seconds */
};

static void cpu_add(struct cpu_sum *c, const struct phase *p)
{
    json_t *sc = json_object_get(p->server, "cpu");
    c->cu += p->user_s;
    c->cs += p->sys_s;
    c->su += json_real_value(json_object_get(sc, "user_s"));
    c->ss += json_real_value(json_object_get(sc, "sys_s"));
}

static json_t *cpu_end(double user, double sys, double gb, double msgs)
{
    return json_pack("{s:o, s:o, s:o, s:o}", "user", tp_metric(user, "s"), "sys",
                     tp_metric(sys, "s"), "per_GB",
                     tp_metric(gb > 0 ? (user + sys) / gb : 0, "s/GB"), "per_msg",
                     tp_metric(msgs > 0 ? (user + sys) / msgs : 0, "s/msg"));
}

static json_t *cpu_json(const struct cpu_sum *c, double bytes, double msgs)
{
    return json_pack("{s:o, s:o}", "client", cpu_end(c->cu, c->cs, bytes / 1e9, msgs), "server",
                     cpu_end(c->su, c->ss, bytes / 1e9, msgs));
}

/* ---- the progress line (tp/progress.h): between chunks, never in one ---- */

static void progress_size(struct client *cl, uint64_t size)
{
    char a[32];
    tp_progress_what("%s %s", cl->what, tp_fmt_size(size, a, sizeof a));
    tp_progress_set(cl->pdone);
}

/* elapsed_ns of the size measured: its share of a run bound by --time */
static void progress_part(const struct client *cl, uint64_t elapsed_ns)
{
    double f = cl->o->iters ? 0 : (double)elapsed_ns / (double)cl->o->duration_ns;
    tp_progress_set(cl->pdone + (f < 1 ? f : 1));
}

/* ---- tests ---- */

/* Ping-pong at one size on flow f: warm-up, then the measured chunks, all
 * recorded into rtt. */
static int pingpong(struct client *cl, size_t f, uint64_t size, tp_hist *rtt, json_t **entry,
                    tp_error *err)
{
    const struct tp_net_client_opts *o = cl->o;
    struct phase *p = phase_new(1, f, size);
    if (!p)
        return tp_error_set(err, TP_ENOMEM, "phase");
    uint64_t wn, iters = 0, elapsed = 0;
    double per;
    struct cpu_sum cpu = {0};
    int rc = warmup(cl, p, &wn, &per, err), chunks = 0;
    if (rc) {
        phase_free(cl, p);
        return rc;
    }
    tp_hist_reset(rtt);
    p->rtt = rtt;
    do {
        p->count = chunk_count(o, per, elapsed);
        rc = run_phase(cl, p, err);
        if (!rc) {
            uint64_t dur = p->jobs[0].end_ns - p->jobs[0].start_ns;
            iters += p->count;
            elapsed += dur;
            per = (double)dur / (double)p->count;
            cpu_add(&cpu, p);
        }
        free_phase(cl, p);
        chunks++;
        progress_part(cl, elapsed);
    } while (!rc && chunks_left(o, elapsed, per, chunks));
    phase_free(cl, p);
    if (rc)
        return rc;
    tp_stats st;
    tp_stats_from_hist(rtt, &st);
    double dur = (double)elapsed;
    *entry = json_pack(
        "{s:I, s:I, s:I, s:i, s:o, s:o, s:o, s:o, s:o, s:o}", "size_bytes", (json_int_t)size,
        "warmup_iterations", (json_int_t)wn, "iterations", (json_int_t)iters, "chunks", chunks,
        "duration", tp_metric(dur / 1e9, "s"), "latency", tp_stats_to_json(&st, 2.0, "ns"), "rtt",
        tp_stats_to_json(&st, 1.0, "ns"), "rtt_histogram", tp_hist_to_json(rtt), "msg_rate",
        tp_metric(dur > 0 ? 2.0 * (double)iters * 1e9 / dur : 0, "msg/s"), "cpu",
        cpu_json(&cpu, 2.0 * (double)(iters * size), 2.0 * (double)iters));
    return 0;
}

static int test_lat(struct client *cl, json_t *list, tp_error *err)
{
    tp_hist *h = tp_hist_new();
    if (!h)
        return tp_error_set(err, TP_ENOMEM, "histogram");
    int rc = 0;
    for (size_t i = 0; i < cl->o->nsizes && !rc; i++) {
        json_t *e = NULL;
        progress_size(cl, cl->o->sizes[i]);
        rc = pingpong(cl, 0, cl->o->sizes[i], h, &e, err);
        cl->pdone++;
        if (!rc)
            json_array_append_new(list, e);
    }
    if (!cl->abandoned) /* else a stuck thread may still record into h */
        tp_hist_free(h);
    return rc;
}

/* Highest receive rate over 1 s windows (0.1 s when no chunk lasted 1 s). */
struct peak {
    double p1s, p100ms;
    bool have_1s;
};

static void peak_add(struct peak *k, double p1s, double p100ms, uint64_t span_ns)
{
    if (span_ns >= 1000000000u && p1s > k->p1s) {
        k->p1s = p1s;
        k->have_1s = true;
    }
    if (p100ms > k->p100ms)
        k->p100ms = p100ms;
}

static json_t *peak_json(const struct peak *k)
{
    return json_pack("{s:f, s:s, s:f}", "value", k->have_1s ? k->p1s : k->p100ms, "unit", "B/s",
                     "window_s", k->have_1s ? 1.0 : 0.1);
}

/* Totals of a bandwidth measurement over its chunks. */
struct bw_sum {
    uint64_t msgs;    /* per direction */
    uint64_t span_ns; /* sum of chunk spans: first start to last finish */
    uint64_t c2s_ns;  /* bibw: client's sending time */
    uint64_t s2c_ns;  /* bibw: client's receiving time, first to last arrival */
    uint64_t s2c_bytes;
    struct peak c2s, s2c; /* as seen by the server's and the client's receiver */
};

static void bw_add(struct bw_sum *b, const struct phase *p, bool bidir)
{
    uint64_t t0 = p->jobs[0].start_ns, t1 = p->jobs[0].end_ns;
    if (bidir) {
        const struct rx_stats *rx = &p->jobs[1].rx;
        t0 = t0 < p->jobs[1].start_ns ? t0 : p->jobs[1].start_ns;
        t1 = t1 > p->jobs[1].end_ns ? t1 : p->jobs[1].end_ns;
        b->c2s_ns += p->jobs[0].end_ns - p->jobs[0].start_ns;
        b->s2c_ns += rx->last_ns - rx->first_ns;
        b->s2c_bytes += rx->bytes;
        peak_add(&b->s2c, tp__net_rx_peak_Bps(rx, 1000000000u),
                 tp__net_rx_peak_Bps(rx, FLOW_INTERVAL_NS), rx->last_ns - rx->first_ns);
    }
    b->msgs += p->count;
    b->span_ns += t1 - t0;
    json_t *srx = json_array_get(json_object_get(p->server, "flows"), 0);
    peak_add(&b->c2s, json_real_value(json_object_get(srx, "peak_1s_Bps")),
             json_real_value(json_object_get(srx, "peak_100ms_Bps")),
             (uint64_t)json_integer_value(json_object_get(srx, "span_ns")));
}

static int test_bw(struct client *cl, bool bidir, json_t *list, tp_error *err)
{
    const struct tp_net_client_opts *o = cl->o;
    int rc = 0;
    for (size_t i = 0; i < o->nsizes && !rc; i++, cl->pdone++) {
        uint64_t size = o->sizes[i];
        progress_size(cl, size);
        struct phase *p = phase_new(bidir ? 2 : 1, 0, size);
        if (!p)
            return tp_error_set(err, TP_ENOMEM, "phase");
        uint64_t wn;
        double per;
        struct cpu_sum cpu = {0};
        struct bw_sum b = {0};
        int chunks = 0;
        if ((rc = warmup(cl, p, &wn, &per, err))) {
            phase_free(cl, p);
            break;
        }
        do {
            p->count = chunk_count(o, per, b.span_ns);
            rc = run_phase(cl, p, err);
            if (!rc) {
                uint64_t before = b.span_ns;
                bw_add(&b, p, bidir);
                cpu_add(&cpu, p);
                per = (double)(b.span_ns - before) / (double)p->count;
            }
            free_phase(cl, p);
            chunks++;
            progress_part(cl, b.span_ns);
        } while (!rc && chunks_left(o, b.span_ns, per, chunks));
        phase_free(cl, p);
        if (rc)
            break;
        double dur = (double)b.span_ns;
        double per_dir = (double)(b.msgs * size);
        double bytes = bidir ? 2 * per_dir : per_dir;
        double msgs = (double)b.msgs * (bidir ? 2 : 1);
        json_t *e =
            json_pack("{s:I, s:I, s:I, s:I, s:i, s:o, s:o, s:o}", "size_bytes", (json_int_t)size,
                      "warmup_messages", (json_int_t)wn, "messages", (json_int_t)b.msgs, "bytes",
                      (json_int_t)bytes, "chunks", chunks, "duration", tp_metric(dur / 1e9, "s"),
                      bidir ? "bibw" : "bw", tp_metric(dur > 0 ? bytes * 1e9 / dur : 0, "B/s"),
                      "msg_rate", tp_metric(dur > 0 ? msgs * 1e9 / dur : 0, "msg/s"));
        if (!bidir) {
            json_object_set_new(e, "peak_bw", peak_json(&b.c2s));
        } else {
            json_object_set_new(e, "peak_bw_c2s", peak_json(&b.c2s));
            json_object_set_new(e, "peak_bw_s2c", peak_json(&b.s2c));
            json_object_set_new(e, "bw_c2s",
                                tp_metric(b.c2s_ns ? per_dir * 1e9 / (double)b.c2s_ns : 0, "B/s"));
            json_object_set_new(
                e, "bw_s2c",
                tp_metric(b.s2c_ns ? (double)b.s2c_bytes * 1e9 / (double)b.s2c_ns : 0, "B/s"));
        }
        json_object_set_new(e, "cpu", cpu_json(&cpu, bytes, msgs));
        json_array_append_new(list, e);
    }
    return rc;
}

static double stat_of(json_t *stats, const char *k)
{
    return json_real_value(json_object_get(stats, k));
}

/* Isolated latency, then the same under N background streams (GPCNeT's
 * congestion impact factor = loaded / isolated). */
static int test_loaded(struct client *cl, json_t *res, tp_error *err)
{
    const struct tp_net_client_opts *o = cl->o;
    json_t *iso = json_array(), *lod = json_array();
    json_object_set_new(res, "isolated", iso);
    json_object_set_new(res, "loaded", lod);
    snprintf(cl->what, sizeof cl->what, "net loaded (alone)");
    int rc = test_lat(cl, iso, err);
    if (rc)
        return rc;
    /* start the congestors */
    struct phase *bg = phase_new(o->streams, 1, o->load_size);
    if (!bg)
        return tp_error_set(err, TP_ENOMEM, "phase");
    bg->count = UINT64_MAX >> 1;
    cl->bg_stop = 0;
    setup_jobs(cl, bg, &cl->bg_stop);
    json_t *ack = NULL;
    if ((rc = send_run(cl, bg, 0, err)) || (rc = tp_wire_expect(&cl->c, TP_F_DONE, &ack, err))) {
        phase_free(cl, bg);
        return rc;
    }
    json_decref(ack);
    size_t started = 0;
    rc = tp__net_flow_start(bg->jobs, bg->n, &started, err);
    uint64_t t0 = tp_now_ns();
    if (!rc)
        usleep(200000); /* let the streams reach steady state */
    tp_hist *h = tp_hist_new();
    snprintf(cl->what, sizeof cl->what, "net loaded (%u stream%s)", o->streams,
             o->streams == 1 ? "" : "s");
    for (size_t i = 0; i < o->nsizes && !rc; i++) {
        json_t *e = NULL;
        progress_size(cl, o->sizes[i]);
        rc = pingpong(cl, 0, o->sizes[i], h, &e, err);
        cl->pdone++;
        if (!rc)
            json_array_append_new(lod, e);
    }
    if (!cl->abandoned)
        tp_hist_free(h);
    cl->bg_stop = 1;
    tp_error jerr;
    int jrc = tp__net_flow_join(bg->jobs, started, &cl->abandoned, &jerr);
    uint64_t t1 = tp_now_ns();
    if (!rc && jrc) {
        rc = jrc;
        *err = jerr;
    }
    phase_free(cl, bg);
    if (rc)
        return rc;
    json_t *done = NULL;
    if ((rc = tp_wire_send(&cl->c, TP_F_STOP, NULL, err)) ||
        (rc = tp_wire_expect(&cl->c, TP_F_DONE, &done, err)))
        return rc;
    uint64_t bytes = 0;
    json_t *fl;
    size_t k;
    json_array_foreach(json_object_get(done, "flows"), k, fl) bytes +=
        (uint64_t)json_integer_value(json_object_get(fl, "bytes"));
    json_decref(done);
    double dur = (double)(t1 - t0);
    json_object_set_new(res, "load",
                        json_pack("{s:i, s:I, s:I, s:o}", "streams", (int)o->streams, "size_bytes",
                                  (json_int_t)o->load_size, "bytes", (json_int_t)bytes, "bw",
                                  tp_metric(dur > 0 ? (double)bytes * 1e9 / dur : 0, "B/s")));
    json_t *impact = json_array();
    for (size_t i = 0; i < json_array_size(iso) && i < json_array_size(lod); i++) {
        json_t *a = json_object_get(json_array_get(iso, i), "latency");
        json_t *b = json_object_get(json_array_get(lod, i), "latency");
        double mi = stat_of(a, "mean"), pi = stat_of(a, "p99");
        json_array_append_new(impact,
                              json_pack("{s:I, s:f, s:f}", "size_bytes", (json_int_t)o->sizes[i],
                                        "mean", mi > 0 ? stat_of(b, "mean") / mi : 0, "p99",
                                        pi > 0 ? stat_of(b, "p99") / pi : 0));
    }
    json_object_set_new(res, "impact_factor", impact);
    return 0;
}

/* Each data connection's own counters (TCP_INFO for kernel TCP), after
 * the test: an entry a flow where the transport has them. */
static json_t *connections_json(const struct client *cl)
{
    static const char *const kinds[] = {[FLOW_PINGPONG] = "pingpong", [FLOW_C2S] = "c2s",
                                        [FLOW_S2C] = "s2c"};
    json_t *a = json_array();
    for (size_t i = 0; i < cl->nflows && cl->ep[i] && cl->ops->stats; i++) {
        struct tp_ep_stats st;
        cl->ops->stats(cl->ep[i], &st);
        if (!st.have)
            continue;
        json_array_append_new(
            a, json_pack("{s:I, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "flow",
                         (json_int_t)i, "kind", kinds[cl->kind[i]], "total_retrans",
                         (json_int_t)st.total_retrans, "bytes_retrans",
                         (json_int_t)st.bytes_retrans, "lost", (json_int_t)st.lost, "rtt_us",
                         (json_int_t)st.rtt_us, "rttvar_us", (json_int_t)st.rttvar_us,
                         "delivery_rate_Bps", (json_int_t)st.delivery_rate_Bps, "reordering",
                         (json_int_t)st.reordering, "rcv_ooopack", (json_int_t)st.rcv_ooopack));
    }
    return a;
}

int tp_net_run(const struct tp_net_client_opts *o, json_t *doc, tp_error *err)
{
    tp_clock_init();
    struct client *cl = calloc(1, sizeof *cl);
    if (!cl)
        return tp_error_set(err, TP_ENOMEM, "client state");
    cl->o = o;
    cl->results = json_object_get(doc, "results");
    cl->prov = json_object_get(doc, "provenance");
    cl->c.fd = -1;
    int rc = 0;
    cl->ops = tp_transport_find(o->transport);
    if (!cl->ops) {
        char names[128];
        rc = tp_error_set(err, TP_EUSAGE, "--transport %s: unknown (use %s)", o->transport,
                          tp_transport_names(" or ", names, sizeof names));
        goto out;
    }
    if ((rc = tp_transport_provider_check(cl->ops, o->provider, err)))
        goto out;
    if (o->key_file && (rc = tp_key_load(&cl->key, o->key_file, err)))
        goto out;
    if (o->mem_cuda) {
        struct tp_gpu_opts go = {
            .what = "--mem cuda", .device = o->gpu, .timeout_ns = o->timeout_ns};
        if ((rc = tp_gpu_open(&go, &cl->gpu, err)))
            goto out;
        json_object_set_new(cl->prov, "gpu", tp_gpu_info(cl->gpu));
    }
    switch (o->test) {
    case TP_NET_LAT:
        cl->nflows = 1;
        cl->kind[0] = FLOW_PINGPONG;
        break;
    case TP_NET_BW:
        cl->nflows = 1;
        cl->kind[0] = FLOW_C2S;
        break;
    case TP_NET_BIBW:
        cl->nflows = 2;
        cl->kind[0] = FLOW_C2S;
        cl->kind[1] = FLOW_S2C;
        break;
    case TP_NET_LOADED:
        cl->nflows = 1 + o->streams;
        cl->kind[0] = FLOW_PINGPONG;
        for (size_t i = 1; i < cl->nflows; i++)
            cl->kind[i] = FLOW_C2S;
        break;
    }
    /* the handshake, connect to WELCOME, is one exchange under --timeout:
     * a server that trickles its HELLO is as late as a silent one */
    if ((rc = buffers_fit(cl, err)))
        goto out;
    uint64_t t0 = tp_now_ns();
    if ((rc = tp_conn_connect(&cl->c, o->host, o->port, o->timeout_ns, err)))
        goto out;
    cl->c.deadline_ns = t0 + o->timeout_ns;
    if ((rc = tp_auth_client(&cl->c, &cl->key, err)))
        goto out;
    cl->c.deadline_ns = 0;
    if ((rc = request(cl, err)))
        goto out;
    json_object_set_new(cl->results, "test", json_string(test_names[o->test]));
    /* the node's counters before and after the test, outside its timed
     * loops (docs/counters.md) */
    struct tp_ctr_probe *probe = tp_ctr_probe_start(o->host, 0);
    json_t *list = json_array();
    if (o->test != TP_NET_LOADED)
        json_object_set_new(cl->results, "sizes", list);
    else
        json_decref(list);
    snprintf(cl->what, sizeof cl->what, "net %s", test_names[o->test]);
    tp_progress_begin(o->progress_line, cl->what,
                      (double)o->nsizes * (o->test == TP_NET_LOADED ? 2 : 1), "sizes", 0);
    switch (o->test) {
    case TP_NET_LAT: rc = test_lat(cl, list, err); break;
    case TP_NET_BW: rc = test_bw(cl, false, list, err); break;
    case TP_NET_BIBW: rc = test_bw(cl, true, list, err); break;
    case TP_NET_LOADED: rc = test_loaded(cl, cl->results, err); break;
    }
    tp_progress_end();
    json_object_set_new(cl->results, "counters", tp_ctr_probe_end(probe));
    if (!cl->abandoned)
        json_object_set_new(cl->results, "connections", connections_json(cl));
    if (!rc) {
        json_t *bye = NULL;
        if (tp_wire_send(&cl->c, TP_F_BYE, NULL, err) == 0 &&
            tp_wire_expect(&cl->c, TP_F_BYE, &bye, err) == 0) {
            /* the server's node's counters over the test (a server
             * before them sends none) */
            json_t *pc = json_object_get(bye, "counters");
            if (json_is_object(pc))
                json_object_set(cl->results, "peer_counters", pc);
            json_decref(bye);
        }
        tp_error_clear(err);
    }
out:
    tp_conn_close(&cl->c);
    if (cl->abandoned)
        return rc; /* a stuck thread still uses cl and the endpoints: leave them */
    size_t n = 0;
    while (n < cl->nflows && cl->ep[n])
        n++;
    if (n && !tp__net_flow_close_eps(cl->ops, cl->ep, n))
        tp_log(TP_LOG_WARN, "closing the data endpoints to %s did not finish; leaving them",
               cl->c.peer);
    for (size_t i = 0; i < NET_MAX_FLOWS; i++)
        tp__net_flow_mem_free(cl->gpu, cl->dbuf[i], cl->hbuf[i]);
    tp_gpu_close(cl->gpu);
    free(cl);
    return rc;
}
