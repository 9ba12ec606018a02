/*
 * test_limits.c — every resource limit: input past it is refused before any
 * work, with exit status 2 (1 for a file fasim will not read), a message that
 * names the limit and, where a flag raises it, the flag; and the limit is
 * stated in the --help of the command it belongs to. One row per limit.
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

typedef struct {
    const char *what;
    const char *args;          /* split at spaces */
    int code;
    const char *says[3];       /* substrings of stderr */
    const char *help;          /* the command whose --help states it */
    const char *help_says;
} limit_case;

static const limit_case CASES[] = {
    { "N past 2^40", "--N 1099511627777 --count-only", 2,
      { "--N", "at most 1099511627776" }, "--help", "N <= 2^40" },
    { "d past 65536", "--d 65537", 2, { "--d", "at most 65536" }, "--help", "d <= 65536" },
    { "heads past 65536", "--heads 65537", 2, { "--heads", "at most 65536" }, "--help",
      "B, H, G <= 65536" },
    { "batch past 65536", "--batch 65537", 2, { "--batch", "at most 65536" }, "--help",
      "B, H, G <= 65536" },
    { "window past 2^40", "--window 1099511627777", 2, { "--window", "at most 1099511627776" },
      "--help", "N <= 2^40" },
    { "M past 1 GiB", "--M 1025M", 2, { "--M", "at most 1G" }, "--help", "M <= 1G" },
    { "block mask past 2^22 blocks", "--N 8192 --block-mask local:1 --Br 1 --Bc 1 --count-only",
      2, { "--block-mask", "8192 x 8192 blocks", "4194304" }, "--help", "2^22 blocks" },
    { "counts past 64 bits", "--N 1024G --d 1 --M 1G --count-only", 2,
      { "overflow 64 bits", "smaller N" }, "--help", "counts must fit in 64 bits" },
    { "tile steps", "--N 16M --count-only", 2, { "tile steps", "--max-steps" }, "--help",
      "--max-steps N" },
    { "tile steps, lowered", "--N 1024 --max-steps 100 --count-only", 2,
      { "more than the limit of 100", "--max-steps" }, "--help", "--max-steps N" },
    { "tile steps of the runs in all", "--N 4096 --d 64 --M 96K --Br 64 --Bc 64 --algo fa1,fa2 "
      "--max-steps 5000 --count-only", 2,      /* 4096 steps each, 8192 together */
      { "8192 tile steps in all", "more than the limit of 5000", "--max-steps" }, "--help",
      "of each run and of all runs together" },
    { "compute memory", "--compute --N 64 --max-mem 1K", 2,
      { "1 KiB limit", "--max-mem", "--count-only" }, "--help", "--max-mem BYTES" },
    { "gpu memory", "gpu --backend cpu --N 4K --max-mem 1M", 2,
      { "over the 1 MiB limit", "--max-mem" }, "--help", "--max-mem BYTES" },
    { "gpu tile steps", "gpu --backend cpu --N 4K --max-steps 100", 2,
      { "tile steps", "more than the limit of 100", "--max-steps" }, "gpu --help",
      "--max-steps for each loop order" },
    { "gpu compute", "gpu --backend cpu --N 8K --d 128 --algo naive", 2,
      /* 4 N^2 d = 3.4e10 flops, three times: the simulator, the kernel's
       * counted run and its one timed run (the CPU's default --repeat) */
      { "1.0e+11 flops", "over the limit of 7.2e+10", "--compute" }, "gpu --help",
      "at most 7.2e10\nflops in all" },
    { "paged tile steps", "--N 1M --page-size 1 --count-only --max-steps 1000", 2,
      { "tile steps", "--max-steps" }, "--help", "paged steps cost up to 7x" },
    { "gpu model steps", "--N 4M --d 128 --causal --gpu h100 --algo fa2 --count-only", 2,
      { "GPU model would replay", "limit of 268435456", "--max-steps" }, "--help",
      "replays at most a 32nd of it" },
    { "trace events", "--gpu a100 --N 16K --d 64 --heads 32 --batch 4 --algo fa2 --count-only "
      "--trace /dev/null", 2, { "6406144 events", "over 4000000", "--heads" }, "--help",
      "most 4,000,000 events" },
    { "view recording", "view --N 8192 --M 96K --Br 16 --Bc 16 --compute --frames 1", 2,
      { "limit 256 MiB", "hint" }, "view --help", "exceed 256 MiB" },
    { "view steps", "view --N 1M --M 96K --count-only --frames 1", 2,
      { "limit 2^27 steps", "hint" }, "view --help", "more than 2^27 steps" },
    { "sweep values", "sweep --vary N=1..2000+1", 2, { "more than 1024 values" },
      "sweep --help", "1024 values per --vary" },
    { "sweep grid", "sweep --vary N=1..100+1 --vary d=1..100+1", 2,
      { "more than 4096 configurations" }, "sweep --help", "4096 configurations" },
    { "sweep tile steps in all", "sweep --vary N=16K..16K+1 --vary d=64..127+1 --algo fa2 "
      "--engine sim --max-steps 1000000", 2,
      { "8.1e+06 tile steps in all", "more than the limit of 1000000", "--max-steps" },
      "sweep --help", "each and all together" },
    { "explore N", "explore --N 2G", 2, { "up to 2^30" }, "explore --help", "1 .. 2^30" },
    { "explore M", "explore --M 2M", 2, { "256 B .. 1M" }, "explore --help", "256 .. 1M" },
    { "lesson integer option", "lesson online-softmax --script --block 0", 2,
      { "--block" }, "lesson online-softmax --help", "1 to the length of x" },
};

