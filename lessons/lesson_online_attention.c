/* lesson_online_attention.c — placeholder until the lesson is written. */
#include "lesson.h"

static void run(lesson *L)
{
    lesson_say(L, "This lesson is not written yet.");
}

const lesson_def lesson_online_attention = {
    "online-attention", 4, "online-attention", "beginner", 5, "not written yet", "", run,
};
