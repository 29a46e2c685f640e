/* Errors: every library function returns 0 or a negative tp code and fills a
 * tp_error whose message names the input or the peer at fault. The CLI prints
 * the message once and maps the code to an exit status (tp_exit_code). */
#ifndef TP_ERROR_H
#define TP_ERROR_H

#include <stddef.h>

enum tp_code {
    TP_OK = 0,
    TP_EUSAGE = -2,   /* bad option, bad input file, unknown provider: exit 2 */
    TP_EPEER = -3,    /* the peer closed, reset, refused or misbehaved: exit 1 */
    TP_ETIMEOUT = -4, /* a deadline passed: exit 1 */
    TP_ESYS = -5,     /* a system call failed: exit 1 */
    TP_ECHECK = -6,   /* payload verification failed (--check): exit 1 */
    TP_EAUTH = -7,    /* authentication failed: exit 1 */
    TP_EBUSY = -8,    /* the server is running another test: exit 1 */
    TP_EPROTO = -9,   /* malformed or unexpected frame: exit 1 */
    TP_ENOMEM = -10,  /* allocation failed: exit 1 */
    TP_EUNSUP = -11,  /* the transport/provider lacks a capability: exit 1 */
    TP_EINTR = -12,   /* interrupted by SIGINT (tp/intr.h): exit 130 */
    TP_ETERM = -13,   /* interrupted by SIGTERM (tp/intr.h): exit 143 */
};

typedef struct tp_error {
    int code;
    char msg[512];
} tp_error;

/* Record code and a printf-style message in err (which may be NULL). A later
 * call overwrites the earlier one. Returns code, so callers can write
 * `return tp_error_set(err, TP_EUSAGE, "...")`. */
int tp_error_set(tp_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Like tp_error_set, with ": strerror(errnum)" appended. Returns code. */
int tp_error_errno(tp_error *err, int code, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Prefix the existing message with "prefix: " (context as an error rises). */
void tp_error_prefix(tp_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Clear err to TP_OK with an empty message. */
void tp_error_clear(tp_error *err);

/* Process exit status for a code: 0 for TP_OK, 2 for TP_EUSAGE, 128 + the
 * signal for an interrupt (130 for TP_EINTR, 143 for TP_ETERM), 1 otherwise. */
int tp_exit_code(int code);

/* Whether code is an interrupt (TP_EINTR or TP_ETERM). */
static inline int tp_code_is_intr(int code)
{
    return code == TP_EINTR || code == TP_ETERM;
}

/* Short stable name of a code ("usage", "peer", "timeout", ...), used as the
 * result document's status.reason. */
const char *tp_code_name(int code);

#endif