static void test_each_limit(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
        const limit_case *c = &CASES[k];
        su_run r = su_fasim(g_fasim, c->args);
        int ok = r.code == c->code;
        for (int s = 0; s < 3 && c->says[s]; s++)
            ok &= strstr(r.err, c->says[s]) != NULL;
        ok &= su_count_lines(r.out) == 0;           /* nothing ran */
        if (!ok)
            fprintf(stderr, "%s: fasim %s: exit %d (want %d)\nstderr: %s\nstdout: %.300s\n",
                    c->what, c->args, r.code, c->code, r.err, r.out);
        su_free(&r);
        assert_true(ok);

        char help[256];
        snprintf(help, sizeof help, "%s", c->help);
        if (strcmp(c->help, "--help") != 0 && !strstr(c->help, "--help"))
            snprintf(help, sizeof help, "%s --help", c->help);
        r = su_fasim(g_fasim, help);
        if (r.code != 0 || !strstr(r.out, c->help_says))
            fprintf(stderr, "%s: 'fasim %s' does not state '%s'\n", c->what, help,
                    c->help_says);
        assert_int_equal(r.code, 0);
        assert_non_null(strstr(r.out, c->help_says));
        su_free(&r);
    }
}

/* A list option past LESSON_MAX_VECTOR entries (the argument is too long
 * for the table's space-separated strings). */
static void test_lesson_list(void **state)
{
    (void)state;
    size_t n = 4097;
    char *x = malloc(2 * n);
    assert_non_null(x);
    for (size_t k = 0; k < n; k++) {
        x[2 * k] = '1';
        x[2 * k + 1] = k + 1 < n ? ',' : '\0';
    }
    char *argv[] = { (char *)g_fasim, "lesson", "online-softmax", "--script", "--x", x, NULL };
    su_run r = su_exec_env(argv, NULL, NULL);
    assert_int_equal(r.code, 2);
    assert_non_null(strstr(r.err, "4097 entries; at most 4096"));
    su_free(&r);
    free(x);
}

