/* The builder both readers fill (topo_int.h): they hand it switches, the
 * nodes under each leaf and the names of the switches above or below each
 * switch, each with the place in the file it came from; it checks what
 * only the whole shows (a name never defined, a link given twice, switches
 * in a cycle, a node without a leaf on a rail) and makes the struct
 * tp_topology (and frees one, read or generated). Levels are worked out
 * from the leaves up, as Slurm does: a switch is one above the highest
 * switch below it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_int.h"

#define MAX_ATTACH (1 << 25) /* nodes x rails: the leaf table stays under 128 MiB */

struct tp__topo_bsw {
    size_t name; /* offset into pool */
    struct tp__topo_pos at;
    int rail;
    unsigned link_speed;
    bool leaf; /* it has nodes (Nodes=, a leaves: entry) */
};

struct tp__topo_link {
    int sw;
    size_t ref; /* the name named, an offset into pool */
    struct tp__topo_pos at;
    bool up; /* ref is above sw */
};

/* One resolved link: lower is directly below upper; link is its index. */
struct edge {
    int lower, upper, link;
};

void tp__topo_build_init(struct tp__topo_build *b, const char *file, tp_error *err)
{
    memset(b, 0, sizeof *b);
    b->file = file;
    b->err = err;
    b->nrails = 1;
}

void tp__topo_build_free(struct tp__topo_build *b)
{
    free(b->pool);
    free(b->sw);
    tp__topo_names_free(&b->sw_ix);
    tp__topo_names_free(&b->node_ix);
    free(b->node);
    free(b->node_at);
    free(b->leaf);
    free(b->link);
    for (int i = 0; i < b->npaths; i++)
        free(b->paths[i]);
    free(b->paths);
    memset(b, 0, sizeof *b);
}

/* Make room for need items of size bytes in *p (capacity *cap). */
static int grow(void *p, int *cap, int need, size_t size)
{
    if (need <= *cap)
        return 0;
    int n = *cap ? *cap : 16;
    while (n < need)
        n = n > (1 << 29) ? need : 2 * n;
    void *q = realloc(*(void **)p, (size_t)n * size);
    if (!q)
        return TP_ENOMEM;
    *(void **)p = q;
    *cap = n;
    return 0;
}

static int pool_add(struct tp__topo_build *b, const char *s, size_t *off)
{
    size_t len = strlen(s) + 1;
    if (b->pool_len + len > b->pool_cap) {
        size_t cap = b->pool_cap ? b->pool_cap : 4096;
        while (cap < b->pool_len + len)
            cap *= 2;
        char *p = realloc(b->pool, cap);
        if (!p)
            return TP_ENOMEM;
        b->pool = p;
        b->pool_cap = cap;
    }
    memcpy(b->pool + b->pool_len, s, len);
    *off = b->pool_len;
    b->pool_len += len;
    return 0;
}

static const char *sw_name_of(const void *ctx, int i)
{
    const struct tp__topo_build *b = ctx;
    return b->pool + b->sw[i].name;
}

static const char *node_name_of(const void *ctx, int i)
{
    const struct tp__topo_build *b = ctx;
    return b->pool + b->node[i];
}

const char *tp__topo_switch_name(const struct tp__topo_build *b, int i)
{
    return sw_name_of(b, i);
}

int tp__topo_path(struct tp__topo_build *b, const char *path, int *out)
{
    char *p = strdup(path);
    if (!p || grow(&b->paths, &b->cappaths, b->npaths + 1, sizeof *b->paths)) {
        free(p);
        return TP_ENOMEM;
    }
    b->paths[b->npaths] = p;
    *out = b->npaths++;
    return 0;
}

int tp__topo_fail(const struct tp__topo_build *b, struct tp__topo_pos at, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (at.path >= 0)
        return tp_error_set(b->err, TP_EUSAGE, "%s:%d:%d: %s: %s", b->file, at.line, at.col,
                            b->paths[at.path], msg);
    return tp_error_set(b->err, TP_EUSAGE, "%s:%d:%d: %s", b->file, at.line, at.col, msg);
}

