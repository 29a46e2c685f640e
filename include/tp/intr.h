/* Interrupts (src/core/intr.c): SIGINT and SIGTERM are failures like any
 * other. The handler only records the signal; every long-running loop asks
 * tp_intr_check at its next safe point, stops there, removes what the run
 * created and did not keep, and lets the error rise like any other, so the
 * failed result document says "interrupted by SIGINT" and the process exits
 * 128 + the signal (130, 143). A second signal ends the process at once with
 * the signal's default action, for a loop that does not get to ask. */
#ifndef TP_INTR_H
#define TP_INTR_H

#include <sys/types.h>

#include "tp/error.h"

/* Install the handler for SIGINT and SIGTERM (without SA_RESTART: a blocking
 * call returns EINTR on the thread that took the signal). Idempotent. */
void tp_intr_install(void);

/* The signal recorded since tp_intr_install (SIGINT or SIGTERM), or 0.
 * Cheap enough for a hot loop (one relaxed load); async-signal-safe. */
int tp_intr_signal(void);

/* 0 when no signal was recorded; else TP_EINTR (SIGINT) or TP_ETERM
 * (SIGTERM), with "interrupted by SIGINT" (or SIGTERM) in err. */
int tp_intr_check(tp_error *err);

/* Forward a recorded signal to these processes too (the ranks a local group
 * forked: a signal sent to rank 0 alone reaches every rank). The handler
 * reads pids[0..n) when a signal comes, so the array must outlive the
 * registration; tp_intr_forward(NULL, 0) ends it. Forwarding happens in the
 * handler (kill(2) is async-signal-safe); a signal that came before the
 * registration is forwarded at once. */
void tp_intr_forward(const pid_t *pids, int n);

/* When a signal was recorded and code is a failure other than bad input,
 * the failure is the interrupt's (a peer that stopped, a call cut short):
 * returns TP_EINTR or TP_ETERM and, when err is not NULL, sets it to "interrupted by
 * SIGINT" followed by ": " and the earlier message, if there was one and it
 * did not already begin with "interrupted by "; a failure that already
 * carries an interrupt code but begins otherwise (a peer's report of the
 * interrupt this process forwarded to it) becomes "interrupted by SIGINT"
 * alone. Otherwise returns code and leaves err alone. */
int tp_intr_blame(int code, tp_error *err);

/* Record sig as if it had been delivered (tests; a parent that learned of
 * an interrupt from a child). */
void tp_intr_raise(int sig);

/* The environment variable validate sets in the tests it runs: where it is
 * set, an interrupt the parent passed on is not said again by the child's
 * CLI (the parent says it, and its table names the test it stopped). */
#define TP_INTR_SAID_BY_PARENT "TP_INTR_SAID_BY_PARENT"

#endif
