/* The collective benchmark (what nccl-tests and the OSU collective tests
 * do, plus tails, skew and a fit): for each size, warm up, time each
 * iteration on every rank, then poison the output, run once more and check
 * every element bit for bit against a result known exactly (inputs are
 * small integers or powers of two, so any order of a correct reduction
 * gives the same bits). Per iteration the time is the maximum over ranks;
 * arrival skew is the spread of the ranks' start times on rank 0's clock.
 *
 * --repro-check replaces the inputs: every element is the sum of the same
 * 840 random floats (840 = lcm(1..8)), shared out evenly among the ranks;
 * each rank sums its share and the ranks combine theirs. With --repro
 * exact that sum is exact at every stage, so the output's SHA-256 must not
 * depend on the rank count, algorithm, chunking or timing; plain mode shows
 * why the mode exists. */
#include <inttypes.h>
#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kind_int.h"
#include "tp/clock.h"
#include "tp/intr.h"
#include "tp/exact.h"
#include "tp/fixed.h"
#include "tp/pattern.h"
#include "tp/progress.h"
#include "tp/result.h"
#include "tp/stats.h"
#include "tp/trace.h"
#include "tp/units.h"

#define MAX_ITERS 20000
#define SHARES 840

/* Input of rank r at element i: exact in every dtype, and every partial
 * result of a correct reduction is exact too (see docs/metrics.md). */
static double input(const struct tp_coll_bench_opts *o, int n, int r, size_t i)
{
    bool reduces = tp__coll_kinds[o->kind]->reduces;
    uint64_t h = (uint64_t)r * 7 + (uint64_t)i * 13;
    if (!reduces)
        return (double)(int)(((uint64_t)r * 131 + i * 7) % 251) - 125;
    switch (o->op) {
    case TP_PROD: {
        static const double fv[4] = {1, 2, -1, 0.5}, iv[4] = {1, 2, -1, 1};
        unsigned k = (unsigned)(((uint64_t)r * 3 + i * 5) % (n > 12 ? 2 : 4));
        return tp_dtype_is_float(o->dtype) ? fv[k] : iv[k];
    }
    case TP_MIN:
    case TP_MAX:
        return (double)(int)(h % 17) - 8;
    default:
        return n > 64 ? (double)(int)(h % 3) - 1 : (double)(int)(h % 9) - 4;
    }
}

static void store(enum tp_dtype t, void *buf, size_t i, double v)
{
    switch (t) {
    case TP_F32:
        ((float *)buf)[i] = (float)v;
        break;
    case TP_F64:
        ((double *)buf)[i] = v;
        break;
    case TP_BF16:
        ((uint16_t *)buf)[i] = tp_f32_to_bf16((float)v);
        break;
    case TP_F16:
        ((uint16_t *)buf)[i] = tp_f32_to_f16((float)v);
        break;
    case TP_I32:
        ((int32_t *)buf)[i] = (int32_t)v;
        break;
    case TP_I64:
        ((int64_t *)buf)[i] = (int64_t)v;
        break;
    default:
        break;
    }
}

static double combine(enum tp_redop op, double a, double b)
{
    switch (op) {
    case TP_PROD:
        return a * b;
    case TP_MIN:
        return b < a ? b : a;
    case TP_MAX:
        return b > a ? b : a;
    default:
        return a + b;
    }
}

/* Expected output element j of this rank (into exp, dtype layout): the
 * input the kind's row says it comes from, or their reduction. */
static void expected(const struct tp_coll_bench_opts *o, int n, int me, size_t cnt, void *exp,
                     size_t nout)
{
    const struct tp__coll_kind *k = tp__coll_kinds[o->kind];
    for (size_t j = 0; j < nout; j++) {
        int src;
        size_t at;
        k->source(j, cnt, me, n, o->root, &src, &at);
        double v = input(o, n, src < 0 ? 0 : src, at);
        for (int r = 1; src < 0 && r < n; r++)
            v = combine(o->op, v, input(o, n, r, at));
        store(o->dtype, exp, j, v);
    }
    if (o->op == TP_AVG && k->reduces) {
        if (o->exact) { /* rounded once from the exact sum */
            size_t w = tp_fx_words(o->dtype);
            uint64_t *fx = malloc(w * 8);
            size_t es = tp_dtype_size(o->dtype);
            for (size_t j = 0; fx && j < nout; j++) {
                tp_fx_load(o->dtype, fx, (uint8_t *)exp + j * es, 1);
                tp_fx_store(o->dtype, (uint8_t *)exp + j * es, fx, 1, (uint32_t)n);
            }
            free(fx);
        } else {
            tp_reduce_finish(o->dtype, o->op, exp, nout, n);
        }
    }
}

