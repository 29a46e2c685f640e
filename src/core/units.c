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

/* ---- the one grammar of numbers with units ----
 *
 * A number is digits, optionally '.' and more digits, optionally an
 * exponent (e, E, then an optional sign and digits): "4", "1.5", "2e6".
 * No sign, no leading or trailing '.', no hex, inf or nan. A unit may
 * follow after blanks. Each value is read two ways from the same scan: as
 * an exact integer (mantissa of up to 19 significant digits times a power
 * of ten, scaled in 128-bit arithmetic) for the uint64 parsers of options,
 * and as the nearest double (strtod on the number's digits, then the
 * unit's factor) for the YAML files. */

struct num {
    uint64_t mant;  /* the leading digits, as many as fit in 64 bits */
    bool int_over;  /* the integer part alone is beyond 64 bits */
    bool frac_lost; /* a fraction digit other than 0 did not fit */
    int exp10;      /* value = mant * 10^exp10 (beyond: digits dropped) */
    size_t at, len; /* where the number's text is in the input */
};

/* Whether mant * 10 + digit c still fits in 64 bits. */
static bool fits(uint64_t mant, char c)
{
    return mant <= (UINT64_MAX - (uint64_t)(c - '0')) / 10;
}

/* Scan a number at s[*i..len); false when there is none there. */
static bool scan_num(const char *s, size_t len, size_t *i, struct num *n)
{
    size_t p = *i;
    int nint = 0;
    bool full = false; /* the mantissa holds no more digits: drop the rest */
    *n = (struct num){.at = p};
    for (; p < len && isdigit((unsigned char)s[p]); p++, nint++) {
        if (fits(n->mant, s[p]))
            n->mant = n->mant * 10 + (uint64_t)(s[p] - '0');
        else
            n->exp10++, full = n->int_over = true;
    }
    if (nint == 0)
        return false;
    if (p + 1 < len && s[p] == '.' && isdigit((unsigned char)s[p + 1])) {
        for (p++; p < len && isdigit((unsigned char)s[p]); p++) {
            if (!full && fits(n->mant, s[p]))
                n->mant = n->mant * 10 + (uint64_t)(s[p] - '0'), n->exp10--;
            else
                full = true, n->frac_lost |= s[p] != '0';
        }
    } else if (p < len && s[p] == '.') {
        return false; /* "1." */
    }
    if (p < len && (s[p] == 'e' || s[p] == 'E')) {
        size_t q = p + 1;
        bool neg = q < len && s[q] == '-';
        if (q < len && (s[q] == '+' || s[q] == '-'))
            q++;
        if (q < len && isdigit((unsigned char)s[q])) {
            int e = 0;
            for (; q < len && isdigit((unsigned char)s[q]); q++)
                if (e < 100000)
                    e = e * 10 + (s[q] - '0');
            n->exp10 += neg ? -e : e;
            p = q;
        }
    }
    n->len = p - n->at;
    *i = p;
    return true;
}

/* n times unit as an integer: 0, or 1 when it does not fit in 64 bits, or
 * 2 when whole is asked for and it is not a whole number (else it is
 * rounded to the nearest). */
static int exact(const struct num *n, uint64_t unit, bool whole, uint64_t *out)
{
    unsigned __int128 v = (unsigned __int128)n->mant * unit;
    int e = n->exp10;
    if (n->int_over && e >= 0)
        return 1; /* at least the integer part, already beyond 64 bits */
    if (n->frac_lost && whole)
        return 2;
    if (v == 0) {
        *out = 0;
        return 0;
    }
    for (; e > 0; e--) {
        if (v > UINT64_MAX)
            return 1;
        v *= 10;
    }
    if (e < 0) {
        if (e < -38) {
            if (whole)
                return 2;
            *out = 0;
            return 0;
        }
        unsigned __int128 d = 1;
        for (; e < 0; e++)
            d *= 10;
        unsigned __int128 q = v / d, r = v % d;
        if (r && whole)
            return 2;
        v = q + (2 * r >= d);
    }
    if (v > UINT64_MAX)
        return 1;
    *out = (uint64_t)v;
    return 0;
}

/* The nearest double to n times mult / div, or false when not finite. */
static bool approx(const char *s, const struct num *n, double mult, double div, double *out)
{
    char tmp[512];
    if (n->len >= sizeof tmp)
        return false;
    memcpy(tmp, s + n->at, n->len);
    tmp[n->len] = '\0';
    double v = strtod(tmp, NULL) * mult / div;
    *out = v;
    return isfinite(v);
}

static void skip_blanks(const char *s, size_t len, size_t *i)
{
    while (*i < len && (s[*i] == ' ' || s[*i] == '\t'))
        (*i)++;
}

/* ---- sizes ---- */

/* What a size's text says: 0 and the number and its power of two, or
 * TP_EUSAGE with err saying why. */
