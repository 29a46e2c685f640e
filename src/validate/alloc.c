/* validate across an allocation: one process per node, started by mpirun,
 * srun or torchrun, joined by the boot layer.
 *
 *   1. every node runs its own tests at once (check, coll and step over its
 *      local ranks, io on its local storage): nodes do not share them;
 *   2. the pairs: tp_fleet_partner's rounds, each node in at most one pair
 *      per round, so n/2 measurements run at once and none shares a node;
 *      in a pair the lower rank measures against the other's net server,
 *      then the bandwidth tests the other way (a link can be slow one way);
 *   3. rank 0 gathers every document (tp_boot_gather: the data crosses once)
 *      and writes the results folder: nodes/NODE/, pairs/A--B/, fleet.jsonl
 *      (one line per node and test, one per pair measurement: the input of
 *      `report fleet`), fleet.json (the judgement), the plan, the history
 *      and the report.
 *
 * Failures are collective: a node that cannot start says so to all, and
 * every node stops with its name, rather than leaving the others waiting. */
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "tp/atomicfile.h"
#include "tp/judge.h"
#include "tp/log.h"
#include "tp/report.h"
#include "tp/result.h"
#include "tp/wire.h"
#include "validate_int.h"


/* Every rank says whether it is fine (rc, err); when one is not, all fail
 * with its words. */
static int agree(struct tp_boot *b, int rc, tp_error *err)
{
    char **all = NULL;
    char mine[600] = "";
    if (rc)
        snprintf(mine, sizeof mine, "%.590s", err->msg[0] ? err->msg : "failed");
    int grc = tp_boot_allgather(b, mine, &all, err);
    if (grc)
        return grc;
    for (int r = 0; r < tp_boot_size(b); r++)
        if (all[r][0]) {
            char msg[700];
            snprintf(msg, sizeof msg, "%s", all[r]);
            tp_error_set(err, TP_ESYS, "node %s (rank %d): %s", tp_boot_host(b, r), r, msg);
            rc = err->code;
            break;
        }
    tp_boot_free_strings(all, tp_boot_size(b));
    return rc;
}

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

/* The session key of the net servers: rank 0 draws it, every node keeps it
 * in its scratch folder (0600), so no server takes a stranger. */
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
    char **all = NULL;
    int rc = tp_boot_allgather(b, hex, &all, err);
    if (rc)
        return rc;
    snprintf(c->keyfile, sizeof c->keyfile, "%s/net.key", c->dir);
    int fd = open(c->keyfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    size_t len = strlen(all[0]);
    /* the tier's draws, the same on every node: from the key unless --seed */
    if (!c->seed) {
        uint64_t h = 1469598103934665603ull;
        for (size_t i = 0; i < len; i++)
            h = (h ^ (unsigned char)all[0][i]) * 1099511628211ull;
        c->seed = h ? h : 1;
    }
    if (fd < 0 || write(fd, all[0], len) != (ssize_t)len)
        rc = tp_error_errno(err, TP_ESYS, errno, "%s", c->keyfile);
    if (fd >= 0)
        close(fd);
    tp_boot_free_strings(all, tp_boot_size(b));
    return rc;
}

/* A label as a path component: only [A-Za-z0-9._#-]. */
static void path_safe(char *s)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '.' || *s == '_' || *s == '#' || *s == '-'))
            *s = '_';
}

/* The nodes: labels, then the net servers' addresses. */
static int meet(struct tp__validate_ctx *c, struct tp_boot *b, struct tp__validate_node *nodes, bool net,
                tp_error *err)
{
    int n = tp_boot_size(b), me = tp_boot_rank(b);
    for (int r = 0; r < n; r++) {
        bool shared = false;
        for (int k = 0; k < n; k++)
            shared |= k != r && strcmp(tp_boot_host(b, k), tp_boot_host(b, r)) == 0;
        if (shared)
            snprintf(nodes[r].label, sizeof nodes[r].label, "%.200s#%d", tp_boot_host(b, r), r);
        else
            snprintf(nodes[r].label, sizeof nodes[r].label, "%.200s", tp_boot_host(b, r));
        path_safe(nodes[r].label);
    }
    char mydir[4400];
    snprintf(mydir, sizeof mydir, "%s/nodes/%s", c->outdir, nodes[me].label);
    int rc = tp__validate_mkdirs(mydir) < 0 ? tp_error_errno(err, TP_ESYS, errno, "%s", mydir) : 0;
    if (net) {
        if (!rc)
            rc = pick_addr(c->iface, c->addr, sizeof c->addr, err);
        if ((rc = agree(b, rc, err)))
            return rc;
        if ((rc = share_key(c, b, err)) == 0)
            rc = tp__validate_start_server(c, mydir, err);
    }
    if ((rc = agree(b, rc, err)))
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
    if ((rc = agree(b, rc, err)))
        return rc;
    /* its name to Slurm, for --on-fail drain */
    const char *sched = getenv("SLURMD_NODENAME");
    char mine[512], **all = NULL;
    snprintf(mine, sizeof mine, "%s %s %d %d %.127s", c->addr, c->port, cport, tport,
             sched && *sched && !strpbrk(sched, " \t\n") ? sched : "-");
    if ((rc = tp_boot_allgather(b, mine, &all, err)))
        return rc;
    for (int r = 0; r < n; r++) {
        if (sscanf(all[r], "%63s %15s %15s %15s %127s", nodes[r].addr, nodes[r].port,
                   nodes[r].cport, nodes[r].tport, nodes[r].sched) != 5)
            rc = tp_error_set(err, TP_EPROTO, "node %s sent no address", nodes[r].label);
        if (strcmp(nodes[r].sched, "-") == 0)
            nodes[r].sched[0] = 0;
    }
    tp_boot_free_strings(all, n);
    return rc;
}


