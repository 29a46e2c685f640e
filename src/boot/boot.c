/* Group bootstrap over a star of authenticated control connections to rank
 * 0 (see include/tp/boot.h). Rank 0 accepts every other rank, checks that
 * all were started with the same options, probes each rank's clock, and then
 * relays allgathers. Rank 0 is the only process that talks to everyone, so a
 * lost rank is always noticed there first and reported to the rest. */
#include "tp/boot.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sodium.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tp/clock.h"
#include "tp/log.h"
#include "tp/wire.h"

#define CLOCK_PROBES 16
#define MAX_RANKS 4096
#define MAX_BLOB 4096

struct tp_boot {
    int rank, size;
    uint64_t timeout_ns;
    struct tp_key key;
    struct tp_conn *conn; /* rank 0: conn[r] to rank r; others: conn[0] to rank 0 */
    char **hosts;
    int64_t *offset;
    uint64_t *rtt;
    pid_t *children; /* local rank 0: pid of rank r */
    bool mpi;        /* rank, size and exchanges through MPI */
};

static void free_boot(struct tp_boot *b)
{
    if (!b)
        return;
    if (b->conn)
        for (int r = 0; r < b->size; r++)
            if (b->conn[r].fd >= 0)
                tp_conn_close(&b->conn[r]);
    if (b->hosts)
        for (int r = 0; r < b->size; r++)
            free(b->hosts[r]);
    free(b->hosts);
    free(b->conn);
    free(b->offset);
    free(b->rtt);
    free(b->children);
    sodium_memzero(&b->key, sizeof b->key);
    free(b);
}

static struct tp_boot *new_boot(int rank, int size, uint64_t timeout_ns)
{
    struct tp_boot *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->rank = rank;
    b->size = size;
    b->timeout_ns = timeout_ns;
    b->conn = calloc((size_t)size, sizeof *b->conn);
    b->hosts = calloc((size_t)size, sizeof *b->hosts);
    b->offset = calloc((size_t)size, sizeof *b->offset);
    b->rtt = calloc((size_t)size, sizeof *b->rtt);
    if (!b->conn || !b->hosts || !b->offset || !b->rtt) {
        free_boot(b);
        return NULL;
    }
    for (int r = 0; r < size; r++)
        b->conn[r].fd = -1;
    return b;
}

static const char *my_host(void)
{
    static char host[256];
    if (!host[0] && gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "?");
    return host;
}

/* ---- rank 0 ---- */

/* The first option whose value differs, as "--name (theirs) ... (ours)". */
static bool options_differ(const json_t *ours, const json_t *theirs, char *what, size_t cap)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)ours, k, v)
    {
        json_t *t = json_object_get(theirs, k);
        if (!t || !json_equal(v, t)) {
            char *a = json_dumps(t ? t : json_null(), JSON_ENCODE_ANY | JSON_COMPACT);
            char *c = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
            snprintf(what, cap, "--%s (%.60s, where rank 0 has %.60s)", k, a ? a : "?",
                     c ? c : "?");
            free(a);
            free(c);
            return true;
        }
    }
    json_object_foreach((json_t *)theirs, k, v)
    {
        if (!json_object_get(ours, k)) {
            snprintf(what, cap, "--%s (which rank 0 does not have)", k);
            return true;
        }
    }
    return false;
}

/* A connection that has not yet proved it is one of the group's ranks. Its
 * handshake (HELLO, AUTH, JOIN) runs on a thread of its own, so a stranger
 * that connects and stays silent, sends half a frame or the wrong key holds
 * up nobody: the ranks behind it handshake beside it, and every handshake
 * ends by the group's deadline (gather_ranks shuts the socket down). */
struct joiner {
    struct tp_boot *b;
    struct tp_conn c;
    pthread_t tid;
    uint64_t t0_ns; /* when it was accepted */
    int wake;       /* write end of gather_ranks' wake-up pipe */
    int rc;         /* the handshake's result ... */
    tp_error err;   /* ... and why it failed */
    json_t *join;   /* the JOIN body on success */
    atomic_bool done;
};

/* At most MAX_PENDING handshakes at once. When all are taken, a further
 * connection waits in the listen backlog, and evicts the oldest handshake
 * once that has gone on for EVICT_GRACE_NS: a rank answers within a round
 * trip, so a burst of real ranks (thousands at the start of a large job)
 * never loses one, while silent strangers cannot fill the places for long. */
