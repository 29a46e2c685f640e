/* Tests of the plane policy reader: a policy with every key (each field
 * checked, CIDRs byte by byte), the defaults of a small one, the example in
 * docs/examples, and a table of bad policies whose errors must name the
 * file, line, column and key path. Files are written to a fresh folder
 * under /tmp. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "tp/check.h"
#include "tp_test.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    return tp_test_mkdtemp(dir, sizeof dir, "tp_policy");
}

static int teardown(void **state)
{
    (void)state;
    return tp_test_rmtree(dir);
}

static void parse_ok(const char *text, struct tp_policy *p, char *path, size_t cap)
{
    tp_error err = {0};
    tp_test_write(dir, "policy.yaml", text, path, cap);
    int rc = tp_policy_parse(path, p, &err);
    if (rc != 0)
        fail_msg("parse failed (%d): %s", rc, err.msg);
}

/* c is the network text/prefix, as inet_ntop writes it. */
static void eq_cidr(const struct tp_cidr *c, int family, const char *net, unsigned prefix)
{
    char got[INET6_ADDRSTRLEN] = "?";
    inet_ntop(c->family, c->addr, got, sizeof got);
    if (c->family != family || strcmp(got, net) != 0 || c->prefix != prefix)
        fail_msg("cidr %s/%u (family %d), expected %s/%u (family %d)", got, c->prefix, c->family,
                 net, prefix, family);
    if (family == AF_INET)
        for (int i = 4; i < 16; i++)
            TP_EQ_INT(c->addr[i], 0);
}

static void eq_service(const struct tp_service *s, const char *name, const char *proto, unsigned lo,
                       unsigned hi)
{
    TP_EQ_STR(s->name, name);
    TP_EQ_STR(s->proto, proto);
    TP_EQ_INT(s->port_lo, lo);
    TP_EQ_INT(s->port_hi, hi);
}

static const char full_policy[] =
    "# every key\n"
    "role: kubernetes\n"
    "multi_tenant: true\n"
    "results: [/var/lib/trainpath/results, \"/srv/tp results\"]\n"
    "planes:\n"
    "  management:\n"
    "    cidrs: [10.0.0.0/24, \"fd00:0:0:1::/64\", 192.168.7.128/25]\n"
    "    interfaces: [eno1, \"mgmt*\"]\n"
    "    services:\n"
    "      - {name: sshd, port: 22}\n"
    "      - {name: node-exporter, port: 9100, proto: tcp}\n"
    "      - {name: slurm-srun, ports: 60001-63000}\n"
    "    mtu_min: 1500\n"
    "  control:\n"
    "    interfaces: [eno2]\n"
    "    services:\n"
    "      - name: kubelet\n"
    "        port: 10250\n"
    "      - {name: coredns, port: 53, proto: udp}\n"
    "      - {name: single, ports: 8080}\n"
    "  data:\n"
    "    cidrs: [10.1.0.0/16, \"fd00:0:0:2::/64\"]\n"
    "    interfaces: [\"ens*np0\", \"ens*np1\"]\n"
    "    rdma: true\n"
    "  storage:\n"
    "    cidrs: [10.2.0.0/24, 0.0.0.0/32]\n"
    "    mtu_min: 4200\n"
    "    rdma: false\n"
    "    services: []\n";

