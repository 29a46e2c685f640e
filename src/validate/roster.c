/* What a node of an allocation knows of the others. Rank 0 knows every
 * node (the group is lean: each rank is told its own host and rank 0's,
 * tp_boot_opts.lean); it names them (their labels), and tells each node
 * its own label, rank 0's record, and in each round's part the records of
 * the nodes it meets (rounds.c). The deputy gets every record once, to
 * follow rank 0's triage and write the fleet document in its place. So
 * the nodes' meeting costs O(N) bytes out of rank 0, not an allgather's
 * N².
 *
 * A record, one line: "N RANK MISSING ADDR PORT CPORT TPORT SCHED LABEL"
 * ("-" for an empty field; a label has no blank: path_safe), or a
 * partner's, what a test with it needs: "P RANK ADDR PORT CPORT LABEL". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validate_int.h"

/* A label as a path component: only [A-Za-z0-9._#-]. */
static void path_safe(char *s)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '.' || *s == '_' || *s == '#' || *s == '-'))
            *s = '_';
}

static int by_host(const void *x, const void *y, void *b)
{
    int p = *(const int *)x, q = *(const int *)y;
    int c = strcmp(tp_boot_host(b, p), tp_boot_host(b, q));
    return c ? c : (p > q) - (p < q);
}

int tp__validate_label_all(struct tp_boot *b, struct tp__validate_node *nodes, tp_error *err)
{
    int n = tp_boot_size(b);
    int *order = malloc(sizeof *order * (size_t)n);
    if (!order)
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    for (int r = 0; r < n; r++)
        order[r] = r;
    qsort_r(order, (size_t)n, sizeof *order, by_host, b);
    for (int i = 0; i < n; i++) {
        int r = order[i];
        const char *host = tp_boot_host(b, r);
        bool shared = (i > 0 && strcmp(tp_boot_host(b, order[i - 1]), host) == 0) ||
                      (i + 1 < n && strcmp(tp_boot_host(b, order[i + 1]), host) == 0);
        if (nodes[r].missing)
            snprintf(nodes[r].label, sizeof nodes[r].label, "rank%d", r);
        else if (shared)
            snprintf(nodes[r].label, sizeof nodes[r].label, "%.200s#%d", host, r);
        else
            snprintf(nodes[r].label, sizeof nodes[r].label, "%.200s", host);
        path_safe(nodes[r].label);
    }
    free(order);
    return 0;
}

static const char *or_dash(const char *s)
{
    return s[0] ? s : "-";
}

void tp__validate_roster_line(FILE *f, const struct tp__validate_node *nodes, int r, bool whole)
{
    const struct tp__validate_node *v = &nodes[r];
    if (whole)
        fprintf(f, "\nN %d %d %s %s %s %s %s %s", r, v->missing, or_dash(v->addr), or_dash(v->port),
                or_dash(v->cport), or_dash(v->tport), or_dash(v->sched), or_dash(v->label));
    else
        fprintf(f, "\nP %d %s %s %s %s", r, or_dash(v->addr), or_dash(v->port), or_dash(v->cport),
                or_dash(v->label));
}

/* field into out (cap bytes), "-" read as empty */
static void field(char *out, size_t cap, const char *s)
{
    snprintf(out, cap, "%s", strcmp(s, "-") == 0 ? "" : s);
}

int tp__validate_roster_read(const char *text, struct tp__validate_node *nodes, int n, int *count,
                             tp_error *err)
{
    int k = 0;
    for (const char *line = text; line; line = strchr(line, '\n')) {
        if (*line == '\n')
            line++;
        bool whole = line[0] == 'N';
        if ((line[0] != 'N' && line[0] != 'P') || line[1] != ' ')
            continue;
        int r, missing = 0;
        char addr[64], port[16], cport[16], tport[16] = "-", sched[128] = "-", label[280];
        if ((whole
                 ? sscanf(line, "N %d %d %63s %15s %15s %15s %127s %279s", &r, &missing, addr, port,
                          cport, tport, sched, label) != 8
                 : sscanf(line, "P %d %63s %15s %15s %279s", &r, addr, port, cport, label) != 5) ||
            r < 0 || r >= n)
            return tp_error_set(err, TP_EPROTO, "rank 0 sent a broken record of a node: %.60s",
                                line);
        struct tp__validate_node *v = &nodes[r];
        field(v->addr, sizeof v->addr, addr);
        field(v->port, sizeof v->port, port);
        field(v->cport, sizeof v->cport, cport);
        field(v->label, sizeof v->label, label);
        if (whole) {
            v->missing = missing != 0;
            field(v->tport, sizeof v->tport, tport);
            field(v->sched, sizeof v->sched, sched);
        }
        k++;
    }
    if (count)
        *count = k;
    return 0;
}
