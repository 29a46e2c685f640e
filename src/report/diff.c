/* The statistical diff of two runs: baseline A, candidate B, matched key by
 * key. A change counts as a regression only when three things hold: the
 * data says it is real (p < alpha), it goes the worse way, and it is large
 * enough to matter (min_effect), because with thousands of samples a test
 * finds a 0.3 % shift "significant" and nobody should be paged for it.
 *
 * Latency percentiles are tested on the whole distribution: Mann-Whitney's
 * U from the two histograms' bucket counts, each bucket a group of ties.
 * Means are tested by Welch's t. Plain numbers (a bandwidth, one per run)
 * carry no samples to test and are reported as such. */
#include "tp/judge.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tp/report.h"
#include "tp/text.h"

/* ---- the tests ---- */

int tp_diff_mann_whitney(const tp_hist *a, const tp_hist *b, struct tp_diff_stat *out,
                         tp_error *err)
{
    if (a->count == 0 || b->count == 0)
        return tp_error_set(err, TP_EUSAGE, "Mann-Whitney: an empty histogram (%s)",
                            a->count == 0 ? "baseline" : "candidate");
    unsigned lo = tp_hist_index(a->min < b->min ? a->min : b->min);
    unsigned hi = tp_hist_index(a->max > b->max ? a->max : b->max);
    /* long double: rank sums reach n^2 (1e18 for a billion samples) */
    long double na = (long double)a->count, nb = (long double)b->count, n = na + nb;
    long double below = 0, rank_a = 0, ties = 0;
    for (unsigned i = lo; i <= hi; i++) {
        long double ta = (long double)a->counts[i], tb = (long double)b->counts[i], t = ta + tb;
        if (t == 0)
            continue;
        rank_a += ta * (below + (t + 1) / 2); /* the mid-rank of the tie group */
        below += t;
        ties += t * (t - 1) / n * (t + 1) / (n - 1); /* (t^3 - t) / (n (n - 1)) */
    }
    long double u_a = rank_a - na * (na + 1) / 2; /* pairs with A above B, ties half */
    long double mu = na * nb / 2;
    long double var = na * nb / 12 * ((n + 1) - ties);
    out->df = 0;
    out->p_b_gt = (double)(1 - u_a / (na * nb));
    if (!(var > 0)) { /* every sample in one bucket: no evidence either way */
        out->stat = 0;
        out->p = 1;
        return 0;
    }
    long double d = fabsl(u_a - mu) - 0.5L; /* continuity correction */
    if (d < 0)
        d = 0;
    double z = (double)(d / sqrtl(var));
    out->stat = u_a > mu ? -z : z; /* positive: B above A */
    out->p = erfc(z / sqrt(2.0));
    return 0;
}

/* Continued fraction of the incomplete beta function (modified Lentz). */
static double betacf(double a, double b, double x)
{
    const double tiny = 1e-300;
    double qab = a + b, qap = a + 1, qam = a - 1, c = 1, d = 1 - qab * x / qap;
    if (fabs(d) < tiny)
        d = tiny;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 10000; m++) {
        double m2 = 2.0 * m, aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1 + aa * d;
        d = fabs(d) < tiny ? tiny : d;
        c = 1 + aa / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1 / d;
        h *= d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1 + aa * d;
        d = fabs(d) < tiny ? tiny : d;
        c = 1 + aa / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < 1e-15)
            break;
    }
    return h;
}

/* Regularised incomplete beta I_x(a, b). */
static double ibeta(double a, double b, double x)
{
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    int sg;
    double lbt =
        lgamma_r(a + b, &sg) - lgamma_r(a, &sg) - lgamma_r(b, &sg) + a * log(x) + b * log1p(-x);
    if (x < (a + 1) / (a + b + 2))
        return exp(lbt) * betacf(a, b, x) / a;
    return 1 - exp(lbt) * betacf(b, a, 1 - x) / b;
}

/* Two-sided p of Student's t with df degrees of freedom. */
static double t_p(double t, double df)
{
    if (df > 1e7) /* the t distribution is the normal one well before this */
        return erfc(fabs(t) / sqrt(2.0));
    return ibeta(df / 2, 0.5, df / (df + t * t));
}

