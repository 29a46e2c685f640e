/* step's table for people: the header line of a run and, once it is
 * over, the summary of rank 0's results (milliseconds; the weights' hash
 * cut to 16 hex digits). The summary reads the result document only. */
#include "tp/step.h"
#include "tp/units.h"

void tp_step_print_header(FILE *f, const struct tp_step_given *g, int n)
{
    const struct tp_step_opts *s = &g->o;
    char a[32], b[32];
    /* a workload's step goes by its recorded collectives, not buckets */
    char how[64];
    if (s->workload)
        snprintf(how, sizeof how, "gradient, up to %u recorded collective%s a step", s->buckets,
                 s->buckets == 1 ? "" : "s");
    else
        snprintf(how, sizeof how, "gradient in %u bucket%s", s->buckets,
                 s->buckets == 1 ? "" : "s");
    fprintf(f,
            "# trainpath step: %s, %d rank%s, %llu steps, global batch %llu, %s samples, "
            "%s %s%s, compute %.3g ms, reduce %s\n",
            g->preset ? g->preset : s->workload ? "workload" : "custom", n, n == 1 ? "" : "s",
            (unsigned long long)s->steps, (unsigned long long)s->batch,
            tp_fmt_size(s->sample_bytes, a, sizeof a), tp_fmt_size(s->grad_bytes, b, sizeof b),
            how, s->overlap ? " overlapped" : "",
            s->compute_ms,
            s->reduce == TP_STEP_EXACT     ? "exact"
            : s->reduce == TP_STEP_ARRIVAL ? "arrival"
                                           : "plain");
    fflush(f);
}

void tp_step_print_summary(FILE *f, const struct tp_step_opts *s, const json_t *results)
{
    size_t i;
    json_t *run;
    fprintf(f, "# %-4s %10s %10s %10s %10s %6s %6s %8s %8s %10s %10s  %s\n", "run", "step(ms)",
            "p50", "p99", "max", "CoV", "ampl", "exposed", "ckpt", "samples/s", "loss",
            "weights sha256");
    json_array_foreach(json_object_get(results, "runs"), i, run)
    {
        json_t *st = json_object_get(run, "step_time"), *sm = json_object_get(run, "summary");
        fprintf(f,
                "  %-4zu %10.3f %10.3f %10.3f %10.3f %6.3f %6.3f %7.1f%% %7.1f%% %10.0f %10.5f  "
                "%.16s\n",
                i, json_number_value(json_object_get(st, "mean")) / 1e6,
                json_number_value(json_object_get(st, "p50")) / 1e6,
                json_number_value(json_object_get(st, "p99")) / 1e6,
                json_number_value(json_object_get(st, "max")) / 1e6,
                json_number_value(json_object_get(st, "cv")),
                json_number_value(json_object_get(sm, "amplification")),
                100 * json_number_value(json_object_get(sm, "exposed_comm_fraction")),
                100 * json_number_value(json_object_get(sm, "ckpt_overhead_fraction")),
                json_number_value(json_object_get(json_object_get(sm, "goodput"), "value")),
                json_number_value(json_object_get(run, "final_loss")),
                json_string_value(json_object_get(run, "weights_sha256")));
    }
    json_t *r0 = json_array_get(json_object_get(results, "runs"), 0);
    json_t *series = json_object_get(r0, "series");
    if (series) {
        static const char *const parts[] = {"data_wait",    "compute",    "comm",
                                            "comm_exposed", "ckpt_stall", "step"};
        fprintf(f, "# run 0, mean per step and rank (ms):");
        for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++) {
            json_t *steps = json_object_get(series, parts[k]), *per;
            double sum = 0;
            size_t cnt = 0, si, ri;
            json_t *x;
            json_array_foreach(steps, si, per) json_array_foreach(per, ri, x)
            {
                sum += json_number_value(x);
                cnt++;
            }
            fprintf(f, " %s %.3f", parts[k], cnt ? sum / (double)cnt / 1e6 : 0);
        }
        fprintf(f, "\n");
    }
    json_t *rp = json_object_get(results, "reproducibility");
    fprintf(f, "# reproducibility (%s, %u run%s): %s\n",
            json_string_value(json_object_get(rp, "reduce")), s->runs, s->runs == 1 ? "" : "s",
            json_string_value(json_object_get(rp, "verdict")));
}
