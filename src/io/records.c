/* Record files: the one on-disk layout of a dataset of fixed-size records,
 * shared by `trainpath io dataset` and the loader of `trainpath step`.
 *
 * Record i is slot i div F of file i mod F, so a shuffled read order spreads
 * over every file. The manifest is written after the files are durable, so a
 * manifest that matches means complete files; a run that finds a different
 * or missing one writes the dataset again. The callers differ only in what a
 * record holds, what their manifest says and where the folder is. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io_int.h"
#include "tp/atomicfile.h"
#include "tp/intr.h"
#include "tp/json.h"

static void file_path(const struct tp_io_records *d, unsigned k, char *out, size_t cap)
{
    snprintf(out, cap, "%s/data-%04u.bin", d->dir, k);
}

static void manifest_path(const struct tp_io_records *d, char *out, size_t cap)
{
    snprintf(out, cap, "%s/manifest.json", d->dir);
}

int tp_io_records_write(const struct tp_io_records *d, const struct tp_io_file *files,
                        tp_error *err)
{
    uint64_t r = d->record_bytes, per_file = tp_io_records_per_file(d);
    uint64_t per_chunk = d->chunk_bytes / r ? d->chunk_bytes / r : 1;
    char *buf = NULL;
    if (posix_memalign((void **)&buf, 4096, per_chunk * r) != 0)
        return tp_error_set(err, TP_ENOMEM, "%s: out of memory", d->name);
    int rc = 0;
    for (unsigned k = 0; rc == 0 && k < d->files; k++) {
        const struct tp_io_file *f = &files[k];
        for (uint64_t s = 0; rc == 0 && s < per_file; s += per_chunk) {
            if ((rc = tp_intr_check(err))) /* the caller removes what was written */
                break;
            uint64_t n = per_file - s < per_chunk ? per_file - s : per_chunk;
            for (uint64_t i = 0; i < n; i++) {
                uint64_t idx = (s + i) * d->files + k;
                if (idx < d->records)
                    d->fill(d->arg, idx, buf + i * r);
                else
                    memset(buf + i * r, 0, r); /* the last slots of short files */
            }
            ssize_t w = pwrite(f->fd, buf, n * r, (off_t)(f->base + s * r));
            if (w != (ssize_t)(n * r))
                rc = tp_error_errno(err, TP_ESYS, w < 0 ? errno : ENOSPC,
                                    "%s: creating the dataset at offset %" PRIu64, f->path,
                                    s * r);
        }
        if (rc == 0 && fdatasync(f->fd) != 0)
            rc = tp_error_errno(err, TP_ESYS, errno, "%s: fdatasync", f->path);
    }
    free(buf);
    return rc;
}

/* The manifest on disk has every field of want, equal, and every file its
 * size (a run that died while writing leaves a short file or no manifest). */
static bool matches(const struct tp_io_records *d, const json_t *want)
{
    char p[4400];
    manifest_path(d, p, sizeof p);
    json_t *m = NULL;
    tp_error ignored;
    bool ok = tp_json_load(p, &m, &ignored) == 0; /* not ours, or not whole: written again */
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)want, key, v) {
        if (ok && !json_equal(json_object_get(m, key), v))
            ok = false;
    }
    json_decref(m);
    for (unsigned k = 0; ok && k < d->files; k++) {
        struct stat st;
        file_path(d, k, p, sizeof p);
        ok = stat(p, &st) == 0 &&
             (uint64_t)st.st_size == tp_io_records_per_file(d) * d->record_bytes;
    }
    return ok;
}

static void remove_all(const struct tp_io_records *d)
{
    char p[4400];
    for (unsigned k = 0; k < d->files; k++) {
        file_path(d, k, p, sizeof p);
        unlink(p);
    }
    manifest_path(d, p, sizeof p);
    unlink(p);
    rmdir(d->dir);
}

static int create(const struct tp_io_records *d, const json_t *manifest, tp_error *err)
{
    if (mkdir(d->dir, 0755) != 0 && errno != EEXIST)
        return tp_error_errno(err, TP_ESYS, errno, "%s", d->dir);
    struct tp_io_file *files = calloc(d->files, sizeof *files);
    if (!files)
        return tp_error_set(err, TP_ENOMEM, "%s: out of memory", d->name);
    int rc = 0;
    uint64_t bytes = tp_io_records_per_file(d) * d->record_bytes;
    char p[4400];
    for (unsigned k = 0; rc == 0 && k < d->files; k++) {
        file_path(d, k, p, sizeof p);
        rc = tp__io_file_open_path(p, O_CREAT | O_TRUNC | O_WRONLY, false, bytes, &files[k], err);
    }
    if (rc == 0)
        rc = tp_io_records_write(d, files, err);
    for (unsigned k = 0; k < d->files; k++)
        tp_io_file_close(&files[k]);
    free(files);
    if (rc == 0) {
        char *text = json_dumps(manifest, JSON_INDENT(2));
        manifest_path(d, p, sizeof p);
        rc = text ? tp_write_atomic(p, text, strlen(text), err)
                  : tp_error_set(err, TP_ENOMEM, "%s manifest: out of memory", d->name);
        free(text);
    }
    return rc;
}

int tp_io_records_ensure(const struct tp_io_records *d, const json_t *manifest, bool *created,
                         tp_error *err)
{
    *created = false;
    if (matches(d, manifest))
        return 0;
    *created = true;
    int rc = create(d, manifest, err);
    if (rc)
        remove_all(d);
    return rc;
}

int tp_io_records_open(const struct tp_io_records *d, bool direct, struct tp_io_file *files,
                       tp_error *err)
{
    uint64_t bytes = tp_io_records_per_file(d) * d->record_bytes;
    char p[4400];
    for (unsigned k = 0; k < d->files; k++) {
        file_path(d, k, p, sizeof p);
        int rc = tp__io_file_open_path(p, O_RDONLY, direct, bytes, &files[k], err);
        if (rc) {
            while (k-- > 0)
                tp_io_file_close(&files[k]);
            return rc;
        }
    }
    return 0;
}
