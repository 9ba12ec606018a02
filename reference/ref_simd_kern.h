/*
 * ref_simd_kern.h — one vector path's products (ref_simd.h), written once.
 * ref_simd.c includes it once per path, with these defined:
 *   RSK_SUF        the path's suffix for function names (sse, avx2, avx512)
 *   RSK_TGT        the target the functions are compiled for ("avx2,fma")
 *   RSK_V, RSK_W   the vector type and its lanes of float
 *   RSK_LOAD(p), RSK_STORE(p, v)   W floats, unaligned
 *   RSK_SET1(x)    x in every lane
 *   RSK_FMA(a, b, c), RSK_MUL(a, b), RSK_DIV(a, b), RSK_SUB(a, b)   lane by
 *                  lane, each rounded once: fmaf(a, b, c), a * b, a / b, a - b
 *   RSK_VI, RSK_CASTI(v), RSK_CASTF(i)   the integer vector, and the same
 *                  bits as integers or floats (ref_f2u, ref_u2f)
 *   RSK_IADD, RSK_ISUB, RSK_ISRAI(a, n), RSK_ISRLI, RSK_ISLLI   32-bit lanes:
 *                  +, -, shifts (arithmetic right, logical right, left)
 *   RSK_SEL_LT(x, c, a, b), RSK_SEL_GT(x, c, a, b)   x < c (x > c) ? a : b
 *   RSK_SEL_NAN(x, a, b)                 x != x ? a : b
 * and undefines them at its end.
 * Each output value is one lane, computed by the operations ref_tile.h
 * writes for it, in its order; nothing else is shared between lanes.
 *
 * Tiles of up to 4 rows by 2 vectors (8 rows by 1 for the scores of a
 * block of one vector of keys) keep 8 independent sums in registers (a
 * fused multiply-add's latency is 4 cycles, and two issue per cycle): each
 * K_j^T or V_j vector loaded serves 4 rows, each broadcast value 2 vectors. Columns past the last output (the padding of a partial vector)
 * are computed from zeros and never stored.
 */
#define RSK_CAT2(a, b) a##_##b
#define RSK_CAT(a, b) RSK_CAT2(a, b)
#define RSK_FN(name) RSK_CAT(name, RSK_SUF)
#define RSK_A __attribute__((target(RSK_TGT)))
#define RSK_AI __attribute__((target(RSK_TGT), always_inline)) inline

/* The first n lanes from p (n >= W: a whole vector), the others 0. */
static RSK_AI RSK_V RSK_FN(load_n)(const float *p, int n)
{
    if (n >= RSK_W)
        return RSK_LOAD(p);
    float t[RSK_W] = { 0.0f };
    for (int k = 0; k < n && k < RSK_W; k++)    /* a loop: gcc cannot see n >= 0 */
        t[k] = p[k];
    return RSK_LOAD(t);
}

/* The first n lanes of v to p (n >= W: the whole vector). */
static RSK_AI void RSK_FN(store_n)(float *p, RSK_V v, int n)
{
    if (n >= RSK_W) {
        RSK_STORE(p, v);
        return;
    }
    float t[RSK_W];
    RSK_STORE(t, v);
    for (int k = 0; k < n && k < RSK_W; k++)
        p[k] = t[k];
}

/* One term of R x NV independent sums: acc[i][v] = fmaf(a[i lda], b[v W +
 * lane], acc[i][v]) for i < R, v < NV (NV <= 2): the broadcast value of row
 * i times a vector of b. The scores' and P~ V's step alike. */
static RSK_AI void RSK_FN(fma_step)(RSK_V acc[][2], int R, int NV, const float *a, int64_t lda,
                                    const float *b)
{
    const RSK_V b0 = RSK_LOAD(b);
    const RSK_V b1 = NV > 1 ? RSK_LOAD(b + RSK_W) : b0;
    for (int i = 0; i < R; i++) {
        const RSK_V x = RSK_SET1(a[(int64_t)i * lda]);
        acc[i][0] = RSK_FMA(x, b0, acc[i][0]);
        if (NV > 1)
            acc[i][1] = RSK_FMA(x, b1, acc[i][1]);
    }
}

/* Scores of R <= 8 query rows (Q at the first, d long) against the keys
 * c .. c + NV W - 1 of K_j^T (Kt, d rows of ld): per score, acc = 0.0f,
 * acc = fmaf(q[t], k[t], acc) for t = 0..d-1, then acc * scale, as
 * ref_tile_scores. Written to S (row length bc), the keys below bc only. */
