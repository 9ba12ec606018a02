/*
 * kern_cuda.cu — the CUDA backend: the same kernel source as the CPU path
 * (kern_naive.cuh, kern_fa1.cuh, kern_fa2.cuh and the backward's .cuh files)
 * compiled for the device with -fmad=false and no fast-math, launched with the
 * plan's shared memory: the forward (kern_cuda_run) and FA1's and FA2's
 * backward (kern_cuda_run_bwd; standard attention's runs on the CPU path),
 * the same steps, driven by the launch schedule
 * (kern_schedule_make) and the kernel table below.
 *
 * Built only when CMake finds nvcc (FASIM_HAVE_CUDA). Every CUDA call is
 * checked; a failure comes back as one line naming the call, CUDA's error,
 * and what to do. Without a device the message says to use --backend cpu.
 *
 * Counting: the first run passes a device-side kern_counts (thread 0 of each
 * block adds with atomicAdd); the timed runs pass NULL, so the counters cost
 * the timed runs nothing but a predictable branch.
 */
extern "C" {
#include "sim.h"
}
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kern_internal.h"

#include "kern_fa1.cuh"
#include "kern_fa1_bwd.cuh"   /* compiled and checked by ptxas; kern_run_bwd runs it on the CPU */
#include "kern_fa2.cuh"
#include "kern_fa2_bwd.cuh"
#include "kern_gqa_bwd.cuh"
#include "kern_naive.cuh"
#include "kern_naive_bwd.cuh"   /* as kern_fa2_bwd.cuh */

#define HINT "; run with --backend cpu to use the same kernels on the CPU"

typedef void (*cuda_kernel_fn)(kern_params);

static cuda_kernel_fn cuda_kernel(kern_kernel k)
{
    switch (k) {
    case KERN_K_NAIVE_SCORES: return kern_naive_scores;
    case KERN_K_NAIVE_SOFTMAX_ROWS: return kern_naive_softmax_rows;
    case KERN_K_NAIVE_SOFTMAX_2PASS: return kern_naive_softmax_2pass;
    case KERN_K_NAIVE_SOFTMAX_3PASS: return kern_naive_softmax_3pass;
    case KERN_K_NAIVE_PV: return kern_naive_pv;
    case KERN_K_FA1: return kern_fa1;
    case KERN_K_FA1_BWD: return kern_fa1_bwd;
    case KERN_K_FA2_SPLIT: return kern_fa2_split;
    case KERN_K_FA2_COMBINE: return kern_fa2_combine;
    case KERN_K_FA2_BWD_PRE: return kern_fa2_bwd_pre;
    case KERN_K_FA2_BWD: return kern_fa2_bwd;
    case KERN_K_FA2_BWD_CONVERT: return kern_fa2_bwd_convert;
    case KERN_K_GQA_SUM_DK: return kern_gqa_sum_dk;
    case KERN_K_GQA_SUM_DV: return kern_gqa_sum_dv;
    case KERN_K_NAIVE_BWD_DV: return kern_naive_bwd_dv;
    case KERN_K_NAIVE_BWD_DP: return kern_naive_bwd_dp;
    case KERN_K_NAIVE_BWD_DS_ROWS: return kern_naive_bwd_ds_rows;
    case KERN_K_NAIVE_BWD_DS_2PASS: return kern_naive_bwd_ds_2pass;
    case KERN_K_NAIVE_BWD_DQ: return kern_naive_bwd_dq;
    case KERN_K_NAIVE_BWD_DK: return kern_naive_bwd_dk;
    default: return kern_fa2;
    }
}

static int cuda_fail(cudaError_t e, const char *what, char *err, size_t errlen)
{
    snprintf(err, errlen, "CUDA: %s failed: %s (%s)%s", what, cudaGetErrorString(e),
             cudaGetErrorName(e), HINT);
    return -1;
}