/* Step 1: this node's own tests. */
static void node_tests(struct tp__validate_ctx *c, struct tp_boot *b, const struct tp__validate_node *nodes,
                       json_t *tests)
{
    int me = tp_boot_rank(b);
    char dir[4400];
    snprintf(dir, sizeof dir, "%s/nodes/%s", c->outdir, nodes[me].label);
    int total = 0, done = 0;
    for (int i = 0; i < c->tests.n; i++) {
        const char *g = c->tests.t[i].group;
        total += strcmp(g, "net") != 0 && strcmp(g, "plan") != 0;
    }
    for (int i = 0; i < c->tests.n; i++) {
        struct tp_validate_test *t = &c->tests.t[i];
        if (strcmp(t->group, "net") == 0 || strcmp(t->group, "plan") == 0)
            continue;
        double left = 0;
        for (int k = i; k < c->tests.n; k++)
            left += strcmp(c->tests.t[k].group, "net") ? c->tests.t[k].expect_s : 0;
        if (me == 0)
            tp__validate_progress(c, done, total, t->what, left);
        const char *st = tp__validate_run_test(c, t, dir, NULL, NULL);
        char doc[4600];
        snprintf(doc, sizeof doc, "%s/%s.json", dir, t->name);
        json_array_append_new(tests, tp__validate_ran(t, st, doc));
        done++;
    }
}

/* Step 2: the pairs, round by round. */
static int pair_rounds(struct tp__validate_ctx *c, struct tp_boot *b, const struct tp__validate_node *nodes,
                       json_t *pairs, tp_error *err)
{
    int n = tp_boot_size(b), me = tp_boot_rank(b), rounds = tp_fleet_rounds(n);
    double per_round = 0;
    for (int i = 0; i < c->tests.n; i++)
        if (strcmp(c->tests.t[i].group, "net") == 0 && !c->tests.t[i].across)
            per_round += c->tests.t[i].expect_s * (c->tests.t[i].directional ? 2 : 1);
    for (int r = 0; r < rounds; r++) {
        int p = tp_fleet_partner(n, r, me), in_round = 0, mine = 0;
        /* the round's pairs in the order of their lower rank; with
         * --pairs-at-once K they run K at a time, in slots */
        for (int i = 0; i < n; i++)
            if (tp_fleet_partner(n, r, i) > i) {
                if (p >= 0 && i < (me < p ? me : p))
                    mine++;
                in_round++;
            }
        int at_once = c->pairs_at_once > 0 ? c->pairs_at_once : in_round;
        int slots = (in_round + at_once - 1) / at_once;
        for (int slot = 0; slot < slots; slot++) {
            for (int way = 0; way < 2; way++) {
                /* way 0: the lower rank measures; way 1: the other, bandwidth */
                if (me == 0) {
                    char what[64];
                    snprintf(what, sizeof what, "pairs, round %d of %d", r + 1, rounds);
                    tp__validate_progress(c, r, rounds, what, per_round * (rounds - r));
                }
                bool mine_now = p >= 0 && mine / at_once == slot && (way == 0) == (me < p);
                for (int i = 0; mine_now && i < c->tests.n; i++) {
                    struct tp_validate_test *t = &c->tests.t[i];
                    if (strcmp(t->group, "net") != 0 || t->across ||
                        (way == 1 && !t->directional))
                        continue;
                    json_t *o = tp__validate_measure_pair(c, t, nodes, me, p, NULL);
                    json_object_set_new(o, "round", json_integer(r + 1));
                    json_array_append_new(pairs, o);
                }
                int rc = tp_boot_barrier(b, err);
                if (rc)
                    return rc;
            }
        }
    }
    return 0;
}

/* ---- rank 0: the results folder ---- */

static int write_doc(const char *dir, const char *name, const json_t *doc, tp_error *err)
{
    char path[4600];
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    if (tp__validate_mkdirs(dir) < 0)
        return tp_error_errno(err, TP_ESYS, errno, "%s", dir);
    return tp_result_write(doc, path, err);
}

/* Is row a pair metric worth judging: the medians and tails of latency and
 * the bandwidths (a maximum is one sample; counts are not health)? */
static bool pair_metric(const json_t *row)
{
    const char *m = json_string_value(json_object_get(row, "metric"));
    if (!m || json_is_null(json_object_get(row, "better")))
        return false;
    size_t n = strlen(m);
    return strcmp(m, "net.bw") == 0 || strcmp(m, "net.bibw") == 0 ||
           (strncmp(m, "net.", 4) == 0 &&
            ((n > 12 && strcmp(m + n - 12, ".latency.p50") == 0) ||
             (n > 12 && strcmp(m + n - 12, ".latency.p99") == 0)));
}

struct fleet_out {
    char *text; /* fleet.jsonl */
    size_t len;
    FILE *f;
    size_t lines;
    json_t *data; /* tp_fleet's */
    json_t *matrix; /* {key: {"unit", "better", "values": [[a, b, value]]}} */
};

static int fleet_line(struct fleet_out *fo, json_t *line, tp_error *err)
{
    char *s = json_dumps(line, JSON_COMPACT);
    json_decref(line);
    if (!s)
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    if (fo->f)
        fprintf(fo->f, "%s\n", s);
    fo->lines++;
    int rc = tp_fleet_add_line(fo->data, s, "fleet.jsonl", fo->lines, err);
    free(s);
    return rc;
}

/* The pairwise matrix the report draws: the median latency at the
 * smallest size, the bandwidth at the largest. */
