/* The audits of trainpath check: one node (its policy, its facts, collected
 * or read from a file, the secrets scan and every rule) and a fleet (many
 * hosts' facts files under one policy, the findings grouped by rule). Each
 * fills the "results" of a result document the caller made and writes; the
 * verdict is results.nagios; tp_check_finish turns it (or the error) into
 * the status and the exit status, one decision for both. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tp/check.h"
#include "tp/json.h"
#include "tp/result.h"

#define FACTS_SCHEMA "trainpath.facts/1"

static bool is_facts(const json_t *o)
{
    const char *schema = json_string_value(json_object_get(o, "schema"));
    return schema && strcmp(schema, FACTS_SCHEMA) == 0;
}

int tp_check_load_facts(const char *path, json_t **out, tp_error *err)
{
    json_t *d = NULL;
    int rc = tp_json_load(path, &d, err);
    if (rc)
        return rc;
    if (is_facts(d)) {
        *out = d;
        return 0;
    }
    json_t *inner = json_object_get(json_object_get(d, "results"), "facts");
    if (is_facts(inner)) {
        *out = json_incref(inner);
        json_decref(d);
        return 0;
    }
    json_decref(d);
    return tp_error_set(err, TP_EUSAGE,
                        "%s: not trainpath facts (want the output of trainpath check facts, or a "
                        "trainpath check result)",
                        path);
}

json_t *tp_check_config_json(const struct tp_check_opts *o)
{
    if (!o->fleet)
        return json_pack("{s:s?, s:s?, s:s?, s:s?}", "policy", o->policy, "root", o->root,
                         "facts", o->facts, "only", o->only);
    json_t *cfg = json_pack("{s:s?, s:s?}", "policy", o->policy, "only", o->only),
           *files = json_array();
    for (int i = 0; i < o->nfleet; i++)
        json_array_append_new(files, json_string(o->fleet[i]));
    json_object_set_new(cfg, "fleet", files);
    return cfg;
}

/* A new, empty results object in doc (in place of the one it had). */
static json_t *new_results(json_t *doc, tp_error *err)
{
    json_t *results = json_object();
    if (!results || json_object_set_new(doc, "results", results) != 0) {
        tp_error_set(err, TP_ENOMEM, "check: out of memory");
        return NULL;
    }
    return results;
}

static json_t *nagios_json(int code)
{
    return json_pack("{s:i, s:s}", "code", code, "word", tp_check_nagios_word(code));
}

/* The inputs o names that the audit reads later: every --results folder
 * must be one (a typo would otherwise scan nothing and pass), and they are
 * scanned on this host, so not with facts collected elsewhere. */
static int check_inputs(const struct tp_check_opts *o, tp_error *err)
{
    if (o->only && tp_check_only_ok(o->only, err))
        return TP_EUSAGE;
    if (o->facts && o->nresults > 0)
        return tp_error_set(err, TP_EUSAGE,
                            "--results %s: scans this host's folders, not with --facts %s",
                            o->results[0], o->facts);
    for (int i = 0; i < o->nresults; i++) {
        struct stat st;
        if (stat(o->results[i], &st) < 0)
            return tp_error_errno(err, TP_EUSAGE, errno, "--results %s", o->results[i]);
        if (!S_ISDIR(st.st_mode))
            return tp_error_set(err, TP_EUSAGE, "--results %s: not a folder", o->results[i]);
        if (access(o->results[i], R_OK | X_OK) < 0)
            return tp_error_errno(err, TP_EUSAGE, errno, "--results %s", o->results[i]);
    }
    return 0;
}

/* The facts of o: read from o->facts, or collected and then scanned for
 * the secrets of the policy's (p, may be NULL) and o's results folders. */
static int audit_facts(const struct tp_check_opts *o, const struct tp_policy *p, json_t **facts,
                       tp_error *err)
{
    if (o->facts)
        return tp_check_load_facts(o->facts, facts, err);
    int rc = tp_check_facts(o->root, facts, err);
    int nd = (p ? p->nresults_dirs : 0) + (o->nresults > 0 ? o->nresults : 0);
    if (rc || nd == 0)
        return rc;
    const char **dirs = calloc((size_t)nd, sizeof *dirs);
    if (!dirs)
        return tp_error_set(err, TP_ENOMEM, "check: out of memory");
    int n = 0;
    for (int i = 0; p && i < p->nresults_dirs; i++)
        dirs[n++] = p->results_dirs[i];
    for (int i = 0; i < o->nresults; i++)
        dirs[n++] = o->results[i];
    rc = tp_check_scan_secrets(*facts, dirs, n, err);
    if (rc == 0)
        rc = tp_check_scan_counters(*facts, dirs, n, err);
    free(dirs);
    return rc;
}

/* findings without the rules o->only leaves out (all kept without it):
 * what is left is what the summary counts and the verdict is made of */
static json_t *picked(json_t *findings, const struct tp_check_opts *o)
{
    for (size_t i = 0; findings && o->only && i < json_array_size(findings);) {
        const char *id = json_string_value(json_object_get(json_array_get(findings, i), "id"));
        if (id && !tp_check_only_has(o->only, id))
            json_array_remove(findings, i);
        else
            i++;
    }
    return findings;
}

