/*
 * test_lesson_engine.c — the lesson engine (lessons/lesson.c), in process.
 *
 * A toy lesson defined here exercises the API: options of every kind, three
 * steps, questions, lesson_alloc. lesson_run gets its input from a string
 * (fmemopen: a pipe, as far as the engine can tell) and writes to a
 * memstream; stderr is redirected into a file around each run. The cases:
 *   - --script: step numbering "Step k of n", questions with answers, no
 *     prompts;
 *   - options: --name value and --name=value, every parser, and each kind of
 *     bad input (exit 2, one message starting "fasim lesson toy: ", nothing
 *     on stdout);
 *   - piped answers: right, close enough, wrong, not a number, skipped;
 *   - b goes back (the previous step is shown again, answers replayed, memory
 *     re-zeroed), q quits with 0 (at a step and at a question), end of input
 *     goes on;
 *   - output: wrapping at 78 columns, vectors and tiles;
 *   - the catalogue: lesson_find and lesson_print_list;
 *   - a terminal: a pseudo-terminal drives single keys; raw mode is on while
 *     a key is awaited and restored afterwards, also when SIGINT kills the
 *     process mid-wait.
 */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "lesson.h"
#include "test_util.h"

/* ---- the toy lesson -------------------------------------------------------- */

static void toy_run(lesson *L)
{
    int n;
    const double *x = lesson_opt_vector(L, "x", "1,2,3", &n);
    int64_t b = lesson_opt_int(L, "block", 2, 1, 100);
    int loud = lesson_opt_flag(L, "loud");
    uint64_t M = lesson_opt_size(L, "M", "96K");
    double t = lesson_opt_double(L, "t", 0.5, 0.0, 1.0);
    const char *name = lesson_opt_string(L, "name", "abc");
    if (n > 6)
        lesson_fail(L, "--x has %d entries; the toy takes at most 6", n);
    int *counter = lesson_alloc(L, sizeof *counter);
    double sum = 0;
    for (int k = 0; k < n; k++)
        sum += x[k];
    lesson_say(L, "Intro line.");
    lesson_step(L, "First");
    int first = lesson_ask(L, "What is 2 + 2?", 4, 0.0);
    lesson_print(L, "values: n=%d b=%lld loud=%d M=%llu t=%g name=%s sum=%g\n", n,
                 (long long)b, loud, (unsigned long long)M, t, name, sum);
    lesson_step(L, "Second");
    (*counter)++;
    lesson_print(L, "counter=%d first=%d\n", *counter, first);
    int r = lesson_ask(L, "What is 2 + 3?", 5, 0.0);
    lesson_print(L, "ask returned %d\n", r);
    lesson_step(L, "Third");
    lesson_print(L, "the end\n");
}

static const lesson_def TOY = { "toy", 1, "A toy", "beginner", 1, "for tests",
                                "--x LIST  numbers\n", toy_run };

/* A lesson that only prints text, for the output functions. */
static const char *g_say_text;
static void say_run(lesson *L)
{
    lesson_step(L, "Text");
    lesson_say(L, "%s", g_say_text);
    double v[50];
    for (int k = 0; k < 50; k++)
        v[k] = k + 0.5;
    lesson_show_vector(L, "v", v, 50, 0);
    lesson_show_vector(L, "w", v, 3, 3);
    float tile[6] = { 1, 2, 3, 4, 5, 6 };
    lesson_show_tile(L, "T", tile, 2, 3, 0);
}
/* Questions judged beyond a tolerance: a concept's idealised answer, a
 * known mistake, and a count that is right only when exact. */
static void grade_run(lesson *L)
{
    lesson_step(L, "Growth");
    const lesson_question grow = { .answer = 3.89189, .known = {
        { 4.0, 1, "The N^2 terms quadruple; the rest only doubles." } } };
    lesson_print(L, "grow returned %d\n", lesson_ask_q(L, &grow, "N doubles: by what %s?",
                                                         "factor"));
    const lesson_question alpha = { .answer = 0.135335283, .known = {
        { 7.3890561, 0, LESSON_WHY_FLIPPED_SIGN }, { 0.5, 0, "Not this one." } } };
    lesson_print(L, "alpha returned %d\n", lesson_ask_q(L, &alpha, "alpha?"));
    const lesson_question count = { .answer = 2, .discrete = 1, .known = {
        { 1024, 0, LESSON_WHY_ELEMENTS } } };
    lesson_print(L, "count returned %d\n", lesson_ask_q(L, &count, "which block?"));
}