static void matrix_add(json_t *matrix, const json_t *row, int a, int b)
{
    const char *m = json_string_value(json_object_get(row, "metric"));
    const char *size = json_string_value(json_object_get(json_object_get(row, "labels"), "size"));
    if (!m || !size || (strcmp(m, "net.bw") != 0 && strcmp(m, "net.lat.latency.p50") != 0))
        return;
    json_t *e = json_object_get(matrix, m);
    double sz = atof(size), have = json_number_value(json_object_get(e, "size"));
    bool lat = strcmp(m, "net.lat.latency.p50") == 0;
    if (!e || (lat ? sz < have : sz > have)) {
        e = json_pack("{s:f, s:s, s:O, s:[]}", "size", sz, "unit",
                      json_string_value(json_object_get(row, "unit")), "better",
                      json_object_get(row, "better"), "values");
        json_object_set_new(matrix, m, e);
    } else if (sz != have) {
        return;
    }
    json_array_append_new(json_object_get(e, "values"),
                          json_pack("[i, i, O]", a, b, json_object_get(row, "value")));
}

static int node_index(const struct tp__validate_node *nodes, int n, const char *label)
{
    for (int r = 0; r < n; r++)
        if (strcmp(nodes[r].label, label) == 0)
            return r;
    return -1;
}


/* The judged rows of one pair measurement e (its doc) as pair lines. */
static int pair_rows(struct fleet_out *fo, const json_t *e, const json_t *doc, bool retest,
                     const struct tp__validate_node *nodes, int n, tp_error *err)
{
    const char *a = json_string_value(json_object_get(e, "a"));
    const char *b = json_string_value(json_object_get(e, "b"));
    json_t *rows = tp_report_metrics(doc, err);
    if (!rows)
        return err->code;
    size_t q;
    json_t *row;
    int rc = 0;
    json_array_foreach(rows, q, row) {
        if (rc || !pair_metric(row))
            continue;
        json_t *line = json_pack("{s:s, s:s, s:O, s:O, s:O, s:O, s:O, s:O}", "a", a, "b", b,
                                 "round", json_object_get(e, "round"), "test",
                                 json_object_get(e, "test"), "metric", json_object_get(row, "key"),
                                 "value", json_object_get(row, "value"), "unit",
                                 json_object_get(row, "unit"), "better",
                                 json_object_get(row, "better"));
        if (line && retest)
            json_object_set_new(line, "retest", json_true());
        rc = fleet_line(fo, line, err);
        if (fo->matrix)
            matrix_add(fo->matrix, row, node_index(nodes, n, a), node_index(nodes, n, b));
    }
    json_decref(rows);
    return rc;
}

static const json_t *retest_of(const json_t *retests, const json_t *e)
{
    char key[1000];
    snprintf(key, sizeof key, "%s|%s|%s", json_string_value(json_object_get(e, "a")),
             json_string_value(json_object_get(e, "b")),
             json_string_value(json_object_get(e, "test")));
    return json_object_get(retests, key);
}

#define RETEST_MAX 32

/* One line of a retest plan, unless planned or measured again already, or
 * RETEST_MAX reached. */
static void plan_add(FILE *f, json_t *seen, const json_t *retests, const struct tp__validate_node *nodes,
                     int n, const char *a_label, const char *b_label, const char *test)
{
    int a = node_index(nodes, n, a_label), b = node_index(nodes, n, b_label);
    char key[64], done[1000];
    snprintf(key, sizeof key, "%d %d %s", a, b, test);
    snprintf(done, sizeof done, "%s|%s|%s", a_label, b_label, test);
    if (a < 0 || b < 0 || json_object_get(seen, key) || json_object_get(retests, done) ||
        json_object_size(seen) + json_object_size(retests) >= RETEST_MAX)
        return;
    json_object_set_new(seen, key, json_true());
    fprintf(f, "%s\n", key);
}

/* The links the measurements so far find slow (a second measurement in
 * place of the first), and the pairs of the nodes they find slow, that were
 * not measured again yet: lines "A B TEST" (node indices), RETEST_MAX in
 * all. A round runs n/2 pairs at once
 * and a link can share a switch, or here the CPUs, with the others: a link
 * is slow only when it is slow again by itself. */
static char *retest_plan(const json_t *gathered, const json_t *retests, const struct tp__validate_node *nodes,
                         int n)
{
    struct fleet_out fo = {.data = tp_fleet_new()};
    tp_error err;
    size_t r, k;
    const json_t *g, *e;
    json_array_foreach(gathered, r, g)
        json_array_foreach(json_object_get(g, "pairs"), k, e) {
            const json_t *doc = json_object_get(retest_of(retests, e), "doc");
            if (!json_is_object(doc))
                doc = json_object_get(e, "doc");
            if (json_is_object(doc))
                pair_rows(&fo, e, doc, false, nodes, n, &err);
        }
    json_t *j = tp_fleet_judge(fo.data, NULL, &err);
    json_decref(fo.data);
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (!f) {
        json_decref(j);
        return NULL;
    }
    json_t *seen = json_object();
    const json_t *m, *l;
    json_array_foreach(json_object_get(j, "pairs"), r, m) {
        const char *metric = json_string_value(json_object_get(m, "metric"));
        /* "net.bw{...}" was measured by net-bw, "net.lat.latency..." by net-lat */
        char test[32];
        snprintf(test, sizeof test, "net-%.*s", (int)strcspn(metric + 4, ".{"), metric + 4);
        json_array_foreach(json_object_get(m, "slow_links"), k, l)
            plan_add(f, seen, retests, nodes, n, json_string_value(json_object_get(l, "a")),
                     json_string_value(json_object_get(l, "b")), test);
        /* a slow node: its pairs of that test, measured again alone too */
        json_array_foreach(json_object_get(m, "slow_nodes"), k, l) {
            const char *node = json_string_value(json_object_get(l, "node"));
            size_t q, w;
            json_array_foreach(gathered, q, g)
                json_array_foreach(json_object_get(g, "pairs"), w, e) {
                    const char *a = json_string_value(json_object_get(e, "a"));
                    const char *b = json_string_value(json_object_get(e, "b"));
                    if (strcmp(json_string_value(json_object_get(e, "test")), test) == 0 &&
                        (strcmp(a, node) == 0 || strcmp(b, node) == 0))
                        plan_add(f, seen, retests, nodes, n, a, b, test);
                }
        }
    }
    fclose(f);
    json_decref(seen);
    json_decref(j);
    return out;
}

