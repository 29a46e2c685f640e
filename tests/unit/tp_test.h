/* What the unit tests share: assertions that print the expression and both
 * values, a scratch folder under /tmp with the files a test writes into it,
 * and the check of an error message that must name FILE:LINE:COL: KEYPATH:.
 * Static inline functions and macros only, so each test stays one
 * translation unit; include after cmocka.h. Random numbers are seeded
 * (splitmix64, a fixed portable stream), so a failure reproduces from its
 * seed. */
#ifndef TP_TEST_H
#define TP_TEST_H

#ifndef fail_msg
#error "include cmocka.h before tp_test.h"
#endif

#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- assertions that print both values ---- */

#define TP_EQ_INT(a, b)                                                                            \
    do {                                                                                           \
        long long a_ = (a), b_ = (b);                                                              \
        if (a_ != b_)                                                                              \
            fail_msg("%s = %lld, expected %s = %lld", #a, a_, #b, b_);                             \
    } while (0)

/* A NULL on either side fails (with "(null)"), it never crashes. */
#define TP_EQ_STR(a, b)                                                                            \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if (!a_ || !b_ || strcmp(a_, b_) != 0)                                                     \
            fail_msg("%s = \"%s\", expected \"%s\"", #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)");  \
    } while (0)

/* s contains part. */
#define TP_HAS(s, part)                                                                            \
    do {                                                                                           \
        const char *s_ = (s), *p_ = (part);                                                        \
        if (!s_ || !strstr(s_, p_))                                                                \
            fail_msg("%s = \"%s\" does not contain \"%s\"", #s, s_ ? s_ : "(null)", p_);           \
    } while (0)

/* Unsigned integers (cmocka's own assertions print them in hex). */
#define TP_EQ_U64(a, b)                                                                            \
    do {                                                                                           \
        unsigned long long a_ = (a), b_ = (b);                                                     \
        if (a_ != b_)                                                                              \
            fail_msg("%s = %llu, expected %s = %llu", #a, a_, #b, b_);                             \
    } while (0)

/* |a - b| <= tol * |b|, relative. */
#define TP_NEAR_REL(a, b, tol)                                                                     \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (!(fabs(a_ - b_) <= (tol)*fabs(b_)))                                                    \
            fail_msg("%s = %.17g, expected %s = %.17g (relative tolerance %g)", #a, a_, #b, b_,    \
                     (double)(tol));                                                               \
    } while (0)

/* |a - b| <= tol, absolute. */
#define TP_NEAR(a, b, tol)                                                                         \
    do {                                                                                           \
        double a_ = (a), b_ = (b), t_ = (tol);                                                     \
        if (!(fabs(a_ - b_) <= t_))                                                                \
            fail_msg("%s = %.17g, expected %s = %.17g (within %g)", #a, a_, #b, b_, t_);           \
    } while (0)

/* ---- seeded random numbers ---- */

/* The stream's state: set it to seed a test. */
static uint64_t tp_test_rng;

static inline uint64_t tp_test_rnd(void)
{
    uint64_t z = (tp_test_rng += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Uniform in (0, 1). */
static inline double tp_test_unif(void)
{
    return ((double)(tp_test_rnd() >> 11) + 0.5) / 9007199254740992.0;
}

/* Standard normal (Box-Muller). */
static inline double tp_test_normal(void)
{
    return sqrt(-2 * log(tp_test_unif())) * cos(2 * M_PI * tp_test_unif());
}

/* ---- error messages ---- */

/* The part of an error message after "FILE:" for a mistake at where
 * ("LINE:COL") in key path keypath: "WHERE: KEYPATH: ", or "WHERE: " when
 * keypath is empty, or " " when where is (an error of the whole file).
 * Written to at (cap bytes); returns at. */
static inline const char *tp_test_err_at(char *at, size_t cap, const char *where,
                                         const char *keypath)
{
    if (*where && *keypath)
        snprintf(at, cap, "%s: %s: ", where, keypath);
    else if (*where)
        snprintf(at, cap, "%s: ", where);
    else
        snprintf(at, cap, " ");
    return at;
}

/* msg starts "FILE:AT" and holds says. name, unless NULL, heads the failure
 * message (the case, in a table of bad inputs). */
#define TP_EXPECT_ERR(name, msg, file, at, says)                                                   \
    do {                                                                                           \
        const char *name_ = (name), *msg_ = (msg), *says_ = (says);                                \
        char want_[1024];                                                                          \
        snprintf(want_, sizeof want_, "%s:%s", (file), (at));                                      \
        if (strncmp(msg_, want_, strlen(want_)) != 0 || !strstr(msg_, says_))                      \
            fail_msg("%s%smessage \"%s\"\n  expected to start \"%s\"\n  and to hold \"%s\"",       \
                     name_ ? name_ : "", name_ ? ":\n  " : "", msg_, want_, says_);                \
    } while (0)

/* ---- a scratch folder and its files ---- */

/* Make a fresh folder /tmp/PREFIX_XXXXXX and put its name in dir (cap
 * bytes). Returns 0, or -1 with errno set: the convention of a cmocka
 * setup, so `return tp_test_mkdtemp(...)` fails the group. */
static inline int tp_test_mkdtemp(char *dir, size_t cap, const char *prefix)
{
    int n = snprintf(dir, cap, "/tmp/%s_XXXXXX", prefix);
    if (n < 0 || (size_t)n >= cap) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return mkdtemp(dir) ? 0 : -1;
}

static inline int tp_test_rmtree_one(const char *path, const struct stat *st, int flag,
                                     struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Remove dir and everything below it, not following links. Only a folder
 * below /tmp/, where tp_test_mkdtemp makes them: a recursive delete of a
 * stray path is refused. Returns 0, or -1 with errno set (what cmocka
 * wants back from a teardown). */
static inline int tp_test_rmtree(const char *dir)
{
    if (strncmp(dir, "/tmp/", 5) != 0 || !dir[5]) {
        errno = EINVAL;
        return -1;
    }
    return nftw(dir, tp_test_rmtree_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Write text to DIR/NAME, replacing what was there, and put that path in
 * path (cap bytes). Returns path; a failure fails the test, naming the
 * file. */
static inline char *tp_test_write(const char *dir, const char *name, const char *text, char *path,
                                  size_t cap)
{
    int n = snprintf(path, cap, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= cap)
        fail_msg("%s/%s: longer than the %zu bytes given for it", dir, name, cap);
    FILE *f = fopen(path, "w");
    if (!f)
        fail_msg("cannot create %s: %s", path, strerror(errno));
    int bad = fputs(text, f) < 0;
    if (fclose(f) != 0 || bad)
        fail_msg("cannot write %s", path);
    return path;
}

#endif
