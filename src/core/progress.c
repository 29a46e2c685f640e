/* The progress line of long work on a terminal (include/tp/progress.h).
 *
 * One line per process, so the state is one static struct. Updates only
 * store (done is an atomic double); the line is drawn either by the caller's
 * update when the last draw is a quarter of a second old (a clock read and
 * a trylock, so a thread never waits on the line) or, for callers that
 * block, by a ticker thread four times a second. Each draw is one write(2)
 * of "\r" + the line + ESC [K, so nothing is left of a longer line before
 * it and a log line written in between (tp_progress_erase, one write too)
 * is never split.
 *
 * fork: the lock is taken around it (pthread_atfork), and the child starts
 * with no line and no ticker: a rank or a test forked while the line is up
 * neither draws nor erases the parent's line. */
#include "tp/progress.h"
#include "tp/text.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define EVERY_NS 250000000ull /* at most four draws a second */
#define ERASE "\r\033[K"

static struct {
    pthread_mutex_t mu; /* the fields below but the atomics; the drawing */
    pthread_cond_t cv;  /* wakes the ticker to stop */
    atomic_bool on;
    _Atomic double done;
    atomic_uint_fast64_t last_ns; /* the last draw (begin's time before the first) */
    atomic_bool hidden;           /* erased by tp_progress_hide; the next update draws */
    atomic_bool erased;           /* erased by a log line: draw even the same line again */
    unsigned flags;
    uint64_t t0_ns;
    double total;
    char what[160], unit[24];
    char shown[512]; /* the line on the terminal, when drawn */
    bool have_left, drawn, stop, ticking;
    double left_s;
    uint64_t left_at_ns;
    pthread_t ticker;
    /* tp_progress_test_hooks */
    int fd, columns;
    uint64_t (*now_ns)(void);
} P = {.mu = PTHREAD_MUTEX_INITIALIZER, .fd = STDERR_FILENO};

static pthread_once_t once = PTHREAD_ONCE_INIT;

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t now(void)
{
    return P.now_ns ? P.now_ns() : mono_ns();
}

static void init_cv(void)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&P.cv, &a);
    pthread_condattr_destroy(&a);
}

static void before_fork(void)
{
    pthread_mutex_lock(&P.mu);
}

static void after_fork_parent(void)
{
    pthread_mutex_unlock(&P.mu);
}

static void after_fork_child(void)
{
    atomic_store(&P.on, false);
    P.ticking = P.drawn = false;
    pthread_mutex_unlock(&P.mu);
    init_cv();
}

