/* What rank 0 reports after `trainpath step`: from every rank's per-step
 * records (gathered), the series, the step-time statistics and the summary
 * fractions (amplification, exposed comm, checkpoint overhead, data wait,
 * goodput); then the calibration, the data path and the reproducibility
 * verdict over the runs' weight hashes. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "step_int.h"
#include "tp/exact.h"
#include "tp/gpu.h"
#include "tp/model.h"
#include "tp/result.h"
#include "tp/stats.h"

static const char *const field_names[NF] = {
    "data_wait", "compute", "comm", "comm_exposed", "ckpt_stall", "delay_io", "delay_comm",
    "delay_compute", "step", "loss", "straggler_wait", "comm_overlapped"};

static json_t *stats_of(const uint64_t *v, uint64_t n)
{
    uint64_t *c = malloc((n ? n : 1) * sizeof *c);
    if (!c)
        return json_null();
    memcpy(c, v, n * sizeof *c);
    tp_stats s;
    tp_stats_from_samples(c, n, &s);
    free(c);
    return tp_stats_to_json(&s, 1, "ns");
}

/* Rank 0's summary from every rank's records (all[rank][step * NF + f]). */
static void summarise(const struct rank *r, uint64_t *all, json_t *run)
{
    const struct tp_step_opts *o = r->o;
    uint64_t S = o->steps, n = (uint64_t)r->n;
    uint64_t *job = calloc(S, sizeof *job), *each = calloc(S * n, sizeof *each);
    double sum_max = 0, sum_all = 0, exposed = 0, ckpt = 0, comm = 0, wait = 0, compute = 0;
    double own_max = 0, own_all = 0, hidden = 0;
    json_t *series = json_object();
    for (int f = 0; f < NF; f++)
        json_object_set_new(series, field_names[f], json_array());
    for (uint64_t s = 0; job && each && s < S; s++) {
        uint64_t mx = 0;
        for (uint64_t k = 0; k < n; k++) {
            const uint64_t *f = &all[(k * S + s) * NF];
            mx = f[F_STEP] > mx ? f[F_STEP] : mx;
            each[s * n + k] = f[F_STEP];
            sum_all += (double)f[F_STEP];
            exposed += (double)f[F_EXPOSED];
            ckpt += (double)f[F_CKPT];
            comm += (double)f[F_COMM];
            wait += (double)f[F_WAIT];
            compute += (double)f[F_COMPUTE];
            hidden += (double)f[F_OVERLAP];
        }
        job[s] = mx;
        sum_max += (double)mx;
        /* a rank's own step: its step less the time it waited for the last
         * rank to have its gradient ready */
        uint64_t last = 0, own_mx = 0;
        for (uint64_t k = 0; k < n; k++) {
            uint64_t t = all[(k * S + s) * NF + F_READY];
            last = t > last ? t : last;
        }
        for (uint64_t k = 0; k < n; k++) {
            uint64_t *f = &all[(k * S + s) * NF];
            uint64_t lag = last - f[F_READY], own = f[F_STEP] > lag ? f[F_STEP] - lag : 0;
            own_mx = own > own_mx ? own : own_mx;
            own_all += (double)own;
            f[F_READY] = lag; /* reported as straggler_wait */
        }
        own_max += (double)own_mx;
        for (int fi = 0; fi < NF; fi++) {
            json_t *per = json_array();
            for (uint64_t k = 0; k < n; k++) {
                const uint64_t *f = &all[(k * S + s) * NF];
                if (fi == F_LOSS) {
                    float l;
                    memcpy(&l, &f[F_LOSS], sizeof l);
                    json_array_append_new(per, json_real(l));
                } else
                    json_array_append_new(per, json_integer((json_int_t)f[fi]));
            }
            json_array_append_new(json_object_get(series, field_names[fi]),
                                  fi == F_LOSS ? json_incref(json_array_get(per, 0)) : per);
            if (fi == F_LOSS)
                json_decref(per);
        }
    }
    double own_mean = own_all / (double)(S * n);
    double job_mean = own_max / (double)S;
    json_t *loss = json_object_get(series, "loss");
    json_object_set(run, "loss", loss);
    json_object_del(series, "loss");
    json_object_set_new(run, "series", series);
    json_object_set_new(run, "step_time", job ? stats_of(job, S) : json_null());
    json_object_set_new(run, "rank_step_time", each ? stats_of(each, S * n) : json_null());
    json_object_set_new(
        run, "summary",
        json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "amplification",
                  json_real(own_mean > 0 ? job_mean / own_mean : 0),
                  "exposed_comm_fraction", json_real(sum_all > 0 ? exposed / sum_all : 0),
                  "ckpt_overhead_fraction", json_real(sum_all > 0 ? ckpt / sum_all : 0),
                  "data_wait_fraction", json_real(sum_all > 0 ? wait / sum_all : 0),
                  "compute_fraction", json_real(sum_all > 0 ? compute / sum_all : 0),
                  "comm_hidden_fraction", json_real(comm > 0 ? hidden / comm : 0),
                  "goodput", tp_metric(sum_max > 0 ? (double)(o->batch * S) / (sum_max / 1e9) : 0,
                                       "samples/s")));
    free(job);
    free(each);
}

