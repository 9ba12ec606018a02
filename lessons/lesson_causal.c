/* lesson_causal.c — placeholder until the lesson is written. */
#include "lesson.h"

static void run(lesson *L)
{
    lesson_say(L, "This lesson is not written yet.");
}

const lesson_def lesson_causal = {
    "causal", 9, "causal", "beginner", 5, "not written yet", "", run,
};
