/* The storage-plane rules: NVMe-oF. Jumbo frames; host controllers that
 * survive a path outage, run native multipath, authenticate both ways and
 * use TLS over TCP; nvmet subsystems that admit only listed hosts, which
 * authenticate both ways, and TCP target ports that require TLS. Each
 * rule's table row follows its check. */
#include <stdio.h>
#include <string.h>

#include "rules_int.h"

static void net_mtu_storage(const json_t *facts, const struct tp_policy *p,
                            struct tp_check_result *r)
{
    tp__check_mtu(facts, p, TP_PLANE_STORAGE, r);
}

const struct tp_check_rule tp__check_rule_net_mtu_storage = {
    .id = "NET-MTU-STORAGE",
    .plane = "storage",
    .severity = TP_SEV_WARNING,
    .title = "Storage-plane interfaces have jumbo frames",
    .rationale =
        "NVMe/TCP and NFS move checkpoint shards of hundreds of MiB; at 1500 bytes the CPU cost "
        "per byte and the commit latency of a checkpoint rise.",
    .remediation =
        "Set the MTU of every storage-plane port to the fabric MTU "
        "(`ip link set dev eth4 mtu 9000`) end to end, targets included.",
    .source = "NVIDIA 'Performance Tuning for Mellanox Adapters' (jumbo frames); " SYSCTL_DOC,
    .check = net_mtu_storage,
};

/* ---- NVMe-oF host controllers ---- */

/* The fabrics controllers, or NULL after a SKIP. Loop controllers are a
 * local test transport with nothing on the wire, so they are left out. */
static const json_t *nvme_hosts(const json_t *facts, const char *transport,
                                struct tp_check_result *r)
{
    const json_t *hosts = tp__check_get(facts, "nvme_hosts");
    if (!json_is_array(hosts)) {
        tp__check_nofacts(r, facts, "nvme_hosts", "no NVMe host facts");
        return NULL;
    }
    size_t i;
    json_t *c;
    json_array_foreach(hosts, i, c) {
        const char *t = tp__check_sget(c, "transport");
        if (t && strcmp(t, "loop") != 0 && (!transport || strcmp(t, transport) == 0))
            return hosts;
    }
    tp__check_skip(r, "no NVMe-oF%s%s controllers", transport ? "/" : "",
                   transport ? transport : "");
    return NULL;
}

static bool nvme_wanted(const json_t *c, const char *transport)
{
    const char *t = tp__check_sget(c, "transport");
    return t && strcmp(t, "loop") != 0 && (!transport || strcmp(t, transport) == 0);
}

/* "nvme1 (tcp traddr=10.2.0.9,trsvcid=4420)" */
static void ctrl_name(const json_t *c, char *buf, size_t n)
{
    const char *a = tp__check_sget(c, "address");
    snprintf(buf, n, "%s (%s %s)", tp__check_sget(c, "ctrl") ? tp__check_sget(c, "ctrl") : "?",
             tp__check_sget(c, "transport"), a ? a : "?");
}

static void nvmeof_ctrl_loss(const json_t *facts, const struct tp_policy *p,
                             struct tp_check_result *r)
{
    (void)p;
    const json_t *hosts = nvme_hosts(facts, NULL, r);
    if (!hosts)
        return;
    struct finding f = {0};
    size_t i;
    json_t *c;
    json_array_foreach(hosts, i, c) {
        char name[256];
        long long tmo;
        if (!nvme_wanted(c, NULL))
            continue;
        ctrl_name(c, name, sizeof name);
        if (!tp__check_iget(c, "ctrl_loss_tmo", &tmo))
            tp__check_bad(&f, TP_CHECK_WARN, "%s: ctrl_loss_tmo unknown", name);
        else if (tmo == -1)
            tp__check_ok(&f, "%s: ctrl_loss_tmo -1 (reconnect forever)", name);
        else if (tmo >= 60)
            tp__check_ok(&f, "%s: ctrl_loss_tmo %lld s", name, tmo);
        else
            tp__check_bad(&f, TP_CHECK_FAIL, "%s: ctrl_loss_tmo %lld s", name, tmo);
    }
    tp__check_done(r, &f, "want ctrl_loss_tmo -1 or >= 60 s");
}

