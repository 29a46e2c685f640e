/* trainpath validate: the main job. A profile (quick, standard, extended) is
 * a list of tests, each a command line of this binary (check, net, coll, io,
 * step, plan) run as a child process with a deadline, each writing its
 * result document into one results folder; then the history database, the
 * Prometheus textfile and the HTML report there.
 *
 * Alone it validates this host (local ranks over loopback and shared memory,
 * storage in a scratch folder under /var/tmp). Under mpirun, srun or
 * torchrun each process is one node of the allocation: every node alone,
 * then every pair of nodes, and rank 0 judges the fleet. */
#ifndef TP_VALIDATE_H
#define TP_VALIDATE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "tp/error.h"

#define TP_VALIDATE_MAX_TESTS 24
#define TP_VALIDATE_MAX_ARGS 48

/* What a test is to a validation, from its profile row: where it runs and
 * what is done with its result. */
enum tp_validate_role {
    TP_VALIDATE_NODE,       /* each node's own test (check, coll, io, step) */
    TP_VALIDATE_PAIR,       /* between two nodes, against the other's net server (a host
                               alone: on loopback) */
    TP_VALIDATE_ACROSS,     /* a collective across a group of nodes: only the tiers run it */
    TP_VALIDATE_SCREEN,     /* a node's own test whose chain rank 0 judges across the nodes
                               (sdc: its cores') */
    TP_VALIDATE_SCREEN_GPU, /* ... its GPUs' chains (sdc-gpu) */
    TP_VALIDATE_AFTER,      /* after the others, once, on their documents (inputs): the plan */
};

/* The documents a test after the others reads, each by the name of the
 * test that writes it (NAME.json). */
struct tp_validate_inputs {
    const char *net_lat, *net_bw; /* between nodes: rank 0's first pair's */
    const char *coll, *io;        /* a node's own: rank 0's */
};

/* One test: a command line of this binary. Words in argv that are
 * placeholders are filled when it runs: PEER and PORT (the net server to
 * measure against), KEY (--key-file and the session key, or nothing), PLAN
 * (the plan file of this machine). */
struct tp_validate_test {
    const char *name;  /* the document's file name, without .json */
    const char *what;  /* for the progress line and the summary */
    const char *group; /* check, net, coll, io, step, sdc, plan: what --only picks */
    double expect_s;   /* roughly how long it takes here */
    int argc;
    const char *argv[TP_VALIDATE_MAX_ARGS]; /* without argv[0] and --json */
    enum tp_validate_role role;
    const struct tp_validate_inputs *inputs; /* TP_VALIDATE_AFTER's, else NULL */
    bool nagios;      /* exit codes 0..2 are verdicts, not failures (check) */
    bool directional; /* between nodes: measured both ways (bandwidth) */
    bool traced;      /* the command writes a timeline with --trace (coll, step) */
    /* filled when it runs (zero in a fresh list) */
    int rc;
    double took_s;
    char why[256];
};

/* The tests of a profile, in the order they run. argv's words point into
 * this list (words, ngpu), into the policy and scratch strings it was built
 * with and into static text: keep those while it is used, and do not copy
 * the list by value. */
struct tp_validate_list {
    int n;
    struct tp_validate_test t[TP_VALIDATE_MAX_TESTS];
    char ngpu[16];    /* the rank count of the GPU tests */
    char sdc_time[32]; /* the sdc test's --time (tp_validate_sdc_soak) */
    char words[4096]; /* the arguments, split */
};

/* Build the tests of profile ("quick", "standard" or "extended") into *out
 * without running anything. only: the groups to keep, comma-separated
 * (check,net,coll,io,step,sdc,plan; NULL: every group), in the profile's order;
 * plan needs net, coll and io. policy: the audit's plane policy file (NULL:
 * node rules only). ngpu: the GPUs here (0: none; more adds NCCL's
 * allreduce and a GPU-compute step, one rank per GPU). scratch: the folder
 * io and step write into. Returns 0; on error TP_EUSAGE with err naming the
 * profile or the --only list at fault (the messages of `trainpath
 * validate`), and *out holds no tests. */
int tp_validate_tests(const char *profile, const char *only, const char *policy, int ngpu,
                      const char *scratch, struct tp_validate_list *out, tp_error *err);

/* Make list's sdc test a soak of about minutes (> 0) instead of its
 * profile's time (validate --sdc-minutes). Returns 0, or TP_EUSAGE when
 * the list has no sdc test (only: the --only that left it out). */
int tp_validate_sdc_soak(struct tp_validate_list *l, const char *only, double minutes,
                         tp_error *err);

