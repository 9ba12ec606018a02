/* lesson_merge.c — placeholder until the lesson is written. */
#include "lesson.h"

static void run(lesson *L)
{
    lesson_say(L, "This lesson is not written yet.");
}

const lesson_def lesson_merge = {
    "merge", 3, "merge", "beginner", 5, "not written yet", "", run,
};
