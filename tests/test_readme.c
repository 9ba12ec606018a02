/*
 * test_readme.c — the README's sample output is what fasim prints.
 *
 * argv[1]: the fasim binary; argv[2]: README.md. The first fenced block that
 * starts with "fasim " is the classroom report; this runs
 * `fasim --N 1024 --M 96K` and compares the two byte for byte, so the front
 * door cannot drift from the program. The FA3 section's picture of one
 * thread block's pipeline (the block after its `--timeline - | tail -17`
 * command) is the end of what that command prints.
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

static const char *g_fasim, *g_readme;

static char *slurp(FILE *f, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* What fasim prints when run as argv (argv[0] the binary, NULL-terminated),
 * and its length; the run must exit 0. */
static char *run_fasim(char **argv, size_t *olen)
{
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        execv(g_fasim, argv);
        _exit(127);
    }
    close(fd[1]);
    FILE *p = fdopen(fd[0], "r");
    char *out = slurp(p, olen);
    fclose(p);
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return out;
}

static char *read_readme(void)
{
    FILE *f = fopen(g_readme, "r");
    assert_non_null(f);
    size_t rlen;
    char *readme = slurp(f, &rlen);
    fclose(f);
    return readme;
}

/* The README's block [start, start + want) is out from byte `at`. */
static void same(const char *out, size_t olen, size_t at, const char *start, size_t want,
                 const char *how)
{
    if (olen - at != want || memcmp(out + at, start, want) != 0) {
        size_t k = 0;
        while (at + k < olen && k < want && out[at + k] == start[k])
            k++;
        fprintf(stderr, "README sample differs from the live output at byte %zu:\n"
                "  README: %.60s\n  live:   %.60s\n"
                "Regenerate the block with: %s\n",
                k, start + k, out + at + k, how);
    }
    assert_int_equal(olen - at, want);
    assert_memory_equal(out + at, start, want);
}

static void test_classroom_sample_is_live(void **state)
{
    (void)state;
    char *readme = read_readme();
    const char *start = strstr(readme, "```\nfasim ");
    assert_non_null(start);
    start += 4;
    const char *end = strstr(start, "```\n");
    assert_non_null(end);
    char *argv[] = { (char *)g_fasim, "--N", "1024", "--M", "96K", NULL };
    size_t olen;
    char *out = run_fasim(argv, &olen);
    same(out, olen, 0, start, (size_t)(end - start), "fasim --N 1024 --M 96K");
    free(out);
    free(readme);
}

/* The FA3 section's picture: the last 17 lines of its command's output. */
static void test_fa3_pipeline_sample_is_live(void **state)
{
    (void)state;
    char *readme = read_readme();
    static const char CMD[] = "fasim --gpu h100 --algo fa3 --plan kernel --N 8448 --d 128 "
                              "--batch 4 --heads 16 --timeline - | tail -17\n```\n\n```\n";
    const char *start = strstr(readme, CMD);
    assert_non_null(start);
    start += strlen(CMD);
    const char *end = strstr(start, "```\n");
    assert_non_null(end);
    char *argv[] = { (char *)g_fasim, "--gpu", "h100", "--algo", "fa3", "--plan", "kernel",
                     "--N", "8448", "--d", "128", "--batch", "4", "--heads", "16",
                     "--timeline", "-", NULL };
    size_t olen;
    char *out = run_fasim(argv, &olen);
    size_t at = olen;      /* the start of its last 17 lines */
    for (int lines = 0; at > 0; at--)
        if (out[at - 1] == '\n' && ++lines == 18)
            break;
    same(out, olen, at, start, (size_t)(end - start), CMD);
    free(out);
    free(readme);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s FASIM README.md\n", argv[0]);
        return 77;
    }
    g_fasim = argv[1];
    g_readme = argv[2];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classroom_sample_is_live),
        cmocka_unit_test(test_fa3_pipeline_sample_is_live),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
