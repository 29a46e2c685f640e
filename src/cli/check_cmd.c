/* trainpath check: the node audit.
 *
 *   trainpath check facts [--root DIR] [--json FILE]
 *   trainpath check --policy FILE [--root DIR | --facts FILE] [--results DIR]...
 *                   [--json FILE] [-q]
 *   trainpath check --policy FILE --fleet FACTS.json...
 *   trainpath check rules
 *
 * The audit exits with Nagios codes (0 ok, 1 warning, 2 critical, 3
 * unknown), so it can gate a Slurm prolog or a Kubernetes preflight; a
 * policy or facts file that cannot be used is UNKNOWN (3), not CRITICAL. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tp/check.h"
#include "tp/result.h"

#define NAGIOS_UNKNOWN 3
#define MAX_RESULTS 4

static void usage(FILE *f)
{
    fprintf(f,
            "usage: trainpath check facts [--root DIR] [--json FILE]\n"
            "       trainpath check [--policy FILE] [--root DIR | --facts FILE] [--results DIR]...\n"
            "                       [--json FILE] [-q]\n"
            "       trainpath check --policy FILE --fleet FACTS.json...\n"
            "       trainpath check rules\n"
            "\n"
            "An implementation checklist and a plane-aware security audit of a node: its\n"
            "facts (interfaces, listeners, nftables, sysctls, RDMA, NVMe-oF, CPU, NUMA,\n"
            "memory, IOMMU, time) against a policy naming its planes (management, control,\n"
            "data, storage), their CIDRs, interfaces and the services each may expose.\n"
            "  --policy FILE   the plane policy (YAML; docs/examples/policy.yaml); without\n"
            "                  one, the node rules only (the plane rules skip)\n"
            "  --root DIR      read /proc, /sys and configfs under DIR (a snapshot)\n"
            "  --facts FILE    audit facts collected elsewhere (trainpath check facts --json)\n"
            "  --results DIR   also look for secrets in DIR (besides the policy's results)\n"
            "  --fleet FILE... audit many hosts' facts, findings grouped by rule\n"
            "  --json FILE     write the result document (atomically; - for stdout)\n"
            "  -q, --quiet     no table\n"
            "\n"
            "Exit codes (Nagios): 0 every rule passed or was skipped, 1 a warning, 2 a\n"
            "critical rule failed, 3 unknown (the policy or the facts could not be used).\n"
            "`check facts` exits 0, or 2 on bad input.\n");
}

struct opts {
    const char *policy, *root, *facts, *json;
    const char *results[MAX_RESULTS];
    int nresults;
    char **fleet;
    int nfleet;
    bool quiet;
};

static const struct option long_opts[] = {
    {"policy", required_argument, NULL, 'p'}, {"root", required_argument, NULL, 'r'},
    {"facts", required_argument, NULL, 'f'},  {"results", required_argument, NULL, 'R'},
    {"fleet", no_argument, NULL, 'F'},        {"json", required_argument, NULL, 'j'},
    {"quiet", no_argument, NULL, 'q'},        {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* 1: --help; 0: parsed; <0: error. */
static int parse(int argc, char **argv, struct opts *o, tp_error *err)
{
    bool fleet = false;
    int opt;
    opterr = 0;
    optind = 1;
    while ((opt = getopt_long(argc, argv, ":qh", long_opts, NULL)) != -1) {
        switch (opt) {
        case 'p': o->policy = optarg; break;
        case 'r': o->root = optarg; break;
        case 'f': o->facts = optarg; break;
        case 'R':
            if (o->nresults == MAX_RESULTS)
                return tp_error_set(err, TP_EUSAGE, "--results: at most %d folders", MAX_RESULTS);
            o->results[o->nresults++] = optarg;
            break;
        case 'F': fleet = true; break;
        case 'j': o->json = optarg; break;
        case 'q': o->quiet = true; break;
        case 'h': usage(stdout); return 1;
        case ':': return tp_error_set(err, TP_EUSAGE, "%s: needs a value", argv[optind - 1]);
        default:
            return tp_error_set(err, TP_EUSAGE, "%s: unknown option (see trainpath check --help)",
                                argv[optind - 1]);
        }
    }
    if (fleet) {
        o->fleet = argv + optind;
        o->nfleet = argc - optind;
        if (o->nfleet == 0)
            return tp_error_set(err, TP_EUSAGE, "--fleet: give the facts files");
        if (o->root || o->facts)
            return tp_error_set(err, TP_EUSAGE, "--fleet takes facts files, not --root or --facts");
    } else if (optind < argc) {
        return tp_error_set(err, TP_EUSAGE, "%s: unexpected argument", argv[optind]);
    }
    if (o->root && o->facts)
        return tp_error_set(err, TP_EUSAGE, "give --root or --facts, not both");
    return 0;
}

