/* trainpath check: the node audit's command line. It parses the options,
 * makes one library call (tp_check_facts, tp_check_audit, tp_check_fleet;
 * src/check/audit.c), prints the table and writes the result document.
 *
 *   trainpath check facts [--root DIR] [--json FILE]
 *   trainpath check --policy FILE [--root DIR | --facts FILE] [--results DIR]...
 *                   [--json FILE] [-q]
 *   trainpath check --policy FILE --fleet FACTS.json...
 *   trainpath check rules
 *
 * The audit exits with Nagios codes (0 ok, 1 warning, 2 critical, 3
 * unknown), so it can gate a Slurm prolog or a Kubernetes preflight; bad
 * input (a policy, root, facts file or results folder that cannot be used)
 * and facts that could not be seen are UNKNOWN (3), not CRITICAL. One call,
 * tp_check_finish, decides the exit status and writes the same number into
 * the document's status.exit_code. `check facts` and `check rules` are not
 * audits: they exit 0, or 2 on bad input. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tp/check.h"
#include "tp/result.h"
#include "tp/text.h"

#define NAGIOS_UNKNOWN 3
#define MAX_RESULTS 4

static void usage(FILE *f)
{
    fprintf(f,
            "usage: trainpath check facts [--root DIR] [--json FILE]\n"
            "       trainpath check [--policy FILE] [--root DIR | --facts FILE] [--results DIR]...\n"
            "                       [--only RULES] [--json FILE] [-q]\n"
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
            "  --results DIR   also look for secrets in DIR (besides the policy's results), and\n"
            "                  read the counters of the result documents there (CTR-ERRORS,\n"
            "                  LINK-FLAP)\n"
            "  --only RULES    report only these rules (ids separated by commas, from\n"
            "                  `trainpath check rules`); the verdict is theirs\n"
            "  --fleet FILE... audit many hosts' facts, findings grouped by rule\n"
            "  --json FILE     write the result document (atomically; - for stdout)\n"
            "  -q, --quiet     no table\n"
            "\n"
            "Exit codes (Nagios): 0 every rule passed or was skipped, 1 a warning, 2 a\n"
            "critical rule failed, 3 unknown: a rule could not see the facts it needs, or an\n"
            "input (policy, root, facts, results folder) could not be used. 2 wins over 3.\n"
            "`check facts` and `check rules` exit 0, or 2 on bad input.\n");
}

struct opts {
    const char *policy, *root, *facts, *json, *only;
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
    {"only", required_argument, NULL, 'o'},
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
        case 'o': o->only = optarg; break;
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
    if (o->only)
        return tp_check_only_ok(o->only, err);
    return 0;
}

/* Finish the audit's document (tp_check_finish decides the exit status and
 * writes it into the document) and write it to path (if any). The status,
 * or UNKNOWN when the document could not be written. */
static int finish_doc(json_t *doc, const char *path, int rc, const tp_error *err)
{
    int code = tp_check_finish(doc, rc, err->msg);
    tp_error werr;
    int wrc = path ? tp_result_write_run(doc, path, &werr) : 0;
    json_decref(doc);
    if (wrc < 0) {
        cli_fail(&werr);
        return NAGIOS_UNKNOWN;
    }
    return code;
}

static int facts_cmd(int argc, char **argv)
{
    struct opts o = {0};
    tp_error err = {0};
    int rc = parse(argc, argv, &o, &err);
    if (rc == 1)
        return 0;
    if (rc == 0 && (o.policy || o.facts || o.fleet || o.nresults || o.only))
        rc = tp_error_set(&err, TP_EUSAGE, "check facts takes --root and --json only");
    if (rc == 0 && o.json)
        rc = tp_result_path_ok(o.json, &err);
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
        rc = tp_result_write_run(facts, o.json, &err);
    }
    json_decref(facts);
    return rc ? cli_fail(&err) : 0;
}

/* The table of one audit: a line per rule, the remediation under every
 * FAIL and WARN, and the summary with the verdict. */
