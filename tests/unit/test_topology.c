/* The topology module (include/tp/topology.h): real topology.conf syntax
 * (Slurm's own examples and a file with every way a line may be written)
 * and the YAML form, each compared with its hand-expanded expectation
 * beside it (tests/fixtures/topology/, SOURCES.md there) both in the struct
 * and in the JSON; the path facts worked out by hand on each shape; a
 * topology.conf of 4096 nodes written here by printf and checked by
 * arithmetic; every kind of bad input with the FILE:LINE:COL it must
 * name; the generated fat tree and rail-optimised shapes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp/topology.h"
#include "tp_test.h"

#define FIX TP_SOURCE_ROOT "/tests/fixtures/topology/"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    return tp_test_mkdtemp(dir, sizeof dir, "tp_topology");
}

static int teardown(void **state)
{
    (void)state;
    return tp_test_rmtree(dir);
}

static struct tp_topology *load_ok(const char *path)
{
    tp_error err = {0};
    struct tp_topology *t = NULL;
    int rc = tp_topology_load(path, &t, &err);
    if (rc != 0 || !t)
        fail_msg("%s: rc %d: %s", path, rc, err.msg);
    return t;
}

/* ---- the expectation files ---- */

static int by_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* names (n of them, the array sorted in place) joined by spaces into out. */
static void joined(char **names, int n, char *out, size_t cap)
{
    qsort(names, (size_t)n, sizeof *names, by_str);
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < n && len < cap; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? " " : "", names[i]);
}

/* What the test itself sees below switch s: the nodes with a rail on it
 * (a leaf) or the switches with s in their up list. */
static void members(const struct tp_topology *t, int s, char *out, size_t cap)
{
    char **names = calloc((size_t)(t->nnodes + t->nswitches), sizeof *names);
    char buf[64];
    int n = 0;
    assert_non_null(names);
    if (t->sw[s].level == 0) {
        for (int i = 0; i < t->nnodes; i++) {
            bool on = false;
            for (int r = 0; r < t->nrails; r++)
                on |= t->leaf[i * t->nrails + r] == s;
            if (on)
                names[n++] = strdup(tp_topology_node_name(t, i, buf, sizeof buf));
        }
    } else {
        for (int c = 0; c < t->nswitches; c++)
            for (int k = 0; k < t->sw[c].nup; k++)
                if (t->sw[c].up[k] == s)
                    names[n++] = strdup(tp_topology_switch_name(t, c, buf, sizeof buf));
    }
    joined(names, n, out, cap);
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* The JSON's list key of switch object o, joined sorted. */
static void json_members(const json_t *o, const char *key, char *out, size_t cap)
{
    const json_t *a = json_object_get(o, key);
    if (!json_is_array(a))
        fail_msg("switch %s: no array \"%s\"", json_string_value(json_object_get(o, "name")), key);
    size_t n = json_array_size(a);
    char **names = calloc(n + 1, sizeof *names);
    for (size_t i = 0; i < n; i++)
        names[i] = (char *)json_string_value(json_array_get(a, i));
    joined(names, (int)n, out, cap);
    free(names);
}

static const json_t *json_switch(const json_t *doc, const char *name)
{
    const json_t *sw = json_object_get(doc, "switches"), *o;
    size_t i;
    json_array_foreach(sw, i, o)
    {
        if (strcmp(json_string_value(json_object_get(o, "name")), name) == 0)
            return o;
    }
    fail_msg("the JSON has no switch %s", name);
    return NULL;
}

/* Compare t, and its JSON, with the expectation file path (SOURCES.md
 * says its format). */
static void expect(const struct tp_topology *t, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("cannot open %s", path);
    json_t *doc = tp_topology_json(t);
    assert_non_null(doc);
    static char line[16384], want[16384], got[16384];
    int nsw = 0, per_level[2] = {0, 0}, nodes = -1;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *save = NULL, *word = strtok_r(line, " ", &save);
        if (!word || word[0] == '#')
            continue;
        if (strcmp(word, "nodes") == 0) {
            nodes = atoi(strtok_r(NULL, " ", &save));
            TP_EQ_INT(t->nnodes, nodes);
            TP_EQ_INT(json_integer_value(json_object_get(doc, "nodes")), nodes);
        } else if (strcmp(word, "rails") == 0) {
            int r = atoi(strtok_r(NULL, " ", &save));
            TP_EQ_INT(t->nrails, r);
            TP_EQ_INT(json_integer_value(json_object_get(doc, "rails")), r);
        } else if (strcmp(word, "levels") == 0) {
            int l = atoi(strtok_r(NULL, " ", &save));
            TP_EQ_INT(t->nlevels, l);
            TP_EQ_INT(json_integer_value(json_object_get(doc, "levels")), l);
        } else if (strcmp(word, "order") == 0) {
            int i = 0;
            for (char *n; (n = strtok_r(NULL, " ", &save)); i++)
                if (tp_topology_node(t, n) != i)
                    fail_msg("%s: node %s is %d, expected %d", path, n, tp_topology_node(t, n), i);
            TP_EQ_INT(i, nodes); /* the expectation agrees with itself */
        } else if (strcmp(word, "switch") == 0) {
            const char *name = strtok_r(NULL, " ", &save);
            int level = atoi(strtok_r(NULL, " ", &save)), rail = atoi(strtok_r(NULL, " ", &save));
            long speed = atol(strtok_r(NULL, " ", &save));
            assert_string_equal(strtok_r(NULL, " ", &save), ":");
            char *names[4096];
            int n = 0;
            for (char *m; n < 4096 && (m = strtok_r(NULL, " ", &save));)
                names[n++] = m;
            joined(names, n, want, sizeof want);
            int s = tp_topology_switch(t, name);
            if (s < 0)
                fail_msg("%s: no switch %s", path, name);
            TP_EQ_INT(t->sw[s].level, level);
            TP_EQ_INT(t->sw[s].rail, rail);
            TP_EQ_INT(t->sw[s].link_speed, speed);
            members(t, s, got, sizeof got);
            if (strcmp(got, want) != 0)
                fail_msg("%s: below %s: \"%s\", expected \"%s\"", path, name, got, want);
            const json_t *o = json_switch(doc, name);
            TP_EQ_INT(json_integer_value(json_object_get(o, "level")), level);
            TP_EQ_INT(json_is_integer(json_object_get(o, "rail"))
                          ? json_integer_value(json_object_get(o, "rail"))
                          : -1,
                      rail);
            TP_EQ_INT(json_integer_value(json_object_get(o, "link_speed")), speed);
            json_members(o, level == 0 ? "nodes" : "switches", got, sizeof got);
            if (strcmp(got, want) != 0)
                fail_msg("%s: JSON below %s: \"%s\", expected \"%s\"", path, name, got, want);
            nsw++;
            if (level < 2)
                per_level[level]++;
        } else {
            fail_msg("%s: what is '%s'?", path, word);
        }
    }
    fclose(f);
    TP_EQ_INT(t->nswitches, nsw);
    TP_EQ_INT(json_array_size(json_object_get(doc, "switches")), nsw);
    TP_EQ_INT(json_integer_value(json_object_get(doc, "leaves")), per_level[0]);
    TP_EQ_INT(json_integer_value(json_object_get(doc, "spines")), per_level[1]);
    json_decref(doc);
}

