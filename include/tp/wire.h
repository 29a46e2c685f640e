/* Control protocol: length-prefixed frames over one TCP connection. A frame
 * is a 12-byte header (magic "TPC1", type, flags, payload length; network
 * byte order) and a JSON object payload of at most TP_WIRE_MAX_PAYLOAD
 * bytes. Every length and field read from the wire is bounds-checked before
 * use; a malformed or oversized frame is TP_EPROTO naming the peer, and the
 * caller closes that connection. Every frame, sent or received, is whole
 * within the connection's timeout (a peer that trickles is as late as one
 * that is silent), and a connection may bound a whole exchange as well. */
#ifndef TP_WIRE_H
#define TP_WIRE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "tp/error.h"

#define TP_WIRE_MAGIC 0x54504331u /* "TPC1" */
#define TP_WIRE_MAX_PAYLOAD 65536u
#define TP_WIRE_DEFAULT_PORT 7471
#define TP_WIRE_PROTO 1

enum tp_frame {
    TP_F_HELLO = 1,   /* server -> client: proto, auth, nonce */
    TP_F_AUTH = 2,    /* client -> server: client nonce, mac */
    TP_F_WELCOME = 3, /* server -> client: server mac */
    TP_F_BUSY = 4,    /* server -> client: another test is running */
    TP_F_REJECT = 5,  /* server -> client: authentication refused */
    TP_F_REQUEST = 6, /* client -> server: the test and its data path */
    TP_F_ACCEPT = 7,  /* server -> client: data-path addresses */
    TP_F_CONNECT = 8, /* client -> server: client data-path addresses */
    TP_F_RUN = 9,     /* client -> server: run one phase */
    TP_F_DONE = 10,   /* server -> client: phase finished, server-side figures */
    TP_F_STOP = 11,   /* client -> server: stop background flows */
    TP_F_ERROR = 12,  /* either way: {code, message} */
    TP_F_BYE = 13,    /* client -> server: end of test */
    TP_F_JOIN = 14,   /* boot: rank -> rank 0: rank, size, host, options */
    TP_F_GROUP = 15,  /* boot: rank 0 -> rank: everyone's host and clock offset */
    TP_F_GATHER = 16, /* boot: allgather contribution, and the gathered result */
    TP_F_TIME = 17,   /* boot: clock probe and its answer */
    TP_F_MAX = 17
};

/* One end of a control connection. peer names it in every message. */
struct tp_conn {
    int fd;
    char peer[80];       /* "127.0.0.1:7471" */
    char local_ip[64];   /* numeric IP of our end */
    uint64_t timeout_ns;  /* each frame, sent or received, whole within this */
    uint64_t deadline_ns; /* 0, or an absolute tp_now_ns() bound on every frame: a
                             whole exchange (a handshake, a session) within it */
    bool peer_said_error; /* an ERROR frame came (tp_wire_expect): the peer was there */
    uint64_t bytes_sent, bytes_received; /* the frames' bytes so far, headers included */
};

/* Connect to host:port (name or numeric; IPv4 or IPv6) within timeout_ns.
 * TP_EUSAGE for an unresolvable host, TP_EPEER for refused/unreachable;
 * an interrupt (tp_intr) ends the wait within 250 ms: TP_EINTR/TP_ETERM. */
int tp_conn_connect(struct tp_conn *c, const char *host, int port, uint64_t timeout_ns,
                    tp_error *err);

/* Listen on host:port (port 0 picks a free one, returned in *bound_port).
 * what names the input in errors ("--bind", "MASTER_ADDR"). *loopback says
 * whether the address is a loopback one (callers refuse to expose an
 * unauthenticated service beyond it). TP_EUSAGE for an unresolvable host or
 * a port in use. */
int tp_listen(const char *host, int port, const char *what, int *fd, int *bound_port,
              bool *loopback, tp_error *err);

/* Wrap an accepted socket. */
void tp_conn_from_fd(struct tp_conn *c, int fd, uint64_t timeout_ns);

/* Close the socket (idempotent). */
void tp_conn_close(struct tp_conn *c);

/* Send one frame; body may be NULL (sent as {}). Does not steal body. */
int tp_wire_send(struct tp_conn *c, enum tp_frame type, const json_t *body, tp_error *err);

/* Receive one frame; *body is a new reference to a JSON object. */
int tp_wire_recv(struct tp_conn *c, enum tp_frame *type, json_t **body, tp_error *err);

/* Receive a frame of type want. An ERROR frame becomes the peer's code and
 * message; BUSY becomes TP_EBUSY; REJECT TP_EAUTH; any other type
 * TP_EPROTO. */
int tp_wire_expect(struct tp_conn *c, enum tp_frame want, json_t **body, tp_error *err);

/* Send an ERROR frame carrying err (best effort; failures ignored). */
void tp_wire_send_error(struct tp_conn *c, const tp_error *err);

/* Field accessors that bounds-check what came from the wire: a missing field
 * or one of the wrong type or out of [lo, hi] is TP_EPROTO naming the field
 * and the peer. */
int tp_wire_u64(struct tp_conn *c, const json_t *o, const char *key, uint64_t lo, uint64_t hi,
                uint64_t *out, tp_error *err);
int tp_wire_str(struct tp_conn *c, const json_t *o, const char *key, size_t max_len,
                const char **out, tp_error *err);
int tp_wire_bool(struct tp_conn *c, const json_t *o, const char *key, bool *out, tp_error *err);

/* --- authentication (auth.c) --- */

#define TP_KEY_MIN 16
#define TP_KEY_MAX 4096

struct tp_key {
    bool set;
    size_t len;
    unsigned char bytes[TP_KEY_MAX];
};

/* Load a pre-shared key from path, a regular file (whitespace around the key
 * trimmed; a warning is logged when others may read or write it). TP_EUSAGE
 * naming the path when unreadable, not a regular file, shorter than
 * TP_KEY_MIN or longer than TP_KEY_MAX bytes. */
int tp_key_load(struct tp_key *k, const char *path, tp_error *err);

/* Server side of the handshake: send HELLO, read AUTH, verify the client's
 * HMAC-SHA256 over both nonces in constant time, answer WELCOME with the
 * server's own proof, or REJECT. key may be unset: then any client passes,
 * unless it insists on authentication. */
int tp_auth_server(struct tp_conn *c, const struct tp_key *key, tp_error *err);

/* Client side: read HELLO (BUSY becomes TP_EBUSY), answer AUTH, read and
 * check WELCOME. With a key, a server that cannot prove the same key is
 * TP_EAUTH. */
int tp_auth_client(struct tp_conn *c, const struct tp_key *key, tp_error *err);

#endif
