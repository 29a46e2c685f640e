/* Internal to the fact collectors (src/check/facts*.c): the collection
 * context and the root-relative file helpers they share. Every kernel path
 * is written as it is on a live system ("/sys/class/net") and read under
 * the context's root, so a snapshot folder and the live host take the same
 * code path; only the few facts the kernel does not expose as files
 * (addresses, nftables, time, RDMA netns mode) branch on fx->live. */
#ifndef TP_FACTS_INT_H
#define TP_FACTS_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

struct fx {
    char root[PATH_MAX]; /* "" when live, else the snapshot folder without trailing '/' */
    bool live;
    json_t *facts;   /* the object being filled */
    json_t *missing; /* facts.missing */
    bool oom;        /* an allocation failed somewhere: the driver returns TP_ENOMEM */
};

/* A sorted list of names (strverscmp order: nvme2 before nvme10). */
struct fx_names {
    char **v;
    size_t n;
};

/* root + the formatted kernel path into out[PATH_MAX]; -1 when it does not
 * fit (the caller treats that as "absent"). */
int fx_path(const struct fx *c, char *out, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A formatted path into out[PATH_MAX]; when it does not fit, out becomes ""
 * (which no open finds) and -1 is returned. */
int fx_fmt(char *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The small file at the absolute path, trailing whitespace trimmed, into
 * buf; 0, or -1 with errno set when it cannot be opened or read. */
int fx_read_abs(const char *path, char *buf, size_t cap);

/* fx_read_abs of a root-relative kernel path. */
int fx_read(const struct fx *c, char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The file as one decimal (or 0x hex) integer; -1 when absent or not a number. */
int fx_long_abs(const char *path, long *out);
int fx_long(const struct fx *c, long *out, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The whole file (at most max bytes), NUL-terminated, in a new buffer;
 * NULL when it cannot be read (errno set). *len gets the length when len is
 * not NULL. */
char *fx_slurp_abs(const char *path, size_t max, size_t *len);

/* The last component of the symlink at path, into buf; -1 when not a link. */
int fx_link_base(const char *path, char *buf, size_t cap);

/* Names in the folder at path for which keep (NULL: all but "." and "..")
 * says yes, sorted. -1 with errno when the folder cannot be opened; out is
 * then empty. Free with fx_names_free. */
int fx_list(const char *path, bool (*keep)(const char *name), struct fx_names *out);
void fx_names_free(struct fx_names *n);

/* True for "<prefix><digits>" names: cpu12, node0, nvme3. */
bool fx_prefixed_number(const char *name, const char *prefix);

/* True when the path exists (following links) and is a folder. */
bool fx_is_dir(const char *path);

/* Append {"part", "reason"} to facts.missing. */
void fx_missing(struct fx *c, const char *part, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* JSON values that never fail silently: on allocation failure they set
 * c->oom and return NULL, and fx_set/fx_push accept that NULL. */
json_t *fx_str(struct fx *c, const char *s);          /* string, or null for NULL */
json_t *fx_int(struct fx *c, bool ok, long v);        /* integer, or null when !ok */
json_t *fx_long_json(struct fx *c, const char *path); /* fx_long_abs, or null */
json_t *fx_obj(struct fx *c);
json_t *fx_arr(struct fx *c);
void fx_set(struct fx *c, json_t *obj, const char *key, json_t *v);
void fx_push(struct fx *c, json_t *arr, json_t *v);

/* Run argv (searched in PATH) with no stdin and no stderr, and collect at
 * most cap-1 bytes of its stdout into buf, NUL-terminated. Kills it after
 * timeout_ms. 0 when it exited 0, else -1 (reason in why[128]). */
int fx_run(char *const argv[], char *buf, size_t cap, int timeout_ms, char *why);

/* The collectors. Each adds its keys to c->facts (in the order of
 * docs/check.md) and reports what it could not read in c->missing. */
void fx_net_interfaces(struct fx *c); /* interfaces */
void fx_net_routes(struct fx *c);     /* routes */
void fx_net_listeners(struct fx *c);  /* listeners */
void fx_net_nftables(struct fx *c);   /* nftables */
void fx_sysctl(struct fx *c);         /* sysctl (network and kernel) */
void fx_node_rdma(struct fx *c);      /* rdma */
void fx_storage(struct fx *c);        /* nvme_hosts, nvme_multipath, nvmet */
void fx_node(struct fx *c);           /* cpu, gpus, memory, iommu, time */

/* The kernel.* sysctls, added to the sysctl object by fx_sysctl. */
void fx_node_sysctls(struct fx *c, json_t *sysctl);

#endif