/* Random float of share k of element i: wide exponents, both signs, exact
 * in dtype. */
static double share_value(enum tp_dtype t, size_t i, int k)
{
    uint64_t h = tp_splitmix64(i * SHARES + (uint64_t)k);
    double m = (double)(h >> 11) / 9007199254740992.0 + 0.5; /* [0.5, 1.5) */
    int e = (int)((h >> 3) % 24) - 12;
    if (t == TP_F16)
        e = (int)((h >> 3) % 10) - 5;
    double v = ldexp(m, e) * ((h & 1) ? -1 : 1);
    uint8_t buf[8];
    store(t, buf, 0, v);
    switch (t) {
    case TP_F32:
        return ((float *)buf)[0];
    case TP_BF16:
        return tp_bf16_to_f32(((uint16_t *)buf)[0]);
    case TP_F16:
        return tp_f16_to_f32(((uint16_t *)buf)[0]);
    default:
        return v;
    }
}

struct sweep {
    struct tp_comm *c;
    const struct tp_coll_bench_opts *o;
    int n, me;
    uint8_t *send, *recv;
    uint64_t *fxs, *fxr;  /* repro_check with exact: the accumulators */
    uint64_t *tim, *all;  /* per-iteration records, and all ranks' */
    uint64_t *ctl;        /* 1 element for the iteration count broadcast */
    const struct tp_coll_backend *be; /* device_memory: runs on dsend/drecv */
    bool cuda;            /* --mem cuda: the data live in dsend/drecv */
    void *dsend, *drecv;  /* device buffers (cuda) */
    size_t in_bytes, out_bytes; /* of the current size, for the staging copies */
};

/* One collective call as the user's training would make it. With --mem
 * cuda and a host backend (trainpath, mpi) the bytes are staged: the input
 * copied from the GPU, the collective run on host memory, the output copied
 * back, all inside the timed call (what a host-staged GPU collective
 * costs); NCCL works on the device buffers themselves. */
static int run_once(struct sweep *s, const struct tp_coll_args *a, tp_error *err)
{
    if (s->be->device_memory) {
        struct tp_coll_args d = *a;
        d.sendbuf = s->dsend;
        d.recvbuf = s->drecv;
        return s->be->run(s->c, s->o->gpu, &d, err);
    }
    int rc;
    if (s->cuda && (rc = tp_gpu_d2h(s->o->gpu, s->send, s->dsend, s->in_bytes, err)) < 0)
        return rc;
    if (s->o->repro_check && s->o->exact)
        rc = tp_coll_allreduce_fx(s->c, a->dtype, s->fxs, s->fxr, a->count, a->algo,
                                  a->chunk_bytes, err);
    else
        rc = s->be->run(s->c, s->o->gpu, a, err);
    if (rc == 0 && s->cuda)
        rc = tp_gpu_h2d(s->o->gpu, s->drecv, s->recv, s->out_bytes, err);
    return rc;
}

/* Host and device copies of the output set to byte v. */
static int poison(struct sweep *s, int v, tp_error *err)
{
    memset(s->recv, v, s->out_bytes);
    return s->cuda ? tp_gpu_memset(s->o->gpu, s->drecv, v, s->out_bytes, err) : 0;
}

static int internal(struct sweep *s, enum tp_coll_kind k, void *send, void *recv, size_t count,
                    tp_error *err)
{
    struct tp_coll_args a = {.kind = k, .dtype = TP_I64, .op = TP_SUM, .sendbuf = send,
                             .recvbuf = recv, .count = count};
    return tp_coll_run(s->c, &a, err);
}

static void delay(const struct tp_coll_bench_opts *o, uint64_t *rng)
{
    if (!o->inject_delay_ns)
        return;
    *rng = tp_splitmix64(*rng);
    uint64_t ns = *rng % o->inject_delay_ns;
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    nanosleep(&ts, NULL); /* under --timeout (tp_coll_job_check); a signal cuts it */
}

