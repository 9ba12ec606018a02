/*
 * ref_simd_kern.h — one vector path's products (ref_simd.h), written once.
 * ref_simd.c includes it once per path, with these defined:
 *   RSK_SUF        the path's suffix for function names (sse, avx2, avx512)
 *   RSK_TGT        the target the functions are compiled for ("avx2,fma")
 *   RSK_V, RSK_W   the vector type and its lanes of float
 *   RSK_LOAD(p), RSK_STORE(p, v)   W floats, unaligned
 *   RSK_SET1(x)    x in every lane
 *   RSK_FMA(a, b, c), RSK_MUL(a, b), RSK_DIV(a, b)   lane by lane, each
 *                  rounded once: fmaf(a, b, c), a * b, a / b
 * Each output value is one lane, computed by the operations ref_tile.h
 * writes for it, in its order; nothing else is shared between lanes.
 *
 * Tiles of up to 4 rows by 2 vectors keep 8 independent sums in registers
 * (a fused multiply-add's latency is 4 cycles, and two issue per cycle):
 * each K_j^T or V_j vector loaded serves 4 rows, each broadcast value 2
 * vectors. Columns past the last output (the padding of a partial vector)
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
    memcpy(t, p, (size_t)n * sizeof(float));
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
    memcpy(p, t, (size_t)n * sizeof(float));
}

/* Scores of R <= 4 query rows (Q at the first, d long) against the keys
 * c .. c + NV W - 1 of K_j^T (Kt, d rows of ld): per score, acc = 0.0f,
 * acc = fmaf(q[t], k[t], acc) for t = 0..d-1, then acc * scale, as
 * ref_tile_scores. Written to S (row length bc), the keys below bc only. */
static RSK_AI void RSK_FN(sc_tile)(const float *Q, int d, const float *Kt, int ld, int R,
                                   int NV, float scale, float *S, int bc, int c)
{
    RSK_V acc[4][2];
    for (int i = 0; i < R; i++)
        for (int v = 0; v < NV; v++)
            acc[i][v] = RSK_SET1(0.0f);
    for (int t = 0; t < d; t++) {
        const float *kt = Kt + (int64_t)t * ld + c;
        const RSK_V k0 = RSK_LOAD(kt);
        const RSK_V k1 = NV > 1 ? RSK_LOAD(kt + RSK_W) : k0;
        for (int i = 0; i < R; i++) {
            const RSK_V q = RSK_SET1(Q[(int64_t)i * d + t]);
            acc[i][0] = RSK_FMA(q, k0, acc[i][0]);
            if (NV > 1)
                acc[i][1] = RSK_FMA(q, k1, acc[i][1]);
        }
    }
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
    for (int r = 0; r < br; r += 4) {
        const int R = br - r < 4 ? br - r : 4;
        const float *q = Q + (int64_t)r * d;
        float *s = S + (int64_t)r * bc;
        for (int c = 0; c < bc;) {
            const int NV = ld - c >= 2 * RSK_W ? 2 : 1;
            if (R == 4 && NV == 2)                  /* constants: the registers' tile */
                RSK_FN(sc_tile)(q, d, Kt, ld, 4, 2, scale, s, bc, c);
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
    for (int k = 0; k < bc; k++) {
        const float *vk = V + (int64_t)k * ld + c;
        const RSK_V v0 = RSK_LOAD(vk);
        const RSK_V v1 = NV > 1 ? RSK_LOAD(vk + RSK_W) : v0;
        for (int i = 0; i < R; i++) {
            const RSK_V p = RSK_SET1(P[(int64_t)i * bc + k]);
            acc[i][0] = RSK_FMA(p, v0, acc[i][0]);
            if (NV > 1)
                acc[i][1] = RSK_FMA(p, v1, acc[i][1]);
        }
    }
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

#undef RSK_CAT2
#undef RSK_CAT
#undef RSK_FN
#undef RSK_A
#undef RSK_AI
