/* The results history: result documents flattened into metric rows
 * (tp_report_metrics) and kept in one SQLite file, one `runs` row per
 * document and one `metrics` row per metric row.
 *
 * The file keeps SQLite's default rollback journal, not WAL: a history is
 * written a few times per `validate` and read by one report at a time, so
 * WAL's concurrent readers buy nothing, while it would add -wal and -shm
 * files beside the database (a copied .sqlite file could miss its last
 * runs) and does not work on network file systems, where a fleet's shared
 * history may well live. Writers wait for each other (busy timeout) rather
 * than fail.
 *
 * Every value reaches SQLite through a bound parameter; the only SQL built
 * at run time is the pragma that stamps our own constants into a new file. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "tp/file.h"
#include "tp/history.h"
#include "tp/json.h"
#include "tp/judge.h"
#include "tp/report.h"
#include "tp/text.h"

struct tp_history {
    sqlite3 *db;
    char *path;
    bool ro;
};

static const char schema_sql[] =
    "CREATE TABLE runs (\n"
    "  id           INTEGER PRIMARY KEY,\n"
    "  batch        TEXT,\n"
    "  command      TEXT NOT NULL,\n"
    "  host         TEXT NOT NULL,\n"
    "  started_utc  TEXT NOT NULL,\n"
    "  started_s    REAL NOT NULL,\n"
    "  tool_version TEXT,\n"
    "  kernel       TEXT,\n"
    "  config_id    TEXT NOT NULL,\n"
    "  ok           INTEGER NOT NULL CHECK (ok IN (0, 1)),\n"
    "  file         TEXT,\n"
    "  added_utc    TEXT NOT NULL,\n"
    "  UNIQUE (command, host, started_utc, config_id)\n"
    ");\n"
    "CREATE INDEX runs_scope ON runs (config_id, host, started_s);\n"
    "CREATE INDEX runs_batch ON runs (batch);\n"
    "CREATE TABLE metrics (\n"
    "  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,\n"
    "  metric TEXT NOT NULL,\n"
    "  key    TEXT NOT NULL,\n"
    "  labels TEXT NOT NULL,\n"
    "  value  REAL NOT NULL,\n"
    "  unit   TEXT NOT NULL,\n"
    "  better TEXT CHECK (better IN ('lower', 'higher')),\n"
    "  count  INTEGER,\n"
    "  mean   REAL,\n"
    "  stdev  REAL,\n"
    "  PRIMARY KEY (run_id, key)\n"
    ") WITHOUT ROWID;\n"
    "CREATE INDEX metrics_key ON metrics (key);\n"
    "CREATE INDEX metrics_metric ON metrics (metric);\n";

/* ---- errors ---- */

/* The tp code for a SQLite result code (primary or extended). */
static int code_of(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
    case SQLITE_FORMAT: return TP_EUSAGE;
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return TP_ETIMEOUT;
    case SQLITE_NOMEM: return TP_ENOMEM;
    default: return TP_ESYS;
    }
}

/* Record SQLite's last error on h, naming the file; what says what we were
 * doing. Call before anything else touches the connection (a ROLLBACK would
 * replace the message). */
static int dberr(const tp_history *h, tp_error *err, const char *what)
{
    int rc = sqlite3_extended_errcode(h->db);
    return tp_error_set(err, code_of(rc), "%s: %s: %s", h->path, what, sqlite3_errmsg(h->db));
}

static int prep(tp_history *h, const char *sql, sqlite3_stmt **st, tp_error *err)
{
    if (sqlite3_prepare_v2(h->db, sql, -1, st, NULL) != SQLITE_OK) {
        *st = NULL;
        return dberr(h, err, "prepare");
    }
    return 0;
}

/* ---- binding and reading columns ---- */

/* Whether two text columns are equal (NULL only to NULL: a damaged file's). */
static bool same_text(const char *a, const char *b)
{
    return a && b ? strcmp(a, b) == 0 : a == b;
}

static int bind_text(sqlite3_stmt *st, int i, const char *s)
{
    return s ? sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
}

static int bind_real(sqlite3_stmt *st, int i, double v)
{
    return isfinite(v) ? sqlite3_bind_double(st, i, v) : sqlite3_bind_null(st, i);
}

/* A text column as a JSON string (bytes of a file name that are not UTF-8
 * made '?'), null for NULL. */
static json_t *col_str(sqlite3_stmt *st, int i)
{
    json_t *j = tp_json_text((const char *)sqlite3_column_text(st, i));
    return j ? j : json_null();
}