static RSK_AI void RSK_FN(sc_tile)(const float *Q, int d, const float *Kt, int ld, int R,
                                   int NV, float scale, float *S, int bc, int c)
{
    RSK_V acc[8][2];
    for (int i = 0; i < R; i++)
        for (int v = 0; v < NV; v++)
            acc[i][v] = RSK_SET1(0.0f);
    for (int t = 0; t < d; t++)
        RSK_FN(fma_step)(acc, R, NV, Q + t, d, Kt + (int64_t)t * ld + c);
    const RSK_V sv = RSK_SET1(scale);
    for (int i = 0; i < R; i++)
        for (int v = 0; v < NV; v++)
            RSK_FN(store_n)(S + (int64_t)i * bc + c + v * RSK_W, RSK_MUL(acc[i][v], sv),
                            bc - c - v * RSK_W);
}

/* ref_tile_scores. Kt: scratch of d rows of bc rounded up to W. */
static RSK_A void RSK_FN(scores)(const float *Q, const float *K, int br, int bc, int d,
                                 float scale, float *S, float *Kt)
{
    const int ld = (bc + RSK_W - 1) / RSK_W * RSK_W;
    for (int t = 0; t < d; t++) {                   /* K_j^T, zero padded */
        float *row = Kt + (int64_t)t * ld;
        for (int c = 0; c < bc; c++)
            row[c] = K[(int64_t)c * d + t];
        for (int c = bc; c < ld; c++)
            row[c] = 0.0f;
    }
    /* One vector of keys (B_c <= W, as FA2's 16-key blocks on AVX-512):
     * 8 rows at a time, so that 8 sums are still in flight. */
    const int rows = ld <= RSK_W ? 8 : 4;
    for (int r = 0; r < br; r += rows) {
        const int R = br - r < rows ? br - r : rows;
        const float *q = Q + (int64_t)r * d;
        float *s = S + (int64_t)r * bc;
        for (int c = 0; c < bc;) {
            const int NV = ld - c >= 2 * RSK_W ? 2 : 1;
            if (R == 4 && NV == 2)                  /* constants: the registers' tile */
                RSK_FN(sc_tile)(q, d, Kt, ld, 4, 2, scale, s, bc, c);
            else if (R == 8 && NV == 1)
                RSK_FN(sc_tile)(q, d, Kt, ld, 8, 1, scale, s, bc, c);
            else
                RSK_FN(sc_tile)(q, d, Kt, ld, R, NV, scale, s, bc, c);
            c += NV * RSK_W;
        }
    }
}

/* Columns c .. c + NV W - 1 of R <= 4 output rows (O, P, alpha, w at the
 * first): per column, acc = alpha o (w NULL) or 0.0f (w set), then
 * acc = fmaf(p[k], V[k][col], acc) for k = 0..bc-1; then o = acc, or
 * o = fmaf(b, acc, la o) / l_new (FA1, rows with l_new != 0), as
 * ref_pv_acc_row and ref_fa1_out_row. V has rows of ld >= d floats. */
static RSK_AI void RSK_FN(pv_tile)(float *O, int d, const float *P, int bc, const float *V,
                                   int ld, int R, int NV, int c, const float *alpha,
                                   const ref_fa1_weights *w)
{
    RSK_V acc[4][2];
    for (int i = 0; i < R; i++)
        for (int v = 0; v < NV; v++) {
            const int n = d - c - v * RSK_W;
            acc[i][v] = w ? RSK_SET1(0.0f)
                          : RSK_MUL(RSK_SET1(alpha ? alpha[i] : 1.0f),
                                    RSK_FN(load_n)(O + (int64_t)i * d + c + v * RSK_W, n));
        }
    for (int k = 0; k < bc; k++)
        RSK_FN(fma_step)(acc, R, NV, P + k, bc, V + (int64_t)k * ld + c);
    for (int i = 0; i < R; i++) {
        if (w && w[i].l_new == 0.0f)
            continue;                               /* nothing unmasked yet: o stays */
        for (int v = 0; v < NV; v++) {
            float *o = O + (int64_t)i * d + c + v * RSK_W;
            const int n = d - c - v * RSK_W;
            RSK_V x = acc[i][v];
            if (w)
                x = RSK_DIV(RSK_FMA(RSK_SET1(w[i].b), x,
                                    RSK_MUL(RSK_SET1(w[i].la), RSK_FN(load_n)(o, n))),
                            RSK_SET1(w[i].l_new));
            RSK_FN(store_n)(o, x, n);
        }
    }
}

/* ref_pv_acc_row (w NULL) or ref_fa1_out_row (w set) for br rows. Vp:
 * scratch of bc rows of d rounded up to W, used when d is not a multiple
 * of W (V_j is then copied there, zero padded, so that every load of a
 * row stays inside it). */
