/* The thin command layer: argv -> options -> one library call -> output and
 * exit code. Internal to cli/. */
#ifndef TP_CLI_H
#define TP_CLI_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "tp/error.h"
#include "tp/file.h"
#include "tp/group.h"
#include "opts.h"

/* Each command returns the process exit status. argv[0] is the command name. */
int cmd_net(int argc, char **argv);
int cmd_coll(int argc, char **argv);
int cmd_io(int argc, char **argv);
int cmd_step(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_sdc(int argc, char **argv);
int cmd_workload(int argc, char **argv);

/* Print "trainpath: error: MSG" once, as one line of safe text
 * (tp/text.h: a peer's or a file's escape sequences and newlines made
 * '?'), and return the exit code for err. */
int cli_fail(const tp_error *err);

/* The value of the last --json (or --json=FILE) in argv[1..argc), before
 * any "--"; NULL when there is none. For the usage error that getopt met
 * before it reached --json. */
const char *cli_json_arg(int argc, char **argv);

/* A run refused before it started: cli_fail(err), then, when json names a
 * usable --json FILE (cli_refusal_path_ok) and err is TP_EUSAGE, a failed
 * result document of command ("coll", "io commit") whose status says why,
 * as every command writes one. Returns cli_fail's exit code. */
int cli_refuse(const char *command, const char *json, const tp_error *err);

/* Whether a refusal may write its failed document at json: a usable path
 * (tp_result_path_ok) that holds nothing yet, an earlier result document,
 * or no regular file. Any other file may be an input that the refusal came
 * before reading (`plan --bogus P --json P`), and is left as it is. */
bool cli_refusal_path_ok(const char *json);

/* An output that is an input (tp_file_distinct: the same file, through
 * links, "-" as standard input or output), refused before anything is
 * written: the message printed (cli_fail) and its exit code (2) returned,
 * with no document written anywhere, since --json may be the very input.
 * 0 when every output is distinct. */
int cli_distinct(const struct tp_file_arg *outs, size_t nout, const struct tp_file_arg *ins,
                 size_t nin);

/* The check of an --engine row (opts.h) of io and step: the engine's name
 * (tp_ioq_engine_check). */
int cli_engine_check(const char *arg, void *opts, tp_error *err);

/* Where a command's table for people goes: stderr when the document goes
 * to stdout (--json -), so that stdout carries only the document; else
 * stdout. */
FILE *cli_table_out(const char *json);

/* Whether the command shows its progress line (tp/progress.h): stderr is
 * a terminal (tp_progress_terminal), not quiet, and the document does not
 * go to stdout (json is not "-"). The one rule of every command. */
bool cli_progress(bool quiet, const char *json);


/* ---- the group options of coll and step (src/cli/group_opts.c) ---- */

/* The rows of the group options (opts.h; their fields those of struct
 * tp_group_opts): -n/--ranks, --launcher, --key-file, --transport,
 * -P/--provider, --intra, --shm-stores, --bind, --timeout, --json and
 * --gpu, with their defaults; a command shows them in its --help by
 * CLI_SEE rows, in its own words. --busy-poll, which only coll takes, is
 * coll's row. */
extern const struct cli_opt cli_group_rows[];

/* The defaults of a group's options: its rows' (2 local ranks, 30 s
 * timeout) and the GPU by local rank. */
void cli_group_init(struct tp_group_opts *g);

/* After the command's own checks: -P implies --transport ofi unless
 * --transport says otherwise; the values of --intra, --shm-stores,
 * --transport, --provider and --launcher; then the launcher in use
 * (launcher_name).
 * TP_EUSAGE naming the option. */
int cli_group_check(struct tp_group_opts *g, tp_error *err);

/* --json and trace (--trace, or NULL) against --key-file, workload
 * (--workload, or NULL) and each other: cli_distinct's. */
int cli_group_distinct(const struct tp_group_opts *g, const char *trace, const char *workload);

/* On the process that will be rank 0: cli_json_path_ok for --json. */
int cli_group_json_ok(const struct tp_group_opts *g, tp_error *err);

/* The --json FILE of a group command refused before its ranks start
 * (cli_refuse): g->json, or the one in argv when parsing stopped before
 * it; NULL on a process that will not be rank 0 (only rank 0 writes the
 * document) or when there is none. */
const char *cli_group_json(const struct tp_group_opts *g, int argc, char **argv);

/* The exit status of a group command's run: 0 when rc is; else, where the
 * process speaks for the run (tp_group_main), err printed once and its
 * code; elsewhere rc's code (that rank has logged its error). */
int cli_group_exit(int rc, bool speak, const tp_error *err);

#endif
