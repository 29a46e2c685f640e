/* Internal to src/report: what the document loader (docs.c) asks of the
 * metric readers (metrics.c), which know what each command's documents
 * hold. metrics.c calls nothing of docs.c. */
#ifndef TP_REPORT_INT_H
#define TP_REPORT_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "tp/error.h"

/* Whether command is one whose documents trainpath writes (and report
 * reads). */
bool tp__report_command_known(const char *command);

/* The known commands, ", "-separated, into buf; returns buf. */
const char *tp__report_commands(char *buf, size_t cap);

/* "an object", "a string", "a number", ...: what v is, for messages. */
const char *tp__report_type_name(const json_t *v);

/* Whether doc's figures are figures: it is ok, or it is a verdict's
 * document (a fleet's, the simulator's) that failed on that verdict (code
 * "check") after measuring to the end. tp_report_metrics reads rows from
 * those alone, and the HTML report shows their sections. */
bool tp__report_figures_kept(const json_t *doc);

/* tp_report_metrics's rows of doc, reading it as a checker: why (cap
 * bytes) gets the first thing wrong in what the readers read ("" when
 * nothing): a value of the wrong type (a number as a string), a row that
 * is negative, in a unit trainpath does not write or beyond its unit's
 * bound, a histogram that is not one. NULL (TP_ENOMEM) only when out of
 * memory. */
json_t *tp__report_metrics_checked(const json_t *doc, char *why, size_t cap, tp_error *err);

#endif
