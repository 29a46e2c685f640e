/* The YAML layer under the plan, policy and threshold files. libfyaml's event
 * stream becomes a small tree that keeps each node's line and column (the
 * document API would too, but an empty value there has no mark, and a tree
 * of our own lets a missing value point at its key); then tables of keys
 * drive the whole check, so every error names file:line:col and the key
 * path, and the accepted format of each file is read off its tables. */
#include "tp/yaml.h"

#include "tp/file.h"
#include "tp/units.h"

#include <ctype.h>
#include <errno.h>
#include <libfyaml.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct tp_yaml_node node;

/* ---- the tree: what the events said, with positions ---- */

static void node_free(node *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->n; i++)
        node_free(v->kid[i]);
    free(v->kid);
    free(v->text);
    free(v);
}

static int attach(node *parent, node *v)
{
    if (parent->n == parent->cap) {
        size_t cap = parent->cap ? 2 * parent->cap : 8;
        node **k = realloc(parent->kid, cap * sizeof *k);
        if (!k)
            return -1;
        parent->kid = k;
        parent->cap = cap;
    }
    if (v->line == 0) { /* an empty value has no mark: point at its key, or its sequence */
        const node *near =
            parent->type == TP_YAML_N_MAP && parent->n % 2 ? parent->kid[parent->n - 1] : parent;
        v->line = near->line;
        v->col = near->col;
    }
    parent->kid[parent->n++] = v;
    return 0;
}

int tp_yaml_fail(const struct tp_yaml *y, const node *at, const char *path, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tp_error_set(y->err, TP_EUSAGE, "%s:%d:%d: %s: %s", y->file, at ? at->line : 1,
                        at ? at->col : 1, path && *path ? path : "top level", msg);
}

const char *tp_yaml_type_name(const struct tp_yaml *y, const node *v)
{
    if (!v || (v->type == TP_YAML_N_SCALAR && v->null))
        return "nothing";
    if (v->type == TP_YAML_N_ALIAS)
        return y && *y->alias_says ? y->alias_says : "an alias (YAML aliases are not supported)";
    static const char *const names[] = {"a scalar", "a sequence", "a mapping"};
    return names[v->type];
}

static int no_memory(const struct tp_yaml *y)
{
    return tp_error_set(y->err, TP_ENOMEM, "%s: out of memory", y->file);
}

/* libfyaml diagnostics that bypass collection land here. */
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
static int syntax_error(const struct tp_yaml *y, struct fy_diag *diag, const struct sink *s)
{
    void *it = NULL;
    struct fy_diag_error *e = fy_diag_errors_iterate(diag, &it);
    if (e && e->msg)
        return tp_error_set(y->err, TP_EUSAGE, "%s:%d:%d: YAML syntax error: %s", y->file,
                            e->line > 0 ? e->line : 1, e->column > 0 ? e->column : 1, e->msg);
    char msg[256];
    snprintf(msg, sizeof msg, "%s", s->len ? s->buf : "malformed input");
    msg[strcspn(msg, "\n")] = '\0';
    return tp_error_set(y->err, TP_EUSAGE, "%s: YAML syntax error: %s", y->file, msg);
}

static bool is_null(const char *t, size_t len, enum fy_scalar_style style)
{
    if (style != FYSS_PLAIN)
        return false;
    return len == 0 || (len == 1 && t[0] == '~') ||
           (len == 4 && (!memcmp(t, "null", 4) || !memcmp(t, "Null", 4) || !memcmp(t, "NULL", 4)));
}

