/* trainpath validate: the main job's options, in one struct for
 * tp_validate_run (src/validate/), which runs the profile and prints the
 * progress, the summary and where the results went; bad input before
 * anything runs is printed here once and exits 2. */
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "tp/triage.h"
#include "tp/units.h"
#include "tp/validate.h"

static void usage(FILE *f)
{
    fprintf(
        f, "usage: trainpath validate [--profile quick|standard|extended] [--out DIR] [--db FILE]\n"
           "                          [--only GROUPS] [--policy FILE] [--prometheus FILE] [-q]\n"
           "                          [--launcher L] [--iface NAME] [--pairs-at-once K]\n"
           "                          [--key-file F] [--tier T | --budget DUR] [--matchings K]\n"
           "                          [--seed N] [--min-effect PCT] [--node-timeout DUR]\n"
           "                          [--on-fail none|drain] [--sdc-minutes M]\n"
           "                          [--topology FILE] [--plan FILE] [--spare-nodes N]\n"
           "       trainpath validate --simulate FLEET [--tier T | --budget DUR]\n"
           "                          [--matchings K] [--seed N] [--min-effect PCT]\n"
           "                          [--json FILE] [-q]\n"
           "\n"
           "The main job: the node audit, point-to-point latency and bandwidth, the\n"
           "collectives, the storage path (commit latency, checkpoint), training steps, the\n"
           "silent-data-corruption screen and the plan of this machine, as one results\n"
           "folder: every result document, the history database and the HTML report\n"
           "(report.html).\n"
           "\n"
           "Alone it validates this host (local ranks over loopback and shared memory,\n"
           "storage in a folder under /var/tmp). Under mpirun, srun or torchrun, one\n"
           "process per node, it validates the allocation: every node alone, then the\n"
           "links between nodes by a tier (docs/fleet.md): screen (the default) runs one\n"
           "allreduce across all nodes, a ring pass, one small group collective per node\n"
           "and k random matchings, a few rounds at any size, then isolates what looked\n"
           "slow in O(log n) rounds more; full measures every pair (n-1 rounds by the\n"
           "circle method). In every round each node is in one test. Rank 0 gathers the\n"
           "documents, judges the fleet, names slow nodes and links, writes one verdict\n"
           "line per node (nodes.jsonl) and the results folder.\n"
           "\n"
           "  --profile P   quick (under a minute here, the default), standard (a few\n"
           "                minutes), extended (longer runs and larger sizes)\n"
           "  --out DIR     the results folder (default results/validate-UTCSTAMP)\n"
           "  --db FILE     the history database (default DIR/history.sqlite)\n"
           "  --only LIST   groups to run: check,net,coll,io,step,sdc,plan (plan needs\n"
           "                net, coll and io)\n"
           "  --policy FILE the plane policy for the audit (default: node rules only)\n"
           "  --prometheus FILE  the metrics in node_exporter's textfile format\n"
           "  --launcher L  local (this host), mpi or env (default: detected)\n"
           "  --iface NAME  allocation: the interface whose IPv4 address the other nodes\n"
           "                reach (default: that of the default route)\n"
           "  --pairs-at-once K  allocation: measure at most K pairs at once (default: a\n"
           "                whole round, n/2; 1 measures every link alone)\n"
           "  --key-file F  env launcher: the pre-shared key of the rendezvous\n"
           "  --tier T      allocation: prolog (the gang and a ring pass), screen (+ a\n"
           "                groups pass and k random matchings, the default) or full\n"
           "                (every pair, the circle method)\n"
           "  --budget DUR  allocation: the deepest tier whose estimate fits DUR (90s,\n"
           "                10m); too small for the prolog tier: exit 2 with its minimum\n"
           "  --matchings K screen: random perfect matchings (default 4)\n"
           "  --seed N      the tier's draws (default: drawn; in the simulator the fleet\n"
           "                file's seed)\n"
           "  --min-effect PCT  a node or link is named slow only this many percent past\n"
           "                the fleet's median at least (default 10; 1 to 900): raise it\n"
           "                where the fabric is shared and noisy\n"
           "  --node-timeout DUR  allocation: a node silent this long in a tier's\n"
           "                round or gather (frozen, cut off) is lost and left out, the\n"
           "                others go on (default: the round's test deadlines, about 5\n"
           "                min quick; the gather 300 s; 1 s to 1 d); not joined by then:\n"
           "                missing\n"
           "  --on-fail A   allocation: none (the default) or drain: under Slurm, each node\n"
           "                judged bad is drained (scontrol update State=DRAIN with the\n"
           "                test and evidence as the reason), each scontrol stopped after\n"
           "                --node-timeout (default 60 s) or at SIGINT\n"
           "  --topology FILE  allocation: the fabric's switches, Slurm's topology.conf or\n"
           "                its YAML form (docs/topology.md), every node in it by its Slurm\n"
           "                name (else its host name): a slow leaf switch or a leaf's slow\n"
           "                uplinks are named instead of the nodes behind them\n"
           "  --plan FILE   allocation: the plan file of the job the allocation is for\n"
           "                (docs/plan.md): its GPUs a node, MTBF and restart weigh, when\n"
           "                the screen ends with suspects, isolating them against evicting\n"
           "                them all now (the decision line, fleet.json's decision)\n"
           "  --spare-nodes N  allocation: nodes standing by to replace evicted ones\n"
           "                (default 0), for that decision\n"
           "  --sdc-minutes M  the SDC screen (sdc) runs about M minutes (a decimal) on\n"
           "                every node instead of the profile's steps: a longer soak; on\n"
           "                an allocation rank 0 names the node whose hashes differ\n"
           "  --trace       each coll and step test also writes its timeline (Chrome\n"
           "                trace format) beside its document: NAME.trace.json\n"
           "  -q, --quiet   no progress line, no summary (the progress line, tests done\n"
           "                and time left, is shown on stderr only when it is a terminal)\n"
           "\n"
           "Fleet triage in the simulator: the same tiers, judgement and isolation, run\n"
           "against a model fleet (its size, noise and planted faults) instead of an\n"
           "allocation (--tier, --budget, --matchings, --seed and --min-effect as above):\n"
           "  --simulate FLEET  the model fleet's YAML file\n"
           "  --json FILE   the result document (atomically; - for stdout)\n"
           "Exit: 0 every test ran and none failed, 1 a test failed, the audit found a\n"
           "critical finding or the fleet a slow node or link, 2 bad input. With\n"
           "--simulate: 0 every planted fault named and nothing else, 1 one missed or a\n"
           "sound node or link named, 2 bad input.\n");
}

