/* Control protocol: framing round trips, every malformed-frame rejection,
 * field bounds, deadlines, and the key handshake in both directions. Each
 * test talks over a socketpair, with the peer in a thread where needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tp/clock.h"
#include "tp/pattern.h"
#include "tp/wire.h"

#define MS 1000000ull

static void pair(struct tp_conn *a, struct tp_conn *b, uint64_t timeout_ns)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    memset(a, 0, sizeof *a);
    memset(b, 0, sizeof *b);
    a->fd = sv[0];
    b->fd = sv[1];
    a->timeout_ns = b->timeout_ns = timeout_ns;
    strcpy(a->peer, "peer-b");
    strcpy(b->peer, "peer-a");
}

static void raw(int fd, uint32_t magic, uint32_t type, uint32_t len, const char *payload)
{
    uint32_t h[3] = {htonl(magic), htonl(type << 16), htonl(len)};
    assert_int_equal(write(fd, h, sizeof h), (ssize_t)sizeof h);
    if (payload)
        assert_int_equal(write(fd, payload, strlen(payload)), (ssize_t)strlen(payload));
}

static void expect_err(int got, int want, const tp_error *err, const char *needle)
{
    if (got != want || !strstr(err->msg, needle))
        fail_msg("want code %d with '%s', got %d: '%s'", want, needle, got, err->msg);
}

static void frame_round_trip(void **state)
{
    (void)state;
    struct tp_conn a, b;
    pair(&a, &b, 1000 * MS);
    json_t *body = json_pack("{s:s, s:I}", "k", "v", "n", (json_int_t)1234567890123);
    tp_error err;
    assert_int_equal(tp_wire_send(&a, TP_F_RUN, body, &err), 0);
    enum tp_frame t;
    json_t *got = NULL;
    assert_int_equal(tp_wire_recv(&b, &t, &got, &err), 0);
    assert_int_equal(t, TP_F_RUN);
    assert_true(json_equal(body, got));
    json_decref(body);
    json_decref(got);
    tp_conn_close(&a);
    tp_conn_close(&b);
}

static void malformed_frames(void **state)
{
    (void)state;
    struct {
        uint32_t magic, type, len;
        const char *payload;
        const char *needle;
    } cases[] = {
        {0x47455420, 1, 2, "{}", "bad magic 0x47455420"},
        {TP_WIRE_MAGIC, 2, 1u << 30, NULL, "1073741824 bytes, over the 65536-byte limit"},
        {TP_WIRE_MAGIC, 2, TP_WIRE_MAX_PAYLOAD + 1, NULL, "over the 65536-byte limit"},
        {TP_WIRE_MAGIC, 99, 2, "{}", "unknown type 99"},
        {TP_WIRE_MAGIC, 0, 2, "{}", "unknown type 0"},
        {TP_WIRE_MAGIC, 2, 5, "{{{{{", "not a JSON object"},
        {TP_WIRE_MAGIC, 2, 2, "[]", "not a JSON object"},
        {TP_WIRE_MAGIC, 2, 13, "{\"a\":1,\"a\":2}", "not a JSON object"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct tp_conn a, b;
        pair(&a, &b, 500 * MS);
        raw(a.fd, cases[i].magic, cases[i].type, cases[i].len, cases[i].payload);
        enum tp_frame t;
        json_t *got = NULL;
        tp_error err;
        int rc = tp_wire_recv(&b, &t, &got, &err);
        expect_err(rc, TP_EPROTO, &err, cases[i].needle);
        assert_non_null(strstr(err.msg, "peer-a"));
        assert_null(got);
        tp_conn_close(&a);
        tp_conn_close(&b);
    }
}

static void deadline_and_close(void **state)
{
    (void)state;
    struct tp_conn a, b;
    pair(&a, &b, 150 * MS);
    tp_clock_init();
    enum tp_frame t;
    json_t *got = NULL;
    tp_error err;
    uint64_t t0 = tp_now_ns();
    expect_err(tp_wire_recv(&b, &t, &got, &err), TP_ETIMEOUT, &err, "peer-a did not answer");
    uint64_t waited = tp_now_ns() - t0;
    assert_true(waited >= 140 * MS); /* it waited, rather than failing at once */
    /* a header, then the peer goes away mid-frame */
    raw(a.fd, TP_WIRE_MAGIC, 2, 100, "{\"partial\":");
    tp_conn_close(&a);
    expect_err(tp_wire_recv(&b, &t, &got, &err), TP_EPEER, &err,
               "peer peer-a closed the control connection");
    tp_conn_close(&b);
}

