/*******************************************************************************
*
*   fasim lesson 6 - tiling-budget: what one block keeps in SRAM
*
*   Level:     [★★☆] 2/3 intermediate              Minutes: about 10
*
*   Goal:      add up, byte by byte, everything one FlashAttention block holds
*              on chip; see where line 1 of Algorithm 1 gets its block sizes.
*   After it:  you can size Q_i, K_j, V_j, S_ij, O_i and the statistics for any
*              B_r, B_c, d and dtype; say why B_r = min(ceil(M/4d), d); say
*              why line 1 can ask for 1.25 M; convert M from bytes to
*              elements; and put right the article's "96 KB" sum.
*
*   Options:   --N N       sequence length; blocks never exceed it (default 1024)
*              --d D       head dimension (default 64)
*              --M BYTES   SRAM of one thread block in bytes: 98304, 96K (default)
*              --dtype T   fp16 (default), bf16 or fp32
*              --algo A    fa2 (default) or fa1: whose buffers are counted
*              --Br B      query block rows (default 64)
*              --Bc B      key/value block rows (default 64)
*
*   Run:       fasim lesson tiling-budget --d 128 --Br 128 --Bc 128
*
*   Numbers:   sim/sim_plan.c: sim_plan_make's buffers, sim_plan_choose's plans.
*
*******************************************************************************/
#include <stdio.h>
#include <string.h>

#include "lesson.h"
#include "sim_claims.h"
#include "sim_parse.h"

/* 1234567 -> "1,234,567" (num) and 131072 -> "128 KiB" (human), from a ring of
 * buffers so that one printf can hold several. */
static const char *fmt(uint64_t n, int as_bytes)
{
    static char ring[16][32];
    static int k;
    k = (k + 1) % 16;
    (as_bytes ? sim_format_bytes : sim_format_count)(ring[k], sizeof ring[k], n);
    return ring[k];
}
static const char *num(uint64_t n) { return fmt(n, 0); }
static const char *human(uint64_t bytes) { return fmt(bytes, 1); }

/* Elements (in_bytes = 0) or bytes of the buffer called `name` in p; 0 if none. */
static uint64_t size_of(const sim_plan *p, const char *name, int in_bytes)
{
    for (int k = 0; k < p->nbuf; k++)
        if (strcmp(p->buf[k].name, name) == 0)
            return in_bytes ? p->buf[k].bytes
                            : (uint64_t)p->buf[k].rows * (uint64_t)p->buf[k].cols;
    return 0;
}

/* Elements of line 1's five tiles, as the paper counts them. */
static uint64_t line1_elems(const sim_plan *p)
{
    return size_of(p, "Q_i", 0) + size_of(p, "K_j", 0) + size_of(p, "V_j", 0) +
           size_of(p, "O_i", 0) + size_of(p, "S_ij", 0);
}

/* The paper plan (line 1) of algo for sh; ends the lesson if line 1 gives 0. */
static void paper_plan(lesson *L, sim_algo a, const sim_shape *sh, sim_plan *p)
{
    char err[512];
    if (sim_plan_choose(a, sh, NULL, SIM_PLAN_PAPER, 0, 0, p, err, sizeof err) != 0)
        lesson_fail(L, "%s", err);
}

