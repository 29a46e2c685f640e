/* Silent-data-corruption (SDC) screening (docs/sdc.md): every core of every
 * node runs the same deterministic chain of steps on the same seeded data
 * and hashes each step's result; the hashes are compared, and a core or a
 * node whose chain differs from its peers' majority is named with the
 * step where its hash first diverged.
 *
 * A step s (from 1): Y = X W, a TP_SDC_N x TP_SDC_N product in f32 with
 * one fixed order of operations and no contraction into fused
 * multiply-adds, so it is bitwise the same on every x86-64 core; the
 * column sums of Y, exact (block fixed point, tp/blockfx.h), so the same
 * whichever kernel the CPU picks; the step's hash, SHA-256 of the
 * previous step's hash, Y and the sums; and the next input, fresh seeded
 * data plus Y scaled by a power of two, rounded to a grid of 2^-16, which
 * keeps every value finite and every sum on the exact path. A change of
 * one bit anywhere changes the step's hash and, through the chain, every
 * hash after it.
 *
 * Checkpoints: the hashes kept of a chain, the first 64 bits of a step's
 * SHA-256: every step up to TP_SDC_EXACT_STEPS, then a stride that doubles
 * every TP_SDC_EXACT_STEPS checkpoints (2 up to step 768, 4 up to 1792,
 * ...), and the last step. The rule is the same for any run, so chains of
 * different lengths (a soak by time) compare on their common steps. */
#ifndef TP_SDC_H
#define TP_SDC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "tp/error.h"

#define TP_SDC_N 64            /* the matrices are TP_SDC_N x TP_SDC_N f32 */
#define TP_SDC_EXACT_STEPS 256 /* every step a checkpoint up to this one */
#define TP_SDC_MAX_STEPS UINT64_C(1000000000000)
#define TP_SDC_MAX_THREADS 1024

/* The test hook's fault (TP_FAULT_SDC, docs/env.md): before step `step`
 * (0: none) bit `bit` of the step's input (bit b of element b / 32, from
 * the lowest) is flipped in thread `thread`'s chain (-1: every thread's,
 * -2: no thread's) and in GPU `gpu`'s (sdc --gpu; -1: every GPU's, -2:
 * none's). */
struct tp_sdc_fault {
    uint64_t step;
    uint32_t bit;
    int thread, gpu;
};

/* The fault TP_FAULT_SDC=RANK:STEP[:BIT[:THREAD|gGPU]] asks of the process
 * of rank `rank` (the command alone is rank 0) into *f: a zero step when
 * the variable is unset or names another rank; BIT defaults to 22, the
 * highest fraction bit of the first element; THREAD to every thread and
 * every GPU (THREAD alone: that thread and no GPU; gGPU: that GPU and no
 * thread). Returns 0, or TP_EUSAGE naming the variable and what is wrong
 * with its value. */
int tp_sdc_fault_env(int rank, struct tp_sdc_fault *f, tp_error *err);

/* The step of checkpoint i (from 0): 1, 2, ..., 256, 258, 260, ..., 768,
 * 772, ... */
uint64_t tp_sdc_checkpoint_step(size_t i);

/* Whether step (from 1) is a checkpoint of the rule (the last step of a
 * run is kept as well). */
bool tp_sdc_is_checkpoint(uint64_t step);

/* A chain as kept: its checkpoints in step order and its final hash. */
struct tp_sdc_chain {
    uint64_t steps;          /* steps run: the last checkpoint's */
    size_t n, cap;           /* checkpoints kept, and room */
    uint64_t *step;          /* [n] */
    uint64_t *hash;          /* [n]: the first 8 bytes of the step's SHA-256, big-endian */
    unsigned char final[32]; /* the last step's SHA-256 */
};

/* Release what c holds (not c); c may be zeroed or NULL. */
void tp_sdc_chain_free(struct tp_sdc_chain *c);

/* Run the chain of seed for steps steps (1 .. TP_SDC_MAX_STEPS) on the
 * calling thread, as thread `thread` of the fault (NULL: none), into *out
 * (zeroed first; free with tp_sdc_chain_free). Returns 0, or TP_ENOMEM;
 * TP_EUSAGE for a step count out of range. */
int tp_sdc_chain_run(uint64_t seed, uint64_t steps, const struct tp_sdc_fault *fault, int thread,
                     struct tp_sdc_chain *out, tp_error *err);

/* A chain as a document holds it: {"steps", "hashes", "final"}: hashes
 * the checkpoints' 16 hex digits each, run together in step order (the
 * steps are the rule's, the last one `steps`), final the last step's
 * SHA-256 in 64. NULL on ENOMEM. */
json_t *tp_sdc_chain_json(const struct tp_sdc_chain *c);

