/* What the commands of src/cli/ share: the failure message and its exit
 * code. main.c dispatches to the commands; the commands call this; it calls
 * neither. */
#include "cli.h"
#include "tp/log.h"

int cli_fail(const tp_error *err)
{
    tp_log(TP_LOG_ERROR, "%s", err->msg[0] ? err->msg : tp_code_name(err->code));
    return tp_exit_code(err->code);
}
