/* test_recipe.c — the recipe (recipe.h) and its dispatcher (dispatch.h): the grammar read and
 * written, the validator's refusals and their messages, and each path of the dispatcher on
 * inputs whose results are derived by hand next to each case (not by the code under test). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "dispatch.h"
#include "drift.h"
#include "recipe.h"

/* ---- the grammar ----------------------------------------------------------------------- */

typedef struct {
    const char *spec;
    drift_format_t in;
    const char *order; /* NULL: exact */
    drift_format_t acc;
    drift_mode_t mode;
    int fma;
    drift_format_t out;
} canon_t;

static const canon_t CANON[] = {
    {"bf16/tc:h100/fp32/bf16", DRIFT_BF16, "tc:h100", DRIFT_FP32, DRIFT_RNE, 1, DRIFT_BF16},
    {"fp16/tc:v100/fp16/fp16", DRIFT_FP16, "tc:v100", DRIFT_FP16, DRIFT_RNE, 1, DRIFT_FP16},
    {"fp32/seq/fp32/fp32", DRIFT_FP32, "seq", DRIFT_FP32, DRIFT_RNE, 1, DRIFT_FP32},
    {"fp16/seq/fp32:nofma/fp32", DRIFT_FP16, "seq", DRIFT_FP32, DRIFT_RNE, 0, DRIFT_FP32},
    {"fp32/pairwise/fp16:rz/fp16", DRIFT_FP32, "pairwise", DRIFT_FP16, DRIFT_RZ, 1, DRIFT_FP16},
    {"bf16/splitk:8:tree/fp32:rd:nofma/bf16", DRIFT_BF16, "splitk:8:tree", DRIFT_FP32, DRIFT_RD, 0, DRIFT_BF16},
    {"fp8e4m3/blocked:64/fp32:rna/fp64", DRIFT_FP8E4M3, "blocked:64", DRIFT_FP32, DRIFT_RNA, 1, DRIFT_FP64},
    {"bf16/exact/-/fp32", DRIFT_BF16, NULL, DRIFT_FP32, DRIFT_RNE, 1, DRIFT_FP32},
};

Test(recipe, canonical_specs_parse_to_their_fields_and_print_back)
{
    for (size_t i = 0; i < sizeof CANON / sizeof CANON[0]; i++) {
        const canon_t *c = &CANON[i];
        drift_recipe_t r;
        char why[160], buf[DRIFT_RECIPE_SPEC_MAX];
        cr_assert_eq(drift_recipe_parse(&r, c->spec, why, sizeof why), DRIFT_OK, "%s: %s", c->spec, why);
        cr_assert_eq(r.in, c->in, "%s", c->spec);
        cr_assert_eq(r.out, c->out, "%s", c->spec);
        cr_assert_eq(r.exact, c->order == NULL, "%s", c->spec);
        if (c->order) {
            drift_order_t o;
            cr_assert_eq(drift_order_parse(&o, c->order), DRIFT_OK);
            cr_assert(drift_order_equal(&o, &r.order), "%s", c->spec);
            cr_assert_eq(r.acc.acc, c->acc, "%s", c->spec);
            cr_assert_eq(r.acc.mode, c->mode, "%s", c->spec);
            cr_assert_eq(r.acc.fma, c->fma, "%s", c->spec);
        }
        cr_assert_gt(drift_recipe_print(buf, sizeof buf, &r), 0);
        cr_assert_str_eq(buf, c->spec);
    }
}

Test(recipe, constructors_print_as_documented)
{
    drift_order_t o;
    char buf[DRIFT_RECIPE_SPEC_MAX];
    cr_assert_eq(drift_order_parse(&o, "tc:h100"), 0);
    drift_recipe_t r = drift_recipe(DRIFT_BF16, &o, DRIFT_FP32, DRIFT_BF16);
    drift_recipe_print(buf, sizeof buf, &r);
    cr_assert_str_eq(buf, "bf16/tc:h100/fp32/bf16");
    r = drift_recipe_exact(DRIFT_FP16, DRIFT_FP32);
    drift_recipe_print(buf, sizeof buf, &r);
    cr_assert_str_eq(buf, "fp16/exact/-/fp32");
    cr_assert_eq(drift_recipe_print(buf, 8, &r), DRIFT_EINVAL); /* does not fit */
}

typedef struct {
    const char *spec;
    const char *why; /* a word the message must hold: it names what is wrong */
} bad_t;