static void fixture(const char *name, const char *ext)
{
    char path[512], exp[512];
    snprintf(path, sizeof path, FIX "%s.%s", name, ext);
    snprintf(exp, sizeof exp, FIX "%s.expect", name);
    struct tp_topology *t = load_ok(path);
    expect(t, exp);
    tp_topology_free(t);
}

static void fixtures(void **state)
{
    (void)state;
    fixture("slurm-man", "conf");
    fixture("slurm-guide-tree", "conf");
    fixture("slurm-guide-spines", "conf");
    fixture("syntax", "conf");
    fixture("halls", "conf");
    fixture("rails", "yaml");
    fixture("clos", "yaml");
}

/* ---- path facts, worked out by hand on each shape ---- */

static int node(const struct tp_topology *t, const char *name)
{
    int n = tp_topology_node(t, name);
    if (n < 0)
        fail_msg("no node %s", name);
    return n;
}

/* The uplinks of a and b on rail, as "lower>upper lower>upper ...". */
static const char *uplinks(const struct tp_topology *t, const char *a, const char *b, int rail)
{
    static char out[1024];
    struct tp_topo_uplink u[64];
    char x[32], y[32];
    int n = tp_topology_uplinks(t, node(t, a), node(t, b), rail, u, 64);
    size_t len = 0;
    out[0] = '\0';
    if (n < 0)
        return "none";
    for (int i = 0; i < n && i < 64; i++)
        len += (size_t)snprintf(out + len, sizeof out - len, "%s%s>%s", i ? " " : "",
                                tp_topology_switch_name(t, u[i].lower, x, sizeof x),
                                tp_topology_switch_name(t, u[i].upper, y, sizeof y));
    return out;
}

