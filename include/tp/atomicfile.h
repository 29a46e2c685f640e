/* Files that are either the old version or the new one, never a torn mix:
 * write a temporary file beside the target, fsync it, rename it over the
 * target, fsync the directory. */
#ifndef TP_ATOMICFILE_H
#define TP_ATOMICFILE_H

#include <stddef.h>

#include "tp/error.h"

/* Replace path with len bytes of data atomically. On error path is unchanged,
 * no temporary file is left, and err names path (TP_EUSAGE when the folder
 * does not exist or is not writable, TP_ESYS otherwise). A path that exists
 * and is neither a regular file nor a folder (/dev/null, /dev/stdout, a
 * FIFO) is written in place, never replaced. */
int tp_write_atomic(const char *path, const void *data, size_t len, tp_error *err);

#endif
