/*
 * sim_claims.c — the built-in claims of the two source articles, the claims-file
 * parser, and the checks (see sim_claims.h).
 *
 * Each built-in check reads only its inputs (c->in) and computes everything
 * else: sizes from N and the dtype, counts from the simulator or the closed
 * forms (sim_measure, engine as asked), growth exponents from sweeps
 * (sim_sweep_run), hardware from the presets. The claims' texts quote the
 * articles (docs/sources.md) in English.
 */
#include "sim_claims.h"
#include "sim_text.h"
#include "sim_limits.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ERR(...) do { if (err && errlen) snprintf(err, errlen, __VA_ARGS__); } while (0)

/* An exponent claim "fits" when within this of the measured exponent (the
 * sweeps' standard of agreement). */
#define EXPO_TOL 0.05

const char *sim_verdict_name(sim_verdict v)
{
    switch (v) {
    case SIM_VERDICT_HOLDS: return "holds";
    case SIM_VERDICT_WRONG: return "wrong";
    case SIM_VERDICT_HOLDS_IF: return "holds only if";
    case SIM_VERDICT_UNCHECKABLE: return "not checkable here (needs a GPU: fasim gpu)";
    }
    return "?";
}

/* ---- small helpers ---------------------------------------------------------- */

static const char *cnt(char *b, size_t n, uint64_t v)
{
    sim_format_count(b, n, v);
    return b;
}

static const char *byt(char *b, size_t n, uint64_t v)
{
    sim_format_bytes(b, n, v);
    return b;
}

static int close_rel(double x, double want, double tol)
{
    return fabs(x - want) <= tol * fabs(want);
}

static void shape_words(char *buf, size_t len, const sim_shape *sh)
{
    char n[32], m[32], mb[32];
    snprintf(buf, len, "N = %s, d = %lld, M = %s (%s B), %s%s", cnt(n, sizeof n, (uint64_t)sh->N),
             (long long)sh->d, byt(m, sizeof m, sh->M), cnt(mb, sizeof mb, sh->M),
             sim_dtype_name(sh->dtype), sh->causal ? ", causal" : "");
}

/* One-axis sweep of the loop orders in mask over p = lo..hi (x2), best plans. */
static int sweep1(const int mask[SIM_ALGO_MAX], const sim_shape *base, sim_param p,
                  int64_t lo, int64_t hi, sim_engine engine, sim_sweep_result *res,
                  char *err, size_t errlen)
{
    sim_sweep_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.base = *base;
    for (int a = 0; a < sim_algo_count(); a++)
        sp.run_algo[a] = mask[a];
    sp.plan_kind = SIM_PLAN_AUTO;
    sp.engine = engine;
    sp.naxes = 1;
    if (sim_axis_range(&sp.axes[0], p, lo, hi, SIM_STEP_MUL, 2, err, errlen) != 0)
        return SIM_EUSAGE;
    return sim_sweep_run(&sp, res, err, errlen);
}

static void range_words(char *buf, size_t len, sim_param p, int64_t lo, int64_t hi)
{
    char a[32], b[32];
    if (p == SIM_PARAM_M)
        snprintf(buf, len, "M = %s .. %s", byt(a, sizeof a, (uint64_t)lo),
                 byt(b, sizeof b, (uint64_t)hi));
    else
        snprintf(buf, len, "%s = %s .. %s", sim_param_name(p), cnt(a, sizeof a, (uint64_t)lo),
                 cnt(b, sizeof b, (uint64_t)hi));
}

/* Elements of tensor t of shape sh in HBM, in double: N^2 passes 64 bits
 * at N > 2^32 (S at N = 2^40 is 2^80 elements, a fair question), so the
 * size is exact below 2^53 and the nearest double above. */
static double tensor_elems(sim_tensor t, const sim_shape *sh)
{
    double N = (double)sh->N, d = (double)sh->d;
    switch (t) {
    case SIM_Q: case SIM_K: case SIM_V: case SIM_O: return N * d;
    case SIM_S: case SIM_P: return N * N;
    default: return N;
    }
}

/* ---- built-in checks ------------------------------------------------------------ */

/* The size of S = Q K^T in HBM, N^2 elements of the dtype, against a claimed
 * number of "GB". in: sh.N, sh.dtype, claimed (GB), tol (from the number of
 * significant digits the document gives). */
static int check_s_size(const sim_builtin_claim *c, sim_engine engine, sim_claim_outcome *o,
                        char *err, size_t errlen)
{
    (void)engine;
    (void)err;
    (void)errlen;
    const sim_claim_inputs *in = &c->in;
    const int e = sim_dtype_bytes(in->sh.dtype);
    const double bytes = (double)in->sh.N * (double)in->sh.N * e;
    const double gb = bytes / 1e9, gib = bytes / 1073741824.0;
    const double mixed = bytes / (1000.0 * 1048576.0);
    char n[32], b[40];
    snprintf(o->config, sizeof o->config, "N = %s, %s (%d B per element); S is N x N",
             cnt(n, sizeof n, (uint64_t)in->sh.N), sim_dtype_name(in->sh.dtype), e);
    snprintf(o->measured, sizeof o->measured, "N^2 x %d B = %s B = %.2f GB = %.2f GiB", e,
             cnt(b, sizeof b, (uint64_t)bytes), gb, gib);
    if (close_rel(gb, in->claimed, in->tol)) {
        o->verdict = SIM_VERDICT_HOLDS;
        snprintf(o->why, sizeof o->why, "%.2f GB (10^9 B) as stated", gb);
        return SIM_OK;
    }
    if (close_rel(gib, in->claimed, in->tol)) {
        o->verdict = SIM_VERDICT_HOLDS;
        snprintf(o->why, sizeof o->why, "in GiB (2^30 B): %.2f GiB", gib);
        return SIM_OK;
    }
    /* "128K" read as 128 x 1024: the other N the document may have meant. */
    if (in->sh.N % 1000 == 0) {
        double N2 = (double)(in->sh.N / 1000 * 1024);
        double gib2 = N2 * N2 * e / 1073741824.0;
        if (close_rel(gib2, in->claimed, in->tol)) {
            o->verdict = SIM_VERDICT_HOLDS_IF;
            snprintf(o->why, sizeof o->why, "N = %s (%lld x 1024) and GB means GiB: then S "
                     "is %.2f GiB; at N = %s it is %.2f GB = %.2f GiB",
                     cnt(b, sizeof b, (uint64_t)N2), (long long)(in->sh.N / 1000), gib2, n,
                     gb, gib);
            return SIM_OK;
        }
    }
    o->verdict = SIM_VERDICT_WRONG;
    if (close_rel(mixed, in->claimed, in->tol))
        snprintf(o->why, sizeof o->why, "%g is bytes / (1000 x 1024^2), a unit between GB "
                 "and GiB; S is %.2f GB = %.2f GiB", in->claimed, gb, gib);
    else
        snprintf(o->why, sizeof o->why, "%g GB is neither %.2f GB nor %.2f GiB",
                 in->claimed, gb, gib);
    return SIM_OK;
}

/* A growth law: the claim gives an exponent per parameter (in->expo, NAN
 * where it says nothing) for loop order in->algo; sweep each parameter over
 * in->range[p] (x2) with the others at in->sh. The claim fits a parameter
 * when its exponent is within EXPO_TOL of the measured one, or at least as
 * close as Theorem 2's. */
static int check_exponents(const sim_builtin_claim *c, sim_engine engine,
                           sim_claim_outcome *o, char *err, size_t errlen)
{
    const sim_claim_inputs *in = &c->in;
    int mask[SIM_ALGO_MAX] = { 0 };
    mask[in->algo] = 1;
    char sw[160];
    shape_words(sw, sizeof sw, &in->sh);
    snprintf(o->config, sizeof o->config, "%s, best plans, swept one parameter at a time "
             "from %s", sim_algo_name(in->algo), sw);
    size_t mo = 0;
    mo += (size_t)snprintf(o->measured + mo, sizeof o->measured - mo, "%s's HBM bytes grow like",
                           sim_algo_name(in->algo));
    int all_fit = 1, first_bad = -1, nparts = 0;
    double bad_a = 0, bad_t = 0;
    for (int p = 0; p < SIM_PARAM_BR; p++) {   /* the shape's parameters */
        if (isnan(in->expo[p]))
            continue;
        sim_sweep_result r;
        int rc = sweep1(mask, &in->sh, (sim_param)p, in->range[p][0], in->range[p][1], engine,
                        &r, err, errlen);
        if (rc != SIM_OK)
            return rc;
        o->simulated |= r.simulated;
        const sim_sweep_fit *f = &r.fits[in->algo][0];
        if (f->status != SIM_FIT_OK) {
            ERR("claim %s: the sweep over %s gave no exponent (%s)", c->id,
                sim_param_name((sim_param)p), sim_fit_status_name(f->status));
            sim_sweep_free(&r);
            return SIM_EFAIL;
        }
        char rw[80];
        range_words(rw, sizeof rw, (sim_param)p, in->range[p][0], in->range[p][1]);
        mo += (size_t)snprintf(o->measured + mo, mo < sizeof o->measured ? sizeof o->measured - mo : 0,
                               "%s %s^%.3f (%s; Theorem 2: %.2f)", nparts++ ? "," : "",
                               sim_param_name((sim_param)p), f->exponent, rw, f->theory);
        double da = fabs(f->exponent - in->expo[p]), dt = fabs(f->exponent - f->theory);
        if (!(da <= EXPO_TOL || da <= dt)) {
            if (all_fit) {
                first_bad = p;
                bad_a = f->exponent;
                bad_t = f->theory;
            }
            all_fit = 0;
        }
        sim_sweep_free(&r);
    }
    if (all_fit) {
        o->verdict = SIM_VERDICT_HOLDS;
        snprintf(o->why, sizeof o->why, "each claimed exponent is within %.2f of the measured "
                 "one (inside d <= M <= N d, M in elements)", EXPO_TOL);
    } else {
        o->verdict = SIM_VERDICT_WRONG;
        snprintf(o->why, sizeof o->why, "in %s the claim says %s^%g, the traffic grows like "
                 "%s^%.2f, and Theorem 2 (%s) says %s^%.2f",
                 sim_param_name((sim_param)first_bad), sim_param_name((sim_param)first_bad),
                 in->expo[first_bad], sim_param_name((sim_param)first_bad), bad_a,
                 in->algo == SIM_NAIVE ? "Theta(Nd + N^2)" : "Theta(N^2 d^2 / M)",
                 sim_param_name((sim_param)first_bad), bad_t);
    }
    return SIM_OK;
}

