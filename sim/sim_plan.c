/*
 * sim_plan.c — tile plans: the SRAM buffers of each loop order for given block
 * sizes, and the choice of block sizes (best fit, the paper's line 1, or the
 * user's).
 *
 * The buffer lists here are the single source of truth for SRAM: the loop
 * orders allocate exactly these buffers (sim_sram_take), so the plan's peak is
 * what the run measures. Sizes, with e = bytes of the run's dtype:
 *   inputs and outputs held on chip (Q_i, K_j, V_j, P_ij in the naive order)
 *   take e bytes per element; accumulators (S_ij, O_i) and the statistics
 *   (m, l) are fp32, 4 bytes (docs/ARCHITECTURE.md, "The IO model").
 */
#include "sim.h"
#include "sim_loop.h"

#include <stdio.h>
#include <string.h>

void sim_plan_add(sim_plan *p, sim_buf_id id, int phase, int64_t rows, int64_t cols,
                  int elem_bytes, const char *why)
{
    if (p->nbuf == SIM_MAX_BUFFERS)
        return;
    sim_buffer *b = &p->buf[p->nbuf++];
    b->name = sim_buf_name(id);
    b->id = id;
    b->phase = phase;
    b->rows = rows;
    b->cols = cols;
    b->elem_bytes = elem_bytes;
    /* Saturate rather than wrap: a plan whose size overflows must not "fit". */
    uint64_t n;
    if (__builtin_mul_overflow((uint64_t)rows, (uint64_t)cols, &n) ||
        __builtin_mul_overflow(n, (uint64_t)elem_bytes, &b->bytes))
        b->bytes = UINT64_MAX;
    b->why = why;
    b->level = SIM_LEVEL_SRAM;
}

