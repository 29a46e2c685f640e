/* Group bootstrap: the backend table (names, detection from the
 * launcher's variables, the rank-0 hint, the launcher variables); the local
 * (fork) and env (torchrun-style) backends, for several group sizes;
 * allgather, barrier and clock offsets; and the faults: options that differ
 * between ranks, a rank that never joins, a rank lost mid-run, a wrong key.
 * Each group scenario runs in a child process ("driver") so the ranks it
 * forks never return into cmocka. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tp/boot.h"
#include "boot_gather.h"
#include "tp/clock.h"
#include "tp_test.h"

#define SEC 1000000000ull

/* ---- the backend table ---- */

/* The variables detection and the rank-0 hint read. */
static const char *const rank_vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "RANK"};

static void clear_rank_vars(void)
{
    for (size_t i = 0; i < sizeof rank_vars / sizeof rank_vars[0]; i++)
        unsetenv(rank_vars[i]);
}

static void table_names(void **state)
{
    (void)state;
    static const char *const rows[] = {"local", "mpi", "env"};
    tp_error err = {0};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        TP_EQ_INT(tp_boot_check_backend(rows[i], "--launcher", &err), 0);
        TP_EQ_STR(tp_boot_detect(rows[i]), rows[i]);
    }
    TP_EQ_INT(tp_boot_check_backend(NULL, "--launcher", &err), 0); /* detection */
    static const char *const bad[] = {"slurm", "", "LOCAL", "mpirun", "env "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char want[64];
        snprintf(want, sizeof want, "--launcher %s: local, mpi or env", bad[i]);
        tp_error_clear(&err);
        TP_EQ_INT(tp_boot_check_backend(bad[i], "--launcher", &err), TP_EUSAGE);
        TP_EQ_STR(err.msg, want);
    }
    TP_EQ_INT(tp_boot_check_backend("torchrun", "--launcher", NULL), TP_EUSAGE);
    TP_EQ_INT(tp_boot_check_backend("slurm", "launcher", &err), TP_EUSAGE);
    TP_EQ_STR(err.msg, "launcher slurm: local, mpi or env");
    /* tp_boot_init refuses the name before it starts anything */
    struct tp_boot_opts o = {.backend = "slurm", .nranks = 2, .timeout_ns = SEC};
    struct tp_boot *b = NULL;
    TP_EQ_INT(tp_boot_init(&o, &b, &err), TP_EUSAGE);
    TP_EQ_STR(err.msg, "--launcher slurm: local, mpi or env");
    assert_null(b);
}

static void table_detection(void **state)
{
    (void)state;
    clear_rank_vars();
    TP_EQ_STR(tp_boot_detect(NULL), "local");
    setenv("RANK", "", 1); /* set, even empty: torchrun started us */
    TP_EQ_STR(tp_boot_detect(NULL), "env");
    setenv("RANK", "1", 1);
    TP_EQ_STR(tp_boot_detect(NULL), "env");
    /* each MPI launcher's variable alone, and before RANK */
    for (size_t i = 0; i < 3; i++) {
        setenv(rank_vars[i], "0", 1);
        TP_EQ_STR(tp_boot_detect(NULL), "mpi");
        unsetenv("RANK");
        TP_EQ_STR(tp_boot_detect(NULL), "mpi");
        setenv("RANK", "1", 1);
        unsetenv(rank_vars[i]);
    }
    TP_EQ_STR(tp_boot_detect(NULL), "env");
    /* a name given wins over the variables, and comes back as given */
    setenv("PMIX_RANK", "3", 1);
    TP_EQ_STR(tp_boot_detect("local"), "local");
    TP_EQ_STR(tp_boot_detect("env"), "env");
    TP_EQ_STR(tp_boot_detect("bogus"), "bogus");
    clear_rank_vars();
    TP_EQ_STR(tp_boot_detect(NULL), "local");
    TP_EQ_STR(tp_boot_detect("mpi"), "mpi");
    /* launched (one node of an allocation) or forking its own ranks */
    assert_false(tp_boot_launched(NULL));
    assert_false(tp_boot_launched("local"));
    assert_true(tp_boot_launched("mpi"));
    assert_true(tp_boot_launched("env"));
    assert_false(tp_boot_launched("bogus"));
    setenv("RANK", "0", 1);
    assert_true(tp_boot_launched(NULL));
    clear_rank_vars();
}

