/* calc.h — the probe calculator's subcommands, one file each. */
#ifndef DRIFT_CALC_H
#define DRIFT_CALC_H

int calc_round(int argc, char **argv);    /* calc_round.c */
int calc_sum(int argc, char **argv);      /* calc_sum.c */
int calc_dot(int argc, char **argv);      /* calc_sum.c */
int calc_exact(int argc, char **argv);    /* calc_exact.c */
int calc_argmax(int argc, char **argv);   /* calc_argmax.c */
int calc_env(int argc, char **argv);      /* calc_env.c */
int calc_gaps(int argc, char **argv);     /* calc_gaps.c */
int calc_errlaw(int argc, char **argv);   /* calc_errlaw.c */
int calc_cards(int argc, char **argv);    /* calc_cards.c */
int calc_forecast(int argc, char **argv); /* calc_forecast.c */

#endif
