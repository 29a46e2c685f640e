/* Internal to src/wlimport/: the files of an import as a job (join.c:
 * each rank's files merged into one part, the ranks lined up step by step,
 * their clocks aligned and the arrival skew of each collective measured),
 * and the version-2 document built from it (doc.c). */
#ifndef TP_WL_JOIN_INT_H
#define TP_WL_JOIN_INT_H

#include "wlimport_int.h"

/* One rank: its files merged. */
struct tp__wl_rank {
    int rank;                   /* -1: no file says (a single rank) */
    struct tp_wlimport_part *m; /* the merged part (owned) */
    size_t times_file;          /* the file of its times and order (SIZE_MAX: none) */
    size_t bytes_file;          /* the file that gave its bytes */
    size_t *steps;              /* the job's step s is m->steps[steps[s]] */
    size_t *order;              /* the job's collective at[s] + i (the first rank's
                                   i-th of step s) is this rank's order[at[s] + i]-th
                                   of that step */
    int64_t offset_ns;          /* its clock against the first rank's */
};

struct tp__wl_job {
    struct tp_wlimport_part **parts; /* every file's, in the order given (owned) */
    const char *const *paths;
    size_t nparts;
    struct tp__wl_rank *ranks; /* by rank number */
    size_t nranks;
    size_t nsteps;         /* the steps every rank has */
    size_t *at;            /* where step s's collectives start in order[] and arrival_ns[] */
    bool timed;            /* the ranks' steps carry times */
    bool worked;           /* some collective has its work (the others: null) */
    bool offsets_measured; /* the clocks aligned on the collectives' ends */
    int64_t *arrival_ns;   /* per step, per collective: the last rank's call after the first's */
    int *slowest;          /* per step: the rank that arrived last, most behind */
    size_t uneven;         /* collectives whose bytes differ across ranks */
};

/* Merge each rank's files, line the ranks up, align their clocks and
 * measure the skew (two ranks or more). TP_EUSAGE naming the files and the
 * step at fault: files of one rank with other collectives, ranks with
 * other kinds of collectives in a step, a collective no file sizes, files
 * of several ranks one of which does not say its rank. */
int tp__wl_join(struct tp__wl_job *j, const struct tp_wlimport_opts *o, json_t *warnings,
                tp_error *err);

void tp__wl_job_free(struct tp__wl_job *j);

/* Rank r's step s of the job, and its collective that is the first rank's
 * i-th of that step (lined up by process group and sequence). */
const struct tp_wlimport_step *tp__wl_step_of(const struct tp__wl_job *j, size_t r, size_t s);
const struct tp_wlimport_coll *tp__wl_coll_of(const struct tp__wl_job *j, size_t r, size_t s,
                                              size_t i);

/* The version-2 workload document of the job (a new reference in *out),
 * with "imported": the files, what each filled, what was assumed from the
 * options or by rule, what is missing. TP_ENOMEM; TP_EUSAGE when times are
 * needed and there are none (no trace, no --compute-ms). */
int tp__wl_doc(const struct tp__wl_job *j, const struct tp_wlimport_opts *o, json_t *warnings,
               json_t **out, tp_error *err);

#endif
