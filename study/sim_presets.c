/*
 * sim_presets.c — the hardware presets and the roofline (see sim_presets.h).
 *
 * Sources, cited per number below:
 *   [DS-A100]  NVIDIA A100 Tensor Core GPU datasheet (A100 80GB and 40GB SXM
 *              columns).
 *   [WP-A100]  NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020).
 *   [DS-H100]  NVIDIA H100 Tensor Core GPU datasheet (H100 SXM and H100 PCIe
 *              columns).
 *   [WP-H100]  NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022).
 *   [DS-H200]  NVIDIA H200 Tensor Core GPU datasheet (H200 SXM column).
 *   [CUDA-PG]  CUDA C++ Programming Guide, "Technical Specifications per
 *              Compute Capability" (shared memory per SM and per block) and
 *              the shared-memory sections for 8.x and 9.0 (32 banks of 4 B),
 *              resident blocks, warps and threads per SM, grid limits, and the
 *              arithmetic-instruction throughput table (exp2 per clock).
 *   [FA3]      Shah et al., "FlashAttention-3: Fast and Accurate Attention with
 *              Asynchrony and Low-precision" (2024), section 2.2.
 *   [CUDA-BP]  CUDA C++ Best Practices Guide, "Coalesced access to global
 *              memory": 128-byte lines of 32-byte sectors.
 *   [MB-A100]  Abdelkhalik et al., "Demystifying the Nvidia Ampere
 *              Architecture through Microbenchmarking" (2022): global memory
 *              latency on A100.
 *   [CC-H100]  Chips and Cheese, "Nvidia's H100: Funny L2, and Tons of
 *              Bandwidth" (2023), measured on an H100 PCIe: 114 SMs, 50 MB
 *              of L2, a largest boost clock of 1755 MHz.
 * Two numbers have no published source: the L2 bandwidth of Hopper (the
 * H100 whitepaper gives none, where A100's gives 5120 bytes per clock) and
 * its DRAM latency (microbenchmark papers measure Ampere's; none of those
 * searched, nor the whitepaper or the CUDA guides, gives Hopper's in
 * seconds). The Hopper presets carry A100's figures for both, marked
 * "an estimate" where they stand.
 * Datasheets quote tensor rates "with sparsity"; the dense rate is half of
 * that, and dense is what attention uses.
 */
#include "sim_presets.h"
#include "sim_loop.h"

#include <string.h>
#include <strings.h>

/* What a compute capability fixes, the same on every GPU of it: shared
 * memory, registers, resident limits, grid, L2 lines, exp throughput. */
#define CC_8_0                                                                       \
    .cc_major = 8, .cc_minor = 0,            /* [CUDA-PG]: compute capability 8.0 */ \
    .smem_per_block = 163 * 1024,            /* [CUDA-PG] cc 8.0: 163 KB per block   \
                                                (opt-in; cudaDevAttrMaxSharedMemory- \
                                                PerBlockOptin = 166,912) */          \
    .smem_per_sm = 164 * 1024,               /* [CUDA-PG] cc 8.0: 164 KB per SM */   \
    .regs_per_block = 65536,                 /* [CUDA-PG] cc 8.0: 64K 32-bit         \
                                                registers per thread block */        \
    .regs_per_sm = 65536,                    /* [CUDA-PG] cc 8.0; [WP-A100]: 256 KB  \
                                                register file per SM */              \
    .max_blocks_per_sm = 32,                 /* [CUDA-PG] cc 8.0 */                  \
    CC_COMMON
