/* Reading a plan file. libfyaml's event stream becomes a small tree that keeps
 * each node's line and column; then one table of keys per mapping (name, kind
 * of value, where it goes, its range, whether required or measurable, its
 * default) drives the whole check. So every error, from a YAML syntax error to
 * a sweep that runs backwards, names file:line:col and the key path, and the
 * accepted format is read off the tables below rather than from code. */
#include "tp/plan.h"

#include <ctype.h>
#include <errno.h>
#include <libfyaml.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_FILE (16u << 20) /* a plan is a page or two; refuse anything absurd */
#define MAX_DEPTH 64
#define PATH_LEN 256

/* ---- the YAML tree: what the events said, with positions ---- */

enum ntype { N_SCALAR, N_SEQ, N_MAP, N_ALIAS };

struct node {
    enum ntype type;
    int line, col;     /* 1-based; a null value takes its key's position */
    bool null;         /* an empty plain scalar, ~ or null */
    char *text;        /* scalars (NULL for the others) */
    struct node **kid; /* sequence: the items; mapping: key, value, key, value, ... */
    size_t n, cap;
};

static const char *type_name(const struct node *v)
{
    if (!v || (v->type == N_SCALAR && v->null))
        return "nothing";
    static const char *const names[] = {"a scalar", "a sequence", "a mapping",
                                        "an alias (YAML aliases are not supported in plan files)"};
    return names[v->type];
}

static void node_free(struct node *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->n; i++)
        node_free(v->kid[i]);
    free(v->kid);
    free(v->text);
    free(v);
}

static int attach(struct node *parent, struct node *v)
{
    if (parent->n == parent->cap) {
        size_t cap = parent->cap ? 2 * parent->cap : 8;
        struct node **k = realloc(parent->kid, cap * sizeof *k);
        if (!k)
            return -1;
        parent->kid = k;
        parent->cap = cap;
    }
    if (v->line == 0) { /* an empty value has no mark: point at its key, or its sequence */
        const struct node *near =
            parent->type == N_MAP && parent->n % 2 ? parent->kid[parent->n - 1] : parent;
        v->line = near->line;
        v->col = near->col;
    }
    parent->kid[parent->n++] = v;
    return 0;
}

/* For the walk: the file and where the values go. */
struct ctx {
    const char *file; /* as given, for messages */
    char dir[4096];   /* its folder with a trailing '/', or "" */
    struct tp_plan_spec *spec;
    tp_error *err;
    int cand; /* the candidate being read, -1 outside candidates */
};

/* "FILE:LINE:COL: PATH: message"; returns TP_EUSAGE. */
__attribute__((format(printf, 4, 5))) static int fail(struct ctx *x, const struct node *at,
                                                      const char *path, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tp_error_set(x->err, TP_EUSAGE, "%s:%d:%d: %s: %s", x->file, at ? at->line : 1,
                        at ? at->col : 1, path && *path ? path : "top level", msg);
}

/* Collected libfyaml diagnostics land here when they bypass collection. */
struct sink {
    char buf[256];
    size_t len;
};

static void diag_out(struct fy_diag *diag, void *user, const char *buf, size_t len)
{
    (void)diag;
    struct sink *s = user;
    size_t room = sizeof s->buf - 1 - s->len;
    if (len > room)
        len = room;
    memcpy(s->buf + s->len, buf, len);
    s->len += len;
    s->buf[s->len] = '\0';
}

/* The first error libfyaml reported, as "FILE:LINE:COL: YAML syntax error: ...". */
static int syntax_error(struct ctx *x, struct fy_diag *diag, const struct sink *s)
{
    void *it = NULL;
    struct fy_diag_error *e = fy_diag_errors_iterate(diag, &it);
    if (e && e->msg)
        return tp_error_set(x->err, TP_EUSAGE, "%s:%d:%d: YAML syntax error: %s", x->file,
                            e->line > 0 ? e->line : 1, e->column > 0 ? e->column : 1, e->msg);
    char msg[256];
    snprintf(msg, sizeof msg, "%s", s->len ? s->buf : "malformed input");
    msg[strcspn(msg, "\n")] = '\0';
    return tp_error_set(x->err, TP_EUSAGE, "%s: YAML syntax error: %s", x->file, msg);
}

static bool is_null(const char *t, size_t len, enum fy_scalar_style style)
{
    if (style != FYSS_PLAIN)
        return false;
    return len == 0 || (len == 1 && t[0] == '~') ||
           (len == 4 && (!memcmp(t, "null", 4) || !memcmp(t, "Null", 4) || !memcmp(t, "NULL", 4)));
}

/* Turn one event into a node (NULL for the events that make none). */
static int event_node(struct ctx *x, struct fy_event *e, struct node **out)
{
    *out = NULL;
    enum ntype type;
    switch (e->type) {
    case FYET_SCALAR: type = N_SCALAR; break;
    case FYET_SEQUENCE_START: type = N_SEQ; break;
    case FYET_MAPPING_START: type = N_MAP; break;
    case FYET_ALIAS: type = N_ALIAS; break;
    default: return 0;
    }
    struct node *v = calloc(1, sizeof *v);
    if (!v)
        return tp_error_set(x->err, TP_ENOMEM, "%s: out of memory", x->file);
    v->type = type;
    const struct fy_mark *m = fy_event_start_mark(e);
    if (type == N_SCALAR) {
        struct fy_token *t = e->scalar.value;
        size_t len = 0;
        const char *s = t ? fy_token_get_text(t, &len) : NULL;
        if (!s)
            len = 0;
        v->null = is_null(s, len, t ? fy_token_scalar_style(t) : FYSS_PLAIN);
        if (t && fy_token_start_mark(t))
            m = fy_token_start_mark(t);
        if (len == 0)
            m = NULL; /* libfyaml has no position for an empty value */
        v->text = malloc(len + 1);
        if (!v->text) {
            free(v);
            return tp_error_set(x->err, TP_ENOMEM, "%s: out of memory", x->file);
        }
        if (len)
            memcpy(v->text, s, len);
        v->text[len] = '\0';
    }
    if (m) {
        v->line = m->line + 1;
        v->col = m->column + 1;
        if (type == N_ALIAS && v->col > 1)
            v->col--; /* libfyaml marks the name; point at the '*' */
    }
    *out = v;
    return 0;
}

