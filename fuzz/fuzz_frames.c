/* Fuzz target: the bodies of the control frames the net server and the
 * boot star read (src/net/frames.c, src/boot/frames.c). fuzz_wire.c covers
 * the framing around them; here a body has already arrived. Byte 0 picks
 * the frame (a row of frames[] below, modulo their number), bytes 1 and 2
 * the session it arrives in (the number of flows and the largest message a
 * RUN may ask for; the size of the group), and the rest is the body's JSON
 * text. Whatever a parser accepts must lie within the bounds its header
 * promises (lengths, counts, ranges, distinct flows); whatever it refuses
 * must be TP_EPROTO naming the peer (or, for a REQUEST too big for the
 * server, TP_EUSAGE saying so). */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "tp/boot.h"
#include "tp/net.h"
#include "tp/wire.h"

#define PEER "fuzz-peer:7471"

/* The session a body arrives in, from bytes 1 and 2. */
struct session {
    unsigned a, b;
};

static size_t nflows_of(const struct session *s)
{
    return 1 + s->a % TP_NET_MAX_FLOWS;
}

static int group_of(const struct session *s, int least)
{
    return least + (int)((s->a | s->b << 8) % (unsigned)(TP_BOOT_MAX_RANKS - least + 1));
}

/* a string field of the body, or NULL */
static const char *str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static void len_max(const char *s, size_t max, const char *what)
{
    FZ_ASSERT(s != NULL, "%s accepted as NULL", what);
    FZ_ASSERT(strlen(s) <= max, "%s of %zu bytes accepted, the bound is %zu", what, strlen(s), max);
}

/* ---- the net server's frames ---- */

static int request(struct tp_conn *c, const json_t *body, const struct session *s, tp_error *err)
{
    (void)s;
    struct tp_net_request r;
    int rc = tp_net_parse_request(c, body, &r, err);
    if (rc == TP_EUSAGE)
        FZ_ASSERT(strstr(err->msg, "GiB of buffers on the server"), "usage error: %s", err->msg);
    if (rc)
        return rc;
    len_max(r.transport, 16, "transport");
    FZ_ASSERT(strcmp(r.transport, str(body, "transport")) == 0, "transport is not the body's");
    if (r.provider)
        len_max(r.provider, 64, "provider");
    FZ_ASSERT(!r.provider == !json_object_get(body, "provider"), "provider lost or made up");
    FZ_ASSERT(r.rma == (strcmp(str(body, "mode"), "rma") == 0), "rma is not the body's mode");
    FZ_ASSERT(r.rma || strcmp(str(body, "mode"), "msg") == 0, "mode %s accepted",
              str(body, "mode"));
    const char *mem = str(body, "mem");
    FZ_ASSERT(r.cuda == (mem && strcmp(mem, "cuda") == 0), "cuda is not the body's mem");
    FZ_ASSERT(r.max_msg >= 1 && r.max_msg <= TP_NET_MAX_MSG, "max_msg %llu",
              (unsigned long long)r.max_msg);
    FZ_ASSERT(r.window >= 1 && r.window <= TP_NET_MAX_WINDOW, "window %llu",
              (unsigned long long)r.window);
    FZ_ASSERT(r.timeout_ms >= 1 && r.timeout_ms <= TP_NET_MAX_TIMEOUT_MS, "timeout_ms %llu",
              (unsigned long long)r.timeout_ms);
    FZ_ASSERT(r.nflows >= 1 && r.nflows <= TP_NET_MAX_FLOWS, "%zu flows", r.nflows);
    FZ_ASSERT(r.nflows == json_array_size(json_object_get(body, "flows")), "flows miscounted");
    for (size_t i = 0; i < r.nflows; i++)
        FZ_ASSERT(r.kind[i] == TP_NET_FLOW_PINGPONG || r.kind[i] == TP_NET_FLOW_C2S ||
                      r.kind[i] == TP_NET_FLOW_S2C,
                  "flow %zu has kind %d", i, (int)r.kind[i]);
    uint64_t want = (r.max_msg * (r.check ? r.window : 1) + r.max_msg) * r.nflows;
    FZ_ASSERT(r.buffer_bytes == want && want <= TP_NET_MAX_BUFFER_BYTES,
              "buffers %llu, want %llu within the limit", (unsigned long long)r.buffer_bytes,
              (unsigned long long)want);
    return 0;
}

