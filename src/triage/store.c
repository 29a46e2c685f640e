/* What a triage keeps of its measurements (include/tp/triage.h): the pair
 * and group figures, the reference groups, the round being built, and the
 * figures read from them (medians, the ratio of a group to a ring of its
 * size, the thresholds). Every other file of src/triage/ reads these;
 * nothing here calls back. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "triage_int.h"

static int grow(void **p, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return 0;
    int c = *cap ? *cap : 256;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, (size_t)c * elem);
    if (!q)
        return TP_ENOMEM;
    *p = q;
    *cap = c;
    return 0;
}

int tp__triage_add_pair(tp_triage *t, int a, int b, double fig, enum tp_triage_stage s)
{
    if (grow((void **)&t->pairs, &t->cap_pairs, t->npairs + 1, sizeof *t->pairs))
        return TP_ENOMEM;
    t->pairs[t->npairs++] = (struct tp__pair){a, b, (float)fig, (uint8_t)s};
    return 0;
}

int tp__triage_add_group(tp_triage *t, const int *nodes, int n, double fig,
                         enum tp_triage_stage s, bool ref)
{
    if (grow((void **)&t->groups, &t->cap_groups, t->ngroups + 1, sizeof *t->groups) ||
        grow((void **)&t->gnodes, &t->cap_gnodes, t->ngnodes + n, sizeof *t->gnodes))
        return TP_ENOMEM;
    memcpy(t->gnodes + t->ngnodes, nodes, sizeof *nodes * (size_t)n);
    t->groups[t->ngroups++] = (struct tp__group){t->ngnodes, n, (float)fig, (uint8_t)s, ref};
    t->ngnodes += n;
    return 0;
}

/* Every node is in at most one test of a round and every test has two
 * nodes or more: n node slots and n / 2 tests are enough for any round. */
int *tp__triage_cur_test(tp_triage *t, bool group, int n)
{
    int i = t->cur.ntests++;
    int *p = t->cur_nodes + t->cur_nnodes;
    t->cur_nnodes += n;
    t->cur.tests[i] = (struct tp_triage_test){group, n, p, 0};
    t->cur_owner[i] = NULL;
    t->cur_step[i] = 0;
    return p;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

double tp__triage_median(float *v, int n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_float);
    return n % 2 ? v[n / 2] : 0.5 * ((double)v[n / 2 - 1] + v[n / 2]);
}

double tp__triage_slow(const tp_triage *t)
{
    return 1 + fmax(t->o.min_effect, t->o.z * t->pair_spread);
}

double tp__triage_suspect(const tp_triage *t)
{
    return 1 + fmax(t->o.min_effect / 2, t->o.z_screen * t->pair_spread);
}

double tp__triage_norm(double fig, int n)
{
    return n >= 2 ? fig / (2.0 * (n - 1) / n) : fig;
}

int tp__triage_add_ref(tp_triage *t, int n, double norm)
{
    if (t->nrefs == t->cap_refs) {
        int c = t->cap_refs ? 2 * t->cap_refs : 64;
        struct tp__ref *r = realloc(t->refs, sizeof *r * (size_t)c);
        if (!r)
            return TP_ENOMEM;
        t->refs = r;
        t->cap_refs = c;
    }
    t->refs[t->nrefs++] = (struct tp__ref){n, (float)norm};
    return 0;
}

double tp__triage_ref_median(const tp_triage *t, int n)
{
    float v[64];
    int k = 0;
    /* the latest 64 of that size; none (a small fleet short of known-good
     * nodes): of any size, their figures being per ring factor */
    for (int any = 0; any < 2 && k == 0; any++)
        for (int i = t->nrefs; i-- > 0 && k < 64;)
            if (any || t->refs[i].size == n)
                v[k++] = t->refs[i].norm;
    return tp__triage_median(v, k);
}
