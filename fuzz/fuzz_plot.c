/*
 * fuzz_plot.c — a --plot file name on its way into the gnuplot script
 * (sim_plot_write, study/sim_plot.c).
 *
 * The input is a file name (a '/' becomes '_', so that it names a file in
 * one folder; ".svg" is appended). Properties:
 *   - a name with a control character is refused with a one-line message,
 *     and neither the data nor the script is written;
 *   - otherwise the script's `set output` line and every `plot` line that
 *     names the data hold exactly one gnuplot string expression each, and
 *     decoding it by gnuplot's rules (written out here, independently of
 *     the quoting code) gives the name back: the name itself, or "./" and
 *     the name when it starts with '<' or '|' (gnuplot's pipes) or '$' (a
 *     datablock's name). Nothing
 *     of the name is left outside a string, so nothing of it runs.
 * gnuplot itself is not started (tests/test_sweep.c runs it on hostile
 * names); one small sweep is computed once and drawn for every input.
 */
#define _POSIX_C_SOURCE 200809L
#include "fuzz_util.h"
#include "sim_plot.h"
#include "sim_sweep.h"

#include <unistd.h>

static sim_sweep_result *g_res;
static char g_dir[64];
static int g_curves;             /* loop orders the sweep ran: one data line each */

static void remove_dir(void)
{
    rmdir(g_dir);
}

static void setup(void)
{
    static sim_sweep_spec sp;
    sp.base = (sim_shape){ .N = 256, .d = 64, .M = 96 * 1024, .dtype = SIM_FP16 };
    for (int a = 0; a < sim_algo_count(); a++) {
        sp.run_algo[a] = sim_algo_in_default((sim_algo)a);  /* what 'fasim sweep' runs */
        g_curves += sp.run_algo[a];
    }
    sp.plan_kind = SIM_PLAN_AUTO;
    sp.engine = SIM_ENGINE_CLOSED;
    char err[2048];
    if (sim_axis_range(&sp.axes[sp.naxes++], SIM_PARAM_N, 256, 1024, SIM_STEP_MUL, 2, err,
                       sizeof err) != 0)
        abort();
    g_res = calloc(1, sizeof *g_res);
    if (!g_res || sim_sweep_run(&sp, g_res, err, sizeof err) != SIM_OK)
        abort();
    snprintf(g_dir, sizeof g_dir, "/tmp/fasim-fuzz-plot-XXXXXX");
    if (!mkdtemp(g_dir))
        abort();
    atexit(remove_dir);
}

/* Decode one gnuplot string expression at *p: quoted pieces joined by '.'.
 * Single quotes hold their bytes as they are, '' standing for one quote;
 * double quotes take backslash escapes (only \\ and \" can occur in a name's
 * pieces, and a piece of the form the writer uses holds quotes only).
 * Returns the decoded length, or -1 if *p is not such an expression. */
static long decode(const char **p, char *out, size_t len)
{
    const char *s = *p;
    size_t o = 0;
    for (;;) {
        const char q = *s;
        if (q != '\'' && q != '"')
            return -1;
        s++;
        for (;;) {
            if (!*s || *s == '\n')
                return -1;
            if (*s == q) {
                if (q == '\'' && s[1] == '\'') {     /* '' inside single quotes */
                    if (o + 1 >= len)
                        return -1;
                    out[o++] = '\'';
                    s += 2;
                    continue;
                }
                s++;
                break;
            }
            if (q == '"' && *s == '\\' && s[1])
                s++;
            if (o + 1 >= len)
                return -1;
            out[o++] = *s++;
        }
        if (*s != '.')
            break;
        s++;
    }
    out[o] = '\0';
    *p = s;
    return (long)o;
}

/* The name as the script must give it back. */
static void expected(const char *name, char *out, size_t len)
{
    snprintf(out, len, "%s%s", (name[0] == '<' || name[0] == '|' || name[0] == '$') ? "./" : "", name);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    FUZZ_CHECK(f != NULL, "%s not written", path);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!g_res)
        setup();
    if (size > 200)
        size = 200;
    char name[256];
    size_t n = 0;
    for (size_t k = 0; k < size && data[k]; k++)
        name[n++] = data[k] == '/' ? '_' : (char)data[k];
    memcpy(name + n, ".svg", 5);
    int control = 0;
    for (size_t k = 0; k < n; k++)
        control |= (unsigned char)name[k] < 0x20 || (unsigned char)name[k] == 0x7f;

    char image[512], dat[600], gp[600], err[512];
    snprintf(image, sizeof image, "%s/%s", g_dir, name);
    err[0] = '\0';
    int rc = sim_plot_write(g_res, image, dat, sizeof dat, gp, sizeof gp, err, sizeof err);
    if (control) {
        FUZZ_CHECK(rc != 0, "a name with a control character was written: %s", name);
        fuzz_check_message(err, 1, name);
        FUZZ_CHECK(access(dat, F_OK) != 0 && access(gp, F_OK) != 0, "files left for %s",
                   name);
        return 0;
    }
    FUZZ_CHECK(rc == 0, "refused %s: %s", name, err);
    const char *script = slurp(gp);
    char want[600], got[600];

    /* set output <the image> */
    const char *at = strstr(script, "\nset output ");
    FUZZ_CHECK(at != NULL, "no set output line for %s", name);
    at += strlen("\nset output ");
    FUZZ_CHECK(decode(&at, got, sizeof got) >= 0, "set output is no string for %s", name);
    FUZZ_CHECK(*at == '\n', "set output has more than a string for %s", name);
    expected(name, want, sizeof want);
    FUZZ_CHECK(!strcmp(got, want), "set output gives '%s' for '%s'", got, want);

    /* every data line of the plot: "  <the data> using ..." */
    const char *datname = strrchr(dat, '/') + 1;
    expected(datname, want, sizeof want);
    int lines = 0;
    for (const char *l = strstr(script, "\nplot \\\n"); l && (l = strchr(l + 1, '\n'));) {
        const char *s = l + 1;
        if (strncmp(s, "  ", 2) != 0)
            continue;
        s += 2;
        if (*s != '\'' && *s != '"')
            continue;                                /* a guide: g0(x) with lines ... */
        FUZZ_CHECK(decode(&s, got, sizeof got) >= 0, "a plot line's file for %s", name);
        FUZZ_CHECK(!strncmp(s, " using ", 7), "a plot line goes on with '%.20s'", s);
        FUZZ_CHECK(!strcmp(got, want), "plot reads '%s' for '%s'", got, want);
        lines++;
    }
    FUZZ_CHECK(lines == g_curves + 1, "%d data lines for %s", lines, name); /* + the bound */
    unlink(dat);
    unlink(gp);
    return 0;
}
