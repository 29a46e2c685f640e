/* One group of ranks for a measurement, set up the same way for every
 * command that runs on one (coll, step; src/coll/group.c): the ranks meet
 * (tp_boot), and a process that cannot join reports for itself; what
 * depends on the rank count is derived; the communicator (tp_comm) gets
 * the arena the job asks for; every rank opens its GPU when the job needs
 * one; rank 0 keeps the result document (provenance of the communicator
 * and the GPU, the status, the --json file); a rank that fails aborts the
 * communicator so that the others stop waiting, and the exit status of
 * every rank counts. What runs on the group, the job, is a set of
 * callbacks. */
#ifndef TP_GROUP_H
#define TP_GROUP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tp/boot.h"
#include "tp/coll.h"
#include "tp/error.h"
#include "tp/gpu.h"

/* The group's options, as the command line gives them. */
struct tp_group_opts {
    const char *launcher;      /* --launcher: "local", "mpi" or "env"; NULL: detected */
    const char *launcher_name; /* the launcher in use, for the document's config */
    int nranks;                /* -n: ranks the local launcher starts */
    bool nranks_given;         /* -n was given: held against a launcher's size */
    const char *key_file;      /* --key-file of the env rendezvous, or NULL */
    uint64_t timeout_ns;       /* --timeout: every wait of boot, comm and the GPU */
    struct tp_comm_opts comm;  /* --transport, --provider, --intra, --bind, --busy-poll;
                                  tp_group_main sets arena_bytes and timeout_ns */
    int gpu_device;            /* --gpu, or -1: the rank's index among its host's ranks */
    const char *json;          /* --json FILE (checked before the run), or NULL */
};

/* What a job's run gets: the group, formed. */
struct tp_group {
    struct tp_boot *boot;
    struct tp_comm *comm;
    struct tp_gpu *gpu; /* this rank's GPU, or NULL when the job needs none */
    int rank, size;
};

/* The job: what it needs of the group, and its callbacks (each gets arg). */
struct tp_group_job {
    const char *command; /* the result document's command ("coll", "step") */
    json_t *options;     /* what every rank must share, compared at boot; the config of
                            the document of a process that joined no group (borrowed) */
    const char *gpu_what; /* the option that needs a GPU ("--mem cuda"), NULL: none */
    unsigned gpu_need;    /* TP_GPU_* libraries besides the runtime */
    void *arg;
    /* Every rank, once the group has formed: what depends on the rank count.
     * An error is the run's (no communicator is built). May be NULL. */
    int (*derive)(void *arg, const struct tp_boot *b, tp_error *err);
    /* Rank 0: the config of the result document (new reference). */
    json_t *(*config)(void *arg, int nranks);
    /* Every rank: the arena of the communicator (tp_comm_opts.arena_bytes). */
    size_t (*arena_bytes)(void *arg, int nranks);
    /* Every rank, after the communicator and before the GPU: whether the job
     * can run in this process. May be NULL. */
    int (*ready)(void *arg, tp_error *err);
    /* Every rank: the measurement. results is rank 0's document's "results"
     * (NULL elsewhere). A TP_ECHECK from it is the job's verdict, which rank
     * 0 reports: the communicator is not aborted for it and the other ranks
     * do not log it. */
    int (*run)(void *arg, const struct tp_group *g, json_t *results, tp_error *err);
    /* Every rank, after a run that returned 0 and once the communicator and
     * the GPU are closed: the job's verdict on what it measured. May be NULL. */
    int (*judge)(void *arg, tp_error *err);
    /* Rank 0, once every rank has finished, before the document is written:
     * print what the run found. May be NULL. */
    void (*report)(void *arg, json_t *results);
};

/* Form the group of o, run j on it and end the group. Rank 0 (and a process
 * that could not join a group) writes the result document to o->json, as
 * tp_result_write_run does; the others log their own error as "rank N:
 * MSG". *speak says whether this process speaks for the run: true on rank 0
 * and in a process that joined no group, which should print err; false on
 * the others, which have logged theirs. Returns 0, or the run's error: the
 * first failure of the set-up or the job, "a rank exited with status N"
 * when another rank failed, or the failure to write the document. */
int tp_group_main(const struct tp_group_opts *o, const struct tp_group_job *j, bool *speak,
                  tp_error *err);

/* Open this rank's GPU (its index among the ranks of its host, or device
 * when >= 0) on every rank of b, with the libraries need names; with
 * TP_GPU_NCCL also join the NCCL communicator of b's ranks. Collective. When
 * any rank fails, every rank returns the first failing rank's error
 * (TP_EUSAGE for a missing GPU or GPU path), and *out stays NULL. */
int tp_group_gpu_open(struct tp_boot *b, const char *what, unsigned need, int device,
                      uint64_t timeout_ns, struct tp_gpu **out, tp_error *err);

#endif
