/* The fact collectors of trainpath check. Two snapshot roots under
 * tests/fixtures/check/ are laid out as the kernel lays out /proc, /sys and
 * configfs; each has a hand-checked expected document beside it
 * (node-rdma.json, target-open.json) that the collected facts must equal
 * field for field (the snapshot path in "root" and the verbatim nftables
 * ruleset are compared separately). The tests name the facts a rule depends
 * on once more, explicitly, so a failure says what broke in words. The live
 * host and the secrets scan are tested against what must hold anywhere. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tp_test.h"
#include "tp/check.h"

#define FIXTURES TP_SOURCE_ROOT "/tests/fixtures/check"

/* ---- helpers ---- */

static char *dump(const json_t *v)
{
    return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);
}

/* Fail naming the first path at which got and want differ, with both values. */
static void expect_json(const json_t *got, const json_t *want, const char *path)
{
    char sub[512];
    if (json_typeof(got) != json_typeof(want) ||
        (!json_is_object(want) && !json_is_array(want) && !json_equal(got, want))) {
        char *g = dump(got), *w = dump(want);
        fail_msg("%s = %s, expected %s", path, g ? g : "?", w ? w : "?");
    }
    if (json_is_object(want)) {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)want, k, v)
        {
            snprintf(sub, sizeof sub, "%s.%s", path, k);
            const json_t *g = json_object_get(got, k);
            if (!g)
                fail_msg("%s is absent, expected %s", sub, dump(v));
            expect_json(g, v, sub);
        }
        json_object_foreach((json_t *)got, k, v)
        {
            if (!json_object_get(want, k)) {
                snprintf(sub, sizeof sub, "%s.%s", path, k);
                fail_msg("%s = %s is not expected", sub, dump(v));
            }
        }
    } else if (json_is_array(want)) {
        size_t n = json_array_size(want);
        for (size_t i = 0; i < n && i < json_array_size(got); i++) {
            snprintf(sub, sizeof sub, "%s[%zu]", path, i);
            expect_json(json_array_get(got, i), json_array_get(want, i), sub);
        }
        if (json_array_size(got) != n)
            fail_msg("%s has %zu entries, expected %zu: %s", path, json_array_size(got), n,
                     dump(got));
    }
}

static json_t *load(const char *path)
{
    json_error_t je;
    json_t *v = json_load_file(path, 0, &je);
    if (!v)
        fail_msg("%s:%d: %s", path, je.line, je.text);
    return v;
}

static json_t *collect(const char *root)
{
    tp_error err = {0};
    json_t *f = NULL;
    int rc = tp_check_facts(root, &f, &err);
    if (rc)
        fail_msg("tp_check_facts(%s) = %d: %s", root ? root : "(live)", rc, err.msg);
    assert_non_null(f);
    return f;
}

static const char *str_at(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    if (!s)
        fail_msg("%s is not a string in %s", k, dump(o));
    return s;
}

static json_t *find_by(const json_t *arr, const char *key, const char *val)
{
    size_t i;
    json_t *it;
    json_array_foreach(arr, i, it)
    {
        const char *s = json_string_value(json_object_get(it, key));
        if (s && !strcmp(s, val))
            return it;
    }
    return NULL;
}

static bool has_missing(const json_t *facts, const char *part)
{
    return find_by(json_object_get(facts, "missing"), "part", part) != NULL;
}

/* Collect a fixture and compare it with its expected document. */
static json_t *check_fixture(const char *name)
{
    char root[4096], want_path[4096];
    snprintf(root, sizeof root, "%s/%s", FIXTURES, name);
    snprintf(want_path, sizeof want_path, "%s/%s.json", FIXTURES, name);
    json_t *f = collect(root);
    TP_EQ_STR(str_at(f, "root"), root);

    json_t *nft = json_object_get(f, "nftables");
    if (json_is_object(nft)) {
        char rules[4200];
        snprintf(rules, sizeof rules, "%s/nftables.json", root);
        json_t *ruleset = load(rules);
        expect_json(json_object_get(nft, "ruleset"), ruleset, "nftables.ruleset");
        json_decref(ruleset);
    }

    json_t *got = json_deep_copy(f);
    json_object_del(got, "root");
    if (json_is_object(json_object_get(got, "nftables")))
        json_object_del(json_object_get(got, "nftables"), "ruleset");
    json_t *want = load(want_path);
    expect_json(got, want, name);
    json_decref(want);
    json_decref(got);
    return f;
}

/* ---- snapshots ---- */