const struct tp_check_rule tp__check_rule_nvmeof_ctrl_loss = {
    .id = "NVMEOF-CTRL-LOSS",
    .plane = "storage",
    .severity = TP_SEV_WARNING,
    .title = "NVMe-oF controllers survive a path outage",
    .rationale =
        "A controller that gives up after a short outage fails in-flight checkpoint writes with "
        "EIO; the job dies instead of waiting for the path to come back.",
    .remediation = "Connect with --ctrl-loss-tmo=-1 or >= 60 (nvme connect, or /etc/nvme/config).",
    .source = "nvme-connect(1), --ctrl-loss-tmo (default 600 s)",
    .check = nvmeof_ctrl_loss,
};

static void nvmeof_multipath(const json_t *facts, const struct tp_policy *p,
                             struct tp_check_result *r)
{
    (void)p;
    if (!nvme_hosts(facts, NULL, r))
        return;
    int mp = tp__check_bget(facts, "nvme_multipath");
    if (mp < 0)
        tp__check_nofacts(r, facts, "nvme_multipath",
                          "nvme_core multipath parameter not in the facts");
    else
        tp__check_say(r, mp ? TP_CHECK_PASS : TP_CHECK_FAIL, "nvme_core multipath %s%s",
                      mp ? "Y" : "N", mp ? "" : "; want native multipath (nvme_core.multipath=Y)");
}

const struct tp_check_rule tp__check_rule_nvmeof_multipath = {
    .id = "NVMEOF-MULTIPATH",
    .plane = "storage",
    .severity = TP_SEV_WARNING,
    .title = "Native NVMe multipath is on",
    .rationale =
        "Without native multipath each path is a separate namespace device: a path failure is an "
        "I/O error, and ANA path states are ignored.",
    .remediation = "Load nvme_core with multipath=Y (kernel command line nvme_core.multipath=Y).",
    .source =
        "Linux nvme_core module parameter multipath (drivers/nvme/host/multipath.c); NVM Express "
        "Base Specification, Asymmetric Namespace Access",
    .check = nvmeof_multipath,
};

/* ---- the nvmet target ---- */

static const json_t *nvmet(const json_t *facts, const char *what, struct tp_check_result *r)
{
    const json_t *t = tp__check_get(facts, "nvmet");
    if (!json_is_object(t)) {
        tp__check_nofacts(r, facts, "nvmet", "no nvmet facts (no NVMe-oF target configured)");
        return NULL;
    }
    if (json_array_size(tp__check_get(t, what)) == 0) {
        tp__check_skip(r, "no nvmet %s", what);
        return NULL;
    }
    return t;
}

static void nvmet_any_host(const json_t *facts, const struct tp_policy *p,
                           struct tp_check_result *r)
{
    (void)p;
    const json_t *t = nvmet(facts, "subsystems", r);
    if (!t)
        return;
    struct finding f = {0};
    size_t i;
    json_t *s;
    json_array_foreach(tp__check_get(t, "subsystems"), i, s) {
        const char *nqn = tp__check_sget(s, "nqn") ? tp__check_sget(s, "nqn") : "?";
        int any = tp__check_bget(s, "allow_any_host");
        size_t nh = json_array_size(json_object_get(s, "allowed_hosts"));
        if (any == 1)
            tp__check_bad(&f, TP_CHECK_FAIL, "%s: allow_any_host 1", nqn);
        else if (nh == 0)
            tp__check_bad(&f, TP_CHECK_FAIL, "%s: no allowed_hosts", nqn);
        else if (any < 0)
            tp__check_bad(&f, TP_CHECK_WARN, "%s: allow_any_host unknown", nqn);
        else
            tp__check_ok(&f, "%s: allow_any_host 0, %zu allowed hosts", nqn, nh);
    }
    tp__check_done(r, &f, "want allow_any_host 0 and an allowed_hosts list on every subsystem");
}

const struct tp_check_rule tp__check_rule_nvmet_any_host = {
    .id = "NVMET-ANY-HOST",
    .plane = "storage",
    .severity = TP_SEV_CRITICAL,
    .title = "nvmet subsystems admit only listed hosts",
    .rationale =
        "A subsystem with allow_any_host lets any host on the storage fabric connect and read or "
        "overwrite datasets and checkpoints.",
    .remediation =
        "echo 0 > subsystems/<nqn>/attr_allow_any_host and link each host under "
        "subsystems/<nqn>/allowed_hosts.",
    .source =
        "Linux nvmet configfs (drivers/nvme/target/configfs.c): attr_allow_any_host, allowed_hosts",
    .check = nvmet_any_host,
};