static void full_file(void **state)
{
    (void)state;
    struct tp_policy p;
    char path[128];
    parse_ok(full_policy, &p, path, sizeof path);
    TP_EQ_STR(p.file, path);
    TP_EQ_INT(p.role, TP_ROLE_KUBERNETES);
    assert_true(p.multi_tenant);
    TP_EQ_INT(p.nresults_dirs, 2);
    TP_EQ_STR(p.results_dirs[0], "/var/lib/trainpath/results");
    TP_EQ_STR(p.results_dirs[1], "/srv/tp results");

    const struct tp_policy_plane *m = &p.planes[TP_PLANE_MGMT];
    assert_true(m->present);
    TP_EQ_INT(m->ncidrs, 3);
    eq_cidr(&m->cidrs[0], AF_INET, "10.0.0.0", 24);
    eq_cidr(&m->cidrs[1], AF_INET6, "fd00:0:0:1::", 64);
    eq_cidr(&m->cidrs[2], AF_INET, "192.168.7.128", 25);
    TP_EQ_INT(m->nifaces, 2);
    TP_EQ_STR(m->ifaces[0], "eno1");
    TP_EQ_STR(m->ifaces[1], "mgmt*");
    TP_EQ_INT(m->nservices, 3);
    eq_service(&m->services[0], "sshd", "tcp", 22, 22);
    eq_service(&m->services[1], "node-exporter", "tcp", 9100, 9100);
    eq_service(&m->services[2], "slurm-srun", "tcp", 60001, 63000);
    TP_EQ_INT(m->mtu_min, 1500);
    assert_false(m->rdma);

    const struct tp_policy_plane *c = &p.planes[TP_PLANE_CONTROL];
    assert_true(c->present);
    TP_EQ_INT(c->ncidrs, 0);
    TP_EQ_INT(c->nifaces, 1);
    TP_EQ_STR(c->ifaces[0], "eno2");
    TP_EQ_INT(c->nservices, 3);
    eq_service(&c->services[0], "kubelet", "tcp", 10250, 10250);
    eq_service(&c->services[1], "coredns", "udp", 53, 53);
    eq_service(&c->services[2], "single", "tcp", 8080, 8080);
    TP_EQ_INT(c->mtu_min, 0);
    assert_false(c->rdma);

    const struct tp_policy_plane *d = &p.planes[TP_PLANE_DATA];
    assert_true(d->present);
    TP_EQ_INT(d->ncidrs, 2);
    eq_cidr(&d->cidrs[0], AF_INET, "10.1.0.0", 16);
    eq_cidr(&d->cidrs[1], AF_INET6, "fd00:0:0:2::", 64);
    TP_EQ_INT(d->nifaces, 2);
    TP_EQ_STR(d->ifaces[0], "ens*np0");
    TP_EQ_STR(d->ifaces[1], "ens*np1");
    TP_EQ_INT(d->nservices, 0);
    TP_EQ_INT(d->mtu_min, 9000);
    assert_true(d->rdma);

    const struct tp_policy_plane *s = &p.planes[TP_PLANE_STORAGE];
    assert_true(s->present);
    TP_EQ_INT(s->ncidrs, 2);
    eq_cidr(&s->cidrs[0], AF_INET, "10.2.0.0", 24);
    eq_cidr(&s->cidrs[1], AF_INET, "0.0.0.0", 32);
    TP_EQ_INT(s->nifaces, 0);
    TP_EQ_INT(s->nservices, 0);
    TP_EQ_INT(s->mtu_min, 4200);
    assert_false(s->rdma);
}

static void defaults(void **state)
{
    (void)state;
    struct tp_policy p;
    char path[128];
    memset(&p, 0x5a, sizeof p); /* parse starts from zero */
    parse_ok("role: login\nplanes:\n  management: {interfaces: [eth0]}\n", &p, path, sizeof path);
    TP_EQ_INT(p.role, TP_ROLE_LOGIN);
    assert_false(p.multi_tenant);
    TP_EQ_INT(p.nresults_dirs, 0);
    assert_true(p.planes[TP_PLANE_MGMT].present);
    TP_EQ_INT(p.planes[TP_PLANE_MGMT].mtu_min, 0);
    TP_EQ_INT(p.planes[TP_PLANE_MGMT].nservices, 0);
    TP_EQ_INT(p.planes[TP_PLANE_MGMT].ncidrs, 0);
    for (int i = TP_PLANE_CONTROL; i < TP_PLANES; i++) {
        const struct tp_policy_plane *pl = &p.planes[i];
        assert_false(pl->present);
        TP_EQ_INT(pl->ncidrs + pl->nifaces + pl->nservices, 0);
        assert_false(pl->rdma);
        TP_EQ_INT(pl->mtu_min, i == TP_PLANE_DATA || i == TP_PLANE_STORAGE ? 9000 : 0);
    }
}