/* Fill the inputs of shape sh. */
static void fill(struct sweep *s, const struct tp_coll_shape *sh)
{
    const struct tp_coll_bench_opts *o = s->o;
    size_t count = sh->count;
    if (o->repro_check) {
        int lo = s->me * SHARES / s->n, hi = (s->me + 1) * SHARES / s->n;
        size_t w = tp_fx_words(o->dtype);
        for (size_t i = 0; i < count; i++) {
            if (o->exact) {
                uint64_t one[35];
                for (int k = lo; k < hi; k++) {
                    double v = share_value(o->dtype, i, k);
                    uint8_t b[8];
                    store(o->dtype, b, 0, v);
                    tp_fx_load(o->dtype, k == lo ? s->fxs + i * w : one, b, 1);
                    if (k > lo)
                        tp_fx_add(o->dtype, s->fxs + i * w, one, 1);
                }
            } else {
                uint8_t b[8];
                for (int k = lo; k < hi; k++) { /* summed in the dtype, in order */
                    store(o->dtype, b, 0, share_value(o->dtype, i, k));
                    if (k == lo)
                        memcpy(s->send + i * tp_dtype_size(o->dtype), b, tp_dtype_size(o->dtype));
                    else
                        tp_reduce(o->dtype, TP_SUM, s->send + i * tp_dtype_size(o->dtype), b, 1);
                }
            }
        }
        return;
    }
    for (size_t i = 0; i < sh->in_elems; i++)
        store(o->dtype, s->send, i, input(o, s->n, s->me, i));
}

/* The exact sum of element i's 840 shares, rounded once (the superaccumulator). */
static void repro_expected(enum tp_dtype t, void *exp, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        tp_exact acc;
        tp_exact_zero(&acc);
        for (int k = 0; k < SHARES; k++)
            tp_exact_add(&acc, share_value(t, i, k));
        tp_exact_normalize(&acc);
        switch (t) {
        case TP_F32:
            ((float *)exp)[i] = tp_exact_f32(&acc);
            break;
        case TP_F64:
            ((double *)exp)[i] = tp_exact_f64(&acc);
            break;
        case TP_BF16:
            ((uint16_t *)exp)[i] = tp_exact_bf16(&acc);
            break;
        case TP_F16:
            ((uint16_t *)exp)[i] = tp_exact_f16(&acc);
            break;
        default:
            break;
        }
    }
}

struct fitpt {
    const char *algo;
    double bytes, ns;
};

/* Weighted least squares t = alpha + beta * S with weights 1/t^2, so every
 * size counts by its relative error (sizes span eight decades); constrained
 * to alpha >= 0 and beta >= 0 (a negative latency or cost per byte has no
 * meaning: when the free fit gives one, that term is 0 and the other is
 * fitted alone). */
static json_t *fit_json(const struct tp_coll_bench_opts *o, int n, const struct fitpt *pt,
                        size_t npt)
{
    json_t *out = json_array();
    for (size_t i = 0; i < npt; i++) {
        bool seen = false;
        for (size_t j = 0; j < i; j++)
            seen |= strcmp(pt[j].algo, pt[i].algo) == 0;
        if (seen)
            continue;
        double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
        int k = 0;
        for (size_t j = i; j < npt; j++) {
            if (strcmp(pt[j].algo, pt[i].algo) != 0)
                continue;
            double w = 1.0 / (pt[j].ns * pt[j].ns);
            sw += w;
            sx += w * pt[j].bytes;
            sy += w * pt[j].ns;
            sxx += w * pt[j].bytes * pt[j].bytes;
            sxy += w * pt[j].bytes * pt[j].ns;
            k++;
        }
        double det = sw * sxx - sx * sx;
        if (k < 2 || det <= 0)
            continue;
        double beta = (sw * sxy - sx * sy) / det, alpha = (sy - beta * sx) / sw;
        if (alpha < 0) {
            alpha = 0;
            beta = sxy / sxx;
        }
        if (beta < 0) {
            beta = 0;
            alpha = sy / sw;
        }
        double maxrel = 0;
        for (size_t j = i; j < npt; j++)
            if (strcmp(pt[j].algo, pt[i].algo) == 0) {
                double rel = fabs(alpha + beta * pt[j].bytes - pt[j].ns) / pt[j].ns;
                maxrel = rel > maxrel ? rel : maxrel;
            }
        json_t *f = json_pack("{s:s, s:s, s:i, s:i, s:o, s:o, s:f}", "collective",
                              tp_coll_name(o->kind), "algo", pt[i].algo, "ranks", n, "sizes", k,
                              "alpha", tp_metric(alpha, "ns"), "beta",
                              tp_metric(beta, "ns/B"), "max_rel_error", maxrel);
        if (beta > 0)
            json_object_set_new(f, "busbw_asymptotic",
                                tp_metric(tp_coll_busbw_factor(o->kind, n) * 1e9 / beta, "B/s"));
        json_array_append_new(out, f);
    }
    return out;
}