static const json_t *nvmet_host(const json_t *t, const char *nqn)
{
    size_t i;
    json_t *h;
    json_array_foreach(tp__check_get(t, "hosts"), i, h) {
        const char *n = tp__check_sget(h, "nqn");
        if (n && strcmp(n, nqn) == 0)
            return h;
    }
    return NULL;
}

static void nvmet_dhchap(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    (void)p;
    const json_t *t = nvmet(facts, "subsystems", r);
    if (!t)
        return;
    struct finding f = {0};
    size_t i, j;
    json_t *s, *h;
    json_array_foreach(tp__check_get(t, "subsystems"), i, s) {
        json_array_foreach(json_object_get(s, "allowed_hosts"), j, h) {
            const char *nqn = json_string_value(h);
            if (!nqn)
                continue;
            const json_t *host = nvmet_host(t, nqn);
            int key = tp__check_bget(host, "dhchap_key"),
                ctrl = tp__check_bget(host, "dhchap_ctrl_key");
            if (key == 1 && ctrl == 1)
                tp__check_ok(&f, "%s: dhchap_key and dhchap_ctrl_key", nqn);
            else
                tp__check_bad(&f, TP_CHECK_FAIL, "%s: %s%s", nqn, key == 1 ? "" : "no dhchap_key",
                              ctrl == 1  ? ""
                              : key == 1 ? "no dhchap_ctrl_key"
                                         : ", no dhchap_ctrl_key");
        }
    }
    if (!f.good[0] && !f.bad[0]) {
        tp__check_skip(r, "no allowed hosts in any nvmet subsystem");
        return;
    }
    tp__check_done(r, &f,
                   "every allowed host needs dhchap_key and dhchap_ctrl_key (bidirectional)");
}

const struct tp_check_rule tp__check_rule_nvmet_dhchap = {
    .id = "NVMET-DHCHAP",
    .plane = "storage",
    .severity = TP_SEV_CRITICAL,
    .title = "Allowed hosts authenticate both ways",
    .rationale =
        "A host NQN is only a name any initiator can claim; DH-HMAC-CHAP proves the host, and the "
        "controller key proves the target to the host.",
    .remediation =
        "Set hosts/<nqn>/dhchap_key and dhchap_ctrl_key (nvme gen-dhchap-key) for every allowed "
        "host.",
    .source =
        "NVM Express TP 8006 (in-band authentication, DH-HMAC-CHAP); Linux nvmet configfs: "
        "hosts/<nqn>/dhchap_key, dhchap_ctrl_key",
    .check = nvmet_dhchap,
};

static void nvmet_tls(const json_t *facts, const struct tp_policy *p, struct tp_check_result *r)
{
    (void)p;
    const json_t *t = nvmet(facts, "ports", r);
    if (!t)
        return;
    struct finding f = {0};
    size_t i;
    json_t *port;
    json_array_foreach(tp__check_get(t, "ports"), i, port) {
        const char *tr = tp__check_sget(port, "trtype"), *tsas = tp__check_sget(port, "tsas");
        const char *treq = tp__check_sget(port, "treq");
        if (!tr || strcmp(tr, "tcp") != 0)
            continue;
        char d[160];
        snprintf(d, sizeof d, "port %s (tcp %s:%s)", tp__check_sget(port, "id"),
                 tp__check_sget(port, "traddr"), tp__check_sget(port, "trsvcid"));
        if (tsas && strcmp(tsas, "tls1.3") == 0 && treq && strcmp(treq, "required") == 0)
            tp__check_ok(&f, "%s: tsas tls1.3, treq required", d);
        else
            tp__check_bad(&f, TP_CHECK_FAIL, "%s: tsas %s, treq %s", d, tsas ? tsas : "unknown",
                          treq ? treq : "unknown");
    }
    if (!f.good[0] && !f.bad[0]) {
        tp__check_skip(r, "no NVMe/TCP target ports");
        return;
    }
    tp__check_done(r, &f, "want tsas tls1.3 and treq required on NVMe/TCP ports");
}

