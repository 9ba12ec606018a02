/*
 * test_outfile.c — every file fasim writes is whole or absent.
 *
 * argv[1] is the fasim binary. The cases:
 *   - io/sim_outfile in process: a commit replaces the file and keeps its
 *     mode; an abort leaves the old bytes and no temporary; a device is
 *     written directly; a link keeps pointing at the replaced file; a
 *     directory is refused; the check creates nothing;
 *   - --out on runs refused after the options were read (--max-steps 1,
 *     --M 1, a NaN input): no new file, an old one untouched;
 *   - --out on a disk that fills up part-way (a file-size limit, as a full
 *     disk): the old array is intact and no temporary is left;
 *   - a run killed by SIGTERM while it computes: no file, no temporary;
 *   - --plot onto a directory: refused, the directory still there;
 *   - --plot on a disk that fills under gnuplot's picture (which gnuplot
 *     does not report): the old picture stays.
 * Every case failed on the code before files were written through
 * sim_outfile (the empty file, the truncated array, the deleted folder).
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sim_outfile.h"
#include "test_util.h"

static const char *g_fasim;

/* ---- helpers ---------------------------------------------------------------------- */

/* A fresh folder under the test's temporary directory. */
static const char *fresh_dir(const char *name)
{
    static char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s", tu_tmpdir(), name);
    assert_int_equal(mkdir(dir, 0700), 0);
    return dir;
}

/* Entries of dir other than . and .. */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

static void put_file(const char *path, const char *text)
{
    assert_int_equal(tu_write_file(path, text, strlen(text)), 0);
}

static int same_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return n == strlen(text) && !memcmp(buf, text, n);
}

static int exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* Run fasim with args (NULL-terminated) in the background; stdout and
 * stderr to /dev/null. fsize > 0 limits the size of files it may write. */
static pid_t start(const char *const *args, rlim_t fsize)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        if (fsize > 0) {
            struct rlimit rl = { fsize, fsize };
            setrlimit(RLIMIT_FSIZE, &rl);
        }
        char *argv[32];
        int n = 0;
        argv[n++] = (char *)g_fasim;
        for (; args[n - 1] && n < 31; n++)
            argv[n] = (char *)args[n - 1];
        argv[n] = NULL;
        execv(g_fasim, argv);
        _exit(127);
    }
    return pid;
}

/* Wait for pid; its exit status, or 128 + the signal that ended it. */
static int finish(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0)
        assert_int_equal(errno, EINTR);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int run(const char *const *args)
{
    return finish(start(args, 0));
}

/* ---- sim_outfile in process --------------------------------------------------------- */

