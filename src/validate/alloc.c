/* validate across an allocation: one process per node, started by mpirun,
 * srun or torchrun, joined by the boot layer.
 *
 *   0. the nodes meet: labels, addresses, the session key, the ports;
 *   1. every node runs its own tests at once (check, coll and step over its
 *      local ranks, io on its local storage): nodes do not share them;
 *   2. the links: the rounds the tier's triage plans (tiered.c), each
 *      node in at most one test per round, so the round's tests run at
 *      once and none shares a node (full: every pair by the circle
 *      method, n/2 pairs a round);
 *   3. rank 0 gathers every node's documents, one node at a time
 *      (tp_boot_gather_each: the data crosses once, and rank 0 holds one
 *      node's at a time), and writes the results folder (collect.c).
 *
 * With links to measure, steps 1 to 3 go over a control path that bounds
 * each stage and leaves a node lost in it out (control.c): the others go
 * on to the end and the lost node's verdict names the stage it reached.
 * Otherwise, and while the nodes meet, failures are collective: a node
 * that cannot start says so to all, and every node stops with its name,
 * rather than leaving the others waiting. */
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tp/intr.h"
#include "tp/judge.h"
#include "tp/wire.h"
#include "tp/log.h"
#include "validate_int.h"


/* The IPv4 address of iface; or, without one, of the interface of the
 * default route, else the first one up that is not loopback, else
 * loopback (a group on one host). */
static int pick_addr(const char *iface, char *out, size_t cap, tp_error *err)
{
    char route_if[IF_NAMESIZE + 1] = "";
    if (!iface) {
        FILE *f = fopen("/proc/net/route", "r");
        char line[256], name[IF_NAMESIZE + 1];
        unsigned long dest;
        while (f && fgets(line, sizeof line, f))
            if (sscanf(line, "%16s %lx", name, &dest) == 2 && dest == 0) {
                snprintf(route_if, sizeof route_if, "%s", name);
                break;
            }
        if (f)
            fclose(f);
    }
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) < 0)
        return tp_error_errno(err, TP_ESYS, errno, "getifaddrs");
    const struct ifaddrs *best = NULL;
    for (const struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP))
            continue;
        if (iface) {
            if (strcmp(i->ifa_name, iface) == 0) {
                best = i;
                break;
            }
        } else if (route_if[0] && strcmp(i->ifa_name, route_if) == 0) {
            best = i;
            break;
        } else if (!best && !(i->ifa_flags & IFF_LOOPBACK)) {
            best = i;
        }
    }
    int rc = 0;
    if (best)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)best->ifa_addr)->sin_addr, out,
                  (socklen_t)cap);
    else if (iface)
        rc = tp_error_set(err, TP_EUSAGE, "--iface %s: no IPv4 address up on this node", iface);
    else
        snprintf(out, cap, "127.0.0.1");
    freeifaddrs(ifs);
    return rc;
}

/* The session key of the net servers: rank 0 draws it, so no server takes
 * a stranger. Every node keeps it in memory alone: a memfd (0600) that its
 * children inherit and read as /proc/self/fd/N, never a file on a disk, so
 * that nothing of it outlives the run, even one that is killed (SIGKILL:
 * the memory goes with the last process holding it, and the children end
 * with validate, die_with_parent). */
