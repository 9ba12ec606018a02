/*
 * test_view_sdl_cli.c — `fasim view --screenshot` and `--sdl` through the
 * binary (argv[1]): a PNG is written and reproducible, bad file names and a
 * missing display give the documented exit status and a message that says
 * what to do.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sweep_util.h"
#include "test_util.h"

static const char *g_fasim;

/* Run fasim with args (NULL-terminated) and env var (NAME=VALUE or NULL);
 * stderr goes to a file whose contents are returned in err. */
static int run(const char *env, char *err, size_t errlen, const char *const *args)
{
    char errpath[512];
    tu_path(errpath, sizeof errpath, "stderr.txt");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (env) {
            const char *eq = strchr(env, '=');
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)(eq - env), env);
            setenv(name, eq + 1, 1);
        }
        if (!freopen(errpath, "w", stderr) || !freopen("/dev/null", "w", stdout))
            _exit(126);
        const char *argv[32];
        int n = 0;
        argv[n++] = g_fasim;
        for (; *args && n < 31; args++)
            argv[n++] = *args;
        argv[n] = NULL;
        alarm(60);
        execv(g_fasim, (char *const *)argv);
        _exit(127);
    }
    int status;
    waitpid(pid, &status, 0);
    FILE *f = fopen(errpath, "r");
    size_t got = f ? fread(err, 1, errlen - 1, f) : 0;
    err[got] = '\0';
    if (f)
        fclose(f);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void test_screenshot_png(void **state)
{
    (void)state;
    char a[512], b[512], err[2048];
    tu_path(a, sizeof a, "a.png");
    tu_path(b, sizeof b, "b.png");
    const char *args_a[] = { "view", "--algo", "fa2", "--N", "64", "--d", "16", "--M", "8K",
                             "--step", "20", "--screenshot", a, "--size", "640x400", NULL };
    const char *args_b[] = { "view", "--algo", "fa2", "--N", "64", "--d", "16", "--M", "8K",
                             "--step", "20", "--screenshot", b, "--size", "640x400", NULL };
    assert_int_equal(run(NULL, err, sizeof err, args_a), 0);
    assert_int_equal(run(NULL, err, sizeof err, args_b), 0);
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    assert_non_null(fa);
    assert_non_null(fb);
    static unsigned char da[1 << 22], db[1 << 22];
    size_t na = fread(da, 1, sizeof da, fa), nb = fread(db, 1, sizeof db, fb);
    fclose(fa);
    fclose(fb);
    assert_true(na > 100);
    assert_memory_equal(da, "\x89PNG\r\n\x1a\n", 8);
    /* IHDR: width and height, big-endian, at bytes 16..23 */
    assert_int_equal((da[16] << 24) | (da[17] << 16) | (da[18] << 8) | da[19], 640);
    assert_int_equal((da[20] << 24) | (da[21] << 16) | (da[22] << 8) | da[23], 400);
    assert_int_equal(na, nb);
    assert_memory_equal(da, db, na);                 /* the same step, the same bytes */
}

static void test_screenshot_errors(void **state)
{
    (void)state;
    char err[2048], jpg[512];
    tu_path(jpg, sizeof jpg, "x.jpg");
    const char *bad_ext[] = { "view", "--screenshot", jpg, NULL };
    assert_int_equal(run(NULL, err, sizeof err, bad_ext), 2);
    assert_non_null(strstr(err, ".png"));
    const char *bad_dir[] = { "view", "--screenshot", "/nonexistent-dir/x.png", NULL };
    assert_int_equal(run(NULL, err, sizeof err, bad_dir), 1);
    assert_non_null(strstr(err, "/nonexistent-dir/x.png"));
    const char *both[] = { "view", "--sdl", "--screenshot", jpg, NULL };
    assert_int_equal(run(NULL, err, sizeof err, both), 2);
    const char *size[] = { "view", "--size", "800", NULL };
    assert_int_equal(run(NULL, err, sizeof err, size), 2);
    assert_non_null(strstr(err, "--size"));
}