static void table_rank0(void **state)
{
    (void)state;
    clear_rank_vars();
    /* nothing set: every launcher says rank 0 */
    assert_true(tp_boot_will_be_rank0("local"));
    assert_true(tp_boot_will_be_rank0("env"));
    assert_true(tp_boot_will_be_rank0("mpi"));
    assert_true(tp_boot_will_be_rank0(NULL));
    /* env reads RANK: "0", empty, or a rank */
    setenv("RANK", "0", 1);
    assert_true(tp_boot_will_be_rank0("env"));
    setenv("RANK", "", 1);
    assert_true(tp_boot_will_be_rank0("env"));
    setenv("RANK", "1", 1);
    assert_false(tp_boot_will_be_rank0("env"));
    assert_false(tp_boot_will_be_rank0(NULL));   /* detected: env */
    assert_true(tp_boot_will_be_rank0("local")); /* the parent of its ranks */
    assert_true(tp_boot_will_be_rank0("mpi"));   /* RANK is not MPI's */
    assert_true(tp_boot_will_be_rank0("bogus"));
    /* mpi reads Open MPI's, then PMI's, then PMIx's variable */
    setenv("PMIX_RANK", "2", 1);
    assert_false(tp_boot_will_be_rank0("mpi"));
    assert_false(tp_boot_will_be_rank0(NULL)); /* detected: mpi */
    setenv("PMI_RANK", "0", 1);
    assert_true(tp_boot_will_be_rank0("mpi"));
    setenv("OMPI_COMM_WORLD_RANK", "5", 1);
    assert_false(tp_boot_will_be_rank0("mpi"));
    setenv("OMPI_COMM_WORLD_RANK", "0", 1);
    assert_true(tp_boot_will_be_rank0("mpi"));
    assert_true(tp_boot_will_be_rank0(NULL));
    assert_false(tp_boot_will_be_rank0("env")); /* still RANK=1 */
    assert_true(tp_boot_will_be_rank0("local"));
    setenv("OMPI_COMM_WORLD_RANK", "00", 1); /* the text "0", as before, not the number */
    assert_false(tp_boot_will_be_rank0("mpi"));
    clear_rank_vars();
}

