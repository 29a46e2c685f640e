/* The local backend: rank 0 forks the other ranks on this host, each of
 * which joins the star at a loopback port rank 0 listens on. The key is made
 * fresh and shared through fork, so nobody else on the host can join; rank
 * 0's fini reaps the ranks it forked and reports the worst exit status. A
 * forked rank gets SIGTERM when rank 0 dies, so none outlives the job. */
#include <errno.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "boot_int.h"
#include "tp/clock.h"
#include "tp/intr.h"

/* Rank 0 of a local group hangs up first (a rank blocked on it ends), then
 * waits for the ranks it forked, killing those still running after the
 * timeout. */
static int local_fini(struct tp_boot *b)
{
    int worst = 0;
    tp__boot_hang_up(b);
    if (b->children)
        tp_intr_forward(NULL, 0);
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
    tp__boot_free(b);
    return worst;
}

static int local_init(const struct tp_boot_opts *o, struct tp_boot **out, tp_error *err)
{
    if (o->nranks < 1 || o->nranks > TP_BOOT_MAX_RANKS)
        return tp_error_set(err, TP_EUSAGE, "-n %d: need 1..%d ranks", o->nranks,
                            TP_BOOT_MAX_RANKS);
    struct tp_boot *b = tp__boot_new(&tp__boot_local, 0, o->nranks, o->timeout_ns);
    if (!b)
        return tp_error_set(err, TP_ENOMEM, "group of %d", o->nranks);
    b->children = calloc((size_t)o->nranks, sizeof *b->children);
    if (!b->children || sodium_init() < 0) {
        tp__boot_free(b);
        return tp_error_set(err, TP_ENOMEM, "group of %d", o->nranks);
    }
    /* a fresh key, shared with the ranks through fork: nobody else on this
     * host can join the group */
    b->lean = o->lean;
    b->key.set = true;
    b->key.len = 32;
    randombytes_buf(b->key.bytes, b->key.len);
    int lfd = -1, port = 0, rc = 0;
    if (o->nranks > 1 && (rc = tp_listen("127.0.0.1", 0, "rank 0", &lfd, &port, NULL, err))) {
        tp__boot_free(b);
        return rc;
    }
    fflush(NULL);
    /* a signal sent to rank 0 alone (kill PID, a batch system's SIGTERM)
     * reaches every rank, which then stops at its own safe point */
    tp_intr_forward(b->children, o->nranks);
    pid_t parent = getpid();
    for (int r = 1; r < o->nranks; r++) {
        pid_t pid = fork();
        if (pid < 0) {
            rc = tp_error_errno(err, TP_ESYS, errno, "cannot fork rank %d", r);
            break;
        }
        if (pid == 0) {
            /* a rank ends with rank 0 even when rank 0 was killed (SIGKILL,
             * the OOM killer) and could not pass a signal on: SIGTERM stops
             * it at its next safe point, so no rank is left computing */
            prctl(PR_SET_PDEATHSIG, SIGTERM);
            if (getppid() != parent)
                tp_intr_raise(SIGTERM); /* rank 0 died before the line above */
            close(lfd);
            tp_intr_forward(NULL, 0);
            free(b->children);
            b->children = NULL;
            b->rank = r;
            rc = tp__boot_join(b, "127.0.0.1", port, o->options, err);
            if (rc) {
                tp__boot_free(b);
                return rc;
            }
            *out = b;
            return 0;
        }
        b->children[r] = pid;
    }
    if (!rc && o->nranks > 1)
        rc = tp__boot_lead(b, lfd, o->options, err);
    if (lfd >= 0)
        close(lfd);
    if (rc) {
        local_fini(b);
        return rc;
    }
    if (o->nranks == 1)
        b->hosts[0] = strdup(tp__boot_my_host());
    *out = b;
    return 0;
}

const struct tp_boot_backend tp__boot_local = {
    .name = "local",
    .init = local_init,
    .allgather = tp__boot_star_allgather,
    .gather = tp__boot_star_gather,
    .scatter = tp__boot_star_scatter,
    .barrier = tp__boot_star_barrier,
    .set_timeout = tp__boot_star_set_timeout,
    .can_leave_out = true,
    .fini = local_fini,
};
