# Tests of the lesson engine and the lessons.
#   test_lesson_engine: the engine in process (options, steps, answers, going
#     back, quitting, wrapping, a pseudo-terminal).
#   test_lessons_softmax: lessons 1-5, the softmax and its online form
#     (softmax-overflow, online-softmax, merge, online-attention,
#     a-common-bug); golden files, random inputs against reference/, piped
#     answers, bad input through the binary.
#   test_lessons_io: lessons 6-9, the IO argument (tiling-budget,
#     io-complexity, loop-order, causal); golden files, random inputs against
#     closed forms written out in the test, bad input.
# argv of the last two: the fasim binary, and the folder of golden --script outputs.
fasim_test(test_lesson_engine LABEL lesson LIBS fasim_lessons)
fasim_test(test_lessons_softmax LABEL lesson LIBS fasim_lessons
           ARGS $<TARGET_FILE:fasim> ${CMAKE_CURRENT_SOURCE_DIR}/golden)
fasim_test(test_lessons_io LABEL lesson LIBS fasim_lessons
           ARGS $<TARGET_FILE:fasim> ${CMAKE_CURRENT_SOURCE_DIR}/golden)
