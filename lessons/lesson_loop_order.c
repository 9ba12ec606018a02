/*******************************************************************************
*
*   fasim lesson 8 - loop-order: K/V outer (FA1) against Q outer (FA2)
*
*   Level:     [★★☆] 2/3 intermediate              Minutes: about 10
*
*   Goal:      run FlashAttention-1 and FlashAttention-2 on the same blocks
*              and read, tensor by tensor, what each re-reads and re-writes.
*   After it:  you can say which loop is outer in each paper's Algorithm 1;
*              predict how often Q, K, V, O, l, m move for any T_r, T_c; say
*              why FA2 writes O once; and put right the article's claim that FA2
*              moved K/V to the outer loop.
*
*   Options:   --N N       sequence length, 1 to 262144 (default 1024)
*              --d D       head dimension (default 64)
*              --M BYTES   SRAM of one thread block in bytes: 98304, 96K (default)
*              --dtype T   fp16 (default), bf16 or fp32
*              --block B   B_r = B_c = B for both (default: the report's tiles,
*                          --plan same; else the largest multiple of 16 whose
*                          FA1 buffers fit in M)
*              --Br B      query block rows (default: the block)
*              --Bc B      key/value block rows (default: the block)
*
*   Run:       fasim lesson loop-order --N 2048 --block 32
*
*   Numbers:   count-only runs (sim_run) of sim/algo_fa1.c and sim/algo_fa2.c
*              on the same block sizes; FA1's errors with both intermediates
*              (sim_inter) against the float64 oracle, on seeded inputs.
*
*******************************************************************************/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "lesson.h"
#include "ref_oracle.h"
#include "sim_claims.h"
#include "sim_parse.h"
#include "sim_limits.h"
#include "sim_report.h"

static uint64_t total_bytes(const sim_counts *c, sim_dtype dt)
{
    return sim_counts_read_bytes(c, dt) + sim_counts_write_bytes(c, dt);
}

/* The largest |O - O_ref| of FA1 on blocks Br x Bc with intermediates x,
 * on seed 1's inputs rounded to the dtype; O_ref is attention in float64. */
static double fa1_error(lesson *L, const sim_shape *sh, int64_t Br, int64_t Bc, sim_inter x,
                        const float *Q, const float *K, const float *V, const double *O_ref)
{
    const sim_run_opts run = { .intermediates = (int)x };
    sim_plan p;
    sim_result res;
    char err[1024];
    sim_plan_make(SIM_FA1, sh, &run, Br, Bc, SIM_PLAN_USER, &p);
    if (sim_run(SIM_FA1, sh, &p, Q, K, V, NULL, &res, err, sizeof err) != 0)
        lesson_fail(L, "%s", err);
    double e = 0.0;
    for (int64_t k = 0; k < sh->N * sh->d; k++) {
        const double a = fabs((double)res.O[k] - O_ref[k]);
        e = a > e ? a : e;
    }
    sim_result_free(&res);
    return e;
}

/* The step on what FA1's running output is kept in: both errors, live,
 * where the run is small enough to compute in a moment. */
