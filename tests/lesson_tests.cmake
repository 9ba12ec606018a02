# Tests of the lesson engine and lessons 1-5 (softmax-overflow, online-softmax,
# merge, online-attention, a-common-bug).
#   test_lesson_engine: the engine in process (options, steps, answers, going
#     back, quitting, wrapping, a pseudo-terminal).
#   test_lessons_1_5: argv = the fasim binary and the folder of golden --script
#     outputs; golden files, random inputs against reference/, piped answers,
#     bad input through the binary.
fasim_test(test_lesson_engine LABEL lesson LIBS fasim_lessons)
fasim_test(test_lessons_1_5 LABEL lesson LIBS fasim_lessons
           ARGS $<TARGET_FILE:fasim> ${CMAKE_CURRENT_SOURCE_DIR}/golden)