int tp__topo_switch(struct tp__topo_build *b, const char *name, struct tp__topo_pos at, int rail,
                    bool leaf, unsigned link_speed, int *idx)
{
    size_t len = strlen(name), bad = strcspn(name, " \t[],=");
    if (!len)
        return tp__topo_fail(b, at, "a switch name is empty");
    if (len > TP_TOPOLOGY_NAME_MAX)
        return tp__topo_fail(b, at, "switch name '%.20s...' is longer than %d characters", name,
                             TP_TOPOLOGY_NAME_MAX);
    if (bad < len)
        return tp__topo_fail(b, at,
                             "switch name '%s' holds '%c': a switch is named by one name here, "
                             "not a hostlist",
                             name, name[bad]);
    int old = tp__topo_names_find(&b->sw_ix, name, sw_name_of, b);
    if (old >= 0)
        return tp__topo_fail(b, at, "switch %s is already defined at line %d", name,
                             b->sw[old].at.line);
    if (b->nsw >= TP_TOPOLOGY_MAX_SWITCHES)
        return tp__topo_fail(b, at, "more than %d switches", TP_TOPOLOGY_MAX_SWITCHES);
    int rc = grow(&b->sw, &b->capsw, b->nsw + 1, sizeof *b->sw);
    struct tp__topo_bsw s = {.at = at, .rail = rail, .link_speed = link_speed, .leaf = leaf};
    if (rc == 0)
        rc = pool_add(b, name, &s.name);
    if (rc == 0) {
        b->sw[b->nsw] = s;
        rc = tp__topo_names_add(&b->sw_ix, b->nsw, sw_name_of, b);
    }
    if (rc)
        return tp_error_set(b->err, rc, "%s: out of memory", b->file);
    *idx = b->nsw++;
    return 0;
}

/* ---- nodes ---- */

struct names_ctx {
    struct tp__topo_build *b;
    int sw; /* the leaf (nodes) or the switch naming the others (links) */
    struct tp__topo_pos at;
    bool up;
};

static struct tp__topo_pos at_item(const struct names_ctx *c, size_t off)
{
    struct tp__topo_pos at = c->at;
    if (c->b->offsets)
        at.col += (int)off;
    return at;
}

/* A new node called name, first given at at: its index in *n. */
static int new_node(struct tp__topo_build *b, const char *name, struct tp__topo_pos at, int *n)
{
    if (b->nnodes >= TP_TOPOLOGY_MAX_NODES)
        return tp__topo_fail(b, at, "more than %d nodes", TP_TOPOLOGY_MAX_NODES);
    if ((long long)(b->nnodes + 1) * b->nrails > MAX_ATTACH)
        return tp__topo_fail(b, at, "more than %d attachments of nodes to rails", MAX_ATTACH);
    int rc = 0;
    if (b->nnodes == b->capnodes) {
        int cap = b->capnodes ? 2 * b->capnodes : 256;
        size_t *node = realloc(b->node, (size_t)cap * sizeof *node);
        if (node)
            b->node = node;
        struct tp__topo_pos *node_at = realloc(b->node_at, (size_t)cap * sizeof *node_at);
        if (node_at)
            b->node_at = node_at;
        int *leaf = realloc(b->leaf, (size_t)cap * (size_t)b->nrails * sizeof *leaf);
        if (leaf)
            b->leaf = leaf;
        if (node && node_at && leaf)
            b->capnodes = cap;
        else
            rc = TP_ENOMEM;
    }
    if (rc == 0)
        rc = pool_add(b, name, &b->node[b->nnodes]);
    if (rc == 0) {
        b->node_at[b->nnodes] = at;
        for (int r = 0; r < b->nrails; r++)
            b->leaf[b->nnodes * b->nrails + r] = -1;
        rc = tp__topo_names_add(&b->node_ix, b->nnodes, node_name_of, b);
    }
    if (rc)
        return tp_error_set(b->err, rc, "%s: out of memory", b->file);
    *n = b->nnodes++;
    return 0;
}