/* Parse buf into a tree. A syntax error or a second document is an error
 * (an alias becomes an N_ALIAS node, refused with its key path by the walk);
 * *root is NULL for an empty stream. */
static int load(struct ctx *x, const char *buf, size_t len, struct node **root)
{
    struct sink sink = {.len = 0};
    struct fy_diag_cfg dcfg;
    fy_diag_cfg_default(&dcfg);
    dcfg.fp = NULL;
    dcfg.output_fn = diag_out;
    dcfg.user = &sink;
    dcfg.colorize = false;
    struct fy_diag *diag = fy_diag_create(&dcfg);
    if (!diag)
        return tp_error_set(x->err, TP_ENOMEM, "%s: cannot start the YAML parser", x->file);
    fy_diag_set_collect_errors(diag, true);
    struct fy_parse_cfg cfg = {.flags = FYPCF_QUIET | FYPCF_DEFAULT_VERSION_1_2, .diag = diag};
    struct fy_parser *fyp = fy_parser_create(&cfg);
    if (!fyp || fy_parser_set_string(fyp, buf, len) != 0) {
        fy_parser_destroy(fyp);
        fy_diag_destroy(diag);
        return tp_error_set(x->err, TP_ENOMEM, "%s: cannot start the YAML parser", x->file);
    }
    struct node *stack[MAX_DEPTH];
    int depth = 0, docs = 0, rc = 0;
    *root = NULL;
    struct fy_event *e;
    while (rc == 0 && (e = fy_parser_parse(fyp))) {
        struct node *v = NULL;
        if (e->type == FYET_DOCUMENT_START && docs++ > 0) {
            const struct fy_mark *m = fy_event_start_mark(e);
            rc = tp_error_set(x->err, TP_EUSAGE,
                              "%s:%d:%d: a second YAML document; a plan file holds one", x->file,
                              m ? m->line + 1 : 1, m ? m->column + 1 : 1);
        } else if (e->type == FYET_SEQUENCE_END || e->type == FYET_MAPPING_END) {
            depth--;
        } else if ((rc = event_node(x, e, &v)) == 0 && v) {
            bool nest = v->type == N_SEQ || v->type == N_MAP;
            if (depth == 0) { /* the one root: a second document was refused above */
                *root = v;
                if (v->line == 0)
                    v->line = v->col = 1;
            } else if (attach(stack[depth - 1], v) != 0) {
                node_free(v);
                nest = false;
                rc = tp_error_set(x->err, TP_ENOMEM, "%s: out of memory", x->file);
            }
            if (nest && depth == MAX_DEPTH)
                rc = tp_error_set(x->err, TP_EUSAGE, "%s:%d:%d: nested deeper than %d levels",
                                  x->file, v->line, v->col, MAX_DEPTH);
            else if (nest)
                stack[depth++] = v;
        }
        fy_parser_event_free(fyp, e);
    }
    if (rc == 0 && fy_parser_get_stream_error(fyp))
        rc = syntax_error(x, diag, &sink);
    fy_parser_destroy(fyp);
    fy_diag_destroy(diag);
    return rc;
}

/* ---- values ---- */

/* A decimal number at the start of s: [+-]digits[.digits][(e|E)[+-]digits]
 * (no hex, inf or nan). *end is set past it. */
static bool number(const char *s, double *v, const char **end)
{
    const char *p = s;
    size_t nd = 0;
    if (*p == '+' || *p == '-')
        p++;
    for (; isdigit((unsigned char)*p); p++)
        nd++;
    if (*p == '.')
        for (p++; isdigit((unsigned char)*p); p++)
            nd++;
    if (nd == 0)
        return false;
    if (*p == 'e' || *p == 'E') {
        const char *q = p + 1;
        if (*q == '+' || *q == '-')
            q++;
        if (isdigit((unsigned char)*q)) {
            while (isdigit((unsigned char)*q))
                q++;
            p = q;
        }
    }
    char tmp[64];
    size_t len = (size_t)(p - s);
    if (len >= sizeof tmp)
        return false;
    memcpy(tmp, s, len);
    tmp[len] = '\0';
    *v = strtod(tmp, NULL);
    *end = p;
    return isfinite(*v);
}

/* A unit is worth mult / div (div 0: 1): dividing keeps "850ms" or "60%"
 * the double nearest the decimal, as multiplying by 1e-3 would not. */
struct unit {
    const char *name;
    double mult, div;
};

/* A number, optional blanks, then one of units (or nothing when bare_mult is
 * not 0: a bare number is worth that). Unit names compare exactly, or
 * ignoring case when nocase. */
static bool with_unit(const char *s, double bare_mult, const struct unit *units, bool nocase,
                      double *v)
{
    const char *p;
    double n;
    if (!number(s, &n, &p))
        return false;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '\0') {
        *v = n * bare_mult;
        return bare_mult != 0 && isfinite(*v);
    }
    for (; units->name; units++) {
        if (nocase ? strcasecmp(p, units->name) == 0 : strcmp(p, units->name) == 0) {
            *v = n * units->mult / (units->div ? units->div : 1);
            return isfinite(*v);
        }
    }
    return false;
}

static bool parse_num(const char *s, double *v)
{
    static const struct unit none[] = {{NULL, 0, 0}};
    return with_unit(s, 1, none, false, v);
}

static bool parse_count(const char *s, double *v)
{
    static const struct unit u[] = {{"K", 1e3, 0}, {"k", 1e3, 0},  {"M", 1e6, 0}, {"B", 1e9, 0},
                                    {"G", 1e9, 0}, {"T", 1e12, 0}, {NULL, 0, 0}};
    return with_unit(s, 1, u, false, v);
}

/* Binary, as tp_parse_size: K = 1024. "KB" is refused as ambiguous there,
 * so it is here (no entry). */
static bool parse_size(const char *s, double *v)
{
    static const struct unit u[] = {{"B", 1, 0},        {"K", 0x1p10, 0},   {"KiB", 0x1p10, 0},
                                    {"M", 0x1p20, 0},   {"MiB", 0x1p20, 0}, {"G", 0x1p30, 0},
                                    {"GiB", 0x1p30, 0}, {"T", 0x1p40, 0},   {"TiB", 0x1p40, 0},
                                    {"P", 0x1p50, 0},   {"PiB", 0x1p50, 0}, {NULL, 0, 0}};
    return with_unit(s, 1, u, true, v);
}