int tp_diff_welch(double n_a, double mean_a, double sd_a, double n_b, double mean_b, double sd_b,
                  struct tp_diff_stat *out, tp_error *err)
{
    if (!isfinite(n_a) || !isfinite(n_b) || !isfinite(mean_a) || !isfinite(mean_b) ||
        !isfinite(sd_a) || !isfinite(sd_b) || sd_a < 0 || sd_b < 0)
        return tp_error_set(err, TP_EUSAGE, "Welch: a count, mean or stdev is not a number");
    if (n_a < 2 || n_b < 2)
        return tp_error_set(err, TP_EUSAGE, "Welch: %.0f and %.0f samples (2 a side at least)", n_a,
                            n_b);
    double va = sd_a * sd_a / n_a, vb = sd_b * sd_b / n_b, se2 = va + vb;
    out->p_b_gt = NAN;
    if (!(se2 > 0)) { /* two constant samples */
        out->stat = mean_a == mean_b ? 0 : copysign(INFINITY, mean_b - mean_a);
        out->df = n_a + n_b - 2;
        out->p = mean_a == mean_b ? 1 : 0;
        return 0;
    }
    out->stat = (mean_b - mean_a) / sqrt(se2);
    out->df = se2 * se2 / (va * va / (n_a - 1) + vb * vb / (n_b - 1));
    out->p = t_p(out->stat, out->df);
    return 0;
}

/* ---- matching rows ---- */

static bool is_quantile(const char *s)
{
    static const char *const q[] = {"p50", "p90", "p99", "p99_9", "p99_99"};
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++)
        if (strcmp(s, q[i]) == 0)
            return true;
    return false;
}

/* The last component of a metric name ("p99" of "net.lat.latency.p99"). */
static const char *last_part(const char *metric)
{
    const char *dot = strrchr(metric, '.');
    return dot ? dot + 1 : metric;
}

/* A row's identity: its key, and its host when it has one. */
static void row_id(const json_t *row, char *buf, size_t cap)
{
    const char *key = json_string_value(json_object_get(row, "key"));
    const char *host = json_string_value(json_object_get(row, "host"));
    snprintf(buf, cap, "%s%s%s", key ? key : "?", host ? "@" : "", host ? host : "");
}

/* Its family: the metric stem without .mean/.pNN/.max, the labels, the host:
 * the rows of one distribution. */
static void family_id(const json_t *row, char *buf, size_t cap)
{
    const char *metric = json_string_value(json_object_get(row, "metric"));
    const char *key = json_string_value(json_object_get(row, "key"));
    const char *host = json_string_value(json_object_get(row, "host"));
    if (!metric || !key || strncmp(key, metric, strlen(metric)) != 0) {
        row_id(row, buf, cap);
        return;
    }
    const char *last = last_part(metric);
    size_t stem = strlen(metric);
    if (last != metric &&
        (is_quantile(last) || strcmp(last, "mean") == 0 || strcmp(last, "max") == 0))
        stem = (size_t)(last - 1 - metric);
    snprintf(buf, cap, "%.*s%s%s%s", (int)stem, metric, key + strlen(metric), host ? "@" : "",
             host ? host : "");
}

struct side {
    json_t *by_id;    /* row id -> row */
    json_t *fam_hist; /* family id -> histogram */
};

static int index_side(const json_t *rows, struct side *s)
{
    s->by_id = json_object();
    s->fam_hist = json_object();
    if (!s->by_id || !s->fam_hist)
        return TP_ENOMEM;
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        char id[600];
        row_id(row, id, sizeof id);
        if (!json_object_get(s->by_id, id) && json_object_set(s->by_id, id, row))
            return TP_ENOMEM;
        json_t *h = json_object_get(row, "histogram");
        if (json_is_object(h)) {
            family_id(row, id, sizeof id);
            if (!json_object_get(s->fam_hist, id) && json_object_set(s->fam_hist, id, h))
                return TP_ENOMEM;
        }
    }
    return 0;
}

static void free_side(struct side *s)
{
    json_decref(s->by_id);
    json_decref(s->fam_hist);
}

/* ---- one row ---- */

struct opts {
    double alpha, min_effect;
};

static void fmt_p(double p, char *buf, size_t cap)
{
    if (p < 1e-300)
        snprintf(buf, cap, "p < 1e-300");
    else
        snprintf(buf, cap, "p = %.2g", p);
}

/* Mann-Whitney on the two families' histograms; false (why set) when it
 * cannot run. */
static bool mw_test(const json_t *ha, const json_t *hb, struct tp_diff_stat *st, double *n_a,
                    double *n_b, char *why, size_t cap)
{
    tp_error e = {0};
    tp_hist *a = tp_hist_from_json(ha, &e);
    tp_hist *b = a ? tp_hist_from_json(hb, &e) : NULL;
    bool ok = a && b && tp_diff_mann_whitney(a, b, st, &e) == 0;
    if (ok) {
        *n_a = (double)a->count;
        *n_b = (double)b->count;
    } else {
        snprintf(why, cap, "histogram not usable: %s", e.msg);
    }
    tp_hist_free(a);
    tp_hist_free(b);
    return ok;
}