static const lesson_def GRADE = { "grade", 3, "Grade", "beginner", 1, "answers", "",
                                  grade_run };

static const lesson_def SAY = { "say", 2, "Say", "beginner", 1, "text", "", say_run };

/* ---- running ---------------------------------------------------------------- */

typedef struct {
    int rc;
    char *out;
    size_t out_len;
    char err[4096];
} result;

static result g_res;

static void res_free(void)
{
    free(g_res.out);
    g_res.out = NULL;
}

static int teardown(void **state)
{
    (void)state;
    res_free();
    return 0;
}

/* Run def with the given input text (NULL: --script) and options. */
static void run_def(const lesson_def *def, const char *input, int argc, const char **argv)
{
    res_free();
    char errpath[512];
    tu_path(errpath, sizeof errpath, "stderr.txt");
    fflush(stderr);
    int saved = dup(2);
    int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);

    FILE *in = NULL;
    if (input && *input)
        in = fmemopen((void *)input, strlen(input), "r");
    else if (input)
        in = fopen("/dev/null", "r");
    FILE *out = open_memstream(&g_res.out, &g_res.out_len);
    assert_non_null(out);
    lesson_run_opts o = { input == NULL, in, out, argc, (char **)argv,
                          LESSON_HANDOUT_NONE };
    g_res.rc = lesson_run(def, &o);
    fclose(out);
    if (in)
        fclose(in);

    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    FILE *f = fopen(errpath, "r");
    size_t n = f ? fread(g_res.err, 1, sizeof g_res.err - 1, f) : 0;
    g_res.err[n] = '\0';
    if (f)
        fclose(f);
}

#define RUN(def, input, ...)                                                    \
    do {                                                                        \
        const char *argv_[] = { __VA_ARGS__ };                                  \
        run_def(def, input, (int)(sizeof argv_ / sizeof argv_[0]) - 1, argv_);  \
    } while (0)

static void expect_out(const char *needle)
{
    if (!strstr(g_res.out, needle))
        fail_msg("output lacks \"%s\"; it is:\n%s\n(stderr: %s)", needle, g_res.out,
                 g_res.err);
}

static void expect_no_out(const char *needle)
{
    if (strstr(g_res.out, needle))
        fail_msg("output has \"%s\"; it is:\n%s", needle, g_res.out);
}

static int count(const char *hay, const char *needle)
{
    int c = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        c++;
    return c;
}

/* The sequence of step numbers in the headers "Step k of n:", as digits. */
static void steps_seen(char *buf, size_t len)
{
    size_t n = 0;
    for (const char *p = g_res.out; (p = strstr(p, "Step ")) && n + 1 < len; p += 5) {
        if (p != g_res.out && p[-1] != '\n')
            continue;
        buf[n++] = p[5];
    }
    buf[n] = '\0';
}

/* ---- cases -------------------------------------------------------------------- */

static void test_script(void **state)
{
    (void)state;
    RUN(&TOY, NULL, NULL);
    assert_int_equal(g_res.rc, 0);
    expect_out("Lesson 1 of 15: A toy\n(toy; beginner; about 1 minutes)\n\n");
    expect_out("Step 1 of 3: First\n------------------\n\n");
    expect_out("Step 2 of 3: Second\n");
    expect_out("Step 3 of 3: Third\n");
    expect_out("Question: What is 2 + 2?\nAnswer: 4\n\n");
    expect_out("Question: What is 2 + 3?\nAnswer: 5\n\n");
    expect_out("ask returned 1\n");
    expect_out("values: n=3 b=2 loud=0 M=98304 t=0.5 name=abc sum=6\n");
    expect_no_out("[Enter");
    expect_no_out("Keys:");
    assert_string_equal(g_res.err, "");
}

static void test_options(void **state)
{
    (void)state;
    RUN(&TOY, NULL, "--x=4, 5.5,-1e1", "--block", "7", "--loud", "--M", "1.5MiB", "--t=0.25",
        "--name", "zz", NULL);
    assert_int_equal(g_res.rc, 0);
    expect_out("values: n=3 b=7 loud=1 M=1572864 t=0.25 name=zz sum=-0.5\n");
    RUN(&TOY, NULL, "--block", "1K", "--M", "2048", NULL);
    assert_int_equal(g_res.rc, 2);   /* 1024 > 100 */
    RUN(&TOY, NULL, "--M", "128KiB", "--block", "-0", NULL);
    assert_int_equal(g_res.rc, 2);
}