static void precision_step(lesson *L, const sim_shape *sh, int64_t Br, int64_t Bc)
{
    lesson_step(L, "What the running output is kept in");
    lesson_say(L, "Line 12 writes O_i to HBM at every step. Stored there in %s, it would "
               "be rounded T_c times, and the roundings add up. The released FA1 kernel "
               "keeps O_i between key blocks in an fp32 buffer in HBM (its o_tmp; fasim's "
               "O_acc, 4 bytes an element, as counted above) and writes O in %s once, "
               "at the last step.", sim_dtype_name(sh->dtype), sim_dtype_name(sh->dtype));
    const double nnd = (double)sh->N * (double)sh->N * (double)sh->d;
    if (nnd > (double)(1 << 27)) {
        lesson_say(L, "(At N = %lld, d = %lld the lesson does not compute the outputs; "
                   "--N 1024 --d 64 shows both errors in a moment.)", (long long)sh->N,
                   (long long)sh->d);
        return;
    }
    const size_t n = (size_t)(sh->N * sh->d);
    float *Q = malloc(n * sizeof *Q), *K = malloc(n * sizeof *K), *V = malloc(n * sizeof *V);
    double *O_ref = malloc(n * sizeof *O_ref);
    if (!Q || !K || !V || !O_ref)
        lesson_fail(L, "out of memory for the inputs");
    sim_random_inputs(1, sh->N, sh->d, sh->dtype, Q, K, V);
    if (ref_oracle_attention_f(Q, K, V, sh->N, sh->d, 0, O_ref, NULL) != 0)
        lesson_fail(L, "out of memory for the float64 reference");
    const double e_k = fa1_error(L, sh, Br, Bc, SIM_INTER_KERNEL, Q, K, V, O_ref);
    const double e_p = fa1_error(L, sh, Br, Bc, SIM_INTER_PAPER, Q, K, V, O_ref);
    char stored[64];
    snprintf(stored, sizeof stored, "O_i stored in %s at every step", sim_dtype_name(sh->dtype));
    lesson_print(L, "  FA1 on seed 1's inputs, max |O - O_ref| against float64:\n"
                    "    %-42s %.3e\n    %-42s %.3e\n\n",
                 "O_i in fp32 between steps (the kernel's)", e_k, stored, e_p);
    if (sh->dtype == SIM_FP32)
        lesson_say(L, "In fp32 the two keep the same values, up to P~, which the kernel's "
                   "way rounds to the dtype before P~ V as tensor cores take it.");
    else
        lesson_say(L, "The per-step rounding costs %.1f times the error. (The kernel's way "
                   "also rounds P~ to %s before P~ V, as tensor cores take it.) fasim "
                   "computes the kernel's way by default; --intermediates paper computes "
                   "the listing's.", e_k > 0.0 ? e_p / e_k : 0.0, sim_dtype_name(sh->dtype));
    free(Q);
    free(K);
    free(V);
    free(O_ref);
}

/* A count-only run of algo on blocks Br x Bc; ends the lesson if they do not
 * fit, with fasim's explanation (the buffers, and sizes that fit). */
static void measure(lesson *L, sim_algo a, const sim_shape *sh, int64_t Br, int64_t Bc,
                    sim_plan *p, sim_counts *c)
{
    char err[1024];
    sim_result res;
    sim_plan_make(a, sh, NULL, Br, Bc, SIM_PLAN_USER, p);
    if (!p->fits) {
        sim_plan_explain_misfit(p, sh, err, sizeof err);
        lesson_fail(L, "%s", err);
    }
    if (sim_theory_counts(p, sh, c) != 0)
        lesson_fail(L, "N = %lld, d = %lld: the counts overflow 64 bits", (long long)sh->N,
                    (long long)sh->d);
    if (sim_run(a, sh, p, NULL, NULL, NULL, NULL, &res, err, sizeof err) != 0)
        lesson_fail(L, "%s", err);
    *c = res.counts;
    sim_result_free(&res);
}

/* The largest square block (a multiple of 16, or N when N < 16) whose FA1
 * buffers fit; FA2's buffers are a subset of FA1's, so it fits FA2 too.
 * Returns 0 when none fits. */
