/* Storage facts: the NVMe-oF host controllers (sys/class/nvme), native
 * multipath (nvme_core's module parameter) and the NVMe-oF target's
 * configuration (nvmet configfs: subsystems, hosts, ports). Secrets the
 * kernel shows (DH-HMAC-CHAP secrets, TLS keys) are read only to say
 * whether they are set; the value never leaves this file and its buffer is
 * wiped. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "facts_int.h"

/* true when set (non-empty and not "none"), false when not, null when the
 * attribute does not exist (a kernel without the feature). */
static json_t *secret_set(struct fx *c, const char *path)
{
    char buf[512];
    json_t *v;
    if (tp_sysfs_text(path, buf, sizeof buf) < 0)
        v = json_null();
    else
        v = json_boolean(buf[0] && strcmp(buf, "none") != 0);
    explicit_bzero(buf, sizeof buf);
    if (!v)
        c->oom = true;
    return v;
}

static json_t *text_or_null(struct fx *c, const char *path)
{
    char buf[512];
    return tp__check_fx_str(c, tp_sysfs_text(path, buf, sizeof buf) == 0 && buf[0] ? buf
                                                                                           : NULL);
}

static bool is_nvme_ctrl(const char *name)
{
    return tp__check_fx_prefixed_number(name, "nvme");
}

static bool fabrics(const char *transport)
{
    return !strcmp(transport, "tcp") || !strcmp(transport, "rdma") || !strcmp(transport, "fc") ||
           !strcmp(transport, "loop");
}

static void nvme_hosts(struct fx *c)
{
    char dir[PATH_MAX], path[PATH_MAX];
    struct tp_sysfs_names ctrls;
    json_t *list = tp__check_fx_arr(c);
    if (tp__check_fx_path(c, dir, "/sys/class/nvme") < 0 ||
        tp_sysfs_list(dir, FX_LIST, is_nvme_ctrl, &ctrls) < 0) {
        /* no controller of any kind: an empty list is the fact */
        tp__check_fx_set(c, c->facts, "nvme_hosts", list);
        return;
    }
    for (size_t i = 0; i < ctrls.n; i++) {
        const char *ctrl = ctrls.v[i];
        char transport[32];
        tp__check_fx_fmt(path, "%s/%s/transport", dir, ctrl);
        if (tp_sysfs_text(path, transport, sizeof transport) < 0 || !fabrics(transport))
            continue;
        json_t *h = tp__check_fx_obj(c);
        tp__check_fx_set(c, h, "ctrl", tp__check_fx_str(c, ctrl));
        tp__check_fx_set(c, h, "transport", tp__check_fx_str(c, transport));
        tp__check_fx_fmt(path, "%s/%s/address", dir, ctrl);
        tp__check_fx_set(c, h, "address", text_or_null(c, path));
        tp__check_fx_fmt(path, "%s/%s/subsysnqn", dir, ctrl);
        tp__check_fx_set(c, h, "subsysnqn", text_or_null(c, path));
        tp__check_fx_fmt(path, "%s/%s/state", dir, ctrl);
        tp__check_fx_set(c, h, "state", text_or_null(c, path));
        tp__check_fx_fmt(path, "%s/%s/dhchap_secret", dir, ctrl);
        tp__check_fx_set(c, h, "dhchap_secret", secret_set(c, path));
        tp__check_fx_fmt(path, "%s/%s/dhchap_ctrl_secret", dir, ctrl);
        tp__check_fx_set(c, h, "dhchap_ctrl_secret", secret_set(c, path));
        tp__check_fx_fmt(path, "%s/%s/tls_key", dir, ctrl);
        tp__check_fx_set(c, h, "tls_key", secret_set(c, path));
        /* ctrl_loss_tmo: seconds, or "off" (reconnect forever) */
        char buf[32];
        tp__check_fx_fmt(path, "%s/%s/ctrl_loss_tmo", dir, ctrl);
        if (tp_sysfs_text(path, buf, sizeof buf) == 0 && !strcmp(buf, "off"))
            tp__check_fx_set(c, h, "ctrl_loss_tmo", tp__check_fx_int(c, true, -1));
        else
            tp__check_fx_set(c, h, "ctrl_loss_tmo", tp__check_fx_long_json(c, path));
        tp__check_fx_fmt(path, "%s/%s/reconnect_delay", dir, ctrl);
        tp__check_fx_set(c, h, "reconnect_delay", tp__check_fx_long_json(c, path));
        tp__check_fx_push(c, list, h);
    }
    tp_sysfs_names_free(&ctrls);
    tp__check_fx_set(c, c->facts, "nvme_hosts", list);
}

static void nvme_multipath(struct fx *c)
{
    char buf[16];
    if (tp__check_fx_read(c, buf, sizeof buf, "/sys/module/nvme_core/parameters/multipath") < 0) {
        tp__check_fx_set(c, c->facts, "nvme_multipath", json_null());
        tp__check_fx_missing(c, "nvme_multipath",
                             "no sys/module/nvme_core/parameters/multipath "
                             "(nvme_core not loaded)");
        return;
    }
    bool y = buf[0] == 'Y' || buf[0] == 'y' || buf[0] == '1';
    bool n = buf[0] == 'N' || buf[0] == 'n' || buf[0] == '0';
    tp__check_fx_set(c, c->facts, "nvme_multipath", y || n ? json_boolean(y) : json_null());
}

/* The entry names of a configfs folder (links, for allowed_hosts and a
 * port's subsystems); [] when the folder does not exist. */