static void table_launcher_vars(void **state)
{
    (void)state;
    static const char *const yes[] = {"OMPI_COMM_WORLD_RANK=1",
                                      "OMPI_MCA_btl=self,tcp",
                                      "PMIX_RANK=0",
                                      "PMIX_NAMESPACE=x",
                                      "PMI_RANK=2",
                                      "PMI_FD=5",
                                      "MPI_LOCALRANKID=0",
                                      "MPI_LOCALRANKID_X=1",
                                      "HYDRA_CONTROL_FD=7",
                                      "RANK=0",
                                      "WORLD_SIZE=2",
                                      "LOCAL_RANK=1",
                                      "LOCAL_WORLD_SIZE=2",
                                      "MASTER_ADDR=127.0.0.1",
                                      "MASTER_PORT=29500",
                                      "GROUP_RANK=0",
                                      "ROLE_RANK=0",
                                      "RANK=",
                                      "RANK",
                                      "WORLD_SIZE"};
    static const char *const no[] = {"PATH=/usr/bin",
                                     "HOME=/root",
                                     "RANKS=3",
                                     "MY_RANK=1",
                                     "RANK_0=1",
                                     "XRANK=1",
                                     "WORLD_SIZE_X=2",
                                     "MASTER=1",
                                     "MASTER_ADDRESS=x",
                                     "OMPI=1",
                                     "PMI=1",
                                     "PMIX=1",
                                     "HYDRA=1",
                                     "MPI_LOCALRANK=0",
                                     "SLURM_PROCID=0",
                                     "ompi_comm_world_rank=1",
                                     "rank=0",
                                     "",
                                     "=RANK"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        if (!tp_boot_launcher_var(yes[i]))
            fail_msg("\"%s\" is a launcher variable, tp_boot_launcher_var says not", yes[i]);
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        if (tp_boot_launcher_var(no[i]))
            fail_msg("\"%s\" is no launcher variable, tp_boot_launcher_var says it is", no[i]);
}

/* ---- groups ---- */

/* Run fn in a child; return its exit status. */
static int in_child(int (*fn)(void *), void *arg)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        _exit(fn(arg));
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int rank_fail(const char *what, const tp_error *err)
{
    fprintf(stderr, "rank failed: %s: %s\n", what, err ? err->msg : "");
    return 3;
}

/* Every rank: allgather its name, check everyone's, barrier, check clocks. */
static int group_work(struct tp_boot *b)
{
    tp_error err;
    char mine[32], want[32], **all = NULL;
    int rank = tp_boot_rank(b), size = tp_boot_size(b);
    snprintf(mine, sizeof mine, "rank-%d", rank);
    if (tp_boot_allgather(b, mine, &all, &err))
        return rank_fail("allgather", &err);
    for (int r = 0; r < size; r++) {
        snprintf(want, sizeof want, "rank-%d", r);
        if (strcmp(all[r], want) != 0) {
            fprintf(stderr, "rank %d: all[%d] = '%s', want '%s'\n", rank, r, all[r], want);
            return 4;
        }
    }
    tp_boot_free_strings(all, size);
    /* every local rank is on this host: its index there is its rank */
    if (tp_boot_local_rank(b) != rank) {
        fprintf(stderr, "rank %d: local rank %d\n", rank, tp_boot_local_rank(b));
        return 9;
    }
    if (tp_boot_barrier(b, &err) || tp_boot_barrier(b, &err))
        return rank_fail("barrier", &err);
    /* right after a barrier every rank reads its clock; corrected by the
     * estimated offsets, the readings must agree (to scheduling delay) */
    char now[32];
    snprintf(now, sizeof now, "%llu", (unsigned long long)tp_now_ns());
    if (tp_boot_allgather(b, now, &all, &err))
        return rank_fail("allgather of clocks", &err);
    double t0 = (double)strtoull(all[0], NULL, 10);
    for (int r = 1; r < size; r++) {
        double tr = (double)strtoull(all[r], NULL, 10) - (double)tp_boot_clock_offset_ns(b, r);
        if (tp_boot_clock_rtt_ns(b, r) == 0 || tr - t0 > 50e6 || t0 - tr > 50e6) {
            fprintf(stderr, "rank %d: rank %d corrected clock %.2f ms off (offset %lld ns)\n", rank,
                    r, (tr - t0) / 1e6, (long long)tp_boot_clock_offset_ns(b, r));
            return 5;
        }
    }
    tp_boot_free_strings(all, size);
    int grc = gather_check(b);
    if (!grc)
        grc = gather_each_check(b);
    if (!grc)
        grc = allgather_long_check(b);
    if (!grc)
        grc = scatter_check(b);
    if (!grc)
        grc = bcast_check(b);
    if (grc)
        return grc;
    if (size > 1 && getenv("TP_TEST_SKEWED") &&
        llabs(tp_boot_clock_offset_ns(b, 1) - 3000000000ll) > 100000000ll) {
        fprintf(stderr, "rank %d: rank 1's offset %lld ns misses its 3 s skew\n", rank,
                (long long)tp_boot_clock_offset_ns(b, 1));
        return 8;
    }
    return 0;
}

static int local_group(void *arg)
{
    int n = *(int *)arg;
    json_t *opts = json_pack("{s:s}", "sizes", "8");
    struct tp_boot_opts o = {
        .backend = "local", .nranks = n, .timeout_ns = 10 * SEC, .options = opts};
    struct tp_boot *b;
    tp_error err;
    if (tp_boot_init(&o, &b, &err))
        return rank_fail("init", &err);
    int rc = group_work(b);
    if (tp_boot_rank(b) != 0) {
        tp_boot_fini(b);
        _exit(rc);
    }
    int worst = tp_boot_fini(b); /* the other ranks' exit codes */
    return rc ? rc : worst;
}

static void local_sizes(void **state)
{
    (void)state;
    int sizes[] = {1, 2, 3, 5, 8, TP_BOOT_GATHER_WINDOW + 4};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        int rc = in_child(local_group, &sizes[i]);
        if (rc != 0)
            fail_msg("local group of %d: exit %d", sizes[i], rc);
    }
}

