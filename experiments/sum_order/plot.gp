# experiments/sum_order/plot.gp — plots of the sum_order experiment (main.c beside it).
#
#   gnuplot -e "datadir='data'; outdir='plots'" experiments/sum_order/plot.gp      (./lab plot sum_order)
#
# Writes, each as .png and .svg (terminal pair and palette from plots/common.gp):
#   outdir/sum_order_bounds  one panel per order: error / sum|x| against n (log-log, uniform
#                            inputs, mean over trials) per inputs/accumulator setting, with the
#                            deterministic bound gamma_k (dashed) and the probabilistic bound
#                            ~lambda sqrt(k) u (dotted) in the accumulator's format colour;
#                            all panels share one y range and one key; four orders a figure
#                            (2 x 2, key right), the rest in sum_order_bounds_more (three: key
#                            in the free cell; one or two: one row).
#   outdir/sum_order_dists   rows = settings, columns = input distributions: relative error of
#                            every order against n; one y range per column, one shared key.
# (sum_order_perms draws the permutation histograms.)
# A log axis cannot show 0 or inf: an error of exactly 0 is drawn as an open triangle on the
# floor of the panel, an overflow (inf or NaN result) as a cross on its ceiling, a row per
# series (order or setting) that has such markers, so that coinciding ones stay visible.
# Orders and settings are read from the CSV metadata, so a run with --orders/--formats plots
# what it computed.

load 'plots/common.gp'

summary = datadir.'/sum_order_summary.csv'
meta(file, key) = system(sprintf("sed -n 's/^# %s: //p' '%s' | head -n 1", key, file))
orders = meta(summary, 'orders')
settings = meta(summary, 'settings')
lambda = meta(summary, 'lambda')
nord = words(orders)
nset = words(settings)

ocolors = "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf"
ocolor(i) = word(ocolors, (i - 1) % 10 + 1)
opt(i) = word("7 5 9 11 13 4 6 8 10 12", (i - 1) % 10 + 1) + 0
# a setting "in/acc" is coloured by its input format; dash = accumulator is narrower than fp32
s_in(s) = s[1:strstrt(s, '/') - 1]
s_acc(s) = s[strstrt(s, '/') + 1:]
acc_dt(s) = s_acc(s) eq 'fp32' ? 1 : 4

pick(d, s, o, c) = (strcol('dist') eq d && strcol('setting') eq s && strcol('order') eq o) ? column(c) : NaN
pos(v) = (v > 0 && v < 1e300) ? v : NaN
is_row(d, s, o) = strcol('dist') eq d && strcol('setting') eq s && strcol('order') eq o
zero_at(d, s, o, c, floor) = (is_row(d, s, o) && column(c) == 0) ? floor : NaN
bad(c) = strcol(c) eq 'inf' || strcol(c) eq 'nan' || strcol(c) eq '-nan' || strcol(c) eq '-inf'
over_at(d, s, o, c, ceil) = (is_row(d, s, o) && bad(c)) ? ceil : NaN

# Marker rows. Exact zeros (or overflows) of several series at one n would sit on one spot of
# the floor (ceiling), the last drawn hiding the others; so each series with any such marker
# in a panel column gets a row of its own, in key order (the first nearest the frame), in a
# band below (above) the data: marked(dist, key, val, kind) lists the values of column key
# (order or setting) with a zero (kind 'zero') or an inf/NaN (kind 'bad') in column val, in
# their first-seen order; rowof(list, name) is a name's row, 0 when it has none.
marked(dist, key, val, kind) = system(sprintf("awk -F, -v d='%s' -v k='%s' -v v='%s' -v kind='%s' '/^#/ { next } !h { for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next } $c[\"dist\"] == d { x = $c[v]; b = (x ~ /inf|nan/); if ((kind == \"bad\" && b) || (kind == \"zero\" && !b && x != \"\" && x + 0 == 0)) if (!s[$c[k]]++) printf \"%%s \", $c[k] }' '%s'", dist, key, val, kind, summary))
rowof(list, name) = sum [k = 1:words(list)] (word(list, k) eq name ? k : 0)
# a band's row spacing: ROWF of the panel's height (about one marker); Dtot(D, nz, no) is the
# panel's range in decades when D decades of data get nz floor rows and no ceiling rows
ROWF = 0.03
band(n) = n > 0 ? n + 0.5 : 0
Dtot(D, nz, no) = D / (1 - ROWF * (band(nz) + band(no)))

