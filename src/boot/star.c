/* The rank-0 star that the local and env backends share: every other rank
 * holds one authenticated control connection to rank 0 (src/wire). Rank 0
 * accepts every other rank, checks that all were started with the same
 * options, probes each rank's clock, and then relays allgathers and
 * receives gathers. Rank 0 is the only process that talks to everyone, so a
 * lost rank is always noticed there first and reported to the rest. The
 * group object the star fills is group.c's. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "boot_int.h"
#include "tp/clock.h"
#include "tp/intr.h"
#include "tp/log.h"

/* The longest rank 0 waits for joining ranks without asking tp_intr. */
#define INTR_SLICE_MS 250

/* ---- rank 0 ---- */

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
    struct tp_boot_join jn;
    int rc = tp_boot_parse_join(c, j, b->size, &jn, err);
    if (rc) {
        json_decref(j);
        tp_conn_close(c);
        return rc;
    }
    int rank = jn.rank;
    const char *host = jn.host;
    if (jn.size != b->size) {
        rc = tp_error_set(err, TP_EUSAGE,
                          "rank %d on %s was started for a group of %d, rank 0 for %d", rank, host,
                          jn.size, b->size);
    } else if (b->conn[rank].fd >= 0) {
        rc = tp_error_set(err, TP_EUSAGE, "two processes joined as rank %d (the second on %s)",
                          rank, host);
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
    if (!bad->code && tp__boot_options_differ(options, jn.options, what, sizeof what))
        tp_error_set(bad, TP_EUSAGE, "rank %d on %s was started with a different %s", rank, host,
                     what);
    json_decref(j);
    return rank;
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
        /* an interrupt ends the wait (the group may wait an hour for a
         * node): the ranks that joined are told why */
        if (tp_intr_check(&bad))
            break;
        /* all places taken by handshakes younger than the grace: leave the
         * next connection in the backlog until one ends or ages */
        bool full = npend == MAX_PENDING;
        int wait_ms = full ? tp_deadline_left_ms(pend[0]->t0_ns + EVICT_GRACE_NS) : left;
        bool hold = full && wait_ms > 0;
        struct pollfd p[2] = {{.fd = hold ? -1 : lfd, .events = POLLIN},
                              {.fd = wake[0], .events = POLLIN}};
        int ms = hold && wait_ms < left ? wait_ms : left;
        int n = poll(p, 2, ms < INTR_SLICE_MS ? ms : INTR_SLICE_MS);
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
        reap(b, pend[--npend],
             complete           ? "the group was complete"
             : tp_intr_signal() ? "rank 0 was interrupted"
                                : "rank 0 stopped waiting",
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
    if (!bad.code && !complete && b->leave_out) {
        /* the group forms without them: gone from the start, said once */
        tp_log(TP_LOG_WARN, "rank(s) %s did not join rank 0 on %s within %.1f s: left out",
               missing, tp__boot_my_host(), (double)b->timeout_ns / 1e9);
        char why[160];
        snprintf(why, sizeof why, "did not join rank 0 within %.1f s",
                 (double)b->timeout_ns / 1e9);
        for (int r = 1; r < b->size; r++)
            if (b->conn[r].fd < 0) {
                b->gone[r] = true;
                b->gone_why[r] = strdup(why);
            }
    } else if (!bad.code && !complete) {
        tp_error_set(&bad, TP_ETIMEOUT, "rank(s) %s did not join rank 0 on %s within %.1f s%s%s",
                     missing, tp__boot_my_host(), (double)b->timeout_ns / 1e9, st.n ? "; " : "",
                     others);
    }
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
        if (b->gone[r])
            continue;
        b->rtt[r] = UINT64_MAX;
        for (int k = 0; k < TP_BOOT_CLOCK_PROBES; k++) {
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
            int64_t t;
            rc = tp_boot_parse_time(&b->conn[r], j, &t, err);
            json_decref(j);
            if (rc) {
                tp_error_prefix(err, "rank %d on %s during clock probing", r, b->hosts[r]);
                return rc;
            }
            if (t1 - t0 < b->rtt[r]) {
                b->rtt[r] = t1 - t0;
                b->offset[r] = (int64_t)((uint64_t)t - (t0 + (t1 - t0) / 2));
            }
        }
    }
    return 0;
}

