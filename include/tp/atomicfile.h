/* Files that are either the old version or the new one, never a torn mix:
 * write a temporary file beside the target, fsync it, rename it over the
 * target, fsync the directory. */
#ifndef TP_ATOMICFILE_H
#define TP_ATOMICFILE_H

#include <stddef.h>
#include <stdio.h>

#include "tp/error.h"

/* Replace path with len bytes of data atomically. On error path is unchanged,
 * no temporary file is left, and err names path (TP_EUSAGE when the folder
 * does not exist or is not writable, TP_ESYS otherwise). A path that exists
 * and is neither a regular file nor a folder (/dev/null, /dev/stdout, a
 * FIFO) is written in place, never replaced. */
int tp_write_atomic(const char *path, const void *data, size_t len, tp_error *err);

/* The same for content written as it comes (a file too large to hold):
 * tp_atomic_begin opens a temporary file beside path and gives its stream
 * in *f; write to it, then tp_atomic_commit (flush, fsync, rename over path,
 * fsync the folder; path untouched and the temporary file gone on error,
 * err naming path) or tp_atomic_discard (path untouched, nothing left).
 * Either frees a and closes *f. Errors of begin as tp_write_atomic's; a
 * target that is not a regular file is written in place. */
struct tp_atomic;
int tp_atomic_begin(const char *path, struct tp_atomic **a, FILE **f, tp_error *err);
int tp_atomic_commit(struct tp_atomic *a, tp_error *err);
void tp_atomic_discard(struct tp_atomic *a);

#endif