static void paths_tree(void **state)
{
    (void)state;
    struct tp_topology *t = load_ok(FIX "slurm-guide-tree.conf");
    int t0 = node(t, "tux0"), t1 = node(t, "tux1"), t2 = node(t, "tux2"), t4 = node(t, "tux4");
    assert_true(tp_topology_same_leaf(t, t0, t1, 0));
    assert_true(tp_topology_same_leaf(t, t0, t0, 0));
    assert_false(tp_topology_same_leaf(t, t0, t2, 0));
    TP_EQ_INT(tp_topology_level(t, t0, t1, 0), 0);
    TP_EQ_INT(tp_topology_level(t, t0, t2, 0), 1); /* s4 */
    TP_EQ_INT(tp_topology_level(t, t0, t4, 0), 2); /* s6 */
    TP_EQ_STR(uplinks(t, "tux0", "tux1", 0), "");
    TP_EQ_STR(uplinks(t, "tux0", "tux3", 0), "s0>s4 s1>s4");
    TP_EQ_STR(uplinks(t, "tux0", "tux4", 0), "s0>s4 s2>s5");
    TP_EQ_STR(uplinks(t, "tux7", "tux1", 0), "s3>s5 s0>s4");
    /* too small a buffer: the count, cap written */
    struct tp_topo_uplink u[1] = {{-7, -7}};
    TP_EQ_INT(tp_topology_uplinks(t, t0, t4, 0, u, 1), 2);
    TP_EQ_INT(u[0].lower, tp_topology_switch(t, "s0"));
    TP_EQ_INT(tp_topology_uplinks(t, t0, t4, 0, NULL, 0), 2);
    /* out of range */
    TP_EQ_INT(tp_topology_level(t, t0, 8, 0), -1);
    TP_EQ_INT(tp_topology_level(t, -1, t0, 0), -1);
    TP_EQ_INT(tp_topology_level(t, t0, t1, 1), -1);
    TP_EQ_INT(tp_topology_uplinks(t, t0, t1, 1, u, 1), -1);
    assert_false(tp_topology_same_leaf(t, t0, t1, -1));
    TP_EQ_INT(tp_topology_node(t, "tux8"), -1);
    TP_EQ_INT(tp_topology_switch(t, "s7"), -1);
    TP_EQ_STR(tp_topology_node_name(t, 8, NULL, 0), "");
    TP_EQ_STR(tp_topology_switch_name(t, -1, NULL, 0), "");
    tp_topology_free(t);

    t = load_ok(FIX "slurm-guide-spines.conf");
    TP_EQ_INT(tp_topology_level(t, node(t, "tux0"), node(t, "tux15"), 0), 1);
    TP_EQ_STR(uplinks(t, "tux0", "tux4", 0), "s0>s4 s0>s5 s0>s6 s0>s7 s1>s4 s1>s5 s1>s6 s1>s7");
    tp_topology_free(t);

    t = load_ok(FIX "halls.conf");
    TP_EQ_INT(tp_topology_level(t, node(t, "node1"), node(t, "node16"), 0), 1);
    TP_EQ_INT(tp_topology_level(t, node(t, "node1"), node(t, "node17"), 0), -1);
    TP_EQ_INT(tp_topology_level(t, node(t, "node33"), node(t, "node17"), 0), -1);
    TP_EQ_STR(uplinks(t, "node1", "node40", 0), "none");
    TP_EQ_STR(uplinks(t, "node17", "node32", 0), "leafB1>spineB leafB2>spineB");
    tp_topology_free(t);
}

