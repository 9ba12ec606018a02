/*******************************************************************************
*
*   fasim lesson 7 - io-complexity: bytes moved, measured beside Theorem 2
*
*   Level:     [★★★] 3/3 advanced                  Minutes: about 15
*
*   Goal:      measure the HBM traffic of standard attention, FlashAttention-1
*              and FlashAttention-2 for your N, d and M, and read it against
*              Theorem 2 and Proposition 3 of the FlashAttention paper.
*   After it:  you can say which terms grow as N doubles and which shrink as
*              M doubles; tell a Theta expression from a count; convert M to
*              elements before using a formula; and judge a claim such as
*              "d^2/M = 0.095, so about 10x less IO".
*
*   Options:   --N N       sequence length, 1 to 262144 (default 1024)
*              --d D       head dimension (default 64)
*              --M BYTES   SRAM of one thread block in bytes: 98304, 96K (default)
*              --dtype T   fp16 (default), bf16 or fp32
*
*   Run:       fasim lesson io-complexity --N 4096 --M 192K
*
*   Numbers:   count-only runs of the loop nests (sim_run) on the report's
*              tiles (sim_report_default_tiles: one square for all, --plan same),
*              checked against sim_theory_counts; the bounds from
*              sim_theory_bounds.
*
*******************************************************************************/
#include <math.h>
#include <stdio.h>

#include "lesson.h"
#include "sim_claims.h"
#include "sim_parse.h"
#include "sim_limits.h"
#include "sim_report.h"

static const char *numd(double x)
{
    return lesson_num((uint64_t)(x + 0.5));
}

/* The traffic of one loop order on the report's tiles. */
typedef struct {
    sim_plan plan;
    uint64_t elems, bytes;
    int ok;          /* 0: no plan fits, or the counts overflow */
    int matches;     /* measured: equal to the closed form */
} traffic;

static const sim_algo ALGOS[3] = { SIM_NAIVE, SIM_FA1, SIM_FA2 };

/* The plan the report gives algo on sh: the square of tiles t (its --plan
 * same), or the best plan when t is 0 (no square fits every loop order). */
static int report_plan(sim_algo a, const sim_shape *sh, int64_t t, sim_plan *p, char *err,
                       size_t errlen)
{
    return sim_plan_choose(a, sh, NULL, t ? SIM_PLAN_USER : SIM_PLAN_AUTO, t, t, p, err,
                           errlen);
}

/* Closed-form traffic of algo on sh (no run), on the report's tiles t, or
 * on its best plan when t is 0. */
static traffic theory(sim_algo a, const sim_shape *sh, int64_t t)
{
    traffic tr = { 0 };
    sim_counts c;
    if (report_plan(a, sh, t, &tr.plan, NULL, 0) != 0 ||
        sim_theory_counts(&tr.plan, sh, &c) != 0)
        return tr;
    tr.elems = sim_counts_elems(&c);
    tr.bytes = sim_counts_read_bytes(&c, sh->dtype) + sim_counts_write_bytes(&c, sh->dtype);
    tr.ok = 1;
    return tr;
}

/* Measured traffic: a count-only run of the loop nest. Ends the lesson with
 * the planner's message if nothing fits. */
static traffic measure(lesson *L, sim_algo a, const sim_shape *sh, int64_t tiles)
{
    traffic t = { 0 };
    char err[1024];
    sim_counts c;
    sim_result res;
    if (report_plan(a, sh, tiles, &t.plan, err, sizeof err) != 0)
        lesson_fail(L, "%s", err);
    if (sim_theory_counts(&t.plan, sh, &c) != 0)
        lesson_fail(L, "N = %lld, d = %lld: the counts overflow 64 bits", (long long)sh->N,
                    (long long)sh->d);
    if (sim_run(a, sh, &t.plan, NULL, NULL, NULL, NULL, &res, err, sizeof err) != 0)
        lesson_fail(L, "%s", err);
    t.matches = sim_counts_equal(&res.counts, &c);
    t.elems = sim_counts_elems(&res.counts);
    t.bytes = sim_counts_read_bytes(&res.counts, sh->dtype) +
              sim_counts_write_bytes(&res.counts, sh->dtype);
    sim_result_free(&res);
    t.ok = 1;
    return t;
}