static void example(void **state)
{
    (void)state;
    struct tp_policy p;
    tp_error err = {0};
    const char *path = TP_SOURCE_ROOT "/docs/examples/policy.yaml";
    int rc = tp_policy_parse(path, &p, &err);
    if (rc != 0)
        fail_msg("%s: %s", path, err.msg);
    TP_EQ_INT(p.role, TP_ROLE_COMPUTE);
    assert_false(p.multi_tenant);
    TP_EQ_INT(p.nresults_dirs, 1);
    for (int i = 0; i < TP_PLANES; i++)
        assert_true(p.planes[i].present);
    const struct tp_policy_plane *m = &p.planes[TP_PLANE_MGMT], *c = &p.planes[TP_PLANE_CONTROL],
                                 *d = &p.planes[TP_PLANE_DATA], *s = &p.planes[TP_PLANE_STORAGE];
    TP_EQ_INT(m->nservices, 2);
    eq_service(&m->services[0], "sshd", "tcp", 22, 22);
    TP_EQ_INT(m->mtu_min, 1500);
    TP_EQ_INT(c->nservices, 2);
    eq_service(&c->services[0], "slurmd", "tcp", 6818, 6818);
    eq_service(&c->services[1], "slurm-srun", "tcp", 60001, 63000);
    assert_true(d->rdma);
    TP_EQ_INT(d->nservices, 0);
    TP_EQ_INT(d->mtu_min, 9000);
    TP_EQ_INT(s->nservices, 0);
    TP_EQ_INT(s->mtu_min, 9000);
    assert_false(s->rdma);
}

/* ---- bad policies ---- */

struct bad {
    const char *name;
    const char *yaml;  /* NULL: the file does not exist */
    const char *where; /* "LINE:COL", "" for no position */
    const char *path;  /* key path, or "" */
    const char *says;  /* a phrase the message must hold */
};

#define HEAD "role: compute\nplanes:\n" /* lines 1 and 2 */
#define MGMT "  management:\n    interfaces: [eno1]\n"

static char too_many_cidrs[2048];