/* Turn one event into a node (NULL for the events that make none). */
static int event_node(const struct tp_yaml *y, struct fy_event *e, node **out)
{
    *out = NULL;
    enum tp_yaml_type type;
    switch (e->type) {
    case FYET_SCALAR: type = TP_YAML_N_SCALAR; break;
    case FYET_SEQUENCE_START: type = TP_YAML_N_SEQ; break;
    case FYET_MAPPING_START: type = TP_YAML_N_MAP; break;
    case FYET_ALIAS: type = TP_YAML_N_ALIAS; break;
    default: return 0;
    }
    node *v = calloc(1, sizeof *v);
    if (!v)
        return no_memory(y);
    v->type = type;
    const struct fy_mark *m = fy_event_start_mark(e);
    bool quoted = false;
    if (type == TP_YAML_N_SCALAR) {
        struct fy_token *t = e->scalar.value;
        size_t len = 0;
        const char *s = t ? fy_token_get_text(t, &len) : NULL;
        if (!s)
            len = 0;
        enum fy_scalar_style style = t ? fy_token_scalar_style(t) : FYSS_PLAIN;
        v->null = is_null(s, len, style);
        if (t && fy_token_start_mark(t))
            m = fy_token_start_mark(t);
        quoted = style == FYSS_SINGLE_QUOTED || style == FYSS_DOUBLE_QUOTED;
        if (len == 0 && !quoted)
            m = NULL; /* libfyaml has no position for an empty plain value */
        v->text = malloc(len + 1);
        if (!v->text) {
            free(v);
            return no_memory(y);
        }
        if (len)
            memcpy(v->text, s, len);
        v->text[len] = '\0';
    }
    if (m) {
        v->line = m->line + 1;
        v->col = m->column + 1;
        if ((type == TP_YAML_N_ALIAS || quoted) && v->col > 1)
            v->col--; /* libfyaml marks the name or the text: point at the '*' or the quote */
    }
    *out = v;
    return 0;
}

/* Parse buf into a tree at y->root (NULL for an empty stream). */
static int load(struct tp_yaml *y, const char *buf, size_t len)
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
        return tp_error_set(y->err, TP_ENOMEM, "%s: cannot start the YAML parser", y->file);
    fy_diag_set_collect_errors(diag, true);
    struct fy_parse_cfg cfg = {.flags = FYPCF_QUIET | FYPCF_DEFAULT_VERSION_1_2, .diag = diag};
    struct fy_parser *fyp = fy_parser_create(&cfg);
    if (!fyp || fy_parser_set_string(fyp, buf, len) != 0) {
        fy_parser_destroy(fyp);
        fy_diag_destroy(diag);
        return tp_error_set(y->err, TP_ENOMEM, "%s: cannot start the YAML parser", y->file);
    }
    node *stack[TP_YAML_MAX_DEPTH];
    int depth = 0, docs = 0, rc = 0;
    struct fy_event *e;
    while (rc == 0 && (e = fy_parser_parse(fyp))) {
        node *v = NULL;
        if (e->type == FYET_DOCUMENT_START && docs++ > 0) {
            const struct fy_mark *m = fy_event_start_mark(e);
            rc = tp_error_set(y->err, TP_EUSAGE,
                              "%s:%d:%d: a second YAML document; a %s file holds one", y->file,
                              m ? m->line + 1 : 1, m ? m->column + 1 : 1, y->what);
        } else if (e->type == FYET_SEQUENCE_END || e->type == FYET_MAPPING_END) {
            depth--;
        } else if ((rc = event_node(y, e, &v)) == 0 && v) {
            bool nest = v->type == TP_YAML_N_SEQ || v->type == TP_YAML_N_MAP;
            if (depth == 0) { /* the one root: a second document was refused above */
                y->root = v;
                if (v->line == 0)
                    v->line = v->col = 1;
            } else if (attach(stack[depth - 1], v) != 0) {
                node_free(v);
                nest = false;
                rc = no_memory(y);
            }
            if (nest && depth == TP_YAML_MAX_DEPTH)
                rc = tp_error_set(y->err, TP_EUSAGE, "%s:%d:%d: nested deeper than %d levels",
                                  y->file, v->line, v->col, TP_YAML_MAX_DEPTH);
            else if (nest)
                stack[depth++] = v;
        }
        fy_parser_event_free(fyp, e);
    }
    if (rc == 0 && fy_parser_get_stream_error(fyp))
        rc = syntax_error(y, diag, &sink);
    fy_parser_destroy(fyp);
    fy_diag_destroy(diag);
    return rc;
}

/* Read the whole file into a NUL-terminated buffer: a regular file of at
 * most TP_YAML_MAX_BYTES (tp/file.h refuses a FIFO before it blocks). */
static int slurp(const struct tp_yaml *y, char **out, size_t *len)
{
    char what[80];
    snprintf(what, sizeof what, "a %s file", y->what);
    return tp_file_read(y->file, what, TP_YAML_MAX_BYTES, TP_FILE_REGULAR, out, len, y->err);
}

