/* The env backend: torchrun's and Kubernetes' convention. RANK, WORLD_SIZE,
 * MASTER_ADDR and MASTER_PORT say who this process is and where rank 0 is;
 * rank 0 listens at MASTER_ADDR:MASTER_PORT and the others join its star.
 * The ranks share a key file, which may be left out only when MASTER_ADDR is
 * a loopback address (every rank on this host). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot_int.h"

static bool loopback_name(const char *host)
{
    return strcmp(host, "localhost") == 0 || strncmp(host, "127.", 4) == 0 ||
           strcmp(host, "::1") == 0;
}

static int env_int(const char *name, long lo, long hi, long *out, tp_error *err)
{
    const char *v = getenv(name);
    char *end;
    if (!v || !*v)
        return tp_error_set(err, TP_EUSAGE,
                            "%s is not set (the env backend needs RANK, "
                            "WORLD_SIZE, MASTER_ADDR and MASTER_PORT)",
                            name);
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end || x < lo || x > hi)
        return tp_error_set(err, TP_EUSAGE, "%s='%s' is not an integer in %ld..%ld", name, v, lo,
                            hi);
    *out = x;
    return 0;
}

/* The star at o->host:o->port, this process rank o->rank of o->size. */
static int star_init(const struct tp_boot_star_opts *o, struct tp_boot **out, tp_error *err)
{
    int rc;
    struct tp_boot *b = tp__boot_new(&tp__boot_env, o->rank, o->size, o->timeout_ns);
    if (!b)
        return tp_error_set(err, TP_ENOMEM, "group of %d", o->size);
    b->leave_out = o->leave_out;
    b->lean = o->lean;
    if (o->key_file) {
        if ((rc = tp_key_load(&b->key, o->key_file, err))) {
            tp__boot_free(b);
            return rc;
        }
    } else if (!loopback_name(o->host)) {
        tp__boot_free(b);
        return tp_error_set(err, TP_EUSAGE,
                            "MASTER_ADDR %s is not a loopback address: pass --key-file so only "
                            "your ranks can join",
                            o->host);
    }
    if (o->rank == 0) {
        int lfd = -1, bound;
        rc = o->size > 1 ? tp_listen(o->host, o->port, "MASTER_ADDR", &lfd, &bound, NULL, err) : 0;
        if (!rc && o->size > 1)
            rc = tp__boot_lead(b, lfd, o->options, err);
        if (lfd >= 0)
            close(lfd);
        if (!rc && o->size == 1)
            b->hosts[0] = strdup(tp__boot_my_host());
    } else {
        rc = tp__boot_join(b, o->host, o->port, o->options, err);
    }
    if (rc) {
        tp__boot_free(b);
        return rc;
    }
    *out = b;
    return 0;
}

static int env_init(const struct tp_boot_opts *o, struct tp_boot **out, tp_error *err)
{
    long rank, size, port;
    int rc;
    if ((rc = env_int("WORLD_SIZE", 1, TP_BOOT_MAX_RANKS, &size, err)) ||
        (rc = env_int("RANK", 0, size - 1, &rank, err)) ||
        (rc = env_int("MASTER_PORT", 1, 65535, &port, err)))
        return rc;
    const char *host = getenv("MASTER_ADDR");
    if (!host || !*host)
        return tp_error_set(err, TP_EUSAGE, "MASTER_ADDR is not set");
    struct tp_boot_star_opts so = {.rank = (int)rank,
                                   .size = (int)size,
                                   .host = host,
                                   .port = (int)port,
                                   .key_file = o->key_file,
                                   .timeout_ns = o->timeout_ns,
                                   .options = o->options,
                                   .leave_out = o->leave_out,
                                   .lean = o->lean};
    return star_init(&so, out, err);
}

int tp_boot_star(const struct tp_boot_star_opts *o, struct tp_boot **out, tp_error *err)
{
    if (o->size < 1 || o->size > TP_BOOT_MAX_RANKS || o->rank < 0 || o->rank >= o->size ||
        o->port < 1 || o->port > 65535 || !o->host || !*o->host)
        return tp_error_set(err, TP_EUSAGE, "a star of %d ranks, rank %d, at %s port %d: out of "
                            "range", o->size, o->rank, o->host ? o->host : "(none)", o->port);
    return star_init(o, out, err);
}

int tp_boot_env_member(int rank, int size, const char *addr, const char *port, char out[4][128])
{
    int a = snprintf(out[0], 128, "RANK=%d", rank);
    int b = snprintf(out[1], 128, "WORLD_SIZE=%d", size);
    int c = snprintf(out[2], 128, "MASTER_ADDR=%s", addr);
    int d = snprintf(out[3], 128, "MASTER_PORT=%s", port);
    return a < 128 && b < 128 && c < 128 && d < 128 ? 0 : -1;
}

static const char *const env_rank_vars[] = {"RANK", NULL};
static const char *const env_size_vars[] = {"WORLD_SIZE", NULL};
/* what torchrun (and its elastic agent) sets for a rank */
static const char *const env_vars[] = {
    "RANK",       "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
    "GROUP_RANK", "ROLE_RANK",  NULL};

const struct tp_boot_backend tp__boot_env = {
    .name = "env",
    .rank_vars = env_rank_vars,
    .size_vars = env_size_vars,
    .starter = "torchrun",
    .var_names = env_vars,
    .init = env_init,
    .allgather = tp__boot_star_allgather,
    .gather = tp__boot_star_gather,
    .scatter = tp__boot_star_scatter,
    .barrier = tp__boot_star_barrier,
    .set_timeout = tp__boot_star_set_timeout,
    .can_leave_out = true,
    .fini = tp__boot_star_fini,
};
