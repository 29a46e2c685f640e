/* core/progress.c: the progress line of long work. The arithmetic (the
 * estimate of the time left, the line and its cut to the terminal's
 * width) as pure functions; the drawing through the test hooks, into a
 * pipe and on a clock the test sets: nothing before a quarter of a second,
 * at most one draw a quarter of a second however often the caller
 * updates, the same line not written twice, a log line's erase drawn over,
 * nothing at all when off, and no line in a forked child. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tp/progress.h"
#include "tp_test.h"

#define MS 1000000ull

static uint64_t fake_ns;
static uint64_t fake_clock(void)
{
    return fake_ns;
}

static int rd = -1, wr = -1;

static int setup(void **state)
{
    (void)state;
    int p[2];
    if (pipe(p) != 0)
        return -1;
    rd = p[0];
    wr = p[1];
    fcntl(rd, F_SETFL, O_NONBLOCK);
    fake_ns = 1000 * MS;
    tp_progress_test_hooks(wr, fake_clock, 100);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tp_progress_end();
    tp_progress_test_hooks(-1, NULL, 0);
    close(rd);
    close(wr);
    return 0;
}

/* What was drawn since the last call, escapes as they are. */
static const char *drawn(void)
{
    static char buf[8192];
    ssize_t n = read(rd, buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

static int count(const char *s, char c)
{
    int n = 0;
    for (; *s; s++)
        n += *s == c;
    return n;
}

static void test_eta(void **state)
{
    (void)state;
    TP_NEAR_REL(tp_progress_eta_s(5, 10, 5), 5, 1e-12);
    TP_NEAR_REL(tp_progress_eta_s(2.5, 10, 1), 3, 1e-12);
    TP_NEAR_REL(tp_progress_eta_s(1, 4, 30), 90, 1e-12);
    assert_true(tp_progress_eta_s(10, 10, 7) == 0);
    assert_true(tp_progress_eta_s(12, 10, 7) == 0);
    assert_true(tp_progress_eta_s(0, 10, 7) < 0); /* no work done: no estimate */
    assert_true(tp_progress_eta_s(3, 10, 0) < 0);
}

static void test_format(void **state)
{
    (void)state;
    char b[256];
    tp_progress_format(b, sizeof b, "coll allreduce 1M (trainpath)", 5, 12, "sizes", 12.4, 16.2,
                       100);
    TP_EQ_STR(b, "coll allreduce 1M (trainpath): 5/12 sizes, 0:12 elapsed, about 0:17 left");
    /* fractional work shows what is whole; no estimate yet */
    tp_progress_format(b, sizeof b, "net lat 8", 0.6, 3, "sizes", 0.9, -1, 100);
    TP_EQ_STR(b, "net lat 8: 0/3 sizes, 0:00 elapsed");
    /* by time: done and total as durations, no separate elapsed */
    tp_progress_format(b, sizeof b, "sdc, 2 chains", 12.7, 30, "s", -1, 17.3, 100);
    TP_EQ_STR(b, "sdc, 2 chains: 0:12/0:30, about 0:18 left");
    tp_progress_format(b, sizeof b, "validate", 3, 9, "tests", 3725, 7322.2, 100);
    TP_EQ_STR(b, "validate: 3/9 tests, 1:02:05 elapsed, about 2:02:03 left");
    /* too wide: the label gives way, the figures stay, within columns - 1 */
    size_t n = tp_progress_format(b, sizeof b, "a label far too long for a terminal 60 wide", 1, 2,
                                  "steps", 1, 1, 60);
    TP_EQ_INT(n, strlen(b));
    TP_EQ_STR(b, "a label far too l: 1/2 steps, 0:01 elapsed, about 0:01 left");
    /* a cut never splits a character (é is 2 bytes: 17 bytes of room keep 16) */
    tp_progress_format(
        b, sizeof b,
        "ca\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 1, 2,
        "steps", 1, 1, 60);
    TP_EQ_STR(b, "ca\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9: 1/2 steps, 0:01 "
                 "elapsed, about 0:01 left");
    /* narrower than the figures: they are cut at the width, no label */
    n = tp_progress_format(b, sizeof b, "label", 1, 2, "steps", 1, 1, 30);
    TP_EQ_INT(n, 29);
    TP_EQ_STR(b, "1/2 steps, 0:01 elapsed, abou");
    assert_true(tp_progress_format(b, sizeof b, "x", 1, 2, NULL, -1, -1, 0) > 0);
    TP_EQ_STR(b, "x: 1/2");
}

static void test_rate_limit(void **state)
{
    (void)state;
    tp_progress_begin(true, "work", 10, "steps", 0);
    fake_ns += 100 * MS;
    tp_progress_set(1);
    TP_EQ_STR(drawn(), ""); /* short work shows none */
    fake_ns += 200 * MS;    /* 0.3 s */
    tp_progress_set(2);
    const char *d = drawn();
    TP_EQ_STR(d, "\rwork: 2/10 steps, 0:00 elapsed, about 0:02 left\033[K");
    /* however often the caller updates, at most one draw a quarter of a second */
    for (int i = 0; i < 1000; i++) {
        fake_ns += 100000; /* 0.1 ms */
        tp_progress_set(2 + i / 500.0);
    }
    TP_EQ_STR(drawn(), ""); /* 0.4 s: the last draw was 0.1 s ago */
    fake_ns += 160 * MS;    /* 0.56 s */
    tp_progress_set(4);
    d = drawn();
    TP_EQ_INT(count(d, '\r'), 1);
    TP_HAS(d, "work: 4/10 steps, 0:00 elapsed, about 0:01 left");
    /* the same line is not written again */
    fake_ns += 260 * MS; /* 0.82 s: 4.9 of 10 shows as 4/10, about 0:01 left too */
    tp_progress_set(4.9);
    TP_EQ_STR(drawn(), "");
    tp_progress_what("other work");
    TP_EQ_STR(drawn(), ""); /* what() stores; set() draws */
    fake_ns += 300 * MS;
    tp_progress_set(5);
    TP_HAS(drawn(), "\rother work: 5/10 steps");
    tp_progress_end();
    TP_EQ_STR(drawn(), "\r\033[K"); /* erased for what the command prints next */
    assert_false(tp_progress_on());
}

static void test_off(void **state)
{
    (void)state;
    tp_progress_begin(false, "work", 10, "steps", TP_PROGRESS_TICK);
    assert_false(tp_progress_on());
    fake_ns += 5000 * MS;
    tp_progress_what("x");
    tp_progress_set(3);
    tp_progress_add(1);
    tp_progress_left(5);
    tp_progress_hide();
    tp_progress_end();
    TP_EQ_STR(drawn(), "");
    TP_EQ_STR(tp_progress_erase(), "");
}

static void test_erase_and_hide(void **state)
{
    (void)state;
    tp_progress_begin(true, "work", 4, "files", 0);
    TP_EQ_STR(tp_progress_erase(), "\r\033[K");
    fake_ns += 300 * MS;
    tp_progress_add(1);
    TP_HAS(drawn(), "work: 1/4 files");
    /* a log line erased it: the next update draws the same line again at once */
    TP_EQ_STR(tp_progress_erase(), "\r\033[K");
    fake_ns += 1 * MS;
    tp_progress_add(0);
    TP_HAS(drawn(), "work: 1/4 files");
    /* hide erases now; the next update draws at once */
    tp_progress_hide();
    TP_EQ_STR(drawn(), "\r\033[K");
    fake_ns += 1 * MS;
    tp_progress_add(1);
    TP_HAS(drawn(), "work: 2/4 files");
    tp_progress_end();
}

static void test_caller_estimate(void **state)
{
    (void)state;
    tp_progress_begin(true, "validate", 5, "tests", 0);
    fake_ns += 1000 * MS;
    tp_progress_left(100);
    fake_ns += 30000 * MS;
    tp_progress_set(1);
    TP_HAS(drawn(), "validate: 1/5 tests, 0:31 elapsed, about 1:10 left");
    fake_ns += 80000 * MS; /* run out: no estimate rather than a wrong one */
    tp_progress_set(2);
    const char *d = drawn();
    TP_HAS(d, "validate: 2/5 tests, 1:51 elapsed");
    assert_null(strstr(d, "left"));
    tp_progress_left(-1); /* back to the rate: 111 s for 2 of 5 */
    fake_ns += 300 * MS;
    tp_progress_set(2);
    TP_HAS(drawn(), "about 2:47 left");
    tp_progress_end();
}

static void test_timed(void **state)
{
    (void)state;
    tp_progress_begin(true, "sdc", 30, "s", TP_PROGRESS_TIMED);
    fake_ns += 10000 * MS;
    tp_progress_set(0); /* done is the time */
    TP_EQ_STR(drawn(), "\rsdc: 0:10/0:30, about 0:20 left\033[K");
    tp_progress_end();
}

static void test_label_is_safe(void **state)
{
    (void)state;
    tp_progress_begin(true, "evil\033[2J\nline", 2, "steps", 0);
    fake_ns += 300 * MS;
    tp_progress_set(1);
    const char *d = drawn();
    TP_HAS(d, "evil?[2J?line: 1/2 steps");
    TP_EQ_INT(count(d, '\033'), 1); /* the clear to the end of the line alone */
    tp_progress_end();
}

/* The ticker thread draws for a caller that blocks; end stops it. */
static void test_tick(void **state)
{
    (void)state;
    tp_progress_test_hooks(wr, NULL, 100); /* the real clock */
    tp_progress_begin(true, "waiting", 1, "s", TP_PROGRESS_TICK | TP_PROGRESS_TIMED);
    char got[4096] = "";
    size_t len = 0;
    for (int i = 0; i < 500 && !strchr(got, '\r'); i++) { /* up to 5 s */
        usleep(10000);
        ssize_t n = read(rd, got + len, sizeof got - 1 - len);
        if (n > 0)
            len += (size_t)n;
        got[len] = '\0';
    }
    TP_HAS(got, "\rwaiting: 0:00/0:01");
    tp_progress_end();
    assert_false(tp_progress_on());
    const char *d = drawn(); /* what the ticker drew last, then the erase */
    assert_true(strlen(d) >= 4 && strcmp(d + strlen(d) - 4, "\r\033[K") == 0);
    usleep(600000);
    TP_EQ_STR(drawn(), ""); /* the thread is gone */
}

/* A process forked with a line up has none: it neither draws nor erases. */
static void test_fork(void **state)
{
    (void)state;
    tp_progress_begin(true, "parent", 2, "steps", TP_PROGRESS_TICK);
    pid_t pid = fork();
    if (pid == 0) {
        int bad = tp_progress_on() || tp_progress_erase()[0] != '\0';
        tp_progress_set(1);
        tp_progress_end();
        _exit(bad);
    }
    int st = 0;
    assert_true(pid > 0 && waitpid(pid, &st, 0) == pid);
    TP_EQ_INT(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 0);
    assert_true(tp_progress_on());
    tp_progress_end();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eta),
        cmocka_unit_test(test_format),
        cmocka_unit_test_setup_teardown(test_rate_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_erase_and_hide, setup, teardown),
        cmocka_unit_test_setup_teardown(test_caller_estimate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_label_is_safe, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tick, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fork, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
