/* Group bootstrap (see include/tp/boot.h): the table of backends, one row
 * per launcher (local.c, env.c, mpi.c; the first two over the rank-0 star
 * of star.c), and the public API over it. A backend is looked up by name,
 * or detected from the launcher's variables, once, in tp_boot_init; the
 * group then carries its row, so nothing below switches on the launcher. */
#include "tp/boot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot_int.h"
#include "tp/clock.h"

/* In the order the names are listed to a user; detection tries the rows
 * with rank variables in this order and falls back to the one without. */
static const struct tp_boot_backend *const backends[] = {&tp__boot_local, &tp__boot_mpi,
                                                         &tp__boot_env};
#define NBACKENDS (sizeof backends / sizeof backends[0])

static const struct tp_boot_backend *find(const char *name)
{
    for (size_t i = 0; name && i < NBACKENDS; i++)
        if (strcmp(backends[i]->name, name) == 0)
            return backends[i];
    return NULL;
}

/* The index of the first of be's rank variables that is set, -1 when none
 * is (or be has none). */
static int rank_var_at(const struct tp_boot_backend *be)
{
    for (int i = 0; be->rank_vars && be->rank_vars[i]; i++)
        if (getenv(be->rank_vars[i]))
            return i;
    return -1;
}

/* The value of the first of be's rank variables that is set, NULL when
 * none is (or be has none). */
static const char *rank_var(const struct tp_boot_backend *be)
{
    int i = rank_var_at(be);
    return i < 0 ? NULL : getenv(be->rank_vars[i]);
}

/* A variable's value as a whole number in lo..hi, or -1. */
static long env_number(const char *v, long lo, long hi)
{
    char *end;
    errno = 0;
    long x = v && *v ? strtol(v, &end, 10) : -1;
    return v && *v && !errno && !*end && x >= lo && x <= hi ? x : -1;
}

int tp_boot_check_env(const char *given, int nranks, tp_error *err)
{
    const struct tp_boot_backend *be = find(tp_boot_detect(given));
    int i = be ? rank_var_at(be) : -1;
    if (i < 0)
        return 0;
    const char *rname = be->rank_vars[i], *rv = getenv(rname);
    const char *sname = be->size_vars ? be->size_vars[i] : "";
    const char *sv = sname[0] ? getenv(sname) : NULL;
    long size = env_number(sv, 1, TP_BOOT_MAX_RANKS);
    if (sv && size < 0)
        return tp_error_set(err, TP_EUSAGE, "%s='%s' is not a number of ranks (1..%d)", sname, sv,
                            TP_BOOT_MAX_RANKS);
    long rank = env_number(rv, 0, size > 0 ? size - 1 : TP_BOOT_MAX_RANKS - 1);
    if (rank < 0 && size > 0)
        return tp_error_set(err, TP_EUSAGE, "%s='%s' is not a rank of %s=%ld (0..%ld)", rname, rv,
                            sname, size, size - 1);
    if (rank < 0)
        return tp_error_set(err, TP_EUSAGE, "%s='%s' is not a rank (0..%d)", rname, rv,
                            TP_BOOT_MAX_RANKS - 1);
    /* -n with the launcher's variables and no --launcher: one of the two is
     * not what the user meant (a variable left in an `srun --pty` or
     * `mpirun bash` shell makes a group of one) */
    if (given || nranks <= 0 || size == nranks)
        return 0;
    const char *who = be->starter;
    char as[160];
    if (size > 0)
        snprintf(as, sizeof as, " and %s=%ld say %s started this process as rank %ld of %ld", sname,
                 size, who, rank, size);
    else
        snprintf(as, sizeof as, " says %s started this process, with a count of its own", who);
    return tp_error_set(err, TP_EUSAGE,
                        "-n %d asks for %d ranks, but %s=%s%s: unset %s (left from an `srun "
                        "--pty` or `mpirun` shell?), pass --launcher local to fork %d ranks "
                        "here, or leave -n out under the launcher",
                        nranks, nranks, rname, rv, as, rname, nranks);
}

