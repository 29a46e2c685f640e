/* What the commands of src/cli/ share: the launcher they run under, the
 * failure message and exit code, and the checks and atomic write of a
 * --json result document. main.c dispatches to the commands; the commands
 * call these; these call neither. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "tp/log.h"
#include "tp/result.h"

const char *cli_launcher(const char *given)
{
    return tp_boot_detect(given);
}

bool cli_rank0(const char *launcher)
{
    return tp_boot_will_be_rank0(launcher);
}

int cli_fail(const tp_error *err)
{
    tp_log(TP_LOG_ERROR, "%s", err->msg[0] ? err->msg : tp_code_name(err->code));
    return tp_exit_code(err->code);
}

int cli_json_path_ok(const char *path, tp_error *err)
{
    if (strcmp(path, "-") == 0)
        return 0;
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    struct stat st;
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0 ||
        (stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
        return tp_error_set(err, TP_EUSAGE, "--json %s: names a folder, not a file", path);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    if (access(dir, W_OK | X_OK) != 0)
        return tp_error_errno(err, TP_EUSAGE, errno, "--json %s: folder %s is not writable", path,
                              dir);
    return 0;
}

int cli_write_result(const json_t *doc, const char *path, tp_error *err)
{
    int rc = tp_result_write(doc, path, err);
    if (rc == TP_EUSAGE) {
        rc = TP_ESYS;
        if (err)
            err->code = rc;
    }
    return rc;
}
