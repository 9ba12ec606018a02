/*
 * test_messages.c — exit statuses and messages as fasim documents them:
 * an output stdout does not take is exit 1 with one line on stderr, for
 * every command; a usage error is exit 2 with one line that names the
 * option and the problem; a value the user typed is echoed with its control
 * bytes escaped; one rule for numbers and for repeated options everywhere;
 * and the limits a command enforces are stated in its --help.
 *
 * Argument: the fasim binary.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "sweep_util.h"

static const char *g_fasim;

/* How the child's stdout is set up. */
enum { OUT_FILE, OUT_FULL, OUT_CLOSED };

/* Run fasim with args (NULL-terminated), stdout as `out` says and the
 * variables in unset[] (NULL-terminated, or NULL) removed from its
 * environment. Returns the exit status (-1 for a signal); stderr is read
 * into err. */
static int run_to(int out, const char *const *unset, char *err, size_t errlen,
                  const char *const *args)
{
    char errpath[512];
    tu_path(errpath, sizeof errpath, "msg_err.txt");
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        for (; unset && *unset; unset++)
            unsetenv(*unset);
        int in = open("/dev/null", O_RDONLY);
        int e = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || e < 0)
            _exit(125);
        dup2(in, 0);
        dup2(e, 2);
        if (out == OUT_CLOSED) {
            close(1);
        } else {
            int o = open(out == OUT_FULL ? "/dev/full" : "/dev/null", O_WRONLY);
            if (o < 0)
                _exit(125);
            dup2(o, 1);
        }
        const char *argv[SU_MAX_ARGS + 2];
        int n = 0;
        argv[n++] = g_fasim;
        for (; *args && n < SU_MAX_ARGS + 1; args++)
            argv[n++] = *args;
        argv[n] = NULL;
        alarm(SU_TIMEOUT_S);
        execv(g_fasim, (char *const *)argv);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    FILE *f = fopen(errpath, "rb");
    size_t got = f ? fread(err, 1, errlen - 1, f) : 0;
    err[got] = '\0';
    if (f)
        fclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* Exactly one non-empty line, and no byte that drives a terminal. */
static int one_clean_line(const char *err)
{
    size_t n = strlen(err);
    if (n < 2 || err[n - 1] != '\n' || strchr(err, '\n') != err + n - 1)
        return 0;
    for (const char *p = err; *p; p++)
        if ((unsigned char)*p < 0x20 && *p != '\n')
            return 0;
    return 1;
}

/* Exit status code and, unless it is 0 (then stderr is empty), one line on
 * stderr holding each of says (NULL-ended). */
static void expect(int code, const char *const *says, const char *const *args)
{
    char err[4096], cmd[512] = "fasim";
    for (const char *const *a = args; *a; a++)
        snprintf(cmd + strlen(cmd), sizeof cmd - strlen(cmd), " %s", *a);
    int rc = run_to(OUT_FILE, NULL, err, sizeof err, args);
    int ok = rc == code && (code == 0 ? err[0] == '\0' : one_clean_line(err));
    for (; says && *says; says++)
        ok &= strstr(err, *says) != NULL;
    if (!ok)
        fprintf(stderr, "%s: exit %d (want %d), stderr:\n%s\n", cmd, rc, code, err);
    assert_true(ok);
}

/* ---- a lost output ---- */

static void test_lost_output(void **state)
{
    (void)state;
    const char *const *cmds[] = {
        ARGS("--help"), ARGS("--version"), ARGS("help"), ARGS("help", "view"),
        ARGS("help", "lesson", "merge"), ARGS("view", "--help"), ARGS("lesson", "--help"),
        ARGS("lesson", "1", "--help"), ARGS("sweep", "--help"), ARGS("claims", "--help"),
        ARGS("explore", "--help"), ARGS("gpu", "--help"), ARGS("--preset", "list"),
        ARGS("--gpu", "list"), ARGS("sweep", "--gpu", "list"), ARGS("explore", "--gpu", "list"),
        ARGS("--N", "64", "--count-only"), ARGS("view", "--N", "16", "--frames", "1"),
        ARGS("lesson", "1", "--script"), ARGS("explore", "--keys", "q"),
        ARGS("sweep", "--vary", "N=64..128"), ARGS("claims"),
    };
    for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k++)
        for (int how = OUT_FULL; how <= OUT_CLOSED; how++) {
            char err[4096];
            int rc = run_to(how, NULL, err, sizeof err, cmds[k]);
            int ok = rc == 1 && one_clean_line(err);
            if (!ok)
                fprintf(stderr, "fasim %s ... to %s: exit %d, stderr:\n%s\n", cmds[k][0],
                        how == OUT_FULL ? "/dev/full" : "a closed stdout", rc, err);
            assert_true(ok);
        }
}