/* The offset of the first byte of buf that is not YAML text, or len when
 * all of it is: well-formed UTF-8 (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF) without the control characters YAML's
 * printable set leaves out (all of C0 but tab, line feed and carriage
 * return; DEL). *why says which it was. */
static size_t text_end(const char *buf, size_t len, const char **why)
{
    const unsigned char *s = (const unsigned char *)buf;
    size_t i = 0;
    *why = "a control character";
    while (i < len) {
        unsigned c = s[i], n, min;
        if (c < 0x80) {
            if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f)
                return i;
            i++;
            continue;
        }
        *why = "not UTF-8";
        if (c >= 0xc2 && c <= 0xdf)
            n = 1, min = 0x80;
        else if (c >= 0xe0 && c <= 0xef)
            n = 2, min = 0x800;
        else if (c >= 0xf0 && c <= 0xf4)
            n = 3, min = 0x10000;
        else
            return i;
        if (len - i <= n)
            return i;
        unsigned cp = c & (0x3fu >> n);
        for (unsigned k = 1; k <= n; k++) {
            if ((s[i + k] & 0xc0) != 0x80)
                return i;
            cp = cp << 6 | (s[i + k] & 0x3fu);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return i;
        *why = "a control character";
        i += n + 1;
    }
    return len;
}

/* The offset of the first explicit-key indicator ("? ", YAML's complex
 * keys) that begins a line's content, after the indentation and any "- "
 * before it, or len when there is none. */
static size_t explicit_key(const char *buf, size_t len)
{
    for (size_t i = 0; i < len;) {
        size_t j = i;
        for (;;) {
            while (j < len && (buf[j] == ' ' || buf[j] == '\t'))
                j++;
            bool sep = j + 1 >= len || strchr(" \t\r\n", buf[j + 1]);
            if (j < len && buf[j] == '?' && sep)
                return j;
            if (!(j < len && buf[j] == '-' && sep))
                break;
            j++;
        }
        const char *nl = memchr(buf + i, '\n', len - i);
        if (!nl)
            break;
        i = (size_t)(nl - buf) + 1;
    }
    return len;
}

/* "FILE:LINE:COL: " of offset at in buf, and what is wrong there. */
static int refuse_at(const struct tp_yaml *y, const char *buf, size_t at, const char *what)
{
    int line = 1;
    size_t bol = 0;
    for (size_t i = 0; i < at; i++)
        if (buf[i] == '\n')
            line++, bol = i + 1;
    return tp_error_set(y->err, TP_EUSAGE, "%s:%d:%zu: %s", y->file, line, at - bol + 1, what);
}

int tp_yaml_open(struct tp_yaml *y, const char *path, const char *what, tp_error *err)
{
    memset(y, 0, sizeof *y);
    y->file = path ? path : "";
    y->what = what && *what ? what : "YAML";
    y->err = err;
    snprintf(y->alias_says, sizeof y->alias_says,
             "an alias (YAML aliases are not supported in %s files)", y->what);
    if (!path || !*path)
        return tp_error_set(err, TP_EUSAGE, "%s file: no path given", y->what);
    char *buf = NULL;
    size_t len = 0;
    int rc = slurp(y, &buf, &len);
    if (rc)
        return rc;
    /* libfyaml 0.7 (Debian 12) does not survive all input, and fuzz/ found
     * two ways in: a byte that is not UTF-8 in a directive ("%\xff") makes
     * it loop forever, and a complex key followed by a tab ("? a:\t:")
     * corrupts its memory on the error (reported upstream as libfyaml #57).
     * YAML is printable Unicode text, and no trainpath file needs a complex
     * key: a file with either is refused before libfyaml sees it. */
    const char *why;
    size_t bad = text_end(buf, len, &why);
    char msg[96];
    if (bad < len) {
        snprintf(msg, sizeof msg, "not YAML text: %s (byte 0x%02x)", why,
                 (unsigned char)buf[bad]);
        rc = refuse_at(y, buf, bad, msg);
    } else if ((bad = explicit_key(buf, len)) < len) {
        snprintf(msg, sizeof msg, "explicit keys ('? ') are not supported in a %s file",
                 y->what);
        rc = refuse_at(y, buf, bad, msg);
    }
    if (rc) {
        free(buf);
        return rc;
    }
    rc = load(y, buf, len);
    free(buf);
    if (rc || (y->root && y->root->type == TP_YAML_N_SCALAR && y->root->null)) {
        node_free(y->root);
        y->root = NULL;
    }
    return rc;
}