static void test_bad_options(void **state)
{
    (void)state;
    static char many[4097 * 2 + 1];
    for (int k = 0; k < 4097; k++) {
        many[2 * k] = '1';
        many[2 * k + 1] = ',';
    }
    many[4097 * 2 - 1] = '\0';
    static const struct {
        const char *a, *b, *c;
        const char *msg;
    } cases[] = {
        { "--x", "", NULL, "--x is empty" },
        { "--x", "  ", NULL, "--x is empty" },
        { "--x", "1,a", NULL, "--x 1,a: entry 2 ('a') is not a number" },
        { "--x", "nan", NULL, "entry 1 is NaN" },
        { "--x", "1,-inf", NULL, "entry 2 ('-inf') is not a finite float32 number" },
        { "--x", "1e39", NULL, "is not a finite float32 number" },
        { "--x", "1,,2", NULL, "entry 2 is empty" },
        { "--x", "1,2,", NULL, "entry 3 is empty" },
        { "--x", "1,2,3,4,5,6,7", NULL, "the toy takes at most 6" },
        { "--block", "0", NULL, "--block 0: must be between 1 and 100" },
        { "--block", "2.5", NULL, "--block 2.5: not a whole number" },
        { "--t", "2", NULL, "--t 2: must be between 0 and 1" },
        { "--t", "inf", NULL, "--t inf: must be a finite number" },
        { "--M", "96KB", NULL, "ambiguous" },
        { "--M", "0", NULL, "at least 1 byte" },
        { "--bogus", "1", NULL, "unknown option --bogus" },
        { "--x", NULL, NULL, "--x needs a value" },
        { "--loud=1", NULL, NULL, "--loud takes no value" },
        { "--loud", "7", NULL, "unexpected argument '7' after the switch --loud" },
        { "stray", NULL, NULL, "unexpected argument 'stray'" },
        { "-x", "1", NULL, "unexpected argument '-x'" },
        { "--x", "1", "--x", "given twice" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const char *argv[5] = { cases[k].a, cases[k].b, cases[k].c, NULL, NULL };
        if (cases[k].c)
            argv[3] = "2";
        int argc = cases[k].c ? 4 : cases[k].b ? 2 : 1;
        run_def(&TOY, NULL, argc, argv);
        if (g_res.rc != 2 || !strstr(g_res.err, cases[k].msg) ||
            strncmp(g_res.err, "fasim lesson toy: ", 18) != 0 || g_res.out_len != 0 ||
            count(g_res.err, "\n") != 1)
            fail_msg("case %zu (%s %s): rc %d, stderr \"%s\", stdout %zu bytes; wanted 2, "
                     "\"%s\", nothing", k, cases[k].a, cases[k].b ? cases[k].b : "",
                     g_res.rc, g_res.err, g_res.out_len, cases[k].msg);
    }
    const char *argv[] = { "--x", many, NULL };
    run_def(&TOY, NULL, 2, argv);
    assert_int_equal(g_res.rc, 2);
    assert_non_null(strstr(g_res.err, "has 4097 entries; at most 4096"));
    many[4096 * 2 - 1] = '\0';                      /* 4096 entries: parsed, then... */
    run_def(&TOY, NULL, 2, argv);
    assert_non_null(strstr(g_res.err, "has 4096 entries; the toy takes at most 6"));
}

static void test_answers(void **state)
{
    (void)state;
    /* step 1 ask, Enter, step 2 ask, Enter, Enter (finish) */
    RUN(&TOY, "4\n\n5\n\n\n", NULL);
    assert_int_equal(g_res.rc, 0);
    expect_out("Your answer (a number; Enter shows it): 4\nRight: 4.\n");
    expect_out("Right: 5.\n\nask returned 1\n");
    expect_out("Keys: Enter or space");
    expect_out("[Enter: next step   b: back   q: quit] \n");
    expect_out("[Enter: finish   b: back   q: quit] \n");

    RUN(&TOY, "4\n\n4\n\n\n", NULL);
    expect_out("Not quite: the answer is 5; you said 4, 1 too low (20% of the answer).\n");
    expect_out("ask returned 0\n");
    RUN(&TOY, "4\n\n5.01\n\n\n", NULL);
    /* Wrapped at the lesson's 78 columns, as its prose is. */
    expect_out("Right: the answer is 5; you said 5.01: off by 0.01 (0.2% of the answer),\n"
               "within 0.5%.\n");
    expect_out("ask returned 1\n");
    RUN(&TOY, "4\n\n7.5\n\n\n", NULL);
    expect_out("you said 7.5, 2.5 too high (50% of the answer).\n");
    RUN(&TOY, "4\n\nfive\n  5  \n\n\n", NULL);
    expect_out("That is not a number");
    expect_out("Right: 5.\n");
    RUN(&TOY, "4\n\n\n\n\n", NULL);                 /* Enter at the question: shown */
    expect_out("Your answer (a number; Enter shows it): \nAnswer: 5\n");
    expect_out("ask returned 0\n");
    RUN(&TOY, "4\nwhat\n\n5\n\n\n", NULL);          /* junk at a step is asked again */
    expect_out("(an empty line goes on, b goes back, q quits)\n");
    expect_out("ask returned 1\n");
}

/* An answer may be a small expression, read with the usual precedence;
 * anything else (a name, a missing parenthesis, an infinite value, nesting
 * past the limit) is refused as not a number, and the question is asked
 * again. */
static void test_expressions(void **state)
{
    (void)state;
    static const char *const right[] = { "10/2", "2+3", "-2^2+9", "2^3^2/102.4", "exp(log(5))",
                                         "sqrt(25)", " ( 1 + 4 ) * 1 " };
    for (size_t k = 0; k < sizeof right / sizeof right[0]; k++) {
        char in[128];
        snprintf(in, sizeof in, "4\n\n%s\n\n\n", right[k]);
        RUN(&TOY, in, NULL);
        assert_int_equal(g_res.rc, 0);
        expect_out("Right: 5.\n");
        expect_out("ask returned 1\n");
    }
    static const char *const refused[] = { "sqrt 25", "1/0", "(2+3", "2 3", "system(5)",
                                           "5)", "e5", "" };
    char deep[256] = "";
    for (int k = 0; k < 100; k++)
        strcat(deep, "(");
    for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++) {
        const char *t = refused[k][0] ? refused[k] : deep;
        char in[512];
        snprintf(in, sizeof in, "4\n\n%s\n\n\n\n", t);
        RUN(&TOY, in, NULL);
        assert_int_equal(g_res.rc, 0);
        expect_out("That is not a number: type one, such as 0.1353 or 1e-3, or an expression");
        expect_out("ask returned 0\n");
    }
}

