/* boot: turns a set of processes into a group: each learns its rank and the
 * group size, the hosts of the others, and the offset of every rank's clock
 * against rank 0's; the group can allgather small blobs (data-path
 * addresses) and meet at barriers. The control path is a star of
 * authenticated TCP connections to rank 0 (src/wire), so every blocking step
 * has a deadline and a lost rank is an error that names it and its host.
 *
 * Backends:
 *   local  rank 0 forks the other ranks on this host (the embedded default);
 *          the key is made fresh and shared through fork.
 *   env    torchrun/Kubernetes: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
 *          (LOCAL_RANK and LOCAL_WORLD_SIZE are not needed: which ranks
 *          share a host follows from their host names); rank 0 listens at
 *          MASTER_ADDR:MASTER_PORT, the others connect; a key file is
 *          required unless MASTER_ADDR is a loopback address.
 *   mpi    mpirun or srun started the ranks (Open MPI, MPICH/PMI or PMIx in
 *          the environment): rank, size, exchanges and barriers through
 *          MPI; clock offsets by MPI ping-pong with rank 0. Built when Meson
 *          finds MPI. MPI calls have no deadline of their own: the launcher
 *          ends the job when a rank dies.
 *
 * Every rank passes its effective options as a JSON object; rank 0 compares
 * them and a rank that differs makes every rank fail with TP_EUSAGE naming
 * the option. */
#ifndef TP_BOOT_H
#define TP_BOOT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tp/error.h"

struct tp_boot_opts {
    const char *backend;   /* "local", "env" or "mpi"; NULL picks mpi under an MPI
                              launcher, env when RANK is set, else local */
    int nranks;            /* local: ranks to start (>= 1) */
    const char *key_file;  /* env: pre-shared key of the rendezvous */
    uint64_t timeout_ns;   /* every blocking step */
    const json_t *options; /* this rank's effective options, compared across ranks */
    bool leave_out;        /* a rank that has not joined by the timeout is left out (the
                              group forms without it: tp_boot_gone, host "?"), and so is
                              one lost later (tp_boot_leave_out); ignored where the
                              launcher forms the group (mpi) or this process does (local) */
    bool lean;             /* a star's forming tells each rank its own host, clock and
                              local rank and rank 0's host, not every rank's: O(N) bytes out
                              of rank 0, not N² (tp_boot_host of another rank is "?" but on
                              rank 0); ignored by mpi, whose launcher forms the group */
};

struct tp_boot;

/* The backend a process will boot with: given when not NULL, else the
 * launcher that started it, detected from the launcher's rank variables:
 * "mpi" under mpirun or srun (OMPI_COMM_WORLD_RANK, PMI_RANK or PMIX_RANK
 * set), "env" with RANK set (torchrun), else "local". Never NULL; given is
 * returned as it is, checked or not (tp_boot_check_backend). */
const char *tp_boot_detect(const char *given);

/* Whether this process will be rank 0 of the group that backend (NULL:
 * the detected one, as tp_boot_detect) makes, before the group exists: the
 * rank that writes the result document. True for local (the parent of the
 * ranks it forks) and for a name that is no backend; otherwise true when
 * the launcher's rank variable is "0", empty or not set (RANK for env; Open
 * MPI's, PMI's or PMIx's, the first that is set, for mpi). */
bool tp_boot_will_be_rank0(const char *backend);

/* Whether the ranks of backend (NULL: the detected one) are started by a
 * launcher outside this process (mpi, env), rather than forked by it on
 * this host (local): what tells a job that it is one node of an
 * allocation. False for a name that is no backend. */
bool tp_boot_launched(const char *backend);

