/* --repro exact end to end over N local ranks: the allreduce's result must
 * be, on every rank and bit for bit, the wide representation's correctly
 * rounded sum (tp_fx, itself checked against the superaccumulator in
 * test_fixed.c) of every rank's input, for f32, bf16 and f16, sum and avg,
 * every allreduce algorithm, two chunk sizes, and data whose blocks take
 * the fast path (gradient-like values, one binade, subnormals, values that
 * overflow) and the wide path (a NaN or an infinity, exponents over the
 * whole range) side by side, over several passes of the fast path. Usage:
 * test_repro N|auto [shm|fabric [KERNEL]] (auto: the ranks the launcher
 * started, mpirun say, and then --backend mpi's exact allreduce is what is
 * checked; KERNEL: a block fixed-point kernel by name, "scalar" say; default
 * the best this CPU runs). Prints TAP from rank 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp/blockfx.h"
#include "tp/boot.h"
#include "tp/coll.h"
#include "tp/fixed.h"

static int fails, tests;

static void report(int me, bool ok, const char *what, const char *why)
{
    tests++;
    fails += !ok;
    if (me == 0)
        printf("%s %d - %s%s%s\n", ok ? "ok" : "not ok", tests, what, why ? ": " : "",
               why ? why : "");
}

static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Rank r's element i (an encoding of t), by the kind of i's block. */
static uint32_t element(enum tp_dtype t, int r, size_t i)
{
    unsigned mbits = t == TP_F32 ? 23 : t == TP_BF16 ? 7 : 10, ebits = t == TP_F16 ? 5 : 8;
    unsigned emax = (1u << ebits) - 1, bias = emax >> 1;
    uint64_t h = mix((uint64_t)r << 40 ^ i);
    uint32_t frac = (uint32_t)h & ((1u << mbits) - 1), neg = (uint32_t)(h >> 63);
    unsigned e;
    switch ((i / TP_BFX_BLOCK) % 6) {
    case 0: /* gradient-like: a few binades below 1, a tenth zeros */
        if (h % 10 == 3)
            return 0;
        e = bias - 1 - (unsigned)((h >> 20) % (ebits == 5 ? 6 : 12));
        break;
    case 1: /* exponents over the whole finite range: wide */
        e = 1 + (unsigned)((h >> 20) % (emax - 1));
        break;
    case 2: /* subnormals and the smallest normals */
        e = (unsigned)((h >> 20) % 3);
        break;
    case 3: /* near the largest finite: sums overflow */
        e = emax - 1;
        neg = 0;
        break;
    case 4: /* one binade, and a NaN or an infinity on the last rank: wide */
        if (i % TP_BFX_BLOCK == 100 && r == 1)
            return neg << (mbits + ebits) | emax << mbits | (uint32_t)(h & 1);
        e = bias;
        break;
    default: /* x on rank 0, -x on rank 1: heavy cancellation */
        h = mix(i);
        frac = (uint32_t)h & ((1u << mbits) - 1);
        e = bias - 3;
        neg = r == 1 ? 1 : r == 0 ? 0 : neg;
        if (r > 1)
            e = bias - 20 > 0 ? bias - 20 : 1;
        break;
    }
    return neg << (mbits + ebits) | e << mbits | frac;
}

static void put(enum tp_dtype t, void *buf, size_t i, uint32_t u)
{
    if (t == TP_F32) {
        memcpy((unsigned char *)buf + 4 * i, &u, 4);
    } else {
        uint16_t v = (uint16_t)u;
        memcpy((unsigned char *)buf + 2 * i, &v, 2);
    }
}

