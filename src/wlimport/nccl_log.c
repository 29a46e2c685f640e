/* An NCCL log (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL) as bucket sizes:
 * one line per collective call, in the form NCCL has printed since 2.3
 *
 *   host:pid:tid [dev] NCCL INFO AllReduce: opCount 3 sendbuff 0x.. recvbuff 0x..
 *       count 2621440 datatype 7 op 0 root 0 comm 0x.. [nranks=2] stream 0x..
 *
 * (older 2.x lines lack [nranks=N]; later ones may add fields after the
 * stream: each field is read by its name). The allreduces of one rank (the
 * lines of one process and communicator, the lowest device first) are a
 * sequence of (count, datatype); its shortest repeating period, after a
 * first step that differs (DDP rebuilds its buckets after step 1), is one
 * step, and each allreduce of it a bucket. The log has no times. */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "wlimport_int.h"

#define MAX_CALLS 2000000 /* allreduce lines read from one file */
#define MAX_NAMED 10      /* malformed lines named one by one */
#define MAX_PERIOD 1024   /* allreduces a step: trainpath step's bucket limit */

/* ncclDataType_t: the numbering of every NCCL 2.x; bfloat16 since 2.10,
 * the fp8 types since 2.24 (numbers no earlier release used) */
static const struct {
    const char *name;
    size_t size;
} nccl_types[] = {
    {"int8", 1},    {"uint8", 1},    {"int32", 4},      {"uint32", 4},
    {"int64", 8},   {"uint64", 8},   {"float16", 2},    {"float32", 4},
    {"float64", 8}, {"bfloat16", 2}, {"float8e4m3", 1}, {"float8e5m2", 1},
};

size_t tp_wlimport_nccl_dtype(int nccl, const char **name)
{
    if (nccl < 0 || (size_t)nccl >= sizeof nccl_types / sizeof nccl_types[0]) {
        if (name)
            *name = NULL;
        return 0;
    }
    if (name)
        *name = nccl_types[nccl].name;
    return nccl_types[nccl].size;
}

static bool detect(const char *text, size_t len)
{
    (void)len;
    return strstr(text, "NCCL INFO") != NULL;
}

struct call {
    unsigned group;
    int dtype;
    uint64_t count;
    unsigned nranks;
};

struct group {
    unsigned long pid;
    char comm[32];
    long dev;
};

/* the value after " KEY " in s (KEY followed by a space), or NULL */
static const char *field(const char *s, const char *key)
{
    size_t k = strlen(key);
    for (const char *p = strstr(s, key); p; p = strstr(p + 1, key))
        if ((p == s || p[-1] == ' ') && p[k] == ' ')
            return p + k + 1;
    return NULL;
}

static bool whole(const char *v, uint64_t *out)
{
    if (!v || !isdigit((unsigned char)*v))
        return false;
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    if (*end && *end != ' ')
        return false;
    *out = x;
    return true;
}

/* "host:pid:tid [dev] " before the NCCL INFO at info: the pid and device,
 * 0 and -1 where the prefix is not there */
static void prefix(const char *line, const char *info, unsigned long *pid, long *dev)
{
    *pid = 0;
    *dev = -1;
    const char *br = NULL;
    for (const char *p = line; p < info; p++)
        if (*p == '[')
            br = p;
    if (br && isdigit((unsigned char)br[1]))
        *dev = strtol(br + 1, NULL, 10);
    /* the pid: the number between the last two colons before the bracket */
    const char *end = br ? br : info, *c2 = NULL, *c1 = NULL;
    for (const char *p = line; p < end; p++)
        if (*p == ':') {
            c1 = c2;
            c2 = p;
        }
    if (c1 && isdigit((unsigned char)c1[1]))
        *pid = strtoul(c1 + 1, NULL, 10);
}

