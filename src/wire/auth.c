/* Pre-shared-key authentication of the control channel, both ways. Each side
 * sends a fresh 32-byte nonce; the client proves the key with
 * HMAC-SHA256(key, "trainpath-client" | server_nonce | client_nonce) and the
 * server answers with HMAC-SHA256(key, "trainpath-server" | client_nonce |
 * server_nonce). Distinct labels stop one side's proof being replayed as the
 * other's; fresh nonces stop replay across sessions; proofs are compared with
 * libsodium's constant-time crypto_verify_32. The key never crosses the wire. */
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tp/file.h"
#include "tp/log.h"
#include "tp/version.h"
#include "tp/wire.h"

#define NONCE 32
#define MAC crypto_auth_hmacsha256_BYTES

static bool blank(unsigned char c)
{
    return c == '\n' || c == '\r' || c == ' ' || c == '\t';
}

int tp_key_load(struct tp_key *k, const char *path, tp_error *err)
{
    memset(k, 0, sizeof *k);
    char *text;
    size_t n;
    /* a regular file, and small: a FIFO or /dev/zero named by mistake must
     * not block or fill memory */
    int rc = tp_file_read(path, "a key file", TP_FILE_MAX_KEY, TP_FILE_REGULAR, &text, &n, err);
    if (rc) {
        tp_error_prefix(err, "--key-file");
        return rc;
    }
    struct stat st;
    if (stat(path, &st) == 0 && (st.st_mode & 0077))
        tp_log(TP_LOG_WARN,
               "--key-file %s: readable or writable by others (mode %04o): anyone on this host "
               "who reads it can run tests; chmod 600 %s",
               path, (unsigned)(st.st_mode & 07777), path);
    /* whitespace around the key is not part of it (an editor's newline, an
     * indented heredoc) */
    size_t a = 0;
    while (a < n && blank((unsigned char)text[a]))
        a++;
    while (n > a && blank((unsigned char)text[n - 1]))
        n--;
    n -= a;
    if (n > TP_KEY_MAX) {
        sodium_memzero(text, strlen(text));
        free(text);
        return tp_error_set(err, TP_EUSAGE, "--key-file %s: key longer than %d bytes", path,
                            TP_KEY_MAX);
    }
    memcpy(k->bytes, text + a, n);
    sodium_memzero(text, n + a);
    free(text);
    if (n < TP_KEY_MIN)
        return tp_error_set(err, TP_EUSAGE,
                            "--key-file %s: key is %zu bytes, need at least %d (try: head -c 32 "
                            "/dev/urandom | base64 > %s)",
                            path, n, TP_KEY_MIN, path);
    k->len = n;
    k->set = true;
    return 0;
}

static void hexenc(char *out, const unsigned char *in, size_t n)
{
    sodium_bin2hex(out, 2 * n + 1, in, n);
}

static int hexdec(struct tp_conn *c, const json_t *o, const char *key, unsigned char *out, size_t n,
                  tp_error *err)
{
    const char *s;
    int rc = tp_wire_str(c, o, key, 2 * n, &s, err);
    if (rc)
        return rc;
    size_t got = 0;
    if (strlen(s) != 2 * n || sodium_hex2bin(out, n, s, strlen(s), NULL, &got, NULL) != 0 ||
        got != n)
        return tp_error_set(err, TP_EPROTO, "peer %s: field '%s' is not %zu hex bytes", c->peer,
                            key, n);
    return 0;
}

static void proof(const struct tp_key *k, const char *label, const unsigned char *a,
                  const unsigned char *b, unsigned char *mac)
{
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init(&st, k->bytes, k->len);
    crypto_auth_hmacsha256_update(&st, (const unsigned char *)label, strlen(label));
    crypto_auth_hmacsha256_update(&st, a, NONCE);
    crypto_auth_hmacsha256_update(&st, b, NONCE);
    crypto_auth_hmacsha256_final(&st, mac);
}

static int reject(struct tp_conn *c, const char *why, tp_error *err)
{
    json_t *j = json_pack("{s:s}", "message", why);
    tp_error ignored;
    tp_wire_send(c, TP_F_REJECT, j, &ignored);
    json_decref(j);
    return tp_error_set(err, TP_EAUTH, "client %s rejected: %s", c->peer, why);
}

