/*
 * cli_table.c — see cli_table.h. The help pages are printed byte for byte as
 * written here: an option line is "  LABEL" padded to column 19, or followed
 * by two spaces when longer, and its further lines start at column 19.
 */
#include "cli_table.h"
#include "sim.h"
#include "sim_parse.h"

#include <string.h>
#include <strings.h>

#define ERR(...) do { if (err && errlen) snprintf(err, errlen, __VA_ARGS__); } while (0)

/* The commands, as the option rows name them. */
#define R CLI_IN(CLI_CMD_REPORT)
#define V CLI_IN(CLI_CMD_VIEW)
#define L CLI_IN(CLI_CMD_LESSON)
#define S CLI_IN(CLI_CMD_SWEEP)
#define C CLI_IN(CLI_CMD_CLAIMS)
#define E CLI_IN(CLI_CMD_EXPLORE)
#define G CLI_IN(CLI_CMD_GPU)
#define X CLI_IN(CLI_CMD_COMPARE)
#define A CLI_IN(CLI_CMD_VALIDATE)
#define W CLI_IN(CLI_CMD_RING_MEMORY)

#define PARA(text)        { -1, NULL, text }
#define ROW(opt)          { opt, NULL, NULL }
#define LINE(label, text) { -1, label, text }

/* ---- the options ---- */