static void print_audit(FILE *out, const struct tp_policy *p, const json_t *res)
{
    const json_t *findings = json_object_get(res, "findings"), *f;
    /* the host name, the evidence and the policy's name come from the node
     * and its files: printed as safe text (tp/text.h) */
    char th[256], tf[4096], te[2048];
    const char *host = json_string_value(json_object_get(json_object_get(res, "facts"), "host"));
    host = host ? tp_text_safe(host, th, sizeof th, TP_TEXT_LINE) : "?";
    if (p)
        fprintf(out, "# trainpath check: %s, policy %s (role %s), %zu rules\n", host,
                tp_text_safe(p->file, tf, sizeof tf, TP_TEXT_LINE), tp_role_name(p->role),
                json_array_size(findings));
    else
        fprintf(out, "# trainpath check: %s, no policy (the plane rules skip), %zu rules\n", host,
                json_array_size(findings));
    size_t i;
    json_array_foreach(findings, i, f) {
        const char *st = json_string_value(json_object_get(f, "status"));
        fprintf(out, "%-7s  %-8s  %-28s %-10s %s\n", st,
               json_string_value(json_object_get(f, "severity")),
               json_string_value(json_object_get(f, "id")),
               json_string_value(json_object_get(f, "plane")),
               tp_text_safe(json_string_value(json_object_get(f, "evidence")), te, sizeof te,
                            TP_TEXT_LINE));
        if (strcmp(st, "FAIL") == 0 || strcmp(st, "WARN") == 0)
            fprintf(out, "      remediation: %s\n",
                   json_string_value(json_object_get(f, "remediation")));
    }
    const json_t *sum = json_object_get(res, "summary"), *nagios = json_object_get(res, "nagios");
    fprintf(out, "# %lld pass, %lld warn, %lld fail, %lld skip, %lld unknown: %s (exit %lld)\n",
            json_integer_value(json_object_get(sum, "pass")),
            json_integer_value(json_object_get(sum, "warn")),
            json_integer_value(json_object_get(sum, "fail")),
            json_integer_value(json_object_get(sum, "skip")),
            json_integer_value(json_object_get(sum, "unknown")),
            json_string_value(json_object_get(nagios, "word")),
            json_integer_value(json_object_get(nagios, "code")));
}

/* The fleet's table: each rule some host fails or warns on, with the hosts;
 * the hosts that could not tell follow as "unknown N". */
static void print_fleet(FILE *out, int nhosts, const struct tp_policy *p, const json_t *res)
{
    char tf[4096], th[256];
    fprintf(out, "# trainpath check --fleet: %d hosts, policy %s\n", nhosts,
            tp_text_safe(p->file, tf, sizeof tf, TP_TEXT_LINE));
    size_t k;
    const json_t *g;
    json_array_foreach(json_object_get(res, "by_rule"), k, g) {
        size_t nf = json_array_size(json_object_get(g, "fail"));
        size_t nw = json_array_size(json_object_get(g, "warn"));
        long long nu = json_integer_value(json_object_get(g, "unknown"));
        if (!nf && !nw && !nu)
            continue;
        fprintf(out, "%-28s %-8s fail %zu, warn %zu, unknown %lld:",
                json_string_value(json_object_get(g, "id")),
                json_string_value(json_object_get(g, "severity")), nf, nw, nu);
        const char *keys[] = {"fail", "warn"};
        for (int x = 0; x < 2; x++) {
            size_t j;
            const json_t *h;
            json_array_foreach(json_object_get(g, keys[x]), j, h)
                fprintf(out, " %s", tp_text_safe(json_string_value(json_object_get(h, "host")),
                                                 th, sizeof th, TP_TEXT_LINE));
        }
        fprintf(out, "\n");
    }
    const json_t *nagios = json_object_get(res, "nagios");
    fprintf(out, "# worst: %s (exit %lld)\n", json_string_value(json_object_get(nagios, "word")),
            json_integer_value(json_object_get(nagios, "code")));
}

/* One node's audit, or with --fleet many hosts': the table, the document,
 * and the exit status tp_check_finish decided for both. */