static const char *col_text(sqlite3_stmt *st, int i)
{
    return (const char *)sqlite3_column_text(st, i);
}

/* Step a statement that returns no row (or whose row we do not need). */
static int run(tp_history *h, sqlite3_stmt *st, const char *what, tp_error *err)
{
    int rc = sqlite3_step(st);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return dberr(h, err, what);
    return 0;
}

static int exec(tp_history *h, const char *sql, const char *what, tp_error *err)
{
    if (sqlite3_exec(h->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return dberr(h, err, what);
    return 0;
}

static void rollback(tp_history *h)
{
    if (!sqlite3_get_autocommit(h->db))
        sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
}

/* ---- open ---- */

/* One integer from the file's header or schema. This is the first read of
 * the file, where SQLite finds out that it is not a database at all. */
static int pragma_int(tp_history *h, const char *sql, int *v, tp_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(h->db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        *v = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
        return 0;
    }
    if (code_of(rc) == TP_EUSAGE)
        rc = tp_error_set(err, TP_EUSAGE, "%s: not a trainpath history: %s", h->path,
                          sqlite3_errmsg(h->db));
    else
        rc = dberr(h, err, "read the header");
    sqlite3_finalize(st);
    return rc;
}

/* What the file is: ours (application id), empty (a new file) or other. */
enum kind { OURS, EMPTY, FOREIGN };

static int inspect(tp_history *h, enum kind *k, int *app, int *version, int *tables, tp_error *err)
{
    int rc = pragma_int(h, "PRAGMA application_id", app, err);
    if (!rc)
        rc = pragma_int(h, "PRAGMA user_version", version, err);
    if (!rc)
        rc = pragma_int(h, "SELECT count(*) FROM sqlite_master", tables, err);
    if (rc)
        return rc;
    *k = *app == TP_HISTORY_APP_ID                    ? OURS
         : *app == 0 && *version == 0 && *tables == 0 ? EMPTY
                                                      : FOREIGN;
    return 0;
}

static int create(tp_history *h, tp_error *err)
{
    /* IMMEDIATE: two processes creating the same new file serialise here,
     * and the second finds the first one's schema */
    int rc = exec(h, "BEGIN IMMEDIATE", "create the schema", err);
    if (rc)
        return rc;
    enum kind k;
    int app, version, tables;
    rc = inspect(h, &k, &app, &version, &tables, err);
    if (!rc && k == EMPTY) {
        char stamp[96];
        snprintf(stamp, sizeof stamp, "PRAGMA application_id = %d; PRAGMA user_version = %d",
                 TP_HISTORY_APP_ID, TP_HISTORY_SCHEMA);
        rc = exec(h, schema_sql, "create the schema", err);
        if (!rc)
            rc = exec(h, stamp, "create the schema", err);
    }
    if (!rc)
        rc = exec(h, "COMMIT", "create the schema", err);
    if (rc)
        rollback(h);
    return rc;
}

static int check(tp_history *h, tp_error *err)
{
    enum kind k;
    int app, version, tables;
    int rc = inspect(h, &k, &app, &version, &tables, err);
    if (rc)
        return rc;
    if (k == EMPTY) {
        if (h->ro)
            return tp_error_set(err, TP_EUSAGE, "%s: not a trainpath history (an empty database)",
                                h->path);
        if ((rc = create(h, err)) != 0 || (rc = inspect(h, &k, &app, &version, &tables, err)))
            return rc;
    }
    if (k == FOREIGN) {
        /* name a few of its tables: "this is my music library" is obvious
         * from them */
        sqlite3_stmt *st = NULL;
        const char *names = NULL;
        if (sqlite3_prepare_v2(h->db,
                               "SELECT group_concat(name, ', ') FROM (SELECT name FROM "
                               "sqlite_master WHERE type = 'table' ORDER BY name LIMIT 4)",
                               -1, &st, NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
            names = col_text(st, 0);
        rc = tp_error_set(err, TP_EUSAGE,
                          "%s: not a trainpath history: a SQLite database of another "
                          "application (application_id %d, tables: %s)",
                          h->path, app, names ? names : "none");
        sqlite3_finalize(st);
        return rc;
    }
    if (version > TP_HISTORY_SCHEMA)
        return tp_error_set(err, TP_EUSAGE,
                            "%s: history schema version %d is newer than this trainpath knows "
                            "(%d); use a newer trainpath",
                            h->path, version, TP_HISTORY_SCHEMA);
    if (version < 1)
        return tp_error_set(err, TP_EUSAGE,
                            "%s: trainpath history with no schema version (damaged?)", h->path);
    /* a file that says it is ours but whose runs or metrics is a view (a
     * recursive one can make every read run forever) is not ours either */
    int ours = 0;
    if ((rc = pragma_int(h,
                         "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
                         "lower(name) IN ('runs', 'metrics')",
                         &ours, err)))
        return rc;
    if (ours != 2)
        return tp_error_set(err, TP_EUSAGE,
                            "%s: not a trainpath history: its runs and metrics are not both "
                            "tables (damaged?)",
                            h->path);
    /* version < TP_HISTORY_SCHEMA would migrate here; schema 1 is the first */
    return 0;
}

static int open_db(const char *path, bool ro, tp_history **out, tp_error *err)
{
    *out = NULL;
    if (!path || !*path)
        return tp_error_set(err, TP_EUSAGE, "history: no database file given");
    struct stat sb;
    if (stat(path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode))
            return tp_error_set(err, TP_EUSAGE, "%s: a folder, not a history file", path);
    } else if (ro || errno != ENOENT) {
        return tp_error_errno(err, errno == ENOENT ? TP_EUSAGE : TP_ESYS, errno, "%s", path);
    } else {
        /* a new file: SQLite's own error for a folder it cannot write in is
         * that of its last try (a read-only open: "No such file") */
        char dir[4096];
        if (access(tp_file_dir_of(path, dir, sizeof dir), W_OK) != 0)
            return tp_error_errno(err, TP_ESYS, errno, "%s: cannot create it in %s", path, dir);
    }
    tp_history *h = calloc(1, sizeof *h);
    if (!h || !(h->path = strdup(path))) {
        free(h);
        return tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
    }
    h->ro = ro;
    int flags = ro ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    int rc = sqlite3_open_v2(path, &h->db, flags | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        if (!h->db)
            rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", path);
        else
            rc = tp_error_set(
                err, code_of(rc) == TP_EUSAGE ? TP_EUSAGE : TP_ESYS, "%s: cannot open: %s%s%s",
                path, sqlite3_errmsg(h->db), sqlite3_system_errno(h->db) ? ": " : "",
                sqlite3_system_errno(h->db) ? strerror(sqlite3_system_errno(h->db)) : "");
        tp_history_close(h);
        return rc;
    }
    sqlite3_extended_result_codes(h->db, 1);
    sqlite3_busy_timeout(h->db, TP_HISTORY_BUSY_MS);
    rc = check(h, err);
    if (!rc)
        rc = exec(h, "PRAGMA foreign_keys = ON", "configure", err);
    if (rc) {
        tp_history_close(h);
        return rc;
    }
    *out = h;
    return 0;
}

int tp_history_open(const char *path, tp_history **h, tp_error *err)
{
    return open_db(path, false, h, err);
}

int tp_history_open_readonly(const char *path, tp_history **h, tp_error *err)
{
    return open_db(path, true, h, err);
}

void tp_history_close(tp_history *h)
{
    if (!h)
        return;
    sqlite3_close_v2(h->db);
    free(h->path);
    free(h);
}

const char *tp_history_path(const tp_history *h)
{
    return h ? h->path : NULL;
}

/* ---- add ---- */

/* "2026-11-30T18:36:22.935Z" (fraction and zone optional; "+01:00" zones
 * allowed) as seconds since the epoch; false when it is not that. */
static bool parse_utc(const char *s, double *t)
{
    struct tm tm = {0};
    int n = 0;
    if (!s ||
        sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
               &tm.tm_min, &tm.tm_sec, &n) != 6 ||
        n != 19)
        return false;
    if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 ||
        tm.tm_min > 59 || tm.tm_sec > 60)
        return false;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    double frac = 0;
    const char *p = s + n;
    if (*p == '.') {
        double scale = 0.1;
        for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10)
            frac += (*p - '0') * scale;
    }
    long zone_s = 0;
    if (*p == 'Z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int zh, zm, zn = 0;
        if (sscanf(p + 1, "%2d:%2d%n", &zh, &zm, &zn) != 2 || zn != 5)
            return false;
        zone_s = (*p == '+' ? 1 : -1) * (zh * 3600L + zm * 60L);
        p += 6;
    }
    if (*p)
        return false;
    *t = (double)(timegm(&tm) - zone_s) + frac;
    return true;
}

