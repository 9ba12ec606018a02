/*
 * sim_limits.h — the largest problem fasim accepts, in one place.
 *
 * Every layer that takes a problem from outside (the command line, claims
 * files, the explorer, the lessons, .npy inputs) bounds it by these, so that
 * the same N, d or M is accepted or refused everywhere with the same reason.
 * A layer that deliberately takes less defines its bound from these and says
 * why beside it (viz/viz_explore.h, the lessons' small examples).
 *
 * Header only: the core is the one layer every other layer includes
 * (docs/ARCHITECTURE.md, Layers). Each limit states why it is what it is.
 */
#ifndef FASIM_SIM_LIMITS_H
#define FASIM_SIM_LIMITS_H

#include <stdint.h>

/* N, N_q, N_k, the window, block sizes and page sizes: 2^40 rows. The counts
 * of naive grow as N^2 (times d for the flops); at 2^40 those terms still fit
 * in 64 bits for small d, and sim_shape_check refuses the shapes whose counts
 * would not. No real sequence comes near (a million tokens is 2^20). */
#define SIM_MAX_N     (INT64_C(1) << 40)

/* d: 65536, far above any real head dimension (64 .. 256), low enough that
 * an SRAM plan's d-wide rows stay far inside 64 bits. */
#define SIM_MAX_D     INT64_C(65536)

/* M: 1 GiB of SRAM per thread block, well past any on-chip memory (KiB to
 * a few MiB); the plan search grows with M, so a larger M only costs time. */
#define SIM_MAX_M     (UINT64_C(1) << 30)

/* Batch B, query heads H, key/value heads G, and split-KV's splits: 65536.
 * Models use up to 128 heads and batches of thousands; B H N^2 must still
 * fit in 64 bits at moderate N. */
#define SIM_MAX_HEADS INT64_C(65536)

/* Threads of a compute run (sim_set_threads): at most 256, beyond any
 * machine fasim is meant for; by default the CPUs online, at most 8, where
 * FA2's query blocks (T_r of them, 64 at N = 4096 with 64-row blocks)
 * still share out evenly. */
#define SIM_MAX_THREADS 256
#define SIM_DEFAULT_THREADS 8

/* ---- bounds on a command's total work ------------------------------------
 * A small input can still ask for hours: many claims, a compute run on a
 * large .npy, the CPU kernels. Each command bounds the work it would do,
 * estimated from the plans and the closed forms before anything runs, and
 * refuses past the bound with the figure and the option that raises it.
 * Times are measured on the development machine (2-core 2026 x86-64, gcc
 * 12, bench/results/): count-only tile steps run at 1.4e8 to 9e8 a second
 * (bench/bench_sim), compute mode at 2.7e9 to 1.2e10 flops a second
 * (SIM_COMPUTE_FWD_FLOPS_PER_S, SIM_COMPUTE_BWD_FLOPS_PER_S). */

/* Tile steps of one simulated run, and of all the runs of a claims file
 * (--max-steps raises it): 2^33, about 30 s of count-only naive or FA2 and
 * 90 s of FA1, whose steps move more tensors. Paged KV (--page-size) costs
 * up to 7x more per step, whatever the page size: FA2 at N = 1.8M, d = 64
 * ran 1.0e8 paged steps a second against 6.4e8 contiguous (6.3x; fasim
 * --count-only --json, runs[].seconds, on a loaded machine), and 5.3x at
 * P = 16 in bench/results/cpu-2026-12-03.txt; 2^33 paged steps took 85 s
 * there, and 121 to 137 s end to end on a busier day: "up to 140 s". */
#define SIM_DEFAULT_MAX_STEPS (UINT64_C(1) << 33)

