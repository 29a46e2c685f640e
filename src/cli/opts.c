/* Options declared once (opts.h): getopt_long's tables built from a
 * command's rows, each value parsed by its kind with the parsers of
 * tp/units.h (so every range error is theirs, naming "--option"), and the
 * option lines of --help written from the same rows. */
#include <getopt.h>
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
    return o->kind != CLI_FLAG;
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
    uint64_t v = 1;
    int rc = 0;
    switch (o->kind) {
    case CLI_FLAG: break;
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

int cli_opts_defaults(const struct cli_cmd *cmd, void *opts, tp_error *err)
{
    for (const struct cli_opt *o = cmd->opts; o->kind != CLI_END; o++) {
        if (!is_option(o) || !o->def)
            continue;
        int rc =
            o->kind == CLI_CALL ? o->check(o->def, opts, err) : take(o, o->def, true, opts, err);
        if (rc != 0)
            return tp_error_set(err, TP_EUSAGE, "trainpath %s --%s: bad default '%s'", cmd->name,
                                o->name, o->def);
    }
    return 0;
}

const struct cli_opt *cli_opts_find(const struct cli_cmd *cmd, const char *name)
{
    for (const struct cli_opt *o = cmd->opts; o->kind != CLI_END; o++)
        if (is_option(o) && strcmp(o->name, name) == 0)
            return o;
    return NULL;
}

static int unknown(const struct cli_cmd *cmd, const char *what, tp_error *err)
{
    if (cmd->quoted_errors)
        return tp_error_set(err, TP_EUSAGE, "unknown option '%s' (see trainpath %s --help)", what,
                            cmd->name);
    return tp_error_set(err, TP_EUSAGE, "%s: unknown option (see trainpath %s --help)", what,
                        cmd->name);
}

static int no_value(const struct cli_cmd *cmd, const char *what, tp_error *err)
{
    if (cmd->quoted_errors)
        return tp_error_set(err, TP_EUSAGE, "option '%s' needs a value", what);
    return tp_error_set(err, TP_EUSAGE, "%s: needs a value", what);
}

/* getopt_long's tables of cmd's rows: a long option each (its letter, or
 * ROW_VAL + its index, as val), the letters in shorts; --help and -h
 * added */
static int getopt_tables(const struct cli_cmd *cmd, struct option *longs, char *shorts,
                         tp_error *err)
{
    const struct cli_opt *rows = cmd->opts;
    size_t n = 0, ns = 0;
    shorts[ns++] = ':';
    for (size_t i = 0; rows[i].kind != CLI_END; i++) {
        if (!is_option(&rows[i]))
            continue;
        if (n == MAX_ROWS)
            return tp_error_set(err, TP_EUSAGE, "trainpath %s: over %d options", cmd->name,
                                MAX_ROWS);
        int key = rows[i].key ? rows[i].key : ROW_VAL + (int)i;
        longs[n++] = (struct option){
            rows[i].name, takes_value(&rows[i]) ? required_argument : no_argument, NULL, key};
        if (rows[i].key) {
            shorts[ns++] = (char)rows[i].key;
            if (takes_value(&rows[i]))
                shorts[ns++] = ':';
        }
    }
    longs[n++] = (struct option){"help", no_argument, NULL, 'h'};
    longs[n] = (struct option){NULL, 0, NULL, 0};
    shorts[ns++] = 'h';
    shorts[ns] = 0;
    return 0;
}

int cli_opts_parse(const struct cli_cmd *cmd, int argc, char **argv, void *opts, tp_error *err)
{
    struct option longs[MAX_ROWS + 2];
    char shorts[2 * MAX_ROWS + 4];
    const struct cli_opt *rows = cmd->opts;
    int rc = getopt_tables(cmd, longs, shorts, err);
    if (rc)
        return rc;
    int opt;
    opterr = 0;
    optind = 1;
    while ((opt = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        if (opt == 'h') {
            cli_opts_usage(cmd, stdout);
            return 1;
        }
        if (opt == ':')
            return no_value(cmd, argv[optind - 1], err);
        const struct cli_opt *o = NULL;
        if (opt >= ROW_VAL)
            o = &rows[opt - ROW_VAL];
        else if (opt != '?')
            for (o = rows; o->kind != CLI_END && !(is_option(o) && o->key == opt); o++)
                ;
        if (!o || o->kind == CLI_END)
            return unknown(cmd, argv[optind - 1], err);
        rc = !o->every && cmd->takes ? cmd->takes(o, opts, err) : 0;
        if (rc == 0)
            rc = take(o, optarg, false, opts, err);
        if (rc)
            return rc;
    }
    return 0;
}

/* "  -p, --port N" or "      --rma", the help from col, each of its lines
 * continued at col, "{}" the default */
static void usage_line(const struct cli_opt *o, int col, FILE *f)
{
    int n = o->key ? fprintf(f, "  -%c, --%s", o->key, o->name) : fprintf(f, "      --%s", o->name);
    if (o->arg)
        n += fprintf(f, " %s", o->arg);
    fprintf(f, "%*s", n < col ? col - n : 2, "");
    for (const char *s = o->help; *s; s++) {
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
        if (o->kind == CLI_TEXT)
            fputs(o->help, f);
        else if (o->help)
            usage_line(o, cmd->help_col, f);
    }
}