static int share_key(struct tp__validate_ctx *c, struct tp_boot *b, tp_error *err)
{
    char hex[65] = "";
    if (tp_boot_rank(b) == 0) {
        unsigned char k[32];
        if (getrandom(k, sizeof k, 0) != (ssize_t)sizeof k)
            return tp_error_errno(err, TP_ESYS, errno, "getrandom");
        for (size_t i = 0; i < sizeof k; i++)
            snprintf(hex + 2 * i, 3, "%02x", k[i]);
    }
    char *key = NULL; /* rank 0's, to every node */
    int rc = tp_boot_bcast(b, hex, &key, err);
    if (rc)
        return rc;
    /* not close-on-exec: the servers and tests this node starts read it */
    int fd = memfd_create("trainpath-net-key", 0);
    if (fd >= 0 && fchmod(fd, 0600) < 0) {
        close(fd);
        fd = -1;
    }
    c->keyfd = fd;
    snprintf(c->keyfile, sizeof c->keyfile, "/proc/self/fd/%d", fd);
    size_t len = strlen(key);
    /* the tier's draws, the same on every node: from the key unless --seed */
    if (!c->seed) {
        uint64_t h = 1469598103934665603ull;
        for (size_t i = 0; i < len; i++)
            h = (h ^ (unsigned char)key[i]) * 1099511628211ull;
        c->seed = h ? h : 1;
    }
    if (fd < 0 || pwrite(fd, key, len, 0) != (ssize_t)len)
        rc = tp_error_errno(err, TP_ESYS, errno, "the session key in memory (memfd)");
    explicit_bzero(key, len);
    free(key);
    return rc;
}

/* The records rank 0 tells the others as the meeting ends (roster.c):
 * its own to every node, every node's to the deputy (the lowest rank
 * after 0 that met the others: *deputy on rank 0; on the deputy its own
 * rank, 0 elsewhere); rc, rank 0's outcome of the meeting so far, is every
 * node's. */
static int tell_records(struct tp_boot *b, struct tp__validate_node *nodes, int *deputy, int rc,
                        tp_error *err)
{
    int n = tp_boot_size(b), me = tp_boot_rank(b);
    char **parts = NULL, *mine = NULL, *zero = NULL, *all = NULL;
    size_t len = 0;
    if (me == 0 && rc == 0) {
        *deputy = 0;
        for (int r = 1; r < n && !*deputy; r++)
            *deputy = nodes[r].missing ? 0 : r;
        FILE *f = open_memstream(&zero, &len);
        if (f) {
            tp__validate_roster_line(f, nodes, 0, true);
            fclose(f);
        }
        if ((f = open_memstream(&all, &len))) {
            for (int r = 0; r < n; r++)
                tp__validate_roster_line(f, nodes, r, true);
            fclose(f);
        }
        if ((parts = zero && all ? calloc((size_t)n, sizeof *parts) : NULL))
            for (int r = 0; r < n; r++)
                parts[r] = r == *deputy ? all : zero;
        rc = parts ? 0 : tp_error_set(err, TP_ENOMEM, "out of memory");
    }
    if ((rc = tp__validate_follow(b, rc, err)) == 0 &&
        (rc = tp_boot_scatter(b, parts, &mine, err)) == 0 && me != 0) {
        int k = 0;
        rc = tp__validate_roster_read(mine, nodes, n, &k, err);
        *deputy = k > 1 ? me : 0; /* every node's: this one is the deputy */
    }
    free(parts);
    free(zero);
    free(all);
    free(mine);
    return rc;
}

/* The nodes: labels, then the net servers' addresses. Rank 0 names every
 * node and learns every address; each node learns its own label and rank
 * 0's record, the deputy every record (roster.c): O(N) bytes in all. */
