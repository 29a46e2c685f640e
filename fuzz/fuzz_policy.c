/* Fuzz target: plane policies (tp_policy_parse), then every rule of the
 * audit (tp_check_evaluate) over two fixed fact snapshots with the parsed
 * policy, as `trainpath check --policy` does. The input is the policy's
 * YAML. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "tp/check.h"

static json_t *facts[2];
static struct tp_policy pol; /* 80 KB: not on the stack */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    static const char *const files[] = {TP_SOURCE_ROOT "/tests/fixtures/check/node-rdma.json",
                                        TP_SOURCE_ROOT "/tests/fixtures/check/target-open.json"};
    for (int i = 0; i < 2; i++) {
        json_error_t je;
        facts[i] = json_load_file(files[i], 0, &je);
        FZ_ASSERT(facts[i], "%s: %s", files[i], je.text);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[4096];
    fz_write("policy.yaml", data, size, path);
    tp_error err;
    int rc = tp_policy_parse(path, &pol, &err);
    if (rc) {
        fz_names_file(rc, &err, path);
        return 0;
    }
    for (int p = 0; p < TP_PLANES; p++) {
        const struct tp_policy_plane *pl = &pol.planes[p];
        FZ_ASSERT(pl->ncidrs >= 0 && pl->ncidrs <= TP_POLICY_MAX && pl->nifaces >= 0 &&
                      pl->nifaces <= TP_POLICY_MAX && pl->nservices >= 0 &&
                      pl->nservices <= TP_POLICY_MAX,
                  "plane %d: counts out of bounds", p);
        for (int i = 0; i < pl->ncidrs; i++)
            FZ_ASSERT(pl->cidrs[i].prefix <= (pl->cidrs[i].family == AF_INET ? 32u : 128u),
                      "prefix /%u", pl->cidrs[i].prefix);
    }
    for (int i = 0; i < 2; i++) {
        size_t k;
        json_t *iface;
        json_array_foreach(json_object_get(facts[i], "interfaces"), k, iface)
        {
            int plane = tp_policy_plane_of(&pol, iface);
            FZ_ASSERT(plane >= -1 && plane < TP_PLANES, "plane %d", plane);
        }
        json_t *findings = tp_check_evaluate(facts[i], &pol);
        FZ_ASSERT(json_array_size(findings) == tp_check_nrules, "%zu findings for %zu rules",
                  json_array_size(findings), tp_check_nrules);
        int code = tp_check_nagios(findings);
        FZ_ASSERT(code >= 0 && code <= 2, "nagios code %d", code);
        json_decref(findings);
    }
    return 0;
}
