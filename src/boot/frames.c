/* The bodies of the rank-0 star's frames (JOIN, TIME, GROUP, GATHER), from
 * JSON into what star.c uses. Nothing here touches a connection or the
 * group: star.c acts on what comes out, and fuzz/fuzz_frames.c feeds these
 * functions whatever bytes it likes. Fields go through the bounds-checking
 * accessors of tp/wire.h; array elements, which those do not reach, through
 * the same rules here. */
#include <stdint.h>
#include <string.h>

#include "tp/boot.h"
#include "tp/wire.h"

/* A string of at most max bytes without NUL, or NULL. */
static const char *str_max(const json_t *v, size_t max)
{
    if (!json_is_string(v) || json_string_length(v) > max ||
        strlen(json_string_value(v)) != json_string_length(v))
        return NULL;
    return json_string_value(v);
}

/* The array field key of body with exactly n elements, or NULL. */
static const json_t *array_of(struct tp_conn *c, const json_t *body, const char *key, size_t n,
                              tp_error *err)
{
    const json_t *a = json_object_get(body, key);
    if (!json_is_array(a) || json_array_size(a) != n) {
        tp_error_set(err, TP_EPROTO, "peer %s: field '%s' is not an array of %zu", c->peer, key, n);
        return NULL;
    }
    return a;
}

int tp_boot_parse_join(struct tp_conn *c, const json_t *body, int size, struct tp_boot_join *out,
                       tp_error *err)
{
    uint64_t rank, their_size;
    int rc;
    memset(out, 0, sizeof *out);
    if (size < 2 || size > TP_BOOT_MAX_RANKS)
        return tp_error_set(err, TP_EPROTO, "peer %s: JOIN to a group of %d ranks", c->peer, size);
    if ((rc = tp_wire_u64(c, body, "rank", 1, (uint64_t)size - 1, &rank, err)) ||
        (rc = tp_wire_u64(c, body, "size", 1, TP_BOOT_MAX_RANKS, &their_size, err)) ||
        (rc = tp_wire_str(c, body, "host", TP_BOOT_MAX_HOST, &out->host, err)))
        return rc;
    out->options = json_object_get(body, "options");
    if (!json_is_object(out->options))
        return tp_error_set(err, TP_EPROTO, "peer %s: field 'options' missing or not an object",
                            c->peer);
    out->rank = (int)rank;
    out->size = (int)their_size;
    return 0;
}

int tp_boot_parse_time(struct tp_conn *c, const json_t *body, int64_t *t, tp_error *err)
{
    uint64_t v;
    int rc = tp_wire_u64(c, body, "t", 0, INT64_MAX, &v, err);
    if (!rc)
        *t = (int64_t)v;
    return rc;
}

/* The ranks an optional "gone" array of body names (each in 1..size - 1)
 * set in gone[]; what, the frame as an error names it. */
static int gone_of(struct tp_conn *c, const json_t *body, const char *what, int size, bool *gone,
                   tp_error *err)
{
    const json_t *g = json_object_get(body, "gone"), *v;
    size_t i;
    if (g && !json_is_array(g))
        return tp_error_set(err, TP_EPROTO, "peer %s: %s's gone is not an array", c->peer, what);
    json_array_foreach(g, i, v) {
        json_int_t r = json_is_integer(v) ? json_integer_value(v) : 0;
        if (r < 1 || r >= size)
            return tp_error_set(err, TP_EPROTO, "peer %s: %s's gone names a rank not in 1..%d",
                                c->peer, what, size - 1);
        gone[r] = true;
    }
    return 0;
}