const cli_option CLI_OPTIONS[CLI_O_COUNT] = {
    [CLI_O_N] = { "N", "N", R | V | S | E | G | X,
        "sequence length (default 1024; 64K = 65536)" },
    [CLI_O_D] = { "d", "D", R | V | S | E | G | X,
        "head dimension (default 64)" },
    [CLI_O_M] = { "M", "BYTES", R | V | S | E | G | X,
        "SRAM per thread block in bytes: 98304, 96K, 96KiB, 1.5MiB\n"
        "(default 96K). The papers' M counts elements; fasim\n"
        "converts (M / dtype bytes) where it quotes them" },
    [CLI_O_DTYPE] = { "dtype", "T", R | V | S | E | G | X,
        "fp16 (default), bf16 or fp32: Q, K, V, O, S, P in HBM;\n"
        "m, l, L and on-chip accumulators are fp32. e4m3 or e5m2:\n"
        "FlashAttention-3's FP8 forward, Q, K, V quantised to fp8\n"
        "(1 B) with scales and P~ in fp8; O in bf16, naive's S, P\n"
        "in fp16 (the report; the kernels and lessons refuse it)" },
    [CLI_O_FP8_SCALE] = { "fp8-scale", "S", R,
        "fp8: tensor (default), one scale for all of Q, of K, of V;\n"
        "block, one per B_r rows of Q and B_c rows of K, V (FA3)" },
    [CLI_O_INCOHERENT] = { "incoherent", "on|off", R,
        "fp8: on multiplies Q and K by one random-sign Hadamard\n"
        "transform (seeded by --seed; d a power of two) before\n"
        "quantising, as FA3 does; Q K^T is unchanged (default off)" },
    [CLI_O_INPUTS] = { "inputs", "KIND", R,
        "seeded inputs: bell (default), variance 1, |x| < 3.47; or\n"
        "outliers, N(0,1) + N(0,100) x Bernoulli(0.001), as in\n"
        "FlashAttention-3's Table 3" },
    [CLI_O_ALGO] = { "algo", "LIST", R | V | S | E | G | X,
        "%A, or all; comma lists work.\n"
        "Default: all but unfused, which runs when named (and\n"
        "with --preset gpt2-medium, whose figure shows it), and\n"
        "fa3 (FlashAttention-3's forward, fp16/bf16/fp8), which\n"
        "runs only when named, not with all" },
    [CLI_O_BR] = { "Br", "B", R | V | S | E | G | X,
        NULL },
    [CLI_O_BC] = { "Bc", "B", R | V | S | E | G | X,
        NULL },
    [CLI_O_PLAN] = { "plan", "KIND", R | V | S | G | X,
        "same (default): one square B_r = B_c for every loop order,\n"
        "the largest of 128, 64, 32, 16 that fits M for all; best:\n"
        "for each, the fewest HBM bytes that fit M; paper: Algorithm\n"
        "1 line 1, B_c = ceil(M/4d), B_r = min(B_c, d) with M in\n"
        "elements (may exceed M; shown); kernel (the report): the\n"
        "released kernels' tiles and warps for d and --gpu (A100\n"
        "without), accumulators in registers, tiles in SRAM" },
    [CLI_O_CAUSAL] = { "causal", NULL, R | V | S | E | G | X,
        "causal mask: fully masked blocks skipped by FA1 and FA2" },
    [CLI_O_SEED] = { "seed", "S", R | V | G | X,
        "seed of the random inputs, 0 .. 2^63-1 (default 1)" },
    [CLI_O_Q] = { "q", "F", R | V | G | X,
        NULL },
    [CLI_O_K] = { "k", "F", R | V | G | X,
        NULL },
    [CLI_O_V] = { "v", "F", R | V | G | X,
        NULL },
    [CLI_O_OUT] = { "out", "F", R | G,
        "write the forward's O as float32 .npy (one --algo, --pass\n"
        "fwd or both; implies --compute)" },
    [CLI_O_JSON] = { "json", NULL, R | S | C | G | X | A,
        "one JSON object on stdout (keys in README.md)" },
    [CLI_O_COMPUTE] = { "compute", NULL, R | V | G | X,
        "move real data and check the output (default when it takes\n"
        "about two seconds or less)" },
    [CLI_O_EXPLAIN] = { "explain", NULL, R,
        "each section's note in full: what its numbers mean and why" },
    [CLI_O_COUNT_ONLY] = { "count-only", NULL, R | V | X,
        "count transfers only (no tensor data; any N)" },
    [CLI_O_JOBS] = { "jobs", "J", R,
        "threads of a compute run: heads (every loop order and\n"
        "pass), or FA2's forward's query blocks, shared among them,\n"
        "with the bits of one thread (default: the CPUs online, at\n"
        "most 8; 1 .. 256)" },
    [CLI_O_MAX_MEM] = { "max-mem", "BYTES", R | G | X,
        "compute-mode memory limit (default 4G)" },
    [CLI_O_MAX_STEPS] = { "max-steps", "N", R | S | C | G | X,
        "tile steps of each run and of all runs together\n"
        "(default 8589934592 = 2^33: measured, 30 s of\n"
        "count-only work for naive or FA2 and 90 s for FA1,\n"
        "whose steps move more tensors; with --page-size, up\n"
        "to 140 s: paged steps cost up to 7x); with --gpu, the\n"
        "GPU model replays at most a 32nd of it (2^28 steps: a\n"
        "minute or two, up to about four for one long head)" },
    [CLI_O_GPU] = { "gpu", "NAME", R | S | E | G | X | W,
        "a100, a100-40, h100, h100-pcie or h200: M = the shared\n"
        "memory one thread block can use (unless --M is given), a\n"
        "roofline estimate and the GPU model (SMs, waves, L2, time)\n"
        "per loop order; 'fasim --gpu list' prints the presets" },
    [CLI_O_L2] = { "l2", "BYTES", R,
        "with --gpu: the GPU model's L2 size instead of the preset's\n"
        "(0: every re-read goes to DRAM, the two-level counts; inf:\n"
        "each tile from DRAM once)" },
    [CLI_O_PIPELINE] = { "pipeline", "on|off", R,
        "with --gpu and --algo fa3: off takes away FA3's overlap of\n"
        "one block's softmax with the next block's products in a\n"
        "warpgroup (FA3 Table 2's ablation; default on)" },
    [CLI_O_WARP_SPEC] = { "warp-specialization", "on|off", R,
        "with --gpu, --algo fa3: off\n"
        "takes away the producer warpgroup and the consumers'\n"
        "ping-pong: the consumers issue the copies and wait on them\n"
        "(default on)" },
    [CLI_O_TRACE] = { "trace", "FILE", R,
        "with --gpu: write the GPU model's runs as a Chrome trace\n"
        "(JSON; open in Perfetto): a track per SM slot, a slice per\n"
        "thread block and tile step, DRAM bandwidth as a counter (fa3:\n"
        "a track per warpgroup, the SMEM stages full as a counter); at\n"
        "most 4,000,000 events, more than a trace viewer opens" },
    [CLI_O_TIMELINE] = { "timeline", "FILE", R,
        "with --gpu: draw the first run's SMs over time, wave by\n"
        "wave: FILE.svg a picture, - the terminal (runs in the order\n"
        "naive, fa1, fa2, unfused, fa3; --algo with one name picks);\n"
        "fa3 adds one thread block's first tile steps: the producer's\n"
        "copies, each consumer warpgroup's GEMMs and softmax, the SMEM\n"
        "stages full, as --pipeline and --warp-specialization place\n"
        "them" },
    [CLI_O_HELP] = { "help", NULL, R | V | L | S | C | E | G | X | A | W,
        NULL },
    [CLI_O_VERSION] = { "version", NULL, R,
        NULL },
    [CLI_O_NQ] = { "Nq", "N", R | V | G | X,
        NULL },
    [CLI_O_NK] = { "Nk", "N", R | V | G | X,
        NULL },
    [CLI_O_WINDOW] = { "window", "W", R | G | X,
        "sliding window (implies --causal): each query sees the W\n"
        "keys before it, itself included; blocks outside skipped" },
    [CLI_O_BLOCK_MASK] = { "block-mask", "MASK", R | V | G,
        "block-sparse attention: local:K (a band of K blocks each\n"
        "side), strided:K, global:G,K, random:P (--seed), on the\n"
        "common plan tile B_r x B_c; or FILE.txt / FILE.npy, a 0/1\n"
        "matrix of R x C blocks of ceil(N_q/R) x ceil(N_k/C)" },
    [CLI_O_BATCH] = { "batch", "B", R | G | X,
        "sequences in the batch (default 1); the counts are for all\n"
        "B H heads of the batch" },
    [CLI_O_HEADS] = { "heads", "H", R | G | X,
        "query heads per sequence (default 1)" },
    [CLI_O_KV_HEADS] = { "kv-heads", "G", R | G | X,
        "key/value heads, G divides H (default H): GQA, MQA at G = 1;\n"
        "the report adds FA2 with a group's H/G heads in one block;\n"
        "the backward sums dK, dV over each group, as FA2's mha_bwd" },
    [CLI_O_PASS] = { "pass", "P", R | V | G | X,
        "fwd (default), bwd or both: the backward pass computes dQ,\n"
        "dK, dV from dO (naive: Algorithm 3, fa1: Algorithm 4 of\n"
        "FlashAttention; fa2: Algorithm 2 of FlashAttention-2)" },
    [CLI_O_DO] = { "dO", "F", R | G | X,
        "the backward's output gradient as .npy, Q's shape (with\n"
        "--q --k --v; default: seeded)" },
    [CLI_O_SPLITS] = { "splits", "S", R | V | G | X,
        "split-KV decoding: fa2 once more with the key blocks in S\n"
        "splits, partials (O~, m, l) to HBM and a merge; S <= T_c;\n"
        "auto: FlashAttention-2's choice for --gpu's SMs" },
    [CLI_O_RING] = { "ring", "P", R | V,
        "ring attention: fa2's forward across P devices, N/P rows\n"
        "each, K, V blocks passed round the ring and the partials\n"
        "merged; per device and round: HBM and link bytes, memory,\n"
        "all-gather beside it; times with --gpu and --link" },
    [CLI_O_RING_ORDER] = { "ring-order", "O", R | V,
        "with --ring: contiguous (default), device p holds rows\n"
        "p N/P onwards; zigzag, chunks p and 2P-1-p of 2P, which\n"
        "balances causal work" },
    [CLI_O_LINK] = { "link", "NAME", R,
        "with --ring: the link between devices, nvlink3, nvlink4,\n"
        "pcie4, pcie5, ib-hdr or ib-ndr (its bandwidth each way)" },
    [CLI_O_SOFTMAX] = { "softmax", "FORM", R | G | X,
        "naive's softmax: auto (default) one pass over whole rows\n"
        "of S when a row fits M, else two over tiles (m and l\n"
        "online, then P), as real kernels do; 1pass, 2pass, or\n"
        "3pass (max, sum, normalise) name one. FA has its own" },
    [CLI_O_PAGE_SIZE] = { "page-size", "P", R | G | X,
        "paged KV: K and V in pages of P <= N_k rows placed by a page\n"
        "table (seeded by --seed); counts the table's reads and the\n"
        "tiles that span pages, against contiguous K, V" },
    [CLI_O_INTERMEDIATES] = { "intermediates", "K", R | V | G | X,
        "kernel (default): FA1's running O and the backwards' dQ\n"
        "summed in fp32 HBM buffers (O_acc, dQ_acc) and written in\n"
        "the dtype once, P~ rounded to the dtype before P~ V, as\n"
        "the released kernels do; paper: O and dQ stored in the\n"
        "dtype at every step and P~ kept in fp32, as the listings\n"
        "read (less accurate in fp16 and bf16)" },
    [CLI_O_DROPOUT] = { "dropout", "P", R | X,
        "attention dropout, probability in [0, 1) (default 0):\n"
        "unfused counts its saved mask (1 B a score); FA1 and FA2\n"
        "regenerate theirs, so their traffic does not change;\n"
        "counted, not computed (with --count-only)" },
    [CLI_O_UNFUSED_OPS] = { "unfused-ops", "gpt2|fa2bench", R | V | X,
        "the operations unfused runs:\n"
        "gpt2 (default), HuggingFace GPT-2's attention\n"
        "(FlashAttention's Figure 2), the scale a kernel of its\n"
        "own; fa2bench, FlashAttention-2's benchmark (its Figure\n"
        "4's PyTorch): Q, K, V packed, copied to batched layouts,\n"
        "the scale in baddbmm's alpha; not causal" },
    [CLI_O_PRESET] = { "preset", "NAME", R | G,
        "a real model's attention layer (list: the presets): N, d,\n"
        "H, G, batch, window, causal, fp16, passes; options given\n"
        "beside it override it; adds the traffic in GiB per layer\n"
        "and for all layers" },
    [CLI_O_STEP] = { "step", "K", V,
        "start at step K (1-based; default 1)" },
    [CLI_O_FRAMES] = { "frames", "K", V,
        "text output: print K frames (default: all of a run of up\n"
        "to %d steps, else %d); --record: K steps (default: to the\n"
        "last)" },
    [CLI_O_ROW] = { "row", "R", V,
        "the row of each Q block whose partial output is shown\n"
        "(0-based within the block; default 0)" },
    [CLI_O_SDL] = { "sdl", NULL, V,
        "the same run in an SDL2 window (heat map of S_ij / P_ij,\n"
        "m and l plots, the counters; the same keys)" },
    [CLI_O_SCREENSHOT] = { "screenshot", "F", V,
        "draw step --step (default 1) to F (.png or .bmp) and exit;\n"
        "needs no display" },
    [CLI_O_SIZE] = { "size", "WxH", V,
        "size of the SDL2 window, screenshot or recording (default\n"
        "1280x800)" },
    [CLI_O_THEME] = { "theme", "T", V,
        "colours of the SDL2 window, screenshot or recording: light\n"
        "(the default: projectors wash out dark frames) or dark; 't'\n"
        "switches" },
    [CLI_O_RECORD] = { "record", "F", V,
        "draw steps --step (default 1) to the last, or --frames K of\n"
        "them, as the SDL view does, one frame a step, and exit: F.gif\n"
        "an animated GIF, F.mp4 a film (needs ffmpeg), F/ a folder of\n"
        "numbered frames (step-K.png; --format); needs no display" },
    [CLI_O_FORMAT] = { "format", "F", V,
        "--record's frames in a folder: png (the default) or svg" },
    [CLI_O_FPS] = { "fps", "N", V,
        "--record: frames (steps) a second, 1 to 50 (default 4)" },
    [CLI_O_SCRIPT] = { "script", NULL, L,
        NULL },
    [CLI_O_WORKSHEET] = { "worksheet", NULL, L,
        NULL },
    [CLI_O_ANSWERS] = { "answers", NULL, L,
        NULL },
    [CLI_O_VARY] = { "vary", "P=LO..HI[STEP]", S,
        "P is N, d, M, Br or Bc. STEP is *K (multiply, default\n"
        "*2) or +K (add), e.g. N=256..64K, d=32..256+32,\n"
        "M=16K..1M*4, Bc=16..512; or a list: N=1K,4K,16K. Br,\n"
        "Bc: the block size, the shape fixed; blocks over M are\n"
        "marked. Two or more (one per parameter): a grid of\n"
        "every combination." },
    [CLI_O_ENGINE] = { "engine", "E", S | C,
        "auto (default): the simulator when the sweep is at most\n"
        "2^29 tile steps (a few seconds), else closed forms;\n"
        "sim: always simulate; closed-form: never (exact counts)" },
    [CLI_O_PLOT] = { "plot", "F.svg", S,
        "also draw HBM bytes against the varied parameter (one\n"
        "--vary) on log-log axes: writes F.dat and F.gp (a gnuplot\n"
        "script) beside F.svg or F.png, and runs gnuplot if it is\n"
        "installed (Debian: apt-get install gnuplot-nox)" },
    [CLI_O_CSV] = { "csv", NULL, S,
        "one row per configuration (columns in docs/sweeps.md)" },
    [CLI_O_NO_PROGRESS] = { "no-progress", NULL, S,
        "no progress bar (it appears on a terminal's stderr when\n"
        "the sweep takes more than a moment)" },
    [CLI_O_KEYS] = { "keys", "STRING", E,
        "apply these keys one by one and print the screen as text\n"
        "after each (and first the starting one), even on a\n"
        "terminal; e.g. --keys NNx. q stops; v prints the view's\n"
        "first frame. Without a terminal and without --keys, the\n"
        "starting screen is printed" },
    [CLI_O_BACKEND] = { "backend", "B", G,
        "cuda (default): the kernels on a CUDA device;\n"
        "cpu: the same kernel source on the CPU (threads of a block\n"
        "are real threads with a real barrier)" },
    [CLI_O_REPEAT] = { "repeat", "K", G,
        "timed runs after one counted run; the median is shown\n"
        "(default %d on CUDA, %d on the CPU)" },
    [CLI_O_THREADS] = { "threads", "T", G,
        "threads per block (default %d on the CPU, %d on CUDA;\n"
        "at most %d on the CPU, %d on CUDA)" },
    [CLI_O_LOCK] = { "lock", "F", G,
        "hold a lock on file F while the kernels run (several\n"
        "fasim gpu processes on one device time one at a time)" },
    [CLI_O_DQ_MODE] = { "dq-mode", "MODE", G,
        "the backward's dQ, which FA2's thread blocks share:\n"
        "deterministic (default): added in a fixed order, j\n"
        "ascending (the simulator's bits); atomic: in the order\n"
        "the blocks run, as atomicAdd adds" },
    [CLI_O_BLOCK_ORDER_SEED] = { "block-order-seed", "S", G,
        "run the backward's thread blocks in an order shuffled\n"
        "from S, as a GPU may (default 0: the grid's order);\n"
        "the CPU path's: on a GPU the hardware orders them" },
};

