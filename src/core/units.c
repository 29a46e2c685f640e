/* Parsing and printing of sizes, durations and rates for option values.
 * Parsers work on exact integers (no strtod: no locale, no "inf", no hex, no
 * rounding of large values), accept only the documented forms and name the
 * option and quote the bad text in every error. Sizes use binary suffixes;
 * rates print in decimal units (docs/architecture.md, "Conventions"). */
#include "tp/units.h"

#include <errno.h>
#include <sched.h>

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_SIZES 64

static const char *name(const char *what)
{
    return what ? what : "value";
}

/* Read the decimal digits at s[*i..len) into *v. Returns the number of
 * digits, or -1 on overflow. */
static int digits(const char *s, size_t len, size_t *i, uint64_t *v)
{
    int nd = 0;
    *v = 0;
    for (; *i < len && s[*i] >= '0' && s[*i] <= '9'; (*i)++, nd++) {
        unsigned d = (unsigned)(s[*i] - '0');
        if (*v > (UINT64_MAX - d) / 10)
            return -1;
        *v = *v * 10 + d;
    }
    return nd;
}

/* Parse the size in s[0..len). */
static int size_of(const char *s, size_t len, const char *what, uint64_t *bytes, tp_error *err)
{
    size_t i = 0;
    uint64_t v;
    int nd = digits(s, len, &i, &v);
    if (nd < 0)
        return tp_error_set(err, TP_EUSAGE, "%s: '%.*s' is too large", name(what), (int)len, s);
    unsigned shift = 0;
    if (nd > 0 && i < len) {
        const char *u = strchr("kmgt", tolower((unsigned char)s[i]));
        if (u && *u)
            shift = 10 * (unsigned)(u - "kmgt" + 1);
        size_t rest = len - i - 1;
        if (shift && rest == 1 && tolower((unsigned char)s[i + 1]) == 'b')
            return tp_error_set(err, TP_EUSAGE,
                                "%s: '%.*s' is ambiguous (use %.*s%c or %.*s%ciB; 1K = 1024)",
                                name(what), (int)len, s, (int)i, s, toupper((unsigned char)s[i]),
                                (int)i, s, toupper((unsigned char)s[i]));
        if (!shift || !(rest == 0 || (rest == 2 && strncasecmp(s + i + 1, "ib", 2) == 0)))
            nd = 0; /* unknown suffix */
    }
    if (nd == 0)
        return tp_error_set(err, TP_EUSAGE,
                            "%s: cannot parse '%.*s' as a size (use e.g. 64, 4K, 1M)", name(what),
                            (int)len, s);
    if (v == 0)
        return tp_error_set(err, TP_EUSAGE, "%s: size '%.*s' must be greater than zero", name(what),
                            (int)len, s);
    if (shift && v > (UINT64_MAX >> shift))
        return tp_error_set(err, TP_EUSAGE, "%s: '%.*s' is too large", name(what), (int)len, s);
    *bytes = v << shift;
    return 0;
}

int tp_parse_size(const char *s, const char *what, uint64_t *bytes, tp_error *err)
{
    if (!s)
        s = "";
    return size_of(s, strlen(s), what, bytes, err);
}

/* Insert v into the sorted, duplicate-free list a[0..*n). Returns false
 * when v is new and the list is full. */
static bool insert(uint64_t *a, size_t *n, uint64_t v)
{
    size_t k = 0;
    while (k < *n && a[k] < v)
        k++;
    if (k < *n && a[k] == v)
        return true;
    if (*n == MAX_SIZES)
        return false;
    memmove(a + k + 1, a + k, (*n - k) * sizeof *a);
    a[k] = v;
    (*n)++;
    return true;
}

/* Add the entry s[0..len): one size, or a range lo-hi expanded to lo, the
 * powers of two strictly between, and hi. */
