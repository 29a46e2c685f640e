/* Result documents: the JSON contract every measuring command writes
 * (schema docs/schema/result-v1.json, described in docs/metrics.md).
 *
 *   {"schema": "trainpath.result/1", "tool": {...}, "command": "net lat",
 *    "status": {"ok", "code", "exit_code", "message"},
 *    "started_utc", "finished_utc",
 *    "provenance": {host, kernel, os, cpu, nics, libraries, clock, ...},
 *    "config": {the full effective configuration},
 *    "results": {command-specific, every figure with an explicit unit}}
 *
 * A failed run still produces a complete document: status says why and
 * results hold whatever was measured before the failure. */
#ifndef TP_RESULT_H
#define TP_RESULT_H

#include <jansson.h>

#include "tp/error.h"

#define TP_RESULT_SCHEMA "trainpath.result/1"

/* New document for command ("net lat") with config (reference stolen; may be
 * NULL), provenance of this host and clock filled, status "running".
 * Returns NULL when out of memory. */
json_t *tp_result_new(const char *command, json_t *config);

/* Set status from code and message and stamp finished_utc. */
void tp_result_finish(json_t *doc, int code, const char *message);

/* Write doc to path atomically ("-" writes to stdout). Errors name path. */
int tp_result_write(const json_t *doc, const char *path, tp_error *err);

/* The folder of a --json FILE must exist and be writable before the run
 * starts, so a measurement is never lost to a typo or a read-only results
 * folder. 0 when it is (or FILE is "-", stdout); else TP_EUSAGE naming
 * FILE and its folder. err may be NULL. */
int tp_result_path_ok(const char *path, tp_error *err);

/* The same check for another output file of a run, named by its option
 * opt in the message ("--trace FILE: folder ... is not writable"); "-" is
 * a file name here. */
int tp_result_file_ok(const char *opt, const char *path, tp_error *err);

/* Write the document of a run that has happened to path, as
 * tp_result_write does. The path was checked before the run
 * (tp_result_path_ok), so a failure now (the folder removed, the disk
 * full) is the run's: TP_ESYS (exit 1) naming the path, never TP_EUSAGE. */
int tp_result_write_run(const json_t *doc, const char *path, tp_error *err);

/* {"value": v, "unit": unit}: how every scalar figure is stored. */
json_t *tp_metric(double value, const char *unit);

#endif
