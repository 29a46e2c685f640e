/* The thin command layer: argv -> options -> one library call -> output and
 * exit code. Internal to cli/. */
#ifndef TP_CLI_H
#define TP_CLI_H

#include <jansson.h>
#include <stdbool.h>

#include "tp/error.h"
#include "tp/group.h"

/* Each command returns the process exit status. argv[0] is the command name. */
int cmd_net(int argc, char **argv);
int cmd_coll(int argc, char **argv);
int cmd_io(int argc, char **argv);
int cmd_step(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_validate(int argc, char **argv);

/* The rank launcher: tp_boot_detect(given) (the --launcher given, else the
 * detected one). Kept while commands still call it. */
const char *cli_launcher(const char *given);

/* Whether this process will be rank 0 of its group, the one that writes the
 * result document: tp_boot_will_be_rank0(launcher). Kept while commands
 * still call it. */
bool cli_rank0(const char *launcher);

/* Print "trainpath: error: MSG" once and return the exit code for err. */
int cli_fail(const tp_error *err);

/* The folder of a --json FILE must exist and be writable before the run
 * starts, so a measurement is never lost to a typo or a read-only results
 * folder. 0 when it is (or FILE is "-", stdout); else TP_EUSAGE naming FILE
 * and its folder. err may be NULL. */
int cli_json_path_ok(const char *path, tp_error *err);

/* Write the result document of a run to path (atomically; "-": stdout).
 * The path was checked before the run, so a failure now (the folder
 * removed, the disk full) is the run's: TP_ESYS (exit 1) naming the path,
 * never TP_EUSAGE. */
int cli_write_result(const json_t *doc, const char *path, tp_error *err);

#endif