#define MAX_PENDING 256
#define HANDSHAKE_STACK (256 * 1024) /* a handshake needs a few KiB; 256 threads */
#define EVICT_GRACE_NS 2000000000ull

static void *handshake_main(void *arg)
{
    struct joiner *j = arg;
    j->rc = tp_auth_server(&j->c, &j->b->key, &j->err);
    if (!j->rc)
        j->rc = tp_wire_expect(&j->c, TP_F_JOIN, &j->join, &j->err);
    atomic_store(&j->done, true);
    ssize_t w = write(j->wake, "", 1);
    (void)w; /* a full pipe already says "look" */
    return NULL;
}

/* Seat a handshaken connection as the rank its JOIN names. Returns the
 * rank's index (> 0), or a negative code; *bad is set (not returned) when
 * the rank joined but must be told the group failed (its options differ).
 * Takes the connection and j. */
static int admit_rank(struct tp_boot *b, struct tp_conn *c, json_t *j, const json_t *options,
                      tp_error *bad, tp_error *err)
{
    int rc;
    uint64_t rank, size;
    const char *host;
    if ((rc = tp_wire_u64(c, j, "rank", 1, (uint64_t)b->size - 1, &rank, err)) ||
        (rc = tp_wire_u64(c, j, "size", 1, MAX_RANKS, &size, err)) ||
        (rc = tp_wire_str(c, j, "host", 255, &host, err))) {
        json_decref(j);
        tp_conn_close(c);
        return rc;
    }
    if (size != (uint64_t)b->size) {
        rc = tp_error_set(err, TP_EUSAGE,
                          "rank %llu on %s was started for a group of %llu, rank 0 for %d",
                          (unsigned long long)rank, host, (unsigned long long)size, b->size);
    } else if (b->conn[rank].fd >= 0) {
        rc = tp_error_set(err, TP_EUSAGE, "two processes joined as rank %llu (the second on %s)",
                          (unsigned long long)rank, host);
    }
    if (rc) {
        tp_wire_send_error(c, err);
        json_decref(j);
        tp_conn_close(c);
        return rc;
    }
    b->hosts[rank] = strdup(host);
    b->conn[rank] = *c;
    char what[200];
    if (!bad->code && options_differ(options, json_object_get(j, "options"), what, sizeof what))
        tp_error_set(bad, TP_EUSAGE, "rank %llu on %s was started with a different %s",
                     (unsigned long long)rank, host, what);
    json_decref(j);
    return (int)rank;
}

static void tell_all(struct tp_boot *b, const tp_error *e)
{
    for (int r = 1; r < b->size; r++)
        if (b->conn[r].fd >= 0)
            tp_wire_send_error(&b->conn[r], e);
}

/* What gather_ranks saw of the connections that did not become ranks. */
struct strangers {
    int n;
    char first[200], last[200];
};

/* End a joiner's handshake and seat it, or count it as a stranger. cut, when
 * not NULL, says why rank 0 cuts a handshake still going short. Returns
 * admit_rank's result, or the handshake's error. */
static int reap(struct tp_boot *b, struct joiner *j, const char *cut, const json_t *options,
                tp_error *bad, struct strangers *st)
{
    bool cutting = cut && !atomic_load(&j->done);
    if (cutting)
        shutdown(j->c.fd, SHUT_RDWR); /* wakes the thread's poll at once */
    pthread_join(j->tid, NULL);
    tp_error e = j->err;
    if (cutting && j->rc)
        tp_error_set(&e, j->rc, "peer %s had not finished its handshake when %s", j->c.peer, cut);
    int rc = j->rc ? j->rc : admit_rank(b, &j->c, j->join, options, bad, &e);
    if (j->rc)
        tp_conn_close(&j->c);
    if (rc == TP_EUSAGE && !bad->code)
        *bad = e; /* a rank that cannot join spoils the group: say why to all */
    else if (rc < 0)
        snprintf(st->n++ ? st->last : st->first, sizeof st->first, "%.199s", e.msg);
    free(j);
    return rc;
}

