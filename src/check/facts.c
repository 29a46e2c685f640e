/* The facts driver of trainpath check: one JSON object describing a node,
 * read from this host or from a snapshot folder laid out as the kernel lays
 * out /proc, /sys and configfs. The driver sets the frame (schema, root,
 * host, missing) and hands the context to the collectors of
 * facts_net.c, facts_storage.c and facts_node.c in the order of
 * docs/check.md. It also holds the root-relative file helpers they share and
 * the secrets scan of result folders.
 *
 * The main idea: nothing is an error except a bad root and memory. A part
 * that cannot be read becomes null (or is left out, for single sysctls) and
 * is named in "missing" with the reason, so a rule can SKIP rather than
 * guess. */
#include "tp/check.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
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
    size_t r = strlen(c->root);
    if (r >= PATH_MAX)
        return -1;
    memcpy(out, c->root, r);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out + r, PATH_MAX - r, fmt, ap);
    va_end(ap);
    return n >= 0 && (size_t)n < PATH_MAX - r ? 0 : -1;
}

int tp__check_fx_fmt(char *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out, PATH_MAX, fmt, ap);
    va_end(ap);
    if (n >= 0 && n < PATH_MAX)
        return 0;
    out[0] = '\0';
    return -1;
}

static void trim_right(char *s, size_t n)
{
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
}