json_t *tp__step_run_json(const struct rank *r, unsigned run, const char *hex, uint64_t wall_ns,
                          uint64_t *all)
{
    const struct tp_step_opts *o = r->o;
    json_t *jr = json_pack("{s:I, s:s, s:o}", "run", (json_int_t)run, "weights_sha256", hex,
                           "wall", tp_metric((double)wall_ns / 1e9, "s"));
    summarise(r, all, jr);
    float last;
    memcpy(&last, &all[(o->steps - 1) * NF + F_LOSS], sizeof last);
    json_object_set_new(jr, "final_loss", json_real(last));
    if (run > 0) {
        /* the time series of run 0 is enough; later runs keep their summaries */
        json_object_del(jr, "series");
        json_object_del(jr, "loss");
    }
    return jr;
}

void tp__step_repro_note(struct tp__step_repro *p, const struct rank *r, unsigned run,
                         const char *hex)
{
    size_t n = tp_model_params(r->o->dim);
    if (run == 0) {
        memcpy(p->first_hash, hex, sizeof p->first_hash);
        memcpy(p->w0, r->w, n * sizeof *p->w0);
    } else if (strcmp(hex, p->first_hash) != 0) {
        p->differs = true;
        p->distinct++;
        for (size_t e = 0; e < n; e++) {
            uint64_t u = tp_ulps_f32(p->w0[e], r->w[e]);
            p->max_ulps = u > p->max_ulps ? u : p->max_ulps;
        }
    }
}

void tp__step_results(const struct rank *r, const struct tp__step_repro *p, bool created,
                      json_t *runs, json_t *results)
{
    const struct tp_step_opts *o = r->o;
    json_object_set_new(results, "dataset_created", json_boolean(created));
    json_object_set_new(results, "calibration",
                        json_pack("{s:f, s:I}", "work_ns_per_iter", r->work_ns_per_iter,
                                  "iters_per_step",
                                  (json_int_t)(o->compute_ms * 1e6 / r->work_ns_per_iter)));
    if (o->compute_gpu)
        json_object_set_new(
            json_object_get(results, "calibration"), "gpu",
            json_pack("{s:i, s:o, s:I, s:o}", "gemm_side", (int)r->gemm_n, "gemm_time",
                      tp_metric(r->gemm_ns, "ns"), "products_per_step",
                      (json_int_t)r->gemm_reps, "throughput",
                      tp_metric(r->gemm_ns > 0 ? tp_gpu_gemm_flops(r->gemm_n) / r->gemm_ns * 1e9
                                               : 0,
                                "FLOP/s")));
    bool emu = tp_gpu_emulated(o->gpu);
    const char *where = !o->compute_gpu ? "cpu"
                        : emu           ? "gpu (emulated: CPU f32 products)"
                                        : "gpu (cuBLAS bf16 matrix products)";
    const char *sync = o->nccl        ? "nccl"
                       : o->grad_cuda ? "trainpath, staged through host memory"
                                      : "trainpath";
    json_object_set_new(results, "data_path",
                        json_pack("{s:b, s:s, s:s, s:s}", "emulated", emu, "compute", where,
                                  "gradients", o->grad_cuda ? "cuda" : "host", "sync", sync));
    json_object_set_new(results, "runs", runs);
    if (o->workload)
        json_object_set_new(results, "workload",
                            tp__step_workload_compare(r, json_array_get(runs, 0)));
    const char *mode = o->reduce == TP_STEP_EXACT     ? "exact"
                       : o->reduce == TP_STEP_ARRIVAL ? "arrival"
                                                      : "plain";
    json_object_set_new(results, "reproducibility",
                        json_pack("{s:s, s:I, s:s, s:b, s:I, s:I, s:s}", "reduce", mode, "runs",
                                  (json_int_t)o->runs, "weights_sha256", p->first_hash,
                                  "identical", !p->differs, "distinct_hashes",
                                  (json_int_t)p->distinct, "max_ulps", (json_int_t)p->max_ulps,
                                  "verdict",
                                  o->runs < 2   ? "not checked (one run)"
                                  : !p->differs ? "bitwise identical"
                                  : o->reduce == TP_STEP_ARRIVAL
                                      ? "diverged, as arrival-order summation does"
                                      : "NOT reproducible"));
}

int tp__step_repro_check(const struct rank *r, const struct tp__step_repro *p, tp_error *err)
{
    const struct tp_step_opts *o = r->o;
    if (!p->differs || o->reduce == TP_STEP_ARRIVAL)
        return 0;
    return tp_error_set(err, TP_ECHECK,
                        "the weights differ between runs (%u distinct hashes, up to %" PRIu64
                        " ulps) in %s mode, which must be bitwise reproducible",
                        p->distinct, p->max_ulps, o->reduce == TP_STEP_EXACT ? "exact" : "plain");
}
