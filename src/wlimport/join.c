/* The files of an import as a job (join_int.h).
 *
 * Files of one rank merge (a trace's steps, times and order; a log's
 * bytes where the trace has none): the rank's base is its first file with
 * times, and every other file must show the same collectives, step by step
 * or, for a log (all steps alike), each step as the log's step; each
 * figure the base lacks comes from the first file that has it.
 *
 * Files of several ranks (each says its rank: distributedInfo's, or a
 * log's init line) are lined up by step (ProfilerStep#N's N where every
 * file numbers its steps, each number once, else by order) and, within a
 * step, by process group and sequence: the k-th call on a group is the
 * same collective on every rank (NCCL's own rule), whatever the order
 * across groups and threads, so it must be of the same kind everywhere
 * (bytes may differ: an all-to-all's uneven splits, said). Their clocks are
 * aligned without trusting them: a collective ends at nearly the same
 * moment on every rank it joins, so a rank's offset is the median of its
 * collectives' work ends against the first rank's. The arrival skew of a
 * collective is then the last rank's call after the first's, and a step's
 * slowest rank the one most behind over its collectives. */
#include <stdlib.h>
#include <string.h>

#include "join_int.h"

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static struct tp_wlimport_part *copy_part(const struct tp_wlimport_part *p)
{
    struct tp_wlimport_part *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    *m = *p;
    m->steps = malloc((p->nsteps + 1) * sizeof *m->steps);
    m->colls = malloc((p->ncolls + 1) * sizeof *m->colls);
    m->groups = calloc(p->ngroups + 1, sizeof *m->groups);
    bool ok = m->steps && m->colls && m->groups;
    if (ok) {
        if (p->nsteps) /* (NULL arrays when empty: not for memcpy) */
            memcpy(m->steps, p->steps, p->nsteps * sizeof *m->steps);
        if (p->ncolls)
            memcpy(m->colls, p->colls, p->ncolls * sizeof *m->colls);
        for (size_t g = 0; g < p->ngroups; g++) {
            m->groups[g] = p->groups[g];
            m->groups[g].ranks = NULL;
            if (p->groups[g].nranks &&
                (m->groups[g].ranks = malloc(p->groups[g].nranks * sizeof(unsigned))))
                memcpy(m->groups[g].ranks, p->groups[g].ranks,
                       p->groups[g].nranks * sizeof(unsigned));
            else
                m->groups[g].nranks = 0;
        }
    } else {
        m->ngroups = 0;
        tp_wlimport_part_free(m);
        return NULL;
    }
    return m;
}

/* whether every step of f calls what its first step calls (a log) */
static bool all_alike(const struct tp_wlimport_part *f)
{
    for (size_t s = 1; s < f->nsteps; s++) {
        if (f->steps[s].n != f->steps[0].n)
            return false;
        for (size_t i = 0; i < f->steps[s].n; i++) {
            const struct tp_wlimport_coll *a = &f->colls[f->steps[0].first + i],
                                          *b = &f->colls[f->steps[s].first + i];
            if (a->kind != b->kind || a->bytes != b->bytes)
                return false;
        }
    }
    return true;
}

/* m's group for f's group g (added by name), -1 when g is -1 */
static int group_into(struct tp_wlimport_part *m, const struct tp_wlimport_part *f, int g)
{
    if (g < 0)
        return -1;
    int k = tp__wl_group(m, f->groups[g].name, strlen(f->groups[g].name), f->groups[g].desc);
    if (k >= 0 && !m->groups[k].size)
        m->groups[k].size = f->groups[g].size;
    return k;
}

/* whether m's step s calls f's step fs's kinds, in order */
static bool same_kinds(const struct tp_wlimport_part *m, size_t s, const struct tp_wlimport_part *f,
                       size_t fs)
{
    const struct tp_wlimport_step *a = &m->steps[s], *b = &f->steps[fs];
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (m->colls[a->first + i].kind != f->colls[b->first + i].kind)
            return false;
    return true;
}