set logscale xy
set format x '2^{%L}'
set format y '10^{%L}'

# the shared y range of a column: powers of ten around its positive finite values
# ---- 1. each order against its bounds (uniform inputs) ----------------------------------
stats summary using (strcol('dist') eq 'uniform' ? pos(column('mean_err_sumabs')) : NaN) nooutput
b_lo = 10**floor(log10(STATS_min)) / 10.0
b_hi = 10.0
# rows of floor/ceiling markers, one per setting that has any (all panels share the range)
BZ = marked('uniform', 'setting', 'mean_err_sumabs', 'zero')
BO = marked('uniform', 'setting', 'mean_err_sumabs', 'bad')
b_step = ROWF * Dtot(log10(b_hi / b_lo), words(BZ), words(BO))
b_lo = b_lo / 10**(b_step * band(words(BZ)))
b_hi = b_hi * 10**(b_step * band(words(BO)))
b_floor(s) = b_lo * 10**(b_step * rowof(BZ, s))
b_ceil(s) = b_hi / 10**(b_step * rowof(BO, s))
# four orders a figure (2 x 2), the key right of the panels; a figure of three has the key in
# its free cell (no empty cell), one of one or two is one row (half the height)
nbp = (nord + 3) / 4
#@ sum_order_bounds alt: Summation error against n for four orders, with their error bounds
#@ sum_order_bounds look: the points under the bounds, and bf16/fp16 accumulators (dash-dot) jumping to error one
#@ sum_order_bounds caption: Floor triangles: exact results; ceiling crosses: inf/NaN.
#@ sum_order_bounds_more alt: Summation error against n for the other orders, with their bounds
#@ sum_order_bounds_more look: kahan and neumaier in bf16 or fp16 rising to error one
#@ sum_order_bounds_more caption: Compensation does not stop stagnation (neumaier early, kahan late); fp16 also overflows.
do for [part = 1:nbp] {
do for [t = 1:2] {
    olast = 4 * part < nord ? 4 * part : nord
    kb = olast - 4 * part + 4
    eval out(t, 'sum_order_bounds'.(part == 1 ? '' : '_more'), 1500, kb > 2 ? 1580 : 1000)
    set yrange [b_lo:b_hi]
    b_title = sprintf("Error / sum|x| against n, uniform [0,1) inputs (mean over trials), every order on one scale;\nerror 0 on the floor, inf/NaN on the ceiling, a row per setting\ndashed: deterministic bound γ_k, dotted: probabilistic bound ≈ λ sqrt(k) u (λ = %s),\nin the accumulator's colour; a bound leaves the plot where k u reaches 1", lambda)
    # the key under the panels (or in the free cell of three), off the data
    if (kb > 2) { set multiplot layout 2, 2 margins 0.09, 0.98, (kb == 4 ? 0.16 : 0.06), 0.84 spacing 0.1, 0.12 title b_title font ',12' } \
    else { set multiplot layout 1, kb margins 0.09, 0.98, 0.25, 0.76 spacing 0.1 title b_title font ',12' }
    set logscale x 2
    set xlabel 'n'.LOGX
    set ylabel 'error / sum|x|'.LOGY
    set yrange [b_lo:b_hi]
    unset key
    do for [o = 4 * part - 3:olast] {
        ord = word(orders, o)
        set title ord font ',11'
        # one key for all panels, off the data
        if (o == olast) { if (kb == 3) { set key at screen 0.77, 0.25 center center spacing 1.1 box Left reverse width -2 maxrows 20 title 'inputs/accumulator' } else { set key at screen 0.5, 0.01 center bottom box Left reverse width -2 maxrows 3 title 'inputs/accumulator' } } else { unset key }
        plot \
             for [s = 1:nset] 1e9 with linespoints pt 7 lw 1.5 dt acc_dt(word(settings, s)) \
                 lc rgb fmt_color(s_in(word(settings, s))) title (o == olast ? word(settings, s) : ''), \
             1e9 with lines dt 2 lw 1.2 lc rgb '#000000' title (o == olast ? 'deterministic bound' : ''), \
             1e9 with lines dt 3 lw 1.2 lc rgb '#000000' title (o == olast ? 'probabilistic bound' : ''), \
             1e9 with points pt 8 lc rgb '#555555' title (o == olast ? 'error 0 (floor)' : ''), \
             1e9 with points pt 2 lc rgb '#555555' title (o == olast ? 'inf/NaN (ceiling)' : ''), \
             for [s = 1:nset] summary using 'n':(pos(pick('uniform', word(settings, s), ord, 'mean_err_sumabs'))) \
                 with linespoints pt 7 ps 0.5 lw 1.5 dt acc_dt(word(settings, s)) \
                 lc rgb fmt_color(s_in(word(settings, s))) notitle, \
             for [s = 1:nset] summary using 'n':(zero_at('uniform', word(settings, s), ord, 'mean_err_sumabs', b_floor(word(settings, s)))) \
                 with points pt 8 ps 0.9 lc rgb fmt_color(s_in(word(settings, s))) notitle, \
             for [s = 1:nset] summary using 'n':(over_at('uniform', word(settings, s), ord, 'mean_err_sumabs', b_ceil(word(settings, s)))) \
                 with points pt 2 ps 1.2 lc rgb fmt_color(s_in(word(settings, s))) notitle, \
             for [s = 1:nset] summary using 'n':(pos(pick('uniform', word(settings, s), ord, 'bound_det'))) \
                 with lines dt 2 lw 1.2 lc rgb fmt_color(s_acc(word(settings, s))) notitle, \
             for [s = 1:nset] summary using 'n':(pos(pick('uniform', word(settings, s), ord, 'bound_prob'))) \
                 with lines dt 3 lw 1.2 lc rgb fmt_color(s_acc(word(settings, s))) notitle
    }
    unset multiplot
    set border; set tics; set grid; set logscale xy; unset key; set autoscale xy
}
}

