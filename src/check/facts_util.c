/* The helpers every fact collector (src/check/facts*.c) shares, declared
 * in facts_int.h: kernel paths read under the context's root (through
 * core's one reader, tp/sysfs.h), JSON values that record an
 * allocation failure in the context instead of losing it, and a helper
 * program run with a deadline. None of them fails loudly: a file that
 * cannot be read is "absent" to the caller, which names it in missing. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tp/json.h"

#include "facts_int.h"

extern char **environ;

/* ---- root-relative files ---- */

int tp__check_fx_path(const struct fx *c, char *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = tp_sysfs_vpath(out, PATH_MAX, c->root, fmt, ap);
    va_end(ap);
    return rc;
}

int tp__check_fx_fmt(char *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = tp_sysfs_vpath(out, PATH_MAX, NULL, fmt, ap);
    va_end(ap);
    return rc;
}

int tp__check_fx_read(const struct fx *c, char *buf, size_t cap, const char *fmt, ...)
{
    char path[PATH_MAX];
    va_list ap;
    va_start(ap, fmt);
    int rc = tp_sysfs_vpath(path, sizeof path, c->root, fmt, ap);
    va_end(ap);
    return rc < 0 ? -1 : tp_sysfs_text(path, buf, cap);
}

int tp__check_fx_long_abs(const char *path, long *out)
{
    long long v;
    if (tp_sysfs_long(path, &v) < 0)
        return -1;
    *out = (long)v;
    return 0;
}

int tp__check_fx_long(const struct fx *c, long *out, const char *fmt, ...)
{
    char path[PATH_MAX];
    va_list ap;
    va_start(ap, fmt);
    int rc = tp_sysfs_vpath(path, sizeof path, c->root, fmt, ap);
    va_end(ap);
    return rc < 0 ? -1 : tp__check_fx_long_abs(path, out);
}

char *tp__check_fx_slurp_abs(const char *path, size_t max, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        if (n == cap) {
            if (cap >= max)
                break;
            cap = cap * 2 > max ? max : cap * 2;
            char *b = realloc(buf, cap + 1);
            if (!b) {
                free(buf);
                buf = NULL;
                errno = ENOMEM;
                break;
            }
            buf = b;
        }
        ssize_t k = read(fd, buf + n, cap - n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            int e = errno;
            free(buf);
            buf = NULL;
            errno = e;
            break;
        }
        if (k == 0)
            break;
        n += (size_t)k;
    }
    int e = errno;
    close(fd);
    errno = e;
    if (!buf)
        return NULL;
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

int tp__check_fx_link_base(const char *path, char *buf, size_t cap)
{
    char target[PATH_MAX];
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n <= 0)
        return -1;
    target[n] = '\0';
    while (n > 0 && (target[n - 1] == '\n' || target[n - 1] == '\r' || target[n - 1] == ' ' ||
                     target[n - 1] == '\t'))
        target[--n] = '\0';
    const char *slash = strrchr(target, '/');
    const char *base = slash ? slash + 1 : target;
    if (!*base || strlen(base) >= cap)
        return -1;
    strcpy(buf, base);
    return 0;
}

