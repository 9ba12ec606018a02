/*
 * viz_sdl_heat.c — recompute the S_ij / P~_ij tile of the current step (see
 * viz_sdl_heat.h for which tile at which line, and why it is exact).
 *
 * Notation: N rows, d head dimension, B_r x B_c blocks, br x bc the actual
 * rows of a block (the last may be partial), B_s the rows of the naive
 * one-pass softmax. Q, K (N, d) row-major, rounded to the run's dtype as
 * sim_run places them in HBM. The scale is 1.0f / sqrtf(d), computed as
 * sim_run computes it (sqrtf and the division are correctly rounded).
 */
#include "viz_sdl_heat.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_tile.h"

/* What identifies a run's inputs and tiles (zeroed before filling, so that
 * memcmp compares no padding garbage). */
typedef struct {
    sim_algo algo;
    int64_t N, d, Br, Bc, Bs;
    sim_dtype dt;
    int causal, passes;
    uint64_t seed;
} run_key;

typedef enum {
    SHOW_NONE,
    SHOW_S,            /* S_ij, fp32 as computed */
    SHOW_S_DT,         /* S_ij as read back from HBM (dtype) */
    SHOW_P_FA2,        /* exp(S_ij - running max after block j) */
    SHOW_P_FA1,        /* exp(S_ij - rowmax S_ij) */
    SHOW_P_ROWS,       /* naive one pass: softmax of whole rows, fp32 */
    SHOW_P_TILE,       /* naive pass 3: P_ij, fp32 */
    SHOW_P_TILE_DT     /* naive line 3: P_ij as read back (dtype) */
} show_kind;

struct viz_sdl_heat {
    const float *uQ, *uK;        /* the caller's inputs, or NULL */
    /* Inputs rounded to the dtype, for in_key. */
    float *Q, *K;
    run_key in_key;
    int in_state;                /* 0: not made; 1: ready; -1: cannot (in_note) */
    char in_note[200];
    /* The tile shown, for key / line / pass / i / j. */
    run_key key;
    int key_valid, key_line, key_pass;
    int64_t key_i, key_j;
    viz_sdl_heat_view view;
    float *v;
    size_t vcap;
    float *tile;                 /* B_r x B_c scratch */
    size_t tilecap;
    /* fa2: the running row maxima of block mrun_i after K blocks 0..mrun_j. */
    float *mrun;
    size_t mruncap;
    int64_t mrun_i, mrun_j;
    /* naive: row maximum and sum of rows rs_r0 .. rs_r0 + rs_n - 1 of S (as
     * read back in dtype). */
    float *rs_m, *rs_l;
    size_t rs_mcap, rs_lcap;
    int64_t rs_r0, rs_n;
    run_key cache_key;           /* the run mrun and rs_* belong to */
    int cache_valid;
    /* The inputs disagree with the run (sticky for mm_key). */
    int mismatch;
    run_key mm_key;
};

viz_sdl_heat *viz_sdl_heat_new(const float *Q, const float *K)
{
    viz_sdl_heat *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->uQ = Q && K ? Q : NULL;
    h->uK = Q && K ? K : NULL;
    h->mrun_i = -1;
    h->rs_r0 = -1;
    return h;
}

void viz_sdl_heat_free(viz_sdl_heat *h)
{
    if (!h)
        return;
    free(h->Q);
    free(h->K);
    free(h->v);
    free(h->tile);
    free(h->mrun);
    free(h->rs_m);
    free(h->rs_l);
    free(h);
}