static void commit_replaces_abort_keeps(void **state)
{
    (void)state;
    const char *dir = fresh_dir("unit");
    char path[1200];
    snprintf(path, sizeof path, "%s/a.txt", dir);
    put_file(path, "old");
    assert_int_equal(chmod(path, 0640), 0);

    sim_outfile o;
    assert_int_equal(sim_outfile_open(&o, path), 0);
    fputs("new bytes", o.f);
    assert_true(same_text(path, "old"));          /* nothing visible before the commit */
    assert_int_equal(entries(dir), 2);            /* the file and its temporary */
    assert_int_equal(sim_outfile_commit(&o), 0);
    assert_true(same_text(path, "new bytes"));
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);    /* the old file's mode */
    assert_int_equal(entries(dir), 1);

    assert_int_equal(sim_outfile_open(&o, path), 0);
    fputs("half", o.f);
    sim_outfile_abort(&o);
    assert_true(same_text(path, "new bytes"));
    assert_int_equal(entries(dir), 1);

    /* A link keeps pointing at the file, which is replaced. */
    char lnk[1200];
    snprintf(lnk, sizeof lnk, "%s/link.txt", dir);
    assert_int_equal(symlink("a.txt", lnk), 0);
    assert_int_equal(sim_outfile_open(&o, lnk), 0);
    fputs("through the link", o.f);
    assert_int_equal(sim_outfile_commit(&o), 0);
    assert_int_equal(lstat(lnk, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_true(same_text(path, "through the link"));

    /* A device is written directly. */
    assert_int_equal(sim_outfile_open(&o, "/dev/null"), 0);
    assert_string_equal(o.tmp, "");
    fputs("gone", o.f);
    assert_int_equal(sim_outfile_commit(&o), 0);

    /* Refusals create nothing. */
    assert_int_equal(sim_outfile_check(dir), EISDIR);
    assert_int_equal(sim_outfile_open(&o, dir), EISDIR);
    char missing[1200];
    snprintf(missing, sizeof missing, "%s/no/such/folder.npy", dir);
    assert_int_equal(sim_outfile_check(missing), ENOENT);
    snprintf(missing, sizeof missing, "%s/new.npy", dir);
    assert_int_equal(sim_outfile_check(missing), 0);
    assert_false(exists(missing));
    assert_int_equal(entries(dir), 2);
}

/* ---- the command line ----------------------------------------------------------------- */

static void refused_runs_write_nothing(void **state)
{
    (void)state;
    const char *dir = fresh_dir("refused");
    char out[1200], prev[1200], nan[1200];
    snprintf(out, sizeof out, "%s/new.npy", dir);
    snprintf(prev, sizeof prev, "%s/prev.npy", dir);
    put_file(prev, "an old array");

    const char *steps[] = { "--N", "256", "--algo", "fa2", "--compute", "--max-steps", "1",
                            "--out", out, NULL };
    assert_int_not_equal(run(steps), 0);
    assert_false(exists(out));
    const char *tiny[] = { "--N", "256", "--algo", "fa2", "--M", "1", "--out", out, NULL };
    assert_int_not_equal(run(tiny), 0);
    assert_false(exists(out));

    /* A NaN in Q: written by fasim itself, then refused as input. */
    const char *mk[] = { "--N", "4", "--d", "4", "--algo", "fa2", "--dtype", "fp32",
                         "--compute", "--out", nan, NULL };
    snprintf(nan, sizeof nan, "%s/q.npy", dir);
    assert_int_equal(run(mk), 0);
    assert_true(exists(nan));
    int fd = open(nan, O_WRONLY);
    assert_true(fd >= 0);
    const uint32_t qnan = 0x7fc00000u;
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_equal(pwrite(fd, &qnan, 4, st.st_size - 4), 4);
    close(fd);
    const char *bad[] = { "--N", "4", "--d", "4", "--algo", "fa2", "--q", nan, "--k", nan,
                          "--v", nan, "--out", prev, NULL };
    assert_int_not_equal(run(bad), 0);
    assert_true(same_text(prev, "an old array"));
    const char *bad2[] = { "--N", "4", "--d", "4", "--algo", "fa2", "--q", nan, "--k", nan,
                           "--v", nan, "--out", out, NULL };
    assert_int_not_equal(run(bad2), 0);
    assert_false(exists(out));
    assert_int_equal(entries(dir), 2);            /* prev.npy, q.npy: no temporary */
}

static void full_disk_keeps_the_old_array(void **state)
{
    (void)state;
    const char *dir = fresh_dir("full");
    char prev[1200];
    snprintf(prev, sizeof prev, "%s/prev.npy", dir);
    put_file(prev, "the old, valid array");
    /* O of N = 4096, d = 64 is 1 MiB; the disk "fills" after 24 KiB. */
    const char *args[] = { "--N", "4096", "--d", "64", "--algo", "fa2", "--compute",
                           "--out", prev, NULL };
    int rc = finish(start(args, 24576));
    assert_int_not_equal(rc, 0);                  /* "write failed", or SIGXFSZ */
    assert_true(same_text(prev, "the old, valid array"));
    assert_int_equal(entries(dir), 1);
}

static void killed_run_leaves_nothing(void **state)
{
    (void)state;
    const char *dir = fresh_dir("killed");
    char out[1200];
    snprintf(out, sizeof out, "%s/o.npy", dir);
    /* Seconds of compute: killed long before it ends. */
    const char *args[] = { "--N", "16384", "--d", "128", "--algo", "fa2", "--compute",
                           "--out", out, NULL };
    pid_t pid = start(args, 0);
    struct timespec ts = { 0, 400 * 1000 * 1000 };
    nanosleep(&ts, NULL);
    assert_int_equal(kill(pid, SIGTERM), 0);
    int rc = finish(pid);
    assert_int_equal(rc, 128 + SIGTERM);          /* it ended as SIGTERM ends a process */
    assert_false(exists(out));
    assert_int_equal(entries(dir), 0);
}

static void plot_onto_a_directory(void **state)
{
    (void)state;
    const char *dir = fresh_dir("plotdir");
    char img[1200];
    snprintf(img, sizeof img, "%s/d.svg", dir);
    assert_int_equal(mkdir(img, 0700), 0);
    const char *args[] = { "sweep", "--vary", "N=256..1024", "--plot", img, NULL };
    assert_int_equal(run(args), 1);
    struct stat st;
    assert_int_equal(stat(img, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(entries(dir), 1);            /* no .dat or .gp either */
}

/* gnuplot exits 0 even when the disk fills under its picture: the cut
 * picture must not replace the old one (a file-size limit stands for the
 * full disk; gnuplot inherits it). Skipped without gnuplot. */
static void plot_full_disk_keeps_old_image(void **state)
{
    (void)state;
    if (access("/usr/bin/gnuplot", X_OK) != 0) {
        fprintf(stderr, "  (gnuplot not installed: skipped)\n");
        return;
    }
    const char *dir = fresh_dir("plotfull");
    char img[1200];
    snprintf(img, sizeof img, "%s/old.svg", dir);
    put_file(img, "<svg>the old, whole picture</svg>\n");
    const char *args[] = { "sweep", "--vary", "N=256..4096", "--plot", img, NULL };
    int rc = finish(start(args, 16384));          /* the data and script fit; the SVG not */
    assert_int_not_equal(rc, 0);
    assert_true(same_text(img, "<svg>the old, whole picture</svg>\n"));
    /* old.svg, old.dat, old.gp: no temporary folder or file is left */
    assert_int_equal(entries(dir), 3);
}

/* SIGTERM while gnuplot draws: gnuplot ends too (no orphan drawing on into
 * a folder that is being removed), and no temporary is left. A stand-in
 * "gnuplot" (FASIM_GNUPLOT) writes its pid and sleeps. */
static void plot_killed_while_drawing(void **state)
{
    (void)state;
    const char *dir = fresh_dir("plotkill");
    char fake[1200], pidfile[1200], img[1200], script[2600];
    snprintf(fake, sizeof fake, "%s/../slow-gnuplot", dir);
    snprintf(pidfile, sizeof pidfile, "%s/../slow-gnuplot.pid", dir);
    snprintf(script, sizeof script, "#!/bin/sh\necho $$ > '%s'\nexec sleep 30\n", pidfile);
    put_file(fake, script);
    assert_int_equal(chmod(fake, 0700), 0);
    snprintf(img, sizeof img, "%s/p.svg", dir);
    setenv("FASIM_GNUPLOT", fake, 1);
    const char *args[] = { "sweep", "--vary", "N=256..1024", "--plot", img, NULL };
    pid_t pid = start(args, 0);
    unsetenv("FASIM_GNUPLOT");
    long child = 0;
    for (int k = 0; k < 400 && child <= 0; k++) {     /* up to 20 s for it to start */
        struct timespec ts = { 0, 50 * 1000 * 1000 };
        nanosleep(&ts, NULL);
        FILE *f = fopen(pidfile, "r");
        if (f) {
            if (fscanf(f, "%ld", &child) != 1)
                child = 0;
            fclose(f);
        }
    }
    assert_true(child > 0);
    assert_int_equal(kill(pid, SIGTERM), 0);
    assert_int_equal(finish(pid), 128 + SIGTERM);
    assert_int_equal(kill((pid_t)child, 0), -1);      /* gone, and reaped */
    assert_int_equal(errno, ESRCH);
    assert_int_equal(entries(dir), 2);                 /* p.dat and p.gp only */
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_outfile path/to/fasim\n");
        return 2;
    }
    g_fasim = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(commit_replaces_abort_keeps),
        cmocka_unit_test(refused_runs_write_nothing),
        cmocka_unit_test(full_disk_keeps_the_old_array),
        cmocka_unit_test(killed_run_leaves_nothing),
        cmocka_unit_test(plot_onto_a_directory),
        cmocka_unit_test(plot_full_disk_keeps_old_image),
        cmocka_unit_test(plot_killed_while_drawing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