static const cli_help_item HELP_REPORT[] = {
    PARA("Simulate standard attention, FlashAttention-1 and FlashAttention-2 on an\n"
         "HBM/SRAM hierarchy and report every transfer beside the closed-form counts,\n"
         "the bounds of the papers, and (in compute mode) the error against a float64\n"
         "oracle. Example: fasim --N 1024 --M 96K\n"
         "\n"
         "problem\n"),
    ROW(CLI_O_N),
    ROW(CLI_O_D),
    ROW(CLI_O_M),
    ROW(CLI_O_DTYPE),
    ROW(CLI_O_FP8_SCALE),
    ROW(CLI_O_INCOHERENT),
    LINE("--Nq N, --Nk N", "query and key/value lengths when they differ (default\n"
        "both N; decoding: --Nq 1 --Nk 4096). With --causal the\n"
        "queries are the last N_q positions, so N_q <= N_k"),
    ROW(CLI_O_CAUSAL),
    ROW(CLI_O_WINDOW),
    ROW(CLI_O_BLOCK_MASK),
    ROW(CLI_O_BATCH),
    ROW(CLI_O_HEADS),
    ROW(CLI_O_KV_HEADS),
    ROW(CLI_O_GPU),
    ROW(CLI_O_L2),
    ROW(CLI_O_PIPELINE),
    ROW(CLI_O_WARP_SPEC),
    ROW(CLI_O_TRACE),
    ROW(CLI_O_TIMELINE),
    PARA("\n"
         "what to run\n"),
    ROW(CLI_O_ALGO),
    ROW(CLI_O_PASS),
    ROW(CLI_O_SOFTMAX),
    ROW(CLI_O_SPLITS),
    ROW(CLI_O_RING),
    ROW(CLI_O_RING_ORDER),
    ROW(CLI_O_LINK),
    ROW(CLI_O_PRESET),
    ROW(CLI_O_PAGE_SIZE),
    ROW(CLI_O_INTERMEDIATES),
    ROW(CLI_O_DROPOUT),
    ROW(CLI_O_UNFUSED_OPS),
    LINE("--Br B, --Bc B", "block sizes; one of them alone pins it and picks the other"),
    ROW(CLI_O_PLAN),
    ROW(CLI_O_EXPLAIN),
    ROW(CLI_O_COMPUTE),
    ROW(CLI_O_COUNT_ONLY),
    ROW(CLI_O_JOBS),
    ROW(CLI_O_SEED),
    ROW(CLI_O_INPUTS),
    LINE("--q F --k F --v F", "inputs as .npy, shape (N, d) or (B, H, N, d), float32 or\n"
        "float64; the shape then comes from the files (implies\n"
        "compute mode; refused past 7.2e10 flops, 12 to 27 s:\n"
        "--compute forces it)"),
    ROW(CLI_O_DO),
    PARA("\n"
         "output\n"),
    ROW(CLI_O_JSON),
    ROW(CLI_O_OUT),
    PARA("\n"
         "limits (bad input is refused before anything runs)\n"),
    ROW(CLI_O_MAX_MEM),
    ROW(CLI_O_MAX_STEPS),
    PARA("  N <= 2^40, d <= 65536, M <= 1G, B, H, G <= 65536; counts must fit in 64 bits\n"
         "  --block-mask: at most 2^22 blocks, and 2^24 tiles in a plan under one\n"
         "\n"),
    LINE("--help, --version", NULL),
    PARA("\n"
         "numbers are decimal with the suffixes K, M, G, T or KiB, MiB, GiB, TiB in\n"
         "any case (96k = 96KiB); spaces around them are ignored. An option given twice is\n"
         "refused by every command, save where its page says it may come twice\n"
         "\n"
         "exit status: 0 success, 2 bad usage, 1 other failures (bad .npy data, I/O,\n"
         "an output stdout did not take)\n"),
};

