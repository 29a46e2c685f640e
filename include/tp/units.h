/* Parsing and printing of sizes, durations and rates. Sizes accept
 * binary suffixes as iperf3 and fio do (K = KiB = 1024, M, G; "KB" is
 * refused as ambiguous); rates print in decimal units (GB/s = 1e9 B/s,
 * Gbit/s = 1e9 bit/s), the convention of docs/architecture.md. */
#ifndef TP_UNITS_H
#define TP_UNITS_H

#include <stddef.h>
#include <stdint.h>

#include "tp/error.h"

/* Parse "64", "4K", "4KiB", "1M", "2G" into bytes. what names the input in
 * the error ("--sizes"). TP_EUSAGE on junk, zero, or overflow. */
int tp_parse_size(const char *s, const char *what, uint64_t *bytes, tp_error *err);

/* Parse a size list: comma-separated sizes and ranges "8-4M" (every power of
 * two from lo to hi inclusive; lo and hi need not be powers of two: lo, then
 * the powers of two above it, then hi). Sorted ascending, duplicates removed.
 * *out is malloc'd. At most 64 entries. */
int tp_parse_size_list(const char *s, const char *what, uint64_t **out, size_t *n, tp_error *err);

/* Parse a duration "10", "10s", "500ms", "2m", "1.5s", "2h", "3d", "1y" (365
 * days) into nanoseconds. */
int tp_parse_duration(const char *s, const char *what, uint64_t *ns, tp_error *err);

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

/* Latency with three significant digits and a unit chosen by magnitude
 * ("812 ns", "12.3 us", "4.51 ms", "2.00 s"). */
const char *tp_fmt_ns(double ns, char *buf, size_t cap);

/* Bytes per second as GB/s (1e9) with three significant digits. */
const char *tp_fmt_rate(double bytes_per_s, char *buf, size_t cap);

/* Whole dollars with thousands separators: "$1,234,567", "-$12"; "-" for
 * a value that is not finite. */
const char *tp_fmt_money(double usd, char *buf, size_t cap);

/* A duration in seconds in the unit a reader expects at its size: below 2
 * minutes as tp_fmt_ns does ("812 ns", "4.51 ms", "59.2 s"), then "9.6
 * min" below 2 hours, "31.1 h" below 2 days, "4.2 d"; "-" when not finite. */
const char *tp_fmt_duration_s(double s, char *buf, size_t cap);

#endif
