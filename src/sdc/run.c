/* `trainpath sdc` (include/tp/sdc.h): the screen of one node. One chain per
 * thread, each thread pinned to one of the CPUs this process may use
 * (round-robin), all on the same seed; the threads are judged against
 * their majority (judge.c), so a core that computes wrong is named with
 * the step it diverged at, and the majority's chain is the node's, which
 * validate compares across nodes (src/validate/sdc.c).
 *
 * With --gpu, one more thread per GPU of the host runs the chain with its
 * products on that GPU (gpu.c), judged with the GPUs of its key.
 *
 * By time (--time) the threads stop together: at each checkpoint they
 * meet at a barrier, thread 0 having said before it whether the time is
 * up, so every thread's chain ends at the same step. By steps they never
 * wait for each other. */
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdc_int.h"
#include "tp/blockfx.h"
#include "tp/clock.h"
#include "tp/intr.h"
#include "tp/progress.h"
#include "tp/result.h"
#include "tp/units.h"

#define DEFAULT_STEPS 10000

/* What the threads share. */
struct shared {
    uint64_t seed, steps; /* steps 0: by time */
    uint64_t deadline_ns;
    struct tp_sdc_fault fault;
    pthread_mutex_t mu; /* the start: no thread runs before all were made */
    pthread_cond_t cv;
    int go;                 /* 0: wait, 1: run, -1: a thread could not be made */
    pthread_barrier_t meet; /* by time: at every checkpoint */
    uint64_t stop;          /* by time: the checkpoint where all stop (thread 0 says) */
    int failed;             /* a thread could not go on */
};

struct worker {
    struct shared *sh;
    int t, cpu; /* its CPU, -1 when it could not be pinned */
    struct tp__sdc_gpus *gpus; /* a GPU's chain: the host's GPUs, and which */
    int gpu;
    struct tp_sdc_chain chain;
    uint64_t ns; /* its chain's time */
    int rc;
    tp_error err;
};

/* Thread 0, by time, at checkpoint s: is this where every thread stops? */
static void say_stop(struct shared *sh, uint64_t s)
{
    if (tp_now_ns() >= sh->deadline_ns || tp_intr_signal() ||
        __atomic_load_n(&sh->failed, __ATOMIC_ACQUIRE))
        __atomic_store_n(&sh->stop, s, __ATOMIC_RELEASE);
}

static void *work(void *arg)
{
    struct worker *w = arg;
    struct shared *sh = w->sh;
    pthread_mutex_lock(&sh->mu);
    while (!sh->go)
        pthread_cond_wait(&sh->cv, &sh->mu);
    int go = sh->go;
    pthread_mutex_unlock(&sh->mu);
    if (go < 0)
        return NULL;
    if (w->cpu >= 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(w->cpu, &one);
        if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) != 0)
            w->cpu = -1;
    }
    struct tp__sdc_state st;
    w->rc = tp__sdc_init(&st, sh->seed, w->gpus ? tp__sdc_gpus_device(w->gpus, w->gpu) : NULL,
                         &w->err);
    if (w->rc == 0 && w->gpus)
        w->rc = tp__sdc_gpus_prepare(w->gpus, w->gpu, st.w, &w->err);
    uint64_t t0 = tp_now_ns();
    for (uint64_t s = 1;; s++) {
        bool last = sh->steps && s == sh->steps;
        if (w->rc == 0)
            w->rc = tp__sdc_step(&st, s, tp__sdc_flip(&sh->fault, w->t, w->gpus ? w->gpu : -1, s),
                                 &w->err);
        if (!tp_sdc_is_checkpoint(s) && !last)
            continue;
        if (w->rc == 0)
            w->rc = tp__sdc_keep(&w->chain, s, st.h, &w->err);
        if (w->t == 0) /* by steps: one store; the line's thread draws it */
            tp_progress_set((double)s);
        if (sh->steps) {
            if (last || w->rc || tp_intr_signal())
                break;
            continue;
        }
        if (w->rc)
            __atomic_store_n(&sh->failed, 1, __ATOMIC_RELEASE);
        if (w->t == 0)
            say_stop(sh, s);
        pthread_barrier_wait(&sh->meet);
        if (__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE) == s)
            break;
    }
    w->ns = tp_now_ns() - t0;
    tp__sdc_fini(&st);
    return NULL;
}

