/* The path facts the planner asks for: do two nodes share a leaf, how high
 * does their traffic climb, which leaf uplinks can it take. Each switch's
 * ancestors (every switch above it) are worked out once, sorted, when the
 * topology is made, so a query is a merge of two sorted lists and needs no
 * memory of its own: queries run from any thread. In a two-level fabric a
 * leaf's ancestors are its up list, and nothing more is stored. */
#include <stdlib.h>
#include <string.h>

#include "topo_int.h"

#define MAX_ANC (1u << 26) /* ancestor entries of a topology: 256 MiB */

static void ancestors(const struct tp_topology *t, int s, const int **a, int *n)
{
    const struct tp__topo_priv *p = t->priv;
    if (p->anc_n && p->anc_n[s]) {
        *a = p->anc + p->anc_at[s];
        *n = p->anc_n[s];
    } else {
        *a = t->sw[s].up;
        *n = t->sw[s].nup;
    }
}

static int by_int(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

int tp__topo_ancestors(struct tp_topology *t, const int *order, tp_error *err, const char *file)
{
    struct tp__topo_priv *p = t->priv;
    size_t n = (size_t)t->nswitches, len = 0, cap = 0;
    p->anc_at = calloc(n, sizeof *p->anc_at);
    p->anc_n = calloc(n, sizeof *p->anc_n);
    int *tmp = NULL;
    size_t tmp_cap = 0;
    int rc = p->anc_at && p->anc_n ? 0 : TP_ENOMEM;
    /* top-down: a switch's parents are done before it */
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const struct tp_topo_switch *w = &t->sw[order[i]];
        size_t need = 0;
        bool more = false;
        for (int k = 0; k < w->nup; k++) {
            const int *a;
            int na;
            ancestors(t, w->up[k], &a, &na);
            need += 1 + (size_t)na;
            more |= na > 0;
        }
        if (!more)
            continue; /* its parents are roots: its ancestors are its up */
        if (len + need > MAX_ANC) {
            rc = tp_error_set(err, TP_EUSAGE,
                              "%s: the switches are above one another by more than %u paths: "
                              "too large a topology",
                              file, MAX_ANC);
            break;
        }
        if (need > tmp_cap) {
            int *x = realloc(tmp, need * sizeof *x);
            if (!x) {
                rc = TP_ENOMEM;
                break;
            }
            tmp = x;
            tmp_cap = need;
        }
        if (len + need > cap) {
            size_t c2 = cap ? cap : 1024;
            while (c2 < len + need)
                c2 *= 2;
            int *y = realloc(p->anc, c2 * sizeof *y);
            if (!y) {
                rc = TP_ENOMEM;
                break;
            }
            p->anc = y;
            cap = c2;
        }
        size_t m = 0;
        for (int k = 0; k < w->nup; k++) {
            const int *a;
            int na;
            ancestors(t, w->up[k], &a, &na);
            tmp[m++] = w->up[k];
            memcpy(tmp + m, a, (size_t)na * sizeof *a);
            m += (size_t)na;
        }
        qsort(tmp, m, sizeof *tmp, by_int);
        size_t u = 0;
        for (size_t j = 0; j < m; j++)
            if (u == 0 || tmp[j] != p->anc[len + u - 1])
                p->anc[len + u++] = tmp[j];
        p->anc_at[order[i]] = len;
        p->anc_n[order[i]] = (int)u;
        len += u;
    }
    free(tmp);
    if (rc == TP_ENOMEM)
        return tp_error_set(err, rc, "%s: out of memory", file);
    return rc;
}

/* The rail-r leaves of nodes a and b; false when an argument is out of
 * range. */
static bool leaves(const struct tp_topology *t, int a, int b, int rail, int *la, int *lb)
{
    if (!t || a < 0 || b < 0 || a >= t->nnodes || b >= t->nnodes || rail < 0 || rail >= t->nrails)
        return false;
    *la = t->leaf[a * t->nrails + rail];
    *lb = t->leaf[b * t->nrails + rail];
    return *la >= 0 && *lb >= 0;
}

bool tp_topology_same_leaf(const struct tp_topology *t, int a, int b, int rail)
{
    int la, lb;
    return leaves(t, a, b, rail, &la, &lb) && la == lb;
}

/* The lowest level of a switch above both la and lb; -1: none. */
static int common_level(const struct tp_topology *t, int la, int lb)
{
    const int *x, *y;
    int nx, ny, best = -1;
    ancestors(t, la, &x, &nx);
    ancestors(t, lb, &y, &ny);
    for (int i = 0, j = 0; i < nx && j < ny;) {
        if (x[i] < y[j]) {
            i++;
        } else if (x[i] > y[j]) {
            j++;
        } else {
            int l = t->sw[x[i]].level;
            best = best < 0 || l < best ? l : best;
            i++, j++;
        }
    }
    return best;
}

int tp_topology_level(const struct tp_topology *t, int a, int b, int rail)
{
    int la, lb;
    if (!leaves(t, a, b, rail, &la, &lb))
        return -1;
    return la == lb ? 0 : common_level(t, la, lb);
}

/* Whether sorted list a (n items) holds v. */
static bool holds(const int *a, int n, int v)
{
    return n > 0 && bsearch(&v, a, (size_t)n, sizeof *a, by_int) != NULL;
}

/* Whether switch u, directly above one of the two leaves, is or is below a
 * switch at level lvl (the lowest above both) that is above the other leaf
 * too: then u's uplink is on a shortest path between them. What is above
 * u is above its leaf, so only the other leaf's ancestors are asked. */
static bool leads(const struct tp_topology *t, int u, int other, int lvl)
{
    const int *y, *au;
    int ny, nu;
    ancestors(t, other, &y, &ny);
    if (t->sw[u].level >= lvl)
        return t->sw[u].level == lvl && holds(y, ny, u);
    ancestors(t, u, &au, &nu);
    for (int i = 0; i < nu; i++)
        if (t->sw[au[i]].level == lvl && holds(y, ny, au[i]))
            return true;
    return false;
}

int tp_topology_uplinks(const struct tp_topology *t, int a, int b, int rail,
                        struct tp_topo_uplink *out, int cap)
{
    int la, lb;
    if (!leaves(t, a, b, rail, &la, &lb))
        return -1;
    if (la == lb)
        return 0;
    int lvl = common_level(t, la, lb), n = 0;
    if (lvl < 0)
        return -1;
    const int side[2] = {la, lb};
    for (int k = 0; k < 2; k++) {
        const struct tp_topo_switch *w = &t->sw[side[k]];
        for (int i = 0; i < w->nup; i++) {
            if (!leads(t, w->up[i], side[1 - k], lvl))
                continue;
            if (out && n < cap)
                out[n] = (struct tp_topo_uplink){side[k], w->up[i]};
            n++;
        }
    }
    return n;
}
