/* The screen judgement: once the tier's rounds are over, the fleet's own
 * figures (the median and the robust spread of the pair tests, of the
 * groups pass), and from them the suspects, each handed to an isolation
 * action:
 *   - a node whose pairs' median is high: confirmed against known-good
 *     partners;
 *   - a slow pair between two nodes that are not suspects: the link,
 *     measured again alone, its ends with others;
 *   - a slow group of the groups pass (a fault only collectives show, or
 *     a link no pair crossed): split in halves;
 *   - a gang slower than its baseline that nothing explains: the whole
 *     ring split in halves.
 * A slow group with a suspect in it is split too, without the suspect: it
 * may hold a second fault.
 * What is neither suspect nor in a slow group is the known-good pool the
 * isolation draws partners and references from. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "triage_int.h"

/* median and 1.4826 MAD / median of v (reordered) */
static double spread_of(float *v, int n, double *median)
{
    double m = tp__triage_median(v, n);
    *median = m;
    if (n < 3 || !(m > 0))
        return 0;
    for (int i = 0; i < n; i++)
        v[i] = (float)fabs(v[i] - m);
    return 1.4826 * tp__triage_median(v, n) / m;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static uint64_t key_of(int a, int b)
{
    return a < b ? (uint64_t)a << 32 | (uint32_t)b : (uint64_t)b << 32 | (uint32_t)a;
}

/* Per node, its screen pairs (t->adj_off, t->adj). */
static int adjacency(tp_triage *t)
{
    int n = t->n;
    t->adj_off = calloc((size_t)n + 1, sizeof *t->adj_off);
    t->adj = malloc(sizeof *t->adj * (size_t)(2 * t->npairs + 1));
    if (!t->adj_off || !t->adj)
        return TP_ENOMEM;
    for (int i = 0; i < t->npairs; i++) {
        t->adj_off[t->pairs[i].a + 1]++;
        t->adj_off[t->pairs[i].b + 1]++;
    }
    for (int v = 0; v < n; v++)
        t->adj_off[v + 1] += t->adj_off[v];
    int *fill = malloc(sizeof *fill * (size_t)n);
    if (!fill)
        return TP_ENOMEM;
    memcpy(fill, t->adj_off, sizeof *fill * (size_t)n);
    for (int i = 0; i < t->npairs; i++) {
        t->adj[fill[t->pairs[i].a]++] = i;
        t->adj[fill[t->pairs[i].b]++] = i;
    }
    free(fill);
    return 0;
}

/* The fleet's pair figure: the median over the nodes of each node's own
 * median, which stays put while up to half the nodes are slow (in a small
 * fleet a slow node or two touch most pairs), or the pairs' own median when
 * that is lower; the spread, of the pairs
 * between nodes that look normal. Then the nodes whose median is high. */
static int pair_suspects(tp_triage *t, bool *sus)
{
    int n = t->n;
    float *v = malloc(sizeof *v * (size_t)(t->npairs + 1)),
          *score = malloc(sizeof *score * (size_t)n), *nodes = malloc(sizeof *nodes * (size_t)n);
    int *cnt = calloc((size_t)n, sizeof *cnt);
    int rc = v && score && nodes && cnt ? adjacency(t) : TP_ENOMEM;
    int scored = 0;
    for (int u = 0; rc == 0 && u < n; u++) {
        int c = 0;
        for (int k = t->adj_off[u]; k < t->adj_off[u + 1]; k++)
            v[c++] = t->pairs[t->adj[k]].fig;
        cnt[u] = c;
        score[u] = c ? (float)tp__triage_median(v, c) : 0;
        if (c)
            nodes[scored++] = score[u];
    }
    t->pair_median = rc == 0 ? tp__triage_median(nodes, scored) : 0;
    /* and the median of the pairs themselves, when lower: a slow node of a
     * small ring pass raises its two neighbours' medians too (3 of 6 nodes),
     * not the pairs' (2 of 6); a fault only slows, so the lower is normal.
     * The spread is still taken about the nodes' median, of the pairs
     * between nodes that look normal by it. */
    for (int i = 0; rc == 0 && i < t->npairs; i++)
        v[i] = t->pairs[i].fig;
    double pm = rc == 0 && t->npairs ? tp__triage_median(v, t->npairs) : 0;
    double m = t->pair_median, half = 1 + t->o.min_effect / 2;
    int k = 0;
    for (int i = 0; rc == 0 && m > 0 && i < t->npairs; i++) {
        const struct tp__pair *p = &t->pairs[i];
        if (score[p->a] <= m * half && score[p->b] <= m * half)
            v[k++] = (float)fabs(p->fig - m);
    }
    if (rc == 0 && m > 0 && k < 3) /* too few that look normal: all of them */
        for (k = 0; k < t->npairs; k++)
            v[k] = (float)fabs(t->pairs[k].fig - m);
    t->pair_spread = m > 0 && k >= 3 ? 1.4826 * tp__triage_median(v, k) / m : 0;
    if (pm > 0 && pm < m)
        t->pair_median = m = pm;
    for (int u = 0; rc == 0 && m > 0 && u < n; u++) {
        if (cnt[u] == 0)
            continue;
        /* the median of c figures spreads 1.2533 / sqrt(c) as much as one */
        double thr =
            1 + fmax(t->o.min_effect / 2, t->o.z_screen * t->pair_spread * 1.2533 / sqrt(cnt[u]));
        sus[u] = score[u] / m > thr;
    }
    free(v);
    free(score);
    free(nodes);
    free(cnt);
    return rc;
}

/* the slow pairs between two nodes that are not suspects: links to look at
 * again (their keys, sorted, in *links) */
static int link_suspects(tp_triage *t, const bool *sus, uint64_t **links, int *nlinks)
{
    double thr = tp__triage_suspect(t);
    *links = malloc(sizeof **links * (size_t)(t->npairs + 1));
    if (!*links)
        return TP_ENOMEM;
    int rc = 0;
    for (int i = 0; rc == 0 && i < t->npairs; i++) {
        const struct tp__pair *p = &t->pairs[i];
        if (p->fig / t->pair_median <= thr)
            continue;
        (*links)[(*nlinks)++] = key_of(p->a, p->b);
        if (!sus[p->a] && !sus[p->b])
            rc = tp__triage_confirm_link(t, p->a, p->b);
    }
    qsort(*links, (size_t)*nlinks, sizeof **links, cmp_u64);
    return rc;
}

/* A slow group with a suspect in it may hide a second fault: what is left
 * of it without its suspect nodes, in its ring order turned so that a
 * suspect link of it, if any, is the closing one (which no half has), is
 * split all the same. *left is the count (< 2: nothing to split). */
static int unexplained(const int *nodes, int n, const bool *sus, const uint64_t *links,
                       int nlinks, int *out)
{
    int start = 0;
    for (int i = 0; i < n; i++) {
        uint64_t k = key_of(nodes[i], nodes[(i + 1) % n]);
        if (bsearch(&k, links, (size_t)nlinks, sizeof k, cmp_u64)) {
            start = (i + 1) % n;
            break;
        }
    }
    int w = 0;
    for (int i = 0; i < n; i++) {
        int v = nodes[(start + i) % n];
        if (!sus[v])
            out[w++] = v;
    }
    return w;
}

/* the groups pass: its median and spread, the slow groups nothing explains
 * (split: bisect), the others references; slow[v]: v is in a slow group */
static int group_suspects(tp_triage *t, const bool *sus, const uint64_t *links, int nlinks,
                          bool *slow)
{
    int ng = 0;
    for (int i = 0; i < t->ngroups; i++)
        ng += t->groups[i].stage == TP_TRIAGE_GROUPS;
    float *v = malloc(sizeof *v * (size_t)(ng + 1));
    if (!v)
        return TP_ENOMEM;
    int k = 0;
    for (int i = 0; i < t->ngroups; i++)
        if (t->groups[i].stage == TP_TRIAGE_GROUPS)
            v[k++] = (float)tp__triage_norm(t->groups[i].fig, t->groups[i].n);
    double median = 0;
    t->group_spread = ng >= 3 ? spread_of(v, ng, &median) : t->pair_spread;
    if (ng < 16) {
        /* few groups: two slow ones move the median and the spread; a
         * fault only slows, so the faster half is the reference, and the
         * pairs' spread the spread */
        for (int i = 0, j = 0; i < t->ngroups; i++)
            if (t->groups[i].stage == TP_TRIAGE_GROUPS)
                v[j++] = (float)tp__triage_norm(t->groups[i].fig, t->groups[i].n);
        tp__triage_median(v, ng); /* sorts */
        median = tp__triage_median(v, (ng + 1) / 2);
        if (t->pair_spread > 0)
            t->group_spread = t->pair_spread;
    }
    free(v);
    double thr = 1 + fmax(t->o.min_effect / 2, t->o.z * t->group_spread);
    int rc = 0;
    for (int i = 0; rc == 0 && ng >= 3 && i < t->ngroups; i++) {
        const struct tp__group *g = &t->groups[i];
        if (g->stage != TP_TRIAGE_GROUPS)
            continue;
        const int *nodes = t->gnodes + g->off;
        double norm = tp__triage_norm(g->fig, g->n);
        if (norm / median <= thr) {
            rc = tp__triage_add_ref(t, g->n, norm);
            continue;
        }
        for (int j = 0; j < g->n; j++)
            slow[nodes[j]] = true;
        int *rest = malloc(sizeof *rest * (size_t)g->n);
        if (!rest)
            return TP_ENOMEM;
        int left = unexplained(nodes, g->n, sus, links, nlinks, rest);
        if (left >= 2)
            rc = tp__triage_bisect(t, rest, left);
        free(rest);
    }
    return rc;
}

int tp__triage_screen_judge(tp_triage *t)
{
    int n = t->n;
    bool *sus = calloc((size_t)n, sizeof *sus), *slow = calloc((size_t)n, sizeof *slow);
    uint64_t *links = NULL;
    int nlinks = 0, rc = sus && slow ? 0 : TP_ENOMEM;
    /* only the screen's pairs have been kept so far: all of them count */
    if (rc == 0)
        rc = pair_suspects(t, sus);
    for (int u = 0; rc == 0 && u < n; u++)
        if (sus[u])
            rc = tp__triage_confirm_node(t, u, false);
    if (rc == 0 && t->pair_median > 0)
        rc = link_suspects(t, sus, &links, &nlinks);
    if (rc == 0)
        rc = group_suspects(t, sus, links, nlinks, slow);
    if (rc == 0) /* with a topology, the leaf switches' traffic as a whole */
        rc = tp__triage_leaf_suspects(t, sus);
    /* the gang, against its baseline: slow with nothing else to explain it */
    bool any = nlinks > 0;
    for (int u = 0; u < n; u++)
        any |= sus[u] || slow[u];
    for (int i = 0; rc == 0 && !any && t->o.gang_baseline > 0 && i < t->ngroups; i++) {
        const struct tp__group *g = &t->groups[i];
        double thr = 1 + fmax(t->o.min_effect, t->o.z * t->group_spread);
        if (g->stage == TP_TRIAGE_GANG && g->fig / t->o.gang_baseline > thr && g->n >= 2)
            rc = tp__triage_bisect(t, t->gnodes + g->off, g->n);
    }
    /* the run's bound on a false name split over its suspects (Bonferroni);
     * the links a cleared node hands on later draw on the same shares */
    t->alpha_each = t->o.alpha / (t->nactions > 0 ? t->nactions : 1);
    t->ngood = 0;
    for (int u = 0; u < n; u++)
        if (t->node[u].status == ST_PASS && !sus[u] && !slow[u] && !t->node[u].in_action)
            t->good[t->ngood++] = u;
    free(sus);
    free(slow);
    free(links);
    return rc;
}
