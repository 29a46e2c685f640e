/* The harnesses' shared helpers (fuzz.h). The temp folder lives as long as
 * the process: making and removing one per input would cost more than most
 * parsers take. */
#include "fuzz.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[PATH_MAX];

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (flag == FTW_DP)
        rmdir(path);
    else
        unlink(path);
    return 0;
}

static void rm_tree(const char *path)
{
    nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void rm_dir(void)
{
    if (dir[0])
        rm_tree(dir);
}

void fz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
    fprintf(stderr, "\n%s:%d: harness assertion failed: %s\n    ", file, line, cond);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

const char *fz_dir(void)
{
    if (!dir[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/tpfuzz.XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(dir)) {
            perror("fuzz: mkdtemp");
            abort();
        }
        atexit(rm_dir);
    }
    return dir;
}

char *fz_path(char *out, const char *rel)
{
    int n = snprintf(out, PATH_MAX, "%s/%s", fz_dir(), rel);
    FZ_ASSERT(n > 0 && n < PATH_MAX, "path %s too long", rel);
    return out;
}

static void mkdirs(char *path)
{
    for (char *s = path + strlen(fz_dir()) + 1; (s = strchr(s, '/')) != NULL; s++) {
        *s = '\0';
        if (mkdir(path, 0700) < 0 && errno != EEXIST) {
            perror(path);
            abort();
        }
        *s = '/';
    }
}

void fz_write(const char *rel, const uint8_t *data, size_t n, char *out)
{
    char buf[PATH_MAX], *path = fz_path(out ? out : buf, rel);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0 && errno == ENOENT) {
        mkdirs(path);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    }
    if (fd < 0) {
        perror(path);
        abort();
    }
    while (n > 0) {
        ssize_t k = write(fd, data, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            perror(path);
            abort();
        }
        data += k;
        n -= (size_t)k;
    }
    close(fd);
}

void fz_remove(const char *rel)
{
    char path[PATH_MAX];
    fz_path(path, rel);
    struct stat st;
    if (lstat(path, &st) < 0)
        return;
    if (S_ISDIR(st.st_mode))
        rm_tree(path);
    else
        unlink(path);
}

size_t fz_split(const uint8_t *data, size_t n, const char *sep, const uint8_t **part, size_t *len,
                size_t max)
{
    size_t k = 0, sl = strlen(sep);
    while (k + 1 < max) {
        const uint8_t *hit = n >= sl ? memmem(data, n, sep, sl) : NULL;
        if (!hit)
            break;
        part[k] = data;
        len[k++] = (size_t)(hit - data);
        n -= (size_t)(hit - data) + sl;
        data = hit + sl;
    }
    part[k] = data;
    len[k++] = n;
    return k;
}

char *fz_strndup(const uint8_t *data, size_t n)
{
    char *s = malloc(n + 1);
    FZ_ASSERT(s, "out of memory for %zu bytes", n);
    memcpy(s, data, n);
    s[n] = '\0';
    return s;
}

FILE *fz_null(void)
{
    static FILE *f;
    if (!f && !(f = fopen("/dev/null", "w"))) {
        perror("/dev/null");
        abort();
    }
    return f;
}

int fz_stream(const uint8_t *data, size_t n, int *peer)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return -1;
    fcntl(sv[1], F_SETFL, O_NONBLOCK);
    for (size_t off = 0; off < n;) {
        ssize_t k = write(sv[1], data + off, n - off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        off += (size_t)k;
    }
    shutdown(sv[1], SHUT_WR);
    *peer = sv[1];
    return sv[0];
}

void fz_names_file(int rc, const tp_error *err, const char *path)
{
    FZ_ASSERT(rc == TP_EUSAGE && strncmp(err->msg, path, strlen(path)) == 0,
              "error %d does not name the file: %s", rc, err->msg);
}

long long fz_int(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    FZ_ASSERT(json_is_integer(v), "no integer '%s'", k);
    return json_integer_value(v);
}
