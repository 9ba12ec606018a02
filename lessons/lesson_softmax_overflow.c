/*******************************************************************************
*
*   fasim lesson 1 - softmax-overflow: why softmax subtracts the maximum
*
*   Level:     [★☆☆] 1/3 beginner                  Minutes: about 5
*
*   Goal:      see softmax computed as the formula reads overflow float32 on
*              large logits (exp(89) = inf), see the safe softmax, which
*              subtracts the maximum, get it right, and count what that costs:
*              three passes over the data.
*   After it:  you can say for which x exp(x) overflows float32 (x > 88.72)
*              and fp16 (x > 11.09), why softmax(x) = softmax(x - c), why
*              c = max(x) makes overflow impossible, and how many bytes the
*              three passes move.
*
*   Options:   --x LIST    the logits (default 3,89,85,-2)
*
*   Run:       fasim lesson softmax-overflow --x 3,89,85,-2
*
*   Numbers:   float32 from reference/ref_tile.h (ref_exp, ref_softmax_stats,
*              ref_exp_normalise, ref_round_fp16); float64 and libm for checks.
*
*******************************************************************************/
#include <float.h>
#include <math.h>
#include <stdio.h>

#include "lesson.h"
#include "ref_tile.h"

#define ROWS 12   /* table rows printed; every entry is computed */

/* Where exp stops being an ordinary float, found by bisection over the bits
 * of positive floats (their bit patterns are ordered like their values):
 * kind 0: the largest x with exp(x) finite in float32; 1: the same after
 * rounding to fp16; 2: the largest |x| with exp(-|x|) > 0 in float32. */
static float edge(int kind)
{
    uint32_t lo = ref_f2u(1.0f), hi = ref_f2u(200.0f);   /* holds at 1, fails at 200 */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        float v = ref_u2f(mid);
        float e = ref_exp(kind == 2 ? -v : v);
        int ok = kind == 2 ? e > 0.0f : !isinf(kind == 1 ? ref_round_fp16(e) : e);
        if (ok)
            lo = mid;
        else
            hi = mid;
    }
    return ref_u2f(lo);
}

