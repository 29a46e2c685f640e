/* The mpi backend: mpirun or srun already made the group (Open MPI,
 * MPICH/PMI or PMIx in the environment), so rank, size, exchanges and
 * barriers go through MPI, and the clock offsets are measured by MPI
 * ping-pong with rank 0. MPI calls have no deadline of their own: the
 * launcher ends the job when a rank dies. The only file that sees MPI: in a
 * build without it the row stays (the launcher is still detected, its
 * variables still known) and its init says that this build has none. */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot_int.h"
#include "tp/clock.h"

#ifdef TP_HAVE_MPI
#include <mpi.h>

#define OPT_BYTES 4096

static int mpi_fail(int mrc, const char *what, tp_error *err)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(mrc, text, &len);
    return tp_error_set(err, TP_EPEER, "MPI %s failed: %.*s", what, len, text);
}

/* Open MPI 4.1's MPI_Init under srun's PMIx, with the modex's data collected
 * by the fence (its default), can take a faster peer's first message while it
 * still waits for that fence, before its PML registered the receive
 * callbacks: the TCP BTL then calls a NULL callback
 * (mca_btl_base_active_message_trigger[tag].cbfunc) and the rank dies with
 * signal 11 at PC=0 (docs/reliability.md, "The start-up crash under srun":
 * a core, and the steps counted with and without this). Without the data
 * collected (the fence a plain barrier, a peer's endpoint looked up at the
 * first message to it) it did not. A setting of the user's own, in the
 * environment, wins. */
static void mpi_before_init(void)
{
#ifdef OMPI_MAJOR_VERSION
    setenv("OMPI_MCA_pmix_base_collect_data", "0", 0);
#endif
}

