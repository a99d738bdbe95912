# experiments/softmax_drift/plot.gp — plots of the softmax_drift experiment (main.c beside it).
#
#   gnuplot -e "datadir='data'; outdir='plots'" experiments/softmax_drift/plot.gp   (./lab plot softmax_drift)
#
# Writes outdir/softmax_drift_error.{png,svg}: the largest L1 error of the probabilities against
# N, per input format (colour) and variant (point and dash), against the exact softmax of the
# unrounded logits (left) and of the rounded ones (right: the arithmetic alone); and
# outdir/softmax_drift_cliff.{png,svg}: naive vs safe softmax computed in the format itself
# against the planted peak logit, with the peaks where naive returns NaN marked on top.

load 'plots/common.gp'

main = datadir.'/softmax_drift.csv'
cliff = datadir.'/softmax_drift_cliff.csv'
col_values(file, name) = system(sprintf("grep -v '^#' '%s' | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == \"%s\") c = i; next } !seen[$c]++ { print $c }' | paste -sd' ' -", file, name))
fmts = col_values(main, 'format')
vars = col_values(main, 'variant')
nf = words(fmts)
nv = words(vars)
var_pt(i) = i == 1 ? 4 : i == 2 ? 7 : i == 3 ? 9 : 13
var_dt(i) = i == 1 ? 3 : i == 2 ? 1 : i == 3 ? 2 : 4
# variants whose curves coincide stay visible: the first drawn widest, each next one thinner
var_lw(i) = i == 1 ? 6 : i == 2 ? 3.5 : i == 3 ? 2 : 1.2
sel(f, v) = (strcol('format') eq f && strcol('variant') eq v)

cfmts = col_values(cliff, 'format')
ncf = words(cfmts)
FLOOR = 1e-10
# an error below FLOOR (in practice exactly 0) cannot sit on the log axis: such points are
# triangles on the floor, a row per series, and the lines stop short of them
lrel(x) = x > FLOOR ? x : NaN
lse_rel = '(abs(column("lse") - column("lse_exact")) / abs(column("lse_exact")))'
lse_err = '(lrel(@lse_rel))'
floor_y(i) = FLOOR * 1.6**(i - 1)
stats cliff using 'peak' nooutput
p_lo = STATS_min
p_hi = STATS_max
finite(x) = (x == x && abs(x) < 1e300) ? x : NaN
stats cliff using (finite(abs(column('lse') - column('lse_exact')) / abs(column('lse_exact')))) nooutput
y_hi = STATS_max > 1e-3 ? STATS_max : 1e-3
stats main using 'N' nooutput
N_lo = STATS_min
N_hi = STATS_max
set logscale x 2
set logscale y
set format y '10^{%L}'
set xrange [N_lo / 1.5 : N_hi * 1.5]
set xlabel 'vocabulary size N (logits per row; log scale)'
set xtics N_lo, 4
set format x '2^{%L}'

#@ softmax_drift_error alt: Softmax L1 error against vocabulary size N, per format and variant
#@ softmax_drift_error look: the right panel's growth with N, far faster than sqrt(N)
#@ softmax_drift_error caption: That is stagnation; blocked online:64 stays low.
do for [t = 1:2] {
    eval out(t, 'softmax_drift_error', 1500, 1300)
    # the panels side by side, the key below them in two columns (off the data)
    set multiplot layout 1, 2 margins 0.09, 0.98, 0.24, 0.86 spacing 0.09 \
        title "Softmax error against N, fp32 arithmetic (largest over the rows)\ncolour = input format, point and dash = variant" font ',12'
    set title "against the exact softmax of the unrounded logits\n(what the model means)"
    set ylabel 'sum_i |p_i - p*_i| (log scale)'
    unset key
    plot for [v = 1:nv] for [f = 1:nf] main using 'N':(sel(word(fmts, f), word(vars, v)) ? column('prob_l1_true_max') : NaN) \
         with linespoints lc rgb fmt_light(word(fmts, f)) pt var_pt(v) dt var_dt(v) lw var_lw(v) ps 1.0 notitle
    set title "against the exact softmax of the rounded logits\n(the arithmetic alone)"
    set ylabel ''
    set key at screen 0.5, 0.01 center bottom box Left reverse maxrows 4 width -2
    # the key names colours (formats) and strokes (variants) apart: 7 entries, not 12
    plot for [v = 1:nv] for [f = 1:nf] main using 'N':(sel(word(fmts, f), word(vars, v)) ? column('prob_l1_round_max') : NaN) \
         with linespoints lc rgb fmt_light(word(fmts, f)) pt var_pt(v) dt var_dt(v) lw var_lw(v) ps 1.0 notitle, \
         for [f = 1:nf] NaN with lines lw 3 lc rgb fmt_color(word(fmts, f)) title word(fmts, f).' inputs', \
         for [v = 1:nv] NaN with linespoints lc rgb '#555555' pt var_pt(v) dt var_dt(v) lw var_lw(v) title word(vars, v).(v < nv ? ' (wider under the next)' : '')
    unset multiplot
}

