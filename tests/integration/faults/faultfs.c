/* faultfs: a FUSE passthrough filesystem over a backing folder that fails
 * on demand, for the storage fault tests (faults_storage.sh).
 *
 *   faultfs BACKING MOUNTPOINT [-f] [-o OPTIONS]
 *
 * Every operation goes to the same path under BACKING. The faults are set
 * through a control file at the root of the mount, "/.faultfs", which no
 * listing shows: write "KEY=VALUE" words to it (several per write, any
 * order), read it for the settings and the counters.
 *
 *   write_error=EIO|ENOSPC|none  the error of the write that would take the
 *                                bytes accepted past write_after
 *   write_after=BYTES            bytes accepted before it (K, M, G: binary);
 *                                setting either restarts the count
 *   fsync_error=EIO|none         a file's fsync and fdatasync fail
 *   fsyncdir_error=EIO|none      a folder's fsync fails
 *   fsync_delay_ms=MS            each of these syncs takes MS longer (a slow
 *                                disk)
 *   write_delay_ms=MS            each write request takes MS longer
 *   unlink_wait_ms=MS            see below (default 500; not zeroed by reset)
 *   reset                        no fault, counters to zero
 *
 * A write that would cross the limit fails whole (nothing of it written),
 * so the limit is exact when it is a multiple of the writer's request
 * size; max_write is raised to 1 MiB so a 1 MiB write is one request. The
 * counters (writes, write_bytes, fsyncs, fsyncdirs, faults, kept_open)
 * show that the requests reached the filesystem: the kernel's own path,
 * whatever engine issued them. Every injected fault is also logged on
 * stderr.
 *
 * Unlinking a file that is still open behaves as on NFS: the file is
 * renamed to ".faultfs-silly-INO" in its folder (NFS: ".nfsXXXX") and
 * removed at its last close, so the folder cannot be removed until then.
 * The kernel tells a FUSE filesystem of a close only after close()
 * returned, so unlink first waits up to unlink_wait_ms for the file's
 * handles to go, and keeps only a file its writer still holds. 0 is as
 * strict as NFS, but then a file just closed may now and then be kept too;
 * it catches every time an io_uring ring whose registered files outlive
 * the close (before src/storage/eng_uring.c unregistered them: kept_open
 * counted each shard of a failed checkpoint). */
#define FUSE_USE_VERSION 31
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define CTL "/.faultfs"
#define CTL_FH UINT64_MAX

static int backing = -1; /* the backing folder, every path is relative to it */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int write_error, fsync_error, fsyncdir_error; /* errno, 0 for none */
    uint64_t write_after;                         /* bytes accepted before write_error */
    unsigned fsync_delay_ms, write_delay_ms;
    unsigned unlink_wait_ms;
    uint64_t written; /* bytes accepted since the limit was set */
    uint64_t writes, write_bytes, fsyncs, fsyncdirs, faults;
    uint64_t kept_open; /* files unlinked while still open */
} st;

