/*
 * test_view_sdl_cli.c — `fasim view --screenshot` and `--sdl` through the
 * binary (argv[1]): a PNG is written and reproducible, bad file names and a
 * missing display give the documented exit status and a message that says
 * what to do; `--record` writes every step asked for as GIF frames (read
 * back with giflib), PNG frames or through ffmpeg, the same bytes every time,
 * and refuses what is too large or cannot be written before drawing.
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
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef FASIM_HAVE_GIF
#include <gif_lib.h>
#endif

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
    /* success says what it wrote, on stderr */
    assert_non_null(strstr(err, "wrote step 20 to "));
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
    assert_non_null(strstr(err, "--theme applies to --sdl, --screenshot and --record"));
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
    /* that one line, then what was written */
    assert_int_equal(su_count_lines(err), 2);
    assert_non_null(strstr(err, "\nfasim view: wrote step 1 to "));
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

/* ---- --record ---------------------------------------------------------------- */

/* The run the recording tests draw: FA2 at N = 64, d = 16, M = 8K, on
 * B_r = B_c = 16 (T_r = T_c = 4), small frames. */
#define REC_RUN "view", "--algo", "fa2", "--N", "64", "--d", "16", "--M", "8K", \
                "--size", "320x200"

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* The steps of the run, as the text view counts them ("step 1 of S"). */
static unsigned long run_steps(void)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s view --algo fa2 --N 64 --d 16 --M 8K --frames 1", g_fasim);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char line[256];
    unsigned long steps = 0;
    while (fgets(line, sizeof line, p))
        if (sscanf(line, "step 1 of %lu", &steps) == 1)
            break;
    while (fgets(line, sizeof line, p))
        ;
    pclose(p);
    assert_true(steps > 20);
    return steps;
}

#ifdef FASIM_HAVE_GIF
/* Decode path with giflib; checks the screen and every frame's rectangle,
 * returns the frame count. */
static int gif_frames(const char *path, int w, int h, int *delay)
{
    int e = 0;
    GifFileType *g = DGifOpenFileName(path, &e);
    assert_non_null(g);
    assert_int_equal(DGifSlurp(g), GIF_OK);
    assert_int_equal(g->SWidth, w);
    assert_int_equal(g->SHeight, h);
    assert_non_null(g->SColorMap);
    const int n = g->ImageCount;
    for (int k = 0; k < n; k++) {
        const GifImageDesc *d = &g->SavedImages[k].ImageDesc;
        assert_true(d->Left >= 0 && d->Top >= 0 && d->Width >= 1 && d->Height >= 1);
        assert_true(d->Left + d->Width <= w && d->Top + d->Height <= h);
        if (k == 0) {                   /* the first frame is whole */
            assert_int_equal(d->Width, w);
            assert_int_equal(d->Height, h);
        }
        GraphicsControlBlock gcb;
        assert_int_equal(DGifSavedExtensionToGCB(g, k, &gcb), GIF_OK);
        *delay = gcb.DelayTime;
    }
    DGifCloseFile(g, &e);
    return n;
}
#endif

