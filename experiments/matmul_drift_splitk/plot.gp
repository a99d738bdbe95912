# experiments/matmul_drift_splitk/plot.gp — plots of the matmul_drift_splitk experiment (main.c beside it).
#
#   gnuplot -e "datadir='data'; outdir='plots'" experiments/matmul_drift_splitk/plot.gp   (./lab plot matmul_drift_splitk)
#
# Writes outdir/matmul_drift_splitk.{png,svg}: for split factors S = 1..64 at one K, the error
# and how many outputs differ from S = 1 (seq).

load 'plots/common.gp'
split = datadir.'/matmul_drift_splitk.csv'
pos(x) = x > 0 ? x : NaN # zero errors (exact results) cannot sit on a log axis
set format y '10^{%L}'

# ---- split factors -----------------------------------------------------------------------
unset logscale
set logscale y
set format x '%g'
set xlabel 'split factor S (splitk:S; S = 1 is seq)'
# drawing order: tf32 widest, fp32 narrower on it, fp16 thin on top (the three nearly coincide)
fmts = "tf32 fp32 bf16 fp16 fp8e4m3"
sk_lw(f) = f eq 'tf32' ? 7 : f eq 'fp32' ? 3.5 : 1.2
sk_color(f) = f eq 'tf32' ? fmt_light('tf32') : fmt_color(f)
sk_title(f) = f.(f eq 'tf32' ? ' (wide, under fp32, fp16)' : f eq 'fp32' ? ' (under fp16)' : '')
stats split using 'K' nooutput
K_split = int(STATS_max)
stats split using 'S' nooutput
set xrange [0:STATS_max + 1]
pks(d, f, c) = (strcol('dist') eq d && strcol('format') eq f) ? column(c) : NaN
#@ matmul_drift_splitk alt: Error and changed outputs of one product against the split factor S
#@ matmul_drift_splitk look: the changed fraction jumping once S exceeds one
#@ matmul_drift_splitk caption: Shorter chains are more accurate; tf32 lies under fp16.
do for [term = 1:2] {
    eval out(term, 'matmul_drift_splitk', 1400, 1100)
    # the panels side by side, one key below them (off the data)
    set multiplot layout 1, 2 margins 0.09, 0.98, 0.25, 0.86 spacing 0.1 title sprintf("One product, every split factor (normal inputs, fp32 accumulation, K = %d)\ntf32 (wide, light) and fp32 (medium) lie under fp16", K_split) font ',12'
    set title 'mean normalised error |c - e| / sum|a b|'
    set ylabel 'error / sum|a b|'.LOGY
    set key at screen 0.5, 0.01 center bottom box horizontal maxcols 3 Left reverse width -2 title 'inputs'
    plot for [f = 1:5] split using 'S':(pos(pks('normal', word(fmts, f), 'err_norm_mean'))) \
         with linespoints pt 7 ps 0.4 lw sk_lw(word(fmts, f)) lc rgb sk_color(word(fmts, f)) title sk_title(word(fmts, f))
    unset key
    unset logscale y
    set format y '%g'
    set yrange [0:*]
    set title 'outputs whose value differs from S = 1'
    set ylabel 'outputs changed'
    plot for [f = 1:5] split using 'S':(pks('normal', word(fmts, f), 'changed')) \
         with linespoints pt 7 ps 0.4 lw sk_lw(word(fmts, f)) lc rgb sk_color(word(fmts, f)) notitle
    unset multiplot
    set logscale y
    set format y '10^{%L}'
    set autoscale y
}
