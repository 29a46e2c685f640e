/* Provenance of a result: what machine, kernel, CPU, NICs and libraries
 * produced it. Read from uname, /proc and /sys (under root, so tests can
 * point at a snapshot). */
#ifndef TP_SYSINFO_H
#define TP_SYSINFO_H

#include <jansson.h>
#include <stdint.h>

/* JSON object {"host","kernel","os","cpu":{"model","logical_cores","online"},
 * "nics":[{"name","speed_mbps","mtu","driver","state","addresses"}...],
 * "libraries":{"libfabric","jansson","libsodium"}}. root is "" or NULL for the
 * live system, else a directory holding proc/ and sys/ (host and kernel
 * still come from uname). Missing facts are null, never an error. Returns a
 * new reference, NULL only when out of memory. */
json_t *tp_sysinfo_json(const char *root);

/* JSON object {"pid", "affinity": "0-3,8", "cpus_allowed": N} of the calling
 * process: where its threads may run, which decides what a latency figure
 * means (two ends on one core, or across cores or sockets). */
json_t *tp_process_json(void);

/* MemAvailable from /proc/meminfo in bytes (0 when it cannot be read): what
 * a run may allocate without pushing the page cache or other work out. */
uint64_t tp_mem_available(void);

#endif