int tp_auth_server(struct tp_conn *c, const struct tp_key *key, tp_error *err)
{
    if (sodium_init() < 0)
        return tp_error_set(err, TP_ESYS, "libsodium failed to initialise");
    unsigned char sn[NONCE], cn[NONCE], mac[MAC], want[MAC];
    char hex[2 * MAC + 1];
    randombytes_buf(sn, sizeof sn);
    hexenc(hex, sn, NONCE);
    json_t *hello = json_pack("{s:i, s:s, s:s, s:s}", "proto", TP_WIRE_PROTO, "version",
                              tp_version(), "auth", key->set ? "hmac-sha256" : "none", "nonce", hex);
    int rc = tp_wire_send(c, TP_F_HELLO, hello, err);
    json_decref(hello);
    if (rc)
        return rc;
    json_t *a = NULL;
    if ((rc = tp_wire_expect(c, TP_F_AUTH, &a, err)))
        return rc;
    uint64_t proto;
    if ((rc = tp_wire_u64(c, a, "proto", 1, 1000, &proto, err)) ||
        (rc = hexdec(c, a, "nonce", cn, NONCE, err))) {
        json_decref(a);
        return rc;
    }
    if (proto != TP_WIRE_PROTO) {
        json_decref(a);
        char why[96];
        snprintf(why, sizeof why, "protocol %llu, this server speaks %d", (unsigned long long)proto,
                 TP_WIRE_PROTO);
        return reject(c, why, err);
    }
    if (key->set) {
        if (!json_object_get(a, "mac")) {
            json_decref(a);
            return reject(c, "this server requires a key (--key-file)", err);
        }
        rc = hexdec(c, a, "mac", mac, MAC, err);
        json_decref(a);
        if (rc)
            return rc;
        proof(key, "trainpath-client", sn, cn, want);
        if (crypto_verify_32(mac, want) != 0)
            return reject(c, "wrong key", err);
        proof(key, "trainpath-server", cn, sn, mac);
        hexenc(hex, mac, MAC);
        json_t *w = json_pack("{s:s}", "mac", hex);
        rc = tp_wire_send(c, TP_F_WELCOME, w, err);
        json_decref(w);
        return rc;
    }
    json_decref(a);
    return tp_wire_send(c, TP_F_WELCOME, NULL, err);
}

int tp_auth_client(struct tp_conn *c, const struct tp_key *key, tp_error *err)
{
    if (sodium_init() < 0)
        return tp_error_set(err, TP_ESYS, "libsodium failed to initialise");
    json_t *h = NULL;
    int rc = tp_wire_expect(c, TP_F_HELLO, &h, err);
    if (rc)
        return rc;
    unsigned char sn[NONCE], cn[NONCE], mac[MAC];
    char hex[2 * MAC + 1], nhex[2 * NONCE + 1];
    const char *mode;
    uint64_t proto;
    if ((rc = tp_wire_u64(c, h, "proto", 1, 1000, &proto, err)) ||
        (rc = tp_wire_str(c, h, "auth", 32, &mode, err)) ||
        (rc = hexdec(c, h, "nonce", sn, NONCE, err))) {
        json_decref(h);
        return rc;
    }
    bool server_auth = strcmp(mode, "hmac-sha256") == 0;
    json_decref(h);
    if (proto != TP_WIRE_PROTO)
        return tp_error_set(err, TP_EPROTO, "server %s speaks protocol %llu, we speak %d", c->peer,
                            (unsigned long long)proto, TP_WIRE_PROTO);
    if (key->set && !server_auth)
        return tp_error_set(err, TP_EAUTH,
                            "server %s does not authenticate, but --key-file was given; "
                            "refusing an unauthenticated server",
                            c->peer);
    randombytes_buf(cn, sizeof cn);
    hexenc(nhex, cn, NONCE);
    json_t *a = json_pack("{s:i, s:s}", "proto", TP_WIRE_PROTO, "nonce", nhex);
    if (key->set) {
        proof(key, "trainpath-client", sn, cn, mac);
        hexenc(hex, mac, MAC);
        json_object_set_new(a, "mac", json_string(hex));
    }
    rc = tp_wire_send(c, TP_F_AUTH, a, err);
    json_decref(a);
    if (rc)
        return rc;
    json_t *w = NULL;
    if ((rc = tp_wire_expect(c, TP_F_WELCOME, &w, err))) {
        if (rc == TP_EAUTH && !key->set && server_auth)
            tp_error_set(err, TP_EAUTH, "server %s requires a key: pass --key-file", c->peer);
        return rc;
    }
    if (key->set) {
        unsigned char want[MAC];
        rc = hexdec(c, w, "mac", mac, MAC, err);
        json_decref(w);
        if (rc)
            return rc;
        proof(key, "trainpath-server", cn, sn, want);
        if (crypto_verify_32(mac, want) != 0)
            return tp_error_set(err, TP_EAUTH, "server %s failed to prove the shared key", c->peer);
        return 0;
    }
    json_decref(w);
    return 0;
}
