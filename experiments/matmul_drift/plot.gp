# experiments/matmul_drift/plot.gp — plots of the matmul_drift experiment (main.c beside it).
#
#   gnuplot -e "datadir='data'; outdir='plots'" experiments/matmul_drift/plot.gp   (./lab plot matmul_drift)
#
# Writes outdir/matmul_drift_error{,_narrow}.{png,svg} (normal inputs) and matmul_drift_llm{,_narrow}.{png,svg}
# (LLM-like activations): the median relative error of C = A B against K, one panel per
# inputs/accumulator setting (four a figure: fp32 accumulators, then the narrow ones), one curve per kernel, with the guides sqrt(K) u and K u of the
# accumulator (dashed and dotted). (matmul_drift_splitk draws the split factors.)
# Settings or kernels missing from the data (a run with --formats/--kernels) are not drawn.

load 'plots/common.gp'
main = datadir.'/matmul_drift.csv'

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

# Four panels a figure: the fp32-accumulator settings, then the narrow ones (part 2, "_narrow").
ncols = 2
nrows = 2
stats main using (column('rel_err_median') > 0 ? column('rel_err_median') : NaN) nooutput
floor = STATS_min / 20   # where exact results (error 0) are drawn: a log axis has no 0
# a row per kernel, so kernels exact at the same K do not hide each other
zero(d, s, k, i) = (pick(d, s, k, 'rel_err_median') == 0) ? floor * 1.6**(i - 1) : NaN
set yrange [floor / 1.5:*]
#@ matmul_drift_error alt: Matrix product error against K, fp32 accumulators, per kernel, log-log
#@ matmul_drift_error look: each line's slope against the dashed sqrt(K) u guide
#@ matmul_drift_error caption: Split-K lowest, tensor-core models highest; coincident kernels wide under thin.
#@ matmul_drift_error_narrow alt: Matrix product error against K, fp8 inputs and narrow accumulators
#@ matmul_drift_error_narrow look: the fp8e4m3 triangles on the floor: errors of exactly 0
#@ matmul_drift_error_narrow caption: fp8 products and short sums are exact in fp32, so that slope is where rounding starts, not same-sign error.
#@ matmul_drift_llm alt: Matrix product error against K with outlier-heavy activations, fp32 accumulators
#@ matmul_drift_llm look: the same slopes as for normal inputs
#@ matmul_drift_llm caption: Outliers shift the level, not the growth.
#@ matmul_drift_llm_narrow alt: Matrix product error against K with outliers, narrow accumulators
#@ matmul_drift_llm_narrow look: the narrow accumulators far above
#@ matmul_drift_llm_narrow caption: The accumulator sets the level.
do for [dd = 1:2] {
    dist = word("normal llm", dd)
    name = dd == 1 ? 'error' : 'llm'
    what = dd == 1 ? 'A, B standard normal' : 'A LLM-like activations (0.5% outliers of 20..100), B normal'
    do for [part = 1:2] {
    do for [term = 1:2] {
        eval out(term, 'matmul_drift_'.name.(part == 1 ? '' : '_narrow'), 1500, 1300)
        set multiplot layout nrows, ncols margins 0.09, 0.74, 0.07, 0.86 spacing 0.09, 0.12 title sprintf("Error of C = A B against the exact product vs K (%s)\nDashed: sqrt(K) u, dotted: K u of the accumulator; triangles on the floor: error exactly 0 (a row per kernel)\ntiled:128x128x32 coincides with naive and splitk:16:tree with splitk:16 (wide light line under the thin one)", what) font ',12'
        do for [s = 4 * part - 3:4 * part] {
            st = word(settings, s)
            u = uacc(accfmt(st))
            set title sprintf("inputs %s, accumulator %s", infmt(st), accfmt(st)) font ',11'
            if (s == 4 * part) { set key at screen 0.755, 0.5 left center box Left reverse width -1 title 'kernel' } else { unset key }
            plot for [k = 1:nker] main using 'K':(pos(pick(dist, st, word(kernels, k), 'rel_err_median'))) \
                     with linespoints lw word(klw, k) + 0 dt int(word(kdash, k)) pt int(word(kpt, k)) ps 0.7 \
                     lc rgb word(kcolors, k) title (s == 4 * part ? word(kernels, k) : ''), \
                 for [k = 1:nker] main using 'K':(zero(dist, st, word(kernels, k), k)) with points pt 8 ps 1.2 lc rgb word(kcolors, k) notitle, \
                 guide(sqrt(x) * u) with lines dt 2 lw 1 lc rgb '#555555' title (s == 4 * part ? 'sqrt(K) u' : ''), \
                 guide(x * u) with lines dt 3 lw 1 lc rgb '#555555' title (s == 4 * part ? 'K u' : ''), \
                 NaN with points pt 8 ps 1.2 lc rgb '#555555' title (s == 4 * part ? 'error 0 (floor)' : '')
        }
        unset multiplot
    }
    }
}
set yrange [*:*]