/* A claims file past 1 MiB is not read at all (exit 1: a file problem). */
static void test_claims_file(void **state)
{
    (void)state;
    char path[512];
    tu_path(path, sizeof path, "big.claims");
    size_t len = (1u << 20) + 1;
    char *text = malloc(len);
    assert_non_null(text);
    memset(text, '#', len);
    for (size_t k = 79; k < len; k += 80)
        text[k] = '\n';
    assert_int_equal(tu_write_file(path, text, len), 0);
    free(text);
    char *argv[] = { (char *)g_fasim, "claims", path, NULL };
    su_run r = su_exec_env(argv, NULL, NULL);
    assert_int_equal(r.code, 1);
    assert_non_null(strstr(r.err, "larger than 1048576 bytes"));
    su_free(&r);
    r = su_fasim(g_fasim, "claims --help");
    assert_non_null(strstr(r.out, "at most 1 MiB"));
    su_free(&r);
}

/* A claims file's total work: the tile steps all its claims would simulate
 * are bounded as one run's are, and refused before the first claim runs
 * (today's 2^29-step claims at about a second each, a 1 MiB file would take
 * hours; the alarm of su_exec_env ends a run that starts them). */
static void test_claims_work(void **state)
{
    (void)state;
    static const struct {
        const char *lines;         /* one claim, repeated */
        int repeat;
        const char *opts;          /* before the file; NULL: none */
        int code;
        const char *says[3];
    } CLAIMS[] = {
        { "fa2 steps > 1 at N=1M", 40, NULL, 2,
          { "1.4e+10 tile steps in all", "over the limit of 8589934592", "--max-steps" } },
        { "fa2 steps > 1 at N=1M", 40, "--engine", 0, { "" } },   /* closed-form: no work */
        { "fa2/naive hbm_bytes < 1 at N=64K", 1, "--max-steps", 2,
          { "over the limit of 1000", "--engine closed-form" } },
        { "fa2 steps > 1 at N=8M", 1, "--engine", 2, { "tile steps in all", "--max-steps" } },
        { "S size > 1", 257, NULL, 2, { ":257: more than 256 claims" } },
    };
    for (size_t k = 0; k < sizeof CLAIMS / sizeof CLAIMS[0]; k++) {
        char path[512];
        tu_path(path, sizeof path, "work.claims");
        size_t ll = strlen(CLAIMS[k].lines), len = (ll + 1) * (size_t)CLAIMS[k].repeat;
        char *text = malloc(len);
        assert_non_null(text);
        for (int r = 0; r < CLAIMS[k].repeat; r++) {
            memcpy(text + (size_t)r * (ll + 1), CLAIMS[k].lines, ll);
            text[(size_t)r * (ll + 1) + ll] = '\n';
        }
        assert_int_equal(tu_write_file(path, text, len), 0);
        free(text);
        /* "--engine" is followed by closed-form when the case expects the
         * work to be done, by sim otherwise; "--max-steps" by 1000. */
        const char *o = CLAIMS[k].opts;
        const char *v = !o ? NULL : !strcmp(o, "--max-steps") ? "1000"
                        : CLAIMS[k].code == 0 ? "closed-form" : "sim";
        char *argv[] = { (char *)g_fasim, "claims", (char *)(o ? o : path),
                         (char *)(o ? v : NULL), o ? path : NULL, NULL };
        su_run r = su_exec_env(argv, NULL, NULL);
        int ok = r.code == CLAIMS[k].code;
        for (int s = 0; s < 3 && CLAIMS[k].says[s]; s++)
            ok &= strstr(r.err, CLAIMS[k].says[s]) != NULL;
        if (CLAIMS[k].code != 0)
            ok &= su_count_lines(r.out) == 0;
        if (!ok)
            fprintf(stderr, "claims case %zu: exit %d (want %d)\nstderr: %s\n", k, r.code,
                    CLAIMS[k].code, r.err);
        su_free(&r);
        assert_true(ok);
    }
    su_run r = su_fasim(g_fasim, "claims --help");
    assert_non_null(strstr(r.out, "--max-steps N"));
    assert_non_null(strstr(r.out, "256 claims"));
    su_free(&r);
    r = su_fasim(g_fasim, "claims --max-steps 10");        /* the built-ins take none */
    assert_int_equal(r.code, 2);
    assert_non_null(strstr(r.err, "--max-steps bounds the claims of a FILE"));
    su_free(&r);
}