/* The id of the run already stored under the same identity. */
static int existing(tp_history *h, const json_t *pv, const char *host, int64_t *id, tp_error *err)
{
    sqlite3_stmt *st;
    int rc = prep(h,
                  "SELECT id FROM runs WHERE command = ?1 AND host = ?2 AND started_utc = ?3 "
                  "AND config_id = ?4",
                  &st, err);
    if (rc)
        return rc;
    if (bind_text(st, 1, tp_json_str(pv, "command")) | bind_text(st, 2, host) |
        bind_text(st, 3, tp_json_str(pv, "started_utc")) |
        bind_text(st, 4, tp_json_str(pv, "config_id")))
        rc = dberr(h, err, "find the run");
    else if (sqlite3_step(st) == SQLITE_ROW)
        *id = sqlite3_column_int64(st, 0);
    else
        rc = dberr(h, err, "find the run");
    sqlite3_finalize(st);
    return rc;
}

static int add_metrics(tp_history *h, int64_t run_id, const json_t *rows, size_t *stored,
                       tp_error *err)
{
    sqlite3_stmt *st;
    int rc = prep(h,
                  "INSERT INTO metrics (run_id, metric, key, labels, value, unit, better, count, "
                  "mean, stdev) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                  &st, err);
    if (rc)
        return rc;
    size_t i;
    const json_t *row;
    json_array_foreach(rows, i, row)
    {
        char *labels = json_dumps(json_object_get(row, "labels"), JSON_COMPACT | JSON_SORT_KEYS);
        if (!labels) {
            rc = tp_error_set(err, TP_ENOMEM, "%s: out of memory", h->path);
            break;
        }
        const json_t *stats = json_object_get(row, "stats");
        double count = stats ? json_number_value(json_object_get(stats, "count")) : NAN;
        sqlite3_reset(st);
        int b = sqlite3_bind_int64(st, 1, run_id) | bind_text(st, 2, tp_json_str(row, "metric")) |
                bind_text(st, 3, tp_json_str(row, "key")) | bind_text(st, 4, labels) |
                bind_real(st, 5, json_number_value(json_object_get(row, "value"))) |
                bind_text(st, 6, tp_json_str(row, "unit") ? tp_json_str(row, "unit") : "") |
                bind_text(st, 7, tp_json_str(row, "better")) |
                (isfinite(count) ? sqlite3_bind_int64(st, 8, (sqlite3_int64)count)
                                 : sqlite3_bind_null(st, 8)) |
                bind_real(st, 9, stats ? json_number_value(json_object_get(stats, "mean")) : NAN) |
                bind_real(st, 10, stats ? json_number_value(json_object_get(stats, "stdev")) : NAN);
        free(labels);
        if (b) {
            rc = dberr(h, err, "store a metric");
            break;
        }
        if (sqlite3_step(st) != SQLITE_DONE) {
            rc = dberr(h, err, "store a metric");
            tp_error_prefix(err, "%s", tp_json_str(row, "key") ? tp_json_str(row, "key") : "?");
            break;
        }
        (*stored)++;
    }
    sqlite3_finalize(st);
    return rc;
}

int tp_history_add_run(tp_history *h, const json_t *doc, const char *file, const char *batch,
                       struct tp_history_added *out, tp_error *err)
{
    const char *name = file ? file : "result document";
    struct tp_history_added res = {0, false, 0};
    if (out)
        *out = res;
    if (h->ro)
        return tp_error_set(err, TP_EUSAGE, "%s: opened read-only; cannot add %s", h->path, name);
    if (!json_is_object(doc))
        return tp_error_set(err, TP_EUSAGE, "%s: not a result document", name);
    json_t *pv = tp_report_provenance(doc);
    if (!pv)
        return tp_error_set(err, TP_ENOMEM, "%s: out of memory", name);
    double started_s = 0;
    int rc = 0;
    if (!tp_json_str(pv, "command"))
        rc = tp_error_set(err, TP_EUSAGE, "%s: result document without a command", name);
    else if (!parse_utc(tp_json_str(pv, "started_utc"), &started_s))
        rc = tp_error_set(err, TP_EUSAGE, "%s: no valid started_utc (ISO 8601, UTC)", name);
    json_t *rows = rc ? NULL : tp_report_metrics(doc, err);
    if (!rc && !rows)
        rc = TP_ENOMEM;
    if (rc) {
        json_decref(pv);
        return rc;
    }
    /* a missing host is "", not NULL: NULLs would never collide in UNIQUE,
     * and the duplicate rule would silently not apply */
    const char *host = tp_json_str(pv, "host") ? tp_json_str(pv, "host") : "";
    bool ok = json_is_true(json_object_get(json_object_get(doc, "status"), "ok"));

    sqlite3_stmt *st = NULL;
    rc = exec(h, "BEGIN IMMEDIATE", "add a run", err);
    if (!rc)
        rc = prep(h,
                  "INSERT INTO runs (batch, command, host, started_utc, started_s, tool_version, "
                  "kernel, config_id, ok, file, added_utc) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
                  "?8, ?9, ?10, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) "
                  "ON CONFLICT (command, host, started_utc, config_id) DO NOTHING",
                  &st, err);
    if (!rc && (bind_text(st, 1, batch) | bind_text(st, 2, tp_json_str(pv, "command")) |
                bind_text(st, 3, host) | bind_text(st, 4, tp_json_str(pv, "started_utc")) |
                sqlite3_bind_double(st, 5, started_s) |
                bind_text(st, 6, tp_json_str(pv, "tool_version")) |
                bind_text(st, 7, tp_json_str(pv, "kernel")) |
                bind_text(st, 8, tp_json_str(pv, "config_id")) | sqlite3_bind_int(st, 9, ok) |
                bind_text(st, 10, file)))
        rc = dberr(h, err, "add a run");
    if (!rc)
        rc = run(h, st, "add a run", err);
    sqlite3_finalize(st);
    if (!rc) {
        if (sqlite3_changes(h->db) == 0) {
            rc = existing(h, pv, host, &res.run_id, err);
        } else {
            res.run_id = sqlite3_last_insert_rowid(h->db);
            res.added = true;
            rc = add_metrics(h, res.run_id, rows, &res.metrics, err);
        }
    }
    if (!rc)
        rc = exec(h, "COMMIT", "add a run", err);
    if (rc) {
        rollback(h);
        tp_error_prefix(err, "adding %s", name);
        res = (struct tp_history_added){0, false, 0};
    }
    if (out)
        *out = res;
    json_decref(rows);
    json_decref(pv);
    return rc;
}

int tp_history_add(tp_history *h, const json_t *doc, const char *file, const char *batch,
                   tp_error *err)
{
    return tp_history_add_run(h, doc, file, batch, NULL, err);
}

/* ---- read ---- */

/* The inner query picks the most recent `last` points; the outer one puts
 * them back in time order. */
#define SERIES_SELECT                                                                              \
    "SELECT id, started_utc, host, config_id, key, value, unit, metric FROM ("                     \
    " SELECT r.id, r.started_utc, r.started_s, r.host, r.config_id, m.key, m.value, m.unit,"       \
    " m.metric"                                                                                    \
    " FROM metrics m JOIN runs r ON r.id = m.run_id WHERE "
#define SERIES_TAIL                                                                                \
    " AND (?2 IS NULL OR r.host = ?2) AND (?3 IS NULL OR r.config_id = ?3)"                        \
    " ORDER BY r.started_s DESC, r.id DESC LIMIT ?4)"                                              \
    " ORDER BY started_s, id"

static const char series_by_key[] = SERIES_SELECT "m.key = ?1" SERIES_TAIL;
/* labels ?5: every pair of the filter object is among the row's labels */
static const char series_by_metric[] =
    SERIES_SELECT "m.metric = ?1 AND NOT EXISTS (SELECT 1 FROM json_each(?5) f WHERE NOT EXISTS"
                  " (SELECT 1 FROM json_each(m.labels) l WHERE l.key = f.key AND"
                  " l.value = f.value))" SERIES_TAIL;

static int oom(const tp_history *h, tp_error *err)
{
    return tp_error_set(err, TP_ENOMEM, "%s: out of memory", h->path);
}

int tp_history_series(tp_history *h, const struct tp_history_filter *f, json_t **points,
                      tp_error *err)
{
    *points = NULL;
    if (!f || (!f->key && !f->metric))
        return tp_error_set(err, TP_EUSAGE, "%s: history of what? give a key or a metric", h->path);
    char *labels = NULL;
    if (!f->key && f->labels) {
        const char *k;
        const json_t *v;
        if (!json_is_object(f->labels))
            return tp_error_set(err, TP_EUSAGE, "%s: label filter is not an object", h->path);
        json_object_foreach((json_t *)f->labels, k, v)
        {
            if (!json_is_string(v))
                return tp_error_set(err, TP_EUSAGE,
                                    "%s: label filter %s: values are strings (\"8\", not 8)",
                                    h->path, k);
        }
        if (!(labels = json_dumps(f->labels, JSON_COMPACT)))
            return oom(h, err);
    }
    sqlite3_stmt *st;
    int rc = prep(h, f->key ? series_by_key : series_by_metric, &st, err);
    if (rc) {
        free(labels);
        return rc;
    }
    int b = bind_text(st, 1, f->key ? f->key : f->metric) | bind_text(st, 2, f->host) |
            bind_text(st, 3, f->config_id) |
            sqlite3_bind_int64(st, 4, f->last ? (sqlite3_int64)f->last : -1);
    if (!f->key)
        b |= bind_text(st, 5, labels);
    free(labels);
    json_t *a = json_array();
    if (b)
        rc = dberr(h, err, "read the history");
    else if (!a)
        rc = oom(h, err);
    while (!rc) {
        int s = sqlite3_step(st);
        if (s == SQLITE_DONE)
            break;
        if (s != SQLITE_ROW) {
            rc = dberr(h, err, "read the history");
            break;
        }
        if (!isfinite(sqlite3_column_double(st, 5)))
            continue; /* a damaged file's: trainpath stores finite values only */
        /* an index that disagrees with its table hands back rows of
         * another series: SQLite does not notice, so we do */
        const char *got = (const char *)sqlite3_column_text(st, f->key ? 4 : 7);
        if (!same_text(got, f->key ? f->key : f->metric)) {
            rc = tp_error_set(err, TP_EUSAGE,
                              "%s: damaged: its index of %s gave a row of %s for %s "
                              "(`sqlite3 %s REINDEX` rebuilds the index)",
                              h->path, f->key ? "keys" : "metrics", got ? got : "null",
                              f->key ? f->key : f->metric, h->path);
            break;
        }
        json_t *p =
            json_pack("{s:I, s:o, s:o, s:o, s:o, s:f, s:o}", "run_id",
                      (json_int_t)sqlite3_column_int64(st, 0), "started_utc", col_str(st, 1),
                      "host", col_str(st, 2), "config_id", col_str(st, 3), "key", col_str(st, 4),
                      "value", sqlite3_column_double(st, 5), "unit", col_str(st, 6));
        if (!p || json_array_append_new(a, p) < 0)
            rc = oom(h, err);
    }
    sqlite3_finalize(st);
    if (rc) {
        json_decref(a);
        return rc;
    }
    *points = a;
    return 0;
}

int tp_history_runs(tp_history *h, const char *batch, json_t **runs, tp_error *err)
{
    *runs = NULL;
    sqlite3_stmt *st;
    int rc = prep(h,
                  "SELECT r.id, r.batch, r.command, r.host, r.started_utc, r.tool_version, "
                  "r.kernel, r.config_id, r.ok, r.file, "
                  "(SELECT count(*) FROM metrics m WHERE m.run_id = r.id) "
                  "FROM runs r WHERE (?1 IS NULL OR r.batch = ?1) ORDER BY r.started_s, r.id",
                  &st, err);
    if (rc)
        return rc;
    json_t *a = json_array();
    if (bind_text(st, 1, batch))
        rc = dberr(h, err, "list the runs");
    else if (!a)
        rc = oom(h, err);
    while (!rc) {
        int s = sqlite3_step(st);
        if (s == SQLITE_DONE)
            break;
        if (s != SQLITE_ROW) {
            rc = dberr(h, err, "list the runs");
            break;
        }
        json_t *r =
            json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:o, s:I}", "run_id",
                      (json_int_t)sqlite3_column_int64(st, 0), "batch", col_str(st, 1), "command",
                      col_str(st, 2), "host", col_str(st, 3), "started_utc", col_str(st, 4),
                      "tool_version", col_str(st, 5), "kernel", col_str(st, 6), "config_id",
                      col_str(st, 7), "ok", sqlite3_column_int(st, 8), "file", col_str(st, 9),
                      "metrics", (json_int_t)sqlite3_column_int64(st, 10));
        if (!r || json_array_append_new(a, r) < 0)
            rc = oom(h, err);
    }
    sqlite3_finalize(st);
    if (rc) {
        json_decref(a);
        return rc;
    }
    *runs = a;
    return 0;
}