static size_t read_all(const char *path, unsigned char *buf, size_t len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, len, f);
    fclose(f);
    return n;
}

/* --theme light|dark: the light theme is the default; the dark one draws
 * other pixels; anything else, or without an SDL output, is a usage error
 * in one line. */
static void test_theme(void **state)
{
    (void)state;
    char def[512], light[512], dark[512], err[2048];
    tu_path(def, sizeof def, "t-default.png");
    tu_path(light, sizeof light, "t-light.png");
    tu_path(dark, sizeof dark, "t-dark.png");
    const char *a_def[] = { "view", "--N", "64", "--d", "16", "--M", "8K", "--step", "9",
                            "--size", "640x400", "--screenshot", def, NULL };
    const char *a_light[] = { "view", "--N", "64", "--d", "16", "--M", "8K", "--step", "9",
                              "--size", "640x400", "--theme", "light", "--screenshot", light,
                              NULL };
    const char *a_dark[] = { "view", "--N", "64", "--d", "16", "--M", "8K", "--step", "9",
                             "--size", "640x400", "--theme=dark", "--screenshot", dark, NULL };
    assert_int_equal(run(NULL, err, sizeof err, a_def), 0);
    assert_int_equal(run(NULL, err, sizeof err, a_light), 0);
    assert_int_equal(run(NULL, err, sizeof err, a_dark), 0);
    static unsigned char d0[1 << 22], d1[1 << 22], d2[1 << 22];
    size_t n0 = read_all(def, d0, sizeof d0), n1 = read_all(light, d1, sizeof d1);
    size_t n2 = read_all(dark, d2, sizeof d2);
    assert_int_equal(n0, n1);
    assert_memory_equal(d0, d1, n0);
    assert_true(n2 != n1 || memcmp(d1, d2, n1) != 0);

    const char *bad[] = { "view", "--screenshot", light, "--theme", "blue", NULL };
    assert_int_equal(run(NULL, err, sizeof err, bad), 2);
    assert_non_null(strstr(err, "--theme blue"));
    assert_non_null(strstr(err, "light or dark"));
    assert_int_equal(su_count_lines(err), 1);
    const char *empty[] = { "view", "--screenshot", light, "--theme=", NULL };
    assert_int_equal(run(NULL, err, sizeof err, empty), 2);
    assert_int_equal(su_count_lines(err), 1);
    const char *alone[] = { "view", "--theme", "dark", NULL };
    assert_int_equal(run(NULL, err, sizeof err, alone), 2);
    assert_non_null(strstr(err, "--theme applies to --sdl and --screenshot"));
    assert_int_equal(su_count_lines(err), 1);
}

/* A font file that does not open: the view still draws, with its bitmap
 * font, and says so in one line. */
static void test_font_fallback(void **state)
{
    (void)state;
    char path[512], err[2048];
    tu_path(path, sizeof path, "fallback.png");
    const char *args[] = { "view", "--N", "64", "--d", "16", "--M", "8K", "--size", "640x400",
                           "--screenshot", path, NULL };
    assert_int_equal(run("FASIM_FONT=/nonexistent-fasim-dir/none.ttf", err, sizeof err, args),
                     0);
    assert_non_null(strstr(err, "built-in 5 x 7 font"));
    assert_int_equal(su_count_lines(err), 1);
    static unsigned char d[1 << 22];
    assert_true(read_all(path, d, sizeof d) > 100);
}

static void test_sdl_without_display(void **state)
{
    (void)state;
    char err[2048];
    const char *args[] = { "view", "--sdl", "--N", "32", "--d", "8", "--M", "4K", NULL };
    assert_int_equal(run("SDL_VIDEODRIVER=none", err, sizeof err, args), 1);
    assert_non_null(strstr(err, "--screenshot"));
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 77;
    g_fasim = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_screenshot_png),
        cmocka_unit_test(test_screenshot_errors),
        cmocka_unit_test(test_theme),
        cmocka_unit_test(test_font_fallback),
        cmocka_unit_test(test_sdl_without_display),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
