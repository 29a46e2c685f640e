/* Internal to src/storage: the engine table entries and the queue state
 * they share with the queue layer (engine.c). Adding an engine is one file
 * with one of these tables, plus a line in engine.c's list. */
#ifndef TP_STORAGE_ENGINE_INT_H
#define TP_STORAGE_ENGINE_INT_H

#include "tp/storage.h"

/* What an engine does. The queue layer owns the bookkeeping (slots, short
 * transfers, timing) and calls these. */
struct tp_io_engine_ops {
    const char *name;
    /* Set up q->priv. TP_EUNSUP when the engine cannot run here. */
    int (*init)(struct tp_ioq *q, tp_error *err);
    /* Queue request r under slot number slot (what reap reports back). */
    int (*queue)(struct tp_ioq *q, const struct tp_io_req *r, unsigned slot, tp_error *err);
    /* Hand queued requests to the kernel. */
    int (*submit)(struct tp_ioq *q, tp_error *err);
    /* Wait for at least min completions (min may be 0); store up to max as
     * (slot, res, start_ns and end_ns of the call: 0 for "at push" and "now",
     * where the kernel runs it asynchronously). Returns the number stored or
     * a negative code. */
    int (*reap)(struct tp_ioq *q, unsigned *slot, int64_t *res, uint64_t *start_ns,
                uint64_t *end_ns, unsigned max, unsigned min, tp_error *err);
    void (*fini)(struct tp_ioq *q);
};

struct ioq_slot {
    struct tp_io_req req; /* what is left to do (advanced after a short transfer) */
    uint64_t push_ns;
    uint64_t start_ns;    /* first start the engine reported (0: at push) */
    int64_t done;         /* bytes done so far */
};

struct tp_ioq {
    const struct tp_io_engine_ops *ops;
    struct tp_ioq_opts o;
    void *priv;
    bool registered_buffers, fixed_files;
    unsigned inflight;
    unsigned queued; /* pushed since the last submit */
    struct ioq_slot *slots; /* depth entries */
    unsigned *free_slots, nfree;
};

extern const struct tp_io_engine_ops tp_engine_uring;
extern const struct tp_io_engine_ops tp_engine_psync;

#endif