static const cli_help_item HELP_VIEW[] = {
    PARA("usage: fasim view [options]\n"
         "\n"
         "One run of one loop order, step by step: the tiles of Q, K, V, O (S, P for\n"
         "naive; l, m for fa1; L for fa2) in HBM, the buffers in SRAM, the statistics\n"
         "m_i, l_i of the current row block, and the pseudocode line reached.\n"
         "Example: fasim view --N 256 --d 32 --M 20K --algo fa2\n"
         "\n"
         "The grids count each tile's moves so far: 2r read twice, 1w written once,\n"
         "2r1w both, 9+ past nine (in a narrow cell one digit, reads + writes, and\n"
         "+ past nine); before the count, > being loaded, < being stored, = both,\n"
         "* in hand at this step (a one-column cell shows the mark in place of its\n"
         "digit).\n"
         "fa1 and fa2 add the T_r x T_c blocks (i, j): # done, * now, . to come,\n"
         "- skipped (fully masked), and where one character stands for several\n"
         "blocks (\"block char: 2 rows x 1 col\"), : for some done and some to\n"
         "come: row by row for fa2 (i outer), column by column for fa1. The SRAM\n"
         "list shows the buffers allocated (at the start), > or < on those a tile\n"
         "moved into or out of at this step. Byte counters are exact, or in one\n"
         "unit for the frame, named in their header. fa3 adds a PIPELINE panel:\n"
         "which ring stage holds K_j, V_j and which the producer fills, which\n"
         "consumer warpgroup holds the tensor cores and which runs its softmax, in\n"
         "its schedule's order (no clock here: the report's GPU timeline has time).\n"
         "\n"
         "On a terminal the view is interactive (space play/pause, n/b step, g go to,\n"
         "a next loop order, c causal, ? help, q quit). When stdout is not a terminal\n"
         "the frames are printed as plain text.\n"
         "\n"
         "problem (as in the report; see 'fasim --help')\n"),
    LINE("--N N", "sequence length (default 256)"),
    LINE("--d D", "head dimension (default 32)"),
    LINE("--M BYTES", "SRAM in bytes: 20480, 20K, 1.5MiB (default 20K)"),
    LINE("--dtype T", "fp16 (default), bf16 or fp32"),
    LINE("--Nq N, --Nk N", "query and key lengths when they differ (decoding:\n"
        "--Nq 1 --Nk 256)"),
    LINE("--causal", "causal mask"),
    LINE("--algo A", "one loop order: %O (default fa2)"),
    LINE("--pass P", "fwd (default) or bwd: the backward pass (naive: Algorithm\n"
        "3, fa1: Algorithm 4 of FlashAttention; fa2: Algorithm 2 of\n"
        "FlashAttention-2), dO seeded"),
    LINE("--splits S", "fa2's split-KV: partials per split, then the merge"),
    LINE("--ring P", "ring attention across P devices, round by round: whose K, V\n"
        "block each holds, what it computes, where it sends it, and\n"
        "one row's running (m, l) of the merge (text)"),
    LINE("--ring-order O", "with --ring: contiguous (default) or zigzag"),
    LINE("--intermediates K", "kernel (default) or paper: the precision of FA1's running\n"
        "O, the backwards' dQ and P~ (see 'fasim --help')"),
    LINE("--unfused-ops L", "with --algo unfused: gpt2 (default) or fa2bench, the\n"
        "operations it runs (see 'fasim --help')"),
    LINE("--Br B, --Bc B", "block sizes (default: the report's same tiles)"),
    LINE("--plan KIND", "same (default): the report's square B_r = B_c, the largest\n"
        "of 128, 64, 32, 16 that fits M for every loop order (so the\n"
        "view counts the report's bytes, and 'a' keeps the tiles);\n"
        "best: this loop order's own plan; paper (Algorithm 1, line 1)"),
    ROW(CLI_O_SEED),
    LINE("--q F --k F --v F", "inputs as .npy: Q (N, d), K and V (N_k, d)"),
    LINE("--compute", "compute the statistics even when slow (N^2 d <= 2^34)"),
    LINE("--count-only", "counters and tiles only, no statistics"),
    PARA("\n"
         "view\n"),
    ROW(CLI_O_STEP),
    ROW(CLI_O_FRAMES),
    ROW(CLI_O_ROW),
    ROW(CLI_O_SDL),
    ROW(CLI_O_SCREENSHOT),
    ROW(CLI_O_SIZE),
    ROW(CLI_O_THEME),
    ROW(CLI_O_RECORD),
    ROW(CLI_O_FORMAT),
    ROW(CLI_O_FPS),
    LINE("--help", NULL),
    PARA("\n"
         "Runs whose recording would exceed 256 MiB are refused with a hint.\n"
         "A count-only run keeps 65,536 steps at a time and runs again to show\n"
         "others: runs of more than 2^27 steps are refused with a hint;\n"
         "--record refuses more than 10,000 frames or 4 GiB of pixels (W x H x 3\n"
         "bytes a frame) and says how to narrow it.\n"
         "exit status: 0 success, 2 bad usage (including a plan that does not fit),\n"
         "1 other failures\n"),
};