static size_t file_bytes(const char *path, unsigned char **data)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    *data = malloc((size_t)n + 1);
    assert_non_null(*data);
    assert_int_equal(fread(*data, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return (size_t)n;
}

/* A GIF: one frame a step asked for, the size asked for, the delay of
 * --fps, and the same bytes from a second run. */
static void test_record_gif(void **state)
{
    (void)state;
#ifndef FASIM_HAVE_GIF
    skip();
#else
    char a[512], b[512], all[512], err[2048];
    tu_path(a, sizeof a, "rec-a.gif");
    tu_path(b, sizeof b, "rec-b.gif");
    tu_path(all, sizeof all, "rec-all.gif");
    const char *args_a[] = { REC_RUN, "--step", "10", "--frames", "12", "--fps", "5",
                             "--record", a, NULL };
    const char *args_b[] = { REC_RUN, "--step", "10", "--frames", "12", "--fps", "5",
                             "--record", b, NULL };
    assert_int_equal(run(NULL, err, sizeof err, args_a), 0);
    /* success says what it wrote, on stderr */
    assert_non_null(strstr(err, "wrote 12 frames (steps 10 to 21) to "));
    assert_int_equal(run(NULL, err, sizeof err, args_b), 0);
    int delay = 0;
    assert_int_equal(gif_frames(a, 320, 200, &delay), 12);
    assert_int_equal(delay, 20);            /* 5 frames a second: 20 hundredths */
    unsigned char *da, *db;
    size_t na = file_bytes(a, &da), nb = file_bytes(b, &db);
    assert_int_equal(na, nb);
    assert_memory_equal(da, db, na);
    free(da);
    free(db);

    /* From --step to the last step, at the default 4 a second. */
    const unsigned long steps = run_steps();
    const char *args_all[] = { REC_RUN, "--step", "7", "--record", all, NULL };
    assert_int_equal(run(NULL, err, sizeof err, args_all), 0);
    assert_int_equal(gif_frames(all, 320, 200, &delay), (int)(steps - 6));
    assert_int_equal(delay, 25);
#endif
}

/* Numbered PNG frames in a folder, made when missing: one a step, named by
 * the step (padded to the run's last step's digits), the size asked for. */
static void test_record_png_frames(void **state)
{
    (void)state;
    char dir[512], arg[600], err[2048];
    tu_path(dir, sizeof dir, "rec-frames");
    snprintf(arg, sizeof arg, "%s/", dir);
    const char *args[] = { REC_RUN, "--step", "5", "--frames", "3", "--record", arg, NULL };
    assert_int_equal(run(NULL, err, sizeof err, args), 0);
    const unsigned long steps = run_steps();
    const int nd = steps >= 100 ? 3 : 2;
    for (int k = 5; k <= 7; k++) {
        char name[700];
        snprintf(name, sizeof name, "%s/step-%0*d.png", dir, nd, k);
        unsigned char *d;
        size_t n = file_bytes(name, &d);
        assert_true(n > 33);
        assert_memory_equal(d, "\x89PNG\r\n\x1a\n", 8);
        assert_int_equal((d[16] << 24) | (d[17] << 16) | (d[18] << 8) | d[19], 320);
        assert_int_equal((d[20] << 24) | (d[21] << 16) | (d[22] << 8) | d[23], 200);
        free(d);
    }
    DIR *dd = opendir(dir);
    assert_non_null(dd);
    int files = 0;
    for (struct dirent *e; (e = readdir(dd)) != NULL;)
        files += e->d_name[0] != '.';
    closedir(dd);
    assert_int_equal(files, 3);
}

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, what)) != NULL; p += strlen(what))
        n++;
    return n;
}

/* --format svg: the same frames as SVG documents, the frame's size, every
 * panel's clip group closed, the same bytes from a second run. */
static void test_record_svg_frames(void **state)
{
    (void)state;
    char dir[512], arg[600], again[512], arg2[600], err[2048];
    tu_path(dir, sizeof dir, "rec-svg");
    tu_path(again, sizeof again, "rec-svg-again");
    snprintf(arg, sizeof arg, "%s/", dir);
    snprintf(arg2, sizeof arg2, "%s/", again);
    const char *args[] = { REC_RUN, "--step", "40", "--frames", "2", "--format", "svg",
                           "--record", arg, NULL };
    const char *args2[] = { REC_RUN, "--step", "40", "--frames", "2", "--format", "svg",
                            "--record", arg2, NULL };
    assert_int_equal(run(NULL, err, sizeof err, args), 0);
    assert_int_equal(run(NULL, err, sizeof err, args2), 0);
    const int nd = run_steps() >= 100 ? 3 : 2;
    for (int k = 40; k <= 41; k++) {
        char name[700], name2[700];
        snprintf(name, sizeof name, "%s/step-%0*d.svg", dir, nd, k);
        snprintf(name2, sizeof name2, "%s/step-%0*d.svg", again, nd, k);
        unsigned char *d, *d2;
        size_t n = file_bytes(name, &d), n2 = file_bytes(name2, &d2);
        d[n] = '\0';
        assert_true(n > 1000);
        assert_non_null(strstr((char *)d, "<svg xmlns=\"http://www.w3.org/2000/svg\" "
                                          "width=\"320\" height=\"200\""));
        assert_true(strcmp((char *)d + n - 7, "</svg>\n") == 0);
        assert_int_equal(count((char *)d, "<g "), count((char *)d, "</g>"));
        assert_true(count((char *)d, "<text ") > 10);
        assert_int_equal(n, n2);
        assert_memory_equal(d, d2, n);
        free(d);
        free(d2);
    }
}

/* An MP4 is ffmpeg's: the frames go down a pipe as raw RGB, W x H x 3 bytes
 * each. A stand-in ffmpeg that copies its input to its last argument shows
 * exactly what it was given; without one, a message that names ffmpeg. */