/* The wire path of a long text (a gather's contribution, the group, an
 * allgather's result): it crosses as frames of one type, each of at most
 * GATHER_PART bytes (cut between UTF-8 characters, so each part is a valid
 * JSON string; escaping grows a part at most sixfold, within
 * TP_WIRE_MAX_PAYLOAD), {"data", "more"}, "more" on all but the last. */
#define GATHER_PART TP_BOOT_GATHER_PART

static int send_text(struct tp_conn *c, enum tp_frame t, const char *text, tp_error *err)
{
    size_t len = strlen(text), at = 0;
    do {
        size_t n = len - at < GATHER_PART ? len - at : GATHER_PART;
        while (at + n < len && n > 0 && ((unsigned char)text[at + n] & 0xC0) == 0x80)
            n--; /* do not split a character */
        json_t *m = json_pack("{s:s%, s:b}", "data", text + at, n, "more", at + n < len);
        if (!m)
            return tp_error_set(err, TP_EUSAGE, "gather: the data is not valid UTF-8");
        int rc = tp_wire_send(c, t, m, err);
        json_decref(m);
        if (rc)
            return rc;
        at += n;
    } while (at < len);
    return 0;
}

/* Read what send_text sent as frames of type t; first, when not NULL, is
 * the first part, already read (and released here). */
