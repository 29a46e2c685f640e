/* The secrets scan of trainpath check (tp_check_scan_secrets): results
 * folders are copied, shared and attached to tickets, so a private key or
 * an NVMe secret among them leaks with them. Each folder is walked by file
 * descriptor, never following a symlink below the folder named, and every
 * file is matched against the markers of the secrets it may hold; what is
 * found is named (folder, file, kind), never kept. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tp/check.h"

#include "facts_int.h"

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
        tp__check_fx_unseen(s->c, "secrets", "%s%s%s: %s", s->dir, *rel ? "/" : "", rel,
                            strerror(errno));
        close(dfd);
        return;
    }
    struct tp_sysfs_names names;
    if (tp_sysfs_list_dir(d, FX_LIST, NULL, &names) < 0) {
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
                tp__check_fx_unseen(s->c, "secrets", "%s/%s: %s", s->dir, child, strerror(errno));
                continue;
            }
            scan_dir(s, cfd, child, depth + 1);
        } else if (S_ISREG(st.st_mode) && st.st_size <= SCAN_MAX_BYTES) {
            scan_file(s, dirfd(d), name, child);
        }
    }
    tp_sysfs_names_free(&names);
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
            tp__check_fx_unseen(&c, "secrets", "%s: %s", dirs[i], strerror(errno));
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
