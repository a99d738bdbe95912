/* perms_lab.h — what one run of the sum_order_perms experiment knows once its sums are in: the
 * options, the settings and orders, the classroom cases and the permutation sweep; and its
 * declared output (the two CSV tables, the Markdown fragment with its two tables and takeaway,
 * the stdout tables). */
#ifndef DRIFT_PERMS_LAB_H
#define DRIFT_PERMS_LAB_H

#include "cli.h"
#include "perm_sweep.h"
#include "sum_error.h"

typedef struct {
    const drift_cli_t *cli;
    long perms;
    const char *const *ospec; /* the orders as printed */
    int no;
    const drift_sum_setting_t *S, *SA; /* the permutations' settings; (a)'s (S with fp64 first unless present) */
    int ns, nsa;
    /* (a) classroom: case c, setting s of SA, order o */
    const char *const *case_name, *const *case_desc;
    int ncases;
    const size_t *cls_n;
    const drift_sum_err_t *cls;       /* [(c * nsa + s) * no + o] */
    const double *cls_exact, *cls_cr; /* [c * nsa + s]: exact sum rounded to double / to the accumulator */
    /* (b) permutations: [d * ns + s], vectors of perm_n values */
    const drift_sum_perm_t *P;
    int perm_n;
} drift_sum_perms_lab_t;

/* Every output file (CSV tables and the .md fragment), committed together; stdout unless --quiet. */
void drift_sum_perms_write(const drift_sum_perms_lab_t *L);

#endif
