# experiments/sum_order_perms/plot.gp — plots of the sum_order_perms experiment (main.c beside it).
#
#   gnuplot -e "datadir='data'; outdir='plots'" experiments/sum_order_perms/plot.gp   (./lab plot sum_order_perms)
#
# Writes, each as .png and .svg (terminal pair and palette from plots/common.gp):
#   outdir/sum_order_perms   one panel per setting: histogram of the results of one normal
#                            vector (n = 1000) summed in R random orders, in ulps; at most
#                            three settings a figure (2 x 2, key in the free cell), the rest in
#                            sum_order_perms_more (one row when it holds one or two).
# The settings are read from the CSV metadata, so a run with --formats plots what it computed.

load 'plots/common.gp'

perms = datadir.'/sum_order_perms.csv'
meta(file, key) = system(sprintf("sed -n 's/^# %s: //p' '%s' | head -n 1", key, file))
settings = meta(perms, 'settings')
nset = words(settings)

# ---- permutations: histogram of results -------------------------------------------------
unset logscale
set format x '%g'
set format y '%g'
pickcr(s, c, want) = (strcol('dist') eq 'normal' && strcol('setting') eq s && column('cr') == want) ? column(c) : NaN
# at most three settings a figure, spread evenly over the figures (five: 3 + 2). Two panels
# in a 2 x 2 grid leave its lower half empty, so a figure of one or two settings is one row
# (half the height) with the key under it
npp = (nset + 2) / 3
per = (nset + npp - 1) / npp
#@ sum_order_perms alt: Histograms of one vector's sums over random orders, in ulps from exact
#@ sum_order_perms look: each histogram's width
#@ sum_order_perms caption: Green: the correctly rounded sum.
#@ sum_order_perms_more alt: Histograms of sums over random orders, fp16 inputs
#@ sum_order_perms_more look: the fp16 accumulator's wider spread
#@ sum_order_perms_more caption: Green: the correctly rounded sum.
do for [part = 1:npp] {
    sfirst = per * (part - 1) + 1
    slast = per * part < nset ? per * part : nset
    k = slast - sfirst + 1
do for [t = 1:2] {
    eval out(t, 'sum_order_perms'.(part == 1 ? '' : '_more'), 1300, k > 2 ? 1150 : 750)
    set style fill solid 0.8 border -1
    set boxwidth 0.8
    set xlabel 'result - exact (ulps of the accumulator)'
    set ylabel 'orders giving this result'
    set yrange [0:*]
    set key default
    if (k > 2) {
        set multiplot layout 2, 2 margins 0.09, 0.98, 0.07, 0.88 spacing 0.1, 0.14 title "One normal vector (n = 1000) summed in random orders: how often each result occurs\n(x: ulps of the accumulator from the exact sum)" font ',12'
        set key at screen 0.77, 0.25 center center box Left reverse width -2 title ''   # in the free cell, off the bars
    } else {
        set multiplot layout 1, k margins 0.09, 0.98, 0.21, 0.82 spacing 0.1 title "One normal vector (n = 1000) summed in random orders: how often each result occurs\n(x: ulps of the accumulator from the exact sum)" font ',12'
        set key at screen 0.5, 0.01 center bottom horizontal box Left reverse width -2 title ''   # under the panels, off the bars
    }
    set autoscale x
    set offsets 1.5, 1.5, graph 0.25, 0 # a single bar must not fill the panel; room above the bars
    do for [s = sfirst:slast] {
        set title word(settings, s) font ',11'
        plot perms using (pickcr(word(settings, s), 'ulps', 0)):'count' with boxes lc rgb '#1f77b4' title 'other results', \
             perms using (pickcr(word(settings, s), 'ulps', 1)):'count' with boxes lc rgb '#2ca02c' title 'correctly rounded'
    }
    unset multiplot
}
}
set output