static void paths_rails(void **state)
{
    (void)state;
    struct tp_topology *t = load_ok(FIX "rails.yaml");
    int g0 = node(t, "gpu0"), g3 = node(t, "gpu3"), g4 = node(t, "gpu4");
    for (int r = 0; r < 2; r++) {
        assert_true(tp_topology_same_leaf(t, g0, g3, r));
        assert_false(tp_topology_same_leaf(t, g0, g4, r));
        TP_EQ_INT(tp_topology_level(t, g0, g4, r), 1);
    }
    TP_EQ_INT(t->leaf[g4 * 2 + 1], tp_topology_switch(t, "g1-r1"));
    TP_EQ_STR(uplinks(t, "gpu0", "gpu4", 0), "g0-r0>spine0 g0-r0>spine1 g1-r0>spine0 g1-r0>spine1");
    TP_EQ_STR(uplinks(t, "gpu7", "gpu1", 1), "g1-r1>spine0 g1-r1>spine1 g0-r1>spine0 g0-r1>spine1");
    TP_EQ_INT(tp_topology_level(t, g0, g4, 2), -1);
    tp_topology_free(t);

    t = load_ok(FIX "clos.yaml");
    TP_EQ_INT(tp_topology_level(t, node(t, "n00"), node(t, "n01"), 1), 0);
    TP_EQ_INT(tp_topology_level(t, node(t, "n02"), node(t, "n04"), 0), 1);
    TP_EQ_INT(tp_topology_level(t, node(t, "n00"), node(t, "n02"), 1), 2);
    TP_EQ_STR(uplinks(t, "n02", "n04", 0),
              "b-leaf0>b-spine0 b-leaf0>b-spine1 b-leaf1>b-spine0 b-leaf1>b-spine1");
    TP_EQ_STR(uplinks(t, "n00", "n02", 1),
              "a-leaf1>a-spine0 a-leaf1>a-spine1 b-leaf0>b-spine0 b-leaf0>b-spine1");
    /* one leaf serves both rails of n02..n03 */
    assert_true(tp_topology_same_leaf(t, node(t, "n02"), node(t, "n03"), 1));
    tp_topology_free(t);
}

/* 4096 nodes in 128 leaves of 32, 16 leaves a pod, 8 pods under two cores,
 * written by printf; the expectations by arithmetic. */
static void large(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/large.conf", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int c = 0; c < 2; c++)
        fprintf(f, "SwitchName=core%d Switches=pod[0-7]\n", c);
    for (int p = 0; p < 8; p++)
        fprintf(f, "SwitchName=pod%d Switches=leaf[%03d-%03d]\n", p, p * 16, p * 16 + 15);
    for (int l = 0; l < 128; l++)
        fprintf(f, "SwitchName=leaf%03d Nodes=n[%05d-%05d]\n", l, l * 32, l * 32 + 31);
    assert_int_equal(fclose(f), 0);
    struct tp_topology *t = load_ok(path);
    TP_EQ_INT(t->nnodes, 4096);
    TP_EQ_INT(t->nswitches, 2 + 8 + 128);
    TP_EQ_INT(t->nlevels, 3);
    char name[32], want[32], buf[32];
    for (int i = 0; i < 4096; i++) {
        snprintf(name, sizeof name, "n%05d", i);
        TP_EQ_INT(tp_topology_node(t, name), i);
        snprintf(want, sizeof want, "leaf%03d", i / 32);
        TP_EQ_STR(tp_topology_switch_name(t, t->leaf[i], buf, sizeof buf), want);
    }
    for (int l = 0; l < 128; l++) {
        snprintf(name, sizeof name, "leaf%03d", l);
        const struct tp_topo_switch *w = &t->sw[tp_topology_switch(t, name)];
        TP_EQ_INT(w->level, 0);
        TP_EQ_INT(w->nup, 1);
        snprintf(want, sizeof want, "pod%d", l / 16);
        TP_EQ_STR(tp_topology_switch_name(t, w->up[0], buf, sizeof buf), want);
    }
    TP_EQ_INT(tp_topology_level(t, 0, 31, 0), 0);
    TP_EQ_INT(tp_topology_level(t, 0, 32, 0), 1);
    TP_EQ_INT(tp_topology_level(t, 0, 4095, 0), 2);
    TP_EQ_STR(uplinks(t, "n00000", "n04095", 0), "leaf000>pod0 leaf127>pod7");
    TP_EQ_STR(uplinks(t, "n00000", "n00511", 0), "leaf000>pod0 leaf015>pod0");
    tp_topology_free(t);
}

/* ---- bad input ---- */

struct bad {
    const char *name, *text;
    const char *at;  /* "LINE:COL", or "" for the whole file */
    const char *key; /* the key path after it, or "" */
    const char *says;
};

static void refused(const struct bad *cases, size_t n, const char *file)
{
    char path[128], at[256];
    for (size_t i = 0; i < n; i++) {
        const struct bad *c = &cases[i];
        tp_test_write(dir, file, c->text, path, sizeof path);
        tp_error err = {0};
        struct tp_topology *t = (struct tp_topology *)&err; /* set to NULL on error */
        int rc = tp_topology_load(path, &t, &err);
        if (rc != TP_EUSAGE)
            fail_msg("%s: rc %d, expected TP_EUSAGE (%s)", c->name, rc, err.msg);
        assert_null(t);
        TP_EXPECT_ERR(c->name, err.msg, path, tp_test_err_at(at, sizeof at, c->at, c->key),
                      c->says);
    }
}