/* Hold the launcher's environment against what the user asked, before
 * any rank starts. given: --launcher (NULL: detected); nranks: an explicit
 * -n (0 when none was given). Refused, TP_EUSAGE with err naming the
 * variable: a rank variable of the launcher in use (given or detected)
 * that is not a rank of its size variable (OMPI_COMM_WORLD_SIZE beside
 * OMPI_COMM_WORLD_RANK, PMI_SIZE beside PMI_RANK, SLURM_STEP_NUM_TASKS
 * beside PMIX_RANK, WORLD_SIZE beside RANK), or a size variable that is no
 * count; and, with no --launcher, an explicit -n where a launcher's rank
 * variable is set and its size is not that -n (a variable left from an
 * `srun --pty` shell made `coll -n 4` a group of one). An explicit
 * --launcher wins over the variables: --launcher local forks -n ranks
 * whatever is set. Returns 0 when nothing is wrong or no launcher's
 * variable is set. */
int tp_boot_check_env(const char *given, int nranks, tp_error *err);

/* Check a backend name given by the user: 0 when name is a backend (or
 * NULL, which is detection). On error TP_EUSAGE, err (which may be NULL)
 * reading "WHAT NAME: local, mpi or env", the list of every backend; what
 * names where name came from (e.g. "--launcher"). */
int tp_boot_check_backend(const char *name, const char *what, tp_error *err);

/* Whether an environment entry kv ("NAME=VALUE", or a bare NAME) is one of
 * the variables by which a launcher makes a process a rank (mpirun's,
 * srun's PMI or PMIx, torchrun's): a process that starts a group of its own
 * removes them from its children's environment, so a child is not taken
 * for a member of this job. */
bool tp_boot_launcher_var(const char *kv);

/* The environment entries ("NAME=VALUE") that make a child rank `rank` of
 * a group of `size` joined by the env backend at addr:port (torchrun's
 * variables), into out[0..3], each of cap bytes. Returns 0, or -1 when a
 * value does not fit. */
int tp_boot_env_member(int rank, int size, const char *addr, const char *port, char out[4][128]);

/* Join the group of backend o->backend (NULL: tp_boot_detect's). With the
 * local backend this forks: the call returns in every rank, rank 0 being
 * the calling process. On error no group exists; err names the rank, host
 * or option at fault (a name that is no backend: TP_EUSAGE, as
 * tp_boot_check_backend's for "--launcher"). An interrupt (tp_intr) ends
 * the star's waits (rank 0 for the ranks to join, a rank for rank 0 to
 * listen) within a quarter of a second: TP_EINTR or TP_ETERM, the ranks
 * that had joined told why. */
int tp_boot_init(const struct tp_boot_opts *o, struct tp_boot **out, tp_error *err);

int tp_boot_rank(const struct tp_boot *b);
int tp_boot_size(const struct tp_boot *b);

/* After an operation failed: the rank it found lost (it died, or closed
 * its connection), as rank 0 of a star (the env and local backends) sees
 * it; -1 when none was or this rank cannot tell (the others, MPI: there a
 * lost rank ends the job). */
int tp_boot_lost(const struct tp_boot *b);

/* Bound every later operation of the group by ns (tp_boot_opts.timeout_ns
 * until then): rank 0 waits at most ns for each rank, and a rank silent
 * longer is lost (tp_boot_lost names it; err says it did not answer within
 * the time); the other ranks wait twice that for rank 0, which may itself
 * be waiting on one. Returns false, changing nothing, where the launcher's
 * own operations cannot be bounded (MPI: a hung rank hangs the job until
 * the launcher's timeout). */
bool tp_boot_set_timeout(struct tp_boot *b, uint64_t ns);

/* From now on a rank lost in an operation (it died, closed its
 * connection, or stayed silent past the timeout) is left out instead of
 * failing the operation: rank 0 closes its connection and goes on with the
 * others, in this operation and every later one. What the ranks see:
 * tp_boot_allgather's all[r] is NULL for a rank left out (rank 0 sends one
 * result to all, so every rank sees the same NULLs; a rank left out while
 * rank 0 sends it shows in the next one); tp_boot_gather_each calls fn
 * with data NULL for it; tp_boot_gone says which. Rank 0 itself cannot be
 * left out: when it is lost the others fail as before; an interrupt fails
 * the operation as before. In a read of every rank's part (an allgather, a
 * barrier) rank 0 waits for all of them together for the timeout, not for
 * each in turn, so k silent ranks cost one timeout, not k. Returns false,
 * changing nothing, where the launcher's group cannot go on without a rank
 * (MPI: the launcher ends the job). */