void tp_yaml_close(struct tp_yaml *y)
{
    node_free(y->root);
    y->root = NULL;
}

/* ---- paths ---- */

/* Append s to out[cap] at *len, cutting it short rather than overflow. */
static void append(char *out, size_t cap, size_t *len, const char *s)
{
    while (*s && *len + 1 < cap)
        out[(*len)++] = *s++;
    out[*len] = '\0';
}

void tp_yaml_join(char *out, const char *path, const char *name)
{
    size_t len = 0;
    append(out, TP_YAML_PATH_LEN, &len, path);
    append(out, TP_YAML_PATH_LEN, &len, *path ? "." : "");
    append(out, TP_YAML_PATH_LEN, &len, name);
}

void tp_yaml_join_index(char *out, const char *path, size_t i)
{
    char idx[32];
    size_t len = 0;
    snprintf(idx, sizeof idx, "[%zu]", i);
    append(out, TP_YAML_PATH_LEN, &len, path);
    append(out, TP_YAML_PATH_LEN, &len, idx);
}

const node *tp_yaml_lookup(const node *map, const char *name, bool value)
{
    for (size_t i = 0; map && map->type == TP_YAML_N_MAP && i + 1 < map->n; i += 2)
        if (map->kid[i]->text && strcmp(map->kid[i]->text, name) == 0)
            return map->kid[i + value];
    return NULL;
}

