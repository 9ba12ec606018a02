/*******************************************************************************
*
*   fasim lesson 10 - fp8-outliers: why an outlier spoils an fp8 score, and
*                     how FlashAttention-3's Hadamard transform repairs it
*
*   Level:     [★★★] 3/3 advanced                  Minutes: about 10
*
*   Goal:      round a query row q and a key row k with one large channel to
*              e4m3, see the score q.k inherit the rounding error of its one
*              large term, then multiply both by a random-sign Hadamard matrix
*              (q.k unchanged), round again, and see d terms' errors average.
*   After it:  you can say why a scale cannot help (fp8 keeps 3 mantissa bits
*              at any scale), why one dominant term makes the score's relative
*              error that term's (up to 2^-4 + 2^-4), why the transform spreads
*              a channel of size x over d entries of about x / sqrt(d), and
*              what that buys over many rows and random signs.
*
*   Options:   --q LIST    a query row, d entries, d a power of two
*              --k LIST    a key row of the same d
*              --amax A    the largest magnitude in Q and K (the per-tensor
*                          scale is A / 448; default 40)
*              --seed S    the signs of the transform (default 1)
*
*   Run:       fasim lesson fp8-outliers --q 0.8,-1.1,0.4,1.3,-0.6,21,0.9,-0.2
*
*   Numbers:   float32 rounding from reference/ref_fp8.h (ref_round_fp8,
*              ref_hadamard_row), seeded signs from ref_rng.h; scores in double.
*
*******************************************************************************/
#include <math.h>
#include <stdio.h>

#include "lesson.h"
#include "ref_rng.h"
#include "ref_tile.h"

#define ROWS 8        /* table rows printed; every entry is computed */
#define TRIALS 1000   /* rows and sign patterns the last step averages over */

/* x rounded to e4m3 with scale s: fp8(x / s) s, in double. */
static double q8(double x, double s)
{
    return (double)ref_round_fp8((float)(x / s), REF_FP8_E4M3) * s;
}

/* q.k in double, and the same from the rounded rows. */
static double dot(const double *a, const double *b, int d)
{
    double s = 0;
    for (int c = 0; c < d; c++)
        s += a[c] * b[c];
    return s;
}

static double dot_q8(const double *a, const double *b, int d, double s)
{
    double r = 0;
    for (int c = 0; c < d; c++)
        r += q8(a[c], s) * q8(b[c], s);
    return r;
}

static void signs(uint64_t seed, int d, signed char *sg)
{
    ref_rng r = ref_rng_seed(seed);
    for (int c = 0; c < d; c++)
        sg[c] = (ref_rng_next(&r) >> 63) ? -1 : 1;
}