#define CC_9_0                                                                       \
    .cc_major = 9, .cc_minor = 0,            /* [CUDA-PG]: compute capability 9.0 */ \
    .smem_per_block = 227 * 1024,            /* [CUDA-PG] cc 9.0: 227 KB per block   \
                                                (opt-in) = 232,448 B */              \
    .smem_per_sm = 228 * 1024,               /* [CUDA-PG] cc 9.0: 228 KB per SM */   \
    .regs_per_block = 65536,                 /* [CUDA-PG] cc 9.0: 64K 32-bit         \
                                                registers per thread block */        \
    .regs_per_sm = 65536,                    /* [CUDA-PG] cc 9.0; [WP-H100]: 256 KB  \
                                                per SM */                            \
    .max_blocks_per_sm = 32,                 /* [CUDA-PG] cc 9.0 */                  \
    CC_COMMON
/* ... and what 8.0 and 9.0 share. */
#define CC_COMMON                                                                    \
    .smem_bytes_per_clk = 128.0,             /* [CUDA-PG]: 32 banks x 4 B a clock */ \
    .regs_per_thread = 255,                  /* [CUDA-PG]: at most 255 per thread */ \
    .max_warps_per_sm = 64,                  /* [CUDA-PG] cc 8.0 and 9.0 */          \
    .max_threads_per_sm = 2048,              /* [CUDA-PG] cc 8.0 and 9.0 */          \
    .max_threads_per_block = 1024,           /* [CUDA-PG] */                         \
    .max_grid_x = INT64_C(2147483647),       /* [CUDA-PG]: 2^31 - 1 */               \
    .max_grid_yz = 65535,                    /* [CUDA-PG] */                         \
    .l2_line_bytes = 128,                    /* [CUDA-BP]: 128-byte L2 lines ... */  \
    .l2_sector_bytes = 32,                   /* ... of four 32-byte sectors */       \
    .sfu_per_clk = 16                        /* [CUDA-PG] throughput table, cc 8.0   \
                                                and 9.0: 16 exp2 results per clock   \
                                                per SM */

/* The A100 SXM4 chip, 40 and 80 GB alike: all but the HBM. */
#define GA100_SXM4                                                                   \
    .arch = "Ampere GA100, compute capability 8.0",                                  \
    .sms = 108,                              /* [WP-A100]: 108 SMs on A100 */        \
    .l1_smem_per_sm = 192 * 1024,            /* [WP-A100]: 192 KB L1/shared */       \
    .clock_hz = 1410e6,                      /* [WP-A100]: boost clock 1410 MHz */   \
    .fp16_flops = 312e12,                    /* [DS-A100]: FP16/BF16 tensor 312      \
                                                TFLOPS dense (624 with sparsity) */  \
    .fp32_flops = 19.5e12,                   /* [DS-A100]: FP32 19.5 TFLOPS */       \
    .tf32_flops = 156e12,                    /* [DS-A100]: TF32 156 TFLOPS dense */  \
    .fp8_flops = 0,                          /* no FP8 tensor cores on Ampere */     \
    .mma_sync_fraction = 1.0,                /* Ampere's peak is mma.sync's: the     \
                                                instruction [DS-A100] rates */       \
    .l2_bytes = UINT64_C(40) * 1024 * 1024,  /* [WP-A100]: 40 MB L2 */               \
    .l2_bytes_per_s = 5120.0 * 1410e6,       /* [WP-A100]: L2 read bandwidth 5120    \
                                                bytes per clock (V100: 2048) */      \
    .dram_latency_s = 600e-9,                /* [MB-A100]: global load latency from  \
                                                DRAM, about 600 ns at 1.41 GHz */    \
    CC_8_0

