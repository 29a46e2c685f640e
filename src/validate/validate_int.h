/* validate's parts, shared by the files of src/validate/: the context of one
 * validation, the child runner (run.c) and the outputs (outputs.c), which
 * the host mode (host.c) and the allocation mode (alloc.c) use and which
 * call neither back. Internal to the library. */
#ifndef TP_VALIDATE_INT_H
#define TP_VALIDATE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include <jansson.h>

#include "tp/boot.h"
#include "tp/error.h"
#include "tp/triage.h"
#include "tp/topology.h"
#include "tp/validate.h"

/* The longest path validate makes, its NUL included: the kernel's
 * PATH_MAX (a longer one no call could open); tp__validate_path makes
 * them. */
#define TP__VALIDATE_PATH_MAX 4096

struct tp__validate_ctx {
    const char *profile, *out, *db, *policy, *prom, *only, *iface, *launcher, *key_file;
    bool quiet, tty;
    bool trace; /* --trace: the traced tests write NAME.trace.json */
    int pairs_at_once;  /* allocation: pairs measured at once (0: a whole round) */
    /* allocation: the tier (picked by budget_s when that is > 0), its
     * matchings and seed (0: drawn by rank 0), what to do with a node
     * judged bad (tp__validate_onfail) */
    const char *tier, *on_fail;
    double budget_s;
    int matchings;
    uint64_t seed;
    double min_effect;  /* slow: this far above the median at least (0: the triage's) */
    double node_timeout_s; /* a rank silent this long in a round is lost (0: its tests' deadlines) */
    double sdc_minutes; /* > 0: the sdc test a soak of about this long */
    const char *topology;    /* --topology: the file, or NULL */
    struct tp_topology *topo; /* ... read before the group forms */
    const char *job_plan;    /* --plan: the job's plan file, or NULL */
    int gpus_per_node;       /* ... its figures for the decision to evict or isolate */
    double mtbf_node_s, restart_s; /* (0: the triage's defaults) */
    int spare_nodes;         /* --spare-nodes */
    bool lost;          /* a rank was lost: the group ends by tp_boot_abort */
    bool own_star;      /* the tier's stages meet over a star of their own (control.c) */
    bool done;          /* every rank knows rank 0's verdict: no grace before tp_boot_abort */
    int stage;          /* the tier's stage under way (enum tp__validate_stage), -1 before */
    char **extra_env;   /* added to envp for the next child (a collective's rank variables) */
    char dir[TP__VALIDATE_PATH_MAX];    /* the scratch folder for io and step */
    char outdir[TP__VALIDATE_PATH_MAX]; /* the results folder */
    char keyfile[64];   /* allocation: the session key of the net servers (/proc/self/fd/N) */
    int keyfd;          /* its memfd, inherited by the children; -1: none */
    char addr[64];      /* the address the net server listens on */
    char port[16];
    char plan[TP__VALIDATE_PATH_MAX]; /* the plan file, once written */
    char sdc_fault[160]; /* the SDC test hook as this node's sdc test sees it (sdc.c) */
    pid_t server;
    char **envp; /* for the children: the launcher's variables removed */
    struct tp_validate_list tests;
    double t0;
};

/* ---- run.c: the children ---- */

double tp__validate_now_s(void);

/* A test's deadline: a child still running then is killed and the test
 * failed ("did not finish within N s"), so a hang is a failed test, not a
 * hung validation. */
double tp__validate_deadline_s(const struct tp_validate_test *t);

/* How long the group waits on a rank at most outside the tier's rounds
 * (joining, every node alone, the gather): an hour. */
#define TP__VALIDATE_GROUP_TIMEOUT_S 3600.0

/* After a rank was lost under a launcher whose group cannot end without it
 * (MPI): how long the other ranks leave rank 0 to write what it has and
 * end the job before they end it. */
#define TP__VALIDATE_ABORT_GRACE_S 120

/* The environment of the children: this process's, without the variables
 * by which a launcher makes a process a rank (an array of environ's
 * strings, to free alone). NULL when out of memory. */
char **tp__validate_child_env(void);

/* ---- status.c: a test's status ---- */

/* A test's status, from good to bad; its words are status.c's table's. */
enum tp__validate_status {
    TP__VALIDATE_PASS,
    TP__VALIDATE_WARN,
    TP__VALIDATE_FAIL,
    TP__VALIDATE_NSTATUSES, /* no status: a word that names none */
};