/* leave m's steps out where keep[s] is false (their collectives too) */
static void keep_steps(struct tp_wlimport_part *m, const bool *keep)
{
    size_t ns = 0, nc = 0;
    for (size_t s = 0; s < m->nsteps; s++) {
        if (!keep[s])
            continue;
        struct tp_wlimport_step st = m->steps[s];
        memmove(&m->colls[nc], &m->colls[st.first], st.n * sizeof *m->colls);
        st.first = nc;
        nc += st.n;
        m->steps[ns++] = st;
    }
    m->skipped += (unsigned)(m->nsteps - ns);
    m->nsteps = ns;
    m->ncolls = nc;
}

/* fill what m lacks from f, step by step (f a log, all its steps alike:
 * each of m's steps as f's step, m's steps that call other kinds left out,
 * said); TP_EUSAGE when they differ */
static int fill(struct tp_wlimport_part *m, const char *mpath, const struct tp_wlimport_part *f,
                const char *fpath, bool *gave_bytes, json_t *warnings, tp_error *err)
{
    bool alike = all_alike(f);
    if (!alike && f->nsteps != m->nsteps)
        return tp_error_set(err, TP_EUSAGE,
                            "%s has %zu steps, %s %zu whose collectives are not all alike: not "
                            "the same job (or not the same rank)?",
                            mpath, m->nsteps, fpath, f->nsteps);
    if (alike && f->nsteps) { /* m's steps that are not the log's step */
        bool *keep = calloc(m->nsteps + 1, sizeof *keep);
        if (!keep)
            return tp_error_set(err, TP_ENOMEM, "out of memory");
        size_t kept = 0, first_out = SIZE_MAX;
        for (size_t s = 0; s < m->nsteps; s++) {
            keep[s] = same_kinds(m, s, f, 0);
            kept += keep[s];
            if (!keep[s] && first_out == SIZE_MAX)
                first_out = s;
        }
        if (kept == 0) {
            size_t n = m->nsteps ? m->steps[0].n : 0;
            free(keep);
            return tp_error_set(err, TP_EUSAGE,
                                "%s's steps call other collectives than %s's step (%zu a step "
                                "there, %zu in %s's first): not the same job (or not the same "
                                "rank)?",
                                mpath, fpath, f->steps[0].n, n, mpath);
        }
        if (kept < m->nsteps)
            tp__wlimport_warn(warnings, mpath, 0,
                              "%zu of %zu steps left out (the first: step %zu, %zu collectives): "
                              "they call other collectives than %s's step (%zu), which sizes the "
                              "rest (DDP's first step, before it rebuilds its buckets, is one)",
                              m->nsteps - kept, m->nsteps, first_out + 1, m->steps[first_out].n,
                              fpath, f->steps[0].n);
        keep_steps(m, keep);
        free(keep);
    }
    for (size_t s = 0; s < m->nsteps && f->nsteps; s++) {
        const struct tp_wlimport_step *ms = &m->steps[s], *fs = &f->steps[alike ? 0 : s];
        if (ms->n != fs->n)
            return tp_error_set(err, TP_EUSAGE,
                                "%s's step %zu has %zu collectives, %s's step has %zu: not the "
                                "same job (or not the same rank)?",
                                mpath, s + 1, ms->n, fpath, fs->n);
        for (size_t i = 0; i < ms->n; i++) {
            struct tp_wlimport_coll *a = &m->colls[ms->first + i];
            const struct tp_wlimport_coll *b = &f->colls[fs->first + i];
            if (a->kind != b->kind)
                return tp_error_set(err, TP_EUSAGE,
                                    "%s's step %zu calls %s as collective %zu, %s %s: not the "
                                    "same job (or not the same rank)?",
                                    mpath, s + 1, tp_wlimport_kind_name(a->kind), i + 1, fpath,
                                    tp_wlimport_kind_name(b->kind));
            if (a->bytes == TP_WL_UNSIZED && b->bytes != TP_WL_UNSIZED) {
                a->bytes = b->bytes;
                *gave_bytes = true;
            }
            if (!a->dtype)
                a->dtype = b->dtype;
            if (a->group < 0)
                a->group = group_into(m, f, b->group); /* -1 when out of memory */
            if (a->dur_ns == TP_WL_NONE && b->dur_ns != TP_WL_NONE && !alike) {
                a->start_ns = b->start_ns;
                a->dur_ns = b->dur_ns;
            }
        }
    }
    if (!m->world_size)
        m->world_size = f->world_size;
    if (m->rank < 0)
        m->rank = f->rank;
    if (!m->backend[0])
        snprintf(m->backend, sizeof m->backend, "%s", f->backend);
    if (!m->version[0])
        snprintf(m->version, sizeof m->version, "%s", f->version);
    return 0;
}