static void test_graded_answers(void **state)
{
    (void)state;
    /* The concept's answer is right, and the exact value and the reason follow. */
    RUN(&GRADE, "4\n\n\n\n", NULL);
    assert_int_equal(g_res.rc, 0);
    expect_out("Question: N doubles: by what factor?\n");
    expect_out("Right in idea: you said 4, and the exact answer is 3.89189. The N^2 terms\n"
               "quadruple; the rest only doubles.\n\ngrow returned 1\n");
    /* Inside the tolerance stays plainly right; the exact answer stays right. */
    RUN(&GRADE, "3.89\n\n\n\n", NULL);
    expect_out("Right: the answer is 3.89189; you said 3.89: off by");
    RUN(&GRADE, "3.89189\n\n\n\n", NULL);
    expect_out("Right: 3.89189.\n\ngrow returned 1\n");
    /* A known mistake is wrong, with its diagnosis; within 0.5% of it counts. */
    RUN(&GRADE, "\n7.389\n\n\n", NULL);
    expect_out("Not quite: the answer is 0.135335; you said 7.389. You flipped the sign: "
               "that\nis exp(new maximum - old maximum).");
    expect_out("alpha returned 0\n");
    RUN(&GRADE, "\n0.5\n\n\n", NULL);
    expect_out("you said 0.5. Not this one.\n");
    /* Other wrong answers keep the distance. */
    RUN(&GRADE, "\n0.2\n\n\n", NULL);
    expect_out("Not quite: the answer is 0.135335; you said 0.2, 0.0647 too high (48% of the\n"
               "answer).\n");
    /* A discrete answer: exact, no percentage, and a near miss is wrong. */
    RUN(&GRADE, "\n\n3\n\n", NULL);
    expect_out("Not quite: the answer is 2; you said 3.\n\ncount returned 0\n");
    RUN(&GRADE, "\n\n2.001\n\n", NULL);
    expect_out("Not quite: the answer is 2; you said 2.001.\n");
    RUN(&GRADE, "\n\n2\n\n", NULL);
    expect_out("Right: 2.\n\ncount returned 1\n");
    RUN(&GRADE, "\n\n1024\n\n", NULL);
    expect_out("you said 1024. That counts elements;");
    assert_null(strstr(g_res.out, "% of the answer"));
}

