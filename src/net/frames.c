/* The bodies of the frames a net server reads (REQUEST, CONNECT, RUN), from
 * JSON into their structs. Nothing here touches a transport, the session or
 * memory beyond the output: serve.c acts on what comes out, and
 * fuzz/fuzz_frames.c feeds these functions whatever bytes it likes. Every
 * field goes through the bounds-checking accessors of tp/wire.h. */
#include <string.h>

#include "tp/net.h"
#include "tp/wire.h"

/* The flow kinds, by the names a REQUEST carries. */
static const struct {
    const char *name;
    enum tp_net_flow kind;
} kinds[] = {
    {"pingpong", TP_NET_FLOW_PINGPONG},
    {"c2s", TP_NET_FLOW_C2S},
    {"s2c", TP_NET_FLOW_S2C},
};

static int kind_of(const json_t *v, enum tp_net_flow *k)
{
    const char *s = json_string_value(v);
    for (size_t i = 0; s && i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(s, kinds[i].name) == 0) {
            *k = kinds[i].kind;
            return 0;
        }
    return -1;
}

int tp_net_parse_request(struct tp_conn *c, const json_t *body, struct tp_net_request *out,
                         tp_error *err)
{
    const char *mode, *mem = "host";
    int rc;
    memset(out, 0, sizeof *out);
    if ((rc = tp_wire_str(c, body, "transport", 16, &out->transport, err)) ||
        (rc = tp_wire_str(c, body, "mode", 8, &mode, err)) ||
        (rc = tp_wire_u64(c, body, "max_msg", 1, TP_NET_MAX_MSG, &out->max_msg, err)) ||
        (rc = tp_wire_u64(c, body, "window", 1, TP_NET_MAX_WINDOW, &out->window, err)) ||
        (rc =
             tp_wire_u64(c, body, "timeout_ms", 1, TP_NET_MAX_TIMEOUT_MS, &out->timeout_ms, err)) ||
        (rc = tp_wire_bool(c, body, "busy_poll", &out->busy_poll, err)) ||
        (rc = tp_wire_bool(c, body, "check", &out->check, err)))
        return rc;
    if (json_object_get(body, "provider") &&
        (rc = tp_wire_str(c, body, "provider", 64, &out->provider, err)))
        return rc;
    /* absent means host, as from clients before --mem */
    if (json_object_get(body, "mem") && (rc = tp_wire_str(c, body, "mem", 8, &mem, err)))
        return rc;
    if (strcmp(mem, "host") != 0 && strcmp(mem, "cuda") != 0)
        return tp_error_set(err, TP_EPROTO, "peer %s: mem '%s' is not host or cuda", c->peer, mem);
    out->cuda = strcmp(mem, "cuda") == 0;
    if (strcmp(mode, "msg") != 0 && strcmp(mode, "rma") != 0)
        return tp_error_set(err, TP_EPROTO, "peer %s: mode '%s' is not msg or rma", c->peer, mode);
    out->rma = strcmp(mode, "rma") == 0;
    const json_t *flows = json_object_get(body, "flows");
    if (!json_is_array(flows) || json_array_size(flows) < 1 ||
        json_array_size(flows) > TP_NET_MAX_FLOWS)
        return tp_error_set(err, TP_EPROTO, "peer %s: 'flows' must be an array of 1..%d", c->peer,
                            TP_NET_MAX_FLOWS);
    for (size_t i = 0; i < json_array_size(flows); i++)
        if (kind_of(json_array_get(flows, i), &out->kind[i]) != 0)
            return tp_error_set(err, TP_EPROTO, "peer %s: flow %zu has no valid kind", c->peer, i);
    out->nflows = json_array_size(flows);
    /* what the endpoints would allocate and pin: refuse a request that would
     * exhaust the server's memory before touching any of it (at most
     * 2^30 x (4096 + 1) x 65 bytes: no overflow) */
    uint64_t per_ep = out->max_msg * (out->check ? out->window : 1) + out->max_msg;
    out->buffer_bytes = per_ep * out->nflows;
    if (out->buffer_bytes > TP_NET_MAX_BUFFER_BYTES)
        return tp_error_set(err, TP_EUSAGE,
                            "the test needs %.1f GiB of buffers on the server (message size x "
                            "window with --check x flows); the limit is %.0f GiB",
                            (double)out->buffer_bytes / 1073741824.0,
                            (double)TP_NET_MAX_BUFFER_BYTES / 1073741824.0);
    return 0;
}

int tp_net_parse_connect(struct tp_conn *c, const json_t *body, size_t nflows, const char **addr,
                         tp_error *err)
{
    const json_t *addrs = json_object_get(body, "flows");
    if (!json_is_array(addrs) || json_array_size(addrs) != nflows)
        return tp_error_set(err, TP_EPROTO, "peer %s: CONNECT must carry %zu addresses", c->peer,
                            nflows);
    for (size_t i = 0; i < nflows; i++) {
        const json_t *a = json_array_get(addrs, i);
        if (!json_is_string(a) || json_string_length(a) > TP_NET_MAX_ADDRESS ||
            strlen(json_string_value(a)) != json_string_length(a))
            return tp_error_set(err, TP_EPROTO,
                                "peer %s: address %zu is not a string of at most %d bytes", c->peer,
                                i, TP_NET_MAX_ADDRESS);
        addr[i] = json_string_value(a);
    }
    return 0;
}

int tp_net_parse_run(struct tp_conn *c, const json_t *body, size_t nflows, uint64_t max_msg,
                     struct tp_net_run_req *out, tp_error *err)
{
    int rc;
    memset(out, 0, sizeof *out);
    if ((rc = tp_wire_u64(c, body, "size", 1, max_msg, &out->size, err)) ||
        (rc = tp_wire_u64(c, body, "count", 0, UINT64_MAX >> 2, &out->count, err)))
        return rc;
    const json_t *idx = json_object_get(body, "flows");
    size_t n = json_array_size(idx);
    if (!json_is_array(idx) || n < 1 || n > nflows || n > TP_NET_MAX_FLOWS)
        return tp_error_set(err, TP_EPROTO, "peer %s: RUN needs 1..%zu flow indices", c->peer,
                            nflows);
    bool named[TP_NET_MAX_FLOWS] = {false};
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_array_get(idx, i);
        if (!json_is_integer(v) || json_integer_value(v) < 0 ||
            (uint64_t)json_integer_value(v) >= nflows || json_integer_value(v) >= TP_NET_MAX_FLOWS)
            return tp_error_set(err, TP_EPROTO, "peer %s: bad flow index in RUN", c->peer);
        size_t f = (size_t)json_integer_value(v);
        if (named[f])
            return tp_error_set(err, TP_EPROTO, "peer %s: flow %zu named twice in RUN", c->peer, f);
        named[f] = true;
        out->flow[i] = f;
    }
    out->n = n;
    return 0;
}