static int entry(const char *s, size_t len, const char *what, uint64_t *a, size_t *n,
                 const char *list, tp_error *err)
{
    if (len == 0)
        return tp_error_set(err, TP_EUSAGE, "%s: empty entry in '%s'", name(what), list);
    const char *dash = memchr(s, '-', len);
    uint64_t lo, hi;
    int rc;
    if (!dash) {
        if ((rc = size_of(s, len, what, &lo, err)))
            return rc;
        hi = lo;
    } else {
        size_t ll = (size_t)(dash - s);
        if ((rc = size_of(s, ll, what, &lo, err)) ||
            (rc = size_of(dash + 1, len - ll - 1, what, &hi, err)))
            return rc;
        if (lo > hi)
            return tp_error_set(err, TP_EUSAGE, "%s: range '%.*s' runs backwards", name(what),
                                (int)len, s);
    }
    bool ok = insert(a, n, lo);
    unsigned b = 64u - (unsigned)__builtin_clzll(lo); /* first power of two above lo */
    for (; ok && b < 64 && (UINT64_C(1) << b) < hi; b++)
        ok = insert(a, n, UINT64_C(1) << b);
    if (ok)
        ok = insert(a, n, hi);
    if (!ok)
        return tp_error_set(err, TP_EUSAGE, "%s: '%s' gives more than %d sizes", name(what), list,
                            MAX_SIZES);
    return 0;
}

int tp_parse_size_list(const char *s, const char *what, uint64_t **out, size_t *n, tp_error *err)
{
    *out = NULL;
    *n = 0;
    if (!s)
        s = "";
    uint64_t a[MAX_SIZES];
    size_t cnt = 0;
    const char *p = s;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        int rc = entry(p, len, what, a, &cnt, s, err);
        if (rc)
            return rc;
        if (!comma)
            break;
        p = comma + 1;
    }
    *out = malloc(cnt * sizeof **out);
    if (!*out)
        return tp_error_set(err, TP_ENOMEM, "%s: out of memory", name(what));
    memcpy(*out, a, cnt * sizeof *a);
    *n = cnt;
    return 0;
}

static const struct {
    const char *suffix;
    uint64_t ns;
} dur_units[] = {
    {"ns", 1},
    {"us", 1000},
    {"ms", 1000000},
    {"s", 1000000000},
    {"", 1000000000},
    {"m", UINT64_C(60000000000)},
    {"h", UINT64_C(3600000000000)},
    {"d", UINT64_C(86400000000000)},
    {"y", UINT64_C(31536000000000000)}, /* 365 days */
};

int tp_parse_duration(const char *s, const char *what, uint64_t *ns, tp_error *err)
{
    if (!s)
        s = "";
    size_t len = strlen(s), i = 0;
    uint64_t whole, frac = 0, scale = 1;
    int nd = digits(s, len, &i, &whole);
    if (nd < 0)
        return tp_error_set(err, TP_EUSAGE, "%s: '%s' is too large", name(what), s);
    if (nd > 0 && i < len && s[i] == '.') {
        i++;
        int nf = 0;
        /* keep 18 fraction digits (exact in uint64); later ones cannot matter */
        for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, nf++) {
            if (nf < 18) {
                frac = frac * 10 + (uint64_t)(s[i] - '0');
                scale *= 10;
            }
        }
        if (nf == 0)
            nd = 0;
    }
    uint64_t unit = 0;
    for (size_t k = 0; nd > 0 && k < sizeof dur_units / sizeof dur_units[0]; k++)
        if (strcmp(s + i, dur_units[k].suffix) == 0)
            unit = dur_units[k].ns;
    if (!unit)
        return tp_error_set(err, TP_EUSAGE,
                            "%s: cannot parse '%s' as a duration (use e.g. 10, 10s, 500ms, 2m)",
                            name(what), s);
    unsigned __int128 part = ((unsigned __int128)frac * unit + scale / 2) / scale;
    if (whole > UINT64_MAX / unit || part > UINT64_MAX - whole * unit)
        return tp_error_set(err, TP_EUSAGE, "%s: '%s' is too large", name(what), s);
    *ns = whole * unit + (uint64_t)part;
    return 0;
}

int tp_parse_u64(const char *s, const char *what, uint64_t lo, uint64_t hi, uint64_t *out,
                 tp_error *err)
{
    if (!s)
        s = "";
    size_t len = strlen(s), i = 0;
    uint64_t v;
    int nd = digits(s, len, &i, &v);
    if (nd < 0 || (nd > 0 && i == len && v > hi))
        return tp_error_set(err, TP_EUSAGE, "%s: '%s' is out of range %llu..%llu", name(what), s,
                            (unsigned long long)lo, (unsigned long long)hi);
    if (nd == 0 || i != len)
        return tp_error_set(err, TP_EUSAGE, "%s: cannot parse '%s' as a non-negative integer",
                            name(what), s);
    if (v < lo)
        return tp_error_set(err, TP_EUSAGE, "%s: '%s' is out of range %llu..%llu", name(what), s,
                            (unsigned long long)lo, (unsigned long long)hi);
    *out = v;
    return 0;
}

