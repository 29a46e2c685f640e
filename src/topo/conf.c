/* Slurm's topology.conf, as topology.conf(5) documents the topology/tree
 * plugin's lines:
 *
 *     SwitchName=NAME [Switches=HOSTLIST] [Nodes=HOSTLIST] [LinkSpeed=N]
 *
 * Keys in any case, "#" to the end of the line a comment; a value as
 * Slurm's parser takes it (spaces around '=' allowed, double quotes around
 * a value with spaces); a switch with Nodes= is a leaf, the switches named
 * in Switches= are directly below it (Slurm refuses a switch with both, and
 * so does this). What Slurm reads in other ways is refused by name rather
 * than misread: the block and ring plugins' lines, Include, escapes and
 * continued lines. Every message names FILE:LINE:COL and the key. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "topo_int.h"

enum { K_NAME, K_SWITCHES, K_NODES, K_SPEED, NKEYS };

static const char *const key_names[NKEYS] = {"SwitchName", "Switches", "Nodes", "LinkSpeed"};

/* Lines of other plugins and directives: what to say instead of reading them. */
static const struct {
    const char *key, *says;
} refused[] = {
    {"BlockName", "the topology/block plugin's lines are not read"},
    {"BlockSizes", "the topology/block plugin's lines are not read"},
    {"RingName", "the topology/ring plugin's lines are not read"},
};

struct token {
    int key; /* K_*, or -1 */
    int kcol, vcol;
    const char *kname; /* as written, NUL-terminated in the work copy */
    char *value;
};

struct conf {
    struct tp__topo_build b;
    int path[NKEYS]; /* the keys as key paths for messages */
    int line;
};

static struct tp__topo_pos at(const struct conf *c, int col, int key)
{
    return (struct tp__topo_pos){c->line, col, key < 0 ? -1 : c->path[key]};
}

/* Bytes that have no place in a text file: the first one's place. */
static int text_only(struct conf *c, const char *buf, size_t len)
{
    int line = 1, col = 1;
    for (size_t i = 0; i < len; i++, col++) {
        unsigned char ch = (unsigned char)buf[i];
        if (ch == '\n') {
            line++;
            col = 0;
        } else if ((ch < 0x20 && ch != '\t' && ch != '\r') || ch >= 0x7f) {
            c->line = line;
            return tp__topo_fail(&c->b, at(c, col, -1),
                                 "byte 0x%02x: topology.conf is ASCII text (is this the file?)",
                                 ch);
        }
    }
    return 0;
}

static int key_of(const char *name)
{
    for (int k = 0; k < NKEYS; k++)
        if (strcasecmp(name, key_names[k]) == 0)
            return k;
    return -1;
}

/* Split line (NUL-terminated, the comment cut off) into KEY=VALUE tokens,
 * NUL-terminating keys and values in place. */