static void run(lesson *L)
{
    /* ---- setup: options and inputs ------------------------------------ */
    int d, dk;
    const double *q0 = lesson_opt_vector(L, "q", "0.8,-1.1,0.4,1.3,-0.6,21,0.9,-0.2", &d);
    const double *k0 = lesson_opt_vector(L, "k", "-0.7,0.5,1.2,-0.3,0.9,17,-1.0,0.6", &dk);
    const double A = lesson_opt_double(L, "amax", 40.0, 1e-3, 1e4);
    const uint64_t seed = (uint64_t)lesson_opt_int(L, "seed", 1, 0, INT64_MAX);
    if (dk != d)
        lesson_fail(L, "--q has %d entries and --k %d: give rows of the same d", d, dk);
    if (d < 2 || d > 256 || (d & (d - 1)))
        lesson_fail(L, "--q: d = %d entries; the Hadamard transform needs d a power of two "
                    "from 2 to 256", d);
    double amax_in = 0;
    for (int c = 0; c < d; c++)
        amax_in = fmax(amax_in, fmax(fabs(q0[c]), fabs(k0[c])));
    if (amax_in > A)
        lesson_fail(L, "--amax %g: q and k hold %g, and A is the largest magnitude in the "
                    "tensors: give --amax %g or more", A, amax_in, amax_in);
    double *q = lesson_alloc(L, (size_t)d * sizeof *q);
    double *k = lesson_alloc(L, (size_t)d * sizeof *k);
    signed char *sg = lesson_alloc(L, (size_t)d);
    const double s = A / 448.0;
    const double exact = dot(q0, k0, d);
    if (exact == 0.0)
        lesson_fail(L, "--q and --k: q.k = 0, so the score has no relative error to show: give "
                    "rows whose dot product is not zero");
    int big = 0;
    for (int c = 1; c < d; c++)
        if (fabs(q0[c] * k0[c]) > fabs(q0[big] * k0[big]))
            big = c;

    /* ---- steps --------------------------------------------------------- */
    lesson_step(L, "A score with one large term");
    lesson_say(L, "A score is a dot product, S = q.k (the 1/sqrt(d) aside). Large "
               "language models have a few channels far larger than the rest in both "
               "queries and keys. Here is a row of each, d = %d:", d);
    lesson_show_vector(L, "q", q0, d, 3);
    lesson_show_vector(L, "k", k0, d, 3);
    lesson_print(L, "\n  %4s %10s %10s %12s\n", "c", "q_c", "k_c", "q_c k_c");
    for (int c = 0; c < d && c < ROWS; c++)
        lesson_print(L, "  %4d %10.4g %10.4g %12.6g\n", c, q0[c], k0[c], q0[c] * k0[c]);
    if (d > ROWS)
        lesson_print(L, "  ... %d more\n", d - ROWS);
    lesson_print(L, "\n");
    lesson_ask(L, "What is q.k?", exact, 0.0);
    lesson_say(L, "Term %d alone is %.1f%% of it.", big,
               100.0 * q0[big] * k0[big] / exact);

    lesson_step(L, "Per-tensor fp8: the scale is not the problem");
    lesson_say(L, "Per-tensor scaling divides the tensor by s = %g / 448 = %.6g, so its "
               "largest value lands on 448, e4m3's top, rounds, and multiplies back. Any "
               "entry above 2^-6 s = %.3g keeps 3 mantissa bits: within 2^-4 of itself.",
               A, s, s / 64.0);
    lesson_print(L, "  %4s %10s %12s %9s %12s %9s\n", "c", "q_c", "fp8(q_c)", "rel err",
                 "fp8(k_c)", "rel err");
    for (int c = 0; c < d && c < ROWS; c++)
        lesson_print(L, "  %4d %10.4g %12.6g %8.2f%% %12.6g %8.2f%%\n", c, q0[c],
                     q8(q0[c], s), q0[c] ? 100.0 * fabs(q8(q0[c], s) - q0[c]) / fabs(q0[c]) : 0,
                     q8(k0[c], s), k0[c] ? 100.0 * fabs(q8(k0[c], s) - k0[c]) / fabs(k0[c]) : 0);
    if (d > ROWS)
        lesson_print(L, "  ... %d more\n", d - ROWS);
    const double plain = dot_q8(q0, k0, d, s);
    lesson_print(L, "\n  q.k exact %.6g, from fp8 rows %.6g: error %.3g (%.2f%%)\n\n", exact,
                 plain, plain - exact, 100.0 * fabs(plain - exact) / fabs(exact));
    lesson_say(L, "One term dominates, so the score's relative error is about that "
               "term's: q_%d's and k_%d's (each up to 6.25%%) add. A scale per block "
               "(FA3's block quantization) would not change that.", big, big);

    lesson_step(L, "The Hadamard transform spreads the large channel");
    signs(seed, d, sg);
    for (int c = 0; c < d; c++) {
        q[c] = q0[c];
        k[c] = k0[c];
    }
    ref_hadamard_row(q, d, sg, 0);
    ref_hadamard_row(k, d, sg, 0);
    lesson_say(L, "M = D H / sqrt(d): D random signs (seed %llu), H the %dx%d Hadamard "
               "matrix of +-1. M is orthogonal, so (q M).(k M) = q M M^T k^T = q.k. "
               "Each entry of q M is a signed sum of every entry of q over sqrt(d), so "
               "the large channel %.4g becomes about %.4g in every entry.",
               (unsigned long long)seed, d, d, q0[big], q0[big] / sqrt((double)d));
    double mq = 0;
    for (int c = 0; c < d; c++)
        mq = fmax(mq, fabs(q[c]));
    lesson_ask(L, "What is the largest |entry| of q M?", mq, 0.0);
    lesson_show_vector(L, "q M", q, d, 3);
    lesson_show_vector(L, "k M", k, d, 3);
    lesson_print(L, "  (q M).(k M) = %.9g; q.k = %.9g\n\n", dot(q, k, d), exact);

    lesson_step(L, "Rounded after the transform");
    const double rot = dot_q8(q, k, d, s);
    lesson_print(L, "  from fp8 rows, no transform:     %.6g  error %9.3g (%.2f%%)\n", plain,
                 plain - exact, 100.0 * fabs(plain - exact) / fabs(exact));
    lesson_print(L, "  from fp8 rows, transformed:      %.6g  error %9.3g (%.2f%%)\n\n", rot,
                 rot - exact, 100.0 * fabs(rot - exact) / fabs(exact));
    lesson_say(L, "Now the score is a sum of %d terms of similar size, each rounded "
               "with its own error of either sign, so they partly cancel: a sum of d "
               "independent errors grows like sqrt(d), not d. %s", d,
               fabs(rot - exact) < fabs(plain - exact)
                   ? "Here that made the error smaller."
                   : "Here it did not: this one rounding of the large entries was lucky "
                     "(or the transformed one unlucky); the next step takes many.");

    lesson_step(L, "Over many inputs");
    /* Row t: q and k times factors f, g in [0.5, 1) (so nothing passes A),
     * signs of seed + 1 + t; relative errors of both ways, rms. */
    ref_rng fr = ref_rng_seed(seed ^ UINT64_C(0x5ca1e5ca1e5ca1e5));
    double sq_plain = 0, sq_rot = 0;
    for (int t = 0; t < TRIALS; t++) {
        const double f = 0.75 + 0.25 * (double)ref_rng_uniform(&fr);
        const double g = 0.75 + 0.25 * (double)ref_rng_uniform(&fr);
        signs(seed + 1 + (uint64_t)t, d, sg);
        for (int c = 0; c < d; c++) {
            q[c] = f * q0[c];
            k[c] = g * k0[c];
        }
        const double want = dot(q, k, d);
        const double e0 = (dot_q8(q, k, d, s) - want) / want;
        ref_hadamard_row(q, d, sg, 0);
        ref_hadamard_row(k, d, sg, 0);
        const double e1 = (dot_q8(q, k, d, s) - want) / want;
        sq_plain += e0 * e0;
        sq_rot += e1 * e1;
    }
    const double rms_plain = sqrt(sq_plain / TRIALS), rms_rot = sqrt(sq_rot / TRIALS);
    lesson_say(L, "One rounding can be lucky. Here are %d rows like yours, q and k "
               "each times a random factor in [0.5, 1), each with its own signs: the "
               "root mean square of the score's relative error.", TRIALS);
    lesson_print(L, "  no transform:   %.3f%%\n", 100.0 * rms_plain);
    lesson_print(L, "  transformed:    %.3f%%   (%.2fx %s)\n\n", 100.0 * rms_rot,
                 rms_rot < rms_plain ? rms_plain / rms_rot : rms_rot / rms_plain,
                 rms_rot < rms_plain ? "smaller" : "larger");
    lesson_say(L, "%s FlashAttention-3 reports the effect on attention's output: with "
               "outlier inputs its RMSE drops from 2.4e-2 to 9.1e-3 (its Table 3); "
               "./build/bench/bench_fp8 shows what fasim measures for whole tensors, "
               "where most scores have no dominant term and the gain is smaller.",
               rms_rot < rms_plain
                   ? "With one dominant term the error is one entry's; spread over d "
                     "terms, their independent errors partly cancel."
                   : "For these rows the transform does not help: no single term "
                     "dominates them enough.");

    /* ---- summary ------------------------------------------------------- */
    lesson_step(L, "Summary");
    lesson_say(L, "- fp8 e4m3 keeps 3 mantissa bits at any scale: each entry within 2^-4 "
               "of itself, so per-tensor or per-block scales move the range, not the "
               "precision.\n"
               "- A score dominated by one channel inherits that channel's rounding "
               "error: here %.2f%% of q.k.\n"
               "- A random-sign Hadamard transform of q and k leaves q.k unchanged and "
               "spreads the channel over all %d entries: over %d rows like yours the "
               "score's rms relative error goes from %.3f%% to %.3f%%.",
               100.0 * fabs(plain - exact) / fabs(exact), d, TRIALS, 100.0 * rms_plain,
               100.0 * rms_rot);
}

const lesson_def lesson_fp8_outliers = {
    "fp8-outliers", 10, "Why an outlier spoils an fp8 score", "advanced", 10,
    "an outlier in fp8; the Hadamard fix",
    "--q LIST    a query row, d a power of two (default 8 entries, one of 21)\n"
    "--k LIST    a key row of the same d (default one entry of 17)\n"
    "--amax A    the largest magnitude in Q and K, 0.001 to 10000: the\n"
    "            scale is A / 448 (default 40)\n"
    "--seed S    the signs of the transform, 0 or more (default 1)\n",
    run,
};
