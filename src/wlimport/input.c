/* The input of every import format (wlimport_int.h): a file, or standard
 * input for "-", read in chunks so that a trace of gigabytes never sits in
 * memory; gzip undone by zlib when the content starts with gzip's magic
 * (what tensorboard_trace_handler(use_gzip=True) writes; several members
 * one after the other are read as one stream); a UTF-8 BOM dropped; the
 * file's bytes hashed (SHA-256) as they are read, so the workload file can
 * name exactly what it came from (libcrypto's SHA-256, which uses the CPU's
 * SHA extensions: libsodium's portable one took 38 % of an import of a
 * 328 MB trace; a regular file is hashed by a thread of its own, beside
 * the parse). The first 64 KiB of content are
 * read at open for detection and handed out again first. Every chunk asks whether a signal came. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tp/file.h"
#include "tp/intr.h"
#include "wlimport_int.h"

static const char *shown(const struct tp__wl_in *in)
{
    return strcmp(in->path, "-") == 0 ? "- (standard input)" : in->path;
}

/* more raw bytes from the file into raw (after what z has not taken yet) */
static int fill_raw(struct tp__wl_in *in, tp_error *err)
{
    if (in->raw_n && in->z.next_in != in->raw)
        memmove(in->raw, in->z.next_in, in->raw_n);
    in->z.next_in = in->raw;
    while (!in->eof && in->raw_n < sizeof in->raw) {
        int rc = tp_intr_check(err);
        if (rc)
            return rc;
        ssize_t r = read(in->fd, in->raw + in->raw_n, sizeof in->raw - in->raw_n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return tp_error_set(err, TP_EUSAGE, "%s: cannot read: %s", shown(in), strerror(errno));
        if (r == 0) {
            in->eof = true;
            break;
        }
        if (!in->hasher)
            EVP_DigestUpdate(in->sha, in->raw + in->raw_n, (size_t)r);
        in->raw_n += (size_t)r;
        break; /* one read a call: a pipe hands out what it has */
    }
    return 0;
}

/* content bytes from the file (inflated when gz), not from peek */
static int read_content(struct tp__wl_in *in, unsigned char *buf, size_t cap, size_t *got,
                        tp_error *err)
{
    *got = 0;
    while (*got == 0) {
        if (in->raw_n == 0 && !in->eof) {
            int rc = fill_raw(in, err);
            if (rc)
                return rc;
        }
        if (!in->gz) {
            if (in->raw_n == 0)
                return 0;
            size_t n = in->raw_n < cap ? in->raw_n : cap;
            memcpy(buf, in->z.next_in, n);
            in->z.next_in += n;
            in->raw_n -= n;
            *got = n;
            continue;
        }
        if (in->zend) { /* a member ended: another may follow */
            if (in->raw_n == 0 && in->eof)
                return 0;
            if (in->raw_n == 0)
                continue;
            if (inflateReset(&in->z) != Z_OK)
                return tp_error_set(err, TP_EUSAGE, "%s: gzip: cannot restart", shown(in));
            in->zend = false;
        }
        if (in->raw_n == 0 && in->eof)
            return tp_error_set(err, TP_EUSAGE,
                                "%s: gzip: the stream ends early (a file cut short?)", shown(in));
        in->z.avail_in = (uInt)in->raw_n;
        in->z.next_out = buf;
        in->z.avail_out = (uInt)(cap > (1u << 30) ? 1u << 30 : cap);
        int zr = inflate(&in->z, Z_NO_FLUSH);
        in->raw_n = in->z.avail_in;
        *got = (size_t)(in->z.next_out - buf);
        if (zr == Z_STREAM_END)
            in->zend = true;
        else if (zr == Z_BUF_ERROR && in->raw_n == 0)
            continue; /* wants more input */
        else if (zr != Z_OK)
            return tp_error_set(err, TP_EUSAGE, "%s: gzip: %s", shown(in),
                                in->z.msg ? in->z.msg : "a broken stream");
        if (in->raw_n == 0 && !in->eof && *got == 0) {
            int rc = fill_raw(in, err);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* the hashing thread of a regular file: its own reads, from the start */
static void *hash_main(void *arg)
{
    struct tp__wl_in *in = arg;
    unsigned char *buf = malloc(1u << 20);
    off_t at = 0;
    while (buf && !tp_intr_signal()) {
        ssize_t r = pread(in->hash_fd, buf, 1u << 20, at);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        EVP_DigestUpdate(in->sha, buf, (size_t)r);
        at += r;
    }
    free(buf);
    return NULL;
}

int tp__wl_in_open(struct tp__wl_in *in, const char *path, tp_error *err)
{
    memset(in, 0, sizeof *in);
    in->path = path;
    in->fd = -1;
    if (!(in->sha = EVP_MD_CTX_new()) || EVP_DigestInit_ex(in->sha, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(in->sha);
        in->sha = NULL;
        return tp_error_set(err, TP_ENOMEM, "%s: SHA-256: out of memory", path);
    }
    if (strcmp(path, "-") == 0) {
        in->fd = STDIN_FILENO;
    } else {
        in->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (in->fd < 0) {
            int e = errno;
            EVP_MD_CTX_free(in->sha);
            in->sha = NULL;
            return tp_error_set(err, TP_EUSAGE, "%s: cannot open: %s", path, strerror(e));
        }
        struct stat st;
        if (fstat(in->fd, &st) != 0)
            st.st_mode = 0;
        if (S_ISDIR(st.st_mode)) {
            close(in->fd);
            in->fd = -1;
            EVP_MD_CTX_free(in->sha);
            in->sha = NULL;
            return tp_error_set(err, TP_EUSAGE, "%s: is %s, not a trace or a log", path,
                                tp_file_type_name(st.st_mode));
        }
        int fl = fcntl(in->fd, F_GETFL);
        if (fl >= 0)
            (void)fcntl(in->fd, F_SETFL, fl & ~O_NONBLOCK); /* a FIFO blocks from here */
        if (S_ISREG(st.st_mode) && (in->hash_fd = dup(in->fd)) >= 0) {
            in->hasher = pthread_create(&in->hash_thread, NULL, hash_main, in) == 0;
            if (!in->hasher)
                close(in->hash_fd);
        }
    }
    in->z.next_in = in->raw;
    int rc = 0;
    while (rc == 0 && in->raw_n < 2 && !in->eof)
        rc = fill_raw(in, err);
    if (rc == 0 && in->raw_n >= 2 && in->raw[0] == 0x1f && in->raw[1] == 0x8b) {
        in->gz = true;
        if (inflateInit2(&in->z, 15 + 16) != Z_OK)
            rc = tp_error_set(err, TP_ENOMEM, "%s: gzip: out of memory", path);
        in->z.next_in = in->raw;
    }
    /* the first bytes of content, for detection */
    while (rc == 0 && in->peek_n < sizeof in->peek - 1) {
        size_t got = 0;
        rc = read_content(in, in->peek + in->peek_n, sizeof in->peek - 1 - in->peek_n, &got, err);
        if (got == 0)
            break;
        in->peek_n += got;
    }
    if (rc == 0 && in->peek_n >= 3 && memcmp(in->peek, "\xef\xbb\xbf", 3) == 0)
        in->peek_at = 3; /* a UTF-8 BOM */
    in->peek[in->peek_n] = 0;
    if (rc) {
        char hex[65];
        tp__wl_in_close(in, hex);
    }
    return rc;
}

int tp__wl_in_read(struct tp__wl_in *in, void *buf, size_t cap, size_t *got, tp_error *err)
{
    if (in->peek_at < in->peek_n) {
        size_t n = in->peek_n - in->peek_at < cap ? in->peek_n - in->peek_at : cap;
        memcpy(buf, in->peek + in->peek_at, n);
        in->peek_at += n;
        in->bytes += n;
        *got = n;
        return tp_intr_check(err);
    }
    int rc = read_content(in, buf, cap, got, err);
    in->bytes += *got;
    return rc;
}

void tp__wl_in_close(struct tp__wl_in *in, char hex[65])
{
    /* the hash covers the whole file: read what the content's end left;
     * after an interrupt nothing is written, so no hash is wanted (a pipe
     * that goes on for gigabytes would hold the exit until its end) */
    unsigned char scratch[65536];
    if (in->hasher) {
        pthread_join(in->hash_thread, NULL);
        close(in->hash_fd);
        in->hasher = false;
        in->eof = true;
    }
    while (in->fd >= 0 && !in->eof && !tp_intr_signal()) {
        ssize_t r = read(in->fd, scratch, sizeof scratch);
        if (r < 0 && errno == EINTR && !tp_intr_signal())
            continue;
        if (r <= 0)
            break;
        EVP_DigestUpdate(in->sha, scratch, (size_t)r);
    }
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    hex[0] = 0;
    if (in->sha && EVP_DigestFinal_ex(in->sha, d, &n) == 1)
        for (unsigned i = 0; i < n && i < 32; i++)
            snprintf(hex + 2 * i, 3, "%02x", d[i]);
    EVP_MD_CTX_free(in->sha);
    in->sha = NULL;
    if (in->gz)
        inflateEnd(&in->z);
    if (in->fd >= 0 && in->fd != STDIN_FILENO)
        close(in->fd);
    in->fd = -1;
    in->gz = false;
}
