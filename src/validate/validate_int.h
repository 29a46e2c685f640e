/* validate's parts, shared by the files of src/validate/: the context of one
 * validation, the child runner (run.c) and the outputs (outputs.c), which
 * the host mode (host.c) and the allocation mode (alloc.c) use and which
 * call neither back. Internal to the library. */
#ifndef TP_VALIDATE_INT_H
#define TP_VALIDATE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

#include "tp/boot.h"
#include "tp/error.h"
#include "tp/validate.h"

struct tp__validate_ctx {
    const char *profile, *out, *db, *policy, *prom, *only, *iface, *launcher, *key_file;
    bool quiet, tty;
    int pairs_at_once;  /* allocation: pairs measured at once (0: a whole round) */
    char dir[4096];     /* the scratch folder for io and step */
    char outdir[4096];  /* the results folder */
    char keyfile[4200]; /* allocation: the session key of the net servers */
    char addr[64];      /* the address the net server listens on */
    char port[16];
    char plan[4200]; /* the plan file, once written */
    pid_t server;
    char **envp; /* for the children: the launcher's variables removed */
    struct tp_validate_list tests;
    double t0;
};

/* ---- run.c: the children ---- */

double tp__validate_now_s(void);

/* The environment of the children: this process's, without the variables
 * by which a launcher makes a process a rank (an array of environ's
 * strings, to free alone). NULL when out of memory. */
char **tp__validate_child_env(void);

/* Run t with its document at DOCDIR/NAME.json and its output in
 * DOCDIR/NAME.log, against the net server at peer:port (NULL: none). Fills
 * t->rc, t->took_s and t->why; returns "PASS", "WARN" or "FAIL". */
const char *tp__validate_run_test(struct tp__validate_ctx *c, struct tp_validate_test *t,
                                  const char *docdir, const char *peer, const char *port);

/* The verdict of a test that has run, as tp__validate_run_test returned it. */
const char *tp__validate_status(const struct tp_validate_test *t);

/* Start net serve on c->addr (port chosen by the kernel, into c->port),
 * its log in logdir; with c->keyfile set the clients must prove the key.
 * Returns 0; on error TP_ESYS naming the address and the log, no server
 * left. Stop it (none running: nothing). */
int tp__validate_start_server(struct tp__validate_ctx *c, const char *logdir, tp_error *err);
void tp__validate_stop_server(struct tp__validate_ctx *c);

/* The progress line on a terminal: "[i/n] what: elapsed, left". */
void tp__validate_progress(const struct tp__validate_ctx *c, int i, int n, const char *what,
                           double left_s);
void tp__validate_progress_clear(const struct tp__validate_ctx *c);

/* ---- outputs.c: the results folder ---- */

/* Create path and its parents. Returns 0 or -1 (errno). */
int tp__validate_mkdirs(const char *path);

/* The plan of the machine measured: nodes of gpus_per_node, the network and
 * storage from the documents given (paths relative to the plan file, which
 * is written to c->plan). Returns 0 or -1 (errno). */
int tp__validate_write_plan(struct tp__validate_ctx *c, int nodes, int gpus_per_node,
                            const char *net_lat, const char *net_bw, const char *coll,
                            const char *io);

/* The end of every validation: docs into the history database (tagged with
 * one batch), the Prometheus textfile from rows (an array of metric rows,
 * with "host" where they came from several), the HTML report from html_docs
 * and verdicts; prints where each went unless quiet. Returns 0, or 1 when
 * one of them could not be written (the message printed). */
int tp__validate_outputs(struct tp__validate_ctx *c, const json_t *const *docs, size_t n,
                         const json_t *const *html_docs, size_t nh, const json_t *rows,
                         const json_t *verdicts);

/* Print "trainpath: error: MSG" once and return the exit status for err. */
int tp__validate_fail(const tp_error *err);

/* ---- the modes ---- */

/* host.c: this host alone, the net tests against a server on loopback.
 * Returns the exit status. */
int tp__validate_host(struct tp__validate_ctx *c);

/* alloc.c: this process is one node of a group of size > 1 (mpirun, srun,
 * torchrun): per-node tests, then the pairs between nodes, then rank 0
 * gathers, judges the fleet and writes the results folder. Returns the
 * exit status, the same on every node. */
int tp__validate_alloc(struct tp__validate_ctx *c, struct tp_boot *b);

#endif