/* Write doc to path (if any); a write error replaces rc when rc was 0. */
static int write_doc(json_t *doc, const char *path, int rc, const tp_error *err)
{
    tp_result_finish(doc, rc, rc ? err->msg : "");
    tp_error werr;
    int wrc = path ? cli_write_result(doc, path, &werr) : 0;
    json_decref(doc);
    if (wrc < 0) {
        cli_fail(&werr);
        return wrc;
    }
    return 0;
}

static int facts_cmd(int argc, char **argv)
{
    struct opts o = {0};
    tp_error err = {0};
    int rc = parse(argc, argv, &o, &err);
    if (rc == 1)
        return 0;
    if (rc == 0 && (o.policy || o.facts || o.fleet || o.nresults))
        rc = tp_error_set(&err, TP_EUSAGE, "check facts takes --root and --json only");
    if (rc == 0 && o.json)
        rc = cli_json_path_ok(o.json, &err);
    if (rc)
        return cli_fail(&err);
    json_t *facts = NULL;
    rc = tp_check_facts(o.root, &facts, &err);
    if (rc)
        return cli_fail(&err);
    if (!o.json || strcmp(o.json, "-") == 0) {
        char *s = json_dumps(facts, JSON_INDENT(2) | JSON_SORT_KEYS);
        if (s)
            puts(s);
        free(s);
        rc = s ? 0 : tp_error_set(&err, TP_ENOMEM, "out of memory");
    } else {
        /* a facts document is not a result document: written as it is */
        rc = cli_write_result(facts, o.json, &err);
    }
    json_decref(facts);
    return rc ? cli_fail(&err) : 0;
}

static void print_findings(FILE *out, const char *host, const struct tp_policy *p,
                           const json_t *findings)
{
    size_t i;
    const json_t *f;
    if (p)
        fprintf(out, "# trainpath check: %s, policy %s (role %s), %zu rules\n", host, p->file,
                tp_role_name(p->role), json_array_size(findings));
    else
        fprintf(out, "# trainpath check: %s, no policy (the plane rules skip), %zu rules\n", host,
                json_array_size(findings));
    json_array_foreach(findings, i, f) {
        const char *st = json_string_value(json_object_get(f, "status"));
        fprintf(out, "%-4s  %-8s  %-28s %-10s %s\n", st,
               json_string_value(json_object_get(f, "severity")),
               json_string_value(json_object_get(f, "id")),
               json_string_value(json_object_get(f, "plane")),
               json_string_value(json_object_get(f, "evidence")));
        if (strcmp(st, "FAIL") == 0 || strcmp(st, "WARN") == 0)
            fprintf(out, "      remediation: %s\n",
                   json_string_value(json_object_get(f, "remediation")));
    }
}

static json_t *summary(const json_t *findings)
{
    int n[4] = {0};
    size_t i;
    const json_t *f;
    json_array_foreach(findings, i, f) {
        const char *st = json_string_value(json_object_get(f, "status"));
        for (int k = 0; k < 4; k++)
            if (st && strcmp(st, tp_check_status_name((enum tp_check_status)k)) == 0)
                n[k]++;
    }
    return json_pack("{s:i, s:i, s:i, s:i}", "pass", n[TP_CHECK_PASS], "warn", n[TP_CHECK_WARN],
                     "fail", n[TP_CHECK_FAIL], "skip", n[TP_CHECK_SKIP]);
}

static const char *nagios_word(int code)
{
    static const char *const w[] = {"OK", "WARNING", "CRITICAL", "UNKNOWN"};
    return code >= 0 && code <= 3 ? w[code] : "UNKNOWN";
}

