/* The facts driver of trainpath check: one JSON object describing a node,
 * read from this host or from a snapshot folder laid out as the kernel lays
 * out /proc, /sys and configfs. The driver sets the frame (schema, root,
 * host, missing) and hands the context to the collectors of facts_net.c,
 * facts_sysctl.c, facts_storage.c and facts_node.c in the order of
 * docs/check.md; the helpers they share are in facts_util.c, the secrets
 * scan of result folders in facts_secrets.c.
 *
 * The main idea: nothing is an error except a bad root (not a folder, or
 * neither proc/ nor sys/ under it: not a snapshot) and memory. A part that
 * cannot be read becomes null (or is left out, for single sysctls) and is
 * named in "missing" with the reason, so a rule never guesses: the node
 * lacks it (a rule SKIPs), or it is one every node has and is "unseen" (a
 * rule that needs it is UNKNOWN). */
#include "tp/check.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "facts_int.h"

int tp_check_facts(const char *root, json_t **facts, tp_error *err)
{
    if (!facts)
        return tp_error_set(err, TP_EUSAGE, "check facts: no output given");
    *facts = NULL;
    struct fx *c = calloc(1, sizeof *c);
    if (!c)
        return tp_error_set(err, TP_ENOMEM, "check facts: out of memory");

    size_t len = root ? strlen(root) : 0;
    while (len > 1 && root[len - 1] == '/')
        len--;
    c->live = len == 0 || (len == 1 && root[0] == '/');
    if (!c->live) {
        struct stat st;
        if (len >= PATH_MAX - 256) {
            free(c);
            return tp_error_set(err, TP_EUSAGE, "--root %s: path too long", root);
        }
        if (stat(root, &st) < 0) {
            int e = errno;
            free(c);
            return tp_error_errno(err, TP_EUSAGE, e, "--root %s", root);
        }
        if (!S_ISDIR(st.st_mode)) {
            free(c);
            return tp_error_set(err, TP_EUSAGE, "--root %s: not a folder", root);
        }
        memcpy(c->root, root, len);
        c->root[len] = '\0';
        /* a mistyped folder (/tmp, the results folder) is not a snapshot:
         * every fact would be unseen, so say so once, as bad input */
        char proc[PATH_MAX], sys[PATH_MAX];
        if (tp__check_fx_path(c, proc, "/proc") < 0 || tp__check_fx_path(c, sys, "/sys") < 0 ||
            (!tp__check_fx_is_dir(proc) && !tp__check_fx_is_dir(sys))) {
            free(c);
            return tp_error_set(err, TP_EUSAGE,
                                "--root %s: not a snapshot: neither proc/ nor sys/ under it (a "
                                "snapshot is laid out as the kernel lays out /proc and /sys)",
                                root);
        }
    }

    c->facts = tp__check_fx_obj(c);
    c->missing = tp__check_fx_arr(c);
    tp__check_fx_set(c, c->facts, "schema", tp__check_fx_str(c, "trainpath.facts/1"));
    tp__check_fx_set(c, c->facts, "root", tp__check_fx_str(c, c->live ? "/" : c->root));
    char host[256];
    if (tp__check_fx_read(c, host, sizeof host, "/proc/sys/kernel/hostname") == 0 && host[0]) {
        tp__check_fx_set(c, c->facts, "host", tp__check_fx_str(c, host));
    } else {
        tp__check_fx_set(c, c->facts, "host", tp__check_fx_str(c, NULL));
        tp__check_fx_unseen(c, "host", "no proc/sys/kernel/hostname");
    }
    /* missing is filled by everything below; it sits near the top so a
     * reader sees at once what the facts lack */
    json_incref(c->missing);
    tp__check_fx_set(c, c->facts, "missing", c->missing);

    tp__check_fx_net_interfaces(c);
    tp__check_fx_net_routes(c);
    tp__check_fx_net_listeners(c);
    tp__check_fx_net_nftables(c);
    tp__check_fx_sysctl(c);
    tp__check_fx_node_rdma(c);
    tp__check_fx_storage(c);
    tp__check_fx_node(c);
    tp__check_fx_set(c, c->facts, "secrets", json_null()); /* until tp_check_scan_secrets */

    bool oom = c->oom || !c->facts || !c->missing;
    json_decref(c->missing);
    if (oom) {
        json_decref(c->facts);
        free(c);
        return tp_error_set(err, TP_ENOMEM, "check facts: out of memory");
    }
    *facts = c->facts;
    free(c);
    return 0;
}
