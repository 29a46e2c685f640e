/* The SDC screen's chains on GPUs (`trainpath sdc --gpu`, docs/sdc.md):
 * one chain per GPU of the host, its products by cuBLAS in f32 with
 * pedantic math (include/tp/gpu.h, tp_gpu_sdc_product), the rest of the
 * step (exact sums, hash, next input) on the host as a CPU chain's.
 * cuBLAS promises the same bits only on devices of one architecture and
 * SM count with one cuBLAS version, so the GPUs are judged by their key
 * (name, compute capability, SMs, cuBLAS version): each key's GPUs
 * against their own majority, and each key's chain is what validate
 * compares across nodes with the same key. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdc_int.h"
#include "tp/gpu.h"
#include "tp/result.h"

struct one {
    struct tp_gpu *g;
    struct tp__sdc_device dev;
    char key[160], name[96];
};

struct tp__sdc_gpus {
    int n;
    struct one *of; /* [n] */
};

static int product(void *ctx, const float *x, float *y, tp_error *err)
{
    return tp_gpu_sdc_product(ctx, x, y, err);
}

/* The GPU's key from its provenance, of the form "NVIDIA H100 80GB HBM3,
 * cc 9.0, 132 SMs, cuBLAS 130100"; "emulated" for the test double. */
static void key_of(struct one *o)
{
    json_t *i = tp_gpu_info(o->g);
    const char *name = json_string_value(json_object_get(i, "name"));
    snprintf(o->name, sizeof o->name, "%s", name ? name : "?");
    if (json_is_true(json_object_get(i, "emulated")))
        snprintf(o->key, sizeof o->key, "emulated");
    else
        snprintf(o->key, sizeof o->key, "%s, cc %s, %lld SMs, cuBLAS %lld", o->name,
                 json_string_value(json_object_get(i, "compute_capability")),
                 (long long)json_integer_value(json_object_get(i, "multiprocessors")),
                 (long long)json_integer_value(json_object_get(i, "cublas_version")));
    json_decref(i);
}