static void node_rdma(void **state)
{
    (void)state;
    json_t *f = check_fixture("node-rdma");
    TP_EQ_STR(str_at(f, "schema"), "trainpath.facts/1");
    TP_EQ_STR(str_at(f, "host"), "node17");

    /* the RoCE NIC: netdev eth2 on 0000:17:00.0, NUMA 1, RDMA device mlx5_0 */
    json_t *eth2 = find_by(json_object_get(f, "interfaces"), "name", "eth2");
    assert_non_null(eth2);
    TP_EQ_STR(str_at(eth2, "driver"), "mlx5_core");
    TP_EQ_STR(str_at(eth2, "pci"), "0000:17:00.0");
    TP_EQ_STR(str_at(eth2, "rdma_device"), "mlx5_0");
    TP_EQ_U64(json_integer_value(json_object_get(eth2, "numa_node")), 1);
    TP_EQ_U64(json_integer_value(json_object_get(eth2, "mtu")), 9000);
    TP_EQ_U64(json_integer_value(json_object_get(eth2, "speed_mbps")), 100000);
    json_t *vlan =
        json_object_get(find_by(json_object_get(f, "interfaces"), "name", "eth2.42"), "vlan");
    TP_EQ_U64(json_integer_value(json_object_get(vlan, "id")), 42);
    TP_EQ_STR(str_at(vlan, "parent"), "eth2");

    /* listeners: sshd on the wildcard, slurmd on the data address */
    json_t *ls = json_object_get(f, "listeners");
    json_t *ssh = json_array_get(ls, 0), *slurm = json_array_get(ls, 1);
    TP_EQ_STR(str_at(ssh, "address"), "0.0.0.0");
    TP_EQ_U64(json_integer_value(json_object_get(ssh, "port")), 22);
    assert_true(json_is_true(json_object_get(ssh, "wildcard")));
    TP_EQ_U64(json_integer_value(json_object_get(ssh, "pid")), 811); /* lowest of 811 and 1200 */
    TP_EQ_STR(str_at(ssh, "process"), "sshd");
    TP_EQ_STR(str_at(slurm, "address"), "10.0.1.5");
    TP_EQ_U64(json_integer_value(json_object_get(slurm, "port")), 6818);
    assert_true(json_is_false(json_object_get(slurm, "wildcard")));
    TP_EQ_STR(str_at(slurm, "process"), "slurmd");
    /* an IPv6 address whose 32-bit words are printed in host order */
    TP_EQ_STR(str_at(json_array_get(ls, 3), "address"), "fd00:1::5");

    /* nftables: the inet filter input chain drops by default */
    json_t *in = json_array_get(json_object_get(json_object_get(f, "nftables"), "input_chains"), 0);
    TP_EQ_STR(str_at(in, "policy"), "drop");
    TP_EQ_STR(str_at(in, "family"), "inet");
    TP_EQ_STR(str_at(in, "table"), "filter");

    /* RDMA: RoCE v2 on port 1 of mlx5_0, exclusive netns mode */
    json_t *rdma = json_object_get(f, "rdma");
    TP_EQ_STR(str_at(rdma, "netns_mode"), "exclusive");
    json_t *port = json_array_get(
        json_object_get(json_array_get(json_object_get(rdma, "devices"), 0), "ports"), 0);
    TP_EQ_STR(str_at(port, "link_layer"), "Ethernet");
    TP_EQ_STR(str_at(port, "netdev"), "eth2");
    TP_EQ_U64(json_array_size(json_object_get(port, "gid_types")), 2); /* distinct, non-empty */
    TP_EQ_STR(json_string_value(json_array_get(json_object_get(port, "gid_types"), 1)), "RoCE v2");

    /* NVMe-oF hosts: tcp with DH-CHAP both ways and TLS; rdma with neither */
    json_t *hosts = json_object_get(f, "nvme_hosts");
    json_t *tcp = find_by(hosts, "transport", "tcp"), *rd = find_by(hosts, "transport", "rdma");
    assert_true(json_is_true(json_object_get(tcp, "dhchap_secret")));
    assert_true(json_is_true(json_object_get(tcp, "dhchap_ctrl_secret")));
    assert_true(json_is_true(json_object_get(tcp, "tls_key")));
    assert_true(json_is_false(json_object_get(rd, "dhchap_secret")));
    assert_true(json_is_null(json_object_get(rd, "tls_key")));
    TP_EQ_U64(json_integer_value(json_object_get(rd, "ctrl_loss_tmo")), (unsigned long long)-1);
    assert_null(find_by(hosts, "ctrl", "nvme0")); /* PCIe is not a fabrics host */
    assert_true(json_is_true(json_object_get(f, "nvme_multipath")));

    /* no secret value anywhere in the document */
    char *all = json_dumps(f, 0);
    assert_null(strstr(all, "DHHC-1"));
    assert_null(strstr(all, "2ad1c0b5"));
    free(all);

    TP_EQ_STR(str_at(json_object_get(f, "iommu"), "mode"), "passthrough");
    TP_EQ_STR(str_at(json_object_get(f, "memory"), "thp"), "madvise");
    assert_true(json_is_true(json_object_get(json_object_get(f, "time"), "synchronized")));
    assert_false(has_missing(f, "nftables"));
    assert_true(has_missing(f, "nvmet"));
    json_decref(f);
}