static void logf_(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "faultfs: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* path "/a/b" as a path relative to the backing folder ("." for "/"). */
static const char *rel(const char *path)
{
    return path[1] ? path + 1 : ".";
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* ---- the control file ---- */

static int parse_errno(const char *v, int *out)
{
    if (strcmp(v, "EIO") == 0)
        *out = EIO;
    else if (strcmp(v, "ENOSPC") == 0)
        *out = ENOSPC;
    else if (strcmp(v, "none") == 0 || strcmp(v, "0") == 0)
        *out = 0;
    else
        return -1;
    return 0;
}

static int parse_u64(const char *v, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || end == v)
        return -1;
    unsigned shift = 0;
    switch (*end) {
    case 'K':
        shift = 10;
        end++;
        break;
    case 'M':
        shift = 20;
        end++;
        break;
    case 'G':
        shift = 30;
        end++;
        break;
    default: break;
    }
    if (*end)
        return -1;
    *out = (uint64_t)x << shift;
    return 0;
}

/* Apply "KEY=VALUE ..." (whitespace separated); -EINVAL names nothing set. */
static int ctl_apply(char *text)
{
    int rc = 0;
    pthread_mutex_lock(&mu);
    for (char *save = NULL, *w = strtok_r(text, " \t\r\n", &save); w;
         w = strtok_r(NULL, " \t\r\n", &save)) {
        char *v = strchr(w, '=');
        uint64_t x = 0;
        if (strcmp(w, "reset") == 0) {
            unsigned keep = st.unlink_wait_ms;
            memset(&st, 0, sizeof st);
            st.unlink_wait_ms = keep;
            continue;
        }
        if (!v) {
            rc = -EINVAL;
            break;
        }
        *v++ = '\0';
        if (strcmp(w, "write_error") == 0 && parse_errno(v, &st.write_error) == 0)
            st.written = 0;
        else if (strcmp(w, "write_after") == 0 && parse_u64(v, &x) == 0) {
            st.write_after = x;
            st.written = 0;
        } else if (strcmp(w, "fsync_error") == 0 && parse_errno(v, &st.fsync_error) == 0)
            ;
        else if (strcmp(w, "fsyncdir_error") == 0 && parse_errno(v, &st.fsyncdir_error) == 0)
            ;
        else if (strcmp(w, "fsync_delay_ms") == 0 && parse_u64(v, &x) == 0 && x <= 600000)
            st.fsync_delay_ms = (unsigned)x;
        else if (strcmp(w, "write_delay_ms") == 0 && parse_u64(v, &x) == 0 && x <= 600000)
            st.write_delay_ms = (unsigned)x;
        else if (strcmp(w, "unlink_wait_ms") == 0 && parse_u64(v, &x) == 0 && x <= 600000)
            st.unlink_wait_ms = (unsigned)x;
        else {
            logf_("control: bad setting '%s=%s'", w, v);
            rc = -EINVAL;
            break;
        }
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

static const char *errname(int e)
{
    return e == EIO ? "EIO" : e == ENOSPC ? "ENOSPC" : "none";
}

static int ctl_render(char *buf, size_t len)
{
    pthread_mutex_lock(&mu);
    int n = snprintf(
        buf, len,
        "write_error=%s\nwrite_after=%llu\nwritten=%llu\nfsync_error=%s\n"
        "fsyncdir_error=%s\nfsync_delay_ms=%u\nwrite_delay_ms=%u\nunlink_wait_ms=%u\n"
        "writes=%llu\nwrite_bytes=%llu\nfsyncs=%llu\nfsyncdirs=%llu\nfaults=%llu\n"
        "kept_open=%llu\n",
        errname(st.write_error), (unsigned long long)st.write_after, (unsigned long long)st.written,
        errname(st.fsync_error), errname(st.fsyncdir_error), st.fsync_delay_ms, st.write_delay_ms,
        st.unlink_wait_ms, (unsigned long long)st.writes, (unsigned long long)st.write_bytes,
        (unsigned long long)st.fsyncs, (unsigned long long)st.fsyncdirs,
        (unsigned long long)st.faults, (unsigned long long)st.kept_open);
    pthread_mutex_unlock(&mu);
    return n;
}

/* The fault of a sync (fsync, fdatasync, a folder's fsync): after the
 * delay, 0 or -errno. */
static int sync_fault(const char *what, const char *path, bool dir)
{
    pthread_mutex_lock(&mu);
    unsigned delay = st.fsync_delay_ms;
    int e = dir ? st.fsyncdir_error : st.fsync_error;
    if (dir)
        st.fsyncdirs++;
    else
        st.fsyncs++;
    if (e)
        st.faults++;
    pthread_mutex_unlock(&mu);
    if (delay)
        sleep_ms(delay);
    if (e) {
        logf_("%s %s: %s (injected)", what, path, errname(e));
        return -e;
    }
    return 0;
}

/* ---- open files, for unlink as NFS does it ---- */

static pthread_mutex_t omu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t released = PTHREAD_COND_INITIALIZER;
static struct open_file {
    ino_t ino;
    unsigned handles;
    char *silly; /* its name once unlinked while open, relative to backing */
} * opens;
static size_t nopens, capopens;

static struct open_file *find_open(ino_t ino)
{
    for (size_t i = 0; i < nopens; i++)
        if (opens[i].ino == ino)
            return &opens[i];
    return NULL;
}

static void track(int fd)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0)
        return;
    pthread_mutex_lock(&omu);
    struct open_file *o = find_open(sb.st_ino);
    if (!o && nopens == capopens) {
        size_t cap = capopens ? 2 * capopens : 64;
        struct open_file *n = realloc(opens, cap * sizeof *n);
        if (n) {
            opens = n;
            capopens = cap;
        }
    }
    if (!o && nopens < capopens) {
        o = &opens[nopens++];
        *o = (struct open_file){.ino = sb.st_ino};
    }
    if (o)
        o->handles++;
    pthread_mutex_unlock(&omu);
}

static void untrack(int fd)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0)
        return;
    pthread_mutex_lock(&omu);
    struct open_file *o = find_open(sb.st_ino);
    if (o && --o->handles == 0) {
        if (o->silly) {
            unlinkat(backing, o->silly, 0);
            free(o->silly);
        }
        *o = opens[--nopens];
        pthread_cond_broadcast(&released);
    }
    pthread_mutex_unlock(&omu);
}

