/* The group set-up of include/tp/group.h, in the order every job needs:
 * boot, derive, document, communicator, readiness, GPU, run, teardown,
 * verdict, the other ranks' exit statuses, the document. The order is the
 * contract: a failure at one step skips the steps that need it and is what
 * the document and the exit status say. */
#include <stdlib.h>

#include "tp/counters.h"
#include "tp/group.h"
#include "tp/intr.h"
#include "tp/log.h"
#include "tp/result.h"

/* No group: this process reports for itself, with the options it was given. */
static int alone(const struct tp_group_opts *o, const struct tp_group_job *j, int rc,
                 tp_error *err)
{
    json_t *doc = tp_result_new(j->command, json_incref(j->options));
    tp_result_finish(doc, rc, err->msg);
    if (o->json && tp_result_write(doc, o->json, err) < 0)
        rc = err->code;
    json_decref(doc);
    return rc;
}

/* Every host's counters around the run (docs/counters.md), mine being
 * this rank's (the first rank of a host takes them; NULL on the others):
 * gathered to rank 0, whose own become results.counters and the other
 * hosts' results.nodes_counters [{host, rank, counters}]. A gather that
 * fails costs the other hosts' counters, never the run. */
static void gather_counters(const struct tp_group *g, json_t *mine, json_t *results)
{
    char *s = mine ? json_dumps(mine, JSON_COMPACT) : NULL, **all = NULL;
    tp_error e = {0};
    int rc = tp_boot_gather(g->boot, s ? s : "", &all, &e);
    free(s);
    if (g->rank != 0) {
        json_decref(mine);
        return;
    }
    json_object_set_new(results, "counters", mine);
    if (rc) {
        tp_log(TP_LOG_WARN, "the other hosts' counters were not gathered: %s", e.msg);
        return;
    }
    json_t *nodes = json_array();
    for (int r = 1; r < g->size; r++) {
        json_t *c = all[r] && all[r][0] ? json_loads(all[r], 0, NULL) : NULL;
        if (json_is_object(c))
            json_array_append_new(nodes, json_pack("{s:s, s:i, s:o}", "host",
                                                   tp_boot_host(g->boot, r), "rank", r,
                                                   "counters", c));
        else
            json_decref(c);
    }
    tp_boot_free_strings(all, g->size);
    if (json_array_size(nodes))
        json_object_set_new(results, "nodes_counters", nodes);
    else
        json_decref(nodes);
}

int tp_group_main(const struct tp_group_opts *o, const struct tp_group_job *j, bool *speak,
                  tp_error *err)
{
    struct tp_boot_opts bo = {.backend = o->launcher, .nranks = o->nranks,
                              .key_file = o->key_file, .timeout_ns = o->timeout_ns,
                              .options = j->options};
    struct tp_group g = {0};
    *speak = true;
    int rc = tp_boot_init(&bo, &g.boot, err);
    if (rc < 0)
        return alone(o, j, rc, err);
    g.rank = tp_boot_rank(g.boot);
    g.size = tp_boot_size(g.boot);
    *speak = g.rank == 0;
    rc = j->derive ? j->derive(j->arg, g.boot, err) : 0;
    json_t *doc = NULL, *results = NULL;
    if (g.rank == 0) {
        json_t *config = j->config(j->arg, g.size);
        json_object_set_new(config, "launcher", json_string(o->launcher_name));
        doc = tp_result_new(j->command, config);
        results = json_object();
        json_object_set_new(doc, "results", results);
    }
    struct tp_comm_opts co = o->comm;
    co.arena_bytes = j->arena_bytes(j->arg, g.size);
    co.timeout_ns = o->timeout_ns;
    if (rc == 0)
        rc = tp_comm_init(g.boot, &co, &g.comm, err);
    if (rc == 0 && j->ready)
        rc = j->ready(j->arg, err);
    /* an error every rank holds alike (the GPU open agrees on the first
     * failing rank's): rank 0 alone says it */
    bool agreed = false;
    if (rc == 0 && j->gpu_what) {
        rc = tp_group_gpu_open(g.boot, j->gpu_what, j->gpu_need, o->gpu_device, o->timeout_ns,
                               &g.gpu, err);
        agreed = rc < 0;
        if (rc == 0 && g.rank == 0)
            json_object_set_new(json_object_get(doc, "provenance"), "gpu", tp_gpu_info(g.gpu));
    }
    if (rc == 0) {
        if (g.rank == 0)
            json_object_set_new(json_object_get(doc, "provenance"), "comm",
                                tp_comm_info(g.comm));
        /* each host's counters around the run, outside its timed loops */
        bool leader = tp_boot_local_rank(g.boot) == 0;
        struct tp_ctr_probe *probe = leader ? tp_ctr_probe_start(NULL, 0) : NULL;
        rc = j->run(j->arg, &g, results, err);
        json_t *mine = leader ? tp_ctr_probe_end(probe) : NULL;
        if (rc == 0 || rc == TP_ECHECK) /* every rank is still here */
            gather_counters(&g, mine, results);
        else if (g.rank == 0)
            json_object_set_new(results, "counters", mine);
        else
            json_decref(mine);
    }
    bool verdict = rc == TP_ECHECK; /* the job's own, rank 0 reports it */
    if (rc < 0 && !verdict)
        tp_comm_abort(g.comm);
    tp_gpu_close(g.gpu);
    if (g.comm)
        tp_comm_fini(g.comm);
    if (rc == 0 && j->judge)
        rc = j->judge(j->arg, err);
    /* an interrupt reached every rank: rank 0 alone says so */
    if (rc < 0 && g.rank != 0 && !verdict && !agreed && !tp_intr_signal())
        tp_log(TP_LOG_ERROR, "rank %d: %s", g.rank, err->msg);
    int worst = tp_boot_fini(g.boot);
    if (g.rank == 0) {
        if (rc == 0 && worst != 0)
            rc = tp_error_set(err, worst == 2 ? TP_EUSAGE : TP_EPEER,
                              "a rank exited with status %d", worst);
        if (j->report && rc != TP_EUSAGE) /* a refusal: no table, no counters */
            j->report(j->arg, results);
        tp_result_finish(doc, rc, rc ? err->msg : "");
        tp_error werr;
        if (o->json && tp_result_write_run(doc, o->json, &werr) < 0 && rc == 0) {
            *err = werr;
            rc = werr.code;
        }
        json_decref(doc);
    }
    return rc;
}