static bool welch_test(const json_t *ra, const json_t *rb, struct tp_diff_stat *st, double *n_a,
                       double *n_b, char *why, size_t cap)
{
    const json_t *sa = json_object_get(ra, "stats"), *sb = json_object_get(rb, "stats");
    if (!sa || !sb)
        return false;
    *n_a = json_number_value(json_object_get(sa, "count"));
    *n_b = json_number_value(json_object_get(sb, "count"));
    tp_error e = {0};
    if (tp_diff_welch(*n_a, json_number_value(json_object_get(sa, "mean")),
                      json_number_value(json_object_get(sa, "stdev")), *n_b,
                      json_number_value(json_object_get(sb, "mean")),
                      json_number_value(json_object_get(sb, "stdev")), st, &e) == 0)
        return true;
    snprintf(why, cap, "%s", e.msg);
    return false;
}

static int set(json_t *o, const char *k, json_t *v)
{
    return json_object_set_new(o, k, v ? v : json_null());
}

/* Compare ra with rb; a new result row, NULL when out of memory. *verdict
 * points at the verdict's name. */
static json_t *compare(const json_t *ra, const json_t *rb, const struct side *A,
                       const struct side *B, const struct opts *o, const char **verdict)
{
    const char *key = json_string_value(json_object_get(ra, "key")) ?: "?";
    const char *metric = json_string_value(json_object_get(ra, "metric")) ?: "?";
    const char *host = json_string_value(json_object_get(ra, "host"));
    const char *unit = json_string_value(json_object_get(ra, "unit")) ?: "";
    const char *unit_b = json_string_value(json_object_get(rb, "unit")) ?: "";
    const char *better = json_string_value(json_object_get(ra, "better"));
    double a = json_number_value(json_object_get(ra, "value"));
    double b = json_number_value(json_object_get(rb, "value"));
    double change = b - a;
    double rel = a != 0 ? change / fabs(a) : change == 0 ? 0 : NAN;

    json_t *r = json_object();
    if (!r)
        return NULL;
    int bad = set(r, "key", json_string(key)) | set(r, "metric", json_string(metric)) |
              set(r, "unit", json_string(unit)) |
              set(r, "better", better ? json_string(better) : NULL) | set(r, "a", json_real(a)) |
              set(r, "b", json_real(b)) | set(r, "change", json_real(change)) |
              set(r, "relative", isfinite(rel) ? json_real(rel) : NULL);
    if (host)
        bad |= set(r, "host", json_string(host));

    char name[640], why[600] = "", says[2048], va[64], vb[64], ps[32];
    snprintf(name, sizeof name, "%s%s%s", key, host ? " on " : "", host ? host : "");

    if (strcmp(unit, unit_b) != 0) {
        *verdict = "incomparable";
        snprintf(why, sizeof why, "the unit changed ('%s' to '%s')", unit, unit_b);
        snprintf(says, sizeof says, "%s: %s", name, why);
        bad |= set(r, "test", json_string("none")) | set(r, "verdict", json_string(*verdict)) |
               set(r, "why", json_string(why)) | set(r, "says", json_string(says));
        if (bad) {
            json_decref(r);
            return NULL;
        }
        return r;
    }

    /* which test */
    const char *last = last_part(metric);
    struct tp_diff_stat st = {0};
    double n_a = 0, n_b = 0;
    const char *test = "none";
    if (strcmp(last, "max") == 0 && last != metric) {
        snprintf(why, sizeof why, "no samples: the maximum is one sample");
    } else if (strcmp(last, "mean") == 0 && last != metric) {
        if (welch_test(ra, rb, &st, &n_a, &n_b, why, sizeof why))
            test = "welch";
        else if (!*why)
            snprintf(why, sizeof why, "no samples: no count and stdev beside the mean");
    } else {
        char fa[600], fb[600];
        family_id(ra, fa, sizeof fa);
        family_id(rb, fb, sizeof fb);
        const json_t *ha = json_object_get(A->fam_hist, fa), *hb = json_object_get(B->fam_hist, fb);
        if (ha && hb && mw_test(ha, hb, &st, &n_a, &n_b, why, sizeof why))
            test = "mann-whitney";
        else if (welch_test(ra, rb, &st, &n_a, &n_b, why, sizeof why))
            test = "welch";
        else if (!*why)
            snprintf(why, sizeof why, "no samples: %s",
                     json_object_get(ra, "stats") || json_object_get(rb, "stats") || ha || hb
                         ? "only one side kept its samples"
                         : "one number a side");
    }
    bad |= set(r, "test", json_string(test));

    tp_gate_fmt(a, unit, 3, va, sizeof va);
    tp_gate_fmt(b, unit, 3, vb, sizeof vb);
    for (int sig = 4; a != b && strcmp(va, vb) == 0 && sig <= 8; sig++) {
        tp_gate_fmt(a, unit, sig, va, sizeof va);
        tp_gate_fmt(b, unit, sig, vb, sizeof vb);
    }
    char chg[48];
    if (isfinite(rel))
        snprintf(chg, sizeof chg, fabs(rel) < 0.01 ? "%+.2f %%" : "%+.1f %%", rel * 100);
    else
        snprintf(chg, sizeof chg, "from 0");

    if (strcmp(test, "none") == 0) {
        *verdict = "no samples";
        snprintf(says, sizeof says, "%s %s (%s → %s), not tested (%s)", name, chg, va, vb, why);
    } else {
        bad |= set(r, "p", json_real(st.p)) | set(r, "stat", json_real(st.stat)) |
               set(r, "n_a", json_real(n_a)) | set(r, "n_b", json_real(n_b));
        if (strcmp(test, "welch") == 0)
            bad |= set(r, "df", json_real(st.df));
        else
            bad |= set(r, "p_b_gt", json_real(st.p_b_gt));
        fmt_p(st.p, ps, sizeof ps);
        bool significant = st.p < o->alpha;
        bool big = isfinite(rel) ? fabs(rel) >= o->min_effect : true;
        bool worse = better && ((strcmp(better, "lower") == 0 && change > 0) ||
                                (strcmp(better, "higher") == 0 && change < 0));
        if (!significant) {
            *verdict = "unchanged";
            snprintf(why, sizeof why, "not significant (%s, alpha %g)", ps, o->alpha);
        } else if (!big || change == 0) {
            *verdict = "unchanged";
            snprintf(why, sizeof why, "significant (%s) but below the minimum effect of %g %%", ps,
                     o->min_effect * 100);
        } else if (!better) {
            *verdict = "changed";
            snprintf(why, sizeof why, "significant (%s); which way is better is not known", ps);
        } else {
            *verdict = worse ? "regression" : "improvement";
            snprintf(why, sizeof why, "significant (%s), %s is better", ps, better);
        }
        snprintf(says, sizeof says, "%s %s (%s → %s), %s%s", name, chg, va, vb, ps,
                 strcmp(test, "welch") == 0 ? " (Welch, means)" : "");
    }
    bad |= set(r, "verdict", json_string(*verdict)) | set(r, "why", json_string(why)) |
           set(r, "says", json_string(says));
    if (bad) {
        json_decref(r);
        return NULL;
    }
    return r;
}