/* The GH100 SXM5 chip, H100 and H200 alike: all but the HBM. */
#define GH100_SXM5                                                                   \
    .arch = "Hopper GH100, compute capability 9.0",                                  \
    .sms = 132,                              /* [WP-H100]: 132 SMs on H100 SXM5 */   \
    .l1_smem_per_sm = 256 * 1024,            /* [WP-H100]: 256 KB L1/shared */       \
    .clock_hz = 1830e6,                      /* the clock at which 132 SMs give the  \
                                                datasheet's 989.4 TFLOPS; an         \
                                                estimate */                          \
    .fp16_flops = 989.4e12,                  /* [WP-H100]: 989.4 TFLOPS dense        \
                                                ([DS-H100], [DS-H200]: 1,979 with    \
                                                sparsity) */                         \
    .fp32_flops = 66.9e12,                   /* [WP-H100]: 66.9 ([DS-H100]: 67) */   \
    .tf32_flops = 494.7e12,                  /* [WP-H100]: TF32 494.7 dense */       \
    .fp8_flops = 1978.9e12,                  /* [WP-H100]: FP8 1978.9 dense */       \
    .l2_bytes = UINT64_C(50) * 1024 * 1024,  /* [WP-H100]: 50 MB L2 */               \
    .l2_bytes_per_s = 5120.0 * 1830e6,       /* an estimate: A100's 5120 bytes per   \
                                                clock at H100's clock; [WP-H100]     \
                                                gives no figure */                   \
    HOPPER

/* What every Hopper preset shares beside cc 9.0. */
#define HOPPER                                                                       \
    .dram_latency_s = 600e-9,                /* an estimate: [MB-A100]'s A100        \
                                                figure; none published for Hopper */ \
    .mma_sync_fraction = 2.0 / 3.0,          /* [FA3] section 2.2: mma.sync, the     \
                                                Ampere-style instruction FA1 and FA2 \
                                                issue, reaches about 2/3 of          \
                                                Hopper's tensor-core peak (wgmma's) */ \
    CC_9_0

static const sim_gpu PRESETS[] = {
    {
        .name = "a100",
        .title = "NVIDIA A100 SXM4 80GB",
        GA100_SXM4,
        .hbm_bytes_per_s = 2039e9,                /* [DS-A100]: HBM2e 2,039 GB/s (80GB SXM) */
        .hbm_capacity = UINT64_C(80) * 1000000000u, /* [DS-A100]: 80 GB */
    },
    {
        .name = "h100",
        .title = "NVIDIA H100 SXM5 80GB",
        GH100_SXM5,
        .hbm_bytes_per_s = 3.35e12,               /* [DS-H100]: HBM3 3.35 TB/s */
        .hbm_capacity = UINT64_C(80) * 1000000000u, /* [DS-H100]: 80 GB */
    },
    {
        .name = "h200",
        .title = "NVIDIA H200 SXM 141GB",
        GH100_SXM5,                               /* [DS-H200]: the H100's compute */
        .hbm_bytes_per_s = 4.8e12,                /* [DS-H200]: HBM3e 4.8 TB/s */
        .hbm_capacity = UINT64_C(141) * 1000000000u, /* [DS-H200]: 141 GB */
    },
    {
        .name = "a100-40",
        .title = "NVIDIA A100 SXM4 40GB",
        GA100_SXM4,
        .hbm_bytes_per_s = 1555e9,                /* [DS-A100]: HBM2 1,555 GB/s (40GB SXM) */
        .hbm_capacity = UINT64_C(40) * 1000000000u, /* [DS-A100]: 40 GB */
    },
    {
        .name = "h100-pcie",
        .title = "NVIDIA H100 PCIe 80GB",
        .arch = "Hopper GH100, compute capability 9.0",
        .sms = 114,                               /* [DS-H100] H100 PCIe: 114 SMs; [CC-H100] */
        .l1_smem_per_sm = 256 * 1024,             /* [WP-H100]: 256 KB combined L1/shared */
        .clock_hz = 1620e6,                       /* the clock at which 114 SMs give the
                                                     datasheet's 756 TFLOPS dense at
                                                     H100 SXM's 4096 FLOP per clock per
                                                     SM (989.4 at 1830 MHz); an estimate:
                                                     [CC-H100] saw 1395 to 1755 MHz */
        .hbm_bytes_per_s = 2.0e12,                /* [DS-H100] H100 PCIe: HBM2e 2 TB/s */
        .hbm_capacity = UINT64_C(80) * 1000000000u, /* [DS-H100]: 80 GB */
        .fp16_flops = 756.5e12,                   /* [DS-H100] H100 PCIe: 1,513 TFLOPS with
                                                     sparsity, half dense */
        .fp32_flops = 51e12,                      /* [DS-H100] H100 PCIe: FP32 51 TFLOPS */
        .l2_bytes = UINT64_C(50) * 1024 * 1024,   /* [DS-H100] H100 PCIe: 50 MB L2; [CC-H100] */
        .l2_bytes_per_s = 5120.0 * 1620e6,        /* an estimate: A100's 5120 bytes per
                                                     clock at this preset's clock; [WP-H100]
                                                     gives no figure */
        .tf32_flops = 378e12,                     /* [DS-H100] H100 PCIe: TF32 756 with
                                                     sparsity, half dense */
        .fp8_flops = 1513e12,                     /* [DS-H100] H100 PCIe: FP8 3,026 with
                                                     sparsity, half dense */
        HOPPER,
    },
};
#define NPRESETS (int)(sizeof PRESETS / sizeof PRESETS[0])

