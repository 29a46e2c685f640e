/* Internal to src/coll: the task graph that algorithms build and the
 * executor runs over the channels of include/tp/chan.h. */
#ifndef TP_COLL_INT_H
#define TP_COLL_INT_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tp/chan.h"
#include "tp/coll.h"

enum task_kind {
    T_SEND,     /* peer gets len bytes from src */
    T_RECV,     /* dst = len bytes from peer; with src: dst = src op incoming */
    T_RECV_RED, /* dst = dst op incoming */
    T_COPY,     /* dst = src */
    T_RED,      /* dst = dst op src */
    T_FINISH,   /* dst = dst / nranks for avg (len bytes) */
    T_NOP,      /* joins dependencies */
};

/* done is op.done, for every kind of task */
enum task_state { S_WAIT, S_POSTED };

#define NO_DEP (-1)

struct task {
    struct tp_chan_op op; /* dst, src, len in bytes; what a channel moves */
    uint8_t kind, state;
    int peer;     /* global rank */
    int dep[2];   /* task indices or NO_DEP */
    int qnext;    /* next task of the same peer and direction (executor) */
};

/* How a graph reduces: plain kernels of include/tp/reduce.h, the wide
 * fixed-point words of --repro exact, or its exact sum of two ranks'
 * values rounded once (tp_bfx_sum). */
struct redfn {
    enum tp_dtype dtype;
    enum tp_redop op;
    bool fixed;    /* elements are tp_fx words */
    bool exact2;   /* dst = the correctly rounded a + b (op sum, or avg over
                      nranks: the whole sum of a two-rank group) */
    bool ahead;    /* exact2: tp_bfx_sum's ahead (inputs past the cache) */
    size_t esize;  /* bytes per element */
    int nranks;    /* for T_FINISH */
};

void tp__coll_red_apply(const struct redfn *r, void *dst, const void *a, const void *b,
                        size_t bytes);

/* A rank group: the whole communicator, or the ranks of one host, or the
 * leaders of every host (two-level schedules). */
struct grp {
    int n, me;   /* size, my index */
    int *rank;   /* index -> global rank */
};

struct plan {
    struct task *t;
    int nt, cap;
    struct tp_comm *comm;
    struct redfn red;
    size_t chunk;  /* bytes, a multiple of red.esize */
    bool oom;
};

int tp__coll_task_add(struct plan *p, enum task_kind k, int peer, void *dst, const void *src,
                      size_t len, int d0, int d1);
#define t_send(p, peer, src, len, d0, d1) tp__coll_task_add(p, T_SEND, peer, NULL, src, len, d0, d1)
#define t_recv(p, peer, dst, len, d0, d1) tp__coll_task_add(p, T_RECV, peer, dst, NULL, len, d0, d1)
#define t_recv3(p, peer, dst, src, len, d0, d1)                                                    \
    tp__coll_task_add(p, T_RECV, peer, dst, src, len, d0, d1)
#define t_recvred(p, peer, dst, len, d0, d1)                                                       \
    tp__coll_task_add(p, T_RECV_RED, peer, dst, NULL, len, d0, d1)
#define t_copy(p, dst, src, len, d0, d1) tp__coll_task_add(p, T_COPY, -1, dst, src, len, d0, d1)
#define t_red(p, dst, src, len, d0, d1) tp__coll_task_add(p, T_RED, -1, dst, src, len, d0, d1)
#define t_finish(p, buf, len, d0, d1) tp__coll_task_add(p, T_FINISH, -1, buf, NULL, len, d0, d1)
/* A task done when both deps are (a join of two). */
#define t_join(p, d0, d1) tp__coll_task_add(p, T_NOP, -1, NULL, NULL, 0, d0, d1)
/* Join a list of tasks (NO_DEP entries ignored); NO_DEP when empty. */
int tp__coll_task_join_all(struct plan *p, const int *deps, int n);

/* Element range [lo, hi) of block b when count elements split into n
 * blocks as evenly as possible (the first count % n blocks one larger). */
static inline size_t blk_lo(size_t count, int n, int b)
{
    size_t q = count / (size_t)n, r = count % (size_t)n;
    return (size_t)b * q + ((size_t)b < r ? (size_t)b : r);
}

/* Number of chunks of at most chunk bytes in len bytes (1 for len 0). */
static inline size_t nchunks(size_t len, size_t chunk)
{
    return len == 0 ? 1 : (len + chunk - 1) / chunk;
}

/* Arguments every builder gets: buffers and counts in bytes already. */
struct bargs {
    const struct tp_coll_args *a;
    const void *send;
    void *recv;
    size_t count; /* elements (of red.esize) per the kind's convention */
    int root;     /* index in the group */
    int dep;      /* task the whole graph starts after, or NO_DEP */
    bool finish;  /* apply avg's division (only the outermost schedule does) */
};

/* Byte range of chunk j of M chunks of a block of cnt elements at element
 * lo (every block gets exactly M chunks, some maybe empty, so both ends of
 * a transfer cut it the same way). */