static void test_back(void **state)
{
    (void)state;
    char seen[32];
    /* at the end of step 2, b: step 1 again (its question again), then on */
    RUN(&TOY, "4\n\n5\nb\n3\n\n5\n\n\n", NULL);
    assert_int_equal(g_res.rc, 0);
    steps_seen(seen, sizeof seen);
    assert_string_equal(seen, "12123");
    assert_int_equal(count(g_res.out, "Intro line."), 2);
    expect_out("counter=1 first=0\n");      /* re-zeroed memory; the new answer */
    assert_int_equal(count(g_res.out, "counter=1"), 2);
    assert_int_equal(count(g_res.out, "counter=2"), 0);

    /* at the end, b: step 2 again; step 1's answer (right) is replayed */
    RUN(&TOY, "4\n\n5\n\nb\n6\n\n\n", NULL);
    steps_seen(seen, sizeof seen);
    assert_string_equal(seen, "12323");
    assert_int_equal(count(g_res.out, "counter=1 first=1\n"), 2);
    assert_int_equal(count(g_res.out, "Intro line."), 1);
    assert_int_equal(count(g_res.out, "Question: What is 2 + 2?"), 1);
    expect_out("Not quite: the answer is 5; you said 6");

    /* b at a question goes back a step; b at step 1 stays at step 1 */
    RUN(&TOY, "b\n4\n\nb\n4\n\n5\n\n\n", NULL);
    steps_seen(seen, sizeof seen);
    assert_string_equal(seen, "112123");
    assert_int_equal(g_res.rc, 0);
}

static void test_quit_and_eof(void **state)
{
    (void)state;
    RUN(&TOY, "4\nq\n", NULL);
    assert_int_equal(g_res.rc, 0);
    expect_out("(quit)\n");
    expect_no_out("Step 2");
    RUN(&TOY, "4\n\nq\n", NULL);                 /* at a question */
    assert_int_equal(g_res.rc, 0);
    expect_out("Question: What is 2 + 3?\nYour answer (a number; Enter shows it): q\n(quit)");
    expect_no_out("Step 3");
    RUN(&TOY, "", NULL);                         /* no input at all: goes on */
    assert_int_equal(g_res.rc, 0);
    expect_out("Step 3 of 3: Third");
    expect_out("Answer: 5\n");
    expect_out("ask returned 0\n");
    RUN(&TOY, "4\n", NULL);                      /* input ends midway */
    assert_int_equal(g_res.rc, 0);
    expect_out("the end\n");
    assert_int_equal(count(g_res.out, "[Enter:"), 1);
}

/* Columns of each line: code points, at most 78. */
static void check_width(const char *text)
{
    int line = 1, col = 0;
    for (const char *p = text; *p; p++) {
        if (*p == '\n') {
            line++;
            col = 0;
            continue;
        }
        col += ((unsigned char)*p & 0xc0) != 0x80;
        if (col > 78)
            fail_msg("line %d is wider than 78 columns:\n%s", line, text);
    }
}