/* "d^2 / M ~ 0.095, about 10x less IO". in: sh (N, d, M in bytes, dtype),
 * claimed (the factor, 10), tol (what "about" allows). */
static int check_d2_over_m(const sim_builtin_claim *c, sim_engine engine,
                           sim_claim_outcome *o, char *err, size_t errlen)
{
    const sim_claim_inputs *in = &c->in;
    sim_measurement mn, mf;
    int rc = sim_measure(SIM_NAIVE, &in->sh, SIM_PLAN_AUTO, 0, 0, engine, 0, &mn, err, errlen);
    if (rc == SIM_OK)
        rc = sim_measure(SIM_FA2, &in->sh, SIM_PLAN_AUTO, 0, 0, engine, 0, &mf, err, errlen);
    if (rc != SIM_OK)
        return rc;
    o->simulated = mn.simulated || mf.simulated;
    const double d = (double)in->sh.d;
    const double Mel = (double)(in->sh.M / (uint64_t)sim_dtype_bytes(in->sh.dtype));
    const double r_bytes = d * d / (double)in->sh.M, r_elems = d * d / Mel;
    const uint64_t bn = sim_counts_total_bytes(&mn.counts, in->sh.dtype);
    const uint64_t bf = sim_counts_total_bytes(&mf.counts, in->sh.dtype);
    const double ratio = (double)bf / (double)bn;
    char sw[160], b1[32], b2[32];
    shape_words(sw, sizeof sw, &in->sh);
    snprintf(o->config, sizeof o->config, "%s; best plans (naive %lldx%lld, fa2 %lldx%lld)", sw,
             (long long)mn.plan.Br, (long long)mn.plan.Bc, (long long)mf.plan.Br,
             (long long)mf.plan.Bc);
    snprintf(o->measured, sizeof o->measured, "d^2/M = %.3f with M in bytes, %.3f with M in "
             "elements; fa2/naive HBM bytes = %.3f (%s vs %s), %.1fx less", r_bytes, r_elems,
             ratio, byt(b1, sizeof b1, bf), byt(b2, sizeof b2, bn), 1.0 / ratio);
    if (close_rel(1.0 / ratio, in->claimed, in->tol)) {
        o->verdict = SIM_VERDICT_HOLDS;
        snprintf(o->why, sizeof o->why, "FA2 moves %.1fx fewer bytes, about %gx", 1.0 / ratio,
                 in->claimed);
    } else {
        o->verdict = SIM_VERDICT_WRONG;
        char b3[32];
        snprintf(o->why, sizeof o->why, "the paper's M counts elements (%s %s values), so "
                 "d^2/M = %.2f; and Theta drops constants: FA2 moves %.1fx fewer bytes than "
                 "standard attention, not about %gx", cnt(b3, sizeof b3, (uint64_t)Mel),
                 sim_dtype_name(in->sh.dtype), r_elems, 1.0 / ratio, in->claimed);
    }
    return SIM_OK;
}

static const sim_gpu *claim_gpu(const sim_builtin_claim *c, char *err, size_t errlen)
{
    const sim_gpu *g = sim_gpu_find(c->in.gpu);
    if (!g)
        ERR("claim %s: unknown preset '%s'", c->id, c->in.gpu ? c->in.gpu : "(none)");
    return g;
}

/* "192 KB of SRAM per SM". in: gpu, claimed (KiB). */
static int check_sram_per_sm(const sim_builtin_claim *c, sim_engine engine,
                             sim_claim_outcome *o, char *err, size_t errlen)
{
    (void)engine;
    const sim_gpu *g = claim_gpu(c, err, errlen);
    if (!g)
        return SIM_EFAIL;
    const double want = c->in.claimed * 1024.0;
    snprintf(o->config, sizeof o->config, "%s (preset %s)", g->title, g->name);
    snprintf(o->measured, sizeof o->measured, "per SM: %llu KiB of L1 and shared memory "
             "together, of which at most %llu KiB shared; %llu KiB per thread block",
             (unsigned long long)(g->l1_smem_per_sm / 1024),
             (unsigned long long)(g->smem_per_sm / 1024),
             (unsigned long long)(g->smem_per_block / 1024));
    if (close_rel((double)g->smem_per_sm, want, c->in.tol)) {
        o->verdict = SIM_VERDICT_HOLDS;
        snprintf(o->why, sizeof o->why, "the shared memory of one SM is %g KiB",
                 c->in.claimed);
    } else if (close_rel((double)g->l1_smem_per_sm, want, c->in.tol)) {
        o->verdict = SIM_VERDICT_HOLDS_IF;
        snprintf(o->why, sizeof o->why, "it means L1 cache and shared memory together: a "
                 "kernel's shared memory is at most %llu KiB per SM and %llu KiB per block "
                 "(fasim's M with --gpu %s)", (unsigned long long)(g->smem_per_sm / 1024),
                 (unsigned long long)(g->smem_per_block / 1024), g->name);
    } else {
        char b[32];
        o->verdict = SIM_VERDICT_WRONG;
        snprintf(o->why, sizeof o->why, "no %s figure is %g KiB: shared memory is at most "
                 "%llu KiB per SM and %llu KiB (%s B) per thread block", g->name,
                 c->in.claimed, (unsigned long long)(g->smem_per_sm / 1024),
                 (unsigned long long)(g->smem_per_block / 1024),
                 cnt(b, sizeof b, g->smem_per_block));
    }
    return SIM_OK;
}

/* "SRAM bandwidth about 19 TB/s per SM". in: gpu, claimed (B/s), tol. */
static int check_smem_bw(const sim_builtin_claim *c, sim_engine engine, sim_claim_outcome *o,
                         char *err, size_t errlen)
{
    (void)engine;
    const sim_gpu *g = claim_gpu(c, err, errlen);
    if (!g)
        return SIM_EFAIL;
    const double per_sm = g->smem_bytes_per_clk * g->clock_hz;
    const double all = sim_gpu_smem_bandwidth(g);
    snprintf(o->config, sizeof o->config, "%s: %d SMs, %.0f B per clock per SM (32 banks x "
             "4 B) at %.0f MHz", g->title, g->sms, g->smem_bytes_per_clk, g->clock_hz * 1e-6);
    snprintf(o->measured, sizeof o->measured, "shared-memory bandwidth %.2f TB/s per SM, "
             "%.1f TB/s for all %d SMs", per_sm * 1e-12, all * 1e-12, g->sms);
    if (close_rel(per_sm, c->in.claimed, c->in.tol)) {
        o->verdict = SIM_VERDICT_HOLDS;
        snprintf(o->why, sizeof o->why, "one SM moves about %.2f TB/s", per_sm * 1e-12);
    } else {
        o->verdict = SIM_VERDICT_WRONG;
        snprintf(o->why, sizeof o->why, "%.0f TB/s is %s; one SM has %.2f TB/s, %dx less",
                 c->in.claimed * 1e-12,
                 close_rel(all, c->in.claimed, c->in.tol) ? "all SMs together"
                                                          : "neither one SM nor all of them",
                 per_sm * 1e-12, g->sms);
    }
    return SIM_OK;
}

/* "SRAM ~20 MB, ~19 TB/s" for the whole GPU. in: gpu, claimed (bytes),
 * claimed2 (B/s), tol ("~"). */
static int check_sram_total(const sim_builtin_claim *c, sim_engine engine,
                            sim_claim_outcome *o, char *err, size_t errlen)
{
    (void)engine;
    const sim_gpu *g = claim_gpu(c, err, errlen);
    if (!g)
        return SIM_EFAIL;
    const double total = (double)g->sms * (double)g->l1_smem_per_sm;
    const double bw = sim_gpu_smem_bandwidth(g);
    char b[32];
    snprintf(o->config, sizeof o->config, "%s: %d SMs x %llu KiB of L1 + shared memory",
             g->title, g->sms, (unsigned long long)(g->l1_smem_per_sm / 1024));
    snprintf(o->measured, sizeof o->measured, "%s B = %.1f MB = %.2f MiB on chip; "
             "shared-memory bandwidth %.1f TB/s in all",
             cnt(b, sizeof b, (uint64_t)total), total * 1e-6, total / 1048576.0, bw * 1e-12);
    int ok1 = close_rel(total, c->in.claimed, c->in.tol);
    int ok2 = close_rel(bw, c->in.claimed2, c->in.tol);
    o->verdict = ok1 && ok2 ? SIM_VERDICT_HOLDS : SIM_VERDICT_WRONG;
    if (ok1 && ok2)
        snprintf(o->why, sizeof o->why, "both are whole-GPU figures, within %.0f%%: the "
                 "capacity counts L1 too, and one thread block sees %llu KiB of it",
                 100.0 * c->in.tol, (unsigned long long)(g->smem_per_block / 1024));
    else
        snprintf(o->why, sizeof o->why, "%s is off by more than %.0f%%",
                 ok1 ? "the bandwidth" : "the capacity", 100.0 * c->in.tol);
    return SIM_OK;
}

/* "B_r = B_c = 128, d = 128: 128^2 x 2 + 3 x 128 x 128 x 2 = 98,304 B ~ 96 KB".
 * in: B, sh.d, sh.dtype, claimed (bytes). */
