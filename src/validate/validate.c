/* trainpath validate: the main job's entry point. Everything that can refuse
 * the input is checked before anything is created; then the boot group when
 * launched (its ranks agree on the options), the results folder rank 0
 * names (every node writes into the same one when it is shared), a scratch
 * folder for io and step, and the mode: this host alone (host.c) or one
 * node of an allocation (alloc.c). */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tp/check.h"
#include "tp/file.h"
#include "tp/gpu.h"
#include "tp/intr.h"
#include "tp/plan.h"
#include "validate_int.h"

/* GPUs the NVIDIA driver exposes here (/dev/nvidia0, 1, ...), without
 * touching CUDA in this process: the tests run as children. */
static int gpu_count(void)
{
    glob_t g;
    if (glob("/dev/nvidia[0-9]*", 0, NULL, &g) != 0)
        return 0;
    int n = (int)g.gl_pathc;
    globfree(&g);
    return n;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

/* The scratch folder and what io and step left in it (the step's dataset). */
static void rm_tree(const char *path)
{
    nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The scratch folders are /var/tmp/trainpath-validate.XXXXXX, each with a
 * lock file, .lock, that its run holds (flock) for as long as it runs; the
 * kernel drops the lock however the run ends. A run that was killed
 * (SIGKILL, the OOM killer, a job's hard limit) could remove nothing: its
 * folder, with what io and step left in it, goes at the next run's start,
 * as any whose lock can be taken. A folder is locked before it gets its
 * name, so none is ever seen unlocked while its run lives; one without a
 * lock file (an older version's, which may be running) is left alone. */
#define SCRATCH "/var/tmp/trainpath-validate."
#define SCRATCH_NEW "/var/tmp/.trainpath-validate."

static void reap_scratch(void)
{
    glob_t g;
    if (glob(SCRATCH "*", GLOB_NOSORT, NULL, &g) != 0)
        return;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        char lock[TP__VALIDATE_PATH_MAX];
        tp__validate_path(lock, sizeof lock, "%s/.lock", g.gl_pathv[i]);
        int fd = open(lock, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
            rm_tree(g.gl_pathv[i]);
        if (fd >= 0)
            close(fd);
    }
    globfree(&g);
}

/* A new scratch folder into dir: made as .trainpath-validate.XXXXXX, its
 * lock file taken, then renamed. Returns the descriptor holding the lock
 * (close it after removing the folder), or -1 (errno) with dir empty. */
static int make_scratch(char *dir, size_t cap)
{
    for (int tries = 0; tries < 100; tries++) {
        char tmp[64] = SCRATCH_NEW "XXXXXX", lock[80];
        if (!mkdtemp(tmp))
            break;
        tp__validate_path(lock, sizeof lock, "%s/.lock", tmp);
        snprintf(dir, cap, SCRATCH "%s", tmp + sizeof SCRATCH_NEW - 1);
        int fd = open(lock, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
            renameat2(AT_FDCWD, tmp, AT_FDCWD, dir, RENAME_NOREPLACE) == 0)
            return fd;
        int e = errno;
        if (fd >= 0)
            close(fd);
        unlink(lock);
        rmdir(tmp);
        errno = e;
        if (e != EEXIST)
            break;
    }
    dir[0] = 0;
    return -1;
}

/* An output file the job will write (--db, --prometheus): not a folder,
 * and its folder there and writable. */
static int out_file_ok(const char *what, const char *path, tp_error *err)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return tp_error_set(err, TP_EUSAGE, "%s %s: names a folder, not a file", what, path);
    char dir[TP__VALIDATE_PATH_MAX];
    if (access(tp_file_dir_of(path, dir, sizeof dir), W_OK | X_OK) != 0)
        return tp_error_errno(err, TP_EUSAGE, errno, "%s %s: folder %s is not writable", what,
                              path, dir);
    return 0;
}

/* The files the options name, before anything runs: a --policy that is a
 * policy (parsed as check parses it: a plan file or a typo is refused
 * here, naming the file, not after the other tests ran), a readable
 * --key-file, a --db that is an SQLite database or can become one, a
 * --prometheus file that can be written. */
/* --plan FILE: the job's GPUs a node, a node's MTBF (or the job's over its
 * nodes) and its restart, for the decision to evict or isolate; a bad
 * file is refused as `plan` refuses it (file:line:col), prefixed --plan. */
static int job_of_plan(struct tp__validate_ctx *c, tp_error *err)
{
    struct tp_plan_spec *s = calloc(1, sizeof *s);
    if (!s)
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    int rc = tp_plan_parse(c->job_plan, s, err);
    if (rc == 0) {
        const struct tp_plan_cluster *k = &s->c;
        c->gpus_per_node = (int)k->gpus_per_node;
        c->mtbf_node_s = k->mtbf_node_s > 0 ? k->mtbf_node_s : k->mtbf_job_s * k->nodes;
        c->restart_s = k->restart_s;
    } else {
        tp_error_prefix(err, "--plan");
    }
    tp_plan_spec_free(s);
    free(s);
    return rc;
}

static int check_files(const struct tp__validate_ctx *c, tp_error *err)
{
    if (c->policy) {
        struct tp_policy *p = calloc(1, sizeof *p);
        if (!p)
            return tp_error_set(err, TP_ENOMEM, "out of memory");
        int rc = tp_policy_parse(c->policy, p, err);
        free(p);
        if (rc) {
            err->code = TP_EUSAGE;
            tp_error_prefix(err, "--policy %s: not a usable policy", c->policy);
            return TP_EUSAGE;
        }
    }
    if (c->key_file && access(c->key_file, R_OK) != 0)
        return tp_error_errno(err, TP_EUSAGE, errno, "--key-file %s", c->key_file);
    if (c->db) {
        int rc = out_file_ok("--db", c->db, err);
        if (rc)
            return rc;
        FILE *f = fopen(c->db, "rb");
        char magic[16] = {0};
        size_t got = f ? fread(magic, 1, sizeof magic, f) : 0;
        if (f)
            fclose(f);
        if (got > 0 && (got < sizeof magic || memcmp(magic, "SQLite format 3", 16) != 0))
            return tp_error_set(err, TP_EUSAGE,
                                "--db %s: not an SQLite database (the history is one)", c->db);
    }
    if (c->prom)
        return out_file_ok("--prometheus", c->prom, err);
    return 0;
}

/* tp__validate_clear on this node; in a group, every node says how it
 * went (rc) and waits for the others, so none writes into a shared folder
 * that another is still clearing, and one node's failure fails all. */
static int clear_outdir(const struct tp__validate_ctx *c, struct tp_boot *b, int rc,
                        tp_error *err)
{
    if (rc == 0)
        rc = tp__validate_clear(c->outdir, err);
    if (!b)
        return rc;
    return tp__validate_agree(b, rc, TP_EUSAGE, true, err);
}

int tp_validate_run(const struct tp_validate_opts *o, tp_error *err)
{
    struct tp__validate_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    *c = (struct tp__validate_ctx){.profile = o->profile ? o->profile : "quick",
                                   .out = o->out,
                                   .db = o->db,
                                   .policy = o->policy,
                                   .prom = o->prom,
                                   .only = o->only,
                                   .iface = o->iface,
                                   .launcher = tp_boot_detect(o->launcher),
                                   .key_file = o->key_file,
                                   .quiet = o->quiet,
                                   .trace = o->trace,
                                   .pairs_at_once = o->pairs_at_once,
                                   .tier = o->tier,
                                   .budget_s = o->budget_s,
                                   .matchings = o->matchings,
                                   .seed = o->seed,
                                   .min_effect = o->min_effect,
                                   .node_timeout_s = o->node_timeout_s,
                                   .on_fail = o->on_fail,
                                   .sdc_minutes = o->sdc_minutes,
                                   .topology = o->topology,
                                   .job_plan = o->plan,
                                   .spare_nodes = o->spare_nodes,
                                   .keyfd = -1};
    int rc = check_files(c, err);
    /* the fabric's switches, read before any node joins (its errors name
     * the file's line and column) */
    if (rc == 0 && c->topology && (rc = tp_topology_load(c->topology, &c->topo, err)) != 0)
        tp_error_prefix(err, "--topology");
    if (rc == 0 && c->job_plan)
        rc = job_of_plan(c, err);
    /* the tier's name now; --budget's pick once the group's size is known */
    if (rc == 0 && c->tier && c->budget_s > 0)
        rc = tp_error_set(err, TP_EUSAGE, "--tier %s and --budget: one or the other", c->tier);
    if (rc == 0 && c->tier)
        rc = tp__validate_tier_pick(c, 2, err);
    if (rc == 0)
        rc = tp__validate_onfail_check(c->on_fail, err);
    if (rc == 0)
        rc = tp_boot_check_backend(c->launcher, "--launcher", err);
    if (rc == 0)
        rc = tp_boot_check_env(c->launcher, 0, err);
    /* a launcher named but absent would validate this host as a group of one */
    if (rc == 0 && o->launcher && tp_boot_launched(o->launcher) && !tp_boot_launched(NULL))
        rc = tp_error_set(err, TP_EUSAGE,
                          "--launcher %s: no launcher started this process (no rank variable "
                          "of mpirun, srun or torchrun is set); without --launcher, this host "
                          "alone is validated",
                          o->launcher);
    /* the tests are built with a scratch path to come; this checks the
     * profile and --only before anything is created */
    int ngpu = tp_gpu_built() ? gpu_count() : 0;
    if (rc == 0)
        rc = tp_validate_tests(c->profile, c->only, c->policy, ngpu, "", &c->tests, err);
    if (rc == 0 && c->sdc_minutes > 0)
        rc = tp_validate_sdc_soak(&c->tests, c->only, c->sdc_minutes, err);
    struct tp_boot *b = NULL;
    if (rc == 0 && tp_boot_launched(c->launcher)) {
        json_t *bo_opts = json_pack(
            "{s:s, s:s?, s:s?, s:i, s:s?, s:f, s:i, s:I, s:f, s:f, s:s?, s:f, s:s?}", "profile",
            c->profile, "only", c->only, "policy", c->policy ? "given" : NULL, "pairs-at-once",
            c->pairs_at_once, "tier", c->tier, "budget", c->budget_s, "matchings", c->matchings,
            "seed", (json_int_t)c->seed, "min-effect", c->min_effect, "node-timeout",
            c->node_timeout_s, "on-fail", c->on_fail, "sdc-minutes", c->sdc_minutes, "topology",
            c->topology);
        if (bo_opts && c->job_plan) /* the decision's figures, the same on every node */
            json_object_set_new(bo_opts, "plan",
                                json_pack("{s:i, s:f, s:f, s:i}", "gpus_per_node", c->gpus_per_node,
                                          "mtbf_node_s", c->mtbf_node_s, "restart_s",
                                          c->restart_s, "spare_nodes", c->spare_nodes));
        else if (bo_opts)
            json_object_set_new(bo_opts, "spare-nodes", json_integer(c->spare_nodes));
        /* with links to measure (the tier's triage), a node that has not
         * joined by then (--node-timeout, else the group's hour) is left
         * out, and the others go on */
        double join_s = c->node_timeout_s > 0 ? c->node_timeout_s : TP__VALIDATE_GROUP_TIMEOUT_S;
        bool net = tp__validate_any_between(c);
        struct tp_boot_opts bo = {.backend = c->launcher,
                                  .key_file = c->key_file,
                                  .timeout_ns = (uint64_t)(join_s * 1e9),
                                  .options = bo_opts,
                                  .leave_out = net,
                                  /* rank 0 knows every node, each node its
                                   * own (roster.c): O(N) bytes to meet */
                                  .lean = true};
        rc = tp_boot_init(&bo, &b, err);
        json_decref(bo_opts);
        /* the group never formed: rank 0 still leaves its document */
        if (rc != 0 && tp_boot_will_be_rank0(c->launcher))
            tp__validate_unformed(c, err);
        /* the tier for this many nodes (--budget: the deepest that fits) */
        if (rc == 0)
            rc = tp__validate_tier_pick(c, tp_boot_size(b), err);
    }
    /* the results folder: rank 0 names it, so every node writes into the
     * same one (when it is on a shared file system) */
    char stamp[64] = "";
    if (rc == 0 && !c->out) {
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(stamp, sizeof stamp, "results/validate-%Y%m%dT%H%M%SZ", &tm);
        char *first = NULL; /* rank 0's */
        if (b && (rc = tp_boot_bcast(b, stamp, &first, err)) == 0) {
            snprintf(stamp, sizeof stamp, "%s", first);
            free(first);
        }
    }
    bool grouped = rc == 0 && b; /* the nodes agree on the folder from here */
    if (rc == 0)
        snprintf(c->outdir, sizeof c->outdir, "%s", c->out ? c->out : stamp);
    if (rc == 0 && tp__validate_mkdirs(c->outdir) < 0)
        rc = tp_error_errno(err, TP_EUSAGE, errno, "--out %s: cannot create the folder", c->outdir);
    if (rc == 0 && access(c->outdir, W_OK | X_OK) != 0)
        rc = tp_error_errno(err, TP_EUSAGE, errno, "--out %s: not writable", c->outdir);
    /* a run reads only what it wrote: an earlier run's files under the
     * names this one writes go first, on every node before any writes */
    if (rc == 0 || grouped)
        rc = clear_outdir(c, grouped ? b : NULL, rc, err);
    int lock = -1;
    if (rc == 0) {
        reap_scratch();
        lock = make_scratch(c->dir, sizeof c->dir);
        if (lock < 0)
            rc = tp_error_errno(err, TP_ESYS, errno, "scratch folder under /var/tmp");
    }
    if (rc == 0 && !(c->envp = tp__validate_child_env()))
        rc = tp_error_set(err, TP_ENOMEM, "out of memory");
    if (rc == 0) /* the SDC test hook is this node's, or none */
        tp__validate_sdc_env(c, b ? tp_boot_rank(b) : 0);
    if (rc == 0)
        rc = tp_validate_tests(c->profile, c->only, c->policy, ngpu, c->dir, &c->tests, err);
    if (rc == 0 && c->sdc_minutes > 0)
        rc = tp_validate_sdc_soak(&c->tests, c->only, c->sdc_minutes, err);
    int status = rc;
    if (rc == 0) {
        c->tty = o->progress_line; /* the CLI's rule (tp/progress.h) */
        status = b && tp_boot_size(b) > 1 ? tp__validate_alloc(c, b) : tp__validate_host(c);
    }
    if (c->dir[0])
        rm_tree(c->dir);
    if (lock >= 0)
        close(lock);
    bool lost = c->lost, done = c->done;
    free(c->envp);
    tp_topology_free(c->topo);
    free(c);
    if (lost) {
        /* a rank lost where the launcher's group cannot end without it
         * (MPI: MPI_Finalize would wait for it forever): rank 0 has written
         * what it has and ends the job; the others give it that long, and
         * end the job themselves when it was rank 0 that was lost (once
         * every rank has rank 0's verdict, none waits; nor does one that
         * was interrupted) */
        if (tp_boot_rank(b) != 0 && !done && !tp_intr_signal())
            sleep(TP__VALIDATE_ABORT_GRACE_S);
        tp_boot_abort(b, status > 0 ? status : 1);
    } else {
        tp_boot_fini(b);
    }
    /* after the outputs of what ran, and without the scratch folder */
    int irc = status >= 0 ? tp_intr_check(err) : 0;
    if (irc)
        return irc;
    return status;
}