static int audit(const struct opts *o, struct tp_policy *p)
{
    const struct tp_check_opts co = {
        .policy = o->policy, .root = o->root, .facts = o->facts,
        .results = o->results, .nresults = o->nresults,
        .fleet = (const char *const *)o->fleet, .nfleet = o->nfleet, .only = o->only,
    };
    tp_error err = {0};
    json_t *doc = tp_result_new(o->fleet ? "check fleet" : "check", tp_check_config_json(&co));
    int rc = o->fleet ? tp_check_fleet(&co, p, doc, &err) : tp_check_audit(&co, p, doc, &err);
    if (rc) {
        if (o->fleet || !o->quiet || !o->json)
            cli_fail(&err);
        return finish_doc(doc, o->json, rc, &err);
    }
    const json_t *res = json_object_get(doc, "results");
    FILE *out = o->json && strcmp(o->json, "-") == 0 ? stderr : stdout;
    if (!o->quiet && o->fleet)
        print_fleet(out, o->nfleet, p, res);
    else if (!o->quiet)
        print_audit(out, o->policy ? p : NULL, res);
    /* the audit ran: the status is ok whatever it found; the verdict is in
     * results.nagios and is the exit status */
    return finish_doc(doc, o->json, 0, &err);
}

static int rules_cmd(int argc, char **argv)
{
    if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        usage(stdout);
        return 0;
    }
    if (argc >= 2) {
        tp_error err = {0};
        tp_error_set(&err, TP_EUSAGE, "check rules: %s: unexpected argument (it takes none)",
                     argv[1]);
        return cli_fail(&err);
    }
    for (size_t i = 0; i < tp_check_nrules; i++) {
        const struct tp_check_rule *r = tp_check_rules[i];
        printf("%-28s %-10s %-8s %s\n", r->id, r->plane, tp_check_severity_name(r->severity),
               r->title);
    }
    return 0;
}

/* --json against what the audit reads (--policy, --facts, each --results,
 * the fleet's facts files): 0, or the clash said (cli_distinct). */
static int distinct(const struct opts *o)
{
    struct tp_file_arg out = {"--json", o->json, NULL}, ins[2 + MAX_RESULTS + 64];
    size_t n = 0;
    ins[n++] = (struct tp_file_arg){"--policy", o->policy, NULL};
    ins[n++] = (struct tp_file_arg){"--facts", o->facts, NULL};
    for (int i = 0; i < o->nresults; i++)
        ins[n++] = (struct tp_file_arg){"--results", o->results[i], ".json"};
    int rc = cli_distinct(&out, 1, ins, n);
    for (int i = 0; rc == 0 && i < o->nfleet; i += 64) {
        size_t k = 0;
        for (; k < 64 && i + (int)k < o->nfleet; k++)
            ins[k] = (struct tp_file_arg){"the facts file", o->fleet[i + (int)k], NULL};
        rc = cli_distinct(&out, 1, ins, k);
    }
    return rc;
}

int cmd_check(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "facts") == 0)
        return facts_cmd(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "rules") == 0)
        return rules_cmd(argc - 1, argv + 1);
    struct opts o = {0};
    tp_error err = {0};
    int rc = parse(argc, argv, &o, &err);
    if (rc == 1)
        return 0;
    if (rc == 0 && !o.policy && o.fleet)
        rc = tp_error_set(&err, TP_EUSAGE, "--fleet needs --policy FILE");
    if (distinct(&o)) /* before a refusal writes its document over an input */
        return NAGIOS_UNKNOWN;
    if (rc) {
        /* bad input: UNKNOWN, and with --json a document that says why
         * (when its folder can take one) */
        cli_fail(&err);
        if (cli_refusal_path_ok(o.json))
            return finish_doc(tp_result_new(o.fleet ? "check fleet" : "check", NULL), o.json, rc,
                              &err);
        return NAGIOS_UNKNOWN;
    }
    if (o.json && (rc = tp_result_path_ok(o.json, &err)) != 0) {
        cli_fail(&err);
        return NAGIOS_UNKNOWN;
    }
    struct tp_policy *p = calloc(1, sizeof *p);
    if (!p) {
        tp_error_set(&err, TP_ENOMEM, "out of memory");
        cli_fail(&err);
        return NAGIOS_UNKNOWN;
    }
    rc = audit(&o, p);
    free(p);
    return rc;
}