/* ---- baselines ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void tp_history_trim(double *values, size_t n, struct tp_baseline *out)
{
    memset(out, 0, sizeof *out);
    out->samples = n;
    if (n == 0) {
        out->value = out->min = out->max = NAN;
        snprintf(out->rule, sizeof out->rule, "no samples");
        return;
    }
    qsort(values, n, sizeof *values, cmp_double);
    /* k = round(n / 10), at least 1, from 5 samples on; none below */
    size_t k = n < 5 ? 0 : (n + 5) / 10;
    double sum = 0;
    for (size_t i = k; i < n - k; i++)
        sum += values[i];
    out->kept = n - 2 * k;
    out->value = sum / (double)out->kept;
    if (!isfinite(out->value)) { /* the sum overflowed: average the parts instead */
        out->value = 0;
        for (size_t i = k; i < n - k; i++)
            out->value += values[i] / (double)out->kept;
    }
    out->min = values[k];
    out->max = values[n - k - 1];
    if (k)
        snprintf(out->rule, sizeof out->rule, "trimmed mean 10 %%, %zu of %zu samples", out->kept,
                 n);
    else
        snprintf(out->rule, sizeof out->rule, "mean, %zu sample%s", n, n == 1 ? "" : "s");
}

struct values {
    double *v;
    size_t n, cap;
};