static int on_node(void *user, const char *name, size_t off)
{
    const struct names_ctx *c = user;
    struct tp__topo_build *b = c->b;
    struct tp__topo_pos at = at_item(c, off);
    int n = tp__topo_names_find(&b->node_ix, name, node_name_of, b);
    if (n < 0 && b->closed)
        return tp__topo_fail(b, at, "node %s is not in the list of nodes (nodes:)", name);
    int rc = n < 0 ? new_node(b, name, at, &n) : 0;
    if (rc)
        return rc;
    const struct tp__topo_bsw *s = &b->sw[c->sw];
    int r0 = s->rail < 0 ? 0 : s->rail, r1 = s->rail < 0 ? b->nrails : s->rail + 1;
    for (int r = r0; r < r1; r++) {
        int *l = &b->leaf[n * b->nrails + r];
        if (*l == c->sw)
            return tp__topo_fail(b, at, "node %s is given twice under switch %s", name,
                                 sw_name_of(b, c->sw));
        if (*l >= 0 && b->nrails == 1)
            return tp__topo_fail(b, at,
                                 "node %s is already under switch %s (line %d): a node has one "
                                 "leaf switch",
                                 name, sw_name_of(b, *l), b->sw[*l].at.line);
        if (*l >= 0)
            return tp__topo_fail(b, at,
                                 "node %s is already under switch %s (line %d) on rail %d: a node "
                                 "has one leaf switch a rail",
                                 name, sw_name_of(b, *l), b->sw[*l].at.line, r);
        *l = c->sw;
    }
    return 0;
}

int tp__topo_each(struct tp__topo_build *b, const char *expr, struct tp__topo_pos at,
                  tp__topo_name_fn fn, void *user)
{
    struct tp__topo_hl_error e;
    int rc = tp__topo_hostlist(expr, TP_TOPOLOGY_MAX_NODES, fn, user, &e);
    if (rc == TP_EUSAGE && e.msg[0]) {
        if (b->offsets)
            at.col += (int)e.at;
        return tp__topo_fail(b, at, "bad hostlist '%s': %s", expr, e.msg);
    }
    if (rc == TP_ENOMEM)
        return tp_error_set(b->err, rc, "%s: out of memory", b->file);
    return rc;
}

int tp__topo_nodes(struct tp__topo_build *b, int sw, const char *expr, struct tp__topo_pos at)
{
    struct names_ctx c = {b, sw, at, false};
    return tp__topo_each(b, expr, at, on_node, &c);
}

static int on_listed(void *user, const char *name, size_t off)
{
    const struct names_ctx *c = user;
    struct tp__topo_pos at = at_item(c, off);
    int n = tp__topo_names_find(&c->b->node_ix, name, node_name_of, c->b);
    if (n >= 0)
        return tp__topo_fail(c->b, at, "node %s is listed twice", name);
    return new_node(c->b, name, at, &n);
}

int tp__topo_node_list(struct tp__topo_build *b, const char *expr, struct tp__topo_pos at)
{
    struct names_ctx c = {b, -1, at, false};
    int rc = tp__topo_each(b, expr, at, on_listed, &c);
    b->closed = true;
    return rc;
}

/* ---- links ---- */

static int on_link(void *user, const char *name, size_t off)
{
    const struct names_ctx *c = user;
    struct tp__topo_build *b = c->b;
    struct tp__topo_link l = {.sw = c->sw, .at = at_item(c, off), .up = c->up};
    int rc = grow(&b->link, &b->caplink, b->nlink + 1, sizeof *b->link);
    if (rc == 0)
        rc = pool_add(b, name, &l.ref);
    if (rc)
        return tp_error_set(b->err, rc, "%s: out of memory", b->file);
    b->link[b->nlink++] = l;
    return 0;
}

int tp__topo_links(struct tp__topo_build *b, int sw, const char *expr, struct tp__topo_pos at,
                   bool up)
{
    struct names_ctx c = {b, sw, at, up};
    return tp__topo_each(b, expr, at, on_link, &c);
}

/* ---- the whole ---- */

static int by_edge(const void *x, const void *y)
{
    const struct edge *a = x, *b = y;
    if (a->lower != b->lower)
        return a->lower < b->lower ? -1 : 1;
    if (a->upper != b->upper)
        return a->upper < b->upper ? -1 : 1;
    return (a->link > b->link) - (a->link < b->link);
}

/* Each link as an edge, in e (b->nlink of them): a name never defined
 * becomes a switch of its own when implicit. */