static inline void chunk_range(size_t lo, size_t cnt, size_t M, size_t j, size_t es, size_t *off,
                               size_t *len)
{
    size_t a = blk_lo(cnt, (int)M, (int)j), b = blk_lo(cnt, (int)M, (int)j + 1);
    *off = (lo + a) * es;
    *len = (b - a) * es;
}

/* A tree over a group: parent index (-1 at the root) and children. */
struct tree {
    int parent;
    int nchild;
    int child[64];
};
void tp__coll_tree_binomial(int n, int me, int root, struct tree *t);
void tp__coll_tree_heap(int n, int me, bool mirror, struct tree *t);
/* Chunked reduce up a tree: chunk j of sb (my input) reduces into rb; the
 * root's rb holds the result. Appends each chunk's last task to ends[j]. */
void tp__coll_tree_reduce(struct plan *p, const struct grp *g, const struct tree *t,
                          const uint8_t *sb, uint8_t *rb, size_t lo, size_t cnt, size_t M,
                          const int *dep, int *ends, bool finish);
/* Chunked broadcast down a tree: the root sends from src (rb unless given),
 * the others receive into rb and forward. dep[j] gates chunk j. */
void tp__coll_tree_bcast(struct plan *p, const struct grp *g, const struct tree *t,
                         const uint8_t *src, uint8_t *rb, size_t lo, size_t cnt, size_t M,
                         const int *dep, int *ends);

/* One algorithm: builds the graph of one call for the group g; returns the
 * final join task (or NO_DEP) or a negative error via *err. */
struct algo {
    const char *name;
    enum tp_coll_kind kind;
    int (*build)(struct plan *p, const struct grp *g, const struct bargs *b);
};

extern const struct algo *const tp__coll_algos[];
extern const struct algo tp__coll_algo_ring_allreduce, tp__coll_algo_rhd_allreduce;

/* ---- algo.c: the table and the runner ---- */

/* The algorithm of kind named name, or NULL. */
const struct algo *tp__coll_find_algo(enum tp_coll_kind kind, const char *name);

/* TP_EUSAGE: "--algo NAME: not an algorithm of KIND (auto, ...)". */
int tp__coll_no_algo(enum tp_coll_kind kind, const char *name, tp_error *err);

/* The algorithm a names (a->algo; NULL or "auto": the kind's size-based
 * choice), or NULL with err set. The last named one is kept in c. */
const struct algo *tp__coll_resolve(struct tp_comm *c, const struct tp_coll_args *a,
                                    tp_error *err);

/* Build al's graph for a (a->kind; send, recv and count instead of a's)
 * with the reduction red, and run it (finish: apply red's T_FINISH step, the
 * division of avg). Returns 0 or an error naming the peer. */
int tp__coll_run_plan(struct tp_comm *c, const struct algo *al, const struct tp_coll_args *a,
                      const void *send, void *recv, size_t count, const struct redfn *red,
                      bool finish, tp_error *err);

/* ---- repro.c: --repro exact ---- */

#define TP__COLL_EXACT_SEG_BYTES (32u << 20) /* the wide path's fixed-point bytes a pass */

/* The reproducible allreduce of a (sum or avg of a float type) by the
 * allreduce algorithm al: the block fixed-point path where the type has
 * one (blockfx.h) and a block's values allow, the wide representation
 * (fixed.h) for the rest; the result is the correctly rounded exact sum
 * either way. Buffers from the arena; returns 0 or an error. */
int tp__coll_repro(struct tp_comm *c, const struct algo *al, const struct tp_coll_args *a,
                   tp_error *err);

/* Scratch memory for an algorithm (from the arena: peers may read it). */
void *tp__coll_scratch(struct tp_comm *c, size_t bytes);

/* ---- stores.c: --shm-stores ---- */

struct tp__coll_stores; /* a row of the policies' table */

/* The row named name (NULL: "auto"), or NULL when none is. */
const struct tp__coll_stores *tp__coll_stores_find(const char *name);

/* Set op.stream on the receives of p that c's policy streams (the graph's
 * tasks are fresh: no receive is marked before), and count their bytes in
 * c->streamed. */
void tp__coll_mark_streams(struct tp_comm *c, struct plan *p);

/* Run the graph; returns 0 or an error naming the peer. */
int tp__coll_exec(struct tp_comm *c, struct plan *p, tp_error *err);

struct tp_comm {
    int rank, size;
    struct tp_boot *boot;
    struct tp_chan_set *chans;
    struct tp_chan **ch; /* ch[r] (the set's), NULL for r == rank */
    int *host_of;       /* rank -> host index */
    int nhosts;
    struct grp world, local, leaders; /* leaders: one rank per host (its lowest) */
    bool shm;
    uint64_t timeout_ns;
    bool busy_poll;
    const struct tp__coll_stores *stores; /* --shm-stores */
    uint64_t streamed; /* bytes of receives marked stream so far */
    int spins; /* idle polls before yielding: few when ranks outnumber cores */
    bool failed;
    /* arena (the set's) */
    uint8_t *arena;
    size_t arena_bytes, arena_used, arena_mark;
    struct plan plan;
    int *qlast; /* executor scratch */
    int *local_ids, local_cap;
    const struct algo *algo_hit; /* the last --algo looked up (resolve() in coll.c) */
};

#endif
