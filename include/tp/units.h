/* Parsing and printing of sizes, durations and rates. Sizes accept
 * binary suffixes as iperf3 and fio do (K = KiB = 1024, M, G; "KB" is
 * refused as ambiguous); rates print in decimal units (GB/s = 1e9 B/s,
 * Gbit/s = 1e9 bit/s), the convention of docs/architecture.md. */
#ifndef TP_UNITS_H
#define TP_UNITS_H

#include <stddef.h>
#include <stdint.h>

#include "tp/error.h"

/* The one grammar of sizes and durations, for options and YAML files alike
 * (docs/units.md). A number is digits with an optional fraction and
 * exponent ("4", "1.5", "2e6"; not ".5", "1.", "0x10", "inf"); a unit may
 * follow, after blanks or not. Every error names what and quotes the input
 * as typed. */

/* Parse a size "64", "4K", "4KiB", "1.5M", "0.5MiB", "2G", "1T", "1P", "4096B"
 * into bytes: K M G T P are binary, in either case, with or without "iB";
 * "KB" is refused as ambiguous, a lower-case "b" (bits) is refused. what
 * names the input in the error ("--sizes"). TP_EUSAGE on junk, zero, a
 * fraction that is not a whole number of bytes ("1.3K"), or overflow. */
int tp_parse_size(const char *s, const char *what, uint64_t *bytes, tp_error *err);

/* The same grammar into a double, for files: zero and fractions of a byte
 * are allowed, and a leading '-' (so that the caller's range can say the
 * value must not be negative). TP_EUSAGE on junk or a value that is not
 * finite. */
int tp_parse_size_d(const char *s, const char *what, double *bytes, tp_error *err);

/* Parse a size list: comma-separated sizes and ranges "8-4M" (every power of
 * two from lo to hi inclusive; lo and hi need not be powers of two: lo, then
 * the powers of two above it, then hi). Sorted ascending, duplicates removed.
 * *out is malloc'd. At most 64 entries. */
int tp_parse_size_list(const char *s, const char *what, uint64_t **out, size_t *n, tp_error *err);

/* Parse a duration into nanoseconds, rounded to the nearest: a number and a
 * unit, ns, us (or µs), ms, s, m or min (minute), h, d, w (week), y (365
 * days), or several from the largest down ("1h30m", "2h15m30s", "1m30s");
 * a bare number is seconds and stands alone ("10" is 10 s; "1h30" is
 * refused). TP_EUSAGE on junk, a unit repeated or out of order, or more
 * than 2^64-1 ns (584 years). Zero is allowed: the caller decides. */
int tp_parse_duration(const char *s, const char *what, uint64_t *ns, tp_error *err);

/* The limit every command's --timeout and --time share (docs/units.md):
 * at least 1 ms; 0 is refused, never taken as "no limit". */
#define TP_DURATION_MIN_NS UINT64_C(1000000)

/* tp_parse_duration, and refused ("--timeout: '0' is below 1.00 ms") when
 * under min_ns. */
int tp_parse_duration_min(const char *s, const char *what, uint64_t min_ns, uint64_t *ns,
                          tp_error *err);

/* The same grammar into seconds as a double (the nearest to what was typed:
 * "850ms" is 0.85), for files: a leading '-' is allowed, for the caller's
 * range to refuse; no 584-year limit. TP_EUSAGE on junk or a value that
 * is not finite. */
int tp_parse_duration_s(const char *s, const char *what, double *sec, tp_error *err);

/* Parse a non-negative integer within [lo, hi]. */
int tp_parse_u64(const char *s, const char *what, uint64_t lo, uint64_t hi, uint64_t *out,
                 tp_error *err);

/* Parse a CPU list in the kernel's form ("3", "0-3,8", "0,2") into
 * cpu_set (a cpu_set_t *).
 * TP_EUSAGE naming what on junk, a reversed range, or a CPU beyond
 * CPU_SETSIZE. */
int tp_parse_cpu_list(const char *s, const char *what, void *cpu_set, tp_error *err);

/* "8", "4K", "1M": the shortest exact binary form of bytes, into buf. */
const char *tp_fmt_size(uint64_t bytes, char *buf, size_t cap);

/* Bytes for a reader, with the unit: "512 B", "1 MiB", "4.01 KiB" (exact
 * multiples whole, others to three significant digits), into buf. */
const char *tp_fmt_bytes(uint64_t bytes, char *buf, size_t cap);

/* Latency with three significant digits and a unit chosen by magnitude
 * ("812 ns", "12.3 us", "4.51 ms", "2.00 s"). */
const char *tp_fmt_ns(double ns, char *buf, size_t cap);

/* Bytes per second as GB/s (1e9) with three significant digits. */
const char *tp_fmt_rate(double bytes_per_s, char *buf, size_t cap);

/* Whole dollars with thousands separators: "$1,234,567", "-$12"; from
 * $1e15 on, three significant digits ("$1.06e+24"); "-" for a value that
 * is not finite. */
const char *tp_fmt_money(double usd, char *buf, size_t cap);

/* A duration in seconds in the unit a reader expects at its size: below 2
 * minutes as tp_fmt_ns does ("812 ns", "4.51 ms", "59.2 s"), then "9.6
 * min" below 2 hours, "31.1 h" below 2 days, "4.2 d" below 2 years, "190.0
 * y", from 100000 years on "1.23e+06 y"; "-" when not finite. */
const char *tp_fmt_duration_s(double s, char *buf, size_t cap);

#endif