static const struct bad bads[] = {
    {"unknown top-level key", "rol: compute\n", "1:1", "rol", "unknown key (did you mean role?"},
    {"unknown plane", HEAD "  dta:\n    cidrs: [10.0.0.0/8]\n", "3:3", "planes.dta",
     "unknown plane (did you mean data? known: management, control, data, storage)"},
    {"unknown plane, no close match", HEAD "  backend: {}\n", "3:3", "planes.backend",
     "unknown plane (known: management, control, data, storage)"},
    {"unknown plane key", HEAD "  data:\n    cidr: [10.1.0.0/16]\n", "4:5", "planes.data.cidr",
     "unknown key (did you mean cidrs?"},
    {"unknown service key", HEAD "  management:\n    services:\n      - {nme: sshd, port: 22}\n",
     "5:10", "planes.management.services[0].nme", "did you mean name?"},
    {"duplicate key", HEAD "  data:\n    cidrs: [10.1.0.0/16]\n    cidrs: [10.3.0.0/16]\n", "5:5",
     "planes.data.cidrs", "duplicate key (first at line 4, column 5)"},
    {"duplicate plane", HEAD MGMT "  management:\n    interfaces: [eno2]\n", "5:3",
     "planes.management", "duplicate key (first at line 3, column 3)"},
    {"bad CIDR", HEAD "  data:\n    cidrs: [10.0.0/24]\n", "4:13", "planes.data.cidrs[0]",
     "cannot parse '10.0.0/24' as a CIDR (use e.g. 10.0.0.0/24"},
    {"bad CIDR prefix", HEAD "  data:\n    cidrs: [10.0.0.0/x]\n", "4:13", "planes.data.cidrs[0]",
     "cannot parse '10.0.0.0/x' as a CIDR"},
    {"CIDR without a prefix", HEAD "  data:\n    cidrs:\n      - 10.1.0.7\n", "5:9",
     "planes.data.cidrs[0]", "'10.1.0.7' has no prefix length (write 10.1.0.7/32"},
    {"IPv6 CIDR without a prefix", HEAD "  data:\n    cidrs: [\"fd00::7\"]\n", "4:13",
     "planes.data.cidrs[0]", "'fd00::7' has no prefix length (write fd00::7/128 for one host)"},
    {"IPv4 prefix too long", HEAD "  data:\n    cidrs: [10.1.0.0/16, 10.2.0.0/33]\n", "4:26",
     "planes.data.cidrs[1]", "the prefix length of an IPv4 network is 0 to 32"},
    {"IPv6 prefix too long", HEAD "  data:\n    cidrs: [\"fd00::/129\"]\n", "4:13",
     "planes.data.cidrs[0]", "the prefix length of an IPv6 network is 0 to 128"},
    {"host bits set", HEAD "  data:\n    cidrs: [10.1.0.5/16]\n", "4:13", "planes.data.cidrs[0]",
     "'10.1.0.5/16' has host bits set (the network is 10.1.0.0/16)"},
    {"IPv6 host bits set", HEAD "  storage:\n    cidrs: [\"fd00:0:0:2::1/64\"]\n", "4:13",
     "planes.storage.cidrs[0]", "has host bits set (the network is fd00:0:0:2::/64)"},
    {"port 0", HEAD "  management:\n    services: [{name: sshd, port: 0}]\n", "4:35",
     "planes.management.services[0].port", "'0' must be between 1 and 65535"},
    {"port too large", HEAD "  management:\n    services: [{name: sshd, port: 70000}]\n", "4:35",
     "planes.management.services[0].port", "'70000' must be between 1 and 65535"},
    {"port not a number", HEAD "  management:\n    services: [{name: sshd, port: ssh}]\n", "4:35",
     "planes.management.services[0].port", "cannot parse 'ssh' as a port (use e.g. 22, 9100)"},
    {"port range backwards",
     HEAD "  control:\n    services:\n      - {name: srun, ports: 63000-60001}\n", "5:29",
     "planes.control.services[0].ports", "'63000-60001' runs backwards"},
    {"port range out of bounds",
     HEAD "  control:\n    services:\n      - {name: srun, ports: 0-100}\n", "5:29",
     "planes.control.services[0].ports", "'0-100': a port is 1 to 65535"},
    {"port range unreadable",
     HEAD "  control:\n    services:\n      - {name: srun, ports: \"60001:63000\"}\n", "5:29",
     "planes.control.services[0].ports",
     "cannot parse '60001:63000' as a port range (use e.g. 60001-63000)"},
    {"proto not tcp or udp",
     HEAD "  control:\n    services:\n      - {name: x, port: 1, proto: sctp}\n", "5:35",
     "planes.control.services[0].proto", "unknown value 'sctp' (use one of: tcp, udp)"},
    {"both port and ports",
     HEAD "  control:\n    services:\n      - {name: x, ports: 1-2, port: 1}\n", "5:31",
     "planes.control.services[0].port", "give port (one) or ports (a range), not both"},
    {"neither port nor ports", HEAD "  control:\n    services:\n      - name: x\n", "5:9",
     "planes.control.services[0].port", "required (or ports: one of the two)"},
    {"service without a name", HEAD "  control:\n    services:\n      - port: 1\n", "5:9",
     "planes.control.services[0].name", "required"},
    {"service name too long",
     HEAD "  control:\n    services:\n      - {name: a-service-name-of-over-31-chars-x, port: 1}\n",
     "5:16", "planes.control.services[0].name", "is too long (at most 31 characters)"},
    {"services a mapping", HEAD "  control:\n    services: {sshd: 22}\n", "4:15",
     "planes.control.services", "expected a sequence of services, e.g. [{name: sshd, port: 22}]"},
    {"planes overlap",
     HEAD MGMT                                  /* 3-4 */
     "  data:\n"                                /* 5 */
     "    interfaces: [ens1]\n"                 /* 6 */
     "    cidrs: [10.1.0.0/16]\n"               /* 7 */
     "  storage:\n"                             /* 8 */
     "    cidrs: [10.9.0.0/24, 10.1.2.0/24]\n", /* 9 */
     "7:13", "planes.data.cidrs[0]",
     "10.1.0.0/16 overlaps planes.storage.cidrs[1] 10.1.2.0/24 (line 9)"},
    {"planes overlap, the later plane first in the file",
     HEAD "  storage:\n"                       /* 3 */
          "    cidrs: [\"fd00:0:0:2::/64\"]\n" /* 4 */
          "  management:\n"                    /* 5 */
          "    cidrs: [\"fd00::/16\"]\n",      /* 6 */
     "4:13", "planes.storage.cidrs[0]",
     "fd00:0:0:2::/64 overlaps planes.management.cidrs[0] fd00::/16 (line 6)"},
    {"a plane with neither cidrs nor interfaces", HEAD MGMT "  data:\n    rdma: true\n", "5:3",
     "planes.data", "needs cidrs or interfaces"},
    {"a plane with empty lists", HEAD "  control: {cidrs: [], interfaces: []}\n", "3:3",
     "planes.control", "needs cidrs or interfaces"},
    {"rdma on management", HEAD "  management:\n    interfaces: [eno1]\n    rdma: true\n", "5:11",
     "planes.management.rdma", "RDMA belongs on the data plane"},
    {"no planes", "role: compute\nplanes: {}\n", "2:1", "planes", "needs at least one plane"},
    {"planes missing", "role: compute\n", "1:1", "planes", "required"},
    {"role missing", "planes:\n" MGMT, "1:1", "role", "required"},
    {"unknown role", "role: gpu\nplanes:\n" MGMT, "1:7", "role",
     "unknown value 'gpu' (use one of: compute, storage, login, kubernetes)"},
    {"multi_tenant not a boolean", "role: compute\nmulti_tenant: yes\n", "2:15", "multi_tenant",
     "cannot parse 'yes' as a boolean"},
    {"interface name too long",
     HEAD "  data:\n    interfaces: [an-interface-name-of-32-chars-xx]\n", "4:18",
     "planes.data.interfaces[0]", "is too long (at most 31 characters)"},
    {"too many CIDRs", too_many_cidrs, "4:451", "planes.data.cidrs[32]",
     "too many entries (at most 32)"},
    {"results relative", "role: compute\nresults: [results]\n", "2:11", "results[0]",
     "'results' is not an absolute path"},
    {"too many results", "role: compute\nresults: [/a, /b, /c, /d, /e]\n", "2:27", "results[4]",
     "too many entries (at most 4)"},
    {"mtu out of range", HEAD "  data:\n    interfaces: [ens1]\n    mtu_min: 70000\n", "5:14",
     "planes.data.mtu_min", "'70000' must be between 0 and 65535"},
    {"an alias", HEAD "  data:\n    interfaces: &i [ens1]\n  storage:\n    interfaces: *i\n",
     "6:17", "planes.storage.interfaces",
     "found an alias (YAML aliases are not supported in "
     "policy files)"},
    {"yaml syntax error", HEAD "  data:\n    cidrs: [10.1.0.0/16\n  storage: {}\n", "6:1",
     "YAML syntax error", "flow sequence"},
    {"top level a sequence", "- role: compute\n", "1:1", "top level",
     "expected a mapping (role:, planes:), found a sequence"},
    {"empty file", "# nothing yet\n", "1:1", "", "empty document: a policy needs role and planes"},
    {"two documents", HEAD MGMT "---\nrole: login\n", "5:1", "",
     "a second YAML document; a policy file holds one"},
    {"missing file", NULL, "", "", "No such file or directory"},
};

