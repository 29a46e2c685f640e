/* The control of the tier's rounds across an allocation (docs/fleet.md,
 * "Every node accounted for"): rank 0 holds the triage, plans each round
 * and tells every node its own part of it (tp_boot_scatter); the nodes run
 * their tests, and the figures go back to rank 0 alone (a barrier, then
 * tp_boot_gather). A round's control bytes are so O(N) in all, not N²: a
 * node gets what its next round needs, not every node's result.
 *
 * A deputy (the lowest rank after 0 not lost) follows rank 0's triage: its
 * part carries the rounds' records it has not had yet (each round's
 * figures and lost nodes, one line each; the whole log when a new deputy
 * takes over), which it records into a triage of its own in the same
 * order. When rank 0 is lost, the deputy has every round up to the one in
 * which it was lost, and writes the fleet document in its place
 * (alloc.c).
 *
 * A part, one line: "R ROUND STAGE NPAIRS DEPUTY TI PAIR POS N LEAD
 * [MEMBERS...]" (TI -1: no test this round; PAIR -1: a group test; the
 * members listed when N <= MEMBERS_MAX or to the lead alone), or "E" after
 * the last round; then the records (roster.c) of the nodes the node
 * meets in the round ("P ..." lines: its partner; its group's lead, and
 * its members when listed), so that no node needs every node's address;
 * a new deputy's then a line "A" and every node's record ("N ..."); and
 * the deputy's "F K FIG... L M NODE... T SECONDS" lines, K the round's
 * tests' figures ("%.17g": the same doubles again), the M nodes lost in
 * it and its wall time as rank 0 measured it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validate_int.h"

/* A group's members are listed to every member up to this size; above it
 * to its lead alone (a gang round's one group is every node). */
#define MEMBERS_MAX 64

struct tp__validate_rounds {
    int n;
    const struct tp__validate_ctx *c;
    struct tp__validate_node *nodes; /* what this node knows of the others */
    int deputy;     /* rank 0: the rank it made deputy (0: none left) */
    bool rostered;  /* rank 0: whether that deputy has every node's record */
    bool am_deputy; /* the other ranks: whether rank 0 made this one its deputy */
    bool *local_lost; /* the nodes lost in their own tests, for a later deputy */
    tp_triage *tri;   /* a later deputy's triage, made as it took over */
    char *pending;    /* its part, until then */
    int synced;     /* rank 0: records the deputy has had */
    int recorded;   /* the deputy: records replayed into its triage */
    char **log;     /* rank 0: each round's record line */
    int nlog, cap;
    int round;
    const struct tp_triage_round *rd; /* rank 0: the round under way */
    double t0, took;                  /* rank 0: when it began; how long the last took */
    /* what the rounds' control cost rank 0 on the wire (tp_boot_bytes):
     * at the first round's start, in all since, the most one round took */
    uint64_t sent0, received0, sent, received, round_sent_max, round_received_max;
    int rounds;
    double *figure;
    bool *lost;
};

struct tp__validate_rounds *tp__validate_rounds_new(const struct tp__validate_ctx *c,
                                                    struct tp__validate_node *nodes, int n, int me,
                                                    int deputy)
{
    struct tp__validate_rounds *rs = calloc(1, sizeof *rs);
    if (!rs)
        return NULL;
    rs->n = n;
    rs->c = c;
    rs->nodes = nodes;
    rs->deputy = deputy; /* the meeting's, told every record, until rank 0 says otherwise */
    rs->rostered = deputy != 0;
    rs->am_deputy = me != 0 && deputy == me;
    rs->figure = malloc(sizeof *rs->figure * (size_t)(n / 2 + 1));
    rs->lost = calloc((size_t)n, sizeof *rs->lost);
    if (!rs->figure || !rs->lost) {
        tp__validate_rounds_free(rs);
        return NULL;
    }
    return rs;
}

void tp__validate_rounds_free(struct tp__validate_rounds *rs)
{
    if (!rs)
        return;
    for (int i = 0; i < rs->nlog; i++)
        free(rs->log[i]);
    free(rs->log);
    free(rs->figure);
    free(rs->lost);
    free(rs->local_lost);
    free(rs->pending);
    tp_triage_free(rs->tri);
    free(rs);
}

