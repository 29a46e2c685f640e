/* validate's parts, shared by the host mode (validate_cmd.c) and the
 * allocation mode (validate_alloc.c). Internal to cli/. */
#ifndef TP_CLI_VALIDATE_H
#define TP_CLI_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

#include "tp/boot.h"
#include "tp/error.h"

#define VT_MAX_TESTS 24
#define VT_MAX_ARGS 48

/* One test: a command line of this binary. Words in argv that are
 * placeholders are filled when it runs: PEER and PORT (the net server to
 * measure against), KEY (--key-file and the session key, or nothing), PLAN
 * (the plan file of this machine). */
struct vt_test {
    const char *name;  /* the document's file name, without .json */
    const char *what;  /* for the progress line and the summary */
    const char *group; /* check, net, coll, io, step, plan: what --only picks */
    double expect_s;   /* roughly how long it takes here */
    int argc;
    const char *argv[VT_MAX_ARGS];
    bool nagios;      /* exit codes 0..2 are verdicts, not failures (check) */
    bool directional; /* between nodes: measured both ways (bandwidth) */
    /* filled when run */
    int rc;
    double took_s;
    char why[256];
};

struct vt_ctx {
    const char *profile, *out, *db, *policy, *prom, *only, *iface, *launcher, *key_file;
    bool quiet, tty;
    int pairs_at_once;  /* allocation: pairs measured at once (0: a whole round) */
    char dir[4096];     /* the scratch folder for io and step */
    char outdir[4096];  /* the results folder */
    char keyfile[4200]; /* allocation: the session key of the net servers */
    char addr[64];      /* the address the net server listens on */
    char port[16];
    char plan[4200];    /* the plan file, once written */
    pid_t server;
    char **envp; /* for the children: the launcher's variables removed */
    struct vt_test t[VT_MAX_TESTS];
    int n;
    double t0;
};

double validate_now_s(void);

/* The child's deadline: a hang is a failed test, not a hung validation. */
double validate_deadline_s(const struct vt_test *t);

/* Run t with its document at DOCDIR/NAME.json and its output in
 * DOCDIR/NAME.log, against the net server at peer:port (NULL: none). Fills
 * t->rc, t->took_s and t->why; returns "PASS", "WARN" or "FAIL". */
const char *validate_run(struct vt_ctx *c, struct vt_test *t, const char *docdir,
                         const char *peer, const char *port);

/* The verdict of a test that has run, as validate_run returned it. */
const char *validate_status(const struct vt_test *t);

/* Start net serve on c->addr (port chosen by the kernel, into c->port),
 * its log in logdir; with c->keyfile set the clients must prove the key.
 * Stop it. */
int validate_start_server(struct vt_ctx *c, const char *logdir, tp_error *err);
void validate_stop_server(struct vt_ctx *c);

/* The plan of the machine measured: nodes of gpus_per_node, the network and
 * storage from the documents given (paths relative to the plan file, which
 * is written to c->plan). Returns 0 or -1 (errno). */
int validate_write_plan(struct vt_ctx *c, int nodes, int gpus_per_node, const char *net_lat,
                        const char *net_bw, const char *coll, const char *io);

/* The progress line on a terminal: "[i/n] what: elapsed, left". */
void validate_progress(const struct vt_ctx *c, int i, int n, const char *what, double left_s);
void validate_progress_clear(const struct vt_ctx *c);

/* Create path and its parents. Returns 0 or -1 (errno). */
int validate_mkdirs(const char *path);

/* The end of every validation: docs into the history database (tagged with
 * one batch), the Prometheus textfile from rows (an array of metric rows,
 * with "host" where they came from several), the HTML report from html_docs
 * and verdicts; prints where each went unless quiet. Returns 0, or 1 when
 * one of them could not be written (the message printed). */
int validate_outputs(struct vt_ctx *c, const json_t *const *docs, size_t n,
                     const json_t *const *html_docs, size_t nh, const json_t *rows,
                     const json_t *verdicts);

/* Allocation mode: this process is one node of a group of size > 1 (mpirun,
 * srun, torchrun): per-node tests, then the pairs between nodes, then rank
 * 0 gathers, judges the fleet and writes the results folder. Returns the
 * exit status. */
int validate_alloc(struct vt_ctx *c, struct tp_boot *b);

#endif