/* one rank from the files idx[0..n) */
static int merge(struct tp__wl_job *j, const size_t *idx, size_t n, struct tp__wl_rank *R,
                 json_t *warnings, tp_error *err)
{
    size_t base = idx[0];
    for (size_t k = 0; k < n; k++)
        if (j->parts[idx[k]]->timed) {
            base = idx[k];
            break;
        }
    R->times_file = j->parts[base]->timed ? base : SIZE_MAX;
    R->bytes_file = base;
    if (!(R->m = copy_part(j->parts[base])))
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    for (size_t k = 0; k < n; k++) {
        if (idx[k] == base)
            continue;
        bool gave = false;
        int rc =
            fill(R->m, j->paths[base], j->parts[idx[k]], j->paths[idx[k]], &gave, warnings, err);
        if (rc)
            return rc;
        if (gave)
            R->bytes_file = idx[k];
    }
    R->rank = R->m->rank;
    /* every collective sized */
    for (size_t s = 0; s < R->m->nsteps; s++)
        for (size_t i = 0; i < R->m->steps[s].n; i++) {
            const struct tp_wlimport_coll *c = &R->m->colls[R->m->steps[s].first + i];
            if (c->bytes == TP_WL_UNSIZED && c->kind != TP_WL_BARRIER)
                return tp_error_set(
                    err, TP_EUSAGE,
                    "%s: step %zu's collective %zu (%s) has no bytes in any file: the trace "
                    "records none for it (torch 1.13's CPU profiler records no sizes; a kernel, "
                    "record_param_comms or record_shapes=True gives them), and no NCCL log of "
                    "the same rank was merged (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL)",
                    j->paths[base], s + 1, i + 1, tp_wlimport_kind_name(c->kind));
        }
    return 0;
}

