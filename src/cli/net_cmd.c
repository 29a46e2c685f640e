/* trainpath net: options for the server and the four client tests, in the
 * spelling iperf3 and perftest users expect. Everything after parsing is one
 * library call; a run that fails after parsing still writes its result
 * document (status says why). */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "tp/clock.h"
#include "tp/log.h"
#include "tp/net.h"
#include "tp/result.h"
#include "tp/transport.h"
#include "tp/gpu.h"
#include "tp/units.h"
#include "tp/wire.h"

static volatile int stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: trainpath net serve [--bind ADDR] [--port N] [--key-file F] [--insecure]\n"
            "                           [--one-off] [--timeout DUR]\n"
            "       trainpath net lat|bw|bibw|loaded HOST [options]\n"
            "\n"
            "tests:\n"
            "  lat      ping-pong latency per message size (one-way = RTT/2, as sockperf,\n"
            "           perftest and OSU report it; RTT kept too)\n"
            "  bw       one-way bandwidth with a window of messages in flight\n"
            "  bibw     both directions at once\n"
            "  loaded   latency alone, then under --streams background streams;\n"
            "           reports the congestion impact factor (loaded / isolated)\n"
            "\n"
            "options:\n"
            "  -p, --port N          control port (default %d)\n"
            "  -t, --transport T     tcp (kernel sockets, default) or ofi (libfabric)\n"
            "  -P, --provider NAME   libfabric provider as fi_info prints it: shm,\n"
            "                        'tcp;ofi_rxm', 'verbs;ofi_rxm', efa, cxi (implies ofi)\n"
            "      --rma             ofi: one-sided RMA writes with remote CQ data\n"
            "  -s, --sizes LIST      message sizes, e.g. 64 or 8-4M or 8,4K,1M\n"
            "                        (default 8-4M; loaded: 8)\n"
            "  -n, --iters N         measured iterations per size\n"
            "  -T, --time DUR        measure for DUR per size instead (default 1s)\n"
            "      --warmup N        warm-up iterations per size (default: adaptive)\n"
            "      --warmup-time DUR adaptive warm-up length per size (default 100ms)\n"
            "  -w, --window N        messages in flight for bw/bibw/loaded (default 64)\n"
            "      --streams N       loaded: background streams (default 4)\n"
            "      --load-size SIZE  loaded: background message size (default 1M)\n"
            "      --check           verify every payload byte; a bad byte fails the run\n"
            "      --busy-poll       spin instead of sleeping in the kernel (tcp)\n"
            "      --key-file F      pre-shared key for the control channel\n"
            "      --timeout DUR     deadline of every blocking step, each control frame whole\n"
            "                        within it; on the server it also caps what a client asks\n"
            "                        for (default 30s)\n"
            "      --json FILE       write the result document (atomically; - for stdout)\n"
            "      --cpu LIST        run on these CPUs (e.g. 2 or 0-3), as taskset would;\n"
            "                        the document records the affinity either way\n"
            "      --mem M           host (default) or cuda: messages start and end in GPU\n"
            "                        memory on both ends (perftest's --use_cuda); with an ofi\n"
            "                        provider that offers FI_HMEM the provider moves GPU\n"
            "                        memory itself, else each message is staged through host\n"
            "                        memory inside the timing (the result's mem_path says which)\n"
            "      --gpu N           the client's device index (default 0; the server uses 0)\n"
            "Progress (sizes done, time left) is shown on stderr when it is a terminal and\n"
            "--json is not -.\n"
            "\n"
            "server options:\n"
            "      --bind ADDR       listen address (default 0.0.0.0)\n"
            "      --insecure        allow a non-loopback address without --key-file\n"
            "      --one-off         exit after one test\n",
            TP_WIRE_DEFAULT_PORT);
}

enum {
    OPT_RMA = 256,
    OPT_WARMUP,
    OPT_WARMUP_TIME,
    OPT_STREAMS,
    OPT_LOAD_SIZE,
    OPT_CHECK,
    OPT_BUSY_POLL,
    OPT_KEY,
    OPT_TIMEOUT,
    OPT_JSON,
    OPT_BIND,
    OPT_INSECURE,
    OPT_ONE_OFF,
    OPT_CPU,
    OPT_MEM,
    OPT_GPU,
};

