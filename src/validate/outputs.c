/* validate's outputs, the end of every validation in either mode: the plan
 * file of the machine measured (fed with its own result documents), the
 * history database (one batch per validation), the Prometheus textfile and
 * the HTML report, all in the results folder. Each is written even when
 * another failed, and each failure is said once. Before a run starts, what
 * an earlier run left there under the names it writes is removed: a run
 * reads only what it wrote. */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tp/history.h"
#include "tp/html.h"
#include "tp/judge.h"
#include "tp/log.h"
#include "tp/result.h"
#include "validate_int.h"

int tp__validate_write_plan(struct tp__validate_ctx *c, int nodes, int gpus_per_node,
                            const char *net_lat, const char *net_bw, const char *coll,
                            const char *io)
{
    if (tp__validate_path(c->plan, sizeof c->plan, "%s/plan-this-machine.yaml", c->outdir) < 0)
        return -1;
    FILE *f = fopen(c->plan, "w");
    if (!f)
        return -1;
    fprintf(f,
            "# written by trainpath validate: the machine measured, fed with its results\n"
            "workload:\n  name: resnet50-this-machine\n  parameters: 1.28M\n"
            "  gradient_bytes_per_parameter: 4\n  samples_per_gpu: 256\n  compute_time: 5ms\n"
            "  train_samples: 1M\n"
            "cluster:\n  nodes: %d\n  gpus_per_node: %d\n  intra_node:\n"
            "    latency: {measured: %s}\n    bandwidth: {measured: %s}\n  mtbf_job: 24h\n"
            "prices:\n  gpu_hour: 1\n"
            "candidates:\n  - name: this-machine\n    network:\n"
            "      latency: {measured: %s}\n      bandwidth: {measured: %s}\n"
            "    storage:\n      write_bandwidth: {measured: %s}\n"
            "      commit_latency: {measured: %s}\n",
            nodes, gpus_per_node, coll, coll, net_lat, net_bw, io, io);
    return fclose(f) == 0 ? 0 : -1;
}

int tp__validate_path(char *out, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(out, cap, fmt, ap);
    va_end(ap);
    if (len >= 0 && (size_t)len < cap)
        return 0;
    tp_log(TP_LOG_ERROR, "a path of more than %zu bytes: %.80s...", cap - 1, out);
    if (cap)
        out[0] = 0;
    errno = ENAMETOOLONG;
    return -1;
}

int tp__validate_mkdirs(const char *path)
{
    char buf[TP__VALIDATE_PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(buf, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

/* Is name (a file's, without its folder) one a validation writes? The
 * temporary file of an atomic write, ".NAME.tmp.XXXXXX", counts as NAME. */
static bool ours(const char *name)
{
    /* (report.html is not among them: nothing reads it, and an earlier one
     * stays whole until this run's replaces it, or a failed write of this
     * run's says so) */
    static const char *const fixed[] = {"net-serve.log", "plan-this-machine.yaml", "fleet.json",
                                        "fleet.jsonl", "nodes.jsonl"};
    static const char *const ext[] = {".trace.json", ".json", ".log"};
    size_t len = strlen(name);
    const char *tmp = name[0] == '.' ? strstr(name, ".tmp.") : NULL;
    if (tmp && strlen(tmp) == sizeof ".tmp.XXXXXX" - 1) {
        name++;
        len = (size_t)(tmp - name);
    }
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (strlen(fixed[i]) == len && strncmp(name, fixed[i], len) == 0)
            return true;
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        size_t el = strlen(ext[i]);
        if (len > el && strncmp(name + len - el, ext[i], el) == 0 &&
            tp__validate_test_named(name, len - el))
            return true;
    }
    return false;
}

/* nftw has no context: the clearing's first failure */
static char clear_failed[TP__VALIDATE_PATH_MAX];
static int clear_errno;

static int clear_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    int rc = 0;
    if (flag == FTW_DP) /* a folder of nodes/, pairs/, groups/ it emptied */
        rmdir(path);
    else if (flag == FTW_F || flag == FTW_SL || flag == FTW_SLN)
        rc = ours(path + ftw->base) ? unlink(path) : 0;
    if (rc < 0 && errno != ENOENT && !clear_failed[0]) {
        clear_errno = errno;
        snprintf(clear_failed, sizeof clear_failed, "%s", path);
    }
    return 0;
}

int tp__validate_clear(const char *dir, tp_error *err)
{
    clear_failed[0] = 0;
    char path[TP__VALIDATE_PATH_MAX];
    /* the top: its files alone (a folder of another name is not ours) */
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        struct stat st;
        tp__validate_path(path, sizeof path, "%s/%s", dir, e->d_name);
        if (ours(e->d_name) && lstat(path, &st) == 0 && !S_ISDIR(st.st_mode) &&
            unlink(path) < 0 && errno != ENOENT && !clear_failed[0]) {
            clear_errno = errno;
            snprintf(clear_failed, sizeof clear_failed, "%s", path);
        }
    }
    if (d)
        closedir(d);
    static const char *const subs[] = {"nodes", "pairs", "groups"};
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        tp__validate_path(path, sizeof path, "%s/%s", dir, subs[i]);
        nftw(path, clear_one, 16, FTW_DEPTH | FTW_PHYS);
    }
    if (clear_failed[0])
        return tp_error_errno(err, TP_EUSAGE, clear_errno,
                              "--out %s: cannot remove %s, an earlier run's, which this run would "
                              "write",
                              dir, clear_failed);
    return 0;
}

