/* Unit tests of option parsing and number formatting: tables of good inputs
 * with their values and of bad inputs with the words their error must carry
 * (always the option name and the quoted bad text). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>

#include "tp/units.h"
#include "tp_test.h"

/* err must be a usage error whose message names what, quotes quoted and
 * contains phrase. */
static void check_error(int rc, const tp_error *err, const char *input, const char *what,
                        const char *quoted, const char *phrase)
{
    char q[128];
    snprintf(q, sizeof q, "'%s'", quoted);
    if (rc != TP_EUSAGE || err->code != TP_EUSAGE)
        fail_msg("'%s': rc %d, code %d, expected TP_EUSAGE (%d)", input, rc, err->code, TP_EUSAGE);
    if (strncmp(err->msg, what, strlen(what)) != 0 || !strstr(err->msg, q) ||
        !strstr(err->msg, phrase))
        fail_msg("'%s': message \"%s\" lacks option %s, quoted %s or \"%s\"", input, err->msg, what,
                 q, phrase);
}

static void test_sizes(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        uint64_t want;
    } good[] = {
        {"1", 1},
        {"64", 64},
        {"4K", 4096},
        {"4k", 4096},
        {"4KiB", 4096},
        {"4kib", 4096},
        {"1M", 1048576},
        {"1MiB", 1048576},
        {"3m", 3145728},
        {"2G", UINT64_C(2147483648)},
        {"1GiB", UINT64_C(1073741824)},
        {"1T", UINT64_C(1099511627776)},
        {"007", 7},
        {"16777215T", UINT64_C(16777215) << 40},
        {"18446744073709551615", UINT64_MAX},
        /* fractions that come to whole bytes, exponents, B, P, a blank */
        {"1.5M", 1572864},
        {"1.5G", UINT64_C(1610612736)},
        {"0.5MiB", 524288},
        {"0.25k", 256},
        {"2e6", 2000000},
        {"1.5e3", 1500},
        {"4096B", 4096},
        {"1P", UINT64_C(1) << 50},
        {"1PiB", UINT64_C(1) << 50},
        {"4 K", 4096},
        {"18446744073709551615.0", UINT64_MAX},
        {"1.0000000000000000000000000K", 1024}, /* zeros beyond 64 bits */
    };
    for (size_t k = 0; k < sizeof good / sizeof good[0]; k++) {
        uint64_t v = 0;
        tp_error err = {0};
        int rc = tp_parse_size(good[k].in, "--sizes", &v, &err);
        if (rc)
            fail_msg("'%s' rejected: %s", good[k].in, err.msg);
        if (v != good[k].want)
            fail_msg("'%s' = %llu, expected %llu", good[k].in, (unsigned long long)v,
                     (unsigned long long)good[k].want);
    }
    static const struct {
        const char *in, *phrase;
    } bad[] = {
        {"", "cannot parse"},
        {"12X", "cannot parse"},
        {"K", "cannot parse"},
        {"-4", "cannot parse"},
        {"+4", "cannot parse"},
        {".5M", "cannot parse"},
        {"1.M", "cannot parse"},
        {"1.5.5M", "cannot parse"},
        {"0x10", "cannot parse"},
        {"inf", "cannot parse"},
        {"1.3K", "not a whole number of bytes"},
        {"1.0000000000000000000000001K", "not a whole number of bytes"},
        {"0.5", "not a whole number of bytes"},
        {"1e-3", "not a whole number of bytes"},
        {"1e400", "too large"},
        {"16385P", "too large"},
        {"99999999999999999999999999999999999999999K", "too large"},
        {" 4K", "cannot parse"},
        {"4K ", "cannot parse"},
        {"4Ki", "cannot parse"},
        {"4KiBx", "cannot parse"},
        {"4b", "cannot parse"},
        {"4KB", "ambiguous"},
        {"4kb", "ambiguous"},
        {"1MB", "ambiguous"},
        {"2GB", "ambiguous"},
        {"0", "greater than zero"},
        {"0K", "greater than zero"},
        {"16777216T", "too large"},
        {"18446744073709551616", "too large"},
        {"99999999999999999999999", "too large"},
        {"0.0", "greater than zero"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        uint64_t v = 12345;
        tp_error err = {0};
        int rc = tp_parse_size(bad[k].in, "--sizes", &v, &err);
        check_error(rc, &err, bad[k].in, "--sizes", bad[k].in, bad[k].phrase);
        TP_EQ_U64(v, 12345); /* untouched on error */
    }
    /* the example from the style of every message */
    tp_error err = {0};
    uint64_t v;
    tp_parse_size("12X", "--sizes", &v, &err);
    TP_EQ_STR(err.msg, "--sizes: cannot parse '12X' as a size (use e.g. 64, 4K, 1.5M)");
    tp_parse_size("4KB", "--block", &v, &err);
    TP_EQ_STR(err.msg, "--block: '4KB' is ambiguous (use 4K or 4KiB; 1K = 1024)");
}