static void bad_conf(void **state)
{
    (void)state;
    static char too_long[200];
    snprintf(too_long, sizeof too_long, "SwitchName=s0 Nodes=%065d\n", 7);
    const struct bad cases[] = {
        {"unknown key", "SwitchName=s0 Nodes=a Children=s1\n", "1:23", "",
         "unknown key 'Children' on a SwitchName line"},
        {"unknown first key", "# x\nFoo=1\n", "2:1", "", "unknown key 'Foo'"},
        {"not SwitchName first", "Nodes=a\n", "1:1", "",
         "a line starts with SwitchName=NAME (found Nodes= first)"},
        {"block plugin", "BlockName=b1 Nodes=node[1-32]\n", "1:1", "",
         "BlockName=: the topology/block plugin's lines are not read"},
        {"block sizes", "SwitchName=s0 Nodes=a\nBlockSizes=30,120\n", "2:1", "",
         "topology/block plugin's lines are not read"},
        {"ring plugin", "RingName=ring0 Nodes=node[01-08]\n", "1:1", "",
         "the topology/ring plugin's lines are not read"},
        {"include", "Include /etc/slurm/more.conf\n", "1:1", "", "Include lines are not followed"},
        {"switch twice", "SwitchName=s0 Nodes=a\nSwitchName=s0 Nodes=b\n", "2:12", "SwitchName",
         "switch s0 is already defined at line 1"},
        {"nodes and switches", "SwitchName=s0 Nodes=a Switches=s1\n", "1:23", "Switches",
         "has Nodes= (a leaf) or Switches= (the switches below it), not both"},
        {"undefined switch",
         "SwitchName=s0 Nodes=a\nSwitchName=s1 Nodes=b\nSwitchName=top Switches=s0,s9\n", "3:28",
         "Switches", "switch s9 is never defined (no SwitchName=s9 line)"},
        {"itself", "SwitchName=s0 Switches=s0\nSwitchName=l Nodes=a\n", "1:24", "Switches",
         "switch s0 names itself"},
        {"cycle",
         "SwitchName=a Switches=b\nSwitchName=b Switches=c\nSwitchName=c Switches=a\n"
         "SwitchName=l Nodes=n1\n",
         "3:23", "Switches", "switches in a cycle (each above the next): a > b > c > a"},
        {"backwards range", "SwitchName=s0 Nodes=tux[3-1]\n", "1:25", "Nodes",
         "bad hostlist 'tux[3-1]': the range 3-1 runs backwards"},
        {"unclosed bracket", "SwitchName=s0 Nodes=tux[0-3\n", "1:24", "Nodes",
         "bad hostlist 'tux[0-3': '[' is not closed by ']'"},
        {"range with no end", "SwitchName=s0 Nodes=tux[01-]\n", "1:25", "Nodes",
         "the range '01-' has no end"},
        {"nested bracket", "SwitchName=s0 Nodes=a[1[2]]\n", "1:24", "Nodes",
         "'[' inside brackets: brackets do not nest"},
        {"stray bracket", "SwitchName=s0 Nodes=a]\n", "1:22", "Nodes", "']' without '['"},
        {"letter in brackets", "SwitchName=s0 Nodes=a[x]\n", "1:23", "Nodes",
         "'x' in brackets: only digits, '-' and ','"},
        {"empty brackets", "SwitchName=s0 Nodes=a[]\n", "1:23", "Nodes",
         "an empty range in brackets"},
        {"too many names", "SwitchName=s0 Nodes=n[0-999999],m[0-1]\n", "1:33", "Nodes",
         "expands to more than 1000000 names"},
        {"name too long", too_long, "1:21", "Nodes", "longer than 64 characters"},
        {"node under two leaves", "SwitchName=s0 Nodes=tux[0-3]\nSwitchName=s1 Nodes=tux[3-5]\n",
         "2:21", "Nodes", "node tux3 is already under switch s0 (line 1): a node has one leaf"},
        {"node twice in a leaf", "SwitchName=s0 Nodes=a,b,a\n", "1:25", "Nodes",
         "node a is given twice under switch s0"},
        {"link twice", "SwitchName=top Switches=s0,s0\nSwitchName=s0 Nodes=a\n", "1:28", "Switches",
         "switch s0 is below switch top twice (first at line 1)"},
        {"switch name a hostlist", "SwitchName=s[0-1] Nodes=a\n", "1:12", "SwitchName",
         "switch name 's[0-1]' holds '['"},
        {"no nodes", "SwitchName=s0 Switches=s1\nSwitchName=s1\n", "1:1", "", "no nodes"},
        {"empty file", "", "1:1", "", "empty: no switches"},
        {"comments only", "# nothing here\n\n   \n", "1:1", "", "empty: no switches"},
        {"backslash", "SwitchName=s0 \\\n  Nodes=a\n", "1:15", "",
         "escapes and continued lines are not read here"},
        {"link speed", "SwitchName=s0 Nodes=a LinkSpeed=fast\n", "1:33", "LinkSpeed",
         "'fast' is not a whole number from 0 to 4294967295"},
        {"not text", "SwitchName=s0 Nodes=a\x01\n", "1:22", "", "byte 0x01"},
        {"no =", "SwitchName=s0 Nodes\n", "1:15", "", "expected KEY=VALUE, found 'Nodes'"},
        {"no value", "SwitchName=s0 Nodes=\n", "1:15", "", "Nodes= needs a value"},
        {"key twice", "SwitchName=s0 Nodes=a nodes=b\n", "1:23", "Nodes",
         "given twice on this line (first at column 15)"},
        {"quote unclosed", "SwitchName=s0 Nodes=\"a b\n", "1:21", "", "'\"' is not closed"},
        {"operator", "SwitchName=s0 Nodes+=a\n", "1:20", "", "'+=' changes a value"},
    };
    refused(cases, sizeof cases / sizeof cases[0], "topology.conf");
}

