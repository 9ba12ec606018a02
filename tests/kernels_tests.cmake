# Tests of kernels/: the CPU path of the kernel source against the
# simulator, and ptxas's report on the CUDA build (label kernels), the same on a GPU (label gpu; skipped, exit 77,
# without a CUDA build or device), and `fasim gpu` end to end (label cli).

# Deliberately wrong builds of the same kernel source, which the tests must
# reject (kernels/kern_cpu_kernels.c with a KERN_BUG_* flag and its table
# renamed so that it links beside the real one).
foreach(bug SKIP_RESCALE RELOAD_Q KV_HEAD_MODULO BWD_DS_NO_D GQA_SUM_DESCENDING FA1_BWD_NO_L
            BWD_TURN_KEPT NAIVE_BWD_D_PER_TILE)
  string(TOLOWER ${bug} lbug)
  add_library(kern_bug_${lbug} OBJECT ${PROJECT_SOURCE_DIR}/kernels/kern_cpu_kernels.c)
  target_link_libraries(kern_bug_${lbug} PRIVATE fasim_kernels)
  target_compile_definitions(kern_bug_${lbug} PRIVATE KERN_BUG_${bug}=1
    KERN_TABLE_NAME=kern_cpu_bug_${lbug} KERN_TABLE_LABEL="kernels with KERN_BUG_${bug}")
endforeach()

fasim_test(test_kernels LABEL kernels LIBS fasim_kernels)
target_sources(test_kernels PRIVATE $<TARGET_OBJECTS:kern_bug_skip_rescale>
                                    $<TARGET_OBJECTS:kern_bug_reload_q>
                                    $<TARGET_OBJECTS:kern_bug_kv_head_modulo>)

# FA1's and FA2's backward kernels against the simulator's backward, and dQ's modes.
fasim_test(test_kernels_bwd LABEL kernels LIBS fasim_kernels)
target_sources(test_kernels_bwd PRIVATE $<TARGET_OBJECTS:kern_bug_bwd_ds_no_d>
                                        $<TARGET_OBJECTS:kern_bug_gqa_sum_descending>
                                        $<TARGET_OBJECTS:kern_bug_fa1_bwd_no_l>
                                        $<TARGET_OBJECTS:kern_bug_bwd_turn_kept>)

# Standard attention's backward kernels (Algorithm 3) against the simulator's.
fasim_test(test_kernels_naive_bwd LABEL kernels LIBS fasim_kernels)
target_sources(test_kernels_naive_bwd PRIVATE $<TARGET_OBJECTS:kern_bug_naive_bwd_d_per_tile>)

# The same three on the scalar path (FASIM_SIMD=scalar: ref_tile.h's loops, what
# a CPU without FMA3 takes): the kernels' tile-of-rows primitives and the
# simulator both go through it, and must still agree bit for bit.
foreach(t test_kernels test_kernels_bwd test_kernels_naive_bwd)
  add_test(NAME ${t}_scalar COMMAND ${t})
  set_tests_properties(${t}_scalar PROPERTIES LABELS kernels SKIP_RETURN_CODE 77
                       ENVIRONMENT "FASIM_TEST_DATA=${CMAKE_CURRENT_BINARY_DIR};FASIM_SIMD=scalar")
endforeach()

fasim_test(test_kernels_gpu LABEL gpu LIBS fasim_kernels)

# ptxas's report on kernels/kern_cuda.cu (sm_80, sm_90): no spills, and static
# plus dynamic shared memory = the plan's. Skipped (77) in a build without nvcc.
if(FASIM_HAVE_CUDA)
  fasim_test(test_ptxas LABEL kernels LIBS fasim_kernels
             ARGS ${CMAKE_CUDA_COMPILER} ${PROJECT_SOURCE_DIR}/kernels
                  ${PROJECT_SOURCE_DIR}/reference ${PROJECT_SOURCE_DIR}/sim)
  set_tests_properties(test_ptxas PROPERTIES TIMEOUT 120)
else()
  fasim_test(test_ptxas LABEL kernels LIBS fasim_kernels)
endif()
# kernels/device_check.sh --dry-run: the FlashAttention-2 paper's launches with
# the GPU model's time beside each (needs the built fasim for the model).
if(TARGET fasim)
  add_test(NAME test_device_check
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_device_check.sh ${CMAKE_BINARY_DIR}
                   ${PROJECT_SOURCE_DIR})
  set_tests_properties(test_device_check PROPERTIES LABELS kernels TIMEOUT 120)
endif()
if(TARGET fasim AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/test_gpu_cli.c)
  fasim_test(test_gpu_cli LABEL cli LIBS fasim_sim fasim_io ARGS $<TARGET_FILE:fasim>)
endif()