/* Check a CUDA call; on failure write the message and leave through `done`. */
#define CK(call)                                                              \
    do {                                                                      \
        cudaError_t e_ = (call);                                              \
        if (e_ != cudaSuccess) {                                              \
            rc = cuda_fail(e_, #call, err, errlen);                           \
            goto done;                                                        \
        }                                                                     \
    } while (0)

extern "C" int kern_cuda_probe(char *err, size_t errlen)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice) {
        /* The runtime says "driver version is insufficient" also when there
         * is no NVIDIA driver at all (no libcuda), the usual case on a
         * machine without a GPU: say that first. */
        snprintf(err, errlen, "no CUDA device: no NVIDIA driver or GPU found, or the driver "
                 "is older than CUDA %d.%d (CUDA says: %s); run with --backend cpu",
                 CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10, cudaGetErrorName(e));
        return 0;
    }
    if (e != cudaSuccess) {
        snprintf(err, errlen, "no CUDA device: cudaGetDeviceCount failed: %s (%s); run "
                 "with --backend cpu", cudaGetErrorString(e), cudaGetErrorName(e));
        return 0;
    }
    if (n == 0) {
        snprintf(err, errlen, "no CUDA device: cudaGetDeviceCount found none; run with "
                 "--backend cpu");
        return 0;
    }
    return 1;
}

/* One kern_cuda_run or kern_cuda_run_bwd: the schedule, the device's
 * buffers and the results in the making, so that each step below is a
 * function of its own. */
typedef struct {
    sim_algo a;
    sim_pass pass;
    const sim_shape *sh;
    const sim_plan *p;
    kern_schedule s;
    kern_params kp;
    kern_counts hcnt, *dcnt;
    float *dT[SIM_TENSOR_COUNT];         /* the tensors in device memory */
    int64_t nT[SIM_TENSOR_COUNT];        /* their element counts */
    int *dturn;                          /* the backward's dQ_i turns (B H T_r) */
    int64_t turns;
    cudaEvent_t e0, e1;
    double *times;                       /* seconds of each timed run */
    kern_outs o;                         /* what the run hands back */
    float *back[3];                      /* o's tensors of the latest run, on the host */
    int threads, repeat;
} cuda_run;

/* The device's limits: grid dimensions, threads and opt-in shared memory
 * per block. */
static int device_limits(kern_limits *lim, char *err, size_t errlen)
{
    int rc = 0, dev = 0, gx = 0, gy = 0, th = 0, smem = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&gx, cudaDevAttrMaxGridDimX, dev));
    CK(cudaDeviceGetAttribute(&gy, cudaDevAttrMaxGridDimY, dev));
    CK(cudaDeviceGetAttribute(&th, cudaDevAttrMaxThreadsPerBlock, dev));
    CK(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    lim->who = "this device";
    lim->grid_x = gx;
    lim->grid_y = gy;
    lim->threads = th;
    lim->smem = (uint64_t)smem;
done:
    return rc;
}

/* The plan, the schedule and its launches checked against the device's
 * limits before anything is allocated (kern_prelude, which clears *out);
 * the host buffers of the results; every launch's shared memory allowed. */
static int run_prepare(cuda_run *c, const kern_options *opt, kern_result *out, char *err,
                       size_t errlen)
{
    int rc = 0;
    kern_limits lim;
    memset(out, 0, sizeof *out);
    if (!kern_cuda_probe(err, errlen) || device_limits(&lim, err, errlen) ||
        kern_prelude(c->a, c->sh, c->p, c->pass, opt, &lim, KERN_CUDA_DEFAULT_THREADS, out,
                     &c->s, &c->threads, &c->repeat, err, errlen))
        return -1;
    kern_outs_make(c->a, c->sh, c->pass, out, &c->o);
    c->times = (double *)malloc((size_t)c->repeat * sizeof *c->times);
    int ok = c->times != NULL;
    for (int k = 0; k < c->o.n; k++)
        ok = ok && (c->back[k] = (float *)malloc((size_t)c->o.elems[k] * sizeof(float)));
    if (!ok) {
        snprintf(err, errlen, "out of memory for the kernel's results");
        return -1;
    }
    for (int k = 0; k < c->s.n; k++)
        CK(cudaFuncSetAttribute((const void *)cuda_kernel(c->s.l[k].k),
                                cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)c->s.l[k].smem_bytes));
done:
    return rc;
}

/* The pass's tensors in device memory, the inputs in[t] (host, NULL where
 * none) copied in, the backward's turns, the counters and the timing
 * events, and the kernels' parameters. */
