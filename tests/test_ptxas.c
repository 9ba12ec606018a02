/*
 * test_ptxas.c — what ptxas says about the CUDA kernels, against the plan.
 *
 * Compiles kernels/kern_cuda.cu once with nvcc for sm_80 and sm_90 (the
 * build's flags: -fmad=false, -Werror=all-warnings) with -Xptxas -v, reads
 * ptxas's report and checks, for each kernel on each
 * architecture:
 *   - it was compiled (its "Compiling entry function" line is there);
 *   - 0 bytes spill stores and 0 bytes spill loads;
 *   - its static shared memory (ptxas's "smem" figure; none printed = 0)
 *     plus the dynamic shared memory the driver launches it with
 *     (kern_schedule_make) is the plan's bytes of the kernel's phase, and the
 *     largest launch of a loop order is the plan's sram_peak (sim_plan_make),
 *     for a few configurations per loop order, and FA1's and FA2's backward.
 * Registers per kernel are printed, not checked.
 *
 * argv: nvcc, the kernels/, reference/ and sim/ source directories. Without
 * arguments (a build without CUDA) or without a runnable nvcc it exits 77.
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
#include <unistd.h>

#include "kern_internal.h"
#include "sim.h"

#define ARCHS 2
static const char *arch_name[ARCHS] = { "sm_80", "sm_90" };

typedef struct {
    int seen;
    long stack, spill_st, spill_ld, regs, smem;
} kinfo;

static kinfo info[ARCHS][KERN_K_COUNT];
static char *report;          /* ptxas's output, all of it */

/* The kernel whose mangled name is in line s: "_Z<len><name>..." (static
 * kernels may also be "_ZL<len><name>"). */
static int kernel_in(const char *s)
{
    for (int k = 0; k < KERN_K_COUNT; k++) {
        char pat[64];
        const char *nm = kern_kernel_name((kern_kernel)k);
        snprintf(pat, sizeof pat, "%zu%s", strlen(nm), nm);
        const char *at = strstr(s, pat);
        if (at && at > s && (at[-1] == 'Z' || at[-1] == 'L'))
            return k;
    }
    return -1;
}

static int arch_in(const char *s)
{
    for (int a = 0; a < ARCHS; a++) {
        char pat[32];
        snprintf(pat, sizeof pat, "'%s'", arch_name[a]);
        if (strstr(s, pat))
            return a;
    }
    return -1;
}

/* Parse the report: "Compiling entry function 'X' for 'sm_NN'" opens a kernel;
 * its "N bytes stack frame, N bytes spill stores, N bytes spill loads" and
 * "Used N registers, ... N bytes smem, ..." lines follow. */
static void parse(char *text)
{
    int a = -1, k = -1;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (strstr(line, "Compiling entry function")) {
            a = arch_in(line);
            k = kernel_in(line);
            if (a >= 0 && k >= 0)
                info[a][k].seen = 1;
            continue;
        }
        if (a < 0 || k < 0)
            continue;
        kinfo *ki = &info[a][k];
        const char *p;
        if ((p = strstr(line, "bytes stack frame")) != NULL) {
            sscanf(line, " %ld bytes stack frame, %ld bytes spill stores, %ld bytes spill loads",
                   &ki->stack, &ki->spill_st, &ki->spill_ld);
        } else if ((p = strstr(line, "Used ")) != NULL) {
            sscanf(p, "Used %ld registers", &ki->regs);
            const char *sm = strstr(line, " bytes smem");
            if (sm) {
                while (sm > line && sm[-1] >= '0' && sm[-1] <= '9')
                    sm--;
                ki->smem = strtol(sm, NULL, 10);
            }
            a = k = -1;      /* the kernel's report is complete */
        }
    }
}

static void test_every_kernel_compiled_without_spills(void **state)
{
    (void)state;
    for (int a = 0; a < ARCHS; a++)
        for (int k = 0; k < KERN_K_COUNT; k++) {
            const kinfo *ki = &info[a][k];
            printf("  %-26s %s: %3ld registers, %ld B stack, spill %ld/%ld B, smem %ld B\n",
                   kern_kernel_name((kern_kernel)k), arch_name[a], ki->regs, ki->stack,
                   ki->spill_st, ki->spill_ld, ki->smem);
            if (!ki->seen)
                fail_msg("ptxas did not report %s for %s", kern_kernel_name((kern_kernel)k),
                         arch_name[a]);
            if (ki->spill_st != 0 || ki->spill_ld != 0)
                fail_msg("%s on %s spills: %ld B stores, %ld B loads",
                         kern_kernel_name((kern_kernel)k), arch_name[a], ki->spill_st,
                         ki->spill_ld);
        }
}

typedef struct {
    sim_algo algo;
    sim_shape sh;
    sim_pass pass;           /* SIM_FWD, or the backward's plan and launches */
} config;

