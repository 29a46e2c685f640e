/* The topology module's front door (include/tp/topology.h): a file read
 * by the reader its content asks for (KEY=VALUE on its first line that is
 * not blank or a comment: Slurm's topology.conf; else the YAML form), the
 * lookups by name, and the names of a generated topology. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tp/file.h"
#include "topo_int.h"

/* Whether the first line of buf that is not blank or a comment is
 * KEY=VALUE (a key as Slurm's parser takes it: letters, digits, '_', '.';
 * spaces and an operator before '=') or Slurm's "Include FILE". False for
 * an empty file (*none set). */
static bool conf_syntax(const char *buf, bool *none)
{
    const char *p = buf;
    *none = false;
    for (;;) {
        p += strspn(p, " \t\r\n");
        if (*p == '#') {
            p += strcspn(p, "\n");
            continue;
        }
        break;
    }
    if (!*p) {
        *none = true;
        return false;
    }
    size_t key = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.");
    if (key == 7 && strncasecmp(p, "include", 7) == 0 && (p[7] == ' ' || p[7] == '\t'))
        return true; /* Slurm's Include directive: the conf reader says it is not followed */
    if (!key)
        return false;
    p += key;
    p += strspn(p, " \t");
    if (*p && strchr("+-*/", *p))
        p++;
    return *p == '=';
}

int tp_topology_load(const char *path, struct tp_topology **out, tp_error *err)
{
    *out = NULL;
    if (!path || !*path)
        return tp_error_set(err, TP_EUSAGE, "topology file: no path given");
    char *buf = NULL;
    size_t len = 0;
    int rc =
        tp_file_read(path, "a topology file", TP_FILE_MAX_CONFIG, TP_FILE_REGULAR, &buf, &len, err);
    if (rc)
        return rc;
    bool none;
    if (conf_syntax(buf, &none))
        rc = tp__topo_read_conf(path, buf, len, out, err);
    else if (none && strlen(buf) == len)
        rc = tp_error_set(err, TP_EUSAGE,
                          "%s:1:1: empty: no switches (topology.conf has SwitchName= lines, the "
                          "YAML form leaves:)",
                          path);
    else
        rc = tp__topo_read_yaml(path, out, err);
    free(buf);
    return rc;
}

/* A generated name: prefix, then a number below n in plain decimal (no
 * sign, no leading zero). The number, or -1. */
static int numbered(const char *name, const char *prefix, int n)
{
    size_t k = strlen(prefix);
    if (strncmp(name, prefix, k) != 0)
        return -1;
    const char *d = name + k;
    size_t digits = strspn(d, "0123456789");
    if (!digits || d[digits] || digits > 9 || (d[0] == '0' && digits > 1))
        return -1;
    long v = strtol(d, NULL, 10);
    return v < n ? (int)v : -1;
}

static const char *node_of(const void *ctx, int i)
{
    const struct tp_topology *t = ctx;
    return t->node[i];
}

static const char *switch_of(const void *ctx, int i)
{
    const struct tp_topology *t = ctx;
    return t->sw[i].name;
}

int tp_topology_node(const struct tp_topology *t, const char *name)
{
    if (!t || !name)
        return -1;
    if (!t->node)
        return numbered(name, "node", t->nnodes);
    return tp__topo_names_find(&t->priv->node_ix, name, node_of, t);
}

int tp_topology_switch(const struct tp_topology *t, const char *name)
{
    if (!t || !name)
        return -1;
    if (!t->node) {
        int nleaves = t->priv->nleaves, s = numbered(name, "leaf", nleaves);
        if (s < 0 && (s = numbered(name, "spine", t->nswitches - nleaves)) >= 0)
            s += nleaves;
        return s;
    }
    return tp__topo_names_find(&t->priv->sw_ix, name, switch_of, t);
}

const char *tp_topology_node_name(const struct tp_topology *t, int i, char *buf, size_t cap)
{
    if (!t || i < 0 || i >= t->nnodes)
        return "";
    if (t->node)
        return t->node[i];
    snprintf(buf, cap, "node%d", i);
    return buf;
}

const char *tp_topology_switch_name(const struct tp_topology *t, int i, char *buf, size_t cap)
{
    if (!t || i < 0 || i >= t->nswitches)
        return "";
    if (t->sw[i].name)
        return t->sw[i].name;
    int nleaves = t->priv->nleaves;
    if (i < nleaves)
        snprintf(buf, cap, "leaf%d", i);
    else
        snprintf(buf, cap, "spine%d", i - nleaves);
    return buf;
}
