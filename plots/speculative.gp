# speculative.gp — plots of the speculative experiment (experiments/speculative.c).
#
#   gnuplot -e "datadir='data'; outdir='plots'" plots/speculative.gp   (./lab plot speculative)
#
# Writes outdir/speculative.{png,svg}: left, per configuration, the fraction of prompts whose
# speculatively accepted text differs from plain greedy decoding against the draft length k;
# right, per kernel policy, whether a pass of M rows gets other kernels than M = 1, against M
# (the verify passes measured on the left have M = k+1).

load 'plots/common.gp'

f = datadir.'/speculative_summary.csv'
p = datadir.'/speculative_plans.csv'
is_c(c) = strcol('config') eq c ? 1 : NaN
is_p(a) = strcol('policy') eq a ? 1 : NaN
cf_color(c) = c eq 'vendor-fp32' ? '#1f77b4' : c eq 'vendor-bf16' ? '#d62728' : c eq 'invariant-fp32' ? '#2ca02c' : '#9467bd'

#@ speculative alt: Fraction of prompts whose speculative-decoding text differs from plain greedy per draft length, and when a verify pass changes kernels
#@ speculative look: whether any configuration differs from plain greedy, and from which row count the kernels change
#@ speculative caption: Left: the lines lie on one another. Right: vendor-like changes kernels only from a second tile of rows on; batch-invariant never.
do for [term = 1:2] {
    eval out(term, 'speculative', 1300, 520)
    set multiplot layout 1, 2 title 'Speculative decoding (verify pass of M = k+1 rows) against plain greedy (M = 1)'
    set xlabel 'draft length k'
    set ylabel 'fraction of prompts whose accepted text differs'
    set yrange [-0.05:1.05]
    set key top left box opaque
    plot for [c in 'vendor-fp32 vendor-bf16 invariant-fp32 invariant-bf16'] f using 'k':(column('frac_differ') * is_c(c)) with linespoints pt 7 ps 1.2 lw 2 lc rgb cf_color(c) title c
    set xlabel 'rows M of one pass'
    set ylabel 'kernels differ from M = 1 (1 = yes)'
    set yrange [-0.1:1.1]
    set ytics 0, 1, 1
    set key center left box opaque
    plot p using 'M':(column('kernels_differ_from_M1') * is_p('vendor-like')) with steps lw 2 lc rgb '#d62728' title 'vendor-like', \
         p using 'M':(column('kernels_differ_from_M1') * is_p('batch-invariant')) with steps lw 2 dt 2 lc rgb '#2ca02c' title 'batch-invariant'
    unset multiplot
}