static int gather_ranks(struct tp_boot *b, int lfd, const json_t *options, tp_error *err)
{
    uint64_t deadline = tp_now_ns() + b->timeout_ns;
    int joined = 1, wake[2], left;
    tp_error bad = {0};
    struct strangers st = {0};
    struct joiner *pend[MAX_PENDING];
    size_t npend = 0;
    pthread_attr_t attr;
    if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0)
        return tp_error_errno(err, TP_ESYS, errno, "rank 0: wake-up pipe");
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, HANDSHAKE_STACK);
    while (joined < b->size && (left = tp_deadline_left_ms(deadline)) > 0) {
        /* all places taken by handshakes younger than the grace: leave the
         * next connection in the backlog until one ends or ages */
        bool full = npend == MAX_PENDING;
        int wait_ms = full ? tp_deadline_left_ms(pend[0]->t0_ns + EVICT_GRACE_NS) : left;
        bool hold = full && wait_ms > 0;
        struct pollfd p[2] = {{.fd = hold ? -1 : lfd, .events = POLLIN},
                              {.fd = wake[0], .events = POLLIN}};
        int n = poll(p, 2, hold && wait_ms < left ? wait_ms : left);
        if (n < 0 && errno != EINTR)
            break;
        char drain[64];
        while (read(wake[0], drain, sizeof drain) > 0) {
        }
        for (size_t i = 0; i < npend;)
            if (atomic_load(&pend[i]->done)) {
                joined += reap(b, pend[i], NULL, options, &bad, &st) > 0;
                memmove(&pend[i], &pend[i + 1], (--npend - i) * sizeof *pend);
            } else {
                i++;
            }
        if (n <= 0 || !(p[0].revents & POLLIN))
            continue;
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        if (npend == MAX_PENDING) {
            joined += reap(b, pend[0], "rank 0 needed its place for a newer connection", options,
                           &bad, &st) > 0;
            memmove(&pend[0], &pend[1], --npend * sizeof *pend);
        }
        struct joiner *j = calloc(1, sizeof *j);
        if (!j) {
            close(fd);
            continue;
        }
        j->b = b;
        j->wake = wake[1];
        j->t0_ns = tp_now_ns();
        uint64_t left_ns = deadline > j->t0_ns ? deadline - j->t0_ns : 0;
        tp_conn_from_fd(&j->c, fd, left_ns < b->timeout_ns ? left_ns : b->timeout_ns);
        if (pthread_create(&j->tid, &attr, handshake_main, j) != 0) {
            tp_conn_close(&j->c);
            free(j);
            continue;
        }
        pend[npend++] = j;
    }
    /* the group is complete or out of time: end the handshakes still going
     * (a rank that completes one now is seated only to be told why not) */
    bool complete = joined == b->size;
    char missing[256] = "";
    size_t used = 0;
    for (int r = 1; r < b->size && used + 16 < sizeof missing; r++)
        if (b->conn[r].fd < 0)
            used += (size_t)snprintf(missing + used, sizeof missing - used, "%s%d",
                                     used ? ", " : "", r);
    while (npend > 0)
        reap(b, pend[--npend], complete ? "the group was complete" : "rank 0 stopped waiting",
             options, &bad, &st);
    close(wake[0]);
    close(wake[1]);
    pthread_attr_destroy(&attr);
    char others[480] = "";
    if (st.n)
        snprintf(others, sizeof others,
                 "turned away %d connection(s) that did not join as ranks: %.200s%s%.200s", st.n,
                 st.first, st.n > 1 ? " ... " : "", st.n > 1 ? st.last : "");
    if (st.n && complete && !bad.code)
        tp_log(TP_LOG_WARN, "rank 0 %s", others);
    if (!bad.code && !complete)
        tp_error_set(&bad, TP_ETIMEOUT, "rank(s) %s did not join rank 0 on %s within %.1f s%s%s",
                     missing, my_host(), (double)b->timeout_ns / 1e9, st.n ? "; " : "", others);
    if (bad.code) {
        *err = bad;
        tell_all(b, err);
        return err->code;
    }
    return 0;
}