/* The CPUs this process may use, in order, into cpus (at most cap). */
static int allowed_cpus(int *cpus, int cap)
{
    cpu_set_t set;
    int n = 0;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 0;
    for (int c = 0; c < CPU_SETSIZE && n < cap; c++)
        if (CPU_ISSET(c, &set))
            cpus[n++] = c;
    return n;
}

static int check_opts(const struct tp_sdc_opts *o, tp_error *err)
{
    if (o->steps && o->seconds > 0)
        return tp_error_set(err, TP_EUSAGE, "--steps and --time: one or the other");
    if (o->steps > TP_SDC_MAX_STEPS)
        return tp_error_set(err, TP_EUSAGE, "--steps %" PRIu64 ": at most %" PRIu64, o->steps,
                            TP_SDC_MAX_STEPS);
    if (o->seconds < 0 || o->seconds > 7 * 86400.0)
        return tp_error_set(err, TP_EUSAGE, "--time: %g s is more than a week", o->seconds);
    if (o->threads < 0 || o->threads > TP_SDC_MAX_THREADS)
        return tp_error_set(err, TP_EUSAGE, "--threads %d: 1 to %d", o->threads,
                            TP_SDC_MAX_THREADS);
    return o->json ? tp_result_path_ok(o->json, err) : 0;
}

/* The threads' findings, each with its chain's summary. */
static json_t *thread_rows(const struct worker *w, int n, const struct tp_sdc_verdict *v)
{
    static const char *const call[] = {"agree", "odd", "undecided", "absent"};
    json_t *rows = json_array();
    for (int t = 0; rows && t < n; t++) {
        char says[200], final[65];
        tp_sdc_says(v, t, "threads", says, sizeof says);
        for (int b = 0; b < 32; b++)
            snprintf(final + 2 * b, 3, "%02x", w[t].chain.final[b]);
        const struct tp_sdc_member *x = &v->of[t];
        bool off = x->call == TP_SDC_ODD || x->call == TP_SDC_UNDECIDED;
        json_array_append_new(
            rows,
            json_pack(
                "{s:i, s:o, s:I, s:s, s:o, s:s, s:o, s:o, s:s}", "thread", t, "cpu",
                w[t].cpu >= 0 ? json_integer(w[t].cpu) : json_null(), "steps",
                (json_int_t)w[t].chain.steps, "final", final, "step_time",
                tp_metric(w[t].chain.steps ? (double)w[t].ns / (double)w[t].chain.steps : 0, "ns"),
                "call", call[x->call], "step",
                off ? json_integer((json_int_t)x->step) : json_null(), "after",
                off ? json_integer((json_int_t)x->after) : json_null(), "says", says));
    }
    return rows;
}

/* The median of the threads' step times. */
static double median_step_ns(const struct worker *w, int n)
{
    double *v = n > 0 ? malloc((size_t)n * sizeof *v) : NULL, m = 0;
    if (!v)
        return 0;
    for (int t = 0; t < n; t++) {
        double x = w[t].chain.steps ? (double)w[t].ns / (double)w[t].chain.steps : 0;
        int k = t;
        while (k > 0 && v[k - 1] > x) { /* insertion: a few threads */
            v[k] = v[k - 1];
            k--;
        }
        v[k] = x;
    }
    m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    free(v);
    return m;
}

/* Judge the threads; the node's chain is the majority's (thread 0's when
 * there is none). Fills results; returns 0 or TP_ECHECK with err naming
 * the first thread that diverged. */
