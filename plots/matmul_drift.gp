# matmul_drift.gp — plots of the matmul_drift experiment (experiments/matmul_drift.c).
#
#   gnuplot -e "datadir='data'; outdir='plots'" plots/matmul_drift.gp   (./lab plot matmul_drift)
#
# Writes outdir/matmul_drift_error.{png,svg} (normal inputs) and matmul_drift_llm.{png,svg}
# (LLM-like activations): the median relative error of C = A B against K, one panel per
# inputs/accumulator setting, one curve per kernel, with the guides sqrt(K) u and K u of the
# accumulator (dashed and dotted); and outdir/matmul_drift_splitk.{png,svg}: for split
# factors S = 1..64 at one K, the error and how many outputs differ from S = 1 (seq).
# Settings or kernels missing from the data (a run with --formats/--kernels) are not drawn.

load 'plots/common.gp'
main = datadir.'/matmul_drift.csv'
split = datadir.'/matmul_drift_splitk.csv'

settings = "fp32/fp32 tf32/fp32 bf16/fp32 fp16/fp32 fp8e4m3/fp32 tf32/tf32 bf16/bf16 fp16/fp16"
nset = words(settings)
kernels = "naive tiled:128x128x32 splitk:16 splitk:16:tree tc:h100 tc:a100 tc:v100"
nker = words(kernels)
# tiled:... gives the same bits as naive and splitk:16:tree as splitk:16 on these data: each
# pair is drawn as a wide light line with the thin dashed one on top, so both stay visible.
kcolors = "#bbbbbb #000000 #9ecae1 #1f77b4 #d62728 #ff7f0e #9467bd"
kdash = "1 2 1 2 1 1 1"
kpt = "7 6 5 4 9 11 13"
klw = "6 1.5 6 1.5 1.5 1.5 1.5"
infmt(s) = s[1:strstrt(s, '/') - 1]
accfmt(s) = s[strstrt(s, '/') + 1:]
uacc(a) = a eq 'fp32' ? 2**-24 : a eq 'bf16' ? 2**-8 : 2**-11 # unit roundoff of the accumulator
pos(x) = x > 0 ? x : NaN # zero errors (exact results) cannot sit on a log axis
pick(d, s, k, c) = (strcol('dist') eq d && strcol('format') eq infmt(s) && strcol('acc') eq accfmt(s) && \
                    strcol('kernel_key') eq k) ? column(c) : NaN

stats main using 'K' nooutput
K_lo = STATS_min / 1.4
K_hi = STATS_max * 1.4
set logscale x 2
set logscale y 10
set format x '2^{%L}'
set format y '10^{%L}'
set xrange [K_lo:K_hi]
set xlabel 'K'.LOGX
set ylabel 'median |c - e| / |e|'.LOGY
guide(v) = v <= 1 ? v : NaN   # the guides stop where they reach 1 (no error can be larger to matter)
set samples 100