/* ---- usage errors and their messages ---- */

static void test_gpu_threads(void **state)
{
    (void)state;
    expect(2, ARGS("--threads 65", "at most 64"),
           ARGS("gpu", "--backend", "cpu", "--threads", "65", "--N", "16", "--d", "16"));
    expect(2, ARGS("--threads 1024", "at most 64"),
           ARGS("gpu", "--threads", "1024", "--backend", "cpu", "--N", "16", "--d", "16"));
    su_run r = su_fasim(g_fasim, "gpu --help");
    assert_non_null(strstr(r.out, "at most 64 on the CPU, 1024 on CUDA"));
    su_free(&r);
    r = su_fasim(g_fasim, "gpu --backend cpu --threads 64 --N 16 --d 16 --algo fa2 --repeat 1");
    assert_int_equal(r.code, 0);
    su_free(&r);
}

/* A --vary list as long as --help allows: 1024 values, far past 255 bytes. */
static void test_vary_list_length(void **state)
{
    (void)state;
    char *vary = malloc(8 * 1025 + 8);
    assert_non_null(vary);
    strcpy(vary, "N=");
    for (int k = 1; k <= 1025; k++)
        snprintf(vary + strlen(vary), 16, "%s%d", k > 1 ? "," : "", k);
    char *last = strrchr(vary, ',');
    *last = '\0';                                     /* 1 .. 1024 */
    char *argv[] = { (char *)g_fasim, "sweep", "--vary", vary, "--d", "16", "--algo", "fa2",
                     "--engine", "closed-form", "--csv", NULL };
    su_run r = su_exec_env(argv, NULL, NULL);
    if (r.code != 0)
        fprintf(stderr, "1024 values: exit %d: %s\n", r.code, r.err);
    assert_int_equal(r.code, 0);
    assert_int_equal(su_count_lines(r.out), 1025);    /* the header and one row each */
    su_free(&r);
    *last = ',';                                      /* 1 .. 1025 */
    r = su_exec_env(argv, NULL, NULL);
    assert_int_equal(r.code, 2);
    assert_non_null(strstr(r.err, "more than 1024 values"));
    su_free(&r);
    free(vary);
}

static void test_misleading_messages(void **state)
{
    (void)state;
    /* An option where a value should be: the option has no value. */
    expect(2, ARGS("--N needs a value"), ARGS("--N", "--d", "16"));
    expect(2, ARGS("--M needs a value"), ARGS("view", "--M", "--d", "16"));
    expect(2, ARGS("--N needs a value"), ARGS("sweep", "--vary", "d=16..32", "--N", "--d", "8"));
    expect(2, ARGS("--repeat needs a value"), ARGS("gpu", "--repeat", "--N", "16"));
    expect(2, ARGS("--engine needs a value"), ARGS("claims", "--engine", "--json"));
    /* The GPU model's options belong to the report, which draws its SMs. */
    expect(2, ARGS("--gpu is not an option of 'fasim view' but an option of the report"),
           ARGS("view", "--gpu", "h100"));
    expect(2, ARGS("--timeline is not an option of 'fasim view'"),
           ARGS("view", "--timeline", "-"));
    /* A file over --max-mem: the message names --max-mem. */
    char q[512];
    tu_path(q, sizeof q, "msg_q.npy");
    char cmd[700];
    snprintf(cmd, sizeof cmd, "--N 4 --d 4 --algo fa2 --compute --out %s", q);
    su_run r = su_fasim(g_fasim, cmd);
    assert_int_equal(r.code, 0);
    su_free(&r);
    char err[4096];
    int rc = run_to(OUT_FILE, NULL, err, sizeof err,
                    ARGS("--q", q, "--k", q, "--v", q, "--max-mem", "1"));
    assert_int_equal(rc, 1);
    assert_true(one_clean_line(err));
    assert_non_null(strstr(err, "--max-mem 1 B"));
    assert_null(strstr(err, "max_elems"));
    /* A seed past 2^63 - 1: one range, named, everywhere. */
    const char *big = "18446744073709551615";
    expect(2, ARGS("--seed", "9223372036854775807"), ARGS("--seed", big));
    expect(2, ARGS("--seed", "9223372036854775807"), ARGS("view", "--seed", big));
    expect(2, ARGS("--seed", "must be between 0 and 9223372036854775807"),
           ARGS("lesson", "online-attention", "--script", "--seed", big));
    expect(2, ARGS("must be between 0 and 9223372036854775807"),
           ARGS("lesson", "online-attention", "--script", "--seed", "18446744073709551616"));
    r = su_fasim(g_fasim, "lesson online-attention --script --seed 9223372036854775807");
    assert_int_equal(r.code, 0);
    su_free(&r);
}

