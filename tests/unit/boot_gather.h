/* The gather check shared by the boot tests (test_boot.c over the local
 * backend, boot_mpi_check.c under mpirun and srun). */
#ifndef TP_TEST_BOOT_GATHER_H
#define TP_TEST_BOOT_GATHER_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp/boot.h"

/* A long string for rank r to gather: its own length, with two- and
 * three-byte UTF-8 characters that the wire's parts must not split. */
static char *gather_text(int r)
{
    size_t n = 20000 + 777 * (size_t)r;
    char *s = malloc(n + 1);
    size_t i = 0;
    while (s && i + 3 < n) {
        static const char *const seq[] = {"é", "ab", "€", "z"};
        const char *c = seq[(i + (size_t)r) % 4];
        memcpy(s + i, c, strlen(c));
        i += strlen(c);
    }
    if (s) {
        memset(s + i, 'x', n - i);
        s[n] = 0;
    }
    return s;
}

/* Gather a long string from every rank to rank 0 and compare. Returns 0, or
 * a non-zero code after printing why. */
static int gather_check(struct tp_boot *b)
{
    int rank = tp_boot_rank(b), size = tp_boot_size(b);
    char **all = NULL, *mine = gather_text(rank);
    tp_error err;
    if (!mine || tp_boot_gather(b, mine, &all, &err)) {
        fprintf(stderr, "rank %d: gather: %s\n", rank, mine ? err.msg : "out of memory");
        free(mine);
        return 9;
    }
    free(mine);
    if (rank != 0 && all) {
        fprintf(stderr, "rank %d: gather gave a rank other than 0 the data\n", rank);
        return 10;
    }
    for (int r = 0; rank == 0 && r < size; r++) {
        char *want = gather_text(r);
        if (!want || strcmp(all[r], want) != 0) {
            fprintf(stderr, "rank 0: gathered rank %d: %zu bytes, want %zu\n", r, strlen(all[r]),
                    want ? strlen(want) : 0);
            free(want);
            return 11;
        }
        free(want);
    }
    tp_boot_free_strings(all, size);
    return 0;
}

/* An allgather of the longest strings a rank may give (TP_BOOT_MAX_BLOB
 * bytes, each rank's its own): past 16 ranks the whole is larger than one
 * frame of the wire. Returns 0, or a non-zero code after printing why. */
static int allgather_long_check(struct tp_boot *b)
{
    int rank = tp_boot_rank(b), size = tp_boot_size(b);
    char mine[TP_BOOT_MAX_BLOB + 1], **all = NULL;
    memset(mine, 'a' + rank % 26, TP_BOOT_MAX_BLOB);
    memcpy(mine, "€", strlen("€"));
    snprintf(mine + TP_BOOT_MAX_BLOB - 8, 9, "%08d", rank % 10000000);
    tp_error err;
    if (tp_boot_allgather(b, mine, &all, &err)) {
        fprintf(stderr, "rank %d: allgather of %d bytes each: %s\n", rank, TP_BOOT_MAX_BLOB,
                err.msg);
        return 15;
    }
    for (int r = 0; r < size; r++) {
        char want[TP_BOOT_MAX_BLOB + 1];
        memset(want, 'a' + r % 26, TP_BOOT_MAX_BLOB);
        memcpy(want, "€", strlen("€"));
        snprintf(want + TP_BOOT_MAX_BLOB - 8, 9, "%08d", r % 10000000);
        if (strcmp(all[r], want) != 0) {
            fprintf(stderr, "rank %d: allgathered rank %d's %zu bytes, not as sent\n", rank, r,
                    strlen(all[r]));
            tp_boot_free_strings(all, size);
            return 16;
        }
    }
    tp_boot_free_strings(all, size);
    return 0;
}

/* Rank r's part of scatter_check: rank 1's long (several frames, a
 * character of three bytes across their bounds), rank 2's empty, the
 * others short; malloc'd. */
static char *scatter_part(int r)
{
    size_t len = r == 1 ? 3 * TP_BOOT_GATHER_PART + 5 : 32;
    char *p = malloc(len + 1);
    if (!p)
        return NULL;
    if (r == 1) {
        for (size_t i = 0; i + 3 <= len; i += 3)
            memcpy(p + i, "€", 3);
        memset(p + len - len % 3, 'x', len % 3);
        p[len] = 0;
    } else {
        snprintf(p, len + 1, r == 2 ? "" : "part-%d", r);
    }
    return p;
}

