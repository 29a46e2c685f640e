/* The planned rounds of the tiers' stages, built when the driver asks for
 * them (the full tier at 10,000 nodes is 10,000 rounds of 5,000 pairs: not
 * kept), and the random draws behind them: the ring order, the groups, the
 * matchings, all from the triage's seed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tp/judge.h"
#include "triage_int.h"

static bool alive(const tp_triage *t, int v)
{
    return t->node[v].status != ST_LOST && t->node[v].status != ST_MISSING;
}

static void add_pair(tp_triage *t, int a, int b)
{
    if (!alive(t, a) || !alive(t, b))
        return;
    int *p = tp__triage_cur_test(t, false, 2);
    p[0] = a;
    p[1] = b;
}

/* The ring pass: edges (i, i+1) of the ring order, even ones in round 0,
 * odd ones in round 1, the closing edge of an odd ring in round 2. */
static int ring_round(tp_triage *t, int k)
{
    int m = t->m;
    const int *o = t->order;
    if (m == 2) {
        add_pair(t, o[0], o[1]);
        return 0;
    }
    if (k == 2) {
        add_pair(t, o[m - 1], o[0]);
        return 0;
    }
    int last = m % 2 ? m - 1 : m; /* an odd ring's closing edge waits for round 2 */
    for (int i = k; i < last; i += 2)
        add_pair(t, o[i], o[(i + 1) % m]);
    return 0;
}

/* The groups pass: the joined nodes in a fresh order, cut into groups of
 * g (the first m % g of them one larger). A group with a node lost before
 * it runs without it. */
static int groups_round(tp_triage *t, int k)
{
    (void)k;
    int m = t->m, g = tp__triage_groups_size(m, &t->o);
    int *perm = malloc(sizeof *perm * (size_t)m);
    if (!perm)
        return TP_ENOMEM;
    memcpy(perm, t->order, sizeof *perm * (size_t)m);
    tp__triage_shuffle(perm, m, &t->rng);
    int q = m / g, extra = m % g, at = 0;
    for (int j = 0; j < q; j++) {
        int size = g + (j < extra), live = 0;
        for (int i = 0; i < size; i++)
            live += alive(t, perm[at + i]);
        if (live >= 2) {
            int *p = tp__triage_cur_test(t, true, live), w = 0;
            for (int i = 0; i < size; i++)
                if (alive(t, perm[at + i]))
                    p[w++] = perm[at + i];
        }
        at += size;
    }
    free(perm);
    return 0;
}

static int gang_round(tp_triage *t, int k)
{
    (void)k;
    int m = t->m, live = 0;
    for (int i = 0; i < m; i++)
        live += alive(t, t->order[i]);
    if (live < 2)
        return 0;
    int *p = tp__triage_cur_test(t, true, live), w = 0;
    for (int i = 0; i < m; i++)
        if (alive(t, t->order[i]))
            p[w++] = t->order[i];
    return 0;
}

/* matching k: each node with its partner in it */
static int match_round(tp_triage *t, int k)
{
    for (int i = 0; i < t->m; i++) {
        int v = t->order[i], p = t->partners[(size_t)k * (size_t)t->n + (size_t)v];
        if (p > v)
            add_pair(t, v, p);
    }
    return 0;
}

/* round k of the circle method over the ring order */
static int pairs_round(tp_triage *t, int k)
{
    for (int i = 0; i < t->m; i++) {
        int p = tp_fleet_partner(t->m, k, i);
        if (p > i)
            add_pair(t, t->order[i], t->order[p]);
    }
    return 0;
}

/* the planned stages' rounds (the isolation's are isolate.c's) */
static int (*const build[TP_TRIAGE_NSTAGES])(tp_triage *t, int k) = {
    [TP_TRIAGE_GANG] = gang_round,   [TP_TRIAGE_RING] = ring_round,
    [TP_TRIAGE_GROUPS] = groups_round, [TP_TRIAGE_MATCH] = match_round,
    [TP_TRIAGE_PAIRS] = pairs_round,
};