static bool push(struct values *vs, double v)
{
    if (vs->n == vs->cap) {
        size_t cap = vs->cap ? 2 * vs->cap : 32;
        double *nv = realloc(vs->v, cap * sizeof *nv);
        if (!nv)
            return false;
        vs->v = nv;
        vs->cap = cap;
    }
    vs->v[vs->n++] = v;
    return true;
}

static size_t scope_runs(const struct tp_history_scope *s)
{
    return s && s->runs ? s->runs : TP_HISTORY_BASELINE_RUNS;
}

int tp_history_baseline(tp_history *h, const char *key, const struct tp_history_scope *scope,
                        struct tp_baseline *out, tp_error *err)
{
    tp_history_trim(NULL, 0, out);
    sqlite3_stmt *st;
    int rc = prep(h,
                  "SELECT m.value FROM metrics m JOIN runs r ON r.id = m.run_id "
                  "WHERE m.key = ?1 AND (?2 IS NULL OR r.host = ?2) "
                  "AND (?3 IS NULL OR r.config_id = ?3) "
                  "ORDER BY r.started_s DESC, r.id DESC LIMIT ?4",
                  &st, err);
    if (rc)
        return rc;
    struct values vs = {0};
    if (bind_text(st, 1, key) | bind_text(st, 2, scope ? scope->host : NULL) |
        bind_text(st, 3, scope ? scope->config_id : NULL) |
        sqlite3_bind_int64(st, 4, (sqlite3_int64)scope_runs(scope)))
        rc = dberr(h, err, "read the baseline");
    while (!rc) {
        int s = sqlite3_step(st);
        if (s == SQLITE_DONE)
            break;
        if (s != SQLITE_ROW)
            rc = dberr(h, err, "read the baseline");
        else if (isfinite(sqlite3_column_double(st, 0)) && !push(&vs, sqlite3_column_double(st, 0)))
            rc = oom(h, err);
    }
    sqlite3_finalize(st);
    if (!rc)
        tp_history_trim(vs.v, vs.n, out);
    free(vs.v);
    return rc;
}

