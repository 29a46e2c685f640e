/* Clock selection and TSC calibration. The TSC is used only when the CPU says
 * it is invariant (constant_tsc and nonstop_tsc), so ticks mean the same time
 * on every core and in every power state; its rate is measured against
 * CLOCK_MONOTONIC_RAW over ~20 ms, which bounds the rate error to ~1e-6. */
#include "tp/clock.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool tp_clock_use_tsc_;
uint64_t tp_clock_tsc0_;
uint64_t tp_clock_mult_;
uint64_t tp_clock_skew_ns_;

static struct tp_clock_info info;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static uint64_t raw_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool tsc_invariant(void)
{
#if defined(__x86_64__)
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return false;
    char line[4096];
    bool constant = false, nonstop = false;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) != 0)
            continue;
        constant = strstr(line, " constant_tsc") != NULL;
        nonstop = strstr(line, " nonstop_tsc") != NULL;
        break;
    }
    fclose(f);
    return constant && nonstop;
#else
    return false;
#endif
}

#if defined(__x86_64__)
static void calibrate_tsc(void)
{
    /* Bracket each raw read between two TSC reads and keep the tightest
     * bracket at both ends, so scheduling noise does not bias the rate. */
    uint64_t best0 = UINT64_MAX, t0 = 0, r0 = 0;
    for (int i = 0; i < 50; i++) {
        uint64_t a = __rdtsc(), r = raw_ns(), b = __rdtsc();
        if (b - a < best0) {
            best0 = b - a;
            t0 = a + (b - a) / 2;
            r0 = r;
        }
    }
    uint64_t until = r0 + 20000000u;
    while (raw_ns() < until)
        ;
    uint64_t best1 = UINT64_MAX, t1 = 0, r1 = 0;
    for (int i = 0; i < 50; i++) {
        uint64_t a = __rdtsc(), r = raw_ns(), b = __rdtsc();
        if (b - a < best1) {
            best1 = b - a;
            t1 = a + (b - a) / 2;
            r1 = r;
        }
    }
    double hz = (double)(t1 - t0) * 1e9 / (double)(r1 - r0);
    info.tsc_hz = hz;
    tp_clock_mult_ = (uint64_t)(1e9 / hz * 4294967296.0);
    tp_clock_tsc0_ = __rdtsc();
}
#endif

static void measure(void)
{
    /* read overhead: mean over many back-to-back reads */
    enum { N = 100000 };
    uint64_t a = tp_now_ns();
    uint64_t sink = 0;
    for (int i = 0; i < N; i++)
        sink += tp_now_ns();
    uint64_t b = tp_now_ns();
    info.read_overhead_ns = (double)(b - a) / N;
    (void)sink;
    /* resolution: smallest non-zero difference between consecutive reads */
    uint64_t best = UINT64_MAX, prev = tp_now_ns();
    for (int i = 0; i < 10000; i++) {
        uint64_t now = tp_now_ns();
        if (now > prev && now - prev < best)
            best = now - prev;
        prev = now;
    }
    info.resolution_ns = best == UINT64_MAX ? 1.0 : (double)best;
}

static void init_once(void)
{
    const char *force = getenv("TP_CLOCK");
    bool want_tsc = !(force && strcmp(force, "gettime") == 0);
#if defined(__x86_64__)
    if (want_tsc && tsc_invariant()) {
        calibrate_tsc();
        tp_clock_use_tsc_ = true;
        info.source = "tsc";
    }
#else
    (void)want_tsc;
#endif
    if (!tp_clock_use_tsc_)
        info.source = "clock_gettime(CLOCK_MONOTONIC_RAW)";
    const char *skew = getenv("TP_CLOCK_SKEW_NS");
    if (skew)
        tp_clock_skew_ns_ = strtoull(skew, NULL, 10);
    measure();
}

void tp_clock_init(void)
{
    pthread_once(&once, init_once);
}

const struct tp_clock_info *tp_clock_info(void)
{
    tp_clock_init();
    return &info;
}

void tp_utc_iso8601(char *buf, unsigned long cap)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    char base[32];
    strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, cap, "%s.%03ldZ", base, ts.tv_nsec / 1000000);
}
