/* Internal to the fact collectors (src/check/facts*.c): the collection
 * context, the root-relative file helpers they share (facts_util.c) and
 * the collectors the driver (facts.c) calls. Every kernel path
 * is written as it is on a live system ("/sys/class/net") and read under
 * the context's root, so a snapshot folder and the live host take the same
 * code path; only the few facts the kernel does not expose as files
 * (addresses, nftables, time, RDMA netns mode) branch on fx->live. */
#ifndef TP_FACTS_INT_H
#define TP_FACTS_INT_H

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "tp/sysfs.h"

struct fx {
    char root[PATH_MAX]; /* "" when live, else the snapshot folder without trailing '/' */
    bool live;
    json_t *facts;   /* the object being filled */
    json_t *missing; /* facts.missing */
    bool oom;        /* an allocation failed somewhere: the driver returns TP_ENOMEM */
};

/* How the collectors list a folder (tp_sysfs_list, include/tp/sysfs.h):
 * strverscmp order (nvme2 before nvme10), names that start with a dot kept
 * (a secrets scan must see ".ssh"). */
#define FX_LIST (TP_SYSFS_NATURAL | TP_SYSFS_HIDDEN)

/* root + the formatted kernel path into out[PATH_MAX]; -1 when it does not
 * fit (the caller treats that as "absent"). */
int tp__check_fx_path(const struct fx *c, char *out, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A formatted path into out[PATH_MAX]; when it does not fit, out becomes ""
 * (which no open finds) and -1 is returned. */
int tp__check_fx_fmt(char *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* tp_sysfs_text (include/tp/sysfs.h: the small regular file's text,
 * trailing blanks cut) of a root-relative kernel path; 0, or -1 with errno
 * set. */
int tp__check_fx_read(const struct fx *c, char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* tp_sysfs_long of the file as a long; -1 when absent or not a number. */
int tp__check_fx_long_abs(const char *path, long *out);
int tp__check_fx_long(const struct fx *c, long *out, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The whole file (at most max bytes), NUL-terminated, in a new buffer;
 * NULL when it cannot be read (errno set). *len gets the length when len is
 * not NULL. */
char *tp__check_fx_slurp_abs(const char *path, size_t max, size_t *len);

/* The JSON file at path (a regular file under TP_FILE_MAX_DOC), or NULL
 * with why (cap bytes) saying what was wrong, file and line included. */
json_t *tp__check_fx_json(const char *path, char *why, size_t cap);

/* The last component of the symlink at path, into buf; -1 when not a link. */
int tp__check_fx_link_base(const char *path, char *buf, size_t cap);

/* True for "<prefix><digits>" names: cpu12, node0, nvme3. */
bool tp__check_fx_prefixed_number(const char *name, const char *prefix);

/* True when the path exists (following links) and is a folder. */
bool tp__check_fx_is_dir(const char *path);

/* Append {"part", "reason"} to facts.missing: the node lacks the part (no
 * RDMA device, no nvmet, IPv6 off), so the rules that need it SKIP. */
void tp__check_fx_missing(struct fx *c, const char *part, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Append {"part", "reason", "unseen": true}: a part every Linux node has
 * (sys/class/net, proc/sys, proc/meminfo, the nftables ruleset, the clock)
 * that could not be read, so the facts say nothing of it and the rules
 * that need it are UNKNOWN, not SKIP. */
void tp__check_fx_unseen(struct fx *c, const char *part, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* JSON values that never fail silently: on allocation failure they set
 * c->oom and return NULL, and tp__check_fx_set/tp__check_fx_push accept that NULL. */
json_t *tp__check_fx_str(struct fx *c, const char *s);          /* string, or null for NULL */
json_t *tp__check_fx_int(struct fx *c, bool ok, long v);        /* integer, or null when !ok */
json_t *tp__check_fx_long_json(struct fx *c, const char *path); /* tp__check_fx_long_abs, or null */
json_t *tp__check_fx_obj(struct fx *c);
json_t *tp__check_fx_arr(struct fx *c);
void tp__check_fx_set(struct fx *c, json_t *obj, const char *key, json_t *v);
void tp__check_fx_push(struct fx *c, json_t *arr, json_t *v);

/* Run argv (searched in PATH) with no stdin and no stderr, and collect at
 * most cap-1 bytes of its stdout into buf, NUL-terminated. Kills it after
 * timeout_ms. 0 when it exited 0, else -1 (reason in why[128]). */
int tp__check_fx_run(char *const argv[], char *buf, size_t cap, int timeout_ms, char *why);

/* The collectors, called by the driver (facts.c) only. Each adds its keys
 * to c->facts (in the order of docs/check.md) and reports what it could
 * not read in c->missing. */
void tp__check_fx_net_interfaces(struct fx *c); /* interfaces (facts_net.c) */
void tp__check_fx_net_routes(struct fx *c);     /* routes (facts_net.c) */
void tp__check_fx_net_listeners(struct fx *c);  /* listeners (facts_net.c) */
void tp__check_fx_net_nftables(struct fx *c);   /* nftables (facts_net.c) */
void tp__check_fx_sysctl(struct fx *c);         /* sysctl, network and kernel (facts_sysctl.c) */
void tp__check_fx_node_rdma(struct fx *c);      /* rdma (facts_node.c) */
void tp__check_fx_storage(struct fx *c);        /* nvme_hosts, nvme_multipath, nvmet */
void tp__check_fx_node(struct fx *c);           /* cpu, gpus, memory, iommu, time (facts_node.c) */

#endif