/* A lean group (tp_boot_opts.lean) of n: every rank knows its own host
 * and rank 0's alone (another's is "?" outside rank 0, which knows all),
 * its place on the host (all on one here: its rank), its own clock; a
 * broadcast reaches every rank whole; and rank 0 sent fewer bytes forming
 * it than a full group of the same size would (each rank's own, not every
 * rank's: compared with the same group formed full). */
static unsigned long long *lean_sent; /* shared with the driver: rank 0's bytes */

static int lean_group(void *arg)
{
    int n = ((int *)arg)[0];
    bool lean = ((int *)arg)[1];
    json_t *opts = json_object();
    struct tp_boot_opts o = {
        .backend = "local", .nranks = n, .timeout_ns = 10 * SEC, .options = opts, .lean = lean};
    struct tp_boot *b;
    tp_error err;
    if (tp_boot_init(&o, &b, &err))
        return rank_fail("init", &err);
    json_decref(opts);
    int me = tp_boot_rank(b), rc = 0;
    char host[256];
    gethostname(host, sizeof host);
    uint64_t sent = 0, received = 0;
    tp_boot_bytes(b, &sent, &received);
    for (int r = 0; r < n && !rc; r++) {
        bool known = !lean || me == 0 || r == 0 || r == me;
        if (strcmp(tp_boot_host(b, r), known ? host : "?") != 0) {
            fprintf(stderr, "rank %d: host of %d is %s\n", me, r, tp_boot_host(b, r));
            rc = 30;
        }
    }
    if (!rc && tp_boot_local_rank(b) != me) {
        fprintf(stderr, "rank %d: local rank %d\n", me, tp_boot_local_rank(b));
        rc = 31;
    }
    char text[9000], *got = NULL;
    for (size_t i = 0; i < sizeof text - 1; i++) /* past one part of a text */
        text[i] = (char)('a' + i % 26);
    text[sizeof text - 1] = 0;
    if (!rc && tp_boot_bcast(b, me == 0 ? text : NULL, &got, &err))
        rc = rank_fail("bcast", &err);
    if (!rc && strcmp(got, text) != 0) {
        fprintf(stderr, "rank %d: the broadcast differs\n", me);
        rc = 32;
    }
    free(got);
    if (me != 0) {
        tp_boot_fini(b);
        _exit(rc);
    }
    *lean_sent = sent; /* what forming it cost rank 0 */
    int worst = tp_boot_fini(b);
    return rc ? rc : worst;
}

static void local_lean(void **state)
{
    (void)state;
    lean_sent = mmap(NULL, sizeof *lean_sent, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                     -1, 0);
    assert_true(lean_sent != MAP_FAILED);
    for (int n = 2; n <= 9; n += 7) {
        unsigned long long bytes[2];
        for (int lean = 0; lean < 2; lean++) {
            int args[2] = {n, lean};
            int rc = in_child(lean_group, args);
            if (rc != 0)
                fail_msg("%s local group of %d: exit %d", lean ? "lean" : "full", n, rc);
            bytes[lean] = *lean_sent;
        }
        if (n > 2 && !(bytes[1] < bytes[0]))
            fail_msg("group of %d: rank 0 sent %llu B forming it lean, %llu B full", n, bytes[1],
                     bytes[0]);
    }
    munmap(lean_sent, sizeof *lean_sent);
}

/* A local group of 40 under a soft limit of 32 open files: rank 0 raises
 * it for the 39 connections it holds (the hard limit allows); under a hard
 * limit of 32 it refuses (a group of 2 needs 258), naming the limit,
 * before any rank joins. */