/* --sdc-minutes M: a number of minutes (a decimal: "30", "0.5"), more than 0,
 * at most a week (10080). */
static int parse_minutes(const char *s, double *minutes, tp_error *err)
{
    char *end = NULL;
    double m = *s >= '0' && *s <= '9' ? strtod(s, &end) : NAN;
    if (!end || *end || !isfinite(m) || !(m > 0) || m > 10080)
        return tp_error_set(err, TP_EUSAGE, "--sdc-minutes %s: a number of minutes, more than 0 "
                            "and at most 10080 (a week)", s);
    *minutes = m;
    return 0;
}

int cmd_validate(int argc, char **argv)
{
    enum {
        OPT_ONLY = 256,
        OPT_IFACE,
        OPT_LAUNCHER,
        OPT_KEY,
        OPT_AT_ONCE,
        OPT_SIMULATE,
        OPT_TIER,
        OPT_BUDGET,
        OPT_MATCHINGS,
        OPT_SEED,
        OPT_MIN_EFFECT,
        OPT_NODE_TIMEOUT,
        OPT_JSON,
        OPT_ON_FAIL,
        OPT_SDC_MINUTES,
        OPT_TRACE,
        OPT_TOPOLOGY,
        OPT_PLAN,
        OPT_SPARES,
    };
    static const struct option opts[] = {
        {"profile", required_argument, NULL, 'p'},
        {"out", required_argument, NULL, 'o'},
        {"db", required_argument, NULL, 'd'},
        {"policy", required_argument, NULL, 'P'},
        {"prometheus", required_argument, NULL, 'm'},
        {"only", required_argument, NULL, OPT_ONLY},
        {"iface", required_argument, NULL, OPT_IFACE},
        {"launcher", required_argument, NULL, OPT_LAUNCHER},
        {"key-file", required_argument, NULL, OPT_KEY},
        {"pairs-at-once", required_argument, NULL, OPT_AT_ONCE},
        {"simulate", required_argument, NULL, OPT_SIMULATE},
        {"tier", required_argument, NULL, OPT_TIER},
        {"budget", required_argument, NULL, OPT_BUDGET},
        {"matchings", required_argument, NULL, OPT_MATCHINGS},
        {"seed", required_argument, NULL, OPT_SEED},
        {"min-effect", required_argument, NULL, OPT_MIN_EFFECT},
        {"node-timeout", required_argument, NULL, OPT_NODE_TIMEOUT},
        {"json", required_argument, NULL, OPT_JSON},
        {"on-fail", required_argument, NULL, OPT_ON_FAIL},
        {"sdc-minutes", required_argument, NULL, OPT_SDC_MINUTES},
        {"trace", no_argument, NULL, OPT_TRACE},
        {"topology", required_argument, NULL, OPT_TOPOLOGY},
        {"plan", required_argument, NULL, OPT_PLAN},
        {"spare-nodes", required_argument, NULL, OPT_SPARES},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct tp_validate_opts o = {.profile = "quick"};
    struct tp_validate_sim_opts sim = {0};
    const char *real_only = NULL; /* an option of a real run, for the --simulate error */
    tp_error err = {0};
    int rc = 0, opt;
    opterr = 0;
    optind = 1;
    while (rc == 0 && (opt = getopt_long(argc, argv, ":qh", opts, NULL)) != -1) {
        switch (opt) {
        case 'p': o.profile = optarg, real_only = "--profile"; break;
        case 'o': o.out = optarg, real_only = "--out"; break;
        case 'd': o.db = optarg, real_only = "--db"; break;
        case 'P': o.policy = optarg, real_only = "--policy"; break;
        case 'm': o.prom = optarg, real_only = "--prometheus"; break;
        case OPT_ONLY: o.only = optarg, real_only = "--only"; break;
        case OPT_IFACE: o.iface = optarg, real_only = "--iface"; break;
        case OPT_LAUNCHER: o.launcher = optarg, real_only = "--launcher"; break;
        case OPT_KEY: o.key_file = optarg, real_only = "--key-file"; break;
        case OPT_AT_ONCE: {
            uint64_t k = 0;
            rc = tp_parse_u64(optarg, "--pairs-at-once", 1, 1000000, &k, &err);
            o.pairs_at_once = (int)k;
            real_only = "--pairs-at-once";
            break;
        }
        case OPT_SIMULATE: sim.fleet = optarg; break;
        case OPT_TIER: sim.tier = optarg; break;
        case OPT_BUDGET:
            rc = tp_parse_duration_s(optarg, "--budget", &sim.budget_s, &err);
            if (rc == 0 && !(sim.budget_s > 0))
                rc = tp_error_set(&err, TP_EUSAGE, "--budget %s: more than 0", optarg);
            break;
        case OPT_MATCHINGS: {
            uint64_t k = 0;
            rc = tp_parse_u64(optarg, "--matchings", 1, 64, &k, &err);
            sim.matchings = (int)k;
            break;
        }
        case OPT_SEED: rc = tp_parse_u64(optarg, "--seed", 1, UINT64_MAX, &sim.seed, &err); break;
        case OPT_MIN_EFFECT: {
            uint64_t pct = 0;
            rc = tp_parse_u64(optarg, "--min-effect", 1, 900, &pct, &err);
            sim.min_effect = (double)pct / 100;
            break;
        }
        case OPT_NODE_TIMEOUT:
            rc = tp_parse_duration_s(optarg, "--node-timeout", &o.node_timeout_s, &err);
            if (rc == 0 && !(o.node_timeout_s >= 1 && o.node_timeout_s <= 86400))
                rc = tp_error_set(&err, TP_EUSAGE, "--node-timeout %s: 1 s to 1 d", optarg);
            real_only = "--node-timeout";
            break;
        case OPT_JSON: sim.json = optarg; break;
        case OPT_ON_FAIL: o.on_fail = optarg, real_only = "--on-fail"; break;
        case OPT_SDC_MINUTES:
            rc = parse_minutes(optarg, &o.sdc_minutes, &err);
            real_only = "--sdc-minutes";
            break;
        case OPT_TRACE: o.trace = true, real_only = "--trace"; break;
        case OPT_TOPOLOGY: o.topology = optarg, real_only = "--topology"; break;
        case OPT_PLAN: o.plan = optarg, real_only = "--plan"; break;
        case OPT_SPARES: {
            uint64_t k;
            rc = tp_parse_u64(optarg, "--spare-nodes", 0, TP_TRIAGE_MAX_NODES, &k, &err);
            o.spare_nodes = (int)k;
            real_only = "--spare-nodes";
            break;
        }
        case 'q': o.quiet = sim.quiet = true; break;
        case 'h': usage(stdout); return 0;
        case ':': rc = tp_error_set(&err, TP_EUSAGE, "%s: needs a value", argv[optind - 1]); break;
        default:
            rc = tp_error_set(&err, TP_EUSAGE, "%s: unknown option (see trainpath validate --help)",
                              argv[optind - 1]);
        }
    }
    if (rc == 0 && optind < argc)
        rc = tp_error_set(&err, TP_EUSAGE, "%s: unexpected argument", argv[optind]);
    if (rc == 0 && sim.fleet && real_only)
        rc = tp_error_set(&err, TP_EUSAGE, "%s: a run on this host or an allocation; not with "
                          "--simulate", real_only);
    if (rc == 0 && sim.tier && sim.budget_s > 0)
        rc = tp_error_set(&err, TP_EUSAGE, "--tier %s and --budget: one or the other", sim.tier);
    /* the tier's options serve an allocation as they serve the simulator */
    o.tier = sim.tier;
    o.budget_s = sim.budget_s;
    o.matchings = sim.matchings;
    o.seed = sim.seed;
    o.min_effect = sim.min_effect;
    if (rc == 0 && !sim.fleet && sim.json)
        rc = tp_error_set(&err, TP_EUSAGE, "--json: validate writes a results folder (--out); "
                          "--json is for --simulate");
    { /* no output over an input, and no refusal's document over one either */
        const struct tp_file_arg outs[] = {
            {"--json", sim.json, NULL}, {"--db", o.db, NULL}, {"--prometheus", o.prom, NULL}};
        const struct tp_file_arg ins[] = {{"--simulate", sim.fleet, NULL},
                                          {"--policy", o.policy, NULL},
                                          {"--key-file", o.key_file, NULL},
                                          {"--plan", o.plan, NULL}};
        if (cli_distinct(outs, 3, ins, 4))
            return 2;
    }
    if (rc)
        return sim.fleet ? cli_refuse("validate simulate", sim.json, &err) : cli_fail(&err);
    if (sim.fleet) {
        rc = tp_validate_simulate(&sim, &err);
        return rc < 0 ? cli_refuse("validate simulate", sim.json, &err) : rc;
    }
    o.progress_line = cli_progress(o.quiet, NULL);
    rc = tp_validate_run(&o, &err);
    return rc < 0 ? cli_fail(&err) : rc;
}
