/*
 * test_web_api.c — the page's C API (web/fasim_web.c), natively: bad
 * options give the command line's messages and exit statuses, the report is
 * the report's JSON, and the view's counters at its last step are FA2's
 * closed form, worked out here by hand for N = 256, d = 32, fp16 on the
 * report's same tiles B_r = B_c = 32 (T_r = 8): Q and O once (2 N d
 * bytes each), K and V once per row block (2 T_r N d bytes each), L once
 * (4 N bytes).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fasim_web.h"
#include "ref_simd.h"

/* The whole number after "key": in doc, at or after `from` (a text in doc
 * the key must follow, or NULL). Fails the test when absent. */
static long long num_after(const char *doc, const char *from, const char *key)
{
    const char *p = from ? strstr(doc, from) : doc;
    assert_non_null(p);
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    p = strstr(p, pat);
    assert_non_null(p);
    return strtoll(p + strlen(pat), NULL, 10);
}

static void test_bad_options(void **state)
{
    (void)state;
    /* The messages `fasim --N 0`, `fasim --M 3KB`, ... print (test_messages
     * and the README hold them too). */
    assert_string_equal(fw_report("--N\n0"),
                        "{\"error\":\"fasim: --N 0: must be at least 1\",\"status\":2}");
    assert_string_equal(fw_report("--M\n3KB"),
                        "{\"error\":\"fasim: --M 3KB: 'KB' is ambiguous (1000 or 1024?); "
                        "write K or KiB (powers of 1024)\",\"status\":2}");
    assert_string_equal(fw_report("--d\n100000"),
                        "{\"error\":\"fasim: --d 100000: at most 65536 is supported\","
                        "\"status\":2}");
    assert_non_null(strstr(fw_report("--algo\nx"), "unknown loop order 'x'"));
    /* A file option has no place on a page. */
    assert_non_null(strstr(fw_report("--out\nx.npy\n--algo\nfa2"),
                           "the page takes the problem's options only"));
    assert_non_null(strstr(fw_view_open(0, "--N\n0\n--algo\nfa2"),
                           "\"error\":\"fasim: --N 0: must be at least 1\""));
    assert_non_null(strstr(fw_view_open(0, "--N\n64"), "the view shows one loop order"));
    assert_non_null(strstr(fw_view_step(0, 0), "no view is open"));
}

static void test_report(void **state)
{
    (void)state;
    const char *doc = fw_report("--N\n256\n--d\n32\n--M\n20K\n--algo\nfa2\n--count-only");
    assert_non_null(strstr(doc, "{\"fasim_version\":\""));
    assert_int_equal(num_after(doc, "\"runs\"", "Br"), 32);
    assert_int_equal(num_after(doc, "\"hbm\"", "read_bytes"), 2 * 256 * 32 + 2 * 2 * 8 * 256 * 32);
    assert_int_equal(num_after(doc, "\"hbm\"", "write_bytes"), 2 * 256 * 32 + 4 * 256);
    assert_non_null(strstr(fw_report_text(), "N = 256, d = 32, fp16, M = 20 KiB"));
}

/* The page's check of its vector path (wasm128 in the browser, where
 * web/test_page.mjs calls it): here the widest path this CPU has against the
 * scalar one, counting values compared and values that differ. */
static void test_simd_check(void **state)
{
    (void)state;
    const ref_simd path = ref_simd_active();
    const char *doc = fw_simd_check(300);
    char want[64];
    snprintf(want, sizeof want, "{\"path\":\"%s\",\"trials\":300,", ref_simd_name(path));
    assert_non_null(strstr(doc, want));
    assert_true(num_after(doc, NULL, "values") > 300 * 20);
    assert_int_equal(num_after(doc, NULL, "differ"), 0);
    assert_int_equal(ref_simd_active(), path);          /* left as it was */
    assert_non_null(strstr(fw_simd_check(0), "trials must be 1..10000"));
}

static void test_view(void **state)
{
    (void)state;
    const char *info = fw_view_open(1, "--N\n256\n--d\n32\n--M\n20K\n--algo\nfa2");
    assert_null(strstr(info, "\"error\""));
    assert_non_null(strstr(info, "\"title\":\"FlashAttention-2, Algorithm 1\""));
    assert_non_null(strstr(info, "\"computed\":true"));
    const long long n = num_after(info, NULL, "nsteps");
    assert_true(n > 8 * 8);
    /* Steps move the line; the last one holds the whole run's traffic. */
    int lines[4];
    for (int k = 0; k < 4; k++)
        lines[k] = (int)num_after(fw_view_step(1, k), NULL, "line");
    assert_true(lines[0] != lines[1] || lines[1] != lines[2] || lines[2] != lines[3]);
    const char *last = fw_view_step(1, (double)(n - 1));
    assert_int_equal(num_after(last, NULL, "step"), n - 1);
    assert_int_equal(num_after(last, "\"counts\"", "read_bytes"),
                     2 * 256 * 32 + 2 * 2 * 8 * 256 * 32);
    assert_int_equal(num_after(last, "\"counts\"", "write_bytes"), 2 * 256 * 32 + 4 * 256);
    assert_non_null(strstr(fw_view_step(1, (double)n), "no such step"));
    assert_non_null(strstr(fw_view_step(1, -1), "no such step"));
    /* --count-only: the view counts only too (no m, l to show). */
    assert_non_null(strstr(fw_view_open(0, "--N\n256\n--d\n32\n--M\n20K\n--algo\nfa1\n"
                                           "--count-only"), "\"computed\":false"));
    assert_non_null(strstr(fw_view_step(0, 0), "\"available\":false"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_report),
        cmocka_unit_test(test_simd_check),
        cmocka_unit_test(test_view),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