/* The status as the documents write it ("PASS", "WARN", "FAIL"); NULL for
 * TP__VALIDATE_NSTATUSES. */
const char *tp__validate_status_name(enum tp__validate_status s);

/* The status as the summary table prints it ("ok", "WARN", "FAIL"); NULL
 * for TP__VALIDATE_NSTATUSES. */
const char *tp__validate_status_word(enum tp__validate_status s);

/* The status a document's word names; TP__VALIDATE_NSTATUSES for NULL or
 * a word that names none. */
enum tp__validate_status tp__validate_status_of(const char *name);

/* The verdict of a test that has run (its exit status in t->rc), as
 * tp__validate_run_test returned it. */
enum tp__validate_status tp__validate_status(const struct tp_validate_test *t);

/* Run t with its document at DOCDIR/NAME.json and its output in
 * DOCDIR/NAME.log, against the net server at peer:port (NULL: none). Fills
 * t->rc, t->took_s and t->why; returns its status (tp__validate_status). */
enum tp__validate_status tp__validate_run_test(struct tp__validate_ctx *c,
                                               struct tp_validate_test *t, const char *docdir,
                                               const char *peer, const char *port);

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

/* ---- the nodes of an allocation (alloc.c meets them) ---- */

struct tp__validate_node {
    char label[280]; /* the host, with "#rank" when ranks share a host; "rankN" for one
                        that never joined */
    bool missing;    /* it never joined (left out when the group formed, or in the meeting) */
    char addr[64], port[16]; /* its net server */
    char cport[16];  /* where it leads a collective across nodes (MASTER_PORT) */
    char tport[16];  /* rank 0: where the tier's control star meets ("0" elsewhere) */
    char sched[128]; /* its name to the scheduler (Slurm's SLURMD_NODENAME), or "" */
};

/* What this node ran, for the gather: {"test", "status", "summary",
 * "seconds", "doc"} with the document at docpath (null when it wrote none
 * or wrote one that is refused, said). NULL on ENOMEM. */
json_t *tp__validate_ran(const struct tp_validate_test *t, enum tp__validate_status status,
                         const char *docpath);

/* The causes a test document's counters name (docs/counters.md), one
 * string each, "loss: Tcp RetransSegs +24, ..." (the server's node's
 * prefixed "server's ", another host's of a coll or step run "HOST's "):
 * a new array, empty when none. */
json_t *tp__validate_counter_causes(const json_t *doc);

/* ---- cables.c: a node's own counters to the triage ---- */

/* The causes of kind errors or flap (docs/counters.md) that a test
 * document's counters name on a node's own link: the evidence of
 * results.counters (the node that ran the test: "node": "") and of
 * results.peer_counters (the net server's node: "node": "server") on the
 * device of their "path" (the interface that carried the test's traffic;
 * counters without a path name no link), each {"node", "cause", "dev",
 * "name", "delta"}. A new array, empty when none (NULL on ENOMEM). */
json_t *tp__validate_link_causes(const json_t *doc);

/* Rank 0, every node's result gathered and before the triage's result:
 * each node whose own link the entries of gathered name (each entry's
 * "link", tp__validate_link_causes's, of the node that sent it or, for
 * "server", of the pair's b) handed to the triage by tp_triage_link_errors,
 * with what they said summed over the tests ("flap on v6: carrier_changes
 * +4 in 2 tests"): a node the triage names slow is then a bad cable.
 * gathered: [{label, tests, pairs, groups: [{..., b?, link?}]}], as
 * alloc.c sends them; labels not among nodes' are passed over. Returns 0,
 * or tp_triage_link_errors's error, or TP_ENOMEM. */
int tp__validate_link_errors(tp_triage *tri, const json_t *gathered,
                             const struct tp__validate_node *nodes, int n, tp_error *err);



/* Measure t from node a against node b's server, the documents in
 * pairs/A--B/ (sub: a folder under it, or NULL). Returns what ran, with
 * "a" and "b" (labels). */
json_t *tp__validate_measure_pair(struct tp__validate_ctx *c, struct tp_validate_test *t,
                                  const struct tp__validate_node *nodes, int a, int b,
                                  const char *sub);

/* ---- control.c: the control path of a tier's stages ---- */

/* The stages after the nodes met, each bounded: a node silent past its
 * stage's bound is lost, left out, and the others go on. */