bool tp__check_fx_prefixed_number(const char *name, const char *prefix)
{
    size_t p = strlen(prefix);
    if (strncmp(name, prefix, p) != 0 || !name[p])
        return false;
    for (const char *s = name + p; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

bool tp__check_fx_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* ---- JSON that records allocation failure instead of losing it ---- */

static json_t *oom_check(struct fx *c, json_t *v)
{
    if (!v)
        c->oom = true;
    return v;
}

json_t *tp__check_fx_str(struct fx *c, const char *s)
{
    if (!s)
        return oom_check(c, json_null());
    return oom_check(c, tp_json_text(s));
}

json_t *tp__check_fx_int(struct fx *c, bool ok, long v)
{
    return oom_check(c, ok ? json_integer(v) : json_null());
}

json_t *tp__check_fx_long_json(struct fx *c, const char *path)
{
    long v;
    bool ok = tp__check_fx_long_abs(path, &v) == 0;
    return tp__check_fx_int(c, ok, ok ? v : 0);
}

json_t *tp__check_fx_obj(struct fx *c)
{
    return oom_check(c, json_object());
}

json_t *tp__check_fx_arr(struct fx *c)
{
    return oom_check(c, json_array());
}

void tp__check_fx_set(struct fx *c, json_t *obj, const char *key, json_t *v)
{
    if (!obj || !v) {
        json_decref(v);
        if (!v)
            c->oom = true;
        return;
    }
    if (json_object_set(obj, key, v) == 0) {
        json_decref(v);
        return;
    }
    /* A key can be what the node says (a CPU's governor, a folder's name in
     * a sysctl's): one that is not UTF-8 made jansson refuse it, and the
     * whole collection end as "out of memory" (found by fuzz/fuzz_facts).
     * Keep it as tp__check_fx_str keeps such a value. */
    char *copy = strdup(key);
    if (!copy || json_object_set(obj, tp_utf8_fix(copy), v) < 0)
        c->oom = true;
    free(copy);
    json_decref(v);
}

void tp__check_fx_push(struct fx *c, json_t *arr, json_t *v)
{
    if (!arr || !v) {
        json_decref(v);
        if (!v)
            c->oom = true;
        return;
    }
    if (json_array_append_new(arr, v) < 0)
        c->oom = true;
}

static void vmissing(struct fx *c, const char *part, bool unseen, const char *fmt, va_list ap)
{
    char reason[512];
    vsnprintf(reason, sizeof reason, fmt, ap);
    json_t *m = tp__check_fx_obj(c);
    tp__check_fx_set(c, m, "part", tp__check_fx_str(c, part));
    tp__check_fx_set(c, m, "reason", tp__check_fx_str(c, reason));
    if (unseen)
        tp__check_fx_set(c, m, "unseen", json_true());
    tp__check_fx_push(c, c->missing, m);
}

void tp__check_fx_missing(struct fx *c, const char *part, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmissing(c, part, false, fmt, ap);
    va_end(ap);
}

void tp__check_fx_unseen(struct fx *c, const char *part, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmissing(c, part, true, fmt, ap);
    va_end(ap);
}

/* ---- a helper program, with a deadline ---- */

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int tp__check_fx_run(char *const argv[], char *buf, size_t cap, int timeout_ms, char *why)
{
    int p[2];
    buf[0] = '\0';
    if (pipe2(p, O_CLOEXEC) < 0) {
        snprintf(why, 128, "%s: pipe: %s", argv[0], strerror(errno));
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    if (rc) {
        close(p[0]);
        snprintf(why, 128, "%s: %s", argv[0], strerror(rc));
        return -1;
    }
    size_t n = 0;
    bool late = false;
    long long deadline = now_ms() + timeout_ms;
    for (;;) {
        long long left = deadline - now_ms();
        if (left <= 0) {
            late = true;
            break;
        }
        struct pollfd pf = {.fd = p[0], .events = POLLIN};
        int r = poll(&pf, 1, (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            late = r == 0;
            break;
        }
        char scratch[512];
        char *dst = n + 1 < cap ? buf + n : scratch;
        size_t room = n + 1 < cap ? cap - 1 - n : sizeof scratch;
        ssize_t k = read(p[0], dst, room);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        if (dst == buf + n)
            n += (size_t)k;
    }
    buf[n] = '\0';
    close(p[0]);
    if (late)
        kill(pid, SIGKILL);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (late) {
        snprintf(why, 128, "%s: no answer within %d ms", argv[0], timeout_ms);
        return -1;
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        snprintf(why, 128, "%s: exit status %d", argv[0], WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        return -1;
    }
    return 0;
}

json_t *tp__check_fx_json(const char *path, char *why, size_t cap)
{
    json_t *doc = NULL;
    tp_error err;
    if (tp_json_load(path, &doc, &err) != 0) {
        snprintf(why, cap, "%s", err.msg);
        return NULL;
    }
    return doc;
}