static const struct option long_opts[] = {
    {"port", required_argument, NULL, 'p'},
    {"transport", required_argument, NULL, 't'},
    {"provider", required_argument, NULL, 'P'},
    {"rma", no_argument, NULL, OPT_RMA},
    {"sizes", required_argument, NULL, 's'},
    {"iters", required_argument, NULL, 'n'},
    {"time", required_argument, NULL, 'T'},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"warmup-time", required_argument, NULL, OPT_WARMUP_TIME},
    {"window", required_argument, NULL, 'w'},
    {"streams", required_argument, NULL, OPT_STREAMS},
    {"load-size", required_argument, NULL, OPT_LOAD_SIZE},
    {"check", no_argument, NULL, OPT_CHECK},
    {"busy-poll", no_argument, NULL, OPT_BUSY_POLL},
    {"key-file", required_argument, NULL, OPT_KEY},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"json", required_argument, NULL, OPT_JSON},
    {"bind", required_argument, NULL, OPT_BIND},
    {"insecure", no_argument, NULL, OPT_INSECURE},
    {"one-off", no_argument, NULL, OPT_ONE_OFF},
    {"cpu", required_argument, NULL, OPT_CPU},
    {"mem", required_argument, NULL, OPT_MEM},
    {"gpu", required_argument, NULL, OPT_GPU},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

struct parsed {
    bool have_gpu;
    struct tp_net_client_opts c;
    struct tp_net_server_opts s;
    uint64_t *sizes;
    const char *json;
    const char *cpu;
    bool server, have_iters, have_time, have_streams, have_load, have_window;
};

static int parse(int argc, char **argv, struct parsed *p, tp_error *err)
{
    struct tp_net_client_opts *c = &p->c;
    uint64_t v;
    int rc = 0, opt;
    opterr = 0;
    optind = 1;
    while ((opt = getopt_long(argc, argv, ":p:t:P:s:n:T:w:h", long_opts, NULL)) != -1) {
        switch (opt) {
        case 'p':
            rc = tp_parse_u64(optarg, "--port", p->server ? 0 : 1, 65535, &v, err);
            c->port = p->s.port = (int)v;
            break;
        case 't': c->transport = optarg; break;
        case 'P': c->provider = optarg; break;
        case OPT_RMA: c->rma = true; break;
        case 's':
            free(p->sizes);
            p->sizes = NULL;
            rc = tp_parse_size_list(optarg, "--sizes", &p->sizes, &c->nsizes, err);
            if (!rc && p->sizes[c->nsizes - 1] > (1ull << 30))
                rc = tp_error_set(err, TP_EUSAGE, "--sizes: %llu bytes is over the 1 GiB limit",
                                  (unsigned long long)p->sizes[c->nsizes - 1]);
            break;
        case 'n':
            rc = tp_parse_u64(optarg, "--iters", 1, 1000000000, &c->iters, err);
            p->have_iters = true;
            break;
        case 'T':
            rc = tp_parse_duration_min(optarg, "--time", TP_DURATION_MIN_NS, &c->duration_ns, err);
            p->have_time = true;
            break;
        case OPT_WARMUP:
            rc = tp_parse_u64(optarg, "--warmup", 0, 100000000, &c->warmup, err);
            if (rc == 0 && c->warmup == 0) /* none: the one round trip that times the rest */
                c->warmup_ns = 0;
            break;
        case OPT_WARMUP_TIME:
            rc = tp_parse_duration(optarg, "--warmup-time", &c->warmup_ns, err);
            break;
        case 'w':
            rc = tp_parse_u64(optarg, "--window", 1, 4096, &v, err);
            c->window = (unsigned)v;
            p->have_window = true;
            break;
        case OPT_STREAMS:
            rc = tp_parse_u64(optarg, "--streams", 1, 64, &v, err);
            c->streams = (unsigned)v;
            p->have_streams = true;
            break;
        case OPT_LOAD_SIZE:
            rc = tp_parse_size(optarg, "--load-size", &c->load_size, err);
            if (!rc && c->load_size > (1ull << 30))
                rc = tp_error_set(err, TP_EUSAGE, "--load-size: over the 1 GiB limit");
            p->have_load = true;
            break;
        case OPT_CHECK: c->check = true; break;
        case OPT_BUSY_POLL: c->busy_poll = true; break;
        case OPT_KEY: c->key_file = p->s.key_file = optarg; break;
        case OPT_TIMEOUT:
            rc = tp_parse_duration(optarg, "--timeout", &c->timeout_ns, err);
            if (!rc && c->timeout_ns < 1000000)
                rc = tp_error_set(err, TP_EUSAGE, "--timeout: '%s' is below 1 ms", optarg);
            p->s.timeout_ns = c->timeout_ns;
            break;
        case OPT_JSON: p->json = optarg; break;
        case OPT_BIND: p->s.bind = optarg; break;
        case OPT_INSECURE: p->s.insecure = true; break;
        case OPT_ONE_OFF: p->s.one_off = true; break;
        case OPT_CPU: {
            cpu_set_t set;
            if ((rc = tp_parse_cpu_list(optarg, "--cpu", &set, err)))
                break;
            if (sched_setaffinity(0, sizeof set, &set) != 0)
                rc =
                    tp_error_errno(err, TP_EUSAGE, errno,
                                   "--cpu %s: cannot run there (see nproc and the cpuset)", optarg);
            p->cpu = optarg;
            break;
        }
        case OPT_MEM:
            if (strcmp(optarg, "host") != 0 && strcmp(optarg, "cuda") != 0)
                rc = tp_error_set(err, TP_EUSAGE, "--mem %s: host or cuda", optarg);
            c->mem_cuda = strcmp(optarg, "cuda") == 0;
            break;
        case OPT_GPU: {
            uint64_t g;
            rc = tp_parse_u64(optarg, "--gpu", 0, 1023, &g, err);
            c->gpu = (int)g;
            p->have_gpu = true;
            break;
        }
        case 'h': usage(stdout); return 1;
        case ':':
            return tp_error_set(err, TP_EUSAGE, "option '%s' needs a value", argv[optind - 1]);
        default:
            return tp_error_set(err, TP_EUSAGE, "unknown option '%s' (see trainpath net --help)",
                                argv[optind - 1]);
        }
        if (rc)
            return rc;
    }
    return 0;
}

