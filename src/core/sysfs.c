/* The one reader of kernel files under a root (include/tp/sysfs.h) that
 * provenance (sysinfo.c), the block path (storage/blkpath.c), the node's
 * counters (counters/) and check's facts share. The main idea: a root is a
 * plain prefix, so a snapshot and the live host take the same path, and
 * every file is read with a bound and only when it is a regular file, so a
 * snapshot holding a FIFO or /dev/zero is a fact not seen, never a hang. */
#include "tp/sysfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tp/error.h"
#include "tp/file.h"

int tp_sysfs_vpath(char *out, size_t cap, const char *root, const char *fmt, va_list ap)
{
    size_t r = root ? strlen(root) : 0;
    int n = -1;
    if (r < cap) {
        memcpy(out, root ? root : "", r);
        n = vsnprintf(out + r, cap - r, fmt, ap);
    }
    if (n >= 0 && (size_t)n < cap - r)
        return 0;
    if (cap)
        out[0] = '\0';
    errno = ENAMETOOLONG;
    return -1;
}

int tp_sysfs_path(char *out, size_t cap, const char *root, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = tp_sysfs_vpath(out, cap, root, fmt, ap);
    va_end(ap);
    return rc;
}

long tp_sysfs_read(const char *path, char *buf, size_t cap)
{
    buf[0] = '\0';
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    size_t got = 0;
    while (got + 1 < cap) {
        ssize_t r = read(fd, buf + got, cap - 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            buf[0] = '\0';
            errno = e;
            return -1;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    return (long)got;
}

static void trim_right(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
}

int tp_sysfs_text(const char *path, char *buf, size_t cap)
{
    if (tp_sysfs_read(path, buf, cap) < 0)
        return -1;
    trim_right(buf);
    return 0;
}

int tp_sysfs_line(const char *path, char *buf, size_t cap)
{
    if (tp_sysfs_read(path, buf, cap) < 0)
        return -1;
    buf[strcspn(buf, "\n")] = '\0';
    trim_right(buf);
    return 0;
}

int tp_sysfs_long(const char *path, long long *out)
{
    char buf[64], *end;
    if (tp_sysfs_line(path, buf, sizeof buf) < 0)
        return -1;
    errno = 0;
    long long v = strtoll(buf, &end, 0);
    if (errno == ERANGE)
        return -1;
    if (!buf[0] || *end || end == buf) {
        errno = EINVAL;
        return -1;
    }
    *out = v;
    return 0;
}

int tp_sysfs_u64(const char *path, uint64_t *out)
{
    char buf[64], *end;
    long got = tp_sysfs_read(path, buf, sizeof buf);
    if (got < 0)
        return -1;
    const char *p = buf + strspn(buf, " \t");
    if (got == 0 || *p < '0' || *p > '9') {
        errno = EINVAL;
        return -1;
    }
    errno = 0;
    unsigned long long v = strtoull(p, &end, 0);
    if (errno == ERANGE)
        return -1;
    if (*end && *end != '\n' && *end != ' ') {
        errno = EINVAL;
        return -1;
    }
    *out = v;
    return 0;
}

FILE *tp_sysfs_open(const char *path)
{
    FILE *f;
    tp_error ignored;
    return tp_file_open(path, NULL, TP_FILE_MAX_SYSTEM, TP_FILE_REGULAR, &f, &ignored) == 0 ? f
                                                                                            : NULL;
}

static int by_bytes(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int by_version(const void *a, const void *b)
{
    return strverscmp(*(char *const *)a, *(char *const *)b);
}

int tp_sysfs_list_dir(DIR *d, unsigned flags, bool (*keep)(const char *name),
                      struct tp_sysfs_names *out)
{
    size_t cap = 0;
    struct dirent *e;
    out->v = NULL;
    out->n = 0;
    while ((e = readdir(d)) != NULL) {
        const char *name = e->d_name;
        if (name[0] == '.' &&
            (!(flags & TP_SYSFS_HIDDEN) || !name[1] || (name[1] == '.' && !name[2])))
            continue;
        if (keep && !keep(name))
            continue;
        if (out->n == cap) {
            cap = cap ? 2 * cap : 16;
            char **v = realloc(out->v, cap * sizeof *v);
            if (!v)
                goto oom;
            out->v = v;
        }
        if (!(out->v[out->n] = strdup(name)))
            goto oom;
        out->n++;
    }
    if (out->n > 1)
        qsort(out->v, out->n, sizeof *out->v, flags & TP_SYSFS_NATURAL ? by_version : by_bytes);
    return 0;
oom:
    tp_sysfs_names_free(out);
    errno = ENOMEM;
    return -1;
}

int tp_sysfs_list(const char *path, unsigned flags, bool (*keep)(const char *name),
                  struct tp_sysfs_names *out)
{
    out->v = NULL;
    out->n = 0;
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int rc = tp_sysfs_list_dir(d, flags, keep, out);
    int e = errno;
    closedir(d);
    errno = e;
    return rc;
}

void tp_sysfs_names_free(struct tp_sysfs_names *out)
{
    for (size_t i = 0; i < out->n; i++)
        free(out->v[i]);
    free(out->v);
    out->v = NULL;
    out->n = 0;
}
