/* lesson_io_complexity.c — placeholder until the lesson is written. */
#include "lesson.h"

static void run(lesson *L)
{
    lesson_say(L, "This lesson is not written yet.");
}

const lesson_def lesson_io_complexity = {
    "io-complexity", 7, "io-complexity", "beginner", 5, "not written yet", "", run,
};
