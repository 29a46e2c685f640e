/* `trainpath io` as one library call: the table of workloads (checkpoint,
 * dataset, commit, info), each a row with the options it takes, its default
 * queue depth, its block of the config document, its run and its table. The
 * CLI parses argv into a tp_io_opts, looks the workload up by name once and
 * calls tp_io_opts_finish, tp_io_config_json, tp_io_run and tp_io_print. */
#include <string.h>

#include "io_int.h"
#include "tp/counters.h"
#include "tp/blkpath.h"

struct tp_io_workload {
    const char *name;
    const char *const *options; /* its own options (long names), NULL-terminated */
    bool target;                /* takes DIR or --device and the engine options */
    unsigned qd;                /* default --qd */
    void (*config)(const struct tp_io_opts *o, json_t *j);
    int (*run)(const struct tp_io_opts *o, json_t *results, tp_error *err);
    void (*print)(FILE *f, const struct tp_io_opts *o, const json_t *results);
};

/* The options of every workload that has a target: where and how it does
 * its I/O. */
static const char *const target_options[] = {
    "device", "destroy-data", "engine", "qd", "jobs", "bs", "batch", "direct", "drop-cache",
    "force", "seed", "timeout", NULL};

static void config_checkpoint(const struct tp_io_opts *o, json_t *j)
{
    json_object_update_new(j, json_pack("{s:I, s:I, s:I, s:b, s:b}", "size_bytes",
                                        (json_int_t)o->ck.size, "shards", (json_int_t)o->ck.shards,
                                        "repeat", (json_int_t)o->ck.repeat, "verify",
                                        o->ck.verify, "keep", o->ck.keep));
}

static void config_dataset(const struct tp_io_opts *o, json_t *j)
{
    json_object_update_new(
        j, json_pack("{s:I, s:I, s:I, s:I, s:b, s:s?}", "records", (json_int_t)o->ds.records,
                     "record_size", (json_int_t)o->ds.record_size, "files",
                     (json_int_t)o->ds.files, "epochs", (json_int_t)o->ds.epochs, "verify",
                     o->ds.verify, "during", o->ds.during_ckpt ? "checkpoint" : NULL));
    if (o->ds.during_ckpt)
        json_object_update_new(j, json_pack("{s:I, s:I}", "checkpoint_size_bytes",
                                            (json_int_t)o->ck.size, "checkpoint_shards",
                                            (json_int_t)o->ck.shards));
}

static void config_commit(const struct tp_io_opts *o, json_t *j)
{
    json_object_update_new(j, json_pack("{s:I, s:I, s:I, s:s, s:s}", "write_size",
                                        (json_int_t)o->cm.write_size, "count",
                                        (json_int_t)o->cm.count, "time_ns",
                                        (json_int_t)o->cm.time_ns, "sync",
                                        o->cm.sync ? o->cm.sync : "fdatasync", "mode",
                                        o->cm.overwrite ? "overwrite" : "append"));
}

static void config_none(const struct tp_io_opts *o, json_t *j)
{
    (void)o;
    (void)j;
}

static int run_checkpoint(const struct tp_io_opts *o, json_t *results, tp_error *err)
{
    struct tp_ckpt_opts ck = o->ck;
    ck.c = o->c;
    return tp_io_checkpoint(&ck, results, err);
}

static int run_dataset(const struct tp_io_opts *o, json_t *results, tp_error *err)
{
    struct tp_dataset_opts ds = o->ds;
    ds.c = o->c;
    ds.ckpt = o->ck; /* --during checkpoint: its size and shards */
    return tp_io_dataset(&ds, results, err);
}

static int run_commit(const struct tp_io_opts *o, json_t *results, tp_error *err)
{
    struct tp_commit_opts cm = o->cm;
    cm.c = o->c;
    return tp_io_commit(&cm, results, err);
}

static int run_info(const struct tp_io_opts *o, json_t *results, tp_error *err)
{
    json_t *desc = NULL;
    int rc = tp_blkpath_describe(o->path, o->c.sysfs_root, o->mountinfo, &desc, err);
    if (rc == 0)
        json_object_set_new(results, "storage", desc);
    return rc;
}

