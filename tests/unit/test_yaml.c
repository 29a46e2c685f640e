/* Tests of the YAML layer on its own: the positioned tree (a null value at
 * its key, an alias at its '*'), the errors of loading (syntax, a second
 * document, depth, size, a missing file), key paths, and the table walk with
 * every kind of value, defaults, ranges, lists, callbacks, unknown and
 * duplicate keys. Files are written to a fresh folder under /tmp. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tp/yaml.h"
#include "tp_test.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    return tp_test_mkdtemp(dir, sizeof dir, "tp_yaml");
}

static int teardown(void **state)
{
    (void)state;
    return tp_test_rmtree(dir);
}

/* Open text as dir/t.yaml, which must load. */
static void open_ok(struct tp_yaml *y, const char *text, char *path, size_t cap, tp_error *err)
{
    tp_test_write(dir, "t.yaml", text, path, cap);
    int rc = tp_yaml_open(y, path, "test", err);
    if (rc != 0)
        fail_msg("open failed (%d): %s", rc, err->msg);
}

static void positions(void **state)
{
    (void)state;
    char path[128];
    tp_error err = {0};
    struct tp_yaml y;
    open_ok(&y,
            "# comment\n"      /* 1 */
            "a: 1\n"           /* 2 */
            "b:\n"             /* 3 */
            "  - x\n"          /* 4 */
            "  -   \"y z\"\n"  /* 5 */
            "c: {d: , e: ~}\n" /* 6 */
            "f: &anchor 5\n"   /* 7 */
            "g: *anchor\n"     /* 8 */
            "h:\n",            /* 9 */
            path, sizeof path, &err);
    const struct tp_yaml_node *r = y.root;
    assert_non_null(r);
    TP_EQ_INT(r->type, TP_YAML_N_MAP);
    TP_EQ_INT(r->line, 2);
    TP_EQ_INT(r->col, 1);
    TP_EQ_INT(r->n, 12);
    const struct tp_yaml_node *a = tp_yaml_lookup(r, "a", true);
    TP_EQ_INT(a->type, TP_YAML_N_SCALAR);
    TP_EQ_STR(a->text, "1");
    TP_EQ_INT(a->line, 2);
    TP_EQ_INT(a->col, 4);
    const struct tp_yaml_node *bk = tp_yaml_lookup(r, "b", false),
                              *b = tp_yaml_lookup(r, "b", true);
    TP_EQ_INT(bk->line, 3);
    TP_EQ_INT(bk->col, 1);
    TP_EQ_INT(b->type, TP_YAML_N_SEQ);
    TP_EQ_INT(b->n, 2);
    TP_EQ_INT(b->kid[0]->line, 4);
    TP_EQ_INT(b->kid[0]->col, 5);
    TP_EQ_STR(b->kid[1]->text, "y z");
    TP_EQ_INT(b->kid[1]->line, 5);
    TP_EQ_INT(b->kid[1]->col, 7);
    const struct tp_yaml_node *c = tp_yaml_lookup(r, "c", true);
    TP_EQ_INT(c->type, TP_YAML_N_MAP);
    const struct tp_yaml_node *d = tp_yaml_lookup(c, "d", true), *e = tp_yaml_lookup(c, "e", true);
    assert_true(d->null); /* empty: at its key */
    TP_EQ_STR(d->text, "");
    TP_EQ_INT(d->line, 6);
    TP_EQ_INT(d->col, 5);
    assert_true(e->null);
    TP_EQ_INT(e->col, 13);
    const struct tp_yaml_node *g = tp_yaml_lookup(r, "g", true);
    TP_EQ_INT(g->type, TP_YAML_N_ALIAS);
    TP_EQ_INT(g->line, 8);
    TP_EQ_INT(g->col, 4); /* at the '*' */
    assert_true(strstr(tp_yaml_type_name(&y, g), "not supported in test files") != NULL);
    const struct tp_yaml_node *h = tp_yaml_lookup(r, "h", true);
    assert_true(h->null);
    TP_EQ_INT(h->line, 9);
    TP_EQ_INT(h->col, 1);
    TP_EQ_STR(tp_yaml_type_name(&y, h), "nothing");
    TP_EQ_STR(tp_yaml_type_name(&y, b), "a sequence");
    TP_EQ_STR(tp_yaml_type_name(&y, a), "a scalar");
    TP_EQ_STR(tp_yaml_type_name(&y, c), "a mapping");
    assert_null(tp_yaml_lookup(r, "zz", true));
    assert_null(tp_yaml_lookup(b, "x", true)); /* not a mapping */
    tp_yaml_close(&y);
    assert_null(y.root);
    tp_yaml_close(&y); /* twice: harmless */
}

