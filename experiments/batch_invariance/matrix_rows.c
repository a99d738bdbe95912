/* matrix_rows.c — test matrices drawn row by row (matrix_rows.h). */
#include "matrix_rows.h"
#include "format.h"
#include "philox.h"

/* linspace(lo, hi, n)[t] as torch computes it for doubles: lo + t * ((hi - lo) / (n - 1)). */
static double linspace_at(double lo, double hi, size_t n, size_t t)
{
    return n < 2 ? lo : lo + (double)t * ((hi - lo) / (double)(n - 1));
}

void drift_rows_fill(
    double *x, const drift_rows_src_t *src, size_t rows_total, size_t cols, size_t first_row, size_t nrows)
{
    for (size_t r = first_row; r < first_row + nrows; r++) {
        double *row = x + (r - first_row) * cols;
        if (src->kind == DRIFT_ROWS_LINSPACE) {
            for (size_t c = 0; c < cols; c++) row[c] = linspace_at(-100, 100, rows_total * cols, r * cols + c);
            continue;
        }
        drift_stream_t s;
        drift_stream_init(&s, src->seed, drift_fnv1a32(src->name), src->key, (uint32_t)r);
        for (size_t c = 0; c < cols; c++) row[c] = drift_rne(drift_stream_normal(&s), DRIFT_FP32);
    }
}