# ---- 2. every distribution: relative error of every order -------------------------------
dists = "uniform normal illcond llm"
array LO[4]
array HI[4]
do for [d = 1:4] {
    stats summary using (strcol('dist') eq word(dists, d) ? pos(column('mean_rel_err')) : NaN) nooutput
    LO[d] = 10**floor(log10(STATS_min)) / 10.0
    HI[d] = 10**ceil(log10(STATS_max)) * 10.0
}
# rows of floor/ceiling markers per column: one per order with any there, in any setting
array ZL[4]
array OL[4]
array STEP[4]
do for [d = 1:4] {
    ZL[d] = marked(word(dists, d), 'order', 'mean_rel_err', 'zero')
    OL[d] = marked(word(dists, d), 'order', 'mean_rel_err', 'bad')
    STEP[d] = ROWF * Dtot(log10(HI[d] / LO[d]), words(ZL[d]), words(OL[d]))
    LO[d] = LO[d] / 10**(STEP[d] * band(words(ZL[d])))
    HI[d] = HI[d] * 10**(STEP[d] * band(words(OL[d])))
}
d_floor(d, o) = LO[d] * 10**(STEP[d] * rowof(ZL[d], o))
d_ceil(d, o) = HI[d] / 10**(STEP[d] * rowof(OL[d], o))
#@ sum_order_dists alt: Summation error against n, fp32 sums, four input distributions
#@ sum_order_dists look: the cancellation panel far above the others
#@ sum_order_dists caption: Cancellation magnifies every order's error by the condition number.
#@ sum_order_dists_bf16_fp32 alt: Summation error against n, bf16 inputs in fp32, four distributions
#@ sum_order_dists_bf16_fp32 look: the same picture as fp32 inputs
#@ sum_order_dists_bf16_fp32 caption: The accumulator sets the error.
#@ sum_order_dists_bf16_bf16 alt: Summation error against n, bf16 inputs and accumulator, four distributions
#@ sum_order_dists_bf16_bf16 look: every order but pairwise rising to error one on uniform inputs
#@ sum_order_dists_bf16_bf16 caption: Stagnation: the bf16 sum stops absorbing terms.
#@ sum_order_dists_fp16_fp32 alt: Summation error against n, fp16 inputs in fp32, four distributions
#@ sum_order_dists_fp16_fp32 look: the same picture as fp32 inputs
#@ sum_order_dists_fp16_fp32 caption: The accumulator sets the error.
#@ sum_order_dists_fp16_fp16 alt: Summation error against n, fp16 inputs and accumulator, four distributions
#@ sum_order_dists_fp16_fp16 look: stagnation, and crosses where partial sums overflow
#@ sum_order_dists_fp16_fp16 caption: Compensation prevents neither.
# one figure per inputs/accumulator setting: sum_order_dists (the first), then _<in>_<acc>
sname(s) = s == 1 ? 'sum_order_dists' : 'sum_order_dists_'.s_in(word(settings, s)).'_'.s_acc(word(settings, s))
do for [s = 1:nset] {
do for [t = 1:2] {
    eval out(t, sname(s), 1500, 1500)
    # the key under the panels, off the data
    set multiplot layout 2, 2 margins 0.09, 0.98, 0.16, 0.87 spacing 0.1, 0.12 title sprintf("Relative error |result - exact| / |exact| against n, inputs/accumulator %s,\nper input distribution (one y scale each); error 0 on the floor, overflow on the ceiling:\na row per order, in the key's order from the frame", word(settings, s)) font ',12'
    set logscale x 2
    set xlabel 'n'.LOGX
    set ylabel 'relative error'.LOGY
    unset key
    {
        do for [d = 1:4] {
            set yrange [LO[d]:HI[d]]
            set title word(dists, d) font ',11'
            if (d == 4) { set key at screen 0.5, 0.01 center bottom box Left reverse width -2 maxrows 3 title 'order' } else { unset key }
            last = (d == 4)
            plot for [o = 1:nord] 1e99 with linespoints pt opt(o) lw 1.2 lc rgb ocolor(o) title (last ? word(orders, o) : ''), \
                 1e99 with points pt 8 lc rgb '#555555' title (last ? 'error 0 (floor)' : ''), \
                 1e99 with points pt 2 lc rgb '#555555' title (last ? 'overflow (ceiling)' : ''), \
                 for [o = 1:nord] summary using 'n':(pos(pick(word(dists, d), word(settings, s), word(orders, o), 'mean_rel_err'))) \
                     with linespoints pt opt(o) ps 0.5 lw 1.2 lc rgb ocolor(o) notitle, \
                 for [o = 1:nord] summary using 'n':(zero_at(word(dists, d), word(settings, s), word(orders, o), 'mean_rel_err', d_floor(d, word(orders, o)))) \
                     with points pt 8 ps 0.8 lc rgb ocolor(o) notitle, \
                 for [o = 1:nord] summary using 'n':(over_at(word(dists, d), word(settings, s), word(orders, o), 'mean_rel_err', d_ceil(d, word(orders, o)))) \
                     with points pt 2 ps 1.0 lc rgb ocolor(o) notitle
        }
    }
    unset multiplot
    set border; set tics; set grid; set logscale xy; unset key; set autoscale xy
}
}
set output
