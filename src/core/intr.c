/* SIGINT/SIGTERM as a recorded failure (include/tp/intr.h). The handler does
 * what is async-signal-safe and nothing more: store the signal, forward it
 * to the registered processes, and on a second signal restore the default
 * action and raise it again. */
#include "tp/intr.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static atomic_int recorded;
static const pid_t *_Atomic fwd_pids;
static atomic_int fwd_n;

static void forward(int sig)
{
    const pid_t *p = atomic_load(&fwd_pids);
    int n = atomic_load(&fwd_n);
    for (int i = 0; p && i < n; i++)
        if (p[i] > 0)
            kill(p[i], sig);
}

static void on_signal(int sig)
{
    int none = 0;
    if (!atomic_compare_exchange_strong(&recorded, &none, sig)) {
        /* the second one: the user means it */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    forward(sig);
}

void tp_intr_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int tp_intr_signal(void)
{
    return atomic_load_explicit(&recorded, memory_order_relaxed);
}

static int code_of(int sig)
{
    return sig == SIGINT ? TP_EINTR : TP_ETERM;
}

int tp_intr_check(tp_error *err)
{
    int sig = tp_intr_signal();
    if (!sig)
        return 0;
    return tp_error_set(err, code_of(sig), "interrupted by %s", sig == SIGINT ? "SIGINT" : "SIGTERM");
}

int tp_intr_blame(int code, tp_error *err)
{
    int sig = tp_intr_signal();
    if (!sig || code == TP_OK || code == TP_EUSAGE)
        return code;
    int icode = code_of(sig);
    if (!err)
        return icode;
    const char *name = sig == SIGINT ? "SIGINT" : "SIGTERM";
    if (strncmp(err->msg, "interrupted by ", 15) == 0) {
        err->code = icode;
        return icode;
    }
    /* a peer's echo of the interrupt this process forwarded to it ("rank 1
     * on h: interrupted by SIGINT"): the interrupt is the whole story */
    if (tp_code_is_intr(err->code)) {
        tp_error_set(err, icode, "interrupted by %s", name);
        return icode;
    }
    char was[sizeof err->msg];
    snprintf(was, sizeof was, "%s", err->msg);
    if (was[0])
        tp_error_set(err, icode, "interrupted by %s: %s", name, was);
    else
        tp_error_set(err, icode, "interrupted by %s", name);
    return icode;
}

void tp_intr_forward(const pid_t *pids, int n)
{
    atomic_store(&fwd_n, 0);
    atomic_store(&fwd_pids, pids);
    atomic_store(&fwd_n, pids ? n : 0);
    int sig = tp_intr_signal();
    if (sig && pids)
        forward(sig);
}

void tp_intr_raise(int sig)
{
    int none = 0;
    if (atomic_compare_exchange_strong(&recorded, &none, sig))
        forward(sig);
}