static int connect_(struct tp_conn *c, const json_t *body, const struct session *s, tp_error *err)
{
    size_t n = nflows_of(s);
    const char *addr[TP_NET_MAX_FLOWS];
    int rc = tp_net_parse_connect(c, body, n, addr, err);
    if (rc)
        return rc;
    const json_t *a = json_object_get(body, "flows");
    for (size_t i = 0; i < n; i++) {
        len_max(addr[i], TP_NET_MAX_ADDRESS, "address");
        FZ_ASSERT(strlen(addr[i]) == json_string_length(json_array_get(a, i)),
                  "address %zu cut at a NUL", i);
    }
    return 0;
}

static int run(struct tp_conn *c, const json_t *body, const struct session *s, tp_error *err)
{
    size_t n = nflows_of(s);
    uint64_t max_msg = 1 + (uint64_t)s->b * s->b * 16411; /* 1 .. about 2^30 */
    struct tp_net_run_req r;
    int rc = tp_net_parse_run(c, body, n, max_msg, &r, err);
    if (rc)
        return rc;
    FZ_ASSERT(r.n >= 1 && r.n <= n, "%zu flows of %zu", r.n, n);
    FZ_ASSERT(r.size >= 1 && r.size <= max_msg, "size %llu, max %llu", (unsigned long long)r.size,
              (unsigned long long)max_msg);
    FZ_ASSERT(r.count <= UINT64_MAX >> 2, "count %llu", (unsigned long long)r.count);
    bool seen[TP_NET_MAX_FLOWS] = {false};
    for (size_t i = 0; i < r.n; i++) {
        FZ_ASSERT(r.flow[i] < n, "flow %zu of %zu", r.flow[i], n);
        FZ_ASSERT(!seen[r.flow[i]], "flow %zu twice", r.flow[i]);
        seen[r.flow[i]] = true;
    }
    return 0;
}

/* ---- the boot star's frames ---- */

static int join(struct tp_conn *c, const json_t *body, const struct session *s, tp_error *err)
{
    int size = group_of(s, 2);
    struct tp_boot_join j;
    int rc = tp_boot_parse_join(c, body, size, &j, err);
    if (rc)
        return rc;
    FZ_ASSERT(j.rank >= 1 && j.rank < size, "rank %d in a group of %d", j.rank, size);
    FZ_ASSERT(j.size >= 1 && j.size <= TP_BOOT_MAX_RANKS, "size %d", j.size);
    len_max(j.host, TP_BOOT_MAX_HOST, "host");
    FZ_ASSERT(json_is_object(j.options), "options not an object");
    return 0;
}

static int time_(struct tp_conn *c, const json_t *body, const struct session *s, tp_error *err)
{
    (void)s;
    int64_t t = -1;
    int rc = tp_boot_parse_time(c, body, &t, err);
    if (!rc)
        FZ_ASSERT(t >= 0, "clock %lld", (long long)t);
    return rc;
}

static int group(struct tp_conn *c, const json_t *body, const struct session *s, tp_error *err)
{
    int size = group_of(s, 1);
    const char **hosts = calloc((size_t)size, sizeof *hosts);
    int64_t *off = calloc((size_t)size, sizeof *off);
    uint64_t *rtt = calloc((size_t)size, sizeof *rtt);
    bool *gone = calloc((size_t)size, sizeof *gone);
    FZ_ASSERT(hosts && off && rtt && gone, "out of memory");
    int rc = tp_boot_parse_group(c, body, size, hosts, off, rtt, gone, err);
    FZ_ASSERT(rc || !gone[0], "rank 0 accepted as gone");
    for (int r = 0; !rc && r < size; r++) {
        len_max(hosts[r], TP_BOOT_MAX_HOST, "host");
        FZ_ASSERT(rtt[r] <= INT64_MAX, "rank %d: round trip %llu", r, (unsigned long long)rtt[r]);
    }
    free(hosts);
    free(off);
    free(rtt);
    free(gone);
    return rc;
}

static int contribution(struct tp_conn *c, const json_t *body, const struct session *s,
                        tp_error *err)
{
    (void)s;
    const char *d = NULL;
    int rc = tp_boot_parse_data(c, body, TP_BOOT_MAX_BLOB, &d, NULL, err);
    if (!rc)
        len_max(d, TP_BOOT_MAX_BLOB, "allgather data");
    return rc;
}