enum tp__validate_stage {
    TP__VALIDATE_LOCAL,  /* every node's own tests */
    TP__VALIDATE_ROUNDS, /* the tier's rounds */
    TP__VALIDATE_GATHER, /* the results to rank 0 */
};

/* The gather's wait for one node's result (without --node-timeout). */
#define TP__VALIDATE_GATHER_TIMEOUT_S 300.0
/* Joining the stages' own star, right after the nodes met. */
#define TP__VALIDATE_STAR_JOIN_S 120.0

/* A pair test's and a group test's durations by f of each of the
 * profile's net tests: a pair's tests run both ways where directional, a
 * group's are the across rows. */
void tp__validate_net_sums(const struct tp__validate_ctx *c,
                           double (*f)(const struct tp_validate_test *), double *pair,
                           double *group);

/* A stage's bound in seconds: the rounds' is their tests' deadlines plus a
 * minute, or --node-timeout; the node's own tests' their deadlines' sum
 * plus --node-timeout or a minute; the gather's --node-timeout or
 * TP__VALIDATE_GATHER_TIMEOUT_S. */
double tp__validate_stage_timeout_s(const struct tp__validate_ctx *c, enum tp__validate_stage s);
double tp__validate_round_timeout_s(const struct tp__validate_ctx *c);

/* The control path of the stages into *ctl: b itself where it can leave a
 * lost rank out (a star), else a star of their own formed now at rank 0's
 * control port (c->own_star; every rank calls this). Either leaves the
 * lost out from now on. On error *ctl is b and err says why (every rank
 * fails: the group is intact). */
int tp__validate_control_open(struct tp__validate_ctx *c, struct tp_boot *b,
                              const struct tp__validate_node *nodes, struct tp_boot **ctl,
                              tp_error *err);

/* Stage s begins (c->stage): bound ctl's operations by its timeout from
 * now on. */
void tp__validate_control_stage(struct tp__validate_ctx *c, struct tp_boot *ctl,
                                enum tp__validate_stage s);

/* Stage s in words: "its own tests", "the tier's rounds", "the gather of
 * the results". */
const char *tp__validate_stage_what(enum tp__validate_stage s);

/* End the stages (rc: how they ended): a star of their own is left, and
 * c->lost set when a rank was lost (the launcher's group then ends by
 * tp_boot_abort); b gets the group's timeout back. Returns rc. */
int tp__validate_control_close(struct tp__validate_ctx *c, struct tp_boot *b, struct tp_boot *ctl,
                               int rc);

/* Every rank says how it went (rc, err): each one's word goes to rank 0
 * alone, which gives every rank the first failure's, "node HOST (rank R):
 * WORDS" (agree.c: O(N) bytes, not an allgather's N²). All fail with code
 * and those words when one failed; a rank that failed itself keeps its own
 * err with keep_own. Returns 0 when none failed. */
int tp__validate_agree(struct tp_boot *b, int rc, int code, bool keep_own, tp_error *err);

/* Rank 0's outcome of a step it alone takes (rc, err on rank 0), given to
 * every rank: each returns rank 0's code with its very words, or 0. */
int tp__validate_follow(struct tp_boot *b, int rc, tp_error *err);

/* The barrier that ends a stage nobody sends anything in: lost[r] true
 * for each rank left out by its end (the same on every rank: the
 * barrier's answer names them). */
int tp__validate_stage_barrier(struct tp_boot *ctl, bool *lost, tp_error *err);

/* The test hook TP_FAULT_STALL=rounds.K:RANK (docs/env.md): that rank stops
 * answering as round K begins, as TP_FAULT_STALL=STAGE:RANK does as a
 * stage begins. */
void tp__validate_round_hook(const struct tp__validate_ctx *c, const struct tp_boot *ctl,
                             int round);

/* tp_triage_lose for every lost[r] of n nodes, in stage s (not the
 * rounds: those a round's record says). */
int tp__validate_lose(tp_triage *tri, int n, enum tp__validate_stage s, const bool *lost,
                      tp_error *err);

/* ---- rounds.c: the control of the tier's rounds ---- */