static const bad_t BAD[] = {
    {"", "fewer than 4 fields"},
    {"bf16/seq/fp32", "fewer than 4 fields"},
    {"bf16/seq/fp32/bf16/x", "more than 4 fields"},
    {"bf17/seq/fp32/bf16", "input format 'bf17'"},
    {"bf16/seq/fp32/bf17", "output format 'bf17'"},
    {"bf16/sequential/fp32/bf16", "order 'sequential'"},
    {"bf16/blocked:0/fp32/bf16", "order 'blocked:0'"},
    {"bf16/seq/fp31/bf16", "accumulator 'fp31'"},
    {"bf16/seq/fp32:sr/bf16", "modifier 'sr'"},
    {"bf16/seq/fp32:rne/bf16", "modifier 'rne'"},     /* rne is the default and never written */
    {"bf16/seq/fp32:nofma:rz/bf16", "modifier 'rz'"}, /* out of order: not canonical */
    {"bf16/seq/fp32:nofma:nofma/bf16", "modifier 'nofma'"},
    {"bf16/tc:h100/fp32:nofma/bf16", "fixes its rounding"},
    {"bf16/tc:h100/bf16/bf16", "fp32 or fp16 only"},
    {"bf16/exact/fp32/fp32", "an exact recipe has none"},
    {"bf17/seq/fp32/bf16", "input format 'bf17'"},
};

/* Format names are case-insensitive and take PyTorch's aliases (the command-line convention);
 * the recipe then prints its canonical spelling, so the data never show the alias. */
Test(recipe, format_aliases_parse_to_the_canonical_recipe)
{
    drift_recipe_t a, b;
    char why[200], buf[DRIFT_RECIPE_SPEC_MAX];
    cr_assert_eq(drift_recipe_parse(&a, "bf16/seq/fp32/bf16", why, sizeof why), 0, "%s", why);
    cr_assert_eq(drift_recipe_parse(&b, "BF16/seq/float32/bfloat16", why, sizeof why), 0, "%s", why);
    cr_assert(drift_recipe_equal(&a, &b));
    cr_assert_gt(drift_recipe_print(buf, sizeof buf, &b), 0);
    cr_assert_str_eq(buf, "bf16/seq/fp32/bf16");
}

Test(recipe, malformed_specs_are_refused_with_the_field_named)
{
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        drift_recipe_t r;
        memset(&r, 0x5a, sizeof r);
        drift_recipe_t before = r;
        char why[200];
        cr_assert_eq(drift_recipe_parse(&r, BAD[i].spec, why, sizeof why), DRIFT_EINVAL, "'%s'", BAD[i].spec);
        cr_assert(strstr(why, BAD[i].why) != NULL, "'%s': message '%s' lacks '%s'", BAD[i].spec, why, BAD[i].why);
        cr_assert(memcmp(&r, &before, sizeof r) == 0, "'%s': the recipe was changed on error", BAD[i].spec);
    }
}

Test(recipe, validator_and_check_name_what_is_wrong)
{
    char why[200];
    drift_order_t seq, v100;
    cr_assert_eq(drift_order_parse(&seq, "seq"), 0);
    cr_assert_eq(drift_order_parse(&v100, "tc:v100"), 0);
    drift_recipe_t r = drift_recipe(DRIFT_FP32, &seq, DRIFT_FP32, DRIFT_FP32);
    cr_assert_eq(drift_recipe_validate(&r, why, sizeof why), DRIFT_OK);
    r.acc.mode = DRIFT_SR;
    cr_assert_eq(drift_recipe_validate(&r, why, sizeof why), DRIFT_EUNSUPPORTED);
    cr_assert(strstr(why, "sr") != NULL, "%s", why);
    r = drift_recipe(DRIFT_FP32, &seq, DRIFT_NFORMATS, DRIFT_FP32);
    cr_assert_eq(drift_recipe_validate(&r, why, sizeof why), DRIFT_EINVAL);
    cr_assert(strstr(why, "accumulator") != NULL, "%s", why);
    /* V100 tensor cores take fp16 only (Fasi et al. 2021, sec. 4): the structure is valid, the
     * path does not exist. */
    r = drift_recipe(DRIFT_BF16, &v100, DRIFT_FP32, DRIFT_FP32);
    cr_assert_eq(drift_recipe_validate(&r, why, sizeof why), DRIFT_OK);
    cr_assert_eq(drift_recipe_check(&r, why, sizeof why), DRIFT_EUNSUPPORTED);
    cr_assert_str_eq(why, "tc:v100 has no tensor-core path for bf16 inputs");
    r.in = DRIFT_FP16;
    cr_assert_eq(drift_recipe_check(&r, why, sizeof why), DRIFT_OK);
}