/* In bits per second. Bytes are 8 bits: a power of two, so the bytes a
 * caller gets back by dividing are rounded as if parsed directly. */
/* In bits per second; a bare number is bytes per second where bare_mult is
 * 8, and refused where it is 0. */
static bool rate_bits(const char *s, double bare_mult, double *v)
{
    /* clang-format off */
    static const struct unit u[] = {
        {"b/s", 1, 0},    {"bit/s", 1, 0},     {"Kb/s", 1e3, 0},   {"Kbit/s", 1e3, 0},
        {"Mb/s", 1e6, 0}, {"Mbit/s", 1e6, 0},  {"Gb/s", 1e9, 0},   {"Gbit/s", 1e9, 0},
        {"Tb/s", 1e12, 0}, {"Tbit/s", 1e12, 0},
        {"B/s", 8, 0},    {"KB/s", 8e3, 0},    {"MB/s", 8e6, 0},   {"GB/s", 8e9, 0},
        {"TB/s", 8e12, 0},
        {"KiB/s", 8 * 0x1p10, 0}, {"MiB/s", 8 * 0x1p20, 0}, {"GiB/s", 8 * 0x1p30, 0},
        {"TiB/s", 8 * 0x1p40, 0},
        {NULL, 0, 0}};
    /* clang-format on */
    return with_unit(s, bare_mult, u, false, v);
}

/* A link speed: the unit is needed (a bare 100 could mean bits or bytes). */
static bool parse_rate_bits(const char *s, double *v)
{
    return rate_bits(s, 0, v);
}

static bool parse_rate(const char *s, double *v)
{
    bool ok = rate_bits(s, 8, v);
    *v /= 8;
    return ok;
}

static bool parse_duration(const char *s, double *v)
{
    static const struct unit u[] = {{"ns", 1, 1e9},          {"us", 1, 1e6}, {"µs", 1, 1e6},
                                    {"ms", 1, 1e3},          {"s", 1, 0},    {"m", 60, 0},
                                    {"min", 60, 0},          {"h", 3600, 0}, {"d", 86400, 0},
                                    {"y", 365 * 86400.0, 0}, {NULL, 0, 0}};
    return with_unit(s, 1, u, false, v);
}

static bool parse_frac(const char *s, double *v)
{
    static const struct unit u[] = {{"%", 1, 100}, {NULL, 0, 0}};
    return with_unit(s, 1, u, false, v);
}

static bool parse_money(const char *s, double *v)
{
    return parse_num(s[0] == '$' ? s + 1 : s, v);
}

static bool parse_bool(const char *s, double *v)
{
    static const char *const t[] = {"true", "True", "TRUE"}, *const f[] = {"false", "False",
                                                                           "FALSE"};
    for (size_t i = 0; i < 3; i++) {
        if (strcmp(s, t[i]) == 0 || strcmp(s, f[i]) == 0) {
            *v = strcmp(s, t[i]) == 0;
            return true;
        }
    }
    return false;
}

static bool parse_u64(const char *s, double *v)
{
    (void)v; /* checked here, stored by the caller from the text */
    if (!*s)
        return false;
    for (const char *p = s; *p; p++)
        if (!isdigit((unsigned char)*p))
            return false;
    errno = 0;
    (void)strtoull(s, NULL, 10);
    return errno == 0;
}

/* ---- the schema ---- */

enum kind {
    K_STR,   /* char[size]; choices restrict it */
    K_ENUM,  /* an int-sized enum, by choices */
    K_NUM,   /* double: a plain number */
    K_COUNT, /* double: 16, 7e9, 7B, 1.5T */
    K_INT,   /* double holding a whole number */
    K_UINT,  /* unsigned: a whole number */
    K_U64,   /* uint64_t */
    K_SIZE,  /* double, bytes */
    K_RATE,  /* double, bytes per second */
    K_LINK,  /* double, bits per second */
    K_DUR,   /* double, seconds */
    K_FRAC,  /* double */
    K_MONEY, /* double */
    K_BOOL,  /* bool */
    K_MAP,   /* a nested mapping: sub, at base + off */
    K_CANDS, /* the candidate sequence */
    K_SWEEP, /* the GPU counts of the sweep */
};

static const struct kind_info {
    const char *what, *eg;
    bool (*parse)(const char *s, double *v);
} kinds[] = {
    [K_STR] = {"a string", "llm-7b", NULL},
    [K_ENUM] = {"a name", "", NULL},
    [K_NUM] = {"a number", "2, 0.5, 1e-4", parse_num},
    [K_COUNT] = {"a count", "16, 7e9, 7B, 1.5T", parse_count},
    [K_INT] = {"a whole number", "8, 128, 1K", parse_count},
    [K_UINT] = {"a whole number", "1000, 10K", parse_count},
    [K_U64] = {"an unsigned integer", "1, 42", parse_u64},
    [K_SIZE] = {"a size", "4096, 4K, 98G, 1.5e12; K, M, G, T are binary: 1K = 1024", parse_size},
    [K_RATE] = {"a rate", "90GB/s, 100Gb/s, 900MiB/s", parse_rate},
    [K_LINK] = {"a rate with its unit", "100Gb/s, 400Gbit/s, 12.5GB/s", parse_rate_bits},
    [K_DUR] = {"a duration", "20us, 5ms, 2h, 3y", parse_duration},
    [K_FRAC] = {"a fraction", "0.8, 80%", parse_frac},
    [K_MONEY] = {"an amount of money", "2.50, $2.50", parse_money},
    [K_BOOL] = {"a boolean", "true, false", parse_bool},
    [K_MAP] = {"a mapping", "", NULL},
    [K_CANDS] = {"a sequence of candidates", "", NULL},
    [K_SWEEP] = {"a sequence of GPU counts", "[8, 64, 512]", NULL},
};

enum range { R_ANY, R_POS, R_NONNEG, R_UNIT, R_UNIT_POS, R_GE1, R_STEPS };