static void expect_maps_frames(void **state)
{
    (void)state;
    struct tp_conn a, b;
    pair(&a, &b, 500 * MS);
    tp_error err, sent;
    json_t *got = NULL;
    /* a peer's "usage" is the peer failing this run (exit 1), not bad
     * input of ours (exit 2): its words are kept */
    tp_error_set(&sent, TP_EUSAGE, "unknown provider 'x'");
    tp_wire_send_error(&a, &sent);
    expect_err(tp_wire_expect(&b, TP_F_DONE, &got, &err), TP_EPEER, &err,
               "peer peer-a: unknown provider 'x'");
    tp_wire_send(&a, TP_F_BUSY, NULL, &err);
    expect_err(tp_wire_expect(&b, TP_F_DONE, &got, &err), TP_EBUSY, &err, "is busy");
    tp_wire_send(&a, TP_F_ACCEPT, NULL, &err);
    expect_err(tp_wire_expect(&b, TP_F_DONE, &got, &err), TP_EPROTO, &err,
               "sent ACCEPT where DONE was expected");
    tp_conn_close(&a);
    tp_conn_close(&b);
}

static void field_bounds(void **state)
{
    (void)state;
    struct tp_conn c = {.fd = -1};
    strcpy(c.peer, "p");
    json_t *o =
        json_pack("{s:I, s:I, s:s, s:s, s:b, s:f}", "size", (json_int_t)64, "neg", (json_int_t)-1,
                  "name", "shm", "long", "0123456789abcdef", "flag", 1, "real", 1.5);
    uint64_t v;
    const char *s;
    bool b;
    tp_error err;
    assert_int_equal(tp_wire_u64(&c, o, "size", 1, 100, &v, &err), 0);
    assert_int_equal(v, 64);
    expect_err(tp_wire_u64(&c, o, "size", 65, 100, &v, &err), TP_EPROTO, &err,
               "'size' = 64 outside [65, 100]");
    expect_err(tp_wire_u64(&c, o, "neg", 0, 100, &v, &err), TP_EPROTO, &err, "'neg' = -1");
    expect_err(tp_wire_u64(&c, o, "real", 0, 100, &v, &err), TP_EPROTO, &err,
               "'real' missing or not an integer");
    expect_err(tp_wire_u64(&c, o, "absent", 0, 100, &v, &err), TP_EPROTO, &err, "'absent' missing");
    assert_int_equal(tp_wire_str(&c, o, "name", 8, &s, &err), 0);
    assert_string_equal(s, "shm");
    expect_err(tp_wire_str(&c, o, "long", 8, &s, &err), TP_EPROTO, &err, "longer than 8");
    expect_err(tp_wire_str(&c, o, "size", 8, &s, &err), TP_EPROTO, &err, "not a string");
    assert_int_equal(tp_wire_bool(&c, o, "flag", &b, &err), 0);
    assert_true(b);
    expect_err(tp_wire_bool(&c, o, "name", &b, &err), TP_EPROTO, &err, "not a boolean");
    json_decref(o);
}

/* ---- authentication ---- */

struct side {
    struct tp_conn c;
    struct tp_key key;
    int rc;
    tp_error err;
};

static void *server_thread(void *arg)
{
    struct side *s = arg;
    s->rc = tp_auth_server(&s->c, &s->key, &s->err);
    return NULL;
}

static void set_key(struct tp_key *k, const char *text)
{
    memset(k, 0, sizeof *k);
    if (!text)
        return;
    k->set = true;
    k->len = strlen(text);
    memcpy(k->bytes, text, k->len);
}