/* tp_boot_bcast: rank 0's text (rank 1's long part of scatter_check:
 * several frames, characters across their bounds) reaches every rank
 * whole; then an empty one. */
static int bcast_check(struct tp_boot *b)
{
    int rank = tp_boot_rank(b), rc = 0;
    char *text = scatter_part(1), *got = NULL;
    tp_error err;
    for (int k = 0; k < 2 && !rc; k++) {
        const char *want = k == 0 ? text : "";
        if (!text || tp_boot_bcast(b, rank == 0 ? want : NULL, &got, &err)) {
            fprintf(stderr, "rank %d: bcast: %s\n", rank, text ? err.msg : "out of memory");
            rc = 19;
        } else if (strcmp(got, want) != 0) {
            fprintf(stderr, "rank %d: broadcast %zu bytes, not rank 0's %zu\n", rank,
                    strlen(got), strlen(want));
            rc = 20;
        }
        free(got);
        got = NULL;
    }
    free(text);
    return rc;
}

/* tp_boot_scatter: each rank gets its own part and only it. */
static int scatter_check(struct tp_boot *b)
{
    int rank = tp_boot_rank(b), size = tp_boot_size(b), rc = 0;
    char **parts = rank == 0 ? calloc((size_t)size, sizeof *parts) : NULL, *mine = NULL;
    for (int r = 0; parts && r < size; r++)
        parts[r] = scatter_part(r);
    tp_error err;
    if (tp_boot_scatter(b, parts, &mine, &err)) {
        fprintf(stderr, "rank %d: scatter: %s\n", rank, err.msg);
        rc = 17;
    }
    char *want = scatter_part(rank);
    if (!rc && (!want || strcmp(mine, want) != 0)) {
        fprintf(stderr, "rank %d: scattered %zu bytes, not its part\n", rank, strlen(mine));
        rc = 18;
    }
    free(want);
    free(mine);
    for (int r = 0; parts && r < size; r++)
        free(parts[r]);
    free(parts);
    return rc;
}

/* What rank 0's callback saw of a tp_boot_gather_each. */
struct each_seen {
    int next;     /* the rank expected next */
    int fail_at;  /* the rank whose string the callback refuses, or -1 */
    int bad;      /* a string out of order or not as sent */
};

static int each_check(void *ctx, int r, const char *data, tp_error *err)
{
    struct each_seen *s = ctx;
    char *want = gather_text(r);
    if (r != s->next || !want || strcmp(data, want) != 0)
        s->bad++;
    free(want);
    s->next = r + 1;
    if (r == s->fail_at)
        return tp_error_set(err, TP_ESYS, "refused rank %d's string", r);
    return 0;
}

/* tp_boot_gather_each: rank 0 sees every rank's string in rank order (in
 * more than one window when the group is larger than one); when its
 * callback refuses one, it is not called again, rank 0 gets that error
 * after reading the rest, the others 0, and the group goes on (a barrier). Returns 0, or a non-zero
 * code after printing why. */
static int gather_each_check(struct tp_boot *b)
{
    int rank = tp_boot_rank(b), size = tp_boot_size(b);
    char *mine = gather_text(rank);
    tp_error err = {0};
    for (int fail_at = -1; fail_at <= 1; fail_at += 2) {
        struct each_seen s = {.next = 0, .fail_at = fail_at < size ? fail_at : -1};
        int rc = mine ? tp_boot_gather_each(b, mine, each_check, &s, &err) : -1;
        int want = rank == 0 && s.fail_at >= 0 ? TP_ESYS : 0;
        if (rc != want || (rank == 0 && (s.bad || s.next != (want ? s.fail_at + 1 : size)))) {
            fprintf(stderr, "rank %d: gather_each (refusing %d): %d (want %d), %d of %d in order, "
                    "%d bad: %s\n", rank, s.fail_at, rc, want, s.next, size, s.bad,
                    rc ? err.msg : "");
            free(mine);
            return 12;
        }
        if (rank == 0 && want && !strstr(err.msg, "refused rank 1")) {
            fprintf(stderr, "rank 0: gather_each said '%s', not the callback's words\n", err.msg);
            free(mine);
            return 13;
        }
        if (tp_boot_barrier(b, &err)) {
            fprintf(stderr, "rank %d: barrier after gather_each: %s\n", rank, err.msg);
            free(mine);
            return 14;
        }
    }
    free(mine);
    return 0;
}

#endif
