/* trainpath net: options for the server and the four client tests, in the
 * spelling iperf3 and perftest users expect. Everything after parsing is one
 * library call; a run that fails after parsing still writes its result
 * document (status says why). Each option is a row of one table (opts.h),
 * which --help is written from. */
#include <errno.h>
#include <getopt.h> /* optind */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "opts.h"
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

struct parsed {
    bool have_gpu;
    struct tp_net_client_opts c;
    struct tp_net_server_opts s;
    uint64_t *sizes;
    const char *json;
    const char *cpu;
    bool server, have_iters, have_time, have_streams, have_load, have_window;
};

/* --port 0 is the server's (any free port), never the client's */
static int port_parse(const char *arg, void *opts, tp_error *err)
{
    struct parsed *p = opts;
    uint64_t v = 0;
    int rc = tp_parse_u64(arg, "--port", p->server ? 0 : 1, 65535, &v, err);
    p->c.port = p->s.port = (int)v;
    return rc;
}

static int sizes_parse(const char *arg, void *opts, tp_error *err)
{
    struct parsed *p = opts;
    free(p->sizes);
    p->sizes = NULL;
    int rc = tp_parse_size_list(arg, "--sizes", &p->sizes, &p->c.nsizes, err);
    if (!rc && p->sizes[p->c.nsizes - 1] > (1ull << 30))
        rc = tp_error_set(err, TP_EUSAGE, "--sizes: %llu bytes is over the 1 GiB limit",
                          (unsigned long long)p->sizes[p->c.nsizes - 1]);
    return rc;
}

/* --warmup 0: none, not even the adaptive time; the one round trip that
 * times the rest */
static int warmup_check(const char *arg, void *opts, tp_error *err)
{
    (void)arg;
    (void)err;
    struct parsed *p = opts;
    if (p->c.warmup == 0)
        p->c.warmup_ns = 0;
    return 0;
}

static int load_check(const char *arg, void *opts, tp_error *err)
{
    (void)arg;
    if (((struct parsed *)opts)->c.load_size > (1ull << 30))
        return tp_error_set(err, TP_EUSAGE, "--load-size: over the 1 GiB limit");
    return 0;
}

static int cpu_parse(const char *arg, void *opts, tp_error *err)
{
    cpu_set_t set;
    int rc = tp_parse_cpu_list(arg, "--cpu", &set, err);
    if (rc)
        return rc;
    if (sched_setaffinity(0, sizeof set, &set) != 0)
        rc = tp_error_errno(err, TP_EUSAGE, errno,
                            "--cpu %s: cannot run there (see nproc and the cpuset)", arg);
    ((struct parsed *)opts)->cpu = arg;
    return rc;
}

#define STR_(x) #x
#define STR(x) STR_(x)
#define P(f) CLI_AT(struct parsed, f)
static const char *const mems[] = {"host", "cuda", NULL};

