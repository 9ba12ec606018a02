/*
 * sim_kernel.c — the released kernels' launch choices: block sizes and warps
 * by loop order, pass, head dimension and GPU, as their launch code picks
 * them. sim_plan_kernel (sim_plan.c) turns a choice into a plan.
 *
 * Sources, one per figure below:
 *   [FA2-FWD] flash-attention 2.x, csrc/flash_attn/src/flash_fwd_launch_template.h
 *             (commit 01afd16): run_mha_fwd_hdim{32,64,96,128,192,256} and
 *             run_mha_fwd_splitkv_dispatch, Flash_fwd_kernel_traits<Headdim,
 *             kBlockM, kBlockN, kNWarps, ...>.
 *   [FA2-BWD] flash-attention 2.x, csrc/flash_attn/src/flash_bwd_launch_template.h
 *             (commit 073afd5): run_mha_bwd_hdim{32,64,96,128,160,192,256},
 *             Flash_bwd_kernel_traits<Headdim, kBlockM, kBlockN, kNWarps, ...>.
 *   [FA1-FWD] flash-attention 1.x, csrc/flash_attn/src/fmha_fwd_hdim{32,64,128}.cu:
 *             FMHA_kernel_traits<S, D, STEP, WARPS_M, WARPS_N, ...>, S keys per
 *             block (the outer loop), STEP = 16 query rows per inner step,
 *             WARPS_M x WARPS_N = 1 x 4 warps.
 *   [FA1-BWD] flash-attention 1.x, csrc/flash_attn/src/fmha_bwd_hdim{32,64,128}.cu
 *             (read in the copy PyTorch ships, aten/src/ATen/native/transformers/
 *             cuda/flash_attn/): FMHA_kernel_traits<S, D, 16, 1, 8, ...>, S keys
 *             per block, 16 query rows per step, 1 x 8 warps.
 *   [FA3-FWD] flash-attention 3 (hopper/), tile_size.h (commit 07602adc),
 *             tile_size_fwd_sm90: {kBlockM, kBlockN} by head dimension, element
 *             size and causal masking; mainloop_fwd_sm90_tma_gmma_ws.hpp:
 *             AtomLayoutQK = kBlockM / 64 consumer warpgroups, each 64 rows of
 *             the block, beside one producer warpgroup (4 warps each);
 *             flash_fwd_launch_template.h (commit 000090d0): kStages = 2.
 * kBlockM is B_r (query rows per block), kBlockN is B_c (key rows). fasim has
 * no dropout, so the choices are those without it (DROPOUT_SWITCH's false
 * side); where causal masking or the GPU changes the choice, so does fasim.
 */
#include "sim.h"
#include "sim_loop.h"

#include <math.h>
#include <stdio.h>

uint64_t sim_kernel_reg_bytes(const sim_kernel_target *t, int warps)
{
    uint64_t regs = (uint64_t)t->regs_per_thread * 32u * (uint64_t)warps;
    if (regs > t->regs_per_block)
        regs = t->regs_per_block;
    return regs * 4u;
}

#define KB(x) ((uint64_t)(x) * 1024u)

int64_t sim_kernel_splits_auto(const sim_shape *sh, int sms)
{
    const int64_t slots = 2 * (int64_t)sms;
    const int64_t block_n = sh->d <= 64 ? 256 : sh->d <= 128 ? 128 : 64;
    const int64_t n_blocks = (sim_shape_Nk(sh) + block_n - 1) / block_n;
    const int64_t m_blocks = sim_shape_B(sh) * sim_shape_H(sh) * ((sh->N + 63) / 64);
    if ((double)m_blocks >= 0.8 * (double)slots)
        return 1;
    int64_t most = 128;
    if (slots < most)
        most = slots;
    if (n_blocks < most)
        most = n_blocks;
    double eff[129] = { 0 }, best = 0;
    for (int64_t s = 1; s <= most; s++) {
        /* s splits of ceil(n / s) blocks each: eligible when that differs
         * from s - 1 splits' (else the last split is empty) */
        if (s > 1 && (n_blocks + s - 1) / s == (n_blocks + s - 2) / (s - 1))
            continue;
        const double waves = (double)(m_blocks * s) / (double)slots;
        eff[s] = waves / ceil(waves);
        if (eff[s] > best)
            best = eff[s];
    }
    for (int64_t s = 1; s <= most; s++)
        if (eff[s] > 0 && eff[s] >= 0.85 * best)
            return s;
    return 1;
}

