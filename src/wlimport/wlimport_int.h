/* Internal to src/wlimport/: the input stream every format reads (input.c:
 * a file or standard input, gzip undone, a UTF-8 BOM dropped, hashed as
 * read), the format table's row (import.c holds the table, one file a
 * row), the kinds' table (kinds.c), torch's element types, and what the
 * rows share (part.c). Non-static names here are tp__wl_*. */
#ifndef TP_WLIMPORT_INT_H
#define TP_WLIMPORT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>
#include <pthread.h>
#include <zlib.h>

#include "tp/wlimport.h"

#define TP__WL_PEEK 65536u /* what detection sees: the first bytes, gzip undone */

/* One input file as a stream of its content. */
struct tp__wl_in {
    const char *path; /* as given; "-" is standard input */
    int fd;
    bool gz, eof, zend;
    z_stream z;
    unsigned char raw[1u << 18];     /* read from the file, not yet inflated */
    size_t raw_n;                    /* bytes in raw from z.next_in on */
    unsigned char peek[TP__WL_PEEK]; /* the first bytes, read again by the row */
    size_t peek_n, peek_at;
    uint64_t bytes;  /* content bytes handed out so far */
    EVP_MD_CTX *sha; /* SHA-256 (libcrypto: the CPU's SHA extensions where it has them) */
    bool hasher;     /* a regular file: a thread of its own hashes it (hash_fd) */
    int hash_fd;
    pthread_t hash_thread;
};

/* Open path ("-": standard input) and read its first bytes into peek
 * (gzip undone when the file starts with gzip's magic; a UTF-8 BOM
 * dropped). TP_EUSAGE naming path: it cannot be opened, is a folder, or
 * its gzip stream is broken. */
int tp__wl_in_open(struct tp__wl_in *in, const char *path, tp_error *err);

/* Up to cap bytes of content into buf (*got 0: the end). TP_EUSAGE naming
 * the path (a read error, a broken gzip stream), TP_EINTR/TP_ETERM when a
 * signal came. */
int tp__wl_in_read(struct tp__wl_in *in, void *buf, size_t cap, size_t *got, tp_error *err);

/* Close; hex gets the SHA-256 of the file's bytes read (all of them after
 * the content's end, unless an interrupt was recorded: then what was read,
 * and the rest of a pipe is not waited for). */
void tp__wl_in_close(struct tp__wl_in *in, char hex[65]);

/* A format: one row of import.c's table. */
struct tp__wlimport_format {
    const char *name; /* --from NAME, and the output's source */
    const char *what; /* for messages: "a torch.profiler trace" */
    /* whether the content's first len bytes (NUL-terminated) are this format */
    bool (*detect)(const char *text, size_t len);
    /* fill p from the stream; warnings as tp_wlimport_read's; TP_EUSAGE
     * naming the path when nothing usable is there */
    int (*read)(struct tp__wl_in *in, struct tp_wlimport_part *p, json_t *warnings, tp_error *err);
};

extern const struct tp__wlimport_format tp__wlimport_kineto, tp__wlimport_nccl_log;

/* Add "path:line: why" (line 0: "path: why") to warnings (NULL: nothing). */
void tp__wlimport_warn(json_t *warnings, const char *path, unsigned long line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* How a kind's input and output relate (kinds.c). */
enum tp__wl_shape {
    TP__WL_SAME,  /* one buffer's size: the input's (allreduce; an all-to-all's send
                     buffer, its output may differ by the splits) */
    TP__WL_OUT_N, /* the output is n inputs (allgather) */
    TP__WL_IN_N,  /* the input is n outputs (reduce-scatter) */
};
enum tp__wl_shape tp__wl_kind_shape(int kind);

/* The nccl-tests size of a call of kind over n ranks (0: unknown) from its
 * input and output bytes (either TP_WL_UNSIZED: unknown). TP_WL_UNSIZED
 * when neither is known, or when the one known cannot give the other
 * without n. */
uint64_t tp__wl_size(int kind, uint64_t in_bytes, uint64_t out_bytes, unsigned n);

/* torch's element type names: args' "dtype" exactly ("BFloat16"), or
 * "Input type" ("c10::BFloat16", "float"): the element's bytes and
 * trainpath's name; 0 and NULL when not one. */
size_t tp__wl_torch_dtype(const char *s, size_t len, const char **name);

/* Grow the array *a of *n elements of size sz by one, zeroed, and return
 * it; NULL (and *a, *n unchanged) when out of memory. The capacity is
 * implied by *n: 16, then each next power of two, so an array needs no
 * field of its own for it. */
void *tp__wl_grow(void **a, size_t *n, size_t sz);

/* A part's arrays, grown by one (a step, a collective, a group): the new
 * element zeroed (times TP_WL_NONE), or NULL when out of memory. */
struct tp_wlimport_step *tp__wl_add_step(struct tp_wlimport_part *p);
struct tp_wlimport_coll *tp__wl_add_coll(struct tp_wlimport_part *p);
/* The group named name (added, with desc, when new); -1 out of memory. */
int tp__wl_group(struct tp_wlimport_part *p, const char *name, size_t len, const char *desc);

#endif