/* Cross-option rules, after every option is known. */
static int validate(struct parsed *p, int argc, char **argv, tp_error *err)
{
    struct tp_net_client_opts *c = &p->c;
    int rc;
    bool server_only = p->s.bind || p->s.insecure || p->s.one_off;
    if (p->server) {
        if (optind < argc)
            return tp_error_set(err, TP_EUSAGE, "net serve takes no argument, got '%s'",
                                argv[optind]);
        return 0;
    }
    if (server_only)
        return tp_error_set(err, TP_EUSAGE, "--bind, --insecure and --one-off are for net serve");
    if (p->have_gpu && !c->mem_cuda)
        return tp_error_set(err, TP_EUSAGE, "--gpu: only with --mem cuda");
    if (c->mem_cuda && !tp_gpu_built())
        return tp_error_set(err, TP_EUSAGE, "--mem cuda: %s", tp_gpu_build_line());
    if (optind >= argc)
        return tp_error_set(err, TP_EUSAGE, "net %s needs the server's HOST", argv[0]);
    if (optind + 1 < argc)
        return tp_error_set(err, TP_EUSAGE, "unexpected argument '%s'", argv[optind + 1]);
    c->host = argv[optind];
    if (!c->transport)
        c->transport = tp_transport_default(c->provider != NULL)->name;
    if ((rc = tp_transport_check(c->transport, c->provider, c->rma, err)))
        return rc;
    if (p->have_iters && p->have_time)
        return tp_error_set(err, TP_EUSAGE, "give --iters or --time, not both");
    if ((p->have_streams || p->have_load) && c->test != TP_NET_LOADED)
        return tp_error_set(err, TP_EUSAGE, "--streams and --load-size are for net loaded");
    if (p->have_window && c->test == TP_NET_LAT)
        return tp_error_set(err, TP_EUSAGE, "--window is for bw, bibw and loaded");
    if (!p->sizes) {
        const char *def = c->test == TP_NET_LOADED ? "8" : "8-4M";
        if ((rc = tp_parse_size_list(def, "--sizes", &p->sizes, &c->nsizes, err)))
            return rc;
    }
    c->sizes = p->sizes;
    if (p->json && (rc = tp_result_path_ok(p->json, err)))
        return rc;
    if (c->provider)
        return tp_transport_provider_check(tp_transport_find(c->transport), c->provider, err);
    return 0;
}