/* One node's part of a round, as rank 0 sent it. */
struct tp__validate_part {
    bool end;                  /* no round more: the rounds are done */
    int round;                 /* from 1 */
    enum tp_triage_stage stage;
    int npairs;                /* the round's pair tests (every node takes their barriers) */
    int deputy;                /* 1: this node is rank 0's deputy */
    int ti;                    /* this node's test in the round, -1: none */
    int pair;                  /* its index among the pair tests, -1: a group test */
    int pos;                   /* this node's place in it */
    int lead;                  /* the test's first node */
    bool listed;               /* t.nodes holds every node of it (else t.nodes[0] alone) */
    bool needs_triage;         /* a new deputy that has none: tp__validate_rounds_adopt */
    struct tp_triage_test t;   /* the test (nodes malloc'd: tp__validate_part_free) */
};

/* Rank 0: every node's label (nodes[r].missing set): its host, with
 * "#rank" where ranks share a host, "rankN" for one that never joined,
 * as a path component (roster.c). */
int tp__validate_label_all(struct tp_boot *b, struct tp__validate_node *nodes, tp_error *err);

/* Node r's record, a line of its own, onto f: whole ("\nN RANK MISSING
 * ADDR PORT CPORT TPORT SCHED LABEL") or what a test with it needs ("\nP
 * RANK ADDR PORT CPORT LABEL"). */
void tp__validate_roster_line(FILE *f, const struct tp__validate_node *nodes, int r, bool whole);

/* Every record line of text ("N ..." or "P ...", other lines passed over) into
 * nodes (n of them); *count (when not NULL) the records read. TP_EPROTO
 * for a broken one. */
int tp__validate_roster_read(const char *text, struct tp__validate_node *nodes, int n,
                             int *count, tp_error *err);

/* The rounds' state of one node: rank 0's log of every round's record and
 * who its deputy is, the deputy's count of records replayed. nodes (n of
 * them) is what this node knows of the others, and a part's records fill
 * it in (roster.c); deputy, the deputy the meeting made (its rank on rank
 * 0 and on itself, 0 elsewhere). NULL on ENOMEM. */
struct tp__validate_rounds *tp__validate_rounds_new(const struct tp__validate_ctx *c,
                                                    struct tp__validate_node *nodes, int n, int me,
                                                    int deputy);
void tp__validate_rounds_free(struct tp__validate_rounds *rs);

/* The nodes lost in the nodes' own tests (lost[n]): a deputy that takes
 * over later loses them from the triage it makes then. */
int tp__validate_rounds_local_lost(struct tp__validate_rounds *rs, const bool *lost,
                                   tp_error *err);

/* A new deputy's triage, made with every node's record its part carried
 * (p->needs_triage): rs keeps it (tp__validate_rounds_take_triage), loses
 * the nodes lost in their own tests from it and records rank 0's log into
 * it. */
int tp__validate_rounds_adopt(struct tp__validate_rounds *rs, tp_triage *tri, tp_error *err);

/* The triage a deputy made as it took over (its owner now the caller:
 * tp_triage_free), or NULL. */
tp_triage *tp__validate_rounds_take_triage(struct tp__validate_rounds *rs);

/* Whether this node (not rank 0) is rank 0's deputy now: the one that
 * writes the fleet document when rank 0 is lost (the one the meeting made
 * before the first round). */
bool tp__validate_rounds_deputy(const struct tp__validate_rounds *rs);

/* Every node: the next round's part. Rank 0 plans it with tri and sends
 * every node its own (tp_boot_scatter; p->end after the last); the deputy
 * records into its tri the rounds rank 0 recorded that it has not. Free
 * p with tp__validate_part_free (after an error too). */
int tp__validate_round_next(struct tp__validate_rounds *rs, struct tp_boot *ctl, tp_triage *tri,
                            struct tp__validate_part *p, tp_error *err);
void tp__validate_part_free(struct tp__validate_part *p);

/* Every node: the round ends (a barrier, then this node's figure, mine,
 * "TEST KIND VALUE" or "", to rank 0 alone); rank 0 records the round's
 * figures and the nodes lost in it (left out: no figure) into tri and
 * its log. */
int tp__validate_round_end(struct tp__validate_rounds *rs, struct tp_boot *ctl, tp_triage *tri,
                           const char *mine, tp_error *err);