static int mpi_init(const struct tp_boot_opts *o, struct tp_boot **out, tp_error *err)
{
    int inited = 0, provided, rank, size;
    MPI_Initialized(&inited);
    if (!inited)
        mpi_before_init();
    if (!inited && MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return tp_error_set(err, TP_ESYS, "MPI_Init_thread failed (not started by mpirun/srun?)");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    struct tp_boot *b = tp__boot_new(&tp__boot_mpi, rank, size, o->timeout_ns);
    char *hosts = calloc((size_t)size, 256), *opts = calloc((size_t)size, OPT_BYTES);
    char mine[OPT_BYTES] = "";
    int rc = 0, mrc;
    if (!b || !hosts || !opts) {
        rc = tp_error_set(err, TP_ENOMEM, "group of %d", size);
        goto out;
    }
    char host[256] = "";
    snprintf(host, sizeof host, "%s", tp__boot_my_host());
    char *text = o->options ? json_dumps(o->options, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    snprintf(mine, sizeof mine, "%s", text ? text : "{}");
    free(text);
    if ((mrc = MPI_Allgather(host, 256, MPI_CHAR, hosts, 256, MPI_CHAR, MPI_COMM_WORLD)) ||
        (mrc =
             MPI_Allgather(mine, OPT_BYTES, MPI_CHAR, opts, OPT_BYTES, MPI_CHAR, MPI_COMM_WORLD))) {
        rc = mpi_fail(mrc, "allgather at start-up", err);
        goto out;
    }
    for (int r = 0; r < size; r++)
        b->hosts[r] = strndup(hosts + 256 * r, 255);
    /* every rank compares every rank's options with rank 0's, so all reach
     * the same verdict and name the same option */
    json_t *base = json_loads(opts, 0, NULL);
    for (int r = 1; r < size && !rc; r++) {
        json_t *theirs = json_loads(opts + (size_t)OPT_BYTES * r, 0, NULL);
        char what[200];
        if (tp__boot_options_differ(base, theirs, what, sizeof what))
            rc = tp_error_set(err, TP_EUSAGE, "rank %d on %s was started with a different %s", r,
                              b->hosts[r], what);
        json_decref(theirs);
    }
    json_decref(base);
    if (rc)
        goto out;
    /* clock offsets: rank 0 ping-pongs with each rank, keeps the fastest */
    for (int r = 1; r < size; r++) {
        if (rank == 0) {
            b->rtt[r] = UINT64_MAX;
            for (int k = 0; k < TP_BOOT_CLOCK_PROBES; k++) {
                uint64_t t0 = tp_now_ns(), t;
                MPI_Send(&t0, 1, MPI_UINT64_T, r, 1, MPI_COMM_WORLD);
                MPI_Recv(&t, 1, MPI_UINT64_T, r, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                uint64_t t1 = tp_now_ns();
                if (t1 - t0 < b->rtt[r]) {
                    b->rtt[r] = t1 - t0;
                    b->offset[r] = (int64_t)(t - (t0 + (t1 - t0) / 2));
                }
            }
        } else if (rank == r) {
            for (int k = 0; k < TP_BOOT_CLOCK_PROBES; k++) {
                uint64_t x;
                MPI_Recv(&x, 1, MPI_UINT64_T, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                x = tp_now_ns();
                MPI_Send(&x, 1, MPI_UINT64_T, 0, 1, MPI_COMM_WORLD);
            }
        }
    }
    if ((mrc = MPI_Bcast(b->offset, size, MPI_INT64_T, 0, MPI_COMM_WORLD)) ||
        (mrc = MPI_Bcast(b->rtt, size, MPI_UINT64_T, 0, MPI_COMM_WORLD)))
        rc = mpi_fail(mrc, "broadcast of clock offsets", err);
out:
    free(hosts);
    free(opts);
    if (rc) {
        tp__boot_free(b);
        if (!inited) /* every rank fails alike, so all finalize together */
            MPI_Finalize();
        return rc;
    }
    *out = b;
    return 0;
}

static int mpi_allgather(struct tp_boot *b, const char *mine, char **res, tp_error *err)
{
    int len = (int)strlen(mine), *lens = calloc((size_t)b->size, sizeof *lens),
        *offs = calloc((size_t)b->size, sizeof *offs), mrc;
    char *buf = NULL;
    if (!lens || !offs) {
        free(lens);
        free(offs);
        return tp_error_set(err, TP_ENOMEM, "allgather");
    }
    if ((mrc = MPI_Allgather(&len, 1, MPI_INT, lens, 1, MPI_INT, MPI_COMM_WORLD)) == 0) {
        int total = 0;
        for (int r = 0; r < b->size; r++) {
            offs[r] = total;
            total += lens[r];
        }
        buf = malloc((size_t)total + 1);
        if (buf)
            mrc = MPI_Allgatherv(mine, len, MPI_CHAR, buf, lens, offs, MPI_CHAR, MPI_COMM_WORLD);
        for (int r = 0; buf && !mrc && r < b->size; r++)
            res[r] = strndup(buf + offs[r], (size_t)lens[r]);
    }
    free(buf);
    free(lens);
    free(offs);
    return mrc ? mpi_fail(mrc, "allgather", err) : 0;
}

/* The length, then the text (MPI_Bcast: the launcher's tree, not N
 * copies in one buffer as a scatter would be). */
static int mpi_bcast(struct tp_boot *b, const char *text, char **out, tp_error *err)
{
    size_t full = b->rank == 0 ? strlen(text) : 0;
    int len = full > INT_MAX ? -1 : (int)full, mrc;
    if ((mrc = MPI_Bcast(&len, 1, MPI_INT, 0, MPI_COMM_WORLD)))
        return mpi_fail(mrc, "broadcast", err);
    if (len < 0)
        return tp_error_set(err, TP_EUSAGE, "broadcast of more than %d bytes", INT_MAX);
    char *buf = malloc((size_t)len + 1);
    if (b->rank == 0 && buf)
        memcpy(buf, text, (size_t)len);
    /* every rank takes part, out of memory or not: an empty one reads none */
    mrc = MPI_Bcast(buf ? buf : (char[1]){0}, buf ? len : 0, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (mrc || !buf) {
        free(buf);
        return mrc ? mpi_fail(mrc, "broadcast", err) : tp_error_set(err, TP_ENOMEM, "broadcast");
    }
    buf[len] = 0;
    *out = buf;
    return 0;
}

/* The gather goes up a tree of fan-in TP_BOOT_GATHER_WINDOW: a rank's
 * subtree is a contiguous range of ranks [lo, hi) rooted at lo, whose
 * other ranks (lo, hi) are split into at most that many contiguous
 * ranges, each a child's. Every rank sends its parent its own string and
 * then its children's subtrees, child by child, each string as it comes:
 * rank order, so rank 0 sees rank order; a rank relays one string at a
 * time; no rank talks to more than its parent and its children; the depth
 * is about log16 of the size (4 at 10,000 ranks). */
enum { TAG_GO = 2, TAG_LEN = 3, TAG_DATA = 4 };

/* The k-th of the (at most TP_BOOT_GATHER_WINDOW) children's ranges of the
 * subtree [lo, hi): [*clo, *chi); false past the last. */
static bool tree_child(int lo, int hi, int k, int *clo, int *chi)
{
    int m = hi - lo - 1, f = m < TP_BOOT_GATHER_WINDOW ? m : TP_BOOT_GATHER_WINDOW;
    if (k >= f)
        return false;
    *clo = lo + 1 + (int)((long long)m * k / f);
    *chi = lo + 1 + (int)((long long)m * (k + 1) / f);
    return true;
}

/* Rank me's subtree [*lo, *hi) and its parent (-1 for rank 0). */
static void tree_find(int size, int me, int *lo, int *hi, int *parent)
{
    int l = 0, h = size;
    *parent = -1;
    while (l != me) {
        int cl, ch;
        for (int k = 0; tree_child(l, h, k, &cl, &ch); k++)
            if (me >= cl && me < ch) {
                *parent = l;
                l = cl;
                h = ch;
                break;
            }
    }
    *lo = l;
    *hi = h;
}

/* One string from src (its length, then its bytes) into *buf (grown). */
static int recv_one(int src, char **buf, size_t *cap, long long *len)
{
    int mrc = MPI_Recv(len, 1, MPI_LONG_LONG, src, TAG_LEN, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (mrc || *len < 0)
        return mrc ? mrc : -2;
    if ((size_t)*len + 1 > *cap) {
        char *grown = realloc(*buf, (size_t)*len + 1);
        if (!grown)
            return -1;
        *buf = grown;
        *cap = (size_t)*len + 1;
    }
    mrc = MPI_Recv(*buf, (int)*len, MPI_CHAR, src, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    (*buf)[*len] = 0;
    return mrc;
}

static int send_one(int dst, const char *s, long long len)
{
    int mrc = MPI_Send(&len, 1, MPI_LONG_LONG, dst, TAG_LEN, MPI_COMM_WORLD);
    return mrc || len < 0 ? mrc : MPI_Send(s, (int)len, MPI_CHAR, dst, TAG_DATA, MPI_COMM_WORLD);
}

static int mpi_gather(struct tp_boot *b, const char *mine, tp_boot_each_fn fn, void *ctx,
                      tp_error *err)
{
    int lo, hi, parent, mrc = 0, nomem = 0, cl, ch;
    char go = 1, *buf = NULL;
    size_t cap = 0, n = strlen(mine);
    tree_find(b->size, b->rank, &lo, &hi, &parent);
    /* rank 0: fn's first error is the result, the gather goes on so every
     * rank ends it together; a failure of its own (memory, MPI) leaves the
     * others waiting: it exits non-zero and the launcher ends the job */
    tp_error ferr = {0};
    int frc = 0;
    if (parent >= 0)
        mrc = MPI_Recv(&go, 1, MPI_CHAR, parent, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    /* every child starts at once: each waits in MPI_Send, for its turn */
    for (int k = 0; !mrc && tree_child(lo, hi, k, &cl, &ch); k++)
        mrc = MPI_Send(&go, 1, MPI_CHAR, cl, TAG_GO, MPI_COMM_WORLD);
    if (!mrc && parent >= 0)
        mrc = send_one(parent, mine, n > INT32_MAX ? -1 : (long long)n);
    else if (!mrc)
        frc = fn(ctx, 0, mine, &ferr);
    for (int k = 0; !mrc && !nomem && tree_child(lo, hi, k, &cl, &ch); k++)
        for (int r = cl; r < ch && !mrc && !nomem; r++) {
            long long len = 0;
            int got = recv_one(cl, &buf, &cap, &len);
            if (got > 0)
                mrc = got;
            else if (got == -1)
                nomem = tp_error_set(err, TP_ENOMEM, "gather: %lld bytes of rank %d's", len, r);
            else if (parent >= 0) /* (a string over 2 GiB goes up as its length, -1) */
                mrc = send_one(parent, buf, len);
            else if (!frc)
                frc = got == -2 ? tp_error_set(&ferr, TP_EUSAGE, "gather: rank %d on %s sent "
                                               "over 2 GiB", r, b->hosts[r])
                                : fn(ctx, r, buf, &ferr);
        }
    free(buf);
    /* every rank ends the gather together, and in MPI until then: an eager
     * send returns before its bytes have all left (the rest goes out as the
     * sender's MPI makes progress), so a rank that went on to wait outside
     * MPI (validate's control star) held its last bytes back, and rank 0
     * waited for them for ever (fleet_switch, a slow uplink under load) */
    if (!mrc && !nomem)
        mrc = MPI_Barrier(MPI_COMM_WORLD);
    if (mrc)
        return mpi_fail(mrc, "gather", err);
    if (nomem)
        return nomem;
    if (frc)
        *err = ferr;
    return frc;
}

/* The parts' lengths first, then the parts (MPI_Scatterv). */
static int mpi_scatter(struct tp_boot *b, char *const *parts, char **mine, tp_error *err)
{
    int *lens = NULL, *offs = NULL, len = 0, mrc = 0;
    char *buf = NULL;
    bool nomem = false;
    if (b->rank == 0) {
        lens = calloc((size_t)b->size, sizeof *lens);
        offs = calloc((size_t)b->size, sizeof *offs);
        size_t total = 0;
        for (int r = 0; lens && r < b->size; r++)
            total += parts[r] ? strlen(parts[r]) : 0;
        nomem = !lens || !offs || total > INT_MAX || !(buf = malloc(total + 1));
        for (int r = 0, at = 0; !nomem && r < b->size; r++) {
            lens[r] = parts[r] ? (int)strlen(parts[r]) : 0;
            offs[r] = at;
            memcpy(buf + at, parts[r] ? parts[r] : "", (size_t)lens[r]);
            at += lens[r];
        }
        if (nomem) /* every rank still takes part: an empty part each */
            for (int r = 0; lens && r < b->size; r++)
                lens[r] = 0;
    }
    if ((mrc = MPI_Scatter(lens, 1, MPI_INT, &len, 1, MPI_INT, 0, MPI_COMM_WORLD)) == 0) {
        *mine = malloc((size_t)len + 1);
        mrc = MPI_Scatterv(buf, lens, offs, MPI_CHAR, *mine ? *mine : (char[1]){0},
                           *mine ? len : 0, MPI_CHAR, 0, MPI_COMM_WORLD);
        if (*mine)
            (*mine)[len] = 0;
    }
    free(buf);
    free(lens);
    free(offs);
    if (mrc) {
        free(*mine);
        *mine = NULL;
        return mpi_fail(mrc, "scatter", err);
    }
    return nomem || !*mine ? tp_error_set(err, TP_ENOMEM, "scatter") : 0;
}

static int mpi_barrier(struct tp_boot *b, tp_error *err)
{
    (void)b;
    int mrc = MPI_Barrier(MPI_COMM_WORLD);
    return mrc ? mpi_fail(mrc, "barrier", err) : 0;
}

static void mpi_abort(struct tp_boot *b, int code)
{
    (void)b;
    fflush(NULL);
    MPI_Abort(MPI_COMM_WORLD, code);
}

static int mpi_fini(struct tp_boot *b)
{
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin)
        MPI_Finalize();
    tp__boot_free(b);
    return 0;
}
#else
static int mpi_init(const struct tp_boot_opts *o, struct tp_boot **out, tp_error *err)
{
    (void)o;
    (void)out;
    return tp_error_set(err, TP_EUSAGE, "--launcher mpi: this build has no MPI");
}
#endif

/* Open MPI's, MPICH's (PMI) and PMIx's rank variables, and the size beside
 * each (PMIx puts none in the environment: srun's step size stands in). */
static const char *const mpi_rank_vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", NULL};
static const char *const mpi_size_vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                            "SLURM_STEP_NUM_TASKS", NULL};
/* everything Open MPI, PMI, PMIx and MPICH's Hydra set for a rank */
static const char *const mpi_var_prefixes[] = {"OMPI_",           "PMIX_",  "PMI_",
                                               "MPI_LOCALRANKID", "HYDRA_", NULL};

const struct tp_boot_backend tp__boot_mpi = {
    .name = "mpi",
    .rank_vars = mpi_rank_vars,
    .size_vars = mpi_size_vars,
    .starter = "mpirun or srun",
    .var_prefixes = mpi_var_prefixes,
    .init = mpi_init,
#ifdef TP_HAVE_MPI
    .allgather = mpi_allgather,
    .gather = mpi_gather,
    .scatter = mpi_scatter,
    .bcast = mpi_bcast,
    .barrier = mpi_barrier,
    .fini = mpi_fini,
    .abort = mpi_abort,
#endif /* without MPI no mpi group can exist to call them */
};
