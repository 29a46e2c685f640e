/* Name to index, for the nodes and switches of a topology: an
 * open-addressing table (linear probing, at most half full) of indices,
 * hashed by name (FNV-1a). It holds no names of its own: the caller's
 * name_of reads them where they live, so one table serves the builder
 * (names as offsets into a growing pool) and the finished topology. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topo_int.h"

static uint64_t hash(const char *s)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * UINT64_C(0x100000001b3);
    return h;
}

int tp__topo_names_find(const struct tp__topo_names *h, const char *name, tp__topo_name_of of,
                        const void *ctx)
{
    if (!h->cap)
        return -1;
    for (size_t i = hash(name) & (h->cap - 1);; i = (i + 1) & (h->cap - 1)) {
        int s = h->slot[i];
        if (!s)
            return -1;
        if (strcmp(of(ctx, s - 1), name) == 0)
            return s - 1;
    }
}

static void put(int *slot, size_t cap, int i, const char *name)
{
    size_t k = hash(name) & (cap - 1);
    while (slot[k])
        k = (k + 1) & (cap - 1);
    slot[k] = i + 1;
}

int tp__topo_names_add(struct tp__topo_names *h, int i, tp__topo_name_of of, const void *ctx)
{
    if ((size_t)h->n + 1 > h->cap / 2) {
        size_t cap = h->cap ? 2 * h->cap : 64;
        int *slot = calloc(cap, sizeof *slot);
        if (!slot)
            return TP_ENOMEM;
        for (size_t k = 0; k < h->cap; k++)
            if (h->slot[k])
                put(slot, cap, h->slot[k] - 1, of(ctx, h->slot[k] - 1));
        free(h->slot);
        h->slot = slot;
        h->cap = cap;
    }
    put(h->slot, h->cap, i, of(ctx, i));
    h->n++;
    return 0;
}

void tp__topo_names_free(struct tp__topo_names *h)
{
    free(h->slot);
    memset(h, 0, sizeof *h);
}