static int ffs_unlink(const char *path)
{
    struct stat sb;
    if (fstatat(backing, rel(path), &sb, AT_SYMLINK_NOFOLLOW) != 0)
        return -errno;
    pthread_mutex_lock(&mu);
    long wait_ms = st.unlink_wait_ms;
    pthread_mutex_unlock(&mu);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += wait_ms * 1000000L;
    until.tv_sec += until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    pthread_mutex_lock(&omu);
    struct open_file *o;
    while (find_open(sb.st_ino) && pthread_cond_timedwait(&released, &omu, &until) != ETIMEDOUT) {
    }
    o = find_open(sb.st_ino); /* the table may have moved while we waited */
    int rc = 0;
    if (o && !o->silly) {
        char silly[PATH_MAX];
        const char *slash = strrchr(rel(path), '/');
        int dirlen = slash ? (int)(slash - rel(path)) + 1 : 0;
        snprintf(silly, sizeof silly, "%.*s.faultfs-silly-%llu", dirlen, rel(path),
                 (unsigned long long)sb.st_ino);
        if (renameat(backing, rel(path), backing, silly) != 0)
            rc = -errno;
        else if (!(o->silly = strdup(silly)))
            rc = -ENOMEM;
        else {
            logf_("unlink %s: still open, kept as %s until its last close", path, silly);
            pthread_mutex_lock(&mu);
            st.kept_open++;
            pthread_mutex_unlock(&mu);
        }
    } else if (unlinkat(backing, rel(path), 0) != 0) {
        rc = -errno;
    }
    pthread_mutex_unlock(&omu);
    return rc;
}

/* ---- passthrough ---- */

static void *ffs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
    /* no caching of names or attributes: the backing folder is the truth */
    cfg->entry_timeout = cfg->attr_timeout = cfg->negative_timeout = 0;
    cfg->use_ino = 1;
    cfg->nullpath_ok = 0;
    cfg->hard_remove = 1; /* unlink of an open file: ours, as NFS does it */
    conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE; /* every write reaches us */
    conn->max_write = 1u << 20;
    return NULL;
}

static int ffs_getattr(const char *path, struct stat *sb, struct fuse_file_info *fi)
{
    if (strcmp(path, CTL) == 0) {
        memset(sb, 0, sizeof *sb);
        sb->st_mode = S_IFREG | 0600;
        sb->st_nlink = 1;
        sb->st_size = 4096;
        sb->st_uid = getuid();
        sb->st_gid = getgid();
        return 0;
    }
    int rc = fi && fi->fh != CTL_FH ? fstat((int)fi->fh, sb)
                                    : fstatat(backing, rel(path), sb, AT_SYMLINK_NOFOLLOW);
    return rc ? -errno : 0;
}

static int ffs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
                       struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
    (void)off;
    (void)fi;
    (void)flags;
    int fd = openat(backing, rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return -errno;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        struct stat sb = {.st_ino = e->d_ino, .st_mode = (mode_t)DTTOIF(e->d_type)};
        if (fill(buf, e->d_name, &sb, 0, 0))
            break;
    }
    closedir(d);
    return 0;
}

static int ffs_mkdir(const char *path, mode_t mode)
{
    return mkdirat(backing, rel(path), mode) ? -errno : 0;
}

static int ffs_rmdir(const char *path)
{
    return unlinkat(backing, rel(path), AT_REMOVEDIR) ? -errno : 0;
}

static int ffs_rename(const char *from, const char *to, unsigned int flags)
{
    if (flags)
        return -EINVAL;
    return renameat(backing, rel(from), backing, rel(to)) ? -errno : 0;
}

static int ffs_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    int rc =
        fi && fi->fh != CTL_FH ? fchmod((int)fi->fh, mode) : fchmodat(backing, rel(path), mode, 0);
    return rc ? -errno : 0;
}

static int ffs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
    if (strcmp(path, CTL) == 0)
        return 0;
    int rc;
    if (fi && fi->fh != CTL_FH) {
        rc = ftruncate((int)fi->fh, size);
    } else {
        int fd = openat(backing, rel(path), O_WRONLY | O_CLOEXEC);
        if (fd < 0)
            return -errno;
        rc = ftruncate(fd, size);
        close(fd);
    }
    return rc ? -errno : 0;
}

static int ffs_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
    if (strcmp(path, CTL) == 0)
        return 0;
    int rc = fi && fi->fh != CTL_FH ? futimens((int)fi->fh, tv)
                                    : utimensat(backing, rel(path), tv, AT_SYMLINK_NOFOLLOW);
    return rc ? -errno : 0;
}

static int ffs_open(const char *path, struct fuse_file_info *fi)
{
    if (strcmp(path, CTL) == 0) {
        fi->fh = CTL_FH;
        fi->direct_io = 1; /* its size is not its content's */
        return 0;
    }
    int fd = openat(backing, rel(path), (fi->flags & ~O_NOFOLLOW) | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    track(fd);
    fi->fh = (uint64_t)fd;
    return 0;
}

static int ffs_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    if (strcmp(path, CTL) == 0)
        return -EEXIST;
    int fd = openat(backing, rel(path), fi->flags | O_CREAT | O_CLOEXEC, mode);
    if (fd < 0)
        return -errno;
    track(fd);
    fi->fh = (uint64_t)fd;
    return 0;
}