static void bad_yaml(void **state)
{
    (void)state;
    const struct bad cases[] = {
        {"unknown key", "leaves:\n  - name: l0\n    nodes: a\n    spines: [s0]\n", "4:5",
         "leaves[0].spines", "unknown key"},
        {"node under two leaves of a rail",
         "rails: 2\nleaves:\n  - {name: l0, nodes: \"g[0-1]\", rail: 0}\n"
         "  - {name: l1, nodes: g1, rail: 0}\n  - {name: l2, nodes: \"g[0-1]\", rail: 1}\n",
         "4:23", "leaves[1].nodes", "node g1 is already under switch l0 (line 3) on rail 0"},
        {"no leaf on a rail",
         "rails: 2\nleaves:\n  - {name: l0, nodes: \"g[0-1]\", rail: 0}\n"
         "  - {name: l1, nodes: g0, rail: 1}\n",
         "3:23", "leaves[0].nodes",
         "node g1 has no leaf switch on rail 1 (it is under l0 on rail 0)"},
        {"node in no leaf", "nodes: \"g[0-2]\"\nleaves:\n  - {name: l0, nodes: \"g[0-1]\"}\n",
         "1:8", "nodes", "node g2 is under no leaf switch"},
        {"node not listed", "nodes: \"g[0-1]\"\nleaves:\n  - {name: l0, nodes: \"g[0-2]\"}\n",
         "3:23", "leaves[0].nodes", "node g2 is not in the list of nodes"},
        {"node listed twice", "nodes: \"g[0-1],g1\"\nleaves:\n  - {name: l0, nodes: g0}\n", "1:8",
         "nodes", "node g1 is listed twice"},
        {"cycle",
         "leaves:\n  - {name: l0, nodes: a, up: x}\nswitches:\n  - {name: x, up: y}\n"
         "  - {name: y, up: x}\n",
         "4:19", "switches[0].up", "switches in a cycle (each above the next): x > y > x"},
        {"a leaf above", "leaves:\n  - {name: l0, nodes: a, up: l1}\n  - {name: l1, nodes: b}\n",
         "2:30", "leaves[0].up", "switch l1 has nodes, so no switch can be below it"},
        {"rail out of range", "rails: 2\nleaves:\n  - {name: l0, nodes: a, rail: 2}\n", "3:32",
         "leaves[0].rail", "rail 2: the rails are 0 to 1 (rails: 2)"},
        {"rails out of range", "rails: 65\nleaves:\n  - {name: l0, nodes: a}\n", "1:8", "rails",
         "must be between 1 and 64"},
        {"nothing below",
         "leaves:\n  - {name: l0, nodes: a, up: s0}\nswitches:\n  - {name: z, up: core}\n", "4:12",
         "switches[0].name", "switch z has nothing below it"},
        {"leaf defined twice", "leaves:\n  - {name: l0, nodes: a}\n  - {name: l0, nodes: b}\n",
         "3:12", "leaves[1].name", "switch l0 is already defined at line 2"},
        {"bad hostlist", "leaves:\n  - name: l0\n    nodes: \"g[1-\"\n", "3:12", "leaves[0].nodes",
         "bad hostlist 'g[1-': the range '1-' has no end"},
        {"no leaves", "rails: 1\n", "1:1", "leaves", "required"},
        {"leaves not a list", "leaves: {name: l0}\n", "1:9", "leaves",
         "expected a sequence of leaves"},
        {"empty up", "leaves:\n  - {name: l0, nodes: a, up: []}\n", "2:30", "leaves[0].up",
         "found an empty sequence"},
        {"up of mappings", "leaves:\n  - {name: l0, nodes: a, up: [{x: 1}]}\n", "2:31",
         "leaves[0].up[0]", "expected a hostlist"},
        {"Slurm's topology.yaml",
         "- topology: topo1\n  cluster_default: True\n  tree:\n    switches:\n"
         "    - switch: sw_root\n      nodes: node[01-04]\n",
         "1:1", "top level", "this is Slurm's topology.yaml"},
        {"empty document", "---\n", "1:1", "", "empty document"},
        {"not a mapping", "just words\n", "1:1", "top level", "expected a mapping"},
    };
    refused(cases, sizeof cases / sizeof cases[0], "topology.yaml");
}