int tp__sdc_gpus_open(struct tp__sdc_gpus **out, tp_error *err)
{
    *out = NULL;
    struct tp__sdc_gpus *s = calloc(1, sizeof *s);
    struct tp_gpu *first = NULL;
    struct tp_gpu_opts go = {.what = "sdc --gpu", .device = 0, .need = TP_GPU_CUBLAS};
    if (!s)
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    int rc = tp_gpu_open(&go, &first, err);
    int n = rc == 0 ? tp_gpu_devices(first) : 0;
    if (rc == 0 && !(s->of = calloc((size_t)n, sizeof *s->of))) {
        tp_gpu_close(first);
        rc = tp_error_set(err, TP_ENOMEM, "out of memory");
    }
    for (int d = 0; rc == 0 && d < n; d++) {
        go.device = d;
        rc = d == 0 ? 0 : tp_gpu_open(&go, &s->of[d].g, err);
        if (d == 0)
            s->of[0].g = first;
        if (rc == 0) {
            s->n = d + 1;
            s->of[d].dev = (struct tp__sdc_device){.product = product, .ctx = s->of[d].g};
            key_of(&s->of[d]);
        }
    }
    if (rc) {
        tp__sdc_gpus_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

int tp__sdc_gpus_count(const struct tp__sdc_gpus *s)
{
    return s ? s->n : 0;
}

const struct tp__sdc_device *tp__sdc_gpus_device(const struct tp__sdc_gpus *s, int d)
{
    return &s->of[d].dev;
}

int tp__sdc_gpus_prepare(struct tp__sdc_gpus *s, int d, const float *w, tp_error *err)
{
    return tp_gpu_sdc_init(s->of[d].g, TP_SDC_N, w, err);
}

/* The GPUs with key `key`, judged against their majority: each one's row
 * into row[d], the group's chain (its majority's) appended to chains; the
 * GPU named first (ODD or UNDECIDED, the earliest step) into *first with
 * its words. */
static int judge_key(const struct tp__sdc_gpus *s, const struct tp_sdc_chain *c, const char *key,
                     json_t **row, json_t *chains, int *first, uint64_t *first_step, char *says,
                     size_t cap, tp_error *err)
{
    static const char *const call[] = {"agree", "odd", "undecided", "absent"};
    int *idx = malloc((size_t)s->n * sizeof *idx), m = 0;
    if (!idx)
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    for (int d = 0; d < s->n; d++)
        if (strcmp(s->of[d].key, key) == 0)
            idx[m++] = d;
    struct tp_sdc_judge *j = tp_sdc_judge_new(m);
    struct tp_sdc_verdict v = {0};
    int rc = j ? 0 : tp_error_set(err, TP_ENOMEM, "out of memory");
    for (int i = 0; rc == 0 && i < m; i++)
        rc = tp_sdc_judge_add(j, i, &c[idx[i]], err);
    if (rc == 0)
        rc = tp_sdc_judge_result(j, &v, err);
    tp_sdc_judge_free(j);
    int lead = -1;
    for (int i = 0; rc == 0 && i < m; i++) {
        const struct tp_sdc_member *x = &v.of[i];
        bool off = x->call == TP_SDC_ODD || x->call == TP_SDC_UNDECIDED;
        char w[200], final[65];
        tp_sdc_says(&v, i, "GPUs", w, sizeof w);
        for (int b = 0; b < 32; b++)
            snprintf(final + 2 * b, 3, "%02x", c[idx[i]].final[b]);
        row[idx[i]] = json_pack(
            "{s:i, s:s, s:s, s:I, s:s, s:s, s:o, s:o, s:s}", "gpu", idx[i], "name",
            s->of[idx[i]].name, "key", key, "steps", (json_int_t)c[idx[i]].steps, "final", final,
            "call", call[x->call], "step", off ? json_integer((json_int_t)x->step) : json_null(),
            "after", off ? json_integer((json_int_t)x->after) : json_null(), "says", w);
        if (x->call == TP_SDC_AGREE && lead < 0)
            lead = i;
        if (off && (*first < 0 || x->step < *first_step)) {
            *first = idx[i];
            *first_step = x->step;
            snprintf(says, cap, "%s", w);
        }
    }
    if (rc == 0)
        json_array_append_new(chains, json_pack("{s:s, s:i, s:i, s:o}", "key", key, "gpus", m,
                                                "majority", v.majority, "chain",
                                                tp_sdc_chain_json(&c[idx[lead < 0 ? 0 : lead]])));
    tp_sdc_verdict_free(&v);
    free(idx);
    return rc;
}

int tp__sdc_gpus_judge(const struct tp__sdc_gpus *s, const struct tp_sdc_chain *c,
                       json_t *results, tp_error *err)
{
    json_t *rows = json_array(), *chains = json_array(), **row = calloc((size_t)s->n, sizeof *row);
    int rc = rows && chains && row ? 0 : tp_error_set(err, TP_ENOMEM, "out of memory"), first = -1;
    uint64_t first_step = 0;
    char says[200] = "";
    for (int d = 0; rc == 0 && d < s->n; d++)
        if (!row[d]) /* the first GPU of a key not judged yet */
            rc = judge_key(s, c, s->of[d].key, row, chains, &first, &first_step, says,
                           sizeof says, err);
    for (int d = 0; row && d < s->n; d++)
        if (row[d])
            json_array_append_new(rows, row[d]);
    free(row);
    json_object_set_new(results, "gpus_detail", rows);
    json_object_set_new(results, "gpu_chains", chains);
    if (rc == 0 && first >= 0)
        rc = tp_error_set(err, TP_ECHECK, "GPU %d (%s): %s", first, s->of[first].name, says);
    return rc;
}

void tp__sdc_gpus_close(struct tp__sdc_gpus *s)
{
    if (!s)
        return;
    for (int d = 0; s->of && d < s->n; d++)
        tp_gpu_close(s->of[d].g);
    free(s->of);
    free(s);
}
