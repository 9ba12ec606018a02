/*
 * test_json.c — sim_json, the writer behind every --json output: escaping of
 * each byte below 0x20, of quotes and backslashes, UTF-8 passed through;
 * commas and brackets at every nesting level, in both styles; the three
 * number formats and their null for NaN and infinities. Also sim_text_wrap,
 * the word wrapper that io/ holds beside it, and sim_shell_word, the paths
 * of the commands fasim suggests.
 *
 * Each test writes into a memory stream and compares the bytes whole.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_json.h"
#include "sim_text.h"

/* A memory stream and what it has received so far. */
typedef struct {
    FILE *f;
    char *buf;
    size_t len;
} sink;

static void sink_open(sink *s)
{
    s->buf = NULL;
    s->len = 0;
    s->f = open_memstream(&s->buf, &s->len);
    assert_non_null(s->f);
}

/* A writer in the given style onto a fresh sink. */
static void writer_open(sink *s, sim_json *w, sim_json_style style)
{
    sink_open(s);
    sim_json_init(w, s->f, style);
}

/* Close the stream, compare its bytes with want, free them. */
static void sink_check(sink *s, const char *want)
{
    assert_int_equal(fclose(s->f), 0);
    assert_string_equal(s->buf, want);
    free(s->buf);
}

static void test_escapes_control_bytes(void **state)
{
    (void)state;
    char in[33], want[32 * 6 + 3];
    for (int c = 1; c < 32; c++)
        in[c - 1] = (char)c;
    in[31] = '\0';
    size_t n = 0;
    want[n++] = '"';
    for (int c = 1; c < 32; c++)
        n += (size_t)snprintf(want + n, sizeof want - n, "\\u%04x", c);
    want[n++] = '"';
    want[n] = '\0';
    sink s;
    sink_open(&s);
    sim_json_write_string(s.f, in);
    sink_check(&s, want);
    assert_string_equal(want + 1, "\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\u0008"
                        "\\u0009\\u000a\\u000b\\u000c\\u000d\\u000e\\u000f\\u0010\\u0011"
                        "\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019\\u001a"
                        "\\u001b\\u001c\\u001d\\u001e\\u001f\"");
}

static void test_escapes_quote_backslash_utf8(void **state)
{
    (void)state;
    sink s;
    sink_open(&s);
    sim_json_write_string(s.f, "a\"b\\c/d \xce\xb8 \xe2\x89\xa4 \x7f");
    sink_check(&s, "\"a\\\"b\\\\c/d \xce\xb8 \xe2\x89\xa4 \x7f\"");
    sink_open(&s);
    sim_json_write_string(s.f, NULL);
    sim_json_write_string(s.f, "");
    sink_check(&s, "\"\"\"\"");
}

static void test_nesting_compact(void **state)
{
    (void)state;
    sink s;
    sim_json w;
    writer_open(&s, &w, SIM_JSON_COMPACT);
    sim_json_obj(&w, NULL);
    sim_json_str(&w, "name", "fa2");
    sim_json_arr(&w, "empty");
    sim_json_end(&w);
    sim_json_obj(&w, "none");
    sim_json_end(&w);
    sim_json_arr(&w, "list");
    sim_json_int(&w, NULL, -3);
    sim_json_obj(&w, NULL);
    sim_json_uint(&w, "big", 18446744073709551615ull);
    sim_json_arr(&w, "deep");
    sim_json_arr(&w, NULL);
    sim_json_bool(&w, NULL, 1);
    sim_json_bool(&w, NULL, 0);
    sim_json_end(&w);
    sim_json_null(&w, NULL);
    sim_json_end(&w);
    sim_json_end(&w);
    sim_json_str(&w, NULL, "x");
    sim_json_end(&w);
    sim_json_null(&w, "z");
    sim_json_end(&w);
    assert_int_equal(w.depth, 0);
    assert_int_equal(w.misuse, 0);
    sink_check(&s, "{\"name\":\"fa2\",\"empty\":[],\"none\":{},\"list\":[-3,"
               "{\"big\":18446744073709551615,\"deep\":[[true,false],null]},\"x\"],"
               "\"z\":null}");
}

