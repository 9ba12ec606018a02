/*
 * cli_inputs.c — see cli_inputs.h.
 */
#include "cli_inputs.h"

#include "cli_args.h"
#include "sim_bmask.h"
#include "sim_limits.h"
#include "sim_outfile.h"
#include "sim_report.h"
#include "sim_parse.h"
#include "sim_status.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERR(...) snprintf(err, errlen, __VA_ARGS__)

/* "(N, d)" or "(B, H, N, d)": an array's shape as the file held it. */
static const char *shape_text(const sim_npy_matrix *m, char *buf, size_t len)
{
    if (m->rank == 4)
        snprintf(buf, len, "(%lld, %lld, %lld, %lld)", (long long)m->batch,
                 (long long)m->heads, (long long)m->rows, (long long)m->cols);
    else
        snprintf(buf, len, "(%lld, %lld)", (long long)m->rows, (long long)m->cols);
    return buf;
}

static int same_shape(const sim_npy_matrix *a, const sim_npy_matrix *b)
{
    return a->rank == b->rank && a->batch == b->batch && a->heads == b->heads &&
           a->rows == b->rows && a->cols == b->cols;
}

/* Read the files, each bounded by max_elems before it is read. */
static int read_files(const cli_inputs_spec *spec, sim_npy_matrix m[4], int nfiles,
                      char *err, size_t errlen)
{
    const char *paths[4] = { spec->q_path, spec->k_path, spec->v_path, spec->do_path };
    const char *names[4] = { "--q", "--k", "--v", "--dO" };
    char why[512];
    for (int k = 0; k < nfiles; k++) {
        if (sim_npy_read(paths[k], spec->max_elems, &m[k], why, sizeof why) != 0) {
            /* sim_npy names its bound by its own name; say what sets it. */
            char *bound = strstr(why, " (max_elems)");
            if (bound && spec->max_mem) {
                char mb[32];
                sim_format_bytes(mb, sizeof mb, spec->max_mem);
                snprintf(bound, sizeof why - (size_t)(bound - why),
                         " elements per file (set by --max-mem %s; raise it)", mb);
            } else if (bound) {
                snprintf(bound, sizeof why - (size_t)(bound - why),
                         " elements per file (fixed)");
            }
            ERR("%s %s", names[k], why);
            return SIM_EFAIL;
        }
        if (spec->one_head && m[k].rank != 2) {
            char s[96];
            ERR("%s has shape %s; %s: give (N, d) arrays (the report takes (B, H, N, d))",
                paths[k], shape_text(&m[k], s, sizeof s), spec->one_head);
            return SIM_EUSAGE;
        }
    }
    return SIM_OK;
}

/* Q, K, V and dO agree with each other. */
static int check_files(const cli_inputs_spec *spec, const sim_npy_matrix m[4], int nfiles,
                       char *err, size_t errlen)
{
    const sim_npy_matrix *q = &m[0], *k = &m[1], *v = &m[2];
    char s0[96], s1[96], s2[96];
    if (!same_shape(k, v) || k->cols != q->cols || k->rank != q->rank ||
        k->batch != q->batch || (spec->same_length && k->rows != q->rows)) {
        const char *want =
            spec->same_length ? "Q, K and V must all be (N, d)"
            : spec->one_head  ? "Q must be (N, d), K and V both (N_k, d)"
                              : "Q must be (N_q, d) or (B, H, N_q, d), and K, V both (N_k, d) "
                                "or (B, G, N_k, d)";
        ERR("shapes differ: Q %s is %s, K %s is %s, V %s is %s; %s", spec->q_path,
            shape_text(q, s0, sizeof s0), spec->k_path, shape_text(k, s1, sizeof s1),
            spec->v_path, shape_text(v, s2, sizeof s2), want);
        return SIM_EFAIL;
    }
    if (nfiles == 4 && !same_shape(&m[3], q)) {
        ERR("--dO %s is %s; it must have Q's shape %s", spec->do_path,
            shape_text(&m[3], s0, sizeof s0), shape_text(q, s1, sizeof s1));
        return SIM_EFAIL;
    }
    return SIM_OK;
}

static int load_files(const cli_inputs_spec *spec, sim_shape *sh, const sim_run_opts *run,
                      sim_npy_matrix m[4], char *err, size_t errlen);

int cli_inputs_load(const cli_inputs_spec *spec, sim_shape *sh, const sim_run_opts *run,
                    sim_npy_matrix m[4], char *err, size_t errlen)
{
    int rc = load_files(spec, sh, run, m, err, errlen);
    /* The message names the files, whose names may hold any byte: shown
     * escaped, on one line. */
    if (rc != SIM_OK && errlen)
        snprintf(err, errlen, "%s", sim_shown(err).s);
    return rc;
}