static int few_files(void *arg)
{
    bool hard = *(bool *)arg;
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = 32;
    if (hard)
        rl.rlim_max = 32;
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
        return 20;
    json_t *opts = json_object();
    /* refused: rank 0 waits out the one rank it forked (2 s), not 20 */
    struct tp_boot_opts o = {.backend = "local",
                             .nranks = hard ? 2 : 40,
                             .timeout_ns = (hard ? 2 : 20) * SEC,
                             .options = opts};
    struct tp_boot *b;
    tp_error err;
    pid_t leader = getpid();
    int rc = tp_boot_init(&o, &b, &err);
    json_decref(opts);
    if (hard && getpid() != leader) /* a rank forked before rank 0 refused */
        _exit(0);
    if (hard) {
        if (rc != TP_EUSAGE || !strstr(err.msg, "hard limit of 32"))
            return fprintf(stderr, "under a hard limit of 32: %d %s\n", rc, err.msg), 21;
        return 0;
    }
    if (rc)
        return rank_fail("init under a soft limit of 32 files", &err);
    rc = tp_boot_barrier(b, &err) ? rank_fail("barrier", &err) : 0;
    if (tp_boot_rank(b) != 0) {
        tp_boot_fini(b);
        _exit(rc);
    }
    int worst = tp_boot_fini(b);
    return rc ? rc : worst;
}

static void local_few_files(void **state)
{
    (void)state;
    bool hard = false;
    int rc = in_child(few_files, &hard);
    if (rc != 0)
        fail_msg("a local group of 40 under a soft limit of 32 files: exit %d", rc);
    hard = true;
    if ((rc = in_child(few_files, &hard)) != 0)
        fail_msg("a local group under a hard limit of 32 files: exit %d", rc);
}

/* ---- leaving the lost out ---- */

#define LO_SIZE 7
static bool lo_seen[LO_SIZE], lo_null[LO_SIZE];

static int lo_each(void *ctx, int r, const char *data, tp_error *err)
{
    (void)ctx, (void)err;
    lo_seen[r] = true;
    lo_null[r] = data == NULL;
    return 0;
}

/* A local group of 7 that leaves the lost out, its operations bounded to
 * 1.5 s: rank 2 dies after joining, ranks 4, 5 and 6 stay silent. The
 * others' barrier goes on without them and tells every rank who is gone;
 * an allgather has the same NULLs on every rank; a scatter skips them and
 * so does a gather (fn sees NULL for each). The three silent ranks
 * cost one timeout, not three: the others wait 3 s for rank 0, which
 * waiting 1.5 s for each in turn (4.5 s) would exceed. */