static void run(lesson *L)
{
    /* ---- setup: options and inputs ------------------------------------ */
    int n;
    const double *xd = lesson_opt_vector(L, "x", "3,89,85,-2", &n);
    float *x = lesson_alloc(L, (size_t)n * sizeof *x);
    float *e = lesson_alloc(L, (size_t)n * sizeof *e);
    float *p = lesson_alloc(L, (size_t)n * sizeof *p);
    for (int k = 0; k < n; k++)
        x[k] = (float)xd[k];
    const int rows = n < ROWS ? n : ROWS;

    /* ---- steps --------------------------------------------------------- */
    lesson_step(L, "Softmax as the formula reads");
    lesson_say(L, "softmax turns logits into probabilities: p_k = exp(x_k) / "
               "sum_j exp(x_j). Each p_k lies between 0 and 1 and they add up to 1. "
               "Here are %d logits:", n);
    lesson_show_vector(L, "x", xd, n, 0);
    lesson_print(L, "\n");
    lesson_say(L, "Computed exactly as written, in float32: first every exp(x_k), then "
               "their sum, then one division per entry. Before we do, a look at how "
               "far float32 reaches.");

    lesson_step(L, "Where float32 runs out");
    const float top32 = edge(0), top16 = edge(1), low32 = edge(2);
    lesson_print(L, "  largest float32:                 FLT_MAX = %.9g\n", FLT_MAX);
    lesson_print(L, "  its natural log:                 ln(FLT_MAX) = %.9g\n",
                 log((double)FLT_MAX));
    lesson_print(L, "  largest x with exp(x) finite:    %.9g -> exp = %.9g\n", top32,
                 ref_exp(top32));
    lesson_print(L, "  the next float32 up:             %.9g -> exp = %g\n",
                 ref_u2f(ref_f2u(top32) + 1), ref_exp(ref_u2f(ref_f2u(top32) + 1)));
    lesson_print(L, "  in fp16 (largest 65504):         exp(x) overflows above x = %.6g\n",
                 top16);
    lesson_print(L, "  at the other end:                exp(x) = 0 below x = -%.6g\n\n",
                 low32);
    lesson_say(L, "So exp(89) = %g in float32, though 89 is an ordinary logit, and in "
               "fp16 the wall is at about %.0f. Anything past these edges is not a large "
               "number but inf (or 0 at the low end), and arithmetic on inf gives inf "
               "or NaN.", ref_exp(89.0f), top16);
    int n_inf = 0, n_zero = 0;
    for (int k = 0; k < n; k++) {
        e[k] = ref_exp(x[k]);
        n_inf += isinf(e[k]) != 0;
        n_zero += e[k] == 0.0f;
    }
    const lesson_question qi = { .answer = n_inf, .discrete = 1 };
    lesson_ask_q(L, &qi, "How many of your logits have exp(x) = inf in float32?");

    lesson_step(L, "The naive softmax, computed");
    float sum = 0.0f;
    for (int k = 0; k < n; k++)
        sum = sum + e[k];
    for (int k = 0; k < n; k++)
        p[k] = e[k] / sum;
    lesson_print(L, "  %4s  %14s  %16s  %14s\n", "k", "x_k", "exp(x_k)", "p_k naive");
    for (int k = 0; k < rows; k++)
        lesson_print(L, "  %4d  %14g  %16.7g  %14.7g\n", k + 1, xd[k], e[k],
                     isnan(p[k]) ? fabsf(p[k]) : p[k]);     /* "nan", not "-nan" */
    if (n > rows)
        lesson_print(L, "  ... %d more\n", n - rows);
    lesson_print(L, "  sum of exp(x_k) = %.7g\n\n", sum);
    if (isinf(sum))
        lesson_say(L, "%d exponential%s overflowed, so the sum is inf. Then every finite "
                   "exp(x_k) / inf is 0 and inf / inf is NaN: the probabilities are "
                   "garbage, although every logit was an ordinary number.", n_inf,
                   n_inf == 1 ? "" : "s");
    else if (sum == 0.0f)
        lesson_say(L, "Every exp(x_k) rounded to 0 (all logits are below -%.4g), so the "
                   "sum is 0 and every p_k = 0/0 = NaN.", low32);
    else
        lesson_say(L, "Nothing overflowed for these logits, so the naive softmax works "
                   "here%s. Try --x 3,89,85,-2 to watch it fail.",
                   n_zero ? ", though some terms rounded to 0" : "");

    lesson_step(L, "The safe softmax: subtract the maximum");
    lesson_say(L, "For any constant c, exp(x_k - c) / sum_j exp(x_j - c) is the same "
               "p_k: the factor exp(-c) appears above and below and cancels. Choose "
               "c = m = max(x). Then every exponent is at most 0, so every term is in "
               "(0, 1] and cannot overflow; the largest term is exp(0) = 1, so the "
               "sum l is between 1 and n and the division is never 0/0.");
    float m, l;
    ref_softmax_stats(x, n, &m, &l);
    lesson_print(L, "  m = max(x) = %.9g\n\n", m);
    lesson_ask(L, "What is l = sum of exp(x_k - m)?", l, 0.0);
    ref_exp_normalise(x, p, n, m, 1.0f / l);
    double dl = 0.0, err = 0.0, psum = 0.0;
    for (int k = 0; k < n; k++)
        dl += exp((double)x[k] - (double)m);
    lesson_print(L, "  %4s  %14s  %16s  %14s\n", "k", "x_k - m", "exp(x_k - m)", "p_k safe");
    for (int k = 0; k < n; k++) {
        double want = exp((double)x[k] - (double)m) / dl;
        err = fmax(err, fabs((double)p[k] - want));
        psum += p[k];
        if (k < rows)
            lesson_print(L, "  %4d  %14.7g  %16.7g  %14.7g\n", k + 1, x[k] - m,
                         ref_exp(x[k] - m), p[k]);
    }
    if (n > rows)
        lesson_print(L, "  ... %d more\n", n - rows);
    lesson_print(L, "\n  safe softmax:  m = %.9g, l = %.9g\n", m, l);
    lesson_print(L, "  float64:       l = %.17g\n", dl);
    lesson_print(L, "  sum of p = %.9g; largest |p - p_float64| = %.3g\n\n", psum, err);
    lesson_say(L, "Every probability is now a proper number, within float32 rounding "
               "of the float64 answer.");

    lesson_step(L, "The price: three passes");
    lesson_say(L, "The safe softmax reads x three times: pass 1 finds m; pass 2 adds up "
               "l = sum exp(x - m); pass 3 writes p = exp(x - m) / l. The naive one "
               "needed two (the sum, then the division), so safety costs one extra "
               "pass over the data.");
    const lesson_question qb = { .answer = 3.0 * 4 * n, .discrete = 1, .known = {
        { 3.0 * n, 0, LESSON_WHY_ELEMENTS },
        { 4.0 * n, 0, "That is one pass; the safe softmax reads the logits three times." },
        { 2.0 * 4 * n, 0, "That is the naive softmax's two passes; the safe one makes "
                          "three." } } };
    lesson_ask_q(L, &qb, "In float32 (4 bytes an entry), how many bytes do the three "
                 "passes read for your logits?");
    lesson_print(L, "  safe:   3 reads of %d entries = %d B read, %d B written\n", n,
                 12 * n, 4 * n);
    lesson_print(L, "  naive:  2 reads of %d entries = %d B read, %d B written\n\n", n,
                 8 * n, 4 * n);
    lesson_say(L, "In attention, x is a row of S = Q K^T: N rows of N logits each, so "
               "every pass over S is another N^2 reads from memory. That traffic is "
               "what FlashAttention removes: lesson 2 finds m and l in one pass, and "
               "lesson 4 folds the last pass into the product with V.");

    /* ---- summary ------------------------------------------------------- */
    lesson_step(L, "Summary");
    lesson_say(L, "- exp(x) overflows float32 for x above %.6g = ln(FLT_MAX), and fp16 "
               "above %.4g: exp(89) = %g.\n"
               "- softmax(x) = softmax(x - c) for any c. With c = max(x) every term "
               "is in (0, 1] and the sum in [1, n]: no overflow, no 0/0.\n"
               "- The price is a third pass over the data: %d B read instead of %d B "
               "for your %d logits in float32.", top32, top16, ref_exp(89.0f), 12 * n,
               8 * n, n);
}

const lesson_def lesson_softmax_overflow = {
    "softmax-overflow", 1, "Why softmax subtracts the maximum", "beginner", 5,
    "exp(89) = inf; the safe softmax's cost",
    "--x LIST    the logits, comma-separated (default 3,89,85,-2)\n",
    run,
};