static int check_sram_sum(const sim_builtin_claim *c, sim_engine engine, sim_claim_outcome *o,
                          char *err, size_t errlen)
{
    (void)engine;
    const sim_claim_inputs *in = &c->in;
    const uint64_t B = (uint64_t)in->B, d = (uint64_t)in->sh.d;
    const uint64_t e = (uint64_t)sim_dtype_bytes(in->sh.dtype);
    /* The document's own formula: (B_r + 2 B_c) d e + B_r B_c e. */
    const uint64_t sum = (B + 2 * B) * d * e + B * B * e;
    const uint64_t with_o = sum + B * d * e;
    sim_shape sh = in->sh;
    if (sh.N < in->B)
        sh.N = in->B;
    sim_plan p;
    if (sim_plan_make(SIM_FA2, &sh, NULL, in->B, in->B, SIM_PLAN_USER, &p) != 0) {
        ERR("claim %s: invalid block size", c->id);
        return SIM_EFAIL;
    }
    char b1[32], b2[32], b3[32], b4[32];
    snprintf(o->config, sizeof o->config, "B_r = B_c = %llu, d = %llu, %s; buffers Q_i, K_j, "
             "V_j (B x d) and S_ij (B_r x B_c)", (unsigned long long)B,
             (unsigned long long)d, sim_dtype_name(in->sh.dtype));
    snprintf(o->measured, sizeof o->measured, "(B_r + 2 B_c) d x %llu + B_r B_c x %llu = %s B "
             "(%s); with O_i %s B; fasim's FA2 plan (fp32 S_ij and O_i, statistics) %s B",
             (unsigned long long)e, (unsigned long long)e, cnt(b1, sizeof b1, sum),
             byt(b2, sizeof b2, sum), cnt(b3, sizeof b3, with_o),
             cnt(b4, sizeof b4, p.sram_peak));
    if ((double)sum == in->claimed) {
        o->verdict = SIM_VERDICT_HOLDS;
        snprintf(o->why, sizeof o->why, "the sum is %s B as stated", b1);
    } else {
        o->verdict = SIM_VERDICT_WRONG;
        char b5[32], b6[32];
        snprintf(o->why, sizeof o->why, "the sum is %s B = %s, not %s B: %llu^2 x %llu = %s B "
                 "is left out; real kernels keep S_ij and O_i in fp32 (registers), more again",
                 b1, b2, cnt(b5, sizeof b5, (uint64_t)in->claimed), (unsigned long long)B,
                 (unsigned long long)e, cnt(b6, sizeof b6, B * B * e));
    }
    return SIM_OK;
}

/* Which loop is outer: the tensor a loop order reads exactly once belongs to
 * its outer loop; the inner loop's tensors are re-read. in: sh, algo (the
 * loop order the claim says has K/V outside and Q inside). */
static int check_loop_order(const sim_builtin_claim *c, sim_engine engine,
                            sim_claim_outcome *o, char *err, size_t errlen)
{
    const sim_claim_inputs *in = &c->in;
    sim_measurement m[2];
    const sim_algo algos[2] = { SIM_FA1, SIM_FA2 };
    const double Nd = (double)in->sh.N * (double)in->sh.d;
    int kv_outer[2];
    size_t mo = 0;
    for (int k = 0; k < 2; k++) {
        int rc = sim_measure(algos[k], &in->sh, SIM_PLAN_AUTO, 0, 0, engine, 0, &m[k], err,
                             errlen);
        if (rc != SIM_OK)
            return rc;
        o->simulated |= m[k].simulated;
        const sim_counts *ct = &m[k].counts;
        double q = (double)ct->read_elems[SIM_Q] / Nd, kk = (double)ct->read_elems[SIM_K] / Nd;
        double orr = (double)ct->read_elems[SIM_O] / Nd, ow = (double)ct->write_elems[SIM_O] / Nd;
        kv_outer[k] = kk == 1.0 && q > 1.0;
        mo += (size_t)snprintf(o->measured + mo, mo < sizeof o->measured ? sizeof o->measured - mo : 0,
                               "%s%s (B_r %lld, B_c %lld) reads Q %.0fx, K and V %.0fx each, "
                               "O %.0fx, writes O %.0fx", k ? "; " : "", sim_algo_name(algos[k]),
                               (long long)m[k].plan.Br, (long long)m[k].plan.Bc, q, kk, orr, ow);
    }
    char sw[160];
    shape_words(sw, sizeof sw, &in->sh);
    snprintf(o->config, sizeof o->config, "%s; best plans; the tensor read once is the outer "
             "loop's", sw);
    int idx = in->algo == SIM_FA1 ? 0 : 1;
    if (kv_outer[idx]) {
        o->verdict = SIM_VERDICT_HOLDS;
        snprintf(o->why, sizeof o->why, "%s reads K and V once and re-reads Q: K/V outer, Q "
                 "inner", sim_algo_name(in->algo));
    } else {
        o->verdict = SIM_VERDICT_WRONG;
        snprintf(o->why, sizeof o->why, "reversed: FA1 (Algorithm 1) is %s outer, re-reading "
                 "and re-writing O, l, m; FA2 is %s outer, writing O once",
                 kv_outer[0] ? "K/V" : "Q", kv_outer[1] ? "K/V" : "Q");
    }
    return SIM_OK;
}

/* "4 warps own rows [0,7], [8,15], [16,23], [24,31] of the block". in: B
 * (rows of the block), count (warps), claimed (rows per warp). */
static int check_warps(const sim_builtin_claim *c, sim_engine engine, sim_claim_outcome *o,
                       char *err, size_t errlen)
{
    (void)engine;
    const sim_claim_inputs *in = &c->in;
    if (in->count < 1 || in->B < 1) {
        ERR("claim %s: needs a block size and a warp count", c->id);
        return SIM_EFAIL;
    }
    const int64_t per = in->B / in->count;
    const int64_t covered = (int64_t)in->claimed * in->count;
    snprintf(o->config, sizeof o->config, "a block of B_r = %lld query rows, %d warps",
             (long long)in->B, in->count);
    snprintf(o->measured, sizeof o->measured, "%lld / %d = %lld rows per warp; the listed "
             "ranges cover %lld of %lld rows", (long long)in->B, in->count, (long long)per,
             (long long)covered, (long long)in->B);
    if ((double)per == in->claimed && in->B % in->count == 0) {
        o->verdict = SIM_VERDICT_HOLDS;
        snprintf(o->why, sizeof o->why, "%lld rows each cover the block", (long long)per);
    } else {
        o->verdict = SIM_VERDICT_WRONG;
        snprintf(o->why, sizeof o->why, "%d warps over %lld rows own %lld rows each (warp w: "
                 "rows %lld w .. %lld w + %lld); the ranges shown fit a %lld-row block",
                 in->count, (long long)in->B, (long long)per, (long long)per, (long long)per,
                 (long long)(per - 1), (long long)covered);
    }
    return SIM_OK;
}

/* "Causal tiling saves about 2x". in: sh (N, d, M), B (square blocks),
 * claimed (2), tol (what "about" allows). */
static int check_causal(const sim_builtin_claim *c, sim_engine engine, sim_claim_outcome *o,
                        char *err, size_t errlen)
{
    const sim_claim_inputs *in = &c->in;
    const int64_t N = in->sh.N, B = in->B;
    const uint64_t T = (uint64_t)((N + B - 1) / B);
    const uint64_t all = T * T, seen = sim_theory_visited_blocks(N, B, B, 1);
    const double save = (double)all / (double)seen;
    /* The byte saving of FA2 with its best plans, causal against not. */
    sim_shape sc = in->sh, sn = in->sh;
    sc.causal = 1;
    sn.causal = 0;
    sim_measurement mc, mn;
    int rc = sim_measure(SIM_FA2, &sc, SIM_PLAN_AUTO, 0, 0, engine, 0, &mc, err, errlen);
    if (rc == SIM_OK)
        rc = sim_measure(SIM_FA2, &sn, SIM_PLAN_AUTO, 0, 0, engine, 0, &mn, err, errlen);
    if (rc != SIM_OK)
        return rc;
    o->simulated = mc.simulated || mn.simulated;
    const double bsave = (double)sim_counts_total_bytes(&mn.counts, sn.dtype) /
                         (double)sim_counts_total_bytes(&mc.counts, sc.dtype);
    char sw[160], b1[32], b2[32];
    shape_words(sw, sizeof sw, &in->sh);
    snprintf(o->config, sizeof o->config, "%s; blocks %lld x %lld, T = %llu per side", sw,
             (long long)B, (long long)B, (unsigned long long)T);
    snprintf(o->measured, sizeof o->measured, "blocks visited %s of %s: %.3fx fewer "
             "(2T/(T+1) = %.3f); fa2's HBM bytes, best plans: %.2fx fewer",
             cnt(b1, sizeof b1, seen), cnt(b2, sizeof b2, all), save,
             2.0 * (double)T / (double)(T + 1), bsave);
    /* Smallest T with 2T/(T+1) >= claimed (1 - tol). */
    double lo = in->claimed * (1.0 - in->tol);
    /* 2T/(T+1) >= lo  <=>  T >= lo / (2 - lo); the epsilon keeps 9.0000001 at 9. */
    uint64_t tmin = lo < 2.0 ? (uint64_t)ceil(lo / (2.0 - lo) - 1e-9) : 0;
    if (close_rel(save, in->claimed, in->tol) && tmin) {
        o->verdict = SIM_VERDICT_HOLDS_IF;
        snprintf(o->why, sizeof o->why, "T = N / B >= %llu (then 2T/(T+1) >= %.2f): the work "
                 "is T(T+1)/2 of T^2 blocks, so the saving approaches %g but never reaches it",
                 (unsigned long long)tmin, lo, in->claimed);
    } else {
        o->verdict = SIM_VERDICT_WRONG;
        snprintf(o->why, sizeof o->why, "with T = %llu blocks per side the work is T(T+1)/2 "
                 "of T^2 blocks: %.2fx, not about %gx", (unsigned long long)T, save,
                 in->claimed);
    }
    return SIM_OK;
}

/* HBM held beyond Q, K, V and O: every other tensor the run writes, at its
 * full size. */
static double intermediates_bytes(const sim_counts *ct, const sim_shape *sh)
{
    double s = 0.0;
    for (int t = 0; t < SIM_TENSOR_COUNT; t++)
        if (t != SIM_Q && t != SIM_K && t != SIM_V && t != SIM_O && ct->write_elems[t])
            s += tensor_elems((sim_tensor)t, sh) *
                 sim_tensor_bytes((sim_tensor)t, sh->dtype);
    return s;
}