static int scan_size(const char *s, size_t len, const char *what, struct num *n, unsigned *shift,
                     tp_error *err)
{
    static const char letters[] = "kmgtp";
    size_t i = 0;
    *shift = 0;
    bool ok = scan_num(s, len, &i, n);
    size_t at = i;
    if (ok)
        skip_blanks(s, len, &i);
    if (ok && at < i && i == len)
        ok = false; /* trailing blanks */
    if (ok && i < len) {
        const char *u = strchr(letters, tolower((unsigned char)s[i]));
        size_t rest = len - i - 1;
        if (u && *u) {
            *shift = 10 * (unsigned)(u - letters + 1);
            if (rest == 1 && tolower((unsigned char)s[i + 1]) == 'b')
                return tp_error_set(
                    err, TP_EUSAGE, "%s: '%.*s' is ambiguous (use %.*s%c or %.*s%ciB; 1K = 1024)",
                    name(what), (int)len, s, (int)at, s, toupper((unsigned char)s[i]), (int)at, s,
                    toupper((unsigned char)s[i]));
            ok = rest == 0 || (rest == 2 && strncasecmp(s + i + 1, "ib", 2) == 0);
        } else {
            ok = s[i] == 'B' && rest == 0; /* bytes; a lower-case b is a bit */
        }
    }
    if (!ok)
        return tp_error_set(err, TP_EUSAGE,
                            "%s: cannot parse '%.*s' as a size (use e.g. 64, 4K, 1.5M)", name(what),
                            (int)len, s);
    return 0;
}

/* Parse the size in s[0..len). */
static int size_of(const char *s, size_t len, const char *what, uint64_t *bytes, tp_error *err)
{
    struct num n;
    unsigned shift;
    int rc = scan_size(s, len, what, &n, &shift, err);
    if (rc)
        return rc;
    uint64_t v;
    rc = exact(&n, UINT64_C(1) << shift, true, &v);
    if (rc == 1)
        return tp_error_set(err, TP_EUSAGE, "%s: '%.*s' is too large", name(what), (int)len, s);
    if (rc == 2)
        return tp_error_set(err, TP_EUSAGE, "%s: '%.*s' is not a whole number of bytes", name(what),
                            (int)len, s);
    if (v == 0)
        return tp_error_set(err, TP_EUSAGE, "%s: size '%.*s' must be greater than zero", name(what),
                            (int)len, s);
    *bytes = v;
    return 0;
}

