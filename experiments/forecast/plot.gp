# experiments/forecast/plot.gp — plot of the forecast experiment (main.c beside it).
#
#   gnuplot -e "datadir='data'; outdir='plots'" experiments/forecast/plot.gp   (./lab plot forecast)
#
# Writes outdir/forecast.{png,svg}: the reliability diagram of the held-out forecasts, every
# pair and seed pooled: per bin of the forecast P(part within T), the mean forecast against the
# share of those prompts whose text parted (Wilson 95 % interval); a forecast that is right lies
# on the diagonal.

load 'plots/common.gp'

p = datadir.'/forecast_reliability.csv'
is_all(x) = strcol('pair') eq 'all' ? x : NaN
stats p using (is_all(column('prompts'))) nooutput
NB = STATS_records

#@ forecast alt: Reliability diagram: mean forecast probability of a parting against the observed share of prompts that parted, per bin, with Wilson intervals
#@ forecast look: whether the points follow the diagonal, and how wide the bars are
#@ forecast caption: Bins of held-out forecasts, every pair and seed pooled (labels: prompts per bin); on the diagonal the forecast is right.
#@ forecast few: No held-out forecasts were made: see the table.
if (NB >= 1) {
    do for [term = 1:2] {
        eval out(term, 'forecast', 800, 700)
        set title 'SmolLM2-135M, held-out prompts: forecast P(B parts from A) against what B did'
        set xlabel 'mean forecast in the bin'
        set ylabel 'share of those prompts whose text parted'
        set xrange [0:1]
        set yrange [0:1]
        set size square
        set key top left
        plot x with lines dt 2 lc rgb '#888888' title 'perfect forecast', \
             p using (is_all(column('mean_forecast'))):(column('rate')):(column('wilson_lo')):(column('wilson_hi')) \
               with yerrorbars pt 7 ps 1.4 lw 2 lc rgb '#1f77b4' title 'held-out prompts (Wilson 95 %)', \
             p using (is_all(column('mean_forecast'))):(column('rate')):(sprintf('  %d', column('prompts'))) \
               with labels left offset 0.5,0 notitle
    }
}
