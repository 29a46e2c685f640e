/* core/text.c: the safe text every printer of a peer's or a file's words
 * uses. Controls (C0 but tab, DEL, C1), bidirectional overrides and bytes
 * that are not UTF-8 become one '?' each; valid text is returned as it is,
 * without a copy; a cut never splits a character. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tp/text.h"
#include "tp_test.h"

static void test_clean_is_kept(void **state)
{
    (void)state;
    char buf[64];
    const char *s = "plain, tab\there, caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";
    assert_true(tp_text_is_safe(s, TP_TEXT_LINE));
    assert_ptr_equal(tp_text_safe(s, buf, sizeof buf, TP_TEXT_LINE), s);
    TP_EQ_STR(tp_text_safe(NULL, buf, sizeof buf, TP_TEXT_LINE), "");
    assert_true(tp_text_is_safe("two\nlines", TP_TEXT_NEWLINES));
    assert_false(tp_text_is_safe("two\nlines", TP_TEXT_LINE));
}

static void test_controls_replaced(void **state)
{
    (void)state;
    char buf[128];
    /* ESC [2J clears the screen; CR and LF forge a line; U+009B is CSI */
    TP_EQ_STR(tp_text_safe("x\x1b[2J\r\ntrainpath: ok \xc2\x9b" "31m", buf, sizeof buf,
                           TP_TEXT_LINE),
              "x?[2J??trainpath: ok ?31m");
    TP_EQ_STR(tp_text_safe("a\nb\x07" "c", buf, sizeof buf, TP_TEXT_NEWLINES), "a\nb?c");
    TP_EQ_STR(tp_text_safe("del\x7f", buf, sizeof buf, TP_TEXT_LINE), "del?");
    /* U+202E (right-to-left override) reorders what follows */
    TP_EQ_STR(tp_text_safe("ab\xe2\x80\xae" "cd", buf, sizeof buf, TP_TEXT_LINE), "ab?cd");
    /* not UTF-8: a lone continuation, an overlong form, a surrogate */
    TP_EQ_STR(tp_text_safe("\x80z\xc0\xaf\xed\xa0\x80", buf, sizeof buf, TP_TEXT_LINE),
              "?z?????");
}

static void test_cut_at_a_character(void **state)
{
    (void)state;
    char buf[6];
    /* "\x1b" makes a copy; 5 bytes fit: "?ab" and then not half of the euro */
    TP_EQ_STR(tp_text_safe("\x1b" "ab\xe2\x82\xac" "cd", buf, sizeof buf, TP_TEXT_LINE), "?ab");
    char one[1];
    TP_EQ_STR(tp_text_safe("\x1b", one, sizeof one, TP_TEXT_LINE), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean_is_kept),
        cmocka_unit_test(test_controls_replaced),
        cmocka_unit_test(test_cut_at_a_character),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
