/* Slurm's hostlist expressions, expanded: "tux[0-3,12,18-20]",
 * "s[00-15]", "rack[0-63]_blade[0-41]", "a,b,c". The grammar is the one
 * slurm.conf(5) documents for node names (and topology.conf(5) refers to):
 * items apart by commas (or whitespace, as Slurm's parser takes them); in
 * an item, any number of bracket groups among the text, each a
 * comma-separated list of numbers and ranges lo-hi; the digits of lo as
 * written fix the width (leading zeros: "[08-10]" is 08 09 10, "[8-10]" is
 * 8 9 10); with several groups the leftmost varies slowest, as Slurm
 * expands them.
 *
 * Written here rather than taken from libslurm (slurm_hostlist_create):
 * libslurm's soname and ABI move with every Slurm release, so a binary
 * built against one breaks against the next; and topology files are read
 * where no Slurm is installed at all (a laptop, CI, the simulator's
 * planning). Every count is checked before a name is made, so an
 * expression cannot make more names than the caller allows. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_int.h"

#define MAX_DIGITS 18 /* below 2^63: no overflow in a count or a value */

struct range {
    unsigned long long lo, hi;
    int width;
};

/* One piece of an item: text, or a bracket group (its ranges). */
struct part {
    const char *text;
    size_t len;
    int r0, nr; /* ranges r0 .. r0 + nr - 1; nr == 0: text */
};

struct parse {
    const char *expr;
    struct tp__topo_hl_error *e;
    struct range *r;
    struct part *p;
    int nr, np;
    int *ri;               /* expand: per part, its current range */
    unsigned long long *v; /* expand: per part, its current value */
};

static int fail(struct parse *s, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct parse *s, size_t at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    s->e->at = at;
    vsnprintf(s->e->msg, sizeof s->e->msg, fmt, ap);
    va_end(ap);
    return TP_EUSAGE;
}