/* Facts from a file: a facts object, or a check result document holding one. */
static int load_facts(const char *path, json_t **out, tp_error *err)
{
    json_error_t je;
    json_t *d = json_load_file(path, 0, &je);
    if (!d)
        return je.line > 0 ? tp_error_set(err, TP_EUSAGE, "%s:%d:%d: not JSON: %s", path, je.line,
                                          je.column, je.text)
                           : tp_error_set(err, TP_EUSAGE, "%s: %s", path, je.text);
    const char *schema = json_string_value(json_object_get(d, "schema"));
    if (schema && strcmp(schema, "trainpath.facts/1") == 0) {
        *out = d;
        return 0;
    }
    json_t *inner = json_object_get(json_object_get(d, "results"), "facts");
    schema = json_string_value(json_object_get(inner, "schema"));
    if (schema && strcmp(schema, "trainpath.facts/1") == 0) {
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

static int audit(struct opts *o, struct tp_policy *p)
{
    tp_error err = {0};
    json_t *cfg = json_pack("{s:s?, s:s?, s:s?}", "policy", o->policy, "root", o->root, "facts",
                            o->facts);
    json_t *doc = tp_result_new("check", cfg), *facts = NULL, *results = json_object();
    json_object_set_new(doc, "results", results);
    int rc = o->policy ? tp_policy_parse(o->policy, p, &err) : 0;
    if (!o->policy)
        p = NULL; /* the node rules only */
    if (rc == 0)
        rc = o->facts ? load_facts(o->facts, &facts, &err) : tp_check_facts(o->root, &facts, &err);
    if (rc == 0) {
        const char *dirs[2 * MAX_RESULTS];
        int nd = 0;
        for (int i = 0; p && i < p->nresults_dirs; i++)
            dirs[nd++] = p->results_dirs[i];
        for (int i = 0; i < o->nresults; i++)
            dirs[nd++] = o->results[i];
        if (nd && !o->facts)
            rc = tp_check_scan_secrets(facts, dirs, nd, &err);
    }
    if (rc) {
        if (!o->quiet || !o->json)
            cli_fail(&err);
        write_doc(doc, o->json, rc, &err);
        json_decref(facts);
        return NAGIOS_UNKNOWN;
    }
    json_t *findings = tp_check_evaluate(facts, p);
    int code = tp_check_nagios(findings);
    const char *host = json_string_value(json_object_get(facts, "host"));
    FILE *out = o->json && strcmp(o->json, "-") == 0 ? stderr : stdout;
    if (!o->quiet)
        print_findings(out, host ? host : "?", p, findings);
    json_t *sum = summary(findings);
    if (!o->quiet)
        fprintf(out, "# %lld pass, %lld warn, %lld fail, %lld skip: %s (exit %d)\n",
                json_integer_value(json_object_get(sum, "pass")),
                json_integer_value(json_object_get(sum, "warn")),
                json_integer_value(json_object_get(sum, "fail")),
                json_integer_value(json_object_get(sum, "skip")), nagios_word(code), code);
    json_object_set_new(results, "host", json_string(host ? host : ""));
    if (p)
        json_object_set_new(results, "role", json_string(tp_role_name(p->role)));
    json_object_set_new(results, "nagios", json_pack("{s:i, s:s}", "code", code, "word",
                                                     nagios_word(code)));
    json_object_set_new(results, "summary", sum);
    json_object_set_new(results, "findings", findings);
    json_object_set_new(results, "facts", facts);
    /* the audit ran: the document is "ok" whatever it found; the verdict is
     * in results.nagios */
    if (write_doc(doc, o->json, 0, &err) < 0)
        return NAGIOS_UNKNOWN;
    return code;
}

/* Many hosts' facts under one policy: every host audited, findings grouped
 * by rule (which hosts fail or warn on each). */
static int fleet(struct opts *o, struct tp_policy *p)
{
    tp_error err = {0};
    json_t *cfg = json_pack("{s:s}", "policy", o->policy);
    json_t *files = json_array();
    for (int i = 0; i < o->nfleet; i++)
        json_array_append_new(files, json_string(o->fleet[i]));
    json_object_set_new(cfg, "fleet", files);
    json_t *doc = tp_result_new("check fleet", cfg), *results = json_object();
    json_object_set_new(doc, "results", results);
    int rc = tp_policy_parse(o->policy, p, &err);
    json_t *hosts = json_array(), *by_rule = json_array();
    json_object_set_new(results, "hosts", hosts);
    json_object_set_new(results, "by_rule", by_rule);
    for (size_t r = 0; rc == 0 && r < tp_check_nrules; r++)
        json_array_append_new(by_rule,
                              json_pack("{s:s, s:s, s:s, s:s, s:[], s:[], s:i, s:i}", "id",
                                        tp_check_rules[r]->id, "plane", tp_check_rules[r]->plane,
                                        "severity",
                                        tp_check_severity_name(tp_check_rules[r]->severity),
                                        "title", tp_check_rules[r]->title, "fail", "warn", "pass",
                                        0, "skip", 0));
    int worst = 0;
    for (int i = 0; rc == 0 && i < o->nfleet; i++) {
        json_t *facts = NULL;
        rc = load_facts(o->fleet[i], &facts, &err);
        if (rc)
            break;
        json_t *findings = tp_check_evaluate(facts, p);
        int code = tp_check_nagios(findings);
        worst = code > worst ? code : worst;
        const char *host = json_string_value(json_object_get(facts, "host"));
        char name[300];
        snprintf(name, sizeof name, "%s", host && *host ? host : o->fleet[i]);
        json_array_append_new(hosts, json_pack("{s:s, s:s, s:i, s:o}", "host", name, "file",
                                               o->fleet[i], "nagios", code, "summary",
                                               summary(findings)));
        size_t k;
        const json_t *f;
        json_array_foreach(findings, k, f) {
            json_t *g = json_array_get(by_rule, k);
            const char *st = json_string_value(json_object_get(f, "status"));
            if (strcmp(st, "FAIL") == 0 || strcmp(st, "WARN") == 0)
                json_array_append_new(json_object_get(g, strcmp(st, "FAIL") == 0 ? "fail" : "warn"),
                                      json_pack("{s:s, s:O}", "host", name, "evidence",
                                                json_object_get(f, "evidence")));
            else {
                const char *key = strcmp(st, "PASS") == 0 ? "pass" : "skip";
                json_object_set_new(g, key,
                                    json_integer(json_integer_value(json_object_get(g, key)) + 1));
            }
        }
        json_decref(findings);
        json_decref(facts);
    }
    if (rc) {
        cli_fail(&err);
        write_doc(doc, o->json, rc, &err);
        return NAGIOS_UNKNOWN;
    }
    FILE *out = o->json && strcmp(o->json, "-") == 0 ? stderr : stdout;
    if (!o->quiet) {
        fprintf(out, "# trainpath check --fleet: %d hosts, policy %s\n", o->nfleet, p->file);
        size_t k;
        const json_t *g;
        json_array_foreach(by_rule, k, g) {
            size_t nf = json_array_size(json_object_get(g, "fail"));
            size_t nw = json_array_size(json_object_get(g, "warn"));
            if (!nf && !nw)
                continue;
            fprintf(out, "%-28s %-8s fail %zu, warn %zu:", json_string_value(json_object_get(g, "id")),
                    json_string_value(json_object_get(g, "severity")), nf, nw);
            const char *keys[] = {"fail", "warn"};
            for (int x = 0; x < 2; x++) {
                size_t j;
                const json_t *h;
                json_array_foreach(json_object_get(g, keys[x]), j, h)
                    fprintf(out, " %s", json_string_value(json_object_get(h, "host")));
            }
            fprintf(out, "\n");
        }
        fprintf(out, "# worst: %s (exit %d)\n", nagios_word(worst), worst);
    }
    json_object_set_new(results, "nagios", json_pack("{s:i, s:s}", "code", worst, "word",
                                                     nagios_word(worst)));
    if (write_doc(doc, o->json, 0, &err) < 0)
        return NAGIOS_UNKNOWN;
    return worst;
}

static int rules_cmd(void)
{
    for (size_t i = 0; i < tp_check_nrules; i++) {
        const struct tp_check_rule *r = tp_check_rules[i];
        printf("%-28s %-10s %-8s %s\n", r->id, r->plane, tp_check_severity_name(r->severity),
               r->title);
    }
    return 0;
}

int cmd_check(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "facts") == 0)
        return facts_cmd(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "rules") == 0)
        return rules_cmd();
    struct opts o = {0};
    tp_error err = {0};
    int rc = parse(argc, argv, &o, &err);
    if (rc == 1)
        return 0;
    if (rc == 0 && !o.policy && o.fleet)
        rc = tp_error_set(&err, TP_EUSAGE, "--fleet needs --policy FILE");
    if (rc == 0 && o.json)
        rc = cli_json_path_ok(o.json, &err);
    if (rc) {
        cli_fail(&err);
        return NAGIOS_UNKNOWN;
    }
    struct tp_policy *p = calloc(1, sizeof *p);
    if (!p) {
        tp_error_set(&err, TP_ENOMEM, "out of memory");
        cli_fail(&err);
        return NAGIOS_UNKNOWN;
    }
    rc = o.fleet ? fleet(&o, p) : audit(&o, p);
    free(p);
    return rc;
}