static int part(struct tp_conn *c, const json_t *body, const struct session *s, tp_error *err)
{
    (void)s;
    const char *d = NULL;
    bool more;
    int rc = tp_boot_parse_data(c, body, TP_BOOT_GATHER_PART, &d, &more, err);
    if (!rc) {
        len_max(d, TP_BOOT_GATHER_PART, "gather part");
        FZ_ASSERT(json_is_boolean(json_object_get(body, "more")), "more is not a boolean");
    }
    return rc;
}

static int all(struct tp_conn *c, const json_t *body, const struct session *s, tp_error *err)
{
    int size = group_of(s, 1);
    const char **a = calloc((size_t)size, sizeof *a);
    FZ_ASSERT(a, "out of memory");
    int rc = tp_boot_parse_all(c, body, size, a, err);
    /* a rank left out is NULL; rank 0 never is */
    for (int r = 0; !rc && r < size; r++)
        if (r == 0 || a[r])
            len_max(a[r], TP_BOOT_MAX_BLOB, "gathered part");
    free(a);
    return rc;
}

/* the answer that ends a barrier: the gone, never rank 0 */
static int gone(struct tp_conn *c, const json_t *body, const struct session *s, tp_error *err)
{
    int size = group_of(s, 1);
    bool *g = calloc((size_t)size, sizeof *g);
    FZ_ASSERT(g, "out of memory");
    int rc = tp_boot_parse_gone(c, body, size, g, err);
    FZ_ASSERT(!g[0], "rank 0 accepted as gone");
    free(g);
    return rc;
}

/* a lean GROUP: rank 0's host, this rank's clock and place on its host */
static int lean_group(struct tp_conn *c, const json_t *body, const struct session *s,
                      tp_error *err)
{
    int size = group_of(s, 2);
    bool *g = calloc((size_t)size, sizeof *g);
    FZ_ASSERT(g, "out of memory");
    struct tp_boot_lean l;
    int rc = tp_boot_parse_lean_group(c, body, size, &l, g, err);
    FZ_ASSERT(rc || !g[0], "rank 0 accepted as gone");
    if (!rc) {
        len_max(l.host0, TP_BOOT_MAX_HOST, "host of rank 0");
        FZ_ASSERT(l.rtt <= INT64_MAX && l.local_rank >= 0 && l.local_rank < size,
                  "round trip %llu, local rank %d of %d", (unsigned long long)l.rtt, l.local_rank,
                  size);
    }
    free(g);
    return rc;
}

/* byte 0 picks a row */
static const struct {
    const char *name;
    int (*parse)(struct tp_conn *c, const json_t *body, const struct session *s, tp_error *err);
} frames[] = {
    {"REQUEST", request},     {"CONNECT", connect_}, {"RUN", run},
    {"JOIN", join},           {"TIME", time_},       {"GROUP", group},
    {"GATHER", contribution}, {"GATHER part", part}, {"GATHER all", all},
    {"GATHER gone", gone},    {"GROUP lean", lean_group},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    size_t row = data[0] % (sizeof frames / sizeof frames[0]);
    struct session s = {data[1], data[2]};
    /* what tp_wire_recv hands on: a JSON object of at most the payload limit */
    if (size - 3 > TP_WIRE_MAX_PAYLOAD)
        return 0;
    json_t *body = json_loadb((const char *)data + 3, size - 3, JSON_REJECT_DUPLICATES, NULL);
    if (!json_is_object(body)) {
        json_decref(body);
        return 0;
    }
    struct tp_conn c;
    memset(&c, 0, sizeof c);
    c.fd = -1;
    snprintf(c.peer, sizeof c.peer, "%s", PEER);
    tp_error err;
    memset(&err, 0, sizeof err);
    int rc = frames[row].parse(&c, body, &s, &err);
    if (rc) {
        FZ_ASSERT(rc == TP_EPROTO || (rc == TP_EUSAGE && row == 0), "%s: code %d: %s",
                  frames[row].name, rc, err.msg);
        FZ_ASSERT(err.code == rc, "%s: error code %d, returned %d", frames[row].name, err.code, rc);
        FZ_ASSERT(rc == TP_EUSAGE || strstr(err.msg, "peer " PEER),
                  "%s: the error does not name "
                  "the peer: %s",
                  frames[row].name, err.msg);
    }
    json_decref(body);
    return 0;
}