int tp__validate_rounds_local_lost(struct tp__validate_rounds *rs, const bool *lost, tp_error *err)
{
    if (!rs->local_lost && !(rs->local_lost = malloc(sizeof *lost * (size_t)rs->n)))
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    memcpy(rs->local_lost, lost, sizeof *lost * (size_t)rs->n);
    return 0;
}

tp_triage *tp__validate_rounds_take_triage(struct tp__validate_rounds *rs)
{
    tp_triage *t = rs->tri;
    rs->tri = NULL;
    return t;
}

bool tp__validate_rounds_deputy(const struct tp__validate_rounds *rs)
{
    return rs && rs->am_deputy;
}

/* ---- rank 0 ---- */

/* The lowest rank after 0 not left out; 0 when none is. */
static int pick_deputy(const struct tp_boot *ctl)
{
    for (int r = 1; r < tp_boot_size(ctl); r++)
        if (!tp_boot_gone(ctl, r))
            return r;
    return 0;
}

/* The text an open_memstream f wrote into *text (NULL, freed, when
 * writing it failed). */
static char *finish(FILE *f, char **text)
{
    bool bad = ferror(f);
    fclose(f); /* sets *text */
    if (bad) {
        free(*text);
        *text = NULL;
    }
    return *text;
}

/* Where each node is in round rd: its test (-1: none), its place in it
 * and its index among the pair tests (-1: a group's), in one pass over
 * the tests. */
struct where {
    int ti, pos, pair;
};

static void where_of(const struct tp_triage_round *rd, int n, struct where *w)
{
    for (int v = 0; v < n; v++)
        w[v] = (struct where){-1, -1, -1};
    for (int i = 0, p = 0; i < rd->ntests; i++) {
        const struct tp_triage_test *t = &rd->tests[i];
        for (int m = 0; m < t->n; m++)
            if (t->nodes[m] >= 0 && t->nodes[m] < n)
                w[t->nodes[m]] = (struct where){i, m, t->group ? -1 : p};
        p += !t->group;
    }
}

/* Node v's part of round rd (round number k), deputy or not, w where it
 * is in it, with the records of the nodes it meets in it. */
static char *part_of(const struct tp__validate_rounds *rs, const struct tp_triage_round *rd, int k,
                     int v, const struct where *w, int deputy, int npairs)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    fprintf(f, "R %d %d %d %d %d %d %d", k, (int)rd->stage, npairs, deputy, w->ti, w->pair, w->pos);
    if (w->ti >= 0) {
        const struct tp_triage_test *t = &rd->tests[w->ti];
        fprintf(f, " %d %d", t->n, t->nodes[0]);
        bool listed = t->n <= MEMBERS_MAX || w->pos == 0;
        if (listed)
            for (int m = 0; m < t->n; m++)
                fprintf(f, " %d", t->nodes[m]);
        for (int m = 0; m < t->n; m++) /* its partner, its lead, the members listed */
            if (t->nodes[m] != v && t->nodes[m] >= 0 && t->nodes[m] < rs->n &&
                (listed || m == 0))
                tp__validate_roster_line(f, rs->nodes, t->nodes[m], false);
    }
    return finish(f, &text);
}

/* The deputy's catching up: every node's record when it has not had
 * them, and the record lines from rs->synced on. */
static char *with_log(struct tp__validate_rounds *rs, char *part)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = part ? open_memstream(&text, &len) : NULL;
    if (!f) {
        free(part);
        return NULL;
    }
    fputs(part, f);
    if (!rs->rostered)
        fputs("\nA", f); /* every node's record follows */
    for (int r = 0; !rs->rostered && r < rs->n; r++)
        tp__validate_roster_line(f, rs->nodes, r, true);
    for (int i = rs->synced; i < rs->nlog; i++)
        fprintf(f, "\n%s", rs->log[i]);
    free(part);
    return finish(f, &text);
}

/* Rank 0: plan the next round (or say the end) and send every node its
 * part. */