static int run_upload(cuda_run *c, const float *const in[SIM_TENSOR_COUNT], char *err,
                      size_t errlen)
{
    int rc = 0;
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        if (!kern_uses(c->a, c->sh, &c->p->run, (sim_tensor)t))
            continue;
        c->nT[t] = kern_run_elems(c->sh, &c->p->run, (sim_tensor)t);
        CK(cudaMalloc((void **)&c->dT[t], (size_t)c->nT[t] * sizeof(float)));
        if (in[t])
            CK(cudaMemcpy(c->dT[t], in[t], (size_t)c->nT[t] * sizeof(float),
                          cudaMemcpyHostToDevice));
    }
    if (c->pass == SIM_BWD) {
        c->turns = kern_turn_count(c->sh, c->p);
        CK(cudaMalloc((void **)&c->dturn, (size_t)c->turns * sizeof *c->dturn));
    }
    CK(cudaMalloc((void **)&c->dcnt, sizeof *c->dcnt));
    CK(cudaEventCreate(&c->e0));
    CK(cudaEventCreate(&c->e1));
    c->kp = kern_params_make(c->sh, c->p);
    kern_params_bind(&c->kp, c->dT, &c->p->run);
    c->kp.dq_turn = c->dturn;
done:
    return rc;
}

/* Run `run` (0: the counted run, 1 .. repeat: timed): every tensor the pass
 * writes poisoned first (all-ones bytes are a NaN in every float; -1 as a
 * turn, which kern_fa2_bwd_pre must reset), the schedule's launches, and
 * the elapsed time in *ms. */
static int run_once(cuda_run *c, int run, float *ms, char *err, size_t errlen)
{
    int rc = 0;
    for (int t = 0; t < SIM_TENSOR_COUNT; t++)
        if (c->dT[t] && kern_writes(c->pass, (sim_tensor)t))
            CK(cudaMemset(c->dT[t], 0xff, (size_t)c->nT[t] * sizeof(float)));
    if (c->dturn)
        CK(cudaMemset(c->dturn, 0xff, (size_t)c->turns * sizeof *c->dturn));
    if (run == 0)
        CK(cudaMemset(c->dcnt, 0, sizeof *c->dcnt));
    c->kp.cnt = run == 0 ? c->dcnt : NULL;
    CK(cudaEventRecord(c->e0));
    for (int k = 0; k < c->s.n; k++) {
        void *args[1] = { &c->kp };
        CK(cudaLaunchKernel((const void *)cuda_kernel(c->s.l[k].k),
                            dim3((unsigned)c->s.l[k].grid, (unsigned)c->s.l[k].grid_y),
                            dim3((unsigned)c->threads), args,
                            (size_t)c->s.l[k].smem_bytes, 0));
    }
    CK(cudaEventRecord(c->e1));
    CK(cudaEventSynchronize(c->e1));
    CK(cudaGetLastError());
    CK(cudaEventElapsedTime(ms, c->e0, c->e1));
done:
    return rc;
}

/* The counted run, whose outputs and counters are kept, then `repeat`
 * timed runs, whose outputs must equal the counted run's bit for bit
 * (kern_outs_keep). */
static int run_all(cuda_run *c, char *err, size_t errlen)
{
    int rc = 0;
    for (int run = 0; run <= c->repeat; run++) {
        float ms = 0.0f;
        if ((rc = run_once(c, run, &ms, err, errlen)) != 0)
            return rc;
        for (int k = 0; k < c->o.n; k++)
            CK(cudaMemcpy(c->back[k], c->dT[c->o.t[k]], (size_t)c->o.elems[k] * sizeof(float),
                          cudaMemcpyDeviceToHost));
        if (kern_outs_keep(&c->o, c->a, run, c->back, err, errlen))
            return -1;
        if (run == 0)
            CK(cudaMemcpy(&c->hcnt, c->dcnt, sizeof c->hcnt, cudaMemcpyDeviceToHost));
        else
            c->times[run - 1] = 1e-3 * (double)ms;
    }
done:
    return rc;
}

