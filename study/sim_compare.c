/*
 * sim_compare.c — two runs side by side, as rows (sim_compare.h).
 */
#include "sim_compare.h"

#include <stdarg.h>
#include <string.h>

#include "sim_json.h"
#include "sim_report.h"

static const char *const SECTION_NAMES[SIM_CMP_SECTIONS] = {
    "configuration", "plan", "HBM traffic, bytes", "error vs float64",
};

const char *sim_cmp_section_name(sim_cmp_section s)
{
    return (unsigned)s < SIM_CMP_SECTIONS ? SECTION_NAMES[s] : "?";
}

int sim_compare_check(const sim_request *req, char *err, size_t errlen)
{
    int algos = 0, passes = 0;
    for (int a = 0; a < sim_algo_count(); a++)
        algos += req->run_algo[a] != 0;
    for (int q = 0; q < SIM_PASS_COUNT; q++)
        passes += req->run_pass[q] != 0;
    const char *why = NULL;
    char names[160], one[256];
    snprintf(one, sizeof one, "compare takes one loop order a side: give --algo %s "
             "(on one side, or on both)", sim_algo_names(names, sizeof names, " or "));
    if (req->model)
        why = "compare takes the problem options, not --preset (give its N, d, heads "
              "and batch instead)";
    else if (algos != 1)
        why = one;
    else if (passes > 1)
        why = "compare takes one pass a side: --pass fwd or --pass bwd, not both";
    if (!why)
        return 0;
    snprintf(err, errlen, "%s", why);
    return -1;
}

void sim_compare_same_tiles(sim_request *a, sim_request *b)
{
    if (a->plan_kind != SIM_PLAN_SAME || b->plan_kind != SIM_PLAN_SAME)
        return;
    const int64_t ta = sim_report_same_tiles(a), tb = sim_report_same_tiles(b);
    const int64_t t = ta < tb ? ta : tb;      /* -1 when either has none */
    sim_report_use_tiles(a, t);
    sim_report_use_tiles(b, t);
}

/* The run a side is about: its last (split-KV's, when asked, comes after
 * the unsplit one it is measured against). */
static const sim_report_run *side_run(const sim_report *rep)
{
    return &rep->runs[rep->nruns - 1];
}

static sim_cmp_row *add_row(sim_comparison *c, sim_cmp_section s, const char *name)
{
    if (c->nrows == SIM_CMP_MAX_ROWS)
        return NULL;
    sim_cmp_row *r = &c->rows[c->nrows++];
    memset(r, 0, sizeof *r);
    r->section = s;
    snprintf(r->name, sizeof r->name, "%s", name);
    return r;
}

/* A row of text on both sides. */
static void text_row(sim_comparison *c, sim_cmp_section s, const char *name, const char *a,
                     const char *b)
{
    sim_cmp_row *r = add_row(c, s, name);
    if (!r)
        return;
    snprintf(r->a, sizeof r->a, "%s", a);
    snprintf(r->b, sizeof r->b, "%s", b);
    r->differs = strcmp(r->a, r->b) != 0;
}

/* A row of whole counts. */
static void count_row(sim_comparison *c, sim_cmp_section s, const char *name, uint64_t a,
                      uint64_t b)
{
    sim_cmp_row *r = add_row(c, s, name);
    if (!r)
        return;
    sim_format_count(r->a, sizeof r->a, a);
    sim_format_count(r->b, sizeof r->b, b);
    r->is_num = 1;
    r->va = (double)a;
    r->vb = (double)b;
    r->differs = a != b;
}

/* A row of errors: "-" on a side that did not compute. */
static void error_row(sim_comparison *c, const char *name, int has_a, double a, int has_b,
                      double b)
{
    sim_cmp_row *r = add_row(c, SIM_CMP_ERROR, name);
    if (!r)
        return;
    snprintf(r->a, sizeof r->a, has_a ? "%.3e" : "-", a);
    snprintf(r->b, sizeof r->b, has_b ? "%.3e" : "-", b);
    r->is_num = has_a && has_b;
    r->va = a;
    r->vb = b;
    r->differs = strcmp(r->a, r->b) != 0;
}

static void fmt(char *buf, size_t len, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, len, f, ap);
    va_end(ap);
}

static void mask_text(char *buf, size_t len, const sim_shape *sh)
{
    if (sh->window > 0)
        fmt(buf, len, "causal, W = %lld", (long long)sh->window);
    else
        fmt(buf, len, "%s", sh->causal ? "causal" : "none");
}

