/* An NCCL or RCCL log (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL) as one
 * rank's collectives: one line per call, in the form NCCL has printed
 * since 2.3 and RCCL prints too,
 *
 *   host:pid:tid [dev] NCCL INFO AllGather: opCount 3 sendbuff 0x.. recvbuff 0x..
 *       count 2621440 datatype 7 op 0 root 0 comm 0x.. [nranks=8] stream 0x..
 *
 * (older 2.x lines lack [nranks=N]; later ones add fields: each is read by
 * its name). One rank's: the lines of the process of the lowest device, of
 * that device (a process that drives several GPUs is a rank per GPU), on
 * all its communicators. Every kind (tp_wlimport_kind_of: AllReduce, AllGather,
 * ReduceScatter, Broadcast, Reduce, Send, Recv, AllToAll); NCCL's count
 * is per rank for AllGather (what each sends) and ReduceScatter (what each
 * receives), so their size needs the communicator's ranks ([nranks=N], or
 * its "comm 0x.. rank R nranks N" init line). The calls of one process
 * (the lowest device's), all its communicators, are a sequence of (kind,
 * count, datatype, communicator); its shortest repeating period, after a
 * first step that differs (DDP's bucket rebuild, the initial broadcast),
 * is one step. The log has no times. Read in chunks, line by line; a NUL
 * byte is read as a space, never as the end. */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "wlimport_int.h"

#define MAX_CALLS 4000000 /* collective lines read from one file */
#define MAX_NAMED 10      /* malformed lines named one by one */
#define MAX_PERIOD 4096   /* collectives a step */
#define MAX_COMMS 255     /* communicators of one process */
#define MAX_RANKS (1u << 24)

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
    uint64_t count;
    uint32_t comm; /* in comms */
    uint8_t kind, dtype;
};

