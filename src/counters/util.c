/* What the counter sources share (ctr_int.h): adding a counter or a
 * device to the snapshot being taken, paths under its root, and reading
 * small sysfs and /proc files, none trusted to be small or to exist. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctr_int.h"

const char *tp_ctr_source_name(enum tp_ctr_source s)
{
    static const char *const names[TP_CTR_SOURCES] = {
        [TP_CTR_RDMA] = "rdma", [TP_CTR_NETDEV] = "netdev", [TP_CTR_ETHTOOL] = "ethtool",
        [TP_CTR_TCP] = "tcp", [TP_CTR_PCIE] = "pcie"};
    return (unsigned)s < TP_CTR_SOURCES ? names[s] : "?";
}

int tp__ctr_add(struct tp__ctr_ctx *c, enum tp_ctr_source s, const char *dev, const char *name,
                uint64_t value, bool level)
{
    struct tp_ctr_snap *sn = c->snap;
    if (sn->n == sn->cap) {
        size_t cap = sn->cap ? 2 * sn->cap : 256;
        struct tp_ctr *p = realloc(sn->c, cap * sizeof *p);
        if (!p)
            return tp_error_set(c->err, TP_ENOMEM, "counters: out of memory");
        sn->c = p;
        sn->cap = cap;
    }
    struct tp_ctr *k = &sn->c[sn->n++];
    memset(k, 0, sizeof *k);
    snprintf(k->dev, sizeof k->dev, "%s", dev);
    snprintf(k->name, sizeof k->name, "%s", name);
    k->source = (uint8_t)s;
    k->level = level;
    k->value = value;
    return 0;
}

int tp__ctr_dev(struct tp__ctr_ctx *c, enum tp_ctr_source s, const char *dev)
{
    struct tp_ctr_snap *sn = c->snap;
    char **p = realloc(sn->devs, (sn->ndevs + 1) * sizeof *p);
    if (!p)
        return tp_error_set(c->err, TP_ENOMEM, "counters: out of memory");
    sn->devs = p;
    size_t len = strlen(tp_ctr_source_name(s)) + strlen(dev) + 2;
    if (!(p[sn->ndevs] = malloc(len)))
        return tp_error_set(c->err, TP_ENOMEM, "counters: out of memory");
    snprintf(p[sn->ndevs++], len, "%s:%s", tp_ctr_source_name(s), dev);
    return 0;
}

bool tp__ctr_path(const struct tp__ctr_ctx *c, char *out, size_t cap, const char *fmt, ...)
{
    int n = snprintf(out, cap, "%s", c->root);
    if (n < 0 || (size_t)n >= cap)
        return false;
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(out + n, cap - (size_t)n, fmt, ap);
    va_end(ap);
    return m >= 0 && (size_t)m < cap - (size_t)n;
}

long tp__ctr_read(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return -1;
    }
    size_t got = 0;
    while (got + 1 < cap) {
        ssize_t r = read(fd, buf + got, cap - 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) { /* sysfs: EINVAL for a link that is down, and the like */
            close(fd);
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

bool tp__ctr_read_u64(const char *path, uint64_t *v)
{
    char buf[64];
    if (tp__ctr_read(path, buf, sizeof buf) <= 0)
        return false;
    char *end;
    const char *p = buf;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p < '0' || *p > '9')
        return false;
    errno = 0;
    unsigned long long x = strtoull(p, &end, 0);
    if (errno || end == p || (*end && *end != '\n' && *end != ' '))
        return false;
    *v = x;
    return true;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int tp__ctr_list(const char *path, char ***names, size_t *n)
{
    *names = NULL;
    *n = 0;
    DIR *d = opendir(path);
    if (!d)
        return 0;
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            char **p = realloc(*names, cap * sizeof *p);
            if (!p)
                goto oom;
            *names = p;
        }
        if (!((*names)[*n] = strdup(e->d_name)))
            goto oom;
        (*n)++;
    }
    closedir(d);
    if (*n)
        qsort(*names, *n, sizeof **names, by_name);
    return 0;
oom:
    closedir(d);
    tp__ctr_names_free(*names, *n);
    *names = NULL;
    *n = 0;
    return TP_ENOMEM;
}

int tp__ctr_list_under(struct tp__ctr_ctx *c, const char *rel, char *base, size_t cap,
                       char ***names, size_t *n)
{
    *names = NULL;
    *n = 0;
    if (!tp__ctr_path(c, base, cap, "%s", rel))
        return 0;
    if (tp__ctr_list(base, names, n))
        return tp_error_set(c->err, TP_ENOMEM, "counters: out of memory");
    return 0;
}

void tp__ctr_names_free(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

int tp__ctr_numbers_in(struct tp__ctr_ctx *c, enum tp_ctr_source s, const char *dev,
                       const char *path)
{
    char **names;
    size_t n;
    if (tp__ctr_list(path, &names, &n))
        return tp_error_set(c->err, TP_ENOMEM, "counters: out of memory");
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        char f[4096];
        uint64_t v;
        if (snprintf(f, sizeof f, "%s/%s", path, names[i]) < (int)sizeof f &&
            tp__ctr_read_u64(f, &v))
            rc = tp__ctr_add(c, s, dev, names[i], v, false);
    }
    tp__ctr_names_free(names, n);
    return rc;
}

