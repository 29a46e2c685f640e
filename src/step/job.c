/* `trainpath step` as one library call: the training loop (src/step/
 * loop.c) as a job on a group of ranks (include/tp/group.h). With a
 * launcher other than local the rank count arrives at boot, so the figures
 * that depend on it are derived and checked again there, on every rank. */
#include <string.h>

#include "tp/counters.h"
#include "tp/group.h"
#include "tp/step.h"

struct run {
    struct tp_step_given *g;
    bool local; /* the rank count was known before boot */
};

static int derive(void *arg, const struct tp_boot *b, tp_error *err)
{
    struct run *r = arg;
    if (r->local)
        return 0;
    int me = tp_boot_rank(b), n = tp_boot_size(b), per_host = 0;
    int rc = tp_step_derive(r->g, n, err);
    for (int i = 0; i < n; i++)
        per_host += strcmp(tp_boot_host(b, i), tp_boot_host(b, me)) == 0;
    if (rc == 0)
        rc = tp_step_check(&r->g->o, per_host, err);
    if (rc == 0)
        rc = tp_step_check_group(&r->g->o, n, per_host, err);
    return rc;
}

static json_t *config(void *arg, int nranks)
{
    struct run *r = arg;
    return tp_step_config_json(r->g, nranks);
}

static size_t arena_bytes(void *arg, int nranks)
{
    struct run *r = arg;
    return tp_step_arena_bytes(&r->g->o, nranks);
}

static int run(void *arg, const struct tp_group *g, json_t *results, tp_error *err)
{
    struct run *r = arg;
    r->g->o.gpu = g->gpu;
    if (g->rank == 0 && r->g->table)
        tp_step_print_header(r->g->table, r->g, g->size);
    return tp_step_run(g->comm, g->boot, &r->g->o, results, err);
}

static void report(void *arg, json_t *results)
{
    struct run *r = arg;
    if (r->g->table && json_object_get(results, "runs"))
        tp_step_print_summary(r->g->table, &r->g->o, results);
    if (r->g->table)
        tp_ctr_print_results(r->g->table, results);
}

int tp_step_main(struct tp_step_given *g, const struct tp_group_opts *go, bool *speak,
                 tp_error *err)
{
    const struct tp_step_opts *s = &g->o;
    struct run r = {.g = g, .local = !tp_boot_launched(go->launcher_name)};
    json_t *options = tp_step_config_json(g, r.local ? go->nranks : 0);
    struct tp_group_job job = {
        .command = "step",
        .options = options,
        .gpu_what = !s->compute_gpu && !s->grad_cuda ? NULL
                    : s->compute_gpu                 ? "--compute gpu"
                    : s->nccl                        ? "--backend nccl"
                                                     : "--mem cuda",
        .gpu_need = (s->compute_gpu ? TP_GPU_CUBLAS : 0) | (s->nccl ? TP_GPU_NCCL : 0),
        .arg = &r,
        .derive = derive,
        .config = config,
        .arena_bytes = arena_bytes,
        .run = run,
        .report = report,
    };
    int rc = tp_group_main(go, &job, speak, err);
    json_decref(options);
    return rc;
}