static void test_record_mp4(void **state)
{
    (void)state;
    char fake[512], mp4[512], env[600], err[2048];
    tu_path(fake, sizeof fake, "fake-ffmpeg.sh");
    tu_path(mp4, sizeof mp4, "rec.mp4");
    const char script[] = "#!/bin/sh\nfor last; do :; done\nexec cat > \"$last\"\n";
    assert_int_equal(tu_write_file(fake, script, sizeof script - 1), 0);
    assert_int_equal(chmod(fake, 0755), 0);
    snprintf(env, sizeof env, "FASIM_FFMPEG=%s", fake);
    const char *args[] = { REC_RUN, "--step", "3", "--frames", "4", "--record", mp4, NULL };
    assert_int_equal(run(env, err, sizeof err, args), 0);
    unsigned char *d;
    assert_int_equal(file_bytes(mp4, &d), (size_t)4 * 320 * 200 * 3);
    free(d);

    char none[512];
    tu_path(none, sizeof none, "none.mp4");
    const char *args_none[] = { REC_RUN, "--record", none, NULL };
    assert_int_equal(run("FASIM_FFMPEG=", err, sizeof err, args_none), 1);
    assert_non_null(strstr(err, "ffmpeg, which is not installed"));
    assert_int_equal(su_count_lines(err), 1);
    assert_false(exists(none));
}

/* Refused before anything is drawn, nothing written: too many frames or
 * pixels (exit 2, the numbers and how to narrow it), a place that cannot be
 * written (exit 1), a name that is no kind of recording, options that
 * apply to --record alone. */
static void test_record_refusals(void **state)
{
    (void)state;
    char gif[512], err[2048];
    tu_path(gif, sizeof gif, "refused.gif");
    /* N = 4096 on 16 x 16 blocks: 256 x 256 blocks, far past 10,000 steps. */
    const char *many[] = { "view", "--algo", "fa2", "--N", "4096", "--d", "16", "--M", "8K",
                           "--count-only", "--size", "320x200", "--record", gif, NULL };
    assert_int_equal(run(NULL, err, sizeof err, many), 2);
    assert_non_null(strstr(err, "more than the limit of 10,000"));
    assert_non_null(strstr(err, "--frames"));
    assert_int_equal(su_count_lines(err), 1);
    assert_false(exists(gif));
    /* 40 frames of 8000 x 6000 x 3 B = 5,760,000,000 B > 4 GiB. */
    const char *big[] = { "view", "--algo", "fa2", "--N", "64", "--d", "16", "--M", "8K",
                          "--frames", "40", "--size", "8000x6000", "--record", gif, NULL };
    assert_int_equal(run(NULL, err, sizeof err, big), 2);
    assert_non_null(strstr(err, "40 frames of 8000 x 6000 are 5,760,000,000 bytes"));
    assert_non_null(strstr(err, "4,294,967,296"));
    assert_non_null(strstr(err, "--frames 29 "));        /* floor(2^32 / 144e6) */
    assert_non_null(strstr(err, "smaller --size"));
    assert_int_equal(su_count_lines(err), 1);
    assert_false(exists(gif));

    const char *nodir[] = { REC_RUN, "--record", "/nonexistent-fasim-dir/x.gif", NULL };
    assert_int_equal(run(NULL, err, sizeof err, nodir), 1);
    assert_non_null(strstr(err, "/nonexistent-fasim-dir/x.gif: cannot write"));
    const char *nofolder[] = { REC_RUN, "--record", "/nonexistent-fasim-dir/f/", NULL };
    assert_int_equal(run(NULL, err, sizeof err, nofolder), 1);
    assert_false(exists("/nonexistent-fasim-dir"));
    /* Before any work: a run too large to build is not built. */
    const char *early[] = { "view", "--N", "1M", "--count-only", "--record",
                            "/nonexistent-fasim-dir/x.gif", NULL };
    assert_int_equal(run(NULL, err, sizeof err, early), 1);
    assert_non_null(strstr(err, "cannot write"));

    const char *kind[] = { REC_RUN, "--record", "x.png", NULL };
    assert_int_equal(run(NULL, err, sizeof err, kind), 2);
    assert_non_null(strstr(err, ".gif or .mp4"));
    const char *svgfile[] = { REC_RUN, "--format", "svg", "--record", gif, NULL };
    assert_int_equal(run(NULL, err, sizeof err, svgfile), 2);
    assert_non_null(strstr(err, "folder"));
    const char *fps[] = { REC_RUN, "--fps", "51", "--record", gif, NULL };
    assert_int_equal(run(NULL, err, sizeof err, fps), 2);
    assert_non_null(strstr(err, "--fps"));
    const char *alone[] = { "view", "--fps", "10", NULL };
    assert_int_equal(run(NULL, err, sizeof err, alone), 2);
    assert_non_null(strstr(err, "--fps applies to --record only"));
    const char *both[] = { REC_RUN, "--screenshot", "x.png", "--record", gif, NULL };
    assert_int_equal(run(NULL, err, sizeof err, both), 2);
    assert_non_null(strstr(err, "choose one"));
    assert_false(exists(gif));
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
        cmocka_unit_test(test_record_gif),
        cmocka_unit_test(test_record_png_frames),
        cmocka_unit_test(test_record_svg_frames),
        cmocka_unit_test(test_record_mp4),
        cmocka_unit_test(test_record_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
