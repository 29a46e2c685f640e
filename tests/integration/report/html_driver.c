/* Test driver for the HTML report: renders result documents through
 * tp_html_report, as `trainpath report html` and `validate` do, so
 * report_html.sh can check the page without depending on the CLI.
 *
 *   html_driver OUT.html [--verdicts FILE.json] DOC.json...
 *
 * Exit 0 when the page was written; 2 on bad input (a document that is not a
 * trainpath result, malformed verdicts), 1 otherwise; the error on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp/html.h"
#include "tp/report.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: html_driver OUT.html [--verdicts FILE.json] DOC.json...\n");
        return 2;
    }
    const char *out = argv[1];
    json_t *verdicts = NULL;
    json_t **docs = calloc((size_t)argc, sizeof *docs);
    size_t n = 0;
    tp_error err = {0};
    int rc = docs ? 0 : tp_error_set(&err, TP_ENOMEM, "out of memory");
    for (int i = 2; i < argc && rc == 0; i++) {
        if (strcmp(argv[i], "--verdicts") == 0 && i + 1 < argc) {
            json_error_t je;
            json_decref(verdicts);
            verdicts = json_load_file(argv[++i], 0, &je);
            if (!verdicts)
                rc = tp_error_set(&err, TP_EUSAGE, "%s: %s", argv[i], je.text);
        } else {
            rc = tp_report_load(argv[i], &docs[n], &err);
            n += rc == 0;
        }
    }
    if (rc == 0)
        rc = tp_html_report((const json_t *const *)docs, n, verdicts, out, &err);
    if (rc)
        fprintf(stderr, "html_driver: %s\n", err.msg);
    for (size_t i = 0; i < n; i++)
        json_decref(docs[i]);
    free(docs);
    json_decref(verdicts);
    return tp_exit_code(rc);
}
