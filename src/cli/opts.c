/* Options declared once (opts.h): getopt_long's tables built from a
 * command's rows, each value parsed by its kind with the parsers of
 * tp/units.h (so every range error is theirs, naming "--option"), and the
 * option lines of --help written from the same rows. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"
#include "tp/units.h"

/* getopt_long's val of row i of a long-only option: above every letter */
#define ROW_VAL 256
#define MAX_ROWS 128

static bool is_option(const struct cli_opt *o)
{
    return o->kind != CLI_TEXT && o->kind != CLI_SEE;
}

static bool takes_value(const struct cli_opt *o)
{
    return o->kind != CLI_FLAG && o->kind != CLI_CLEAR;
}

static void *field(void *opts, struct cli_field f)
{
    return f.at ? (char *)opts + f.at - 1 : NULL;
}

/* v into the integer field f, at its width (a bool, unsigned or int,
 * uint64_t) */
static void put_uint(void *opts, struct cli_field f, uint64_t v)
{
    void *p = field(opts, f);
    if (!p)
        return;
    if (f.size == 1) {
        *(bool *)p = v != 0;
    } else if (f.size == sizeof(uint32_t)) {
        uint32_t u = (uint32_t)v;
        memcpy(p, &u, sizeof u);
    } else {
        memcpy(p, &v, sizeof v);
    }
}

static void put_text(void *opts, struct cli_field f, const char *s)
{
    void *p = field(opts, f);
    if (p)
        memcpy(p, &s, sizeof s);
}

/* d into the double or float field f */
static void put_real(void *opts, struct cli_field f, double d)
{
    void *p = field(opts, f);
    if (p && f.size == sizeof(float)) {
        float x = (float)d;
        memcpy(p, &x, sizeof x);
    } else if (p) {
        memcpy(p, &d, sizeof d);
    }
}

static int parse_real(const char *s, const char *dname, double lo, double hi, double *out,
                      tp_error *err)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !(v >= lo && v <= hi))
        return tp_error_set(err, TP_EUSAGE, "%s %s: a number in [%g, %g]", dname, s, lo, hi);
    *out = v;
    return 0;
}

/* "--sync ARG: fdatasync, fsync or dsync"; one value: "--during ARG: only
 * 'checkpoint'" */
static int bad_choice(const char *dname, const char *arg, const char *const *values, tp_error *err)
{
    if (!values[1])
        return tp_error_set(err, TP_EUSAGE, "%s %s: only '%s'", dname, arg, values[0]);
    char list[256] = "";
    size_t n = 0;
    for (size_t i = 0; values[i] && n < sizeof list; i++)
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%s",
                              i == 0          ? ""
                              : values[i + 1] ? ", "
                                              : " or ",
                              values[i]);
    return tp_error_set(err, TP_EUSAGE, "%s %s: %s", dname, arg, list);
}

/* The value of row o (arg; NULL for a flag) into opts; a default (dflt)
 * neither marks the row given nor runs its check. */
static int take(const struct cli_opt *o, const char *arg, bool dflt, void *opts, tp_error *err)
{
    char dname[80];
    snprintf(dname, sizeof dname, "--%s", o->name);
    uint64_t v = o->kind != CLI_CLEAR;
    double d = 0;
    int rc = 0;
    switch (o->kind) {
    case CLI_REAL: rc = parse_real(arg, dname, o->min, o->max, &d, err); break;
    case CLI_UINT: rc = tp_parse_u64(arg, dname, o->lo, o->hi, &v, err); break;
    case CLI_SIZE: rc = tp_parse_size(arg, dname, &v, err); break;
    case CLI_DURATION:
        rc = o->lo ? tp_parse_duration_min(arg, dname, o->lo, &v, err)
                   : tp_parse_duration(arg, dname, &v, err);
        break;
    case CLI_CHOICE:
        for (v = 0; o->values[v] && strcmp(o->values[v], arg) != 0; v++)
            ;
        if (!o->values[v])
            rc = bad_choice(dname, arg, o->values, err);
        break;
    default: break;
    }
    if (rc)
        return rc;
    if (o->kind == CLI_STRING) {
        put_text(opts, o->at, arg);
        put_text(opts, o->also, arg);
    } else if (o->kind == CLI_REAL) {
        put_real(opts, o->at, d);
        put_real(opts, o->also, d);
    } else if (o->kind != CLI_CALL) {
        put_uint(opts, o->at, v);
        put_uint(opts, o->also, v);
    }
    put_text(opts, o->text, arg);
    if (dflt)
        return 0;
    put_uint(opts, o->given, 1);
    return o->check ? o->check(arg, opts, err) : 0;
}

