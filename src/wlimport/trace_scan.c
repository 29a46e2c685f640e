/* The streaming scan of a torch.profiler trace (trace_int.h): yajl's
 * event parser over the input in chunks, so a trace of gigabytes is read
 * in memory bounded by what it holds of interest, never by its size. A
 * state machine over yajl's callbacks reads, of each event of traceEvents
 * (or of the legacy profiler's bare list), the fields the import uses (ph,
 * cat, name, pid, tid, ts, dur and a few of args) and hands each complete
 * event to the keep (trace_keep.c); of distributedInfo the rank, world
 * size, backend, NCCL's version and pg_config's groups. Everything else is
 * skipped as it streams by.
 *
 * Numbers are read from their text: ids beyond int64 are kept (as
 * unsigned 64-bit), times in µs with fractions become whole ns exactly,
 * and a value that is neither is named with its event. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "trace_int.h"

enum ctx { C_TOP, C_DIST, C_PGLIST, C_PG, C_EVENTS, C_EVENT, C_ARGS, C_SKIP };

enum key {
    K_NONE,
    /* event */
    K_PH,
    K_CAT,
    K_NAME,
    K_PID,
    K_TID,
    K_TS,
    K_DUR,
    K_ARGS,
    /* args */
    K_EXT,
    K_CORR,
    K_COLL,
    K_IN_N,
    K_OUT_N,
    K_DTYPE,
    K_GSIZE,
    K_PGNAME,
    K_PGDESC,
    K_PGRANKS,
    K_DIMS,
    K_ITYPE,
    /* distributedInfo and its pg_config items */
    K_D_BACKEND,
    K_D_RANK,
    K_D_WORLD,
    K_D_VERSION,
    K_D_PGCONFIG,
    /* the top object's */
    K_T_EVENTS,
    K_T_DIST,
    K_G_NAME,
    K_G_DESC,
    K_G_SIZE,
    K_G_RANKS,
};

static const struct {
    enum ctx in;
    const char *name;
    enum key key;
} keys[] = {
    {C_EVENT, "ph", K_PH},
    {C_EVENT, "cat", K_CAT},
    {C_EVENT, "name", K_NAME},
    {C_EVENT, "pid", K_PID},
    {C_EVENT, "tid", K_TID},
    {C_EVENT, "ts", K_TS},
    {C_EVENT, "dur", K_DUR},
    {C_EVENT, "args", K_ARGS},
    {C_ARGS, "External id", K_EXT},
    {C_ARGS, "external id", K_EXT}, /* torch 1.8's Kineto */
    {C_ARGS, "correlation", K_CORR},
    {C_ARGS, "Collective name", K_COLL},
    {C_ARGS, "In msg nelems", K_IN_N},
    {C_ARGS, "Out msg nelems", K_OUT_N},
    {C_ARGS, "dtype", K_DTYPE},
    {C_ARGS, "Group size", K_GSIZE},
    {C_ARGS, "Process Group Name", K_PGNAME},
    {C_ARGS, "Process Group Description", K_PGDESC},
    {C_ARGS, "Process Group Ranks", K_PGRANKS},
    {C_ARGS, "Input Dims", K_DIMS},
    {C_ARGS, "Input type", K_ITYPE},
    {C_DIST, "backend", K_D_BACKEND},
    {C_DIST, "rank", K_D_RANK},
    {C_DIST, "world_size", K_D_WORLD},
    {C_DIST, "nccl_version", K_D_VERSION},
    {C_DIST, "pg_config", K_D_PGCONFIG},
    {C_PG, "pg_name", K_G_NAME},
    {C_PG, "pg_desc", K_G_DESC},
    {C_PG, "pg_size", K_G_SIZE},
    {C_PG, "ranks", K_G_RANKS},
};