int tp__triage_plan_round(tp_triage *t, enum tp_triage_stage s, int k)
{
    t->cur.stage = s;
    t->cur.ntests = 0;
    t->cur_nnodes = 0;
    return build[s] ? build[s](t, k) : 0;
}

/* ---- the matchings ---- */

/* Have a and b met already: ring neighbours, or partners in an earlier
 * matching? */
static bool met(const tp_triage *t, const int *pos, int j, int a, int b)
{
    int m = t->m, d = abs(pos[a] - pos[b]);
    if (d == 1 || d == m - 1)
        return true;
    for (int q = 0; q < j; q++)
        if (t->partners[(size_t)q * (size_t)t->n + (size_t)a] == b)
            return true;
    return false;
}

static int conflicts(const tp_triage *t, const int *pos, int j, const int *perm, int pairs)
{
    int c = 0;
    for (int i = 0; i < pairs; i++)
        c += met(t, pos, j, perm[2 * i], perm[2 * i + 1]);
    return c;
}

/* Matching j: a shuffle cut into pairs (an odd count leaves its last node
 * out), repaired by swaps until no pair has met before; the fewest
 * conflicts of 200 tries otherwise (a small fleet short of partners). */
static void draw_one(tp_triage *t, const int *pos, int j, int *perm, int *best)
{
    int m = t->m, pairs = m / 2, least = -1;
    for (int attempt = 0; attempt < 200 && least != 0; attempt++) {
        memcpy(perm, t->order, sizeof *perm * (size_t)m);
        tp__triage_shuffle(perm, m, &t->rng);
        for (int pass = 0; pass < 4; pass++) {
            bool clean = true;
            for (int i = 0; i < pairs; i++) {
                if (!met(t, pos, j, perm[2 * i], perm[2 * i + 1]))
                    continue;
                clean = false;
                for (int tries = 0; tries < 64; tries++) {
                    int x = (int)(tp__triage_rand(&t->rng) % (uint64_t)m);
                    if (x / 2 == i)
                        continue;
                    int *u = &perm[2 * i + 1], *w = &perm[x];
                    int xo = x ^ 1; /* x's partner now (the left-out node has none) */
                    int tmp = *u;
                    *u = *w;
                    *w = tmp;
                    bool ok = !met(t, pos, j, perm[2 * i], perm[2 * i + 1]) &&
                              (x >= 2 * pairs || !met(t, pos, j, perm[x], perm[xo]));
                    if (ok)
                        break;
                    tmp = *u; /* undo */
                    *u = *w;
                    *w = tmp;
                }
            }
            if (clean)
                break;
        }
        int c = conflicts(t, pos, j, perm, pairs);
        if (least < 0 || c < least) {
            least = c;
            memcpy(best, perm, sizeof *perm * (size_t)m);
        }
    }
    for (int i = 0; i < pairs; i++) {
        t->partners[(size_t)j * (size_t)t->n + (size_t)best[2 * i]] = best[2 * i + 1];
        t->partners[(size_t)j * (size_t)t->n + (size_t)best[2 * i + 1]] = best[2 * i];
    }
}

int tp__triage_draw_matchings(tp_triage *t, int k)
{
    if (k <= 0)
        return 0;
    size_t n = (size_t)t->n;
    t->partners = malloc(sizeof *t->partners * n * (size_t)k);
    int *pos = malloc(sizeof *pos * n), *perm = malloc(sizeof *perm * (size_t)t->m),
        *best = malloc(sizeof *best * (size_t)t->m);
    int rc = 0;
    if (!t->partners || !pos || !perm || !best) {
        rc = TP_ENOMEM;
    } else {
        for (size_t i = 0; i < n * (size_t)k; i++)
            t->partners[i] = -1;
        for (int i = 0; i < t->m; i++)
            pos[t->order[i]] = i;
        for (int j = 0; j < k; j++)
            draw_one(t, pos, j, perm, best);
    }
    free(pos);
    free(perm);
    free(best);
    return rc;
}
