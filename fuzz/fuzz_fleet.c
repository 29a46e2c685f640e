/* Fuzz target: fleet JSON Lines (tp_fleet_add_line), as `trainpath report
 * --fleet FILE` reads them, then the judgement of what was added
 * (tp_fleet_judge) and its printout. The input is the file: each line is
 * added in turn, an error line is skipped (the CLI stops there; going on
 * lets one input carry many lines of each kind). */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "tp/judge.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fz_strndup(data, size);
    json_t *fleet = tp_fleet_new();
    FZ_ASSERT(fleet, "out of memory");
    tp_error err;
    size_t lineno = 0;
    for (char *line = text, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        int rc = tp_fleet_add_line(fleet, line, "fleet.jsonl", ++lineno, &err);
        if (rc)
            FZ_ASSERT(rc == TP_EUSAGE && strncmp(err.msg, "fleet.jsonl:", 12) == 0,
                      "line %zu: error %d does not name the line: %s", lineno, rc, err.msg);
    }
    free(text);
    json_t *j = tp_fleet_judge(fleet, NULL, &err);
    FZ_ASSERT(j, "judge failed: %s", err.msg);
    tp_fleet_print(fz_null(), j);
    json_decref(j);
    json_decref(fleet);
    return 0;
}
