# Tests of lessons 6-9 (tiling-budget, io-complexity, loop-order, causal).
# argv: the fasim binary, and the folder of golden --script outputs.
fasim_test(test_lessons_6_9 LABEL lesson LIBS fasim_lessons
           ARGS $<TARGET_FILE:fasim> ${CMAKE_CURRENT_SOURCE_DIR}/golden)
