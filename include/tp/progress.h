/* Progress of long work on a terminal (src/core/progress.c): one line on
 * stderr, redrawn in place ("\r", the line, ESC [K) at most four times a
 * second, that says what is running, done/total, the time elapsed and an
 * estimate of the time left, and is cleared when the work ends, so that
 * what the command prints next starts on a clean line:
 *
 *     coll allreduce 1M (trainpath): 5/12 sizes, 0:12 elapsed, about 0:17 left
 *
 * One line per process: the commands' CLI decides whether it is wanted
 * (stderr a terminal, not -q, no --json -; tp_progress_terminal) and
 * passes that down in the options; the library begins the line on the
 * process that speaks for the run (rank 0, the parent of forked ranks) and
 * updates it between iterations, sizes or steps, never inside a timed
 * span. Every call is a no-op while no line is begun, so the code that
 * updates needs no flag of its own. A line written through tp_log while
 * the line is up erases it first (tp_progress_erase) and the line comes
 * back at the next update. A process forked while a line is up has none.
 * begin and end are called by the thread that owns the work; the updates
 * (set, add) by any thread while the line is up. docs/progress.md. */
#ifndef TP_PROGRESS_H
#define TP_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Flags of tp_progress_begin. */
enum {
    /* a thread of the module redraws the line four times a second: for a
     * caller that blocks (waits on a child, joins its threads) and so
     * cannot update it; its updates then only store */
    TP_PROGRESS_TICK = 1,
    /* work bound by time: done is the time since begin, in seconds, and
     * total the seconds it runs (tp_progress_set is not needed) */
    TP_PROGRESS_TIMED = 2,
};

/* Whether a progress line may be drawn at all: stderr is a terminal,
 * TERM is not "dumb" and TP_PROGRESS is not "0" in the environment. The
 * command adds its own conditions (not -q, no --json -). */
bool tp_progress_terminal(void);

/* Begin the line when on (else nothing happens, and every later call is a
 * no-op): what is running (made one line of safe text, tp/text.h), total
 * work (> 0) in unit ("sizes", "steps", "tests"; "s" for seconds, printed
 * as m:ss), flags as above. A line already up is ended first. Nothing is
 * drawn before a quarter of a second has passed, so short work shows none.
 * Never fails: without memory for a thread TP_PROGRESS_TICK is dropped. */
void tp_progress_begin(bool on, const char *what, double total, const char *unit, unsigned flags);

/* Whether a line is begun in this process. */
bool tp_progress_on(void);

/* What is running now (printf format), shown from the next draw on.
 * Takes a lock: call it between units of work, not in a timed loop. */
void tp_progress_what(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Work done so far, in the unit of begin (may be fractional: a size half
 * measured is 0.5). Thread-safe. Stores it and, without
 * TP_PROGRESS_TICK, draws the line when the last draw is a quarter of a
 * second old (one clock read otherwise: cheap, but still call it between
 * iterations, not per message). */
void tp_progress_set(double done);

/* Add n to the work done (tp_progress_set's rules). */
void tp_progress_add(double n);

/* Change the total (work found to be more or less than planned). */
void tp_progress_total(double total);

/* The caller's own estimate of the seconds left from now (validate: the
 * profile's expected seconds of the tests to come): shown counting down
 * instead of the estimate from the rate so far, until the next call; once
 * it has run out no estimate is shown. A negative left_s goes back to the
 * rate. */
void tp_progress_left(double left_s);

/* Erase the line now, before the caller prints to the terminal (a table
 * row); it is drawn again at the next tp_progress_set or
 * tp_progress_what. */
void tp_progress_hide(void);

/* End the line: stop the thread of TP_PROGRESS_TICK, erase what is drawn.
 * Nothing when none is begun. */
void tp_progress_end(void);

/* The logger's hook: "\r\033[K" when this process has a line begun (to be
 * put before a line written to stderr, in the same write, so the line
 * printed is not appended to the progress line; the line is drawn again at
 * the next update), else "". Lock-free: safe from any thread and in a
 * child between fork and exec. */
const char *tp_progress_erase(void);

/* ---- the arithmetic, public for tests ---- */

/* Seconds left at the rate so far: elapsed_s * (total - done) / done; 0
 * once done >= total; -1 (no estimate) before any work is done or time
 * has passed. */
double tp_progress_eta_s(double done, double total, double elapsed_s);

/* The line (no "\r", no escape) into buf (cap > 0), at most columns - 1
 * characters (columns < 20: 80): "WHAT: DONE/TOTAL UNIT, E elapsed, about
 * L left". elapsed_s < 0 leaves "elapsed" out (TP_PROGRESS_TIMED, where
 * done is the elapsed time); left_s < 0 leaves the estimate out. A WHAT
 * too long for the width is cut, the figures are kept. Returns the length
 * written. */
size_t tp_progress_format(char *buf, size_t cap, const char *what, double done, double total,
                          const char *unit, double elapsed_s, double left_s, int columns);

/* Tests: draw to fd instead of stderr, read the time from now_ns (NULL:
 * CLOCK_MONOTONIC), and take the width as columns (0: the terminal's, else
 * 80). fd < 0 restores stderr. Call it while no line is begun. */
void tp_progress_test_hooks(int fd, uint64_t (*now_ns)(void), int columns);

#endif