static int tokens(struct conf *c, char *line, struct token *tok, int cap, int *n)
{
    *n = 0;
    for (size_t i = 0;;) {
        while (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')
            i++;
        if (!line[i])
            return 0;
        size_t k0 = i;
        while (isalnum((unsigned char)line[i]) || line[i] == '_' || line[i] == '.')
            i++;
        size_t k1 = i;
        while (line[i] == ' ' || line[i] == '\t')
            i++;
        if (line[i] && strchr("+-*/", line[i]) && line[i + 1] == '=' && k1 > k0)
            return tp__topo_fail(&c->b, at(c, (int)i + 1, -1),
                                 "'%c=' changes a value in slurm.conf; topology.conf sets one: "
                                 "write '='",
                                 line[i]);
        if (k1 == k0 || line[i] != '=') {
            size_t end = k0 + strcspn(line + k0, " \t\r");
            return tp__topo_fail(&c->b, at(c, (int)k0 + 1, -1), "expected KEY=VALUE, found '%.*s'",
                                 (int)(end - k0 > 40 ? 40 : end - k0), line + k0);
        }
        if (*n == cap)
            return tp__topo_fail(&c->b, at(c, (int)k0 + 1, -1), "more than %d keys on a line", cap);
        struct token *t = &tok[(*n)++];
        t->kcol = (int)k0 + 1;
        i++;
        while (line[i] == ' ' || line[i] == '\t')
            i++;
        t->vcol = (int)i + 1;
        size_t v0 = i, v1;
        if (line[i] == '"') {
            char *q = strchr(line + i + 1, '"');
            if (!q)
                return tp__topo_fail(&c->b, at(c, (int)i + 1, -1), "'\"' is not closed");
            v0 = i + 1;
            v1 = (size_t)(q - line);
            i = v1 + 1;
            t->vcol++;
            if (line[i] && line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
                return tp__topo_fail(&c->b, at(c, (int)i + 1, -1),
                                     "'%c' after a quoted value: a space comes first", line[i]);
        } else {
            v1 = i + strcspn(line + i, " \t\r");
            i = v1;
        }
        bool more = line[i] != '\0';
        line[k1] = '\0';
        t->kname = line + k0;
        t->key = key_of(t->kname);
        if (v1 == v0)
            return tp__topo_fail(&c->b, at(c, t->kcol, -1), "%s= needs a value", t->kname);
        line[v1] = '\0';
        t->value = line + v0;
        if (more)
            i++;
    }
}

/* What the first key of a line says it is: a switch, or what is refused. */
static int first_key(struct conf *c, const struct token *t)
{
    if (t->key == K_NAME)
        return 0;
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        if (strcasecmp(t->kname, refused[i].key) == 0)
            return tp__topo_fail(&c->b, at(c, t->kcol, -1),
                                 "%s=: %s; trainpath reads the topology/tree plugin's SwitchName= "
                                 "lines (docs/topology.md)",
                                 t->kname, refused[i].says);
    if (t->key >= 0)
        return tp__topo_fail(&c->b, at(c, t->kcol, -1),
                             "a line starts with SwitchName=NAME (found %s= first)", t->kname);
    return tp__topo_fail(&c->b, at(c, t->kcol, -1),
                         "unknown key '%s' (topology.conf's keys: SwitchName, Switches, Nodes, "
                         "LinkSpeed)",
                         t->kname);
}

static int link_speed(struct conf *c, const struct token *t, unsigned *v)
{
    size_t n = strlen(t->value);
    if (n == 0 || n > 10 || strspn(t->value, "0123456789") != n ||
        strtoull(t->value, NULL, 10) > 4294967295ull)
        return tp__topo_fail(&c->b, at(c, t->vcol, K_SPEED),
                             "'%s' is not a whole number from 0 to 4294967295", t->value);
    *v = (unsigned)strtoull(t->value, NULL, 10);
    return 0;
}

/* One SwitchName line of n tokens. */
static int switch_line(struct conf *c, const struct token *tok, int n)
{
    const struct token *given[NKEYS] = {0};
    for (int i = 0; i < n; i++) {
        const struct token *t = &tok[i];
        int rc = i == 0 ? first_key(c, t) : 0;
        if (rc)
            return rc;
        if (t->key < 0)
            return tp__topo_fail(&c->b, at(c, t->kcol, -1),
                                 "unknown key '%s' on a SwitchName line (known: Switches, Nodes, "
                                 "LinkSpeed)",
                                 t->kname);
        if (given[t->key])
            return tp__topo_fail(
                &c->b, at(c, t->kcol, t->key), "given twice on this line (first at column %d)%s",
                given[t->key]->kcol, t->key == K_NAME ? ": one switch a line" : "");
        given[t->key] = t;
    }
    const struct token *nodes = given[K_NODES], *below = given[K_SWITCHES];
    if (nodes && below) {
        const struct token *later = nodes->kcol > below->kcol ? nodes : below;
        return tp__topo_fail(&c->b, at(c, later->kcol, later->key),
                             "a switch has Nodes= (a leaf) or Switches= (the switches below it), "
                             "not both: Slurm refuses it too");
    }
    unsigned speed = 0;
    int rc = given[K_SPEED] ? link_speed(c, given[K_SPEED], &speed) : 0, sw = -1;
    if (rc == 0)
        rc = tp__topo_switch(&c->b, given[K_NAME]->value, at(c, given[K_NAME]->vcol, K_NAME), -1,
                             nodes != NULL, speed, &sw);
    if (rc == 0 && nodes)
        rc = tp__topo_nodes(&c->b, sw, nodes->value, at(c, nodes->vcol, K_NODES));
    if (rc == 0 && below)
        rc = tp__topo_links(&c->b, sw, below->value, at(c, below->vcol, K_SWITCHES), false);
    return rc;
}

/* One line (NUL-terminated, writable). */
static int one_line(struct conf *c, char *line)
{
    line[strcspn(line, "#")] = '\0';
    char *bs = strchr(line, '\\');
    if (bs)
        return tp__topo_fail(&c->b, at(c, (int)(bs - line) + 1, -1),
                             "'\\': escapes and continued lines are not read here; write a switch "
                             "on one line");
    size_t lead = strspn(line, " \t");
    if (strncasecmp(line + lead, "include", 7) == 0 &&
        (line[lead + 7] == ' ' || line[lead + 7] == '\t'))
        return tp__topo_fail(&c->b, at(c, (int)lead + 1, -1),
                             "Include lines are not followed: put the switches in this file");
    struct token tok[16];
    int n, rc = tokens(c, line, tok, 16, &n);
    if (rc == 0 && n > 0)
        rc = switch_line(c, tok, n);
    return rc;
}

int tp__topo_read_conf(const char *file, const char *buf, size_t len, struct tp_topology **out,
                       tp_error *err)
{
    struct conf c = {.line = 1};
    tp__topo_build_init(&c.b, file, err);
    c.b.offsets = true;
    int rc = text_only(&c, buf, len);
    for (int k = 0; rc == 0 && k < NKEYS; k++)
        rc = tp__topo_path(&c.b, key_names[k], &c.path[k]);
    char *work = rc == 0 ? strdup(buf) : NULL;
    if (rc == 0 && !work)
        rc = TP_ENOMEM;
    for (char *line = work; rc == 0 && line; c.line++) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        rc = one_line(&c, line);
        line = nl ? nl + 1 : NULL;
    }
    free(work);
    if (rc == TP_ENOMEM)
        rc = tp_error_set(err, rc, "%s: out of memory", file);
    if (rc == 0)
        rc = tp__topo_finish(&c.b, false, out);
    tp__topo_build_free(&c.b);
    return rc;
}