static void set(sim_kernel_choice *c, int64_t Br, int64_t Bc, int warps, const char *source,
                const char *depends)
{
    c->Br = Br;
    c->Bc = Bc;
    c->warps = warps;
    c->source = source;
    c->depends = depends;
}

/* FA2's forward [FA2-FWD]. sm8x is compute capability 8.x other than 8.0
 * (sm86, sm89), as get_compute_capability tests it. */
static int fa2_fwd(const sim_shape *sh, const sim_kernel_target *t, sim_kernel_choice *c)
{
    const int sm8x = t->cc_major == 8 && t->cc_minor > 0;
    switch (sh->d) {
    case 32:   /* run_mha_fwd_hdim32: <32, 128, 128, 4> */
        set(c, 128, 128, 4, "flash_fwd_launch_template.h, run_mha_fwd_hdim32", NULL);
        return 0;
    case 64:   /* run_mha_fwd_hdim64, !Is_dropout: <64, 128, 128, 4> */
        set(c, 128, 128, 4, "flash_fwd_launch_template.h, run_mha_fwd_hdim64", NULL);
        return 0;
    case 96:   /* run_mha_fwd_hdim96: sm8x causal <96, 64, 64, 4>; else <96, 128, 64, 4> */
        if (sm8x && sh->causal)
            set(c, 64, 64, 4, "flash_fwd_launch_template.h, run_mha_fwd_hdim96",
                "sm86/sm89, causal");
        else
            set(c, 128, 64, 4, "flash_fwd_launch_template.h, run_mha_fwd_hdim96",
                sm8x ? "sm86/sm89, not causal" : NULL);
        return 0;
    case 128:  /* run_mha_fwd_hdim128, !Is_dropout: sm8x: <128, 128, 32, 4> not causal,
                  <128, 64, 64, 4> causal; otherwise (A100, H100) <128, 128, 64, 4> */
        if (sm8x)
            set(c, sh->causal ? 64 : 128, sh->causal ? 64 : 32, 4,
                "flash_fwd_launch_template.h, run_mha_fwd_hdim128",
                sh->causal ? "sm86/sm89, causal" : "sm86/sm89, not causal");
        else
            set(c, 128, 64, 4, "flash_fwd_launch_template.h, run_mha_fwd_hdim128", NULL);
        return 0;
    case 192:  /* run_mha_fwd_hdim192, !Is_dropout: <192, 128, 64, 8> */
        set(c, 128, 64, 8, "flash_fwd_launch_template.h, run_mha_fwd_hdim192", NULL);
        return 0;
    case 256:  /* run_mha_fwd_hdim256: <256, 128, 64, 8> when max_smem_per_block >=
                  2 * 256 * (128 + 2 * 64) and max_smem_per_sm < 4 * 256 * (64 + 2 * 64)
                  (A100), else <256, 64, 64, 4> (H100: two blocks per SM) */
        if (t->smem_per_block >= 2u * 256u * (128u + 2u * 64u) &&
            t->smem_per_sm < 4u * 256u * (64u + 2u * 64u))
            set(c, 128, 64, 8, "flash_fwd_launch_template.h, run_mha_fwd_hdim256",
                "shared memory: 128 KiB per block, under 192 KiB per SM");
        else
            set(c, 64, 64, 4, "flash_fwd_launch_template.h, run_mha_fwd_hdim256",
                "shared memory: 192 KiB per SM or more, or under 128 KiB per block");
        return 0;
    }
    return -1;
}

/* FA2's split-KV forward [FA2-FWD], run_mha_fwd_splitkv_dispatch: kBlockM =
 * 64, kBlockN = 256 for d <= 64, 128 for d <= 128, else 64; 4 warps. Its
 * head dims are the forward's. */
static int fa2_split(const sim_shape *sh, const sim_kernel_target *t, sim_kernel_choice *c)
{
    if (fa2_fwd(sh, t, c) != 0)
        return -1;
    set(c, 64, sh->d <= 64 ? 256 : sh->d <= 128 ? 128 : 64, 4,
        "flash_fwd_launch_template.h, run_mha_fwd_splitkv_dispatch", NULL);
    return 0;
}

/* FA2's backward [FA2-BWD]: 8 warps at every head dim; where the template
 * tests max_smem_per_block (the opt-in limit) against 144 KB, the choice at
 * or above it, then the one below. The other thresholds it tests (104 KB at
 * d = 32, 116 KB at 96 and 160, 136 KB at 192) change only whether V is kept
 * in registers or double-buffered, not the tiles. */