int tp_parse_size_d(const char *s, const char *what, double *bytes, tp_error *err)
{
    if (!s)
        s = "";
    bool neg = s[0] == '-';
    const char *t = neg ? s + 1 : s;
    struct num n;
    unsigned shift;
    int rc = scan_size(t, strlen(t), what, &n, &shift, err);
    if (rc)
        return neg ? tp_error_set(err, TP_EUSAGE,
                                  "%s: cannot parse '%s' as a size (use e.g. 64, 4K, 1.5M)",
                                  name(what), s)
                   : rc;
    double v;
    if (!approx(t, &n, ldexp(1, (int)shift), 1, &v))
        return tp_error_set(err, TP_EUSAGE, "%s: '%s' is too large", name(what), s);
    *bytes = neg ? -v : v;
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
    if (len == 0 && !*list) /* echoed as typed: --sizes '' */
        return tp_error_set(err, TP_EUSAGE, "%s '': no size given (e.g. 64,4K or 8-4M)",
                            name(what));
    if (len == 0)
        return tp_error_set(err, TP_EUSAGE, "%s '%s': an empty entry (e.g. 64,4K or 8-4M)",
                            name(what), list);
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

/* Duration units, largest last; a compound duration ("1h30m") names
 * them from the largest down. */
static const struct {
    const char *name;
    uint64_t ns;
    double mult, div; /* seconds = number * mult / div: "850ms" is the double nearest 0.85 */
    int rank;
} dur_units[] = {
    {"ns", 1, 1, 1e9, 0},
    {"us", 1000, 1, 1e6, 1},
    {"\xc2\xb5s", 1000, 1, 1e6, 1}, /* µs, the micro sign */
    {"\xce\xbcs", 1000, 1, 1e6, 1}, /* μs, the Greek mu */
    {"ms", 1000000, 1, 1e3, 2},
    {"s", 1000000000, 1, 1, 3},
    {"min", UINT64_C(60000000000), 60, 1, 4},
    {"m", UINT64_C(60000000000), 60, 1, 4},
    {"h", UINT64_C(3600000000000), 3600, 1, 5},
    {"d", UINT64_C(86400000000000), 86400, 1, 6},
    {"w", UINT64_C(604800000000000), 604800, 1, 7},
    {"y", UINT64_C(31536000000000000), 31536000, 1, 8}, /* 365 days */
};
#define NDUR (sizeof dur_units / sizeof dur_units[0])

#define DUR_EG "(use e.g. 10s, 500ms, 1h30m, 2w)"

/* The longest unit name at s[i..len); NDUR when none. */
static size_t dur_unit_at(const char *s, size_t len, size_t i)
{
    size_t best = NDUR, blen = 0;
    for (size_t k = 0; k < NDUR; k++) {
        size_t l = strlen(dur_units[k].name);
        if (l > blen && l <= len - i && memcmp(s + i, dur_units[k].name, l) == 0)
            best = k, blen = l;
    }
    return best;
}

/* Read duration s (no sign) as exact nanoseconds into *ns (when ns) and as
 * seconds into *sec (when sec). quoted is the input as typed, for errors. */
static int duration(const char *s, const char *quoted, const char *what, uint64_t *ns, double *sec,
                    tp_error *err)
{
    size_t len = strlen(s), i = 0;
    uint64_t total = 0;
    double secs = 0;
    int last_rank = 99, parts = 0;
    while (i < len) {
        struct num n;
        if (parts > 0)
            skip_blanks(s, len, &i);
        if (!scan_num(s, len, &i, &n))
            goto bad;
        size_t before = i;
        skip_blanks(s, len, &i);
        size_t k = i < len ? dur_unit_at(s, len, i) : NDUR;
        if (k == NDUR) {
            /* a bare number is seconds, and stands alone */
            if (parts > 0 || i < len || before < len)
                goto bad;
            k = 5; /* dur_units[5] is "s" */
        } else {
            i += strlen(dur_units[k].name);
        }
        if (dur_units[k].rank >= last_rank)
            return tp_error_set(err, TP_EUSAGE,
                                "%s: '%s': give each unit once, largest first (as in 1h30m) %s",
                                name(what), quoted, DUR_EG);
        last_rank = dur_units[k].rank;
        parts++;
        uint64_t v;
        if (exact(&n, dur_units[k].ns, false, &v) || v > UINT64_MAX - total) {
            if (ns)
                return tp_error_set(err, TP_EUSAGE, "%s: '%s' is too large", name(what), quoted);
            v = UINT64_MAX;
        } else {
            total += v;
        }
        double d;
        if (!approx(s, &n, dur_units[k].mult, dur_units[k].div, &d))
            return tp_error_set(err, TP_EUSAGE, "%s: '%s' is too large", name(what), quoted);
        secs += d;
    }
    if (parts == 0)
        goto bad;
    if (!isfinite(secs))
        return tp_error_set(err, TP_EUSAGE, "%s: '%s' is too large", name(what), quoted);
    if (ns)
        *ns = total;
    if (sec)
        *sec = secs;
    return 0;
bad:
    return tp_error_set(err, TP_EUSAGE, "%s: cannot parse '%s' as a duration " DUR_EG, name(what),
                        quoted);
}

int tp_parse_duration(const char *s, const char *what, uint64_t *ns, tp_error *err)
{
    if (!s)
        s = "";
    return duration(s, s, what, ns, NULL, err);
}

int tp_parse_duration_min(const char *s, const char *what, uint64_t min_ns, uint64_t *ns,
                          tp_error *err)
{
    uint64_t v;
    int rc = tp_parse_duration(s, what, &v, err);
    if (rc)
        return rc;
    if (v < min_ns) {
        char m[32];
        if (min_ns % 1000000 == 0)
            snprintf(m, sizeof m, "%llu ms", (unsigned long long)(min_ns / 1000000));
        else
            tp_fmt_ns((double)min_ns, m, sizeof m);
        return tp_error_set(err, TP_EUSAGE, "%s: '%s' is below %s", name(what), s, m);
    }
    *ns = v;
    return 0;
}

int tp_parse_duration_s(const char *s, const char *what, double *sec, tp_error *err)
{
    if (!s)
        s = "";
    bool neg = s[0] == '-';
    double v;
    int rc = duration(neg ? s + 1 : s, s, what, NULL, &v, err);
    if (rc == 0)
        *sec = neg ? -v : v;
    return rc;
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

const char *tp_fmt_bytes(uint64_t bytes, char *buf, size_t cap)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int k = 0;
    double v = (double)bytes;
    while (k < 6 && v >= 1024) {
        v /= 1024;
        k++;
    }
    if (k == 0 || bytes % (1ull << (10 * k)) == 0)
        snprintf(buf, cap, "%llu %s", (unsigned long long)(bytes >> (10 * k)), unit[k]);
    else
        snprintf(buf, cap, "%.*f %s", decimals3(v), v, unit[k]);
    return buf;
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
    if (fabs(usd) >= 1e15) { /* beyond a thousand trillion, digits stop helping */
        snprintf(buf, cap, "%s$%.3g", usd < 0 ? "-" : "", fabs(usd));
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
    else if (s < 2 * 31536000.0)
        snprintf(buf, cap, "%.1f d", s / 86400);
    else if (s < 1e5 * 31536000.0)
        snprintf(buf, cap, "%.1f y", s / 31536000);
    else
        snprintf(buf, cap, "%.3g y", s / 31536000);
    return buf;
}