static void bad_path(void **state)
{
    (void)state;
    tp_error err = {0};
    struct tp_topology *t = NULL;
    char path[128];
    snprintf(path, sizeof path, "%s/absent.conf", dir);
    TP_EQ_INT(tp_topology_load(path, &t, &err), TP_EUSAGE);
    TP_HAS(err.msg, path);
    assert_null(t);
    TP_EQ_INT(tp_topology_load("", &t, &err), TP_EUSAGE);
    TP_HAS(err.msg, "no path given");
    TP_EQ_INT(tp_topology_load(dir, &t, &err), TP_EUSAGE); /* a folder */
    assert_null(t);
    tp_topology_free(NULL);
}

/* ---- generated ---- */

/* How many nodes have rail r on switch s: counted by the test. */
static int on_leaf(const struct tp_topology *t, int s, int r)
{
    int n = 0;
    for (int i = 0; i < t->nnodes; i++)
        n += t->leaf[i * t->nrails + r] == s;
    return n;
}

static void fat_tree(void **state)
{
    (void)state;
    tp_error err = {0};
    struct tp_topology *t = NULL;
    /* 10 nodes, 4 a leaf: leaves of 4, 4 and 2; every leaf up to both spines */
    TP_EQ_INT(tp_topology_fat_tree(10, 4, 2, 1, &t, &err), 0);
    TP_EQ_INT(t->nnodes, 10);
    TP_EQ_INT(t->nrails, 1);
    TP_EQ_INT(t->nswitches, 5);
    TP_EQ_INT(t->nlevels, 2);
    const int per[3] = {4, 4, 2};
    char buf[32];
    for (int s = 0; s < 3; s++) {
        TP_EQ_INT(t->sw[s].level, 0);
        TP_EQ_INT(t->sw[s].rail, -1);
        TP_EQ_INT(on_leaf(t, s, 0), per[s]);
        TP_EQ_INT(t->sw[s].nup, 2);
        TP_EQ_INT(t->sw[s].up[0], 3);
        TP_EQ_INT(t->sw[s].up[1], 4);
        assert_null(t->sw[s].name);
    }
    for (int s = 3; s < 5; s++) {
        TP_EQ_INT(t->sw[s].level, 1);
        TP_EQ_INT(t->sw[s].nup, 0);
    }
    for (int i = 0; i < 10; i++)
        TP_EQ_INT(t->leaf[i], i / 4);
    assert_null(t->node);
    TP_EQ_STR(tp_topology_node_name(t, 7, buf, sizeof buf), "node7");
    TP_EQ_STR(tp_topology_switch_name(t, 2, buf, sizeof buf), "leaf2");
    TP_EQ_STR(tp_topology_switch_name(t, 4, buf, sizeof buf), "spine1");
    TP_EQ_INT(tp_topology_node(t, "node7"), 7);
    TP_EQ_INT(tp_topology_node(t, "node07"), -1);
    TP_EQ_INT(tp_topology_node(t, "node10"), -1);
    TP_EQ_INT(tp_topology_node(t, "node-1"), -1);
    TP_EQ_INT(tp_topology_switch(t, "leaf2"), 2);
    TP_EQ_INT(tp_topology_switch(t, "leaf3"), -1);
    TP_EQ_INT(tp_topology_switch(t, "spine1"), 4);
    TP_EQ_INT(tp_topology_switch(t, "spine2"), -1);
    assert_true(tp_topology_same_leaf(t, 0, 3, 0));
    assert_false(tp_topology_same_leaf(t, 3, 4, 0));
    TP_EQ_INT(tp_topology_level(t, 0, 9, 0), 1);
    TP_EQ_STR(uplinks(t, "node0", "node9", 0),
              "leaf0>spine0 leaf0>spine1 leaf2>spine0 leaf2>spine1");
    json_t *doc = tp_topology_json(t);
    assert_non_null(doc);
    TP_EQ_INT(json_integer_value(json_object_get(doc, "leaves")), 3);
    TP_EQ_INT(json_integer_value(json_object_get(doc, "spines")), 2);
    char got[256];
    json_members(json_switch(doc, "leaf2"), "nodes", got, sizeof got);
    TP_EQ_STR(got, "node8 node9");
    json_members(json_switch(doc, "spine0"), "switches", got, sizeof got);
    TP_EQ_STR(got, "leaf0 leaf1 leaf2");
    json_decref(doc);
    tp_topology_free(t);

    /* rail-optimised: 8 nodes in groups of 4, 2 rails: leaf g * 2 + r */
    TP_EQ_INT(tp_topology_fat_tree(8, 4, 3, 2, &t, &err), 0);
    TP_EQ_INT(t->nswitches, 4 + 3);
    for (int s = 0; s < 4; s++) {
        TP_EQ_INT(t->sw[s].rail, s % 2);
        TP_EQ_INT(on_leaf(t, s, s % 2), 4);
        TP_EQ_INT(on_leaf(t, s, 1 - s % 2), 0);
        TP_EQ_INT(t->sw[s].nup, 3);
    }
    for (int s = 4; s < 7; s++)
        TP_EQ_INT(t->sw[s].rail, -1);
    for (int i = 0; i < 8; i++)
        for (int r = 0; r < 2; r++)
            TP_EQ_INT(t->leaf[i * 2 + r], i / 4 * 2 + r);
    assert_true(tp_topology_same_leaf(t, 0, 3, 1));
    assert_false(tp_topology_same_leaf(t, 3, 4, 1));
    TP_EQ_INT(tp_topology_uplinks(t, 1, 6, 1, NULL, 0), 6);
    TP_EQ_STR(uplinks(t, "node1", "node6", 1),
              "leaf1>spine0 leaf1>spine1 leaf1>spine2 leaf3>spine0 leaf3>spine1 leaf3>spine2");
    tp_topology_free(t);

    /* one leaf, no spine */
    TP_EQ_INT(tp_topology_fat_tree(3, 8, 0, 1, &t, &err), 0);
    TP_EQ_INT(t->nswitches, 1);
    TP_EQ_INT(t->nlevels, 1);
    TP_EQ_INT(tp_topology_level(t, 0, 2, 0), 0);
    tp_topology_free(t);
}