/* ---- the whole diff ---- */

json_t *tp_diff_rows(const json_t *a, const json_t *b, const struct tp_diff_opts *opts,
                     tp_error *err)
{
    if (!json_is_array(a) || !json_is_array(b)) {
        tp_error_set(err, TP_EUSAGE, "diff: the %s rows are not an array",
                     json_is_array(a) ? "candidate" : "baseline");
        return NULL;
    }
    struct opts o = {TP_DIFF_ALPHA, TP_DIFF_MIN_EFFECT};
    if (opts && opts->alpha > 0)
        o.alpha = opts->alpha;
    if (opts && opts->min_effect != 0)
        o.min_effect = opts->min_effect < 0 ? 0 : opts->min_effect;
    struct side A = {0}, B = {0};
    json_t *out = json_object(), *rows = json_array(), *only_a = json_array(),
           *only_b = json_array();
    if (!out || !rows || !only_a || !only_b || index_side(a, &A) || index_side(b, &B))
        goto oom;
    size_t counts[6] = {
        0}; /* regression, improvement, changed, unchanged, untested, incomparable */
    static const char *const names[] = {"regression", "improvement", "changed",
                                        "unchanged",  "no samples",  "incomparable"};
    size_t i;
    json_t *ra;
    json_array_foreach(a, i, ra) {
        char id[600];
        row_id(ra, id, sizeof id);
        if (json_object_get(A.by_id, id) != ra) /* a repeated id: the first stands */
            continue;
        const json_t *rb = json_object_get(B.by_id, id);
        if (!rb) {
            if (json_array_append_new(only_a, json_string(id)))
                goto oom;
            continue;
        }
        const char *verdict = "";
        json_t *r = compare(ra, rb, &A, &B, &o, &verdict);
        if (!r || json_array_append_new(rows, r))
            goto oom;
        for (size_t k = 0; k < 6; k++)
            counts[k] += strcmp(verdict, names[k]) == 0;
    }
    const char *id;
    json_t *rb;
    json_object_foreach(B.by_id, id, rb) {
        if (!json_object_get(A.by_id, id) && json_array_append_new(only_b, json_string(id)))
            goto oom;
    }
    free_side(&A);
    free_side(&B);
    if (set(out, "alpha", json_real(o.alpha)) || set(out, "min_effect", json_real(o.min_effect)) ||
        set(out, "compared", json_integer((json_int_t)json_array_size(rows))) ||
        set(out, "regressions", json_integer((json_int_t)counts[0])) ||
        set(out, "improvements", json_integer((json_int_t)counts[1])) ||
        set(out, "changed", json_integer((json_int_t)counts[2])) ||
        set(out, "untested", json_integer((json_int_t)counts[4])) ||
        set(out, "incomparable", json_integer((json_int_t)counts[5])) || set(out, "rows", rows) ||
        set(out, "only_a", only_a) || set(out, "only_b", only_b)) {
        json_decref(out);
        tp_error_set(err, TP_ENOMEM, "diff: out of memory");
        return NULL;
    }
    return out;
oom:
    free_side(&A);
    free_side(&B);
    json_decref(out);
    json_decref(rows);
    json_decref(only_a);
    json_decref(only_b);
    tp_error_set(err, TP_ENOMEM, "diff: out of memory");
    return NULL;
}

