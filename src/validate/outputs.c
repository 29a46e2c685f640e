/* validate's outputs, the end of every validation in either mode: the plan
 * file of the machine measured (fed with its own result documents), the
 * history database (one batch per validation), the Prometheus textfile and
 * the HTML report, all in the results folder. Each is written even when
 * another failed, and each failure is said once. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "tp/history.h"
#include "tp/html.h"
#include "tp/judge.h"
#include "tp/log.h"
#include "validate_int.h"

int tp__validate_write_plan(struct tp__validate_ctx *c, int nodes, int gpus_per_node,
                            const char *net_lat, const char *net_bw, const char *coll,
                            const char *io)
{
    snprintf(c->plan, sizeof c->plan, "%s/plan-this-machine.yaml", c->outdir);
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

int tp__validate_mkdirs(const char *path)
{
    char buf[4096];
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

int tp__validate_outputs(struct tp__validate_ctx *c, const json_t *const *docs, size_t n,
                         const json_t *const *html_docs, size_t nh, const json_t *rows,
                         const json_t *verdicts)
{
    char db[4400];
    if (c->db)
        snprintf(db, sizeof db, "%s", c->db);
    else
        snprintf(db, sizeof db, "%s/history.sqlite", c->outdir);
    char batch[64];
    snprintf(batch, sizeof batch, "validate-%lld", (long long)time(NULL));
    tp_error herr = {0};
    struct tp_history *h = NULL;
    int hrc = tp_history_open(db, &h, &herr);
    for (size_t i = 0; i < n && hrc == 0; i++)
        hrc = tp_history_add(h, docs[i], NULL, batch, &herr);
    if (h)
        tp_history_close(h);
    tp_error perr = {0};
    int prc = c->prom ? tp_prom_write(c->prom, rows, NULL, &perr) : 0;
    char html[4400];
    snprintf(html, sizeof html, "%s/report.html", c->outdir);
    tp_error rerr = {0};
    int rrc = tp_html_report(html_docs, nh, verdicts, html, &rerr);
    if (!c->quiet) {
        printf("history: %s\n", hrc ? herr.msg : db);
        printf("report: %s\n", rrc ? rerr.msg : html);
        if (c->prom)
            printf("prometheus: %s\n", prc ? perr.msg : c->prom);
    } else {
        if (hrc)
            fprintf(stderr, "trainpath: error: history: %s\n", herr.msg);
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