/* Rank 0: what the rounds' control cost it on the wire (tp_boot_bytes
 * from the first round's start: the parts, barriers and figures, the
 * pair tests' own traffic not included): {"nodes", "rounds", "bytes_sent",
 * "bytes_received", "bytes_sent_per_round", "bytes_received_per_round",
 * "bytes_sent_round_max", "bytes_received_round_max", and before the
 * rounds "bytes_sent_before", "bytes_received_before": the control path's
 * forming, and under the env launcher (whose star it is) the nodes'
 * meeting and the end of their own tests}; NULL on ENOMEM. */
json_t *tp__validate_rounds_bytes(const struct tp__validate_rounds *rs);

/* ---- tiered.c: an allocation by a triage tier (prolog, screen, full) ---- */

/* Pick the tier for n nodes (by c->budget_s when given), or refuse:
 * TP_EUSAGE naming the tier, or the budget with the minimum it needs. On
 * every node alike (the same options and n). Prints nothing. */
int tp__validate_tier_pick(struct tp__validate_ctx *c, int n, tp_error *err);

/* Every node: the triage of n nodes by c's tier (the same on every node:
 * the same options and seed), the nodes that never joined "missing" in it;
 * rank 0 prints the plan (the rounds, the estimate, each stage's bound)
 * unless quiet. */
int tp__validate_triage_new(const struct tp__validate_ctx *c, const struct tp__validate_node *nodes,
                            int n, int me, tp_triage **tri, tp_error *err);

/* Every node: the rounds the tier plans and its isolation asks for, over
 * the control path ctl (tp__validate_control_open), each round's pair
 * tests (the net tests, both ways) and collectives across groups of nodes
 * (coll-across) at once, each node told its part by rank 0 and its figure
 * sent back to rank 0 (rounds.c: rank 0's triage, and its deputy's,
 * record them); a node lost in a round is recorded lost there and the
 * rounds go on without it.
 * Appends what this node ran to pairs (as measure_pair's, with "round",
 * "stage" and "sub") and groups (a collective: "round", "stage",
 * "members"). Returns 0, or the error that stopped the rounds (rank 0
 * lost, an interrupt, memory). */
int tp__validate_triage(struct tp__validate_ctx *c, struct tp_boot *ctl,
                        const struct tp__validate_node *nodes, tp_triage *tri,
                        struct tp__validate_rounds *rs, json_t *pairs, json_t *groups,
                        tp_error *err);

/* Rank 0, the run stopped in c->stage by err (an interrupt, a failure of
 * its own): the triage stopped there (tp_triage_stop: the nodes still
 * passing not validated to the end, saying where and why), its judgement
 * as tp__validate_triage_result's, with "partial". NULL on ENOMEM. */
json_t *tp__validate_triage_stopped(const struct tp__validate_ctx *c, tp_triage *tri,
                                    const struct tp_boot *b, const struct tp_boot *ctl,
                                    const tp_error *why);

/* Rank 0: the triage's judgement (tp_triage_result), each lost or missing
 * node's "says" ending with why rank 0 left it out (tp_boot_gone_why of
 * ctl, else of b, the group it never joined). NULL on ENOMEM. */
json_t *tp__validate_triage_result(tp_triage *tri, const struct tp_boot *b,
                                   const struct tp_boot *ctl, tp_error *err);

/* Rank 0: nodes.jsonl in the results folder, one line per node (its
 * verdict in result, label, host, scheduler name and tier: NULL, null,
 * for the SDC screen's verdicts without one), written atomically.
 * Returns 0 or the error. */
int tp__validate_node_lines(const struct tp__validate_ctx *c, const struct tp__validate_node *nodes,
                            int n, const json_t *result, const char *tier, tp_error *err);

/* ---- collect.c: rank 0 takes in the nodes' results, writes the folder ---- */

/* What rank 0 holds of the nodes' results: each taken in as it arrives
 * (its documents written under c->outdir, into the history and the
 * fleet's rows, then dropped: a few KB a node stay), judged at the end. */
struct tp__validate_collect;

/* Begin: fleet.jsonl is written as a temporary file beside it until
 * tp__validate_collect_finish renames it into place. NULL when out of
 * memory; an error opening the files is kept (tp__validate_collect_error). */
struct tp__validate_collect *tp__validate_collect_new(struct tp__validate_ctx *c,
                                                      const struct tp__validate_node *nodes,
                                                      int n);

/* Take in node r's entry g ({"label", "host", "addr", "tests", "pairs",
 * "groups"}, as alloc.c sends it; stolen). Returns 0, or the first error
 * (a document that could not be written, an entry not from node r), which
 * is kept. */
