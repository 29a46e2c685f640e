/* Log lines to stderr: "trainpath: LEVEL: message". The server logs every
 * rejected client and closed connection here. */
#ifndef TP_LOG_H
#define TP_LOG_H

enum tp_log_level { TP_LOG_ERROR, TP_LOG_WARN, TP_LOG_INFO, TP_LOG_DEBUG };

/* Lines above level are dropped. Default TP_LOG_INFO; TP_LOG=debug in the
 * environment raises it. */
void tp_log_set_level(enum tp_log_level level);

/* Write one line (a trailing newline is added). Thread-safe: one write(2). */
void tp_log(enum tp_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