static int read_log(const char *path, const char *text, size_t len, struct tp_wlimport_part *p,
                    json_t *warnings, tp_error *err)
{
    (void)len;
    struct call *calls = NULL;
    struct group *groups = NULL;
    size_t ncalls = 0, cap = 0, ngroups = 0, gcap = 0, bad = 0, unnamed = 0;
    unsigned long lineno = 0;
    int rc = 0;
    for (const char *line = text; rc == 0 && *line;) {
        const char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        char buf[1024];
        lineno++;
        snprintf(buf, sizeof buf, "%.*s", (int)(n < sizeof buf ? n : sizeof buf - 1), line);
        line += n + (nl != NULL);
        char *cr = strchr(buf, '\r');
        if (cr)
            *cr = 0;
        const char *info = strstr(buf, "NCCL INFO ");
        if (!info || !strstr(info, "opCount "))
            continue; /* not a collective's line */
        const char *body = info + strlen("NCCL INFO ");
        const char *colon = strstr(body, ": opCount ");
        if (!colon) {
            if (unnamed++ == 0)
                tp__wlimport_warn(warnings, path, lineno,
                                  "a collective without its name (NCCL before 2.3 prints none): "
                                  "left out");
            continue;
        }
        if ((size_t)(colon - body) != strlen("AllReduce") ||
            strncmp(body, "AllReduce", strlen("AllReduce")) != 0)
            continue; /* another collective */
        uint64_t count = 0, dt = 0, nr = 0;
        const char *comm = field(colon, "comm"), *nranks = strstr(colon, "[nranks=");
        const char *why = NULL;
        if (!whole(field(colon, "count"), &count))
            why = "no whole number after 'count'";
        else if (!whole(field(colon, "datatype"), &dt))
            why = "no whole number after 'datatype'";
        else if (!tp_wlimport_nccl_dtype((int)(dt > 64 ? 64 : dt), NULL))
            why = "a datatype that is not an ncclDataType_t (0 to 11)";
        else if (count == 0 || count > (UINT64_C(1) << 40))
            why = "a count out of range (1 to 2^40 elements)";
        else if (!comm)
            why = "no 'comm'";
        if (why) {
            if (bad++ < MAX_NAMED)
                tp__wlimport_warn(warnings, path, lineno, "an AllReduce line with %s: left out",
                                  why);
            continue;
        }
        if (nranks)
            nr = strtoull(nranks + strlen("[nranks="), NULL, 10);
        unsigned long pid;
        long dev;
        prefix(buf, info, &pid, &dev);
        char cm[32];
        size_t cl = strcspn(comm, " ");
        snprintf(cm, sizeof cm, "%.*s", (int)(cl < sizeof cm ? cl : sizeof cm - 1), comm);
        size_t g = 0;
        while (g < ngroups && !(groups[g].pid == pid && strcmp(groups[g].comm, cm) == 0))
            g++;
        if (g == ngroups) {
            if (ngroups == gcap) {
                gcap = gcap ? 2 * gcap : 8;
                struct group *ng = realloc(groups, gcap * sizeof *ng);
                if (!ng) {
                    rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
                    break;
                }
                groups = ng;
            }
            groups[ngroups].pid = pid;
            groups[ngroups].dev = dev;
            snprintf(groups[ngroups].comm, sizeof groups[ngroups].comm, "%s", cm);
            ngroups++;
        }
        if (ncalls == MAX_CALLS)
            break;
        if (ncalls == cap) {
            cap = cap ? 2 * cap : 256;
            struct call *nc = realloc(calls, cap * sizeof *nc);
            if (!nc) {
                rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
                break;
            }
            calls = nc;
        }
        calls[ncalls++] = (struct call){(unsigned)g, (int)dt, count, (unsigned)nr};
    }
    if (bad > MAX_NAMED)
        tp__wlimport_warn(warnings, path, 0, "%zu more malformed AllReduce lines left out",
                          bad - MAX_NAMED);
    if (unnamed > 1)
        tp__wlimport_warn(warnings, path, 0, "%zu more collectives without a name left out",
                          unnamed - 1);
    /* one rank: the group of the lowest device, the first seen among equals */
    size_t pick = 0;
    for (size_t g = 1; g < ngroups; g++)
        if (groups[g].dev >= 0 && (groups[pick].dev < 0 || groups[g].dev < groups[pick].dev))
            pick = g;
    uint64_t *keys = NULL;
    size_t nk = 0;
    if (rc == 0 && ncalls && !(keys = malloc(ncalls * sizeof *keys)))
        rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
    unsigned world = 0;
    for (size_t i = 0; rc == 0 && i < ncalls; i++)
        if (calls[i].group == pick) {
            keys[nk++] = calls[i].count << 8 | (uint64_t)calls[i].dtype;
            if (calls[i].nranks)
                world = calls[i].nranks;
        }
    if (rc == 0 && nk == 0)
        rc = tp_error_set(err, TP_EUSAGE,
                          "%s: no usable AllReduce line (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL "
                          "logs one per call: '... NCCL INFO AllReduce: opCount N ... count N "
                          "datatype N ...')",
                          path);
    if (rc == 0 && ngroups > 1)
        tp__wlimport_warn(warnings, path, 0,
                          "%zu processes or communicators: the allreduces of pid %lu, comm %s "
                          "taken (the lowest device)",
                          ngroups, groups[pick].pid, groups[pick].comm);
    size_t start = 0, period = nk, steps = 0;
    if (rc == 0 && (steps = tp_wlimport_period(keys, nk, &start, &period)) == 0) {
        tp__wlimport_warn(warnings, path, 0,
                          "no sequence of allreduces repeats: all %zu taken as one step", nk);
        start = 0;
        period = nk;
        steps = 1;
    }
    if (rc == 0 && period > MAX_PERIOD)
        rc = tp_error_set(err, TP_EUSAGE,
                          "%s: %zu allreduces and no step of at most %d of them repeating: "
                          "trainpath step replays up to %d buckets a step",
                          path, period, MAX_PERIOD, MAX_PERIOD);
    if (rc == 0 && steps > 100000)
        steps = 100000;
    if (rc == 0 && start + steps * period < nk)
        tp__wlimport_warn(warnings, path, 0, "the last %zu allreduces (a step cut short) left out",
                          nk - start - steps * period);
    if (rc == 0)
        rc = tp__wlimport_alloc(p, steps, (unsigned)period, false, true, false, path, err);
    for (size_t b = 0; rc == 0 && b < period; b++) {
        uint64_t k = keys[start + b];
        size_t size = tp_wlimport_nccl_dtype((int)(k & 0xff), &p->dtype[b]);
        p->bytes[b] = (k >> 8) * size;
    }
    if (rc == 0) {
        p->skipped = start ? 1 : 0;
        p->world_size = world;
        snprintf(p->backend, sizeof p->backend, "nccl");
        if (start)
            tp__wlimport_warn(warnings, path, 0,
                              "the first step's %zu allreduce%s left out: it differs from the "
                              "others (DDP rebuilds its buckets after it)",
                              start, start == 1 ? "" : "s");
    }
    free(keys);
    free(calls);
    free(groups);
    return rc;
}