const char *tp_boot_detect(const char *given)
{
    if (given)
        return given;
    const char *fallback = NULL;
    for (size_t i = 0; i < NBACKENDS; i++) {
        if (!backends[i]->rank_vars)
            fallback = backends[i]->name;
        else if (rank_var(backends[i]))
            return backends[i]->name;
    }
    return fallback;
}

bool tp_boot_will_be_rank0(const char *backend)
{
    const struct tp_boot_backend *be = find(tp_boot_detect(backend));
    const char *v = be ? rank_var(be) : NULL;
    return !v || !*v || strcmp(v, "0") == 0;
}

bool tp_boot_launched(const char *backend)
{
    const struct tp_boot_backend *be = find(tp_boot_detect(backend));
    return be && be->rank_vars;
}

int tp_boot_check_backend(const char *name, const char *what, tp_error *err)
{
    if (!name || find(name))
        return 0;
    char list[128];
    size_t used = 0;
    for (size_t i = 0; i < NBACKENDS && used < sizeof list; i++) {
        const char *sep = i == 0 ? "" : i + 1 < NBACKENDS ? ", " : " or ";
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", sep, backends[i]->name);
    }
    return tp_error_set(err, TP_EUSAGE, "%s %s: %s", what, name, list);
}

/* Whether the entry kv, whose name is its first n bytes, starts with one
 * of list (prefix) or has one of list as its name. */
static bool in_list(const char *const *list, const char *kv, size_t n, bool prefix)
{
    for (; list && *list; list++)
        if (prefix ? strncmp(kv, *list, strlen(*list)) == 0
                   : n == strlen(*list) && strncmp(kv, *list, n) == 0)
            return true;
    return false;
}

bool tp_boot_launcher_var(const char *kv)
{
    size_t n = strcspn(kv, "="); /* the name's length */
    for (size_t i = 0; i < NBACKENDS; i++)
        if (in_list(backends[i]->var_prefixes, kv, n, true) ||
            in_list(backends[i]->var_names, kv, n, false))
            return true;
    return false;
}

int tp_boot_init(const struct tp_boot_opts *o, struct tp_boot **out, tp_error *err)
{
    tp_clock_init();
    const char *name = tp_boot_detect(o->backend);
    const struct tp_boot_backend *be = find(name);
    if (!be)
        return tp_boot_check_backend(name, "--launcher", err);
    return be->init(o, out, err);
}

int tp_boot_rank(const struct tp_boot *b)
{
    return b->rank;
}

int tp_boot_size(const struct tp_boot *b)
{
    return b->size;
}

int tp_boot_lost(const struct tp_boot *b)
{
    return b->lost;
}

bool tp_boot_set_timeout(struct tp_boot *b, uint64_t ns)
{
    if (!b->be->set_timeout)
        return false;
    b->be->set_timeout(b, ns);
    return true;
}

bool tp_boot_leave_out(struct tp_boot *b)
{
    if (!b->be->can_leave_out)
        return false;
    b->leave_out = true;
    return true;
}

bool tp_boot_gone(const struct tp_boot *b, int r)
{
    return r >= 0 && r < b->size && b->gone[r];
}

const char *tp_boot_gone_why(const struct tp_boot *b, int r)
{
    return r >= 0 && r < b->size && b->gone_why ? b->gone_why[r] : NULL;
}

int tp_boot_abort(struct tp_boot *b, int code)
{
    if (b && b->be->abort)
        b->be->abort(b, code);
    return tp_boot_fini(b);
}

const char *tp_boot_host(const struct tp_boot *b, int r)
{
    return tp__boot_host(b, r);
}

int tp_boot_local_rank(const struct tp_boot *b)
{
    if (b->local_rank >= 0) /* a lean group's, as rank 0 counted it */
        return b->local_rank;
    int k = 0;
    for (int r = 0; r < b->rank; r++)
        k += strcmp(tp_boot_host(b, r), tp_boot_host(b, b->rank)) == 0;
    return k;
}

int64_t tp_boot_clock_offset_ns(const struct tp_boot *b, int r)
{
    return r >= 0 && r < b->size ? b->offset[r] : 0;
}