static int leave_out_group(void *arg)
{
    (void)arg;
    json_t *opts = json_pack("{s:s}", "sizes", "8");
    struct tp_boot_opts o = {
        .backend = "local", .nranks = LO_SIZE, .timeout_ns = 10 * SEC, .options = opts};
    struct tp_boot *b;
    tp_error err;
    if (tp_boot_init(&o, &b, &err))
        return rank_fail("init", &err);
    int me = tp_boot_rank(b), rc = 0;
    if (!tp_boot_leave_out(b) || !tp_boot_set_timeout(b, 3 * SEC / 2))
        rc = 12;
    if (me == 2)
        _exit(0);
    if (me >= 4) {
        sleep(4);
        _exit(0);
    }
    char mine[24], **all = NULL;
    snprintf(mine, sizeof mine, "rank-%d", me);
    /* a barrier first: its answer tells every rank who is gone */
    if (!rc && tp_boot_barrier(b, &err))
        rc = rank_fail("barrier", &err);
    for (int r = 0; !rc && r < LO_SIZE; r++)
        if ((r == 2 || r >= 4) != tp_boot_gone(b, r)) {
            fprintf(stderr, "rank %d: after the barrier gone(%d) = %d\n", me, r, tp_boot_gone(b, r));
            rc = 17;
        }
    if (!rc && tp_boot_allgather(b, mine, &all, &err))
        rc = rank_fail("allgather", &err);
    for (int r = 0; !rc && r < LO_SIZE; r++) {
        bool out = r == 2 || r >= 4;
        char want[24];
        snprintf(want, sizeof want, "rank-%d", r);
        if (out ? all[r] != NULL : !all[r] || strcmp(all[r], want) != 0) {
            fprintf(stderr, "rank %d: all[%d] = %s\n", me, r, all[r] ? all[r] : "NULL");
            rc = 13;
        }
        if (out != tp_boot_gone(b, r)) {
            fprintf(stderr, "rank %d: gone(%d) = %d\n", me, r, tp_boot_gone(b, r));
            rc = 14;
        }
    }
    tp_boot_free_strings(all, LO_SIZE);
    /* a scatter skips the gone: parts of theirs may be NULL */
    char *parts[LO_SIZE] = {0}, *got = NULL;
    for (int r = 0; me == 0 && r < LO_SIZE; r++)
        parts[r] = r == 2 || r >= 4 ? NULL : mine; /* rank 0's word: its own name */
    if (!rc && tp_boot_scatter(b, parts, &got, &err))
        rc = rank_fail("scatter", &err);
    if (!rc && strcmp(got, "rank-0") != 0) {
        fprintf(stderr, "rank %d: scattered %s\n", me, got);
        rc = 18;
    }
    free(got);
    if (!rc && tp_boot_gather_each(b, mine, lo_each, NULL, &err))
        rc = rank_fail("gather", &err);
    for (int r = 0; !rc && me == 0 && r < LO_SIZE; r++)
        if (!lo_seen[r] || lo_null[r] != (r == 2 || r >= 4)) {
            fprintf(stderr, "rank 0: gather: rank %d seen %d, NULL %d\n", r, lo_seen[r],
                    lo_null[r]);
            rc = 15;
        }
    if (!rc && me == 0) {
        const char *dead = tp_boot_gone_why(b, 2), *silent = tp_boot_gone_why(b, 5);
        if (!dead || !strstr(dead, "closed") || !silent || !strstr(silent, "within 1.5 s") ||
            tp_boot_gone_why(b, 1)) {
            fprintf(stderr, "rank 0: why 2: %s; why 5: %s\n", dead ? dead : "NULL",
                    silent ? silent : "NULL");
            rc = 16;
        }
    }
    if (me != 0) {
        tp_boot_fini(b);
        _exit(rc);
    }
    tp_boot_set_timeout(b, 10 * SEC); /* fini waits for the silent ones to end */
    int worst = tp_boot_fini(b);
    return rc ? rc : worst;
}

static void local_leave_out(void **state)
{
    (void)state;
    int rc = in_child(leave_out_group, NULL);
    if (rc != 0)
        fail_msg("a group leaving 4 lost ranks out: exit %d", rc);
}

/* ---- env backend: each rank is a forked process with its own environment ---- */

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001)};
    socklen_t l = sizeof a;
    bind(fd, (struct sockaddr *)&a, sizeof a);
    getsockname(fd, (struct sockaddr *)&a, &l);
    close(fd);
    return ntohs(a.sin_port);
}

struct env_case {
    int size, started; /* WORLD_SIZE, ranks actually started */
    int port;
    const char *odd_sizes; /* options of the last rank, when they differ */
    const char *key[8];    /* key file per rank (NULL: none) */
    const char *master;
    int die_rank; /* this rank exits right after joining (-1: none) */
    bool silent_last;  /* the last rank joins, then says nothing for 3 s (frozen) */
    uint64_t round_ns; /* > 0: every rank bounds its operations by this once joined */
    bool leave_out;    /* the group forms without the ranks that did not join */
    uint64_t timeout_ns;
    const char *expect[8]; /* substring each rank's error must contain (NULL: success) */
};

