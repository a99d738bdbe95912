/* test_matrix_rows.c — test matrices drawn row by row (matrix_rows.h): linspace values by hand,
 * and the property the batch-invariance test rests on, a row independent of how many are drawn. */
#include <criterion/criterion.h>
#include <string.h>

#include "matrix_rows.h"

/* linspace(-100, 100, 6): step 200 / 5 = 40, so the 2 x 3 matrix is -100 -60 -20 / 20 60 100;
 * row 1 alone is its second row. */
Test(matrix_rows, linspace_by_hand)
{
    drift_rows_src_t lin = {DRIFT_ROWS_LINSPACE, 0, NULL, 0};
    double all[6], row1[3];
    drift_rows_fill(all, &lin, 2, 3, 0, 2);
    drift_rows_fill(row1, &lin, 2, 3, 1, 1);
    const double expect[6] = {-100, -60, -20, 20, 60, 100};
    for (int i = 0; i < 6; i++) cr_assert_eq(all[i], expect[i], "entry %d: %g", i, all[i]);
    for (int i = 0; i < 3; i++) cr_assert_eq(row1[i], expect[3 + i]);
}

/* Row 3 drawn alone is row 3 of a 5-row draw, bit for bit; every entry is an fp32 number. */
Test(matrix_rows, normal_row_does_not_depend_on_the_height)
{
    drift_rows_src_t src = {DRIFT_ROWS_NORMAL, 7, "test.A", 64};
    double all[5 * 16], row3[16];
    drift_rows_fill(all, &src, 5, 16, 0, 5);
    drift_rows_fill(row3, &src, 1000, 16, 3, 1);
    cr_assert_eq(memcmp(row3, all + 3 * 16, sizeof row3), 0);
    for (int i = 0; i < 5 * 16; i++) cr_assert_eq((double)(float)all[i], all[i], "entry %d is no fp32 number", i);
    drift_rows_src_t other = {DRIFT_ROWS_NORMAL, 7, "test.B", 64};
    double b[16];
    drift_rows_fill(b, &other, 1, 16, 3, 1);
    cr_assert_neq(memcmp(b, row3, sizeof b), 0, "another stream name must give other numbers");
}