#define NPY_HEADER_MAX 256

/* An .npy version 1.0 header for dict (shorter than NPY_HEADER_MAX - 16
 * characters) into hdr, padded to 64 bytes as numpy writes it. Returns its
 * length. */
static size_t npy_header(char *hdr, const char *dict)
{
    size_t hl = strlen(dict), pad = (64 - (10 + hl + 1) % 64) % 64;
    memcpy(hdr, "\x93NUMPY\x01\x00", 8);
    hdr[8] = (char)((hl + pad + 1) & 0xff);
    hdr[9] = (char)((hl + pad + 1) >> 8);
    memcpy(hdr + 10, dict, hl);
    memset(hdr + 10 + hl, ' ', pad);
    hdr[10 + hl + pad] = '\n';
    return 10 + hl + pad + 1;
}

/* Inputs from .npy compute without --compute: past the compute bound they
 * are refused with the estimate and the option that forces them (today a
 * (2^20, 1) input starts an hour of work; the alarm ends it). */
static void test_npy_compute(void **state)
{
    (void)state;
    char path[512];
    tu_path(path, sizeof path, "long.npy");
    size_t n = (size_t)1 << 20;
    char *file = calloc(1, NPY_HEADER_MAX + 4 * n);       /* (2^20, 1) zeros */
    assert_non_null(file);
    size_t hlen = npy_header(file, "{'descr': '<f4', 'fortran_order': False, 'shape': "
                                   "(1048576, 1), }");
    assert_int_equal(tu_write_file(path, file, hlen + 4 * n), 0);
    free(file);
    char *argv[] = { (char *)g_fasim, "--q", path, "--k", path, "--v", path, "--algo", "fa2",
                     NULL };
    su_run r = su_exec_env(argv, NULL, NULL);
    if (r.code != 2)
        fprintf(stderr, "npy compute: exit %d\nstderr: %s\n", r.code, r.err);
    assert_int_equal(r.code, 2);
    assert_non_null(strstr(r.err, "4.4e+12 flops"));
    assert_non_null(strstr(r.err, "over the limit of 7.2e+10"));
    assert_non_null(strstr(r.err, "--compute forces it"));
    assert_int_equal(su_count_lines(r.out), 0);
    su_free(&r);
    r = su_fasim(g_fasim, "--help");
    assert_non_null(strstr(r.out, "past 7.2e10 flops"));
    su_free(&r);
}

/* An .npy header that claims 2^40 x 2^30 elements is refused from the
 * header and the file size, before any allocation (run under ASan, a huge
 * allocation would fail the suite). */
static void test_npy_claimed_shape(void **state)
{
    (void)state;
    char path[512];
    tu_path(path, sizeof path, "huge.npy");
    char hdr[NPY_HEADER_MAX];
    size_t hlen = npy_header(hdr, "{'descr': '<f4', 'fortran_order': False, 'shape': "
                                  "(1099511627776, 1073741824), }");
    assert_int_equal(tu_write_file(path, hdr, hlen), 0);
    char *argv[] = { (char *)g_fasim, "--q", path, "--k", path, "--v", path, NULL };
    su_run r = su_exec_env(argv, NULL, NULL);
    assert_int_not_equal(r.code, 0);
    assert_true(r.code == 1 || r.code == 2);
    assert_non_null(strstr(r.err, "huge.npy"));
    su_free(&r);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_limits FASIM\n");
        return 2;
    }
    g_fasim = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_limit),
        cmocka_unit_test(test_lesson_list),
        cmocka_unit_test(test_claims_file),
        cmocka_unit_test(test_claims_work),
        cmocka_unit_test(test_npy_compute),
        cmocka_unit_test(test_npy_claimed_shape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
