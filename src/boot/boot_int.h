/* Internal to src/boot: the group (struct tp_boot), the backend table's row
 * (struct tp_boot_backend) and the shared rank-0 star (star.c) that the
 * local and env backends are built on. Adding a launcher is one file with
 * one row, plus a line in boot.c's table. Files here call downwards only:
 * boot.c -> local.c, env.c, mpi.c -> star.c. */
#ifndef TP_BOOT_INT_H
#define TP_BOOT_INT_H

#include <stdbool.h>
#include <sys/types.h>

#include "tp/boot.h"
#include "tp/wire.h"

#define TP_BOOT_CLOCK_PROBES 16 /* round trips per rank; the least delayed one counts */

struct tp_boot {
    const struct tp_boot_backend *be; /* the row that made the group */
    int rank, size;
    uint64_t timeout_ns;
    struct tp_key key;
    struct tp_conn *conn; /* star, rank 0: conn[r] to rank r; others: conn[0] to rank 0 */
    char **hosts;
    int64_t *offset;
    uint64_t *rtt;
    pid_t *children; /* local rank 0: pid of rank r */
    int lost;        /* the rank a failed operation found lost (star, rank 0), or -1 */
    bool leave_out;  /* a lost rank is left out, not an error (tp_boot_leave_out) */
    bool *gone;      /* gone[r]: rank r was left out */
    bool lean;       /* the star told each rank its own host and rank 0's alone */
    int local_rank;  /* this rank's on its host, as rank 0 told it (lean), else -1 */
    char **gone_why; /* rank 0: why */
};

/* One launcher. boot.c looks a row up by name (or detects it) once; the
 * group then carries its row, and every operation goes through it. */
struct tp_boot_backend {
    const char *name;
    /* The variables that hold this process's rank under this launcher, in
     * the order they are read, NULL-terminated. They are the detection (the
     * launcher started this process when one is set) and the rank-0 hint
     * (its value, when set, is "0" on rank 0). NULL for the fallback (local),
     * detected when no other row is and always rank 0. */
    const char *const *rank_vars;
    /* size_vars[i]: the variable that holds the group's size beside
     * rank_vars[i] ("" where the launcher sets none); NULL for the
     * fallback. */
    const char *const *size_vars;
    /* Who sets those variables, as a message names it ("mpirun or srun",
     * "torchrun"); NULL for the fallback. */
    const char *starter;
    /* Every environment variable by which this launcher makes a process a
     * rank: names that start with one of var_prefixes, or are one of
     * var_names (both NULL-terminated, either may be NULL). */
    const char *const *var_prefixes;
    const char *const *var_names;
    /* Join the group: fill a group made with tp__boot_new. On error no
     * group exists and err names the rank, host, option or variable. */
    int (*init)(const struct tp_boot_opts *o, struct tp_boot **out, tp_error *err);
    /* Fill res[r] (b->size entries, zeroed, owned by the caller, who frees
     * them on error too) with rank r's string; mine is at most
     * TP_BOOT_MAX_BLOB bytes. */
    int (*allgather)(struct tp_boot *b, const char *mine, char **res, tp_error *err);
    /* tp_boot_gather_each: rank 0 calls fn for every rank's string, in
     * rank order, the fan-in bounded by TP_BOOT_GATHER_WINDOW (a tree, or
     * that many ranks sending at a time); fn and ctx are unused on the
     * other ranks. */
    int (*gather)(struct tp_boot *b, const char *mine, tp_boot_each_fn fn, void *ctx,
                  tp_error *err);
    /* tp_boot_scatter: *mine set to parts[b->rank] (parts read on rank 0
     * alone) */
    int (*scatter)(struct tp_boot *b, char *const *parts, char **mine, tp_error *err);
    /* tp_boot_bcast: *out set to rank 0's text (read on rank 0 alone);
     * NULL: a scatter of the one text to every rank does it (a star's: the
     * same bytes) */
    int (*bcast)(struct tp_boot *b, const char *text, char **out, tp_error *err);
    int (*barrier)(struct tp_boot *b, tp_error *err);
    /* Bound every later operation: rank 0 waits at most ns for each rank
     * (one silent longer is lost), the others twice that for rank 0, which
     * may itself be waiting on one. NULL: the launcher's own operations
     * cannot be bounded (MPI). */
    void (*set_timeout)(struct tp_boot *b, uint64_t ns);
    /* Whether an operation can go on without a rank that was lost
     * (tp_boot_leave_out): a star can, MPI cannot. */
    bool can_leave_out;
    /* End the whole job, this rank included, with code (does not return);
     * NULL: fini ends it well enough (the others see the connections
     * close). */
    void (*abort)(struct tp_boot *b, int code);
    /* Leave and free the group; the worst exit status of the ranks this
     * process started (0 when it started none). */
    int (*fini)(struct tp_boot *b);
};