/* "Memory O(N^2) -> O(N)". in: sh (d, M), range[N], claimed (2), claimed2 (1). */
static int check_memory(const sim_builtin_claim *c, sim_engine engine, sim_claim_outcome *o,
                        char *err, size_t errlen)
{
    const sim_claim_inputs *in = &c->in;
    const sim_algo algos[2] = { SIM_NAIVE, SIM_FA2 };
    double x[64], y[2][64], last[2] = { 0, 0 };
    int n = 0;
    for (int64_t N = in->range[SIM_PARAM_N][0]; N <= in->range[SIM_PARAM_N][1] && n < 64;
         N *= 2, n++) {
        sim_shape sh = in->sh;
        sh.N = N;
        x[n] = (double)N;
        for (int k = 0; k < 2; k++) {
            sim_measurement m;
            int rc = sim_measure(algos[k], &sh, SIM_PLAN_AUTO, 0, 0, engine, 0, &m, err, errlen);
            if (rc != SIM_OK)
                return rc;
            o->simulated |= m.simulated;
            y[k][n] = last[k] = intermediates_bytes(&m.counts, &sh);
        }
    }
    sim_fit f[2];
    if (sim_fit_power_law(n, 1, x, y[0], &f[0]) != 0 ||
        sim_fit_power_law(n, 1, x, y[1], &f[1]) != 0) {
        ERR("claim %s: no fit (give a range of N)", c->id);
        return SIM_EFAIL;
    }
    char rw[80], b1[32], b2[32], b3[32], b4[32];
    range_words(rw, sizeof rw, SIM_PARAM_N, in->range[SIM_PARAM_N][0],
                in->range[SIM_PARAM_N][1]);
    snprintf(o->config, sizeof o->config, "%s (x2), d = %lld, M = %s, %s; HBM held besides "
             "Q, K, V, O: every other tensor a run writes", rw, (long long)in->sh.d,
             byt(b3, sizeof b3, in->sh.M), sim_dtype_name(in->sh.dtype));
    snprintf(o->measured, sizeof o->measured, "naive (S, P) grows like N^%.3f, fa2 (L) like "
             "N^%.3f; at N = %s: %s against %s", f[0].exponent[0], f[1].exponent[0],
             cnt(b4, sizeof b4, (uint64_t)x[n - 1]), byt(b1, sizeof b1, (uint64_t)last[0]),
             byt(b2, sizeof b2, (uint64_t)last[1]));
    int ok = fabs(f[0].exponent[0] - in->claimed) <= EXPO_TOL &&
             fabs(f[1].exponent[0] - in->claimed2) <= EXPO_TOL;
    o->verdict = ok ? SIM_VERDICT_HOLDS : SIM_VERDICT_WRONG;
    if (ok)
        snprintf(o->why, sizeof o->why, "standard attention stores S and P (N x N each); "
                 "FlashAttention stores O and N statistics only (L; m and l for FA1)");
    else
        snprintf(o->why, sizeof o->why, "the measured growth is N^%.2f -> N^%.2f, not "
                 "N^%g -> N^%g", f[0].exponent[0], f[1].exponent[0], in->claimed,
                 in->claimed2);
    return SIM_OK;
}

int sim_claims_gpu_pass(const sim_gpu *g, sim_algo algo, sim_pass pass, const sim_shape *sh,
                        const sim_gm_opts *o, sim_plan *plan, sim_gm_result *out, char *err,
                        size_t errlen)
{
    sim_shape s = *sh;
    s.M = g->smem_per_block;
    const sim_run_opts run = { .pass = pass };
    const sim_kernel_target t = sim_gpu_kernel_target(g);
    sim_plan p;
    const int rc = algo == SIM_NAIVE
        ? sim_plan_choose(algo, &s, &run, SIM_PLAN_AUTO, 0, 0, &p, err, errlen)
        : sim_plan_kernel(algo, &s, &run, &t, 0, 0, &p, err, errlen);
    if (rc != 0)
        return -1;
    const sim_gm_opts none = { 0 };
    if (sim_gpu_model_run(g, &p, &s, o ? o : &none, out, err, errlen) != 0)
        return -1;
    if (plan)
        *plan = p;
    return 0;
}

/* The GPU model's time of algo on c's configuration: the forward pass, and
 * with c->in.count the backward too. */
static int model_time(const sim_builtin_claim *c, const sim_gpu *g, sim_algo a, double *t,
                      char *err, size_t errlen)
{
    *t = 0;
    for (int q = 0; q <= (c->in.count ? SIM_BWD : SIM_FWD); q++) {
        sim_gm_result r;
        if (sim_claims_gpu_pass(g, a, (sim_pass)q, &c->in.sh, NULL, NULL, &r, err,
                                errlen) != 0)
            return SIM_EFAIL;
        *t += r.time_s;
    }
    return SIM_OK;
}

/* "X is so many times faster than Y": a time, predicted by the GPU model
 * (sim_gpu_model.h) for the released kernels, since fasim measures none.
 * in: gpu, sh (N, d, dtype, batch, heads), algo (the faster loop order),
 * B (the slower one, a sim_algo), count (1: forward and backward, 0: the
 * forward alone), claimed .. claimed2 (the range of the speed-up), tol. */
static int check_speed(const sim_builtin_claim *c, sim_engine engine, sim_claim_outcome *o,
                       char *err, size_t errlen)
{
    (void)engine;
    const sim_gpu *g = claim_gpu(c, err, errlen);
    if (!g)
        return SIM_EFAIL;
    const sim_claim_inputs *in = &c->in;
    const sim_algo fast = in->algo, slow = (sim_algo)in->B;
    double t_fast, t_slow;
    int rc = model_time(c, g, fast, &t_fast, err, errlen);
    if (rc == SIM_OK)
        rc = model_time(c, g, slow, &t_slow, err, errlen);
    if (rc != SIM_OK)
        return rc;
    const sim_gm_constants k = sim_gpu_model_constants();
    char mb[32], how[96];
    if (slow == SIM_NAIVE)
        snprintf(how, sizeof how, "%s one kernel per operation (its best plan, M = %s)",
                 sim_algo_name(slow), byt(mb, sizeof mb, g->smem_per_block));
    else
        snprintf(how, sizeof how, "%s too", sim_algo_name(slow));
    snprintf(o->config, sizeof o->config, "%s; B = %lld x H = %lld heads, N = %lld, d = %lld, "
             "%s, %s, %s; %s as its released kernel launches it, %s; the model's tensor "
             "cores at %.0f%% of peak, DRAM at %.0f%%, %.0f us a launch", g->title,
             (long long)sim_shape_B(&in->sh), (long long)sim_shape_H(&in->sh),
             (long long)in->sh.N, (long long)in->sh.d, sim_dtype_name(in->sh.dtype),
             in->sh.causal ? "causal" : "not causal",
             in->count ? "forward + backward" : "forward", sim_algo_name(fast), how,
             k.tensor_eff * 100, k.dram_eff * 100, k.launch_s * 1e6);
    const double ratio = t_slow / t_fast;
    o->modelled = 1;
    snprintf(o->measured, sizeof o->measured, "the GPU model's times, not measurements: %s "
             "%.3g ms, %s %.3g ms: %.2fx", sim_algo_name(slow), t_slow * 1e3, sim_algo_name(fast),
             t_fast * 1e3, ratio);
    char range[48];
    if (in->claimed2 > in->claimed)
        snprintf(range, sizeof range, "%g-%gx", in->claimed, in->claimed2);
    else
        snprintf(range, sizeof range, "about %gx", in->claimed);
    const double hi = in->claimed2 > in->claimed ? in->claimed2 : in->claimed;
    if (ratio >= in->claimed * (1 - in->tol) && ratio <= hi * (1 + in->tol)) {
        o->verdict = SIM_VERDICT_HOLDS_IF;
        snprintf(o->why, sizeof o->why, "it means attention alone, as the model predicts it "
                 "(%.2fx is %s, within %.0f%%): a model's %s also runs layers FlashAttention "
                 "does not touch", ratio, range, in->tol * 100,
                 in->count ? "training" : "inference");
    } else {
        o->verdict = SIM_VERDICT_WRONG;
        snprintf(o->why, sizeof o->why, "the model predicts %.2fx here, not %s (within "
                 "%.0f%%)", ratio, range, in->tol * 100);
    }
    return SIM_OK;
}

/* ---- the list ------------------------------------------------------------------- */

#define SHAPE(N_, d_, M_) { .N = (N_), .d = (d_), .M = (M_), .dtype = SIM_FP16 }
#define NO_EXPO { NAN, NAN, NAN }
#define GPU_SHAPE(N_, d_, B_, H_) { .N = (N_), .d = (d_), .dtype = SIM_FP16, .batch = (B_), \
                                    .heads = (H_) }

