# sum_order.gp — plots of the sum_order experiment (experiments/sum_order.c).
#
#   gnuplot -e "datadir='data'; outdir='plots'" plots/sum_order.gp      (./lab plot sum_order)
#
# Writes, each as .png (pngcairo) and .svg:
#   outdir/sum_order_bounds  one panel per order: error / sum|x| against n (log-log, uniform
#                            inputs, mean over trials) for every accumulator setting, with the
#                            order's deterministic bound gamma_k (dashed) and probabilistic
#                            bound ~lambda sqrt(k) u (dotted) in the accumulator's colour;
#   outdir/sum_order_dists   rows = settings, columns = input distributions: the relative
#                            error |result - exact| / |exact| of every order against n;
#   outdir/sum_order_perms   one panel per setting: histogram of the results of one normal
#                            vector (n = 1000) summed in R random orders, in ulps of the
#                            accumulator from the exact sum; the correctly rounded result in green.
# Orders and settings are read from the CSV metadata, so a run with --orders/--formats plots
# what it computed. Undefined points (0 on a log axis, inf = overflow, nan) are skipped.

if (!exists("datadir")) datadir = 'data'
if (!exists("outdir")) outdir = 'plots'

summary = datadir.'/sum_order_summary.csv'
perms = datadir.'/sum_order_perms.csv'
meta(file, key) = system(sprintf("sed -n 's/^# %s: //p' '%s' | head -n 1", key, file))
orders = meta(summary, 'orders')
settings = meta(summary, 'settings')
lambda = meta(summary, 'lambda')
nord = words(orders)
nset = words(settings)

set datafile separator ','
set datafile commentschars '#'
set encoding utf8

ocolors = "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf"
scolors = "#1f77b4 #2ca02c #ff7f0e #9467bd #d62728 #17becf #8c564b #7f7f7f"
ocolor(i) = word(ocolors, (i - 1) % 10 + 1)
scolor(i) = word(scolors, (i - 1) % 8 + 1)
# the bound of an accumulator: one colour per accumulator format
acccolor(s) = (s[strstrt(s, '/') + 1:] eq 'fp32') ? '#000000' : \
              (s[strstrt(s, '/') + 1:] eq 'fp16') ? '#d62728' : \
              (s[strstrt(s, '/') + 1:] eq 'bf16') ? '#ff7f0e' : '#7f7f7f'

# A row's value when it belongs to (dist, setting, order), else NaN (skipped).
pick(d, s, o, c) = (strcol('dist') eq d && strcol('setting') eq s && strcol('order') eq o) ? column(c) : NaN
pos(v) = (v > 0 && v < 1e300) ? v : NaN

set logscale xy
set format x '2^{%L}'
set format y '10^{%L}'
set grid xtics ytics lc rgb '#dddddd'

# ---- 1. each order against its bounds (uniform inputs) ----------------------------------
ncols = nord < 4 ? nord : 4
nrows = (nord + ncols - 1) / ncols
do for [term = 1:2] {
    if (term == 1) {
        set terminal pngcairo size 420 * ncols, 380 * nrows + 60 enhanced font 'Sans,10'
        set output outdir.'/sum_order_bounds.png'
    } else {
        set terminal svg size 420 * ncols, 380 * nrows + 60 enhanced font 'Sans,10' dynamic
        set output outdir.'/sum_order_bounds.svg'
    }
    set multiplot layout nrows, ncols title sprintf("Error / sum|x| against n, uniform [0,1) inputs (mean over trials). Points: measured. Bounds of each accumulator (black fp32, orange bf16, red fp16):\ndashed = deterministic {/Symbol g}_k, dotted = probabilistic ~{/Symbol l} sqrt(k) u with {/Symbol l} = %s; a bound leaves the plot where k u reaches 1", lambda) font ',12'
    set logscale x 2
    set xlabel 'n'
    set ylabel 'error / sum|x|'
    set yrange [*:10]
    set key bottom right font ',8' spacing 0.9 opaque box
    do for [o = 1:nord] {
        ord = word(orders, o)
        set title ord font ',11'
        plot for [s = 1:nset] summary using 'n':(pos(pick('uniform', word(settings, s), ord, 'mean_err_sumabs'))) \
                 with linespoints pt 7 ps 0.5 lw 1.5 lc rgb scolor(s) title word(settings, s), \
             for [s = 1:nset] summary using 'n':(pos(pick('uniform', word(settings, s), ord, 'bound_det'))) \
                 with lines dt 2 lw 1.2 lc rgb acccolor(word(settings, s)) notitle, \
             for [s = 1:nset] summary using 'n':(pos(pick('uniform', word(settings, s), ord, 'bound_prob'))) \
                 with lines dt 3 lw 1.2 lc rgb acccolor(word(settings, s)) notitle
    }
    unset multiplot
}