static int resolve(struct tp__topo_build *b, bool implicit, struct edge *e)
{
    for (int i = 0; i < b->nlink; i++) {
        const struct tp__topo_link *l = &b->link[i];
        char name[TP_TOPOLOGY_NAME_MAX + 1]; /* a copy: a new switch's name moves the pool */
        snprintf(name, sizeof name, "%s", b->pool + l->ref);
        int s = tp__topo_names_find(&b->sw_ix, name, sw_name_of, b);
        if (s < 0 && !implicit)
            return tp__topo_fail(b, l->at, "switch %s is never defined (no SwitchName=%s line)",
                                 name, name);
        if (s < 0) {
            int rc = tp__topo_switch(b, name, l->at, -1, false, 0, &s);
            if (rc)
                return rc;
        }
        if (s == l->sw)
            return tp__topo_fail(b, l->at, "switch %s names itself", name);
        e[i] = (struct edge){l->up ? l->sw : s, l->up ? s : l->sw, i};
        if (b->sw[e[i].upper].leaf)
            return tp__topo_fail(b, l->at,
                                 "switch %s has nodes, so no switch can be below it (%s is, here)",
                                 sw_name_of(b, e[i].upper), sw_name_of(b, e[i].lower));
    }
    qsort(e, (size_t)b->nlink, sizeof *e, by_edge);
    for (int i = 1; i < b->nlink; i++)
        if (e[i].lower == e[i - 1].lower && e[i].upper == e[i - 1].upper)
            return tp__topo_fail(b, b->link[e[i].link].at,
                                 "switch %s is below switch %s twice (first at line %d)",
                                 sw_name_of(b, e[i].lower), sw_name_of(b, e[i].upper),
                                 b->link[e[i - 1].link].at.line);
    return 0;
}

