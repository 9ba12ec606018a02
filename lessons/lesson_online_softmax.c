/* lesson_online_softmax.c — placeholder until the lesson is written. */
#include "lesson.h"

static void run(lesson *L)
{
    lesson_say(L, "This lesson is not written yet.");
}

const lesson_def lesson_online_softmax = {
    "online-softmax", 2, "online-softmax", "beginner", 5, "not written yet", "", run,
};
