/* Rank 0's memory and time gathering every node's result: tp_boot_gather
 * (every rank's string held at once, as validate did before) against
 * tp_boot_gather_each (one rank's at a time). A local group of N ranks
 * (processes on this host, over loopback), each giving a string of S
 * bytes, as large as a node's result (its documents: 180-270 KB here).
 * Prints one line per mode: rank 0's peak resident memory (its own process)
 * and the gather's wall time, best of R.
 *
 * usage: fleet_gather N S R */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tp/boot.h"
#include "tp/clock.h"

struct seen {
    size_t bytes;
};

static int count(void *ctx, int r, const char *data, tp_error *err)
{
    (void)r;
    (void)err;
    ((struct seen *)ctx)->bytes += strlen(data);
    return 0;
}

/* One mode in a fresh process (its own peak memory): 0 all, 1 each. */
static int run(int mode, int n, size_t s, int reps)
{
    json_t *opts = json_object();
    struct tp_boot_opts o = {.backend = "local", .nranks = n, .timeout_ns = 120000000000ull,
                             .options = opts};
    struct tp_boot *b;
    tp_error err;
    if (tp_boot_init(&o, &b, &err)) {
        fprintf(stderr, "fleet_gather: %s\n", err.msg);
        return 2;
    }
    char *mine = malloc(s + 1);
    memset(mine, 'a' + tp_boot_rank(b) % 26, s);
    mine[s] = 0;
    double best = 1e30;
    size_t got = 0;
    for (int k = 0; k < reps; k++) {
        if (tp_boot_barrier(b, &err))
            return 3;
        uint64_t t0 = tp_now_ns();
        if (mode == 0) {
            char **all = NULL;
            if (tp_boot_gather(b, mine, &all, &err))
                return 4;
            got = 0;
            for (int r = 0; all && r < n; r++)
                got += strlen(all[r]);
            tp_boot_free_strings(all, n);
        } else {
            struct seen sn = {0};
            if (tp_boot_gather_each(b, mine, count, &sn, &err))
                return 4;
            got = sn.bytes;
        }
        double t = (double)(tp_now_ns() - t0) / 1e9;
        best = t < best ? t : best;
    }
    free(mine);
    json_decref(opts);
    if (tp_boot_rank(b) != 0) {
        tp_boot_fini(b);
        _exit(0);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%-22s %5d ranks x %7zu B: rank 0 peak %8.1f MiB, best %.3f s (%zu B gathered)\n",
           mode ? "tp_boot_gather_each" : "tp_boot_gather", n, s, (double)ru.ru_maxrss / 1024.0, best,
           got);
    fflush(stdout);
    return tp_boot_fini(b);
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return fprintf(stderr, "usage: fleet_gather N S R\n"), 2;
    int n = atoi(argv[1]), reps = atoi(argv[3]);
    size_t s = (size_t)atol(argv[2]);
    if (n < 2 || reps < 1 || s < 1)
        return fprintf(stderr, "fleet_gather: N >= 2, S >= 1, R >= 1\n"), 2;
    int worst = 0;
    for (int mode = 0; mode < 2; mode++) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0)
            _exit(run(mode, n, s, reps));
        int st;
        waitpid(pid, &st, 0);
        int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
        worst = rc > worst ? rc : worst;
    }
    return worst;
}