static void run(lesson *L)
{
    /* ---- setup: options and inputs ------------------------------------ */
    sim_shape sh = { 0 };
    sh.N = lesson_opt_int(L, "N", 1024, 1, (int64_t)1 << 30);
    sh.d = lesson_opt_int(L, "d", 64, 1, 65536);
    sh.M = lesson_opt_size(L, "M", "96K");
    const char *dt_name = lesson_opt_string(L, "dtype", "fp16");
    const char *algo_name = lesson_opt_string(L, "algo", "fa2");
    const int64_t Br = lesson_opt_int(L, "Br", 64, 1, (int64_t)1 << 30);
    const int64_t Bc = lesson_opt_int(L, "Bc", 64, 1, (int64_t)1 << 30);
    sim_algo algo = SIM_FA2;
    if (sim_dtype_parse(dt_name, &sh.dtype) != 0 || sim_dtype_is_fp8(sh.dtype))
        lesson_fail(L, "--dtype %s: use fp16, bf16 or fp32", sim_shown(dt_name).s);
    if (sim_algo_parse(algo_name, &algo) != 0 || algo == SIM_NAIVE)
        lesson_fail(L, "--algo %s: use fa1 or fa2 (the naive order has no single block)",
                    sim_shown(algo_name).s);
    if (sh.M < 1 || sh.M > ((uint64_t)1 << 50))
        lesson_fail(L, "--M %llu: give between 1 B and 1 PiB", (unsigned long long)sh.M);
    const int e = sim_dtype_bytes(sh.dtype);
    const uint64_t M_el = sh.M / (uint64_t)e, d4 = 4u * (uint64_t)sh.d;
    sim_plan p, pp, art, p4, pm, t, next = { 0 };
    sim_plan_make(algo, &sh, NULL, Br, Bc, SIM_PLAN_USER, &p);   /* sizes >= 1: succeeds */
    paper_plan(L, algo, &sh, &pp);
    /* The article's example (docs/sources.md, quote 9): d = B_r = B_c = 128, fp16. */
    sim_shape ss = { .N = 1024, .d = 128, .M = sh.M, .dtype = SIM_FP16, .causal = 0 };
    sim_plan_make(SIM_FA2, &ss, NULL, 128, 128, SIM_PLAN_USER, &art);
    /* s4: M = 4 d^2 elements, where line 1 asks for exactly 1.25 M; sm: the
     * byte count of M misread as elements. */
    sim_shape s4 = sh, sm = sh;
    s4.M = d4 * (uint64_t)sh.d * (uint64_t)e;
    sm.M = sh.M * (uint64_t)e;
    paper_plan(L, algo, &s4, &p4);
    paper_plan(L, algo, &sm, &pm);
    const double M4_el = (double)(s4.M / (uint64_t)e);
    /* The largest square multiple of 16 that fits: SRAM grows with the block,
     * so the fitting sizes are a prefix and a binary search finds the end. */
    int64_t lo = 1, hi = sh.N / 16, sq = 0;
    while (lo <= hi) {
        int64_t mid = lo + (hi - lo) / 2;
        sim_plan_make(algo, &sh, NULL, 16 * mid, 16 * mid, SIM_PLAN_USER, &t);
        if (t.fits) {
            sq = 16 * mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    if (sq + 16 <= sh.N)
        sim_plan_make(algo, &sh, NULL, sq + 16, sq + 16, SIM_PLAN_USER, &next);
    char err[512];
    const int best_ok = sim_plan_choose(algo, &sh, NULL, SIM_PLAN_AUTO, 0, 0, &t, err,
                                        sizeof err) == 0;

    /* ---- steps --------------------------------------------------------- */
    lesson_step(L, "What one block needs");
    lesson_say(L, "FlashAttention never holds an N x N matrix. It works on one query block "
               "Q_i (B_r rows) against one key and value block K_j, V_j (B_c rows), and "
               "everything that pair needs must sit in SRAM at once: at most M = %s B "
               "(%s) for one thread block.", num(sh.M), human(sh.M));
    lesson_say(L, "Take %s with B_r = %lld, B_c = %lld, d = %lld. Q_i, K_j and V_j hold "
               "inputs in %s, %d B an element. The score tile S_ij and the output "
               "accumulator O_i are fp32, 4 B an element, as real kernels keep them, and "
               "so are the row statistics m_i and l_i.", sim_algo_title(algo),
               (long long)p.Br, (long long)p.Bc, (long long)sh.d, sim_dtype_name(sh.dtype), e);
    const lesson_question qq = { .answer = (double)size_of(&p, "Q_i", 1), .discrete = 1,
        .known = { { (double)p.Br * (double)sh.d, 0, LESSON_WHY_ELEMENTS } } };
    lesson_ask_q(L, &qq, "Q_i is B_r x d = %lld x %lld elements of %d B. How many bytes does "
                 "it take?", (long long)p.Br, (long long)sh.d, e);

    lesson_step(L, "The whole list");
    const lesson_question qa = { .answer = (double)p.sram_peak, .discrete = 1 };
    lesson_ask_q(L, &qa, "Now add up every buffer. How many bytes does one block need?");
    lesson_print(L, "  %-7s %13s  %-5s %9s  %s\n", "buffer", "rows x cols", "type", "bytes",
                 "holds");
    for (int k = 0; k < p.nbuf; k++) {
        char shape[48];
        snprintf(shape, sizeof shape, "%lld x %lld", (long long)p.buf[k].rows,
                 (long long)p.buf[k].cols);
        lesson_print(L, "  %-7s %13s  %-5s %9s  %s\n", p.buf[k].name, shape,
                     p.buf[k].elem_bytes == 4 ? "fp32" : sim_dtype_name(sh.dtype),
                     num(p.buf[k].bytes), p.buf[k].why);
    }
    lesson_print(L, "  SRAM for one block: %s B = %.1f%% of M\n\n", num(p.sram_peak),
                 100.0 * (double)p.sram_peak / (double)sh.M);
    if (p.fits)
        lesson_say(L, "It fits, with %s B to spare.", num(sh.M - p.sram_peak));
    else
        lesson_say(L, "It does not fit: %s B over. fasim refuses --Br %lld --Bc %lld at "
                   "this M and suggests sizes that fit.", num(p.sram_peak - sh.M),
                   (long long)p.Br, (long long)p.Bc);

    lesson_step(L, "The article's 96 KB, checked");
    const uint64_t qkv = size_of(&art, "Q_i", 1) + size_of(&art, "K_j", 1) +
                         size_of(&art, "V_j", 1);
    const uint64_t s16 = size_of(&art, "S_ij", 0) * 2u, o16 = size_of(&art, "O_i", 0) * 2u;
    const long long B = (long long)art.Br, D = (long long)ss.d;
    lesson_say(L, "Section 4.1 of " SIM_ARTICLE_A " (docs/sources.md, quote 9) sizes a "
               "block for d = %lld, B_r = B_c = %lld in fp16. Its sum has two terms: S_ij, %lld^2 elements of "
               "2 B, and Q_i, K_j, V_j, three %lld x %lld tiles of 2 B. It writes "
               "%lld^2 x 2 + 3 x %lld x %lld x 2 = %s B, about 96 KB.", D, B, B, B, D, B, B,
               D, num(qkv));
    const lesson_question qw = { .answer = (double)(s16 + qkv), .discrete = 1, .known = {
        { (double)qkv, 0, "That is the article's own total, which is Q_i + K_j + V_j alone: "
                          "the S_ij term fell out of its sum." } } };
    lesson_ask_q(L, &qw, "Work it out yourself: what is %lld^2 x 2 + 3 x %lld x %lld x 2, in "
                 "bytes?", B, B, D);
    lesson_say(L, "%s B = %s, not %s B. The article's %s B is Q_i + K_j + V_j alone: the "
               "S_ij term fell out of its total. Its own table also lists O_i "
               "(%lld x %lld), which the sum leaves out; with it, at 2 B, the block needs "
               "%s B = %s.", num(s16 + qkv), human(s16 + qkv), num(qkv), num(qkv), B, D,
               num(s16 + qkv + o16), human(s16 + qkv + o16));
    lesson_say(L, "fasim's list for the same block is longer still: S_ij and O_i are fp32 "
               "and m_i, l_i add %s B. FA2 at the article's sizes needs %s B = "
               "%s, %.2f times the article's figure; against M = %s B that is %.1f%%.",
               num(size_of(&art, "m_i", 1) + size_of(&art, "l_i", 1)),
               num(art.sram_peak), human(art.sram_peak),
               (double)art.sram_peak / (double)qkv, num(sh.M),
               100.0 * (double)art.sram_peak / (double)sh.M);

    lesson_step(L, "Line 1 of Algorithm 1, where M counts elements");
    lesson_say(L, "Algorithm 1 of FlashAttention (Dao et al. 2022) chooses the blocks in "
               "line 1: B_c = ceil(M / 4d) and B_r = min(ceil(M / 4d), d). Its M counts "
               "elements, not bytes: M = %s B of %s is %s elements.", num(sh.M),
               sim_dtype_name(sh.dtype), num(M_el));
    const lesson_question qc = { .answer = (double)pp.Bc, .discrete = 1, .known = {
        { (double)pm.Bc, 0, pm.Bc != pp.Bc ? "That is line 1 fed the byte count; its M "
                                             "counts elements." : NULL } } };
    lesson_ask_q(L, &qc, "M = %s elements and d = %lld: what B_c does line 1 give?",
                 num(M_el), (long long)sh.d);
    lesson_say(L, "So B_r = %lld and B_c = %lld%s. The reason: K_j and V_j take B_c d, "
               "about M/4, each, and Q_i and O_i take B_r d <= B_c d each, so the four "
               "d-wide tiles share M. The cap B_r <= d keeps the score tile "
               "S_ij = B_r B_c <= d B_c, again about M/4.", (long long)pp.Br, (long long)pp.Bc,
               (M_el + d4 - 1) / d4 > (uint64_t)sh.N
                   ? " (line 1 asked for more; blocks never exceed N)" : "");
    lesson_print(L, "  line 1's tiles: %s elements = %.4f M\n", num(line1_elems(&pp)),
                 (double)line1_elems(&pp) / (double)M_el);
    lesson_print(L, "  fasim's buffers: %s B = %.1f%% of M (fp32 S_ij, O_i, statistics)\n\n",
                 num(pp.sram_peak), 100.0 * (double)pp.sram_peak / (double)sh.M);

    lesson_step(L, "When line 1 asks for 1.25 M");
    lesson_say(L, "Line 1's tiles add up to 2 (B_r + B_c) d + B_r B_c elements. With "
               "B_c = M/4d and B_r <= d the first part is at most M and S_ij at most M/4, "
               "so line 1 may ask for 1.25 M (a little more when the ceiling rounds up), "
               "more than the SRAM it was given. It asks for exactly 1.25 M when "
               "M/4d = d, that is M = 4d^2.");
    lesson_askf(L, (double)line1_elems(&p4) / M4_el, "For d = %lld take M = 4d^2 = %s elements. "
         "What multiple of M do line 1's tiles need?", (long long)sh.d, num(s4.M / (uint64_t)e));
    lesson_print(L, "  M = 4d^2 = %s elements (%s B): B_r = %lld, B_c = %lld\n",
                 num(s4.M / (uint64_t)e), num(s4.M), (long long)p4.Br, (long long)p4.Bc);
    lesson_print(L, "  line 1's tiles: %s elements = %.4f M\n", num(line1_elems(&p4)),
                 (double)line1_elems(&p4) / M4_el);
    lesson_print(L, "  fasim's buffers: %s B = %.1f%% of M\n\n", num(p4.sram_peak),
                 100.0 * (double)p4.sram_peak / (double)s4.M);
    if (p4.Bc < sh.d)
        lesson_say(L, "Here N = %lld < d caps the blocks at N, so the full 1.25 M does not "
                   "appear.", (long long)sh.N);
    else
        lesson_say(L, "fasim shows this rather than hiding it: `fasim --plan paper` runs "
                   "line 1's sizes and marks the SRAM peak OVER when it exceeds M.");

    lesson_step(L, "Bytes are not elements");
    lesson_say(L, "The easiest mistake here is to feed line 1 the byte count as if it "
               "counted elements. Then M = %s is taken as %s elements, %d times too many.",
               human(sh.M), num(sh.M), e);
    const lesson_question qm = { .answer = (double)pm.Bc, .discrete = 1 };
    lesson_ask_q(L, &qm, "If %s were a count of elements, what B_c would line 1 give?",
                 num(sh.M));
    lesson_print(L, "  misread: B_r = %lld, B_c = %lld, needs %s B = %.2f x M\n\n",
                 (long long)pm.Br, (long long)pm.Bc, num(pm.sram_peak),
                 (double)pm.sram_peak / (double)sh.M);
    lesson_say(L, "Read correctly, line 1 gave B_c = %lld and %s B. Before a paper's "
               "formula meets a byte count, divide by the element size (%d B for %s).",
               (long long)pp.Bc, num(pp.sram_peak), e, sim_dtype_name(sh.dtype));

    lesson_step(L, "What does fit");
    if (sq > 0) {
        const lesson_question qb = { .answer = (double)sq, .discrete = 1 };
        lesson_ask_q(L, &qb, "What is the largest square block B_r = B_c, a multiple of 16, "
                     "whose buffers fit in M = %s B?", num(sh.M));
        lesson_print(L, "  largest square block: %lld x %lld\n", (long long)sq, (long long)sq);
        if (next.Br > 0)
            lesson_print(L, "  the next, %lld x %lld, needs %s B\n", (long long)next.Br,
                         (long long)next.Bc, num(next.sram_peak));
        lesson_print(L, "\n");
    } else {
        lesson_say(L, "No square block of a multiple of 16 rows, up to N = %lld, fits "
                   "in M = %s B at d = %lld.", (long long)sh.N, num(sh.M), (long long)sh.d);
    }
    if (best_ok)
        lesson_say(L, "fasim's own search keeps the plan that fits with the fewest HBM "
                   "bytes, square or not: B_r = %lld, B_c = %lld, using %s B.",
                   (long long)t.Br, (long long)t.Bc, num(t.sram_peak));
    else
        lesson_say(L, "No %s plan fits at all: %s", sim_algo_name(algo), err);

    /* ---- summary ------------------------------------------------------- */
    lesson_step(L, "Summary");
    lesson_say(L, "- One block holds Q_i, K_j, V_j in the dtype and S_ij, O_i, m_i, l_i in "
               "fp32: %s B here for %lld x %lld blocks.\n"
               "- The article's 128^2 x 2 + 3 x 128 x 128 x 2 is %s B, not %s; with O_i "
               "%s, and %s with fasim's fp32 accumulators.\n"
               "- Line 1: B_c = ceil(M/4d), B_r = min(ceil(M/4d), d), M in elements "
               "(M bytes / %d); its tiles can need 1.25 M.\n"
               "Next: lesson 7 (io-complexity) shows how the block sizes set the HBM "
               "traffic.", num(p.sram_peak), (long long)p.Br, (long long)p.Bc,
               num(s16 + qkv), num(qkv), human(s16 + qkv + o16), human(art.sram_peak), e);
}

const lesson_def lesson_tiling_budget = {
    "tiling-budget", 6, "The SRAM budget of one block", "intermediate", 10,
    "SRAM per block; the article's 96 KB",
    "--N N       sequence length, up to 2^30; blocks never exceed it (default 1024)\n"
    "--d D       head dimension, up to 65536 (default 64)\n"
    "--M BYTES   SRAM of one thread block, in bytes: 98304, 96K (default 96K)\n"
    "--dtype T   fp16, bf16 or fp32 for Q, K, V, O (default fp16)\n"
    "--algo A    fa2 or fa1, whose buffers are counted (default fa2)\n"
    "--Br B      query block rows, up to 2^30 (default 64)\n"
    "--Bc B      key/value block rows, up to 2^30 (default 64)\n",
    run,
};
