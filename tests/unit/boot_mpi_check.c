/* Run under mpirun by tests/integration/boot/boot_mpi.sh: each rank joins the
 * group through the mpi backend, allgathers its name, checks everyone's,
 * meets at a barrier and checks its clock offset. TP_TEST_ODD_RANK=r makes
 * rank r start with different options: every rank must then fail with exit
 * 2 naming the option. Prints one line per rank. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tp/boot.h"
#include "boot_gather.h"
#include "tp/clock.h"

int main(void)
{
    /* the rank before MPI starts: mpirun sets OMPI_*, srun --mpi=pmix PMIX_* */
    const char *env_rank = getenv("OMPI_COMM_WORLD_RANK");
    if (!env_rank)
        env_rank = getenv("PMIX_RANK");
    if (!env_rank)
        env_rank = getenv("SLURM_PROCID");
    const char *odd = getenv("TP_TEST_ODD_RANK");
    int me = env_rank ? atoi(env_rank) : -1;
    json_t *opts =
        json_pack("{s:s, s:i}", "sizes", odd && atoi(odd) == me ? "8,1M" : "8", "iters", 10);
    if (me == 1) /* a clock 3 s ahead: the offset estimate must find it */
        setenv("TP_CLOCK_SKEW_NS", "3000000000", 1);
    struct tp_boot_opts o = {.timeout_ns = 10000000000ull, .options = opts};
    struct tp_boot *b;
    tp_error err;
    int rc = tp_boot_init(&o, &b, &err);
    json_decref(opts);
    if (rc) {
        printf("rank %d: boot failed: %s\n", me, err.msg);
        fflush(stdout);
        /* mpirun kills the other ranks once one exits non-zero: give them
         * time to print their own line first */
        usleep(500000);
        return tp_exit_code(rc);
    }
    int rank = tp_boot_rank(b), size = tp_boot_size(b);
    char mine[32], want[32], **all = NULL;
    snprintf(mine, sizeof mine, "rank-%d", rank);
    if ((rc = tp_boot_allgather(b, mine, &all, &err)) || (rc = tp_boot_barrier(b, &err))) {
        printf("rank %d: %s\n", rank, err.msg);
        return 1;
    }
    for (int r = 0; r < size; r++) {
        snprintf(want, sizeof want, "rank-%d", r);
        if (strcmp(all[r], want) != 0) {
            printf("rank %d: all[%d] = '%s', want '%s'\n", rank, r, all[r], want);
            return 1;
        }
    }
    tp_boot_free_strings(all, size);
    /* right after a barrier every rank reads its clock; corrected by the
     * estimated offsets, the readings must agree (to scheduling delay) */
    char now[32];
    if (tp_boot_barrier(b, &err)) {
        printf("rank %d: %s\n", rank, err.msg);
        return 1;
    }
    snprintf(now, sizeof now, "%llu", (unsigned long long)tp_now_ns());
    if (tp_boot_allgather(b, now, &all, &err)) {
        printf("rank %d: %s\n", rank, err.msg);
        return 1;
    }
    double t0 = (double)strtoull(all[0], NULL, 10);
    for (int r = 1; r < size; r++) {
        double tr = (double)strtoull(all[r], NULL, 10) - (double)tp_boot_clock_offset_ns(b, r);
        if (tr - t0 > 50e6 || t0 - tr > 50e6) {
            printf("rank %d: rank %d's corrected clock is %.1f ms off rank 0's (offset %lld ns)\n",
                   rank, r, (tr - t0) / 1e6, (long long)tp_boot_clock_offset_ns(b, r));
            return 1;
        }
    }
    /* the estimate is off by at most half the round trip of its best
     * exchange (20 sanitized ranks on two cores can wait out a time slice
     * inside one: 190 ms seen), and 100 ms besides */
    long long off1 = size > 1 ? (long long)tp_boot_clock_offset_ns(b, 1) : 0;
    long long slack = size > 1 ? 100000000ll + (long long)(tp_boot_clock_rtt_ns(b, 1) / 2) : 0;
    if (size > 1 && (off1 < 3000000000ll - slack || off1 > 3000000000ll + slack)) {
        printf("rank %d: rank 1's offset %lld ns misses its 3 s skew by more than %lld ns "
               "(100 ms and half its round trip)\n", rank, off1, slack);
        return 1;
    }
    tp_boot_free_strings(all, size);
    if (gather_check(b) || gather_each_check(b) || allgather_long_check(b) ||
        scatter_check(b) || bcast_check(b))
        return 1;
    printf("ok rank %d of %d on %s\n", rank, size, tp_boot_host(b, rank));
    return tp_boot_fini(b);
}