Test(recipe, equality_ignores_what_the_recipe_ignores)
{
    drift_recipe_t a, b;
    cr_assert_eq(drift_recipe_parse(&a, "bf16/tc:h100/fp32/bf16", NULL, 0), 0);
    b = a;
    b.acc.fma = 0; /* the tensor-core model fixes fma and mode: the same computation */
    b.acc.mode = DRIFT_RZ;
    cr_assert(drift_recipe_equal(&a, &b));
    b.out = DRIFT_FP32;
    cr_assert(!drift_recipe_equal(&a, &b));
    cr_assert(drift_recipe_same_acc(&a, &b)); /* only the output rounding differs */
    cr_assert_eq(drift_recipe_parse(&a, "fp32/seq/fp32/fp32", NULL, 0), 0);
    cr_assert_eq(drift_recipe_parse(&b, "fp32/seq/fp32:nofma/fp32", NULL, 0), 0);
    cr_assert(!drift_recipe_same_acc(&a, &b));
}

/* ---- the dispatcher -------------------------------------------------------------------- */

/* a = (1, 3 * 2^-24), b = (1, 1); 3 * 2^-24 is an fp16 subnormal (3 units of 2^-24), so both
 * are values of fp16 and fp32. The exact dot product is 1 + 1.5 * 2^-23.
 *  - seq, fp32 accumulator: 1 + 1.5 ulp(1) lies halfway between 1 + 2^-23 (odd significand)
 *    and 1 + 2^-22 (even): nearest-even gives 1 + 2^-22. nofma changes nothing (the product
 *    3 * 2^-24 is exact in fp32).
 *  - rz accumulator: toward zero, 1 + 2^-23.
 *  - tc:v100 (block 4, no extra alignment bits; Fasi et al. 2021): the largest exponent is 0,
 *    every term is truncated to a multiple of 2^-23: 3 * 2^-24 -> 2^-23; the sum 1 + 2^-23
 *    is exact in fp32.
 *  - exact to fp32: the same halfway case as seq, 1 + 2^-22; exact to bf16 (8 bits): 1.
 *  - stored in bf16 (RNE) after seq: 1 + 2^-22 is far below half an ulp of bf16 (2^-8): 1. */
static const double A2[] = {1, 0x3p-24}, B2[] = {1, 1};

typedef struct {
    const char *spec;
    double expect;
} dot_case_t;

static const dot_case_t DOTS[] = {
    {"fp16/seq/fp32/fp32", 1 + 0x1p-22},
    {"fp16/seq/fp32:nofma/fp32", 1 + 0x1p-22},
    {"fp16/seq/fp32:rz/fp32", 1 + 0x1p-23},
    {"fp16/tc:v100/fp32/fp32", 1 + 0x1p-23},
    {"fp16/exact/-/fp32", 1 + 0x1p-22},
    {"fp16/exact/-/bf16", 1},
    {"fp16/seq/fp32/bf16", 1},
};

Test(dispatch, dot_follows_each_path)
{
    for (size_t i = 0; i < sizeof DOTS / sizeof DOTS[0]; i++) {
        drift_recipe_t r;
        double y = -1;
        cr_assert_eq(drift_recipe_parse(&r, DOTS[i].spec, NULL, 0), DRIFT_OK, "%s", DOTS[i].spec);
        cr_assert_eq(drift_recipe_dot(&y, A2, B2, 2, NULL, &r), DRIFT_OK, "%s", DOTS[i].spec);
        cr_assert_eq(y, DOTS[i].expect, "%s: %a, expected %a", DOTS[i].spec, y, DOTS[i].expect);
    }
}

