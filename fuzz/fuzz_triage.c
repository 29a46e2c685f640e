/* Fuzz target: the simulator's fleet files (tp_triage_fleet_load), then,
 * for a fleet small enough to be quick (at most 128 nodes; the full tier,
 * n - 1 rounds, at most 48), the whole triage run against it
 * (tp_triage_simulate: the planner, the judgement, the isolation, the
 * verdicts) under each tier, with the invariants a
 * reader relies on: every node counted once, what was named is a node of
 * the fleet, every planted fault either named or missed, nothing named
 * before the tier's rounds were over. The input is the fleet's YAML. */
#include <string.h>

#include "fuzz.h"
#include "tp/triage.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[4096];
    fz_write("fleet.yaml", data, size, path);
    struct tp_triage_fleet f;
    tp_error err;
    int rc = tp_triage_fleet_load(path, &f, &err);
    if (rc) {
        fz_names_file(rc, &err, path);
        return 0;
    }
    FZ_ASSERT(f.n >= 2 && f.n <= TP_TRIAGE_MAX_NODES, "nodes %d accepted", f.n);
    if (f.n > 128)
        return 0;
    static const char *const tiers[] = {"prolog", "screen", "full"};
    for (size_t i = 0; i < sizeof tiers / sizeof *tiers; i++) {
        if (strcmp(tiers[i], "full") == 0 && f.n > 48)
            continue;
        struct tp_triage_opts o = {.tier = tiers[i], .seed = f.seed};
        json_t *res = NULL;
        rc = tp_triage_simulate(&f, &o, false, &res, &err);
        if (rc) { /* refused: a fault no round of the tier can carry */
            FZ_ASSERT(rc == TP_EUSAGE && !res, "%s: rc %d: %s", tiers[i], rc, err.msg);
            continue;
        }
        json_t *counts = json_object_get(res, "counts"), *v;
        const char *k;
        long long sum = 0;
        json_object_foreach(counts, k, v)
            sum += json_integer_value(v);
        FZ_ASSERT(sum == f.n, "%s: counts add up to %lld of %d nodes", tiers[i], sum, f.n);
        FZ_ASSERT((int)json_array_size(json_object_get(res, "nodes_detail")) == f.n,
                  "%s: a verdict per node", tiers[i]);
        size_t j;
        json_array_foreach(json_object_get(res, "named"), j, v) {
            const char *kind = json_string_value(json_object_get(v, "kind"));
            FZ_ASSERT(kind, "%s: a named fault without a kind", tiers[i]);
            long long a = fz_int(v, strcmp(kind, "node") == 0 ? "node" : "a");
            FZ_ASSERT(a >= 0 && a < f.n, "%s: named node %lld of %d", tiers[i], a, f.n);
            FZ_ASSERT(fz_int(v, "round") >= 1, "%s: named before isolation", tiers[i]);
        }
        const json_t *sim = json_object_get(res, "simulated");
        FZ_ASSERT(fz_int(sim, "true_named") + fz_int(sim, "missed") == f.nslow + f.nlinks,
                  "%s: planted %d, named %lld, missed %lld", tiers[i], f.nslow + f.nlinks,
                  fz_int(sim, "true_named"), fz_int(sim, "missed"));
        FZ_ASSERT(fz_int(res, "rounds_isolation") <= 3 * fz_int(res, "isolation_bound"),
                  "%s: %lld isolation rounds", tiers[i], fz_int(res, "rounds_isolation"));
        json_decref(res);
    }
    return 0;
}