struct st {
    struct tp__wl_scan *s;
    const char *path;
    json_t *warnings;
    tp_error *err;
    int rc;
    enum ctx ctx;
    int depth;      /* of the value being read */
    int ev_depth;   /* the event map's depth */
    int skip_depth; /* C_SKIP: return to skip_ctx when the depth is back here */
    enum ctx skip_ctx;
    enum key key;
    int arr_depth; /* depth of the array under the key (Input Dims, ranks) */
    struct tp__wl_event c;
    struct tp__wl_tgroup pg; /* a pg_config item being read */
    bool pg_has;
};

static int fail(struct st *t, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct st *t, int code, const char *fmt, ...)
{
    char why[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    t->rc = tp_error_set(t->err, code, "%s: %s", t->path, why);
    return 0; /* yajl stops */
}

/* µs as JSON text (123, 123.456789, -5, 1.5e3) to whole ns, rounded; false
 * when not a number or out of int64's range */
static bool micros(const char *s, size_t n, int64_t *ns)
{
    char buf[64];
    if (n == 0 || n >= sizeof buf)
        return false;
    memcpy(buf, s, n);
    buf[n] = 0;
    if (strpbrk(buf, "eE")) {
        char *end;
        double x = strtod(buf, &end);
        if (*end || !(x * 1e3 < 9.2e18 && x * 1e3 > -9.2e18))
            return false;
        *ns = (int64_t)(x * 1e3 + (x < 0 ? -0.5 : 0.5));
        return true;
    }
    const char *p = buf;
    bool neg = *p == '-';
    p += neg;
    uint64_t ip = 0;
    if (!isdigit((unsigned char)*p))
        return false;
    for (; isdigit((unsigned char)*p); p++) {
        if (ip > (UINT64_MAX - 9) / 10)
            return false;
        ip = ip * 10 + (uint64_t)(*p - '0');
    }
    uint64_t frac = 0;
    int digits = 0;
    bool up = false;
    if (*p == '.') {
        for (p++; isdigit((unsigned char)*p); p++, digits++) {
            if (digits < 3)
                frac = frac * 10 + (uint64_t)(*p - '0');
            else if (digits == 3)
                up = *p >= '5';
        }
    }
    if (*p)
        return false;
    for (; digits < 3; digits++)
        frac *= 10;
    if (ip > (uint64_t)INT64_MAX / 1000)
        return false;
    uint64_t v = ip * 1000 + frac + up;
    if (v > (uint64_t)INT64_MAX)
        return false;
    *ns = neg ? -(int64_t)v : (int64_t)v;
    return true;
}

static void copy(char *dst, size_t cap, const unsigned char *s, size_t n)
{
    size_t k = n < cap - 1 ? n : cap - 1;
    memcpy(dst, s, k);
    dst[k] = 0;
}

static void reset_cur(struct tp__wl_event *c)
{
    char *ranks = c->ranks;
    size_t cap = c->ranks_cap;
    memset(c, 0, sizeof *c);
    c->ranks = ranks;
    c->ranks_cap = cap;
    c->coll = -2;
    c->ntensor = -1;
}

/* the key's row: length and first byte first (17 million keys in 300 MB) */
static enum key key_of(enum ctx ctx, const unsigned char *k, size_t n)
{
    static size_t len[sizeof keys / sizeof keys[0]];
    if (!len[0])
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            len[i] = strlen(keys[i].name);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (len[i] == n && keys[i].in == ctx && keys[i].name[0] == (char)k[0] &&
            memcmp(keys[i].name, k, n) == 0)
            return keys[i].key;
    return K_NONE;
}

/* a scalar (string or number text) for the current key */
static int scalar(struct st *t, const unsigned char *v, size_t n, bool str)
{
    struct tp__wl_event *c = &t->c;
    struct tp__wl_scan *s = t->s;
    uint64_t x;
    if (t->ctx == C_EVENT) {
        switch (t->key) {
        case K_PH: copy(c->ph, sizeof c->ph, v, n); break;
        case K_CAT: copy(c->cat, sizeof c->cat, v, n); break;
        case K_NAME:
            copy(c->name, sizeof c->name, v, n);
            c->name_len = n;
            break;
        case K_PID: copy(c->pid, sizeof c->pid, v, n); break;
        case K_TID: copy(c->tid, sizeof c->tid, v, n); break;
        case K_TS:
        case K_DUR: {
            int64_t ns;
            bool ok = !str && micros((const char *)v, n, &ns);
            if (!ok) {
                c->bad = t->key == K_TS ? "ts" : "dur";
                copy(c->badv, sizeof c->badv, v, n);
            } else if (t->key == K_TS) {
                c->ts = ns;
                c->has_ts = true;
            } else {
                c->dur = ns;
                c->has_dur = true;
            }
            break;
        }
        default: break;
        }
        return 1;
    }
    if (t->ctx == C_ARGS && t->arr_depth == 0) {
        switch (t->key) {
        case K_EXT:
        case K_CORR:
            /* an id as written (beyond int64 too); a negative one hashed */
            if (!tp__wl_whole((const char *)v, n, &x))
                x = tp__wl_hash((const char *)v, n);
            *(t->key == K_EXT ? &c->ext : &c->corr) = x;
            break;
        case K_COLL: {
            char nm[64];
            copy(nm, sizeof nm, v, n);
            c->coll = tp_wlimport_kind_of(nm);
            c->wait = strcmp(nm, "wait") == 0;
            break;
        }
        case K_IN_N:
        case K_OUT_N:
        case K_GSIZE:
            if (!tp__wl_whole((const char *)v, n, &x) || str) {
                c->bad = t->key == K_IN_N    ? "In msg nelems"
                         : t->key == K_OUT_N ? "Out msg nelems"
                                             : "Group size";
                copy(c->badv, sizeof c->badv, v, n);
            } else if (t->key == K_IN_N) {
                c->in_n = x;
                c->has_in = true;
            } else if (t->key == K_OUT_N) {
                c->out_n = x;
                c->has_out = true;
            } else {
                c->gsize = x > (1u << 24) ? 0 : (uint32_t)x;
                if (x > (1u << 24)) {
                    c->bad = "Group size";
                    copy(c->badv, sizeof c->badv, v, n);
                }
            }
            break;
        case K_DTYPE: copy(c->dtype, sizeof c->dtype, v, n); break;
        case K_PGNAME: copy(c->pg, sizeof c->pg, v, n); break;
        case K_PGDESC: copy(c->pgdesc, sizeof c->pgdesc, v, n); break;
        case K_PGRANKS:
            if (n + 1 > c->ranks_cap) {
                char *b = realloc(c->ranks, n + 1);
                if (!b)
                    return fail(t, TP_ENOMEM, "out of memory");
                c->ranks = b;
                c->ranks_cap = n + 1;
            }
            memcpy(c->ranks, v, n);
            c->ranks_len = n;
            break;
        default: break;
        }
        return 1;
    }
    if (t->ctx == C_ARGS && t->key == K_DIMS && c->ntensor >= 0 && c->ntensor < 2) {
        int k = c->ntensor;
        if (!str && tp__wl_whole((const char *)v, n, &x) && c->dims_state[k] == 1) {
            c->dims[k] = c->dims[k] && x > UINT64_MAX / c->dims[k] ? 0 : c->dims[k] * x;
            if (c->dims[k] == 0 && x != 0)
                c->dims_state[k] = -1;
            if (x == 0)
                c->dims[k] = 0;
        } else {
            c->dims_state[k] = -1;
        }
        return 1;
    }
    if (t->ctx == C_ARGS && t->key == K_ITYPE && str && t->arr_depth == t->depth) {
        if (c->nitype < 2)
            copy(c->itype[c->nitype], sizeof c->itype[0], v, n);
        c->nitype++;
        return 1;
    }
    if (t->ctx == C_DIST && t->arr_depth == 0) {
        switch (t->key) {
        case K_D_BACKEND: {
            char b[64];
            copy(b, sizeof b, v, n); /* "nccl", or "cuda:nccl,cpu:gloo" */
            const char *p = strstr(b, "cuda:") ? strstr(b, "cuda:") + 5 : b;
            snprintf(s->backend, sizeof s->backend, "%.*s", (int)strcspn(p, ","), p);
            break;
        }
        case K_D_RANK:
            if (tp__wl_whole((const char *)v, n, &x) && x < (1u << 24))
                s->rank = (int)x;
            break;
        case K_D_WORLD:
            if (!tp__wl_whole((const char *)v, n, &x) || x == 0 || x > (1u << 24))
                return fail(t, TP_EUSAGE,
                            "distributedInfo.world_size %.*s: not a rank count (1 to 16777216)",
                            (int)(n > 40 ? 40 : n), v);
            s->world_size = (unsigned)x;
            break;
        case K_D_VERSION: copy(s->version, sizeof s->version, v, n); break;
        default: break;
        }
        return 1;
    }
    if (t->ctx == C_PG) {
        switch (t->key) {
        case K_G_NAME: copy(t->pg.name, sizeof t->pg.name, v, n); break;
        case K_G_DESC: copy(t->pg.desc, sizeof t->pg.desc, v, n); break;
        case K_G_SIZE:
            if (tp__wl_whole((const char *)v, n, &x) && x < (1u << 24))
                t->pg.size = (unsigned)x;
            break;
        case K_G_RANKS:
            if (t->arr_depth && tp__wl_whole((const char *)v, n, &x) && x < (1u << 24)) {
                if ((t->pg.nranks & (t->pg.nranks + 1)) == 0) {
                    unsigned *b = realloc(t->pg.ranks, 2 * (t->pg.nranks + 1) * sizeof *b);
                    if (!b)
                        return fail(t, TP_ENOMEM, "out of memory");
                    t->pg.ranks = b;
                }
                t->pg.ranks[t->pg.nranks++] = (unsigned)x;
            }
            break;
        default: break;
        }
    }
    return 1;
}

static int cb_null(void *ctx)
{
    return scalar(ctx, (const unsigned char *)"null", 4, true);
}

static int cb_bool(void *ctx, int b)
{
    return scalar(ctx, (const unsigned char *)(b ? "true" : "false"), b ? 4 : 5, true);
}

static int cb_number(void *ctx, const char *v, size_t n)
{
    return scalar(ctx, (const unsigned char *)v, n, false);
}

static int cb_string(void *ctx, const unsigned char *v, size_t n)
{
    return scalar(ctx, v, n, true);
}

static void skip(struct st *t)
{
    t->skip_ctx = t->ctx;
    t->skip_depth = t->depth;
    t->ctx = C_SKIP;
}

static int cb_start_map(void *ctx)
{
    struct st *t = ctx;
    t->depth++;
    switch (t->ctx) {
    case C_TOP:
        if (t->depth != 1)
            skip(t);
        break;
    case C_EVENTS:
        t->ctx = C_EVENT;
        t->ev_depth = t->depth;
        reset_cur(&t->c);
        t->key = K_NONE;
        break;
    case C_EVENT:
        if (t->key == K_ARGS) {
            t->ctx = C_ARGS;
            t->arr_depth = 0;
        } else {
            skip(t);
        }
        break;
    case C_DIST: skip(t); break;
    case C_PGLIST:
        t->ctx = C_PG;
        memset(&t->pg, 0, sizeof t->pg);
        break;
    default:
        if (t->ctx != C_SKIP)
            skip(t);
    }
    t->key = K_NONE;
    return 1;
}

static int cb_key(void *ctx, const unsigned char *k, size_t n)
{
    struct st *t = ctx;
    if (t->ctx == C_TOP && t->depth == 1) {
        t->key = n == 11 && memcmp(k, "traceEvents", 11) == 0       ? K_T_EVENTS
                 : n == 15 && memcmp(k, "distributedInfo", 15) == 0 ? K_T_DIST
                                                                    : K_NONE;
        return 1;
    }
    if (t->ctx == C_EVENT || t->ctx == C_ARGS || t->ctx == C_DIST || t->ctx == C_PG)
        t->key = key_of(t->ctx, k, n);
    return 1;
}

static int cb_end_map(void *ctx)
{
    struct st *t = ctx;
    int ok = 1;
    if (t->ctx == C_SKIP && t->depth == t->skip_depth)
        t->ctx = t->skip_ctx;
    else if (t->ctx == C_ARGS)
        t->ctx = C_EVENT;
    else if (t->ctx == C_EVENT && t->depth == t->ev_depth) {
        int rc = tp__wl_trace_keep(t->s, &t->c, t->path, t->warnings, t->err);
        if (rc)
            t->rc = rc;
        ok = rc == 0;
        t->ctx = C_EVENTS;
    } else if (t->ctx == C_DIST)
        t->ctx = C_TOP;
    else if (t->ctx == C_PG) {
        if (t->pg.name[0]) {
            int32_t g = tp__wl_trace_group(t->s, t->pg.name, t->pg.desc, NULL, 0, t->pg.size);
            if (g < 0)
                return fail(t, TP_ENOMEM, "out of memory");
            struct tp__wl_tgroup *G = &t->s->groups[g];
            if (!G->ranks && t->pg.nranks) {
                G->ranks = t->pg.ranks;
                G->nranks = t->pg.nranks;
                t->pg.ranks = NULL;
                if (!G->size)
                    G->size = G->nranks;
            }
        }
        free(t->pg.ranks);
        t->pg.ranks = NULL;
        t->ctx = C_PGLIST;
    }
    t->depth--;
    t->key = K_NONE;
    return ok;
}

static int cb_start_array(void *ctx)
{
    struct st *t = ctx;
    t->depth++;
    if (t->ctx == C_TOP && t->depth == 1) { /* the legacy profiler's bare list */
        t->s->legacy = true;
        t->ctx = C_EVENTS;
    } else if (t->ctx == C_TOP && t->depth == 2 && t->key == K_T_EVENTS) {
        t->ctx = C_EVENTS;
    } else if (t->ctx == C_ARGS && (t->key == K_DIMS || t->key == K_ITYPE)) {
        struct tp__wl_event *c = &t->c;
        if (t->arr_depth == 0) {
            t->arr_depth = t->depth;
        } else if (t->key == K_DIMS && t->depth == t->arr_depth + 1) {
            c->ntensor++;
            if (c->ntensor < 2) {
                c->dims[c->ntensor] = 1;
                c->dims_state[c->ntensor] = 1;
            }
        } else if (t->key == K_DIMS && c->ntensor >= 0 && c->ntensor < 2) {
            c->dims_state[c->ntensor] = -1; /* a list of tensors: not one tensor */
        }
    } else if (t->ctx == C_DIST && t->key == K_D_PGCONFIG) {
        t->ctx = C_PGLIST;
    } else if (t->ctx == C_PG && t->key == K_G_RANKS && !t->arr_depth) {
        t->arr_depth = t->depth;
    } else if (t->ctx == C_EVENT || t->ctx == C_ARGS || t->ctx == C_DIST || t->ctx == C_PG ||
               (t->ctx == C_TOP && t->depth > 1)) {
        skip(t);
    }
    return 1;
}

static int cb_end_array(void *ctx)
{
    struct st *t = ctx;
    struct tp__wl_event *c = &t->c;
    if (t->ctx == C_SKIP && t->depth == t->skip_depth) {
        t->ctx = t->skip_ctx;
    } else if (t->ctx == C_EVENTS) {
        t->ctx = C_TOP;
    } else if (t->ctx == C_ARGS && t->arr_depth) {
        if (t->key == K_DIMS && t->depth == t->arr_depth + 1 && c->ntensor >= 0 && c->ntensor < 2 &&
            c->dims_state[c->ntensor] == 1)
            c->dims_state[c->ntensor] = 2;
        if (t->depth == t->arr_depth)
            t->arr_depth = 0;
    } else if (t->ctx == C_PGLIST) {
        t->ctx = C_DIST;
    } else if (t->ctx == C_PG && t->arr_depth == t->depth) {
        t->arr_depth = 0;
    }
    t->depth--;
    return 1;
}

/* distributedInfo's map: a start_map right after its key at the top */
static int cb_start_map_top(void *ctx)
{
    struct st *t = ctx;
    if (t->ctx == C_TOP && t->depth == 1 && t->key == K_T_DIST) {
        t->depth++;
        t->ctx = C_DIST;
        t->key = K_NONE;
        return 1;
    }
    return cb_start_map(ctx);
}

static const yajl_callbacks callbacks = {
    .yajl_null = cb_null,
    .yajl_boolean = cb_bool,
    .yajl_number = cb_number,
    .yajl_string = cb_string,
    .yajl_start_map = cb_start_map_top,
    .yajl_map_key = cb_key,
    .yajl_end_map = cb_end_map,
    .yajl_start_array = cb_start_array,
    .yajl_end_array = cb_end_array,
};

int tp__wl_trace_scan(struct tp__wl_in *in, struct tp__wl_scan *s, json_t *warnings, tp_error *err)
{
    memset(s, 0, sizeof *s);
    s->rank = -1;
    struct st t = {.s = s, .path = in->path, .warnings = warnings, .err = err, .ctx = C_TOP};
    reset_cur(&t.c);
    yajl_handle h = yajl_alloc(&callbacks, NULL, &t);
    if (!h)
        return tp_error_set(err, TP_ENOMEM, "%s: out of memory", in->path);
    yajl_config(h, yajl_dont_validate_strings, 1);
    unsigned char *buf = malloc(1u << 20);
    int rc = buf ? 0 : tp_error_set(err, TP_ENOMEM, "%s: out of memory", in->path);
    uint64_t at = 0;
    for (;;) {
        size_t got = 0;
        if (rc == 0)
            rc = tp__wl_in_read(in, buf, 1u << 20, &got, err);
        if (rc || got == 0)
            break;
        yajl_status ys = yajl_parse(h, buf, got);
        if (ys != yajl_status_ok) {
            if (t.rc) {
                rc = t.rc;
            } else {
                unsigned char *m = yajl_get_error(h, 0, buf, got);
                rc = tp_error_set(err, TP_EUSAGE, "%s: not JSON at byte %llu: %s", in->path,
                                  (unsigned long long)(at + yajl_get_bytes_consumed(h)),
                                  m ? (const char *)m : "a syntax error");
                if (m)
                    yajl_free_error(h, m);
            }
            break;
        }
        at += got;
    }
    if (rc == 0 && yajl_complete_parse(h) != yajl_status_ok)
        rc = t.rc ? t.rc
                  : tp_error_set(err, TP_EUSAGE,
                                 "%s: not JSON: it ends at byte %llu inside a value (a trace cut "
                                 "short?)",
                                 in->path, (unsigned long long)at);
    if (rc == 0 && s->skipped_neg > 3)
        tp__wlimport_warn(warnings, in->path, 0, "%llu events with a negative duration left out",
                          (unsigned long long)s->skipped_neg);
    yajl_free(h);
    free(buf);
    free(t.c.ranks);
    free(t.pg.ranks);
    return rc;
}

void tp__wl_trace_scan_free(struct tp__wl_scan *s)
{
    for (size_t i = 0; i < s->nthreads; i++)
        free(s->threads[i].ops);
    for (size_t i = 0; i < s->ngroups; i++)
        free(s->groups[i].ranks);
    free(s->threads);
    free(s->spans);
    free(s->cevs);
    free(s->launches);
    free(s->groups);
    memset(s, 0, sizeof *s);
}