/* A value with a newline or an escape sequence is echoed escaped. */
static void test_values_escaped(void **state)
{
    (void)state;
    expect(2, ARGS("--dtype fp\\n16"), ARGS("--dtype", "fp\n16"));
    expect(2, ARGS("\\x1b[2J"), ARGS("--dtype", "\x1b[2J"));
    expect(2, ARGS("\\x1b"), ARGS("view", "--algo", "fa\x1b"));
    expect(2, ARGS("--N 1\\r2"), ARGS("--N", "1\r2"));
    expect(2, ARGS("\\x1b"), ARGS("sweep", "--vary", "N=\x1b..4"));
    expect(2, ARGS("\\n"), ARGS("gpu", "--backend", "c\npu"));
    expect(2, ARGS("\\x1b"), ARGS("--\x1b[2J"));
    expect(2, ARGS("\\x1b"), ARGS("lesson", "causal", "--script", "--dtype", "\x1b[2J"));
    expect(2, ARGS("\\x1b"), ARGS("lesson", "merge", "--script", "--x", "1,\x1b"));
    /* File names too: inputs, --out, --lock (exit 1: the file, not the usage). */
    expect(1, ARGS("--q a\\nb.npy"), ARGS("--q", "a\nb.npy", "--k", "a", "--v", "a"));
    expect(1, ARGS("--out nodir\\n/x\\x1b[2J.npy"),
           ARGS("--algo", "fa2", "--N", "64", "--out", "nodir\n/x\x1b[2J.npy"));
    expect(1, ARGS("--lock nodir\\n/l"),
           ARGS("gpu", "--backend", "cpu", "--N", "64", "--lock", "nodir\n/l"));
    /* A claims line with an escape sequence. */
    char path[512];
    tu_path(path, sizeof path, "esc.claims");
    const char *text = "fa2 hbm_bytes < 1 at N=\x1b[2J\n";
    assert_int_equal(tu_write_file(path, text, strlen(text)), 0);
    char err[4096];
    int rc = run_to(OUT_FILE, NULL, err, sizeof err, ARGS("claims", path));
    assert_int_equal(rc, 2);
    assert_null(strchr(err, '\x1b'));
    assert_non_null(strstr(err, "N=\\x1b[2J"));
}

/* Without a display, --sdl says so in one line: not SDL's own lines first
 * (libwayland's "XDG_RUNTIME_DIR is invalid or not set"). */
static void test_sdl_one_line(void **state)
{
    (void)state;
    const char *unset[] = { "DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR", NULL };
    char err[4096];
    setenv("SDL_VIDEODRIVER", "wayland", 1);         /* the child inherits it */
    int rc = run_to(OUT_FILE, unset, err, sizeof err,
                    ARGS("view", "--sdl", "--N", "32", "--d", "8", "--M", "4K"));
    unsetenv("SDL_VIDEODRIVER");
    if (rc != 1 || !one_clean_line(err))
        fprintf(stderr, "view --sdl without a display: exit %d, stderr:\n%s\n", rc, err);
    assert_int_equal(rc, 1);
    assert_true(one_clean_line(err));
}

/* ---- one rule for numbers, one for repeated options ---- */

