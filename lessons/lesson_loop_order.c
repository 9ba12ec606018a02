/* lesson_loop_order.c — placeholder until the lesson is written. */
#include "lesson.h"

static void run(lesson *L)
{
    lesson_say(L, "This lesson is not written yet.");
}

const lesson_def lesson_loop_order = {
    "loop-order", 8, "loop-order", "beginner", 5, "not written yet", "", run,
};