static const struct range_info {
    double lo, hi;
    bool lo_open;
    const char *says;
} ranges[] = {
    [R_ANY] = {-INFINITY, INFINITY, false, ""},
    [R_POS] = {0, INFINITY, true, "must be greater than 0"},
    [R_NONNEG] = {0, INFINITY, false, "must not be negative"},
    [R_UNIT] = {0, 1, false, "must be between 0 and 1 (0% to 100%)"},
    [R_UNIT_POS] = {0, 1, true, "must be above 0 and at most 1 (100%)"},
    [R_GE1] = {1, INFINITY, false, "must be at least 1"},
    [R_STEPS] = {1, 1e7, false, "must be between 1 and 10000000"},
};

struct choice {
    const char *name;
    int value;
};

static const struct choice algos[] = {{"auto", TP_PLAN_AUTO},
                                      {"ring", TP_PLAN_RING},
                                      {"tree", TP_PLAN_TREE},
                                      {"hierarchical", TP_PLAN_HIER},
                                      {NULL, 0}};
static const struct choice topos[] = {{"fat-tree", TP_PLAN_FAT_TREE},
                                      {"rail-optimised", TP_PLAN_RAIL},
                                      {"rail-optimized", TP_PLAN_RAIL}, /* accepted, not listed */
                                      {NULL, 0}};
static const struct choice unit_names[] = {{"samples", 0}, {"tokens", 1}, {NULL, 0}};

_Static_assert(sizeof(enum tp_plan_algo) == sizeof(int) && sizeof(enum tp_plan_topo) == sizeof(int),
               "K_ENUM stores an int");

#define REQ 1u  /* required */
#define MEAS 2u /* may be {measured: FILE} */

struct table;

/* One key of a mapping. Fields left out are zero: any value, optional,
 * default 0 (or ""). */
struct key {
    const char *name;
    enum kind kind;
    size_t off; /* from the base of the mapping's struct */
    enum range range;
    unsigned flags;               /* REQ, MEAS */
    enum tp_plan_fig fig;         /* MEAS: which figure */
    double def;                   /* when absent and not REQ */
    size_t size;                  /* K_STR: the field's capacity */
    const char *sdef;             /* K_STR's default */
    const struct choice *choices; /* K_ENUM, or a restricted K_STR */
    const struct table *sub;      /* K_MAP */
};

struct table {
    const struct key *keys;
    size_t n;
    /* checks across keys once the mapping is read: seen has bit i for keys[i] */
    int (*check)(struct ctx *x, const struct node *map, const struct node *at, const char *path,
                 char *base, uint64_t seen);
};

#define NKEYS(k) (sizeof k / sizeof k[0])
#define STR(s, f) .off = offsetof(s, f), .size = sizeof((s *)0)->f

typedef struct tp_plan_workload W;
typedef struct tp_plan_cluster C;
typedef struct tp_plan_prices P;
typedef struct tp_plan_candidate D;
typedef struct tp_plan_spec S;

static const struct key *find(const struct table *t, const char *name, size_t *i);

static bool has(const struct table *t, uint64_t seen, const char *name)
{
    size_t i;
    return find(t, name, &i) && (seen >> i & 1);
}

/* The key node named name in map (value: true for its value), or NULL. */
static const struct node *lookup(const struct node *map, const char *name, bool value)
{
    for (size_t i = 0; map && map->type == N_MAP && i + 1 < map->n; i += 2)
        if (map->kid[i]->text && strcmp(map->kid[i]->text, name) == 0)
            return map->kid[i + value];
    return NULL;
}

/* Append s to out[cap] at *len, cutting it short rather than overflow. */
static void append(char *out, size_t cap, size_t *len, const char *s)
{
    while (*s && *len + 1 < cap)
        out[(*len)++] = *s++;
    out[*len] = '\0';
}

/* out = path.name, or name at the top */
static void join(char *out, const char *path, const char *name)
{
    size_t len = 0;
    append(out, PATH_LEN, &len, path);
    append(out, PATH_LEN, &len, *path ? "." : "");
    append(out, PATH_LEN, &len, name);
}

/* out = path[i] */
static void join_index(char *out, const char *path, size_t i)
{
    char idx[32];
    size_t len = 0;
    snprintf(idx, sizeof idx, "[%zu]", i);
    append(out, PATH_LEN, &len, path);
    append(out, PATH_LEN, &len, idx);
}

/* The tables: one per mapping, the keys in the order the errors list them.
 * Offsets are from the struct the mapping fills; a K_MAP's off moves that
 * base for its sub-table. */

/* clang-format off */
static const struct key spike_keys[] = {
    {.name = "duration", .kind = K_DUR, .off = offsetof(W, spike_s), .range = R_POS, .flags = REQ},
    {.name = "probability", .kind = K_FRAC, .off = offsetof(W, spike_p), .range = R_UNIT,
     .flags = REQ},
};
static const struct table spike_tbl = {spike_keys, NKEYS(spike_keys), NULL};

static int workload_check(struct ctx *x, const struct node *map, const struct node *at,
                          const char *path, char *base, uint64_t seen);

static const struct key workload_keys[] = {
    {.name = "name", .kind = K_STR, STR(W, name), .sdef = "workload"},
    {.name = "unit", .kind = K_STR, STR(W, unit), .sdef = "samples", .choices = unit_names},
    {.name = "parameters", .kind = K_COUNT, .off = offsetof(W, params), .range = R_POS,
     .flags = REQ},
    {.name = "gradient_bytes_per_parameter", .kind = K_NUM,
     .off = offsetof(W, grad_bytes_per_param), .range = R_POS, .def = 2},
    {.name = "samples_per_gpu", .kind = K_COUNT, .off = offsetof(W, samples_per_gpu),
     .range = R_POS, .flags = REQ},
    {.name = "compute_time", .kind = K_DUR, .off = offsetof(W, compute_s), .range = R_POS,
     .flags = REQ | MEAS, .fig = TP_FIG_COMPUTE},
    {.name = "compute_cv", .kind = K_FRAC, .off = offsetof(W, compute_cv), .range = R_NONNEG,
     .def = 0.02},
    {.name = "dataset_bytes_per_sample", .kind = K_SIZE,
     .off = offsetof(W, dataset_bytes_per_sample), .range = R_NONNEG},
    /* absent: 14 bytes per parameter, set by workload_check */
    {.name = "checkpoint_bytes", .kind = K_SIZE, .off = offsetof(W, checkpoint_bytes),
     .range = R_POS},
    {.name = "train_samples", .kind = K_COUNT, .off = offsetof(W, train_samples), .range = R_POS,
     .flags = REQ},
    {.name = "overlap", .kind = K_FRAC, .off = offsetof(W, overlap), .range = R_UNIT},
    {.name = "spike", .kind = K_MAP, .sub = &spike_tbl},
};
static const struct table workload_tbl = {workload_keys, NKEYS(workload_keys), workload_check};