static void run_free(cuda_run *c)
{
    if (c->e0)
        cudaEventDestroy(c->e0);
    if (c->e1)
        cudaEventDestroy(c->e1);
    for (int t = 0; t < SIM_TENSOR_COUNT; t++)
        if (c->dT[t])
            cudaFree(c->dT[t]);
    if (c->dturn)
        cudaFree(c->dturn);
    if (c->dcnt)
        cudaFree(c->dcnt);
    free(c->times);
    for (int k = 0; k < 3; k++)
        free(c->back[k]);
}

static void run_init(cuda_run *c, sim_algo a, sim_pass pass, const sim_shape *sh,
                     const sim_plan *p)
{
    memset(c, 0, sizeof *c);
    c->a = a;
    c->pass = pass;
    c->sh = sh;
    c->p = p;
}

/* The end of either run: the counts and times into *out, the device's
 * buffers freed, and *out released on failure. */
static int run_finish(cuda_run *c, int rc, kern_result *out)
{
    if (!rc)
        kern_result_finish(out, &c->s, c->p, &c->hcnt, c->times, c->repeat, c->threads);
    run_free(c);
    if (rc)
        kern_result_free(out);
    return rc;
}

extern "C" int kern_cuda_run(sim_algo a, const sim_shape *sh, const sim_plan *p,
                             const float *Q, const float *K, const float *V,
                             const kern_options *opt, kern_result *out, char *err,
                             size_t errlen)
{
    cuda_run c;
    run_init(&c, a, SIM_FWD, sh, p);
    const float *in[SIM_TENSOR_COUNT] = { NULL };
    in[SIM_Q] = Q;
    in[SIM_K] = K;
    in[SIM_V] = V;
    int rc = run_prepare(&c, opt, out, err, errlen);
    if (!rc)
        rc = run_upload(&c, in, err, errlen);
    if (!rc)
        rc = run_all(&c, err, errlen);
    return run_finish(&c, rc, out);
}

/* The backward, as kern_run_bwd_cpu_table runs it on the CPU: its launches
 * checked first, then the forward with the same blocks (O and L, through
 * kern_cuda_run, uncounted in the result), then the backward's launches,
 * counted once and timed opt->repeat times. The blocks run as the device
 * schedules them; dQ's turns (kern_params.dq_turn) fix the order of its
 * additions in deterministic mode, so every run's dQ must be the counted
 * run's; in atomic mode dQ may differ from run to run, and only dK and dV
 * are compared. */
extern "C" int kern_cuda_run_bwd(sim_algo a, const sim_shape *sh, const sim_plan *p,
                                 const float *Q, const float *K, const float *V,
                                 const float *dO, const kern_options *opt, kern_result *out,
                                 char *err, size_t errlen)
{
    cuda_run c;
    run_init(&c, a, SIM_BWD, sh, p);
    const kern_dq_mode mode = opt ? opt->dq_mode : KERN_DQ_DETERMINISTIC;
    int rc = run_prepare(&c, opt, out, err, errlen);
    sim_plan fp;
    if (!rc)
        rc = kern_bwd_forward_plan(a, sh, p, &fp, err, errlen);
    kern_result fr;
    memset(&fr, 0, sizeof fr);
    if (!rc) {
        const kern_options fo = { c.threads, 1, KERN_DQ_DETERMINISTIC, 0 };
        rc = kern_cuda_run(a, sh, &fp, Q, K, V, &fo, &fr, err, errlen);
    }
    if (!rc) {
        out->O = fr.O;               /* the forward's, which the backward reads */
        out->L = fr.L;
        out->m = fr.m;
        out->l = fr.l;
        const float *in[SIM_TENSOR_COUNT] = { NULL };
        in[SIM_Q] = Q;
        in[SIM_K] = K;
        in[SIM_V] = V;
        in[SIM_O] = fr.O;
        in[SIM_L] = fr.L;
        in[SIM_m] = fr.m;            /* FA1's */
        in[SIM_l] = fr.l;
        in[SIM_dO] = dO;
        rc = run_upload(&c, in, err, errlen);
        c.kp.dq_atomic = mode == KERN_DQ_ATOMIC;
        for (int k = 0; k < c.o.n; k++)
            if (c.o.t[k] == SIM_dQ)
                c.o.checked[k] = mode == KERN_DQ_DETERMINISTIC;
    }
    if (!rc)
        rc = run_all(&c, err, errlen);
    return run_finish(&c, rc, out);
}
