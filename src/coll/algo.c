/* The algorithms as a table (one row per algorithm and kind, each built in
 * its algo_*.c), looked up by name or chosen by size, and the runner of one
 * collective by its algorithm: build the graph, execute it. The front door
 * (coll.c) and the reproducible allreduce (repro.c) both run through it. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kind_int.h"

const struct algo *const tp__coll_algos[] = {
    &tp__coll_algo_ring_allreduce,
    &tp__coll_algo_rhd_allreduce,
    &tp__coll_algo_rd_allreduce,
    &tp__coll_algo_dbtree_allreduce,
    &tp__coll_algo_binomial_allreduce,
    &tp__coll_algo_hier_allreduce,
    &tp__coll_algo_ring_reduce_scatter,
    &tp__coll_algo_rhd_reduce_scatter,
    &tp__coll_algo_ring_allgather,
    &tp__coll_algo_bruck_allgather,
    &tp__coll_algo_binomial_bcast,
    &tp__coll_algo_ring_bcast,
    &tp__coll_algo_binomial_reduce,
    &tp__coll_algo_ring_reduce,
    &tp__coll_algo_pairwise_alltoall,
    &tp__coll_algo_ring_sendrecv,
    NULL,
};

/* Room for every row of the table in one kind's list, and its NULL: the
 * lists grow with the table, never capped below it. */
#define NROWS (sizeof tp__coll_algos / sizeof tp__coll_algos[0])
static const char *lists[TP_COLL_COUNT][NROWS];
static pthread_once_t lists_once = PTHREAD_ONCE_INIT;

static void make_lists(void)
{
    int k[TP_COLL_COUNT] = {0};
    for (int i = 0; tp__coll_algos[i]; i++)
        lists[tp__coll_algos[i]->kind][k[tp__coll_algos[i]->kind]++] = tp__coll_algos[i]->name;
}

const char *const *tp_coll_algos(enum tp_coll_kind kind)
{
    pthread_once(&lists_once, make_lists);
    return lists[kind];
}

const struct algo *tp__coll_find_algo(enum tp_coll_kind kind, const char *name)
{
    for (int i = 0; tp__coll_algos[i]; i++)
        if (tp__coll_algos[i]->kind == kind && strcmp(tp__coll_algos[i]->name, name) == 0)
            return tp__coll_algos[i];
    return NULL;
}

int tp__coll_no_algo(enum tp_coll_kind kind, const char *name, tp_error *err)
{
    char list[512] = "";
    size_t used = 0;
    for (const char *const *a = tp_coll_algos(kind); *a && used < sizeof list; a++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", *a);
    return tp_error_set(err, TP_EUSAGE, "--algo %s: not an algorithm of %s (auto, %s)", name,
                        tp_coll_name(kind), list);
}

/* The kind's size-based choice (written into the result; --algo overrides). */
static const struct algo *choose(const struct tp_comm *c, const struct tp_coll_args *a)
{
    return tp__coll_kinds[a->kind]->choose(c->size, c->nhosts, c->shm && c->nhosts == 1,
                                           a->count * tp_dtype_size(a->dtype));
}

const char *tp_coll_algo(const struct tp_comm *c, const struct tp_coll_args *a, tp_error *err)
{
    if (a->algo && strcmp(a->algo, "auto") != 0) {
        const struct algo *al = tp__coll_find_algo(a->kind, a->algo);
        if (!al) {
            tp__coll_no_algo(a->kind, a->algo, err);
            return NULL;
        }
        return al->name;
    }
    return choose(c, a)->name;
}

static size_t default_chunk(const struct tp_comm *c)
{
    return c->shm && c->nhosts == 1 ? (256u << 10) : (512u << 10);
}

int tp__coll_run_plan(struct tp_comm *c, const struct algo *al, const struct tp_coll_args *a,
                    const void *send, void *recv, size_t count, const struct redfn *red,
                    bool finish, tp_error *err)
{
    struct plan *p = &c->plan;
    p->nt = 0;
    p->oom = false;
    p->comm = c;
    p->red = *red;
    size_t chunk = a->chunk_bytes ? a->chunk_bytes : default_chunk(c);
    p->chunk = chunk < red->esize ? red->esize : chunk / red->esize * red->esize;
    struct bargs b = {.a = a, .send = send, .recv = recv, .count = count, .root = a->root,
                      .dep = NO_DEP, .finish = finish};
    al->build(p, &c->world, &b);
    return tp__coll_exec(c, p, err);
}

/* The algorithm a names, or the size-based choice; NULL with err set when
 * the name is not one of a->kind's. A sweep passes the same name on every
 * call, so the last hit is kept: one compare in the timed loop instead of a
 * scan of the table. */
const struct algo *tp__coll_resolve(struct tp_comm *c, const struct tp_coll_args *a, tp_error *err)
{
    if (!a->algo || strcmp(a->algo, "auto") == 0)
        return choose(c, a);
    if (c->algo_hit && a->kind == c->algo_hit->kind && strcmp(a->algo, c->algo_hit->name) == 0)
        return c->algo_hit;
    const struct algo *al = tp__coll_find_algo(a->kind, a->algo);
    if (!al) {
        tp__coll_no_algo(a->kind, a->algo, err);
        return NULL;
    }
    c->algo_hit = al;
    return al;
}

