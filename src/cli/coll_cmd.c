/* trainpath coll: collectives across ranks, in nccl-tests' vocabulary (size,
 * count, type, redop, time, algbw, busbw, #wrong) plus what it leaves out:
 * tails, arrival skew, the algorithm chosen, and an alpha-beta fit. Options
 * are all parsed and checked before any rank starts; every rank then passes
 * them to the bootstrap, which refuses ranks started differently. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "tp/boot.h"
#include "tp/coll.h"
#include "tp/log.h"
#include "tp/result.h"
#include "tp/transport.h"
#include "tp/units.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: trainpath coll [-n RANKS] [--op COLL] [--sizes LIST] [--dtype T] [--redop OP]\n"
            "                      [--algo A] [options]\n"
            "\n"
            "Ranks: -n N forks N ranks on this host; under mpirun or srun the launcher's\n"
            "ranks are used; with RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT set (torchrun,\n"
            "Kubernetes) the ranks meet at MASTER_ADDR:MASTER_PORT.\n"
            "\n"
            "  -n, --ranks N         local ranks to start (default 2)\n"
            "  -o, --op COLL         allreduce (default), reduce-scatter, allgather, broadcast,\n"
            "                        reduce, alltoall, sendrecv\n"
            "  -s, --sizes LIST      sizes as nccl-tests counts them, e.g. 8,1M,16M or 8-64M\n"
            "                        (default 8-256M: every power of two)\n"
            "  -d, --dtype T         f32 (default), f64, bf16, f16, i32, i64\n"
            "      --redop OP        sum (default), prod, min, max, avg\n"
            "  -a, --algo A          auto (default: by size; the choice is in the result),\n"
            "                        ring, rabenseifner, recdoubling, dbtree, binomial, hier,\n"
            "                        bruck, pairwise (each where it applies)\n"
            "  -r, --root N          root of broadcast and reduce (default 0)\n"
            "      --iters N         timed iterations per size (default: as many as fit --time)\n"
            "  -T, --time DUR        time per size when --iters is not given (default 200ms)\n"
            "  -w, --warmup N        warm-up iterations per size (default 5)\n"
            "      --chunk SIZE      pipelining unit (default 256K on shm, 512K on tcp)\n"
            "      --repro MODE      plain (default; deterministic for one configuration) or\n"
            "                        exact (allreduce sum/avg of floats: bitwise the same for\n"
            "                        any rank count, algorithm, chunking and timing)\n"
            "      --repro-check     inputs that show it: each element sums the same 840\n"
            "                        random floats, shared among the ranks (result_sha256)\n"
            "      --backend B       trainpath (default), mpi (MPI_Allreduce and siblings;\n"
            "                        needs mpirun or srun) or nccl (GPU memory, one rank\n"
            "                        per GPU); a list (trainpath,nccl) runs the sweep through\n"
            "                        each in turn and compares their busbw at the end\n"
            "      --mem M           host (default) or cuda: buffers in GPU memory (NCCL\n"
            "                        works on them; trainpath stages them through host\n"
            "                        memory; the result's data_path says which path)\n"
            "      --gpu N           device index (default: the rank's index on its host)\n"
            "      --launcher L      local, mpi or env (default: detected)\n"
            "      --transport T     tcp (default: kernel sockets) or ofi (libfabric)\n"
            "  -P, --provider NAME   libfabric provider as fi_info prints it: shm,\n"
            "                        'tcp;ofi_rxm' (default), 'verbs;ofi_rxm', efa (implies ofi)\n"
            "      --intra M         shm (default) or fabric between ranks of one host\n"
            "      --bind ADDR       address for the data connections (default: loopback\n"
            "                        on one host, else the first up IPv4 interface)\n"
            "      --key-file F      pre-shared key of the env rendezvous\n"
            "      --timeout DUR     idle deadline of every wait (default 30s)\n"
            "      --busy-poll       spin instead of sleeping while waiting\n"
            "      --inject-delay DUR  every rank sleeps up to DUR (random) before each\n"
            "                        iteration: jitter and arrival-order tests\n"
            "      --json FILE       write the result document (atomically; - for stdout)\n"
            "  -q, --quiet           no table\n");
}

enum {
    OPT_REDOP = 256,
    OPT_ITERS,
    OPT_CHUNK,
    OPT_REPRO,
    OPT_REPRO_CHECK,
    OPT_BACKEND,
    OPT_LAUNCHER,
    OPT_TRANSPORT,
    OPT_PROVIDER,
    OPT_INTRA,
    OPT_BIND,
    OPT_KEY,
    OPT_TIMEOUT,
    OPT_BUSY,
    OPT_DELAY,
    OPT_JSON,
    OPT_MEM,
    OPT_GPU,
};

static const struct option long_opts[] = {
    {"ranks", required_argument, NULL, 'n'},
    {"op", required_argument, NULL, 'o'},
    {"sizes", required_argument, NULL, 's'},
    {"dtype", required_argument, NULL, 'd'},
    {"redop", required_argument, NULL, OPT_REDOP},
    {"algo", required_argument, NULL, 'a'},
    {"root", required_argument, NULL, 'r'},
    {"iters", required_argument, NULL, OPT_ITERS},
    {"time", required_argument, NULL, 'T'},
    {"warmup", required_argument, NULL, 'w'},
    {"chunk", required_argument, NULL, OPT_CHUNK},
    {"repro", required_argument, NULL, OPT_REPRO},
    {"repro-check", no_argument, NULL, OPT_REPRO_CHECK},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"launcher", required_argument, NULL, OPT_LAUNCHER},
    {"transport", required_argument, NULL, OPT_TRANSPORT},
    {"provider", required_argument, NULL, 'P'},
    {"intra", required_argument, NULL, OPT_INTRA},
    {"bind", required_argument, NULL, OPT_BIND},
    {"key-file", required_argument, NULL, OPT_KEY},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"busy-poll", no_argument, NULL, OPT_BUSY},
    {"inject-delay", required_argument, NULL, OPT_DELAY},
    {"json", required_argument, NULL, OPT_JSON},
    {"mem", required_argument, NULL, OPT_MEM},
    {"gpu", required_argument, NULL, OPT_GPU},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

struct parsed {
    struct tp_coll_bench_opts b;
    struct tp_comm_opts c;
    uint64_t *sizes;
    uint64_t nranks, timeout_ns;
    const char *launcher, *key_file, *json, *repro;
    bool quiet, have_ranks;
    int gpu; /* --gpu, or -1 */
    const char *backends[3]; /* --backend, as a list */
    int nb;
    const char *backend_arg;
};