static json_t *names_json(struct fx *c, const char *path)
{
    json_t *a = tp__check_fx_arr(c);
    struct tp_sysfs_names n;
    if (tp_sysfs_list(path, FX_LIST, NULL, &n) < 0)
        return a;
    for (size_t i = 0; i < n.n; i++)
        tp__check_fx_push(c, a, tp__check_fx_str(c, n.v[i]));
    tp_sysfs_names_free(&n);
    return a;
}

static void nvmet_subsystems(struct fx *c, const char *base, json_t *out)
{
    char dir[PATH_MAX], path[PATH_MAX];
    struct tp_sysfs_names subs;
    tp__check_fx_fmt(dir, "%s/subsystems", base);
    if (tp_sysfs_list(dir, FX_LIST, NULL, &subs) < 0)
        return;
    for (size_t i = 0; i < subs.n; i++) {
        json_t *s = tp__check_fx_obj(c);
        long v = 0;
        tp__check_fx_set(c, s, "nqn", tp__check_fx_str(c, subs.v[i]));
        tp__check_fx_fmt(path, "%s/%s/attr_allow_any_host", dir, subs.v[i]);
        bool ok = tp__check_fx_long_abs(path, &v) == 0;
        tp__check_fx_set(c, s, "allow_any_host", ok ? json_boolean(v != 0) : json_null());
        tp__check_fx_fmt(path, "%s/%s/allowed_hosts", dir, subs.v[i]);
        tp__check_fx_set(c, s, "allowed_hosts", names_json(c, path));
        tp__check_fx_push(c, out, s);
    }
    tp_sysfs_names_free(&subs);
}

static void nvmet_hosts(struct fx *c, const char *base, json_t *out)
{
    char dir[PATH_MAX], path[PATH_MAX];
    struct tp_sysfs_names hosts;
    tp__check_fx_fmt(dir, "%s/hosts", base);
    if (tp_sysfs_list(dir, FX_LIST, NULL, &hosts) < 0)
        return;
    for (size_t i = 0; i < hosts.n; i++) {
        json_t *h = tp__check_fx_obj(c);
        tp__check_fx_set(c, h, "nqn", tp__check_fx_str(c, hosts.v[i]));
        tp__check_fx_fmt(path, "%s/%s/dhchap_key", dir, hosts.v[i]);
        tp__check_fx_set(c, h, "dhchap_key", secret_set(c, path));
        tp__check_fx_fmt(path, "%s/%s/dhchap_ctrl_key", dir, hosts.v[i]);
        tp__check_fx_set(c, h, "dhchap_ctrl_key", secret_set(c, path));
        tp__check_fx_fmt(path, "%s/%s/dhchap_hash", dir, hosts.v[i]);
        tp__check_fx_set(c, h, "dhchap_hash", text_or_null(c, path));
        tp__check_fx_fmt(path, "%s/%s/dhchap_dhgroup", dir, hosts.v[i]);
        tp__check_fx_set(c, h, "dhchap_dhgroup", text_or_null(c, path));
        tp__check_fx_push(c, out, h);
    }
    tp_sysfs_names_free(&hosts);
}

static void nvmet_ports(struct fx *c, const char *base, json_t *out)
{
    static const char *const attrs[][2] = {{"trtype", "addr_trtype"}, {"adrfam", "addr_adrfam"},
                                           {"traddr", "addr_traddr"}, {"trsvcid", "addr_trsvcid"},
                                           {"tsas", "addr_tsas"},     {"treq", "addr_treq"}};
    char dir[PATH_MAX], path[PATH_MAX];
    struct tp_sysfs_names ports;
    tp__check_fx_fmt(dir, "%s/ports", base);
    if (tp_sysfs_list(dir, FX_LIST, NULL, &ports) < 0)
        return;
    for (size_t i = 0; i < ports.n; i++) {
        json_t *p = tp__check_fx_obj(c);
        tp__check_fx_set(c, p, "id", tp__check_fx_str(c, ports.v[i]));
        /* an empty value (addr_tsas of a transport without one, newer
         * kernels) is null like an absent one */
        for (size_t a = 0; a < sizeof attrs / sizeof attrs[0]; a++) {
            tp__check_fx_fmt(path, "%s/%s/%s", dir, ports.v[i], attrs[a][1]);
            tp__check_fx_set(c, p, attrs[a][0], text_or_null(c, path));
        }
        tp__check_fx_fmt(path, "%s/%s/subsystems", dir, ports.v[i]);
        tp__check_fx_set(c, p, "subsystems", names_json(c, path));
        tp__check_fx_push(c, out, p);
    }
    tp_sysfs_names_free(&ports);
}

static void nvmet(struct fx *c)
{
    char base[PATH_MAX];
    if (tp__check_fx_path(c, base, "/sys/kernel/config/nvmet") < 0 || !tp__check_fx_is_dir(base)) {
        tp__check_fx_set(c, c->facts, "nvmet", json_null());
        tp__check_fx_missing(c, "nvmet",
                             "no sys/kernel/config/nvmet (nvmet not loaded or configfs "
                             "not mounted)");
        return;
    }
    json_t *t = tp__check_fx_obj(c), *subs = tp__check_fx_arr(c), *hosts = tp__check_fx_arr(c),
           *ports = tp__check_fx_arr(c);
    nvmet_subsystems(c, base, subs);
    nvmet_hosts(c, base, hosts);
    nvmet_ports(c, base, ports);
    tp__check_fx_set(c, t, "subsystems", subs);
    tp__check_fx_set(c, t, "hosts", hosts);
    tp__check_fx_set(c, t, "ports", ports);
    tp__check_fx_set(c, c->facts, "nvmet", t);
}

void tp__check_fx_storage(struct fx *c)
{
    nvme_hosts(c);
    nvme_multipath(c);
    nvmet(c);
}
