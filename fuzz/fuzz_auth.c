/* Fuzz target: the authentication handshake, both sides. The first input
 * byte picks the side we play (bit 0: 0 the server, tp_auth_server; 1 the
 * client, tp_auth_client) and whether we hold the pre-shared key (bit 1);
 * the rest is what the other side sent, fed through a socketpair as in
 * fuzz_wire.c. libsodium's random source is replaced by a fixed one, so a
 * nonce is the same every run and the committed corpus can hold complete
 * handshakes with valid proofs (fuzz/corpus/auth, made by
 * fuzz/seeds/make_seeds.py): the fuzzer then mutates past the MAC check
 * instead of failing at it every time. */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "tp/wire.h"

#define KEY "fuzzing-key-0123456789abcdef-32b" /* 32 bytes; auth_seeds.py has it too */

/* ---- a fixed random source: byte i of every request is i ---- */

static const char *fixed_name(void)
{
    return "fuzz-fixed";
}

static void fixed_buf(void *const buf, const size_t size)
{
    for (size_t i = 0; i < size; i++)
        ((unsigned char *)buf)[i] = (unsigned char)i;
}

static uint32_t fixed_random(void)
{
    return 0x12345678u;
}

static randombytes_implementation fixed_rng = {
    .implementation_name = fixed_name,
    .random = fixed_random,
    .buf = fixed_buf,
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    randombytes_set_implementation(&fixed_rng);
    if (sodium_init() < 0)
        abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    bool client = data[0] & 1, with_key = data[0] & 2;
    static struct tp_key key;
    memset(&key, 0, sizeof key);
    if (with_key) {
        key.set = true;
        key.len = strlen(KEY);
        memcpy(key.bytes, KEY, key.len);
    }

    int peer, fd = fz_stream(data + 1, size - 1, &peer);
    if (fd < 0)
        return 0;
    struct tp_conn c;
    tp_conn_from_fd(&c, fd, 2000000000ull);
    tp_error err;
    int rc = client ? tp_auth_client(&c, &key, &err) : tp_auth_server(&c, &key, &err);
    if (getenv("FZ_VERBOSE")) /* replaying one input: say how the handshake ended */
        fprintf(stderr, "%s, %s key: %d %s\n", client ? "client" : "server",
                with_key ? "with" : "no", rc, rc ? err.msg : "ok");
    if (rc) {
        FZ_ASSERT(rc < 0 && err.msg[0], "error %d without a message", rc);
        FZ_ASSERT(rc != TP_ETIMEOUT, "waited out the deadline on a closed stream");
    }
    tp_conn_close(&c);
    close(peer);
    return 0;
}