/* Every node: run the retests in plan that start from it, one at a time
 * across the allocation (a barrier after each). */
static int retest_run(struct tp__validate_ctx *c, struct tp_boot *b, const struct tp__validate_node *nodes,
                      const char *plan, json_t *mine, tp_error *err)
{
    int me = tp_boot_rank(b), n = tp_boot_size(b);
    for (const char *p = plan; p && *p; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] != 0)) {
        int a, bb;
        char test[32];
        if (sscanf(p, "%d %d %31s", &a, &bb, test) != 3 || a < 0 || bb < 0 || a >= n || bb >= n)
            continue;
        if (a == me)
            for (int i = 0; i < c->tests.n; i++) {
                struct tp_validate_test *t = &c->tests.t[i];
                if (strcmp(t->name, test) == 0)
                    json_array_append_new(mine, tp__validate_measure_pair(c, t, nodes, a, bb, "retest"));
            }
        int rc = tp_boot_barrier(b, err);
        if (rc)
            return rc;
    }
    return 0;
}

/* One verdict per test across the nodes: the worst status, and who. */
static json_t *test_verdicts(json_t *gathered, const struct tp__validate_ctx *c, int *failed)
{
    json_t *v = json_array();
    for (int i = 0; i < c->tests.n; i++) {
        const struct tp_validate_test *t = &c->tests.t[i];
        if (strcmp(t->group, "net") == 0 || strcmp(t->group, "plan") == 0)
            continue;
        int nfail = 0, nwarn = 0, nodes = 0;
        char who[400] = "", why[300] = "";
        bool same = true;
        size_t r, k;
        json_t *g, *e;
        json_array_foreach(gathered, r, g) {
            json_array_foreach(json_object_get(g, "tests"), k, e) {
                if (strcmp(json_string_value(json_object_get(e, "test")), t->name) != 0)
                    continue;
                nodes++;
                const char *st = json_string_value(json_object_get(e, "status"));
                const char *says = json_string_value(json_object_get(e, "summary"));
                nfail += strcmp(st, "FAIL") == 0;
                nwarn += strcmp(st, "WARN") == 0;
                if (strcmp(st, "PASS") == 0)
                    continue;
                if (!why[0])
                    snprintf(why, sizeof why, "%s", says);
                same &= strcmp(why, says) == 0;
                size_t len = strlen(who);
                if (len < 300)
                    snprintf(who + len, sizeof who - len, "%s%s", len ? ", " : "",
                             json_string_value(json_object_get(g, "label")));
                else if (!strstr(who, "..."))
                    snprintf(who + len, sizeof who - len, ", ...");
            }
        }
        char summary[900];
        if (!who[0])
            snprintf(summary, sizeof summary, "%s: passed on all %d nodes", t->what, nodes);
        else
            snprintf(summary, sizeof summary, "%s: %s on %d of %d nodes (%s): %s%s", t->what,
                     nfail ? "FAIL" : "WARN", nfail + nwarn, nodes, who, why,
                     same ? "" : "; the others differ (see fleet.json)");
        *failed += nfail;
        json_array_append_new(v, json_pack("{s:s, s:s, s:s}", "name", t->name, "status",
                                           nfail ? "FAIL" : nwarn ? "WARN" : "PASS", "summary",
                                           summary));
    }
    return v;
}

/* What the triage named, in the nodes' labels, and what was done. */
static void print_triage(FILE *f, const struct tp__validate_node *nodes, int n,
                         const json_t *triage, const json_t *actions)
{
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(triage, "nodes_detail"), i, v) {
        int k = (int)json_integer_value(json_object_get(v, "node"));
        const char *st = json_string_value(json_object_get(v, "status"));
        if (k < 0 || k >= n || !st || strcmp(st, "pass") == 0)
            continue;
        fprintf(f, "node %s: %s (%s; %s): %s\n", nodes[k].label, st,
                json_string_value(json_object_get(v, "cause")),
                json_string_value(json_object_get(v, "action")),
                json_string_value(json_object_get(v, "says")));
    }
    json_array_foreach(actions, i, v)
        fprintf(f, "on-fail: %s\n", json_string_value(json_object_get(v, "says")));
    const json_t *counts = json_object_get(triage, "counts");
    const char *key;
    const json_t *cnt;
    fprintf(f, "verdicts:");
    json_object_foreach((json_t *)counts, key, cnt)
        if (json_integer_value(cnt))
            fprintf(f, " %s %lld", key, (long long)json_integer_value(cnt));
    fprintf(f, "\n");
}

/* The folder of pair measurement e under the results folder. */
static void pair_dir(const struct tp__validate_ctx *c, const json_t *e, char *out, size_t cap)
{
    const char *sub = json_string_value(json_object_get(e, "sub"));
    snprintf(out, cap, "%s/pairs/%s--%s%s%s", c->outdir,
             json_string_value(json_object_get(e, "a")), json_string_value(json_object_get(e, "b")),
             sub ? "/" : "", sub ? sub : "");
}