bool tp_boot_leave_out(struct tp_boot *b);

/* Whether rank r was left out, as this rank knows it: on rank 0 at once,
 * on the others from the allgathers (and barriers) since. */
bool tp_boot_gone(const struct tp_boot *b, int r);

/* Rank 0, failed of its own outside the group's operations: tell every
 * rank still connected, so that the operation each waits in fails with
 * why as rank 0's report (tp_boot_lead_lost false), not as rank 0 lost.
 * Nothing on the other ranks, or where there is no connection to rank 0
 * (MPI). */
void tp_boot_tell(struct tp_boot *b, const tp_error *why);

/* The bytes this rank has sent and received over the group's control
 * connections so far (a star: rank 0's to every rank, the others' to rank
 * 0; frames with their headers): what its operations cost on the wire.
 * Both 0 where the launcher moves the bytes (MPI). */
void tp_boot_bytes(const struct tp_boot *b, uint64_t *sent, uint64_t *received);

/* On a rank other than 0, after an operation failed: whether rank 0 was
 * lost (its control connection closed, reset or silent past the timeout),
 * not rank 0 reporting an error of its own to every rank. False on rank 0
 * and for a group with no connection to rank 0 (MPI: the launcher ends the
 * job). What the fleet triage's deputy asks before it writes the fleet
 * document in rank 0's place. */
bool tp_boot_lead_lost(const struct tp_boot *b, const tp_error *err);

/* Rank 0: why rank r was left out (the error that lost it: "peer ... did
 * not answer on the control connection within 15.0 s", "... closed the
 * control connection"); NULL when it was not, and on the other ranks. */
const char *tp_boot_gone_why(const struct tp_boot *b, int r);

/* Where a star group meets that is formed beside the launcher's: rank 0
 * listens at host:port, the others join it there. */
struct tp_boot_star_opts {
    int rank, size;
    const char *host;      /* rank 0's address, reachable by every rank */
    int port;              /* rank 0 listens on it */
    const char *key_file;  /* the pre-shared key; required unless host is loopback */
    uint64_t timeout_ns;   /* joining, and every step until tp_boot_set_timeout */
    const json_t *options; /* compared across ranks, as tp_boot_opts' */
    bool leave_out;        /* as tp_boot_opts' */
    bool lean;             /* as tp_boot_opts' */
};

/* Form a star group over TCP (the env backend's, whatever launched the
 * process), every rank of it calling this: a control path whose
 * operations tp_boot_set_timeout can bound, for a group whose launcher's
 * cannot (MPI). TP_EUSAGE for a value out of range or a non-loopback host
 * without a key; otherwise as tp_boot_init. */
int tp_boot_star(const struct tp_boot_star_opts *o, struct tp_boot **out, tp_error *err);

/* End the group because a rank of it is lost. Under MPI the whole job
 * ends now (MPI_Abort with code; the call does not return): a rank that
 * hangs would hold MPI_Finalize forever. Elsewhere as tp_boot_fini. */
int tp_boot_abort(struct tp_boot *b, int code);

/* Host name of rank r (0 <= r < size); "?" for one left out, and in a lean
 * group (tp_boot_opts.lean) for any rank but rank 0 and this one, outside
 * rank 0. */
const char *tp_boot_host(const struct tp_boot *b, int r);

/* This rank's index among the ranks on its host (0 for the lowest rank
 * there): which core a rank pins, which GPU it takes. */
int tp_boot_local_rank(const struct tp_boot *b);

/* Estimated clock offset of rank r against rank 0, in nanoseconds of
 * tp_now_ns() (rank r's clock minus rank 0's), from the round trip with the
 * least delay among several; and that round trip, which bounds the error. */