static void empty_documents(void **state)
{
    (void)state;
    static const char *const texts[] = {"", "# only a comment\n", "~\n", "---\n"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        char path[128];
        tp_error err = {0};
        struct tp_yaml y;
        open_ok(&y, texts[i], path, sizeof path, &err);
        if (y.root)
            fail_msg("'%s': a root where none was expected", texts[i]);
        tp_yaml_close(&y);
    }
}

static void load_errors(void **state)
{
    (void)state;
    char path[128], deep[512];
    size_t len = 0;
    for (int i = 0; i <= TP_YAML_MAX_DEPTH; i++)
        deep[len++] = '[';
    for (int i = 0; i <= TP_YAML_MAX_DEPTH; i++)
        deep[len++] = ']';
    deep[len++] = '\n';
    deep[len] = '\0';
    static char deep_copy[512];
    memcpy(deep_copy, deep, len + 1);
    static const struct {
        const char *text, *prefix, *says;
    } rows[] = {
        {"a: [1, 2\nb: 3\n", "3:1: YAML syntax error: ", "flow sequence"},
        {"a: 1\n  b: 2\n", "1:4: YAML syntax error: ", "multiline"},
        {"a: 1\n---\nb: 2\n", "2:1: ", "a second YAML document; a test file holds one"},
        {"x: \"unterminated\n", "", "YAML syntax error"},
        {deep_copy, "1:65: ", "nested deeper than 64 levels"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        tp_error err = {0};
        struct tp_yaml y;
        tp_test_write(dir, "t.yaml", rows[i].text, path, sizeof path);
        int rc = tp_yaml_open(&y, path, "test", &err);
        if (rc != TP_EUSAGE || err.code != TP_EUSAGE)
            fail_msg("row %zu: rc %d, expected TP_EUSAGE; %s", i, rc, err.msg);
        assert_null(y.root);
        TP_EXPECT_ERR(NULL, err.msg, path, rows[i].prefix, rows[i].says);
        tp_yaml_close(&y);
    }
    /* a missing file, no path, and one over the limit */
    tp_error err = {0};
    struct tp_yaml y;
    char missing[160];
    snprintf(missing, sizeof missing, "%s/none.yaml", dir);
    TP_EQ_INT(tp_yaml_open(&y, missing, "test", &err), TP_EUSAGE);
    TP_EXPECT_ERR(NULL, err.msg, missing, " ", "No such file or directory");
    TP_EQ_INT(tp_yaml_open(&y, "", "test", &err), TP_EUSAGE);
    TP_EQ_STR(err.msg, "test file: no path given");
    tp_test_write(dir, "t.yaml", "", path, sizeof path);
    assert_int_equal(truncate(path, TP_YAML_MAX_BYTES + 1), 0);
    TP_EQ_INT(tp_yaml_open(&y, path, "test", &err), TP_EUSAGE);
    TP_EXPECT_ERR(NULL, err.msg, path, " ", "over 16 MiB (16777217 bytes): too large for a test file");
    assert_null(y.root);
}

static void paths(void **state)
{
    (void)state;
    char p[TP_YAML_PATH_LEN], q[TP_YAML_PATH_LEN];
    tp_yaml_join(p, "", "planes");
    TP_EQ_STR(p, "planes");
    tp_yaml_join(q, p, "data");
    TP_EQ_STR(q, "planes.data");
    tp_yaml_join(p, q, "cidrs");
    tp_yaml_join_index(q, p, 3);
    TP_EQ_STR(q, "planes.data.cidrs[3]");
    char long_name[400];
    memset(long_name, 'x', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    tp_yaml_join(p, "a", long_name); /* cut short, terminated */
    TP_EQ_INT(strlen(p), TP_YAML_PATH_LEN - 1);
    TP_EQ_INT(p[1], '.');
    struct tp_yaml y = {.file = "f.yaml"};
    tp_error err = {0};
    y.err = &err;
    struct tp_yaml_node at = {.line = 7, .col = 3};
    TP_EQ_INT(tp_yaml_fail(&y, &at, "a.b[2]", "bad %s", "thing"), TP_EUSAGE);
    TP_EQ_STR(err.msg, "f.yaml:7:3: a.b[2]: bad thing");
    TP_EQ_INT(err.code, TP_EUSAGE);
    tp_yaml_fail(&y, NULL, "", "whole file");
    TP_EQ_STR(err.msg, "f.yaml:1:1: top level: whole file");
}

/* ---- the walk ---- */

enum colour { RED, GREEN, BLUE };

struct inner {
    double a, b;
};

struct item {
    char name[8];
    unsigned n;
};

struct all {
    char str[8];
    char pick[8];
    int colour;
    double num, count, whole, size, rate, link, dur, frac, money;
    unsigned u;
    uint64_t u64;
    bool flag;
    struct inner in;
    char words[3][8];
    int nwords;
    struct item items[2];
    int nitems;
    int custom_seen;
    int odd; /* by a TP_YAML_PARSE reader */
};

static const struct tp_yaml_choice colours[] = {
    {"red", RED}, {"green", GREEN}, {"blue", BLUE}, {"bleu", BLUE}, {NULL, 0}};
static const struct tp_yaml_choice picks[] = {{"one", 1}, {"two", 2}, {NULL, 0}};

static int read_odd(struct tp_yaml *y, const struct tp_yaml_key *k, const struct tp_yaml_node *v,
                    const char *path, void *base)
{
    int n = atoi(v->text);
    if (n % 2 == 0)
        return tp_yaml_fail(y, v, path, "'%s' is not odd", v->text);
    memcpy((char *)base + k->off, &n, sizeof n);
    return 0;
}

static int read_custom(struct tp_yaml *y, const struct tp_yaml_key *k, const struct tp_yaml_node *v,
                       const char *path, void *base)
{
    (void)y, (void)path;
    struct all *s = base;
    (void)k;
    s->custom_seen = (int)v->type + 1;
    return 0;
}

static int inner_check(struct tp_yaml *y, const struct tp_yaml_node *map,
                       const struct tp_yaml_node *at, const char *path, void *base, uint64_t seen);

static const struct tp_yaml_range small = {0, 10, false, "must be between 0 and 10"};

static const struct tp_yaml_key inner_keys[] = {
    {.name = "a", .kind = TP_YAML_NUM, .off = offsetof(struct inner, a), .flags = TP_YAML_REQUIRED},
    {.name = "b", .kind = TP_YAML_NUM, .off = offsetof(struct inner, b), .def = 5},
};
static const struct tp_yaml_table inner_tbl = {inner_keys, 2, inner_check, NULL};

static const struct tp_yaml_key item_keys[] = {
    {.name = "name",
     .kind = TP_YAML_STR,
     TP_YAML_STR_FIELD(struct item, name),
     .flags = TP_YAML_REQUIRED},
    {.name = "n", .kind = TP_YAML_UINT, .off = offsetof(struct item, n), .def = 7},
};
static const struct tp_yaml_table item_tbl = {item_keys, 2, NULL, NULL};
static const struct tp_yaml_key word_elem = {.kind = TP_YAML_STR, .size = 8};
static const struct tp_yaml_key item_elem = {.kind = TP_YAML_MAP, .sub = &item_tbl};

#define F(f) .off = offsetof(struct all, f)
static const struct tp_yaml_key all_keys[] = {
    {.name = "str", .kind = TP_YAML_STR, TP_YAML_STR_FIELD(struct all, str), .sdef = "dflt"},
    {.name = "pick", .kind = TP_YAML_STR, TP_YAML_STR_FIELD(struct all, pick), .choices = picks},
    {.name = "colour", .kind = TP_YAML_ENUM, F(colour), .choices = colours, .def = GREEN},
    {.name = "num", .kind = TP_YAML_NUM, F(num), .def = -1},
    {.name = "count", .kind = TP_YAML_COUNT, F(count), .range = &tp_yaml_positive},
    {.name = "whole", .kind = TP_YAML_INT, F(whole), .range = &tp_yaml_at_least1, .def = 3},
    {.name = "size", .kind = TP_YAML_SIZE, F(size), .range = &tp_yaml_nonneg},
    {.name = "rate", .kind = TP_YAML_RATE, F(rate)},
    {.name = "link", .kind = TP_YAML_LINK, F(link)},
    {.name = "dur", .kind = TP_YAML_DUR, F(dur)},
    {.name = "frac", .kind = TP_YAML_FRAC, F(frac), .range = &tp_yaml_unit},
    {.name = "money", .kind = TP_YAML_MONEY, F(money)},
    {.name = "u", .kind = TP_YAML_UINT, F(u), .range = &small, .def = 4},
    {.name = "u64", .kind = TP_YAML_U64, F(u64), .def = 9},
    {.name = "flag", .kind = TP_YAML_BOOL, F(flag), .def = 1},
    {.name = "inner", .kind = TP_YAML_MAP, F(in), .sub = &inner_tbl},
    {.name = "words",
     .kind = TP_YAML_LIST,
     TP_YAML_LIST_OF(struct all, words, nwords),
     .elem = &word_elem},
    {.name = "items",
     .kind = TP_YAML_LIST,
     TP_YAML_LIST_OF(struct all, items, nitems),
     .elem = &item_elem,
     .what = "a sequence of items",
     .eg = "[{name: x}]"},
    {.name = "custom", .kind = TP_YAML_CUSTOM, .read = read_custom},
    {.name = "odd",
     .kind = TP_YAML_PARSE,
     F(odd),
     .read = read_odd,
     .what = "an odd number",
     .eg = "1, 3"},
};
static const struct tp_yaml_table all_tbl = {all_keys, TP_YAML_NKEYS(all_keys), NULL, NULL};

static int inner_check(struct tp_yaml *y, const struct tp_yaml_node *map,
                       const struct tp_yaml_node *at, const char *path, void *base, uint64_t seen)
{
    (void)map, (void)base;
    if (tp_yaml_seen(&inner_tbl, seen, "b") && !tp_yaml_seen(&inner_tbl, seen, "a"))
        return tp_yaml_fail(y, at, path, "never reached: a is required");
    struct inner *in = base;
    if (in->a > in->b)
        return tp_yaml_fail(y, at, path, "a above b");
    return 0;
}

/* Walk text by all_tbl into *s; returns the code, the message in err. */
static int walk_text(const char *text, struct all *s, tp_error *err, char *path, size_t cap)
{
    struct tp_yaml y;
    tp_test_write(dir, "t.yaml", text, path, cap);
    memset(s, 0x5a, sizeof *s); /* what the walk leaves alone shows */
    int rc = tp_yaml_open(&y, path, "test", err);
    if (rc == 0)
        rc = tp_yaml_walk(&y, y.root, y.root, "", &all_tbl, s);
    tp_yaml_close(&y);
    return rc;
}

static void walk_every_kind(void **state)
{
    (void)state;
    struct all s;
    tp_error err = {0};
    char path[128];
    int rc = walk_text("str: hello\n"
                       "pick: two\n"
                       "colour: bleu\n"
                       "num: -2.5e-1\n"
                       "count: 1.5T\n"
                       "whole: 2K\n"
                       "size: 2GiB\n"
                       "rate: 100Gb/s\n"
                       "link: 12.5GB/s\n"
                       "dur: 850ms\n"
                       "frac: 60%\n"
                       "money: $2.50\n"
                       "u: 10\n"
                       "u64: 18446744073709551615\n"
                       "flag: false\n"
                       "inner: {a: 1}\n"
                       "words: [x, \"y y\"]\n"
                       "items:\n"
                       "  - name: i0\n"
                       "    n: 3\n"
                       "  - {name: i1}\n"
                       "custom: [1]\n"
                       "odd: 5\n",
                       &s, &err, path, sizeof path);
    if (rc)
        fail_msg("walk failed (%d): %s", rc, err.msg);
    TP_EQ_STR(s.str, "hello");
    TP_EQ_STR(s.pick, "two");
    TP_EQ_INT(s.colour, BLUE);
    TP_NEAR_REL(s.num, -0.25, 0);
    TP_NEAR_REL(s.count, 1.5e12, 0);
    TP_NEAR_REL(s.whole, 2000, 0);
    TP_NEAR_REL(s.size, 0x1p31, 0);
    TP_NEAR_REL(s.rate, 1.25e10, 0);
    TP_NEAR_REL(s.link, 1e11, 0);
    TP_NEAR_REL(s.dur, 0.85, 0);
    TP_NEAR_REL(s.frac, 0.6, 0);
    TP_NEAR_REL(s.money, 2.5, 0);
    TP_EQ_INT(s.u, 10);
    TP_EQ_U64(s.u64, UINT64_MAX);
    assert_false(s.flag);
    TP_NEAR_REL(s.in.a, 1, 0);
    TP_NEAR_REL(s.in.b, 5, 0); /* default inside a mapping given */
    TP_EQ_INT(s.nwords, 2);
    TP_EQ_STR(s.words[0], "x");
    TP_EQ_STR(s.words[1], "y y");
    TP_EQ_INT(s.nitems, 2);
    TP_EQ_STR(s.items[0].name, "i0");
    TP_EQ_INT(s.items[0].n, 3);
    TP_EQ_STR(s.items[1].name, "i1");
    TP_EQ_INT(s.items[1].n, 7);
    TP_EQ_INT(s.custom_seen, TP_YAML_N_SEQ + 1);
    TP_EQ_INT(s.odd, 5);
}

static void walk_defaults(void **state)
{
    (void)state;
    struct all s;
    tp_error err = {0};
    char path[128];
    int rc = walk_text("words:\n", &s, &err, path, sizeof path);
    if (rc)
        fail_msg("walk failed (%d): %s", rc, err.msg);
    TP_EQ_STR(s.str, "dflt");
    TP_EQ_INT(s.colour, GREEN);
    TP_NEAR_REL(s.num, -1, 0);
    TP_NEAR_REL(s.count, 0, 0);
    TP_NEAR_REL(s.whole, 3, 0);
    TP_EQ_INT(s.u, 4);
    TP_EQ_U64(s.u64, 9);
    assert_true(s.flag);
    TP_NEAR_REL(s.in.a, 0, 0); /* an absent mapping: defaults, its required keys not asked */
    TP_NEAR_REL(s.in.b, 5, 0);
    TP_EQ_INT(s.nwords, 0); /* a null list is empty */
    TP_EQ_INT(s.nitems, 0);
    TP_EQ_INT(s.pick[0], 0x5a); /* no default: left alone */
    TP_EQ_INT(s.custom_seen, 0x5a5a5a5a);
}

static void parse_values(void **state)
{
    (void)state;
    static const struct {
        enum tp_yaml_kind kind;
        const char *text;
        bool ok;
        double want;
    } rows[] = {
        {TP_YAML_NUM, "1e-4", true, 1e-4},
        {TP_YAML_NUM, "0x10", false, 0},
        {TP_YAML_NUM, "inf", false, 0},
        {TP_YAML_NUM, "1e999", false, 0},
        {TP_YAML_COUNT, "7B", true, 7e9},
        {TP_YAML_COUNT, "10k", true, 1e4},
        {TP_YAML_COUNT, "7 bn", false, 0},
        {TP_YAML_INT, "1K", true, 1000},
        {TP_YAML_UINT, "65535", true, 65535},
        {TP_YAML_U64, "-1", false, 0},
        {TP_YAML_U64, "42", true, 42},
        {TP_YAML_SIZE, "4k", true, 4096},
        {TP_YAML_SIZE, "98GB", false, 0},
        {TP_YAML_SIZE, "1PiB", true, 0x1p50},
        {TP_YAML_RATE, "5e9", true, 5e9},
        {TP_YAML_RATE, "1GiB/s", true, 0x1p30},
        {TP_YAML_RATE, "8 Gbit/s", true, 1e9},
        {TP_YAML_LINK, "100", false, 0},
        {TP_YAML_LINK, "400Gbit/s", true, 4e11},
        {TP_YAML_DUR, "2m", true, 120},
        {TP_YAML_DUR, "90min", true, 5400},
        {TP_YAML_DUR, "100ns", true, 100e-9},
        {TP_YAML_DUR, "3y", true, 3 * 365 * 86400.0},
        {TP_YAML_DUR, "5 parsecs", false, 0},
        /* the grammar of the command line (tp/units.h): compound, µs, weeks */
        {TP_YAML_DUR, "1h30m", true, 5400},
        {TP_YAML_DUR, "2h15m30s", true, 8130},
        {TP_YAML_DUR, "15min", true, 900},
        {TP_YAML_DUR, "500\xc2\xb5s", true, 500e-6},
        {TP_YAML_DUR, "2w", true, 14 * 86400.0},
        {TP_YAML_DUR, "850ms", true, 0.85},
        {TP_YAML_DUR, "1h1h", false, 0},
        {TP_YAML_DUR, "1h30", false, 0},
        {TP_YAML_DUR, "1e999s", false, 0},
        {TP_YAML_SIZE, "1.5G", true, 1.5 * 0x1p30},
        {TP_YAML_SIZE, "0.5MiB", true, 0x1p19},
        {TP_YAML_SIZE, "4b", false, 0},
        {TP_YAML_SIZE, "1.5GB", false, 0},
        {TP_YAML_FRAC, "3%", true, 0.03},
        {TP_YAML_FRAC, "0.5", true, 0.5},
        {TP_YAML_MONEY, "$30", true, 30},
        {TP_YAML_MONEY, "€30", false, 0},
        {TP_YAML_BOOL, "True", true, 1},
        {TP_YAML_BOOL, "FALSE", true, 0},
        {TP_YAML_BOOL, "yes", false, 0},
        {TP_YAML_STR, "x", false, 0},
        {TP_YAML_MAP, "x", false, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        double v = -12345;
        bool ok = tp_yaml_parse_value(rows[i].kind, rows[i].text, &v);
        if (ok != rows[i].ok)
            fail_msg("'%s' (kind %d): %s, expected %s", rows[i].text, rows[i].kind,
                     ok ? "parsed" : "refused", rows[i].ok ? "parsed" : "refused");
        if (ok && v != rows[i].want)
            fail_msg("'%s' = %.17g, expected %.17g", rows[i].text, v, rows[i].want);
    }
}

static void walk_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text, *where, *says;
    } rows[] = {
        {"srt: x\n", "1:1: srt: ", "unknown key (did you mean str? known: str, pick, colour, "},
        {"wrds: []\n", "1:1: wrds: ", "did you mean words?"},
        {"zzz: 1\n", "1:1: zzz: ", "unknown key (known: str, "},
        {"u: 1\nnum: 2\nu: 3\n", "3:1: u: ", "duplicate key (first at line 1, column 1)"},
        {"[a]: 1\n", "1:1: ?: ", "expected a key name, found a sequence"},
        {"str: toolongforit\n", "1:6: str: ", "'toolongforit' is too long (at most 7 characters)"},
        {"str: ''\n", "1:6: str: ", "must not be empty"},
        {"pick: three\n", "1:7: pick: ", "unknown value 'three' (use one of: one, two)"},
        {"colour: pink\n", "1:9: colour: ", "(use one of: red, green, blue)"},
        {"num: 1.2.3\n", "1:6: num: ", "cannot parse '1.2.3' as a number (use e.g. 2, 0.5"},
        {"count: 0\n", "1:8: count: ", "'0' must be greater than 0"},
        {"whole: 2.5\n", "1:8: whole: ", "'2.5' is not a whole number"},
        {"whole: 0\n", "1:8: whole: ", "'0' must be at least 1"},
        {"size: -1K\n", "1:7: size: ", "'-1K' must not be negative"},
        {"frac: 101%\n", "1:7: frac: ", "must be between 0 and 1 (0% to 100%)"},
        {"u: 11\n", "1:4: u: ", "'11' must be between 0 and 10"},
        {"u64: 1.5\n", "1:6: u64: ", "cannot parse '1.5' as an unsigned integer"},
        {"u64: 99999999999999999999\n", "1:6: u64: ",
         "'99999999999999999999' is too large (at most 18446744073709551615)"},
        {"dur: 30m1h\n", "1:6: dur: ", "cannot parse '30m1h' as a duration"},
        {"flag: yes\n", "1:7: flag: ", "cannot parse 'yes' as a boolean (use e.g. true, false)"},
        {"num:\n", "1:1: num: ", "needs a value (a number, e.g. 2, 0.5, 1e-4)"},
        {"num: [1]\n", "1:6: num: ", "expected a number, e.g. 2, 0.5, 1e-4, found a sequence"},
        {"num: {a: 1}\n", "1:6: num: ", "found a mapping"},
        {"inner: 3\n", "1:8: inner: ", "expected a mapping, found a scalar"},
        {"inner: {b: 1}\n", "1:1: inner.a: ", "required"},
        {"inner:\n  a: 9\n  b: 1\n", "1:1: inner: ", "a above b"},
        {"inner: {a: 1, bb: 2}\n", "1:15: inner.bb: ", "did you mean b?"},
        {"words: x\n", "1:8: words: ", "expected a sequence, found a scalar"},
        {"words: [a, b, c, d]\n", "1:18: words[3]: ", "too many entries (at most 3)"},
        {"words: [a, [b]]\n", "1:12: words[1]: ", "expected a string, found a sequence"},
        {"items: {}\n", "1:8: items: ",
         "expected a sequence of items, e.g. [{name: x}], found a "
         "mapping"},
        {"items:\n  - n: 1\n", "2:5: items[0].name: ", "required"},
        {"items:\n  - {name: a, m: 1}\n", "2:15: items[0].m: ", "did you mean n?"},
        {"odd: 4\n", "1:6: odd: ", "'4' is not odd"},
        {"odd: [1]\n", "1:6: odd: ", "expected an odd number, e.g. 1, 3, found a sequence"},
        {"str: &a x\npick: *a\n", "2:7: pick: ",
         "found an alias (YAML aliases are not "
         "supported in test files)"},
        {"u: 5000000000\n", "1:4: u: ", "'5000000000' must be between 0 and 10"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct all s;
        tp_error err = {0};
        char path[128];
        int rc = walk_text(rows[i].text, &s, &err, path, sizeof path);
        if (rc != TP_EUSAGE)
            fail_msg("'%s': rc %d, expected TP_EUSAGE; %s", rows[i].text, rc, err.msg);
        TP_EXPECT_ERR(NULL, err.msg, path, rows[i].where, rows[i].says);
    }
}

/* The hook for a mapping given to a scalar key: takes {v: N}, declines the
 * rest. */
static int map_hook(struct tp_yaml *y, const struct tp_yaml_key *k, const struct tp_yaml_node *v,
                    const char *path, void *base)
{
    (void)path;
    const struct tp_yaml_node *n = tp_yaml_lookup(v, "v", true);
    if (!n)
        return TP_YAML_DECLINE;
    double d = atof(n->text) * 100;
    memcpy((char *)base + k->off, &d, sizeof d);
    (*(int *)y->user)++;
    return 0;
}

static void hook(void **state)
{
    (void)state;
    char path[128];
    tp_error err = {0};
    struct tp_yaml y;
    struct all s;
    int calls = 0;
    open_ok(&y, "num: {v: 2}\n", path, sizeof path, &err);
    y.map_value = map_hook;
    y.user = &calls;
    TP_EQ_INT(tp_yaml_walk(&y, y.root, y.root, "", &all_tbl, &s), 0);
    TP_NEAR_REL(s.num, 200, 0);
    TP_EQ_INT(calls, 1);
    tp_yaml_close(&y);
    open_ok(&y, "num: {w: 2}\n", path, sizeof path, &err);
    y.map_value = map_hook;
    y.user = &calls;
    TP_EQ_INT(tp_yaml_walk(&y, y.root, y.root, "", &all_tbl, &s), TP_EUSAGE);
    TP_EXPECT_ERR(NULL, err.msg, path,
                  "1:6: num: ", "expected a number, e.g. 2, 0.5, 1e-4, found a mapping");
    TP_EQ_INT(calls, 1);
    tp_yaml_close(&y);
}

static void unknown_and_duplicate(void **state)
{
    (void)state;
    static const struct tp_yaml_key keys[] = {
        {.name = "management"}, {.name = "control"}, {.name = "data"}, {.name = "date"}};
    static const struct tp_yaml_table planes = {keys, 4, NULL, "plane"};
    char path[128];
    tp_error err = {0};
    struct tp_yaml y;
    open_ok(&y, "dat: 1\ncontrl: 2\nstorage: 3\ncontrol: 4\ncontrl: 5\n", path, sizeof path, &err);
    const struct tp_yaml_node *r = y.root;
    /* "dat" is one edit from both data and date: no guess */
    TP_EQ_INT(tp_yaml_unknown_key(&y, r->kid[0], "planes.dat", &planes), TP_EUSAGE);
    TP_EXPECT_ERR(NULL, err.msg, path,
                  "1:1: planes.dat: ", "unknown plane (known: management, control, data, date)");
    tp_yaml_unknown_key(&y, r->kid[2], "planes.contrl", &planes);
    TP_EXPECT_ERR(NULL, err.msg, path,
                  "2:1: planes.contrl: ", "unknown plane (did you mean control? known: ");
    tp_yaml_unknown_key(&y, r->kid[4], "planes.storage", &planes);
    TP_EXPECT_ERR(NULL, err.msg, path, "3:1: planes.storage: ", "unknown plane (known: ");
    for (size_t i = 0; i < 8; i += 2)
        TP_EQ_INT(tp_yaml_duplicate(&y, r, i, "x"), 0);
    TP_EQ_INT(tp_yaml_duplicate(&y, r, 8, "planes.contrl"), TP_EUSAGE);
    TP_EXPECT_ERR(NULL, err.msg, path,
                  "5:1: planes.contrl: ", "duplicate key (first at line 2, column 1)");
    assert_true(tp_yaml_seen(&planes, 1u << 2, "data"));
    assert_false(tp_yaml_seen(&planes, 1u << 2, "date"));
    assert_false(tp_yaml_seen(&planes, ~UINT64_C(0), "storage"));
    tp_yaml_close(&y);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(positions),
        cmocka_unit_test(empty_documents),
        cmocka_unit_test(load_errors),
        cmocka_unit_test(paths),
        cmocka_unit_test(walk_every_kind),
        cmocka_unit_test(walk_defaults),
        cmocka_unit_test(parse_values),
        cmocka_unit_test(walk_errors),
        cmocka_unit_test(hook),
        cmocka_unit_test(unknown_and_duplicate),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