int tp_check_audit(const struct tp_check_opts *o, struct tp_policy *p, json_t *doc, tp_error *err)
{
    json_t *results = new_results(doc, err), *facts = NULL;
    if (!results)
        return TP_ENOMEM;
    int rc = check_inputs(o, err);
    if (rc == 0 && o->policy)
        rc = tp_policy_parse(o->policy, p, err);
    const struct tp_policy *pol = o->policy ? p : NULL; /* none: the node rules only */
    if (rc == 0)
        rc = audit_facts(o, pol, &facts, err);
    json_t *findings = rc == 0 ? picked(tp_check_evaluate(facts, pol), o) : NULL;
    json_t *sum = findings ? tp_check_summary(findings) : NULL;
    if (rc == 0 && !sum)
        rc = tp_error_set(err, TP_ENOMEM, "check: out of memory");
    if (rc) {
        json_decref(findings);
        json_decref(facts);
        return rc;
    }
    int code = tp_check_nagios(findings);
    const char *host = json_string_value(json_object_get(facts, "host"));
    json_object_set_new(results, "host", json_string(host ? host : ""));
    if (pol)
        json_object_set_new(results, "role", json_string(tp_role_name(pol->role)));
    json_object_set_new(results, "nagios", nagios_json(code));
    json_object_set_new(results, "summary", sum);
    json_object_set_new(results, "findings", findings);
    json_object_set_new(results, "facts", facts);
    return 0;
}

/* One rule's group of the fleet: the hosts that fail or warn on it, with
 * their evidence, and how many passed, skipped or could not tell. */
static json_t *rule_group(const struct tp_check_rule *r)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:[], s:[], s:i, s:i, s:i}", "id", r->id, "plane",
                     r->plane, "severity", tp_check_severity_name(r->severity), "title", r->title,
                     "fail", "warn", "pass", 0, "skip", 0, "unknown", 0);
}

/* Add one host's findings (in rule order) to the groups of by_rule. */
static void group_findings(json_t *by_rule, const json_t *findings, const char *host)
{
    size_t k;
    const json_t *f;
    json_array_foreach(findings, k, f) {
        json_t *g = json_array_get(by_rule, k);
        const char *st = json_string_value(json_object_get(f, "status"));
        if (strcmp(st, "FAIL") == 0 || strcmp(st, "WARN") == 0) {
            json_array_append_new(json_object_get(g, strcmp(st, "FAIL") == 0 ? "fail" : "warn"),
                                  json_pack("{s:s, s:O}", "host", host, "evidence",
                                            json_object_get(f, "evidence")));
        } else {
            const char *key = strcmp(st, "PASS") == 0   ? "pass"
                              : strcmp(st, "SKIP") == 0 ? "skip"
                                                        : "unknown";
            json_object_set_new(g, key,
                                json_integer(json_integer_value(json_object_get(g, key)) + 1));
        }
    }
}

/* Nagios codes worst last: OK, WARNING, UNKNOWN, CRITICAL (tp_check_nagios) */
static int rank(int code)
{
    static const int r[] = {0, 1, 3, 2};
    return code >= 0 && code <= 3 ? r[code] : 2;
}

int tp_check_fleet(const struct tp_check_opts *o, struct tp_policy *p, json_t *doc, tp_error *err)
{
    json_t *results = new_results(doc, err);
    if (!results)
        return TP_ENOMEM;
    int rc = o->policy ? 0 : tp_error_set(err, TP_EUSAGE, "check fleet: no policy given");
    if (rc == 0 && o->only)
        rc = tp_check_only_ok(o->only, err);
    if (rc == 0)
        rc = tp_policy_parse(o->policy, p, err);
    json_t *hosts = json_array(), *by_rule = json_array();
    json_object_set_new(results, "hosts", hosts);
    json_object_set_new(results, "by_rule", by_rule);
    for (size_t r = 0; rc == 0 && r < tp_check_nrules; r++)
        if (tp_check_only_has(o->only, tp_check_rules[r]->id))
            json_array_append_new(by_rule, rule_group(tp_check_rules[r]));
    int worst = 0;
    for (int i = 0; rc == 0 && i < o->nfleet; i++) {
        json_t *facts = NULL;
        rc = tp_check_load_facts(o->fleet[i], &facts, err);
        if (rc)
            break;
        json_t *findings = picked(tp_check_evaluate(facts, p), o);
        json_t *sum = findings ? tp_check_summary(findings) : NULL;
        if (!sum) {
            json_decref(findings);
            json_decref(facts);
            rc = tp_error_set(err, TP_ENOMEM, "check fleet: out of memory");
            break;
        }
        int code = tp_check_nagios(findings);
        worst = rank(code) > rank(worst) ? code : worst;
        const char *host = json_string_value(json_object_get(facts, "host"));
        char name[300];
        snprintf(name, sizeof name, "%s", host && *host ? host : o->fleet[i]);
        json_array_append_new(hosts, json_pack("{s:s, s:s, s:i, s:o}", "host", name, "file",
                                               o->fleet[i], "nagios", code, "summary", sum));
        group_findings(by_rule, findings, name);
        json_decref(findings);
        json_decref(facts);
    }
    if (rc)
        return rc;
    json_object_set_new(results, "nagios", nagios_json(worst));
    return 0;
}

int tp_check_finish(json_t *doc, int rc, const char *message)
{
    const json_t *n =
        json_object_get(json_object_get(json_object_get(doc, "results"), "nagios"), "code");
    long long verdict = json_is_integer(n) ? json_integer_value(n) : 3;
    int code = rc == 0 && verdict >= 0 && verdict <= 3 ? (int)verdict : 3;
    tp_result_finish(doc, rc, rc ? message : "");
    json_t *st = json_object_get(doc, "status");
    /* a signal keeps its 128 + N (tp_result_finish); everything else is
     * Nagios: the verdict, or UNKNOWN when the audit could not run */
    long long ex = json_integer_value(json_object_get(st, "exit_code"));
    if (ex < 128)
        ex = code;
    json_object_set_new(st, "exit_code", json_integer(ex));
    return (int)ex;
}