const sim_gpu *sim_gpu_presets(int *n)
{
    if (n)
        *n = NPRESETS;
    return PRESETS;
}

void sim_gpu_preset_names(char *buf, size_t len)
{
    if (!len)
        return;
    buf[0] = '\0';
    for (int k = 0; k < NPRESETS; k++) {
        const size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", k ? ", " : "", PRESETS[k].name);
    }
}

const sim_gpu *sim_gpu_find(const char *name)
{
    if (!name)
        return NULL;
    for (int k = 0; k < NPRESETS; k++)
        if (!strcasecmp(name, PRESETS[k].name))
            return &PRESETS[k];
    return NULL;
}

sim_kernel_target sim_gpu_kernel_target(const sim_gpu *g)
{
    sim_kernel_target t = {
        .cc_major = g->cc_major, .cc_minor = g->cc_minor,
        .smem_per_block = g->smem_per_block, .smem_per_sm = g->smem_per_sm,
        .regs_per_block = g->regs_per_block, .regs_per_thread = g->regs_per_thread,
        .name = g->name,
    };
    return t;
}

double sim_gpu_smem_bandwidth(const sim_gpu *g)
{
    return (double)g->sms * g->smem_bytes_per_clk * g->clock_hz;
}

double sim_gpu_peak_flops(const sim_gpu *g, sim_dtype dt)
{
    if (dt == SIM_FP32)
        return g->fp32_flops;
    if (sim_dtype_is_fp8(dt) && g->fp8_flops > 0)
        return g->fp8_flops;
    return g->fp16_flops;
}

void sim_gpu_print_table(FILE *out)
{
    fprintf(out, "%-9s %4s %12s %12s %10s %11s %10s\n", "gpu", "SMs", "M (smem/blk)",
            "smem/SM", "HBM TB/s", "fp16 TFLOP", "fp32 TFLOP");
    for (int k = 0; k < NPRESETS; k++) {
        const sim_gpu *g = &PRESETS[k];
        char m[32], s[32];
        sim_format_count(m, sizeof m, g->smem_per_block);
        sim_format_count(s, sizeof s, g->smem_per_sm);
        fprintf(out, "%-9s %4d %10s B %10s B %10.3f %11.1f %10.1f\n", g->name, g->sms, m, s,
                g->hbm_bytes_per_s * 1e-12, g->fp16_flops * 1e-12, g->fp32_flops * 1e-12);
    }
    fprintf(out, "\n");
    for (int k = 0; k < NPRESETS; k++) {
        const sim_gpu *g = &PRESETS[k];
        fprintf(out, "%-6s %s (%s)\n       L1+shared %llu KiB/SM; smem ~%.1f TB/s in all (%.0f B/clk/SM "
                "at %.0f MHz)\n",
                g->name, g->title, g->arch, (unsigned long long)(g->l1_smem_per_sm / 1024),
                sim_gpu_smem_bandwidth(g) * 1e-12, g->smem_bytes_per_clk,
                g->clock_hz * 1e-6);
    }
    fprintf(out, "\nM is the largest shared memory one thread block may use (opt-in). "
            "fp16 is the\ndense tensor-core rate (bf16 the same); fp32 is without tensor "
            "cores.\nSources: NVIDIA datasheets and whitepapers, CUDA C++ Programming Guide\n"
            "(cited per number in study/sim_presets.c).\n");
}