static const struct {
    int64_t d;
    int split_144k;               /* 1: the tiles depend on 144 KB per block */
    int64_t Br, Bc, Br_less, Bc_less;
    const char *source;
} FA2_BWD[] = {
    /* run_mha_bwd_hdim32: <32, 128, 128, 8> */
    { 32, 0, 128, 128, 128, 128, "flash_bwd_launch_template.h, run_mha_bwd_hdim32" },
    /* run_mha_bwd_hdim64: >= 144 KB <64, 128, 128, 8>; else <64, 64, 128, 8> */
    { 64, 1, 128, 128, 64, 128, "flash_bwd_launch_template.h, run_mha_bwd_hdim64" },
    /* run_mha_bwd_hdim96: <96, 64, 128, 8> */
    { 96, 0, 64, 128, 64, 128, "flash_bwd_launch_template.h, run_mha_bwd_hdim96" },
    /* run_mha_bwd_hdim128: >= 144 KB <128, 64, 128, 8>; else <128, 64, 64, 8> */
    { 128, 1, 64, 128, 64, 64, "flash_bwd_launch_template.h, run_mha_bwd_hdim128" },
    /* run_mha_bwd_hdim160: <160, 64, 64, 8> */
    { 160, 0, 64, 64, 64, 64, "flash_bwd_launch_template.h, run_mha_bwd_hdim160" },
    /* run_mha_bwd_hdim192: <192, 64, 64, 8> */
    { 192, 0, 64, 64, 64, 64, "flash_bwd_launch_template.h, run_mha_bwd_hdim192" },
    /* run_mha_bwd_hdim256: >= 144 KB (A100; H100 at >= 176 KB the same tiles)
     * <256, 64, 64, 8>; else, without dropout, <256, 64, 32, 8> */
    { 256, 1, 64, 64, 64, 32, "flash_bwd_launch_template.h, run_mha_bwd_hdim256" },
};

static int fa2_bwd(const sim_shape *sh, const sim_kernel_target *t, sim_kernel_choice *c)
{
    for (size_t k = 0; k < sizeof FA2_BWD / sizeof FA2_BWD[0]; k++) {
        if (FA2_BWD[k].d != sh->d)
            continue;
        const int big = t->smem_per_block >= KB(144);
        set(c, big ? FA2_BWD[k].Br : FA2_BWD[k].Br_less, big ? FA2_BWD[k].Bc : FA2_BWD[k].Bc_less,
            8, FA2_BWD[k].source, !FA2_BWD[k].split_144k ? NULL
            : big ? "shared memory: 144 KiB per block or more"
                  : "shared memory: under 144 KiB per block");
        return 0;
    }
    return -1;
}

/* FA1 [FA1-FWD], [FA1-BWD]: B_r = STEP = 16, 1 x 4 warps forward and 1 x 8
 * backward; B_c = S: for d = 32 and 64, 128 when seqlen_k == 128 and 256
 * when seqlen_k >= 256; for d = 128 always 128. The launch code runs nothing
 * for other lengths below 256: fasim takes 128 up to 128 keys and 256 above.
 * (The backward on compute capability 7.5 keeps 128 at d = 64, a GPU fasim
 * has no preset of.) */
static int fa1_choose(const sim_shape *sh, int bwd, sim_kernel_choice *c)
{
    static const char *const SOURCE[2][3] = {
        { "fmha_fwd_hdim32.cu, run_fmha_fwd_hdim32", "fmha_fwd_hdim64.cu, run_fmha_fwd_hdim64",
          "fmha_fwd_hdim128.cu, run_fmha_fwd_hdim128" },
        { "fmha_bwd_hdim32.cu, run_fmha_bwd_hdim32", "fmha_bwd_hdim64.cu, run_fmha_bwd_hdim64",
          "fmha_bwd_hdim128.cu, run_fmha_bwd_hdim128" },
    };
    const int warps = bwd ? 8 : 4;
    const int64_t Nk = sim_shape_Nk(sh);
    switch (sh->d) {
    case 32:   /* <128 or 256, 32, 16, 1, 4 or 8> */
    case 64:   /* <128 or 256, 64, 16, 1, 4 or 8> */
        set(c, 16, Nk <= 128 ? 128 : 256, warps, SOURCE[bwd][sh->d == 64], "the key length");
        return 0;
    case 128:  /* <128, 128, 16, 1, 4 or 8> */
        set(c, 16, 128, warps, SOURCE[bwd][2], NULL);
        return 0;
    }
    return -1;
}