/* What `trainpath validate` was asked. */
struct tp_validate_opts {
    const char *profile;  /* quick (NULL), standard or extended */
    const char *out;      /* the results folder; NULL: results/validate-UTCSTAMP, named by rank 0 */
    const char *db;       /* the history database; NULL: OUT/history.sqlite */
    const char *only;     /* groups to run (see tp_validate_tests); NULL: all */
    const char *policy;   /* the plane policy of the audit; NULL: node rules only */
    const char *prom;     /* the Prometheus textfile to write; NULL: none */
    const char *launcher; /* local, mpi or env; NULL: detected (tp_boot_detect) */
    const char *iface;    /* allocation: the interface the other nodes reach */
    const char *key_file; /* env launcher: the pre-shared key of the rendezvous */
    int pairs_at_once;    /* allocation: pairs measured at once (0: a whole round) */
    const char *tier;     /* allocation: prolog, screen (NULL) or full (tp/triage.h) */
    double budget_s;      /* > 0: the deepest tier whose estimate fits (not with tier) */
    int matchings;        /* screen: random perfect matchings (0: 4) */
    uint64_t seed;        /* the tier's draws (0: rank 0 draws one) */
    double min_effect;    /* slow: at least this far above the median (0: 0.10) */
    double node_timeout_s; /* a node silent this long in a round is lost (0: the round's
                            * test deadlines) */
    const char *on_fail;  /* none (NULL) or drain (Slurm: scontrol) */
    double sdc_minutes;   /* > 0: the sdc test a soak of about this long */
    const char *topology; /* allocation: the fabric's topology file (tp/topology.h), or NULL */
    const char *plan;     /* allocation: the job's plan file (tp/plan.h): its GPUs a node,
                           * MTBF and restart for the decision to evict or isolate; NULL */
    int spare_nodes;      /* allocation: nodes standing by, for that decision */
    bool quiet;           /* no progress line, no summary */
    bool progress_line;   /* the progress line on stderr (tp/progress.h; the CLI: a terminal
                             and not quiet) */
    bool trace;           /* each coll and step test also writes its timeline
                             (NAME.trace.json beside NAME.json) */
};

/* Validate: check the options (--policy and --key-file readable, the
 * launcher, the profile and --only), join the group when launched (mpi,
 * env), make the results folder and a scratch folder, then validate this
 * host alone or, in a group of more than one, the allocation; prints the
 * progress line, the summary and where the outputs went unless quiet, and
 * removes the scratch folder. Returns the exit status of a validation that
 * ran: 0 every test ran and none failed; 1 a test failed, the audit found a
 * critical finding, the fleet a slow node or link, an output could not be
 * written or a step failed (said on stderr, "trainpath: error: ..."). On
 * error before anything ran, a negative TP_E* code with err set, nothing
 * printed and nothing left but the results folder if it was made:
 * TP_EUSAGE for bad input (exit 2), else the group that could not form or
 * the scratch folder that could not be made. After SIGINT or SIGTERM
 * (tp/intr.h): the running test is passed the signal and given 10 s to
 * write its failed document, no further test starts, the outputs are
 * written from what ran, the scratch folder is removed, and the return is
 * TP_EINTR or TP_ETERM with err saying so. */
int tp_validate_run(const struct tp_validate_opts *o, tp_error *err);

/* What `trainpath validate --simulate FLEET` was asked: the triage of a
 * model fleet (tp/triage.h), planned, judged and isolated by the code a
 * real allocation will use, with every figure drawn from the model. */
struct tp_validate_sim_opts {
    const char *fleet; /* the model fleet's YAML file (docs/fleet.md) */
    const char *tier;  /* prolog, screen or full; NULL: screen, or picked by budget_s */
    double budget_s;   /* > 0: the deepest tier whose estimate fits (not with tier) */
    int matchings;     /* screen: random perfect matchings (0: 4) */
    uint64_t seed;     /* the planner's draws (0: the fleet file's seed) */
    double min_effect; /* slow: at least this far above the median (0: 0.10) */
    double pair_s, group_s; /* per-test durations of the estimate (0: 3 s, 5 s) */
    const char *json;  /* the result document ("-": stdout), or NULL */
    bool quiet;        /* no plan, no summary */
};

/* Simulate: read the fleet file, pick the tier (by budget_s when given),
 * print the plan (rounds per stage, the estimated wall time with and
 * without the isolation's bound), run the triage against the model and
 * print what it named, the planted faults it missed or named falsely and
 * the isolation rounds it took, unless quiet (to stderr when json is "-").
 * Writes the result document "validate simulate" when json is set, also
 * when the run fails. Returns 0 when every planted fault was named and
 * nothing else, 1 when one was missed or a sound node or link named; a
 * negative TP_E* code with err set on error (TP_EUSAGE: the fleet file, a
 * value out of range or a budget no tier fits, naming it; nothing run). */
int tp_validate_simulate(const struct tp_validate_sim_opts *o, tp_error *err);

/* On every node that verdicts (a triage result: its nodes_detail, node k
 * being labels[k], k < n) name slow, link, suspect or error, cite the
 * causes that the counters of its own tests and of the pairs it was in
 * name (docs/counters.md): "counters" [{test, pair ("A--B", a pair's
 * only), cause, counters (the evidence: counters and deltas)}], 8 at
 * most, and "says" extended with the causes. gathered: every node's
 * results, [{label, tests: [{test, counters: ["CAUSE: EVIDENCE"...]}],
 * pairs: [{test, a, b, counters}]}], as validate keeps them. Nodes that
 * passed, and entries without counters, are left as they are. */
void tp_validate_cite_counters(json_t *verdicts, const json_t *gathered,
                               const char *const *labels, int n);

#endif