json_t *tp_diff_docs(const json_t *doc_a, const json_t *doc_b, const struct tp_diff_opts *opts,
                     tp_error *err)
{
    json_t *a = tp_report_metrics(doc_a, err);
    json_t *b = a ? tp_report_metrics(doc_b, err) : NULL;
    json_t *d = a && b ? tp_diff_rows(a, b, opts, err) : NULL;
    json_decref(a);
    json_decref(b);
    return d;
}

void tp_diff_print(FILE *f, const json_t *diff, bool all)
{
    long long reg = json_integer_value(json_object_get(diff, "regressions"));
    long long imp = json_integer_value(json_object_get(diff, "improvements"));
    long long chg = json_integer_value(json_object_get(diff, "changed"));
    fprintf(f,
            "DIFF: %lld regression%s, %lld improvement%s, %lld other change%s in %lld rows "
            "compared (%lld without samples); significant at p < %g, minimum effect %g %%\n",
            reg, reg == 1 ? "" : "s", imp, imp == 1 ? "" : "s", chg, chg == 1 ? "" : "s",
            (long long)json_integer_value(json_object_get(diff, "compared")),
            (long long)json_integer_value(json_object_get(diff, "untested")),
            json_number_value(json_object_get(diff, "alpha")),
            json_number_value(json_object_get(diff, "min_effect")) * 100);
    static const char *const order[] = {"regression",   "improvement", "changed",
                                        "incomparable", "unchanged",   "no samples"};
    static const char *const tags[] = {"REGRESSION",   "IMPROVED", "CHANGED",
                                       "INCOMPARABLE", "same",     "untested"};
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        if (!all && k >= 4)
            break;
        size_t i;
        const json_t *r;
        json_array_foreach(json_object_get(diff, "rows"), i, r) {
            const char *v = json_string_value(json_object_get(r, "verdict"));
            /* says and why quote the documents' keys and labels: safe text */
            char t1[2048], t2[1024];
            if (v && strcmp(v, order[k]) == 0)
                fprintf(f, "%-12s %s%s%s\n", tags[k],
                        tp_text_safe(json_string_value(json_object_get(r, "says")), t1, sizeof t1,
                                     TP_TEXT_LINE),
                        k == 4 ? "; " : "",
                        k == 4 ? tp_text_safe(json_string_value(json_object_get(r, "why")), t2,
                                              sizeof t2, TP_TEXT_LINE)
                               : "");
        }
    }
    size_t na = json_array_size(json_object_get(diff, "only_a"));
    size_t nb = json_array_size(json_object_get(diff, "only_b"));
    if (na || nb)
        fprintf(f, "%zu row%s only in the baseline, %zu only in the candidate\n", na,
                na == 1 ? "" : "s", nb);
}