static int env_rank(struct env_case *c, int rank)
{
    char v[32];
    snprintf(v, sizeof v, "%d", rank);
    setenv("RANK", v, 1);
    snprintf(v, sizeof v, "%d", c->size);
    setenv("WORLD_SIZE", v, 1);
    snprintf(v, sizeof v, "%d", c->port);
    setenv("MASTER_PORT", v, 1);
    setenv("MASTER_ADDR", c->master ? c->master : "127.0.0.1", 1);
    bool odd = c->odd_sizes && rank == c->started - 1;
    json_t *opts = json_pack("{s:s, s:i}", "sizes", odd ? c->odd_sizes : "8", "iters", 10);
    struct tp_boot_opts o = {.key_file = c->key[rank],
                             .timeout_ns = c->timeout_ns,
                             .options = opts,
                             .leave_out = c->leave_out};
    struct tp_boot *b;
    tp_error err;
    int rc = tp_boot_init(&o, &b, &err);
    if (!rc && rank == c->die_rank)
        _exit(9);
    if (!rc && c->round_ns && !tp_boot_set_timeout(b, c->round_ns))
        _exit(10); /* the env backend is a star: it can bound them */
    if (!rc && c->silent_last && rank == c->started - 1) {
        sleep(3);
        _exit(9);
    }
    char **all = NULL;
    if (!rc)
        rc = tp_boot_allgather(b, "x", &all, &err);
    /* left out: the ranks never started, NULL in the allgather and gone on
     * every rank; rank 0 knows why */
    for (int r = 0; !rc && c->leave_out && r < c->size; r++) {
        bool out = r >= c->started;
        if ((all[r] == NULL) != out || tp_boot_gone(b, r) != out ||
            (rank == 0 && out && !strstr(tp_boot_gone_why(b, r), "did not join"))) {
            fprintf(stderr, "rank %d: rank %d: all %s, gone %d\n", rank, r, all[r] ? all[r] : "NULL",
                    tp_boot_gone(b, r));
            rc = 8;
        }
    }
    if (!rc && c->leave_out && tp_boot_barrier(b, &err))
        rc = rank_fail("barrier", &err);
    if (all)
        tp_boot_free_strings(all, c->size);
    if (!rc)
        tp_boot_fini(b);
    const char *want = c->expect[rank];
    if (!want)
        return rc ? rank_fail("env rank", &err) : 0;
    if (!rc) {
        fprintf(stderr, "rank %d succeeded, expected an error with '%s'\n", rank, want);
        return 6;
    }
    if (!strstr(err.msg, want)) {
        fprintf(stderr, "rank %d: error '%s' lacks '%s'\n", rank, err.msg, want);
        return 7;
    }
    return tp_exit_code(rc) == 2 ? 20 : 21; /* tell the test which exit class */
}

/* Start c->started ranks, return a bitmask of ranks whose status differed
 * from want (the exit status expected of every surviving rank). */
static unsigned run_env(struct env_case *c, int want)
{
    c->port = free_port();
    pid_t pids[8];
    for (int r = 0; r < c->started; r++) {
        fflush(NULL);
        pids[r] = fork();
        if (pids[r] == 0)
            _exit(env_rank(c, r));
    }
    unsigned bad = 0;
    for (int r = 0; r < c->started; r++) {
        int st;
        waitpid(pids[r], &st, 0);
        int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
        if (r == c->die_rank || (c->silent_last && r == c->started - 1))
            continue;
        if (code != want) {
            fprintf(stderr, "env rank %d exited %d, want %d\n", r, code, want);
            bad |= 1u << r;
        }
    }
    return bad;
}

static char key_a[64], key_b[64];