static int meet(struct tp__validate_ctx *c, struct tp_boot *b, struct tp__validate_node *nodes, bool net,
                int *deputy, tp_error *err)
{
    int n = tp_boot_size(b), me = tp_boot_rank(b), rc = 0;
    *deputy = 0;
    for (int r = 0; r < n; r++)
        nodes[r].missing = tp_boot_gone(b, r); /* the group formed without it */
    char **labels = NULL, *label = NULL;
    if (me == 0 && (rc = tp__validate_label_all(b, nodes, err)) == 0 &&
        (labels = calloc((size_t)n, sizeof *labels)))
        for (int r = 0; r < n; r++)
            labels[r] = nodes[r].label;
    if (me == 0 && !rc && !labels)
        rc = tp_error_set(err, TP_ENOMEM, "out of memory");
    /* each node its own label */
    if ((rc = tp__validate_follow(b, rc, err)) == 0 &&
        (rc = tp_boot_scatter(b, labels, &label, err)) == 0)
        snprintf(nodes[me].label, sizeof nodes[me].label, "%s", label);
    free(labels);
    free(label);
    if (rc)
        return rc;
    char mydir[TP__VALIDATE_PATH_MAX];
    tp__validate_path(mydir, sizeof mydir, "%s/nodes/%s", c->outdir, nodes[me].label);
    rc = tp__validate_mkdirs(mydir) < 0 ? tp_error_errno(err, TP_ESYS, errno, "%s", mydir) : 0;
    if (net) {
        if (!rc)
            rc = pick_addr(c->iface, c->addr, sizeof c->addr, err);
        if ((rc = tp__validate_agree(b, rc, TP_ESYS, false, err)))
            return rc;
        if ((rc = share_key(c, b, err)) == 0)
            rc = tp__validate_start_server(c, mydir, err);
    }
    if ((rc = tp__validate_agree(b, rc, TP_ESYS, false, err)))
        return rc;
    if (!net)
        return 0;
    /* the port this node leads a collective across nodes on (the tiers'
     * gang and groups): free now, taken again by the collective's rank 0
     * (its listener reuses the address) */
    int lfd = -1, cport = 0, tport = 0;
    if ((rc = tp_listen(c->addr, 0, "the collective's port", &lfd, &cport, NULL, err)) == 0)
        close(lfd);
    /* rank 0: where the tier's rounds meet as a star when the launcher's
     * own operations cannot be bounded (MPI), likewise free until then */
    if (rc == 0 && tp_boot_rank(b) == 0 &&
        (rc = tp_listen(c->addr, 0, "the tier's control port", &lfd, &tport, NULL, err)) == 0)
        close(lfd);
    if ((rc = tp__validate_agree(b, rc, TP_ESYS, false, err)))
        return rc;
    /* its name to Slurm, for --on-fail drain */
    const char *sched = getenv("SLURMD_NODENAME");
    char mine[512], **all = NULL;
    snprintf(mine, sizeof mine, "%s %s %d %d %.127s", c->addr, c->port, cport, tport,
             sched && *sched && !strpbrk(sched, " \t\n") ? sched : "-");
    if ((rc = tp_boot_gather(b, mine, &all, err)))
        return rc;
    for (int r = 0; r < n; r++) { /* every node's on rank 0, its own elsewhere */
        const char *rec = r == me ? mine : all ? all[r] : NULL;
        if (me == 0 && !rec) { /* left out while the nodes met: it never joined them */
            nodes[r].missing = true;
            snprintf(nodes[r].port, sizeof nodes[r].port, "0");
            continue;
        }
        if (!rec)
            continue;
        if (sscanf(rec, "%63s %15s %15s %15s %127s", nodes[r].addr, nodes[r].port,
                   nodes[r].cport, nodes[r].tport, nodes[r].sched) != 5 && !rc)
            rc = tp_error_set(err, TP_EPROTO, "node %s sent no address", nodes[r].label);
        if (strcmp(nodes[r].sched, "-") == 0)
            nodes[r].sched[0] = 0;
    }
    if (all)
        tp_boot_free_strings(all, n);
    return tell_records(b, nodes, deputy, rc, err);
}

/* Step 1: this node's own tests. */
static void node_tests(struct tp__validate_ctx *c, struct tp_boot *b, const struct tp__validate_node *nodes,
                       json_t *tests)
{
    int me = tp_boot_rank(b);
    char dir[TP__VALIDATE_PATH_MAX];
    tp__validate_path(dir, sizeof dir, "%s/nodes/%s", c->outdir, nodes[me].label);
    int total = 0, done = 0;
    for (int i = 0; i < c->tests.n; i++)
        total += tp__validate_own(&c->tests.t[i]);
    for (int i = 0; i < c->tests.n; i++) {
        struct tp_validate_test *t = &c->tests.t[i];
        if (!tp__validate_own(t))
            continue;
        double left = 0; /* the plan after the gather counted in */
        for (int k = i; k < c->tests.n; k++)
            left += tp__validate_between(&c->tests.t[k]) ? 0 : c->tests.t[k].expect_s;
        if (me == 0)
            tp__validate_progress(c, done, total, t->what, left);
        enum tp__validate_status st = tp__validate_run_test(c, t, dir, NULL, NULL);
        char doc[TP__VALIDATE_PATH_MAX];
        tp__validate_path(doc, sizeof doc, "%s/%s.json", dir, t->name);
        json_array_append_new(tests, tp__validate_ran(t, st, doc));
        done++;
    }
}