static int64_t largest_square(const sim_shape *sh)
{
    sim_plan t;
    int64_t best = 0, lo = 1, hi = sh->N / 16;
    if (sh->N < 16) {
        sim_plan_make(SIM_FA1, sh, NULL, sh->N, sh->N, SIM_PLAN_USER, &t);
        return t.fits ? sh->N : 0;
    }
    while (lo <= hi) {
        int64_t mid = lo + (hi - lo) / 2;
        sim_plan_make(SIM_FA1, sh, NULL, 16 * mid, 16 * mid, SIM_PLAN_USER, &t);
        if (t.fits) {
            best = 16 * mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return best;
}

static void show_counts(lesson *L, const sim_counts *c1, const sim_counts *c2,
                        const sim_shape *sh)
{
    static const sim_tensor T[] = { SIM_Q, SIM_K, SIM_V, SIM_O, SIM_Oacc, SIM_m, SIM_l, SIM_L };
    const double Nd = (double)sh->N * (double)sh->d, N = (double)sh->N;
    lesson_print(L, "  %-12s %15s %8s %15s %8s\n", "elements", "FA1", "times", "FA2", "times");
    for (int k = 0; k < 8; k++) {
        const double unit = T[k] <= SIM_O || T[k] == SIM_Oacc ? Nd : N;
        for (int w = 0; w < 2; w++) {
            uint64_t a = w ? c1->write_elems[T[k]] : c1->read_elems[T[k]];
            uint64_t b = w ? c2->write_elems[T[k]] : c2->read_elems[T[k]];
            if (a == 0 && b == 0)
                continue;
            char what[24];
            snprintf(what, sizeof what, "%s %s", sim_tensor_name(T[k]), w ? "write" : "read");
            lesson_print(L, "  %-12s %15s %8.2f %15s %8.2f\n", what, lesson_num(a), (double)a / unit,
                         lesson_num(b), (double)b / unit);
        }
    }
    lesson_print(L, "  %-12s %15s %8s %15s\n\n", "bytes", lesson_num(total_bytes(c1, sh->dtype)), "",
                 lesson_num(total_bytes(c2, sh->dtype)));
}

static void run(lesson *L)
{
    /* ---- setup: options and inputs ------------------------------------ */
    sim_shape sh = { 0 };
    sh.N = lesson_opt_int(L, "N", 1024, 1, (int64_t)1 << 18);
    sh.d = lesson_opt_int(L, "d", 64, 1, 4096);
    sh.M = lesson_opt_size(L, "M", "96K");
    const char *dt_name = lesson_opt_string(L, "dtype", "fp16");
    if (sim_dtype_parse(dt_name, &sh.dtype) != 0 || sim_dtype_is_fp8(sh.dtype))
        lesson_fail(L, "--dtype %s: use fp16, bf16 or fp32", sim_shown(dt_name).s);
    if (sh.M < 1 || sh.M > SIM_MAX_M)     /* the command line's limit */
        lesson_fail(L, "--M %llu: give between 1 B and 1 GiB", (unsigned long long)sh.M);
    /* The default block is the report's (--plan same), so that the bytes here
     * are the report's; where no square fits every loop order, the largest
     * that fits FA1. When none fits, 1 x 1 does not either and measure()
     * explains why. */
    const int64_t rt = sim_report_default_tiles(&sh);
    const int64_t sq = rt ? rt : largest_square(&sh);
    const int64_t block = lesson_opt_int(L, "block", sq ? sq : 1, 1, (int64_t)1 << 18);
    const int64_t Br = lesson_opt_int(L, "Br", block, 1, (int64_t)1 << 18);
    const int64_t Bc = lesson_opt_int(L, "Bc", block, 1, (int64_t)1 << 18);
    sim_plan p1, p2;
    sim_counts c1, c2;
    measure(L, SIM_FA1, &sh, Br, Bc, &p1, &c1);
    measure(L, SIM_FA2, &sh, Br, Bc, &p2, &c2);
    const uint64_t Nd = (uint64_t)sh.N * (uint64_t)sh.d;

    /* ---- steps --------------------------------------------------------- */
    lesson_step(L, "Two loop nests, one computation");
    lesson_say(L, "N = %lld, d = %lld, %s, M = %s B. Both algorithms cut Q, O into T_r = %lld "
               "blocks of B_r = %lld rows and K, V into T_c = %lld blocks of B_c = %lld "
               "rows, do the same arithmetic on each pair (i, j) and produce the same O. "
               "Only the order of the two loops differs.%s First FA1:", (long long)sh.N,
               (long long)sh.d, sim_dtype_name(sh.dtype), lesson_num(sh.M), (long long)p1.Tr,
               (long long)p1.Br, (long long)p1.Tc, (long long)p1.Bc,
               rt && Br == rt && Bc == rt ? " These are the report's tiles (--plan same), so "
               "its byte counts are the ones below." : "");
    lesson_print(L, "  FA1 (Dao et al. 2022, Algorithm 1): K/V outer\n"
                    "     2    write O = 0, l = 0, m = -inf to HBM\n"
                    "     5    for j = 1 .. T_c (%lld):\n"
                    "     6      load K_j, V_j\n"
                    "     7      for i = 1 .. T_r (%lld):\n"
                    "     8        load Q_i, O_i, l_i, m_i\n"
                    "     9-11     update O_i, l_i, m_i\n"
                    "     12-13    store O_i, l_i, m_i\n\n",
                 (long long)p1.Tc, (long long)p1.Tr);
    const lesson_question q1 = { .answer = (double)c1.read_elems[SIM_Q] / (double)Nd,
                                 .discrete = 1 };
    lesson_ask_q(L, &q1, "In FA1, how many times is each row of Q read from HBM?");
    lesson_say(L, "T_c = %lld times: line 8 loads Q_i once for every outer step j, because "
               "the inner loop over i starts again each time.", (long long)p1.Tc);

    /* FA2's listing on a step of its own, so that each fits a 24-line terminal. */
    lesson_step(L, "The same loops, swapped");
    lesson_say(L, "FA2 does the same arithmetic on the same %lld x %lld blocks, with the two "
               "loops the other way round:", (long long)p2.Br, (long long)p2.Bc);
    lesson_print(L, "  FA2 (Dao 2023, Algorithm 1): Q outer\n"
                    "     3    for i = 1 .. T_r (%lld):\n"
                    "     4      load Q_i\n"
                    "     6      for j = 1 .. T_c (%lld):\n"
                    "     7        load K_j, V_j\n"
                    "     8-10     update O_i, m_i, l_i, on chip\n"
                    "     12-13  normalise O_i; L_i = m_i + log l_i\n"
                    "     14-15  store O_i, L_i\n\n",
                 (long long)p2.Tr, (long long)p2.Tc);

    lesson_step(L, "FA1 keeps its running state in HBM");
    lesson_say(L, "With K/V outer, a row block's output O_i is finished only after the last "
               "j. Between two visits it waits in HBM, with its statistics l_i and m_i.");
    /* The running output: O itself in the paper's listing, fp32 O_acc between
     * visits and O at the last as the released kernel keeps it (sim_inter). */
    const uint64_t O_wr = c1.write_elems[SIM_O] + c1.write_elems[SIM_Oacc];
    const lesson_question q2 = { .answer = (double)O_wr, .discrete = 1,
        .known = { { (double)Nd * (double)p1.Tc, 0, "That is T_c N d, one write per step; "
                     "line 2 also writes O's zeros once before the loop." },
                   { (double)O_wr * sim_dtype_bytes(sh.dtype), 0, LESSON_WHY_BYTES } } };
    lesson_ask_q(L, &q2, "N d = %s and T_c = %lld. How many elements of O does FA1 write in "
                 "all?", lesson_num(Nd), (long long)p1.Tc);
    lesson_say(L, "%s = (T_c + 1) N d: line 2 writes zeros once, then line 12 writes every "
               "O_i again at each of the T_c outer steps, and line 8 reads it back T_c "
               "times. l and m do the same, N values each per pass; K and V are read once. "
               "Between visits the released kernel keeps O_i in fp32 (O_acc, 4 bytes an "
               "element) and writes O in the dtype only at the last step, so that rounding "
               "O_i at every step does not add up.",
               lesson_num(O_wr));
    lesson_view(L, SIM_FA1, &sh, Br, Bc);

    lesson_step(L, "FA2 keeps it on chip");
    lesson_say(L, "With Q outer, the inner loop over j sees every key block for one Q_i "
               "before moving on. O_i, m_i and l_i stay in SRAM the whole time; when the "
               "inner loop ends, O_i is final, so line 14 writes it once and line 15 writes "
               "its logsumexp L_i once. Nothing is read back.");
    const lesson_question q3 = { .answer = (double)c2.read_elems[SIM_K] / (double)Nd,
                                 .discrete = 1 };
    lesson_ask_q(L, &q3, "In FA2, how many times is K read from HBM?");
    lesson_say(L, "T_r = %lld times: K_j and V_j are what FA2 reloads at every inner "
               "step. O is written exactly once: %s elements = N d.", (long long)p2.Tr,
               lesson_num(c2.write_elems[SIM_O]));
    lesson_view(L, SIM_FA2, &sh, Br, Bc);

    lesson_step(L, "Side by side");
    const double ratio = (double)total_bytes(&c1, sh.dtype) / (double)total_bytes(&c2, sh.dtype);
    lesson_askf(L, ratio, "FA1's total bytes divided by FA2's: what is it?");
    show_counts(L, &c1, &c2, &sh);
    lesson_print(L, "  FA1 / FA2, bytes: %.4f; bytes written: %s against %s\n\n", ratio,
                 lesson_num(sim_counts_write_bytes(&c1, sh.dtype)),
                 lesson_num(sim_counts_write_bytes(&c2, sh.dtype)));
    lesson_say(L, "Per outer step FA1 re-reads Q and re-reads and re-writes O (3 N d "
               "elements, plus 4 N of statistics); FA2 re-reads K and V (2 N d). Writes "
               "show the difference most: FA1 writes O T_c + 1 times, FA2 once. "
               "(\"times\" is the count over N d, or over N for m, l, L.)");

    precision_step(L, &sh, Br, Bc);

    lesson_step(L, "The article had the loops backwards");
    lesson_say(L, "Section 6.1 of " SIM_ARTICLE_A " (docs/sources.md, quote 12) says "
               "FA2 changed the loops to K/V outer and Q inner, and that FA1 had Q outer; "
               "its FA2 sketch puts the K/V "
               "loop outside. It is the reverse, and the counts show it: the order that "
               "reads K once is K/V outer, and that is FA1 (%s elements of K read, = N d), "
               "while FA2 reads K %s elements (T_r N d).", lesson_num(c1.read_elems[SIM_K]),
               lesson_num(c2.read_elems[SIM_K]));
    const lesson_question q4 = { .answer = (double)Nd * 4.0, .discrete = 1, .known = {
        { (double)Nd, 0, LESSON_WHY_ELEMENTS },
        { (double)Nd * 2.0, 0, "That is O in fp16, 2 B an element; the question keeps it in "
                               "fp32, 4 B an element." } } };
    lesson_ask_q(L, &q4, "Could a K/V-outer loop keep O on chip instead? All of O, %lld x %lld "
                 "in fp32, needs how many bytes?", (long long)sh.N, (long long)sh.d);
    if (Nd * 4u > sh.M)
        lesson_say(L, "%s B, %.1f times M = %s B: it cannot stay on chip, so with K/V outer "
                   "O goes back to HBM after every step, which is FA1's extra traffic. Q "
                   "outer needs only one O_i on chip: B_r x d x 4 = %s B.", lesson_num(Nd * 4u),
                   (double)Nd * 4.0 / (double)sh.M, lesson_num(sh.M),
                   lesson_num((uint64_t)p2.Br * (uint64_t)sh.d * 4u));
    else
        lesson_say(L, "%s B: at this tiny N all of O would fit in M = %s B, but that "
                   "stops being true as soon as N d x 4 passes M; Q outer needs only one "
                   "O_i on chip whatever N is.", lesson_num(Nd * 4u), lesson_num(sh.M));

    /* ---- summary ------------------------------------------------------- */
    lesson_step(L, "Summary");
    lesson_say(L, "- FA1 (Dao et al. 2022, Algorithm 1) is K/V outer, Q inner: K and V are "
               "read once; Q is read T_c times; O, l, m are read T_c times and written "
               "T_c + 1 times (line 2's zeros, then every step).\n"
               "- FA2 (Dao 2023, Algorithm 1) is Q outer, K/V inner: Q is read once, O "
               "and L are written once, K and V are read T_r times.\n"
               "- Here, with %lld x %lld blocks, FA1 moves %.2f times FA2's bytes and "
               "writes %.1f times as many.\n"
               "- The article's claim that FA2 moved K/V to the outer loop is the reverse "
               "of both papers.\n"
               "Next: lesson 9 (causal) counts the blocks a causal mask lets FA skip.",
               (long long)p1.Br, (long long)p1.Bc, ratio,
               (double)sim_counts_write_bytes(&c1, sh.dtype) /
                   (double)sim_counts_write_bytes(&c2, sh.dtype));
}

const lesson_def lesson_loop_order = {
    "loop-order", 8, "Loop order: K/V outer (FA1) against Q outer (FA2)", "intermediate", 10,
    "FA1 vs FA2: what is re-read",
    "--N N       sequence length, up to 262144 (default 1024)\n"
    "--d D       head dimension, up to 4096 (default 64)\n"
    "--M BYTES   SRAM of one thread block, in bytes: 98304, 96K (default 96K)\n"
    "--dtype T   fp16, bf16 or fp32 for Q, K, V, O (default fp16)\n"
    "--block B   square blocks B_r = B_c = B for both, up to 262144 (default:\n"
    "            the square tiles the report uses; else the largest multiple of 16\n"
    "            whose FA1 buffers fit in M)\n"
    "--Br B      query block rows, up to 262144 (default: the block)\n"
    "--Bc B      key/value block rows, up to 262144 (default: the block)\n",
    run,
};
