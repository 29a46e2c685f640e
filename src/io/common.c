/* What the io workloads share: files or device regions, aligned touched
 * buffers, job threads, page-cache residency and the common result blocks. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io_int.h"
#include "tp/blkpath.h"
#include "tp/pattern.h"
#include "tp/stats.h"

int tp__io_file_open(const struct tp_target *t, const struct tp_io_common *c, const char *sub,
                     const char *name, unsigned region, uint64_t region_bytes, int flags,
                     struct tp_io_file *f, tp_error *err)
{
    memset(f, 0, sizeof *f);
    f->fd = -1;
    if (t->is_device) {
        f->base = (uint64_t)region * region_bytes;
        f->bytes = region_bytes;
        if (f->base + region_bytes > t->dev_bytes)
            return tp_error_set(err, TP_EUSAGE, "%s: %llu bytes needed, the device has %llu",
                                t->path, (unsigned long long)(f->base + region_bytes),
                                (unsigned long long)t->dev_bytes);
        f->fd = t->dev_fd;
        snprintf(f->path, sizeof f->path, "%s@%llu", t->path, (unsigned long long)f->base);
        return 0;
    }
    char path[sizeof f->path];
    snprintf(path, sizeof path, "%s/%s/%s", t->path, sub, name);
    return tp__io_file_open_path(path, flags, c->direct, region_bytes, f, err);
}

int tp__io_file_open_path(const char *path, int flags, bool direct, uint64_t bytes,
                          struct tp_io_file *f, tp_error *err)
{
    memset(f, 0, sizeof *f);
    snprintf(f->path, sizeof f->path, "%s", path);
    f->fd = open(f->path, flags | O_CLOEXEC | (direct ? O_DIRECT : 0), 0644);
    if (f->fd < 0 && errno == EINVAL && direct)
        return tp_error_set(err, TP_EUSAGE, "%s: the filesystem refuses O_DIRECT (--direct)",
                            f->path);
    if (f->fd < 0)
        return tp_error_errno(err, TP_ESYS, errno, "%s", f->path);
    f->own_fd = true;
    f->bytes = bytes;
    return 0;
}

void tp_io_file_close(struct tp_io_file *f)
{
    if (f->own_fd && f->fd >= 0)
        close(f->fd);
    f->fd = -1;
}

void tp__io_rmdir(const struct tp_target *t, const char *sub)
{
    if (t->is_device)
        return;
    char path[4352];
    snprintf(path, sizeof path, "%s/%s", t->path, sub);
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                unlinkat(dirfd(d), e->d_name, 0);
        closedir(d);
    }
    rmdir(path);
}

int tp__io_mkdir(const struct tp_target *t, const char *sub, bool fresh, tp_error *err)
{
    if (t->is_device)
        return 0;
    if (fresh)
        tp__io_rmdir(t, sub);
    char path[4352];
    snprintf(path, sizeof path, "%s/%s", t->path, sub);
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        return tp_error_errno(err, TP_ESYS, errno, "%s", path);
    return 0;
}

void **tp__io_bufs_alloc(unsigned n, size_t bytes, uint32_t align, uint64_t seed)
{
    void **b = calloc(n, sizeof *b);
    if (!b)
        return NULL;
    size_t a = align < 4096 ? 4096 : align;
    for (unsigned i = 0; i < n; i++) {
        if (posix_memalign(&b[i], a, bytes ? bytes : 1) != 0) {
            tp__io_bufs_free(b, i);
            return NULL;
        }
        tp_pattern_fill(b[i], bytes, seed + i);
    }
    return b;
}

void tp__io_bufs_free(void **bufs, unsigned n)
{
    if (!bufs)
        return;
    for (unsigned i = 0; i < n; i++)
        free(bufs[i]);
    free(bufs);
}

json_t *tp__io_lat_json(const tp_hist *h)
{
    tp_stats s;
    tp_stats_from_hist(h, &s);
    return tp_stats_to_json(&s, 1, "ns");
}

static json_t *target_json(const struct tp_target *t, const struct tp_io_common *c)
{
    return json_pack("{s:s, s:s, s:o, s:b, s:{s:I, s:I, s:s}}", "path", t->path, "kind",
                     t->is_device ? "device" : "folder", "space_bytes",
                     json_integer((json_int_t)tp_target_space(t)), "direct", c->direct,
                     "dio_alignment", "memory", (json_int_t)t->dio_mem_align, "offset",
                     (json_int_t)t->dio_off_align, "source", t->align_source);
}

int tp__io_open_target(const struct tp_io_common *c, struct tp_target *t, json_t *results,
                       tp_error *err)
{
    int rc = tp_target_open(&c->target, t, err);
    if (rc)
        return rc;
    json_t *desc = NULL;
    if (tp_blkpath_describe(t->path, c->sysfs_root, NULL, &desc, NULL) == 0)
        json_object_set_new(results, "storage", desc);
    json_object_set_new(results, "target", target_json(t, c));
    return 0;
}

struct job_start {
    pthread_t th;
    bool started;
};

int tp__io_run_jobs(unsigned n, void *(*fn)(void *), void *arg, size_t stride, tp_error *err)
{
    struct job_start *j = calloc(n, sizeof *j);
    if (!j)
        return tp_error_set(err, TP_ENOMEM, "io jobs: out of memory");
    int rc = 0;
    for (unsigned i = 0; i < n; i++) {
        if (pthread_create(&j[i].th, NULL, fn, (char *)arg + i * stride) != 0) {
            rc = tp_error_errno(err, TP_ESYS, errno, "io job %u: pthread_create", i);
            break;
        }
        j[i].started = true;
    }
    for (unsigned i = 0; i < n; i++)
        if (j[i].started)
            pthread_join(j[i].th, NULL);
    free(j);
    return rc;
}

double tp__io_cached_fraction(const struct tp_io_file *f, unsigned n)
{
    double in = 0, all = 0;
    for (unsigned i = 0; i < n; i++) {
        if (f[i].base != 0 || !f[i].own_fd)
            return -1;
        double fr = tp_file_cached_fraction(f[i].fd, f[i].bytes);
        if (fr < 0)
            return -1;
        in += fr * (double)f[i].bytes;
        all += (double)f[i].bytes;
    }
    return all > 0 ? in / all : -1;
}

void tp__io_drop_cache(const struct tp_io_file *f, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        posix_fadvise(f[i].fd, (off_t)f[i].base, (off_t)f[i].bytes, POSIX_FADV_DONTNEED);
}