static void bad_input(void **state)
{
    const struct bad *b = *state;
    char path[128], at[256];
    if (b->yaml)
        tp_test_write(dir, "policy.yaml", b->yaml, path, sizeof path);
    else
        snprintf(path, sizeof path, "%s/no-such-policy.yaml", dir);
    struct tp_policy p;
    tp_error err = {0};
    int rc = tp_policy_parse(path, &p, &err);
    if (rc != TP_EUSAGE || err.code != TP_EUSAGE)
        fail_msg("%s: rc %d, code %d, expected TP_EUSAGE (%d); message: %s", b->name, rc, err.code,
                 TP_EUSAGE, err.msg);
    TP_EXPECT_ERR(b->name, err.msg, path, tp_test_err_at(at, sizeof at, b->where, b->path),
                  b->says);
}

static void no_path(void **state)
{
    (void)state;
    struct tp_policy p;
    tp_error err = {0};
    TP_EQ_INT(tp_policy_parse("", &p, &err), TP_EUSAGE);
    TP_EQ_STR(err.msg, "policy file: no path given");
}

#define NBAD (sizeof bads / sizeof bads[0])

int main(void)
{
    /* 33 CIDRs, one past the limit: 10.0.0.0/24 ... 10.0.32.0/24 */
    size_t len =
        (size_t)snprintf(too_many_cidrs, sizeof too_many_cidrs, HEAD "  data:\n    cidrs: [");
    for (int i = 0; i <= TP_POLICY_MAX; i++)
        len += (size_t)snprintf(too_many_cidrs + len, sizeof too_many_cidrs - len, "%s10.0.%d.0/24",
                                i ? ", " : "", i);
    snprintf(too_many_cidrs + len, sizeof too_many_cidrs - len, "]\n");
    struct CMUnitTest tests[4 + NBAD] = {
        cmocka_unit_test(full_file),
        cmocka_unit_test(defaults),
        cmocka_unit_test(example),
        cmocka_unit_test(no_path),
    };
    for (size_t i = 0; i < NBAD; i++) {
        tests[4 + i] = (struct CMUnitTest)cmocka_unit_test_prestate(bad_input, (void *)&bads[i]);
        tests[4 + i].name = bads[i].name;
    }
    return cmocka_run_group_tests(tests, setup, teardown);
}