extern const struct tp_boot_backend tp__boot_local;
extern const struct tp_boot_backend tp__boot_mpi;
extern const struct tp_boot_backend tp__boot_env;

/* ---- the group's life (star.c) ---- */

/* A group of size ranks, this process being rank, made by backend be; no
 * connections yet. NULL when out of memory. */
struct tp_boot *tp__boot_new(const struct tp_boot_backend *be, int rank, int size,
                             uint64_t timeout_ns);

/* Close every connection of b (the ranks reading from this one see the end
 * of the stream); b stays allocated. */
void tp__boot_hang_up(struct tp_boot *b);

/* Close b's connections and free it (b may be NULL). */
void tp__boot_free(struct tp_boot *b);

/* This host's name ("?" when it has none). */
const char *tp__boot_my_host(void);

/* Host name of rank r, "?" when unknown or r is out of range. */
const char *tp__boot_host(const struct tp_boot *b, int r);

/* Whether theirs differs from ours (options objects); the first option
 * that does, into what (cap bytes), as "--name (theirs, where rank 0 has
 * ours)" or "--name (which rank 0 does not have)". */
bool tp__boot_options_differ(const json_t *ours, const json_t *theirs, char *what, size_t cap);

/* ---- the star of control connections to rank 0 (star.c) ---- */

/* Rank 0: accept the other b->size - 1 ranks on lfd (authenticated with
 * b->key, each JOIN checked against options), probe their clocks and send
 * them the group. On error every rank that joined is told why, and err
 * names the rank, host or option. With b->leave_out, the ranks that have
 * not joined by the timeout are left out instead (gone from the start). An
 * interrupt ends the wait within INTR_SLICE_MS (TP_EINTR/TP_ETERM). */
int tp__boot_lead(struct tp_boot *b, int lfd, const json_t *options, tp_error *err);

/* Rank b->rank > 0: connect to rank 0 at host:port (retrying until it
 * listens, within b->timeout_ns), join with options, answer the clock
 * probes and receive the group. On error err says what rank 0 reported or
 * why it could not be reached; an interrupt ends the wait (TP_EINTR/TP_ETERM). */
int tp__boot_join(struct tp_boot *b, const char *host, int port, const json_t *options,
                  tp_error *err);

/* The backend operations of a star group (struct tp_boot_backend). */
int tp__boot_star_allgather(struct tp_boot *b, const char *mine, char **res, tp_error *err);
int tp__boot_star_gather(struct tp_boot *b, const char *mine, tp_boot_each_fn fn, void *ctx,
                         tp_error *err);
int tp__boot_star_scatter(struct tp_boot *b, char *const *parts, char **mine, tp_error *err);
int tp__boot_star_barrier(struct tp_boot *b, tp_error *err);
void tp__boot_star_set_timeout(struct tp_boot *b, uint64_t ns);
int tp__boot_star_fini(struct tp_boot *b);

#endif