/* ---- model presets ------------------------------------------------------
 * Sources of the architectures (the batch is fasim's choice in every row):
 *   [GPT2]    Radford et al., "Language Models are Unsupervised Multitask
 *             Learners" (2019), Table 2 (layers, d_model), and the released
 *             hparams.json of each size (n_head, n_ctx = 1024): d = d_model /
 *             n_head = 64 in every size.
 *   [BERT]    Devlin et al., "BERT" (2019), Section 3: BERT-large L = 24,
 *             H = 1024, A = 16; sequences of at most 512 tokens.
 *   [LLAMA2]  Touvron et al., "Llama 2" (2023), Table 1 (context 4096; GQA in
 *             34B and 70B) and the released configurations: 7B 32 layers,
 *             32 heads, d_model 4096; 70B 80 layers, 64 heads, 8 key/value
 *             heads, d_model 8192.
 *   [LLAMA3]  Meta's Llama 3 release (April 2024) and the 8B's model card and
 *             configuration: 32 layers, model dimension 4096, 32 attention
 *             heads, 8 key/value heads (GQA), 8192 positions. (The 8B row of
 *             "The Llama 3 Herd of Models", Table 3, has the same
 *             architecture but is Llama 3.1's, with a 128K context.)
 *   [MISTRAL] Jiang et al., "Mistral 7B" (2023), Table 1: head_dim 128,
 *             n_heads 32, n_kv_heads 8, n_layers 32, window_size 4096,
 *             context_len 8192. The paper's token i attends to positions
 *             i - W .. i; fasim's W counts the query itself, one key fewer. */

/* name, title, source, N, d, H, G, window, batch, layers, causal, backward,
 * every_algo, figure. gpt2-medium with batch 64 is the FlashAttention paper's
 * Figure 2 (left, [FA] Dao et al. 2022: N = 1024, d = 64, 16 heads, batch
 * 64), which compares FlashAttention with PyTorch's unfused attention:
 * the preset runs unfused beside the papers' three. */
static const sim_model MODELS[] = {
    { "gpt2-small", "GPT-2 small (117M)", "[GPT2] Radford et al. 2019",
      1024, 64, 12, 12, 0, 64, 12, 1, 1, 0, NULL },
    { "gpt2-medium", "GPT-2 medium (345M)", "[GPT2] Radford et al. 2019",
      1024, 64, 16, 16, 0, 64, 24, 1, 1, 1,
      "FlashAttention (Dao et al. 2022), Figure 2 (left), measured on an A100,\n"
      "forward + backward: standard attention 40.3 GB with dropout and\n"
      "masking (the arXiv version), 35.3 GB with a key-padding mask and no\n"
      "dropout (the NeurIPS version), FlashAttention 4.4 GB. fasim's unfused\n"
      "is PyTorch's attention kernel by kernel; --dropout 0.1 adds the\n"
      "dropout (README.md, \"The unfused baseline\")" },
    { "bert-large", "BERT-large (340M), encoder", "[BERT] Devlin et al. 2019",
      512, 64, 16, 16, 0, 32, 24, 0, 1, 0, NULL },
    { "llama2-7b", "Llama 2 7B", "[LLAMA2] Touvron et al. 2023",
      4096, 128, 32, 32, 0, 8, 32, 1, 1, 0, NULL },
    { "llama2-70b", "Llama 2 70B, GQA 64:8", "[LLAMA2] Touvron et al. 2023",
      4096, 128, 64, 8, 0, 8, 80, 1, 1, 0, NULL },
    { "llama3-8b", "Llama 3 8B, GQA 32:8", "[LLAMA3] Meta, Llama 3 release 2024",
      8192, 128, 32, 8, 0, 4, 32, 1, 1, 0, NULL },
    { "mistral-7b", "Mistral 7B, GQA 32:8, window 4096",
      "[MISTRAL] Jiang et al. 2023", 8192, 128, 32, 8, 4096, 4, 32, 1, 1, 0, NULL },
};
#define NMODELS (int)(sizeof MODELS / sizeof MODELS[0])