/* every option of net, client's and server's, in the order of --help */
static const struct cli_opt rows[] = {
    {CLI_TEXT,
     .help =
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
         "options:\n"},
    {CLI_CALL, "port", 'p', "N", .check = port_parse, .def = STR(TP_WIRE_DEFAULT_PORT),
     .help = "control port (default {})"},
    {CLI_STRING, "transport", 't', "T", P(c.transport),
     .help = "tcp (kernel sockets, default) or ofi (libfabric)"},
    {CLI_STRING, "provider", 'P', "NAME", P(c.provider),
     .help = "libfabric provider as fi_info prints it: shm,\n"
             "'tcp;ofi_rxm', 'verbs;ofi_rxm', efa, cxi (implies ofi)"},
    {CLI_FLAG, "rma", .at = P(c.rma), .help = "ofi: one-sided RMA writes with remote CQ data"},
    {CLI_CALL, "sizes", 's', "LIST", .check = sizes_parse,
     .help = "message sizes, e.g. 64 or 8-4M or 8,4K,1M\n(default 8-4M; loaded: 8)"},
    {CLI_UINT, "iters", 'n', "N", P(c.iters), .given = P(have_iters), .lo = 1, .hi = 1000000000,
     .help = "measured iterations per size"},
    {CLI_DURATION, "time", 'T', "DUR", P(c.duration_ns), .given = P(have_time),
     .lo = TP_DURATION_MIN_NS, .def = "1s",
     .help = "measure for DUR per size instead (default {})"},
    {CLI_UINT, "warmup", 0, "N", P(c.warmup), .hi = 100000000, .check = warmup_check,
     .help = "warm-up iterations per size (default: adaptive)"},
    {CLI_DURATION, "warmup-time", 0, "DUR", P(c.warmup_ns), .def = "100ms",
     .help = "adaptive warm-up length per size (default {})"},
    {CLI_UINT, "window", 'w', "N", P(c.window), .given = P(have_window), .lo = 1, .hi = 4096,
     .def = "64", .help = "messages in flight for bw/bibw/loaded (default {})"},
    {CLI_UINT, "streams", 0, "N", P(c.streams), .given = P(have_streams), .lo = 1, .hi = 64,
     .def = "4", .help = "loaded: background streams (default {})"},
    {CLI_SIZE, "load-size", 0, "SIZE", P(c.load_size), .given = P(have_load), .def = "1M",
     .check = load_check, .help = "loaded: background message size (default {})"},
    {CLI_FLAG, "check", .at = P(c.check),
     .help = "verify every payload byte; a bad byte fails the run"},
    {CLI_FLAG, "busy-poll", .at = P(c.busy_poll),
     .help = "spin instead of sleeping in the kernel (tcp)"},
    {CLI_STRING, "key-file", 0, "F", P(c.key_file), P(s.key_file),
     .help = "pre-shared key for the control channel"},
    {CLI_DURATION, "timeout", 0, "DUR", P(c.timeout_ns), P(s.timeout_ns), .lo = 1000000,
     .def = "30s",
     .help = "deadline of every blocking step, each control frame whole\n"
             "within it; on the server it also caps what a client asks\n"
             "for (default {})"},
    {CLI_STRING, "json", 0, "FILE", P(json),
     .help = "write the result document (atomically; - for stdout)"},
    {CLI_CALL, "cpu", 0, "LIST", .check = cpu_parse,
     .help = "run on these CPUs (e.g. 2 or 0-3), as taskset would;\n"
             "the document records the affinity either way"},
    {CLI_CHOICE, "mem", 0, "M", P(c.mem_cuda), .values = mems,
     .help = "host (default) or cuda: messages start and end in GPU\n"
             "memory on both ends (perftest's --use_cuda); with an ofi\n"
             "provider that offers FI_HMEM the provider moves GPU\n"
             "memory itself, else each message is staged through host\n"
             "memory inside the timing (the result's mem_path says which)"},
    {CLI_UINT, "gpu", 0, "N", P(c.gpu), .given = P(have_gpu), .hi = 1023,
     .help = "the client's device index (default 0; the server uses 0)"},
    {CLI_TEXT,
     .help = "Progress (sizes done, time left) is shown on stderr when it is a terminal and\n"
             "--json is not -.\n"
             "\n"
             "server options:\n"},
    {CLI_STRING, "bind", 0, "ADDR", P(s.bind), .help = "listen address (default 0.0.0.0)"},
    {CLI_FLAG, "insecure", .at = P(s.insecure),
     .help = "allow a non-loopback address without --key-file"},
    {CLI_FLAG, "one-off", .at = P(s.one_off), .help = "exit after one test"},
    {CLI_END},
};

static const struct cli_cmd net_cmd = {"net", rows, 24, .errors = CLI_ERRORS_QUOTED};

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
        cli_opts_usage(&net_cmd, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    struct parsed p = {.c.gpu = -1};
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
    int rc = cli_opts_defaults(&net_cmd, &p, &err);
    if (rc == 0)
        rc = cli_opts_parse(&net_cmd, argc - 1, argv + 1, &p, &err);
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