int tp__check_fx_read_abs(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -1;
    size_t n = 0;
    while (n + 1 < cap) {
        ssize_t k = read(fd, buf + n, cap - 1 - n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        if (k == 0)
            break;
        n += (size_t)k;
    }
    close(fd);
    buf[n] = '\0';
    trim_right(buf, n);
    return 0;
}

int tp__check_fx_read(const struct fx *c, char *buf, size_t cap, const char *fmt, ...)
{
    char rel[PATH_MAX], path[PATH_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(rel, sizeof rel, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof rel || tp__check_fx_path(c, path, "%s", rel) < 0) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return tp__check_fx_read_abs(path, buf, cap);
}

int tp__check_fx_long_abs(const char *path, long *out)
{
    char buf[64], *end;
    if (tp__check_fx_read_abs(path, buf, sizeof buf) < 0 || !buf[0])
        return -1;
    errno = 0;
    long v = strtol(buf, &end, 0);
    if (*end || errno)
        return -1;
    *out = v;
    return 0;
}

int tp__check_fx_long(const struct fx *c, long *out, const char *fmt, ...)
{
    char rel[PATH_MAX], path[PATH_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(rel, sizeof rel, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof rel || tp__check_fx_path(c, path, "%s", rel) < 0)
        return -1;
    return tp__check_fx_long_abs(path, out);
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
    trim_right(target, (size_t)n);
    const char *slash = strrchr(target, '/');
    const char *base = slash ? slash + 1 : target;
    if (!*base || strlen(base) >= cap)
        return -1;
    strcpy(buf, base);
    return 0;
}

static int by_version(const void *a, const void *b)
{
    return strverscmp(*(char *const *)a, *(char *const *)b);
}

/* Every entry of d (but "." and "..") that keep accepts, sorted. */
static int names_of(DIR *d, bool (*keep)(const char *), struct fx_names *out)
{
    size_t cap = 0;
    struct dirent *e;
    out->v = NULL;
    out->n = 0;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (keep && !keep(e->d_name))
            continue;
        if (out->n == cap) {
            cap = cap ? cap * 2 : 16;
            char **v = realloc(out->v, cap * sizeof *v);
            if (!v)
                goto oom;
            out->v = v;
        }
        if (!(out->v[out->n] = strdup(e->d_name)))
            goto oom;
        out->n++;
    }
    if (out->n > 1)
        qsort(out->v, out->n, sizeof *out->v, by_version);
    return 0;
oom:
    tp__check_fx_names_free(out);
    errno = ENOMEM;
    return -1;
}

int tp__check_fx_list(const char *path, bool (*keep)(const char *name), struct fx_names *out)
{
    out->v = NULL;
    out->n = 0;
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int rc = names_of(d, keep, out);
    int e = errno;
    closedir(d);
    errno = e;
    return rc;
}

void tp__check_fx_names_free(struct fx_names *n)
{
    for (size_t i = 0; i < n->n; i++)
        free(n->v[i]);
    free(n->v);
    n->v = NULL;
    n->n = 0;
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

void tp__check_fx_missing(struct fx *c, const char *part, const char *fmt, ...)
{
    char reason[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    json_t *m = tp__check_fx_obj(c);
    tp__check_fx_set(c, m, "part", tp__check_fx_str(c, part));
    tp__check_fx_set(c, m, "reason", tp__check_fx_str(c, reason));
    tp__check_fx_push(c, c->missing, m);
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

/* ---- the driver ---- */

int tp_check_facts(const char *root, json_t **facts, tp_error *err)
{
    if (!facts)
        return tp_error_set(err, TP_EUSAGE, "check facts: no output given");
    *facts = NULL;
    struct fx *c = calloc(1, sizeof *c);
    if (!c)
        return tp_error_set(err, TP_ENOMEM, "check facts: out of memory");

    size_t len = root ? strlen(root) : 0;
    while (len > 1 && root[len - 1] == '/')
        len--;
    c->live = len == 0 || (len == 1 && root[0] == '/');
    if (!c->live) {
        struct stat st;
        if (len >= PATH_MAX - 256) {
            free(c);
            return tp_error_set(err, TP_EUSAGE, "--root %s: path too long", root);
        }
        if (stat(root, &st) < 0) {
            int e = errno;
            free(c);
            return tp_error_errno(err, TP_EUSAGE, e, "--root %s", root);
        }
        if (!S_ISDIR(st.st_mode)) {
            free(c);
            return tp_error_set(err, TP_EUSAGE, "--root %s: not a folder", root);
        }
        memcpy(c->root, root, len);
        c->root[len] = '\0';
    }

    c->facts = tp__check_fx_obj(c);
    c->missing = tp__check_fx_arr(c);
    tp__check_fx_set(c, c->facts, "schema", tp__check_fx_str(c, "trainpath.facts/1"));
    tp__check_fx_set(c, c->facts, "root", tp__check_fx_str(c, c->live ? "/" : c->root));
    char host[256];
    if (tp__check_fx_read(c, host, sizeof host, "/proc/sys/kernel/hostname") == 0 && host[0]) {
        tp__check_fx_set(c, c->facts, "host", tp__check_fx_str(c, host));
    } else {
        tp__check_fx_set(c, c->facts, "host", tp__check_fx_str(c, NULL));
        tp__check_fx_missing(c, "host", "no proc/sys/kernel/hostname");
    }
    /* missing is filled by everything below; it sits near the top so a
     * reader sees at once what the facts lack */
    json_incref(c->missing);
    tp__check_fx_set(c, c->facts, "missing", c->missing);

    tp__check_fx_net_interfaces(c);
    tp__check_fx_net_routes(c);
    tp__check_fx_net_listeners(c);
    tp__check_fx_net_nftables(c);
    tp__check_fx_sysctl(c);
    tp__check_fx_node_rdma(c);
    tp__check_fx_storage(c);
    tp__check_fx_node(c);
    tp__check_fx_set(c, c->facts, "secrets", json_null()); /* until tp_check_scan_secrets */

    bool oom = c->oom || !c->facts || !c->missing;
    json_decref(c->missing);
    if (oom) {
        json_decref(c->facts);
        free(c);
        return tp_error_set(err, TP_ENOMEM, "check facts: out of memory");
    }
    *facts = c->facts;
    free(c);
    return 0;
}

/* ---- secrets among results ---- */

#define SCAN_MAX_BYTES (1u << 20)
#define SCAN_MAX_DEPTH 8

struct scan {
    struct fx *c;
    const char *dir; /* as the caller named it */
    json_t *found;
};

/* trainpath's --key-file holds 16..4096 bytes of any content (tp_key_load);
 * the documented way to make one is `head -c 32 /dev/urandom | base64`. So
 * a trainpath key is a small file named like a key whose trimmed content is
 * one token of base64/hex characters, or raw bytes that are not text. */
static bool named_like_key(const char *name)
{
    return fnmatch("*key*", name, FNM_CASEFOLD) == 0 || fnmatch("*psk*", name, FNM_CASEFOLD) == 0 ||
           fnmatch("*secret*", name, FNM_CASEFOLD) == 0;
}

static bool looks_like_tp_key(const char *name, const unsigned char *b, size_t n)
{
    if (!named_like_key(name))
        return false;
    while (n > 0 && (b[n - 1] == '\n' || b[n - 1] == '\r' || b[n - 1] == ' ' || b[n - 1] == '\t'))
        n--;
    if (n < 16 || n > 4096)
        return false;
    bool token = true, binary = false;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = b[i];
        bool b64 = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
                   (ch >= '0' && ch <= '9') || ch == '+' || ch == '/' || ch == '=' || ch == '-' ||
                   ch == '_';
        if (!b64)
            token = false;
        if ((ch < 0x20 && ch != '\n' && ch != '\r' && ch != '\t') || ch >= 0x7f)
            binary = true;
    }
    return token || binary;
}

/* "-----BEGIN <anything> PRIVATE KEY-----" on one line. */
static bool has_pem_private_key(const char *b, size_t n)
{
    static const char begin[] = "-----BEGIN ", tail[] = "PRIVATE KEY-----";
    const char *p = b, *end = b + n;
    while ((p = memmem(p, (size_t)(end - p), begin, sizeof begin - 1)) != NULL) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *stop = eol ? eol : end;
        if (memmem(p, (size_t)(stop - p), tail, sizeof tail - 1))
            return true;
        p += sizeof begin - 1;
    }
    return false;
}

static void found(struct scan *s, const char *rel, const char *kind)
{
    json_t *f = tp__check_fx_obj(s->c);
    tp__check_fx_set(s->c, f, "dir", tp__check_fx_str(s->c, s->dir));
    tp__check_fx_set(s->c, f, "file", tp__check_fx_str(s->c, rel));
    tp__check_fx_set(s->c, f, "kind", tp__check_fx_str(s->c, kind));
    tp__check_fx_push(s->c, s->found, f);
}

static void scan_file(struct scan *s, int dfd, const char *name, const char *rel)
{
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > SCAN_MAX_BYTES) {
        close(fd);
        return;
    }
    size_t cap = (size_t)st.st_size, n = 0;
    char *b = malloc(cap + 1);
    if (!b) {
        close(fd);
        s->c->oom = true;
        return;
    }
    while (n < cap) {
        ssize_t k = read(fd, b + n, cap - n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        n += (size_t)k;
    }
    close(fd);
    b[n] = '\0';
    bool pem = false;
    if (memmem(b, n, "-----BEGIN OPENSSH PRIVATE KEY-----", 35)) {
        found(s, rel, "openssh private key");
        pem = true;
    } else if (has_pem_private_key(b, n)) {
        found(s, rel, "private key");
        pem = true;
    }
    if (memmem(b, n, "DHHC-1:", 7))
        found(s, rel, "nvme dhchap secret");
    if (memmem(b, n, "NVMeTLSkey-1:", 13))
        found(s, rel, "nvme tls psk");
    if (!pem && looks_like_tp_key(name, (const unsigned char *)b, n))
        found(s, rel, "trainpath key");
    explicit_bzero(b, n); /* what we read may be a secret: do not leave it in the heap */
    free(b);
}

/* Scan the folder open at dfd (taken over and closed), rel its path below
 * the scanned folder ("" at the top). Symlinks are never followed. */
static void scan_dir(struct scan *s, int dfd, const char *rel, int depth)
{
    DIR *d = fdopendir(dfd);
    if (!d) {
        tp__check_fx_missing(s->c, "secrets", "%s%s%s: %s", s->dir, *rel ? "/" : "", rel,
                             strerror(errno));
        close(dfd);
        return;
    }
    struct fx_names names;
    if (names_of(d, NULL, &names) < 0) {
        s->c->oom = true;
        closedir(d);
        return;
    }
    for (size_t i = 0; i < names.n; i++) {
        const char *name = names.v[i];
        char child[PATH_MAX];
        int len = snprintf(child, sizeof child, "%s%s%s", rel, *rel ? "/" : "", name);
        if (len < 0 || (size_t)len >= sizeof child)
            continue;
        struct stat st;
        if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            if (depth >= SCAN_MAX_DEPTH)
                continue;
            int cfd = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (cfd < 0) {
                tp__check_fx_missing(s->c, "secrets", "%s/%s: %s", s->dir, child, strerror(errno));
                continue;
            }
            scan_dir(s, cfd, child, depth + 1);
        } else if (S_ISREG(st.st_mode) && st.st_size <= SCAN_MAX_BYTES) {
            scan_file(s, dirfd(d), name, child);
        }
    }
    tp__check_fx_names_free(&names);
    closedir(d);
}

int tp_check_scan_secrets(json_t *facts, const char *const *dirs, int n, tp_error *err)
{
    if (!json_is_object(facts) || n < 0 || (n > 0 && !dirs))
        return tp_error_set(err, TP_EUSAGE, "check secrets: no facts object or folder list");
    struct fx c = {.facts = facts, .live = true};
    c.missing = json_object_get(facts, "missing");
    if (!json_is_array(c.missing)) {
        c.missing = tp__check_fx_arr(&c);
        json_incref(c.missing);
        tp__check_fx_set(&c, facts, "missing", c.missing);
    } else {
        json_incref(c.missing);
    }
    struct scan s = {.c = &c, .found = tp__check_fx_arr(&c)};
    for (int i = 0; i < n && !c.oom; i++) {
        if (!dirs[i])
            continue;
        s.dir = dirs[i];
        /* the folder itself may be a link the user named: follow that one */
        int fd = open(dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
            tp__check_fx_missing(&c, "secrets", "%s: %s", dirs[i], strerror(errno));
            continue;
        }
        scan_dir(&s, fd, "", 0);
    }
    json_decref(c.missing);
    if (c.oom) {
        json_decref(s.found);
        return tp_error_set(err, TP_ENOMEM, "check secrets: out of memory");
    }
    tp__check_fx_set(&c, facts, "secrets", s.found);
    return c.oom ? tp_error_set(err, TP_ENOMEM, "check secrets: out of memory") : 0;
}