static void test_wrap_and_show(void **state)
{
    (void)state;
    char text[4096] = "", words[4096] = "";
    for (int k = 0; k < 120; k++) {
        char w[32];
        snprintf(w, sizeof w, "%s%d", k % 7 ? "w" : "longer-word-", k);
        strcat(text, w);
        strcat(text, k % 11 == 10 ? "  " : " ");
        strcat(words, w);
    }
    strcat(text, "\n- a bullet that goes on and on so that it must wrap onto the next line "
                 "ÿ ÿ ÿ ÿ ÿ ÿ ÿ ÿ ÿ ÿ ÿ ÿ\nshort");
    g_say_text = text;
    RUN(&SAY, NULL, NULL);
    assert_int_equal(g_res.rc, 0);
    check_width(g_res.out);
    /* the words come back in order, only the spaces changed */
    const char *start = strstr(g_res.out, "longer-word-0");
    assert_non_null(start);
    char got[4096];
    size_t n = 0;
    for (const char *p = start; *p && strncmp(p, "\n- a", 4) && n + 1 < sizeof got; p++)
        if (*p != ' ' && *p != '\n')
            got[n++] = *p;
    got[n] = '\0';
    assert_string_equal(got, words);
    expect_out("\n- a bullet that goes on");
    expect_out("\n  ÿ ÿ");                        /* the hanging indent of a bullet */
    expect_out("ÿ\nshort\n\n");
    expect_out("  v = [0.5, 1.5, 2.5, 3.5, 4.5,");
    expect_out("15.5, ..., 46.5, 47.5, 48.5, 49.5] (50 entries)\n");
    expect_out("  w = [0.5, 1.5, 2.5]\n");
    expect_out("  T (2 x 3):\n     1  2  3\n     4  5  6\n");
}

static void test_catalog(void **state)
{
    (void)state;
    assert_ptr_equal(lesson_find("2"), &lesson_online_softmax);
    assert_ptr_equal(lesson_find("online-softmax"), &lesson_online_softmax);
    assert_ptr_equal(lesson_find("1"), &lesson_softmax_overflow);
    assert_ptr_equal(lesson_find("9"), &lesson_causal);
    assert_ptr_equal(lesson_find("10"), &lesson_fp8_outliers);
    assert_ptr_equal(lesson_find("11"), &lesson_gpu_time);
    assert_ptr_equal(lesson_find("l2-bytes"), &lesson_l2_bytes);
    assert_ptr_equal(lesson_find("12"), &lesson_l2_bytes);
    assert_ptr_equal(lesson_find("13"), &lesson_block_sparse);
    assert_ptr_equal(lesson_find("block-sparse"), &lesson_block_sparse);
    assert_ptr_equal(lesson_find("ring"), &lesson_ring);
    assert_ptr_equal(lesson_find("14"), &lesson_ring);
    assert_ptr_equal(lesson_find("atomic-dq"), &lesson_atomic_dq);
    assert_ptr_equal(lesson_find("15"), &lesson_atomic_dq);
    assert_null(lesson_find("16"));
    assert_null(lesson_find("0"));
    assert_null(lesson_find("online"));
    assert_null(lesson_find(""));
    int count_;
    const lesson_def *const *all = lesson_all(&count_);
    assert_int_equal(count_, 15);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    lesson_print_list(f);
    fclose(f);
    assert_int_equal(count(buf, "\n"), 16);
    for (int k = 0; k < count_; k++) {
        assert_int_equal(all[k]->number, k + 1);
        char row[96];
        snprintf(row, sizeof row, "%3d  %s ", k + 1, all[k]->name);
        if (!strstr(buf, row))
            fail_msg("the list lacks \"%s\":\n%s", row, buf);
    }
    free(buf);
}

/* ---- a terminal --------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Read the master side until `needle` has appeared `times` times (or 5 s
 * pass). Returns 1 when it has. */
static int wait_for(int master, char *acc, size_t cap, size_t *len, const char *needle,
                    int times)
{
    double t0 = now_s();
    while (now_s() - t0 < 5.0) {
        acc[*len] = '\0';
        if (count(acc, needle) >= times)
            return 1;
        struct pollfd p = { master, POLLIN, 0 };
        if (poll(&p, 1, 100) > 0) {
            ssize_t r = read(master, acc + *len, cap - 1 - *len);
            if (r > 0)
                *len += (size_t)r;
        }
    }
    return 0;
}

/* Wait until the terminal is in raw mode (or not), as the child sets it. */
static int wait_raw(int slave, int raw)
{
    double t0 = now_s();
    while (now_s() - t0 < 5.0) {
        struct termios t;
        if (tcgetattr(slave, &t) == 0 && (((t.c_lflag & ICANON) == 0) == raw))
            return 1;
        nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
    }
    return 0;
}

static pid_t g_child = -1;   /* the lesson on the pty; killed if a check fails */