static void check_list(const char *in, const uint64_t *want, size_t nwant)
{
    uint64_t *out = NULL;
    size_t n = 0;
    tp_error err = {0};
    int rc = tp_parse_size_list(in, "--sizes", &out, &n, &err);
    if (rc)
        fail_msg("'%s' rejected: %s", in, err.msg);
    if (n != nwant)
        fail_msg("'%s': %zu entries, expected %zu", in, n, nwant);
    for (size_t k = 0; k < n; k++)
        if (out[k] != want[k])
            fail_msg("'%s': entry %zu = %llu, expected %llu", in, k, (unsigned long long)out[k],
                     (unsigned long long)want[k]);
    free(out);
}

static void test_size_lists(void **state)
{
    (void)state;
    uint64_t pow[64];
    for (unsigned k = 0; k < 64; k++)
        pow[k] = UINT64_C(1) << k;
    check_list("8-4M", pow + 3, 20); /* 8 .. 4194304 */
    check_list("64,8,64", (const uint64_t[]){8, 64}, 2);
    check_list("4K", (const uint64_t[]){4096}, 1);
    check_list("100-1000", (const uint64_t[]){100, 128, 256, 512, 1000}, 5);
    check_list("1-1", (const uint64_t[]){1}, 1);
    check_list("3-4", (const uint64_t[]){3, 4}, 2);
    check_list("1K,4-16,2K-2K", (const uint64_t[]){4, 8, 16, 1024, 2048}, 5);
    check_list("1M,512K-2M,1MiB", (const uint64_t[]){524288, 1048576, 2097152}, 3);
    check_list("1-9223372036854775808", pow, 64); /* 1 .. 2^63: exactly the limit */

    static const struct {
        const char *in, *quoted, *phrase;
    } bad[] = {
        {"", "", "--sizes '': no size given"},
        {"8,,16", "8,,16", "--sizes '8,,16': an empty entry"},
        {"8,", "8,", "an empty entry"},
        {",8", ",8", "an empty entry"},
        {"16-8", "16-8", "runs backwards"},
        {"8-4X", "4X", "cannot parse"},
        {"8-", "", "cannot parse"},
        {"-8", "", "cannot parse"},
        {"8-16-32", "16-32", "cannot parse"},
        {"4KB,8", "4KB", "ambiguous"},
        {"0-8", "0", "greater than zero"},
        {"1-18446744073709551615", "1-18446744073709551615", "more than 64"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        uint64_t *out = (uint64_t *)&out;
        size_t n = 99;
        tp_error err = {0};
        int rc = tp_parse_size_list(bad[k].in, "--sizes", &out, &n, &err);
        check_error(rc, &err, bad[k].in, "--sizes", bad[k].quoted, bad[k].phrase);
        assert_null(out);
        TP_EQ_U64(n, 0);
    }
}

static void test_durations(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        uint64_t want;
    } good[] = {
        {"10", UINT64_C(10000000000)},
        {"10s", UINT64_C(10000000000)},
        {"500ms", 500000000},
        {"2m", UINT64_C(120000000000)},
        {"1h", UINT64_C(3600000000000)},
        {"1.5s", 1500000000},
        {"0.5", 500000000},
        {"1.25ms", 1250000},
        {"250us", 250000},
        {"100ns", 100},
        {"0", 0},
        {"0.1", 100000000},
        {"0.000000001", 1},
        {"1.5ns", 2}, /* rounds to the nearest nanosecond */
        {"2.75h", UINT64_C(9900000000000)},
        {"0.1234567890123456789s", 123456789},
        {"18446744073709551615ns", UINT64_MAX},
        {"18446744073", UINT64_C(18446744073000000000)},
        /* compound, the micro sign, weeks, exponents, blanks */
        {"1h30m", UINT64_C(5400000000000)},
        {"2h15m30s", UINT64_C(8130000000000)},
        {"1m30s", UINT64_C(90000000000)},
        {"1s500ms", 1500000000},
        {"1h 30m", UINT64_C(5400000000000)},
        {"15min", UINT64_C(900000000000)},
        {"1min30s", UINT64_C(90000000000)},
        {"500us", 500000},
        {"500\xc2\xb5s", 500000},
        {"500\xce\xbcs", 500000},
        {"2w", UINT64_C(1209600000000000)},
        {"250ms", 250000000},
        {"5 s", 5000000000},
        {"1e3", UINT64_C(1000000000000)},
        {"1.5e3ms", 1500000000},
        {"1y", UINT64_C(31536000000000000)},
        {"584y", UINT64_C(18417024000000000000)},
    };
    for (size_t k = 0; k < sizeof good / sizeof good[0]; k++) {
        uint64_t v = 0;
        tp_error err = {0};
        int rc = tp_parse_duration(good[k].in, "--time", &v, &err);
        if (rc)
            fail_msg("'%s' rejected: %s", good[k].in, err.msg);
        if (v != good[k].want)
            fail_msg("'%s' = %llu ns, expected %llu", good[k].in, (unsigned long long)v,
                     (unsigned long long)good[k].want);
    }
    static const struct {
        const char *in, *phrase;
    } bad[] = {
        {"", "cannot parse"},
        {"s", "cannot parse"},
        {"1.s", "cannot parse"},
        {".5s", "cannot parse"},
        {"5x", "cannot parse"},
        {"-1s", "cannot parse"},
        {"+1s", "cannot parse"},
        {"1h30", "cannot parse"},
        {"30 ", "cannot parse"},
        {" 30s", "cannot parse"},
        {"1h1h", "largest first"},
        {"30m1h", "largest first"},
        {"1ms500s", "largest first"},
        {"1m1min", "largest first"},
        {"585y", "too large"},
        {"584y50w", "too large"},
        {"1e30s", "too large"},
        {"5S", "cannot parse"},
        {"1.5.5s", "cannot parse"},
        {"10sec", "cannot parse"},
        {"inf", "cannot parse"},
        {"18446744074", "too large"},
        {"5124095576030432h", "too large"},
        {"99999999999999999999999ns", "too large"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        uint64_t v = 12345;
        tp_error err = {0};
        int rc = tp_parse_duration(bad[k].in, "--time", &v, &err);
        check_error(rc, &err, bad[k].in, "--time", bad[k].in, bad[k].phrase);
        TP_EQ_U64(v, 12345);
    }
    tp_error err = {0};
    uint64_t v;
    tp_parse_duration("5x", "--warmup", &v, &err);
    TP_EQ_STR(err.msg, "--warmup: cannot parse '5x' as a duration (use e.g. 10s, 500ms, 1h30m, 2w)");
}

/* The double forms read files: the same grammar, the nearest double, a sign
 * for the caller's range; and every input both accept gives the same value. */
static void test_double_forms(void **state)
{
    (void)state;
    static const char *const durs[] = {"10", "850ms", "1h30m", "2h15m30s", "15min", "500us",
                                       "500\xc2\xb5s", "2w", "1.5s", "250ms", "100ns", "3y",
                                       "1e3", "0"};
    for (size_t k = 0; k < sizeof durs / sizeof durs[0]; k++) {
        uint64_t ns = 0;
        double s = -1;
        tp_error err = {0};
        if (tp_parse_duration(durs[k], "--time", &ns, &err) ||
            tp_parse_duration_s(durs[k], "time", &s, &err))
            fail_msg("'%s' rejected: %s", durs[k], err.msg);
        if (fabs(s - (double)ns / 1e9) > 1e-12 * (s > 1 ? s : 1))
            fail_msg("'%s': %.17g s, but %llu ns", durs[k], s, (unsigned long long)ns);
    }
    static const char *const sizes[] = {"4096", "4K", "1.5G", "0.5MiB", "2e6", "1P", "4096B"};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        uint64_t b = 0;
        double d = -1;
        tp_error err = {0};
        if (tp_parse_size(sizes[k], "--size", &b, &err) ||
            tp_parse_size_d(sizes[k], "size", &d, &err))
            fail_msg("'%s' rejected: %s", sizes[k], err.msg);
        if (d != (double)b)
            fail_msg("'%s': %.17g, but %llu bytes", sizes[k], d, (unsigned long long)b);
    }
    double v = 0;
    tp_error err = {0};
    assert_int_equal(tp_parse_duration_s("850ms", "t", &v, &err), 0);
    TP_NEAR_REL(v, 0.85, 0); /* the double nearest 0.85, not 850 * 1e-3 */
    assert_int_equal(tp_parse_duration_s("-5m", "t", &v, &err), 0);
    TP_NEAR_REL(v, -300, 0);
    assert_int_equal(tp_parse_duration_s("1000000y", "t", &v, &err), 0); /* no 584-year limit */
    TP_NEAR_REL(v, 1e6 * 31536000, 0);
    assert_int_equal(tp_parse_size_d("0", "s", &v, &err), 0);
    TP_NEAR_REL(v, 0, 0);
    assert_int_equal(tp_parse_size_d("2.5", "s", &v, &err), 0);
    TP_NEAR_REL(v, 2.5, 0);
    assert_int_equal(tp_parse_size_d("-1K", "s", &v, &err), 0);
    TP_NEAR_REL(v, -1024, 0);
    static const struct {
        const char *in, *phrase;
        bool size;
    } bad[] = {
        {"1e999s", "too large", false}, {"1h1h", "largest first", false},
        {"5 parsecs", "cannot parse", false}, {"--5s", "cannot parse", false},
        {"1e999", "too large", true},   {"98GB", "ambiguous", true},
        {"4b", "cannot parse", true},   {"-", "cannot parse", true},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        tp_error e = {0};
        int rc = bad[k].size ? tp_parse_size_d(bad[k].in, "key", &v, &e)
                             : tp_parse_duration_s(bad[k].in, "key", &v, &e);
        check_error(rc, &e, bad[k].in, "key", bad[k].in, bad[k].phrase);
    }
}