static const sim_builtin_claim BUILTINS[] = {
    { "s-size-000", SIM_ARTICLE_A ", section 1", 1, 1,
      "S = QK^T at N = 128K (128,000), fp16, takes 31.25 GB",
      /* "31.25" has four significant digits: equal within 0.1%. */
      { .sh = SHAPE(128000, 128, 98304), .claimed = 31.25, .tol = 0.001, .expo = NO_EXPO },
      check_s_size },
    { "s-size-001", SIM_ARTICLE_B ", the part \"The memory wall\"", 15, 1,
      "128,000 x 128,000 x 2 bytes = 32 GB",
      /* "32" has two significant digits: equal within half a unit, 1.6%. */
      { .sh = SHAPE(128000, 128, 98304), .claimed = 32, .tol = 0.016, .expo = NO_EXPO },
      check_s_size },
    { "io-std-n2d", SIM_ARTICLE_A ", section 2.2", 4, 2,
      "standard attention's IO is IO_std = Theta(N^2 d)",
      { .sh = SHAPE(16384, 64, 98304), .algo = SIM_NAIVE, .expo = { NAN, 1.0, NAN },
        .range = { { 0, 0 }, { 32, 128 }, { 0, 0 } } },
      check_exponents },
    { "io-std-form", SIM_ARTICLE_A ", section 2.2", 3, 2,
      "standard attention is O(N^2 d + N^2) = O(N^2 max(Nd, N) / M), simplified to "
      "O(N^2 d / M)",
      /* max(Nd, N) = Nd: N^3 d / M, growing like N^3 and M^-1. */
      { .sh = SHAPE(16384, 64, 98304), .algo = SIM_NAIVE, .expo = { 3.0, NAN, -1.0 },
        .range = { { 4096, 65536 }, { 0, 0 }, { 32768, 262144 } } },
      check_exponents },
    { "io-flash", SIM_ARTICLE_A ", section 2.2", 4, 2,
      "FlashAttention's IO is IO_flash = Theta(N^2 d^2 M^-1)",
      /* Large sizes: the exponents are asymptotic (docs/sweeps.md shows the
       * smaller ranges, where lower-order terms and SRAM that does not scale
       * pull them off). All three ranges stay inside d <= M <= N d. */
      { .sh = SHAPE(65536, 64, 1048576), .algo = SIM_FA2, .expo = { 2.0, 2.0, -1.0 },
        .range = { { 131072, 1048576 }, { 128, 1024 }, { 65536, 1048576 } } },
      check_exponents },
    { "d2-over-m", SIM_ARTICLE_A ", section 2.2", 5, 3,
      "with M = 168 KB and d = 128, d^2 M^-1 = 128^2 / (168 x 1024) ~ 0.095: about 10x "
      "less IO",
      /* The article's N for this section is its 128K; "about" allows 25%. */
      { .sh = SHAPE(128000, 128, 168 * 1024), .claimed = 10, .tol = 0.25, .expo = NO_EXPO },
      check_d2_over_m },
    { "a100-sram-192", SIM_ARTICLE_A ", section 4.1", 8, 4,
      "the A100 has 192 KB of configurable SRAM per SM (shared with L1)",
      { .gpu = "a100", .claimed = 192, .tol = 0.01, .expo = NO_EXPO },
      check_sram_per_sm },
    { "a100-m-168", SIM_ARTICLE_A ", section 2.2", 5, 4,
      "M = 168 KB, the A100's SRAM per SM",
      { .gpu = "a100", .claimed = 168, .tol = 0.01, .expo = NO_EXPO },
      check_sram_per_sm },
    { "a100-smem-bw", SIM_ARTICLE_A ", section 1", 2, 4,
      "A100 SRAM bandwidth 19 TB/s (about 19 TB/s per SM)",
      /* "about": 10%. */
      { .gpu = "a100", .claimed = 19e12, .tol = 0.1, .expo = NO_EXPO },
      check_smem_bw },
    { "sram-20mb", SIM_ARTICLE_B ", the part \"IO awareness\"", 16, 0,
      "SRAM (on chip): about 20 MB, about 19 TB/s",
      /* "~": 25%. */
      { .gpu = "a100", .claimed = 20e6, .claimed2 = 19e12, .tol = 0.25, .expo = NO_EXPO },
      check_sram_total },
    { "sram-sum-96k", SIM_ARTICLE_A ", section 4.1", 9, 5,
      "d = 128, B_r = B_c = 128: 128^2 x 2 + 3 x 128 x 128 x 2 = 98,304 B ~ 96 KB",
      { .sh = SHAPE(4096, 128, 98304), .B = 128, .claimed = 98304, .expo = NO_EXPO },
      check_sram_sum },
    { "loop-order", SIM_ARTICLE_A ", section 6.1", 12, 8,
      "FA2 changed the loops to K/V outer, Q inner (FA1 had Q outer)",
      { .sh = SHAPE(4096, 64, 98304), .algo = SIM_FA2, .expo = NO_EXPO },
      check_loop_order },
    { "warps", SIM_ARTICLE_A ", section 4.3", 10, 9,
      "a 128-thread block's 4 warps own Q rows [0,7], [8,15], [16,23], [24,31]",
      { .B = 128, .count = 4, .claimed = 8, .expo = NO_EXPO },
      check_warps },
    { "causal-2x", SIM_ARTICLE_A ", section 7.2", 13, 10,
      "causal tiling saves about 2x (1.5-1.8x in practice)",
      /* "about 2x": 10%; blocks of 128, the article's tuning table (quote 14). */
      { .sh = SHAPE(4096, 64, 98304), .B = 128, .claimed = 2, .tol = 0.1, .expo = NO_EXPO },
      check_causal },
    { "memory-n2-to-n", SIM_ARTICLE_B ", the part \"Impact\"", 17, 0,
      "memory O(N^2) -> O(N)",
      { .sh = SHAPE(4096, 64, 98304), .claimed = 2, .claimed2 = 1, .expo = NO_EXPO,
        .range = { { 4096, 65536 }, { 0, 0 }, { 0, 0 } } },
      check_memory },
    { "speed-2-4x", SIM_ARTICLE_B ", its title and the part \"Impact\"", 18, 0,
      "FlashAttention makes attention (and inference) 2-4x faster",
      /* Inference: the forward alone, fa2 against standard attention, at the
       * FlashAttention-2 paper's Figure 4 shape (batch 16384 / N, 2048 wide:
       * 32 heads of d = 64) at N = 2k; the range's ends within 5%. */
      { .sh = GPU_SHAPE(2048, 64, 8, 32), .gpu = "a100", .algo = SIM_FA2, .B = SIM_NAIVE,
        .claimed = 2, .claimed2 = 4, .tol = 0.05, .expo = NO_EXPO },
      check_speed },
};
#define NBUILTINS (int)(sizeof BUILTINS / sizeof BUILTINS[0])

const sim_builtin_claim *sim_builtin_claims(int *n)
{
    if (n)
        *n = NBUILTINS;
    return BUILTINS;
}

int sim_builtin_check(const sim_builtin_claim *c, sim_engine engine, sim_claim_outcome *out,
                      char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!c || !c->check) {
        ERR("no such claim");
        return SIM_EUSAGE;
    }
    return c->check(c, engine, out, err, errlen);
}

/* ---- the claims-file format ------------------------------------------------------ */

/* A configuration's limits are the command line's (sim_limits.h); a line of
 * more words than this is no claim. */
#define MAX_TOKENS 32

typedef struct {
    const char *s;
    int len;
    int col;             /* 1-based */
} token;

/* Split at spaces, tabs and commas; stop at '#'. Returns the token count,
 * or -1 when there are more than MAX_TOKENS (*col at the first extra). */
static int tokenize(const char *line, token *t, int *col)
{
    int n = 0;
    for (int i = 0; line[i] && line[i] != '#';) {
        char ch = line[i];
        if (ch == ' ' || ch == '\t' || ch == ',' || ch == '\r') {
            i++;
            continue;
        }
        if (n == MAX_TOKENS) {
            *col = i + 1;
            return -1;
        }
        int j = i;
        while (line[j] && line[j] != ' ' && line[j] != '\t' && line[j] != ',' &&
               line[j] != '#' && line[j] != '\r')
            j++;
        t[n].s = line + i;
        t[n].len = j - i;
        t[n].col = i + 1;
        n++;
        i = j;
    }
    return n;
}

static int tok_is(const token *t, const char *w)
{
    return (int)strlen(w) == t->len && !strncmp(t->s, w, (size_t)t->len);
}

static int tok_is_ci(const token *t, const char *w)
{
    return (int)strlen(w) == t->len && !strncasecmp(t->s, w, (size_t)t->len);
}

static int parse_tensor(const char *s, int len, sim_tensor *out)
{
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        const char *nm = sim_tensor_name((sim_tensor)t);
        if ((int)strlen(nm) == len && !strncmp(nm, s, (size_t)len)) {
            *out = (sim_tensor)t;
            return 0;
        }
    }
    return -1;
}

static int parse_algo_n(const char *s, int len, sim_algo *out)
{
    char b[64];
    if (len <= 0 || len >= (int)sizeof b)
        return -1;
    memcpy(b, s, (size_t)len);
    b[len] = '\0';
    return sim_algo_parse(b, out);
}

/* The numeric part of a token: [+]digits[.digits][e[+-]digits] or
 * [+].digits...; returns its length (0 if none). No hex, no inf/nan. */
static int number_len(const char *s, int len)
{
    int i = 0, digits = 0;
    if (i < len && s[i] == '+')
        i++;
    while (i < len && isdigit((unsigned char)s[i]))
        i++, digits++;
    if (i < len && s[i] == '.') {
        i++;
        while (i < len && isdigit((unsigned char)s[i]))
            i++, digits++;
    }
    if (!digits)
        return 0;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        int j = i + 1;
        if (j < len && (s[j] == '+' || s[j] == '-'))
            j++;
        int ed = 0;
        while (j < len && isdigit((unsigned char)s[j]))
            j++, ed++;
        if (ed)
            i = j;
    }
    return i;
}

static double number_of(const char *s, int len)
{
    char b[64];
    if (len >= (int)sizeof b)
        len = (int)sizeof b - 1;
    memcpy(b, s, (size_t)len);
    b[len] = '\0';
    return strtod(b, NULL);
}

/* A claimed value: number and unit. Returns 0, or -1 with err (*col at the
 * problem). */
static int parse_value(const token *t, double *out, int *col, char *err, size_t errlen)
{
    int nl = number_len(t->s, t->len);
    if (!nl) {
        *col = t->col;
        ERR("'%.*s' is not a number (e.g. 0.1, 4096, 1e9, 32GB, 96KiB)", t->len, t->s);
        return -1;
    }
    double v = number_of(t->s, nl);
    const char *u = t->s + nl;
    int ul = t->len - nl;
    static const struct { const char *u; double f; } UNITS[] = {
        { "", 1 }, { "B", 1 }, { "%", 0.01 },
        { "K", 1024.0 }, { "KiB", 1024.0 }, { "M", 1048576.0 }, { "MiB", 1048576.0 },
        { "G", 1073741824.0 }, { "GiB", 1073741824.0 },
        { "T", 1099511627776.0 }, { "TiB", 1099511627776.0 },
        { "KB", 1e3 }, { "kB", 1e3 }, { "MB", 1e6 }, { "GB", 1e9 }, { "TB", 1e12 },
    };
    for (size_t k = 0; k < sizeof UNITS / sizeof UNITS[0]; k++)
        if ((int)strlen(UNITS[k].u) == ul && !strncmp(UNITS[k].u, u, (size_t)ul)) {
            *out = v * UNITS[k].f;
            return 0;
        }
    *col = t->col + nl;
    ERR("unknown unit '%.*s' (K M G T and KiB MiB GiB TiB are powers of 1024; KB MB GB TB "
        "powers of 1000; B; %%)", ul, u);
    return -1;
}

/* A whole count with K/M/G (1024s), optionally KiB/MiB/GiB and, when
 * bytes, B; in [lo, hi]. "KB" is refused as ambiguous, as on the command
 * line. */