int tp_boot_parse_group(struct tp_conn *c, const json_t *body, int size, const char **hosts,
                        int64_t *offset, uint64_t *rtt, bool *gone, tp_error *err)
{
    if (size < 1 || size > TP_BOOT_MAX_RANKS)
        return tp_error_set(err, TP_EPROTO, "peer %s: GROUP for a group of %d ranks", c->peer,
                            size);
    const json_t *h, *o, *t;
    if (!(h = array_of(c, body, "hosts", (size_t)size, err)) ||
        !(o = array_of(c, body, "offsets", (size_t)size, err)) ||
        !(t = array_of(c, body, "rtts", (size_t)size, err)))
        return err->code;
    for (size_t r = 0; r < (size_t)size; r++) {
        const json_t *ov = json_array_get(o, r), *tv = json_array_get(t, r);
        if (!(hosts[r] = str_max(json_array_get(h, r), TP_BOOT_MAX_HOST)))
            return tp_error_set(err, TP_EPROTO,
                                "peer %s: host of rank %zu is not a string of at most %d bytes",
                                c->peer, r, TP_BOOT_MAX_HOST);
        if (!json_is_integer(ov) || !json_is_integer(tv) || json_integer_value(tv) < 0)
            return tp_error_set(err, TP_EPROTO,
                                "peer %s: clock offset or round trip of rank %zu is not an "
                                "integer (a round trip at least 0)",
                                c->peer, r);
        offset[r] = json_integer_value(ov);
        rtt[r] = (uint64_t)json_integer_value(tv);
        gone[r] = false;
    }
    return gone_of(c, body, "GROUP", size, gone, err);
}

int tp_boot_parse_lean_group(struct tp_conn *c, const json_t *body, int size,
                             struct tp_boot_lean *out, bool *gone, tp_error *err)
{
    uint64_t rtt, local;
    int rc;
    memset(out, 0, sizeof *out);
    if (size < 2 || size > TP_BOOT_MAX_RANKS)
        return tp_error_set(err, TP_EPROTO, "peer %s: GROUP for a group of %d ranks", c->peer,
                            size);
    const json_t *off = json_object_get(body, "offset");
    if (!json_is_true(json_object_get(body, "lean")))
        return tp_error_set(err, TP_EPROTO, "peer %s: field 'lean' is not true", c->peer);
    if (!(out->host0 = str_max(json_object_get(body, "host0"), TP_BOOT_MAX_HOST)))
        return tp_error_set(err, TP_EPROTO,
                            "peer %s: host of rank 0 is not a string of at most %d bytes",
                            c->peer, TP_BOOT_MAX_HOST);
    if (!json_is_integer(off))
        return tp_error_set(err, TP_EPROTO, "peer %s: field 'offset' is not an integer", c->peer);
    if ((rc = tp_wire_u64(c, body, "rtt", 0, INT64_MAX, &rtt, err)) ||
        (rc = tp_wire_u64(c, body, "local_rank", 0, (uint64_t)size - 1, &local, err)))
        return rc;
    out->offset = json_integer_value(off);
    out->rtt = rtt;
    out->local_rank = (int)local;
    for (int r = 0; r < size; r++)
        gone[r] = false;
    return gone_of(c, body, "GROUP", size, gone, err);
}

int tp_boot_parse_gone(struct tp_conn *c, const json_t *body, int size, bool *gone, tp_error *err)
{
    if (size < 1 || size > TP_BOOT_MAX_RANKS)
        return tp_error_set(err, TP_EPROTO, "peer %s: GATHER for a group of %d ranks", c->peer,
                            size);
    if (!json_is_array(json_object_get(body, "gone")))
        return tp_error_set(err, TP_EPROTO, "peer %s: the barrier's answer has no gone array",
                            c->peer);
    return gone_of(c, body, "the barrier's answer", size, gone, err);
}

int tp_boot_parse_data(struct tp_conn *c, const json_t *body, size_t max, const char **data,
                       bool *more, tp_error *err)
{
    int rc = tp_wire_str(c, body, "data", max, data, err);
    if (!rc && more)
        rc = tp_wire_bool(c, body, "more", more, err);
    return rc;
}

int tp_boot_parse_all(struct tp_conn *c, const json_t *body, int size, const char **all,
                      tp_error *err)
{
    if (size < 1 || size > TP_BOOT_MAX_RANKS)
        return tp_error_set(err, TP_EPROTO, "peer %s: GATHER for a group of %d ranks", c->peer,
                            size);
    const json_t *a = array_of(c, body, "all", (size_t)size, err);
    if (!a)
        return err->code;
    for (size_t r = 0; r < (size_t)size; r++) {
        const json_t *v = json_array_get(a, r);
        if (r > 0 && json_is_null(v)) { /* left out */
            all[r] = NULL;
            continue;
        }
        if (!(all[r] = str_max(v, TP_BOOT_MAX_BLOB)))
            return tp_error_set(err, TP_EPROTO,
                                "peer %s: rank %zu's part is not a string of at most %d bytes%s",
                                c->peer, r, TP_BOOT_MAX_BLOB, r > 0 ? " or null" : "");
    }
    return 0;
}