static int judge_threads(const struct worker *w, int n, json_t *results, tp_error *err)
{
    struct tp_sdc_judge *j = tp_sdc_judge_new(n);
    struct tp_sdc_verdict v = {0};
    int rc = j ? 0 : tp_error_set(err, TP_ENOMEM, "out of memory");
    for (int t = 0; rc == 0 && t < n; t++)
        rc = tp_sdc_judge_add(j, t, &w[t].chain, err);
    if (rc == 0)
        rc = tp_sdc_judge_result(j, &v, err);
    tp_sdc_judge_free(j);
    if (rc)
        return rc;
    int node = 0, first = -1;
    for (int t = n - 1; t >= 0; t--) {
        if (v.of[t].call == TP_SDC_AGREE)
            node = t;
        if (v.of[t].call != TP_SDC_AGREE && (first < 0 || v.of[t].step <= v.of[first].step))
            first = t;
    }
    json_object_set_new(results, "majority", json_integer(v.majority));
    json_object_set_new(results, "diverged", json_integer(v.odd));
    json_object_set_new(results, "chain", tp_sdc_chain_json(&w[node].chain));
    json_object_set_new(results, "threads_detail", thread_rows(w, n, &v));
    char says[240];
    if (first >= 0) {
        tp_sdc_says(&v, first, "threads", says, sizeof says);
        json_object_set_new(results, "first",
                            json_pack("{s:i, s:o, s:I, s:I}", "thread", first, "cpu",
                                      w[first].cpu >= 0 ? json_integer(w[first].cpu) : json_null(),
                                      "step", (json_int_t)v.of[first].step, "after",
                                      (json_int_t)v.of[first].after));
        char cpu[32] = "not pinned";
        if (w[first].cpu >= 0)
            snprintf(cpu, sizeof cpu, "CPU %d", w[first].cpu);
        if (v.majority) /* the odd one out */
            rc = tp_error_set(err, TP_ECHECK, "thread %d (%s): %s", first, cpu, says);
        else /* nobody to blame: "the 2 threads disagree from step S; ..." */
            rc = tp_error_set(err, TP_ECHECK, "%s", says);
    } else {
        json_object_set_new(results, "first", json_null());
    }
    tp_sdc_verdict_free(&v);
    return rc;
}

static void print_table(FILE *f, const json_t *res, const struct tp_sdc_opts *o, int rc)
{
    fprintf(f,
            "# trainpath sdc: %" JSON_INTEGER_FORMAT " steps of a %dx%d f32 chain, seed %" PRIu64
            ", %zu threads (exact sums: %s)\n",
            json_integer_value(json_object_get(res, "steps")), TP_SDC_N, TP_SDC_N, o->seed,
            json_array_size(json_object_get(res, "threads_detail")), tp_bfx_kernel());
    fprintf(f, "%-7s %-5s %-10s %-18s %-10s %s\n", "thread", "cpu", "steps", "final hash", "step",
            "verdict");
    size_t i;
    const json_t *t;
    json_array_foreach(json_object_get(res, "threads_detail"), i, t)
    {
        char cpu[16] = "-", ns[32];
        if (json_is_integer(json_object_get(t, "cpu")))
            snprintf(cpu, sizeof cpu, "%" JSON_INTEGER_FORMAT,
                     json_integer_value(json_object_get(t, "cpu")));
        fprintf(
            f, "%-7zu %-5s %-10" JSON_INTEGER_FORMAT " %.16s   %-10s %s\n", i, cpu,
            json_integer_value(json_object_get(t, "steps")),
            json_string_value(json_object_get(t, "final")),
            tp_fmt_ns(json_number_value(json_object_get(json_object_get(t, "step_time"), "value")),
                      ns, sizeof ns),
            json_string_value(json_object_get(t, "says")));
    }
    json_array_foreach(json_object_get(res, "gpus_detail"), i, t)
    {
        char gpu[16];
        snprintf(gpu, sizeof gpu, "gpu%" JSON_INTEGER_FORMAT,
                 json_integer_value(json_object_get(t, "gpu")));
        fprintf(f, "%-7s %-5s %-10" JSON_INTEGER_FORMAT " %.16s   %-10s %s (%s)\n", gpu, "-",
                json_integer_value(json_object_get(t, "steps")),
                json_string_value(json_object_get(t, "final")), "-",
                json_string_value(json_object_get(t, "says")),
                json_string_value(json_object_get(t, "key")));
    }
    size_t nthreads = json_array_size(json_object_get(res, "threads_detail"));
    if (rc == 0 && nthreads == 1) /* nothing to compare it with: no claim */
        fprintf(f,
                "sdc: one thread computed %s, compared with nothing (--threads 2 at least "
                "to compare)%s\n",
                json_string_value(json_object_get(json_object_get(res, "chain"), "final")),
                json_array_size(json_object_get(res, "gpus_detail"))
                    ? "; every GPU the same as the GPUs of its kind"
                    : "");
    else if (rc == 0) /* else the error says it, once */
        fprintf(f, "sdc: every thread computed the same %s%s\n",
                json_string_value(json_object_get(json_object_get(res, "chain"), "final")),
                json_array_size(json_object_get(res, "gpus_detail"))
                    ? "; every GPU the same as the GPUs of its kind"
                    : "");
}