/* With --gpu the GPU model replays every step of the runs it prices, each
 * against the DRAM, the L2, the SM's pipes and the queue of blocks: up to
 * this factor slower a step than counting, so the report holds its runs to
 * --max-steps / SIM_GM_STEP_COST steps (2^28 by default). Measured on a
 * loaded 2-core machine: FA2 at N = 512K, d = 64, M = 228K, one head, 16.8M
 * steps (fasim --count-only --json, with and without --gpu h100): 2.9e8
 * steps a second counting, 1.2e6 with the model (14 s of CPU: its L2 holds
 * the largest working set there); Llama 2 70B at N = 32K, batch 8 (--preset
 * llama2-70b --gpu h100), 184M steps in 12.7 s: 1.5e7 a second, many heads
 * sharing one head's steps. So the limit is a minute or two where runs have
 * many heads and up to about four minutes for one very long head. */
#define SIM_GM_STEP_COST 32

/* Flops of work that computes on real data without --compute having asked
 * for it: the report on .npy inputs, fasim gpu (the simulator's run and,
 * with --backend cpu, the kernel's counted and timed runs). 7.2e10 is 12 s
 * of the report's forward runs and 27 s of backward ones
 * (sim_compute_seconds), and a minute of fasim gpu at
 * SIM_KERN_CPU_FLOPS_PER_S; fasim gpu's default (N = 2048, d = 64, three
 * loop orders on the CPU: 2.3e10 flops) takes about 20 s. --compute forces
 * more, with the estimate printed first. */
#define SIM_MAX_COMPUTE_FLOPS 7.2e10

/* The rates that turn a compute run's flops into wall seconds
 * (sim_compute_seconds), the float64 oracle's share included: compute
 * mode's end-to-end rates (fasim --compute --json, runs and oracle, wall
 * time on the 2-core development machine with other builds running,
 * 2026-12-04): three loop orders forward at N = 2048 and 4096, d = 64: 7.5e9
 * and 8.4e9 flops a second (1.2e10 causal), FA2 alone at N = 8192 (the
 * oracle 84% of it) 5.1e9: the forward at 6e9. The backward, whose products
 * are still scalar: three loop orders at N = 2048, d = 64 (--pass both)
 * 3.4e9, FA2 at N = 4096, d = 128 2.7e9: the backward at 2.7e9. In the web
 * page (WebAssembly) compute mode runs 5 to 6 times slower than natively
 * (the classroom report in 0.6 s against 0.1 s,
 * bench/results/web-2026-12-04.txt), so there the rates are a sixth. */
#if defined(__EMSCRIPTEN__)
#define SIM_COMPUTE_FWD_FLOPS_PER_S 1e9
#define SIM_COMPUTE_BWD_FLOPS_PER_S 4.5e8
#define SIM_COMPUTE_WHERE "in this browser on a 2-core 2026 x86-64 machine"
#else
#define SIM_COMPUTE_FWD_FLOPS_PER_S 6e9
#define SIM_COMPUTE_BWD_FLOPS_PER_S 2.7e9
#define SIM_COMPUTE_WHERE "on a 2-core 2026 x86-64 machine"
#endif

/* The same for fasim gpu, whose CPU kernels run their products at 0.07 to
 * 1.05 times the simulator's speed (bench/results/
 * cpu-2026-12-04-kernels-speed.txt: FA2's backward the slowest): the rate
 * measured before the vector paths, 1.2e9. */
#define SIM_KERN_CPU_FLOPS_PER_S 1.2e9

/* Claims per file: 256. Each claim's check searches a best plan for one
 * or two loop orders, up to 20 ms each at M = 1G (bench/bench_sweep), and
 * the file's work is estimated before it runs, which searches once more:
 * 256 claims stay within about 20 s of plan search. A claims file is a few
 * lines; the built-in claims are fewer than 64. */
#define SIM_MAX_CLAIMS 256

/* Block-sparse masks: at most 4M blocks in a mask (4 MiB of bits: a
 * 2048 x 2048 grid, 64-key blocks at N = 128K), and at most 16M tiles in a
 * plan under one (a byte each, the map a run and the closed forms walk:
 * about 0.1 s per walk). Larger grids are refused with a message. */
#define SIM_MAX_BMASK_BLOCKS (UINT64_C(1) << 22)
#define SIM_MAX_BMASK_TILES  (UINT64_C(1) << 24)

#endif /* FASIM_SIM_LIMITS_H */
