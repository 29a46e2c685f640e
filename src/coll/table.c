/* coll's table for people, in nccl-tests' columns (size, count, type,
 * redop, time, algbw, busbw, #wrong) plus the algorithm and arrival skew:
 * microseconds, GB/s = 1e9 B/s. The rows read the result document only,
 * so they show what the document says. */
#include <string.h>

#include "tp/coll.h"
#include "tp/group.h"
#include "tp/transport.h"
#include "tp/units.h"

void tp_coll_print_header(FILE *f, const struct tp_coll_job *j, const struct tp_group_opts *g,
                          const struct tp_comm *c)
{
    const struct tp_coll_bench_opts *b = &j->bench;
    const struct tp_comm_opts *co = &g->comm;
    bool shm = tp_comm_shm(c);
    char path[160];
    tp_transport_label(tp_transport_parse(co->transport, NULL), co->provider, path, sizeof path);
    int n = tp_comm_size(c), nh = tp_comm_nhosts(c);
    fprintf(f, "# trainpath coll: %s, %d rank%s on %d host%s, %s, redop %s, %s%s%s%s\n",
            tp_coll_name(b->kind), n, n == 1 ? "" : "s", nh, nh == 1 ? "" : "s",
            tp_dtype_name(b->dtype),
            tp_redop_name(b->op), shm ? "shm within hosts, " : "", path, shm ? " between" : "",
            b->exact ? ", repro exact" : "");
    fprintf(f, "# %10s %12s %-12s %10s %10s %10s %8s %8s %7s %10s\n", "size", "count", "algo",
            "time(us)", "p50(us)", "p99(us)", "algbw", "busbw", "#wrong", "skew99(us)");
    fprintf(f, "# %10s %12s %-12s %10s %10s %10s %8s %8s %7s %10s\n", "", "(elems)", "", "mean",
            "", "", "(GB/s)", "(GB/s)", "", "");
    fflush(f);
}

void tp_coll_print_row(FILE *f, const json_t *e)
{
    json_t *t = json_object_get(e, "time");
    char sz[32];
    fprintf(f, "%12s %12lld %-12s %10.2f %10.2f %10.2f %8.3f %8.3f %7lld %10.2f\n",
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
    fflush(f);
}

void tp_coll_print_comparison(FILE *f, const json_t *results, const struct tp_coll_backends *l)
{
    json_t *sizes = json_object_get(results, "sizes");
    const char *first = l->row[0]->name;
    fprintf(f, "# busbw (GB/s) by backend, and the ratio to %s\n# %10s", first, "size");
    for (int k = 0; k < l->n; k++)
        fprintf(f, " %10s", l->row[k]->name);
    for (int k = 1; k < l->n; k++) {
        char lab[32];
        snprintf(lab, sizeof lab, "%s/%s", l->row[k]->name, first);
        fprintf(f, " %15s", lab);
    }
    fprintf(f, "\n");
    size_t i, j;
    json_t *e, *x;
    json_array_foreach(sizes, i, e) {
        if (strcmp(json_string_value(json_object_get(e, "backend")), first) != 0)
            continue;
        json_int_t sz = json_integer_value(json_object_get(e, "size_bytes"));
        double bw[TP_COLL_BACKENDS] = {0};
        json_array_foreach(sizes, j, x) {
            if (json_integer_value(json_object_get(x, "size_bytes")) != sz)
                continue;
            for (int k = 0; k < l->n; k++)
                if (strcmp(json_string_value(json_object_get(x, "backend")), l->row[k]->name) == 0)
                    bw[k] = json_number_value(
                        json_object_get(json_object_get(x, "busbw"), "value"));
        }
        char szs[32];
        fprintf(f, "  %10s", tp_fmt_size((uint64_t)sz, szs, sizeof szs));
        for (int k = 0; k < l->n; k++)
            fprintf(f, " %10.2f", bw[k] / 1e9);
        for (int k = 1; k < l->n; k++) {
            if (bw[0] > 0)
                fprintf(f, " %15.2f", bw[k] / bw[0]);
            else
                fprintf(f, " %15s", "-");
        }
        fprintf(f, "\n");
    }
    fflush(f);
}