int tp__validate_collect_add(struct tp__validate_collect *k, int r, json_t *g);

/* A tp_boot_each_fn (ctx: the collect): node r's entry as text, parsed and
 * taken in. Always 0, so the gather goes on; an error is kept. */
int tp__validate_collect_node(void *ctx, int r, const char *data, tp_error *err);

/* The first error kept (copied into err), or 0. */
int tp__validate_collect_error(const struct tp__validate_collect *k, tp_error *err);

/* Every node's entry taken in so far, in the order they arrived (their
 * documents dropped; each test's and pair's "counters" and "link" kept):
 * the collect's own, valid until it is freed. */
const json_t *tp__validate_collect_gathered(const struct tp__validate_collect *k);

/* Judge and write the rest of the results folder: fleet.jsonl, fleet.json
 * (with the triage's verdicts and --on-fail's actions where the tier's
 * rounds ran: triage, NULL without net tests), nodes.jsonl, the plan, the
 * history, the report; print the summary. stopped, when not NULL, is what
 * stopped the run before the end: fleet.json's status says it (and its
 * "partial", the triage's). Returns the exit status (0, or 1 when
 * something failed or was named). */
int tp__validate_collect_finish(struct tp__validate_collect *k, const json_t *triage,
                                const tp_error *stopped);

void tp__validate_collect_free(struct tp__validate_collect *k);

/* ---- sdc.c: the SDC screen across nodes ---- */

/* The SDC test hook (TP_FAULT_SDC=RANK:STEP..., docs/env.md) in c->envp as
 * this node's sdc test is to see it: where RANK is rank, as the command
 * alone's (rank 0); else removed. A malformed value is left for the test
 * to refuse. */
void tp__validate_sdc_env(struct tp__validate_ctx *c, int rank);

/* Rank 0's: the nodes' chains, taken in as their results arrive. NULL on
 * ENOMEM. */
struct tp__validate_sdc *tp__validate_sdc_new(int n);
void tp__validate_sdc_free(struct tp__validate_sdc *s);

/* Node r's (label's) sdc document doc, before it is dropped: its chain
 * into the judgement, its cores' finding kept. A chain that cannot be read
 * is left out, said once; the node then has no result to compare. */
void tp__validate_sdc_take(struct tp__validate_sdc *s, int r, const char *label, const json_t *doc);

/* Node r's sdc-gpu document doc: each kind of GPU's chain into that
 * kind's judgement (a kind a judgement, up to 16), and whether one of its
 * GPUs differed from its others. */
void tp__validate_sdc_take_gpu(struct tp__validate_sdc *s, int r, const char *label,
                               const json_t *doc);

/* Once every node's result is in: the judgement of the chains taken (s may
 * be NULL). Each node named gets its sdc test in gathered failed with the
 * words, and a verdict ("corrupt" or "undecided", evidence {"test": "sdc",
 * "scope", "step", "after", "agree", "of"}) in the verdicts returned: a
 * copy of triage's with them in the nodes' places, or without a triage
 * the screen's own ({"counts", "nodes_detail"}: every node pass, corrupt,
 * undecided or error); NULL when neither (no chain taken, no triage).
 * The GPUs' chains (sdc-gpu) the same way, kind by kind (a node named by
 * its cores is not named again; evidence {"test": "sdc-gpu", "scope":
 * "gpu", "kind", ...}), and a node whose own GPUs disagreed "corrupt".
 * *judgement: fleet.json's "sdc" ({"nodes", "with_chain", "majority",
 * "steps_compared", "named", "gpus": [{"key", "with_chain", "majority",
 * "steps_compared"}], "says"}), or NULL. */
json_t *tp__validate_sdc_judge(struct tp__validate_sdc *s, const struct tp__validate_node *nodes,
                               json_t *gathered, const json_t *triage, json_t **judgement);

/* ---- onfail.c: what is done with a node judged bad (--on-fail) ---- */

/* Is name an action that can run here (none; drain: under Slurm, with
 * scontrol)? TP_EUSAGE naming why not. */
int tp__validate_onfail_check(const char *name, tp_error *err);

/* Rank 0, after the judgement: act on every node whose verdict's action
 * is "drain" by c->on_fail, each command within --node-timeout (60 s
 * without it) and stopped by an interrupt, after which none starts.
 * Returns the actions as an array of {"node", "action", "command", "rc",
 * "says"} (empty for none); rc is the command's exit status, or -1 it
 * could not run, -2 it was stopped at the bound, -3 it was interrupted or
 * not run for an interrupt, and says tells which. */
