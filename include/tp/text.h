/* Text for a terminal (src/core/text.c): what a peer sent (a server's
 * ERROR), what a file holds (a plan's candidate names, a thresholds file's
 * labels, a policy's words) or what an error message quotes of either is
 * printed only through tp_text_safe, so that no escape sequence (ESC [2J
 * clears the screen), carriage return or newline (a forged "trainpath: ok"
 * line) reaches the terminal or a log that a person or a pipe reads. */
#ifndef TP_TEXT_H
#define TP_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* Flags of tp_text_safe. */
enum {
    TP_TEXT_LINE = 0,     /* one line: '\n' is replaced as well */
    TP_TEXT_NEWLINES = 1, /* several lines: '\n' is kept */
};

/* Whether s (NULL: yes) prints as it is under flags: well-formed UTF-8
 * (the rules of tp_utf8_fix, src/core/json.c) with no C0 control but
 * '\t' (and '\n' with TP_TEXT_NEWLINES), no DEL, no C1 control (U+0080 to
 * U+009F, ESC's 8-bit forms among them) and no bidirectional override or
 * isolate (U+202A..U+202E, U+2066..U+2069), which reorder what follows. */
bool tp_text_is_safe(const char *s, unsigned flags);

/* s itself when tp_text_is_safe(s, flags); else buf (cap >= 1 bytes)
 * holding s with each unsafe character (or byte that is not UTF-8) made
 * one '?', cut at a character's boundary when it does not fit. NULL s
 * gives "" (never "(null)"). The result is valid while s and buf are. */
const char *tp_text_safe(const char *s, char *buf, size_t cap, unsigned flags);

#endif
