/*
 * sim_bmask.c — block-sparse masks: the patterns, a grid's block sizes, the
 * checks, and which tiles of a plan they leave visited.
 *
 * A mask is element-wise (sim.h, sim_block_mask): row r sees key c iff block
 * (r / b_r, c / b_c) is 1 and the causal rule allows it. A plan's tile
 * (i, j) of B_r x B_c is visited iff it holds a visible score, the rule the
 * causal ranges already follow; when the tiles are the mask's blocks, the
 * visited tiles are its nonzero blocks (less those the causal rule empties).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_rng.h"
#include "sim_bmask.h"
#include "sim_limits.h"

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

int sim_tile_visible(const sim_shape *sh, int64_t i, int64_t j, int64_t Br, int64_t Bc)
{
    const int64_t Nk = sim_shape_Nk(sh);
    const int64_t r0 = i * Br, r1 = min64(r0 + Br, sh->N) - 1;
    const int64_t c0 = j * Bc, c1 = min64(c0 + Bc, Nk) - 1;
    const sim_block_mask *b = sh->blocks;
    if (!b) {
        const sim_range k = sim_mask_keys(sh, r0, r1);
        return k.lo <= c1 && k.hi >= c0 && k.lo <= k.hi;
    }
    /* Over the mask's block rows the tile meets: the keys those rows of the
     * tile see (one interval: sim_mask_keys), within the tile; a nonzero
     * block among the key blocks of that interval holds a visible score. */
    for (int64_t bi = r0 / b->m.br; bi <= r1 / b->m.br; bi++) {
        const int64_t a0 = bi * b->m.br > r0 ? bi * b->m.br : r0;
        const int64_t a1 = min64((bi + 1) * b->m.br - 1, r1);
        const sim_range k = sim_mask_keys(sh, a0, a1);
        const int64_t lo = k.lo > c0 ? k.lo : c0, hi = min64(k.hi, c1);
        const unsigned char *row = b->m.bits + bi * b->m.cols;
        for (int64_t bj = lo / b->m.bc; lo <= hi && bj <= hi / b->m.bc; bj++)
            if (row[bj])
                return 1;
    }
    return 0;
}

/* The block rows and block keys of a grid of R x C over N_q x N_k:
 * ceil(N_q / R) and ceil(N_k / C), so that R blocks cover the rows; each
 * block must hold a row (and a key), which (R - 1) b_r < N_q says. */
int sim_bmask_grid(sim_block_mask *b, int64_t R, int64_t C, int64_t Nq, int64_t Nk,
                   char *err, size_t errlen)
{
    if (R < 1 || C < 1 || R > Nq || C > Nk) {
        snprintf(err, errlen,
                 "--block-mask: a %lld x %lld mask needs 1 .. N_q = %lld rows and "
                 "1 .. N_k = %lld columns", (long long)R, (long long)C, (long long)Nq,
                 (long long)Nk);
        return -1;
    }
    const int64_t br = (Nq + R - 1) / R, bc = (Nk + C - 1) / C;
    if ((R - 1) * br >= Nq || (C - 1) * bc >= Nk) {
        snprintf(err, errlen,
                 "--block-mask: a %lld x %lld mask over %lld x %lld scores leaves its last "
                 "block empty (blocks of ceil(N_q / R) = %lld rows, ceil(N_k / C) = %lld keys)",
                 (long long)R, (long long)C, (long long)Nq, (long long)Nk, (long long)br,
                 (long long)bc);
        return -1;
    }
    b->R = R;
    b->m.cols = C;
    b->m.br = br;
    b->m.bc = bc;
    return 0;
}

/* "local:K": |i - j| <= K; "strided:K": |i - j| a multiple of K; "global:G,K":
 * block rows and columns below G, and the band of K; "random:P": each block
 * with probability P (seeded), and the diagonal. */
int sim_bmask_pattern(const char *spec, int64_t R, int64_t C, int64_t br, int64_t bc,
                      uint64_t seed, sim_block_mask *out, unsigned char **bits, char *err,
                      size_t errlen)
{
    long long K = -1, G = -1;
    double P = -1.0;
    int n = -1, kind = -1;
    *bits = NULL;
    if (sscanf(spec, "local:%lld%n", &K, &n) == 1 && spec[n] == '\0' && K >= 0)
        kind = 0;
    else if (n = -1, sscanf(spec, "strided:%lld%n", &K, &n) == 1 && spec[n] == '\0' && K >= 1)
        kind = 1;
    else if (n = -1, sscanf(spec, "global:%lld,%lld%n", &G, &K, &n) == 2 && spec[n] == '\0' &&
             G >= 0 && K >= 0)
        kind = 2;
    else if (n = -1, sscanf(spec, "random:%lf%n", &P, &n) == 1 && spec[n] == '\0' && P > 0.0 &&
             P <= 1.0)
        kind = 3;
    if (kind < 0) {
        snprintf(err, errlen, "--block-mask '%s': use local:K (K >= 0), strided:K (K >= 1), "
                 "global:G,K (G, K >= 0), random:P (0 < P <= 1), or a .txt or .npy file",
                 spec);
        return -1;
    }
    if ((uint64_t)R * (uint64_t)C > SIM_MAX_BMASK_BLOCKS) {
        snprintf(err, errlen, "--block-mask: %lld x %lld blocks is more than fasim holds "
                 "(%llu); use larger blocks (--Br, --Bc)", (long long)R, (long long)C,
                 (unsigned long long)SIM_MAX_BMASK_BLOCKS);
        return -1;
    }
    unsigned char *m = malloc((size_t)(R * C));
    if (!m) {
        snprintf(err, errlen, "--block-mask: out of memory");
        return -1;
    }
    ref_rng rng = ref_rng_seed(seed ^ UINT64_C(0xb10cb10cb10cb10c));
    uint64_t nz = 0;
    for (int64_t i = 0; i < R; i++)
        for (int64_t j = 0; j < C; j++) {
            const int64_t dist = i > j ? i - j : j - i;
            int on;
            switch (kind) {
            case 0: on = dist <= K; break;
            case 1: on = dist % K == 0; break;
            case 2: on = i < G || j < G || dist <= K; break;
            /* ref_rng_uniform is on [-1, 1): u01 on [0, 1) */
            default: on = ((double)ref_rng_uniform(&rng) + 1.0) * 0.5 < P || i == j; break;
            }
            m[i * C + j] = (unsigned char)on;
            nz += (uint64_t)on;
        }
    memset(out, 0, sizeof *out);
    out->m.bits = m;
    out->m.cols = C;
    out->m.br = br;
    out->m.bc = bc;
    out->R = R;
    out->nonzero = nz;
    snprintf(out->pattern, sizeof out->pattern, "%s", spec);
    *bits = m;
    return 0;
}

