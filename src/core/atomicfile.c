/* Atomic file replacement. The new content goes to ".NAME.tmp.XXXXXX" in the
 * target's own folder (rename is only atomic within one filesystem), is
 * fsynced, renamed over the target, and the folder is fsynced so the rename
 * itself survives a crash. Until the rename the target is never touched; any
 * failure before it unlinks the temporary file. A target that is not a
 * regular file (/dev/null, /dev/stdout, a FIFO) cannot be replaced, and must
 * not be: renaming over /dev/null would make it a plain file for every
 * program on the machine. Such a target is written in place; "atomic" has
 * no meaning for a stream. */
#include "tp/atomicfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TMP_TRIES 100

/* Errors that mean the user pointed at a folder they cannot write into. */
static int classify(int errnum)
{
    switch (errnum) {
    case ENOENT:
    case EACCES:
    case ENOTDIR:
    case EROFS:
    case EISDIR: return TP_EUSAGE;
    default: return TP_ESYS;
    }
}

static void fill_suffix(char *x, size_t n)
{
    static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    unsigned char rnd[16];
    if (getrandom(rnd, n, GRND_NONBLOCK) != (ssize_t)n) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        unsigned long v = (unsigned long)ts.tv_nsec ^ ((unsigned long)getpid() << 16);
        for (size_t i = 0; i < n; i++, v = v * 6364136223846793005UL + 1442695040888963407UL)
            rnd[i] = (unsigned char)(v >> 56);
    }
    for (size_t i = 0; i < n; i++)
        x[i] = chars[rnd[i] % (sizeof chars - 1)];
}

/* Create tmp (whose last six bytes are replaced) exclusively; fd or -1. */
static int open_temp(char *tmp)
{
    size_t len = strlen(tmp);
    for (int i = 0; i < TMP_TRIES; i++) {
        fill_suffix(tmp + len - 6, 6);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

/* Make the rename durable. Filesystems that cannot fsync a directory say
 * EINVAL; for them the rename is as durable as it will get. */
static int sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    int e = errno;
    close(fd);
    if (rc < 0 && e != EINVAL && e != ENOTSUP) {
        errno = e;
        return -1;
    }
    return 0;
}

/* A replacement under way: the temporary file beside the target, or the
 * target itself when it is not a regular file (written in place). */
struct tp_atomic {
    char *path, *dir, *tmp; /* tmp NULL: in place */
    FILE *f;
};

static void atomic_free(struct tp_atomic *a)
{
    free(a->path);
    free(a->dir);
    free(a->tmp);
    free(a);
}

int tp_atomic_begin(const char *path, struct tp_atomic **out, FILE **f, tp_error *err)
{
    *out = NULL;
    *f = NULL;
    if (!path || !*path)
        return tp_error_set(err, TP_EUSAGE, "empty output path");
    struct tp_atomic *a = calloc(1, sizeof *a);
    if (!a || !(a->path = strdup(path))) {
        free(a);
        return tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
    }
    struct stat old;
    if (stat(path, &old) == 0 && !S_ISREG(old.st_mode) && !S_ISDIR(old.st_mode)) {
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0 || !(a->f = fdopen(fd, "w"))) {
            int rc = tp_error_errno(err, classify(errno), errno, "%s", path);
            if (fd >= 0)
                close(fd);
            atomic_free(a);
            return rc;
        }
        *out = a;
        *f = a->f;
        return 0;
    }
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
        atomic_free(a);
        return tp_error_set(err, TP_EUSAGE, "%s: names a folder, not a file", path);
    }
    /* The folder: "." for a bare name, "/" for a file at the root. */
    const char *dirsrc = slash ? path : ".";
    size_t dirlen = slash ? (size_t)(slash - path) : 1;
    if (dirlen == 0) {
        dirsrc = "/";
        dirlen = 1;
    }
    a->dir = malloc(dirlen + 1);
    a->tmp = malloc(dirlen + strlen(base) + sizeof "/..tmp.XXXXXX");
    if (!a->dir || !a->tmp) {
        atomic_free(a);
        return tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
    }
    memcpy(a->dir, dirsrc, dirlen);
    a->dir[dirlen] = '\0';
    sprintf(a->tmp, "%s/.%s.tmp.XXXXXX", a->dir, base);
    int fd = open_temp(a->tmp);
    if (fd < 0) {
        int rc = tp_error_errno(err, classify(errno), errno, "%s: cannot create a file in %s",
                                path, a->dir);
        atomic_free(a);
        return rc;
    }
    /* Keep the permissions of the file being replaced, if there is one. */
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
        (void)fchmod(fd, st.st_mode & 07777);
    if (!(a->f = fdopen(fd, "w"))) {
        int rc = tp_error_errno(err, TP_ESYS, errno, "%s", path);
        close(fd);
        unlink(a->tmp);
        atomic_free(a);
        return rc;
    }
    *out = a;
    *f = a->f;
    return 0;
}

void tp_atomic_discard(struct tp_atomic *a)
{
    if (!a)
        return;
    fclose(a->f);
    if (a->tmp)
        unlink(a->tmp);
    atomic_free(a);
}

int tp_atomic_commit(struct tp_atomic *a, tp_error *err)
{
    const char *path = a->path;
    int rc = TP_OK;
    if (fflush(a->f) != 0)
        rc = tp_error_errno(err, TP_ESYS, errno, "%s: write", path);
    else if (a->tmp && fsync(fileno(a->f)) < 0)
        rc = tp_error_errno(err, TP_ESYS, errno, "%s: fsync", path);
    if (fclose(a->f) != 0 && rc == TP_OK)
        rc = tp_error_errno(err, TP_ESYS, errno, "%s: close", path);
    if (rc == TP_OK && a->tmp && rename(a->tmp, path) < 0)
        rc = tp_error_errno(err, classify(errno), errno, "%s: rename", path);
    if (rc != TP_OK && a->tmp)
        unlink(a->tmp);
    else if (a->tmp && sync_dir(a->dir) < 0)
        rc = tp_error_errno(err, TP_ESYS, errno, "%s: replaced, but fsync of folder %s failed",
                            path, a->dir);
    atomic_free(a);
    return rc;
}

int tp_write_atomic(const char *path, const void *data, size_t len, tp_error *err)
{
    struct tp_atomic *a;
    FILE *f;
    int rc = tp_atomic_begin(path, &a, &f, err);
    if (rc)
        return rc;
    if (len > 0 && fwrite(data, 1, len, f) != len) {
        rc = tp_error_errno(err, TP_ESYS, errno, "%s: write", path);
        tp_atomic_discard(a);
        return rc;
    }
    return tp_atomic_commit(a, err);
}
