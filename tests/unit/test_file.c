/* core/file.c and core/intr.c: the capped whole-file reader every outside
 * file goes through, and the interrupt record with its blame and exit
 * codes. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tp/file.h"
#include "tp/intr.h"
#include "tp/result.h"
#include "tp_test.h"

static void expect_refused(const char *path, size_t cap, unsigned flags, const char *says)
{
    tp_error err = {0};
    char *buf = (char *)"untouched";
    size_t len = 7;
    TP_EQ_INT(tp_file_read(path, "a test file", cap, flags, &buf, &len, &err), TP_EUSAGE);
    TP_EQ_STR(buf, "untouched");
    TP_EXPECT_ERR(NULL, err.msg, path, " ", says);
}

static void test_regular(void **state)
{
    (void)state;
    char dir[64], path[160];
    assert_int_equal(tp_test_mkdtemp(dir, sizeof dir, "tp_file"), 0);
    tp_test_write(dir, "a.txt", "hello\n", path, sizeof path);
    char *buf;
    size_t len;
    tp_error err = {0};
    TP_EQ_INT(tp_file_read(path, NULL, 6, TP_FILE_REGULAR, &buf, &len, &err), 0);
    TP_EQ_STR(buf, "hello\n");
    TP_EQ_INT((int)len, 6);
    free(buf);
    /* one byte over the cap, as a regular file (st_size) */
    expect_refused(path, 5, TP_FILE_REGULAR, "over 5 bytes (6 bytes): too large for a test file");
    /* a /proc file says size 0 and is read to its end */
    TP_EQ_INT(tp_file_read("/proc/self/status", NULL, 1 << 20, TP_FILE_REGULAR, &buf, &len, &err),
              0);
    assert_non_null(strstr(buf, "Name:"));
    free(buf);
    FILE *f;
    TP_EQ_INT(tp_file_open(path, NULL, 64, TP_FILE_REGULAR, &f, &err), 0);
    char line[16];
    assert_non_null(fgets(line, sizeof line, f));
    TP_EQ_STR(line, "hello\n");
    assert_null(fgets(line, sizeof line, f));
    fclose(f);
    /* what is not a regular file is refused before it is read or waited on */
    char fifo[160];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    expect_refused(fifo, 64, TP_FILE_REGULAR, "is a FIFO; a test file must be a regular file");
    expect_refused(dir, 64, TP_FILE_REGULAR, "is a folder");
    expect_refused("/dev/zero", 64, TP_FILE_REGULAR, "is a character device");
    /* a stream is read to the cap and no further */
    expect_refused("/dev/zero", 4096, TP_FILE_STREAM, "over 4 KiB: too large for a test file");
    /* a FIFO without a writer, as a stream: empty at once, not a hang */
    TP_EQ_INT(tp_file_read(fifo, NULL, 64, TP_FILE_STREAM, &buf, &len, &err), 0);
    TP_EQ_INT((int)len, 0);
    free(buf);
    char missing[160];
    snprintf(missing, sizeof missing, "%s/none", dir);
    expect_refused(missing, 64, TP_FILE_REGULAR, "cannot read: No such file or directory");
    tp_test_rmtree(dir);
}

/* a stream that never ends (a pipe whose writer stays open) is read until
 * an interrupt: with the handler installed, SIGINT ends the read as
 * TP_EINTR; in a child, so the recorded signal stays there */