/* The chain j (tp_sdc_chain_json's) into *out (free with
 * tp_sdc_chain_free). Returns 0; TP_EPROTO naming what is wrong (a hash
 * that is not hex, more or fewer hashes than its steps have
 * checkpoints); TP_ENOMEM. */
int tp_sdc_chain_parse(const json_t *j, struct tp_sdc_chain *out, tp_error *err);

/* ---- the judgement: who differs from the majority, and from which step ---- */

/* What the judgement says of one member (a node, or a thread of a node). */
enum tp_sdc_call {
    TP_SDC_AGREE,     /* with the majority */
    TP_SDC_ODD,       /* the odd one out: diverged from the majority */
    TP_SDC_UNDECIDED, /* the members disagree and no chain has a majority */
    TP_SDC_ABSENT,    /* no chain of it was given */
};

struct tp_sdc_member {
    enum tp_sdc_call call;
    /* ODD: the first step its hash differs from the majority's, and the
     * last step before it both kept (after = step - 1: exactly this
     * step; else somewhere in after+1 .. step); UNDECIDED: the first step
     * where the members differ. 0 otherwise. */
    uint64_t step, after;
};

struct tp_sdc_verdict {
    int members;              /* judged */
    int present;              /* with a chain */
    int majority;             /* members in the majority; 0: none (or one member alone) */
    uint64_t compared;        /* the steps every present chain has (the shortest's) */
    int odd;                  /* members named ODD or UNDECIDED */
    uint64_t step, after;     /* the first divergence among them (0: none) */
    struct tp_sdc_member *of; /* [members] */
};

struct tp_sdc_judge;

/* A judgement of n members (1 .. 1,000,000), whose chains come one at a
 * time: only the chains that differ are kept (a few, when most agree),
 * not one per member. NULL on ENOMEM. */
struct tp_sdc_judge *tp_sdc_judge_new(int n);

/* Member m's chain (copied where it differs from every chain kept).
 * Returns 0; TP_EUSAGE for m out of range or given twice; TP_ENOMEM. */
int tp_sdc_judge_add(struct tp_sdc_judge *j, int m, const struct tp_sdc_chain *c, tp_error *err);

/* The judgement into *v (free with tp_sdc_verdict_free): the chains
 * compared on the steps they all have; a member whose hash there differs
 * from a strict majority's is ODD with the step it first differs; with no
 * strict majority (two members that disagree, or no chain shared by more
 * than half) every present member is UNDECIDED; a member alone agrees
 * with itself. Returns 0 or TP_ENOMEM. */
int tp_sdc_judge_result(const struct tp_sdc_judge *j, struct tp_sdc_verdict *v, tp_error *err);

void tp_sdc_judge_free(struct tp_sdc_judge *j);
void tp_sdc_verdict_free(struct tp_sdc_verdict *v);

/* Member m's finding in words, members being `what` ("nodes", "threads"):
 * "result hash diverged from the majority (2 of 3 nodes) at step 40" (or
 * "between steps 1537 and 1540"), "the 2 nodes disagree from step 40; no
 * majority", "agrees with the majority (3 of 3 nodes)". */
void tp_sdc_says(const struct tp_sdc_verdict *v, int m, const char *what, char *out, size_t cap);

/* ---- `trainpath sdc` ---- */

struct tp_sdc_opts {
    uint64_t steps;   /* steps of every chain (0: by seconds) */
    double seconds;   /* > 0: run about this long, on to the next checkpoint (not with steps;
                       * at most a week) */
    int threads;      /* chains at once, pinned round-robin to the CPUs allowed (0: one a CPU) */
    uint64_t seed;    /* the data's seed */
    bool gpu;         /* also one chain per GPU of the host, its products by cuBLAS */
    const char *json; /* the result document ("-": stdout), or NULL */
    bool quiet;       /* no table */
    bool progress_line; /* the progress line on stderr (tp/progress.h) */
};

/* The screen of this node: check the options (TP_EUSAGE naming the
 * option or the hook's value, nothing run), read the test hook
 * (tp_sdc_fault_env, rank 0), run one chain per thread, each pinned to a
 * CPU this process may use, and judge the threads against their majority;
 * with gpu, one chain per GPU of the host too (its products by cuBLAS),
 * the GPUs judged against the majority of the GPUs of their key (name,
 * compute capability, SMs, cuBLAS version; TP_EUSAGE where there is none
 * or the path is not built); write the result document "sdc" when json is
 * set (also for a failed run) and print the table unless quiet. Returns 0
 * when every thread (and GPU) computed the same as its peers; TP_ECHECK
 * with err naming the first thread that diverged, its CPU and the step
 * (or that they have no majority), else the first GPU; another
 * TP_E* code when the run could not be made (TP_EINTR, TP_ETERM after a
 * signal; TP_ENOMEM; TP_ESYS for a thread that could not be started). */
int tp_sdc_run(const struct tp_sdc_opts *o, tp_error *err);

#endif
