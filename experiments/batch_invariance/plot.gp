# experiments/batch_invariance/plot.gp — plots of the batch_invariance experiment (main.c beside it).
#
#   gnuplot -e "datadir='data'; outdir='plots'" experiments/batch_invariance/plot.gp   (./lab plot batch_invariance)
#
# Writes outdir/batch_invariance_heatmap.{png,svg}: for every batch size M (x) and inner
# dimension K (y), how far row 0 of (A[:M] B) moved from (A[:1] B), one panel per input
# format and policy (grey: bit-identical); and outdir/batch_invariance_diff.{png,svg}: the
# largest |difference| against M, one segment per run of M with one kernel and per K,
# vendor-like (solid) and batch-invariant (red, dashed: the zero line).

load 'plots/common.gp'

main = datadir.'/batch_invariance.csv'
runs = datadir.'/batch_invariance_runs.csv'
# the formats, policies and K values present in the data (a run with --formats plots what it has)
col_values(file, name) = system(sprintf("grep -v '^#' '%s' | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == \"%s\") c = i; next } !seen[$c]++ { print $c }' | paste -sd' ' -", file, name))
fmts = col_values(runs, 'format')
nf = words(fmts)
Ks = system(sprintf("grep -v '^#' '%s' | awk -F, 'NR > 1 { print $3 }' | sort -nu | paste -sd' ' -", runs))
nk = words(Ks)
sel(f, p) = strcol('format') eq f && strcol('policy') eq p

# one colour scale for all panels, from the data: log10 of the largest positive difference
stats runs using (column('max_abs_diff') > 0 ? log10(column('max_abs_diff')) : NaN) nooutput
cb_hi = ceil(STATS_max)
cb_lo = floor(STATS_min)
# does the batch-invariant policy ever change row 0? (the experiment's claim: never)
stats runs using (strcol('policy') eq 'batch-invariant' ? column('max_abs_diff') : NaN) nooutput
bi_max = STATS_max
floor_v = cb_lo - 0.5   # 'same bits' sits in a grey band below every measured difference
lv(d) = d > 0 ? log10(d) : floor_v

set logscale x 2
set format x '%g'
stats runs using 'M_last' nooutput
M_hi = STATS_max
set xrange [0.7:M_hi * 1.3]
set xlabel 'batch size M (rows in the product; log scale)'
set ylabel 'K'
set ytics 1
# only the K values measured: a tick a row, none above or below
set yrange [log(word(Ks, 1) + 0) / log(2) - 0.6 : log(word(Ks, nk) + 0) / log(2) + 0.6]
set format y '2^{%g}'
set palette defined (floor_v '#e0e0e0', cb_lo - 0.001 '#e0e0e0', cb_lo '#ffffb2', (cb_lo + cb_hi) / 2.0 '#fd8d3c', cb_hi '#bd0026')
set cbrange [floor_v:cb_hi]
set cbtics cb_lo, 1
set cblabel 'log_{10} max |diff| of row 0 (grey: same bits as M = 1)'
set style fill solid 1.0 noborder

#@ batch_invariance_heatmap alt: Heat map of row-0 changes against batch size, per format and K
#@ batch_invariance_heatmap look: the coloured bands: batch sizes served by another kernel
#@ batch_invariance_heatmap caption: Grey: the same bits as at batch size 1.
do for [term = 1:2] {
    eval out(term, 'batch_invariance_heatmap', 1500, 500 * ((nf + 1) / 2) + 250)
    set multiplot layout (nf + 1) / 2, 2 margins 0.07, 0.86, 0.07, 0.86 spacing 0.08, 0.14 \
        title sprintf("Where row 0 changes with the batch size, vendor-like policy (Thinking Machines' row-0 test;\nlib/ops/policy.h). batch-invariant policy: largest change of row 0, over every M and every K:\n%g (not drawn: it would be all grey)", bi_max) font ',12'
    do for [f = 1:nf] {
        set title sprintf("%s inputs, vendor-like", word(fmts, f)) font ',11'
        set ylabel (f % 2 == 1 ? 'K' : '')
        if (f == nf) { set colorbox user origin screen 0.89, 0.15 size screen 0.02, 0.6 } else { unset colorbox }
        # each run of batch sizes with one kernel: a box from M_first - 0.5 to M_last + 0.5, log2 K +- 0.45
        plot runs using 'M_first':(sel(word(fmts, f), 'vendor-like') ? log(column('K')) / log(2) : NaN):(column('M_first') - 0.5):(column('M_last') + 0.5):(log(column('K')) / log(2) - 0.45):(log(column('K')) / log(2) + 0.45):(lv(column('max_abs_diff'))) \
             with boxxyerror fc palette notitle
    }
    unset multiplot
}

unset logscale y
set format y '%g'
set ytics autofreq
set autoscale y
set xlabel 'batch size M (log scale)'
# one distinct colour (and point) per K present in the data
kcolors = "#1f77b4 #ff7f0e #2ca02c #9467bd #8c564b #e377c2 #17becf #bcbd22"
kcol(i) = word(kcolors, (i - 1) % 8 + 1)
diff(f, p, k) = (sel(f, p) && column('K') == k) ? column('max_abs_diff') : NaN
#@ batch_invariance_diff alt: Largest row-0 change against batch size, per format and K
#@ batch_invariance_diff look: the steps of the vendor-like lines
#@ batch_invariance_diff caption: Batch-invariant lies on the axis at 0.
do for [term = 1:2] {
    eval out(term, 'batch_invariance_diff', 1500, 1170)
    set multiplot layout (nf + 1) / 2, 2 margins 0.10, 0.71, 0.08, 0.87 spacing 0.09, 0.14 \
        title "Largest change of row 0 against the batch size M: vendor-like, one segment per run of M\nwith one kernel, per K; batch-invariant: red dashed on the axis (exactly 0 everywhere)" font ',12'
    set offsets 0, 0, graph 0.02, 0
    set yrange [0:*]   # an absolute difference: the axis starts at 0 (batch-invariant lies on it)
    do for [f = 1:nf] {
        set title sprintf("%s inputs", word(fmts, f)) font ',11'
        set ylabel (f % 2 == 1 ? 'max |difference| over row 0' : '')
        if (f == nf) { set key at screen 0.72, 0.5 left center box Left reverse samplen 3 width -4 } else { unset key }
        plot for [k = 1:nk] runs using 'M_first':(diff(word(fmts, f), 'vendor-like', int(word(Ks, k)))):(column('M_last') + 1 - column('M_first')):(0) \
                 with vectors nohead lw 3 lc rgb kcol(k) title (f == nf ? 'K = '.word(Ks, k) : ''), \
             runs using 'M_first':(sel(word(fmts, f), 'batch-invariant') ? column('max_abs_diff') : NaN):(column('M_last') + 1 - column('M_first')):(0) \
                 with vectors nohead lw 2 dt 2 lc rgb '#d62728' title (f == nf ? 'batch-invariant, all K' : '')
    }
    unset multiplot
}
set output