static int one_size(struct sweep *s, uint64_t size, json_t *sizes, struct fitpt *pt, size_t *npt,
                    uint64_t *wrong_total, tp_error *err)
{
    const struct tp_coll_bench_opts *o = s->o;
    const struct tp__coll_kind *k = tp__coll_kinds[o->kind];
    int n = s->n, rc;
    struct tp_coll_shape sh = tp_coll_shape_for(o->kind, o->dtype, n, size);
    size_t es = tp_dtype_size(o->dtype), count = sh.count, nin = sh.in_elems,
           nout = sh.out_elems;
    uint64_t bytes = sh.bytes;
    if (count == 0) /* below one element (per rank): no row of zeros (tp_coll_job_check_group) */
        return 0;
    fill(s, &sh);
    struct tp_coll_args a = {.kind = o->kind, .dtype = o->dtype, .op = o->op,
                             .sendbuf = s->send, .recvbuf = s->recv, .count = count,
                             .root = o->root, .algo = o->algo, .exact = o->exact,
                             .chunk_bytes = o->chunk_bytes};
    tp_error e2;
    const char *algo = s->be->own_algo ? s->be->name : tp_coll_algo(s->c, &a, &e2);
    s->in_bytes = nin * es;
    s->out_bytes = nout * es;
    if (s->cuda && (rc = tp_gpu_h2d(o->gpu, s->dsend, s->send, s->in_bytes, err)) < 0)
        return rc;
    if ((rc = poison(s, 0, err)) < 0)
        return rc;
    uint64_t rng = tp_splitmix64((uint64_t)s->me * 1000003u + size);
    uint64_t t0 = tp_now_ns();
    for (uint64_t w = 0; w < o->warmup; w++)
        if ((rc = run_once(s, &a, err)) < 0)
            return rc;
    uint64_t iters = o->iters;
    if (!iters) {
        double per = o->warmup ? (double)(tp_now_ns() - t0) / (double)o->warmup : 1e6;
        double want = (double)o->time_ns / (per > 1 ? per : 1);
        s->ctl[0] = want < 5 ? 5 : want > MAX_ITERS ? MAX_ITERS : (uint64_t)want;
        struct tp_coll_args b = {.kind = TP_BROADCAST, .dtype = TP_I64, .sendbuf = s->ctl,
                                 .recvbuf = s->ctl + 1, .count = 1, .root = 0};
        if ((rc = tp_coll_run(s->c, &b, err)) < 0)
            return rc;
        iters = s->ctl[1];
    }
    uint64_t streamed0 = tp_comm_streamed_bytes(s->c);
    for (uint64_t i = 0; i < iters; i++) {
        if (tp_intr_signal())
            return tp_intr_check(err);
        delay(o, &rng);
        uint64_t b0 = tp_now_ns();
        if ((rc = run_once(s, &a, err)) < 0)
            return rc;
        s->tim[2 * i] = b0;
        s->tim[2 * i + 1] = tp_now_ns() - b0;
    }
    uint64_t streamed = (tp_comm_streamed_bytes(s->c) - streamed0) / (iters ? iters : 1);
    /* check: poison, run once more, compare bit for bit */
    if ((rc = poison(s, 0xa5, err)) < 0)
        return rc;
    if (o->repro_check && o->exact)
        memset(s->fxr, 0xa5, count * tp_fx_words(o->dtype) * 8);
    if ((rc = run_once(s, &a, err)) < 0)
        return rc;
    /* the check reads what landed in GPU memory */
    if (s->cuda && (rc = tp_gpu_d2h(o->gpu, s->recv, s->drecv, s->out_bytes, err)) < 0)
        return rc;
    if (o->repro_check && o->exact)
        tp_fx_store(o->dtype, s->recv, s->fxr, count, 1);
    uint64_t wrong = 0;
    bool checked = !(o->repro_check && !o->exact) && !(k->root_only && s->me != o->root);
    if (checked) {
        uint8_t *exp = malloc(nout * es + 1);
        if (!exp)
            return tp_error_set(err, TP_ENOMEM, "expected results");
        if (o->repro_check)
            repro_expected(o->dtype, exp, count);
        else
            expected(o, n, s->me, count, exp, nout);
        for (size_t j = 0; j < nout; j++)
            wrong += memcmp(exp + j * es, s->recv + j * es, es) != 0;
        free(exp);
    }
    unsigned char dig[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(dig, s->recv, nout * es);
    char hex[2 * sizeof dig + 1], mine[128], **digs = NULL;
    sodium_bin2hex(hex, sizeof hex, dig, sizeof dig);
    snprintf(mine, sizeof mine, "%s %llu", hex, (unsigned long long)wrong);
    if ((rc = tp_boot_allgather(s->c->boot, mine, &digs, err)) < 0)
        return rc;
    /* everyone's records to everyone (rank 0 uses them) */
    if ((rc = internal(s, TP_ALLGATHER, s->tim, s->all, 2 * iters, err)) < 0) {
        tp_boot_free_strings(digs, n);
        return rc;
    }
    bool agree = true;
    uint64_t wrong_all = 0;
    for (int r = 0; r < n; r++) {
        unsigned long long w = 0;
        char h[80];
        if (sscanf(digs[r], "%79s %llu", h, &w) == 2)
            wrong_all += w;
        if (k->agree && strncmp(digs[r], digs[0], 64) != 0)
            agree = false;
    }
    *wrong_total += wrong_all;
    if (sizes) {
        uint64_t *tmax = malloc(iters * sizeof *tmax), *skew = malloc(iters * sizeof *skew);
        int *last = calloc((size_t)n, sizeof *last);
        if (!tmax || !skew || !last) {
            free(tmax);
            free(skew);
            free(last);
            tp_boot_free_strings(digs, n);
            return tp_error_set(err, TP_ENOMEM, "statistics");
        }
        size_t stride = 2 * iters;
        char span[96], args[160], sz[32];
        snprintf(span, sizeof span, "%s %s", tp_coll_name(o->kind),
                 tp_fmt_size(bytes, sz, sizeof sz));
        for (uint64_t i = 0; i < iters; i++) {
            uint64_t mx = 0;
            int64_t lo = INT64_MAX, hi = INT64_MIN;
            int lr = 0;
            for (int r = 0; r < n; r++) {
                const uint64_t *t = s->all + (size_t)r * stride;
                mx = t[2 * i + 1] > mx ? t[2 * i + 1] : mx;
                int64_t st = (int64_t)t[2 * i] - tp_boot_clock_offset_ns(s->c->boot, r);
                if (o->trace) {
                    snprintf(args, sizeof args,
                             "\"size_bytes\":%" PRIu64 ",\"iteration\":%" PRIu64
                             ",\"algo\":\"%s\"",
                             (uint64_t)bytes, i, algo ? algo : "?");
                    tp_trace_span(o->trace, r, o->trace_tid, span, "coll",
                                  st - (int64_t)o->trace_origin_ns, (int64_t)t[2 * i + 1], args);
                }
                if (st < lo)
                    lo = st;
                if (st > hi) {
                    hi = st;
                    lr = r;
                }
            }
            tmax[i] = mx;
            skew[i] = (uint64_t)(hi - lo);
            last[lr]++;
        }
        int lastr = 0;
        for (int r = 1; r < n; r++)
            if (last[r] > last[lastr])
                lastr = r;
        tp_stats ts, ss;
        tp_stats_from_samples(tmax, iters, &ts);
        tp_stats_from_samples(skew, iters, &ss);
        double f = tp_coll_busbw_factor(o->kind, n);
        double algbw = ts.mean > 0 ? (double)bytes * 1e9 / ts.mean : 0;
        double algbw50 = ts.p50 > 0 ? (double)bytes * 1e9 / ts.p50 : 0;
        json_t *e = json_pack(
            "{s:I, s:I, s:s, s:s, s:I, s:o, s:o, s:o, s:o, s:I, s:b, s:o, s:i, s:f, s:s#}",
            "size_bytes", (json_int_t)bytes, "count", (json_int_t)count, "algo",
            algo ? algo : "?", "backend", s->be->name, "iters",
            (json_int_t)iters, "time", tp_stats_to_json(&ts, 1, "ns"), "algbw",
            tp_metric(algbw, "B/s"), "busbw", tp_metric(algbw * f, "B/s"), "busbw_p50",
            tp_metric(algbw50 * f, "B/s"), "wrong", (json_int_t)wrong_all, "checked",
            checked || k->root_only, "arrival_skew", tp_stats_to_json(&ss, 1, "ns"),
            "last_rank", lastr, "last_rank_share", (double)last[lastr] / (double)iters,
            "result_sha256", digs[0], 64);
        json_object_set_new(e, "mem", json_string(s->cuda ? "cuda" : "host"));
        json_object_set_new(e, "streamed_bytes", json_integer((json_int_t)streamed));
        if (k->agree)
            json_object_set_new(e, "ranks_agree", json_boolean(agree));
        json_array_append_new(sizes, e);
        if (bytes > 0 && algo) {
            pt[*npt] = (struct fitpt){algo, (double)bytes, ts.p50};
            (*npt)++;
        }
        free(tmax);
        free(skew);
        free(last);
    }
    tp_boot_free_strings(digs, n);
    return 0;
}

static uint64_t max_size(const struct tp_coll_bench_opts *o)
{
    uint64_t maxs = 0;
    for (size_t i = 0; i < o->nsizes; i++)
        maxs = o->sizes[i] > maxs ? o->sizes[i] : maxs;
    return maxs;
}

/* The sweep's buffers are the call's (tp_coll_arena_bytes counts them and
 * the timing records); with --repro exact, fixed-point copies of the
 * largest input besides (the MPI backend's, or --repro-check's). */
size_t tp_coll_bench_arena_bytes(const struct tp_coll_bench_opts *o, int nranks)
{
    uint64_t maxs = max_size(o);
    size_t es = tp_dtype_size(o->dtype), words = o->exact ? tp_fx_words(o->dtype) : 0;
    return tp_coll_arena_bytes(nranks, (size_t)maxs, o->exact,
                               o->exact ? 2 * ((size_t)maxs / es + 1) * words * 8 : 0);
}

int tp_coll_bench(struct tp_comm *c, const struct tp_coll_bench_opts *o, json_t *results,
                  uint64_t *wrong_total, tp_error *err)
{
    struct sweep s = {.c = c, .o = o, .n = c->size, .me = c->rank,
                      .be = o->backend ? o->backend : tp_coll_backend_table[0]};
    s.cuda = s.be->device_memory || o->mem_cuda;
    int n = s.n;
    if (s.cuda && !o->gpu) {
        if (s.be->device_memory)
            return tp_error_set(err, TP_EUSAGE, "--backend %s: no GPU opened", s.be->name);
        return tp_error_set(err, TP_EUSAGE, "--mem cuda: no GPU opened");
    }
    if (s.cuda && o->repro_check)
        return tp_error_set(err, TP_EUSAGE, "--repro-check: runs with --mem host");
    if (o->repro_check && (!tp__coll_kinds[o->kind]->exact || !tp_dtype_is_float(o->dtype) ||
                           o->op != TP_SUM))
        return tp_error_set(err, TP_EUSAGE, "--repro-check: allreduce sum of a float dtype only");
    if (o->repro_check && n > SHARES)
        return tp_error_set(err, TP_EUSAGE, "--repro-check: at most %d ranks", SHARES);
    uint64_t maxs = max_size(o);
    size_t es = tp_dtype_size(o->dtype);
    size_t maxc = tp_coll_shape_for(o->kind, o->dtype, n, maxs).count;
    size_t buf = (maxs / es + (size_t)n) * es + 64;
    tp_comm_reset_alloc(c);
    s.send = tp_comm_alloc(c, buf);
    s.recv = tp_comm_alloc(c, buf);
    s.tim = tp_comm_alloc(c, (2 * MAX_ITERS + 1) * 8);
    s.all = tp_comm_alloc(c, (size_t)n * (2 * MAX_ITERS + 1) * 8);
    s.ctl = tp_comm_alloc(c, 16);
    if (o->repro_check && o->exact) {
        s.fxs = tp_comm_alloc(c, maxc * tp_fx_words(o->dtype) * 8 + 8);
        s.fxr = tp_comm_alloc(c, maxc * tp_fx_words(o->dtype) * 8 + 8);
    }
    if (!s.send || !s.recv || !s.tim || !s.all || !s.ctl ||
        (o->repro_check && o->exact && (!s.fxs || !s.fxr)))
        return tp_error_set(err, TP_ENOMEM, "collective buffers: arena of %zu bytes too small",
                            c->arena_bytes);
    bool pinned = false;
    if (s.cuda) {
        int r = tp_gpu_alloc(o->gpu, buf, &s.dsend, err);
        if (r == 0 && (r = tp_gpu_alloc(o->gpu, buf, &s.drecv, err)) < 0)
            tp_gpu_free(o->gpu, s.dsend);
        if (r < 0)
            return r;
        /* staging copies from page-locked memory run at DMA speed */
        pinned = !s.be->device_memory && tp_gpu_pin(o->gpu, s.send, buf);
        if (pinned && !tp_gpu_pin(o->gpu, s.recv, buf)) {
            tp_gpu_unpin(o->gpu, s.send);
            pinned = false;
        }
    }
    /* a second backend's sweep adds to the first's */
    json_t *sizes = results ? json_object_get(results, "sizes") : NULL;
    if (results && !json_is_array(sizes)) {
        sizes = json_array();
        json_object_set_new(results, "sizes", sizes);
    }
    if (results) {
        json_t *paths = json_object_get(results, "data_path");
        if (!json_is_array(paths)) {
            paths = json_array();
            json_object_set_new(results, "data_path", paths);
        }
        bool dev = s.be->device_memory;
        json_array_append_new(
            paths, json_pack("{s:s, s:s, s:s, s:b, s:b, s:s}", "backend", s.be->name, "mem",
                             s.cuda ? "cuda" : "host", "path",
                             !s.cuda ? "host" : dev ? "device" : "staged", "staging_pinned",
                             pinned, "emulated", tp_gpu_emulated(o->gpu), "why",
                             !s.cuda ? "host buffers"
                             : dev   ? s.be->device_why
                                     : "the backend reduces in host memory: each call copies "
                                       "its input from the GPU and its output back, inside the "
                                       "timed call"));
    }
    struct fitpt *pt = calloc(o->nsizes + 1, sizeof *pt);
    size_t npt = 0;
    int rc = pt ? 0 : tp_error_set(err, TP_ENOMEM, "fit");
    *wrong_total = 0;
    for (size_t i = 0; rc == 0 && i < o->nsizes; i++) {
        size_t row = sizes ? json_array_size(sizes) : 0; /* a skipped size adds none */
        char sz[32];
        /* the progress line (rank 0's, when its job began one): between
         * sizes, outside the timed iterations */
        tp_progress_what("coll %s %s (%s)", tp_coll_name(o->kind),
                         tp_fmt_size(o->sizes[i], sz, sizeof sz), s.be->name);
        tp_progress_add(0);
        rc = one_size(&s, o->sizes[i], sizes, pt, &npt, wrong_total, err);
        tp_progress_add(1);
        if (rc == 0 && o->progress && results && json_array_size(sizes) > row)
            o->progress(o->progress_arg, row, o->nsizes);
    }
    if (results) {
        json_t *fit = fit_json(o, n, pt, npt), *fits = json_object_get(results, "fit");
        if (json_is_array(fits)) { /* after another backend's */
            json_array_extend(fits, fit);
            json_decref(fit);
        } else {
            json_object_set_new(results, "fit", fit);
        }
    }
    free(pt);
    if (s.cuda) {
        if (pinned) {
            tp_gpu_unpin(o->gpu, s.send);
            tp_gpu_unpin(o->gpu, s.recv);
        }
        tp_gpu_free(o->gpu, s.dsend);
        tp_gpu_free(o->gpu, s.drecv);
    }
    tp_comm_reset_alloc(c);
    return rc;
}
