/*
 * test_readme.c — the README's sample output is what fasim prints.
 *
 * argv[1]: the fasim binary; argv[2]: README.md. The first fenced block that
 * starts with "fasim " is the classroom report; this runs
 * `fasim --N 1024 --M 96K` and compares the two byte for byte, so the front
 * door cannot drift from the program.
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

static void test_classroom_sample_is_live(void **state)
{
    (void)state;
    FILE *f = fopen(g_readme, "r");
    assert_non_null(f);
    size_t rlen;
    char *readme = slurp(f, &rlen);
    fclose(f);
    const char *start = strstr(readme, "```\nfasim ");
    assert_non_null(start);
    start += 4;
    const char *end = strstr(start, "```\n");
    assert_non_null(end);

    int fd[2];
    assert_int_equal(pipe(fd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        execl(g_fasim, g_fasim, "--N", "1024", "--M", "96K", (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    FILE *p = fdopen(fd[0], "r");
    size_t olen;
    char *out = slurp(p, &olen);
    fclose(p);
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    size_t want = (size_t)(end - start);
    if (olen != want || memcmp(out, start, want) != 0) {
        size_t k = 0;
        while (k < olen && k < want && out[k] == start[k])
            k++;
        fprintf(stderr, "README sample differs from the live output at byte %zu:\n"
                "  README: %.60s\n  live:   %.60s\n"
                "Regenerate the block with: fasim --N 1024 --M 96K\n",
                k, start + k, out + k);
    }
    assert_int_equal(olen, want);
    assert_memory_equal(out, start, want);
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
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_classroom_sample_is_live) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
