/* calc_sum.c — TEMPORARY placeholder until this subcommand lands. */
#include <stdio.h>
#include "calc.h"
int calc_sum(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "drift-calc: not built yet\n"); return 2; }
int calc_dot(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "drift-calc: not built yet\n"); return 2; }
