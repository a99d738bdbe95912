# experiments/speculative/plot.gp — plots of the speculative experiment (main.c beside it).
#
#   gnuplot -e "datadir='data'; outdir='plots'" experiments/speculative/plot.gp   (./lab plot speculative)
#
# Writes outdir/speculative.{png,svg}: left, per configuration, the fraction of prompts whose
# speculatively accepted text differs from plain greedy decoding against the draft length k;
# right, per kernel policy, whether a pass of M rows gets other kernels than M = 1, against M
# (the verify passes measured on the left, M = k+1, marked as circles).

load 'plots/common.gp'

f = datadir.'/speculative_summary.csv'
p = datadir.'/speculative_plans.csv'
is_c(c) = strcol('config') eq c ? 1 : NaN
is_p(a) = strcol('policy') eq a ? 1 : NaN
cf_color(c) = c eq 'vendor-fp32' ? '#1f77b4' : c eq 'vendor-bf16' ? '#d62728' : c eq 'invariant-fp32' ? '#2ca02c' : '#9467bd'

#@ speculative alt: Speculative against plain greedy text per draft length, and kernel changes by row count
#@ speculative look: whether any line leaves zero
#@ speculative caption: A line above zero: texts parted by the verify pass; vendor-like kernels change from M = {min speculative_plans.csv M policy=vendor-like kernels_differ_from_M1=1}, beyond the longest verify pass ({max speculative_summary.csv M}).
do for [term = 1:2] {
    eval out(term, 'speculative', 1500, 1150)
    # each panel's key below it, off the data; fractions and flags from 0 (a line at 0 lies on the axis)
    set border back   # the lines at 0 drawn over the axis, not hidden by it
    set multiplot layout 1, 2 margins 0.09, 0.98, 0.30, 0.90 spacing 0.11 title 'Speculative decoding (verify pass of M = k+1 rows) against plain greedy (M = 1)'
    set xlabel 'draft length k'
    set ylabel 'fraction of prompts whose accepted text differs'
    set yrange [0:1.05]
    # where the configurations agree their lines coincide: widest first, so each stays visible
    set key at screen 0.28, 0.01 center bottom box Left reverse width -2 title 'configuration (wide to thin)'
    cw(i) = word('9 6 3.5 1.5', i) + 0
    cs = 'vendor-fp32 vendor-bf16 invariant-fp32 invariant-bf16'
    plot for [i = 1:4] f using 'k':(column('frac_differ') * is_c(word(cs, i))) with linespoints pt 7 ps (5 - i) * 0.5 lw cw(i) lc rgb cf_color(word(cs, i)) title word(cs, i)
    set xlabel 'rows M of one pass'
    set ylabel 'kernels differ from M = 1 (1 = yes)'
    set yrange [0:1.1]
    set ytics 0, 1, 1
    set key at screen 0.74, 0.01 center bottom box Left reverse width -7 title 'kernel plans'
    plot p using 'M':(column('kernels_differ_from_M1') * is_p('vendor-like')) with steps lw 5 lc rgb '#f4a6a6' title 'vendor-like (wide, under batch-invariant)', \
         p using 'M':(column('kernels_differ_from_M1') * is_p('batch-invariant')) with steps lw 2 dt 2 lc rgb '#2ca02c' title 'batch-invariant', \
         f using 'M':(0 * column('k')) with points pt 6 ps 2 lw 2 lc rgb 'black' title 'swept verify passes'
    unset multiplot
}