static void config_rows(sim_comparison *c, const sim_report *A, const sim_report *B)
{
    const sim_report_run *ra = side_run(A), *rb = side_run(B);
    const sim_shape *sa = &A->req.sh, *sb = &B->req.sh;
    char a[32], b[32];
    fmt(a, sizeof a, "%s %s", sim_algo_name(ra->algo), sim_pass_name(ra->pass));
    fmt(b, sizeof b, "%s %s", sim_algo_name(rb->algo), sim_pass_name(rb->pass));
    text_row(c, SIM_CMP_CONFIG, "loop order, pass", a, b);
    count_row(c, SIM_CMP_CONFIG, "N_q", (uint64_t)sa->N, (uint64_t)sb->N);
    count_row(c, SIM_CMP_CONFIG, "N_k", (uint64_t)sim_shape_Nk(sa), (uint64_t)sim_shape_Nk(sb));
    count_row(c, SIM_CMP_CONFIG, "d", (uint64_t)sa->d, (uint64_t)sb->d);
    text_row(c, SIM_CMP_CONFIG, "dtype", sim_dtype_name(sa->dtype), sim_dtype_name(sb->dtype));
    count_row(c, SIM_CMP_CONFIG, "M, bytes", sa->M, sb->M);
    mask_text(a, sizeof a, sa);
    mask_text(b, sizeof b, sb);
    text_row(c, SIM_CMP_CONFIG, "mask", a, b);
    fmt(a, sizeof a, "%lld x %lld / %lld", (long long)sim_shape_B(sa), (long long)sim_shape_H(sa),
        (long long)sim_shape_G(sa));
    fmt(b, sizeof b, "%lld x %lld / %lld", (long long)sim_shape_B(sb), (long long)sim_shape_H(sb),
        (long long)sim_shape_G(sb));
    text_row(c, SIM_CMP_CONFIG, "B x H / G heads", a, b);
    /* The run options each side's plan was made for (split-KV's run is S's). */
    const sim_run_opts *ua = &ra->res.plan.run, *ub = &rb->res.plan.run;
    count_row(c, SIM_CMP_CONFIG, "splits S", (uint64_t)sim_run_S(ua), (uint64_t)sim_run_S(ub));
    count_row(c, SIM_CMP_CONFIG, "page size (0: none)", (uint64_t)ua->page, (uint64_t)ub->page);
    /* a framework's own options, where a side runs one (unfused) */
    if ((sim_algo_loop(ra->algo)->flags | sim_algo_loop(rb->algo)->flags) & SIM_LOOP_FRAMEWORK) {
        fmt(a, sizeof a, "%g", ua->dropout);
        fmt(b, sizeof b, "%g", ub->dropout);
        text_row(c, SIM_CMP_CONFIG, "dropout p", a, b);
        text_row(c, SIM_CMP_CONFIG, "unfused operations",
                 sim_uf_ops_name((sim_uf_ops)ua->unfused_ops),
                 sim_uf_ops_name((sim_uf_ops)ub->unfused_ops));
    }
    text_row(c, SIM_CMP_CONFIG, "mode", A->computed ? "compute" : "count-only",
             B->computed ? "compute" : "count-only");
}

static void plan_rows(sim_comparison *c, const sim_report *A, const sim_report *B)
{
    const sim_plan *pa = &side_run(A)->res.plan, *pb = &side_run(B)->res.plan;
    char a[32], b[32];
    fmt(a, sizeof a, "%lld x %lld", (long long)pa->Br, (long long)pa->Bc);
    fmt(b, sizeof b, "%lld x %lld", (long long)pb->Br, (long long)pb->Bc);
    text_row(c, SIM_CMP_PLAN, "B_r x B_c", a, b);
    fmt(a, sizeof a, "%lld x %lld", (long long)pa->Tr, (long long)pa->Tc);
    fmt(b, sizeof b, "%lld x %lld", (long long)pb->Tr, (long long)pb->Tc);
    text_row(c, SIM_CMP_PLAN, "T_r x T_c", a, b);
    count_row(c, SIM_CMP_PLAN, "tile steps", side_run(A)->res.steps, side_run(B)->res.steps);
    count_row(c, SIM_CMP_PLAN, "SRAM peak, bytes", pa->sram_peak, pb->sram_peak);
}

static uint64_t tensor_bytes(const sim_counts *k, int t, sim_dtype dt)
{
    return (k->read_elems[t] + k->write_elems[t]) *
           (uint64_t)sim_tensor_bytes((sim_tensor)t, dt);
}

static void traffic_rows(sim_comparison *c, const sim_report *A, const sim_report *B)
{
    const sim_counts *ka = &side_run(A)->res.counts, *kb = &side_run(B)->res.counts;
    const sim_dtype da = A->req.sh.dtype, db = B->req.sh.dtype;
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        const uint64_t a = tensor_bytes(ka, t, da), b = tensor_bytes(kb, t, db);
        if (a == 0 && b == 0)
            continue;
        char name[40];
        fmt(name, sizeof name, "%s, read + written", sim_tensor_name((sim_tensor)t));
        count_row(c, SIM_CMP_TRAFFIC, name, a, b);
    }
    count_row(c, SIM_CMP_TRAFFIC, "bytes read", sim_counts_read_bytes(ka, da),
              sim_counts_read_bytes(kb, db));
    count_row(c, SIM_CMP_TRAFFIC, "bytes written", sim_counts_write_bytes(ka, da),
              sim_counts_write_bytes(kb, db));
    count_row(c, SIM_CMP_TRAFFIC, "total bytes",
              sim_counts_read_bytes(ka, da) + sim_counts_write_bytes(ka, da),
              sim_counts_read_bytes(kb, db) + sim_counts_write_bytes(kb, db));
}