static void target_open(void **state)
{
    (void)state;
    json_t *f = check_fixture("target-open");
    json_t *t = json_object_get(f, "nvmet");
    json_t *open = find_by(json_object_get(t, "subsystems"), "nqn", "nqn.2024-01.io.example:open");
    assert_non_null(open);
    assert_true(json_is_true(json_object_get(open, "allow_any_host")));
    TP_EQ_U64(json_array_size(json_object_get(open, "allowed_hosts")), 0);
    json_t *host = json_array_get(json_object_get(t, "hosts"), 0);
    assert_true(json_is_true(json_object_get(host, "dhchap_key")));
    assert_true(json_is_false(json_object_get(host, "dhchap_ctrl_key")));
    json_t *port = find_by(json_object_get(t, "ports"), "id", "1");
    TP_EQ_STR(str_at(port, "trtype"), "tcp");
    TP_EQ_STR(str_at(port, "tsas"), "none");
    TP_EQ_STR(str_at(port, "treq"), "not specified");
    TP_EQ_STR(json_string_value(json_array_get(json_object_get(port, "subsystems"), 0)),
              "nqn.2024-01.io.example:open");
    char *all = json_dumps(f, 0);
    assert_null(strstr(all, "DHHC-1"));
    free(all);

    /* a virtio NIC: the PCI function is found above virtio0; NUMA -1 is null */
    json_t *eth0 = find_by(json_object_get(f, "interfaces"), "name", "eth0");
    TP_EQ_STR(str_at(eth0, "pci"), "0000:00:03.0");
    assert_true(json_is_null(json_object_get(eth0, "numa_node")));
    assert_true(json_is_null(json_object_get(eth0, "speed_mbps")));
    json_decref(f);
}

/* What the snapshot lacks is null and named in missing, never an error. */
static void missing_parts(void **state)
{
    (void)state;
    json_t *f = collect(FIXTURES "/target-open");
    static const char *const parts[] = {"addresses.inet", "routes.inet", "nftables", "rdma",
                                        "nvme_multipath", "memory",      "time",     "gpus"};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (!has_missing(f, parts[i]))
            fail_msg("missing has no \"%s\": %s", parts[i], dump(json_object_get(f, "missing")));
    assert_true(json_is_null(json_object_get(f, "nftables")));
    assert_true(json_is_null(json_object_get(f, "rdma")));
    assert_true(json_is_null(json_object_get(f, "routes")));
    assert_true(json_is_null(json_object_get(json_object_get(f, "time"), "synchronized")));
    json_decref(f);
}

static void root_not_a_folder(void **state)
{
    (void)state;
    tp_error err = {0};
    json_t *f = (json_t *)1;
    TP_EQ_U64(tp_check_facts(FIXTURES "/node-rdma.json", &f, &err), TP_EUSAGE);
    assert_null(f);
    assert_non_null(strstr(err.msg, "node-rdma.json"));
    TP_EQ_U64(tp_check_facts(FIXTURES "/no-such-root", &f, &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "no-such-root"));
}

/* ---- the live host ---- */

static void live_host(void **state)
{
    (void)state;
    const char *roots[] = {NULL, "/"};
    for (int r = 0; r < 2; r++) {
        json_t *f = collect(roots[r]);
        TP_EQ_STR(str_at(f, "root"), "/");
        json_t *lo = NULL;
        size_t i;
        json_t *it;
        json_array_foreach(json_object_get(f, "interfaces"), i, it)
        {
            if (json_is_true(json_object_get(it, "loopback")))
                lo = it;
        }
        if (!lo)
            fail_msg("no loopback interface in %s", dump(json_object_get(f, "interfaces")));
        json_t *a = find_by(json_object_get(lo, "addresses"), "address", "127.0.0.1");
        if (!a)
            fail_msg("no 127.0.0.1 on %s", dump(lo));
        TP_EQ_U64(json_integer_value(json_object_get(a, "prefix")), 8);
        /* every online CPU has its cpuN folder; sysfs lists possible ones too */
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        json_t *count = json_object_get(json_object_get(f, "cpu"), "count");
        if (!json_is_integer(count) || json_integer_value(count) < online ||
            json_integer_value(count) > 65536)
            fail_msg("cpu.count = %s, expected at least the %ld online", dump(count), online);
        assert_true(json_is_array(json_object_get(f, "listeners")));
        assert_true(json_is_array(json_object_get(f, "routes")));
        assert_true(json_is_object(json_object_get(f, "sysctl")));
        assert_true(json_is_array(json_object_get(f, "missing")));
        json_decref(f);
    }
}