void tp__validate_hist_open(const struct tp__validate_ctx *c, struct tp__validate_hist *vh)
{
    memset(vh, 0, sizeof *vh);
    if (c->db)
        snprintf(vh->db, sizeof vh->db, "%s", c->db);
    else
        tp__validate_path(vh->db, sizeof vh->db, "%s/history.sqlite", c->outdir);
    snprintf(vh->batch, sizeof vh->batch, "validate-%lld", (long long)time(NULL));
    vh->rc = tp_history_open(vh->db, &vh->h, &vh->err);
}

void tp__validate_hist_add(struct tp__validate_hist *vh, const json_t *doc)
{
    if (vh->rc == 0)
        vh->rc = tp_history_add(vh->h, doc, NULL, vh->batch, &vh->err);
}

int tp__validate_outputs(struct tp__validate_ctx *c, struct tp__validate_hist *hist,
                         const json_t *const *docs, size_t n, const json_t *const *html_docs,
                         size_t nh, const json_t *rows, const json_t *verdicts)
{
    struct tp__validate_hist own;
    struct tp__validate_hist *vh = hist ? hist : &own;
    if (!hist)
        tp__validate_hist_open(c, &own);
    for (size_t i = 0; i < n; i++)
        tp__validate_hist_add(vh, docs[i]);
    if (vh->h)
        tp_history_close(vh->h);
    vh->h = NULL;
    int hrc = vh->rc;
    tp_error perr = {0};
    int prc = c->prom ? tp_prom_write(c->prom, rows, NULL, &perr) : 0;
    char html[TP__VALIDATE_PATH_MAX];
    tp__validate_path(html, sizeof html, "%s/report.html", c->outdir);
    tp_error rerr = {0};
    int rrc = tp_html_report(html_docs, nh, verdicts, html, &rerr);
    if (!c->quiet) {
        printf("history: %s\n", hrc ? vh->err.msg : vh->db);
        printf("report: %s\n", rrc ? rerr.msg : html);
        if (c->prom)
            printf("prometheus: %s\n", prc ? perr.msg : c->prom);
    } else {
        if (hrc)
            fprintf(stderr, "trainpath: error: history: %s\n", vh->err.msg);
        if (rrc)
            fprintf(stderr, "trainpath: error: report: %s\n", rerr.msg);
        if (prc)
            fprintf(stderr, "trainpath: error: prometheus: %s\n", perr.msg);
    }
    return hrc || rrc || prc ? 1 : 0;
}

int tp__validate_fail(const tp_error *err)
{
    tp_log(TP_LOG_ERROR, "%s", err->msg[0] ? err->msg : tp_code_name(err->code));
    return tp_exit_code(err->code);
}

void tp__validate_unformed(const struct tp__validate_ctx *c, const tp_error *why)
{
    char dir[TP__VALIDATE_PATH_MAX], path[TP__VALIDATE_PATH_MAX];
    if (c->out) {
        snprintf(dir, sizeof dir, "%s", c->out);
    } else {
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(dir, sizeof dir, "results/validate-%Y%m%dT%H%M%SZ", &tm);
    }
    if (tp__validate_mkdirs(dir) < 0) {
        tp_log(TP_LOG_ERROR, "--out %s: cannot create the folder: %s", dir, strerror(errno));
        return;
    }
    json_t *doc =
        tp_result_new("fleet", json_pack("{s:s, s:s?}", "profile", c->profile, "only", c->only));
    tp_result_finish(doc, why->code, why->msg);
    tp__validate_path(path, sizeof path, "%s/fleet.json", dir);
    tp_error werr;
    if (tp_result_write(doc, path, &werr) < 0)
        tp_log(TP_LOG_ERROR, "%s", werr.msg);
    else if (!c->quiet)
        printf("fleet: %s\n", path);
    json_decref(doc);
}
