/* The evidence of a check rule. A rule gathers what is wrong and what was
 * checked in a struct finding; the finding reports the first when anything
 * is wrong and the second otherwise, followed by what was wanted. Items are
 * "; "-separated and written once (the same port on 0.0.0.0 and :: is one
 * item); a full buffer ends in "...", so evidence is cut, never overrun. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rules_int.h"

/* item is already one of the "; "-separated items of buf */
static bool has_item(const char *buf, const char *item)
{
    size_t n = strlen(item);
    for (const char *s = strstr(buf, item); s; s = strstr(s + 1, item))
        if ((s == buf || (s >= buf + 2 && s[-2] == ';' && s[-1] == ' ')) &&
            (s[n] == '\0' || s[n] == ';'))
            return true;
    return false;
}

/* Append an item to buf, "; " between items; "..." marks a full buffer.
 * Repeated items (the same port on 0.0.0.0 and ::) are written once. */
static void vappend(char *buf, size_t cap, const char *fmt, va_list ap)
{
    char item[512];
    vsnprintf(item, sizeof item, fmt, ap);
    if (has_item(buf, item))
        return;
    size_t n = strlen(buf);
    if (n + 4 >= cap) {
        memcpy(buf + cap - 4, "...", 4);
        return;
    }
    int w = snprintf(buf + n, cap - n, "%s%s", n ? "; " : "", item);
    if (w < 0 || (size_t)w >= cap - n)
        memcpy(buf + cap - 4, "...", 4);
}

void tp__check_ok(struct finding *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vappend(f->good, sizeof f->good, fmt, ap);
    va_end(ap);
}

void tp__check_bad(struct finding *f, enum tp_check_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vappend(f->bad, sizeof f->bad, fmt, ap);
    va_end(ap);
    if (s == TP_CHECK_FAIL || (s == TP_CHECK_WARN && f->status == TP_CHECK_PASS))
        f->status = s;
}

void tp__check_done(struct tp_check_result *r, const struct finding *f, const char *want)
{
    size_t cap = sizeof r->evidence;
    int w;
    r->status = f->status;
    if (f->status == TP_CHECK_PASS)
        w = snprintf(r->evidence, cap, "%s", f->good[0] ? f->good : "nothing to check");
    else
        w = snprintf(r->evidence, cap, "%s%s%s", f->bad, want ? "; " : "", want ? want : "");
    if (w < 0 || (size_t)w >= cap)
        memcpy(r->evidence + cap - 4, "...", 4);
}

void tp__check_say(struct tp_check_result *r, enum tp_check_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->evidence, sizeof r->evidence, fmt, ap);
    va_end(ap);
    r->status = s;
}
