/* Fuzz target: control-protocol frames as a peer sends them. The input is
 * the byte stream a peer wrote on the control connection: it is written
 * into one end of a socketpair (the writing end then shut, so the reader
 * meets end-of-stream rather than its deadline) and the other end reads
 * frames until the first error, alternating tp_wire_recv and
 * tp_wire_expect and reading each body through the bounds-checking field
 * accessors, as the server and client do. */
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "tp/wire.h"

/* the keys the protocol's bodies carry */
static const char *const keys[] = {"proto",   "nonce", "mac",  "auth", "version", "code",
                                   "message", "test",  "size", "port", "rank",    "host"};

static void read_fields(struct tp_conn *c, const json_t *body)
{
    tp_error err;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        uint64_t u = 0;
        const char *s = NULL;
        bool b;
        if (tp_wire_u64(c, body, keys[i], 1, 1000, &u, &err) == 0)
            FZ_ASSERT(u >= 1 && u <= 1000, "%s = %llu outside its bounds", keys[i],
                      (unsigned long long)u);
        if (tp_wire_str(c, body, keys[i], 64, &s, &err) == 0)
            FZ_ASSERT(s && strlen(s) <= 64, "%s longer than its bound", keys[i]);
        (void)tp_wire_bool(c, body, keys[i], &b, &err);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int peer, fd = fz_stream(data, size, &peer);
    if (fd < 0)
        return 0;
    struct tp_conn c;
    tp_conn_from_fd(&c, fd, 2000000000ull);
    tp_error err;
    for (unsigned k = 0;; k++) {
        enum tp_frame t = 0;
        json_t *body = NULL;
        int rc;
        if (k % 2 == 0) {
            rc = tp_wire_recv(&c, &t, &body, &err);
            if (rc == 0)
                FZ_ASSERT(t >= 1 && t <= TP_F_MAX, "frame type %d accepted", (int)t);
        } else {
            rc = tp_wire_expect(&c, (enum tp_frame)(1 + k / 2 % TP_F_MAX), &body, &err);
        }
        if (rc) {
            FZ_ASSERT(rc < 0 && err.msg[0], "error %d without a message", rc);
            FZ_ASSERT(rc != TP_ETIMEOUT, "waited out the deadline on a closed stream");
            break;
        }
        FZ_ASSERT(json_is_object(body), "a frame body that is not an object");
        read_fields(&c, body);
        json_decref(body);
    }
    tp_conn_close(&c);
    close(peer);
    return 0;
}
