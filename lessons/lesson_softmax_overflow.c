/* lesson_softmax_overflow.c — placeholder until the lesson is written. */
#include "lesson.h"

static void run(lesson *L)
{
    lesson_say(L, "This lesson is not written yet.");
}

const lesson_def lesson_softmax_overflow = {
    "softmax-overflow", 1, "softmax-overflow", "beginner", 5, "not written yet", "", run,
};
