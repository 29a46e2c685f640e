/* The table of collective kinds (one row per kind, src/coll/kind_*.c) and
 * what coll exports of it: names, nccl-tests' size convention and busbw
 * factor, the size-based algorithm choice. */
#include <string.h>

#include "kind_int.h"

const struct tp__coll_kind *const tp__coll_kinds[TP_COLL_COUNT] = {
    [TP_ALLREDUCE] = &tp__coll_allreduce, [TP_REDUCE_SCATTER] = &tp__coll_reduce_scatter,
    [TP_ALLGATHER] = &tp__coll_allgather, [TP_BROADCAST] = &tp__coll_broadcast,
    [TP_REDUCE] = &tp__coll_reduce,       [TP_ALLTOALL] = &tp__coll_alltoall,
    [TP_SENDRECV] = &tp__coll_sendrecv,
};

const char *tp_coll_name(enum tp_coll_kind k)
{
    return tp__coll_kinds[k]->name;
}

int tp_coll_parse(const char *s)
{
    for (int i = 0; i < TP_COLL_COUNT; i++) {
        const struct tp__coll_kind *k = tp__coll_kinds[i];
        if (strcmp(s, k->name) == 0)
            return i;
        for (const char *const *a = k->aliases; *a; a++)
            if (strcmp(s, *a) == 0)
                return i;
    }
    return -1;
}

double tp_coll_busbw_factor(enum tp_coll_kind k, int n)
{
    double f = tp__coll_kinds[k]->busbw_k;
    return f ? f * (n - 1) / n : 1.0;
}

struct tp_coll_shape tp_coll_shape_for(enum tp_coll_kind kind, enum tp_dtype t, int n,
                                       uint64_t size)
{
    const struct tp__coll_kind *k = tp__coll_kinds[kind];
    size_t es = tp_dtype_size(t), elems = (size_t)(size / es);
    struct tp_coll_shape s = {.count = k->in_blocks || k->out_blocks ? elems / (size_t)n : elems};
    s.in_elems = k->in_blocks ? s.count * (size_t)n : s.count;
    s.out_elems = k->out_blocks ? s.count * (size_t)n : s.count;
    s.bytes = (uint64_t)(s.in_elems > s.out_elems ? s.in_elems : s.out_elems) * es;
    return s;
}

const char *tp_coll_auto_algo(enum tp_coll_kind k, int n, int nhosts, bool shm, size_t bytes)
{
    return tp__coll_kinds[k]->choose(n, nhosts, shm, bytes)->name;
}