static void test_stream_intr(void **state)
{
    (void)state;
    int p[2], ready[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(pipe(ready), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(10); /* a read that ignores the interrupt dies of SIGALRM */
        tp_intr_install();
        /* the signal may come before the read or during it: both must end it */
        if (write(ready[1], "r", 1) != 1)
            _exit(2);
        char path[64], *buf = NULL;
        snprintf(path, sizeof path, "/proc/self/fd/%d", p[0]);
        tp_error err = {0};
        int rc = tp_file_read(path, "a stream", 1 << 20, TP_FILE_STREAM, &buf, NULL, &err);
        _exit(rc == TP_EINTR && strcmp(err.msg, "interrupted by SIGINT") == 0 ? 0 : 1);
    }
    char r;
    assert_int_equal(read(ready[0], &r, 1), 1);
    usleep(100 * 1000);
    kill(pid, SIGINT);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    close(p[0]);
    close(p[1]);
    close(ready[0]);
    close(ready[1]);
    assert_true(WIFEXITED(status));
    TP_EQ_INT(WEXITSTATUS(status), 0);
}

static void test_intr(void **state)
{
    (void)state;
    tp_error err = {0};
    /* nothing recorded: no error, no blame */
    TP_EQ_INT(tp_intr_signal(), 0);
    TP_EQ_INT(tp_intr_check(&err), 0);
    tp_error_set(&err, TP_EPEER, "rank 1 on h: peer closed");
    TP_EQ_INT(tp_intr_blame(TP_EPEER, &err), TP_EPEER);
    TP_EQ_STR(err.msg, "rank 1 on h: peer closed");
    TP_EQ_INT(tp_exit_code(TP_EINTR), 130);
    TP_EQ_INT(tp_exit_code(TP_ETERM), 143);
    TP_EQ_STR(tp_code_name(TP_ETERM), "interrupted");
    /* recorded: the check fails, a later failure is the interrupt's, bad
     * input stays bad input, the first signal is the one kept */
    tp_intr_raise(SIGTERM);
    tp_intr_raise(SIGINT);
    TP_EQ_INT(tp_intr_signal(), SIGTERM);
    TP_EQ_INT(tp_intr_check(&err), TP_ETERM);
    TP_EQ_STR(err.msg, "interrupted by SIGTERM");
    tp_error_set(&err, TP_EPEER, "rank 1 on h: peer closed");
    TP_EQ_INT(tp_intr_blame(TP_EPEER, &err), TP_ETERM);
    TP_EQ_STR(err.msg, "interrupted by SIGTERM: rank 1 on h: peer closed");
    TP_EQ_INT(tp_intr_blame(err.code, &err), TP_ETERM);
    TP_EQ_STR(err.msg, "interrupted by SIGTERM: rank 1 on h: peer closed");
    /* a rank's echo of the interrupt forwarded to it: the message leads
     * with this process's own */
    tp_error_set(&err, TP_EINTR, "rank 1 on h: interrupted by SIGINT");
    TP_EQ_INT(tp_intr_blame(err.code, &err), TP_ETERM);
    TP_EQ_STR(err.msg, "interrupted by SIGTERM");
    tp_error_set(&err, TP_EUSAGE, "--sizes: bad");
    TP_EQ_INT(tp_intr_blame(TP_EUSAGE, &err), TP_EUSAGE);
    TP_EQ_INT(tp_intr_blame(TP_OK, NULL), TP_OK);
    /* the document of a run that failed meanwhile says so */
    json_t *doc = tp_result_new("net lat", NULL);
    tp_result_finish(doc, TP_ETIMEOUT, "peer p did not answer");
    json_t *st = json_object_get(doc, "status");
    TP_EQ_STR(json_string_value(json_object_get(st, "code")), "interrupted");
    TP_EQ_INT((int)json_integer_value(json_object_get(st, "exit_code")), 143);
    TP_EQ_STR(json_string_value(json_object_get(st, "message")),
              "interrupted by SIGTERM: peer p did not answer");
    json_decref(doc);
}

/* tp_file_distinct: the same file by device and inode, whatever names it */
static void test_distinct(void **state)
{
    (void)state;
    char dir[256], a[512], b[512], sym[600], hard[600], sub[600], doc[700];
    assert_int_equal(tp_test_mkdtemp(dir, sizeof dir, "tp_distinct"), 0);
    tp_test_write(dir, "a.yaml", "x: 1\n", a, sizeof a);
    tp_test_write(dir, "b.json", "{}\n", b, sizeof b);
    snprintf(sym, sizeof sym, "%s/link.yaml", dir);
    snprintf(hard, sizeof hard, "%s/hard.yaml", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    assert_int_equal(symlink("a.yaml", sym), 0);
    assert_int_equal(link(a, hard), 0);
    assert_int_equal(mkdir(sub, 0755), 0);
    tp_test_write(sub, "c.json", "{}\n", doc, sizeof doc);
    tp_error err = {0};
    struct tp_file_arg in = {"the plan file", a, NULL}, out = {"--json", a, NULL};
    assert_int_equal(tp_file_distinct(&out, 1, &in, 1, &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "--json"));
    assert_non_null(strstr(err.msg, "is the plan file"));
    out.path = sym; /* a symbolic link to it */
    assert_int_equal(tp_file_distinct(&out, 1, &in, 1, &err), TP_EUSAGE);
    out.path = hard; /* a hard link */
    assert_int_equal(tp_file_distinct(&out, 1, &in, 1, &err), TP_EUSAGE);
    out.path = b; /* another file */
    assert_int_equal(tp_file_distinct(&out, 1, &in, 1, &err), 0);
    char none[700];
    snprintf(none, sizeof none, "%s/new.json", dir); /* not there yet */
    out.path = none;
    assert_int_equal(tp_file_distinct(&out, 1, &in, 1, &err), 0);
    struct tp_file_arg outs[2] = {{"--json", "/dev/null", NULL}, {"--trace", "/dev/null", NULL}};
    assert_int_equal(tp_file_distinct(outs, 2, NULL, 0, &err), 0); /* no regular file */
    outs[0].path = outs[1].path = b;
    assert_int_equal(tp_file_distinct(outs, 2, NULL, 0, &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "is also --json"));
    /* a folder read for its .json files */
    struct tp_file_arg folder = {"--results", dir, ".json"};
    out.path = doc;
    assert_int_equal(tp_file_distinct(&out, 1, &folder, 1, &err), TP_EUSAGE);
    out.path = a; /* not a .json: not read from the folder */
    assert_int_equal(tp_file_distinct(&out, 1, &folder, 1, &err), 0);
    /* "-": standard input, when it is a regular file */
    int saved = dup(STDIN_FILENO);
    FILE *f = fopen(a, "r");
    assert_non_null(f);
    dup2(fileno(f), STDIN_FILENO);
    in.path = "-";
    out.path = a;
    assert_int_equal(tp_file_distinct(&out, 1, &in, 1, &err), TP_EUSAGE);
    assert_non_null(strstr(err.msg, "- (standard input)"));
    out.path = b;
    assert_int_equal(tp_file_distinct(&out, 1, &in, 1, &err), 0);
    dup2(saved, STDIN_FILENO);
    close(saved);
    fclose(f);
    tp_test_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_regular),
        cmocka_unit_test(test_stream_intr),
        cmocka_unit_test(test_intr),
        cmocka_unit_test(test_distinct),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