static void test_u64(void **state)
{
    (void)state;
    uint64_t v = 0;
    tp_error err = {0};
    assert_int_equal(tp_parse_u64("10", "--iters", 1, 100, &v, &err), 0);
    TP_EQ_U64(v, 10);
    assert_int_equal(tp_parse_u64("007", "--iters", 1, 100, &v, &err), 0);
    TP_EQ_U64(v, 7);
    assert_int_equal(tp_parse_u64("1", "--iters", 1, 100, &v, &err), 0);
    assert_int_equal(tp_parse_u64("100", "--iters", 1, 100, &v, &err), 0);
    TP_EQ_U64(v, 100);
    assert_int_equal(tp_parse_u64("0", "--n", 0, 0, &v, &err), 0);
    TP_EQ_U64(v, 0);
    assert_int_equal(tp_parse_u64("18446744073709551615", "--n", 0, UINT64_MAX, &v, &err), 0);
    TP_EQ_U64(v, UINT64_MAX);

    static const struct {
        const char *in, *phrase;
    } bad[] = {
        {"0", "out of range 1..100"},
        {"101", "out of range 1..100"},
        {"99999999999999999999999", "out of range 1..100"},
        {"", "cannot parse"},
        {"abc", "cannot parse"},
        {"-1", "cannot parse"},
        {"1x", "cannot parse"},
        {"1K", "cannot parse"},
        {" 5", "cannot parse"},
        {"0x10", "cannot parse"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        v = 12345;
        int rc = tp_parse_u64(bad[k].in, "--iters", 1, 100, &v, &err);
        check_error(rc, &err, bad[k].in, "--iters", bad[k].in, bad[k].phrase);
        TP_EQ_U64(v, 12345);
    }
}

static void test_cpu_lists(void **state)
{
    (void)state;
    cpu_set_t set;
    tp_error err;
    assert_int_equal(tp_parse_cpu_list("3", "--cpu", &set, &err), 0);
    assert_int_equal(CPU_COUNT(&set), 1);
    assert_true(CPU_ISSET(3, &set));
    assert_int_equal(tp_parse_cpu_list("0-3,8,10-11", "--cpu", &set, &err), 0);
    assert_int_equal(CPU_COUNT(&set), 7);
    assert_true(CPU_ISSET(0, &set) && CPU_ISSET(3, &set) && CPU_ISSET(8, &set) &&
                CPU_ISSET(11, &set) && !CPU_ISSET(4, &set) && !CPU_ISSET(9, &set));
    const char *bad[] = {"", "x", "3-1", "1,", ",1", "1-", "-1", "1;2", "2 "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = tp_parse_cpu_list(bad[i], "--cpu", &set, &err);
        check_error(rc, &err, bad[i], "--cpu", bad[i], "cannot parse");
    }
    check_error(tp_parse_cpu_list("70000", "--cpu", &set, &err), &err, "70000", "--cpu", "70000",
                "is beyond");
}

static void test_formatters(void **state)
{
    (void)state;
    char buf[64];
    static const struct {
        uint64_t v;
        const char *want;
    } sizes[] = {
        {0, "0"},
        {8, "8"},
        {1000, "1000"},
        {1536, "1536"},
        {4096, "4K"},
        {1048576, "1M"},
        {3145728, "3M"},
        {UINT64_C(1) << 30, "1G"},
        {UINT64_C(5) << 40, "5T"},
        {UINT64_C(1) << 50, "1024T"},
        {UINT64_MAX, "18446744073709551615"},
    };
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        TP_EQ_STR(tp_fmt_size(sizes[k].v, buf, sizeof buf), sizes[k].want);
    /* for a reader: the unit always, exact multiples whole */
    static const struct {
        uint64_t v;
        const char *want;
    } bytes[] = {
        {0, "0 B"},
        {512, "512 B"},
        {1024, "1 KiB"},
        {4100, "4.00 KiB"},
        {1048576, "1 MiB"},
        {67174400, "64.1 MiB"},
        {UINT64_C(10) << 30, "10 GiB"},
        {UINT64_MAX, "16.0 EiB"},
    };
    for (size_t k = 0; k < sizeof bytes / sizeof bytes[0]; k++)
        TP_EQ_STR(tp_fmt_bytes(bytes[k].v, buf, sizeof buf), bytes[k].want);
    /* what tp_fmt_size prints parses back to the same value */
    for (size_t k = 1; k < sizeof sizes / sizeof sizes[0]; k++) {
        uint64_t v = 0;
        assert_int_equal(tp_parse_size(tp_fmt_size(sizes[k].v, buf, sizeof buf), "x", &v, NULL), 0);
        TP_EQ_U64(v, sizes[k].v);
    }

    static const struct {
        double v;
        const char *want;
    } lat[] = {
        {0, "0 ns"},       {0.5, "0.500 ns"},  {5.5, "5.50 ns"},    {9.996, "10.0 ns"},
        {100, "100 ns"},   {812, "812 ns"},    {812.4, "812 ns"},   {999.6, "1.00 us"},
        {1000, "1.00 us"}, {12345, "12.3 us"}, {999999, "1.00 ms"}, {4510000, "4.51 ms"},
        {2e9, "2.00 s"},   {3.6e12, "3600 s"},
    };
    for (size_t k = 0; k < sizeof lat / sizeof lat[0]; k++)
        TP_EQ_STR(tp_fmt_ns(lat[k].v, buf, sizeof buf), lat[k].want);

    static const struct {
        double v;
        const char *want;
    } rate[] = {
        {0, "0 GB/s"},          {5e6, "0.00500 GB/s"},  {1e9, "1.00 GB/s"},
        {9.996e9, "10.0 GB/s"}, {12.34e9, "12.3 GB/s"}, {1.25e11, "125 GB/s"},
        {2.5e12, "2500 GB/s"},
    };
    for (size_t k = 0; k < sizeof rate / sizeof rate[0]; k++)
        TP_EQ_STR(tp_fmt_rate(rate[k].v, buf, sizeof buf), rate[k].want);

    static const struct {
        double v;
        const char *want;
    } money[] = {
        {0, "$0"},         {999, "$999"},        {1000, "$1,000"},       {83099.4, "$83,099"},
        {-12, "-$12"},     {1234567, "$1,234,567"}, {NAN, "-"},          {INFINITY, "-"},
        {999999999999999, "$999,999,999,999,999"}, {1e15, "$1e+15"},
        {1.0566e24, "$1.06e+24"}, {-2e20, "-$2e+20"},
    };
    for (size_t k = 0; k < sizeof money / sizeof money[0]; k++)
        TP_EQ_STR(tp_fmt_money(money[k].v, buf, sizeof buf), money[k].want);

    static const struct {
        double v;
        const char *want;
    } dur[] = {
        {0.0045, "4.50 ms"}, {59.2, "59.2 s"},    {576, "9.6 min"},   {7199, "120.0 min"},
        {7200, "2.0 h"},     {111960, "31.1 h"},  {172800, "2.0 d"},  {362880, "4.2 d"},
        {730 * 86400.0 - 1, "730.0 d"}, {730 * 86400.0, "2.0 y"}, {6e9, "190.3 y"},
        {1e5 * 31536000, "1e+05 y"}, {1e30, "3.17e+22 y"}, {INFINITY, "-"},
        {NAN, "-"},
    };
    for (size_t k = 0; k < sizeof dur / sizeof dur[0]; k++)
        TP_EQ_STR(tp_fmt_duration_s(dur[k].v, buf, sizeof buf), dur[k].want);

    /* a short buffer truncates and stays terminated */
    char small[3];
    TP_EQ_STR(tp_fmt_size(UINT64_C(1) << 20, small, sizeof small), "1M");
    TP_EQ_STR(tp_fmt_ns(812, small, sizeof small), "81");
    TP_EQ_STR(tp_fmt_money(1234, small, sizeof small), "$1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),      cmocka_unit_test(test_size_lists),
        cmocka_unit_test(test_durations),  cmocka_unit_test(test_double_forms),
        cmocka_unit_test(test_u64),
        cmocka_unit_test(test_formatters), cmocka_unit_test(test_cpu_lists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