int tp_sdc_run(const struct tp_sdc_opts *o, tp_error *err)
{
    int rc = check_opts(o, err);
    struct shared sh = {.seed = o->seed,
                        .steps = o->steps         ? o->steps
                                 : o->seconds > 0 ? 0
                                                  : DEFAULT_STEPS};
    if (rc == 0)
        rc = tp_sdc_fault_env(0, &sh.fault, err);
    int cpus[TP_SDC_MAX_THREADS];
    int ncpu = allowed_cpus(cpus, TP_SDC_MAX_THREADS);
    int n = o->threads ? o->threads : ncpu > 0 ? ncpu : 1;
    struct tp__sdc_gpus *gpus = NULL;
    if (rc == 0 && o->gpu)
        rc = tp__sdc_gpus_open(&gpus, err);
    int ng = tp__sdc_gpus_count(gpus), all = n + ng;
    if (rc == 0 && sh.fault.step && sh.fault.thread >= n)
        rc = tp_error_set(err, TP_EUSAGE, "TP_FAULT_SDC: thread %d, of %d threads (the test hook)",
                          sh.fault.thread, n);
    if (rc == 0 && sh.fault.step && sh.fault.gpu >= 0 && sh.fault.gpu >= ng)
        rc = tp_error_set(err, TP_EUSAGE, "TP_FAULT_SDC: GPU %d, of %d GPU chains (the test hook)",
                          sh.fault.gpu, ng);
    if (rc) {
        tp__sdc_gpus_close(gpus);
        return rc;
    }
    json_t *config =
        json_pack("{s:o, s:o, s:i, s:b, s:I, s:i, s:o}", "steps",
                  sh.steps ? json_integer((json_int_t)sh.steps) : json_null(), "time_s",
                  o->seconds > 0 ? json_real(o->seconds) : json_null(), "threads", n, "gpu",
                  o->gpu, "seed", (json_int_t)o->seed, "size", TP_SDC_N, "test_hook",
                  sh.fault.step ? json_pack("{s:I, s:i, s:i, s:i}", "step", (json_int_t)sh.fault.step,
                                            "bit", (int)sh.fault.bit, "thread", sh.fault.thread,
                                            "gpu", sh.fault.gpu)
                                : json_null());
    json_t *doc = tp_result_new("sdc", config), *res = json_object();
    struct worker *w = calloc((size_t)all, sizeof *w);
    pthread_t *tid = calloc((size_t)all, sizeof *tid);
    struct tp_sdc_chain *gc = ng ? calloc((size_t)ng, sizeof *gc) : NULL;
    if (!doc || !res || !w || !tid || (ng && !gc)) {
        json_decref(doc);
        json_decref(res);
        free(w);
        free(tid);
        free(gc);
        tp__sdc_gpus_close(gpus);
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    }
    pthread_mutex_init(&sh.mu, NULL);
    pthread_cond_init(&sh.cv, NULL);
    pthread_barrier_init(&sh.meet, NULL, (unsigned)all);
    int started = 0;
    /* the threads are busy on every CPU: the line's own thread draws it */
    char what[48];
    snprintf(what, sizeof what, "sdc, %d chain%s", all, all == 1 ? "" : "s");
    tp_progress_begin(o->progress_line, what, sh.steps ? (double)sh.steps : o->seconds,
                      sh.steps ? "steps" : "s",
                      TP_PROGRESS_TICK | (sh.steps ? 0 : TP_PROGRESS_TIMED));
    for (int t = 0; t < all; t++) {
        /* the GPUs' chains after the CPUs' (not pinned: they wait on the device) */
        w[t] = t < n ? (struct worker){.sh = &sh, .t = t, .cpu = ncpu > 0 ? cpus[t % ncpu] : -1}
                     : (struct worker){.sh = &sh, .t = t, .cpu = -1, .gpus = gpus, .gpu = t - n};
        int e = pthread_create(&tid[t], NULL, work, &w[t]);
        if (e) {
            rc = tp_error_errno(err, TP_ESYS, e, "thread %d of %d", t, all);
            break;
        }
        started++;
    }
    sh.deadline_ns = tp_now_ns() + (uint64_t)(o->seconds * 1e9);
    pthread_mutex_lock(&sh.mu);
    sh.go = rc ? -1 : 1; /* none waits at the barrier for a thread never made */
    pthread_cond_broadcast(&sh.cv);
    pthread_mutex_unlock(&sh.mu);
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    tp_progress_end();
    pthread_barrier_destroy(&sh.meet);
    pthread_cond_destroy(&sh.cv);
    pthread_mutex_destroy(&sh.mu);
    for (int t = 0; rc == 0 && t < all; t++)
        if (w[t].rc) {
            rc = w[t].rc;
            *err = w[t].err;
        }
    if (rc == 0)
        rc = tp_intr_check(err);
    json_object_set_new(res, "size", json_integer(TP_SDC_N));
    json_object_set_new(res, "seed", json_integer((json_int_t)o->seed));
    json_object_set_new(res, "steps", json_integer((json_int_t)w[0].chain.steps));
    json_object_set_new(res, "threads", json_integer(n));
    json_object_set_new(res, "kernel", json_string(tp_bfx_kernel()));
    json_object_set_new(res, "step_time",
                        tp_metric(median_step_ns(w, started < n ? started : n), "ns"));
    json_object_set_new(res, "test_hook", json_incref(json_object_get(config, "test_hook")));
    json_object_set_new(res, "gpus", json_integer(ng));
    if (rc == 0)
        rc = judge_threads(w, n, res, err);
    for (int d = 0; d < ng; d++)
        gc[d] = w[n + d].chain;
    tp_error gerr;
    int grc = ng && (rc == 0 || rc == TP_ECHECK) ? tp__sdc_gpus_judge(gpus, gc, res, &gerr) : 0;
    if (grc && (rc == 0 || grc != TP_ECHECK)) { /* a core's finding first, else the GPUs' */
        rc = grc;
        *err = gerr;
    }
    json_object_set_new(doc, "results", res);
    if (!o->quiet && (rc == 0 || rc == TP_ECHECK))
        print_table(o->json && strcmp(o->json, "-") == 0 ? stderr : stdout, res, o, rc);
    tp_result_finish(doc, rc, rc ? err->msg : "");
    tp_error werr;
    if (o->json && tp_result_write_run(doc, o->json, &werr) < 0 && rc == 0) {
        *err = werr;
        rc = werr.code;
    }
    json_decref(doc);
    for (int t = 0; t < all; t++)
        tp_sdc_chain_free(&w[t].chain);
    free(w);
    free(tid);
    free(gc);
    tp__sdc_gpus_close(gpus);
    return rc;
}