static int cmp_rank(const void *a, const void *b)
{
    const struct tp__wl_rank *x = a, *y = b;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* group the files by rank: *ranks of them, idx[file] the rank's slot */
static int by_rank(struct tp__wl_job *j, size_t *slot, size_t *nslots, tp_error *err)
{
    int *known = malloc((j->nparts + 1) * sizeof *known);
    size_t nk = 0, unsaid = SIZE_MAX;
    if (!known)
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    for (size_t i = 0; i < j->nparts; i++) {
        int r = j->parts[i]->rank;
        if (r < 0) {
            unsaid = unsaid == SIZE_MAX ? i : unsaid;
            continue;
        }
        bool seen = false;
        for (size_t k = 0; k < nk && !seen; k++)
            seen = known[k] == r;
        if (!seen)
            known[nk++] = r;
    }
    if (nk > 1 && unsaid != SIZE_MAX) {
        free(known);
        return tp_error_set(err, TP_EUSAGE,
                            "%s does not say its rank, while the other files are of %zu ranks: "
                            "with files of several ranks, each must say its rank (a trace's "
                            "distributedInfo, a log's 'comm ... rank R nranks N' line)",
                            j->paths[unsaid], nk);
    }
    *nslots = nk ? nk : 1;
    for (size_t i = 0; i < j->nparts; i++) {
        slot[i] = 0;
        for (size_t k = 0; k < nk; k++)
            if (known[k] == j->parts[i]->rank)
                slot[i] = k;
    }
    free(known);
    return 0;
}

/* the steps every rank has: by ProfilerStep#N where all number theirs */
static int align(struct tp__wl_job *j, json_t *warnings, tp_error *err)
{
    bool ids = j->nranks > 1; /* one rank: its steps as they are */
    size_t nmin = SIZE_MAX;
    for (size_t r = 0; r < j->nranks; r++) {
        const struct tp_wlimport_part *m = j->ranks[r].m;
        nmin = m->nsteps < nmin ? m->nsteps : nmin;
        for (size_t s = 0; s < m->nsteps; s++) /* numbered, each number once (ascending) */
            ids = ids && m->steps[s].id >= 0 && (s == 0 || m->steps[s].id > m->steps[s - 1].id);
        if (!(j->ranks[r].steps = calloc(m->nsteps + 1, sizeof(size_t))))
            return tp_error_set(err, TP_ENOMEM, "out of memory");
    }
    const struct tp_wlimport_part *m0 = j->ranks[0].m;
    size_t *at = malloc(j->nranks * sizeof *at);
    if (!at)
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    j->nsteps = 0;
    for (size_t s = 0; s < m0->nsteps; s++) {
        bool everywhere = true;
        for (size_t r = 0; r < j->nranks && everywhere; r++) {
            const struct tp_wlimport_part *m = j->ranks[r].m;
            if (!ids) {
                everywhere = s < nmin;
                at[r] = s;
                continue;
            }
            everywhere = false;
            for (size_t t = 0; t < m->nsteps && !everywhere; t++)
                if (m->steps[t].id == m0->steps[s].id) {
                    everywhere = true;
                    at[r] = t;
                }
        }
        if (!everywhere)
            continue;
        for (size_t r = 0; r < j->nranks; r++)
            j->ranks[r].steps[j->nsteps] = at[r];
        j->nsteps++;
    }
    free(at);
    for (size_t r = 0; r < j->nranks && j->nranks > 1; r++)
        if (j->ranks[r].m->nsteps > j->nsteps)
            tp__wlimport_warn(
                warnings,
                j->paths[j->ranks[r].times_file == SIZE_MAX ? j->ranks[r].bytes_file
                                                            : j->ranks[r].times_file],
                0, "%zu of rank %d's %zu steps are not in every rank's files: left out",
                j->ranks[r].m->nsteps - j->nsteps, j->ranks[r].rank, j->ranks[r].m->nsteps);
    if (j->nsteps == 0)
        return tp_error_set(err, TP_EUSAGE,
                            "the files of ranks %d and %d share no step (ProfilerStep#N): not "
                            "profiled over the same steps",
                            j->ranks[0].rank, j->ranks[j->nranks - 1].rank);
    /* collective by collective: the k-th call on a group is the same
     * collective on every rank (NCCL's rule: a communicator's calls come in
     * one order everywhere), whatever the order across groups and threads */
    size_t total = 0;
    if (!(j->at = calloc(j->nsteps + 1, sizeof *j->at)))
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    for (size_t s = 0; s < j->nsteps; s++) {
        j->at[s] = total;
        total += m0->steps[j->ranks[0].steps[s]].n;
    }
    j->at[j->nsteps] = total;
    for (size_t r = 0; r < j->nranks; r++)
        if (!(j->ranks[r].order = calloc(total + 1, sizeof(size_t))))
            return tp_error_set(err, TP_ENOMEM, "out of memory");
    for (size_t s = 0; s < j->nsteps; s++) {
        const struct tp_wlimport_step *a = &m0->steps[j->ranks[0].steps[s]];
        for (size_t i = 0; i < a->n; i++)
            j->ranks[0].order[j->at[s] + i] = i;
        for (size_t r = 1; r < j->nranks; r++) {
            const struct tp_wlimport_part *m = j->ranks[r].m;
            const struct tp_wlimport_step *b = &m->steps[j->ranks[r].steps[s]];
            size_t fr = j->ranks[r].times_file == SIZE_MAX ? j->ranks[r].bytes_file
                                                           : j->ranks[r].times_file;
            if (a->n != b->n)
                return tp_error_set(err, TP_EUSAGE,
                                    "rank %d's step %zu makes %zu collectives, rank %d's %zu (%s): "
                                    "ranks that call other collectives (pipeline stages?) are "
                                    "imported apart",
                                    j->ranks[0].rank, s + 1, a->n, j->ranks[r].rank, b->n,
                                    j->paths[fr]);
            bool *used = calloc(b->n + 1, sizeof *used);
            if (!used)
                return tp_error_set(err, TP_ENOMEM, "out of memory");
            size_t from = 0; /* the first unused of rank r's */
            for (size_t i = 0; i < a->n; i++) {
                const struct tp_wlimport_coll *x = &m0->colls[a->first + i];
                /* without groups in the files, each kind taken for a group */
                const char *g =
                    x->group >= 0 ? m0->groups[x->group].name : tp_wlimport_kind_name(x->kind);
                while (from < b->n && used[from])
                    from++;
                size_t k = from;
                for (; k < b->n; k++) {
                    const struct tp_wlimport_coll *y = &m->colls[b->first + k];
                    if (!used[k] && strcmp(y->group >= 0 ? m->groups[y->group].name
                                                         : tp_wlimport_kind_name(y->kind),
                                           g) == 0)
                        break;
                }
                const struct tp_wlimport_coll *y = k < b->n ? &m->colls[b->first + k] : NULL;
                if (!y || x->kind != y->kind) {
                    free(used);
                    return tp_error_set(
                        err, TP_EUSAGE,
                        "step %zu: rank %d's call %zu on group '%s' is %s, rank %d's (%s) is %s: "
                        "ranks that call other collectives on a group are imported apart",
                        s + 1, j->ranks[0].rank, i + 1, g, tp_wlimport_kind_name(x->kind),
                        j->ranks[r].rank, j->paths[fr],
                        y ? tp_wlimport_kind_name(y->kind) : "missing");
                }
                used[k] = true;
                j->ranks[r].order[j->at[s] + i] = k;
                j->uneven += x->bytes != y->bytes;
            }
            free(used);
        }
    }
    if (j->uneven)
        tp__wlimport_warn(warnings, j->paths[0], 0,
                          "%zu collectives move other bytes on other ranks (uneven all-to-all "
                          "splits?): the first rank's bytes kept in the layout",
                          j->uneven);
    return 0;
}

const struct tp_wlimport_step *tp__wl_step_of(const struct tp__wl_job *j, size_t r, size_t s)
{
    return &j->ranks[r].m->steps[j->ranks[r].steps[s]];
}

const struct tp_wlimport_coll *tp__wl_coll_of(const struct tp__wl_job *j, size_t r, size_t s,
                                              size_t i)
{
    const struct tp_wlimport_step *st = tp__wl_step_of(j, r, s);
    return &j->ranks[r].m->colls[st->first + j->ranks[r].order[j->at[s] + i]];
}

/* the work's end of rank r's collective i of step s, on its own clock */
static int64_t work_end(const struct tp__wl_job *j, size_t r, size_t s, size_t i)
{
    const struct tp_wlimport_coll *c = tp__wl_coll_of(j, r, s, i);
    return c->dur_ns == TP_WL_NONE ? TP_WL_NONE
                                   : tp__wl_step_of(j, r, s)->t0_ns + c->start_ns + c->dur_ns;
}

static int64_t ready_at(const struct tp__wl_job *j, size_t r, size_t s, size_t i)
{
    return tp__wl_step_of(j, r, s)->t0_ns + tp__wl_coll_of(j, r, s, i)->ready_ns -
           j->ranks[r].offset_ns;
}

static int skew(struct tp__wl_job *j, tp_error *err)
{
    const struct tp_wlimport_part *m0 = j->ranks[0].m;
    size_t total = 0;
    for (size_t s = 0; s < j->nsteps; s++)
        total += m0->steps[j->ranks[0].steps[s]].n;
    int64_t *d = malloc((total + 1) * sizeof *d);
    j->arrival_ns = calloc(total + 1, sizeof *j->arrival_ns);
    j->slowest = calloc(j->nsteps + 1, sizeof *j->slowest);
    if (!d || !j->arrival_ns || !j->slowest) {
        free(d);
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    }
    j->offsets_measured = j->worked;
    for (size_t r = 1; r < j->nranks && j->worked; r++) {
        size_t n = 0;
        for (size_t s = 0; s < j->nsteps; s++)
            for (size_t i = 0; i < m0->steps[j->ranks[0].steps[s]].n; i++) {
                int64_t a = work_end(j, r, s, i), b = work_end(j, 0, s, i);
                if (a != TP_WL_NONE && b != TP_WL_NONE)
                    d[n++] = a - b;
            }
        qsort(d, n, sizeof *d, cmp_i64);
        j->ranks[r].offset_ns = n ? d[(n - 1) / 2] : 0; /* the lower median */
        j->offsets_measured = j->offsets_measured && n > 0;
    }
    size_t at = 0;
    for (size_t s = 0; s < j->nsteps; s++) {
        size_t n = m0->steps[j->ranks[0].steps[s]].n;
        double *behind = calloc(j->nranks, sizeof *behind);
        if (!behind) {
            free(d);
            return tp_error_set(err, TP_ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < n; i++, at++) {
            int64_t lo = INT64_MAX, hi = INT64_MIN;
            for (size_t r = 0; r < j->nranks; r++) {
                int64_t t = ready_at(j, r, s, i);
                lo = t < lo ? t : lo;
                hi = t > hi ? t : hi;
            }
            j->arrival_ns[at] = hi - lo;
            for (size_t r = 0; r < j->nranks; r++)
                behind[r] += (double)(ready_at(j, r, s, i) - lo);
        }
        if (n == 0) /* no collective: the rank whose compute ended last */
            for (size_t r = 0; r < j->nranks; r++) {
                const struct tp_wlimport_step *st = &j->ranks[r].m->steps[j->ranks[r].steps[s]];
                behind[r] =
                    (double)(st->t0_ns + st->forward_ns + st->backward_ns - j->ranks[r].offset_ns);
            }
        size_t worst = 0;
        for (size_t r = 1; r < j->nranks; r++)
            if (behind[r] > behind[worst])
                worst = r;
        j->slowest[s] = j->ranks[worst].rank;
        free(behind);
    }
    free(d);
    return 0;
}

int tp__wl_join(struct tp__wl_job *j, const struct tp_wlimport_opts *o, json_t *warnings,
                tp_error *err)
{
    (void)o;
    size_t *slot = calloc(j->nparts, sizeof *slot), nslots = 0;
    size_t *idx = calloc(j->nparts, sizeof *idx);
    int rc = slot && idx ? 0 : tp_error_set(err, TP_ENOMEM, "out of memory");
    if (rc == 0)
        rc = by_rank(j, slot, &nslots, err);
    if (rc == 0 && !(j->ranks = calloc(nslots, sizeof *j->ranks)))
        rc = tp_error_set(err, TP_ENOMEM, "out of memory");
    for (size_t k = 0; rc == 0 && k < nslots; k++) {
        size_t n = 0;
        for (size_t i = 0; i < j->nparts; i++)
            if (slot[i] == k)
                idx[n++] = i;
        rc = merge(j, idx, n, &j->ranks[k], warnings, err);
        j->nranks = k + 1;
    }
    free(slot);
    free(idx);
    if (rc)
        return rc;
    qsort(j->ranks, j->nranks, sizeof *j->ranks, cmp_rank);
    j->timed = true;
    j->worked = false;
    for (size_t r = 0; r < j->nranks; r++) {
        const struct tp_wlimport_part *m = j->ranks[r].m;
        j->timed = j->timed && m->timed;
        for (size_t i = 0; i < m->ncolls; i++)
            j->worked = j->worked || m->colls[i].dur_ns != TP_WL_NONE;
    }
    j->worked = j->worked && j->timed;
    if (j->nranks > 1 && !j->timed)
        return tp_error_set(err, TP_EUSAGE,
                            "files of %zu ranks, but rank %d's have no times: ranks are lined "
                            "up by their traces (an NCCL log alone cannot be)",
                            j->nranks, j->ranks[0].m->timed ? j->ranks[1].rank : j->ranks[0].rank);
    rc = align(j, warnings, err);
    if (rc == 0 && j->nranks > 1)
        rc = skew(j, err);
    if (rc == 0 && j->nranks > 1 && !j->offsets_measured)
        tp__wlimport_warn(warnings, j->paths[0], 0,
                          "no collective has its work in every rank's trace: the ranks' clocks "
                          "are taken as they are (the arrival skew holds only as far as they "
                          "agree)");
    return rc;
}

void tp__wl_job_free(struct tp__wl_job *j)
{
    for (size_t r = 0; r < j->nranks; r++) {
        tp_wlimport_part_free(j->ranks[r].m);
        free(j->ranks[r].steps);
        free(j->ranks[r].order);
    }
    free(j->at);
    for (size_t i = 0; j->parts && i < j->nparts; i++)
        tp_wlimport_part_free(j->parts[i]);
    free(j->parts);
    free(j->ranks);
    free(j->arrival_ns);
    free(j->slowest);
    memset(j, 0, sizeof *j);
}
