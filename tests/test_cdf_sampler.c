/* test_cdf_sampler.c — the plain inverse-CDF sampler (lib/llm/sampler.h) and GEMM kernel lists
 * (experiments/matmul_drift/kernel_list.h). Expected values derived by hand next to each case. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "drift.h"
#include "kernel_list.h"
#include "sampler.h"

Test(cdf_sampler, order_argmax_and_ties)
{
    const double l[] = {1, 3, 2, 3, -1};
    size_t order[5], scratch[5];
    drift_cdf_order(order, scratch, l, 5);
    /* decreasing logit, equal logits by increasing id: 1 and 3 (tied at 3), 2, 0, 4 */
    const size_t want[] = {1, 3, 2, 0, 4};
    for (int i = 0; i < 5; i++) cr_assert_eq(order[i], want[i]);
    cr_assert_eq(drift_cdf_argmax(l, 5), 1, "the lowest id among equal maxima");
}

Test(cdf_sampler, cuts_and_the_inverse_cdf)
{
    /* logits ln 4, ln 2, ln 1, ln 1 at T = 1: weights relative to the max 1, 1/2, 1/4, 1/4
     * (exp of exact differences of logs: within an ulp), sum 2 */
    const double l[] = {log(4), log(2), 0, 0};
    size_t order[4], scratch[4];
    drift_cdf_order(order, scratch, l, 4);
    double w[4];
    const drift_sampler_t plain = drift_sampler_default(DRIFT_SAMPLER_PLAIN); /* T = 1 */
    drift_sampler_t full = plain, topk = plain, topp = plain;
    topk.cut = DRIFT_CUT_TOPK, topk.top_k = 2;
    topp.cut = DRIFT_CUT_TOPP, topp.top_p = 0.7;
    double sum = drift_cdf_weights(w, l, order, 4, &full);
    cr_assert(fabs(sum - 2) < 1e-15, "sum %a", sum); /* a few roundings of exp and log */
    /* u = 0.6: u * sum = 1.2; running sums 1, 1.5: token 1 */
    cr_assert_eq(drift_cdf_draw(w, 4, sum, 0.6), 1);
    cr_assert_eq(drift_cdf_draw(w, 4, sum, 0.1), 0);
    sum = drift_cdf_weights(w, l, order, 4, &topk); /* tokens 0 and 1 only */
    cr_assert(w[2] == 0 && w[3] == 0 && fabs(sum - 1.5) < 1e-15);
    cr_assert_eq(drift_cdf_draw(w, 4, sum, 0.999), 1, "the last candidate, not token 3");
    /* top-p 0.7: running 1 (0.5 of 2), 1.5 (0.75 >= 0.7): tokens 0 and 1 */
    sum = drift_cdf_weights(w, l, order, 4, &topp);
    cr_assert(w[2] == 0 && w[3] == 0 && fabs(sum - 1.5) < 1e-15);
    cr_assert_str_eq(drift_sampler_name(&topp), "top-p");
}

Test(kernel_list, tiled_specs_keep_their_commas)
{
    drift_gemm_kernel_t k[4];
    char names[4][DRIFT_GEMM_KERNEL_SPEC_MAX], err[256];
    cr_assert_eq(drift_kernel_list_parse(k, names, 4, "naive,tiled:128,64,32,tc:h100", err, sizeof err), 3);
    cr_assert_str_eq(names[0], "naive");
    cr_assert_str_eq(names[1], "tiled:128,64,32");
    cr_assert_str_eq(names[2], "tc:h100");
    cr_assert_eq(drift_kernel_list_parse(k, names, 4, "naive,naive", err, sizeof err), DRIFT_EINVAL);
    cr_assert(strstr(err, "given twice"), "%s", err);
    cr_assert_eq(drift_kernel_list_parse(k, names, 4, "naive,", err, sizeof err), DRIFT_EINVAL);
    cr_assert_eq(
        drift_kernel_list_parse(k, names, 1, "naive,splitk:4", err, sizeof err), DRIFT_EINVAL, "more than max");
    cr_assert_eq(drift_kernel_list_parse(k, names, 4, "bogus", err, sizeof err), DRIFT_EINVAL);
}
