/* cli/opts.c: options declared once as rows. Each kind parsed into its
 * field at the field's width, the errors of a bad value, a value out of
 * range, a choice not offered, a missing value and an unknown option
 * (both spellings), the defaults, a subcommand's takes hook, and the
 * option lines of --help (the column, the long name that reaches it, the
 * continued lines, "{}" as the default, hidden rows, text rows), an
 * alias, and a group's rows (struct cli_cmd's group) beside the command's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <getopt.h>

#include "opts.h"
#include "tp/units.h"
#include "tp_test.h"

struct o {
    bool flag, also_flag, given_n, half;
    unsigned n;
    int small;
    uint64_t big, bytes, ns, ns0;
    const char *name, *mode;
    int mode_i;
    bool during;
    const char *json;
    bool pin;
    double scale;
    float lr;
    struct grp {
        int m;
        uint64_t ns;
    } grp;
};

static int half_check(const char *arg, void *opts, tp_error *err)
{
    struct o *o = opts;
    if (o->n % 2)
        return tp_error_set(err, TP_EUSAGE, "--n %s: an even number", arg);
    return 0;
}

static int call_parse(const char *arg, void *opts, tp_error *err)
{
    struct o *o = opts;
    if (strcmp(arg, "yes") != 0)
        return tp_error_set(err, TP_EUSAGE, "--call %s: only yes", arg);
    o->half = true;
    return 0;
}

#define F(f) CLI_AT(struct o, f)
static const char *const modes[] = {"plain", "exact", "arrival", NULL};
static const char *const only[] = {"checkpoint", NULL};

static const struct cli_opt rows[] = {
    {CLI_TEXT, .help = "usage: trainpath t [options]\n\noptions:\n"},
    {CLI_FLAG, "flag", 'f', .at = F(flag), .also = F(also_flag), .help = "a flag"},
    {CLI_UINT, "n", 'n', "N", F(n), .given = F(given_n), .lo = 2, .hi = 64, .check = half_check,
     .def = "4", .help = "a count (default {})"},
    {CLI_UINT, "small", 0, "N", F(small), .hi = 1023, .help = "an int"},
    {CLI_UINT, "big", 0, "N", F(big), .hi = UINT64_MAX, .help = "a uint64"},
    {CLI_SIZE, "bytes", 0, "SIZE", F(bytes), .def = "1M",
     .help = "a size, with a help text long enough\nto go on at the column (default {})"},
    {CLI_DURATION, "time", 'T', "DUR", F(ns), .lo = 1000000, .def = "30s", .help = "at least 1 ms"},
    {CLI_DURATION, "warmup-time", 0, "DUR", F(ns0), .help = "0 allowed"},
    {CLI_STRING, "name", 0, "NAME", F(name), .help = "a string"},
    {CLI_CHOICE, "reduce", 0, "MODE", F(mode_i), .text = F(mode), .values = modes, .def = "plain",
     .help = "{}, exact or arrival"},
    {CLI_CHOICE, "during", 0, "checkpoint", .given = F(during), .values = only,
     .help = "a choice of one"},
    {CLI_CALL, "call", 0, "X", .check = call_parse, .help = "its own parser"},
    {CLI_CLEAR, "no-pin", .at = F(pin), .help = "clears a bool"},
    {CLI_REAL, "scale", 0, "S", F(scale), .min = 1e-6, .max = 1, .def = "0.1",
     .help = "a double (default {})"},
    {CLI_REAL, "lr", 0, "X", F(lr), .min = 1e-9, .max = 1e6, .alias = "rate", .help = "a float"},
    {CLI_SEE, "more", .help = "a group's row (default {})"},
    {CLI_STRING, "hidden", 0, "X", F(name), .help = NULL},
    {CLI_TEXT, .help = "\nmore:\n"},
    {CLI_SEE, "flag", .help = "the flag again, other words"},
    {CLI_STRING, "json", 0, "FILE", F(json), .every = true, .help = "every subcommand's"},
    {CLI_END},
};

/* a group's rows, their fields in struct grp */
static const struct cli_opt grows[] = {
    {CLI_UINT, "more", 'm', "N", CLI_AT(struct grp, m), .hi = 9, .def = "1"},
    {CLI_DURATION, "deadline", 0, "DUR", CLI_AT(struct grp, ns), .lo = 1000000, .def = "2s"},
    {CLI_END},
};