static int parse_count(const char *key, const char *s, int len, int col, int bytes,
                       int64_t lo, int64_t hi, int64_t *out, int *ecol, char *err,
                       size_t errlen)
{
    int nl = number_len(s, len);
    if (!nl || memchr(s, 'e', (size_t)nl) || memchr(s, 'E', (size_t)nl)) {
        *ecol = col;
        ERR("%s=%.*s: not a number (e.g. %s)", key, len, s, bytes ? "96K, 98304, 1.5MiB"
                                                                    : "4096, 64K");
        return -1;
    }
    double v = number_of(s, nl);
    const char *u = s + nl;
    int ul = len - nl;
    double f = 0;
    if (ul == 0 || (bytes && ul == 1 && u[0] == 'B'))
        f = 1;
    else if ((ul == 1 && (u[0] == 'K' || u[0] == 'k')) || (ul == 3 && !strncmp(u, "KiB", 3)))
        f = 1024.0;
    else if ((ul == 1 && u[0] == 'M') || (ul == 3 && !strncmp(u, "MiB", 3)))
        f = 1048576.0;
    else if ((ul == 1 && u[0] == 'G') || (ul == 3 && !strncmp(u, "GiB", 3)))
        f = 1073741824.0;
    if (f == 0) {
        *ecol = col + nl;
        if (ul == 2 && (u[1] == 'B' || u[1] == 'b'))
            ERR("%s=%.*s: '%.*s' is ambiguous (1000 or 1024?); write %c or %ciB", key, len, s,
                ul, u, u[0], u[0]);
        else
            ERR("%s=%.*s: unknown suffix '%.*s' (K, M, G or KiB, MiB, GiB%s)", key, len, s,
                ul, u, bytes ? ", B" : "");
        return -1;
    }
    double x = v * f;
    if (x != floor(x)) {
        *ecol = col;
        ERR("%s=%.*s: not a whole number", key, len, s);
        return -1;
    }
    if (x < (double)lo || x > (double)hi) {
        *ecol = col;
        ERR("%s=%.*s: must be between %lld and %lld", key, len, s, (long long)lo,
            (long long)hi);
        return -1;
    }
    *out = (int64_t)x;
    return 0;
}

static const struct { const char *name; sim_metric m; } METRICS[] = {
    { "hbm_bytes", SIM_MET_HBM_BYTES },   { "hbm_elems", SIM_MET_HBM_ELEMS },
    { "read_bytes", SIM_MET_READ_BYTES }, { "write_bytes", SIM_MET_WRITE_BYTES },
    { "steps", SIM_MET_STEPS },           { "sram_bytes", SIM_MET_SRAM_BYTES },
};
static const struct { const char *name; sim_metric m; } TMETRICS[] = {
    { "read_elems", SIM_MET_T_READ_ELEMS },  { "write_elems", SIM_MET_T_WRITE_ELEMS },
    { "read_bytes", SIM_MET_T_READ_BYTES },  { "write_bytes", SIM_MET_T_WRITE_BYTES },
};

static int parse_metric(const token *t, sim_user_claim *c, int *col, char *err, size_t errlen)
{
    for (size_t k = 0; k < sizeof METRICS / sizeof METRICS[0]; k++)
        if (tok_is(t, METRICS[k].name)) {
            c->metric = METRICS[k].m;
            return 0;
        }
    const char *dot = memchr(t->s, '.', (size_t)t->len);
    if (dot) {
        int tl = (int)(dot - t->s);
        if (parse_tensor(t->s, tl, &c->tensor) != 0) {
            *col = t->col;
            ERR("unknown tensor '%.*s' (Q K V O S P m l L)", tl, t->s);
            return -1;
        }
        token rest = { dot + 1, t->len - tl - 1, t->col + tl + 1 };
        for (size_t k = 0; k < sizeof TMETRICS / sizeof TMETRICS[0]; k++)
            if (tok_is(&rest, TMETRICS[k].name)) {
                c->metric = TMETRICS[k].m;
                return 0;
            }
        *col = rest.col;
        ERR("unknown per-tensor metric '%.*s' (read_elems, write_elems, read_bytes, "
            "write_bytes)", rest.len, rest.s);
        return -1;
    }
    *col = t->col;
    if (strpbrk(t->s, "<>=~") && (size_t)(strpbrk(t->s, "<>=~") - t->s) < (size_t)t->len)
        ERR("put spaces around the comparison in '%.*s'", t->len, t->s);
    else
        ERR("unknown metric '%.*s' (hbm_bytes, hbm_elems, read_bytes, write_bytes, steps, "
            "sram_bytes, or T.read_elems etc.)", t->len, t->s);
    return -1;
}

/* The keys of a claim's "at ..." configuration. */
enum { K_N, K_D, K_M, K_DTYPE, K_CAUSAL, K_BR, K_BC, K_PLAN, K_GPU, K_COUNT };
static const char *const KEYS[K_COUNT] = { "N", "d", "M", "dtype", "causal", "Br", "Bc",
                                           "plan", "gpu" };

/* A numeric key's value v[0, vl) (at column vcol) into c. Returns 0, or -1
 * with err and *col set. */
static int config_number(int key, const char *v, int vl, int vcol, sim_user_claim *c,
                         int *col, char *err, size_t errlen)
{
    int64_t n;
    switch (key) {
    case K_N:
        return parse_count("N", v, vl, vcol, 0, 1, SIM_MAX_N, &c->sh.N, col, err, errlen) ? -1 : 0;
    case K_D:
        return parse_count("d", v, vl, vcol, 0, 1, SIM_MAX_D, &c->sh.d, col, err, errlen) ? -1 : 0;
    case K_M:
        if (parse_count("M", v, vl, vcol, 1, 1, SIM_MAX_M, &n, col, err, errlen))
            return -1;
        c->sh.M = (uint64_t)n;
        return 0;
    default:                     /* K_BR, K_BC */
        if (parse_count(KEYS[key], v, vl, vcol, 0, 1, SIM_MAX_N, &n, col, err, errlen))
            return -1;
        if (key == K_BR)
            c->Br = n;
        else
            c->Bc = n;
        return 0;
    }
}

/* A word key's value (dtype, causal, plan, gpu) into c; v is NULL for a
 * bare "causal". Returns 0, or -1 with err and *col set. */
static int config_word(int key, const char *v, int vl, int vcol, sim_user_claim *c, int *col,
                       char *err, size_t errlen)
{
    token tv = { v, vl, vcol };
    char b[16];
    switch (key) {
    case K_DTYPE:
        if (vl >= (int)sizeof b || (memcpy(b, v, (size_t)vl), b[vl] = '\0',
                                    sim_dtype_parse(b, &c->sh.dtype) != 0)) {
            *col = vcol;
            ERR("dtype=%.*s: unknown type (fp16, bf16 or fp32)", vl, v);
            return -1;
        }
        return 0;
    case K_CAUSAL:
        if (!v || tok_is_ci(&tv, "yes") || tok_is_ci(&tv, "true") || tok_is(&tv, "1"))
            c->sh.causal = 1;
        else if (tok_is_ci(&tv, "no") || tok_is_ci(&tv, "false") || tok_is(&tv, "0"))
            c->sh.causal = 0;
        else {
            *col = vcol;
            ERR("causal=%.*s: use causal, causal=yes or causal=no", vl, v);
            return -1;
        }
        return 0;
    case K_PLAN:
        if (tok_is(&tv, "best") || tok_is(&tv, "auto"))
            c->plan_kind = SIM_PLAN_AUTO;
        else if (tok_is(&tv, "paper"))
            c->plan_kind = SIM_PLAN_PAPER;
        else {
            *col = vcol;
            ERR("plan=%.*s: unknown plan (best or paper)", vl, v);
            return -1;
        }
        return 0;
    default: {                   /* K_GPU */
        const sim_gpu *g = NULL;
        if (vl < (int)sizeof b) {
            memcpy(b, v, (size_t)vl);
            b[vl] = '\0';
            g = sim_gpu_find(b);
        }
        if (!g) {
            char names[160];
            sim_gpu_preset_names(names, sizeof names);
            *col = vcol;
            ERR("gpu=%.*s: unknown preset (%s)", vl, v, names);
            return -1;
        }
        c->gpu = g;
        return 0;
    }
    }
}

static int parse_config(const token *t, int nt, sim_user_claim *c, int *col, char *err,
                        size_t errlen)
{
    int seen[K_COUNT] = { 0 };
    int plan_col = 0;
    for (int i = 0; i < nt; i++) {
        const char *eq = memchr(t[i].s, '=', (size_t)t[i].len);
        int kl = eq ? (int)(eq - t[i].s) : t[i].len;
        int key = -1;
        for (int k = 0; k < K_COUNT; k++)
            if ((int)strlen(KEYS[k]) == kl && !strncasecmp(KEYS[k], t[i].s, (size_t)kl))
                key = k;
        if (key < 0) {
            *col = t[i].col;
            ERR("unknown key '%.*s' (N, d, M, dtype, causal, Br, Bc, plan, gpu)", kl, t[i].s);
            return -1;
        }
        if (seen[key]) {
            *col = t[i].col;
            ERR("%s is given twice", KEYS[key]);
            return -1;
        }
        seen[key] = 1;
        const char *v = eq ? eq + 1 : NULL;
        int vl = eq ? t[i].len - kl - 1 : 0;
        int vcol = t[i].col + kl + 1;
        if (key != K_CAUSAL && (!v || vl == 0)) {
            *col = eq ? vcol : t[i].col + t[i].len;
            ERR("%s needs a value: %s=...", KEYS[key], KEYS[key]);
            return -1;
        }
        int numeric = key == K_N || key == K_D || key == K_M || key == K_BR || key == K_BC;
        if ((numeric ? config_number : config_word)(key, v, vl, vcol, c, col, err, errlen))
            return -1;
        if (key == K_PLAN)
            plan_col = t[i].col;
    }
    if (c->plan_kind == SIM_PLAN_PAPER && (c->Br || c->Bc)) {
        *col = plan_col;
        ERR("plan=paper sets B_r and B_c itself; drop Br/Bc or the plan");
        return -1;
    }
    if (c->Br || c->Bc)
        c->plan_kind = SIM_PLAN_USER;
    if (c->gpu && !seen[K_M])
        c->sh.M = c->gpu->smem_per_block;
    return 0;
}

/* The steps of sim_claim_parse_line, each over the tokens t[0, nt): each
 * returns 0, or -1 with the message in err and its column in *col.
 * 1. The subject t[0]: ALGO, ALGO/ALGO or TENSOR. */