/* Every node's own tests, and the barrier that ends them: lost[r] for a
 * node lost in them. */
static int local_stage(struct tp__validate_ctx *c, struct tp_boot *b, struct tp_boot *ctl,
                       const struct tp__validate_node *nodes, json_t *tests, bool *lost,
                       tp_error *err)
{
    node_tests(c, b, nodes, tests);
    return tp__validate_stage_barrier(ctl, lost, err);
}

/* Rank 0 takes each node's result in as it arrives, one at a time: up the
 * launcher's tree under MPI while every node is there (the barrier
 * before it says so, on every node alike), else over the control path,
 * which leaves out a node lost in the gather (its result: NULL, never
 * taken in). */
static int gather_stage(struct tp_boot *b, struct tp_boot *ctl, const char *mine,
                        struct tp__validate_collect *col, bool *lost, tp_error *err)
{
    int n = tp_boot_size(b), rc = tp__validate_stage_barrier(ctl, lost, err);
    bool any = false;
    for (int r = 0; r < n; r++)
        any |= lost[r];
    if (rc == 0)
        rc = tp_boot_gather_each(any ? ctl : b, mine, tp__validate_collect_node, col, err);
    for (int r = 0; r < n; r++) /* rank 0: who was lost by the end of it */
        lost[r] = tp_boot_gone(ctl, r);
    return rc;
}

/* Rank 0, the tier's stages stopped by err (an interrupt: Ctrl-C, or the
 * launcher ending the job at its time limit; a failure of its own): the
 * fleet document and the verdict lines all the same, from what it has
 * (col: the results gathered so far, or NULL: its own alone, own), the
 * nodes not validated to the end saying where it stopped and why. */
static void stopped(struct tp__validate_ctx *c, struct tp_boot *b, struct tp_boot *ctl,
                    const struct tp__validate_node *nodes, tp_triage *tri,
                    struct tp__validate_collect *col, json_t *own, const tp_error *err)
{
    int n = tp_boot_size(b);
    json_t *triage = tp__validate_triage_stopped(c, tri, b, ctl, err);
    bool mine = !col;
    if (mine && (col = tp__validate_collect_new(c, nodes, n)))
        tp__validate_collect_add(col, tp_boot_rank(b), json_incref(own));
    if (col && triage)
        tp__validate_collect_finish(col, triage, err);
    if (mine)
        tp__validate_collect_free(col);
    json_decref(triage);
}

/* The deputy, rank 0 gone from its control connection: whether rank 0
 * wrote the fleet document all the same (it closed the connection as it
 * ended: a signal to every node, which reaches this one a moment later,
 * or a failure of its own it told too late for this node to read), so
 * that the deputy leaves it be. Where the results folder is shared rank
 * 0's fleet.json appears in it within a few seconds (this run's alone:
 * the folder was cleared of the earlier run's as the run began); a signal
 * of this node's own in that time means every node was stopped, which
 * rank 0 answers itself. Not shared: nothing appears, and the deputy
 * writes after the wait. */
static bool rank0_wrote(const struct tp__validate_ctx *c)
{
    char path[TP__VALIDATE_PATH_MAX];
    tp__validate_path(path, sizeof path, "%s/fleet.json", c->outdir);
    for (int i = 0; i < 30; i++) {
        if (access(path, F_OK) == 0 || tp_intr_signal())
            return true;
        usleep(100000);
    }
    return access(path, F_OK) == 0;
}