static int load_files(const cli_inputs_spec *spec, sim_shape *sh, const sim_run_opts *run,
                      sim_npy_matrix m[4], char *err, size_t errlen)
{
    const int nfiles = spec->do_path ? 4 : 3;
    int rc = read_files(spec, m, nfiles, err, errlen);
    if (rc == SIM_OK)
        rc = check_files(spec, m, nfiles, err, errlen);
    if (rc != SIM_OK)
        return rc;
    const sim_npy_matrix *q = &m[0], *k = &m[1];
    char s0[96], s1[96];
    if ((spec->N_set && sh->N != q->rows) || (spec->Nk_set && sim_shape_Nk(sh) != k->rows) ||
        (spec->d_set && sh->d != q->cols) || (sh->batch && sh->batch != q->batch) ||
        (sh->heads && sh->heads != q->heads) || (sh->kv_heads && sh->kv_heads != k->heads)) {
        ERR("--N/--Nq/--Nk/--d/--batch/--heads/--kv-heads disagree with the files' shapes: "
            "Q %s, K and V %s; drop them when giving .npy inputs",
            shape_text(q, s0, sizeof s0), shape_text(k, s1, sizeof s1));
        return SIM_EUSAGE;
    }
    if (q->cols > SIM_MAX_D || q->batch > SIM_MAX_HEADS || q->heads > SIM_MAX_HEADS) {
        ERR("%s: shape %s is over the supported d <= %lld, B, H <= %lld", spec->q_path,
            shape_text(q, s0, sizeof s0), (long long)SIM_MAX_D, (long long)SIM_MAX_HEADS);
        return SIM_EFAIL;
    }
    sh->N = q->rows;
    sh->Nk = k->rows == q->rows ? 0 : k->rows;
    sh->d = q->cols;
    sh->batch = q->batch;
    sh->heads = q->heads;
    sh->kv_heads = q->rank == 4 ? k->heads : 0;
    char why[256];
    if (sim_check(sh, run, why, sizeof why) != 0) {
        ERR("the files' shapes: %s", why);
        return SIM_EUSAGE;
    }
    return SIM_OK;
}

int cli_out_writable(const char *path)
{
    /* Nothing is created: the file appears, whole, only when written. */
    int e = sim_outfile_check(path);
    if (e) {
        fprintf(stderr, "fasim: --out %s: cannot open for writing: %s\n", sim_shown(path).s,
                strerror(e));
        return SIM_EFAIL;
    }
    return SIM_OK;
}

int cli_out_write(const char *path, const float *O, const sim_shape *sh, int q_rank)
{
    char err[1024];
    int wrc = sh->batch > 1 || sh->heads > 1 || q_rank == 4
                  ? sim_npy_write_f32_4d(path, O, sim_shape_B(sh), sim_shape_H(sh), sh->N,
                                         sh->d, err, sizeof err)
                  : sim_npy_write_f32(path, O, sh->N, sh->d, err, sizeof err);
    if (wrc != 0) {
        fprintf(stderr, "fasim: --out %s\n", sim_shown(err).s);
        return SIM_EFAIL;
    }
    return SIM_OK;
}

void cli_inputs_free(sim_npy_matrix m[4])
{
    for (int k = 0; k < 4; k++) {
        free(m[k].data);
        m[k].data = NULL;
    }
}

int cli_inputs_load_report(struct cli_report_opts *o, const char *one_head, int same_length,
                           sim_npy_matrix m[4], char *err, size_t errlen)
{
    /* Each file is bounded by the compute-memory limit before it is read. */
    const uint64_t max_mem = o->req.max_mem ? o->req.max_mem : SIM_DEFAULT_MAX_MEM;
    const cli_inputs_spec spec = {
        .q_path = o->q_path, .k_path = o->k_path, .v_path = o->v_path,
        .do_path = same_length ? NULL : o->do_path,
        .max_elems = (int64_t)(max_mem / 4 / 4), .max_mem = max_mem,
        .one_head = one_head, .same_length = same_length,
        .N_set = o->N_set, .Nk_set = o->Nk_set, .d_set = o->d_set,
    };
    int rc = cli_inputs_load(&spec, &o->req.sh, &o->req.run, m, err, errlen);
    if (rc != SIM_OK)
        return rc;
    o->req.Q = m[0].data;
    o->req.K = m[1].data;
    o->req.V = m[2].data;
    o->req.dO = m[3].data;
    return SIM_OK;
}

