# experiments/real_gaps/plot.gp — plots of the real_gaps experiment (main.c beside it).
#
#   gnuplot -e "datadir='data'; outdir='plots'" experiments/real_gaps/plot.gp   (./lab plot real_gaps)
#
# Writes outdir/real_gaps.{png,svg}: left, the cumulative distribution of the exact top-1/top-2
# logit gaps on the model's own greedy text (log x), with each configuration's noise sigma as
# a vertical line; right, per configuration, the flips predicted by Phi(-gap/sigma) and by the
# convolved law beside the flips observed.

load 'plots/common.gp'

h = datadir.'/real_gaps_hist.csv'
f = datadir.'/real_gaps_flips.csv'
cf_color(c) = c eq 'fp32' ? '#1f77b4' : c eq 'bf16' ? '#d62728' : c eq 'fp16' ? '#2ca02c' : '#9467bd'
array CF[4] = ['fp32', 'bf16', 'fp16', 'layercast']
array SG[4]
do for [i = 1:4] {
    stats f using (strcol('config') eq CF[i] ? column('sigma') : NaN) nooutput
    SG[i] = STATS_max
}

#@ real_gaps alt: Cumulative exact top-2 gaps of SmolLM2's greedy text, and predicted against observed flips
#@ real_gaps look: where each dashed sigma line crosses the gap curve
#@ real_gaps caption: A few flips are one or two events.
do for [term = 1:2] {
    eval out(term, 'real_gaps', 1300, 900)
    set multiplot layout 1, 2 margins 0.09, 0.98, 0.15, 0.84 spacing 0.1 title "SmolLM2-135M's own greedy text: exact top-2 logit gaps and the flips they predict"
    # no key: the title names the one curve, so nothing covers it or the sigma lines
    set title "exact gaps (cumulative, black)\nand each configuration's noise sigma (dashed)"
    set xlabel "exact top-1 - top-2 logit gap (log scale;\nthe first bin holds everything below 1e-6)"
    set ylabel 'fraction of positions with a smaller gap'
    set logscale x
    set format x '10^{%L}'
    set xrange [1e-6:1e2]
    set yrange [0:1]
    unset key
    do for [i = 1:4] {
        set arrow i from SG[i], graph 0 to SG[i], graph 1 nohead dt 2 lw 1.5 lc rgb cf_color(CF[i])
        set label i CF[i].' sigma' at SG[i], graph (i == 4 ? 0.55 : 0.95) rotate by 90 right offset -0.6, 0 tc rgb cf_color(CF[i])
    }
    plot h using 'bin_hi':'cum_frac' with steps lw 2 lc rgb '#333333' notitle
    unset arrow
    unset label
    unset logscale x
    set format x '%g'
    set xrange [-0.6:3.6]
    set yrange [0:*]
    set title "flips over all positions:\npredicted and observed"
    set xlabel 'configuration'
    set ylabel 'flips over all positions'
    set style fill solid 0.8 border -1
    set boxwidth 0.25
    set offsets 0, 0, graph 0.35, 0
    set key top left box Left reverse width -4
    plot f using ($0 - 0.27):'predicted_gauss':xtic(1) with boxes lc rgb '#9ecae1' title 'predicted, Phi(-gap/sigma)', \
         f using ($0):'predicted_conv' with boxes lc rgb '#4292c6' title 'predicted, noise then output grid', \
         f using ($0 + 0.27):'observed' with boxes lc rgb '#d62728' title 'observed'
    set offsets 0, 0, 0, 0
    unset multiplot
}