int64_t tp_boot_clock_offset_ns(const struct tp_boot *b, int r);
uint64_t tp_boot_clock_rtt_ns(const struct tp_boot *b, int r);

/* Every rank contributes a string of at most 4096 bytes; on return all[r]
 * (malloc'd array of malloc'd strings, free with tp_boot_free_strings) holds
 * rank r's. */
int tp_boot_allgather(struct tp_boot *b, const char *mine, char ***all, tp_error *err);
void tp_boot_free_strings(char **all, int n);

/* Every rank contributes a string of any length (valid UTF-8); rank 0
 * gets all of them, *all as tp_boot_allgather's, the other ranks *all =
 * NULL. For results too large to allgather: the data crosses once, to rank
 * 0. On error rank 0's err names the rank lost. Rank 0 holds every string
 * at once: for a large group, tp_boot_gather_each. */
int tp_boot_gather(struct tp_boot *b, const char *mine, char ***all, tp_error *err);
/* (A rank left out has all[r] NULL.) */

/* What rank 0 does with rank r's string in tp_boot_gather_each; data is
 * freed when it returns, and NULL for a rank left out (tp_boot_leave_out).
 * Non-zero (with err set) is the gather's result. */
typedef int (*tp_boot_each_fn)(void *ctx, int r, const char *data, tp_error *err);

/* tp_boot_gather, but rank 0 holds one rank's string at a time: it calls
 * fn(ctx, r, data, err) for r = 0 .. size - 1 in order. The fan-in is
 * bounded by TP_BOOT_GATHER_WINDOW: under MPI the strings go up a tree of
 * that fan-in (contiguous ranges of ranks, each rank relaying its
 * children's one string at a time; depth about log16 of the size); over a
 * star that many ranks send to rank 0 at once, each waiting for rank 0's
 * word to start. So rank 0's memory is bounded by the largest string and
 * the fan-in, not by the group's size; the time by the bytes through rank
 * 0's link. fn and ctx are unused on the other ranks. When fn fails it is
 * not called again; rank 0 still reads (and drops) the rest, so every rank
 * ends the gather together; rank 0 returns fn's error, the others 0. A
 * lost rank fails it as tp_boot_gather. */
int tp_boot_gather_each(struct tp_boot *b, const char *mine, tp_boot_each_fn fn, void *ctx,
                        tp_error *err);

/* Rank 0 gives every rank its own string: parts[r] (rank 0 only; any
 * length, valid UTF-8; parts[r] of a rank left out is not sent, and may be
 * NULL) reaches rank r as *mine (malloc'd, free it), rank 0's own too. The
 * bytes are what each rank needs and no more: the sum of the parts'
 * lengths out of rank 0, one part into each rank (where an allgather sends
 * every rank everything). A rank lost on the way is left out as in a
 * gather; on the others an error says that rank 0 was lost or what it
 * reported. */
int tp_boot_scatter(struct tp_boot *b, char *const *parts, char **mine, tp_error *err);

/* Rank 0 gives every rank the same string: text (rank 0 only; any length,
 * valid UTF-8) reaches every rank as *out (malloc'd, free it), rank 0's
 * own too. A scatter of one text: its length times the ranks out of rank
 * 0, where an allgather of a word each sends every rank every word. As
 * tp_boot_scatter for a rank lost. */
int tp_boot_bcast(struct tp_boot *b, const char *text, char **out, tp_error *err);

/* Wait until every rank has arrived. Over a star, rank 0 answers each rank
 * with the ranks left out so far, not with everyone's part: a barrier
 * costs each rank bytes by the lost, not by the group's size. */
int tp_boot_barrier(struct tp_boot *b, tp_error *err);

/* Leave the group. Rank 0 of a local group also waits for the ranks it
 * forked (killing those still running after timeout) and returns the worst
 * of their exit statuses (0 when all succeeded); other ranks get 0. */
int tp_boot_fini(struct tp_boot *b);

