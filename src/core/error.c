/* Error records: a code plus one message that names the input or the peer. */
#include "tp/error.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int tp_error_set(tp_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

int tp_error_errno(tp_error *err, int code, int errnum, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        if (n >= 0 && (size_t)n < sizeof err->msg)
            snprintf(err->msg + n, sizeof err->msg - (size_t)n, ": %s", strerror(errnum));
        err->code = code;
    }
    return code;
}

void tp_error_prefix(tp_error *err, const char *fmt, ...)
{
    if (!err)
        return;
    char pre[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(pre, sizeof pre - 2, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t plen = strlen(pre);
    memcpy(pre + plen, ": ", 3);
    plen += 2;
    size_t old = strnlen(err->msg, sizeof err->msg - 1);
    if (plen + old >= sizeof err->msg)
        old = sizeof err->msg - 1 - plen;
    memmove(err->msg + plen, err->msg, old);
    memcpy(err->msg, pre, plen);
    err->msg[plen + old] = '\0';
}

void tp_error_clear(tp_error *err)
{
    if (err) {
        err->code = TP_OK;
        err->msg[0] = '\0';
    }
}

int tp_exit_code(int code)
{
    if (code == TP_OK)
        return 0;
    if (code == TP_EINTR)
        return 128 + SIGINT;
    if (code == TP_ETERM)
        return 128 + SIGTERM;
    return code == TP_EUSAGE ? 2 : 1;
}

const char *tp_code_name(int code)
{
    switch (code) {
    case TP_OK: return "ok";
    case TP_EUSAGE: return "usage";
    case TP_EPEER: return "peer";
    case TP_ETIMEOUT: return "timeout";
    case TP_ESYS: return "system";
    case TP_ECHECK: return "check";
    case TP_EAUTH: return "auth";
    case TP_EBUSY: return "busy";
    case TP_EPROTO: return "protocol";
    case TP_ENOMEM: return "memory";
    case TP_EUNSUP: return "unsupported";
    case TP_EINTR:
    case TP_ETERM: return "interrupted";
    default: return "error";
    }
}