/* A table of bytes before and after a change, with the factor. */
static void show_change(lesson *L, const char *col, const traffic *a, const traffic *b)
{
    lesson_print(L, "  %-6s %16s %18s %9s\n", "order", "bytes now", col, "factor");
    for (int k = 0; k < 3; k++) {
        if (b[k].ok)
            lesson_print(L, "  %-6s %16s %18s %9.4f\n", sim_algo_name(ALGOS[k]),
                         lesson_num(a[k].bytes), lesson_num(b[k].bytes),
                         (double)b[k].bytes / (double)a[k].bytes);
        else
            lesson_print(L, "  %-6s %16s %18s\n", sim_algo_name(ALGOS[k]), lesson_num(a[k].bytes),
                         "no plan");
    }
    lesson_print(L, "\n");
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
    const int e = sim_dtype_bytes(sh.dtype);
    const double N = (double)sh.N, d = (double)sh.d;
    traffic now[3], twoN[3], twoM[3];
    sim_shape sN = sh, sM = sh;
    sN.N = 2 * sh.N;
    sM.M = 2 * sh.M;
    const int64_t tiles = sim_report_default_tiles(&sh);
    const int64_t tN = sim_report_default_tiles(&sN), tM = sim_report_default_tiles(&sM);
    for (int k = 0; k < 3; k++) {
        now[k] = measure(L, ALGOS[k], &sh, tiles);
        twoN[k] = theory(ALGOS[k], &sN, tN);
        twoM[k] = theory(ALGOS[k], &sM, tM);
    }
    /* The figure on each order's best plan (fasim sweep's, --plan best). */
    const traffic best_nv = theory(SIM_NAIVE, &sh, 0), best_f2 = theory(SIM_FA2, &sh, 0);
    const sim_bounds b = sim_theory_bounds(&sh);
    const traffic *nv = &now[0], *f2 = &now[2];

    /* ---- steps --------------------------------------------------------- */
    lesson_step(L, "One problem, three loop orders");
    lesson_say(L, "Attention on N = %lld rows with head dimension d = %lld in %s, and an "
               "SRAM of M = %s B. Three loop orders compute the same "
               "O = softmax(QK^T / sqrt(d)) V. Standard attention (Algorithm 0 of the "
               "FlashAttention paper) writes S = QK^T and P = softmax(S) to HBM and reads "
               "them back. FlashAttention-1 and -2 keep S and P on chip, block by block.",
               (long long)sh.N, (long long)sh.d, sim_dtype_name(sh.dtype), lesson_num(sh.M));
    const lesson_question qs = { .answer = N * N * e, .discrete = 1, .known = {
        { N * N, 0, LESSON_WHY_ELEMENTS } } };
    lesson_ask_q(L, &qs, "S is N x N = %lld x %lld in %s, %d B an element. How many bytes "
                 "is one copy of S?", (long long)sh.N, (long long)sh.N,
                 sim_dtype_name(sh.dtype), e);
    lesson_say(L, "Standard attention writes S and P and reads each back at least once: "
               "4 N^2 x %d B = %s B, before it has read Q, K, V or written O.", e,
               numd(4.0 * N * N * e));

    lesson_step(L, "Measured traffic");
    if (tiles) {
        lesson_say(L, "Each loop nest ran count-only (the counters move, no data does) on "
                   "the report's tiles: B_r = B_c = %lld, the largest square that every loop "
                   "order fits in M (--plan same, the report's default), so these are the "
                   "figures the report prints:", (long long)tiles);
        lesson_print(L, "    fasim --N %lld --d %lld --M %llu%s%s\n\n", (long long)sh.N,
                     (long long)sh.d, (unsigned long long)sh.M,
                     sh.dtype != SIM_FP16 ? " --dtype " : "",
                     sh.dtype != SIM_FP16 ? sim_dtype_name(sh.dtype) : "");
    } else
        lesson_say(L, "Each loop nest ran count-only (the counters move, no data does). No "
                   "square fits every loop order in M, so each ran on its best plan, as the "
                   "report does then.");
    lesson_print(L, "  %-6s %11s %16s %16s  %s\n", "order", "B_r x B_c", "elements",
                 "bytes", "closed form");
    for (int k = 0; k < 3; k++) {
        char blk[40];
        snprintf(blk, sizeof blk, "%lld x %lld", (long long)now[k].plan.Br,
                 (long long)now[k].plan.Bc);
        lesson_print(L, "  %-6s %11s %16s %16s  %s\n", sim_algo_name(ALGOS[k]), blk,
                     lesson_num(now[k].elems), lesson_num(now[k].bytes),
                     now[k].matches ? "equal" : "DIFFERS");
    }
    lesson_print(L, "\n");
    const double frac = (double)f2->bytes / (double)nv->bytes;
    lesson_question qf = { .answer = frac };
    if (best_nv.ok && best_f2.ok && tiles) {
        const double bf = (double)best_f2.bytes / (double)best_nv.bytes;
        if (fabs(bf - frac) > 0.005 * frac)
            qf.known[0] = (lesson_known){ bf, 0, "That is the figure on each loop order's "
                "own best plan (fasim sweep's, fasim --plan best). This lesson, like the "
                "report, runs all three on the same tiles." };
    }
    lesson_ask_q(L, &qf, "FlashAttention-2 moves what fraction of standard attention's "
                 "bytes?");
    lesson_print(L, "  FA1 / standard, bytes: %.4f\n", (double)now[1].bytes / (double)nv->bytes);
    lesson_print(L, "  FA2 / standard, bytes: %.4f\n\n", frac);
    lesson_say(L, "fasim's closed forms, derived from the pseudocode, give the same counts "
               "tensor by tensor (the last column).");

    lesson_step(L, "Theorem 2: the shape of the counts");
    lesson_say(L, "Theorem 2 of the paper: standard attention makes Theta(N d + N^2) HBM "
               "accesses, FlashAttention Theta(N^2 d^2 / M), for d <= M <= N d. Accesses "
               "count elements, and so does M: %s B / %d B = %s elements.", lesson_num(sh.M), e,
               numd(b.M_elems));
    if (b.in_regime)
        lesson_say(L, "Here d = %lld <= M = %s <= N d = %s: the theorem speaks about this "
                   "configuration.", (long long)sh.d, numd(b.M_elems), numd(N * d));
    else
        lesson_say(L, "Here d <= M <= N d does not hold (d = %lld, M = %s, N d = %s): the "
                   "theorem makes no claim, though every count below is still exact.",
                   (long long)sh.d, numd(b.M_elems), numd(N * d));
    const lesson_question qt = { .answer = b.theta_flash, .known = {
        { N * N * d * d / (double)sh.M, 0, "That takes M in bytes; the theorem's M counts "
                                           "elements, so divide the bytes by the element "
                                           "size first." } } };
    lesson_ask_q(L, &qt, "What is N^2 d^2 / M for these numbers, M in elements?");
    lesson_print(L, "  Theta(N d + N^2)   = %14s   standard measured: %.2f x that\n",
                 numd(b.theta_standard), (double)nv->elems / b.theta_standard);
    /* FA2's multiple is the next step's question: only FA1's here. */
    lesson_print(L, "  Theta(N^2 d^2 / M) = %14s   FA1 measured: %.2f x that\n\n",
                 numd(b.theta_flash), (double)now[1].elems / b.theta_flash);
    lesson_say(L, "Theta drops constant factors, so an expression is not a count: the "
               "measured count divided by it is the constant hidden in Theta for this "
               "configuration. What Theta does promise is how the counts grow.");
    lesson_say(L, "Section 2.2 of " SIM_ARTICLE_A " (docs/sources.md, quotes 3 and 4) "
               "gives standard attention O(N^2 d + N^2), and elsewhere Theta(N^2 d). "
               "Theorem 2 says Theta(N d + N^2): "
               "the N^2 matrices S and P cost N^2 each, not N^2 d; d multiplies the flops, "
               "not the traffic.");

    lesson_step(L, "The lower bound and the floor");
    lesson_say(L, "Proposition 3: no exact attention algorithm can make o(N^2 d^2 / M) "
               "accesses for all M in [d, N d]. FlashAttention's count has that very form, "
               "so up to a constant it cannot be beaten. Separately, any algorithm reads "
               "Q, K, V and writes O at least once: 4 N d = %s elements.",
               numd(b.io_floor));
    lesson_ask(L, "How many times the lower bound N^2 d^2 / M does FA2 move, in elements?",
               (double)f2->elems / b.lower_bound, 0);
    lesson_print(L, "  FA2 measured              %16s elements\n", lesson_num(f2->elems));
    lesson_print(L, "  lower bound N^2 d^2 / M   %16s   FA2 / it: %.4f\n", numd(b.lower_bound),
                 (double)f2->elems / b.lower_bound);
    lesson_print(L, "  floor 4 N d               %16s   FA2 / it: %.4f\n\n", numd(b.io_floor),
                 (double)f2->elems / b.io_floor);

    lesson_step(L, "What grows when N doubles");
    /* 4 is the concept (the N^2 terms); the N d terms keep the count below it. */
    const lesson_question qn = {
        .answer = twoN[0].ok ? (double)twoN[0].bytes / (double)nv->bytes : 0.0,
        .known = { { 4.0, 1, twoN[0].ok ? "4 is what the N^2 terms do: S and P, written and "
                     "read back, quadruple. Reading Q, K, V and writing O grow like N d and "
                     "only double, so the whole count grows by a little less than 4." : NULL } } };
    lesson_ask_q(L, &qn, "N doubles to %s. By what factor does standard attention's byte "
                 "count grow?", lesson_num(sN.N));
    show_change(L, "bytes at 2N", now, twoN);
    lesson_say(L, "The N^2 terms quadruple: standard attention's S and P, and "
               "FlashAttention's repeated reads (K and V in FA2, Q and O in FA1), whose "
               "count is about N^2 d^2 / M. Only the once-only terms, like reading Q and "
               "writing O, merely double. So for fixed d and M FlashAttention wins by a "
               "factor that stays roughly constant as N grows.");

    lesson_step(L, "What shrinks when M doubles");
    /* 1/2 is the concept while FA2 re-reads K and V (T_r > 1); its once-only
     * terms keep the count above it. */
    const lesson_question qm = {
        .answer = twoM[2].ok ? (double)twoM[2].bytes / (double)f2->bytes : 0.0,
        .known = { { 0.5, 1, twoM[2].ok && f2->plan.Tr > 1 ? "1/2 is what N^2 d^2 / M "
                     "does, and FA2's re-reads of K and V roughly follow it. Its once-only "
                     "terms (Q in, O and L out) do not shrink, and block sizes move in "
                     "steps, so the exact factor is not 1/2." : NULL } } };
    lesson_ask_q(L, &qm, "M doubles to %s B. By what factor does FA2's byte count change?",
                 lesson_num(sM.M));
    show_change(L, "bytes at 2M", now, twoM);
    if (f2->plan.Tr > 1)
        lesson_say(L, "N^2 d^2 / M halves, and FA2's re-reads of K and V roughly follow "
                   "that: larger blocks mean fewer passes. Its once-only terms (Q in, O and "
                   "L out) do not shrink.");
    else
        lesson_say(L, "Here FA2's query block already holds all N rows (T_r = 1): K and V "
                   "are read once, so more SRAM cannot cut its traffic further.");
    if (twoM[0].ok && twoM[0].plan.softmax_passes < nv->plan.softmax_passes)
        lesson_say(L, "Standard attention gains here for another reason: at 2M a whole row "
                   "of S fits in SRAM, so its softmax reads S once instead of three times.");
    else
        lesson_say(L, "Standard attention gains little: its S and P traffic is N^2 per "
                   "pass whatever M is; only its re-reads of K and V shrink.");

    lesson_step(L, "What the expressions promise, and the article's \"10x\"");
    const double ratio = b.theta_flash / b.theta_standard;
    lesson_ask(L, "Divide the two expressions: (N^2 d^2 / M) / (N d + N^2). What is it?",
               ratio, 0);
    lesson_say(L, "For N much larger than d this is about d^2 / M. Section 2.2 of "
               SIM_ARTICLE_A " (docs/sources.md, quote 5) takes d = 128 and M = 168 KB, "
               "computes d^2 / M = %.4f with M "
               "in bytes and promises about 10x less IO. But the paper's M counts "
               "elements: in fp16, d^2 / M is %.4f. And Theta hides the constants, so the "
               "real ratio has to be measured for real block sizes.",
               128.0 * 128.0 / (168.0 * 1024.0), 128.0 * 128.0 / (168.0 * 1024.0 / 2.0));
    lesson_print(L, "  your d^2 / M, M in bytes:     %.4f\n", d * d / (double)sh.M);
    lesson_print(L, "  your d^2 / M, M in elements:  %.4f\n", d * d / b.M_elems);
    lesson_print(L, "  expressions' ratio:           %.4f\n", ratio);
    lesson_print(L, "  measured FA2 / standard, elements: %.4f, bytes: %.4f\n\n",
                 (double)f2->elems / (double)nv->elems, (double)f2->bytes / (double)nv->bytes);

    /* ---- summary ------------------------------------------------------- */
    lesson_step(L, "Summary");
    lesson_say(L, "- Measured here: standard %s B, FA1 %s B, FA2 %s B (FA2 / standard "
               "%.4f), each equal to its closed form.\n"
               "- Theorem 2: standard Theta(N d + N^2), FlashAttention Theta(N^2 d^2 / M), "
               "M in elements (%s B / %d B = %s); Proposition 3: no exact algorithm does "
               "better than Omega(N^2 d^2 / M) for all M in [d, N d]. FA2 is %.2f times "
               "it here.\n"
               "- Doubling N multiplies the N^2 terms by 4 (standard %.2f x, FA2 %.2f x); "
               "doubling M changes standard by %.2f x and FA2 by %.2f x.\n"
               "- Theta hides constants: measure, and convert M to elements first.\n"
               "Next: lesson 8 (loop-order) shows where FA1's and FA2's bytes go.",
               lesson_num(nv->bytes), lesson_num(now[1].bytes), lesson_num(f2->bytes),
               (double)f2->bytes / (double)nv->bytes, lesson_num(sh.M), e, numd(b.M_elems),
               (double)f2->elems / b.lower_bound,
               twoN[0].ok ? (double)twoN[0].bytes / (double)nv->bytes : 0.0,
               twoN[2].ok ? (double)twoN[2].bytes / (double)f2->bytes : 0.0,
               twoM[0].ok ? (double)twoM[0].bytes / (double)nv->bytes : 0.0,
               twoM[2].ok ? (double)twoM[2].bytes / (double)f2->bytes : 0.0);
}

const lesson_def lesson_io_complexity = {
    "io-complexity", 7, "IO complexity, measured beside Theorem 2", "advanced", 15,
    "traffic measured beside Theorem 2",
    "--N N       sequence length, up to 262144 (default 1024)\n"
    "--d D       head dimension, up to 4096 (default 64)\n"
    "--M BYTES   SRAM of one thread block, in bytes: 98304, 96K (default 96K)\n"
    "--dtype T   fp16, bf16 or fp32 for Q, K, V, O, S, P (default fp16)\n",
    run,
};