static void write_key(char *path, const char *text)
{
    strcpy(path, "/tmp/tp-boot-key-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

static void env_group(void **state)
{
    (void)state;
    struct env_case c = {.size = 4, .started = 4, .die_rank = -1, .timeout_ns = 10 * SEC};
    assert_int_equal(run_env(&c, 0), 0);
    write_key(key_a, "0123456789abcdef-secret-one");
    struct env_case k = {.size = 3,
                         .started = 3,
                         .die_rank = -1,
                         .timeout_ns = 10 * SEC,
                         .master = "127.0.0.1",
                         .key = {key_a, key_a, key_a}};
    assert_int_equal(run_env(&k, 0), 0);
}

static void env_options_differ(void **state)
{
    (void)state;
    const char *m = "with a different --sizes (\"8,1M\", where rank 0 has \"8\")";
    struct env_case c = {.size = 3,
                         .started = 3,
                         .die_rank = -1,
                         .timeout_ns = 10 * SEC,
                         .odd_sizes = "8,1M",
                         .expect = {m, m, m}};
    assert_int_equal(run_env(&c, 20), 0); /* every rank: exit class 2, naming the option */
}

static void env_rank_missing(void **state)
{
    (void)state;
    struct env_case c = {.size = 3,
                         .started = 2,
                         .die_rank = -1,
                         .timeout_ns = 1 * SEC,
                         .expect = {"rank(s) 2 did not join", "rank(s) 2 did not join"}};
    assert_int_equal(run_env(&c, 21), 0);
}

/* The same with leave_out: the group forms without rank 3 once the join's
 * time is up, and works: its NULLs, the same on every rank. */
static void env_rank_missing_left_out(void **state)
{
    (void)state;
    struct env_case c = {
        .size = 4, .started = 3, .die_rank = -1, .timeout_ns = 1 * SEC, .leave_out = true};
    assert_int_equal(run_env(&c, 0), 0);
}

static void env_rank_lost(void **state)
{
    (void)state;
    struct env_case c = {.size = 3,
                         .started = 3,
                         .die_rank = 2,
                         .timeout_ns = 5 * SEC,
                         .expect = {"rank 2 on ", "rank 2 on "}};
    assert_int_equal(run_env(&c, 21), 0);
}

/* A rank that joined and then stays silent (frozen, or cut off with its
 * connection open): with the group's operations bounded to 1 s, rank 0
 * names it lost within that (the message says 1 s, not the join's 10), and
 * tells the rest. */
static void env_rank_silent(void **state)
{
    (void)state;
    const char *m = "did not answer on the control connection within 1.0 s";
    struct env_case c = {.size = 3,
                         .started = 3,
                         .die_rank = -1,
                         .silent_last = true,
                         .round_ns = 1 * SEC,
                         .timeout_ns = 10 * SEC,
                         .expect = {m, m}};
    assert_int_equal(run_env(&c, 21), 0);
    /* and named, on both */
    struct env_case l = {.size = 3,
                         .started = 3,
                         .die_rank = -1,
                         .silent_last = true,
                         .round_ns = 1 * SEC,
                         .timeout_ns = 10 * SEC,
                         .expect = {"rank 2 on ", "rank 2 on "}};
    assert_int_equal(run_env(&l, 21), 0);
}

static void env_wrong_key_and_bad_env(void **state)
{
    (void)state;
    write_key(key_b, "0123456789abcdef-secret-two");
    struct env_case c = {.size = 2,
                         .started = 2,
                         .die_rank = -1,
                         .timeout_ns = 1 * SEC,
                         .key = {key_a, key_b},
                         .expect = {"rank(s) 1 did not join", "wrong key"}};
    assert_int_equal(run_env(&c, 21), 0);
    struct env_case n = {.size = 2,
                         .started = 1,
                         .die_rank = -1,
                         .timeout_ns = 1 * SEC,
                         .master = "10.250.0.1",
                         .expect = {"not a loopback address"}};
    assert_int_equal(run_env(&n, 20), 0);
    unsetenv("RANK");
    setenv("WORLD_SIZE", "two", 1);
    setenv("RANK", "0", 1);
    struct tp_boot_opts o = {.backend = "env", .timeout_ns = SEC};
    struct tp_boot *b;
    tp_error err;
    assert_int_equal(tp_boot_init(&o, &b, &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "WORLD_SIZE='two'"));
    unsetenv("RANK");
    unsetenv("WORLD_SIZE");
    unlink(key_a);
    unlink(key_b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_names),        cmocka_unit_test(table_detection),
        cmocka_unit_test(table_rank0),        cmocka_unit_test(table_launcher_vars),
        cmocka_unit_test(local_sizes),        cmocka_unit_test(local_few_files),
        cmocka_unit_test(local_leave_out),    cmocka_unit_test(local_lean),
        cmocka_unit_test(env_group),
        cmocka_unit_test(env_options_differ), cmocka_unit_test(env_rank_missing),
        cmocka_unit_test(env_rank_missing_left_out),
        cmocka_unit_test(env_rank_lost),      cmocka_unit_test(env_rank_silent),
        cmocka_unit_test(env_wrong_key_and_bad_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