static void error_rows(sim_comparison *c, const sim_report *A, const sim_report *B)
{
    const sim_report_run *ra = side_run(A), *rb = side_run(B);
    if (!ra->has_error && !rb->has_error)
        return;
    if (ra->pass == SIM_FWD && rb->pass == SIM_FWD) {
        error_row(c, "max |O - O_ref|", ra->has_error, ra->err.max_abs, rb->has_error,
                  rb->err.max_abs);
        error_row(c, "  / max |O_ref|", ra->has_error, ra->err.max_rel, rb->has_error,
                  rb->err.max_rel);
        return;
    }
    static const char *const G[3] = { "max |dQ - dQ_ref|", "max |dK - dK_ref|",
                                      "max |dV - dV_ref|" };
    if (ra->pass == SIM_BWD && rb->pass == SIM_BWD) {
        for (int k = 0; k < 3; k++)
            error_row(c, G[k], ra->has_error, ra->grad_err[k].max_abs, rb->has_error,
                      rb->grad_err[k].max_abs);
        return;
    }
    /* One side forward, one backward: their errors are of different things. */
    text_row(c, SIM_CMP_ERROR, "(of O and of dQ, dK, dV)", "not comparable", "not comparable");
}

void sim_compare(const sim_report *a, const sim_report *b, sim_comparison *c)
{
    memset(c, 0, sizeof *c);
    config_rows(c, a, b);
    plan_rows(c, a, b);
    traffic_rows(c, a, b);
    error_rows(c, a, b);
    for (int k = 0; k < c->nrows; k++)
        c->ndiffer += c->rows[k].differs;
}

/* ---- output ----------------------------------------------------------------------------- */

static void ratio_text(char *buf, size_t len, const sim_cmp_row *r)
{
    if (r->is_num && r->va > 0.0)
        snprintf(buf, len, "%.4g", r->vb / r->va);
    else
        snprintf(buf, len, "%s", "");
}

/* A line without the spaces that padding leaves at its end. */
static void put_line(FILE *out, char *line)
{
    size_t n = strlen(line);
    while (n > 0 && line[n - 1] == ' ')
        line[--n] = '\0';
    fprintf(out, "%s\n", line);
}

void sim_compare_text(FILE *out, const sim_comparison *c, const char *a_args,
                      const char *b_args)
{
    fprintf(out, "fasim compare: two runs side by side; * marks what differs\n");
    fprintf(out, "  A: %s\n  B: %s\n", a_args[0] ? a_args : "(the defaults)",
            b_args[0] ? b_args : "(the same as A)");
    int section = -1;
    for (int k = 0; k < c->nrows; k++) {
        const sim_cmp_row *r = &c->rows[k];
        char line[160];
        if ((int)r->section != section) {
            section = (int)r->section;
            snprintf(line, sizeof line, "\n%-26s %15s %15s %9s", sim_cmp_section_name(r->section),
                     "A", "B", section == SIM_CMP_CONFIG ? "" : "B / A");
            put_line(out, line);
        }
        char ratio[24];
        ratio_text(ratio, sizeof ratio, r);
        if (r->section == SIM_CMP_CONFIG)
            ratio[0] = '\0';             /* a ratio of shapes says nothing */
        snprintf(line, sizeof line, "  %-24s %15s %15s %9s %s", r->name, r->a, r->b, ratio,
                 r->differs ? "*" : "");
        put_line(out, line);
    }
    fprintf(out, "\n%d of %d rows differ.\n", c->ndiffer, c->nrows);
}

void sim_compare_json(FILE *out, const sim_comparison *c, const char *a_args,
                      const char *b_args)
{
    sim_json w;
    sim_report_json_begin(&w, out);
    sim_json_str(&w, "command", "compare");
    sim_json_str(&w, "a", a_args);
    sim_json_str(&w, "b", b_args);
    sim_json_int(&w, "differ", c->ndiffer);
    sim_json_arr_lines(&w, "rows");
    for (int k = 0; k < c->nrows; k++) {
        const sim_cmp_row *r = &c->rows[k];
        sim_json_obj(&w, NULL);
        sim_json_str(&w, "section", sim_cmp_section_name(r->section));
        sim_json_str(&w, "name", r->name);
        if (r->is_num) {
            sim_json_num(&w, "a", r->va);
            sim_json_num(&w, "b", r->vb);
            if (r->va > 0.0 && r->section != SIM_CMP_CONFIG)
                sim_json_num(&w, "ratio", r->vb / r->va);
            else
                sim_json_null(&w, "ratio");
        } else {
            sim_json_str(&w, "a", r->a);
            sim_json_str(&w, "b", r->b);
            sim_json_null(&w, "ratio");
        }
        sim_json_bool(&w, "differs", r->differs);
        sim_json_end(&w);
    }
    sim_json_end(&w);
    sim_json_end(&w);
    fputc('\n', out);
}