/* "trainpath", "mpi", "nccl", or a comma-separated list of them. */
static int parse_backends(const char *arg, struct parsed *p, tp_error *err)
{
    static const char *const known[] = {"trainpath", "mpi", "nccl"};
    p->nb = 0;
    for (const char *s = arg;;) {
        size_t len = strcspn(s, ",");
        int k = -1;
        for (int i = 0; i < 3; i++)
            if (len == strlen(known[i]) && strncmp(s, known[i], len) == 0)
                k = i;
        if (k < 0)
            return tp_error_set(err, TP_EUSAGE, "--backend %s: '%.*s' is not trainpath, mpi or "
                                "nccl", arg, (int)len, s);
        for (int i = 0; i < p->nb; i++)
            if (p->backends[i] == known[k])
                return tp_error_set(err, TP_EUSAGE, "--backend %s: %s twice", arg, known[k]);
        p->backends[p->nb++] = known[k];
        if (!s[len])
            break;
        s += len + 1;
    }
    p->b.backend = p->backends[0];
    p->backend_arg = arg;
    return 0;
}

static bool has_backend(const struct parsed *p, const char *name)
{
    for (int i = 0; i < p->nb; i++)
        if (strcmp(p->backends[i], name) == 0)
            return true;
    return false;
}

static int parse(int argc, char **argv, struct parsed *p, tp_error *err)
{
    struct tp_coll_bench_opts *b = &p->b;
    uint64_t v;
    int rc = 0, opt;
    opterr = 0;
    optind = 1;
    while (rc == 0 && (opt = getopt_long(argc, argv, ":n:o:s:d:a:r:T:w:P:qh", long_opts, NULL)) != -1) {
        switch (opt) {
        case 'n':
            rc = tp_parse_u64(optarg, "--ranks", 1, 1024, &p->nranks, err);
            p->have_ranks = true;
            break;
        case 'o': {
            int k = tp_coll_parse(optarg);
            if (k < 0)
                rc = tp_error_set(err, TP_EUSAGE,
                                  "--op %s: not a collective (allreduce, reduce-scatter, "
                                  "allgather, broadcast, reduce, alltoall, sendrecv)",
                                  optarg);
            else
                b->kind = (enum tp_coll_kind)k;
            break;
        }
        case 's':
            free(p->sizes);
            p->sizes = NULL;
            rc = tp_parse_size_list(optarg, "--sizes", &p->sizes, &b->nsizes, err);
            if (!rc && p->sizes[b->nsizes - 1] > (4ull << 30))
                rc = tp_error_set(err, TP_EUSAGE, "--sizes: %llu bytes is over the 4 GiB limit",
                                  (unsigned long long)p->sizes[b->nsizes - 1]);
            break;
        case 'd': {
            int t = tp_dtype_parse(optarg);
            if (t < 0)
                rc = tp_error_set(err, TP_EUSAGE,
                                  "--dtype %s: not a type (f32, f64, bf16, f16, i32, i64)", optarg);
            else
                b->dtype = (enum tp_dtype)t;
            break;
        }
        case OPT_REDOP: {
            int o = tp_redop_parse(optarg);
            if (o < 0)
                rc = tp_error_set(err, TP_EUSAGE,
                                  "--redop %s: not an operator (sum, prod, min, max, avg)", optarg);
            else
                b->op = (enum tp_redop)o;
            break;
        }
        case 'a': b->algo = optarg; break;
        case 'r':
            rc = tp_parse_u64(optarg, "--root", 0, 1023, &v, err);
            b->root = (int)v;
            break;
        case OPT_ITERS: rc = tp_parse_u64(optarg, "--iters", 1, 20000, &b->iters, err); break;
        case 'T': rc = tp_parse_duration(optarg, "--time", &b->time_ns, err); break;
        case 'w': rc = tp_parse_u64(optarg, "--warmup", 0, 100000, &b->warmup, err); break;
        case OPT_CHUNK:
            rc = tp_parse_size(optarg, "--chunk", &v, err);
            b->chunk_bytes = (size_t)v;
            break;
        case OPT_REPRO:
            p->repro = optarg;
            if (strcmp(optarg, "exact") != 0 && strcmp(optarg, "plain") != 0)
                rc = tp_error_set(err, TP_EUSAGE, "--repro %s: plain or exact", optarg);
            b->exact = strcmp(optarg, "exact") == 0;
            break;
        case OPT_REPRO_CHECK: b->repro_check = true; break;
        case OPT_BACKEND:
            rc = parse_backends(optarg, p, err);
            break;
        case OPT_MEM:
            if (strcmp(optarg, "host") != 0 && strcmp(optarg, "cuda") != 0)
                rc = tp_error_set(err, TP_EUSAGE, "--mem %s: host or cuda", optarg);
            b->mem_cuda = strcmp(optarg, "cuda") == 0;
            break;
        case OPT_GPU:
            rc = tp_parse_u64(optarg, "--gpu", 0, 1023, &v, err);
            p->gpu = (int)v;
            break;
        case OPT_LAUNCHER: p->launcher = optarg; break;
        case OPT_TRANSPORT: p->c.transport = optarg; break;
        case 'P': p->c.provider = optarg; break;
        case OPT_INTRA: p->c.intra = optarg; break;
        case OPT_BIND: p->c.bind_addr = optarg; break;
        case OPT_KEY: p->key_file = optarg; break;
        case OPT_TIMEOUT:
            rc = tp_parse_duration(optarg, "--timeout", &p->timeout_ns, err);
            if (!rc && p->timeout_ns < 1000000)
                rc = tp_error_set(err, TP_EUSAGE, "--timeout: '%s' is below 1 ms", optarg);
            break;
        case OPT_BUSY: p->c.busy_poll = true; break;
        case OPT_DELAY: rc = tp_parse_duration(optarg, "--inject-delay", &b->inject_delay_ns, err); break;
        case OPT_JSON: p->json = optarg; break;
        case 'q': p->quiet = true; break;
        case 'h': usage(stdout); return 1;
        case ':':
            rc = tp_error_set(err, TP_EUSAGE, "%s needs a value", argv[optind - 1]);
            break;
        default:
            rc = tp_error_set(err, TP_EUSAGE, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (rc == 0 && optind < argc)
        rc = tp_error_set(err, TP_EUSAGE, "unexpected argument '%s'", argv[optind]);
    if (rc == 0)
        rc = tp_coll_check_args(b->kind, b->dtype, b->op, b->exact, b->algo, err);
    if (rc == 0 && b->repro_check &&
        (b->kind != TP_ALLREDUCE || !tp_dtype_is_float(b->dtype) || b->op != TP_SUM))
        rc = tp_error_set(err, TP_EUSAGE,
                          "--repro-check: allreduce with --redop sum of a float --dtype only");
    if (rc == 0 && !p->nb) {
        p->backends[p->nb++] = "trainpath";
        b->backend = "trainpath";
    }
    bool nccl = has_backend(p, "nccl"), mpi = has_backend(p, "mpi");
    bool tp_only = p->nb == 1 && !nccl && !mpi;
    if (rc == 0 && b->repro_check && !tp_only)
        rc = tp_error_set(err, TP_EUSAGE, "--repro-check: runs on --backend trainpath");
    if (rc == 0 && b->repro_check && b->mem_cuda)
        rc = tp_error_set(err, TP_EUSAGE, "--repro-check: runs with --mem host");
    if (rc == 0 && !has_backend(p, "trainpath") && b->algo && strcmp(b->algo, "auto") != 0)
        rc = tp_error_set(err, TP_EUSAGE,
                          "--algo %s with --backend %s: %s chooses its own algorithm", b->algo,
                          p->backend_arg, nccl ? "NCCL" : "MPI");
    if (rc == 0 && nccl && b->exact)
        rc = tp_error_set(err, TP_EUSAGE, "--repro exact: runs on --backend trainpath (NCCL's "
                          "sums keep no exact accumulator)");
    if (rc == 0 && nccl && p->nb == 1 && p->c.transport)
        rc = tp_error_set(err, TP_EUSAGE, "--transport with --backend nccl: NCCL picks its own "
                          "transport (NCCL_NET, NCCL_IB_HCA, ...)");
    if (rc == 0 && b->mem_cuda && mpi)
        rc = tp_error_set(err, TP_EUSAGE, "--mem cuda with --backend mpi: not supported "
                          "(trainpath does not assume a CUDA-aware MPI); use trainpath or nccl");
    if (rc == 0 && p->gpu >= 0 && !b->mem_cuda && !nccl)
        rc = tp_error_set(err, TP_EUSAGE, "--gpu: only with --mem cuda or --backend nccl");
    if (rc == 0 && (b->mem_cuda || nccl) && !tp_gpu_built())
        rc = tp_error_set(err, TP_EUSAGE, "%s: %s", nccl ? "--backend nccl" : "--mem cuda",
                          tp_gpu_build_line());
    if (rc == 0 && b->chunk_bytes && b->chunk_bytes < 64)
        rc = tp_error_set(err, TP_EUSAGE, "--chunk: at least 64 bytes");
    if (rc == 0 && p->c.intra && strcmp(p->c.intra, "shm") != 0 && strcmp(p->c.intra, "fabric") != 0)
        rc = tp_error_set(err, TP_EUSAGE, "--intra %s: shm or fabric", p->c.intra);
    if (rc == 0 && p->c.provider && !p->c.transport)
        p->c.transport = "ofi";
    if (rc == 0 && p->c.transport && strcmp(p->c.transport, "tcp") != 0 &&
        strcmp(p->c.transport, "ofi") != 0)
        rc = tp_error_set(err, TP_EUSAGE, "--transport %s: tcp or ofi", p->c.transport);
    if (rc == 0 && p->c.transport && strcmp(p->c.transport, "ofi") == 0)
        rc = tp_ofi_provider_check(p->c.provider ? p->c.provider : "tcp;ofi_rxm", err);
    if (rc == 0 && p->launcher && strcmp(p->launcher, "local") != 0 &&
        strcmp(p->launcher, "mpi") != 0 && strcmp(p->launcher, "env") != 0)
        rc = tp_error_set(err, TP_EUSAGE, "--launcher %s: local, mpi or env", p->launcher);
    return rc;
}

/* The options every rank must share, compared at bootstrap. */
static json_t *config_json(const struct parsed *p)
{
    const struct tp_coll_bench_opts *b = &p->b;
    json_t *sizes = json_array();
    for (size_t i = 0; i < b->nsizes; i++)
        json_array_append_new(sizes, json_integer((json_int_t)p->sizes[i]));
    return json_pack("{s:s, s:o, s:s, s:s, s:s, s:i, s:I, s:I, s:I, s:I, s:s, s:b, s:s, s:s, "
                     "s:s, s:s, s:I, s:I, s:s}",
                     "op", tp_coll_name(b->kind), "sizes", sizes, "dtype",
                     tp_dtype_name(b->dtype), "redop", tp_redop_name(b->op), "algo",
                     b->algo ? b->algo : "auto", "root", b->root, "iters", (json_int_t)b->iters,
                     "time_ns", (json_int_t)b->time_ns, "warmup", (json_int_t)b->warmup,
                     "chunk_bytes", (json_int_t)b->chunk_bytes, "repro",
                     b->exact ? "exact" : "plain", "repro_check", b->repro_check, "backend",
                     p->backend_arg ? p->backend_arg : "trainpath", "transport",
                     p->c.transport ? p->c.transport : "tcp", "provider",
                     p->c.provider ? p->c.provider : "", "intra",
                     p->c.intra ? p->c.intra : "shm", "timeout_ns", (json_int_t)p->timeout_ns,
                     "inject_delay_ns", (json_int_t)b->inject_delay_ns, "mem",
                     b->mem_cuda ? "cuda" : "host");
}

struct printer {
    json_t *results;
    bool quiet;
};

static void print_row(void *arg, size_t i, size_t n)
{
    (void)n;
    struct printer *pr = arg;
    if (pr->quiet)
        return;
    json_t *e = json_array_get(json_object_get(pr->results, "sizes"), i);
    json_t *t = json_object_get(e, "time");
    char sz[32];
    printf("%12s %12lld %-12s %10.2f %10.2f %10.2f %8.3f %8.3f %7lld %10.2f\n",
           tp_fmt_size((uint64_t)json_integer_value(json_object_get(e, "size_bytes")), sz,
                       sizeof sz),
           (long long)json_integer_value(json_object_get(e, "count")),
           json_string_value(json_object_get(e, "algo")),
           json_number_value(json_object_get(t, "mean")) / 1e3,
           json_number_value(json_object_get(t, "p50")) / 1e3,
           json_number_value(json_object_get(t, "p99")) / 1e3,
           json_number_value(json_object_get(json_object_get(e, "algbw"), "value")) / 1e9,
           json_number_value(json_object_get(json_object_get(e, "busbw"), "value")) / 1e9,
           (long long)json_integer_value(json_object_get(e, "wrong")),
           json_number_value(json_object_get(json_object_get(e, "arrival_skew"), "p99")) / 1e3);
    fflush(stdout);
}

/* After a sweep through several backends: busbw per size and backend, and
 * each backend's against the first's (the ratio nccl-tests users ask for). */
static void print_comparison(json_t *results, const struct parsed *p)
{
    json_t *sizes = json_object_get(results, "sizes");
    printf("# busbw (GB/s) by backend, and the ratio to %s\n# %10s", p->backends[0], "size");
    for (int k = 0; k < p->nb; k++)
        printf(" %10s", p->backends[k]);
    for (int k = 1; k < p->nb; k++) {
        char lab[32];
        snprintf(lab, sizeof lab, "%s/%s", p->backends[k], p->backends[0]);
        printf(" %15s", lab);
    }
    printf("\n");
    size_t i, j;
    json_t *e, *f;
    json_array_foreach(sizes, i, e) {
        if (strcmp(json_string_value(json_object_get(e, "backend")), p->backends[0]) != 0)
            continue;
        json_int_t sz = json_integer_value(json_object_get(e, "size_bytes"));
        double bw[3] = {0};
        json_array_foreach(sizes, j, f) {
            if (json_integer_value(json_object_get(f, "size_bytes")) != sz)
                continue;
            for (int k = 0; k < p->nb; k++)
                if (strcmp(json_string_value(json_object_get(f, "backend")), p->backends[k]) == 0)
                    bw[k] = json_number_value(
                        json_object_get(json_object_get(f, "busbw"), "value"));
        }
        char szs[32];
        printf("  %10s", tp_fmt_size((uint64_t)sz, szs, sizeof szs));
        for (int k = 0; k < p->nb; k++)
            printf(" %10.2f", bw[k] / 1e9);
        for (int k = 1; k < p->nb; k++) {
            if (bw[0] > 0)
                printf(" %15.2f", bw[k] / bw[0]);
            else
                printf(" %15s", "-");
        }
        printf("\n");
    }
    fflush(stdout);
}

/* The bootstrap backend in use: as given, or as tp_boot_init detects it. */

int cmd_coll(int argc, char **argv)
{
    struct parsed p = {.nranks = 2, .timeout_ns = 30000000000ull, .gpu = -1};
    p.b.warmup = 5;
    p.b.time_ns = 200000000ull;
    tp_error err = {0};
    int rc = parse(argc, argv, &p, &err);
    if (rc == 1) {
        free(p.sizes);
        return 0;
    }
    if (rc == 0 && !p.sizes)
        rc = tp_parse_size_list("8-256M", "--sizes", &p.sizes, &p.b.nsizes, &err);
    if (rc == 0 && p.json && cli_rank0(cli_launcher(p.launcher)))
        rc = cli_json_path_ok(p.json, &err);
    if (rc < 0) {
        free(p.sizes);
        return cli_fail(&err);
    }
    p.b.sizes = p.sizes;
    json_t *config = config_json(&p);
    struct tp_boot_opts bo = {.backend = p.launcher, .nranks = (int)p.nranks,
                              .key_file = p.key_file, .timeout_ns = p.timeout_ns,
                              .options = config};
    struct tp_boot *boot = NULL;
    json_t *doc = NULL, *results = NULL;
    if ((rc = tp_boot_init(&bo, &boot, &err)) < 0) {
        /* no group: this process reports for itself */
        doc = tp_result_new("coll", config);
        tp_result_finish(doc, rc, err.msg);
        if (p.json)
            tp_result_write(doc, p.json, &err);
        json_decref(doc);
        free(p.sizes);
        return cli_fail(&err);
    }
    int me = tp_boot_rank(boot), n = tp_boot_size(boot);
    if (me == 0) {
        json_object_set_new(config, "ranks", json_integer(n));
        json_object_set_new(config, "launcher", json_string(cli_launcher(p.launcher)));
        doc = tp_result_new("coll", json_incref(config));
        results = json_object();
        json_object_set_new(doc, "results", results);
    }
    p.c.arena_bytes = tp_coll_bench_arena_bytes(&p.b, n);
    p.c.timeout_ns = p.timeout_ns;
    struct tp_comm *comm = NULL;
    uint64_t wrong = 0;
    rc = tp_comm_init(boot, &p.c, &comm, &err);
    if (rc == 0 && has_backend(&p, "mpi") && !tp_coll_mpi_available())
        rc = tp_error_set(&err, TP_EUSAGE,
                          "--backend mpi: the ranks were not started by mpirun or srun");
    struct tp_gpu *gpu = NULL;
    bool nccl = has_backend(&p, "nccl");
    if (rc == 0 && (p.b.mem_cuda || nccl)) {
        rc = tp_group_gpu_open(boot, nccl ? "--backend nccl" : "--mem cuda",
                               nccl ? TP_GPU_NCCL : 0, p.gpu, p.timeout_ns, &gpu, &err);
        p.b.gpu = gpu;
        if (rc == 0 && me == 0)
            json_object_set_new(json_object_get(doc, "provenance"), "gpu", tp_gpu_info(gpu));
    }
    if (rc == 0) {
        if (me == 0) {
            json_object_set_new(json_object_get(doc, "provenance"), "comm", tp_comm_info(comm));
            if (!p.quiet) {
                bool ofi = p.c.transport && strcmp(p.c.transport, "ofi") == 0;
                printf("# trainpath coll: %s, %d ranks on %d host(s), %s, redop %s, %s%s%s%s%s\n",
                       tp_coll_name(p.b.kind), n, tp_comm_nhosts(comm), tp_dtype_name(p.b.dtype),
                       tp_redop_name(p.b.op), tp_comm_shm(comm) ? "shm within hosts, " : "",
                       ofi ? "ofi " : "tcp", ofi ? (p.c.provider ? p.c.provider : "tcp;ofi_rxm") : "",
                       tp_comm_shm(comm) ? " between" : "", p.b.exact ? ", repro exact" : "");
                printf("# %10s %12s %-12s %10s %10s %10s %8s %8s %7s %10s\n", "size", "count",
                       "algo", "time(us)", "p50(us)", "p99(us)", "algbw", "busbw", "#wrong",
                       "skew99(us)");
                printf("# %10s %12s %-12s %10s %10s %10s %8s %8s %7s %10s\n", "", "(elems)", "",
                       "mean", "", "", "(GB/s)", "(GB/s)", "", "");
                fflush(stdout);
            }
        }
        struct printer pr = {results, p.quiet};
        p.b.progress = print_row;
        p.b.progress_arg = &pr;
        bool mem_cuda = p.b.mem_cuda;
        for (int k = 0; rc == 0 && k < p.nb; k++) {
            uint64_t w = 0;
            p.b.backend = p.backends[k];
            /* NCCL works on GPU memory; the others where --mem says */
            p.b.mem_cuda = mem_cuda && strcmp(p.backends[k], "nccl") != 0;
            if (me == 0 && !p.quiet && p.nb > 1)
                printf("# --backend %s%s\n", p.backends[k],
                       strcmp(p.backends[k], "nccl") == 0 || p.b.mem_cuda ? " (GPU memory)" : "");
            rc = tp_coll_bench(comm, &p.b, results, &w, &err);
            wrong += w;
        }
        if (rc == 0 && me == 0 && !p.quiet && p.nb > 1)
            print_comparison(results, &p);
    }
    if (rc < 0)
        tp_comm_abort(comm);
    tp_gpu_close(gpu);
    if (comm)
        tp_comm_fini(comm);
    if (rc == 0 && wrong > 0)
        rc = tp_error_set(&err, TP_ECHECK, "%llu element(s) wrong (bit-exact check)",
                          (unsigned long long)wrong);
    if (rc < 0 && me != 0)
        tp_log(TP_LOG_ERROR, "rank %d: %s", me, err.msg);
    int worst = tp_boot_fini(boot);
    if (me == 0) {
        if (rc == 0 && worst != 0)
            rc = tp_error_set(&err, worst == 2 ? TP_EUSAGE : TP_EPEER,
                              "a rank exited with status %d", worst);
        tp_result_finish(doc, rc, rc ? err.msg : "");
        tp_error werr;
        if (p.json && cli_write_result(doc, p.json, &werr) < 0 && rc == 0) {
            err = werr;
            rc = werr.code;
        }
        json_decref(doc);
    }
    json_decref(config);
    free(p.sizes);
    if (rc < 0)
        return me == 0 ? cli_fail(&err) : tp_exit_code(rc);
    return 0;
}
