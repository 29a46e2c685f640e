/* core/json.c: the readers of result documents and the UTF-8 repair that
 * every place turning outside text into JSON uses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tp/json.h"
#include "tp_test.h"

static void test_num_forms(void **state)
{
    (void)state;
    json_t *o = json_pack("{s:f, s:i, s:{s:f, s:s}, s:s, s:{s:s}}", "bare", 2.5, "int", 7, "unit",
                          "value", 3e9, "unit", "B/s", "text", "x", "novalue", "unit", "ns");
    TP_NEAR(tp_json_num(o, "bare"), 2.5, 0);
    TP_NEAR(tp_json_num(o, "int"), 7, 0);
    TP_NEAR(tp_json_num(o, "unit"), 3e9, 0);
    assert_true(isnan(tp_json_num(o, "missing")));
    assert_true(isnan(tp_json_num(o, "text")));
    assert_true(isnan(tp_json_num(o, "novalue")));
    assert_true(isnan(tp_json_num(NULL, "bare")));
    TP_NEAR(tp_json_num_or(o, "missing", 0), 0, 0);
    TP_NEAR(tp_json_num_or(o, "unit", 0), 3e9, 0);
    const char *unit = "untouched";
    TP_NEAR(tp_json_num_unit(o, "bare", &unit), 2.5, 0);
    TP_EQ_STR(unit, "untouched");
    TP_NEAR(tp_json_num_unit(o, "unit", &unit), 3e9, 0);
    TP_EQ_STR(unit, "B/s");
    TP_EQ_STR(tp_json_str(o, "text"), "x");
    assert_null(tp_json_str(o, "bare"));
    assert_null(tp_json_str(o, "missing"));
    assert_null(tp_json_str(NULL, "text"));
    json_decref(o);
}

/* Every repaired string is one jansson takes, and valid characters stay. */
static void test_fix(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"plain", "plain"},
        {"caf\xc3\xa9", "caf\xc3\xa9"},                 /* é kept */
        {"\xe2\x82\xac and \xf0\x9f\x98\x80", "\xe2\x82\xac and \xf0\x9f\x98\x80"},
        {"cut \xe2\x82", "cut ??"},                    /* truncated 3-byte character */
        {"\xff\xfe", "??"},                            /* never valid */
        {"\xc0\xaf", "??"},                            /* overlong '/' */
        {"\xe0\x80\xaf", "???"},                       /* overlong, 3 bytes */
        {"\xed\xa0\x80", "???"},                       /* a UTF-16 surrogate */
        {"\xf4\x90\x80\x80", "????"},                  /* above U+10FFFF */
        {"a\x80z", "a?z"},                             /* a lone continuation byte */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[64];
        snprintf(buf, sizeof buf, "%s", cases[i].in);
        TP_EQ_STR(tp_utf8_fix(buf), cases[i].out);
        json_t *j = json_string(buf);
        if (!j)
            fail_msg("case %zu: jansson refuses the repaired \"%s\"", i, buf);
        json_decref(j);
        j = tp_json_text(cases[i].in);
        assert_non_null(j);
        TP_EQ_STR(json_string_value(j), cases[i].out);
        json_decref(j);
    }
    json_t *n = tp_json_text(NULL);
    assert_true(json_is_null(n));
    json_decref(n);
    /* n bytes, a NUL among them kept as jansson keeps it */
    json_t *j = tp_json_textn("a\0\xff", 3);
    assert_non_null(j);
    TP_EQ_INT(json_string_length(j), 3);
    assert_memory_equal(json_string_value(j), "a\0?", 3);
    json_decref(j);
}

static void test_trim(void **state)
{
    (void)state;
    char a[] = "ok \xe2\x82", b[] = "ok \xe2\x82\xac", c[] = "x\xc3", d[] = "plain";
    TP_EQ_STR(tp_utf8_trim(a), "ok ");
    TP_EQ_STR(tp_utf8_trim(b), "ok \xe2\x82\xac");
    TP_EQ_STR(tp_utf8_trim(c), "x");
    TP_EQ_STR(tp_utf8_trim(d), "plain");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_num_forms),
        cmocka_unit_test(test_fix),
        cmocka_unit_test(test_trim),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