static const struct key intra_keys[] = {
    {.name = "latency", .kind = K_DUR, .off = offsetof(C, intra_lat_s), .range = R_POS,
     .flags = MEAS, .fig = TP_FIG_INTRA_LAT, .def = 3e-6},
    {.name = "bandwidth", .kind = K_RATE, .off = offsetof(C, intra_bw_Bps), .range = R_POS,
     .flags = MEAS, .fig = TP_FIG_INTRA_BW, .def = 150e9},
};
static const struct table intra_tbl = {intra_keys, NKEYS(intra_keys), NULL};

static int cluster_check(struct ctx *x, const struct node *map, const struct node *at,
                         const char *path, char *base, uint64_t seen);

static const struct key cluster_keys[] = {
    {.name = "nodes", .kind = K_INT, .off = offsetof(C, nodes), .range = R_GE1, .flags = REQ},
    {.name = "gpus_per_node", .kind = K_INT, .off = offsetof(C, gpus_per_node), .range = R_GE1,
     .flags = REQ},
    {.name = "intra_node", .kind = K_MAP, .sub = &intra_tbl},
    /* exactly one of the two: cluster_check */
    {.name = "mtbf_per_node", .kind = K_DUR, .off = offsetof(C, mtbf_node_s), .range = R_POS},
    {.name = "mtbf_job", .kind = K_DUR, .off = offsetof(C, mtbf_job_s), .range = R_POS},
    {.name = "restart", .kind = K_DUR, .off = offsetof(C, restart_s), .range = R_NONNEG,
     .def = 600},
};
static const struct table cluster_tbl = {cluster_keys, NKEYS(cluster_keys), cluster_check};

static const struct key prices_keys[] = {
    {.name = "gpu_hour", .kind = K_MONEY, .off = offsetof(P, gpu_hour), .range = R_NONNEG,
     .flags = REQ},
    {.name = "amortization", .kind = K_DUR, .off = offsetof(P, amortization_s), .range = R_POS,
     .def = 3 * 365 * 86400.0},
    {.name = "checkpoints_kept", .kind = K_INT, .off = offsetof(P, checkpoints_kept),
     .range = R_GE1, .def = 2},
};
static const struct table prices_tbl = {prices_keys, NKEYS(prices_keys), NULL};

static int network_check(struct ctx *x, const struct node *map, const struct node *at,
                         const char *path, char *base, uint64_t seen);

static const struct key network_keys[] = {
    {.name = "kind", .kind = K_STR, STR(D, net_kind)},
    /* link or bandwidth, at least one: network_check */
    {.name = "link", .kind = K_LINK, .off = offsetof(D, link_bps), .range = R_POS},
    {.name = "nics_per_node", .kind = K_INT, .off = offsetof(D, nics_per_node), .range = R_GE1,
     .def = 1},
    {.name = "efficiency", .kind = K_FRAC, .off = offsetof(D, efficiency), .range = R_UNIT_POS,
     .def = 0.8},
    {.name = "latency", .kind = K_DUR, .off = offsetof(D, net_lat_s), .range = R_POS,
     .flags = REQ | MEAS, .fig = TP_FIG_NET_LAT},
    {.name = "bandwidth", .kind = K_RATE, .off = offsetof(D, net_bw_Bps), .range = R_POS,
     .flags = MEAS, .fig = TP_FIG_NET_BW},
    {.name = "topology", .kind = K_ENUM, .off = offsetof(D, topology), .choices = topos,
     .def = TP_PLAN_FAT_TREE},
    {.name = "oversubscription", .kind = K_NUM, .off = offsetof(D, oversubscription),
     .range = R_GE1, .def = 1},
    {.name = "algorithm", .kind = K_ENUM, .off = offsetof(D, algo), .choices = algos,
     .def = TP_PLAN_AUTO},
    {.name = "node_cost", .kind = K_MONEY, .off = offsetof(D, node_cost), .range = R_NONNEG},
};
static const struct table network_tbl = {network_keys, NKEYS(network_keys), network_check};

static const struct key storage_keys[] = {
    {.name = "kind", .kind = K_STR, STR(D, storage_kind)},
    {.name = "write_bandwidth", .kind = K_RATE, .off = offsetof(D, write_Bps), .range = R_POS,
     .flags = REQ | MEAS, .fig = TP_FIG_WRITE_BW},
    {.name = "read_bandwidth", .kind = K_RATE, .off = offsetof(D, read_Bps), .range = R_NONNEG,
     .flags = MEAS, .fig = TP_FIG_READ_BW},
    {.name = "commit_latency", .kind = K_DUR, .off = offsetof(D, commit_lat_s), .range = R_NONNEG,
     .flags = MEAS, .fig = TP_FIG_COMMIT_LAT},
    {.name = "tb_month", .kind = K_MONEY, .off = offsetof(D, tb_month), .range = R_NONNEG},
    {.name = "async_checkpoint", .kind = K_BOOL, .off = offsetof(D, async_ckpt)},
    {.name = "snapshot_bandwidth", .kind = K_RATE, .off = offsetof(D, snapshot_Bps), .range = R_POS,
     .def = 25e9},
};
static const struct table storage_tbl = {storage_keys, NKEYS(storage_keys), NULL};

static const struct key cand_keys[] = {
    {.name = "name", .kind = K_STR, STR(D, name), .flags = REQ}, /* unique: candidates() */
    {.name = "network", .kind = K_MAP, .flags = REQ, .sub = &network_tbl},
    {.name = "storage", .kind = K_MAP, .flags = REQ, .sub = &storage_tbl},
};
static const struct table cand_tbl = {cand_keys, NKEYS(cand_keys), NULL};

static const struct key sweep_keys[] = {
    {.name = "gpus", .kind = K_SWEEP},
};
static const struct table sweep_tbl = {sweep_keys, NKEYS(sweep_keys), NULL};