const struct tp_check_rule tp__check_rule_nvmet_tls = {
    .id = "NVMET-TLS",
    .plane = "storage",
    .severity = TP_SEV_WARNING,
    .title = "NVMe/TCP target ports require TLS",
    .rationale =
        "Without TLS, checkpoint and dataset blocks cross the storage plane in clear and can be "
        "altered in flight.",
    .remediation =
        "Set ports/<id>/addr_tsas to tls1.3 and addr_treq to required, with PSKs in the .nvme "
        "keyring.",
    .source =
        "NVM Express TP 8011 (TLS 1.3 for NVMe/TCP); NVMe over TCP Transport Specification; Linux "
        "nvmet configfs: addr_tsas, addr_treq",
    .check = nvmet_tls,
};

/* ---- NVMe-oF host controllers: authentication ---- */

static void nvmeof_host_dhchap(const json_t *facts, const struct tp_policy *p,
                               struct tp_check_result *r)
{
    (void)p;
    const json_t *hosts = nvme_hosts(facts, NULL, r);
    if (!hosts)
        return;
    struct finding f = {0};
    size_t i;
    json_t *c;
    json_array_foreach(hosts, i, c) {
        char name[256];
        if (!nvme_wanted(c, NULL))
            continue;
        ctrl_name(c, name, sizeof name);
        int s = tp__check_bget(c, "dhchap_secret"), cs = tp__check_bget(c, "dhchap_ctrl_secret");
        if (s == 0 || cs == 0)
            tp__check_bad(&f, TP_CHECK_FAIL, "%s: dhchap_secret %s, dhchap_ctrl_secret %s", name,
                          s ? s > 0 ? "set" : "unknown" : "none",
                          cs ? cs > 0 ? "set" : "unknown" : "none");
        else if (s < 0 || cs < 0)
            tp__check_bad(&f, TP_CHECK_WARN, "%s: DH-HMAC-CHAP secrets unknown", name);
        else
            tp__check_ok(&f, "%s: dhchap_secret and dhchap_ctrl_secret set", name);
    }
    tp__check_done(r, &f, "connect with --dhchap-secret and --dhchap-ctrl-secret (bidirectional)");
}

const struct tp_check_rule tp__check_rule_nvmeof_host_dhchap = {
    .id = "NVMEOF-HOST-DHCHAP",
    .plane = "storage",
    .severity = TP_SEV_WARNING,
    .title = "NVMe-oF host controllers authenticate both ways",
    .rationale =
        "Without a controller secret the host does not verify the target, so a rogue target on "
        "the storage plane can serve forged checkpoint data.",
    .remediation = "nvme connect ... --dhchap-secret=<host key> --dhchap-ctrl-secret=<ctrl key>.",
    .source =
        "NVM Express TP 8006 (DH-HMAC-CHAP); nvme-connect(1) --dhchap-secret, --dhchap-ctrl-secret",
    .check = nvmeof_host_dhchap,
};

static void nvmeof_host_tls(const json_t *facts, const struct tp_policy *p,
                            struct tp_check_result *r)
{
    (void)p;
    const json_t *hosts = nvme_hosts(facts, "tcp", r);
    if (!hosts)
        return;
    struct finding f = {0};
    size_t i;
    json_t *c;
    json_array_foreach(hosts, i, c) {
        char name[256];
        if (!nvme_wanted(c, "tcp"))
            continue;
        ctrl_name(c, name, sizeof name);
        int k = tp__check_bget(c, "tls_key");
        if (k == 1)
            tp__check_ok(&f, "%s: tls_key set", name);
        else if (k == 0)
            tp__check_bad(&f, TP_CHECK_FAIL, "%s: no tls_key", name);
        else
            tp__check_bad(&f, TP_CHECK_WARN, "%s: tls_key unknown", name);
    }
    tp__check_done(r, &f, "connect NVMe/TCP with --tls and a configured PSK");
}

const struct tp_check_rule tp__check_rule_nvmeof_host_tls = {
    .id = "NVMEOF-HOST-TLS",
    .plane = "storage",
    .severity = TP_SEV_WARNING,
    .title = "NVMe/TCP host controllers use TLS",
    .rationale = "NVMe/TCP without TLS sends blocks in clear over the storage plane.",
    .remediation = "nvme connect -t tcp --tls (PSK in the .nvme keyring, tlshd running).",
    .source = "NVM Express TP 8011 (TLS 1.3 for NVMe/TCP); nvme-connect(1) --tls, --tls-key",
    .check = nvmeof_host_tls,
};