int tp_parse_cpu_list(const char *s, const char *what, void *cpu_set, tp_error *err)
{
    cpu_set_t *set = cpu_set;
    CPU_ZERO(set);
    const char *p = s ? s : "";
    for (;;) {
        char *end;
        if (!isdigit((unsigned char)*p))
            goto bad;
        errno = 0;
        unsigned long lo = strtoul(p, &end, 10), hi = lo;
        if (errno)
            goto bad;
        p = end;
        if (*p == '-') {
            if (!isdigit((unsigned char)p[1]))
                goto bad;
            hi = strtoul(p + 1, &end, 10);
            if (errno || hi < lo)
                goto bad;
            p = end;
        }
        if (hi >= CPU_SETSIZE)
            return tp_error_set(err, TP_EUSAGE, "%s: CPU %lu in '%s' is beyond %d", name(what), hi,
                                s, CPU_SETSIZE - 1);
        for (unsigned long c = lo; c <= hi; c++)
            CPU_SET(c, set);
        if (*p != ',')
            break;
        p++;
    }
    if (*p == '\0')
        return 0;
bad:
    return tp_error_set(err, TP_EUSAGE, "%s: cannot parse '%s' as a CPU list (e.g. 3, 0-3, 0,2)",
                        name(what), s ? s : "");
}

const char *tp_fmt_size(uint64_t bytes, char *buf, size_t cap)
{
    static const char suf[] = "KMGT";
    int k = 0;
    while (k < 4 && bytes >= 1024 && bytes % 1024 == 0) {
        bytes /= 1024;
        k++;
    }
    if (k)
        snprintf(buf, cap, "%llu%c", (unsigned long long)bytes, suf[k - 1]);
    else
        snprintf(buf, cap, "%llu", (unsigned long long)bytes);
    return buf;
}

/* Decimals that print x with three significant digits, after rounding
 * (9.996 prints as "10.0", not "10.00"). */
static int decimals3(double x)
{
    x = fabs(x);
    if (x == 0 || !isfinite(x))
        return 0;
    int d = 2 - (int)floor(log10(x));
    if (d < 0)
        d = 0;
    double p = pow(10, d);
    if (d > 0 && round(x * p) / p >= pow(10, 3 - d))
        d--;
    return d;
}

const char *tp_fmt_ns(double ns, char *buf, size_t cap)
{
    static const char *const unit[] = {"ns", "us", "ms", "s"};
    double v = ns;
    int k = 0;
    /* move up while three significant digits would round to 1000 */
    while (k < 3 && fabs(v) >= 999.5) {
        v /= 1000;
        k++;
    }
    if (v == 0)
        snprintf(buf, cap, "0 %s", unit[k]);
    else
        snprintf(buf, cap, "%.*f %s", decimals3(v), v, unit[k]);
    return buf;
}

const char *tp_fmt_rate(double bytes_per_s, char *buf, size_t cap)
{
    double v = bytes_per_s / 1e9;
    if (v == 0)
        snprintf(buf, cap, "0 GB/s");
    else
        snprintf(buf, cap, "%.*f GB/s", decimals3(v), v);
    return buf;
}

const char *tp_fmt_money(double usd, char *buf, size_t cap)
{
    if (cap == 0)
        return buf;
    if (!isfinite(usd)) {
        snprintf(buf, cap, "-");
        return buf;
    }
    char digits[40];
    snprintf(digits, sizeof digits, "%.0f", fabs(usd));
    size_t nd = strlen(digits), k = 0;
    if (usd < 0 && k + 1 < cap)
        buf[k++] = '-';
    if (k + 1 < cap)
        buf[k++] = '$';
    for (size_t i = 0; i < nd; i++) {
        if (i && (nd - i) % 3 == 0 && k + 1 < cap)
            buf[k++] = ',';
        if (k + 1 >= cap)
            break;
        buf[k++] = digits[i];
    }
    buf[k] = '\0';
    return buf;
}

const char *tp_fmt_duration_s(double s, char *buf, size_t cap)
{
    if (!isfinite(s))
        snprintf(buf, cap, "-");
    else if (s < 120)
        tp_fmt_ns(s * 1e9, buf, cap);
    else if (s < 2 * 3600)
        snprintf(buf, cap, "%.1f min", s / 60);
    else if (s < 2 * 86400)
        snprintf(buf, cap, "%.1f h", s / 3600);
    else
        snprintf(buf, cap, "%.1f d", s / 86400);
    return buf;
}