static bool is_sep(char c)
{
    return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* A number at s->expr + *i: its digits (at most MAX_DIGITS) into *v and
 * their count into *width. False when there is no digit there. */
static bool number(struct parse *s, size_t *i, unsigned long long *v, int *width)
{
    const char *x = s->expr;
    *v = 0;
    *width = 0;
    while (x[*i] >= '0' && x[*i] <= '9' && *width <= MAX_DIGITS) {
        *v = *v * 10 + (unsigned long long)(x[*i] - '0');
        (*width)++;
        (*i)++;
    }
    return *width > 0;
}

/* The bracket group opening at s->expr[*i] ('['), up to its ']': its ranges
 * appended to s->r. */
static int group(struct parse *s, size_t *i)
{
    const char *x = s->expr;
    size_t open = *i;
    (*i)++;
    for (;;) {
        size_t at = *i;
        struct range r;
        int hw;
        char c[2] = {x[at], 0};
        if (!number(s, i, &r.lo, &r.width)) {
            if (!x[at])
                return fail(s, open, "'[' is not closed by ']'");
            if (x[at] == ']' || x[at] == ',')
                return fail(s, at, "an empty range in brackets (write e.g. tux[0-3,7])");
            if (x[at] == '[')
                return fail(s, at, "'[' inside brackets: brackets do not nest");
            if (x[at] == '-')
                return fail(s, at, "a range with no start: '-' comes after a number");
            return fail(s, at, "'%s' in brackets: only digits, '-' and ',' (e.g. tux[0-3,7])", c);
        }
        if (r.width > MAX_DIGITS)
            return fail(s, at, "a number of more than 18 digits in brackets");
        r.hi = r.lo;
        if (x[*i] == '-') {
            (*i)++;
            if (!number(s, i, &r.hi, &hw))
                return fail(s, at, "the range '%.*s-' has no end", r.width, x + at);
            if (hw > MAX_DIGITS)
                return fail(s, at, "a number of more than 18 digits in brackets");
            if (r.hi < r.lo)
                return fail(s, at, "the range %.*s-%.*s runs backwards", r.width, x + at, hw,
                            x + *i - hw);
        }
        s->r[s->nr++] = r;
        if (x[*i] == ']') {
            (*i)++;
            return 0;
        }
        if (x[*i] == ',') {
            (*i)++;
            continue;
        }
        if (!x[*i])
            return fail(s, open, "'[' is not closed by ']'");
        if (x[*i] == '[')
            return fail(s, *i, "'[' inside brackets: brackets do not nest");
        c[0] = x[*i];
        return fail(s, *i, "'%s' in brackets: only digits, '-' and ',' (e.g. tux[0-3,7])", c);
    }
}

/* The item at s->expr[*i] into s->p (its parts) and s->r, *i left after it;
 * its count of names into *count, saturated at cap + 1. */
static int item(struct parse *s, size_t *i, size_t cap, size_t *count)
{
    const char *x = s->expr;
    s->np = s->nr = 0;
    *count = 1;
    while (x[*i] && !is_sep(x[*i])) {
        struct part *p = &s->p[s->np++];
        if (x[*i] == ']')
            return fail(s, *i, "']' without '['");
        if (x[*i] != '[') {
            p->text = x + *i;
            p->nr = 0;
            while (x[*i] && !is_sep(x[*i]) && x[*i] != '[' && x[*i] != ']')
                (*i)++;
            p->len = (size_t)(x + *i - p->text);
            continue;
        }
        p->r0 = s->nr;
        int rc = group(s, i);
        if (rc)
            return rc;
        p->nr = s->nr - p->r0;
        size_t n = 0;
        for (int k = p->r0; k < s->nr && n <= cap; k++)
            n += (size_t)(s->r[k].hi - s->r[k].lo < cap ? s->r[k].hi - s->r[k].lo + 1 : cap + 1);
        *count = n > cap || *count > (cap + 1) / n ? cap + 1 : *count * n;
    }
    return 0;
}

/* Make each name of the parsed item (starting at offset at) and hand it
 * to fn. */
static int expand(struct parse *s, size_t at, tp__topo_name_fn fn, void *user)
{
    int *ri = s->ri;
    unsigned long long *v = s->v;
    for (int k = 0; k < s->np; k++) {
        ri[k] = s->p[k].r0;
        v[k] = s->p[k].nr ? s->r[ri[k]].lo : 0;
    }
    char name[TP_TOPOLOGY_NAME_MAX + 2];
    for (;;) {
        size_t len = 0;
        for (int k = 0; k < s->np && len <= TP_TOPOLOGY_NAME_MAX; k++) {
            const struct part *p = &s->p[k];
            int n = p->nr
                        ? snprintf(name + len, sizeof name - len, "%0*llu", s->r[ri[k]].width, v[k])
                        : snprintf(name + len, sizeof name - len, "%.*s", (int)p->len, p->text);
            len += (size_t)n;
        }
        if (len > TP_TOPOLOGY_NAME_MAX)
            return fail(s, at, "a name longer than %d characters ('%.20s...')",
                        TP_TOPOLOGY_NAME_MAX, name);
        int rc = fn(user, name, at);
        if (rc)
            return rc;
        /* the next: the rightmost group moves first */
        int k = s->np - 1;
        for (; k >= 0; k--) {
            const struct part *p = &s->p[k];
            if (!p->nr)
                continue;
            if (v[k] < s->r[ri[k]].hi) {
                v[k]++;
                break;
            }
            if (ri[k] + 1 < p->r0 + p->nr) {
                ri[k]++;
                v[k] = s->r[ri[k]].lo;
                break;
            }
            ri[k] = p->r0;
            v[k] = s->r[ri[k]].lo;
        }
        if (k < 0)
            return 0;
    }
}

int tp__topo_hostlist(const char *expr, size_t max, tp__topo_name_fn fn, void *user,
                      struct tp__topo_hl_error *e)
{
    struct parse s = {.expr = expr, .e = e};
    e->at = 0;
    e->msg[0] = '\0';
    size_t len = strlen(expr), nranges = 1, nparts = 2;
    for (size_t i = 0; i < len; i++) {
        nranges += expr[i] == ',' || expr[i] == '[';
        nparts += 2 * (expr[i] == '[');
    }
    s.r = malloc(nranges * sizeof *s.r);
    s.p = malloc(nparts * sizeof *s.p);
    s.ri = malloc(nparts * sizeof *s.ri);
    s.v = malloc(nparts * sizeof *s.v);
    int rc = s.r && s.p && s.ri && s.v ? 0 : TP_ENOMEM;
    /* pass 1 checks every item and counts; pass 2 makes the names */
    size_t total = 0;
    for (int pass = 1; rc == 0 && pass <= 2; pass++) {
        size_t i = 0;
        while (rc == 0) {
            while (is_sep(expr[i]))
                i++;
            if (!expr[i])
                break;
            size_t at = i, n;
            rc = item(&s, &i, max, &n);
            if (rc == 0 && pass == 1) {
                total += n;
                if (total > max)
                    rc = fail(&s, at, "expands to more than %zu names", max);
            } else if (rc == 0) {
                rc = expand(&s, at, fn, user);
            }
        }
        if (rc == 0 && pass == 1 && total == 0)
            rc = fail(&s, 0, "names nothing");
    }
    free(s.r);
    free(s.p);
    free(s.ri);
    free(s.v);
    return rc;
}