static int probe_clocks(struct tp_boot *b, tp_error *err)
{
    for (int r = 1; r < b->size; r++) {
        b->rtt[r] = UINT64_MAX;
        for (int k = 0; k < CLOCK_PROBES; k++) {
            json_t *j = NULL;
            uint64_t t0 = tp_now_ns();
            int rc = tp_wire_send(&b->conn[r], TP_F_TIME, NULL, err);
            if (!rc)
                rc = tp_wire_expect(&b->conn[r], TP_F_TIME, &j, err);
            uint64_t t1 = tp_now_ns();
            if (rc) {
                tp_error_prefix(err, "rank %d on %s lost during clock probing", r, b->hosts[r]);
                return rc;
            }
            json_int_t t = json_integer_value(json_object_get(j, "t"));
            json_decref(j);
            if (t1 - t0 < b->rtt[r]) {
                b->rtt[r] = t1 - t0;
                b->offset[r] = (int64_t)((uint64_t)t - (t0 + (t1 - t0) / 2));
            }
        }
    }
    return 0;
}

static int send_group(struct tp_boot *b, tp_error *err)
{
    json_t *hosts = json_array(), *off = json_array(), *rtt = json_array();
    b->hosts[0] = strdup(my_host());
    for (int r = 0; r < b->size; r++) {
        json_array_append_new(hosts, json_string(b->hosts[r] ? b->hosts[r] : "?"));
        json_array_append_new(off, json_integer(b->offset[r]));
        json_array_append_new(rtt, json_integer((json_int_t)b->rtt[r]));
    }
    json_t *g = json_pack("{s:o, s:o, s:o}", "hosts", hosts, "offsets", off, "rtts", rtt);
    int rc = 0;
    for (int r = 1; r < b->size && !rc; r++)
        if ((rc = tp_wire_send(&b->conn[r], TP_F_GROUP, g, err)))
            tp_error_prefix(err, "rank %d on %s", r, b->hosts[r]);
    json_decref(g);
    return rc;
}

static int lead(struct tp_boot *b, int lfd, const json_t *options, tp_error *err)
{
    int rc = gather_ranks(b, lfd, options, err);
    if (!rc)
        rc = probe_clocks(b, err);
    if (!rc)
        rc = send_group(b, err);
    if (rc && rc != TP_EUSAGE && rc != TP_ETIMEOUT)
        tell_all(b, err);
    return rc;
}

/* ---- other ranks ---- */

static int join(struct tp_boot *b, const char *host, int port, const json_t *options, tp_error *err)
{
    uint64_t deadline = tp_now_ns() + b->timeout_ns;
    struct tp_conn *c = &b->conn[0];
    int rc;
    for (;;) { /* rank 0 may not be listening yet */
        rc = tp_conn_connect(c, host, port, b->timeout_ns, err);
        if (rc != TP_EPEER || tp_now_ns() >= deadline)
            break;
        usleep(50000);
    }
    if (rc) {
        tp_error_prefix(err, "rank %d joining rank 0", b->rank);
        return rc;
    }
    json_t *j = json_pack("{s:i, s:i, s:s, s:i, s:O}", "rank", b->rank, "size", b->size, "host",
                          my_host(), "pid", (int)getpid(), "options", options);
    if ((rc = tp_auth_client(c, &b->key, err)) || (rc = tp_wire_send(c, TP_F_JOIN, j, err))) {
        json_decref(j);
        return rc;
    }
    json_decref(j);
    /* rank 0 waits up to the timeout for the last rank to join: a rank that
     * joined early waits that long plus a timeout for the group */
    c->timeout_ns = 2 * b->timeout_ns;
    for (;;) {
        enum tp_frame t;
        json_t *m = NULL;
        if ((rc = tp_wire_recv(c, &t, &m, err)))
            return rc;
        if (t == TP_F_TIME) {
            json_t *a = json_pack("{s:I}", "t", (json_int_t)tp_now_ns());
            rc = tp_wire_send(c, TP_F_TIME, a, err);
            json_decref(a);
            json_decref(m);
            if (rc)
                return rc;
            continue;
        }
        if (t == TP_F_ERROR) {
            const char *msg = json_string_value(json_object_get(m, "message"));
            const char *code = json_string_value(json_object_get(m, "code"));
            rc = tp_error_set(err, code && strcmp(code, "usage") == 0 ? TP_EUSAGE : TP_EPEER, "%s",
                              msg ? msg : "rank 0 reported an error");
            json_decref(m);
            return rc;
        }
        if (t != TP_F_GROUP) {
            json_decref(m);
            return tp_error_set(err, TP_EPROTO, "rank 0 sent an unexpected frame (%d)", (int)t);
        }
        json_t *hosts = json_object_get(m, "hosts"), *off = json_object_get(m, "offsets"),
               *rtt = json_object_get(m, "rtts");
        if (json_array_size(hosts) != (size_t)b->size || json_array_size(off) != (size_t)b->size ||
            json_array_size(rtt) != (size_t)b->size) {
            json_decref(m);
            return tp_error_set(err, TP_EPROTO, "rank 0 sent a group of the wrong size");
        }
        for (int r = 0; r < b->size; r++) {
            const char *h = json_string_value(json_array_get(hosts, (size_t)r));
            b->hosts[r] = strdup(h ? h : "?");
            b->offset[r] = json_integer_value(json_array_get(off, (size_t)r));
            b->rtt[r] = (uint64_t)json_integer_value(json_array_get(rtt, (size_t)r));
        }
        json_decref(m);
        c->timeout_ns = b->timeout_ns;
        return 0;
    }
}

