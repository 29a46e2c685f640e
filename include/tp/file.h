/* Reading a whole file that came from outside the process (src/core/file.c):
 * a document, a plan, a policy, a key, a snapshot's /proc file. Nothing read
 * is trusted to be small or to end: every read has a cap suited to what the
 * file is, and a reader that needs a regular file refuses a FIFO, a device
 * or a folder before it blocks on one or reads it forever. */
#ifndef TP_FILE_H
#define TP_FILE_H

#include <stddef.h>
#include <stdio.h>

#include "tp/error.h"

/* Caps, by what a file is: one place, so that they agree across readers. */
#define TP_FILE_MAX_DOC (256u << 20)    /* a result document (histograms, sweeps) */
#define TP_FILE_MAX_CONFIG (16u << 20)  /* a plan, policy, thresholds or profile */
#define TP_FILE_MAX_SYSTEM (64u << 20)  /* /proc and /sys text: mountinfo of a busy node */
#define TP_FILE_MAX_KEY 8192u           /* a pre-shared key file (the key and whitespace) */

enum tp_file_flags {
    TP_FILE_REGULAR = 0,   /* refuse anything but a regular file */
    TP_FILE_STREAM = 1u,   /* also a pipe, FIFO or character device (read to the cap) */
};

/* Read the file at path into a new NUL-terminated buffer *out of *len bytes
 * (the NUL not counted; the caller frees it). what says what the file is
 * for the messages ("a result document", "a key file"; NULL: "this file").
 * The file is opened without blocking (a FIFO without a writer does not
 * hang), then, unless flags has TP_FILE_STREAM, refused when it is not a
 * regular file. Errors are TP_EUSAGE, the message starting "PATH: ": it
 * cannot be opened or read (with strerror), it is not a regular file ("is a
 * FIFO; WHAT must be a regular file"), or it holds more than max_bytes
 * ("over N MiB: too large for WHAT"); TP_ENOMEM when out of memory. On
 * error *out is untouched. */
int tp_file_read(const char *path, const char *what, size_t max_bytes, unsigned flags, char **out,
                 size_t *len, tp_error *err);

/* tp_file_read, then the buffer as a read-only stream (fmemopen) for
 * line-by-line parsers; fclose frees the buffer too. */
int tp_file_open(const char *path, const char *what, size_t max_bytes, unsigned flags, FILE **out,
                 tp_error *err);

/* "a FIFO", "a folder", "a character device", ... for st_mode's file type. */
const char *tp_file_type_name(unsigned mode);

/* A path a command reads or writes, and what named it ("--json", "the plan
 * file", "FILE"). A NULL path is skipped. An input that is a folder stands
 * for its files that end in folder_ext (".json"; NULL: none), at any depth:
 * what a reader of the folder reads. */
struct tp_file_arg {
    const char *what, *path;
    const char *folder_ext;
};

/* An output must never be an input: refuse, before anything is written,
 * an output in outs[] that is the same file as an input in ins[] or as
 * another output, by device and inode, so through symbolic links, hard
 * links and any spelling of the path; or that is a file an input folder
 * stands for. "-" is standard input as an input and standard output as an
 * output, compared when it is a regular file (`cmd --out F - <F`); a
 * terminal, pipe or device is never the same file as another. An output
 * that does not exist yet is nobody's input. Returns 0, or TP_EUSAGE
 * naming both: "--json F is the plan file P: writing it would destroy what
 * is read; write it elsewhere". */
int tp_file_distinct(const struct tp_file_arg *outs, size_t nout, const struct tp_file_arg *ins,
                     size_t nin, tp_error *err);

/* The folder path is in, into dir (cap bytes): "." for a bare name, "/"
 * for a file at the root. Returns dir. */
char *tp_file_dir_of(const char *path, char *dir, size_t cap);

#endif