static void test_number_rule(void **state)
{
    (void)state;
    const char *same[] = { "--M 96K", "--M 96k", "--M 96KiB", "--M 96kib", "--M 98304",
                           "--M 0.09375MiB", "--M 0.09375mib" };
    for (size_t k = 0; k < sizeof same / sizeof same[0]; k++) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "%s --count-only --json", same[k]);
        su_run r = su_fasim(g_fasim, cmd);
        if (r.code != 0 || !strstr(r.out, "\"M_bytes\":98304,"))
            fprintf(stderr, "fasim %s: exit %d: %s\n", cmd, r.code, r.err);
        assert_int_equal(r.code, 0);
        assert_non_null(strstr(r.out, "\"M_bytes\":98304,"));
        su_free(&r);
    }
    /* White space around a number, on either side, is ignored. */
    expect(0, NULL, ARGS("--N", " 64", "--count-only"));
    expect(0, NULL, ARGS("--N", "64 ", "--count-only"));
    expect(0, NULL, ARGS("--N", "\t64 ", "--count-only"));
    su_run r = su_fasim(g_fasim, "lesson online-softmax --script --block 3");
    char *want = r.out;
    char *argv[] = { (char *)g_fasim, "lesson", "online-softmax", "--script", "--block", " 3 ",
                     NULL };
    su_run r2 = su_exec_env(argv, NULL, NULL);
    assert_int_equal(r2.code, 0);
    assert_string_equal(r2.out, want);
    su_free(&r2);
    su_free(&r);
    r = su_fasim(g_fasim, "lesson online-softmax --script --block 5k");
    assert_int_equal(r.code, 2);                 /* the suffix is read: out of range */
    assert_non_null(strstr(r.err, "must be between"));
    su_free(&r);
    /* Decimal only, everywhere. */
    expect(2, ARGS("--N 0x10", "decimal"), ARGS("--N", "0x10"));
    /* T and TiB (2^40, the limit of N) like the other suffixes; TB ambiguous. */
    expect(2, ARGS("--N 2T", "at most 1099511627776"), ARGS("--N", "2T"));
    expect(2, ARGS("9007199254740992 tile steps"),     /* 2^40 rows parsed */
           ARGS("--N", "1tib", "--d", "1", "--M", "1G", "--algo", "fa2", "--count-only",
                "--plan", "best"));
    expect(2, ARGS("'TB' is ambiguous"), ARGS("--N", "1TB"));
    expect(2, ARGS("--N 0x100", "hexadecimal is not accepted"),
           ARGS("lesson", "causal", "--script", "--N", "0x100"));
    expect(2, ARGS("--block 0x2"), ARGS("lesson", "online-softmax", "--script", "--block", "0x2"));
    expect(2, ARGS("'0x10') is not a number"),
           ARGS("lesson", "online-softmax", "--script", "--x", "1,0x10"));
}

static void test_repeated_options(void **state)
{
    (void)state;
    const char *const *cmds[] = {
        ARGS("--N", "64", "--N", "128"),
        ARGS("--json", "--count-only", "--json"),
        ARGS("view", "--N", "16", "--N=32"),
        ARGS("sweep", "--vary", "N=64..128", "--d", "16", "--d", "32"),
        ARGS("explore", "--keys", "q", "--keys", "q"),
        ARGS("gpu", "--backend", "cpu", "--repeat", "1", "--repeat", "2"),
        ARGS("gpu", "--backend", "cpu", "--N", "16", "--N", "16"),
        ARGS("claims", "--json", "--json"),
        ARGS("claims", "--engine", "sim", "--engine=auto"),
        ARGS("lesson", "online-softmax", "--block", "2", "--block", "3"),
        ARGS("lesson", "online-softmax", "--script", "--script"),
    };
    for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k++)
        expect(2, ARGS("given twice"), cmds[k]);
    /* The rule is stated where the options are. */
    su_run r = su_fasim(g_fasim, "--help");
    assert_non_null(strstr(r.out, "given twice"));
    su_free(&r);
}

/* ---- limits in --help ---- */

static void test_lesson_limits_in_help(void **state)
{
    (void)state;
    static const struct {
        const char *lesson, *line_start, *says;
    } rows[] = {
        { "tiling-budget", "--N N", "up to 2^30" },
        { "causal", "--N N", "up to 2^30" },
        { "io-complexity", "--d D", "up to 4096" },
        { "loop-order", "--d D", "up to 4096" },
        { "loop-order", "--block B", "up to 262144" },
        { "causal", "--d D", "up to 4096" },
        { "online-attention", "--seed S", "0 to 2^63-1" },
    };
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "lesson %s --help", rows[k].lesson);
        su_run r = su_fasim(g_fasim, cmd);
        const char *line = strstr(r.out, rows[k].line_start);
        const char *eol = line ? strchr(line, '\n') : NULL;
        const char *says = line ? strstr(line, rows[k].says) : NULL;
        if (!says || says > eol)
            fprintf(stderr, "fasim %s: '%s' does not state '%s'\n", cmd, rows[k].line_start,
                    rows[k].says);
        assert_true(says && says < eol);
        su_free(&r);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_messages FASIM\n");
        return 2;
    }
    g_fasim = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lost_output),
        cmocka_unit_test(test_gpu_threads),
        cmocka_unit_test(test_vary_list_length),
        cmocka_unit_test(test_misleading_messages),
        cmocka_unit_test(test_values_escaped),
        cmocka_unit_test(test_sdl_one_line),
        cmocka_unit_test(test_number_rule),
        cmocka_unit_test(test_repeated_options),
        cmocka_unit_test(test_lesson_limits_in_help),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
