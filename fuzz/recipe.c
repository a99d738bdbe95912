/* fuzz/recipe.c — the recipe grammar: parse, validate, and parse(print(r)) == r. */
#include "common.h"
#include "recipe.h"
#include "drift.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_string(data, size);
    if (!s) return 0;
    drift_recipe_t r, back;
    char why[256];
    if (drift_recipe_parse(&r, s, why, sizeof why) == DRIFT_OK) {
        char text[256];
        (void)drift_recipe_validate(
            &r, why, sizeof why); /* any code is an answer: the target looks for crashes (clang honours the cast) */
        drift_recipe_print(text, sizeof text, &r);
        if (drift_recipe_parse(&back, text, why, sizeof why) != DRIFT_OK || !drift_recipe_equal(&r, &back)) abort();
    }
    free(s);
    return 0;
}