static const cli_help_item HELP_LESSON[] = {
    PARA("usage: fasim lesson                      list the lessons\n"
         "       fasim lesson NAME|NUMBER          run one, a step per key\n"
         "       fasim lesson NAME --script        every step at once, questions with\n"
         "                                         their answers\n"
         "       fasim lesson NAME --worksheet     a handout in Markdown: the steps up to\n"
         "                                         each question, room for the answer, no\n"
         "                                         answers\n"
         "       fasim lesson NAME --answers       its answer key in Markdown: every step,\n"
         "                                         each answer, the common mistakes\n"
         "       fasim lesson NAME --help          the lesson's options\n"
         "\n"
         "Keys while a lesson runs: Enter or space for the next step, b to go back a\n"
         "step, q to quit. Questions take a number and a line (Enter shows the answer).\n"
         "With input from a pipe, each line is one key or one answer.\n"
         "\n"),
};

static const cli_help_item HELP_SWEEP[] = {
    PARA("usage: fasim sweep --vary P=LO..HI[STEP] [--vary ...] [options]\n"
         "\n"
         "Run the loop orders over a range of N, d or M (count-only), print HBM bytes\n"
         "per configuration and the ratios, and fit how the traffic grows: the\n"
         "log-log exponent in each varied parameter beside Theorem 2's (naive ~ N^2,\n"
         "FlashAttention ~ N^2 d^2 / M for d <= M <= N d, M in elements) and the\n"
         "lower bound. Points outside that regime, or with blocks at their caps, are\n"
         "left out of the fits, which say so.\n"
         "\n"),
    ROW(CLI_O_VARY),
    LINE("--N, --d, --M, --dtype, --causal, --algo, --Br, --Bc, --plan", "\n"
        "the fixed parameters, as for the report (fasim --help)"),
    LINE("--gpu NAME", "a100, h100, h200: M from the preset (unless --M or --vary M)\n"
        "and a roofline estimate per run in --json and --csv"),
    ROW(CLI_O_ENGINE),
    LINE("--max-steps N", "tile-step limit of the simulated runs, each and all together\n"
        "(default 2^33: measured, 30 s for naive or FA2, 90 for FA1)"),
    PARA("\n"
         "output\n"),
    LINE("--json", "one JSON object (keys in docs/sweeps.md)"),
    ROW(CLI_O_CSV),
    ROW(CLI_O_PLOT),
    ROW(CLI_O_NO_PROGRESS),
    PARA("\n"
         "limits (bad input is refused before anything runs)\n"
         "  at most 1024 values per --vary and 4096 configurations per sweep (fixed:\n"
         "  a sweep is a picture, not a data set); N <= 2^40, d <= 65536, M <= 1G as\n"
         "  in the report; --max-steps for the simulated runs, each and in all\n"
         "\n"
         "examples\n"
         "  fasim sweep --vary N=256..65536 --d 64 --M 96K\n"
         "  fasim sweep --vary M=16K..256K --N 16384 --d 128 --csv > m.csv\n"
         "  fasim sweep --vary N=1K..64K --vary M=32K..256K --json\n"
         "  fasim sweep --vary N=1K..1M --algo fa2 --engine closed-form --plot io.svg\n"
         "\n"
         "exit status: 0 success, 2 bad usage, 1 other failures\n"),
};

static const cli_help_item HELP_CLAIMS[] = {
    PARA("usage: fasim claims [FILE] [--json] [--engine auto|sim|closed-form]\n"
         "\n"
         "Without FILE: check the numeric claims of the two source articles (the sizes,\n"
         "IO bounds, SRAM sums, loop orders, causal savings and hardware figures that\n"
         "docs/sources.md lists), each computed now from the simulator, the closed\n"
         "forms, sweeps, the hardware presets or, for speed, the GPU model. Verdicts:\n"
         "holds, wrong, holds only if\n"
         "(a condition), not checkable here.\n"
         "\n"
         "With FILE ('-' for standard input): check your own claims, one per line:\n"
         "\n"
         "  # comment\n"
         "  fa2/naive hbm_bytes < 0.1 at N=4096 d=128 M=168K\n"
         "  fa2 hbm_bytes ~ 40GiB within 10% at N=128000 d=128 M=168K\n"
         "  S size > 32GB at N=128000\n"
         "  fa1 Q.read_elems = 4194304 at N=4096 d=64 M=96K\n"
         "  fa2 sram_bytes <= 163K at gpu=a100 d=128 Br=128 Bc=64\n"
         "\n"
         "  quantity   ALGO METRIC, ALGO/ALGO METRIC (a ratio), or TENSOR size|elems\n"
         "  ALGO       %A;  TENSOR: Q K V O S P m l L\n"
         "  METRIC     hbm_bytes hbm_elems read_bytes write_bytes steps sram_bytes,\n"
         "             T.read_elems T.write_elems T.read_bytes T.write_bytes\n"
         "  compare    < <= > >= = ~ (within 5%, or 'within P%')\n"
         "  value      1024, 0.1, 1e9; K M G T KiB MiB GiB TiB (1024s), KB MB GB TB\n"
         "             (1000s), B, %\n"
         "  at         N= d= M= dtype= causal Br= Bc= plan=best|paper gpu=a100|h100|h200\n"
         "             (defaults: N=1024 d=64 M=96K fp16, best plan)\n"
         "\n"),
    LINE("--json", "one JSON object (keys in docs/sweeps.md)"),
    LINE("--engine E", "auto (default): simulate a run of at most 2^29 tile steps,\n"
        "closed forms beyond; sim: always; closed-form: never"),
    LINE("--max-steps N", "tile steps a FILE's claims may simulate in all, checked\n"
        "before any run (default 2^33: measured, 30 s for naive or\n"
        "FA2, 90 s for FA1)"),
    PARA("\n"
         "limits: a claims file of at most 1 MiB and 256 claims (fixed); each claim's\n"
         "configuration within the report's limits (N <= 2^40, d <= 65536, M <= 1G);\n"
         "the simulated runs of all its claims within --max-steps\n"
         "\n"
         "exit status: 0 when every claim was checked, 2 bad usage (a malformed line is\n"
         "reported as FILE:LINE:COL), 1 other failures\n"),
};

