/* The tcp source (include/tp/counters.h): this network namespace's TCP
 * counters, /proc/net/snmp's "Tcp:" group (RetransSegs, InErrs ...) and
 * /proc/net/netstat's "TcpExt:" (TCPLostRetransmit, TCPTimeouts ...),
 * each a header line of names and a line of values; device "Tcp" or
 * "TcpExt". The group's levels (RtoMin, CurrEstab ...) are marked so. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctr_int.h"

#define TEXT_MAX (1 << 16) /* /proc/net/netstat is about 4 KiB */

static bool is_level(const char *name)
{
    static const char *const levels[] = {"RtoAlgorithm", "RtoMin", "RtoMax", "MaxConn",
                                         "CurrEstab"};
    for (size_t i = 0; i < sizeof levels / sizeof *levels; i++)
        if (strcmp(name, levels[i]) == 0)
            return true;
    return false;
}

/* The group's two lines in text (names, then values), as counters. */
static int group(struct tp__ctr_ctx *c, char *text, const char *grp)
{
    size_t gl = strlen(grp);
    char *names = NULL, *ls = NULL;
    for (char *line = strtok_r(text, "\n", &ls); line; line = strtok_r(NULL, "\n", &ls)) {
        if (strncmp(line, grp, gl) != 0 || line[gl] != ':')
            continue;
        if (!names) {
            names = line + gl + 1;
            continue;
        }
        int rc = tp__ctr_dev(c, TP_CTR_TCP, grp);
        char *ns = NULL, *vs = NULL;
        for (char *nm = strtok_r(names, " ", &ns), *v = strtok_r(line + gl + 1, " ", &vs);
             nm && v && !rc; nm = strtok_r(NULL, " ", &ns), v = strtok_r(NULL, " ", &vs)) {
            if (*v == '-') /* MaxConn -1: no number to count */
                continue;
            char *end;
            unsigned long long x = strtoull(v, &end, 10);
            if (end != v)
                rc = tp__ctr_add(c, TP_CTR_TCP, grp, nm, x, is_level(nm));
        }
        return rc;
    }
    return 0;
}

static int read_tcp(struct tp__ctr_ctx *c)
{
    static const struct {
        const char *file, *grp;
    } files[] = {{"/proc/net/snmp", "Tcp"}, {"/proc/net/netstat", "TcpExt"}};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char p[2048];
        char *buf = malloc(TEXT_MAX);
        if (!buf)
            return tp_error_set(c->err, TP_ENOMEM, "counters: out of memory");
        int rc = 0;
        if (tp__ctr_path(c, p, sizeof p, "%s", files[i].file) &&
            tp_sysfs_read(p, buf, TEXT_MAX) > 0)
            rc = group(c, buf, files[i].grp);
        free(buf);
        if (rc)
            return rc;
    }
    return 0;
}

const struct tp__ctr_source tp__ctr_tcp = {TP_CTR_TCP, "tcp", read_tcp};