static int kill_child(void **state)
{
    (void)state;
    if (g_child > 0) {
        kill(g_child, SIGKILL);
        waitpid(g_child, NULL, 0);
    }
    g_child = -1;
    return 0;
}

static pid_t spawn_on_pty(int *master, int *slave)
{
    *master = posix_openpt(O_RDWR | O_NOCTTY);
    if (*master < 0 || grantpt(*master) || unlockpt(*master))
        return -1;
    *slave = open(ptsname(*master), O_RDWR | O_NOCTTY);
    if (*slave < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        FILE *in = fdopen(dup(*slave), "r"), *out = fdopen(dup(*slave), "w");
        lesson_run_opts o = { 0, in, out, 0, NULL, LESSON_HANDOUT_NONE };
        _exit(lesson_run(&TOY, &o));
    }
    g_child = pid;
    return pid;
}

static void test_terminal(void **state)
{
    (void)state;
    int master, slave;
    pid_t pid = spawn_on_pty(&master, &slave);
    if (pid < 0)
        skip();                                  /* no pseudo-terminals here */
    struct termios before;
    assert_int_equal(tcgetattr(slave, &before), 0);
    static char acc[1 << 16];
    size_t len = 0;
    assert_true(wait_for(master, acc, sizeof acc, &len, "Your answer", 1));
    assert_int_equal(write(master, "4\n", 2), 2);  /* a line, in cooked mode */
    assert_true(wait_for(master, acc, sizeof acc, &len, "[Enter: next step", 1));
    assert_true(wait_raw(slave, 1));
    assert_int_equal(write(master, "x", 1), 1);    /* ignored */
    assert_int_equal(write(master, " ", 1), 1);    /* next */
    assert_true(wait_for(master, acc, sizeof acc, &len, "Step 2 of 3", 1));
    assert_true(wait_raw(slave, 0));               /* cooked again for the answer */
    assert_int_equal(write(master, "5\n", 2), 2);
    assert_true(wait_for(master, acc, sizeof acc, &len, "Right: 5.", 1));
    assert_true(wait_raw(slave, 1));
    assert_int_equal(write(master, "b", 1), 1);    /* back to step 1 */
    assert_true(wait_for(master, acc, sizeof acc, &len, "Your answer", 3));
    assert_int_equal(write(master, "4\n", 2), 2);
    assert_true(wait_for(master, acc, sizeof acc, &len, "[Enter: next step", 3));
    assert_true(wait_raw(slave, 1));
    assert_int_equal(write(master, "q", 1), 1);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    g_child = -1;
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_true(wait_for(master, acc, sizeof acc, &len, "(quit)", 1));
    assert_int_equal(count(acc, "Step 1 of 3"), 2);
    struct termios after;
    assert_int_equal(tcgetattr(slave, &after), 0);
    assert_int_equal(after.c_lflag, before.c_lflag);
    assert_int_equal(after.c_cc[VMIN], before.c_cc[VMIN]);
    close(slave);
    close(master);

    /* SIGINT while a key is awaited: the terminal is restored, the signal kills */
    pid = spawn_on_pty(&master, &slave);
    assert_true(pid > 0);
    len = 0;
    assert_true(wait_for(master, acc, sizeof acc, &len, "Your answer", 1));
    assert_int_equal(write(master, "4\n", 2), 2);
    assert_true(wait_raw(slave, 1));
    kill(pid, SIGINT);
    assert_int_equal(waitpid(pid, &st, 0), pid);
    g_child = -1;
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGINT);
    assert_int_equal(tcgetattr(slave, &after), 0);
    assert_int_equal(after.c_lflag, before.c_lflag);
    close(slave);
    close(master);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_script, teardown),
        cmocka_unit_test_teardown(test_options, teardown),
        cmocka_unit_test_teardown(test_bad_options, teardown),
        cmocka_unit_test_teardown(test_answers, teardown),
        cmocka_unit_test_teardown(test_expressions, teardown),
        cmocka_unit_test_teardown(test_graded_answers, teardown),
        cmocka_unit_test_teardown(test_back, teardown),
        cmocka_unit_test_teardown(test_quit_and_eof, teardown),
        cmocka_unit_test_teardown(test_wrap_and_show, teardown),
        cmocka_unit_test(test_catalog),
        cmocka_unit_test_teardown(test_terminal, kill_child),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
