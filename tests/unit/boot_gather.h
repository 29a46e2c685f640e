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

#endif