int sim_bmask_check(const sim_shape *sh, char *err, size_t errlen)
{
    const sim_block_mask *b = sh->blocks;
    if (!b)
        return 0;
    const int64_t Nk = sim_shape_Nk(sh);
    if (b->R < 1 || b->m.cols < 1 || b->m.br < 1 || b->m.bc < 1 ||
        b->R * b->m.br < sh->N || b->m.cols * b->m.bc < Nk ||
        (b->R - 1) * b->m.br >= sh->N || (b->m.cols - 1) * b->m.bc >= Nk) {
        snprintf(err, errlen, "--block-mask: its %lld x %lld blocks of %lld x %lld do not "
                 "cover the %lld x %lld scores", (long long)b->R, (long long)b->m.cols,
                 (long long)b->m.br, (long long)b->m.bc, (long long)sh->N, (long long)Nk);
        return -1;
    }
    /* Every query row must see a key: its keys under the causal rule, then
     * a nonzero block among them. */
    for (int64_t r = 0; r < sh->N; r++) {
        const sim_range k = sim_mask_keys(sh, r, r);
        const int64_t bi = r / b->m.br;
        const unsigned char *row = b->m.bits + bi * b->m.cols;
        int seen = 0;
        for (int64_t bj = k.lo / b->m.bc; k.lo <= k.hi && bj <= k.hi / b->m.bc && !seen; bj++)
            seen = row[bj] != 0;
        if (!seen) {
            snprintf(err, errlen, "--block-mask: block row %lld (query rows %lld .. %lld) "
                     "leaves row %lld with no visible key", (long long)bi,
                     (long long)(bi * b->m.br),
                     (long long)(min64((bi + 1) * b->m.br, sh->N) - 1), (long long)r);
            return -1;
        }
    }
    return 0;
}

int sim_bmask_plan_check(const sim_shape *sh, int64_t Br, int64_t Bc, char *err,
                         size_t errlen)
{
    const int64_t Tr = (sh->N + Br - 1) / Br, Tc = (sim_shape_Nk(sh) + Bc - 1) / Bc;
    if (sh->blocks && (uint64_t)Tr * (uint64_t)Tc > SIM_MAX_BMASK_TILES) {
        snprintf(err, errlen, "--block-mask: a plan of %lld x %lld tiles is more than fasim "
                 "maps (%llu tiles); use larger blocks (--Br, --Bc)", (long long)Tr,
                 (long long)Tc, (unsigned long long)SIM_MAX_BMASK_TILES);
        return -1;
    }
    return 0;
}

int sim_bmask_visits_make(const sim_shape *sh, int64_t Br, int64_t Bc, sim_visits *v,
                          char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    if (!sh->blocks)
        return 0;
    if (sim_bmask_plan_check(sh, Br, Bc, err, errlen) != 0)
        return -1;
    const int64_t Tr = (sh->N + Br - 1) / Br, Tc = (sim_shape_Nk(sh) + Bc - 1) / Bc;
    v->Tc = Tc;
    v->bits = malloc((size_t)(Tr * Tc));
    v->js = malloc((size_t)Tr * sizeof *v->js);
    v->is = malloc((size_t)Tc * sizeof *v->is);
    if (!v->bits || !v->js || !v->is) {
        sim_bmask_visits_free(v);
        snprintf(err, errlen, "out of memory for the block mask's tiles");
        return -1;
    }
    for (int64_t j = 0; j < Tc; j++)
        v->is[j] = (sim_range){ 0, -1 };
    for (int64_t i = 0; i < Tr; i++) {
        v->js[i] = (sim_range){ 0, -1 };
        const sim_range c = sim_block_js(sh, i, Br, Bc);   /* the causal band */
        for (int64_t j = 0; j < Tc; j++) {
            const int on = j >= c.lo && j <= c.hi && sim_tile_visible(sh, i, j, Br, Bc);
            v->bits[i * Tc + j] = (unsigned char)on;
            if (!on)
                continue;
            if (v->js[i].lo > v->js[i].hi)
                v->js[i].lo = j;
            v->js[i].hi = j;
            if (v->is[j].lo > v->is[j].hi)
                v->is[j].lo = i;
            v->is[j].hi = i;
        }
    }
    return 0;
}

void sim_bmask_visits_free(sim_visits *v)
{
    free(v->bits);
    free(v->js);
    free(v->is);
    memset(v, 0, sizeof *v);
}