int main(int argc, char **argv)
{
    bool launched = argc > 1 && strcmp(argv[1], "auto") == 0;
    int nranks = argc > 1 && !launched ? atoi(argv[1]) : 2;
    const char *intra = argc > 2 ? argv[2] : "shm";
    tp_error err = {0};
    json_t *opts = json_object();
    struct tp_boot_opts bo = {.backend = launched ? NULL : "local", .nranks = nranks,
                              .timeout_ns = 60000000000ull, .options = opts};
    struct tp_boot *b;
    if (tp_boot_init(&bo, &b, &err) < 0) {
        printf("1..1\nnot ok 1 - boot: %s\n", err.msg);
        return 1;
    }
    int me = tp_boot_rank(b), n = tp_boot_size(b);
    if (argc > 3 && !tp_bfx_use(argv[3])) {
        if (me == 0)
            printf("1..0 # SKIP kernel %s: none of that name, or this CPU cannot run it\n",
                   argv[3]);
        tp_boot_fini(b);
        return 0;
    }
    /* more than one pass of the fast path, and a partial last block */
    const size_t big = 6 * TP_BFX_BLOCK * 12 + 333;
    struct tp_comm_opts co = {.intra = intra, .transport = "tcp",
                              .arena_bytes = tp_coll_arena_bytes(n, big * 4, true, 2 * big * 4),
                              .timeout_ns = 60000000000ull};
    struct tp_comm *c;
    if (tp_comm_init(b, &co, &c, &err) < 0) {
        if (me == 0)
            printf("1..1\nnot ok 1 - comm: %s\n", err.msg);
        tp_boot_fini(b);
        return 1;
    }
    void *send = tp_comm_alloc(c, big * 4), *recv = tp_comm_alloc(c, big * 4);
    unsigned char *want = malloc(big * 4);
    uint64_t *acc = malloc(64 * 8), *one = malloc(64 * 8);
    static const enum tp_dtype types[] = {TP_F32, TP_BF16, TP_F16};
    static const size_t chunks[] = {1024, 256u << 10};
    /* the message, then a small one (its values on 8 ranks within 64 KiB:
     * gathered whole by the algorithms other than ring and rabenseifner),
     * a gradient-like block and a wide one */
    for (int pass = 0; pass < 2; pass++)
    for (size_t ti = 0; ti < 3 && send && recv && want; ti++) {
        enum tp_dtype t = types[ti];
        size_t count = pass ? TP_BFX_BLOCK + 500 : big;
        size_t es = tp_dtype_size(t);
        for (size_t i = 0; i < count; i++)
            put(t, send, i, element(t, me, i));
        for (int avg = 0; avg < 2; avg++) {
            /* the reference: every rank's input, summed wide, rounded once */
            for (size_t i = 0; i < count; i++) {
                for (int r = 0; r < n; r++) {
                    uint32_t u = element(t, r, i), enc = 0;
                    put(t, &enc, 0, u);
                    tp_fx_load(t, r ? one : acc, &enc, 1);
                    if (r)
                        tp_fx_add(t, acc, one, 1);
                }
                tp_fx_store(t, want + i * es, acc, 1, avg ? (uint32_t)n : 1);
            }
            /* the algorithms (local ranks), or MPI's own (under an MPI
             * launcher: the algorithms are the local runs' business) */
            const char *const *algos = tp_coll_algos(TP_ALLREDUCE);
            size_t nal = 0;
            while (!launched && algos[nal])
                nal++;
            bool mpi = tp_coll_mpi_available();
            for (size_t ai = 0; ai < nal + (mpi ? 1 : 0); ai++)
                for (size_t ci = 0; ci < (ai < nal && !pass ? 2u : 1u); ci++) {
                    const char *al_name = ai < nal ? algos[ai] : "backend mpi";
                    memset(recv, 0xA5, count * es);
                    struct tp_coll_args a = {.kind = TP_ALLREDUCE, .dtype = t,
                                             .op = avg ? TP_AVG : TP_SUM, .sendbuf = send,
                                             .recvbuf = recv, .count = count,
                                             .algo = ai < nal ? algos[ai] : NULL,
                                             .exact = true, .chunk_bytes = chunks[ci]};
                    int rc = ai < nal ? tp_coll_run(c, &a, &err) : tp_coll_mpi_run(c, &a, &err);
                    size_t bad = 0, first = 0;
                    for (size_t i = 0; rc == 0 && i < count; i++)
                        if (memcmp((unsigned char *)recv + i * es, want + i * es, es) != 0 &&
                            !bad++)
                            first = i;
                    /* every rank's verdict, so rank 0 reports anyone's */
                    char mine[48], **all = NULL;
                    snprintf(mine, sizeof mine, "%d %zu", rc ? -1 : (int)(bad != 0), first);
                    bool ok = true;
                    char why[200] = "";
                    if (tp_boot_allgather(b, mine, &all, &err) == 0) {
                        for (int r = 0; r < n; r++) {
                            int v = 0;
                            size_t f = 0;
                            sscanf(all[r], "%d %zu", &v, &f);
                            if (v && ok) {
                                ok = false;
                                snprintf(why, sizeof why, "rank %d: %s (first at element %zu, "
                                         "block %zu)", r, v < 0 ? "failed" : "differs from the "
                                         "wide path's correctly rounded sum", f,
                                         f / TP_BFX_BLOCK);
                            }
                        }
                        tp_boot_free_strings(all, n);
                    } else {
                        ok = false;
                        snprintf(why, sizeof why, "%.190s", err.msg);
                    }
                    char what[160];
                    snprintf(what, sizeof what,
                             "exact %s %s %s chunk %zu, %zu elements, n=%d %s (%s kernel)",
                             avg ? "avg" : "sum", tp_dtype_name(t), al_name, chunks[ci], count, n,
                             intra, tp_bfx_kernel());
                    report(me, ok, what, ok ? NULL : why);
                    if (rc)
                        goto out;
                }
        }
    }
out:
    free(want);
    free(acc);
    free(one);
    tp_comm_fini(c);
    int worst = tp_boot_fini(b);
    json_decref(opts);
    if (me == 0) {
        printf("1..%d\n", tests);
        fflush(stdout);
    }
    return fails || worst ? 1 : 0;
}