static const char *const ck_options[] = {"size", "shards", "repeat", "verify", "keep", NULL};
/* dataset takes the checkpoint's size and shards for --during */
static const char *const ds_options[] = {"size",  "shards", "verify", "records", "record-size",
                                         "files", "epochs", "during", NULL};
static const char *const cm_options[] = {"write-size", "count", "time", "sync", "overwrite", NULL};
static const char *const info_options[] = {"mountinfo", NULL};

static const struct tp_io_workload workloads[] = {
    {"checkpoint", ck_options, true, 8, config_checkpoint, run_checkpoint,
     tp__io_print_checkpoint},
    {"dataset", ds_options, true, 32, config_dataset, run_dataset, tp__io_print_dataset},
    {"commit", cm_options, true, 8, config_commit, run_commit, tp__io_print_commit},
    {"info", info_options, false, 0, config_none, run_info, tp__io_print_info},
};

const struct tp_io_workload *tp_io_workload(const char *name)
{
    for (size_t i = 0; i < sizeof workloads / sizeof *workloads; i++)
        if (strcmp(workloads[i].name, name) == 0)
            return &workloads[i];
    return NULL;
}

const char *tp_io_workload_name(const struct tp_io_workload *w)
{
    return w->name;
}

static bool listed(const char *const *list, const char *name)
{
    for (; *list; list++)
        if (strcmp(*list, name) == 0)
            return true;
    return false;
}

bool tp_io_workload_takes(const struct tp_io_workload *w, const char *option)
{
    return strcmp(option, "sysfs-root") == 0 || listed(w->options, option) ||
           (w->target && listed(target_options, option));
}

int tp_io_opts_finish(struct tp_io_opts *o, tp_error *err)
{
    struct tp_io_common *c = &o->c;
    if (!o->w->target) {
        if (!o->path)
            return tp_error_set(err, TP_EUSAGE, "io %s: which PATH?", o->w->name);
        return 0;
    }
    if (o->path && c->target.device)
        return tp_error_set(err, TP_EUSAGE, "give DIR or --device %s, not both", c->target.device);
    if (!o->path && !c->target.device)
        return tp_error_set(err, TP_EUSAGE, "io %s: which DIR (or --device)?", o->w->name);
    if (c->target.destroy_data && !c->target.device)
        return tp_error_set(err, TP_EUSAGE, "--destroy-data: only with --device");
    if (o->ds.during_ckpt && c->target.device)
        return tp_error_set(err, TP_EUSAGE, "--during checkpoint: needs a folder, not --device");
    c->target.dir = o->path;
    c->target.sysfs_root = c->sysfs_root;
    if (!o->have_qd)
        c->qd = o->w->qd;
    return 0;
}

json_t *tp_io_config_json(const struct tp_io_opts *o)
{
    const struct tp_io_common *c = &o->c;
    json_t *j = json_pack("{s:s, s:s?, s:s?, s:s, s:I, s:I, s:I, s:I, s:b, s:b, s:b, s:I, s:I}",
                          "workload", o->w->name, "dir", c->target.dir, "device",
                          c->target.device, "engine", c->engine ? c->engine : "auto", "qd",
                          (json_int_t)c->qd, "jobs", (json_int_t)c->jobs, "bs_bytes",
                          (json_int_t)c->bs, "batch", (json_int_t)c->batch, "direct", c->direct,
                          "drop_cache", c->drop_cache, "force", c->force, "seed",
                          (json_int_t)c->seed, "timeout_ns", (json_int_t)c->timeout_ns);
    o->w->config(o, j);
    return j;
}

int tp_io_run(const struct tp_io_opts *o, json_t *results, tp_error *err)
{
    /* the node's counters (NVMe and NIC links, TCP for NVMe/TCP) around
     * the workload, outside its timed loops (docs/counters.md) */
    struct tp_ctr_probe *probe = tp_ctr_probe_start(NULL, 0);
    int rc = o->w->run(o, results, err);
    json_object_set_new(results, "counters", tp_ctr_probe_end(probe));
    return rc;
}

void tp_io_print(FILE *f, const struct tp_io_opts *o, const json_t *results)
{
    o->w->print(f, o, results);
    tp_ctr_print_results(f, results);
}