json_t *tp__validate_onfail(const struct tp__validate_ctx *c, const struct tp__validate_node *nodes,
                            int n, const json_t *result);

/* ---- profile.c ---- */

/* Is t measured between nodes (a pair test, or a collective across a
 * group)? On a host alone its pair tests run against a server on
 * loopback. */
bool tp__validate_between(const struct tp_validate_test *t);

/* Is t a node's own test, each node running it alone (neither between
 * nodes nor after the others)? */
bool tp__validate_own(const struct tp_validate_test *t);

/* Does any of c's tests run between nodes (tp__validate_between)? */
bool tp__validate_any_between(const struct tp__validate_ctx *c);

/* The test of c's profile named name (as a node's entry names it), or
 * NULL. */
const struct tp_validate_test *tp__validate_test_of(const struct tp__validate_ctx *c,
                                                    const char *name);

/* Is name[0..len) the name of a test of any profile (what its NAME.json,
 * NAME.log and NAME.trace.json are named by)? */
bool tp__validate_test_named(const char *name, size_t len);

/* ---- outputs.c: the results folder ---- */

/* A run reads only what it wrote: every file an earlier validation can
 * have left in the results folder dir under a name this one writes (each
 * test's NAME.json, NAME.log and NAME.trace.json of every profile, the net
 * server's log, the plan, report.html, fleet.json, fleet.jsonl, nodes.jsonl,
 * the temporary files of their atomic writes), at its top and in its
 * nodes/, pairs/ and groups/ folders, removed, and those folders when that
 * empties them. Files of other names, and history.sqlite (a history
 * gathers runs), are left. Returns 0, or TP_EUSAGE naming a file that
 * could not be removed. */
int tp__validate_clear(const char *dir, tp_error *err);

/* The path fmt makes (as printf's) into out, of cap bytes. Returns 0; -1
 * when it does not fit, with errno ENAMETOOLONG, out empty (never a path
 * cut short, which could name another file) and the error logged with the
 * path's start. */
int tp__validate_path(char *out, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Create path and its parents. Returns 0 or -1 (errno). */
int tp__validate_mkdirs(const char *path);

/* The plan of the machine measured: nodes of gpus_per_node, the network and
 * storage from the documents given (paths relative to the plan file, which
 * is written to c->plan). Returns 0 or -1 (errno). */
int tp__validate_write_plan(struct tp__validate_ctx *c, int nodes, int gpus_per_node,
                            const char *net_lat, const char *net_bw, const char *coll,
                            const char *io);

/* The history database of one validation, every document tagged with one
 * batch: opened once, documents added as they come (a fleet's as each
 * node's reach rank 0, so none is held for it), closed by
 * tp__validate_outputs. The first error is kept (rc, err) and said there. */
struct tp__validate_hist {
    struct tp_history *h;
    char db[TP__VALIDATE_PATH_MAX], batch[64];
    int rc;
    tp_error err;
};
void tp__validate_hist_open(const struct tp__validate_ctx *c, struct tp__validate_hist *vh);
void tp__validate_hist_add(struct tp__validate_hist *vh, const json_t *doc);

/* The end of every validation: docs into the history database (hist, with
 * what was added to it already, or NULL: one opened here), the Prometheus
 * textfile from rows (an array of metric rows, with "host" where they came
 * from several), the HTML report from html_docs and verdicts; prints where
 * each went unless quiet. Returns 0, or 1 when one of them could not be
 * written (the message printed). */
int tp__validate_outputs(struct tp__validate_ctx *c, struct tp__validate_hist *hist,
                         const json_t *const *docs, size_t n, const json_t *const *html_docs,
                         size_t nh, const json_t *rows, const json_t *verdicts);

/* Print "trainpath: error: MSG" once and return the exit status for err. */
int tp__validate_fail(const tp_error *err);

/* Rank 0 of a group that never formed (its join interrupted, or a node
 * that never came): the results folder (--out, else a stamped one) with
 * fleet.json, a failed document saying why, so that such a run leaves its
 * document too. A folder or file that cannot be written is said, once. */
void tp__validate_unformed(const struct tp__validate_ctx *c, const tp_error *why);

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