static const struct key sim_keys[] = {
    {.name = "steps", .kind = K_UINT, .off = offsetof(S, sim_steps), .range = R_STEPS, .def = 1000},
    {.name = "seed", .kind = K_U64, .off = offsetof(S, seed), .def = 1},
};
static const struct table sim_tbl = {sim_keys, NKEYS(sim_keys), NULL};

static const struct key top_keys[] = {
    {.name = "workload", .kind = K_MAP, .off = offsetof(S, w), .flags = REQ, .sub = &workload_tbl},
    {.name = "cluster", .kind = K_MAP, .off = offsetof(S, c), .flags = REQ, .sub = &cluster_tbl},
    {.name = "prices", .kind = K_MAP, .off = offsetof(S, p), .flags = REQ, .sub = &prices_tbl},
    {.name = "candidates", .kind = K_CANDS, .flags = REQ},
    {.name = "sweep", .kind = K_MAP, .sub = &sweep_tbl},
    {.name = "simulate", .kind = K_MAP, .sub = &sim_tbl},
};
static const struct table top_tbl = {top_keys, NKEYS(top_keys), NULL};
/* clang-format on */

/* The keys that take {measured: FILE}, for the error when another does. */
static const char measurable[] = "compute_time, intra_node.latency, intra_node.bandwidth, "
                                 "network.latency, network.bandwidth, storage.write_bandwidth, "
                                 "storage.read_bandwidth, storage.commit_latency";

static const struct key *find(const struct table *t, const char *name, size_t *i)
{
    for (*i = 0; *i < t->n; (*i)++)
        if (strcmp(t->keys[*i].name, name) == 0)
            return &t->keys[*i];
    return NULL;
}

/* ---- checks across keys ---- */

static int workload_check(struct ctx *x, const struct node *map, const struct node *at,
                          const char *path, char *base, uint64_t seen)
{
    (void)x, (void)map, (void)at, (void)path;
    W *w = (W *)base;
    if (!has(&workload_tbl, seen, "checkpoint_bytes"))
        w->checkpoint_bytes = 14 * w->params; /* bf16 weights + fp32 master and Adam moments */
    return 0;
}

static int cluster_check(struct ctx *x, const struct node *map, const struct node *at,
                         const char *path, char *base, uint64_t seen)
{
    (void)base;
    bool node = has(&cluster_tbl, seen, "mtbf_per_node"), job = has(&cluster_tbl, seen, "mtbf_job");
    char p[PATH_LEN];
    if (node && job) {
        const struct node *a = lookup(map, "mtbf_per_node", false),
                          *b = lookup(map, "mtbf_job", false);
        const struct node *second =
            a->line > b->line || (a->line == b->line && a->col > b->col) ? a : b;
        join(p, path, second->text);
        return fail(x, second, p,
                    "give mtbf_per_node (scaled with the node count) or mtbf_job, not both");
    }
    if (!node && !job) {
        join(p, path, "mtbf_per_node");
        return fail(x, at, p, "required (or mtbf_job: one of the two)");
    }
    return 0;
}

static int network_check(struct ctx *x, const struct node *map, const struct node *at,
                         const char *path, char *base, uint64_t seen)
{
    (void)map, (void)base;
    if (has(&network_tbl, seen, "link") || has(&network_tbl, seen, "bandwidth"))
        return 0;
    char p[PATH_LEN];
    join(p, path, "link");
    return fail(x, at, p, "required (or bandwidth: one of the two)");
}

/* ---- the walk ---- */

/* Edit distance with transpositions (optimal string alignment), capped:
 * returns at most 3 for anything farther. */
static size_t distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 40 || lb > 40 || (la > lb ? la - lb : lb - la) > 2)
        return 3;
    size_t d[41][41];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t best = d[i - 1][j - 1] + cost;
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[la][lb] < 3 ? d[la][lb] : 3;
}

static int unknown_key(struct ctx *x, const struct node *k, const char *path, const struct table *t)
{
    char known[300] = "", hint[80] = "";
    size_t len = 0, best = 3, nbest = 0;
    const char *guess = NULL;
    for (size_t i = 0; i < t->n; i++) {
        const char *name = t->keys[i].name;
        len += (size_t)snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "", name);
        if (len >= sizeof known)
            len = sizeof known - 1;
        size_t d = distance(k->text, name);
        if (d < best) {
            best = d;
            guess = name;
            nbest = 1;
        } else if (d == best) {
            nbest++;
        }
    }
    if (guess && nbest == 1)
        snprintf(hint, sizeof hint, "did you mean %s? ", guess);
    return fail(x, k, path, "unknown key (%sknown: %s)", hint, known);
}

static int walk_map(struct ctx *x, const struct node *map, const struct node *at, const char *path,
                    const struct table *t, char *base);

static void store(const struct key *k, char *base, double v)
{
    void *p = base + k->off;
    switch (k->kind) {
    case K_ENUM: {
        int i = (int)v;
        memcpy(p, &i, sizeof i);
        break;
    }
    case K_UINT: *(unsigned *)p = (unsigned)v; break;
    case K_U64: *(uint64_t *)p = (uint64_t)v; break;
    case K_BOOL: *(bool *)p = v != 0; break;
    default: *(double *)p = v;
    }
}

/* Give the absent key k its default; for a mapping absent altogether, its
 * keys' defaults (its required keys are then not asked for: it is optional). */
static void fill_default(const struct key *k, char *base)
{
    switch (k->kind) {
    case K_MAP:
        for (size_t i = 0; i < k->sub->n; i++)
            fill_default(&k->sub->keys[i], base + k->off);
        break;
    case K_STR:
        if (k->sdef)
            snprintf(base + k->off, k->size, "%s", k->sdef);
        break;
    case K_CANDS:
    case K_SWEEP: break;
    default: store(k, base, k->def);
    }
}

