/* lesson_tiling_budget.c — placeholder until the lesson is written. */
#include "lesson.h"

static void run(lesson *L)
{
    lesson_say(L, "This lesson is not written yet.");
}

const lesson_def lesson_tiling_budget = {
    "tiling-budget", 6, "tiling-budget", "beginner", 5, "not written yet", "", run,
};
