/* A command's options declared once, as rows of a table (as fio's
 * struct fio_option): the long name, the short letter, the kind of value,
 * the fields it writes (offsetof into the command's own options struct),
 * its range, the values a choice allows and the help text. getopt_long's
 * tables, the parsing, the range errors and the option lines of --help are
 * derived from the rows; the man pages and the shell completion read
 * --help, so they follow. Internal to cli/. */
#ifndef TP_CLI_OPTS_H
#define TP_CLI_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tp/error.h"

/* What a row takes and where it goes. A row's fields are "at" (the value),
 * "also" (the same value again: an option that two structs read), "given"
 * (a bool set when the option appears) and "text" (the argument as typed,
 * a const char *). */
enum cli_kind {
    CLI_END = 0,  /* ends the table */
    CLI_FLAG,     /* no value: at and also become true */
    CLI_CLEAR,    /* no value: at and also become false ("--no-pin") */
    CLI_UINT,     /* a whole number in [lo, hi] (tp_parse_u64), into an integer field of any
                     width */
    CLI_REAL,     /* a number in [min, max] (strtod), into a double or a float */
    CLI_SIZE,     /* a size (tp_parse_size): bytes into a uint64_t */
    CLI_DURATION, /* a duration (tp_parse_duration; at least lo ns when lo is not 0, as
                     tp_parse_duration_min): ns into a uint64_t */
    CLI_STRING,   /* the argument as typed, into a const char * */
    CLI_CHOICE,   /* one of values: its index into the integer field at, when there is one */
    CLI_CALL,     /* a value that the row's check alone parses and stores */
    CLI_TEXT,     /* no option: help, printed as it is where the row stands */
    CLI_SEE,      /* no option: the --help entry, with this row's help, of the option of
                     that name (a row shown twice, or one of struct cli_cmd's group) */
};

/* A field of the options struct: its offset plus one (0: none) and size. */
struct cli_field {
    size_t at;
    size_t size;
};

/* The field f of the options struct T, for a row's at, also, given or text. */
#define CLI_AT(T, f) ((struct cli_field){offsetof(T, f) + 1, sizeof(((T *)0)->f)})

struct cli_opt {
    enum cli_kind kind;
    const char *name; /* the long name, without the dashes */
    int key;          /* the short letter, or 0 */
    const char *arg;  /* --help's name for the value ("N", "SIZE"); NULL for a flag */
    struct cli_field at, also, given, text;
    uint64_t lo, hi;           /* CLI_UINT's range; CLI_DURATION's least (lo) */
    double min, max;           /* CLI_REAL's range */
    const char *const *values; /* CLI_CHOICE's, NULL-terminated */
    const char *def; /* the default, as it would be typed (cli_opts_defaults); "{}" in help */
    /* After the value is stored (CLI_CALL: instead): further checks, or
     * the parsing of a value of its own. 0 or TP_EUSAGE naming the option;
     * opts is the command's options struct. */
    int (*check)(const char *arg, void *opts, tp_error *err);
    /* The help text after the option's name; '\n' continues at the help
     * column, "{}" stands for def. NULL: the option has no line in --help.
     * CLI_TEXT: the text, printed as it is. */
    const char *help;
    bool every;        /* every subcommand takes it: struct cli_cmd's takes is not asked */
    const char *alias; /* another long name of the same option, or NULL; not in --help */
};

/* How a command spells the two errors of getopt: "-p: needs a value" and
 * "--x: unknown option (see trainpath io --help)" (io, step); net's
 * "option '-p' needs a value" and "unknown option '--x' (see trainpath net
 * --help)"; coll's "-p needs a value" and "unknown option '--x'". */
enum cli_errors { CLI_ERRORS_COLON = 0, CLI_ERRORS_QUOTED, CLI_ERRORS_BARE };

/* A command: its rows and how its --help and errors are spelled. */
struct cli_cmd {
    const char *name; /* "io": in "(see trainpath io --help)" */
    const struct cli_opt *opts;
    int help_col; /* the column of the help text in --help */
    enum cli_errors errors;
    /* Whether the subcommand in opts takes the option of row o: 0, or
     * TP_EUSAGE naming it; asked before its value is read. NULL: all. */
    int (*takes)(const struct cli_opt *o, const void *opts, tp_error *err);
    /* Rows of options shared with other commands (cli_group_rows), their
     * fields at group_at in opts; parsed as the command's own, shown in
     * --help where a CLI_SEE row names them. NULL: none. */
    const struct cli_opt *group;
    size_t group_at;
};

/* Each row's def into opts, parsed as a typed value would be (its fields
 * at, also and text; not given, and no check; a CLI_CALL row's check
 * parses it). 0, or TP_EUSAGE naming a
 * default that does not parse (a bug of the table). */
int cli_opts_defaults(const struct cli_cmd *cmd, void *opts, tp_error *err);

/* Parse argv[1..argc) (argv[0] is the command or subcommand) into opts by
 * cmd's rows, in order, stopping at the first error; -h and --help print
 * cli_opts_usage on stdout. Returns 0 with optind at the first operand, 1
 * after --help, or TP_EUSAGE naming the option (a value out of range, not
 * one of a choice's values, missing; an unknown option). */
int cli_opts_parse(const struct cli_cmd *cmd, int argc, char **argv, void *opts, tp_error *err);

/* cmd's --help on f: each row in order, an option as its line
 * ("  -p, --port N" or "      --rma", the help from cmd->help_col, or two
 * spaces further when the name reaches it; each '\n' of the help continues
 * at the column, "{}" is the row's def), a CLI_TEXT row as it is. */
void cli_opts_usage(const struct cli_cmd *cmd, FILE *f);

/* The row of cmd or of its group named name (a long name), or NULL. */
const struct cli_opt *cli_opts_find(const struct cli_cmd *cmd, const char *name);

#endif
