/* Log lines to stderr. Each line is formatted whole in memory and handed to
 * one write(2), so lines from concurrent threads or forked ranks never
 * interleave mid-line. The level comes from TP_LOG on first use unless
 * tp_log_set_level() chose one before. While a progress line is up
 * (tp/progress.h) the same write erases it first, so the log line starts
 * at the left margin instead of after the progress line. */
#include "tp/log.h"
#include "tp/progress.h"
#include "tp/text.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define LEVEL_UNSET (-1)

static atomic_int cur_level = LEVEL_UNSET;

static const char *const level_names[] = {"error", "warn", "info", "debug"};

static int level_from_env(void)
{
    const char *v = getenv("TP_LOG");
    if (!v)
        return TP_LOG_INFO;
    for (int i = TP_LOG_ERROR; i <= TP_LOG_DEBUG; i++)
        if (strcasecmp(v, level_names[i]) == 0)
            return i;
    if (strcasecmp(v, "warning") == 0)
        return TP_LOG_WARN;
    return TP_LOG_INFO;
}

static int level(void)
{
    int l = cur_level;
    if (l == LEVEL_UNSET) {
        /* Racing first callers compute the same value; only an unset level
         * is replaced, so an explicit tp_log_set_level() always wins. */
        int expected = LEVEL_UNSET;
        l = level_from_env();
        if (!atomic_compare_exchange_strong(&cur_level, &expected, l))
            l = expected;
    }
    return l;
}

void tp_log_set_level(enum tp_log_level lvl)
{
    cur_level = (int)lvl;
}

static void write_all(const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(STDERR_FILENO, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        buf += n;
        len -= (size_t)n;
    }
}

void tp_log(enum tp_log_level lvl, const char *fmt, ...)
{
    if ((int)lvl > level() || (int)lvl < TP_LOG_ERROR)
        return;
    int saved_errno = errno; /* callers often log and then inspect errno */

    char stack[1024];
    char *buf = stack;
    size_t cap = sizeof stack;
    const char *erase = tp_progress_erase(); /* "" without a progress line */
    int pre = snprintf(buf, cap, "%strainpath: %s: ", erase, level_names[lvl]);
    va_list ap;
    va_start(ap, fmt);
    int body = vsnprintf(buf + pre, cap - (size_t)pre, fmt, ap);
    va_end(ap);
    if (body < 0)
        body = 0;
    size_t need = (size_t)pre + (size_t)body + 2; /* newline and NUL */
    if (need > cap) {
        char *big = malloc(need);
        if (big) {
            buf = big;
            cap = need;
            snprintf(buf, cap, "%strainpath: %s: ", erase, level_names[lvl]);
            va_start(ap, fmt);
            vsnprintf(buf + pre, cap - (size_t)pre, fmt, ap);
            va_end(ap);
        } else {
            body = (int)(cap - (size_t)pre - 2); /* out of memory: truncate */
        }
    }
    size_t len = (size_t)pre + (size_t)body;
    buf[len] = '\0';
    /* one line whatever the message quotes (a peer's words, a file's
     * names): no escape sequence or forged line reaches the log */
    char *safe = NULL;
    if (!tp_text_is_safe(buf + pre, TP_TEXT_LINE) && (safe = malloc(len + 2)) != NULL) {
        memcpy(safe, buf, (size_t)pre);
        tp_text_safe(buf + pre, safe + pre, len + 2 - (size_t)pre, TP_TEXT_LINE);
        len = strlen(safe);
    }
    char *out = safe ? safe : buf;
    out[len++] = '\n';
    write_all(out, len);
    free(safe);
    if (buf != stack)
        free(buf);
    errno = saved_errno;
}