int tp__validate_alloc(struct tp__validate_ctx *c, struct tp_boot *b)
{
    tp_error err = {0};
    int n = tp_boot_size(b), me = tp_boot_rank(b);
    struct tp__validate_node *nodes = calloc((size_t)n, sizeof *nodes);
    bool *lost = calloc((size_t)n, sizeof *lost);
    if (!nodes || !lost) {
        free(nodes);
        free(lost);
        tp_error_set(&err, TP_ENOMEM, "out of memory");
        return tp__validate_fail(&err);
    }
    bool net = tp__validate_any_between(c);
    c->t0 = tp__validate_now_s();
    int deputy0 = 0; /* the deputy the meeting made */
    int rc = meet(c, b, nodes, net, &deputy0, &err);
    /* with links to measure, every stage from here on is bounded and goes
     * on without a node lost in it (control.c), and the tier's triage
     * judges; without, the nodes' own tests and the gather over the group
     * as it is (validate.c asked it to leave nobody out) */
    struct tp_boot *ctl = b;
    tp_triage *tri = NULL;
    struct tp__validate_rounds *rs = NULL;
    /* the triage: rank 0's, and its deputy's, which has every node's
     * record (a later deputy makes its own when it gets them, rounds.c);
     * rank 0's outcome is every node's (a node the topology lacks: exit 2
     * on all) */
    if (rc == 0 && net && (rc = tp__validate_control_open(c, b, nodes, &ctl, &err)) == 0) {
        if (me == 0 || deputy0 == me)
            rc = tp__validate_triage_new(c, nodes, n, me, &tri, &err);
        if ((rc = tp__validate_follow(b, rc, &err)) == 0 &&
            !(rs = tp__validate_rounds_new(c, nodes, n, me, deputy0)))
            rc = tp_error_set(&err, TP_ENOMEM, "out of memory");
    }
    json_t *tests = json_array(), *pairs = json_array(), *groups = json_array(), *triage = NULL;
    if (rc == 0) {
        if (net)
            tp__validate_control_stage(c, ctl, TP__VALIDATE_LOCAL);
        rc = local_stage(c, b, ctl, nodes, tests, lost, &err);
        if (rc == 0 && net && tri)
            rc = tp__validate_lose(tri, n, TP__VALIDATE_LOCAL, lost, &err);
        if (rc == 0 && net) /* for a later deputy's triage */
            rc = tp__validate_rounds_local_lost(rs, lost, &err);
    }
    /* the links: the rounds of the tier's triage */
    if (rc == 0 && net) {
        tp__validate_control_stage(c, ctl, TP__VALIDATE_ROUNDS);
        rc = tp__validate_triage(c, ctl, nodes, tri, rs, pairs, groups, &err);
    }
    if (me == 0)
        tp__validate_progress_clear(c);
    char *mine = NULL;
    struct tp__validate_collect *col = NULL;
    if (me == 0 && rc == 0 && !(col = tp__validate_collect_new(c, nodes, n)))
        rc = tp_error_set(&err, TP_ENOMEM, "out of memory");
    if (rc == 0) {
        json_t *o = json_pack("{s:s, s:s, s:s, s:O, s:O, s:O}", "label", nodes[me].label, "host",
                              tp_boot_host(b, me), "addr", c->addr[0] ? c->addr : "", "tests",
                              tests, "pairs", pairs, "groups", groups);
        mine = o ? json_dumps(o, JSON_COMPACT) : NULL;
        json_decref(o);
        if (!mine)
            rc = tp_error_set(&err, TP_ENOMEM, "out of memory");
        else if (net)
            tp__validate_control_stage(c, ctl, TP__VALIDATE_GATHER);
        if (rc == 0)
            rc = gather_stage(b, ctl, mine, col, lost, &err);
    }
    if (rc == 0 && net && me == 0 &&
        ((rc = tp__validate_lose(tri, n, TP__VALIDATE_GATHER, lost, &err)) ||
         (rc = tp__validate_link_errors(tri, tp__validate_collect_gathered(col), nodes, n, &err)) ||
         !(triage = tp__validate_triage_result(tri, b, ctl, &err))))
        rc = rc ? rc : err.code ? err.code : tp_error_set(&err, TP_ENOMEM, "out of memory");
    if (triage) /* what the rounds' control cost rank 0 on the wire */
        json_object_set_new(triage, "control", tp__validate_rounds_bytes(rs));
    int status = 0;
    /* after a collective failed, no more of them: every node stops */
    bool broken = rc != 0;
    int end_rc = rc;
    if (rc == 0 && me == 0)
        rc = tp__validate_collect_error(col, &err);
    if (me == 0)
        tp__validate_progress_clear(c);
    tp__validate_stop_server(c);
    if (rc) {
        if (me == 0 && broken && net) /* the others: rank 0 failed, it was not lost */
            tp_boot_tell(ctl, &err);
        status = tp__validate_fail(&err);
        if (!tri && rs) /* a later deputy's, made as it took over */
            tri = tp__validate_rounds_take_triage(rs);
        /* rank 0 writes the fleet document of a run that stopped; when
         * rank 0 itself was lost, its deputy does, from the rounds rank 0
         * recorded (rounds.c), rank 0 named lost where it was */
        bool deputy = me != 0 && tri && broken && net && tp__validate_rounds_deputy(rs) &&
                      tp_boot_lead_lost(ctl, &err) && !rank0_wrote(c);
        if (deputy) {
            bool *zero = calloc((size_t)n, sizeof *zero);
            tp_error spare;
            if (zero && c->stage >= 0) {
                zero[0] = true;
                tp__validate_lose(tri, n, (enum tp__validate_stage)c->stage, zero, &spare);
            }
            free(zero);
            tp_log(TP_LOG_WARN, "rank 0 lost: rank %d, its deputy, writes the fleet document", me);
            tp_error_prefix(&err, "rank 0 lost (the fleet document is its deputy's, rank %d)", me);
        }
        if ((me == 0 || deputy) && tri && broken) {
            json_t *own = json_pack("{s:s, s:s, s:s, s:O, s:O, s:O}", "label", nodes[me].label,
                                    "host", tp_boot_host(b, me), "addr", c->addr, "tests", tests,
                                    "pairs", pairs, "groups", groups);
            stopped(c, b, ctl, nodes, tri, col, own, &err);
            json_decref(own);
        }
    } else if (me == 0) {
        status = tp__validate_collect_finish(col, triage, NULL);
    }
    tp__validate_collect_free(col);
    /* rank 0 judged the allocation: every node exits with its verdict, so
     * mpirun and srun report it whichever rank they read, and no node
     * leaves (making the launcher end the job) before rank 0 is done */
    if (!broken) {
        char word[16], *st = NULL, **words = me == 0 ? calloc((size_t)n, sizeof *words) : NULL;
        snprintf(word, sizeof word, "%d", status);
        for (int r = 0; words && r < n; r++)
            words[r] = word;
        if ((me != 0 || words) && tp_boot_scatter(ctl, words, &st, &err) == 0) {
            status = atoi(st);
            free(st);
            c->done = true;
        } else {
            if (me == 0 && !words)
                tp_error_set(&err, TP_ENOMEM, "out of memory");
            end_rc = err.code;
            status = tp__validate_fail(&err);
        }
    }
    if (net)
        tp__validate_control_close(c, b, ctl, end_rc);
    if (c->keyfd >= 0) /* the session key: gone with the last child holding it */
        close(c->keyfd);
    c->keyfd = -1;
    c->keyfile[0] = 0;
    tp_triage_free(tri);
    tp__validate_rounds_free(rs);
    free(mine);
    json_decref(tests);
    json_decref(pairs);
    json_decref(groups);
    json_decref(triage);
    free(nodes);
    free(lost);
    return status;
}
