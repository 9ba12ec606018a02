/*******************************************************************************
*
*   fasim lesson 2 - online-softmax: the running (m, l), one block at a time
*
*   Level:     [★☆☆] 1/3 beginner                  Minutes: about 10
*
*   Goal:      compute softmax's maximum m and sum l in one pass over the
*              blocks of a vector, rescaling the running sum when m grows.
*   After it:  you can run the recurrence by hand on any vector; say why the
*              rescale factor exp(m_old - m_new) is never above 1; and say why
*              the block-by-block result equals the whole-vector one (up to
*              float32 rounding, which the lesson measures).
*
*   Options:   --x LIST    the vector (default 1,3,2,5,0,4)
*              --block B   entries per block, 1 to the length of x (default 2)
*
*   Run:       fasim lesson online-softmax --x 1,3,2,5,0,4 --block 2
*
*   Numbers:   float32 from reference/ref_tile.h (ref_online_step,
*              ref_softmax_stats, ref_softmax_online); float64 for the check.
*
*******************************************************************************/
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lesson.h"
#include "ref_tile.h"

#define DETAIL 5        /* blocks shown as a step each; the rest share a table */
#define TABLE_ROWS 40   /* rows of that table printed (all are computed)      */

/* Units in the last place between two positive floats. */
static long ulps(float a, float b)
{
    long d = (long)ref_f2u(a) - (long)ref_f2u(b);
    return d < 0 ? -d : d;
}