struct comm {
    char host[64]; /* host, pid and address: one address is reused by other processes */
    unsigned long pid;
    char id[32];
    long dev;
    unsigned nranks; /* 0: not said */
    int rank;        /* -1: not said */
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

/* a whole number at v ending at a space, ']', or the end */
static bool whole(const char *v, uint64_t max, uint64_t *out)
{
    if (!v || !isdigit((unsigned char)*v))
        return false;
    uint64_t x = 0;
    for (; isdigit((unsigned char)*v); v++) {
        if (x > (UINT64_MAX - 9) / 10)
            return false;
        x = x * 10 + (uint64_t)(*v - '0');
    }
    if (*v && *v != ' ' && *v != ']' && *v != ',')
        return false;
    if (x > max)
        return false;
    *out = x;
    return true;
}

/* "host:pid:tid [dev] " before the NCCL INFO at info: the host, pid and
 * device; "", 0 and -1 where the prefix is not there */
static void prefix(const char *line, const char *info, char host[64], unsigned long *pid, long *dev)
{
    *pid = 0;
    *dev = -1;
    host[0] = 0;
    const char *br = NULL;
    for (const char *p = line; p < info; p++)
        if (*p == '[')
            br = p;
    if (br && isdigit((unsigned char)br[1]))
        *dev = strtol(br + 1, NULL, 10);
    const char *end = br ? br : info, *c2 = NULL, *c1 = NULL;
    for (const char *p = line; p < end; p++)
        if (*p == ':') {
            c1 = c2;
            c2 = p;
        }
    if (c1 && isdigit((unsigned char)c1[1]))
        *pid = strtoul(c1 + 1, NULL, 10);
    if (c1) { /* the host: the token's text before its pid */
        const char *h = c1;
        while (h > line && h[-1] != ' ' && h[-1] != '\t' && h[-1] != ')')
            h--;
        snprintf(host, 64, "%.*s", (int)(c1 - h), h);
    }
}

struct log {
    const char *path;
    json_t *warnings;
    tp_error *err;
    struct call *calls;
    size_t ncalls;
    struct comm *comms;
    size_t ncomms;
    size_t bad, unnamed, other;
    char other_name[32];
    char version[32];
    bool rccl;
};

static bool same_process(const struct comm *a, const struct comm *b)
{
    return a->pid == b->pid && strcmp(a->host, b->host) == 0;
}

static int comm_of(struct log *L, const char *host, unsigned long pid, const char *id, size_t len,
                   long dev)
{
    char cm[32];
    snprintf(cm, sizeof cm, "%.*s", (int)(len < sizeof cm ? len : sizeof cm - 1), id);
    for (size_t i = 0; i < L->ncomms; i++)
        if (L->comms[i].pid == pid && strcmp(L->comms[i].id, cm) == 0 &&
            strcmp(L->comms[i].host, host) == 0)
            return (int)i;
    struct comm *b = tp__wl_grow((void **)&L->comms, &L->ncomms, sizeof *b);
    if (!b)
        return -1;
    *b = (struct comm){.pid = pid, .dev = dev, .rank = -1};
    snprintf(b->host, sizeof b->host, "%s", host);
    snprintf(b->id, sizeof b->id, "%s", cm);
    return (int)L->ncomms - 1;
}

/* one line (NULs already spaces) */
static int line(struct log *L, char *buf, unsigned long lineno)
{
    /* the last "NCCL INFO ": two processes' lines written into one (a
     * line's start, then another's whole) keep the whole one at the end */
    const char *info = NULL;
    for (const char *q = strstr(buf, "NCCL INFO "); q; q = strstr(q + 1, "NCCL INFO "))
        info = q;
    if (!info)
        return 0;
    const char *body = info + strlen("NCCL INFO ");
    unsigned long pid;
    long dev;
    char host[64];
    uint64_t v;
    const char *ver = strstr(body, "NCCL version ");
    if (!ver)
        ver = strstr(body, "RCCL version ");
    if (ver && !L->version[0]) {
        L->rccl = ver[0] == 'R';
        ver += strlen("NCCL version ");
        snprintf(L->version, sizeof L->version, "%.*s", (int)strcspn(ver, " \r"), ver);
        return 0;
    }
    /* "comm 0x.. rank R nranks N" (nRanks in later releases): the init line */
    if (strncmp(body, "comm ", 5) == 0 && field(body, "rank")) {
        const char *id = body + 5, *nr = field(body, "nranks");
        if (!nr)
            nr = field(body, "nRanks");
        prefix(buf, info, host, &pid, &dev);
        int c = comm_of(L, host, pid, id, strcspn(id, " "), dev);
        if (c < 0)
            return tp_error_set(L->err, TP_ENOMEM, "%s: out of memory", L->path);
        if (whole(field(body, "rank"), MAX_RANKS, &v))
            L->comms[c].rank = (int)v;
        if (whole(nr, MAX_RANKS, &v) && v)
            L->comms[c].nranks = (unsigned)v;
        return 0;
    }
    if (!strstr(body, "opCount "))
        return 0; /* not a collective's line */
    const char *colon = strstr(body, ": opCount ");
    if (!colon) {
        if (L->unnamed++ == 0)
            tp__wlimport_warn(L->warnings, L->path, lineno,
                              "a collective without its name (NCCL before 2.3 prints none): "
                              "left out");
        return 0;
    }
    char name[32];
    snprintf(name, sizeof name, "%.*s",
             (int)((size_t)(colon - body) < sizeof name ? colon - body : (long)sizeof name - 1),
             body);
    int kind = tp_wlimport_kind_of(name);
    if (kind < 0) {
        if (L->other++ == 0)
            snprintf(L->other_name, sizeof L->other_name, "%s", name);
        return 0;
    }
    uint64_t count = 0, dt = 0, nr = 0;
    const char *comm = field(colon, "comm"), *nranks = strstr(colon, "[nranks=");
    const char *why = NULL;
    if (!whole(field(colon, "count"), UINT64_MAX, &count))
        why = "no whole number after 'count'";
    else if (!whole(field(colon, "datatype"), 255, &dt) || !tp_wlimport_nccl_dtype((int)dt, NULL))
        why = "a datatype that is not an ncclDataType_t (0 to 11)";
    else if (count > (UINT64_C(1) << 40) || (count == 0 && kind != TP_WL_BARRIER))
        why = "a count out of range (1 to 2^40 elements)";
    else if (!comm)
        why = "no 'comm'";
    else if (nranks && (!whole(nranks + strlen("[nranks="), MAX_RANKS, &nr) || nr == 0))
        why = "an [nranks=N] that is not a rank count (1 to 16777216)";
    if (why) {
        if (L->bad++ < MAX_NAMED)
            tp__wlimport_warn(L->warnings, L->path, lineno, "a %s line with %s: left out", name,
                              why);
        return 0;
    }
    prefix(buf, info, host, &pid, &dev);
    int c = comm_of(L, host, pid, comm, strcspn(comm, " "), dev);
    if (c < 0)
        return tp_error_set(L->err, TP_ENOMEM, "%s: out of memory", L->path);
    if (nr)
        L->comms[c].nranks = (unsigned)nr;
    if (L->ncalls == MAX_CALLS)
        return 0;
    struct call *k = tp__wl_grow((void **)&L->calls, &L->ncalls, sizeof *k);
    if (!k)
        return tp_error_set(L->err, TP_ENOMEM, "%s: out of memory", L->path);
    *k = (struct call){count, (uint32_t)c, (uint8_t)kind, (uint8_t)dt};
    return 0;
}

/* every line of the stream, NULs as spaces, a line cut at 4 KiB */
static int lines(struct tp__wl_in *in, struct log *L, size_t *nuls)
{
    char buf[4096 + 1];
    size_t n = 0;
    unsigned long lineno = 0;
    unsigned char *chunk = malloc(1u << 18);
    if (!chunk)
        return tp_error_set(L->err, TP_ENOMEM, "%s: out of memory", L->path);
    int rc = 0;
    for (;;) {
        size_t got = 0;
        if ((rc = tp__wl_in_read(in, chunk, 1u << 18, &got, L->err)) != 0)
            break;
        for (size_t i = 0; i < got && rc == 0; i++) {
            if (chunk[i] != '\n') {
                if (n < sizeof buf - 1)
                    buf[n++] = chunk[i] ? (char)chunk[i] : ' ';
                *nuls += chunk[i] == 0;
                continue;
            }
            buf[n - (n && buf[n - 1] == '\r')] = 0;
            rc = line(L, buf, ++lineno);
            n = 0;
        }
        if (got == 0 || rc)
            break;
    }
    if (rc == 0 && n) { /* a last line without its newline */
        buf[n] = 0;
        rc = line(L, buf, ++lineno);
    }
    free(chunk);
    return rc;
}

static int read_log(struct tp__wl_in *in, struct tp_wlimport_part *p, json_t *warnings,
                    tp_error *err)
{
    const char *path = in->path;
    struct log L = {.path = path, .warnings = warnings, .err = err};
    size_t nuls = 0;
    int rc = lines(in, &L, &nuls);
    if (rc == 0 && nuls)
        tp__wlimport_warn(warnings, path, 0,
                          "%zu NUL bytes in the log (written while a process crashed?) read as "
                          "spaces",
                          nuls);
    if (rc == 0 && L.bad > MAX_NAMED)
        tp__wlimport_warn(warnings, path, 0, "%zu more malformed collective lines left out",
                          L.bad - MAX_NAMED);
    if (rc == 0 && L.unnamed > 1)
        tp__wlimport_warn(warnings, path, 0, "%zu more collectives without a name left out",
                          L.unnamed - 1);
    if (rc == 0 && L.other)
        tp__wlimport_warn(warnings, path, 0,
                          "%zu calls of a kind a workload file cannot hold (%s ...) left out",
                          L.other, L.other_name);
    if (rc == 0 && L.ncalls == MAX_CALLS)
        tp__wlimport_warn(warnings, path, 0, "only the first %d collective lines read", MAX_CALLS);
    /* one rank: the process of the lowest device (the first seen among equals) */
    size_t pick = SIZE_MAX, nproc = 0;
    for (size_t i = 0; i < L.ncalls; i++) {
        const struct comm *c = &L.comms[L.calls[i].comm];
        if (pick == SIZE_MAX ||
            (c->dev >= 0 && (L.comms[pick].dev < 0 || c->dev < L.comms[pick].dev)))
            pick = L.calls[i].comm;
    }
    unsigned long ppid = pick == SIZE_MAX ? 0 : L.comms[pick].pid;
    const char *phost = pick == SIZE_MAX ? "" : L.comms[pick].host;
    long pdev = pick == SIZE_MAX ? -1 : L.comms[pick].dev; /* a process may drive several */
    for (size_t i = 0; i < L.ncomms; i++) {
        bool first = true;
        for (size_t j = 0; j < i && first; j++)
            first = !same_process(&L.comms[j], &L.comms[i]);
        nproc += first;
    }
    uint64_t *keys = NULL;
    uint32_t map[MAX_COMMS + 1];
    size_t nk = 0, nmap = 0;
    if (rc == 0 && L.ncalls && !(keys = malloc(L.ncalls * sizeof *keys)))
        rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
    for (size_t i = 0; rc == 0 && i < L.ncalls; i++) {
        const struct call *c = &L.calls[i];
        const struct comm *cm = &L.comms[c->comm];
        if (cm->pid != ppid || strcmp(cm->host, phost) != 0 || cm->dev != pdev)
            continue; /* another process, or another GPU of this one (one rank each) */
        size_t m = 0;
        while (m < nmap && map[m] != c->comm)
            m++;
        if (m == nmap && nmap == MAX_COMMS) {
            rc = tp_error_set(err, TP_EUSAGE, "%s: pid %lu uses over %d communicators", path, ppid,
                              MAX_COMMS);
            break;
        }
        if (m == nmap)
            map[nmap++] = c->comm;
        keys[nk++] = c->count << 20 | (uint64_t)m << 12 | (uint64_t)c->dtype << 4 | c->kind;
    }
    if (rc == 0 && nk == 0)
        rc = tp_error_set(err, TP_EUSAGE,
                          "%s: no usable collective line (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL "
                          "logs one per call: '... NCCL INFO AllReduce: opCount N ... count N "
                          "datatype N ...')",
                          path);
    if (rc == 0 && nproc > 1)
        tp__wlimport_warn(warnings, path, 0,
                          "%zu processes in the log: %s pid %lu taken (the lowest device), %zu "
                          "communicator%s",
                          nproc, phost, ppid, nmap, nmap == 1 ? "" : "s");
    size_t start = 0, period = nk, steps = 0;
    if (rc == 0 && (steps = tp_wlimport_period(keys, nk, &start, &period)) == 0) {
        tp__wlimport_warn(warnings, path, 0,
                          "no sequence of collectives repeats: all %zu taken as one step", nk);
        start = 0;
        period = nk;
        steps = 1;
    }
    if (rc == 0 && period > MAX_PERIOD)
        rc = tp_error_set(err, TP_EUSAGE,
                          "%s: %zu collectives and no step of at most %d of them repeating", path,
                          period, MAX_PERIOD);
    if (rc == 0 && steps > 100000)
        steps = 100000;
    if (rc == 0 && start + steps * period < nk)
        tp__wlimport_warn(warnings, path, 0, "the last %zu collectives (a step cut short) left out",
                          nk - start - steps * period);
    if (rc == 0 && start)
        tp__wlimport_warn(warnings, path, 0,
                          "the first step's %zu collective%s left out: it differs from the "
                          "others (DDP rebuilds its buckets after it; the initial broadcast)",
                          start, start == 1 ? "" : "s");
    /* the groups: the communicators taken */
    for (size_t m = 0; rc == 0 && m < nmap; m++) {
        const struct comm *c = &L.comms[map[m]];
        if (tp__wl_group(p, c->id, strlen(c->id), "") != (int)m)
            rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
        else
            p->groups[m].size = c->nranks;
        if (c->nranks > p->world_size)
            p->world_size = c->nranks;
        if (c->rank >= 0 && c->nranks == p->world_size)
            p->rank = c->rank;
    }
    size_t unsized = 0;
    for (size_t s = 0; rc == 0 && s < steps; s++) {
        struct tp_wlimport_step *st = tp__wl_add_step(p);
        if (!st) {
            rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
            break;
        }
        for (size_t b = 0; b < period; b++) {
            uint64_t k = keys[start + b]; /* every step is the first's */
            struct tp_wlimport_coll *q = tp__wl_add_coll(p);
            if (!q) {
                rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
                break;
            }
            p->steps[p->nsteps - 1].n++;
            q->kind = (int)(k & 0xf);
            q->group = (int)((k >> 12) & 0xff);
            size_t esz = tp_wlimport_nccl_dtype((int)((k >> 4) & 0xff), &q->dtype);
            uint64_t elems = k >> 20, bytes = elems * esz;
            unsigned n = p->groups[q->group].size;
            /* NCCL's count: per rank for AllGather (sent) and ReduceScatter (received) */
            q->bytes = q->kind == TP_WL_ALLGATHER ? tp__wl_size(q->kind, bytes, TP_WL_UNSIZED, n)
                       : q->kind == TP_WL_REDUCE_SCATTER
                           ? tp__wl_size(q->kind, TP_WL_UNSIZED, bytes, n)
                       : q->kind == TP_WL_ALLTOALL && n ? bytes * n
                                                        : bytes;
            unsized += s == 0 && q->bytes == TP_WL_UNSIZED;
        }
    }
    if (rc == 0 && unsized)
        tp__wlimport_warn(warnings, path, 0,
                          "%zu all-gathers or reduce-scatters of a communicator whose ranks the "
                          "log does not say ([nranks=N] or its init line): no bytes for them",
                          unsized);
    if (rc == 0) {
        p->skipped = start ? 1 : 0;
        snprintf(p->who, sizeof p->who, "%s%spid %lu", phost, phost[0] ? " " : "", ppid);
        snprintf(p->backend, sizeof p->backend, "%s", L.rccl ? "rccl" : "nccl");
        snprintf(p->version, sizeof p->version, "%s", L.version);
    }
    free(keys);
    free(L.calls);
    free(L.comms);
    return rc;
}

/* the smallest start and, for it, the shortest period (at most
 * MAX_PERIOD) from which keys repeat to the end, with at least two whole
 * periods; whole: the keys from the start are whole periods (the log ends
 * at a step's end). For each period q the first start from which every key
 * equals the one q later is found by one walk back from the end; the
 * multiples of the best period so far are not walked (they repeat where
 * it does), nor anything once a period repeats from the first key, so a
 * long log costs a few walks of it, never a search over every start. */
static size_t find_period(const uint64_t *keys, size_t n, bool whole, size_t *start, size_t *period)
{
    size_t best_s = n, best_q = 0;
    for (size_t q = 1; q <= MAX_PERIOD && 2 * q <= n && best_s > 0; q++) {
        if (best_q && q % best_q == 0)
            continue;
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
     * rotation of the step, its first calls taken for its last, repeats
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
    .what = "an NCCL or RCCL log (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL)",
    .detect = detect,
    .read = read_log,
};
