/* What the commands of src/cli/ share: the failure message and its exit
 * code, the --json document of a run refused before it started, and where
 * a table goes. main.c dispatches to the commands; the commands call this;
 * it calls neither.
 *
 * Every error message reaches the terminal through cli_fail, and a message
 * may quote what a peer sent (a server's ERROR) or what a file holds: it is
 * printed as one line of safe text (tp_text_safe), so no escape sequence,
 * carriage return or newline of theirs reaches the terminal. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "tp/file.h"
#include "tp/intr.h"
#include "tp/log.h"
#include "tp/progress.h"
#include "tp/result.h"
#include "tp/storage.h"
#include "tp/text.h"

int cli_fail(const tp_error *err)
{
    tp_error e = *err;
    tp_intr_blame(e.code, &e);
    if (tp_code_is_intr(e.code) && getenv(TP_INTR_SAID_BY_PARENT))
        return tp_exit_code(e.code); /* a test of validate's: it says so */
    char safe[sizeof e.msg];
    tp_log(TP_LOG_ERROR, "%s",
           e.msg[0] ? tp_text_safe(e.msg, safe, sizeof safe, TP_TEXT_LINE)
                    : tp_code_name(e.code));
    return tp_exit_code(e.code);
}

const char *cli_json_arg(int argc, char **argv)
{
    const char *json = NULL;
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "--json") == 0 && i + 1 < argc)
            json = argv[++i];
        else if (strncmp(argv[i], "--json=", 7) == 0)
            json = argv[i] + 7;
    }
    return json;
}

bool cli_refusal_path_ok(const char *json)
{
    if (!json || tp_result_path_ok(json, NULL) != 0)
        return false;
    struct stat st;
    if (strcmp(json, "-") == 0 || stat(json, &st) != 0 || !S_ISREG(st.st_mode))
        return true;
    /* an earlier document is replaced; any other file may be an input */
    char head[256] = "";
    FILE *f = fopen(json, "rb");
    size_t n = f ? fread(head, 1, sizeof head - 1, f) : 0;
    if (f)
        fclose(f);
    head[n] = 0;
    return n == 0 || strstr(head, "\"schema\": \"trainpath.result/") != NULL;
}

int cli_refuse(const char *command, const char *json, const tp_error *err)
{
    int code = cli_fail(err);
    if (err->code != TP_EUSAGE || !cli_refusal_path_ok(json))
        return code;
    json_t *doc = tp_result_new(command, NULL);
    if (!doc)
        return code;
    tp_result_finish(doc, err->code, err->msg[0] ? err->msg : tp_code_name(err->code));
    tp_error werr;
    if (tp_result_write_run(doc, json, &werr) < 0)
        cli_fail(&werr);
    json_decref(doc);
    return code;
}

int cli_distinct(const struct tp_file_arg *outs, size_t nout, const struct tp_file_arg *ins,
                 size_t nin)
{
    tp_error err = {0};
    return tp_file_distinct(outs, nout, ins, nin, &err) ? cli_fail(&err) : 0;
}

int cli_engine_check(const char *arg, void *opts, tp_error *err)
{
    (void)opts;
    return tp_ioq_engine_check(arg, err);
}

FILE *cli_table_out(const char *json)
{
    return json && strcmp(json, "-") == 0 ? stderr : stdout;
}

bool cli_progress(bool quiet, const char *json)
{
    return !quiet && !(json && strcmp(json, "-") == 0) && tp_progress_terminal();
}