Test(dispatch, sum_follows_each_path_and_refuses_a_tensor_core)
{
    /* x = (1, 2^-24, 2^-24) in fp32: seq adds 2^-24 to 1 twice, each a tie that goes to the
     * even 1; pairwise adds 1 + (2^-24 + 2^-24) = 1 + 2^-23 exactly; exact: 1 + 2^-23. */
    const double x[] = {1, 0x1p-24, 0x1p-24};
    drift_recipe_t r;
    double y;
    cr_assert_eq(drift_recipe_parse(&r, "fp32/seq/fp32/fp32", NULL, 0), 0);
    cr_assert_eq(drift_recipe_sum(&y, x, 3, &r), DRIFT_OK);
    cr_assert_eq(y, 1.0);
    cr_assert_eq(drift_recipe_parse(&r, "fp32/rev/fp32/fp32", NULL, 0), 0); /* (2^-24 + 2^-24) + 1 */
    cr_assert_eq(drift_recipe_sum(&y, x, 3, &r), DRIFT_OK);
    cr_assert_eq(y, 1 + 0x1p-23);
    cr_assert_eq(drift_recipe_parse(&r, "fp32/exact/-/fp32", NULL, 0), 0);
    cr_assert_eq(drift_recipe_sum(&y, x, 3, &r), DRIFT_OK);
    cr_assert_eq(y, 1 + 0x1p-23);
    cr_assert_eq(drift_recipe_parse(&r, "fp16/tc:h100/fp32/fp32", NULL, 0), 0);
    cr_assert_eq(drift_recipe_sum(&y, x, 3, &r), DRIFT_EUNSUPPORTED);
    cr_assert_eq(drift_recipe_parse(&r, "bf16/tc:v100/fp32/fp32", NULL, 0), 0);
    cr_assert_eq(drift_recipe_dot(&y, A2, B2, 2, NULL, &r), DRIFT_EUNSUPPORTED);
}

Test(dispatch, gemm_kernels_are_built_from_the_recipe)
{
    drift_recipe_t r;
    drift_gemm_kernel_t k;
    cr_assert_eq(drift_recipe_parse(&r, "bf16/seq/fp32/fp32", NULL, 0), 0);
    cr_assert_eq(drift_recipe_gemm_kernel(&k, &r), DRIFT_OK);
    cr_assert_eq(k.family, DRIFT_GEMM_NAIVE);
    cr_assert_eq(drift_recipe_parse(&r, "bf16/splitk:4:tree/fp32/fp32", NULL, 0), 0);
    cr_assert_eq(drift_recipe_gemm_kernel(&k, &r), DRIFT_OK);
    cr_assert(k.family == DRIFT_GEMM_SPLITK && k.splits == 4 && k.tree == 1);
    cr_assert_eq(drift_recipe_parse(&r, "bf16/tc:a100/fp32/fp32", NULL, 0), 0);
    cr_assert_eq(drift_recipe_gemm_kernel(&k, &r), DRIFT_OK);
    cr_assert(k.family == DRIFT_GEMM_TC && k.arch == DRIFT_TC_A100);
    cr_assert_eq(drift_recipe_parse(&r, "bf16/pairwise/fp32/fp32", NULL, 0), 0);
    cr_assert_eq(drift_recipe_gemm_kernel(&k, &r), DRIFT_EUNSUPPORTED);
    cr_assert_eq(drift_recipe_parse(&r, "bf16/exact/-/fp32", NULL, 0), 0);
    cr_assert_eq(drift_recipe_gemm_kernel(&k, &r), DRIFT_EUNSUPPORTED);
}

Test(dispatch, gemm_gives_the_hand_derived_products)
{
    /* C (1 x 2) = A (1 x 2) B (2 x 2) with A = (1, 3 * 2^-24), B = [[1, 1], [1, 0]]: output 0
     * is the dot case above, output 1 is 1 * 1 + 3 * 2^-24 * 0 = 1. */
    const double B[] = {1, 1, 1, 0};
    double C[2];
    drift_recipe_t r;
    cr_assert_eq(drift_recipe_parse(&r, "fp16/tc:v100/fp32/fp32", NULL, 0), 0);
    cr_assert_eq(drift_recipe_gemm(C, A2, B, 1, 2, 2, &r, 1, 0), DRIFT_OK);
    cr_assert(C[0] == 1 + 0x1p-23 && C[1] == 1, "%a %a", C[0], C[1]);
    cr_assert_eq(drift_recipe_parse(&r, "fp16/seq/fp32/fp32", NULL, 0), 0);
    cr_assert_eq(drift_recipe_gemm(C, A2, B, 1, 2, 2, &r, 1, 0), DRIFT_OK);
    cr_assert(C[0] == 1 + 0x1p-22 && C[1] == 1, "%a %a", C[0], C[1]);
    cr_assert_eq(drift_recipe_parse(&r, "fp16/exact/-/fp32", NULL, 0), 0); /* the exact dot case above, 1 + 2^-22 */
    cr_assert_eq(drift_recipe_gemm(C, A2, B, 1, 2, 2, &r, 1, 0), DRIFT_OK);
    cr_assert(C[0] == 1 + 0x1p-22 && C[1] == 1, "%a %a", C[0], C[1]);
    cr_assert_eq(drift_recipe_gemm(C, A2, B, 1, 2, 2, &r, 2, 0), DRIFT_EUNSUPPORTED); /* no epilogue */
}