static int parse_subject(const token *t, sim_user_claim *c, int *col, char *err,
                         size_t errlen)
{
    const char *slash = memchr(t[0].s, '/', (size_t)t[0].len);
    char names[256];
    sim_algo_names(names, sizeof names, ", ");
    if (slash) {
        int l1 = (int)(slash - t[0].s), l2 = t[0].len - l1 - 1;
        if (parse_algo_n(t[0].s, l1, &c->algo) != 0) {
            *col = t[0].col;
            ERR("unknown loop order '%.*s' (%s)", l1, t[0].s, names);
            return -1;
        }
        if (parse_algo_n(slash + 1, l2, &c->den) != 0) {
            *col = t[0].col + l1 + 1;
            ERR("unknown loop order '%.*s' (%s)", l2, slash + 1, names);
            return -1;
        }
        c->kind = SIM_QTY_RATIO;
    } else if (parse_algo_n(t[0].s, t[0].len, &c->algo) == 0) {
        c->kind = SIM_QTY_ALGO;
    } else if (parse_tensor(t[0].s, t[0].len, &c->tensor) == 0) {
        c->kind = SIM_QTY_TENSOR;
    } else {
        *col = t[0].col;
        ERR("unknown loop order or tensor '%.*s' (%s, fa2/naive, or a tensor "
            "Q K V O S P m l L)", t[0].len, t[0].s, names);
        return -1;
    }
    return 0;
}

/* 2. The metric t[1]: a tensor's size or elems, or a run's (parse_metric).
 * eol is the column past the claim, where a missing word is reported. */
static int parse_quantity(const token *t, int nt, int eol, sim_user_claim *c, int *col,
                          char *err, size_t errlen)
{
    if (nt < 2) {
        *col = eol;
        ERR("missing the metric after '%.*s' (e.g. hbm_bytes%s)", t[0].len, t[0].s,
            c->kind == SIM_QTY_TENSOR ? "; for a tensor: size or elems" : "");
        return -1;
    }
    if (c->kind == SIM_QTY_TENSOR) {
        if (tok_is(&t[1], "size") || tok_is(&t[1], "bytes"))
            c->metric = SIM_MET_SIZE_BYTES;
        else if (tok_is(&t[1], "elems"))
            c->metric = SIM_MET_SIZE_ELEMS;
        else {
            *col = t[1].col;
            ERR("a tensor has 'size' (bytes) or 'elems', not '%.*s'", t[1].len, t[1].s);
            return -1;
        }
    } else if (parse_metric(&t[1], c, col, err, errlen) != 0) {
        return -1;
    }
    return 0;
}

/* 3. The comparison t[2]. */
static int parse_comparison(const token *t, int nt, int eol, sim_user_claim *c, int *col,
                            char *err, size_t errlen)
{
    if (nt < 3) {
        *col = eol;
        ERR("missing the comparison (<, <=, >, >=, = or ~) and a value");
        return -1;
    }
    static const struct { const char *s; sim_cmp c; } CMPS[] = {
        { "<", SIM_CMP_LT }, { "<=", SIM_CMP_LE }, { ">", SIM_CMP_GT }, { ">=", SIM_CMP_GE },
        { "=", SIM_CMP_EQ }, { "==", SIM_CMP_EQ }, { "~", SIM_CMP_APPROX },
    };
    int found = 0;
    for (size_t k = 0; k < sizeof CMPS / sizeof CMPS[0]; k++)
        if (tok_is(&t[2], CMPS[k].s)) {
            c->cmp = CMPS[k].c;
            found = 1;
        }
    if (!found) {
        *col = t[2].col;
        ERR("expected a comparison (<, <=, >, >=, = or ~), not '%.*s'", t[2].len, t[2].s);
        return -1;
    }
    return 0;
}

/* 5. After the value t[3]: "within P%" (after '~' only), then
 * "at KEY=VALUE ..." (parse_config). */
static int parse_tail(const token *t, int nt, int eol, sim_user_claim *c, int *col,
                      char *err, size_t errlen)
{
    int i = 4;
    if (i < nt && tok_is(&t[i], "within")) {
        if (c->cmp != SIM_CMP_APPROX) {
            *col = t[i].col;
            ERR("'within' goes with '~' only");
            return -1;
        }
        if (i + 1 >= nt) {
            *col = eol;
            ERR("missing the tolerance after 'within' (e.g. within 10%%)");
            return -1;
        }
        const token *p = &t[i + 1];
        if (p->len < 2 || p->s[p->len - 1] != '%' || number_len(p->s, p->len - 1) != p->len - 1) {
            *col = p->col;
            ERR("the tolerance is a percentage, e.g. within 10%%, not '%.*s'", p->len, p->s);
            return -1;
        }
        c->tol = number_of(p->s, p->len - 1) / 100.0;
        i += 2;
    }
    if (i < nt) {
        if (!tok_is(&t[i], "at")) {
            *col = t[i].col;
            ERR("unexpected '%.*s'; the configuration follows 'at' (at N=4096 d=128 M=168K)",
                t[i].len, t[i].s);
            return -1;
        }
        if (i + 1 >= nt) {
            *col = eol;
            ERR("missing the configuration after 'at' (e.g. at N=4096 d=128)");
            return -1;
        }
        if (parse_config(t + i + 1, nt - i - 1, c, col, err, errlen) != 0)
            return -1;
    }
    return 0;
}

int sim_claim_parse_line(const char *line, sim_user_claim *c, int *col, char *err,
                         size_t errlen)
{
    token t[MAX_TOKENS];
    memset(c, 0, sizeof *c);
    c->sh = (sim_shape){ .N = 1024, .d = 64, .M = 96 * 1024, .dtype = SIM_FP16, .causal = 0 };
    c->plan_kind = SIM_PLAN_AUTO;
    c->tol = 0.05;
    *col = 1;
    int nt = tokenize(line, t, col);
    if (nt < 0) {
        ERR("too many words on one line (at most %d)", MAX_TOKENS);
        return -1;
    }
    if (nt == 0)
        return 0;
    const int eol = (int)strcspn(line, "#\r") + 1;
    /* The text as written, for the output. */
    int tl = t[nt - 1].col - 1 + t[nt - 1].len - (t[0].col - 1);
    snprintf(c->text, sizeof c->text, "%.*s", tl, t[0].s);
    if (parse_subject(t, c, col, err, errlen) != 0 ||
        parse_quantity(t, nt, eol, c, col, err, errlen) != 0 ||
        parse_comparison(t, nt, eol, c, col, err, errlen) != 0)
        return -1;
    /* 4. The value. */
    if (nt < 4) {
        *col = eol;
        ERR("missing the value after '%.*s'", t[2].len, t[2].s);
        return -1;
    }
    if (parse_value(&t[3], &c->value, col, err, errlen) != 0 ||
        parse_tail(t, nt, eol, c, col, err, errlen) != 0)
        return -1;
    return 1;
}

void sim_claim_list_free(sim_claim_list *l)
{
    if (!l)
        return;
    free(l->items);
    l->items = NULL;
    l->n = 0;
}

int sim_claims_parse(const char *name, const char *text, sim_claim_list *out, char *err,
                     size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (err && errlen)
        err[0] = '\0';
    int cap = 0, nbad = 0, lineno = 0;
    size_t eo = 0;
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        lineno++;
        char line[1024];
        sim_user_claim c;
        int col = 1, rc;
        char msg[320];
        if (len >= sizeof line) {
            rc = -1;
            col = (int)sizeof line;
            snprintf(msg, sizeof msg, "line too long (at most %d characters)",
                     (int)sizeof line - 1);
            memcpy(line, p, sizeof line - 1);
            line[sizeof line - 1] = '\0';
        } else {
            memcpy(line, p, len);
            line[len] = '\0';
            rc = sim_claim_parse_line(line, &c, &col, msg, sizeof msg);
        }
        if (rc < 0) {
            if (nbad < 10 && err && eo < errlen) {
                /* The line (cut to 100 characters) and a caret under the column. */
                int show = (int)strlen(line) < 100 ? (int)strlen(line) : 100;
                int caret = col - 1 < show ? col - 1 : show;
                char pad[128];
                for (int k = 0; k < caret; k++)
                    pad[k] = line[k] == '\t' ? '\t' : ' ';
                pad[caret] = '\0';
                int w = snprintf(err + eo, errlen - eo, "%s%s:%d:%d: %s\n    %.*s\n    %s^",
                                 nbad ? "\n" : "", name, lineno, col, msg, show, line, pad);
                if (w > 0)
                    eo += (size_t)w;
                if (eo >= errlen)
                    eo = errlen;
            }
            nbad++;
        } else if (rc > 0 && !nbad) {
            if (out->n == SIM_MAX_CLAIMS) {
                sim_claim_list_free(out);
                ERR("%s:%d: more than %d claims; a claims file holds at most %d (each "
                    "claim's plan search takes up to 40 ms)", name, lineno, SIM_MAX_CLAIMS,
                    SIM_MAX_CLAIMS);
                return 1;
            }
            if (out->n == cap) {
                int nc = cap ? cap * 2 : 16;
                sim_user_claim *ni = realloc(out->items, (size_t)nc * sizeof *ni);
                if (!ni) {
                    sim_claim_list_free(out);
                    ERR("out of memory reading %s", name);
                    return -1;
                }
                out->items = ni;
                cap = nc;
            }
            c.line = lineno;
            out->items[out->n++] = c;
        }
        p += len;
        if (*p == '\n')
            p++;
    }
    if (nbad) {
        sim_claim_list_free(out);
        if (nbad > 10 && err && eo < errlen)
            snprintf(err + eo, errlen - eo, "\n%s: %d malformed lines in all", name, nbad);
    }
    return nbad;
}

/* ---- checking a user claim ---------------------------------------------------------- */

static const char *metric_name(const sim_user_claim *c)
{
    for (size_t k = 0; k < sizeof METRICS / sizeof METRICS[0]; k++)
        if (METRICS[k].m == c->metric)
            return METRICS[k].name;
    for (size_t k = 0; k < sizeof TMETRICS / sizeof TMETRICS[0]; k++)
        if (TMETRICS[k].m == c->metric)
            return TMETRICS[k].name;
    return c->metric == SIM_MET_SIZE_ELEMS ? "elems" : "size";
}