# ---- 2. every distribution: relative error of every order -------------------------------
dists = "uniform normal illcond llm"
do for [term = 1:2] {
    if (term == 1) {
        set terminal pngcairo size 1500, 280 * nset + 80 enhanced font 'Sans,9'
        set output outdir.'/sum_order_dists.png'
    } else {
        set terminal svg size 1500, 280 * nset + 80 enhanced font 'Sans,9' dynamic
        set output outdir.'/sum_order_dists.svg'
    }
    set multiplot layout nset, 4 title "Relative error |result - exact| / |exact| against n, per input distribution (columns) and inputs/accumulator (rows)" font ',12'
    set yrange [*:*]
    set autoscale y
    set key top left font ',7' spacing 0.8 maxrows 4
    set xlabel 'n'
    set ylabel 'relative error'
    do for [s = 1:nset] {
        do for [d = 1:4] {
            set title sprintf("%s, %s", word(dists, d), word(settings, s)) font ',10'
            if (s == 1 && d == 1) { set key } else { unset key }
            plot for [o = 1:nord] summary using 'n':(pos(pick(word(dists, d), word(settings, s), word(orders, o), 'mean_rel_err'))) \
                 with linespoints pt 7 ps 0.4 lw 1.2 lc rgb ocolor(o) title word(orders, o)
        }
    }
    unset multiplot
}

# ---- 3. permutations: histogram of results ----------------------------------------------
set logscale x 10
unset logscale
set format x '%g'
set format y '%g'
pickp(s, c) = (strcol('dist') eq 'normal' && strcol('setting') eq s) ? column(c) : NaN
pickcr(s, c, want) = (strcol('dist') eq 'normal' && strcol('setting') eq s && column('cr') == want) ? column(c) : NaN
ncols = nset < 3 ? nset : 3
nrows = (nset + ncols - 1) / ncols
do for [term = 1:2] {
    if (term == 1) {
        set terminal pngcairo size 480 * ncols, 360 * nrows + 60 enhanced font 'Sans,10'
        set output outdir.'/sum_order_perms.png'
    } else {
        set terminal svg size 480 * ncols, 360 * nrows + 60 enhanced font 'Sans,10' dynamic
        set output outdir.'/sum_order_perms.svg'
    }
    set multiplot layout nrows, ncols title "One normal vector (n = 1000) summed in random orders: how often each result occurs (x: ulps of the accumulator from the exact sum)" font ',12'
    set style fill solid 0.8 border -1
    set boxwidth 0.8
    set xlabel 'result - exact (ulps of the accumulator)'
    set ylabel 'orders giving this result'
    set yrange [0:*]
    set key top right font ',9'
    set autoscale x
    set offsets 1.5, 1.5, graph 0.2, 0 # a single bar must not fill the panel; room for the key
    do for [s = 1:nset] {
        set title word(settings, s) font ',11'
        plot perms using (pickcr(word(settings, s), 'ulps', 0)):'count' with boxes lc rgb '#1f77b4' title 'other results', \
             perms using (pickcr(word(settings, s), 'ulps', 1)):'count' with boxes lc rgb '#2ca02c' title 'correctly rounded'
    }
    unset multiplot
}
set output