const sim_model *sim_model_presets(int *n)
{
    if (n)
        *n = NMODELS;
    return MODELS;
}

const sim_model *sim_model_find(const char *name)
{
    if (!name)
        return NULL;
    for (int k = 0; k < NMODELS; k++)
        if (!strcasecmp(name, MODELS[k].name))
            return &MODELS[k];
    return NULL;
}

void sim_model_print_table(FILE *out)
{
    fprintf(out, "%-12s %5s %4s %7s %6s %5s %6s %6s  %s\n", "preset", "N", "d", "H:G",
            "window", "batch", "layers", "causal", "passes");
    for (int k = 0; k < NMODELS; k++) {
        const sim_model *m = &MODELS[k];
        char hg[24], w[24];
        snprintf(hg, sizeof hg, "%lld:%lld", (long long)m->heads, (long long)m->kv_heads);
        snprintf(w, sizeof w, "%lld", (long long)m->window);
        fprintf(out, "%-12s %5lld %4lld %7s %6s %5lld %6lld %6s  %s\n", m->name,
                (long long)m->N, (long long)m->d, hg, m->window ? w : "-",
                (long long)m->batch, (long long)m->layers, m->causal ? "yes" : "no",
                m->backward ? "fwd+bwd" : "fwd");
    }
    fprintf(out, "\n");
    for (int k = 0; k < NMODELS; k++)
        fprintf(out, "%-12s %s\n%-12s %s\n", MODELS[k].name, MODELS[k].title, "",
                MODELS[k].source);
    fprintf(out, "\nOne attention layer over the batch, fp16; the report adds the traffic of "
            "all the\nlayers. The batch is fasim's choice (--batch changes it, as any option "
            "given\nbeside --preset overrides it). The GQA models' backward sums dK, dV over "
            "each\ngroup of query heads, as FlashAttention-2 does. Sources: each model's "
            "paper and\nreleased configuration (cited in study/sim_presets.c).\n");
}

/* ---- roofline ---------------------------------------------------------- */

sim_roofline sim_roofline_estimate(const sim_gpu *g, sim_dtype dt, sim_flops f, double bytes)
{
    sim_roofline r;
    double peak = sim_gpu_peak_flops(g, dt);
    r.flops = f.matmul;
    r.other_flops = f.other;
    r.bytes = bytes;
    r.t_memory = bytes / g->hbm_bytes_per_s;
    r.t_compute = f.matmul / peak;
    r.t_other = f.other / g->fp32_flops;
    r.memory_bound = r.t_memory >= r.t_compute;
    r.t_estimate = r.memory_bound ? r.t_memory : r.t_compute;
    r.intensity = bytes > 0 ? f.matmul / bytes : 0.0;
    r.balance = peak / g->hbm_bytes_per_s;
    return r;
}

int sim_plan_stores_scores(const sim_plan *p)
{
    const sim_loop *l = sim_loop_of(p->algo, p->run.pass);
    return l && (l->hbm & 1u << SIM_S) != 0;
}

sim_flops sim_run_flops(const sim_plan *p, const sim_shape *sh)
{
    sim_flops f;
    if (sim_theory_flops(p, sh, &f) != 0)
        f.matmul = f.other = 0.0;
    return f;
}
