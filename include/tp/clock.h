/* Monotonic clock for measurement. On x86-64 with an invariant TSC
 * (constant_tsc + nonstop_tsc) the clock reads the TSC and converts ticks to
 * nanoseconds with a factor calibrated against CLOCK_MONOTONIC_RAW; elsewhere
 * it reads clock_gettime(CLOCK_MONOTONIC_RAW). tp_now_ns() is inline so a
 * timing loop pays one instruction sequence, not a call. Deadlines are
 * absolute tp_now_ns() values. */
#ifndef TP_CLOCK_H
#define TP_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

struct tp_clock_info {
    const char *source;      /* "tsc" or "clock_gettime(CLOCK_MONOTONIC_RAW)" */
    double tsc_hz;           /* calibrated TSC frequency, 0 when not used */
    double resolution_ns;    /* smallest observed non-zero step between reads */
    double read_overhead_ns; /* mean cost of one tp_now_ns() */
};

/* internal state read by the inline fast path; set once by tp_clock_init */
extern bool tp_clock_use_tsc_;
extern uint64_t tp_clock_tsc0_;
extern uint64_t tp_clock_mult_;    /* ns per tick, 32.32 fixed point */
extern uint64_t tp_clock_skew_ns_; /* test hook: TP_CLOCK_SKEW_NS shifts this process's clock */

/* Choose and calibrate the clock (about 20 ms the first time; later calls
 * return at once). Thread-safe. Never fails: without a usable TSC it falls
 * back to clock_gettime. Set TP_CLOCK=gettime in the environment to force the
 * fallback. TP_CLOCK_SKEW_NS=N (tests of clock-offset estimation) makes this
 * process's clock read N ns ahead. */
void tp_clock_init(void);

/* What tp_clock_init chose, with measured resolution and read overhead. */
const struct tp_clock_info *tp_clock_info(void);

/* Nanoseconds since an arbitrary fixed origin; monotonic. tp_clock_init must
 * have run. */
static inline uint64_t tp_now_ns(void)
{
#if defined(__x86_64__)
    if (tp_clock_use_tsc_) {
        uint64_t d = __rdtsc() - tp_clock_tsc0_;
        return (uint64_t)(((unsigned __int128)d * tp_clock_mult_) >> 32) + tp_clock_skew_ns_;
    }
#endif
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + tp_clock_skew_ns_;
}

/* Absolute deadline ms milliseconds from now. */
static inline uint64_t tp_deadline_ms(uint64_t ms)
{
    return tp_now_ns() + ms * 1000000u;
}

/* Milliseconds left before deadline (0 when passed), rounded up, clamped to
 * INT32_MAX so it can be handed to poll(). */
static inline int tp_deadline_left_ms(uint64_t deadline)
{
    uint64_t now = tp_now_ns();
    if (now >= deadline)
        return 0;
    uint64_t left = (deadline - now + 999999u) / 1000000u;
    return left > 0x7fffffff ? 0x7fffffff : (int)left;
}

/* Wall-clock UTC time as ISO 8601 "2026-11-30T11:17:35.123Z" into buf (>= 32). */
void tp_utc_iso8601(char *buf, unsigned long cap);

#endif
