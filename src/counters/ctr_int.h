/* Internal to src/counters: the sources of a snapshot as rows of a table
 * (counters.c), one file each (src_rdma.c, src_netdev.c, src_ethtool.c,
 * src_tcp.c, src_pcie.c), and the helpers they share. Adding a source is
 * one file, one row and one enum value in include/tp/counters.h. */
#ifndef TP_CTR_INT_H
#define TP_CTR_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tp/counters.h"
#include "tp/sysfs.h"

/* One snapshot being taken. */
struct tp__ctr_ctx {
    const char *root; /* "" for this node, else the folder without a trailing / */
    bool live;        /* root is this node: ioctls and sockets may be used */
    bool links_only;  /* tp_ctr_snapshot_links: the PCIe links' levels alone */
    struct tp_ctr_snap *snap;
    tp_error *err;
};

struct tp__ctr_source {
    enum tp_ctr_source id;
    const char *name; /* "rdma" ... as in documents */
    /* Read this source's counters into c->snap; 0, or TP_ENOMEM (a file
     * that is missing or unreadable is skipped, not an error). */
    int (*read)(struct tp__ctr_ctx *c);
};

extern const struct tp__ctr_source tp__ctr_rdma, tp__ctr_netdev, tp__ctr_ethtool, tp__ctr_tcp,
    tp__ctr_pcie;

/* Add a counter (dev and name cut to fit); 0 or TP_ENOMEM. */
int tp__ctr_add(struct tp__ctr_ctx *c, enum tp_ctr_source s, const char *dev, const char *name,
                uint64_t value, bool level);

/* Note a device as seen (its counters may be none); 0 or TP_ENOMEM. */
int tp__ctr_dev(struct tp__ctr_ctx *c, enum tp_ctr_source s, const char *dev);

/* out[cap] = the root, then the formatted path (which starts with "/"),
 * by tp_sysfs_path; false when it does not fit. The files themselves are
 * read with tp_sysfs_read and tp_sysfs_u64 (include/tp/sysfs.h). */
bool tp__ctr_path(const struct tp__ctr_ctx *c, char *out, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Frees n strings and the array that holds them. */
void tp__ctr_names_free(char **names, size_t n);

/* The names in folder rel under the root (no dot entries, strcmp order;
 * its path into base[cap]); free with tp_sysfs_names_free. 0 (none when it
 * is missing) or TP_ENOMEM, set in c->err. */
int tp__ctr_list_under(struct tp__ctr_ctx *c, const char *rel, char *base, size_t cap,
                       struct tp_sysfs_names *names);

/* Every file in folder path whose text is one unsigned number, as a
 * counter of dev named after the file. 0 or TP_ENOMEM. */
int tp__ctr_numbers_in(struct tp__ctr_ctx *c, enum tp_ctr_source s, const char *dev,
                       const char *path);

/* The sentence of a class that names a cause (explain.c); NULL for
 * traffic and other. */
const char *tp__ctr_class_text(enum tp_ctr_class c);

#endif