uint64_t tp_boot_clock_rtt_ns(const struct tp_boot *b, int r)
{
    return r >= 0 && r < b->size ? b->rtt[r] : 0;
}

void tp_boot_free_strings(char **all, int n)
{
    if (!all)
        return;
    for (int i = 0; i < n; i++)
        free(all[i]);
    free(all);
}

int tp_boot_allgather(struct tp_boot *b, const char *mine, char ***all, tp_error *err)
{
    if (strlen(mine) > TP_BOOT_MAX_BLOB)
        return tp_error_set(err, TP_EUSAGE, "allgather of %zu bytes exceeds %d", strlen(mine),
                            TP_BOOT_MAX_BLOB);
    char **res = calloc((size_t)b->size, sizeof *res);
    if (!res)
        return tp_error_set(err, TP_ENOMEM, "allgather");
    int rc = b->be->allgather(b, mine, res, err);
    if (rc) {
        tp_boot_free_strings(res, b->size);
        return rc;
    }
    *all = res;
    return 0;
}

/* tp_boot_gather's: keep every rank's string */
static int keep(void *ctx, int r, const char *data, tp_error *err)
{
    char **res = ctx;
    if (!data) /* left out */
        return 0;
    return (res[r] = strdup(data)) ? 0 : tp_error_set(err, TP_ENOMEM, "gather");
}

int tp_boot_gather(struct tp_boot *b, const char *mine, char ***all, tp_error *err)
{
    *all = NULL;
    char **res = NULL;
    if (b->rank == 0 && !(res = calloc((size_t)b->size, sizeof *res)))
        return tp_error_set(err, TP_ENOMEM, "gather");
    int rc = b->be->gather(b, mine, keep, res, err);
    if (rc) {
        tp_boot_free_strings(res, b->size);
        return rc;
    }
    *all = res;
    return 0;
}

int tp_boot_gather_each(struct tp_boot *b, const char *mine, tp_boot_each_fn fn, void *ctx,
                        tp_error *err)
{
    return b->be->gather(b, mine, fn, ctx, err);
}

void tp_boot_bytes(const struct tp_boot *b, uint64_t *sent, uint64_t *received)
{
    *sent = *received = 0;
    for (int r = 0; b->conn && r < (b->rank == 0 ? b->size : 1); r++) {
        *sent += b->conn[r].bytes_sent;
        *received += b->conn[r].bytes_received;
    }
}

void tp_boot_tell(struct tp_boot *b, const tp_error *why)
{
    for (int r = 1; b->rank == 0 && b->conn && r < b->size; r++)
        if (b->conn[r].fd >= 0 && !b->gone[r])
            tp_wire_send_error(&b->conn[r], why);
}

bool tp_boot_lead_lost(const struct tp_boot *b, const tp_error *err)
{
    return b->rank != 0 && b->conn && !b->conn[0].peer_said_error && err &&
           (err->code == TP_EPEER || err->code == TP_ETIMEOUT);
}

int tp_boot_scatter(struct tp_boot *b, char *const *parts, char **mine, tp_error *err)
{
    *mine = NULL;
    return b->be->scatter(b, parts, mine, err);
}

int tp_boot_bcast(struct tp_boot *b, const char *text, char **out, tp_error *err)
{
    *out = NULL;
    if (b->be->bcast)
        return b->be->bcast(b, text, out, err);
    char **parts = NULL;
    if (b->rank == 0) { /* one text, every rank's part */
        if (!(parts = malloc(sizeof *parts * (size_t)b->size)))
            return tp_error_set(err, TP_ENOMEM, "broadcast");
        for (int r = 0; r < b->size; r++)
            parts[r] = (char *)text;
    }
    int rc = b->be->scatter(b, parts, out, err);
    free(parts);
    return rc;
}

int tp_boot_barrier(struct tp_boot *b, tp_error *err)
{
    return b->be->barrier(b, err);
}

int tp_boot_fini(struct tp_boot *b)
{
    return b ? b->be->fini(b) : 0;
}