/* FA3's forward [FA3-FWD], Hopper only (WGMMA and TMA are sm_90's): the
 * tiles tile_size_fwd_sm90 returns for the head dimensions fasim serves
 * (64, 96, 128, 192, 256 with d_v = d; no paging, softcap or local window),
 * fp16/bf16 (2 bytes) and fp8 (1 byte); warps: one producer warpgroup and
 * kBlockM / 64 consumer warpgroups. */
static int fa3_fwd(const sim_shape *sh, const sim_kernel_target *t, sim_kernel_choice *c)
{
    static const struct {
        int64_t d, Br16, Bc16, Bc16_causal, Br8, Bc8;
    } FA3[] = {
        { 64, 192, 192, 128, 192, 160 },    /* headdim <= 64 */
        { 96, 192, 144, 144, 192, 128 },    /* <= 96 */
        { 128, 128, 176, 128, 128, 224 },   /* <= 128 */
        { 192, 128, 112, 112, 128, 160 },   /* <= 192 (fp16: 112 as d_v = d > 128) */
        { 256, 128, 80, 80, 128, 128 },     /* > 192 */
    };
    if (t->cc_major < 9)
        return -3;
    for (size_t k = 0; k < sizeof FA3 / sizeof FA3[0]; k++) {
        if (FA3[k].d != sh->d)
            continue;
        const int fp8 = sim_dtype_is_fp8(sh->dtype);
        const int64_t Bc = fp8 ? FA3[k].Bc8 : sh->causal ? FA3[k].Bc16_causal : FA3[k].Bc16;
        const int64_t Br = fp8 ? FA3[k].Br8 : FA3[k].Br16;
        set(c, Br, Bc, (int)(4 * (Br / 64 + 1)), "hopper/tile_size.h, tile_size_fwd_sm90",
            fp8 ? "fp8" : sh->causal && FA3[k].Bc16 != FA3[k].Bc16_causal ? "causal" : NULL);
        return 0;
    }
    return -1;
}

int sim_kernel_choose(sim_algo algo, const sim_shape *sh, const sim_run_opts *run,
                      const sim_kernel_target *t, sim_kernel_choice *out,
                      char *err, size_t errlen)
{
    const sim_loop *desc = sim_algo_loop(algo);
    const int fa3 = desc && desc->wgmma;          /* FlashAttention-3's forward */
    const sim_run_opts plain = { 0 };
    if (!run)
        run = &plain;
    const int bwd = run->pass == SIM_BWD;
    const char *pass = bwd ? " backward" : "";
    if (err && errlen)
        err[0] = '\0';
    if (algo == SIM_FA2 && !bwd && sim_run_S(run) > 1) {
        if (fa2_split(sh, t, out) == 0)
            return 0;
    } else if (algo == SIM_FA2 && !bwd) {
        if (fa2_fwd(sh, t, out) == 0)
            return 0;
    } else if (algo == SIM_FA2) {
        if (fa2_bwd(sh, t, out) == 0)
            return 0;
    } else if (algo == SIM_FA1) {
        if (fa1_choose(sh, bwd, out) == 0)
            return 0;
    } else if (fa3 && !bwd) {
        const int rc = fa3_fwd(sh, t, out);
        if (rc == 0)
            return 0;
        if (rc == -3) {
            if (err)
                snprintf(err, errlen, "--plan kernel: FlashAttention-3's kernels run on Hopper "
                         "(compute capability 9.0: WGMMA and the TMA), not on compute "
                         "capability %d.%d; use --gpu h100, h100-pcie or h200",
                         t->cc_major, t->cc_minor);
            return -1;
        }
    } else {
        if (err)
            snprintf(err, errlen, "--plan kernel: fasim knows no released kernel of %s%s "
                     "(FlashAttention-1 and -2, forward and backward; FlashAttention-3's forward)",
                     sim_algo_name(algo), pass);
        return -2;
    }
    if (err)
        snprintf(err, errlen, "--plan kernel: the released %s%s kernels serve d = %s, not "
                 "d = %lld", sim_algo_name(algo), pass,
                 algo == SIM_FA1 ? "32, 64 and 128" : fa3 ? "64, 96, 128, 192 and 256"
                 : bwd ? "32, 64, 96, 128, 160, 192 and 256" : "32, 64, 96, 128, 192 and 256",
                 (long long)sh->d);
    return -1;
}