char *cli_read_text(const char *path, const char *cmd, size_t max, const char *typical)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) {
        fprintf(stderr, "fasim: %s %s: cannot open: %s\n", cmd, sim_shown(path).s,
                strerror(errno));
        return NULL;
    }
    char *buf = malloc(max + 1);
    size_t n = buf ? fread(buf, 1, max + 1, f) : 0;
    const int bad = !buf || ferror(f);
    if (f != stdin)
        fclose(f);
    if (bad)
        fprintf(stderr, "fasim: %s %s: cannot read\n", cmd, sim_shown(path).s);
    else if (n > max)
        fprintf(stderr, "fasim: %s %s: larger than %zu bytes; %s\n", cmd, sim_shown(path).s,
                max, typical);
    else if (memchr(buf, '\0', n))
        fprintf(stderr, "fasim: %s %s: not a text file (contains NUL bytes)\n", cmd,
                sim_shown(path).s);
    else {
        buf[n] = '\0';
        return buf;
    }
    free(buf);
    return NULL;
}

/* ---- --block-mask ------------------------------------------------------- */

/* The one mask of this process and its bits (cli_block_mask_load). */
static sim_block_mask block_mask;
static unsigned char *block_bits;

/* A text mask: rows of 0 and 1 separated by spaces (blank lines skipped),
 * every row as long as the first. Into *bits (R x C). */
static int read_text_mask(const char *path, unsigned char **bits, int64_t *R, int64_t *C,
                          char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "--block-mask %s: cannot read it (%s)", sim_shown(path).s,
                 strerror(errno));
        return SIM_EFAIL;
    }
    int64_t rows = 0, cols = 0, n = 0, cap = 0, in_row = 0;
    unsigned char *m = NULL;
    int rc = SIM_OK, c;
    while (rc == SIM_OK && (c = fgetc(f)) != EOF) {
        if (c == '0' || c == '1') {
            int next = fgetc(f);
            if (next != EOF && next != ' ' && next != '\t' && next != '\n' && next != '\r') {
                snprintf(err, errlen, "--block-mask %s: row %lld: the values must be 0 or 1, "
                         "separated by spaces", sim_shown(path).s, (long long)rows + 1);
                rc = SIM_EUSAGE;
                break;
            }
            if (next != EOF)
                ungetc(next, f);
            if ((uint64_t)n >= SIM_MAX_BMASK_BLOCKS) {
                snprintf(err, errlen, "--block-mask %s: more than %llu blocks",
                         sim_shown(path).s, (unsigned long long)SIM_MAX_BMASK_BLOCKS);
                rc = SIM_EUSAGE;
                break;
            }
            if (n == cap) {
                cap = cap ? 2 * cap : 256;
                unsigned char *t = realloc(m, (size_t)cap);
                if (!t) {
                    snprintf(err, errlen, "--block-mask: out of memory");
                    rc = SIM_EFAIL;
                    break;
                }
                m = t;
            }
            m[n++] = (unsigned char)(c - '0');
            in_row++;
        } else if (c == '\n') {
            if (in_row && rows > 0 && in_row != cols) {
                snprintf(err, errlen, "--block-mask %s: row %lld has %lld values, row 1 %lld",
                         sim_shown(path).s, (long long)rows + 1, (long long)in_row,
                         (long long)cols);
                rc = SIM_EUSAGE;
            }
            if (in_row && rows == 0)
                cols = in_row;
            rows += in_row ? 1 : 0;
            in_row = 0;
        } else if (c != ' ' && c != '\t' && c != '\r') {
            snprintf(err, errlen, "--block-mask %s: row %lld: the values must be 0 or 1, "
                     "separated by spaces", sim_shown(path).s, (long long)rows + 1);
            rc = SIM_EUSAGE;
        }
    }
    if (rc == SIM_OK && in_row) {                  /* a last row without a newline */
        if (rows > 0 && in_row != cols) {
            snprintf(err, errlen, "--block-mask %s: row %lld has %lld values, row 1 %lld",
                     sim_shown(path).s, (long long)rows + 1, (long long)in_row,
                     (long long)cols);
            rc = SIM_EUSAGE;
        }
        if (rows == 0)
            cols = in_row;
        rows++;
    }
    fclose(f);
    if (rc == SIM_OK && rows == 0) {
        snprintf(err, errlen, "--block-mask %s: the file is empty (rows of 0 and 1 expected)",
                 sim_shown(path).s);
        rc = SIM_EUSAGE;
    }
    if (rc != SIM_OK) {
        free(m);
        return rc;
    }
    *bits = m;
    *R = rows;
    *C = cols;
    return SIM_OK;
}