static int ffs_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
    (void)path;
    if (fi->fh == CTL_FH) {
        char text[1024];
        int n = ctl_render(text, sizeof text);
        if (off >= n)
            return 0;
        size_t len = (size_t)(n - off) < size ? (size_t)(n - off) : size;
        memcpy(buf, text + off, len);
        return (int)len;
    }
    ssize_t n = pread((int)fi->fh, buf, size, off);
    return n < 0 ? -errno : (int)n;
}

static int ffs_write(const char *path, const char *buf, size_t size, off_t off,
                     struct fuse_file_info *fi)
{
    if (fi->fh == CTL_FH) {
        char *text = strndup(buf, size);
        if (!text)
            return -ENOMEM;
        int rc = ctl_apply(text);
        free(text);
        return rc ? rc : (int)size;
    }
    pthread_mutex_lock(&mu);
    unsigned delay = st.write_delay_ms;
    int e = 0;
    st.writes++;
    if (st.write_error && st.written + size > st.write_after) {
        e = st.write_error;
        st.faults++;
    } else {
        st.written += size; /* counted before it lands: concurrent writers see it */
        st.write_bytes += size;
    }
    uint64_t accepted = st.written;
    pthread_mutex_unlock(&mu);
    if (delay)
        sleep_ms(delay);
    if (e) {
        logf_("write %s at %lld (%zu bytes, %llu accepted): %s (injected)", path, (long long)off,
              size, (unsigned long long)accepted, errname(e));
        return -e;
    }
    ssize_t n = pwrite((int)fi->fh, buf, size, off);
    return n < 0 ? -errno : (int)n;
}

static int ffs_statfs(const char *path, struct statvfs *sv)
{
    (void)path;
    return fstatvfs(backing, sv) ? -errno : 0;
}

static int ffs_flush(const char *path, struct fuse_file_info *fi)
{
    (void)path;
    (void)fi;
    return 0;
}

static int ffs_release(const char *path, struct fuse_file_info *fi)
{
    (void)path;
    if (fi->fh != CTL_FH) {
        untrack((int)fi->fh);
        close((int)fi->fh);
    }
    return 0;
}

static int ffs_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
    if (fi->fh == CTL_FH)
        return 0;
    int rc = sync_fault(datasync ? "fdatasync" : "fsync", path, false);
    if (rc)
        return rc;
    return (datasync ? fdatasync((int)fi->fh) : fsync((int)fi->fh)) ? -errno : 0;
}

static int ffs_opendir(const char *path, struct fuse_file_info *fi)
{
    int fd = openat(backing, rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    fi->fh = (uint64_t)fd;
    return 0;
}

static int ffs_releasedir(const char *path, struct fuse_file_info *fi)
{
    (void)path;
    close((int)fi->fh);
    return 0;
}

static int ffs_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi)
{
    (void)datasync;
    int rc = sync_fault("fsync of folder", path, true);
    if (rc)
        return rc;
    return fsync((int)fi->fh) ? -errno : 0;
}

static int ffs_fallocate(const char *path, int mode, off_t off, off_t len,
                         struct fuse_file_info *fi)
{
    (void)path;
    return fallocate((int)fi->fh, mode, off, len) ? -errno : 0;
}

static const struct fuse_operations ops = {
    .init = ffs_init,
    .getattr = ffs_getattr,
    .readdir = ffs_readdir,
    .mkdir = ffs_mkdir,
    .unlink = ffs_unlink,
    .rmdir = ffs_rmdir,
    .rename = ffs_rename,
    .chmod = ffs_chmod,
    .truncate = ffs_truncate,
    .utimens = ffs_utimens,
    .open = ffs_open,
    .create = ffs_create,
    .read = ffs_read,
    .write = ffs_write,
    .statfs = ffs_statfs,
    .flush = ffs_flush,
    .release = ffs_release,
    .fsync = ffs_fsync,
    .opendir = ffs_opendir,
    .releasedir = ffs_releasedir,
    .fsyncdir = ffs_fsyncdir,
    .fallocate = ffs_fallocate,
};

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: faultfs BACKING MOUNTPOINT [-f] [-o OPTIONS]\n");
        return 2;
    }
    backing = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (backing < 0) {
        fprintf(stderr, "faultfs: %s: %s\n", argv[1], strerror(errno));
        return 2;
    }
    st.unlink_wait_ms = 500;
    argv[1] = argv[0]; /* fuse_main sees: faultfs MOUNTPOINT [options] */
    return fuse_main(argc - 1, argv + 1, &ops, NULL);
}