/* the smallest start and, for it, the shortest period (at most
 * MAX_PERIOD, trainpath step's buckets) from which keys repeat to the end,
 * with at least two whole periods; whole: the keys from the start are
 * whole periods (the log ends at a step's end). For each period q the
 * first start from which every key equals the one q later is found by one
 * walk back from the end, so a long log costs at most MAX_PERIOD walks of
 * it, never a search over every start. */
static size_t find_period(const uint64_t *keys, size_t n, bool whole, size_t *start, size_t *period)
{
    size_t best_s = n, best_q = 0;
    for (size_t q = 1; q <= MAX_PERIOD && 2 * q <= n; q++) {
        size_t s = n - q;
        while (s > 0 && keys[s - 1] == keys[s - 1 + q])
            s--;
        if (whole && (n - s) % q)
            s += (n - s) % q;
        if (n - s >= 2 * q && s < best_s) {
            best_s = s;
            best_q = q;
        }
    }
    if (!best_q)
        return 0;
    *start = best_s;
    *period = best_q;
    return (n - best_s) / best_q;
}

size_t tp_wlimport_period(const uint64_t *keys, size_t n, size_t *start, size_t *period)
{
    /* A log starts with the job, so a sequence that repeats from its first
     * key starts a step there (its end may be cut short). Otherwise a first
     * step differs, and the step's boundary is taken where the log ends (a
     * rotation of the step, its first buckets taken for its last, repeats
     * as well); only where no whole steps fit, a step cut short at the end. */
    size_t s = 0, q = 0, steps = find_period(keys, n, false, &s, &q);
    if (steps && s == 0) {
        *start = s;
        *period = q;
        return steps;
    }
    size_t whole = find_period(keys, n, true, start, period);
    if (whole)
        return whole;
    *start = s;
    *period = q;
    return steps;
}

const struct tp__wlimport_format tp__wlimport_nccl_log = {
    .name = "nccl-log",
    .what = "an NCCL log (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL)",
    .detect = detect,
    .read = read_log,
};
