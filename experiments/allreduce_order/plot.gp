# experiments/allreduce_order/plot.gp — plots of the allreduce_order experiment (main.c beside it).
#
#   gnuplot -e "datadir='data'; outdir='plots'" experiments/allreduce_order/plot.gp   (./lab plot allreduce_order)
#
# Writes outdir/allreduce_order.{png,svg} (points: the rows of other orders sit between, so no lines): left, the fraction of elements whose all-reduced
# result differs from rank order, against the rank count P, for tree and ring; right, the
# largest and rms error against the exact sum (divided by sum |p_r|), per order.

load 'plots/common.gp'

f = datadir.'/allreduce_order.csv'
is_ar(a) = strcol('allreduce') eq a ? 1 : NaN
ar_color(a) = a eq 'rank' ? '#1f77b4' : a eq 'tree' ? '#2ca02c' : '#d62728'
# orders often give the same value: each is drawn smaller than the one before, so coinciding
# points show as concentric markers
ar_ps(a) = a eq 'rank' ? 2.1 : a eq 'tree' ? 1.55 : 1.0
stats f using 'P' nooutput
P_hi = STATS_max

#@ allreduce_order alt: Changed elements and error of all-reduced fp32 sums against rank count P
#@ allreduce_order look: the changed fraction rising while errors stay a few ulps
#@ allreduce_order caption: Filled: largest error; open: RMS.
do for [term = 1:2] {
    eval out(term, 'allreduce_order', 1300, 760)
    set multiplot layout 1, 2 margins 0.09, 0.98, 0.12, 0.86 spacing 0.11 \
        title "The same fp32 partial sums all-reduced by P ranks in three orders\n(orders that agree: concentric markers)"
    set xlabel 'ranks P'
    set xrange [1.5:P_hi + 0.5]
    set xtics 2
    set ylabel 'fraction of elements unlike rank order'
    set yrange [0:1]
    set key top left box opaque
    plot for [a in 'tree ring'] f using 'P':(column('frac_differs_from_rank') * is_ar(a)) with points pt 7 ps ar_ps(a) lc rgb ar_color(a) title a
    set ylabel 'error / sum |p_r| vs exact sum (log scale)'
    set logscale y
    set format y '10^{%L}'
    set yrange [*:*]
    set key top left box opaque maxrows 3
    plot for [a in 'rank tree ring'] f using 'P':(column('max_err') * is_ar(a)) with points pt 7 ps ar_ps(a) lc rgb ar_color(a) title a.' (max)', \
         for [a in 'rank tree ring'] f using 'P':(column('rms_err') * is_ar(a)) with points pt 6 ps ar_ps(a) lc rgb ar_color(a) title a.' (rms)'
    unset logscale y
    set format y '%g'
    unset multiplot
}