/* ---- secrets ---- */

static void secrets_scan(void **state)
{
    (void)state;
    char dir[64], path[4096];
    assert_int_equal(tp_test_mkdtemp(dir, sizeof dir, "tp_facts_secrets"), 0);
    tp_test_write(dir, "ckpt.pem",
                  "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAplanted\n-----END RSA PRIVATE "
                  "KEY-----\n",
                  path, sizeof path);
    snprintf(path, sizeof path, "%s/run1", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    tp_test_write(
        dir, "run1/nvme-connect.sh",
        "nvme connect -t tcp --dhchap-secret=DHHC-1:00:cGxhbnRlZC1zZWNyZXQtZm9yLXRlc3Q=:\n", path,
        sizeof path);
    tp_test_write(dir, "run1/result.json",
                  "{\"lat_ns\": 1200, \"note\": \"PRIVATE KEY is not a key\"}\n", path,
                  sizeof path);
    tp_test_write(dir, "run1/id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaA==\n",
                  path, sizeof path);
    tp_test_write(dir, "run1/net.key", "q3Jz0n6Yd2Qv0m8wq1cFq7x9eJm4QmJb0oWg0aT2cKc=\n", path,
                  sizeof path);
    /* words, not a key */
    tp_test_write(dir, "run1/keys.txt", "the keys are in the vault\n", path, sizeof path);
    tp_test_write(dir, "notes.txt", "nothing secret here\n", path, sizeof path);
    /* a link to the PEM is not followed (nor reported twice) */
    snprintf(path, sizeof path, "%s/run1/link.pem", dir);
    assert_int_equal(symlink("../ckpt.pem", path), 0);
    /* too deep: below 9 levels of folders */
    char deep[4096];
    snprintf(deep, sizeof deep, "%s", dir);
    for (int i = 0; i < 9; i++) {
        strcat(deep, "/d");
        assert_int_equal(mkdir(deep, 0700), 0);
    }
    tp_test_write(deep, "deep.pem", "-----BEGIN PRIVATE KEY-----\nx\n", path, sizeof path);
    /* too big: over 1 MiB */
    snprintf(path, sizeof path, "%s/big.log", dir);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("-----BEGIN PRIVATE KEY-----\n", fp);
    for (int i = 0; i < (1 << 20) / 64 + 1; i++)
        fputs("0123456789012345678901234567890123456789012345678901234567890123", fp);
    fclose(fp);

    json_t *facts = json_object();
    json_object_set_new(facts, "missing", json_array());
    char gone[4200];
    snprintf(gone, sizeof gone, "%s/not-there", dir);
    const char *dirs[] = {dir, gone};
    tp_error err = {0};
    int rc = tp_check_scan_secrets(facts, dirs, 2, &err);
    if (rc)
        fail_msg("scan: %d %s", rc, err.msg);

    static const char *const expect[][2] = {
        {"ckpt.pem", "private key"},
        {"run1/id_ed25519", "openssh private key"},
        {"run1/net.key", "trainpath key"},
        {"run1/nvme-connect.sh", "nvme dhchap secret"},
    };
    json_t *want = json_array();
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++)
        json_array_append_new(want, json_pack("{s:s,s:s,s:s}", "dir", dir, "file", expect[i][0],
                                              "kind", expect[i][1]));
    assert_non_null(want);
    expect_json(json_object_get(facts, "secrets"), want, "secrets");
    json_decref(want);
    json_t *m = find_by(json_object_get(facts, "missing"), "part", "secrets");
    if (!m || !strstr(str_at(m, "reason"), "not-there"))
        fail_msg("the unreadable folder is not in missing: %s",
                 dump(json_object_get(facts, "missing")));
    char *all = json_dumps(facts, 0);
    assert_null(strstr(all, "planted"));
    assert_null(strstr(all, "cGxhbnRlZC1zZWNyZXQ"));
    free(all);

    /* a second scan replaces the list */
    rc = tp_check_scan_secrets(facts, NULL, 0, &err);
    assert_int_equal(rc, 0);
    TP_EQ_U64(json_array_size(json_object_get(facts, "secrets")), 0);
    assert_int_equal(tp_check_scan_secrets(NULL, dirs, 1, &err), TP_EUSAGE);
    json_decref(facts);
    assert_int_equal(tp_test_rmtree(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(node_rdma),     cmocka_unit_test(target_open),
        cmocka_unit_test(missing_parts), cmocka_unit_test(root_not_a_folder),
        cmocka_unit_test(live_host),     cmocka_unit_test(secrets_scan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