int tp_yaml_duplicate(const struct tp_yaml *y, const node *map, size_t i, const char *path)
{
    const node *k = map->kid[i];
    for (size_t j = 0; k->text && j < i; j += 2)
        if (map->kid[j]->text && strcmp(map->kid[j]->text, k->text) == 0)
            return tp_yaml_fail(y, k, path, "duplicate key (first at line %d, column %d)",
                                map->kid[j]->line, map->kid[j]->col);
    return 0;
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
            *v = n * units->mult / (units->div != 0 ? units->div : 1);
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

/* Binary, as on the command line: the one grammar of tp/units.h. */
static bool parse_size(const char *s, double *v)
{
    return tp_parse_size_d(s, NULL, v, NULL) == 0;
}

/* In bits per second; a bare number is bytes per second where bare_mult is
 * 8, and refused where it is 0. Bytes are 8 bits: a power of two, so the
 * bytes a caller gets back by dividing are rounded as if parsed directly. */
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
static bool parse_link(const char *s, double *v)
{
    return rate_bits(s, 0, v);
}

static bool parse_rate(const char *s, double *v)
{
    bool ok = rate_bits(s, 8, v);
    *v /= 8;
    return ok;
}

/* As on the command line, compound forms too ("1h30m"): tp/units.h. */
static bool parse_duration(const char *s, double *v)
{
    return tp_parse_duration_s(s, NULL, v, NULL) == 0;
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
    if (!*s)
        return false;
    for (const char *p = s; *p; p++)
        if (!isdigit((unsigned char)*p))
            return false;
    errno = 0;
    unsigned long long u = strtoull(s, NULL, 10);
    *v = (double)u; /* rounded: the walk stores the exact value from the text */
    return errno == 0;
}

static const struct kind_info {
    const char *what, *eg;
    bool (*parse)(const char *s, double *v);
} kinds[] = {
    [TP_YAML_STR] = {"a string", "", NULL},
    [TP_YAML_ENUM] = {"a name", "", NULL},
    [TP_YAML_NUM] = {"a number", "2, 0.5, 1e-4", parse_num},
    [TP_YAML_COUNT] = {"a count", "16, 7e9, 7B, 1.5T", parse_count},
    [TP_YAML_INT] = {"a whole number", "8, 128, 1K", parse_count},
    [TP_YAML_UINT] = {"a whole number", "1000, 10K", parse_count},
    [TP_YAML_U64] = {"an unsigned integer", "1, 42", parse_u64},
    [TP_YAML_SIZE] = {"a size", "4096, 4K, 1.5G, 1.5e12; K, M, G, T are binary: 1K = 1024",
                      parse_size},
    [TP_YAML_RATE] = {"a rate", "90GB/s, 100Gb/s, 900MiB/s", parse_rate},
    [TP_YAML_LINK] = {"a rate with its unit", "100Gb/s, 400Gbit/s, 12.5GB/s", parse_link},
    [TP_YAML_DUR] = {"a duration", "20us, 5ms, 2h, 1h30m, 3y", parse_duration},
    [TP_YAML_FRAC] = {"a fraction", "0.8, 80%", parse_frac},
    [TP_YAML_MONEY] = {"an amount of money", "2.50, $2.50", parse_money},
    [TP_YAML_BOOL] = {"a boolean", "true, false", parse_bool},
    [TP_YAML_MAP] = {"a mapping", "", NULL},
    [TP_YAML_LIST] = {"a sequence", "", NULL},
    [TP_YAML_PARSE] = {"a value", "", NULL},
    [TP_YAML_CUSTOM] = {"a value", "", NULL},
};

bool tp_yaml_parse_value(enum tp_yaml_kind kind, const char *text, double *v)
{
    if ((unsigned)kind >= sizeof kinds / sizeof kinds[0] || !kinds[kind].parse || !text)
        return false;
    return kinds[kind].parse(text, v);
}

const struct tp_yaml_range tp_yaml_positive = {0, INFINITY, true, "must be greater than 0"};
const struct tp_yaml_range tp_yaml_nonneg = {0, INFINITY, false, "must not be negative"};
const struct tp_yaml_range tp_yaml_unit = {0, 1, false, "must be between 0 and 1 (0% to 100%)"};
const struct tp_yaml_range tp_yaml_unit_pos = {0, 1, true, "must be above 0 and at most 1 (100%)"};
const struct tp_yaml_range tp_yaml_at_least1 = {1, INFINITY, false, "must be at least 1"};

/* ---- the walk ---- */

static const char *what_of(const struct tp_yaml_key *k)
{
    return k->what ? k->what : kinds[k->kind].what;
}

static const char *eg_of(const struct tp_yaml_key *k)
{
    return k->eg ? k->eg : k->what ? "" : kinds[k->kind].eg;
}

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

int tp_yaml_unknown_key(const struct tp_yaml *y, const node *k, const char *path,
                        const struct tp_yaml_table *t)
{
    char known[300] = "", hint[80] = "";
    size_t len = 0, best = 3, nbest = 0;
    const char *guess = NULL;
    for (size_t i = 0; i < t->n; i++) {
        const char *name = t->keys[i].name;
        len += (size_t)snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "", name);
        if (len >= sizeof known)
            len = sizeof known - 1;
        size_t d = k->text ? distance(k->text, name) : 3;
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
    return tp_yaml_fail(y, k, path, "unknown %s (%sknown: %s)", t->noun ? t->noun : "key", hint,
                        known);
}

static const struct tp_yaml_key *find(const struct tp_yaml_table *t, const char *name, size_t *i)
{
    for (*i = 0; *i < t->n; (*i)++)
        if (strcmp(t->keys[*i].name, name) == 0)
            return &t->keys[*i];
    return NULL;
}

bool tp_yaml_seen(const struct tp_yaml_table *t, uint64_t seen, const char *name)
{
    size_t i;
    return find(t, name, &i) && (seen >> i & 1);
}

static void store(const struct tp_yaml_key *k, char *base, double v)
{
    void *p = base + k->off;
    switch (k->kind) {
    case TP_YAML_ENUM: {
        int i = (int)v;
        memcpy(p, &i, sizeof i);
        break;
    }
    case TP_YAML_UINT: {
        unsigned u = (unsigned)v;
        memcpy(p, &u, sizeof u);
        break;
    }
    case TP_YAML_U64: {
        uint64_t u = (uint64_t)v;
        memcpy(p, &u, sizeof u);
        break;
    }
    case TP_YAML_BOOL: {
        bool b = v != 0;
        memcpy(p, &b, sizeof b);
        break;
    }
    default: memcpy(p, &v, sizeof v);
    }
}

static void set_count(const struct tp_yaml_key *k, char *base, size_t n)
{
    int i = (int)n;
    memcpy(base + k->count_off, &i, sizeof i);
}

/* Give the absent key k its default; for a mapping absent altogether, its
 * keys' defaults (its required keys are then not asked for: it is optional). */
static void fill_default(const struct tp_yaml_key *k, char *base)
{
    switch (k->kind) {
    case TP_YAML_MAP:
        for (size_t i = 0; i < k->sub->n; i++)
            fill_default(&k->sub->keys[i], base + k->off);
        break;
    case TP_YAML_STR:
        if (k->sdef)
            snprintf(base + k->off, k->size, "%s", k->sdef);
        break;
    case TP_YAML_LIST: set_count(k, base, 0); break;
    case TP_YAML_PARSE:
    case TP_YAML_CUSTOM: break;
    default: store(k, base, k->def);
    }
}

static int choose(const struct tp_yaml *y, const struct tp_yaml_key *k, const node *v,
                  const char *path, int *out)
{
    char list[200] = "";
    size_t len = 0;
    for (const struct tp_yaml_choice *c = k->choices; c->name; c++) {
        if (strcmp(c->name, v->text) == 0) {
            *out = c->value;
            return 0;
        }
        bool alias = c != k->choices && c[-1].value == c->value;
        if (!alias && len < sizeof list)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s",
                                    c == k->choices ? "" : ", ", c->name);
    }
    return tp_yaml_fail(y, v, path, "unknown value '%s' (use one of: %s)", v->text, list);
}

