/* Shared by the libFuzzer harnesses of fuzz/: a private temp folder per
 * process (the parsers take paths), files written into it, an input cut
 * into parts, and the harness's own assertion. Nothing here is product
 * code; a harness that breaks one of these rules has a bug of its own. */
#ifndef TP_FUZZ_H
#define TP_FUZZ_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tp/error.h"

/* The process's temp folder ($TMPDIR or /tmp, "tpfuzz.XXXXXX"), made on the
 * first call and removed, with all it holds, at exit. */
const char *fz_dir(void);

/* fz_dir()/rel into out[4096]; returns out. */
char *fz_path(char *out, const char *rel);

/* Write data[0..n) to fz_dir()/rel (created or truncated; folders on the
 * way made); the full path into out[4096] when out is not NULL. Aborts
 * when the temp folder cannot be written: that is no finding. */
void fz_write(const char *rel, const uint8_t *data, size_t n, char *out);

/* Remove fz_dir()/rel (a file, a link or a whole folder); no error when
 * absent. */
void fz_remove(const char *rel);

/* Cut data at every occurrence of sep (not kept) into at most max parts;
 * the last part takes the rest. Returns the number of parts (at least 1). */
size_t fz_split(const uint8_t *data, size_t n, const char *sep, const uint8_t **part, size_t *len,
                size_t max);

/* A NUL-terminated copy of data (malloc'd; the caller frees). */
char *fz_strndup(const uint8_t *data, size_t n);

/* One end of a socketpair whose other end has been sent data[0..n) and
 * shut for writing: reading it gives what a peer sent, then end-of-stream
 * (not a wait for the deadline). What the socket buffer cannot hold is cut
 * off, as from a peer that stalls. *peer is the other end, to close after
 * the reading end. -1 when no socketpair can be made. */
int fz_stream(const uint8_t *data, size_t n, int *peer);

/* The parsers' error contract: rc is TP_EUSAGE and the message begins with
 * the file's path (every error says "FILE:LINE:COL: ..." or "FILE: ..."). */
void fz_names_file(int rc, const tp_error *err, const char *path);

/* The integer field k of the object o (asserted to be there). */
long long fz_int(const json_t *o, const char *k);

/* /dev/null, opened once: where the harnesses print what the product
 * prints. */
FILE *fz_null(void);

/* The harness's assertion: a product contract the input broke. Prints why
 * and aborts, which libFuzzer reports as a crash with the input saved. */
#define FZ_ASSERT(cond, ...)                                                                       \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fz_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);                                       \
    } while (0)

void fz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 4, 5)));

/* libFuzzer's entry points, declared for -Wmissing-prototypes. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#endif