/* ---- the star's frame bodies (src/boot/frames.c) ----
 * What rank 0 reads from the other ranks (JOIN, the TIME answer, a GATHER
 * contribution or part) and what they read from rank 0 (GROUP, the
 * gathered GATHER), checked field by field before the star uses any of it.
 * Public so that fuzz/fuzz_frames.c can feed them bodies; nothing above
 * boot/ needs them. Strings are borrowed from the body. Each error is
 * TP_EPROTO with a message that names the peer (c->peer) and the field. */

#define TP_BOOT_MAX_RANKS 16384
#define TP_BOOT_MAX_BLOB 4096    /* bytes a rank contributes to an allgather */
#define TP_BOOT_MAX_HOST 255     /* bytes of a host name */
#define TP_BOOT_GATHER_PART 8192 /* bytes of one part of a gather */
#define TP_BOOT_GATHER_WINDOW 16 /* a gather's fan-in: ranks sending to one at once */

struct tp_conn;

/* JOIN: a rank introduces itself to rank 0. */
struct tp_boot_join {
    int rank;              /* 1..size - 1, the group's size as rank 0 has it */
    int size;              /* 1..TP_BOOT_MAX_RANKS, as the rank was started */
    const char *host;      /* at most TP_BOOT_MAX_HOST bytes */
    const json_t *options; /* an object */
};

/* Read a JOIN body for a group of size ranks (2..TP_BOOT_MAX_RANKS). */
int tp_boot_parse_join(struct tp_conn *c, const json_t *body, int size, struct tp_boot_join *out,
                       tp_error *err);

/* Read a rank's answer to a clock probe: its clock, 0..INT64_MAX ns. */
int tp_boot_parse_time(struct tp_conn *c, const json_t *body, int64_t *t, tp_error *err);

/* Read GROUP for a group of size ranks: hosts[r] (at most TP_BOOT_MAX_HOST
 * bytes), offset[r] (any int64) and rtt[r] (0..INT64_MAX) for r in
 * 0..size - 1, and gone[r] for the ranks it says did not join ("gone": an
 * optional array of ranks in 1..size - 1). On error the arrays may be
 * partly written. */
int tp_boot_parse_group(struct tp_conn *c, const json_t *body, int size, const char **hosts,
                        int64_t *offset, uint64_t *rtt, bool *gone, tp_error *err);

/* A lean GROUP (tp_boot_opts.lean), what one rank gets: rank 0's host,
 * this rank's clock offset against rank 0 and its round trip, its index
 * among the ranks on its host. */
struct tp_boot_lean {
    const char *host0; /* at most TP_BOOT_MAX_HOST bytes */
    int64_t offset;    /* any int64 */
    uint64_t rtt;      /* 0..INT64_MAX */
    int local_rank;    /* 0..size - 1 */
};

/* Read a lean GROUP for a group of size ranks: {"lean": true, "host0",
 * "offset", "rtt", "local_rank"} into out, and gone[r] as GROUP's. */
int tp_boot_parse_lean_group(struct tp_conn *c, const json_t *body, int size,
                             struct tp_boot_lean *out, bool *gone, tp_error *err);

/* Read a GATHER from a rank: {"data"} of at most max bytes (without NUL);
 * with more not NULL, a part of a gather, which also carries "more". */
int tp_boot_parse_data(struct tp_conn *c, const json_t *body, size_t max, const char **data,
                       bool *more, tp_error *err);

/* Read the GATHER that ends a barrier: {"gone"}, every rank left out so
 * far (each in 1..size - 1), marked in gone[] (the others unchanged). */
int tp_boot_parse_gone(struct tp_conn *c, const json_t *body, int size, bool *gone,
                       tp_error *err);

/* Read the gathered GATHER rank 0 sends back: {"all"}, size strings of at
 * most TP_BOOT_MAX_BLOB bytes (without NUL) into all[0..size); null for a
 * rank left out (all[r] = NULL; never rank 0's). */
int tp_boot_parse_all(struct tp_conn *c, const json_t *body, int size, const char **all,
                      tp_error *err);

#endif
