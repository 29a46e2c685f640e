/* Whole-file reads with a cap and a file-type check (include/tp/file.h).
 * The open never blocks (O_NONBLOCK: a FIFO without a writer opens at once),
 * the type is checked on the open descriptor (no race with a rename), and
 * the read stops one byte past the cap, so /dev/zero costs the cap, not the
 * machine's memory. */
#include "tp/file.h"
#include "tp/intr.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *tp_file_dir_of(const char *path, char *dir, size_t cap)
{
    snprintf(dir, cap, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, cap, ".");
    else
        slash[slash == dir] = '\0';
    return dir;
}

const char *tp_file_type_name(unsigned mode)
{
    switch (mode & S_IFMT) {
    case S_IFREG: return "a regular file";
    case S_IFDIR: return "a folder";
    case S_IFIFO: return "a FIFO";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    default: return "not a regular file";
    }
}

static void size_text(size_t n, char *buf, size_t cap)
{
    if (n >= (1u << 20) && n % (1u << 20) == 0)
        snprintf(buf, cap, "%zu MiB", n >> 20);
    else if (n >= 1024 && n % 1024 == 0)
        snprintf(buf, cap, "%zu KiB", n >> 10);
    else
        snprintf(buf, cap, "%zu bytes", n);
}

int tp_file_read(const char *path, const char *what, size_t max_bytes, unsigned flags, char **out,
                 size_t *len, tp_error *err)
{
    const char *who = path, *w = what ? what : "this file";
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return tp_error_errno(err, TP_EUSAGE, errno, "%s: cannot read", who);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return tp_error_errno(err, TP_EUSAGE, e, "%s: cannot read", who);
    }
    bool regular = S_ISREG(st.st_mode);
    bool stream = S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISSOCK(st.st_mode);
    if (!regular && !(stream && (flags & TP_FILE_STREAM))) {
        close(fd);
        return tp_error_set(err, TP_EUSAGE, "%s: is %s; %s must be a regular file", who,
                            tp_file_type_name((unsigned)st.st_mode), w);
    }
    if (!regular) /* a pipe read blocks until it ends or the cap is reached */
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    char cap_text[32];
    size_text(max_bytes, cap_text, sizeof cap_text);
    if (regular && (uint64_t)st.st_size > max_bytes) {
        close(fd);
        return tp_error_set(err, TP_EUSAGE, "%s: over %s (%lld bytes): too large for %s", who,
                            cap_text, (long long)st.st_size, w);
    }
    /* /proc and /sys report size 0: grow as the text comes */
    size_t cap = regular && st.st_size > 0 ? (size_t)st.st_size + 1 : 8192, n = 0;
    if (cap > max_bytes + 1)
        cap = max_bytes + 1;
    char *buf = malloc(cap + 1);
    int rc = buf ? 0 : tp_error_set(err, TP_ENOMEM, "%s: out of memory", who);
    while (rc == 0) {
        if (n == cap) {
            if (cap > max_bytes) {
                rc = tp_error_set(err, TP_EUSAGE, "%s: over %s: too large for %s", who, cap_text,
                                  w);
                break;
            }
            size_t ncap = cap * 2 > max_bytes + 1 ? max_bytes + 1 : cap * 2;
            char *b = realloc(buf, ncap + 1);
            if (!b) {
                rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", who);
                break;
            }
            buf = b;
            cap = ncap;
        }
        /* a stream that never ends: an interrupt the command asked for
         * (tp_intr_install), pending or arriving in the read, ends it */
        if (!regular && (rc = tp_intr_check(err)) != 0)
            break;
        ssize_t k = read(fd, buf + n, cap - n);
        if (k < 0 && errno == EINTR)
            continue; /* checked above before the next read */
        if (k < 0 && errno == EAGAIN) { /* a socket or a terminal with nothing yet */
            struct pollfd p = {.fd = fd, .events = POLLIN};
            poll(&p, 1, 1000);
            continue;
        }
        if (k < 0) {
            rc = tp_error_errno(err, TP_EUSAGE, errno, "%s: cannot read", who);
            break;
        }
        if (k == 0)
            break;
        n += (size_t)k;
        if (n > max_bytes) {
            rc = tp_error_set(err, TP_EUSAGE, "%s: over %s: too large for %s", who, cap_text, w);
            break;
        }
    }
    close(fd);
    if (rc) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *out = buf;
    if (len)
        *len = n;
    return 0;
}