/* One baseline's JSON from its values and the latest row's description. */
static json_t *baseline_json(struct values *vs, const char *config_id, const char *key,
                             const char *metric, const char *labels, const char *unit,
                             const char *better)
{
    struct tp_baseline b;
    tp_history_trim(vs->v, vs->n, &b);
    json_t *lab = labels ? json_loads(labels, 0, NULL) : NULL;
    if (!json_is_object(lab)) {
        json_decref(lab);
        lab = json_object();
    }
    /* the texts as col_str reads them: a damaged file's NULL is "", bytes
     * that are not UTF-8 are '?' */
    return json_pack("{s:o, s:o, s:o, s:o, s:o?, s:f, s:I, s:I, s:f, s:f, s:s, s:o}", "key",
                     tp_json_text(key ? key : ""), "metric", tp_json_text(metric ? metric : ""),
                     "labels", lab, "unit", tp_json_text(unit ? unit : ""), "better",
                     better ? tp_json_text(better) : NULL, "value", b.value, "samples",
                     (json_int_t)b.samples, "kept", (json_int_t)b.kept, "min", b.min, "max", b.max,
                     "rule", b.rule, "config_id", tp_json_text(config_id ? config_id : ""));
}

int tp_history_baselines(tp_history *h, const struct tp_history_scope *scope, json_t **out,
                         tp_error *err)
{
    *out = NULL;
    sqlite3_stmt *st;
    /* rn 1 is each key's most recent run; the first row of a group
     * describes it */
    int rc = prep(h,
                  "SELECT config_id, key, metric, labels, unit, better, value FROM ("
                  " SELECT r.config_id, m.key, m.metric, m.labels, m.unit, m.better, m.value,"
                  "  row_number() OVER (PARTITION BY r.config_id, m.key"
                  "   ORDER BY r.started_s DESC, r.id DESC) AS rn"
                  " FROM metrics m JOIN runs r ON r.id = m.run_id"
                  " WHERE (?1 IS NULL OR r.host = ?1) AND (?2 IS NULL OR r.config_id = ?2))"
                  " WHERE rn <= ?3 ORDER BY config_id, key, rn",
                  &st, err);
    if (rc)
        return rc;
    json_t *a = json_array();
    struct values vs = {0};
    /* the group being collected: its first row, copied */
    char *desc[6] = {NULL};
    bool have = false; /* desc holds a group's first row */
    if (bind_text(st, 1, scope ? scope->host : NULL) |
        bind_text(st, 2, scope ? scope->config_id : NULL) |
        sqlite3_bind_int64(st, 3, (sqlite3_int64)scope_runs(scope)))
        rc = dberr(h, err, "read the baselines");
    else if (!a)
        rc = oom(h, err);
    while (!rc) {
        int s = sqlite3_step(st);
        if (s != SQLITE_DONE && s != SQLITE_ROW) {
            rc = dberr(h, err, "read the baselines");
            break;
        }
        bool same = s == SQLITE_ROW && have && same_text(desc[0], col_text(st, 0)) &&
                    same_text(desc[1], col_text(st, 1));
        if (!same && vs.n) {
            json_t *b = baseline_json(&vs, desc[0], desc[1], desc[2], desc[3], desc[4], desc[5]);
            if (!b || json_array_append_new(a, b) < 0) {
                rc = oom(h, err);
                break;
            }
            vs.n = 0;
        }
        if (s == SQLITE_DONE)
            break;
        if (!same) {
            for (int i = 0; i < 6; i++) {
                free(desc[i]);
                const char *t = col_text(st, i);
                desc[i] = t ? strdup(t) : NULL;
                if (t && !desc[i])
                    rc = oom(h, err);
            }
            have = true;
        }
        if (!rc && isfinite(sqlite3_column_double(st, 6)) &&
            !push(&vs, sqlite3_column_double(st, 6)))
            rc = oom(h, err);
    }
    sqlite3_finalize(st);
    for (int i = 0; i < 6; i++)
        free(desc[i]);
    free(vs.v);
    if (rc) {
        json_decref(a);
        return rc;
    }
    *out = a;
    return 0;
}