static const struct cli_cmd cmd = {"t", rows, 24, .group = grows,
                                   .group_at = offsetof(struct o, grp)};
static const struct cli_cmd quoted = {"t", rows, 24, .errors = CLI_ERRORS_QUOTED};

/* parse the NULL-terminated words after "t" into *o (defaults first) */
static int parse_with(const struct cli_cmd *c, struct o *o, tp_error *err, const char *const *words)
{
    char *argv[32] = {"t"};
    int argc = 1;
    for (; words[argc - 1]; argc++)
        argv[argc] = (char *)words[argc - 1];
    *o = (struct o){0};
    tp_error_clear(err);
    int rc = cli_opts_defaults(c, o, err);
    return rc ? rc : cli_opts_parse(c, argc, argv, o, err);
}

#define PARSE(o, err, ...) parse_with(&cmd, o, err, (const char *const[]){__VA_ARGS__, NULL})

static void test_defaults(void **state)
{
    (void)state;
    struct o o;
    tp_error err;
    TP_EQ_INT(PARSE(&o, &err, "x"), 0);
    TP_EQ_INT(o.n, 4);
    assert_false(o.given_n); /* a default is not given */
    TP_EQ_U64(o.bytes, 1u << 20);
    TP_EQ_U64(o.ns, 30000000000ull);
    TP_EQ_STR(o.mode, "plain");
    TP_EQ_INT(o.mode_i, 0);
    TP_EQ_INT(optind, 1); /* the operand "x" */
}

static void test_each_kind(void **state)
{
    (void)state;
    struct o o;
    tp_error err;
    TP_EQ_INT(PARSE(&o, &err, "-f", "--n=8", "--small", "1023", "--big", "18446744073709551615",
                    "--bytes", "4K", "-T", "1h30m", "--warmup-time", "0", "--name", "a b",
                    "--reduce", "arrival", "--during", "checkpoint", "--call", "yes", "HOST"),
              0);
    assert_true(o.flag);
    assert_true(o.also_flag);
    TP_EQ_INT(o.n, 8);
    assert_true(o.given_n);
    TP_EQ_INT(o.small, 1023);
    TP_EQ_U64(o.big, UINT64_MAX);
    TP_EQ_U64(o.bytes, 4096);
    TP_EQ_U64(o.ns, 5400000000000ull);
    TP_EQ_U64(o.ns0, 0);
    TP_EQ_STR(o.name, "a b");
    TP_EQ_INT(o.mode_i, 2);
    TP_EQ_STR(o.mode, "arrival");
    assert_true(o.during);
    assert_true(o.half);
    TP_EQ_INT(optind, 21);
    /* the neighbours of a 32-bit field are left alone */
    TP_EQ_INT(PARSE(&o, &err, "--small", "7"), 0);
    TP_EQ_INT(o.small, 7);
    TP_EQ_INT(o.n, 4);
}