static int value(struct tp_yaml *y, const struct tp_yaml_key *k, const node *kn, const node *v,
                 const char *path, char *base);

/* A sequence of k->elem into base + k->off; a null value is an empty one. */
static int list(struct tp_yaml *y, const struct tp_yaml_key *k, const node *v, const char *path,
                char *base)
{
    if (v->type == TP_YAML_N_SCALAR && v->null) {
        set_count(k, base, 0);
        return 0;
    }
    const char *eg = eg_of(k);
    if (v->type != TP_YAML_N_SEQ)
        return tp_yaml_fail(y, v, path, "expected %s%s%s, found %s", what_of(k),
                            *eg ? ", e.g. " : "", eg, tp_yaml_type_name(y, v));
    for (size_t i = 0; i < v->n; i++) {
        const node *e = v->kid[i];
        char p[TP_YAML_PATH_LEN];
        tp_yaml_join_index(p, path, i);
        if (i == k->max)
            return tp_yaml_fail(y, e, p, "too many entries (at most %zu)", k->max);
        int rc = value(y, k->elem, e, e, p, base + k->off + i * k->stride);
        if (rc)
            return rc;
        set_count(k, base, i + 1);
    }
    return 0;
}

/* Read mapping map into base by t; see tp_yaml_walk. */
static int walk_map(struct tp_yaml *y, const node *map, const node *at, const char *path,
                    const struct tp_yaml_table *t, char *base)
{
    if (map->type == TP_YAML_N_SCALAR && map->null)
        map = NULL;
    else if (map->type != TP_YAML_N_MAP)
        return tp_yaml_fail(y, map, path, "expected a mapping, found %s",
                            tp_yaml_type_name(y, map));
    if (t->n > 64) /* seen has a bit per key */
        return tp_error_set(y->err, TP_EUSAGE, "%s: %s: a table of %zu keys (at most 64)", y->file,
                            path, t->n);
    uint64_t seen = 0;
    char p[TP_YAML_PATH_LEN];
    for (size_t i = 0; map && i + 1 < map->n; i += 2) {
        const node *kn = map->kid[i], *v = map->kid[i + 1];
        if (kn->type != TP_YAML_N_SCALAR || kn->null) {
            tp_yaml_join(p, path, "?");
            return tp_yaml_fail(y, kn, p, "expected a key name, found %s",
                                tp_yaml_type_name(y, kn));
        }
        tp_yaml_join(p, path, kn->text);
        int rc = tp_yaml_duplicate(y, map, i, p);
        if (rc)
            return rc;
        size_t ki;
        const struct tp_yaml_key *k = find(t, kn->text, &ki);
        if (!k)
            return tp_yaml_unknown_key(y, kn, p, t);
        seen |= UINT64_C(1) << ki;
        if ((rc = value(y, k, kn, v, p, base)))
            return rc;
    }
    for (size_t i = 0; i < t->n; i++) {
        const struct tp_yaml_key *k = &t->keys[i];
        if (seen >> i & 1)
            continue;
        tp_yaml_join(p, path, k->name);
        if (k->flags & TP_YAML_REQUIRED)
            return tp_yaml_fail(y, at, p, "required");
        fill_default(k, base);
    }
    return t->check ? t->check(y, map, at, path, base, seen) : 0;
}