/* ---- printing ---- */

void tp_history_print_series(FILE *f, const char *what, const char *db, const json_t *points)
{
    size_t np = json_array_size(points);
    fprintf(f, "# %s in %s: %zu point%s\n", what, db, np, np == 1 ? "" : "s");
    size_t i;
    json_t *p;
    double first = NAN;
    json_array_foreach(points, i, p) {
        double v = json_number_value(json_object_get(p, "value"));
        if (i == 0)
            first = v;
        /* host and key come from the documents: safe text (tp/text.h) */
        char buf[48], th[256], tk[1024];
        fprintf(f, "%-24s %-12s %14s  %+7.1f %%  %s\n", tp_json_str(p, "started_utc"),
                tp_text_safe(tp_json_str(p, "host"), th, sizeof th, TP_TEXT_LINE),
                tp_gate_fmt(v, tp_json_str(p, "unit"), 4, buf, sizeof buf),
                first != 0 ? 100 * (v - first) / fabs(first) : 0.0,
                tp_text_safe(tp_json_str(p, "key"), tk, sizeof tk, TP_TEXT_LINE));
    }
}

void tp_history_print_baselines(FILE *f, const json_t *baselines)
{
    size_t i;
    json_t *x;
    json_array_foreach(baselines, i, x) {
        char buf[48], tk[1024];
        fprintf(f, "%-60s %14s  %s\n",
                tp_text_safe(tp_json_str(x, "key"), tk, sizeof tk, TP_TEXT_LINE),
                tp_gate_fmt(json_number_value(json_object_get(x, "value")), tp_json_str(x, "unit"),
                            4, buf, sizeof buf),
                tp_json_str(x, "rule"));
    }
}