static void fat_tree_refused(void **state)
{
    (void)state;
    const struct {
        int nodes, per_leaf, spines, rails;
        const char *says;
    } cases[] = {
        {0, 4, 2, 1, "0 nodes (1 to 1000000)"},
        {1000001, 4, 2, 1, "1000001 nodes"},
        {8, 0, 2, 1, "0 nodes a leaf"},
        {8, 4, 2, 0, "0 rails (1 to 64)"},
        {8, 4, 2, 65, "65 rails"},
        {8, 4, -1, 1, "-1 spines"},
        {8, 4, 0, 1, "no spines for 2 leaves"},
        {1000000, 1, 1, 1, "1000000 leaves and 1 spines (at most 1000000 switches)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tp_error err = {0};
        struct tp_topology *t = (struct tp_topology *)&err;
        int rc = tp_topology_fat_tree(cases[i].nodes, cases[i].per_leaf, cases[i].spines,
                                      cases[i].rails, &t, &err);
        TP_EQ_INT(rc, TP_EUSAGE);
        assert_null(t);
        TP_HAS(err.msg, cases[i].says);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fixtures),         cmocka_unit_test(paths_tree),
        cmocka_unit_test(paths_rails),      cmocka_unit_test(large),
        cmocka_unit_test(bad_conf),         cmocka_unit_test(bad_yaml),
        cmocka_unit_test(bad_path),         cmocka_unit_test(fat_tree),
        cmocka_unit_test(fat_tree_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