/* cmd's table t: its own rows (0) or the group's (1), and where in opts
 * the table's fields are */
static const struct cli_opt *table(const struct cli_cmd *cmd, int t)
{
    return t == 0 ? cmd->opts : cmd->group;
}

static void *base(const struct cli_cmd *cmd, int t, void *opts)
{
    return t == 0 ? opts : (char *)opts + cmd->group_at;
}

int cli_opts_defaults(const struct cli_cmd *cmd, void *opts, tp_error *err)
{
    for (int t = 0; t < 2; t++) {
        for (const struct cli_opt *o = table(cmd, t); o && o->kind != CLI_END; o++) {
            if (!is_option(o) || !o->def)
                continue;
            void *b = base(cmd, t, opts);
            int rc = o->kind == CLI_CALL ? o->check(o->def, b, err) : take(o, o->def, true, b, err);
            if (rc != 0)
                return tp_error_set(err, TP_EUSAGE, "trainpath %s --%s: bad default '%s'",
                                    cmd->name, o->name, o->def);
        }
    }
    return 0;
}

const struct cli_opt *cli_opts_find(const struct cli_cmd *cmd, const char *name)
{
    for (int t = 0; t < 2; t++)
        for (const struct cli_opt *o = table(cmd, t); o && o->kind != CLI_END; o++)
            if (is_option(o) && strcmp(o->name, name) == 0)
                return o;
    return NULL;
}

static int unknown(const struct cli_cmd *cmd, const char *what, tp_error *err)
{
    if (cmd->errors == CLI_ERRORS_QUOTED)
        return tp_error_set(err, TP_EUSAGE, "unknown option '%s' (see trainpath %s --help)", what,
                            cmd->name);
    if (cmd->errors == CLI_ERRORS_BARE)
        return tp_error_set(err, TP_EUSAGE, "unknown option '%s'", what);
    return tp_error_set(err, TP_EUSAGE, "%s: unknown option (see trainpath %s --help)", what,
                        cmd->name);
}

static int no_value(const struct cli_cmd *cmd, const char *what, tp_error *err)
{
    if (cmd->errors == CLI_ERRORS_QUOTED)
        return tp_error_set(err, TP_EUSAGE, "option '%s' needs a value", what);
    if (cmd->errors == CLI_ERRORS_BARE)
        return tp_error_set(err, TP_EUSAGE, "%s needs a value", what);
    return tp_error_set(err, TP_EUSAGE, "%s: needs a value", what);
}

/* getopt_long's tables of cmd's rows: a long option each (its letter, or
 * ROW_VAL + MAX_ROWS * table + index, as val; an alias the same), the
 * letters in shorts; --help and -h */
