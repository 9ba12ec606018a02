/*******************************************************************************
*
*   fasim lesson 3 - merge: two partial softmax states make one
*
*   Level:     [★★☆] 2/3 intermediate              Minutes: about 10
*
*   Goal:      merge the partial states (m_a, l_a, O_a) and (m_b, l_b, O_b) of
*              two disjoint sets of keys into the state of their union; see
*              that the order of a merge does not matter, and that a tree of
*              merges gives the same answer as a chain: the idea behind
*              split-K ("flash-decoding") attention for one query row.
*   After it:  you can merge two states by hand, say why merging is
*              commutative and associative in exact arithmetic and how close
*              float32 comes, and say how deep a tree of P parts is.
*
*   Options:   --x LIST    the scores of one query row (default
*                          2,0.5,-1,3,1,4,0,2.5)
*              --v LIST    one value per key, d = 1 (default 1,-1,2,0.5,3,-2,1,0)
*              --parts P   parts for the tree, 2 to the number of keys (default 4)
*
*   Run:       fasim lesson merge --x 2,0.5,-1,3,1,4,0,2.5 --parts 4
*
*   Numbers:   float32 from reference/ref_tile.h (ref_online_step,
*              ref_pv_acc_row, ref_merge); float64 for the check.
*
*******************************************************************************/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lesson.h"
#include "ref_tile.h"

typedef struct {
    float m, l, acc;   /* acc = sum of exp(x_k - m) v_k: the unnormalised O (d = 1) */
} state;

/* The state of keys [a, b) as one block: ref_online_step from the empty state. */
static state part(const float *x, const float *v, int a, int b, float *s)
{
    state st = { -REF_INF, 0.0f, 0.0f };
    memcpy(s, x + a, (size_t)(b - a) * sizeof *s);
    float alpha = ref_online_step(s, b - a, &st.m, &st.l);
    ref_pv_acc_row(&st.acc, 1, alpha, s, v + a, b - a);
    return st;
}

static state merge(state a, state b)
{
    state r;
    ref_merge(a.m, a.l, &a.acc, b.m, b.l, &b.acc, 1, &r.m, &r.l, &r.acc);
    return r;
}

static void show(lesson *L, const char *name, state s)
{
    lesson_print(L, "  %-8s m = %.9g, l = %.9g, acc = %.9g, O = %.9g\n", name, s.m, s.l,
                 s.acc, s.acc / s.l);
}

