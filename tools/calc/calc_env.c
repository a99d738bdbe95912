/* calc_env.c — TEMPORARY placeholder until this subcommand lands. */
#include <stdio.h>
#include "calc.h"
int calc_env(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "drift-calc: not built yet\n"); return 2; }