static int recv_text(struct tp_conn *c, enum tp_frame t, json_t *first, char **out,
                     tp_error *err)
{
    char *acc = NULL;
    size_t len = 0;
    bool more = true;
    int rc = 0;
    while (more && !rc) {
        json_t *m = first;
        const char *s;
        first = NULL;
        if ((m || !(rc = tp_wire_expect(c, t, &m, err))) &&
            !(rc = tp_boot_parse_data(c, m, TP_BOOT_GATHER_PART, &s, &more, err))) {
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

/* The same, a JSON object: its text parsed. */
static int recv_object(struct tp_conn *c, enum tp_frame t, json_t *first, json_t **out,
                       tp_error *err)
{
    char *text = NULL;
    int rc = recv_text(c, t, first, &text, err);
    if (rc)
        return rc;
    json_error_t je;
    *out = json_loads(text, 0, &je);
    free(text);
    if (!json_is_object(*out)) {
        json_decref(*out);
        *out = NULL;
        return tp_error_set(err, TP_EPROTO, "peer %s: a broken frame (type %d): %s", c->peer,
                            (int)t, je.text);
    }
    return 0;
}

/* Ranks in order of (host, rank), for counting each one's place on its
 * host in O(N log N). */
static const char *host_or_unknown(char *const *hosts, int r)
{
    return hosts[r] ? hosts[r] : "?";
}

static int by_host(const void *x, const void *y, void *hosts)
{
    int a = *(const int *)x, b = *(const int *)y;
    int c = strcmp(host_or_unknown(hosts, a), host_or_unknown(hosts, b));
    return c ? c : (a > b) - (a < b);
}

/* A lean group: each rank its own clock, its place on its host and rank
 * 0's host, with the ranks left out, O(1) bytes a rank but for those
 * (gone, already packed). */
static int send_lean_group(struct tp_boot *b, json_t *gone, tp_error *err)
{
    int *order = malloc(sizeof *order * (size_t)b->size);
    int *local = malloc(sizeof *local * (size_t)b->size);
    if (!order || !local) {
        free(order);
        free(local);
        return tp_error_set(err, TP_ENOMEM, "the group");
    }
    for (int r = 0; r < b->size; r++)
        order[r] = r;
    qsort_r(order, (size_t)b->size, sizeof *order, by_host, b->hosts);
    for (int i = 0; i < b->size; i++) /* after the lower ranks on its host */
        local[order[i]] = i > 0 && strcmp(host_or_unknown(b->hosts, order[i - 1]),
                                          host_or_unknown(b->hosts, order[i])) == 0
                              ? local[order[i - 1]] + 1
                              : 0;
    b->local_rank = local[0];
    int rc = 0;
    for (int r = 1; r < b->size && !rc; r++) {
        if (b->gone[r])
            continue;
        json_t *g = json_pack("{s:b, s:s, s:I, s:I, s:i, s:O}", "lean", 1, "host0", b->hosts[0],
                              "offset", (json_int_t)b->offset[r], "rtt", (json_int_t)b->rtt[r],
                              "local_rank", local[r], "gone", gone);
        char *text = g ? json_dumps(g, JSON_COMPACT) : NULL;
        json_decref(g);
        rc = text ? send_text(&b->conn[r], TP_F_GROUP, text, err)
                  : tp_error_set(err, TP_ENOMEM, "the group");
        if (rc && text)
            tp_error_prefix(err, "rank %d on %s", r, b->hosts[r]);
        free(text);
    }
    free(order);
    free(local);
    return rc;
}

/* Every rank's host, clock offset and its round trip, to every rank, as a
 * long text (a group of thousands is past one frame); in a lean group each
 * rank's own alone (send_lean_group). */
static int send_group(struct tp_boot *b, tp_error *err)
{
    b->hosts[0] = strdup(tp__boot_my_host());
    if (b->lean) {
        json_t *gone = json_array();
        for (int r = 1; r < b->size && gone; r++)
            if (b->gone[r])
                json_array_append_new(gone, json_integer(r));
        int rc = gone && b->hosts[0] ? send_lean_group(b, gone, err)
                                     : tp_error_set(err, TP_ENOMEM, "the group");
        json_decref(gone);
        return rc;
    }
    json_t *hosts = json_array(), *off = json_array(), *rtt = json_array(), *gone = json_array();
    for (int r = 0; r < b->size; r++) {
        json_array_append_new(hosts, json_string(b->hosts[r] ? b->hosts[r] : "?"));
        json_array_append_new(off, json_integer(b->offset[r]));
        json_array_append_new(rtt, json_integer((json_int_t)b->rtt[r]));
        if (b->gone[r])
            json_array_append_new(gone, json_integer(r));
    }
    json_t *g = json_pack("{s:o, s:o, s:o, s:o}", "hosts", hosts, "offsets", off, "rtts", rtt,
                          "gone", gone);
    char *text = g ? json_dumps(g, JSON_COMPACT) : NULL;
    json_decref(g);
    int rc = text ? 0 : tp_error_set(err, TP_ENOMEM, "the group");
    for (int r = 1; r < b->size && !rc; r++)
        if (!b->gone[r] && (rc = send_text(&b->conn[r], TP_F_GROUP, text, err)))
            tp_error_prefix(err, "rank %d on %s", r, b->hosts[r]);
    free(text);
    return rc;
}

/* Rank 0 holds a connection to every rank: room for them (and 256 more
 * files) under the soft limit on open files, raised up to the hard one.
 * TP_EUSAGE, naming the limit, when even the hard one is too low. */
static int fd_room(int size, tp_error *err)
{
    struct rlimit rl;
    rlim_t need = (rlim_t)size + 256;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
        return 0;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need)
        return tp_error_set(err, TP_EUSAGE,
                            "a group of %d ranks needs %llu open files at rank 0, over the hard "
                            "limit of %llu (ulimit -Hn; LimitNOFILE= under systemd)",
                            size, (unsigned long long)need, (unsigned long long)rl.rlim_max);
    rl.rlim_cur = need;
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
        return tp_error_errno(err, TP_ESYS, errno, "raising the open files limit to %llu",
                              (unsigned long long)need);
    return 0;
}

int tp__boot_lead(struct tp_boot *b, int lfd, const json_t *options, tp_error *err)
{
    int frc = fd_room(b->size, err);
    if (frc)
        return frc;
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

int tp__boot_join(struct tp_boot *b, const char *host, int port, const json_t *options,
                  tp_error *err)
{
    uint64_t deadline = tp_now_ns() + b->timeout_ns;
    struct tp_conn *c = &b->conn[0];
    int rc;
    for (;;) { /* rank 0 may not be listening yet; an interrupt ends the wait */
        rc = tp_conn_connect(c, host, port, b->timeout_ns, err);
        if (rc != TP_EPEER || tp_now_ns() >= deadline)
            break;
        usleep(50000);
        if ((rc = tp_intr_check(err)) != 0)
            break;
    }
    if (rc) {
        tp_error_prefix(err, "rank %d joining rank 0", b->rank);
        return rc;
    }
    json_t *j = json_pack("{s:i, s:i, s:s, s:i, s:O}", "rank", b->rank, "size", b->size, "host",
                          tp__boot_my_host(), "pid", (int)getpid(), "options", options);
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
        json_t *whole = NULL;
        const char **hosts = NULL;
        if ((rc = recv_object(c, TP_F_GROUP, m, &whole, err)))
            return rc;
        m = whole;
        if (json_object_get(m, "lean")) { /* this rank's own, and rank 0's host */
            struct tp_boot_lean l;
            rc = tp_boot_parse_lean_group(c, m, b->size, &l, b->gone, err);
            if (!rc) {
                b->lean = true;
                b->offset[b->rank] = l.offset;
                b->rtt[b->rank] = l.rtt;
                b->local_rank = l.local_rank;
                b->hosts[0] = strdup(l.host0);
                b->hosts[b->rank] = strdup(tp__boot_my_host());
                if (!b->hosts[0] || !b->hosts[b->rank])
                    rc = tp_error_set(err, TP_ENOMEM, "rank %d: the group", b->rank);
            }
            json_decref(m);
            if (!rc)
                c->timeout_ns = b->timeout_ns;
            return rc;
        }
        hosts = calloc((size_t)b->size, sizeof *hosts);
        rc = hosts ? tp_boot_parse_group(c, m, b->size, hosts, b->offset, b->rtt, b->gone, err)
                   : tp_error_set(err, TP_ENOMEM, "rank %d: the group", b->rank);
        for (int r = 0; !rc && r < b->size; r++)
            if (!(b->hosts[r] = strdup(hosts[r])))
                rc = tp_error_set(err, TP_ENOMEM, "rank %d: the group", b->rank);
        free(hosts);
        json_decref(m);
        if (rc)
            return rc;
        c->timeout_ns = b->timeout_ns;
        return 0;
    }
}

/* ---- the star's operations ---- */

/* A rank that reported an interrupt of its own was stopped, not lost. */
static int lost(struct tp_boot *b, int r, tp_error *err)
{
    if (!tp_code_is_intr(err->code))
        b->lost = r;
    tp_error_prefix(err, tp_code_is_intr(err->code) ? "rank %d on %s" : "rank %d on %s lost", r,
                    tp__boot_host(b, r));
    return err->code;
}

/* Rank 0, rank r lost in an operation (err says how): in a group that
 * leaves the lost out, r is closed and gone and the operation goes on
 * (returns 0); otherwise, or for an interrupt, the operation fails as
 * lost() says. */
static int lose(struct tp_boot *b, int r, tp_error *err)
{
    if (!b->leave_out || tp_code_is_intr(err->code) || tp_intr_signal())
        return lost(b, r, err);
    b->gone[r] = true;
    free(b->gone_why[r]);
    b->gone_why[r] = strdup(err->msg);
    if (b->conn[r].fd >= 0)
        tp_conn_close(&b->conn[r]);
    tp_log(TP_LOG_WARN, "rank %d on %s left out: %s", r, tp__boot_host(b, r), err->msg);
    *err = (tp_error){0};
    return 0;
}

/* Rank 0 reads a rank's part of an allgather; with leave_out by the
 * operation's deadline (every rank waited for together), else within the
 * connection's timeout. A timeout reads as the connection's would. */
static int read_part(struct tp_boot *b, int r, uint64_t deadline, json_t **m, tp_error *err)
{
    struct tp_conn *c = &b->conn[r];
    uint64_t keep = c->timeout_ns, now = tp_now_ns();
    if (b->leave_out) /* what has arrived by then is still read */
        c->timeout_ns = deadline > now + 10000000 ? deadline - now : 10000000;
    int rc = tp_wire_expect(c, TP_F_GATHER, m, err);
    c->timeout_ns = keep;
    if (rc == TP_ETIMEOUT)
        tp_error_set(err, TP_ETIMEOUT,
                     "peer %s did not answer on the control connection within %.1f s", c->peer,
                     (double)keep / 1e9);
    return rc;
}

/* Every rank sends its string to rank 0, which sends the whole set back
 * (null for a rank left out). */
int tp__boot_star_allgather(struct tp_boot *b, const char *mine, char **res, tp_error *err)
{
    int rc = 0;
    json_t *j = NULL;
    if (b->rank != 0) {
        json_t *m = json_pack("{s:s}", "data", mine);
        rc = tp_wire_send(&b->conn[0], TP_F_GATHER, m, err);
        json_decref(m);
        if (!rc)
            rc = recv_object(&b->conn[0], TP_F_GATHER, NULL, &j, err);
        const char **all = rc ? NULL : calloc((size_t)b->size, sizeof *all);
        if (!rc)
            rc = all ? tp_boot_parse_all(&b->conn[0], j, b->size, all, err)
                     : tp_error_set(err, TP_ENOMEM, "allgather");
        for (int r = 0; !rc && r < b->size; r++) {
            if (!all[r]) {
                b->gone[r] = true;
                continue;
            }
            if (!(res[r] = strdup(all[r])))
                rc = tp_error_set(err, TP_ENOMEM, "allgather");
        }
        free(all);
        if (rc)
            tp_error_prefix(err, "rank %d: allgather through rank 0 on %s", b->rank,
                            tp__boot_host(b, 0));
    } else {
        json_t *arr = json_array();
        json_array_append_new(arr, json_string(mine));
        res[0] = strdup(mine);
        uint64_t deadline = tp_now_ns() + b->timeout_ns;
        for (int r = 1; r < b->size && !rc; r++) {
            json_t *m = NULL;
            const char *s;
            if (!b->gone[r] &&
                ((rc = read_part(b, r, deadline, &m, err)) ||
                 (rc = tp_boot_parse_data(&b->conn[r], m, TP_BOOT_MAX_BLOB, &s, NULL, err))))
                rc = lose(b, r, err);
            if (!rc && b->gone[r]) {
                json_array_append_new(arr, json_null());
            } else if (!rc) {
                res[r] = strdup(s);
                json_array_append_new(arr, json_string(s));
            }
            json_decref(m);
        }
        if (rc) {
            tell_all(b, err);
        } else {
            j = json_pack("{s:O}", "all", arr);
            char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
            rc = text ? 0 : tp_error_set(err, TP_ENOMEM, "allgather");
            for (int r = 1; r < b->size && !rc; r++)
                if (!b->gone[r] && (rc = send_text(&b->conn[r], TP_F_GATHER, text, err)))
                    rc = lose(b, r, err);
            free(text);
        }
        json_decref(arr);
    }
    json_decref(j);
    return rc;
}

/* Rank 0 lets TP_BOOT_GATHER_WINDOW ranks send at a time: a GATHER frame
 * (its body unread) tells a rank to start, so at most that many ranks' data
 * waits in rank 0's socket buffers, whatever the group's size. */
static int send_go(struct tp_boot *b, int r, tp_error *err)
{
    json_t *m = json_pack("{s:b}", "go", 1);
    int rc = m ? tp_wire_send(&b->conn[r], TP_F_GATHER, m, err)
               : tp_error_set(err, TP_ENOMEM, "gather");
    json_decref(m);
    return rc;
}

/* Rank 0 tells rank r (when it is there and not gone) to send. */
static int go_to(struct tp_boot *b, int r, tp_error *err)
{
    if (r >= b->size || b->gone[r])
        return 0;
    int rc = send_go(b, r, err);
    return rc ? lose(b, r, err) : 0;
}

int tp__boot_star_gather(struct tp_boot *b, const char *mine, tp_boot_each_fn fn, void *ctx,
                         tp_error *err)
{
    int rc = 0;
    if (b->rank != 0) {
        json_t *go = NULL;
        if ((rc = tp_wire_expect(&b->conn[0], TP_F_GATHER, &go, err)) == 0)
            rc = send_text(&b->conn[0], TP_F_GATHER, mine, err);
        json_decref(go);
        if (rc)
            tp_error_prefix(err, "rank %d: gather to rank 0 on %s", b->rank, tp__boot_host(b, 0));
        return rc;
    }
    /* what fn said first, kept apart: the gather goes on, so every rank
     * still ends it together */
    tp_error ferr = {0};
    int frc = fn(ctx, 0, mine, &ferr);
    for (int r = 1; r <= TP_BOOT_GATHER_WINDOW && !rc; r++)
        rc = go_to(b, r, err);
    for (int r = 1; r < b->size && !rc; r++) {
        char *s = NULL;
        if (!b->gone[r] && (rc = recv_text(&b->conn[r], TP_F_GATHER, NULL, &s, err)))
            rc = lose(b, r, err);
        if (!rc)
            rc = go_to(b, r + TP_BOOT_GATHER_WINDOW, err);
        if (!rc && !frc)
            frc = fn(ctx, r, b->gone[r] ? NULL : s, &ferr);
        free(s);
    }
    if (rc) {
        tell_all(b, err);
        return rc;
    }
    if (frc)
        *err = ferr;
    return frc;
}

/* Rank 0 sends each rank its part, one at a time (send_text: a long part
 * in several frames); a rank it cannot reach is lost. */
int tp__boot_star_scatter(struct tp_boot *b, char *const *parts, char **mine, tp_error *err)
{
    int rc = 0;
    if (b->rank != 0) {
        if ((rc = recv_text(&b->conn[0], TP_F_GATHER, NULL, mine, err)))
            tp_error_prefix(err, "rank %d: scatter from rank 0 on %s", b->rank,
                            tp__boot_host(b, 0));
        return rc;
    }
    for (int r = 1; r < b->size && !rc; r++)
        if (!b->gone[r] && (rc = send_text(&b->conn[r], TP_F_GATHER, parts[r] ? parts[r] : "", err)))
            rc = lose(b, r, err);
    if (rc) {
        tell_all(b, err);
        return rc;
    }
    *mine = strdup(parts[0] ? parts[0] : "");
    return *mine ? 0 : tp_error_set(err, TP_ENOMEM, "scatter");
}

/* A barrier: every rank sends an empty part; rank 0, once all arrived (or
 * were left out), answers each with the ranks left out so far. */
int tp__boot_star_barrier(struct tp_boot *b, tp_error *err)
{
    int rc = 0;
    json_t *m = NULL;
    if (b->rank != 0) {
        json_t *e = json_pack("{s:s}", "data", "");
        rc = e ? tp_wire_send(&b->conn[0], TP_F_GATHER, e, err)
               : tp_error_set(err, TP_ENOMEM, "barrier");
        json_decref(e);
        if (!rc && !(rc = tp_wire_expect(&b->conn[0], TP_F_GATHER, &m, err)))
            rc = tp_boot_parse_gone(&b->conn[0], m, b->size, b->gone, err);
        json_decref(m);
        if (rc)
            tp_error_prefix(err, "rank %d: barrier through rank 0 on %s", b->rank,
                            tp__boot_host(b, 0));
        return rc;
    }
    uint64_t deadline = tp_now_ns() + b->timeout_ns;
    for (int r = 1; r < b->size && !rc; r++) {
        const char *s;
        if (!b->gone[r] &&
            ((rc = read_part(b, r, deadline, &m, err)) ||
             (rc = tp_boot_parse_data(&b->conn[r], m, TP_BOOT_MAX_BLOB, &s, NULL, err))))
            rc = lose(b, r, err);
        json_decref(m);
        m = NULL;
    }
    json_t *gone = json_array();
    for (int r = 1; r < b->size && gone; r++)
        if (b->gone[r])
            json_array_append_new(gone, json_integer(r));
    json_t *answer = gone ? json_pack("{s:o}", "gone", gone) : NULL;
    if (!rc && !answer)
        rc = tp_error_set(err, TP_ENOMEM, "barrier");
    for (int r = 1; r < b->size && !rc; r++)
        if (!b->gone[r] && (rc = tp_wire_send(&b->conn[r], TP_F_GATHER, answer, err)))
            rc = lose(b, r, err);
    json_decref(answer);
    if (rc)
        tell_all(b, err);
    return rc;
}

void tp__boot_star_set_timeout(struct tp_boot *b, uint64_t ns)
{
    uint64_t mine = b->rank == 0 ? ns : 2 * ns;
    b->timeout_ns = mine;
    for (int r = 0; b->conn && r < (b->rank == 0 ? b->size : 1); r++)
        b->conn[r].timeout_ns = mine;
}

int tp__boot_star_fini(struct tp_boot *b)
{
    tp__boot_free(b);
    return 0;
}
