/* The thin command layer: argv -> options -> one library call -> output and
 * exit code. Internal to cli/. */
#ifndef TP_CLI_H
#define TP_CLI_H

#include "tp/error.h"

/* Each command returns the process exit status. argv[0] is the command name. */
int cmd_net(int argc, char **argv);
int cmd_coll(int argc, char **argv);
int cmd_io(int argc, char **argv);
int cmd_step(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_validate(int argc, char **argv);

/* The rank launcher: the --launcher given, else "mpi" under mpirun/srun
 * (their rank variables), "env" with RANK set (torchrun), else "local". */
const char *cli_launcher(const char *given);

/* Print "trainpath: error: MSG" once and return the exit code for err. */
int cli_fail(const tp_error *err);

#endif