/* The metric's value for one loop order's measurement. */
static double metric_value(const sim_user_claim *c, const sim_measurement *m)
{
    const sim_counts *ct = &m->counts;
    const sim_dtype dt = c->sh.dtype;
    const int eb = sim_tensor_bytes(c->tensor, dt);
    switch (c->metric) {
    case SIM_MET_HBM_BYTES: return (double)sim_counts_total_bytes(ct, dt);
    case SIM_MET_HBM_ELEMS: return (double)sim_counts_elems(ct);
    case SIM_MET_READ_BYTES: return (double)sim_counts_read_bytes(ct, dt);
    case SIM_MET_WRITE_BYTES: return (double)sim_counts_write_bytes(ct, dt);
    case SIM_MET_STEPS: return (double)m->steps;
    case SIM_MET_SRAM_BYTES: return (double)m->plan.sram_peak;
    case SIM_MET_T_READ_ELEMS: return (double)ct->read_elems[c->tensor];
    case SIM_MET_T_WRITE_ELEMS: return (double)ct->write_elems[c->tensor];
    case SIM_MET_T_READ_BYTES: return (double)ct->read_elems[c->tensor] * eb;
    case SIM_MET_T_WRITE_BYTES: return (double)ct->write_elems[c->tensor] * eb;
    default: return 0.0;
    }
}

static void value_words(char *buf, size_t len, double v, int integral)
{
    if (integral && v >= 0 && v < 1.8e19 && v == floor(v)) {
        char b[40];
        sim_format_count(b, sizeof b, (uint64_t)v);
        snprintf(buf, len, "%s", b);
    } else {
        snprintf(buf, len, "%.6g", v);
    }
}

static const char *cmp_text(sim_cmp c)
{
    switch (c) {
    case SIM_CMP_LT: return "<";
    case SIM_CMP_LE: return "<=";
    case SIM_CMP_GT: return ">";
    case SIM_CMP_GE: return ">=";
    case SIM_CMP_EQ: return "=";
    default: return "~";
    }
}

/* The loop orders claim c measures into a[]: its ALGO, and the denominator
 * of a ratio. Returns how many (0 for a tensor's size, which runs nothing). */
static int claim_algos(const sim_user_claim *c, sim_algo a[2])
{
    if (c->kind == SIM_QTY_TENSOR)
        return 0;
    a[0] = c->algo;
    a[1] = c->den;
    return c->kind == SIM_QTY_RATIO ? 2 : 1;
}

uint64_t sim_claims_sim_steps(const sim_claim_list *l, sim_engine engine)
{
    uint64_t total = 0;
    for (int k = 0; k < l->n && engine != SIM_ENGINE_CLOSED; k++) {
        const sim_user_claim *c = &l->items[k];
        sim_algo a[2];
        int na = claim_algos(c, a);
        for (int q = 0; q < na; q++) {
            sim_measurement m;
            if (sim_measure(a[q], &c->sh, c->plan_kind, c->Br, c->Bc, SIM_ENGINE_CLOSED, 0, &m,
                            NULL, 0) != SIM_OK)
                continue;               /* its check reports why */
            if (engine == SIM_ENGINE_AUTO && m.steps > SIM_ENGINE_AUTO_STEPS)
                continue;               /* the closed forms answer it */
            total = m.steps > UINT64_MAX - total ? UINT64_MAX : total + m.steps;
        }
    }
    return total;
}

int sim_user_claim_check(const sim_user_claim *c, sim_engine engine, sim_claim_outcome *o,
                         char *err, size_t errlen)
{
    return sim_user_claim_check_within(c, engine, 0, o, err, errlen);
}

int sim_user_claim_check_within(const sim_user_claim *c, sim_engine engine, uint64_t max_steps,
                                sim_claim_outcome *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    char sw[160];
    shape_words(sw, sizeof sw, &c->sh);
    const char *plan = c->plan_kind == SIM_PLAN_PAPER ? "paper plans"
                       : c->plan_kind == SIM_PLAN_USER ? "your blocks" : "best plans";
    size_t co = (size_t)snprintf(o->config, sizeof o->config, "%s", sw);
    if (c->kind != SIM_QTY_TENSOR)
        co += (size_t)snprintf(o->config + co, sizeof o->config - co, ", %s", plan);
    if (c->Br)
        co += (size_t)snprintf(o->config + co, sizeof o->config - co, ", B_r = %lld",
                               (long long)c->Br);
    if (c->Bc)
        co += (size_t)snprintf(o->config + co, sizeof o->config - co, ", B_c = %lld",
                               (long long)c->Bc);
    if (c->gpu)
        snprintf(o->config + co, sizeof o->config - co, " (M from --gpu %s)", c->gpu->name);

    double v = 0.0;
    int integral = 1;
    char a1[48], a2[48];
    if (c->kind == SIM_QTY_TENSOR) {
        double el = tensor_elems(c->tensor, &c->sh);
        v = c->metric == SIM_MET_SIZE_ELEMS ? el : el * sim_tensor_bytes(c->tensor, c->sh.dtype);
        value_words(a1, sizeof a1, v, 1);
        snprintf(o->measured, sizeof o->measured, "%s %s = %s%s", sim_tensor_name(c->tensor),
                 metric_name(c), a1, c->metric == SIM_MET_SIZE_BYTES ? " B" : "");
    } else {
        sim_measurement m1, m2;
        int rc = sim_measure(c->algo, &c->sh, c->plan_kind, c->Br, c->Bc, engine, max_steps,
                             &m1, err, errlen);
        if (rc != SIM_OK)
            return rc;
        o->simulated = m1.simulated;
        double v1 = metric_value(c, &m1);
        const char *mn = metric_name(c);
        char tn[8] = "";
        if (c->metric >= SIM_MET_T_READ_ELEMS && c->metric <= SIM_MET_T_WRITE_BYTES)
            snprintf(tn, sizeof tn, "%s.", sim_tensor_name(c->tensor));
        value_words(a1, sizeof a1, v1, 1);
        if (c->kind == SIM_QTY_ALGO) {
            v = v1;
            snprintf(o->measured, sizeof o->measured, "%s %s%s = %s (B_r %lld, B_c %lld)",
                     sim_algo_name(c->algo), tn, mn, a1, (long long)m1.plan.Br,
                     (long long)m1.plan.Bc);
        } else {
            rc = sim_measure(c->den, &c->sh, c->plan_kind, c->Br, c->Bc, engine, max_steps,
                             &m2, err, errlen);
            if (rc != SIM_OK)
                return rc;
            o->simulated |= m2.simulated;
            double v2 = metric_value(c, &m2);
            if (v2 == 0.0) {
                ERR("%s's %s%s is 0 here: the ratio is undefined", sim_algo_name(c->den), tn,
                    mn);
                return SIM_EUSAGE;
            }
            v = v1 / v2;
            integral = 0;
            value_words(a2, sizeof a2, v2, 1);
            snprintf(o->measured, sizeof o->measured, "%s %s%s = %s, %s %s%s = %s: ratio %.6g",
                     sim_algo_name(c->algo), tn, mn, a1, sim_algo_name(c->den), tn, mn, a2, v);
        }
    }
    int holds;
    switch (c->cmp) {
    case SIM_CMP_LT: holds = v < c->value; break;
    case SIM_CMP_LE: holds = v <= c->value; break;
    case SIM_CMP_GT: holds = v > c->value; break;
    case SIM_CMP_GE: holds = v >= c->value; break;
    case SIM_CMP_EQ: holds = v == c->value; break;
    default: holds = fabs(v - c->value) <= c->tol * fabs(c->value); break;
    }
    o->verdict = holds ? SIM_VERDICT_HOLDS : SIM_VERDICT_WRONG;
    char mv[48], cv[48];
    value_words(mv, sizeof mv, v, integral);
    value_words(cv, sizeof cv, c->value, 1);
    if (c->cmp == SIM_CMP_APPROX)
        snprintf(o->why, sizeof o->why, "%s is %.2f%% off %s (allowed: %g%%)", mv,
                 c->value ? 100.0 * fabs(v - c->value) / fabs(c->value) : INFINITY, cv,
                 100.0 * c->tol);
    else
        snprintf(o->why, sizeof o->why, "%s %s %s is %s", mv, cmp_text(c->cmp), cv,
                 holds ? "true" : "false");
    return SIM_OK;
}

/* ---- output ----------------------------------------------------------------------- */

/* Print "lead" then text wrapped at 79 columns, continuation lines indented
 * by indent spaces; no trailing spaces. */
static void wrap(FILE *out, const char *lead, int indent, const char *text)
{
    sim_text_wrap_lead(out, lead, (size_t)indent, 79, text);
}

void sim_claim_print(FILE *out, int k, const char *claim, const char *source,
                     const sim_claim_outcome *o)
{
    char lead[32], v[600];
    snprintf(lead, sizeof lead, "%2d. ", k);
    wrap(out, lead, 4, claim);
    if (source && source[0])
        wrap(out, "    source:   ", 14, source);
    wrap(out, "    config:   ", 14, o->config);
    wrap(out, o->modelled ? "    modelled: " : "    measured: ", 14, o->measured);
    switch (o->verdict) {
    case SIM_VERDICT_HOLDS: snprintf(v, sizeof v, "HOLDS: %s", o->why); break;
    case SIM_VERDICT_WRONG: snprintf(v, sizeof v, "WRONG: %s", o->why); break;
    case SIM_VERDICT_HOLDS_IF: snprintf(v, sizeof v, "HOLDS ONLY IF %s", o->why); break;
    case SIM_VERDICT_UNCHECKABLE:
        snprintf(v, sizeof v, "NOT CHECKABLE HERE (needs a GPU: fasim gpu): %s", o->why);
        break;
    }
    wrap(out, "    verdict:  ", 14, v);
}

void sim_claim_json(sim_json *w, const char *id, const char *claim, const char *source,
                    int quote, int seed_row, const sim_claim_outcome *o)
{
    static const char *const V[] = { "holds", "wrong", "holds_if", "not_checkable" };
    sim_json_obj(w, NULL);
    sim_json_str(w, "id", id);
    sim_json_str(w, "claim", claim);
    sim_json_str(w, "source", source);
    sim_json_int(w, "quote", quote);
    sim_json_int(w, "seed_row", seed_row);
    sim_json_str(w, "config", o->config);
    sim_json_str(w, "measured", o->measured);
    sim_json_str(w, "verdict", V[o->verdict]);
    sim_json_str(w, "why", o->why);
    sim_json_bool(w, "simulated", o->simulated);
    sim_json_bool(w, "modelled", o->modelled);
    sim_json_end(w);
}