static int getopt_tables(const struct cli_cmd *cmd, struct option *longs, char *shorts,
                         tp_error *err)
{
    size_t n = 0, ns = 0;
    shorts[ns++] = ':';
    for (int t = 0; t < 2; t++) {
        const struct cli_opt *rows = table(cmd, t);
        for (size_t i = 0; rows && rows[i].kind != CLI_END; i++) {
            if (i >= MAX_ROWS)
                return tp_error_set(err, TP_EUSAGE, "trainpath %s: over %d rows", cmd->name,
                                    MAX_ROWS);
            if (!is_option(&rows[i]))
                continue;
            int key = rows[i].key ? rows[i].key : ROW_VAL + t * MAX_ROWS + (int)i;
            int has_arg = takes_value(&rows[i]) ? required_argument : no_argument;
            longs[n++] = (struct option){rows[i].name, has_arg, NULL, key};
            if (rows[i].alias)
                longs[n++] = (struct option){rows[i].alias, has_arg, NULL, key};
            if (rows[i].key) {
                shorts[ns++] = (char)rows[i].key;
                if (takes_value(&rows[i]))
                    shorts[ns++] = ':';
            }
        }
    }
    longs[n++] = (struct option){"help", no_argument, NULL, 'h'};
    longs[n] = (struct option){NULL, 0, NULL, 0};
    shorts[ns++] = 'h';
    shorts[ns] = 0;
    return 0;
}

/* The row getopt_long answered opt for, and its table (*t); NULL for an
 * unknown option */
static const struct cli_opt *row_of(const struct cli_cmd *cmd, int opt, int *t)
{
    if (opt >= ROW_VAL && opt < ROW_VAL + 2 * MAX_ROWS) {
        *t = (opt - ROW_VAL) / MAX_ROWS;
        return &table(cmd, *t)[(opt - ROW_VAL) % MAX_ROWS];
    }
    for (*t = 0; *t < 2 && opt != '?'; (*t)++)
        for (const struct cli_opt *o = table(cmd, *t); o && o->kind != CLI_END; o++)
            if (is_option(o) && o->key == opt)
                return o;
    return NULL;
}

int cli_opts_parse(const struct cli_cmd *cmd, int argc, char **argv, void *opts, tp_error *err)
{
    struct option longs[4 * MAX_ROWS + 2];
    char shorts[6 * MAX_ROWS + 4];
    int rc = getopt_tables(cmd, longs, shorts, err);
    if (rc)
        return rc;
    int opt, t;
    opterr = 0;
    optind = 1;
    while ((opt = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        if (opt == 'h') {
            cli_opts_usage(cmd, stdout);
            return 1;
        }
        if (opt == ':')
            return no_value(cmd, argv[optind - 1], err);
        const struct cli_opt *o = row_of(cmd, opt, &t);
        if (!o)
            return unknown(cmd, argv[optind - 1], err);
        rc = !o->every && cmd->takes ? cmd->takes(o, opts, err) : 0;
        if (rc == 0)
            rc = take(o, optarg, false, base(cmd, t, opts), err);
        if (rc)
            return rc;
    }
    return 0;
}

/* "  -p, --port N" or "      --rma" (o's), the help (h's) from col, each
 * of its lines continued at col, "{}" the default */
static void usage_line(const struct cli_opt *o, const struct cli_opt *h, int col, FILE *f)
{
    int n = o->key ? fprintf(f, "  -%c, --%s", o->key, o->name) : fprintf(f, "      --%s", o->name);
    if (o->arg)
        n += fprintf(f, " %s", o->arg);
    fprintf(f, "%*s", n < col ? col - n : 2, "");
    for (const char *s = h->help; *s; s++) {
        if (*s == '\n') {
            fprintf(f, "\n%*s", col, "");
        } else if (s[0] == '{' && s[1] == '}' && o->def) {
            fputs(o->def, f);
            s++;
        } else {
            fputc(*s, f);
        }
    }
    fputc('\n', f);
}

void cli_opts_usage(const struct cli_cmd *cmd, FILE *f)
{
    for (const struct cli_opt *o = cmd->opts; o->kind != CLI_END; o++) {
        const struct cli_opt *row = o->kind == CLI_SEE ? cli_opts_find(cmd, o->name) : o;
        if (o->kind == CLI_TEXT)
            fputs(o->help, f);
        else if (o->help)
            usage_line(row ? row : o, o, cmd->help_col, f);
    }
}