/* `KEY: {measured: FILE}`: record the reference, leave the figure NaN. */
static int measured(struct ctx *x, const struct key *k, const struct node *v, const char *path,
                    char *base)
{
    const struct node *file = NULL;
    char p[PATH_LEN];
    for (size_t i = 0; i + 1 < v->n; i += 2) {
        const struct node *kk = v->kid[i];
        join(p, path, kk->type == N_SCALAR ? kk->text : "?");
        if (kk->type != N_SCALAR || strcmp(kk->text, "measured") != 0)
            return fail(x, kk, p, "unknown key in a measured reference (write {measured: FILE})");
        if (file)
            return fail(x, kk, p, "duplicate key (first at line %d, column %d)",
                        v->kid[i - 2]->line, v->kid[i - 2]->col);
        file = v->kid[i + 1];
    }
    if (!file)
        return fail(x, v, path, "expected {measured: FILE}, found an empty mapping");
    join(p, path, "measured");
    if (file->type != N_SCALAR || file->null || !*file->text)
        return fail(x, file, p, "expected the path of a result file, found %s", type_name(file));
    struct tp_plan_spec *s = x->spec;
    struct tp_plan_ref *refs = realloc(s->refs, (s->nrefs + 1) * sizeof *refs);
    if (!refs)
        return tp_error_set(x->err, TP_ENOMEM, "%s: out of memory", x->file);
    s->refs = refs;
    struct tp_plan_ref *r = memset(&refs[s->nrefs], 0, sizeof *r);
    r->fig = k->fig;
    r->cand = x->cand;
    const char *dir = file->text[0] == '/' ? "" : x->dir;
    if ((size_t)snprintf(r->file, sizeof r->file, "%s%s", dir, file->text) >= sizeof r->file)
        return fail(x, file, p, "path too long");
    char pos[32];
    size_t len = 0;
    snprintf(pos, sizeof pos, ":%d:%d: ", v->line, v->col);
    append(r->where, sizeof r->where, &len, x->file); /* cut short if long: it is for messages */
    append(r->where, sizeof r->where, &len, pos);
    append(r->where, sizeof r->where, &len, path);
    s->nrefs++;
    *(double *)(base + k->off) = NAN;
    return 0;
}

static int choose(struct ctx *x, const struct key *k, const struct node *v, const char *path,
                  int *out)
{
    char list[200] = "";
    size_t len = 0;
    for (const struct choice *c = k->choices; c->name; c++) {
        if (strcmp(c->name, v->text) == 0) {
            *out = c->value;
            return 0;
        }
        bool alias = c != k->choices && c[-1].value == c->value;
        if (!alias && len < sizeof list)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s",
                                    c == k->choices ? "" : ", ", c->name);
    }
    return fail(x, v, path, "unknown value '%s' (use one of: %s)", v->text, list);
}

static int sweep(struct ctx *x, const struct key *k, const struct node *v, const char *path)
{
    struct tp_plan_spec *s = x->spec;
    if (v->type != N_SEQ)
        return fail(x, v, path, "expected %s, e.g. %s, found %s", kinds[k->kind].what,
                    kinds[k->kind].eg, type_name(v));
    if (v->n == 0)
        return fail(x, v, path, "needs at least one GPU count (leave sweep out for powers of two)");
    for (size_t i = 0; i < v->n; i++) {
        const struct node *e = v->kid[i];
        char p[PATH_LEN];
        join_index(p, path, i);
        if (i == TP_PLAN_MAX_SWEEP)
            return fail(x, e, p, "too many GPU counts (at most %d)", TP_PLAN_MAX_SWEEP);
        double g;
        if (e->type != N_SCALAR || e->null)
            return fail(x, e, p, "expected a whole number, found %s", type_name(e));
        if (!parse_count(e->text, &g))
            return fail(x, e, p, "cannot parse '%s' as a GPU count (use e.g. 8, 64, 512)", e->text);
        if (g != floor(g))
            return fail(x, e, p, "'%s' is not a whole number", e->text);
        if (g < 1)
            return fail(x, e, p, "'%s' must be at least 1", e->text);
        if (i > 0 && g <= s->sweep_gpus[i - 1])
            return fail(x, e, p, "%s does not come after %s: the sweep must ascend", e->text,
                        v->kid[i - 1]->text);
        s->sweep_gpus[i] = g;
        s->nsweep = (int)i + 1;
    }
    return 0;
}

static int candidates(struct ctx *x, const struct node *v, const char *path)
{
    struct tp_plan_spec *s = x->spec;
    if (v->type != N_SEQ)
        return fail(x, v, path, "expected a sequence of candidates (- name: ...), found %s",
                    type_name(v));
    if (v->n == 0)
        return fail(x, v, path, "needs at least one candidate");
    for (size_t i = 0; i < v->n; i++) {
        const struct node *c = v->kid[i];
        char p[PATH_LEN];
        join_index(p, path, i);
        if (i == TP_PLAN_MAX_CAND)
            return fail(x, c, p, "too many candidates (at most %d)", TP_PLAN_MAX_CAND);
        x->cand = (int)i;
        s->ncand = (int)i + 1;
        int rc = walk_map(x, c, c, p, &cand_tbl, (char *)&s->cand[i]);
        x->cand = -1;
        if (rc)
            return rc;
        for (size_t j = 0; j < i; j++) {
            if (strcmp(s->cand[j].name, s->cand[i].name) == 0) {
                char np[PATH_LEN];
                join(np, p, "name");
                return fail(x, lookup(c, "name", true), np,
                            "duplicate candidate name '%s' (also candidates[%zu])", s->cand[i].name,
                            j);
            }
        }
    }
    return 0;
}

/* One value: check its node type, parse, check the range, store. kn is the
 * key (the position of a nested mapping's "required" errors). */
