/* lesson_a_common_bug.c — placeholder until the lesson is written. */
#include "lesson.h"

static void run(lesson *L)
{
    lesson_say(L, "This lesson is not written yet.");
}

const lesson_def lesson_a_common_bug = {
    "a-common-bug", 5, "a-common-bug", "beginner", 5, "not written yet", "", run,
};
