/* Tables for people: the same figures as the result document, in the units
 * peers print (latency in microseconds as OSU and sockperf; GB/s = 1e9 B/s
 * and Gbit/s as perftest and iperf3). Reads the document only. */
#include <string.h>

#include "tp/counters.h"
#include "tp/json.h"
#include "tp/net.h"
#include "tp/transport.h"
#include "tp/units.h"

static void lat_table(FILE *f, const json_t *list, const char *title)
{
    fprintf(f, "%s: one-way latency = RTT/2, microseconds\n", title);
    fprintf(f, "%9s %10s %9s %9s %9s %9s %9s %9s %9s %9s %8s\n", "size", "iters", "min", "p50",
            "mean", "p90", "p99", "p99.9", "max", "stdev", "MAD");
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        const json_t *l = json_object_get(e, "latency");
        char sz[32];
        tp_fmt_size((uint64_t)json_integer_value(json_object_get(e, "size_bytes")), sz, sizeof sz);
        fprintf(f, "%9s %10lld %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %8.2f\n", sz,
                (long long)json_integer_value(json_object_get(e, "iterations")),
                tp_json_num_or(l, "min", 0) / 1e3, tp_json_num_or(l, "p50", 0) / 1e3,
                tp_json_num_or(l, "mean", 0) / 1e3, tp_json_num_or(l, "p90", 0) / 1e3,
                tp_json_num_or(l, "p99", 0) / 1e3, tp_json_num_or(l, "p99_9", 0) / 1e3,
                tp_json_num_or(l, "max", 0) / 1e3, tp_json_num_or(l, "stdev", 0) / 1e3,
                tp_json_num_or(l, "mad", 0) / 1e3);
    }
}

static void bw_table(FILE *f, const json_t *list, bool bidir)
{
    const char *key = bidir ? "bibw" : "bw";
    fprintf(f, "%s: bandwidth (GB/s = 1e9 B/s)%s\n", key, bidir ? ", sum of both directions" : "");
    fprintf(f, "%9s %10s %9s %9s %9s %10s %11s %11s\n", "size", "messages", "GB/s", "Gbit/s",
            "Mmsg/s", bidir ? "c2s GB/s" : "peak GB/s", "cli s/GB", "srv s/GB");
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        char sz[32];
        tp_fmt_size((uint64_t)json_integer_value(json_object_get(e, "size_bytes")), sz, sizeof sz);
        double bw = tp_json_num_or(e, key, 0);
        const json_t *cpu = json_object_get(e, "cpu");
        fprintf(f, "%9s %10lld %9.3f %9.3f %9.3f %10.3f %11.3f %11.3f\n", sz,
                (long long)json_integer_value(json_object_get(e, "messages")), bw / 1e9,
                bw * 8 / 1e9, tp_json_num_or(e, "msg_rate", 0) / 1e6,
                tp_json_num_or(e, bidir ? "bw_c2s" : "peak_bw", 0) / 1e9,
                tp_json_num_or(json_object_get(cpu, "client"), "per_GB", 0),
                tp_json_num_or(json_object_get(cpu, "server"), "per_GB", 0));
    }
}

static void print_lat(FILE *f, const json_t *res, const char *title)
{
    lat_table(f, json_object_get(res, "sizes"), title);
}

static void print_bw(FILE *f, const json_t *res, const char *title)
{
    fprintf(f, "%s\n", title);
    bw_table(f, json_object_get(res, "sizes"), false);
}

static void print_bibw(FILE *f, const json_t *res, const char *title)
{
    fprintf(f, "%s\n", title);
    bw_table(f, json_object_get(res, "sizes"), true);
}

static void print_loaded(FILE *f, const json_t *res, const char *title)
{
    fprintf(f, "%s\n", title);
    lat_table(f, json_object_get(res, "isolated"), "isolated");
    lat_table(f, json_object_get(res, "loaded"), "loaded");
    const json_t *load = json_object_get(res, "load");
    char sz[32];
    if (load)
        fprintf(f, "load: %lld streams of %s messages, %.3f GB/s\n",
                (long long)json_integer_value(json_object_get(load, "streams")),
                tp_fmt_bytes((uint64_t)json_integer_value(json_object_get(load, "size_bytes")), sz,
                             sizeof sz),
                tp_json_num_or(load, "bw", 0) / 1e9);
    size_t i;
    json_t *e;
    fprintf(f, "congestion impact factor (loaded / isolated):\n%9s %9s %9s\n", "size", "mean",
            "p99");
    json_array_foreach(json_object_get(res, "impact_factor"), i, e)
    {
        tp_fmt_size((uint64_t)json_integer_value(json_object_get(e, "size_bytes")), sz, sizeof sz);
        fprintf(f, "%9s %9.2f %9.2f\n", sz, tp_json_num_or(e, "mean", 0),
                tp_json_num_or(e, "p99", 0));
    }
}

/* One printer per test, by the result's "test". */
static const struct {
    const char *test;
    void (*print)(FILE *f, const json_t *res, const char *title);
} printers[] = {
    {"lat", print_lat},
    {"bw", print_bw},
    {"bibw", print_bibw},
    {"loaded", print_loaded},
};

void tp_net_print(FILE *f, const json_t *doc)
{
    const json_t *cfg = json_object_get(doc, "config");
    const json_t *res = json_object_get(doc, "results");
    const json_t *tr = json_object_get(json_object_get(doc, "provenance"), "transport");
    const char *test = json_string_value(json_object_get(res, "test"));
    char title[256];
    const char *transport = json_string_value(json_object_get(cfg, "transport"));
    const struct tp_transport_ops *t = tp_transport_find(transport);
    bool prov = t && t->needs_provider && tr;
    snprintf(title, sizeof title, "trainpath net %s %s:%lld over %s%s%s%s", test ? test : "?",
             json_string_value(json_object_get(cfg, "host")),
             (long long)json_integer_value(json_object_get(cfg, "port")), transport,
             prov ? " provider " : "",
             prov ? json_string_value(json_object_get(tr, "provider")) : "",
             strcmp(json_string_value(json_object_get(cfg, "mode")), "rma") == 0
                 ? " (RMA write with data)"
                 : "");
    for (size_t i = 0; test && i < sizeof printers / sizeof printers[0]; i++)
        if (strcmp(test, printers[i].test) == 0) {
            printers[i].print(f, res, title);
            break;
        }
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(res, "connections"), i, c)
        fprintf(f, "connection %s: %" JSON_INTEGER_FORMAT " segments retransmitted, rtt %"
                JSON_INTEGER_FORMAT " us (var %" JSON_INTEGER_FORMAT " us)\n",
                json_string_value(json_object_get(c, "kind")),
                json_integer_value(json_object_get(c, "total_retrans")),
                json_integer_value(json_object_get(c, "rtt_us")),
                json_integer_value(json_object_get(c, "rttvar_us")));
    tp_ctr_print_results(f, res);
}