ncols = 4
nrows = (nset + ncols - 1) / ncols
do for [dd = 1:2] {
    dist = word("normal llm", dd)
    name = dd == 1 ? 'error' : 'llm'
    what = dd == 1 ? 'A, B standard normal' : 'A LLM-like activations (0.5% outliers of 20..100), B normal'
#@ matmul_drift_error alt: Median relative error of a matrix product against the inner dimension K, per kernel and accumulator format, log-log
#@ matmul_drift_error look: the slope of each kernel's line against the dashed sqrt(K) u guide, and the narrow-accumulator panels far above
#@ matmul_drift_error caption: Slopes are in data/matmul_drift.md (near one half for most settings, near one for fp8e4m3 inputs, whose median error is 0 at small K: floor markers). Coincident kernels are drawn wide under thin.
#@ matmul_drift_llm alt: Median relative error of a matrix product with outlier-heavy LLM-like activations against K, per kernel and accumulator
#@ matmul_drift_llm look: the same slopes as in the previous figure, shifted by the outliers
#@ matmul_drift_llm caption: The same growth with K, scaled by the outliers' weight in the sums.
    do for [term = 1:2] {
        eval out(term, 'matmul_drift_'.name, 420 * ncols + 260, 340 * nrows + 90)
        set multiplot layout nrows, ncols margins 0.05, 0.85, 0.08, 0.88 spacing 0.05, 0.12 title sprintf("Error of C = A B against the exact product vs K (%s). Dashed: sqrt(K) u, dotted: K u of the accumulator.\ntiled:128x128x32 coincides with naive and splitk:16:tree with splitk:16 (wide light line under the thin one)", what) font ',12'
        do for [s = 1:nset] {
            st = word(settings, s)
            u = uacc(accfmt(st))
            set title sprintf("inputs %s, accumulator %s", infmt(st), accfmt(st)) font ',11'
            if (s == nset) { set key at screen 0.995, 0.5 right center font ',10' box title 'kernel' } else { unset key }
            plot for [k = 1:nker] main using 'K':(pos(pick(dist, st, word(kernels, k), 'rel_err_median'))) \
                     with linespoints lw word(klw, k) + 0 dt int(word(kdash, k)) pt int(word(kpt, k)) ps 0.6 \
                     lc rgb word(kcolors, k) title (s == nset ? word(kernels, k) : ''), \
                 guide(sqrt(x) * u) with lines dt 2 lw 1 lc rgb '#555555' title (s == nset ? 'sqrt(K) u' : ''), \
                 guide(x * u) with lines dt 3 lw 1 lc rgb '#555555' title (s == nset ? 'K u' : '')
        }
        unset multiplot
    }
}

# ---- split factors -----------------------------------------------------------------------
unset logscale
set logscale y
set format x '%g'
set xlabel 'split factor S (splitk:S; S = 1 is seq)'
fmts = "fp32 tf32 bf16 fp16 fp8e4m3"
stats split using 'K' nooutput
K_split = int(STATS_max)
stats split using 'S' nooutput
set xrange [0:STATS_max + 1]
pks(d, f, c) = (strcol('dist') eq d && strcol('format') eq f) ? column(c) : NaN
#@ matmul_drift_splitk alt: Error and fraction of changed outputs of one matrix product against the split-K factor S
#@ matmul_drift_splitk look: the error falling with S and the changed fraction jumping as soon as S differs from one
#@ matmul_drift_splitk caption: Shorter sequential chains are more accurate; tf32 (wide, light) lies under fp16.
do for [term = 1:2] {
    eval out(term, 'matmul_drift_splitk', 1400, 460)
    set multiplot layout 1, 2 title sprintf("One product, every split factor (normal inputs, fp32 accumulation, K = %d); tf32 (wide, light) lies under fp16 and fp32", K_split) font ',12'
    set title 'mean normalised error |c - e| / sum|a b|'
    set ylabel 'error / sum|a b|'.LOGY
    set key outside right top font ',9' box title 'inputs'
    plot for [f = 1:5] split using 'S':(pos(pks('normal', word(fmts, f), 'err_norm_mean'))) \
         with linespoints pt 7 ps 0.4 lw (word(fmts, f) eq 'tf32' ? 6 : 1.2) lc rgb (word(fmts, f) eq 'tf32' ? fmt_light('tf32') : fmt_color(word(fmts, f))) title word(fmts, f)
    unset logscale y
    set format y '%g'
    set yrange [0:*]
    set title 'outputs whose value differs from S = 1'
    set ylabel 'outputs changed'
    plot for [f = 1:5] split using 'S':(pks('normal', word(fmts, f), 'changed')) \
         with linespoints pt 7 ps 0.4 lw (word(fmts, f) eq 'tf32' ? 6 : 1.2) lc rgb (word(fmts, f) eq 'tf32' ? fmt_light('tf32') : fmt_color(word(fmts, f))) title word(fmts, f)
    unset multiplot
    set logscale y
    set format y '10^{%L}'
    set autoscale y
}