/* ---- backends ---- */

static int boot_local(const struct tp_boot_opts *o, struct tp_boot **out, tp_error *err)
{
    if (o->nranks < 1 || o->nranks > MAX_RANKS)
        return tp_error_set(err, TP_EUSAGE, "-n %d: need 1..%d ranks", o->nranks, MAX_RANKS);
    struct tp_boot *b = new_boot(0, o->nranks, o->timeout_ns);
    if (!b)
        return tp_error_set(err, TP_ENOMEM, "group of %d", o->nranks);
    b->children = calloc((size_t)o->nranks, sizeof *b->children);
    if (!b->children || sodium_init() < 0) {
        free_boot(b);
        return tp_error_set(err, TP_ENOMEM, "group of %d", o->nranks);
    }
    /* a fresh key, shared with the ranks through fork: nobody else on this
     * host can join the group */
    b->key.set = true;
    b->key.len = 32;
    randombytes_buf(b->key.bytes, b->key.len);
    int lfd = -1, port = 0, rc = 0;
    if (o->nranks > 1 && (rc = tp_listen("127.0.0.1", 0, "rank 0", &lfd, &port, NULL, err))) {
        free_boot(b);
        return rc;
    }
    fflush(NULL);
    for (int r = 1; r < o->nranks; r++) {
        pid_t pid = fork();
        if (pid < 0) {
            rc = tp_error_errno(err, TP_ESYS, errno, "cannot fork rank %d", r);
            break;
        }
        if (pid == 0) {
            close(lfd);
            free(b->children);
            b->children = NULL;
            b->rank = r;
            rc = join(b, "127.0.0.1", port, o->options, err);
            if (rc) {
                free_boot(b);
                return rc;
            }
            *out = b;
            return 0;
        }
        b->children[r] = pid;
    }
    if (!rc && o->nranks > 1)
        rc = lead(b, lfd, o->options, err);
    if (lfd >= 0)
        close(lfd);
    if (rc) {
        tp_boot_fini(b);
        return rc;
    }
    if (o->nranks == 1)
        b->hosts[0] = strdup(my_host());
    *out = b;
    return 0;
}

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

static int boot_env(const struct tp_boot_opts *o, struct tp_boot **out, tp_error *err)
{
    long rank, size, port;
    int rc;
    if ((rc = env_int("WORLD_SIZE", 1, MAX_RANKS, &size, err)) ||
        (rc = env_int("RANK", 0, size - 1, &rank, err)) ||
        (rc = env_int("MASTER_PORT", 1, 65535, &port, err)))
        return rc;
    const char *host = getenv("MASTER_ADDR");
    if (!host || !*host)
        return tp_error_set(err, TP_EUSAGE, "MASTER_ADDR is not set");
    struct tp_boot *b = new_boot((int)rank, (int)size, o->timeout_ns);
    if (!b)
        return tp_error_set(err, TP_ENOMEM, "group of %ld", size);
    if (o->key_file) {
        if ((rc = tp_key_load(&b->key, o->key_file, err))) {
            free_boot(b);
            return rc;
        }
    } else if (!loopback_name(host)) {
        free_boot(b);
        return tp_error_set(err, TP_EUSAGE,
                            "MASTER_ADDR %s is not a loopback address: pass --key-file so only "
                            "your ranks can join",
                            host);
    }
    if (rank == 0) {
        int lfd = -1, bound;
        rc = size > 1 ? tp_listen(host, (int)port, "MASTER_ADDR", &lfd, &bound, NULL, err) : 0;
        if (!rc && size > 1)
            rc = lead(b, lfd, o->options, err);
        if (lfd >= 0)
            close(lfd);
        if (!rc && size == 1)
            b->hosts[0] = strdup(my_host());
    } else {
        rc = join(b, host, (int)port, o->options, err);
    }
    if (rc) {
        free_boot(b);
        return rc;
    }
    *out = b;
    return 0;
}