int tp_file_open(const char *path, const char *what, size_t max_bytes, unsigned flags, FILE **out,
                 tp_error *err)
{
    char *buf;
    size_t len;
    int rc = tp_file_read(path, what, max_bytes, flags, &buf, &len, err);
    if (rc)
        return rc;
    /* fmemopen does not free its buffer: open_memstream cannot read; copy
     * into a stream that owns it */
    FILE *f = fmemopen(NULL, len + 1, "w+");
    if (!f || fwrite(buf, 1, len, f) != len || fseek(f, 0, SEEK_SET) != 0) {
        if (f)
            fclose(f);
        free(buf);
        return tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
    }
    free(buf);
    *out = f;
    return 0;
}

/* The file at path ("-": standard input or output, by fd); false when it
 * does not exist or "-" is not a regular file. */
static bool file_id(const char *path, int std_fd, struct stat *st)
{
    if (strcmp(path, "-") == 0)
        return fstat(std_fd, st) == 0 && S_ISREG(st->st_mode);
    return stat(path, st) == 0;
}

static bool same(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Is out a file whose name ends in ext inside the input folder of
 * identity i, at any depth? */
static bool in_folder(const char *out, const struct stat *i, const char *ext)
{
    size_t len = strlen(out), el = strlen(ext);
    if (len < el || strcmp(out + len - el, ext) != 0)
        return false;
    char dir[4096];
    if (!realpath(out, dir))
        return false;
    for (char *slash; (slash = strrchr(dir, '/'));) {
        slash[slash == dir] = '\0';
        struct stat d;
        if (stat(dir, &d) == 0 && same(&d, i))
            return true;
        if (slash == dir)
            break;
    }
    return false;
}

/* o is x (is: "is", "is also", ...): refused, naming both. x_std: what
 * "-" is as x ("standard input", "standard output"). */
static int clash(const struct tp_file_arg *o, const struct tp_file_arg *x, const char *is,
                 const char *x_std, tp_error *err)
{
    bool o_dash = strcmp(o->path, "-") == 0, x_dash = strcmp(x->path, "-") == 0;
    return tp_error_set(err, TP_EUSAGE,
                        "%s %s%s %s %s %s%s%s%s: writing it would destroy what is read; write "
                        "it elsewhere",
                        o->what, o->path, o_dash ? " (standard output)" : "", is, x->what, x->path,
                        x_dash ? " (" : "", x_dash ? x_std : "", x_dash ? ")" : "");
}

int tp_file_distinct(const struct tp_file_arg *outs, size_t nout, const struct tp_file_arg *ins,
                     size_t nin, tp_error *err)
{
    for (size_t k = 0; k < nout; k++) {
        const struct tp_file_arg *o = &outs[k];
        struct stat so, si;
        if (!o->path || !file_id(o->path, STDOUT_FILENO, &so) || !S_ISREG(so.st_mode))
            continue;
        for (size_t i = 0; i < nin; i++) {
            const struct tp_file_arg *x = &ins[i];
            if (!x->path || !file_id(x->path, STDIN_FILENO, &si))
                continue;
            if (same(&so, &si))
                return clash(o, x, "is", "standard input", err);
            if (S_ISDIR(si.st_mode) && x->folder_ext && strcmp(o->path, "-") != 0 &&
                in_folder(o->path, &si, x->folder_ext))
                return clash(o, x, "is in", "", err);
        }
        for (size_t j = 0; j < k; j++)
            if (outs[j].path && file_id(outs[j].path, STDOUT_FILENO, &si) && same(&so, &si))
                return clash(o, &outs[j], "is also", "standard output", err);
    }
    return 0;
}