static void test_real_clear_alias_group(void **state)
{
    (void)state;
    struct o o;
    tp_error err;
    TP_EQ_INT(PARSE(&o, &err, "--no-pin"), 0);
    assert_false(o.pin);
    TP_NEAR_REL(o.scale, 0.1, 0);
    TP_EQ_INT(PARSE(&o, &err, "--scale", "1e-3", "--rate", "0.5", "-m", "7"), 0);
    TP_NEAR_REL(o.scale, 1e-3, 0);
    TP_NEAR_REL(o.lr, 0.5, 0);
    TP_EQ_INT(o.grp.m, 7);
    TP_EQ_U64(o.grp.ns, 2000000000ull); /* a group row's default */
    TP_EQ_INT(PARSE(&o, &err, "--more", "3", "--lr", "2", "--deadline", "1m"), 0);
    TP_EQ_INT(o.grp.m, 3);
    TP_EQ_U64(o.grp.ns, 60000000000ull);
    TP_NEAR_REL(o.lr, 2, 0);
    assert_null(o.name); /* nothing written outside the group's struct */
    TP_EQ_INT(PARSE(&o, &err, "--deadline", "0"), TP_EUSAGE);
    TP_EQ_STR(err.msg, "--deadline: '0' is below 1 ms");
    TP_EQ_INT(PARSE(&o, &err, "--scale", "2"), TP_EUSAGE);
    TP_EQ_STR(err.msg, "--scale 2: a number in [1e-06, 1]");
    TP_EQ_INT(PARSE(&o, &err, "--scale", "0.5x"), TP_EUSAGE);
    TP_EQ_STR(err.msg, "--scale 0.5x: a number in [1e-06, 1]");
    /* an alias is spelled by the row's name in its errors */
    TP_EQ_INT(PARSE(&o, &err, "--rate", "0"), TP_EUSAGE);
    TP_EQ_STR(err.msg, "--lr 0: a number in [1e-09, 1e+06]");
    TP_EQ_INT(PARSE(&o, &err, "--more", "10"), TP_EUSAGE);
    TP_EQ_STR(err.msg, "--more: '10' is out of range 0..9");
    TP_EQ_INT(PARSE(&o, &err, "-m"), TP_EUSAGE);
    TP_EQ_STR(err.msg, "-m: needs a value");
}

static void test_bad_values(void **state)
{
    (void)state;
    struct o o;
    tp_error err;
    TP_EQ_INT(PARSE(&o, &err, "--n", "65"), TP_EUSAGE);
    TP_EQ_STR(err.msg, "--n: '65' is out of range 2..64");
    TP_EQ_INT(PARSE(&o, &err, "-n", "1"), TP_EUSAGE);
    TP_EQ_STR(err.msg, "--n: '1' is out of range 2..64");
    TP_EQ_INT(PARSE(&o, &err, "--n", "x"), TP_EUSAGE);
    TP_EQ_STR(err.msg, "--n: cannot parse 'x' as a non-negative integer");
    TP_EQ_INT(PARSE(&o, &err, "--n", "5"), TP_EUSAGE); /* the row's check */
    TP_EQ_STR(err.msg, "--n 5: an even number");
    TP_EQ_INT(PARSE(&o, &err, "--small", "1024"), TP_EUSAGE);
    TP_EQ_STR(err.msg, "--small: '1024' is out of range 0..1023");
    TP_EQ_INT(PARSE(&o, &err, "--bytes", "4KB"), TP_EUSAGE);
    TP_HAS(err.msg, "--bytes");
    TP_EQ_INT(PARSE(&o, &err, "--time", "0"), TP_EUSAGE);
    TP_EQ_STR(err.msg, "--time: '0' is below 1 ms");
    TP_EQ_INT(PARSE(&o, &err, "--reduce", "fast"), TP_EUSAGE);
    TP_EQ_STR(err.msg, "--reduce fast: plain, exact or arrival");
    TP_EQ_INT(PARSE(&o, &err, "--during", "x"), TP_EUSAGE);
    TP_EQ_STR(err.msg, "--during x: only 'checkpoint'");
    TP_EQ_INT(PARSE(&o, &err, "--call", "no"), TP_EUSAGE);
    TP_EQ_STR(err.msg, "--call no: only yes");
    /* the first error stops the parse: what came before is kept */
    TP_EQ_INT(PARSE(&o, &err, "--name", "a", "--n", "0", "--json", "j"), TP_EUSAGE);
    TP_EQ_STR(o.name, "a");
    assert_null(o.json);
}