static void handshake(const char *skey, const char *ckey, struct side *srv, struct side *cli)
{
    pair(&srv->c, &cli->c, 1000 * MS);
    set_key(&srv->key, skey);
    set_key(&cli->key, ckey);
    tp_error_clear(&srv->err);
    tp_error_clear(&cli->err);
    pthread_t t;
    pthread_create(&t, NULL, server_thread, srv);
    cli->rc = tp_auth_client(&cli->c, &cli->key, &cli->err);
    if (cli->rc)
        tp_conn_close(&cli->c); /* lets a server waiting for AUTH see the close */
    pthread_join(t, NULL);
    tp_conn_close(&srv->c);
    tp_conn_close(&cli->c);
}

static void auth_cases(void **state)
{
    (void)state;
    struct side s, c;
    handshake("0123456789abcdef-secret", "0123456789abcdef-secret", &s, &c);
    assert_int_equal(s.rc, 0);
    assert_int_equal(c.rc, 0);

    handshake("0123456789abcdef-secret", "0123456789abcdef-wrong!", &s, &c);
    expect_err(s.rc, TP_EAUTH, &s.err, "rejected: wrong key");
    expect_err(c.rc, TP_EAUTH, &c.err, "rejected us: wrong key");

    handshake("0123456789abcdef-secret", NULL, &s, &c);
    expect_err(s.rc, TP_EAUTH, &s.err, "requires a key");
    expect_err(c.rc, TP_EAUTH, &c.err, "requires a key: pass --key-file");

    handshake(NULL, "0123456789abcdef-secret", &s, &c);
    expect_err(c.rc, TP_EAUTH, &c.err, "does not authenticate");

    handshake(NULL, NULL, &s, &c);
    assert_int_equal(s.rc, 0);
    assert_int_equal(c.rc, 0);
}

static void key_files(void **state)
{
    (void)state;
    char path[] = "/tmp/tp-key-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    struct tp_key k;
    tp_error err;
    assert_int_equal(write(fd, "short\n", 6), 6);
    expect_err(tp_key_load(&k, path, &err), TP_EUSAGE, &err, "key is 5 bytes, need at least 16");
    assert_int_equal(ftruncate(fd, 0), 0);
    assert_int_equal(pwrite(fd, "0123456789abcdefXYZ \r\n", 22, 0), 22);
    assert_int_equal(tp_key_load(&k, path, &err), 0);
    assert_int_equal(k.len, 19); /* trailing whitespace trimmed */
    close(fd);
    unlink(path);
    expect_err(tp_key_load(&k, path, &err), TP_EUSAGE, &err, "cannot read");
    assert_non_null(strstr(err.msg, path));
}

static void pattern_detects_every_byte(void **state)
{
    (void)state;
    unsigned char buf[300];
    for (size_t len = 1; len <= sizeof buf; len += 7) {
        tp_pattern_fill(buf, len, 42 + len);
        assert_int_equal(tp_pattern_check(buf, len, 42 + len, NULL, NULL, NULL), 0);
        for (size_t off = 0; off < len; off += 5) {
            buf[off] ^= 0x01;
            size_t bad = 0;
            uint8_t want, got;
            assert_int_equal(tp_pattern_check(buf, len, 42 + len, &bad, &want, &got), -1);
            assert_int_equal(bad, off);
            assert_int_equal(want ^ got, 0x01);
            buf[off] ^= 0x01;
        }
        /* another seed is another pattern */
        assert_int_equal(tp_pattern_check(buf, len, 43 + len, NULL, NULL, NULL), -1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(frame_round_trip),   cmocka_unit_test(malformed_frames),
        cmocka_unit_test(deadline_and_close), cmocka_unit_test(expect_maps_frames),
        cmocka_unit_test(field_bounds),       cmocka_unit_test(auth_cases),
        cmocka_unit_test(key_files),          cmocka_unit_test(pattern_detects_every_byte),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