static const cli_help_item HELP_EXPLORE[] = {
    PARA("usage: fasim explore [options]\n"
         "\n"
         "A screen where keys change N, d, M, B_r, B_c, dtype and causal, and the HBM\n"
         "traffic of every loop order (the exact closed forms of the plan the\n"
         "simulator would use, equal to its counts), the SRAM plans, the ratios to\n"
         "naive, the bounds of the papers and a log-log chart of bytes against N\n"
         "(N/8 .. 8N, slope-2 guide) update at once. v opens the view (fasim view)\n"
         "of the current configuration.\n"
         "\n"
         "keys\n"
         "  N n   double / halve N          D d   double / halve d\n"
         "  M m   double / halve M (256 B .. 1 MiB; ends a gpu preset)\n"
         "  R r   B_r + 16 / - 16           C c   B_c + 16 / - 16\n"
         "        (0 = chosen per loop order, the best plan; 0 resets both)\n"
         "  t T   next / previous dtype     x     causal on / off\n"
         "  g G   next / previous gpu preset (none, a100, h100, h200): M = its\n"
         "        shared memory per thread block\n"
         "  a     next loop order for v;    1 2 3 naive / fa1 / fa2\n"
         "  v     open the view of the chosen loop order (default fa2); q returns\n"
         "  z     back to the starting configuration\n"
         "  ? h   help                      q     quit\n"
         "\n"
         "starting configuration (as in the report; see 'fasim --help')\n"),
    LINE("--N N", "sequence length, 1 .. 2^30 (default 1024)"),
    ROW(CLI_O_D),
    LINE("--M BYTES", "SRAM in bytes, 256 .. 1M: 98304, 96K (default 96K)"),
    LINE("--dtype T", "fp16 (default), bf16 or fp32"),
    LINE("--causal", "causal mask"),
    LINE("--Br B, --Bc B", "pin block sizes (default: chosen per loop order)"),
    LINE("--gpu NAME", "a100, h100 or h200: M = the preset's shared memory per\n"
        "block; 'fasim explore --gpu list' prints the presets"),
    LINE("--algo A", "the loop order v opens: %O (default fa2)"),
    PARA("\n"
         "output\n"),
    ROW(CLI_O_KEYS),
    LINE("--help", NULL),
    PARA("\n"
         "exit status: 0 success, 2 bad usage, 1 other failures\n"),
};

static const cli_help_item HELP_GPU[] = {
    PARA("usage: fasim gpu [options]\n"
         "\n"
         "Run the real kernels of naive, FA1 and FA2 (kernels/) on the simulator's\n"
         "inputs and plans, and print for each: whether the output is bit-identical to\n"
         "the simulator's compute mode (and the largest difference if not), the\n"
         "kernel's own count of global-memory traffic per tensor beside the\n"
         "simulator's, and the time (on a GPU, with the speedup over naive).\n"
         "Example: fasim gpu --N 256 --d 64 --M 48K --backend cpu\n"
         "\n"),
    ROW(CLI_O_BACKEND),
    ROW(CLI_O_REPEAT),
    ROW(CLI_O_THREADS),
    ROW(CLI_O_LOCK),
    ROW(CLI_O_DQ_MODE),
    ROW(CLI_O_BLOCK_ORDER_SEED),
    PARA("\n"
         "and the report's options: --N --d --M --dtype --algo --Br --Bc --plan\n"
         "--causal --seed --q --k --v --json --gpu --max-mem --max-steps --compute\n"
         "--intermediates (see 'fasim --help'); --out F writes the kernel's O (one --algo), byte for\n"
         "byte comparable with 'fasim --algo A --compute --out F'. The kernels run the\n"
         "forward pass of every head: --batch, --heads, --kv-heads (GQA, MQA),\n"
         "--Nq/--Nk (N_q <= N_k with --causal), --causal, --window, launched as the\n"
         "released kernels are (FA1: a block per (batch, head); FA2 and naive:\n"
         "(T_r, batch x heads)); --splits S runs FA2 once more split-KV (S splits'\n"
         "partials, then a combine kernel). --pass bwd (or both) runs the backward\n"
         "kernels of naive (Algorithm 3, a kernel per line; CPU path), FA1 (Algorithm\n"
         "4: a block per (batch, head), K/V outer, Q inner) and FA2 (one block per key\n"
         "block, grid (T_c, batch x heads)) beside the simulator's backward: dQ, dK, dV\n"
         "and the counts, for MHA, GQA and MQA (--kv-heads < --heads: two more\n"
         "launches, grid (T_c, batch x kv-heads), sum each group's dK, dV);\n"
         "--page-size and --preset are the report's alone. --gpu NAME adds, beside\n"
         "each run, the GPU model's predicted time for the same launches on that\n"
         "preset (on a GPU, with the measured over the predicted).\n"
         "\n"
         "launch limits, checked before anything is allocated: on CUDA the device's\n"
         "(grid, threads and shared memory per block); on the CPU path a grid of at\n"
         "most %d x %d blocks (query blocks x batch and heads) and %d KiB\n"
         "of shared memory per block, a compute capability 9.0 device's, and %d\n"
         "threads per block\n"
         "\n"
         "limits: --max-steps for each loop order, as in the report; the simulator's\n"
         "run and, on the CPU, the kernel's counted and timed runs at most 7.2e10\n"
         "flops in all (about a minute on a 2-core 2026 x86-64 machine, measured by\n"
         "bench/bench_sim), past which --compute forces them; --max-mem\n"
         "\n"
         "exit status: 0 every kernel matched the simulator (with --dq-mode atomic:\n"
         "dK, dV bit for bit, dQ the same additions in any order), 1 one did not (or\n"
         "no CUDA, I/O), 2 bad usage\n"),
};

static const cli_help_item HELP_COMPARE[] = {
    PARA("usage: fasim compare [options] vs [options]\n"
         "\n"
         "Two runs side by side: A with the options before 'vs', B with A's options\n"
         "and those after 'vs' (an option given after 'vs' replaces A's). For each:\n"
         "the configuration, the plan, the HBM traffic per tensor and in total, and\n"
         "the error against the float64 oracle when both computed; B / A for the\n"
         "numbers, and * on every row that differs. Each side runs one loop order\n"
         "(--algo, default fa2) and one pass, on the same seeded inputs and, unless\n"
         "a side says otherwise (--plan best, --Br, --Bc), on the same square tiles:\n"
         "the largest of 128, 64, 32, 16 that fits both.\n"
         "Examples:\n"
         "  fasim compare --Br 64 --Bc 64 --algo fa1 vs --algo fa2   # loop orders\n"
         "  fasim compare --N 2048 --dtype fp16 vs --dtype bf16       # dtypes\n"
         "  fasim compare --N 4096 vs --causal                        # masks\n"
         "\n"
         "options, on either side, as the report takes them (see 'fasim --help'):\n"
         "--N --d --M --dtype --algo --Br --Bc --plan --causal --seed --q --k --v\n"
         "--compute --count-only --max-mem --max-steps --gpu --Nq --Nk --window --batch\n"
         "--heads --kv-heads --pass --dO --splits --page-size --intermediates\n"
         "\n"),
    LINE("--json", "one JSON object: both sides' options and the rows (keys in\n"
        "README.md); on either side"),
    LINE("--help", NULL),
    PARA("\n"
         "exit status: 0 success, 2 bad usage, 1 other failures\n"),
};