/* ---- mpi backend: the launcher (mpirun, srun) already made the group ---- */

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

static int boot_mpi(const struct tp_boot_opts *o, struct tp_boot **out, tp_error *err)
{
    int inited = 0, provided, rank, size;
    MPI_Initialized(&inited);
    if (!inited && MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return tp_error_set(err, TP_ESYS, "MPI_Init_thread failed (not started by mpirun/srun?)");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    struct tp_boot *b = new_boot(rank, size, o->timeout_ns);
    char *hosts = calloc((size_t)size, 256), *opts = calloc((size_t)size, OPT_BYTES);
    char mine[OPT_BYTES] = "";
    int rc = 0, mrc;
    if (!b || !hosts || !opts) {
        rc = tp_error_set(err, TP_ENOMEM, "group of %d", size);
        goto out;
    }
    b->mpi = true;
    char host[256] = "";
    snprintf(host, sizeof host, "%s", my_host());
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
        if (options_differ(base, theirs, what, sizeof what))
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
            for (int k = 0; k < CLOCK_PROBES; k++) {
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
            for (int k = 0; k < CLOCK_PROBES; k++) {
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
        free_boot(b);
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

static int mpi_gather(struct tp_boot *b, const char *mine, char **res, tp_error *err)
{
    int len = (int)strlen(mine), *lens = NULL, *offs = NULL, mrc;
    char *buf = NULL;
    /* a failure on rank 0 alone leaves the others in the collective: rank
     * 0 exits non-zero and the launcher ends the job */
    if (b->rank == 0 && (!(lens = calloc((size_t)b->size, sizeof *lens)) ||
                         !(offs = calloc((size_t)b->size, sizeof *offs)))) {
        free(lens);
        return tp_error_set(err, TP_ENOMEM, "gather");
    }
    if ((mrc = MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD)) == 0) {
        long long total = 0;
        for (int r = 0; b->rank == 0 && r < b->size; r++) {
            offs[r] = (int)total;
            total += lens[r];
        }
        if (total > INT32_MAX || (b->rank == 0 && !(buf = malloc((size_t)total + 1)))) {
            free(lens);
            free(offs);
            return tp_error_set(err, TP_ENOMEM, "gather of %lld bytes", total);
        }
        mrc = MPI_Gatherv(mine, len, MPI_CHAR, buf, lens, offs, MPI_CHAR, 0, MPI_COMM_WORLD);
        for (int r = 0; buf && !mrc && r < b->size; r++)
            if (!(res[r] = strndup(buf + offs[r], (size_t)lens[r])))
                mrc = -1;
    }
    free(buf);
    free(lens);
    free(offs);
    if (mrc == -1)
        return tp_error_set(err, TP_ENOMEM, "gather");
    return mrc ? mpi_fail(mrc, "gather", err) : 0;
}
#endif

/* Started by an MPI launcher? Open MPI, MPICH/PMI and PMIx set these. */
static bool under_mpi(void)
{
    return getenv("OMPI_COMM_WORLD_RANK") || getenv("PMI_RANK") || getenv("PMIX_RANK");
}

int tp_boot_init(const struct tp_boot_opts *o, struct tp_boot **out, tp_error *err)
{
    tp_clock_init();
    const char *backend = o->backend       ? o->backend
                          : under_mpi()    ? "mpi"
                          : getenv("RANK") ? "env"
                                           : "local";
    if (strcmp(backend, "mpi") == 0) {
#ifdef TP_HAVE_MPI
        return boot_mpi(o, out, err);
#else
        return tp_error_set(err, TP_EUSAGE, "--launcher mpi: this build has no MPI");
#endif
    }
    if (strcmp(backend, "local") == 0)
        return boot_local(o, out, err);
    if (strcmp(backend, "env") == 0)
        return boot_env(o, out, err);
    return tp_error_set(err, TP_EUSAGE, "--launcher %s: unknown (local, env or mpi)", backend);
}

int tp_boot_rank(const struct tp_boot *b)
{
    return b->rank;
}

int tp_boot_size(const struct tp_boot *b)
{
    return b->size;
}

const char *tp_boot_host(const struct tp_boot *b, int r)
{
    return r >= 0 && r < b->size && b->hosts[r] ? b->hosts[r] : "?";
}

int tp_boot_local_rank(const struct tp_boot *b)
{
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

static int lost(struct tp_boot *b, int r, tp_error *err)
{
    tp_error_prefix(err, "rank %d on %s lost", r, tp_boot_host(b, r));
    return err->code;
}

int tp_boot_allgather(struct tp_boot *b, const char *mine, char ***all, tp_error *err)
{
    if (strlen(mine) > MAX_BLOB)
        return tp_error_set(err, TP_EUSAGE, "allgather of %zu bytes exceeds %d", strlen(mine),
                            MAX_BLOB);
    char **res = calloc((size_t)b->size, sizeof *res);
    if (!res)
        return tp_error_set(err, TP_ENOMEM, "allgather");
    int rc = 0;
    json_t *j = NULL;
#ifdef TP_HAVE_MPI
    if (b->mpi) {
        rc = mpi_allgather(b, mine, res, err);
    } else
#endif
        if (b->rank != 0) {
        json_t *m = json_pack("{s:s}", "data", mine);
        rc = tp_wire_send(&b->conn[0], TP_F_GATHER, m, err);
        json_decref(m);
        if (!rc)
            rc = tp_wire_expect(&b->conn[0], TP_F_GATHER, &j, err);
        json_t *arr = json_object_get(j, "all");
        if (!rc && json_array_size(arr) != (size_t)b->size)
            rc = tp_error_set(err, TP_EPROTO, "rank 0 gathered the wrong number of ranks");
        for (int r = 0; !rc && r < b->size; r++) {
            const char *s = json_string_value(json_array_get(arr, (size_t)r));
            res[r] = strdup(s ? s : "");
        }
        if (rc)
            tp_error_prefix(err, "rank %d: allgather through rank 0 on %s", b->rank,
                            tp_boot_host(b, 0));
    } else {
        json_t *arr = json_array();
        json_array_append_new(arr, json_string(mine));
        res[0] = strdup(mine);
        for (int r = 1; r < b->size && !rc; r++) {
            json_t *m = NULL;
            const char *s;
            if ((rc = tp_wire_expect(&b->conn[r], TP_F_GATHER, &m, err)) ||
                (rc = tp_wire_str(&b->conn[r], m, "data", MAX_BLOB, &s, err))) {
                json_decref(m);
                lost(b, r, err);
                break;
            }
            res[r] = strdup(s);
            json_array_append_new(arr, json_string(s));
            json_decref(m);
        }
        if (rc) {
            tell_all(b, err);
        } else {
            j = json_pack("{s:O}", "all", arr);
            for (int r = 1; r < b->size && !rc; r++)
                if ((rc = tp_wire_send(&b->conn[r], TP_F_GATHER, j, err)))
                    lost(b, r, err);
        }
        json_decref(arr);
    }
    json_decref(j);
    if (rc) {
        tp_boot_free_strings(res, b->size);
        return rc;
    }
    *all = res;
    return 0;
}

/* The wire path of a gather: a string of any length crosses as frames of
 * at most GATHER_PART bytes (cut between UTF-8 characters, so each part is a
 * valid JSON string; escaping grows a part at most sixfold, within
 * TP_WIRE_MAX_PAYLOAD), "more" on all but the last. */
#define GATHER_PART 8192

static int send_parts(struct tp_boot *b, const char *mine, tp_error *err)
{
    size_t len = strlen(mine), at = 0;
    do {
        size_t n = len - at < GATHER_PART ? len - at : GATHER_PART;
        while (at + n < len && n > 0 && ((unsigned char)mine[at + n] & 0xC0) == 0x80)
            n--; /* do not split a character */
        json_t *m = json_pack("{s:s%, s:b}", "data", mine + at, n, "more", at + n < len);
        if (!m)
            return tp_error_set(err, TP_EUSAGE, "gather: the data is not valid UTF-8");
        int rc = tp_wire_send(&b->conn[0], TP_F_GATHER, m, err);
        json_decref(m);
        if (rc)
            return rc;
        at += n;
    } while (at < len);
    return 0;
}

static int recv_parts(struct tp_boot *b, int r, char **out, tp_error *err)
{
    char *acc = NULL;
    size_t len = 0;
    bool more = true;
    int rc = 0;
    while (more && !rc) {
        json_t *m = NULL;
        const char *s;
        if (!(rc = tp_wire_expect(&b->conn[r], TP_F_GATHER, &m, err)) &&
            !(rc = tp_wire_str(&b->conn[r], m, "data", GATHER_PART, &s, err)) &&
            !(rc = tp_wire_bool(&b->conn[r], m, "more", &more, err))) {
            size_t n = strlen(s);
            char *grown = realloc(acc, len + n + 1);
            if (!grown) {
                rc = tp_error_set(err, TP_ENOMEM, "gather");
            } else {
                acc = grown;
                memcpy(acc + len, s, n + 1);
                len += n;
            }
        }
        json_decref(m);
    }
    if (rc) {
        free(acc);
        return rc;
    }
    *out = acc ? acc : strdup("");
    return *out ? 0 : tp_error_set(err, TP_ENOMEM, "gather");
}

int tp_boot_gather(struct tp_boot *b, const char *mine, char ***all, tp_error *err)
{
    *all = NULL;
    char **res = NULL;
    if (b->rank == 0 && !(res = calloc((size_t)b->size, sizeof *res)))
        return tp_error_set(err, TP_ENOMEM, "gather");
    int rc = 0;
#ifdef TP_HAVE_MPI
    if (b->mpi) {
        rc = mpi_gather(b, mine, res, err);
    } else
#endif
        if (b->rank != 0) {
        if ((rc = send_parts(b, mine, err)))
            tp_error_prefix(err, "rank %d: gather to rank 0 on %s", b->rank, tp_boot_host(b, 0));
    } else {
        rc = (res[0] = strdup(mine)) ? 0 : tp_error_set(err, TP_ENOMEM, "gather");
        for (int r = 1; r < b->size && !rc; r++)
            if ((rc = recv_parts(b, r, &res[r], err)))
                lost(b, r, err);
        if (rc)
            tell_all(b, err);
    }
    if (rc) {
        tp_boot_free_strings(res, b->size);
        return rc;
    }
    *all = res;
    return 0;
}

int tp_boot_barrier(struct tp_boot *b, tp_error *err)
{
#ifdef TP_HAVE_MPI
    if (b->mpi) {
        int mrc = MPI_Barrier(MPI_COMM_WORLD);
        return mrc ? mpi_fail(mrc, "barrier", err) : 0;
    }
#endif
    char **all = NULL;
    int rc = tp_boot_allgather(b, "", &all, err);
    tp_boot_free_strings(all, b->size);
    return rc;
}

int tp_boot_fini(struct tp_boot *b)
{
    if (!b)
        return 0;
    int worst = 0;
#ifdef TP_HAVE_MPI
    if (b->mpi) {
        int fin = 0;
        MPI_Finalized(&fin);
        if (!fin)
            MPI_Finalize();
    }
#endif
    for (int r = 0; r < b->size; r++)
        if (b->conn[r].fd >= 0)
            tp_conn_close(&b->conn[r]);
    if (b->children) {
        uint64_t deadline = tp_now_ns() + b->timeout_ns;
        for (int r = 1; r < b->size; r++) {
            if (b->children[r] <= 0)
                continue;
            int st = 0;
            pid_t got;
            while ((got = waitpid(b->children[r], &st, WNOHANG)) == 0 && tp_now_ns() < deadline)
                usleep(10000);
            if (got == 0) {
                kill(b->children[r], SIGKILL);
                waitpid(b->children[r], &st, 0);
                worst = worst > 1 ? worst : 1;
                continue;
            }
            int code = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
            if (code > worst)
                worst = code;
        }
    }
    free_boot(b);
    return worst;
}