set xrange [p_lo / 1.2 : p_hi * 1.2]
set yrange [FLOOR / 5 : y_hi * 1e4]
set xlabel 'planted peak logit (the other 1023 logits N(0,1); log scale)'
set ylabel 'relative error of log-sum-exp (log scale)'
set xtics (4, 8, 11.09, 16, 32, 64, 88.7)
set mxtics default
set format x '%g'
csel(f, v) = (strcol('format') eq f && strcol('variant') eq v)
#@ softmax_drift_cliff alt: Log-sum-exp error against a planted peak logit, naive and safe softmax
#@ softmax_drift_cliff look: the crosses at the top: naive softmax's NaN
#@ softmax_drift_cliff caption: Safe softmax stays finite.
do for [t = 1:2] {
    eval out(t, 'softmax_drift_cliff', 1200, 1000)
    set title "The overflow cliff: naive (dashed) and safe (solid) softmax computed in the format itself\ncrosses at the top: peaks where naive returns NaN probabilities\n(exp, or the sum of exponentials, overflowed); triangles on the floor: error exactly 0" font ',12'
    set rmargin at screen 0.74
    set key at screen 0.755, 0.5 left center box Left reverse maxrows 20 width -2
    plot for [f = 1:ncf] cliff using 'peak':(csel(word(cfmts, f), 'safe') ? @lse_err : NaN) \
             with linespoints lc rgb fmt_color(word(cfmts, f)) pt 7 ps 0.8 lw 2 title word(cfmts, f).' safe', \
         for [f = 1:ncf] cliff using 'peak':(csel(word(cfmts, f), 'naive') && column('nan_probs') == 0 ? @lse_err : NaN) \
             with linespoints lc rgb fmt_color(word(cfmts, f)) pt 4 ps 1.0 lw 2 dt 2 title word(cfmts, f).' naive', \
         for [f = 1:ncf] cliff using 'peak':(csel(word(cfmts, f), 'naive') && column('nan_probs') > 0 ? y_hi * (10 ** f) : NaN) \
             with points lc rgb fmt_color(word(cfmts, f)) pt 2 ps 1.6 lw 2 title word(cfmts, f).' naive: NaN', \
         for [f = 1:ncf] cliff using 'peak':(csel(word(cfmts, f), 'safe') && !(@lse_rel > FLOOR) ? floor_y(2 * f - 1) : NaN) \
             with points lc rgb fmt_color(word(cfmts, f)) pt 8 ps 1.0 notitle, \
         for [f = 1:ncf] cliff using 'peak':(csel(word(cfmts, f), 'naive') && column('nan_probs') == 0 && !(@lse_rel > FLOOR) ? floor_y(2 * f) : NaN) \
             with points lc rgb fmt_color(word(cfmts, f)) pt 8 ps 1.0 notitle, \
         NaN with points lc rgb '#555555' pt 8 ps 1.0 title 'error 0 (floor)'
    unset rmargin
}
set output