static void test_nesting_spaced_lines(void **state)
{
    (void)state;
    sink s;
    sim_json w;
    writer_open(&s, &w, SIM_JSON_SPACED);
    sim_json_obj(&w, NULL);
    sim_json_str(&w, "command", "gpu");
    sim_json_arr_lines(&w, "runs");
    for (int k = 0; k < 2; k++) {
        sim_json_obj(&w, NULL);
        sim_json_int(&w, "k", k);
        sim_json_obj(&w, "t");
        sim_json_int(&w, "a", 1);
        sim_json_int(&w, "b", 2);
        sim_json_end(&w);
        sim_json_end(&w);
    }
    sim_json_end(&w);
    sim_json_arr_lines(&w, "none");
    sim_json_end(&w);
    sim_json_end(&w);
    sink_check(&s, "{\"command\": \"gpu\", \"runs\": [\n  {\"k\": 0, \"t\": {\"a\": 1, "
               "\"b\": 2}},\n  {\"k\": 1, \"t\": {\"a\": 1, \"b\": 2}}\n], "
               "\"none\": [\n]}");
}

static void test_keys_escaped(void **state)
{
    (void)state;
    sink s;
    sim_json w;
    writer_open(&s, &w, SIM_JSON_COMPACT);
    sim_json_obj(&w, NULL);
    sim_json_int(&w, "a\"\n", 1);
    sim_json_end(&w);
    sink_check(&s, "{\"a\\\"\\u000a\":1}");
}

static void test_numbers(void **state)
{
    (void)state;
    sink s;
    sim_json w;
    writer_open(&s, &w, SIM_JSON_COMPACT);
    sim_json_arr(&w, NULL);
    sim_json_num(&w, NULL, 87381.333333333328);
    sim_json_num(&w, NULL, 0.1);
    sim_json_num(&w, NULL, 1e300);
    sim_json_num(&w, NULL, -0.0);
    sim_json_num(&w, NULL, 262144);
    sim_json_num(&w, NULL, NAN);
    sim_json_num(&w, NULL, INFINITY);
    sim_json_num(&w, NULL, -INFINITY);
    sim_json_num_g(&w, NULL, 1.0 / 3.0, 9);
    sim_json_num_g(&w, NULL, 1.0 / 3.0, 6);
    sim_json_num_g(&w, NULL, 2.5e-7, 9);
    sim_json_num_g(&w, NULL, NAN, 9);
    sim_json_num_g(&w, NULL, -INFINITY, 6);
    sim_json_whole(&w, NULL, 49152.0);
    sim_json_whole(&w, NULL, 1.5);
    sim_json_whole(&w, NULL, 1e20);
    sim_json_whole(&w, NULL, INFINITY);
    sim_json_whole(&w, NULL, NAN);
    sim_json_end(&w);
    sink_check(&s, "[87381.333333333328,0.10000000000000001,1.0000000000000001e+300,-0,"
               "262144,null,null,null,0.333333333,0.333333,2.5e-07,null,null,49152,2,"
               "100000000000000000000,null,null]");
}

static void test_misuse_flagged(void **state)
{
    (void)state;
    sink s;
    sim_json w;
    writer_open(&s, &w, SIM_JSON_COMPACT);
    sim_json_end(&w);
    assert_int_equal(w.misuse, 1);
    sim_json_init(&w, s.f, SIM_JSON_COMPACT);
    for (int k = 0; k < SIM_JSON_MAX_DEPTH + 2; k++)
        sim_json_arr(&w, NULL);
    assert_int_equal(w.misuse, 1);
    for (int k = 0; k < SIM_JSON_MAX_DEPTH + 2; k++)
        sim_json_end(&w);
    assert_int_equal(w.depth, 0);
    sim_json_str(&w, NULL, "after");
    assert_int_equal(fclose(s.f), 0);
    free(s.buf);
}