static RSK_A void RSK_FN(pv)(float *O, int d, const float *alpha, const ref_fa1_weights *w,
                             const float *P, const float *V, int br, int bc, float *Vp)
{
    int ld = d;
    if (d % RSK_W) {
        ld = (d + RSK_W - 1) / RSK_W * RSK_W;
        for (int k = 0; k < bc; k++) {
            memcpy(Vp + (int64_t)k * ld, V + (int64_t)k * d, (size_t)d * sizeof(float));
            for (int c = d; c < ld; c++)
                Vp[(int64_t)k * ld + c] = 0.0f;
        }
        V = Vp;
    }
    for (int r = 0; r < br; r += 4) {
        const int R = br - r < 4 ? br - r : 4;
        float *o = O + (int64_t)r * d;
        const float *p = P + (int64_t)r * bc;
        const float *a = alpha ? alpha + r : NULL;
        const ref_fa1_weights *wr = w ? w + r : NULL;
        for (int c = 0; c < d;) {
            const int NV = ld - c >= 2 * RSK_W ? 2 : 1;
            if (R == 4 && NV == 2)
                RSK_FN(pv_tile)(o, d, p, bc, V, ld, 4, 2, c, a, wr);
            else
                RSK_FN(pv_tile)(o, d, p, bc, V, ld, R, NV, c, a, wr);
            c += NV * RSK_W;
        }
    }
}

/* ref_exp, lane by lane: the same range reduction, polynomial and scaling
 * in the same operations (k / 2 truncated toward zero as C divides), and
 * the special cases (NaN, above 89, below -104) selected at the end. */
static RSK_AI RSK_V RSK_FN(exp)(RSK_V x)
{
    const float LOG2E = 1.44269502163f, LN2_HI = 0.693145751953125f;
    const float LN2_LO = 1.428606765330187e-06f, MAGIC = 12582912.0f;
    const RSK_V t = RSK_FMA(x, RSK_SET1(LOG2E), RSK_SET1(MAGIC));
    const RSK_V kf = RSK_SUB(t, RSK_SET1(MAGIC));
    const RSK_VI k = RSK_ISUB(RSK_CASTI(t), RSK_CASTI(RSK_SET1(MAGIC)));
    const RSK_V nk = RSK_MUL(kf, RSK_SET1(-1.0f));          /* -kf, sign and all */
    RSK_V r = RSK_FMA(nk, RSK_SET1(LN2_HI), x);
    r = RSK_FMA(nk, RSK_SET1(LN2_LO), r);
    RSK_V p = RSK_SET1(1.0f / 5040.0f);
    p = RSK_FMA(p, r, RSK_SET1(1.0f / 720.0f));
    p = RSK_FMA(p, r, RSK_SET1(1.0f / 120.0f));
    p = RSK_FMA(p, r, RSK_SET1(1.0f / 24.0f));
    p = RSK_FMA(p, r, RSK_SET1(1.0f / 6.0f));
    p = RSK_FMA(p, r, RSK_SET1(0.5f));
    p = RSK_FMA(p, r, RSK_SET1(1.0f));
    p = RSK_FMA(p, r, RSK_SET1(1.0f));
    const RSK_VI k1 = RSK_ISRAI(RSK_IADD(k, RSK_ISRLI(k, 31)), 1);  /* k / 2 */
    const RSK_VI k2 = RSK_ISUB(k, k1);
    const RSK_VI bias = RSK_CASTI(RSK_SET1(1.0f));          /* 127 << 23 */
    const RSK_V s1 = RSK_CASTF(RSK_IADD(RSK_ISLLI(k1, 23), bias));
    const RSK_V s2 = RSK_CASTF(RSK_IADD(RSK_ISLLI(k2, 23), bias));
    RSK_V e = RSK_MUL(RSK_MUL(p, s1), s2);
    e = RSK_SEL_LT(x, RSK_SET1(-104.0f), RSK_SET1(0.0f), e);
    e = RSK_SEL_GT(x, RSK_SET1(89.0f), RSK_SET1(REF_INF), e);
    return RSK_SEL_NAN(x, x, e);
}

/* x[k] <- ref_exp(x[k] - sh), k = 0..n-1. */
static RSK_A void RSK_FN(exp_shift)(float *x, int n, float sh)
{
    for (int k = 0; k < n; k += RSK_W) {
        const int m = n - k;
        RSK_V v = RSK_SUB(RSK_FN(load_n)(x + k, m), RSK_SET1(sh));
        RSK_FN(store_n)(x + k, RSK_FN(exp)(v), m);
    }
}

#undef RSK_CAT2
#undef RSK_CAT
#undef RSK_FN
#undef RSK_A
#undef RSK_AI
/* The path's parameters, for the next path to define afresh. */
#undef RSK_SUF
#undef RSK_TGT
#undef RSK_V
#undef RSK_VI
#undef RSK_W
#undef RSK_LOAD
#undef RSK_STORE
#undef RSK_SET1
#undef RSK_FMA
#undef RSK_MUL
#undef RSK_DIV
#undef RSK_SUB
#undef RSK_CASTI
#undef RSK_CASTF
#undef RSK_IADD
#undef RSK_ISUB
#undef RSK_ISRAI
#undef RSK_ISRLI
#undef RSK_ISLLI
#undef RSK_SEL_LT
#undef RSK_SEL_GT
#undef RSK_SEL_NAN