static int send_parts(struct tp__validate_rounds *rs, struct tp_boot *ctl, tp_triage *tri,
                      char **mine, tp_error *err)
{
    int n = rs->n;
    rs->rd = tp_triage_next(tri);
    int deputy = pick_deputy(ctl);
    if (deputy != rs->deputy) { /* a new deputy: every record, the whole log */
        rs->synced = 0;
        rs->rostered = false;
    }
    rs->deputy = deputy;
    char **parts = calloc((size_t)n, sizeof *parts);
    struct where *w = rs->rd ? malloc(sizeof *w * (size_t)n) : NULL;
    if (!parts || (rs->rd && !w)) {
        free(parts);
        free(w);
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    }
    int npairs = 0;
    for (int i = 0; rs->rd && i < rs->rd->ntests; i++)
        npairs += !rs->rd->tests[i].group;
    if (rs->rd)
        where_of(rs->rd, n, w);
    bool nomem = false;
    for (int r = 0; r < n && !nomem; r++) {
        if (tp_boot_gone(ctl, r))
            continue;
        parts[r] = rs->rd ? part_of(rs, rs->rd, rs->round + 1, r, &w[r], r == deputy, npairs)
                          : strdup("E");
        if (parts[r] && r == deputy)
            parts[r] = with_log(rs, parts[r]);
        nomem = !parts[r];
    }
    int rc = nomem ? tp_error_set(err, TP_ENOMEM, "out of memory")
                   : tp_boot_scatter(ctl, parts, mine, err);
    if (rc == 0 && deputy) {
        rs->synced = rs->nlog;
        rs->rostered = true;
    }
    for (int r = 0; r < n; r++)
        free(parts[r]);
    free(parts);
    free(w);
    return rc;
}

/* Rank 0: the round's record line, into the log. */
static int log_round(struct tp__validate_rounds *rs, int ntests, tp_error *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    int nlost = 0;
    for (int r = 0; r < rs->n; r++)
        nlost += rs->lost[r];
    fprintf(f, "F %d", ntests);
    for (int i = 0; i < ntests; i++)
        fprintf(f, " %.17g", rs->figure[i]);
    fprintf(f, " L %d", nlost);
    for (int r = 0; r < rs->n; r++)
        if (rs->lost[r])
            fprintf(f, " %d", r);
    fprintf(f, " T %.17g", rs->took);
    if (!finish(f, &text))
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    if (rs->nlog == rs->cap) {
        int cap = rs->cap ? 2 * rs->cap : 64;
        char **grown = realloc(rs->log, sizeof *grown * (size_t)cap);
        if (!grown) {
            free(text);
            return tp_error_set(err, TP_ENOMEM, "out of memory");
        }
        rs->log = grown;
        rs->cap = cap;
    }
    rs->log[rs->nlog++] = text;
    return 0;
}

/* The round's figures from every node's "TEST KIND VALUE" words (NULL: a
 * node left out, no word). */
static void combine(char **all, int n, int ntests, double *figure)
{
    double *bw = calloc((size_t)ntests, sizeof *bw), *lat = calloc((size_t)ntests, sizeof *lat);
    bool *failed = calloc((size_t)ntests, sizeof *failed);
    for (int i = 0; i < ntests; i++)
        figure[i] = NAN;
    for (int r = 0; bw && lat && failed && r < n; r++) {
        int ti;
        char kind;
        double v;
        if (!all[r] || sscanf(all[r], "%d %c %lf", &ti, &kind, &v) != 3 || ti < 0 || ti >= ntests)
            continue;
        if (kind == 'F')
            failed[ti] = true;
        else if (kind == 'b')
            bw[ti] = fmax(bw[ti], v);
        else if (kind == 'l')
            lat[ti] = fmax(lat[ti], v);
        else if (kind == 'g')
            bw[ti] = v;
    }
    for (int i = 0; bw && lat && failed && i < ntests; i++)
        if (!failed[i])
            figure[i] = bw[i] > 0 ? bw[i] : lat[i] > 0 ? lat[i] : NAN;
    free(bw);
    free(lat);
    free(failed);
}

/* ---- every node ---- */

