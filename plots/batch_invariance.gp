# batch_invariance.gp — plots of the batch_invariance experiment (experiments/batch_invariance.c).
#
#   gnuplot -e "datadir='data'; outdir='plots'" plots/batch_invariance.gp   (./lab plot batch_invariance)
#
# Writes outdir/batch_invariance_heatmap.{png,svg}: for every batch size M (x) and inner
# dimension K (y), how far row 0 of (A[:M] B) moved from (A[:1] B), one panel per input
# format and policy (grey: bit-identical); and outdir/batch_invariance_diff.{png,svg}: the
# largest |difference| against M, one segment per run of M with one kernel and per K,
# vendor-like (solid) and batch-invariant (red, dashed: the zero line).

if (!exists("datadir")) datadir = 'data'
if (!exists("outdir")) outdir = 'plots'

set datafile separator ','
set datafile commentschars '#'
main = datadir.'/batch_invariance.csv'
runs = datadir.'/batch_invariance_runs.csv'

fmts = "fp32 tf32 bf16 fp16"
nf = words(fmts)
pols = "vendor-like batch-invariant"
sel(f, p) = strcol('format') eq f && strcol('policy') eq p
# colour value: log10 of the difference; unchanged rows get the floor value (drawn grey)
floor = -9
lv(d) = d > 0 ? log10(d) : floor

set encoding utf8
set logscale x 2
set format x '%g'
set xrange [0.7:2900]
set xlabel 'batch size M (rows in the product)'
set ylabel 'K'
set ytics 1
set format y '2^{%g}'
set palette defined (-9 '#d9d9d9', -8.99 '#ffffcc', -4 '#fd8d3c', 0 '#e31a1c', 3 '#67000d')
set cbrange [floor:3]
set cblabel 'log_{10} max |diff|, grey: same bits' font ',9'
set style fill solid 1.0 noborder

do for [term = 1:2] {
    if (term == 1) {
        set terminal pngcairo size 1500, 300 * nf + 80 enhanced font 'Sans,10'
        set output outdir.'/batch_invariance_heatmap.png'
    } else {
        set terminal svg size 1500, 300 * nf + 80 enhanced font 'Sans,10' dynamic
        set output outdir.'/batch_invariance_heatmap.svg'
    }
    set multiplot layout nf, 2 title "Where row 0 changes with the batch size (Thinking Machines' row-0 test; policy models of lib/ops/policy.h)" font ',12'
    do for [f = 1:nf] {
        do for [p = 1:2] {
            set title sprintf("%s inputs, %s", word(fmts, f), word(pols, p)) font ',11'
            # each run of batch sizes with one kernel: a box from M_first - 0.5 to M_last + 0.5, log2 K +- 0.45
            # (the filter must sit in a coordinate: a NaN colour alone would still draw the box)
            plot runs using 'M_first':(sel(word(fmts, f), word(pols, p)) ? log(column('K')) / log(2) : NaN):(column('M_first') - 0.5):(column('M_last') + 0.5):(log(column('K')) / log(2) - 0.45):(log(column('K')) / log(2) + 0.45):(lv(column('max_abs_diff'))) \
                 with boxxyerror fc palette notitle
        }
    }
    unset multiplot
}

# ---- largest difference against M ----------------------------------------------------------
unset logscale y
set format y '%g'
set ytics autofreq
set ylabel 'max |difference| over row 0'
set autoscale y
set key top left font ',9'
kcol(k) = k == 256 ? '#c6dbef' : k == 512 ? '#9ecae1' : k == 1024 ? '#6baed6' : k == 2048 ? '#3182bd' : k == 4096 ? '#08519c' : k == 8192 ? '#08306b' : '#000000'
Ks = "256 512 1024 2048 4096 8192 16384"
diff(f, p, k) = (sel(f, p) && column('K') == k) ? column('max_abs_diff') : NaN
do for [term = 1:2] {
    if (term == 1) {
        set terminal pngcairo size 1400, 700 enhanced font 'Sans,10'
        set output outdir.'/batch_invariance_diff.png'
    } else {
        set terminal svg size 1400, 700 enhanced font 'Sans,10' dynamic
        set output outdir.'/batch_invariance_diff.svg'
    }
    set multiplot layout 2, 2 title "Largest change of row 0 against the batch size M; vendor-like: one segment per run of M with one kernel, per K; batch-invariant: red (all exactly 0)" font ',12'
    set offsets 0, 0, graph 0.05, 0
    do for [f = 1:nf] {
        set title sprintf("%s inputs", word(fmts, f)) font ',11'
        plot for [k = 1:words(Ks)] runs using 'M_first':(diff(word(fmts, f), 'vendor-like', int(word(Ks, k)))):(column('M_last') + 1 - column('M_first')):(0) \
                 with vectors nohead lw 3 lc rgb kcol(int(word(Ks, k))) title 'K = '.word(Ks, k), \
             runs using 'M_first':(sel(word(fmts, f), 'batch-invariant') ? column('max_abs_diff') : NaN):(column('M_last') + 1 - column('M_first')):(0) \
                 with vectors nohead lw 2 dt 2 lc rgb '#d62728' title 'batch-invariant (every K)'
    }
    unset multiplot
}