static int run_server(struct parsed *p)
{
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    p->s.stop = &stop_flag;
    tp_error err;
    tp_error_clear(&err);
    int rc = tp_net_serve(&p->s, &err);
    return rc ? cli_fail(&err) : 0;
}

int cmd_net(int argc, char **argv)
{
    static const char *tests[] = {"lat", "bw", "bibw", "loaded"};
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    struct parsed p = {0};
    p.c.port = p.s.port = TP_WIRE_DEFAULT_PORT;
    p.c.gpu = -1;
    p.c.duration_ns = 1000000000ull;
    p.c.warmup_ns = 100000000ull;
    p.c.window = 64;
    p.c.streams = 4;
    p.c.load_size = 1 << 20;
    p.c.timeout_ns = p.s.timeout_ns = 30000000000ull;
    int which = -1;
    for (int i = 0; i < 4; i++)
        if (strcmp(argv[1], tests[i]) == 0)
            which = i;
    p.server = strcmp(argv[1], "serve") == 0;
    tp_error err;
    tp_error_clear(&err);
    if (which < 0 && !p.server) {
        tp_error_set(&err, TP_EUSAGE, "unknown net test '%s' (serve, lat, bw, bibw, loaded)",
                     argv[1]);
        return cli_fail(&err);
    }
    p.c.test = which < 0 ? TP_NET_LAT : (enum tp_net_test)which;
    int rc = parse(argc - 1, argv + 1, &p, &err);
    if (rc && !p.json) /* the bad option may come before --json: look ahead */
        for (int i = 2; i + 1 < argc; i++)
            if (strcmp(argv[i], "--json") == 0)
                p.json = argv[i + 1];
    if (rc == 1) {
        free(p.sizes);
        return 0;
    }
    /* --json never over the key (no failed document either) */
    const struct tp_file_arg out = {"--json", p.json, NULL},
                             in = {"--key-file", p.s.key_file, NULL};
    if (cli_distinct(&out, 1, &in, 1)) {
        free(p.sizes);
        return 2;
    }
    if (!rc)
        rc = validate(&p, argc - 1, argv + 1, &err);
    if (!p.s.bind)
        p.s.bind = "0.0.0.0";
    if (!rc && p.server) {
        free(p.sizes);
        return run_server(&p);
    }
    if (p.server) {
        free(p.sizes);
        return cli_fail(&err);
    }
    char command[32];
    snprintf(command, sizeof command, "net %s", tests[p.c.test]);
    tp_clock_init();
    json_t *doc = NULL;
    if (!rc) {
        json_t *cfg = tp_net_config_json(&p.c);
        json_object_set_new(cfg, "cpu", p.cpu ? json_string(p.cpu) : json_null());
        doc = tp_result_new(command, cfg);
        p.c.progress_line = cli_progress(false, p.json);
        rc = tp_net_run(&p.c, doc, &err);
    } else if (rc == TP_EUSAGE && cli_refusal_path_ok(p.json)) {
        /* bad input: still leave a document that says why */
        doc = tp_result_new(command, json_pack("{s:s}", "test", tests[p.c.test]));
    }
    int code = rc ? cli_fail(&err) : 0;
    if (doc) {
        tp_result_finish(doc, rc, rc ? err.msg : "");
        if (!rc || json_object_size(json_object_get(doc, "results")))
            tp_net_print(p.json && strcmp(p.json, "-") == 0 ? stderr : stdout, doc);
        if (p.json) {
            tp_error werr;
            if (tp_result_write_run(doc, p.json, &werr) != 0)
                code = code ? code : cli_fail(&werr);
        }
        json_decref(doc);
    }
    free(p.sizes);
    return code;
}