static int value(struct ctx *x, const struct key *k, const struct node *kn, const struct node *v,
                 const char *path, char *base)
{
    const struct kind_info *ki = &kinds[k->kind];
    switch (k->kind) {
    case K_MAP: return walk_map(x, v, kn, path, k->sub, base + k->off);
    case K_CANDS: return candidates(x, v, path);
    case K_SWEEP: return sweep(x, k, v, path);
    default: break;
    }
    if (v->type == N_MAP && (k->flags & MEAS))
        return measured(x, k, v, path, base);
    if (v->type == N_MAP && lookup(v, "measured", false))
        return fail(x, v, path, "cannot be {measured: FILE} (only %s can)", measurable);
    if (v->type != N_SCALAR)
        return fail(x, v, path, "expected %s%s%s, found %s", ki->what, *ki->eg ? ", e.g. " : "",
                    ki->eg, type_name(v));
    if (v->null)
        return fail(x, v, path, "needs a value (%s%s%s)", ki->what, *ki->eg ? ", e.g. " : "",
                    ki->eg);
    if (k->kind == K_STR) {
        if (!*v->text)
            return fail(x, v, path, "must not be empty");
        if (strlen(v->text) >= k->size)
            return fail(x, v, path, "'%s' is too long (at most %zu characters)", v->text,
                        k->size - 1);
        int unused, rc;
        if (k->choices && (rc = choose(x, k, v, path, &unused)))
            return rc;
        memcpy(base + k->off, v->text, strlen(v->text) + 1);
        return 0;
    }
    if (k->kind == K_ENUM) {
        int e, rc = choose(x, k, v, path, &e);
        if (rc)
            return rc;
        store(k, base, e);
        return 0;
    }
    double d = 0;
    if (!ki->parse(v->text, &d))
        return fail(x, v, path, "cannot parse '%s' as %s (use e.g. %s)", v->text, ki->what, ki->eg);
    if (k->kind == K_U64) {
        *(uint64_t *)(base + k->off) = strtoull(v->text, NULL, 10);
        return 0;
    }
    if ((k->kind == K_INT || k->kind == K_UINT) && d != floor(d))
        return fail(x, v, path, "'%s' is not a whole number", v->text);
    const struct range_info *r = &ranges[k->range];
    if (d < r->lo || d > r->hi || (r->lo_open && d == r->lo))
        return fail(x, v, path, "'%s' %s", v->text, r->says);
    store(k, base, d);
    return 0;
}

/* Read the mapping map (a null value counts as empty) by table t into base.
 * at is where "required" errors point: the key that names the mapping. */
static int walk_map(struct ctx *x, const struct node *map, const struct node *at, const char *path,
                    const struct table *t, char *base)
{
    if (map->type == N_SCALAR && map->null)
        map = NULL;
    else if (map->type != N_MAP)
        return fail(x, map, path, "expected a mapping, found %s", type_name(map));
    uint64_t seen = 0;
    char p[PATH_LEN];
    for (size_t i = 0; map && i + 1 < map->n; i += 2) {
        const struct node *kn = map->kid[i], *v = map->kid[i + 1];
        if (kn->type != N_SCALAR || kn->null) {
            join(p, path, "?");
            return fail(x, kn, p, "expected a key name, found %s", type_name(kn));
        }
        join(p, path, kn->text);
        for (size_t j = 0; j < i; j += 2)
            if (map->kid[j]->text && strcmp(map->kid[j]->text, kn->text) == 0)
                return fail(x, kn, p, "duplicate key (first at line %d, column %d)",
                            map->kid[j]->line, map->kid[j]->col);
        size_t ki;
        const struct key *k = find(t, kn->text, &ki);
        if (!k)
            return unknown_key(x, kn, p, t);
        seen |= UINT64_C(1) << ki;
        int rc = value(x, k, kn, v, p, base);
        if (rc)
            return rc;
    }
    for (size_t i = 0; i < t->n; i++) {
        const struct key *k = &t->keys[i];
        if (seen >> i & 1)
            continue;
        join(p, path, k->name);
        if (k->flags & REQ)
            return fail(x, at, p, "required");
        fill_default(k, base);
    }
    return t->check ? t->check(x, map, at, path, base, seen) : 0;
}

/* Read the whole file into a NUL-terminated buffer. */
static int slurp(const char *path, char **out, size_t *len, tp_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return tp_error_errno(err, TP_EUSAGE, errno, "%s", path);
    char *buf = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = cap ? 2 * cap : 8192;
            char *b = cap > MAX_FILE ? NULL : realloc(buf, cap);
            if (!b) {
                if (cap > MAX_FILE)
                    rc = tp_error_set(err, TP_EUSAGE, "%s: over %u MiB: not a plan file", path,
                                      MAX_FILE >> 20);
                else
                    rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
                break;
            }
            buf = b;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) {
            if (ferror(f))
                rc = tp_error_errno(err, TP_EUSAGE, errno ? errno : EIO, "%s", path);
            break;
        }
    }
    fclose(f);
    if (rc) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}

int tp_plan_parse(const char *path, struct tp_plan_spec *spec, tp_error *err)
{
    memset(spec, 0, sizeof *spec);
    if (!path || !*path)
        return tp_error_set(err, TP_EUSAGE, "plan file: no path given");
    if (strlen(path) >= sizeof spec->file)
        return tp_error_set(err, TP_EUSAGE, "%.64s...: path too long", path);
    strcpy(spec->file, path);
    struct ctx x = {.file = path, .spec = spec, .err = err, .cand = -1};
    const char *slash = strrchr(path, '/');
    if (slash)
        snprintf(x.dir, sizeof x.dir, "%.*s/", (int)(slash - path), path);
    char *buf = NULL;
    size_t len = 0;
    int rc = slurp(path, &buf, &len, err);
    if (rc)
        return rc;
    struct node *root = NULL;
    rc = load(&x, buf, len, &root);
    if (rc == 0 && (!root || (root->type == N_SCALAR && root->null)))
        rc = tp_error_set(err, TP_EUSAGE,
                          "%s:1:1: empty document: a plan needs workload, cluster, prices and "
                          "candidates",
                          path);
    else if (rc == 0 && root->type != N_MAP)
        rc = fail(&x, root, "",
                  "expected a mapping (workload:, cluster:, prices:, candidates:), found %s",
                  type_name(root));
    if (rc == 0)
        rc = walk_map(&x, root, root, "", &top_tbl, (char *)spec);
    node_free(root);
    free(buf);
    return rc;
}

void tp_plan_spec_free(struct tp_plan_spec *spec)
{
    if (!spec)
        return;
    free(spec->refs);
    spec->refs = NULL;
    spec->nrefs = 0;
    free(spec->w.compute_samples);
    spec->w.compute_samples = NULL;
    spec->w.ncompute = 0;
}

const char *tp_plan_algo_name(enum tp_plan_algo a)
{
    for (const struct choice *c = algos; c->name; c++)
        if (c->value == (int)a)
            return c->name;
    return "?";
}

const char *tp_plan_topo_name(enum tp_plan_topo t)
{
    for (const struct choice *c = topos; c->name; c++)
        if (c->value == (int)t)
            return c->name;
    return "?";
}