static void run(lesson *L)
{
    /* ---- setup: options and inputs ------------------------------------ */
    int n, nv;
    const double *xd = lesson_opt_vector(L, "x", "2,0.5,-1,3,1,4,0,2.5", &n);
    const double *vd = lesson_opt_vector(L, "v", "1,-1,2,0.5,3,-2,1,0", &nv);
    const int given = lesson_opt_string(L, "parts", NULL) != NULL;
    int P = (int)lesson_opt_int(L, "parts", 4, 2, 4096);
    if (nv != n)
        lesson_fail(L, "--v has %d values but --x has %d scores; give one value per key",
                    nv, n);
    if (n < 2)
        lesson_fail(L, "--x needs at least 2 scores to split into parts");
    if (P > n && given)
        lesson_fail(L, "--parts %d is more than the %d keys; use 2 to %d", P, n, n);
    P = P > n ? n : P;
    float *x = lesson_alloc(L, (size_t)n * sizeof *x);
    float *v = lesson_alloc(L, (size_t)n * sizeof *v);
    float *s = lesson_alloc(L, (size_t)n * sizeof *s);
    state *st = lesson_alloc(L, (size_t)P * sizeof *st);
    for (int k = 0; k < n; k++) {
        x[k] = (float)xd[k];
        v[k] = (float)vd[k];
    }
    const int h = n / 2;
    double md = x[0], ld = 0.0, od = 0.0;          /* the answer in float64 */
    for (int k = 1; k < n; k++)
        md = x[k] > md ? x[k] : md;
    for (int k = 0; k < n; k++) {
        ld += exp((double)x[k] - md);
        od += exp((double)x[k] - md) * (double)v[k];
    }
    od /= ld;

    /* ---- steps --------------------------------------------------------- */
    lesson_step(L, "Two halves, two partial states");
    lesson_say(L, "One query row has %d scores x_k (its row of S) and one value v_k per "
               "key (d = 1 keeps the numbers few; every value column works the same "
               "way). Its output is O = sum_k softmax(x)_k v_k.", n);
    lesson_show_vector(L, "x", xd, n, 0);
    lesson_show_vector(L, "v", vd, n, 0);
    lesson_print(L, "\n");
    lesson_say(L, "Split the keys: A = keys 1 to %d, B = keys %d to %d. Each side, on "
               "its own, computes a partial state: its maximum m, its sum "
               "l = sum exp(x_k - m), and acc = sum exp(x_k - m) v_k, the output before "
               "division; O = acc / l would be the answer if that side were all the "
               "keys.",
               h, h + 1, n);
    const state A = part(x, v, 0, h, s), Bs = part(x, v, h, n, s);
    show(L, "A:", A);
    show(L, "B:", Bs);
    lesson_print(L, "\n");

    lesson_step(L, "Merging two states");
    lesson_say(L, "The union's maximum is the larger of the two. Each side's l and acc "
               "are sums of terms exp(x - m_side); against the common maximum m every "
               "term gains the factor exp(m_side - m), the same for the whole side.");
    const state AB = merge(A, Bs);
    lesson_ask(L, "What is the merged m?", AB.m, 0.0);
    const float fa = ref_exp(A.m - AB.m), fb = ref_exp(Bs.m - AB.m);
    const lesson_question qa = { .answer = fa, .known = {
        { exp((double)AB.m - (double)A.m), 0, LESSON_WHY_FLIPPED_SIGN } } };
    lesson_ask_q(L, &qa, "What factor multiplies l_a and acc_a?");
    lesson_print(L, "  m   = max(%.9g, %.9g) = %.9g\n", A.m, Bs.m, AB.m);
    lesson_print(L, "  factors: exp(m_a - m) = %.9g, exp(m_b - m) = %.9g\n", fa, fb);
    lesson_print(L, "  l   = %.9g * %.9g + %.9g * %.9g = %.9g\n", fa, A.l, fb, Bs.l, AB.l);
    lesson_print(L, "  acc = %.9g * %.9g + %.9g * %.9g = %.9g\n\n", fa, A.acc, fb, Bs.acc,
                 AB.acc);
    const state all = part(x, v, 0, n, s);
    show(L, "merged:", AB);
    show(L, "one go:", all);
    lesson_print(L, "  float64: m = %.17g, l = %.17g, O = %.17g\n\n", md, ld, od);
    lesson_say(L, "One of the two factors is exp(0) = 1 and the other at most 1; "
               "neither side's numbers are ever scaled up, so merging cannot "
               "overflow. The merged state agrees with the state computed over all "
               "keys in one go, to float32 rounding.");

    lesson_step(L, "Order does not matter");
    const state BA = merge(Bs, A);
    show(L, "A + B:", AB);
    show(L, "B + A:", BA);
    lesson_print(L, "  difference in O: %.3g\n\n", (double)(BA.acc / BA.l) - (AB.acc / AB.l));
    lesson_say(L, "max(m_a, m_b) is symmetric and so is a sum of two terms, so in exact "
               "arithmetic the two orders are equal. In float32 they can differ in the "
               "last bit: fasim's merge rounds one product before the fused multiply-add "
               "takes the other, and swapping the sides swaps which one.");

    lesson_step(L, "A tree of merges equals a chain");
    lesson_say(L, "Now cut the %d keys into %d parts and compute each part's state on "
               "its own, as %d thread blocks would in parallel:", n, P, P);
    for (int p = 0; p < P; p++) {
        char name[32];
        st[p] = part(x, v, p * n / P, (p + 1) * n / P, s);
        snprintf(name, sizeof name, "part %d:", p + 1);
        if (p < 8 || p == P - 1)
            show(L, name, st[p]);
        else if (p == 8)
            lesson_print(L, "  ... parts 9 to %d the same way\n", P - 1);
    }
    state chain = st[0];
    for (int p = 1; p < P; p++)
        chain = merge(chain, st[p]);
    int width = P, depth = 0;                      /* pairwise rounds */
    while (width > 1) {
        for (int p = 0; p < width / 2; p++)
            st[p] = merge(st[2 * p], st[2 * p + 1]);
        if (width % 2)
            st[width / 2] = st[width - 1];
        width = (width + 1) / 2;
        depth++;
    }
    lesson_print(L, "\n");
    lesson_say(L, "A chain merges them one after another: ((1 + 2) + 3) + ..., %d "
               "merges in a row. A tree merges neighbours in rounds: (1 + 2), (3 + 4), "
               "... and then the results, the same way, until one state is left.",
               P - 1);
    const lesson_question qd = { .answer = depth, .discrete = 1 };
    lesson_ask_q(L, &qd, "How many rounds deep is the tree for your parts?");
    show(L, "chain:", chain);
    show(L, "tree:", st[0]);
    lesson_print(L, "  difference in O, tree - chain: %.3g; tree - float64: %.3g\n\n",
                 (double)(st[0].acc / st[0].l) - (chain.acc / chain.l),
                 (double)(st[0].acc / st[0].l) - od);
    lesson_say(L, "The merge is associative, so any grouping gives the same state, up "
               "to rounding. That is what split-K decoding uses: when a single query "
               "row meets a long cache of N keys, one thread block per part computes a "
               "partial state in parallel, and a tree merges them in %d rounds "
               "instead of %d merges one after another.", depth, P - 1);

    /* ---- summary ------------------------------------------------------- */
    lesson_step(L, "Summary");
    lesson_say(L, "- A partial state (m, l, acc) sums up any set of keys; O = acc / l.\n"
               "- merge: m = max(m_a, m_b); l and acc = exp(m_a - m) times A's plus "
               "exp(m_b - m) times B's. The factors are at most 1.\n"
               "- In exact arithmetic the merge is commutative and associative; in "
               "float32 orders differ by rounding only (here %.3g in O).\n"
               "- The online softmax of lesson 2 is a chain of merges with one block "
               "at a time; split-K is a tree of them.",
               fabs((double)(st[0].acc / st[0].l) - (chain.acc / chain.l)));
}

const lesson_def lesson_merge = {
    "merge", 3, "Merging partial softmax states", "intermediate", 10,
    "merging partial states in any order",
    "--x LIST    scores of one query row (default 2,0.5,-1,3,1,4,0,2.5)\n"
    "--v LIST    one value per key (default 1,-1,2,0.5,3,-2,1,0)\n"
    "--parts P   parts for the tree of merges, 2 to the number of keys (default 4)\n",
    run,
};