static const cli_help_item HELP_VALIDATE[] = {
    PARA("usage: fasim validate [FILE] [--json]\n"
         "\n"
         "The GPU timing model against published measurements: each row of FILE (a\n"
         "figure with its GPU, loop order, passes, mask and shape) is run through the\n"
         "model as the released kernel is launched (the report's kernel plan; its\n"
         "default plan for a loop order no released kernel runs), and printed beside\n"
         "what was measured: the prediction, the error (pred - meas) / meas, and ! on\n"
         "a row off by more than 40%. Then the geometric mean of |error| (of\n"
         "max(pred/meas, meas/pred), minus one), apart for the rows that fixed the\n"
         "model's constants (fit = 1) and the others, and the rows off by over 40%.\n"
         "\n"
         "Without FILE: the figures fasim ships, bench/published/gpu-figures.tsv in\n"
         "the source tree (installed: share/fasim/gpu-figures.tsv). FILE ('-' for\n"
         "standard input) is tab-separated: '#' comments, a header, one figure a row:\n"
         "\n"
         "  gpu dtype algo passes causal batch heads N d metric value flops fit source\n"
         "  a100 fp16 fa2 fwd+bwd 0 16 32 1024 64 tflops 153 fa2 0 FlashAttention-2...\n"
         "\n"
         "  algo     %A; fa3/np and fa3/nw: fa3 without its\n"
         "           GEMM-softmax pipelining, without warp specialization\n"
         "           (FA3's Table 2); fa3 off Hopper is kept, not modelled;\n"
         "           unfused/fa2bench: unfused running FlashAttention-2's\n"
         "           benchmark's operations (the report's unfused-ops)\n"
         "  passes   fwd, bwd or fwd+bwd (the passes' times summed)\n"
         "  metric   tflops, ms, or GB (DRAM bytes read and written, 10^9 B)\n"
         "  flops    a tflops row's FLOP convention: fa2 (forward 4 B N^2 d H, halved\n"
         "           under a causal mask, backward 2.5x the forward); - on the others\n"
         "\n"),
    ROW(CLI_O_JSON),
    LINE("--help", NULL),
    PARA("\n"
         "limits: a figures file of at most 4 MiB (fixed); each row within the\n"
         "report's limits (N <= 2^40, d, B, H <= 65536)\n"
         "\n"
         "exit status: 0 every row predicted (whatever the errors), 2 bad usage (a\n"
         "malformed row is reported as FILE:LINE), 1 other failures (I/O, a row the\n"
         "model refused)\n"),
};

static const cli_help_item HELP_RING_MEMORY[] = {
    PARA("usage: fasim ring-memory [--gpu NAME]\n"
         "\n"
         "The Ring Attention paper's Table 3 (Liu, Zaharia, Abbeel 2023; its A100 rows:\n"
         "the longest context trained end to end with FSDP on 8 or 32 devices) beside\n"
         "a memory model of one device: the model state sharded over the devices, each\n"
         "layer's input kept (full gradient checkpointing) and one layer's working\n"
         "activations, every assumption printed with the table. Ring attention's\n"
         "context is the devices times the tokens one device holds.\n"
         "\n"),
    LINE("--gpu NAME", "the device whose HBM the model fills: a100 (default, the\n"
         "paper's A100 80GB), a100-40, h100, h100-pcie or h200; list"),
    LINE("--help", NULL),
};

/* ---- the commands ---- */

/* Options of the report that the view names as the report's. */
static const char *const VIEW_FOREIGN[] = { "json", "out", "max-mem", "max-steps", "version",
                                            "gpu", "timeline", "trace", "l2" };
/* Options of the report or the view that explore does not take. */
static const char *const EXPLORE_FOREIGN[] = {
    "json", "out", "max-mem", "max-steps", "version", "plan", "seed", "q", "k", "v",
    "compute", "count-only", "step", "frames", "row",
};

#define PAGE(h) h, (int)(sizeof h / sizeof h[0])
#define FOREIGN(f, owner) f, (int)(sizeof f / sizeof f[0]), owner

const cli_command CLI_COMMANDS[CLI_CMD_COUNT] = {
    [CLI_CMD_REPORT] = { "report", "fasim", "fasim [options]", "the report (this page)",
                         PAGE(HELP_REPORT), NULL, 0, NULL },
    [CLI_CMD_VIEW] = { "view", "fasim view", "fasim view [options]",
                       "one run, step by step (terminal or --sdl)", PAGE(HELP_VIEW),
                       FOREIGN(VIEW_FOREIGN, "the report") },
    [CLI_CMD_LESSON] = { "lesson", "fasim lesson", "fasim lesson [NAME]",
                         "the lessons, interactive or --script", PAGE(HELP_LESSON), NULL, 0,
                         NULL },
    [CLI_CMD_SWEEP] = { "sweep", "fasim sweep", "fasim sweep --vary P=A..B",
                        "traffic over a range, fitted exponents, plots", PAGE(HELP_SWEEP),
                        NULL, 0, NULL },
    [CLI_CMD_CLAIMS] = { "claims", "fasim claims", "fasim claims [FILE]",
                         "the source articles' claims, or yours, checked", PAGE(HELP_CLAIMS),
                         NULL, 0, NULL },
    [CLI_CMD_EXPLORE] = { "explore", "fasim explore", "fasim explore",
                          "change N, d, M, blocks with keys; all updates", PAGE(HELP_EXPLORE),
                          FOREIGN(EXPLORE_FOREIGN, "the report or the view") },
    [CLI_CMD_GPU] = { "gpu", "fasim gpu", "fasim gpu [--backend cpu]",
                      "the CUDA kernels (or CPU path) beside the sim", PAGE(HELP_GPU), NULL, 0,
                      NULL },
    [CLI_CMD_COMPARE] = { "compare", "fasim compare", "fasim compare A vs B",
                          "two runs side by side, the differences marked", PAGE(HELP_COMPARE),
                          NULL, 0, NULL },
    [CLI_CMD_VALIDATE] = { "validate", "fasim validate", "fasim validate [FILE]",
                           "the GPU model against published figures",
                           PAGE(HELP_VALIDATE), NULL, 0, NULL },
    [CLI_CMD_RING_MEMORY] = { "ring-memory", "fasim ring-memory", "fasim ring-memory",
                              "a ring's longest context: the paper's Table 3",
                              PAGE(HELP_RING_MEMORY), NULL, 0, NULL },
    [CLI_CMD_HELP] = { "help", "fasim help", "fasim COMMAND --help", "that command's options",
                       NULL, 0, NULL, 0, NULL },
};

