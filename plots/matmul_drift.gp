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

if (!exists("datadir")) datadir = 'data'
if (!exists("outdir")) outdir = 'plots'

set datafile separator ','
set datafile commentschars '#'
main = datadir.'/matmul_drift.csv'
split = datadir.'/matmul_drift_splitk.csv'

settings = "fp32/fp32 tf32/fp32 bf16/fp32 fp16/fp32 fp8e4m3/fp32 tf32/tf32 bf16/bf16 fp16/fp16"
nset = words(settings)
kernels = "naive tiled:128x128x32 splitk:16 splitk:16:tree tc:h100 tc:a100 tc:v100"
nker = words(kernels)
kcolors = "#000000 #7f7f7f #1f77b4 #17becf #d62728 #ff7f0e #9467bd"
kdash = "1 2 1 2 1 1 1"
kpt = "7 6 5 4 9 11 13"
infmt(s) = s[1:strstrt(s, '/') - 1]
accfmt(s) = s[strstrt(s, '/') + 1:]
uacc(a) = a eq 'fp32' ? 2**-24 : a eq 'bf16' ? 2**-8 : 2**-11 # unit roundoff of the accumulator
pos(x) = x > 0 ? x : NaN # zero errors (exact results) cannot sit on a log axis
pick(d, s, k, c) = (strcol('dist') eq d && strcol('format') eq infmt(s) && strcol('acc') eq accfmt(s) && \
                    strcol('kernel_key') eq k) ? column(c) : NaN

set encoding utf8
set logscale x 2
set logscale y 10
set format x '2^{%L}'
set format y '10^{%L}'
set xrange [32:131072]
set grid xtics ytics lc rgb '#dddddd'
set xlabel 'K'
set ylabel 'median |c - e| / |e|'
set samples 100

ncols = 4
nrows = (nset + ncols - 1) / ncols
do for [dd = 1:2] {
    dist = word("normal llm", dd)
    name = dd == 1 ? 'error' : 'llm'
    what = dd == 1 ? 'A, B standard normal' : 'A LLM-like activations (0.5% outliers of 20..100), B normal'
    do for [term = 1:2] {
        if (term == 1) {
            set terminal pngcairo size 420 * ncols, 340 * nrows + 70 enhanced font 'Sans,10'
            set output outdir.'/matmul_drift_'.name.'.png'
        } else {
            set terminal svg size 420 * ncols, 340 * nrows + 70 enhanced font 'Sans,10' dynamic
            set output outdir.'/matmul_drift_'.name.'.svg'
        }
        set multiplot layout nrows, ncols title sprintf("Error of C = A B against the exact product vs K (%s). Dashed: sqrt(K) u, dotted: K u of the accumulator", what) font ',12'
        do for [s = 1:nset] {
            st = word(settings, s)
            u = uacc(accfmt(st))
            set title sprintf("inputs %s, accumulator %s", infmt(st), accfmt(st)) font ',11'
            if (s == 1) { set key top left font ',8' spacing 0.9 opaque box } else { unset key }
            plot for [k = 1:nker] main using 'K':(pos(pick(dist, st, word(kernels, k), 'rel_err_median'))) \
                     with linespoints lw 1.5 dt int(word(kdash, k)) pt int(word(kpt, k)) ps 0.6 \
                     lc rgb word(kcolors, k) title word(kernels, k), \
                 sqrt(x) * u with lines dt 2 lw 1 lc rgb '#555555' title 'sqrt(K) u', \
                 x * u with lines dt 3 lw 1 lc rgb '#555555' title 'K u'
        }
        unset multiplot
    }
}

# ---- split factors -----------------------------------------------------------------------
unset logscale
set logscale y
set format x '%g'
set xrange [0:65]
set xlabel 'split factor S (splitk:S; S = 1 is seq)'
fmts = "fp32 tf32 bf16 fp16 fp8e4m3"
fcolors = "#000000 #17becf #ff7f0e #d62728 #2ca02c"
pks(d, f, c) = (strcol('dist') eq d && strcol('format') eq f) ? column(c) : NaN
do for [term = 1:2] {
    if (term == 1) {
        set terminal pngcairo size 1400, 460 enhanced font 'Sans,10'
        set output outdir.'/matmul_drift_splitk.png'
    } else {
        set terminal svg size 1400, 460 enhanced font 'Sans,10' dynamic
        set output outdir.'/matmul_drift_splitk.svg'
    }
    set multiplot layout 1, 2 title "One product, every split factor (normal inputs, fp32 accumulation; K: see the CSV)" font ',12'
    set title 'mean normalised error |c - e| / sum|a b|'
    set ylabel 'error / sum|a b|'
    set key top right font ',9'
    plot for [f = 1:5] split using 'S':(pos(pks('normal', word(fmts, f), 'err_norm_mean'))) \
         with linespoints pt 7 ps 0.4 lw 1.2 lc rgb word(fcolors, f) title word(fmts, f)
    unset logscale y
    set format y '%g'
    set yrange [0:*]
    set title 'outputs whose value differs from S = 1'
    set ylabel 'outputs changed'
    plot for [f = 1:5] split using 'S':(pks('normal', word(fmts, f), 'changed')) \
         with linespoints pt 7 ps 0.4 lw 1.2 lc rgb word(fcolors, f) title word(fmts, f)
    unset multiplot
    set logscale y
    set format y '10^{%L}'
    set autoscale y
}