static void test_wrap(void **state)
{
    (void)state;
    sink s;
    sink_open(&s);
    sim_text_wrap_lead(s.f, "  1. ", 4, 20, "one  two three four five six seven");
    sim_text_wrap_lead(s.f, "x: ", 3, 10, "");
    sim_text_wrap_lead(s.f, "x: ", 3, 10, "averyveryverylongword b");
    sink_check(&s, "  1. one two three\n    four five six\n    seven\nx: \n"
               "x: averyveryverylongword\n   b\n");
    /* UTF-8 columns: each theta is one column, so "θθθθ θθθθ" fits in 9. */
    const sim_wrap_style u = { 9, 2, 1 }, b = { 9, 2, 0 };
    const char *t = "\xce\xb8\xce\xb8\xce\xb8\xce\xb8 \xce\xb8\xce\xb8\xce\xb8\xce\xb8";
    sink_open(&s);
    sim_text_wrap(s.f, 0, t, strlen(t), &u);
    sim_text_wrap(s.f, 0, t, strlen(t), &b);
    sink_check(&s, "\xce\xb8\xce\xb8\xce\xb8\xce\xb8 \xce\xb8\xce\xb8\xce\xb8\xce\xb8\n"
               "\xce\xb8\xce\xb8\xce\xb8\xce\xb8\n  \xce\xb8\xce\xb8\xce\xb8\xce\xb8\n");
    assert_int_equal(sim_text_cols(t, strlen(t), 1), 9);
    assert_int_equal(sim_text_cols(t, strlen(t), 0), 17);
    /* A formula's group stays whole; prose in parentheses breaks as prose;
     * a group longer than half the line breaks at its spaces. */
    sink_open(&s);
    sim_text_wrap_lead(s.f, "", 2, 24, "standard makes Theta(N / d + N^2) accesses");
    sim_text_wrap_lead(s.f, "", 2, 24, "one two three (four five six) seven");
    sim_text_wrap_lead(s.f, "", 2, 12, "a Theta(N / d + N^2) b");
    sink_check(&s, "standard makes\n  Theta(N / d + N^2)\n  accesses\n"
               "one two three (four five\n  six) seven\n"
               "a Theta(N /\n  d + N^2) b\n");
    /* A space that does not break prints as a space and keeps its words on
     * one line: "2.03 us" moves whole, where a plain space would split it. */
    sink_open(&s);
    sim_text_wrap_lead(s.f, "", 0, 13, "from t = 2.03" SIM_TEXT_NBSP_S "us on");
    sim_text_wrap_lead(s.f, "", 0, 13, "from t = 2.03 us on");
    sink_check(&s, "from t =\n2.03 us on\nfrom t = 2.03\nus on\n");
}

/* A suggested command's path reads back as that path in a shell: checked
 * by running sh itself on each word (printf '%s' WORD) where sh exists. */
static void test_shell_word(void **state)
{
    (void)state;
    char w[256];
    assert_string_equal(sim_shell_word(w, sizeof w, "plots/io.gp"), "plots/io.gp");
    assert_string_equal(sim_shell_word(w, sizeof w, "it's.gp"), "'it'\\''s.gp'");
    assert_string_equal(sim_shell_word(w, sizeof w, "-x.gp"), "'./-x.gp'");
    assert_string_equal(sim_shell_word(w, sizeof w, "a b"), "'a b'");
    assert_string_equal(sim_shell_word(w, 4, "too long"), "");
    const char *names[] = { "x;$(touch PWNED).gp", "`id`.gp", "a'b\"c.gp", "$HOME.gp",
                            "*.gp", "a\\b.gp", "-e.gp", "it''s.gp" };
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "cd /tmp && printf %%s %s", sim_shell_word(w, sizeof w, names[k]));
        FILE *p = popen(cmd, "r");
        assert_non_null(p);
        char got[256] = "";
        size_t n = fread(got, 1, sizeof got - 1, p);
        got[n] = '\0';
        pclose(p);
        const char *want = names[k];
        char dotted[256];
        if (names[k][0] == '-') {
            snprintf(dotted, sizeof dotted, "./%s", names[k]);
            want = dotted;
        }
        assert_string_equal(got, want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escapes_control_bytes),
        cmocka_unit_test(test_escapes_quote_backslash_utf8),
        cmocka_unit_test(test_nesting_compact),
        cmocka_unit_test(test_nesting_spaced_lines),
        cmocka_unit_test(test_keys_escaped),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_misuse_flagged),
        cmocka_unit_test(test_wrap),
        cmocka_unit_test(test_shell_word),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