/* One value: check its node type, parse, check the range, store. kn is the
 * key (where a nested mapping's "required" errors point). */
static int value(struct tp_yaml *y, const struct tp_yaml_key *k, const node *kn, const node *v,
                 const char *path, char *base)
{
    switch (k->kind) {
    case TP_YAML_MAP: return walk_map(y, v, kn, path, k->sub, base + k->off);
    case TP_YAML_LIST: return list(y, k, v, path, base);
    case TP_YAML_CUSTOM: return k->read(y, k, v, path, base);
    default: break;
    }
    const char *what = what_of(k), *eg = eg_of(k);
    if (v->type == TP_YAML_N_MAP && y->map_value) {
        int rc = y->map_value(y, k, v, path, base);
        if (rc != TP_YAML_DECLINE)
            return rc;
    }
    if (v->type != TP_YAML_N_SCALAR)
        return tp_yaml_fail(y, v, path, "expected %s%s%s, found %s", what, *eg ? ", e.g. " : "", eg,
                            tp_yaml_type_name(y, v));
    if (v->null)
        return tp_yaml_fail(y, v, path, "needs a value (%s%s%s)", what, *eg ? ", e.g. " : "", eg);
    if (k->kind == TP_YAML_PARSE)
        return k->read(y, k, v, path, base);
    if (k->kind == TP_YAML_STR) {
        if (!*v->text)
            return tp_yaml_fail(y, v, path, "must not be empty");
        int unused, rc; /* the choices first: a wrong name is not "too long" */
        if (k->choices && (rc = choose(y, k, v, path, &unused)))
            return rc;
        if (strlen(v->text) >= k->size)
            return tp_yaml_fail(y, v, path, "'%s' is too long (at most %zu characters)", v->text,
                                k->size - 1);
        memcpy(base + k->off, v->text, strlen(v->text) + 1);
        return 0;
    }
    if (k->kind == TP_YAML_ENUM) {
        int e, rc = choose(y, k, v, path, &e);
        if (rc)
            return rc;
        store(k, base, e);
        return 0;
    }
    double d = 0;
    if (k->kind == TP_YAML_U64 && *v->text && strspn(v->text, "0123456789") == strlen(v->text) &&
        !kinds[k->kind].parse(v->text, &d)) /* digits alone: more than 64 bits */
        return tp_yaml_fail(y, v, path, "'%s' is too large (at most %llu)", v->text,
                            (unsigned long long)UINT64_MAX);
    if (!kinds[k->kind].parse(v->text, &d))
        return tp_yaml_fail(y, v, path, "cannot parse '%s' as %s%s%s%s", v->text, what,
                            *eg ? " (use e.g. " : "", eg, *eg ? ")" : "");
    if (k->kind == TP_YAML_U64) {
        uint64_t u = strtoull(v->text, NULL, 10);
        memcpy(base + k->off, &u, sizeof u);
        return 0;
    }
    if ((k->kind == TP_YAML_INT || k->kind == TP_YAML_UINT) && d != floor(d))
        return tp_yaml_fail(y, v, path, "'%s' is not a whole number", v->text);
    const struct tp_yaml_range *r = k->range;
    if (r && (d < r->lo || d > r->hi || (r->lo_open && d == r->lo)))
        return tp_yaml_fail(y, v, path, "'%s' %s", v->text, r->says);
    if (k->kind == TP_YAML_UINT && (d < 0 || d > UINT_MAX))
        return tp_yaml_fail(y, v, path, "'%s' must be between 0 and %u", v->text, UINT_MAX);
    store(k, base, d);
    return 0;
}

int tp_yaml_walk(struct tp_yaml *y, const node *map, const node *at, const char *path,
                 const struct tp_yaml_table *t, void *base)
{
    if (!map)
        return tp_yaml_fail(y, at, path, "expected a mapping, found nothing");
    return walk_map(y, map, at, path, t, base);
}