/* The deputy: one record line into its triage, as rank 0 recorded it. */
static int replay(struct tp__validate_rounds *rs, tp_triage *tri, const char *line, tp_error *err)
{
    const struct tp_triage_round *rd = tp_triage_next(tri);
    int ntests, nlost, used;
    if (!rd || sscanf(line, "F %d%n", &ntests, &used) != 1 || ntests != rd->ntests)
        return tp_error_set(err, TP_EPROTO,
                            "the deputy's triage does not follow rank 0's at round %d",
                            rs->recorded + 1);
    line += used;
    for (int i = 0; i < ntests; i++) {
        char *end;
        rs->figure[i] = strtod(line, &end);
        if (end == line)
            return tp_error_set(err, TP_EPROTO, "rank 0's record of round %d is cut short",
                                rs->recorded + 1);
        line = end;
    }
    memset(rs->lost, 0, sizeof *rs->lost * (size_t)rs->n);
    if (sscanf(line, " L %d%n", &nlost, &used) != 1)
        return tp_error_set(err, TP_EPROTO, "rank 0's record of round %d has no lost list",
                            rs->recorded + 1);
    line += used;
    for (int k = 0; k < nlost; k++) {
        int r;
        if (sscanf(line, " %d%n", &r, &used) != 1 || r < 0 || r >= rs->n)
            return tp_error_set(err, TP_EPROTO, "rank 0's record of round %d: a bad lost node",
                                rs->recorded + 1);
        rs->lost[r] = true;
        line += used;
    }
    double took;
    if (sscanf(line, " T %lf", &took) != 1)
        return tp_error_set(err, TP_EPROTO, "rank 0's record of round %d has no duration",
                            rs->recorded + 1);
    int rc = tp_triage_record(tri, rs->figure, rs->lost, err);
    if (rc == 0)
        rc = tp_triage_round_took(tri, took, err);
    rs->recorded += rc == 0;
    return rc;
}

/* The deputy: every record line ("F ...") of a part into tri. */
static int replay_all(struct tp__validate_rounds *rs, tp_triage *tri, const char *part,
                      tp_error *err)
{
    int rc = 0;
    for (const char *line = part ? strchr(part, '\n') : NULL; rc == 0 && line;
         line = strchr(line, '\n'))
        if (*++line == 'F')
            rc = tri ? replay(rs, tri, line, err)
                     : tp_error_set(err, TP_EPROTO, "rank 0 sent its records to a node without a "
                                    "triage");
    return rc;
}

/* A part's first line into p. */
static int parse_part(const char *text, struct tp__validate_part *p, tp_error *err)
{
    int stage, used, lead;
    *p = (struct tp__validate_part){.ti = -1, .pos = -1, .pair = -1};
    if (text[0] == 'E' && (text[1] == 0 || text[1] == '\n')) {
        p->end = true;
        return 0;
    }
    if (sscanf(text, "R %d %d %d %d %d %d %d%n", &p->round, &stage, &p->npairs, &p->deputy, &p->ti,
               &p->pair, &p->pos, &used) != 7 ||
        stage < 0 || stage >= TP_TRIAGE_NSTAGES)
        return tp_error_set(err, TP_EPROTO, "rank 0 sent a broken part of a round: %.60s", text);
    p->stage = (enum tp_triage_stage)stage;
    if (p->ti < 0)
        return 0;
    text += used;
    if (sscanf(text, " %d %d%n", &p->t.n, &lead, &used) != 2 || p->t.n < 2 || p->pos < 0 ||
        p->pos >= p->t.n)
        return tp_error_set(err, TP_EPROTO, "rank 0 sent a broken test in round %d", p->round);
    text += used;
    p->t.group = p->pair < 0;
    p->lead = lead;
    int want = p->t.n;
    if (!(p->t.nodes = calloc((size_t)want, sizeof *p->t.nodes)))
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    int k = 0;
    while (k < want && sscanf(text, " %d%n", &p->t.nodes[k], &used) == 1) {
        text += used;
        k++;
    }
    p->listed = k == want;
    if (!p->listed && k > 0)
        return tp_error_set(err, TP_EPROTO, "rank 0 sent %d of a test's %d nodes", k, want);
    p->t.nodes[0] = lead;
    return 0;
}

void tp__validate_part_free(struct tp__validate_part *p)
{
    free(p->t.nodes);
    p->t.nodes = NULL;
}