/* A 2-D .npy mask of 0.0 and 1.0. */
static int read_npy_mask(const char *path, unsigned char **bits, int64_t *R, int64_t *C,
                         char *err, size_t errlen)
{
    sim_npy_matrix a;
    char why[512];
    if (sim_npy_read(path, (int64_t)SIM_MAX_BMASK_BLOCKS, &a, why, sizeof why) != 0) {
        snprintf(err, errlen, "--block-mask: %s", why);
        return SIM_EUSAGE;
    }
    if (a.rank != 2) {
        free(a.data);
        snprintf(err, errlen, "--block-mask %s: a 2-D array of R x C blocks is needed",
                 sim_shown(path).s);
        return SIM_EUSAGE;
    }
    const int64_t n = a.rows * a.cols;
    unsigned char *m = malloc((size_t)n);
    if (!m) {
        free(a.data);
        snprintf(err, errlen, "--block-mask: out of memory");
        return SIM_EFAIL;
    }
    for (int64_t x = 0; x < n; x++) {
        if (a.data[x] != 0.0f && a.data[x] != 1.0f) {
            snprintf(err, errlen, "--block-mask %s: value %g at block (%lld, %lld): the "
                     "values must be 0 or 1", sim_shown(path).s, (double)a.data[x],
                     (long long)(x / a.cols), (long long)(x % a.cols));
            free(m);
            free(a.data);
            return SIM_EUSAGE;
        }
        m[x] = (unsigned char)(a.data[x] != 0.0f);
    }
    *bits = m;
    *R = a.rows;
    *C = a.cols;
    free(a.data);
    return SIM_OK;
}

int cli_block_mask_make(const char *spec, sim_shape *sh, int64_t Br, int64_t Bc, int64_t tile,
                        uint64_t seed, char *err, size_t errlen)
{
    const int64_t Nk = sim_shape_Nk(sh);
    free(block_bits);
    block_bits = NULL;
    const size_t len = strlen(spec);
    const int npy = len > 4 && !strcmp(spec + len - 4, ".npy");
    const int txt = !npy && (strchr(spec, ':') == NULL || (len > 4 && !strcmp(spec + len - 4,
                                                                               ".txt")));
    int rc;
    if (npy || txt) {
        int64_t R = 0, C = 0;
        rc = npy ? read_npy_mask(spec, &block_bits, &R, &C, err, errlen)
                 : read_text_mask(spec, &block_bits, &R, &C, err, errlen);
        if (rc != SIM_OK)
            return rc;
        memset(&block_mask, 0, sizeof block_mask);
        if (sim_bmask_grid(&block_mask, R, C, sh->N, Nk, err, errlen) != 0)
            return SIM_EUSAGE;
        block_mask.m.bits = block_bits;
        for (int64_t x = 0; x < R * C; x++)
            block_mask.nonzero += block_bits[x];
        /* the file's last name, cut to fit: the report's line says what it was */
        const char *base = strrchr(spec, '/') ? strrchr(spec, '/') + 1 : spec;
        snprintf(block_mask.pattern, sizeof block_mask.pattern, "file %.58s", base);
    } else {
        /* The common plan tile: --Br x --Bc, or the square tile. */
        Br = Br ? Br : Bc ? Bc : tile;
        Bc = Bc ? Bc : Br;
        if (Br != Bc) {
            /* |i - j| on blocks of unequal sides is no band along the
             * scores' diagonal */
            snprintf(err, errlen, "--block-mask %s: the patterns are built on square blocks, "
                     "and --Br %lld x --Bc %lld is not; give --Br = --Bc, or a mask file",
                     sim_shown(spec).s, (long long)Br, (long long)Bc);
            return SIM_EUSAGE;
        }
        if (Br < 1) {
            snprintf(err, errlen, "--block-mask %s: no common plan tile fits M for the "
                     "patterns' blocks; give --Br and --Bc", sim_shown(spec).s);
            return SIM_EUSAGE;
        }
        const int64_t br = Br < sh->N ? Br : sh->N, bc = Bc < Nk ? Bc : Nk;
        if (sim_bmask_pattern(spec, (sh->N + br - 1) / br, (Nk + bc - 1) / bc, br, bc, seed,
                              &block_mask, &block_bits, err, errlen) != 0)
            return SIM_EUSAGE;
    }
    sh->blocks = &block_mask;
    char why[512];
    if (sim_bmask_check(sh, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s", why);
        sh->blocks = NULL;
        return SIM_EUSAGE;
    }
    return SIM_OK;
}

int cli_block_mask_load(cli_report_opts *o, char *err, size_t errlen)
{
    sim_request *r = &o->req;
    sim_request same = *r;
    same.plan_kind = SIM_PLAN_SAME;
    return cli_block_mask_make(o->block_mask, &r->sh, r->Br, r->Bc, sim_report_same_tiles(&same),
                               r->seed, err, errlen);
}
