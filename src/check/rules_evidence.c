/* The evidence of a check rule. A rule gathers what is wrong and what was
 * checked in a struct finding; the finding reports the first when anything
 * is wrong and the second otherwise, followed by what was wanted. Items are
 * "; "-separated and written once (the same port on 0.0.0.0 and :: is one
 * item); a full buffer ends in "...", so evidence is cut, never overrun.
 * A rule whose facts are missing says SKIP or UNKNOWN by what
 * facts.missing says of them: absent from the node, or unseen. */
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

/* a and b are the same part, or one is a dotted part of the other */
static bool same_part(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b), n = na < nb ? na : nb;
    return strncmp(a, b, n) == 0 && (na == nb || (na < nb ? b[n] : a[n]) == '.');
}

bool tp__check_unseen(const json_t *facts, const char *part, char *why, size_t n)
{
    size_t i;
    const json_t *m;
    json_array_foreach(json_object_get(facts, "missing"), i, m) {
        const char *mp = json_string_value(json_object_get(m, "part"));
        if (!mp || !json_is_true(json_object_get(m, "unseen")) || !same_part(mp, part))
            continue;
        const char *reason = json_string_value(json_object_get(m, "reason"));
        snprintf(why, n, "%s: %s", mp, reason ? reason : "not read");
        return true;
    }
    return false;
}

void tp__check_nofacts(struct tp_check_result *r, const json_t *facts, const char *part,
                       const char *fmt, ...)
{
    char says[512], why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(says, sizeof says, fmt, ap);
    va_end(ap);
    if (tp__check_unseen(facts, part, why, sizeof why))
        tp__check_say(r, TP_CHECK_UNKNOWN, "%s: the facts could not see it (%s)", says, why);
    else
        tp__check_say(r, TP_CHECK_SKIP, "%s", says);
}

void tp__check_pass_seen(const json_t *facts, const char *needs, struct tp_check_result *r)
{
    char part[64], why[512];
    for (const char *s = needs; *s;) {
        size_t len = strcspn(s, " ");
        if (len > 0 && len < sizeof part) {
            memcpy(part, s, len);
            part[len] = '\0';
            if (tp__check_unseen(facts, part, why, sizeof why)) {
                char seen[sizeof r->evidence];
                snprintf(seen, sizeof seen, "%s", r->evidence);
                tp__check_say(r, TP_CHECK_UNKNOWN,
                              "the facts could not see all of it (%s); what they saw passed: %s",
                              why, seen);
                return;
            }
        }
        s += len;
        s += strspn(s, " ");
    }
}