/* The link that puts lower directly below upper (the edges sorted). */
static const struct tp__topo_link *link_of(const struct tp__topo_build *b, const struct edge *e,
                                           int lower, int upper)
{
    struct edge key = {lower, upper, -1};
    int lo = 0, hi = b->nlink;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (by_edge(&e[mid], &key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return &b->link[e[lo].link];
}

static int by_upper(const void *x, const void *y)
{
    const struct edge *a = x, *b = y;
    if (a->upper != b->upper)
        return a->upper < b->upper ? -1 : 1;
    return (a->lower > b->lower) - (a->lower < b->lower);
}

/* Append s to out (cap bytes, len used), cut short rather than overflow. */
static void append(char *out, size_t cap, size_t *len, const char *s)
{
    while (*s && *len + 1 < cap)
        out[(*len)++] = *s++;
    out[*len] = '\0';
}

/* Switches that were never ordered are on or above a cycle: walk down
 * from one through switches never ordered until one comes back, and name
 * the cycle at the link that closes it. */
static int cycle(struct tp__topo_build *b, const struct edge *e, const int *level)
{
    size_t nsw = (size_t)b->nsw, ne = (size_t)b->nlink;
    int *step = malloc(nsw * sizeof *step), *path = malloc(nsw * sizeof *path);
    struct edge *down = malloc((ne ? ne : 1) * sizeof *down);
    if (!step || !path || !down) {
        free(step);
        free(path);
        free(down);
        return tp_error_set(b->err, TP_ENOMEM, "%s: out of memory", b->file);
    }
    memcpy(down, e, ne * sizeof *down);
    qsort(down, ne, sizeof *down, by_upper);
    for (int i = 0; i < b->nsw; i++)
        step[i] = -1;
    int s = 0, n = 0;
    while (level[s] >= 0)
        s++;
    while (step[s] < 0) {
        step[s] = n;
        path[n++] = s;
        /* a switch never ordered has a switch below it never ordered */
        size_t lo = 0, hi = ne;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (down[mid].upper < s)
                lo = mid + 1;
            else
                hi = mid;
        }
        while (level[down[lo].lower] >= 0)
            lo++;
        s = down[lo].lower;
    }
    char msg[300] = "";
    size_t len = 0;
    for (int i = step[s]; i < n; i++) {
        append(msg, sizeof msg, &len, sw_name_of(b, path[i]));
        append(msg, sizeof msg, &len, " > ");
    }
    append(msg, sizeof msg, &len, sw_name_of(b, s));
    const struct tp__topo_link *l = link_of(b, e, s, path[n - 1]);
    int rc = tp__topo_fail(b, l->at, "switches in a cycle (each above the next): %s", msg);
    free(step);
    free(path);
    free(down);
    return rc;
}

/* Levels from the leaves up, in order (bottom-up, each switch after every
 * switch below it); a switch left at -1 is on or above a cycle. */
static int levels(const struct tp__topo_build *b, const struct tp_topology *t, int *level,
                  int *order, int *nordered)
{
    int *below = calloc((size_t)b->nsw, sizeof *below), n = 0;
    if (!below)
        return tp_error_set(b->err, TP_ENOMEM, "%s: out of memory", b->file);
    for (int s = 0; s < b->nsw; s++)
        for (int k = 0; k < t->sw[s].nup; k++)
            below[t->sw[s].up[k]]++;
    for (int s = 0; s < b->nsw; s++) {
        level[s] = below[s] ? -1 : 0;
        if (!below[s])
            order[n++] = s;
    }
    for (int i = 0; i < n; i++) {
        const struct tp_topo_switch *w = &t->sw[order[i]];
        for (int k = 0; k < w->nup; k++) {
            int p = w->up[k];
            if (level[order[i]] + 1 > level[p])
                level[p] = level[order[i]] + 1;
            if (--below[p] == 0)
                order[n++] = p;
        }
    }
    /* a switch on a cycle kept a count above 0: its level stays unknown */
    for (int s = 0; s < b->nsw; s++)
        if (below[s] > 0)
            level[s] = -1;
    free(below);
    *nordered = n;
    return 0;
}

/* The YAML form: a switch that is not a leaf has something below it
 * (one given only as a name in up: always has). */
static int above_something(const struct tp__topo_build *b, const struct edge *e)
{
    bool *below = calloc((size_t)b->nsw, sizeof *below);
    if (!below)
        return tp_error_set(b->err, TP_ENOMEM, "%s: out of memory", b->file);
    for (int i = 0; i < b->nlink; i++)
        below[e[i].upper] = true;
    int rc = 0;
    for (int s = 0; rc == 0 && s < b->nsw; s++)
        if (!b->sw[s].leaf && !below[s])
            rc = tp__topo_fail(b, b->sw[s].at,
                               "switch %s has nothing below it: no leaf or switch names it in up:",
                               sw_name_of(b, s));
    free(below);
    return rc;
}

/* Every node has a leaf on every rail; there is a node. */
static int covered(const struct tp__topo_build *b)
{
    if (b->nnodes == 0)
        return tp__topo_fail(b, (struct tp__topo_pos){1, 1, -1},
                             "no nodes: no switch has any (a leaf lists them: Nodes= in "
                             "topology.conf, nodes: in the YAML form)");
    for (int n = 0; n < b->nnodes; n++) {
        int have = -1;
        for (int r = 0; r < b->nrails && have < 0; r++)
            if (b->leaf[n * b->nrails + r] >= 0)
                have = r;
        for (int r = 0; r < b->nrails; r++) {
            if (b->leaf[n * b->nrails + r] >= 0)
                continue;
            if (have < 0)
                return tp__topo_fail(b, b->node_at[n], "node %s is under no leaf switch",
                                     node_name_of(b, n));
            return tp__topo_fail(b, b->node_at[n],
                                 "node %s has no leaf switch on rail %d (it is under %s on rail "
                                 "%d): a node has one on every rail",
                                 node_name_of(b, n), r,
                                 sw_name_of(b, b->leaf[n * b->nrails + have]), have);
        }
    }
    return 0;
}

/* The struct with its switches and up lists (from the sorted edges). */
static struct tp_topology *make(struct tp__topo_build *b, const struct edge *e)
{
    struct tp_topology *t = calloc(1, sizeof *t);
    struct tp__topo_priv *p = t ? calloc(1, sizeof *p) : NULL;
    if (!p) {
        free(t);
        return NULL;
    }
    t->priv = p;
    t->sw = calloc((size_t)b->nsw, sizeof *t->sw);
    p->edges = malloc((size_t)(b->nlink ? b->nlink : 1) * sizeof *p->edges);
    t->node = malloc((size_t)b->nnodes * sizeof *t->node);
    if (!t->sw || !p->edges || !t->node) {
        tp_topology_free(t);
        return NULL;
    }
    t->nswitches = b->nsw;
    for (int s = 0; s < b->nsw; s++) {
        t->sw[s].rail = b->sw[s].rail;
        t->sw[s].link_speed = b->sw[s].link_speed;
        t->sw[s].up = p->edges;
    }
    for (int i = 0; i < b->nlink; i++) {
        p->edges[i] = e[i].upper;
        struct tp_topo_switch *w = &t->sw[e[i].lower];
        if (w->nup++ == 0)
            w->up = p->edges + i;
    }
    return t;
}

/* Freed here, where a read topology is made (a generated one too). */
void tp_topology_free(struct tp_topology *t)
{
    if (!t)
        return;
    struct tp__topo_priv *p = t->priv;
    if (p) {
        tp__topo_names_free(&p->node_ix);
        tp__topo_names_free(&p->sw_ix);
        free(p->pool);
        free(p->edges);
        free(p->anc_at);
        free(p->anc_n);
        free(p->anc);
        free(p);
    }
    free(t->node);
    free(t->leaf);
    free(t->sw);
    free(t);
}

/* Hand the names, the leaf table and the indexes over to t. */
static void take(struct tp__topo_build *b, struct tp_topology *t)
{
    struct tp__topo_priv *p = t->priv;
    p->pool = b->pool;
    for (int s = 0; s < b->nsw; s++)
        t->sw[s].name = p->pool + b->sw[s].name;
    for (int n = 0; n < b->nnodes; n++)
        t->node[n] = p->pool + b->node[n];
    t->nnodes = b->nnodes;
    t->nrails = b->nrails;
    t->leaf = b->leaf;
    p->node_ix = b->node_ix;
    p->sw_ix = b->sw_ix;
    b->pool = NULL;
    b->leaf = NULL;
    memset(&b->node_ix, 0, sizeof b->node_ix);
    memset(&b->sw_ix, 0, sizeof b->sw_ix);
}

/* Rails above the leaves: the rail every leaf below shares, else -1. */
static void rails(struct tp_topology *t, const int *order, int n)
{
    for (int s = 0; s < t->nswitches; s++)
        if (t->sw[s].level > 0)
            t->sw[s].rail = -2; /* none seen yet */
    for (int i = 0; i < n; i++) {
        const struct tp_topo_switch *w = &t->sw[order[i]];
        for (int k = 0; k < w->nup; k++) {
            int *r = &t->sw[w->up[k]].rail;
            *r = *r == -2 || *r == w->rail ? w->rail : -1;
        }
    }
}

int tp__topo_finish(struct tp__topo_build *b, bool implicit, struct tp_topology **out)
{
    *out = NULL;
    struct edge *e = malloc((size_t)(b->nlink ? b->nlink : 1) * sizeof *e);
    if (!e)
        return tp_error_set(b->err, TP_ENOMEM, "%s: out of memory", b->file);
    int rc = resolve(b, implicit, e);
    if (rc == 0 && implicit)
        rc = above_something(b, e);
    if (rc == 0)
        rc = covered(b);
    struct tp_topology *t = rc == 0 ? make(b, e) : NULL;
    int *level = t ? malloc((size_t)b->nsw * sizeof *level) : NULL;
    int *order = t ? malloc((size_t)b->nsw * sizeof *order) : NULL;
    if (rc == 0 && (!t || !level || !order))
        rc = tp_error_set(b->err, TP_ENOMEM, "%s: out of memory", b->file);
    int n = 0;
    if (rc == 0)
        rc = levels(b, t, level, order, &n);
    if (rc == 0 && n < b->nsw)
        rc = cycle(b, e, level);
    if (rc == 0) {
        for (int s = 0; s < b->nsw; s++) {
            t->sw[s].level = level[s];
            if (level[s] + 1 > t->nlevels)
                t->nlevels = level[s] + 1;
        }
        rails(t, order, n);
        take(b, t);
        /* top-down for the ancestors */
        for (int i = 0; i < n / 2; i++) {
            int x = order[i];
            order[i] = order[n - 1 - i];
            order[n - 1 - i] = x;
        }
        rc = tp__topo_ancestors(t, order, b->err, b->file);
    }
    free(level);
    free(order);
    free(e);
    if (rc) {
        tp_topology_free(t);
        return rc;
    }
    *out = t;
    return 0;
}