/* The first document of test that node measured with a partner, as a
 * path relative to the results folder ("pairs/A--B/net-lat.json", "" if
 * none). */
static void first_pair_doc(const struct tp__validate_ctx *c, const json_t *gathered,
                           const char *node, const char *test, char *out, size_t cap)
{
    size_t r, k;
    const json_t *g, *e;
    snprintf(out, cap, "pairs/%s--?/%s.json", node, test);
    json_array_foreach(gathered, r, g)
        json_array_foreach(json_object_get(g, "pairs"), k, e) {
            const char *a = json_string_value(json_object_get(e, "a"));
            const char *b = json_string_value(json_object_get(e, "b"));
            if (strcmp(json_string_value(json_object_get(e, "test")), test) != 0 ||
                (strcmp(a, node) != 0 && strcmp(b, node) != 0) ||
                !json_is_object(json_object_get(e, "doc")))
                continue;
            char dir[5000];
            pair_dir(c, e, dir, sizeof dir);
            snprintf(out, cap, "%s/%s.json", dir + strlen(c->outdir) + 1, test);
            return;
        }
}

static int finish(struct tp__validate_ctx *c, const struct tp__validate_node *nodes, int n,
                  json_t *gathered, const json_t *retests, const json_t *triage)
{
    int retested = 0;
    tp_error err = {0};
    int rounds = triage ? (int)json_integer_value(json_object_get(triage, "rounds_total"))
                        : tp_fleet_rounds(n);
    int failed = 0, pair_fail = 0, npairs = 0;
    struct fleet_out fo = {.data = tp_fleet_new(), .matrix = json_object()};
    fo.f = open_memstream(&fo.text, &fo.len);
    json_t *all_docs = json_array(), *html_docs = json_array();
    json_t *node_list = json_array(), *pair_list = json_array(), *group_list = json_array();
    int rc = fo.f && fo.data && all_docs ? 0 : tp_error_set(&err, TP_ENOMEM, "out of memory");
    size_t r, k;
    json_t *g, *e;
    json_array_foreach(gathered, r, g) {
        const char *label = json_string_value(json_object_get(g, "label"));
        char dir[4400];
        snprintf(dir, sizeof dir, "%s/nodes/%s", c->outdir, label);
        json_t *tl = json_array();
        json_array_foreach(json_object_get(g, "tests"), k, e) {
            const char *name = json_string_value(json_object_get(e, "test"));
            json_t *doc = json_object_get(e, "doc");
            json_array_append_new(tl, json_pack("{s:O, s:O, s:O, s:O}", "test",
                                                json_object_get(e, "test"), "status",
                                                json_object_get(e, "status"), "summary",
                                                json_object_get(e, "summary"), "seconds",
                                                json_object_get(e, "seconds")));
            if (!json_is_object(doc))
                continue;
            /* rank 0 has its own; the others' cross here unless the
             * folder is shared */
            if (!rc && r > 0)
                rc = write_doc(dir, name, doc, &err);
            if (!rc)
                rc = fleet_line(&fo, json_pack("{s:s, s:s, s:O}", "host", label, "test", name,
                                               "doc", doc),
                                &err);
            json_array_append(all_docs, doc);
            if (r == 0)
                json_array_append(html_docs, doc);
        }
        json_array_append_new(node_list,
                              json_pack("{s:s, s:s?, s:s?, s:o}", "label", label, "host",
                                        json_string_value(json_object_get(g, "host")), "addr",
                                        json_string_value(json_object_get(g, "addr")), "tests",
                                        tl));
        json_array_foreach(json_object_get(g, "pairs"), k, e) {
            const char *a = json_string_value(json_object_get(e, "a"));
            const char *b = json_string_value(json_object_get(e, "b"));
            const char *name = json_string_value(json_object_get(e, "test"));
            const char *st = json_string_value(json_object_get(e, "status"));
            json_t *doc = json_object_get(e, "doc");
            const json_t *re = retest_of(retests, e);
            npairs++;
            pair_fail += strcmp(st, "PASS") != 0;
            json_t *pe = json_pack("{s:O, s:s, s:s, s:s, s:s, s:O, s:O}", "round",
                                   json_object_get(e, "round"), "a", a, "b", b, "test", name,
                                   "status", st, "summary", json_object_get(e, "summary"),
                                   "seconds", json_object_get(e, "seconds"));
            if (re)
                json_object_set_new(pe, "retest",
                                    json_pack("{s:O, s:O, s:O}", "status",
                                              json_object_get(re, "status"), "summary",
                                              json_object_get(re, "summary"), "seconds",
                                              json_object_get(re, "seconds")));
            if (json_object_get(e, "stage"))
                json_object_set(pe, "stage", json_object_get(e, "stage"));
            json_array_append_new(pair_list, pe);
            if (!json_is_object(doc))
                continue;
            pair_dir(c, e, dir, sizeof dir);
            if (!rc && r > 0)
                rc = write_doc(dir, name, doc, &err);
            json_array_append(all_docs, doc);
            /* the report draws the first pair of rank 0 */
            if (r == 0 && json_integer_value(json_object_get(e, "round")) ==
                              json_integer_value(json_object_get(
                                  json_array_get(json_object_get(g, "pairs"), 0), "round")))
                json_array_append(html_docs, doc);
            /* a link measured again alone: the second measurement stands */
            const json_t *rdoc = json_object_get(re, "doc");
            if (json_is_object(rdoc)) {
                retested++;
                char rdir[5200];
                snprintf(rdir, sizeof rdir, "%s/retest", dir);
                if (!rc && strcmp(a, nodes[0].label) != 0)
                    rc = write_doc(rdir, name, rdoc, &err);
                json_array_append(all_docs, (json_t *)rdoc);
            }
            if (!rc)
                rc = pair_rows(&fo, e, json_is_object(rdoc) ? rdoc : doc, json_is_object(rdoc),
                               nodes, n, &err);
        }
        /* the tiers' collectives across nodes: each group's rank 0 has the
         * document */
        json_array_foreach(json_object_get(g, "groups"), k, e) {
            const char *st = json_string_value(json_object_get(e, "status"));
            json_t *doc = json_object_get(e, "doc");
            if (!json_is_object(doc)) {
                /* a member's failure is its group's, said once per member */
                if (strcmp(st, "PASS") != 0)
                    json_array_append_new(group_list, json_deep_copy(e));
                continue;
            }
            json_t *ge = json_deep_copy(e);
            json_object_del(ge, "doc");
            json_array_append_new(group_list, ge);
            snprintf(dir, sizeof dir, "%s/groups/%s/%s", c->outdir,
                     json_string_value(json_object_get(e, "sub")), label);
            if (!rc && r > 0)
                rc = write_doc(dir, json_string_value(json_object_get(e, "test")), doc, &err);
            json_array_append(all_docs, doc);
        }
    }
    if (fo.f)
        fclose(fo.f);
    char path[4400];
    snprintf(path, sizeof path, "%s/fleet.jsonl", c->outdir);
    if (!rc)
        rc = tp_write_atomic(path, fo.text ? fo.text : "", fo.len, &err);
    json_t *judgement = rc ? NULL : tp_fleet_judge(fo.data, NULL, &err);
    if (!rc && !judgement)
        rc = err.code;

    /* the plan: this allocation, its network from rank 0's first pair */
    json_t *verdicts = test_verdicts(gathered, c, &failed);
    int net_tests = 0;
    for (int i = 0; i < c->tests.n; i++)
        net_tests += strcmp(c->tests.t[i].group, "net") == 0;
    if (net_tests) {
        char summary[300];
        int len = snprintf(summary, sizeof summary,
                           "%d measurements between %d nodes in %d rounds", npairs, n, rounds);
        if (retested && len < (int)sizeof summary)
            len += snprintf(summary + len, sizeof summary - (size_t)len,
                            "; %d found slow measured again alone (their links, or a slow node's pairs)",
                            retested);
        if (pair_fail && len < (int)sizeof summary)
            snprintf(summary + len, sizeof summary - (size_t)len,
                     "; %d did not run or failed (see fleet.json)", pair_fail);
        json_array_append_new(verdicts, json_pack("{s:s, s:s, s:s}", "name", "pairs", "status",
                                                  pair_fail ? "FAIL" : "PASS", "summary",
                                                  summary));
    }
    failed += pair_fail;
    for (int i = 0; i < c->tests.n; i++) {
        struct tp_validate_test *t = &c->tests.t[i];
        if (strcmp(t->group, "plan") != 0)
            continue;
        char lat[700], bw[700], coll[700], io[700];
        first_pair_doc(c, gathered, nodes[0].label, "net-lat", lat, sizeof lat);
        first_pair_doc(c, gathered, nodes[0].label, "net-bw", bw, sizeof bw);
        snprintf(coll, sizeof coll, "nodes/%s/coll-allreduce.json", nodes[0].label);
        snprintf(io, sizeof io, "nodes/%s/io-checkpoint.json", nodes[0].label);
        const char *st = "FAIL";
        if (tp__validate_write_plan(c, n, 2, lat, bw, coll, io) < 0) {
            t->rc = -1;
            snprintf(t->why, sizeof t->why, "cannot write the plan: %s", strerror(errno));
        } else {
            st = tp__validate_run_test(c, t, c->outdir, NULL, NULL);
        }
        failed += strcmp(st, "FAIL") == 0;
        json_array_append_new(verdicts,
                              json_pack("{s:s, s:s, s:s, s:f}", "name", t->name, "status", st,
                                        "summary", t->why[0] ? t->why : t->what, "seconds",
                                        t->took_s));
        snprintf(path, sizeof path, "%s/plan.json", c->outdir);
        json_t *doc = NULL;
        if (tp_report_load(path, &doc, &err) == 0) {
            json_array_append(all_docs, doc);
            json_array_append_new(html_docs, doc);
        }
    }

    /* the fleet's judgement, as a document of its own */
    json_t *fdoc = NULL;
    const char *fstatus = "FAIL";
    char fsum[1200] = "";
    if (judgement) {
        json_int_t slow = json_integer_value(json_object_get(judgement, "slow_nodes")) +
                          json_integer_value(json_object_get(judgement, "slow_links"));
        json_int_t worse = json_integer_value(json_object_get(judgement, "worse"));
        fstatus = slow ? "FAIL" : worse ? "WARN" : "PASS";
        /* by a tier, the triage judges: what it named, measured again alone */
        const json_t *counts = json_object_get(triage, "counts");
        json_int_t named = json_array_size(json_object_get(triage, "named")) +
                           json_integer_value(json_object_get(counts, "lost"));
        json_int_t unsure = json_integer_value(json_object_get(counts, "suspect")) +
                            json_integer_value(json_object_get(counts, "error"));
        if (triage)
            fstatus = named ? "FAIL" : unsure ? "WARN" : "PASS";
        char *words = NULL;
        size_t wl = 0;
        FILE *wf = open_memstream(&words, &wl);
        if (wf) {
            tp_fleet_print(wf, judgement);
            fclose(wf);
        }
        snprintf(fsum, sizeof fsum, "%.*s", words ? (int)strcspn(words, "\n") : 0,
                 words ? words : "");
        free(words);
        const char *partial = json_string_value(json_object_get(triage, "partial"));
        if (triage)
            snprintf(fsum, sizeof fsum, "%s tier: %d rounds (%d of isolation); %d named%s%s%.600s",
                     c->tier, rounds,
                     (int)json_integer_value(json_object_get(triage, "rounds_isolation")),
                     (int)named, unsure ? ", some unsettled (see nodes.jsonl)" : "",
                     partial ? "; stopped in " : "", partial ? partial : "");
        fdoc = tp_result_new("fleet", json_pack("{s:s, s:s?, s:i, s:i}", "profile", c->profile,
                                                "only", c->only, "nodes", n, "rounds", rounds));
        json_t *res = json_pack("{s:i, s:i, s:i, s:o, s:o, s:O, s:O}", "node_count", n,
                                "failed_tests", failed, "rounds", rounds, "nodes", node_list,
                                "pairs", pair_list, "matrix", fo.matrix, "judgement", judgement);
        node_list = pair_list = NULL;
        if (triage) {
            /* the verdicts, each node a line; and what --on-fail did */
            json_t *acts = tp__validate_onfail(c, nodes, n, triage);
            json_object_set_new(res, "tier", json_string(c->tier));
            if (partial) /* a node was lost: the others' documents never came */
                json_object_set_new(res, "partial", json_string(partial));
            json_object_set_new(res, "groups", group_list);
            json_object_set(res, "triage", (json_t *)triage);
            json_object_set_new(res, "actions", acts ? acts : json_array());
            group_list = NULL;
            if (!rc)
                rc = tp__validate_node_lines(c, nodes, n, triage, &err);
        }
        json_object_set_new(fdoc, "results", res);
        tp_result_finish(fdoc, 0, NULL);
        snprintf(path, sizeof path, "%s/fleet.json", c->outdir);
        if (!rc)
            rc = tp_result_write(fdoc, path, &err);
        json_array_append(all_docs, fdoc);
        json_array_append(html_docs, fdoc);
        json_array_append_new(verdicts, json_pack("{s:s, s:s, s:s}", "name", "fleet", "status",
                                                  fstatus, "summary", fsum));
    }

    if (!c->quiet) {
        printf("# trainpath validate --profile %s: %d nodes, %d rounds %s%s, in %.0f s\n",
               c->profile, n, rounds, triage ? "by the tier " : "of pairs",
               triage ? c->tier : "", tp__validate_now_s() - c->t0);
        size_t i;
        json_t *v;
        json_array_foreach(verdicts, i, v) {
            const char *st = json_string_value(json_object_get(v, "status"));
            printf("%-4s %-20s %s\n", strcmp(st, "PASS") == 0 ? "ok" : st,
                   json_string_value(json_object_get(v, "name")),
                   json_string_value(json_object_get(v, "summary")));
        }
        if (triage) {
            print_triage(stdout, nodes, n, triage, json_object_get(json_object_get(fdoc,
                                                                                     "results"),
                                                                     "actions"));
        } else if (judgement) {
            tp_fleet_print(stdout, judgement);
        }
        printf("fleet: %s/fleet.jsonl, %s/fleet.json%s%s%s\n", c->outdir, c->outdir,
               triage ? ", " : "", triage ? c->outdir : "", triage ? "/nodes.jsonl" : "");
    }
    if (rc)
        tp__validate_fail(&err);
    /* history and Prometheus: every node's rows, with its label as host */
    json_t *rows = json_copy(json_object_get(fo.data, "rows"));
    if (fdoc) {
        json_t *fr = tp_report_metrics(fdoc, &err);
        if (fr)
            json_array_extend(rows, fr);
        json_decref(fr);
    }
    size_t nd = json_array_size(all_docs), nh = json_array_size(html_docs);
    const json_t **docs = calloc(nd + 1, sizeof *docs), **hdocs = calloc(nh + 1, sizeof *hdocs);
    for (size_t i = 0; docs && i < nd; i++)
        docs[i] = json_array_get(all_docs, i);
    for (size_t i = 0; hdocs && i < nh; i++)
        hdocs[i] = json_array_get(html_docs, i);
    /* the history takes every document; the report rank 0's node, its
     * first pair, the plan and the fleet */
    int orc = docs && hdocs ? tp__validate_outputs(c, docs, nd, hdocs, nh, rows, verdicts) : 1;
    free(docs);
    free(hdocs);
    json_decref(rows);
    json_decref(verdicts);
    json_decref(fdoc);
    json_decref(judgement);
    json_decref(node_list);
    json_decref(pair_list);
    json_decref(group_list);
    json_decref(all_docs);
    json_decref(html_docs);
    json_decref(fo.data);
    json_decref(fo.matrix);
    free(fo.text);
    return rc || orc || failed || strcmp(fstatus, "FAIL") == 0 ? 1 : 0;
}