static void test_getopt_errors(void **state)
{
    (void)state;
    struct o o;
    tp_error err;
    TP_EQ_INT(PARSE(&o, &err, "--bogus"), TP_EUSAGE);
    TP_EQ_STR(err.msg, "--bogus: unknown option (see trainpath t --help)");
    TP_EQ_INT(PARSE(&o, &err, "--name"), TP_EUSAGE);
    TP_EQ_STR(err.msg, "--name: needs a value");
    TP_EQ_INT(PARSE(&o, &err, "-T"), TP_EUSAGE);
    TP_EQ_STR(err.msg, "-T: needs a value");
    /* a hidden row is an option all the same; a SEE row is not another */
    TP_EQ_INT(PARSE(&o, &err, "--hidden", "h"), 0);
    TP_EQ_STR(o.name, "h");
    const char *const w1[] = {"--bogus", NULL}, *const w2[] = {"--name", NULL};
    TP_EQ_INT(parse_with(&quoted, &o, &err, w1), TP_EUSAGE);
    TP_EQ_STR(err.msg, "unknown option '--bogus' (see trainpath t --help)");
    TP_EQ_INT(parse_with(&quoted, &o, &err, w2), TP_EUSAGE);
    TP_EQ_STR(err.msg, "option '--name' needs a value");
}

static int no_time(const struct cli_opt *row, const void *opts, tp_error *err)
{
    (void)opts;
    if (strcmp(row->name, "time") == 0)
        return tp_error_set(err, TP_EUSAGE, "--%s: not an option of t x", row->name);
    return 0;
}

static void test_takes(void **state)
{
    (void)state;
    const struct cli_cmd sub = {"t", rows, 24, .takes = no_time};
    struct o o;
    tp_error err;
    const char *const w1[] = {"--json", "j", "-n", "6", NULL}, *const w2[] = {"-T", "1s", NULL};
    TP_EQ_INT(parse_with(&sub, &o, &err, w1), 0);
    TP_EQ_INT(parse_with(&sub, &o, &err, w2), TP_EUSAGE);
    TP_EQ_STR(err.msg, "--time: not an option of t x");
    assert_non_null(cli_opts_find(&cmd, "during"));
    assert_null(cli_opts_find(&cmd, "help"));
}

static void test_bad_default(void **state)
{
    (void)state;
    const struct cli_opt bad_rows[] = {
        {CLI_UINT, "n", 0, "N", F(n), .hi = 9, .def = "10", .help = "x"},
        {CLI_END},
    };
    const struct cli_cmd bad = {"t", bad_rows, 24, .takes = NULL};
    struct o o = {0};
    tp_error err = {0};
    TP_EQ_INT(cli_opts_defaults(&bad, &o, &err), TP_EUSAGE);
    TP_EQ_STR(err.msg, "trainpath t --n: bad default '10'");
}

static void test_help(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cli_opts_usage(&cmd, f);
    fclose(f);
    TP_EQ_STR(buf, "usage: trainpath t [options]\n"
                   "\n"
                   "options:\n"
                   "  -f, --flag            a flag\n"
                   "  -n, --n N             a count (default 4)\n"
                   "      --small N         an int\n"
                   "      --big N           a uint64\n"
                   "      --bytes SIZE      a size, with a help text long enough\n"
                   "                        to go on at the column (default 1M)\n"
                   "  -T, --time DUR        at least 1 ms\n"
                   "      --warmup-time DUR 0 allowed\n"
                   "      --name NAME       a string\n"
                   "      --reduce MODE     plain, exact or arrival\n"
                   "      --during checkpoint  a choice of one\n"
                   "      --call X          its own parser\n"
                   "      --no-pin          clears a bool\n"
                   "      --scale S         a double (default 0.1)\n"
                   "      --lr X            a float\n"
                   "  -m, --more N          a group's row (default 1)\n"
                   "\n"
                   "more:\n"
                   "  -f, --flag            the flag again, other words\n"
                   "      --json FILE       every subcommand's\n");
    free(buf);
    /* --help: the same on stdout, and 1 */
    struct o o;
    tp_error err;
    TP_EQ_INT(PARSE(&o, &err, "--help"), 1);
    TP_EQ_INT(PARSE(&o, &err, "-h"), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),   cmocka_unit_test(test_each_kind),
        cmocka_unit_test(test_bad_values), cmocka_unit_test(test_getopt_errors),
        cmocka_unit_test(test_takes),      cmocka_unit_test(test_bad_default),
        cmocka_unit_test(test_help),       cmocka_unit_test(test_real_clear_alias_group),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
