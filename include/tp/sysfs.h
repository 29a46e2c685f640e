/* Kernel files under a root: sysfs attributes, /proc files and the folders
 * that hold them, read the same way from the live host (root "" or NULL)
 * and from a snapshot folder (--root, --sysfs-root), so that a snapshot is
 * described exactly as the live machine is. A file that cannot be read is
 * an answer ("absent"), not an error to report: every function returns -1
 * with errno saying why, and the caller turns that into a null fact. */
#ifndef TP_SYSFS_H
#define TP_SYSFS_H

#include <dirent.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* out[cap] = root, then the formatted path (a kernel path such as
 * "/sys/class/net/%s"). root "" or NULL is the live host. The root is
 * written as given and the path appended to it, "/r/" + "/sys" giving
 * "/r//sys", which opens as "/r/sys": a prefix, not a jail (nothing is
 * resolved and a ".." is not refused; the paths are the kernel's names).
 * 0, or -1 with errno ENAMETOOLONG when it does not fit; out is then "",
 * which no open finds. */
int tp_sysfs_path(char *out, size_t cap, const char *root, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int tp_sysfs_vpath(char *out, size_t cap, const char *root, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

/* The regular file at path, at most cap - 1 bytes of it, into buf and
 * NUL-terminated: the bytes read (0 for an empty file), or -1 with errno
 * set (ENOENT when absent, EINVAL when it is not a regular file: a FIFO or
 * a device in a snapshot is refused, never waited on or read forever; the
 * read's error, as sysfs' EINVAL for a link that is down). buf is "" on
 * failure. cap must be at least 1. */
long tp_sysfs_read(const char *path, char *buf, size_t cap);

/* tp_sysfs_read with the trailing blanks (newline, CR, space, tab) cut:
 * the whole text of a small file. 0, or -1 with errno as tp_sysfs_read. */
int tp_sysfs_text(const char *path, char *buf, size_t cap);

/* The first line of the file at path (at most cap - 1 bytes), without its
 * newline and trailing blanks: an attribute's value. An empty file is an
 * empty line. 0, or -1 with errno as tp_sysfs_read. */
int tp_sysfs_line(const char *path, char *buf, size_t cap);

/* The first line of the file at path as one integer, decimal or 0x hex
 * (leading blanks allowed, nothing after it): -1 with errno as
 * tp_sysfs_read when the file cannot be read, EINVAL when the line is empty
 * or not such a number, ERANGE when it does not fit; *out is set only on
 * success. */
int tp_sysfs_long(const char *path, long long *out);

/* The number a counter file starts with: spaces or tabs, then digits
 * (decimal or 0x hex), then the end of the file, or a newline or a space
 * and whatever follows it (a driver's "12 (bytes)"); no sign. The first
 * 63 bytes are read. -1 with errno as tp_sysfs_long when there is none;
 * *out is set only on success. */
int tp_sysfs_u64(const char *path, uint64_t *out);

/* The file at path as a read-only stream for a line-by-line parser (a
 * /proc table), NULL when it cannot be read, is not a regular file or is
 * over TP_FILE_MAX_SYSTEM: a FIFO or an endless file in a snapshot is a
 * fact not seen, not a hang. */
FILE *tp_sysfs_open(const char *path);

/* A folder's entry names, sorted. */
struct tp_sysfs_names {
    char **v;
    size_t n;
};

enum tp_sysfs_list_flags {
    TP_SYSFS_NATURAL = 1u, /* strverscmp order (nvme2 before nvme10); else strcmp order */
    TP_SYSFS_HIDDEN = 2u,  /* keep names that start with '.' ("." and ".." never) */
};

/* The names in the folder at path for which keep (NULL: all) says yes,
 * sorted as flags say, into out (free with tp_sysfs_names_free). 0, or -1
 * with errno set (the folder's open error, or ENOMEM); out is then empty. */
int tp_sysfs_list(const char *path, unsigned flags, bool (*keep)(const char *name),
                  struct tp_sysfs_names *out);

/* tp_sysfs_list of a folder already open as d (read, not closed): for a
 * walk by file descriptor. 0, or -1 with errno ENOMEM; out is then empty. */
int tp_sysfs_list_dir(DIR *d, unsigned flags, bool (*keep)(const char *name),
                      struct tp_sysfs_names *out);

/* Frees the names and empties out (a second call does nothing). */
void tp_sysfs_names_free(struct tp_sysfs_names *out);

#endif