int tp__validate_alloc(struct tp__validate_ctx *c, struct tp_boot *b)
{
    tp_error err = {0};
    int n = tp_boot_size(b), me = tp_boot_rank(b);
    struct tp__validate_node *nodes = calloc((size_t)n, sizeof *nodes);
    if (!nodes) {
        tp_error_set(&err, TP_ENOMEM, "out of memory");
        return tp__validate_fail(&err);
    }
    bool net = false;
    for (int i = 0; i < c->tests.n; i++)
        net |= strcmp(c->tests.t[i].group, "net") == 0;
    c->t0 = tp__validate_now_s();
    int rc = meet(c, b, nodes, net, &err);
    json_t *tests = json_array(), *pairs = json_array(), *groups = json_array(), *triage = NULL;
    if (rc == 0) {
        node_tests(c, b, nodes, tests);
        rc = tp_boot_barrier(b, &err);
    }
    /* the pairs: by the tier's triage, or every pair by the circle method */
    bool tiered = net && tp__validate_tiered(c);
    if (rc == 0 && tiered)
        rc = tp__validate_triage(c, b, nodes, pairs, groups, &triage, &err);
    else if (rc == 0 && net)
        rc = pair_rounds(c, b, nodes, pairs, &err);
    if (me == 0)
        tp__validate_progress_clear(c);
    char *mine = NULL, **all = NULL;
    if (rc == 0) {
        json_t *o = json_pack("{s:s, s:s, s:s, s:O, s:O, s:O}", "label", nodes[me].label, "host",
                              tp_boot_host(b, me), "addr", c->addr[0] ? c->addr : "", "tests",
                              tests, "pairs", pairs, "groups", groups);
        mine = o ? json_dumps(o, JSON_COMPACT) : NULL;
        json_decref(o);
        rc = mine ? tp_boot_gather(b, mine, &all, &err)
                  : tp_error_set(&err, TP_ENOMEM, "out of memory");
    }
    int status = 0;
    json_t *gathered = json_array(), *retests = json_object(), *mine_re = json_array();
    char *plan = NULL, **plans = NULL;
    /* after a collective failed, no more of them: every node stops */
    bool broken = rc != 0;
    for (int r = 0; rc == 0 && me == 0 && r < n; r++) {
        json_error_t je;
        json_t *g = json_loads(all[r], 0, &je);
        if (!g)
            rc = tp_error_set(&err, TP_EPROTO, "node %s sent a broken result: %s",
                              nodes[r].label, je.text);
        json_array_append_new(gathered, g);
    }
    if (me == 0 && all)
        tp_boot_free_strings(all, n);
    /* the links found slow, measured again one at a time; a second
     * measurement moves the median, so once more for links newly found
     * slow, until every link named slow was measured alone (3 passes) */
    for (int pass = 0; net && !tiered && !broken && pass < 3; pass++) {
        if (me == 0 && rc == 0)
            plan = retest_plan(gathered, retests, nodes, n);
        if ((rc = agree(b, rc, &err)) == 0 &&
            (rc = tp_boot_allgather(b, plan ? plan : "", &plans, &err)) == 0) {
            bool none = !plans[0][0];
            if (me == 0 && !none)
                tp__validate_progress(c, pass, 3, "slow links measured again alone", 0);
            json_array_clear(mine_re);
            if (!none)
                rc = retest_run(c, b, nodes, plans[0], mine_re, &err);
            tp_boot_free_strings(plans, n);
            free(plan);
            plan = NULL;
            if (none)
                break;
        }
        char *text = rc == 0 ? json_dumps(mine_re, JSON_COMPACT) : NULL;
        char **res = NULL;
        if (rc == 0)
            rc = text ? tp_boot_gather(b, text, &res, &err)
                      : tp_error_set(&err, TP_ENOMEM, "out of memory");
        free(text);
        for (int r = 0; rc == 0 && me == 0 && r < n; r++) {
            json_t *list = json_loads(res[r], 0, NULL);
            size_t i;
            json_t *e;
            json_array_foreach(list, i, e) {
                char key[1000];
                snprintf(key, sizeof key, "%s|%s|%s", json_string_value(json_object_get(e, "a")),
                         json_string_value(json_object_get(e, "b")),
                         json_string_value(json_object_get(e, "test")));
                json_object_set(retests, key, e);
            }
            json_decref(list);
        }
        if (me == 0 && res)
            tp_boot_free_strings(res, n);
        broken = rc != 0;
    }
    if (me == 0)
        tp__validate_progress_clear(c);
    tp__validate_stop_server(c);
    if (rc)
        status = tp__validate_fail(&err);
    else if (me == 0)
        status = finish(c, nodes, n, gathered, retests, triage);
    /* a node lost in the tier's rounds: rank 0 still writes the fleet
     * document, the verdicts (the lost node named, with its stage) and
     * acts on them, from what it has (its own documents; the others' never
     * arrived) */
    if (rc && me == 0 && triage && json_object_get(triage, "partial")) {
        json_t *own = json_pack("{s:s, s:s, s:s, s:O, s:O, s:O}", "label", nodes[0].label, "host",
                                tp_boot_host(b, 0), "addr", c->addr, "tests", tests, "pairs",
                                pairs, "groups", groups);
        json_array_clear(gathered);
        json_array_append_new(gathered, own);
        finish(c, nodes, n, gathered, retests, triage);
        status = status ? status : 1;
    }
    free(plan);
    json_decref(gathered);
    json_decref(retests);
    json_decref(mine_re);
    /* rank 0 judged the allocation: every node exits with its verdict, so
     * mpirun and srun report it whichever rank they read, and no node
     * leaves (making the launcher end the job) before rank 0 is done */
    if (!broken) {
        char word[16], **st = NULL;
        snprintf(word, sizeof word, "%d", status);
        if (tp_boot_allgather(b, word, &st, &err) == 0) {
            status = atoi(st[0]);
            tp_boot_free_strings(st, n);
        } else {
            status = tp__validate_fail(&err);
        }
    }
    free(mine);
    json_decref(tests);
    json_decref(pairs);
    json_decref(groups);
    json_decref(triage);
    free(nodes);
    return status;
}
