/*******************************************************************************
*
*   fasim lesson 5 - a-common-bug: an online softmax that scales twice
*
*   Level:     [★★☆] 2/3 intermediate              Minutes: about 10
*
*   Goal:      run a published online-softmax update (one of fasim's two
*              source articles has it) beside the correct one on the same numbers,
*              and find where the two part: it computes P = exp(S - m_new) and
*              then multiplies this block's sum and P V by exp(m_curr - m_new)
*              as well, so the block is scaled twice whenever an earlier block
*              held the larger maximum.
*   After it:  you can spot the double scaling, give both correct fixes, and
*              say which inputs hide the bug (block maxima that never fall)
*              and which expose it.
*
*   Options:   --x LIST    the scores of one row (default 1,4,2,0,3,1)
*              --v LIST    one value per key, d = 1 (default 1,2,3,4,5,6)
*              --block B   keys per block, 1 to the length of x (default 2)
*
*   Run:       fasim lesson a-common-bug --x 1,4,2,0,3,1 --block 2
*
*   Numbers:   float32 from reference/ref_tile.h (ref_online_step,
*              ref_pv_acc_row; the article's variant is built from ref_exp and
*              ref_exp_shift_sum); float64 for the check.
*
*******************************************************************************/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lesson.h"
#include "sim_claims.h"
#include "ref_tile.h"

#define DETAIL 6   /* blocks shown one by one; the rest share a table */

typedef struct {
    float m, l, acc;   /* running max, sum, and unnormalised output (d = 1) */
} state;

/* The correct update (FlashAttention-2, Algorithm 1, lines 9-10). */
static void step_right(state *r, const float *x, const float *v, int len, float *s)
{
    memcpy(s, x, (size_t)len * sizeof *s);
    float alpha = ref_online_step(s, len, &r->m, &r->l);
    ref_pv_acc_row(&r->acc, 1, alpha, s, v, len);
}

/* The article's update: P = exp(S - m_new), then this block's sum and P V also
 * times exp(m_curr - m_new). It is written in the shape of the correct one
 * (the same fmaf order), so that with a factor of 1 it gives the same bits and
 * every difference seen is the bug, not rounding. With fix_a,
 * P = exp(S - m_curr) instead, which makes the factor right (FlashAttention-1,
 * Algorithm 1, lines 10-11). Returns the factor exp(m_curr - m_new). */
static float step_article(state *r, const float *x, const float *v, int len, float *s,
                       int fix_a)
{
    memcpy(s, x, (size_t)len * sizeof *s);
    const float m_curr = ref_row_max(s, len);
    const float m_new = m_curr > r->m ? m_curr : r->m;
    const float c_old = ref_exp(r->m - ref_shift(m_new));
    const float c_curr = ref_exp(m_curr - ref_shift(m_new));
    const float sum = ref_exp_shift_sum(s, len, fix_a ? m_curr : m_new);
    r->l = fmaf(c_old, r->l, c_curr * sum);
    float acc = c_old * r->acc;
    for (int k = 0; k < len; k++)
        acc = fmaf(c_curr * s[k], v[k], acc);
    r->acc = acc;
    r->m = m_new;
    return c_curr;
}

static int differ(state a, state b)
{
    return ref_f2u(a.l) != ref_f2u(b.l) || ref_f2u(a.acc) != ref_f2u(b.acc);
}

static void show(lesson *L, const char *name, state s)
{
    lesson_print(L, "  %-9s m = %.9g, l = %.9g, O = %.9g\n", name, s.m, s.l, s.acc / s.l);
}

