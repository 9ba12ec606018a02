/*
 * kern_cuda.cu — the CUDA backend: the same kernel source as the CPU path
 * (kern_naive.cuh, kern_fa1.cuh, kern_fa2.cuh) compiled for the device with
 * -fmad=false and no fast-math, launched with the plan's shared memory.
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
#include "kern_fa2.cuh"
#include "kern_naive.cuh"

#define HINT "; run with --backend cpu to use the same kernels on the CPU"

typedef void (*cuda_kernel_fn)(kern_params);

static cuda_kernel_fn cuda_kernel(kern_kernel k)
{
    switch (k) {
    case KERN_K_NAIVE_SCORES: return kern_naive_scores;
    case KERN_K_NAIVE_SOFTMAX_ROWS: return kern_naive_softmax_rows;
    case KERN_K_NAIVE_SOFTMAX_3PASS: return kern_naive_softmax_3pass;
    case KERN_K_NAIVE_PV: return kern_naive_pv;
    case KERN_K_FA1: return kern_fa1;
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

extern "C" int kern_cuda_run(sim_algo a, const sim_shape *sh, const sim_plan *p,
                             const float *Q, const float *K, const float *V,
                             const kern_options *opt, kern_result *out, char *err,
                             size_t errlen)
{
    int rc = 0, dev = 0, max_smem = 0, threads, repeat;
    kern_schedule s;
    kern_params kp;
    kern_counts hcnt, *dcnt = NULL;
    float *dT[SIM_TENSOR_COUNT];
    int64_t nT[SIM_TENSOR_COUNT];
    cudaEvent_t e0 = NULL, e1 = NULL;
    double *times = NULL;
    float *last = NULL;
    const int64_t N = sh->N, d = sh->d, nO = N * d;
    const float *in[3] = { Q, K, V };

    memset(out, 0, sizeof *out);
    memset(dT, 0, sizeof dT);
    memset(nT, 0, sizeof nT);
    if (!kern_cuda_probe(err, errlen))
        return -1;
    if (kern_schedule_make(a, p, sh, &s, err, errlen))
        return -1;
    threads = opt && opt->threads ? opt->threads : KERN_CUDA_DEFAULT_THREADS;
    repeat = opt && opt->repeat > 0 ? opt->repeat : 1;
    if (threads < 1 || threads > 1024) {
        snprintf(err, errlen, "threads per block must be 1..1024 on CUDA (got %d)", threads);
        return -1;
    }
    times = (double *)malloc((size_t)repeat * sizeof *times);
    last = (float *)malloc((size_t)nO * sizeof(float));
    out->O = (float *)malloc((size_t)nO * sizeof(float));
    out->L = a == SIM_FA2 ? (float *)malloc((size_t)N * sizeof(float)) : NULL;
    if (!times || !last || !out->O || (a == SIM_FA2 && !out->L)) {
        snprintf(err, errlen, "out of memory for the kernel's results");
        rc = -1;
        goto done;
    }

    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&max_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    for (int k = 0; k < s.n; k++) {
        uint64_t bytes = s.l[k].smem_bytes;
        if (bytes > (uint64_t)max_smem) {
            snprintf(err, errlen, "%s needs %llu B of shared memory per block (the plan's "
                     "buffers); this device allows %d B: use a smaller --M or --Br/--Bc",
                     kern_kernel_name(s.l[k].k),
                     (unsigned long long)bytes, max_smem);
            rc = -1;
            goto done;
        }
        CK(cudaFuncSetAttribute((const void *)cuda_kernel(s.l[k].k),
                                cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
    }

    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        if (!kern_uses(a, (sim_tensor)t))
            continue;
        nT[t] = (t == SIM_S || t == SIM_P) ? N * N : (t <= SIM_O ? N * d : N);
        CK(cudaMalloc((void **)&dT[t], (size_t)nT[t] * sizeof(float)));
    }
    for (int t = 0; t < 3; t++)
        CK(cudaMemcpy(dT[t], in[t], (size_t)nO * sizeof(float), cudaMemcpyHostToDevice));
    CK(cudaMalloc((void **)&dcnt, sizeof *dcnt));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));

    kp = kern_params_make(sh, p);
    kp.Q = dT[SIM_Q];
    kp.K = dT[SIM_K];
    kp.V = dT[SIM_V];
    kp.O = dT[SIM_O];
    kp.S = dT[SIM_S];
    kp.P = dT[SIM_P];
    kp.m = dT[SIM_m];
    kp.l = dT[SIM_l];
    kp.L = dT[SIM_L];

    for (int run = 0; run <= repeat; run++) {
        /* Poison: all-ones bytes are a NaN in every float. */
        for (int t = SIM_O; t < SIM_TENSOR_COUNT; t++)
            if (dT[t])
                CK(cudaMemset(dT[t], 0xff, (size_t)nT[t] * sizeof(float)));
        if (run == 0)
            CK(cudaMemset(dcnt, 0, sizeof *dcnt));
        kp.cnt = run == 0 ? dcnt : NULL;
        CK(cudaEventRecord(e0));
        for (int k = 0; k < s.n; k++) {
            void *args[1] = { &kp };
            CK(cudaLaunchKernel((const void *)cuda_kernel(s.l[k].k), dim3((unsigned)s.l[k].grid),
                                dim3((unsigned)threads), args,
                                (size_t)s.l[k].smem_bytes, 0));
        }
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        CK(cudaGetLastError());
        float ms = 0.0f;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (run == 0) {
            CK(cudaMemcpy(out->O, dT[SIM_O], (size_t)nO * sizeof(float),
                          cudaMemcpyDeviceToHost));
            if (out->L)
                CK(cudaMemcpy(out->L, dT[SIM_L], (size_t)N * sizeof(float),
                              cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(&hcnt, dcnt, sizeof hcnt, cudaMemcpyDeviceToHost));
        } else {
            times[run - 1] = 1e-3 * (double)ms;
            if (run == repeat) {
                CK(cudaMemcpy(last, dT[SIM_O], (size_t)nO * sizeof(float),
                              cudaMemcpyDeviceToHost));
                if (memcmp(last, out->O, (size_t)nO * sizeof(float)) != 0) {
                    snprintf(err, errlen, "%s: the output of the last timed run differs "
                             "from the counted run's: the kernel has a race",
                             sim_algo_name(a));
                    rc = -1;
                    goto done;
                }
            }
        }
    }
    kern_counts_to_sim(&hcnt, &out->counts);
    out->seconds = kern_median(times, repeat);
    out->runs = repeat;
    out->threads = threads;
    out->launches = s.n;
    for (int k = 0; k < s.n; k++) {
        out->blocks += s.l[k].grid;
        if (s.l[k].smem_bytes > out->smem_bytes)
            out->smem_bytes = s.l[k].smem_bytes;
    }
    out->plan_bytes = p->sram_peak;
done:
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    for (int t = 0; t < SIM_TENSOR_COUNT; t++)
        if (dT[t])
            cudaFree(dT[t]);
    if (dcnt)
        cudaFree(dcnt);
    free(times);
    free(last);
    if (rc)
        kern_result_free(out);
    return rc;
}