int64_t sim_plan_rows(const sim_shape *sh, uint64_t key_bytes, uint64_t row_bytes)
{
    const uint64_t per_row = (uint64_t)sim_shape_Nk(sh) * key_bytes + row_bytes;
    if (per_row > sh->M)
        return 0;
    const uint64_t rows = sh->M / per_row;
    return rows < (uint64_t)sh->N ? (int64_t)rows : sh->N;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/* Paged KV: a phase that loads K_j or V_j holds the page-table entries of
 * one tile: B_c / P when P divides B_c (every tile starts on a page), else
 * at most ceil((B_c - 1) / P) + 1 (a tile that starts on a page's last row).
 * 4 bytes each. */
static void add_page_entries(sim_plan *p)
{
    const int64_t P = p->run.page;
    const int64_t entries = p->Bc % P == 0 ? p->Bc / P : (p->Bc - 1 + P - 1) / P + 1;
    for (int ph = 1; ph <= p->nphases; ph++)
        for (int k = 0; k < p->nbuf; k++)
            if (p->buf[k].phase == ph &&
                (p->buf[k].id == SIM_BUF_K_j || p->buf[k].id == SIM_BUF_V_j)) {
                sim_plan_add(p, SIM_BUF_PT_j, ph, entries, 1, 4,
                             "page-table entries of a tile");
                break;
            }
}

/* Phase ph's sum of the buffers at `level` (saturating). */
static uint64_t phase_bytes(const sim_plan *p, int ph, int level)
{
    uint64_t sum = 0;
    for (int k = 0; k < p->nbuf; k++)
        if (p->buf[k].phase == ph && p->buf[k].level == level &&
            __builtin_add_overflow(sum, p->buf[k].bytes, &sum))
            sum = UINT64_MAX;
    return sum;
}

/* A level's peak: the largest phase's sum of its buffers. */
static uint64_t plan_peak(const sim_plan *p, int level)
{
    uint64_t peak = 0;
    for (int ph = 1; ph <= p->nphases; ph++) {
        uint64_t sum = phase_bytes(p, ph, level);
        if (sum > peak)
            peak = sum;
    }
    return peak;
}

static void plan_sum(sim_plan *p, uint64_t M)
{
    p->sram_peak = plan_peak(p, SIM_LEVEL_SRAM);
    p->reg_peak = plan_peak(p, SIM_LEVEL_REG);
    p->fits = p->sram_peak <= M && p->reg_peak <= p->reg_limit;
}

/* The buffers themselves are the loop order's (its descriptor's plan, in
 * sim/algo_*.c); here the blocks are clamped, paging adds its entries and
 * the peak is summed. */
int sim_plan_make(sim_algo algo, const sim_shape *sh, const sim_run_opts *run,
                  int64_t Br, int64_t Bc, sim_plan_kind kind, sim_plan *out)
{
    const sim_run_opts plain = { 0 };
    if (!run)
        run = &plain;
    if (!sh || !out || sh->N < 1 || sh->d < 1 || Br < 1 || Bc < 1 ||
        sim_check(sh, run, NULL, 0) != 0)
        return -1;
    const sim_loop *l = sim_loop_find(algo, run);
    if (!l || sim_run_opts_check(algo, run, NULL, 0) != 0 ||
        sim_loop_dtype_check(algo, sh->dtype, NULL, 0) != 0)
        return -1;
    const int64_t N = sh->N, N_k = sim_shape_Nk(sh);
    sim_plan *p = out;
    memset(p, 0, sizeof *p);
    p->algo = algo;
    p->sh = *sh;
    p->run = *run;
    if (!l->softmax_forms)
        p->run.softmax = SIM_SOFTMAX_AUTO;   /* its own softmax: no form was used */
    p->kind = kind;
    p->Br = Br < N ? Br : N;
    p->Bc = Bc < N_k ? Bc : N_k;
    p->Tr = ceil_div(N, p->Br);
    p->Tc = ceil_div(N_k, p->Bc);
    l->plan(p, sh, sim_dtype_bytes(sh->dtype));
    if (run->page > 0)
        add_page_entries(p);
    plan_sum(p, sh->M);
    return 0;
}

/* Candidate block sizes, ascending, all <= N: multiples of 16 (the
 * granularity of tensor-core tiles) up to SIM_PLAN_LINEAR_MAX, then powers of
 * two, then N itself; only when none of those fits are 1, 2, 4 and 8 tried as
 * well (tiny M, or N < 16). cand_count() gives how many there are and
 * cand_at(k) the k-th, without building the list.
 *
 * Why the powers of two past 4096: with causal masking every fitting pair is
 * scored, so the search costs the square of the candidate count. Multiples of
 * 16 all the way to N = 1M with M = 1 GiB made 4 billion pairs (hours);
 * capped like this there are at most 284 candidates below N = 2^40 (288 with
 * the small sizes), some 40,000 fitting pairs, 12 to 20 ms per loop order
 * (bench_sweep, section 4). Blocks past 4096 rows only fit SRAM far larger than any GPU's
 * (4096 x d=64 in fp16 is already 512 KiB), so real plans are unaffected. */
#define SIM_PLAN_LINEAR_MAX INT64_C(4096)

static int64_t cand_small(int64_t N, int with_small)
{
    int64_t small = 0;
    for (int64_t b = 1; with_small && b < 16 && b <= N; b *= 2)
        small++;
    return small;
}

/* Multiples of 16 in [16, min(N, SIM_PLAN_LINEAR_MAX)]. */
static int64_t cand_linear(int64_t N)
{
    return (N < SIM_PLAN_LINEAR_MAX ? N : SIM_PLAN_LINEAR_MAX) / 16;
}

/* Powers of two in (SIM_PLAN_LINEAR_MAX, N]. */
static int64_t cand_pow2(int64_t N)
{
    int64_t n = 0;
    for (int64_t b = 2 * SIM_PLAN_LINEAR_MAX; b <= N; b *= 2) {
        n++;
        if (b > N / 2)
            break;                   /* the next power would pass N (and 2b may overflow) */
    }
    return n;
}

static int is_pow2(int64_t x)
{
    return x > 0 && (x & (x - 1)) == 0;
}

static int64_t cand_count(int64_t N, int with_small)
{
    int64_t n = cand_small(N, with_small) + cand_linear(N) + cand_pow2(N);
    int N_listed = N <= SIM_PLAN_LINEAR_MAX ? N % 16 == 0 || (with_small && N < 16 && is_pow2(N))
                                             : is_pow2(N);
    return n + (N_listed ? 0 : 1);
}

static int64_t cand_at(int64_t N, int with_small, int64_t k)
{
    int64_t small = cand_small(N, with_small);
    if (k < small)
        return (int64_t)1 << k;
    k -= small;
    if (k < cand_linear(N))
        return 16 * (k + 1);
    k -= cand_linear(N);
    if (k < cand_pow2(N))
        return 2 * SIM_PLAN_LINEAR_MAX << k;
    return N;
}

typedef struct {
    uint64_t bytes, steps;
    int ok;
} score;

static score evaluate(sim_algo algo, const sim_shape *sh, const sim_run_opts *run,
                      int64_t Br, int64_t Bc, sim_plan *tmp)
{
    score s = { 0, 0, 0 };
    if (sim_plan_make(algo, sh, run, Br, Bc, SIM_PLAN_AUTO, tmp) != 0 || !tmp->fits ||
        tmp->Tc < sim_run_S(run))            /* split-KV: a key block per split at least */
        return s;
    /* Paged KV is scored as contiguous: it moves the same elements, adds
     * only the table's 4-byte entries, and under a mask in FA2 its count is
     * a pass over the key blocks, too slow for every candidate. The chosen
     * plan's paged counts are exact afterwards. tmp is scratch: its pages
     * go here, its buffers and fit stay the paged plan's. */
    tmp->run.page = 0;
    sim_counts c;
    if (sim_theory_counts(tmp, sh, &c) != 0 || sim_theory_steps(tmp, sh, &s.steps) != 0)
        return s;
    s.bytes = sim_counts_read_bytes(&c, sh->dtype) + sim_counts_write_bytes(&c, sh->dtype);
    s.ok = 1;
    return s;
}

static int better(score a, int64_t a_br, score b, int64_t b_br)
{
    if (!a.ok)
        return 0;
    if (!b.ok)
        return 1;
    if (a.bytes != b.bytes)
        return a.bytes < b.bytes;
    if (a.steps != b.steps)
        return a.steps < b.steps;
    return a_br > b_br;
}

/* The candidates of B_r run up to N (the queries), those of B_c up to N_k. */
static int64_t axis_len(const sim_shape *sh, int is_br)
{
    return is_br ? sh->N : sim_shape_Nk(sh);
}

/* Largest candidate index k in [0, n) for the free dimension such that the
 * plan fits (SRAM grows with each block size), or -1 if none does. */
static int64_t largest_fit(sim_algo algo, const sim_shape *sh, const sim_run_opts *run,
                           int with_small, int64_t fixed, int fixed_is_br, int64_t n,
                           sim_plan *tmp)
{
    const int64_t len = axis_len(sh, !fixed_is_br);
    int64_t lo = 0, hi = n - 1, best = -1;
    while (lo <= hi) {
        int64_t mid = lo + (hi - lo) / 2;
        int64_t b = cand_at(len, with_small, mid);
        sim_plan_make(algo, sh, run, fixed_is_br ? fixed : b, fixed_is_br ? b : fixed,
                      SIM_PLAN_AUTO, tmp);
        if (tmp->fits) {
            best = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return best;
}

typedef struct {
    score s;
    int64_t Br, Bc;
} best_pair;

static void consider(sim_algo algo, const sim_shape *sh, const sim_run_opts *run,
                     int64_t br, int64_t bc, best_pair *top, sim_plan *tmp)
{
    score s = evaluate(algo, sh, run, br, bc, tmp);
    if (better(s, br, top->s, top->Br)) {
        top->s = s;
        top->Br = br;
        top->Bc = bc;
    }
}

/* One search over a candidate set. Without causal masking every loop order's
 * HBM bytes are non-increasing in both B_r and B_c (fewer blocks, fewer
 * re-reads), and so are its steps, so the best plan lies on the frontier of
 * largest fitting pairs: for each B_r only the largest B_c that fits is
 * tried. With causal masking (or a block mask) larger blocks also load more
 * masked keys, and
 * split-KV needs T_c >= S, which the largest B_c may break, so there every
 * fitting pair is tried. */
static best_pair search_in(sim_algo algo, const sim_shape *sh, const sim_run_opts *run,
                           int with_small, int64_t Br_fixed, int64_t Bc_fixed)
{
    sim_plan tmp;
    const int64_t N_r = axis_len(sh, 1), N_c = axis_len(sh, 0);
    const int64_t n_r = cand_count(N_r, with_small), n_c = cand_count(N_c, with_small);
    best_pair top = { { 0, 0, 0 }, 0, 0 };

    if (Br_fixed && Bc_fixed) {
        consider(algo, sh, run, Br_fixed, Bc_fixed, &top, &tmp);
    } else if (Br_fixed || Bc_fixed) {
        int fixed_is_br = Br_fixed != 0;
        int64_t fixed = fixed_is_br ? Br_fixed : Bc_fixed;
        int64_t n = fixed_is_br ? n_c : n_r, len = fixed_is_br ? N_c : N_r;
        int64_t kmax = largest_fit(algo, sh, run, with_small, fixed, fixed_is_br, n, &tmp);
        int64_t kmin = sh->causal || sh->blocks || run->splits > 1 ? 0 : kmax;
        for (int64_t k = kmax; k >= kmin && k >= 0; k--) {
            int64_t b = cand_at(len, with_small, k);
            consider(algo, sh, run, fixed_is_br ? fixed : b, fixed_is_br ? b : fixed, &top,
                     &tmp);
        }
    } else {
        for (int64_t kr = 0; kr < n_r; kr++) {
            int64_t br = cand_at(N_r, with_small, kr);
            int64_t kmax = largest_fit(algo, sh, run, with_small, br, 1, n_c, &tmp);
            if (kmax < 0)
                break;                    /* larger B_r fits even less */
            int64_t kmin = sh->causal || sh->blocks || run->splits > 1 ? 0 : kmax;
            for (int64_t k = kmax; k >= kmin; k--)
                consider(algo, sh, run, br, cand_at(N_c, with_small, k), &top, &tmp);
        }
    }
    return top;
}

/* The best fitting plan: among multiples of 16 (and N) first, then with the
 * small sizes 1, 2, 4, 8 admitted. Returns 0 with *best set, or -1. */
static int search(sim_algo algo, const sim_shape *sh, const sim_run_opts *run,
                  int64_t Br_fixed, int64_t Bc_fixed, sim_plan *best)
{
    /* A loop order that holds S in HBM (standard attention) writes its
     * N N_k elements whatever the blocks: when that leaves 64 bits no plan
     * is countable, and there is nothing to search. */
    uint64_t NN;
    const sim_loop *l = sim_loop_find(algo, run);
    if (!l || ((l->hbm & (1u << SIM_S)) &&
               __builtin_mul_overflow((uint64_t)sh->N, (uint64_t)sim_shape_Nk(sh), &NN)))
        return -1;
    /* The second pass matters even when plans fit but none was countable:
     * a small block on one side lets the other grow, and FA1's traffic goes
     * with T_c, FA2's with T_r (N = 8G, d = 1, M = 1312: only B_c = 1 leaves
     * FA2 a countable plan). */
    for (int with_small = 0; with_small <= 1; with_small++) {
        best_pair top = search_in(algo, sh, run, with_small, Br_fixed, Bc_fixed);
        if (top.s.ok)
            return sim_plan_make(algo, sh, run, top.Br, top.Bc, SIM_PLAN_AUTO, best);
    }
    return -1;
}

static const char *type_name(int elem_bytes, sim_dtype dt)
{
    return elem_bytes == 4 ? "fp32" : sim_dtype_name(dt);
}

/* Appends to a message buffer, keeping lines within 78 columns. */
typedef struct {
    char *buf;
    size_t len, off;
    int col;
} msg;

static void msg_put(msg *m, const char *s)
{
    int n = snprintf(m->buf + m->off, m->off < m->len ? m->len - m->off : 0, "%s", s);
    if (n > 0)
        m->off += (size_t)n;
    const char *nl = strrchr(s, '\n');
    m->col = nl ? (int)strlen(nl + 1) : m->col + (int)strlen(s);
}

/* An item that wraps onto a continuation line (indented 4) when too long. */
static void msg_item(msg *m, const char *item)
{
    if (m->col + (int)strlen(item) > 78)
        msg_put(m, "\n   ");
    msg_put(m, item);
}

void sim_plan_explain_misfit(const sim_plan *p, const sim_shape *sh,
                             char *err, size_t errlen)
{
    if (!err || !errlen)
        return;
    msg m = { err, errlen, 0, 0 };
    char t[256], c1[32], c2[32], c3[32];
    sim_format_count(c1, sizeof c1, p->sram_peak);
    sim_format_count(c2, sizeof c2, sh->M);
    sim_format_count(c3, sizeof c3, p->sram_peak - sh->M);
    snprintf(t, sizeof t, "%s plan B_r = %lld, B_c = %lld does not fit in M = %s B:\n"
             "  it needs %s B of SRAM (%s B over)", sim_algo_name(p->algo), (long long)p->Br,
             (long long)p->Bc, c2, c1, c3);
    msg_put(&m, t);
    for (int ph = 1; ph <= p->nphases; ph++) {
        uint64_t sum = 0;
        for (int k = 0; k < p->nbuf; k++)
            if (p->buf[k].phase == ph)
                sum += p->buf[k].bytes;
        if (sum <= sh->M)
            continue;
        sim_format_count(c1, sizeof c1, sum);
        if (p->nphases > 1)
            snprintf(t, sizeof t, "\n  line %d needs %s B:", ph, c1);
        else
            snprintf(t, sizeof t, "\n  buffers:");
        msg_put(&m, t);
        int first = 1;
        for (int k = 0; k < p->nbuf; k++) {
            const sim_buffer *b = &p->buf[k];
            if (b->phase != ph)
                continue;
            sim_format_count(c1, sizeof c1, b->bytes);
            if (!first)
                msg_put(&m, ",");
            snprintf(t, sizeof t, " %s %lldx%lld %s = %s B", b->name,
                     (long long)b->rows, (long long)b->cols,
                     type_name(b->elem_bytes, sh->dtype), c1);
            msg_item(&m, t);
            first = 0;
        }
    }
    sim_plan fix;
    if (search(p->algo, sh, &p->run, p->Br, 0, &fix) == 0 ||
        search(p->algo, sh, &p->run, 0, p->Bc, &fix) == 0) {
        sim_format_count(c1, sizeof c1, fix.sram_peak);
        snprintf(t, sizeof t, "\n  hint: --algo %s --Br %lld --Bc %lld fits (%s B)",
                 sim_algo_name(p->algo), (long long)fix.Br, (long long)fix.Bc, c1);
        msg_put(&m, t);
    } else {
        snprintf(t, sizeof t, "\n  no plan with B_r = %lld or B_c = %lld fits",
                 (long long)p->Br, (long long)p->Bc);
        msg_put(&m, t);
    }
    if (search(p->algo, sh, &p->run, 0, 0, &fix) == 0) {
        sim_format_count(c1, sizeof c1, fix.sram_peak);
        int n = snprintf(t, sizeof t, "\n  hint: or omit --Br/--Bc: best %s plan B_r = %lld, "
                         "B_c = %lld (%s B)", sim_algo_name(p->algo), (long long)fix.Br,
                         (long long)fix.Bc, c1);
        /* Past 73 columns ("fasim: " comes first on the line) the size
         * moves to a line of its own: a longer loop order's name. */
        char *paren = strrchr(t, '(');
        if (n - 1 > 73 && paren && paren > t + 1) {
            memmove(paren + 4, paren, strlen(paren) + 1);   /* " " -> "\n    " */
            memcpy(paren - 1, "\n    ", 5);
        }
        msg_put(&m, t);
    }
}

/* Split-KV needs a key block per split: T_c >= S. Returns 0, or -1 with a
 * message naming the limit and the block size that would allow it. */
static int splits_fit(const sim_plan *p, const sim_shape *sh, char *err, size_t errlen)
{
    if (p->Tc >= sim_run_S(&p->run))
        return 0;
    if (err && errlen)
        snprintf(err, errlen, "--splits %lld is more than the T_c = %lld key blocks of "
                 "B_c = %lld: use at most %lld split%s, or --Bc %lld or less",
                 (long long)p->run.splits, (long long)p->Tc, (long long)p->Bc, (long long)p->Tc,
                 p->Tc == 1 ? "" : "s",
                 (long long)(sim_shape_Nk(sh) / p->run.splits));
    return -1;
}

int sim_plan_choose(sim_algo algo, const sim_shape *sh, const sim_run_opts *run,
                    sim_plan_kind kind, int64_t Br_fixed, int64_t Bc_fixed, sim_plan *out,
                    char *err, size_t errlen)
{
    const sim_run_opts plain = { 0 };
    if (!run)
        run = &plain;
    if (err && errlen)
        err[0] = '\0';
    if (!sh || sh->N < 1 || sh->d < 1 || Br_fixed < 0 || Bc_fixed < 0) {
        if (err)
            snprintf(err, errlen, "invalid shape or block size");
        return -1;
    }
    if (sim_check(sh, run, err, errlen) != 0)
        return -1;
    if (sim_run_opts_check(algo, run, err, errlen) != 0 ||
        sim_loop_dtype_check(algo, sh->dtype, err, errlen) != 0)
        return -1;
    if (kind == SIM_PLAN_PAPER) {
        /* Algorithm 1, line 1, with M in elements as the paper counts it. */
        int64_t M_el = (int64_t)(sh->M / (uint64_t)sim_dtype_bytes(sh->dtype));
        int64_t Bc = ceil_div(M_el, 4 * sh->d);
        int64_t Br = Bc < sh->d ? Bc : sh->d;
        if (Bc < 1 || Br < 1) {
            if (err)
                snprintf(err, errlen, "M = %llu B is %lld elements of %s: line 1 of "
                         "Algorithm 1 gives B_c = 0", (unsigned long long)sh->M,
                         (long long)M_el, sim_dtype_name(sh->dtype));
            return -1;
        }
        if (sim_plan_make(algo, sh, run, Br, Bc, SIM_PLAN_PAPER, out) != 0)
            return -1;
        return splits_fit(out, sh, err, errlen);
    }
    if (Br_fixed && Bc_fixed) {
        if (sim_plan_make(algo, sh, run, Br_fixed, Bc_fixed, SIM_PLAN_USER, out) != 0)
            return -1;
        if (!out->fits) {
            sim_plan_explain_misfit(out, sh, err, errlen);
            return -1;
        }
        return splits_fit(out, sh, err, errlen);
    }
    if (search(algo, sh, run, Br_fixed, Bc_fixed, out) == 0) {
        out->kind = (Br_fixed || Bc_fixed) ? SIM_PLAN_USER : SIM_PLAN_AUTO;
        return 0;
    }
    if (sim_run_S(run) > 1 && Bc_fixed && ceil_div(sim_shape_Nk(sh), Bc_fixed) < run->splits) {
        sim_plan_make(algo, sh, run, Br_fixed ? Br_fixed : 1, Bc_fixed, SIM_PLAN_USER, out);
        return splits_fit(out, sh, err, errlen);
    }
    /* Nothing fits: explain with the smallest plan that keeps the pinned size. */
    sim_plan small;
    sim_plan_make(algo, sh, run, Br_fixed ? Br_fixed : 1, Bc_fixed ? Bc_fixed : 1,
                  SIM_PLAN_USER, &small);
    sim_counts c;
    sim_plan flat = small;              /* the overflow is N's: pages add no N^2 terms */
    flat.run.page = 0;
    if (small.fits && sim_theory_counts(&flat, sh, &c) != 0) {
        /* Plans fit, but none has countable traffic: the problem is N, not M. */
        if (err)
            snprintf(err, errlen, "N = %lld, d = %lld: %s's HBM counts would overflow 64 "
                     "bits for every plan that fits; use a smaller N or d",
                     (long long)sh->N, (long long)sh->d, sim_algo_name(algo));
        return -1;
    }
    if (Br_fixed || Bc_fixed) {
        sim_plan_explain_misfit(&small, sh, err, errlen);
    } else if (err) {
        snprintf(err, errlen, "M = %llu B is too small for any %s plan at d = %lld, "
                 "%s: the smallest (B_r = B_c = 1) needs %llu B",
                 (unsigned long long)sh->M, sim_algo_name(algo), (long long)sh->d,
                 sim_dtype_name(sh->dtype), (unsigned long long)small.sram_peak);
    }
    return -1;
}

/* ---- kernel plans ---------------------------------------------------------
 * Where a kernel keeps each buffer: what the block computes and accumulates
 * lives in registers, spread over the MMA fragments of its threads (the
 * scores S_ij and dP_ij, the fp32 accumulators O_i, O~_i, dQ_i, dK_j, dV_j,
 * and the rows' statistics m, l, L, D, which each thread keeps for its own
 * rows); what is loaded from HBM and read by several warps lives in shared
 * memory (Q_i, K_j, V_j, dO_i, and the backward's O_i, a tile it reads for
 * D_i). A model: real kernels also hold addresses and loop counters in
 * registers, and stage P and dS through shared memory for the second
 * products; fasim charges neither. */
static int in_registers(const sim_plan *p, const sim_buffer *b)
{
    switch (b->id) {
    case SIM_BUF_S_ij: case SIM_BUF_dP_ij:
    case SIM_BUF_Ot_i: case SIM_BUF_dQ_i: case SIM_BUF_dK_j: case SIM_BUF_dV_j:
    case SIM_BUF_m_i: case SIM_BUF_l_i: case SIM_BUF_L_i: case SIM_BUF_D_i:
    case SIM_BUF_mt_ij: case SIM_BUF_lt_ij: case SIM_BUF_m_new: case SIM_BUF_l_new:
        return 1;
    case SIM_BUF_O_i:
        return p->run.pass == SIM_FWD;
    default:
        return 0;
    }
}

/* One line: the first register buffer of phase ph that takes the phase past
 * the budget, and by how much the phase is over. */
static void explain_registers(const sim_plan *p, int ph, const sim_kernel_target *t,
                              char *err, size_t errlen)
{
    uint64_t sum = 0;
    const sim_buffer *over = NULL;
    for (int k = 0; k < p->nbuf && !over; k++) {
        const sim_buffer *b = &p->buf[k];
        if (b->phase != ph || b->level != SIM_LEVEL_REG)
            continue;
        if (__builtin_add_overflow(sum, b->bytes, &sum))
            sum = UINT64_MAX;
        if (sum > p->reg_limit)
            over = b;
    }
    if (!over || !err || !errlen)
        return;
    char c1[32], c2[32], c3[32], c4[32];
    sim_format_count(c1, sizeof c1, over->bytes);
    sim_format_count(c2, sizeof c2, phase_bytes(p, ph, SIM_LEVEL_REG) - p->reg_limit);
    sim_format_count(c3, sizeof c3, p->reg_limit);
    sim_format_count(c4, sizeof c4, t->regs_per_block);
    snprintf(err, errlen, "%s kernel plan B_r = %lld, B_c = %lld: register buffer %s "
             "(%lldx%lld fp32, %s B) leaves the registers %s B over their budget of %s B "
             "(%d warps x 32 threads x %u registers x 4 B, at most %s registers a block); "
             "use a smaller --Br or --Bc", sim_algo_name(p->algo), (long long)p->Br,
             (long long)p->Bc, over->name, (long long)over->rows, (long long)over->cols, c1,
             c2, c3, p->warps, t->regs_per_thread, c4);
}

int sim_plan_kernel(sim_algo algo, const sim_shape *sh, const sim_run_opts *run,
                    const sim_kernel_target *t, int64_t Br_fixed, int64_t Bc_fixed,
                    sim_plan *out, char *err, size_t errlen)
{
    const sim_run_opts plain = { 0 };
    if (!run)
        run = &plain;
    if (err && errlen)
        err[0] = '\0';
    if (!sh || !t || sh->N < 1 || sh->d < 1 || Br_fixed < 0 || Bc_fixed < 0) {
        if (err)
            snprintf(err, errlen, "invalid shape or block size");
        return -1;
    }
    if (sim_check(sh, run, err, errlen) != 0 ||
        sim_run_opts_check(algo, run, err, errlen) != 0 ||
        sim_loop_dtype_check(algo, sh->dtype, err, errlen) != 0)
        return -1;
    sim_kernel_choice c;
    if (sim_kernel_choose(algo, sh, run, t, &c, err, errlen) != 0)
        return -1;
    if (sim_plan_make(algo, sh, run, Br_fixed ? Br_fixed : c.Br, Bc_fixed ? Bc_fixed : c.Bc,
                      SIM_PLAN_KERNEL, out) != 0)
        return -1;
    out->warps = c.warps;
    out->reg_limit = sim_kernel_reg_bytes(t, c.warps);
    for (int k = 0; k < out->nbuf; k++)
        out->buf[k].level = in_registers(out, &out->buf[k]) ? SIM_LEVEL_REG : SIM_LEVEL_SRAM;
    plan_sum(out, sh->M);
    if (out->sram_peak > sh->M) {
        char c1[32], c2[32], c3[32];
        sim_format_count(c1, sizeof c1, out->sram_peak);
        sim_format_count(c2, sizeof c2, out->sram_peak - sh->M);
        sim_format_count(c3, sizeof c3, sh->M);
        if (err)
            snprintf(err, errlen, "%s kernel plan B_r = %lld, B_c = %lld needs %s B of shared "
                     "memory, %s B over M = %s B; raise --M, or give --gpu (its shared "
                     "memory per block)", sim_algo_name(algo), (long long)out->Br,
                     (long long)out->Bc, c1, c2, c3);
        return -1;
    }
    for (int ph = 1; ph <= out->nphases; ph++)
        if (phase_bytes(out, ph, SIM_LEVEL_REG) > out->reg_limit) {
            explain_registers(out, ph, t, err, errlen);
            return -1;
        }
    return splits_fit(out, sh, err, errlen);
}