static void init_once(void)
{
    init_cv();
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

bool tp_progress_terminal(void)
{
    const char *e = getenv("TP_PROGRESS"), *term = getenv("TERM");
    if ((e && strcmp(e, "0") == 0) || (term && strcmp(term, "dumb") == 0))
        return false;
    return isatty(STDERR_FILENO) == 1;
}

bool tp_progress_on(void)
{
    return atomic_load_explicit(&P.on, memory_order_acquire);
}

/* ---- the arithmetic ---- */

double tp_progress_eta_s(double done, double total, double elapsed_s)
{
    if (total > 0 && done >= total)
        return 0;
    if (!(done > 0) || !(elapsed_s > 0))
        return -1;
    return elapsed_s * (total - done) / done;
}

/* s as m:ss, or h:mm:ss from an hour on; up rounds up (time left). */
static const char *clock_str(double s, bool up, char *b, size_t cap)
{
    if (!(s >= 0))
        s = 0;
    if (s > 9999 * 3600.0)
        s = 9999 * 3600.0;
    unsigned long t = (unsigned long)(up ? ceil(s) : floor(s));
    if (t >= 3600)
        snprintf(b, cap, "%lu:%02lu:%02lu", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(b, cap, "%lu:%02lu", t / 60, t % 60);
    return b;
}

size_t tp_progress_format(char *buf, size_t cap, const char *what, double done, double total,
                          const char *unit, double elapsed_s, double left_s, int columns)
{
    if (cap == 0)
        return 0;
    if (columns < 20)
        columns = 80;
    char tail[160], a[24], b[24];
    int t;
    if (unit && strcmp(unit, "s") == 0)
        t = snprintf(tail, sizeof tail, "%s/%s", clock_str(done, false, a, sizeof a),
                     clock_str(total, false, b, sizeof b));
    else
        t = snprintf(tail, sizeof tail, "%.0f/%.0f%s%s", floor(done > 0 ? done : 0), total,
                     unit && *unit ? " " : "", unit ? unit : "");
    if (elapsed_s >= 0 && t < (int)sizeof tail)
        t += snprintf(tail + t, sizeof tail - (size_t)t, ", %s elapsed",
                      clock_str(elapsed_s, false, a, sizeof a));
    if (left_s >= 0 && t < (int)sizeof tail)
        snprintf(tail + t, sizeof tail - (size_t)t, ", about %s left",
                 clock_str(left_s, true, a, sizeof a));
    size_t width = (size_t)columns - 1, tl = strlen(tail), wl = what ? strlen(what) : 0;
    /* the figures are what the line is for: a long label gives way */
    size_t room = width > tl + 2 ? width - tl - 2 : 0;
    if (wl > room) {
        wl = room;
        while (wl > 0 && ((unsigned char)what[wl] & 0xC0) == 0x80) /* not inside a character */
            wl--;
    }
    int n =
        wl ? snprintf(buf, cap, "%.*s: %s", (int)wl, what, tail) : snprintf(buf, cap, "%s", tail);
    size_t len = n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
    if (len > width) {
        len = width;
        buf[len] = '\0';
    }
    return len;
}

/* ---- drawing ---- */

static void write_all(const char *s, size_t len)
{
    while (len > 0) {
        ssize_t k = write(P.fd, s, len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return;
        s += k;
        len -= (size_t)k;
    }
}

static int columns(void)
{
    if (P.columns > 0)
        return P.columns;
    struct winsize ws;
    if (ioctl(P.fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
        return ws.ws_col;
    return 80;
}

/* Under P.mu. */
static void draw_locked(uint64_t t)
{
    double el = (double)(t - P.t0_ns) / 1e9;
    bool timed = P.flags & TP_PROGRESS_TIMED;
    double done = timed ? el : atomic_load(&P.done);
    double left = tp_progress_eta_s(done, P.total, el);
    if (P.have_left) {
        left = P.left_s - (double)(t - P.left_at_ns) / 1e9;
        if (left < 0)
            left = -1; /* run out: no honest estimate */
    }
    char line[sizeof P.shown + 4];
    line[0] = '\r';
    size_t n = 1 + tp_progress_format(line + 1, sizeof P.shown, P.what, done, P.total, P.unit,
                                      timed ? -1 : el, left, columns());
    atomic_store(&P.last_ns, t);
    bool gone = atomic_exchange(&P.erased, false);
    /* the same line again: the terminal shows it already */
    if (P.drawn && !gone && strcmp(line + 1, P.shown) == 0)
        return;
    memcpy(P.shown, line + 1, n); /* with its NUL */
    memcpy(line + n, "\033[K", 3);
    write_all(line, n + 3);
    P.drawn = true;
}

/* A draw when one is due (the last a quarter of a second old), by the
 * caller's thread; never waits for the lock. Not with the ticker. */
static void maybe_draw(void)
{
    if (P.flags & TP_PROGRESS_TICK)
        return;
    uint64_t t = now();
    if (t - atomic_load(&P.last_ns) < EVERY_NS || t - P.t0_ns < EVERY_NS)
        return;
    if (pthread_mutex_trylock(&P.mu) != 0)
        return;
    if (atomic_load(&P.on) && t - atomic_load(&P.last_ns) >= EVERY_NS)
        draw_locked(t);
    pthread_mutex_unlock(&P.mu);
}

static void *tick(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&P.mu);
    while (!P.stop) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += (long)EVERY_NS;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&P.cv, &P.mu, &ts);
        uint64_t t = now();
        if (!P.stop && !atomic_load(&P.hidden) && t - P.t0_ns >= EVERY_NS)
            draw_locked(t);
    }
    pthread_mutex_unlock(&P.mu);
    return NULL;
}

/* ---- the calls ---- */

static void set_what(const char *s)
{
    char safe[sizeof P.what];
    snprintf(P.what, sizeof P.what, "%s", tp_text_safe(s, safe, sizeof safe, TP_TEXT_LINE));
}

void tp_progress_begin(bool on, const char *what, double total, const char *unit, unsigned flags)
{
    tp_progress_end();
    if (!on)
        return;
    pthread_once(&once, init_once);
    pthread_mutex_lock(&P.mu);
    P.t0_ns = now();
    atomic_store(&P.last_ns, P.t0_ns);
    atomic_store(&P.done, 0.0);
    atomic_store(&P.hidden, false);
    atomic_store(&P.erased, false);
    P.total = total > 0 ? total : 1;
    P.flags = flags;
    P.have_left = P.drawn = P.stop = false;
    snprintf(P.unit, sizeof P.unit, "%s", unit ? unit : "");
    set_what(what);
    if (flags & TP_PROGRESS_TICK) {
        /* signals stay with the threads that wait for them (tp/intr.h) */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        P.ticking = pthread_create(&P.ticker, NULL, tick, NULL) == 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (!P.ticking)
            P.flags &= ~(unsigned)TP_PROGRESS_TICK;
    }
    atomic_store_explicit(&P.on, true, memory_order_release);
    pthread_mutex_unlock(&P.mu);
}

void tp_progress_what(const char *fmt, ...)
{
    if (!tp_progress_on())
        return;
    char s[sizeof P.what];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s, sizeof s, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&P.mu);
    set_what(s);
    pthread_mutex_unlock(&P.mu);
    atomic_store(&P.hidden, false);
    maybe_draw();
}

void tp_progress_set(double done)
{
    if (!atomic_load_explicit(&P.on, memory_order_acquire)) /* then begin's fields are seen */
        return;
    atomic_store_explicit(&P.done, done, memory_order_relaxed);
    atomic_store_explicit(&P.hidden, false, memory_order_relaxed);
    maybe_draw();
}

void tp_progress_add(double n)
{
    if (!atomic_load_explicit(&P.on, memory_order_acquire))
        return;
    double d = atomic_load_explicit(&P.done, memory_order_relaxed);
    while (!atomic_compare_exchange_weak(&P.done, &d, d + n))
        ;
    atomic_store_explicit(&P.hidden, false, memory_order_relaxed);
    maybe_draw();
}

void tp_progress_total(double total)
{
    if (!tp_progress_on())
        return;
    pthread_mutex_lock(&P.mu);
    P.total = total > 0 ? total : 1;
    pthread_mutex_unlock(&P.mu);
}

void tp_progress_left(double left_s)
{
    if (!tp_progress_on())
        return;
    pthread_mutex_lock(&P.mu);
    P.have_left = left_s >= 0;
    P.left_s = left_s;
    P.left_at_ns = now();
    pthread_mutex_unlock(&P.mu);
}

void tp_progress_hide(void)
{
    if (!tp_progress_on())
        return;
    pthread_mutex_lock(&P.mu);
    atomic_store(&P.hidden, true);
    if (P.drawn)
        write_all(ERASE, sizeof ERASE - 1);
    P.drawn = false;
    atomic_store(&P.last_ns, 0); /* the next update draws at once */
    pthread_mutex_unlock(&P.mu);
}

void tp_progress_end(void)
{
    if (!tp_progress_on())
        return;
    if (P.ticking) {
        pthread_mutex_lock(&P.mu);
        P.stop = true;
        pthread_cond_signal(&P.cv);
        pthread_mutex_unlock(&P.mu);
        pthread_join(P.ticker, NULL);
        P.ticking = false;
    }
    pthread_mutex_lock(&P.mu);
    if (P.drawn)
        write_all(ERASE, sizeof ERASE - 1);
    P.drawn = false;
    atomic_store_explicit(&P.on, false, memory_order_release);
    pthread_mutex_unlock(&P.mu);
}

const char *tp_progress_erase(void)
{
    if (!atomic_load_explicit(&P.on, memory_order_acquire))
        return "";
    atomic_store(&P.erased, true); /* drawn again at the next update */
    atomic_store(&P.last_ns, 0);
    return ERASE;
}

void tp_progress_test_hooks(int fd, uint64_t (*now_ns)(void), int cols)
{
    P.fd = fd >= 0 ? fd : STDERR_FILENO;
    P.now_ns = now_ns;
    P.columns = cols;
}
