/* test_pair_stats.c — pairwise bookkeeping (pair_stats.h): pair indices, counts and rates as
 * text, and distance summaries, on hand-counted cases. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>

#include "pair_stats.h"

Test(pair_stats, indices_counts_and_distances)
{
    /* pairs of 3 items and a reference: (0,1) (0,2) (0,3) (1,2) (1,3) (2,3) */
    cr_assert_eq(drift_pair_count(3), 6);
    int k = 0;
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j <= 3; j++) cr_assert_eq(drift_pair_index(i, j, 3), k++);
    drift_count_t c[3] = {{10, 1}, {10, 0}, {20, 3}};
    drift_count_t all;
    char buf[128];
    drift_counts_text(buf, sizeof buf, c, 3, 1, &all);
    cr_assert_str_eq(buf, "1/10, 0/10, 3/20");
    cr_assert(all.n == 40 && all.k == 4);
    drift_rate_text(buf, sizeof buf, 0, 0);
    cr_assert_str_eq(buf, "0/0");
    int64_t u[5] = {3, 0, 0, 7, 1};
    drift_distance_summary_t s;
    cr_assert_eq(drift_distance_summary(&s, u, NULL, 5), 0);
    cr_assert(s.same == 2 && s.median == 1 && s.p99 == 7 && s.max == 7 && isnan(s.d_max));
}