static int grow(float **p, size_t *cap, size_t n)
{
    if (n <= *cap)
        return 0;
    float *q = realloc(*p, n * sizeof *q);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

static run_key key_of(const viz_model *m)
{
    const viz_info *info = viz_model_info(m);
    const viz_config *cfg = viz_model_config(m);
    run_key k;
    memset(&k, 0, sizeof k);
    k.algo = info->algo;
    k.N = info->sh.N;
    k.d = info->sh.d;
    k.dt = info->sh.dtype;
    k.causal = info->sh.causal;
    k.Br = info->plan.Br;
    k.Bc = info->plan.Bc;
    k.Bs = info->plan.Bs_r;
    k.passes = info->plan.softmax_passes;
    k.seed = cfg->seed;
    return k;
}

/* The inputs are the same for any algorithm and mask: compare those only. */
static int same_inputs(const run_key *a, const run_key *b)
{
    return a->N == b->N && a->d == b->d && a->dt == b->dt && a->seed == b->seed;
}

static int same_run(const run_key *a, const run_key *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

static int ensure_inputs(viz_sdl_heat *h, const run_key *k)
{
    if (h->in_state != 0 && same_inputs(&h->in_key, k))
        return h->in_state;
    free(h->Q);
    free(h->K);
    h->Q = h->K = NULL;
    h->in_key = *k;
    h->in_state = -1;
    const int64_t nd = k->N * k->d;
    if (nd > VIZ_SDL_HEAT_MAX_ND) {
        snprintf(h->in_note, sizeof h->in_note,
                 "heat map off: N d = %lld is too large to regenerate the inputs "
                 "(at most %lld)", (long long)nd, (long long)VIZ_SDL_HEAT_MAX_ND);
        return -1;
    }
    h->Q = malloc((size_t)nd * sizeof(float));
    h->K = malloc((size_t)nd * sizeof(float));
    float *V = h->uQ ? NULL : malloc((size_t)nd * sizeof(float));
    if (!h->Q || !h->K || (!h->uQ && !V)) {
        free(V);
        snprintf(h->in_note, sizeof h->in_note, "heat map off: out of memory for the inputs");
        return -1;
    }
    if (h->uQ) {
        /* sim_run rounds the caller's inputs as it places them in HBM. */
        memcpy(h->Q, h->uQ, (size_t)nd * sizeof(float));
        memcpy(h->K, h->uK, (size_t)nd * sizeof(float));
        sim_round_to_dtype(h->Q, nd, k->dt);
        sim_round_to_dtype(h->K, nd, k->dt);
    } else {
        sim_random_inputs(k->seed, k->N, k->d, k->dt, h->Q, h->K, V);
        free(V);
    }
    h->in_state = 1;
    return 1;
}

static float run_scale(int64_t d)
{
    return 1.0f / sqrtf((float)d);     /* as sim_run: h.scale */
}

/* S_ij of rows [r0, r0 + br) and columns [c0, c0 + bc) into S (br x bc),
 * masked as the loop orders mask it. */
static void scores(const viz_sdl_heat *h, const run_key *k, int64_t r0, int64_t br,
                   int64_t c0, int64_t bc, float *S)
{
    ref_tile_scores(h->Q + r0 * k->d, h->K + c0 * k->d, (int)br, (int)bc, (int)k->d,
                    run_scale(k->d), S);
    if (k->causal)
        ref_tile_mask_causal(S, (int)br, (int)bc, r0, c0);
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* fa2: m_i after K blocks 0..j of block i (Algorithm 1, line 9: m_new =
 * max(m_i, rowmax S_ij), taken as ref_online_step takes it). Extends the
 * cached maxima when moving forward in j within the same block. */
static int fa2_running_max(viz_sdl_heat *h, const run_key *k, int64_t i, int64_t j,
                           char *note, size_t notelen)
{
    const int64_t r0 = i * k->Br, br = min64(k->Br, k->N - r0);
    if (grow(&h->mrun, &h->mruncap, (size_t)k->Br) != 0 ||
        grow(&h->tile, &h->tilecap, (size_t)(k->Br * k->Bc)) != 0) {
        snprintf(note, notelen, "heat map off: out of memory");
        return -1;
    }
    if (h->mrun_i != i || h->mrun_j > j) {
        if (br * (j + 1) * k->Bc * k->d > VIZ_SDL_HEAT_MAX_WORK) {
            snprintf(note, notelen, "heat map off: the running maximum over %lld blocks "
                     "costs more than %lld multiply-adds", (long long)(j + 1),
                     (long long)VIZ_SDL_HEAT_MAX_WORK);
            return -1;
        }
        for (int64_t r = 0; r < br; r++)
            h->mrun[r] = -REF_INF;                                 /* line 5 */
        h->mrun_i = i;
        h->mrun_j = -1;
    }
    for (int64_t jj = h->mrun_j + 1; jj <= j; jj++) {
        const int64_t c0 = jj * k->Bc, bc = min64(k->Bc, k->N - c0);
        scores(h, k, r0, br, c0, bc, h->tile);
        for (int64_t r = 0; r < br; r++) {
            float m_blk = ref_row_max(h->tile + r * bc, (int)bc);
            h->mrun[r] = m_blk > h->mrun[r] ? m_blk : h->mrun[r];
        }
    }
    h->mrun_j = j;
    return 0;
}

/* naive: row maximum and sum of exp of rows [r0, r0 + n) of S as stored in
 * HBM (dtype), as line 2 computes them: ref_row_max over the row and the sum
 * in column order, which the one-pass and the three-pass softmax keep; in two
 * passes m and l online, tile after tile of B_c (ref_online_step). */
static int naive_row_stats(viz_sdl_heat *h, const run_key *k, int64_t r0, int64_t n,
                           char *note, size_t notelen)
{
    if (h->rs_r0 == r0 && h->rs_n == n)
        return 0;
    if (n * k->N * k->d > VIZ_SDL_HEAT_MAX_WORK) {
        snprintf(note, notelen, "heat map off: softmax statistics of %lld rows of "
                 "length N = %lld cost more than %lld multiply-adds", (long long)n,
                 (long long)k->N, (long long)VIZ_SDL_HEAT_MAX_WORK);
        return -1;
    }
    if (grow(&h->rs_m, &h->rs_mcap, (size_t)n) != 0 ||
        grow(&h->rs_l, &h->rs_lcap, (size_t)n) != 0 ||
        grow(&h->tile, &h->tilecap, (size_t)k->N) != 0) {
        snprintf(note, notelen, "heat map off: out of memory");
        return -1;
    }
    for (int64_t r = 0; r < n; r++) {
        float *row = h->tile;
        scores(h, k, r0 + r, 1, 0, k->N, row);
        sim_round_to_dtype(row, k->N, k->dt);          /* S as stored in HBM */
        if (k->passes == 2) {
            h->rs_m[r] = -REF_INF;
            h->rs_l[r] = 0.0f;
            for (int64_t c0 = 0; c0 < k->N; c0 += k->Bc)
                ref_online_step(row + c0, (int)min64(k->Bc, k->N - c0), &h->rs_m[r],
                                &h->rs_l[r]);
            continue;
        }
        h->rs_m[r] = ref_row_max(row, (int)k->N);
        h->rs_l[r] = ref_exp_sum(row, (int)k->N, h->rs_m[r], 0.0f);
    }
    h->rs_r0 = r0;
    h->rs_n = n;
    return 0;
}

/* Which tile the step shows; for NONE a note saying what happens instead. */
static show_kind classify(const viz_info *info, const viz_state *st, int pass,
                          int64_t *r0, int64_t *rows, int64_t *c0, int64_t *cols,
                          char *note, size_t notelen)
{
    const sim_plan *p = &info->plan;
    const int64_t N = info->sh.N;
    const int line = st->line;
    const int64_t i = st->i, j = st->j;
    show_kind kind = SHOW_NONE;
    const viz_code_line *code = viz_pseudocode_line(info, line);
    const sim_heat heat = code ? code->heat : SIM_HEAT_NONE;
    const int pair = i >= 0 && j >= 0;
    if (pair) {
        *r0 = i * p->Br;
        *rows = min64(p->Br, N - *r0);
        *c0 = j * p->Bc;
        *cols = min64(p->Bc, N - *c0);
    }
    switch (heat) {
    case SIM_HEAT_S:
        kind = pair ? SHOW_S : SHOW_NONE;
        break;
    case SIM_HEAT_P_RUNNING:
        kind = pair ? SHOW_P_FA2 : SHOW_NONE;
        break;
    case SIM_HEAT_P_BLOCK:
        kind = pair ? SHOW_P_FA1 : SHOW_NONE;
        break;
    case SIM_HEAT_SOFTMAX:
        if (p->softmax_passes == 1 && i >= 0) {
            *r0 = i * p->Bs_r;
            *rows = min64(p->Bs_r, N - *r0);
            *c0 = 0;
            *cols = N;
            kind = SHOW_P_ROWS;
        } else if (pair) {
            kind = pass == p->softmax_passes ? SHOW_P_TILE : SHOW_S_DT;
        }
        break;
    case SIM_HEAT_P_STORED:
        kind = pair ? SHOW_P_TILE_DT : SHOW_NONE;
        break;
    case SIM_HEAT_WRITE:
        snprintf(note, notelen, "line %d: block %lld's results go to HBM", line,
                 (long long)(i + 1));
        break;
    default:
        break;
    }
    if (kind == SHOW_NONE && !note[0])
        snprintf(note, notelen, "%s",
                 code && code->heat_note ? code->heat_note
                 : heat == SIM_HEAT_RETURN ? "the run is finished: return O"
                                           : "no score tile at this line");
    return kind;
}

static const viz_sdl_heat_view *none(viz_sdl_heat *h, const char *note)
{
    memset(&h->view, 0, sizeof h->view);
    h->view.kind = VIZ_SDL_HEAT_NONE;
    snprintf(h->view.note, sizeof h->view.note, "%s", note);
    return &h->view;
}

static void set_mismatch(viz_sdl_heat *h, const run_key *k)
{
    h->mismatch = 1;
    h->mm_key = *k;
}

/* The last numbered line of the run's pseudocode whose heat map is `heat`,
 * or 0. */
static int last_line(const viz_info *info, sim_heat heat)
{
    int n;
    const viz_code_line *code = viz_pseudocode(info, &n);
    for (int q = n - 1; q >= 0; q--)
        if (code[q].heat == heat && code[q].line > 0)
            return code[q].line;
    return 0;
}

/* The values of the tile of `kind` (rows x cols from (r0, c0)) into h->v,
 * with the view's title and note. *bad is set where the run's recorded m_i
 * (can_check) differs from the recomputed one. Returns 0, or -1 with a note
 * when the statistics cannot be recomputed. */
static int fill_tile(viz_sdl_heat *h, const viz_info *info, const viz_state *st,
                     const run_key *kp, show_kind kind, int64_t r0, int64_t rows, int64_t c0,
                     int64_t cols, int can_check, int *bad, char *note, size_t notelen)
{
    const run_key k = *kp;
    viz_sdl_heat_view *v = &h->view;
    const viz_stats *sx = &st->stats;
    const char *dt = sim_dtype_name(k.dt);
    switch (kind) {
    case SHOW_S:
    case SHOW_S_DT:
        v->kind = VIZ_SDL_HEAT_S;
        snprintf(v->title, sizeof v->title, "S_ij = Q_i K_j^T / sqrt(d)");
        scores(h, &k, r0, rows, c0, cols, h->v);
        if (kind == SHOW_S_DT) {
            sim_round_to_dtype(h->v, rows * cols, k.dt);
            snprintf(v->note, sizeof v->note, "S_ij read back from HBM (%s), pass %d: %s",
                     dt, st->pass, st->pass == 1 ? "row maxima" : "row sums");
        } else {
            snprintf(v->note, sizeof v->note, "fp32 on chip%s",
                     k.causal ? "; masked scores (col > row) are -inf" : "");
        }
        break;
    case SHOW_P_FA2: {
        if (fa2_running_max(h, &k, st->i, st->j, note, notelen) != 0)
            return -1;
        v->kind = VIZ_SDL_HEAT_P;
        snprintf(v->title, sizeof v->title, "P~_ij = exp(S_ij - m_i)");
        snprintf(v->note, sizeof v->note, "m_i = max over K blocks 1..%lld (the new m_i "
                 "of line 9); fp32 on chip", (long long)(st->j + 1));
        scores(h, &k, r0, rows, c0, cols, h->v);
        for (int64_t r = 0; r < rows; r++) {
            const float sh = ref_shift(h->mrun[r]);
            for (int64_t c = 0; c < cols; c++)
                h->v[r * cols + c] = ref_exp(h->v[r * cols + c] - sh);
        }
        if (can_check)
            for (int x = 0; x < sx->nrows; x++)
                *bad |= !(sx->m_new[x] == h->mrun[x]);
        break;
    }
    case SHOW_P_FA1: {
        v->kind = VIZ_SDL_HEAT_P;
        snprintf(v->title, sizeof v->title, "P~_ij = exp(S_ij - m~_ij)");
        snprintf(v->note, sizeof v->note, "m~_ij = rowmax(S_ij) of this block alone "
                 "(line 10); fp32 on chip");
        scores(h, &k, r0, rows, c0, cols, h->v);
        /* The last line of the block's tile (FA1's 13) stores m_i = m_new. */
        const int check13 = can_check && st->line == last_line(info, SIM_HEAT_P_BLOCK) &&
                            sx->before_valid;
        for (int64_t r = 0; r < rows; r++) {
            float *s = h->v + r * cols;
            const float mt = ref_row_max(s, (int)cols);
            const float sh = ref_shift(mt);
            for (int64_t c = 0; c < cols; c++)
                s[c] = ref_exp(s[c] - sh);
            if (check13 && r < sx->nrows) {
                const float want = mt > sx->m_old[r] ? mt : sx->m_old[r];   /* m_new */
                *bad |= !(sx->m_new[r] == want);
            }
        }
        break;
    }
    case SHOW_P_ROWS:
    case SHOW_P_TILE:
    case SHOW_P_TILE_DT: {
        if (naive_row_stats(h, &k, r0, rows, note, notelen) != 0)
            return -1;
        v->kind = VIZ_SDL_HEAT_P;
        if (kind == SHOW_P_ROWS) {
            snprintf(v->title, sizeof v->title, "P = softmax(S), rows %lld-%lld",
                     (long long)r0, (long long)(r0 + rows - 1));
            snprintf(v->note, sizeof v->note, "S read back in %s, P in fp32 before "
                     "it is written", dt);
        } else {
            snprintf(v->title, sizeof v->title, "P_ij = softmax(S)_ij");
            if (kind == SHOW_P_TILE)
                snprintf(v->note, sizeof v->note, "pass %d: normalised with the row's m "
                         "and l; fp32 before it is written", k.passes);
            else
                snprintf(v->note, sizeof v->note, "P_ij read back from HBM (%s)", dt);
        }
        scores(h, &k, r0, rows, c0, cols, h->v);
        sim_round_to_dtype(h->v, rows * cols, k.dt);
        for (int64_t r = 0; r < rows; r++) {
            const float inv_l = 1.0f / h->rs_l[r];
            const float sh = ref_shift(h->rs_m[r]);
            for (int64_t c = 0; c < cols; c++)
                h->v[r * cols + c] = ref_exp(h->v[r * cols + c] - sh) * inv_l;
        }
        if (kind == SHOW_P_TILE_DT)
            sim_round_to_dtype(h->v, rows * cols, k.dt);
        if (can_check && kind != SHOW_P_TILE_DT && (kind == SHOW_P_ROWS || st->pass == 3))
            for (int x = 0; x < sx->nrows; x++)
                *bad |= !(sx->m_new[x] == h->rs_m[x]);
        break;
    }
    default:
        break;
    }
    return 0;
}

/* The range of the unmasked values (masked ones are counted). */
static void view_range(viz_sdl_heat_view *v, const float *x, int causal, int64_t r0,
                       int64_t rows, int64_t c0, int64_t cols)
{
    int any = 0;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) {
            const float a = x[r * cols + c];
            if (causal && c0 + c > r0 + r) {
                v->nmasked++;
            } else if (!any) {
                v->lo = v->hi = a;
                any = 1;
            } else {
                v->lo = a < v->lo ? a : v->lo;
                v->hi = a > v->hi ? a : v->hi;
            }
        }
}

const viz_sdl_heat_view *viz_sdl_heat_get(viz_sdl_heat *h, const viz_model *m)
{
    const viz_info *info = viz_model_info(m);
    const viz_state *st = viz_model_state(m);
    if (info->nsteps == 0)
        return none(h, "the plan does not fit in M: no step runs");
    const run_key k = key_of(m);
    if (h->key_valid && same_run(&h->key, &k) && h->key_line == st->line &&
        h->key_pass == st->pass && h->key_i == st->i && h->key_j == st->j)
        return &h->view;
    h->key_valid = 0;
    if (!h->cache_valid || !same_run(&h->cache_key, &k)) {   /* another run */
        h->mrun_i = -1;
        h->rs_r0 = -1;
        h->rs_n = 0;
        h->cache_key = k;
        h->cache_valid = 1;
    }

    char note[256] = "";
    int64_t r0 = 0, rows = 0, c0 = 0, cols = 0;
    show_kind kind = classify(info, st, st->pass, &r0, &rows, &c0, &cols, note, sizeof note);
    if (kind == SHOW_NONE)
        return none(h, note);
    if (h->mismatch && same_inputs(&h->mm_key, &k))
        return none(h, "heat map needs seeded inputs: the scores recomputed from the "
                       "seed do not give this run's m_i (pass the .npy inputs to the view)");
    if (ensure_inputs(h, &k) != 1)
        return none(h, h->in_note);
    if (grow(&h->v, &h->vcap, (size_t)(rows * cols)) != 0 ||
        grow(&h->tile, &h->tilecap, (size_t)(k.Br * k.Bc)) != 0)
        return none(h, "heat map off: out of memory");

    viz_sdl_heat_view *v = &h->view;
    memset(v, 0, sizeof *v);
    v->row0 = r0;
    v->col0 = c0;
    v->rows = (int)rows;
    v->cols = (int)cols;
    v->v = h->v;
    const viz_stats *sx = &st->stats;
    /* Where the run recorded m_i of this block after the step, compare. */
    const int can_check = sx->available && sx->shown && sx->after_valid &&
                          !sx->m_is_L_after && sx->row0 == r0 && sx->nrows <= rows;
    int bad = 0;

    if (fill_tile(h, info, st, &k, kind, r0, rows, c0, cols, can_check, &bad, note,
                  sizeof note) != 0)
        return none(h, note);
    if (bad) {
        set_mismatch(h, &k);
        return none(h, "heat map needs seeded inputs: the scores recomputed from the "
                       "seed do not give this run's m_i (pass the .npy inputs to the view)");
    }
    v->checked = can_check && kind != SHOW_S && kind != SHOW_S_DT &&
                 (kind != SHOW_P_FA1 ||
                  (st->line == last_line(info, SIM_HEAT_P_BLOCK) && sx->before_valid));
    v->causal = k.causal;
    view_range(v, h->v, k.causal, r0, rows, c0, cols);
    h->key = k;
    h->key_valid = 1;
    h->key_line = st->line;
    h->key_pass = st->pass;
    h->key_i = st->i;
    h->key_j = st->j;
    return v;
}
void viz_sdl_heat_probe(viz_sdl_heat *h, viz_model *m)
{
    const viz_info *in = viz_model_info(m);
    if (!h || in->nsteps == 0 || !in->computed)
        return;
    const uint64_t here = viz_model_state(m)->step;
    /* The first line whose tile depends on the run's m_i. */
    int n, line = 0;
    const viz_code_line *code = viz_pseudocode(in, &n);
    for (int q = 0; q < n && !line; q++)
        if (code[q].heat == SIM_HEAT_P_RUNNING || code[q].heat == SIM_HEAT_P_BLOCK ||
            code[q].heat == SIM_HEAT_SOFTMAX)
            line = code[q].line;
    /* FA1's m_i takes the new maxima at the last line of its P~_ij tile. */
    if (line && viz_pseudocode_line(in, line)->heat == SIM_HEAT_P_BLOCK)
        line = last_line(in, SIM_HEAT_P_BLOCK);
    uint64_t k;
    if (viz_model_find_step(m, 0, line, VIZ_ANY, VIZ_ANY, &k) != 0)
        return;
    /* The naive softmax over tiles records its statistics for its last
     * pass: at most 2 T_c steps on. */
    for (uint64_t end = k + 2 * (uint64_t)in->plan.Tc + 1; k < end && k < in->nsteps; k++) {
        if (viz_model_seek(m, k) != 0)
            break;
        const viz_state *st = viz_model_state(m);
        if (st->line != line)
            break;
        if (viz_pseudocode_line(in, line)->heat != SIM_HEAT_SOFTMAX ||
            in->plan.softmax_passes == 1 || st->pass == in->plan.softmax_passes) {
            (void)viz_sdl_heat_get(h, m);       /* sets the mismatch, if any */
            break;
        }
    }
    viz_model_seek(m, here);
}