int cli_command_find(const char *name)
{
    for (int c = 0; c < CLI_CMD_COUNT; c++)
        if (!strcmp(CLI_COMMANDS[c].name, name))
            return c;
    return -1;
}

int cli_option_find(cli_cmd cmd, const char *name, size_t len)
{
    for (int o = 0; o < CLI_O_COUNT; o++)
        if ((CLI_OPTIONS[o].cmds & CLI_IN(cmd)) && strlen(CLI_OPTIONS[o].name) == len &&
            !strncmp(CLI_OPTIONS[o].name, name, len))
            return o;
    return -1;
}

/* ---- the help pages ---- */

/* Write s up to end (NULL: its NUL), each "%d" replaced by the next number,
 * "%A" by the loop orders' names ("naive, fa1, fa2") and "%O" by them as
 * one choice ("naive, fa1 or fa2"): the registry's, whichever it holds. */
static void put_text(FILE *out, const char *s, const char *end, const int *nums, int nnums,
                     int *next)
{
    for (; *s && s != end; s++) {
        if (s[0] == '%' && s[1] == 'd' && *next < nnums) {
            fprintf(out, "%d", nums[(*next)++]);
            s++;
        } else if (s[0] == '%' && (s[1] == 'A' || s[1] == 'O')) {
            char names[256];
            fputs(sim_algo_names(names, sizeof names, s[1] == 'A' ? ", " : " or "), out);
            s++;
        } else {
            fputc(*s, out);
        }
    }
}

/* "  LABEL      text", the text's further lines at column 19. */
static void put_option(FILE *out, const char *label, const char *text, const int *nums,
                       int nnums, int *next)
{
    int pad = 0;                         /* the line so far: 0 after the label */
    if (!text || text[0] == '\n') {
        fprintf(out, "  %s\n", label);
        if (!text)
            return;
        text++;
        pad = 1;
    } else if (strlen(label) <= 16) {
        fprintf(out, "  %-16s ", label);
    } else {
        fprintf(out, "  %s  ", label);
    }
    while (*text) {
        const char *e = strchr(text, '\n');
        if (pad)
            fprintf(out, "%19s", "");
        put_text(out, text, e, nums, nnums, next);
        fputc('\n', out);
        pad = 1;
        text = e ? e + 1 : text + strlen(text);
    }
}

void cli_usage(FILE *out, cli_cmd cmd, const int *nums, int nnums)
{
    const cli_command *c = &CLI_COMMANDS[cmd];
    int next = 0;
    if (cmd == CLI_CMD_REPORT) {         /* the commands first */
        for (int k = 0; k < CLI_CMD_COUNT; k++)
            fprintf(out, "%s%-27s%s\n", k ? "       " : "usage: ", CLI_COMMANDS[k].synopsis,
                    CLI_COMMANDS[k].summary);
        fputc('\n', out);
    }
    for (int k = 0; k < c->nhelp; k++) {
        const cli_help_item *it = &c->help[k];
        if (it->opt >= 0) {
            const cli_option *o = &CLI_OPTIONS[it->opt];
            char label[64];
            snprintf(label, sizeof label, "--%s%s%s", o->name, o->arg ? " " : "",
                     o->arg ? o->arg : "");
            put_option(out, label, o->help, nums, nnums, &next);
        } else if (it->label) {
            put_option(out, it->label, it->text, nums, nnums, &next);
        } else {
            put_text(out, it->text, NULL, nums, nnums, &next);
        }
    }
}

/* ---- scanning ---- */

const char *cli_take_value(int argc, char **argv, int *k)
{
    if (*k + 1 >= argc || (argv[*k + 1][0] == '-' && argv[*k + 1][1] == '-' &&
                           argv[*k + 1][2] != '\0'))
        return NULL;
    return argv[++*k];
}

int cli_given_twice(cli_given *given, int id, const char *optname, char *err, size_t errlen)
{
    if (id == CLI_O_HELP)
        return 0;
    if (cli_given_has(given, id)) {
        ERR("%s is given twice; give each option once", optname);
        return -1;
    }
    cli_given_set(given, id);
    return 0;
}

int cli_opt_scan(int argc, char **argv, int *k, cli_cmd cmd, const char **val, char *optname,
                 size_t optlen, char *err, size_t errlen)
{
    const cli_command *c = &CLI_COMMANDS[cmd];
    const char *arg = argv[*k];
    *val = NULL;
    if (!strcmp(arg, "-h"))
        return CLI_OPT_HELP;
    if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
        ERR("unexpected argument '%s'; see '%s --help'", sim_shown(arg).s, c->prog);
        return -1;
    }
    const char *name = arg + 2, *eq = strchr(name, '=');
    size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
    int id = cli_option_find(cmd, name, nlen);
    if (id < 0) {
        for (int q = 0; q < c->nforeign; q++)
            if (strlen(c->foreign[q]) == nlen && !strncmp(c->foreign[q], name, nlen)) {
                ERR("--%s is not an option of '%s' but an option of %s", c->foreign[q],
                    c->prog, c->owner);
                return -1;
            }
        for (int q = 0; q < CLI_O_COUNT; q++)
            if ((CLI_OPTIONS[q].cmds & CLI_IN(cmd)) && strlen(CLI_OPTIONS[q].name) == nlen &&
                !strncasecmp(CLI_OPTIONS[q].name, name, nlen)) {
                ERR("unknown option '--%.*s'; did you mean '--%s'?", (int)nlen, name,
                    CLI_OPTIONS[q].name);
                return -1;
            }
        ERR("unknown option '--%s'; see '%s --help'", sim_shown_n(name, nlen).s, c->prog);
        return -1;
    }
    snprintf(optname, optlen, "--%s", CLI_OPTIONS[id].name);
    if (CLI_OPTIONS[id].arg) {
        if (eq) {
            *val = eq + 1;
        } else if (!(*val = cli_take_value(argc, argv, k))) {
            ERR("%s needs a value; see '%s --help'", optname, c->prog);
            return -1;
        }
    } else if (eq) {
        ERR("%s takes no value", optname);
        return -1;
    }
    return id;
}

int cli_parse_each(int argc, char **argv, int first, cli_cmd cmd, int *help, cli_opt_fn fn,
                   void *ctx, char *err, size_t errlen)
{
    cli_given given = { { 0, 0 } };
    for (int k = first; k < argc; k++) {
        const char *val;
        char optname[32];
        int id = cli_opt_scan(argc, argv, &k, cmd, &val, optname, sizeof optname, err, errlen);
        if (id == -1)
            return -1;
        if (id == CLI_OPT_HELP)
            *help = 1;
        else if (cli_given_twice(&given, id, optname, err, errlen) != 0 ||
                 fn(ctx, id, optname, val, err, errlen) != 0)
            return -1;
    }
    return 0;
}