static void run(lesson *L)
{
    /* ---- setup: options and inputs ------------------------------------ */
    int n, nv;
    const double *xd = lesson_opt_vector(L, "x", "1,4,2,0,3,1", &n);
    const double *vd = lesson_opt_vector(L, "v", "1,2,3,4,5,6", &nv);
    const int B = (int)lesson_opt_int(L, "block", 2, 1, 4096);
    if (nv != n)
        lesson_fail(L, "--v has %d values but --x has %d scores; give one value per key",
                    nv, n);
    if (B > n)
        lesson_fail(L, "--block %d is larger than the vector (%d entries); use 1 to %d",
                    B, n, n);
    const int T = (n + B - 1) / B;
    float *x = lesson_alloc(L, (size_t)n * 4), *v = lesson_alloc(L, (size_t)n * 4);
    float *xs = lesson_alloc(L, (size_t)n * 4), *vs = lesson_alloc(L, (size_t)n * 4);
    float *s = lesson_alloc(L, (size_t)n * 4);
    for (int k = 0; k < n; k++) {
        x[k] = (float)xd[k];
        v[k] = (float)vd[k];
    }
    state R = { -REF_INF, 0, 0 }, S = R;         /* where do they part? */
    int part_at = 0;
    for (int j = 0; j < T && !part_at; j++) {
        const int a = j * B, len = n - a < B ? n - a : B;
        step_right(&R, x + a, v + a, len, s);
        step_article(&S, x + a, v + a, len, s, 0);
        part_at = differ(R, S) ? j + 1 : 0;
    }

    /* ---- steps --------------------------------------------------------- */
    lesson_step(L, "The code under test");
    lesson_say(L, "Section 3.3 of " SIM_ARTICLE_A ", one of the two articles fasim grew "
               "from (docs/sources.md, quote 6), gives this update for one block of scores "
               "S (one row here) with values V, in Python-like notation:");
    lesson_print(L, "    m_curr = rowmax(S)\n"
                    "    m_new  = max(m_prev, m_curr)\n"
                    "    P      = exp(S - m_new)\n"
                    "    l_new  = exp(m_prev - m_new) * l_prev + exp(m_curr - m_new) * rowsum(P)\n"
                    "    O_new  = exp(m_prev - m_new) * O_prev + exp(m_curr - m_new) * (P V)\n\n");
    lesson_say(L, "Every line looks reasonable. We run it beside the correct update "
               "(lesson 4) on the same numbers, %d block%s of %d:", T, T == 1 ? "" : "s",
               B);
    lesson_show_vector(L, "x", xd, n, 0);
    lesson_show_vector(L, "v", vd, n, 0);
    lesson_print(L, "\n");
    const lesson_question qp = { .answer = part_at, .discrete = 1 };
    lesson_ask_q(L, &qp, "Read the code: after which block will its l first differ from the "
                 "correct l? (0 if never)");

    state r = { -REF_INF, 0, 0 }, g = r;
    for (int j = 0; j < T; j++) {
        const int a = j * B, len = n - a < B ? n - a : B;
        const float m_prev = r.m;
        step_right(&r, x + a, v + a, len, s);
        const float c = step_article(&g, x + a, v + a, len, s, 0);
        const float m_curr = ref_row_max(x + a, len);
        if (j >= DETAIL) {
            if (j == DETAIL) {
                char title[64];
                snprintf(title, sizeof title, "Blocks %d to %d", j + 1, T);
                lesson_step(L, title);
                lesson_print(L, "  %5s  %10s  %12s  %14s  %14s\n", "block", "m_curr",
                             "extra factor", "l correct", "l buggy");
            }
            if (j - DETAIL < 40)                   /* all computed, 40 rows shown */
                lesson_print(L, "  %5d  %10.7g  %12.7g  %14.9g  %14.9g\n", j + 1, m_curr,
                             c, r.l, g.l);
            else if (j == T - 1)
                lesson_print(L, "  ... and %d more blocks\n\n", T - DETAIL - 40);
            continue;
        }
        char title[64];
        snprintf(title, sizeof title, "Block %d of %d", j + 1, T);
        lesson_step(L, title);
        lesson_show_vector(L, "block", xd + a, len, 0);
        lesson_print(L, "  m_prev = %.7g, m_curr = %.7g, m_new = %.7g\n", m_prev, m_curr,
                     r.m);
        /* Where the lesson asks for the factor, it shows it after the question. */
        if (j + 1 == part_at) {
            lesson_print(L, "\n");
            lesson_say(L, "They part here. m_curr = %.7g is below m_new = %.7g, because "
                       "an earlier block held the larger maximum. P = exp(S - m_new) "
                       "already measures this block against m_new; the extra factor "
                       "measures it once more.", m_curr, r.m);
            const lesson_question q = { .answer = c, .known = {
                { exp((double)r.m - (double)m_curr), 0, LESSON_WHY_FLIPPED_SIGN } } };
            lesson_ask_q(L, &q, "By what factor does the buggy code shrink this block's "
                         "share of l?");
            lesson_print(L, "  extra factor exp(m_curr - m_new) = %.9g\n\n", c);
        } else {
            lesson_print(L, "  extra factor exp(m_curr - m_new) = %.9g\n\n", c);
            if (c == 1.0f)
                lesson_say(L, "m_curr = m_new, so the extra factor is exp(0) = 1 and does "
                           "nothing: the bug is there but invisible.");
            else
                lesson_say(L, "Again m_curr < m_new: this block too is counted %.7g times "
                           "what it should be.", c);
        }
        show(L, "correct:", r);
        show(L, "buggy:", g);
        lesson_print(L, "\n");
    }

    lesson_step(L, "Where it lands, and the two fixes");
    state fa = { -REF_INF, 0, 0 };
    for (int j = 0; j < T; j++) {
        const int a = j * B, len = n - a < B ? n - a : B;
        step_article(&fa, x + a, v + a, len, s, 1);
    }
    double md = x[0], ld = 0.0, od = 0.0;
    for (int k = 1; k < n; k++)
        md = x[k] > md ? x[k] : md;
    for (int k = 0; k < n; k++) {
        ld += exp((double)x[k] - md);
        od += exp((double)x[k] - md) * (double)v[k];
    }
    show(L, "correct:", r);
    show(L, "buggy:", g);
    show(L, "fix (a):", fa);
    lesson_print(L, "  float64:  m = %.17g, l = %.17g, O = %.17g\n\n", md, ld, od / ld);
    lesson_print(L, "  |O - O_float64|:  correct %.3g, buggy %.3g, fix (a) %.3g\n\n",
                 fabs((double)(r.acc / r.l) - od / ld), fabs((double)(g.acc / g.l) - od / ld),
                 fabs((double)(fa.acc / fa.l) - od / ld));
    lesson_say(L, "The output is wrong too, not only l: each scaled-twice block gets "
               "less weight in the average than its scores give it. Two fixes, and "
               "either one alone is right:\n"
               "- (a) keep the factor, but measure the block against its own maximum: "
               "P = exp(S - m_curr). This is FlashAttention-1 (Algorithm 1, lines "
               "10-11).\n"
               "- (b) keep P = exp(S - m_new) and drop the factor: the old state alone "
               "is rescaled. This is FlashAttention-2 (Algorithm 1, line 9) and "
               "fasim's own update, the 'correct' line above.");

    lesson_step(L, "Why tests miss it");
    for (int k = 0; k < n; k++) {                  /* x sorted ascending, v along */
        int p = k;
        while (p > 0 && xs[p - 1] > x[k]) {
            xs[p] = xs[p - 1];
            vs[p] = vs[p - 1];
            p--;
        }
        xs[p] = x[k];
        vs[p] = v[k];
    }
    state rs = { -REF_INF, 0, 0 }, gs = rs;
    for (int j = 0; j < T; j++) {
        const int a = j * B, len = n - a < B ? n - a : B;
        step_right(&rs, xs + a, vs + a, len, s);
        step_article(&gs, xs + a, vs + a, len, s, 0);
    }
    lesson_say(L, "The extra factor is 1 whenever a block's maximum is the running "
               "maximum. So the bug hides when the block maxima never fall: one block "
               "only, or scores that rise. The same numbers sorted ascending:");
    show(L, "correct:", rs);
    show(L, "buggy:", gs);
    lesson_print(L, "  difference in l: %.3g\n\n", (double)gs.l - rs.l);
    lesson_say(L, "Test cases are often like that: a single block, or a ramp. Random "
               "scores in many blocks, checked against a float64 oracle, expose it at "
               "once, which is how fasim's tests check every update.");

    /* ---- summary ------------------------------------------------------- */
    lesson_step(L, "Summary");
    char where[64] = "not with your numbers";
    if (part_at)
        snprintf(where, sizeof where, "with your numbers from block %d on", part_at);
    lesson_say(L, "- The buggy update scales the current block twice: "
               "P = exp(S - m_new) and the factor exp(m_curr - m_new).\n"
               "- It is wrong whenever an earlier block held the larger maximum: %s.\n"
               "- Fix (a): P = exp(S - m_curr) with the factor (FA1). Fix (b): "
               "P = exp(S - m_new) without it (FA2).\n"
               "- Test online softmax on random inputs in several blocks, against an "
               "oracle.", where);
}

const lesson_def lesson_a_common_bug = {
    "a-common-bug", 5, "A common bug: the current block scaled twice", "intermediate", 10,
    "a published update: find the bug",
    "--x LIST    scores of one row (default 1,4,2,0,3,1)\n"
    "--v LIST    one value per key (default 1,2,3,4,5,6)\n"
    "--block B   keys per block, 1 to the length of x (default 2)\n",
    run,
};
