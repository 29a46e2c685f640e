/* A test's status as a value: one table of the words the documents write
 * and the summary table prints, so that the code compares enums and only
 * this table spells the words. */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "validate_int.h"

static const struct {
    const char *name; /* in the documents (fleet.json, the verdicts) */
    const char *word; /* in the summary table */
} statuses[TP__VALIDATE_NSTATUSES] = {
    [TP__VALIDATE_PASS] = {"PASS", "ok"},
    [TP__VALIDATE_WARN] = {"WARN", "WARN"},
    [TP__VALIDATE_FAIL] = {"FAIL", "FAIL"},
};

const char *tp__validate_status_name(enum tp__validate_status s)
{
    return s < TP__VALIDATE_NSTATUSES ? statuses[s].name : NULL;
}

const char *tp__validate_status_word(enum tp__validate_status s)
{
    return s < TP__VALIDATE_NSTATUSES ? statuses[s].word : NULL;
}

enum tp__validate_status tp__validate_status_of(const char *name)
{
    for (int s = 0; name && s < TP__VALIDATE_NSTATUSES; s++)
        if (strcmp(name, statuses[s].name) == 0)
            return (enum tp__validate_status)s;
    return TP__VALIDATE_NSTATUSES;
}

enum tp__validate_status tp__validate_status(const struct tp_validate_test *t)
{
    bool ok = t->rc == 0 || (t->nagios && t->rc >= 0 && t->rc <= 2);
    /* the audit's verdict on the node counts: a critical finding fails the
     * validation as a test that could not run does */
    return !ok                       ? TP__VALIDATE_FAIL
           : t->nagios && t->rc == 2 ? TP__VALIDATE_FAIL
           : t->nagios && t->rc == 1 ? TP__VALIDATE_WARN
                                     : TP__VALIDATE_PASS;
}