static void test_shared_memory_is_the_plan(void **state)
{
    (void)state;
    const config cs[] = {
        { SIM_NAIVE, { .N = 256, .d = 64, .M = 48 * 1024, .dtype = SIM_FP16, .causal = 0 }, SIM_FWD },    /* one-pass softmax */
        { SIM_NAIVE, { .N = 4096, .d = 64, .M = 16 * 1024, .dtype = SIM_BF16, .causal = 0 }, SIM_FWD },   /* three passes */
        { SIM_FA1, { .N = 256, .d = 64, .M = 48 * 1024, .dtype = SIM_FP16, .causal = 0 }, SIM_FWD },
        { SIM_FA1, { .N = 1024, .d = 128, .M = 96 * 1024, .dtype = SIM_FP32, .causal = 1 }, SIM_FWD },
        { SIM_FA2, { .N = 1024, .d = 64, .M = 96 * 1024, .dtype = SIM_FP16, .causal = 1 }, SIM_FWD },
        { SIM_FA2, { .N = 2048, .d = 128, .M = 160 * 1024, .dtype = SIM_BF16, .causal = 0 }, SIM_FWD },
        { SIM_FA1, { .N = 1024, .d = 64, .M = 96 * 1024, .dtype = SIM_FP16, .causal = 1 }, SIM_BWD },
        { SIM_FA2, { .N = 1024, .d = 64, .M = 96 * 1024, .dtype = SIM_BF16, .causal = 0 }, SIM_BWD },
    };
    int naive_forms = 0;
    for (size_t q = 0; q < sizeof cs / sizeof cs[0]; q++) {
        sim_plan p;
        char err[1024];
        const sim_run_opts run = { .pass = cs[q].pass };
        assert_int_equal(sim_plan_choose(cs[q].algo, &cs[q].sh, &run, SIM_PLAN_AUTO, 0, 0, &p,
                                         err, sizeof err), 0);
        if (cs[q].algo == SIM_NAIVE)
            naive_forms |= p.softmax_passes;
        kern_schedule s;
        assert_int_equal(kern_schedule_make(cs[q].algo, &p, &cs[q].sh, &s, err, sizeof err),
                         0);
        for (int a = 0; a < ARCHS; a++) {
            uint64_t peak = 0;
            for (int k = 0; k < s.n; k++) {
                uint64_t phase = 0;
                for (int b = 0; b < p.nbuf; b++)
                    if (p.buf[b].phase == s.l[k].phase)
                        phase += p.buf[b].bytes;
                const uint64_t total = (uint64_t)info[a][s.l[k].k].smem + s.l[k].smem_bytes;
                printf("  %-5s N=%-5lld d=%-3lld %s %-26s %s: static %ld + dynamic %llu = "
                       "%llu B, plan %llu B (peak %llu B)\n", sim_algo_name(cs[q].algo),
                       (long long)cs[q].sh.N, (long long)cs[q].sh.d,
                       sim_dtype_name(cs[q].sh.dtype), kern_kernel_name(s.l[k].k),
                       arch_name[a], info[a][s.l[k].k].smem,
                       (unsigned long long)s.l[k].smem_bytes, (unsigned long long)total,
                       (unsigned long long)phase, (unsigned long long)p.sram_peak);
                assert_int_equal(total, phase);
                peak = total > peak ? total : peak;
            }
            assert_int_equal(peak, p.sram_peak);
        }
    }
    assert_int_equal(naive_forms, 1 | 3);    /* both softmax forms were checked */
}

/* Run nvcc once; returns its combined output (malloc'd) and exit status. */
static char *run_nvcc(const char *nvcc, const char *kdir, const char *rdir, const char *sdir,
                      const char *tmp, int *status)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "'%s' -c -O2 -DFASIM_HAVE_CUDA=1 -fmad=false -Werror=all-warnings "
             "-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 "
             "-Xptxas -v -I'%s' -I'%s' -I'%s' -o '%s/kern_cuda.o' '%s/kern_cuda.cu' 2>&1",
             nvcc, kdir, rdir, sdir, tmp, kdir);
    FILE *f = popen(cmd, "r");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0;) {
        len += got;
        if (cap - len < 4096) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb)
                free(buf);
            buf = nb;
        }
    }
    *status = pclose(f);
    if (buf)
        buf[len] = '\0';
    return buf;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        printf("skipped: this build has no CUDA compiler (FASIM_WITH_CUDA=OFF or nvcc "
               "not found)\n");
        return 77;
    }
    if (access(argv[1], X_OK) != 0) {
        printf("skipped: %s is not runnable\n", argv[1]);
        return 77;
    }
    char tmp[] = "/tmp/fasim_ptxas_XXXXXX";
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    int status = -1;
    report = run_nvcc(argv[1], argv[2], argv[3], argv[4], tmp, &status);
    char obj[64];
    snprintf(obj, sizeof obj, "%s/kern_cuda.o", tmp);
    remove(obj);
    rmdir(tmp);
    if (!report || status != 0) {
        fprintf(stderr, "nvcc failed (status %d):\n%s\n", status, report ? report : "");
        free(report);
        return 1;
    }
    char *copy = strdup(report);
    parse(copy);
    free(copy);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_kernel_compiled_without_spills),
        cmocka_unit_test(test_shared_memory_is_the_plan),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (rc)
        fprintf(stderr, "ptxas's report:\n%s\n", report);
    free(report);
    return rc;
}