int tp__validate_round_next(struct tp__validate_rounds *rs, struct tp_boot *ctl, tp_triage *tri,
                            struct tp__validate_part *p, tp_error *err)
{
    char *mine = NULL;
    int me = tp_boot_rank(ctl);
    *p = (struct tp__validate_part){.ti = -1};
    rs->t0 = tp__validate_now_s();
    if (me == 0 && rs->rounds == 0 && rs->round == 0)
        tp_boot_bytes(ctl, &rs->sent0, &rs->received0);
    int rc =
        me == 0 ? send_parts(rs, ctl, tri, &mine, err) : tp_boot_scatter(ctl, NULL, &mine, err);
    if (rc == 0)
        rc = parse_part(mine, p, err);
    if (rc == 0 && me != 0 && !p->end)
        rs->am_deputy = p->deputy;
    /* the records of the nodes this one meets; a new deputy's, every one */
    bool all = false;
    if (rc == 0 && me != 0)
        rc = tp__validate_roster_read(mine, rs->nodes, rs->n, NULL, err);
    for (const char *line = mine ? strchr(mine, '\n') : NULL; rc == 0 && line && !all;
         line = strchr(line + 1, '\n'))
        all = line[1] == 'A' && (line[2] == '\n' || line[2] == 0);
    if (rc == 0 && !p->end)
        rs->round = p->round;
    /* a deputy without a triage (not the meeting's): its caller makes one
     * (tp__validate_rounds_adopt), which then takes rank 0's records */
    if (rc == 0 && me != 0 && !tri && !rs->tri && rs->am_deputy && all) {
        p->needs_triage = true;
        free(rs->pending);
        rs->pending = mine;
        return 0;
    }
    rc = rc ? rc : replay_all(rs, tri ? tri : rs->tri, mine, err);
    free(mine);
    return rc;
}

int tp__validate_rounds_adopt(struct tp__validate_rounds *rs, tp_triage *tri, tp_error *err)
{
    rs->tri = tri;
    int rc = rs->local_lost
                 ? tp__validate_lose(tri, rs->n, TP__VALIDATE_LOCAL, rs->local_lost, err)
                 : 0;
    if (rc == 0)
        rc = replay_all(rs, tri, rs->pending, err);
    free(rs->pending);
    rs->pending = NULL;
    return rc;
}

int tp__validate_round_end(struct tp__validate_rounds *rs, struct tp_boot *ctl, tp_triage *tri,
                           const char *mine, tp_error *err)
{
    /* a barrier first: the silent are found by one deadline for all of
     * them (the gather after reads one rank after another) */
    int n = rs->n, rc = tp_boot_barrier(ctl, err);
    char **all = NULL;
    if (rc == 0)
        rc = tp_boot_gather(ctl, mine, &all, err);
    if (rc || tp_boot_rank(ctl) != 0)
        return rc;
    int ntests = rs->rd->ntests;
    for (int r = 0; r < n; r++)
        rs->lost[r] = !all[r];
    combine(all, n, ntests, rs->figure);
    tp_boot_free_strings(all, n);
    /* its measured wall time weighs the isolation's rounds in the
     * decision to evict or isolate (tp_triage_round_took) */
    rs->took = fmax(tp__validate_now_s() - rs->t0, 1e-6);
    uint64_t sent, received;
    tp_boot_bytes(ctl, &sent, &received);
    sent -= rs->sent0;
    received -= rs->received0;
    if (sent - rs->sent > rs->round_sent_max)
        rs->round_sent_max = sent - rs->sent;
    if (received - rs->received > rs->round_received_max)
        rs->round_received_max = received - rs->received;
    rs->sent = sent;
    rs->received = received;
    rs->rounds++;
    rc = log_round(rs, ntests, err);
    if (rc == 0)
        rc = tp_triage_record(tri, rs->figure, rs->lost, err);
    return rc ? rc : tp_triage_round_took(tri, rs->took, err);
}

json_t *tp__validate_rounds_bytes(const struct tp__validate_rounds *rs)
{
    double k = rs->rounds > 0 ? rs->rounds : 1;
    return json_pack("{s:i, s:i, s:I, s:I, s:f, s:f, s:I, s:I, s:I, s:I}", "nodes", rs->n, "rounds",
                     rs->rounds, "bytes_sent", (json_int_t)rs->sent, "bytes_received",
                     (json_int_t)rs->received, "bytes_sent_per_round", (double)rs->sent / k,
                     "bytes_received_per_round", (double)rs->received / k, "bytes_sent_round_max",
                     (json_int_t)rs->round_sent_max, "bytes_received_round_max",
                     (json_int_t)rs->round_received_max, "bytes_sent_before", (json_int_t)rs->sent0,
                     "bytes_received_before", (json_int_t)rs->received0);
}