static void run(lesson *L)
{
    /* ---- setup: options and inputs ------------------------------------ */
    int n;
    const double *xd = lesson_opt_vector(L, "x", "1,3,2,5,0,4", &n);
    int B = (int)lesson_opt_int(L, "block", 2, 1, 4096);
    if (B > n)
        lesson_fail(L, "--block %d is larger than the vector (%d entries); use 1 to %d",
                    B, n, n);
    const int T = (n + B - 1) / B;
    float *x = lesson_alloc(L, (size_t)n * sizeof *x);
    float *s = lesson_alloc(L, (size_t)n * sizeof *s);
    for (int k = 0; k < n; k++)
        x[k] = (float)xd[k];

    /* ---- steps --------------------------------------------------------- */
    lesson_step(L, "Two numbers carry the softmax");
    lesson_say(L, "softmax(x)_k = exp(x_k - m) / l, with m = max(x) and "
               "l = sum of exp(x_k - m). Subtracting m keeps every exponent at or "
               "below 0, so nothing overflows (lesson 1). Done plainly, that reads x "
               "twice: once to find m, then again to add up l.");
    lesson_show_vector(L, "x", xd, n, 0);
    lesson_print(L, "\n");
    lesson_say(L, "The online softmax reads x once, in %d block%s of %d, and keeps a "
               "running state (m, l) for the entries seen so far. It starts empty: "
               "m = -inf, l = 0.", T, T == 1 ? "" : "s", B);

    float m = -REF_INF, l = 0.0f;
    int asked_alpha = 0;
    for (int j = 0; j < T && j < DETAIL; j++) {
        const int a = j * B, len = n - a < B ? n - a : B;
        char title[64];
        snprintf(title, sizeof title, "Block %d of %d", j + 1, T);
        lesson_step(L, title);
        memcpy(s, x + a, (size_t)len * sizeof *s);
        const float m_old = m, l_old = l, top = ref_row_max(s, len);
        const float m_new = top > m_old ? top : m_old;
        lesson_show_vector(L, "block", xd + a, len, 0);
        lesson_print(L, "  before it:  m = %.7g, l = %.7g\n", m_old, l_old);
        lesson_print(L, "  its largest entry: %.7g\n\n", top);
        if (j > 0) {
            const lesson_question q = { .answer = m_new, .known = {
                { top, 0, top != m_new ? "That is this block's largest entry. m is the "
                  "running maximum, the largest entry seen so far: m_new = max(m_old, the "
                  "block's largest)." : NULL } } };
            lesson_ask_q(L, &q, "What is m after this block?");
        }
        lesson_print(L, "  m_new = max(%.7g, %.7g) = %.7g\n\n", m_old, top, m_new);

        const float alpha = ref_online_step(s, len, &m, &l);   /* m, l updated */
        if (j == 0) {
            lesson_say(L, "With m_old = -inf the rescale factor exp(m_old - m_new) is "
                       "exp(-inf) = %g; it multiplies l_old = 0, so there is nothing to "
                       "rescale yet.", alpha);
        } else if (m_new > m_old) {
            lesson_say(L, "The maximum grew. l_old is a sum of terms exp(x - %.7g); "
                       "against the new maximum each must become exp(x - %.7g) = "
                       "exp(x - %.7g) * exp(%.7g - %.7g). One factor rescales the whole "
                       "sum.", m_old, m_new, m_old, m_old, m_new);
            if (!asked_alpha++) {
                const lesson_question q = { .answer = alpha, .known = {
                    { exp((double)m_new - (double)m_old), 0, LESSON_WHY_FLIPPED_SIGN } } };
                lesson_ask_q(L, &q, "What is the factor that rescales l_old, alpha = "
                             "exp(m_old - m_new)?");
            }
            lesson_print(L, "  alpha = exp(%.7g - %.7g) = %.7g\n\n", m_old, m_new, alpha);
            lesson_say(L, "m_new = max(m_old, ...) is never below m_old, so the exponent "
                       "is never positive and alpha is never above 1: the old sum "
                       "shrinks or stays.");
        } else {
            lesson_say(L, "The maximum did not grow, so alpha = exp(0) = %.7g and l_old "
                       "stands as it is.", alpha);
        }
        /* The last block shown asks for l before the working that gives it. */
        if (j == (T < DETAIL ? T : DETAIL) - 1 && j > 0)
            lesson_ask(L, "What is l after this block?", l, 0.0);
        float sum = 0.0f;
        for (int k = 0; k < len; k++)
            sum = sum + s[k];
        if (len <= 4) {
            lesson_print(L, "  this block's terms:");
            for (int k = 0; k < len; k++)
                lesson_print(L, "%s exp(%g - %.7g)", k ? " +" : "", xd[a + k], m_new);
            lesson_print(L, "\n    =");
            for (int k = 0; k < len; k++)
                lesson_print(L, "%s %.7g", k ? " +" : "", s[k]);
            lesson_print(L, " = %.7g\n", sum);
        } else {
            lesson_print(L, "  this block's %d terms exp(x - %.7g) add up to %.7g\n", len,
                         m_new, sum);
        }
        lesson_print(L, "  l_new = alpha * l_old + terms = %.7g * %.7g + %.7g\n\n", alpha,
                     l_old, sum);
        lesson_print(L, "  after block %d:  m = %.7g, l = %.7g\n\n", j + 1, m, l);
    }
    if (T > DETAIL) {
        char title[64];
        snprintf(title, sizeof title, "Blocks %d to %d, the same way", DETAIL + 1, T);
        lesson_step(L, title);
        lesson_print(L, "  %6s  %14s  %14s  %14s  %14s\n", "block", "largest", "m",
                     "alpha", "l");
        for (int j = DETAIL; j < T; j++) {
            const int a = j * B, len = n - a < B ? n - a : B;
            memcpy(s, x + a, (size_t)len * sizeof *s);
            const float top = ref_row_max(s, len);
            const float alpha = ref_online_step(s, len, &m, &l);
            if (j - DETAIL < TABLE_ROWS)
                lesson_print(L, "  %6d  %14.7g  %14.7g  %14.7g  %14.7g\n", j + 1, top, m,
                             alpha, l);
        }
        if (T - DETAIL > TABLE_ROWS)
            lesson_print(L, "  ... %d more blocks\n", T - DETAIL - TABLE_ROWS);
        lesson_print(L, "\n  after block %d:  m = %.7g, l = %.7g\n\n", T, m, l);
    }

    lesson_step(L, "The same as the whole vector at once");
    float m1, l1, m2, l2;
    ref_softmax_stats(x, n, &m1, &l1);                  /* max, then one sum */
    ref_softmax_online(x, n, B, s, &m2, &l2);           /* the library's loop */
    double md = x[0], ld = 0.0;
    for (int k = 1; k < n; k++)
        md = x[k] > md ? x[k] : md;
    for (int k = 0; k < n; k++)
        ld += exp((double)x[k] - (double)m1);
    lesson_print(L, "  block by block:  m = %.9g, l = %.9g\n", m, l);
    lesson_print(L, "  whole vector:    m = %.9g, l = %.9g\n", m1, l1);
    lesson_print(L, "  float64:         m = %.17g, l = %.17g\n\n", md, ld);
    lesson_print(L, "  difference in l, blocks - whole: %.9g (%ld units in the last "
                 "place)\n", (double)l - (double)l1, ulps(l, l1));
    lesson_print(L, "  relative error against float64:  blocks %.3g, whole %.3g\n",
                 fabs((double)l - ld) / ld, fabs((double)l1 - ld) / ld);
    lesson_print(L, "  fasim's own online loop gives the same bits: %s\n\n",
                 ref_f2u(m2) == ref_f2u(m) && ref_f2u(l2) == ref_f2u(l) ? "yes" : "NO");
    lesson_say(L, "m is the same number either way: a maximum involves no rounding. For "
               "l, in exact arithmetic the two are equal: a term exp(x - m_1) that "
               "picked up the factors exp(m_1 - m_2), exp(m_2 - m_3), ... on its way is "
               "exp(x - m) in the end. In float32 every multiplication rounds, so the "
               "two may differ in their last bits, as much as rounding and no more.");
    if (n <= 16) {
        ref_exp_normalise(x, s, n, m, 1.0f / l);
        lesson_say(L, "With (m, l) the softmax is one more sweep, p_k = exp(x_k - m) / l:");
        lesson_show_vector_f(L, "p", s, n, 0);
        lesson_print(L, "\n");
    }

    /* ---- summary ------------------------------------------------------- */
    lesson_step(L, "Summary");
    lesson_say(L, "- The state is two floats per row: (m, l), starting at (-inf, 0).\n"
               "- Per block: m_new = max(m_old, max(block)); "
               "l_new = exp(m_old - m_new) * l_old + sum of exp(x - m_new).\n"
               "- m_new >= m_old always, so the factor is at most 1. One derivation "
               "says the subtraction matters 'when m_prev is much larger than m_new': "
               "that cannot happen. What it avoids is exp(m_old) / exp(m_new) taken "
               "apart, where each exp overflows float32 once m > %.2f = ln(FLT_MAX).\n"
               "- The result is the whole-vector (m, l) up to rounding: here %ld units "
               "in the last place.\n"
               "Next: lesson 3 (merge) combines two such states, and lesson 4 carries "
               "the output row along.", log((double)FLT_MAX), ulps(l, l1));
}

const lesson_def lesson_online_softmax = {
    "online-softmax", 2, "Online softmax, one block at a time", "beginner", 10,
    "the running (m, l), block by block",
    "--x LIST    the vector, comma-separated (default 1,3,2,5,0,4)\n"
    "--block B   entries per block, 1 to the length of x (default 2)\n",
    run,
};
