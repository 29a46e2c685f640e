/* Result documents, error codes and the measurement clock: the envelope every
 * command writes, status mapping, atomic writes, and the TSC calibration
 * checked against CLOCK_MONOTONIC_RAW. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tp/clock.h"
#include "tp/error.h"
#include "tp/result.h"

static void new_document_has_the_envelope(void **state)
{
    (void)state;
    json_t *doc = tp_result_new("net lat", json_pack("{s:i}", "window", 64));
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "schema")), "trainpath.result/1");
    assert_string_equal(json_string_value(json_object_get(doc, "command")), "net lat");
    const char *keys[] = {"tool",       "status", "started_utc", "finished_utc",
                          "provenance", "config", "results"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (!json_object_get(doc, keys[i]))
            fail_msg("document lacks '%s'", keys[i]);
    json_t *prov = json_object_get(doc, "provenance");
    const char *pk[] = {"host", "kernel", "cpu", "nics", "libraries", "clock"};
    for (size_t i = 0; i < sizeof pk / sizeof pk[0]; i++)
        if (!json_object_get(prov, pk[i]))
            fail_msg("provenance lacks '%s'", pk[i]);
    json_t *clock = json_object_get(prov, "clock");
    assert_string_equal(json_string_value(json_object_get(clock, "source")),
                        tp_clock_info()->source);
    /* a fresh document is not yet a success */
    assert_false(json_is_true(json_object_get(json_object_get(doc, "status"), "ok")));
    assert_true(json_is_null(json_object_get(doc, "finished_utc")));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "config"), "window")),
                     64);
    json_decref(doc);
}

static void finish_sets_status(void **state)
{
    (void)state;
    struct {
        int code;
        const char *name;
        int exit_code;
    } cases[] = {{TP_OK, "ok", 0},        {TP_EUSAGE, "usage", 2},
                 {TP_EPEER, "peer", 1},   {TP_ETIMEOUT, "timeout", 1},
                 {TP_ECHECK, "check", 1}, {TP_EAUTH, "auth", 1},
                 {TP_EBUSY, "busy", 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *doc = tp_result_new("net bw", NULL);
        tp_result_finish(doc, cases[i].code, cases[i].code ? "why" : "");
        json_t *st = json_object_get(doc, "status");
        assert_string_equal(json_string_value(json_object_get(st, "code")), cases[i].name);
        assert_int_equal(json_integer_value(json_object_get(st, "exit_code")), cases[i].exit_code);
        assert_int_equal(json_is_true(json_object_get(st, "ok")), cases[i].code == TP_OK);
        assert_int_equal(tp_exit_code(cases[i].code), cases[i].exit_code);
        assert_true(json_is_string(json_object_get(doc, "finished_utc")));
        json_decref(doc);
    }
}

static void write_is_atomic_and_readable(void **state)
{
    (void)state;
    char dir[] = "/tmp/tp-result-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/r.json", dir);
    json_t *doc = tp_result_new("net lat", NULL);
    json_object_set_new(json_object_get(doc, "results"), "x", tp_metric(1.5, "B/s"));
    tp_result_finish(doc, TP_OK, "");
    tp_error err;
    assert_int_equal(tp_result_write(doc, path, &err), 0);
    json_error_t je;
    json_t *back = json_load_file(path, 0, &je);
    assert_non_null(back);
    assert_true(json_equal(doc, back));
    json_t *x = json_object_get(json_object_get(back, "results"), "x");
    assert_string_equal(json_string_value(json_object_get(x, "unit")), "B/s");
    json_decref(back);
    snprintf(path, sizeof path, "%s/missing/r.json", dir);
    int rc = tp_result_write(doc, path, &err);
    if (rc != TP_EUSAGE || !strstr(err.msg, path))
        fail_msg("want usage error naming %s, got %d '%s'", path, rc, err.msg);
    json_decref(doc);
    snprintf(path, sizeof path, "%s/r.json", dir);
    unlink(path);
    assert_int_equal(rmdir(dir), 0); /* nothing else was left behind */
}

static void error_prefix_and_errno(void **state)
{
    (void)state;
    tp_error e;
    tp_error_set(&e, TP_EPEER, "peer %s closed", "10.0.0.2:7471");
    tp_error_prefix(&e, "size %d", 64);
    assert_string_equal(e.msg, "size 64: peer 10.0.0.2:7471 closed");
    tp_error_errno(&e, TP_ESYS, 2, "open %s", "/x");
    assert_string_equal(e.msg, "open /x: No such file or directory");
    assert_int_equal(e.code, TP_ESYS);
    assert_int_equal(tp_error_set(NULL, TP_EUSAGE, "ignored"), TP_EUSAGE);
    /* a prefix on a full message truncates rather than overflows */
    memset(e.msg, 'a', sizeof e.msg - 1);
    e.msg[sizeof e.msg - 1] = '\0';
    tp_error_prefix(&e, "p");
    assert_int_equal(strlen(e.msg), sizeof e.msg - 1);
    assert_memory_equal(e.msg, "p: aaa", 6);
}

static uint64_t raw_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void clock_agrees_with_monotonic_raw(void **state)
{
    (void)state;
    tp_clock_init();
    const struct tp_clock_info *ci = tp_clock_info();
    assert_true(ci->resolution_ns > 0 && ci->resolution_ns < 1000);
    assert_true(ci->read_overhead_ns > 0 && ci->read_overhead_ns < 10000);
    uint64_t a0 = tp_now_ns(), r0 = raw_ns();
    usleep(200000);
    uint64_t a1 = tp_now_ns(), r1 = raw_ns();
    double rel = ((double)(a1 - a0) - (double)(r1 - r0)) / (double)(r1 - r0);
    if (rel > 1e-3 || rel < -1e-3)
        fail_msg("clock %s drifts %.2e against CLOCK_MONOTONIC_RAW over 200 ms", ci->source, rel);
    uint64_t prev = tp_now_ns();
    for (int i = 0; i < 100000; i++) {
        uint64_t now = tp_now_ns();
        if (now < prev)
            fail_msg("clock went backwards: %llu after %llu", (unsigned long long)now,
                     (unsigned long long)prev);
        prev = now;
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(new_document_has_the_envelope),   cmocka_unit_test(finish_sets_status),
        cmocka_unit_test(write_is_atomic_and_readable),    cmocka_unit_test(error_prefix_and_errno),
        cmocka_unit_test(clock_agrees_with_monotonic_raw),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
